/* SPDX-License-Identifier: MIT */
/*
 * tickstats.c: the clock, the order statistics and the hook runner of the
 * bench programs that time ticks one by one (tickstats.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tickstats.h"

/* Nanoseconds on clock id. */
static int64_t clock_ns(clockid_t id) {
    struct timespec ts;

    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t tickstats_mono_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

int64_t tickstats_cpu_ns(void) { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }

/* qsort() comparator of int64_t values. */
static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

void tickstats_summary(int64_t *t, long n, double *median_us, double *p99_us) {
    long p99 = (n * 99 + 99) / 100; /* nearest rank, 1-based */

    qsort(t, (size_t)n, sizeof(*t), cmp_i64);
    *median_us = (double)t[(n + 1) / 2 - 1] / 1000.0;
    *p99_us = (double)t[p99 - 1] / 1000.0;
}

int tickstats_hook(const char *prog, const char *hook, const char *event,
                   const char *role) {
    char cmd[4096];
    int rc;

    if (hook == NULL)
        return 0;
    snprintf(cmd, sizeof(cmd), "%s %s-%s", hook, event, role);
    rc = system(cmd);
    if (rc != 0) {
        fprintf(stderr, "%s: hook \"%s\" failed (%d)\n", prog, cmd, rc);
        return -1;
    }
    return 0;
}
