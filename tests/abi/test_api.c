/* SPDX-License-Identifier: MIT */
/*
 * test_api.c: the library's public API as a host built against another
 * version of odbc_leader.h sees it, linked against the shared library:
 * a callbacks struct shorter (an older host) or longer (a newer host)
 * than the library's, an unset struct_size, the version macros, the error
 * classes, and the last error with the driver's SQLSTATE.
 *
 * Usage: test_api DATABASE_FILE (a SQLite file; tests/abi/api.test sets up
 * the odbcinst.ini that names the SQLite3 driver).
 */
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

#include "odbc_leader.h"

#define MAX_TICKS 50

static const char *db_file; /* argv[1], borrowed */

/* What the callbacks saw. */
struct seen {
    int logs;
    int changes;
    int poisoned; /* a member past the host's struct_size was called */
};

static void on_log(void *ctx, int level, const char *msg) {
    struct seen *s = ctx;

    (void)level;
    (void)msg;
    s->logs++;
}

static void on_change(void *ctx, int is_leader, int64_t term,
                      const char *leader_id) {
    struct seen *s = ctx;

    (void)is_leader;
    (void)term;
    (void)leader_id;
    s->changes++;
}

/* Stands where an older host's struct ends: the library must never read
 * it as on_change. */
static void poison(void *ctx, int is_leader, int64_t term,
                   const char *leader_id) {
    struct seen *s = ctx;

    (void)is_leader;
    (void)term;
    (void)leader_id;
    s->poisoned++;
}

/* The callbacks struct of a host built before on_change existed. */
struct old_callbacks {
    uint32_t struct_size;
    void *ctx;
    void (*log)(void *ctx, int level, const char *msg);
};

/* An older host's struct followed by bytes that look like a callback. */
struct old_host {
    struct old_callbacks cb;
    void (*after)(void *ctx, int is_leader, int64_t term,
                  const char *leader_id);
};

/* A newer host's struct: one member more than this library knows. */
struct new_host {
    struct odbc_leader_callbacks cb;
    void (*on_future)(void *ctx);
};

/* The configuration of namespace ns on the test's SQLite file; written
 * into buf (the caller's). Returns buf. */
static const char *config(char *buf, size_t len, const char *ns) {
    snprintf(buf, len,
             "Driver=SQLite3;Database=%s;LeaderNamespace=%s;LeaderTTL=3000",
             db_file, ns);
    return buf;
}

/* Ticks h until it leads; fails the test after MAX_TICKS. */
static void tick_until_leader(odbc_leader_t *h) {
    for (int i = 0; i < MAX_TICKS; i++) {
        uint32_t next = 0;
        int rc = odbc_leader_tick(h, &next);
        struct timespec ts = {0, 50 * 1000000L};

        if (rc == ODBC_LEADER_LEADER)
            return;
        nanosleep(&ts, NULL);
    }
    fail_msg("no leadership after %d ticks", MAX_TICKS);
}

static void test_version_macros(void **state) {
    char want[32];

    (void)state;
    assert_int_equal(ODBC_LEADER_VERSION_NUM,
                     (ODBC_LEADER_VERSION_MAJOR << 16) |
                         (ODBC_LEADER_VERSION_MINOR << 8) |
                         ODBC_LEADER_VERSION_PATCH);
    snprintf(want, sizeof(want), "%d.%d.%d", ODBC_LEADER_VERSION_MAJOR,
             ODBC_LEADER_VERSION_MINOR, ODBC_LEADER_VERSION_PATCH);
    assert_string_equal(ODBC_LEADER_VERSION, want);
    assert_string_equal(odbc_leader_version(), ODBC_LEADER_VERSION);
}

static void test_struct_size_unset(void **state) {
    struct seen s = {0};
    struct odbc_leader_callbacks cb = {0};
    odbc_leader_t *h = (odbc_leader_t *)&s;
    char conf[512], err[256] = "";

    (void)state;
    cb.ctx = &s;
    cb.log = on_log;
    assert_int_equal(odbc_leader_create(&h, config(conf, sizeof(conf), "u"),
                                        &cb, err, sizeof(err)),
                     ODBC_LEADER_EINVAL);
    assert_null(h);
    assert_non_null(strstr(err, "struct_size"));
    assert_int_equal(s.logs, 0);
}

static void test_shorter_callbacks(void **state) {
    struct seen s = {0};
    struct old_host old;
    odbc_leader_t *h = NULL;
    char conf[512], err[256] = "";
    int rc;

    (void)state;
    memset(&old, 0, sizeof(old));
    old.cb.struct_size = sizeof(old.cb);
    old.cb.ctx = &s;
    old.cb.log = on_log;
    old.after = poison;
    /* The layout this test relies on: on_change sits where the old
     * struct ends. */
    assert_int_equal(offsetof(struct odbc_leader_callbacks, on_change),
                     offsetof(struct old_host, after));
    rc = odbc_leader_create(&h, config(conf, sizeof(conf), "old"),
                            (const struct odbc_leader_callbacks *)&old, err,
                            sizeof(err));
    assert_int_equal(rc, 0);
    tick_until_leader(h);
    odbc_leader_destroy(h);
    assert_true(s.logs > 0);
    assert_int_equal(s.poisoned, 0);
}

static void test_longer_callbacks(void **state) {
    struct seen s = {0};
    struct new_host nh;
    odbc_leader_t *h = NULL;
    char conf[512], err[256] = "";

    (void)state;
    memset(&nh, 0, sizeof(nh));
    nh.cb.struct_size = sizeof(nh);
    nh.cb.ctx = &s;
    nh.cb.log = on_log;
    nh.cb.on_change = on_change;
    assert_int_equal(odbc_leader_create(&h, config(conf, sizeof(conf), "new"),
                                        &nh.cb, err, sizeof(err)),
                     0);
    tick_until_leader(h);
    odbc_leader_destroy(h);
    assert_true(s.logs > 0);
    assert_true(s.changes >= 2); /* became leader, then resigned */
}

static void test_error_classes(void **state) {
    (void)state;
    assert_int_equal(odbc_leader_error_class(0), ODBC_LEADER_CLASS_NONE);
    assert_int_equal(odbc_leader_error_class(ODBC_LEADER_LEADER),
                     ODBC_LEADER_CLASS_NONE);
    for (int rc = ODBC_LEADER_ENOELECTIONS; rc < 0; rc++) {
        int c = odbc_leader_error_class(rc);

        assert_in_range(c, ODBC_LEADER_CLASS_TRANSIENT,
                        ODBC_LEADER_CLASS_FATAL);
    }
    assert_int_equal(odbc_leader_error_class(ODBC_LEADER_ECONNLOST),
                     ODBC_LEADER_CLASS_TRANSIENT);
    assert_int_equal(odbc_leader_error_class(ODBC_LEADER_EBACKOFF),
                     ODBC_LEADER_CLASS_TRANSIENT);
    assert_int_equal(odbc_leader_error_class(ODBC_LEADER_ECONFIG),
                     ODBC_LEADER_CLASS_CONFIG);
    assert_int_equal(odbc_leader_error_class(ODBC_LEADER_ENOTABLE),
                     ODBC_LEADER_CLASS_CONFIG);
    assert_int_equal(odbc_leader_error_class(ODBC_LEADER_EINVAL),
                     ODBC_LEADER_CLASS_FATAL);
    assert_int_equal(odbc_leader_error_class(-999), ODBC_LEADER_CLASS_FATAL);
}

/* Drops table name of the test's SQLite file with a connection of its
 * own. */
static void drop_table(const char *name) {
    SQLHENV env = SQL_NULL_HENV;
    SQLHDBC dbc = SQL_NULL_HDBC;
    SQLHSTMT st = SQL_NULL_HSTMT;
    char conn[512], sql[128];

    snprintf(conn, sizeof(conn), "Driver=SQLite3;Database=%s", db_file);
    snprintf(sql, sizeof(sql), "DROP TABLE %s", name);
    assert_true(
        SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &env)));
    SQLSetEnvAttr(env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0);
    assert_true(SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_DBC, env, &dbc)));
    assert_true(
        SQL_SUCCEEDED(SQLDriverConnect(dbc, NULL, (SQLCHAR *)conn, SQL_NTS,
                                       NULL, 0, NULL, SQL_DRIVER_NOPROMPT)));
    assert_true(SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_STMT, dbc, &st)));
    assert_true(SQL_SUCCEEDED(SQLExecDirect(st, (SQLCHAR *)sql, SQL_NTS)));
    SQLFreeHandle(SQL_HANDLE_STMT, st);
    SQLDisconnect(dbc);
    SQLFreeHandle(SQL_HANDLE_DBC, dbc);
    SQLFreeHandle(SQL_HANDLE_ENV, env);
}

/* Ignores a candidate. */
static void skip_candidate(void *ctx, const struct odbc_leader_candidate *c) {
    (void)ctx;
    (void)c;
}

static void test_last_error(void **state) {
    struct odbc_leader_error_info e;
    struct odbc_leader_lease lease;
    odbc_leader_t *h = NULL;
    char conf[512], err[256] = "";

    (void)state;
    snprintf(conf, sizeof(conf),
             "Driver=SQLite3;Database=%s;LeaderNamespace=le;"
             "LeaderTablePrefix=le_",
             db_file);
    assert_int_equal(odbc_leader_create(&h, conf, NULL, err, sizeof(err)), 0);
    assert_int_equal(odbc_leader_last_error(NULL, &e), ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_last_error(h, NULL), ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_last_error(h, &e), 0);
    assert_int_equal(e.code, 0);

    /* Not leading: the library's own error, no SQLSTATE. */
    assert_int_equal(odbc_leader_claim(h, "job", 1), ODBC_LEADER_ENOTLEADER);
    assert_int_equal(odbc_leader_last_error(h, &e), ODBC_LEADER_ENOTLEADER);
    assert_string_equal(e.sqlstate, "");
    assert_int_equal(e.error_class, ODBC_LEADER_CLASS_TRANSIENT);
    assert_string_equal(e.message,
                        odbc_leader_strerror(ODBC_LEADER_ENOTLEADER));

    /* A table gone: the driver's SQLSTATE and text, a configuration
     * problem. */
    drop_table("le_lease");
    assert_int_equal(odbc_leader_read_lease(h, &lease), ODBC_LEADER_ENOTABLE);
    assert_int_equal(odbc_leader_last_error(h, &e), ODBC_LEADER_ENOTABLE);
    assert_int_equal(e.code, ODBC_LEADER_ENOTABLE);
    assert_int_equal(strlen(e.sqlstate), 5);
    assert_non_null(strstr(e.message, "no such table"));
    assert_int_equal(e.error_class, ODBC_LEADER_CLASS_CONFIG);

    /* A later success keeps it. */
    assert_true(odbc_leader_list_candidates(h, skip_candidate, NULL) >= 0);
    assert_int_equal(odbc_leader_last_error(h, &e), ODBC_LEADER_ENOTABLE);
    odbc_leader_destroy(h);
}

/* struct odbc_leader_fire as hosts built before the fire lifecycle have
 * it, and a guard behind it that the library must not write. */
struct fire_before_lifecycle {
    char job[129];
    int64_t fire_ms;
    int64_t term;
    char claimed_by[129];
    int64_t claimed_at_ms;
    int64_t finished_at_ms;
    int status;
    int64_t db_now_ms;
    unsigned char guard[32];
};

/* A host built before the lifecycle reads a fire into its shorter struct,
 * and an older claim struct (struct_size up to recovering) gets only its
 * own members: neither is written past its end. */
static void test_older_fire_and_claim_structs(void **state) {
    struct fire_before_lifecycle old;
    struct {
        struct odbc_leader_claim c;
        unsigned char guard[32];
    } cl;
    char conf[512];
    odbc_leader_t *h = NULL;
    unsigned char ff[32];
    int64_t fire;

    (void)state;
    assert_int_equal(offsetof(struct fire_before_lifecycle, guard),
                     offsetof(struct odbc_leader_fire, state));
    memset(ff, 0xff, sizeof(ff));
    assert_int_equal(
        odbc_leader_create(&h, config(conf, sizeof(conf), "lc"), NULL, NULL, 0),
        0);
    tick_until_leader(h);
    fire = 1000 * (int64_t)time(NULL);
    memset(&cl, 0xff, sizeof(cl));
    cl.c.struct_size = (uint32_t)offsetof(struct odbc_leader_claim, triggered);
    assert_int_equal(odbc_leader_claim_fire(h, "j", fire, 2, &cl.c),
                     ODBC_LEADER_CLAIM_RUN);
    assert_int_equal(cl.c.attempt, 1);
    assert_int_equal(cl.c.max_attempts, 2);
    assert_int_equal(cl.c.recovering, 0);
    assert_int_equal(cl.c.triggered, -1); /* past struct_size: untouched */
    assert_memory_equal(cl.guard, ff, sizeof(ff));
    memset(&old, 0xff, sizeof(old));
    assert_int_equal(
        odbc_leader_read_fire(h, "j", fire, (struct odbc_leader_fire *)&old),
        1);
    assert_string_equal(old.job, "j");
    assert_int_equal(old.fire_ms, fire);
    assert_memory_equal(old.guard, ff, sizeof(ff));
    odbc_leader_destroy(h);
}

/* The fence predicate from a handle: its dialect's (sqlite here, table
 * prefix odbc_leader_), with two "?", its length first, cut as snprintf
 * cuts; bad arguments refused. */
static void test_fence_sql(void **state) {
    char conf[512], buf[1024], small[7];
    odbc_leader_t *h = NULL;
    int n, marks = 0;

    (void)state;
    assert_int_equal(odbc_leader_fence_sql(NULL, buf, sizeof(buf)),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_group_fence_sql(NULL, buf, sizeof(buf)),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_create(&h, config(conf, sizeof(conf), "fence"),
                                        NULL, NULL, 0),
                     0);
    n = odbc_leader_fence_sql(h, NULL, 0);
    assert_true(n > 0 && (size_t)n < sizeof(buf));
    assert_int_equal(odbc_leader_fence_sql(h, buf, sizeof(buf)), n);
    assert_int_equal(strlen(buf), n);
    assert_non_null(strstr(buf, "SELECT 1 FROM odbc_leader_lease"));
    for (const char *c = buf; *c != '\0'; c++)
        marks += *c == '?';
    assert_int_equal(marks, 2);
    assert_int_equal(odbc_leader_fence_sql(h, small, sizeof(small)), n);
    assert_string_equal(small, "SELECT");
    assert_int_equal(odbc_leader_fence_sql(h, NULL, 5), ODBC_LEADER_EINVAL);
    odbc_leader_destroy(h);
}

/* Schedule identities' calls refuse bad arguments by name, without I/O
 * (the claims' check runs in the scenarios). */
static void test_schedule_args(void **state) {
    char conf[512], zone[64];
    struct odbc_leader_error_info e;
    odbc_leader_t *h = NULL;

    (void)state;
    assert_int_equal(odbc_leader_set_schedule(NULL, "j", "e", "", "x"),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_group_set_schedule(NULL, "j", "e", "", "x"),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_reschedule_job(NULL, "j", NULL),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_list_schedules(NULL, NULL, NULL),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_local_zone(NULL, 0), ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_local_zone(zone, sizeof(zone)), 0);
    assert_int_equal(odbc_leader_create(&h, config(conf, sizeof(conf), "sched"),
                                        NULL, NULL, 0),
                     0);
    assert_int_equal(odbc_leader_set_schedule(h, "j", "e", "Mars/Olympus", "x"),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_last_error(h, &e), ODBC_LEADER_EINVAL);
    assert_non_null(strstr(e.message, "Mars/Olympus"));
    assert_int_equal(odbc_leader_set_schedule(h, "j", "e", "", "x"), 0);
    assert_int_equal(odbc_leader_reschedule_job(h, "j", ""),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_error_class(ODBC_LEADER_ESCHEDULE),
                     ODBC_LEADER_CLASS_CONFIG);
    odbc_leader_destroy(h);
}

/* The catch-up calls refuse bad arguments before any I/O; a job with no
 * fire in the ledger catches up nothing, however old its times. */
static void test_catch_up_args(void **state) {
    struct odbc_leader_catch_up p = {.struct_size = sizeof(p),
                                     .policy = ODBC_LEADER_CATCH_UP_ALL,
                                     .grace_ms = 3600000};
    struct odbc_leader_catch_up old = {.struct_size = sizeof(size_t)};
    int64_t t[] = {1000, 2000, 3000};
    char conf[512];
    size_t first = 7;
    odbc_leader_t *h = NULL;

    (void)state;
    assert_int_equal(odbc_leader_catch_up(NULL, "j", &p, 0, t, 3, &first),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_group_catch_up(NULL, "j", &p, 0, t, 3, &first),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_create(&h, config(conf, sizeof(conf), "catch"),
                                        NULL, NULL, 0),
                     0);
    assert_int_equal(odbc_leader_catch_up(h, "j", &old, 0, t, 3, &first),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_catch_up(h, "", &p, 0, t, 3, &first),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_catch_up(h, "j", &p, 4, t, 3, &first),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_catch_up(h, "j", &p, 0, t, 3, &first), 0);
    assert_int_equal(first, 3);
    assert_int_equal(odbc_leader_catch_up(h, "j", &p,
                                          ODBC_LEADER_CATCH_UP_PRESENT, t, 3,
                                          &first),
                     1);
    assert_int_equal(first, 2);
    odbc_leader_destroy(h);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_macros),
        cmocka_unit_test(test_schedule_args),
        cmocka_unit_test(test_catch_up_args),
        cmocka_unit_test(test_struct_size_unset),
        cmocka_unit_test(test_shorter_callbacks),
        cmocka_unit_test(test_longer_callbacks),
        cmocka_unit_test(test_error_classes),
        cmocka_unit_test(test_last_error),
        cmocka_unit_test(test_older_fire_and_claim_structs),
        cmocka_unit_test(test_fence_sql),
    };

    if (argc != 2) {
        fprintf(stderr, "usage: test_api DATABASE_FILE\n");
        return 2;
    }
    db_file = argv[1];
    return cmocka_run_group_tests(tests, NULL, NULL);
}
