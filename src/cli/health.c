/* SPDX-License-Identifier: MIT */
/*
 * health.c: the leader health checks. serve's GET /health/leader answers
 * by the lease row, in database time, for any candidate; "odbc-leader run
 * --health-listen" runs a server of its own (this file's) that answers
 * for its own process without I/O: 200 while it leads and its CMD runs.
 * Both answer 200 or 503 with a one-line reason.
 */
#include <build_config.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "config.h"
#include "serve.h"

enum MHD_Result odbc_leader__serve_health(struct odbc_leader__serve *sv,
                                          struct MHD_Connection *conn,
                                          struct odbc_leader__serve_ns *ns) {
    const char *id = odbc_leader__httpd_arg(conn, "id");
    struct odbc_leader_lease l;

    if (id == NULL)
        id = sv->self;
    if (id == NULL || !odbc_leader__valid_name(id))
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_BAD_REQUEST,
            "missing or invalid parameter id (the candidate's LeaderId; "
            "serve --id gives a default)");
    if (odbc_leader__serve_lease(sv, ns, &l) < 0)
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_SERVICE_UNAVAILABLE,
            "unknown: database unavailable: %s", ns->error);
    if (l.leader_id[0] != '\0' && l.expires_at_ms > l.db_now_ms &&
        strcmp(l.leader_id, id) == 0)
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_OK,
            "leader: %s leads %s in term %lld, lease %lld ms "
            "left",
            id, ns->name, (long long)l.term,
            (long long)(l.expires_at_ms - l.db_now_ms));
    if (l.leader_id[0] != '\0' && l.expires_at_ms > l.db_now_ms)
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_SERVICE_UNAVAILABLE,
            "not leader: %s leads %s in term %lld", l.leader_id, ns->name,
            (long long)l.term);
    return odbc_leader__httpd_reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                                         "not leader: %s has no leader",
                                         ns->name);
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
        return odbc_leader__httpd_headers_in(conn, method, req_ctx, hs);
    *upload_size = 0;
    if (strcmp(url, "/health/leader") != 0 && strcmp(url, "/") != 0)
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_NOT_FOUND,
            "not found: the health check is /health/leader");
    term = odbc_leader_term(hs->h);
    if (!odbc_leader_is_leader(hs->h) || term == 0)
        return odbc_leader__httpd_reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                                             "not leader: %s does not lead %s",
                                             odbc_leader_id(hs->h),
                                             odbc_leader_namespace(hs->h));
    if (!atomic_load(&hs->running))
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_SERVICE_UNAVAILABLE,
            "not running: %s leads %s in term %lld, but CMD does not run",
            odbc_leader_id(hs->h), odbc_leader_namespace(hs->h),
            (long long)term);
    return odbc_leader__httpd_reply_text(
        conn, MHD_HTTP_OK, "leader: %s leads %s in term %lld and CMD runs",
        odbc_leader_id(hs->h), odbc_leader_namespace(hs->h), (long long)term);
}

/* Starts hs's daemon on *ai. Returns 0, or EX_OSERR after a message naming
 * listen. */
static int health_daemon(struct odbc_leader__health *hs,
                         struct odbc_leader__cli *c, const char *listen,
                         const struct addrinfo *ai) {
    unsigned flags, conns;

    odbc_leader__httpd_limits(c, "run: --health-listen", &flags, &conns);
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* No error log: the thread stays off stdio, so a fork of run (the
     * supervisor of CMD) never inherits a stdio lock it holds. */
    errno = 0;
    hs->d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_health, hs, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
        MHD_OPTION_CONNECTION_LIMIT, conns, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)ODBC_LEADER__HTTPD_TIMEOUT_S,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)ODBC_LEADER__HTTPD_HEALTH_KIB * 1024, MHD_OPTION_END);
    if (hs->d != NULL)
        return 0;
    odbc_leader__cli_err(c, "run: cannot listen on %s%s%s", listen,
                         errno != 0 ? ": " : "",
                         errno != 0 ? strerror(errno) : "");
    return EX_OSERR;
}

int odbc_leader__cli_health_start(struct odbc_leader__health **out,
                                  struct odbc_leader__cli *c,
                                  const char *listen, const odbc_leader_t *h) {
    struct odbc_leader__health *hs;
    struct addrinfo *ai = NULL;
    int rc =
        odbc_leader__httpd_resolve(c, "run", "--health-listen", listen, &ai);

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
    rc = health_daemon(hs, c, listen, ai);
    freeaddrinfo(ai);
    if (rc != 0) {
        free(hs);
        return rc;
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
