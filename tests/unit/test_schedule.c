/* SPDX-License-Identifier: MIT */
/*
 * test_schedule.c: unit tests of schedule identities' pure logic
 * (schedule.c, docs/schedules.md): the identity string and what it
 * refuses, the aliases of UTC, the host's zone named from TZ and a
 * zoneinfo directory made here (TZDIR) with a backward link, and a
 * handle's identities by job.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "odbc_leader.h"
#include "schedule.h"

/* The identity of (expr, tz, engine), or "" with the error in err. */
static const char *identity(const char *expr, const char *tz,
                            const char *engine, char *err) {
    static char out[ODBC_LEADER__SCHEDULE_MAX + 1];

    err[0] = '\0';
    if (odbc_leader__schedule_identity(expr, tz, engine, out, err, 256) != 0)
        out[0] = '\0';
    return out;
}

/* A zoneinfo directory with Asia/Kolkata and Europe/Berlin, as TZDIR. */
static int setup_zoneinfo(void **state) {
    static char dir[] = "/tmp/test_schedule.XXXXXX";
    char path[128];
    FILE *f;

    assert_non_null(mkdtemp(dir));
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, i ? "Europe" : "Asia");
        assert_int_equal(mkdir(path, 0700), 0);
        snprintf(path, sizeof(path), "%s/%s", dir,
                 i ? "Europe/Berlin" : "Asia/Kolkata");
        f = fopen(path, "w");
        assert_non_null(f);
        fclose(f);
    }
    /* a backward name, linked as tzdata links it */
    snprintf(path, sizeof(path), "%s/Asia/Calcutta", dir);
    assert_int_equal(symlink("Kolkata", path), 0);
    snprintf(path, sizeof(path), "%s/Etc", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/Etc/UTC", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(path, sizeof(path), "%s/Zulu", dir);
    assert_int_equal(symlink("Etc/UTC", path), 0);
    setenv("TZDIR", dir, 1);
    *state = dir;
    return 0;
}

static int teardown_zoneinfo(void **state) {
    char cmd[96];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", (const char *)*state);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_identity_string(void **state) {
    char err[256];

    (void)state;
    assert_string_equal(
        identity("cron 0 9 * * *", "Europe/Berlin", "quartz-2.3", err),
        "cron 0 9 * * * in Europe/Berlin by quartz-2.3");
    /* white space runs are one space, none at the ends */
    assert_string_equal(
        identity("  cron\t0  9 * * * ", "Asia/Kolkata", " node-cron  4 ", err),
        "cron 0 9 * * * in Asia/Kolkata by node-cron 4");
    /* no zone for an interval */
    assert_string_equal(identity("every 60s", "", "x", err), "every 60s by x");
    /* UTC's aliases, and "posix/" */
    for (const char *const *a =
             (const char *const[]){"UTC", "Etc/UTC", "Zulu", "GMT", "Etc/GMT+0",
                                   "Universal", NULL};
         *a != NULL; a++)
        assert_string_equal(identity("e", *a, "x", err), "e in UTC by x");
    assert_string_equal(identity("e", "posix/Europe/Berlin", "x", err),
                        "e in Europe/Berlin by x");
    /* a backward name is the zone it links to (Node's ICU says
     * "Asia/Calcutta" where glibc's TZ says "Asia/Kolkata") */
    assert_string_equal(identity("e", "Asia/Calcutta", "x", err),
                        "e in Asia/Kolkata by x");
}

static void test_identity_refusals(void **state) {
    char err[256], big[400];

    (void)state;
    assert_string_equal(identity("e", "local", "x", err), "");
    assert_non_null(strstr(err, "names no zone"));
    assert_string_equal(identity("e", "Europe/Berln", "x", err), "");
    assert_non_null(strstr(err, "not in"));
    assert_string_equal(identity("e", "../Asia/Kolkata", "x", err), "");
    assert_non_null(strstr(err, "not an IANA zone name"));
    assert_string_equal(identity("e", "Asia//Kolkata", "x", err), "");
    assert_string_equal(identity("e", "/Asia/Kolkata", "x", err), "");
    assert_string_equal(identity("e", "EST5EDT,M3.2.0,M11.1.0", "x", err), "");
    assert_string_equal(identity("", "UTC", "x", err), "");
    assert_non_null(strstr(err, "expression"));
    assert_string_equal(identity("e\n", "UTC", "x", err), "");
    assert_string_equal(identity("e", "UTC", " \t", err), "");
    assert_non_null(strstr(err, "engine"));
    assert_string_equal(identity(NULL, "UTC", "x", err), "");
    assert_string_equal(identity("e", "UTC", NULL, err), "");
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_string_equal(identity(big, "UTC", "x", err), "");
    assert_string_equal(identity("e", "UTC", big, err), "");
}

static void test_local_zone(void **state) {
    char zone[64], err[256], small[4];

    (void)state;
    setenv("TZ", "Asia/Kolkata", 1);
    assert_int_equal(odbc_leader_local_zone(zone, sizeof(zone)), 0);
    assert_string_equal(zone, "Asia/Kolkata");
    /* the tz NULL of an identity is this name */
    assert_string_equal(identity("e", NULL, "x", err),
                        "e in Asia/Kolkata by x");
    setenv("TZ", ":Europe/Berlin", 1);
    assert_int_equal(odbc_leader_local_zone(zone, sizeof(zone)), 0);
    assert_string_equal(zone, "Europe/Berlin");
    setenv("TZ", "/usr/share/zoneinfo/Asia/Kolkata", 1);
    assert_int_equal(odbc_leader_local_zone(zone, sizeof(zone)), 0);
    assert_string_equal(zone, "Asia/Kolkata");
    setenv("TZ", "", 1); /* glibc: UTC */
    assert_int_equal(odbc_leader_local_zone(zone, sizeof(zone)), 0);
    assert_string_equal(zone, "UTC");
    setenv("TZ", "Etc/UTC", 1);
    assert_int_equal(odbc_leader_local_zone(zone, sizeof(zone)), 0);
    assert_string_equal(zone, "UTC");
    /* a POSIX rule and a file outside zoneinfo have no IANA name */
    setenv("TZ", "EST5EDT,M3.2.0,M11.1.0", 1);
    assert_int_equal(odbc_leader_local_zone(zone, sizeof(zone)),
                     ODBC_LEADER_ECONFIG);
    assert_string_equal(identity("e", NULL, "x", err), "");
    assert_non_null(strstr(err, "no IANA zone name"));
    setenv("TZ", "/etc/my-zone", 1);
    assert_int_equal(odbc_leader_local_zone(zone, sizeof(zone)),
                     ODBC_LEADER_ECONFIG);
    setenv("TZ", "Asia/Kolkata", 1);
    assert_int_equal(odbc_leader_local_zone(small, sizeof(small)),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_local_zone(NULL, 0), ODBC_LEADER_EINVAL);
    unsetenv("TZ");
}

static void test_registry(void **state) {
    struct odbc_leader__schedules s = {0};

    (void)state;
    assert_null(odbc_leader__schedules_get(&s, "a"));
    for (int i = 0; i < 10; i++) {
        char job[16], id[32];

        snprintf(job, sizeof(job), "j%d", i);
        snprintf(id, sizeof(id), "every %ds", i);
        assert_int_equal(odbc_leader__schedules_set(&s, job, id), 0);
    }
    assert_string_equal(odbc_leader__schedules_get(&s, "j7"), "every 7s");
    assert_int_equal(odbc_leader__schedules_set(&s, "j7", "every 70s"), 0);
    assert_string_equal(odbc_leader__schedules_get(&s, "j7"), "every 70s");
    assert_int_equal(s.n, 10);
    assert_int_equal(odbc_leader__schedules_set(&s, "j3", NULL), 0);
    assert_null(odbc_leader__schedules_get(&s, "j3"));
    assert_string_equal(odbc_leader__schedules_get(&s, "j9"), "every 9s");
    assert_int_equal(odbc_leader__schedules_set(&s, "none", NULL), 0);
    assert_int_equal(s.n, 9);
    odbc_leader__schedules_free(&s);
    assert_null(odbc_leader__schedules_get(&s, "j9"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity_string),
        cmocka_unit_test(test_identity_refusals),
        cmocka_unit_test(test_local_zone),
        cmocka_unit_test(test_registry),
    };

    cmocka_set_message_output(CM_OUTPUT_STDOUT);
    return cmocka_run_group_tests_name("schedule", tests, setup_zoneinfo,
                                       teardown_zoneinfo);
}
