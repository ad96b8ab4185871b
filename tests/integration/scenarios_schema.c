/* SPDX-License-Identifier: MIT */
/*
 * scenarios_schema.c: the scenarios of the tables across releases and
 * databases: the tables of every earlier schema version upgraded, rows of
 * another database epoch quarantined (a promoted standby, a restored
 * copy), and the fence of docs/fencing.md refusing a deposed leader's
 * write.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <sql.h>
#include <sqlext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "db_lease.h"
#include "scenarios.h"

/* ---- upgrades from every earlier schema version ---- */

/* The dialects, as indexes of old_schema's since[]. */
enum old_dialect { OLD_SQLITE, OLD_PG, OLD_MARIADB, OLD_GENERIC };

static enum old_dialect dialect_under_test(void) {
    const char *extra = getenv("OL_LEADER_EXTRA");

    if (extra != NULL && strstr(extra, "generic"))
        return OLD_GENERIC;
    if (is_kind("postgresql"))
        return OLD_PG;
    return is_kind("mariadb") ? OLD_MARIADB : OLD_SQLITE;
}

/* The schema version of the dialect under test: 9 on PostgreSQL and
 * MariaDB (shards under their member's lease), 7 on SQLite and with the
 * generic dialect (no epochs; the same). */
static int64_t current_schema_version(void) {
    const char *extra = getenv("OL_LEADER_EXTRA");

    if (extra != NULL && strstr(extra, "generic"))
        return 7;
    if (is_kind("sqlite"))
        return 7;
    return 9;
}

/*
 * The tables of every earlier schema version, from the history of
 * sql/{sqlite,postgresql,mariadb,generic}.sql (each version's ddl and
 * upgrade, as its last release wrote them): a statement is part of the
 * tables of a dialect from the version since[dialect] on (0: never).
 * {prefix}, {version} (the version built), {ns} and {epoch} (the
 * database's epoch, as the dialect defines it) are replaced; {opts} is
 * the MariaDB dialect's table options. The version row and a vacant
 * lease row at term 41 come right after the version-1 tables.
 */
static const struct {
    int since[4];
    const char *sql;
} old_schema[] = {
    {{1, 1, 1, 1},
     "CREATE TABLE {prefix}schema (version INTEGER NOT NULL){opts}"},
    {{1, 1, 1, 1},
     "CREATE TABLE {prefix}lease (namespace VARCHAR(128) NOT NULL PRIMARY KEY, "
     "leader_id VARCHAR(128) NULL, term BIGINT NOT NULL, elected_at_ms BIGINT, "
     "renewed_at_ms BIGINT, expires_at_ms BIGINT NOT NULL, resign_requested "
     "INTEGER NOT NULL DEFAULT 0, handoff_to VARCHAR(128) NULL){opts}"},
    {{1, 1, 1, 1},
     "CREATE TABLE {prefix}candidate (namespace VARCHAR(128) NOT NULL, "
     "candidate_id VARCHAR(128) NOT NULL, registered_at_ms BIGINT NOT NULL, "
     "heartbeat_at_ms BIGINT NOT NULL, expires_at_ms BIGINT NOT NULL, PRIMARY "
     "KEY (namespace, candidate_id)){opts}"},
    {{1, 1, 1, 1}, "INSERT INTO {prefix}schema (version) VALUES ({version})"},
    {{1, 1, 1, 1},
     "INSERT INTO {prefix}lease (namespace, leader_id, term, elected_at_ms, "
     "renewed_at_ms, expires_at_ms, resign_requested, handoff_to) VALUES "
     "('{ns}', NULL, 41, 1, 1, 1, 0, NULL)"},
    /* 2: the fire ledger */
    {{2, 2, 2, 2},
     "CREATE TABLE {prefix}fire (namespace VARCHAR(128) NOT NULL, job "
     "VARCHAR(128) NOT NULL, fire_ms BIGINT NOT NULL, term BIGINT NOT NULL, "
     "claimed_by VARCHAR(128) NOT NULL, claimed_at_ms BIGINT NOT NULL, "
     "finished_at_ms BIGINT NULL, status INTEGER NULL, PRIMARY KEY (namespace, "
     "job, fire_ms)){opts}"},
    /* PostgreSQL and MariaDB 3: the lease's epoch (written with the row) */
    {{0, 3, 3, 0},
     "ALTER TABLE {prefix}lease ADD COLUMN epoch VARCHAR(64) NULL"},
    {{0, 3, 3, 0}, "UPDATE {prefix}lease SET epoch = {epoch}"},
    /* PostgreSQL and MariaDB 4: the database's epoch */
    {{0, 4, 4, 0},
     "ALTER TABLE {prefix}schema ADD COLUMN epoch VARCHAR(64) NULL"},
    {{0, 4, 4, 0},
     "ALTER TABLE {prefix}schema ADD COLUMN epoch_since_ms BIGINT NULL"},
    {{0, 4, 4, 0},
     "UPDATE {prefix}schema SET epoch = {epoch}, epoch_since_ms = 0"},
    /* sharded groups: SQLite and generic 3, PostgreSQL and MariaDB 5 */
    {{3, 5, 5, 3},
     "ALTER TABLE {prefix}lease ADD COLUMN grp VARCHAR(128) NULL"},
    {{3, 5, 5, 3}, "ALTER TABLE {prefix}lease ADD COLUMN shard INTEGER NULL"},
    {{3, 5, 5, 3}, "ALTER TABLE {prefix}lease ADD COLUMN inc BIGINT NULL"},
    {{3, 5, 5, 3},
     "ALTER TABLE {prefix}lease ADD COLUMN renew_seq BIGINT NULL"},
    {{3, 5, 5, 3},
     "CREATE UNIQUE INDEX {prefix}lease_grp_shard ON {prefix}lease (grp, "
     "shard)"},
    {{3, 5, 5, 3},
     "CREATE INDEX {prefix}lease_grp_inc ON {prefix}lease (grp, inc)"},
    {{0, 5, 0, 0}, "ALTER TABLE {prefix}lease SET (fillfactor = 50)"},
    /* the election log: SQLite and generic 4, PostgreSQL and MariaDB 6 */
    {{4, 6, 6, 4},
     "CREATE TABLE {prefix}election (namespace VARCHAR(128) NOT NULL, term "
     "BIGINT NOT NULL, leader_id VARCHAR(128) NOT NULL, started_at_ms BIGINT "
     "NOT NULL, ended_at_ms BIGINT NULL, ended_how VARCHAR(16) NULL, "
     "handed_to VARCHAR(128) NULL, PRIMARY KEY (namespace, term)){opts}"},
    /* the fire lifecycle: SQLite and generic 5, PostgreSQL and MariaDB 7 */
    {{5, 7, 7, 5},
     "ALTER TABLE {prefix}fire ADD COLUMN state VARCHAR(16) NOT NULL DEFAULT "
     "'running'"},
    {{5, 7, 7, 5},
     "ALTER TABLE {prefix}fire ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1"},
    {{5, 7, 7, 5},
     "ALTER TABLE {prefix}fire ADD COLUMN max_attempts INTEGER NOT NULL "
     "DEFAULT 1"},
    {{5, 7, 7, 5},
     "CREATE INDEX {prefix}fire_state ON {prefix}fire (namespace, state)"},
    {{5, 7, 7, 5},
     "CREATE TABLE {prefix}job (namespace VARCHAR(128) NOT NULL, job "
     "VARCHAR(128) NOT NULL, paused INTEGER NOT NULL, changed_at_ms BIGINT "
     "NOT NULL, changed_by VARCHAR(128) NOT NULL, PRIMARY KEY (namespace, "
     "job)){opts}"},
    {{5, 7, 7, 5},
     "INSERT INTO {prefix}job (namespace, job, paused, changed_at_ms, "
     "changed_by) VALUES ('{ns}', 'j', 0, 1, 'old-host')"},
    /* schedule identities: SQLite and generic 6, PostgreSQL and MariaDB 8 */
    {{6, 8, 8, 6},
     "ALTER TABLE {prefix}job ADD COLUMN schedule VARCHAR(512) NULL"},
    {{6, 8, 8, 6},
     "ALTER TABLE {prefix}job ADD COLUMN schedule_at_ms BIGINT NULL"},
    {{6, 8, 8, 6},
     "ALTER TABLE {prefix}job ADD COLUMN schedule_by VARCHAR(128) NULL"},
    {{6, 8, 8, 6},
     "ALTER TABLE {prefix}job ADD COLUMN refusals BIGINT NOT NULL DEFAULT 0"},
    {{6, 8, 8, 6},
     "ALTER TABLE {prefix}job ADD COLUMN refused VARCHAR(512) NULL"},
    {{6, 8, 8, 6},
     "ALTER TABLE {prefix}job ADD COLUMN refused_at_ms BIGINT NULL"},
    {{6, 8, 8, 6},
     "ALTER TABLE {prefix}job ADD COLUMN refused_by VARCHAR(128) NULL"},
};

/* Writes old_schema's sql into out (of size cap) with its {names}
 * replaced; fails the test when it does not fit. */
static void old_sql(char *out, size_t cap, const char *sql, const char *p,
                    const char *ns, int version, enum old_dialect d) {
    static const char *const epoch[4] = {
        [OLD_PG] = "((SELECT CAST(system_identifier AS TEXT) FROM "
                   "pg_control_system()) || '/' || CASE WHEN "
                   "pg_is_in_recovery() THEN 'recovery' ELSE "
                   "SUBSTR(pg_walfile_name(pg_current_wal_insert_lsn()), 1, "
                   "8) END)",
        [OLD_MARIADB] = "IF(@@wsrep_on, (SELECT VARIABLE_VALUE FROM "
                        "information_schema.GLOBAL_STATUS WHERE "
                        "VARIABLE_NAME = 'WSREP_CLUSTER_STATE_UUID'), "
                        "CONCAT(@@hostname, ':', @@port, '/', @@server_id))",
    };
    static const char *const names[] = {"{prefix}", "{version}", "{ns}",
                                        "{epoch}", "{opts}"};
    char v[16];
    const char *values[] = {p, v, ns, epoch[d],
                            d == OLD_MARIADB
                                ? " ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 "
                                  "COLLATE = utf8mb4_bin"
                                : ""};
    size_t n = 0;

    snprintf(v, sizeof(v), "%d", version);
    while (*sql != '\0') {
        const char *text = sql;
        size_t len = 1, skip = 1;

        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
            if (strncmp(sql, names[k], strlen(names[k])) == 0) {
                assert_non_null(values[k]);
                text = values[k];
                len = strlen(text);
                skip = strlen(names[k]);
            }
        }
        if (n + len >= cap)
            fail_msg("statement too long: %.60s...", out);
        memcpy(out + n, text, len);
        n += len;
        sql += skip;
    }
    out[n] = '\0';
}

/* Creates the tables of schema version `version` of the dialect under
 * test with prefix p, and the lease row of namespace ns at term 41, as a
 * site that ran that release has them. */
static void create_old_tables(const char *p, const char *ns, int version) {
    enum old_dialect d = dialect_under_test();
    char sql[1024];
    struct raw r;

    raw_open(&r);
    for (size_t i = 0; i < sizeof(old_schema) / sizeof(old_schema[0]); i++) {
        int since = old_schema[i].since[d];

        if (since == 0 || since > version)
            continue;
        old_sql(sql, sizeof(sql), old_schema[i].sql, p, ns, version, d);
        if (!raw_exec(&r, sql, NULL))
            fail_msg("creating version-%d tables: %s", version, sql);
    }
    raw_close(&r);
}

static void raw_run(const char *sql, int64_t *first);

/* Tables of every earlier schema version of the dialect: refused with
 * LeaderCreateSchema=no (naming their version, changing nothing),
 * upgraded at connect otherwise, in place; the namespace's terms go on
 * from the old row, fires are claimed and the election log is written. */
void earlier_schema_versions_are_upgraded(void **state) {
    char prefix[64], ns[64], table[96], sql[256], err[512] = "", what[32];
    odbc_leader_t *h;
    struct elog l;
    int64_t n;
    char *cfg;
    int rc;

    (void)state;
    for (int v = 1; v < current_schema_version(); v++) {
        snprintf(prefix, sizeof(prefix), "v%dx%ld_", v, (long)getpid());
        snprintf(what, sizeof(what), "upgrade-v%d", v);
        ns_name(ns, sizeof(ns), what);
        create_old_tables(prefix, ns, v);
        /* the newest table */
        snprintf(table, sizeof(table), "%smember", prefix);
        snprintf(sql, sizeof(sql), "SELECT MAX(version) FROM %sschema", prefix);

        h = NULL;
        cfg = config("LeaderNamespace=%s;LeaderTablePrefix=%s;"
                     "LeaderCreateSchema=no",
                     ns, prefix);
        rc = odbc_leader_create(&h, cfg, NULL, err, sizeof(err));
        test_free(cfg);
        assert_int_equal(rc, ODBC_LEADER_ESCHEMA);
        assert_null(h);
        snprintf(what, sizeof(what), "schema version %d ", v);
        if (strstr(err, what) == NULL ||
            strstr(err, "odbc-leader schema --upgrade") == NULL)
            fail_msg("version %d refused with: %s", v, err);
        assert_false(table_exists(table));
        raw_run(sql, &n);
        assert_int_equal(n, v);

        cfg = config("LeaderNamespace=%s;LeaderTablePrefix=%s", ns, prefix);
        h = make(cfg);
        test_free(cfg);
        raw_run(sql, &n);
        if (n != current_schema_version())
            fail_msg("version %d upgraded to %lld", v, (long long)n);
        snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM %sschema", prefix);
        raw_run(sql, &n);
        assert_int_equal(n, 1); /* one row, upgraded in place */
        /* the old row's next term; a fire; the term's election row */
        rc = odbc_leader_tick(h, NULL);
        if (rc != ODBC_LEADER_LEADER || odbc_leader_term(h) != 42)
            fail_msg("tables of version %d: tick %d (%s), term %lld", v, rc,
                     odbc_leader_strerror(rc), (long long)odbc_leader_term(h));
        rc = odbc_leader_claim(h, "j", 0);
        if (rc != 1)
            fail_msg("tables of version %d: claim %d (%s)", v, rc,
                     odbc_leader_strerror(rc));
        /* a claim with a schedule records it, in an old job row too */
        assert_int_equal(
            odbc_leader_set_schedule(h, "j", "every 60s", "", "upgrade-test"),
            0);
        rc = odbc_leader_claim(h, "j", (int64_t)time(NULL) * 1000);
        if (rc != 1)
            fail_msg("tables of version %d: claim with a schedule %d (%s)", v,
                     rc, odbc_leader_strerror(rc));
        assert_int_equal(odbc_leader_list_schedules(h, NULL, NULL), 1);
        assert_int_equal(read_elog(h, &l), 1);
        expect_term(&l, 0, 42, odbc_leader_id(h), "", "");
        odbc_leader_destroy(h);

        /* a second connect finds the current version; the term ended */
        cfg = config("LeaderNamespace=%s;LeaderTablePrefix=%s;"
                     "LeaderCreateSchema=no",
                     ns, prefix);
        h = make(cfg);
        test_free(cfg);
        assert_int_equal(read_elog(h, &l), 1);
        assert_string_equal(l.e[0].ended_how, "resigned");
        odbc_leader_destroy(h);
    }
}

/* Attempts every 50 ms (for at most 20 s) until db wins, each time
 * passing the row the previous answer showed as the watched one (res on
 * entry: an answer of db's; the local floor of the watch is the elector's,
 * not tested here); res gets the winning result. */
static void attempt_until_won(struct odbc_leader__db *db,
                              struct odbc_leader__result *res) {
    int64_t t0 = mono_ms();

    do {
        sleep_ms(50);
        assert_int_equal(
            odbc_leader__db_attempt(db, res->term, res->expires_at_ms, res), 0);
    } while (!res->won && mono_ms() - t0 < 20000);
    assert_true(res->won);
}

/* Runs sql on a new raw connection; fails the test when it fails. A
 * returned row's first column goes to *first (if given). */
static void raw_run(const char *sql, int64_t *first) {
    struct raw r;

    raw_open(&r);
    if (!raw_exec(&r, sql, first))
        fail_msg("%s failed", sql);
    raw_close(&r);
}

/* Rows as a promoted standby or a restored copy has them (docs/protocol.md,
 * "Database epochs"), staged by writing another epoch into them: a lease
 * row of another epoch cannot be renewed and is not taken before one TTL
 * of this clock has passed, with a term above the old one; when the schema
 * row says the database changed epochs, a namespace's first row is
 * quarantined the same way, until one TTL after the change was seen. New
 * tables are settled from the start. */
void rows_of_another_epoch_are_quarantined(void **state) {
    char prefix[64], extra[192], ns[64], ns2[64], ns3[64], ns4[64], sql[256];
    struct odbc_leader__config ca, cb, cc, cd, ce;
    struct odbc_leader__db *a, *b, *c, *d, *e;
    struct odbc_leader__result res, q;
    int64_t t1, n = -1;

    (void)state;
    if (dialect_under_test() == OLD_SQLITE ||
        dialect_under_test() == OLD_GENERIC)
        skip(); /* no epochs: SQLite and the generic dialect */
    snprintf(prefix, sizeof(prefix), "ep%ld_", (long)getpid());
    snprintf(extra, sizeof(extra),
             "LeaderTablePrefix=%s;LeaderTTL=1500;LeaderRenewInterval=500;"
             "LeaderSafetyMargin=200",
             prefix);
    ns_name(ns, sizeof(ns), "epoch");
    a = port_open(&ca, ns, "cand-a", extra);
    b = port_open(&cb, ns, "cand-b", extra);
    assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
    assert_true(res.won); /* new tables: won at once */
    t1 = res.term;

    snprintf(sql, sizeof(sql),
             "UPDATE %slease SET epoch = 'elsewhere' WHERE namespace = '%s'",
             prefix, ns);
    raw_run(sql, NULL);
    assert_int_equal(odbc_leader__db_renew(a, t1, &res), 0);
    assert_false(res.found);
    assert_int_equal(odbc_leader__db_attempt(b, 0, 0, &q), 0);
    assert_false(q.won);
    assert_string_equal(q.leader_id, "");
    assert_true(q.term > t1);
    assert_true(q.term >= q.now_ms);
    assert_int_equal(q.expires_at_ms, q.now_ms + 1500);
    assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
    assert_false(res.won); /* reserved for nobody, not even its old holder */
    /* once it ran out in database time, only a watched row is taken */
    sleep_ms(1600);
    assert_int_equal(odbc_leader__db_attempt(b, 0, 0, &res), 0);
    assert_false(res.won);
    assert_string_equal(res.leader_id, "");
    assert_true(res.expires_at_ms <= res.now_ms);
    res = q;
    attempt_until_won(b, &res);
    assert_true(res.now_ms >= q.expires_at_ms);
    assert_int_equal(res.term, q.term + 1);

    /* a promoted copy that lacks the namespace's row */
    snprintf(sql, sizeof(sql), "UPDATE %sschema SET epoch = 'elsewhere'",
             prefix);
    raw_run(sql, NULL);
    ns_name(ns2, sizeof(ns2), "epoch2");
    ns_name(ns3, sizeof(ns3), "epoch3");
    ns_name(ns4, sizeof(ns4), "epoch4");
    c = port_open(&cc, ns2, "cand-c", extra);
    d = port_open(&cd, ns3, "cand-d", extra);
    assert_int_equal(odbc_leader__db_attempt(c, 0, 0, &q), 0);
    assert_false(q.won);
    assert_string_equal(q.leader_id, "");
    assert_int_equal(q.term, q.now_ms);
    assert_int_equal(q.expires_at_ms, q.now_ms + 1500);
    snprintf(sql, sizeof(sql),
             "SELECT COUNT(*) FROM %sschema WHERE epoch = 'elsewhere'", prefix);
    raw_run(sql, &n);
    assert_int_equal(n, 0); /* the change is recorded */
    /* within one TTL of it, any namespace's first row waits */
    assert_int_equal(odbc_leader__db_attempt(d, 0, 0, &res), 0);
    assert_false(res.won);
    assert_string_equal(res.leader_id, "");
    res = q;
    attempt_until_won(c, &res);
    assert_true(res.now_ms >= q.expires_at_ms);
    assert_int_equal(res.term, q.term + 1);
    /* after it, a first row is won at once again */
    e = port_open(&ce, ns4, "cand-e", extra);
    assert_int_equal(odbc_leader__db_attempt(e, 0, 0, &res), 0);
    assert_true(res.won);
    port_close(a, &ca);
    port_close(b, &cb);
    port_close(c, &cc);
    port_close(d, &cd);
    port_close(e, &ce);
}

/* The fence of docs/fencing.md, taken from the dialect: a leader that
 * stopped ticking past its lease (a pause) has its fenced write refused
 * once another candidate took over; the new leader's write applies. */
void fenced_write_is_refused_after_takeover(void **state) {
    char ns[64], table[64], sql[256], fence[1024];
    odbc_leader_t *a, *b;
    int64_t ta, tb, v = 0;
    struct raw r;

    (void)state;
    printed_fence(fence, sizeof(fence));
    ns_name(ns, sizeof(ns), "fence");
    snprintf(table, sizeof(table), "fenced%ld", (long)getpid());
    raw_open(&r);
    snprintf(sql, sizeof(sql), "CREATE TABLE %s (id INTEGER, v INTEGER)",
             table);
    assert_true(raw_exec(&r, sql, NULL));
    snprintf(sql, sizeof(sql), "INSERT INTO %s VALUES (1, 0)", table);
    assert_true(raw_exec(&r, sql, NULL));

    a = make_ns(ns, "LeaderTTL=1000;LeaderSafetyMargin=200");
    b = make_ns(ns, "LeaderTTL=1000;LeaderSafetyMargin=200");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    /* b follows a healthy lease (a candidate whose first sight is an
     * expired one does not trust a takeover for one TTL: protocol.md) */
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
    ta = odbc_leader_term(a);
    assert_int_equal(fenced_update(&r, table, fence, ns, ta), 1);
    /* a pauses: no tick past its lease; b takes over */
    sleep_ms(1100);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_LEADER);
    tb = odbc_leader_term(b);
    assert_true(tb > ta);
    /* a wakes up and writes with its old term: refused */
    assert_int_equal(fenced_update(&r, table, fence, ns, ta), 0);
    assert_int_equal(fenced_update(&r, table, fence, ns, tb), 1);
    /* after b resigns, its term no longer writes either */
    assert_int_equal(odbc_leader_resign(b), 0);
    assert_int_equal(fenced_update(&r, table, fence, ns, tb), 0);
    snprintf(sql, sizeof(sql), "SELECT v FROM %s WHERE id = 1", table);
    assert_true(raw_exec(&r, sql, &v));
    assert_int_equal(v, 2);
    snprintf(sql, sizeof(sql), "DROP TABLE %s", table);
    raw_exec(&r, sql, NULL);
    raw_close(&r);
    odbc_leader_destroy(a);
    odbc_leader_destroy(b);
}
