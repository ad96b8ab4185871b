/* SPDX-License-Identifier: MIT */
/*
 * fault-host.c: the candidate process of the fault-injection suite.
 *
 *   fault-host -p PLUGIN.so -d DIR [-n NAME] [-s SPIN_US] CONFIG
 *
 * It loads a leader_plugin through the ABI exactly as a scheduler does
 * (dlopen, leader_plugin_entry, init, tick on the schedule the plugin
 * asks for, shutdown on SIGTERM, which resigns). The main thread ticks; a
 * second thread asks is_leader() in a tight loop, as a scheduler's worker
 * would before leader-only work, and records every "yes" in
 * DIR/host-PID.rec.
 *
 * The record file is mapped MAP_SHARED, so each store lands in the page
 * cache at once and survives SIGKILL and SIGSTOP without a write(2) per
 * claim. A record covers one run of consecutive "yes" answers for one term
 * with no gap longer than GAP_NS between them: its first call's bounds
 * (before, after) and its last call's bounds. The checker needs, per term,
 * the earliest "after" and the latest "before"; both stay exact. Times
 * are CLOCK_MONOTONIC read by a raw system call, so a faked wall clock
 * (libfaketime) cannot touch them and every process's records compare.
 * The header also carries the ticker's status (last tick, last good
 * tick), which tells a stuck candidate from a live one.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
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
#include <time.h>
#include <unistd.h>

#include "leader_plugin.h"

#define REC_MAGIC "OLFAULT1"
#define REC_CAP 65536           /* records per process file */
#define GAP_NS 1000000          /* a longer gap between claims: new record */
#define FOLLOWER_POLL_NS 200000 /* spinner sleep while not leader */
#define MAX_TICK_MS 1000        /* tick at least this often */

/* File header: 64 bytes, then cap records. Written by this process only. */
struct rec_header {
    char magic[8];
    int32_t pid;
    int32_t cap;
    int64_t count;           /* records written (published last) */
    int64_t started_ns;      /* when init succeeded */
    int64_t last_tick_ns;    /* end of the last tick */
    int64_t last_ok_tick_ns; /* end of the last tick that returned >= 0 */
    int64_t last_rc;         /* the last tick's return code */
    int64_t ticks;
};

/* One run of "yes" answers for one term. */
struct rec {
    int64_t term;
    int64_t first_before, first_after; /* bounds of the run's first call */
    int64_t last_before, last_after;   /* bounds of the run's last call */
    int64_t n;                         /* calls in the run */
};

/* Everything the two threads share; lives in main's frame. */
struct host {
    const struct leader_plugin *p; /* static table inside the plugin */
    void *inst;                    /* the plugin instance */
    struct rec_header *hdr;        /* mapped file (owned) */
    struct rec *recs;              /* points into the mapping */
    size_t map_len;
    int64_t spin_ns; /* sleep between leader polls, 0 = tight loop */
    atomic_int stop; /* set by main, read by the spinner */
    const char *name;
    int quiet;
};

/* CLOCK_MONOTONIC in nanoseconds, bypassing any LD_PRELOADed wrapper. */
static int64_t mono_ns(void) {
    struct timespec ts;

    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ns(int64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};

    nanosleep(&ts, NULL);
}

/* Stores v at *dst so that a process reading the mapping after our death
 * sees either the old or the new value, never a torn one. */
static void put(int64_t *dst, int64_t v) {
    __atomic_store_n(dst, v, __ATOMIC_RELEASE);
}

/* Creates DIR/host-PID.rec and maps it. Returns 0, or -1 with a message
 * on stderr. On success h->hdr and h->recs point into the mapping, which
 * h owns (unmapped by process exit). */
static int open_records(struct host *h, const char *dir) {
    char path[4096];
    int fd, rc = -1;

    snprintf(path, sizeof(path), "%s/host-%ld.rec", dir, (long)getpid());
    h->map_len = sizeof(struct rec_header) + REC_CAP * sizeof(struct rec);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ftruncate(fd, (off_t)h->map_len) != 0) {
        fprintf(stderr, "fault-host: %s: %s\n", path, strerror(errno));
        goto out;
    }
    h->hdr = mmap(NULL, h->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h->hdr == MAP_FAILED) {
        fprintf(stderr, "fault-host: mmap %s: %s\n", path, strerror(errno));
        h->hdr = NULL;
        goto out;
    }
    h->recs = (struct rec *)(h->hdr + 1);
    memcpy(h->hdr->magic, REC_MAGIC, 8);
    h->hdr->pid = (int32_t)getpid();
    h->hdr->cap = REC_CAP;
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    return rc;
}

/* Records one "yes" for term in [b, a]: extends the open run *cur when it
 * has the same term and the gap is short, else starts a new record.
 * Returns the index of the run now open, or -1 when the file is full
 * (the caller stops: the evidence would be incomplete). */
static int64_t record(struct host *h, int64_t cur, int64_t term, int64_t b,
                      int64_t a) {
    struct rec *r;
    int64_t n = h->hdr->count;

    if (cur >= 0) {
        r = &h->recs[cur];
        if (r->term == term && b - r->last_after <= GAP_NS) {
            put(&r->last_before, b);
            put(&r->last_after, a);
            put(&r->n, r->n + 1);
            return cur;
        }
    }
    if (n >= h->hdr->cap)
        return -1;
    r = &h->recs[n];
    put(&r->term, term);
    put(&r->first_before, b);
    put(&r->first_after, a);
    put(&r->last_before, b);
    put(&r->last_after, a);
    put(&r->n, 1);
    put(&h->hdr->count, n + 1); /* publish after the fields */
    return n;
}

/* The spinner thread: asks is_leader() until h->stop. A claim counts when
 * term() names the same non-zero term just before and just after the
 * "yes", so the term is the one held at the moment of the answer. */
static void *spin(void *arg) {
    struct host *h = arg;
    int64_t cur = -1;

    while (!atomic_load(&h->stop)) {
        int64_t b = mono_ns();
        int64_t t1 = h->p->term(h->inst);
        int y = h->p->is_leader(h->inst);
        int64_t t2 = h->p->term(h->inst);
        int64_t a = mono_ns();

        if (y && t1 == t2 && t1 > 0) {
            cur = record(h, cur, t1, b, a);
            if (cur < 0) {
                fprintf(stderr, "%s: record file full\n", h->name);
                abort();
            }
            if (h->spin_ns > 0)
                sleep_ns(h->spin_ns);
        } else {
            cur = -1;
            sleep_ns(FOLLOWER_POLL_NS);
        }
    }
    return NULL;
}

/* Plugin log callback: one line on stderr unless -q. */
static void on_log(void *ctx, int level, const char *msg) {
    const struct host *h = ctx;

    if (!h->quiet)
        fprintf(stderr, "%s: log(%d): %s\n", h->name, level, msg);
}

/* Ticks until SIGTERM or SIGINT (blocked, collected by sigtimedwait, which
 * is also the sleep between ticks). Updates the tick status in the
 * header. */
static void run(struct host *h, const sigset_t *sigs) {
    for (;;) {
        uint32_t next = MAX_TICK_MS;
        int rc = h->p->tick(h->inst, &next);
        int64_t now = mono_ns();
        struct timespec ts;

        put(&h->hdr->last_tick_ns, now);
        put(&h->hdr->last_rc, rc);
        put(&h->hdr->ticks, h->hdr->ticks + 1);
        if (rc >= 0)
            put(&h->hdr->last_ok_tick_ns, now);
        if (next > MAX_TICK_MS)
            next = MAX_TICK_MS;
        ts.tv_sec = next / 1000;
        ts.tv_nsec = (long)(next % 1000) * 1000000L;
        if (sigtimedwait(sigs, NULL, &ts) > 0)
            return;
    }
}

/* dlopen()s path and returns the plugin's table, or NULL with a message on
 * stderr. The handle stays open (RTLD_NODELETE, as unixODBC needs). */
static const struct leader_plugin *load(const char *path) {
    const struct leader_plugin *p = NULL;
    leader_plugin_entry_fn entry;
    void *dl;

    dl = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (dl == NULL) {
        fprintf(stderr, "fault-host: %s\n", dlerror());
        return NULL;
    }
    entry = (leader_plugin_entry_fn)dlsym(dl, "leader_plugin_entry");
    if (entry == NULL || entry(LEADER_PLUGIN_ABI_MAJOR, &p) < 0) {
        fprintf(stderr, "fault-host: %s: no usable leader_plugin_entry\n",
                path);
        return NULL;
    }
    return p;
}

static void usage(void) {
    fprintf(stderr, "usage: fault-host -p PLUGIN.so -d DIR [-n NAME] "
                    "[-s SPIN_US] [-q] CONFIG\n");
}

int main(int argc, char **argv) {
    struct host h = {0};
    struct leader_host lh = {
        .struct_size = sizeof(lh), .ctx = &h, .log = on_log, .on_change = NULL};
    const char *plugin = NULL, *dir = NULL;
    char name[32], err[512] = "";
    pthread_t spinner;
    sigset_t sigs;
    int opt, status = 1;

    snprintf(name, sizeof(name), "host-%ld", (long)getpid());
    h.name = name;
    atomic_init(&h.stop, 0);
    for (opt = getopt(argc, argv, "p:d:n:s:q"); opt != -1;
         opt = getopt(argc, argv, "p:d:n:s:q")) {
        switch (opt) {
        case 'p':
            plugin = optarg;
            break;
        case 'd':
            dir = optarg;
            break;
        case 'n':
            h.name = optarg;
            break;
        case 's':
            h.spin_ns = strtoll(optarg, NULL, 10) * 1000;
            break;
        case 'q':
            h.quiet = 1;
            break;
        default:
            usage();
            return 2;
        }
    }
    if (plugin == NULL || dir == NULL || optind != argc - 1) {
        usage();
        return 2;
    }
    /* A schedule that dies must not leave candidates running. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* Blocked in every thread; the main thread collects them. */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);

    if (open_records(&h, dir) != 0)
        goto out;
    h.p = load(plugin);
    if (h.p == NULL)
        goto out;
    if (h.p->init(argv[optind], &lh, &h.inst, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s: init failed: %s\n", h.name, err);
        goto out;
    }
    put(&h.hdr->started_ns, mono_ns());
    if (pthread_create(&spinner, NULL, spin, &h) != 0) {
        fprintf(stderr, "%s: pthread_create failed\n", h.name);
        h.p->shutdown(h.inst);
        goto out;
    }
    run(&h, &sigs);
    atomic_store(&h.stop, 1);
    pthread_join(spinner, NULL);
    h.p->shutdown(h.inst); /* resigns: a follower takes over at once */
    status = 0;
out:
    if (h.hdr != NULL)
        munmap(h.hdr, h.map_len);
    return status;
}
