/* SPDX-License-Identifier: MIT */
/*
 * schema.c: "odbc-leader schema": print the DDL of a dialect with the
 * table prefix expanded and the schema version written in, for sites that
 * create the tables with an admin account and run candidates with
 * LeaderCreateSchema=no; or, with --apply or --upgrade, connect and create
 * or upgrade the tables. Which dialect it prints is dialect_pick.c's
 * choice, as for fence.
 */
#include <build_config.h>

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "dialect_pick.h"

struct schema_opts {
    struct odbc_leader__cli_dialect_opts d; /* --dialect, --prefix */
    int apply;                              /* --apply or --upgrade */
    int upgrade_sql; /* --upgrade-sql: print only the upgrade */
};

static const char schema_help[] =
    "Usage: odbc-leader schema [OPTIONS]\n"
    "Print the SQL that creates odbc-leader's tables, or create them.\n"
    "\n"
    "  --dialect D           sqlite, postgresql, mariadb or a dialect file\n"
    "                        (default: the connection's LeaderDialect, or\n"
    "                        the one its database asks for; sqlite when\n"
    "                        no connection is given)\n"
    "  --prefix P            table prefix (default: LeaderTablePrefix, else\n"
    "                        odbc_leader_)\n"
    "  --apply               connect (-d/-C) and create the missing "
    "tables\n"
    "  --upgrade             connect and bring tables of an older schema\n"
    "                        version up to this one (creating missing ones)\n"
    "  --upgrade-sql         print only the SQL that upgrades the tables of\n"
    "                        the version before\n" ODBC_LEADER__CLI_COMMON_HELP
    "\n"
    "Exit status: 0; 64 usage; 69 database unavailable; 78 unknown dialect\n"
    "or bad configuration.\n"
    "\n"
    "Examples:\n"
    "  # for a DBA: the DDL of the PostgreSQL tables\n"
    "  odbc-leader schema --dialect postgresql\n"
    "  # create the tables with an account that may (candidates then need\n"
    "  # only SELECT, INSERT, UPDATE and DELETE: LeaderCreateSchema=no)\n"
    "  odbc-leader schema -d sched-admin --apply\n";

/* Appends the SQL of st to b with each '?' outside quotes and comments
 * replaced by the schema version. Returns 0, or -1 when the statement
 * uses another parameter or memory runs out. */
static int expand_stmt(struct odbc_leader__buf *b,
                       const struct odbc_leader__stmt *st, int version) {
    char num[16];
    int quote = 0, k = 0, fail = 0;

    snprintf(num, sizeof(num), "%d", version);
    for (const char *p = st->sql; *p != '\0' && !fail; p++) {
        if (quote == 0 && *p == '?') {
            if (k >= st->nparams || st->params[k++] != ODBC_LEADER__P_VERSION)
                return -1;
            fail = odbc_leader__buf_add(b, num, strlen(num));
            continue;
        }
        if (quote == 0 && (*p == '\'' || *p == '"' || *p == '`'))
            quote = *p;
        else if (quote == 0 && p[0] == '/' && p[1] == '*')
            quote = '*';
        else if (quote == '*' && p[0] == '*' && p[1] == '/')
            quote = '/'; /* closes after the next char */
        else if (quote == '/' || (quote != '*' && *p == quote))
            quote = 0;
        fail = odbc_leader__buf_add(b, p, 1);
    }
    return fail || odbc_leader__buf_add(b, ";\n", 2) ? -1 : 0;
}

/* Appends every statement of op in d to b, a blank line between two.
 * Returns 0 or -1 (another parameter than :version, or out of memory). */
static int add_section(struct odbc_leader__buf *b,
                       const struct odbc_leader__dialect *d, int op) {
    const struct odbc_leader__stmt_list *l = &d->ops[op];
    int rc = 0;

    for (size_t i = 0; i < l->n && rc == 0; i++) {
        char note[96];
        int step = l->v[i].step;

        if (b->len > 0 && odbc_leader__buf_add(b, "\n", 1) < 0)
            rc = -1;
        /* the first statement of an @step says which tables it is for */
        if (rc == 0 && step > 0 && (i == 0 || l->v[i - 1].step != step)) {
            snprintf(note, sizeof(note),
                     "-- only on tables of schema version %d or earlier:\n",
                     step - 1);
            if (odbc_leader__buf_add(b, note, strlen(note)) < 0)
                rc = -1;
        }
        if (rc == 0)
            rc = expand_stmt(b, &l->v[i], d->schema_version);
    }
    return rc;
}

/* Prints the DDL of dialect d: the tables, then the upgrade to the
 * current version (the path the library takes on a new database too); or
 * the upgrade only. Returns 0 or an exit code. */
static int print_ddl(struct odbc_leader__cli *c,
                     const struct odbc_leader__dialect *d, const char *prefix,
                     int upgrade_only) {
    struct odbc_leader__buf b = {NULL, 0, 0};
    int has_upgrade = d->ops[ODBC_LEADER__OP_UPGRADE].n > 0;
    int rc = 0;

    if (!upgrade_only)
        rc = add_section(&b, d, ODBC_LEADER__OP_DDL);
    if (rc == 0 && has_upgrade)
        rc = add_section(&b, d, ODBC_LEADER__OP_UPGRADE);
    if (rc < 0) {
        odbc_leader__cli_err(c,
                             "schema: the ddl of dialect %s uses a "
                             "parameter other than :version",
                             d->name);
        free(b.p);
        return EX_CONFIG;
    }
    if (upgrade_only && !has_upgrade) {
        printf("-- odbc-leader %s: dialect %s (schema version %d) has no "
               "upgrade\n",
               PACKAGE_VERSION, d->name, d->schema_version);
    } else if (upgrade_only) {
        printf("-- odbc-leader %s: upgrade of the tables of dialect %s from\n"
               "-- any earlier schema version to %d, table prefix %s\n\n%s",
               PACKAGE_VERSION, d->name, d->schema_version, prefix,
               b.p != NULL ? b.p : "");
    } else {
        printf("-- odbc-leader %s: tables for dialect %s, schema version %d,\n"
               "-- table prefix %s%s\n\n%s",
               PACKAGE_VERSION, d->name, d->schema_version, prefix,
               has_upgrade ? " (created at version 1, then upgraded)" : "",
               b.p != NULL ? b.p : "");
    }
    free(b.p);
    return 0;
}

/* Prints the DDL the options select. Returns the exit code. */
static int print_schema(struct odbc_leader__cli *c,
                        const struct schema_opts *o) {
    struct odbc_leader__cli_dialect p;
    int rc = odbc_leader__cli_dialect_pick(c, &o->d, &p);

    if (rc == 0)
        rc = print_ddl(c, p.d, p.prefix, o->upgrade_sql);
    odbc_leader__cli_dialect_free(&p);
    return rc;
}

/* Connects and creates the missing tables. Returns the exit code. */
static int apply_schema(struct odbc_leader__cli *c,
                        const struct schema_opts *o) {
    struct odbc_leader__config cfg;
    odbc_leader_t *h = NULL;
    char *extra = NULL;
    int rc = 0;

    if (odbc_leader__cli_append_kv(&extra, "LeaderCreateSchema", "yes") ||
        (o->d.dialect != NULL &&
         odbc_leader__cli_append_kv(&extra, "LeaderDialect", o->d.dialect)) ||
        (o->d.prefix != NULL &&
         odbc_leader__cli_append_kv(&extra, "LeaderTablePrefix",
                                    o->d.prefix))) {
        odbc_leader__cli_err(c, "out of memory");
        free(extra);
        return EX_OSERR;
    }
    rc = odbc_leader__cli_config_parse(c, extra, &cfg);
    if (rc == 0)
        rc = odbc_leader__cli_open(c, extra, NULL, &h);
    if (rc == 0)
        printf("tables %sschema, %slease, %scandidate and %sfire are in "
               "place at the current schema version (created or upgraded "
               "when needed) on %s\n",
               cfg.prefix, cfg.prefix, cfg.prefix, cfg.prefix,
               cfg.connect_redacted);
    odbc_leader_destroy(h);
    odbc_leader__config_free(&cfg);
    free(extra);
    return rc;
}

/* Takes one of schema's options into the struct schema_opts ctx.
 * Returns 0, 1 when opt is none of them, or EX_USAGE after a message. */
static int schema_opt(struct odbc_leader__cli *c, void *ctx, int opt,
                      const char *arg) {
    struct schema_opts *o = ctx;
    int rc = odbc_leader__cli_dialect_opt(c, &o->d, opt, arg);

    if (rc != 1)
        return rc;
    if (opt == 'A' || opt == 'U')
        o->apply = 1;
    else if (opt == 'S')
        o->upgrade_sql = 1;
    else
        return 1;
    return 0;
}

static const struct odbc_leader__cli_cmdline schema_cmdline = {
    .subcmd = "schema",
    .help = schema_help,
    .opt = schema_opt,
    .longopts = {ODBC_LEADER__CLI_DIALECT_LONGOPTS,
                 {"apply", no_argument, NULL, 'A'},
                 {"upgrade", no_argument, NULL, 'U'},
                 {"upgrade-sql", no_argument, NULL, 'S'}},
};

int odbc_leader__cli_schema(struct odbc_leader__cli *c, int argc, char **argv) {
    struct schema_opts o = {{"schema", NULL, NULL}, 0, 0};
    int rc = odbc_leader__cli_parse(c, &schema_cmdline, &o, argc, argv);

    if (rc == 0 && o.apply && o.upgrade_sql)
        rc = odbc_leader__cli_usage(c, "schema",
                                    "--upgrade-sql prints; it does not go "
                                    "with --apply or --upgrade");
    if (rc != 0)
        return rc == ODBC_LEADER__CLI_HELP ? 0 : rc;
    return o.apply ? apply_schema(c, &o) : print_schema(c, &o);
}
