/* SPDX-License-Identifier: MIT */
/*
 * test_crontab.c: unit tests for contrib/minicron/crontab.c, the crontab
 * parser and matcher of minicron: fields, lists, ranges, steps, names,
 * shorthands, the day-of-month/day-of-week rule, environment lines and
 * the messages of refused lines.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "crontab.h"

#define ERRLEN 256

/* Parses text into *tab. Returns crontab_read()'s result; err gets the
 * message. The caller frees tab. */
static int parse(const char *text, struct crontab *tab, char *err) {
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    int rc;

    assert_non_null(f);
    err[0] = '\0';
    rc = crontab_read(f, "tab", tab, err, ERRLEN);
    fclose(f);
    return rc;
}

/* A struct tm for the given local date and time (month 1..12, wday
 * 0..6). Only the fields crontab_due() reads are set. */
static struct tm at(int mon, int mday, int wday, int hour, int min) {
    struct tm tm = {0};

    tm.tm_mon = mon - 1;
    tm.tm_mday = mday;
    tm.tm_wday = wday;
    tm.tm_hour = hour;
    tm.tm_min = min;
    return tm;
}

static void fields_lists_ranges_steps(void **state) {
    struct crontab tab;
    char err[ERRLEN];

    (void)state;
    assert_int_equal(parse("*/15 0-6/3,22 1,31 * *  echo  hi  \n", &tab, err),
                     0);
    assert_int_equal(tab.n_jobs, 1);
    assert_int_equal(tab.jobs[0].minute,
                     (1ULL << 0) | (1ULL << 15) | (1ULL << 30) | (1ULL << 45));
    assert_int_equal(tab.jobs[0].hour,
                     (1U << 0) | (1U << 3) | (1U << 6) | (1U << 22));
    assert_int_equal(tab.jobs[0].dom, (1U << 1) | (1U << 31));
    assert_int_equal(tab.jobs[0].month, 0x1ffe);
    assert_int_equal(tab.jobs[0].dow, 0x7f);
    assert_string_equal(tab.jobs[0].command, "echo  hi  ");
    assert_int_equal(tab.jobs[0].line, 1);
    crontab_free(&tab);
}

static void names_and_sunday_seven(void **state) {
    struct crontab tab;
    char err[ERRLEN];

    (void)state;
    assert_int_equal(
        parse("0 0 * JAN-mar,Dec fri-7 a\n0 0 * * 7 b\n", &tab, err), 0);
    assert_int_equal(tab.n_jobs, 2);
    assert_int_equal(tab.jobs[0].month,
                     (1U << 1) | (1U << 2) | (1U << 3) | (1U << 12));
    assert_int_equal(tab.jobs[0].dow, (1U << 0) | (1U << 5) | (1U << 6));
    assert_int_equal(tab.jobs[1].dow, 1U << 0);
    crontab_free(&tab);
}

static void day_rule(void **state) {
    struct crontab tab;
    char err[ERRLEN];
    struct tm fri_12 = at(5, 12, 5, 0, 0), sat_13 = at(5, 13, 6, 0, 0);
    struct tm sun_14 = at(5, 14, 0, 0, 0), fri_13 = at(9, 13, 5, 0, 0);

    (void)state;
    assert_int_equal(parse("0 0 13 * fri both\n"
                           "0 0 13 * * dom\n"
                           "0 0 * * fri dow\n"
                           "0 0 */2 * fri stepped\n",
                           &tab, err),
                     0);
    /* Both restricted: either matches. */
    assert_true(crontab_due(&tab.jobs[0], &fri_12));
    assert_true(crontab_due(&tab.jobs[0], &sat_13));
    assert_false(crontab_due(&tab.jobs[0], &sun_14));
    /* One of them '*': the other decides. */
    assert_false(crontab_due(&tab.jobs[1], &fri_12));
    assert_true(crontab_due(&tab.jobs[1], &sat_13));
    assert_true(crontab_due(&tab.jobs[2], &fri_12));
    assert_false(crontab_due(&tab.jobs[2], &sat_13));
    /* A field starting with '*' counts as unrestricted, as in cron. */
    assert_false(crontab_due(&tab.jobs[3], &sat_13));
    assert_false(crontab_due(&tab.jobs[3], &sun_14));
    assert_true(crontab_due(&tab.jobs[3], &fri_13));
    crontab_free(&tab);
}

static void time_fields_must_all_match(void **state) {
    struct crontab tab;
    char err[ERRLEN];
    struct tm t1 = at(3, 1, 3, 22, 30), t2 = at(3, 1, 3, 21, 30);
    struct tm t3 = at(4, 1, 3, 22, 30), t4 = at(3, 1, 3, 22, 31);

    (void)state;
    assert_int_equal(parse("30 22 * mar * x\n", &tab, err), 0);
    assert_true(crontab_due(&tab.jobs[0], &t1));
    assert_false(crontab_due(&tab.jobs[0], &t2));
    assert_false(crontab_due(&tab.jobs[0], &t3));
    assert_false(crontab_due(&tab.jobs[0], &t4));
    crontab_free(&tab);
}

static void shorthands_comments_blanks(void **state) {
    struct crontab tab;
    char err[ERRLEN];

    (void)state;
    assert_int_equal(parse("# a comment\n\n   \t\n  # indented\r\n"
                           "@hourly   h\n@DAILY d\n@weekly w\n",
                           &tab, err),
                     0);
    assert_int_equal(tab.n_jobs, 3);
    assert_int_equal(tab.jobs[0].minute, 1);
    assert_int_equal(tab.jobs[0].hour, 0xffffff);
    assert_string_equal(tab.jobs[0].command, "h");
    assert_int_equal(tab.jobs[0].line, 5);
    assert_int_equal(tab.jobs[1].hour, 1);
    assert_int_equal(tab.jobs[2].dow, 1);
    assert_true(tab.jobs[2].dom_star);
    crontab_free(&tab);
}

static void environment_applies_to_later_lines(void **state) {
    struct crontab tab;
    char err[ERRLEN];

    (void)state;
    assert_int_equal(parse("A=1\n* * * * * one\n"
                           "A = ' two words '\nB_2=\"x\"\n* * * * * two\n",
                           &tab, err),
                     0);
    assert_int_equal(tab.n_jobs, 2);
    assert_int_equal(tab.jobs[0].n_env, 1);
    assert_string_equal(tab.jobs[0].env[0], "A=1");
    assert_int_equal(tab.jobs[1].n_env, 2);
    assert_string_equal(tab.jobs[1].env[0], "A= two words ");
    assert_string_equal(tab.jobs[1].env[1], "B_2=x");
    crontab_free(&tab);
}

/* Each refused line and the message it must give. */
static void refused_lines(void **state) {
    static const char *const cases[][2] = {
        {"60 * * * * x\n", "tab:1: minute out of range 0-59"},
        {"* 24 * * * x\n", "tab:1: hour out of range 0-23"},
        {"* * 0 * * x\n", "tab:1: day of month out of range 1-31"},
        {"* * * 13 * x\n", "tab:1: month out of range 1-12"},
        {"* * * * 8 x\n", "tab:1: day of week out of range 0-7"},
        {"* * * * *\n", "tab:1: no command"},
        {"* * * *\n", "tab:1: day of week field missing"},
        {"5/10 * * * * x\n", "tab:1: minute step needs * or a range"},
        {"*/0 * * * * x\n", "tab:1: bad minute step"},
        {"10-5 * * * * x\n", "tab:1: minute range 10-5 runs backwards"},
        {"1,,2 * * * * x\n", "tab:1: bad minute \",2\""},
        {"* * * foo * x\n", "tab:1: bad month \"foo\""},
        {"# ok\n\n@reboot x\n", "tab:3: unsupported \"@reboot\""},
        {"1x * * * * x\n", "tab:1: unexpected \"x\" in minute field"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct crontab tab;
        char err[ERRLEN];

        assert_int_equal(parse(cases[i][0], &tab, err), -1);
        assert_string_equal(err, cases[i][1]);
        crontab_free(&tab);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fields_lists_ranges_steps),
        cmocka_unit_test(names_and_sunday_seven),
        cmocka_unit_test(day_rule),
        cmocka_unit_test(time_fields_must_all_match),
        cmocka_unit_test(shorthands_comments_blanks),
        cmocka_unit_test(environment_applies_to_later_lines),
        cmocka_unit_test(refused_lines),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
