/* SPDX-License-Identifier: MIT */
/*
 * demo.c: "odbc-leader demo": leader election in about twenty seconds.
 *
 * In a temp dir it starts N candidates, each "odbc-leader run" of this
 * same binary on one SQLite file (lease TTL 3 s) with a small job as CMD
 * (a /bin/sh script, job_script below, which logs its term). It shows who
 * leads, kills the leader's process group with SIGKILL and times the
 * takeover (the lease has to expire), then sends SIGTERM to the new leader
 * and times the graceful handoff (it resigns on its way out). Then it
 * stops everything and removes the temp dir.
 *
 * The demo makes itself a child subreaper, so a job orphaned by a killed
 * candidate is reaped here; each job dies with its candidate (run's
 * supervisor kills CMD's process group when run dies, and CMD gets
 * PR_SET_PDEATHSIG). Signals are blocked and waited for, as in run.c.
 */
#include <build_config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"

#define MAX_CANDS 9
#define TTL_MS 3000
#define POLL_MS 50
#define STAGE_TIMEOUT_MS 15000
#define STOP_TIMEOUT_MS 3000

static const char *const names[MAX_CANDS] = {
    "alpha",   "bravo", "charlie", "delta", "echo",
    "foxtrot", "golf",  "hotel",   "india",
};

struct cand {
    const char *name; /* static */
    pid_t pid;        /* its odbc-leader run (a group leader); 0 once reaped */
    int status;       /* wait status once reaped */
    int expected_end; /* the demo stopped it on purpose */
};

struct demo {
    struct odbc_leader__cli *cli; /* borrowed */
    int n;                        /* -c */
    int64_t pause_ms;             /* --pause */
    const char *serve;            /* --serve ADDR:PORT, borrowed; NULL */
    pid_t serve_pid;              /* its odbc-leader serve; 0 none */
    int stopping;                 /* stop_all is stopping everything */
    char dir[PATH_MAX];           /* temp dir, "" until made */
    char exe[PATH_MAX];           /* this binary */
    char work[PATH_MAX + 16];     /* the jobs' log */
    char *conn;                   /* owned: connection string */
    odbc_leader_t *obs;           /* observer; never ticks */
    struct cand cands[MAX_CANDS];
    sigset_t sigs, oldmask; /* INT TERM HUP CHLD blocked */
    int tty;                /* stdout is a terminal */
    int line;               /* a progress line is shown */
    int64_t t0;             /* demo start */
    int stop_sig;           /* the signal that interrupted the demo */
};

/*
 * The candidates' CMD: /bin/sh -c job_script odbc-leader-demo-job WORKLOG.
 * It appends "NAME term T: started" to WORKLOG, runs until a signal stops
 * it and appends how it was stopped; run's supervisor signals its whole
 * process group, so the sleep dies with it. A job whose parent is already
 * the demo (its candidate died before it started, and the demo, a
 * subreaper, adopted it) stops at once.
 */
static const char job_script[] =
    "note() { printf '%s term %s: %s\\n' \"${ODBC_LEADER_ID:-?}\" "
    "\"${ODBC_LEADER_TERM:-?}\" \"$1\" >>\"$log\"; }\n"
    "log=$1\n"
    "[ \"$PPID\" = \"${ODBC_LEADER_DEMO_PID:-}\" ] && exit 0\n"
    "trap 'note \"stopped by SIGTERM\"; exit 0' TERM\n"
    "trap 'note stopped; exit 0' INT HUP\n"
    "note started\n"
    "while :; do sleep 1; done\n";

static const char demo_help[] =
    "Usage: odbc-leader demo [-c N] [--pause DURATION] [--serve[=ADDR:PORT]]\n"
    "Leader election in about 20 seconds: N candidates (odbc-leader run,\n"
    "each running a small job only while it leads) on one SQLite file in a\n"
    "temp dir. Shows who leads, kills the leader with SIGKILL and times the\n"
    "takeover, then stops the new leader with SIGTERM and times the\n"
    "graceful handoff; shows who led when (the election log); then stops\n"
    "everything and removes the temp dir.\n"
    "Needs the SQLite3 ODBC driver (Debian: libsqliteodbc).\n"
    "\n"
    "  -c, --candidates N    number of candidates, 3 to 9 (default 3)\n"
    "  --pause DURATION      pause between the acts (default 5s)\n"
    "  --serve[=ADDR:PORT]   also run odbc-leader serve on the demo's\n"
    "                        database (default 127.0.0.1:9466): open the\n"
    "                        page it prints and watch (a longer --pause\n"
    "                        helps)\n"
    "  -v, --verbose         more log lines on stderr\n"
    "  -h, --help            this help\n"
    "\n"
    "Exit status: 0 as shown; 69 the SQLite3 driver is missing; 70 the\n"
    "election did not behave (no leader in time, a candidate died); 71\n"
    "system error; 128+N interrupted by signal N.\n"
    "\n"
    "Examples:\n"
    "  odbc-leader demo -c 5\n"
    "  odbc-leader demo --serve --pause 20s\n";

/* ---- output ---- */

static double since(const struct demo *d, int64_t t) {
    return (double)(odbc_leader__now_ms() - t) / 1000.0;
}

/* Clears the progress line, if any. */
static void clear_progress(struct demo *d) {
    if (d->line)
        fputs("\r\033[K", stdout);
    d->line = 0;
}

/* Prints one timestamped line. */
static void say(struct demo *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(struct demo *d, const char *fmt, ...) {
    va_list ap;

    clear_progress(d);
    printf("[%5.1fs] ", since(d, d->t0));
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

/* On a terminal: shows msg on the updating progress line. */
static void progress(struct demo *d, const char *msg) {
    if (!d->tty)
        return;
    printf("\r\033[K[%5.1fs] %s", since(d, d->t0), msg);
    fflush(stdout);
    d->line = 1;
}

/* ---- processes ---- */

/* Reaps every child that ended (candidates and orphaned jobs), noting
 * the candidates' statuses. Returns the index of a candidate that ended
 * without being stopped on purpose, or -1. */
static int reap_all(struct demo *d) {
    int st, bad = -1;

    for (;;) {
        pid_t pid = waitpid(-1, &st, WNOHANG);

        if (pid <= 0)
            break;
        if (pid == d->serve_pid) {
            d->serve_pid = 0;
            if (!d->stopping)
                say(d, "odbc-leader serve stopped (exit %d): see %s/serve.log",
                    WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
                    d->dir);
        }
        for (int i = 0; i < d->n; i++) {
            if (d->cands[i].pid != pid)
                continue;
            d->cands[i].pid = 0;
            d->cands[i].status = st;
            if (!d->cands[i].expected_end)
                bad = i;
        }
    }
    return bad;
}

/* In a forked child: its own process group, the demo's signal mask
 * restored, stdin from /dev/null, stdout and stderr to DIR/NAME.log; then
 * execs argv (this binary). Does not return. */
static void exec_child(const struct demo *d, const char *name,
                       const char *const argv[]) {
    char log[PATH_MAX + 32];
    int fd;

    setpgid(0, 0);
    sigprocmask(SIG_SETMASK, &d->oldmask, NULL);
    snprintf(log, sizeof(log), "%s/%s.log", d->dir, name);
    fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
    }
    fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
        dup2(fd, STDIN_FILENO);
    execv(d->exe, (char *const *)argv);
    _exit(ODBC_LEADER__EX_NOTFOUND);
}

/* In the forked child: exec run for candidate k. */
static void exec_candidate(const struct demo *d, const struct cand *k) {
    const char *argv[] = {
        d->exe,  "run",     "-C",    d->conn,    "-n",
        "demo",  "--id",    k->name, "--grace",  "300ms",
        "--",    "/bin/sh", "-c",    job_script, "odbc-leader-demo-job",
        d->work, NULL,
    };

    exec_child(d, k->name, argv);
}

/* In the forked child: exec serve on the demo's database. */
static void exec_serve(const struct demo *d) {
    const char *argv[] = {
        d->exe, "serve",    "-C",     d->conn, "-n",
        "demo", "--listen", d->serve, NULL,
    };

    exec_child(d, "serve", argv);
}

/* With --serve: starts odbc-leader serve on the demo's database (the
 * observer created the tables) and says where to look. Returns 0 or
 * EX_OSERR. */
static int spawn_serve(struct demo *d) {
    pid_t pid;

    if (d->serve == NULL)
        return 0;
    fflush(stdout);
    pid = fork();
    if (pid < 0) {
        odbc_leader__cli_err(d->cli, "demo: fork: %s", strerror(errno));
        return EX_OSERR;
    }
    if (pid == 0)
        exec_serve(d);
    setpgid(pid, pid);
    d->serve_pid = pid;
    say(d, "the page: http://%s/ (odbc-leader serve; its log: %s/serve.log)",
        d->serve, d->dir);
    return 0;
}

/* Starts every candidate. Returns 0 or EX_OSERR. */
static int spawn_all(struct demo *d) {
    fflush(stdout);
    for (int i = 0; i < d->n; i++) {
        pid_t pid = fork();

        if (pid < 0) {
            odbc_leader__cli_err(d->cli, "demo: fork: %s", strerror(errno));
            return EX_OSERR;
        }
        if (pid == 0)
            exec_candidate(d, &d->cands[i]);
        setpgid(pid, pid);
        d->cands[i].pid = pid;
    }
    return 0;
}

/* Prints the last lines of a candidate's log after it died. */
static void show_log(struct demo *d, const struct cand *k) {
    char path[PATH_MAX + 32], line[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s.log", d->dir, k->name);
    f = fopen(path, "r");
    clear_progress(d);
    fprintf(stderr, "odbc-leader: demo: %s exited unexpectedly; its output:\n",
            k->name);
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        fprintf(stderr, "  %s", line);
    if (f != NULL)
        fclose(f);
}

/* Sleeps ms, reaping children. Returns 0, EX_SOFTWARE when a candidate
 * died unexpectedly, or 128+N after signal N. */
static int nap(struct demo *d, int64_t ms) {
    int64_t until = odbc_leader__now_ms() + ms;

    for (;;) {
        int64_t left = until - odbc_leader__now_ms();
        int bad = reap_all(d), sig;

        if (bad >= 0) {
            show_log(d, &d->cands[bad]);
            return EX_SOFTWARE;
        }
        if (left <= 0)
            return 0;
        sig = odbc_leader__cli_wait_signal(&d->sigs, left);
        if (sig != 0 && sig != SIGCHLD) {
            d->stop_sig = sig;
            return 128 + sig;
        }
    }
}

/* ---- observing ---- */

/* Reads who leads now: the index of the candidate holding an unexpired
 * lease (its lease in *l), or -1. */
static int leader_now(struct demo *d, struct odbc_leader_lease *l) {
    if (odbc_leader_read_lease(d->obs, l) < 0 || l->leader_id[0] == '\0' ||
        l->expires_at_ms <= l->db_now_ms)
        return -1;
    for (int i = 0; i < d->n; i++) {
        if (strcmp(d->cands[i].name, l->leader_id) == 0)
            return i;
    }
    return -1;
}

/* Shows the waiting state on the progress line. */
static void show_wait(struct demo *d, const struct odbc_leader_lease *l) {
    char msg[256];

    if (l->leader_id[0] != '\0' && l->expires_at_ms > l->db_now_ms)
        snprintf(msg, sizeof(msg), "lease of %s (term %lld) expires in %.1f s",
                 l->leader_id, (long long)l->term,
                 (double)(l->expires_at_ms - l->db_now_ms) / 1000.0);
    else
        snprintf(msg, sizeof(msg), "no leader: the candidates are campaigning");
    progress(d, msg);
}

/* Waits until a running candidate other than `not` leads with a term
 * above min_term. Sets *who and *term. Returns 0 or an exit code. */
static int wait_leader(struct demo *d, int not, int64_t min_term, int *who,
                       int64_t *term) {
    int64_t deadline = odbc_leader__now_ms() + STAGE_TIMEOUT_MS;

    while (odbc_leader__now_ms() < deadline) {
        struct odbc_leader_lease l;
        int i = leader_now(d, &l), rc;

        if (i >= 0 && i != not &&l.term > min_term && d->cands[i].pid != 0) {
            *who = i;
            *term = l.term;
            return 0;
        }
        show_wait(d, &l);
        rc = nap(d, POLL_MS);
        if (rc != 0)
            return rc;
    }
    clear_progress(d);
    odbc_leader__cli_err(d->cli, "demo: no new leader within %d s",
                         STAGE_TIMEOUT_MS / 1000);
    return EX_SOFTWARE;
}

/* Waits (at most 3 s) until the job of term has logged its start; returns
 * 1 when it did. */
static int job_started(struct demo *d, const char *name, int64_t term) {
    char want[256], line[256];

    snprintf(want, sizeof(want), "%s term %lld: started\n", name,
             (long long)term);
    for (int tries = 0; tries < 3000 / POLL_MS; tries++) {
        FILE *f = fopen(d->work, "r");
        int found = 0;

        while (f != NULL && !found && fgets(line, sizeof(line), f) != NULL)
            found = strcmp(line, want) == 0;
        if (f != NULL)
            fclose(f);
        if (found)
            return 1;
        if (nap(d, POLL_MS) != 0)
            return 0;
    }
    return 0;
}

/* odbc_leader_list_candidates callback: one table row. */
static void print_cand(void *ctx, const struct odbc_leader_candidate *c) {
    const char *leader = ctx;

    printf("          %-10s heartbeat %.1f s ago%s\n", c->id,
           (double)(c->db_now_ms - c->heartbeat_at_ms) / 1000.0,
           strcmp(c->id, leader) == 0 ? "  <- leader" : "");
}

/* Prints the live candidates as the database sees them. */
static void show_table(struct demo *d, const char *leader) {
    clear_progress(d);
    odbc_leader_list_candidates(d->obs, print_cand, (void *)leader);
    fflush(stdout);
}

/* ---- the acts ---- */

/* Act 1: the first election. Returns 0 or an exit code; *who leads. */
static int act_elect(struct demo *d, int *who, int64_t *term) {
    int rc = spawn_all(d);

    if (rc != 0)
        return rc;
    say(d,
        "started %d candidates: each is \"odbc-leader run -n demo --id "
        "NAME -- JOB\"",
        d->n);
    rc = wait_leader(d, -1, 0, who, term);
    if (rc != 0)
        return rc;
    say(d, "%s leads (term %lld); its job runs, the others wait:",
        d->cands[*who].name, (long long)*term);
    job_started(d, d->cands[*who].name, *term);
    show_table(d, d->cands[*who].name);
    return nap(d, d->pause_ms);
}

/* Sends sig to the leader *who (to its process group when group is set)
 * and waits for the next leader. Returns 0 with the new leader in *who,
 * its term in *term and the seconds the takeover took in *took, or an
 * exit code. */
static int take_over(struct demo *d, int *who, int64_t *term, double *took,
                     int sig, int group) {
    struct cand *k = &d->cands[*who];
    int64_t t = odbc_leader__now_ms();
    int rc;

    k->expected_end = 1;
    kill(group ? -k->pid : k->pid, sig);
    rc = wait_leader(d, *who, *term, who, term);
    if (rc != 0)
        return rc;
    *took = since(d, t);
    say(d, "%s took over after %.2f s with term %lld", d->cands[*who].name,
        *took, (long long)*term);
    return 0;
}

/* Act 2: kill -9 the leader; time the takeover. */
static int act_crash(struct demo *d, int *who, int64_t *term, double *took) {
    int rc;

    putchar('\n');
    say(d,
        "kill -9 %s: no chance to resign; the others wait for its lease "
        "to expire",
        d->cands[*who].name);
    rc = take_over(d, who, term, took, SIGKILL, 1);
    if (rc != 0)
        return rc;
    if (job_started(d, d->cands[*who].name, *term))
        say(d, "%s's job started with ODBC_LEADER_TERM=%lld",
            d->cands[*who].name, (long long)*term);
    return nap(d, d->pause_ms);
}

/* Act 3: SIGTERM to the leader; time the graceful handoff. */
static int act_handoff(struct demo *d, int *who, int64_t *term, double *took) {
    int rc;

    putchar('\n');
    say(d, "kill -TERM %s: it stops its job and resigns on its way out",
        d->cands[*who].name);
    rc = take_over(d, who, term, took, SIGTERM, 0);
    if (rc != 0)
        return rc;
    job_started(d, d->cands[*who].name, *term);
    show_table(d, d->cands[*who].name);
    return 0;
}

/* Prints the summary and the jobs' log. */
static void summary(struct demo *d, const char *const who[3],
                    const int64_t term[3], const double took[2]) {
    char line[256];
    FILE *f = fopen(d->work, "r");

    printf("\nSummary:\n"
           "  crash:   kill -9 %s  -> %s leads after %.2f s (the lease had "
           "to expire)\n"
           "  handoff: SIGTERM %s -> %s leads after %.2f s (%s resigned)\n"
           "  terms:   %lld -> %lld -> %lld (every new leader gets a new "
           "term)\n"
           "\nThe jobs' log (each job got its term as ODBC_LEADER_TERM, "
           "the fencing token):\n",
           who[0], who[1], took[0], who[1], who[2], took[1], who[1],
           (long long)term[0], (long long)term[1], (long long)term[2]);
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        printf("  %s", line);
    if (f != NULL)
        fclose(f);
    fflush(stdout);
}

/* Prints who led when: the demo namespace's election log, as
 * "odbc-leader elections" reads it. */
static void show_elections(struct demo *d) {
    struct odbc_leader__election_list l = {NULL, 0, 0, 0};
    int rc =
        odbc_leader_list_elections(d->obs, odbc_leader__cli_keep_election, &l);

    printf("\nWho led when (the election log: odbc-leader elections):\n");
    if (rc < 0)
        printf("  (not readable: %s)\n", odbc_leader_strerror(rc));
    for (size_t i = 0; i < l.n; i++) {
        const struct odbc_leader_election *e = &l.v[i];
        int64_t end = e->ended_at_ms != 0 ? e->ended_at_ms : e->db_now_ms;

        printf("  term %lld  %-8s %6.2f s%s  %s%s%s\n", (long long)e->term,
               e->leader_id, (double)(end - e->started_at_ms) / 1000.0,
               e->ended_at_ms != 0 ? " " : "+",
               e->ended_how[0] != '\0' ? e->ended_how : "leads",
               e->handed_to[0] != '\0' ? " to " : "", e->handed_to);
    }
    fflush(stdout);
    free(l.v);
}

/* Runs the three acts. Returns the exit code. */
static int play(struct demo *d) {
    const char *who_name[3];
    int64_t term[3];
    double took[2];
    int who, rc;

    printf("odbc-leader demo: %d candidates campaign for the lease of "
           "namespace \"demo\"\n"
           "in one SQLite file. Only the leader runs its job. It renews the "
           "lease\nevery %d s; a lease not renewed expires after %d s.\n"
           "(temp dir: %s)\n\n",
           d->n, TTL_MS / 3000, TTL_MS / 1000, d->dir);
    rc = spawn_serve(d);
    if (rc != 0)
        return rc;
    rc = act_elect(d, &who, &term[0]);
    if (rc != 0)
        return rc;
    who_name[0] = d->cands[who].name;
    term[1] = term[0];
    rc = act_crash(d, &who, &term[1], &took[0]);
    if (rc != 0)
        return rc;
    who_name[1] = d->cands[who].name;
    term[2] = term[1];
    rc = act_handoff(d, &who, &term[2], &took[1]);
    if (rc != 0)
        return rc;
    who_name[2] = d->cands[who].name;
    summary(d, who_name, term, took);
    show_elections(d);
    return 0;
}

/* ---- setup and cleanup ---- */

/* Finds this binary, makes the temp dir and builds the connection
 * string. Returns 0 or an exit code. */
static int setup(struct demo *d) {
    const char *tmp = getenv("TMPDIR");
    char db[PATH_MAX + 16], num[32];
    ssize_t n = readlink("/proc/self/exe", d->exe, sizeof(d->exe) - 1);

    if (n <= 0) {
        odbc_leader__cli_err(d->cli, "demo: /proc/self/exe: %s",
                             strerror(errno));
        return EX_OSERR;
    }
    d->exe[n] = '\0';
    snprintf(d->dir, sizeof(d->dir), "%s/odbc-leader-demo.XXXXXX",
             tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
    if (mkdtemp(d->dir) == NULL) {
        odbc_leader__cli_err(d->cli, "demo: %s: %s", d->dir, strerror(errno));
        d->dir[0] = '\0';
        return EX_OSERR;
    }
    snprintf(d->work, sizeof(d->work), "%s/work.log", d->dir);
    snprintf(db, sizeof(db), "%s/leader.db", d->dir);
    snprintf(num, sizeof(num), "%d", TTL_MS);
    if (odbc_leader__cli_append_kv(&d->conn, "Driver", "SQLite3") ||
        odbc_leader__cli_append_kv(&d->conn, "Database", db) ||
        odbc_leader__cli_append_kv(&d->conn, "LeaderTTL", num)) {
        odbc_leader__cli_err(d->cli, "out of memory");
        return EX_OSERR;
    }
    snprintf(num, sizeof(num), "%ld", (long)getpid());
    if (setenv("ODBC_LEADER_DEMO_PID", num, 1) < 0)
        return EX_OSERR;
    return 0;
}

/* Opens the observer handle in namespace demo (it creates the tables
 * before the candidates start). Returns 0 or an exit code. */
static int open_observer(struct demo *d) {
    struct odbc_leader_callbacks cb = {.struct_size = sizeof(cb),
                                       .ctx = d->cli,
                                       .log = odbc_leader__cli_log,
                                       .on_change = NULL};
    char *conf = strdup(d->conn);
    char err[1024] = "";
    int rc;

    if (conf == NULL ||
        odbc_leader__cli_append_kv(&conf, "LeaderNamespace", "demo") < 0) {
        free(conf);
        odbc_leader__cli_err(d->cli, "out of memory");
        return EX_OSERR;
    }
    rc = odbc_leader_create(&d->obs, conf, &cb, err, sizeof(err));
    free(conf);
    if (rc < 0) {
        odbc_leader__cli_err(d->cli, "demo: %s", err);
        if (rc == ODBC_LEADER_ECONNECT)
            odbc_leader__cli_err(d->cli, "demo: is the SQLite3 ODBC driver "
                                         "installed (Debian: libsqliteodbc)?");
        return odbc_leader__cli_exit_code(rc);
    }
    return 0;
}

/* Stops every candidate still running (SIGTERM to its group, SIGKILL
 * after STOP_TIMEOUT_MS) and reaps every child, orphaned jobs included. */
static void stop_all(struct demo *d) {
    int64_t deadline = odbc_leader__now_ms() + STOP_TIMEOUT_MS;
    int killed = 0;

    d->stopping = 1;
    for (int i = 0; i < d->n; i++) {
        d->cands[i].expected_end = 1;
        if (d->cands[i].pid != 0)
            kill(d->cands[i].pid, SIGTERM);
    }
    if (d->serve_pid != 0)
        kill(d->serve_pid, SIGTERM);
    for (;;) {
        reap_all(d);
        if (waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
            return;
        if (!killed && odbc_leader__now_ms() >= deadline) {
            for (int i = 0; i < d->n; i++) {
                if (d->cands[i].pid != 0)
                    kill(-d->cands[i].pid, SIGKILL);
            }
            if (d->serve_pid != 0)
                kill(-d->serve_pid, SIGKILL);
            killed = 1;
            deadline += STOP_TIMEOUT_MS;
        } else if (killed && odbc_leader__now_ms() >= deadline) {
            return; /* something ignores SIGKILL: give up */
        }
        odbc_leader__cli_wait_signal(&d->sigs, POLL_MS);
    }
}

/* Removes the temp dir and the files in it. */
static void remove_dir(struct demo *d) {
    DIR *dir;

    if (d->dir[0] == '\0')
        return;
    dir = opendir(d->dir);
    if (dir != NULL) {
        for (struct dirent *e = readdir(dir); e != NULL; e = readdir(dir)) {
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                unlinkat(dirfd(dir), e->d_name, 0);
        }
        closedir(dir);
    }
    rmdir(d->dir);
}

/* Takes one of demo's options into the struct demo ctx. Returns 0, 1 when
 * opt is none of them, or EX_USAGE after a message. */
static int demo_opt(struct odbc_leader__cli *c, void *ctx, int opt,
                    const char *arg) {
    struct demo *d = ctx;
    char *end = NULL;
    long v;

    switch (opt) {
    case 'c':
        v = strtol(arg, &end, 10);
        if (end == arg || *end != '\0' || v < 3 || v > MAX_CANDS)
            return odbc_leader__cli_usage(
                c, "demo", "-c: a number from 3 to %d", MAX_CANDS);
        d->n = (int)v;
        return 0;
    case 'P':
        if (odbc_leader__cli_duration(arg, &d->pause_ms) == 0)
            return 0;
        return odbc_leader__cli_usage(c, "demo",
                                      "--pause: invalid duration \"%s\"", arg);
    case 'S':
        d->serve = arg != NULL ? arg : "127.0.0.1:9466";
        return 0;
    default:
        return 1;
    }
}

static const struct odbc_leader__cli_cmdline demo_cmdline = {
    .subcmd = "demo",
    .help = demo_help,
    .shortopts = "c:",
    .opt = demo_opt,
    .common = ODBC_LEADER__CLI_NO_CONNECT,
    .longopts = {{"candidates", required_argument, NULL, 'c'},
                 {"pause", required_argument, NULL, 'P'},
                 {"serve", optional_argument, NULL, 'S'}},
};

int odbc_leader__cli_demo(struct odbc_leader__cli *c, int argc, char **argv) {
    struct demo d;
    int rc;

    memset(&d, 0, sizeof(d));
    d.cli = c;
    d.n = 3;
    d.pause_ms = 5000;
    for (int i = 0; i < MAX_CANDS; i++)
        d.cands[i].name = names[i];
    rc = odbc_leader__cli_parse(c, &demo_cmdline, &d, argc, argv);
    if (rc != 0)
        return rc == ODBC_LEADER__CLI_HELP ? 0 : rc;
    d.tty = isatty(STDOUT_FILENO);
    d.t0 = odbc_leader__now_ms();
    sigemptyset(&d.sigs);
    sigaddset(&d.sigs, SIGINT);
    sigaddset(&d.sigs, SIGTERM);
    sigaddset(&d.sigs, SIGHUP);
    sigaddset(&d.sigs, SIGCHLD);
    sigprocmask(SIG_BLOCK, &d.sigs, &d.oldmask);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    rc = setup(&d);
    if (rc == 0)
        rc = open_observer(&d);
    if (rc == 0)
        rc = play(&d);
    clear_progress(&d);
    stop_all(&d);
    odbc_leader_destroy(d.obs);
    remove_dir(&d);
    free(d.conn);
    if (d.stop_sig != 0)
        fprintf(stderr, "odbc-leader: demo interrupted; cleaned up\n");
    return rc;
}
