/* SPDX-License-Identifier: MIT */
/*
 * status.c: "odbc-leader status": the leader, term, lease and live
 * candidates of one namespace (and of a sharded group, the shards each
 * member leads), as a table, JSON or Prometheus text. It
 * does not register as a candidate: the handle never ticks, and its
 * unregister at destroy matches no row.
 */
#include <build_config.h>

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clock.h"

enum format { FMT_TABLE, FMT_JSON, FMT_PROMETHEUS };

/* The namespace as read from the database, in database time. */
struct snapshot {
    const char *ns; /* borrowed from the handle */
    struct odbc_leader_lease lease;
    int present;          /* a leader whose lease has not expired */
    int64_t remaining_ms; /* lease left when present, else 0 */
    int have_clock;       /* the database's time came with the lease (it
                             does not without a lease row) */
    int64_t offset_ms;    /* database clock minus this host's wall clock,
                             read together with the lease (a step of
                             either shows here); when have_clock */
    struct odbc_leader_candidate *cands; /* owned */
    size_t n, cap;
    int oom;
    /* a group (the namespace names one): its shards, and per candidate
     * (same order as cands) how many it leads; unled counts the shards
     * vacant or expired, foreign those led by no live candidate */
    uint32_t shards, unled, foreign;
    uint32_t *leads;                /* owned, n entries, when shards > 0 */
    struct odbc_leader_shard *rows; /* owned, shards entries */
    size_t rows_cap;
};

static const char status_help[] =
    "Usage: odbc-leader status [OPTIONS]\n"
    "Show the namespace's leader, term (fencing token), lease remaining and\n"
    "the live candidates with the age of their last heartbeat, all in\n"
    "database time; for a sharded group (-n GROUP), its shards led and\n"
    "unled and how many each member leads. Does not take part in the\n"
    "election.\n"
    "\n"
    "  --json                one JSON object\n"
    "  --format FORMAT       table (default), json or prometheus (text\n"
    "                        exposition, e.g. for a textfile "
    "collector)\n" ODBC_LEADER__CLI_COMMON_HELP "\n"
    "Exit status: 0; 64 usage; 69 database unavailable; 78 configuration.\n"
    "\n"
    "Examples:\n"
    "  odbc-leader status -d sched -n report\n"
    "  odbc-leader status -d sched -n report --format=prometheus\n";

/* ---- reading ---- */

/* odbc_leader_list_candidates callback: appends a copy to the snapshot. */
static void collect(void *ctx, const struct odbc_leader_candidate *c) {
    struct snapshot *s = ctx;

    if (s->oom)
        return;
    if (s->n == s->cap) {
        size_t cap = s->cap != 0 ? s->cap * 2 : 8;
        struct odbc_leader_candidate *v = realloc(s->cands, cap * sizeof(*v));

        if (v == NULL) {
            s->oom = 1;
            return;
        }
        s->cands = v;
        s->cap = cap;
    }
    s->cands[s->n++] = *c;
}

/* odbc_leader_list_shards callback: appends a copy to the snapshot. */
static void collect_shard(void *ctx, const struct odbc_leader_shard *r) {
    struct snapshot *s = ctx;

    if (s->oom)
        return;
    if (s->shards == s->rows_cap) {
        size_t cap = s->rows_cap != 0 ? s->rows_cap * 2 : 64;
        struct odbc_leader_shard *v = realloc(s->rows, cap * sizeof(*v));

        if (v == NULL) {
            s->oom = 1;
            return;
        }
        s->rows = v;
        s->rows_cap = cap;
    }
    s->rows[s->shards++] = *r;
}

/* Counts, after the shards were read, the shards each candidate leads and
 * the unled ones. Returns 0 or ODBC_LEADER_ENOMEM. */
static int count_shards(struct snapshot *s) {
    if (s->shards == 0)
        return 0;
    s->leads = calloc(s->n != 0 ? s->n : 1, sizeof(*s->leads));
    if (s->leads == NULL)
        return ODBC_LEADER_ENOMEM;
    for (uint32_t i = 0; i < s->shards; i++) {
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
static int read_snapshot(odbc_leader_t *h, struct snapshot *s) {
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
    if (rc >= 0 && !s->oom)
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

/* ---- output ---- */

static double secs(int64_t ms) { return (double)ms / 1000.0; }

/* The human table. conn is the redacted connection string. */
static void print_table(const struct snapshot *s, const char *conn) {
    const struct odbc_leader_lease *l = &s->lease;

    printf("database:   %s\n", conn);
    printf("namespace:  %s\n", s->ns);
    if (s->shards > 0 && l->term == 0)
        ; /* a group: no lease of its own, its shards follow */
    else if (s->present)
        printf("leader:     %s (term %lld, lease %.1f s left)\n", l->leader_id,
               (long long)l->term, secs(s->remaining_ms));
    else if (l->leader_id[0] != '\0')
        printf("leader:     none (lease of %s, term %lld, expired %.1f s "
               "ago)\n",
               l->leader_id, (long long)l->term,
               secs(l->db_now_ms - l->expires_at_ms));
    else if (l->term > 0)
        printf("leader:     none (last term %lld)\n", (long long)l->term);
    else
        printf("leader:     none (no term yet)\n");
    if (s->have_clock)
        printf("db clock:   %+.1f s from this host's clock\n",
               secs(s->offset_ms));
    else
        printf("db clock:   not read (no lease row yet)\n");
    if (s->shards > 0)
        printf("group:      %u shards, %u led, %u unled%s\n",
               (unsigned)s->shards, (unsigned)(s->shards - s->unled),
               (unsigned)s->unled,
               s->foreign > 0 ? " (some led by members not alive)" : "");
    printf("candidates: %zu alive\n", s->n);
    if (s->n > 0 && s->shards > 0)
        printf("  %-36s  %-16s  %s\n", "ID", "LAST HEARTBEAT", "SHARDS LED");
    else if (s->n > 0)
        printf("  %-36s  %s\n", "ID", "LAST HEARTBEAT");
    for (size_t i = 0; i < s->n; i++) {
        const struct odbc_leader_candidate *c = &s->cands[i];
        char beat[32];

        snprintf(beat, sizeof(beat), "%.1f s ago",
                 secs(c->db_now_ms - c->heartbeat_at_ms));
        if (s->shards > 0)
            printf("  %-36s  %-16s  %u\n", c->id, beat, (unsigned)s->leads[i]);
        else
            printf("  %-36s  %s%s\n", c->id, beat,
                   s->present && strcmp(c->id, l->leader_id) == 0 ? "  (leader)"
                                                                  : "");
    }
}

/* One JSON object. */
static void print_json(const struct snapshot *s) {
    const struct odbc_leader_lease *l = &s->lease;

    fputs("{\"namespace\":", stdout);
    odbc_leader__cli_json_string(stdout, s->ns);
    fputs(",\"leader\":", stdout);
    if (s->present)
        odbc_leader__cli_json_string(stdout, l->leader_id);
    else
        fputs("null", stdout);
    printf(",\"leader_present\":%s,\"term\":%lld,\"lease_remaining_ms\":%lld,",
           s->present ? "true" : "false", (long long)l->term,
           (long long)s->remaining_ms);
    if (s->have_clock)
        printf("\"db_now_ms\":%lld,\"db_clock_offset_ms\":%lld,",
               (long long)l->db_now_ms, (long long)s->offset_ms);
    else
        fputs("\"db_now_ms\":null,\"db_clock_offset_ms\":null,", stdout);
    printf("\"candidates_alive\":%zu,\"candidates\":[", s->n);
    for (size_t i = 0; i < s->n; i++) {
        const struct odbc_leader_candidate *c = &s->cands[i];

        fputs(i > 0 ? ",{\"id\":" : "{\"id\":", stdout);
        odbc_leader__cli_json_string(stdout, c->id);
        printf(",\"heartbeat_age_ms\":%lld,\"leader\":%s",
               (long long)(c->db_now_ms - c->heartbeat_at_ms),
               s->present && strcmp(c->id, l->leader_id) == 0 ? "true"
                                                              : "false");
        if (s->shards > 0)
            printf(",\"shards_led\":%u", (unsigned)s->leads[i]);
        fputs("}", stdout);
    }
    fputs("]", stdout);
    if (s->shards > 0)
        printf(",\"group\":{\"shards\":%u,\"led\":%u,\"unled\":%u}",
               (unsigned)s->shards, (unsigned)(s->shards - s->unled),
               (unsigned)s->unled);
    fputs("}\n", stdout);
}

/* HELP and TYPE lines of one gauge. */
static void prom_head(const char *name, const char *help) {
    printf("# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* One sample line "name{namespace="NS"} value". */
static void prom_sample(const struct snapshot *s, const char *name,
                        const char *value) {
    printf("%s{namespace=\"", name);
    odbc_leader__cli_prom_label(stdout, s->ns);
    printf("\"} %s\n", value);
}

/* Prometheus text exposition format, version 0.0.4. */
static void print_prometheus(const struct snapshot *s) {
    char v[64];

    prom_head("odbc_leader_leader_present",
              "1 when the namespace has a leader whose lease has not "
              "expired, else 0.");
    prom_sample(s, "odbc_leader_leader_present", s->present ? "1" : "0");
    prom_head("odbc_leader_term",
              "Last term (fencing token) issued in the namespace.");
    snprintf(v, sizeof(v), "%lld", (long long)s->lease.term);
    prom_sample(s, "odbc_leader_term", v);
    prom_head("odbc_leader_lease_remaining_seconds",
              "Seconds until the leader's lease expires, in database time; "
              "0 without a leader.");
    snprintf(v, sizeof(v), "%.3f", secs(s->remaining_ms));
    prom_sample(s, "odbc_leader_lease_remaining_seconds", v);
    prom_head("odbc_leader_candidates_alive",
              "Candidates whose heartbeat has not expired.");
    snprintf(v, sizeof(v), "%zu", s->n);
    prom_sample(s, "odbc_leader_candidates_alive", v);
    prom_head("odbc_leader_db_clock_offset_seconds",
              "Database clock minus this host's wall clock, read with the "
              "lease; a jump is a clock step on one side. No sample "
              "before the namespace's first lease row.");
    snprintf(v, sizeof(v), "%.3f", secs(s->offset_ms));
    if (s->have_clock)
        prom_sample(s, "odbc_leader_db_clock_offset_seconds", v);
    if (s->shards > 0) {
        prom_head("odbc_leader_group_shards",
                  "Shards of the group the namespace names.");
        snprintf(v, sizeof(v), "%u", (unsigned)s->shards);
        prom_sample(s, "odbc_leader_group_shards", v);
        prom_head("odbc_leader_group_shards_unled",
                  "Shards of the group with no unexpired lease.");
        snprintf(v, sizeof(v), "%u", (unsigned)s->unled);
        prom_sample(s, "odbc_leader_group_shards_unled", v);
        prom_head("odbc_leader_group_shards_led",
                  "Shards of the group each live candidate leads.");
        for (size_t i = 0; i < s->n; i++) {
            printf("odbc_leader_group_shards_led{namespace=\"");
            odbc_leader__cli_prom_label(stdout, s->ns);
            printf("\",candidate_id=\"");
            odbc_leader__cli_prom_label(stdout, s->cands[i].id);
            printf("\"} %u\n", (unsigned)s->leads[i]);
        }
    }
    prom_head("odbc_leader_leader_info",
              "Always 1; the leader_id label names the current leader.");
    if (s->present) {
        printf("odbc_leader_leader_info{namespace=\"");
        odbc_leader__cli_prom_label(stdout, s->ns);
        printf("\",leader_id=\"");
        odbc_leader__cli_prom_label(stdout, s->lease.leader_id);
        printf("\"} 1\n");
    }
}

/* ---- status ---- */

/* Parses status's options into *fmt. Returns 0, ODBC_LEADER__CLI_HELP or
 * EX_USAGE. */
static int parse_status(struct odbc_leader__cli *c, int argc, char **argv,
                        enum format *fmt) {
    static const struct option opts[] = {
        ODBC_LEADER__CLI_LONGOPTS,
        {"json", no_argument, NULL, 'J'},
        {"format", required_argument, NULL, 'F'},
        {NULL, 0, NULL, 0},
    };
    int opt, rc;

    for (opt = getopt_long(argc, argv, ODBC_LEADER__CLI_SHORTOPTS, opts, NULL);
         opt != -1; opt = getopt_long(argc, argv, ODBC_LEADER__CLI_SHORTOPTS,
                                      opts, NULL)) {
        rc = odbc_leader__cli_common_opt(c, opt, optarg);
        if (rc == 1)
            continue;
        if (rc != 0)
            return EX_USAGE;
        if (opt == 'J')
            *fmt = FMT_JSON;
        else if (opt == 'F' && strcmp(optarg, "table") == 0)
            *fmt = FMT_TABLE;
        else if (opt == 'F' && strcmp(optarg, "json") == 0)
            *fmt = FMT_JSON;
        else if (opt == 'F' && strcmp(optarg, "prometheus") == 0)
            *fmt = FMT_PROMETHEUS;
        else if (opt == 'F')
            return odbc_leader__cli_usage(
                c, "status", "unknown format \"%s\" (table, json, prometheus)",
                optarg);
        else
            return odbc_leader__cli_usage(c, "status", NULL);
    }
    if (c->help) {
        fputs(status_help, stdout);
        return ODBC_LEADER__CLI_HELP;
    }
    if (optind < argc)
        return odbc_leader__cli_usage(c, "status", "unexpected argument \"%s\"",
                                      argv[optind]);
    return 0;
}

int odbc_leader__cli_status(struct odbc_leader__cli *c, int argc, char **argv) {
    enum format fmt = FMT_TABLE;
    struct snapshot s;
    odbc_leader_t *h = NULL;
    char conn[1024] = "";
    int rc = parse_status(c, argc, argv, &fmt);

    memset(&s, 0, sizeof(s));
    if (rc != 0)
        return rc == ODBC_LEADER__CLI_HELP ? 0 : rc;
    if (fmt == FMT_TABLE)
        odbc_leader__cli_redacted(c, conn, sizeof(conn));
    rc = odbc_leader__cli_open(c, NULL, NULL, &h);
    if (rc != 0)
        goto out;
    rc = read_snapshot(h, &s);
    if (rc < 0) {
        odbc_leader__cli_err(c, "status: %s", odbc_leader_strerror(rc));
        rc = odbc_leader__cli_exit_code(rc);
        goto out;
    }
    if (fmt == FMT_JSON)
        print_json(&s);
    else if (fmt == FMT_PROMETHEUS)
        print_prometheus(&s);
    else
        print_table(&s, conn);
out:
    free(s.cands);
    free(s.leads);
    free(s.rows);
    odbc_leader_destroy(h);
    return rc;
}
