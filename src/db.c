/* SPDX-License-Identifier: MIT */
/*
 * db.c: the ODBC executor of the port (db.h, db_internal.h).
 *
 * One connection per handle. The protocol's statements are prepared with
 * their parameters bound to buffers inside struct odbc_leader__db, so an
 * operation is SQLExecute plus fetch (run_op). A multi-statement
 * operation runs inside one transaction: the dialect's own BEGIN/COMMIT
 * when it names them, else an ODBC transaction. Driver errors are read
 * here (diagnose) and classified with the dialect's code lists; a lost
 * connection or a timeout of unknown outcome drops the connection, so the
 * next call reconnects. What runs on the executor lives in files of its
 * own: connecting (db_connect.c), the schema (db_schema.c), the pooler
 * check (db_pooler.c), the lease (db_lease.c), the ledger (db_ledger.c)
 * and groups (db_group.c).
 */
#include <build_config.h>

#include <sql.h>
#include <sqlext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "config.h"
#include "db.h"
#include "db_internal.h"
#include "dialect.h"
#include "log.h"
#include "probe.h"
#include "wakefile.h"

/* ---- the port ---- */

int odbc_leader__db_create(struct odbc_leader__db **out,
                           const struct odbc_leader__config *cfg,
                           const char *id, const struct odbc_leader__log *log) {
    struct odbc_leader__db *db = calloc(1, sizeof(*db));

    *out = NULL;
    if (db == NULL)
        return ODBC_LEADER_ENOMEM;
    db->cfg = cfg;
    db->id = id;
    db->log = log;
    db->offered = -1;
    db->nts = SQL_NTS;
    db->p_to_ind = SQL_NULL_DATA;
    db->p_schedule_ind = SQL_NULL_DATA;
    snprintf((char *)db->p_ns, sizeof(db->p_ns), "%s", cfg->ns);
    snprintf((char *)db->p_id, sizeof(db->p_id), "%s", id);
    db->p_ttl_ms = cfg->ttl_ms;
    db->p_cand_ttl_ms = cfg->ttl_ms;
    db->p_retention_ms = cfg->fire_retention_ms;
    db->p_election_retention_ms = cfg->election_retention_ms;
    odbc_leader__wakefile_init(&db->wake);
    db->pooled = cfg->pooler == ODBC_LEADER__POOL_TRANSACTION;
    *out = db;
    return 0;
}

void odbc_leader__db_destroy(struct odbc_leader__db *db) {
    if (db == NULL)
        return;
    odbc_leader__probe_destroy(db->probe);
    odbc_leader__db_disconnect(db);
    odbc_leader__dialect_free(db->dialect);
    free(db->connect);
    odbc_leader__wakefile_close(&db->wake);
    free(db);
}

const struct odbc_leader__dialect *
odbc_leader__db_dialect(const struct odbc_leader__db *db) {
    return db->dialect;
}

const struct odbc_leader__config *
odbc_leader__db_config(const struct odbc_leader__db *db) {
    return db->cfg;
}

const struct odbc_leader__log *
odbc_leader__db_log(const struct odbc_leader__db *db) {
    return db->log;
}

void odbc_leader__db_set_ns(struct odbc_leader__db *db, const char *ns) {
    snprintf((char *)db->p_ns, sizeof(db->p_ns), "%s", ns);
}

#ifdef ODBC_LEADER_TEST_HOOKS
void odbc_leader__db_stats(const struct odbc_leader__db *db,
                           struct odbc_leader__db_stats *out) {
    *out = db->stats;
}
#endif

/* ---- diagnostics ---- */

/* Maps an error class to its precedence when a call returns several
 * diagnostic records: a lost connection outranks everything. */
static int class_rank(int cls) {
    switch (cls) {
    case ODBC_LEADER__ERR_CONNLOST:
        return 5;
    case ODBC_LEADER__ERR_READONLY:
        return 4;
    case ODBC_LEADER__ERR_UNIQUE:
        return 3;
    case ODBC_LEADER__ERR_UNDEFINED_TABLE:
        return 2;
    case ODBC_LEADER__ERR_TRANSIENT:
        return 1;
    default:
        return 0;
    }
}

/* Keeps the first diagnostic record of a failure in db->last_error and,
 * split, in db->diag. state and msg are borrowed. */
static void keep_first(struct odbc_leader__db *db, const char *state,
                       SQLINTEGER native, const char *msg) {
    snprintf(db->last_error, sizeof(db->last_error), "[%s] native %ld: %s",
             state, (long)native, msg);
    snprintf(db->diag.sqlstate, sizeof(db->diag.sqlstate), "%s", state);
    db->diag.native = (long)native;
    snprintf(db->diag.message, sizeof(db->diag.message), "%s", msg);
}

void odbc_leader__db_diag(const struct odbc_leader__db *db,
                          struct odbc_leader__diag *out) {
    *out = db->diag;
}

void odbc_leader__db_clear_diag(struct odbc_leader__db *db) {
    memset(&db->diag, 0, sizeof(db->diag));
}

/*
 * Reads every diagnostic record of (type, h), logs them, keeps the first
 * in db->last_error and returns the most severe error class. A connection
 * the driver reports as dead is CONNLOST whatever the records say.
 */
static int diagnose(struct odbc_leader__db *db, SQLSMALLINT type, SQLHANDLE h,
                    const char *what) {
    SQLCHAR state[6], msg[512];
    SQLINTEGER native;
    SQLSMALLINT len;
    SQLUINTEGER dead = SQL_CD_FALSE;
    int cls = ODBC_LEADER__ERR_OTHER;

    db->last_error[0] = '\0';
    db->last_timeout = 0;
    memset(&db->diag, 0, sizeof(db->diag));
    for (SQLSMALLINT i = 1; i <= 16; i++) {
        SQLRETURN r =
            SQLGetDiagRec(type, h, i, state, &native, msg, sizeof(msg), &len);
        int c;

        if (!SQL_SUCCEEDED(r))
            break;
        c = db->dialect != NULL
                ? odbc_leader__classify(db->dialect, (char *)state, native)
                : (strncmp((char *)state, "08", 2) == 0
                       ? ODBC_LEADER__ERR_CONNLOST
                       : ODBC_LEADER__ERR_OTHER);
        if (class_rank(c) > class_rank(cls))
            cls = c;
        if (strcmp((char *)state, "HYT00") == 0 ||
            strcmp((char *)state, "HYT01") == 0)
            db->last_timeout = 1;
        if (i == 1)
            keep_first(db, (char *)state, native, (char *)msg);
        odbc_leader__logf(db->log, LOG_DEBUG, "%s: [%s] native %ld: %s", what,
                          (char *)state, (long)native, (char *)msg);
    }
    if (db->dbc != SQL_NULL_HDBC &&
        SQL_SUCCEEDED(SQLGetConnectAttr(db->dbc, SQL_ATTR_CONNECTION_DEAD,
                                        &dead, 0, NULL)) &&
        dead == SQL_CD_TRUE)
        cls = ODBC_LEADER__ERR_CONNLOST;
    if (cls == ODBC_LEADER__ERR_UNIQUE)
        db->stats.unique_violations++;
    db->diag.errclass = cls;
    return cls;
}

/* Turns an error class into a return code; a lost connection also frees
 * the connection so the next call reconnects. So does a client-side
 * timeout: the driver gave up waiting, the server may still run (or have
 * committed) the statement, and the session may hold a transaction:
 * ODBC_LEADER_EUNKNOWN. */
static int class_to_rc(struct odbc_leader__db *db, int cls) {
    if (db->last_timeout && cls != ODBC_LEADER__ERR_CONNLOST) {
        odbc_leader__db_disconnect(db);
        return ODBC_LEADER_EUNKNOWN;
    }
    switch (cls) {
    case ODBC_LEADER__ERR_CONNLOST:
        odbc_leader__db_disconnect(db);
        return ODBC_LEADER_ECONNLOST;
    case ODBC_LEADER__ERR_UNDEFINED_TABLE:
        return ODBC_LEADER_ENOTABLE;
    case ODBC_LEADER__ERR_READONLY:
        /* A standby (or read_only): drop the session so the reconnect can
         * reach the primary a proxy or a name now points at. */
        odbc_leader__logf(db->log, LOG_WARNING,
                          "the database server is read-only (a standby in "
                          "recovery, or read_only set); reconnecting: %s",
                          db->last_error);
        odbc_leader__db_disconnect(db);
        return ODBC_LEADER_EREADONLY;
    default:
        return ODBC_LEADER_EDB;
    }
}

/* ---- transactions ---- */

/* Sets LeaderStatementTimeout, rounded up to whole seconds, as h's ODBC
 * query timeout, unless the dialect says "@query-timeout off" (it bounds
 * its statements in the session, in milliseconds, and psqlODBC would
 * override that with its own whole seconds). Drivers that ignore it
 * answer with a warning: harmless. */
static void set_query_timeout(const struct odbc_leader__db *db, SQLHSTMT h) {
    SQLULEN secs = (SQLULEN)((db->cfg->stmt_timeout_ms + 999) / 1000);

    if (db->dialect != NULL && db->dialect->no_query_timeout)
        return;
    SQLSetStmtAttr(h, SQL_ATTR_QUERY_TIMEOUT, (SQLPOINTER)secs, 0);
}

/* Runs one statement text directly (transaction control, bounded by the
 * query timeout like every statement). Returns 0 or a negative error;
 * *cls gets the error class. */
static int exec_direct(struct odbc_leader__db *db, const char *sql,
                       const char *what, int *cls) {
    SQLHSTMT h = SQL_NULL_HSTMT;
    SQLRETURN r;
    int rc = 0;

    *cls = ODBC_LEADER__ERR_OTHER;
    r = SQLAllocHandle(SQL_HANDLE_STMT, db->dbc, &h);
    if (!SQL_SUCCEEDED(r)) {
        *cls = diagnose(db, SQL_HANDLE_DBC, db->dbc, what);
        return class_to_rc(db, *cls);
    }
    set_query_timeout(db, h);
    r = SQLExecDirect(h, (SQLCHAR *)sql, SQL_NTS);
    if (!SQL_SUCCEEDED(r) && r != SQL_NO_DATA) {
        *cls = diagnose(db, SQL_HANDLE_STMT, h, what);
        rc = -1;
    }
    SQLFreeHandle(SQL_HANDLE_STMT, h);
    if (rc < 0)
        rc = class_to_rc(db, *cls);
    return rc;
}

/* Starts the transaction of a multi-statement operation (of every
 * operation under transaction pooling, with the prologue). */
static int tx_begin(struct odbc_leader__db *db, int *cls) {
    SQLRETURN r;
    int rc;

    if (db->dialect->begin != NULL) {
        rc = exec_direct(db, db->dialect->begin, "begin", cls);
    } else {
        r = SQLSetConnectAttr(db->dbc, SQL_ATTR_AUTOCOMMIT,
                              (SQLPOINTER)SQL_AUTOCOMMIT_OFF, 0);
        rc = 0;
        if (!SQL_SUCCEEDED(r)) {
            *cls = diagnose(db, SQL_HANDLE_DBC, db->dbc, "begin");
            return class_to_rc(db, *cls);
        }
    }
    if (rc == 0 && db->pooled && db->dialect->pooled_prologue != NULL)
        rc = exec_direct(db, db->dialect->pooled_prologue, "pooled-prologue",
                         cls);
    return rc;
}

/* Ends the transaction: commits when commit is 1, else rolls back.
 * A failed commit leaves the outcome unknown: returns EUNKNOWN (or
 * ECONNLOST when the connection is gone, which is unknown as well). A
 * failed commit or rollback drops the connection: a session kept with its
 * transaction open would hold its locks (on SQLite, the file's write
 * lock) until it ended. */
static int tx_end(struct odbc_leader__db *db, int commit, int *cls) {
    SQLRETURN r;
    int rc;

    if (db->dialect->begin != NULL) {
        rc = exec_direct(db,
                         commit ? db->dialect->commit : db->dialect->rollback,
                         commit ? "commit" : "rollback", cls);
    } else {
        r = SQLEndTran(SQL_HANDLE_DBC, db->dbc,
                       commit ? SQL_COMMIT : SQL_ROLLBACK);
        rc = 0;
        if (!SQL_SUCCEEDED(r)) {
            *cls = diagnose(db, SQL_HANDLE_DBC, db->dbc,
                            commit ? "commit" : "rollback");
            rc = class_to_rc(db, *cls);
        }
        if (db->connected)
            SQLSetConnectAttr(db->dbc, SQL_ATTR_AUTOCOMMIT,
                              (SQLPOINTER)SQL_AUTOCOMMIT_ON, 0);
    }
    if (rc == 0)
        return 0;
    if (db->connected)
        odbc_leader__db_disconnect(db);
    if (commit && rc != ODBC_LEADER_ECONNLOST)
        rc = ODBC_LEADER_EUNKNOWN;
    return rc;
}

/* ---- binding ---- */

/* Sets the buffer address, C type, SQL type and indicator of a named
 * parameter. Returns 1 when its buffer or length changes from one
 * execution to the next (the JSON lists and masks of a group's tick: they
 * are bound again before each run), else 0. */
static int param_slot(struct odbc_leader__db *db, int p, SQLPOINTER *ptr,
                      SQLSMALLINT *ctype, SQLSMALLINT *sqltype, SQLULEN *size,
                      SQLLEN *buflen, SQLLEN **ind) {
    *ctype = SQL_C_SBIGINT;
    *sqltype = SQL_BIGINT;
    *size = 0;
    *buflen = 0;
    *ind = &db->zero;
    switch ((enum odbc_leader__param)p) {
    case ODBC_LEADER__P_NS:
    case ODBC_LEADER__P_ID:
    case ODBC_LEADER__P_JOB:
        *ptr = p == ODBC_LEADER__P_NS   ? db->p_ns
               : p == ODBC_LEADER__P_ID ? db->p_id
                                        : db->p_job;
        *ctype = SQL_C_CHAR;
        *sqltype = SQL_VARCHAR;
        *size = ODBC_LEADER__NAME_MAX;
        *buflen = ODBC_LEADER__NAME_MAX + 1;
        *ind = &db->nts;
        return 0;
    case ODBC_LEADER__P_TO:
        *ptr = db->p_to;
        *ctype = SQL_C_CHAR;
        *sqltype = SQL_VARCHAR;
        *size = ODBC_LEADER__NAME_MAX;
        *buflen = ODBC_LEADER__NAME_MAX + 1;
        *ind = &db->p_to_ind;
        return 0;
    case ODBC_LEADER__P_TERM:
        *ptr = &db->p_term;
        return 0;
    case ODBC_LEADER__P_TTL_MS:
        *ptr = &db->p_ttl_ms;
        return 0;
    case ODBC_LEADER__P_CAND_TTL_MS:
        *ptr = &db->p_cand_ttl_ms;
        return 0;
    case ODBC_LEADER__P_VERSION:
        *ptr = &db->p_version;
        return 0;
    case ODBC_LEADER__P_WAIT_MS:
        *ptr = &db->p_wait_ms;
        return 0;
    case ODBC_LEADER__P_FIRE_MS:
        *ptr = &db->p_fire_ms;
        return 0;
    case ODBC_LEADER__P_STATUS:
        *ptr = &db->p_status;
        return 0;
    case ODBC_LEADER__P_RETENTION_MS:
        *ptr = &db->p_retention_ms;
        return 0;
    case ODBC_LEADER__P_SEEN_TERM:
        *ptr = &db->p_seen_term;
        return 0;
    case ODBC_LEADER__P_SEEN_EXPIRES_MS:
        *ptr = &db->p_seen_expires_ms;
        return 0;
    case ODBC_LEADER__P_INC:
        *ptr = &db->p_inc;
        return 0;
    case ODBC_LEADER__P_SEQ:
        *ptr = &db->p_seq;
        return 0;
    case ODBC_LEADER__P_SHARDS:
        *ptr = &db->p_shards;
        return 0;
    case ODBC_LEADER__P_TAKE:
    case ODBC_LEADER__P_RELEASE:
    case ODBC_LEADER__P_DEAD: {
        int k = p - ODBC_LEADER__P_TAKE;

        *ptr = (SQLPOINTER)(db->p_list[k] != NULL ? db->p_list[k] : "[]");
        db->p_list_len[k] = (SQLLEN)strlen((const char *)*ptr);
        *ctype = SQL_C_CHAR;
        *sqltype = SQL_LONGVARCHAR;
        *size = (SQLULEN)db->p_list_len[k] + 1;
        *buflen = db->p_list_len[k] + 1;
        *ind = &db->p_list_len[k];
        return 1;
    }
    case ODBC_LEADER__P_TAKE_MASK:
    case ODBC_LEADER__P_RELEASE_MASK: {
        int k = p - ODBC_LEADER__P_TAKE_MASK;

        *ptr = (SQLPOINTER)(db->p_mask[k] != NULL ? db->p_mask[k] : "");
        db->p_mask_len[k] = (SQLLEN)strlen((const char *)*ptr);
        *ctype = SQL_C_CHAR;
        *sqltype = SQL_LONGVARCHAR;
        *size = (SQLULEN)db->p_mask_len[k] + 1;
        *buflen = db->p_mask_len[k] + 1;
        *ind = &db->p_mask_len[k];
        return 1;
    }
    case ODBC_LEADER__P_DEAD_INC:
        *ptr = &db->p_dead_inc;
        return 0;
    case ODBC_LEADER__P_MAX_ATTEMPTS:
        *ptr = &db->p_max_attempts;
        return 0;
    case ODBC_LEADER__P_PAUSED:
        *ptr = &db->p_paused;
        return 0;
    case ODBC_LEADER__P_DEAD_SEQ:
        *ptr = &db->p_dead_seq;
        return 0;
    case ODBC_LEADER__P_FULL:
        *ptr = &db->p_full;
        return 0;
    case ODBC_LEADER__P_SCHEDULE:
        *ptr = db->p_schedule;
        *ctype = SQL_C_CHAR;
        *sqltype = SQL_VARCHAR;
        *size = ODBC_LEADER__SCHEDULE_MAX;
        *buflen = ODBC_LEADER__SCHEDULE_MAX + 1;
        *ind = &db->p_schedule_ind;
        return 0;
    case ODBC_LEADER__P_ELECTION_RETENTION_MS:
        *ptr = &db->p_election_retention_ms;
        return 0;
    case ODBC_LEADER__P_COUNT:
        break;
    }
    *ptr = &db->p_version;
    return 0;
}

/* Binds parameter p as the (0-based) i-th marker of h, to its slot in db
 * (param_slot); with only_varying, only a slot that changes between
 * executions. Returns what SQLBindParameter returns, or SQL_SUCCESS when
 * there was nothing to bind. */
static SQLRETURN bind_param(struct odbc_leader__db *db, SQLHSTMT h, int i,
                            int p, int only_varying) {
    SQLPOINTER ptr;
    SQLSMALLINT ctype, sqltype;
    SQLULEN size;
    SQLLEN buflen, *ind;
    int varies =
        param_slot(db, p, &ptr, &ctype, &sqltype, &size, &buflen, &ind);

    if (only_varying && !varies)
        return SQL_SUCCESS;
    return SQLBindParameter(h, (SQLUSMALLINT)(i + 1), SQL_PARAM_INPUT, ctype,
                            sqltype, size, 0, ptr, buflen, ind);
}

/*
 * Allocates a statement handle, sets the query timeout, prepares s (unless
 * direct: the caller will SQLExecDirect it once) and binds its parameters
 * to db's buffers. Returns 0 and the handle (owned by the caller) in *out,
 * or a negative error with *cls set.
 */
static int prepare(struct odbc_leader__db *db, int op,
                   const struct odbc_leader__stmt *s, int direct, SQLHSTMT *out,
                   int *cls) {
    SQLHSTMT h = SQL_NULL_HSTMT;
    char what[64];
    SQLRETURN r;

    *out = SQL_NULL_HSTMT;
    *cls = ODBC_LEADER__ERR_OTHER;
    snprintf(what, sizeof(what), "prepare %s (line %d)",
             odbc_leader__op_name(op), s->line);
    r = SQLAllocHandle(SQL_HANDLE_STMT, db->dbc, &h);
    if (!SQL_SUCCEEDED(r)) {
        *cls = diagnose(db, SQL_HANDLE_DBC, db->dbc, what);
        return class_to_rc(db, *cls);
    }
    set_query_timeout(db, h);
    r = direct ? SQL_SUCCESS : SQLPrepare(h, (SQLCHAR *)s->sql, SQL_NTS);
    for (int i = 0; SQL_SUCCEEDED(r) && i < s->nparams; i++)
        r = bind_param(db, h, i, s->params[i], 0);
    if (!SQL_SUCCEEDED(r)) {
        *cls = diagnose(db, SQL_HANDLE_STMT, h, what);
        SQLFreeHandle(SQL_HANDLE_STMT, h);
        return class_to_rc(db, *cls);
    }
    *out = h;
    return 0;
}

/* Prepares every statement of op into db->stmts[op]. */
int odbc_leader__db_prepare_op(struct odbc_leader__db *db, int op, int *cls) {
    const struct odbc_leader__stmt_list *l = &db->dialect->ops[op];

    for (size_t i = 0; i < l->n && i < ODBC_LEADER__MAX_STMTS; i++) {
        int rc = prepare(db, op, &l->v[i], 0, &db->stmts[op][i], cls);

        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ---- running an operation ---- */

/* Fetches the rows of h into fn. Returns the number of rows or a negative
 * error. */
static int fetch_rows(struct odbc_leader__db *db, SQLHSTMT h,
                      odbc_leader__db_row_fn fn, void *ctx, const char *what,
                      int *cls) {
    SQLSMALLINT ncols = 0;
    int n = 0;

    if (!SQL_SUCCEEDED(SQLNumResultCols(h, &ncols)) || ncols == 0)
        return 0;
    for (;;) {
        SQLRETURN r = SQLFetch(h);
        int rc;

        if (r == SQL_NO_DATA)
            return n;
        if (!SQL_SUCCEEDED(r)) {
            *cls = diagnose(db, SQL_HANDLE_STMT, h, what);
            return class_to_rc(db, *cls);
        }
        rc = fn != NULL ? fn(ctx, h) : 0;
        if (rc < 0)
            return rc;
        n++;
    }
}

/* Fetches the rows of every result set of h (a statement may be a batch
 * whose first results carry no rows) into fn. Returns the rows fetched or
 * a negative error. */
static int fetch_results(struct odbc_leader__db *db, SQLHSTMT h,
                         odbc_leader__db_row_fn fn, void *ctx, const char *what,
                         int *cls) {
    int total = 0;

    for (;;) {
        int n = fetch_rows(db, h, fn, ctx, what, cls);
        SQLRETURN r;

        if (n < 0)
            return n;
        total += n;
        r = SQLMoreResults(h);
        if (r == SQL_NO_DATA)
            return total;
        if (!SQL_SUCCEEDED(r)) {
            *cls = diagnose(db, SQL_HANDLE_STMT, h, what);
            return class_to_rc(db, *cls);
        }
    }
}

/*
 * Binds again, on the prepared h of s, the parameters whose buffer or
 * length changes from one execution to the next (param_slot). Returns
 * SQL_SUCCESS or the failed bind's return.
 */
static SQLRETURN bind_lists(struct odbc_leader__db *db,
                            const struct odbc_leader__stmt *s, SQLHSTMT h) {
    SQLRETURN r = SQL_SUCCESS;

    for (int i = 0; SQL_SUCCEEDED(r) && i < s->nparams; i++)
        r = bind_param(db, h, i, s->params[i], 1);
    return r;
}

/*
 * The handle statement i of op runs on: prepared at connect (the lease's
 * and the ledger's operations), prepared at its first run and kept for
 * the connection (a group's ticks, every renew interval: their plans are
 * not parsed again each time), or else NULL in *h with *direct set: a
 * statement run with SQLExecDirect (once per connection, as on_connect,
 * ddl and schema_version, or seldom), one round trip, which also avoids
 * a psqlODBC leak of prepared plans whose table is missing. Returns 0 or
 * a negative error with *cls set.
 */
static int stmt_of(struct odbc_leader__db *db, int op, size_t i, SQLHSTMT *h,
                   int *direct, int *cls) {
    const struct odbc_leader__stmt *s = &db->dialect->ops[op].v[i];
    int rc = 0;

    *h = db->stmts[op][i];
    *direct = 0;
    if (*h == SQL_NULL_HSTMT && (op == ODBC_LEADER__OP_GROUP_TICK ||
                                 op == ODBC_LEADER__OP_GROUP_STEADY)) {
        rc = prepare(db, op, s, 0, &db->stmts[op][i], cls);
        *h = db->stmts[op][i];
    } else if (*h == SQL_NULL_HSTMT) {
        *direct = 1;
        return prepare(db, op, s, 1, h, cls);
    }
    if (rc == 0 && !SQL_SUCCEEDED(bind_lists(db, s, *h))) {
        *cls = diagnose(db, SQL_HANDLE_STMT, *h, "bind");
        rc = class_to_rc(db, *cls);
    }
    return rc;
}

/*
 * Executes statement i of op on the handle stmt_of() gives. The last
 * statement's rows go to fn. Returns the rows fetched, or the rows
 * affected when there is no result set, or a negative error with *cls
 * set.
 */
static int exec_stmt(struct odbc_leader__db *db, int op, size_t i, int last,
                     odbc_leader__db_row_fn fn, void *ctx, const char *what,
                     int *cls) {
    const struct odbc_leader__stmt *s = &db->dialect->ops[op].v[i];
    SQLHSTMT h;
    int direct;
    int failed = 0;
    int rc = stmt_of(db, op, i, &h, &direct, cls);
    SQLLEN count = 0;
    SQLRETURN r;

    if (rc < 0)
        return rc;
    r = direct ? SQLExecDirect(h, (SQLCHAR *)s->sql, SQL_NTS) : SQLExecute(h);
    if (r != SQL_NO_DATA && !SQL_SUCCEEDED(r)) {
        *cls = diagnose(db, SQL_HANDLE_STMT, h, what);
        failed = 1;
    } else if (r != SQL_NO_DATA && last) {
        /* the row count is only valid before the results are consumed */
        if (!SQL_SUCCEEDED(SQLRowCount(h, &count)))
            count = 0;
        rc = fetch_results(db, h, fn, ctx, what, cls);
        if (rc == 0 && count > 0)
            rc = (int)count;
    }
    /* A lost connection already freed the prepared handles. */
    if (db->connected) {
        if (direct)
            SQLFreeHandle(SQL_HANDLE_STMT, h);
        else
            SQLFreeStmt(h, SQL_CLOSE);
    }
    return failed ? class_to_rc(db, *cls) : rc;
}

/* The log level of a failed operation: a unique violation is the
 * expected end of a creation race, a missing table is how the schema check
 * finds an empty database, and a lock timeout is how a wait ends. */
static int fail_level(int op, int cls) {
    if ((op == ODBC_LEADER__OP_WAIT || op == ODBC_LEADER__OP_HOLD) &&
        cls == ODBC_LEADER__ERR_TRANSIENT)
        return LOG_DEBUG;
    if (op == ODBC_LEADER__OP_CLAIM && cls == ODBC_LEADER__ERR_UNIQUE)
        return LOG_DEBUG; /* "already claimed" */
    if (op == ODBC_LEADER__OP_SESSION_ID && cls != ODBC_LEADER__ERR_CONNLOST)
        return LOG_INFO; /* the pooler check only: find_pooler */
    if (op == ODBC_LEADER__OP_ATTEMPT && cls == ODBC_LEADER__ERR_TRANSIENT)
        return LOG_INFO; /* a lost race (odbc_leader__db_attempt) */
    if (cls == ODBC_LEADER__ERR_UNIQUE ||
        cls == ODBC_LEADER__ERR_UNDEFINED_TABLE)
        return LOG_INFO;
    return LOG_WARNING;
}

/*
 * Runs operation op: each statement in order, inside one transaction when
 * there are several, the last one's rows to fn. Returns what exec_stmt
 * returns for the last statement, or a negative error with *cls set.
 */
int odbc_leader__db_run_op(struct odbc_leader__db *db, int op,
                           odbc_leader__db_row_fn fn, void *ctx, int *cls) {
    const struct odbc_leader__stmt_list *l = &db->dialect->ops[op];
    int tx = l->n > 1 || db->pooled;
    int rc = 0, moved;
    char what[64] = "";

    *cls = ODBC_LEADER__ERR_OTHER;
    if (!db->connected)
        return ODBC_LEADER_ECONNLOST;
    if (tx) {
        rc = tx_begin(db, cls);
        if (rc < 0)
            return rc;
    }
    for (size_t i = 0; i < l->n && i < ODBC_LEADER__MAX_STMTS; i++) {
        if (l->v[i].step > 0 && db->upgrade_from >= l->v[i].step)
            continue; /* a step of the upgrade these tables are past */
        snprintf(what, sizeof(what), "%s (line %d)", odbc_leader__op_name(op),
                 l->v[i].line);
        rc = exec_stmt(db, op, i, i + 1 == l->n, fn, ctx, what, cls);
        if (rc < 0)
            goto fail;
    }
    if (tx) {
        int c = tx_end(db, 1, cls);

        if (c < 0)
            return c;
    }
    return rc;
fail:
    if (tx && db->connected) {
        int ignored;

        tx_end(db, 0, &ignored);
    }
    moved = odbc_leader__db_session_moved(db);
    if (moved < 0) {
        *cls = moved == ODBC_LEADER_ECONNLOST ? ODBC_LEADER__ERR_CONNLOST
                                              : ODBC_LEADER__ERR_OTHER;
        return moved;
    }
    odbc_leader__logf(db->log, fail_level(op, *cls), "%s failed: %s", what,
                      db->last_error);
    return rc;
}

/* ---- reading a row ---- */

/* Reads column col as text into buf; "" for NULL. */
int odbc_leader__db_col_text(void *stmt, int col, char *buf, size_t len) {
    SQLLEN ind = 0;
    SQLRETURN r = SQLGetData((SQLHSTMT)stmt, (SQLUSMALLINT)col, SQL_C_CHAR, buf,
                             (SQLLEN)len, &ind);

    if (!SQL_SUCCEEDED(r))
        return ODBC_LEADER_EDB;
    if (ind == SQL_NULL_DATA)
        buf[0] = '\0';
    return 0;
}

/* Reads column col as a 64-bit integer into *v; *null is 1 for NULL. */
int odbc_leader__db_col_int_null(void *stmt, int col, int64_t *v, int *null) {
    SQLBIGINT x = 0;
    SQLLEN ind = 0;
    SQLRETURN r = SQLGetData((SQLHSTMT)stmt, (SQLUSMALLINT)col, SQL_C_SBIGINT,
                             &x, sizeof(x), &ind);

    if (!SQL_SUCCEEDED(r))
        return ODBC_LEADER_EDB;
    *null = ind == SQL_NULL_DATA;
    *v = *null ? 0 : (int64_t)x;
    return 0;
}

/* Reads column col as a 64-bit integer; 0 for NULL. */
int odbc_leader__db_col_int(void *stmt, int col, int64_t *v) {
    int null;

    return odbc_leader__db_col_int_null(stmt, col, v, &null);
}

/* Stores v into the integer field at f of size bytes (4 or 8). */
static void store_int(void *f, size_t size, int64_t v) {
    if (size == sizeof(int64_t)) {
        memcpy(f, &v, sizeof(v));
    } else {
        uint32_t x = (uint32_t)v;

        memcpy(f, &x, sizeof(x));
    }
}

/* See db_internal.h. */
int odbc_leader__db_read_row(void *stmt, void *row,
                             const struct odbc_leader__db_col *cols, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char *f = (char *)row + cols[i].off;
        int64_t v = 0;
        int rc = cols[i].text ? odbc_leader__db_col_text(stmt, cols[i].col, f,
                                                         cols[i].size)
                              : odbc_leader__db_col_int(stmt, cols[i].col, &v);

        if (rc < 0)
            return rc;
        if (!cols[i].text)
            store_int(f, cols[i].size, v);
    }
    return 0;
}

/* See db_internal.h. */
int odbc_leader__db_table_row(void *ctx, void *stmt) {
    const struct odbc_leader__db_rows *r = ctx;
    int rc;

    memset(r->row, 0, r->size);
    rc = odbc_leader__db_read_row(stmt, r->row, r->cols, r->ncols);
    if (rc < 0 || r->each == NULL)
        return rc;
    return r->each(r->ctx, r->row);
}

/* See db_internal.h. */
int odbc_leader__db_run_rows(struct odbc_leader__db *db, int op,
                             struct odbc_leader__db_rows *rows) {
    int cls;

    return odbc_leader__db_run_op(db, op, odbc_leader__db_table_row, rows,
                                  &cls);
}

/* See db_internal.h. */
int odbc_leader__db_to_host(void *ctx, const void *row) {
    const struct odbc_leader__db_host *h = ctx;

    if (h->candidate != NULL)
        h->candidate(h->ctx, row);
    else if (h->fire != NULL)
        h->fire(h->ctx, row);
    else if (h->election != NULL)
        h->election(h->ctx, row);
    else if (h->shard != NULL)
        h->shard(h->ctx, row);
    else if (h->job != NULL)
        h->job(h->ctx, row);
    else if (h->schedule != NULL)
        h->schedule(h->ctx, row);
    return 0;
}

/* ---- the connection ---- */

/* Logs a failed connect: a warning for the first failure after a
 * success, or when the driver's message changed; the same message again
 * at debug level (a reconnect loop during an outage would repeat it). */
static void log_connect_failure(struct odbc_leader__db *db) {
    int again = strcmp(db->connect_error, db->last_error) == 0;

    odbc_leader__logf(db->log, again ? LOG_DEBUG : LOG_WARNING,
                      "cannot connect to the database (%s): %s",
                      db->cfg->connect_redacted, db->last_error);
    snprintf(db->connect_error, sizeof(db->connect_error), "%s",
             db->last_error);
}

/* Allocates the environment and connection and connects. Returns 0 or
 * ECONNECT with the driver's first diagnostic in err. */
int odbc_leader__db_open(struct odbc_leader__db *db, char *err, size_t errlen) {
    SQLUINTEGER secs = (SQLUINTEGER)((db->cfg->stmt_timeout_ms + 999) / 1000);
    SQLSMALLINT len = 0;
    SQLRETURN r;

    r = SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &db->env);
    if (!SQL_SUCCEEDED(r))
        goto nomem;
    SQLSetEnvAttr(db->env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0);
    r = SQLAllocHandle(SQL_HANDLE_DBC, db->env, &db->dbc);
    if (!SQL_SUCCEEDED(r))
        goto nomem;
    SQLSetConnectAttr(db->dbc, SQL_ATTR_LOGIN_TIMEOUT,
                      (SQLPOINTER)(uintptr_t)secs, 0);
    r = SQLDriverConnect(
        db->dbc, NULL,
        (SQLCHAR *)(db->connect != NULL ? db->connect : db->cfg->connect),
        SQL_NTS, NULL, 0, NULL, SQL_DRIVER_NOPROMPT);
    if (!SQL_SUCCEEDED(r)) {
        diagnose(db, SQL_HANDLE_DBC, db->dbc, "connect");
        odbc_leader__errf(err, errlen,
                          "cannot connect to the database (%s): %s",
                          db->cfg->connect_redacted, db->last_error);
        log_connect_failure(db);
        return ODBC_LEADER_ECONNECT;
    }
    db->connect_error[0] = '\0';
    db->connected = 1;
    db->stats.connects++;
    db->dbms[0] = '\0';
    SQLGetInfo(db->dbc, SQL_DBMS_NAME, db->dbms, sizeof(db->dbms), &len);
    return 0;
nomem:
    odbc_leader__errf(err, errlen, "cannot allocate ODBC handles");
    return ODBC_LEADER_ENOMEM;
}

void odbc_leader__db_disconnect(struct odbc_leader__db *db) {
    /* the wake-up lock goes with the session, as the servers' do */
    odbc_leader__wakefile_unlock(&db->wake);
    for (int op = 0; op < ODBC_LEADER__OP_COUNT; op++) {
        for (int i = 0; i < ODBC_LEADER__MAX_STMTS; i++) {
            if (db->stmts[op][i] != SQL_NULL_HSTMT)
                SQLFreeHandle(SQL_HANDLE_STMT, db->stmts[op][i]);
            db->stmts[op][i] = SQL_NULL_HSTMT;
        }
    }
    if (db->dbc != SQL_NULL_HDBC) {
        if (db->connected)
            SQLDisconnect(db->dbc);
        SQLFreeHandle(SQL_HANDLE_DBC, db->dbc);
        db->dbc = SQL_NULL_HDBC;
    }
    if (db->env != SQL_NULL_HENV) {
        SQLFreeHandle(SQL_HANDLE_ENV, db->env);
        db->env = SQL_NULL_HENV;
    }
    db->connected = 0;
}
