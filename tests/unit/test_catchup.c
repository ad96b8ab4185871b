/* SPDX-License-Identifier: MIT */
/*
 * test_catchup.c: unit tests of the catch-up policy (catchup.c,
 * docs/catch-up.md): every vector of docs/catch-up-vectors.txt, the file
 * each binding's tests read too, then what the vectors cannot say (the
 * struct's size, flags, the row a jobs listing gives).
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catchup.h"
#include "odbc_leader.h"

#define MAX_TIMES 64

/* Parses "-" or comma-separated integers into v (at most MAX_TIMES).
 * Returns the count, or -1 for a malformed list. */
static int parse_times(const char *s, int64_t *v) {
    int n = 0;
    char *end;

    if (strcmp(s, "-") == 0)
        return 0;
    for (;;) {
        if (n == MAX_TIMES)
            return -1;
        errno = 0;
        v[n++] = strtoll(s, &end, 10);
        if (errno != 0 || end == s)
            return -1;
        if (*end == '\0')
            return n;
        if (*end != ',')
            return -1;
        s = end + 1;
    }
}

/* Checks one vector line (NUL-terminated, no newline) at line no of the
 * file: fails the test with the line when the policy answers otherwise. */
static void check_vector(char *line, int no) {
    char policy[32], flags[16], times_s[1024], arrow[4], want_s[1024];
    long long grace, now, last;
    int64_t times[MAX_TIMES], want[MAX_TIMES];
    struct odbc_leader_catch_up p = {.struct_size = sizeof(p)};
    int n, nwant = 0, rc = 0, einval;
    size_t first = 0;

    if (sscanf(line, "%31s %lld %lld %lld %15s %1023s %3s %1023s", policy,
               &grace, &now, &last, flags, times_s, arrow, want_s) != 8 ||
        strcmp(arrow, "->") != 0)
        fail_msg("docs/catch-up-vectors.txt:%d: malformed: %s", no, line);
    n = parse_times(times_s, times);
    einval = strcmp(want_s, "EINVAL") == 0;
    if (!einval)
        nwant = parse_times(want_s, want);
    if (n < 0 || nwant < 0)
        fail_msg("docs/catch-up-vectors.txt:%d: malformed times: %s", no, line);
    p.grace_ms = grace;
    rc = odbc_leader_catch_up_parse(policy, &p);
    if (rc == 0)
        rc = odbc_leader_catch_up_select(
            &p,
            strcmp(flags, "present") == 0 ? ODBC_LEADER_CATCH_UP_PRESENT : 0,
            now, last, times, (size_t)n, &first);
    if (einval) {
        if (rc != ODBC_LEADER_EINVAL)
            fail_msg("docs/catch-up-vectors.txt:%d: %d, not EINVAL: %s", no, rc,
                     line);
        return;
    }
    if (rc != nwant)
        fail_msg("docs/catch-up-vectors.txt:%d: claims %d, not %d: %s", no, rc,
                 nwant, line);
    for (int i = 0; i < nwant; i++)
        if (times[first + (size_t)i] != want[i])
            fail_msg("docs/catch-up-vectors.txt:%d: claim %d is %lld, not "
                     "%lld: %s",
                     no, i, (long long)times[first + (size_t)i],
                     (long long)want[i], line);
}

/* Every vector of the file, and at least 30 of them (a file cut short
 * would pass). */
static void test_vectors(void **state) {
    const char *srcdir = getenv("srcdir");
    char path[4096], line[4096];
    int no = 0, checked = 0;
    FILE *f;

    (void)state;
    snprintf(path, sizeof(path), "%s/docs/catch-up-vectors.txt",
             srcdir != NULL ? srcdir : ".");
    f = fopen(path, "r");
    if (f == NULL)
        fail_msg("%s: %s", path, strerror(errno));
    while (fgets(line, sizeof(line), f) != NULL) {
        no++;
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || line[strspn(line, " \t")] == '\0')
            continue;
        check_vector(line, no);
        checked++;
    }
    fclose(f);
    assert_true(checked >= 30);
}

/* The parse: each text's policy and cap; a refused text leaves out as it
 * was. */
static void test_parse(void **state) {
    struct odbc_leader_catch_up p = {
        .struct_size = sizeof(p), .policy = 9, .cap = 7, .grace_ms = 5};

    (void)state;
    assert_int_equal(odbc_leader_catch_up_parse("all: 3", &p),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_catch_up_parse("all:3x", &p),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_catch_up_parse("", &p), ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_catch_up_parse(NULL, &p), ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_catch_up_parse("all", NULL),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(p.policy, 9);
    assert_int_equal(p.cap, 7);
    assert_int_equal(odbc_leader_catch_up_parse("all:10000", &p), 0);
    assert_int_equal(p.policy, ODBC_LEADER_CATCH_UP_ALL);
    assert_int_equal(p.cap, 10000);
    assert_int_equal(odbc_leader_catch_up_parse("latest", &p), 0);
    assert_int_equal(p.policy, ODBC_LEADER_CATCH_UP_LATEST);
    assert_int_equal(p.cap, 0);
    assert_int_equal(p.grace_ms, 5);
}

/* What the file cannot say: a struct too short, an unknown flag or
 * policy, a negative cap, no first, too many times; and *first when
 * nothing is claimed. */
static void test_refused(void **state) {
    struct odbc_leader_catch_up p = {.struct_size = sizeof(p),
                                     .policy = ODBC_LEADER_CATCH_UP_ALL,
                                     .grace_ms = 1000};
    static int64_t many[ODBC_LEADER_CATCH_UP_CAP_MAX + 1];
    int64_t t[] = {100, 200};
    size_t first = 42;

    (void)state;
    assert_int_equal(odbc_leader_catch_up_select(&p, 0, 500, 50, t, 2, &first),
                     2);
    assert_int_equal(first, 0);
    p.policy = ODBC_LEADER_CATCH_UP_LATEST;
    assert_int_equal(odbc_leader_catch_up_select(&p, 0, 500, 200, t, 2, &first),
                     0);
    assert_int_equal(first, 2);
    p.policy = ODBC_LEADER_CATCH_UP_ALL;
    assert_int_equal(odbc_leader_catch_up_select(&p, 2, 500, 50, t, 2, &first),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_catch_up_select(&p, 0, 500, 50, t, 2, NULL),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(
        odbc_leader_catch_up_select(NULL, 0, 500, 50, t, 2, &first),
        ODBC_LEADER_EINVAL);
    assert_int_equal(
        odbc_leader_catch_up_select(&p, 0, 500, 50, NULL, 2, &first),
        ODBC_LEADER_EINVAL);
    for (size_t i = 0; i < sizeof(many) / sizeof(many[0]); i++)
        many[i] = (int64_t)i + 1;
    p.grace_ms = 1000000;
    assert_int_equal(odbc_leader_catch_up_select(&p, 0, 20000, 1, many,
                                                 ODBC_LEADER_CATCH_UP_CAP_MAX,
                                                 &first),
                     ODBC_LEADER_CATCH_UP_CAP);
    assert_int_equal(first,
                     ODBC_LEADER_CATCH_UP_CAP_MAX - ODBC_LEADER_CATCH_UP_CAP);
    assert_int_equal(
        odbc_leader_catch_up_select(&p, 0, 20000, 1, many,
                                    ODBC_LEADER_CATCH_UP_CAP_MAX + 1, &first),
        ODBC_LEADER_EINVAL);
    p.policy = 3;
    assert_int_equal(odbc_leader_catch_up_select(&p, 0, 500, 50, t, 2, &first),
                     ODBC_LEADER_EINVAL);
    p.policy = ODBC_LEADER_CATCH_UP_ALL;
    p.cap = -1;
    assert_int_equal(odbc_leader_catch_up_select(&p, 0, 500, 50, t, 2, &first),
                     ODBC_LEADER_EINVAL);
    p.cap = 0;
    p.struct_size = offsetof(struct odbc_leader_catch_up, grace_ms);
    assert_int_equal(odbc_leader_catch_up_select(&p, 0, 500, 50, t, 2, &first),
                     ODBC_LEADER_EINVAL);
}

/* The jobs listing's rows: the job's latest nominal time, and the
 * database clock of any row (a namespace whose only rows are other
 * jobs'). */
static void test_keep_last_fire(void **state) {
    struct odbc_leader__last_fire lf = {.job = "report"};
    struct odbc_leader_job a = {
        .job = "backup", .last_fire_ms = 900, .db_now_ms = 1000};
    struct odbc_leader_job b = {
        .job = "report", .last_fire_ms = 600, .db_now_ms = 999};

    (void)state;
    odbc_leader__keep_last_fire(&lf, &a);
    assert_int_equal(lf.last_ms, 0);
    assert_int_equal(lf.now_ms, 1000);
    odbc_leader__keep_last_fire(&lf, &b);
    assert_int_equal(lf.last_ms, 600);
    assert_int_equal(lf.now_ms, 1000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_keep_last_fire),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
