/* SPDX-License-Identifier: MIT */
/*
 * snapshot.c: a namespace's state as status and serve show it: the lease,
 * the live candidates and, for a namespace that names a sharded group, its
 * shards and how many each candidate leads, read in database time (the
 * model), and written as one JSON object ("status --json", serve's
 * /api/v1/namespaces).
 */
#include <build_config.h>

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clock.h"

/* odbc_leader_list_candidates callback: appends a copy to the snapshot. */
static void collect(void *ctx, const struct odbc_leader_candidate *c) {
    struct odbc_leader__snapshot *s = ctx;

    s->cands =
        odbc_leader__cli_push(s->cands, &s->cap, &s->n, c, sizeof(*c), &s->oom);
}

/* odbc_leader_list_shards callback: appends a copy to the snapshot. */
static void collect_shard(void *ctx, const struct odbc_leader_shard *r) {
    struct odbc_leader__snapshot *s = ctx;

    s->rows = odbc_leader__cli_push(s->rows, &s->rows_cap, &s->shards, r,
                                    sizeof(*r), &s->oom);
}

/* Counts, after the shards were read, the shards each candidate leads and
 * the unled ones. Returns 0 or ODBC_LEADER_ENOMEM. */
static int count_shards(struct odbc_leader__snapshot *s) {
    if (s->shards == 0)
        return 0;
    s->leads = calloc(s->n != 0 ? s->n : 1, sizeof(*s->leads));
    if (s->leads == NULL)
        return ODBC_LEADER_ENOMEM;
    for (size_t i = 0; i < s->shards; i++) {
        const struct odbc_leader_shard *r = &s->rows[i];
        size_t j;

        if (r->leader_id[0] == '\0' || r->expires_at_ms <= r->db_now_ms) {
            s->unled++;
            continue;
        }
        for (j = 0; j < s->n; j++) {
            if (strcmp(s->cands[j].id, r->leader_id) == 0) {
                s->leads[j]++;
                break;
            }
        }
        if (j == s->n)
            s->foreign++;
    }
    return 0;
}

/* Reads the lease, the candidates and (for a group) its shards into *s
 * (which owns the arrays afterwards). Returns 0 or a negative library
 * error. */
int odbc_leader__cli_snapshot_read(odbc_leader_t *h,
                                   struct odbc_leader__snapshot *s,
                                   int shards) {
    int rc;

    memset(s, 0, sizeof(*s));
    s->ns = odbc_leader_namespace(h);
    rc = odbc_leader_read_lease(h, &s->lease);
    if (rc < 0)
        return rc;
    s->have_clock = s->lease.db_now_ms > 0;
    if (s->have_clock)
        s->offset_ms = s->lease.db_now_ms - odbc_leader__wall_ms();
    s->present = s->lease.leader_id[0] != '\0' &&
                 s->lease.expires_at_ms > s->lease.db_now_ms;
    if (s->present)
        s->remaining_ms = s->lease.expires_at_ms - s->lease.db_now_ms;
    rc = odbc_leader_list_candidates(h, collect, s);
    if (rc >= 0 && !s->oom && shards)
        rc = odbc_leader_list_shards(h, collect_shard, s);
    if (rc >= 0 && s->oom)
        rc = ODBC_LEADER_ENOMEM;
    if (rc >= 0)
        rc = count_shards(s);
    if (rc >= 0 && !s->have_clock && s->shards > 0) {
        s->have_clock = 1; /* a group: its rows carry the clock */
        s->offset_ms = s->rows[0].db_now_ms - odbc_leader__wall_ms();
    }
    return rc < 0 ? rc : 0;
}

void odbc_leader__cli_snapshot_json(FILE *f,
                                    const struct odbc_leader__snapshot *s) {
    const struct odbc_leader_lease *l = &s->lease;

    fputs("{\"namespace\":", f);
    odbc_leader__cli_json_string(f, s->ns);
    fputs(",\"leader\":", f);
    if (s->present)
        odbc_leader__cli_json_string(f, l->leader_id);
    else
        fputs("null", f);
    fprintf(f,
            ",\"leader_present\":%s,\"term\":%lld,\"lease_remaining_ms\":%lld,",
            s->present ? "true" : "false", (long long)l->term,
            (long long)s->remaining_ms);
    if (s->have_clock)
        fprintf(f, "\"db_now_ms\":%lld,\"db_clock_offset_ms\":%lld,",
                (long long)l->db_now_ms, (long long)s->offset_ms);
    else
        fputs("\"db_now_ms\":null,\"db_clock_offset_ms\":null,", f);
    fprintf(f, "\"candidates_alive\":%zu,\"candidates\":[", s->n);
    for (size_t i = 0; i < s->n; i++) {
        const struct odbc_leader_candidate *c = &s->cands[i];

        fputs(i > 0 ? ",{\"id\":" : "{\"id\":", f);
        odbc_leader__cli_json_string(f, c->id);
        fprintf(f, ",\"heartbeat_age_ms\":%lld,\"leader\":%s",
                (long long)(c->db_now_ms - c->heartbeat_at_ms),
                s->present && strcmp(c->id, l->leader_id) == 0 ? "true"
                                                               : "false");
        if (s->shards > 0)
            fprintf(f, ",\"shards_led\":%u", (unsigned)s->leads[i]);
        fputs("}", f);
    }
    fputs("]", f);
    if (s->shards > 0)
        fprintf(f, ",\"group\":{\"shards\":%u,\"led\":%u,\"unled\":%u}",
                (unsigned)s->shards, (unsigned)(s->shards - s->unled),
                (unsigned)s->unled);
    fputs("}\n", f);
}

void odbc_leader__cli_snapshot_free(struct odbc_leader__snapshot *s) {
    free(s->cands);
    free(s->leads);
    free(s->rows);
    memset(s, 0, sizeof(*s));
}
