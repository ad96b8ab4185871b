/*
 * run.c: "odbc-leader run": campaign for a namespace and run a command
 * only while leading it.
 *
 * One thread, no signal handler and no global state: TERM, INT, HUP and
 * CHLD are blocked and collected with sigtimedwait(), which is also the
 * sleep between ticks. Once elected, CMD is forked into its own process
 * group with ODBC_LEADER_TERM, ODBC_LEADER_NAMESPACE and ODBC_LEADER_ID in
 * its environment, and the handle keeps ticking. When the leadership ends
 * (trust window passed, term replaced, resign requested) the group gets
 * SIGTERM, then SIGKILL after the grace period, and run exits 80. When CMD
 * ends, the lease is kept until --min-hold has passed since CMD started,
 * then released, and run exits with CMD's status.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "cli.h"
#include "internal.h"

#define STATUS_EVERY_MS 500 /* terminal status line refresh */
#define MAX_SLEEP_MS 1000   /* wake at least this often */
#define REAP_POLL_MS 50     /* polling a stopping process group */

struct run {
    struct odbc_leader__cli *cli; /* borrowed */
    /* options */
    int wait;            /* 1: --wait (default), 0: --no-wait */
    int64_t min_hold_ms; /* --min-hold */
    int64_t grace_ms;    /* --grace */
    const char *id;      /* --id, borrowed; NULL = generated */
    int64_t ttl_ms;      /* --ttl; 0 = from the connection */
    char **cmd;          /* borrowed from argv, NULL-terminated */
    /* state */
    odbc_leader_t *h;
    sigset_t sigs;    /* TERM INT HUP CHLD, blocked while we run */
    sigset_t oldmask; /* restored for CMD and at the end */
    int tty;          /* stderr is a terminal */
    char leader_id[ODBC_LEADER__NAME_MAX + 1]; /* from on_change, "" none */
    int64_t leader_term;
    int64_t next_tick_at; /* odbc_leader__cli_now_ms() time */
    int64_t shown_at;     /* last status line refresh */
    int last_err;         /* last tick error reported, 0 none */
    int64_t term;         /* the term CMD runs under */
    pid_t child;          /* CMD while it runs, else 0 */
    pid_t pgid;           /* CMD's process group */
    int status;           /* CMD's wait status once reaped */
    int64_t started_at;   /* when CMD started */
    int forwarded;        /* a stop signal was passed on to CMD */
};

static const char run_help[] =
    "Usage: odbc-leader run [OPTIONS] [--] CMD [ARGS...]\n"
    "Campaign for the namespace; once leader, run CMD and keep the lease\n"
    "while it runs. If the leadership is lost, CMD's process group gets\n"
    "SIGTERM (SIGKILL after the grace period) and run exits 80. When CMD\n"
    "ends the lease is released and run exits with CMD's status.\n"
    "\n"
    "  --wait                wait until elected (default)\n"
    "  --no-wait             exit 81 at once when another candidate leads\n"
    "  --min-hold DURATION   keep the lease at least this long after CMD\n"
    "                        started, so CMD runs once per schedule when\n"
    "                        several hosts start it a few seconds apart\n"
    "  --grace DURATION      SIGTERM to SIGKILL delay on loss (default 10s)\n"
    "  --id ID               candidate id (LeaderId; default a UUID)\n"
    "  --ttl DURATION        lease length (LeaderTTL; default "
    "15s)\n" ODBC_LEADER__CLI_COMMON_HELP "\n"
    "DURATION: 500ms, 10s, 1.5s, 2m, 1h or plain seconds.\n"
    "CMD gets ODBC_LEADER_TERM (the fencing token), ODBC_LEADER_NAMESPACE\n"
    "and ODBC_LEADER_ID in its environment and runs in its own process\n"
    "group. SIGTERM, SIGINT and SIGHUP sent to odbc-leader are passed on to\n"
    "that group. Before CMD starts they make run leave the election.\n"
    "\n"
    "Exit status: CMD's (128+N when killed by signal N); 80 leadership\n"
    "lost while CMD ran; 81 --no-wait and another candidate leads; 75\n"
    "--no-wait and the database failed; 64 usage; 69 database\n"
    "unavailable; 78 configuration; 126/127 CMD not executable/not found;\n"
    "128+N stopped by signal N before CMD started.\n";

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

/* Handles one run-specific option. Returns 0 or EX_USAGE. */
static int run_opt(struct run *r, int opt, const char *arg) {
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
        if (!odbc_leader__valid_name(arg))
            return odbc_leader__cli_usage(r->cli, "run",
                                          "invalid --id \"%s\": 1-128 bytes "
                                          "of A-Z a-z 0-9 . _ - : / @",
                                          arg);
        r->id = arg;
        return 0;
    case 'T':
        if (duration_opt(r, "--ttl", arg, &r->ttl_ms) != 0)
            return EX_USAGE;
        if (r->ttl_ms <= 0)
            return odbc_leader__cli_usage(r->cli, "run", "--ttl must be > 0");
        return 0;
    default:
        return odbc_leader__cli_usage(r->cli, "run", NULL);
    }
}

/* Parses run's options and CMD. Returns 0, ODBC_LEADER__CLI_HELP or
 * EX_USAGE. */
static int parse_run(struct run *r, int argc, char **argv) {
    static const struct option opts[] = {
        ODBC_LEADER__CLI_LONGOPTS,
        {"wait", no_argument, NULL, 'W'},
        {"no-wait", no_argument, NULL, 'N'},
        {"min-hold", required_argument, NULL, 'M'},
        {"grace", required_argument, NULL, 'G'},
        {"id", required_argument, NULL, 'I'},
        {"ttl", required_argument, NULL, 'T'},
        {NULL, 0, NULL, 0},
    };
    const char *shortopts = "+" ODBC_LEADER__CLI_SHORTOPTS;
    int opt, rc;

    for (opt = getopt_long(argc, argv, shortopts, opts, NULL); opt != -1;
         opt = getopt_long(argc, argv, shortopts, opts, NULL)) {
        rc = odbc_leader__cli_common_opt(r->cli, opt, optarg);
        if (rc == 0)
            rc = run_opt(r, opt, optarg);
        else if (rc == 1)
            rc = 0;
        if (rc != 0)
            return EX_USAGE;
    }
    if (r->cli->help) {
        fputs(run_help, stdout);
        return ODBC_LEADER__CLI_HELP;
    }
    if (optind >= argc)
        return odbc_leader__cli_usage(r->cli, "run", "missing CMD to run");
    r->cmd = argv + optind;
    return 0;
}

/* ---- the election ---- */

/* Opens the handle with the run's Leader* extras. Returns 0 or an exit
 * code. */
static int open_run(struct run *r) {
    struct odbc_leader_callbacks cb = {r, run_log, run_on_change};
    char ttl[32];
    char *extra = NULL;
    int rc = 0;

    if (r->id != NULL && odbc_leader__cli_append_kv(&extra, "LeaderId", r->id))
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
 * once. Returns what odbc_leader_tick() returned. */
static int do_tick(struct run *r) {
    uint32_t next = MAX_SLEEP_MS;
    int rc = odbc_leader_tick(r->h, &next);

    r->next_tick_at = odbc_leader__cli_now_ms() + next;
    if (rc < 0 && rc != r->last_err && rc != ODBC_LEADER_EBACKOFF)
        run_log(r, LOG_WARNING, odbc_leader_strerror(rc));
    r->last_err = rc < 0 ? rc : 0;
    return rc;
}

/* Milliseconds until the next tick is due, at most MAX_SLEEP_MS. */
static int64_t until_tick(const struct run *r) {
    int64_t d = r->next_tick_at - odbc_leader__cli_now_ms();

    return d < 0 ? 0 : d > MAX_SLEEP_MS ? MAX_SLEEP_MS : d;
}

/* On a terminal: shows who leads and the lease remaining while waiting,
 * refreshed every STATUS_EVERY_MS. */
static void show_waiting(struct run *r) {
    struct odbc_leader_lease l;
    int64_t now = odbc_leader__cli_now_ms();
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

/* Campaigns until elected. Returns 0 once leader, or an exit code:
 * 81 (--no-wait, another leads), 75 (--no-wait, database failed),
 * 128+N (signal N). */
static int campaign(struct run *r) {
    for (;;) {
        int sig, rc;

        if (odbc_leader__cli_now_ms() >= r->next_tick_at) {
            rc = do_tick(r);
            if (rc == ODBC_LEADER_LEADER)
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

/* 1 when the term CMD runs under is no longer held. */
static int lost(const struct run *r) {
    return !odbc_leader_is_leader(r->h) || odbc_leader_term(r->h) != r->term;
}

/* ---- the command ---- */

/* In the forked child: own process group, original signal mask, the
 * ODBC_LEADER_* variables, then exec. Never returns. */
static void exec_cmd(const struct run *r) {
    char term[32];
    int e;

    setpgid(0, 0);
    sigprocmask(SIG_SETMASK, &r->oldmask, NULL);
    snprintf(term, sizeof(term), "%lld", (long long)r->term);
    if (setenv("ODBC_LEADER_TERM", term, 1) < 0 ||
        setenv("ODBC_LEADER_NAMESPACE", odbc_leader_namespace(r->h), 1) < 0 ||
        setenv("ODBC_LEADER_ID", odbc_leader_id(r->h), 1) < 0) {
        fputs("odbc-leader: out of memory\n", stderr);
        _exit(EX_OSERR);
    }
    execvp(r->cmd[0], r->cmd);
    e = errno;
    fprintf(stderr, "odbc-leader: %s: %s\n", r->cmd[0], strerror(e));
    _exit(e == ENOENT ? ODBC_LEADER__EX_NOTFOUND : ODBC_LEADER__EX_NOEXEC);
}

/* Starts CMD. Returns 0 or EX_OSERR. */
static int start_cmd(struct run *r) {
    pid_t pid;

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        odbc_leader__cli_err(r->cli, "fork: %s", strerror(errno));
        return EX_OSERR;
    }
    if (pid == 0)
        exec_cmd(r);
    /* Both sides set the group, so no signal can miss it. */
    if (setpgid(pid, pid) < 0 && errno != EACCES && errno != ESRCH)
        run_log(r, LOG_WARNING, "setpgid failed: CMD shares our group");
    r->child = pid;
    r->pgid = pid;
    r->started_at = odbc_leader__cli_now_ms();
    return 0;
}

/* Sends sig to CMD's process group (to CMD alone if that fails). */
static void signal_cmd(const struct run *r, int sig) {
    if (kill(-r->pgid, sig) < 0 && r->child != 0)
        kill(r->child, sig);
}

/* Reaps CMD when it has ended. Returns 1 when it has (status saved). */
static int reap(struct run *r) {
    int st;

    if (r->child == 0)
        return 1;
    if (waitpid(r->child, &st, WNOHANG) != r->child)
        return 0;
    r->status = st;
    r->child = 0;
    return 1;
}

/* Waits while CMD runs and the term holds. Returns 0 when CMD ended,
 * ODBC_LEADER__EX_LOST when the leadership ended first. */
static int supervise(struct run *r) {
    for (;;) {
        int sig;

        if (reap(r))
            return 0;
        if (odbc_leader__cli_now_ms() >= r->next_tick_at)
            do_tick(r);
        if (lost(r))
            return ODBC_LEADER__EX_LOST;
        sig = odbc_leader__cli_wait_signal(&r->sigs, until_tick(r));
        if (sig != 0 && sig != SIGCHLD) {
            run_log(r, LOG_INFO, "passing a stop signal on to CMD");
            signal_cmd(r, sig);
            r->forwarded = 1;
        }
    }
}

/* Stops CMD's group after a loss: SIGTERM, then SIGKILL when CMD or any
 * process of its group is still there after the grace period, or when a
 * second stop signal arrives. Returns once CMD is reaped. */
static void stop_cmd(struct run *r) {
    int64_t deadline = odbc_leader__cli_now_ms() + r->grace_ms;

    odbc_leader__cli_err(
        r->cli,
        "lost the leadership of %s (term %lld): stopping %s (SIGTERM, "
        "SIGKILL after %lld ms)",
        odbc_leader_namespace(r->h), (long long)r->term, r->cmd[0],
        (long long)r->grace_ms);
    signal_cmd(r, SIGTERM);
    for (;;) {
        int64_t left = deadline - odbc_leader__cli_now_ms();
        int sig;

        if (reap(r) && kill(-r->pgid, 0) < 0)
            return;
        if (left <= 0)
            break;
        sig = odbc_leader__cli_wait_signal(
            &r->sigs,
            r->child == 0 && left > REAP_POLL_MS ? REAP_POLL_MS : left);
        if (sig != 0 && sig != SIGCHLD)
            break;
    }
    signal_cmd(r, SIGKILL);
    if (r->child != 0 && waitpid(r->child, &r->status, 0) == r->child)
        r->child = 0;
}

/* Keeps the lease after CMD ended until --min-hold has passed since it
 * started, or a stop signal arrives, or the leadership ends anyway. */
static void hold(struct run *r) {
    int64_t until = r->started_at + r->min_hold_ms;

    for (;;) {
        int64_t now = odbc_leader__cli_now_ms(), wait;
        int sig;

        if (now >= until)
            return;
        if (now >= r->next_tick_at)
            do_tick(r);
        if (lost(r)) {
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

/* Runs CMD as leader. Returns run's exit code. */
static int lead(struct run *r) {
    char msg[256];
    int rc;

    r->term = odbc_leader_term(r->h);
    odbc_leader__cli_clear_line(r->cli);
    snprintf(msg, sizeof(msg), "leading %s as %s, term %lld: starting %s",
             odbc_leader_namespace(r->h), odbc_leader_id(r->h),
             (long long)r->term, r->cmd[0]);
    if (r->tty)
        odbc_leader__cli_msg(r->cli, LOG_INFO, "%s", msg);
    else
        run_log(r, LOG_INFO, msg);
    rc = start_cmd(r);
    if (rc != 0)
        return rc;
    rc = supervise(r);
    if (rc == ODBC_LEADER__EX_LOST) {
        stop_cmd(r);
        return ODBC_LEADER__EX_LOST;
    }
    if (!r->forwarded)
        hold(r);
    return exit_status(r->status);
}

int odbc_leader__cli_run(struct odbc_leader__cli *c, int argc, char **argv) {
    struct run r;
    int rc;

    memset(&r, 0, sizeof(r));
    r.cli = c;
    r.wait = 1;
    r.grace_ms = 10000;
    rc = parse_run(&r, argc, argv);
    if (rc != 0)
        return rc == ODBC_LEADER__CLI_HELP ? 0 : rc;
    r.tty = isatty(STDERR_FILENO);
    sigemptyset(&r.sigs);
    sigaddset(&r.sigs, SIGTERM);
    sigaddset(&r.sigs, SIGINT);
    sigaddset(&r.sigs, SIGHUP);
    sigaddset(&r.sigs, SIGCHLD);
    sigprocmask(SIG_BLOCK, &r.sigs, &r.oldmask);
    rc = open_run(&r);
    if (rc == 0)
        rc = campaign(&r);
    if (rc == 0)
        rc = lead(&r);
    odbc_leader_destroy(r.h); /* resigns if still leader, unregisters */
    odbc_leader__cli_clear_line(c);
    /* The signals stay blocked: one arriving now must not change the
     * exit status. */
    return rc;
}
