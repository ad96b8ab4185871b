/* SPDX-License-Identifier: MIT */
/*
 * schema.c: "odbc-leader schema": print the DDL of a dialect with the
 * table prefix expanded and the schema version written in, for sites that
 * create the tables with an admin account and run candidates with
 * LeaderCreateSchema=no; or, with --apply or --upgrade, connect and create
 * or upgrade the tables. Also "odbc-leader fence": print the dialect's
 * fence predicate (docs/fencing.md). With a connection and
 * LeaderDialect=auto, printing connects just to ask the driver for
 * SQL_DBMS_NAME, through db.c as the library does.
 */
#include <build_config.h>

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "buf.h"
#include "config.h"
#include "db.h"
#include "dialect.h"

struct schema_opts {
    const char *dialect; /* --dialect, borrowed; NULL = from the config */
    const char *prefix;  /* --prefix, borrowed; NULL = from the config */
    int apply;           /* --apply or --upgrade */
    int upgrade_sql;     /* --upgrade-sql: print only the upgrade */
    int bare;            /* fence --bare */
    const char *cmd;     /* "schema" or "fence" */
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

/* 1 when the options or the environment name a connection. */
static int conn_given(const struct odbc_leader__cli *c) {
    const char *a = getenv("ODBC_LEADER_CONNECT");
    const char *b = getenv("ODBC_LEADER_DSN");

    return c->connect != NULL || c->dsn != NULL || (a != NULL && a[0]) ||
           (b != NULL && b[0]);
}

/* Parses the configuration of c plus extra into *cfg (caller frees with
 * odbc_leader__config_free). Returns 0 or an exit code after a message. */
static int load_config(struct odbc_leader__cli *c, const char *extra,
                       struct odbc_leader__config *cfg) {
    char err[512] = "";
    char *conf = NULL;
    int rc = odbc_leader__cli_config(c, extra, &conf);

    memset(cfg, 0, sizeof(*cfg));
    if (rc != 0)
        return rc;
    rc = odbc_leader__config_parse(conf, cfg, err, sizeof(err));
    free(conf);
    if (rc < 0) {
        odbc_leader__cli_err(c, "%s", err);
        return odbc_leader__cli_exit_code(rc);
    }
    return 0;
}

/* Loads the dialect for printing: spec, or (spec NULL) the one the
 * database of cfg asks for (db.c connects and reads its SQL_DBMS_NAME).
 * cmd names the subcommand in messages. Returns 0, with *d owned by the
 * caller, or an exit code after a message. */
static int load_dialect(struct odbc_leader__cli *c, const char *cmd,
                        const char *spec, const struct odbc_leader__config *cfg,
                        const struct odbc_leader__dialect_vars *vars,
                        struct odbc_leader__dialect **d) {
    char dbms[128] = "", err[1024] = "";
    int rc = 0;

    if (spec == NULL)
        rc = odbc_leader__db_dbms_name(cfg, dbms, sizeof(dbms), err,
                                       sizeof(err));
    if (rc < 0) {
        odbc_leader__cli_err(c,
                             "%s: %s; it was asked for its DBMS to choose "
                             "the dialect (LeaderDialect=auto): name one "
                             "with --dialect to print without connecting",
                             cmd, err);
        return odbc_leader__cli_exit_code(rc);
    }
    rc = odbc_leader__dialect_load(spec != NULL ? spec : "auto", dbms, vars, d,
                                   err, sizeof(err));
    if (rc < 0) {
        odbc_leader__cli_err(c, "%s: %s", cmd, err);
        return odbc_leader__cli_exit_code(rc);
    }
    return 0;
}

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

/* Prints the fence of dialect d: the SELECT with "?" for its parameters,
 * inside "AND EXISTS ( ... )" and with comments naming them unless bare.
 * Returns 0 or an exit code. */
static int print_fence(struct odbc_leader__cli *c,
                       const struct odbc_leader__dialect *d, const char *prefix,
                       int bare) {
    const struct odbc_leader__stmt_list *l = &d->ops[ODBC_LEADER__OP_FENCE];
    const struct odbc_leader__stmt *st;

    if (l->n != 1) {
        odbc_leader__cli_err(c,
                             "fence: dialect %s (schema version %d) has no "
                             "fence statement",
                             d->name, d->schema_version);
        return EX_CONFIG;
    }
    st = &l->v[0];
    if (bare) {
        printf("%s\n", st->sql);
        return 0;
    }
    printf("-- odbc-leader %s: fence for dialect %s, table prefix %s.\n"
           "-- Add it to the WHERE clause of a job's write; the write then\n"
           "-- applies only while the term still holds, by the database "
           "clock.\n"
           "-- Parameters, in order:\n",
           PACKAGE_VERSION, d->name, prefix);
    for (int i = 0; i < st->nparams; i++)
        printf("--   %d. %s\n", i + 1,
               st->params[i] == ODBC_LEADER__P_NS
                   ? "the namespace ($ODBC_LEADER_NAMESPACE under run)"
               : st->params[i] == ODBC_LEADER__P_TERM
                   ? "the term ($ODBC_LEADER_TERM under run)"
                   : "(a parameter this command does not know)");
    printf("AND EXISTS (\n%s\n)\n", st->sql);
    return 0;
}

/* Prints the DDL the options select. Returns the exit code. */
static int print_schema(struct odbc_leader__cli *c,
                        const struct schema_opts *o) {
    struct odbc_leader__config cfg;
    struct odbc_leader__dialect_vars vars = {"odbc_leader_", 5000, 0};
    struct odbc_leader__dialect *d = NULL;
    const char *spec = o->dialect;
    int given = conn_given(c), rc = 0;

    memset(&cfg, 0, sizeof(cfg));
    if (given) {
        rc = load_config(c, NULL, &cfg);
        if (rc != 0)
            return rc;
        vars.prefix = cfg.prefix;
        vars.timeout_ms = cfg.stmt_timeout_ms;
        if (spec == NULL && strcmp(cfg.dialect, "auto") != 0)
            spec = cfg.dialect;
    } else if (spec == NULL) {
        spec = "sqlite";
    }
    if (o->prefix != NULL)
        vars.prefix = o->prefix;
    rc = load_dialect(c, o->cmd, spec, &cfg, &vars, &d);
    if (rc == 0 && strcmp(o->cmd, "fence") == 0)
        rc = print_fence(c, d, vars.prefix, o->bare);
    else if (rc == 0)
        rc = print_ddl(c, d, vars.prefix, o->upgrade_sql);
    odbc_leader__dialect_free(d);
    odbc_leader__config_free(&cfg);
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
        (o->dialect != NULL &&
         odbc_leader__cli_append_kv(&extra, "LeaderDialect", o->dialect)) ||
        (o->prefix != NULL &&
         odbc_leader__cli_append_kv(&extra, "LeaderTablePrefix", o->prefix))) {
        odbc_leader__cli_err(c, "out of memory");
        free(extra);
        return EX_OSERR;
    }
    rc = load_config(c, extra, &cfg);
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

/* Parses schema's options. Returns 0, ODBC_LEADER__CLI_HELP or EX_USAGE. */
static int parse_schema(struct odbc_leader__cli *c, int argc, char **argv,
                        struct schema_opts *o) {
    static const struct option opts[] = {
        ODBC_LEADER__CLI_LONGOPTS,
        {"dialect", required_argument, NULL, 'D'},
        {"prefix", required_argument, NULL, 'P'},
        {"apply", no_argument, NULL, 'A'},
        {"upgrade", no_argument, NULL, 'U'},
        {"upgrade-sql", no_argument, NULL, 'S'},
        {"bare", no_argument, NULL, 'B'},
        {NULL, 0, NULL, 0},
    };
    int fence = strcmp(o->cmd, "fence") == 0;
    int opt, rc;

    for (opt = getopt_long(argc, argv, ODBC_LEADER__CLI_SHORTOPTS, opts, NULL);
         opt != -1; opt = getopt_long(argc, argv, ODBC_LEADER__CLI_SHORTOPTS,
                                      opts, NULL)) {
        rc = odbc_leader__cli_common_opt(c, opt, optarg);
        if (rc == 1)
            continue;
        if (rc != 0)
            return EX_USAGE;
        if (opt == 'D')
            o->dialect = optarg;
        else if (opt == 'P' && odbc_leader__valid_prefix(optarg))
            o->prefix = optarg;
        else if (opt == 'P')
            return odbc_leader__cli_usage(c, o->cmd,
                                          "invalid --prefix \"%s\" "
                                          "([A-Za-z_][A-Za-z0-9_]*, at most "
                                          "32 bytes)",
                                          optarg);
        else if (fence && opt == 'B')
            o->bare = 1;
        else if (!fence && (opt == 'A' || opt == 'U'))
            o->apply = 1;
        else if (!fence && opt == 'S')
            o->upgrade_sql = 1;
        else
            return odbc_leader__cli_usage(c, o->cmd, NULL);
    }
    if (c->help) {
        fputs(fence ? fence_help : schema_help, stdout);
        return ODBC_LEADER__CLI_HELP;
    }
    if (optind < argc)
        return odbc_leader__cli_usage(c, o->cmd, "unexpected argument \"%s\"",
                                      argv[optind]);
    if (o->apply && o->upgrade_sql)
        return odbc_leader__cli_usage(c, o->cmd,
                                      "--upgrade-sql prints; it does not go "
                                      "with --apply or --upgrade");
    return 0;
}

int odbc_leader__cli_schema(struct odbc_leader__cli *c, int argc, char **argv) {
    struct schema_opts o = {NULL, NULL, 0, 0, 0, "schema"};
    int rc = parse_schema(c, argc, argv, &o);

    if (rc != 0)
        return rc == ODBC_LEADER__CLI_HELP ? 0 : rc;
    return o.apply ? apply_schema(c, &o) : print_schema(c, &o);
}

int odbc_leader__cli_fence(struct odbc_leader__cli *c, int argc, char **argv) {
    struct schema_opts o = {NULL, NULL, 0, 0, 0, "fence"};
    int rc = parse_schema(c, argc, argv, &o);

    if (rc != 0)
        return rc == ODBC_LEADER__CLI_HELP ? 0 : rc;
    return print_schema(c, &o);
}
