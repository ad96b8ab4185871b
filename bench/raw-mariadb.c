/* SPDX-License-Identifier: MIT */
/*
 * raw-mariadb.c: the MariaDB baseline of make bench's tick latency: the
 * same statement as the library's tick, run through the MariaDB C client
 * (Connector/C) as a server-side prepared statement, with no ODBC layer and
 * no election logic.
 *
 *   raw-mariadb [-n N] [-w W] [-p USEC] [-o FILE] [-s SETUPFILE] -h HOST -P
 * PORT -u USER -D DB STMTFILE NAME=VALUE...
 *
 * The password comes from the environment variable RAW_MARIADB_PASSWORD
 * (never printed). STMTFILE and SETUPFILE are operations printed by
 * bench/bench-dialect (the library's own expansion of the dialect, with ?
 * markers; their connect keys are ODBC keys and do not apply here):
 * SETUPFILE's statements (the
 * dialect's on_connect) run once with mysql_real_query after connecting;
 * STMTFILE's one statement is prepared once, its ? parameters bound in
 * order from the NAME=VALUE arguments. One execution is
 * mysql_stmt_execute, then every result set stored and fetched (the block's
 * SELECT, then its final status). W untimed executions, then N timed ones,
 * each followed by a pause of USEC microseconds with -p (see bench-tick.c);
 * prints raw.h's report line, and appends the microseconds to FILE with -o.
 * Exits 1 on any client or server error.
 */
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "raw.h"

#define MAX_COLS 16
#define COL_LEN 256

/* Command-line options; strings are borrowed from argv. */
struct options {
    long n, warmup;
    long pause_us;     /* -p: pause after each timed execution, untimed */
    const char *times; /* -o, may be NULL */
    const char *setup; /* -s, may be NULL */
    const char *host, *user, *db;
    unsigned port;
    const char *script;
    char **values; /* NAME=VALUE arguments */
    int nvalues;
};

/* Parameter values as bound: text or 64-bit integers. */
struct params {
    MYSQL_BIND bind[RAW_MAX_PARAMS];
    long long ints[RAW_MAX_PARAMS];
    unsigned long lens[RAW_MAX_PARAMS];
};

/* Result buffers, one per column, reused by every result set. */
struct columns {
    MYSQL_BIND bind[MAX_COLS];
    char buf[MAX_COLS][COL_LEN];
    unsigned long len[MAX_COLS];
    my_bool null[MAX_COLS];
};

/* The connection, the prepared statement and the buffers it uses. */
struct runner {
    MYSQL *conn;
    MYSQL_STMT *stmt;
    struct raw_script script;
    struct params p;
    struct columns c;
};

/* Connects and runs the setup statements. Returns 0 or -1. */
static int connect_db(struct runner *r, const struct options *o) {
    const char *pwd = getenv("RAW_MARIADB_PASSWORD");
    struct raw_script setup;
    int rc = 0;

    r->conn = mysql_init(NULL);
    if (r->conn == NULL ||
        mysql_real_connect(r->conn, o->host, o->user, pwd, o->db, o->port, NULL,
                           CLIENT_MULTI_RESULTS) == NULL) {
        fprintf(stderr, "raw-mariadb: connect: %s\n",
                r->conn ? mysql_error(r->conn) : "out of memory");
        return -1;
    }
    if (o->setup == NULL)
        return 0;
    if (raw_script_load(o->setup, &setup) < 0)
        rc = -1;
    for (int i = 0; rc == 0 && i < setup.n; i++) {
        if (mysql_real_query(r->conn, setup.stmt[i].sql,
                             strlen(setup.stmt[i].sql)) != 0) {
            fprintf(stderr, "raw-mariadb: setup: %s\n", mysql_error(r->conn));
            rc = -1;
        }
    }
    raw_script_free(&setup);
    return rc;
}

/* Fills in p's bindings for the parameter names of st. Returns 0, or -1
 * when a value is missing. */
static int bind_params(struct params *p, const struct raw_stmt *st,
                       const struct options *o) {
    memset(p, 0, sizeof(*p));
    for (int i = 0; i < st->nparams; i++) {
        const char *v = raw_param(o->values, o->nvalues, st->params[i]);

        if (v == NULL) {
            fprintf(stderr, "raw-mariadb: no value for %s\n", st->params[i]);
            return -1;
        }
        if (raw_param_is_int(st->params[i])) {
            p->ints[i] = strtoll(v, NULL, 10);
            p->bind[i].buffer_type = MYSQL_TYPE_LONGLONG;
            p->bind[i].buffer = &p->ints[i];
        } else {
            p->lens[i] = strlen(v);
            p->bind[i].buffer_type = MYSQL_TYPE_STRING;
            p->bind[i].buffer = (void *)v;
            p->bind[i].buffer_length = p->lens[i];
            p->bind[i].length = &p->lens[i];
        }
    }
    return 0;
}

/* Loads, prepares and binds the statement. Returns 0 or -1. */
static int prepare(struct runner *r, const struct options *o) {
    const struct raw_stmt *st;

    if (raw_script_load(o->script, &r->script) < 0)
        return -1;
    if (r->script.n != 1) {
        fprintf(stderr, "raw-mariadb: expected one statement\n");
        return -1;
    }
    st = &r->script.stmt[0];
    r->stmt = mysql_stmt_init(r->conn);
    if (r->stmt == NULL ||
        mysql_stmt_prepare(r->stmt, st->sql, strlen(st->sql)) != 0 ||
        bind_params(&r->p, st, o) < 0 ||
        mysql_stmt_bind_param(r->stmt, r->p.bind) != 0) {
        fprintf(stderr, "raw-mariadb: prepare: %s\n",
                r->stmt ? mysql_stmt_error(r->stmt) : "out of memory");
        return -1;
    }
    return 0;
}

/* Stores and fetches the current result set. Returns its rows or -1. */
static long fetch_set(struct runner *r) {
    unsigned cols = mysql_stmt_field_count(r->stmt);
    long rows = 0;
    int rc;

    if (cols == 0)
        return 0;
    if (cols > MAX_COLS)
        return -1;
    memset(r->c.bind, 0, sizeof(r->c.bind));
    for (unsigned i = 0; i < cols; i++) {
        r->c.bind[i].buffer_type = MYSQL_TYPE_STRING;
        r->c.bind[i].buffer = r->c.buf[i];
        r->c.bind[i].buffer_length = COL_LEN;
        r->c.bind[i].length = &r->c.len[i];
        r->c.bind[i].is_null = &r->c.null[i];
    }
    if (mysql_stmt_bind_result(r->stmt, r->c.bind) != 0 ||
        mysql_stmt_store_result(r->stmt) != 0)
        return -1;
    for (;;) {
        rc = mysql_stmt_fetch(r->stmt);
        if (rc != 0 && rc != MYSQL_DATA_TRUNCATED)
            break;
        rows++;
    }
    return rc == MYSQL_NO_DATA ? rows : -1;
}

/* One execution and all its result sets. Returns the rows or -1. */
static long run_once(struct runner *r) {
    long rows = 0;
    int next;

    if (mysql_stmt_execute(r->stmt) != 0)
        goto fail;
    do {
        long got = fetch_set(r);

        if (got < 0)
            goto fail;
        rows += got;
        next = mysql_stmt_next_result(r->stmt);
    } while (next == 0);
    if (next > 0)
        goto fail;
    mysql_stmt_free_result(r->stmt);
    return rows;
fail:
    fprintf(stderr, "raw-mariadb: execute: %s\n", mysql_stmt_error(r->stmt));
    return -1;
}

/* Parses argv into *o. Returns 0, or -1 after printing the usage. */
static int parse_args(int argc, char **argv, struct options *o) {
    int c;

    memset(o, 0, sizeof(*o));
    o->n = 1000;
    o->warmup = 50;
    while ((c = getopt(argc, argv, "n:w:p:o:s:h:P:u:D:")) != -1) {
        switch (c) {
        case 'n':
            o->n = strtol(optarg, NULL, 10);
            break;
        case 'w':
            o->warmup = strtol(optarg, NULL, 10);
            break;
        case 'p':
            o->pause_us = strtol(optarg, NULL, 10);
            break;
        case 'o':
            o->times = optarg;
            break;
        case 's':
            o->setup = optarg;
            break;
        case 'h':
            o->host = optarg;
            break;
        case 'P':
            o->port = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'u':
            o->user = optarg;
            break;
        case 'D':
            o->db = optarg;
            break;
        default:
            goto usage;
        }
    }
    if (argc - optind < 1 || o->n < 1 || o->warmup < 0 || o->host == NULL)
        goto usage;
    o->script = argv[optind];
    o->values = argv + optind + 1;
    o->nvalues = argc - optind - 1;
    return 0;
usage:
    fprintf(stderr,
            "usage: raw-mariadb [-n N] [-w W] [-p USEC] [-o FILE] [-s SETUP] "
            "-h HOST -P PORT -u USER -D DB STMTFILE NAME=VALUE...\n");
    return -1;
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
    if (r != NULL) {
        if (r->stmt != NULL)
            mysql_stmt_close(r->stmt);
        if (r->conn != NULL)
            mysql_close(r->conn);
        raw_script_free(&r->script);
    }
    free(r);
    return rc;
}
