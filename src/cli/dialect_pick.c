/* SPDX-License-Identifier: MIT */
/*
 * dialect_pick.c: the dialect that "odbc-leader schema" and "odbc-leader
 * fence" print, and its table prefix: --dialect and --prefix, else the
 * connection's LeaderDialect and LeaderTablePrefix, else the dialect its
 * database asks for (connecting just to read SQL_DBMS_NAME, through db.c
 * as the library does), else sqlite when no connection is given.
 */
#include <build_config.h>

#include <stdlib.h>
#include <string.h>

#include "dialect_pick.h"
#include "db.h"

int odbc_leader__cli_dialect_opt(struct odbc_leader__cli *c,
                                 struct odbc_leader__cli_dialect_opts *o,
                                 int opt, const char *arg) {
    if (opt == 'D') {
        o->dialect = arg;
        return 0;
    }
    if (opt != 'P')
        return 1;
    if (!odbc_leader__valid_prefix(arg))
        return odbc_leader__cli_usage(c, o->cmd,
                                      "invalid --prefix \"%s\" "
                                      "([A-Za-z_][A-Za-z0-9_]*, at most "
                                      "32 bytes)",
                                      arg);
    o->prefix = arg;
    return 0;
}

/* 1 when the options or the environment name a connection. */
static int conn_given(const struct odbc_leader__cli *c) {
    const char *a = getenv("ODBC_LEADER_CONNECT");
    const char *b = getenv("ODBC_LEADER_DSN");

    return c->connect != NULL || c->dsn != NULL || (a != NULL && a[0]) ||
           (b != NULL && b[0]);
}

/* Loads the dialect spec, or (spec NULL) the one the database of cfg asks
 * for. cmd names the subcommand in messages. Returns 0, with *d owned by
 * the caller, or an exit code after a message. */
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

int odbc_leader__cli_dialect_pick(struct odbc_leader__cli *c,
                                  const struct odbc_leader__cli_dialect_opts *o,
                                  struct odbc_leader__cli_dialect *out) {
    struct odbc_leader__dialect_vars vars = {"odbc_leader_", 5000, 0};
    const char *spec = o->dialect;
    int rc;

    memset(out, 0, sizeof(*out));
    if (conn_given(c)) {
        rc = odbc_leader__cli_config_parse(c, NULL, &out->cfg);
        if (rc != 0)
            return rc;
        vars.prefix = out->cfg.prefix;
        vars.timeout_ms = out->cfg.stmt_timeout_ms;
        if (spec == NULL && strcmp(out->cfg.dialect, "auto") != 0)
            spec = out->cfg.dialect;
    } else if (spec == NULL) {
        spec = "sqlite";
    }
    if (o->prefix != NULL)
        vars.prefix = o->prefix;
    out->prefix = vars.prefix;
    return load_dialect(c, o->cmd, spec, &out->cfg, &vars, &out->d);
}

void odbc_leader__cli_dialect_free(struct odbc_leader__cli_dialect *p) {
    odbc_leader__dialect_free(p->d);
    odbc_leader__config_free(&p->cfg);
    memset(p, 0, sizeof(*p));
}
