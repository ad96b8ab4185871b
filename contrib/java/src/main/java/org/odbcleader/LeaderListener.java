// SPDX-License-Identifier: MIT
// LeaderListener.java: the leadership events of a Leader. They run on the
// Leader's tick thread while the plugin waits for them (so a shard's stop is
// handled before the shard is handed over): keep them short and do not call
// the Leader's I/O methods (claim, finish, close) from them.
package org.odbcleader;

/** Leadership events of a {@link Leader}; every method has an empty default. */
public interface LeaderListener {
    /** This host became leader of term. */
    default void elected(long term) {
    }

    /** This host stopped leading term (lost it, or resigned). */
    default void lost(long term) {
    }

    /**
     * Every change the plugin reports: isLeader, the term, and the leader's id as this host
     * knows it (a follower: the current leader; may be null).
     */
    default void changed(boolean isLeader, long term, String leaderId) {
    }

    /** In a group: this host started (isLeader) or stopped leading shard under term. */
    default void shardChanged(int shard, boolean isLeader, long term) {
    }

    /** A tick failed; ticking goes on after the delay the plugin asked for. */
    default void tickFailed(LeaderException error) {
    }

    /**
     * After a tick that left fires offered to this leader (ABI 1.4): run-now requests and
     * interrupted fires whose job allows another attempt. An offer comes again at each tick
     * until it is claimed: claim it with its maxAttempts on another thread.
     */
    default void offered(java.util.List<Instance.Offer> offers) {
    }
}
