/* SPDX-License-Identifier: MIT */
/*
 * run.c: "odbc-leader run": campaign for a namespace and run a command
 * only while leading it.
 *
 * One thread, no signal handler and no global state: TERM, INT, HUP and
 * CHLD are blocked and collected with sigtimedwait(), which is also the
 * sleep between ticks. Once elected, CMD is started by a supervisor
 * (watchdog.c) in its own process group with ODBC_LEADER_TERM,
 * ODBC_LEADER_NAMESPACE and ODBC_LEADER_ID in its environment; after each
 * tick run hands the supervisor the new deadline (end of the trust window
 * minus KILL_ROOM_MS), and the supervisor kills the group when the
 * deadline passes or run dies. The library is told to report resign
 * requests (LeaderResignRequests=report) so that run stops CMD's group
 * first and resigns only after it is gone; stop signals and CMD's own end
 * take the same order. --grace is checked against the timing before the
 * campaign starts.
 *
 * With --once KEY (and --once-per DURATION) CMD runs at most once per key
 * across all hosts and retries: once leader, run claims the fire (KEY,
 * slot) in the fire ledger, fenced by its term in the same statement, and
 * starts CMD only when the claim is new; CMD's outcome is recorded in the
 * ledger. A key the ledger already holds ends run with exit 84, also
 * while waiting to lead.
 */
#include <build_config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "config.h"

#define STATUS_EVERY_MS 500    /* terminal status line refresh */
#define MAX_SLEEP_MS 1000      /* wake at least this often */
#define GRACE_DEFAULT_MS 10000 /* --grace, when the timing allows it */
/* SIGKILL reaches CMD's group this long before the trust window ends:
 * room for the signal, the exit of a large process and the supervisor's
 * own wake-up. The safety margin lies beyond (for clock rates). */
#define KILL_ROOM_MS 100
#define NS_PER_MS INT64_C(1000000)

/* Why run is stopping CMD. */
enum why {
    WHY_NONE,   /* it is not: CMD runs, or ended by itself */
    WHY_SIGNAL, /* a stop signal for run was passed on */
    WHY_RESIGN, /* a resign was requested: stop, then resign */
    WHY_LOST,   /* the term is gone: killed at once */
};

struct run {
    struct odbc_leader__cli *cli; /* borrowed */
    /* options */
    int wait;                  /* 1: --wait (default), 0: --no-wait */
    int64_t min_hold_ms;       /* --min-hold */
    int64_t grace_ms;          /* --grace */
    const char *id;            /* --id, borrowed; NULL = generated */
    int64_t ttl_ms;            /* --ttl; 0 = from the connection */
    char **cmd;                /* borrowed from argv, NULL-terminated */
    const char *once;          /* --once KEY, borrowed; NULL = no ledger */
    int64_t once_per_ms;       /* --once-per; 0 = the key is one-off (fire 0) */
    int recover;               /* --recover N: attempts allowed; 1 = none */
    int keep_connect_env;      /* --keep-connect-env: CMD gets the password */
    const char *health_listen; /* --health-listen ADDR:PORT, borrowed */
    /* state */
    int64_t fire_ms; /* the fire of --once: 0, or the slot once known */
    int fire_known;  /* fire_ms is settled */
    int claimed;     /* this run claimed the fire: finish it */
    struct odbc_leader_claim claim; /* ... as the database recorded it */
    odbc_leader_t *h;
    sigset_t sigs;        /* TERM INT HUP CHLD, blocked while we run */
    sigset_t oldmask;     /* restored for CMD and at the end */
    struct rlimit nofile; /* open files at start: CMD's (--health-listen
                             raises run's own) */
    int tty;              /* stderr is a terminal */
    char leader_id[ODBC_LEADER__NAME_MAX + 1]; /* from on_change, "" none */
    int64_t leader_term;
    int64_t next_tick_at;       /* odbc_leader__now_ms() time */
    int64_t shown_at;           /* last status line refresh */
    int last_err;               /* last tick error reported, 0 none */
    int64_t term;               /* the term CMD runs under */
    struct odbc_leader__wd *wd; /* CMD's supervisor while CMD runs */
    int status;                 /* CMD's wait status once its group is gone */
    int wd_flags;               /* how the supervisor saw CMD end */
    int64_t started_at;         /* when CMD started */
    enum why why;               /* why CMD is being stopped */
    struct odbc_leader__health *health; /* --health-listen's server */
};

static const char run_help[] =
    "Usage: odbc-leader run [OPTIONS] [--] CMD [ARGS...]\n"
    "Campaign for the namespace; once leader, run CMD and keep the lease\n"
    "while it runs. CMD and its whole process group are dead before the\n"
    "lease can lapse, whatever happens to run: a supervisor gives the group\n"
    "SIGTERM when the trust window is about to end without a renewal\n"
    "(SIGKILL by then), and SIGKILL at once when run dies. On a resign\n"
    "request, a stop signal or CMD's own end, CMD's group is stopped first\n"
    "and the lease is released only then.\n"
    "\n"
    "  --wait                wait until elected (default)\n"
    "  --no-wait             exit 81 at once when another candidate leads\n"
    "  --min-hold DURATION   keep the lease at least this long after CMD\n"
    "                        started, so CMD runs once per schedule when\n"
    "                        several hosts start it a few seconds apart\n"
    "  --grace DURATION      SIGTERM to SIGKILL delay (default 10s, or the\n"
    "                        largest the timing allows: TTL - margin - renew\n"
    "                        interval - statement timeout - 100 ms)\n"
    "  --id ID               candidate id (LeaderId; default a UUID)\n"
    "  --ttl DURATION        lease length (LeaderTTL; default "
    "15s)\n"
    "  --once KEY            run CMD at most once per KEY in the namespace,\n"
    "                        across all hosts and retries (the fire ledger,\n"
    "                        odbc-leader fires); exit 84 when KEY ran or\n"
    "                        runs already\n"
    "  --once-per DURATION   at most once per slot of DURATION: the key is\n"
    "                        (KEY, or the namespace, and) the slot nearest\n"
    "                        the database clock, so cron lines fired\n"
    "                        seconds apart on many hosts run once per slot\n"
    "  --recover N           with --once: the key's fire may run up to N\n"
    "                        times when a leader dies before CMD ends: the\n"
    "                        next leader runs it again once the dead one's\n"
    "                        term is over, never at the same time (default\n"
    "                        1: at most once; docs/lifecycle.md)\n"
    "  --keep-connect-env    pass $ODBC_LEADER_CONNECT to CMD unchanged,\n"
    "                        password included (by default CMD gets it\n"
    "                        without its PWD= and Password= pairs)\n"
    "  --health-listen ADDR:PORT\n"
    "                        answer GET /health/leader there: 200 while\n"
    "                        this process leads and CMD runs, else 503\n"
    "                        (a load balancer's or readiness probe's check;\n"
    "                        limits: those of odbc-leader serve --help)\n"
    "" ODBC_LEADER__CLI_COMMON_HELP "\n"
    "DURATION: 500ms, 10s, 1.5s, 2m, 1h or plain seconds.\n"
    "CMD gets ODBC_LEADER_TERM (the fencing token), ODBC_LEADER_NAMESPACE\n"
    "and ODBC_LEADER_ID in its environment (with --once also\n"
    "ODBC_LEADER_FIRE_MS, the slot, ODBC_LEADER_ATTEMPT, 1 or more, and\n"
    "ODBC_LEADER_RECOVERING, 1 when an earlier attempt was interrupted)\n"
    "and runs in its own process\n"
    "group. SIGTERM, SIGINT and SIGHUP sent to odbc-leader are passed on to\n"
    "that group (a second one kills it). Before CMD starts they make run\n"
    "leave the election.\n"
    "\n"
    "Exit status: CMD's (128+N when killed by signal N); 80 leadership\n"
    "lost or resign requested while CMD ran; 81 --no-wait and another\n"
    "candidate leads; 84 --once and the key ran or runs already; 75 --no-wait "
    "and the database failed; 64 usage; 69\n"
    "database unavailable; 78 configuration (also --grace too long);\n"
    "126/127 CMD not executable/not found; 128+N stopped by signal N before\n"
    "CMD started.\n"
    "\n"
    "Examples:\n"
    "  # the same crontab line on every host: the report runs once an hour\n"
    "  odbc-leader run -d sched -n report --once-per 1h -- "
    "/usr/local/bin/report\n"
    "  # a service that runs on one host at a time, handed over on failure\n"
    "  odbc-leader run -d sched -n indexer -- /usr/local/bin/indexer\n"
    "  # ... with a check for the load balancer in front of it\n"
    "  odbc-leader run -d sched -n api --health-listen :9467 -- "
    "/usr/local/bin/api\n";

/* ---- callbacks ---- */

static void run_log(void *ctx, int level, const char *msg) {
    struct run *r = ctx;

    odbc_leader__cli_log(r->cli, level, msg);
}

/* Remembers the leader this candidate knows of (for messages). */
static void run_on_change(void *ctx, int is_leader, int64_t term,
                          const char *leader_id) {
    struct run *r = ctx;

    snprintf(r->leader_id, sizeof(r->leader_id), "%s",
             leader_id != NULL ? leader_id : "");
    r->leader_term = term;
    (void)is_leader;
}

/* ---- options ---- */

/* Stores a DURATION option into *ms. Returns 0 or EX_USAGE. */
static int duration_opt(struct run *r, const char *name, const char *arg,
                        int64_t *ms) {
    if (odbc_leader__cli_duration(arg, ms) == 0)
        return 0;
    return odbc_leader__cli_usage(r->cli, "run",
                                  "%s: invalid duration \"%s\" (e.g. 500ms, "
                                  "10s, 2m, 1h)",
                                  name, arg);
}

/* Handles one run-specific option. Returns 0, 1 when opt is none of
 * them, or EX_USAGE after a message. */
static int run_opt(struct odbc_leader__cli *c, void *ctx, int opt,
                   const char *arg) {
    struct run *r = ctx;

    switch (opt) {
    case 'W':
        r->wait = 1;
        return 0;
    case 'N':
        r->wait = 0;
        return 0;
    case 'M':
        return duration_opt(r, "--min-hold", arg, &r->min_hold_ms);
    case 'G':
        return duration_opt(r, "--grace", arg, &r->grace_ms);
    case 'I':
        return odbc_leader__cli_name_arg(c, "run", "--id", arg, &r->id);
    case 'T':
        if (duration_opt(r, "--ttl", arg, &r->ttl_ms) != 0)
            return EX_USAGE;
        if (r->ttl_ms <= 0)
            return odbc_leader__cli_usage(r->cli, "run", "--ttl must be > 0");
        return 0;
    case 'O':
        return odbc_leader__cli_name_arg(c, "run", "--once key", arg, &r->once);
    case 'K':
        r->keep_connect_env = 1;
        return 0;
    case 'H':
        r->health_listen = arg;
        return 0;
    case 'R': {
        char *end = NULL;
        long n = strtol(arg, &end, 10);

        if (end == arg || *end != '\0' || n < 1 || n > 1000)
            return odbc_leader__cli_usage(
                r->cli, "run", "--recover: expected 1 to 1000, not \"%s\"",
                arg);
        r->recover = (int)n;
        return 0;
    }
    case 'P':
        if (duration_opt(r, "--once-per", arg, &r->once_per_ms) != 0)
            return EX_USAGE;
        if (r->once_per_ms < 1000)
            return odbc_leader__cli_usage(r->cli, "run",
                                          "--once-per must be at least 1s");
        return 0;
    default:
        return 1;
    }
}

static const struct odbc_leader__cli_cmdline run_cmdline = {
    .subcmd = "run",
    .help = run_help,
    .opt = run_opt,
    .operands = ODBC_LEADER__CLI_CMD,
    .longopts = {{"wait", no_argument, NULL, 'W'},
                 {"no-wait", no_argument, NULL, 'N'},
                 {"min-hold", required_argument, NULL, 'M'},
                 {"grace", required_argument, NULL, 'G'},
                 {"id", required_argument, NULL, 'I'},
                 {"ttl", required_argument, NULL, 'T'},
                 {"once", required_argument, NULL, 'O'},
                 {"once-per", required_argument, NULL, 'P'},
                 {"recover", required_argument, NULL, 'R'},
                 {"keep-connect-env", no_argument, NULL, 'K'},
                 {"health-listen", required_argument, NULL, 'H'}},
};

/* ---- CMD's environment ---- */

/*
 * Takes the password out of $ODBC_LEADER_CONNECT, which CMD inherits
 * (run has copied the connection string it uses by now): the variable
 * keeps every pair but PWD= and Password=. A value that does not parse
 * (run used -C, say) is removed whole, since where its password sits is
 * unknown. Returns 0, or EX_OSERR after a message.
 */
static int scrub_connect_env(struct run *r) {
    const char *v = getenv("ODBC_LEADER_CONNECT");
    char *clean = NULL, err[256];
    int rc = 0;

    if (v == NULL)
        return 0;
    if (odbc_leader__config_strip_password(v, &clean, err, sizeof(err)) ==
        ODBC_LEADER_ENOMEM) {
        odbc_leader__cli_err(r->cli, "out of memory");
        return EX_OSERR;
    }
    if (clean == NULL)
        rc = unsetenv("ODBC_LEADER_CONNECT");
    else if (strcmp(clean, v) != 0)
        rc = setenv("ODBC_LEADER_CONNECT", clean, 1);
    free(clean);
    if (rc != 0) {
        odbc_leader__cli_err(r->cli, "ODBC_LEADER_CONNECT: %s",
                             strerror(errno));
        return EX_OSERR;
    }
    return 0;
}

/* ---- the election ---- */

/* --once KEY --once-per DURATION: says how the key's fires are computed
 * (docs/schedules.md), so that hosts running KEY with another DURATION,
 * whose keys differ, have their claims refused instead of both running.
 * The slot nearest the database clock depends on no time zone. Returns
 * 0, or EX_CONFIG after a message. */
static int declare_schedule(struct run *r) {
    char expr[64];
    int rc;

    snprintf(expr, sizeof(expr), "every %lld ms", (long long)r->once_per_ms);
    rc = odbc_leader_set_schedule(
        r->h, r->once, expr, "",
        "odbc-leader run --once-per (the slot nearest the database clock)");
    if (rc == 0)
        return 0;
    odbc_leader__cli_err(r->cli, "run: --once %s: %s", r->once,
                         odbc_leader_strerror(rc));
    return odbc_leader__cli_exit_code(rc);
}

/* Opens the handle with the run's Leader* extras. Returns 0 or an exit
 * code. */
static int open_run(struct run *r) {
    struct odbc_leader_callbacks cb = {.struct_size = sizeof(cb),
                                       .ctx = r,
                                       .log = run_log,
                                       .on_change = run_on_change};
    char ttl[32];
    char *extra = NULL;
    int rc = 0;

    /* A resign request is the run's to carry out: CMD first, then the
     * resign (see after_tick). */
    if (odbc_leader__cli_append_kv(&extra, "LeaderResignRequests", "report"))
        rc = EX_OSERR;
    if (rc == 0 && r->id != NULL &&
        odbc_leader__cli_append_kv(&extra, "LeaderId", r->id))
        rc = EX_OSERR;
    snprintf(ttl, sizeof(ttl), "%lld", (long long)r->ttl_ms);
    if (rc == 0 && r->ttl_ms > 0 &&
        odbc_leader__cli_append_kv(&extra, "LeaderTTL", ttl))
        rc = EX_OSERR;
    if (rc == 0)
        rc = odbc_leader__cli_open(r->cli, extra, &cb, &r->h);
    else
        odbc_leader__cli_err(r->cli, "out of memory");
    free(extra);
    return rc;
}

/* One election step; schedules the next one and reports a new error
 * once, at info level: the library has logged its cause (the driver's
 * message) as a warning already. Returns what odbc_leader_tick()
 * returned. */
static int do_tick(struct run *r) {
    uint32_t next = MAX_SLEEP_MS;
    int rc = odbc_leader_tick(r->h, &next);

    r->next_tick_at = odbc_leader__now_ms() + next;
    if (rc < 0 && rc != r->last_err && rc != ODBC_LEADER_EBACKOFF)
        run_log(r, LOG_INFO, odbc_leader_strerror(rc));
    r->last_err = rc < 0 ? rc : 0;
    return rc;
}

/* Milliseconds until the next tick is due, at most MAX_SLEEP_MS. */
static int64_t until_tick(const struct run *r) {
    int64_t d = r->next_tick_at - odbc_leader__now_ms();

    return d < 0 ? 0 : d > MAX_SLEEP_MS ? MAX_SLEEP_MS : d;
}

/* On a terminal: shows who leads and the lease remaining while waiting,
 * refreshed every STATUS_EVERY_MS. */
static void show_waiting(struct run *r) {
    struct odbc_leader_lease l;
    int64_t now = odbc_leader__now_ms();
    const char *ns = odbc_leader_namespace(r->h);
    char line[512];

    if (!r->tty || now - r->shown_at < STATUS_EVERY_MS)
        return;
    r->shown_at = now;
    if (odbc_leader_read_lease(r->h, &l) < 0)
        snprintf(line, sizeof(line),
                 "odbc-leader: waiting to lead %s: database unavailable", ns);
    else if (l.leader_id[0] != '\0' && l.expires_at_ms > l.db_now_ms)
        snprintf(line, sizeof(line),
                 "odbc-leader: waiting to lead %s: %s leads (term %lld), "
                 "lease %.1f s left",
                 ns, l.leader_id, (long long)l.term,
                 (double)(l.expires_at_ms - l.db_now_ms) / 1000.0);
    else
        snprintf(line, sizeof(line),
                 "odbc-leader: waiting to lead %s: no leader right now", ns);
    odbc_leader__cli_show_line(r->cli, line);
}

/* Reports that another candidate leads (--no-wait) and returns
 * ODBC_LEADER__EX_BUSY. Quiet without a terminal unless -v. */
static int busy(struct run *r) {
    char msg[512];

    snprintf(msg, sizeof(msg),
             "%s is led by %s (term %lld): not running %s (--no-wait)",
             odbc_leader_namespace(r->h),
             r->leader_id[0] != '\0' ? r->leader_id : "another candidate",
             (long long)r->leader_term, r->cmd[0]);
    if (r->tty)
        odbc_leader__cli_msg(r->cli, LOG_INFO, "%s", msg);
    else
        run_log(r, LOG_INFO, msg);
    return ODBC_LEADER__EX_BUSY;
}

/* --once: settles the fire: 0 for a one-off key, else the --once-per
 * slot nearest the database clock, read once (after the first tick, so
 * the lease row exists). Returns 1 when settled, 0 when the database did
 * not answer (try again at the next tick). */
static int settle_fire(struct run *r) {
    struct odbc_leader_lease l;
    int64_t d = r->once_per_ms;

    if (r->fire_known)
        return 1;
    if (d > 0) {
        if (odbc_leader_read_lease(r->h, &l) < 0 || l.db_now_ms <= 0)
            return 0;
        r->fire_ms = (l.db_now_ms + d / 2) / d * d;
    }
    r->fire_known = 1;
    return 1;
}

/* The exit of a run whose key the ledger holds: a message with who ran it,
 * then ODBC_LEADER__EX_DONE. */
static int done_already(struct run *r, const struct odbc_leader_fire *f) {
    char msg[512];

    if (f != NULL && f->finished_at_ms != 0)
        snprintf(msg, sizeof(msg),
                 "%s: %s (fire %lld) already ran: by %s in term %lld, "
                 "status %d; not running %s",
                 odbc_leader_namespace(r->h), f->job, (long long)f->fire_ms,
                 f->claimed_by, (long long)f->term, f->status, r->cmd[0]);
    else if (f != NULL)
        snprintf(msg, sizeof(msg),
                 "%s: %s (fire %lld) was started by %s in term %lld and has "
                 "not finished; not running %s",
                 odbc_leader_namespace(r->h), f->job, (long long)f->fire_ms,
                 f->claimed_by, (long long)f->term, r->cmd[0]);
    else
        snprintf(msg, sizeof(msg),
                 "%s: %s (fire %lld) was claimed already; not running %s",
                 odbc_leader_namespace(r->h), r->once, (long long)r->fire_ms,
                 r->cmd[0]);
    odbc_leader__cli_clear_line(r->cli);
    odbc_leader__cli_msg(r->cli, LOG_NOTICE, "%s", msg);
    return ODBC_LEADER__EX_DONE;
}

/* 1 when f, a fire of the key that a follower reads, may still run here:
 * its attempt runs (its leader may die) or was interrupted, and its job
 * allows another attempt. */
static int may_recover(const struct odbc_leader_fire *f) {
    return f->attempt < f->max_attempts &&
           (strcmp(f->state, "running") == 0 ||
            strcmp(f->state, "interrupted") == 0);
}

/* --once, after a new claim: CMD's environment says which fire and
 * attempt it runs (the claim as the database recorded it). Returns -2
 * (lead), or EX_OSERR after a message. */
static int claim_env(struct run *r) {
    char fire[32], attempt[16];

    snprintf(fire, sizeof(fire), "%lld", (long long)r->claim.nominal_ms);
    snprintf(attempt, sizeof(attempt), "%d", r->claim.attempt);
    if (setenv("ODBC_LEADER_FIRE_MS", fire, 1) < 0 ||
        setenv("ODBC_LEADER_ATTEMPT", attempt, 1) < 0 ||
        setenv("ODBC_LEADER_RECOVERING", r->claim.recovering ? "1" : "0", 1) <
            0) {
        odbc_leader__cli_err(r->cli, "setenv: %s", strerror(errno));
        return EX_OSERR;
    }
    if (r->claim.recovering)
        odbc_leader__cli_msg(r->cli, LOG_NOTICE,
                             "%s: %s (fire %lld): attempt %d of %d, after an "
                             "earlier attempt's term ended without its end",
                             odbc_leader_namespace(r->h), r->once,
                             (long long)r->fire_ms, r->claim.attempt,
                             r->claim.max_attempts);
    return -2;
}

/* --once, after a tick that returned state (>= 0): ends the run when the
 * ledger holds the key; once leader, claims it. Returns 0 to campaign on,
 * -2 after a new claim (lead), or an exit code. */
static int once_check(struct run *r, int state) {
    struct odbc_leader_fire f;
    struct odbc_leader_error_info e;
    int rc;

    if (!settle_fire(r))
        return 0;
    if (state == 0) {
        rc = odbc_leader_read_fire_ex(r->h, r->once, r->fire_ms, &f, sizeof(f));
        if (rc == 1 && !may_recover(&f))
            return done_already(r, &f);
        return 0; /* errors: the next tick tells */
    }
    r->claim.struct_size = sizeof(r->claim);
    rc = odbc_leader_claim_fire(r->h, r->once, r->fire_ms, r->recover,
                                &r->claim);
    if (rc == ODBC_LEADER_CLAIM_RUN) {
        r->claimed = 1;
        return claim_env(r);
    }
    if (rc == ODBC_LEADER_CLAIM_PAUSED) {
        odbc_leader__cli_msg(r->cli, LOG_NOTICE,
                             "%s: %s is paused (odbc-leader jobs resume %s): "
                             "fire %lld skipped; not running %s",
                             odbc_leader_namespace(r->h), r->once, r->once,
                             (long long)r->fire_ms, r->cmd[0]);
        return ODBC_LEADER__EX_DONE;
    }
    if (rc == 0) {
        rc = odbc_leader_read_fire(r->h, r->once, r->fire_ms, &f);
        return done_already(r, rc == 1 ? &f : NULL);
    }
    if (rc == ODBC_LEADER_ENOTLEADER)
        return 0;
    odbc_leader_last_error(r->h, &e);
    odbc_leader__cli_err(r->cli,
                         "run --once: claiming %s (fire %lld) failed: %s; "
                         "not running %s",
                         r->once, (long long)r->fire_ms,
                         rc == ODBC_LEADER_ESCHEDULE ? e.message
                                                     : odbc_leader_strerror(rc),
                         r->cmd[0]);
    return rc == ODBC_LEADER_EUNKNOWN || rc == ODBC_LEADER_ECONNLOST
               ? EX_TEMPFAIL
               : odbc_leader__cli_exit_code(rc);
}

/* Campaigns until elected. Returns 0 once leader, or an exit code:
 * 81 (--no-wait, another leads), 75 (--no-wait, database failed),
 * 128+N (signal N). */
static int campaign(struct run *r) {
    for (;;) {
        int sig, rc;

        if (odbc_leader__now_ms() >= r->next_tick_at) {
            rc = do_tick(r);
            if (rc >= 0 && r->once != NULL) {
                int o = once_check(r, rc);

                if (o == -2)
                    return 0;
                if (o != 0)
                    return o;
                if (rc > 0)
                    continue; /* leading, but the claim did not say so */
            }
            if (rc > 0)
                return 0;
            if (rc == ODBC_LEADER_FOLLOWER && !r->wait)
                return busy(r);
            if (rc < 0 && !r->wait) {
                odbc_leader__cli_err(r->cli,
                                     "cannot take part in the "
                                     "election (--no-wait): %s",
                                     odbc_leader_strerror(rc));
                return EX_TEMPFAIL;
            }
        }
        show_waiting(r);
        sig = odbc_leader__cli_wait_signal(
            &r->sigs, r->tty && until_tick(r) > STATUS_EVERY_MS
                          ? STATUS_EVERY_MS
                          : until_tick(r));
        if (sig != 0 && sig != SIGCHLD) {
            odbc_leader__cli_clear_line(r->cli);
            run_log(r, LOG_INFO, "stopped by a signal while campaigning");
            return 128 + sig;
        }
    }
}

/* ---- the command ---- */

/* The supervisor's deadline for the term CMD runs under: the end of the
 * trust window minus the time a SIGKILL needs. Returns 0 when that term
 * is no longer led (ended or replaced), else the deadline in
 * CLOCK_BOOTTIME nanoseconds. */
static int64_t deadline(const struct run *r) {
    uint32_t valid = 0;
    int64_t term = odbc_leader_leadership(r->h, &valid);

    if (term == 0 || term != r->term)
        return 0;
    return odbc_leader__now_ns(NULL) + (int64_t)valid * NS_PER_MS -
           KILL_ROOM_MS * NS_PER_MS;
}

/* Starts CMD under the supervisor for the term led now. Returns 0, -1
 * when the term ended before CMD could start (campaign again), or
 * EX_OSERR. */
static int start_cmd(struct run *r) {
    struct odbc_leader__wd_spec spec;
    char term[32], err[256];

    r->term = odbc_leader_leadership(r->h, NULL);
    memset(&spec, 0, sizeof(spec));
    spec.deadline_ns = deadline(r);
    if (r->term == 0 || spec.deadline_ns == 0)
        return -1;
    snprintf(term, sizeof(term), "%lld", (long long)r->term);
    spec.cmd = r->cmd;
    spec.cmd_mask = &r->oldmask;
    spec.cmd_nofile = &r->nofile;
    spec.term = term;
    spec.ns = odbc_leader_namespace(r->h);
    spec.id = odbc_leader_id(r->h);
    spec.grace_ns = r->grace_ms * NS_PER_MS;
    if (odbc_leader__wd_start(&r->wd, &spec, err, sizeof(err)) < 0) {
        odbc_leader__cli_err(r->cli, "%s", err);
        return EX_OSERR;
    }
    r->started_at = odbc_leader__now_ms();
    return 0;
}

/* After a tick while CMD runs: moves the supervisor's deadline on while
 * the term holds; kills CMD at once when it does not (the window passed,
 * or the database says the term is gone); stops CMD (SIGTERM, SIGKILL
 * after the grace period, renewing meanwhile) when a resign was asked
 * for. */
static void after_tick(struct run *r, int rc) {
    int64_t d = deadline(r);

    if (d == 0) {
        if (r->why == WHY_NONE)
            odbc_leader__cli_err(
                r->cli, "lost the leadership of %s (term %lld): killing %s",
                odbc_leader_namespace(r->h), (long long)r->term, r->cmd[0]);
        if (r->why != WHY_LOST)
            odbc_leader__wd_kill(r->wd);
        r->why = WHY_LOST;
        return;
    }
    odbc_leader__wd_extend(r->wd, d);
    if (rc == ODBC_LEADER_RESIGN_REQUESTED && r->why == WHY_NONE) {
        odbc_leader__cli_msg(
            r->cli, LOG_NOTICE,
            "resignation of %s (term %lld) requested: stopping %s "
            "(SIGTERM, SIGKILL after %lld ms), then resigning",
            odbc_leader_namespace(r->h), (long long)r->term, r->cmd[0],
            (long long)r->grace_ms);
        odbc_leader__wd_stop(r->wd, SIGTERM);
        r->why = WHY_RESIGN;
    }
}

/* A stop signal for run while CMD runs: the first is passed on to CMD's
 * group (SIGKILL follows after the grace period), a second kills it. */
static void stop_signal(struct run *r, int sig) {
    if (r->why == WHY_SIGNAL) {
        run_log(r, LOG_NOTICE, "second stop signal: killing CMD");
        odbc_leader__wd_kill(r->wd);
        return;
    }
    if (r->why != WHY_NONE)
        return;
    run_log(r, LOG_INFO, "passing a stop signal on to CMD");
    odbc_leader__wd_stop(r->wd, sig);
    r->why = WHY_SIGNAL;
}

/* Ticks while CMD runs, keeping the supervisor's deadline up to date,
 * until CMD and its whole process group are gone. */
static void supervise(struct run *r) {
    for (;;) {
        int sig;

        if (odbc_leader__wd_done(r->wd, &r->status, &r->wd_flags))
            return;
        if (odbc_leader__now_ms() >= r->next_tick_at)
            after_tick(r, do_tick(r));
        sig = odbc_leader__cli_wait_signal(&r->sigs, until_tick(r));
        if (sig != 0 && sig != SIGCHLD)
            stop_signal(r, sig);
    }
}

/* Keeps the lease after CMD ended until --min-hold has passed since it
 * started, or a stop signal or a resign request arrives, or the
 * leadership ends anyway. */
static void hold(struct run *r) {
    int64_t until = r->started_at + r->min_hold_ms;

    for (;;) {
        int64_t now = odbc_leader__now_ms(), wait;
        int sig;

        if (now >= until)
            return;
        if (now >= r->next_tick_at &&
            do_tick(r) == ODBC_LEADER_RESIGN_REQUESTED)
            return;
        if (deadline(r) == 0) {
            run_log(r, LOG_NOTICE, "leadership ended during --min-hold");
            return;
        }
        wait = until - now < until_tick(r) ? until - now : until_tick(r);
        sig = odbc_leader__cli_wait_signal(&r->sigs, wait);
        if (sig != 0 && sig != SIGCHLD)
            return;
    }
}

/* CMD's wait status as an exit code: its status, or 128+N when killed by
 * signal N. */
static int exit_status(int st) {
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return EX_SOFTWARE;
}

/* Runs CMD as leader, then hands over: CMD's whole group is gone before
 * the resign. Returns run's exit code, or -1 when the term ended before
 * CMD could start. */
static int lead(struct run *r) {
    char msg[256];
    int rc;

    odbc_leader__cli_clear_line(r->cli);
    rc = start_cmd(r);
    if (rc != 0)
        return rc;
    odbc_leader__cli_health_running(r->health, 1);
    snprintf(msg, sizeof(msg), "leading %s as %s, term %lld: started %s",
             odbc_leader_namespace(r->h), odbc_leader_id(r->h),
             (long long)r->term, r->cmd[0]);
    if (r->tty)
        odbc_leader__cli_msg(r->cli, LOG_INFO, "%s", msg);
    else
        run_log(r, LOG_INFO, msg);
    supervise(r);
    odbc_leader__cli_health_running(r->health, 0);
    odbc_leader__wd_destroy(r->wd);
    r->wd = NULL;
    if (r->wd_flags & ODBC_LEADER__WD_DEADLINE)
        odbc_leader__cli_err(r->cli,
                             "the leadership of %s (term %lld) was about to "
                             "lapse without a renewal: %s was stopped",
                             odbc_leader_namespace(r->h), (long long)r->term,
                             r->cmd[0]);
    if (r->why == WHY_LOST || r->why == WHY_RESIGN ||
        (r->wd_flags & (ODBC_LEADER__WD_DEADLINE | ODBC_LEADER__WD_LOST)))
        return ODBC_LEADER__EX_LOST;
    if (r->why == WHY_NONE)
        hold(r);
    return exit_status(r->status);
}

/* --once: records CMD's outcome in the ledger (0, its exit status, or
 * -N when signal N killed it; exit code 80 when the term ended between
 * the claim and the start, so CMD never ran). Returns run's exit code. */
static int finish_once(struct run *r, int rc) {
    int status = ODBC_LEADER__EX_LOST;
    int frc;

    if (rc == -1) {
        odbc_leader__cli_err(r->cli,
                             "the leadership of %s ended between claiming %s "
                             "and starting %s: it did not run",
                             odbc_leader_namespace(r->h), r->once, r->cmd[0]);
        rc = ODBC_LEADER__EX_LOST;
    } else if (r->started_at != 0 && WIFEXITED(r->status)) {
        status = WEXITSTATUS(r->status);
    } else if (r->started_at != 0 && WIFSIGNALED(r->status)) {
        status = -WTERMSIG(r->status);
    }
    frc = odbc_leader_finish_fire(r->h, r->once, r->fire_ms, r->claim.term,
                                  status);
    if (frc < 0)
        odbc_leader__cli_err(r->cli,
                             "recording the end of %s (fire %lld, status %d) "
                             "in the ledger failed: %s",
                             r->once, (long long)r->fire_ms, status,
                             odbc_leader_strerror(frc));
    return rc;
}

/* The longest --grace the timing allows: SIGTERM must not come before a
 * renewal that is due and answered within the statement timeout, and
 * SIGKILL must land KILL_ROOM_MS before the trust window ends:
 * TTL - margin - renew interval - statement timeout - KILL_ROOM_MS. */
static int64_t max_grace_ms(const struct run *r) {
    const struct odbc_leader__config *c = odbc_leader__config_of(r->h);

    return c->ttl_ms - c->margin_ms - c->renew_ms - c->stmt_timeout_ms -
           KILL_ROOM_MS;
}

/* Settles --grace against the timing of the handle: the default is
 * min(10 s, the largest allowed); a larger value is refused. Returns 0 or
 * EX_CONFIG after a message with the numbers. */
static int settle_grace(struct run *r) {
    const struct odbc_leader__config *c = odbc_leader__config_of(r->h);
    int64_t max = max_grace_ms(r);

    if (max < 0) {
        odbc_leader__cli_err(
            r->cli,
            "run: the timing leaves no time to stop CMD before the lease can "
            "lapse: LeaderTTL %lld - LeaderSafetyMargin %lld - "
            "LeaderRenewInterval %lld - LeaderStatementTimeout %lld - %d ms "
            "to kill < 0; lengthen the TTL or shorten the others",
            (long long)c->ttl_ms, (long long)c->margin_ms,
            (long long)c->renew_ms, (long long)c->stmt_timeout_ms,
            KILL_ROOM_MS);
        return EX_CONFIG;
    }
    if (r->grace_ms < 0) {
        r->grace_ms = max < GRACE_DEFAULT_MS ? max : GRACE_DEFAULT_MS;
        return 0;
    }
    if (r->grace_ms <= max)
        return 0;
    odbc_leader__cli_err(
        r->cli,
        "run: --grace %lld ms is too long: CMD must be dead before the lease "
        "can lapse, so it may be at most %lld ms here (LeaderTTL %lld - "
        "LeaderSafetyMargin %lld - LeaderRenewInterval %lld - "
        "LeaderStatementTimeout %lld - %d ms to kill)",
        (long long)r->grace_ms, (long long)max, (long long)c->ttl_ms,
        (long long)c->margin_ms, (long long)c->renew_ms,
        (long long)c->stmt_timeout_ms, KILL_ROOM_MS);
    return EX_CONFIG;
}

int odbc_leader__cli_run(struct odbc_leader__cli *c, int argc, char **argv) {
    struct run r;
    sigset_t pipe_only;
    int rc;

    memset(&r, 0, sizeof(r));
    r.cli = c;
    r.wait = 1;
    r.grace_ms = -1; /* settled once the timing is known */
    rc = odbc_leader__cli_parse(c, &run_cmdline, &r, argc, argv);
    if (rc != 0)
        return rc == ODBC_LEADER__CLI_HELP ? 0 : rc;
    if (r.recover > 1 && r.once == NULL && r.once_per_ms == 0)
        return odbc_leader__cli_usage(c, "run",
                                      "--recover needs --once or --once-per");
    r.cmd = argv + optind;
    r.tty = isatty(STDERR_FILENO);
    sigemptyset(&r.sigs);
    sigaddset(&r.sigs, SIGTERM);
    sigaddset(&r.sigs, SIGINT);
    sigaddset(&r.sigs, SIGHUP);
    sigaddset(&r.sigs, SIGCHLD);
    sigprocmask(SIG_BLOCK, &r.sigs, &r.oldmask);
    /* A closed stdout or stderr must not kill run (and so CMD): writes
     * fail with EPIPE instead. CMD gets the original mask. */
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigprocmask(SIG_BLOCK, &pipe_only, NULL);
    if (getrlimit(RLIMIT_NOFILE, &r.nofile) != 0)
        r.nofile.rlim_cur = r.nofile.rlim_max = RLIM_INFINITY;
    rc = open_run(&r);
    if (rc == 0 && r.health_listen != NULL)
        rc = odbc_leader__cli_health_start(&r.health, c, r.health_listen, r.h);
    if (rc == 0 && !r.keep_connect_env)
        rc = scrub_connect_env(&r);
    if (rc == 0)
        rc = settle_grace(&r);
    /* --once-per alone: the namespace names the job */
    if (rc == 0 && r.once_per_ms > 0 && r.once == NULL)
        r.once = odbc_leader_namespace(r.h);
    if (rc == 0 && r.once_per_ms > 0)
        rc = declare_schedule(&r);
    do {
        if (rc == 0)
            rc = campaign(&r);
        if (rc == 0)
            rc = lead(&r);
    } while (rc == -1 && !r.claimed);
    if (r.claimed)
        rc = finish_once(&r, rc);
    /* CMD's group is gone: only now resign (if still leader), unregister */
    odbc_leader__cli_health_stop(r.health);
    odbc_leader_destroy(r.h);
    odbc_leader__cli_clear_line(c);
    /* The signals stay blocked: one arriving now must not change the
     * exit status. */
    return rc;
}
