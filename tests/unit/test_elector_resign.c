/* SPDX-License-Identifier: MIT */
/*
 * test_elector_resign.c: giving a term up: resign() and its handover,
 * resign requests (honoured at the renewal, or reported to the host),
 * a resign that fails, and shutdown as leader and as follower.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_elector.h"

void test_reported_resign_request_keeps_the_term(void **state) {
    struct fixture *x = *state;
    int64_t expires;

    x->e.report_resign = 1;
    odbc_leader__elector_tick(&x->e, NULL);
    x->f.resign_requested = 1;
    x->f.now_ns += 1000 * MS;
    expires = x->f.expires_at_ms;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_RESIGN_REQUESTED);
    /* still leader, renewed, nothing resigned: the host stops first */
    assert_true(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(odbc_leader__elector_term(&x->e), 1);
    assert_true(x->f.expires_at_ms > expires);
    assert_int_equal(x->f.resigns, 0);
    x->f.now_ns += 1000 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_RESIGN_REQUESTED);
    assert_int_equal(x->f.resigns, 0);
    /* then the host resigns: the exact term, handed over */
    assert_int_equal(odbc_leader__elector_resign(&x->e), 0);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(x->f.resigns, 1);
    assert_int_equal(x->f.last_resigned_term, 1);
    assert_string_equal(x->f.leader, "");
}

void test_resign_hands_over_and_holds_off(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    odbc_leader__elector_tick(&x->e, NULL);
    assert_int_equal(odbc_leader__elector_resign(&x->e), 0);
    assert_int_equal(x->f.resigns, 1);
    assert_int_equal(x->f.last_resigned_term, 1);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(x->f.last_is_leader, 0);
    assert_string_equal(x->f.leader, "");
    /* it does not grab the vacant lease right back */
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    assert_int_equal(x->f.attempts, 1);
    assert_int_equal(next, 1000);
    x->f.now_ns += 1000 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader__elector_term(&x->e), 2);
}

void test_resign_request_is_honoured_at_renewal(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    odbc_leader__elector_tick(&x->e, NULL);
    x->f.resign_requested = 1; /* e.g. odbc-leader resign from elsewhere */
    x->f.now_ns += 1000 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(x->f.resigns, 1);
    assert_int_equal(x->f.last_resigned_term, 1);
    assert_string_equal(x->f.leader, "");
    assert_int_equal(x->f.last_is_leader, 0);
    assert_int_equal(next, 1000); /* holds off like a local resign */
}

void test_resign_failure_still_steps_down(void **state) {
    struct fixture *x = *state;

    odbc_leader__elector_tick(&x->e, NULL);
    x->f.fail_resign = ODBC_LEADER_ECONNLOST;
    assert_int_equal(odbc_leader__elector_resign(&x->e), ODBC_LEADER_ECONNLOST);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(x->f.disconnects, 1);
}

void test_shutdown_resigns_and_unregisters(void **state) {
    struct fixture *x = *state;

    odbc_leader__elector_tick(&x->e, NULL);
    odbc_leader__elector_shutdown(&x->e);
    assert_int_equal(x->f.resigns, 1);
    assert_int_equal(x->f.unregisters, 1);
    assert_int_equal(x->f.disconnects, 1);
    assert_int_equal(x->f.last_is_leader, 0);
    assert_false(odbc_leader__elector_is_leader(&x->e));
}

void test_follower_shutdown_does_not_resign(void **state) {
    struct fixture *x = *state;

    other_leads(&x->f, 60000);
    odbc_leader__elector_tick(&x->e, NULL);
    odbc_leader__elector_shutdown(&x->e);
    assert_int_equal(x->f.resigns, 0);
    assert_int_equal(x->f.unregisters, 1);
    assert_string_equal(x->f.leader, "other");
}
