// SPDX-License-Identifier: MIT
// Fire.java: one fire this host claimed: the job's name in the fire ledger,
// its nominal time, the term (fencing token) that claimed it and which
// attempt it is.
package org.odbcleader;

import java.util.Objects;

/**
 * A claimed fire: job (its name in the ledger), fireMs (epoch ms, the nominal time the
 * schedule names, the same on every host; a run-now's key, below 0), term (the fencing token
 * of the claim; in a group, the term of the job's shard), attempt (1, or n + 1 when attempt
 * n's host died before its end: recovering, as Quartz's isRecovering()) and triggered (a
 * run-now of {@code odbc-leader jobs trigger}).
 */
public record Fire(String job, long fireMs, long term, int attempt, boolean recovering,
        boolean triggered) {
    /** Checks that job is given and attempt positive. */
    public Fire {
        Objects.requireNonNull(job, "job");
        if (attempt < 1)
            throw new IllegalArgumentException("attempt " + attempt);
    }

    /** A first attempt of a scheduled fire. */
    public Fire(String job, long fireMs, long term) {
        this(job, fireMs, term, 1, false, false);
    }
}
