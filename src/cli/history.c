/* SPDX-License-Identifier: MIT */
/*
 * history.c: the rows of a namespace's history as the subcommands and
 * serve keep and print them: fires of the ledger and terms of the election
 * log, collected into lists from the library's callbacks and written as
 * JSON objects ("fires --json", "elections --json", serve's /api/v1), and
 * the steps the subcommands fires and elections share: read, check,
 * print the newest rows.
 */
#include <build_config.h>

#include <inttypes.h>
#include <string.h>

#include "cli.h"

void odbc_leader__cli_keep_fire(void *ctx, const struct odbc_leader_fire *f) {
    struct odbc_leader__fire_list *l = ctx;

    l->v =
        odbc_leader__cli_push(l->v, &l->cap, &l->n, f, sizeof(*f), &l->nomem);
}

/* 1 when f has an outcome (done or failed; before the lifecycle: any
 * finished fire). */
static int has_outcome(const struct odbc_leader_fire *f) {
    if (f->state[0] == '\0')
        return f->finished_at_ms != 0;
    return strcmp(f->state, "done") == 0 || strcmp(f->state, "failed") == 0;
}

const char *odbc_leader__cli_fire_state(const struct odbc_leader_fire *f) {
    if (f->state[0] != '\0')
        return f->state;
    if (f->finished_at_ms == 0)
        return "running";
    return f->status == 0 ? "done" : "failed";
}

void odbc_leader__cli_fire_json(FILE *out, const struct odbc_leader_fire *f) {
    fputs("{\"job\":", out);
    odbc_leader__cli_json_string(out, f->job);
    fprintf(out,
            ",\"fire_ms\":%" PRId64 ",\"term\":%" PRId64 ",\"claimed_by\":",
            f->fire_ms, f->term);
    odbc_leader__cli_json_string(out, f->claimed_by);
    fprintf(out, ",\"claimed_at_ms\":%" PRId64, f->claimed_at_ms);
    if (f->finished_at_ms != 0)
        fprintf(out, ",\"finished_at_ms\":%" PRId64 ",\"duration_ms\":%" PRId64,
                f->finished_at_ms, f->finished_at_ms - f->claimed_at_ms);
    else
        fputs(",\"finished_at_ms\":null,\"duration_ms\":null", out);
    if (has_outcome(f))
        fprintf(out, ",\"status\":%d", f->status);
    else
        fputs(",\"status\":null", out);
    fputs(",\"state\":", out);
    odbc_leader__cli_json_string(out, odbc_leader__cli_fire_state(f));
    fprintf(out, ",\"attempt\":%d,\"max_attempts\":%d}", f->attempt,
            f->max_attempts);
}

void odbc_leader__cli_keep_job(void *ctx, const struct odbc_leader_job *j) {
    struct odbc_leader__job_list *l = ctx;

    l->v =
        odbc_leader__cli_push(l->v, &l->cap, &l->n, j, sizeof(*j), &l->nomem);
}

void odbc_leader__cli_keep_schedule(void *ctx,
                                    const struct odbc_leader_schedule *s) {
    struct odbc_leader__schedule_list *l = ctx;

    l->v =
        odbc_leader__cli_push(l->v, &l->cap, &l->n, s, sizeof(*s), &l->nomem);
}

/* Writes ms, or null for 0, after the key. */
static void ms_or_null(FILE *out, const char *key, int64_t ms) {
    if (ms > 0)
        fprintf(out, ",\"%s\":%" PRId64, key, ms);
    else
        fprintf(out, ",\"%s\":null", key);
}

void odbc_leader__cli_job_json(FILE *out, const struct odbc_leader_job *j) {
    fputs("{\"job\":", out);
    odbc_leader__cli_json_string(out, j->job);
    fprintf(out, ",\"paused\":%s", j->paused ? "true" : "false");
    ms_or_null(out, "changed_at_ms", j->changed_at_ms);
    fputs(",\"changed_by\":", out);
    odbc_leader__cli_json_or_null(out, j->changed_by);
    fprintf(out,
            ",\"fires\":%" PRId64 ",\"running\":%" PRId64
            ",\"offered\":%" PRId64,
            j->fires, j->running, j->offered);
    ms_or_null(out, "last_fire_ms", j->last_fire_ms);
    ms_or_null(out, "last_done_ms", j->last_done_ms);
    ms_or_null(out, "last_failed_ms", j->last_failed_ms);
    fputc('}', out);
}

void odbc_leader__cli_keep_election(void *ctx,
                                    const struct odbc_leader_election *e) {
    struct odbc_leader__election_list *l = ctx;

    l->v =
        odbc_leader__cli_push(l->v, &l->cap, &l->n, e, sizeof(*e), &l->nomem);
}

void odbc_leader__cli_election_json(FILE *out,
                                    const struct odbc_leader_election *e) {
    fprintf(out, "{\"term\":%" PRId64 ",\"leader_id\":", e->term);
    odbc_leader__cli_json_string(out, e->leader_id);
    fprintf(out, ",\"started_at_ms\":%" PRId64, e->started_at_ms);
    if (e->ended_at_ms != 0)
        fprintf(out, ",\"ended_at_ms\":%" PRId64 ",\"duration_ms\":%" PRId64,
                e->ended_at_ms, e->ended_at_ms - e->started_at_ms);
    else
        fputs(",\"ended_at_ms\":null,\"duration_ms\":null", out);
    fputs(",\"ended_how\":", out);
    odbc_leader__cli_json_or_null(out, e->ended_how);
    fputs(",\"handed_to\":", out);
    odbc_leader__cli_json_or_null(out, e->handed_to);
    fputc('}', out);
}

size_t odbc_leader__cli_newest(size_t n, long limit) {
    return limit > 0 && n > (size_t)limit ? n - (size_t)limit : 0;
}

int odbc_leader__cli_list_read(struct odbc_leader__cli *c,
                               const odbc_leader_t *h, const char *what, int rc,
                               int nomem) {
    if (rc < 0) {
        odbc_leader__cli_err(c, "%s of %s failed: %s", what,
                             odbc_leader_namespace(h),
                             odbc_leader_strerror(rc));
        return odbc_leader__cli_exit_code(rc);
    }
    if (nomem) {
        odbc_leader__cli_err(c, "out of memory");
        return EX_OSERR;
    }
    return 0;
}

void odbc_leader__cli_print_rows(const void *v, size_t n, size_t size,
                                 const struct odbc_leader__cli_list_opts *o,
                                 void (*header)(void),
                                 void (*print)(const void *row, int json)) {
    if (!o->json)
        header();
    for (size_t i = odbc_leader__cli_newest(n, o->limit); i < n; i++)
        print((const char *)v + i * size, o->json);
}
