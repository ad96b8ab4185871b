/* SPDX-License-Identifier: MIT */
/*
 * cli.h: declarations shared by the translation units of the odbc-leader
 * command (src/cli/). Nothing here is part of the library: the command
 * links libodbcleader_core statically and uses the public API plus the
 * internal helpers of the library headers (config.h, clock.h, ...).
 */
#ifndef ODBC_LEADER_CLI_H
#define ODBC_LEADER_CLI_H

#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sysexits.h>

#include "odbc_leader.h"

struct odbc_leader__config; /* config.h */

/* Exit codes of our own, next to <sysexits.h>. Documented in --help and
 * in odbc-leader(1); never change their meaning. */
enum odbc_leader__cli_exit {
    ODBC_LEADER__EX_LOST = 80,        /* leadership lost while CMD ran */
    ODBC_LEADER__EX_BUSY = 81,        /* --no-wait: another candidate leads */
    ODBC_LEADER__EX_NOLEADER = 82,    /* resign: the namespace has no leader */
    ODBC_LEADER__EX_NOCANDIDATE = 83, /* resign --to: candidate not alive */
    ODBC_LEADER__EX_DONE = 84, /* run --once: the key ran or runs already */
    ODBC_LEADER__EX_NOTFOUND = 127, /* CMD not found */
    ODBC_LEADER__EX_NOEXEC = 126,   /* CMD found but not executable */
};

/* A subcommand's result when it printed its help: exit 0. */
#define ODBC_LEADER__CLI_HELP (-1)

/* Options every subcommand accepts, and the state they configure. */
struct odbc_leader__cli {
    const char *dsn;     /* -d NAME, borrowed from argv; NULL = none */
    const char *connect; /* -C STRING, borrowed from argv; NULL = none */
    const char *ns;      /* -n NS, borrowed; NULL = from the config */
    int verbose;         /* number of -v */
    int syslog;          /* --syslog: log lines go to syslog(3), errors
                            to syslog and stderr; openlog() was called */
    int help;            /* -h seen */
    int quiet_connect;   /* while creating a handle: hold warnings back
                            (a failed creation's error repeats them) */
    char held[4][512];   /* the warnings held back, shown when the
                            creation succeeds (a transaction pooler
                            found, say) */
    int nheld;
    int status_line; /* 1 while an updating line is shown on stderr */
};

/* getopt_long value of the common options that have no short letter. */
enum odbc_leader__cli_longonly {
    ODBC_LEADER__CLI_OPT_SYSLOG = 0x100, /* --syslog */
};

/* getopt_long entries and short letters of the common options. */
/* clang-format off */
#define ODBC_LEADER__CLI_SHORTOPTS "d:C:n:vh"
#define ODBC_LEADER__CLI_LONGOPTS                                              \
    {"dsn", required_argument, NULL, 'd'},                                     \
    {"connect", required_argument, NULL, 'C'},                                 \
    {"namespace", required_argument, NULL, 'n'},                               \
    {"verbose", no_argument, NULL, 'v'},                                       \
    {"syslog", no_argument, NULL, ODBC_LEADER__CLI_OPT_SYSLOG},                \
    {"help", no_argument, NULL, 'h'}
/* clang-format on */

/* The help text lines of the common options. */
#define ODBC_LEADER__CLI_COMMON_HELP                                           \
    "  -d, --dsn NAME        connect through the odbc.ini data source NAME\n"  \
    "  -C, --connect STRING  connect with an ODBC connection string\n"         \
    "  -n, --namespace NS    election namespace (default: LeaderNamespace\n"   \
    "                        of the connection, else \"default\")\n"           \
    "  -v, --verbose         more log lines (repeat for debug)\n"              \
    "      --syslog          log to syslog (facility daemon), not stderr;\n"   \
    "                        errors go to both\n"                              \
    "  -h, --help            this help\n"

/* ---- options.c: the command line of a subcommand ---- */

/* What follows a subcommand's options. */
enum odbc_leader__cli_operands {
    ODBC_LEADER__CLI_NO_OPERANDS, /* nothing: an operand is a usage error */
    ODBC_LEADER__CLI_CMD,         /* a CMD (run): options stop at the first
                                     operand, and one is needed */
    ODBC_LEADER__CLI_WORDS,       /* words the subcommand reads itself from
                                     argv[optind] on (jobs) */
};

/* Which of the common options a subcommand takes. */
enum odbc_leader__cli_common {
    ODBC_LEADER__CLI_ALL_COMMON, /* every one (ODBC_LEADER__CLI_LONGOPTS) */
    ODBC_LEADER__CLI_NO_CONNECT, /* only -v and -h: it makes its own
                                    database (demo) */
};

/* The most long options a subcommand has of its own. */
#define ODBC_LEADER__CLI_OWN_MAX 12

/* A subcommand's command line, as odbc_leader__cli_parse reads it: a
 * static table of the subcommand's. */
struct odbc_leader__cli_cmdline {
    const char *subcmd;    /* its name, for messages */
    const char *help;      /* its --help text */
    const char *shortopts; /* its own short letters; NULL = none */
    /* Takes one of its own options (opt as getopt_long returns it; arg
     * borrowed from argv) into ctx, the context odbc_leader__cli_parse
     * was given. Returns 0, 1 when opt is none of its own (a usage
     * error), or an exit code after a message (odbc_leader__cli_usage).
     * NULL when it has no options of its own. */
    int (*opt)(struct odbc_leader__cli *c, void *ctx, int opt, const char *arg);
    enum odbc_leader__cli_operands operands; /* what may follow */
    enum odbc_leader__cli_common common;     /* the common options it takes */
    int see_ns; /* opt also sees each -n, after the common handling */
    /* its own long options, after the common ones in the order
     * getopt_long tries them (and names them for an ambiguous
     * abbreviation); the entries after the last zeroed */
    struct option longopts[ODBC_LEADER__CLI_OWN_MAX];
};

/* Handles a common option letter (see ODBC_LEADER__CLI_SHORTOPTS).
 * Returns 1 when opt was one, 0 when it is not a common option, or
 * EX_USAGE after printing why arg is invalid. arg is borrowed. */
int odbc_leader__cli_common_opt(struct odbc_leader__cli *c, int opt,
                                const char *arg);

/* Resets getopt for parsing argv of a subcommand from index 1. */
void odbc_leader__cli_getopt_reset(void);

/*
 * Reads a subcommand's argv (from index 1, after
 * odbc_leader__cli_getopt_reset): the common options into c, its own
 * through cl->opt into ctx. Prints cl->help when -h was given. Returns 0
 * (optind then indexes the operands: run's CMD), ODBC_LEADER__CLI_HELP
 * after the help, or an exit code after a message (EX_USAGE for a bad
 * option or operand). cl and ctx are borrowed; argv's strings stay the
 * caller's.
 */
int odbc_leader__cli_parse(struct odbc_leader__cli *c,
                           const struct odbc_leader__cli_cmdline *cl, void *ctx,
                           int argc, char **argv);

/* Takes arg, the value of option name (say "--id") of subcommand subcmd,
 * into *out when it is a valid name (odbc_leader__valid_name). Returns 0,
 * or EX_USAGE after a message. arg stays argv's; *out borrows it. */
int odbc_leader__cli_name_arg(struct odbc_leader__cli *c, const char *subcmd,
                              const char *name, const char *arg,
                              const char **out);

/* The options of the subcommands that list rows (fires, elections). */
struct odbc_leader__cli_list_opts {
    int json;   /* --json: one JSON object per line */
    long limit; /* --limit: the newest N rows; 0 = all */
};

/* getopt_long entries of --json ('j') and --limit ('L'). */
#define ODBC_LEADER__CLI_LIST_LONGOPTS                                         \
    {"json", no_argument, NULL, 'j'}, { "limit", required_argument, NULL, 'L' }

/* Takes --json or --limit N of subcommand subcmd into *o. Returns 0, 1
 * when opt is neither, or EX_USAGE after a message. arg is borrowed. */
int odbc_leader__cli_list_opt(struct odbc_leader__cli *c, const char *subcmd,
                              struct odbc_leader__cli_list_opts *o, int opt,
                              const char *arg);

/* ---- common.c ---- */

/* Prints "odbc-leader: SUBCMD: msg" on stderr (clearing a status line)
 * and returns EX_USAGE after a hint to use --help. */
int odbc_leader__cli_usage(struct odbc_leader__cli *c, const char *subcmd,
                           const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prints "odbc-leader: msg" on stderr, clearing a status line first;
 * with --syslog, also logs msg at LOG_ERR. */
void odbc_leader__cli_err(struct odbc_leader__cli *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Like odbc_leader__cli_err, but logs at level with --syslog. */
void odbc_leader__cli_msg(struct odbc_leader__cli *c, int level,
                          const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Builds the library configuration from the options and the environment:
 * -C, else -d, else ODBC_LEADER_CONNECT, else ODBC_LEADER_DSN, else the
 * per-user SQLite file (its directory is created 0700), then
 * LeaderNamespace from -n, then extra (";Key=value..." or NULL).
 * Returns 0 and a string the caller frees in *out, or an exit code after
 * printing the problem.
 */
int odbc_leader__cli_config(struct odbc_leader__cli *c, const char *extra,
                            char **out);

/* Parses the configuration of c plus extra (as odbc_leader__cli_config
 * builds it) into *cfg, which the caller frees with
 * odbc_leader__config_free (zeroed after a failure). Returns 0 or an exit
 * code after a message. */
int odbc_leader__cli_config_parse(struct odbc_leader__cli *c, const char *extra,
                                  struct odbc_leader__config *cfg);

/* Appends ";key=value" to *s (reallocated; the caller owns it), bracing
 * the value when it holds ';', '{' or '}' or edge blanks. Returns 0, or
 * -1 when out of memory (*s unchanged). */
int odbc_leader__cli_append_kv(char **s, const char *key, const char *value);

/*
 * Creates a handle on the configuration of c plus extra. cb may be NULL;
 * its log member, when NULL, becomes odbc_leader__cli_log with c as ctx.
 * Returns 0 and the handle in *out (caller destroys it), or an exit code
 * after printing the error (EX_CONFIG, EX_UNAVAILABLE, EX_SOFTWARE...).
 */
int odbc_leader__cli_open(struct odbc_leader__cli *c, const char *extra,
                          const struct odbc_leader_callbacks *cb,
                          odbc_leader_t **out);

/* Runs a subcommand that works through a handle that never ticks: parses
 * argv by cl into opts, opens a handle on the configuration of c, calls
 * act with it and destroys it. Returns the exit code (0 after --help; act
 * returns 0 or an exit code after a message). cl and opts are
 * borrowed. */
int odbc_leader__cli_handle_cmd(struct odbc_leader__cli *c,
                                const struct odbc_leader__cli_cmdline *cl,
                                void *opts, int argc, char **argv,
                                int (*act)(struct odbc_leader__cli *c,
                                           odbc_leader_t *h, const void *opts));

/* Writes the connection string of c with passwords as "***" into buf
 * (for display). Returns 0 or an exit code after a message. */
int odbc_leader__cli_redacted(struct odbc_leader__cli *c, char *buf,
                              size_t len);

/* Maps a library error code to an exit code. */
int odbc_leader__cli_exit_code(int rc);

/* The log callback: ctx is a struct odbc_leader__cli. When level is at
 * least as severe as the -v threshold: syslog(level) with --syslog, else
 * a line on stderr. */
void odbc_leader__cli_log(void *ctx, int level, const char *msg);

/* Clears the updating status line on stderr, if one is shown. */
void odbc_leader__cli_clear_line(struct odbc_leader__cli *c);

/* Shows msg as the updating status line on stderr (a terminal). */
void odbc_leader__cli_show_line(struct odbc_leader__cli *c, const char *msg);

/* Parses a duration ("500ms", "10s", "1.5s", "2m", "1h", plain seconds)
 * into *ms. Returns 0, or -1 when s is not a duration. */
int odbc_leader__cli_duration(const char *s, int64_t *ms);

/* Waits up to timeout_ms (0 = poll) for one of the blocked signals in
 * sigs. Returns the signal number, or 0 on timeout. */
int odbc_leader__cli_wait_signal(const sigset_t *sigs, int64_t timeout_ms);

/* Makes room for one more element of size bytes in the array v of *cap
 * elements, n of them used: reallocates it twice as large (64 at first)
 * when full. Returns the array to use from now on (v itself when there
 * was room), or NULL when out of memory (v and *cap unchanged). v is the
 * caller's, as is what it returns. */
void *odbc_leader__cli_grow(void *v, size_t *cap, size_t n, size_t size);

/* Appends a copy of the size bytes at elem to the array v of *n elements
 * (*cap allocated), growing it as odbc_leader__cli_grow does, and counts
 * it in *n. Does nothing when *nomem is set; sets it when out of memory.
 * Returns the array to use from now on (v itself unless it moved); v is
 * the caller's, as is what it returns; elem is borrowed. */
void *odbc_leader__cli_push(void *v, size_t *cap, size_t *n, const void *elem,
                            size_t size, int *nomem);

/* ---- format.c: values for people and programs ---- */

/* Writes epoch ms as "YYYY-MM-DD HH:MM:SS.mmm" (UTC) into buf (32 bytes
 * are enough). Returns buf. */
const char *odbc_leader__cli_utc(int64_t ms, char *buf, size_t len);

/* Writes s as a JSON string literal (with quotes) to f. */
void odbc_leader__cli_json_string(FILE *f, const char *s);

/* Like odbc_leader__cli_json_string, but null for "". */
void odbc_leader__cli_json_or_null(FILE *f, const char *s);

/* ---- history.c: fires and terms, kept, written and listed ---- */

/* Fires read from a ledger, in ledger order (oldest fire first). */
struct odbc_leader__fire_list {
    struct odbc_leader_fire *v; /* owned */
    size_t n, cap;
    int nomem; /* a copy failed: the list is incomplete */
};

/* odbc_leader_list_fires callback: appends a copy of f to the
 * struct odbc_leader__fire_list in ctx (sets nomem when out of memory). */
void odbc_leader__cli_keep_fire(void *ctx, const struct odbc_leader_fire *f);

/* The jobs of a namespace as odbc_leader_list_jobs() read them, in order
 * (jobs, serve's /api/v1/jobs). */
struct odbc_leader__job_list {
    struct odbc_leader_job *v; /* owned */
    size_t n, cap;
    int nomem; /* a copy failed: the list is incomplete */
};

/* odbc_leader_list_jobs callback: appends a copy of j to the struct
 * odbc_leader__job_list in ctx (sets nomem when out of memory). */
void odbc_leader__cli_keep_job(void *ctx, const struct odbc_leader_job *j);

/* The schedules listed by odbc_leader_list_schedules (history.c). */
struct odbc_leader__schedule_list {
    struct odbc_leader_schedule *v; /* owned */
    size_t n, cap;
    int nomem; /* a copy failed: the list is incomplete */
};

/* odbc_leader_list_schedules callback: appends a copy of s to the struct
 * odbc_leader__schedule_list in ctx (sets nomem when out of memory). */
void odbc_leader__cli_keep_schedule(void *ctx,
                                    const struct odbc_leader_schedule *s);

/* Writes j as one JSON object (no newline) to out. */
void odbc_leader__cli_job_json(FILE *out, const struct odbc_leader_job *j);

/* The state of f: its lifecycle state, or for a dialect without the
 * lifecycle running, done or failed by its columns. Static or borrowed
 * from f. */
const char *odbc_leader__cli_fire_state(const struct odbc_leader_fire *f);
/* Writes fire f as one JSON object (no newline) to out. */
void odbc_leader__cli_fire_json(FILE *out, const struct odbc_leader_fire *f);

/* Terms read from an election log, oldest first. */
struct odbc_leader__election_list {
    struct odbc_leader_election *v; /* owned */
    size_t n, cap;
    int nomem; /* a copy failed: the list is incomplete */
};

/* odbc_leader_list_elections callback: appends a copy of e to the
 * struct odbc_leader__election_list in ctx (sets nomem when out of
 * memory). */
void odbc_leader__cli_keep_election(void *ctx,
                                    const struct odbc_leader_election *e);

/* Writes term e as one JSON object (no newline) to out. */
void odbc_leader__cli_election_json(FILE *out,
                                    const struct odbc_leader_election *e);

/* The index of the first of the newest limit of n rows (0 = all). */
size_t odbc_leader__cli_newest(size_t n, long limit);

/* Checks a read of a list of h's namespace: rc, the library's return, and
 * nomem, the list's flag after it. Returns 0, or an exit code after a
 * message: "WHAT of NS failed: ..." for a negative rc, else "out of
 * memory". Everything is borrowed. */
int odbc_leader__cli_list_read(struct odbc_leader__cli *c,
                               const odbc_leader_t *h, const char *what, int rc,
                               int nomem);

/* Prints rows for a listing subcommand: the table's header (through
 * header) unless o->json, then the newest o->limit (0 = all) of the n rows
 * at v, size bytes each, oldest first, each through print (as JSON when
 * json is set). All is borrowed. */
void odbc_leader__cli_print_rows(const void *v, size_t n, size_t size,
                                 const struct odbc_leader__cli_list_opts *o,
                                 void (*header)(void),
                                 void (*print)(const void *row, int json));

/* ---- snapshot.c: a namespace's state (status, serve) ---- */

/* The namespace as read from the database, in database time. */
struct odbc_leader__snapshot {
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
    size_t shards;
    uint32_t unled, foreign;
    uint32_t *leads;                /* owned, n entries, when shards > 0 */
    struct odbc_leader_shard *rows; /* owned, shards entries */
    size_t rows_cap;
};

/* Reads the lease, the candidates and, with shards set, a group's shards
 * of h's namespace into *s (which owns the arrays afterwards; free them
 * with odbc_leader__cli_snapshot_free, also after a failure). Returns 0 or
 * a negative library error. */
int odbc_leader__cli_snapshot_read(odbc_leader_t *h,
                                   struct odbc_leader__snapshot *s, int shards);

/* Frees what *s owns and zeroes it. */
void odbc_leader__cli_snapshot_free(struct odbc_leader__snapshot *s);

/* Writes *s as one JSON object and a newline to f. */
void odbc_leader__cli_snapshot_json(FILE *f,
                                    const struct odbc_leader__snapshot *s);

/* ---- snapshot_metrics.c: a snapshot's metric families ---- */

/* Writes the n snapshots s[] as Prometheus text (format 0.0.4), each
 * family's HELP and TYPE once; with candidates set, also each live
 * candidate's heartbeat age. */
void odbc_leader__cli_snapshot_prom(FILE *f,
                                    const struct odbc_leader__snapshot *s,
                                    size_t n, int candidates);

/* ---- prom.c: the Prometheus text writer ---- */

/* Labels of a family besides its namespace's, at most. */
#define ODBC_LEADER__PROM_LABELS 3

enum odbc_leader__prom_type {
    ODBC_LEADER__PROM_GAUGE,
    ODBC_LEADER__PROM_COUNTER,
};

/* The labels a family gives the namespace's name (flags). */
enum odbc_leader__prom_ns {
    ODBC_LEADER__PROM_NS_NEW = 1, /* leader_namespace */
    ODBC_LEADER__PROM_NS_OLD = 2, /* namespace (deprecated: Kubernetes
                                     service discovery sets it on targets) */
};

/* A metric family: every sample carries the namespace labels of ns (none
 * when 0), then one value for each name of labels. */
struct odbc_leader__prom_family {
    const char *name;
    enum odbc_leader__prom_type type;
    const char *help;
    unsigned ns; /* enum odbc_leader__prom_ns flags */
    const char *labels[ODBC_LEADER__PROM_LABELS]; /* further label names, in
                                                     order; NULL after the
                                                     last */
};

/* Writes the HELP and TYPE lines of m (once, before its samples). */
void odbc_leader__prom_head(FILE *f, const struct odbc_leader__prom_family *m);

/* Writes a sample of m with value v: ns is the namespace (unused when
 * m->ns is 0), values[i] the value of m->labels[i] (NULL when m has no
 * further labels). Label values are escaped; all is borrowed. */
void odbc_leader__prom_int(FILE *f, const struct odbc_leader__prom_family *m,
                           const char *ns, const char *const *values,
                           int64_t v);

/* Like odbc_leader__prom_int, with ms milliseconds written as seconds. */
void odbc_leader__prom_ms(FILE *f, const struct odbc_leader__prom_family *m,
                          const char *ns, const char *const *values,
                          int64_t ms);

/* Like odbc_leader__prom_int, with nanos nanoseconds written as seconds. */
void odbc_leader__prom_nanos(FILE *f, const struct odbc_leader__prom_family *m,
                             const char *ns, const char *const *values,
                             int64_t nanos);

/* ---- http.c: request parsing of serve (tests/fuzz/fuzz_serve.c) ---- */

/* What a request path asks for. */
enum odbc_leader__route {
    ODBC_LEADER__ROUTE_NONE,       /* unknown: 404 */
    ODBC_LEADER__ROUTE_PAGE,       /* / */
    ODBC_LEADER__ROUTE_METRICS,    /* /metrics */
    ODBC_LEADER__ROUTE_HEALTH,     /* /health/leader */
    ODBC_LEADER__ROUTE_NAMESPACES, /* /api/v1/namespaces */
    ODBC_LEADER__ROUTE_NAMESPACE,  /* /api/v1/namespaces/NS: *rest = NS */
    ODBC_LEADER__ROUTE_FIRES,      /* /api/v1/fires */
    ODBC_LEADER__ROUTE_SCRIPT,     /* /dashboard.js */
    ODBC_LEADER__ROUTE_ELECTIONS,  /* /api/v1/elections */
    ODBC_LEADER__ROUTE_JOBS,       /* /api/v1/jobs */
};

/* Returns the route of url (a decoded path without its query); *rest is
 * set into url for ROUTE_NAMESPACE, else NULL. */
enum odbc_leader__route odbc_leader__http_route(const char *url,
                                                const char **rest);

/* Parses a limit parameter: decimal digits only, 1 to max; def when s is
 * NULL. Returns 0 with *limit set, or -1. */
int odbc_leader__http_limit(const char *s, long def, long max, long *limit);

/* Splits listen ("HOST:PORT", "[V6]:PORT", ":PORT") into host (len bytes
 * with the NUL; "" for every address) and *port (0-65535). Returns 0, or
 * -1 with a static reason in *why. */
int odbc_leader__http_split_listen(const char *listen, char *host, size_t len,
                                   long *port, const char **why);

/* Parses a line of a --basic-auth file in place (a trailing CR dropped):
 * returns 1 with *name and *hash pointing into line for "NAME:HASH", 0
 * for a blank line or a # comment, -1 otherwise. */
int odbc_leader__http_user_line(char *line, char **name, char **hash);

/* Writes s to f with < > & " ' as HTML entities. */
void odbc_leader__http_html(FILE *f, const char *s);

/* ---- serve_help.c ---- */

/* The text of "odbc-leader serve --help". */
extern const char odbc_leader__serve_help[];

/* ---- health.c: the health check of run --health-listen (serve_stubs.c
 * without libmicrohttpd) ---- */

struct odbc_leader__health;

/* Starts answering GET /health/leader on listen (ADDR:PORT) on a thread
 * of its own: 200 while h leads (odbc_leader_is_leader, no I/O) and CMD
 * runs (odbc_leader__cli_health_running), else 503. h is borrowed until
 * odbc_leader__cli_health_stop. Returns 0 and the server in *out, or an
 * exit code after a message (EX_USAGE, EX_OSERR, EX_UNAVAILABLE without
 * libmicrohttpd). Call with the stop signals blocked: the thread inherits
 * the mask. */
int odbc_leader__cli_health_start(struct odbc_leader__health **out,
                                  struct odbc_leader__cli *c,
                                  const char *listen, const odbc_leader_t *h);

/* Tells the health check whether CMD runs (1) or not (0). hs may be NULL. */
void odbc_leader__cli_health_running(struct odbc_leader__health *hs,
                                     int running);

/* Stops the health check and frees it; NULL is fine. */
void odbc_leader__cli_health_stop(struct odbc_leader__health *hs);

/* ---- watchdog.c: the supervisor between run and CMD ---- */

/* What the supervisor reports about how CMD ended (flags of
 * odbc_leader__wd_done). */
enum odbc_leader__wd_flags {
    ODBC_LEADER__WD_DEADLINE = 1, /* the deadline passed: it signalled */
    ODBC_LEADER__WD_STOPPED = 2,  /* run asked it to stop or kill CMD */
    ODBC_LEADER__WD_ORPHANED = 4, /* run went away: it killed CMD */
    ODBC_LEADER__WD_LOST = 8,     /* the supervisor itself died */
};

struct odbc_leader__wd;

/* What to run and under which deadline. Everything is borrowed for the
 * duration of odbc_leader__wd_start() only. */
struct odbc_leader__wd_spec {
    char **cmd;               /* NULL-terminated; cmd[0] is looked up in PATH */
    const sigset_t *cmd_mask; /* the signal mask CMD starts with */
    /* the limit of open files CMD starts with (run's own at start: the
     * health server raises run's); NULL: as the supervisor has it */
    const struct rlimit *cmd_nofile;
    const char *term, *ns, *id; /* ODBC_LEADER_TERM, _NAMESPACE, _ID */
    int64_t deadline_ns; /* CLOCK_BOOTTIME: CMD's group gets SIGKILL then */
    int64_t grace_ns;    /* ... and SIGTERM this long before */
};

/*
 * Forks the supervisor, which starts CMD in a process group of its own and
 * kills that group at the deadline unless it is moved on, and at once when
 * run goes away. Returns 0 and the handle in *out (the caller frees it with
 * odbc_leader__wd_destroy), or -1 with a message in err.
 */
int odbc_leader__wd_start(struct odbc_leader__wd **out,
                          const struct odbc_leader__wd_spec *spec, char *err,
                          size_t errlen);

/* Moves the deadline to deadline_ns. Returns 0, or -1 when the message
 * could not be sent (the deadline then stays where it was: safe). */
int odbc_leader__wd_extend(struct odbc_leader__wd *w, int64_t deadline_ns);

/* Sends sig to CMD's group now, SIGKILL after the grace period (or at the
 * deadline, if that comes first). Returns 0 or -1. */
int odbc_leader__wd_stop(struct odbc_leader__wd *w, int sig);

/* SIGKILL to CMD's group now (from run itself when the supervisor cannot
 * be told). Returns 0, or -1 when run had to do it. */
int odbc_leader__wd_kill(struct odbc_leader__wd *w);

/* Returns 1 once CMD and every process of its group are gone (the
 * supervisor exited), with CMD's wait status in *status and
 * ODBC_LEADER__WD_* flags in *flags; 0 while it runs. Never blocks. */
int odbc_leader__wd_done(struct odbc_leader__wd *w, int *status, int *flags);

/* Ends the supervision: closes the control pipe (the supervisor then kills
 * whatever of CMD's group is left), waits for the supervisor and frees w.
 * NULL is a no-op. */
void odbc_leader__wd_destroy(struct odbc_leader__wd *w);

/* ---- subcommands: each returns the process exit code ---- */
/* Each lives in src/cli/NAME.c (resign.c, status.c, fence.c, ...). */

int odbc_leader__cli_run(struct odbc_leader__cli *c, int argc, char **argv);
int odbc_leader__cli_status(struct odbc_leader__cli *c, int argc, char **argv);
int odbc_leader__cli_resign(struct odbc_leader__cli *c, int argc, char **argv);
int odbc_leader__cli_watch(struct odbc_leader__cli *c, int argc, char **argv);
int odbc_leader__cli_schema(struct odbc_leader__cli *c, int argc, char **argv);
int odbc_leader__cli_fence(struct odbc_leader__cli *c, int argc, char **argv);
int odbc_leader__cli_fires(struct odbc_leader__cli *c, int argc, char **argv);
int odbc_leader__cli_jobs(struct odbc_leader__cli *c, int argc, char **argv);
int odbc_leader__cli_elections(struct odbc_leader__cli *c, int argc,
                               char **argv);
int odbc_leader__cli_demo(struct odbc_leader__cli *c, int argc, char **argv);
int odbc_leader__cli_serve(struct odbc_leader__cli *c, int argc, char **argv);

#endif /* ODBC_LEADER_CLI_H */
