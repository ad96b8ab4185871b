/* SPDX-License-Identifier: MIT */
/*
 * scenarios_ledger.c: the scenarios of the fire ledger (claims fenced by
 * term, retention, the public claim calls, terms across a deleted lease
 * row) and of the election log (its rows and how each term ended, an
 * expired term, retention).
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>

#include "config.h"
#include "db_lease.h"
#include "db_ledger.h"
#include "scenarios.h"

/* ---- the fire ledger (issue 13) ------------------------------------------ */

/* A claim inserts a fire only for the exact, unexpired term of the caller;
 * a second claim of the fire, in any term, answers 0; finish records the
 * outcome once and only for the claimant; the retention bounds claims. */
void claims_are_fenced_by_term(void **state) {
    char ns[64];
    struct odbc_leader__config ca, cb;
    struct odbc_leader__db *a, *b;
    struct odbc_leader__result res, seen;
    struct odbc_leader_fire f;
    int64_t t1, t2, now, f1, f2, f3, f4;

    (void)state;
    ns_name(ns, sizeof(ns), "claim");
    /* b's term must outlive the steps after its win on a loaded machine:
     * 2 s, where 1 s once expired before its next claim */
    a = port_open(&ca, ns, "cand-a", "LeaderTTL=2000;LeaderSafetyMargin=200");
    b = port_open(&cb, ns, "cand-b", "LeaderTTL=2000;LeaderSafetyMargin=200");
    assert_true(odbc_leader__db_has_ledger(a));

    assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
    assert_true(res.won);
    t1 = res.term;
    now = res.now_ms;
    assert_int_equal(odbc_leader__db_attempt(b, 0, 0, &seen), 0);
    assert_false(seen.won); /* b watches a's lease from here */
    f1 = now - 1000;        /* nominal fire times near the database clock */
    f2 = now;
    f3 = now + 1000;
    f4 = now + 2000;
    assert_int_equal(odbc_leader__db_claim(a, t1, "job", f1, 1, 1, NULL), 1);
    assert_int_equal(odbc_leader__db_claim(a, t1, "job", f1, 1, 1, NULL), 0);
    assert_int_equal(odbc_leader__db_claim(a, t1, "other-job", f1, 1, 1, NULL),
                     1);
    /* b does not lead: neither with a's term nor with a made-up one */
    assert_int_equal(odbc_leader__db_claim(b, t1, "job", f2, 1, 1, NULL),
                     ODBC_LEADER_ENOTLEADER);
    assert_int_equal(odbc_leader__db_claim(b, t1 + 1, "job", f2, 1, 1, NULL),
                     ODBC_LEADER_ENOTLEADER);
    /* a's own stale term number is refused too */
    assert_int_equal(odbc_leader__db_claim(a, t1 - 1, "job", f2, 1, 1, NULL),
                     ODBC_LEADER_ENOTLEADER);

    /* the lease expires without renewal: a's term no longer claims */
    sleep_ms(2100);
    assert_int_equal(odbc_leader__db_claim(a, t1, "job", f2, 1, 1, NULL),
                     ODBC_LEADER_ENOTLEADER);
    assert_int_equal(
        odbc_leader__db_attempt(b, seen.term, seen.expires_at_ms, &res), 0);
    assert_true(res.won);
    t2 = res.term;
    assert_true(t2 > t1);
    assert_int_equal(odbc_leader__db_claim(a, t1, "job", f2, 1, 1, NULL),
                     ODBC_LEADER_ENOTLEADER);
    assert_int_equal(odbc_leader__db_claim(b, t2, "job", f1, 1, 1, NULL), 0);
    assert_int_equal(odbc_leader__db_claim(b, t2, "job", f2, 1, 1, NULL), 1);

    /* finish: the claimant only, once, also after its term ended */
    assert_int_equal(odbc_leader__db_finish(b, "job", f1, 0, 0),
                     ODBC_LEADER_ENOFIRE);
    assert_int_equal(odbc_leader__db_finish(a, "job", f1, 0, 3), 0);
    assert_int_equal(odbc_leader__db_finish(a, "job", f1, 0, 0), 0);
    assert_int_equal(odbc_leader__db_finish(a, "job", f3, 0, 0),
                     ODBC_LEADER_ENOFIRE);
    assert_int_equal(odbc_leader__db_fire(b, "job", f1, &f), 1);
    assert_string_equal(f.job, "job");
    assert_int_equal(f.fire_ms, f1);
    assert_int_equal(f.term, t1);
    assert_string_equal(f.claimed_by, "cand-a");
    assert_true(f.claimed_at_ms >= now);
    assert_true(f.finished_at_ms >= f.claimed_at_ms);
    assert_int_equal(f.status, 3); /* the first finish counts */
    assert_int_equal(odbc_leader__db_fire(b, "job", f2, &f), 1);
    assert_int_equal(f.term, t2);
    assert_int_equal(f.finished_at_ms, 0);
    assert_int_equal(odbc_leader__db_fire(b, "job", f4, &f), 0);
    assert_int_equal(odbc_leader__db_fires(b, NULL, NULL, NULL), 3);
    assert_int_equal(odbc_leader__db_fires(b, "job", NULL, NULL), 2);
    assert_int_equal(odbc_leader__db_fires(b, "nothing", NULL, NULL), 0);

    /* a fire older than the retention (7 days) is refused; fire 0, a
     * one-off key, never is; a recent one is claimed */
    assert_int_equal(
        odbc_leader__db_claim(b, t2, "old", now - 8 * 86400000LL, 1, 1, NULL),
        ODBC_LEADER_EFIREAGE);
    assert_int_equal(odbc_leader__db_claim(b, t2, "once", 0, 1, 1, NULL), 1);
    assert_int_equal(odbc_leader__db_claim(b, t2, "once", 0, 1, 1, NULL), 0);
    assert_int_equal(
        odbc_leader__db_claim(b, t2, "recent", now - 86400000LL, 1, 1, NULL),
        1);
    port_close(a, &ca);
    port_close(b, &cb);
}

/* Retention deletes finished fires older than LeaderFireRetention, keeps
 * unfinished ones and one-off keys, and claims of such old fires are
 * refused, so a deleted fire is never claimed again. */
void retention_deletes_old_finished_fires(void **state) {
    char ns[64];
    struct odbc_leader__config c;
    struct odbc_leader__db *a;
    struct odbc_leader__result res;
    int64_t t, now, f1, f2;

    (void)state;
    ns_name(ns, sizeof(ns), "gc");
    a = port_open(&c, ns, "cand-a", "LeaderFireRetention=3000");
    assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
    assert_true(res.won);
    t = res.term;
    now = res.now_ms;
    f1 = now - 1000; /* room for slow runs (valgrind) */
    f2 = now - 900;
    assert_int_equal(odbc_leader__db_claim(a, t, "j", f1, 1, 1, NULL), 1);
    assert_int_equal(odbc_leader__db_claim(a, t, "j", f2, 1, 1, NULL), 1);
    assert_int_equal(odbc_leader__db_claim(a, t, "j", 0, 1, 1, NULL), 1);
    assert_int_equal(odbc_leader__db_finish(a, "j", f1, 0, 0), 0);
    assert_int_equal(odbc_leader__db_finish(a, "j", 0, 0, 0), 0);
    assert_int_equal(odbc_leader__db_fire_gc(a), 0); /* not old yet */
    sleep_ms(3600);
    assert_int_equal(odbc_leader__db_fire_gc(a), 1); /* f1 only */
    assert_int_equal(odbc_leader__db_fires(a, "j", NULL, NULL), 2);
    assert_int_equal(odbc_leader__db_claim(a, t, "j", f1, 1, 1, NULL),
                     ODBC_LEADER_EFIREAGE);
    port_close(a, &c);
}

/* The public calls: claim checks is_leader locally first; the plugin-level
 * answers match the database's. */
void public_claim_api(void **state) {
    char ns[64];
    struct odbc_leader_fire f;
    struct odbc_leader_lease lease;
    odbc_leader_t *a, *b;
    int64_t f5, f6;

    (void)state;
    ns_name(ns, sizeof(ns), "pubclaim");
    a = make_ns(ns, "");
    b = make_ns(ns, "");
    assert_int_equal(odbc_leader_claim(a, "j", 5), ODBC_LEADER_ENOTLEADER);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_read_lease(a, &lease), 0);
    f5 = lease.db_now_ms;
    f6 = f5 + 1;
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
    assert_int_equal(odbc_leader_claim(a, "j", f5), 1);
    assert_int_equal(odbc_leader_claim(a, "j", f5), 0);
    assert_int_equal(odbc_leader_claim(b, "j", f6), ODBC_LEADER_ENOTLEADER);
    assert_int_equal(odbc_leader_claim(a, "bad job", f6), ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_claim(a, "", f6), ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_claim(a, "j", -1), ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_finish(a, "j", f5, 0), 0);
    assert_int_equal(odbc_leader_finish(b, "j", f5, 0), ODBC_LEADER_ENOFIRE);
    assert_int_equal(odbc_leader_read_fire(b, "j", f5, &f), 1);
    assert_string_equal(f.claimed_by, odbc_leader_id(a));
    assert_int_equal(f.term, odbc_leader_term(a));
    assert_int_equal(odbc_leader_list_fires(b, "j", NULL, NULL), 1);
    assert_int_equal(odbc_leader_list_fires(b, "bad job", NULL, NULL),
                     ODBC_LEADER_EINVAL);
    odbc_leader_destroy(a);
    odbc_leader_destroy(b);
}

/* A deleted lease row, or a new table prefix, starts the namespace at a
 * term above every term it had: the first row's term is the database
 * clock in ms. */
void terms_keep_growing_across_a_deleted_lease_row(void **state) {
    char ns[64], sql[256];
    struct odbc_leader__config c;
    struct odbc_leader__db *a;
    struct odbc_leader__result res;
    struct raw r;
    int64_t t1, t2;
    int i;

    (void)state;
    ns_name(ns, sizeof(ns), "regrow");
    a = port_open(&c, ns, "cand-a", "");
    assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
    assert_true(res.won);
    t1 = res.term;
    /* seeded from the clock: the database's ms when the row was made */
    if (!(t1 <= res.now_ms && t1 > res.now_ms - 60000))
        fail_msg("term %lld, database clock %lld", (long long)t1,
                 (long long)res.now_ms);
    /* each election moves it on by one */
    for (i = 1; i <= 3; i++) {
        assert_int_equal(odbc_leader__db_resign(a, res.term), 1);
        assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
        assert_true(res.won);
        assert_int_equal(res.term, t1 + i);
    }
    assert_int_equal(odbc_leader__db_resign(a, res.term), 1);
    /* an admin deletes the row */
    raw_open(&r);
    snprintf(sql, sizeof(sql),
             "DELETE FROM odbc_leader_lease WHERE namespace = '%s'", ns);
    assert_true(raw_exec(&r, sql, NULL));
    raw_close(&r);
    sleep_ms(20);
    assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
    assert_true(res.won);
    t2 = res.term;
    if (!(t2 > t1 + 3))
        fail_msg("term after the deleted row %lld, before %lld", (long long)t2,
                 (long long)(t1 + 3));
    port_close(a, &c);
}

/* ---- the election log ---------------------------------------------------- */

/*
 * The election log follows the terms: one row per won term, in order, with
 * its winner; renewals and lost attempts write none; the current term is
 * open; each earlier one ended as it did: a handover (with its target), a
 * requested resignation, the leader's own resignation, its shutdown.
 */
void election_log_follows_terms_and_their_ends(void **state) {
    static const char *const fast = "LeaderTTL=30000;LeaderRenewInterval=100;"
                                    "LeaderFollowerWait=0";
    char ns[64], a_id[129];
    odbc_leader_t *a, *b, *c;
    struct elog l;
    int64_t t;

    (void)state;
    ns_name(ns, sizeof(ns), "elog");
    a = make_ns(ns, fast);
    b = make_ns(ns, fast);
    c = make_ns(ns, fast);
    snprintf(a_id, sizeof(a_id), "%s", odbc_leader_id(a));
    assert_int_equal(read_elog(c, &l), 0);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    t = odbc_leader_term(a);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
        assert_int_equal(odbc_leader_tick(c, NULL), ODBC_LEADER_FOLLOWER);
        assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    }
    assert_int_equal(read_elog(b, &l), 1);
    expect_term(&l, 0, t, a_id, "", "");
    assert_int_equal(l.e[0].ended_at_ms, 0);
    /* c asks a to hand over to b */
    assert_int_equal(odbc_leader_request_resign(c, odbc_leader_id(b)), 0);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_FOLLOWER);
    assert_int_equal(odbc_leader_tick(c, NULL), ODBC_LEADER_FOLLOWER);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_term(b), t + 1);
    /* a asks b to resign; c takes over */
    assert_int_equal(odbc_leader_request_resign(a, NULL), 0);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
    assert_int_equal(odbc_leader_tick(c, NULL), ODBC_LEADER_LEADER);
    /* c resigns, a takes over (once the renew interval a holds off for
     * after its own resignation has passed) and shuts down, b takes over */
    assert_int_equal(odbc_leader_resign(c), 0);
    sleep_ms(120);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    odbc_leader_destroy(a);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_term(b), t + 4);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(odbc_leader_tick(c, NULL), ODBC_LEADER_FOLLOWER);
        assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_LEADER);
    }
    assert_int_equal(read_elog(c, &l), 5);
    expect_term(&l, 0, t, a_id, "handover", odbc_leader_id(b));
    expect_term(&l, 1, t + 1, odbc_leader_id(b), "requested", "");
    expect_term(&l, 2, t + 2, odbc_leader_id(c), "resigned", "");
    expect_term(&l, 3, t + 3, a_id, "resigned", "");
    expect_term(&l, 4, t + 4, odbc_leader_id(b), "", "");
    assert_int_equal(l.e[4].ended_at_ms, 0);
    odbc_leader_destroy(b);
    odbc_leader_destroy(c);
}

/* A leader that stops ticking (killed): once its lease ran out, the
 * candidate that watched it takes over, and the log ends the dead term as
 * expired at the expiry of the lease the taker saw. */
void election_log_ends_an_expired_term(void **state) {
    static const char *const fast = "LeaderTTL=1000;LeaderSafetyMargin=200;"
                                    "LeaderFollowerWait=0";
    char ns[64];
    struct odbc_leader_lease lease;
    odbc_leader_t *a, *b;
    struct elog l;
    int64_t t0, term, expiry;
    int rc = ODBC_LEADER_FOLLOWER;

    (void)state;
    ns_name(ns, sizeof(ns), "elogexp");
    a = make_ns(ns, fast);
    b = make_ns(ns, fast);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
    term = odbc_leader_term(a);
    assert_int_equal(odbc_leader_read_lease(b, &lease), 0);
    assert_int_equal(lease.term, term);
    expiry = lease.expires_at_ms;
    /* a is never ticked again */
    sleep_ms(1100);
    for (t0 = mono_ms(); rc != ODBC_LEADER_LEADER && mono_ms() - t0 < 10000;) {
        rc = odbc_leader_tick(b, NULL);
        if (rc != ODBC_LEADER_LEADER)
            sleep_ms(50);
    }
    assert_int_equal(rc, ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_term(b), term + 1);
    assert_int_equal(read_elog(b, &l), 2);
    expect_term(&l, 0, term, odbc_leader_id(a), "expired", "");
    assert_true(l.e[0].ended_at_ms > l.e[0].started_at_ms);
    if (l.e[0].ended_at_ms != expiry)
        fail_msg("the expired term ended at %lld, its lease expired at %lld",
                 (long long)l.e[0].ended_at_ms, (long long)expiry);
    expect_term(&l, 1, term + 1, odbc_leader_id(b), "", "");
    odbc_leader_destroy(a);
    odbc_leader_destroy(b);
}

/* LeaderElectionRetention: the leader deletes the terms that ended longer
 * ago than that (here its gc runs every 100 ms: a tenth of
 * LeaderFireRetention); the current term stays, however old. */
void election_log_retention_deletes_old_terms(void **state) {
    char ns[64];
    odbc_leader_t *a;
    struct elog l;
    int64_t t;

    (void)state;
    ns_name(ns, sizeof(ns), "eloggc");
    a = make_ns(ns, "LeaderTTL=3000;LeaderRenewInterval=100;"
                    "LeaderFollowerWait=0;LeaderFireRetention=1000;"
                    "LeaderElectionRetention=1000");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    t = odbc_leader_term(a);
    assert_int_equal(odbc_leader_resign(a), 0);
    /* past the gc's interval: the next tick's gc keeps the term that
     * ended just now */
    sleep_ms(150);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(read_elog(a, &l), 2); /* ended too recently */
    expect_term(&l, 0, t, odbc_leader_id(a), "resigned", "");
    expect_term(&l, 1, t + 1, odbc_leader_id(a), "", "");
    sleep_ms(1100);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(read_elog(a, &l), 1);
    expect_term(&l, 0, t + 1, odbc_leader_id(a), "", "");
    odbc_leader_destroy(a);
}
