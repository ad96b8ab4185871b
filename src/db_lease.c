/* SPDX-License-Identifier: MIT */
/*
 * db_lease.c: the lease operations of a port (db_lease.h): attempt (with
 * the integrity-error retry: a unique-key violation is retried once, then
 * the current lease is read), renew, resign, the resign request, the
 * follower wake-up (the dialect's statements, or the lock file of
 * wakefile.c), the candidate list, and the port table that hands them to
 * the elector (elector.h).
 */
#include <build_config.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "config.h"
#include "db.h"
#include "db_internal.h"
#include "db_lease.h"
#include "dialect.h"
#include "elector.h"
#include "log.h"
#include "wakefile.h"

/* ---- reading the answers ---- */

/* Reads column col as an integer flag into *v when the result has that
 * column and it is not NULL, else stores -1 (the dialect does not say: a
 * renew of SQLite and generic has a NULL there, before the count of
 * offered fires). */
static int get_optional_flag(void *stmt, int col, int *v) {
    SQLSMALLINT ncols = 0;
    int64_t x = 0;
    int null = 0;
    int rc;

    *v = -1;
    if (!SQL_SUCCEEDED(SQLNumResultCols((SQLHSTMT)stmt, &ncols)) || ncols < col)
        return 0;
    rc = odbc_leader__db_col_int_null(stmt, col, &x, &null);
    if (rc == 0 && !null)
        *v = x != 0;
    return rc;
}

/* Reads column col as a count into *v when the result has that column
 * (0 for NULL), else stores -1. */
static int get_optional_count(void *stmt, int col, int64_t *v) {
    SQLSMALLINT ncols = 0;

    *v = -1;
    if (!SQL_SUCCEEDED(SQLNumResultCols((SQLHSTMT)stmt, &ncols)) || ncols < col)
        return 0;
    return odbc_leader__db_col_int(stmt, col, v);
}

/* The four columns every lease result starts with: leader_id, term,
 * expires_at_ms, now_ms. */
static const struct odbc_leader__db_col lease_cols[] = {
    ODBC_LEADER__DB_TEXT(1, struct odbc_leader__result, leader_id),
    ODBC_LEADER__DB_NUM(2, struct odbc_leader__result, term),
    ODBC_LEADER__DB_NUM(3, struct odbc_leader__result, expires_at_ms),
    ODBC_LEADER__DB_NUM(4, struct odbc_leader__result, now_ms),
};

/* Reads the lease columns into *out (found when they are read). */
static int lease_columns(void *stmt, struct odbc_leader__result *out) {
    int rc = odbc_leader__db_read_row(
        stmt, out, lease_cols, sizeof(lease_cols) / sizeof(lease_cols[0]));

    if (rc == 0)
        out->found = 1;
    return rc;
}

/* Row callback of leader: the four lease columns. ctx is a struct
 * odbc_leader__result. */
static int lease_row(void *ctx, void *stmt) { return lease_columns(stmt, ctx); }

/* Row callback of attempt: the lease columns, then won. */
static int attempt_row(void *ctx, void *stmt) {
    struct odbc_leader__result *out = ctx;
    int64_t won = 0;
    int rc = lease_columns(stmt, out);

    if (rc == 0)
        rc = odbc_leader__db_col_int(stmt, 5, &won);
    if (rc == 0)
        rc = get_optional_flag(stmt, 6, &out->wake_held);
    out->won = won != 0;
    return rc;
}

/* Row callback of renew: the lease columns, then resign_requested and
 * handoff_to. */
static int renew_row(void *ctx, void *stmt) {
    struct odbc_leader__result *out = ctx;
    int64_t requested = 0;
    int rc = lease_columns(stmt, out);

    if (rc == 0)
        rc = odbc_leader__db_col_int(stmt, 5, &requested);
    if (rc == 0)
        rc = odbc_leader__db_col_text(stmt, 6, out->handoff_to,
                                      sizeof(out->handoff_to));
    if (rc == 0)
        rc = get_optional_flag(stmt, 7, &out->wake_held);
    if (rc == 0)
        rc = get_optional_count(stmt, 8, &out->offered);
    out->resign_requested = requested != 0;
    return rc;
}

/* After an attempt that won or a renewal that held: takes the lock file's
 * byte without waiting and reports it in out->wake_held, as the server
 * dialects' statements do. */
static void wake_take(struct odbc_leader__db *db,
                      struct odbc_leader__result *out) {
    if (odbc_leader__wakefile_is_open(&db->wake))
        out->wake_held = odbc_leader__wakefile_lock(&db->wake, 1, 0) == 1;
}

/* ---- the lease ---- */

int odbc_leader__db_attempt(struct odbc_leader__db *db, int64_t seen_term,
                            int64_t seen_expires_ms,
                            struct odbc_leader__result *out) {
    int cls;
    int rc;

    memset(out, 0, sizeof(*out));
    db->p_seen_term = seen_term;
    db->p_seen_expires_ms = seen_expires_ms;
    rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_ATTEMPT, attempt_row, out,
                                &cls);
    if (rc < 0 && cls == ODBC_LEADER__ERR_UNIQUE) {
        /* Another candidate created the first lease row at the same
         * moment: retry once, then settle for reading who leads. */
        odbc_leader__logf(db->log, LOG_INFO,
                          "unique violation creating the lease row of %s: "
                          "retrying once",
                          db->cfg->ns);
        db->stats.retries++;
        memset(out, 0, sizeof(*out));
        rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_ATTEMPT, attempt_row,
                                    out, &cls);
        if (rc < 0 && cls == ODBC_LEADER__ERR_UNIQUE) {
            memset(out, 0, sizeof(*out));
            rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_LEADER, lease_row,
                                        out, &cls);
        }
    }
    if (rc < 0 && cls == ODBC_LEADER__ERR_TRANSIENT &&
        rc != ODBC_LEADER_EUNKNOWN && db->connected) {
        /* A deadlock, a serialization failure or (Galera) a certification
         * conflict at COMMIT: another candidate's write won, ours was
         * rolled back. A lost race, not an error: not won, nothing seen. */
        odbc_leader__logf(db->log, LOG_INFO,
                          "attempt lost a race with another writer (%s)",
                          db->last_error);
        memset(out, 0, sizeof(*out));
        rc = 0;
    }
    if (rc >= 0 && out->found && out->won &&
        strcmp(out->leader_id, db->id) == 0)
        wake_take(db, out);
    return rc < 0 ? rc : 0;
}

int odbc_leader__db_renew(struct odbc_leader__db *db, int64_t term,
                          struct odbc_leader__result *out) {
    int cls;
    int rc;

    memset(out, 0, sizeof(*out));
    db->p_term = term;
    out->offered = -1;
    rc =
        odbc_leader__db_run_op(db, ODBC_LEADER__OP_RENEW, renew_row, out, &cls);
    if (rc >= 0 && out->found)
        wake_take(db, out);
    db->offered = rc >= 0 && out->found ? out->offered : -1;
    return rc < 0 ? rc : 0;
}

int odbc_leader__db_resign(struct odbc_leader__db *db, int64_t term) {
    int cls;
    int rc;

    db->p_term = term;
    rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_RESIGN, NULL, NULL, &cls);
    return rc < 0 ? rc : rc > 0;
}

int odbc_leader__db_unregister(struct odbc_leader__db *db) {
    int cls;
    int rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_UNREGISTER, NULL, NULL,
                                    &cls);

    return rc < 0 ? rc : 0;
}

int odbc_leader__db_request_resign(struct odbc_leader__db *db,
                                   const char *to_id) {
    int cls;
    int rc;

    if (to_id != NULL && to_id[0] != '\0') {
        snprintf((char *)db->p_to, sizeof(db->p_to), "%s", to_id);
        db->p_to_ind = SQL_NTS;
    } else {
        db->p_to[0] = '\0';
        db->p_to_ind = SQL_NULL_DATA;
    }
    rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_REQUEST_RESIGN, NULL, NULL,
                                &cls);
    return rc < 0 ? rc : rc > 0;
}

int odbc_leader__db_read_lease(struct odbc_leader__db *db,
                               struct odbc_leader__result *out) {
    int cls;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_LEADER, lease_row, out,
                                &cls);
    return rc < 0 ? rc : 0;
}

/* ---- the follower wake-up ---- */

int odbc_leader__db_has_wait(const struct odbc_leader__db *db) {
    if (db->pooled) /* session locks do not survive transaction pooling */
        return 0;
    return odbc_leader__wakefile_is_open(&db->wake) ||
           (db->dialect != NULL &&
            db->dialect->ops[ODBC_LEADER__OP_WAIT].n > 0 &&
            db->dialect->ops[ODBC_LEADER__OP_RELEASE].n > 0);
}

int odbc_leader__db_release(struct odbc_leader__db *db) {
    int cls;
    int rc;

    if (odbc_leader__wakefile_is_open(&db->wake)) {
        odbc_leader__wakefile_unlock(&db->wake);
        return 0;
    }
    if (!odbc_leader__db_has_wait(db))
        return 0;
    rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_RELEASE, NULL, NULL, &cls);
    return rc < 0 ? rc : 0;
}

/* Row callback of hold and wait: the one flag column. */
static int flag_row(void *ctx, void *stmt) {
    return odbc_leader__db_col_int(stmt, 1, ctx);
}

/* Runs hold or wait with a budget of budget_ms. Returns the flag the
 * statement reports (1 or 0), 0 when it failed with a transient error (a
 * lock timeout: its budget ran out), or a negative error. */
static int run_flag_op(struct odbc_leader__db *db, int op, int64_t budget_ms) {
    int64_t flag = 0;
    int cls;
    int rc;

    db->p_wait_ms = budget_ms;
    rc = odbc_leader__db_run_op(db, op, flag_row, &flag, &cls);
    if (rc < 0 && cls == ODBC_LEADER__ERR_TRANSIENT &&
        rc != ODBC_LEADER_EUNKNOWN)
        return 0;
    if (rc < 0)
        return rc;
    return flag != 0;
}

int odbc_leader__db_hold(struct odbc_leader__db *db, int64_t budget_ms) {
    if (odbc_leader__wakefile_is_open(&db->wake))
        return odbc_leader__wakefile_lock(&db->wake, 1, budget_ms);
    if (!odbc_leader__db_has_wait(db) ||
        db->dialect->ops[ODBC_LEADER__OP_HOLD].n == 0)
        return 0;
    return run_flag_op(db, ODBC_LEADER__OP_HOLD, budget_ms);
}

int odbc_leader__db_wait(struct odbc_leader__db *db, int64_t budget_ms) {
    int rc;

    if (odbc_leader__wakefile_is_open(&db->wake)) {
        /* free when no leader holds it exclusively; let go at once */
        rc = odbc_leader__wakefile_lock(&db->wake, 0, budget_ms);
        if (rc == 1)
            odbc_leader__wakefile_unlock(&db->wake);
        return rc;
    }
    if (!odbc_leader__db_has_wait(db))
        /* a handle that turned to transaction pooling at run time: no
         * wake-up; leader.c turns the elector's waits off after the tick */
        return db->pooled ? 0 : ODBC_LEADER_EINVAL;
    return run_flag_op(db, ODBC_LEADER__OP_WAIT, budget_ms);
}

/* ---- the candidates ---- */

/* The columns of candidates: candidate_id, heartbeat_at_ms,
 * expires_at_ms, now_ms. */
static const struct odbc_leader__db_col candidate_cols[] = {
    ODBC_LEADER__DB_TEXT(1, struct odbc_leader_candidate, id),
    ODBC_LEADER__DB_NUM(2, struct odbc_leader_candidate, heartbeat_at_ms),
    ODBC_LEADER__DB_NUM(3, struct odbc_leader_candidate, expires_at_ms),
    ODBC_LEADER__DB_NUM(4, struct odbc_leader_candidate, db_now_ms),
};

int odbc_leader__db_candidates(struct odbc_leader__db *db,
                               odbc_leader_candidate_fn fn, void *ctx) {
    struct odbc_leader__db_host host = {.candidate = fn, .ctx = ctx};
    struct odbc_leader_candidate cand;
    struct odbc_leader__db_rows rows = ODBC_LEADER__DB_ROWS(
        candidate_cols, &cand, odbc_leader__db_to_host, &host);

    return odbc_leader__db_run_rows(db, ODBC_LEADER__OP_CANDIDATES, &rows);
}

/* ---- the elector's port ---- */

/* Port adapters: the elector sees db only through these. */
static int port_connect(void *port) {
    return odbc_leader__db_connect(port, NULL, 0);
}

static void port_disconnect(void *port) { odbc_leader__db_disconnect(port); }

static int port_attempt(void *port, int64_t seen_term, int64_t seen_expires_ms,
                        struct odbc_leader__result *out) {
    return odbc_leader__db_attempt(port, seen_term, seen_expires_ms, out);
}

static int port_renew(void *port, int64_t term,
                      struct odbc_leader__result *out) {
    return odbc_leader__db_renew(port, term, out);
}

static int port_resign(void *port, int64_t term) {
    int rc = odbc_leader__db_resign(port, term);

    return rc < 0 ? rc : 0;
}

static int port_unregister(void *port) {
    return odbc_leader__db_unregister(port);
}

static int port_release(void *port) { return odbc_leader__db_release(port); }

static int port_wait(void *port, int64_t budget_ms) {
    return odbc_leader__db_wait(port, budget_ms);
}

static int port_hold(void *port, int64_t budget_ms) {
    return odbc_leader__db_hold(port, budget_ms);
}

static int port_read(void *port, struct odbc_leader__result *out) {
    return odbc_leader__db_read_lease(port, out);
}

const struct odbc_leader__port_ops odbc_leader__db_ops = {
    port_connect,    port_disconnect, port_attempt, port_renew, port_resign,
    port_unregister, port_release,    port_wait,    port_hold,  port_read,
};
