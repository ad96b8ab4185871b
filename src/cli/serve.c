/* SPDX-License-Identifier: MIT */
/*
 * serve.c: "odbc-leader serve": a read-only HTTP server, built on
 * libmicrohttpd, over the namespaces given with -n: Prometheus metrics
 * (/metrics), the same as JSON (/api/v1/...), a leader health check for
 * load balancers and readiness probes (/health/leader) and a small page
 * that refreshes by itself (/). It never campaigns: its handles never
 * tick, and it runs only SELECTs while it serves. This file holds its
 * options, its start, the daemon and the routes; requests are answered
 * one at a time on libmicrohttpd's polling thread, the only thread that
 * uses the database (serve_conn.c). The other rooms are listed in
 * serve.h.
 */
#include <build_config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <syslog.h>

#include "clock.h"
#include "config.h"
#include "serve.h"

#define DEFAULT_LISTEN "127.0.0.1:9466"
#define MAX_NAMESPACES 1024
/* libmicrohttpd logs one message per client for some events (a client
 * that closed in the middle of a request): idle clients must not flood
 * the log, nor block the server's thread on it. */
#define MHD_LOG_BURST 10
#define MHD_LOG_WINDOW_NS (60 * INT64_C(1000000000))

/* Finds the served namespace name (from the URL or ?namespace=). Returns
 * it (sv's), or NULL after queueing the 400 or 404 into *ret. name is
 * borrowed. */
static struct odbc_leader__serve_ns *served_ns(struct odbc_leader__serve *sv,
                                               struct MHD_Connection *conn,
                                               const char *name,
                                               enum MHD_Result *ret) {
    struct odbc_leader__serve_ns *ns;

    if (!odbc_leader__valid_name(name)) {
        *ret = odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_BAD_REQUEST,
            "invalid namespace: 1-128 bytes of A-Z a-z 0-9 . _ - : / @");
        return NULL;
    }
    ns = odbc_leader__serve_ns_find(sv, name);
    if (ns == NULL)
        *ret = odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_NOT_FOUND, "namespace %s is not served (serve -n)",
            name);
    return ns;
}

/* Finds the namespace a request names with ?namespace= (optional when one
 * namespace is served). Returns it (sv's), or NULL after queueing the 4xx
 * into *ret. */
struct odbc_leader__serve_ns *
odbc_leader__serve_req_ns(struct odbc_leader__serve *sv,
                          struct MHD_Connection *conn, enum MHD_Result *ret) {
    const char *name = odbc_leader__httpd_arg(conn, "namespace");

    if (name == NULL && sv->n == 1)
        return &sv->ns[0];
    if (name == NULL) {
        *ret = odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_BAD_REQUEST,
            "missing parameter namespace (%zu are served)", sv->n);
        return NULL;
    }
    return served_ns(sv, conn, name, ret);
}

/* Answers r, a route of one namespace: the one the URL names after the
 * route's path (rest), or ?namespace=. */
static enum MHD_Result ns_route(struct odbc_leader__serve *sv,
                                struct MHD_Connection *conn,
                                enum odbc_leader__route r, const char *rest) {
    enum MHD_Result ret = MHD_NO;
    struct odbc_leader__serve_ns *ns =
        r == ODBC_LEADER__ROUTE_NAMESPACE
            ? served_ns(sv, conn, rest, &ret)
            : odbc_leader__serve_req_ns(sv, conn, &ret);

    if (ns == NULL)
        return ret;
    if (r == ODBC_LEADER__ROUTE_HEALTH)
        return odbc_leader__serve_health(sv, conn, ns);
    if (r == ODBC_LEADER__ROUTE_NAMESPACE)
        return odbc_leader__serve_api_namespace(sv, conn, ns);
    if (r == ODBC_LEADER__ROUTE_FIRES)
        return odbc_leader__serve_api_fires(sv, conn, ns);
    if (r == ODBC_LEADER__ROUTE_JOBS)
        return odbc_leader__serve_api_jobs(sv, conn, ns);
    return odbc_leader__serve_api_elections(sv, conn, ns);
}

/* Answers the request for url (a route of http.c). */
static enum MHD_Result route(struct odbc_leader__serve *sv,
                             struct MHD_Connection *conn, const char *url) {
    const char *rest;
    enum odbc_leader__route r = odbc_leader__http_route(url, &rest);

    switch (r) {
    case ODBC_LEADER__ROUTE_PAGE:
        return odbc_leader__serve_page(sv, conn);
    case ODBC_LEADER__ROUTE_SCRIPT:
        return odbc_leader__serve_script(conn);
    case ODBC_LEADER__ROUTE_METRICS:
        return odbc_leader__serve_metrics(sv, conn);
    case ODBC_LEADER__ROUTE_NAMESPACES:
        return odbc_leader__serve_api_namespaces(sv, conn);
    case ODBC_LEADER__ROUTE_HEALTH:
    case ODBC_LEADER__ROUTE_NAMESPACE:
    case ODBC_LEADER__ROUTE_FIRES:
    case ODBC_LEADER__ROUTE_ELECTIONS:
    case ODBC_LEADER__ROUTE_JOBS:
        return ns_route(sv, conn, r, rest);
    case ODBC_LEADER__ROUTE_NONE:
        break;
    }
    return odbc_leader__httpd_reply_text(
        conn, MHD_HTTP_NOT_FOUND,
        "not found: see odbc-leader serve --help for the paths");
}

/* Answers a POST for url: only /api/v1/jobs takes one (serve_control.c). */
static enum MHD_Result post_route(struct odbc_leader__serve *sv,
                                  struct MHD_Connection *conn,
                                  const char *url) {
    const char *rest;

    if (odbc_leader__http_route(url, &rest) != ODBC_LEADER__ROUTE_JOBS)
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_METHOD_NOT_ALLOWED,
            "method POST not allowed: GET or HEAD (only /api/v1/jobs takes "
            "a POST)");
    return odbc_leader__serve_control(sv, conn);
}

/* libmicrohttpd's request callback: checks the method and the
 * credentials, then routes the request. A POST is answered once its body
 * (ignored: its parameters are the URL's) has been read. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **req_ctx) {
    struct odbc_leader__serve *sv = cls;
    int post = strcmp(method, "POST") == 0;

    (void)version;
    (void)upload;
    if (*req_ctx == NULL && post) {
        *req_ctx = sv;
        return MHD_YES;
    }
    if (*req_ctx == NULL)
        return odbc_leader__httpd_headers_in(conn, method, req_ctx, sv);
    if (post && *upload_size != 0) {
        *upload_size = 0;
        return MHD_YES;
    }
    *upload_size = 0; /* a GET with a body: ignore it */
    if (sv->nusers > 0 && !odbc_leader__serve_authorized(sv, conn))
        return odbc_leader__serve_reply_auth(conn);
    return post ? post_route(sv, conn, url) : route(sv, conn, url);
}

/* libmicrohttpd's error log: to the command's log, at most MHD_LOG_BURST
 * messages a MHD_LOG_WINDOW_NS; the next message after the window says
 * how many were left out. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
    struct odbc_leader__serve *sv = cls;
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

/* Adds the namespace of -n arg to sv (once). Returns 0 or EX_USAGE after
 * a message. */
static int add_namespace(struct odbc_leader__serve *sv, const char *arg) {
    if (odbc_leader__serve_ns_find(sv, arg) != NULL)
        return 0;
    if (sv->n == MAX_NAMESPACES)
        return odbc_leader__cli_usage(
            sv->cli, "serve", "more than %d namespaces", MAX_NAMESPACES);
    sv->ns[sv->n++].name = arg;
    return 0;
}

/* Takes one of serve's options (and each -n) into the struct
 * odbc_leader__serve ctx. Returns 0, 1 when opt is none of them, or
 * EX_USAGE after a message. */
static int serve_opt(struct odbc_leader__cli *c, void *ctx, int opt,
                     const char *arg) {
    struct odbc_leader__serve *sv = ctx;

    switch (opt) {
    case 'n':
        return add_namespace(sv, arg);
    case 'L':
        sv->listen = arg;
        return 0;
    case 'T':
        sv->tls_cert_file = arg;
        return 0;
    case 'K':
        sv->tls_key_file = arg;
        return 0;
    case 'A':
        sv->auth_file = arg;
        return 0;
    case 'I':
        return odbc_leader__cli_name_arg(c, "serve", "--id", arg, &sv->self);
    default:
        return 1;
    }
}

static const struct odbc_leader__cli_cmdline serve_cmdline = {
    .subcmd = "serve",
    .help = odbc_leader__serve_help,
    .opt = serve_opt,
    .see_ns = 1,
    .longopts = {{"listen", required_argument, NULL, 'L'},
                 {"id", required_argument, NULL, 'I'},
                 {"tls-cert", required_argument, NULL, 'T'},
                 {"tls-key", required_argument, NULL, 'K'},
                 {"basic-auth", required_argument, NULL, 'A'}},
};

/* Parses serve's options into sv. Returns 0, ODBC_LEADER__CLI_HELP or an
 * exit code. */
static int parse_serve(struct odbc_leader__serve *sv, int argc, char **argv) {
    int rc = odbc_leader__cli_parse(sv->cli, &serve_cmdline, sv, argc, argv);

    if (rc == 0 && (sv->tls_cert_file == NULL) != (sv->tls_key_file == NULL))
        return odbc_leader__cli_usage(sv->cli, "serve",
                                      "--tls-cert and --tls-key go together");
    return rc;
}

/* Adds the configuration's own namespace when no -n was given. Returns 0
 * or an exit code after a message. */
static int default_namespace(struct odbc_leader__serve *sv) {
    odbc_leader_t *h = NULL;
    int rc;

    if (sv->n > 0)
        return 0;
    rc = odbc_leader__cli_open(sv->cli, ODBC_LEADER__SERVE_READ_ONLY, NULL, &h);
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
static int open_all(struct odbc_leader__serve *sv) {
    if (odbc_leader__serve_conn(sv) == NULL) {
        odbc_leader__cli_err(sv->cli, "serve: %s", sv->error);
        return odbc_leader__cli_exit_code(sv->rc);
    }
    sv->started = 1;
    return 0;
}

/* Starts the daemon on *ai. Returns it, or NULL after a message. */
static struct MHD_Daemon *start_daemon(struct odbc_leader__serve *sv,
                                       const struct addrinfo *ai,
                                       unsigned *conns) {
    struct MHD_Daemon *d;
    unsigned flags;
    struct MHD_OptionItem tls[] = {
        {MHD_OPTION_HTTPS_MEM_KEY, 0, sv->tls_key},
        {MHD_OPTION_HTTPS_MEM_CERT, 0, sv->tls_cert},
        {MHD_OPTION_END, 0, NULL},
    };

    odbc_leader__httpd_limits(sv->cli, "serve", &flags, conns);
    flags |= MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    if (sv->tls_cert != NULL)
        flags |= MHD_USE_TLS;
    errno = 0;
    d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, sv, MHD_OPTION_EXTERNAL_LOGGER,
        on_mhd_log, sv, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
        MHD_OPTION_CONNECTION_LIMIT, *conns, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)ODBC_LEADER__HTTPD_TIMEOUT_S,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)ODBC_LEADER__HTTPD_SERVE_KIB * 1024, MHD_OPTION_ARRAY,
        sv->tls_cert != NULL ? tls : tls + 2, MHD_OPTION_END);
    if (d == NULL)
        odbc_leader__cli_err(sv->cli, "serve: cannot listen on %s%s%s",
                             sv->listen, errno != 0 ? ": " : "",
                             errno != 0 ? strerror(errno) : "");
    return d;
}

/* Starts the daemon on *ai and waits for SIGTERM or SIGINT (blocked in
 * *sigs before the daemon's thread starts, so only this thread takes
 * them). Returns 0 or EX_OSERR. */
static int run_daemon(struct odbc_leader__serve *sv, const struct addrinfo *ai,
                      const sigset_t *sigs) {
    const union MHD_DaemonInfo *info;
    unsigned conns;
    struct MHD_Daemon *d = start_daemon(sv, ai, &conns);

    if (d == NULL)
        return EX_OSERR;
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

/* Frees what sv owns. */
static void serve_free(struct odbc_leader__serve *sv) {
    odbc_leader_destroy(sv->h);
    for (size_t i = 0; sv->ns != NULL && i < sv->n; i++)
        odbc_leader__serve_metrics_free(&sv->ns[i]);
    free(sv->ns);
    free(sv->default_ns);
    odbc_leader__serve_secrets_free(sv);
}

int odbc_leader__cli_serve(struct odbc_leader__cli *c, int argc, char **argv) {
    struct odbc_leader__serve sv;
    struct addrinfo *ai = NULL;
    sigset_t sigs;
    int rc;

    memset(&sv, 0, sizeof(sv));
    sv.cli = c;
    sv.start_ns = odbc_leader__now_ns(NULL);
    sv.listen = DEFAULT_LISTEN;
    sv.ns = calloc(MAX_NAMESPACES, sizeof(*sv.ns));
    if (sv.ns == NULL) {
        odbc_leader__cli_err(c, "out of memory");
        return EX_OSERR;
    }
    rc = parse_serve(&sv, argc, argv);
    if (rc == 0)
        rc = odbc_leader__httpd_resolve(c, "serve", "--listen", sv.listen, &ai);
    if (rc == 0)
        rc = odbc_leader__serve_load_secrets(&sv);
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
    serve_free(&sv);
    return rc == ODBC_LEADER__CLI_HELP ? 0 : rc;
}
