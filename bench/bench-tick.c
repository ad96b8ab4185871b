/* SPDX-License-Identifier: MIT */
/*
 * bench-tick.c: times odbc_leader_tick() for make bench (bench/part-*.sh).
 *
 *   bench-tick [-n TICKS] [-w WARMUP] [-p USEC] [-o PREFIX] [-H HOOK] [-1]
 *              [-m] CONFIG
 *
 * Creates a leader handle from CONFIG plus ";LeaderId=bench-leader" and
 * ticks it until it leads; unless -1, also a follower handle
 * (";LeaderId=bench-follower;LeaderFollowerWait=0": it attempts at every
 * tick, never waits) that ticks once and stays follower. Then,
 * per role (renew for the leader, then attempt for the follower): WARMUP
 * untimed ticks, "HOOK before-ROLE" through system(), TICKS ticks timed one
 * by one with CLOCK_MONOTONIC, "HOOK after-ROLE". A tick does its database
 * work synchronously, so its duration is the statement's round trip plus
 * the driver's and the library's own time. -p pauses USEC microseconds
 * after each tick, outside the timing: the dialects' clocks count
 * milliseconds, and two ticks in the same millisecond write the same
 * values, which SQLite and InnoDB skip writing (no journal, no fsync).
 * The hooks let a script read the
 * server's counters around exactly the timed ticks (steady state, without
 * connect or shutdown).
 *
 * Output, one line per role on stdout:
 *   role=renew ticks=N median_us=M p99_us=P errors=0
 * -o PREFIX writes each tick's microseconds to PREFIX.ROLE, one per line.
 * -m adds lines "memory at=created|half-ticks|after-ticks vmrss_kb=R
 * vmhwm_kb=H" (from /proc/self/status; half-ticks is halfway through the
 * leader's timed ticks), for part-memory.sh. Exits 1 when a handle
 * cannot be created, does not reach its role, or a tick fails.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "odbc_leader.h"
#include "tickstats.h"

#define CONFIG_MAX 4096

/* Command-line options; strings are borrowed from argv. */
struct options {
    long ticks;
    long warmup;
    long pause_us;      /* -p */
    const char *prefix; /* -o, may be NULL */
    const char *hook;   /* -H, may be NULL */
    int single;         /* -1: leader only */
    int memory;         /* -m */
    const char *config;
};

/* Log callback: warnings and worse on stderr. */
static void on_log(void *ctx, int level, const char *msg) {
    (void)ctx;
    if (level <= LOG_WARNING)
        fprintf(stderr, "bench-tick: log(%d): %s\n", level, msg);
}

/* Creates a handle for CONFIG with LeaderId=id appended. Returns it (owned
 * by the caller) or NULL after printing the reason. */
static odbc_leader_t *make_handle(const char *config, const char *id) {
    struct odbc_leader_callbacks cb = {.struct_size = sizeof(cb),
                                       .ctx = NULL,
                                       .log = on_log,
                                       .on_change = NULL};
    char conf[CONFIG_MAX];
    char err[512];
    odbc_leader_t *h = NULL;
    int rc;

    if (snprintf(conf, sizeof(conf), "%s;LeaderId=%s", config, id) >=
        (int)sizeof(conf)) {
        fprintf(stderr, "bench-tick: CONFIG too long\n");
        return NULL;
    }
    rc = odbc_leader_create(&h, conf, &cb, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "bench-tick: create %s: %s\n", id, err);
        return NULL;
    }
    return h;
}

/* Ticks h up to 5 times until its state is want. Returns 0 or -1. */
static int reach(odbc_leader_t *h, int want) {
    for (int i = 0; i < 5; i++) {
        uint32_t next = 0;
        int rc = odbc_leader_tick(h, &next);

        if (rc == want)
            return 0;
        if (rc < 0)
            fprintf(stderr, "bench-tick: tick: %s\n", odbc_leader_strerror(rc));
        usleep(100000);
    }
    fprintf(stderr, "bench-tick: %s did not become %s\n", odbc_leader_id(h),
            want == ODBC_LEADER_LEADER ? "leader" : "follower");
    return -1;
}

/* Prints VmRSS and VmHWM of this process, tagged with at. */
static void print_memory(const char *at) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long rss = -1, hwm = -1;

    if (f == NULL)
        return;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "VmRSS:", 6) == 0)
            rss = strtol(line + 6, NULL, 10);
        else if (strncmp(line, "VmHWM:", 6) == 0)
            hwm = strtol(line + 6, NULL, 10);
    }
    fclose(f);
    printf("memory at=%s vmrss_kb=%ld vmhwm_kb=%ld\n", at, rss, hwm);
    fflush(stdout);
}

/* Writes the n durations (ns) as microseconds to PREFIX.role. Returns 0
 * or -1. */
static int write_times(const char *prefix, const char *role, const int64_t *t,
                       long n) {
    char path[CONFIG_MAX];
    FILE *f;
    int rc = 0;

    snprintf(path, sizeof(path), "%s.%s", prefix, role);
    f = fopen(path, "a");
    if (f == NULL) {
        fprintf(stderr, "bench-tick: %s: %s\n", path, strerror(errno));
        return -1;
    }
    for (long i = 0; i < n; i++)
        fprintf(f, "%.1f\n", (double)t[i] / 1000.0);
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}

/* Prints the summary line of one role; sorts t (n > 0). */
static void summarize(const char *role, int64_t *t, long n, long errors) {
    double median, p99;

    tickstats_summary(t, n, &median, &p99);
    printf("role=%s ticks=%ld median_us=%.1f p99_us=%.1f errors=%ld\n", role, n,
           median, p99, errors);
    fflush(stdout);
}

/*
 * Runs one role on h: warm-up, hook, timed ticks, hook, summary. A tick
 * must return want. Returns 0, or -1 on a failed tick or hook.
 */
static int run_role(const struct options *o, odbc_leader_t *h, const char *role,
                    int want) {
    int64_t *t = calloc((size_t)o->ticks, sizeof(*t));
    long errors = 0;
    int rc = -1;

    if (t == NULL)
        return -1;
    for (long i = 0; i < o->warmup; i++)
        if (odbc_leader_tick(h, NULL) != want)
            errors++;
    if (tickstats_hook("bench-tick", o->hook, "before", role) < 0)
        goto out;
    for (long i = 0; i < o->ticks; i++) {
        int64_t start = tickstats_mono_ns();
        int r = odbc_leader_tick(h, NULL);

        t[i] = tickstats_mono_ns() - start;
        if (r != want) {
            if (errors == 0)
                fprintf(stderr, "bench-tick: %s tick %ld returned %d (%s)\n",
                        role, i, r,
                        r < 0 ? odbc_leader_strerror(r) : "state changed");
            errors++;
        }
        if (o->pause_us > 0)
            usleep((useconds_t)o->pause_us);
        if (o->memory && want == ODBC_LEADER_LEADER && i == o->ticks / 2)
            print_memory("half-ticks");
    }
    if (tickstats_hook("bench-tick", o->hook, "after", role) < 0)
        goto out;
    if (o->prefix != NULL && write_times(o->prefix, role, t, o->ticks) < 0)
        goto out;
    summarize(role, t, o->ticks, errors);
    rc = errors == 0 ? 0 : -1;
out:
    free(t);
    return rc;
}

/* Parses argv into *o. Returns 0, or -1 after printing the usage. */
static int parse_args(int argc, char **argv, struct options *o) {
    int c;

    memset(o, 0, sizeof(*o));
    o->ticks = 1000;
    o->warmup = 50;
    while ((c = getopt(argc, argv, "n:w:p:o:H:1m")) != -1) {
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
        case 'o':
            o->prefix = optarg;
            break;
        case 'H':
            o->hook = optarg;
            break;
        case '1':
            o->single = 1;
            break;
        case 'm':
            o->memory = 1;
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
    fprintf(stderr, "usage: bench-tick [-n TICKS] [-w WARMUP] [-p USEC] "
                    "[-o PREFIX] [-H HOOK] [-1] [-m] CONFIG\n");
    return -1;
}

int main(int argc, char **argv) {
    struct options o;
    odbc_leader_t *leader = NULL, *follower = NULL;
    int rc = 1;

    if (parse_args(argc, argv, &o) < 0)
        return 64;
    leader = make_handle(o.config, "bench-leader");
    if (leader == NULL || reach(leader, ODBC_LEADER_LEADER) < 0)
        goto out;
    if (!o.single) {
        /* Its timed ticks are attempts: with the follower wait on, a
         * follower's tick would block on the leader's wake-up lock instead
         * (part-failover.sh prices the wait). */
        follower = make_handle(o.config, "bench-follower;LeaderFollowerWait=0");
        if (follower == NULL || reach(follower, ODBC_LEADER_FOLLOWER) < 0)
            goto out;
    }
    if (o.memory)
        print_memory("created");
    if (run_role(&o, leader, "renew", ODBC_LEADER_LEADER) < 0)
        goto out;
    if (follower != NULL &&
        run_role(&o, follower, "attempt", ODBC_LEADER_FOLLOWER) < 0)
        goto out;
    if (o.memory)
        print_memory("after-ticks");
    rc = 0;
out:
    odbc_leader_destroy(follower);
    odbc_leader_destroy(leader);
    return rc;
}
