/* SPDX-License-Identifier: MIT */
/*
 * watch.c: "odbc-leader watch": poll a namespace's lease and print one
 * line per change of leader (time, namespace, old and new leader, term)
 * until SIGINT or SIGTERM. Like status, it never registers as a
 * candidate.
 */
#include <build_config.h>

#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "cli.h"
#include "clock.h"
#include "config.h"

#define POLL_MS 200

/* Who leads, as watch compares it between polls. */
struct seen {
    int valid;                              /* a poll succeeded before */
    char leader[ODBC_LEADER__NAME_MAX + 1]; /* "" = nobody */
    int64_t term;
};

struct watch {
    struct odbc_leader__cli *cli; /* borrowed */
    odbc_leader_t *h;
    int json;        /* --json: one JSON object per line */
    sigset_t sigs;   /* INT TERM, blocked */
    struct seen old; /* state printed last */
    int failing;     /* the last poll failed (reported once) */
};

static const char watch_help[] =
    "Usage: odbc-leader watch [OPTIONS]\n"
    "Print one line per change of the namespace's leader, until SIGINT or\n"
    "SIGTERM:\n"
    "  TIME NAMESPACE OLD -> NEW term=T\n"
    "TIME is ISO 8601 local time with milliseconds; OLD is \"-\" on the first\n"
    "line; \"(none)\" means no leader (the lease expired or was resigned).\n"
    "\n"
    "  --json                one JSON object per line "
    "instead\n" ODBC_LEADER__CLI_COMMON_HELP "\n"
    "Exit status: 0 when interrupted; 64 usage; 69 database unavailable at\n"
    "start; 78 configuration.\n"
    "\n"
    "Example:\n"
    "  odbc-leader watch -d sched -n indexer\n";

/* Writes the wall-clock time as ISO 8601 with milliseconds and the UTC
 * offset ("2024-05-01T10:00:00.123+02:00") into buf. */
static void iso_now(char *buf, size_t len) {
    int64_t now = odbc_leader__wall_ms();
    time_t sec = (time_t)(now / 1000);
    struct tm tm;
    char date[32], zone[8];

    localtime_r(&sec, &tm);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
    strftime(zone, sizeof(zone), "%z", &tm); /* +0200 */
    snprintf(buf, len, "%s.%03ld%.3s:%.2s", date, (long)(now % 1000), zone,
             zone + 3);
}

/* Prints one transition from w->old to *now. */
static void print_change(const struct watch *w, const struct seen *now) {
    const char *ns = odbc_leader_namespace(w->h);
    char t[64];

    iso_now(t, sizeof(t));
    if (!w->json) {
        printf("%s %s %s -> %s term=%lld\n", t, ns,
               !w->old.valid              ? "-"
               : w->old.leader[0] != '\0' ? w->old.leader
                                          : "(none)",
               now->leader[0] != '\0' ? now->leader : "(none)",
               (long long)now->term);
    } else {
        printf("{\"time\":\"%s\",\"namespace\":", t);
        odbc_leader__cli_json_string(stdout, ns);
        fputs(",\"from\":", stdout);
        odbc_leader__cli_json_or_null(stdout,
                                      w->old.valid ? w->old.leader : "");
        fputs(",\"to\":", stdout);
        odbc_leader__cli_json_or_null(stdout, now->leader);
        printf(",\"term\":%lld}\n", (long long)now->term);
    }
    fflush(stdout);
}

/* One poll: reads the lease, prints a line when the leader or the term
 * changed, reports a failing database once. */
static void poll_once(struct watch *w) {
    struct odbc_leader_lease l;
    struct seen now;
    int rc = odbc_leader_read_lease(w->h, &l);

    if (rc < 0) {
        if (!w->failing)
            odbc_leader__cli_msg(w->cli, LOG_WARNING, "watch: %s (retrying)",
                                 odbc_leader_strerror(rc));
        w->failing = 1;
        return;
    }
    if (w->failing)
        odbc_leader__cli_msg(w->cli, LOG_NOTICE,
                             "watch: database reachable again");
    w->failing = 0;
    memset(&now, 0, sizeof(now));
    now.valid = 1;
    now.term = l.term;
    if (l.leader_id[0] != '\0' && l.expires_at_ms > l.db_now_ms)
        memcpy(now.leader, l.leader_id, sizeof(now.leader));
    if (w->old.valid && w->old.term == now.term &&
        strcmp(w->old.leader, now.leader) == 0)
        return;
    print_change(w, &now);
    w->old = now;
}

/* Takes watch's one option (--json) into the struct watch ctx. Returns 0,
 * or 1 when opt is another. */
static int watch_opt(struct odbc_leader__cli *c, void *ctx, int opt,
                     const char *arg) {
    struct watch *w = ctx;

    (void)c;
    (void)arg;
    if (opt != 'J')
        return 1;
    w->json = 1;
    return 0;
}

static const struct odbc_leader__cli_cmdline watch_cmdline = {
    .subcmd = "watch",
    .help = watch_help,
    .opt = watch_opt,
    .longopts = {{"json", no_argument, NULL, 'J'}},
};

int odbc_leader__cli_watch(struct odbc_leader__cli *c, int argc, char **argv) {
    struct watch w;
    int rc;

    memset(&w, 0, sizeof(w));
    w.cli = c;
    rc = odbc_leader__cli_parse(c, &watch_cmdline, &w, argc, argv);
    if (rc != 0)
        return rc == ODBC_LEADER__CLI_HELP ? 0 : rc;
    sigemptyset(&w.sigs);
    sigaddset(&w.sigs, SIGINT);
    sigaddset(&w.sigs, SIGTERM);
    sigprocmask(SIG_BLOCK, &w.sigs, NULL);
    rc = odbc_leader__cli_open(c, NULL, NULL, &w.h);
    if (rc != 0)
        return rc;
    do
        poll_once(&w);
    while (odbc_leader__cli_wait_signal(&w.sigs, POLL_MS) == 0);
    odbc_leader_destroy(w.h);
    return 0;
}
