/* SPDX-License-Identifier: MIT */
/*
 * handle.c: the core of the two public handles (handle.h): the create
 * steps they share, the claim with its one retry, and the record of the
 * last error that odbc_leader_last_error() and
 * odbc_leader_group_last_error() return.
 */
#include <build_config.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <uuid/uuid.h>

#include "config.h"
#include "db.h"
#include "db_ledger.h"
#include "db_lifecycle.h"
#include "db_schedule.h"
#include "error.h"
#include "fence.h"
#include "handle.h"
#include "log.h"

/* The size of the callbacks struct up to and including member m. */
#define CB_END(m)                                                              \
    (offsetof(struct odbc_leader_callbacks, m) +                               \
     sizeof(((struct odbc_leader_callbacks *)0)->m))

/* Copies the host's callbacks (cb, borrowed; may be NULL) into *dst at this
 * library's size: members past cb->struct_size (a host built against an
 * older, shorter struct) stay NULL, members past this library's struct (a
 * newer host) are ignored; only whole members are read. Returns 0, or
 * ODBC_LEADER_EINVAL with a message in err when struct_size does not even cover
 * ctx. */
static int copy_callbacks(struct odbc_leader_callbacks *dst,
                          const struct odbc_leader_callbacks *cb, char *err,
                          size_t errlen) {
    memset(dst, 0, sizeof(*dst));
    dst->struct_size = sizeof(*dst);
    if (cb == NULL)
        return 0;
    if (cb->struct_size < CB_END(ctx)) {
        odbc_leader__errf(err, errlen,
                          "struct odbc_leader_callbacks: struct_size is %u; "
                          "set it to sizeof(struct odbc_leader_callbacks)",
                          (unsigned)cb->struct_size);
        return ODBC_LEADER_EINVAL;
    }
    dst->ctx = cb->ctx;
    if (cb->struct_size >= CB_END(log))
        dst->log = cb->log;
    if (cb->struct_size >= CB_END(on_change))
        dst->on_change = cb->on_change;
    if (cb->struct_size >= CB_END(on_shard_change))
        dst->on_shard_change = cb->on_shard_change;
    return 0;
}

/* Takes LeaderId, else a random UUID, as c's id. */
static void choose_id(struct odbc_leader__handle *c) {
    uuid_t u;

    if (c->cfg.id[0] != '\0') {
        memcpy(c->id, c->cfg.id, sizeof(c->id));
        return;
    }
    uuid_generate_random(u);
    uuid_unparse_lower(u, c->id);
}

/* The steps of create after the allocation. Returns 0 or a negative error
 * with a message in err; c holds what needs freeing either way. */
static int ready(struct odbc_leader__handle *c, const char *config,
                 const struct odbc_leader_callbacks *cb,
                 const struct odbc_leader__handle_kind *kind, char *err,
                 size_t errlen) {
    int rc = copy_callbacks(&c->cb, cb, err, errlen);

    if (rc < 0)
        return rc;
    c->log.fn = c->cb.log;
    c->log.ctx = c->cb.ctx;
    rc = odbc_leader__config_parse(config, &c->cfg, err, errlen);
    if (rc < 0)
        return rc;
    if ((c->cfg.shards > 0) != kind->group) {
        odbc_leader__errf(err, errlen, "%s", kind->wrong);
        return ODBC_LEADER_ECONFIG;
    }
    choose_id(c);
    rc = odbc_leader__db_create(&c->db, &c->cfg, c->id, &c->log);
    if (rc < 0) {
        odbc_leader__errf(err, errlen, "out of memory");
        return rc;
    }
    return kind->connect(c->db, err, errlen);
}

/* See handle.h. */
int odbc_leader__handle_create(struct odbc_leader__handle **out, size_t size,
                               const char *config,
                               const struct odbc_leader_callbacks *cb,
                               const struct odbc_leader__handle_kind *kind,
                               char *err, size_t errlen) {
    struct odbc_leader__handle *c = calloc(1, size);
    int rc;

    *out = NULL;
    if (c == NULL) {
        odbc_leader__errf(err, errlen, "out of memory");
        return ODBC_LEADER_ENOMEM;
    }
    rc = ready(c, config, cb, kind, err, errlen);
    if (rc < 0) {
        odbc_leader__handle_destroy(c);
        return rc;
    }
    *out = c;
    return 0;
}

void odbc_leader__handle_destroy(struct odbc_leader__handle *c) {
    if (c == NULL)
        return;
    odbc_leader__db_destroy(c->db);
    odbc_leader__config_free(&c->cfg);
    odbc_leader__schedules_free(&c->schedules);
    free(c);
}

void odbc_leader__handle_candidate(const struct odbc_leader__handle *c,
                                   struct odbc_leader__candidate_conf *out) {
    memset(out, 0, sizeof(*out));
    out->log = &c->log;
    out->cb = &c->cb;
    out->id = c->id;
    out->ttl_ms = c->cfg.ttl_ms;
    out->renew_ms = c->cfg.renew_ms;
    out->margin_ms = c->cfg.margin_ms;
#ifdef ODBC_LEADER_TEST_HOOKS
    out->test_trust_extra_ms = c->cfg.test_trust_extra_ms;
#endif
}

int odbc_leader__handle_clear(struct odbc_leader__handle *c) {
    if (c == NULL)
        return 0;
    odbc_leader__db_clear_diag(c->db);
    return 1;
}

/* See handle.h. */
int odbc_leader__handle_note(struct odbc_leader__handle *c, int rc) {
    struct odbc_leader_error_info *last;
    struct odbc_leader__diag d;

    if (c == NULL || rc >= 0 || rc == ODBC_LEADER_EBACKOFF)
        return rc;
    last = &c->last;
    odbc_leader__db_diag(c->db, &d);
    memset(last, 0, sizeof(*last));
    last->code = rc;
    last->native = d.native;
    memcpy(last->sqlstate, d.sqlstate, sizeof(last->sqlstate));
    snprintf(last->message, sizeof(last->message), "%s",
             d.sqlstate[0] != '\0' || d.message[0] != '\0'
                 ? d.message
                 : odbc_leader_strerror(rc));
    last->error_class = d.errclass == ODBC_LEADER__ERR_TRANSIENT
                            ? ODBC_LEADER_CLASS_TRANSIENT
                            : odbc_leader__error_class_refined(rc, d.sqlstate);
    return rc;
}

int odbc_leader__handle_last_error(const struct odbc_leader__handle *c,
                                   struct odbc_leader_error_info *out) {
    if (c == NULL || out == NULL)
        return ODBC_LEADER_EINVAL;
    *out = c->last;
    return c->last.code;
}

/* Records rc with message msg (borrowed) as c's last error, for a
 * failure without the driver. Returns rc. */
static int failed_with(struct odbc_leader__handle *c, int rc, const char *msg) {
    struct odbc_leader_error_info *last = &c->last;

    memset(last, 0, sizeof(*last));
    last->code = rc;
    last->error_class = odbc_leader_error_class(rc);
    snprintf(last->message, sizeof(last->message), "%s", msg);
    return rc;
}

int odbc_leader__handle_fence(struct odbc_leader__handle *c, char *out,
                              size_t len) {
    const struct odbc_leader__dialect *d;
    char err[sizeof(c->last.message)] = "the dialect is not chosen yet: the "
                                        "handle never connected";
    int rc = ODBC_LEADER_ECONNECT;

    if (c == NULL || (out == NULL && len > 0))
        return ODBC_LEADER_EINVAL;
    d = odbc_leader__db_dialect(c->db);
    if (d != NULL)
        rc = odbc_leader__fence_sql(d, out, len, err, sizeof(err));
    return rc < 0 ? failed_with(c, rc, err) : rc;
}

int odbc_leader__handle_set_schedule(struct odbc_leader__handle *c,
                                     const char *job, const char *expr,
                                     const char *tz, const char *engine) {
    char identity[ODBC_LEADER__SCHEDULE_MAX + 1];
    char err[sizeof(c->last.message)];
    int rc;

    if (!odbc_leader__valid_name(job))
        return failed_with(c, ODBC_LEADER_EINVAL, "bad job name");
    if (expr == NULL)
        return odbc_leader__schedules_set(&c->schedules, job, NULL);
    rc = odbc_leader__schedule_identity(expr, tz, engine, identity, err,
                                        sizeof(err));
    if (rc == 0)
        rc = odbc_leader__schedules_set(&c->schedules, job, identity);
    if (rc == ODBC_LEADER_ENOMEM)
        snprintf(err, sizeof(err), "%s", odbc_leader_strerror(rc));
    if (rc < 0)
        return failed_with(c, rc, err);
    odbc_leader__logf(&c->log, LOG_INFO, "job %s: fires computed as \"%s\"",
                      job, identity);
    return 0;
}

int odbc_leader__valid_fire(const char *job, int64_t fire_ms) {
    return odbc_leader__valid_name(job) && fire_ms >= 0;
}

/* One try of a claim for term in namespace ns (NULL: the handle's own):
 * a first (first 0) or the one more after a first that failed with
 * first. Returns what the claim returns; a failure has gone through
 * ops->failed. */
static int claim_try(struct odbc_leader__handle *c,
                     const struct odbc_leader__claim_ops *ops, const char *ns,
                     int64_t term, const struct odbc_leader__claim_req *req,
                     int first) {
    const char *identity = odbc_leader__schedules_get(&c->schedules, req->job);
    int rc = ops->connect(c);

    if (rc == 0) {
        if (ns != NULL)
            odbc_leader__db_set_ns(c->db, ns);
        if (identity != NULL && req->fire_ms > 0 && !c->cfg.test_no_schedule)
            rc = odbc_leader__db_schedule_check(c->db, req->job, identity);
        if (rc == 0)
            rc = first == 0
                     ? odbc_leader__db_claim(c->db, term, req->job,
                                             req->fire_ms, req->max_attempts,
                                             req->may_take, req->out)
                     : odbc_leader__db_claim_again(
                           c->db, term, req->job, req->fire_ms,
                           req->max_attempts, req->out, first);
        if (ns != NULL)
            odbc_leader__db_set_ns(c->db, c->cfg.ns);
    }
    return rc < 0 ? ops->failed(c, rc) : rc;
}

/* See handle.h. */
int odbc_leader__handle_claim(struct odbc_leader__handle *c,
                              const struct odbc_leader__claim_ops *ops,
                              const char *ns,
                              const struct odbc_leader__claim_req *req) {
    int64_t term = ops->term(c, req->job);
    int first;

    odbc_leader__claim_out(req->out, NULL);
    if (term == 0)
        return ODBC_LEADER_ENOTLEADER;
    first = claim_try(c, ops, ns, term, req, 0);
    if (first >= 0 || !odbc_leader__db_claim_retryable(c->db, first) ||
        ops->term(c, req->job) != term)
        return first;
    return claim_try(c, ops, ns, term, req, first);
}
