/* SPDX-License-Identifier: MIT */
/*
 * test_dialect_format.c: the dialect file format: @define and the other
 * header directives, @statement sections and the operations each schema
 * version requires, statement text, quotes, parameters and placeholders,
 * upgrade steps, and the message (FILE:LINE: reason) of each refusal.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "test_dialect.h"

void test_define_expands_with_params_and_prefix(void **state) {
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

void test_err_define(void **state) {
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
void test_session_id(void **state) {
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
void test_wake_up_statements_go_together(void **state) {
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

void test_err_too_many_statements(void **state) {
    char text[4096];
    size_t n = 0;

    (void)state;
    n += (size_t)snprintf(text + n, sizeof(text) - n,
                          HEADER "-- @statement on_connect\n");
    for (int i = 1; i <= ODBC_LEADER__MAX_STMTS + 1; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "SELECT %d;\n", i);
    snprintf(text + n, sizeof(text) - n, "%s", REQUIRED_OPS);
    /* the statement after the 32nd, on the line after them */
    expect_error(text, 3 + ODBC_LEADER__MAX_STMTS + 1,
                 "more than 32 statements in @statement on_connect");
}

void test_minimal_and_statement_text(void **state) {
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

void test_quotes_left_alone(void **state) {
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

void test_header_values(void **state) {
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

void test_err_unknown_directive(void **state) {
    (void)state;
    expect_error(HEADER "-- @frobnicate yes\n" REQUIRED_OPS, 3,
                 "unknown directive @frobnicate");
    expect_error(HEADER REQUIRED_OPS "-- @wat\n", 21, "unknown directive @wat");
    expect_error(HEADER "--@Dialect x\n" REQUIRED_OPS, 3, "bad directive");
}

void test_err_unknown_op(void **state) {
    (void)state;
    expect_error(HEADER "-- @statement fly\nSELECT 1;\n" REQUIRED_OPS, 3,
                 "unknown operation \"fly\"");
    expect_error(HEADER "-- @statement\nSELECT 1;\n" REQUIRED_OPS, 3,
                 "unknown operation \"\"");
}

/* Sharded groups: group_init, group_tick and group_leave come together. */
void test_err_group_ops_together(void **state) {
    (void)state;
    expect_error(HEADER REQUIRED_OPS "-- @statement group_tick\nSELECT 1;\n",
                 21,
                 "missing @statement group_init; sharded groups (@statement "
                 "group_tick here) need group_init, group_tick, group_leave "
                 "and group_shards");
    /* a steady tick is one kind of group tick: not without the others */
    expect_error(HEADER REQUIRED_OPS "-- @statement group_steady\nSELECT 1;\n",
                 21,
                 "@statement group_steady without group_tick; a steady tick "
                 "is one kind of group tick: sharded groups need group_init, "
                 "group_tick, group_leave and group_shards");
}

/* The election log: elections and election_gc come together. */
void test_err_election_ops_together(void **state) {
    (void)state;
    expect_error(HEADER REQUIRED_OPS "-- @statement election_gc\nSELECT 1;\n",
                 21,
                 "missing @statement elections; the election log (@statement "
                 "election_gc here) need elections and election_gc");
}

/* The fire lifecycle: all seven statements or none, and only from
 * @schema-version 2 on (with the ledger). The line is the file's end. */
void test_err_lifecycle_ops_together(void **state) {
    (void)state;
    expect_error("-- @dialect t\n-- @schema-version 2\n" REQUIRED_OPS LEDGER_OPS
                 "-- @statement take\nSELECT 1;\n"
                 "-- @statement sweep\nSELECT 1;\n",
                 33,
                 "missing @statement skip; the fire lifecycle (@statement "
                 "take here) need take, skip, sweep, offers, pause, trigger "
                 "and jobs");
    expect_error(HEADER REQUIRED_OPS "-- @statement jobs\nSELECT 1;\n", 21,
                 "@statement jobs needs @schema-version 2");
    /* schedule identities: all three or none */
    expect_error("-- @dialect t\n-- @schema-version 2\n" REQUIRED_OPS LEDGER_OPS
                 "-- @statement schedules\nSELECT 1;\n",
                 33,
                 "missing @statement schedule; schedule identities "
                 "(@statement schedules here) need schedule, reschedule and "
                 "schedules");
}

void test_err_duplicate_op(void **state) {
    (void)state;
    expect_error(HEADER REQUIRED_OPS "-- @statement leader\nSELECT 8;\n", 21,
                 "duplicate @statement leader (first at line 15)");
}

void test_err_missing_op(void **state) {
    (void)state;
    expect_error(HEADER "-- @statement ddl\nSELECT 1;\n", 4,
                 "missing @statement schema_version; a dialect file of "
                 "@schema-version 1 needs ddl, schema_version, attempt, "
                 "renew, resign, unregister, leader, candidates and "
                 "request_resign, and may also have on_connect, release, "
                 "wait, hold, session_id, group_init, group_tick, "
                 "group_leave, group_shards, elections, election_gc and "
                 "group_steady");
    expect_error(HEADER, 2, "missing @statement ddl");
    expect_error("", 1, "missing @dialect");
    expect_error("-- @dialect t\n-- @schema-version 2\n" REQUIRED_OPS, 20,
                 "missing @statement claim; a dialect file of "
                 "@schema-version 2 needs ddl, schema_version, attempt, "
                 "renew, resign, unregister, leader, candidates, "
                 "request_resign, claim, finish, fire, fires, fire_gc and "
                 "fence, and may also have on_connect, release, wait, hold, "
                 "upgrade, session_id, group_init, group_tick, group_leave, "
                 "group_shards, elections, election_gc, take, skip, sweep, "
                 "offers, pause, trigger, jobs, schedule, reschedule, "
                 "schedules, last_fire, schedule_read and group_steady");
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
void test_err_each_required_op_is_named(void **state) {
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
void test_err_attempt_without_watch(void **state) {
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
void test_err_lists_are_complete(void **state) {
    (void)state;
    expect_error(HEADER "-- @statement fly\nSELECT 1;\n" REQUIRED_OPS, 3,
                 "unknown operation \"fly\" in @statement; expected "
                 "on_connect, ddl, schema_version, attempt, renew, resign, "
                 "unregister, leader, candidates, request_resign, release, "
                 "wait, hold, upgrade, claim, finish, fire, fires, fire_gc, "
                 "fence, session_id, group_init, group_tick, group_leave, "
                 "group_shards, elections, election_gc, take, skip, sweep, "
                 "offers, pause, trigger, jobs, schedule, reschedule, "
                 "schedules, last_fire, schedule_read or group_steady");
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
                 ":dead, :take_mask, :release_mask, :dead_inc, :dead_seq, "
                 ":election_retention_ms, :max_attempts, :paused, "
                 ":schedule or :full");
    expect_error(HEADER REQUIRED_OPS LEDGER_OPS, 21,
                 "@statement claim needs @schema-version 2 or later (the "
                 "fire ledger's table); a file of @schema-version 1 has no "
                 "upgrade, claim, finish, fire, fires, fire_gc, fence, take, "
                 "skip, sweep, offers, pause, trigger, jobs, schedule, "
                 "reschedule, schedules, last_fire or "
                 "schedule_read");
}

/* The fire ledger's statements: required from schema version 2 on, not
 * allowed before; upgrade only from version 2 on. */
void test_ledger_ops_by_version(void **state) {
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
void test_upgrade_steps(void **state) {
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

void test_err_missing_header(void **state) {
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

void test_err_bad_code(void **state) {
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

void test_err_unknown_param(void **state) {
    (void)state;
    expect_error(
        HEADER "-- @statement on_connect\nSELECT\n  :ns, :nss;\n" REQUIRED_OPS,
        5, "unknown parameter :nss");
    expect_error(HEADER "-- @statement on_connect\nSELECT :i_d\n" REQUIRED_OPS,
                 4, "unknown parameter :i_d");
}

void test_err_too_many_params(void **state) {
    char text[2048];
    int i, n;

    (void)state;
    n = snprintf(text, sizeof text, HEADER "-- @statement on_connect\nSELECT");
    for (i = 0; i <= ODBC_LEADER__MAX_PARAMS; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, " :ns,");
    snprintf(text + n, sizeof text - (size_t)n, " 1;\n" REQUIRED_OPS);
    expect_error(text, 4, "more than 96 parameters");
}

void test_err_unknown_placeholder(void **state) {
    (void)state;
    expect_error(
        HEADER
        "-- @statement on_connect\nSELECT * FROM {table};\n" REQUIRED_OPS,
        4, "unknown placeholder {table}");
}

void test_connect_keys_and_query_timeout(void **state) {
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

void test_err_transaction_directives(void **state) {
    (void)state;
    expect_error(HEADER "-- @begin BEGIN\n-- @rollback ROLLBACK\n" REQUIRED_OPS,
                 3, "@begin without @commit");
    expect_error(HEADER "-- @begin BEGIN\n-- @commit COMMIT\n" REQUIRED_OPS, 3,
                 "@begin without @rollback");
    expect_error(HEADER "-- @commit COMMIT\n" REQUIRED_OPS, 3,
                 "@commit without @begin");
    expect_error(HEADER "-- @begin\n" REQUIRED_OPS, 3, "@begin needs a value");
}

void test_err_empty_section(void **state) {
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

void test_err_unterminated(void **state) {
    (void)state;
    expect_error(
        HEADER
        "-- @statement on_connect\nSELECT 1;\nSELECT 'abc;\n" REQUIRED_OPS,
        5, "unterminated quoted text");
    expect_error(HEADER "-- @statement on_connect\nSELECT /* x;\n", 4,
                 "unterminated /* comment");
}

void test_null_filename_and_vars(void **state) {
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
