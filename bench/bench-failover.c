/* SPDX-License-Identifier: MIT */
/*
 * bench-failover.c: measures how fast leadership moves.
 *
 * Forks C candidate processes on one connection string (each its own
 * odbc_leader_t), waits for a leader, then repeats a fault on whoever
 * leads and times how long the namespace goes without one:
 *
 *   kill      SIGKILL the leader: the others must wait out the lease;
 *   shutdown  the leader calls odbc_leader_destroy() (resign, release,
 *             unregister, disconnect) and exits: a graceful shutdown;
 *   resign    the leader calls odbc_leader_resign() and stays a candidate;
 *   fresh     SIGKILL every candidate, wait WAIT_MS (-w: let the dead
 *             leader's lease run out in database time), start C fresh
 *             ones: the time from their start to a leader is what a
 *             candidate that has just started pays to take over a held
 *             lease (one TTL of watching, docs/protocol.md);
 *   idle      no fault: once a leader is elected and 2 s have passed, runs
 *             "HOOK start", lets the candidates idle for ROUNDS seconds,
 *             runs "HOOK end" (-H HOOK; the hook reads the database's
 *             counters, for what an idle namespace costs).
 *
 * The time is from the fault (kill(2) in the parent, or the call in the
 * leader; in fresh mode the fresh candidates' start, taken on
 * CLOCK_MONOTONIC, which all processes share) to the moment a new
 * leader's tick returned LEADER. Faults land at a random point of the
 * leader's renew cycle: 0.3 to 1 s plus PAUSE_MS (-p) plus 0 to
 * SPREAD_MS (-r) after the previous election. Prints one line per round and a
 * summary line "failover MODE rounds=N median_ms=.. p99_ms=.. max_ms=..";
 * -j FILE also writes the samples as JSON.
 *
 * Usage: bench-failover -C CONNECT [-m kill|shutdown|resign|fresh|idle]
 *        [-n ROUNDS] [-c CANDIDATES] [-j FILE] [-H HOOK] [-p PAUSE_MS]
 *        [-r SPREAD_MS] [-w WAIT_MS] [-q] [-v]
 * (-v: the candidates' library log on stderr; -p: the least pause
 * between rounds, 0.3 to 1 s more are added. In resign mode make it at
 * least the renew interval: a resigned candidate does not campaign for
 * that long, and with all but one candidate held off the next round would
 * measure the holdoff, not the handoff.)
 * CONNECT is a connection string with Leader* keys (namespace, TTL...).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "odbc_leader.h"

#define MAX_CANDIDATES 16
#define MAX_ROUNDS 1000

/* One report from a candidate to the parent, written atomically. */
struct event {
    char kind; /* 'L' became leader, 'F' a fault started, 'E' init failed */
    pid_t pid;
    int64_t term;
    int64_t t_ns; /* CLOCK_MONOTONIC */
};

struct opts {
    const char *connect;
    const char *mode;
    const char *json;
    const char *hook;
    int rounds, candidates, quiet, verbose;
    int pause_ms;  /* least pause between rounds (-p) */
    int spread_ms; /* ... plus up to this much (-r) */
    int wait_ms;   /* fresh: from the kill to the fresh start (-w) */
};

struct bench {
    struct opts o;
    int pipe_rd, pipe_wr;
    pid_t pids[MAX_CANDIDATES];
    double samples[MAX_ROUNDS];
    int nsamples;
};

static int64_t mono_ns(void) {
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Writes one event to fd; a short write is impossible below PIPE_BUF. */
static void emit(int fd, char kind, int64_t term, int64_t t_ns) {
    struct event ev;
    ssize_t w;

    memset(&ev, 0, sizeof(ev));
    ev.kind = kind;
    ev.pid = getpid();
    ev.term = term;
    ev.t_ns = t_ns;
    w = write(fd, &ev, sizeof(ev));
    (void)w;
}

/* Sleeps up to ms while SIGTERM/SIGUSR1 are blocked; returns the signal
 * that arrived or 0. */
static int sleep_for_signal(const sigset_t *set, uint32_t ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    int sig = sigtimedwait(set, NULL, &ts);

    return sig > 0 ? sig : 0;
}

/* Log callback for -v: one line per message with pid and time. */
static void log_line(void *ctx, int level, const char *msg) {
    (void)ctx;
    fprintf(stderr, "%.3f [%d] <%d> %s\n", (double)mono_ns() / 1e9,
            (int)getpid(), level, msg);
}

/* The candidate process: ticks as asked and reports; SIGTERM means
 * "shut down gracefully now", SIGUSR1 "resign now". Never returns. */
static void candidate(const char *connect, int fd, int verbose) {
    struct odbc_leader_callbacks cb = {.struct_size = sizeof(cb),
                                       .ctx = NULL,
                                       .log = log_line,
                                       .on_change = NULL};
    sigset_t set;
    odbc_leader_t *h = NULL;
    char err[512];
    int was_leader = 0;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    if (odbc_leader_create(&h, connect, verbose ? &cb : NULL, err,
                           sizeof(err)) < 0) {
        fprintf(stderr, "bench-failover: %s\n", err);
        emit(fd, 'E', 0, mono_ns());
        _exit(1);
    }
    for (;;) {
        uint32_t next = 100;
        int rc = odbc_leader_tick(h, &next);
        int sig;

        if (rc == ODBC_LEADER_LEADER && !was_leader)
            emit(fd, 'L', odbc_leader_term(h), mono_ns());
        was_leader = rc == ODBC_LEADER_LEADER;
        sig = sleep_for_signal(&set, next);
        if (sig == SIGTERM) {
            emit(fd, 'F', odbc_leader_term(h), mono_ns());
            odbc_leader_destroy(h);
            _exit(0);
        }
        if (sig == SIGUSR1) {
            emit(fd, 'F', odbc_leader_term(h), mono_ns());
            odbc_leader_resign(h);
            was_leader = 0;
        }
    }
}

/* Forks candidate slot i. Returns 0 or -1. */
static int spawn(struct bench *b, int i) {
    pid_t pid = fork();

    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(b->pipe_rd);
        candidate(b->o.connect, b->pipe_wr, b->o.verbose);
    }
    b->pids[i] = pid;
    return 0;
}

/* Reads the next event within timeout_ms. Returns 1, 0 on timeout, -1. */
static int next_event(struct bench *b, struct event *ev, int timeout_ms) {
    struct pollfd p = {b->pipe_rd, POLLIN, 0};
    int r = poll(&p, 1, timeout_ms);

    if (r <= 0)
        return r;
    return read(b->pipe_rd, ev, sizeof(*ev)) == (ssize_t)sizeof(*ev) ? 1 : -1;
}

/* Waits for an 'L' event with a term above min_term; returns its time,
 * or -1 after 120 s. *pid receives the new leader. */
static int64_t wait_leader(struct bench *b, int64_t min_term, pid_t *pid,
                           int64_t *term) {
    int64_t give_up = mono_ns() + INT64_C(120000000000);
    struct event ev;

    while (mono_ns() < give_up) {
        int r = next_event(b, &ev, 1000);

        if (r < 0)
            return -1;
        if (r == 0)
            continue;
        if (ev.kind == 'E')
            return -1;
        if (ev.kind == 'L' && ev.term > min_term) {
            *pid = ev.pid;
            *term = ev.term;
            return ev.t_ns;
        }
    }
    return -1;
}

/* Returns the slot of pid, or -1. */
static int slot_of(const struct bench *b, pid_t pid) {
    for (int i = 0; i < b->o.candidates; i++)
        if (b->pids[i] == pid)
            return i;
    return -1;
}

/* Waits for the 'F' event of pid; returns its time or -1. */
static int64_t wait_fault(struct bench *b, pid_t pid) {
    struct event ev;

    for (int tries = 0; tries < 100; tries++) {
        int r = next_event(b, &ev, 1000);

        if (r < 0)
            return -1;
        if (r > 0 && ev.kind == 'F' && ev.pid == pid)
            return ev.t_ns;
    }
    return -1;
}

/* A fresh-mode round: kills every candidate, waits WAIT_MS, starts as
 * many fresh ones and waits for the next leader. Returns the time from
 * their start to it in ms, or a negative value. */
static double round_fresh(struct bench *b, pid_t *leader, int64_t *term) {
    int64_t t0, t1;

    for (int i = 0; i < b->o.candidates; i++) {
        kill(b->pids[i], SIGKILL);
        waitpid(b->pids[i], NULL, 0);
    }
    usleep((useconds_t)b->o.wait_ms * 1000);
    t0 = mono_ns();
    for (int i = 0; i < b->o.candidates; i++)
        if (spawn(b, i) < 0)
            return -1;
    t1 = wait_leader(b, *term, leader, term);
    return t1 < 0 ? -1 : (double)(t1 - t0) / 1e6;
}

/* One round against the leader pid (term): starts the fault, waits for
 * the next leader. Returns the gap in ms or a negative value. */
static double round_once(struct bench *b, pid_t *leader, int64_t *term) {
    int slot = slot_of(b, *leader);
    int64_t t0, t1;

    if (slot < 0)
        return -1;
    if (strcmp(b->o.mode, "fresh") == 0)
        return round_fresh(b, leader, term);
    if (strcmp(b->o.mode, "kill") == 0) {
        t0 = mono_ns();
        kill(*leader, SIGKILL);
        waitpid(*leader, NULL, 0);
    } else {
        kill(*leader, strcmp(b->o.mode, "resign") == 0 ? SIGUSR1 : SIGTERM);
        t0 = wait_fault(b, *leader);
        if (t0 < 0)
            return -1;
    }
    t1 = wait_leader(b, *term, leader, term);
    if (strcmp(b->o.mode, "resign") != 0) {
        if (strcmp(b->o.mode, "shutdown") == 0)
            waitpid(b->pids[slot], NULL, 0);
        if (spawn(b, slot) < 0)
            return -1;
    }
    if (t1 < 0)
        return -1;
    return (double)(t1 - t0) / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Returns the q-quantile (nearest rank) of the sorted v[0..n). */
static double quantile(const double *v, int n, double q) {
    int i = (int)(q * n + 0.999999) - 1;

    if (i < 0)
        i = 0;
    if (i >= n)
        i = n - 1;
    return v[i];
}

/* Prints the summary and writes the JSON file. Returns 0 or 1. */
static int report(struct bench *b) {
    double s[MAX_ROUNDS];
    int n = b->nsamples;
    FILE *f;

    if (n == 0)
        return 1;
    memcpy(s, b->samples, sizeof(double) * (size_t)n);
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    printf("failover %s rounds=%d median_ms=%.1f p99_ms=%.1f max_ms=%.1f "
           "min_ms=%.1f\n",
           b->o.mode, n, quantile(s, n, 0.5), quantile(s, n, 0.99), s[n - 1],
           s[0]);
    if (b->o.json == NULL)
        return 0;
    f = fopen(b->o.json, "w");
    if (f == NULL) {
        perror(b->o.json);
        return 1;
    }
    fprintf(f,
            "{\"mode\": \"%s\", \"rounds\": %d, \"median_ms\": %.3f, "
            "\"p99_ms\": %.3f, \"max_ms\": %.3f, \"samples_ms\": [",
            b->o.mode, n, quantile(s, n, 0.5), quantile(s, n, 0.99), s[n - 1]);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%.3f", i ? ", " : "", b->samples[i]);
    fprintf(f, "]}\n");
    return fclose(f) == 0 ? 0 : 1;
}

/* The idle mode: runs the hook around an idle window. Returns the exit
 * status. */
static int idle(struct bench *b) {
    char cmd[4096];

    sleep(2);
    if (b->o.hook != NULL) {
        snprintf(cmd, sizeof(cmd), "%s start", b->o.hook);
        if (system(cmd) != 0)
            return 1;
    }
    sleep((unsigned)b->o.rounds);
    if (b->o.hook != NULL) {
        snprintf(cmd, sizeof(cmd), "%s end", b->o.hook);
        if (system(cmd) != 0)
            return 1;
    }
    printf("idle seconds=%d candidates=%d\n", b->o.rounds, b->o.candidates);
    return 0;
}

/* Runs the rounds. Returns the exit status. */
static int run(struct bench *b) {
    pid_t leader = 0;
    int64_t term = 0;
    int fds[2];

    if (pipe(fds) < 0) {
        perror("pipe");
        return 1;
    }
    b->pipe_rd = fds[0];
    b->pipe_wr = fds[1];
    for (int i = 0; i < b->o.candidates; i++)
        if (spawn(b, i) < 0)
            return 1;
    if (wait_leader(b, 0, &leader, &term) < 0) {
        fprintf(stderr, "bench-failover: no leader elected\n");
        return 1;
    }
    if (strcmp(b->o.mode, "idle") == 0)
        return idle(b);
    for (int r = 0; r < b->o.rounds; r++) {
        double ms;

        /* land the fault anywhere in the renew cycle, and let the
         * followers settle into their wait (and, with -p, resigned
         * candidates out of their holdoff) */
        usleep((useconds_t)b->o.pause_ms * 1000 + 300000 +
               (useconds_t)(rand() % 700) * 1000 +
               (b->o.spread_ms > 0
                    ? (useconds_t)(rand() % b->o.spread_ms) * 1000
                    : 0));
        ms = round_once(b, &leader, &term);
        if (ms < 0) {
            fprintf(stderr, "bench-failover: round %d: no new leader\n", r);
            return 1;
        }
        b->samples[b->nsamples++] = ms;
        if (!b->o.quiet)
            printf("%.3f round %d: %s -> term %lld after %.1f ms\n",
                   (double)mono_ns() / 1e9, r, b->o.mode, (long long)term, ms);
    }
    return report(b);
}

/* Stops every candidate. */
static void stop_all(struct bench *b) {
    for (int i = 0; i < b->o.candidates; i++)
        if (b->pids[i] > 0)
            kill(b->pids[i], SIGKILL);
    while (wait(NULL) > 0)
        ;
}

static int usage(void) {
    fprintf(stderr, "usage: bench-failover -C CONNECT [-m kill|shutdown|"
                    "resign|fresh|idle] [-n ROUNDS] [-c CANDIDATES] "
                    "[-j FILE] [-H HOOK] [-p PAUSE_MS] [-r SPREAD_MS] "
                    "[-w WAIT_MS] [-q] [-v]\n");
    return 64;
}

int main(int argc, char **argv) {
    static const struct option longopts[] = {
        {"connect", required_argument, NULL, 'C'},
        {"mode", required_argument, NULL, 'm'},
        {"rounds", required_argument, NULL, 'n'},
        {"candidates", required_argument, NULL, 'c'},
        {"json", required_argument, NULL, 'j'},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"hook", required_argument, NULL, 'H'},
        {"pause", required_argument, NULL, 'p'},
        {"spread", required_argument, NULL, 'r'},
        {"wait", required_argument, NULL, 'w'},
        {NULL, 0, NULL, 0}};
    struct bench b;
    int c, rc;

    memset(&b, 0, sizeof(b));
    b.o.mode = "shutdown";
    b.o.rounds = 20;
    b.o.candidates = 3;
    while ((c = getopt_long(argc, argv, "C:m:n:c:j:H:p:r:w:qv", longopts,
                            NULL)) != -1) {
        switch (c) {
        case 'C':
            b.o.connect = optarg;
            break;
        case 'm':
            b.o.mode = optarg;
            break;
        case 'n':
            b.o.rounds = atoi(optarg);
            break;
        case 'c':
            b.o.candidates = atoi(optarg);
            break;
        case 'j':
            b.o.json = optarg;
            break;
        case 'q':
            b.o.quiet = 1;
            break;
        case 'v':
            b.o.verbose = 1;
            break;
        case 'H':
            b.o.hook = optarg;
            break;
        case 'p':
            b.o.pause_ms = atoi(optarg);
            break;
        case 'r':
            b.o.spread_ms = atoi(optarg);
            break;
        case 'w':
            b.o.wait_ms = atoi(optarg);
            break;
        default:
            return usage();
        }
    }
    if (b.o.connect == NULL || b.o.rounds < 1 || b.o.rounds > MAX_ROUNDS ||
        b.o.candidates < 2 || b.o.candidates > MAX_CANDIDATES ||
        b.o.pause_ms < 0 || b.o.pause_ms > 600000 || b.o.spread_ms < 0 ||
        b.o.spread_ms > 600000 || b.o.wait_ms < 0 || b.o.wait_ms > 600000 ||
        (strcmp(b.o.mode, "kill") != 0 && strcmp(b.o.mode, "shutdown") != 0 &&
         strcmp(b.o.mode, "resign") != 0 && strcmp(b.o.mode, "fresh") != 0 &&
         strcmp(b.o.mode, "idle") != 0))
        return usage();
    srand((unsigned)getpid());
    setvbuf(stdout, NULL, _IOLBF, 0);
    rc = run(&b);
    stop_all(&b);
    return rc;
}
