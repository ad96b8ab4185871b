/* SPDX-License-Identifier: MIT */
/*
 * jobs.c: "odbc-leader jobs": the namespace's jobs as the database knows
 * them (paused or not, fires running and offered, the latest fire and
 * outcomes), an operator's durable pause, resume and run-now of one job
 * on every host (docs/lifecycle.md), and the schedules the jobs' fires are
 * recorded under, with the claims refused for another one, and their
 * deliberate change (docs/schedules.md). It does not register as a
 * candidate: the handle never ticks.
 */
#include <build_config.h>

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* What the operands ask for. */
enum jobs_action {
    JOBS_LIST,
    JOBS_PAUSE,
    JOBS_RESUME,
    JOBS_TRIGGER,
    JOBS_RESCHEDULE,
    JOBS_SCHEDULES
};

struct jobs_opts {
    struct odbc_leader__cli_list_opts list; /* --json, --limit */
    enum jobs_action action;
    const char *job;      /* pause, resume, trigger, reschedule: from argv */
    const char *schedule; /* reschedule: the new identity, or NULL */
};

static const char jobs_help[] =
    "Usage: odbc-leader jobs [OPTIONS] [pause|resume|trigger JOB]\n"
    "       odbc-leader jobs [OPTIONS] schedules\n"
    "       odbc-leader jobs [OPTIONS] reschedule JOB [SCHEDULE]\n"
    "Without an action: list the namespace's jobs (those with fires in the\n"
    "ledger or a pause record). With one, on every host at once and\n"
    "durably (no leadership needed):\n"
    "  pause JOB             the leader refuses JOB's fires (recorded as\n"
    "                        skipped) until it is resumed\n"
    "  resume JOB            JOB's fires run again from the next one\n"
    "  trigger JOB           run JOB once now, on the leader, at its next\n"
    "                        tick (prints the run-now's key)\n"
    "  schedules             list the schedule each job's fires are\n"
    "                        recorded under (expression, time zone,\n"
    "                        engine), and the claims refused because a host\n"
    "                        computed them by another (docs/schedules.md)\n"
    "  reschedule JOB [SCHEDULE]\n"
    "                        record SCHEDULE (as \"schedules\" shows it, e.g.\n"
    "                        the refused one) as JOB's from now on; without\n"
    "                        it, none: the next claim records its own\n"
    "\n"
    "  --json                one JSON object per line\n"
    "  --limit N             only the first N jobs (default 0 = all)\n"
    "" ODBC_LEADER__CLI_COMMON_HELP "\n"
    "Columns: JOB; PAUSED (since when, by whom); FIRES in the ledger;\n"
    "RUNNING; OFFERED (run-now and interrupted fires waiting for the\n"
    "leader); LAST FIRE (its latest nominal time); LAST OK and LAST FAILED\n"
    "(the latest end of a fire that succeeded, and of one that failed, was\n"
    "interrupted or abandoned), database time (UTC).\n"
    "\n"
    "A namespace that names a sharded group (-n GROUP) lists the jobs of\n"
    "all its shards, and pauses and reschedules a job in its shard; its\n"
    "jobs take no run-now.\n"
    "\n"
    "Exit status: 0; 64 usage; 69 database unavailable; 78 configuration, a\n"
    "dialect without the fire lifecycle, or a run-now of a group's job.\n"
    "\n"
    "Examples:\n"
    "  odbc-leader jobs -d sched -n report\n"
    "  odbc-leader jobs -d sched -n report pause nightly-export\n"
    "  odbc-leader jobs -d sched -n report trigger nightly-export\n"
    "  odbc-leader jobs -d sched -n report schedules\n"
    "  odbc-leader jobs -d sched -n report reschedule nightly-export\n";

/* Prints the table's header, in print_job's columns. */
static void print_jobs_header(void) {
    printf("%-24s %-8s %-6s %-7s %-7s %-23s %-23s %s\n", "JOB", "PAUSED",
           "FIRES", "RUNNING", "OFFERED", "LAST FIRE", "LAST OK",
           "LAST FAILED");
}

/* Writes ms as UTC into buf, or "-" for 0. */
static void utc_or_dash(int64_t ms, char *buf, size_t len) {
    if (ms > 0)
        odbc_leader__cli_utc(ms, buf, len);
    else
        snprintf(buf, len, "-");
}

/* Prints one job: a JSON object, or a table row. */
static void print_job(const void *row, int json) {
    const struct odbc_leader_job *j = row;
    char last[32], ok[32], bad[32];

    if (json) {
        odbc_leader__cli_job_json(stdout, j);
        putchar('\n');
        return;
    }
    utc_or_dash(j->last_fire_ms, last, sizeof(last));
    utc_or_dash(j->last_done_ms, ok, sizeof(ok));
    utc_or_dash(j->last_failed_ms, bad, sizeof(bad));
    printf("%-24s %-8s %-6" PRId64 " %-7" PRId64 " %-7" PRId64
           " %-23s %-23s %s\n",
           j->job, j->paused ? "yes" : "no", j->fires, j->running, j->offered,
           last, ok, bad);
}

/* Takes --json and --limit into the struct jobs_opts ctx. */
static int jobs_opt(struct odbc_leader__cli *c, void *ctx, int opt,
                    const char *arg) {
    struct jobs_opts *o = ctx;

    return odbc_leader__cli_list_opt(c, "jobs", &o->list, opt, arg);
}

static const struct odbc_leader__cli_cmdline jobs_cmdline = {
    .subcmd = "jobs",
    .help = jobs_help,
    .opt = jobs_opt,
    .operands = ODBC_LEADER__CLI_WORDS,
    .longopts = {ODBC_LEADER__CLI_LIST_LONGOPTS},
};

/* Reads the action from the operands argv[first..argc) into *o. Returns
 * 0 or EX_USAGE after a message. */
static int jobs_words(struct odbc_leader__cli *c, struct jobs_opts *o,
                      int first, int argc, char **argv) {
    static const char *const words[] = {"pause", "resume", "trigger",
                                        "reschedule", "schedules"};
    int n = argc - first;

    if (n == 0)
        return 0;
    for (int i = 0; i < 5; i++)
        if (strcmp(argv[first], words[i]) == 0)
            o->action = (enum jobs_action)(JOBS_PAUSE + i);
    if (o->action == JOBS_LIST)
        return odbc_leader__cli_usage(c, "jobs",
                                      "unknown action \"%s\" (pause, resume, "
                                      "trigger, schedules or reschedule)",
                                      argv[first]);
    if (o->action == JOBS_SCHEDULES)
        return n == 1 ? 0
                      : odbc_leader__cli_usage(c, "jobs",
                                               "schedules takes no JOB");
    if (o->action == JOBS_RESCHEDULE && n == 3) {
        o->schedule = argv[first + 2];
        n--;
    }
    if (n != 2)
        return odbc_leader__cli_usage(
            c, "jobs", "%s needs one JOB%s", argv[first],
            o->action == JOBS_RESCHEDULE ? " (and at most one SCHEDULE)" : "");
    return odbc_leader__cli_name_arg(c, "jobs", "JOB", argv[first + 1],
                                     &o->job);
}

static void print_refusals(odbc_leader_t *h) {
    struct odbc_leader__schedule_list l = {NULL, 0, 0, 0};

    if (odbc_leader_list_schedules(h, odbc_leader__cli_keep_schedule, &l) > 0)
        for (size_t i = 0; i < l.n; i++)
            if (l.v[i].refusals > 0)
                printf("%s: %" PRId64 " claim(s) refused: computed as \"%s\" "
                       "by %s, recorded as \"%s\" (odbc-leader jobs -n %s "
                       "schedules)\n",
                       l.v[i].job, l.v[i].refusals, l.v[i].refused,
                       l.v[i].refused_by, l.v[i].schedule,
                       odbc_leader_namespace(h));
    free(l.v);
}

static void print_schedules_header(void) {
    printf("%-24s %-8s %-23s %s\n", "JOB", "REFUSED", "SINCE", "SCHEDULE");
}

/* Prints one schedule: a JSON object, or a table row (and the refused
 * identity under it). */
static void print_schedule(const void *row, int json) {
    const struct odbc_leader_schedule *s = row;
    char since[32], at[32];

    utc_or_dash(s->since_ms, since, sizeof(since));
    utc_or_dash(s->refused_at_ms, at, sizeof(at));
    if (json) {
        fputs("{\"job\":", stdout);
        odbc_leader__cli_json_string(stdout, s->job);
        fputs(",\"schedule\":", stdout);
        odbc_leader__cli_json_or_null(stdout, s->schedule);
        printf(",\"since_ms\":%" PRId64 ",\"since_by\":", s->since_ms);
        odbc_leader__cli_json_or_null(stdout, s->since_by);
        printf(",\"refusals\":%" PRId64 ",\"refused\":", s->refusals);
        odbc_leader__cli_json_or_null(stdout, s->refused);
        printf(",\"refused_at_ms\":%" PRId64 ",\"refused_by\":",
               s->refused_at_ms);
        odbc_leader__cli_json_or_null(stdout, s->refused_by);
        puts("}");
        return;
    }
    printf("%-24s %-8" PRId64 " %-23s %s%s%s\n", s->job, s->refusals, since,
           s->schedule[0] != '\0' ? s->schedule
                                  : "(none: the next claim "
                                    "records its own)",
           s->since_by[0] != '\0' ? " -- recorded by " : "", s->since_by);
    if (s->refusals > 0)
        printf("%-24s refused: %s -- computed by %s, latest at %s\n", "",
               s->refused, s->refused_by, at);
}

/* Lists h's schedules as *o says. Returns 0 or an exit code after a
 * message. */
static int list_schedules(struct odbc_leader__cli *c, odbc_leader_t *h,
                          const struct jobs_opts *o) {
    struct odbc_leader__schedule_list l = {NULL, 0, 0, 0};
    int rc = odbc_leader_list_schedules(h, odbc_leader__cli_keep_schedule, &l);

    rc = odbc_leader__cli_list_read(c, h, "jobs: reading the schedules", rc,
                                    l.nomem);
    if (rc == 0 && l.n > 0)
        odbc_leader__cli_print_rows(l.v, l.n, sizeof(*l.v), &o->list,
                                    print_schedules_header, print_schedule);
    else if (rc == 0 && !o->list.json)
        printf("%s: no job has a recorded schedule yet\n",
               odbc_leader_namespace(h));
    free(l.v);
    return rc;
}

/* Under the jobs table: a line for each job whose claims were refused for
 * another schedule (a failure to read them is not the table's). */
static void print_refusals(odbc_leader_t *h);

/* Lists h's jobs as *o says. Returns 0 or an exit code after a message. */
static int list_jobs(struct odbc_leader__cli *c, odbc_leader_t *h,
                     const struct jobs_opts *o) {
    struct odbc_leader__job_list l = {NULL, 0, 0, 0};
    int rc = odbc_leader_list_jobs(h, odbc_leader__cli_keep_job, &l);

    rc =
        odbc_leader__cli_list_read(c, h, "jobs: reading the jobs", rc, l.nomem);
    if (rc == 0 && l.n > 0)
        odbc_leader__cli_print_rows(l.v, l.n, sizeof(*l.v), &o->list,
                                    print_jobs_header, print_job);
    else if (rc == 0 && !o->list.json)
        printf("%s: no jobs yet\n", odbc_leader_namespace(h));
    if (rc == 0 && !o->list.json)
        print_refusals(h);
    free(l.v);
    return rc;
}

/* Runs what the struct jobs_opts ctx asks for on h. Returns the exit
 * code. */
static int jobs_act(struct odbc_leader__cli *c, odbc_leader_t *h,
                    const void *ctx) {
    const struct jobs_opts *o = ctx;
    const char *ns = odbc_leader_namespace(h);
    int64_t key = 0;
    int rc = 0;

    switch (o->action) {
    case JOBS_LIST:
        return list_jobs(c, h, o);
    case JOBS_SCHEDULES:
        return list_schedules(c, h, o);
    case JOBS_RESCHEDULE:
        rc = odbc_leader_reschedule_job(h, o->job, o->schedule);
        if (rc == 0 && o->schedule != NULL)
            printf("%s: %s's fires are recorded as \"%s\" from now on\n", ns,
                   o->job, o->schedule);
        else if (rc == 0)
            printf("%s: %s has no recorded schedule: its next claim records "
                   "its own\n",
                   ns, o->job);
        break;
    case JOBS_PAUSE:
    case JOBS_RESUME:
        rc = odbc_leader_pause_job(h, o->job, o->action == JOBS_PAUSE);
        if (rc == 0)
            printf("%s: %s %s on every host\n", ns, o->job,
                   o->action == JOBS_PAUSE ? "paused" : "resumed");
        break;
    case JOBS_TRIGGER:
        rc = odbc_leader_trigger_job(h, o->job, &key);
        if (rc == 0)
            printf("%s: run-now of %s asked (key %" PRId64
                   "): the leader runs it at its next tick\n",
                   ns, o->job, key);
        break;
    }
    if (rc < 0)
        odbc_leader__cli_err(c, "jobs: %s", odbc_leader_strerror(rc));
    return odbc_leader__cli_exit_code(rc);
}

int odbc_leader__cli_jobs(struct odbc_leader__cli *c, int argc, char **argv) {
    struct jobs_opts o = {{0, 0}, JOBS_LIST, NULL, NULL};
    odbc_leader_t *h = NULL;
    int rc = odbc_leader__cli_parse(c, &jobs_cmdline, &o, argc, argv);

    if (rc != 0)
        return rc == ODBC_LEADER__CLI_HELP ? 0 : rc;
    rc = jobs_words(c, &o, optind, argc, argv);
    if (rc == 0)
        rc = odbc_leader__cli_open(c, NULL, NULL, &h);
    if (rc == 0)
        rc = jobs_act(c, h, &o);
    odbc_leader_destroy(h);
    return rc;
}
