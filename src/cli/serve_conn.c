/* SPDX-License-Identifier: MIT */
/*
 * serve_conn.c: serve's one database connection and the reads of a
 * namespace on it. The connection is a handle that never ticks, pointed at
 * each namespace in turn (the daemon answers one request at a time). A
 * read that fails drops the connection and is tried once more on a new
 * one, so a restarted database costs no failed request; opening a new
 * connection after a failure waits a backoff (250 ms doubling to 10 s).
 */
#include <build_config.h>

#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "clock.h"
#include "config.h"
#include "handle.h"
#include "serve.h"

#define BACKOFF_MIN_NS (250 * INT64_C(1000000))
#define BACKOFF_MAX_NS (10 * INT64_C(1000000000))
/* A namespace that names no group is asked again this often whether it
 * does: the group statement is not prepared, and a read of it costs more
 * than the rest of the snapshot. */
#define GROUP_RECHECK_NS (30 * INT64_C(1000000000))

/* One read of a namespace on the connection's handle h (pointed at it):
 * returns what the library call returned. */
typedef int (*ns_read_fn)(odbc_leader_t *h, void *ctx);

/* Waits longer before the next connection: doubles the backoff from
 * BACKOFF_MIN_NS up to BACKOFF_MAX_NS, from now. */
static void back_off(struct odbc_leader__serve *sv, int64_t now) {
    sv->backoff_ns = sv->backoff_ns == 0                   ? BACKOFF_MIN_NS
                     : 2 * sv->backoff_ns > BACKOFF_MAX_NS ? BACKOFF_MAX_NS
                                                           : 2 * sv->backoff_ns;
    sv->retry_ns = now + sv->backoff_ns;
    if (sv->started)
        odbc_leader__cli_msg(sv->cli, LOG_WARNING,
                             "serve: %s (next try in %lld ms)", sv->error,
                             (long long)(sv->backoff_ns / 1000000));
}

odbc_leader_t *odbc_leader__serve_conn(struct odbc_leader__serve *sv) {
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
    /* its configuration names the first namespace; ns_handle points it at
     * each */
    sv->cli->ns = sv->ns[0].name;
    rc = odbc_leader__cli_config(sv->cli, ODBC_LEADER__SERVE_READ_ONLY, &conf);
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
        back_off(sv, now);
        return NULL;
    }
    sv->backoff_ns = 0;
    sv->error[0] = '\0';
    return sv->h;
}

/* Returns the connection's handle pointed at ns, or NULL with ns->error
 * set when there is no connection now. */
static odbc_leader_t *ns_handle(struct odbc_leader__serve *sv,
                                struct odbc_leader__serve_ns *ns) {
    odbc_leader_t *h = odbc_leader__serve_conn(sv);

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
static void ns_failed(struct odbc_leader__serve *sv,
                      struct odbc_leader__serve_ns *ns, int rc) {
    snprintf(ns->error, sizeof(ns->error), "reading failed: %s",
             odbc_leader_strerror(rc));
    snprintf(sv->error, sizeof(sv->error), "%s", ns->error);
    odbc_leader__cli_msg(sv->cli, LOG_WARNING, "serve: namespace %s: %s",
                         ns->name, ns->error);
    odbc_leader_destroy(sv->h);
    sv->h = NULL;
    sv->retry_ns = 0;
    ns->failed++;
}

struct odbc_leader__serve_ns *
odbc_leader__serve_ns_find(struct odbc_leader__serve *sv, const char *name) {
    for (size_t i = 0; name != NULL && i < sv->n; i++) {
        if (strcmp(sv->ns[i].name, name) == 0)
            return &sv->ns[i];
    }
    return NULL;
}

/* Runs read for ns, and once more on a fresh connection after a failed
 * read. Returns read's result: 0 or more, ODBC_LEADER_ENOLEDGER or
 * ODBC_LEADER_ENOELECTIONS (the dialect lacks the table: no reason to
 * reconnect), or another negative error with ns->error set. Each failed
 * attempt, and finding no connection, counts in ns->failed. */
static int ns_read(struct odbc_leader__serve *sv,
                   struct odbc_leader__serve_ns *ns, ns_read_fn read,
                   void *ctx) {
    int rc = ODBC_LEADER_ECONNECT;

    for (int attempt = 0; attempt < 2; attempt++) {
        odbc_leader_t *h = ns_handle(sv, ns);

        if (h == NULL) {
            ns->failed++;
            return ODBC_LEADER_ECONNECT;
        }
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

int odbc_leader__serve_lease(struct odbc_leader__serve *sv,
                             struct odbc_leader__serve_ns *ns,
                             struct odbc_leader_lease *l) {
    return ns_read(sv, ns, read_lease, l) < 0 ? -1 : 0;
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

int odbc_leader__serve_snapshot(struct odbc_leader__serve *sv,
                                struct odbc_leader__serve_ns *ns,
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

int odbc_leader__serve_fires(struct odbc_leader__serve *sv,
                             struct odbc_leader__serve_ns *ns, const char *job,
                             struct odbc_leader__fire_list *l) {
    struct fires_read r = {job, l};
    int rc = ns_read(sv, ns, read_fires, &r);

    if (rc == ODBC_LEADER_ENOLEDGER)
        return 0;
    if (rc >= 0 && l->nomem)
        snprintf(ns->error, sizeof(ns->error), "out of memory");
    return rc >= 0 && !l->nomem ? 0 : -1;
}

/* ns_read_fn: the jobs, into an emptied list. */
static int read_jobs(odbc_leader_t *h, void *ctx) {
    struct odbc_leader__job_list *l = ctx;

    l->n = 0;
    return odbc_leader_list_jobs(h, odbc_leader__cli_keep_job, l);
}

int odbc_leader__serve_jobs(struct odbc_leader__serve *sv,
                            struct odbc_leader__serve_ns *ns,
                            struct odbc_leader__job_list *l) {
    int rc = ns_read(sv, ns, read_jobs, l);

    if (rc == ODBC_LEADER_ENOLIFECYCLE)
        return 1;
    if (rc >= 0 && l->nomem)
        snprintf(ns->error, sizeof(ns->error), "out of memory");
    return rc >= 0 && !l->nomem ? 0 : -1;
}

/* ns_read_fn: the schedules, into an emptied list. */
static int read_schedules(odbc_leader_t *h, void *ctx) {
    struct odbc_leader__schedule_list *l = ctx;

    l->n = 0;
    return odbc_leader_list_schedules(h, odbc_leader__cli_keep_schedule, l);
}

int odbc_leader__serve_schedules(struct odbc_leader__serve *sv,
                                 struct odbc_leader__serve_ns *ns,
                                 struct odbc_leader__schedule_list *l) {
    int rc = ns_read(sv, ns, read_schedules, l);

    if (rc == ODBC_LEADER_ENOLIFECYCLE) {
        l->n = 0;
        return 0;
    }
    if (rc >= 0 && l->nomem)
        snprintf(ns->error, sizeof(ns->error), "out of memory");
    return rc >= 0 && !l->nomem ? 0 : -1;
}

int odbc_leader__serve_job_action(struct odbc_leader__serve *sv,
                                  struct odbc_leader__serve_ns *ns, int action,
                                  const char *job, int64_t *key) {
    odbc_leader_t *h = ns_handle(sv, ns);
    int rc;

    if (h == NULL) {
        ns->failed++;
        return ODBC_LEADER_ECONNECT;
    }
    rc = action == ODBC_LEADER__JOB_TRIGGER
             ? odbc_leader_trigger_job(h, job, key)
             : odbc_leader_pause_job(h, job, action == ODBC_LEADER__JOB_PAUSE);
    if (rc < 0 && rc != ODBC_LEADER_ENOLIFECYCLE &&
        rc != ODBC_LEADER_EGROUPOFFER)
        ns_failed(sv, ns, rc);
    return rc < 0 ? rc : 0;
}

/* ns_read_fn: an election log, into an emptied list. */
static int read_elections(odbc_leader_t *h, void *ctx) {
    struct odbc_leader__election_list *l = ctx;

    l->n = 0;
    return odbc_leader_list_elections(h, odbc_leader__cli_keep_election, l);
}

int odbc_leader__serve_elections(struct odbc_leader__serve *sv,
                                 struct odbc_leader__serve_ns *ns,
                                 struct odbc_leader__election_list *l) {
    int rc = ns_read(sv, ns, read_elections, l);

    if (rc == ODBC_LEADER_ENOELECTIONS)
        return 1;
    if (rc >= 0 && l->nomem)
        snprintf(ns->error, sizeof(ns->error), "out of memory");
    return rc >= 0 && !l->nomem ? 0 : -1;
}
