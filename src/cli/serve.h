/* SPDX-License-Identifier: MIT */
/*
 * serve.h: the rooms of "odbc-leader serve" and what they share: the
 * daemon and its routes (serve.c), the database connection and the reads
 * of a namespace (serve_conn.c), /health/leader (health.c), /metrics
 * (serve_metrics.c, its counters serve_counters.c), the JSON API
 * (serve_api.c), the page (serve_page.c), TLS and basic authentication
 * (serve_auth.c). Only built with libmicrohttpd; serve_stubs.c stands in
 * without it.
 */
#ifndef ODBC_LEADER_CLI_SERVE_H
#define ODBC_LEADER_CLI_SERVE_H

#include "cli.h"
#include "httpd.h"

#define ODBC_LEADER__SERVE_MAX_USERS 64 /* lines of --basic-auth */
/* serve's handles never create or upgrade the tables: it only reads. */
#define ODBC_LEADER__SERVE_READ_ONLY ";LeaderCreateSchema=no"

struct odbc_leader__serve_tally;    /* serve_metrics.c */
struct odbc_leader__serve_counters; /* serve_counters.c */

/* One namespace served. */
struct odbc_leader__serve_ns {
    const char *name;     /* borrowed from argv or the configuration */
    int group;            /* the last read of its shards found a group */
    int64_t shards_at_ns; /* monotonic: when the shards were last read */
    unsigned long failed; /* failed reads since serve started: each
                             attempt, and finding no connection */
    struct odbc_leader__serve_tally *tally;       /* owned; NULL until /metrics
                                                     kept one */
    struct odbc_leader__serve_counters *counters; /* owned; NULL until
                                                     /metrics kept them */
    char error[512]; /* why its last read failed, for the responses */
};

/* The state of serve. */
struct odbc_leader__serve {
    struct odbc_leader__cli *cli;
    int64_t start_ns; /* monotonic: when serve started (its counters
                         count from then) */
    /* The one connection every namespace is read on (a handle that never
     * ticks, pointed at each namespace in turn: the daemon runs one request
     * at a time). NULL until opened, and after a failed read. */
    odbc_leader_t *h;
    int64_t retry_ns; /* monotonic: no new connection before */
    int64_t backoff_ns;
    int rc;             /* the error that closed h, 0 before any */
    char error[512];    /* why h is NULL */
    const char *listen; /* borrowed */
    const char *self;   /* --id, borrowed: the id /health/leader checks
                           when the request names none; NULL = none */
    struct odbc_leader__serve_ns *ns;
    size_t n;
    char *default_ns; /* owned: the configuration's namespace, no -n */
    const char *tls_cert_file, *tls_key_file, *auth_file; /* borrowed */
    char *tls_cert, *tls_key; /* owned: the PEM files' contents */
    char *auth;               /* owned: the --basic-auth file's contents */
    char *users[ODBC_LEADER__SERVE_MAX_USERS];  /* into auth: "name" */
    char *hashes[ODBC_LEADER__SERVE_MAX_USERS]; /* into auth: its crypt(3)
                                                   hash */
    size_t nusers;
    int started; /* every namespace was opened once */
    /* libmicrohttpd's messages (on_mhd_log), most of them about one
     * client: at most a burst a window, then counted. */
    int64_t log_since_ns;   /* monotonic: the current window's start */
    unsigned log_count;     /* logged in the window */
    unsigned long log_held; /* not logged in the window */
};

/* ---- serve_conn.c: the connection and the reads of a namespace ---- */

/* Returns the connection's handle (sv's), opening it when it is closed
 * and its backoff has passed; NULL with sv->error set when it cannot be
 * had now. */
odbc_leader_t *odbc_leader__serve_conn(struct odbc_leader__serve *sv);

/* Returns the namespace served named name (sv's), or NULL. */
struct odbc_leader__serve_ns *
odbc_leader__serve_ns_find(struct odbc_leader__serve *sv, const char *name);

/* Reads ns's lease into *l. Returns 0, or -1 with ns->error set. */
int odbc_leader__serve_lease(struct odbc_leader__serve *sv,
                             struct odbc_leader__serve_ns *ns,
                             struct odbc_leader_lease *l);

/* Reads ns's snapshot into *s (the caller frees it with
 * odbc_leader__cli_snapshot_free; zeroed on failure, with ns->error).
 * s->ns is ns->name. Returns 0 or -1. */
int odbc_leader__serve_snapshot(struct odbc_leader__serve *sv,
                                struct odbc_leader__serve_ns *ns,
                                struct odbc_leader__snapshot *s);

/* Reads ns's ledger (of job only unless NULL) into *l, which the caller
 * frees. Returns 0, or -1 with ns->error set. A dialect without a ledger
 * gives an empty list. */
int odbc_leader__serve_fires(struct odbc_leader__serve *sv,
                             struct odbc_leader__serve_ns *ns, const char *job,
                             struct odbc_leader__fire_list *l);

/* Reads ns's jobs into *l, which the caller frees. Returns 0, 1 when the
 * dialect has no fire lifecycle (l empty), or -1 with ns->error set. */
int odbc_leader__serve_jobs(struct odbc_leader__serve *sv,
                            struct odbc_leader__serve_ns *ns,
                            struct odbc_leader__job_list *l);

/* Reads ns's schedule identities (docs/schedules.md) into l (emptied
 * first). Returns 0 (a dialect without them: none), or -1 with ns->error
 * set. */
int odbc_leader__serve_schedules(struct odbc_leader__serve *sv,
                                 struct odbc_leader__serve_ns *ns,
                                 struct odbc_leader__schedule_list *l);

/* Reads ns's election log, oldest term first, into *l, which the caller
 * frees. Returns 0, 1 when the dialect keeps no log (l empty), or -1 with
 * ns->error set. */
int odbc_leader__serve_elections(struct odbc_leader__serve *sv,
                                 struct odbc_leader__serve_ns *ns,
                                 struct odbc_leader__election_list *l);

/* What POST /api/v1/jobs does (serve_control.c). */
enum odbc_leader__job_action {
    ODBC_LEADER__JOB_PAUSE,
    ODBC_LEADER__JOB_RESUME,
    ODBC_LEADER__JOB_TRIGGER
};

/* Pauses, resumes or triggers job (borrowed) in ns on serve's connection,
 * once: a run-now whose answer was lost may have been recorded, so it is
 * never asked again. Returns 0 (a run-now's key in *key), or
 * ODBC_LEADER_ENOLIFECYCLE, or another negative error with ns->error set
 * (the connection is dropped, as after a failed read). */
int odbc_leader__serve_job_action(struct odbc_leader__serve *sv,
                                  struct odbc_leader__serve_ns *ns, int action,
                                  const char *job, int64_t *key);

/* ---- health.c: GET /health/leader ---- */

/* 200 while the request's id (or --id) holds ns's unexpired lease by the
 * database clock, else 503 with the reason. Returns what the queueing
 * returned. ns is sv's. */
enum MHD_Result odbc_leader__serve_health(struct odbc_leader__serve *sv,
                                          struct MHD_Connection *conn,
                                          struct odbc_leader__serve_ns *ns);

/* ---- serve_metrics.c: GET /metrics ---- */

/* Every namespace's state, ledger and election log as Prometheus text.
 * Returns what the queueing returned. */
enum MHD_Result odbc_leader__serve_metrics(struct odbc_leader__serve *sv,
                                           struct MHD_Connection *conn);

/* Frees what /metrics keeps of ns: its tally and its counters. */
void odbc_leader__serve_metrics_free(struct odbc_leader__serve_ns *ns);

/* ---- serve_counters.c: the counters of /metrics ---- */

/* Returns new counters, all 0 (the caller frees them), or NULL. */
struct odbc_leader__serve_counters *odbc_leader__serve_counters_new(void);

/* Frees c; NULL is fine. */
void odbc_leader__serve_counters_free(struct odbc_leader__serve_counters *c);

/* Counts the fires of the ledger l (every job, any order; borrowed) that
 * finished since the read before, for a serve that has run run_ms. Returns
 * 0, or -1 when out of memory (then nothing is counted). */
int odbc_leader__serve_counters_fires(struct odbc_leader__serve_counters *c,
                                      const struct odbc_leader__fire_list *l,
                                      int64_t run_ms);

/* Counts the terms of the election log l that began or ended since the
 * read before; sorts l by term (it stays the caller's). Returns 0, or -1
 * when out of memory (then nothing is counted). */
int odbc_leader__serve_counters_terms(struct odbc_leader__serve_counters *c,
                                      struct odbc_leader__election_list *l,
                                      int64_t run_ms);

/* Writes the counter families of every namespace of sv: of fires when
 * fires is set, else of terms (odbc_leader_terms_ended_total,
 * odbc_leader_takeovers_total). */
void odbc_leader__serve_counters_prom(FILE *f,
                                      const struct odbc_leader__serve *sv,
                                      int fires);

/* ---- serve_api.c: GET /api/v1/... ---- */

/* /api/v1/namespaces: every namespace's status object. */
enum MHD_Result odbc_leader__serve_api_namespaces(struct odbc_leader__serve *sv,
                                                  struct MHD_Connection *conn);

/* The routes of one namespace, ns (sv's; serve.c finds it in the URL or
 * ?namespace=). */

/* /api/v1/namespaces/NAME: ns's status object. */
enum MHD_Result
odbc_leader__serve_api_namespace(struct odbc_leader__serve *sv,
                                 struct MHD_Connection *conn,
                                 struct odbc_leader__serve_ns *ns);

/* /api/v1/fires: the newest fires of ns's ledger. */
enum MHD_Result odbc_leader__serve_api_fires(struct odbc_leader__serve *sv,
                                             struct MHD_Connection *conn,
                                             struct odbc_leader__serve_ns *ns);

/* /api/v1/elections: the newest terms of ns's election log. */
enum MHD_Result
odbc_leader__serve_api_elections(struct odbc_leader__serve *sv,
                                 struct MHD_Connection *conn,
                                 struct odbc_leader__serve_ns *ns);

/* GET /api/v1/jobs?namespace=NS: {"namespace":NS,"jobs":[...]}, each as
 * "jobs --json" prints it; 404 when the dialect has no lifecycle. */
enum MHD_Result odbc_leader__serve_api_jobs(struct odbc_leader__serve *sv,
                                            struct MHD_Connection *conn,
                                            struct odbc_leader__serve_ns *ns);

/* ---- serve_page.c: GET / and /dashboard.js ---- */

/* The page: every namespace rendered now. */
enum MHD_Result odbc_leader__serve_page(struct odbc_leader__serve *sv,
                                        struct MHD_Connection *conn);

/* The page's script (dashboard.js, built in). */
enum MHD_Result odbc_leader__serve_script(struct MHD_Connection *conn);

/* ---- serve.c and serve_control.c: requests ---- */

/* Finds the namespace a request names with ?namespace= (optional when one
 * namespace is served). Returns it (sv's), or NULL after queueing the 4xx
 * into *ret. */
struct odbc_leader__serve_ns *
odbc_leader__serve_req_ns(struct odbc_leader__serve *sv,
                          struct MHD_Connection *conn, enum MHD_Result *ret);

/* POST /api/v1/jobs?namespace=NS&job=JOB&action=pause|resume|trigger:
 * refused (403) unless serve checks users (--basic-auth) and the request
 * carries X-Requested-By; 400 for a bad job or action; done once, logged
 * with the user and answered as JSON. Returns the queueing's result. */
enum MHD_Result odbc_leader__serve_control(struct odbc_leader__serve *sv,
                                           struct MHD_Connection *conn);

/* ---- serve_auth.c: TLS and basic authentication ---- */

/* Loads --tls-cert, --tls-key and --basic-auth into sv. Returns 0 or an
 * exit code after a message. */
int odbc_leader__serve_load_secrets(struct odbc_leader__serve *sv);

/* Returns 1 when the request's basic credentials match a --basic-auth
 * user, else 0. */
int odbc_leader__serve_authorized(struct odbc_leader__serve *sv,
                                  struct MHD_Connection *conn);

/* Queues 401 with the challenge of basic authentication. Returns what the
 * queueing returned. */
enum MHD_Result odbc_leader__serve_reply_auth(struct MHD_Connection *conn);

/* Frees the secrets sv holds (the key wiped first). */
void odbc_leader__serve_secrets_free(struct odbc_leader__serve *sv);

#endif /* ODBC_LEADER_CLI_SERVE_H */
