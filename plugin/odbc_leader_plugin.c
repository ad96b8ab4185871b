/* SPDX-License-Identifier: MIT */
/*
 * odbc_leader_plugin.c: odbc_leader.so, the scheduler-plugin ABI of
 * leader_plugin.h implemented on libodbcleader. The library is linked in
 * statically and hidden: leader_plugin_entry is the only exported symbol.
 */
#include <build_config.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "leader_plugin.h"
#include "odbc_leader.h"

/* The delay tick asks for when the core named none: after a NULL inst, or
 * an error that left it 0 (the host must not spin). */
#define RETRY_MS 1000

/* One plugin instance: the library handle (of one namespace, h, or of a
 * group member, g: exactly one is set) and the host it reports to. */
struct instance {
    odbc_leader_t *h;
    odbc_leader_group_t *g;
    const struct leader_host *host; /* borrowed until shutdown */
};

static void forward_log(void *ctx, int level, const char *msg) {
    const struct leader_host *host = ctx;

    if (LEADER_HOST_HAS(host, log) && host->log != NULL)
        host->log(host->ctx, level, msg);
}

static void forward_change(void *ctx, int is_leader, int64_t term,
                           const char *leader_id) {
    const struct leader_host *host = ctx;

    if (LEADER_HOST_HAS(host, on_change) && host->on_change != NULL)
        host->on_change(host->ctx, is_leader, term, leader_id);
}

static void forward_shard(void *ctx, uint32_t shard, int is_leader,
                          int64_t term) {
    const struct leader_host *host = ctx;

    if (LEADER_HOST_HAS(host, on_shard_change) && host->on_shard_change != NULL)
        host->on_shard_change(host->ctx, shard, is_leader, term);
}

/* 1 when config sets LeaderShards (a key of the connection string; the
 * library itself then checks the value): the instance is a group member.
 * A DSN's odbc.ini cannot make one. */
static int wants_group(const char *config) {
    static const char key[] = "leadershards";
    const char *p = config;

    while (p != NULL && *p != '\0') {
        while (*p == ' ' || *p == ';')
            p++;
        if (strncasecmp(p, key, sizeof(key) - 1) == 0) {
            const char *q = p + sizeof(key) - 1;

            while (*q == ' ')
                q++;
            if (*q == '=')
                return 1;
        }
        p = strchr(p, ';');
    }
    return 0;
}

/* Creates an instance; returns 0 and *inst, or a negative
 * odbc_leader_error with a message in err. host is borrowed until
 * shutdown and may be NULL. */
static int plugin_init(const char *config, const struct leader_host *host,
                       void **inst, char *err, size_t errlen) {
    struct odbc_leader_callbacks cb = {0};
    struct instance *in;
    int rc;

    if (inst == NULL)
        return ODBC_LEADER_EINVAL;
    *inst = NULL;
    in = calloc(1, sizeof(*in));
    if (in == NULL)
        return ODBC_LEADER_ENOMEM;
    in->host = host;
    cb.struct_size = sizeof(cb);
    cb.ctx = (void *)host;
    cb.log = forward_log;
    cb.on_change = forward_change;
    cb.on_shard_change = forward_shard;
    if (config != NULL && wants_group(config))
        rc = odbc_leader_group_create(&in->g, config, &cb, err, errlen);
    else
        rc = odbc_leader_create(&in->h, config, &cb, err, errlen);
    if (rc < 0) {
        free(in);
        return rc;
    }
    *inst = in;
    return 0;
}

/*
 * One step of the handle or the group. Returns 0 follower, 1 leader (or
 * the handle's RESIGN_REQUESTED) or a negative error. *next_tick_ms (when
 * not NULL) is always written, so a host can sleep what it says: after an
 * error it is never 0 (RETRY_MS when the core named no delay), and a NULL
 * inst gets RETRY_MS too.
 */
static int plugin_tick(void *inst, uint32_t *next_tick_ms) {
    struct instance *in = inst;
    uint32_t next = RETRY_MS;
    int rc;

    if (in == NULL)
        rc = ODBC_LEADER_EINVAL;
    else if (in->h != NULL)
        rc = odbc_leader_tick(in->h, &next);
    else {
        rc = odbc_leader_group_tick(in->g, &next);
        rc = rc > 0 ? 1 : rc;
    }
    if (rc < 0 && next == 0)
        next = RETRY_MS;
    if (next_tick_ms != NULL)
        *next_tick_ms = next;
    return rc;
}

static int plugin_is_leader(const void *inst) {
    const struct instance *in = inst;

    if (in == NULL)
        return 0;
    return in->h != NULL ? odbc_leader_is_leader(in->h)
                         : odbc_leader_group_led(in->g) > 0;
}

static int64_t plugin_term(const void *inst) {
    const struct instance *in = inst;

    return in != NULL && in->h != NULL ? odbc_leader_term(in->h) : 0;
}

/* The ABI's code for the library's rc: its own for the refusals a host
 * tells apart by value (ENOTLEADER, ESCHEDULE), else rc. */
static int abi_code(int rc) {
    if (rc == ODBC_LEADER_ENOTLEADER)
        return LEADER_PLUGIN_ENOTLEADER;
    if (rc == ODBC_LEADER_ESCHEDULE)
        return LEADER_PLUGIN_ESCHEDULE;
    return rc;
}

/* The library's code for an ABI code (abi_code() backwards). */
static int lib_code(int rc) {
    if (rc == LEADER_PLUGIN_ENOTLEADER)
        return ODBC_LEADER_ENOTLEADER;
    if (rc == LEADER_PLUGIN_ESCHEDULE)
        return ODBC_LEADER_ESCHEDULE;
    return rc;
}

/* ABI 1.1: claim, mapping the library's refusals to the ABI's codes. */
static int plugin_claim(void *inst, const char *job, int64_t fire_ms) {
    struct instance *in = inst;
    int rc;

    if (in == NULL)
        return ODBC_LEADER_EINVAL;
    rc = in->h != NULL ? odbc_leader_claim(in->h, job, fire_ms)
                       : odbc_leader_group_claim(in->g, job, fire_ms);
    return abi_code(rc);
}

static int plugin_finish(void *inst, const char *job, int64_t fire_ms,
                         int status) {
    struct instance *in = inst;

    if (in == NULL)
        return ODBC_LEADER_EINVAL;
    return in->h != NULL
               ? odbc_leader_finish(in->h, job, fire_ms, status)
               : odbc_leader_group_finish(in->g, job, fire_ms, status);
}

static int64_t plugin_leadership(const void *inst, uint32_t *valid_for_ms) {
    const struct instance *in = inst;

    return odbc_leader_leadership(in != NULL ? in->h : NULL, valid_for_ms);
}

/* The library's messages plus the ABI's own codes. */
static const char *plugin_strerror(int rc) {
    if (rc == LEADER_PLUGIN_EABI)
        return "unsupported plugin ABI major version";
    return odbc_leader_strerror(lib_code(rc));
}

/* ABI 1.2: the candidate id, borrowed from the instance's handle. */
static const char *plugin_candidate_id(const void *inst) {
    const struct instance *in = inst;

    if (in == NULL)
        return NULL;
    return in->h != NULL ? odbc_leader_id(in->h) : odbc_leader_group_id(in->g);
}

/* ABI 1.2: the library's classes, which the ABI's share. */
static int plugin_error_class(int rc) {
    if (rc == LEADER_PLUGIN_EABI)
        return LEADER_PLUGIN_CLASS_FATAL;
    return odbc_leader_error_class(lib_code(rc));
}

/* ABI 1.2: the handle's last error, spread over the host's pointers (each
 * may be NULL). Returns its code. */
static int plugin_last_error(const void *inst, int *error_class, char *sqlstate,
                             long *native, char *msg, size_t msglen) {
    const struct instance *in = inst;
    struct odbc_leader_error_info e;

    if (in == NULL)
        return ODBC_LEADER_EINVAL;
    if (in->h != NULL)
        odbc_leader_last_error(in->h, &e);
    else
        odbc_leader_group_last_error(in->g, &e);
    if (error_class != NULL)
        *error_class = e.error_class;
    if (sqlstate != NULL)
        memcpy(sqlstate, e.sqlstate, sizeof(e.sqlstate));
    if (native != NULL)
        *native = e.native;
    if (msg != NULL && msglen > 0)
        snprintf(msg, msglen, "%s", e.message);
    return abi_code(e.code);
}

static void plugin_shutdown(void *inst) {
    struct instance *in = inst;

    if (in == NULL)
        return;
    odbc_leader_destroy(in->h);
    odbc_leader_group_destroy(in->g);
    free(in);
}

/* ABI 1.3: groups. */
static uint32_t plugin_shards(const void *inst) {
    const struct instance *in = inst;

    return in != NULL ? odbc_leader_group_shards(in->g) : 0;
}

static uint32_t plugin_shard_of(const void *inst, const char *key) {
    return odbc_leader_shard_of(key, plugin_shards(inst));
}

static int64_t plugin_shard_leadership(const void *inst, uint32_t shard,
                                       uint32_t *valid_for_ms) {
    const struct instance *in = inst;

    return odbc_leader_group_leadership(in != NULL ? in->g : NULL, shard,
                                        valid_for_ms);
}

/* ABI 1.4: the fire lifecycle. A group member claims at most once and
 * takes no run-now; a pause holds for it as for a leader. */
static int plugin_claim_fire(void *inst, const char *job, int64_t fire_ms,
                             int max_attempts,
                             struct leader_plugin_claim *out) {
    struct instance *in = inst;
    struct odbc_leader_claim c = {.struct_size = sizeof(c)};
    struct leader_plugin_claim p = {0};
    int rc;

    if (in == NULL)
        return ODBC_LEADER_EINVAL;
    rc = in->h != NULL
             ? odbc_leader_claim_fire(in->h, job, fire_ms, max_attempts, &c)
             : odbc_leader_group_claim_fire(in->g, job, fire_ms, max_attempts,
                                            &c);
    if (rc == ODBC_LEADER_CLAIM_RUN) {
        p.attempt = c.attempt;
        p.max_attempts = c.max_attempts;
        p.recovering = c.recovering;
        p.triggered = c.triggered;
        p.term = c.term;
        p.nominal_ms = c.nominal_ms;
    }
    if (out != NULL) {
        size_t n = out->struct_size < sizeof(p) ? out->struct_size : sizeof(p);

        if (n > sizeof(p.struct_size))
            memcpy((char *)out + sizeof(p.struct_size),
                   (char *)&p + sizeof(p.struct_size),
                   n - sizeof(p.struct_size));
    }
    return abi_code(rc);
}

static int plugin_finish_fire(void *inst, const char *job, int64_t fire_ms,
                              int64_t term, int status) {
    struct instance *in = inst;

    if (in == NULL)
        return ODBC_LEADER_EINVAL;
    return in->h != NULL
               ? odbc_leader_finish_fire(in->h, job, fire_ms, term, status)
               : odbc_leader_group_finish(in->g, job, fire_ms, status);
}

/* The array offers() fills (odbc_leader_offers's callback). */
struct offer_fill {
    struct leader_plugin_offer *out;
    int max, n;
};

static void offer_one(void *ctx, const struct odbc_leader_fire *f) {
    struct offer_fill *o = ctx;

    if (o->n < o->max) {
        struct leader_plugin_offer *d = &o->out[o->n];

        memset(d, 0, sizeof(*d));
        d->fire_ms = f->fire_ms;
        d->attempt = f->attempt;
        d->max_attempts = f->max_attempts;
        snprintf(d->job, sizeof(d->job), "%s", f->job);
    }
    o->n++;
}

static int plugin_offers(void *inst, struct leader_plugin_offer *out, int max) {
    struct instance *in = inst;
    struct offer_fill o = {out, out != NULL && max > 0 ? max : 0, 0};

    if (in == NULL)
        return ODBC_LEADER_EINVAL;
    if (in->h == NULL)
        return 0;
    return odbc_leader_offers(in->h, offer_one, &o) < 0 ? ODBC_LEADER_EINVAL
                                                        : o.n;
}

static int plugin_pause_job(void *inst, const char *job, int paused) {
    struct instance *in = inst;

    if (in == NULL)
        return ODBC_LEADER_EINVAL;
    return in->h != NULL ? odbc_leader_pause_job(in->h, job, paused)
                         : odbc_leader_group_pause_job(in->g, job, paused);
}

static int plugin_trigger_job(void *inst, const char *job, int64_t *key) {
    struct instance *in = inst;

    if (in == NULL)
        return ODBC_LEADER_EINVAL;
    return in->h != NULL ? odbc_leader_trigger_job(in->h, job, key)
                         : ODBC_LEADER_EGROUPOFFER;
}

/* ABI 1.5: the fence predicate, from the instance's own handle. */
static int plugin_fence_sql(void *inst, char *out, size_t len) {
    struct instance *in = inst;

    if (in == NULL)
        return ODBC_LEADER_EINVAL;
    return in->h != NULL ? odbc_leader_fence_sql(in->h, out, len)
                         : odbc_leader_group_fence_sql(in->g, out, len);
}

/* ABI 1.6: the schedule identity of a job's claims. */
static int plugin_set_schedule(void *inst, const char *job, const char *expr,
                               const char *tz, const char *engine) {
    struct instance *in = inst;

    if (in == NULL)
        return ODBC_LEADER_EINVAL;
    return in->h != NULL
               ? odbc_leader_set_schedule(in->h, job, expr, tz, engine)
               : odbc_leader_group_set_schedule(in->g, job, expr, tz, engine);
}

/* ABI 1.7: the catch-up policy from its text (borrowed), with grace_ms;
 * 0 with *out filled, or ODBC_LEADER_EINVAL. */
static int catch_up_of(const char *policy, int64_t grace_ms,
                       struct odbc_leader_catch_up *out) {
    *out = (struct odbc_leader_catch_up){.struct_size = sizeof(*out),
                                         .grace_ms = grace_ms};
    return odbc_leader_catch_up_parse(policy, out);
}

static int plugin_catch_up_select(const char *policy, int64_t grace_ms,
                                  int present, int64_t now_ms, int64_t last_ms,
                                  const int64_t *times, size_t n,
                                  size_t *first) {
    struct odbc_leader_catch_up p;
    int rc = catch_up_of(policy, grace_ms, &p);

    if (rc < 0)
        return rc;
    return odbc_leader_catch_up_select(
        &p, present ? ODBC_LEADER_CATCH_UP_PRESENT : 0, now_ms, last_ms, times,
        n, first);
}

static int plugin_catch_up(void *inst, const char *job, const char *policy,
                           int64_t grace_ms, int present, const int64_t *times,
                           size_t n, size_t *first) {
    struct instance *in = inst;
    struct odbc_leader_catch_up p;
    int flags = present ? ODBC_LEADER_CATCH_UP_PRESENT : 0;
    int rc = catch_up_of(policy, grace_ms, &p);

    if (in == NULL || rc < 0)
        return ODBC_LEADER_EINVAL;
    return in->h != NULL
               ? odbc_leader_catch_up(in->h, job, &p, flags, times, n, first)
               : odbc_leader_group_catch_up(in->g, job, &p, flags, times, n,
                                            first);
}

static const struct leader_plugin plugin = {
    sizeof(struct leader_plugin),
    LEADER_PLUGIN_ABI_MAJOR,
    LEADER_PLUGIN_ABI_MINOR,
    "odbc_leader",
    PACKAGE_VERSION,
    plugin_init,
    plugin_tick,
    plugin_is_leader,
    plugin_shutdown,
    plugin_term,
    plugin_strerror,
    plugin_claim,
    plugin_finish,
    plugin_leadership,
    plugin_candidate_id,
    plugin_error_class,
    plugin_last_error,
    plugin_shards,
    plugin_shard_of,
    plugin_shard_leadership,
    plugin_claim_fire,
    plugin_finish_fire,
    plugin_offers,
    plugin_pause_job,
    plugin_trigger_job,
    plugin_fence_sql,
    plugin_set_schedule,
    odbc_leader_local_zone,
    plugin_catch_up,
    plugin_catch_up_select,
    odbc_leader_second_pass,
    odbc_leader_first_pass_next,
};

int leader_plugin_entry(uint16_t host_abi_major,
                        const struct leader_plugin **out) {
    if (out == NULL)
        return LEADER_PLUGIN_EABI;
    *out = NULL;
    if (host_abi_major != LEADER_PLUGIN_ABI_MAJOR)
        return LEADER_PLUGIN_EABI;
    *out = &plugin;
    return 0;
}
