/* SPDX-License-Identifier: MIT */
/*
 * test_elector_wake.c: the follower wake-up (the port's wake-up lock): a
 * follower waits on the leader's lock and is elected at its release, the
 * wait's budgets and backoff, a new leader's hold and release, and no
 * wait when it is turned off.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_elector.h"

void test_follower_wakes_when_leader_resigns(void **state) {
    struct fixture *x = *state;
    uint32_t next = 99;

    other_leads(&x->f, 60000);
    x->f.other_holds_lock = 1;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    assert_int_equal(next, 0); /* the next tick waits */
    x->f.other_resigns_at_ns = x->f.now_ns + 300 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_LEADER);
    assert_string_equal(x->f.calls, "AWA");
    assert_int_equal(x->f.wait_budgets[0], 800);
    /* elected at the release, not at the next regular attempt */
    assert_int_equal(x->f.now_ns, 1300 * MS);
    assert_int_equal(odbc_leader__elector_term(&x->e), 2);
}

void test_wait_times_out_until_the_next_attempt(void **state) {
    struct fixture *x = *state;
    uint32_t next = 99;

    other_leads(&x->f, 60000);
    x->f.other_holds_lock = 1;
    odbc_leader__elector_tick(&x->e, &next);
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    assert_int_equal(next, 0);
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    /* budgets: the longest wait, then what is left until the next step
     * (just after the leader's next renewal is due: 1000 + 20 ms) */
    assert_int_equal(x->f.waits, 2);
    assert_int_equal(x->f.wait_budgets[0], 800);
    assert_int_equal(x->f.wait_budgets[1], 220);
    odbc_leader__elector_tick(&x->e, &next);
    assert_string_equal(x->f.calls, "AWWA"); /* the regular attempt */
}

void test_wake_without_lock_holder_backs_off(void **state) {
    struct fixture *x = *state;
    uint32_t next = 99;

    other_leads(&x->f, 60000); /* it crashed: nobody holds the lock */
    odbc_leader__elector_tick(&x->e, &next);
    assert_int_equal(next, 0);
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    assert_string_equal(x->f.calls, "AWA");
    /* the same term still leads: no spinning, wait again later */
    assert_int_equal(next, 25);
    odbc_leader__elector_tick(&x->e, &next); /* too early: nothing */
    assert_string_equal(x->f.calls, "AWA");
    x->f.now_ns += 25 * MS;
    odbc_leader__elector_tick(&x->e, &next);
    assert_string_equal(x->f.calls, "AWAWA");
    assert_int_equal(next, 50); /* doubled */
    /* the leader takes its lock: the next wait blocks again */
    x->f.other_holds_lock = 1;
    x->f.now_ns += 50 * MS;
    odbc_leader__elector_tick(&x->e, &next);
    assert_string_equal(x->f.calls, "AWAWAW");
    assert_int_equal(x->f.now_ns, (1000 + 75 + 800) * MS);
    assert_int_equal(next, 0);
}

void test_new_leader_takes_lock_when_attempt_did_not(void **state) {
    struct fixture *x = *state;

    x->f.attempt_held = 0; /* a waking follower held it for a moment */
    odbc_leader__elector_tick(&x->e, NULL);
    assert_string_equal(x->f.calls, "AH");
    x->f.now_ns += 1000 * MS;
    x->f.renew_held = 1;
    odbc_leader__elector_tick(&x->e, NULL);
    assert_string_equal(x->f.calls, "AHN"); /* held now: no second hold */
}

/* The leader crashed (nobody holds the wake-up lock) 2.3 s into a 3 s
 * lease that this follower first saw at 1000 ms: elected at the floor of
 * its watch, one TTL after that first sight; the pauses between useless
 * wake-ups double, so they are few. */
void test_wake_to_crashed_leader_attempts_at_expiry(void **state) {
    struct fixture *x = *state;
    uint32_t next = 99;

    int64_t start = x->f.now_ns;
    int rc = ODBC_LEADER_FOLLOWER;
    int ticks = 0;

    other_leads(&x->f, 700);
    for (;;) {
        rc = odbc_leader__elector_tick(&x->e, &next);
        if (rc != ODBC_LEADER_FOLLOWER || ++ticks > 100)
            break;
        x->f.now_ns += (int64_t)next * MS;
    }
    assert_int_equal(rc, ODBC_LEADER_LEADER);
    assert_true(x->f.now_ns - start >= 3000 * MS);
    assert_true(x->f.now_ns - start <= 3020 * MS);
    assert_true(x->f.waits <= 20);
}

void test_resign_releases_after_the_resign(void **state) {
    struct fixture *x = *state;

    odbc_leader__elector_tick(&x->e, NULL);
    odbc_leader__elector_resign(&x->e);
    assert_string_equal(x->f.calls, "ASL");
    odbc_leader__elector_tick(&x->e, NULL);
    assert_int_equal(x->f.releases, 1); /* once */
}

void test_step_down_releases_before_next_step(void **state) {
    struct fixture *x = *state;

    odbc_leader__elector_tick(&x->e, NULL);
    other_leads(&x->f, 60000); /* the term was replaced */
    x->f.now_ns += 1000 * MS;
    odbc_leader__elector_tick(&x->e, NULL);
    assert_string_equal(x->f.calls, "ANA");
    x->f.now_ns += 1020 * MS; /* the follower's next step is due */
    odbc_leader__elector_tick(&x->e, NULL);
    assert_string_equal(x->f.calls, "ANALA");
}

void test_no_wait_when_disabled(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    other_leads(&x->f, 60000);
    x->f.other_holds_lock = 1;
    odbc_leader__elector_tick(&x->e, &next);
    assert_int_equal(next, 1020);
    odbc_leader__elector_tick(&x->e, &next);
    assert_int_equal(x->f.waits, 0);
}
