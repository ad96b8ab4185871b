/* SPDX-License-Identifier: MIT */
/*
 * odbc-leader.c: main() of the odbc-leader command. It reads the options
 * that come before the subcommand (the connection options, --help,
 * --version) and hands the rest of argv to the subcommand: run, status,
 * resign, watch, schema, fires, jobs, elections, fence, demo or serve (the
 * other files of
 * src/cli). Exit codes are
 * those of <sysexits.h> plus the few of cli.h, all listed in --help and in
 * odbc-leader(1).
 */
#include <build_config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef int (*subcmd_fn)(struct odbc_leader__cli *c, int argc, char **argv);

struct subcmd {
    const char *name;
    subcmd_fn fn;
};

/* One command a line. */
/* clang-format off */
static const struct subcmd subcmds[] = {
    {"run", odbc_leader__cli_run},
    {"status", odbc_leader__cli_status},
    {"resign", odbc_leader__cli_resign},
    {"watch", odbc_leader__cli_watch},
    {"schema", odbc_leader__cli_schema},
    {"fires", odbc_leader__cli_fires},
    {"jobs", odbc_leader__cli_jobs},
    {"elections", odbc_leader__cli_elections},
    {"fence", odbc_leader__cli_fence},
    {"demo", odbc_leader__cli_demo},
    {"serve", odbc_leader__cli_serve},
};
/* clang-format on */

static const char help_text[] =
    "Usage: odbc-leader [OPTIONS] COMMAND [ARGS...]\n"
    "Leader election over a SQL database reached through ODBC.\n"
    "\n"
    "Commands:\n"
    "  run [--no-wait] [--min-hold D] [--once KEY] [--once-per D]\n"
    "      -- CMD [ARGS...]  run CMD only while this host leads NS (with\n"
    "                        --once: at most once per KEY, all hosts)\n"
    "  status [--json | --format=prometheus]\n"
    "                        leader, term, lease and live candidates of NS\n"
    "  resign [--to ID]      ask the leader of NS to step down (hand over)\n"
    "  watch                 print each change of leader as it happens\n"
    "  schema [--dialect D] [--apply | --upgrade | --upgrade-sql]\n"
    "                        print the tables' DDL, or create or upgrade\n"
    "                        the tables\n"
    "  fires [--job J] [--json]\n"
    "                        the fire ledger of NS: who ran what, when\n"
    "  jobs [pause|resume|trigger JOB]\n"
    "                        the jobs of NS; pause, resume or run one now\n"
    "                        on every host\n"
    "  elections [--json]    the election log of NS: who led when, and\n"
    "                        how each term ended\n"
    "  fence [--dialect D]   the predicate that fences a job's writes\n"
    "  serve [--listen ADDR:PORT]\n"
    "                        serve NS (-n, repeatable) over HTTP: metrics,\n"
    "                        health check, JSON, a page\n"
    "  demo [-c N]           watch N candidates elect, crash, take over\n"
    "\n"
    "Options (also accepted after the command):\n" ODBC_LEADER__CLI_COMMON_HELP
    "  -V, --version         print the version\n"
    "\n"
    "Connection: -C, else -d, else $ODBC_LEADER_CONNECT, else\n"
    "$ODBC_LEADER_DSN, else the SQLite file\n"
    "$XDG_STATE_HOME/odbc-leader/leader.db (~/.local/state/... by default).\n"
    "Leader* keys (LeaderTTL, LeaderId, ...) may stand in the connection\n"
    "string or the DSN. Passwords are never printed.\n"
    "\n"
    "Exit status:\n"
    "  0    success; for run: CMD's own exit status (1-255 likewise)\n"
    "  64   usage error (bad option or argument)\n"
    "  66   serve: a --tls-cert, --tls-key or --basic-auth file cannot be\n"
    "       read\n"
    "  69   database unavailable (cannot connect, statement failed,\n"
    "       tables missing)\n"
    "  70   internal error\n"
    "  71   system error (fork, out of memory); serve: cannot listen\n"
    "  73   cannot create the state directory\n"
    "  75   temporary failure: run --no-wait could not reach a decision,\n"
    "       resign --wait saw no new leader in time\n"
    "  78   configuration error (connection string key, dialect)\n"
    "  80   run: leadership was lost while CMD ran; CMD was stopped\n"
    "  81   run --no-wait: another candidate leads; CMD did not run\n"
    "  82   resign: the namespace has no leader\n"
    "  83   resign --to: that candidate is not alive\n"
    "  84   run --once: the key already ran (or runs) on some host; CMD\n"
    "       did not run\n"
    "  126  run: CMD cannot be executed; 127: CMD not found\n"
    "  128+N  run: CMD was killed by signal N, or odbc-leader was stopped\n"
    "       by signal N before CMD started\n"
    "\n"
    "Examples (docs/quickstart.md):\n"
    "  odbc-leader run -d sched -n report --once-per 1h -- "
    "/usr/local/bin/report\n"
    "  odbc-leader status -d sched -n report\n"
    "\n"
    "'odbc-leader COMMAND --help' describes each command; see also\n"
    "odbc-leader(1).\n";

/* Looks a subcommand up by name; NULL when unknown. */
static const struct subcmd *find_subcmd(const char *name) {
    for (size_t i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++) {
        if (strcmp(subcmds[i].name, name) == 0)
            return &subcmds[i];
    }
    return NULL;
}

/* Parses the options before the subcommand. Returns -1 to go on, or an
 * exit code (0 after --help or --version). */
static int parse_global(struct odbc_leader__cli *c, int argc, char **argv) {
    static const struct option opts[] = {
        ODBC_LEADER__CLI_LONGOPTS,
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int opt, rc;

    odbc_leader__cli_getopt_reset();
    for (opt = getopt_long(argc, argv, "+" ODBC_LEADER__CLI_SHORTOPTS "V", opts,
                           NULL);
         opt != -1;
         opt = getopt_long(argc, argv, "+" ODBC_LEADER__CLI_SHORTOPTS "V", opts,
                           NULL)) {
        if (opt == 'V') {
            printf("odbc-leader %s (libodbcleader %s)\n", PACKAGE_VERSION,
                   odbc_leader_version());
            return 0;
        }
        rc = odbc_leader__cli_common_opt(c, opt, optarg);
        if (rc == 0) {
            fputs("Try 'odbc-leader --help'.\n", stderr);
            return EX_USAGE;
        }
        if (rc != 1)
            return rc;
    }
    if (c->help) {
        fputs(help_text, stdout);
        return 0;
    }
    return -1;
}

int main(int argc, char **argv) {
    struct odbc_leader__cli c;
    const struct subcmd *sc;
    int rc;

    memset(&c, 0, sizeof(c));
    rc = parse_global(&c, argc, argv);
    if (rc >= 0)
        return rc;
    if (optind >= argc) {
        fputs("odbc-leader: missing command (run, status, resign, watch, "
              "schema, fires, elections, fence, demo, serve)\nTry 'odbc-leader "
              "--help'.\n",
              stderr);
        return EX_USAGE;
    }
    sc = find_subcmd(argv[optind]);
    if (sc == NULL) {
        fprintf(stderr,
                "odbc-leader: unknown command \"%s\"\n"
                "Try 'odbc-leader --help'.\n",
                argv[optind]);
        return EX_USAGE;
    }
    argc -= optind;
    argv += optind;
    odbc_leader__cli_getopt_reset();
    return sc->fn(&c, argc, argv);
}
