/* SPDX-License-Identifier: MIT */
/*
 * test_elector_lease.c: winning and keeping a lease: the follower's
 * schedule, the trust window from the attempt's start, renewals,
 * step-down, connection loss and its backoff, outcomes unknown or late,
 * and what tick(), leadership() and on_change report.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "test_elector.h"

void test_wins_vacant_lease(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_LEADER);
    assert_true(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(odbc_leader__elector_term(&x->e), 1);
    assert_int_equal(x->f.changes, 1);
    assert_int_equal(x->f.last_is_leader, 1);
    assert_int_equal(x->f.last_term, 1);
    assert_string_equal(x->f.last_leader, "me");
    assert_int_equal(next, 1000); /* the renew interval */
}

/* A follower that sees another lead: it reports it, and looks again
 * soon when the lease is overdue for a renewal (400 ms left of 3000, its
 * renewal was due at 1000 left), else just after the next renewal is
 * due, at most a renew interval (+ 20 ms) ahead. */
void test_follower_sees_leader_and_waits_for_expiry(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    other_leads(&x->f, 400);
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(odbc_leader__elector_term(&x->e), 0);
    assert_int_equal(x->f.last_is_leader, 0);
    assert_string_equal(x->f.last_leader, "other");
    assert_int_equal(next, 25);

    other_leads(&x->f, 60000);
    odbc_leader__elector_tick(&x->e, &next);
    assert_int_equal(next, 1020);
    other_leads(&x->f, 2500);
    odbc_leader__elector_tick(&x->e, &next);
    assert_int_equal(next, 520); /* 500 ms to the renewal, + 20 */
}

void test_trust_window_lapses_without_ticks(void **state) {
    struct fixture *x = *state;

    x->f.op_cost_ns = 200 * MS; /* a slow round trip */
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_LEADER);
    /* anchored at the attempt start (1000 ms), not the response (1200) */
    x->f.now_ns = 1000 * MS + 2500 * MS - 1;
    assert_true(odbc_leader__elector_is_leader(&x->e));
    x->f.now_ns = 1000 * MS + 2500 * MS;
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(odbc_leader__elector_term(&x->e), 0);
    /* nothing was reported yet: no tick ran */
    assert_int_equal(x->f.changes, 1);
}

void test_lapsed_leader_reports_step_down_on_next_tick(void **state) {
    struct fixture *x = *state;

    odbc_leader__elector_tick(&x->e, NULL);
    other_leads(&x->f, 60000); /* the lease was taken meanwhile */
    x->f.now_ns += 5000 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    assert_int_equal(x->f.renews, 0); /* a lapsed leader does not renew */
    assert_int_equal(x->f.last_is_leader, 0);
    assert_string_equal(x->f.last_leader, "other");
}

void test_renew_extends_from_attempt_start(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    odbc_leader__elector_tick(&x->e, NULL);
    x->f.now_ns += 1000 * MS;
    x->f.op_cost_ns = 300 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_LEADER);
    assert_int_equal(x->f.renews, 1);
    assert_int_equal(x->f.term, 1); /* renewing keeps the term */
    x->f.now_ns = 2000 * MS + 2500 * MS - 1;
    assert_true(odbc_leader__elector_is_leader(&x->e));
    x->f.now_ns = 2000 * MS + 2500 * MS;
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(x->f.changes, 1);
}

void test_renew_error_keeps_window_without_extending(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    odbc_leader__elector_tick(&x->e, NULL); /* trusted until 3500 ms */
    x->f.now_ns = 2000 * MS;
    x->f.fail_renew = ODBC_LEADER_EDB;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next), ODBC_LEADER_EDB);
    assert_true(odbc_leader__elector_is_leader(&x->e));
    assert_true(next > 0 && next <= 1500);
    x->f.now_ns = 3500 * MS;
    assert_false(odbc_leader__elector_is_leader(&x->e));
}

void test_term_replaced_steps_down_then_attempts(void **state) {
    struct fixture *x = *state;

    odbc_leader__elector_tick(&x->e, NULL);
    other_leads(&x->f, 60000); /* e.g. an operator forced a new term */
    x->f.now_ns += 1000 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(x->f.renews, 1);
    assert_int_equal(x->f.attempts, 2); /* stepped down, then attempted */
    assert_int_equal(x->f.last_is_leader, 0);
    assert_int_equal(x->f.last_term, 2);
    assert_string_equal(x->f.last_leader, "other");
}

void test_same_id_unexpired_lease_is_not_adopted(void **state) {
    struct fixture *x = *state;

    /* A previous incarnation with the same id holds an unexpired term:
     * the attempt does not win it, so it must not be trusted. */
    x->f.has_row = 1;
    strcpy(x->f.leader, "me");
    x->f.term = 7;
    x->f.expires_at_ms = db_now(&x->f) + 2000;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    /* expired in the database, but watched for less than one TTL: the
     * same id gets no shortcut (ids of running processes are unique, but
     * a paused one is not dead) */
    x->f.now_ns += 2100 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    x->f.now_ns += 900 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader__elector_term(&x->e), 8);
}

void test_connection_lost_backs_off(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;
    uint32_t first;

    x->f.fail_attempt = ODBC_LEADER_ECONNLOST;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_ECONNLOST);
    assert_int_equal(x->f.disconnects, 1);
    assert_true(next >= 80 && next <= 120); /* 100 ms +-20% */
    first = next;
    /* before the backoff: no connect */
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_EBACKOFF);
    assert_int_equal(x->f.connects, 0);
    /* a failed reconnect doubles the delay */
    x->f.now_ns += (int64_t)first * MS;
    x->f.fail_connect = ODBC_LEADER_ECONNECT;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_ECONNECT);
    assert_int_equal(x->f.connects, 1);
    assert_true(next >= 160 && next <= 240);
    /* then it reconnects and campaigns in the same tick */
    x->f.now_ns += (int64_t)next * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_LEADER);
    assert_int_equal(x->f.connects, 2);
}

/* An outage of many failed reconnects is one warning a minute (the port
 * logs the driver's message); the reconnect says how long it took. */
void test_outage_is_logged_once_a_minute(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;
    int64_t start;
    int i;

    x->f.fail_attempt = ODBC_LEADER_ECONNLOST;
    odbc_leader__elector_tick(&x->e, &next);
    start = x->f.now_ns;
    x->f.warnings = 0;
    for (i = 0; x->f.now_ns - start < 150 * INT64_C(1000) * MS; i++) {
        x->f.now_ns += (int64_t)next * MS;
        x->f.fail_connect = ODBC_LEADER_ECONNECT;
        assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                         ODBC_LEADER_ECONNECT);
    }
    assert_true(i > 100);               /* about one attempt a second */
    assert_int_equal(x->f.warnings, 2); /* after 60 s and after 120 s */
    assert_non_null(strstr(x->f.last_warning, "still cannot reconnect"));
    assert_true(x->f.debugs >= i - 2);
    x->f.now_ns += (int64_t)next * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_LEADER);
    assert_int_equal(x->f.reconnected, 1);
    assert_int_equal(x->f.warnings, 2);
    /* the next outage starts counting again */
    x->f.fail_renew = ODBC_LEADER_ECONNLOST;
    x->f.now_ns += 1000 * MS;
    odbc_leader__elector_tick(&x->e, &next);
    x->f.now_ns += (int64_t)next * MS;
    x->f.fail_connect = ODBC_LEADER_ECONNECT;
    odbc_leader__elector_tick(&x->e, &next);
    assert_int_equal(x->e.outage_failures, 1);
}

void test_backoff_is_capped(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    x->f.fail_attempt = ODBC_LEADER_ECONNLOST;
    odbc_leader__elector_tick(&x->e, &next);
    for (int i = 0; i < 20; i++) {
        x->f.now_ns += (int64_t)next * MS;
        x->f.fail_connect = ODBC_LEADER_ECONNECT;
        odbc_leader__elector_tick(&x->e, &next);
    }
    /* cap: max(1 s, renew interval) +20% */
    assert_true(next >= 800 && next <= 1200);
}

void test_leader_keeps_window_while_disconnected(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    odbc_leader__elector_tick(&x->e, NULL); /* trusted until 3500 */
    x->f.now_ns = 2000 * MS;
    x->f.fail_renew = ODBC_LEADER_ECONNLOST;
    odbc_leader__elector_tick(&x->e, &next);
    assert_true(odbc_leader__elector_is_leader(&x->e));
    /* the host is told to come back by the end of the window at most */
    x->f.now_ns = 3400 * MS;
    x->f.fail_connect = ODBC_LEADER_ECONNECT;
    odbc_leader__elector_tick(&x->e, &next);
    assert_true(next <= 100);
    x->f.now_ns = 3500 * MS;
    assert_false(odbc_leader__elector_is_leader(&x->e));
    x->f.fail_connect = ODBC_LEADER_ECONNECT;
    x->f.now_ns += 2000 * MS;
    odbc_leader__elector_tick(&x->e, &next);
    assert_int_equal(x->f.last_is_leader, 0);
}

void test_unknown_commit_outcome_is_not_leadership(void **state) {
    struct fixture *x = *state;

    x->f.fail_attempt = ODBC_LEADER_EUNKNOWN;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_EUNKNOWN);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    /* the connection is dropped: a kept one could still hold the
     * transaction (and SQLite's file lock) */
    assert_int_equal(x->f.disconnects, 1);
    assert_false(x->e.connected);
    /* say the COMMIT did take effect: the term the attempt won is never
     * adopted; the next attempt, after the reconnect, finds it unexpired
     * and follows until it expires */
    x->f.has_row = 1;
    strcpy(x->f.leader, "me");
    x->f.term = 1;
    x->f.expires_at_ms = db_now(&x->f) + 3000;
    x->f.now_ns += 2000 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    assert_int_equal(x->f.connects, 1);
}

void test_late_renew_is_never_reported(void **state) {
    struct fixture *x = *state;

    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_LEADER);
    x->f.now_ns += 1000 * MS;
    /* the database renews at once, the answer arrives 2600 ms later:
     * after the 2500 ms window the renewal would open */
    x->f.reply_cost_ns = 2600 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(odbc_leader__elector_term(&x->e), 0);
    assert_int_equal(x->f.last_is_leader, 0);
    assert_int_equal(x->f.resigns, 1); /* handed back at once */
    assert_int_equal(x->f.last_resigned_term, 1);
}

/* tick() returns leader only while is_leader() is true: every cost of
 * the attempt and the renewal, from instant to far past the window, at
 * every point of the renew cycle. */
void test_tick_never_says_leader_without_is_leader(void **state) {
    struct fixture *x = *state;
    int positive = 0, negative = 0;

    for (int64_t cost = 0; cost <= 4000; cost += 50) {
        for (int64_t gap = 0; gap <= 3000; gap += 250) {
            int rc;

            x->f.op_cost_ns = cost * MS / 2;
            x->f.reply_cost_ns = cost * MS / 2;
            rc = odbc_leader__elector_tick(&x->e, NULL);
            if (rc > 0) {
                assert_true(odbc_leader__elector_is_leader(&x->e));
                assert_true(odbc_leader__elector_term(&x->e) > 0);
                positive++;
            } else {
                negative++;
            }
            x->f.now_ns += gap * MS;
        }
    }
    /* both outcomes happened, so the assertion above was exercised */
    assert_true(positive > 10);
    assert_true(negative > 10);
}

void test_leadership_is_one_read(void **state) {
    struct fixture *x = *state;
    uint32_t valid = 7;

    assert_int_equal(odbc_leader__elector_leadership(&x->e, &valid), 0);
    assert_int_equal(valid, 0);
    odbc_leader__elector_tick(&x->e, NULL);
    assert_int_equal(odbc_leader__elector_leadership(&x->e, &valid), 1);
    assert_int_equal(valid, 2500); /* TTL - margin from the attempt */
    x->f.now_ns += 2499 * MS;
    assert_int_equal(odbc_leader__elector_leadership(&x->e, &valid), 1);
    assert_int_equal(valid, 1);
    x->f.now_ns += 1 * MS;
    assert_int_equal(odbc_leader__elector_leadership(&x->e, &valid), 0);
    assert_int_equal(valid, 0);
}

void test_changes_reported_once_in_order(void **state) {
    struct fixture *x = *state;

    other_leads(&x->f, 500);
    odbc_leader__elector_tick(&x->e, NULL);
    odbc_leader__elector_tick(&x->e, NULL);
    assert_int_equal(x->f.changes, 1); /* same leader, same term */
    x->f.now_ns += 3000 * MS;          /* expired, and watched for one TTL */
    odbc_leader__elector_tick(&x->e, NULL);
    assert_int_equal(x->f.changes, 2);
    assert_int_equal(x->f.last_is_leader, 1);
    assert_int_equal(x->f.last_term, 2);
}

void test_late_win_is_never_reported(void **state) {
    struct fixture *x = *state;

    x->f.op_cost_ns = 2600 * MS; /* past the 2500 ms trust window */
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    /* on_change never said "leader": at most one call, saying follower */
    assert_true(x->f.changes <= 1);
    assert_int_equal(x->f.last_is_leader, 0);
    assert_int_equal(x->f.resigns, 1); /* the term was handed back */
    assert_string_equal(x->f.leader, "");
}
