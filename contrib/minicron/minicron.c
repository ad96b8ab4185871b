/*
 * minicron.c: a small cron that fires its jobs only while a leader_plugin
 * says this process leads, so several copies on several hosts run each job
 * once. It is the worked example of a host of leader_plugin.h.
 *
 *   minicron -p PLUGIN.so -c CONFIG -f CRONTAB [-v] [--slot-seconds N]
 *            [--grace SECONDS]
 *
 * Time is cut into slots of N seconds (60: the minutes of the wall clock).
 * When the process crosses into a new slot it asks is_leader(); it fires
 * the jobs due in that slot only when it leads with a term it already led
 * before the slot began. So a process that becomes leader inside a slot
 * never fires that slot: whoever led at the boundary did (or, when the
 * boundary fell inside a failover, nobody does), and a killed leader's
 * slot is not fired again by its successor. Jobs run with /bin/sh -c,
 * stdin from /dev/null, and ODBC_LEADER_TERM (the term at the boundary)
 * and MINICRON_SLOT (the slot's start, epoch seconds) in the environment.
 *
 * Each job runs in a process group of its own and is remembered, with the
 * term it was started under, until its shell is reaped (at most MAX_RUNS
 * at once; beyond that a due job is not started). A job lives no longer
 * than its term does here: on every wake-up and after every tick, the
 * process group of each job whose term is not the one the plugin says this
 * process leads gets SIGKILL at once. The plugin's next tick is never
 * later than the end of its trust window, which ends a safety margin
 * before the lease, so the kill comes before another process can lead.
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
 * itself is killed with SIGKILL (or crashes) its jobs keep running, and
 * while it is stopped with SIGSTOP its jobs outlive its term until it is
 * continued; posix_spawn cannot set PR_SET_PDEATHSIG. Such jobs are fenced
 * only: they must fence what they write with ODBC_LEADER_TERM, or run under
 * `odbc-leader run`, whose supervisor stops them for exactly this case.
 * Processes a job leaves in its group after its shell has exited are not
 * tracked.
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
#define ERR_MAX 512
#define MAX_RUNS 64       /* jobs running at once */
#define GRACE_S_DEFAULT 5 /* --grace */
#define GRACE_S_MAX 86400

extern char **environ;

/* The command line. All strings are borrowed from argv. */
struct options {
    const char *plugin;  /* -p, required */
    const char *config;  /* -c, "" when absent */
    const char *crontab; /* -f, required */
    int threshold;       /* least important syslog level printed */
    int slot_s;          /* --slot-seconds */
    int grace_s;         /* --grace */
};

/* One running job: its shell, the leader of a process group of its own. */
struct job_run {
    pid_t pid;     /* the shell's pid, also the group's id */
    int64_t term;  /* the term it was started under */
    int64_t slot;  /* the slot it was started for */
    unsigned line; /* its crontab line */
    int killed;    /* SIGKILL sent already */
};

/* The host's whole state; lives in main's frame. The plugin's callbacks
 * get it as ctx. */
struct minicron {
    int threshold;
    pid_t pid;
    const struct leader_plugin *p; /* static table inside the plugin */
    void *inst;                    /* owned plugin instance */
    struct crontab tab;            /* owned */
    int slot_s;
    int64_t cur_slot;     /* the newest slot this process has entered */
    int64_t held_term;    /* term led at the last look, 0 when not leader */
    int64_t held_since;   /* the slot in which held_term was first seen */
    int64_t next_tick_ns; /* CLOCK_MONOTONIC time of the next tick */
    const char *last_err; /* plugin's static text of the last tick error */
    struct job_run runs[MAX_RUNS]; /* runs[0 .. n_runs - 1] are running */
    size_t n_runs;
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

/* 1 when the "NAME=VALUE" strings a and b (borrowed) name the same
 * variable. */
static int same_name(const char *a, const char *b) {
    size_t n = strcspn(a, "=");

    return strncmp(a, b, n) == 0 && (b[n] == '=' || b[n] == '\0');
}

/* 1 when the environment entry e (borrowed) is replaced by one of the
 * job's own or by minicron's variables. */
static int replaced(const char *e, const struct cron_job *job) {
    if (same_name(e, "ODBC_LEADER_TERM=") || same_name(e, "MINICRON_SLOT="))
        return 1;
    for (size_t i = 0; i < job->n_env; i++) {
        if (same_name(e, job->env[i]))
            return 1;
    }
    return 0;
}

/*
 * Builds the environment of one run of job: minicron's own, then the
 * crontab's assignments, then term_var and slot_var. Returns a new
 * NULL-terminated array the caller frees (its strings are borrowed), or
 * NULL when out of memory.
 */
static char **job_env(const struct cron_job *job, char *term_var,
                      char *slot_var) {
    size_t n = 0, o = 0;
    char **v;

    while (environ[n] != NULL)
        n++;
    v = calloc(n + job->n_env + 3, sizeof(*v));
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (!replaced(environ[i], job))
            v[o++] = environ[i];
    }
    for (size_t i = 0; i < job->n_env; i++)
        v[o++] = job->env[i];
    v[o++] = term_var;
    v[o++] = slot_var;
    return v;
}

/*
 * Starts job (borrowed) for slot with term: /bin/sh -c COMMAND, stdin
 * from /dev/null, default signal mask and dispositions, in a new process
 * group whose id is the child's pid. Returns the child's pid, or 0 after
 * logging why it could not start.
 */
static pid_t spawn_job(const struct minicron *mc, const struct cron_job *job,
                       int64_t slot, int64_t term) {
    char sh[] = "/bin/sh", dash_c[] = "-c", term_var[48], slot_var[48];
    char *argv[] = {sh, dash_c, job->command, NULL};
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
    envp = job_env(job, term_var, slot_var);
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

/* Starts job (borrowed) for slot as leader of term and remembers it in
 * mc->runs; logs instead when the table is full or the start failed. */
static void start_job(struct minicron *mc, const struct cron_job *job,
                      int64_t slot, int64_t term) {
    pid_t pid;

    if (mc->n_runs == MAX_RUNS) {
        say(mc, LOG_ERR, "slot %lld: line %u not started: %d jobs running",
            (long long)slot, job->line, MAX_RUNS);
        return;
    }
    pid = spawn_job(mc, job, slot, term);
    if (pid <= 0)
        return;
    mc->runs[mc->n_runs++] = (struct job_run){pid, term, slot, job->line, 0};
    say(mc, LOG_INFO, "slot %lld: line %u started, pid %ld, term %lld",
        (long long)slot, job->line, (long)pid, (long long)term);
}

/* Starts every job due in slot, as leader of term. Slot k is matched as
 * minute k since the epoch: local time with 60-second slots, UTC else. */
static void fire_slot(struct minicron *mc, int64_t slot, int64_t term) {
    time_t minute = (time_t)(slot * 60);
    struct tm tm;
    int fired = 0;

    if (mc->slot_s == 60)
        localtime_r(&minute, &tm);
    else
        gmtime_r(&minute, &tm);
    for (size_t i = 0; i < mc->tab.n_jobs; i++) {
        const struct cron_job *job = &mc->tab.jobs[i];

        if (!crontab_due(job, &tm))
            continue;
        start_job(mc, job, slot, term);
        fired++;
    }
    say(mc, LOG_DEBUG, "slot %lld: leader of term %lld, %d job(s) due",
        (long long)slot, (long long)term, fired);
}

/*
 * Called once on entering slot (computed before this call, so the
 * question below is asked at or after the boundary). Fires the slot when
 * this process leads with the term it was already seen leading in an
 * earlier slot: two terms never overlap, so no other process can pass the
 * same test for this slot.
 */
static void cross(struct minicron *mc, int64_t slot) {
    int64_t term = mc->p->term(mc->inst);
    int lead = mc->p->is_leader(mc->inst) && term > 0;

    if (!lead) {
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
    int64_t term = mc->p->term(mc->inst);
    int lead = mc->p->is_leader(mc->inst) && term > 0;
    int64_t slot = slot_at(mc, clock_ns(CLOCK_REALTIME));

    if (!lead) {
        mc->held_term = 0;
    } else if (term != mc->held_term) {
        mc->held_term = term;
        mc->held_since = slot;
    }
}

/* One election step; logs a tick error when it differs from the last. */
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
}

/* Logs how the job whose shell was pid ended (status from waitpid) and
 * forgets it. */
static void reaped(struct minicron *mc, pid_t pid, int status) {
    for (size_t i = 0; i < mc->n_runs; i++) {
        if (mc->runs[i].pid == pid) {
            mc->runs[i] = mc->runs[--mc->n_runs];
            break;
        }
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
 * no longer leads: is_leader() is false, or term() is another term. Called
 * on every wake-up and after every tick.
 */
static void enforce(struct minicron *mc) {
    int64_t term = mc->p->term(mc->inst);
    int lead = mc->p->is_leader(mc->inst) && term > 0;

    for (size_t i = 0; i < mc->n_runs; i++) {
        struct job_run *run = &mc->runs[i];

        if (run->killed || (lead && run->term == term))
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

/* The main loop: runs until SIGTERM or SIGINT. The slot the process
 * starts in is never fired. Wakes at the next tick, slot boundary or
 * MAX_SLEEP_MS, whichever is first, and at every SIGCHLD. */
static void run(struct minicron *mc, const sigset_t *sigs) {
    mc->cur_slot = slot_at(mc, clock_ns(CLOCK_REALTIME));
    mc->next_tick_ns = clock_ns(CLOCK_MONOTONIC);
    do {
        int64_t slot = slot_at(mc, clock_ns(CLOCK_REALTIME));

        enforce(mc);
        if (slot > mc->cur_slot) {
            cross(mc, slot);
            mc->cur_slot = slot;
        }
        if (clock_ns(CLOCK_MONOTONIC) >= mc->next_tick_ns)
            tick(mc);
        observe(mc);
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
 * all. No job of this process runs when it returns.
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
}

/* dlopen()s path and returns its plugin table (static in the plugin), or
 * NULL after logging why. *dl gets the handle to dlclose(). */
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
    if (rc < 0 || p == NULL || p->struct_size < sizeof(*p)) {
        say(mc, LOG_ERR, "%s refuses plugin ABI %d (%d)", path,
            LEADER_PLUGIN_ABI_MAJOR, rc);
        return NULL;
    }
    return p;
}

/* Reads the crontab file at path into mc->tab. Returns 0 or a sysexits
 * code after logging why. */
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
    return 0;
}

static void usage(FILE *to) {
    fprintf(to,
            "usage: minicron -p PLUGIN.so -f CRONTAB [-c CONFIG] [-v]...\n"
            "                [--slot-seconds N] [--grace SECONDS]\n"
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
            "  -h, --help            this text\n"
            "Jobs run only while the plugin says this process leads, with\n"
            "ODBC_LEADER_TERM and MINICRON_SLOT in their environment; a job\n"
            "is killed when the term it was started under ends here.\n");
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
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt;

    *o = (struct options){NULL,           "", NULL, LOG_NOTICE, SLOT_S_DEFAULT,
                          GRACE_S_DEFAULT};
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
        case 'S':
            if (parse_int("slot-seconds", optarg, 1, SLOT_S_MAX, &o->slot_s))
                return EX_USAGE;
            break;
        case 'G':
            if (parse_int("grace", optarg, 0, GRACE_S_MAX, &o->grace_s))
                return EX_USAGE;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return EX_USAGE;
        }
    }
    if (optind != argc || o->plugin == NULL || o->crontab == NULL) {
        usage(stderr);
        return EX_USAGE;
    }
    return -1;
}

int main(int argc, char **argv) {
    struct options o;
    struct minicron mc = {0};
    struct leader_host host = {sizeof(host), &mc, on_log, on_change};
    char err[ERR_MAX] = "";
    void *dl = NULL;
    sigset_t sigs;
    int status = parse_options(argc, argv, &o);

    if (status >= 0)
        return status;
    mc.threshold = o.threshold;
    mc.slot_s = o.slot_s;
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
    say(&mc, LOG_INFO, "plugin %s %s, %d-second slots, %d s grace", mc.p->name,
        mc.p->version, mc.slot_s, o.grace_s);
    run(&mc, &sigs);
    stop_jobs(&mc, &sigs, o.grace_s); /* no job of ours outlives the term */
    mc.p->shutdown(mc.inst); /* resigns: a follower takes over at once */
    say(&mc, LOG_INFO, "stopped");
    status = 0;
out:
    if (dl != NULL)
        dlclose(dl);
    crontab_free(&mc.tab);
    return status;
}
