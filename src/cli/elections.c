/* SPDX-License-Identifier: MIT */
/*
 * elections.c: "odbc-leader elections": lists the namespace's election log
 * (one row per term: who won it, when, and how the term ended: resigned,
 * asked to resign, handed over, expired or quarantined), as a table or as
 * JSON. Times are the database's, in UTC.
 */
#include <build_config.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct elections_opts {
    int json;   /* --json */
    long limit; /* --limit: the newest N terms; 0 = all */
};

static const char elections_help[] =
    "Usage: odbc-leader elections [OPTIONS]\n"
    "List the namespace's election log: every term, oldest first, who won\n"
    "it, when, and how it ended (\"who led when\"). The winner writes a\n"
    "term's row as it wins; its resignation or the next takeover ends it.\n"
    "\n"
    "  --json                one JSON object per line\n"
    "  --limit N             only the newest N terms (default 100; 0 = all)\n"
    "" ODBC_LEADER__CLI_COMMON_HELP "\n"
    "Columns: TERM; LEADER, the candidate that won it; STARTED and ENDED,\n"
    "database time (UTC; \"-\" while the term holds); HOW it ended:\n"
    "resigned (it resigned or shut down), requested (it resigned when\n"
    "asked: odbc-leader resign), handover:ID (asked to hand over to ID),\n"
    "expired (its lease ran out: killed, paused or cut off; ENDED is the\n"
    "lease's expiry), quarantined (the database moved to a new epoch);\n"
    "LASTED. A sharded group's shards have no log.\n"
    "\n"
    "Exit status: 0; 64 usage; 69 database unavailable; 78 configuration or\n"
    "a dialect without an election log.\n"
    "\n"
    "Examples:\n"
    "  odbc-leader elections -d sched -n report\n"
    "  odbc-leader elections -d sched -n report --json --limit 10\n";

/* Prints one term as a table row. */
static void print_row(const struct odbc_leader_election *e) {
    char started[32], ended[32], how[160], lasted[32];
    int64_t end = e->ended_at_ms != 0 ? e->ended_at_ms : e->db_now_ms;

    odbc_leader__cli_utc(e->started_at_ms, started, sizeof(started));
    if (e->ended_at_ms != 0)
        odbc_leader__cli_utc(e->ended_at_ms, ended, sizeof(ended));
    else
        snprintf(ended, sizeof(ended), "-");
    if (e->ended_how[0] == '\0')
        snprintf(how, sizeof(how), "leads");
    else if (e->handed_to[0] != '\0')
        snprintf(how, sizeof(how), "%s:%s", e->ended_how, e->handed_to);
    else
        snprintf(how, sizeof(how), "%s", e->ended_how);
    snprintf(lasted, sizeof(lasted), "%.3f s%s",
             (double)(end - e->started_at_ms) / 1000.0,
             e->ended_at_ms != 0 ? "" : "+");
    printf("%-14" PRId64 " %-36s %-23s %-23s %-20s %s\n", e->term, e->leader_id,
           started, ended, how, lasted);
}

/* Takes one of elections' options into the struct elections_opts ctx.
 * Returns 0 or EX_USAGE after a message. */
static int elections_opt(struct odbc_leader__cli *c, void *ctx, int opt,
                         const char *arg) {
    struct elections_opts *o = ctx;
    char *end;

    if (opt == 'j') {
        o->json = 1;
        return 0;
    }
    if (opt != 'L')
        return odbc_leader__cli_usage(c, "elections", NULL);
    o->limit = strtol(arg, &end, 10);
    if (end == arg || *end != '\0' || o->limit < 0)
        return odbc_leader__cli_usage(c, "elections", "invalid --limit \"%s\"",
                                      arg);
    return 0;
}

/* Parses the options. Returns 0, ODBC_LEADER__CLI_HELP or EX_USAGE. */
static int parse_elections(struct odbc_leader__cli *c, int argc, char **argv,
                           struct elections_opts *o) {
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"limit", required_argument, NULL, 'L'},
        {NULL, 0, NULL, 0},
    };
    const struct odbc_leader__cli_cmdline cl = {
        .subcmd = "elections",
        .help = elections_help,
        .longopts = opts,
        .opt = elections_opt,
        .ctx = o,
        .operands = ODBC_LEADER__CLI_NO_OPERANDS,
    };

    return odbc_leader__cli_parse(c, &cl, argc, argv);
}

int odbc_leader__cli_elections(struct odbc_leader__cli *c, int argc,
                               char **argv) {
    struct elections_opts o = {0, 100};
    struct odbc_leader__election_list l = {NULL, 0, 0, 0};
    odbc_leader_t *h = NULL;
    size_t first = 0;
    int rc = parse_elections(c, argc, argv, &o);

    if (rc != 0)
        return rc == ODBC_LEADER__CLI_HELP ? 0 : rc;
    rc = odbc_leader__cli_open(c, NULL, NULL, &h);
    if (rc != 0)
        return rc;
    rc = odbc_leader_list_elections(h, odbc_leader__cli_keep_election, &l);
    if (rc < 0) {
        odbc_leader__cli_err(c,
                             "elections: reading the election log of %s "
                             "failed: %s",
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
        printf("%-14s %-36s %-23s %-23s %-20s %s\n", "TERM", "LEADER",
               "STARTED", "ENDED", "HOW", "LASTED");
    for (size_t i = first; i < l.n; i++) {
        if (o.json) {
            odbc_leader__cli_election_json(stdout, &l.v[i]);
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
