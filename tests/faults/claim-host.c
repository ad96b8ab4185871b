/* SPDX-License-Identifier: MIT */
/*
 * claim-host.c: a candidate of the claim fault schedule (claim-schedule.py).
 * It campaigns with libodbcleader and, while it leads, claims every fire of
 * job "tick" (slots of --slot-ms on CLOCK_REALTIME, the same on every
 * process of the host) that fell due within --window-ms and that it has
 * not claimed or seen claimed yet: the catch-up of a new leader. Every
 * answer goes to LOG as one line
 *
 *   OP PID FIRE TERM RC
 *
 * with OP C (claimed: 1), D (already claimed: 0), N (not leader), E (other
 * error, RC its code), W (won term TERM) and L (lost). With --rogue it
 * ignores is_leader(): it claims before each tick whether or not it leads
 * (its config carries LeaderTestTrustExtra, so the library's own window
 * outlives the lease and the claim reaches the database with a stale term:
 * the database must refuse it). SIGTERM ends it: destroy (resign), exit 0.
 *
 *   claim-host CONFIG LOG [--slot-ms N] [--window-ms N] [--rogue]
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "odbc_leader.h"

#define LOOP_MS 20 /* claims are looked at this often */

struct host {
    odbc_leader_t *h;
    int log; /* O_APPEND file descriptor */
    int64_t slot_ms, window_ms;
    int rogue;
    int64_t next_fire; /* the oldest fire not answered yet; 0 = none */
    int64_t term;      /* the term last logged as won */
};

/* Milliseconds on CLOCK_REALTIME (the fires' nominal clock). */
static int64_t real_ms(void) {
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds on CLOCK_MONOTONIC. */
static int64_t mono_ms(void) {
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Appends one line to the log with a single write (O_APPEND). */
static void log_line(const struct host *s, char op, int64_t fire, int64_t term,
                     int rc) {
    char line[128];
    int n = snprintf(line, sizeof(line), "%c %ld %lld %lld %d\n", op,
                     (long)getpid(), (long long)fire, (long long)term, rc);

    if (write(s->log, line, (size_t)n) != n)
        _exit(3);
}

/* Claims the due fires from the oldest unanswered one (at most the
 * window back) up to now, oldest first, and stops at the first refusal
 * or error. */
static void claim_round(struct host *s) {
    int64_t now = real_ms();
    int64_t last = now / s->slot_ms * s->slot_ms;
    int64_t first = (now - s->window_ms) / s->slot_ms * s->slot_ms;
    int64_t f = s->next_fire > first ? s->next_fire : first;

    for (; f <= last; f += s->slot_ms) {
        int64_t term = odbc_leader_term(s->h);
        int rc = odbc_leader_claim(s->h, "tick", f);

        if (rc == 1 || rc == 0) {
            log_line(s, rc == 1 ? 'C' : 'D', f, term, rc);
            s->next_fire = f + s->slot_ms;
            continue;
        }
        log_line(s, rc == ODBC_LEADER_ENOTLEADER ? 'N' : 'E', f, term, rc);
        return;
    }
}

/* Logs a change of this process's own leadership. */
static void note_term(struct host *s) {
    int64_t t = odbc_leader_term(s->h);

    if (t != s->term)
        log_line(s, t != 0 ? 'W' : 'L', 0, t != 0 ? t : s->term, 0);
    s->term = t;
}

/* Runs the host until SIGTERM. Returns the exit status. */
static int run(struct host *s) {
    sigset_t set;
    int64_t next_tick = 0;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    for (;;) {
        struct timespec ts = {0, LOOP_MS * 1000000L};
        uint32_t next = 1000;

        if (s->rogue)
            claim_round(s); /* before the tick: a stale term, maybe */
        if (mono_ms() >= next_tick) {
            odbc_leader_tick(s->h, &next);
            next_tick = mono_ms() + next;
        }
        note_term(s);
        if (!s->rogue && odbc_leader_is_leader(s->h))
            claim_round(s);
        if (sigtimedwait(&set, NULL, &ts) > 0)
            return 0;
    }
}

int main(int argc, char **argv) {
    struct host s;
    char err[512] = "";
    int rc;

    memset(&s, 0, sizeof(s));
    s.slot_ms = 100;
    s.window_ms = 20000;
    if (argc < 3) {
        fprintf(stderr, "usage: claim-host CONFIG LOG [--slot-ms N] "
                        "[--window-ms N] [--rogue]\n");
        return 64;
    }
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--rogue") == 0)
            s.rogue = 1;
        else if (strcmp(argv[i], "--slot-ms") == 0 && i + 1 < argc)
            s.slot_ms = atoll(argv[++i]);
        else if (strcmp(argv[i], "--window-ms") == 0 && i + 1 < argc)
            s.window_ms = atoll(argv[++i]);
        else
            return 64;
    }
    if (s.slot_ms <= 0 || s.window_ms <= 0)
        return 64;
    s.log = open(argv[2], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (s.log < 0) {
        fprintf(stderr, "claim-host: %s: %s\n", argv[2], strerror(errno));
        return 2;
    }
    rc = odbc_leader_create(&s.h, argv[1], NULL, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "claim-host: %s\n", err);
        return 2;
    }
    rc = run(&s);
    odbc_leader_destroy(s.h);
    close(s.log);
    return rc;
}
