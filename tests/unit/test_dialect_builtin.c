/* SPDX-License-Identifier: MIT */
/*
 * test_dialect_builtin.c: the built-in dialects (sql/sqlite.sql,
 * sql/postgresql.sql, sql/mariadb.sql, embedded by builtin_dialects.c):
 * their names, the embedded text, and each one's statements, parameters
 * and fire ledger, PostgreSQL's under transaction pooling too; and the
 * fence predicate a dialect gives (src/fence.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fence.h"
#include "test_dialect.h"

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
            i != ODBC_LEADER__OP_GROUP_TICK &&
            i != ODBC_LEADER__OP_GROUP_LEAVE &&
            i != ODBC_LEADER__OP_GROUP_STEADY)
            assert_true(d->ops[i].n > 0);
    /* a steady tick of its own: only with the group statements */
    if (d->ops[ODBC_LEADER__OP_GROUP_STEADY].n > 0)
        assert_true(d->ops[ODBC_LEADER__OP_GROUP_TICK].n > 0);
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

void test_builtin_names(void **state) {
    (void)state;
    assert_string_equal(odbc_leader__builtin_dialect_name(0), "sqlite");
    assert_string_equal(odbc_leader__builtin_dialect_name(1), "postgresql");
    assert_string_equal(odbc_leader__builtin_dialect_name(2), "mariadb");
    assert_null(odbc_leader__builtin_dialect_name(3));
    assert_null(odbc_leader__builtin_dialect("oracle"));
    assert_null(odbc_leader__builtin_dialect(NULL));
}

/* The embedded text equals the file (only when srcdir is known). */
void test_builtin_text_matches_file(void **state) {
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
    static const unsigned char claim[] = {JOB,  FIRE, MAXATT, NS, ID, TERM,
                                          FIRE, FIRE, RET,    NS, JOB};
    static const unsigned char finish[] = {STATUS, STATUS, NS,   JOB,
                                           FIRE,   ID,     TERM, TERM};
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
        assert_int_equal(d->schema_version, 7);
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
    /* the election log's table comes before the last version, the fire
     * lifecycle's job table with it, then schedule identities' columns of
     * that table, then the member leases' table (issue 42) just before the
     * version's update */
    if (d->ops[ODBC_LEADER__OP_ELECTIONS].n > 0) {
        int found = 0;

        for (size_t i = 0; i < up->n; i++)
            found |= strstr(up->v[i].sql, "pfx_election (") != NULL;
        assert_true(found);
    }
    if (d->ops[ODBC_LEADER__OP_TAKE].n > 0) {
        int found = 0;

        for (size_t i = 0; i < up->n; i++)
            found |= strstr(up->v[i].sql, "pfx_job (") != NULL;
        assert_true(found);
    }
    if (d->ops[ODBC_LEADER__OP_SCHEDULE].n > 0) {
        size_t job = 0, member = 0;

        for (size_t i = 0; i < up->n; i++) {
            if (strstr(up->v[i].sql, "pfx_job") != NULL &&
                strstr(up->v[i].sql, "refused_by") != NULL)
                job = i;
            if (strstr(up->v[i].sql, "pfx_member (") != NULL)
                member = i;
        }
        assert_true(job > 0);
        if (d->ops[ODBC_LEADER__OP_GROUP_TICK].n > 0)
            assert_true(member > job);
    }
    expect_params(d, ODBC_LEADER__OP_CLAIM, 0, claim, sizeof claim);
    assert_non_null(
        strstr(d->ops[ODBC_LEADER__OP_CLAIM].v[0].sql, "pfx_lease"));
    expect_params(d, ODBC_LEADER__OP_FINISH, 0, finish, sizeof finish);
    expect_params(d, ODBC_LEADER__OP_FIRE, 0, fire, sizeof fire);
    expect_params(d, ODBC_LEADER__OP_FIRES, 0, fires, sizeof fires);
    expect_params(d, ODBC_LEADER__OP_FIRE_GC, 0, gc, sizeof gc);
    expect_params(d, ODBC_LEADER__OP_FENCE, 0, fence, sizeof fence);
}

void test_builtin_sqlite(void **state) {
    struct odbc_leader__dialect *d = parse_builtin("sqlite");
    const struct odbc_leader__code *c;
    static const unsigned char hb[] = {NS, ID, CTTL};
    static const unsigned char take[] = {NS, ID, TTL, SEEN, SEENX};
    static const unsigned char expired[] = {SEENX, NS, SEEN, NS, SEEN, SEENX};
    static const unsigned char ns[] = {NS};
    static const unsigned char nsns[] = {NS, NS, NS}; /* offered x 2, the row */
    static const unsigned char ext[] = {TTL, NS, ID, TERM};
    static const unsigned char gc[] = {NS, ID, CTTL};
    static const unsigned char nsid[] = {NS, ID};
    static const unsigned char ended[] = {NS, NS, NS, TERM, NS, ID, TERM};
    static const unsigned char resign[] = {TTL, NS, ID, TERM};
    static const unsigned char request[] = {TO, NS};

    (void)state;
    assert_string_equal(d->name, "sqlite");
    assert_string_equal(d->dbms, "SQLite");
    assert_int_equal(d->schema_version, 7);
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
    expect_params(d, ODBC_LEADER__OP_RENEW, 3, nsns, 3);
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

void test_builtin_postgresql(void **state) {
    struct odbc_leader__dialect *d = parse_builtin("postgresql");
    const struct odbc_leader__code *c;
    /* ... ins, elog (NS), eend (SEEN, SEENX, NS), cur (NS), {wake_try} */
    static const unsigned char attempt[] = {
        NS, ID, CTTL, ID,  TTL, NS, ID,   SEEN,  SEENX, TTL, NS, TTL,
        NS, NS, ID,   TTL, NS,  NS, SEEN, SEENX, NS,    NS,  NS};
    static const unsigned char renew[] = {NS, ID, CTTL, NS, ID, CTTL, TTL,
                                          NS, ID, TERM, NS, NS, NS};
    static const unsigned char wait[] = {NS, WAIT};
    static const unsigned char ns[] = {NS};
    static const unsigned char resign[] = {NS,  ID, TERM, NS,  TERM,
                                           TTL, NS, ID,   TERM};
    static const unsigned char request[] = {TO, NS};

    (void)state;
    assert_string_equal(d->name, "postgresql");
    assert_string_equal(d->dbms, "PostgreSQL");
    assert_int_equal(d->schema_version, 9);
    /* a group's tick is one statement: one round trip; so is a steady
     * tick, which reads no shard row */
    assert_int_equal(d->ops[ODBC_LEADER__OP_GROUP_TICK].n, 1);
    assert_int_equal(d->ops[ODBC_LEADER__OP_GROUP_STEADY].n, 1);
    assert_null(strstr(d->ops[ODBC_LEADER__OP_GROUP_STEADY].v[0].sql,
                       "UPDATE pfx_lease"));
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

/* PostgreSQL under transaction pooling: the @pooled text replaces the
 * wake-up lock's, and the prologue and keys are kept; without pooling
 * they are only checked. */
void test_builtin_postgresql_pooled(void **state) {
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
void test_builtin_mariadb(void **state) {
    struct odbc_leader__dialect *d = parse_builtin("mariadb");
    /* ... the takeover, the log's expired entries (SEEN, SEENX, NS), the
     * winner's entry (NS) and the rest (NS...) */
    static const unsigned char attempt[] = {
        NS, ID,   CTTL,  NS,   TTL,   NS, ID, TTL, TTL, NS, ID, TTL, NS,
        ID, SEEN, SEENX, SEEN, SEENX, NS, NS, NS,  NS,  NS, NS, NS};
    static const unsigned char renew[] = {NS, ID,   CTTL, NS, ID, CTTL, NS,
                                          ID, CTTL, TTL,  NS, ID, TERM, NS,
                                          NS, NS,   NS,   NS, NS, ID,   TERM};
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
    assert_int_equal(d->schema_version, 9);
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

/* A version-2 dialect whose fence is the statement fence (with its
 * "-- @statement fence" line). */
#define V2_WITH_FENCE(fence)                                                   \
    "-- @dialect t\n-- @schema-version 2\n" REQUIRED_OPS                       \
    "-- @statement claim\nSELECT 9;\n"                                         \
    "-- @statement finish\nSELECT 10;\n"                                       \
    "-- @statement fire\nSELECT 11;\n"                                         \
    "-- @statement fires\nSELECT 12;\n"                                        \
    "-- @statement fire_gc\nSELECT 13;\n"                                      \
    "-- @statement upgrade\nSELECT 1;\n" fence

/* Asserts that d gives no fence predicate, with a message holding why. */
static void expect_no_fence(struct odbc_leader__dialect *d, const char *why) {
    char err[512] = "", out[64];

    assert_int_equal(
        odbc_leader__fence_sql(d, out, sizeof(out), err, sizeof(err)),
        ODBC_LEADER_EDIALECT);
    if (strstr(err, why) == NULL)
        print_error("got \"%s\", want \"...%s...\"\n", err, why);
    assert_non_null(strstr(err, why));
    odbc_leader__dialect_free(d);
}

/* The fence predicate each built-in dialect gives the handles (and the
 * fence command): its fence statement's text, "?" for the namespace and
 * the term, cut as snprintf cuts; a dialect without a fence, or whose
 * fence binds other parameters or these in another order, gives none and
 * says why. */
void test_fence_sql(void **state) {
    static const char *const names[] = {"sqlite", "postgresql", "mariadb"};
    char err[512] = "", buf[2048], small[8];

    (void)state;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        struct odbc_leader__dialect *d = parse_builtin(names[i]);
        int n = odbc_leader__fence_sql(d, NULL, 0, err, sizeof(err));
        int marks = 0;

        assert_true(n > 0 && (size_t)n < sizeof(buf));
        assert_int_equal(
            odbc_leader__fence_sql(d, buf, sizeof(buf), err, sizeof(err)), n);
        assert_string_equal(buf, d->ops[ODBC_LEADER__OP_FENCE].v[0].sql);
        assert_memory_equal(buf, "SELECT 1 FROM pfx_lease", 23);
        for (const char *c = buf; *c != '\0'; c++)
            marks += *c == '?';
        assert_int_equal(marks, 2);
        assert_int_equal(
            odbc_leader__fence_sql(d, small, sizeof(small), err, sizeof(err)),
            n);
        assert_string_equal(small, "SELECT ");
        odbc_leader__dialect_free(d);
    }
    expect_no_fence(parse_ok(HEADER REQUIRED_OPS), "has no fence statement");
    expect_no_fence(
        parse_ok(V2_WITH_FENCE("-- @statement fence\nSELECT 14;\n")),
        "must bind :ns and then :term");
    expect_no_fence(
        parse_ok(V2_WITH_FENCE("-- @statement fence\n"
                               "SELECT 1 WHERE :term = 2 AND :ns = 'x';\n")),
        "must bind :ns and then :term");
    expect_no_fence(
        parse_ok(V2_WITH_FENCE("-- @statement fence\n"
                               "SELECT 1 WHERE :ns = 'x' AND :term = 2 "
                               "AND :ns = 'y';\n")),
        "must bind :ns and then :term");
}
