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
    struct odbc_leader__snapshot *s = ctx;
    struct odbc_leader_candidate *v;

    if (s->oom)
        return;
    v = odbc_leader__cli_grow(s->cands, &s->cap, s->n, sizeof(*v));
    if (v == NULL) {
        s->oom = 1;
        return;
    }
    s->cands = v;
    s->cands[s->n++] = *c;
}

/* odbc_leader_list_shards callback: appends a copy to the snapshot. */
static void collect_shard(void *ctx, const struct odbc_leader_shard *r) {
    struct odbc_leader__snapshot *s = ctx;
    struct odbc_leader_shard *v;

    if (s->oom)
        return;
    v = odbc_leader__cli_grow(s->rows, &s->rows_cap, s->shards, sizeof(*v));
    if (v == NULL) {
        s->oom = 1;
        return;
    }
    s->rows = v;
    s->rows[s->shards++] = *r;
}

/* Counts, after the shards were read, the shards each candidate leads and
 * the unled ones. Returns 0 or ODBC_LEADER_ENOMEM. */
static int count_shards(struct odbc_leader__snapshot *s) {
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

/* ---- output ---- */

static double secs(int64_t ms) { return (double)ms / 1000.0; }

/* The human table. conn is the redacted connection string. */
static void print_table(const struct odbc_leader__snapshot *s,
                        const char *conn) {
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

/* HELP and TYPE lines of one family. */
static void prom_head(FILE *f, const char *name, const char *type,
                      const char *help) {
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Starts a sample: "name{namespace="NS"", left open for more labels. */
static void prom_ns(FILE *f, const char *name,
                    const struct odbc_leader__snapshot *s) {
    fprintf(f, "%s{namespace=\"", name);
    odbc_leader__cli_prom_label(f, s->ns);
    fputc('"', f);
}

/* Adds the label name="value" (escaped) to a sample started by prom_ns. */
static void prom_label(FILE *f, const char *name, const char *value) {
    fprintf(f, ",%s=\"", name);
    odbc_leader__cli_prom_label(f, value);
    fputc('"', f);
}

/* The families of the lease: present, term, lease left, clock offset, the
 * leader's id. */
static void prom_lease(FILE *f, const struct odbc_leader__snapshot *s,
                       size_t n) {
    prom_head(f, "odbc_leader_leader_present", "gauge",
              "1 when the namespace has a leader whose lease has not "
              "expired, else 0.");
    for (size_t i = 0; i < n; i++) {
        prom_ns(f, "odbc_leader_leader_present", &s[i]);
        fprintf(f, "} %d\n", s[i].present);
    }
    prom_head(f, "odbc_leader_term", "gauge",
              "Last term (fencing token) issued in the namespace.");
    for (size_t i = 0; i < n; i++) {
        prom_ns(f, "odbc_leader_term", &s[i]);
        fprintf(f, "} %lld\n", (long long)s[i].lease.term);
    }
    prom_head(f, "odbc_leader_lease_remaining_seconds", "gauge",
              "Seconds until the leader's lease expires, in database time; "
              "0 without a leader.");
    for (size_t i = 0; i < n; i++) {
        prom_ns(f, "odbc_leader_lease_remaining_seconds", &s[i]);
        fprintf(f, "} %.3f\n", secs(s[i].remaining_ms));
    }
    prom_head(f, "odbc_leader_db_clock_offset_seconds", "gauge",
              "Database clock minus this host's wall clock, read with the "
              "lease; a jump is a clock step on one side. No sample "
              "before the namespace's first lease row.");
    for (size_t i = 0; i < n; i++) {
        if (!s[i].have_clock)
            continue;
        prom_ns(f, "odbc_leader_db_clock_offset_seconds", &s[i]);
        fprintf(f, "} %.3f\n", secs(s[i].offset_ms));
    }
    prom_head(f, "odbc_leader_leader_info", "gauge",
              "Always 1; the leader_id label names the current leader.");
    for (size_t i = 0; i < n; i++) {
        if (!s[i].present)
            continue;
        prom_ns(f, "odbc_leader_leader_info", &s[i]);
        prom_label(f, "leader_id", s[i].lease.leader_id);
        fputs("} 1\n", f);
    }
}

/* The families of the candidates: how many are alive, and with
 * candidates set, each one's heartbeat age. */
static void prom_candidates(FILE *f, const struct odbc_leader__snapshot *s,
                            size_t n, int candidates) {
    prom_head(f, "odbc_leader_candidates_alive", "gauge",
              "Candidates whose heartbeat has not expired.");
    for (size_t i = 0; i < n; i++) {
        prom_ns(f, "odbc_leader_candidates_alive", &s[i]);
        fprintf(f, "} %zu\n", s[i].n);
    }
    if (!candidates)
        return;
    prom_head(f, "odbc_leader_candidate_heartbeat_age_seconds", "gauge",
              "Seconds since each live candidate's last heartbeat, in "
              "database time.");
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < s[i].n; j++) {
            const struct odbc_leader_candidate *c = &s[i].cands[j];

            prom_ns(f, "odbc_leader_candidate_heartbeat_age_seconds", &s[i]);
            prom_label(f, "candidate_id", c->id);
            fprintf(f, "} %.3f\n", secs(c->db_now_ms - c->heartbeat_at_ms));
        }
    }
}

/* The families of sharded groups (namespaces that name one). */
static void prom_groups(FILE *f, const struct odbc_leader__snapshot *s,
                        size_t n) {
    size_t groups = 0;

    for (size_t i = 0; i < n; i++)
        groups += s[i].shards > 0;
    if (groups == 0)
        return;
    prom_head(f, "odbc_leader_group_shards", "gauge",
              "Shards of the group the namespace names.");
    for (size_t i = 0; i < n; i++) {
        if (s[i].shards == 0)
            continue;
        prom_ns(f, "odbc_leader_group_shards", &s[i]);
        fprintf(f, "} %u\n", (unsigned)s[i].shards);
    }
    prom_head(f, "odbc_leader_group_shards_unled", "gauge",
              "Shards of the group with no unexpired lease.");
    for (size_t i = 0; i < n; i++) {
        if (s[i].shards == 0)
            continue;
        prom_ns(f, "odbc_leader_group_shards_unled", &s[i]);
        fprintf(f, "} %u\n", (unsigned)s[i].unled);
    }
    prom_head(f, "odbc_leader_group_shards_led", "gauge",
              "Shards of the group each live candidate leads.");
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; s[i].shards > 0 && j < s[i].n; j++) {
            prom_ns(f, "odbc_leader_group_shards_led", &s[i]);
            prom_label(f, "candidate_id", s[i].cands[j].id);
            fprintf(f, "} %u\n", (unsigned)s[i].leads[j]);
        }
    }
}

void odbc_leader__cli_snapshot_prom(FILE *f,
                                    const struct odbc_leader__snapshot *s,
                                    size_t n, int candidates) {
    prom_lease(f, s, n);
    prom_candidates(f, s, n, candidates);
    prom_groups(f, s, n);
}

void odbc_leader__cli_snapshot_free(struct odbc_leader__snapshot *s) {
    free(s->cands);
    free(s->leads);
    free(s->rows);
    memset(s, 0, sizeof(*s));
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
    struct odbc_leader__snapshot s;
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
    rc = odbc_leader__cli_snapshot_read(h, &s, 1);
    if (rc < 0) {
        odbc_leader__cli_err(c, "status: %s", odbc_leader_strerror(rc));
        rc = odbc_leader__cli_exit_code(rc);
        goto out;
    }
    if (fmt == FMT_JSON)
        odbc_leader__cli_snapshot_json(stdout, &s);
    else if (fmt == FMT_PROMETHEUS)
        odbc_leader__cli_snapshot_prom(stdout, &s, 1, 0);
    else
        print_table(&s, conn);
out:
    odbc_leader__cli_snapshot_free(&s);
    odbc_leader_destroy(h);
    return rc;
}
