/* SPDX-License-Identifier: MIT */
/*
 * test_dialect.c: unit tests of the dialect layer: the built-in dialect
 * files, the file format and its error messages, error classification
 * and dialect selection (src/dialect.c, src/builtin_dialects.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dialect.h"

enum {
    NS = ODBC_LEADER__P_NS,
    ID = ODBC_LEADER__P_ID,
    TERM = ODBC_LEADER__P_TERM,
    TTL = ODBC_LEADER__P_TTL_MS,
    CTTL = ODBC_LEADER__P_CAND_TTL_MS,
    VERSION = ODBC_LEADER__P_VERSION,
    TO = ODBC_LEADER__P_TO,
    WAIT = ODBC_LEADER__P_WAIT_MS,
    JOB = ODBC_LEADER__P_JOB,
    FIRE = ODBC_LEADER__P_FIRE_MS,
    STATUS = ODBC_LEADER__P_STATUS,
    RET = ODBC_LEADER__P_RETENTION_MS,
    SEEN = ODBC_LEADER__P_SEEN_TERM,
    SEENX = ODBC_LEADER__P_SEEN_EXPIRES_MS,
};

static const struct odbc_leader__dialect_vars test_vars = {"pfx_", 1234, 0};

/* Every operation except on_connect, one trivial statement each. */
#define REQUIRED_OPS                                                           \
    "-- @statement ddl\n"                                                      \
    "CREATE TABLE t (x INTEGER);\n"                                            \
    "-- @statement schema_version\n"                                           \
    "SELECT 1;\n"                                                              \
    "-- @statement attempt\n"                                                  \
    "SELECT 2 WHERE :seen_term = :seen_expires_ms;\n"                          \
    "-- @statement renew\n"                                                    \
    "SELECT 3;\n"                                                              \
    "-- @statement resign\n"                                                   \
    "SELECT 4;\n"                                                              \
    "-- @statement unregister\n"                                               \
    "SELECT 5;\n"                                                              \
    "-- @statement leader\n"                                                   \
    "SELECT 6;\n"                                                              \
    "-- @statement candidates\n"                                               \
    "SELECT 7;\n"                                                              \
    "-- @statement request_resign\n"                                           \
    "SELECT 8;\n"

/* The fire ledger's operations, required from @schema-version 2 on. */
#define LEDGER_OPS                                                             \
    "-- @statement claim\n"                                                    \
    "SELECT 9;\n"                                                              \
    "-- @statement finish\n"                                                   \
    "SELECT 10;\n"                                                             \
    "-- @statement fire\n"                                                     \
    "SELECT 11;\n"                                                             \
    "-- @statement fires\n"                                                    \
    "SELECT 12;\n"                                                             \
    "-- @statement fire_gc\n"                                                  \
    "SELECT 13;\n"                                                             \
    "-- @statement fence\n"                                                    \
    "SELECT 14;\n"

#define HEADER "-- @dialect t\n-- @schema-version 1\n"

/* Parses text as "t.sql" with test_vars; returns the result code and
 * leaves the dialect (or NULL) in *out and the message in err. */
static int parse(const char *text, struct odbc_leader__dialect **out, char *err,
                 size_t errlen) {
    err[0] = '\0';
    return odbc_leader__dialect_parse(text, "t.sql", &test_vars, out, err,
                                      errlen);
}

/* Parses text, which must succeed; returns the dialect (caller frees). */
static struct odbc_leader__dialect *parse_ok(const char *text) {
    struct odbc_leader__dialect *d = NULL;
    char err[512];
    int rc = parse(text, &d, err, sizeof err);

    if (rc != 0)
        print_error("unexpected error: %s\n", err);
    assert_int_equal(rc, 0);
    assert_non_null(d);
    return d;
}

/* Parses text, which must fail with "t.sql:LINE: " and a message holding
 * reason. */
static void expect_error(const char *text, int line, const char *reason) {
    struct odbc_leader__dialect *d = (void *)1;
    char err[512], want[32];
    int rc = parse(text, &d, err, sizeof err);

    snprintf(want, sizeof want, "t.sql:%d: ", line);
    if (strncmp(err, want, strlen(want)) != 0 || !strstr(err, reason))
        print_error("got \"%s\", want \"%s...%s...\"\n", err, want, reason);
    assert_int_equal(rc, ODBC_LEADER_EDIALECT);
    assert_null(d);
    assert_memory_equal(err, want, strlen(want));
    assert_non_null(strstr(err, reason));
}

/* Asserts that statement i of op has exactly the n parameters in want
 * and one '?' per parameter. */
static void expect_params(const struct odbc_leader__dialect *d, int op,
                          size_t i, const unsigned char *want, int n) {
    const struct odbc_leader__stmt *st;
    int marks = 0;
    const char *c;

    assert_true(i < d->ops[op].n);
    st = &d->ops[op].v[i];
    assert_int_equal(st->nparams, n);
    assert_memory_equal(st->params, want, (size_t)n);
    for (c = st->sql; *c; c++)
        marks += *c == '?';
    assert_int_equal(marks, n);
}

/* Checks what every statement of a parsed built-in must satisfy. */
static void expect_clean_sql(const struct odbc_leader__dialect *d) {
    size_t i, j;

    for (i = 0; i < ODBC_LEADER__OP_COUNT; i++) {
        for (j = 0; j < d->ops[i].n; j++) {
            const char *sql = d->ops[i].v[j].sql;
            const char *c;
            int marks = 0;

            assert_null(strstr(sql, "{prefix}"));
            assert_null(strstr(sql, "{timeout_ms}"));
            assert_null(strstr(sql, "--"));
            assert_true(sql[strlen(sql) - 1] != ';');
            for (c = sql; *c; c++)
                marks += *c == '?';
            assert_int_equal(marks, d->ops[i].v[j].nparams);
            assert_true(d->ops[i].v[j].line > 0);
        }
    }
    for (i = 1; i < ODBC_LEADER__OP_COUNT; i++)
        if (i != ODBC_LEADER__OP_RELEASE && i != ODBC_LEADER__OP_WAIT &&
            i != ODBC_LEADER__OP_HOLD && i != ODBC_LEADER__OP_SESSION_ID &&
            i != ODBC_LEADER__OP_GROUP_INIT &&
            i != ODBC_LEADER__OP_GROUP_TICK && i != ODBC_LEADER__OP_GROUP_LEAVE)
            assert_true(d->ops[i].n > 0);
    /* the election log: both statements, in every built-in */
    assert_true(d->ops[ODBC_LEADER__OP_ELECTIONS].n > 0);
    assert_true(d->ops[ODBC_LEADER__OP_ELECTION_GC].n > 0);
    /* sharded groups: all three statements, or none */
    assert_int_equal(d->ops[ODBC_LEADER__OP_GROUP_INIT].n > 0,
                     d->ops[ODBC_LEADER__OP_GROUP_TICK].n > 0);
    assert_int_equal(d->ops[ODBC_LEADER__OP_GROUP_LEAVE].n > 0,
                     d->ops[ODBC_LEADER__OP_GROUP_TICK].n > 0);
    assert_int_equal(d->ops[ODBC_LEADER__OP_GROUP_SHARDS].n > 0,
                     d->ops[ODBC_LEADER__OP_GROUP_TICK].n > 0);
    /* the follower wake-up: release and wait, or neither */
    assert_int_equal(d->ops[ODBC_LEADER__OP_RELEASE].n,
                     d->ops[ODBC_LEADER__OP_WAIT].n);
}

static struct odbc_leader__dialect *parse_builtin(const char *name) {
    const char *text = odbc_leader__builtin_dialect(name);

    assert_non_null(text);
    return parse_ok(text);
}

/* ---- built-in dialects ---- */

static void test_builtin_names(void **state) {
    (void)state;
    assert_string_equal(odbc_leader__builtin_dialect_name(0), "sqlite");
    assert_string_equal(odbc_leader__builtin_dialect_name(1), "postgresql");
    assert_string_equal(odbc_leader__builtin_dialect_name(2), "mariadb");
    assert_null(odbc_leader__builtin_dialect_name(3));
    assert_null(odbc_leader__builtin_dialect("oracle"));
    assert_null(odbc_leader__builtin_dialect(NULL));
}

/* The embedded text equals the file (only when srcdir is known). */
static void test_builtin_text_matches_file(void **state) {
    const char *srcdir = getenv("srcdir");
    char path[4096], *buf;
    const char *text = odbc_leader__builtin_dialect("postgresql");
    size_t n;
    FILE *f;

    (void)state;
    if (!srcdir)
        skip();
    snprintf(path, sizeof path, "%s/sql/postgresql.sql", srcdir);
    f = fopen(path, "rb");
    assert_non_null(f);
    buf = calloc(1, strlen(text) + 2);
    assert_non_null(buf);
    n = fread(buf, 1, strlen(text) + 1, f);
    fclose(f);
    assert_int_equal(n, strlen(text));
    assert_string_equal(buf, text);
    free(buf);
}

/* Checks the fire ledger's statements of a built-in dialect: the same
 * parameters in every one, and the upgrade from version 1. */
static void expect_ledger(const struct odbc_leader__dialect *d) {
    static const unsigned char claim[] = {JOB,  FIRE, NS,   ID,
                                          TERM, FIRE, FIRE, RET};
    static const unsigned char finish[] = {STATUS, NS, JOB, FIRE, ID};
    static const unsigned char fire[] = {NS, JOB, FIRE};
    static const unsigned char fires[] = {NS, JOB, JOB};
    static const unsigned char gc[] = {NS, RET, RET};
    static const unsigned char fence[] = {NS, TERM};

    const struct odbc_leader__stmt_list *up = &d->ops[ODBC_LEADER__OP_UPGRADE];
    char set_version[64];

    /* version 2: the ledger; on the server dialects versions 3 and 4: the
     * lease's epoch, then the database's in the schema row; then groups
     * (SQLite's 3, PostgreSQL's 5) */
    assert_non_null(strstr(up->v[0].sql, "CREATE TABLE"));
    assert_non_null(strstr(up->v[0].sql, "pfx_fire"));
    if (d->schema_version == 2)
        assert_int_equal(up->n, 2);
    if (strcmp(d->name, "sqlite") == 0) {
        assert_int_equal(d->schema_version, 4);
        assert_int_equal(up->v[2].step, 3);
        assert_non_null(strstr(up->v[2].sql, "pfx_lease ADD COLUMN grp"));
    } else if (d->schema_version >= 3) {
        assert_true(up->n >= 4);
        assert_non_null(strstr(up->v[1].sql, "pfx_lease ADD COLUMN IF NOT "
                                             "EXISTS epoch"));
        assert_non_null(strstr(up->v[2].sql, "pfx_schema ADD COLUMN IF NOT "
                                             "EXISTS epoch"));
    }
    snprintf(set_version, sizeof set_version, "SET version = %d WHERE version",
             d->schema_version);
    assert_non_null(strstr(up->v[up->n - 1].sql, set_version));
    /* the election log: its table comes with the last version */
    if (d->ops[ODBC_LEADER__OP_ELECTIONS].n > 0)
        assert_non_null(strstr(up->v[up->n - 2].sql, "pfx_election ("));
    expect_params(d, ODBC_LEADER__OP_CLAIM, 0, claim, sizeof claim);
    assert_non_null(
        strstr(d->ops[ODBC_LEADER__OP_CLAIM].v[0].sql, "pfx_lease"));
    expect_params(d, ODBC_LEADER__OP_FINISH, 0, finish, sizeof finish);
    expect_params(d, ODBC_LEADER__OP_FIRE, 0, fire, sizeof fire);
    expect_params(d, ODBC_LEADER__OP_FIRES, 0, fires, sizeof fires);
    expect_params(d, ODBC_LEADER__OP_FIRE_GC, 0, gc, sizeof gc);
    expect_params(d, ODBC_LEADER__OP_FENCE, 0, fence, sizeof fence);
}

static void test_builtin_sqlite(void **state) {
    struct odbc_leader__dialect *d = parse_builtin("sqlite");
    const struct odbc_leader__code *c;
    static const unsigned char hb[] = {NS, ID, CTTL};
    static const unsigned char take[] = {NS, ID, TTL, SEEN, SEENX};
    static const unsigned char expired[] = {SEENX, NS, SEEN, NS, SEEN, SEENX};
    static const unsigned char ns[] = {NS};
    static const unsigned char ext[] = {TTL, NS, ID, TERM};
    static const unsigned char gc[] = {NS, ID, CTTL};
    static const unsigned char nsid[] = {NS, ID};
    static const unsigned char ended[] = {NS, NS, NS, TERM, NS, ID, TERM};
    static const unsigned char resign[] = {TTL, NS, ID, TERM};
    static const unsigned char request[] = {TO, NS};

    (void)state;
    assert_string_equal(d->name, "sqlite");
    assert_string_equal(d->dbms, "SQLite");
    assert_int_equal(d->schema_version, 4);
    assert_true(d->ops[ODBC_LEADER__OP_GROUP_TICK].n > 0);
    assert_string_equal(d->begin, "BEGIN IMMEDIATE");
    assert_string_equal(d->commit, "COMMIT");
    assert_string_equal(d->rollback, "ROLLBACK");
    expect_clean_sql(d);

    /* sqliteodbc's two busy waits add up: each gets half the timeout */
    assert_int_equal(d->ops[ODBC_LEADER__OP_ON_CONNECT].n, 1);
    assert_string_equal(d->ops[ODBC_LEADER__OP_ON_CONNECT].v[0].sql,
                        "PRAGMA busy_timeout = 617");
    assert_string_equal(d->connect_keys, "Timeout=617");
    assert_int_equal(d->no_query_timeout, 0);
    assert_int_equal(d->wake_file, 1); /* followers wait on a lock file */
    assert_int_equal(d->ops[ODBC_LEADER__OP_DDL].n, 4);
    assert_non_null(strstr(d->ops[ODBC_LEADER__OP_DDL].v[0].sql,
                           "CREATE TABLE IF NOT EXISTS pfx_schema (\n"));
    assert_non_null(strstr(d->ops[ODBC_LEADER__OP_DDL].v[1].sql, "pfx_lease"));
    assert_non_null(
        strstr(d->ops[ODBC_LEADER__OP_DDL].v[2].sql, "pfx_candidate"));
    expect_params(d, ODBC_LEADER__OP_DDL, 3, NULL, 0); /* version 1 */
    expect_ledger(d);
    expect_params(d, ODBC_LEADER__OP_SCHEMA_VERSION, 0, NULL, 0);

    /* heartbeat, end the watched term's log entry, take, open the new
     * term's entry, report (won: changes() of the entry's insert) */
    assert_int_equal(d->ops[ODBC_LEADER__OP_ATTEMPT].n, 5);
    expect_params(d, ODBC_LEADER__OP_ATTEMPT, 0, hb, 3);
    expect_params(d, ODBC_LEADER__OP_ATTEMPT, 1, expired, sizeof expired);
    expect_params(d, ODBC_LEADER__OP_ATTEMPT, 2, take, sizeof take);
    expect_params(d, ODBC_LEADER__OP_ATTEMPT, 3, ns, 1);
    expect_params(d, ODBC_LEADER__OP_ATTEMPT, 4, ns, 1);
    assert_non_null(
        strstr(d->ops[ODBC_LEADER__OP_ATTEMPT].v[3].sql, "changes() = 1"));
    assert_non_null(
        strstr(d->ops[ODBC_LEADER__OP_ATTEMPT].v[4].sql, "changes()"));
    assert_int_equal(d->ops[ODBC_LEADER__OP_RENEW].n, 4);
    expect_params(d, ODBC_LEADER__OP_RENEW, 0, hb, 3);
    expect_params(d, ODBC_LEADER__OP_RENEW, 1, gc, 3);
    expect_params(d, ODBC_LEADER__OP_RENEW, 2, ext, 4);
    expect_params(d, ODBC_LEADER__OP_RENEW, 3, ns, 1);
    /* the log entry ends first; the lease's UPDATE (the result) last */
    assert_int_equal(d->ops[ODBC_LEADER__OP_RESIGN].n, 2);
    expect_params(d, ODBC_LEADER__OP_RESIGN, 0, ended, sizeof ended);
    expect_params(d, ODBC_LEADER__OP_RESIGN, 1, resign, sizeof resign);
    expect_params(d, ODBC_LEADER__OP_REQUEST_RESIGN, 0, request,
                  sizeof request);
    expect_params(d, ODBC_LEADER__OP_UNREGISTER, 0, nsid, 2);
    expect_params(d, ODBC_LEADER__OP_LEADER, 0, ns, 1);
    expect_params(d, ODBC_LEADER__OP_CANDIDATES, 0, ns, 1);
    assert_int_equal(d->ops[ODBC_LEADER__OP_WAIT].n, 0);

    assert_int_equal(d->codes[ODBC_LEADER__ERR_UNIQUE].n, 3);
    c = &d->codes[ODBC_LEADER__ERR_UNIQUE].v[0];
    assert_string_equal(c->state, "HY000");
    assert_int_equal(c->state_len, 5);
    assert_true(c->has_native);
    assert_int_equal(c->native, 19);
    assert_int_equal(d->codes[ODBC_LEADER__ERR_TRANSIENT].n, 2);
    assert_int_equal(d->codes[ODBC_LEADER__ERR_CONNLOST].n, 0);
    assert_int_equal(d->codes[ODBC_LEADER__ERR_UNDEFINED_TABLE].n, 1);
    odbc_leader__dialect_free(d);
}

static void test_builtin_postgresql(void **state) {
    struct odbc_leader__dialect *d = parse_builtin("postgresql");
    const struct odbc_leader__code *c;
    /* ... ins, elog (NS), eend (SEEN, SEENX, NS), cur (NS), {wake_try} */
    static const unsigned char attempt[] = {
        NS, ID, CTTL, ID,  TTL, NS, ID,   SEEN,  SEENX, TTL, NS, TTL,
        NS, NS, ID,   TTL, NS,  NS, SEEN, SEENX, NS,    NS,  NS};
    static const unsigned char renew[] = {NS,  ID, CTTL, NS,   ID, CTTL,
                                          TTL, NS, ID,   TERM, NS};
    static const unsigned char wait[] = {NS, WAIT};
    static const unsigned char ns[] = {NS};
    static const unsigned char resign[] = {NS,  ID, TERM, NS,  TERM,
                                           TTL, NS, ID,   TERM};
    static const unsigned char request[] = {TO, NS};

    (void)state;
    assert_string_equal(d->name, "postgresql");
    assert_string_equal(d->dbms, "PostgreSQL");
    assert_int_equal(d->schema_version, 6);
    /* a group's tick is one statement: one round trip */
    assert_int_equal(d->ops[ODBC_LEADER__OP_GROUP_TICK].n, 1);
    assert_null(d->begin);
    assert_null(d->commit);
    assert_null(d->rollback);
    expect_clean_sql(d);
    /* statements are bounded in the session, in milliseconds */
    assert_int_equal(d->ops[ODBC_LEADER__OP_ON_CONNECT].n, 1);
    assert_string_equal(d->ops[ODBC_LEADER__OP_ON_CONNECT].v[0].sql,
                        "SET statement_timeout = 1234");
    assert_int_equal(d->no_query_timeout, 1);
    assert_null(d->connect_keys);
    assert_int_equal(d->ops[ODBC_LEADER__OP_DDL].n, 4);
    expect_params(d, ODBC_LEADER__OP_DDL, 3, NULL, 0); /* version 1 */
    expect_ledger(d);
    assert_int_equal(d->ops[ODBC_LEADER__OP_ATTEMPT].n, 1);
    expect_params(d, ODBC_LEADER__OP_ATTEMPT, 0, attempt, sizeof attempt);
    assert_non_null(strstr(d->ops[ODBC_LEADER__OP_ATTEMPT].v[0].sql,
                           "INSERT INTO pfx_lease"));
    assert_non_null(strstr(d->ops[ODBC_LEADER__OP_ATTEMPT].v[0].sql,
                           "CAST(? AS VARCHAR(128))"));
    assert_int_equal(d->ops[ODBC_LEADER__OP_RENEW].n, 1);
    expect_params(d, ODBC_LEADER__OP_RENEW, 0, renew, sizeof renew);
    expect_params(d, ODBC_LEADER__OP_RESIGN, 0, resign, sizeof resign);
    expect_params(d, ODBC_LEADER__OP_REQUEST_RESIGN, 0, request,
                  sizeof request);
    expect_params(d, ODBC_LEADER__OP_LEADER, 0, ns, 1);
    expect_params(d, ODBC_LEADER__OP_CANDIDATES, 0, ns, 1);
    expect_params(d, ODBC_LEADER__OP_RELEASE, 0, NULL, 0);
    expect_params(d, ODBC_LEADER__OP_WAIT, 0, wait, sizeof wait);
    assert_non_null(strstr(d->ops[ODBC_LEADER__OP_WAIT].v[0].sql,
                           "pg_advisory_xact_lock_shared"));
    expect_params(d, ODBC_LEADER__OP_HOLD, 0, wait, sizeof wait);

    assert_int_equal(d->codes[ODBC_LEADER__ERR_UNIQUE].n, 1);
    assert_int_equal(d->codes[ODBC_LEADER__ERR_TRANSIENT].n, 4);
    assert_int_equal(d->codes[ODBC_LEADER__ERR_CONNLOST].n, 4);
    c = &d->codes[ODBC_LEADER__ERR_CONNLOST].v[0];
    assert_int_equal(c->state_len, 2);
    assert_memory_equal(c->state, "08", 2);
    assert_false(c->has_native);
    assert_int_equal(d->codes[ODBC_LEADER__ERR_UNDEFINED_TABLE].n, 1);
    odbc_leader__dialect_free(d);
}

/* ---- the file format ---- */

static void test_define_expands_with_params_and_prefix(void **state) {
    struct odbc_leader__dialect *d;
    const struct odbc_leader__stmt *st;
    static const unsigned char p[] = {NS, TTL, ID};

    (void)state;
    d = parse_ok(HEADER
                 "-- @define now (julianday('now') * 86400000)\n"
                 "-- @define mine {prefix}lease WHERE id = :id\n"
                 "-- @statement on_connect\n"
                 "SELECT :ns, {now} + :ttl_ms FROM {mine};\n" REQUIRED_OPS);
    st = &d->ops[ODBC_LEADER__OP_ON_CONNECT].v[0];
    assert_string_equal(st->sql, "SELECT ?, (julianday('now') * 86400000) + ? "
                                 "FROM pfx_lease WHERE id = ?");
    assert_int_equal(st->nparams, 3);
    assert_memory_equal(st->params, p, sizeof p);
    odbc_leader__dialect_free(d);
}

static void test_err_define(void **state) {
    (void)state;
    expect_error(HEADER "-- @define now 1\n-- @define now 2\n" REQUIRED_OPS, 4,
                 "duplicate @define now (first at line 3)");
    expect_error(HEADER "-- @define prefix x\n" REQUIRED_OPS, 3, "built in");
    expect_error(HEADER "-- @define Now 1\n" REQUIRED_OPS, 3, "bad @define");
    expect_error(HEADER "-- @define now\n" REQUIRED_OPS, 3, "needs a text");
    expect_error(HEADER "-- @define q 'open\n"
                        "-- @statement on_connect\nSELECT {q};\n" REQUIRED_OPS,
                 5, "leaves a quote");
    expect_error(HEADER "-- @define a 1\n-- @define b {a}\n"
                        "-- @statement on_connect\nSELECT {b};\n" REQUIRED_OPS,
                 6, "unknown placeholder {a}");
}

/* session_id: optional, one statement without parameters (the pooler
 * check runs it on a second connection where nothing is bound); the
 * built-in postgresql and mariadb dialects have it, sqlite does not. */
static void test_session_id(void **state) {
    static const char *const with[] = {"postgresql", "mariadb"};
    struct odbc_leader__dialect *d;

    (void)state;
    d = parse_ok(HEADER REQUIRED_OPS "-- @statement session_id\n"
                                     "SELECT 'x';\n");
    assert_int_equal(d->ops[ODBC_LEADER__OP_SESSION_ID].n, 1);
    assert_int_equal(d->ops[ODBC_LEADER__OP_SESSION_ID].v[0].nparams, 0);
    odbc_leader__dialect_free(d);
    expect_error(HEADER REQUIRED_OPS "-- @statement session_id\n"
                                     "SELECT :ns;\n",
                 22,
                 "@statement session_id uses :ns; it takes no "
                 "parameters");
    expect_error(HEADER REQUIRED_OPS "-- @statement session_id\n"
                                     "SELECT 1;\nSELECT 2;\n",
                 23,
                 "@statement session_id holds 2 statements; it must "
                 "be one SELECT of one row and one column");
    for (size_t i = 0; i < sizeof with / sizeof with[0]; i++) {
        d = parse_builtin(with[i]);
        assert_int_equal(d->ops[ODBC_LEADER__OP_SESSION_ID].n, 1);
        assert_int_equal(d->ops[ODBC_LEADER__OP_SESSION_ID].v[0].nparams, 0);
        odbc_leader__dialect_free(d);
    }
    d = parse_builtin("sqlite");
    assert_int_equal(d->ops[ODBC_LEADER__OP_SESSION_ID].n, 0);
    odbc_leader__dialect_free(d);
}

/* The follower wake-up: release and wait go together, hold is optional
 * and needs them; the messages name the missing one and the set. */
static void test_wake_up_statements_go_together(void **state) {
    struct odbc_leader__dialect *d;
    static const unsigned char w[] = {WAIT, NS};

    (void)state;
    expect_error(HEADER REQUIRED_OPS "-- @statement release\nSELECT 9;\n", 21,
                 "missing @statement wait; the follower wake-up (@statement "
                 "release here) needs release and wait, and may also have "
                 "hold");
    expect_error(HEADER REQUIRED_OPS "-- @statement wait\nSELECT 9;\n", 21,
                 "missing @statement release; the follower wake-up "
                 "(@statement wait here) needs release and wait");
    expect_error(HEADER REQUIRED_OPS "-- @statement hold\nSELECT 9;\n", 21,
                 "missing @statement release; the follower wake-up "
                 "(@statement hold here) needs release and wait, and may "
                 "also have hold");
    expect_error(HEADER REQUIRED_OPS "-- @statement hold\nSELECT 9;\n"
                                     "-- @statement release\nSELECT 9;\n",
                 23, "missing @statement wait; the follower wake-up");
    /* hold is optional: without it a leader whose attempt could not take
     * the wake-up lock leaves its followers polling */
    d = parse_ok(HEADER REQUIRED_OPS "-- @statement release\nSELECT 9;\n"
                                     "-- @statement wait\nSELECT :wait_ms, "
                                     ":ns;\n");
    expect_params(d, ODBC_LEADER__OP_WAIT, 0, w, sizeof w);
    assert_int_equal(d->ops[ODBC_LEADER__OP_RELEASE].n, 1);
    assert_int_equal(d->ops[ODBC_LEADER__OP_HOLD].n, 0);
    odbc_leader__dialect_free(d);
    d = parse_ok(HEADER REQUIRED_OPS "-- @statement hold\nSELECT 1;\n"
                                     "-- @statement release\nSELECT 9;\n"
                                     "-- @statement wait\nSELECT 1;\n");
    assert_int_equal(d->ops[ODBC_LEADER__OP_HOLD].n, 1);
    odbc_leader__dialect_free(d);
}

static void test_err_too_many_statements(void **state) {
    (void)state;
    expect_error(HEADER "-- @statement on_connect\n"
                        "SELECT 1;\nSELECT 2;\nSELECT 3;\nSELECT 4;\n"
                        "SELECT 5;\nSELECT 6;\nSELECT 7;\nSELECT 8;\n"
                        "SELECT 9;\nSELECT 10;\nSELECT 11;\nSELECT 12;\n"
                        "SELECT 13;\nSELECT 14;\nSELECT 15;\nSELECT 16;\n"
                        "SELECT 17;\n" REQUIRED_OPS,
                 20, "more than 16 statements in @statement on_connect");
}

static void test_minimal_and_statement_text(void **state) {
    struct odbc_leader__dialect *d;
    const struct odbc_leader__stmt *st;
    static const unsigned char p[] = {ID, NS, TERM};

    (void)state;
    d = parse_ok("-- comment before anything\n"
                 "\n" HEADER "  --   @dbms   My DB  \r\n"
                 "-- @statement ddl\n"
                 "\n"
                 "CREATE TABLE {prefix}x (\n"
                 "    -- a comment line inside, dropped\n"
                 "    a INTEGER -- a trailing comment, dropped :nope {no}\n"
                 ");  \n"
                 "\n"
                 "SELECT :id, :ns::text, x::int, {timeout_ms}, :term\n"
                 "-- @statement schema_version\n"
                 "SELECT 1;\n"
                 "-- @statement attempt\n"
                 "SELECT :seen_term, :seen_expires_ms;\n"
                 "-- @statement renew\n"
                 "SELECT 3;\n"
                 "-- @statement resign\n"
                 "SELECT 4;\n"
                 "-- @statement unregister\n"
                 "SELECT 5;\n"
                 "-- @statement leader\n"
                 "SELECT 6;\n"
                 "-- @statement candidates\n"
                 "SELECT 7;\n"
                 "-- @statement request_resign\n"
                 "SELECT 8");
    assert_string_equal(d->name, "t");
    assert_string_equal(d->dbms, "My DB");
    assert_null(d->begin);
    assert_int_equal(d->ops[ODBC_LEADER__OP_DDL].n, 2);
    st = &d->ops[ODBC_LEADER__OP_DDL].v[0];
    assert_string_equal(st->sql, "CREATE TABLE pfx_x (\n    a INTEGER\n)");
    assert_int_equal(st->line, 8);
    assert_int_equal(st->nparams, 0);
    st = &d->ops[ODBC_LEADER__OP_DDL].v[1];
    assert_string_equal(st->sql, "SELECT ?, ?::text, x::int, 1234, ?");
    assert_int_equal(st->line, 13);
    expect_params(d, ODBC_LEADER__OP_DDL, 1, p, 3);
    assert_string_equal(d->ops[ODBC_LEADER__OP_CANDIDATES].v[0].sql,
                        "SELECT 7");
    assert_int_equal(d->ops[ODBC_LEADER__OP_ON_CONNECT].n, 0);
    odbc_leader__dialect_free(d);
}

static void test_quotes_left_alone(void **state) {
    struct odbc_leader__dialect *d;
    static const unsigned char p[] = {NS};

    (void)state;
    d = parse_ok(HEADER "-- @statement on_connect\n"
                        "SELECT ':id', \"a:id{prefix}\", '{bogus}', "
                        "`b:term`, /* :x {y} */ x::text, 'it''s :id', :ns;\n"
                        "SELECT 'a;\n"
                        "-- not a comment: in a string\n"
                        "\n"
                        "@ :ns;';\n"
                        "SELECT {fn NOW()}, a[1:2], ':';\n" REQUIRED_OPS);
    assert_int_equal(d->ops[ODBC_LEADER__OP_ON_CONNECT].n, 3);
    assert_string_equal(d->ops[ODBC_LEADER__OP_ON_CONNECT].v[0].sql,
                        "SELECT ':id', \"a:id{prefix}\", '{bogus}', "
                        "`b:term`, /* :x {y} */ x::text, 'it''s :id', ?");
    expect_params(d, ODBC_LEADER__OP_ON_CONNECT, 0, p, 1);
    assert_string_equal(d->ops[ODBC_LEADER__OP_ON_CONNECT].v[1].sql,
                        "SELECT 'a;\n-- not a comment: in a string\n\n"
                        "@ :ns;'");
    assert_int_equal(d->ops[ODBC_LEADER__OP_ON_CONNECT].v[1].nparams, 0);
    assert_string_equal(d->ops[ODBC_LEADER__OP_ON_CONNECT].v[2].sql,
                        "SELECT {fn NOW()}, a[1:2], ':'");
    odbc_leader__dialect_free(d);
}

static void test_header_values(void **state) {
    struct odbc_leader__dialect *d;
    const struct odbc_leader__code_list *l;

    (void)state;
    d = parse_ok("-- @dialect my-db_2\n"
                 "-- @schema-version 42\n"
                 "-- @begin START TRANSACTION;\n"
                 "-- @commit COMMIT\n"
                 "-- @rollback ROLLBACK\n"
                 "-- @unique-violation 23000:1062 *:19\n"
                 "-- @unique-violation 23505\n"
                 "-- @transient 40001 hy000:-5\n"
                 "-- @connection-lost 08* 57P0*\n"
                 "-- @undefined-table 42S02 4*\n" REQUIRED_OPS LEDGER_OPS);
    assert_string_equal(d->name, "my-db_2");
    assert_null(d->dbms);
    assert_int_equal(d->schema_version, 42);
    assert_string_equal(d->begin, "START TRANSACTION");
    l = &d->codes[ODBC_LEADER__ERR_UNIQUE];
    assert_int_equal(l->n, 3);
    assert_string_equal(l->v[0].state, "23000");
    assert_int_equal(l->v[0].native, 1062);
    assert_int_equal(l->v[1].state_len, 0);
    assert_true(l->v[1].has_native);
    assert_int_equal(l->v[1].native, 19);
    assert_false(l->v[2].has_native);
    l = &d->codes[ODBC_LEADER__ERR_TRANSIENT];
    assert_string_equal(l->v[1].state, "HY000");
    assert_int_equal(l->v[1].native, -5);
    l = &d->codes[ODBC_LEADER__ERR_CONNLOST];
    assert_int_equal(l->v[1].state_len, 4);
    assert_string_equal(l->v[1].state, "57P0");
    odbc_leader__dialect_free(d);
}

static void test_err_unknown_directive(void **state) {
    (void)state;
    expect_error(HEADER "-- @frobnicate yes\n" REQUIRED_OPS, 3,
                 "unknown directive @frobnicate");
    expect_error(HEADER REQUIRED_OPS "-- @wat\n", 21, "unknown directive @wat");
    expect_error(HEADER "--@Dialect x\n" REQUIRED_OPS, 3, "bad directive");
}

static void test_err_unknown_op(void **state) {
    (void)state;
    expect_error(HEADER "-- @statement fly\nSELECT 1;\n" REQUIRED_OPS, 3,
                 "unknown operation \"fly\"");
    expect_error(HEADER "-- @statement\nSELECT 1;\n" REQUIRED_OPS, 3,
                 "unknown operation \"\"");
}

/* Sharded groups: group_init, group_tick and group_leave come together. */
static void test_err_group_ops_together(void **state) {
    (void)state;
    expect_error(HEADER REQUIRED_OPS "-- @statement group_tick\nSELECT 1;\n",
                 21,
                 "missing @statement group_init; sharded groups (@statement "
                 "group_tick here) need group_init, group_tick, group_leave "
                 "and group_shards");
}

/* The election log: elections and election_gc come together. */
static void test_err_election_ops_together(void **state) {
    (void)state;
    expect_error(HEADER REQUIRED_OPS "-- @statement election_gc\nSELECT 1;\n",
                 21,
                 "missing @statement elections; the election log (@statement "
                 "election_gc here) need elections and election_gc");
}

static void test_err_duplicate_op(void **state) {
    (void)state;
    expect_error(HEADER REQUIRED_OPS "-- @statement leader\nSELECT 8;\n", 21,
                 "duplicate @statement leader (first at line 15)");
}

static void test_err_missing_op(void **state) {
    (void)state;
    expect_error(HEADER "-- @statement ddl\nSELECT 1;\n", 4,
                 "missing @statement schema_version; a dialect file of "
                 "@schema-version 1 needs ddl, schema_version, attempt, "
                 "renew, resign, unregister, leader, candidates and "
                 "request_resign, and may also have on_connect, release, "
                 "wait, hold, session_id, group_init, group_tick, "
                 "group_leave, group_shards, elections and election_gc");
    expect_error(HEADER, 2, "missing @statement ddl");
    expect_error("", 1, "missing @dialect");
    expect_error("-- @dialect t\n-- @schema-version 2\n" REQUIRED_OPS, 20,
                 "missing @statement claim; a dialect file of "
                 "@schema-version 2 needs ddl, schema_version, attempt, "
                 "renew, resign, unregister, leader, candidates, "
                 "request_resign, claim, finish, fire, fires, fire_gc and "
                 "fence, and may also have on_connect, release, wait, hold, "
                 "upgrade, session_id, group_init, group_tick, group_leave, "
                 "group_shards, elections and election_gc");
}

/* The operations a file of @schema-version 2 must have, written out here
 * rather than taken from dialect.c, so that a change there shows. */
static const char *const v2_required[] = {
    "ddl",        "schema_version", "attempt",    "renew",          "resign",
    "unregister", "leader",         "candidates", "request_resign", "claim",
    "finish",     "fire",           "fires",      "fire_gc",        "fence",
};
#define V2_REQUIRED (sizeof v2_required / sizeof v2_required[0])

/* Writes into buf a version-2 file with a section for every required
 * operation except v2_required[skip] (none when skip is out of range). */
static void v2_file(char *buf, size_t n, size_t skip) {
    size_t len;

    snprintf(buf, n, "-- @dialect t\n-- @schema-version 2\n");
    for (size_t i = 0; i < V2_REQUIRED; i++) {
        len = strlen(buf);
        if (i != skip)
            snprintf(buf + len, n - len, "-- @statement %s\nSELECT %zu%s;\n",
                     v2_required[i], i,
                     strcmp(v2_required[i], "attempt") == 0
                         ? ", :seen_term, :seen_expires_ms"
                         : "");
    }
}

/* Leaving out any one required operation fails with a message that names
 * it and the whole required set. */
static void test_err_each_required_op_is_named(void **state) {
    char text[2048], want[128], set[512] = "";
    struct odbc_leader__dialect *d;

    (void)state;
    for (size_t i = 0; i < V2_REQUIRED; i++) {
        size_t len = strlen(set);
        snprintf(set + len, sizeof set - len, "%s%s",
                 i == 0                 ? ""
                 : i + 1 == V2_REQUIRED ? " and "
                                        : ", ",
                 v2_required[i]);
    }
    for (size_t i = 0; i < V2_REQUIRED; i++) {
        v2_file(text, sizeof text, i);
        snprintf(want, sizeof want, "missing @statement %s; ", v2_required[i]);
        expect_error(text, 2 + 2 * ((int)V2_REQUIRED - 1), want);
        expect_error(text, 2 + 2 * ((int)V2_REQUIRED - 1), set);
    }
    v2_file(text, sizeof text, V2_REQUIRED);
    d = parse_ok(text);
    odbc_leader__dialect_free(d);
}

/* An attempt that does not name the watched row would take a held lease
 * on database time alone (a dialect written before the watch): refused at
 * the line of its @statement, naming the missing parameter. */
static void test_err_attempt_without_watch(void **state) {
    static const char *const ops[] = {
        "-- @statement ddl\nCREATE TABLE t (x INTEGER);\n",
        "-- @statement schema_version\nSELECT 1;\n",
        "-- @statement renew\nSELECT 3;\n",
        "-- @statement resign\nSELECT 4;\n",
        "-- @statement unregister\nSELECT 5;\n",
        "-- @statement leader\nSELECT 6;\n",
        "-- @statement candidates\nSELECT 7;\n",
        "-- @statement request_resign\nSELECT 8;\n",
    };
    char text[1024], rest[512] = "";

    (void)state;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        strcat(rest, ops[i]);
    snprintf(text, sizeof text,
             HEADER "-- @statement attempt\nUPDATE lease SET term = term + 1 "
                    "WHERE expires_at_ms <= 5;\n%s",
             rest);
    expect_error(text, 3,
                 "@statement attempt does not use :seen_term; attempt must "
                 "take a held lease only when it expired and its term and "
                 "expires_at_ms equal :seen_term and :seen_expires_ms");
    snprintf(text, sizeof text,
             HEADER "-- @statement attempt\nSELECT 1;\n"
                    "SELECT 2 WHERE :seen_term = 1;\n%s",
             rest);
    expect_error(text, 3, "@statement attempt does not use :seen_expires_ms");
}

/* The messages that list every operation, directive or parameter list
 * the current sets. */
static void test_err_lists_are_complete(void **state) {
    (void)state;
    expect_error(HEADER "-- @statement fly\nSELECT 1;\n" REQUIRED_OPS, 3,
                 "unknown operation \"fly\" in @statement; expected "
                 "on_connect, ddl, schema_version, attempt, renew, resign, "
                 "unregister, leader, candidates, request_resign, release, "
                 "wait, hold, upgrade, claim, finish, fire, fires, fire_gc, "
                 "fence, session_id, group_init, group_tick, group_leave, "
                 "group_shards, elections or election_gc");
    expect_error(HEADER "-- @frobnicate yes\n" REQUIRED_OPS, 3,
                 "unknown directive @frobnicate; expected @statement or a "
                 "header directive: @dialect, @dbms, @schema-version, "
                 "@begin, @commit, @rollback, @unique-violation, "
                 "@transient, @connection-lost, @undefined-table, @define, "
                 "@connect-keys, @query-timeout, @wake-file, @read-only, "
                 "@pooled, @pooled-prologue or @pooled-connect-keys");
    expect_error(HEADER "-- @statement on_connect\nSELECT :nss;\n", 4,
                 "unknown parameter :nss; expected :ns, :id, :term, "
                 ":ttl_ms, :cand_ttl_ms, :version, :to, :wait_ms, :job, "
                 ":fire_ms, :status, :retention_ms, :seen_term, "
                 ":seen_expires_ms, :inc, :seq, :shards, :take, :release, "
                 ":dead, :take_mask, :release_mask, :dead_inc, :dead_seq or "
                 ":election_retention_ms");
    expect_error(HEADER REQUIRED_OPS LEDGER_OPS, 21,
                 "@statement claim needs @schema-version 2 or later (the "
                 "fire ledger's table); a file of @schema-version 1 has no "
                 "upgrade, claim, finish, fire, fires, fire_gc or fence");
}

/* The fire ledger's statements: required from schema version 2 on, not
 * allowed before; upgrade only from version 2 on. */
static void test_ledger_ops_by_version(void **state) {
    struct odbc_leader__dialect *d;

    (void)state;
    d = parse_ok(HEADER REQUIRED_OPS); /* version 1: no ledger */
    assert_int_equal(d->ops[ODBC_LEADER__OP_CLAIM].n, 0);
    odbc_leader__dialect_free(d);
    expect_error("-- @dialect t\n-- @schema-version 2\n" REQUIRED_OPS, 20,
                 "missing @statement claim");
    expect_error(HEADER REQUIRED_OPS LEDGER_OPS, 21,
                 "@statement claim needs @schema-version 2 or later");
    expect_error(HEADER REQUIRED_OPS "-- @statement upgrade\nSELECT 1;\n", 21,
                 "@statement upgrade needs @schema-version 2");
    d = parse_ok("-- @dialect t\n-- @schema-version 2\n" REQUIRED_OPS LEDGER_OPS
                 "-- @statement upgrade\nSELECT 1;\n");
    assert_int_equal(d->ops[ODBC_LEADER__OP_CLAIM].n, 1);
    assert_int_equal(d->ops[ODBC_LEADER__OP_UPGRADE].n, 1);
    odbc_leader__dialect_free(d);
}

/* "@step N" in upgrade: the statements after it carry N (they run only on
 * tables below version N); steps grow up to @schema-version, only in
 * upgrade and between statements. */
static void test_upgrade_steps(void **state) {
#define V3 "-- @dialect t\n-- @schema-version 3\n" REQUIRED_OPS LEDGER_OPS
    struct odbc_leader__dialect *d;
    int base = 0;

    (void)state;
    for (const char *c = V3; *c != '\0'; c++)
        base += *c == '\n';
    d = parse_ok(V3 "-- @statement upgrade\nSELECT 0;\n-- @step 2\n"
                    "SELECT 1;\nSELECT 2;\n-- @step 3\nSELECT 3;\n");
    assert_int_equal(d->ops[ODBC_LEADER__OP_UPGRADE].n, 4);
    assert_int_equal(d->ops[ODBC_LEADER__OP_UPGRADE].v[0].step, 0);
    assert_int_equal(d->ops[ODBC_LEADER__OP_UPGRADE].v[1].step, 2);
    assert_int_equal(d->ops[ODBC_LEADER__OP_UPGRADE].v[2].step, 2);
    assert_int_equal(d->ops[ODBC_LEADER__OP_UPGRADE].v[3].step, 3);
    assert_int_equal(d->ops[ODBC_LEADER__OP_CLAIM].v[0].step, 0);
    odbc_leader__dialect_free(d);
    expect_error(V3 "-- @statement upgrade\n-- @step 4\nSELECT 1;\n", base + 2,
                 "bad @step \"4\"; expected a version from 2");
    expect_error(V3 "-- @statement upgrade\n-- @step 3\nSELECT 1;\n"
                    "-- @step 2\nSELECT 2;\n",
                 base + 4, "above the previous @step");
    expect_error(V3 "-- @statement upgrade\n-- @step x\nSELECT 1;\n", base + 2,
                 "bad @step \"x\"");
    expect_error(V3 "-- @statement upgrade\nSELECT 1,\n-- @step 2\n2;\n",
                 base + 3, "@step inside a statement");
    expect_error(V3 "-- @statement upgrade\nSELECT 1;\n-- @statement hold\n"
                    "-- @step 2\nSELECT 1;\n",
                 base + 4, "@step outside @statement upgrade");
    expect_error("-- @step 2\n" V3, 1, "unknown directive @step");
#undef V3
}

static void test_err_missing_header(void **state) {
    (void)state;
    expect_error("-- @schema-version 1\n" REQUIRED_OPS, 2,
                 "missing @dialect NAME");
    expect_error("-- @dialect t\n" REQUIRED_OPS, 2, "missing @schema-version");
    expect_error(HEADER "-- @dialect u\n" REQUIRED_OPS, 3,
                 "duplicate @dialect (first at line 1)");
    expect_error("-- @dialect T\n" REQUIRED_OPS, 1, "bad @dialect name \"T\"");
    expect_error("-- @dialect t\n-- @schema-version 0\n" REQUIRED_OPS, 2,
                 "bad @schema-version \"0\"; expected a positive integer");
    expect_error("-- @dialect t\n-- @schema-version 99999999999\n", 2,
                 "bad @schema-version");
    expect_error(HEADER REQUIRED_OPS "-- @dbms late\n", 21,
                 "@dbms after the first @statement");
    expect_error(HEADER "SELECT 1;\n" REQUIRED_OPS, 3,
                 "SQL text outside a statement section");
}

static void test_err_bad_code(void **state) {
    static const char *const bad[] = {
        "4000",   "400011",  "*",  "12345*", "HY0!0",
        "HY000:", "HY000:x", "*:", ":19",    "HY000:1x",
    };
    char text[1024];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char reason[64];

        snprintf(text, sizeof text,
                 HEADER "-- @transient 40001 %s\n" REQUIRED_OPS, bad[i]);
        snprintf(reason, sizeof reason, "bad error code \"%s\" in @transient",
                 bad[i]);
        expect_error(text, 3, reason);
    }
    expect_error(HEADER "-- @undefined-table\n" REQUIRED_OPS, 3,
                 "@undefined-table needs at least one error code");
}

static void test_err_unknown_param(void **state) {
    (void)state;
    expect_error(
        HEADER "-- @statement on_connect\nSELECT\n  :ns, :nss;\n" REQUIRED_OPS,
        5, "unknown parameter :nss");
    expect_error(HEADER "-- @statement on_connect\nSELECT :i_d\n" REQUIRED_OPS,
                 4, "unknown parameter :i_d");
}

static void test_err_too_many_params(void **state) {
    char text[2048];
    int i, n;

    (void)state;
    n = snprintf(text, sizeof text, HEADER "-- @statement on_connect\nSELECT");
    for (i = 0; i <= ODBC_LEADER__MAX_PARAMS; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, " :ns,");
    snprintf(text + n, sizeof text - (size_t)n, " 1;\n" REQUIRED_OPS);
    expect_error(text, 4, "more than 64 parameters");
}

static void test_err_unknown_placeholder(void **state) {
    (void)state;
    expect_error(
        HEADER
        "-- @statement on_connect\nSELECT * FROM {table};\n" REQUIRED_OPS,
        4, "unknown placeholder {table}");
}

static void test_connect_keys_and_query_timeout(void **state) {
    struct odbc_leader__dialect *d;

    (void)state;
    d = parse_ok(HEADER
                 "-- @connect-keys Timeout={timeout_half_ms};A={timeout_ms}\n"
                 "-- @query-timeout off\n" REQUIRED_OPS);
    assert_string_equal(d->connect_keys, "Timeout=617;A=1234");
    assert_int_equal(d->no_query_timeout, 1);
    odbc_leader__dialect_free(d);
    d = parse_ok(HEADER "-- @query-timeout on\n" REQUIRED_OPS);
    assert_null(d->connect_keys);
    assert_int_equal(d->no_query_timeout, 0);
    odbc_leader__dialect_free(d);
    expect_error(HEADER "-- @connect-keys Timeout={prefix}\n" REQUIRED_OPS, 3,
                 "only {timeout_ms} and {timeout_half_ms}");
    expect_error(HEADER "-- @connect-keys nothing\n" REQUIRED_OPS, 3,
                 "@connect-keys needs KEY=VALUE");
    expect_error(HEADER
                 "-- @connect-keys A=1\n-- @connect-keys B=2\n" REQUIRED_OPS,
                 4, "duplicate @connect-keys");
    expect_error(HEADER "-- @query-timeout maybe\n" REQUIRED_OPS, 3,
                 "@query-timeout takes on or off");
    expect_error(HEADER "-- @define timeout_half_ms 1\n" REQUIRED_OPS, 3,
                 "the name is built in");
    d = parse_ok(HEADER "-- @wake-file\n" REQUIRED_OPS);
    assert_int_equal(d->wake_file, 1);
    odbc_leader__dialect_free(d);
    expect_error(HEADER "-- @wake-file /tmp/x\n" REQUIRED_OPS, 3,
                 "@wake-file takes no arguments");
    expect_error(HEADER "-- @wake-file\n-- @wake-file\n" REQUIRED_OPS, 4,
                 "duplicate @wake-file");
}

static void test_err_transaction_directives(void **state) {
    (void)state;
    expect_error(HEADER "-- @begin BEGIN\n-- @rollback ROLLBACK\n" REQUIRED_OPS,
                 3, "@begin without @commit");
    expect_error(HEADER "-- @begin BEGIN\n-- @commit COMMIT\n" REQUIRED_OPS, 3,
                 "@begin without @rollback");
    expect_error(HEADER "-- @commit COMMIT\n" REQUIRED_OPS, 3,
                 "@commit without @begin");
    expect_error(HEADER "-- @begin\n" REQUIRED_OPS, 3, "@begin needs a value");
}

static void test_err_empty_section(void **state) {
    (void)state;
    expect_error(HEADER
                 "-- @statement on_connect\n-- only a comment\n\n" REQUIRED_OPS,
                 3, "empty @statement on_connect");
    expect_error(HEADER REQUIRED_OPS "-- @statement on_connect\n", 21,
                 "empty @statement on_connect");
    expect_error(HEADER
                 "-- @statement on_connect\nSELECT 1;\n  ;\n" REQUIRED_OPS,
                 5, "empty statement");
}

static void test_err_unterminated(void **state) {
    (void)state;
    expect_error(
        HEADER
        "-- @statement on_connect\nSELECT 1;\nSELECT 'abc;\n" REQUIRED_OPS,
        5, "unterminated quoted text");
    expect_error(HEADER "-- @statement on_connect\nSELECT /* x;\n", 4,
                 "unterminated /* comment");
}

static void test_null_filename_and_vars(void **state) {
    struct odbc_leader__dialect *d = NULL;
    char err[256];
    int rc;

    (void)state;
    rc = odbc_leader__dialect_parse(
        HEADER "-- @statement on_connect\nSELECT '{prefix}', {prefix}x, "
               "{timeout_ms}\n" REQUIRED_OPS,
        NULL, NULL, &d, err, sizeof err);
    assert_int_equal(rc, 0);
    assert_string_equal(d->ops[ODBC_LEADER__OP_ON_CONNECT].v[0].sql,
                        "SELECT '{prefix}', x, 0");
    odbc_leader__dialect_free(d);
    odbc_leader__dialect_free(NULL);
    rc = odbc_leader__dialect_parse("oops\n", NULL, NULL, &d, err, sizeof err);
    assert_int_equal(rc, ODBC_LEADER_EDIALECT);
    assert_null(d);
    assert_non_null(strstr(err, ":1: "));
    /* err may be NULL */
    rc = odbc_leader__dialect_parse("oops\n", "x", NULL, &d, NULL, 0);
    assert_int_equal(rc, ODBC_LEADER_EDIALECT);
}

/* PostgreSQL under transaction pooling: the @pooled text replaces the
 * wake-up lock's, and the prologue and keys are kept; without pooling
 * they are only checked. */
static void test_builtin_postgresql_pooled(void **state) {
    static const struct odbc_leader__dialect_vars pooled_vars = {"pfx_", 1234,
                                                                 1};
    struct odbc_leader__dialect *d = NULL;
    char err[256] = "";
    const char *attempt;

    (void)state;
    assert_int_equal(
        odbc_leader__dialect_parse(odbc_leader__builtin_dialect("postgresql"),
                                   "pg", &pooled_vars, &d, err, sizeof err),
        0);
    attempt = d->ops[ODBC_LEADER__OP_ATTEMPT].v[0].sql;
    assert_null(strstr(attempt, "pg_try_advisory_lock"));
    assert_non_null(strstr(attempt, "AND FALSE THEN 1"));
    assert_string_equal(d->pooled_prologue,
                        "SET LOCAL statement_timeout = 1234");
    assert_string_equal(d->pooled_keys, "UseServerSidePrepare=0");
    odbc_leader__dialect_free(d);
    d = parse_builtin("postgresql");
    assert_non_null(strstr(d->ops[ODBC_LEADER__OP_ATTEMPT].v[0].sql,
                           "pg_try_advisory_lock"));
    odbc_leader__dialect_free(d);
    /* a second @pooled of one name is refused */
    expect_error("-- @dialect t\n-- @schema-version 1\n"
                 "-- @pooled x A\n-- @pooled x B\n" REQUIRED_OPS,
                 4, "duplicate @pooled x");
}

/* MariaDB: attempt and renew are one compound statement each (one round
 * trip), every other operation one statement. */
static void test_builtin_mariadb(void **state) {
    struct odbc_leader__dialect *d = parse_builtin("mariadb");
    /* ... the takeover, the log's expired entries (SEEN, SEENX, NS), the
     * winner's entry (NS) and the rest (NS...) */
    static const unsigned char attempt[] = {
        NS, ID,   CTTL,  NS,   TTL,   NS, ID, TTL, TTL, NS, ID, TTL, NS,
        ID, SEEN, SEENX, SEEN, SEENX, NS, NS, NS,  NS,  NS, NS, NS};
    static const unsigned char renew[] = {NS, ID,   CTTL, NS, ID,  CTTL, NS,
                                          ID, CTTL, TTL,  NS, ID,  TERM, NS,
                                          NS, NS,   NS,   ID, TERM};
    static const unsigned char wait[] = {NS, WAIT, NS};
    static const unsigned char hold[] = {NS, NS, WAIT};
    static const unsigned char ns[] = {NS};
    static const unsigned char nsid[] = {NS, ID};
    static const unsigned char lock[] = {NS, ID, TERM};
    static const unsigned char ended[] = {ID, NS, TERM};
    static const unsigned char resign[] = {TTL, NS, ID, TERM};
    static const unsigned char request[] = {TO, NS};
    const char *upsert;

    (void)state;
    assert_string_equal(d->name, "mariadb");
    assert_string_equal(d->dbms, "MariaDB");
    assert_int_equal(d->schema_version, 6);
    assert_null(d->begin);
    expect_clean_sql(d);
    assert_int_equal(d->ops[ODBC_LEADER__OP_ON_CONNECT].n, 3);
    assert_non_null(strstr(d->ops[ODBC_LEADER__OP_ON_CONNECT].v[2].sql,
                           "wsrep_sync_wait = 1"));
    assert_non_null(strstr(d->ops[ODBC_LEADER__OP_ON_CONNECT].v[0].sql,
                           "max_statement_time = 1234 / 1000.0"));
    assert_int_equal(d->ops[ODBC_LEADER__OP_DDL].n, 4);
    expect_params(d, ODBC_LEADER__OP_DDL, 3, NULL, 0); /* version 1 */
    expect_ledger(d);
    assert_int_equal(d->ops[ODBC_LEADER__OP_ATTEMPT].n, 1);
    expect_params(d, ODBC_LEADER__OP_ATTEMPT, 0, attempt, sizeof attempt);
    assert_memory_equal(d->ops[ODBC_LEADER__OP_ATTEMPT].v[0].sql,
                        "BEGIN NOT ATOMIC", 16);
    assert_non_null(strstr(d->ops[ODBC_LEADER__OP_ATTEMPT].v[0].sql,
                           "INSERT INTO pfx_lease"));
    /* only the heartbeat and the log's entry upsert: the lease row's INSERT
     * can collide */
    upsert = strstr(d->ops[ODBC_LEADER__OP_ATTEMPT].v[0].sql,
                    "ON DUPLICATE KEY UPDATE");
    assert_non_null(upsert);
    upsert = strstr(upsert + 1, "ON DUPLICATE KEY UPDATE");
    assert_non_null(upsert);
    assert_true(upsert > strstr(d->ops[ODBC_LEADER__OP_ATTEMPT].v[0].sql,
                                "INSERT INTO pfx_election"));
    assert_null(strstr(upsert + 1, "ON DUPLICATE KEY UPDATE"));
    assert_int_equal(d->ops[ODBC_LEADER__OP_RENEW].n, 1);
    expect_params(d, ODBC_LEADER__OP_RENEW, 0, renew, sizeof renew);
    /* lock the lease row, end the log's entry, vacate the lease (last) */
    assert_int_equal(d->ops[ODBC_LEADER__OP_RESIGN].n, 3);
    expect_params(d, ODBC_LEADER__OP_RESIGN, 0, lock, sizeof lock);
    expect_params(d, ODBC_LEADER__OP_RESIGN, 1, ended, sizeof ended);
    expect_params(d, ODBC_LEADER__OP_RESIGN, 2, resign, sizeof resign);
    expect_params(d, ODBC_LEADER__OP_REQUEST_RESIGN, 0, request,
                  sizeof request);
    expect_params(d, ODBC_LEADER__OP_UNREGISTER, 0, nsid, 2);
    expect_params(d, ODBC_LEADER__OP_LEADER, 0, ns, 1);
    expect_params(d, ODBC_LEADER__OP_CANDIDATES, 0, ns, 1);
    expect_params(d, ODBC_LEADER__OP_RELEASE, 0, NULL, 0);
    expect_params(d, ODBC_LEADER__OP_WAIT, 0, wait, sizeof wait);
    assert_non_null(strstr(d->ops[ODBC_LEADER__OP_WAIT].v[0].sql, "GET_LOCK"));
    expect_params(d, ODBC_LEADER__OP_HOLD, 0, hold, sizeof hold);
    odbc_leader__dialect_free(d);
}

/* ---- classification ---- */

static void test_classify_postgresql(void **state) {
    struct odbc_leader__dialect *d = parse_builtin("postgresql");

    (void)state;
    assert_int_equal(odbc_leader__classify(d, "23505", 1),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "40001", 1),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "40P01", 1),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "55P03", 7),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "57014", 1),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "57P01", 1),
                     ODBC_LEADER__ERR_CONNLOST);
    assert_int_equal(odbc_leader__classify(d, "08S01", 0),
                     ODBC_LEADER__ERR_CONNLOST);
    assert_int_equal(odbc_leader__classify(d, "08003", 0),
                     ODBC_LEADER__ERR_CONNLOST);
    assert_int_equal(odbc_leader__classify(d, "42P01", 1),
                     ODBC_LEADER__ERR_UNDEFINED_TABLE);
    assert_int_equal(odbc_leader__classify(d, "42601", 1),
                     ODBC_LEADER__ERR_OTHER);
    assert_int_equal(odbc_leader__classify(d, "23503", 1),
                     ODBC_LEADER__ERR_OTHER);
    assert_int_equal(odbc_leader__classify(d, "HYT00", 0),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "HYT01", 0),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, NULL, 0), ODBC_LEADER__ERR_OTHER);
    assert_int_equal(odbc_leader__classify(d, "", 0), ODBC_LEADER__ERR_OTHER);
    odbc_leader__dialect_free(d);
}

static void test_classify_mariadb(void **state) {
    struct odbc_leader__dialect *d = parse_builtin("mariadb");

    (void)state;
    /* a unique violation by native code, whatever the SQLSTATE */
    assert_int_equal(odbc_leader__classify(d, "23000", 1062),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "HY000", 1062),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "23000", 1048),
                     ODBC_LEADER__ERR_OTHER);
    assert_int_equal(odbc_leader__classify(d, "40001", 1213),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "HY000", 1205),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "70100", 1969),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "08S01", 2013),
                     ODBC_LEADER__ERR_CONNLOST);
    assert_int_equal(odbc_leader__classify(d, "HY000", 2006),
                     ODBC_LEADER__ERR_CONNLOST);
    assert_int_equal(odbc_leader__classify(d, "70100", 1927),
                     ODBC_LEADER__ERR_CONNLOST);
    assert_int_equal(odbc_leader__classify(d, "42S02", 1146),
                     ODBC_LEADER__ERR_UNDEFINED_TABLE);
    assert_int_equal(odbc_leader__classify(d, "42000", 1064),
                     ODBC_LEADER__ERR_OTHER);
    assert_int_equal(odbc_leader__classify(d, "42000", 1142),
                     ODBC_LEADER__ERR_OTHER);
    odbc_leader__dialect_free(d);
}

static void test_classify_sqlite(void **state) {
    struct odbc_leader__dialect *d = parse_builtin("sqlite");

    (void)state;
    assert_int_equal(odbc_leader__classify(d, "HY000", 19),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "23000", 0),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "HY000", 5),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "HY000", 6),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "HY000", 1),
                     ODBC_LEADER__ERR_UNDEFINED_TABLE);
    assert_int_equal(odbc_leader__classify(d, "HY000", 7),
                     ODBC_LEADER__ERR_OTHER);
    assert_int_equal(odbc_leader__classify(d, "S1000", 19),
                     ODBC_LEADER__ERR_OTHER);
    /* no connection-lost list, still class 08 */
    assert_int_equal(odbc_leader__classify(d, "08S01", 19),
                     ODBC_LEADER__ERR_CONNLOST);
    odbc_leader__dialect_free(d);
}

static void test_classify_patterns(void **state) {
    struct odbc_leader__dialect *d;

    (void)state;
    d = parse_ok(HEADER "-- @unique-violation *:1062 08001 HYT00 4000*\n"
                        "-- @transient 40001 *:1062 hy0*:1205\n"
                        "-- @connection-lost HY000:2013\n"
                        "-- @undefined-table 42S02\n" REQUIRED_OPS);
    /* native only, any SQLSTATE */
    assert_int_equal(odbc_leader__classify(d, "23000", 1062),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "HY000", 1062),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "23000", 1),
                     ODBC_LEADER__ERR_OTHER);
    /* class 08 wins over every list */
    assert_int_equal(odbc_leader__classify(d, "08001", 1062),
                     ODBC_LEADER__ERR_CONNLOST);
    /* a listed HYT00 follows the list */
    assert_int_equal(odbc_leader__classify(d, "HYT00", 0),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "HYT01", 0),
                     ODBC_LEADER__ERR_TRANSIENT);
    /* prefix, case-insensitive */
    assert_int_equal(odbc_leader__classify(d, "40002", 0),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "HY000", 1205),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "hy001", 1205),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "HY000", 2013),
                     ODBC_LEADER__ERR_CONNLOST);
    assert_int_equal(odbc_leader__classify(d, "HY000", 2014),
                     ODBC_LEADER__ERR_OTHER);
    assert_int_equal(odbc_leader__classify(d, "42S02", 1146),
                     ODBC_LEADER__ERR_UNDEFINED_TABLE);
    assert_int_equal(odbc_leader__classify(d, "42S0", 0),
                     ODBC_LEADER__ERR_OTHER);
    /* without a dialect only the fixed rules apply */
    assert_int_equal(odbc_leader__classify(NULL, "08S01", 0),
                     ODBC_LEADER__ERR_CONNLOST);
    assert_int_equal(odbc_leader__classify(NULL, "HYT00", 0),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(NULL, "23505", 0),
                     ODBC_LEADER__ERR_OTHER);
    odbc_leader__dialect_free(d);
}

/* ---- loading ---- */

/* Loads spec; returns the result code, *out and the message in err. */
static int load(const char *spec, const char *dbms,
                struct odbc_leader__dialect **out, char *err, size_t errlen) {
    err[0] = '\0';
    return odbc_leader__dialect_load(spec, dbms, &test_vars, out, err, errlen);
}

/* Loads spec, which must succeed and give the dialect called name. */
static void expect_load(const char *spec, const char *dbms, const char *name) {
    struct odbc_leader__dialect *d = NULL;
    char err[512];
    int rc = load(spec, dbms, &d, err, sizeof err);

    if (rc != 0)
        print_error("load(%s, %s): %s\n", spec, dbms ? dbms : "NULL", err);
    assert_int_equal(rc, 0);
    assert_non_null(d);
    assert_string_equal(d->name, name);
    odbc_leader__dialect_free(d);
}

/* Loads spec, which must fail with EDIALECT and a message holding each of
 * the (NULL-terminated) strings. */
static void expect_load_error(const char *spec, const char *dbms, ...) {
    struct odbc_leader__dialect *d = (void *)1;
    char err[512];
    const char *want;
    va_list ap;
    int rc = load(spec, dbms, &d, err, sizeof err);

    assert_int_equal(rc, ODBC_LEADER_EDIALECT);
    assert_null(d);
    va_start(ap, dbms);
    for (want = va_arg(ap, const char *); want;
         want = va_arg(ap, const char *)) {
        if (!strstr(err, want))
            print_error("\"%s\" lacks \"%s\"\n", err, want);
        assert_non_null(strstr(err, want));
    }
    va_end(ap);
}

static void test_load_auto(void **state) {
    (void)state;
    expect_load("auto", "PostgreSQL", "postgresql");
    expect_load("auto", "postgresql 15.4", "postgresql");
    expect_load("auto", "SQLite", "sqlite");
    expect_load("auto", "MariaDB", "mariadb");
    expect_load(NULL, "SQLITE", "sqlite");
    expect_load("", "SQLite", "sqlite");
    expect_load_error("auto", "Oracle", "\"Oracle\"", "LeaderDialect", "sqlite",
                      "postgresql", NULL);
    expect_load_error("auto", "Postgre", "\"Postgre\"", NULL);
    expect_load_error("auto", NULL, "LeaderDialect", NULL);
    expect_load_error("auto", "", "LeaderDialect", NULL);
}

static void test_load_named(void **state) {
    (void)state;
    expect_load("postgresql", NULL, "postgresql");
    expect_load("sqlite", "PostgreSQL", "sqlite");
    expect_load_error("oracle", "PostgreSQL", "LeaderDialect", "oracle",
                      "sqlite, postgresql", NULL);
    expect_load_error("Bad Name", NULL, "LeaderDialect", "[a-z0-9_-]+", NULL);
}

/* Writes text to a new temp file; returns its path (caller unlinks and
 * frees). */
static char *temp_file(const char *text) {
    char *path = strdup("/tmp/test_dialect_XXXXXX");
    int fd;

    assert_non_null(path);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_load_path(void **state) {
    char *path = temp_file("-- @dialect from-file\n-- @schema-version 3\n"
                           "-- @dbms Oracle\n" REQUIRED_OPS LEDGER_OPS);
    char *bad = temp_file(HEADER "-- @statement nope\n");
    char want[128];
    struct odbc_leader__dialect *d = NULL;
    char err[512];

    (void)state;
    expect_load(path, "PostgreSQL", "from-file");
    snprintf(want, sizeof want, "%s:3: ", bad);
    expect_load_error(bad, NULL, want, "unknown operation \"nope\"", NULL);
    assert_int_equal(load(path, NULL, &d, err, sizeof err), 0);
    assert_int_equal(d->schema_version, 3);
    odbc_leader__dialect_free(d);
    unlink(path);
    unlink(bad);
    expect_load_error(path, NULL, "LeaderDialect", path, strerror(ENOENT),
                      NULL);
    expect_load_error("/tmp/", NULL, "/tmp/", strerror(EISDIR), NULL);
    expect_load_error("missing.sql", NULL, "missing.sql", strerror(ENOENT),
                      NULL);
    free(path);
    free(bad);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_names),
        cmocka_unit_test(test_builtin_text_matches_file),
        cmocka_unit_test(test_builtin_sqlite),
        cmocka_unit_test(test_builtin_postgresql),
        cmocka_unit_test(test_builtin_mariadb),
        cmocka_unit_test(test_builtin_postgresql_pooled),
        cmocka_unit_test(test_minimal_and_statement_text),
        cmocka_unit_test(test_define_expands_with_params_and_prefix),
        cmocka_unit_test(test_err_define),
        cmocka_unit_test(test_session_id),
        cmocka_unit_test(test_wake_up_statements_go_together),
        cmocka_unit_test(test_err_too_many_statements),
        cmocka_unit_test(test_quotes_left_alone),
        cmocka_unit_test(test_header_values),
        cmocka_unit_test(test_err_unknown_directive),
        cmocka_unit_test(test_err_unknown_op),
        cmocka_unit_test(test_err_duplicate_op),
        cmocka_unit_test(test_err_missing_op),
        cmocka_unit_test(test_err_each_required_op_is_named),
        cmocka_unit_test(test_err_lists_are_complete),
        cmocka_unit_test(test_err_group_ops_together),
        cmocka_unit_test(test_err_election_ops_together),
        cmocka_unit_test(test_err_attempt_without_watch),
        cmocka_unit_test(test_ledger_ops_by_version),
        cmocka_unit_test(test_upgrade_steps),
        cmocka_unit_test(test_err_missing_header),
        cmocka_unit_test(test_err_bad_code),
        cmocka_unit_test(test_err_unknown_param),
        cmocka_unit_test(test_err_too_many_params),
        cmocka_unit_test(test_err_unknown_placeholder),
        cmocka_unit_test(test_connect_keys_and_query_timeout),
        cmocka_unit_test(test_err_transaction_directives),
        cmocka_unit_test(test_err_empty_section),
        cmocka_unit_test(test_err_unterminated),
        cmocka_unit_test(test_null_filename_and_vars),
        cmocka_unit_test(test_classify_postgresql),
        cmocka_unit_test(test_classify_mariadb),
        cmocka_unit_test(test_classify_sqlite),
        cmocka_unit_test(test_classify_patterns),
        cmocka_unit_test(test_load_auto),
        cmocka_unit_test(test_load_named),
        cmocka_unit_test(test_load_path),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
