/* SPDX-License-Identifier: MIT */
/*
 * test_elector.c: unit tests of the election state machine with a fake
 * clock and a fake database port. The fake port keeps one lease row in
 * memory with the protocol's rules (vacant-or-expired takeover, exact-term
 * renew and resign) in "database time", so the tests check the elector's
 * decisions: trust windows, step-down, backoff, scheduling, reporting.
 * This file runs them (main); the fake and the tests are in the
 * test_elector_*.c files that test_elector.h lists.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_elector.h"

int main(void) {
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
#define TW(name) cmocka_unit_test_setup_teardown(name, setup_wait, teardown)
#define TR(name) cmocka_unit_test_setup_teardown(name, setup_read, teardown)
        T(test_takeover_waits_for_one_ttl_of_watching),
        T(test_forward_step_does_not_hand_over_early),
        T(test_first_sight_after_a_step_waits_one_ttl),
        T(test_renewal_restarts_the_watch),
        TR(test_watch_reads_follow_the_renewals),
        T(test_released_lease_is_taken_at_once),
#ifdef ODBC_LEADER_TEST_HOOKS
        T(test_no_watch_takes_on_database_time),
#endif
        T(test_backward_step_is_counted_only),
        TW(test_follower_wakes_when_leader_resigns),
        TW(test_wait_times_out_until_the_next_attempt),
        TW(test_wake_without_lock_holder_backs_off),
        TW(test_new_leader_takes_lock_when_attempt_did_not),
        TW(test_wake_to_crashed_leader_attempts_at_expiry),
        TW(test_resign_releases_after_the_resign),
        TW(test_step_down_releases_before_next_step),
        T(test_no_wait_when_disabled),
        T(test_late_win_is_never_reported),
        T(test_wins_vacant_lease),
        T(test_follower_sees_leader_and_waits_for_expiry),
        T(test_trust_window_lapses_without_ticks),
        T(test_lapsed_leader_reports_step_down_on_next_tick),
        T(test_renew_extends_from_attempt_start),
        T(test_renew_error_keeps_window_without_extending),
        T(test_term_replaced_steps_down_then_attempts),
        T(test_same_id_unexpired_lease_is_not_adopted),
        T(test_connection_lost_backs_off),
        T(test_outage_is_logged_once_a_minute),
        T(test_backoff_is_capped),
        T(test_leader_keeps_window_while_disconnected),
        T(test_unknown_commit_outcome_is_not_leadership),
        T(test_late_renew_is_never_reported),
        T(test_tick_never_says_leader_without_is_leader),
        T(test_reported_resign_request_keeps_the_term),
        T(test_leadership_is_one_read),
        T(test_resign_hands_over_and_holds_off),
        T(test_resign_request_is_honoured_at_renewal),
        T(test_resign_failure_still_steps_down),
        T(test_shutdown_resigns_and_unregisters),
        T(test_follower_shutdown_does_not_resign),
        T(test_changes_reported_once_in_order),
#undef T
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
