/* SPDX-License-Identifier: MIT */
/*
 * bench-dialect.c: prints an operation of a dialect the way the library
 * sends it, for the raw clients of make bench (bench/part-latency.sh), so
 * their SQL comes from the library's own dialect parser and cannot fall
 * behind the dialect files or the parser.
 *
 *   bench-dialect [-d DIALECT] [-s qmark|pgbench] [-g VARPREFIX] CONFIG OP
 *
 * CONFIG is a connection string with Leader* keys ("-": the value of the
 * environment variable BENCH_DIALECT_CONNECT, which keeps a password off
 * the command line), parsed by the library's own
 * odbc_leader__config_parse(); nothing connects. Its LeaderTablePrefix,
 * statement timeout (LeaderStatementTimeout, or the default the TTL gives) and
 * LeaderPooler are the values the library expands the dialect with
 * (odbc_leader__dialect_load(), as db_connect.c does after connecting). The
 * dialect is LeaderDialect; when that is "auto" (the default), -d DIALECT
 * names it instead (a built-in name such as "sqlite", or a file path),
 * because the choice by SQL_DBMS_NAME needs a connection. OP is an
 * operation as a dialect file spells it ("renew", "attempt",
 * "on_connect"...).
 *
 * -s qmark (default): the statement file of bench/raw.h, read by raw-odbc,
 * raw-mariadb and raw-sqlite: "-- @connect-keys KEYS" when the dialect
 * puts keys in front of the connection string; "-- @begin SQL" and
 * "-- @commit SQL" when the library runs OP in a transaction (more than one
 * statement, or transaction pooling; "BEGIN" and "COMMIT" when the dialect
 * leaves the transaction to ODBC); then "-- @stmt NAMES" before each
 * statement (NAMES: the parameter of each ? marker, in order) and the
 * statement's text, with ? markers, exactly as the library prepares it.
 * Under transaction pooling the @pooled-prologue comes first, as a
 * statement without parameters.
 *
 * -s pgbench: a pgbench script: each ? marker as :NAME (pgbench
 * variables), each statement ended by ';', BEGIN/COMMIT around a
 * transaction; -g VARPREFIX ends a single statement with "\gset VARPREFIX"
 * instead (its row fetched, as the library fetches it). The script ends
 * with "\set ol_reread_clock 0": pgbench reads the clock at a
 * transaction's start and reads it again at its end only when it has had
 * to wait for a result in between, or after a meta-command. When it was
 * descheduled after sending (CPU load: the server's backend ran in its
 * place) the result is already there when it looks, and without the
 * meta-command pgbench logs (-l) that transaction as taking 0 us.
 *
 * Exits 0, or 1 after printing the reason (bad arguments, a configuration
 * or dialect the library refuses, an operation the dialect lacks, or ?
 * markers that do not match the statement's parameters).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "dialect.h"

/* Command-line options; strings are borrowed from argv. */
struct options {
    const char *dialect; /* -d, may be NULL */
    int pgbench;         /* -s pgbench */
    const char *gset;    /* -g, may be NULL */
    const char *config;
    const char *op;
};

static void usage(void) {
    fprintf(stderr, "usage: bench-dialect [-d DIALECT] [-s qmark|pgbench] "
                    "[-g VARPREFIX] CONFIG OP\n");
    exit(1);
}

/* Parses argv into *o; exits on an error. */
static void parse_args(int argc, char **argv, struct options *o) {
    int c;

    memset(o, 0, sizeof(*o));
    while ((c = getopt(argc, argv, "d:s:g:")) != -1) {
        switch (c) {
        case 'd':
            o->dialect = optarg;
            break;
        case 's':
            if (strcmp(optarg, "pgbench") == 0)
                o->pgbench = 1;
            else if (strcmp(optarg, "qmark") != 0)
                usage();
            break;
        case 'g':
            o->gset = optarg;
            break;
        default:
            usage();
        }
    }
    if (argc - optind != 2)
        usage();
    o->config = argv[optind];
    o->op = argv[optind + 1];
}

/* Returns the operation named name, or -1. */
static int find_op(const char *name) {
    for (int op = 0; op < ODBC_LEADER__OP_COUNT; op++)
        if (strcmp(odbc_leader__op_name((enum odbc_leader__op)op), name) == 0)
            return op;
    return -1;
}

/* Prints sql with each ? marker outside quotes and block comments (the
 * parser keeps both as written; it drops -- comments) replaced by
 * ":NAME" of the next parameter of st (pgbench 1), or as it is
 * (pgbench 0). Returns 0, or -1 when the markers and st->nparams differ. */
static int print_sql(const struct odbc_leader__stmt *st, int pgbench) {
    const char *s = st->sql;
    int quote = 0, k = 0;

    for (size_t i = 0; s[i] != '\0'; i++) {
        char c = s[i];

        if (quote == '*') {
            if (c == '*' && s[i + 1] == '/') {
                putchar(c);
                c = s[++i];
                quote = 0;
            }
        } else if (quote != 0) {
            if (c == quote)
                quote = 0;
        } else if (c == '\'' || c == '"' || c == '`') {
            quote = c;
        } else if (c == '/' && s[i + 1] == '*') {
            quote = '*';
        } else if (c == '?') {
            if (k >= st->nparams)
                return -1;
            if (pgbench) {
                printf(":%s", odbc_leader__param_name(st->params[k]));
                /* keep a following name character out of the variable */
                if (s[i + 1] == '_' || (s[i + 1] >= 'a' && s[i + 1] <= 'z') ||
                    (s[i + 1] >= 'A' && s[i + 1] <= 'Z') ||
                    (s[i + 1] >= '0' && s[i + 1] <= '9'))
                    putchar(' ');
                k++;
                continue;
            }
            k++;
        }
        putchar(c);
    }
    return k == st->nparams ? 0 : -1;
}

/* Prints op of d in the statement-file format of bench/raw.h. Returns 0
 * or -1. */
static int print_qmark(const struct odbc_leader__dialect *d, int op,
                       int pooled) {
    const struct odbc_leader__stmt_list *l = &d->ops[op];
    int tx = l->n > 1 || pooled;

    if (d->connect_keys != NULL || (pooled && d->pooled_keys != NULL))
        printf("-- @connect-keys %s%s%s\n",
               d->connect_keys ? d->connect_keys : "",
               d->connect_keys && pooled && d->pooled_keys ? ";" : "",
               pooled && d->pooled_keys ? d->pooled_keys : "");
    if (tx) {
        printf("-- @begin %s\n", d->begin ? d->begin : "BEGIN");
        printf("-- @commit %s\n", d->commit ? d->commit : "COMMIT");
    }
    if (pooled && d->pooled_prologue != NULL)
        printf("-- @stmt\n%s\n", d->pooled_prologue);
    for (size_t i = 0; i < l->n; i++) {
        const struct odbc_leader__stmt *st = &l->v[i];

        fputs("-- @stmt", stdout);
        for (int k = 0; k < st->nparams; k++)
            printf(" %s", odbc_leader__param_name(st->params[k]));
        putchar('\n');
        if (print_sql(st, 0) < 0)
            return -1;
        putchar('\n');
    }
    return 0;
}

/* Prints op of d as a pgbench script. Returns 0 or -1. */
static int print_pgbench(const struct odbc_leader__dialect *d, int op,
                         int pooled, const char *gset) {
    const struct odbc_leader__stmt_list *l = &d->ops[op];
    int tx = l->n > 1 || pooled;

    if (tx)
        printf("%s;\n", d->begin ? d->begin : "BEGIN");
    if (pooled && d->pooled_prologue != NULL)
        printf("%s;\n", d->pooled_prologue);
    for (size_t i = 0; i < l->n; i++) {
        if (print_sql(&l->v[i], 1) < 0)
            return -1;
        if (gset != NULL && !tx && l->n == 1)
            printf(" \\gset %s\n", gset);
        else
            fputs(";\n", stdout);
    }
    if (tx)
        printf("%s;\n", d->commit ? d->commit : "COMMIT");
    /* after a meta-command pgbench reads the clock again (see the top) */
    fputs("\\set ol_reread_clock 0\n", stdout);
    return 0;
}

int main(int argc, char **argv) {
    struct options o;
    struct odbc_leader__config cfg;
    struct odbc_leader__dialect_vars vars;
    struct odbc_leader__dialect *d = NULL;
    const char *spec;
    char err[1024];
    int op, rc;

    parse_args(argc, argv, &o);
    op = find_op(o.op);
    if (op < 0) {
        fprintf(stderr, "bench-dialect: unknown operation %s\n", o.op);
        return 1;
    }
    if (strcmp(o.config, "-") == 0) {
        o.config = getenv("BENCH_DIALECT_CONNECT");
        if (o.config == NULL) {
            fprintf(stderr, "bench-dialect: BENCH_DIALECT_CONNECT is not "
                            "set\n");
            return 1;
        }
    }
    memset(&cfg, 0, sizeof(cfg));
    if (odbc_leader__config_parse(o.config, &cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench-dialect: configuration: %s\n", err);
        return 1;
    }
    spec = cfg.dialect;
    if (strcmp(spec, "auto") == 0) {
        if (o.dialect == NULL) {
            fprintf(stderr, "bench-dialect: LeaderDialect is auto: name the "
                            "dialect with -d\n");
            odbc_leader__config_free(&cfg);
            return 1;
        }
        spec = o.dialect;
    }
    vars.prefix = cfg.prefix;
    vars.timeout_ms = cfg.stmt_timeout_ms;
    vars.pooled = cfg.pooler == ODBC_LEADER__POOL_TRANSACTION;
    rc = odbc_leader__dialect_load(spec, NULL, &vars, &d, err, sizeof(err));
    if (rc != 0) {
        fprintf(stderr, "bench-dialect: %s\n", err);
        odbc_leader__config_free(&cfg);
        return 1;
    }
    if (d->ops[op].n == 0) {
        fprintf(stderr, "bench-dialect: dialect %s has no statement %s\n",
                d->name, o.op);
        rc = -1;
    } else if (o.pgbench) {
        rc = print_pgbench(d, op, vars.pooled, o.gset);
    } else {
        rc = print_qmark(d, op, vars.pooled);
    }
    if (rc < 0 && d->ops[op].n > 0)
        fprintf(stderr,
                "bench-dialect: %s of dialect %s: the ? markers do not "
                "match the statement's parameters\n",
                o.op, d->name);
    if (fflush(stdout) != 0) {
        perror("bench-dialect: stdout");
        rc = -1;
    }
    odbc_leader__dialect_free(d);
    odbc_leader__config_free(&cfg);
    return rc < 0 ? 1 : 0;
}
