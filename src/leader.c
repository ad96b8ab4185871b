/* SPDX-License-Identifier: MIT */
/*
 * leader.c: the public handle of one namespace, odbc_leader_t: the
 * handle core (handle.c: configuration, ODBC port, last error) and the
 * elector (elector.c), to which it forwards the public calls. group.c is
 * the same for a group of shards.
 */
#include <build_config.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "catchup.h"
#include "clock.h"
#include "config.h"
#include "db.h"
#include "db_group.h"
#include "db_lease.h"
#include "db_ledger.h"
#include "db_lifecycle.h"
#include "db_schedule.h"
#include "elector.h"
#include "error.h"
#include "handle.h"
#include "log.h"
#include "offers.h"
#include "shard.h"

struct odbc_leader {
    struct odbc_leader__handle c; /* first: handle.c's core */
    struct odbc_leader__elector el;
    int64_t next_gc_ns; /* CLOCK_BOOTTIME: the leader's next fire_gc */
    struct odbc_leader__offers offers; /* what the ticks learned */
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
    int64_t ms = h->c.cfg.follower_wait_ms;
    int64_t cap = h->c.cfg.stmt_timeout_ms - WAIT_TIMEOUT_ROOM_MS;

    if (ms == 0 || !odbc_leader__db_has_wait(h->c.db))
        return 0;
    if (ms > cap)
        ms = cap;
    if (ms < WAIT_MIN_MS) {
        odbc_leader__logf(&h->c.log, LOG_INFO,
                          "LeaderStatementTimeout (%lld ms) leaves no room "
                          "for a follower wait: followers poll",
                          (long long)h->c.cfg.stmt_timeout_ms);
        return 0;
    }
    return ms;
}

/* A configuration for this kind of handle. */
static const struct odbc_leader__handle_kind single = {
    0,
    "LeaderShards: a group of shards needs odbc_leader_group_create(), not "
    "odbc_leader_create()",
    odbc_leader__db_connect,
};

/* Logs what the test-only settings in ec break (test hooks only). */
static void warn_test_settings(const odbc_leader_t *h,
                               const struct odbc_leader__elector_conf *ec) {
#ifdef ODBC_LEADER_TEST_HOOKS
    if (ec->cand.test_trust_extra_ms > 0)
        odbc_leader__logf(&h->c.log, LOG_WARNING,
                          "LeaderTestTrustExtra=%lld: the trust window "
                          "outlives the lease; two leaders are possible "
                          "(test setting, never use it in production)",
                          (long long)ec->cand.test_trust_extra_ms);
    if (ec->test_no_watch)
        odbc_leader__logf(&h->c.log, LOG_WARNING,
                          "LeaderTestNoWatch=1: a held lease is taken on "
                          "database time alone; a forward step of the "
                          "database clock gives two leaders (test setting, "
                          "never use it in production)");
#else
    (void)h;
    (void)ec;
#endif
}

/* Starts h's elector on its connected port. */
static void start_elector(odbc_leader_t *h) {
    const struct odbc_leader__config *cfg = &h->c.cfg;
    struct odbc_leader__elector_conf ec;

    memset(&ec, 0, sizeof(ec));
    ec.ops = &odbc_leader__db_ops;
    ec.port = h->c.db;
    odbc_leader__handle_candidate(&h->c, &ec.cand);
#ifdef ODBC_LEADER_TEST_HOOKS
    ec.test_no_watch = cfg->test_no_watch;
#endif
    warn_test_settings(h, &ec);
    ec.wait_ms = follower_wait_ms(h);
    ec.report_resign = cfg->report_resign;
    ec.connected = 1;
    odbc_leader__elector_init(&h->el, &ec);
    odbc_leader__logf(&h->c.log, LOG_INFO,
                      "candidate %s in namespace %s (TTL %lld ms, renew "
                      "every %lld ms, margin %lld ms, follower wait %lld ms)",
                      h->c.id, cfg->ns, (long long)cfg->ttl_ms,
                      (long long)cfg->renew_ms, (long long)cfg->margin_ms,
                      (long long)ec.wait_ms);
}

int odbc_leader_create(odbc_leader_t **out, const char *config,
                       const struct odbc_leader_callbacks *cb, char *err,
                       size_t errlen) {
    struct odbc_leader__handle *c;
    int rc;

    if (out == NULL || config == NULL) {
        odbc_leader__errf(err, errlen, "no handle pointer or no config");
        return ODBC_LEADER_EINVAL;
    }
    *out = NULL;
    rc = odbc_leader__handle_create(&c, sizeof(odbc_leader_t), config, cb,
                                    &single, err, errlen);
    if (rc < 0)
        return rc;
    *out = (odbc_leader_t *)c;
    start_elector(*out);
    return 0;
}

/* After a ledger or retention statement failed with rc: a connection that
 * is gone (or in doubt) is opened again before the next statement, as
 * after a failed tick, instead of failing that statement too (the next
 * renewal, say). Returns rc. */
static int ledger_failed(odbc_leader_t *h, int rc) {
    if (odbc_leader__error_drops_connection(rc))
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
    int64_t every = h->c.cfg.fire_retention_ms * INT64_C(100000); /* 1/10 */
    int rc;

    if (now < h->next_gc_ns || !odbc_leader__db_has_ledger(h->c.db))
        return;
    if (every > GC_INTERVAL_MAX_NS)
        every = GC_INTERVAL_MAX_NS;
    h->next_gc_ns = now + every;
    rc = odbc_leader__db_fire_gc(h->c.db);
    if (rc > 0)
        odbc_leader__logf(&h->c.log, LOG_INFO,
                          "deleted %d fires finished more than %lld ms ago", rc,
                          (long long)h->c.cfg.fire_retention_ms);
    else if (rc < 0)
        odbc_leader__logf(&h->c.log, LOG_WARNING,
                          "deleting old fires failed: %s",
                          odbc_leader_strerror(rc));
    if (rc < 0 && ledger_failed(h, rc) < 0 && !h->el.connected)
        return;
    rc = odbc_leader__db_election_gc(h->c.db);
    if (rc > 0)
        odbc_leader__logf(&h->c.log, LOG_INFO,
                          "deleted %d terms of the election log that ended "
                          "more than %lld ms ago",
                          rc, (long long)h->c.cfg.election_retention_ms);
    else if (rc < 0)
        odbc_leader__logf(&h->c.log, LOG_WARNING,
                          "deleting old terms of the election log failed: %s",
                          odbc_leader_strerror(rc));
    if (rc < 0)
        ledger_failed(h, rc);
}

/* After a tick (leads: it returned leader): the sweep of a new term and
 * the fires offered to it (offers.c). A failure is logged there and
 * tried again at the next tick, after a reconnect when it cost the
 * connection (ledger_failed). */
static void learn_offers(odbc_leader_t *h, int leads) {
    int64_t term =
        leads && h->el.connected ? odbc_leader__elector_term(&h->el) : 0;
    int rc = odbc_leader__offers_tick(&h->offers, h->c.db, &h->c.log, term);

    if (rc < 0)
        ledger_failed(h, rc);
}

/* After a tick: a handle that turned to transaction pooling at run time
 * (a transaction pooler found under LeaderPooler=auto, db_pooler.c) has no
 * follower wake-up any more, so its followers stop waiting and poll at
 * the lease's expiry, as under LeaderPooler=transaction from the start. */
static void sync_wait(odbc_leader_t *h) {
    if (h->el.wait_ns == 0 || odbc_leader__db_has_wait(h->c.db))
        return;
    h->el.wait_ns = 0;
    h->el.armed = 0;
    odbc_leader__logf(&h->c.log, LOG_INFO,
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
    learn_offers(h, rc > 0);
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
    return &h->c.cfg;
}

const char *odbc_leader_id(const odbc_leader_t *h) {
    return h != NULL ? h->c.id : NULL;
}

int odbc_leader__read_namespace(odbc_leader_t *h, const char *ns) {
    if (h == NULL || ns == NULL || !odbc_leader__valid_name(ns))
        return ODBC_LEADER_EINVAL;
    snprintf(h->c.cfg.ns, sizeof(h->c.cfg.ns), "%s", ns);
    odbc_leader__db_set_ns(h->c.db, ns);
    return 0;
}

const char *odbc_leader_namespace(const odbc_leader_t *h) {
    return h != NULL ? h->c.cfg.ns : NULL;
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
    rc = odbc_leader__db_connect(h->c.db, NULL, 0);
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
        rc = odbc_leader__db_read_lease(h->c.db, &res);
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

    return read_end(h, rc == 0 ? odbc_leader__db_candidates(h->c.db, fn, ctx)
                               : rc);
}

/* odbc_leader_list_shards() without the last-error bookkeeping. */
static int list_shards_call(odbc_leader_t *h, odbc_leader_shard_fn fn,
                            void *ctx) {
    int rc = read_begin(h);

    return read_end(h, rc == 0 ? odbc_leader__db_group_shards(h->c.db, fn, ctx)
                               : rc);
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
        rc = odbc_leader__db_request_resign(h->c.db, handoff ? to_id : NULL);
    if (rc < 0) {
        h->el.connected = 0;
        return rc;
    }
    return rc == 1 ? 0 : ODBC_LEADER_ENOLEADER;
}

/* The claim's ways into h (struct odbc_leader__claim_ops): the term the
 * elector trusts, its connection, ledger_failed(). */
static int64_t claim_term(struct odbc_leader__handle *c, const char *job) {
    (void)job;
    return odbc_leader__elector_leadership(&((odbc_leader_t *)c)->el, NULL);
}

static int claim_connect(struct odbc_leader__handle *c) {
    return connected((odbc_leader_t *)c);
}

static int claim_failed(struct odbc_leader__handle *c, int rc) {
    return ledger_failed((odbc_leader_t *)c, rc);
}

static const struct odbc_leader__claim_ops claim_ops = {
    claim_term,
    claim_connect,
    claim_failed,
};

/* odbc_leader_claim_fire() without the last-error bookkeeping (handle.c
 * tries once more after a passing failure). A key below 0 is a run-now's;
 * max_attempts below 1 is 1. */
static int claim_call(odbc_leader_t *h, const char *job, int64_t fire_ms,
                      int max_attempts, struct odbc_leader_claim *out) {
    struct odbc_leader__claim_req req = {job, fire_ms, max_attempts, 1, out};

    odbc_leader__claim_out(out, NULL);
    if (h == NULL || !odbc_leader__valid_name(job))
        return ODBC_LEADER_EINVAL;
    req.may_take = odbc_leader__offers_may_hold(
        &h->offers, odbc_leader__elector_term(&h->el), job, fire_ms);
    if (req.max_attempts < 1)
        req.max_attempts = 1;
    return odbc_leader__handle_claim(&h->c, &claim_ops, NULL, &req);
}

/* odbc_leader_finish_fire() (term 0: odbc_leader_finish()) without the
 * last-error bookkeeping. */
static int finish_call(odbc_leader_t *h, const char *job, int64_t fire_ms,
                       int64_t term, int status) {
    int rc;

    if (h == NULL || !odbc_leader__valid_name(job) || term < 0 ||
        (term == 0 && fire_ms < 0))
        return ODBC_LEADER_EINVAL;
    rc = connected(h);
    if (rc == 0)
        rc = odbc_leader__db_finish(h->c.db, job, fire_ms, term, status);
    return rc < 0 ? ledger_failed(h, rc) : 0;
}

/* odbc_leader_read_fire() and _ex() without the last-error bookkeeping:
 * fills size bytes of *out (read_fire: the members up to db_now_ms, since
 * a host built before the lifecycle passes a struct that ends there). */
static int read_fire_call(odbc_leader_t *h, const char *job, int64_t fire_ms,
                          struct odbc_leader_fire *out, size_t size) {
    struct odbc_leader_fire f;
    int rc;

    memset(&f, 0, sizeof(f));
    if (size > sizeof(f))
        size = sizeof(f);
    if (out != NULL)
        memset(out, 0, size);
    if (h == NULL || out == NULL || !odbc_leader__valid_name(job))
        return ODBC_LEADER_EINVAL;
    rc = connected(h);
    if (rc == 0)
        rc = odbc_leader__db_fire(h->c.db, job, fire_ms, &f);
    memcpy(out, &f, size);
    return rc < 0 ? ledger_failed(h, rc) : rc;
}

/* The calls of the fire lifecycle that need only a connection
 * (odbc_leader_pause_job, _trigger_job, _list_jobs), without the
 * last-error bookkeeping: what says which. */
struct jobs_req {
    enum {
        JOBS_PAUSE,
        JOBS_TRIGGER,
        JOBS_LIST,
        JOBS_RESCHEDULE,
        JOBS_SCHEDULES,
        JOBS_LAST_FIRE
    } what;
    const char *job; /* pause, trigger, reschedule: borrowed */
    int paused;
    int64_t *key;
    odbc_leader_job_fn fn;
    void *ctx;
    const char *identity;              /* reschedule: borrowed, or NULL */
    odbc_leader_schedule_fn sfn;       /* schedules */
    struct odbc_leader__last_fire *lf; /* last fire: the caller's */
};

static int plain_jobs_call(odbc_leader_t *h, const struct jobs_req *r);

/* Shard callback of jobs_call(): the group's size is the row count. */
static void count_shard(void *ctx, const struct odbc_leader_shard *s) {
    (void)ctx;
    (void)s;
}

/* Runs r in shard s of the group h's namespace names: the namespace
 * "NS/s". Returns what the odbc_leader__db_* call returns. */
static int shard_jobs_call(odbc_leader_t *h, const struct jobs_req *r,
                           uint32_t s) {
    char ns[ODBC_LEADER__NAME_MAX + 16];
    int rc;

    snprintf(ns, sizeof(ns), "%s/%u", h->c.cfg.ns, (unsigned)s);
    odbc_leader__db_set_ns(h->c.db, ns);
    rc = plain_jobs_call(h, r);
    odbc_leader__db_set_ns(h->c.db, h->c.cfg.ns);
    return rc;
}

/* Runs r in the group of shards shards (> 0) that h's namespace names,
 * whose jobs live in its shards (docs/lifecycle.md): a pause, a
 * reschedule or a catch-up's read in the job's shard, a list shard by
 * shard; a run-now is
 * refused (the shards take no offered fires). Returns what the
 * odbc_leader__db_* calls return (for a list, the rows' total). */
static int group_jobs_call(odbc_leader_t *h, const struct jobs_req *r,
                           uint32_t shards) {
    int rc, n = 0;

    if (r->what == JOBS_TRIGGER)
        return ODBC_LEADER_EGROUPOFFER;
    if (r->what == JOBS_PAUSE || r->what == JOBS_RESCHEDULE ||
        r->what == JOBS_LAST_FIRE)
        return shard_jobs_call(h, r, odbc_leader__shard_of(r->job, shards));
    for (uint32_t s = 0; s < shards; s++) {
        rc = shard_jobs_call(h, r, s);
        if (rc < 0)
            return rc;
        n += rc;
    }
    return n;
}

/* Runs r in h's own namespace. Returns what its odbc_leader__db_* call
 * returns. */
static int plain_jobs_call(odbc_leader_t *h, const struct jobs_req *r) {
    int rc = 0;

    switch (r->what) {
    case JOBS_PAUSE:
        rc = odbc_leader__db_pause(h->c.db, r->job, r->paused);
        break;
    case JOBS_TRIGGER:
        rc = odbc_leader__db_trigger(h->c.db, r->job, r->key);
        break;
    case JOBS_LIST:
        rc = odbc_leader__db_jobs(h->c.db, r->fn, r->ctx);
        break;
    case JOBS_RESCHEDULE:
        rc = odbc_leader__db_reschedule(h->c.db, r->job, r->identity);
        break;
    case JOBS_SCHEDULES:
        rc = odbc_leader__db_schedules(h->c.db, r->sfn, r->ctx);
        break;
    case JOBS_LAST_FIRE:
        rc = odbc_leader__db_last_fire(h->c.db, r->lf);
        break;
    }
    return rc;
}

/* Runs a struct jobs_req: in the handle's namespace, or in its shards
 * when it names a group. Returns what its odbc_leader__db_* call
 * returns. */
static int jobs_call(odbc_leader_t *h, const struct jobs_req *r) {
    int rc;

    if (h == NULL || ((r->what != JOBS_LIST && r->what != JOBS_SCHEDULES) &&
                      !odbc_leader__valid_name(r->job)))
        return ODBC_LEADER_EINVAL;
    rc = connected(h);
    if (rc == 0)
        rc = odbc_leader__db_group_shards(h->c.db, count_shard, NULL);
    if (rc > 0)
        rc = group_jobs_call(h, r, (uint32_t)rc);
    else if (rc == 0)
        rc = plain_jobs_call(h, r);
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
        rc = odbc_leader__db_fires(h->c.db, job, fn, ctx);
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
        rc = odbc_leader__db_elections(h->c.db, fn, ctx);
    return rc < 0 ? ledger_failed(h, rc) : rc;
}

/* ---- the public calls that can fail: each records its failure ---- */

/* Records a failed call's rc in h->c.last (handle.c); h may be NULL.
 * Returns rc. */
static int noted(odbc_leader_t *h, int rc) {
    return odbc_leader__handle_note(h != NULL ? &h->c : NULL, rc);
}

/* Before a call: 1 with h's last diagnostic forgotten, 0 when h is NULL. */
static int cleared(odbc_leader_t *h) {
    return odbc_leader__handle_clear(h != NULL ? &h->c : NULL);
}

int odbc_leader_tick(odbc_leader_t *h, uint32_t *next_tick_ms) {
    return noted(h,
                 cleared(h) ? tick_call(h, next_tick_ms) : ODBC_LEADER_EINVAL);
}

int odbc_leader_resign(odbc_leader_t *h) {
    return noted(h, cleared(h) ? resign_call(h) : ODBC_LEADER_EINVAL);
}

int odbc_leader_request_resign(odbc_leader_t *h, const char *to_id) {
    return noted(h, cleared(h) ? request_resign_call(h, to_id)
                               : ODBC_LEADER_EINVAL);
}

int odbc_leader_read_lease(odbc_leader_t *h, struct odbc_leader_lease *out) {
    return noted(h, cleared(h) ? read_lease_call(h, out) : ODBC_LEADER_EINVAL);
}

int odbc_leader_list_candidates(odbc_leader_t *h, odbc_leader_candidate_fn fn,
                                void *ctx) {
    return noted(h, cleared(h) ? list_candidates_call(h, fn, ctx)
                               : ODBC_LEADER_EINVAL);
}

int odbc_leader_list_shards(odbc_leader_t *h, odbc_leader_shard_fn fn,
                            void *ctx) {
    return noted(h, cleared(h) ? list_shards_call(h, fn, ctx)
                               : ODBC_LEADER_EINVAL);
}

int odbc_leader_claim(odbc_leader_t *h, const char *job, int64_t fire_ms) {
    int rc = ODBC_LEADER_EINVAL;

    if (cleared(h) && fire_ms >= 0)
        rc = claim_call(h, job, fire_ms, 1, NULL);
    return noted(h,
                 rc == ODBC_LEADER_CLAIM_PAUSED ? ODBC_LEADER_CLAIM_TAKEN : rc);
}

int odbc_leader_claim_fire(odbc_leader_t *h, const char *job, int64_t fire_ms,
                           int max_attempts, struct odbc_leader_claim *out) {
    return noted(h, cleared(h) ? claim_call(h, job, fire_ms, max_attempts, out)
                               : ODBC_LEADER_EINVAL);
}

int odbc_leader_finish(odbc_leader_t *h, const char *job, int64_t fire_ms,
                       int status) {
    return noted(h, cleared(h) && fire_ms >= 0
                        ? finish_call(h, job, fire_ms, 0, status)
                        : ODBC_LEADER_EINVAL);
}

int odbc_leader_finish_fire(odbc_leader_t *h, const char *job, int64_t fire_ms,
                            int64_t term, int status) {
    return noted(h, cleared(h) && term > 0
                        ? finish_call(h, job, fire_ms, term, status)
                        : ODBC_LEADER_EINVAL);
}

int odbc_leader_offers(odbc_leader_t *h, odbc_leader_fire_fn fn, void *ctx) {
    if (h == NULL)
        return ODBC_LEADER_EINVAL;
    return odbc_leader__offers_list(&h->offers,
                                    odbc_leader__elector_term(&h->el), fn, ctx);
}

int odbc_leader_pause_job(odbc_leader_t *h, const char *job, int paused) {
    struct jobs_req r = {.what = JOBS_PAUSE, .job = job, .paused = paused};

    return noted(h, cleared(h) ? jobs_call(h, &r) : ODBC_LEADER_EINVAL);
}

int odbc_leader_trigger_job(odbc_leader_t *h, const char *job, int64_t *key) {
    struct jobs_req r = {.what = JOBS_TRIGGER, .job = job, .key = key};

    if (key != NULL)
        *key = 0;
    return noted(h, cleared(h) ? jobs_call(h, &r) : ODBC_LEADER_EINVAL);
}

int odbc_leader_list_jobs(odbc_leader_t *h, odbc_leader_job_fn fn, void *ctx) {
    struct jobs_req r = {.what = JOBS_LIST, .fn = fn, .ctx = ctx};

    return noted(h, cleared(h) ? jobs_call(h, &r) : ODBC_LEADER_EINVAL);
}

int odbc_leader_catch_up(odbc_leader_t *h, const char *job,
                         const struct odbc_leader_catch_up *p, int flags,
                         const int64_t *times, size_t n, size_t *first) {
    struct odbc_leader__last_fire lf = {.job = job};
    struct jobs_req r = {.what = JOBS_LAST_FIRE, .job = job, .lf = &lf};
    int rc;

    if (!cleared(h) || !odbc_leader__valid_name(job))
        return noted(h, ODBC_LEADER_EINVAL);
    /* the arguments first: no round trip for a call that cannot work */
    rc = odbc_leader_catch_up_select(p, flags, 0, 0, times, n, first);
    if (rc >= 0)
        rc = jobs_call(h, &r);
    if (rc >= 0)
        rc = odbc_leader_catch_up_select(p, flags, lf.now_ms, lf.last_ms, times,
                                         n, first);
    return noted(h, rc);
}

int odbc_leader_set_schedule(odbc_leader_t *h, const char *job,
                             const char *expr, const char *tz,
                             const char *engine) {
    if (!cleared(h))
        return ODBC_LEADER_EINVAL;
    return odbc_leader__handle_set_schedule(&h->c, job, expr, tz, engine);
}

int odbc_leader_reschedule_job(odbc_leader_t *h, const char *job,
                               const char *identity) {
    struct jobs_req r = {
        .what = JOBS_RESCHEDULE, .job = job, .identity = identity};

    if (identity != NULL &&
        (identity[0] == '\0' || strlen(identity) > ODBC_LEADER__SCHEDULE_MAX))
        return noted(h, ODBC_LEADER_EINVAL);
    return noted(h, cleared(h) ? jobs_call(h, &r) : ODBC_LEADER_EINVAL);
}

int odbc_leader_list_schedules(odbc_leader_t *h, odbc_leader_schedule_fn fn,
                               void *ctx) {
    struct jobs_req r = {.what = JOBS_SCHEDULES, .sfn = fn, .ctx = ctx};

    return noted(h, cleared(h) ? jobs_call(h, &r) : ODBC_LEADER_EINVAL);
}

int odbc_leader_fence_sql(odbc_leader_t *h, char *out, size_t len) {
    return odbc_leader__handle_fence(h != NULL ? &h->c : NULL, out, len);
}

int odbc_leader_read_fire(odbc_leader_t *h, const char *job, int64_t fire_ms,
                          struct odbc_leader_fire *out) {
    return noted(h,
                 cleared(h) && fire_ms >= 0
                     ? read_fire_call(h, job, fire_ms, out,
                                      offsetof(struct odbc_leader_fire, state))
                     : ODBC_LEADER_EINVAL);
}

int odbc_leader_read_fire_ex(odbc_leader_t *h, const char *job, int64_t fire_ms,
                             struct odbc_leader_fire *out, size_t out_size) {
    return noted(h, cleared(h) ? read_fire_call(h, job, fire_ms, out, out_size)
                               : ODBC_LEADER_EINVAL);
}

int odbc_leader_list_fires(odbc_leader_t *h, const char *job,
                           odbc_leader_fire_fn fn, void *ctx) {
    return noted(h, cleared(h) ? list_fires_call(h, job, fn, ctx)
                               : ODBC_LEADER_EINVAL);
}

int odbc_leader_list_elections(odbc_leader_t *h, odbc_leader_election_fn fn,
                               void *ctx) {
    return noted(h, cleared(h) ? list_elections_call(h, fn, ctx)
                               : ODBC_LEADER_EINVAL);
}

int odbc_leader_last_error(const odbc_leader_t *h,
                           struct odbc_leader_error_info *out) {
    return odbc_leader__handle_last_error(h != NULL ? &h->c : NULL, out);
}

void odbc_leader_destroy(odbc_leader_t *h) {
    if (h == NULL)
        return;
    odbc_leader__elector_shutdown(&h->el);
    odbc_leader__handle_destroy(&h->c);
}

const char *odbc_leader_version(void) { return ODBC_LEADER_VERSION; }
