/* SPDX-License-Identifier: MIT */
/*
 * scenarios.c: the program of the protocol's scenarios against a real
 * database through its real ODBC driver: main() runs them in one cmocka
 * table. They live by concern in scenarios_lease.c, scenarios_faults.c,
 * scenarios_ledger.c, scenarios_schema.c, scenarios_group.c and
 * scenarios_lifecycle.c, on the
 * helpers of scenarios_util.c (all declared in scenarios.h). The same
 * program runs on every database: the wrapper script (sqlite.test,
 * postgresql.test) starts the server, writes a hermetic odbcinst.ini and
 * sets
 *   OL_CONNECT      base connection string (no Leader* keys)
 *   OL_KIND         "sqlite", "postgresql" or "mariadb"
 *   OL_RESTART_CMD  shell command restarting the server (servers only)
 *   OL_DOWN_CONNECT a connection string whose server is unreachable
 *   OL_DSN          an odbc.ini DSN whose section sets LeaderNamespace=
 *                   from-odbc-ini and LeaderTTL=4000
 *   OL_LIMITED_CONNECT the same database as an account limited to SELECT,
 *                   INSERT, UPDATE, DELETE (servers only)
 *   OL_LEADER_EXTRA Leader* settings added to every handle's config, e.g.
 *                   LeaderDialect=generic.sql for the conformance pairs
 *   OL_FIRST_ROW    "waits" or "collides": what first_row_race expects
 *                   on a database the suite does not know (see there)
 * Each scenario uses its own namespace (and table prefix where it needs
 * fresh tables), so scenarios do not see each other's rows.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "scenarios.h"

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_candidate_becomes_leader),
        cmocka_unit_test(two_candidates_exactly_one_leads),
        cmocka_unit_test(renewing_keeps_the_term),
        cmocka_unit_test(graceful_shutdown_hands_over_before_expiry),
        cmocka_unit_test(killed_leader_is_replaced_after_expiry),
        cmocka_unit_test(stale_term_can_neither_renew_nor_resign),
        cmocka_unit_test(
            expired_lease_is_not_renewed_and_own_lease_not_retaken),
        cmocka_unit_test(held_lease_is_taken_only_as_watched),
        cmocka_unit_test(resign_request_and_handoff),
        cmocka_unit_test(same_id_winning_again_gets_a_new_term),
        cmocka_unit_test(trust_window_lapses_when_ticks_stop),
        cmocka_unit_test(candidates_are_listed),
        cmocka_unit_test(leader_removes_long_dead_candidates),
        cmocka_unit_test(settings_from_odbc_ini_and_string),
        cmocka_unit_test(first_row_race),
        cmocka_unit_test(waiting_follower_wakes_on_resign),
        cmocka_unit_test(reconnects_after_server_restart),
        cmocka_unit_test(claim_after_server_restart_is_tried_again),
        cmocka_unit_test(claim_answer_lost_is_not_claimed_twice),
        cmocka_unit_test(least_privilege_candidates),
        cmocka_unit_test(bad_config_gives_clear_errors_and_writes_nothing),
        cmocka_unit_test(missing_tables_and_wrong_version_are_refused),
        cmocka_unit_test(unreachable_database_gives_clear_error),
        cmocka_unit_test(claims_are_fenced_by_term),
        cmocka_unit_test(retention_deletes_old_finished_fires),
        cmocka_unit_test(public_claim_api),
        cmocka_unit_test(terms_keep_growing_across_a_deleted_lease_row),
        cmocka_unit_test(earlier_schema_versions_are_upgraded),
        cmocka_unit_test(election_log_follows_terms_and_their_ends),
        cmocka_unit_test(election_log_ends_an_expired_term),
        cmocka_unit_test(election_log_retention_deletes_old_terms),
        cmocka_unit_test(rows_of_another_epoch_are_quarantined),
        cmocka_unit_test(fenced_write_is_refused_after_takeover),
        cmocka_unit_test(interrupted_fire_is_recovered_once_in_a_later_term),
        cmocka_unit_test(paused_jobs_skip_and_run_now_runs_once),
        cmocka_unit_test(take_needs_a_later_term),
        cmocka_unit_test(group_jobs_pause_in_their_shard),
        cmocka_unit_test(schedules_refuse_a_claim_computed_otherwise),
        cmocka_unit_test(schedule_identities_are_checked),
        cmocka_unit_test(group_schedules_are_checked_in_the_shard),
        cmocka_unit_test(catch_up_reads_the_ledger),
        cmocka_unit_test(group_members_split_and_claim),
        cmocka_unit_test(group_crashed_member_is_replaced_after_the_watch),
        cmocka_unit_test(group_members_back_after_an_outage_lead_again),
        cmocka_unit_test(group_lost_shards_of_another_are_released),
        cmocka_unit_test(group_bad_settings_are_refused),
        cmocka_unit_test(group_of_many_shards_is_made_whole),
        cmocka_unit_test(group_first_members_race),
        cmocka_unit_test(group_late_ticks_are_fenced),
        cmocka_unit_test(group_shards_hold_under_the_members_lease),
        cmocka_unit_test(group_steady_tick_reads_no_shard_row),
        cmocka_unit_test(group_upgrade_leaves_old_members_safe),
    };

    if (getenv("OL_CONNECT") == NULL) {
        fprintf(stderr, "OL_CONNECT is not set: run through sqlite.test or "
                        "postgresql.test\n");
        return 1;
    }
    cmocka_set_message_output(CM_OUTPUT_STDOUT);
    return cmocka_run_group_tests_name(getenv("OL_KIND"), tests, NULL, NULL);
}
