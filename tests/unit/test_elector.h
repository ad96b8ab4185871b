/* SPDX-License-Identifier: MIT */
/*
 * test_elector.h: what the files of the unit test test_elector share: the
 * fake clock and database port (struct fake), the fixture each test gets,
 * the helpers of test_elector_fake.c and the tests main() runs, by file.
 *
 *   test_elector.c         main() and its table
 *   test_elector_fake.c    the fake clock and port, setup and helpers
 *   test_elector_lease.c   winning and keeping a lease: trust windows,
 *                          renewals, step-down, backoff, what is reported
 *   test_elector_resign.c  resigning, resign requests and shutdown
 *   test_elector_wake.c    the follower wake-up: wait, release and hold
 *   test_elector_watch.c   the watch before a takeover, and clock steps
 */
#ifndef TEST_ELECTOR_H
#define TEST_ELECTOR_H

#include <stdint.h>

#include "config.h"
#include "elector.h"
#include "log.h"

#define MS INT64_C(1000000)

struct fake {
    int64_t now_ns;        /* the local clock */
    int64_t db_offset_ms;  /* database clock = local / 1e6 + offset */
    int64_t op_cost_ns;    /* each operation advances the clock this much */
    int64_t reply_cost_ns; /* renew: the answer takes this long to come
                              back after the database acted */
    /* the lease row */
    char leader[ODBC_LEADER__NAME_MAX + 1];
    int64_t term, expires_at_ms, ttl_ms;
    int has_row;
    int resign_requested; /* someone asked the leader to resign */
    /* injected failures: the next call of that kind returns it */
    int fail_attempt, fail_renew, fail_connect, fail_resign;
    int lose_race; /* the next attempt loses a race: no row, no error */
    /* what the last attempt passed as the watched row */
    int64_t seen_term_arg, seen_expires_arg;
    /* call counters */
    int connects, disconnects, attempts, renews, resigns, unregisters;
    int64_t last_resigned_term;
    int connected;
    /* on_change log */
    int changes;
    int last_is_leader;
    int64_t last_term;
    char last_leader[ODBC_LEADER__NAME_MAX + 1];
    const char *me;
    /* the wake-up lock: the other leader holds it and lets go of it by
     * resigning at other_resigns_at_ns (0 = never) */
    int other_holds_lock;
    int64_t other_resigns_at_ns;
    int waits, releases, holds, reads;
    int attempt_held, renew_held; /* the wake_held the port reports */
    int64_t wait_budgets[8];
    char calls[64]; /* A attempt, N renew, S resign, L release, W wait,
                       H hold, R read */
    /* the elector's log: lines per level, the last warning, and the
     * lines that say how long reconnecting took */
    int warnings, infos, debugs, reconnected;
    char last_warning[256];
};

struct fixture {
    struct fake f;
    struct odbc_leader__elector e;
    struct odbc_leader__log log;
};

/* ---- test_elector_fake.c ---- */

int64_t db_now(struct fake *f);
int setup(void **state);
int setup_wait(void **state);
int setup_read(void **state);
int teardown(void **state);
void other_leads(struct fake *f, int64_t ms);
void other_renews(struct fake *f);
int tick_until(struct fixture *x, int64_t until_ms);

/* ---- test_elector_lease.c ---- */

void test_wins_vacant_lease(void **state);
void test_follower_sees_leader_and_waits_for_expiry(void **state);
void test_trust_window_lapses_without_ticks(void **state);
void test_lapsed_leader_reports_step_down_on_next_tick(void **state);
void test_renew_extends_from_attempt_start(void **state);
void test_renew_error_keeps_window_without_extending(void **state);
void test_term_replaced_steps_down_then_attempts(void **state);
void test_same_id_unexpired_lease_is_not_adopted(void **state);
void test_connection_lost_backs_off(void **state);
void test_outage_is_logged_once_a_minute(void **state);
void test_backoff_is_capped(void **state);
void test_leader_keeps_window_while_disconnected(void **state);
void test_unknown_commit_outcome_is_not_leadership(void **state);
void test_late_renew_is_never_reported(void **state);
void test_tick_never_says_leader_without_is_leader(void **state);
void test_leadership_is_one_read(void **state);
void test_changes_reported_once_in_order(void **state);
void test_late_win_is_never_reported(void **state);

/* ---- test_elector_resign.c ---- */

void test_reported_resign_request_keeps_the_term(void **state);
void test_resign_hands_over_and_holds_off(void **state);
void test_resign_request_is_honoured_at_renewal(void **state);
void test_resign_failure_still_steps_down(void **state);
void test_shutdown_resigns_and_unregisters(void **state);
void test_follower_shutdown_does_not_resign(void **state);

/* ---- test_elector_wake.c ---- */

void test_follower_wakes_when_leader_resigns(void **state);
void test_wait_times_out_until_the_next_attempt(void **state);
void test_wake_without_lock_holder_backs_off(void **state);
void test_new_leader_takes_lock_when_attempt_did_not(void **state);
void test_wake_to_crashed_leader_attempts_at_expiry(void **state);
void test_resign_releases_after_the_resign(void **state);
void test_step_down_releases_before_next_step(void **state);
void test_no_wait_when_disabled(void **state);

/* ---- test_elector_watch.c ---- */

void test_takeover_waits_for_one_ttl_of_watching(void **state);
void test_forward_step_does_not_hand_over_early(void **state);
void test_first_sight_after_a_step_waits_one_ttl(void **state);
void test_renewal_restarts_the_watch(void **state);
void test_watch_reads_follow_the_renewals(void **state);
void test_released_lease_is_taken_at_once(void **state);
#ifdef ODBC_LEADER_TEST_HOOKS
void test_no_watch_takes_on_database_time(void **state);
#endif
void test_backward_step_is_counted_only(void **state);

#endif /* TEST_ELECTOR_H */
