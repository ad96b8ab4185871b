/* SPDX-License-Identifier: MIT */
/*
 * minicron_loop.c: minicron's main loop, which wakes at every tick, slot
 * boundary and SIGCHLD and at least once a second, until SIGTERM or
 * SIGINT; then the jobs' shutdown, before the plugin's: SIGTERM, the grace
 * period (still ticking), SIGKILL, and every job reaped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>

#include "minicron.h"

#define MAX_SLEEP_MS 1000 /* wake at least this often */

/*
 * Sleeps at most wait_ns and no later than the next tick, reaping jobs on
 * SIGCHLD. Returns 1 when SIGTERM or SIGINT arrived, else 0.
 */
static int sleep_or_stop(struct minicron *mc, const sigset_t *sigs,
                         int64_t wait_ns) {
    int64_t to_tick = mc->next_tick_ns - clock_ns(CLOCK_MONOTONIC);
    struct timespec ts;
    int sig;

    if (to_tick < wait_ns)
        wait_ns = to_tick;
    if (wait_ns < 0)
        wait_ns = 0;
    ts.tv_sec = (time_t)(wait_ns / NS_PER_S);
    ts.tv_nsec = (long)(wait_ns % NS_PER_S);
    sig = sigtimedwait(sigs, NULL, &ts);
    if (sig == SIGCHLD)
        reap(mc);
    return sig == SIGTERM || sig == SIGINT;
}

/* Nanoseconds from now until the next slot boundary or MAX_SLEEP_MS,
 * whichever is first. */
static int64_t to_next_wake(const struct minicron *mc) {
    int64_t to_slot =
        (mc->cur_slot + 1) * mc->slot_s * NS_PER_S - clock_ns(CLOCK_REALTIME);

    return to_slot < MAX_SLEEP_MS * NS_PER_MS ? to_slot
                                              : MAX_SLEEP_MS * NS_PER_MS;
}

/* The main loop: runs until SIGTERM or SIGINT. Wakes at the next tick,
 * slot boundary or MAX_SLEEP_MS, whichever is first, and at every
 * SIGCHLD. Without claims, the slot the process starts in is never
 * fired; with claims, due fires are claimed after the tick. */
void run(struct minicron *mc, const sigset_t *sigs) {
    mc->cur_slot = slot_at(mc, clock_ns(CLOCK_REALTIME));
    mc->next_tick_ns = clock_ns(CLOCK_MONOTONIC);
    do {
        int64_t slot = slot_at(mc, clock_ns(CLOCK_REALTIME));

        enforce(mc);
        if (slot > mc->cur_slot && !mc->claims)
            cross(mc, slot);
        if (slot > mc->cur_slot)
            mc->cur_slot = slot;
        if (clock_ns(CLOCK_MONOTONIC) >= mc->next_tick_ns)
            tick(mc);
        observe(mc);
        enforce(mc);
        if (mc->claims)
            fire_due(mc);
        if (mc->claims)
            fire_offers(mc);
        reap(mc);
        enforce(mc);
    } while (!sleep_or_stop(mc, sigs, to_next_wake(mc)));
}

/*
 * Waits, still ticking the plugin on its schedule and killing the jobs
 * whose term ends, until every job is reaped or the monotonic clock
 * reaches deadline_ns. Returns 1 when SIGTERM or SIGINT arrived, else 0.
 */
static int wait_jobs(struct minicron *mc, const sigset_t *sigs,
                     int64_t deadline_ns) {
    int64_t left = deadline_ns - clock_ns(CLOCK_MONOTONIC);

    while (mc->n_runs > 0 && left > 0) {
        if (clock_ns(CLOCK_MONOTONIC) >= mc->next_tick_ns)
            tick(mc);
        enforce(mc);
        if (left > MAX_SLEEP_MS * NS_PER_MS)
            left = MAX_SLEEP_MS * NS_PER_MS;
        if (sleep_or_stop(mc, sigs, left))
            return 1;
        reap(mc);
        enforce(mc);
        left = deadline_ns - clock_ns(CLOCK_MONOTONIC);
    }
    return 0;
}

/*
 * The shutdown of the jobs, before the plugin's: SIGTERM to every running
 * job's group, up to grace_s seconds for them to end (ended at once by
 * another SIGTERM or SIGINT), SIGKILL to what is left, then reaps them
 * all and tries the finish() calls still pending once more. No job of
 * this process runs when it returns.
 */
void stop_jobs(struct minicron *mc, const sigset_t *sigs, int grace_s) {
    int64_t deadline = clock_ns(CLOCK_MONOTONIC) + grace_s * NS_PER_S;
    int status;
    pid_t pid;

    reap(mc);
    enforce(mc);
    signal_all(mc, SIGTERM, "shutting down");
    if (wait_jobs(mc, sigs, deadline))
        say(mc, LOG_NOTICE, "signalled again: not waiting for jobs");
    signal_all(mc, SIGKILL, "still running after the grace period");
    while (mc->n_runs > 0) {
        pid = waitpid(-1, &status, 0);
        if (pid > 0)
            reaped(mc, pid, status);
        else if (errno != EINTR)
            break;
    }
    if (mc->n_pending > 0)
        retry_finishes(mc);
}
