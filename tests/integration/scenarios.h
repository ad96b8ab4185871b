/* SPDX-License-Identifier: MIT */
/*
 * scenarios.h: what the files of the scenarios program
 * (tests/integration/scenarios) share: the helpers of scenarios_util.c and
 * the scenarios of scenarios_*.c, which main() in scenarios.c runs in one
 * cmocka table. Nothing here is part of the library.
 */
#ifndef ODBC_LEADER_SCENARIOS_H
#define ODBC_LEADER_SCENARIOS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <sql.h>

#include "odbc_leader.h"

struct odbc_leader__config; /* config.h */
struct odbc_leader__db;     /* db.h */

/* ---- helpers (scenarios_util.c) ----------------------------------------- */

/* 1 when OL_KIND is kind ("sqlite", "postgresql", "mariadb"). */
int is_kind(const char *kind);
/* Milliseconds on the monotonic clock. */
int64_t mono_ms(void);
void sleep_ms(int64_t ms);
/* A config string (test_malloc'd): OL_CONNECT, OL_LEADER_EXTRA and the
 * given Leader* settings. */
char *config(const char *fmt, ...);
/* A namespace unique to this run and scenario. */
void ns_name(char *buf, size_t len, const char *scenario);
/* Log callback when OL_DEBUG is set: every line to stderr. */
void debug_log(void *ctx, int level, const char *msg);
/* Creates a handle or fails the test with the error message. */
odbc_leader_t *make(const char *cfg);
odbc_leader_t *make_ns(const char *ns, const char *extra);

/* A raw ODBC connection for inspecting and staging rows (OL_CONNECT). */
struct raw {
    SQLHENV env;
    SQLHDBC dbc;
};

void raw_open(struct raw *r);
void raw_close(struct raw *r);
/* Runs sql; 1 when it succeeded, 0 when it failed; a returned row's first
 * column goes to *first (if given). */
int raw_exec(struct raw *r, const char *sql, int64_t *first);
/* The fence of docs/fencing.md for the suite's dialect, as the CLI
 * prints it, into buf; a write to table's row 1 guarded by it, with ns
 * and term bound: the rows changed (0 when fenced out). */
void printed_fence(char *buf, size_t len);
int fenced_update(struct raw *r, const char *table, const char *fence,
                  const char *ns, int64_t term);
/* 1 when table can be read. */
int table_exists(const char *table);

/* Group members: created (or the test fails), their shards led now,
 * ticked together until done, every shard led by one of them. */
odbc_leader_group_t *make_member(const char *grp, const char *id,
                                 const char *extra);
uint32_t led_by(const odbc_leader_group_t *g);
int tick_members(odbc_leader_group_t **m, int n, int64_t step_ms,
                 int64_t timeout_ms,
                 int (*done)(odbc_leader_group_t **m, int n));
int all_led(odbc_leader_group_t **m, int n);

/* The statement that counts sessions waiting on a row or key lock, or
 * NULL where the database cannot show it (SQLite). */
const char *lock_wait_probe(void);
/* Waits until probe_sql shows a racer thread waiting, or *done is set. */
int64_t await_waiter(struct raw *probe, const char *probe_sql,
                     atomic_int *done);

/* A port handle (db.h) for id on namespace ns, connected, or the test
 * fails; cfg is filled and owned by the caller. port_close frees both. */
struct odbc_leader__db *port_open(struct odbc_leader__config *cfg,
                                  const char *ns, const char *id,
                                  const char *extra);
void port_close(struct odbc_leader__db *db, struct odbc_leader__config *cfg);

#define ELOG_MAX 16

/* A namespace's election log as odbc_leader_list_elections reads it. */
struct elog {
    struct odbc_leader_election e[ELOG_MAX];
    int n; /* rows seen, also beyond ELOG_MAX */
};

/* Reads h's namespace's election log into *l, checking what holds for
 * every log; returns the row count. */
int read_elog(odbc_leader_t *h, struct elog *l);
/* Fails the test unless row i of l is term, won by leader, ended how,
 * handed to to. */
void expect_term(const struct elog *l, int i, int64_t term, const char *leader,
                 const char *how, const char *to);

/* ---- scenarios, in the order of main()'s table -------------------------- */

/* scenarios_lease.c */
void one_candidate_becomes_leader(void **state);
void two_candidates_exactly_one_leads(void **state);
void renewing_keeps_the_term(void **state);
void graceful_shutdown_hands_over_before_expiry(void **state);
void killed_leader_is_replaced_after_expiry(void **state);
void stale_term_can_neither_renew_nor_resign(void **state);
void expired_lease_is_not_renewed_and_own_lease_not_retaken(void **state);
void held_lease_is_taken_only_as_watched(void **state);
void resign_request_and_handoff(void **state);
void same_id_winning_again_gets_a_new_term(void **state);
void trust_window_lapses_when_ticks_stop(void **state);
void candidates_are_listed(void **state);
void leader_removes_long_dead_candidates(void **state);
void settings_from_odbc_ini_and_string(void **state);
void first_row_race(void **state);
void waiting_follower_wakes_on_resign(void **state);

/* scenarios_faults.c */
void reconnects_after_server_restart(void **state);
void claim_after_server_restart_is_tried_again(void **state);
void claim_answer_lost_is_not_claimed_twice(void **state);
void least_privilege_candidates(void **state);
void bad_config_gives_clear_errors_and_writes_nothing(void **state);
void missing_tables_and_wrong_version_are_refused(void **state);
void unreachable_database_gives_clear_error(void **state);

/* scenarios_ledger.c: the fire ledger */
void claims_are_fenced_by_term(void **state);
void retention_deletes_old_finished_fires(void **state);
void public_claim_api(void **state);
void terms_keep_growing_across_a_deleted_lease_row(void **state);

/* scenarios_schema.c */
void earlier_schema_versions_are_upgraded(void **state);

/* scenarios_ledger.c: the election log */
void election_log_follows_terms_and_their_ends(void **state);
void election_log_ends_an_expired_term(void **state);
void election_log_retention_deletes_old_terms(void **state);

/* scenarios_schema.c */
void rows_of_another_epoch_are_quarantined(void **state);
void fenced_write_is_refused_after_takeover(void **state);

/* scenarios_lifecycle.c: the fire lifecycle */
void interrupted_fire_is_recovered_once_in_a_later_term(void **state);
void paused_jobs_skip_and_run_now_runs_once(void **state);
void take_needs_a_later_term(void **state);
void group_jobs_pause_in_their_shard(void **state);
/* scenarios_schedule.c: schedule identities */
void schedules_refuse_a_claim_computed_otherwise(void **state);
void schedule_identities_are_checked(void **state);
void group_schedules_are_checked_in_the_shard(void **state);
void catch_up_reads_the_ledger(void **state);
/* scenarios_group.c */
void group_members_split_and_claim(void **state);
void group_crashed_member_is_replaced_after_the_watch(void **state);
void group_members_back_after_an_outage_lead_again(void **state);
void group_lost_shards_of_another_are_released(void **state);
void group_bad_settings_are_refused(void **state);
void group_of_many_shards_is_made_whole(void **state);
void group_first_members_race(void **state);
void group_late_ticks_are_fenced(void **state);
void group_shards_hold_under_the_members_lease(void **state);
void group_steady_tick_reads_no_shard_row(void **state);
void group_upgrade_leaves_old_members_safe(void **state);

#endif
