/* SPDX-License-Identifier: MIT */
/*
 * handle.h: the core of the two public handles (handle.c): leader.c's
 * odbc_leader_t (one namespace) and group.c's odbc_leader_group_t (a
 * group of shards) each begin with a struct odbc_leader__handle, made by
 * one create, and share the claim with its one retry and the record of
 * the last error. The state machines behind them (elector.c, member.c)
 * know nothing of handles.
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_HANDLE_H
#define ODBC_LEADER_HANDLE_H

#include <stddef.h>
#include <stdint.h>

#include "candidate.h"
#include "config.h"
#include "log.h"
#include "odbc_leader.h"
#include "schedule.h"

struct odbc_leader__db;

/* The first member of each public handle. */
struct odbc_leader__handle {
    struct odbc_leader__config cfg;
    struct odbc_leader__log log;
    char id[ODBC_LEADER__NAME_MAX + 1];
    struct odbc_leader_callbacks cb;    /* the host's, at the library's size */
    struct odbc_leader__db *db;         /* owned: the ODBC port */
    struct odbc_leader_error_info last; /* what *_last_error() returns */
    struct odbc_leader__schedules schedules; /* the jobs' identities */
};

/* What tells one kind of public handle from the other at create. */
struct odbc_leader__handle_kind {
    int group;         /* 1: LeaderShards is required; 0: refused */
    const char *wrong; /* the message when it is given (or missing) */
    /* Connects the port as this kind needs it: 0, or a negative error
     * with a message in err. */
    int (*connect)(struct odbc_leader__db *db, char *err, size_t errlen);
};

/*
 * The create steps of both handles: allocates size bytes (the public
 * handle, which begins with a struct odbc_leader__handle) zeroed, copies
 * the host's callbacks (cb, borrowed; may be NULL) at this library's
 * size, parses config (borrowed), checks LeaderShards against kind
 * (borrowed), takes LeaderId or a random UUID as the id, creates the port
 * and connects it with kind->connect. Returns 0 with the handle in *out
 * (the caller's: odbc_leader__handle_destroy()), or a negative error with
 * a message in err and nothing left allocated.
 */
int odbc_leader__handle_create(struct odbc_leader__handle **out, size_t size,
                               const char *config,
                               const struct odbc_leader_callbacks *cb,
                               const struct odbc_leader__handle_kind *kind,
                               char *err, size_t errlen);

/* Frees the port, the configuration and c itself (the whole public
 * handle). NULL is a no-op. */
void odbc_leader__handle_destroy(struct odbc_leader__handle *c);

/* Before a public call that can fail: forgets the port's last diagnostic,
 * so that a failure without the driver is not given an older SQLSTATE.
 * Returns 1, or 0 when c is NULL. */
int odbc_leader__handle_clear(struct odbc_leader__handle *c);

/* Records a failed call's rc in c->last, with the driver's diagnostic
 * when the failure came from the driver; EBACKOFF keeps the failure it
 * waits after, and rc >= 0 (or c NULL) changes nothing. Returns rc. */
int odbc_leader__handle_note(struct odbc_leader__handle *c, int rc);

/* What odbc_leader_last_error() and odbc_leader_group_last_error() do:
 * copies c->last into *out. Returns its code (0 when nothing failed yet),
 * or ODBC_LEADER_EINVAL when c or out is NULL. */
int odbc_leader__handle_last_error(const struct odbc_leader__handle *c,
                                   struct odbc_leader_error_info *out);

/* What odbc_leader_fence_sql() and odbc_leader_group_fence_sql() do:
 * odbc_leader__fence_sql() for the dialect of c's port (which a reconnect
 * may load again: the tick's thread); a failure goes to c->last with its
 * message. No I/O. */
int odbc_leader__handle_fence(struct odbc_leader__handle *c, char *out,
                              size_t len);

/* What odbc_leader_set_schedule() and odbc_leader_group_set_schedule()
 * do: registers job's identity made of expr, tz and engine (expr NULL:
 * forgets it), which its claims are checked against from then on. Returns
 * 0 or a negative error noted in c->last with its message. No I/O; all
 * borrowed. */
int odbc_leader__handle_set_schedule(struct odbc_leader__handle *c,
                                     const char *job, const char *expr,
                                     const char *tz, const char *engine);

/* 1 when job is a valid job name and fire_ms is not negative. */
int odbc_leader__valid_fire(const char *job, int64_t fire_ms);

/* How a claim reaches a handle's database (odbc_leader__handle_claim()). */
struct odbc_leader__claim_ops {
    /* The term that leads job's namespace here now, 0 when none. */
    int64_t (*term)(struct odbc_leader__handle *c, const char *job);
    /* Connects the port when it has no connection: 0 or a negative
     * error. */
    int (*connect)(struct odbc_leader__handle *c);
    /* After a failed connect or statement (rc): what the handle does
     * about it (reconnect later, record it). Returns rc. */
    int (*failed)(struct odbc_leader__handle *c, int rc);
};

/* What a claim asks for (odbc_leader__handle_claim()): the fire, the
 * attempts its job allows, and where to say what it got. */
struct odbc_leader__claim_req {
    const char *job; /* borrowed, valid */
    int64_t fire_ms;
    int max_attempts;
    int may_take; /* 0: the fire is known not to be offered (offers.h) */
    struct odbc_leader_claim *out; /* the caller's, or NULL */
};

/*
 * Claims (job, fire_ms) for the term that leads it here, in namespace ns
 * (NULL: the handle's own; else set for the claim statements only). A try
 * that fails for a passing reason (a lost connection, a timeout: see
 * odbc_leader__db_claim_retryable) is made once more at once, on a new
 * connection when the old one is gone, while the term still leads here
 * (odbc_leader__db_claim_again says what a second "already claimed"
 * means). Returns what odbc_leader__db_claim() returns (1 run it, 0
 * already claimed, ...), ODBC_LEADER_ENOTLEADER or another negative error.
 * ops, ns and req are borrowed.
 */
int odbc_leader__handle_claim(struct odbc_leader__handle *c,
                              const struct odbc_leader__claim_ops *ops,
                              const char *ns,
                              const struct odbc_leader__claim_req *req);

/* Fills *out (zeroed first) with the candidate c runs as: its log,
 * callbacks and id (borrowed from c, which must outlive the state machine)
 * and the configuration's lease timing (and the test-only trust extra
 * with the test hooks); the clock is the default. */
void odbc_leader__handle_candidate(const struct odbc_leader__handle *c,
                                   struct odbc_leader__candidate_conf *out);

/* Points h's reads (odbc_leader_read_lease, odbc_leader_list_candidates,
 * _list_shards, _list_fires, _list_elections) and odbc_leader_namespace()
 * at namespace ns: one connection reads many namespaces (odbc-leader
 * serve). Only for a handle that never ticks. Returns 0, or
 * ODBC_LEADER_EINVAL for a bad handle or name. ns is borrowed for the
 * call (leader.c). */
int odbc_leader__read_namespace(odbc_leader_t *h, const char *ns);

#endif /* ODBC_LEADER_HANDLE_H */
