/* SPDX-License-Identifier: MIT */
/*
 * db_schedule.c: schedule identities in the ODBC port (db_schedule.h,
 * docs/schedules.md). The job's row records the identity its fires are
 * computed by, at its first claim; every later claim first reads the
 * recorded identity (schedule_read, where the dialect has it) and goes on
 * when it is its own. Otherwise it runs the dialect's schedule statement,
 * which records the identity only where none is, counts a refusal where
 * another is, and returns the recorded one; a claim goes on only when
 * that equals its own. The claim comes
 * after the check, and a term's claims are fenced by its lease, so one
 * identity's claims can follow another's only through an operator's
 * reschedule (or a check skipped by an older host).
 */
#include <build_config.h>

#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "db.h"
#include "db_internal.h"
#include "db_schedule.h"
#include "dialect.h"
#include "log.h"

int odbc_leader__db_has_schedules(const struct odbc_leader__db *db) {
    return db->dialect != NULL &&
           db->dialect->ops[ODBC_LEADER__OP_SCHEDULE].n > 0;
}

/* Sets the :job and :schedule parameters (identity NULL: NULL). */
static void set_params(struct odbc_leader__db *db, const char *job,
                       const char *identity) {
    snprintf((char *)db->p_job, sizeof(db->p_job), "%s", job);
    snprintf((char *)db->p_schedule, sizeof(db->p_schedule), "%s",
             identity != NULL ? identity : "");
    db->p_schedule_ind = identity != NULL ? SQL_NTS : SQL_NULL_DATA;
}

/* The row the schedule statement returns. */
struct recorded {
    char schedule[ODBC_LEADER__SCHEDULE_MAX + 1];
    int64_t since_ms;
    char since_by[ODBC_LEADER__NAME_MAX + 1];
};

static const struct odbc_leader__db_col recorded_cols[] = {
    ODBC_LEADER__DB_TEXT(1, struct recorded, schedule),
    ODBC_LEADER__DB_NUM(2, struct recorded, since_ms),
    ODBC_LEADER__DB_TEXT(3, struct recorded, since_by),
};

/* Copies text into dst (size bytes), cut to fit. */
static void put(char *dst, size_t size, const char *text) {
    size_t n = strlen(text);

    if (n >= size)
        n = size - 1;
    memcpy(dst, text, n);
    dst[n] = '\0';
}

/* Says why a claim is refused: in the log (an operator must act) and in
 * the port's diagnostic, which the handle's last error takes (cut to its
 * size there). */
static void refused(struct odbc_leader__db *db, const char *job,
                    const char *identity, const struct recorded *r) {
    char msg[2 * ODBC_LEADER__SCHEDULE_MAX + 4 * ODBC_LEADER__NAME_MAX + 256];

    snprintf(msg, sizeof(msg),
             "job %s of %s: this host computes its fires as \"%s\", but its "
             "fires are recorded as \"%s\" (by %s): claim refused; make the "
             "hosts agree (time zone, expression, engine), or change the "
             "job's schedule with: odbc-leader jobs -n %s reschedule %s",
             job, (const char *)db->p_ns, identity, r->schedule, r->since_by,
             (const char *)db->p_ns, job);
    memset(&db->diag, 0, sizeof(db->diag));
    put(db->diag.message, sizeof(db->diag.message), msg);
    db->diag.errclass = ODBC_LEADER__ERR_OTHER;
    put(db->last_error, sizeof(db->last_error), msg);
    odbc_leader__logf(db->log, LOG_ERR, "%s", msg);
}

/* Runs op (schedule or schedule_read) for job and identity, the row it
 * returns into *r (the caller's). Returns the rows read (0 or 1) or a
 * negative error, with its class in *cls. */
static int run_recorded(struct odbc_leader__db *db, int op, const char *job,
                        const char *identity, struct recorded *r, int *cls) {
    struct odbc_leader__db_rows rows =
        ODBC_LEADER__DB_ROWS(recorded_cols, r, NULL, NULL);

    set_params(db, job, identity);
    return odbc_leader__db_run_op(db, op, odbc_leader__db_table_row, &rows,
                                  cls);
}

/*
 * The steady state's check, one SELECT: returns 1 when the dialect has
 * schedule_read and the job's recorded identity is identity, 0 when the
 * schedule statement must decide (none recorded, another one, or no
 * schedule_read), or a negative error. Borrows everything.
 */
static int recorded_as(struct odbc_leader__db *db, const char *job,
                       const char *identity) {
    struct recorded r = {0};
    int cls;
    int rc;

    if (db->dialect->ops[ODBC_LEADER__OP_SCHEDULE_READ].n == 0)
        return 0;
    rc = run_recorded(db, ODBC_LEADER__OP_SCHEDULE_READ, job, identity, &r,
                      &cls);
    if (rc <= 0)
        return rc;
    return strcmp(r.schedule, identity) == 0;
}

int odbc_leader__db_schedule_check(struct odbc_leader__db *db, const char *job,
                                   const char *identity) {
    struct recorded r = {0};
    int cls;
    int rc;

    if (!odbc_leader__db_has_schedules(db)) {
        if (!db->schedules_warned)
            odbc_leader__logf(db->log, LOG_WARNING,
                              "dialect %s has no schedule statements "
                              "(docs/schedules.md): claims are not checked "
                              "against their jobs' schedules",
                              db->dialect != NULL ? db->dialect->name : "?");
        db->schedules_warned = 1;
        return 0;
    }
    rc = recorded_as(db, job, identity);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    rc = run_recorded(db, ODBC_LEADER__OP_SCHEDULE, job, identity, &r, &cls);
    if (rc < 0 && cls == ODBC_LEADER__ERR_UNIQUE && rc != ODBC_LEADER_EUNKNOWN)
        /* another host created the job's row at the same moment */
        rc =
            run_recorded(db, ODBC_LEADER__OP_SCHEDULE, job, identity, &r, &cls);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        snprintf(db->last_error, sizeof(db->last_error),
                 "the schedule statement returned no row for job %s", job);
        return ODBC_LEADER_EDB;
    }
    if (strcmp(r.schedule, identity) == 0)
        return 0;
    refused(db, job, identity, &r);
    return ODBC_LEADER_ESCHEDULE;
}

int odbc_leader__db_reschedule(struct odbc_leader__db *db, const char *job,
                               const char *identity) {
    int cls;
    int rc;

    if (!odbc_leader__db_has_schedules(db))
        return ODBC_LEADER_ENOLIFECYCLE;
    set_params(db, job, identity);
    rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_RESCHEDULE, NULL, NULL,
                                &cls);
    if (rc < 0 && cls == ODBC_LEADER__ERR_UNIQUE && rc != ODBC_LEADER_EUNKNOWN)
        rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_RESCHEDULE, NULL, NULL,
                                    &cls);
    if (rc < 0)
        return rc;
    if (identity != NULL)
        odbc_leader__logf(db->log, LOG_NOTICE,
                          "job %s of %s rescheduled: its fires are recorded "
                          "as \"%s\" from now on",
                          job, (const char *)db->p_ns, identity);
    else
        odbc_leader__logf(db->log, LOG_NOTICE,
                          "job %s of %s rescheduled: the next claim records "
                          "its schedule",
                          job, (const char *)db->p_ns);
    return 0;
}

/* The columns of schedules. */
static const struct odbc_leader__db_col schedule_cols[] = {
    ODBC_LEADER__DB_TEXT(1, struct odbc_leader_schedule, job),
    ODBC_LEADER__DB_TEXT(2, struct odbc_leader_schedule, schedule),
    ODBC_LEADER__DB_NUM(3, struct odbc_leader_schedule, since_ms),
    ODBC_LEADER__DB_TEXT(4, struct odbc_leader_schedule, since_by),
    ODBC_LEADER__DB_NUM(5, struct odbc_leader_schedule, refusals),
    ODBC_LEADER__DB_TEXT(6, struct odbc_leader_schedule, refused),
    ODBC_LEADER__DB_NUM(7, struct odbc_leader_schedule, refused_at_ms),
    ODBC_LEADER__DB_TEXT(8, struct odbc_leader_schedule, refused_by),
    ODBC_LEADER__DB_NUM(9, struct odbc_leader_schedule, db_now_ms),
};

int odbc_leader__db_schedules(struct odbc_leader__db *db,
                              odbc_leader_schedule_fn fn, void *ctx) {
    struct odbc_leader__db_host host = {.schedule = fn, .ctx = ctx};
    struct odbc_leader_schedule s;
    struct odbc_leader__db_rows rows =
        ODBC_LEADER__DB_ROWS(schedule_cols, &s, odbc_leader__db_to_host, &host);

    if (!odbc_leader__db_has_schedules(db))
        return ODBC_LEADER_ENOLIFECYCLE;
    return odbc_leader__db_run_rows(db, ODBC_LEADER__OP_SCHEDULES, &rows);
}
