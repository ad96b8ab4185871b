/* SPDX-License-Identifier: MIT */
/*
 * httpd.c: the libmicrohttpd plumbing of the command's two HTTP servers,
 * serve's and run --health-listen's: building responses, the request's
 * method and arguments, resolving the listening address, and the polling
 * and the limit of connections (raising the limit of open files to fit
 * them).
 */
#include <build_config.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <syslog.h>

#include "httpd.h"

/* Descriptors kept for everything but the connections: stdio, the
 * database's, the listening socket, the poller's, syslog, run's pipes. */
#define FD_RESERVE 64

int odbc_leader__httpd_body_open(struct odbc_leader__body *b) {
    b->buf = NULL;
    b->len = 0;
    b->f = open_memstream(&b->buf, &b->len);
    return b->f != NULL ? 0 : -1;
}

enum MHD_Result odbc_leader__httpd_reply_body(struct MHD_Connection *conn,
                                              unsigned status, const char *type,
                                              struct odbc_leader__body *b) {
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

enum MHD_Result odbc_leader__httpd_reply_text(struct MHD_Connection *conn,
                                              unsigned status, const char *fmt,
                                              ...) {
    struct odbc_leader__body b;
    va_list ap;

    if (odbc_leader__httpd_body_open(&b) != 0)
        return MHD_NO;
    va_start(ap, fmt);
    vfprintf(b.f, fmt, ap);
    va_end(ap);
    fputc('\n', b.f);
    return odbc_leader__httpd_reply_body(conn, status,
                                         "text/plain; charset=utf-8", &b);
}

const char *odbc_leader__httpd_arg(struct MHD_Connection *conn,
                                   const char *key) {
    return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);
}

enum MHD_Result odbc_leader__httpd_headers_in(struct MHD_Connection *conn,
                                              const char *method,
                                              void **req_ctx, void *mark) {
    *req_ctx = mark;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_METHOD_NOT_ALLOWED,
            "method %s not allowed: GET or HEAD", method);
    return MHD_YES;
}

int odbc_leader__httpd_resolve(struct odbc_leader__cli *c, const char *subcmd,
                               const char *opt, const char *listen,
                               struct addrinfo **out) {
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

void odbc_leader__httpd_limits(struct odbc_leader__cli *c, const char *subcmd,
                               unsigned *flags, unsigned *conns) {
    const unsigned limit = ODBC_LEADER__HTTPD_CONN_LIMIT;
    rlim_t nofile = nofile_raise(limit + FD_RESERVE);
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
    *conns = most < limit ? (unsigned)most : limit;
    if (*conns < limit)
        odbc_leader__cli_msg(
            c, *conns < limit / 2 ? LOG_WARNING : LOG_NOTICE,
            "%s: at most %u connections at once, not %u: %s allows no more",
            subcmd, *conns, limit, why);
}
