/* SPDX-License-Identifier: MIT */
/*
 * clock.c: the local clocks. CLOCK_BOOTTIME, for the trust window and every
 * timer, keeps counting while the machine is suspended, so a leader that
 * sleeps through its lease wakes up knowing the window has passed.
 * CLOCK_REALTIME is read only to show times to people.
 */
#include <stddef.h>
#include <time.h>

#include "clock.h"

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

/* Returns milliseconds on CLOCK_BOOTTIME. */
int64_t odbc_leader__now_ms(void) {
    return odbc_leader__now_ns(NULL) / 1000000;
}

/* Returns milliseconds since the epoch on CLOCK_REALTIME. */
int64_t odbc_leader__wall_ms(void) {
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
