/* SPDX-License-Identifier: MIT */
/*
 * serve_control.c: serve's one write, POST
 * /api/v1/jobs?namespace=NS&job=JOB&action=pause|resume|trigger
 * (docs/lifecycle.md). Allowed only when serve checks users
 * (--basic-auth) and the request carries the header X-Requested-By,
 * which a form or a link of another site cannot send; done once on
 * serve's connection (a run-now whose answer was lost may have been
 * recorded, so it is never sent again), logged with the user, answered
 * as JSON.
 */
#include <build_config.h>

#include <string.h>
#include <syslog.h>

#include "config.h"
#include "serve.h"

static const char *const action_names[] = {"pause", "resume", "trigger"};

/* The action named a (NULL: none), or -1. */
static int action_of(const char *a) {
    for (int i = 0; a != NULL && i < 3; i++)
        if (strcmp(a, action_names[i]) == 0)
            return i;
    return -1;
}

/* Queues 403 unless the request may change jobs: serve checks users and
 * the request says X-Requested-By. Returns 1 with the refusal's result in
 * *ret, or 0 when it may. */
static int refused(const struct odbc_leader__serve *sv,
                   struct MHD_Connection *conn, enum MHD_Result *ret) {
    const char *by =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Requested-By");

    if (sv->nusers == 0) {
        *ret = odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_FORBIDDEN,
            "changing jobs needs serve --basic-auth (a users file): without "
            "it anyone who reaches the port could pause them; odbc-leader "
            "jobs does the same from a shell");
        return 1;
    }
    if (by == NULL || by[0] == '\0') {
        *ret = odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_FORBIDDEN,
            "a POST needs the header X-Requested-By (any value): a page of "
            "another site cannot send it");
        return 1;
    }
    return 0;
}

/* Logs what the authenticated user did (at notice). */
static void audit(struct odbc_leader__serve *sv, struct MHD_Connection *conn,
                  int a, const char *job, const char *ns, int64_t key) {
    char *user = MHD_basic_auth_get_username_password(conn, NULL);
    const char *who = user != NULL ? user : "?";

    if (a == ODBC_LEADER__JOB_TRIGGER)
        odbc_leader__cli_msg(sv->cli, LOG_NOTICE,
                             "serve: %s asked a run-now of job %s of %s "
                             "(key %lld)",
                             who, job, ns, (long long)key);
    else
        odbc_leader__cli_msg(
            sv->cli, LOG_NOTICE, "serve: %s %s job %s of %s", who,
            a == ODBC_LEADER__JOB_PAUSE ? "paused" : "resumed", job, ns);
    if (user != NULL)
        MHD_free(user);
}

/* The 200 answer: what was done, as JSON. Returns the queueing's result. */
static enum MHD_Result reply_done(struct MHD_Connection *conn, int a,
                                  const char *job, const char *ns,
                                  int64_t key) {
    struct odbc_leader__body b;

    if (odbc_leader__httpd_body_open(&b) != 0)
        return MHD_NO;
    fputs("{\"namespace\":", b.f);
    odbc_leader__cli_json_string(b.f, ns);
    fputs(",\"job\":", b.f);
    odbc_leader__cli_json_string(b.f, job);
    fprintf(b.f, ",\"action\":\"%s\"", action_names[a]);
    if (a == ODBC_LEADER__JOB_TRIGGER)
        fprintf(b.f, ",\"key\":%lld", (long long)key);
    else
        fprintf(b.f, ",\"paused\":%s",
                a == ODBC_LEADER__JOB_PAUSE ? "true" : "false");
    fputs("}\n", b.f);
    return odbc_leader__httpd_reply_body(conn, MHD_HTTP_OK, "application/json",
                                         &b);
}

enum MHD_Result odbc_leader__serve_control(struct odbc_leader__serve *sv,
                                           struct MHD_Connection *conn) {
    const char *job = odbc_leader__httpd_arg(conn, "job");
    int a = action_of(odbc_leader__httpd_arg(conn, "action"));
    struct odbc_leader__serve_ns *ns;
    enum MHD_Result ret = MHD_NO;
    int64_t key = 0;
    int rc;

    if (refused(sv, conn, &ret))
        return ret;
    ns = odbc_leader__serve_req_ns(sv, conn, &ret);
    if (ns == NULL)
        return ret;
    if (job == NULL || !odbc_leader__valid_name(job))
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_BAD_REQUEST,
            "missing or invalid parameter job: 1-128 bytes of "
            "A-Z a-z 0-9 . _ - : / @");
    if (a < 0)
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_BAD_REQUEST,
            "missing or invalid parameter action: pause, resume or trigger");
    rc = odbc_leader__serve_job_action(sv, ns, a, job, &key);
    if (rc == ODBC_LEADER_ENOLIFECYCLE)
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_NOT_FOUND,
            "namespace %s has no fire lifecycle (its dialect has none)",
            ns->name);
    if (rc == ODBC_LEADER_EGROUPOFFER)
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_CONFLICT,
            "namespace %s is a sharded group: its jobs take no run-now "
            "(pause and resume work)",
            ns->name);
    if (rc < 0)
        return odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_SERVICE_UNAVAILABLE, "database unavailable: %s%s",
            ns->error,
            a == ODBC_LEADER__JOB_TRIGGER
                ? "; the run-now may have been recorded all the same "
                  "(odbc-leader jobs shows it): look before asking again"
                : "");
    audit(sv, conn, a, job, ns->name, key);
    return reply_done(conn, a, job, ns->name, key);
}
