/* SPDX-License-Identifier: MIT */
/*
 * tickstats.h: the clock, the order statistics and the hook runner of the
 * bench programs that time ticks one by one (bench-tick, bench-groups,
 * bench-claim).
 */
#ifndef ODBC_LEADER_BENCH_TICKSTATS_H
#define ODBC_LEADER_BENCH_TICKSTATS_H

#include <stdint.h>

/* Nanoseconds on CLOCK_MONOTONIC. */
int64_t tickstats_mono_ns(void);

/* The CPU time this process has used (CLOCK_PROCESS_CPUTIME_ID), in ns. */
int64_t tickstats_cpu_ns(void);

/* Sorts the n > 0 durations t (ns) and sets the median and the 99th
 * percentile (nearest rank), in microseconds. */
void tickstats_summary(int64_t *t, long n, double *median_us, double *p99_us);

/* Runs "HOOK EVENT-ROLE" with system() when hook is not NULL (the bench
 * scripts count server statements between "before" and "after").
 * Returns 0, or -1 after saying on stderr, as prog, which command failed. */
int tickstats_hook(const char *prog, const char *hook, const char *event,
                   const char *role);

#endif
