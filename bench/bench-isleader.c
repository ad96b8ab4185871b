/* SPDX-License-Identifier: MIT */
/*
 * bench-isleader.c: the cost of odbc_leader_is_leader() with several
 * threads calling it at once, for make bench (bench/part-isleader.sh).
 *
 *   bench-isleader [-d MS] [-t COUNTS] CONFIG
 *
 * Creates one handle from CONFIG (use a long LeaderTTL so it stays leader
 * for the whole run), ticks it until it leads, then for each thread count
 * in COUNTS (default 1,2,4,8) starts that many threads that call
 * odbc_leader_is_leader() in a loop for MS milliseconds (default 1000).
 * Prints one line per count:
 *   threads=T calls=C cpu_ns_per_call=X wall_ns_per_call=Y mcalls_per_s=Z
 *   not_leader=0
 * cpu_ns_per_call is the threads' CPU time (CLOCK_THREAD_CPUTIME_ID) over
 * their calls: the cost of a call, whatever the number of cores.
 * wall_ns_per_call is each thread's elapsed time over its calls, averaged:
 * with more threads than cores it grows with the time slicing. not_leader
 * counts calls that answered 0 (must be 0). Then one more line, the same
 * loop on one thread calling clock_gettime(CLOCK_BOOTTIME) instead (the
 * clock is_leader() reads), as a reference:
 *   baseline=clock_gettime threads=1 calls=C cpu_ns_per_call=X ...
 * Exits 1 on any failure.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "odbc_leader.h"

#define MAX_THREADS 64
#define BATCH 1024 /* calls between two looks at the clock */

/* One thread's work and results. */
struct worker {
    const odbc_leader_t *h; /* borrowed */
    atomic_int *go;         /* borrowed: set to 1 to start */
    int clock_only;         /* call clock_gettime() instead */
    int64_t duration_ns;
    pthread_t thread;
    uint64_t calls;
    uint64_t not_leader;
    int64_t cpu_ns;
    int64_t wall_ns;
};

/* Nanoseconds on the given clock. */
static int64_t clock_ns(clockid_t id) {
    struct timespec ts;

    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Thread body: waits for the start flag, then calls is_leader() in
 * batches until the duration has passed. Fills in the worker's results. */
static void *work(void *arg) {
    struct worker *w = arg;
    int64_t start, end, cpu0;

    while (!atomic_load_explicit(w->go, memory_order_acquire))
        ;
    start = clock_ns(CLOCK_MONOTONIC);
    cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    end = start + w->duration_ns;
    do {
        unsigned yes = 0;

        for (int i = 0; i < BATCH && w->clock_only; i++)
            yes += clock_ns(CLOCK_BOOTTIME) > 0;
        for (int i = 0; i < BATCH && !w->clock_only; i++)
            yes += (unsigned)odbc_leader_is_leader(w->h);
        w->calls += BATCH;
        w->not_leader += BATCH - yes;
    } while (clock_ns(CLOCK_MONOTONIC) < end);
    w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    w->wall_ns = clock_ns(CLOCK_MONOTONIC) - start;
    return NULL;
}

/* Runs n threads on h (or on the clock alone when clock_only) for
 * duration_ns and prints their line. Returns 0, or -1 when a thread cannot
 * start or a call answered 0. */
static int run_threads(const odbc_leader_t *h, int n, int64_t duration_ns,
                       int clock_only) {
    struct worker w[MAX_THREADS];
    atomic_int go;
    uint64_t calls = 0, not_leader = 0;
    int64_t cpu = 0, wall = 0;
    double wall_per_call = 0;
    int started = 0;

    atomic_init(&go, 0);
    memset(w, 0, sizeof(w));
    for (; started < n; started++) {
        w[started].h = h;
        w[started].go = &go;
        w[started].duration_ns = duration_ns;
        w[started].clock_only = clock_only;
        if (pthread_create(&w[started].thread, NULL, work, &w[started]) != 0)
            break;
    }
    atomic_store_explicit(&go, 1, memory_order_release);
    for (int i = 0; i < started; i++) {
        pthread_join(w[i].thread, NULL);
        calls += w[i].calls;
        not_leader += w[i].not_leader;
        cpu += w[i].cpu_ns;
        if (w[i].wall_ns > wall)
            wall = w[i].wall_ns;
        wall_per_call += (double)w[i].wall_ns / (double)w[i].calls / started;
    }
    if (started < n) {
        fprintf(stderr, "bench-isleader: cannot start %d threads\n", n);
        return -1;
    }
    printf("%sthreads=%d calls=%llu cpu_ns_per_call=%.2f wall_ns_per_call=%.2f "
           "mcalls_per_s=%.1f not_leader=%llu\n",
           clock_only ? "baseline=clock_gettime " : "", n,
           (unsigned long long)calls, (double)cpu / (double)calls,
           wall_per_call, (double)calls / ((double)wall / 1e9) / 1e6,
           (unsigned long long)not_leader);
    fflush(stdout);
    return not_leader == 0 ? 0 : -1;
}

/* Creates the handle and ticks it until it leads. Returns it (owned by
 * the caller) or NULL after printing the reason. */
static odbc_leader_t *make_leader(const char *config) {
    char err[512];
    odbc_leader_t *h = NULL;
    int rc = odbc_leader_create(&h, config, NULL, err, sizeof(err));

    if (rc < 0) {
        fprintf(stderr, "bench-isleader: %s\n", err);
        return NULL;
    }
    for (int i = 0; i < 5; i++) {
        if (odbc_leader_tick(h, NULL) == ODBC_LEADER_LEADER)
            return h;
        usleep(100000);
    }
    fprintf(stderr, "bench-isleader: the handle did not become leader\n");
    odbc_leader_destroy(h);
    return NULL;
}

int main(int argc, char **argv) {
    const char *counts = "1,2,4,8";
    long ms = 1000;
    odbc_leader_t *h;
    char *list, *tok, *save = NULL;
    int c, rc = 0;

    while ((c = getopt(argc, argv, "d:t:")) != -1) {
        if (c == 'd')
            ms = strtol(optarg, NULL, 10);
        else if (c == 't')
            counts = optarg;
        else
            optind = argc + 1;
    }
    if (optind + 1 != argc || ms < 1) {
        fprintf(stderr, "usage: bench-isleader [-d MS] [-t 1,2,4,8] CONFIG\n");
        return 64;
    }
    h = make_leader(argv[optind]);
    list = strdup(counts);
    if (h == NULL || list == NULL) {
        rc = 1;
        goto out;
    }
    for (tok = strtok_r(list, ",", &save); tok != NULL && rc == 0;
         tok = strtok_r(NULL, ",", &save)) {
        int n = atoi(tok);

        if (n < 1 || n > MAX_THREADS || run_threads(h, n, ms * 1000000, 0) < 0)
            rc = 1;
    }
    if (rc == 0 && run_threads(h, 1, ms * 1000000, 1) < 0)
        rc = 1;
out:
    free(list);
    odbc_leader_destroy(h);
    return rc;
}
