/* SPDX-License-Identifier: MIT */
/*
 * db_lifecycle.c: the fire lifecycle of the ODBC port (db_lifecycle.h,
 * docs/lifecycle.md). A fire is claimed running in a term, then done or
 * failed by its finish. A new term sweeps the fires still running in
 * earlier terms (which can no longer act) to interrupted, or abandoned
 * after the last attempt their job allows; an interrupted fire with
 * attempts left, and a run-now an operator asked for, are offered to the
 * leader, which takes them as attempt + 1 in its own term. A paused job's
 * fires are refused by the claim and recorded skipped.
 */
#include <build_config.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "catchup.h"
#include "db.h"
#include "db_internal.h"
#include "db_lease.h"
#include "db_ledger.h"
#include "db_lifecycle.h"
#include "dialect.h"
#include "elector.h"
#include "log.h"

int odbc_leader__db_has_lifecycle(const struct odbc_leader__db *db) {
    return db->dialect != NULL && db->dialect->ops[ODBC_LEADER__OP_TAKE].n > 0;
}

void odbc_leader__claim_out(struct odbc_leader_claim *out,
                            const struct odbc_leader_claim *c) {
    struct odbc_leader_claim zero = {0};
    uint32_t size;

    if (out == NULL)
        return;
    size = out->struct_size;
    if (size > sizeof(*out))
        size = sizeof(*out);
    if (size <= offsetof(struct odbc_leader_claim, attempt))
        return;
    memcpy((char *)out + offsetof(struct odbc_leader_claim, attempt),
           (const char *)(c != NULL ? c : &zero) +
               offsetof(struct odbc_leader_claim, attempt),
           size - offsetof(struct odbc_leader_claim, attempt));
}

/* Sets the :job and :fire_ms parameters. */
static void set_fire(struct odbc_leader__db *db, const char *job,
                     int64_t fire_ms) {
    snprintf((char *)db->p_job, sizeof(db->p_job), "%s", job);
    db->p_fire_ms = fire_ms;
}

/* 1 when f, read after a take changed nothing, was still offered to
 * term: then the take failed for the lease or the pause, not for the
 * fire. */
static int still_offered(const struct odbc_leader_fire *f, int64_t term) {
    if (f->term >= term)
        return 0;
    return strcmp(f->state, "pending") == 0 ||
           ((strcmp(f->state, "interrupted") == 0 ||
             strcmp(f->state, "running") == 0) &&
            f->attempt < f->max_attempts);
}

/* After a take that changed nothing: why. Returns ODBC_LEADER_CLAIM_TAKEN,
 * _PAUSED, ODBC_LEADER_ENOTLEADER, ODBC_LEADER_ENOFIRE or a negative
 * error. */
static int why_not_taken(struct odbc_leader__db *db, int64_t term,
                         const char *job, int64_t fire_ms) {
    struct odbc_leader_fire f;
    struct odbc_leader__result res;
    int rc = odbc_leader__db_fire(db, job, fire_ms, &f);

    if (rc < 0)
        return rc;
    if (rc == 0)
        return fire_ms < 0 ? ODBC_LEADER_ENOFIRE : ODBC_LEADER_CLAIM_TAKEN;
    if (!still_offered(&f, term))
        return ODBC_LEADER_CLAIM_TAKEN;
    rc = odbc_leader__db_read_lease(db, &res);
    if (rc < 0)
        return rc;
    if (!res.found || res.term != term || strcmp(res.leader_id, db->id) != 0 ||
        res.expires_at_ms <= res.now_ms)
        return ODBC_LEADER_ENOTLEADER;
    return ODBC_LEADER_CLAIM_PAUSED;
}

int odbc_leader__db_take(struct odbc_leader__db *db, int64_t term,
                         const char *job, int64_t fire_ms, int max_attempts,
                         struct odbc_leader_claim *out) {
    struct odbc_leader_claim c = {0};
    struct odbc_leader_fire f;
    int cls;
    int rc;

    db->p_term = term;
    db->p_max_attempts = max_attempts;
    set_fire(db, job, fire_ms);
    rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_TAKE, NULL, NULL, &cls);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return why_not_taken(db, term, job, fire_ms);
    rc = odbc_leader__db_fire(db, job, fire_ms, &f);
    if (rc < 0)
        return rc;
    c.attempt = f.attempt;
    c.max_attempts = f.max_attempts;
    c.recovering = f.attempt > 1;
    c.triggered = fire_ms < 0;
    c.term = term;
    c.nominal_ms = fire_ms < 0 ? -fire_ms : fire_ms;
    odbc_leader__claim_out(out, &c);
    odbc_leader__logf(db->log, LOG_INFO,
                      "took %s %s at %lld as attempt %d of %d in term %lld",
                      fire_ms < 0 ? "run-now of" : "interrupted fire of", job,
                      (long long)c.nominal_ms, c.attempt, c.max_attempts,
                      (long long)term);
    return ODBC_LEADER_CLAIM_RUN;
}

int odbc_leader__db_skip(struct odbc_leader__db *db, int64_t term,
                         const char *job, int64_t fire_ms) {
    int cls;
    int rc;

    db->p_term = term;
    set_fire(db, job, fire_ms);
    rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_SKIP, NULL, NULL, &cls);
    if (rc < 0 && cls != ODBC_LEADER__ERR_UNIQUE)
        return rc;
    odbc_leader__logf(db->log, LOG_INFO, "%s is paused: fire at %lld skipped",
                      job, (long long)fire_ms);
    return ODBC_LEADER_CLAIM_PAUSED;
}

int odbc_leader__db_sweep(struct odbc_leader__db *db, int64_t term) {
    int cls;

    if (!odbc_leader__db_has_lifecycle(db))
        return 0;
    db->p_term = term;
    return odbc_leader__db_run_op(db, ODBC_LEADER__OP_SWEEP, NULL, NULL, &cls);
}

int64_t odbc_leader__db_offered(const struct odbc_leader__db *db) {
    return db->offered;
}

int odbc_leader__db_offers(struct odbc_leader__db *db, int64_t term,
                           odbc_leader_fire_fn fn, void *ctx) {
    struct odbc_leader__db_host host = {.fire = fn, .ctx = ctx};
    struct odbc_leader_fire f;

    if (!odbc_leader__db_has_lifecycle(db))
        return 0;
    db->p_term = term;
    return odbc_leader__db_fire_rows(db, ODBC_LEADER__OP_OFFERS, &f,
                                     odbc_leader__db_to_host, &host);
}

int odbc_leader__db_pause(struct odbc_leader__db *db, const char *job,
                          int paused) {
    int cls;
    int rc;

    if (!odbc_leader__db_has_lifecycle(db))
        return ODBC_LEADER_ENOLIFECYCLE;
    set_fire(db, job, 0);
    db->p_paused = paused != 0;
    rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_PAUSE, NULL, NULL, &cls);
    if (rc < 0 && cls == ODBC_LEADER__ERR_UNIQUE && rc != ODBC_LEADER_EUNKNOWN)
        /* another pause or resume created the row at the same moment */
        rc =
            odbc_leader__db_run_op(db, ODBC_LEADER__OP_PAUSE, NULL, NULL, &cls);
    if (rc < 0)
        return rc;
    odbc_leader__logf(db->log, LOG_NOTICE, "%s %s on every host",
                      paused ? "paused" : "resumed", job);
    return 0;
}

/* Row callback of trigger: the key. ctx is an int64_t. */
static int key_row(void *ctx, void *stmt) {
    return odbc_leader__db_col_int(stmt, 1, ctx);
}

int odbc_leader__db_trigger(struct odbc_leader__db *db, const char *job,
                            int64_t *key) {
    int64_t k = 0;
    int cls;
    int rc;

    if (!odbc_leader__db_has_lifecycle(db))
        return ODBC_LEADER_ENOLIFECYCLE;
    set_fire(db, job, 0);
    rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_TRIGGER, key_row, &k, &cls);
    if (rc < 0 && cls == ODBC_LEADER__ERR_UNIQUE && rc != ODBC_LEADER_EUNKNOWN)
        rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_TRIGGER, key_row, &k,
                                    &cls);
    if (rc < 0)
        return rc;
    if (rc == 0 || k >= 0) {
        snprintf(db->last_error, sizeof(db->last_error),
                 "trigger of %s returned no key below 0", job);
        return ODBC_LEADER_EDB;
    }
    if (key != NULL)
        *key = k;
    odbc_leader__logf(db->log, LOG_NOTICE,
                      "run-now of %s asked (key %lld): the leader runs it", job,
                      (long long)k);
    return 0;
}

/* The columns of jobs. */
static const struct odbc_leader__db_col job_cols[] = {
    ODBC_LEADER__DB_TEXT(1, struct odbc_leader_job, job),
    ODBC_LEADER__DB_NUM(2, struct odbc_leader_job, paused),
    ODBC_LEADER__DB_NUM(3, struct odbc_leader_job, changed_at_ms),
    ODBC_LEADER__DB_TEXT(4, struct odbc_leader_job, changed_by),
    ODBC_LEADER__DB_NUM(5, struct odbc_leader_job, fires),
    ODBC_LEADER__DB_NUM(6, struct odbc_leader_job, running),
    ODBC_LEADER__DB_NUM(7, struct odbc_leader_job, offered),
    ODBC_LEADER__DB_NUM(8, struct odbc_leader_job, last_fire_ms),
    ODBC_LEADER__DB_NUM(9, struct odbc_leader_job, last_done_ms),
    ODBC_LEADER__DB_NUM(10, struct odbc_leader_job, last_failed_ms),
    ODBC_LEADER__DB_NUM(11, struct odbc_leader_job, db_now_ms),
};

/* Row of last_fire: the latest nominal time (NULL: none) and the clock,
 * into ctx (a struct odbc_leader__last_fire). */
static int last_fire_row(void *ctx, void *stmt) {
    struct odbc_leader__last_fire *lf = ctx;
    int null, rc = odbc_leader__db_col_int_null(stmt, 1, &lf->last_ms, &null);

    return rc < 0 ? rc : odbc_leader__db_col_int(stmt, 2, &lf->now_ms);
}

int odbc_leader__db_last_fire(struct odbc_leader__db *db,
                              struct odbc_leader__last_fire *lf) {
    int cls, rc;

    lf->last_ms = lf->now_ms = 0;
    if (db->dialect != NULL &&
        db->dialect->ops[ODBC_LEADER__OP_LAST_FIRE].n > 0) {
        set_fire(db, lf->job, 0);
        rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_LAST_FIRE,
                                    last_fire_row, lf, &cls);
    } else {
        rc = odbc_leader__db_jobs(db, odbc_leader__keep_last_fire, lf);
    }
    return rc < 0 ? rc : 0;
}

int odbc_leader__db_jobs(struct odbc_leader__db *db, odbc_leader_job_fn fn,
                         void *ctx) {
    struct odbc_leader__db_host host = {.job = fn, .ctx = ctx};
    struct odbc_leader_job j;
    struct odbc_leader__db_rows rows =
        ODBC_LEADER__DB_ROWS(job_cols, &j, odbc_leader__db_to_host, &host);

    if (!odbc_leader__db_has_lifecycle(db))
        return ODBC_LEADER_ENOLIFECYCLE;
    return odbc_leader__db_run_rows(db, ODBC_LEADER__OP_JOBS, &rows);
}
