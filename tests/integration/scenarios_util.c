/* SPDX-License-Identifier: MIT */
/*
 * scenarios_util.c: the helpers the scenarios share (scenarios.h): the
 * clock and names, configs and handles made from OL_CONNECT and
 * OL_LEADER_EXTRA, a raw ODBC connection for inspecting and staging rows,
 * group members ticked together, waiting until a racer is blocked on a
 * lock, port handles (db.h), and the reader of the election log.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <sql.h>
#include <sqlext.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "db.h"
#include "log.h"
#include "scenarios.h"

static const char *base_connect(void) {
    const char *s = getenv("OL_CONNECT");

    return s != NULL ? s : "";
}

int is_kind(const char *kind) {
    const char *k = getenv("OL_KIND");

    return k != NULL && strcmp(k, kind) == 0;
}

/* Milliseconds on the monotonic clock. */
int64_t mono_ms(void) {
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sleep_ms(int64_t ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* A config string: the base plus the given Leader* settings. */
char *config(const char *fmt, ...) {
    static const size_t cap = 4096;
    char *s = test_malloc(cap);
    const char *extra = getenv("OL_LEADER_EXTRA");
    size_t n =
        (size_t)snprintf(s, cap, "%s;%s%s", base_connect(),
                         extra != NULL ? extra : "", extra != NULL ? ";" : "");
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(s + n, cap - n, fmt, ap);
    va_end(ap);
    return s;
}

/* A namespace unique to this run and scenario. */
void ns_name(char *buf, size_t len, const char *scenario) {
    snprintf(buf, len, "%s-%ld", scenario, (long)getpid());
}

/* Log callback when OL_DEBUG is set: every line to stderr. */
void debug_log(void *ctx, int level, const char *msg) {
    (void)ctx;
    if (level <= atoi(getenv("OL_DEBUG")))
        fprintf(stderr, "  [log %d] %s\n", level, msg);
}

/* Creates a handle or fails the test with the error message. */
odbc_leader_t *make(const char *cfg) {
    char err[512] = "";
    odbc_leader_t *h = NULL;
    struct odbc_leader_callbacks cb = {0};
    int rc;

    cb.struct_size = sizeof(cb);
    cb.log = debug_log;
    rc = odbc_leader_create(&h, cfg, getenv("OL_DEBUG") != NULL ? &cb : NULL,
                            err, sizeof(err));

    if (rc != 0)
        fail_msg("odbc_leader_create: %s (%s)", err, odbc_leader_strerror(rc));
    return h;
}

odbc_leader_t *make_ns(const char *ns, const char *extra) {
    char *cfg = config("LeaderNamespace=%s;%s", ns, extra);
    odbc_leader_t *h = make(cfg);

    test_free(cfg);
    return h;
}

/* ---- a raw ODBC connection for inspecting and staging rows ---------- */

void raw_open(struct raw *r) {
    SQLRETURN rc;

    SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &r->env);
    SQLSetEnvAttr(r->env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0);
    SQLAllocHandle(SQL_HANDLE_DBC, r->env, &r->dbc);
    rc = SQLDriverConnect(r->dbc, NULL, (SQLCHAR *)base_connect(), SQL_NTS,
                          NULL, 0, NULL, SQL_DRIVER_NOPROMPT);
    assert_true(SQL_SUCCEEDED(rc));
}

void raw_close(struct raw *r) {
    SQLDisconnect(r->dbc);
    SQLFreeHandle(SQL_HANDLE_DBC, r->dbc);
    SQLFreeHandle(SQL_HANDLE_ENV, r->env);
}

/* Runs sql; returns 1 when it succeeded, 0 when it failed. When the
 * statement returns a row, its first column goes to *first (if given). */
int raw_exec(struct raw *r, const char *sql, int64_t *first) {
    SQLHSTMT h;
    SQLRETURN rc;
    SQLSMALLINT ncols = 0;
    int ok;

    SQLAllocHandle(SQL_HANDLE_STMT, r->dbc, &h);
    rc = SQLExecDirect(h, (SQLCHAR *)sql, SQL_NTS);
    ok = SQL_SUCCEEDED(rc) || rc == SQL_NO_DATA;
    if (ok && first != NULL && SQL_SUCCEEDED(SQLNumResultCols(h, &ncols)) &&
        ncols > 0 && SQL_SUCCEEDED(SQLFetch(h))) {
        SQLBIGINT v = 0;
        SQLLEN ind = 0;

        SQLGetData(h, 1, SQL_C_SBIGINT, &v, sizeof(v), &ind);
        *first = v;
    }
    SQLFreeHandle(SQL_HANDLE_STMT, h);
    return ok;
}

int table_exists(const char *table) {
    struct raw r;
    char sql[256];
    int ok;

    raw_open(&r);
    snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM %s", table);
    ok = raw_exec(&r, sql, NULL);
    raw_close(&r);
    return ok;
}

/* Creates a group member (LeaderShards in extra) or fails the test. */
odbc_leader_group_t *make_member(const char *grp, const char *id,
                                 const char *extra) {
    char *cfg = config("LeaderNamespace=%s;LeaderId=%s;%s", grp, id, extra);
    char err[512] = "";
    odbc_leader_group_t *g = NULL;
    int rc = odbc_leader_group_create(&g, cfg, NULL, err, sizeof(err));

    if (rc != 0)
        fail_msg("odbc_leader_group_create: %s (%s)", err,
                 odbc_leader_strerror(rc));
    test_free(cfg);
    return g;
}

/* Shards of g led now. */
uint32_t led_by(const odbc_leader_group_t *g) {
    return odbc_leader_group_led(g);
}

/* Ticks every member every step_ms until done(ctx) or timeout_ms. Returns
 * 1 when done. */
int tick_members(odbc_leader_group_t **m, int n, int64_t step_ms,
                 int64_t timeout_ms,
                 int (*done)(odbc_leader_group_t **m, int n)) {
    int64_t end = mono_ms() + timeout_ms;

    while (mono_ms() < end) {
        for (int i = 0; i < n; i++) {
            if (m[i] != NULL)
                odbc_leader_group_tick(m[i], NULL);
        }
        if (done(m, n))
            return 1;
        sleep_ms(step_ms);
    }
    return 0;
}

/* Every shard led by one of the members (an uneven split counts). */
int all_led(odbc_leader_group_t **m, int n) {
    uint32_t total = 0;

    for (int i = 0; i < n; i++)
        total += led_by(m[i]);
    return total == odbc_leader_group_shards(m[0]);
}

/* The statement that counts sessions waiting on a row or key lock, or
 * NULL where the database cannot show it (SQLite). */
const char *lock_wait_probe(void) {
    if (is_kind("postgresql"))
        return "SELECT COUNT(*) FROM pg_stat_activity WHERE "
               "wait_event_type = 'Lock' AND datname = current_database()";
    if (is_kind("mariadb"))
        return "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE "
               "trx_state = 'LOCK WAIT'";
    return NULL;
}

/*
 * Waits, after a racer thread started, until probe_sql (a count of
 * sessions waiting on a lock) shows it waiting, or its done flag is set
 * (it returned without waiting); where the database cannot show waits
 * (probe_sql NULL, SQLite), pauses 300 ms instead. Returns the count
 * seen, 1 after the pause. The loop's bound is a liveness bound only
 * (valgrind on a loaded machine is slow).
 */
int64_t await_waiter(struct raw *probe, const char *probe_sql,
                     atomic_int *done) {
    int64_t waiting = 0;

    if (probe_sql == NULL) {
        sleep_ms(300);
        return 1;
    }
    for (int i = 0; i < 6000 && waiting == 0 && !atomic_load(done); i++) {
        sleep_ms(10);
        raw_exec(probe, probe_sql, &waiting);
    }
    return waiting;
}

/* Opens a port handle for id on namespace ns with extra settings; fails
 * the test when it cannot connect. cfg is filled and owned by the caller. */
struct odbc_leader__db *port_open(struct odbc_leader__config *cfg,
                                  const char *ns, const char *id,
                                  const char *extra) {
    static const struct odbc_leader__log log = {NULL, NULL};
    struct odbc_leader__db *db = NULL;
    char err[256] = "";
    char *s = config("LeaderNamespace=%s;%s", ns, extra);

    memset(cfg, 0, sizeof(*cfg));
    assert_int_equal(odbc_leader__config_parse(s, cfg, err, sizeof(err)), 0);
    test_free(s);
    assert_int_equal(odbc_leader__db_create(&db, cfg, id, &log), 0);
    if (odbc_leader__db_connect(db, err, sizeof(err)) != 0)
        fail_msg("connect: %s", err);
    return db;
}

/* Closes a handle of port_open and frees its config. */
void port_close(struct odbc_leader__db *db, struct odbc_leader__config *cfg) {
    odbc_leader__db_destroy(db);
    odbc_leader__config_free(cfg);
}

static void elog_row(void *ctx, const struct odbc_leader_election *e) {
    struct elog *l = ctx;

    if (l->n < ELOG_MAX)
        l->e[l->n] = *e;
    l->n++;
}

/* Reads h's namespace's election log into *l and checks what holds for
 * every log: the count returned is the rows seen; terms ascend; a term
 * starts no later than the next one and has ended, at or after its start
 * and no later than that start; an open term has ended_how ""; handed_to
 * only on a handover. Fails the test otherwise. Returns the row count. */
int read_elog(odbc_leader_t *h, struct elog *l) {
    int rc;

    memset(l, 0, sizeof(*l));
    rc = odbc_leader_list_elections(h, elog_row, l);
    if (rc < 0)
        fail_msg("odbc_leader_list_elections: %s", odbc_leader_strerror(rc));
    assert_int_equal(rc, l->n);
    assert_true(l->n <= ELOG_MAX);
    for (int i = 0; i < l->n; i++) {
        const struct odbc_leader_election *e = &l->e[i], *next = e + 1;

        assert_true(e->started_at_ms > 0 && e->started_at_ms <= e->db_now_ms);
        assert_true(e->ended_at_ms == 0 || e->ended_at_ms >= e->started_at_ms);
        assert_int_equal(e->ended_at_ms == 0, e->ended_how[0] == '\0');
        assert_true(strcmp(e->ended_how, "handover") == 0 ||
                    e->handed_to[0] == '\0');
        if (i + 1 == l->n)
            continue;
        if (!(e->term < next->term && e->started_at_ms <= next->started_at_ms &&
              e->ended_at_ms != 0 && e->ended_at_ms <= next->started_at_ms))
            fail_msg("term %lld (%lld-%lld) before term %lld (from %lld)",
                     (long long)e->term, (long long)e->started_at_ms,
                     (long long)e->ended_at_ms, (long long)next->term,
                     (long long)next->started_at_ms);
    }
    return l->n;
}

/* Row i of l is term, won by leader, ended how ("" while open) in favour
 * of to ("" but for a handover). */
void expect_term(const struct elog *l, int i, int64_t term, const char *leader,
                 const char *how, const char *to) {
    const struct odbc_leader_election *e = &l->e[i];

    assert_true(i < l->n);
    if (e->term != term || strcmp(e->leader_id, leader) != 0 ||
        strcmp(e->ended_how, how) != 0 || strcmp(e->handed_to, to) != 0)
        fail_msg("election log row %d: term %lld of '%s' ended '%s' to '%s'; "
                 "expected term %lld of '%s' ended '%s' to '%s'",
                 i, (long long)e->term, e->leader_id, e->ended_how,
                 e->handed_to, (long long)term, leader, how, to);
}

/* Runs "UPDATE table SET v = v + 1 WHERE id = 1 AND EXISTS (fence)" with
 * ns and term bound to the fence (docs/fencing.md); returns the rows it
 * changed (0: fenced out). */
int fenced_update(struct raw *r, const char *table, const char *fence,
                  const char *ns, int64_t term) {
    char sql[2048];
    SQLHSTMT h;
    SQLLEN rows = -1, nts = SQL_NTS, zero = 0;
    SQLBIGINT t = term;
    SQLRETURN rc;

    snprintf(sql, sizeof(sql),
             "UPDATE %s SET v = v + 1 WHERE id = 1 AND EXISTS (%s)", table,
             fence);
    SQLAllocHandle(SQL_HANDLE_STMT, r->dbc, &h);
    rc = SQLPrepare(h, (SQLCHAR *)sql, SQL_NTS);
    assert_true(SQL_SUCCEEDED(rc));
    SQLBindParameter(h, 1, SQL_PARAM_INPUT, SQL_C_CHAR, SQL_VARCHAR, 128, 0,
                     (SQLPOINTER)ns, 0, &nts);
    SQLBindParameter(h, 2, SQL_PARAM_INPUT, SQL_C_SBIGINT, SQL_BIGINT, 0, 0, &t,
                     0, &zero);
    rc = SQLExecute(h);
    assert_true(SQL_SUCCEEDED(rc) || rc == SQL_NO_DATA);
    if (rc != SQL_NO_DATA)
        SQLRowCount(h, &rows);
    else
        rows = 0;
    SQLFreeHandle(SQL_HANDLE_STMT, h);
    return (int)rows;
}

/* Reads the fence the CLI prints (odbc-leader fence --dialect D --bare)
 * for the dialect the suite runs with into buf: OL_LEADER_EXTRA's
 * LeaderDialect= (the generic.sql copy), else the built-in one of the
 * database (OL_KIND). */
void printed_fence(char *buf, size_t len) {
    const char *top = getenv("top_builddir");
    const char *extra = getenv("OL_LEADER_EXTRA");
    const char *dialect = getenv("OL_KIND");
    char cmd[4096], spec[512];
    FILE *p;
    size_t n;

    if (extra != NULL && strncmp(extra, "LeaderDialect=", 14) == 0) {
        snprintf(spec, sizeof(spec), "%.*s", (int)strcspn(extra + 14, ";"),
                 extra + 14);
        dialect = spec;
    }
    assert_non_null(dialect);
    if (top == NULL)
        top = "."; /* run by hand from the build directory */
    snprintf(cmd, sizeof(cmd), "'%s/odbc-leader' fence --dialect %s --bare",
             top, dialect);
    p = popen(cmd, "r");
    assert_non_null(p);
    n = fread(buf, 1, len - 1, p);
    buf[n] = '\0';
    assert_int_equal(pclose(p), 0);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ';'))
        buf[--n] = '\0';
    assert_true(n > 0);
}
