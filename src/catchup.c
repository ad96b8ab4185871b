/* SPDX-License-Identifier: MIT */
/*
 * catchup.c: the catch-up policy (docs/catch-up.md), decided here once for
 * every binding and integration. An engine enumerates a job's fire times
 * with its own next-fire function; which of the missed ones a leader
 * claims after an election, an outage or a pause depends only on the
 * policy, the ledger's latest nominal time of the job and the database
 * clock, so every host that computes the times alike picks the same ones.
 * Pure: the reads it needs are the handle's (handle.c).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catchup.h"
#include "odbc_leader.h"

/* Parses the decimal cap after "all:" (1 .. CAP_MAX). Returns it, or 0. */
static int parse_cap(const char *s) {
    char *end;
    long v;

    if (*s < '0' || *s > '9')
        return 0;
    v = strtol(s, &end, 10);
    if (*end != '\0' || v < 1 || v > ODBC_LEADER_CATCH_UP_CAP_MAX)
        return 0;
    return (int)v;
}

int odbc_leader_catch_up_parse(const char *text,
                               struct odbc_leader_catch_up *out) {
    int policy, cap = 0;

    if (text == NULL || out == NULL)
        return ODBC_LEADER_EINVAL;
    if (strcmp(text, "skip") == 0) {
        policy = ODBC_LEADER_CATCH_UP_SKIP;
    } else if (strcmp(text, "latest") == 0) {
        policy = ODBC_LEADER_CATCH_UP_LATEST;
    } else if (strcmp(text, "all") == 0) {
        policy = ODBC_LEADER_CATCH_UP_ALL;
    } else if (strncmp(text, "all:", 4) == 0 && (cap = parse_cap(text + 4))) {
        policy = ODBC_LEADER_CATCH_UP_ALL;
    } else {
        return ODBC_LEADER_EINVAL;
    }
    out->policy = policy;
    out->cap = cap;
    return 0;
}

/* 1 when p (borrowed) is a policy select() can apply. */
static int valid_policy(const struct odbc_leader_catch_up *p) {
    if (p == NULL ||
        p->struct_size < offsetof(struct odbc_leader_catch_up, grace_ms) +
                             sizeof(p->grace_ms))
        return 0;
    if (p->policy < ODBC_LEADER_CATCH_UP_SKIP ||
        p->policy > ODBC_LEADER_CATCH_UP_ALL)
        return 0;
    return p->cap >= 0 && p->cap <= ODBC_LEADER_CATCH_UP_CAP_MAX &&
           p->grace_ms >= 0;
}

/* 1 when times[0 .. n) are strictly ascending. */
static int ascending(const int64_t *times, size_t n) {
    for (size_t i = 1; i < n; i++)
        if (times[i] <= times[i - 1])
            return 0;
    return 1;
}

/*
 * The index of the oldest missed time that may run, among times[0 .. m):
 * later than after and no older than now_ms - grace_ms (the lower bounds
 * make the eligible times a suffix). m when none.
 */
static size_t oldest_eligible(const int64_t *times, size_t m, int64_t now_ms,
                              int64_t after, int64_t grace_ms) {
    int64_t floor = now_ms - grace_ms;
    size_t i = m;

    while (i > 0 && times[i - 1] > after && times[i - 1] >= floor)
        i--;
    return i;
}

int odbc_leader_catch_up_select(const struct odbc_leader_catch_up *p, int flags,
                                int64_t now_ms, int64_t last_ms,
                                const int64_t *times, size_t n, size_t *first) {
    int present = (flags & ODBC_LEADER_CATCH_UP_PRESENT) && n > 0;
    size_t m = present ? n - 1 : n; /* the missed times: times[0 .. m) */
    size_t lo, hi, cap;
    int64_t after; /* a time may run only when later than this */

    if (!valid_policy(p) || first == NULL || (times == NULL && n > 0) ||
        n > ODBC_LEADER_CATCH_UP_CAP_MAX || !ascending(times, n) ||
        (flags & ~ODBC_LEADER_CATCH_UP_PRESENT) != 0)
        return ODBC_LEADER_EINVAL;
    /* ALL: each missed time, whatever was claimed after it (a host may
     * claim a present fire before the missed ones it then dies with: a
     * claim of one that ran already answers taken); SKIP and LATEST: a
     * later claimed fire stands for the missed ones. The claims are
     * times[lo .. hi); no fire in the ledger, none missed. */
    after = p->policy == ODBC_LEADER_CATCH_UP_ALL ? INT64_MIN : last_ms;
    hi = present && times[n - 1] > after ? n : m;
    lo =
        last_ms > 0 ? oldest_eligible(times, m, now_ms, after, p->grace_ms) : m;
    switch (p->policy) {
    case ODBC_LEADER_CATCH_UP_SKIP:
        lo = m;
        break;
    case ODBC_LEADER_CATCH_UP_LATEST:
        if (hi > lo)
            lo = hi - 1;
        break;
    case ODBC_LEADER_CATCH_UP_ALL:
        cap = p->cap > 0 ? (size_t)p->cap : ODBC_LEADER_CATCH_UP_CAP;
        if (hi - lo > cap)
            lo = hi - cap;
        break;
    }
    *first = hi > lo ? lo : n;
    return (int)(hi - lo);
}

void odbc_leader__keep_last_fire(void *ctx, const struct odbc_leader_job *j) {
    struct odbc_leader__last_fire *lf = ctx;

    if (j->db_now_ms > lf->now_ms)
        lf->now_ms = j->db_now_ms;
    if (strcmp(j->job, lf->job) == 0 && j->last_fire_ms > lf->last_ms)
        lf->last_ms = j->last_fire_ms;
}
