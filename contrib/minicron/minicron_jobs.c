/* SPDX-License-Identifier: MIT */
/*
 * minicron_jobs.c: the crontab file read at start (crontab.c parses it),
 * the names its jobs go by in the fire ledger ("cron-" and the FNV-1a
 * hash of the command, "-K" for the K-th line with the same command), and
 * the schedule identity each job's claims carry (docs/schedules.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sysexits.h>

#include "minicron.h"

#define FNV_OFFSET 14695981039346656037ULL
#define FNV_PRIME 1099511628211ULL

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
int load_crontab(struct minicron *mc, const char *path) {
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

/* The engine part of minicron's schedule identity: how it turns a
 * crontab line into nominal times. With 60-second slots, every local
 * minute is matched (localtime_r): a time in a spring-forward gap never
 * comes (skipped), one in the autumn's repeated hour comes twice. With
 * shorter slots (a test's scaled time), slot k is minute k of UTC. */
static void engine_of(const struct minicron *mc, char *out, size_t len) {
    if (mc->slot_s == 60)
        snprintf(out, len, "minicron (DST gap: skipped; overlap: twice)");
    else
        snprintf(out, len, "minicron (%d-second slots as UTC minutes)",
                 mc->slot_s);
}

/* Says each job's schedule identity to the plugin (ABI 1.6), so that a
 * host computing a job's fires otherwise (another time zone) has its
 * claims refused: "cron FIELDS" in the host's zone (60-second slots) or
 * UTC. Returns 0 (also for an older plugin, which cannot check), or
 * EX_CONFIG after logging why (the host's zone has no IANA name). */
int declare_schedules(struct minicron *mc) {
    char expr[160], engine[96], err[ERR_MAX];
    const char *tz = mc->slot_s == 60 ? NULL : "UTC";

    if (!LEADER_PLUGIN_HAS(mc->p, set_schedule))
        return 0;
    engine_of(mc, engine, sizeof(engine));
    for (size_t i = 0; i < mc->tab.n_jobs; i++) {
        snprintf(expr, sizeof(expr), "cron %s", mc->tab.jobs[i].spec);
        if (mc->p->set_schedule(mc->inst, mc->jobs[i].name, expr, tz, engine) ==
            0)
            continue;
        mc->p->last_error(mc->inst, NULL, NULL, NULL, err, sizeof(err));
        say(mc, LOG_ERR, "line %u (%s): schedule: %s", mc->tab.jobs[i].line,
            mc->jobs[i].name, err);
        return EX_CONFIG;
    }
    return 0;
}
