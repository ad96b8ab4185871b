/* SPDX-License-Identifier: MIT */
/*
 * minicron_clock.c: minicron's time: the clocks it reads, and the slots
 * the wall clock is cut into (--slot-seconds long, 60 s by default), each
 * named in the fire ledger by its nominal start in epoch ms.
 */
#define _GNU_SOURCE
#include <time.h>

#include "minicron.h"

#define MS_PER_S 1000LL

/* Nanoseconds on clock id. */
int64_t clock_ns(clockid_t id) {
    struct timespec ts;

    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* The slot holding wall-clock time ns: floor(ns / slot length). */
int64_t slot_at(const struct minicron *mc, int64_t ns) {
    int64_t len = mc->slot_s * NS_PER_S;

    return ns >= 0 ? ns / len : -((-ns + len - 1) / len);
}

/* The nominal time of slot in epoch ms: its fire_ms in the ledger. */
int64_t slot_ms(const struct minicron *mc, int64_t slot) {
    return slot * mc->slot_s * MS_PER_S;
}
