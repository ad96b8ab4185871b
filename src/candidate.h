/* SPDX-License-Identifier: MIT */
/*
 * candidate.h: what both state machines (elector.c, one namespace;
 * member.c, a group of shards) know of the candidate they run: its id,
 * its clock, its log, the host's callbacks and the lease timing, given in
 * milliseconds and kept in nanoseconds (candidate.c). The handles fill
 * the configuration from theirs (handle.c), the unit tests by hand.
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_CANDIDATE_H
#define ODBC_LEADER_CANDIDATE_H

#include <stdint.h>

#include "log.h"
#include "odbc_leader.h"

/* The candidate, as a state machine's configuration gives it. */
struct odbc_leader__candidate_conf {
    int64_t (*now_ns)(void *clock_ctx); /* NULL: odbc_leader__now_ns */
    void *clock_ctx;
    const struct odbc_leader__log *log;     /* copied; NULL: no log */
    const struct odbc_leader_callbacks *cb; /* copied; may be NULL */
    const char *id; /* borrowed for the state machine's lifetime */
    int64_t ttl_ms, renew_ms, margin_ms;
    int64_t test_trust_extra_ms; /* test only, see config.h */
};

/* The candidate, as a state machine keeps it. */
struct odbc_leader__candidate {
    int64_t (*now_ns)(void *clock_ctx);
    void *clock_ctx;
    struct odbc_leader__log log;
    struct odbc_leader_callbacks cb;
    const char *id; /* borrowed */
    int64_t ttl_ns, renew_ns, margin_ns;
    int64_t trust_extra_ns; /* test only: breaks the protocol when > 0 */
};

/* Sets *k from *c (borrowed): the clock, copies of the log and the
 * callbacks (zeroed when NULL), the id (still borrowed) and the timing. */
void odbc_leader__candidate_init(struct odbc_leader__candidate *k,
                                 const struct odbc_leader__candidate_conf *c);

#endif /* ODBC_LEADER_CANDIDATE_H */
