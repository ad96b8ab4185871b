/* SPDX-License-Identifier: MIT */
/*
 * db_lease.h: the lease operations of the ODBC port (db_lease.c) and the
 * port table that hands them to the elector (elector.h).
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_DB_LEASE_H
#define ODBC_LEADER_DB_LEASE_H

#include <stdint.h>

#include "db.h"
#include "elector.h"
#include "odbc_leader.h"

/* The operations; see struct odbc_leader__port_ops. */
int odbc_leader__db_attempt(struct odbc_leader__db *db, int64_t seen_term,
                            int64_t seen_expires_ms,
                            struct odbc_leader__result *out);
int odbc_leader__db_renew(struct odbc_leader__db *db, int64_t term,
                          struct odbc_leader__result *out);
/* Returns 1 when the exact term was resigned, 0 when it was not held. */
int odbc_leader__db_resign(struct odbc_leader__db *db, int64_t term);
int odbc_leader__db_unregister(struct odbc_leader__db *db);
/* Asks the current leader to resign at its next renewal, reserving the
 * lease for to_id (NULL or "" for anyone). Returns 1 when a leader was
 * asked, 0 when the namespace has no leader, or a negative error. */
int odbc_leader__db_request_resign(struct odbc_leader__db *db,
                                   const char *to_id);
/* 1 when the dialect defines the wake-up statements (release, wait). */
int odbc_leader__db_has_wait(const struct odbc_leader__db *db);
/* Lets go of the wake-up lock this session may hold (no-op without the
 * wake-up statements). Returns 0 or a negative error. */
int odbc_leader__db_release(struct odbc_leader__db *db);
/* Blocks up to budget_ms until no leader holds the wake-up lock. Returns 1
 * when the lock was free (a leader let go, or none holds it), 0 when the
 * budget ran out, or a negative error (EINVAL without wake-up statements).
 * The run_op log line of a timed-out wait is at most a warning. */
int odbc_leader__db_wait(struct odbc_leader__db *db, int64_t budget_ms);
/* Takes the wake-up lock, waiting up to budget_ms for followers that hold
 * it for a moment. Returns 1 when held, 0 when not (or the dialect has no
 * hold statement), or a negative error. */
int odbc_leader__db_hold(struct odbc_leader__db *db, int64_t budget_ms);
/* out->found is 0 when the namespace has no lease row yet. */
int odbc_leader__db_read_lease(struct odbc_leader__db *db,
                               struct odbc_leader__result *out);
/* Returns the number of live candidates or a negative error. */
int odbc_leader__db_candidates(struct odbc_leader__db *db,
                               odbc_leader_candidate_fn fn, void *ctx);

/* The port table handing a struct odbc_leader__db * to the elector. */
extern const struct odbc_leader__port_ops odbc_leader__db_ops;

#endif /* ODBC_LEADER_DB_LEASE_H */
