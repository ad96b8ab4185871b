/* SPDX-License-Identifier: MIT */
/*
 * resign.c: "odbc-leader resign": ask the namespace's leader to step down
 * at its next renewal, optionally handing over to a named candidate, and
 * with --wait until a new term has started. It does not register as a
 * candidate: the handle never ticks, and its unregister at destroy matches
 * no row.
 */
#include <build_config.h>

#include <string.h>
#include <time.h>

#include "cli.h"
#include "clock.h"
#include "config.h"

#define RESIGN_POLL_MS 200

static const char resign_help[] =
    "Usage: odbc-leader resign [OPTIONS]\n"
    "Ask the namespace's leader to step down at its next renewal. With\n"
    "--to, the lease is then reserved for that candidate, which takes over\n"
    "(rolling restarts: hand over before stopping the leader).\n"
    "\n"
    "  --to ID               hand over to this live candidate\n"
    "  -w, --wait            wait until a new term has started\n"
    "  --timeout DURATION    give up waiting after this long (default "
    "60s)\n" ODBC_LEADER__CLI_COMMON_HELP "\n"
    "Exit status: 0 requested (and, with --wait, a new term started);\n"
    "82 the namespace has no leader; 83 the --to candidate is not alive;\n"
    "75 --wait timed out; 64 usage; 69 database unavailable; 78\n"
    "configuration.\n"
    "\n"
    "Examples:\n"
    "  # before restarting the leader's host: hand over to host2\n"
    "  odbc-leader resign -d sched -n indexer --to host2 --wait\n";

struct resign {
    const char *to;     /* --to, borrowed; NULL = anyone */
    int wait;           /* --wait */
    int64_t timeout_ms; /* --timeout */
};

/* Handles one resign-specific option. Returns 0, 1 when opt is none of
 * them, or EX_USAGE after a message. */
static int resign_opt(struct odbc_leader__cli *c, void *ctx, int opt,
                      const char *arg) {
    struct resign *o = ctx;

    switch (opt) {
    case 'T':
        if (!odbc_leader__valid_name(arg))
            return odbc_leader__cli_usage(c, "resign",
                                          "invalid candidate id \"%s\"", arg);
        o->to = arg;
        return 0;
    case 'w':
        o->wait = 1;
        return 0;
    case 'O':
        if (odbc_leader__cli_duration(arg, &o->timeout_ms) == 0)
            return 0;
        return odbc_leader__cli_usage(
            c, "resign", "--timeout: invalid duration \"%s\"", arg);
    default:
        return 1;
    }
}

static const struct odbc_leader__cli_cmdline resign_cmdline = {
    .subcmd = "resign",
    .help = resign_help,
    .shortopts = "w",
    .opt = resign_opt,
    .longopts = {{"to", required_argument, NULL, 'T'},
                 {"wait", no_argument, NULL, 'w'},
                 {"timeout", required_argument, NULL, 'O'}},
};

/* Polls the lease until a term above old_term has a leader, or the
 * timeout. Returns 0 (prints the new leader), EX_TEMPFAIL or an exit code
 * for a database error. */
static int wait_new_term(struct odbc_leader__cli *c, odbc_leader_t *h,
                         int64_t old_term, int64_t timeout_ms) {
    int64_t deadline = odbc_leader__now_ms() + timeout_ms;
    struct odbc_leader_lease l;
    struct timespec ts = {0, RESIGN_POLL_MS * 1000000L};

    while (odbc_leader__now_ms() < deadline) {
        int rc = odbc_leader_read_lease(h, &l);

        if (rc == 0 && l.term > old_term && l.leader_id[0] != '\0' &&
            l.expires_at_ms > l.db_now_ms) {
            printf("%s: %s leads now (term %lld)\n", odbc_leader_namespace(h),
                   l.leader_id, (long long)l.term);
            return 0;
        }
        nanosleep(&ts, NULL);
    }
    odbc_leader__cli_err(c, "resign: no new leader in %s within %lld ms",
                         odbc_leader_namespace(h), (long long)timeout_ms);
    return EX_TEMPFAIL;
}

/* Reports request_resign's result. Returns the exit code. */
static int resign_result(struct odbc_leader__cli *c, odbc_leader_t *h,
                         const struct resign *o, int rc,
                         const struct odbc_leader_lease *l) {
    const char *ns = odbc_leader_namespace(h);

    if (rc == ODBC_LEADER_ENOLEADER) {
        odbc_leader__cli_err(c, "resign: namespace %s has no leader", ns);
    } else if (rc == ODBC_LEADER_ENOCANDIDATE) {
        odbc_leader__cli_err(c,
                             "resign: candidate \"%s\" is not alive in "
                             "namespace %s ('odbc-leader status -n %s' "
                             "lists the live ones)",
                             o->to, ns, ns);
    } else if (rc < 0) {
        odbc_leader__cli_err(c, "resign: %s", odbc_leader_strerror(rc));
    } else if (l->leader_id[0] != '\0') {
        printf("%s: asked %s (term %lld) to resign%s%s\n", ns, l->leader_id,
               (long long)l->term, o->to != NULL ? " in favour of " : "",
               o->to != NULL ? o->to : "");
    } else {
        printf("%s: asked the leader to resign%s%s\n", ns,
               o->to != NULL ? " in favour of " : "",
               o->to != NULL ? o->to : "");
    }
    return odbc_leader__cli_exit_code(rc);
}

/* Asks h's namespace's leader to resign as the struct resign ctx says,
 * and waits with --wait. Returns the exit code. */
static int resign_act(struct odbc_leader__cli *c, odbc_leader_t *h,
                      const void *ctx) {
    const struct resign *o = ctx;
    struct odbc_leader_lease l;
    int rc;

    if (odbc_leader_read_lease(h, &l) < 0)
        memset(&l, 0, sizeof(l));
    rc = odbc_leader_request_resign(h, o->to);
    rc = resign_result(c, h, o, rc, &l);
    if (rc == 0 && o->wait) {
        fflush(stdout);
        rc = wait_new_term(c, h, l.term, o->timeout_ms);
    }
    return rc;
}

int odbc_leader__cli_resign(struct odbc_leader__cli *c, int argc, char **argv) {
    struct resign o = {NULL, 0, 60000};

    return odbc_leader__cli_handle_cmd(c, &resign_cmdline, &o, argc, argv,
                                       resign_act);
}
