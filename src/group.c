/* SPDX-License-Identifier: MIT */
/*
 * group.c: the public handle of a sharded group, odbc_leader_group_t: the
 * handle core (handle.c: configuration, ODBC port, last error) and the
 * group member (member.c), to which it forwards the public calls; a
 * fire's ledger rows go to the namespace of the job's shard. leader.c is
 * the same for one namespace.
 */
#include <build_config.h>

#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <uuid/uuid.h>

#include "catchup.h"
#include "config.h"
#include "db.h"
#include "db_group.h"
#include "db_ledger.h"
#include "db_lifecycle.h"
#include "error.h"
#include "handle.h"
#include "log.h"
#include "member.h"
#include "shard.h"

struct odbc_leader_group {
    struct odbc_leader__handle c; /* first: handle.c's core */
    struct odbc_leader__group_member_state m;
};

/* A configuration for this kind of handle. */
static const struct odbc_leader__handle_kind group = {
    1,
    "LeaderShards: a group needs its shard count (LeaderNamespace names "
    "the group)",
    odbc_leader__db_group_connect,
};

/* A random incarnation, not 0, below 2^62 (every dialect's BIGINT). */
static int64_t new_incarnation(void) {
    uuid_t u;
    uint64_t v = 0;

    uuid_generate_random(u);
    for (int i = 0; i < 8; i++)
        v = (v << 8) | u[i];
    v &= (UINT64_C(1) << 62) - 1;
    return v == 0 ? 1 : (int64_t)v;
}

/* Starts g's member on its connected port. Returns 0 or
 * ODBC_LEADER_ENOMEM with a message in err. */
static int start_member(odbc_leader_group_t *g, char *err, size_t errlen) {
    const struct odbc_leader__config *cfg = &g->c.cfg;
    struct odbc_leader__group_member_conf mc;

    memset(&mc, 0, sizeof(mc));
    mc.ops = &odbc_leader__db_group_ops;
    mc.port = g->c.db;
    odbc_leader__handle_candidate(&g->c, &mc.cand);
    mc.shards = (uint32_t)cfg->shards;
    mc.inc = new_incarnation();
    mc.new_inc = new_incarnation;
    mc.connected = 1;
    if (odbc_leader__group_member_init(&g->m, &mc) < 0) {
        odbc_leader__errf(err, errlen, "out of memory");
        return ODBC_LEADER_ENOMEM;
    }
    odbc_leader__logf(&g->c.log, LOG_INFO,
                      "member %s of group %s (%d shards; TTL %lld ms, renew "
                      "every %lld ms, margin %lld ms)",
                      g->c.id, cfg->ns, cfg->shards, (long long)cfg->ttl_ms,
                      (long long)cfg->renew_ms, (long long)cfg->margin_ms);
    return 0;
}

int odbc_leader_group_create(odbc_leader_group_t **out, const char *config,
                             const struct odbc_leader_callbacks *cb, char *err,
                             size_t errlen) {
    struct odbc_leader__handle *c;
    odbc_leader_group_t *g;
    int rc;

    if (out == NULL || config == NULL) {
        odbc_leader__errf(err, errlen, "no handle pointer or no config");
        return ODBC_LEADER_EINVAL;
    }
    *out = NULL;
    rc = odbc_leader__handle_create(&c, sizeof(*g), config, cb, &group, err,
                                    errlen);
    if (rc < 0)
        return rc;
    g = (odbc_leader_group_t *)c;
    rc = start_member(g, err, errlen);
    if (rc < 0) {
        odbc_leader__group_member_free(&g->m);
        odbc_leader__handle_destroy(c);
        return rc;
    }
    *out = g;
    return 0;
}

int odbc_leader_group_tick(odbc_leader_group_t *g, uint32_t *next_tick_ms) {
    if (!odbc_leader__handle_clear(g != NULL ? &g->c : NULL))
        return ODBC_LEADER_EINVAL;
    return odbc_leader__handle_note(
        &g->c, odbc_leader__group_member_tick(&g->m, next_tick_ms));
}

uint32_t odbc_leader_group_shards(const odbc_leader_group_t *g) {
    return g != NULL ? g->m.shards : 0;
}

uint32_t odbc_leader_shard_of(const char *key, uint32_t shards) {
    if (key == NULL || shards == 0)
        return 0;
    return odbc_leader__shard_of(key, shards);
}

int64_t odbc_leader_group_leadership(const odbc_leader_group_t *g,
                                     uint32_t shard, uint32_t *valid_for_ms) {
    if (g == NULL) {
        if (valid_for_ms != NULL)
            *valid_for_ms = 0;
        return 0;
    }
    return odbc_leader__group_member_leadership(&g->m, shard, valid_for_ms);
}

uint32_t odbc_leader_group_led(const odbc_leader_group_t *g) {
    uint32_t n = 0;

    for (uint32_t s = 0; g != NULL && s < g->m.shards; s++)
        n += odbc_leader__group_member_leadership(&g->m, s, NULL) != 0;
    return n;
}

const char *odbc_leader_group_id(const odbc_leader_group_t *g) {
    return g != NULL ? g->c.id : NULL;
}

/* ---- the fire ledger, in the namespace of each job's shard ---- */

/* Writes the namespace of job's shard, NAME/SHARD, into ns (n bytes). */
static void shard_ns(const odbc_leader_group_t *g, const char *job, char *ns,
                     size_t n) {
    uint32_t s = odbc_leader__shard_of(job, g->m.shards);

    /* fits: config.c checked the group's name against its shard count */
    snprintf(ns, n, "%s/%u", g->c.cfg.ns, (unsigned)s);
}

/* After a ledger call failed with rc: a lost connection is reopened at
 * the next tick. Records rc. Returns rc. */
static int ledger_failed(odbc_leader_group_t *g, int rc) {
    if (odbc_leader__error_drops_connection(rc)) {
        if (g->m.connected)
            odbc_leader__db_disconnect(g->c.db);
        g->m.connected = 0;
    }
    return odbc_leader__handle_note(&g->c, rc);
}

/* Opens the port's connection when it has none. Returns 0 or a negative
 * error. */
static int reopen(odbc_leader_group_t *g) {
    char err[256];
    int rc;

    if (g->m.connected)
        return 0;
    rc = odbc_leader__db_group_connect(g->c.db, err, sizeof(err));
    if (rc < 0)
        return rc;
    g->m.connected = 1;
    return 0;
}

/* The claim's ways into g (struct odbc_leader__claim_ops): the term of
 * the job's shard, reopen(), ledger_failed(). */
static int64_t claim_term(struct odbc_leader__handle *c, const char *job) {
    const odbc_leader_group_t *g = (const odbc_leader_group_t *)c;

    return odbc_leader__group_member_leadership(
        &g->m, odbc_leader__shard_of(job, g->m.shards), NULL);
}

static int claim_connect(struct odbc_leader__handle *c) {
    return reopen((odbc_leader_group_t *)c);
}

static int claim_failed(struct odbc_leader__handle *c, int rc) {
    return ledger_failed((odbc_leader_group_t *)c, rc);
}

static const struct odbc_leader__claim_ops claim_ops = {
    claim_term,
    claim_connect,
    claim_failed,
};

int odbc_leader_group_claim_fire(odbc_leader_group_t *g, const char *job,
                                 int64_t fire_ms, int max_attempts,
                                 struct odbc_leader_claim *out) {
    char ns[ODBC_LEADER__NAME_MAX + 16];
    struct odbc_leader__claim_req req = {job, fire_ms, 1, 0, out};

    (void)max_attempts; /* at most once: the shards take no offered fires */
    odbc_leader__claim_out(out, NULL);
    if (g == NULL || !odbc_leader__valid_name(job))
        return ODBC_LEADER_EINVAL;
    odbc_leader__handle_clear(&g->c);
    if (fire_ms < 0)
        return odbc_leader__handle_note(&g->c, ODBC_LEADER_EGROUPOFFER);
    shard_ns(g, job, ns, sizeof(ns));
    /* a try that fails for a passing reason is made once more at once
     * while the shard's term still leads here (handle.c) */
    return odbc_leader__handle_claim(&g->c, &claim_ops, ns, &req);
}

/* As odbc_leader_claim(): odbc_leader_group_claim_fire() for a nominal
 * time, a paused job's fire answering "already claimed". */
int odbc_leader_group_claim(odbc_leader_group_t *g, const char *job,
                            int64_t fire_ms) {
    int rc;

    if (fire_ms < 0)
        return ODBC_LEADER_EINVAL;
    rc = odbc_leader_group_claim_fire(g, job, fire_ms, 1, NULL);
    return rc == ODBC_LEADER_CLAIM_PAUSED ? ODBC_LEADER_CLAIM_TAKEN : rc;
}

/* A write of the ledger in job's shard: the outcome of a fire, or a
 * pause. */
enum shard_write { SHARD_FINISH, SHARD_PAUSE };

/* Runs w for job in the namespace of its shard, after reopening a lost
 * connection: the finish of fire_ms with status value, or the pause
 * (value 1) or resume (0) of job. Returns 0 or a negative error (noted
 * in the last error). job is borrowed. */
static int in_shard(odbc_leader_group_t *g, enum shard_write w, const char *job,
                    int64_t fire_ms, int value) {
    char ns[ODBC_LEADER__NAME_MAX + 16];
    int rc;

    odbc_leader__handle_clear(&g->c);
    rc = reopen(g);
    if (rc < 0)
        return ledger_failed(g, rc);
    shard_ns(g, job, ns, sizeof(ns));
    odbc_leader__db_set_ns(g->c.db, ns);
    rc = w == SHARD_FINISH
             ? odbc_leader__db_finish(g->c.db, job, fire_ms, 0, value)
             : odbc_leader__db_pause(g->c.db, job, value);
    odbc_leader__db_set_ns(g->c.db, g->c.cfg.ns);
    return rc < 0 ? ledger_failed(g, rc) : 0;
}

int odbc_leader_group_pause_job(odbc_leader_group_t *g, const char *job,
                                int paused) {
    if (g == NULL || !odbc_leader__valid_name(job))
        return ODBC_LEADER_EINVAL;
    return in_shard(g, SHARD_PAUSE, job, 0, paused);
}

int odbc_leader_group_finish(odbc_leader_group_t *g, const char *job,
                             int64_t fire_ms, int status) {
    if (g == NULL || !odbc_leader__valid_fire(job, fire_ms))
        return ODBC_LEADER_EINVAL;
    return in_shard(g, SHARD_FINISH, job, fire_ms, status);
}

int odbc_leader_group_set_schedule(odbc_leader_group_t *g, const char *job,
                                   const char *expr, const char *tz,
                                   const char *engine) {
    if (!odbc_leader__handle_clear(g != NULL ? &g->c : NULL))
        return ODBC_LEADER_EINVAL;
    return odbc_leader__handle_set_schedule(&g->c, job, expr, tz, engine);
}

int odbc_leader_group_catch_up(odbc_leader_group_t *g, const char *job,
                               const struct odbc_leader_catch_up *p, int flags,
                               const int64_t *times, size_t n, size_t *first) {
    char ns[ODBC_LEADER__NAME_MAX + 16];
    struct odbc_leader__last_fire lf = {.job = job};
    int rc;

    if (g == NULL || !odbc_leader__valid_name(job))
        return ODBC_LEADER_EINVAL;
    odbc_leader__handle_clear(&g->c);
    /* the arguments first: no round trip for a call that cannot work */
    rc = odbc_leader_catch_up_select(p, flags, 0, 0, times, n, first);
    if (rc < 0)
        return odbc_leader__handle_note(&g->c, rc);
    rc = reopen(g);
    if (rc == 0) {
        shard_ns(g, job, ns, sizeof(ns));
        odbc_leader__db_set_ns(g->c.db, ns);
        rc = odbc_leader__db_last_fire(g->c.db, &lf);
        odbc_leader__db_set_ns(g->c.db, g->c.cfg.ns);
    }
    if (rc < 0)
        return ledger_failed(g, rc);
    return odbc_leader_catch_up_select(p, flags, lf.now_ms, lf.last_ms, times,
                                       n, first);
}

int odbc_leader_group_fence_sql(odbc_leader_group_t *g, char *out, size_t len) {
    return odbc_leader__handle_fence(g != NULL ? &g->c : NULL, out, len);
}

int odbc_leader_group_last_error(const odbc_leader_group_t *g,
                                 struct odbc_leader_error_info *out) {
    return odbc_leader__handle_last_error(g != NULL ? &g->c : NULL, out);
}

void odbc_leader_group_destroy(odbc_leader_group_t *g) {
    if (g == NULL)
        return;
    odbc_leader__group_member_leave(&g->m);
    odbc_leader__group_member_free(&g->m);
    odbc_leader__handle_destroy(&g->c);
}
