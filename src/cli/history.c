/* SPDX-License-Identifier: MIT */
/*
 * history.c: the rows of a namespace's history as the subcommands and
 * serve keep and print them: fires of the ledger and terms of the election
 * log, collected into lists from the library's callbacks and written as
 * JSON objects ("fires --json", "elections --json", serve's /api/v1).
 */
#include <build_config.h>

#include <inttypes.h>

#include "cli.h"

void odbc_leader__cli_keep_fire(void *ctx, const struct odbc_leader_fire *f) {
    struct odbc_leader__fire_list *l = ctx;
    struct odbc_leader_fire *v;

    if (l->nomem)
        return;
    v = odbc_leader__cli_grow(l->v, &l->cap, l->n, sizeof(*v));
    if (v == NULL) {
        l->nomem = 1;
        return;
    }
    l->v = v;
    l->v[l->n++] = *f;
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
        fprintf(out,
                ",\"finished_at_ms\":%" PRId64 ",\"status\":%d,"
                "\"duration_ms\":%" PRId64 "}",
                f->finished_at_ms, f->status,
                f->finished_at_ms - f->claimed_at_ms);
    else
        fputs(",\"finished_at_ms\":null,\"status\":null,"
              "\"duration_ms\":null}",
              out);
}

void odbc_leader__cli_keep_election(void *ctx,
                                    const struct odbc_leader_election *e) {
    struct odbc_leader__election_list *l = ctx;
    struct odbc_leader_election *v;

    if (l->nomem)
        return;
    v = odbc_leader__cli_grow(l->v, &l->cap, l->n, sizeof(*v));
    if (v == NULL) {
        l->nomem = 1;
        return;
    }
    l->v = v;
    l->v[l->n++] = *e;
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
    if (e->ended_how[0] != '\0')
        odbc_leader__cli_json_string(out, e->ended_how);
    else
        fputs("null", out);
    fputs(",\"handed_to\":", out);
    if (e->handed_to[0] != '\0')
        odbc_leader__cli_json_string(out, e->handed_to);
    else
        fputs("null", out);
    fputc('}', out);
}
