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

/* ---- status ---- */

/* Takes one of status's options into the enum format ctx. Returns 0, 1
 * when opt is none of them, or EX_USAGE after a message. */
static int status_opt(struct odbc_leader__cli *c, void *ctx, int opt,
                      const char *arg) {
    enum format *fmt = ctx;

    if (opt == 'J')
        *fmt = FMT_JSON;
    else if (opt == 'F' && strcmp(arg, "table") == 0)
        *fmt = FMT_TABLE;
    else if (opt == 'F' && strcmp(arg, "json") == 0)
        *fmt = FMT_JSON;
    else if (opt == 'F' && strcmp(arg, "prometheus") == 0)
        *fmt = FMT_PROMETHEUS;
    else if (opt == 'F')
        return odbc_leader__cli_usage(
            c, "status", "unknown format \"%s\" (table, json, prometheus)",
            arg);
    else
        return 1;
    return 0;
}

static const struct odbc_leader__cli_cmdline status_cmdline = {
    .subcmd = "status",
    .help = status_help,
    .opt = status_opt,
    .longopts = {{"json", no_argument, NULL, 'J'},
                 {"format", required_argument, NULL, 'F'}},
};

int odbc_leader__cli_status(struct odbc_leader__cli *c, int argc, char **argv) {
    enum format fmt = FMT_TABLE;
    struct odbc_leader__snapshot s;
    odbc_leader_t *h = NULL;
    char conn[1024] = "";
    int rc = odbc_leader__cli_parse(c, &status_cmdline, &fmt, argc, argv);

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
