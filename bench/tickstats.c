/* SPDX-License-Identifier: MIT */
/*
 * tickstats.c: the clock and the order statistics of the bench programs
 * that time ticks one by one (tickstats.h).
 */
#include <stdlib.h>
#include <time.h>

#include "tickstats.h"

int64_t tickstats_mono_ns(void) {
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

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
