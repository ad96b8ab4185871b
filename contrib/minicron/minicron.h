/* SPDX-License-Identifier: MIT */
/*
 * minicron.h: what the files of minicron share: the host's state (struct
 * minicron: the plugin, the crontab's jobs, the running jobs, the finish()
 * calls to try again) and the calls one file makes into another. Each call
 * is described where it is defined; minicron.c says what minicron does.
 *
 *   minicron.c         main() and the command line
 *   minicron_clock.c   the clocks, and time cut into slots
 *   minicron_log.c     the log on stderr, and the plugin's log and
 *                      on_change callbacks that write to it
 *   minicron_plugin.c  loading the plugin, ticking it, and the term it
 *                      says this process leads (for a job)
 *   minicron_jobs.c    reading the crontab and naming its jobs
 *   minicron_fire.c    which fires run: without claims, or claimed by the
 *                      misfire policy; their outcomes, recorded by finish()
 *   minicron_runs.c    the running jobs: start, reap, signal, kill
 *   minicron_loop.c    the main loop, and the jobs' shutdown
 */
#ifndef MINICRON_MINICRON_H
#define MINICRON_MINICRON_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "crontab.h"
#include "leader_plugin.h"

#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL
#define ERR_MAX 512
#define MAX_RUNS 64     /* jobs running at once */
#define JOB_NAME_MAX 48 /* "cron-" 16 hex digits "-K", and the NUL */

/* --misfire: which due fires a leader claims (ABI 1.1 plugins only). */
enum misfire {
    MISFIRE_SKIP, /* slots begun after this term was seen leading */
    MISFIRE_ONCE, /* each job's newest due slot within the window */
    MISFIRE_ALL,  /* every due slot within the window, oldest first */
};

/* One running job: its shell, the leader of a process group of its own. */
struct job_run {
    pid_t pid;       /* the shell's pid, also the group's id */
    int64_t term;    /* the term it was started under */
    int64_t slot;    /* the slot it was started for (a run-now: the slot
                        it was started in) */
    int64_t fire_ms; /* its fire's key in the ledger: the slot's start, or
                        a run-now's key (below 0) */
    unsigned line;   /* its crontab line */
    int killed;      /* SIGKILL sent already */
    const char *job; /* its name, borrowed; NULL when not claimed */
};

/* What this process knows of one crontab line's fires. */
struct job_state {
    char name[JOB_NAME_MAX]; /* the job's name in the fire ledger */
    int64_t settled;         /* every due slot up to this one is settled here */
};

/* An outcome finish() (finish_fire() with ABI 1.4) could not record
 * yet. */
struct pending_finish {
    const char *job; /* borrowed from a struct job_state */
    int64_t fire_ms;
    int64_t term; /* the term of the claim (finish_fire fences by it) */
    int status;
    int tries; /* finish() calls failed so far */
};

/* The host's whole state; lives in main's frame. The plugin's callbacks
 * get it as ctx. */
struct minicron {
    int threshold;
    pid_t pid;
    const struct leader_plugin *p; /* static table inside the plugin */
    void *inst;                    /* owned plugin instance */
    struct crontab tab;            /* owned */
    struct job_state *jobs;        /* owned, one per tab.jobs[] */
    int slot_s;
    int claims;            /* the plugin has claim and finish */
    uint32_t shards;       /* a group's shard count, 0 for one namespace */
    int misfire;           /* an enum misfire */
    int64_t window_ns;     /* --misfire-window */
    int64_t cur_slot;      /* the newest slot this process has entered */
    int64_t held_term;     /* term led at the last look, 0 when not leader */
    int64_t held_since;    /* the slot in which held_term was first seen */
    int64_t next_tick_ns;  /* CLOCK_MONOTONIC time of the next tick */
    const char *last_err;  /* plugin's static text of the last tick error */
    const char *claim_err; /* ... of the last claim error, NULL after a claim */
    struct job_run runs[MAX_RUNS]; /* runs[0 .. n_runs - 1] are running */
    size_t n_runs;
    struct pending_finish pending[MAX_RUNS]; /* finish() to try again */
    size_t n_pending;
};

/* ---- minicron_clock.c ---- */

int64_t clock_ns(clockid_t id);
int64_t slot_at(const struct minicron *mc, int64_t ns);
int64_t slot_ms(const struct minicron *mc, int64_t slot);

/* ---- minicron_log.c ---- */

void say(const struct minicron *mc, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void on_log(void *ctx, int level, const char *msg);
void on_change(void *ctx, int is_leader, int64_t term, const char *leader_id);

/* ---- minicron_plugin.c ---- */

const struct leader_plugin *load(const struct minicron *mc, const char *path,
                                 void **dl);
int64_t led_term(const struct minicron *mc);
int64_t job_term(const struct minicron *mc, const char *name);
void tick(struct minicron *mc);

/* ---- minicron_jobs.c ---- */

int load_crontab(struct minicron *mc, const char *path);
int declare_schedules(struct minicron *mc);

/* ---- minicron_fire.c ---- */

void cross(struct minicron *mc, int64_t slot);
void observe(struct minicron *mc);
void fire_due(struct minicron *mc);
void fire_offers(struct minicron *mc);
void record_finish(struct minicron *mc, const char *job, int64_t fire_ms,
                   int64_t term, int status);
void retry_finishes(struct minicron *mc);

/* ---- minicron_runs.c ---- */

int start_job(struct minicron *mc, size_t i, int64_t slot, int64_t fire_ms,
              int64_t term, int claimed);
void reaped(struct minicron *mc, pid_t pid, int status);
void reap(struct minicron *mc);
void enforce(struct minicron *mc);
void signal_all(struct minicron *mc, int sig, const char *why);

/* ---- minicron_loop.c ---- */

void run(struct minicron *mc, const sigset_t *sigs);
void stop_jobs(struct minicron *mc, const sigset_t *sigs, int grace_s);

#endif /* MINICRON_MINICRON_H */
