/*
 * schema.c: "odbc-leader schema": print the DDL of a dialect with the
 * table prefix expanded and the schema version written in, for sites that
 * create the tables with an admin account and run candidates with
 * LeaderCreateSchema=no; or, with --apply, connect and create the tables.
 * With a connection and LeaderDialect=auto, printing connects just to ask
 * the driver for SQL_DBMS_NAME, as the library does.
 */
#include <config.h>

#include <sql.h>
#include <sqlext.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "internal.h"

struct schema_opts {
    const char *dialect; /* --dialect, borrowed; NULL = from the config */
    const char *prefix;  /* --prefix, borrowed; NULL = from the config */
    int apply;           /* --apply */
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
    "tables\n" ODBC_LEADER__CLI_COMMON_HELP "\n"
    "Exit status: 0; 64 usage; 69 database unavailable; 78 unknown dialect\n"
    "or bad configuration.\n";

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

/* Writes the first diagnostic of handle h into err. */
static void diagnose(SQLSMALLINT type, SQLHANDLE h, char *err, size_t len) {
    SQLCHAR state[6] = "", msg[512] = "";
    SQLINTEGER native = 0;
    SQLSMALLINT n = 0;

    SQLGetDiagRec(type, h, 1, state, &native, msg, sizeof(msg), &n);
    snprintf(err, len, "[%s] %s", (const char *)state, (const char *)msg);
}

/* Connects with connect (no Leader* keys) and writes the driver's
 * SQL_DBMS_NAME into name. Returns 0, or -1 with the driver's first
 * diagnostic in err. */
static int query_dbms(const char *connect, char *name, size_t n, char *err,
                      size_t errlen) {
    SQLHENV env = SQL_NULL_HENV;
    SQLHDBC dbc = SQL_NULL_HDBC;
    SQLSMALLINT len = 0;
    SQLRETURN r;
    int rc = -1;

    snprintf(err, errlen, "cannot allocate ODBC handles");
    if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &env)))
        goto out;
    SQLSetEnvAttr(env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0);
    if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_DBC, env, &dbc)))
        goto out;
    SQLSetConnectAttr(dbc, SQL_ATTR_LOGIN_TIMEOUT, (SQLPOINTER)(uintptr_t)10,
                      0);
    r = SQLDriverConnect(dbc, NULL, (SQLCHAR *)connect, SQL_NTS, NULL, 0, NULL,
                         SQL_DRIVER_NOPROMPT);
    if (!SQL_SUCCEEDED(r)) {
        diagnose(SQL_HANDLE_DBC, dbc, err, errlen);
        goto out;
    }
    name[0] = '\0';
    r = SQLGetInfo(dbc, SQL_DBMS_NAME, name, (SQLSMALLINT)n, &len);
    if (SQL_SUCCEEDED(r))
        rc = 0;
    else
        diagnose(SQL_HANDLE_DBC, dbc, err, errlen);
    SQLDisconnect(dbc);
out:
    if (dbc != SQL_NULL_HDBC)
        SQLFreeHandle(SQL_HANDLE_DBC, dbc);
    if (env != SQL_NULL_HENV)
        SQLFreeHandle(SQL_HANDLE_ENV, env);
    return rc;
}

/* Loads the dialect for printing: spec, or (spec NULL) the one the
 * database of cfg asks for. Returns 0 or an exit code after a message. */
static int load_dialect(struct odbc_leader__cli *c, const char *spec,
                        const struct odbc_leader__config *cfg,
                        const struct odbc_leader__dialect_vars *vars,
                        struct odbc_leader__dialect **d) {
    char dbms[128] = "", err[1024] = "";
    int rc;

    if (spec == NULL &&
        query_dbms(cfg->connect, dbms, sizeof(dbms), err, sizeof(err)) < 0) {
        odbc_leader__cli_err(c,
                             "schema: cannot connect to %s to tell the "
                             "dialect (%s); or name it with --dialect",
                             cfg->connect_redacted, err);
        return EX_UNAVAILABLE;
    }
    rc = odbc_leader__dialect_load(spec != NULL ? spec : "auto", dbms, vars, d,
                                   err, sizeof(err));
    if (rc < 0) {
        odbc_leader__cli_err(c, "schema: %s", err);
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

/* Prints the DDL of dialect d. Returns 0 or an exit code. */
static int print_ddl(struct odbc_leader__cli *c,
                     const struct odbc_leader__dialect *d, const char *prefix) {
    const struct odbc_leader__stmt_list *l = &d->ops[ODBC_LEADER__OP_DDL];
    struct odbc_leader__buf b = {NULL, 0, 0};
    int rc = 0;

    for (size_t i = 0; i < l->n && rc == 0; i++) {
        if (i > 0 && odbc_leader__buf_add(&b, "\n", 1) < 0)
            rc = -1;
        if (rc == 0)
            rc = expand_stmt(&b, &l->v[i], d->schema_version);
    }
    if (rc < 0) {
        odbc_leader__cli_err(c,
                             "schema: the ddl of dialect %s uses a "
                             "parameter other than :version",
                             d->name);
        free(b.p);
        return EX_CONFIG;
    }
    printf("-- odbc-leader %s: tables for dialect %s, schema version %d,\n"
           "-- table prefix %s\n\n%s",
           PACKAGE_VERSION, d->name, d->schema_version, prefix,
           b.p != NULL ? b.p : "");
    free(b.p);
    return 0;
}

/* Prints the DDL the options select. Returns the exit code. */
static int print_schema(struct odbc_leader__cli *c,
                        const struct schema_opts *o) {
    struct odbc_leader__config cfg;
    struct odbc_leader__dialect_vars vars = {"odbc_leader_", 5000};
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
    rc = load_dialect(c, spec, &cfg, &vars, &d);
    if (rc == 0)
        rc = print_ddl(c, d, vars.prefix);
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
        printf("tables %sschema, %slease and %scandidate are in place "
               "(created when missing) on %s\n",
               cfg.prefix, cfg.prefix, cfg.prefix, cfg.connect_redacted);
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
        {NULL, 0, NULL, 0},
    };
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
            return odbc_leader__cli_usage(c, "schema",
                                          "invalid --prefix \"%s\" "
                                          "([A-Za-z_][A-Za-z0-9_]*, at most "
                                          "32 bytes)",
                                          optarg);
        else if (opt == 'A')
            o->apply = 1;
        else
            return odbc_leader__cli_usage(c, "schema", NULL);
    }
    if (c->help) {
        fputs(schema_help, stdout);
        return ODBC_LEADER__CLI_HELP;
    }
    if (optind < argc)
        return odbc_leader__cli_usage(c, "schema", "unexpected argument \"%s\"",
                                      argv[optind]);
    return 0;
}

int odbc_leader__cli_schema(struct odbc_leader__cli *c, int argc, char **argv) {
    struct schema_opts o = {NULL, NULL, 0};
    int rc = parse_schema(c, argc, argv, &o);

    if (rc != 0)
        return rc == ODBC_LEADER__CLI_HELP ? 0 : rc;
    return o.apply ? apply_schema(c, &o) : print_schema(c, &o);
}
