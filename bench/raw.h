/* SPDX-License-Identifier: MIT */
/*
 * raw.h: what the raw clients of make bench (raw-odbc.c, raw-sqlite.c,
 * raw-mariadb.c) share: the statement file that bench/bench-dialect prints
 * from the library's own expansion of a dialect, NAME=VALUE parameter
 * values, and timing output.
 */
#ifndef BENCH_RAW_H
#define BENCH_RAW_H

#include <stdint.h>

#define RAW_MAX_STMTS 8
#define RAW_MAX_PARAMS 32

/* One statement: its SQL and the names of its parameters, in order. */
struct raw_stmt {
    char *sql;                    /* owned */
    char *params[RAW_MAX_PARAMS]; /* owned */
    int nparams;
};

/* A rendered section: optional connect keys, begin/commit texts and its
 * statements. */
struct raw_script {
    char *connect_keys; /* owned, NULL when absent */
    char *begin;        /* owned, NULL when absent */
    char *commit; /* owned, NULL when absent */
    struct raw_stmt stmt[RAW_MAX_STMTS];
    int n;
};

/*
 * Reads the file at path ("-- @connect-keys KEYS", "-- @begin SQL",
 * "-- @commit SQL", then "-- @stmt NAMES" before each statement's lines;
 * bench-dialect.c prints it) into *s. Returns 0, or
 * -1 after printing the reason; free *s with raw_script_free() either way.
 */
int raw_script_load(const char *path, struct raw_script *s);

/* Frees what *s owns. */
void raw_script_free(struct raw_script *s);

/* Returns the value of NAME among the "NAME=VALUE" strings of argv[0..n)
 * (borrowed from argv), or NULL. */
const char *raw_param(char **argv, int n, const char *name);

/* 0 when the named parameter is bound as text (ns, id, to, job), 1 when
 * as a 64-bit integer (every other one), as the library binds them. */
int raw_param_is_int(const char *name);

/* Nanoseconds on CLOCK_MONOTONIC. */
int64_t raw_now_ns(void);

/*
 * Prints "executions=N median_us=M p99_us=P rows=R" (t sorted in place)
 * and, when path is not NULL, appends each duration in microseconds to
 * that file. Returns 0, or -1 when the file cannot be written.
 */
int raw_report(int64_t *t, long n, long rows, const char *path);

/*
 * The timing loop every raw client shares: warmup untimed calls of once(ctx),
 * then n calls timed one by one on CLOCK_MONOTONIC, each followed by an
 * untimed pause of pause_us microseconds, then raw_report(). once returns
 * the rows it saw or a negative value on failure. Returns 0, or -1 when a
 * call failed, memory ran out or the report could not be written.
 */
int raw_time(long warmup, long n, long pause_us, const char *path,
             long (*once)(void *ctx), void *ctx);

#endif
