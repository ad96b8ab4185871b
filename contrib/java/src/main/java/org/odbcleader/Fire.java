// SPDX-License-Identifier: MIT
// Fire.java: one fire this host claimed: the job's name in the fire ledger,
// its nominal time and the term (fencing token) that claimed it.
package org.odbcleader;

import java.util.Objects;

/**
 * A claimed fire: job (its name in the ledger), fireMs (epoch ms, the nominal time the
 * schedule names, the same on every host) and term (the fencing token of the claim; in a
 * group, the term of the job's shard).
 */
public record Fire(String job, long fireMs, long term) {
    /** Checks that job is given. */
    public Fire {
        Objects.requireNonNull(job, "job");
    }
}
