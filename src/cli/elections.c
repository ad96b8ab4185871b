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

#include "cli.h"

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

/* Prints the table's header, in print_term's columns. */
static void print_terms_header(void) {
    printf("%-14s %-36s %-23s %-23s %-20s %s\n", "TERM", "LEADER", "STARTED",
           "ENDED", "HOW", "LASTED");
}

/* Prints one term: a JSON object, or a table row (whose header
 * odbc_leader__cli_print_rows prints first). */
static void print_term(const void *row, int json) {
    const struct odbc_leader_election *e = row;
    char started[32], ended[32], how[160], lasted[32];
    int64_t end = e->ended_at_ms != 0 ? e->ended_at_ms : e->db_now_ms;

    if (json) {
        odbc_leader__cli_election_json(stdout, e);
        putchar('\n');
        return;
    }
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

/* Takes --json or --limit into the struct odbc_leader__cli_list_opts
 * ctx. Returns 0, 1 when opt is neither, or EX_USAGE after a message. */
static int elections_opt(struct odbc_leader__cli *c, void *ctx, int opt,
                         const char *arg) {
    return odbc_leader__cli_list_opt(c, "elections", ctx, opt, arg);
}

static const struct odbc_leader__cli_cmdline elections_cmdline = {
    .subcmd = "elections",
    .help = elections_help,
    .opt = elections_opt,
    .longopts = {ODBC_LEADER__CLI_LIST_LONGOPTS},
};

/* Reads the terms of h's namespace (ctx: struct
 * odbc_leader__cli_list_opts) and prints them. Returns 0 or an exit code
 * after a message. */
static int list_terms(struct odbc_leader__cli *c, odbc_leader_t *h,
                      const void *ctx) {
    struct odbc_leader__election_list l = {NULL, 0, 0, 0};
    int rc = odbc_leader_list_elections(h, odbc_leader__cli_keep_election, &l);

    rc = odbc_leader__cli_list_read(c, h, "elections: reading the election log",
                                    rc, l.nomem);
    if (rc == 0)
        odbc_leader__cli_print_rows(l.v, l.n, sizeof(*l.v), ctx,
                                    print_terms_header, print_term);
    free(l.v);
    return rc;
}

int odbc_leader__cli_elections(struct odbc_leader__cli *c, int argc,
                               char **argv) {
    struct odbc_leader__cli_list_opts o = {0, 100};

    return odbc_leader__cli_handle_cmd(c, &elections_cmdline, &o, argc, argv,
                                       list_terms);
}
