/* SPDX-License-Identifier: MIT */
/*
 * firstpass.c: the first-pass rule (docs/schedules.md), written once for
 * every binding whose engine keeps a repeated wall time to its first pass
 * when it runs through the autumn change but computes the second pass
 * when asked from within the repeated hour (cron, cron-parser, fugit: a
 * host that takes over there). Such a second pass would be a key the
 * ledger does not dedupe against the first, so it is dropped. The engine
 * and the zone stay the binding's: it hands in its engine's next-fire
 * function and a wall-time comparison in the job's zone. Pure: no I/O.
 */
#include <stddef.h>
#include <stdint.h>

#include "odbc_leader.h"

/* How much earlier a wall time the autumn change repeats came first: an
 * hour, or half an hour (Lord Howe). */
static const int64_t shifts_ms[] = {3600000, 1800000};

/* How many dropped times in a row first_pass_next skips at most. */
#define FIRST_PASS_TRIES 4

int odbc_leader_second_pass(odbc_leader_next_fn next,
                            odbc_leader_same_wall_fn same_wall, void *ctx,
                            int64_t t) {
    size_t i;
    int64_t n;

    if (next == NULL || same_wall == NULL || t < 0)
        return ODBC_LEADER_EINVAL;
    for (i = 0; i < sizeof(shifts_ms) / sizeof(shifts_ms[0]); i++) {
        if (t < shifts_ms[i] || !same_wall(ctx, t - shifts_ms[i], t))
            continue;
        /* t is a second pass; dropped when the engine, asked from the
         * first, goes past it (a daily 01:30), kept when it fires within
         * the hour anyway (every 15 minutes) */
        n = next(ctx, t - shifts_ms[i]);
        return n >= 0 && n > t;
    }
    return 0;
}

int odbc_leader_first_pass_next(odbc_leader_next_fn next,
                                odbc_leader_same_wall_fn same_wall, void *ctx,
                                int64_t ms, int64_t *out) {
    int64_t t;
    int i, rc;

    if (next == NULL || same_wall == NULL || out == NULL)
        return ODBC_LEADER_EINVAL;
    t = next(ctx, ms);
    for (i = 0; t >= 0 && i < FIRST_PASS_TRIES; i++) {
        rc = odbc_leader_second_pass(next, same_wall, ctx, t);
        if (rc <= 0)
            break;
        t = next(ctx, t);
    }
    *out = t >= 0 ? t : -1;
    return t >= 0;
}
