/* SPDX-License-Identifier: MIT */
/*
 * test_elector_watch.c: the watch: a held lease is taken only one TTL
 * after the follower first saw that exact row, whatever the database clock
 * says, and steps of the database clock are counted; a released lease is
 * taken at once.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_elector.h"

/* A held lease is taken only one TTL after the follower first saw that
 * exact row (the watch), even when the database calls it expired long
 * before; until then every attempt passes no watched row. */
void test_takeover_waits_for_one_ttl_of_watching(void **state) {
    struct fixture *x = *state;

    other_leads(&x->f, 400); /* first seen at 1000 ms, expires at 1400 */
    assert_int_equal(tick_until(x, 3999), ODBC_LEADER_FOLLOWER);
    assert_int_equal(x->f.seen_term_arg, 0);
    assert_true(x->f.attempts >= 2); /* it tried at the expiry */
    assert_int_equal(tick_until(x, 10000), ODBC_LEADER_LEADER);
    /* won by the attempt that started at the floor: 1000 + 3000 ms */
    assert_true(x->f.now_ns >= 4000 * MS && x->f.now_ns <= 4010 * MS);
    assert_int_equal(x->f.seen_term_arg, 1);
    assert_int_equal(odbc_leader__elector_term(&x->e), 2);
}

/* The database clock steps 10 s ahead while another candidate holds a
 * healthy lease: the database calls it expired at once, but the follower
 * watched it for less than one TTL, so it does not take it before then
 * (the old leader may still trust its window). The step is counted. */
void test_forward_step_does_not_hand_over_early(void **state) {
    struct fixture *x = *state;
    int64_t last = 0;

    other_leads(&x->f, 3000);
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    x->f.now_ns += 100 * MS;
    x->f.db_offset_ms += 10000;
    assert_int_equal(tick_until(x, 3999), ODBC_LEADER_FOLLOWER);
    assert_string_equal(x->f.leader, "other");
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(odbc_leader__elector_clock_steps(&x->e, &last), 1);
    assert_true(last >= 9900 && last <= 10000);
    assert_int_equal(tick_until(x, 10000), ODBC_LEADER_LEADER);
    assert_true(x->f.now_ns >= 4000 * MS && x->f.now_ns <= 4010 * MS);
    assert_true(odbc_leader__elector_is_leader(&x->e));
}

/* The measured case of ed8ea1f: the follower's attempt before the step
 * saw no row (it lost the race for the first one), and its first sight of
 * the lease comes after the step, when the database already calls it
 * expired. That first sight starts the watch: no takeover for one TTL. */
void test_first_sight_after_a_step_waits_one_ttl(void **state) {
    struct fixture *x = *state;

    other_leads(&x->f, 3000);
    x->f.lose_race = 1;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    x->f.db_offset_ms += 7000; /* 2 TTL + 1 s */
    x->f.now_ns += 10 * MS;
    assert_int_equal(tick_until(x, 1000 + 10 + 2999), ODBC_LEADER_FOLLOWER);
    assert_string_equal(x->f.leader, "other");
    assert_int_equal(tick_until(x, 10000), ODBC_LEADER_LEADER);
    assert_true(x->f.now_ns >= 4010 * MS && x->f.now_ns <= 4060 * MS);
}

/* A renewal seen by the watch starts it anew: the takeover comes one TTL
 * after the renewal's first sight, not after the older row's. */
void test_renewal_restarts_the_watch(void **state) {
    struct fixture *x = *state;

    other_leads(&x->f, 3000);
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    x->f.now_ns += 1000 * MS;
    other_renews(&x->f); /* at 2000 ms; then the other dies */
    assert_int_equal(tick_until(x, 4999), ODBC_LEADER_FOLLOWER);
    assert_int_equal(tick_until(x, 10000), ODBC_LEADER_LEADER);
    assert_true(x->f.now_ns >= 5000 * MS && x->f.now_ns <= 5030 * MS);
}

/* With the read: a follower reads the lease just after the leader's
 * next renewal is due (TTL - renew left, plus 20 ms), so its watch of
 * that renewal starts close to it; when the leader is late it reads again
 * after gaps that double (25, 50, ... ms, at most a quarter of the renew
 * interval and half the margin: 250 ms here). A crashed leader is
 * replaced one TTL after the first sight of its last renewal. */
void test_watch_reads_follow_the_renewals(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    other_leads(&x->f, 3000);
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    assert_int_equal(next, 1020); /* due at 2000 ms, + 20 */
    x->f.now_ns = 2000 * MS;
    other_renews(&x->f); /* on time */
    x->f.now_ns = 2020 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    assert_string_equal(x->f.calls, "AA"); /* a heartbeat attempt, too */
    assert_int_equal(next, 1000);
    x->f.now_ns = 3000 * MS;
    other_renews(&x->f);
    x->f.now_ns = 3020 * MS;
    odbc_leader__elector_tick(&x->e, &next);
    assert_string_equal(x->f.calls, "AAA");
    /* the renewal at 4000 ms comes 100 ms late, then the leader dies */
    x->f.now_ns = 4020 * MS;
    odbc_leader__elector_tick(&x->e, &next);
    assert_string_equal(x->f.calls, "AAAA");
    assert_int_equal(next, 25);
    x->f.now_ns += 25 * MS;
    odbc_leader__elector_tick(&x->e, &next);
    assert_string_equal(x->f.calls, "AAAAR"); /* a read, no heartbeat */
    assert_int_equal(next, 50);
    x->f.now_ns = 4100 * MS;
    other_renews(&x->f);
    x->f.now_ns = 4095 * MS + 50 * MS; /* the read at 4095 + 50 */
    odbc_leader__elector_tick(&x->e, &next);
    assert_string_equal(x->f.calls, "AAAARR");
    /* seen at 4145 ms: taken at 7145, after reads every 250 ms at most */
    assert_int_equal(tick_until(x, 7144), ODBC_LEADER_FOLLOWER);
    assert_true(x->f.reads > 3 && x->f.reads <= 25);
    assert_int_equal(tick_until(x, 10000), ODBC_LEADER_LEADER);
    assert_true(x->f.now_ns >= 7145 * MS && x->f.now_ns <= 7160 * MS);
}

/* A released lease (the other resigned) needs no watch. */
void test_released_lease_is_taken_at_once(void **state) {
    struct fixture *x = *state;

    other_leads(&x->f, 3000);
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    x->f.leader[0] = '\0'; /* resigned: vacant, expired now */
    x->f.expires_at_ms = db_now(&x->f);
    x->f.now_ns += 10 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_LEADER);
    assert_int_equal(x->f.seen_term_arg, 0);
}

#ifdef ODBC_LEADER_TEST_HOOKS
/* LeaderTestNoWatch (tests only): the takeover rests on database time
 * alone, so the forward step above hands the lease over at once, while
 * the old leader may still trust it. The clock-step tests use it to show
 * that they catch two leaders. */
void test_no_watch_takes_on_database_time(void **state) {
    struct fixture *x = *state;

    x->e.no_watch = 1;
    other_leads(&x->f, 3000);
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    x->f.now_ns += 100 * MS;
    x->f.db_offset_ms += 10000;
    assert_int_equal(tick_until(x, 1200), ODBC_LEADER_LEADER);
}
#endif

/* A backward step is counted and logged; leases then last longer in local
 * time, which is safe. */
void test_backward_step_is_counted_only(void **state) {
    struct fixture *x = *state;
    int64_t last = 0;

    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_LEADER);
    x->f.now_ns += 1000 * MS;
    x->f.db_offset_ms -= 5000;
    x->f.expires_at_ms -= 5000; /* still unexpired in the stepped clock */
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader__elector_clock_steps(&x->e, &last), 1);
    assert_true(last <= -4900 && last >= -5000);
}
