/* SPDX-License-Identifier: MIT */
/*
 * db_lifecycle.h: the fire lifecycle of the ODBC port (db_lifecycle.c,
 * docs/lifecycle.md): offered fires taken again, paused jobs' fires
 * recorded skipped, a new term's sweep of earlier terms' running fires,
 * the offers a leader reads, pause and run-now, the jobs' summary.
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_DB_LIFECYCLE_H
#define ODBC_LEADER_DB_LIFECYCLE_H

#include <stdint.h>

#include "db.h"
#include "odbc_leader.h"

/* 1 when the dialect has the lifecycle's statements. */
int odbc_leader__db_has_lifecycle(const struct odbc_leader__db *db);

/* Copies *c into *out (the caller's, when not NULL) up to out's
 * struct_size, keeping that; c NULL zeroes it. */
void odbc_leader__claim_out(struct odbc_leader_claim *out,
                            const struct odbc_leader_claim *c);

/* Takes offered fire (job, fire_ms) for term: a pending run-now, or an
 * attempt whose term ended while its job allows another. Returns
 * ODBC_LEADER_CLAIM_RUN with *out filled from the row (when not NULL),
 * ODBC_LEADER_CLAIM_TAKEN (not offered: claimed, finished or taken by
 * someone), ODBC_LEADER_CLAIM_PAUSED, ODBC_LEADER_ENOTLEADER,
 * ODBC_LEADER_ENOFIRE (a run-now key without a row) or a negative
 * error. job is borrowed. */
int odbc_leader__db_take(struct odbc_leader__db *db, int64_t term,
                         const char *job, int64_t fire_ms, int max_attempts,
                         struct odbc_leader_claim *out);

/* Records fire (job, fire_ms) of a paused job skipped in term (a row
 * that exists stays as it is). Returns ODBC_LEADER_CLAIM_PAUSED or a
 * negative error. job is borrowed; :max_attempts is set. */
int odbc_leader__db_skip(struct odbc_leader__db *db, int64_t term,
                         const char *job, int64_t fire_ms);

/* The sweep of a new term (fenced by it): earlier terms' running fires
 * become interrupted or abandoned. Returns the fires changed or a
 * negative error. */
int odbc_leader__db_sweep(struct odbc_leader__db *db, int64_t term);

/* The renewal's count of offered fires, when the last renewal reported
 * one: -1 when it did not (the dialect does not say). */
int64_t odbc_leader__db_offered(const struct odbc_leader__db *db);

/* Calls fn(ctx, fire) for each fire offered to term, oldest first.
 * Returns the count or a negative error. */
int odbc_leader__db_offers(struct odbc_leader__db *db, int64_t term,
                           odbc_leader_fire_fn fn, void *ctx);

/* Pauses (paused 1) or resumes (0) job. Returns 0,
 * ODBC_LEADER_ENOLIFECYCLE or a negative error. job is borrowed. */
int odbc_leader__db_pause(struct odbc_leader__db *db, const char *job,
                          int paused);

/* Adds a run-now of job: 0 and its key in *key, ODBC_LEADER_ENOLIFECYCLE
 * or a negative error. A second request of the same job in the same
 * moment meets a unique violation and is tried once more. job is
 * borrowed. */
int odbc_leader__db_trigger(struct odbc_leader__db *db, const char *job,
                            int64_t *key);

/* Calls fn(ctx, job) for each job of the namespace. Returns the count,
 * ODBC_LEADER_ENOLIFECYCLE or a negative error. */
int odbc_leader__db_jobs(struct odbc_leader__db *db, odbc_leader_job_fn fn,
                         void *ctx);

struct odbc_leader__last_fire;

/* Reads lf->job's latest nominal fire time and the database clock into
 * *lf (catchup.h): the last_fire statement, or the jobs listing of a
 * dialect without it. Returns 0, ODBC_LEADER_ENOLIFECYCLE or a negative
 * error. lf is the caller's. */
int odbc_leader__db_last_fire(struct odbc_leader__db *db,
                              struct odbc_leader__last_fire *lf);

#endif /* ODBC_LEADER_DB_LIFECYCLE_H */
