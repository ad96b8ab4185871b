/* SPDX-License-Identifier: MIT */
/*
 * minicron.c: a small cron that fires its jobs only while a leader_plugin
 * says this process leads, so several copies on several hosts run each job
 * once. It is the worked example of a host of leader_plugin.h.
 *
 *   minicron -p PLUGIN.so -c CONFIG -f CRONTAB [-v] [--slot-seconds N]
 *            [--grace SECONDS] [--misfire skip|once|all]
 *            [--misfire-window DURATION]
 *
 * Time is cut into slots of N seconds (60: the minutes of the wall clock);
 * a job's fire is one (job, slot) pair, named in the plugin's fire ledger
 * by the job's name (below) and the slot's nominal start in epoch ms, the
 * same on every host.
 *
 * With a plugin of ABI 1.1 or later (it has claim and finish), fires are
 * claimed: on every wake-up, the leader claims each fire that is due and
 * not yet settled in this process, and starts the job only when claim()
 * answers 1. The database records the claim only while this process holds
 * the namespace's current term, and never twice for one fire, so a fire
 * runs at most once whoever claims it in whatever term. The fires looked
 * at are those of the slots begun within the misfire window
 * (--misfire-window, default 5 minutes; the current slot always), so a new
 * leader catches up what fell due during a failover: --misfire all claims
 * every due slot of the window, oldest first; once (the default) only the
 * newest due slot of each job, older missed ones being coalesced into it;
 * skip only slots that began after this process was seen leading its term
 * (no catch-up). Each job's settled slots are remembered as one watermark
 * (every due slot up to it was answered 0 or 1, or passed over), so a
 * process claims a fire at most once and its memory is one number a job.
 * claim() answering not-leader stops the round; another error leaves the
 * fire due, retried at the next wake-up while it is inside the window.
 * When a job's shell is reaped, finish() records 0, its exit status or
 * -signal (retried after good ticks when it fails); a claimed fire that is
 * not started records 127, or 80 when the term ended after the claim.
 * So, with --misfire all, a fire whose slot began while some minicron was
 * alive and got to lead (and reach the database) before the slot left the
 * window is claimed exactly once, and no fire is ever run twice; a fire
 * whose claimant dies between the claim and the start stays claimed, not
 * run. Clock skew between hosts shifts when a fire is seen due, never
 * which fire it is.
 *
 * Job names: "cron-" and the 64-bit FNV-1a hash of the command, in hex,
 * with "-K" added for the K-th line (K >= 2) with the same command; so
 * editing other lines (comments, line numbers) keeps a job's identity.
 *
 * In a sharded group (a plugin of ABI 1.3 whose shards() is N > 0, e.g.
 * LeaderShards=N in the configuration), each job belongs to the shard of
 * its name (shard_of) and runs on the process that leads that shard, under
 * that shard's term: the processes share the jobs. Each job is claimed,
 * started and killed by its own shard's term as above; a process that
 * gains a shard catches up its jobs' due fires within the window (--misfire
 * once or all; skip, which needs one term to date from, is refused).
 *
 * With an ABI 1.0 plugin (no claim), the old rule holds: when the process
 * crosses into a new slot it fires the slot's jobs only when it leads with
 * a term it already led before the slot began. A slot whose boundary falls
 * inside a failover is skipped by everyone (at most once, with gaps); the
 * misfire options are ignored.
 *
 * Jobs run with /bin/sh -c, stdin from /dev/null, and ODBC_LEADER_TERM
 * (the term they were started under), MINICRON_SLOT (the slot's start,
 * epoch seconds) and MINICRON_JOB (the job's name) in the environment.
 *
 * Each job runs in a process group of its own and is remembered, with the
 * term it was started under, until its shell is reaped (at most MAX_RUNS
 * at once; beyond that a due fire is not claimed yet, or, without claims,
 * not started). A job lives no longer than its term does here: on every
 * wake-up and after every tick, the process group of each job whose term
 * is not the one the plugin says this process leads gets SIGKILL at once.
 * The plugin's next tick is never later than the end of its trust window,
 * which ends a safety margin before the lease, so the kill comes before
 * another process can lead.
 *
 * The plugin is ticked on the schedule it asks for; the process also wakes
 * at every slot boundary and at least once a second (a wall-clock step is
 * noticed within a second). SIGTERM, SIGINT and SIGCHLD are blocked and
 * collected with sigtimedwait(), which is also the sleep: no handlers and
 * no global flags. SIGCHLD reaps finished jobs. SIGTERM and SIGINT stop:
 * every running job's group gets SIGTERM, then up to --grace seconds pass
 * (the plugin is still ticked, so the lease is renewed, and a job whose
 * term ends meanwhile is killed at once; a second SIGTERM or SIGINT cuts
 * the wait short), what is left gets SIGKILL and is reaped, and only then
 * is the plugin shut down (which resigns). Exit status 0.
 *
 * Limits: a process cannot act while it is stopped or dead. When minicron
 * itself is killed with SIGKILL (or crashes) its jobs keep running (their
 * fires stay claimed and never finished in the ledger, and are not run
 * again), and while it is stopped with SIGSTOP its jobs outlive its term
 * until it is continued; posix_spawn cannot set PR_SET_PDEATHSIG. Such
 * jobs are fenced only: they must fence what they write with
 * ODBC_LEADER_TERM, or run under `odbc-leader run`, whose supervisor stops
 * them for exactly this case. Processes a job leaves in its group after
 * its shell has exited are not tracked.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "crontab.h"
#include "leader_plugin.h"

#define MAX_SLEEP_MS 1000    /* wake at least this often */
#define DEFAULT_TICK_MS 1000 /* when a plugin leaves next_tick_ms alone */
#define SLOT_S_DEFAULT 60
#define SLOT_S_MAX 86400
#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL
#define MS_PER_S 1000LL
#define ERR_MAX 512
#define MAX_RUNS 64       /* jobs running at once */
#define GRACE_S_DEFAULT 5 /* --grace */
#define GRACE_S_MAX 86400
#define WINDOW_S_DEFAULT 300 /* --misfire-window */
#define WINDOW_S_MAX 86400
#define JOB_NAME_MAX 48 /* "cron-" 16 hex digits "-K", and the NUL */
/* finish() status of a claimed fire not started: it could not start, or
 * the term ended after the claim (80, as odbc-leader run --once records) */
#define START_FAILED 127
#define LOST_LEADERSHIP 80
#define FINISH_TRIES 5 /* finish() calls before an outcome is dropped */
#define FNV_OFFSET 14695981039346656037ULL
#define FNV_PRIME 1099511628211ULL

extern char **environ;

/* --misfire: which due fires a leader claims (ABI 1.1 plugins only). */
enum misfire {
    MISFIRE_SKIP, /* slots begun after this term was seen leading */
    MISFIRE_ONCE, /* each job's newest due slot within the window */
    MISFIRE_ALL,  /* every due slot within the window, oldest first */
};

static const char *const misfire_names[] = {"skip", "once", "all"};

/* The command line. All strings are borrowed from argv. */
struct options {
    const char *plugin;  /* -p, required */
    const char *config;  /* -c, "" when absent */
    const char *crontab; /* -f, required */
    int threshold;       /* least important syslog level printed */
    int slot_s;          /* --slot-seconds */
    int grace_s;         /* --grace */
    int misfire;         /* --misfire, an enum misfire */
    int window_s;        /* --misfire-window */
};

/* One running job: its shell, the leader of a process group of its own. */
struct job_run {
    pid_t pid;       /* the shell's pid, also the group's id */
    int64_t term;    /* the term it was started under */
    int64_t slot;    /* the slot it was started for */
    unsigned line;   /* its crontab line */
    int killed;      /* SIGKILL sent already */
    const char *job; /* its name, borrowed; NULL when not claimed */
};

/* What this process knows of one crontab line's fires. */
struct job_state {
    char name[JOB_NAME_MAX]; /* the job's name in the fire ledger */
    int64_t settled;         /* every due slot up to this one is settled here */
};

/* An outcome finish() could not record yet. */
struct pending_finish {
    const char *job; /* borrowed from a struct job_state */
    int64_t fire_ms;
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

static const char *const level_names[] = {
    "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

/* Nanoseconds on clock id. */
static int64_t clock_ns(clockid_t id) {
    struct timespec ts;

    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* The slot holding wall-clock time ns: floor(ns / slot length). */
static int64_t slot_at(const struct minicron *mc, int64_t ns) {
    int64_t len = mc->slot_s * NS_PER_S;

    return ns >= 0 ? ns / len : -((-ns + len - 1) / len);
}

/* The nominal time of slot in epoch ms: its fire_ms in the ledger. */
static int64_t slot_ms(const struct minicron *mc, int64_t slot) {
    return slot * mc->slot_s * MS_PER_S;
}

/* Writes one log line on stderr when level is important enough:
 * "minicron[PID] HH:MM:SS.mmm LEVEL: msg". msg is borrowed. */
static void emit(const struct minicron *mc, int level, const char *msg) {
    int64_t now = clock_ns(CLOCK_REALTIME);
    time_t secs = (time_t)(now / NS_PER_S);
    struct tm tm;
    char stamp[16] = "";

    if (level > mc->threshold)
        return;
    if (level < LOG_EMERG || level > LOG_DEBUG)
        level = LOG_ERR;
    if (localtime_r(&secs, &tm) != NULL)
        strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
    fprintf(stderr, "minicron[%ld] %s.%03d %s: %s\n", (long)mc->pid, stamp,
            (int)(now % NS_PER_S / NS_PER_MS), level_names[level], msg);
}

/* printf-style front end of emit(). */
__attribute__((format(printf, 3, 4))) static void
say(const struct minicron *mc, int level, const char *fmt, ...) {
    char msg[ERR_MAX + 128];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    emit(mc, level, msg);
}

/* The plugin's log callback; ctx is the struct minicron. */
static void on_log(void *ctx, int level, const char *msg) {
    emit(ctx, level, msg);
}

/* The plugin's on_change callback: one notice per change of role. */
static void on_change(void *ctx, int is_leader, int64_t term,
                      const char *leader_id) {
    if (is_leader)
        say(ctx, LOG_NOTICE, "leader, term %lld", (long long)term);
    else
        say(ctx, LOG_NOTICE, "follower (leader: %s, term %lld)",
            leader_id ? leader_id : "none", (long long)term);
}

/* The term this process leads by the plugin's word, 0 when it does not
 * lead: leadership() in one call when the plugin has it, else
 * is_leader() and term(). */
static int64_t led_term(const struct minicron *mc) {
    uint32_t valid_for_ms = 0;
    int64_t term;

    if (LEADER_PLUGIN_HAS(mc->p, leadership))
        return mc->p->leadership(mc->inst, &valid_for_ms);
    term = mc->p->term(mc->inst);
    return mc->p->is_leader(mc->inst) && term > 0 ? term : 0;
}

/* The term under which this process may run the job named name
 * (borrowed): in a group, the term of the job's shard; else the term led.
 * 0 when it may not. */
static int64_t job_term(const struct minicron *mc, const char *name) {
    if (mc->shards == 0)
        return led_term(mc);
    return mc->p->shard_leadership(mc->inst, mc->p->shard_of(mc->inst, name),
                                   NULL);
}

/* 1 when the "NAME=VALUE" strings a and b (borrowed) name the same
 * variable. */
static int same_name(const char *a, const char *b) {
    size_t n = strcspn(a, "=");

    return strncmp(a, b, n) == 0 && (b[n] == '=' || b[n] == '\0');
}

/* 1 when the environment entry e (borrowed) is replaced by one of the
 * job's own or by minicron's variables. */
static int replaced(const char *e, const struct cron_job *job) {
    if (same_name(e, "ODBC_LEADER_TERM=") || same_name(e, "MINICRON_SLOT=") ||
        same_name(e, "MINICRON_JOB="))
        return 1;
    for (size_t i = 0; i < job->n_env; i++) {
        if (same_name(e, job->env[i]))
            return 1;
    }
    return 0;
}

/*
 * Builds the environment of one run of job: minicron's own, then the
 * crontab's assignments, then the n_own strings of own. Returns a new
 * NULL-terminated array the caller frees (its strings are borrowed), or
 * NULL when out of memory.
 */
static char **job_env(const struct cron_job *job, char *const *own,
                      size_t n_own) {
    size_t n = 0, o = 0;
    char **v;

    while (environ[n] != NULL)
        n++;
    v = calloc(n + job->n_env + n_own + 1, sizeof(*v));
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (!replaced(environ[i], job))
            v[o++] = environ[i];
    }
    for (size_t i = 0; i < job->n_env; i++)
        v[o++] = job->env[i];
    for (size_t i = 0; i < n_own; i++)
        v[o++] = own[i];
    return v;
}

/*
 * Starts job (borrowed), named name (borrowed), for slot with term:
 * /bin/sh -c COMMAND, stdin from /dev/null, default signal mask and
 * dispositions, in a new process group whose id is the child's pid.
 * Returns the child's pid, or 0 after logging why it could not start.
 */
static pid_t spawn_job(const struct minicron *mc, const struct cron_job *job,
                       const char *name, int64_t slot, int64_t term) {
    char sh[] = "/bin/sh", dash_c[] = "-c";
    char term_var[48], slot_var[48], job_var[JOB_NAME_MAX + 16];
    char *argv[] = {sh, dash_c, job->command, NULL};
    char *own[] = {term_var, slot_var, job_var};
    char **envp;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, dfl;
    pid_t pid = 0;
    int rc = ENOMEM;

    snprintf(term_var, sizeof(term_var), "ODBC_LEADER_TERM=%lld",
             (long long)term);
    snprintf(slot_var, sizeof(slot_var), "MINICRON_SLOT=%lld",
             (long long)(slot * mc->slot_s));
    snprintf(job_var, sizeof(job_var), "MINICRON_JOB=%s", name);
    envp = job_env(job, own, sizeof(own) / sizeof(own[0]));
    sigemptyset(&none);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGTERM);
    sigaddset(&dfl, SIGINT);
    sigaddset(&dfl, SIGCHLD);
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &dfl);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF |
                                        POSIX_SPAWN_SETPGROUP);
    if (envp != NULL)
        rc = posix_spawn(&pid, sh, &fa, &attr, argv, envp);
    if (rc != 0) {
        say(mc, LOG_ERR, "slot %lld: line %u: cannot start: %s",
            (long long)slot, job->line, strerror(rc));
        pid = 0;
    }
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    free(envp);
    return pid;
}

/*
 * Starts job number i of the crontab for slot as leader of term and
 * remembers it in mc->runs; claimed says its fire was claimed (finish()
 * then records its end). Returns 1, or 0 after logging why when the table
 * is full or the start failed.
 */
static int start_job(struct minicron *mc, size_t i, int64_t slot, int64_t term,
                     int claimed) {
    const struct cron_job *job = &mc->tab.jobs[i];
    const char *name = mc->jobs[i].name;
    pid_t pid;

    if (mc->n_runs == MAX_RUNS) {
        say(mc, LOG_ERR, "slot %lld: line %u not started: %d jobs running",
            (long long)slot, job->line, MAX_RUNS);
        return 0;
    }
    pid = spawn_job(mc, job, name, slot, term);
    if (pid <= 0)
        return 0;
    mc->runs[mc->n_runs++] =
        (struct job_run){pid, term, slot, job->line, 0, claimed ? name : NULL};
    say(mc, LOG_INFO, "slot %lld: line %u (%s) started, pid %ld, term %lld",
        (long long)slot, job->line, name, (long)pid, (long long)term);
    return 1;
}

/* 1 when job (borrowed) is due in slot. Slot k is matched as minute k
 * since the epoch: local time with 60-second slots, UTC else. */
static int slot_due(const struct minicron *mc, const struct cron_job *job,
                    int64_t slot) {
    time_t minute = (time_t)(slot * 60);
    struct tm tm;

    if (mc->slot_s == 60)
        localtime_r(&minute, &tm);
    else
        gmtime_r(&minute, &tm);
    return crontab_due(job, &tm);
}

/* Without claims: starts every job due in slot, as leader of term. */
static void fire_slot(struct minicron *mc, int64_t slot, int64_t term) {
    int fired = 0;

    for (size_t i = 0; i < mc->tab.n_jobs; i++) {
        if (!slot_due(mc, &mc->tab.jobs[i], slot))
            continue;
        start_job(mc, i, slot, term, 0);
        fired++;
    }
    say(mc, LOG_DEBUG, "slot %lld: leader of term %lld, %d job(s) due",
        (long long)slot, (long long)term, fired);
}

/*
 * Without claims, called once on entering slot (computed before this
 * call, so the question below is asked at or after the boundary). Fires
 * the slot when this process leads with the term it was already seen
 * leading in an earlier slot: two terms never overlap, so no other process
 * can pass the same test for this slot.
 */
static void cross(struct minicron *mc, int64_t slot) {
    int64_t term = led_term(mc);

    if (term == 0) {
        say(mc, LOG_DEBUG, "slot %lld: not leader", (long long)slot);
        return;
    }
    if (term != mc->held_term || mc->held_since >= slot) {
        say(mc, LOG_INFO,
            "slot %lld: became leader (term %lld) too late "
            "for this slot, not firing",
            (long long)slot, (long long)term);
        return;
    }
    fire_slot(mc, slot, term);
}

/* Notes whether this process leads and, for a new term, in which slot it
 * was first seen (read after the question, so never too early). */
static void observe(struct minicron *mc) {
    int64_t term = led_term(mc);
    int64_t slot = slot_at(mc, clock_ns(CLOCK_REALTIME));

    if (term == 0) {
        mc->held_term = 0;
    } else if (term != mc->held_term) {
        mc->held_term = term;
        mc->held_since = slot;
    }
}

/* Calls finish() for the outcome f (copied) that failed f->tries times
 * before; keeps it to try again after the next good tick when it fails,
 * up to FINISH_TRIES calls and MAX_RUNS outcomes. */
static void finish_or_keep(struct minicron *mc, struct pending_finish f) {
    int rc = mc->p->finish(mc->inst, f.job, f.fire_ms, f.status);

    if (rc >= 0)
        return;
    f.tries++;
    if (f.tries >= FINISH_TRIES || mc->n_pending == MAX_RUNS) {
        say(mc, LOG_ERR, "finish %s at %lld (status %d): %s; not recorded",
            f.job, (long long)f.fire_ms, f.status, mc->p->strerror(rc));
        return;
    }
    say(mc, LOG_WARNING, "finish %s at %lld (status %d): %s; will retry", f.job,
        (long long)f.fire_ms, f.status, mc->p->strerror(rc));
    mc->pending[mc->n_pending++] = f;
}

/* Records status as the outcome of fire_ms of job (borrowed). */
static void record_finish(struct minicron *mc, const char *job, int64_t fire_ms,
                          int status) {
    finish_or_keep(mc, (struct pending_finish){job, fire_ms, status, 0});
}

/* Tries every pending finish() once more, in order; keeps the failures. */
static void retry_finishes(struct minicron *mc) {
    size_t n = mc->n_pending;
    struct pending_finish todo[MAX_RUNS];

    memcpy(todo, mc->pending, n * sizeof(todo[0]));
    mc->n_pending = 0;
    for (size_t i = 0; i < n; i++)
        finish_or_keep(mc, todo[i]);
}

/* Logs why claiming stopped at slot for crontab line i: not leader
 * (info), or why (the plugin's static text, or a static string of ours),
 * a warning once until a claim gets an answer. */
static void claim_stopped(struct minicron *mc, size_t i, int64_t slot, int rc,
                          const char *why) {
    if (rc == LEADER_PLUGIN_ENOTLEADER) {
        say(mc, LOG_INFO, "slot %lld: line %u (%s): not leader, claims stop",
            (long long)slot, mc->tab.jobs[i].line, mc->jobs[i].name);
        return;
    }
    if (mc->claim_err == NULL || strcmp(mc->claim_err, why) != 0)
        say(mc, LOG_WARNING, "slot %lld: line %u (%s): not claimed yet: %s",
            (long long)slot, mc->tab.jobs[i].line, mc->jobs[i].name, why);
    mc->claim_err = why;
}

/*
 * Claims the fire of crontab line i in slot for term and starts it when
 * claimed here. Returns 1 when the fire is settled (claimed here, or
 * already claimed by anyone), 0 when claiming stops for this round: the
 * run table is full, this process does not lead, or an error left the
 * outcome unknown (the fire stays due).
 */
static int claim_fire(struct minicron *mc, size_t i, int64_t slot,
                      int64_t term) {
    const char *name = mc->jobs[i].name;
    int rc;

    if (mc->n_runs == MAX_RUNS) {
        claim_stopped(mc, i, slot, 0, "too many jobs running, it waits");
        return 0;
    }
    rc = mc->p->claim(mc->inst, name, slot_ms(mc, slot));
    if (rc < 0) {
        claim_stopped(mc, i, slot, rc, mc->p->strerror(rc));
        return 0;
    }
    mc->claim_err = NULL;
    if (rc == 0) {
        say(mc, LOG_INFO, "slot %lld: line %u (%s) already claimed",
            (long long)slot, mc->tab.jobs[i].line, name);
        return 1;
    }
    if (job_term(mc, name) != term) {
        say(mc, LOG_NOTICE,
            "slot %lld: line %u (%s): term %lld ended after the claim, "
            "not started",
            (long long)slot, mc->tab.jobs[i].line, name, (long long)term);
        record_finish(mc, name, slot_ms(mc, slot), LOST_LEADERSHIP);
    } else if (!start_job(mc, i, slot, term, 1)) {
        record_finish(mc, name, slot_ms(mc, slot), START_FAILED);
    }
    return 1;
}

/*
 * --misfire once: claims the newest slot from..now_slot in which crontab
 * line i is due, if any, and settles every slot up to now_slot (older
 * missed slots are coalesced into the newest). Returns 0 when claiming
 * stops for this round, else 1.
 */
static int settle_newest(struct minicron *mc, size_t i, int64_t from,
                         int64_t now_slot, int64_t term) {
    int64_t s = now_slot;

    while (s >= from && !slot_due(mc, &mc->tab.jobs[i], s))
        s--;
    if (s >= from && !claim_fire(mc, i, s, term))
        return 0;
    mc->jobs[i].settled = now_slot;
    return 1;
}

/*
 * Settles the slots from..now_slot of crontab line i, oldest first: claims
 * each due one (--misfire all and skip). Returns 0 when claiming stops for
 * this round (the slot it stopped at stays unsettled), else 1.
 */
static int settle_all(struct minicron *mc, size_t i, int64_t from,
                      int64_t now_slot, int64_t term) {
    for (int64_t s = from; s <= now_slot; s++) {
        if (slot_due(mc, &mc->tab.jobs[i], s) && !claim_fire(mc, i, s, term))
            return 0;
        mc->jobs[i].settled = s;
    }
    return 1;
}

/* The oldest slot the misfire window reaches at wall-clock time now_ns:
 * the first to begin at most window_ns ago, never after now's slot. */
static int64_t window_start(const struct minicron *mc, int64_t now_ns) {
    int64_t now_slot = slot_at(mc, now_ns);
    int64_t first = slot_at(mc, now_ns - mc->window_ns - 1) + 1;

    return first < now_slot ? first : now_slot;
}

/*
 * With claims, on every wake-up: when this process leads (in a group: for
 * each job whose shard it leads), claims the due fires of every job not
 * settled yet, by the --misfire policy, within the misfire window (skip:
 * only slots begun after this term was first seen), and starts those it
 * claims.
 */
static void fire_due(struct minicron *mc) {
    int64_t term = led_term(mc), now = clock_ns(CLOCK_REALTIME);
    int64_t now_slot = slot_at(mc, now), lo = window_start(mc, now);

    if (mc->shards == 0 && (term == 0 || term != mc->held_term))
        return;
    if (mc->misfire == MISFIRE_SKIP && lo <= mc->held_since)
        lo = mc->held_since + 1;
    for (size_t i = 0; i < mc->tab.n_jobs; i++) {
        int64_t from = mc->jobs[i].settled + 1;
        int64_t t = mc->shards ? job_term(mc, mc->jobs[i].name) : term;
        int go;

        if (t == 0)
            continue; /* a group: another process leads its shard */
        if (from < lo)
            from = lo;
        if (mc->misfire == MISFIRE_ONCE)
            go = settle_newest(mc, i, from, now_slot, t);
        else
            go = settle_all(mc, i, from, now_slot, t);
        /* one namespace: the round stops; a group: only this job's */
        if (!go && (mc->shards == 0 || mc->n_runs == MAX_RUNS))
            break;
    }
}

/* One election step; logs a tick error when it differs from the last.
 * After a good tick, retries the finish() calls that failed. */
static void tick(struct minicron *mc) {
    uint32_t next = DEFAULT_TICK_MS;
    int rc = mc->p->tick(mc->inst, &next);

    if (rc < 0 && (mc->last_err == NULL ||
                   strcmp(mc->last_err, mc->p->strerror(rc)) != 0)) {
        mc->last_err = mc->p->strerror(rc);
        say(mc, LOG_WARNING, "tick: %s", mc->last_err);
    } else if (rc >= 0) {
        mc->last_err = NULL;
    }
    mc->next_tick_ns = clock_ns(CLOCK_MONOTONIC) + next * NS_PER_MS;
    if (rc >= 0 && mc->n_pending > 0)
        retry_finishes(mc);
}

/* Logs how the job whose shell was pid ended (status from waitpid),
 * records the outcome of its fire when it was claimed, and forgets it. */
static void reaped(struct minicron *mc, pid_t pid, int status) {
    int outcome = WIFSIGNALED(status) ? -WTERMSIG(status) : 0;

    if (WIFEXITED(status))
        outcome = WEXITSTATUS(status);
    for (size_t i = 0; i < mc->n_runs; i++) {
        struct job_run run = mc->runs[i];

        if (run.pid != pid)
            continue;
        mc->runs[i] = mc->runs[--mc->n_runs];
        if (run.job != NULL)
            record_finish(mc, run.job, slot_ms(mc, run.slot), outcome);
        break;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        say(mc, LOG_DEBUG, "pid %ld done", (long)pid);
    else if (WIFEXITED(status))
        say(mc, LOG_NOTICE, "pid %ld exited with status %d", (long)pid,
            WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        say(mc, LOG_NOTICE, "pid %ld killed by signal %d", (long)pid,
            WTERMSIG(status));
}

/* Collects every finished job without blocking. */
static void reap(struct minicron *mc) {
    int status;
    pid_t pid;

    for (pid = waitpid(-1, &status, WNOHANG); pid > 0;
         pid = waitpid(-1, &status, WNOHANG))
        reaped(mc, pid, status);
}

/* Sends sig to the process group of run (borrowed) and logs it with why
 * (borrowed). Its shell is not reaped yet, so the group id is still its. */
static void signal_run(const struct minicron *mc, const struct job_run *run,
                       int sig, const char *why) {
    say(mc, LOG_NOTICE, "slot %lld: line %u, pid %ld (term %lld): %s, %s",
        (long long)run->slot, run->line, (long)run->pid, (long long)run->term,
        why, sig == SIGKILL ? "SIGKILL" : "SIGTERM");
    if (kill(-run->pid, sig) < 0 && errno != ESRCH)
        say(mc, LOG_ERR, "kill(-%ld): %s", (long)run->pid, strerror(errno));
}

/*
 * Kills, at once, the group of every job started under a term this process
 * no longer leads: the plugin says it does not lead, or leads another
 * term (in a group: of the job's shard). Called on every wake-up and after
 * every tick.
 */
static void enforce(struct minicron *mc) {
    int64_t term = led_term(mc);

    for (size_t i = 0; i < mc->n_runs; i++) {
        struct job_run *run = &mc->runs[i];
        int64_t t = mc->shards && run->job ? job_term(mc, run->job) : term;

        if (run->killed || (t != 0 && run->term == t))
            continue;
        signal_run(mc, run, SIGKILL, "leadership of its term ended");
        run->killed = 1;
    }
}

/* Sends sig to the group of every running job not killed yet, logging
 * why (borrowed); SIGKILL marks them killed. */
static void signal_all(struct minicron *mc, int sig, const char *why) {
    for (size_t i = 0; i < mc->n_runs; i++) {
        if (mc->runs[i].killed)
            continue;
        signal_run(mc, &mc->runs[i], sig, why);
        mc->runs[i].killed = sig == SIGKILL;
    }
}

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
static void run(struct minicron *mc, const sigset_t *sigs) {
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
static void stop_jobs(struct minicron *mc, const sigset_t *sigs, int grace_s) {
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

/* dlopen()s path and returns its plugin table (static in the plugin), or
 * NULL after logging why. *dl gets the handle to dlclose(). A 1.0 table
 * (up to strerror) is enough; claim and finish are used when present. */
static const struct leader_plugin *load(const struct minicron *mc,
                                        const char *path, void **dl) {
    const struct leader_plugin *p = NULL;
    leader_plugin_entry_fn entry;
    int rc;

    /* RTLD_NODELETE: a plugin built on unixODBC must stay mapped, as the
     * driver manager keeps state in globals it never frees. */
    *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (*dl == NULL) {
        say(mc, LOG_ERR, "%s", dlerror());
        return NULL;
    }
    entry = (leader_plugin_entry_fn)dlsym(*dl, "leader_plugin_entry");
    if (entry == NULL) {
        say(mc, LOG_ERR, "%s: no leader_plugin_entry", path);
        return NULL;
    }
    rc = entry(LEADER_PLUGIN_ABI_MAJOR, &p);
    if (rc < 0 || !LEADER_PLUGIN_HAS(p, strerror)) {
        say(mc, LOG_ERR, "%s refuses plugin ABI %d (%d)", path,
            LEADER_PLUGIN_ABI_MAJOR, rc);
        return NULL;
    }
    return p;
}

/* The 64-bit FNV-1a hash of s (borrowed). */
static uint64_t fnv1a(const char *s) {
    uint64_t h = FNV_OFFSET;

    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= FNV_PRIME;
    }
    return h;
}

/*
 * Gives every crontab line its job name in mc->jobs (allocated here, owned
 * by mc): "cron-" and the FNV-1a hash of its command in 16 hex digits,
 * with "-K" for the K-th line (K >= 2) with that same command. Nothing is
 * settled yet. Returns 0, or EX_OSERR after logging when out of memory.
 */
static int name_jobs(struct minicron *mc) {
    const struct cron_job *jobs = mc->tab.jobs;

    mc->jobs = calloc(mc->tab.n_jobs + 1, sizeof(*mc->jobs));
    if (mc->jobs == NULL) {
        say(mc, LOG_ERR, "out of memory");
        return EX_OSERR;
    }
    for (size_t i = 0; i < mc->tab.n_jobs; i++) {
        struct job_state *js = &mc->jobs[i];
        unsigned k = 1;
        int n;

        for (size_t j = 0; j < i; j++)
            k += strcmp(jobs[j].command, jobs[i].command) == 0;
        n = snprintf(js->name, sizeof(js->name), "cron-%016llx",
                     (unsigned long long)fnv1a(jobs[i].command));
        if (k > 1)
            snprintf(js->name + n, sizeof(js->name) - (size_t)n, "-%u", k);
        js->settled = INT64_MIN;
        say(mc, LOG_INFO, "line %u: job %s", jobs[i].line, js->name);
    }
    return 0;
}

/* Reads the crontab file at path into mc->tab and names its jobs.
 * Returns 0 or a sysexits code after logging why. */
static int load_crontab(struct minicron *mc, const char *path) {
    char err[ERR_MAX];
    FILE *f = fopen(path, "r");
    int rc;

    if (f == NULL) {
        say(mc, LOG_ERR, "%s: %s", path, strerror(errno));
        return EX_NOINPUT;
    }
    rc = crontab_read(f, path, &mc->tab, err, sizeof(err));
    fclose(f);
    if (rc < 0) {
        say(mc, LOG_ERR, "%s", err);
        return EX_DATAERR;
    }
    say(mc, LOG_INFO, "%s: %zu job(s)", path, mc->tab.n_jobs);
    return name_jobs(mc);
}

static void usage(FILE *to) {
    fprintf(to,
            "usage: minicron -p PLUGIN.so -f CRONTAB [-c CONFIG] [-v]...\n"
            "                [--slot-seconds N] [--grace SECONDS]\n"
            "                [--misfire skip|once|all] [--misfire-window D]\n"
            "  -p, --plugin PATH     leader plugin to dlopen (required)\n"
            "  -c, --config STRING   the plugin's configuration, e.g. an ODBC\n"
            "                        connection string with Leader* keys\n"
            "  -f, --crontab FILE    jobs, in crontab format (required)\n"
            "  -v, --verbose         more log lines (-vv: debug)\n"
            "      --slot-seconds N  for tests: a \"minute\" lasts N seconds\n"
            "                        and the minute field counts slots\n"
            "                        (default 60: the wall clock's minutes)\n"
            "      --grace SECONDS   on SIGTERM or SIGINT, how long running\n"
            "                        jobs get between SIGTERM and SIGKILL\n"
            "                        (default 5); the plugin resigns after\n"
            "                        the jobs have ended\n"
            "      --misfire POLICY  fires a new leader catches up, with a\n"
            "                        plugin that claims fires (ABI 1.1):\n"
            "                        all: every due slot of the window;\n"
            "                        once: each job's newest due slot of the\n"
            "                        window (default); skip: none, only\n"
            "                        slots begun while leading\n"
            "      --misfire-window D  how far back a leader looks for due\n"
            "                        fires: seconds, or a number with s, m,\n"
            "                        h or d (default 5m, at most 1d)\n"
            "  -h, --help            this text\n"
            "Jobs run only while the plugin says this process leads, with\n"
            "ODBC_LEADER_TERM, MINICRON_SLOT and MINICRON_JOB in their\n"
            "environment; a job is killed when the term it was started under\n"
            "ends here. With claims, each (job, slot) runs at most once.\n"
            "With LeaderShards=N in the configuration (a group), each job\n"
            "runs where its shard is led, so the processes share the jobs.\n");
}

/* Reads optarg s as an integer lo..hi into *out. Returns 0, or EX_USAGE
 * after saying why (name is the option, borrowed). */
static int parse_int(const char *name, const char *s, long lo, long hi,
                     int *out) {
    char *end;
    long n;

    errno = 0;
    n = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || n < lo || n > hi) {
        fprintf(stderr, "minicron: --%s: %ld..%ld, not %s\n", name, lo, hi, s);
        return EX_USAGE;
    }
    *out = (int)n;
    return 0;
}

/* Reads the duration s ("N" seconds, or N with s, m, h or d) as seconds,
 * 0..WINDOW_S_MAX, into *out. Returns 0, or EX_USAGE after saying why. */
static int parse_window(const char *s, int *out) {
    static const char units[] = "smhd";
    static const long unit_s[] = {1, 60, 3600, 86400};
    const char *u;
    char *end;
    long n;

    errno = 0;
    n = strtol(s, &end, 10);
    u = *end != '\0' && end[1] == '\0' ? strchr(units, *end) : NULL;
    if (u != NULL && n >= 0 && n <= WINDOW_S_MAX)
        n *= unit_s[u - units];
    if (errno != 0 || end == s || (*end != '\0' && u == NULL) || n < 0 ||
        n > WINDOW_S_MAX) {
        fprintf(stderr,
                "minicron: --misfire-window: 0..%d seconds (or 0s..1d), "
                "not %s\n",
                WINDOW_S_MAX, s);
        return EX_USAGE;
    }
    *out = (int)n;
    return 0;
}

/* Reads the policy name s into *out. Returns 0, or EX_USAGE after saying
 * why. */
static int parse_misfire(const char *s, int *out) {
    for (int i = 0; i <= MISFIRE_ALL; i++) {
        if (strcmp(s, misfire_names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    fprintf(stderr, "minicron: --misfire: skip, once or all, not %s\n", s);
    return EX_USAGE;
}

/* Handles one long option without a short form (opt from getopt_long,
 * arg its argument) into *o. Returns 0 or EX_USAGE. */
static int long_option(int opt, const char *arg, struct options *o) {
    switch (opt) {
    case 'S':
        return parse_int("slot-seconds", arg, 1, SLOT_S_MAX, &o->slot_s);
    case 'G':
        return parse_int("grace", arg, 0, GRACE_S_MAX, &o->grace_s);
    case 'M':
        return parse_misfire(arg, &o->misfire);
    case 'W':
        return parse_window(arg, &o->window_s);
    }
    usage(stderr);
    return EX_USAGE;
}

/* Fills *o from the command line. Returns -1 to go on, else the exit
 * status (0 after --help). */
static int parse_options(int argc, char **argv, struct options *o) {
    static const struct option longs[] = {
        {"plugin", required_argument, NULL, 'p'},
        {"config", required_argument, NULL, 'c'},
        {"crontab", required_argument, NULL, 'f'},
        {"verbose", no_argument, NULL, 'v'},
        {"slot-seconds", required_argument, NULL, 'S'},
        {"grace", required_argument, NULL, 'G'},
        {"misfire", required_argument, NULL, 'M'},
        {"misfire-window", required_argument, NULL, 'W'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt;

    *o = (struct options){NULL,           "",
                          NULL,           LOG_NOTICE,
                          SLOT_S_DEFAULT, GRACE_S_DEFAULT,
                          MISFIRE_ONCE,   WINDOW_S_DEFAULT};
    for (opt = getopt_long(argc, argv, "p:c:f:vh", longs, NULL); opt != -1;
         opt = getopt_long(argc, argv, "p:c:f:vh", longs, NULL)) {
        switch (opt) {
        case 'p':
            o->plugin = optarg;
            break;
        case 'c':
            o->config = optarg;
            break;
        case 'f':
            o->crontab = optarg;
            break;
        case 'v':
            o->threshold += o->threshold < LOG_DEBUG;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            if (long_option(opt, optarg, o) != 0)
                return EX_USAGE;
        }
    }
    if (optind != argc || o->plugin == NULL || o->crontab == NULL) {
        usage(stderr);
        return EX_USAGE;
    }
    return -1;
}

/* Says at start what the plugin allows: claimed fires with the misfire
 * policy, or the old at-most-once rule. Sets mc->claims. */
static void announce(struct minicron *mc, const struct options *o) {
    mc->claims =
        LEADER_PLUGIN_HAS(mc->p, claim) && LEADER_PLUGIN_HAS(mc->p, finish);
    say(mc, LOG_INFO, "plugin %s %s (ABI %u.%u), %d-second slots, %d s grace",
        mc->p->name, mc->p->version, mc->p->abi_major, mc->p->abi_minor,
        mc->slot_s, o->grace_s);
    if (mc->claims)
        say(mc, LOG_INFO, "fires claimed: misfire %s, window %d s",
            misfire_names[mc->misfire], o->window_s);
    else
        say(mc, LOG_NOTICE,
            "plugin %s cannot claim fires: each slot is fired only by a "
            "process leading since before it began, --misfire ignored",
            mc->p->name);
    if (mc->shards > 0)
        say(mc, LOG_INFO,
            "a member of a group of %u shards: each job runs "
            "where its shard is led",
            (unsigned)mc->shards);
}

int main(int argc, char **argv) {
    struct options o;
    struct minicron mc = {0};
    struct leader_host host = {.struct_size = sizeof(host),
                               .ctx = &mc,
                               .log = on_log,
                               .on_change = on_change};
    char err[ERR_MAX] = "";
    void *dl = NULL;
    sigset_t sigs;
    int status = parse_options(argc, argv, &o);

    if (status >= 0)
        return status;
    mc.threshold = o.threshold;
    mc.slot_s = o.slot_s;
    mc.misfire = o.misfire;
    mc.window_ns = o.window_s * NS_PER_S;
    mc.pid = getpid();
    /* Blocked before anything else: collected by sigtimedwait() only. */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGCHLD);
    sigprocmask(SIG_BLOCK, &sigs, NULL);

    status = load_crontab(&mc, o.crontab);
    if (status != 0)
        goto out;
    status = EX_UNAVAILABLE;
    mc.p = load(&mc, o.plugin, &dl);
    if (mc.p == NULL)
        goto out;
    status = EX_CONFIG;
    if (mc.p->init(o.config, &host, &mc.inst, err, sizeof(err)) < 0) {
        say(&mc, LOG_ERR, "%s: init failed: %s", mc.p->name, err);
        goto out;
    }
    mc.shards = LEADER_PLUGIN_HAS(mc.p, shards) &&
                        LEADER_PLUGIN_HAS(mc.p, shard_of) &&
                        LEADER_PLUGIN_HAS(mc.p, shard_leadership)
                    ? mc.p->shards(mc.inst)
                    : 0;
    if (mc.shards > 0 && mc.misfire == MISFIRE_SKIP) {
        say(&mc, LOG_ERR,
            "--misfire skip: in a group of shards (LeaderShards) "
            "use once or all; skip dates from one term");
        mc.p->shutdown(mc.inst);
        goto out;
    }
    announce(&mc, &o);
    run(&mc, &sigs);
    stop_jobs(&mc, &sigs, o.grace_s); /* no job of ours outlives the term */
    mc.p->shutdown(mc.inst); /* resigns: a follower takes over at once */
    say(&mc, LOG_INFO, "stopped");
    status = 0;
out:
    if (dl != NULL)
        dlclose(dl);
    crontab_free(&mc.tab);
    free(mc.jobs);
    return status;
}
