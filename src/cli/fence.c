/* SPDX-License-Identifier: MIT */
/*
 * fence.c: "odbc-leader fence": print the dialect's fence predicate, the
 * condition a job adds to its own writes so that they apply only while its
 * term holds (docs/fencing.md). Which dialect it prints is dialect_pick.c's
 * choice, as for schema.
 */
#include <build_config.h>

#include <string.h>

#include "dialect_pick.h"
#include "fence.h"

/* fence's options. */
struct fence_opts {
    struct odbc_leader__cli_dialect_opts d; /* --dialect, --prefix */
    int bare;                               /* --bare */
};

static const char fence_help[] =
    "Usage: odbc-leader fence [OPTIONS]\n"
    "Print the predicate a job adds to its own SQL so that a write applies\n"
    "only while the job's term still holds, by the database clock\n"
    "(docs/fencing.md). Bind the namespace and the term (odbc-leader run\n"
    "gives CMD ODBC_LEADER_NAMESPACE and ODBC_LEADER_TERM).\n"
    "\n"
    "  --dialect D           sqlite, postgresql, mariadb or a dialect file\n"
    "                        (default: as for schema)\n"
    "  --prefix P            table prefix (default: LeaderTablePrefix, else\n"
    "                        odbc_leader_)\n"
    "  --bare                print only the SELECT that goes inside\n"
    "                        EXISTS ( ... ), without "
    "comments\n" ODBC_LEADER__CLI_COMMON_HELP "\n"
    "Exit status: 0; 64 usage; 69 database unavailable; 78 unknown dialect,\n"
    "a dialect without a fence (schema version 1) or bad configuration.\n"
    "\n"
    "Example:\n"
    "  odbc-leader fence --dialect postgresql\n";

/* Prints the fence of dialect d: the SELECT with "?" for its parameters
 * (fence.c checks that they are the namespace, then the term), inside
 * "AND EXISTS ( ... )" and with comments naming them unless bare.
 * Returns 0 or an exit code. */
static int print_fence(struct odbc_leader__cli *c,
                       const struct odbc_leader__dialect *d, const char *prefix,
                       int bare) {
    char err[512];
    int n = odbc_leader__fence_sql(d, NULL, 0, err, sizeof(err));

    if (n < 0) {
        odbc_leader__cli_err(c, "fence: %s", err);
        return EX_CONFIG;
    }
    if (bare) {
        printf("%s\n", d->ops[ODBC_LEADER__OP_FENCE].v[0].sql);
        return 0;
    }
    printf("-- odbc-leader %s: fence for dialect %s, table prefix %s.\n"
           "-- Add it to the WHERE clause of a job's write; the write then\n"
           "-- applies only while the term still holds, by the database "
           "clock.\n"
           "-- Parameters, in order:\n"
           "--   1. the namespace ($ODBC_LEADER_NAMESPACE under run)\n"
           "--   2. the term ($ODBC_LEADER_TERM under run)\n"
           "AND EXISTS (\n%s\n)\n",
           PACKAGE_VERSION, d->name, prefix,
           d->ops[ODBC_LEADER__OP_FENCE].v[0].sql);
    return 0;
}

/* Takes one of fence's options into the struct fence_opts ctx. Returns 0,
 * 1 when opt is none of them, or EX_USAGE after a message. */
static int fence_opt(struct odbc_leader__cli *c, void *ctx, int opt,
                     const char *arg) {
    struct fence_opts *o = ctx;
    int rc = odbc_leader__cli_dialect_opt(c, &o->d, opt, arg);

    if (rc != 1)
        return rc;
    if (opt != 'B')
        return 1;
    o->bare = 1;
    return 0;
}

static const struct odbc_leader__cli_cmdline fence_cmdline = {
    .subcmd = "fence",
    .help = fence_help,
    .opt = fence_opt,
    .longopts = {ODBC_LEADER__CLI_DIALECT_LONGOPTS,
                 {"bare", no_argument, NULL, 'B'}},
};

int odbc_leader__cli_fence(struct odbc_leader__cli *c, int argc, char **argv) {
    struct fence_opts o = {{"fence", NULL, NULL}, 0};
    struct odbc_leader__cli_dialect p;
    int rc = odbc_leader__cli_parse(c, &fence_cmdline, &o, argc, argv);

    if (rc != 0)
        return rc == ODBC_LEADER__CLI_HELP ? 0 : rc;
    rc = odbc_leader__cli_dialect_pick(c, &o.d, &p);
    if (rc == 0)
        rc = print_fence(c, p.d, p.prefix, o.bare);
    odbc_leader__cli_dialect_free(&p);
    return rc;
}
