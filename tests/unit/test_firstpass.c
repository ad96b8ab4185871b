/* SPDX-License-Identifier: MIT */
/*
 * test_firstpass.c: unit tests of the first-pass rule (firstpass.c,
 * docs/schedules.md) against fake engines and zones (pure logic): a daily
 * 01:30 whose engine runs the first pass when it runs through the autumn
 * change but computes the second when asked from within the repeated hour
 * (cron, cron-parser, fugit), an engine every 15 minutes, a zone whose
 * change repeats half an hour, and a zone without DST.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "odbc_leader.h"

#define MIN_MS INT64_C(60000)
#define HOUR_MS (60 * MIN_MS)

/* A fake zone whose offset changes from before to after at change, and a
 * fake daily engine: its fire times in order, of which second (the second
 * pass of the repeated wall time) it computes only when asked from at or
 * after change. */
struct fake {
    int64_t change, before, after; /* epoch ms; offsets in ms */
    const int64_t *times;
    int n;
    int64_t second;
    int calls; /* how often next ran */
};

static int64_t wall(const struct fake *f, int64_t t) {
    return t + (t < f->change ? f->before : f->after);
}

static int same_wall(void *ctx, int64_t a, int64_t b) {
    return wall(ctx, a) == wall(ctx, b);
}

static int utc_same_wall(void *ctx, int64_t a, int64_t b) {
    (void)ctx;
    return a == b;
}

static int64_t daily_next(void *ctx, int64_t ms) {
    struct fake *f = ctx;
    int i;

    f->calls++;
    for (i = 0; i < f->n; i++)
        if (f->times[i] > ms && (f->times[i] != f->second || ms >= f->change))
            return f->times[i];
    return -1;
}

static int64_t every15_next(void *ctx, int64_t ms) {
    (void)ctx;
    return (ms / (15 * MIN_MS) + 1) * (15 * MIN_MS);
}

/* America/New_York, 2025: 2 November, 06:00Z, from EDT to EST. A daily
 * 01:30: 1 Nov 05:30Z, 2 Nov 05:30Z (first pass) and 06:30Z (second),
 * 3 Nov 06:30Z. */
static const int64_t ny_change = INT64_C(1762063200000);
#define NY_FIRST (ny_change - 30 * MIN_MS)
#define NY_SECOND (ny_change + 30 * MIN_MS)
static const int64_t ny_times[] = {
    INT64_C(1761975000000), INT64_C(1762061400000), INT64_C(1762065000000),
    INT64_C(1762151400000)};

static struct fake new_york(void) {
    return (struct fake){
        ny_change, -4 * HOUR_MS, -5 * HOUR_MS, ny_times, 4, NY_SECOND, 0};
}

static void second_pass_dropped(void **state) {
    struct fake f = new_york();

    (void)state;
    assert_int_equal(NY_FIRST, ny_times[1]);
    assert_int_equal(NY_SECOND, ny_times[2]);
    /* the second 01:30: the engine asked from the first answers 3 Nov */
    assert_int_equal(
        odbc_leader_second_pass(daily_next, same_wall, &f, NY_SECOND), 1);
    /* the first 01:30, and the days around the change */
    assert_int_equal(
        odbc_leader_second_pass(daily_next, same_wall, &f, NY_FIRST), 0);
    assert_int_equal(
        odbc_leader_second_pass(daily_next, same_wall, &f, ny_times[0]), 0);
    assert_int_equal(
        odbc_leader_second_pass(daily_next, same_wall, &f, ny_times[3]), 0);
}

static void first_pass_next(void **state) {
    struct fake f = new_york();
    int64_t out = 0;

    (void)state;
    /* a host that runs through: the first pass, then 3 Nov */
    assert_int_equal(odbc_leader_first_pass_next(daily_next, same_wall, &f,
                                                 NY_FIRST - HOUR_MS, &out),
                     1);
    assert_int_equal(out, NY_FIRST);
    assert_int_equal(
        odbc_leader_first_pass_next(daily_next, same_wall, &f, NY_FIRST, &out),
        1);
    assert_int_equal(out, ny_times[3]);
    /* a host that takes over within the repeated hour (06:10Z): its engine
     * says 06:30Z, the rule says 3 Nov */
    assert_int_equal(daily_next(&f, ny_change + 10 * MIN_MS), NY_SECOND);
    assert_int_equal(odbc_leader_first_pass_next(daily_next, same_wall, &f,
                                                 ny_change + 10 * MIN_MS, &out),
                     1);
    assert_int_equal(out, ny_times[3]);
    /* none left */
    assert_int_equal(odbc_leader_first_pass_next(daily_next, same_wall, &f,
                                                 ny_times[3], &out),
                     0);
    assert_int_equal(out, -1);
}

/* A schedule that fires within the repeated hour anyway keeps its times
 * there: 06:30Z is 01:30 again, but the engine asked from 05:30Z answers
 * 05:45Z. */
static void frequent_kept(void **state) {
    int64_t out = 0;
    struct fake f = new_york();

    (void)state;
    assert_int_equal(
        odbc_leader_second_pass(every15_next, same_wall, &f, NY_SECOND), 0);
    assert_int_equal(odbc_leader_first_pass_next(every15_next, same_wall, &f,
                                                 ny_change + 10 * MIN_MS, &out),
                     1);
    assert_int_equal(out, ny_change + 15 * MIN_MS);
}

/* Lord Howe's change repeats half an hour (+11:00 to +10:30): a daily
 * time whose second pass comes 30 minutes after its first. */
static void half_hour(void **state) {
    static const int64_t change =
        INT64_C(1743865200000); /* 2025-04-05 15:00Z */
    static const int64_t times[] = {INT64_C(1743864300000),  /* 14:45Z */
                                    INT64_C(1743866100000),  /* 15:15Z */
                                    INT64_C(1743952500000)}; /* 6 Apr 15:15Z */
    struct fake f = {change, 11 * HOUR_MS, 21 * HOUR_MS / 2, times, 3, times[1],
                     0};
    int64_t out = 0;

    (void)state;
    assert_int_equal(same_wall(&f, times[0], times[1]), 1);
    assert_int_equal(
        odbc_leader_second_pass(daily_next, same_wall, &f, times[1]), 1);
    assert_int_equal(odbc_leader_first_pass_next(daily_next, same_wall, &f,
                                                 change + MIN_MS, &out),
                     1);
    assert_int_equal(out, times[2]);
}

/* A zone without DST repeats nothing: the engine is not even asked. */
static void no_dst(void **state) {
    struct fake f = new_york();

    (void)state;
    assert_int_equal(
        odbc_leader_second_pass(daily_next, utc_same_wall, &f, NY_SECOND), 0);
    assert_int_equal(f.calls, 0);
}

static void bad_arguments(void **state) {
    struct fake f = new_york();
    int64_t out;

    (void)state;
    assert_int_equal(odbc_leader_second_pass(NULL, same_wall, &f, 1),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_second_pass(daily_next, NULL, &f, 1),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_second_pass(daily_next, same_wall, &f, -5),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(
        odbc_leader_first_pass_next(daily_next, same_wall, &f, 0, NULL),
        ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_first_pass_next(NULL, same_wall, &f, 0, &out),
                     ODBC_LEADER_EINVAL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(second_pass_dropped),
        cmocka_unit_test(first_pass_next),
        cmocka_unit_test(frequent_kept),
        cmocka_unit_test(half_hour),
        cmocka_unit_test(no_dst),
        cmocka_unit_test(bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
