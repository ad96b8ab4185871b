/* SPDX-License-Identifier: MIT */
/*
 * group-host.c: a member of a sharded group for the fault suite.
 *
 *   group-host -d DIR [-q] [-s SWEEP_US] [-S STALL_MS] CONFIG
 *
 * It creates an odbc_leader_group_t from CONFIG (LeaderNamespace and
 * LeaderShards name the group) and ticks it on the schedule the library
 * asks for; SIGTERM leaves the group gracefully. A second thread asks
 * odbc_leader_group_leadership() for every shard in a loop, as a
 * scheduler's worker would before a shard's work (pausing SWEEP_US, 1000
 * by default, between sweeps), and records in
 * DIR/group-PID.rec, per shard and term, the bounds of the first and of
 * the last "yes" (CLOCK_MONOTONIC by a raw system call, so every
 * process's records compare). The file is mapped MAP_SHARED, so it
 * survives SIGKILL and SIGSTOP. tests/faults/groupcheck reads it.
 * SIGUSR1 stalls the ticking thread for STALL_MS (default 5000) while the
 * worker goes on asking, as a host whose tick thread hangs (a blocked
 * call, a long pause of that thread): its shards must stop on their own.
 * SIGUSR2 prints on stdout how long the ticks since the previous SIGUSR2
 * (or the start) took, "ticks N failed F median_us M p99_us P max_us X",
 * and starts counting again (bench/fleet.py).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "odbc_leader.h"

#define REC_MAGIC "OLGROUP1"
#define REC_CAP (1 << 19) /* records per process file */
#define MAX_TICK_MS 1000

/* File header: 64 bytes, then cap records. */
struct rec_header {
    char magic[8];
    int32_t pid;
    int32_t cap;
    int64_t count;        /* records in use (published last) */
    int64_t started_ns;   /* when create succeeded */
    int64_t last_tick_ns; /* end of the last tick */
    int64_t last_led;     /* shards led after the last tick, or its error */
    int64_t ticks;
    int64_t shards;
};

/* One shard's term as seen by this process. */
struct rec {
    int64_t shard, term;
    int64_t first_before, first_after; /* bounds of its first "yes" */
    int64_t last_before, last_after;   /* bounds of its last "yes" */
};

#define TICK_SAMPLES 4096

/* Tick durations since the last report. */
struct tick_stats {
    int64_t us[TICK_SAMPLES];
    int64_t n, failed;
};

struct host {
    odbc_leader_group_t *g;
    struct tick_stats ts;
    struct rec_header *hdr;
    struct rec *recs;
    int64_t *open; /* per shard: index of its current record, -1 none */
    uint32_t shards;
    atomic_int stop;
    int quiet;
    long sweep_us; /* pause between two sweeps over the shards */
};

static volatile sig_atomic_t got_term, got_stall, got_report;

static void on_term(int sig) {
    (void)sig;
    got_term = 1;
}

static void on_stall(int sig) {
    (void)sig;
    got_stall = 1;
}

static void on_report(int sig) {
    (void)sig;
    got_report = 1;
}

static int by_value(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

    return (a > b) - (a < b);
}

/* Prints the tick durations kept in t (at most the last TICK_SAMPLES) and
 * forgets them. */
static void report_ticks(struct tick_stats *t) {
    int64_t n = t->n < TICK_SAMPLES ? t->n : TICK_SAMPLES;

    qsort(t->us, (size_t)n, sizeof(t->us[0]), by_value);
    printf("ticks %lld failed %lld median_us %lld p99_us %lld max_us %lld\n",
           (long long)t->n, (long long)t->failed,
           (long long)(n ? t->us[n / 2] : 0),
           (long long)(n ? t->us[(n * 99) / 100] : 0),
           (long long)(n ? t->us[n - 1] : 0));
    fflush(stdout);
    t->n = 0;
    t->failed = 0;
}

static int64_t mono_ns(void) {
    struct timespec ts;

    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void put(int64_t *dst, int64_t v) {
    __atomic_store_n(dst, v, __ATOMIC_RELEASE);
}

/* Creates DIR/group-PID.rec and maps it. Returns 0 or -1 (message on
 * stderr). */
static int open_records(struct host *h, const char *dir) {
    char path[4096];
    size_t len = sizeof(struct rec_header) + REC_CAP * sizeof(struct rec);
    int fd;

    snprintf(path, sizeof(path), "%s/group-%ld.rec", dir, (long)getpid());
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ftruncate(fd, (off_t)len) != 0) {
        fprintf(stderr, "group-host: %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    h->hdr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (h->hdr == MAP_FAILED) {
        fprintf(stderr, "group-host: mmap %s: %s\n", path, strerror(errno));
        return -1;
    }
    h->recs = (struct rec *)(h->hdr + 1);
    memcpy(h->hdr->magic, REC_MAGIC, 8);
    h->hdr->pid = (int32_t)getpid();
    h->hdr->cap = REC_CAP;
    return 0;
}

/* Records a "yes" for (s, term) between b and a. Returns -1 when the file
 * is full. */
static int record(struct host *h, uint32_t s, int64_t term, int64_t b,
                  int64_t a) {
    int64_t i = h->open[s];
    struct rec *r;

    if (i >= 0 && h->recs[i].term == term) {
        r = &h->recs[i];
        put(&r->last_before, b);
        put(&r->last_after, a);
        return 0;
    }
    i = h->hdr->count;
    if (i >= REC_CAP)
        return -1;
    r = &h->recs[i];
    r->shard = s;
    r->term = term;
    r->first_before = b;
    r->first_after = a;
    r->last_before = b;
    r->last_after = a;
    h->open[s] = i;
    put(&h->hdr->count, i + 1);
    return 0;
}

/* The worker: asks every shard in turn, records each "yes". */
static void *spin(void *arg) {
    struct host *h = arg;

    while (!atomic_load(&h->stop)) {
        for (uint32_t s = 0; s < h->shards; s++) {
            int64_t b = mono_ns();
            int64_t term = odbc_leader_group_leadership(h->g, s, NULL);
            int64_t a = mono_ns();

            if (term != 0 && record(h, s, term, b, a) < 0) {
                fprintf(stderr, "group-host: record file full\n");
                abort();
            }
        }
        if (h->sweep_us > 0) {
            struct timespec ts = {h->sweep_us / 1000000,
                                  (h->sweep_us % 1000000) * 1000};

            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

static void on_log(void *ctx, int level, const char *msg) {
    const struct host *h = ctx;

    if (level <= LOG_WARNING || !h->quiet)
        fprintf(stderr, "group-host[%ld]: %s\n", (long)getpid(), msg);
}

int main(int argc, char **argv) {
    struct host h;
    struct odbc_leader_callbacks cb;
    struct sigaction sa;
    pthread_t t;
    const char *dir = NULL;
    long stall_ms = 5000;
    char err[1024] = "";
    int opt, rc;

    memset(&h, 0, sizeof(h));
    h.sweep_us = 1000;
    while ((opt = getopt(argc, argv, "d:qs:S:")) != -1) {
        if (opt == 'd')
            dir = optarg;
        else if (opt == 'q')
            h.quiet = 1;
        else if (opt == 's')
            h.sweep_us = atol(optarg);
        else if (opt == 'S')
            stall_ms = atol(optarg);
        else
            return 64;
    }
    if (dir == NULL || optind + 1 != argc) {
        fprintf(stderr, "usage: group-host -d DIR [-q] [-s SWEEP_US] "
                        "[-S STALL_MS] CONFIG\n");
        return 64;
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_stall;
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_handler = on_report;
    sigaction(SIGUSR2, &sa, NULL);
    if (open_records(&h, dir) < 0)
        return 70;
    memset(&cb, 0, sizeof(cb));
    cb.struct_size = sizeof(cb);
    cb.ctx = &h;
    cb.log = on_log;
    rc = odbc_leader_group_create(&h.g, argv[optind], &cb, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "group-host: %s (%s)\n", err, odbc_leader_strerror(rc));
        return 69;
    }
    h.shards = odbc_leader_group_shards(h.g);
    h.hdr->shards = h.shards;
    h.open = malloc(h.shards * sizeof(*h.open));
    if (h.open == NULL)
        return 70;
    for (uint32_t s = 0; s < h.shards; s++)
        h.open[s] = -1;
    put(&h.hdr->started_ns, mono_ns());
    if (pthread_create(&t, NULL, spin, &h) != 0)
        return 70;
    while (!got_term) {
        uint32_t next = MAX_TICK_MS;
        struct timespec ts;
        int64_t t0;

        if (got_stall) {
            struct timespec st = {stall_ms / 1000, (stall_ms % 1000) * 1000000};

            got_stall = 0;
            while (nanosleep(&st, &st) != 0 && !got_term)
                ;
        }
        if (got_report) {
            got_report = 0;
            report_ticks(&h.ts);
        }
        t0 = mono_ns();
        rc = odbc_leader_group_tick(h.g, &next);
        h.ts.us[h.ts.n++ % TICK_SAMPLES] = (mono_ns() - t0) / 1000;
        h.ts.failed += rc < 0;
        put(&h.hdr->last_led, rc);
        put(&h.hdr->ticks, h.hdr->ticks + 1);
        put(&h.hdr->last_tick_ns, mono_ns());
        if (next > MAX_TICK_MS)
            next = MAX_TICK_MS;
        ts.tv_sec = next / 1000;
        ts.tv_nsec = (long)(next % 1000) * 1000000;
        nanosleep(&ts, NULL);
    }
    /* leadership ends before the leave releases: stop the worker first */
    atomic_store(&h.stop, 1);
    pthread_join(t, NULL);
    odbc_leader_group_destroy(h.g);
    free(h.open);
    return 0;
}
