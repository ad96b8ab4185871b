// SPDX-License-Identifier: MIT
// Leadership.java: a term and how long its trust window still runs, read at
// once (the plugin's leadership() and shard_leadership()).
package org.odbcleader;

/**
 * The term led (0 when not leader) and, in validForMs, how long its trust window still
 * runs (0 when not leader).
 */
public record Leadership(long term, long validForMs) {
    /** Not leading. */
    public static final Leadership NONE = new Leadership(0, 0);

    /** Returns true when a term is led. */
    public boolean isLeader() {
        return term != 0;
    }
}
