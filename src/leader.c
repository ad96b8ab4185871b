/* SPDX-License-Identifier: MIT */
/*
 * leader.c: the public handle of libodbcleader. It owns the parsed
 * configuration, the ODBC port and the elector, and forwards the public
 * calls to them.
 */
#include <build_config.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <uuid/uuid.h>

#include "clock.h"
#include "config.h"
#include "db.h"
#include "elector.h"
#include "error.h"
#include "group.h"
#include "handle.h"
#include "log.h"

struct odbc_leader {
    struct odbc_leader__config cfg;
    struct odbc_leader__log log;
    char id[ODBC_LEADER__NAME_MAX + 1];
    struct odbc_leader__db *db;
    struct odbc_leader__elector el;
    int64_t next_gc_ns; /* CLOCK_BOOTTIME: the leader's next fire_gc */
    struct odbc_leader_callbacks cb;    /* the host's, at the library's size */
    struct odbc_leader_error_info last; /* odbc_leader_last_error() */
};

/* The leader deletes expired fires at most this often, and at least ten
 * times per retention period. */
#define GC_INTERVAL_MAX_NS (60 * INT64_C(1000000000))

/* Room left between a follower's wait and the statement timeout, so the
 * wait's own budget always ends it first. */
#define WAIT_TIMEOUT_ROOM_MS 250
/* Shorter waits are not worth a round trip. */
#define WAIT_MIN_MS 50

/* Returns the follower wait budget for h's connected dialect: 0 when the
 * dialect has no wait statement or LeaderFollowerWait=0, else
 * LeaderFollowerWait capped below the statement timeout. */
static int64_t follower_wait_ms(const odbc_leader_t *h) {
    int64_t ms = h->cfg.follower_wait_ms;
    int64_t cap = h->cfg.stmt_timeout_ms - WAIT_TIMEOUT_ROOM_MS;

    if (ms == 0 || !odbc_leader__db_has_wait(h->db))
        return 0;
    if (ms > cap)
        ms = cap;
    if (ms < WAIT_MIN_MS) {
        odbc_leader__logf(&h->log, LOG_INFO,
                          "LeaderStatementTimeout (%lld ms) leaves no room "
                          "for a follower wait: followers poll",
                          (long long)h->cfg.stmt_timeout_ms);
        return 0;
    }
    return ms;
}

int odbc_leader_create(odbc_leader_t **out, const char *config,
                       const struct odbc_leader_callbacks *cb, char *err,
                       size_t errlen) {
    struct odbc_leader__elector_conf ec;
    odbc_leader_t *h = NULL;
    int rc;

    if (out == NULL || config == NULL) {
        odbc_leader__errf(err, errlen, "no handle pointer or no config");
        return ODBC_LEADER_EINVAL;
    }
    *out = NULL;
    h = calloc(1, sizeof(*h));
    if (h == NULL) {
        odbc_leader__errf(err, errlen, "out of memory");
        return ODBC_LEADER_ENOMEM;
    }
    rc = odbc_leader__copy_callbacks(&h->cb, cb, err, errlen);
    if (rc < 0)
        goto fail;
    h->log.fn = h->cb.log;
    h->log.ctx = h->cb.ctx;
    rc = odbc_leader__config_parse(config, &h->cfg, err, errlen);
    if (rc < 0)
        goto fail;
    if (h->cfg.shards > 0) {
        odbc_leader__errf(err, errlen,
                          "LeaderShards: a group of shards needs "
                          "odbc_leader_group_create(), not "
                          "odbc_leader_create()");
        rc = ODBC_LEADER_ECONFIG;
        goto fail;
    }
    if (h->cfg.id[0] != '\0') {
        memcpy(h->id, h->cfg.id, sizeof(h->id));
    } else {
        uuid_t u;

        uuid_generate_random(u);
        uuid_unparse_lower(u, h->id);
    }
    rc = odbc_leader__db_create(&h->db, &h->cfg, h->id, &h->log);
    if (rc < 0) {
        odbc_leader__errf(err, errlen, "out of memory");
        goto fail;
    }
    rc = odbc_leader__db_connect(h->db, err, errlen);
    if (rc < 0)
        goto fail;
    memset(&ec, 0, sizeof(ec));
    ec.ops = &odbc_leader__db_ops;
    ec.port = h->db;
    ec.log = &h->log;
    ec.cb = &h->cb;
    ec.id = h->id;
    ec.ttl_ms = h->cfg.ttl_ms;
    ec.renew_ms = h->cfg.renew_ms;
    ec.margin_ms = h->cfg.margin_ms;
#ifdef ODBC_LEADER_TEST_HOOKS
    ec.test_trust_extra_ms = h->cfg.test_trust_extra_ms;
    if (ec.test_trust_extra_ms > 0)
        odbc_leader__logf(&h->log, LOG_WARNING,
                          "LeaderTestTrustExtra=%lld: the trust window "
                          "outlives the lease; two leaders are possible "
                          "(test setting, never use it in production)",
                          (long long)ec.test_trust_extra_ms);
    ec.test_no_watch = h->cfg.test_no_watch;
    if (ec.test_no_watch)
        odbc_leader__logf(&h->log, LOG_WARNING,
                          "LeaderTestNoWatch=1: a held lease is taken on "
                          "database time alone; a forward step of the "
                          "database clock gives two leaders (test setting, "
                          "never use it in production)");
#endif
    ec.wait_ms = follower_wait_ms(h);
    ec.report_resign = h->cfg.report_resign;
    ec.connected = 1;
    odbc_leader__elector_init(&h->el, &ec);
    odbc_leader__logf(&h->log, LOG_INFO,
                      "candidate %s in namespace %s (TTL %lld ms, renew "
                      "every %lld ms, margin %lld ms, follower wait %lld ms)",
                      h->id, h->cfg.ns, (long long)h->cfg.ttl_ms,
                      (long long)h->cfg.renew_ms, (long long)h->cfg.margin_ms,
                      (long long)ec.wait_ms);
    *out = h;
    return 0;
fail:
    odbc_leader__db_destroy(h->db);
    odbc_leader__config_free(&h->cfg);
    free(h);
    return rc;
}

/* After a ledger or retention statement failed with rc: a connection that
 * is gone (or in doubt) is opened again before the next statement, as
 * after a failed tick, instead of failing that statement too (the next
 * renewal, say). Returns rc. */
static int ledger_failed(odbc_leader_t *h, int rc) {
    if (rc == ODBC_LEADER_ECONNLOST || rc == ODBC_LEADER_EUNKNOWN ||
        rc == ODBC_LEADER_ECONNECT || rc == ODBC_LEADER_EREADONLY)
        h->el.connected = 0;
    return rc;
}

/* After a tick that leads: runs the retention of the fire ledger and of
 * the election log when it is due (every tenth of LeaderFireRetention, at
 * most GC_INTERVAL_MAX_NS apart). A failure is logged and tried again at the
 * next interval; after a lost connection (or a transaction pooler found on
 * the way, which ends the connection too) the rest waits for that interval
 * and the next tick connects again first (ledger_failed). */
static void collect_fires(odbc_leader_t *h) {
    int64_t now = odbc_leader__now_ns(NULL);
    int64_t every = h->cfg.fire_retention_ms * INT64_C(100000); /* 1/10 */
    int rc;

    if (now < h->next_gc_ns || !odbc_leader__db_has_ledger(h->db))
        return;
    if (every > GC_INTERVAL_MAX_NS)
        every = GC_INTERVAL_MAX_NS;
    h->next_gc_ns = now + every;
    rc = odbc_leader__db_fire_gc(h->db);
    if (rc > 0)
        odbc_leader__logf(&h->log, LOG_INFO,
                          "deleted %d fires finished more than %lld ms ago", rc,
                          (long long)h->cfg.fire_retention_ms);
    else if (rc < 0)
        odbc_leader__logf(&h->log, LOG_WARNING, "deleting old fires failed: %s",
                          odbc_leader_strerror(rc));
    if (rc < 0 && ledger_failed(h, rc) < 0 && !h->el.connected)
        return;
    rc = odbc_leader__db_election_gc(h->db);
    if (rc > 0)
        odbc_leader__logf(&h->log, LOG_INFO,
                          "deleted %d terms of the election log that ended "
                          "more than %lld ms ago",
                          rc, (long long)h->cfg.election_retention_ms);
    else if (rc < 0)
        odbc_leader__logf(&h->log, LOG_WARNING,
                          "deleting old terms of the election log failed: %s",
                          odbc_leader_strerror(rc));
    if (rc < 0)
        ledger_failed(h, rc);
}

/* After a tick: a handle that turned to transaction pooling at run time
 * (a transaction pooler found under LeaderPooler=auto, db.c) has no
 * follower wake-up any more, so its followers stop waiting and poll at
 * the lease's expiry, as under LeaderPooler=transaction from the start. */
static void sync_wait(odbc_leader_t *h) {
    if (h->el.wait_ns == 0 || odbc_leader__db_has_wait(h->db))
        return;
    h->el.wait_ns = 0;
    h->el.armed = 0;
    odbc_leader__logf(&h->log, LOG_INFO,
                      "follower wake-up off: followers poll at the lease's "
                      "expiry");
}

/* odbc_leader_tick() without the last-error bookkeeping. */
static int tick_call(odbc_leader_t *h, uint32_t *next_tick_ms) {
    int rc;

    if (h == NULL)
        return ODBC_LEADER_EINVAL;
    rc = odbc_leader__elector_tick(&h->el, next_tick_ms);
    sync_wait(h);
    if (rc > 0)
        collect_fires(h);
    return rc;
}

int odbc_leader_is_leader(const odbc_leader_t *h) {
    return h != NULL && odbc_leader__elector_is_leader(&h->el);
}

int64_t odbc_leader_term(const odbc_leader_t *h) {
    return h != NULL ? odbc_leader__elector_term(&h->el) : 0;
}

int64_t odbc_leader_clock_steps(const odbc_leader_t *h, int64_t *last_step_ms) {
    if (h == NULL) {
        if (last_step_ms != NULL)
            *last_step_ms = 0;
        return 0;
    }
    return odbc_leader__elector_clock_steps(&h->el, last_step_ms);
}

int64_t odbc_leader_leadership(const odbc_leader_t *h, uint32_t *valid_for_ms) {
    if (h == NULL) {
        if (valid_for_ms != NULL)
            *valid_for_ms = 0;
        return 0;
    }
    return odbc_leader__elector_leadership(&h->el, valid_for_ms);
}

const struct odbc_leader__config *
odbc_leader__config_of(const odbc_leader_t *h) {
    return &h->cfg;
}

const char *odbc_leader_id(const odbc_leader_t *h) {
    return h != NULL ? h->id : NULL;
}

int odbc_leader__read_namespace(odbc_leader_t *h, const char *ns) {
    if (h == NULL || ns == NULL || !odbc_leader__valid_name(ns))
        return ODBC_LEADER_EINVAL;
    snprintf(h->cfg.ns, sizeof(h->cfg.ns), "%s", ns);
    odbc_leader__db_set_ns(h->db, ns);
    return 0;
}

const char *odbc_leader_namespace(const odbc_leader_t *h) {
    return h != NULL ? h->cfg.ns : NULL;
}

/* odbc_leader_resign() without the last-error bookkeeping. */
static int resign_call(odbc_leader_t *h) {
    if (h == NULL)
        return ODBC_LEADER_EINVAL;
    return odbc_leader__elector_resign(&h->el);
}

/* Connects first when the elector is between reconnects; returns 0 or a
 * negative error. */
static int connected(odbc_leader_t *h) {
    int rc;

    if (h->el.connected)
        return 0;
    rc = odbc_leader__db_connect(h->db, NULL, 0);
    if (rc == 0)
        h->el.connected = 1;
    return rc;
}

/* odbc_leader_read_lease() without the last-error bookkeeping. */
static int read_lease_call(odbc_leader_t *h, struct odbc_leader_lease *out) {
    struct odbc_leader__result res;
    int rc;

    if (h == NULL || out == NULL)
        return ODBC_LEADER_EINVAL;
    memset(out, 0, sizeof(*out));
    rc = connected(h);
    if (rc == 0)
        rc = odbc_leader__db_read_lease(h->db, &res);
    if (rc < 0) {
        h->el.connected = 0;
        return rc;
    }
    if (res.found) {
        memcpy(out->leader_id, res.leader_id, sizeof(out->leader_id));
        out->term = res.term;
        out->expires_at_ms = res.expires_at_ms;
        out->db_now_ms = res.now_ms;
    }
    return 0;
}

/* Connects h for a read of the tables. Returns 0 or a negative error. */
static int read_begin(odbc_leader_t *h) {
    return h == NULL ? ODBC_LEADER_EINVAL : connected(h);
}

/* After a read of the tables that returned rc: anything but a failed
 * statement makes the elector reconnect at its next tick. Returns rc. */
static int read_end(odbc_leader_t *h, int rc) {
    if (rc < 0 && rc != ODBC_LEADER_EDB && h != NULL)
        h->el.connected = 0;
    return rc;
}

/* odbc_leader_list_candidates() without the last-error bookkeeping. */
static int list_candidates_call(odbc_leader_t *h, odbc_leader_candidate_fn fn,
                                void *ctx) {
    int rc = read_begin(h);

    if (rc == 0)
        rc = odbc_leader__db_candidates(h->db, fn, ctx);
    return read_end(h, rc);
}

/* odbc_leader_list_shards() without the last-error bookkeeping. */
static int list_shards_call(odbc_leader_t *h, odbc_leader_shard_fn fn,
                            void *ctx) {
    int rc = read_begin(h);

    if (rc == 0)
        rc = odbc_leader__db_group_shards(h->db, fn, ctx);
    return read_end(h, rc);
}

struct wanted {
    const char *id; /* borrowed */
    int alive;
};

/* Candidate callback: notes whether the wanted id is among the living. */
static void find_candidate(void *ctx, const struct odbc_leader_candidate *c) {
    struct wanted *w = ctx;

    if (strcmp(c->id, w->id) == 0)
        w->alive = 1;
}

/* odbc_leader_request_resign() without the last-error bookkeeping. */
static int request_resign_call(odbc_leader_t *h, const char *to_id) {
    struct wanted w = {to_id, 0};
    int handoff = to_id != NULL && to_id[0] != '\0';
    int rc;

    if (h == NULL || (handoff && !odbc_leader__valid_name(to_id)))
        return ODBC_LEADER_EINVAL;
    if (handoff) {
        rc = list_candidates_call(h, find_candidate, &w);
        if (rc < 0)
            return rc;
        if (!w.alive)
            return ODBC_LEADER_ENOCANDIDATE;
    }
    rc = connected(h);
    if (rc == 0)
        rc = odbc_leader__db_request_resign(h->db, handoff ? to_id : NULL);
    if (rc < 0) {
        h->el.connected = 0;
        return rc;
    }
    return rc == 1 ? 0 : ODBC_LEADER_ENOLEADER;
}

/* 1 when job is a valid job name and fire_ms is not negative. */
static int valid_fire(const char *job, int64_t fire_ms) {
    return odbc_leader__valid_name(job) && fire_ms >= 0;
}

/* odbc_leader_claim() without the last-error bookkeeping. A try that
 * fails for a passing reason (a lost connection, a timeout) is made once
 * more at once, on a new connection when the old one is gone, while the
 * term still leads here (odbc_leader__db_claim_again says what a second
 * "already claimed" means). */
static int claim_call(odbc_leader_t *h, const char *job, int64_t fire_ms) {
    int64_t term;
    int rc, first;

    if (h == NULL || !valid_fire(job, fire_ms))
        return ODBC_LEADER_EINVAL;
    term = odbc_leader__elector_leadership(&h->el, NULL);
    if (term == 0)
        return ODBC_LEADER_ENOTLEADER;
    rc = connected(h);
    if (rc == 0)
        rc = odbc_leader__db_claim(h->db, term, job, fire_ms);
    if (rc >= 0)
        return rc;
    first = ledger_failed(h, rc);
    if (!odbc_leader__db_claim_retryable(h->db, first) ||
        odbc_leader__elector_leadership(&h->el, NULL) != term)
        return first;
    rc = connected(h);
    if (rc == 0)
        rc = odbc_leader__db_claim_again(h->db, term, job, fire_ms, first);
    return rc < 0 ? ledger_failed(h, rc) : rc;
}

/* odbc_leader_finish() without the last-error bookkeeping. */
static int finish_call(odbc_leader_t *h, const char *job, int64_t fire_ms,
                       int status) {
    int rc;

    if (h == NULL || !valid_fire(job, fire_ms))
        return ODBC_LEADER_EINVAL;
    rc = connected(h);
    if (rc == 0)
        rc = odbc_leader__db_finish(h->db, job, fire_ms, status);
    return rc < 0 ? ledger_failed(h, rc) : 0;
}

/* odbc_leader_read_fire() without the last-error bookkeeping. */
static int read_fire_call(odbc_leader_t *h, const char *job, int64_t fire_ms,
                          struct odbc_leader_fire *out) {
    int rc;

    if (out != NULL)
        memset(out, 0, sizeof(*out));
    if (h == NULL || out == NULL || !valid_fire(job, fire_ms))
        return ODBC_LEADER_EINVAL;
    rc = connected(h);
    if (rc == 0)
        rc = odbc_leader__db_fire(h->db, job, fire_ms, out);
    return rc < 0 ? ledger_failed(h, rc) : rc;
}

/* odbc_leader_list_fires() without the last-error bookkeeping. */
static int list_fires_call(odbc_leader_t *h, const char *job,
                           odbc_leader_fire_fn fn, void *ctx) {
    int rc;

    if (h == NULL ||
        (job != NULL && job[0] != '\0' && !odbc_leader__valid_name(job)))
        return ODBC_LEADER_EINVAL;
    rc = connected(h);
    if (rc == 0)
        rc = odbc_leader__db_fires(h->db, job, fn, ctx);
    return rc < 0 ? ledger_failed(h, rc) : rc;
}

/* odbc_leader_list_elections() without the last-error bookkeeping. */
static int list_elections_call(odbc_leader_t *h, odbc_leader_election_fn fn,
                               void *ctx) {
    int rc;

    if (h == NULL)
        return ODBC_LEADER_EINVAL;
    rc = connected(h);
    if (rc == 0)
        rc = odbc_leader__db_elections(h->db, fn, ctx);
    return rc < 0 ? ledger_failed(h, rc) : rc;
}

/* ---- the public calls that can fail: each records its failure ---- */

/* Records a failed call's rc in h->last (handle.c). Returns rc. */
static int noted(odbc_leader_t *h, int rc) {
    return odbc_leader__note_error(h->db, &h->last, rc);
}

int odbc_leader_tick(odbc_leader_t *h, uint32_t *next_tick_ms) {
    if (h == NULL)
        return ODBC_LEADER_EINVAL;
    odbc_leader__db_clear_diag(h->db);
    return noted(h, tick_call(h, next_tick_ms));
}

int odbc_leader_resign(odbc_leader_t *h) {
    if (h == NULL)
        return ODBC_LEADER_EINVAL;
    odbc_leader__db_clear_diag(h->db);
    return noted(h, resign_call(h));
}

int odbc_leader_request_resign(odbc_leader_t *h, const char *to_id) {
    if (h == NULL)
        return ODBC_LEADER_EINVAL;
    odbc_leader__db_clear_diag(h->db);
    return noted(h, request_resign_call(h, to_id));
}

int odbc_leader_read_lease(odbc_leader_t *h, struct odbc_leader_lease *out) {
    if (h == NULL)
        return ODBC_LEADER_EINVAL;
    odbc_leader__db_clear_diag(h->db);
    return noted(h, read_lease_call(h, out));
}

int odbc_leader_list_candidates(odbc_leader_t *h, odbc_leader_candidate_fn fn,
                                void *ctx) {
    if (h == NULL)
        return ODBC_LEADER_EINVAL;
    odbc_leader__db_clear_diag(h->db);
    return noted(h, list_candidates_call(h, fn, ctx));
}

int odbc_leader_list_shards(odbc_leader_t *h, odbc_leader_shard_fn fn,
                            void *ctx) {
    if (h == NULL)
        return ODBC_LEADER_EINVAL;
    odbc_leader__db_clear_diag(h->db);
    return noted(h, list_shards_call(h, fn, ctx));
}

int odbc_leader_claim(odbc_leader_t *h, const char *job, int64_t fire_ms) {
    if (h == NULL)
        return ODBC_LEADER_EINVAL;
    odbc_leader__db_clear_diag(h->db);
    return noted(h, claim_call(h, job, fire_ms));
}

int odbc_leader_finish(odbc_leader_t *h, const char *job, int64_t fire_ms,
                       int status) {
    if (h == NULL)
        return ODBC_LEADER_EINVAL;
    odbc_leader__db_clear_diag(h->db);
    return noted(h, finish_call(h, job, fire_ms, status));
}

int odbc_leader_read_fire(odbc_leader_t *h, const char *job, int64_t fire_ms,
                          struct odbc_leader_fire *out) {
    if (h == NULL)
        return ODBC_LEADER_EINVAL;
    odbc_leader__db_clear_diag(h->db);
    return noted(h, read_fire_call(h, job, fire_ms, out));
}

int odbc_leader_list_fires(odbc_leader_t *h, const char *job,
                           odbc_leader_fire_fn fn, void *ctx) {
    if (h == NULL)
        return ODBC_LEADER_EINVAL;
    odbc_leader__db_clear_diag(h->db);
    return noted(h, list_fires_call(h, job, fn, ctx));
}

int odbc_leader_list_elections(odbc_leader_t *h, odbc_leader_election_fn fn,
                               void *ctx) {
    if (h == NULL)
        return ODBC_LEADER_EINVAL;
    odbc_leader__db_clear_diag(h->db);
    return noted(h, list_elections_call(h, fn, ctx));
}

int odbc_leader_last_error(const odbc_leader_t *h,
                           struct odbc_leader_error_info *out) {
    if (h == NULL || out == NULL)
        return ODBC_LEADER_EINVAL;
    *out = h->last;
    return h->last.code;
}

void odbc_leader_destroy(odbc_leader_t *h) {
    if (h == NULL)
        return;
    odbc_leader__elector_shutdown(&h->el);
    odbc_leader__db_destroy(h->db);
    odbc_leader__config_free(&h->cfg);
    free(h);
}

const char *odbc_leader_version(void) { return ODBC_LEADER_VERSION; }
