/* SPDX-License-Identifier: MIT */
/*
 * scenarios_lease.c: the scenarios of one namespace's election and lease:
 * one and two candidates, renewal, handover on shutdown, a killed leader,
 * stale terms, the compare-and-set of a takeover, resign requests and
 * handoffs, the trust window, the list of candidates, settings from
 * odbc.ini, the race for a namespace's first row and the follower's
 * wake-up.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <sql.h>
#include <sqlext.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "db.h"
#include "db_lease.h"
#include "dialect.h"
#include "log.h"
#include "scenarios.h"

void one_candidate_becomes_leader(void **state) {
    char ns[64];
    struct odbc_leader_lease lease;
    odbc_leader_t *a;

    (void)state;
    ns_name(ns, sizeof(ns), "one");
    a = make_ns(ns, "");
    assert_false(odbc_leader_is_leader(a));
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_true(odbc_leader_is_leader(a));
    assert_true(odbc_leader_term(a) >= 1);
    assert_int_equal(odbc_leader_read_lease(a, &lease), 0);
    assert_string_equal(lease.leader_id, odbc_leader_id(a));
    assert_int_equal(lease.term, odbc_leader_term(a));
    /* the default TTL, measured in database time */
    assert_true(lease.expires_at_ms - lease.db_now_ms > 10000);
    assert_true(lease.expires_at_ms - lease.db_now_ms <= 15000);
    odbc_leader_destroy(a);
}

void two_candidates_exactly_one_leads(void **state) {
    char ns[64];
    struct odbc_leader_lease lease;
    odbc_leader_t *a, *b;

    (void)state;
    ns_name(ns, sizeof(ns), "two");
    a = make_ns(ns, "LeaderRenewInterval=200");
    b = make_ns(ns, "LeaderRenewInterval=200");
    for (int i = 0; i < 10; i++) {
        odbc_leader_tick(i % 2 ? a : b, NULL);
        odbc_leader_tick(i % 2 ? b : a, NULL);
        assert_int_equal(odbc_leader_is_leader(a) + odbc_leader_is_leader(b),
                         1);
    }
    assert_int_equal(odbc_leader_read_lease(a, &lease), 0);
    assert_string_equal(lease.leader_id,
                        odbc_leader_id(odbc_leader_is_leader(a) ? a : b));
    odbc_leader_destroy(a);
    odbc_leader_destroy(b);
}

void renewing_keeps_the_term(void **state) {
    char ns[64];
    struct odbc_leader_lease before, after;
    odbc_leader_t *a;
    int64_t term;

    (void)state;
    ns_name(ns, sizeof(ns), "renew");
    a = make_ns(ns, "LeaderTTL=3000;LeaderRenewInterval=300");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    term = odbc_leader_term(a);
    odbc_leader_read_lease(a, &before);
    for (int i = 0; i < 5; i++) {
        sleep_ms(300);
        assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
        assert_int_equal(odbc_leader_term(a), term);
    }
    odbc_leader_read_lease(a, &after);
    assert_int_equal(after.term, term);
    assert_true(after.expires_at_ms > before.expires_at_ms);
    odbc_leader_destroy(a);
}

void graceful_shutdown_hands_over_before_expiry(void **state) {
    char ns[64];
    struct odbc_leader_lease lease;
    odbc_leader_t *a, *b;
    int64_t term;

    (void)state;
    ns_name(ns, sizeof(ns), "handover");
    /* a 60 s lease: only the resignation can explain a fast takeover */
    a = make_ns(ns, "LeaderTTL=60000;LeaderRenewInterval=100");
    b = make_ns(ns, "LeaderTTL=60000;LeaderRenewInterval=100");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
    term = odbc_leader_term(a);
    odbc_leader_read_lease(b, &lease);
    assert_true(lease.expires_at_ms - lease.db_now_ms > 50000);
    odbc_leader_destroy(a); /* resigns */
    odbc_leader_read_lease(b, &lease);
    assert_string_equal(lease.leader_id, "");
    assert_int_equal(lease.term, term); /* resign keeps the term number */
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_term(b), term + 1);
    odbc_leader_destroy(b);
}

void killed_leader_is_replaced_after_expiry(void **state) {
    char ns[64];
    struct odbc_leader_lease lease;
    odbc_leader_t *b;
    int fds[2];
    pid_t pid;
    int64_t old_term = 0, old_expiry;
    int won = 0;

    (void)state;
    ns_name(ns, sizeof(ns), "killed");
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char *cfg = config("LeaderNamespace=%s;LeaderTTL=2000", ns);
        odbc_leader_t *a = NULL;
        int64_t t = 0;

        close(fds[0]);
        if (odbc_leader_create(&a, cfg, NULL, NULL, 0) == 0 &&
            odbc_leader_tick(a, NULL) == ODBC_LEADER_LEADER)
            t = odbc_leader_term(a);
        if (write(fds[1], &t, sizeof(t)) != sizeof(t))
            _exit(1);
        for (;;)
            pause(); /* leader until killed; never resigns */
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], &old_term, sizeof(old_term)),
                     sizeof(old_term));
    close(fds[0]);
    assert_true(old_term > 0);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    /* most of the dead lease runs out before b starts: b has watched it
     * for less than its TTL when the database calls it expired */
    sleep_ms(1500);

    b = make_ns(ns, "LeaderTTL=2000");
    odbc_leader_read_lease(b, &lease);
    assert_int_equal(lease.term, old_term);
    old_expiry = lease.expires_at_ms;
    /* liveness bound: generous, the machine may be busy */
    for (int64_t t0 = mono_ms(); !won && mono_ms() - t0 < 30000;) {
        uint32_t next = 0;
        int rc = odbc_leader_tick(b, &next);

        if (rc < 0)
            fprintf(stderr, "killed_leader: tick: %s\n",
                    odbc_leader_strerror(rc));
        odbc_leader_read_lease(b, &lease);
        if (rc == ODBC_LEADER_LEADER) {
            won = 1;
            /* taken only once the dead leader's lease had expired ... */
            assert_true(lease.db_now_ms >= old_expiry);
            /* ... and b had watched it for one TTL on its own clock
             * (its first sight came in its first tick, after t0) */
            if (mono_ms() - t0 < 2000)
                fail_msg("took a held lease %lld ms after first seeing it, "
                         "before one TTL (2000 ms)",
                         (long long)(mono_ms() - t0));
        }
        sleep_ms(next > 50 ? 50 : next);
    }
    assert_true(won);
    assert_int_equal(odbc_leader_term(b), old_term + 1);
    odbc_leader_destroy(b);
}

void stale_term_can_neither_renew_nor_resign(void **state) {
    char ns[64];
    struct odbc_leader__config cfg;
    struct odbc_leader__db *db = NULL, *other = NULL;
    struct odbc_leader__result res;
    struct odbc_leader__log log = {NULL, NULL};
    char err[256] = "";
    char *s;
    int64_t t1;

    (void)state;
    ns_name(ns, sizeof(ns), "stale");
    s = config("LeaderNamespace=%s", ns);
    memset(&cfg, 0, sizeof(cfg));
    assert_int_equal(odbc_leader__config_parse(s, &cfg, err, sizeof(err)), 0);
    test_free(s);
    assert_int_equal(odbc_leader__db_create(&db, &cfg, "cand-a", &log), 0);
    assert_int_equal(odbc_leader__db_create(&other, &cfg, "cand-b", &log), 0);
    assert_int_equal(odbc_leader__db_connect(db, err, sizeof(err)), 0);
    assert_int_equal(odbc_leader__db_connect(other, err, sizeof(err)), 0);

    assert_int_equal(odbc_leader__db_attempt(db, 0, 0, &res), 0);
    assert_true(res.won);
    t1 = res.term;
    assert_int_equal(odbc_leader__db_resign(db, t1), 1);
    assert_int_equal(odbc_leader__db_attempt(db, 0, 0, &res), 0);
    assert_true(res.won);               /* the same id wins again ... */
    assert_int_equal(res.term, t1 + 1); /* ... with a new term */

    /* the old term is dead: no renew, no resign */
    assert_int_equal(odbc_leader__db_renew(db, t1, &res), 0);
    assert_false(res.found);
    assert_int_equal(odbc_leader__db_resign(db, t1), 0);
    /* another id cannot use the current term either */
    assert_int_equal(odbc_leader__db_renew(other, t1 + 1, &res), 0);
    assert_false(res.found);
    assert_int_equal(odbc_leader__db_resign(other, t1 + 1), 0);
    assert_int_equal(odbc_leader__db_attempt(other, 0, 0, &res), 0);
    assert_false(res.won);

    assert_int_equal(odbc_leader__db_read_lease(db, &res), 0);
    assert_string_equal(res.leader_id, "cand-a");
    assert_int_equal(res.term, t1 + 1);
    /* the current term renews */
    assert_int_equal(odbc_leader__db_renew(db, t1 + 1, &res), 0);
    assert_true(res.found);

    odbc_leader__db_destroy(db);
    odbc_leader__db_destroy(other);
    odbc_leader__config_free(&cfg);
}

/*
 * A lease that expired while nobody took it cannot be renewed, even by
 * its holder with the exact term; and an attempt never takes an unexpired
 * lease, not even its own. Both need the dialect to tell what its own
 * statements changed from what an earlier transaction left behind.
 */
void expired_lease_is_not_renewed_and_own_lease_not_retaken(void **state) {
    char ns[64];
    struct odbc_leader__config cfg;
    struct odbc_leader__db *db;
    struct odbc_leader__result res;
    int64_t t1, exp;

    (void)state;
    ns_name(ns, sizeof(ns), "expired");
    db = port_open(&cfg, ns, "cand-x",
                   "LeaderTTL=400;LeaderRenewInterval=100;"
                   "LeaderSafetyMargin=100");
    assert_int_equal(odbc_leader__db_attempt(db, 0, 0, &res), 0);
    assert_true(res.won);
    t1 = res.term;
    assert_int_equal(odbc_leader__db_attempt(db, 0, 0, &res), 0);
    assert_false(res.won); /* our own lease is unexpired */
    assert_string_equal(res.leader_id, "cand-x");
    assert_int_equal(res.term, t1);
    assert_int_equal(odbc_leader__db_renew(db, t1, &res), 0);
    assert_true(res.found);
    assert_true(res.expires_at_ms > res.now_ms);
    exp = res.expires_at_ms;
    sleep_ms(600); /* past the TTL, nobody takes over */
    assert_int_equal(odbc_leader__db_renew(db, t1, &res), 0);
    assert_false(res.found);
    /* expired, but held: taken only as the row the caller watched */
    assert_int_equal(odbc_leader__db_attempt(db, 0, 0, &res), 0);
    assert_false(res.won);
    assert_int_equal(odbc_leader__db_attempt(db, t1, exp, &res), 0);
    assert_true(res.won);
    assert_int_equal(res.term, t1 + 1);
    odbc_leader__db_destroy(db);
    odbc_leader__config_free(&cfg);
}

/*
 * The attempt's compare-and-set (docs/protocol.md, "Takeover"): a lease
 * someone holds is taken, once it expired in database time, only when the
 * caller names exactly that row (term and expires_at_ms) as watched; a
 * row renewed since, or no row named, leaves it. A released lease
 * (resigned) needs no watch, and a reservation for another candidate
 * holds until it runs out, then needs none either.
 */
void held_lease_is_taken_only_as_watched(void **state) {
    static const char *const t = "LeaderTTL=600;LeaderRenewInterval=200;"
                                 "LeaderSafetyMargin=100";
    char ns[64];
    struct odbc_leader__config ca, cb, cc;
    struct odbc_leader__db *a, *b, *c;
    struct odbc_leader__result res, old, cur;
    int64_t t1;

    (void)state;
    ns_name(ns, sizeof(ns), "watched");
    a = port_open(&ca, ns, "cand-a", t);
    b = port_open(&cb, ns, "cand-b", t);
    c = port_open(&cc, ns, "cand-c", t);
    assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
    assert_true(res.won);
    t1 = res.term;
    assert_int_equal(odbc_leader__db_read_lease(b, &old), 0);
    sleep_ms(20);
    assert_int_equal(odbc_leader__db_renew(a, t1, &cur), 0);
    assert_true(cur.found);
    assert_true(cur.expires_at_ms > old.expires_at_ms); /* a renewal */
    sleep_ms(700); /* a's lease expires in database time */
    assert_int_equal(odbc_leader__db_read_lease(b, &res), 0);
    assert_true(res.expires_at_ms <= res.now_ms);
    assert_string_equal(res.leader_id, "cand-a");
    /* no watch, a watch of the row before the renewal, a wrong term: no */
    assert_int_equal(odbc_leader__db_attempt(b, 0, 0, &res), 0);
    assert_false(res.won);
    assert_int_equal(
        odbc_leader__db_attempt(b, old.term, old.expires_at_ms, &res), 0);
    assert_false(res.won);
    assert_int_equal(
        odbc_leader__db_attempt(b, t1 + 1, cur.expires_at_ms, &res), 0);
    assert_false(res.won);
    assert_string_equal(res.leader_id, "cand-a");
    assert_int_equal(res.term, t1);
    /* the row as it is: taken, term + 1 */
    assert_int_equal(odbc_leader__db_attempt(b, t1, cur.expires_at_ms, &res),
                     0);
    assert_true(res.won);
    assert_string_equal(res.leader_id, "cand-b");
    assert_int_equal(res.term, t1 + 1);
    /* a released lease: c takes it at once, with no watch */
    assert_int_equal(odbc_leader__db_resign(b, t1 + 1), 1);
    assert_int_equal(odbc_leader__db_attempt(c, 0, 0, &res), 0);
    assert_true(res.won);
    assert_int_equal(res.term, t1 + 2);
    /* reserved for a: c's resignation hands over to a; b cannot take it
     * (not even naming the row), a can */
    assert_int_equal(odbc_leader__db_request_resign(b, "cand-a"), 1);
    assert_int_equal(odbc_leader__db_renew(c, t1 + 2, &res), 0);
    assert_true(res.found && res.resign_requested);
    assert_int_equal(odbc_leader__db_resign(c, t1 + 2), 1);
    assert_int_equal(odbc_leader__db_read_lease(b, &cur), 0);
    assert_int_equal(
        odbc_leader__db_attempt(b, cur.term, cur.expires_at_ms, &res), 0);
    assert_false(res.won);
    assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
    assert_true(res.won);
    assert_int_equal(res.term, t1 + 3);
    /* ... and once such a reservation ran out, anyone takes it */
    assert_int_equal(odbc_leader__db_request_resign(b, "cand-c"), 1);
    assert_int_equal(odbc_leader__db_renew(a, t1 + 3, &res), 0);
    assert_int_equal(odbc_leader__db_resign(a, t1 + 3), 1);
    sleep_ms(700);
    assert_int_equal(odbc_leader__db_attempt(b, 0, 0, &res), 0);
    assert_true(res.won);
    assert_int_equal(res.term, t1 + 4);
    port_close(a, &ca);
    port_close(b, &cb);
    port_close(c, &cc);
}

/*
 * odbc_leader_request_resign from any handle: the leader resigns at its
 * next renewal; with a target, the lease is reserved for that candidate,
 * so another follower cannot take it first. A dead target and a
 * namespace without a leader give their own errors.
 */
void resign_request_and_handoff(void **state) {
    static const char *const fast = "LeaderTTL=30000;LeaderRenewInterval=100";
    char ns[64];
    odbc_leader_t *a, *b, *c;
    int64_t term;

    (void)state;
    ns_name(ns, sizeof(ns), "handoff");
    a = make_ns(ns, fast);
    b = make_ns(ns, fast);
    c = make_ns(ns, fast);
    assert_int_equal(odbc_leader_request_resign(c, NULL),
                     ODBC_LEADER_ENOLEADER);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
    assert_int_equal(odbc_leader_tick(c, NULL), ODBC_LEADER_FOLLOWER);
    term = odbc_leader_term(a);
    assert_int_equal(odbc_leader_request_resign(c, "nobody-here"),
                     ODBC_LEADER_ENOCANDIDATE);

    /* hand over to b: c asks, a resigns at its next renewal */
    assert_int_equal(odbc_leader_request_resign(c, odbc_leader_id(b)), 0);
    assert_true(odbc_leader_is_leader(a)); /* only at its next tick */
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_FOLLOWER);
    assert_false(odbc_leader_is_leader(a));
    assert_int_equal(odbc_leader_tick(c, NULL), ODBC_LEADER_FOLLOWER);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_term(b), term + 1);

    /* a plain request: b resigns, and whoever ticks first takes over */
    assert_int_equal(odbc_leader_request_resign(a, NULL), 0);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
    assert_int_equal(odbc_leader_tick(c, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_term(c), term + 2);
    odbc_leader_destroy(a);
    odbc_leader_destroy(b);
    odbc_leader_destroy(c);
}

void same_id_winning_again_gets_a_new_term(void **state) {
    char ns[64], extra[128];
    odbc_leader_t *a;
    int64_t term;

    (void)state;
    ns_name(ns, sizeof(ns), "sameid");
    snprintf(extra, sizeof(extra), "LeaderId=host-%ld", (long)getpid());
    a = make_ns(ns, extra);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    term = odbc_leader_term(a);
    odbc_leader_destroy(a);
    a = make_ns(ns, extra);
    assert_string_equal(odbc_leader_id(a) + 5, extra + 14);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_term(a), term + 1);
    odbc_leader_destroy(a);
}

void trust_window_lapses_when_ticks_stop(void **state) {
    char ns[64];
    struct odbc_leader_lease lease;
    odbc_leader_t *a;

    (void)state;
    ns_name(ns, sizeof(ns), "lapse");
    a = make_ns(ns, "LeaderTTL=1500;LeaderSafetyMargin=500;"
                    "LeaderRenewInterval=300");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_true(odbc_leader_is_leader(a));
    sleep_ms(1100); /* past TTL - margin = 1000 ms, no tick */
    assert_false(odbc_leader_is_leader(a));
    assert_int_equal(odbc_leader_term(a), 0);
    /* the database still shows the lease: the process stepped down first */
    odbc_leader_read_lease(a, &lease);
    assert_string_equal(lease.leader_id, odbc_leader_id(a));
    odbc_leader_destroy(a);
}

struct names {
    char ids[8][129];
    int n;
};

static void collect(void *ctx, const struct odbc_leader_candidate *c) {
    struct names *n = ctx;

    assert_true(c->expires_at_ms > c->db_now_ms);
    assert_true(c->heartbeat_at_ms <= c->db_now_ms);
    if (n->n < 8)
        strcpy(n->ids[n->n++], c->id);
}

static int has_name(const struct names *n, const char *id) {
    for (int i = 0; i < n->n; i++)
        if (strcmp(n->ids[i], id) == 0)
            return 1;
    return 0;
}

void candidates_are_listed(void **state) {
    char ns[64];
    odbc_leader_t *h[3];
    struct names n;

    (void)state;
    ns_name(ns, sizeof(ns), "cands");
    for (int i = 0; i < 3; i++) {
        h[i] = make_ns(ns, "");
        odbc_leader_tick(h[i], NULL);
    }
    memset(&n, 0, sizeof(n));
    assert_int_equal(odbc_leader_list_candidates(h[0], collect, &n), 3);
    assert_int_equal(n.n, 3);
    for (int i = 0; i < 3; i++)
        assert_true(has_name(&n, odbc_leader_id(h[i])));
    odbc_leader_destroy(h[2]); /* unregisters */
    memset(&n, 0, sizeof(n));
    assert_int_equal(odbc_leader_list_candidates(h[0], collect, &n), 2);
    odbc_leader_destroy(h[0]);
    odbc_leader_destroy(h[1]);
}

void leader_removes_long_dead_candidates(void **state) {
    char ns[64], sql[512];
    odbc_leader_t *a;
    struct raw r;
    int64_t count = -1;

    (void)state;
    ns_name(ns, sizeof(ns), "gc");
    a = make_ns(ns, "LeaderTTL=3000;LeaderRenewInterval=100");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    raw_open(&r);
    /* a crashed candidate, expired long ago, and one expired just now */
    snprintf(sql, sizeof(sql),
             "INSERT INTO odbc_leader_candidate (namespace, candidate_id, "
             "registered_at_ms, heartbeat_at_ms, expires_at_ms) VALUES "
             "('%s', 'dead', 0, 0, 1000)",
             ns);
    assert_true(raw_exec(&r, sql, NULL));
    sleep_ms(100);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    snprintf(sql, sizeof(sql),
             "SELECT COUNT(*) FROM odbc_leader_candidate WHERE namespace = "
             "'%s'",
             ns);
    assert_true(raw_exec(&r, sql, &count));
    assert_int_equal(count, 1); /* only the leader's own row is left */
    raw_close(&r);
    odbc_leader_destroy(a);
}

void settings_from_odbc_ini_and_string(void **state) {
    const char *dsn = getenv("OL_DSN");
    struct odbc_leader_lease lease;
    char cfg[1024];
    odbc_leader_t *a;
    int64_t ttl;

    (void)state;
    assert_non_null(dsn);
    /* the namespace comes from the file, the TTL from the string */
    snprintf(cfg, sizeof(cfg), "DSN=%s;LeaderTTL=6000;%s", dsn,
             getenv("OL_LEADER_EXTRA") != NULL ? getenv("OL_LEADER_EXTRA")
                                               : "");
    a = make(cfg);
    assert_string_equal(odbc_leader_namespace(a), "from-odbc-ini");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_read_lease(a, &lease), 0);
    ttl = lease.expires_at_ms - lease.db_now_ms;
    assert_true(ttl > 4000 && ttl <= 6000);
    odbc_leader_destroy(a);
}

struct racer {
    struct odbc_leader__db *db;
    struct odbc_leader__result res;
    int rc;
    atomic_int done; /* set when the attempt returned */
};

static void *race_attempt(void *arg) {
    struct racer *r = arg;

    r->rc = odbc_leader__db_attempt(r->db, 0, 0, &r->res);
    atomic_store(&r->done, 1);
    return NULL;
}

#ifdef ODBC_LEADER_TEST_HOOKS /* the counts of odbc_leader__db_stats */
/*
 * 1 when first_row_race's attempt should wait for the blocker and then see
 * its row (no unique violation), 0 when it should collide with it.
 * OL_FIRST_ROW=waits or =collides says so for a database the suite does
 * not know; otherwise SQLite waits (its write lock), and so does the
 * generic dialect on MariaDB (its leading UPDATE is a locking read).
 */
static int first_row_waits(const struct odbc_leader__db *db) {
    const struct odbc_leader__dialect *d = odbc_leader__db_dialect(db);
    const char *v = getenv("OL_FIRST_ROW");

    if (v != NULL)
        return strcmp(v, "waits") == 0;
    return is_kind("sqlite") ||
           (is_kind("mariadb") && d != NULL && strcmp(d->name, "generic") == 0);
}
#endif

/*
 * Two candidates creating a namespace's first lease row at once, driven
 * deterministically: a blocker session inserts the first row and keeps
 * its transaction open; the candidate's attempt starts, and once the
 * server shows it waiting, the blocker commits.
 * - PostgreSQL (its own dialect and generic) and MariaDB: the attempt saw
 *   no row, inserted, waited on the primary key and now fails with a
 *   unique violation: it rolls back, retries once and finds the blocker's
 *   lease (the integrity-error retry path).
 * - generic on MariaDB: its first statement, an UPDATE of the lease row,
 *   is a locking read in InnoDB: it waits on the blocker's uncommitted
 *   row and then sees it committed, so nothing collides.
 * - Another database: OL_FIRST_ROW says which of the two outcomes to
 *   expect (see first_row_waits).
 * - SQLite: the blocker holds the database's write lock, so the attempt
 *   waits before reading anything (BEGIN IMMEDIATE, or the generic
 *   dialect's leading UPDATE) and then finds the row: no collision can
 *   happen there, and none is reported. SQLite cannot show lock waits, so
 *   the blocker commits after a pause; the outcome is the same whether
 *   the attempt was already waiting or not.
 */
void first_row_race(void **state) {
    const char *probe_sql = lock_wait_probe();
    char ns[64], sql[512], err[256] = "";
    struct odbc_leader__config cfg;
    struct odbc_leader__db *db = NULL;
#ifdef ODBC_LEADER_TEST_HOOKS
    struct odbc_leader__db_stats st;
#endif
    struct odbc_leader__log log = {NULL, NULL};
    struct raw blocker, probe;
    struct racer r;
    pthread_t t;
    char *s;

    (void)state;
    ns_name(ns, sizeof(ns), "race");
    s = config("LeaderNamespace=%s", ns);
    memset(&cfg, 0, sizeof(cfg));
    assert_int_equal(odbc_leader__config_parse(s, &cfg, err, sizeof(err)), 0);
    test_free(s);
    assert_int_equal(odbc_leader__db_create(&db, &cfg, "racer", &log), 0);
    assert_int_equal(odbc_leader__db_connect(db, err, sizeof(err)), 0);

    raw_open(&blocker);
    raw_open(&probe);
    SQLSetConnectAttr(blocker.dbc, SQL_ATTR_AUTOCOMMIT,
                      (SQLPOINTER)SQL_AUTOCOMMIT_OFF, 0);
    snprintf(sql, sizeof(sql),
             "INSERT INTO odbc_leader_lease (namespace, leader_id, term, "
             "elected_at_ms, renewed_at_ms, expires_at_ms) VALUES ('%s', "
             "'blocker', 1, 0, 0, 9000000000000)",
             ns);
    assert_true(raw_exec(&blocker, sql, NULL));

    memset(&r, 0, sizeof(r));
    atomic_init(&r.done, 0);
    r.db = db;
    assert_int_equal(pthread_create(&t, NULL, race_attempt, &r), 0);
    assert_true(await_waiter(&probe, probe_sql, &r.done) > 0);
    assert_true(
        SQL_SUCCEEDED(SQLEndTran(SQL_HANDLE_DBC, blocker.dbc, SQL_COMMIT)));
    pthread_join(t, NULL);

    assert_int_equal(r.rc, 0);
    assert_false(r.res.won);
    assert_string_equal(r.res.leader_id, "blocker");
#ifdef ODBC_LEADER_TEST_HOOKS
    /* the counts come from a test hook; the outcome above holds anyway */
    odbc_leader__db_stats(db, &st);
    if (first_row_waits(db)) {
        assert_int_equal(st.unique_violations, 0);
        assert_int_equal(st.retries, 0);
    } else {
        assert_int_equal(st.unique_violations, 1);
        assert_int_equal(st.retries, 1);
    }
#endif

    raw_close(&blocker);
    raw_close(&probe);
    odbc_leader__db_destroy(db);
    odbc_leader__config_free(&cfg);
}

/* 1 when the dialect cfg connects with defines the follower wake-up. */
static int dialect_has_wait(const char *cfg_text) {
    struct odbc_leader__config cfg;
    struct odbc_leader__db *db = NULL;
    struct odbc_leader__log log = {NULL, NULL};
    char err[256] = "";
    int has;

    memset(&cfg, 0, sizeof(cfg));
    assert_int_equal(
        odbc_leader__config_parse(cfg_text, &cfg, err, sizeof(err)), 0);
    assert_int_equal(odbc_leader__db_create(&db, &cfg, "probe", &log), 0);
    assert_int_equal(odbc_leader__db_connect(db, err, sizeof(err)), 0);
    has = odbc_leader__db_has_wait(db);
    odbc_leader__db_destroy(db);
    odbc_leader__config_free(&cfg);
    return has;
}

/* The statement that counts sessions blocked on a wake-up lock. */
static const char *wake_wait_probe(void) {
    if (is_kind("postgresql"))
        return "SELECT COUNT(*) FROM pg_stat_activity WHERE "
               "wait_event_type = 'Lock' AND wait_event = 'advisory' "
               "AND datname = current_database()";
    return "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE "
           "STATE = 'User lock'";
}

struct ticker {
    odbc_leader_t *h;
    int rc;
    uint32_t next;
    _Atomic int started; /* the thread is about to call tick */
};

static void *tick_once(void *arg) {
    struct ticker *t = arg;

    atomic_store(&t->started, 1);
    t->rc = odbc_leader_tick(t->h, &t->next);
    return NULL;
}

/* Waits until b's tick (thread t) is blocked in the wake-up wait: on the
 * servers, until the server shows a session waiting on the lock; on
 * SQLite (a lock file, polled by the follower) 300 ms after the tick
 * began: a tick that did not wait would have returned as a follower by
 * then, as a live leader still held the lease. */
static void until_waiting(const struct ticker *t) {
    struct raw probe;
    int64_t waiting = 0;

    while (!atomic_load(&t->started))
        sleep_ms(1);
    if (is_kind("sqlite")) {
        sleep_ms(300);
        return;
    }
    raw_open(&probe);
    for (int i = 0; i < 800 && waiting == 0; i++) { /* the wait lasts 8 s */
        sleep_ms(10);
        raw_exec(&probe, wake_wait_probe(), &waiting);
    }
    raw_close(&probe);
    assert_true(waiting > 0); /* b's tick is blocked in the wait */
}

/*
 * The follower wake-up: a follower whose tick is blocked in the dialect's
 * wait statement becomes leader within that same tick when the leader
 * resigns, long before its next scheduled attempt (20 s away here; the
 * wait may last 8 s). Without the wake-up that tick would end as a
 * follower. SQLite waits on a lock file (@wake-file); dialects without a
 * wake-up (generic) skip.
 */
void waiting_follower_wakes_on_resign(void **state) {
    const char *timing = "LeaderTTL=60000;LeaderRenewInterval=20000;"
                         "LeaderStatementTimeout=10000;"
                         "LeaderFollowerWait=8000";
    char ns[64], *cfg;
    struct ticker t;
    odbc_leader_t *a, *b;
    pthread_t th;
    int64_t term;

    (void)state;
    ns_name(ns, sizeof(ns), "wake");
    cfg = config("LeaderNamespace=%s;%s", ns, timing);
    if (!dialect_has_wait(cfg)) {
        test_free(cfg);
        skip();
    }
    test_free(cfg);
    a = make_ns(ns, timing);
    b = make_ns(ns, timing);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    term = odbc_leader_term(a);
    memset(&t, 0, sizeof(t));
    t.h = b;
    assert_int_equal(odbc_leader_tick(b, &t.next), ODBC_LEADER_FOLLOWER);
    assert_int_equal(t.next, 0); /* its next tick waits */

    assert_int_equal(pthread_create(&th, NULL, tick_once, &t), 0);
    until_waiting(&t);
    assert_int_equal(odbc_leader_resign(a), 0);
    pthread_join(th, NULL);
    assert_int_equal(t.rc, ODBC_LEADER_LEADER); /* the same tick */
    assert_int_equal(odbc_leader_term(b), term + 1);

    odbc_leader_destroy(a);
    odbc_leader_destroy(b);
}
