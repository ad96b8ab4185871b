/* SPDX-License-Identifier: MIT */
/*
 * db.c: the ODBC port of the elector.
 *
 * One connection per handle. At connect the dialect is chosen (once), its
 * on_connect statements run, the schema is checked or created, and the
 * protocol's statements are prepared with their parameters bound to
 * buffers inside struct odbc_leader__db, so an operation is SQLExecute
 * plus fetch. A multi-statement operation runs inside one transaction:
 * the dialect's own BEGIN/COMMIT when it names them, else an ODBC
 * transaction. Driver errors are classified with the dialect's code lists;
 * a unique-key violation during an attempt is retried once, then the
 * current lease is read (the integrity-error retry path).
 *
 * Under LeaderPooler=auto (the default), none or session, every connect
 * also looks for a transaction pooler between the handle and the server
 * (find_pooler): the dialect's session_id read in two transactions of the
 * handle's connection, with two reads on a second connection between
 * them. A transaction pooler found makes an auto handle run as under
 * LeaderPooler=transaction from then on, and fails the connects of a
 * handle that said none or session. So does a statement that fails with
 * SQLSTATE 26000 (a prepared statement gone from the session).
 */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include <build_config.h>

#include <errno.h>
#include <fcntl.h>
#include <odbcinst.h>
#include <sql.h>
#include <sqlext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "db.h"
#include "dialect.h"
#include "log.h"
#include "probe.h"

struct odbc_leader__db {
    const struct odbc_leader__config *cfg; /* borrowed */
    const char *id;                        /* borrowed */
    const struct odbc_leader__log *log;    /* borrowed */
    SQLHENV env;
    SQLHDBC dbc;
    int connected;
    struct odbc_leader__dialect *dialect; /* owned, kept across reconnects */
    char *connect; /* owned: the dialect's @connect-keys in front of the
                      configured string, once the dialect is known; NULL
                      before (the configured string is used) */
    SQLHSTMT stmts[ODBC_LEADER__OP_COUNT]
                  [ODBC_LEADER__MAX_STMTS]; /* prepared */
    char dbms[64];
    char last_error[1024];         /* first diagnostic of the last failure */
    struct odbc_leader__diag diag; /* the same, split, for last_error() */
    int last_timeout; /* the last failure was a client-side timeout (HYT00,
                         HYT01): its outcome is unknown */
    char connect_error[1024]; /* the failed connect logged as a warning
                                 last; "" after a connect succeeded */

    /* transaction pooling (see pooled()) */
    int pooled;      /* LeaderPooler=transaction, or a transaction pooler
                        found under auto */
    int pool_switch; /* found at run time under auto: the next connect
                        switches to it */
    int refused;     /* found although LeaderPooler said none or session:
                        every connect fails with refusal */
    int refusal_logged;
    char refusal[768];
    struct odbc_leader__probe *probe; /* owned: the last check's second
                                         connection (probe.c) */

    /* parameter buffers, bound once per prepared statement */
    SQLCHAR p_ns[ODBC_LEADER__NAME_MAX + 1];
    SQLCHAR p_id[ODBC_LEADER__NAME_MAX + 1];
    SQLCHAR p_to[ODBC_LEADER__NAME_MAX + 1];
    SQLLEN p_to_ind; /* SQL_NTS, or SQL_NULL_DATA for "no handoff" */
    SQLCHAR p_job[ODBC_LEADER__NAME_MAX + 1];
    SQLBIGINT p_term, p_ttl_ms, p_cand_ttl_ms, p_version, p_wait_ms;
    SQLBIGINT p_fire_ms, p_status, p_retention_ms, p_election_retention_ms;
    SQLBIGINT p_seen_term, p_seen_expires_ms; /* attempt's watched row */
    SQLBIGINT p_inc, p_seq, p_shards;         /* sharded groups */
    int64_t upgrade_from;  /* the version upgrade starts from (its @step) */
    const char *p_list[3]; /* borrowed per call: :take, :release, :dead */
    SQLLEN p_list_len[3];
    const char *p_mask[2]; /* borrowed per call: :take_mask, :release_mask */
    SQLLEN p_mask_len[2];
    SQLBIGINT p_dead_inc, p_dead_seq;
    SQLLEN nts;  /* SQL_NTS, the indicator of both strings */
    SQLLEN zero; /* 0, the indicator of every integer */

    struct odbc_leader__db_stats stats;

    /* @wake-file dialects: the follower wake-up through a lock file */
    int wake_fd;    /* DATABASE-odbc-leader-wake, or -1 */
    off_t wake_off; /* the byte of this namespace in it */
    int wake_tried; /* looked for it already (once per handle) */
};

/* The wake-up lock file: beside the database file, this suffix. */
#define WAKE_SUFFIX "-odbc-leader-wake"
/* A follower waiting on the lock file tries again this often. */
#define WAKE_POLL_NS (5 * INT64_C(1000000))

/* Rows handed to a fetch callback; returns 0 or a negative error. */
typedef int (*row_fn)(struct odbc_leader__db *db, SQLHSTMT h, void *ctx);

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
    db->nts = SQL_NTS;
    db->p_to_ind = SQL_NULL_DATA;
    snprintf((char *)db->p_ns, sizeof(db->p_ns), "%s", cfg->ns);
    snprintf((char *)db->p_id, sizeof(db->p_id), "%s", id);
    db->p_ttl_ms = cfg->ttl_ms;
    db->p_cand_ttl_ms = cfg->ttl_ms;
    db->p_retention_ms = cfg->fire_retention_ms;
    db->p_election_retention_ms = cfg->election_retention_ms;
    db->wake_fd = -1;
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
    if (db->wake_fd >= 0)
        close(db->wake_fd);
    free(db);
}

const struct odbc_leader__dialect *
odbc_leader__db_dialect(const struct odbc_leader__db *db) {
    return db->dialect;
}

#ifdef ODBC_LEADER_TEST_HOOKS
void odbc_leader__db_stats(const struct odbc_leader__db *db,
                           struct odbc_leader__db_stats *out) {
    *out = db->stats;
}
#endif

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

/* 1 under transaction pooling (LeaderPooler=transaction, or a
 * transaction pooler found under auto): every operation is a transaction
 * of its own that starts with the dialect's @pooled-prologue, and nothing
 * is kept in the session. */
static int pooled(const struct odbc_leader__db *db) { return db->pooled; }

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
    if (rc == 0 && pooled(db) && db->dialect->pooled_prologue != NULL)
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

/* Returns the buffer address, C type, SQL type and indicator of a named
 * parameter. */
static void param_slot(struct odbc_leader__db *db, int p, SQLPOINTER *ptr,
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
        return;
    case ODBC_LEADER__P_TO:
        *ptr = db->p_to;
        *ctype = SQL_C_CHAR;
        *sqltype = SQL_VARCHAR;
        *size = ODBC_LEADER__NAME_MAX;
        *buflen = ODBC_LEADER__NAME_MAX + 1;
        *ind = &db->p_to_ind;
        return;
    case ODBC_LEADER__P_TERM:
        *ptr = &db->p_term;
        return;
    case ODBC_LEADER__P_TTL_MS:
        *ptr = &db->p_ttl_ms;
        return;
    case ODBC_LEADER__P_CAND_TTL_MS:
        *ptr = &db->p_cand_ttl_ms;
        return;
    case ODBC_LEADER__P_VERSION:
        *ptr = &db->p_version;
        return;
    case ODBC_LEADER__P_WAIT_MS:
        *ptr = &db->p_wait_ms;
        return;
    case ODBC_LEADER__P_FIRE_MS:
        *ptr = &db->p_fire_ms;
        return;
    case ODBC_LEADER__P_STATUS:
        *ptr = &db->p_status;
        return;
    case ODBC_LEADER__P_RETENTION_MS:
        *ptr = &db->p_retention_ms;
        return;
    case ODBC_LEADER__P_SEEN_TERM:
        *ptr = &db->p_seen_term;
        return;
    case ODBC_LEADER__P_SEEN_EXPIRES_MS:
        *ptr = &db->p_seen_expires_ms;
        return;
    case ODBC_LEADER__P_INC:
        *ptr = &db->p_inc;
        return;
    case ODBC_LEADER__P_SEQ:
        *ptr = &db->p_seq;
        return;
    case ODBC_LEADER__P_SHARDS:
        *ptr = &db->p_shards;
        return;
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
        return;
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
        return;
    }
    case ODBC_LEADER__P_DEAD_INC:
        *ptr = &db->p_dead_inc;
        return;
    case ODBC_LEADER__P_DEAD_SEQ:
        *ptr = &db->p_dead_seq;
        return;
    case ODBC_LEADER__P_ELECTION_RETENTION_MS:
        *ptr = &db->p_election_retention_ms;
        return;
    case ODBC_LEADER__P_COUNT:
        break;
    }
    *ptr = &db->p_version;
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
    for (int i = 0; SQL_SUCCEEDED(r) && i < s->nparams; i++) {
        SQLPOINTER ptr;
        SQLSMALLINT ctype, sqltype;
        SQLULEN size;
        SQLLEN buflen, *ind;

        param_slot(db, s->params[i], &ptr, &ctype, &sqltype, &size, &buflen,
                   &ind);
        r = SQLBindParameter(h, (SQLUSMALLINT)(i + 1), SQL_PARAM_INPUT, ctype,
                             sqltype, size, 0, ptr, buflen, ind);
    }
    if (!SQL_SUCCEEDED(r)) {
        *cls = diagnose(db, SQL_HANDLE_STMT, h, what);
        SQLFreeHandle(SQL_HANDLE_STMT, h);
        return class_to_rc(db, *cls);
    }
    *out = h;
    return 0;
}

/* Prepares every statement of op into db->stmts[op]. */
static int prepare_op(struct odbc_leader__db *db, int op, int *cls) {
    const struct odbc_leader__stmt_list *l = &db->dialect->ops[op];

    for (size_t i = 0; i < l->n && i < ODBC_LEADER__MAX_STMTS; i++) {
        int rc = prepare(db, op, &l->v[i], 0, &db->stmts[op][i], cls);

        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Fetches the rows of h into fn. Returns the number of rows or a negative
 * error. */
static int fetch_rows(struct odbc_leader__db *db, SQLHSTMT h, row_fn fn,
                      void *ctx, const char *what, int *cls) {
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
        rc = fn != NULL ? fn(db, h, ctx) : 0;
        if (rc < 0)
            return rc;
        n++;
    }
}

/* Fetches the rows of every result set of h (a statement may be a batch
 * whose first results carry no rows) into fn. Returns the rows fetched or
 * a negative error. */
static int fetch_results(struct odbc_leader__db *db, SQLHSTMT h, row_fn fn,
                         void *ctx, const char *what, int *cls) {
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
 * Executes statement i of op: prepared at connect, or else (statements
 * run once per connection: on_connect, ddl, schema_version) with
 * SQLExecDirect, which is one round trip and avoids a psqlODBC leak of
 * prepared plans whose table is missing. The last statement's rows go to
 * fn. Returns the rows fetched, or the rows affected when there is no
 * result set, or a negative error with *cls set.
 */
static int exec_stmt(struct odbc_leader__db *db, int op, size_t i, int last,
                     row_fn fn, void *ctx, const char *what, int *cls) {
    const struct odbc_leader__stmt *s = &db->dialect->ops[op].v[i];
    SQLHSTMT h = db->stmts[op][i];
    int direct = h == SQL_NULL_HSTMT;
    int failed = 0;
    int rc = 0;
    SQLLEN count = 0;
    SQLRETURN r;

    if (direct) {
        rc = prepare(db, op, s, 1, &h, cls);
        if (rc < 0)
            return rc;
    }
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

static int session_moved(struct odbc_leader__db *db);

/*
 * Runs operation op: each statement in order, inside one transaction when
 * there are several, the last one's rows to fn. Returns what exec_stmt
 * returns for the last statement, or a negative error with *cls set.
 */
static int run_op(struct odbc_leader__db *db, int op, row_fn fn, void *ctx,
                  int *cls) {
    const struct odbc_leader__stmt_list *l = &db->dialect->ops[op];
    int tx = l->n > 1 || pooled(db);
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
    moved = session_moved(db);
    if (moved < 0) {
        *cls = moved == ODBC_LEADER_ECONNLOST ? ODBC_LEADER__ERR_CONNLOST
                                              : ODBC_LEADER__ERR_OTHER;
        return moved;
    }
    odbc_leader__logf(db->log, fail_level(op, *cls), "%s failed: %s", what,
                      db->last_error);
    return rc;
}

/* Reads column col as text into buf; "" for NULL. */
static int get_text(SQLHSTMT h, int col, char *buf, size_t len) {
    SQLLEN ind = 0;
    SQLRETURN r =
        SQLGetData(h, (SQLUSMALLINT)col, SQL_C_CHAR, buf, (SQLLEN)len, &ind);

    if (!SQL_SUCCEEDED(r))
        return ODBC_LEADER_EDB;
    if (ind == SQL_NULL_DATA)
        buf[0] = '\0';
    return 0;
}

/* Reads column col as a 64-bit integer; 0 for NULL. */
static int get_int(SQLHSTMT h, int col, int64_t *v) {
    SQLBIGINT x = 0;
    SQLLEN ind = 0;
    SQLRETURN r =
        SQLGetData(h, (SQLUSMALLINT)col, SQL_C_SBIGINT, &x, sizeof(x), &ind);

    if (!SQL_SUCCEEDED(r))
        return ODBC_LEADER_EDB;
    *v = ind == SQL_NULL_DATA ? 0 : (int64_t)x;
    return 0;
}

/* Reads column col as an integer flag into *v when the result has that
 * column (0 for NULL), else stores -1. */
static int get_optional_flag(SQLHSTMT h, int col, int *v) {
    SQLSMALLINT ncols = 0;
    int64_t x = 0;
    int rc;

    *v = -1;
    if (!SQL_SUCCEEDED(SQLNumResultCols(h, &ncols)) || ncols < col)
        return 0;
    rc = get_int(h, col, &x);
    if (rc == 0)
        *v = x != 0;
    return rc;
}

/* Reads the four columns every lease result starts with: leader_id,
 * term, expires_at_ms, now_ms. */
static int lease_columns(SQLHSTMT h, struct odbc_leader__result *out) {
    int rc = get_text(h, 1, out->leader_id, sizeof(out->leader_id));

    if (rc == 0)
        rc = get_int(h, 2, &out->term);
    if (rc == 0)
        rc = get_int(h, 3, &out->expires_at_ms);
    if (rc == 0)
        rc = get_int(h, 4, &out->now_ms);
    if (rc == 0)
        out->found = 1;
    return rc;
}

/* Row callback of leader: the four lease columns. ctx is a struct
 * odbc_leader__result. */
static int lease_row(struct odbc_leader__db *db, SQLHSTMT h, void *ctx) {
    (void)db;
    return lease_columns(h, ctx);
}

/* Row callback of attempt: the lease columns, then won. */
static int attempt_row(struct odbc_leader__db *db, SQLHSTMT h, void *ctx) {
    struct odbc_leader__result *out = ctx;
    int64_t won = 0;
    int rc = lease_columns(h, out);

    (void)db;
    if (rc == 0)
        rc = get_int(h, 5, &won);
    if (rc == 0)
        rc = get_optional_flag(h, 6, &out->wake_held);
    out->won = won != 0;
    return rc;
}

/* Row callback of renew: the lease columns, then resign_requested and
 * handoff_to. */
static int renew_row(struct odbc_leader__db *db, SQLHSTMT h, void *ctx) {
    struct odbc_leader__result *out = ctx;
    int64_t requested = 0;
    int rc = lease_columns(h, out);

    (void)db;
    if (rc == 0)
        rc = get_int(h, 5, &requested);
    if (rc == 0)
        rc = get_text(h, 6, out->handoff_to, sizeof(out->handoff_to));
    if (rc == 0)
        rc = get_optional_flag(h, 7, &out->wake_held);
    out->resign_requested = requested != 0;
    return rc;
}

/* Row callback of schema_version: ctx is an int64_t, -1 for NULL. */
static int version_row(struct odbc_leader__db *db, SQLHSTMT h, void *ctx) {
    int64_t *v = ctx;
    SQLBIGINT x = 0;
    SQLLEN ind = 0;

    (void)db;
    if (!SQL_SUCCEEDED(SQLGetData(h, 1, SQL_C_SBIGINT, &x, sizeof(x), &ind)))
        return ODBC_LEADER_EDB;
    *v = ind == SQL_NULL_DATA ? -1 : (int64_t)x;
    return 0;
}

/* Reads the schema version: *version is -1 when the table is empty.
 * Returns 0 or a negative error (ENOTABLE when the table is missing). */
static int read_version(struct odbc_leader__db *db, int64_t *version) {
    int cls;
    int rc;

    *version = -1;
    rc = run_op(db, ODBC_LEADER__OP_SCHEMA_VERSION, version_row, version, &cls);
    return rc < 0 ? rc : 0;
}

/* Tries of creating or upgrading the tables while other candidates may do
 * the same: each failed or inconclusive try waits SCHEMA_PAUSE_MS times
 * its number, then reads the version again. */
#define SCHEMA_TRIES 5
#define SCHEMA_PAUSE_MS 50

static int open_connection(struct odbc_leader__db *db, char *err,
                           size_t errlen);

/* After a schema statement whose COMMIT failed (EUNKNOWN: on Galera, a
 * certification conflict with another node creating the same tables),
 * connects again so the next try can read what was committed. Returns 0,
 * or rc (the failure being handled) when rc is another error or the new
 * connection fails. */
static int reopen_after(struct odbc_leader__db *db, int rc) {
    char err[256];
    int cls;

    if (rc != ODBC_LEADER_EUNKNOWN || db->connected)
        return rc;
    if (open_connection(db, err, sizeof(err)) < 0)
        return rc;
    if (db->dialect->ops[ODBC_LEADER__OP_ON_CONNECT].n > 0 && !pooled(db) &&
        run_op(db, ODBC_LEADER__OP_ON_CONNECT, NULL, NULL, &cls) < 0)
        return rc;
    odbc_leader__logf(db->log, LOG_INFO,
                      "schema statement's commit failed; connected again to "
                      "read the schema version");
    return 0;
}

/* Sleeps SCHEMA_PAUSE_MS times try before the next schema try. */
static void schema_pause(int try) {
    struct timespec ts = {0, (long)try * SCHEMA_PAUSE_MS * 1000000L};

    nanosleep(&ts, NULL);
}

/*
 * Upgrades tables found at an earlier schema version `from` with the
 * dialect's upgrade statements (written to bring any earlier version up),
 * in one transaction,
 * when LeaderCreateSchema allows; a failed upgrade is tried once more
 * (another candidate may have been upgrading at the same moment), and the
 * version read afterwards decides. Returns 0 or a negative error with a
 * message in err.
 */
static int upgrade_schema(struct odbc_leader__db *db, int64_t from, char *err,
                          size_t errlen) {
    const char *p = db->cfg->prefix;
    int to = db->dialect->schema_version;
    int64_t version = from;
    int cls;
    int rc = 0;

    if (!db->cfg->create_schema) {
        odbc_leader__errf(err, errlen,
                          "table %sschema holds schema version %lld and this "
                          "build of odbc-leader needs version %d; "
                          "LeaderCreateSchema=no, so upgrade the tables first: "
                          "odbc-leader schema --upgrade (or print the SQL with "
                          "odbc-leader schema --upgrade-sql)",
                          p, (long long)from, to);
        return ODBC_LEADER_ESCHEMA;
    }
    for (int try = 1; try <= SCHEMA_TRIES && version != to; try++) {
        if (try > 1)
            schema_pause(try - 1);
        odbc_leader__logf(db->log, LOG_NOTICE,
                          "upgrading tables %s* from schema version %lld to "
                          "%d",
                          p, (long long)version, to);
        db->upgrade_from = version;
        rc = run_op(db, ODBC_LEADER__OP_UPGRADE, NULL, NULL, &cls);
        if (rc < 0 && !db->connected && reopen_after(db, rc) < 0)
            break;
        rc = read_version(db, &version);
        if (rc < 0)
            break;
    }
    if (rc == 0 && version == to)
        return 0;
    if (rc == 0) {
        odbc_leader__errf(err, errlen,
                          "upgrading tables %s* from schema version %lld to "
                          "%d failed; %sschema holds version %lld: %s",
                          p, (long long)from, to, p, (long long)version,
                          db->last_error);
        return ODBC_LEADER_ESCHEMA;
    }
    odbc_leader__errf(err, errlen,
                      "upgrading tables %s* from schema version %lld to %d "
                      "failed: %s",
                      p, (long long)from, to, db->last_error);
    return rc;
}

/*
 * Runs the DDL and reads the version into *version, again while another
 * candidate creating the tables at the same moment leaves them missing or
 * without their version row (seen on MariaDB with three candidates
 * starting at once). Returns 0 (with *version >= 0) or a negative error
 * with db->last_error naming the DDL's own failure.
 */
static int create_tables(struct odbc_leader__db *db, int64_t *version) {
    char ddl_error[sizeof(db->last_error)] = "";
    int cls;
    int rc = 0;

    for (int try = 1; try <= SCHEMA_TRIES; try++) {
        db->p_version = db->dialect->schema_version;
        ddl_error[0] = '\0';
        rc = run_op(db, ODBC_LEADER__OP_DDL, NULL, NULL, &cls);
        /* Another candidate may have created them at the same moment:
         * the version decides. Otherwise report the DDL's own error. */
        if (rc < 0)
            snprintf(ddl_error, sizeof(ddl_error), "%.900s", db->last_error);
        if (rc < 0 && !db->connected && reopen_after(db, rc) < 0)
            return rc;
        rc = read_version(db, version);
        if (rc == 0 && *version >= 0)
            return 0;
        if (rc < 0 && rc != ODBC_LEADER_ENOTABLE)
            break;
        schema_pause(try);
    }
    if (ddl_error[0] != '\0')
        snprintf(db->last_error, sizeof(db->last_error),
                 "creating the tables failed: %.900s", ddl_error);
    else if (rc == 0)
        snprintf(db->last_error, sizeof(db->last_error),
                 "the tables were created but hold no version row");
    return rc < 0 ? rc : ODBC_LEADER_ENOTABLE;
}

/*
 * Checks the schema version, creating the tables first when they are
 * missing and LeaderCreateSchema allows it. Returns 0 or a negative error
 * with a message in err.
 */
static int ensure_schema(struct odbc_leader__db *db, char *err, size_t errlen) {
    const char *p = db->cfg->prefix;
    int64_t version = -1;
    int rc = read_version(db, &version);

    if (rc < 0 && rc != ODBC_LEADER_ENOTABLE)
        goto fail;
    if (rc == 0 && version >= 0)
        goto check;
    if (!db->cfg->create_schema) {
        odbc_leader__errf(err, errlen,
                          "table %sschema %s and LeaderCreateSchema=no: "
                          "create the tables with the dialect's DDL first",
                          p, rc < 0 ? "is missing" : "is empty");
        return ODBC_LEADER_ENOTABLE;
    }
    odbc_leader__logf(db->log, LOG_NOTICE,
                      "creating tables %slease, %scandidate, %sschema", p, p,
                      p);
    rc = create_tables(db, &version);
    if (rc < 0)
        goto fail;
check:
    if (version >= 1 && version < db->dialect->schema_version &&
        db->dialect->ops[ODBC_LEADER__OP_UPGRADE].n > 0)
        return upgrade_schema(db, version, err, errlen);
    if (version != db->dialect->schema_version) {
        odbc_leader__errf(err, errlen,
                          "table %sschema holds schema version %lld; dialect "
                          "%s (LeaderDialect) is written for version %d only",
                          p, (long long)version, db->dialect->name,
                          db->dialect->schema_version);
        return ODBC_LEADER_ESCHEMA;
    }
    return 0;
fail:
    odbc_leader__errf(err, errlen, "checking table %sschema failed: %s", p,
                      db->last_error);
    return rc;
}

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
static int open_connection(struct odbc_leader__db *db, char *err,
                           size_t errlen) {
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

/* See db.h. A port of its own, connected once and never prepared: the
 * same login timeout, driver messages and redaction as a handle's
 * connect. */
int odbc_leader__db_dbms_name(const struct odbc_leader__config *cfg, char *name,
                              size_t n, char *err, size_t errlen) {
    struct odbc_leader__db *db = NULL;
    int rc = odbc_leader__db_create(&db, cfg, "", NULL);

    if (rc < 0) {
        odbc_leader__errf(err, errlen, "out of memory");
        return rc;
    }
    rc = open_connection(db, err, errlen);
    if (rc == 0)
        snprintf(name, n, "%s", db->dbms);
    odbc_leader__db_destroy(db);
    return rc;
}

/* ---- the follower wake-up through a lock file (@wake-file) ------------- */

/* Copies the value of key Database= of the connection string (braces
 * removed), else of the DSN's odbc.ini section, into buf. Returns 1 when
 * it names a file, else 0. */
static int database_file(const struct odbc_leader__db *db, char *buf,
                         size_t len) {
    const char *s = db->cfg->connect;

    buf[0] = '\0';
    while (s != NULL && *s != '\0') {
        const char *end = strchr(s, ';');
        size_t n = end != NULL ? (size_t)(end - s) : strlen(s);

        if (n > 9 && strncasecmp(s, "Database=", 9) == 0) {
            const char *v = s + 9;
            size_t vn = n - 9;

            if (vn >= 2 && v[0] == '{' && v[vn - 1] == '}') {
                v++;
                vn -= 2;
            }
            snprintf(buf, len, "%.*s", (int)vn, v);
            break;
        }
        s = end != NULL ? end + 1 : NULL;
    }
    if (buf[0] == '\0' && db->cfg->dsn != NULL)
        SQLGetPrivateProfileString(db->cfg->dsn, "Database", "", buf, (int)len,
                                   "odbc.ini");
    return buf[0] != '\0' && strcmp(buf, ":memory:") != 0;
}

/* Opens the wake-up lock file beside the database file, once per handle;
 * without it (no file name, no permission) followers poll. The byte
 * locked is the namespace's FNV-1a hash (below 2^30). */
static void wake_open(struct odbc_leader__db *db) {
    char file[4096], path[4096 + sizeof(WAKE_SUFFIX)];
    uint64_t h = UINT64_C(14695981039346656037);

    if (!db->dialect->wake_file || db->wake_tried)
        return;
    db->wake_tried = 1;
    if (!database_file(db, file, sizeof(file))) {
        odbc_leader__logf(db->log, LOG_INFO,
                          "no database file named: no follower wake-up");
        return;
    }
    snprintf(path, sizeof(path), "%s%s", file, WAKE_SUFFIX);
    db->wake_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (db->wake_fd < 0) {
        odbc_leader__logf(db->log, LOG_INFO,
                          "no follower wake-up: cannot open %s: %s", path,
                          strerror(errno));
        return;
    }
    for (const char *c = db->cfg->ns; *c != '\0'; c++)
        h = (h ^ (unsigned char)*c) * UINT64_C(1099511628211);
    db->wake_off = (off_t)(h % (UINT64_C(1) << 30));
}

/* Takes the namespace's byte of the lock file (type F_RDLCK or F_WRLCK,
 * an open-file-description lock: per handle, and gone when the process
 * is), trying every WAKE_POLL_NS for up to budget_ms. Returns 1 when
 * taken, 0 when the budget ran out, or ODBC_LEADER_EDB. */
static int wake_lock(struct odbc_leader__db *db, short type,
                     int64_t budget_ms) {
    struct flock fl;
    int64_t end = odbc_leader__now_ns(NULL) + budget_ms * INT64_C(1000000);

    memset(&fl, 0, sizeof(fl));
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = db->wake_off;
    fl.l_len = 1;
    for (;;) {
        int64_t left;
        struct timespec ts;

        if (fcntl(db->wake_fd, F_OFD_SETLK, &fl) == 0)
            return 1;
        if (errno != EAGAIN && errno != EACCES)
            return ODBC_LEADER_EDB;
        left = end - odbc_leader__now_ns(NULL);
        if (left <= 0)
            return 0;
        if (left > WAKE_POLL_NS)
            left = WAKE_POLL_NS;
        ts.tv_sec = 0;
        ts.tv_nsec = (long)left;
        nanosleep(&ts, NULL);
    }
}

/* Lets go of the namespace's byte of the lock file. */
static void wake_unlock(struct odbc_leader__db *db) {
    struct flock fl;

    memset(&fl, 0, sizeof(fl));
    fl.l_type = F_UNLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = db->wake_off;
    fl.l_len = 1;
    fcntl(db->wake_fd, F_OFD_SETLK, &fl);
}

/* After an attempt that won or a renewal that held: takes the lock file's
 * byte without waiting and reports it in out->wake_held, as the server
 * dialects' statements do. */
static void wake_take(struct odbc_leader__db *db,
                      struct odbc_leader__result *out) {
    if (db->wake_fd >= 0)
        out->wake_held = wake_lock(db, F_WRLCK, 0) == 1;
}

/* Builds db->connect, the connection string with the dialect's
 * @connect-keys (and, under transaction pooling, its @pooled-connect-keys)
 * in front, once the dialect is known; every later connect uses it.
 * Returns 1 when it built one, 0 when the dialect has no keys (or it was
 * built before), or ENOMEM with a message in err. */
static int build_connect(struct odbc_leader__db *db, char *err, size_t errlen) {
    const char *keys = db->dialect->connect_keys;
    const char *pkeys = pooled(db) ? db->dialect->pooled_keys : NULL;
    size_t n;

    if ((keys == NULL && pkeys == NULL) || db->connect != NULL)
        return 0;
    n = (keys ? strlen(keys) : 0) + (pkeys ? strlen(pkeys) : 0) +
        strlen(db->cfg->connect) + 3;
    db->connect = malloc(n);
    if (db->connect == NULL) {
        odbc_leader__errf(err, errlen, "out of memory");
        return ODBC_LEADER_ENOMEM;
    }
    /* keys only (the connection string may hold a password) */
    snprintf(db->connect, n, "%s%s%s", keys ? keys : "",
             keys && pkeys ? ";" : "", pkeys ? pkeys : "");
    odbc_leader__logf(db->log, LOG_INFO,
                      "connecting again with the dialect's keys %s",
                      db->connect);
    snprintf(db->connect + strlen(db->connect), n - strlen(db->connect), ";%s",
             db->cfg->connect);
    return 1;
}

/* Once the dialect is known: when it has @connect-keys (sqliteodbc's own
 * busy Timeout, say), builds the connection string with them in front and
 * connects again with it. Returns 0 or a negative error with a message in
 * err. */
static int apply_connect_keys(struct odbc_leader__db *db, char *err,
                              size_t errlen) {
    int rc = build_connect(db, err, errlen);

    if (rc <= 0)
        return rc;
    odbc_leader__db_disconnect(db);
    return open_connection(db, err, errlen);
}

/* Logs what transaction pooling changes. */
static void note_pooled(struct odbc_leader__db *db) {
    odbc_leader__logf(db->log, LOG_NOTICE,
                      "transaction pooling: every operation is one "
                      "transaction starting with \"%s\", no session state "
                      "and no on_connect; the follower wake-up is off "
                      "(followers poll at the lease's expiry)",
                      db->dialect->pooled_prologue);
}

/* Under LeaderPooler=transaction, once the dialect is known: it must say
 * how (a @pooled-prologue); logs what changes. Returns 0 or ECONFIG with a
 * message in err. */
static int check_pooled(struct odbc_leader__db *db, char *err, size_t errlen) {
    if (!pooled(db))
        return 0;
    if (db->dialect->pooled_prologue == NULL) {
        odbc_leader__errf(err, errlen,
                          "LeaderPooler=transaction: dialect %s has no "
                          "@pooled-prologue, so it does not support "
                          "transaction pooling (see docs/deployment.md)",
                          db->dialect->name);
        return ODBC_LEADER_ECONFIG;
    }
    note_pooled(db);
    return 0;
}

/* ---- the check for a transaction pooler --------------------------------
 *
 * A pooler in transaction mode (pgbouncer pool_mode=transaction) hands
 * each transaction whichever server session is free, so the session state
 * the handle keeps (psqlODBC's prepared statements, on_connect's
 * settings, the wake-up lock) does not follow it. Without such a pooler,
 * a connection keeps its server session, and two connections open at the
 * same time never share one; a session pooler (pool_mode=session) keeps
 * that too. So the check reads the dialect's session_id (a text naming the
 * server session) on the handle's connection (a1), twice on a second
 * connection opened for it (b1, b2), and on the handle's again (a2), each
 * read a transaction of its own, and finds a transaction pooler when
 * a1 != a2, b1 != b2, or b1 or b2 equals a1. A pooler that reuses the
 * server session freed last (pgbouncer's default, server_round_robin = 0)
 * gives the second connection the handle's session; one that hands them
 * out in turn (server_round_robin = 1) changes the second connection's
 * session between its reads, once two are idle.
 *
 * The second connection runs on a thread of its own (probe.c), and the
 * check waits for it up to LeaderStatementTimeout: a session pooler with
 * no free server makes a new client wait for its query_wait_timeout. When
 * it does not answer in time the check goes on with the handle's two reads
 * alone; the probe stays with the handle until the next check or
 * odbc_leader__db_destroy(), which cancels and joins it. */

#define SID_MAX ODBC_LEADER__PROBE_TEXT

/* Opens the check's second connection (probe.c) and waits for its two
 * reads up to LeaderStatementTimeout. Returns 1 with them in sid, or 0
 * with the reason in note (no thread, the connection or a read failed, no
 * answer in time, or the last check's probe has not finished). */
static int second_session(struct odbc_leader__db *db, char sid[2][SID_MAX],
                          char *note, size_t n) {
    char why[320] = "";
    int ok;

    if (db->probe != NULL) {
        if (!odbc_leader__probe_done(db->probe)) {
            snprintf(note, n,
                     "the second connection of the last check has not "
                     "returned yet");
            return 0;
        }
        odbc_leader__probe_destroy(db->probe);
    }
    db->probe = odbc_leader__probe_start(
        db->connect != NULL ? db->connect : db->cfg->connect,
        db->dialect->ops[ODBC_LEADER__OP_SESSION_ID].v[0].sql,
        db->cfg->stmt_timeout_ms, why, sizeof(why));
    if (db->probe == NULL) {
        snprintf(note, n, "second connection: %s", why);
        return 0;
    }
    ok = odbc_leader__probe_wait(db->probe, db->cfg->stmt_timeout_ms, sid, why,
                                 sizeof(why));
    if (!ok)
        snprintf(note, n, "second connection: %s%s", why,
                 odbc_leader__probe_done(db->probe)
                     ? ""
                     : " (LeaderStatementTimeout)");
    return ok;
}

/* Row callback of session_id: ctx is a char[SID_MAX]. */
static int sid_row(struct odbc_leader__db *db, SQLHSTMT h, void *ctx) {
    (void)db;
    return get_text(h, 1, ctx, SID_MAX);
}

/* Reads session_id on the handle's connection into sid. Returns 0, 1
 * when it failed but the connection stays (the check cannot tell), or a
 * negative error that dropped the connection. */
static int read_sid(struct odbc_leader__db *db, char *sid) {
    int cls;
    int rc;

    sid[0] = '\0';
    rc = run_op(db, ODBC_LEADER__OP_SESSION_ID, sid_row, sid, &cls);
    if (rc < 0 && !db->connected)
        return rc;
    if (rc < 0 || sid[0] == '\0') {
        odbc_leader__logf(db->log, LOG_INFO,
                          "no check for a transaction pooler: session_id "
                          "%s",
                          rc < 0 ? "failed" : "returned nothing");
        return 1;
    }
    return 0;
}

/*
 * Looks for a transaction pooler between the handle's connection and the
 * server (see above). Returns 1 with how it showed in why, 0 when none
 * showed (or the check could not tell), or a negative error that dropped
 * the connection.
 */
static int find_pooler(struct odbc_leader__db *db, char *why, size_t n) {
    char a1[SID_MAX], a2[SID_MAX], b[2][SID_MAX], note[400] = "";
    int second, rc;

    rc = read_sid(db, a1);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    second = second_session(db, b, note, sizeof(note));
    rc = read_sid(db, a2);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (strcmp(a1, a2) != 0) {
        snprintf(why, n,
                 "the server session changed between two transactions of "
                 "one connection (%s, then %s)",
                 a1, a2);
        return 1;
    }
    if (second && strcmp(b[0], b[1]) != 0) {
        snprintf(why, n,
                 "the server session changed between two transactions of "
                 "one connection (a second one: %s, then %s)",
                 b[0], b[1]);
        return 1;
    }
    if (second && (strcmp(b[0], a1) == 0 || strcmp(b[1], a1) == 0)) {
        snprintf(why, n,
                 "a second connection got this connection's server "
                 "session (%s) while this one was open",
                 a1);
        return 1;
    }
    if (second)
        odbc_leader__logf(db->log, LOG_DEBUG,
                          "no transaction pooler: server session %s, a "
                          "second connection's %s",
                          a1, b[0]);
    else
        odbc_leader__logf(db->log, LOG_INFO,
                          "checked for a transaction pooler on this "
                          "connection only (server session %s): %s",
                          a1, note);
    return 0;
}

/* The sticky refusal: every connect of a handle that found a transaction
 * pooler it cannot run through fails with db->refusal, in err at create
 * (the caller shows it), else logged as a warning once, then at debug
 * level. Returns ODBC_LEADER_ECONFIG. */
static int refused(struct odbc_leader__db *db, char *err, size_t errlen) {
    odbc_leader__errf(err, errlen, "%s", db->refusal);
    if (err == NULL) {
        odbc_leader__logf(db->log, db->refusal_logged ? LOG_DEBUG : LOG_WARNING,
                          "%s", db->refusal);
        db->refusal_logged = 1;
    }
    return ODBC_LEADER_ECONFIG;
}

/* Refuses to run: a transaction pooler showed as why, and the handle
 * cannot run through it. Disconnects. Returns ODBC_LEADER_ECONFIG. */
static int refuse(struct odbc_leader__db *db, const char *why, char *err,
                  size_t errlen) {
    const char *mode = odbc_leader__pooler_name(db->cfg->pooler);

    if (db->cfg->pooler != ODBC_LEADER__POOL_AUTO)
        snprintf(db->refusal, sizeof(db->refusal),
                 "LeaderPooler=%s, but %s: a transaction-mode pooler "
                 "(pgbouncer pool_mode=transaction?) is in the way; set "
                 "LeaderPooler=transaction",
                 mode, why);
    else
        snprintf(db->refusal, sizeof(db->refusal),
                 "%s: a transaction-mode pooler (pgbouncer "
                 "pool_mode=transaction?) is in the way, and dialect %s "
                 "has no @pooled-prologue, so it cannot run through it "
                 "(LeaderPooler=transaction; see docs/deployment.md)",
                 why, db->dialect->name);
    db->refused = 1;
    odbc_leader__db_disconnect(db);
    return refused(db, err, errlen);
}

/* Logs the one warning of an auto handle that found a transaction
 * pooler (why: how it showed). */
static void warn_pooled(struct odbc_leader__db *db, const char *why) {
    odbc_leader__logf(db->log, LOG_WARNING,
                      "%s: a transaction-mode pooler (pgbouncer "
                      "pool_mode=transaction?); running as with "
                      "LeaderPooler=transaction; set it to say so",
                      why);
}

/* Makes an auto handle run under transaction pooling, with the warning
 * naming why (none when why is "": the caller warned): the dialect again
 * with its @pooled texts, the connection string with its
 * @pooled-connect-keys. Disconnected or not, nothing is prepared after
 * it; the caller connects. Returns 0 or a negative error with a message
 * in err (ECONFIG, sticky, when the dialect has no @pooled-prologue). */
static int become_pooled(struct odbc_leader__db *db, const char *why, char *err,
                         size_t errlen) {
    struct odbc_leader__dialect_vars vars;
    struct odbc_leader__dialect *d = NULL;
    int rc;

    if (db->dialect->pooled_prologue == NULL)
        return refuse(db, why, err, errlen);
    if (why[0] != '\0')
        warn_pooled(db, why);
    vars.prefix = db->cfg->prefix;
    vars.timeout_ms = db->cfg->stmt_timeout_ms;
    vars.pooled = 1;
    rc = odbc_leader__dialect_load(db->cfg->dialect, db->dbms, &vars, &d, err,
                                   errlen);
    if (rc < 0)
        return rc;
    odbc_leader__db_disconnect(db);
    odbc_leader__dialect_free(db->dialect);
    db->dialect = d;
    db->pooled = 1;
    free(db->connect);
    db->connect = NULL;
    rc = build_connect(db, err, errlen);
    if (rc < 0)
        return rc;
    note_pooled(db);
    return 0;
}

/* At connect, unless the handle runs under transaction pooling already
 * or the dialect has no session_id: looks for a transaction pooler and,
 * when one shows, switches an auto handle to transaction pooling (and
 * connects again) or refuses (none, session). Returns 0 or a negative
 * error with a message in err. */
static int check_pooler(struct odbc_leader__db *db, char *err, size_t errlen) {
    char why[512];
    int rc;

    if (pooled(db) || db->dialect->ops[ODBC_LEADER__OP_SESSION_ID].n == 0)
        return 0;
    if (db->cfg->test_no_pooler_check) {
        odbc_leader__logf(db->log, LOG_NOTICE,
                          "LeaderTestNoPoolerCheck=1: no check for a "
                          "transaction pooler at connect");
        return 0;
    }
    rc = find_pooler(db, why, sizeof(why));
    if (rc <= 0)
        return rc;
    if (db->cfg->pooler != ODBC_LEADER__POOL_AUTO)
        return refuse(db, why, err, errlen);
    rc = become_pooled(db, why, err, errlen);
    if (rc < 0)
        return rc;
    return open_connection(db, err, errlen);
}

/* After a failed statement: SQLSTATE 26000 (a prepared statement the
 * session had is gone: it ran in another server session) shows a
 * transaction pooler the check at connect missed (it may have given the
 * same session every time). An auto handle switches to transaction
 * pooling at its next connect; none and session refuse. Returns
 * ECONNLOST or ECONFIG (disconnected, warning logged), or 0 when the
 * failure is no such thing. */
static int session_moved(struct odbc_leader__db *db) {
    char why[sizeof(db->last_error) + 96];

    if (pooled(db) || db->pool_switch ||
        db->dialect->ops[ODBC_LEADER__OP_SESSION_ID].n == 0 ||
        strcmp(db->diag.sqlstate, "26000") != 0)
        return 0;
    snprintf(why, sizeof(why),
             "a statement prepared in this connection's server session was "
             "not there (%s)",
             db->last_error);
    if (db->cfg->pooler != ODBC_LEADER__POOL_AUTO ||
        db->dialect->pooled_prologue == NULL)
        return refuse(db, why, NULL, 0);
    warn_pooled(db, why);
    db->pool_switch = 1;
    odbc_leader__db_disconnect(db);
    return ODBC_LEADER_ECONNLOST;
}

int odbc_leader__db_connect(struct odbc_leader__db *db, char *err,
                            size_t errlen) {
    static const int runtime_ops[] = {
        ODBC_LEADER__OP_ATTEMPT,        ODBC_LEADER__OP_RENEW,
        ODBC_LEADER__OP_RESIGN,         ODBC_LEADER__OP_UNREGISTER,
        ODBC_LEADER__OP_LEADER,         ODBC_LEADER__OP_CANDIDATES,
        ODBC_LEADER__OP_REQUEST_RESIGN, ODBC_LEADER__OP_RELEASE,
        ODBC_LEADER__OP_WAIT,           ODBC_LEADER__OP_HOLD,
        ODBC_LEADER__OP_CLAIM,          ODBC_LEADER__OP_FINISH,
        ODBC_LEADER__OP_FIRE,           ODBC_LEADER__OP_FIRES,
        ODBC_LEADER__OP_FIRE_GC,
    };
    struct odbc_leader__dialect_vars vars;
    int cls;
    int rc;

    if (db->connected)
        return 0;
    if (db->refused)
        return refused(db, err, errlen);
    if (db->pool_switch) {
        /* a 26000 under auto: session_moved() logged why */
        rc = become_pooled(db, "", err, errlen);
        if (rc < 0)
            goto fail;
        db->pool_switch = 0;
    }
    rc = open_connection(db, err, errlen);
    if (rc < 0)
        goto fail;
    if (db->dialect == NULL) {
        vars.prefix = db->cfg->prefix;
        vars.timeout_ms = db->cfg->stmt_timeout_ms;
        vars.pooled = pooled(db);
        rc = odbc_leader__dialect_load(db->cfg->dialect, db->dbms, &vars,
                                       &db->dialect, err, errlen);
        if (rc < 0)
            goto fail;
        odbc_leader__logf(db->log, LOG_INFO, "database %s, dialect %s",
                          db->dbms, db->dialect->name);
        rc = check_pooled(db, err, errlen);
        if (rc < 0)
            goto fail;
        rc = apply_connect_keys(db, err, errlen);
        if (rc < 0)
            goto fail;
    }
    rc = check_pooler(db, err, errlen);
    if (rc < 0)
        goto fail;
    wake_open(db);
    if (db->dialect->ops[ODBC_LEADER__OP_ON_CONNECT].n > 0 && !pooled(db)) {
        rc = run_op(db, ODBC_LEADER__OP_ON_CONNECT, NULL, NULL, &cls);
        if (rc < 0) {
            odbc_leader__errf(err, errlen, "on_connect statement failed: %s",
                              db->last_error);
            goto fail;
        }
    }
    rc = ensure_schema(db, err, errlen);
    if (rc < 0)
        goto fail;
    for (size_t i = 0; i < sizeof(runtime_ops) / sizeof(runtime_ops[0]); i++) {
        rc = prepare_op(db, runtime_ops[i], &cls);
        if (rc < 0) {
            odbc_leader__errf(err, errlen, "preparing %s failed: %s",
                              odbc_leader__op_name(runtime_ops[i]),
                              db->last_error);
            goto fail;
        }
    }
    return 0;
fail:
    odbc_leader__db_disconnect(db);
    return rc;
}

void odbc_leader__db_disconnect(struct odbc_leader__db *db) {
    /* the wake-up lock goes with the session, as the servers' do */
    if (db->wake_fd >= 0)
        wake_unlock(db);
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

int odbc_leader__db_attempt(struct odbc_leader__db *db, int64_t seen_term,
                            int64_t seen_expires_ms,
                            struct odbc_leader__result *out) {
    int cls;
    int rc;

    memset(out, 0, sizeof(*out));
    db->p_seen_term = seen_term;
    db->p_seen_expires_ms = seen_expires_ms;
    rc = run_op(db, ODBC_LEADER__OP_ATTEMPT, attempt_row, out, &cls);
    if (rc < 0 && cls == ODBC_LEADER__ERR_UNIQUE) {
        /* Another candidate created the first lease row at the same
         * moment: retry once, then settle for reading who leads. */
        odbc_leader__logf(db->log, LOG_INFO,
                          "unique violation creating the lease row of %s: "
                          "retrying once",
                          db->cfg->ns);
        db->stats.retries++;
        memset(out, 0, sizeof(*out));
        rc = run_op(db, ODBC_LEADER__OP_ATTEMPT, attempt_row, out, &cls);
        if (rc < 0 && cls == ODBC_LEADER__ERR_UNIQUE) {
            memset(out, 0, sizeof(*out));
            rc = run_op(db, ODBC_LEADER__OP_LEADER, lease_row, out, &cls);
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
    rc = run_op(db, ODBC_LEADER__OP_RENEW, renew_row, out, &cls);
    if (rc >= 0 && out->found)
        wake_take(db, out);
    return rc < 0 ? rc : 0;
}

int odbc_leader__db_resign(struct odbc_leader__db *db, int64_t term) {
    int cls;
    int rc;

    db->p_term = term;
    rc = run_op(db, ODBC_LEADER__OP_RESIGN, NULL, NULL, &cls);
    return rc < 0 ? rc : rc > 0;
}

int odbc_leader__db_unregister(struct odbc_leader__db *db) {
    int cls;
    int rc = run_op(db, ODBC_LEADER__OP_UNREGISTER, NULL, NULL, &cls);

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
    rc = run_op(db, ODBC_LEADER__OP_REQUEST_RESIGN, NULL, NULL, &cls);
    return rc < 0 ? rc : rc > 0;
}

int odbc_leader__db_read_lease(struct odbc_leader__db *db,
                               struct odbc_leader__result *out) {
    int cls;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = run_op(db, ODBC_LEADER__OP_LEADER, lease_row, out, &cls);
    return rc < 0 ? rc : 0;
}

int odbc_leader__db_has_wait(const struct odbc_leader__db *db) {
    if (pooled(db)) /* session locks do not survive transaction pooling */
        return 0;
    return db->wake_fd >= 0 ||
           (db->dialect != NULL &&
            db->dialect->ops[ODBC_LEADER__OP_WAIT].n > 0 &&
            db->dialect->ops[ODBC_LEADER__OP_RELEASE].n > 0);
}

int odbc_leader__db_release(struct odbc_leader__db *db) {
    int cls;
    int rc;

    if (db->wake_fd >= 0) {
        wake_unlock(db);
        return 0;
    }
    if (!odbc_leader__db_has_wait(db))
        return 0;
    rc = run_op(db, ODBC_LEADER__OP_RELEASE, NULL, NULL, &cls);
    return rc < 0 ? rc : 0;
}

/* Row callback of hold and wait: the one flag column. */
static int flag_row(struct odbc_leader__db *db, SQLHSTMT h, void *ctx) {
    int64_t *flag = ctx;

    (void)db;
    return get_int(h, 1, flag);
}

/* Runs hold or wait with a budget of budget_ms. Returns the flag the
 * statement reports (1 or 0), 0 when it failed with a transient error (a
 * lock timeout: its budget ran out), or a negative error. */
static int run_flag_op(struct odbc_leader__db *db, int op, int64_t budget_ms) {
    int64_t flag = 0;
    int cls;
    int rc;

    db->p_wait_ms = budget_ms;
    rc = run_op(db, op, flag_row, &flag, &cls);
    if (rc < 0 && cls == ODBC_LEADER__ERR_TRANSIENT &&
        rc != ODBC_LEADER_EUNKNOWN)
        return 0;
    if (rc < 0)
        return rc;
    return flag != 0;
}

int odbc_leader__db_hold(struct odbc_leader__db *db, int64_t budget_ms) {
    if (db->wake_fd >= 0)
        return wake_lock(db, F_WRLCK, budget_ms);
    if (!odbc_leader__db_has_wait(db) ||
        db->dialect->ops[ODBC_LEADER__OP_HOLD].n == 0)
        return 0;
    return run_flag_op(db, ODBC_LEADER__OP_HOLD, budget_ms);
}

int odbc_leader__db_wait(struct odbc_leader__db *db, int64_t budget_ms) {
    int rc;

    if (db->wake_fd >= 0) {
        /* free when no leader holds it exclusively; let go at once */
        rc = wake_lock(db, F_RDLCK, budget_ms);
        if (rc == 1)
            wake_unlock(db);
        return rc;
    }
    if (!odbc_leader__db_has_wait(db))
        /* a handle that turned to transaction pooling at run time: no
         * wake-up; leader.c turns the elector's waits off after the tick */
        return pooled(db) ? 0 : ODBC_LEADER_EINVAL;
    return run_flag_op(db, ODBC_LEADER__OP_WAIT, budget_ms);
}

struct candidate_ctx {
    odbc_leader_candidate_fn fn;
    void *ctx;
};

/* Row callback of candidates: candidate_id, heartbeat_at_ms,
 * expires_at_ms, now_ms. */
static int candidate_row(struct odbc_leader__db *db, SQLHSTMT h, void *ctx) {
    struct candidate_ctx *c = ctx;
    struct odbc_leader_candidate cand;
    int rc;

    (void)db;
    memset(&cand, 0, sizeof(cand));
    rc = get_text(h, 1, cand.id, sizeof(cand.id));
    if (rc == 0)
        rc = get_int(h, 2, &cand.heartbeat_at_ms);
    if (rc == 0)
        rc = get_int(h, 3, &cand.expires_at_ms);
    if (rc == 0)
        rc = get_int(h, 4, &cand.db_now_ms);
    if (rc == 0 && c->fn != NULL)
        c->fn(c->ctx, &cand);
    return rc;
}

int odbc_leader__db_candidates(struct odbc_leader__db *db,
                               odbc_leader_candidate_fn fn, void *ctx) {
    struct candidate_ctx c = {fn, ctx};
    int cls;

    return run_op(db, ODBC_LEADER__OP_CANDIDATES, candidate_row, &c, &cls);
}

/* ---- the fire ledger ----------------------------------------------------- */

int odbc_leader__db_has_ledger(const struct odbc_leader__db *db) {
    return db->dialect != NULL && db->dialect->ops[ODBC_LEADER__OP_CLAIM].n > 0;
}

/* Sets the :job and :fire_ms parameters. */
static void set_fire(struct odbc_leader__db *db, const char *job,
                     int64_t fire_ms) {
    snprintf((char *)db->p_job, sizeof(db->p_job), "%s", job);
    db->p_fire_ms = fire_ms;
}

/* After a claim that inserted nothing: reads the lease to tell a fire older
 * than the retention (this handle still holds term) from a lost term.
 * Returns ODBC_LEADER_EFIREAGE, ODBC_LEADER_ENOTLEADER or a negative
 * error. */
static int why_not_claimed(struct odbc_leader__db *db, int64_t term) {
    struct odbc_leader__result res;
    int rc = odbc_leader__db_read_lease(db, &res);

    if (rc < 0)
        return rc;
    if (res.found && res.term == term && strcmp(res.leader_id, db->id) == 0 &&
        res.expires_at_ms > res.now_ms)
        return ODBC_LEADER_EFIREAGE;
    return ODBC_LEADER_ENOTLEADER;
}

int odbc_leader__db_claim(struct odbc_leader__db *db, int64_t term,
                          const char *job, int64_t fire_ms) {
    int cls;
    int rc;

    if (!odbc_leader__db_has_ledger(db))
        return ODBC_LEADER_ENOLEDGER;
    db->p_term = term;
    set_fire(db, job, fire_ms);
    rc = run_op(db, ODBC_LEADER__OP_CLAIM, NULL, NULL, &cls);
    if (rc < 0 && cls == ODBC_LEADER__ERR_UNIQUE && rc != ODBC_LEADER_EUNKNOWN)
        return 0; /* the normal "already claimed" */
    if (rc < 0)
        return rc;
    return rc > 0 ? 1 : why_not_claimed(db, term);
}

/* See db.h. */
int odbc_leader__db_claim_retryable(const struct odbc_leader__db *db, int rc) {
    return rc == ODBC_LEADER_ECONNLOST || rc == ODBC_LEADER_EUNKNOWN ||
           (rc == ODBC_LEADER_EDB &&
            db->diag.errclass == ODBC_LEADER__ERR_TRANSIENT);
}

/* See db.h. */
int odbc_leader__db_claim_again(struct odbc_leader__db *db, int64_t term,
                                const char *job, int64_t fire_ms, int first) {
    struct odbc_leader__diag d = db->diag;
    struct odbc_leader_fire f;
    int rc;

    odbc_leader__logf(db->log, LOG_INFO,
                      "claim of %s at %lld failed (%s); trying once more", job,
                      (long long)fire_ms, odbc_leader_strerror(first));
    rc = odbc_leader__db_claim(db, term, job, fire_ms);
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

/* Reads column col as a 64-bit integer into *v; *null is 1 for NULL. */
static int get_int_null(SQLHSTMT h, int col, int64_t *v, int *null) {
    SQLBIGINT x = 0;
    SQLLEN ind = 0;
    SQLRETURN r =
        SQLGetData(h, (SQLUSMALLINT)col, SQL_C_SBIGINT, &x, sizeof(x), &ind);

    if (!SQL_SUCCEEDED(r))
        return ODBC_LEADER_EDB;
    *null = ind == SQL_NULL_DATA;
    *v = *null ? 0 : (int64_t)x;
    return 0;
}

struct fire_ctx {
    odbc_leader_fire_fn fn; /* may be NULL */
    void *ctx;
    struct odbc_leader_fire last; /* the last row read */
};

/* Row callback of fire and fires: job, fire_ms, term, claimed_by,
 * claimed_at_ms, finished_at_ms, status, now_ms. ctx is a struct
 * fire_ctx. */
static int fire_row(struct odbc_leader__db *db, SQLHSTMT h, void *ctx) {
    struct fire_ctx *c = ctx;
    struct odbc_leader_fire *f = &c->last;
    int64_t status = 0;
    int null = 0;
    int rc;

    (void)db;
    memset(f, 0, sizeof(*f));
    rc = get_text(h, 1, f->job, sizeof(f->job));
    if (rc == 0)
        rc = get_int(h, 2, &f->fire_ms);
    if (rc == 0)
        rc = get_int(h, 3, &f->term);
    if (rc == 0)
        rc = get_text(h, 4, f->claimed_by, sizeof(f->claimed_by));
    if (rc == 0)
        rc = get_int(h, 5, &f->claimed_at_ms);
    if (rc == 0)
        rc = get_int(h, 6, &f->finished_at_ms);
    if (rc == 0)
        rc = get_int_null(h, 7, &status, &null);
    if (rc == 0)
        rc = get_int(h, 8, &f->db_now_ms);
    f->status = (int)status;
    if (rc == 0 && c->fn != NULL)
        c->fn(c->ctx, f);
    return rc;
}

int odbc_leader__db_fire(struct odbc_leader__db *db, const char *job,
                         int64_t fire_ms, struct odbc_leader_fire *out) {
    struct fire_ctx c;
    int cls;
    int rc;

    memset(&c, 0, sizeof(c));
    memset(out, 0, sizeof(*out));
    if (!odbc_leader__db_has_ledger(db))
        return ODBC_LEADER_ENOLEDGER;
    set_fire(db, job, fire_ms);
    rc = run_op(db, ODBC_LEADER__OP_FIRE, fire_row, &c, &cls);
    if (rc <= 0)
        return rc;
    *out = c.last;
    return 1;
}

int odbc_leader__db_finish(struct odbc_leader__db *db, const char *job,
                           int64_t fire_ms, int status) {
    struct odbc_leader_fire f;
    int cls;
    int rc;

    if (!odbc_leader__db_has_ledger(db))
        return ODBC_LEADER_ENOLEDGER;
    set_fire(db, job, fire_ms);
    db->p_status = status;
    rc = run_op(db, ODBC_LEADER__OP_FINISH, NULL, NULL, &cls);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    /* nothing changed: finished before (by us), or not ours */
    rc = odbc_leader__db_fire(db, job, fire_ms, &f);
    if (rc < 0)
        return rc;
    if (rc == 1 && strcmp(f.claimed_by, db->id) == 0 && f.finished_at_ms != 0)
        return 0;
    return ODBC_LEADER_ENOFIRE;
}

int odbc_leader__db_fires(struct odbc_leader__db *db, const char *job,
                          odbc_leader_fire_fn fn, void *ctx) {
    struct fire_ctx c;
    int cls;

    memset(&c, 0, sizeof(c));
    c.fn = fn;
    c.ctx = ctx;
    if (!odbc_leader__db_has_ledger(db))
        return ODBC_LEADER_ENOLEDGER;
    set_fire(db, job != NULL ? job : "", 0);
    return run_op(db, ODBC_LEADER__OP_FIRES, fire_row, &c, &cls);
}

int odbc_leader__db_fire_gc(struct odbc_leader__db *db) {
    int cls;

    if (!odbc_leader__db_has_ledger(db))
        return 0;
    return run_op(db, ODBC_LEADER__OP_FIRE_GC, NULL, NULL, &cls);
}

/* ---- the election log --------------------------------------------------- */

int odbc_leader__db_has_elections(const struct odbc_leader__db *db) {
    return db->dialect != NULL &&
           db->dialect->ops[ODBC_LEADER__OP_ELECTIONS].n > 0;
}

struct election_ctx {
    odbc_leader_election_fn fn;
    void *ctx;
};

/* Row callback of elections: term, leader_id, started_at_ms, ended_at_ms,
 * ended_how, handed_to, now_ms. ctx is a struct election_ctx. */
static int election_row(struct odbc_leader__db *db, SQLHSTMT h, void *ctx) {
    struct election_ctx *c = ctx;
    struct odbc_leader_election e;
    int rc;

    (void)db;
    memset(&e, 0, sizeof(e));
    rc = get_int(h, 1, &e.term);
    if (rc == 0)
        rc = get_text(h, 2, e.leader_id, sizeof(e.leader_id));
    if (rc == 0)
        rc = get_int(h, 3, &e.started_at_ms);
    if (rc == 0)
        rc = get_int(h, 4, &e.ended_at_ms);
    if (rc == 0)
        rc = get_text(h, 5, e.ended_how, sizeof(e.ended_how));
    if (rc == 0)
        rc = get_text(h, 6, e.handed_to, sizeof(e.handed_to));
    if (rc == 0)
        rc = get_int(h, 7, &e.db_now_ms);
    if (rc == 0 && c->fn != NULL)
        c->fn(c->ctx, &e);
    return rc;
}

int odbc_leader__db_elections(struct odbc_leader__db *db,
                              odbc_leader_election_fn fn, void *ctx) {
    struct election_ctx c = {fn, ctx};
    int cls;

    if (!odbc_leader__db_has_elections(db))
        return ODBC_LEADER_ENOELECTIONS;
    return run_op(db, ODBC_LEADER__OP_ELECTIONS, election_row, &c, &cls);
}

int odbc_leader__db_election_gc(struct odbc_leader__db *db) {
    int cls;

    if (!odbc_leader__db_has_elections(db))
        return 0;
    return run_op(db, ODBC_LEADER__OP_ELECTION_GC, NULL, NULL, &cls);
}

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

/* ---- sharded groups: the statements db_group.c runs ---- */

const struct odbc_leader__config *
odbc_leader__db_config(const struct odbc_leader__db *db) {
    return db->cfg;
}

const struct odbc_leader__log *
odbc_leader__db_log(const struct odbc_leader__db *db) {
    return db->log;
}

int odbc_leader__db_has_group(const struct odbc_leader__db *db) {
    return db->dialect != NULL &&
           db->dialect->ops[ODBC_LEADER__OP_GROUP_TICK].n > 0;
}

void odbc_leader__db_set_ns(struct odbc_leader__db *db, const char *ns) {
    snprintf((char *)db->p_ns, sizeof(db->p_ns), "%s", ns);
}

/* Hands each row to the caller's callback with the statement handle as an
 * opaque pointer (odbc_leader__db_col_*() read it). */
struct group_rows {
    odbc_leader__db_row_fn fn;
    void *ctx;
};

static int group_row(struct odbc_leader__db *db, SQLHSTMT h, void *ctx) {
    const struct group_rows *g = ctx;

    (void)db;
    return g->fn(g->ctx, (void *)h);
}

int odbc_leader__db_group_op(struct odbc_leader__db *db, int op,
                             const struct odbc_leader__group_args *a,
                             odbc_leader__db_row_fn fn, void *ctx) {
    struct group_rows g = {fn, ctx};
    int cls, rc;

    if (!odbc_leader__db_has_group(db))
        return ODBC_LEADER_EDIALECT;
    db->p_inc = a->inc;
    db->p_seq = a->seq;
    db->p_shards = a->shards;
    db->p_list[0] = a->take;
    db->p_list[1] = a->release;
    db->p_list[2] = a->dead;
    db->p_mask[0] = a->take_mask;
    db->p_mask[1] = a->release_mask;
    db->p_dead_inc = a->dead_inc;
    db->p_dead_seq = a->dead_seq;
    rc = run_op(db, op, fn != NULL ? group_row : NULL, &g, &cls);
    db->p_list[0] = db->p_list[1] = db->p_list[2] = NULL;
    db->p_mask[0] = db->p_mask[1] = NULL;
    return rc;
}

int odbc_leader__db_col_int(void *stmt, int col, int64_t *v) {
    return get_int((SQLHSTMT)stmt, col, v);
}

int odbc_leader__db_col_text(void *stmt, int col, char *buf, size_t len) {
    return get_text((SQLHSTMT)stmt, col, buf, len);
}
