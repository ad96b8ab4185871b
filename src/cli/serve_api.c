/* SPDX-License-Identifier: MIT */
/*
 * serve_api.c: serve's JSON API, /api/v1/...: every namespace's state or
 * one's (as "status --json" prints it), and the newest fires of a ledger
 * and terms of an election log (as "fires --json" and "elections --json"
 * print them).
 */
#include <build_config.h>

#include <stdlib.h>

#include "config.h"
#include "serve.h"

#define FIRES_DEFAULT 100
#define FIRES_MAX 10000
#define ELECTIONS_DEFAULT 100
#define ELECTIONS_MAX 10000

/* Writes ns's state as a JSON object to f: the status object, or
 * {"namespace":..,"error":..} when it cannot be read. Returns 0 or -1. */
static int ns_json(struct odbc_leader__serve *sv,
                   struct odbc_leader__serve_ns *ns, FILE *f) {
    struct odbc_leader__snapshot s;
    int rc = odbc_leader__serve_snapshot(sv, ns, &s);

    if (rc == 0) {
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

enum MHD_Result odbc_leader__serve_api_namespaces(struct odbc_leader__serve *sv,
                                                  struct MHD_Connection *conn) {
    struct odbc_leader__body b;

    if (odbc_leader__httpd_body_open(&b) != 0)
        return MHD_NO;
    fputs("{\"namespaces\":[", b.f);
    for (size_t i = 0; i < sv->n; i++) {
        if (i > 0)
            fputc(',', b.f);
        ns_json(sv, &sv->ns[i], b.f);
    }
    fputs("]}\n", b.f);
    return odbc_leader__httpd_reply_body(conn, MHD_HTTP_OK, "application/json",
                                         &b);
}

enum MHD_Result odbc_leader__serve_api_namespace(struct odbc_leader__serve *sv,
                                                 struct MHD_Connection *conn,
                                                 const char *name) {
    struct odbc_leader__serve_ns *ns;
    struct odbc_leader__body b;
    int rc;

    if (!odbc_leader__valid_name(name))
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_BAD_REQUEST,
            "invalid namespace: 1-128 bytes of A-Z a-z 0-9 . _ - : / @");
    ns = odbc_leader__serve_ns_find(sv, name);
    if (ns == NULL)
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_NOT_FOUND, "namespace %s is not served (serve -n)",
            name);
    if (odbc_leader__httpd_body_open(&b) != 0)
        return MHD_NO;
    rc = ns_json(sv, ns, b.f);
    return odbc_leader__httpd_reply_body(
        conn, rc == 0 ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
        "application/json", &b);
}

/* Queues 200 with the fires of l (ns's ledger) from first on as JSON. */
static enum MHD_Result reply_fires(struct MHD_Connection *conn,
                                   const struct odbc_leader__serve_ns *ns,
                                   const struct odbc_leader__fire_list *l,
                                   size_t first) {
    struct odbc_leader__body b;

    if (odbc_leader__httpd_body_open(&b) != 0)
        return MHD_NO;
    fputs("{\"namespace\":", b.f);
    odbc_leader__cli_json_string(b.f, ns->name);
    fputs(",\"fires\":[", b.f);
    for (size_t i = first; i < l->n; i++) {
        if (i > first)
            fputc(',', b.f);
        odbc_leader__cli_fire_json(b.f, &l->v[i]);
    }
    fputs("]}\n", b.f);
    return odbc_leader__httpd_reply_body(conn, MHD_HTTP_OK, "application/json",
                                         &b);
}

enum MHD_Result odbc_leader__serve_api_fires(struct odbc_leader__serve *sv,
                                             struct MHD_Connection *conn) {
    enum MHD_Result ret = MHD_NO;
    struct odbc_leader__serve_ns *ns =
        odbc_leader__serve_req_ns(sv, conn, &ret);
    const char *job = odbc_leader__httpd_arg(conn, "job");
    struct odbc_leader__fire_list l = {NULL, 0, 0, 0};
    long limit;

    if (ns == NULL)
        return ret;
    if (job != NULL && !odbc_leader__valid_name(job))
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_BAD_REQUEST,
            "invalid job: 1-128 bytes of A-Z a-z 0-9 . _ - : / @");
    if (odbc_leader__http_limit(odbc_leader__httpd_arg(conn, "limit"),
                                FIRES_DEFAULT, FIRES_MAX, &limit) != 0)
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_BAD_REQUEST,
            "invalid limit: a whole number from 1 to %d", FIRES_MAX);
    if (odbc_leader__serve_fires(sv, ns, job, &l) != 0)
        ret = odbc_leader__httpd_reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                                            "database unavailable: %s",
                                            ns->error);
    else
        ret = reply_fires(conn, ns, &l,
                          l.n > (size_t)limit ? l.n - (size_t)limit : 0);
    free(l.v);
    return ret;
}

/* Queues 200 with the newest limit terms of l (ns's log) as JSON. */
static enum MHD_Result
reply_elections(struct MHD_Connection *conn,
                const struct odbc_leader__serve_ns *ns,
                const struct odbc_leader__election_list *l, long limit) {
    size_t first = l->n > (size_t)limit ? l->n - (size_t)limit : 0;
    struct odbc_leader__body b;

    if (odbc_leader__httpd_body_open(&b) != 0)
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
    return odbc_leader__httpd_reply_body(conn, MHD_HTTP_OK, "application/json",
                                         &b);
}

enum MHD_Result odbc_leader__serve_api_elections(struct odbc_leader__serve *sv,
                                                 struct MHD_Connection *conn) {
    enum MHD_Result ret = MHD_NO;
    struct odbc_leader__serve_ns *ns =
        odbc_leader__serve_req_ns(sv, conn, &ret);
    struct odbc_leader__election_list l = {NULL, 0, 0, 0};
    long limit;
    int rc;

    if (ns == NULL)
        return ret;
    if (odbc_leader__http_limit(odbc_leader__httpd_arg(conn, "limit"),
                                ELECTIONS_DEFAULT, ELECTIONS_MAX, &limit) != 0)
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_BAD_REQUEST,
            "invalid limit: a whole number from 1 to %d", ELECTIONS_MAX);
    rc = odbc_leader__serve_elections(sv, ns, &l);
    if (rc > 0)
        ret = odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_NOT_FOUND,
            "namespace %s keeps no election log (its dialect has none)",
            ns->name);
    else if (rc < 0)
        ret = odbc_leader__httpd_reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                                            "database unavailable: %s",
                                            ns->error);
    else
        ret = reply_elections(conn, ns, &l, limit);
    free(l.v);
    return ret;
}
