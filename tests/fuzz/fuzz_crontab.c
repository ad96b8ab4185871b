/* SPDX-License-Identifier: MIT */
/*
 * fuzz_crontab.c: libFuzzer target for crontab_read(), minicron's crontab
 * parser (contrib/minicron/crontab.c). The input is the file's text, NUL
 * bytes and all. A read crontab must only set bits inside each field's
 * range, give every job a command, and crontab_due() must answer for
 * every job at a few fixed minutes; a refused one must say why. Nothing
 * may leak.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crontab.h"
#include "fuzz.h"

/* Checks the fields of one read job (borrowed). */
static void check_job(const struct cron_job *j) {
    fuzz_check(j->minute != 0 && j->minute >> 60 == 0, "minute bits");
    fuzz_check(j->hour != 0 && j->hour >> 24 == 0, "hour bits");
    fuzz_check(j->dom != 0 && (j->dom & 1) == 0, "day-of-month bits");
    fuzz_check(j->month != 0 && (j->month & 1) == 0 && j->month >> 13 == 0,
               "month bits");
    fuzz_check(j->dow != 0 && j->dow >> 7 == 0, "day-of-week bits");
    fuzz_check(j->command != NULL && j->command[0] != '\0', "command");
    fuzz_check(j->line > 0, "line number");
    for (size_t i = 0; i < j->n_env; i++)
        fuzz_check(strchr(j->env[i], '=') != NULL, "environment entry");
}

/* Asks crontab_due() about job j (borrowed) at the ends of each field's
 * range; the answer only has to be 0 or 1. */
static void check_due(const struct cron_job *j) {
    static const int minutes[][5] = {
        /* month (1..12), mday, wday, hour, minute */
        {1, 1, 0, 0, 0},
        {12, 31, 6, 23, 59},
        {2, 29, 3, 12, 30},
    };

    for (size_t i = 0; i < sizeof minutes / sizeof minutes[0]; i++) {
        struct tm tm = {0};
        tm.tm_mon = minutes[i][0] - 1;
        tm.tm_mday = minutes[i][1];
        tm.tm_wday = minutes[i][2];
        tm.tm_hour = minutes[i][3];
        tm.tm_min = minutes[i][4];
        int due = crontab_due(j, &tm);
        fuzz_check(due == 0 || due == 1, "crontab_due answers 0 or 1");
    }
}

/* Reads the input as a crontab. Returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char err[256] = "";
    struct crontab tab = {0};
    FILE *f;
    int rc;

    if (size == 0)
        return 0; /* fmemopen() refuses an empty buffer */
    f = fmemopen((void *)data, size, "r");
    if (!f)
        abort();
    rc = crontab_read(f, "fuzz", &tab, err, sizeof err);
    fclose(f);
    if (rc == 0) {
        for (size_t i = 0; i < tab.n_jobs; i++) {
            check_job(&tab.jobs[i]);
            check_due(&tab.jobs[i]);
        }
    } else {
        fuzz_check(rc == -1, "error code");
        fuzz_check(strncmp(err, "fuzz:", 5) == 0, "message names the file");
    }
    crontab_free(&tab);
    return 0;
}
