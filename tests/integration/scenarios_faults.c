/* SPDX-License-Identifier: MIT */
/*
 * scenarios_faults.c: the scenarios of faults and refusals: a server
 * restart (the leader reconnects, a claim is tried again), a claim whose
 * answer is lost, an account of least privilege, bad settings, missing
 * tables or a schema of another version, an unreachable database.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "scenarios.h"

void reconnects_after_server_restart(void **state) {
    const char *cmd = getenv("OL_RESTART_CMD");
    char ns[64];
    odbc_leader_t *a;
    int64_t term;
    int errors = 0, rc = 0;

    (void)state;
    if (cmd == NULL)
        skip(); /* SQLite has no server to restart */
    ns_name(ns, sizeof(ns), "restart");
    a = make_ns(ns, "LeaderTTL=30000;LeaderRenewInterval=500");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    term = odbc_leader_term(a);
    assert_int_equal(system(cmd), 0);
    for (int i = 0; i < 400; i++) {
        uint32_t next = 0;

        rc = odbc_leader_tick(a, &next);
        if (rc < 0)
            errors++;
        else if (errors > 0 && rc == ODBC_LEADER_LEADER)
            break;
        sleep_ms(next > 100 ? 100 : next);
    }
    assert_true(errors > 0); /* the restart was noticed */
    assert_int_equal(rc, ODBC_LEADER_LEADER);
    /* the lease outlived the restart: the same term was renewed */
    assert_int_equal(odbc_leader_term(a), term);
    odbc_leader_destroy(a);
}

/*
 * A claim is the first call after a server restart, on a connection the
 * restart killed. The handle (and a group member) still leads within its
 * trust window, so the claim tries once more on a new connection: the
 * first attempt failed before the server could run it, and the fire is
 * claimed (1), once (0 the next time), in the term that leads.
 */
void claim_after_server_restart_is_tried_again(void **state) {
    const char *cmd = getenv("OL_RESTART_CMD");
    char ns[64], grp[64];
    struct odbc_leader_fire f;
    odbc_leader_t *a;
    odbc_leader_group_t *g;

    (void)state;
    if (cmd == NULL)
        skip(); /* SQLite has no server to restart */
    ns_name(ns, sizeof(ns), "claimrst");
    ns_name(grp, sizeof(grp), "claimrstg");
    a = make_ns(ns, "LeaderTTL=30000;LeaderRenewInterval=500");
    g = make_member(grp, "g1",
                    "LeaderShards=2;LeaderTTL=30000;LeaderRenewInterval=500");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_true(tick_members(&g, 1, 50, 10000, all_led));
    assert_int_equal(odbc_leader_claim(a, "before", 0), 1);
    assert_int_equal(odbc_leader_group_claim(g, "before", 0), 1);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(odbc_leader_claim(a, "after", 0), 1);
    assert_int_equal(odbc_leader_claim(a, "after", 0), 0);
    assert_int_equal(odbc_leader_read_fire(a, "after", 0, &f), 1);
    assert_int_equal(f.term, odbc_leader_term(a));
    assert_string_equal(f.claimed_by, odbc_leader_id(a));
    assert_int_equal(odbc_leader_group_claim(g, "after", 0), 1);
    assert_int_equal(odbc_leader_group_claim(g, "after", 0), 0);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    odbc_leader_group_destroy(g);
    odbc_leader_destroy(a);
}

/* Log callback of claim_answer_lost_is_not_claimed_twice: counts the
 * warnings that a claim's outcome is unknown (ctx: an int). */
static void count_unknown_claims(void *ctx, int level, const char *msg) {
    if (level == LOG_WARNING && strstr(msg, "outcome is unknown") != NULL)
        ++*(int *)ctx;
    if (getenv("OL_DEBUG") != NULL)
        debug_log(NULL, level, msg);
}

/* Tells the fault proxy to lose the answer to the next request it
 * forwards (fault-proxy.c, SIGWINCH). */
static void lose_next_answer(pid_t proxy) {
    assert_int_equal(kill(proxy, SIGWINCH), 0);
}

/*
 * A claim whose answer is lost. The handle reaches the database through
 * the fault proxy (OL_LOSE_CONNECT, its pid in OL_LOSE_PID), which, when
 * told, forwards a claim's request and drops the server's answer with the
 * connection: the server ran the claim, the handle never learns how it
 * went. The library tries once more on a new connection; that second try
 * finds the fire claimed in the handle's own term, and the library cannot
 * tell whether its first try or an earlier claim of the same process made
 * that row. So a claim of a fire this process already claimed (and ran)
 * must not answer 1, which would run it twice: it returns the first try's
 * error and warns. A new fire (the claim is one statement, committed by
 * the server before the answer was lost) is left claimed in the leading
 * term and unrun the same way: the price of never running a fire twice.
 * A group member's claims (odbc_leader_group_claim) must do the same.
 */
void claim_answer_lost_is_not_claimed_twice(void **state) {
    const char *conn = getenv("OL_LOSE_CONNECT"), *pid = getenv("OL_LOSE_PID");
    const char *extra = getenv("OL_LEADER_EXTRA");
    char ns[64], cfg[1024], err[512] = "";
    struct odbc_leader_callbacks cb = {0};
    struct odbc_leader_fire f;
    odbc_leader_t *a = NULL;
    odbc_leader_group_t *g = NULL;
    pid_t proxy;
    int warned = 0, rc;

    (void)state;
    if (conn == NULL || pid == NULL)
        skip(); /* no server (SQLite), so no proxy in front of one */
    proxy = (pid_t)atol(pid);
    ns_name(ns, sizeof(ns), "claimlost");
    snprintf(cfg, sizeof(cfg),
             "%s;%s;LeaderNamespace=%s;LeaderTTL=30000;LeaderRenewInterval=500",
             conn, extra != NULL ? extra : "", ns);
    cb.struct_size = sizeof(cb);
    cb.log = count_unknown_claims;
    cb.ctx = &warned;
    rc = odbc_leader_create(&a, cfg, &cb, err, sizeof(err));
    if (rc != 0)
        fail_msg("odbc_leader_create: %s (%s)", err, odbc_leader_strerror(rc));
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_claim(a, "again", 0), 1);

    /* The same fire again, the answer lost: never 1. */
    lose_next_answer(proxy);
    rc = odbc_leader_claim(a, "again", 0);
    assert_true(rc == ODBC_LEADER_ECONNLOST || rc == ODBC_LEADER_EUNKNOWN);
    assert_int_equal(warned, 1);
    assert_int_equal(odbc_leader_claim(a, "again", 0), 0);

    /* A new fire, the answer lost. */
    lose_next_answer(proxy);
    rc = odbc_leader_claim(a, "new", 0);
    assert_true(rc == ODBC_LEADER_ECONNLOST || rc == ODBC_LEADER_EUNKNOWN);
    assert_int_equal(warned, 2);
    assert_int_equal(odbc_leader_claim(a, "new", 0), 0);
    assert_int_equal(odbc_leader_read_fire(a, "new", 0, &f), 1);
    assert_int_equal(f.term, odbc_leader_term(a));
    assert_string_equal(f.claimed_by, odbc_leader_id(a));
    assert_int_equal(f.finished_at_ms, 0);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    odbc_leader_destroy(a);

    /* The same for a group member leading both shards of its group. */
    ns_name(ns, sizeof(ns), "claimlostg");
    snprintf(cfg, sizeof(cfg),
             "%s;%s;LeaderNamespace=%s;LeaderId=g1;LeaderShards=2;"
             "LeaderTTL=30000;LeaderRenewInterval=500",
             conn, extra != NULL ? extra : "", ns);
    warned = 0;
    rc = odbc_leader_group_create(&g, cfg, &cb, err, sizeof(err));
    if (rc != 0)
        fail_msg("odbc_leader_group_create: %s (%s)", err,
                 odbc_leader_strerror(rc));
    assert_true(tick_members(&g, 1, 50, 10000, all_led));
    assert_int_equal(odbc_leader_group_claim(g, "again", 0), 1);
    lose_next_answer(proxy);
    rc = odbc_leader_group_claim(g, "again", 0);
    assert_true(rc == ODBC_LEADER_ECONNLOST || rc == ODBC_LEADER_EUNKNOWN);
    assert_int_equal(warned, 1);
    /* The member closed its (healthy) connection on that error and opens
     * a new one on its next call: this claim does, so the next lost answer
     * is a claim's, not the new connection's first query. */
    assert_int_equal(odbc_leader_group_claim(g, "again", 0), 0);
    lose_next_answer(proxy);
    rc = odbc_leader_group_claim(g, "new", 0);
    assert_true(rc == ODBC_LEADER_ECONNLOST || rc == ODBC_LEADER_EUNKNOWN);
    assert_int_equal(warned, 2);
    assert_int_equal(odbc_leader_group_claim(g, "again", 0), 0);
    assert_int_equal(odbc_leader_group_claim(g, "new", 0), 0);
    odbc_leader_group_destroy(g);
}

/*
 * Least privilege: the tables were created by the admin account (the
 * suite's own); OL_LIMITED_CONNECT logs in as an account that may only
 * SELECT, INSERT, UPDATE and DELETE on them. Such candidates elect,
 * renew and resign with LeaderCreateSchema=no; asked to create tables
 * they cannot, they fail with the database's reason and create nothing.
 */
void least_privilege_candidates(void **state) {
    const char *limited = getenv("OL_LIMITED_CONNECT");
    const char *extra = getenv("OL_LEADER_EXTRA");
    char ns[64], cfg[1024], err[512] = "", prefix[64], table[96];
    odbc_leader_t *a = NULL, *b = NULL, *admin;
    int64_t term;
    int rc;

    (void)state;
    if (limited == NULL)
        skip(); /* SQLite has no accounts */
    ns_name(ns, sizeof(ns), "leastpriv");
    admin = make_ns(ns, ""); /* makes sure the tables exist */
    odbc_leader_destroy(admin);
    snprintf(cfg, sizeof(cfg), "%s;%s;LeaderNamespace=%s;LeaderCreateSchema=no",
             limited, extra != NULL ? extra : "", ns);
    assert_int_equal(odbc_leader_create(&a, cfg, NULL, err, sizeof(err)), 0);
    assert_int_equal(odbc_leader_create(&b, cfg, NULL, err, sizeof(err)), 0);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
    term = odbc_leader_term(a);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    odbc_leader_destroy(a); /* resigns and unregisters */
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_term(b), term + 1);
    odbc_leader_destroy(b);

    snprintf(prefix, sizeof(prefix), "lp%ld_", (long)getpid());
    snprintf(cfg, sizeof(cfg), "%s;%s;LeaderTablePrefix=%s", limited,
             extra != NULL ? extra : "", prefix);
    a = (odbc_leader_t *)1;
    rc = odbc_leader_create(&a, cfg, NULL, err, sizeof(err));
    assert_true(rc < 0);
    assert_null(a);
    assert_non_null(strstr(err, "creating the tables failed"));
    snprintf(table, sizeof(table), "%sschema", prefix);
    assert_false(table_exists(table));
}

void bad_config_gives_clear_errors_and_writes_nothing(void **state) {
    static const struct {
        const char *extra;
        const char *expect;
    } cases[] = {
        {"LeaderBogus=1", "LeaderBogus"},
        {"LeaderTTL=15s", "LeaderTTL"},
        {"LeaderTTL=3000;LeaderSafetyMargin=3000", "LeaderSafetyMargin"},
        {"LeaderNamespace=a b", "LeaderNamespace"},
        {"LeaderTablePrefix=x;y", ""},
        {"LeaderTablePrefix=1bad", "LeaderTablePrefix"},
        {"LeaderDialect=nosuchdialect", "nosuchdialect"},
    };
    char prefix[64];

    (void)state;
    snprintf(prefix, sizeof(prefix), "bad%ld_", (long)getpid());
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *cfg = config("LeaderTablePrefix=%s;%s", prefix, cases[i].extra);
        char err[512] = "";
        odbc_leader_t *h = (odbc_leader_t *)1;
        int rc = odbc_leader_create(&h, cfg, NULL, err, sizeof(err));

        assert_true(rc < 0);
        assert_null(h);
        assert_true(err[0] != '\0');
        assert_non_null(strstr(err, cases[i].expect));
        test_free(cfg);
    }
    {
        char table[96];

        snprintf(table, sizeof(table), "%slease", prefix);
        assert_false(table_exists(table));
        snprintf(table, sizeof(table), "%sschema", prefix);
        assert_false(table_exists(table));
    }
}

void missing_tables_and_wrong_version_are_refused(void **state) {
    char prefix[64], table[96], sql[256], err[512] = "";
    odbc_leader_t *h = NULL;
    struct raw r;
    char *cfg;
    int rc;

    (void)state;
    snprintf(prefix, sizeof(prefix), "nt%ld_", (long)getpid());
    cfg = config("LeaderTablePrefix=%s;LeaderCreateSchema=no", prefix);
    rc = odbc_leader_create(&h, cfg, NULL, err, sizeof(err));
    test_free(cfg);
    assert_int_equal(rc, ODBC_LEADER_ENOTABLE);
    assert_non_null(strstr(err, "LeaderCreateSchema=no"));
    snprintf(table, sizeof(table), "%sschema", prefix);
    assert_false(table_exists(table));

    /* create them, then pretend a newer release changed the schema */
    cfg = config("LeaderTablePrefix=%s", prefix);
    h = make(cfg);
    odbc_leader_destroy(h);
    raw_open(&r);
    snprintf(sql, sizeof(sql), "UPDATE %sschema SET version = 99", prefix);
    assert_true(raw_exec(&r, sql, NULL));
    raw_close(&r);
    h = NULL;
    rc = odbc_leader_create(&h, cfg, NULL, err, sizeof(err));
    test_free(cfg);
    assert_int_equal(rc, ODBC_LEADER_ESCHEMA);
    assert_null(h);
    assert_non_null(strstr(err, "99"));
}

void unreachable_database_gives_clear_error(void **state) {
    const char *down = getenv("OL_DOWN_CONNECT");
    char cfg[1024], err[512] = "";
    odbc_leader_t *h = (odbc_leader_t *)1;
    int rc;

    (void)state;
    assert_non_null(down);
    snprintf(cfg, sizeof(cfg), "%s;PWD=sekrit-password", down);
    rc = odbc_leader_create(&h, cfg, NULL, err, sizeof(err));
    assert_int_equal(rc, ODBC_LEADER_ECONNECT);
    assert_null(h);
    assert_non_null(strstr(err, "cannot connect"));
    assert_null(strstr(err, "sekrit-password"));

    /* an odbc.ini DSN that does not exist */
    h = (odbc_leader_t *)1;
    rc = odbc_leader_create(&h, "DSN=no-such-dsn-here", NULL, err, sizeof(err));
    assert_int_equal(rc, ODBC_LEADER_ECONNECT);
    assert_null(h);
    assert_non_null(strstr(err, "no-such-dsn-here"));
}
