/* SPDX-License-Identifier: MIT */
/*
 * raw-odbc.c: the ODBC-only baseline of make bench's tick latency: the
 * same statements as the library's tick, through the same ODBC driver, with
 * no election logic. Set next to bench-tick and the database's own client,
 * it tells the library's cost apart from the ODBC driver's.
 *
 *   raw-odbc [-n N] [-w W] [-p USEC] [-o FILE] [-s SETUPFILE] STMTFILE
 *            NAME=VALUE...
 *
 * The connection string comes from the environment variable
 * RAW_ODBC_CONNECT (it may hold a password; never printed). STMTFILE and
 * SETUPFILE are operations printed by bench/bench-dialect (the library's
 * own expansion of the dialect, with ? markers). STMTFILE's connect keys
 * (the dialect's @connect-keys) go in front of the connection string, as
 * the library puts them. SETUPFILE's statements (the dialect's on_connect)
 * run once with SQLExecDirect after connecting. STMTFILE's statements are prepared once
 * and their ? parameters bound in order from the NAME=VALUE arguments, as
 * the library binds them (text as SQL_VARCHAR(128), numbers as
 * SQL_BIGINT). One execution is the @begin text (SQLExecDirect) when
 * present, SQLExecute of each statement, the last one's rows read column
 * by column with SQLGetData through every result set, then the @commit
 * text. W untimed executions, then N timed ones, each followed by a pause
 * of USEC microseconds with -p (see bench-tick.c); prints raw.h's report
 * line, and appends the microseconds to FILE with -o. Exits 1 on any
 * error.
 */
#include <sql.h>
#include <sqlext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "raw.h"

#define NAME_LEN 128

/* Command-line options; strings are borrowed from argv. */
struct options {
    long n, warmup;
    long pause_us;     /* -p: pause after each timed execution, untimed */
    const char *times; /* -o, may be NULL */
    const char *setup; /* -s, may be NULL */
    const char *script;
    char **values; /* NAME=VALUE arguments */
    int nvalues;
};

/* A bound parameter's buffer: text or a 64-bit integer. */
struct param {
    char text[NAME_LEN + 1];
    SQLBIGINT num;
    SQLLEN ind;
};

/* The connection, the prepared statements and their parameter buffers. */
struct runner {
    SQLHENV env;
    SQLHDBC dbc;
    struct raw_script script;
    SQLHSTMT stmt[RAW_MAX_STMTS];
    struct param p[RAW_MAX_STMTS][RAW_MAX_PARAMS];
};

/* Prints the first diagnostic record of handle h (type t) after what. */
static void print_diag(SQLSMALLINT t, SQLHANDLE h, const char *what) {
    SQLCHAR state[6] = "", msg[512] = "";
    SQLINTEGER native = 0;
    SQLSMALLINT len = 0;

    SQLGetDiagRec(t, h, 1, state, &native, msg, sizeof(msg), &len);
    fprintf(stderr, "raw-odbc: %s: [%s] %s\n", what, state, msg);
}

/* Runs sql once with SQLExecDirect, discarding results. Returns 0 or -1. */
static int exec_direct(struct runner *r, const char *sql) {
    SQLHSTMT h = SQL_NULL_HSTMT;
    SQLRETURN rc;

    if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_STMT, r->dbc, &h)))
        return -1;
    rc = SQLExecDirect(h, (SQLCHAR *)sql, SQL_NTS);
    if (rc != SQL_NO_DATA && !SQL_SUCCEEDED(rc))
        print_diag(SQL_HANDLE_STMT, h, sql);
    SQLFreeHandle(SQL_HANDLE_STMT, h);
    return rc == SQL_NO_DATA || SQL_SUCCEEDED(rc) ? 0 : -1;
}

/* Loads the script, then connects with its connect keys (if any) in front
 * of $RAW_ODBC_CONNECT and runs the setup file. Returns 0 or -1. */
static int connect_db(struct runner *r, const struct options *o) {
    const char *conn = getenv("RAW_ODBC_CONNECT");
    const char *keys;
    struct raw_script setup;
    char *full;
    SQLRETURN ret;
    size_t n;
    int rc = 0;

    if (conn == NULL) {
        fprintf(stderr, "raw-odbc: RAW_ODBC_CONNECT is not set\n");
        return -1;
    }
    if (raw_script_load(o->script, &r->script) < 0)
        return -1;
    keys = r->script.connect_keys != NULL ? r->script.connect_keys : "";
    n = strlen(keys) + strlen(conn) + 2;
    full = malloc(n);
    if (full == NULL)
        return -1;
    snprintf(full, n, "%s%s%s", keys, keys[0] != '\0' ? ";" : "", conn);
    SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &r->env);
    SQLSetEnvAttr(r->env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0);
    SQLAllocHandle(SQL_HANDLE_DBC, r->env, &r->dbc);
    ret = SQLDriverConnect(r->dbc, NULL, (SQLCHAR *)full, SQL_NTS, NULL, 0,
                           NULL, SQL_DRIVER_NOPROMPT);
    free(full);
    if (!SQL_SUCCEEDED(ret)) {
        print_diag(SQL_HANDLE_DBC, r->dbc, "connect");
        return -1;
    }
    if (o->setup == NULL)
        return 0;
    if (raw_script_load(o->setup, &setup) < 0)
        rc = -1;
    for (int i = 0; rc == 0 && i < setup.n; i++)
        rc = exec_direct(r, setup.stmt[i].sql);
    raw_script_free(&setup);
    return rc;
}

/* Binds parameter i (named name) of statement h to buffer p, from the
 * NAME=VALUE arguments. Returns 0 or -1. */
static int bind_one(SQLHSTMT h, int i, const char *name, struct param *p,
                    const struct options *o) {
    const char *v = raw_param(o->values, o->nvalues, name);
    SQLRETURN rc;

    if (v == NULL) {
        fprintf(stderr, "raw-odbc: no value for %s\n", name);
        return -1;
    }
    if (raw_param_is_int(name)) {
        p->num = strtoll(v, NULL, 10);
        p->ind = 0;
        rc = SQLBindParameter(h, (SQLUSMALLINT)(i + 1), SQL_PARAM_INPUT,
                              SQL_C_SBIGINT, SQL_BIGINT, 0, 0, &p->num, 0,
                              &p->ind);
    } else {
        snprintf(p->text, sizeof(p->text), "%s", v);
        p->ind = SQL_NTS;
        rc = SQLBindParameter(h, (SQLUSMALLINT)(i + 1), SQL_PARAM_INPUT,
                              SQL_C_CHAR, SQL_VARCHAR, NAME_LEN, 0, p->text,
                              sizeof(p->text), &p->ind);
    }
    return SQL_SUCCEEDED(rc) ? 0 : -1;
}

/* Prepares and binds each statement of the loaded script. Returns 0 or
 * -1. */
static int prepare(struct runner *r, const struct options *o) {
    for (int s = 0; s < r->script.n; s++) {
        const struct raw_stmt *st = &r->script.stmt[s];

        if (!SQL_SUCCEEDED(
                SQLAllocHandle(SQL_HANDLE_STMT, r->dbc, &r->stmt[s])) ||
            !SQL_SUCCEEDED(
                SQLPrepare(r->stmt[s], (SQLCHAR *)st->sql, SQL_NTS))) {
            print_diag(SQL_HANDLE_STMT, r->stmt[s], "prepare");
            return -1;
        }
        for (int i = 0; i < st->nparams; i++)
            if (bind_one(r->stmt[s], i, st->params[i], &r->p[s][i], o) < 0)
                return -1;
    }
    return 0;
}

/* Fetches every row of every result set of h, reading each column as
 * text. Returns the rows or -1. */
static long fetch_all(SQLHSTMT h) {
    char buf[256];
    long rows = 0;
    SQLRETURN rc;

    do {
        SQLSMALLINT cols = 0;

        SQLNumResultCols(h, &cols);
        for (;;) {
            if (cols == 0 || !SQL_SUCCEEDED(SQLFetch(h)))
                break;
            rows++;
            for (SQLUSMALLINT c = 1; c <= (SQLUSMALLINT)cols; c++) {
                SQLLEN ind = 0;

                SQLGetData(h, c, SQL_C_CHAR, buf, sizeof(buf), &ind);
            }
        }
        rc = SQLMoreResults(h);
    } while (SQL_SUCCEEDED(rc));
    return rc == SQL_NO_DATA ? rows : -1;
}

/* One execution: begin, every statement, commit (rollback on an error).
 * Returns the last statement's rows, or -1. */
static long run_once(struct runner *r) {
    long rows = 0;

    if (r->script.begin != NULL && exec_direct(r, r->script.begin) < 0)
        return -1;
    for (int s = 0; s < r->script.n && rows >= 0; s++) {
        SQLRETURN rc = SQLExecute(r->stmt[s]);

        if (rc != SQL_NO_DATA && !SQL_SUCCEEDED(rc)) {
            print_diag(SQL_HANDLE_STMT, r->stmt[s], "execute");
            rows = -1;
        } else if (rc != SQL_NO_DATA && s + 1 == r->script.n) {
            rows = fetch_all(r->stmt[s]);
        }
        SQLFreeStmt(r->stmt[s], SQL_CLOSE);
    }
    if (rows < 0) {
        if (r->script.begin != NULL)
            exec_direct(r, "ROLLBACK");
        return -1;
    }
    if (r->script.commit != NULL && exec_direct(r, r->script.commit) < 0)
        return -1;
    return rows;
}

/* Parses argv into *o. Returns 0, or -1 after printing the usage. */
static int parse_args(int argc, char **argv, struct options *o) {
    int c;

    memset(o, 0, sizeof(*o));
    o->n = 1000;
    o->warmup = 50;
    while ((c = getopt(argc, argv, "n:w:p:o:s:")) != -1) {
        if (c == 'n')
            o->n = strtol(optarg, NULL, 10);
        else if (c == 'w')
            o->warmup = strtol(optarg, NULL, 10);
        else if (c == 'p')
            o->pause_us = strtol(optarg, NULL, 10);
        else if (c == 'o')
            o->times = optarg;
        else if (c == 's')
            o->setup = optarg;
        else
            goto usage;
    }
    if (argc - optind < 1 || o->n < 1 || o->warmup < 0)
        goto usage;
    o->script = argv[optind];
    o->values = argv + optind + 1;
    o->nvalues = argc - optind - 1;
    return 0;
usage:
    fprintf(stderr, "usage: raw-odbc [-n N] [-w W] [-p USEC] [-o FILE] "
                    "[-s SETUP] STMTFILE NAME=VALUE...\n");
    return -1;
}

/* Frees the statements and the connection. */
static void close_runner(struct runner *r) {
    for (int s = 0; s < RAW_MAX_STMTS; s++)
        if (r->stmt[s] != SQL_NULL_HSTMT)
            SQLFreeHandle(SQL_HANDLE_STMT, r->stmt[s]);
    if (r->dbc != SQL_NULL_HDBC) {
        SQLDisconnect(r->dbc);
        SQLFreeHandle(SQL_HANDLE_DBC, r->dbc);
    }
    if (r->env != SQL_NULL_HENV)
        SQLFreeHandle(SQL_HANDLE_ENV, r->env);
    raw_script_free(&r->script);
}

/* raw_time's callback: one run of the script. */
static long once(void *ctx) { return run_once(ctx); }

int main(int argc, char **argv) {
    struct options o;
    struct runner *r = NULL;
    int rc = 1;

    if (parse_args(argc, argv, &o) < 0)
        return 64;
    r = calloc(1, sizeof(*r));
    if (r == NULL || connect_db(r, &o) < 0 || prepare(r, &o) < 0)
        goto out;
    rc = raw_time(o.warmup, o.n, o.pause_us, o.times, once, r) < 0;
out:
    if (r != NULL)
        close_runner(r);
    free(r);
    return rc;
}
