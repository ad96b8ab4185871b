/* SPDX-License-Identifier: MIT */
/*
 * serve.c: "odbc-leader serve": a read-only HTTP server, built on
 * libmicrohttpd, over the namespaces given with -n: Prometheus metrics
 * (/metrics), the same as JSON (/api/v1/...), a leader health check for
 * load balancers and readiness probes (/health/leader) and a small page
 * that refreshes by itself (/). It never campaigns: its handles never tick,
 * and it runs only SELECTs while it serves. Requests are answered one at a
 * time on libmicrohttpd's polling thread, the only thread that uses the
 * handles; a handle whose read failed is dropped and opened again, with a
 * backoff, by a later request. Also the health check of "odbc-leader run
 * --health-listen": 200 while that process leads and its CMD runs. Both
 * servers poll with epoll and have the same limits (connections, silence,
 * request size, open files), sized so that idle and slow clients cannot
 * keep the health check waiting.
 */
#include <build_config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "cli.h"
#include "clock.h"
#include "config.h"
#include "handle.h"

/* The limits of the HTTP servers of serve and run --health-listen
 * (docs/operations.md, "Idle and slow clients"): as many idle connections
 * as a client can cheaply hold (tests/cli/idle.test holds 2,000 from the
 * health check's own address) must not keep the health check waiting.
 * Past CONN_LIMIT libmicrohttpd stops polling the listening socket: a new
 * connection waits in the kernel's listen queue until one closes. */
#define CONN_LIMIT 4096      /* connections at once (fewer: the hard NOFILE) */
#define CONN_TIMEOUT_S 3     /* seconds of silence before a connection closes */
#define SERVE_REQUEST_KIB 16 /* serve: a request's line and headers */
#define HEALTH_REQUEST_KIB 4 /* run --health-listen: the same */
#define STR_(x) #x
#define STR(x) STR_(x)

/* The help; the limits stand inside its lines. */
/* clang-format off */
static const char serve_help[] =
    "Usage: odbc-leader serve [--listen ADDR:PORT] [-n NS ...] [OPTIONS]\n"
    "Serve the namespaces' state over HTTP, read only: it never campaigns,\n"
    "never creates or upgrades the tables (LeaderCreateSchema=no) and\n"
    "needs only SELECT on them.\n"
    "\n"
    "  --listen ADDR:PORT    where to listen (default 127.0.0.1:9466;\n"
    "                        [::1]:PORT for IPv6, :PORT for every address,\n"
    "                        port 0 for any free port, printed at start)\n"
    "  -n, --namespace NS    a namespace to serve; repeat for more\n"
    "                        (default: LeaderNamespace, else \"default\")\n"
    "      --id ID           the candidate id /health/leader checks when\n"
    "                        the request has no id= (this host's LeaderId)\n"
    "      --tls-cert FILE   serve HTTPS with this PEM certificate (chain)\n"
    "      --tls-key FILE    ... and this PEM private key\n"
    "      --basic-auth FILE every request needs one of the users of FILE,\n"
    "                        lines NAME:HASH (HASH from openssl passwd -6)\n"
    "" ODBC_LEADER__CLI_COMMON_HELP "\n"
    "Paths (GET or HEAD):\n"
    "  /                     the namespaces as a page that refreshes itself\n"
    "  /metrics              Prometheus text format: leader, term, lease,\n"
    "                        candidates, fires by job and outcome, terms by\n"
    "                        how they ended\n"
    "  /health/leader?namespace=NS&id=ID\n"
    "                        200 while ID (default --id) leads NS (database\n"
    "                        time), else 503\n"
    "  /api/v1/namespaces    every namespace served, as JSON\n"
    "  /api/v1/namespaces/NS one namespace\n"
    "  /api/v1/fires?namespace=NS[&job=J][&limit=N]\n"
    "                        the newest N fires (default 100, at most 10000)\n"
    "  /api/v1/elections?namespace=NS[&limit=N]\n"
    "                        the newest N terms of the election log, who led\n"
    "                        when (default 100, at most 10000)\n"
    "\n"
    "Limits (the same for run --health-listen, with " STR(HEALTH_REQUEST_KIB)
    " KiB a request):\n"
    "  at most " STR(CONN_LIMIT) " connections at once, all clients together (fewer\n"
    "  when the hard limit of open files is too low: said at start; the soft\n"
    "  one is raised to fit); past them a new connection waits in the\n"
    "  kernel's listen queue (net.core.somaxconn) until one closes. A\n"
    "  connection silent for " STR(CONN_TIMEOUT_S) " s, in a request or between two, is\n"
    "  closed without an answer; a request's line and headers may take\n"
    "  " STR(SERVE_REQUEST_KIB) " KiB (431 or 414 past it).\n"
    "\n"
    "It reads every namespace on one database connection, and starts only\n"
    "when it can open it and read the tables; later outages answer 503 (and\n"
    "odbc_leader_up 0) until the database is back. Stops on SIGTERM or\n"
    "SIGINT.\n"
    "Exit status: 0; 64 usage; 66 a file cannot be read; 69 database\n"
    "unavailable at start, or built without libmicrohttpd; 71 cannot\n"
    "listen (or a bad TLS key or certificate); 78 configuration.\n"
    "\n"
    "Examples:\n"
    "  odbc-leader serve -d sched -n report -n backup\n"
    "  odbc-leader serve -d sched --listen 0.0.0.0:9466 -n report --id host1\n";
/* clang-format on */

#ifndef ODBC_LEADER_HAVE_MHD

int odbc_leader__cli_serve(struct odbc_leader__cli *c, int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(serve_help, stdout);
            return 0;
        }
    }
    odbc_leader__cli_err(c, "serve: this odbc-leader was built without "
                            "libmicrohttpd (configure found none)");
    return EX_UNAVAILABLE;
}

int odbc_leader__cli_health_start(struct odbc_leader__health **out,
                                  struct odbc_leader__cli *c,
                                  const char *listen, const odbc_leader_t *h) {
    (void)listen;
    (void)h;
    *out = NULL;
    odbc_leader__cli_err(c, "run: --health-listen: this odbc-leader was "
                            "built without libmicrohttpd");
    return EX_UNAVAILABLE;
}

void odbc_leader__cli_health_running(struct odbc_leader__health *hs,
                                     int running) {
    (void)hs;
    (void)running;
}

void odbc_leader__cli_health_stop(struct odbc_leader__health *hs) { (void)hs; }

#else /* ODBC_LEADER_HAVE_MHD */

#include <crypt.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>

#define DEFAULT_LISTEN "127.0.0.1:9466"
#define MAX_NAMESPACES 1024
#define FIRES_DEFAULT 100
#define FIRES_MAX 10000
#define ELECTIONS_DEFAULT 100
#define ELECTIONS_MAX 10000
#define BACKOFF_MIN_NS (250 * INT64_C(1000000))
#define BACKOFF_MAX_NS (10 * INT64_C(1000000000))
#define MAX_FILE (1024 * 1024) /* --tls-cert, --tls-key, --basic-auth */
/* A namespace that names no group is asked again this often whether it
 * does: the group statement is not prepared, and a read of it costs more
 * than the rest of the snapshot. */
#define GROUP_RECHECK_NS (30 * INT64_C(1000000000))
/* /metrics reads a namespace's whole election log again only when the
 * lease changed hands (term or leader) since the last read, or when that
 * read is this old: a scrape every second of a long log costs one read
 * per term and one per 10 s, not one per scrape. */
#define ELECTIONS_REREAD_NS (10 * INT64_C(1000000000))
#define MAX_USERS 64
/* Descriptors kept for everything but the connections: stdio, the
 * database's, the listening socket, the poller's, syslog, run's pipes. */
#define FD_RESERVE 64
/* libmicrohttpd logs one message per client for some events (a client
 * that closed in the middle of a request): idle clients must not flood
 * the log, nor block the server's thread on it. */
#define MHD_LOG_BURST 10
#define MHD_LOG_WINDOW_NS (60 * INT64_C(1000000000))
/* serve's handles never create or upgrade the tables: it only reads. */
#define READ_ONLY ";LeaderCreateSchema=no"

/* How a term ended: the values of the label ended of
 * odbc_leader_elections; "current" is a term that has not. */
static const char *const ended_how[] = {"resigned", "requested",   "handover",
                                        "expired",  "quarantined", "current"};
#define N_ENDED (sizeof(ended_how) / sizeof(ended_how[0]))

/* What /metrics says of a namespace's election log, kept between scrapes
 * (ELECTIONS_REREAD_NS). */
struct tally {
    int64_t read_ns; /* monotonic: when read; 0 = never, or invalid */
    int64_t term;    /* the lease's term and leader at that read */
    char leader[129];
    int kept;                /* the dialect keeps a log (else no samples) */
    long ended[N_ENDED];     /* terms by ended_how[] */
    int64_t last_started_ms; /* the newest term's start; 0 = no term */
};

/* One namespace served. */
struct ns_state {
    const char *name;     /* borrowed from argv or the configuration */
    int group;            /* the last read of its shards found a group */
    int64_t shards_at_ns; /* monotonic: when the shards were last read */
    struct tally tally;   /* of the election log, for /metrics */
    char error[512];      /* why its last read failed, for the responses */
};

struct serve {
    struct odbc_leader__cli *cli;
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
    struct ns_state *ns;
    size_t n;
    char *default_ns; /* owned: the configuration's namespace, no -n */
    const char *tls_cert_file, *tls_key_file, *auth_file; /* borrowed */
    char *tls_cert, *tls_key; /* owned: the PEM files' contents */
    char *auth;               /* owned: the --basic-auth file's contents */
    char *users[MAX_USERS];   /* into auth: "name" */
    char *hashes[MAX_USERS];  /* into auth: its crypt(3) hash */
    size_t nusers;
    int started; /* every namespace was opened once */
    /* libmicrohttpd's messages (on_mhd_log), most of them about one
     * client: at most MHD_LOG_BURST a MHD_LOG_WINDOW_NS, then counted. */
    int64_t log_since_ns;   /* monotonic: the current window's start */
    unsigned log_count;     /* logged in the window */
    unsigned long log_held; /* not logged in the window */
};

/* A response body under construction (open_memstream). */
struct body {
    char *buf; /* owned until handed to libmicrohttpd */
    size_t len;
    FILE *f;
};

/* ---- the connection ---- */

/* Returns the connection's handle, opening it when it is closed and its
 * backoff has passed; NULL with sv->error set when it cannot be had now.
 * Its configuration names the first namespace; ns_handle points it at
 * each. */
static odbc_leader_t *conn_handle(struct serve *sv) {
    struct odbc_leader_callbacks cb = {.struct_size = sizeof(cb),
                                       .ctx = sv->cli,
                                       .log = odbc_leader__cli_log,
                                       .on_change = NULL};
    int64_t now = odbc_leader__now_ns(NULL);
    char err[512] = "";
    char *conf = NULL;
    const char *saved = sv->cli->ns;
    int rc;

    if (sv->h != NULL || now < sv->retry_ns)
        return sv->h;
    sv->cli->ns = sv->ns[0].name;
    rc = odbc_leader__cli_config(sv->cli, READ_ONLY, &conf);
    sv->cli->ns = saved;
    if (rc != 0) {
        sv->rc = ODBC_LEADER_EINVAL;
        snprintf(sv->error, sizeof(sv->error), "bad configuration");
        return NULL;
    }
    rc = odbc_leader_create(&sv->h, conf, &cb, err, sizeof(err));
    free(conf);
    if (rc < 0) {
        sv->rc = rc;
        snprintf(sv->error, sizeof(sv->error), "%s",
                 err[0] != '\0' ? err : odbc_leader_strerror(rc));
        sv->backoff_ns = sv->backoff_ns == 0 ? BACKOFF_MIN_NS
                         : 2 * sv->backoff_ns > BACKOFF_MAX_NS
                             ? BACKOFF_MAX_NS
                             : 2 * sv->backoff_ns;
        sv->retry_ns = now + sv->backoff_ns;
        if (sv->started)
            odbc_leader__cli_msg(sv->cli, LOG_WARNING,
                                 "serve: %s (next try in %lld ms)", sv->error,
                                 (long long)(sv->backoff_ns / 1000000));
        return NULL;
    }
    sv->backoff_ns = 0;
    sv->error[0] = '\0';
    return sv->h;
}

/* Returns the connection's handle pointed at ns, or NULL with ns->error
 * set when there is no connection now. */
static odbc_leader_t *ns_handle(struct serve *sv, struct ns_state *ns) {
    odbc_leader_t *h = conn_handle(sv);

    if (h == NULL) {
        snprintf(ns->error, sizeof(ns->error), "%s", sv->error);
        return NULL;
    }
    if (odbc_leader__read_namespace(h, ns->name) != 0) {
        snprintf(ns->error, sizeof(ns->error), "bad namespace");
        return NULL;
    }
    ns->error[0] = '\0';
    return h;
}

/* Drops the connection after ns's failed read rc: the next request opens
 * a new one. */
static void ns_failed(struct serve *sv, struct ns_state *ns, int rc) {
    snprintf(ns->error, sizeof(ns->error), "reading failed: %s",
             odbc_leader_strerror(rc));
    snprintf(sv->error, sizeof(sv->error), "%s", ns->error);
    odbc_leader__cli_msg(sv->cli, LOG_WARNING, "serve: namespace %s: %s",
                         ns->name, ns->error);
    odbc_leader_destroy(sv->h);
    sv->h = NULL;
    sv->retry_ns = 0;
    ns->tally.read_ns = 0;
}

/* Returns the namespace served named name, or NULL. */
static struct ns_state *ns_find(struct serve *sv, const char *name) {
    for (size_t i = 0; name != NULL && i < sv->n; i++) {
        if (strcmp(sv->ns[i].name, name) == 0)
            return &sv->ns[i];
    }
    return NULL;
}

/* One read of a namespace on the connection's handle h (pointed at it):
 * returns what the library call returned. */
typedef int (*ns_read_fn)(odbc_leader_t *h, void *ctx);

/* Runs read for ns, and once more on a fresh connection after a failed
 * read, so a restarted database costs no failed request. Returns read's
 * result: 0 or more, ODBC_LEADER_ENOLEDGER or ODBC_LEADER_ENOELECTIONS
 * (the dialect lacks the table: no reason to reconnect), or another
 * negative error with ns->error set. */
static int ns_read(struct serve *sv, struct ns_state *ns, ns_read_fn read,
                   void *ctx) {
    int rc = ODBC_LEADER_ECONNECT;

    for (int attempt = 0; attempt < 2; attempt++) {
        odbc_leader_t *h = ns_handle(sv, ns);

        if (h == NULL)
            return ODBC_LEADER_ECONNECT;
        rc = read(h, ctx);
        if (rc >= 0 || rc == ODBC_LEADER_ENOLEDGER ||
            rc == ODBC_LEADER_ENOELECTIONS)
            return rc;
        ns_failed(sv, ns, rc);
    }
    return rc;
}

/* ns_read_fn: the lease, into the struct odbc_leader_lease ctx. */
static int read_lease(odbc_leader_t *h, void *ctx) {
    return odbc_leader_read_lease(h, ctx);
}

struct snapshot_read {
    struct odbc_leader__snapshot *s; /* borrowed */
    int shards;                      /* read the group's shards too */
};

/* ns_read_fn: a snapshot (freed again when the read fails). */
static int read_snapshot(odbc_leader_t *h, void *ctx) {
    struct snapshot_read *r = ctx;
    int rc = odbc_leader__cli_snapshot_read(h, r->s, r->shards);

    if (rc < 0)
        odbc_leader__cli_snapshot_free(r->s);
    return rc;
}

/* Reads ns's snapshot into *s (zeroed on failure, with ns->error).
 * Returns 0 or -1. */
static int ns_snapshot(struct serve *sv, struct ns_state *ns,
                       struct odbc_leader__snapshot *s) {
    int64_t now = odbc_leader__now_ns(NULL);
    struct snapshot_read r = {s,
                              ns->group || ns->shards_at_ns == 0 ||
                                  now - ns->shards_at_ns >= GROUP_RECHECK_NS};

    if (ns_read(sv, ns, read_snapshot, &r) < 0) {
        memset(s, 0, sizeof(*s));
        return -1;
    }
    s->ns = ns->name; /* not h's: it moves on to other namespaces */
    if (r.shards) {
        ns->group = s->shards > 0;
        ns->shards_at_ns = now;
    }
    return 0;
}

/* ---- the fires of a namespace ---- */

struct fires_read {
    const char *job;                  /* borrowed; NULL = every job */
    struct odbc_leader__fire_list *l; /* borrowed */
};

/* ns_read_fn: a ledger, into an emptied list. */
static int read_fires(odbc_leader_t *h, void *ctx) {
    struct fires_read *r = ctx;

    r->l->n = 0;
    return odbc_leader_list_fires(h, r->job, odbc_leader__cli_keep_fire, r->l);
}

/* Reads ns's ledger (of job only unless NULL) into *l, which the caller
 * frees. Returns 0, or -1 with ns->error set. A dialect without a ledger
 * gives an empty list. */
static int ns_fires(struct serve *sv, struct ns_state *ns, const char *job,
                    struct odbc_leader__fire_list *l) {
    struct fires_read r = {job, l};
    int rc = ns_read(sv, ns, read_fires, &r);

    if (rc == ODBC_LEADER_ENOLEDGER)
        return 0;
    if (rc >= 0 && l->nomem)
        snprintf(ns->error, sizeof(ns->error), "out of memory");
    return rc >= 0 && !l->nomem ? 0 : -1;
}

/* qsort order of fires: by job, then by fire time. */
static int by_job(const void *a, const void *b) {
    const struct odbc_leader_fire *x = a, *y = b;
    int c = strcmp(x->job, y->job);

    if (c != 0)
        return c;
    return (x->fire_ms > y->fire_ms) - (x->fire_ms < y->fire_ms);
}

/* What the metrics say of one job. */
struct job_stats {
    const char *job; /* borrowed from the fire list */
    long ok, failed, running;
    int64_t last_ok_ms;        /* nominal time of the newest success; 0 none */
    int64_t oldest_running_ms; /* age of the oldest unfinished fire */
};

/* Sums the fires of one job, l->v[from..to), sorted by fire time. */
static void job_sum(const struct odbc_leader__fire_list *l, size_t from,
                    size_t to, struct job_stats *j) {
    memset(j, 0, sizeof(*j));
    j->job = l->v[from].job;
    for (size_t i = from; i < to; i++) {
        const struct odbc_leader_fire *f = &l->v[i];

        if (f->finished_at_ms == 0) {
            int64_t age = f->db_now_ms - f->claimed_at_ms;

            j->running++;
            if (age > j->oldest_running_ms)
                j->oldest_running_ms = age;
        } else if (f->status == 0) {
            j->ok++;
            j->last_ok_ms = f->fire_ms != 0 ? f->fire_ms : f->finished_at_ms;
        } else {
            j->failed++;
        }
    }
}

/* ---- the election log of a namespace ---- */

/* ns_read_fn: an election log, into an emptied list. */
static int read_elections(odbc_leader_t *h, void *ctx) {
    struct odbc_leader__election_list *l = ctx;

    l->n = 0;
    return odbc_leader_list_elections(h, odbc_leader__cli_keep_election, l);
}

/* Reads ns's election log, oldest term first, into *l, which the caller
 * frees. Returns 0, 1 when the dialect keeps no log (l empty), or -1 with
 * ns->error set. */
static int ns_elections(struct serve *sv, struct ns_state *ns,
                        struct odbc_leader__election_list *l) {
    int rc = ns_read(sv, ns, read_elections, l);

    if (rc == ODBC_LEADER_ENOELECTIONS)
        return 1;
    if (rc >= 0 && l->nomem)
        snprintf(ns->error, sizeof(ns->error), "out of memory");
    return rc >= 0 && !l->nomem ? 0 : -1;
}

/* Returns the index in ended_how[] of how term e ended, or N_ENDED for a
 * value this serve does not know. */
static size_t ended_index(const struct odbc_leader_election *e) {
    if (e->ended_how[0] == '\0')
        return N_ENDED - 1;
    for (size_t k = 0; k + 1 < N_ENDED; k++) {
        if (strcmp(e->ended_how, ended_how[k]) == 0)
            return k;
    }
    return N_ENDED;
}

/* Brings ns->tally up to date for the lease read in s (re-reading the log
 * only when needed: ELECTIONS_REREAD_NS). Returns 0, or -1 with
 * ns->error set when the log cannot be read. */
static int ns_tally(struct serve *sv, struct ns_state *ns,
                    const struct odbc_leader__snapshot *s) {
    struct tally *t = &ns->tally;
    struct odbc_leader__election_list l = {NULL, 0, 0, 0};
    int64_t now = odbc_leader__now_ns(NULL);
    int rc;

    if (t->read_ns != 0 && now - t->read_ns < ELECTIONS_REREAD_NS &&
        t->term == s->lease.term && strcmp(t->leader, s->lease.leader_id) == 0)
        return 0;
    rc = ns_elections(sv, ns, &l);
    memset(t, 0, sizeof(*t));
    if (rc >= 0) {
        t->read_ns = now;
        t->term = s->lease.term;
        snprintf(t->leader, sizeof(t->leader), "%s", s->lease.leader_id);
        t->kept = rc == 0;
    }
    for (size_t i = 0; i < l.n; i++) {
        size_t k = ended_index(&l.v[i]);

        if (k < N_ENDED)
            t->ended[k]++;
        t->last_started_ms = l.v[i].started_at_ms;
    }
    free(l.v);
    return rc >= 0 ? 0 : -1;
}

/* ---- responses ---- */

/* Starts a body. Returns 0 or -1 (out of memory). */
static int body_open(struct body *b) {
    b->buf = NULL;
    b->len = 0;
    b->f = open_memstream(&b->buf, &b->len);
    return b->f != NULL ? 0 : -1;
}

/* Queues status with the finished body b (whose buffer libmicrohttpd
 * then owns) as content type type. Returns what MHD_queue_response does. */
static enum MHD_Result reply_body(struct MHD_Connection *conn, unsigned status,
                                  const char *type, struct body *b) {
    struct MHD_Response *r;
    enum MHD_Result ret;

    if (fclose(b->f) != 0) {
        free(b->buf);
        return MHD_NO;
    }
    r = MHD_create_response_from_buffer(b->len, b->buf, MHD_RESPMEM_MUST_FREE);
    if (r == NULL) {
        free(b->buf);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (strncmp(type, "text/html", 9) == 0)
        MHD_add_response_header(
            r, "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; connect-src 'self'; "
            "style-src 'unsafe-inline'");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* Queues status with a plain-text message (printf format). */
static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned status,
                                  const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned status,
                                  const char *fmt, ...) {
    struct body b;
    va_list ap;

    if (body_open(&b) != 0)
        return MHD_NO;
    va_start(ap, fmt);
    vfprintf(b.f, fmt, ap);
    va_end(ap);
    fputc('\n', b.f);
    return reply_body(conn, status, "text/plain; charset=utf-8", &b);
}

/* Returns the query argument key of conn, or NULL. */
static const char *arg(struct MHD_Connection *conn, const char *key) {
    return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);
}

/* Finds the namespace a request names with ?namespace= (optional when one
 * namespace is served). Returns it, or NULL after queueing the 4xx into
 * *ret. */
static struct ns_state *req_ns(struct serve *sv, struct MHD_Connection *conn,
                               enum MHD_Result *ret) {
    const char *name = arg(conn, "namespace");
    struct ns_state *ns;

    if (name == NULL && sv->n == 1)
        return &sv->ns[0];
    if (name == NULL) {
        *ret =
            reply_text(conn, MHD_HTTP_BAD_REQUEST,
                       "missing parameter namespace (%zu are served)", sv->n);
        return NULL;
    }
    if (!odbc_leader__valid_name(name)) {
        *ret = reply_text(conn, MHD_HTTP_BAD_REQUEST,
                          "invalid namespace: 1-128 bytes of A-Z a-z 0-9 . _ "
                          "- : / @");
        return NULL;
    }
    ns = ns_find(sv, name);
    if (ns == NULL)
        *ret = reply_text(conn, MHD_HTTP_NOT_FOUND,
                          "namespace %s is not served (serve -n)", name);
    return ns;
}

/* The first call of a request, once its headers are in: marks *req_ctx
 * with mark (any pointer: the next call is the request) and refuses a
 * method other than GET and HEAD with 405. */
static enum MHD_Result headers_in(struct MHD_Connection *conn,
                                  const char *method, void **req_ctx,
                                  void *mark) {
    *req_ctx = mark;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
                          "method %s not allowed: GET or HEAD", method);
    return MHD_YES;
}

/* ---- /health/leader ---- */

/* GET /health/leader: 200 while the id (or --id) holds the namespace's
 * unexpired lease by the database clock, else 503 with the reason. */
static enum MHD_Result health(struct serve *sv, struct MHD_Connection *conn) {
    enum MHD_Result ret = MHD_NO;
    struct ns_state *ns = req_ns(sv, conn, &ret);
    const char *id = arg(conn, "id") != NULL ? arg(conn, "id") : sv->self;
    struct odbc_leader_lease l;

    if (ns == NULL)
        return ret;
    if (id == NULL || !odbc_leader__valid_name(id))
        return reply_text(conn, MHD_HTTP_BAD_REQUEST,
                          "missing or invalid parameter id (the candidate's "
                          "LeaderId; serve --id gives a default)");
    if (ns_read(sv, ns, read_lease, &l) < 0)
        return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                          "unknown: database unavailable: %s", ns->error);
    if (l.leader_id[0] != '\0' && l.expires_at_ms > l.db_now_ms &&
        strcmp(l.leader_id, id) == 0)
        return reply_text(conn, MHD_HTTP_OK,
                          "leader: %s leads %s in term %lld, lease %lld ms "
                          "left",
                          id, ns->name, (long long)l.term,
                          (long long)(l.expires_at_ms - l.db_now_ms));
    if (l.leader_id[0] != '\0' && l.expires_at_ms > l.db_now_ms)
        return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                          "not leader: %s leads %s in term %lld", l.leader_id,
                          ns->name, (long long)l.term);
    return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                      "not leader: %s has no leader", ns->name);
}

/* ---- /metrics ---- */

/* Prints the fire families of the namespaces whose ledgers are in l[]. */
static void prom_fires(FILE *f, struct serve *sv,
                       struct odbc_leader__fire_list *l) {
    static const char *const heads[][3] = {
        {"odbc_leader_fires", "gauge",
         "Fires in the ledger (within LeaderFireRetention) by job and "
         "outcome: ok, failed (a non-zero status) or running (unfinished)."},
        {"odbc_leader_fire_last_success_timestamp_seconds", "gauge",
         "Nominal time of the job's newest successful fire, Unix seconds."},
        {"odbc_leader_fire_running_oldest_age_seconds", "gauge",
         "Seconds since the job's oldest unfinished fire was claimed, in "
         "database time."},
    };

    for (size_t k = 0; k < 3; k++) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", heads[k][0], heads[k][2],
                heads[k][0], heads[k][1]);
        for (size_t i = 0; i < sv->n; i++) {
            for (size_t from = 0, to; from < l[i].n; from = to) {
                struct job_stats j;

                for (to = from + 1;
                     to < l[i].n &&
                     strcmp(l[i].v[to].job, l[i].v[from].job) == 0;
                     to++)
                    ;
                job_sum(&l[i], from, to, &j);
                if (k == 1 && j.last_ok_ms == 0)
                    continue;
                if (k == 2 && j.running == 0)
                    continue;
                for (int o = 0; o < (k == 0 ? 3 : 1); o++) {
                    static const char *const outcome[] = {"ok", "failed",
                                                          "running"};
                    long v[] = {j.ok, j.failed, j.running};

                    fprintf(f, "%s{namespace=\"", heads[k][0]);
                    odbc_leader__cli_prom_label(f, sv->ns[i].name);
                    fputs("\",job_name=\"", f);
                    odbc_leader__cli_prom_label(f, j.job);
                    if (k == 0)
                        fprintf(f, "\",outcome=\"%s\"} %ld\n", outcome[o],
                                v[o]);
                    else if (k == 1)
                        fprintf(f, "\"} %.3f\n", (double)j.last_ok_ms / 1e3);
                    else
                        fprintf(f, "\"} %.3f\n",
                                (double)j.oldest_running_ms / 1e3);
                }
            }
        }
    }
}

/* Prints the election families of the namespaces that are up[] and keep
 * a log (their tallies). */
static void prom_elections(FILE *f, struct serve *sv, const int *up) {
    fputs("# HELP odbc_leader_elections Terms in the election log (within "
          "LeaderElectionRetention) by how they ended: resigned, requested, "
          "handover, expired, quarantined, or current (not ended).\n"
          "# TYPE odbc_leader_elections gauge\n",
          f);
    for (size_t i = 0; i < sv->n; i++) {
        for (size_t k = 0; up[i] && sv->ns[i].tally.kept && k < N_ENDED; k++) {
            fputs("odbc_leader_elections{namespace=\"", f);
            odbc_leader__cli_prom_label(f, sv->ns[i].name);
            fprintf(f, "\",ended=\"%s\"} %ld\n", ended_how[k],
                    sv->ns[i].tally.ended[k]);
        }
    }
    fputs("# HELP odbc_leader_last_election_timestamp_seconds Start of the "
          "newest term in the election log, Unix seconds (database "
          "clock).\n"
          "# TYPE odbc_leader_last_election_timestamp_seconds gauge\n",
          f);
    for (size_t i = 0; i < sv->n; i++) {
        if (!up[i] || sv->ns[i].tally.last_started_ms == 0)
            continue;
        fputs("odbc_leader_last_election_timestamp_seconds{namespace=\"", f);
        odbc_leader__cli_prom_label(f, sv->ns[i].name);
        fprintf(f, "\"} %.3f\n", (double)sv->ns[i].tally.last_started_ms / 1e3);
    }
}

/* GET /metrics: every namespace's state, ledger and election log as
 * Prometheus text; a namespace it cannot read shows as odbc_leader_up 0
 * only. */
static enum MHD_Result metrics(struct serve *sv, struct MHD_Connection *conn) {
    struct odbc_leader__snapshot *s = calloc(sv->n, sizeof(*s));
    struct odbc_leader__snapshot *ok = calloc(sv->n, sizeof(*ok));
    struct odbc_leader__fire_list *l = calloc(sv->n, sizeof(*l));
    int *up = calloc(sv->n, sizeof(*up));
    enum MHD_Result ret = MHD_NO;
    size_t nok = 0;
    struct body b;

    if (s == NULL || ok == NULL || l == NULL || up == NULL ||
        body_open(&b) != 0) {
        ret = reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < sv->n; i++) {
        up[i] = ns_snapshot(sv, &sv->ns[i], &s[i]) == 0 &&
                ns_fires(sv, &sv->ns[i], NULL, &l[i]) == 0 &&
                ns_tally(sv, &sv->ns[i], &s[i]) == 0;
        if (up[i]) {
            s[i].ns = sv->ns[i].name;
            ok[nok++] = s[i];
            if (l[i].n > 1)
                qsort(l[i].v, l[i].n, sizeof(*l[i].v), by_job);
        } else {
            l[i].n = 0;
        }
    }
    fputs("# HELP odbc_leader_up 1 when the namespace's tables could be "
          "read, else 0.\n# TYPE odbc_leader_up gauge\n",
          b.f);
    for (size_t i = 0; i < sv->n; i++) {
        fputs("odbc_leader_up{namespace=\"", b.f);
        odbc_leader__cli_prom_label(b.f, sv->ns[i].name);
        fprintf(b.f, "\"} %d\n", up[i]);
    }
    odbc_leader__cli_snapshot_prom(b.f, ok, nok, 1);
    prom_fires(b.f, sv, l);
    prom_elections(b.f, sv, up);
    ret = reply_body(conn, MHD_HTTP_OK,
                     "text/plain; version=0.0.4; "
                     "charset=utf-8",
                     &b);
out:
    for (size_t i = 0; s != NULL && i < sv->n; i++)
        odbc_leader__cli_snapshot_free(&s[i]);
    for (size_t i = 0; l != NULL && i < sv->n; i++)
        free(l[i].v);
    free(s);
    free(ok);
    free(l);
    free(up);
    return ret;
}

/* ---- /api/v1 ---- */

/* Writes ns's state as a JSON object to f: the status object, or
 * {"namespace":..,"error":..} when it cannot be read. Returns 0 or -1. */
static int ns_json(struct serve *sv, struct ns_state *ns, FILE *f) {
    struct odbc_leader__snapshot s;
    int rc = ns_snapshot(sv, ns, &s);

    if (rc == 0) {
        s.ns = ns->name;
        odbc_leader__cli_snapshot_json(f, &s);
    } else {
        fputs("{\"namespace\":", f);
        odbc_leader__cli_json_string(f, ns->name);
        fputs(",\"error\":", f);
        odbc_leader__cli_json_string(f, ns->error);
        fputs("}\n", f);
    }
    odbc_leader__cli_snapshot_free(&s);
    return rc;
}

/* GET /api/v1/namespaces: every namespace's status object. */
static enum MHD_Result api_namespaces(struct serve *sv,
                                      struct MHD_Connection *conn) {
    struct body b;

    if (body_open(&b) != 0)
        return MHD_NO;
    fputs("{\"namespaces\":[", b.f);
    for (size_t i = 0; i < sv->n; i++) {
        if (i > 0)
            fputc(',', b.f);
        ns_json(sv, &sv->ns[i], b.f);
    }
    fputs("]}\n", b.f);
    return reply_body(conn, MHD_HTTP_OK, "application/json", &b);
}

/* GET /api/v1/namespaces/NS: one namespace's status object. */
static enum MHD_Result
api_namespace(struct serve *sv, struct MHD_Connection *conn, const char *name) {
    struct ns_state *ns;
    struct body b;
    int rc;

    if (!odbc_leader__valid_name(name))
        return reply_text(conn, MHD_HTTP_BAD_REQUEST,
                          "invalid namespace: 1-128 bytes of A-Z a-z 0-9 . _ "
                          "- : / @");
    ns = ns_find(sv, name);
    if (ns == NULL)
        return reply_text(conn, MHD_HTTP_NOT_FOUND,
                          "namespace %s is not served (serve -n)", name);
    if (body_open(&b) != 0)
        return MHD_NO;
    rc = ns_json(sv, ns, b.f);
    return reply_body(conn,
                      rc == 0 ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
                      "application/json", &b);
}

/* GET /api/v1/fires: the newest fires of one namespace's ledger. */
static enum MHD_Result api_fires(struct serve *sv,
                                 struct MHD_Connection *conn) {
    enum MHD_Result ret = MHD_NO;
    struct ns_state *ns = req_ns(sv, conn, &ret);
    const char *job = arg(conn, "job");
    struct odbc_leader__fire_list l = {NULL, 0, 0, 0};
    struct body b;
    long limit;
    size_t first = 0;

    if (ns == NULL)
        return ret;
    if (job != NULL && !odbc_leader__valid_name(job))
        return reply_text(conn, MHD_HTTP_BAD_REQUEST,
                          "invalid job: 1-128 bytes of A-Z a-z 0-9 . _ - : / "
                          "@");
    if (odbc_leader__http_limit(arg(conn, "limit"), FIRES_DEFAULT, FIRES_MAX,
                                &limit) != 0)
        return reply_text(conn, MHD_HTTP_BAD_REQUEST,
                          "invalid limit: a whole number from 1 to %d",
                          FIRES_MAX);
    if (ns_fires(sv, ns, job, &l) != 0) {
        free(l.v);
        return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                          "database unavailable: %s", ns->error);
    }
    if (body_open(&b) != 0) {
        free(l.v);
        return MHD_NO;
    }
    if (l.n > (size_t)limit)
        first = l.n - (size_t)limit;
    fputs("{\"namespace\":", b.f);
    odbc_leader__cli_json_string(b.f, ns->name);
    fputs(",\"fires\":[", b.f);
    for (size_t i = first; i < l.n; i++) {
        if (i > first)
            fputc(',', b.f);
        odbc_leader__cli_fire_json(b.f, &l.v[i]);
    }
    fputs("]}\n", b.f);
    free(l.v);
    return reply_body(conn, MHD_HTTP_OK, "application/json", &b);
}

/* Queues 200 with the newest limit terms of l (ns's log) as JSON. */
static enum MHD_Result
reply_elections(struct MHD_Connection *conn, const struct ns_state *ns,
                const struct odbc_leader__election_list *l, long limit) {
    size_t first = l->n > (size_t)limit ? l->n - (size_t)limit : 0;
    struct body b;

    if (body_open(&b) != 0)
        return MHD_NO;
    fputs("{\"namespace\":", b.f);
    odbc_leader__cli_json_string(b.f, ns->name);
    fputs(",\"elections\":[", b.f);
    for (size_t i = first; i < l->n; i++) {
        if (i > first)
            fputc(',', b.f);
        odbc_leader__cli_election_json(b.f, &l->v[i]);
    }
    fputs("]}\n", b.f);
    return reply_body(conn, MHD_HTTP_OK, "application/json", &b);
}

/* GET /api/v1/elections: the newest terms of one namespace's election
 * log, oldest first; 404 when its dialect keeps none. */
static enum MHD_Result api_elections(struct serve *sv,
                                     struct MHD_Connection *conn) {
    enum MHD_Result ret = MHD_NO;
    struct ns_state *ns = req_ns(sv, conn, &ret);
    struct odbc_leader__election_list l = {NULL, 0, 0, 0};
    long limit;
    int rc;

    if (ns == NULL)
        return ret;
    if (odbc_leader__http_limit(arg(conn, "limit"), ELECTIONS_DEFAULT,
                                ELECTIONS_MAX, &limit) != 0)
        return reply_text(conn, MHD_HTTP_BAD_REQUEST,
                          "invalid limit: a whole number from 1 to %d",
                          ELECTIONS_MAX);
    rc = ns_elections(sv, ns, &l);
    if (rc > 0)
        ret = reply_text(conn, MHD_HTTP_NOT_FOUND,
                         "namespace %s keeps no election log (its dialect "
                         "has none)",
                         ns->name);
    else if (rc < 0)
        ret = reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                         "database unavailable: %s", ns->error);
    else
        ret = reply_elections(conn, ns, &l, limit);
    free(l.v);
    return ret;
}

/* ---- / ---- */

/* Writes one namespace's section of the page, as dashboard.js keeps it
 * up to date: section[data-ns], p.state, table.candidates. */
static void page_ns(struct serve *sv, struct ns_state *ns, FILE *f) {
    struct odbc_leader__snapshot s;

    fputs("<section data-ns=\"", f);
    odbc_leader__http_html(f, ns->name);
    fputs("\"><h2>", f);
    odbc_leader__http_html(f, ns->name);
    fputs("</h2>\n", f);
    if (ns_snapshot(sv, ns, &s) != 0) {
        fputs("<p class=\"state bad\">cannot read: ", f);
        odbc_leader__http_html(f, ns->error);
        fputs("</p></section>\n", f);
        return;
    }
    if (s.present) {
        fputs("<p class=\"state\">leader <b class=\"leader\">", f);
        odbc_leader__http_html(f, s.lease.leader_id);
        fprintf(f, "</b>, term %lld, lease %.1f s left</p>\n",
                (long long)s.lease.term, (double)s.remaining_ms / 1e3);
    } else {
        fprintf(f, "<p class=\"state bad\">no leader (last term %lld)</p>\n",
                (long long)s.lease.term);
    }
    fprintf(f,
            "<table class=\"candidates\"><tr><th>candidate (%zu alive)</th>"
            "<th>last heartbeat</th></tr>\n",
            s.n);
    for (size_t i = 0; i < s.n; i++) {
        fputs("<tr><td>", f);
        odbc_leader__http_html(f, s.cands[i].id);
        fprintf(f, "</td><td>%.1f s ago</td></tr>\n",
                (double)(s.cands[i].db_now_ms - s.cands[i].heartbeat_at_ms) /
                    1e3);
    }
    fputs("</table></section>\n", f);
    odbc_leader__cli_snapshot_free(&s);
}

/* The page's style: no outside assets. */
static const char page_style[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222}"
    "section{margin-bottom:1.5em}"
    "table{border-collapse:collapse;margin:.4em 0}"
    "td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}"
    ".bad{color:#b00}tr.bad td{background:#fdd}tr.run td{background:#ffd}"
    "tr.is-leader td{font-weight:bold}"
    ".strip{margin:.2em 0}.job{display:inline-block;min-width:10em}"
    ".dot{display:inline-block;width:.8em;height:.8em;margin-right:2px;"
    "border-radius:2px}.dot.ok{background:#4a4}.dot.bad{background:#d33}"
    ".dot.run{background:#db3}#updated{color:#777;font-size:.9em}"
    "h3{font-size:1em;margin:.6em 0 .2em}"
    ".lane{position:relative;height:1.8em;background:#eee;overflow:hidden}"
    ".term{position:absolute;top:0;bottom:0;box-sizing:border-box;"
    "padding-left:3px;border-right:1px solid #fff;overflow:hidden;"
    "white-space:nowrap;font-size:.8em;line-height:2.25em;color:#000}"
    ".term.expired,.term.quarantined{border-right:3px solid #d33}"
    ".term.open{border-right:3px solid #222}"
    ".axis{display:flex;justify-content:space-between;color:#777;"
    "font-size:.8em}.legend{font-size:.85em}.key{margin-right:1em}"
    ".swatch{display:inline-block;width:.8em;height:.8em;margin-right:.3em;"
    "border-radius:2px}";

/* GET /: the namespaces rendered now; dashboard.js keeps them current
 * (without it, the page reloads itself every 5 s). */
static enum MHD_Result page(struct serve *sv, struct MHD_Connection *conn) {
    struct body b;

    if (body_open(&b) != 0)
        return MHD_NO;
    fprintf(b.f,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<noscript><meta http-equiv=\"refresh\" content=\"5\"></noscript>"
            "<title>odbc-leader</title><style>%s</style>"
            "<script src=\"dashboard.js\" defer></script></head><body>\n"
            "<h1>odbc-leader</h1><p id=\"updated\"></p>\n"
            "<div id=\"namespaces\">\n",
            page_style);
    for (size_t i = 0; i < sv->n; i++)
        page_ns(sv, &sv->ns[i], b.f);
    fputs("</div><p><a href=\"metrics\">metrics</a> · <a "
          "href=\"api/v1/namespaces\">JSON</a></p></body></html>\n",
          b.f);
    return reply_body(conn, MHD_HTTP_OK, "text/html; charset=utf-8", &b);
}

/* GET /dashboard.js. */
static enum MHD_Result script(struct MHD_Connection *conn) {
    extern const char odbc_leader__dashboard_js[];
    struct MHD_Response *r = MHD_create_response_from_buffer(
        strlen(odbc_leader__dashboard_js), (void *)odbc_leader__dashboard_js,
        MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ret;

    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            "text/javascript; charset=utf-8");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

/* ---- TLS and basic authentication ---- */

/* Reads the file path (at most MAX_FILE bytes) into *out, NUL-terminated;
 * the caller frees it. Returns 0 or an exit code after a message naming
 * option and file. */
static int read_file(struct serve *sv, const char *option, const char *path,
                     char **out) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0;
    int rc = EX_NOINPUT;

    *out = NULL;
    if (f == NULL) {
        odbc_leader__cli_err(sv->cli, "serve: %s %s: %s", option, path,
                             strerror(errno));
        return EX_NOINPUT;
    }
    buf = malloc(MAX_FILE + 1);
    if (buf == NULL) {
        rc = EX_OSERR;
        goto out;
    }
    n = fread(buf, 1, MAX_FILE + 1, f);
    if (ferror(f) || n == 0 || n > MAX_FILE) {
        odbc_leader__cli_err(sv->cli, "serve: %s %s: %s", option, path,
                             ferror(f) ? strerror(errno)
                             : n == 0  ? "empty"
                                       : "larger than 1 MiB");
        goto out;
    }
    buf[n] = '\0';
    *out = buf;
    buf = NULL;
    rc = 0;
out:
    free(buf);
    fclose(f);
    return rc;
}

/* Reads --basic-auth: one "name:hash" a line (hash a crypt(3) string, as
 * `openssl passwd -6` or mkpasswd print it), blank lines and # comments
 * skipped. Returns 0 or an exit code after a message naming the line. */
static int load_users(struct serve *sv) {
    char *line, *next;
    unsigned no = 0;
    int rc = read_file(sv, "--basic-auth", sv->auth_file, &sv->auth);

    if (rc != 0)
        return rc;
    for (line = sv->auth; line != NULL; line = next) {
        char *name, *hash;
        int kind;

        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        no++;
        kind = odbc_leader__http_user_line(line, &name, &hash);
        if (kind == 0)
            continue;
        if (kind < 0 || sv->nusers == MAX_USERS) {
            odbc_leader__cli_err(
                sv->cli, "serve: --basic-auth %s:%u: %s", sv->auth_file, no,
                kind > 0 ? "more than 64 users"
                         : "want NAME:HASH (openssl passwd -6)");
            return EX_CONFIG;
        }
        sv->users[sv->nusers] = name;
        sv->hashes[sv->nusers++] = hash;
    }
    if (sv->nusers == 0) {
        odbc_leader__cli_err(sv->cli, "serve: --basic-auth %s: no user",
                             sv->auth_file);
        return EX_CONFIG;
    }
    return 0;
}

/* Returns 1 when a and b (of length n) are equal, in time independent of
 * where they differ. */
static int same(const char *a, const char *b, size_t n) {
    unsigned char d = 0;

    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

/* Returns 1 when the request's basic credentials match a --basic-auth
 * user. An unknown name still costs one hash, as a known one does. */
static int authorized(struct serve *sv, struct MHD_Connection *conn) {
    char *pass = NULL;
    char *user = MHD_basic_auth_get_username_password(conn, &pass);
    struct crypt_data *cd = calloc(1, sizeof(*cd));
    const char *hash = sv->hashes[0], *got;
    int known = 0, ok = 0;

    if (user == NULL || pass == NULL || cd == NULL)
        goto out;
    for (size_t i = 0; i < sv->nusers; i++) {
        if (strcmp(sv->users[i], user) == 0) {
            hash = sv->hashes[i];
            known = 1;
            break;
        }
    }
    got = crypt_r(pass, hash, cd);
    ok = known && got != NULL && got[0] != '*' && strlen(got) == strlen(hash) &&
         same(got, hash, strlen(hash));
out:
    if (pass != NULL) {
        explicit_bzero(pass, strlen(pass));
        MHD_free(pass);
    }
    if (user != NULL)
        MHD_free(user);
    free(cd);
    return ok;
}

/* Queues 401 with the challenge of basic authentication. */
static enum MHD_Result reply_auth(struct MHD_Connection *conn) {
    static const char msg[] = "authentication required\n";
    struct MHD_Response *r = MHD_create_response_from_buffer(
        sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ret;

    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            "text/plain; charset=utf-8");
    ret = MHD_queue_basic_auth_fail_response(conn, "odbc-leader", r);
    MHD_destroy_response(r);
    return ret;
}

/* Loads --tls-cert, --tls-key and --basic-auth. Returns 0 or an exit
 * code after a message. */
static int load_secrets(struct serve *sv) {
    int rc = 0;

    if (sv->tls_cert_file != NULL)
        rc = read_file(sv, "--tls-cert", sv->tls_cert_file, &sv->tls_cert);
    if (rc == 0 && sv->tls_key_file != NULL)
        rc = read_file(sv, "--tls-key", sv->tls_key_file, &sv->tls_key);
    if (rc == 0 && sv->auth_file != NULL)
        rc = load_users(sv);
    return rc;
}

/* ---- the limits of both servers ---- */

/* Raises the soft limit of open files to want, at most to the hard limit.
 * Returns the soft limit now. */
static rlim_t nofile_raise(rlim_t want) {
    struct rlimit now;

    if (getrlimit(RLIMIT_NOFILE, &now) != 0)
        return 0;
    if (now.rlim_cur == RLIM_INFINITY || now.rlim_cur >= want)
        return now.rlim_cur;
    now.rlim_cur = now.rlim_max != RLIM_INFINITY && now.rlim_max < want
                       ? now.rlim_max
                       : want;
    if (setrlimit(RLIMIT_NOFILE, &now) != 0)
        getrlimit(RLIMIT_NOFILE, &now);
    return now.rlim_cur;
}

/* The polling of a server and how many connections it holds at once, for
 * subcmd's messages: epoll (else poll) in libmicrohttpd's own thread, so
 * no descriptor has to be below FD_SETSIZE as with select; CONN_LIMIT
 * connections after raising the soft limit of open files to fit them,
 * fewer when the hard limit or select allows no more (said as a warning
 * below CONN_LIMIT / 2, else as a notice). Sets *flags (the MHD_USE_
 * flags of the polling) and *conns. */
static void server_limits(struct odbc_leader__cli *c, const char *subcmd,
                          unsigned *flags, unsigned *conns) {
    rlim_t nofile = nofile_raise(CONN_LIMIT + FD_RESERVE);
    rlim_t most = nofile > FD_RESERVE + 16 ? nofile - FD_RESERVE : 16;
    const char *why = "the hard limit of open files (ulimit -Hn)";

    if (MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES) {
        *flags = MHD_USE_EPOLL_INTERNAL_THREAD;
    } else if (MHD_is_feature_supported(MHD_FEATURE_POLL) == MHD_YES) {
        *flags = MHD_USE_POLL_INTERNAL_THREAD;
    } else {
        *flags = MHD_USE_INTERNAL_POLLING_THREAD;
        if (most > FD_SETSIZE - FD_RESERVE) {
            most = FD_SETSIZE - FD_RESERVE;
            why = "select (libmicrohttpd has neither epoll nor poll)";
        }
    }
    *conns = most < CONN_LIMIT ? (unsigned)most : CONN_LIMIT;
    if (*conns < CONN_LIMIT)
        odbc_leader__cli_msg(
            c, *conns < CONN_LIMIT / 2 ? LOG_WARNING : LOG_NOTICE,
            "%s: at most %u connections at once, not %d: %s allows no more",
            subcmd, *conns, CONN_LIMIT, why);
}

/* ---- the server ---- */

/* libmicrohttpd's request callback: routes a request. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **req_ctx) {
    struct serve *sv = cls;
    const char *rest;

    (void)version;
    (void)upload;
    if (*req_ctx == NULL)
        return headers_in(conn, method, req_ctx, sv);
    *upload_size = 0; /* a GET with a body: ignore it */
    if (sv->nusers > 0 && !authorized(sv, conn))
        return reply_auth(conn);
    switch (odbc_leader__http_route(url, &rest)) {
    case ODBC_LEADER__ROUTE_PAGE:
        return page(sv, conn);
    case ODBC_LEADER__ROUTE_SCRIPT:
        return script(conn);
    case ODBC_LEADER__ROUTE_METRICS:
        return metrics(sv, conn);
    case ODBC_LEADER__ROUTE_HEALTH:
        return health(sv, conn);
    case ODBC_LEADER__ROUTE_NAMESPACES:
        return api_namespaces(sv, conn);
    case ODBC_LEADER__ROUTE_NAMESPACE:
        return api_namespace(sv, conn, rest);
    case ODBC_LEADER__ROUTE_FIRES:
        return api_fires(sv, conn);
    case ODBC_LEADER__ROUTE_ELECTIONS:
        return api_elections(sv, conn);
    case ODBC_LEADER__ROUTE_NONE:
        break;
    }
    return reply_text(conn, MHD_HTTP_NOT_FOUND,
                      "not found: see odbc-leader serve --help for the "
                      "paths");
}

/* libmicrohttpd's error log: to the command's log, at most MHD_LOG_BURST
 * messages a MHD_LOG_WINDOW_NS; the next message after the window says
 * how many were left out. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
    struct serve *sv = cls;
    int64_t now = odbc_leader__now_ns(NULL);
    char msg[512];
    size_t n;

    if (sv->log_since_ns == 0 || now - sv->log_since_ns >= MHD_LOG_WINDOW_NS) {
        if (sv->log_held > 0)
            odbc_leader__cli_msg(sv->cli, LOG_WARNING,
                                 "serve: %lu more messages of libmicrohttpd "
                                 "not logged (at most %d a minute)",
                                 sv->log_held, MHD_LOG_BURST);
        sv->log_since_ns = now;
        sv->log_count = 0;
        sv->log_held = 0;
    }
    if (sv->log_count == MHD_LOG_BURST) {
        sv->log_held++;
        return;
    }
    sv->log_count++;
    vsnprintf(msg, sizeof(msg), fmt, ap);
    n = strlen(msg);
    while (n > 0 && msg[n - 1] == '\n')
        msg[--n] = '\0';
    odbc_leader__cli_msg(sv->cli, LOG_WARNING, "serve: %s", msg);
}

/* Resolves listen ("HOST:PORT", "[V6]:PORT", ":PORT"), the argument of
 * option opt of subcmd, into *out (the caller frees it with
 * freeaddrinfo). Returns 0 or EX_USAGE after a message. */
static int resolve(struct odbc_leader__cli *c, const char *subcmd,
                   const char *opt, const char *listen, struct addrinfo **out) {
    struct addrinfo hints;
    char host[256], port[16];
    const char *why;
    long p;
    int rc;

    if (odbc_leader__http_split_listen(listen, host, sizeof(host), &p, &why) !=
        0)
        return odbc_leader__cli_usage(c, subcmd, "%s \"%s\": %s", opt, listen,
                                      why);
    snprintf(port, sizeof(port), "%ld", p);
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    rc = getaddrinfo(host[0] != '\0' ? host : NULL, port, &hints, out);
    if (rc != 0)
        return odbc_leader__cli_usage(c, subcmd, "%s \"%s\": %s", opt, listen,
                                      gai_strerror(rc));
    return 0;
}

/* Parses serve's options. Returns 0, ODBC_LEADER__CLI_HELP or an exit
 * code. */
static int parse_serve(struct serve *sv, int argc, char **argv) {
    static const struct option opts[] = {
        ODBC_LEADER__CLI_LONGOPTS,
        {"listen", required_argument, NULL, 'L'},
        {"id", required_argument, NULL, 'I'},
        {"tls-cert", required_argument, NULL, 'T'},
        {"tls-key", required_argument, NULL, 'K'},
        {"basic-auth", required_argument, NULL, 'A'},
        {NULL, 0, NULL, 0},
    };
    struct odbc_leader__cli *c = sv->cli;
    int opt, rc;

    for (opt = getopt_long(argc, argv, ODBC_LEADER__CLI_SHORTOPTS, opts, NULL);
         opt != -1; opt = getopt_long(argc, argv, ODBC_LEADER__CLI_SHORTOPTS,
                                      opts, NULL)) {
        rc = odbc_leader__cli_common_opt(c, opt, optarg);
        if (rc != 0 && rc != 1)
            return EX_USAGE;
        if (rc == 1 && opt == 'n') {
            if (ns_find(sv, optarg) != NULL)
                continue;
            if (sv->n == MAX_NAMESPACES)
                return odbc_leader__cli_usage(
                    c, "serve", "more than %d namespaces", MAX_NAMESPACES);
            sv->ns[sv->n++].name = optarg;
        } else if (rc == 1) {
            continue;
        } else if (opt == 'L') {
            sv->listen = optarg;
        } else if (opt == 'T') {
            sv->tls_cert_file = optarg;
        } else if (opt == 'K') {
            sv->tls_key_file = optarg;
        } else if (opt == 'A') {
            sv->auth_file = optarg;
        } else if (opt == 'I') {
            if (!odbc_leader__valid_name(optarg))
                return odbc_leader__cli_usage(
                    c, "serve",
                    "invalid --id \"%s\": 1-128 "
                    "bytes of A-Z a-z 0-9 . _ - : / @",
                    optarg);
            sv->self = optarg;
        } else {
            return odbc_leader__cli_usage(c, "serve", NULL);
        }
    }
    if (c->help) {
        fputs(serve_help, stdout);
        return ODBC_LEADER__CLI_HELP;
    }
    if (optind < argc)
        return odbc_leader__cli_usage(c, "serve", "unexpected argument \"%s\"",
                                      argv[optind]);
    if ((sv->tls_cert_file == NULL) != (sv->tls_key_file == NULL))
        return odbc_leader__cli_usage(c, "serve",
                                      "--tls-cert and --tls-key go together");
    return 0;
}

/* Adds the configuration's own namespace when no -n was given. Returns 0
 * or an exit code after a message. */
static int default_namespace(struct serve *sv) {
    odbc_leader_t *h = NULL;
    int rc;

    if (sv->n > 0)
        return 0;
    rc = odbc_leader__cli_open(sv->cli, READ_ONLY, NULL, &h);
    if (rc != 0)
        return rc;
    sv->default_ns = strdup(odbc_leader_namespace(h));
    sv->ns[0].name = sv->default_ns;
    sv->h = h;
    sv->n = 1;
    return sv->default_ns != NULL ? 0 : EX_OSERR;
}

/* Opens the connection at start: serve starts only when it can read the
 * tables (a service manager restarts it); later outages only answer 503.
 * Returns 0 or an exit code after a message. */
static int open_all(struct serve *sv) {
    if (conn_handle(sv) == NULL) {
        odbc_leader__cli_err(sv->cli, "serve: %s", sv->error);
        return odbc_leader__cli_exit_code(sv->rc);
    }
    sv->started = 1;
    return 0;
}

/* Starts the daemon on *ai and waits for SIGTERM or SIGINT (blocked in
 * *sigs before the daemon's thread starts, so only this thread takes
 * them). Returns 0 or EX_OSERR. */
static int run_daemon(struct serve *sv, const struct addrinfo *ai,
                      const sigset_t *sigs) {
    struct MHD_Daemon *d;
    const union MHD_DaemonInfo *info;
    unsigned flags, conns;
    struct MHD_OptionItem tls[] = {
        {MHD_OPTION_HTTPS_MEM_KEY, 0, sv->tls_key},
        {MHD_OPTION_HTTPS_MEM_CERT, 0, sv->tls_cert},
        {MHD_OPTION_END, 0, NULL},
    };

    server_limits(sv->cli, "serve", &flags, &conns);
    flags |= MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    if (sv->tls_cert != NULL)
        flags |= MHD_USE_TLS;
    errno = 0;
    d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, sv, MHD_OPTION_EXTERNAL_LOGGER,
        on_mhd_log, sv, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
        MHD_OPTION_CONNECTION_LIMIT, conns, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)CONN_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)SERVE_REQUEST_KIB * 1024, MHD_OPTION_ARRAY,
        sv->tls_cert != NULL ? tls : tls + 2, MHD_OPTION_END);
    if (d == NULL) {
        odbc_leader__cli_err(sv->cli, "serve: cannot listen on %s%s%s",
                             sv->listen, errno != 0 ? ": " : "",
                             errno != 0 ? strerror(errno) : "");
        return EX_OSERR;
    }
    info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    odbc_leader__cli_msg(
        sv->cli, LOG_NOTICE,
        "serve: listening on %s, port %u, %zu namespace%s%s%s, at most %u "
        "connections",
        sv->listen, info != NULL ? (unsigned)info->port : 0u, sv->n,
        sv->n == 1 ? "" : "s", sv->tls_cert != NULL ? ", TLS" : "",
        sv->nusers > 0 ? ", basic authentication" : "", conns);
    while (odbc_leader__cli_wait_signal(sigs, 1000) == 0)
        ;
    MHD_stop_daemon(d);
    return 0;
}

int odbc_leader__cli_serve(struct odbc_leader__cli *c, int argc, char **argv) {
    struct serve sv;
    struct addrinfo *ai = NULL;
    sigset_t sigs;
    int rc;

    memset(&sv, 0, sizeof(sv));
    sv.cli = c;
    sv.listen = DEFAULT_LISTEN;
    sv.ns = calloc(MAX_NAMESPACES, sizeof(*sv.ns));
    if (sv.ns == NULL) {
        odbc_leader__cli_err(c, "out of memory");
        return EX_OSERR;
    }
    rc = parse_serve(&sv, argc, argv);
    if (rc == 0)
        rc = resolve(c, "serve", "--listen", sv.listen, &ai);
    if (rc == 0)
        rc = load_secrets(&sv);
    if (rc == 0)
        rc = default_namespace(&sv);
    if (rc == 0)
        rc = open_all(&sv);
    if (rc != 0)
        goto out;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigprocmask(SIG_BLOCK, &sigs, NULL);
    rc = run_daemon(&sv, ai, &sigs);
out:
    if (ai != NULL)
        freeaddrinfo(ai);
    odbc_leader_destroy(sv.h);
    free(sv.ns);
    free(sv.default_ns);
    if (sv.tls_key != NULL)
        explicit_bzero(sv.tls_key, strlen(sv.tls_key));
    free(sv.tls_key);
    free(sv.tls_cert);
    free(sv.auth);
    return rc == ODBC_LEADER__CLI_HELP ? 0 : rc;
}

/* ---- run --health-listen ---- */

/* The health check of one `run` process: 200 while it leads and CMD
 * runs. */
struct odbc_leader__health {
    struct MHD_Daemon *d;
    const odbc_leader_t *h; /* borrowed from run */
    atomic_int running;     /* CMD runs; set by run's thread */
};

/* libmicrohttpd's request callback of the health check: reads only what
 * the handle answers without I/O from any thread. */
static enum MHD_Result on_health(void *cls, struct MHD_Connection *conn,
                                 const char *url, const char *method,
                                 const char *version, const char *upload,
                                 size_t *upload_size, void **req_ctx) {
    struct odbc_leader__health *hs = cls;
    int64_t term;

    (void)version;
    (void)upload;
    if (*req_ctx == NULL)
        return headers_in(conn, method, req_ctx, hs);
    *upload_size = 0;
    if (strcmp(url, "/health/leader") != 0 && strcmp(url, "/") != 0)
        return reply_text(conn, MHD_HTTP_NOT_FOUND,
                          "not found: the health check is /health/leader");
    term = odbc_leader_term(hs->h);
    if (!odbc_leader_is_leader(hs->h) || term == 0)
        return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                          "not leader: %s does not lead %s",
                          odbc_leader_id(hs->h), odbc_leader_namespace(hs->h));
    if (!atomic_load(&hs->running))
        return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                          "not running: %s leads %s in term %lld, but CMD "
                          "does not run",
                          odbc_leader_id(hs->h), odbc_leader_namespace(hs->h),
                          (long long)term);
    return reply_text(
        conn, MHD_HTTP_OK, "leader: %s leads %s in term %lld and CMD runs",
        odbc_leader_id(hs->h), odbc_leader_namespace(hs->h), (long long)term);
}

int odbc_leader__cli_health_start(struct odbc_leader__health **out,
                                  struct odbc_leader__cli *c,
                                  const char *listen, const odbc_leader_t *h) {
    struct odbc_leader__health *hs;
    struct addrinfo *ai = NULL;
    unsigned flags, conns;
    int rc = resolve(c, "run", "--health-listen", listen, &ai);

    *out = NULL;
    if (rc != 0)
        return rc;
    hs = calloc(1, sizeof(*hs));
    if (hs == NULL) {
        freeaddrinfo(ai);
        odbc_leader__cli_err(c, "out of memory");
        return EX_OSERR;
    }
    hs->h = h;
    atomic_init(&hs->running, 0);
    server_limits(c, "run: --health-listen", &flags, &conns);
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* No error log: the thread stays off stdio, so a fork of run (the
     * supervisor of CMD) never inherits a stdio lock it holds. */
    errno = 0;
    hs->d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_health, hs, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
        MHD_OPTION_CONNECTION_LIMIT, conns, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)CONN_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)HEALTH_REQUEST_KIB * 1024, MHD_OPTION_END);
    freeaddrinfo(ai);
    if (hs->d == NULL) {
        odbc_leader__cli_err(c, "run: cannot listen on %s%s%s", listen,
                             errno != 0 ? ": " : "",
                             errno != 0 ? strerror(errno) : "");
        free(hs);
        return EX_OSERR;
    }
    *out = hs;
    return 0;
}

void odbc_leader__cli_health_running(struct odbc_leader__health *hs,
                                     int running) {
    if (hs != NULL)
        atomic_store(&hs->running, running);
}

void odbc_leader__cli_health_stop(struct odbc_leader__health *hs) {
    if (hs == NULL)
        return;
    MHD_stop_daemon(hs->d);
    free(hs);
}

#endif /* ODBC_LEADER_HAVE_MHD */
