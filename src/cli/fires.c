/* SPDX-License-Identifier: MIT */
/*
 * fires.c: "odbc-leader fires": lists the namespace's fire ledger (what
 * odbc_leader_claim() recorded: each fire of each job, the term and the
 * candidate that claimed it, when it started and finished, its status and
 * duration), as a table or as JSON. Times are the database's, in UTC.
 */
#include <build_config.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct fires_opts {
    const char *job;                        /* --job, borrowed; NULL = all */
    struct odbc_leader__cli_list_opts list; /* --json, --limit */
};

static const char fires_help[] =
    "Usage: odbc-leader fires [OPTIONS]\n"
    "List the namespace's fire ledger: every fire claimed through the\n"
    "library, the plugin (minicron) or run --once, oldest first.\n"
    "\n"
    "  --job J               only the fires of job J\n"
    "  --json                one JSON object per line\n"
    "  --limit N             only the newest N fires (default 100; 0 = all)\n"
    "" ODBC_LEADER__CLI_COMMON_HELP "\n"
    "Columns: JOB; FIRE, the nominal time the host named (\"once\" for a\n"
    "one-off key of run --once); TERM that claimed it; WHO, the candidate;\n"
    "STARTED and FINISHED, database time (UTC); STATUS (0 ok, the exit\n"
    "status, -N killed by signal N; else the fire's state: running,\n"
    "interrupted (its term ended first), abandoned (its last attempt was\n"
    "interrupted), skipped (its job was paused), pending (a run-now not\n"
    "started yet)); TRY, the attempt and the attempts its job allows;\n"
    "DURATION. A run-now's FIRE is when it was asked.\n"
    "\n"
    "Exit status: 0; 64 usage; 69 database unavailable; 78 configuration or\n"
    "a dialect without a fire ledger.\n"
    "\n"
    "Examples:\n"
    "  odbc-leader fires -d sched -n report\n"
    "  odbc-leader fires -d sched -n report --job report --json\n";

/* Prints the table's header, in print_fire's columns. */
static void print_fires_header(void) {
    printf("%-20s %-23s %-14s %-36s %-23s %-23s %-11s %-5s %s\n", "JOB", "FIRE",
           "TERM", "WHO", "STARTED", "FINISHED", "STATUS", "TRY", "DURATION");
}

/* Prints one fire: a JSON object, or a table row (whose header
 * odbc_leader__cli_print_rows prints first). */
static void print_fire(const void *row, int json) {
    const struct odbc_leader_fire *f = row;
    const char *state = odbc_leader__cli_fire_state(f);
    char fire[32], started[32], finished[32], status[16], dur[32], try[16];

    if (json) {
        odbc_leader__cli_fire_json(stdout, f);
        putchar('\n');
        return;
    }
    if (f->fire_ms == 0)
        snprintf(fire, sizeof(fire), "once");
    else if (f->fire_ms < 0) /* a run-now: when it was asked */
        odbc_leader__cli_utc(-f->fire_ms, fire, sizeof(fire));
    else
        odbc_leader__cli_utc(f->fire_ms, fire, sizeof(fire));
    odbc_leader__cli_utc(f->claimed_at_ms, started, sizeof(started));
    if (strcmp(state, "done") == 0 || strcmp(state, "failed") == 0)
        snprintf(status, sizeof(status), "%d", f->status);
    else
        snprintf(status, sizeof(status), "%s", state);
    snprintf(try, sizeof(try), "%d/%d", f->attempt, f->max_attempts);
    if (f->finished_at_ms != 0) {
        odbc_leader__cli_utc(f->finished_at_ms, finished, sizeof(finished));
        snprintf(dur, sizeof(dur), "%.3f s",
                 (double)(f->finished_at_ms - f->claimed_at_ms) / 1000.0);
    } else {
        snprintf(finished, sizeof(finished), "-");
        snprintf(dur, sizeof(dur), "%.3f s+",
                 (double)(f->db_now_ms - f->claimed_at_ms) / 1000.0);
    }
    printf("%-20s %-23s %-14" PRId64 " %-36s %-23s %-23s %-11s %-5s %s\n",
           f->job, fire, f->term, f->claimed_by, started, finished, status, try,
           dur);
}

/* Takes one of fires' options into the struct fires_opts ctx. Returns 0,
 * 1 when opt is none of them, or EX_USAGE after a message. */
static int fires_opt(struct odbc_leader__cli *c, void *ctx, int opt,
                     const char *arg) {
    struct fires_opts *o = ctx;

    if (opt == 'J')
        return odbc_leader__cli_name_arg(c, "fires", "--job", arg, &o->job);
    return odbc_leader__cli_list_opt(c, "fires", &o->list, opt, arg);
}

static const struct odbc_leader__cli_cmdline fires_cmdline = {
    .subcmd = "fires",
    .help = fires_help,
    .opt = fires_opt,
    .longopts = {{"job", required_argument, NULL, 'J'},
                 ODBC_LEADER__CLI_LIST_LONGOPTS},
};

/* Reads the fires of h's namespace (ctx: struct fires_opts) and prints
 * them. Returns 0 or an exit code after a message. */
static int list_fires(struct odbc_leader__cli *c, odbc_leader_t *h,
                      const void *ctx) {
    const struct fires_opts *o = ctx;
    struct odbc_leader__fire_list l = {NULL, 0, 0, 0};
    int rc = odbc_leader_list_fires(h, o->job, odbc_leader__cli_keep_fire, &l);

    rc = odbc_leader__cli_list_read(c, h, "fires: reading the ledger", rc,
                                    l.nomem);
    if (rc == 0)
        odbc_leader__cli_print_rows(l.v, l.n, sizeof(*l.v), &o->list,
                                    print_fires_header, print_fire);
    free(l.v);
    return rc;
}

int odbc_leader__cli_fires(struct odbc_leader__cli *c, int argc, char **argv) {
    struct fires_opts o = {NULL, {0, 100}};

    return odbc_leader__cli_handle_cmd(c, &fires_cmdline, &o, argc, argv,
                                       list_fires);
}
