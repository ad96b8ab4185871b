/* SPDX-License-Identifier: MIT */
/*
 * raw.c: the statement-file reader, parameter lookup and timing report
 * shared by the raw clients of make bench (see raw.h).
 */
#include "raw.h"
#include "tickstats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Appends line to *text (owned, may be NULL), newline-separated. Returns
 * 0 or -1 when out of memory. */
static int append_line(char **text, const char *line) {
    size_t old = *text != NULL ? strlen(*text) : 0;
    char *p = realloc(*text, old + strlen(line) + 2);

    if (p == NULL)
        return -1;
    if (old > 0)
        p[old++] = '\n';
    strcpy(p + old, line);
    *text = p;
    return 0;
}

/* Starts a new statement whose parameter names are the words of names.
 * Returns 0 or -1. */
static int start_stmt(struct raw_script *s, char *names) {
    struct raw_stmt *st;
    char *save = NULL;

    if (s->n == RAW_MAX_STMTS)
        return -1;
    st = &s->stmt[s->n++];
    for (char *w = strtok_r(names, " \t", &save); w != NULL;
         w = strtok_r(NULL, " \t", &save)) {
        if (st->nparams == RAW_MAX_PARAMS)
            return -1;
        st->params[st->nparams] = strdup(w);
        if (st->params[st->nparams++] == NULL)
            return -1;
    }
    return 0;
}

/* Handles one line of the file. Returns 0 or -1. */
static int load_line(struct raw_script *s, char *line) {
    line[strcspn(line, "\r\n")] = '\0';
    if (strncmp(line, "-- @connect-keys ", 17) == 0) {
        s->connect_keys = strdup(line + 17);
        return s->connect_keys != NULL ? 0 : -1;
    }
    if (strncmp(line, "-- @begin ", 10) == 0) {
        s->begin = strdup(line + 10);
        return s->begin != NULL ? 0 : -1;
    }
    if (strncmp(line, "-- @commit ", 11) == 0) {
        s->commit = strdup(line + 11);
        return s->commit != NULL ? 0 : -1;
    }
    if (strncmp(line, "-- @stmt", 8) == 0)
        return start_stmt(s, line + 8);
    if (s->n == 0)
        return -1;
    return append_line(&s->stmt[s->n - 1].sql, line);
}

int raw_script_load(const char *path, struct raw_script *s) {
    FILE *f = fopen(path, "r");
    char line[4096];
    int rc = 0;

    memset(s, 0, sizeof(*s));
    if (f == NULL) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    while (rc == 0 && fgets(line, sizeof(line), f) != NULL)
        rc = load_line(s, line);
    fclose(f);
    for (int i = 0; rc == 0 && i < s->n; i++)
        if (s->stmt[i].sql == NULL)
            rc = -1;
    if (rc < 0 || s->n == 0) {
        fprintf(stderr, "%s: not a rendered statement file\n", path);
        return -1;
    }
    return 0;
}

void raw_script_free(struct raw_script *s) {
    free(s->connect_keys);
    free(s->begin);
    free(s->commit);
    for (int i = 0; i < s->n; i++) {
        free(s->stmt[i].sql);
        for (int j = 0; j < s->stmt[i].nparams; j++)
            free(s->stmt[i].params[j]);
    }
    memset(s, 0, sizeof(*s));
}

const char *raw_param(char **argv, int n, const char *name) {
    size_t len = strlen(name);

    for (int i = 0; i < n; i++)
        if (strncmp(argv[i], name, len) == 0 && argv[i][len] == '=')
            return argv[i] + len + 1;
    return NULL;
}

int raw_param_is_int(const char *name) {
    return strcmp(name, "ns") != 0 && strcmp(name, "id") != 0 &&
           strcmp(name, "to") != 0 && strcmp(name, "job") != 0;
}

int64_t raw_now_ns(void) { return tickstats_mono_ns(); }

int raw_report(int64_t *t, long n, long rows, const char *path) {
    double median, p99;
    FILE *f;
    int rc = 0;

    if (path != NULL) {
        f = fopen(path, "a");
        if (f == NULL) {
            fprintf(stderr, "%s: %s\n", path, strerror(errno));
            return -1;
        }
        for (long i = 0; i < n; i++)
            fprintf(f, "%.1f\n", (double)t[i] / 1000.0);
        if (fclose(f) != 0)
            rc = -1;
    }
    tickstats_summary(t, n, &median, &p99);
    printf("executions=%ld median_us=%.1f p99_us=%.1f rows=%ld\n", n, median,
           p99, rows);
    return rc;
}

int raw_time(long warmup, long n, long pause_us, const char *path,
             long (*once)(void *ctx), void *ctx) {
    int64_t *t = calloc((size_t)n, sizeof(*t));
    long rows = 0;
    int rc = -1;

    if (t == NULL)
        return -1;
    for (long i = 0; i < warmup; i++)
        if (once(ctx) < 0)
            goto out;
    for (long i = 0; i < n; i++) {
        int64_t start = raw_now_ns();
        long got = once(ctx);

        t[i] = raw_now_ns() - start;
        if (got < 0)
            goto out;
        rows += got;
        if (pause_us > 0)
            usleep((useconds_t)pause_us);
    }
    rc = raw_report(t, n, rows, path);
out:
    free(t);
    return rc;
}
