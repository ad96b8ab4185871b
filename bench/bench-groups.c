/* SPDX-License-Identifier: MIT */
/*
 * bench-groups.c: what a member of a sharded group costs and how fast its
 * shards move, for make bench (bench/part-groups.sh).
 *
 *   bench-groups [-n TICKS] [-w WARMUP] [-p USEC] [-H HOOK] CONFIG
 *
 * CONFIG names the group and its size (LeaderNamespace, LeaderShards) and
 * its timing; member ids are appended. In order:
 * 1. cold start: member a alone ticks every renew interval from its
 *    creation until it leads every shard;
 * 2. steady state: WARMUP untimed ticks, "HOOK before-group" through
 *    system(), TICKS ticks of a timed one by one (CLOCK_MONOTONIC; -p
 *    pauses USEC after each, outside the timing, 2,000 by default), with
 *    the CPU time this process spent in them (CLOCK_PROCESS_CPUTIME_ID:
 *    the library's and the driver's), "HOOK after-group";
 * 3. join: member b is created, both tick every renew interval until
 *    each leads some shards and together all of them;
 * 4. graceful leave: b is destroyed (it stops its shards and releases
 *    them in one statement); a ticks until it leads all again.
 * Times of 1, 3 and 4 are measured from the step's start to the end of the
 * tick that completed it, so they include up to one renew interval of
 * waiting.
 *
 * Output on stdout, one line:
 *   shards=S cold_ms=C ticks=N median_us=M p99_us=P cpu_us=U join_ms=J
 *   moved=K max_share=X leave_ms=L errors=E
 * cpu_us: the mean CPU time of a timed tick in this process;
 * moved: the shards b took at the join; max_share: the larger member's
 * shards over the mean, after the join. Exits 1 when a member cannot be
 * created, a step does not complete within 60 s or a timed tick fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "odbc_leader.h"
#include "tickstats.h"

#define CONFIG_MAX 4096
#define STEP_LIMIT_NS (60 * 1000000000LL)

/* Command-line options; strings are borrowed from argv. */
struct options {
    long ticks;
    long warmup;
    long pause_us;
    const char *hook; /* may be NULL */
    const char *config;
};

/* Log callback: warnings and worse on stderr. */
static void on_log(void *ctx, int level, const char *msg) {
    (void)ctx;
    if (level <= LOG_WARNING)
        fprintf(stderr, "bench-groups: log(%d): %s\n", level, msg);
}

/* Creates member id of the group of config. Returns it (owned by the
 * caller) or NULL after printing the reason. */
static odbc_leader_group_t *make_member(const char *config, const char *id) {
    struct odbc_leader_callbacks cb;
    char conf[CONFIG_MAX], err[512];
    odbc_leader_group_t *g = NULL;

    memset(&cb, 0, sizeof(cb));
    cb.struct_size = sizeof(cb);
    cb.log = on_log;
    if (snprintf(conf, sizeof(conf), "%s;LeaderId=%s", config, id) >=
        (int)sizeof(conf)) {
        fprintf(stderr, "bench-groups: CONFIG too long\n");
        return NULL;
    }
    if (odbc_leader_group_create(&g, conf, &cb, err, sizeof(err)) < 0) {
        fprintf(stderr, "bench-groups: create %s: %s\n", id, err);
        return NULL;
    }
    return g;
}

/* Step predicates over the members m[0..n-1]. */
static int a_leads_all(odbc_leader_group_t **m, int n) {
    (void)n;
    return odbc_leader_group_led(m[0]) == odbc_leader_group_shards(m[0]);
}

static int split(odbc_leader_group_t **m, int n) {
    uint32_t a = odbc_leader_group_led(m[0]), b = odbc_leader_group_led(m[1]);

    (void)n;
    return a > 0 && b > 0 && a + b == odbc_leader_group_shards(m[0]);
}

/*
 * Ticks the n members together, then sleeps the shortest next-tick
 * delay they asked for, until done(m, n). Returns the milliseconds from
 * the call to the tick that completed the step, or -1 after 60 s.
 */
static long step(odbc_leader_group_t **m, int n,
                 int (*done)(odbc_leader_group_t **m, int n)) {
    int64_t start = tickstats_mono_ns();

    while (tickstats_mono_ns() - start < STEP_LIMIT_NS) {
        uint32_t wait_ms = 1000;

        for (int i = 0; i < n; i++) {
            uint32_t next = 1000;

            odbc_leader_group_tick(m[i], &next);
            if (next < wait_ms)
                wait_ms = next;
        }
        if (done(m, n))
            return (long)((tickstats_mono_ns() - start) / 1000000);
        usleep((useconds_t)wait_ms * 1000);
    }
    fprintf(stderr, "bench-groups: a step did not complete in 60 s\n");
    return -1;
}

/* The steady state of member g, alone: warm-up, hook, timed ticks, hook.
 * Sets the median and p99 (us) and the mean CPU time per tick (us).
 * Returns the number of ticks that failed or did not lead every shard, or
 * -1 when a hook failed or memory ran out. */
static long timed_ticks(const struct options *o, odbc_leader_group_t *g,
                        double *median, double *p99, double *cpu) {
    int64_t *t = calloc((size_t)o->ticks, sizeof(*t));
    uint32_t all = odbc_leader_group_shards(g);
    long errors = 0;
    int64_t used = 0;

    if (t == NULL)
        return -1;
    for (long i = 0; i < o->warmup; i++)
        errors += odbc_leader_group_tick(g, NULL) != (int)all;
    if (tickstats_hook("bench-groups", o->hook, "before", "group") < 0) {
        free(t);
        return -1;
    }
    for (long i = 0; i < o->ticks; i++) {
        int64_t c0 = tickstats_cpu_ns(), start = tickstats_mono_ns();
        int r = odbc_leader_group_tick(g, NULL);

        t[i] = tickstats_mono_ns() - start;
        used += tickstats_cpu_ns() - c0;
        errors += r != (int)all;
        if (o->pause_us > 0)
            usleep((useconds_t)o->pause_us);
    }
    if (tickstats_hook("bench-groups", o->hook, "after", "group") < 0)
        errors = -1;
    tickstats_summary(t, o->ticks, median, p99);
    *cpu = (double)used / 1000.0 / (double)o->ticks;
    free(t);
    return errors;
}

/* Parses argv into *o. Returns 0, or -1 after printing the usage. */
static int parse_args(int argc, char **argv, struct options *o) {
    int c;

    memset(o, 0, sizeof(*o));
    o->ticks = 200;
    o->warmup = 20;
    o->pause_us = 2000;
    while ((c = getopt(argc, argv, "n:w:p:H:")) != -1) {
        switch (c) {
        case 'n':
            o->ticks = strtol(optarg, NULL, 10);
            break;
        case 'w':
            o->warmup = strtol(optarg, NULL, 10);
            break;
        case 'p':
            o->pause_us = strtol(optarg, NULL, 10);
            break;
        case 'H':
            o->hook = optarg;
            break;
        default:
            goto usage;
        }
    }
    if (optind + 1 != argc || o->ticks < 1 || o->warmup < 0)
        goto usage;
    o->config = argv[optind];
    return 0;
usage:
    fprintf(stderr,
            "usage: bench-groups [-n TICKS] [-w WARMUP] [-p USEC] [-H HOOK] "
            "CONFIG\n");
    return -1;
}

int main(int argc, char **argv) {
    struct options o;
    odbc_leader_group_t *m[2] = {NULL, NULL};
    double median = 0, p99 = 0, cpu = 0, max_share;
    long cold, join, leave, errors;
    uint32_t shards, moved;
    int rc = 1;

    if (parse_args(argc, argv, &o) < 0)
        return 64;
    m[0] = make_member(o.config, "bench-member-a");
    if (m[0] == NULL || (cold = step(m, 1, a_leads_all)) < 0)
        goto out;
    shards = odbc_leader_group_shards(m[0]);
    if (shards < 2) {
        fprintf(stderr, "bench-groups: LeaderShards must be at least 2\n");
        goto out;
    }
    errors = timed_ticks(&o, m[0], &median, &p99, &cpu);
    if (errors < 0)
        goto out;
    m[1] = make_member(o.config, "bench-member-b");
    if (m[1] == NULL || (join = step(m, 2, split)) < 0)
        goto out;
    moved = odbc_leader_group_led(m[1]);
    max_share = (double)(moved > shards - moved ? moved : shards - moved) /
                ((double)shards / 2.0);
    odbc_leader_group_destroy(m[1]);
    m[1] = NULL;
    if ((leave = step(m, 1, a_leads_all)) < 0)
        goto out;
    printf("shards=%u cold_ms=%ld ticks=%ld median_us=%.1f p99_us=%.1f "
           "cpu_us=%.1f join_ms=%ld moved=%u max_share=%.3f leave_ms=%ld "
           "errors=%ld\n",
           shards, cold, o.ticks, median, p99, cpu, join, moved, max_share,
           leave, errors);
    rc = errors == 0 ? 0 : 1;
out:
    odbc_leader_group_destroy(m[1]);
    odbc_leader_group_destroy(m[0]);
    return rc;
}
