/* SPDX-License-Identifier: MIT */
/*
 * db_ledger.h: the fire ledger and the election log of the ODBC port
 * (db_ledger.c).
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_DB_LEDGER_H
#define ODBC_LEADER_DB_LEDGER_H

#include <stdint.h>

#include "db.h"
#include "odbc_leader.h"

/* 1 when the dialect has the fire ledger's statements (schema 2). */
int odbc_leader__db_has_ledger(const struct odbc_leader__db *db);
/* Claims (job, fire_ms) for term in one statement (a new fire); a fire
 * offered again (a run-now, fire_ms < 0, or an interrupted attempt) is
 * taken with the lifecycle's take (db_lifecycle.h) when may_take says it
 * may be offered (0: the caller knows it is not, and a unique violation
 * is "already claimed" at once), and a paused job's fire is recorded
 * skipped. max_attempts: the attempts the job allows.
 * Returns ODBC_LEADER_CLAIM_RUN with *out filled (when not NULL, at its
 * struct_size; else zeroed), ODBC_LEADER_CLAIM_TAKEN (the unique
 * violation, or an offered fire someone else took),
 * ODBC_LEADER_CLAIM_PAUSED, ODBC_LEADER_ENOTLEADER, ODBC_LEADER_EFIREAGE
 * or ODBC_LEADER_ENOFIRE (told apart with one more read),
 * ODBC_LEADER_ENOLEDGER, ODBC_LEADER_ENOLIFECYCLE or another negative
 * error. job is borrowed and valid. */
int odbc_leader__db_claim(struct odbc_leader__db *db, int64_t term,
                          const char *job, int64_t fire_ms, int max_attempts,
                          int may_take, struct odbc_leader_claim *out);
/* 1 when a claim that failed with rc is worth one more try at once: the
 * connection was lost (the caller reopens it first), the outcome is
 * unknown, or the statement failed for a passing reason in the dialect's
 * terms (a lock or statement timeout, a deadlock, a busy file). */
int odbc_leader__db_claim_retryable(const struct odbc_leader__db *db, int rc);
/* The one more try of a claim whose first try failed with first, on a
 * connection the caller has reopened. Returns what odbc_leader__db_claim
 * returns, except that a 0 after a first try of unknown outcome
 * (ECONNLOST, EUNKNOWN) whose row holds this candidate's claim in term
 * returns first again, with its diagnostic: that row is the first try's
 * own or an earlier claim of the same fire, and the row cannot tell
 * which. job is borrowed and valid. */
int odbc_leader__db_claim_again(struct odbc_leader__db *db, int64_t term,
                                const char *job, int64_t fire_ms,
                                int max_attempts, struct odbc_leader_claim *out,
                                int first);
/* Records the outcome of a fire this candidate claimed in term (0: in
 * any term). Returns 0 (also when it was finished before),
 * ODBC_LEADER_ESUPERSEDED (a later term took it again),
 * ODBC_LEADER_ENOFIRE, or a negative error. */
int odbc_leader__db_finish(struct odbc_leader__db *db, const char *job,
                           int64_t fire_ms, int64_t term, int status);
/* Reads one fire into *out: 1 found, 0 not, or a negative error. */
int odbc_leader__db_fire(struct odbc_leader__db *db, const char *job,
                         int64_t fire_ms, struct odbc_leader_fire *out);
/* Runs op, whose rows are fire rows (fire, fires, offers), reading each
 * into *f (the caller's) and handing it to each (may be NULL) with ctx.
 * Returns the rows or a negative error. */
int odbc_leader__db_fire_rows(struct odbc_leader__db *db, int op,
                              struct odbc_leader_fire *f,
                              int (*each)(void *ctx, const void *row),
                              void *ctx);
/* Calls fn for every fire (of job unless NULL or ""). Returns the count
 * or a negative error. */
int odbc_leader__db_fires(struct odbc_leader__db *db, const char *job,
                          odbc_leader_fire_fn fn, void *ctx);
/* Deletes the finished fires older than LeaderFireRetention. Returns the
 * rows deleted (0 without a ledger) or a negative error. */
int odbc_leader__db_fire_gc(struct odbc_leader__db *db);

/* 1 when the dialect keeps the election log (elections, election_gc). */
int odbc_leader__db_has_elections(const struct odbc_leader__db *db);

/* Calls fn(ctx, election) for each term of the namespace's election log,
 * oldest first. Returns the number of terms, ODBC_LEADER_ENOELECTIONS or
 * a negative error. */
int odbc_leader__db_elections(struct odbc_leader__db *db,
                              odbc_leader_election_fn fn, void *ctx);

/* Deletes the terms that ended more than LeaderElectionRetention ago.
 * Returns the rows deleted (0 without an election log) or a negative
 * error. */
int odbc_leader__db_election_gc(struct odbc_leader__db *db);

#endif /* ODBC_LEADER_DB_LEDGER_H */
