/* SPDX-License-Identifier: MIT */
/*
 * raw-sqlite.c: the SQLite baseline of make bench's tick latency: the same
 * transaction as the library's tick, run through the SQLite C API with no
 * ODBC layer and no election logic.
 *
 *   raw-sqlite [-n N] [-w W] [-p USEC] [-o FILE] [-s SQL]... DBPATH STMTFILE
 *              NAME=VALUE...
 *
 * STMTFILE is an operation printed by bench/bench-dialect (the library's
 * own expansion of the dialect: its @begin/@commit and statements, whose ?
 * markers are bound in order from the NAME=VALUE arguments of the names
 * its "-- @stmt" lines give; its connect keys are ODBC keys and do not
 * apply here). Each -s statement runs once after
 * opening, before anything else (the connect-time pragmas). Every
 * statement is prepared once; one execution is begin, each statement
 * stepped to the end (the last one's rows read column by column), commit.
 * W untimed executions, then N timed ones, each followed by a pause of USEC
 * microseconds with -p (see bench-tick.c); prints raw.h's report line, and
 * appends the microseconds to FILE with -o. Exits 1 on any SQLite error.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "raw.h"

#define MAX_SETUP 8

/* Command-line options; strings are borrowed from argv. */
struct options {
    long n, warmup;
    long pause_us;     /* -p: pause after each timed execution, untimed */
    const char *times; /* -o, may be NULL */
    const char *setup[MAX_SETUP];
    int nsetup;
    const char *db;
    const char *script;
    char **values; /* NAME=VALUE arguments */
    int nvalues;
};

/* The open database and its prepared statements. */
struct runner {
    sqlite3 *db;
    struct raw_script script;
    sqlite3_stmt *stmt[RAW_MAX_STMTS];
};

/* Runs sql with sqlite3_exec. Returns 0, or -1 after printing the error. */
static int exec_sql(sqlite3 *db, const char *sql) {
    char *msg = NULL;

    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    fprintf(stderr, "raw-sqlite: %s: %s\n", sql, msg ? msg : "?");
    sqlite3_free(msg);
    return -1;
}

/* Binds the ? markers of st, named in order by rs, from the NAME=VALUE
 * arguments. Returns 0, or -1 when a value is missing or the counts
 * differ. */
static int bind_all(sqlite3_stmt *st, const struct raw_stmt *rs,
                    const struct options *o) {
    int n = sqlite3_bind_parameter_count(st);

    if (n != rs->nparams) {
        fprintf(stderr, "raw-sqlite: %d parameters, %d names\n", n,
                rs->nparams);
        return -1;
    }
    for (int i = 1; i <= n; i++) {
        const char *name = rs->params[i - 1];
        const char *v = raw_param(o->values, o->nvalues, name);
        int rc;

        if (v == NULL) {
            fprintf(stderr, "raw-sqlite: no value for %s\n", name);
            return -1;
        }
        if (raw_param_is_int(name))
            rc = sqlite3_bind_int64(st, i, strtoll(v, NULL, 10));
        else
            rc = sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
        if (rc != SQLITE_OK)
            return -1;
    }
    return 0;
}

/* Opens the database, runs the setup statements, prepares and binds the
 * script. Returns 0 or -1; r holds what must be freed either way. */
static int open_runner(struct runner *r, const struct options *o) {
    if (raw_script_load(o->script, &r->script) < 0)
        return -1;
    if (sqlite3_open_v2(o->db, &r->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                        NULL) != SQLITE_OK) {
        fprintf(stderr, "raw-sqlite: %s: %s\n", o->db, sqlite3_errmsg(r->db));
        return -1;
    }
    for (int i = 0; i < o->nsetup; i++)
        if (exec_sql(r->db, o->setup[i]) < 0)
            return -1;
    for (int i = 0; i < r->script.n; i++) {
        if (sqlite3_prepare_v2(r->db, r->script.stmt[i].sql, -1, &r->stmt[i],
                               NULL) != SQLITE_OK) {
            fprintf(stderr, "raw-sqlite: prepare: %s\n", sqlite3_errmsg(r->db));
            return -1;
        }
        if (bind_all(r->stmt[i], &r->script.stmt[i], o) < 0)
            return -1;
    }
    return 0;
}

/* Steps st to the end, reading each row's columns when read is set.
 * Returns the rows seen, or -1 on an error. */
static long step_all(sqlite3 *db, sqlite3_stmt *st, int read) {
    long rows = 0;
    int rc;

    for (;;) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW)
            break;
        rows++;
        for (int c = 0; read && c < sqlite3_column_count(st); c++)
            (void)sqlite3_column_text(st, c);
    }
    sqlite3_reset(st);
    if (rc == SQLITE_DONE)
        return rows;
    fprintf(stderr, "raw-sqlite: step: %s\n", sqlite3_errmsg(db));
    return -1;
}

/* One execution: begin, every statement, commit (rollback on an error).
 * Returns the last statement's rows, or -1. */
static long run_once(struct runner *r) {
    long rows = 0;

    if (r->script.begin != NULL && exec_sql(r->db, r->script.begin) < 0)
        return -1;
    for (int i = 0; i < r->script.n && rows >= 0; i++)
        rows = step_all(r->db, r->stmt[i], i + 1 == r->script.n);
    if (rows < 0) {
        if (r->script.begin != NULL)
            exec_sql(r->db, "ROLLBACK");
        return -1;
    }
    if (r->script.commit != NULL && exec_sql(r->db, r->script.commit) < 0)
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
        else if (c == 'p')
            o->pause_us = strtol(optarg, NULL, 10);
        else if (c == 'w')
            o->warmup = strtol(optarg, NULL, 10);
        else if (c == 'o')
            o->times = optarg;
        else if (c == 's' && o->nsetup < MAX_SETUP)
            o->setup[o->nsetup++] = optarg;
        else
            goto usage;
    }
    if (argc - optind < 2 || o->n < 1 || o->warmup < 0)
        goto usage;
    o->db = argv[optind];
    o->script = argv[optind + 1];
    o->values = argv + optind + 2;
    o->nvalues = argc - optind - 2;
    return 0;
usage:
    fprintf(stderr,
            "usage: raw-sqlite [-n N] [-w W] [-p USEC] [-o FILE] [-s SQL]... "
            "DBPATH STMTFILE NAME=VALUE...\n");
    return -1;
}

/* raw_time's callback: one run of the script. */
static long once(void *ctx) { return run_once(ctx); }

int main(int argc, char **argv) {
    struct options o;
    struct runner r;
    int rc = 1;

    if (parse_args(argc, argv, &o) < 0)
        return 64;
    memset(&r, 0, sizeof(r));
    if (open_runner(&r, &o) < 0)
        goto out;
    rc = raw_time(o.warmup, o.n, o.pause_us, o.times, once, &r) < 0;
out:
    for (int i = 0; i < RAW_MAX_STMTS; i++)
        sqlite3_finalize(r.stmt[i]);
    sqlite3_close(r.db);
    raw_script_free(&r.script);
    return rc;
}
