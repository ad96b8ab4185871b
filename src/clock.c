/* SPDX-License-Identifier: MIT */
/*
 * clock.c: the local clock of the trust window. CLOCK_BOOTTIME keeps
 * counting while the machine is suspended, so a leader that sleeps through
 * its lease wakes up knowing the window has passed.
 */
#include <time.h>

#include "internal.h"

#ifndef CLOCK_BOOTTIME
#define CLOCK_BOOTTIME CLOCK_MONOTONIC
#endif

/* Returns nanoseconds on CLOCK_BOOTTIME; the argument is unused (the
 * signature matches the elector's injectable clock). */
int64_t odbc_leader__now_ns(void *unused) {
    struct timespec ts;

    (void)unused;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
