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
#include <time.h>

#include "cli.h"
#include "config.h"

struct fires_opts {
    const char *job; /* --job, borrowed; NULL = every job */
    int json;        /* --json */
    long limit;      /* --limit: the newest N fires; 0 = all */
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
    "status, -N killed by signal N; \"running\" while unfinished: running,\n"
    "or its claimant died); DURATION.\n"
    "\n"
    "Exit status: 0; 64 usage; 69 database unavailable; 78 configuration or\n"
    "a dialect without a fire ledger.\n"
    "\n"
    "Examples:\n"
    "  odbc-leader fires -d sched -n report\n"
    "  odbc-leader fires -d sched -n report --job report --json\n";

/* Prints one fire as a table row. */
static void print_row(const struct odbc_leader_fire *f) {
    char fire[32], started[32], finished[32], status[16], dur[32];

    if (f->fire_ms == 0)
        snprintf(fire, sizeof(fire), "once");
    else
        odbc_leader__cli_utc(f->fire_ms, fire, sizeof(fire));
    odbc_leader__cli_utc(f->claimed_at_ms, started, sizeof(started));
    if (f->finished_at_ms != 0) {
        odbc_leader__cli_utc(f->finished_at_ms, finished, sizeof(finished));
        snprintf(status, sizeof(status), "%d", f->status);
        snprintf(dur, sizeof(dur), "%.3f s",
                 (double)(f->finished_at_ms - f->claimed_at_ms) / 1000.0);
    } else {
        snprintf(finished, sizeof(finished), "-");
        snprintf(status, sizeof(status), "running");
        snprintf(dur, sizeof(dur), "%.3f s+",
                 (double)(f->db_now_ms - f->claimed_at_ms) / 1000.0);
    }
    printf("%-20s %-23s %-14" PRId64 " %-36s %-23s %-23s %-7s %s\n", f->job,
           fire, f->term, f->claimed_by, started, finished, status, dur);
}

/* Takes one of fires' options into the struct fires_opts ctx. Returns 0
 * or EX_USAGE after a message. */
static int fires_opt(struct odbc_leader__cli *c, void *ctx, int opt,
                     const char *arg) {
    struct fires_opts *o = ctx;
    char *end;

    if (opt == 'J' && !odbc_leader__valid_name(arg))
        return odbc_leader__cli_usage(c, "fires",
                                      "invalid --job \"%s\": 1-128 bytes "
                                      "of A-Z a-z 0-9 . _ - : / @",
                                      arg);
    if (opt == 'J') {
        o->job = arg;
    } else if (opt == 'j') {
        o->json = 1;
    } else if (opt == 'L') {
        o->limit = strtol(arg, &end, 10);
        if (end == arg || *end != '\0' || o->limit < 0)
            return odbc_leader__cli_usage(c, "fires", "invalid --limit \"%s\"",
                                          arg);
    } else {
        return odbc_leader__cli_usage(c, "fires", NULL);
    }
    return 0;
}

/* Parses the options. Returns 0, ODBC_LEADER__CLI_HELP or EX_USAGE. */
static int parse_fires(struct odbc_leader__cli *c, int argc, char **argv,
                       struct fires_opts *o) {
    static const struct option opts[] = {
        {"job", required_argument, NULL, 'J'},
        {"json", no_argument, NULL, 'j'},
        {"limit", required_argument, NULL, 'L'},
        {NULL, 0, NULL, 0},
    };
    const struct odbc_leader__cli_cmdline cl = {
        .subcmd = "fires",
        .help = fires_help,
        .longopts = opts,
        .opt = fires_opt,
        .ctx = o,
        .operands = ODBC_LEADER__CLI_NO_OPERANDS,
    };

    return odbc_leader__cli_parse(c, &cl, argc, argv);
}

int odbc_leader__cli_fires(struct odbc_leader__cli *c, int argc, char **argv) {
    struct fires_opts o = {NULL, 0, 100};
    struct odbc_leader__fire_list l = {NULL, 0, 0, 0};
    odbc_leader_t *h = NULL;
    size_t first = 0;
    int rc = parse_fires(c, argc, argv, &o);

    if (rc != 0)
        return rc == ODBC_LEADER__CLI_HELP ? 0 : rc;
    rc = odbc_leader__cli_open(c, NULL, NULL, &h);
    if (rc != 0)
        return rc;
    rc = odbc_leader_list_fires(h, o.job, odbc_leader__cli_keep_fire, &l);
    if (rc < 0) {
        odbc_leader__cli_err(c, "fires: reading the ledger of %s failed: %s",
                             odbc_leader_namespace(h),
                             odbc_leader_strerror(rc));
        rc = odbc_leader__cli_exit_code(rc);
        goto out;
    }
    rc = 0;
    if (l.nomem) {
        odbc_leader__cli_err(c, "out of memory");
        rc = EX_OSERR;
        goto out;
    }
    if (o.limit > 0 && l.n > (size_t)o.limit)
        first = l.n - (size_t)o.limit;
    if (!o.json)
        printf("%-20s %-23s %-14s %-36s %-23s %-23s %-7s %s\n", "JOB", "FIRE",
               "TERM", "WHO", "STARTED", "FINISHED", "STATUS", "DURATION");
    for (size_t i = first; i < l.n; i++) {
        if (o.json) {
            odbc_leader__cli_fire_json(stdout, &l.v[i]);
            putchar('\n');
        } else {
            print_row(&l.v[i]);
        }
    }
out:
    free(l.v);
    odbc_leader_destroy(h);
    return rc;
}
