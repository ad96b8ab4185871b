/* SPDX-License-Identifier: MIT */
/*
 * serve_api.c: serve's JSON API, /api/v1/...: every namespace's state or
 * one's (as "status --json" prints it), the newest fires of a ledger and
 * terms of an election log, and the jobs (as "fires --json", "elections
 * --json" and "jobs --json" print them).
 */
#include <build_config.h>

#include <stdlib.h>

#include "config.h"
#include "serve.h"

/* The rows a list answers with: the newest limit, 1 to LIMIT_MAX. */
#define LIMIT_DEFAULT 100
#define LIMIT_MAX 10000

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

enum MHD_Result
odbc_leader__serve_api_namespace(struct odbc_leader__serve *sv,
                                 struct MHD_Connection *conn,
                                 struct odbc_leader__serve_ns *ns) {
    struct odbc_leader__body b;
    int rc;

    if (odbc_leader__httpd_body_open(&b) != 0)
        return MHD_NO;
    rc = ns_json(sv, ns, b.f);
    return odbc_leader__httpd_reply_body(
        conn, rc == 0 ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
        "application/json", &b);
}

/* Queues the answer to a read of ns's rows that returned rc: 503 when it
 * failed (rc < 0), else 200 with {"namespace":NS,"KEY":[...]}: the newest
 * limit of the n rows at v (size bytes each), oldest first, each written
 * by json. All is borrowed. */
static enum MHD_Result reply_rows(struct MHD_Connection *conn,
                                  const struct odbc_leader__serve_ns *ns,
                                  int rc, const char *key, const void *v,
                                  size_t n, size_t size, long limit,
                                  void (*json)(FILE *f, const void *row)) {
    size_t first = odbc_leader__cli_newest(n, limit);
    struct odbc_leader__body b;

    if (rc < 0)
        return odbc_leader__httpd_reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                                             "database unavailable: %s",
                                             ns->error);
    if (odbc_leader__httpd_body_open(&b) != 0)
        return MHD_NO;
    fputs("{\"namespace\":", b.f);
    odbc_leader__cli_json_string(b.f, ns->name);
    fprintf(b.f, ",\"%s\":[", key);
    for (size_t i = first; i < n; i++) {
        if (i > first)
            fputc(',', b.f);
        json(b.f, (const char *)v + i * size);
    }
    fputs("]}\n", b.f);
    return odbc_leader__httpd_reply_body(conn, MHD_HTTP_OK, "application/json",
                                         &b);
}

/* Reads the request's limit parameter (LIMIT_DEFAULT when absent) into
 * *limit. Returns 0, or -1 with a 400 queued, its result in *ret. */
static int limit_arg(struct MHD_Connection *conn, long *limit,
                     enum MHD_Result *ret) {
    if (odbc_leader__http_limit(odbc_leader__httpd_arg(conn, "limit"),
                                LIMIT_DEFAULT, LIMIT_MAX, limit) == 0)
        return 0;
    *ret = odbc_leader__httpd_reply_text(
        conn, MHD_HTTP_BAD_REQUEST,
        "invalid limit: a whole number from 1 to %d", LIMIT_MAX);
    return -1;
}

/* reply_rows' json of a fire and of a term. */
static void fire_json(FILE *f, const void *row) {
    odbc_leader__cli_fire_json(f, row);
}

static void term_json(FILE *f, const void *row) {
    odbc_leader__cli_election_json(f, row);
}

enum MHD_Result odbc_leader__serve_api_fires(struct odbc_leader__serve *sv,
                                             struct MHD_Connection *conn,
                                             struct odbc_leader__serve_ns *ns) {
    enum MHD_Result ret = MHD_NO;
    const char *job = odbc_leader__httpd_arg(conn, "job");
    struct odbc_leader__fire_list l = {NULL, 0, 0, 0};
    long limit;
    int rc;

    if (job != NULL && !odbc_leader__valid_name(job))
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_BAD_REQUEST,
            "invalid job: 1-128 bytes of A-Z a-z 0-9 . _ - : / @");
    if (limit_arg(conn, &limit, &ret) != 0)
        return ret;
    rc = odbc_leader__serve_fires(sv, ns, job, &l);
    ret = reply_rows(conn, ns, rc, "fires", l.v, l.n, sizeof(*l.v), limit,
                     fire_json);
    free(l.v);
    return ret;
}

enum MHD_Result
odbc_leader__serve_api_elections(struct odbc_leader__serve *sv,
                                 struct MHD_Connection *conn,
                                 struct odbc_leader__serve_ns *ns) {
    enum MHD_Result ret = MHD_NO;
    struct odbc_leader__election_list l = {NULL, 0, 0, 0};
    long limit;
    int rc;

    if (limit_arg(conn, &limit, &ret) != 0)
        return ret;
    rc = odbc_leader__serve_elections(sv, ns, &l);
    if (rc > 0)
        ret = odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_NOT_FOUND,
            "namespace %s keeps no election log (its dialect has none)",
            ns->name);
    else
        ret = reply_rows(conn, ns, rc, "elections", l.v, l.n, sizeof(*l.v),
                         limit, term_json);
    free(l.v);
    return ret;
}

/* reply_rows' json of a job. */
static void job_json(FILE *f, const void *row) {
    odbc_leader__cli_job_json(f, row);
}

enum MHD_Result odbc_leader__serve_api_jobs(struct odbc_leader__serve *sv,
                                            struct MHD_Connection *conn,
                                            struct odbc_leader__serve_ns *ns) {
    enum MHD_Result ret;
    struct odbc_leader__job_list l = {NULL, 0, 0, 0};
    int rc = odbc_leader__serve_jobs(sv, ns, &l);

    if (rc > 0)
        ret = odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_NOT_FOUND,
            "namespace %s has no fire lifecycle (its dialect has none)",
            ns->name);
    else
        ret = reply_rows(conn, ns, rc, "jobs", l.v, l.n, sizeof(*l.v), 0,
                         job_json);
    free(l.v);
    return ret;
}
