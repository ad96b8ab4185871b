/* SPDX-License-Identifier: MIT */
/*
 * leader-host.c: the smallest useful host of a leader_plugin, and the
 * example to copy when adding leader election to a scheduler.
 *
 *   leader-host [-p PLUGIN.so] [-n NAME] [-q] CONFIG
 *
 * It loads the plugin, creates one instance from CONFIG, then ticks on the
 * plugin's schedule and prints one line per change of leadership on
 * stdout ("NAME: leader term=7", "NAME: follower (leader: ID)"). Between
 * ticks it checks is_leader() the way a scheduler would before starting
 * leader-only work. SIGTERM or SIGINT ends the loop; shutdown resigns, so
 * another candidate takes over at once. -q hides the plugin's log lines
 * (stderr). Keep passwords in a DSN (odbc.ini), not in CONFIG: other
 * users can read a process's arguments.
 *
 * Signals are blocked and waited for with sigtimedwait(), which doubles as
 * the sleep between ticks: no handler, no global flag.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "leader_plugin.h"

#ifndef PKGLIBDIR
#define PKGLIBDIR "/usr/local/lib/odbc-leader"
#endif

#define MAX_SLEEP_MS 1000 /* tick at least this often */
#define POLL_MS 100       /* how often is_leader() is checked */

/* The host's state, handed to the plugin's callbacks as ctx. */
struct host {
    const char *name; /* borrowed from argv or main's buffer */
    int quiet;        /* -q: drop plugin log lines */
    int leader;       /* the state last printed */
};

/* Plugin log callback: one line on stderr unless -q. */
static void on_log(void *ctx, int level, const char *msg) {
    const struct host *h = ctx;

    if (!h->quiet)
        fprintf(stderr, "%s: log(%d): %s\n", h->name, level, msg);
}

/* Plugin on_change callback: one line on stdout per change. */
static void on_change(void *ctx, int is_leader, int64_t term,
                      const char *leader_id) {
    struct host *h = ctx;

    h->leader = is_leader;
    if (is_leader)
        printf("%s: leader term=%lld\n", h->name, (long long)term);
    else
        printf("%s: follower (leader: %s)\n", h->name,
               leader_id ? leader_id : "none");
    fflush(stdout);
}

/* Milliseconds on the monotonic clock. */
static int64_t now_ms(void) {
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Sleeps ms milliseconds, checking is_leader() every POLL_MS as a
 * scheduler would before leader-only work. Returns 1 as soon as one of
 * the blocked signals in *sigs arrives, else 0.
 */
static int wait_and_watch(struct host *h, const struct leader_plugin *p,
                          const void *inst, const sigset_t *sigs, uint32_t ms) {
    int64_t deadline = now_ms() + ms;

    for (;;) {
        int64_t left = deadline - now_ms();
        struct timespec ts = {0, 0};

        if (h->leader && !p->is_leader(inst)) {
            printf("%s: follower (lease not renewed in time)\n", h->name);
            fflush(stdout);
            h->leader = 0;
        }
        if (left <= 0)
            return 0;
        ts.tv_nsec = (left < POLL_MS ? left : POLL_MS) * 1000000L;
        if (sigtimedwait(sigs, NULL, &ts) > 0)
            return 1;
    }
}

/* Ticks until a signal arrives. Prints a tick error only when its message
 * differs from the previous one. */
static void run(struct host *h, const struct leader_plugin *p, void *inst,
                const sigset_t *sigs) {
    const char *last_err = NULL; /* static string owned by the plugin */
    uint32_t next;
    int rc;

    do {
        next = MAX_SLEEP_MS;
        rc = p->tick(inst, &next);
        if (rc < 0 &&
            (last_err == NULL || strcmp(last_err, p->strerror(rc)) != 0)) {
            last_err = p->strerror(rc);
            printf("%s: error: %s\n", h->name, last_err);
            fflush(stdout);
        } else if (rc >= 0) {
            last_err = NULL;
        }
        if (next > MAX_SLEEP_MS)
            next = MAX_SLEEP_MS;
    } while (!wait_and_watch(h, p, inst, sigs, next));
}

/* dlopen()s path and returns its plugin table (static in the plugin), or
 * NULL with a message on stderr. *dl gets the handle to dlclose(). */
static const struct leader_plugin *load(const char *path, void **dl) {
    const struct leader_plugin *p = NULL;
    leader_plugin_entry_fn entry;
    int rc;

    /* RTLD_NODELETE: a plugin built on unixODBC must stay mapped, as the
     * driver manager keeps state in globals it never frees. */
    *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (*dl == NULL) {
        fprintf(stderr, "leader-host: %s\n", dlerror());
        return NULL;
    }
    entry = (leader_plugin_entry_fn)dlsym(*dl, "leader_plugin_entry");
    if (entry == NULL) {
        fprintf(stderr, "leader-host: %s: no leader_plugin_entry\n", path);
        return NULL;
    }
    rc = entry(LEADER_PLUGIN_ABI_MAJOR, &p);
    if (rc < 0)
        fprintf(stderr, "leader-host: %s refuses ABI %d: %d\n", path,
                LEADER_PLUGIN_ABI_MAJOR, rc);
    return p;
}

static void usage(void) {
    fprintf(stderr,
            "usage: leader-host [-p PLUGIN.so] [-n NAME] [-q] "
            "CONFIG\n  default plugin: %s\n",
            PKGLIBDIR "/odbc_leader.so");
}

int main(int argc, char **argv) {
    const char *path = PKGLIBDIR "/odbc_leader.so";
    char name[32], err[512] = "";
    struct host h = {name, 0, 0};
    struct leader_host lh = {.struct_size = sizeof(lh),
                             .ctx = &h,
                             .log = on_log,
                             .on_change = on_change};
    const struct leader_plugin *p;
    void *dl = NULL, *inst = NULL;
    sigset_t sigs;
    int opt, status = 1;

    snprintf(name, sizeof(name), "host-%ld", (long)getpid());
    for (opt = getopt(argc, argv, "p:n:q"); opt != -1;
         opt = getopt(argc, argv, "p:n:q")) {
        switch (opt) {
        case 'p':
            path = optarg;
            break;
        case 'n':
            h.name = optarg;
            break;
        case 'q':
            h.quiet = 1;
            break;
        default:
            usage();
            return 2;
        }
    }
    if (optind != argc - 1) {
        usage();
        return 2;
    }
    /* Block the stop signals first: they are collected by sigtimedwait. */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigprocmask(SIG_BLOCK, &sigs, NULL);

    p = load(path, &dl);
    if (p == NULL)
        goto out;
    if (p->init(argv[optind], &lh, &inst, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s: init failed: %s\n", h.name, err);
        goto out;
    }
    run(&h, p, inst, &sigs);
    p->shutdown(inst); /* resigns: a follower takes over at once */
    printf("%s: stopped\n", h.name);
    status = 0;
out:
    if (dl != NULL)
        dlclose(dl);
    return status;
}
