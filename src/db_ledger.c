/* SPDX-License-Identifier: MIT */
/*
 * db_ledger.c: what a port keeps besides the lease (db_ledger.h): the
 * fire ledger (a claim per job and fire time, fenced by the leader's
 * term, and its outcome) and the election log (one row per term), with
 * the retention of each.
 */
#include <build_config.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "db.h"
#include "db_internal.h"
#include "db_lease.h"
#include "db_ledger.h"
#include "db_lifecycle.h"
#include "dialect.h"
#include "elector.h"
#include "log.h"

/* ---- the fire ledger ---- */

int odbc_leader__db_has_ledger(const struct odbc_leader__db *db) {
    return db->dialect != NULL && db->dialect->ops[ODBC_LEADER__OP_CLAIM].n > 0;
}

/* Sets the :job and :fire_ms parameters. */
static void set_fire(struct odbc_leader__db *db, const char *job,
                     int64_t fire_ms) {
    snprintf((char *)db->p_job, sizeof(db->p_job), "%s", job);
    db->p_fire_ms = fire_ms;
}

/* After a claim that inserted nothing: reads the lease to tell a lost
 * term from a fire older than the retention, a run-now key that names no
 * fire, or (with the lifecycle) a paused job, whose fire it records
 * skipped (not a one-off key, fire 0, which stays unclaimed). Returns
 * ODBC_LEADER_ENOTLEADER, ODBC_LEADER_EFIREAGE, ODBC_LEADER_ENOFIRE,
 * ODBC_LEADER_CLAIM_PAUSED or a negative error. */
static int why_not_claimed(struct odbc_leader__db *db, int64_t term,
                           const char *job, int64_t fire_ms) {
    struct odbc_leader__result res;
    int rc = odbc_leader__db_read_lease(db, &res);

    if (rc < 0)
        return rc;
    if (!res.found || res.term != term || strcmp(res.leader_id, db->id) != 0 ||
        res.expires_at_ms <= res.now_ms)
        return ODBC_LEADER_ENOTLEADER;
    if (fire_ms < 0)
        return ODBC_LEADER_ENOFIRE;
    if (!odbc_leader__db_has_lifecycle(db) ||
        (fire_ms != 0 && fire_ms < res.now_ms - db->p_retention_ms))
        return ODBC_LEADER_EFIREAGE;
    if (fire_ms == 0) /* a one-off key is not used up by a pause */
        return ODBC_LEADER_CLAIM_PAUSED;
    return odbc_leader__db_skip(db, term, job, fire_ms);
}

/* Fills *out (when not NULL, at its struct_size) with a first attempt
 * claimed in term. */
static void first_attempt(struct odbc_leader_claim *out, int64_t term,
                          int64_t fire_ms, int max_attempts) {
    struct odbc_leader_claim c = {0};

    c.attempt = 1;
    c.max_attempts = max_attempts;
    c.term = term;
    c.nominal_ms = fire_ms;
    odbc_leader__claim_out(out, &c);
}

int odbc_leader__db_claim(struct odbc_leader__db *db, int64_t term,
                          const char *job, int64_t fire_ms, int max_attempts,
                          int may_take, struct odbc_leader_claim *out) {
    int lc = odbc_leader__db_has_lifecycle(db);
    int cls;
    int rc;

    odbc_leader__claim_out(out, NULL);
    if (!odbc_leader__db_has_ledger(db))
        return ODBC_LEADER_ENOLEDGER;
    if (!lc && (max_attempts > 1 || fire_ms < 0))
        return ODBC_LEADER_ENOLIFECYCLE;
    db->p_term = term;
    db->p_max_attempts = max_attempts;
    set_fire(db, job, fire_ms);
    rc = fire_ms < 0 ? 0 /* a run-now is always offered */
                     : odbc_leader__db_run_op(db, ODBC_LEADER__OP_CLAIM, NULL,
                                              NULL, &cls);
    if (fire_ms < 0 || (rc < 0 && cls == ODBC_LEADER__ERR_UNIQUE &&
                        rc != ODBC_LEADER_EUNKNOWN))
        /* the normal "already claimed", or a fire offered again */
        return lc && may_take ? odbc_leader__db_take(db, term, job, fire_ms,
                                                     max_attempts, out)
                              : 0;
    if (rc < 0)
        return rc;
    if (rc == 0)
        return why_not_claimed(db, term, job, fire_ms);
    first_attempt(out, term, fire_ms, max_attempts);
    return ODBC_LEADER_CLAIM_RUN;
}

/* See db.h. */
int odbc_leader__db_claim_retryable(const struct odbc_leader__db *db, int rc) {
    return rc == ODBC_LEADER_ECONNLOST || rc == ODBC_LEADER_EUNKNOWN ||
           (rc == ODBC_LEADER_EDB &&
            db->diag.errclass == ODBC_LEADER__ERR_TRANSIENT);
}

/* See db.h. */
int odbc_leader__db_claim_again(struct odbc_leader__db *db, int64_t term,
                                const char *job, int64_t fire_ms,
                                int max_attempts, struct odbc_leader_claim *out,
                                int first) {
    struct odbc_leader__diag d = db->diag;
    struct odbc_leader_fire f;
    int rc;

    odbc_leader__logf(db->log, LOG_INFO,
                      "claim of %s at %lld failed (%s); trying once more", job,
                      (long long)fire_ms, odbc_leader_strerror(first));
    rc = odbc_leader__db_claim(db, term, job, fire_ms, max_attempts, 1, out);
    if (rc != 0 ||
        (first != ODBC_LEADER_ECONNLOST && first != ODBC_LEADER_EUNKNOWN))
        return rc;
    rc = odbc_leader__db_fire(db, job, fire_ms, &f);
    if (rc <= 0 || f.term != term || strcmp(f.claimed_by, db->id) != 0)
        return rc; /* not ours: claimed by another term, a plain 0 */
    db->diag = d;
    odbc_leader__logf(db->log, LOG_WARNING,
                      "claim of %s at %lld: the first try's outcome is "
                      "unknown (%s) and the fire is claimed in this term, "
                      "by that try or an earlier claim; not reported as "
                      "claimed, so it may not run (odbc-leader fires shows "
                      "it unfinished)",
                      job, (long long)fire_ms, odbc_leader_strerror(first));
    return first;
}

/* The columns of fire, fires and offers: job, fire_ms, term, claimed_by,
 * claimed_at_ms, finished_at_ms, status, now_ms; with the lifecycle also
 * state, attempt, max_attempts. */
static const struct odbc_leader__db_col fire_cols[] = {
    ODBC_LEADER__DB_TEXT(1, struct odbc_leader_fire, job),
    ODBC_LEADER__DB_NUM(2, struct odbc_leader_fire, fire_ms),
    ODBC_LEADER__DB_NUM(3, struct odbc_leader_fire, term),
    ODBC_LEADER__DB_TEXT(4, struct odbc_leader_fire, claimed_by),
    ODBC_LEADER__DB_NUM(5, struct odbc_leader_fire, claimed_at_ms),
    ODBC_LEADER__DB_NUM(6, struct odbc_leader_fire, finished_at_ms),
    ODBC_LEADER__DB_NUM(7, struct odbc_leader_fire, status),
    ODBC_LEADER__DB_NUM(8, struct odbc_leader_fire, db_now_ms),
    ODBC_LEADER__DB_TEXT(9, struct odbc_leader_fire, state),
    ODBC_LEADER__DB_NUM(10, struct odbc_leader_fire, attempt),
    ODBC_LEADER__DB_NUM(11, struct odbc_leader_fire, max_attempts),
};

/* The columns of fire rows the dialect returns: 11 with the lifecycle,
 * else the first 8. */
static size_t fire_ncols(const struct odbc_leader__db *db) {
    return odbc_leader__db_has_lifecycle(db)
               ? sizeof(fire_cols) / sizeof(fire_cols[0])
               : 8;
}

/* The row callback of fire rows (ctx: a struct odbc_leader__db_rows):
 * without the lifecycle, the members it does not read get 1 attempt of
 * 1. */
static int fire_row(void *ctx, void *stmt) {
    struct odbc_leader__db_rows *rows = ctx;
    struct odbc_leader_fire *f = rows->row;
    int rc;

    memset(f, 0, sizeof(*f));
    f->attempt = f->max_attempts = 1;
    rc = odbc_leader__db_read_row(stmt, f, rows->cols, rows->ncols);
    if (rc == 0 && rows->each != NULL)
        rc = rows->each(rows->ctx, f);
    return rc;
}

int odbc_leader__db_fire_rows(struct odbc_leader__db *db, int op,
                              struct odbc_leader_fire *f,
                              int (*each)(void *ctx, const void *row),
                              void *ctx) {
    struct odbc_leader__db_rows rows =
        ODBC_LEADER__DB_ROWS(fire_cols, f, each, ctx);
    int cls;

    rows.ncols = fire_ncols(db);
    return odbc_leader__db_run_op(db, op, fire_row, &rows, &cls);
}

int odbc_leader__db_fire(struct odbc_leader__db *db, const char *job,
                         int64_t fire_ms, struct odbc_leader_fire *out) {
    struct odbc_leader_fire f;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!odbc_leader__db_has_ledger(db))
        return ODBC_LEADER_ENOLEDGER;
    set_fire(db, job, fire_ms);
    rc = odbc_leader__db_fire_rows(db, ODBC_LEADER__OP_FIRE, &f, NULL, NULL);
    if (rc <= 0)
        return rc;
    *out = f;
    return 1;
}

int odbc_leader__db_finish(struct odbc_leader__db *db, const char *job,
                           int64_t fire_ms, int64_t term, int status) {
    struct odbc_leader_fire f;
    int cls;
    int rc;

    if (!odbc_leader__db_has_ledger(db))
        return ODBC_LEADER_ENOLEDGER;
    set_fire(db, job, fire_ms);
    db->p_status = status;
    db->p_term = term;
    rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_FINISH, NULL, NULL, &cls);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    /* nothing changed: finished before (by us), or not ours (any more) */
    rc = odbc_leader__db_fire(db, job, fire_ms, &f);
    if (rc < 0)
        return rc;
    if (rc == 1 && strcmp(f.claimed_by, db->id) == 0 &&
        (term == 0 || f.term == term) && f.finished_at_ms != 0)
        return 0;
    if (rc == 1 && term != 0 && f.term > term)
        return ODBC_LEADER_ESUPERSEDED;
    return ODBC_LEADER_ENOFIRE;
}

int odbc_leader__db_fires(struct odbc_leader__db *db, const char *job,
                          odbc_leader_fire_fn fn, void *ctx) {
    struct odbc_leader__db_host host = {.fire = fn, .ctx = ctx};
    struct odbc_leader_fire f;

    if (!odbc_leader__db_has_ledger(db))
        return ODBC_LEADER_ENOLEDGER;
    set_fire(db, job != NULL ? job : "", 0);
    return odbc_leader__db_fire_rows(db, ODBC_LEADER__OP_FIRES, &f,
                                     odbc_leader__db_to_host, &host);
}

/* Runs op, a clean-up without rows, when the dialect has what it cleans
 * (have). Returns as odbc_leader__db_run_op, or 0 without it. */
static int clean_up(struct odbc_leader__db *db, int have, int op) {
    int cls;

    return have ? odbc_leader__db_run_op(db, op, NULL, NULL, &cls) : 0;
}

int odbc_leader__db_fire_gc(struct odbc_leader__db *db) {
    return clean_up(db, odbc_leader__db_has_ledger(db),
                    ODBC_LEADER__OP_FIRE_GC);
}

/* ---- the election log ---- */

int odbc_leader__db_has_elections(const struct odbc_leader__db *db) {
    return db->dialect != NULL &&
           db->dialect->ops[ODBC_LEADER__OP_ELECTIONS].n > 0;
}

/* The columns of elections: term, leader_id, started_at_ms, ended_at_ms,
 * ended_how, handed_to, now_ms. */
static const struct odbc_leader__db_col election_cols[] = {
    ODBC_LEADER__DB_NUM(1, struct odbc_leader_election, term),
    ODBC_LEADER__DB_TEXT(2, struct odbc_leader_election, leader_id),
    ODBC_LEADER__DB_NUM(3, struct odbc_leader_election, started_at_ms),
    ODBC_LEADER__DB_NUM(4, struct odbc_leader_election, ended_at_ms),
    ODBC_LEADER__DB_TEXT(5, struct odbc_leader_election, ended_how),
    ODBC_LEADER__DB_TEXT(6, struct odbc_leader_election, handed_to),
    ODBC_LEADER__DB_NUM(7, struct odbc_leader_election, db_now_ms),
};

int odbc_leader__db_elections(struct odbc_leader__db *db,
                              odbc_leader_election_fn fn, void *ctx) {
    struct odbc_leader__db_host host = {.election = fn, .ctx = ctx};
    struct odbc_leader_election e;
    struct odbc_leader__db_rows rows =
        ODBC_LEADER__DB_ROWS(election_cols, &e, odbc_leader__db_to_host, &host);

    if (!odbc_leader__db_has_elections(db))
        return ODBC_LEADER_ENOELECTIONS;
    return odbc_leader__db_run_rows(db, ODBC_LEADER__OP_ELECTIONS, &rows);
}

int odbc_leader__db_election_gc(struct odbc_leader__db *db) {
    return clean_up(db, odbc_leader__db_has_elections(db),
                    ODBC_LEADER__OP_ELECTION_GC);
}
