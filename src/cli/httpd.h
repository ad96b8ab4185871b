/* SPDX-License-Identifier: MIT */
/*
 * httpd.h: what the two HTTP servers of the command share, serve's and
 * run --health-listen's (httpd.c): their limits, and with libmicrohttpd
 * the listening address, the polling, and building responses.
 */
#ifndef ODBC_LEADER_CLI_HTTPD_H
#define ODBC_LEADER_CLI_HTTPD_H

#include "cli.h"

/* The limits of both servers (docs/operations.md, "Idle and slow
 * clients"): as many idle connections as a client can cheaply hold
 * (tests/cli/idle.test holds 2,000 from the health check's own address)
 * must not keep the health check waiting. Past CONN_LIMIT libmicrohttpd
 * stops polling the listening socket: a new connection waits in the
 * kernel's listen queue until one closes. */
#define ODBC_LEADER__HTTPD_CONN_LIMIT                                          \
    4096 /* connections at once (fewer: the                                    \
            hard NOFILE) */
#define ODBC_LEADER__HTTPD_TIMEOUT_S                                           \
    3 /* seconds of silence before a                                           \
         connection closes */
#define ODBC_LEADER__HTTPD_SERVE_KIB                                           \
    16                                  /* serve: a request's line and         \
                                           headers */
#define ODBC_LEADER__HTTPD_HEALTH_KIB 4 /* run --health-listen: the same */

#ifdef ODBC_LEADER_HAVE_MHD
#include <microhttpd.h>
#include <netdb.h>

/* A response body under construction (open_memstream). */
struct odbc_leader__body {
    char *buf; /* owned until handed to libmicrohttpd */
    size_t len;
    FILE *f;
};

/* Starts a body. Returns 0 or -1 (out of memory). */
int odbc_leader__httpd_body_open(struct odbc_leader__body *b);

/* Queues status with the finished body b (whose buffer libmicrohttpd
 * then owns) as content type type. Returns what MHD_queue_response does. */
enum MHD_Result odbc_leader__httpd_reply_body(struct MHD_Connection *conn,
                                              unsigned status, const char *type,
                                              struct odbc_leader__body *b);

/* Queues status with a plain-text message (printf format) and a newline.
 * Returns what MHD_queue_response does. */
enum MHD_Result odbc_leader__httpd_reply_text(struct MHD_Connection *conn,
                                              unsigned status, const char *fmt,
                                              ...)
    __attribute__((format(printf, 3, 4)));

/* Returns the query argument key of conn (borrowed from libmicrohttpd),
 * or NULL. */
const char *odbc_leader__httpd_arg(struct MHD_Connection *conn,
                                   const char *key);

/* The first call of a request, once its headers are in: marks *req_ctx
 * with mark (any pointer: the next call is the request) and refuses a
 * method other than GET and HEAD with 405. Returns MHD_YES or what the
 * refusal's queueing returned. */
enum MHD_Result odbc_leader__httpd_headers_in(struct MHD_Connection *conn,
                                              const char *method,
                                              void **req_ctx, void *mark);

/* Resolves listen ("HOST:PORT", "[V6]:PORT", ":PORT"), the argument of
 * option opt of subcmd, into *out (the caller frees it with
 * freeaddrinfo). Returns 0 or EX_USAGE after a message. */
int odbc_leader__httpd_resolve(struct odbc_leader__cli *c, const char *subcmd,
                               const char *opt, const char *listen,
                               struct addrinfo **out);

/* The polling of a server and how many connections it holds at once, for
 * subcmd's messages: epoll (else poll) in libmicrohttpd's own thread;
 * ODBC_LEADER__HTTPD_CONN_LIMIT connections after raising the soft limit
 * of open files to fit them, fewer when the hard limit or select allows
 * no more (said as a warning below half the limit, else as a notice).
 * Sets *flags (the MHD_USE_ flags of the polling) and *conns. */
void odbc_leader__httpd_limits(struct odbc_leader__cli *c, const char *subcmd,
                               unsigned *flags, unsigned *conns);

#endif /* ODBC_LEADER_HAVE_MHD */

#endif /* ODBC_LEADER_CLI_HTTPD_H */
