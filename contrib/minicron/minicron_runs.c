/* SPDX-License-Identifier: MIT */
/*
 * minicron_runs.c: the running jobs. Each starts as /bin/sh -c in a
 * process group of its own, with its environment (ODBC_LEADER_TERM,
 * ODBC_LEADER_FIRE_MS, MINICRON_SLOT, MINICRON_JOB), and is remembered
 * with its term until its
 * shell is reaped; a job whose term this process no longer leads is
 * killed, and at shutdown every job's group is signalled.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>

#include "minicron.h"

extern char **environ;

/* 1 when the "NAME=VALUE" strings a and b (borrowed) name the same
 * variable. */
static int same_name(const char *a, const char *b) {
    size_t n = strcspn(a, "=");

    return strncmp(a, b, n) == 0 && (b[n] == '=' || b[n] == '\0');
}

/* 1 when the environment entry e (borrowed) is replaced by one of the
 * job's own or by minicron's variables. */
static int replaced(const char *e, const struct cron_job *job) {
    if (same_name(e, "ODBC_LEADER_TERM=") ||
        same_name(e, "ODBC_LEADER_FIRE_MS=") ||
        same_name(e, "MINICRON_SLOT=") || same_name(e, "MINICRON_JOB="))
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
 * Starts job (borrowed), named name (borrowed), for slot and the fire
 * fire_ms (ODBC_LEADER_FIRE_MS) with term:
 * /bin/sh -c COMMAND, stdin from /dev/null, default signal mask and
 * dispositions, in a new process group whose id is the child's pid.
 * Returns the child's pid, or 0 after logging why it could not start.
 */
static pid_t spawn_job(const struct minicron *mc, const struct cron_job *job,
                       const char *name, int64_t slot, int64_t fire_ms,
                       int64_t term) {
    char sh[] = "/bin/sh", dash_c[] = "-c";
    char term_var[48], fire_var[48], slot_var[48], job_var[JOB_NAME_MAX + 16];
    char *argv[] = {sh, dash_c, job->command, NULL};
    char *own[] = {term_var, fire_var, slot_var, job_var};
    char **envp;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, dfl;
    pid_t pid = 0;
    int rc = ENOMEM;

    snprintf(term_var, sizeof(term_var), "ODBC_LEADER_TERM=%lld",
             (long long)term);
    snprintf(fire_var, sizeof(fire_var), "ODBC_LEADER_FIRE_MS=%lld",
             (long long)fire_ms);
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
 * Starts job number i of the crontab for slot (its fire fire_ms: the
 * slot's start, or a run-now's key) as leader of term and remembers it in
 * mc->runs; claimed says its fire was claimed (finish() then records its
 * end). Returns 1, or 0 after logging why when the table is full or the
 * start failed.
 */
int start_job(struct minicron *mc, size_t i, int64_t slot, int64_t fire_ms,
              int64_t term, int claimed) {
    const struct cron_job *job = &mc->tab.jobs[i];
    const char *name = mc->jobs[i].name;
    pid_t pid;

    if (mc->n_runs == MAX_RUNS) {
        say(mc, LOG_ERR, "slot %lld: line %u not started: %d jobs running",
            (long long)slot, job->line, MAX_RUNS);
        return 0;
    }
    pid = spawn_job(mc, job, name, slot, fire_ms, term);
    if (pid <= 0)
        return 0;
    mc->runs[mc->n_runs++] = (struct job_run){
        pid, term, slot, fire_ms, job->line, 0, claimed ? name : NULL};
    say(mc, LOG_INFO, "slot %lld: line %u (%s) started, pid %ld, term %lld",
        (long long)slot, job->line, name, (long)pid, (long long)term);
    return 1;
}

/* Logs how the job whose shell was pid ended (status from waitpid),
 * records the outcome of its fire when it was claimed, and forgets it. */
void reaped(struct minicron *mc, pid_t pid, int status) {
    int outcome = WIFSIGNALED(status) ? -WTERMSIG(status) : 0;

    if (WIFEXITED(status))
        outcome = WEXITSTATUS(status);
    for (size_t i = 0; i < mc->n_runs; i++) {
        struct job_run run = mc->runs[i];

        if (run.pid != pid)
            continue;
        mc->runs[i] = mc->runs[--mc->n_runs];
        if (run.job != NULL)
            record_finish(mc, run.job, run.fire_ms, run.term, outcome);
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
void reap(struct minicron *mc) {
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
void enforce(struct minicron *mc) {
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
void signal_all(struct minicron *mc, int sig, const char *why) {
    for (size_t i = 0; i < mc->n_runs; i++) {
        if (mc->runs[i].killed)
            continue;
        signal_run(mc, &mc->runs[i], sig, why);
        mc->runs[i].killed = sig == SIGKILL;
    }
}
