/* SPDX-License-Identifier: MIT */
/*
 * scenarios_schedule.c: schedule identities (docs/schedules.md) through
 * the public calls: the first claim records a job's identity; a host that
 * computes the job's fires otherwise (another time zone) has its claims
 * refused by name, nothing claimed, the refusal counted and listed; the
 * same identity from another host claims; an operator's reschedule moves
 * the job to the other identity, or to none; a claim without an identity
 * (an older host) is not checked; and a group's job is checked in its
 * shard.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "scenarios.h"

#define SC_SETTINGS "LeaderTTL=1000;LeaderSafetyMargin=200;LeaderFollowerWait=0"
#define HOURLY "cron 0 * * * *"
#define ENGINE "minicron (DST gap: skipped; overlap: twice)"
#define AS_UTC HOURLY " in UTC by " ENGINE
#define AS_KOLKATA HOURLY " in Asia/Kolkata by " ENGINE

/* Ticks h until it leads (at most 10 s); fails the test otherwise.
 * Returns its term. */
static int64_t lead(odbc_leader_t *h) {
    int64_t until = mono_ms() + 10000;

    while (mono_ms() < until) {
        if (odbc_leader_tick(h, NULL) == ODBC_LEADER_LEADER)
            return odbc_leader_term(h);
        sleep_ms(50);
    }
    fail_msg("no leadership within 10 s");
    return 0;
}

/* The schedule of one job, as odbc_leader_list_schedules() lists it. */
struct one_schedule {
    const char *name;
    int found;
    struct odbc_leader_schedule s;
};

static void schedule_seen(void *ctx, const struct odbc_leader_schedule *s) {
    struct one_schedule *o = ctx;

    if (strcmp(s->job, o->name) == 0) {
        o->s = *s;
        o->found = 1;
    }
}

static struct odbc_leader_schedule schedule_of(odbc_leader_t *h,
                                               const char *job) {
    struct one_schedule o;

    memset(&o, 0, sizeof(o));
    o.name = job;
    assert_true(odbc_leader_list_schedules(h, schedule_seen, &o) >= 1);
    assert_true(o.found);
    return o.s;
}

/* 1 when (job, fire_ms) is in h's namespace's ledger. */
static int claimed(odbc_leader_t *h, const char *job, int64_t fire_ms) {
    struct odbc_leader_fire f;

    return odbc_leader_read_fire(h, job, fire_ms, &f) == 1;
}

/* Ticks a until it leads after b resigned. */
static int64_t hand_over(odbc_leader_t *from, odbc_leader_t *to) {
    assert_int_equal(odbc_leader_resign(from), 0);
    return lead(to);
}

/* Two hosts of one namespace, one computing an hourly job in UTC and one
 * in Asia/Kolkata (30 minutes apart): the second's claims are refused by
 * name and counted, whoever leads; the first's keep running; a third in
 * UTC claims; an operator's reschedule lets the second claim instead. */
void schedules_refuse_a_claim_computed_otherwise(void **state) {
    char ns[64];
    odbc_leader_t *utc, *ist, *utc2, *op;
    struct odbc_leader_error_info e;
    struct odbc_leader_schedule s;
    int64_t t, fire = (int64_t)time(NULL) / 3600 * 3600000;

    (void)state;
    ns_name(ns, sizeof(ns), "sched");
    utc = make_ns(ns, "LeaderId=sc-utc;" SC_SETTINGS);
    ist = make_ns(ns, "LeaderId=sc-ist;" SC_SETTINGS);
    utc2 = make_ns(ns, "LeaderId=sc-utc2;" SC_SETTINGS);
    op = make_ns(ns, "LeaderId=sc-operator;" SC_SETTINGS); /* never ticks */
    assert_int_equal(
        odbc_leader_set_schedule(utc, "hourly", HOURLY, "Etc/UTC", ENGINE), 0);
    assert_int_equal(
        odbc_leader_set_schedule(ist, "hourly", HOURLY, "Asia/Kolkata", ENGINE),
        0);
    assert_int_equal(odbc_leader_set_schedule(
                         utc2, "hourly", " cron  0 * * * *", "UTC", ENGINE),
                     0);
    /* the first claim records the identity ("Etc/UTC" is UTC) */
    t = lead(utc);
    assert_int_equal(odbc_leader_claim(utc, "hourly", fire), 1);
    assert_int_equal(odbc_leader_finish_fire(utc, "hourly", fire, t, 0), 0);
    s = schedule_of(op, "hourly");
    assert_string_equal(s.schedule, AS_UTC);
    assert_string_equal(s.since_by, "sc-utc");
    assert_true(s.since_ms > 0);
    assert_int_equal(s.refusals, 0);

    /* the Kolkata host leads next: its fire at half past is refused */
    hand_over(utc, ist);
    assert_int_equal(odbc_leader_claim(ist, "hourly", fire + 1800000),
                     ODBC_LEADER_ESCHEDULE);
    assert_int_equal(odbc_leader_last_error(ist, &e), ODBC_LEADER_ESCHEDULE);
    assert_int_equal(e.error_class, ODBC_LEADER_CLASS_CONFIG);
    assert_non_null(strstr(e.message, AS_KOLKATA));
    assert_non_null(strstr(e.message, AS_UTC));
    assert_non_null(strstr(e.message, "reschedule hourly"));
    assert_false(claimed(op, "hourly", fire + 1800000));
    assert_int_equal(odbc_leader_claim(ist, "hourly", fire + 3600000),
                     ODBC_LEADER_ESCHEDULE);
    s = schedule_of(op, "hourly");
    assert_string_equal(s.schedule, AS_UTC);
    assert_int_equal(s.refusals, 2);
    assert_string_equal(s.refused, AS_KOLKATA);
    assert_string_equal(s.refused_by, "sc-ist");
    assert_true(s.refused_at_ms >= s.since_ms);
    /* its other jobs, and claims without an identity, are not checked */
    assert_int_equal(odbc_leader_claim(ist, "other", fire + 1800000), 1);
    assert_int_equal(odbc_leader_set_schedule(ist, "hourly", NULL, NULL, NULL),
                     0);
    assert_int_equal(odbc_leader_claim(ist, "hourly", fire + 5400000), 1);
    assert_int_equal(
        odbc_leader_set_schedule(ist, "hourly", HOURLY, "Asia/Kolkata", ENGINE),
        0);

    /* another host in UTC (written with other spaces) claims */
    hand_over(ist, utc2);
    assert_int_equal(odbc_leader_claim(utc2, "hourly", fire + 3600000), 1);

    /* an operator moves the job to Kolkata's identity, deliberately */
    assert_int_equal(odbc_leader_reschedule_job(op, "hourly", AS_KOLKATA), 0);
    s = schedule_of(op, "hourly");
    assert_string_equal(s.schedule, AS_KOLKATA);
    assert_string_equal(s.since_by, "sc-operator");
    assert_int_equal(s.refusals, 0);
    assert_int_equal(odbc_leader_claim(utc2, "hourly", fire + 7200000),
                     ODBC_LEADER_ESCHEDULE);
    hand_over(utc2, ist);
    assert_int_equal(odbc_leader_claim(ist, "hourly", fire + 9000000), 1);
    /* ... or to none: the next claim records its own */
    assert_int_equal(odbc_leader_reschedule_job(op, "hourly", NULL), 0);
    hand_over(ist, utc);
    assert_int_equal(odbc_leader_claim(utc, "hourly", fire + 10800000), 1);
    assert_string_equal(schedule_of(op, "hourly").schedule, AS_UTC);
    odbc_leader_destroy(op);
    odbc_leader_destroy(utc2);
    odbc_leader_destroy(ist);
    odbc_leader_destroy(utc);
}

/* What odbc_leader_set_schedule() refuses, by name, with nothing
 * registered; and the host's zone named. */
void schedule_identities_are_checked(void **state) {
    char ns[64], zone[64];
    odbc_leader_t *h;
    struct odbc_leader_error_info e;

    (void)state;
    ns_name(ns, sizeof(ns), "schedbad");
    h = make_ns(ns, "LeaderId=sb-a;" SC_SETTINGS);
    assert_int_equal(odbc_leader_set_schedule(h, "j", HOURLY, "local", ENGINE),
                     ODBC_LEADER_EINVAL);
    odbc_leader_last_error(h, &e);
    assert_non_null(strstr(e.message, "\"local\" names no zone"));
    assert_int_equal(
        odbc_leader_set_schedule(h, "j", HOURLY, "Europe/Berln", ENGINE),
        ODBC_LEADER_EINVAL);
    odbc_leader_last_error(h, &e);
    assert_non_null(strstr(e.message, "Europe/Berln"));
    assert_int_equal(
        odbc_leader_set_schedule(h, "j", HOURLY, "../etc/passwd", ENGINE),
        ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_set_schedule(h, "j", "  ", NULL, ENGINE),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(
        odbc_leader_set_schedule(h, "j", "cron\n0 * * * *", "UTC", ENGINE),
        ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_set_schedule(h, "j", HOURLY, "UTC", ""),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(
        odbc_leader_set_schedule(h, "bad job", HOURLY, "UTC", ENGINE),
        ODBC_LEADER_EINVAL);
    /* none of these registered anything: a claim is not checked */
    lead(h);
    assert_int_equal(odbc_leader_claim(h, "j", (int64_t)time(NULL) * 1000), 1);
    assert_int_equal(odbc_leader_local_zone(zone, sizeof(zone)), 0);
    assert_true(zone[0] != '\0');
    odbc_leader_destroy(h);
}

/* The whole group member leads every shard. */
static int leads_all(odbc_leader_group_t **m, int n) {
    (void)n;
    return led_by(m[0]) == odbc_leader_group_shards(m[0]);
}

/* A group's job is checked in its shard: a member computing it otherwise
 * is refused there, and the group's name lists and reschedules it. */
void group_schedules_are_checked_in_the_shard(void **state) {
    char grp[64];
    odbc_leader_group_t *m[1];
    odbc_leader_t *op;
    int64_t fire = (int64_t)time(NULL) / 3600 * 3600000;

    (void)state;
    ns_name(grp, sizeof(grp), "gsched");
    m[0] = make_member(grp, "gs-a",
                       "LeaderShards=4;LeaderTTL=3000;"
                       "LeaderRenewInterval=200;LeaderSafetyMargin=600");
    assert_true(tick_members(m, 1, 100, 20000, leads_all));
    op = make_ns(grp, "LeaderId=gs-operator;" SC_SETTINGS); /* never ticks */
    assert_int_equal(
        odbc_leader_group_set_schedule(m[0], "hourly", HOURLY, "UTC", ENGINE),
        0);
    assert_int_equal(odbc_leader_group_claim(m[0], "hourly", fire), 1);
    assert_string_equal(schedule_of(op, "hourly").schedule, AS_UTC);
    assert_int_equal(odbc_leader_group_set_schedule(m[0], "hourly", HOURLY,
                                                    "Asia/Kolkata", ENGINE),
                     0);
    assert_int_equal(odbc_leader_group_claim(m[0], "hourly", fire + 1800000),
                     ODBC_LEADER_ESCHEDULE);
    assert_int_equal(schedule_of(op, "hourly").refusals, 1);
    assert_int_equal(odbc_leader_reschedule_job(op, "hourly", AS_KOLKATA), 0);
    assert_int_equal(odbc_leader_group_claim(m[0], "hourly", fire + 1800000),
                     1);
    odbc_leader_destroy(op);
    odbc_leader_group_destroy(m[0]);
}

/* The catch-up's read (docs/catch-up.md) on this database's dialect: a
 * job with no fire catches up nothing; after a claim, the later times by
 * policy, within the grace on the database clock; a later claim stands
 * for the missed ones under latest, not under all; another job's fires
 * do not count; a group's job is
 * read in its shard, also through a plain handle on the group's name. */
void catch_up_reads_the_ledger(void **state) {
    char ns[64], grp[64];
    odbc_leader_t *h, *op;
    odbc_leader_group_t *m[1];
    int64_t now = (int64_t)time(NULL) * 1000;
    int64_t t[] = {now - 30000, now - 20000, now - 4000};
    struct odbc_leader_catch_up all = {.struct_size = sizeof(all),
                                       .policy = ODBC_LEADER_CATCH_UP_ALL,
                                       .grace_ms = 60000};
    struct odbc_leader_catch_up latest = all;
    size_t first = 9;

    (void)state;
    latest.policy = ODBC_LEADER_CATCH_UP_LATEST;
    ns_name(ns, sizeof(ns), "catchup");
    h = make_ns(ns, "LeaderId=cu-a;" SC_SETTINGS);
    lead(h);
    assert_int_equal(odbc_leader_catch_up(h, "cj", &all, 0, t, 3, &first), 0);
    assert_int_equal(odbc_leader_claim(h, "cj", now - 40000), 1);
    assert_int_equal(odbc_leader_catch_up(h, "cj", &all, 0, t, 3, &first), 3);
    assert_int_equal(first, 0);
    assert_int_equal(odbc_leader_catch_up(h, "cj", &latest, 0, t, 3, &first),
                     1);
    assert_int_equal(first, 2);
    all.grace_ms = 10000; /* the floor, on the database clock: t[2] only */
    assert_int_equal(odbc_leader_catch_up(h, "cj", &all, 0, t, 3, &first), 1);
    assert_int_equal(first, 2);
    all.grace_ms = 60000;
    /* a later claim: latest takes it for the missed ones, all each */
    assert_int_equal(odbc_leader_claim(h, "cj", now - 10000), 1);
    assert_int_equal(odbc_leader_catch_up(h, "cj", &latest, 0, t, 3, &first),
                     1);
    assert_int_equal(first, 2);
    assert_int_equal(odbc_leader_claim(h, "cj", now - 2000), 1);
    assert_int_equal(odbc_leader_catch_up(h, "cj", &latest, 0, t, 3, &first),
                     0);
    assert_int_equal(odbc_leader_catch_up(h, "cj", &all, 0, t, 3, &first), 3);
    assert_int_equal(odbc_leader_catch_up(h, "other", &all, 0, t, 3, &first),
                     0);
    odbc_leader_destroy(h);

    ns_name(grp, sizeof(grp), "gcatchup");
    m[0] = make_member(grp, "gc-a",
                       "LeaderShards=4;LeaderTTL=3000;"
                       "LeaderRenewInterval=200;LeaderSafetyMargin=600");
    assert_true(tick_members(m, 1, 100, 20000, leads_all));
    assert_int_equal(
        odbc_leader_group_catch_up(m[0], "cj", &all, 0, t, 3, &first), 0);
    assert_int_equal(odbc_leader_group_claim(m[0], "cj", now - 40000), 1);
    assert_int_equal(
        odbc_leader_group_catch_up(m[0], "cj", &all, 0, t, 3, &first), 3);
    op = make_ns(grp, "LeaderId=gc-operator;" SC_SETTINGS); /* never ticks */
    assert_int_equal(odbc_leader_catch_up(op, "cj", &all, 0, t, 3, &first), 3);
    odbc_leader_destroy(op);
    odbc_leader_group_destroy(m[0]);
}
