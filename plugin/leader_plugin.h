/* SPDX-License-Identifier: MIT */
/*
 * leader_plugin.h: the generic scheduler-plugin ABI for leader election.
 *
 * A host (a scheduler) dlopen()s a plugin, calls leader_plugin_entry() and
 * drives the instance through the returned table: init once, tick on the
 * schedule the plugin asks for, is_leader before leader-only work, shutdown
 * once. Any election backend may implement it; hosts are written against
 * this header only. Members are only ever added at the end of a struct;
 * struct_size tells each side what the other was built with.
 */
#ifndef LEADER_PLUGIN_H
#define LEADER_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LEADER_PLUGIN_ABI_MAJOR 1
#define LEADER_PLUGIN_ABI_MINOR 8

/* Returned by leader_plugin_entry() when the host's major is not ours. */
#define LEADER_PLUGIN_EABI (-1000)
/* ABI 1.1 */
// clang-format off
#define LEADER_PLUGIN_ENOTLEADER (-1001) /* claim by an instance that does not lead */
/* ABI 1.6: a claim computed by another schedule than the one the job's fires are recorded under
 * (set_schedule(); class CONFIG: last_error() names both) */
#define LEADER_PLUGIN_ESCHEDULE (-1002)
// clang-format on

/* ABI 1.2: what a host should do about a negative code, as error_class()
 * and last_error() say (the values of libodbcleader's enum
 * odbc_leader_error_class). */
/* Keep ticking: the database is down, failing over or busy, or
 * leadership moved; the plugin reconnects with backoff. */
#define LEADER_PLUGIN_CLASS_TRANSIENT 1
/* Ticking cannot help until someone fixes a setting, the schema, a grant or
 * a password: alert an operator. */
#define LEADER_PLUGIN_CLASS_CONFIG 2
/* A bug in the host or the plugin, or resource exhaustion: alert a
 * developer. */
#define LEADER_PLUGIN_CLASS_FATAL 3

/* Returned by tick() only when the host asked for it in init()'s config
 * (odbc_leader.so: LeaderResignRequests=report): still leader, and someone
 * asked this instance to resign. The plugin keeps renewing; the host stops
 * its leader-only work, then calls shutdown(), which resigns. */
#define LEADER_PLUGIN_RESIGN_REQUESTED 2

struct leader_host {      /* filled by the host, borrowed until shutdown */
    uint32_t struct_size; /* sizeof(struct leader_host) as the host built it */
    void *ctx;            /* handed back to every callback */
    void (*log)(void *ctx, int syslog_level, const char *msg); /* may be NULL */
    void (*on_change)(void *ctx, int is_leader, int64_t term,
                      const char *leader_id); /* may be NULL */
    /* ABI 1.3, groups only (shards() > 0): called from tick and shutdown,
     * in order per shard, when this instance starts or stops leading a
     * shard; a stop comes before the shard is handed over, so the host
     * stops that shard's work before it returns. May be NULL. */
    void (*on_shard_change)(void *ctx, uint32_t shard, int is_leader,
                            int64_t term);
};

/* 1 when the host struct h (as the host built it, h->struct_size) has
 * member m: a plugin reads a member only when this is true, so a host built
 * against an older, shorter struct keeps working. h may be NULL. */
/* ABI 1.4: what claim_fire() returns besides the errors: run the fire
 * (LEADER_PLUGIN_CLAIM_RUN), it was claimed before (0), or its job is
 * paused (LEADER_PLUGIN_CLAIM_PAUSED). */
#define LEADER_PLUGIN_CLAIM_RUN 1
#define LEADER_PLUGIN_CLAIM_PAUSED 2

/* ABI 1.4: a claim as the database recorded it (claim_fire()). The host
 * sets struct_size; the plugin writes at most that many bytes. */
struct leader_plugin_claim {
    uint32_t struct_size;
    int32_t attempt;      /* 1, or n + 1 when attempt n was interrupted */
    int32_t max_attempts; /* the attempts the fire's job allows */
    int32_t recovering;   /* 1: an earlier attempt's term ended without an
                             outcome (Quartz's isRecovering()) */
    int32_t triggered;    /* 1: a run-now an operator asked for */
    int64_t term;         /* the term the claim is fenced in: finish_fire's */
    int64_t nominal_ms;   /* the fire's nominal time; a run-now's: when it
                             was asked */
};

/* ABI 1.4: a fire offered to the leader (offers()): a run-now (fire_ms
 * below 0) or an interrupted attempt its job may run again. The host
 * claims it with claim_fire(job, fire_ms, its max_attempts). Fixed
 * layout (an array element): never changes within major 1. */
struct leader_plugin_offer {
    int64_t fire_ms;
    int32_t attempt; /* the attempt that was interrupted; 0 for a run-now */
    int32_t max_attempts;
    char job[129];
};

#define LEADER_HOST_HAS(h, m)                                                  \
    ((h) != NULL &&                                                            \
     (h)->struct_size >= offsetof(struct leader_host, m) + sizeof((h)->m))

struct leader_plugin {
    uint32_t struct_size;
    uint16_t abi_major, abi_minor;
    const char *name, *version;
    /* 0 and a new instance in *inst, or negative with a message in err. */
    int (*init)(const char *config, const struct leader_host *host, void **inst,
                char *err, size_t errlen);
    /* One election step: 0 follower, 1 leader (only while is_leader() is
     * true), LEADER_PLUGIN_RESIGN_REQUESTED when enabled, or negative.
     * *next_tick_ms (when not NULL) is always written: the ms to sleep before
     * the next tick; after an error (or a NULL inst) it is never 0. */
    int (*tick)(void *inst, uint32_t *next_tick_ms);
    /* 1 or 0; no I/O, no lock, any thread. */
    int (*is_leader)(const void *inst);
    /* Resign if leader, unregister, disconnect, free. NULL-safe. */
    void (*shutdown)(void *inst);
    /* Fencing token of the term led, 0 when not leader. */
    int64_t (*term)(const void *inst);
    /* Static message for a negative code returned by this plugin. */
    const char *(*strerror)(int rc);
    /* ---- ABI 1.1 (abi_minor >= 1; hosts check struct_size) ---- */
    // clang-format off
    /* Claims fire fire_ms (epoch ms, the nominal time as the host's schedule names it) of job for
     * the term this instance leads, checked by the database in the same statement: 1 claimed, run
     * it; 0 already claimed by anyone in any term, do not run it; LEADER_PLUGIN_ENOTLEADER; or
     * another negative error. */
    int (*claim)(void *inst, const char *job, int64_t fire_ms);
    /* Records the outcome of a claimed fire (0 ok, else exit status or -signal); idempotent. */
    int (*finish)(void *inst, const char *job, int64_t fire_ms, int status);
    /* The term led and, in *valid_for_ms, how long the trust window still runs; 0 when not leader.
     * One call, so "is leader" and "which term" cannot disagree. */
    int64_t (*leadership)(const void *inst, uint32_t *valid_for_ms);
    /* ---- ABI 1.2 (abi_minor >= 2); each may be NULL ---- */
    /* This instance's candidate id, as the lease and candidate rows name it; borrowed from inst
     * until shutdown. No I/O, any thread. */
    const char *(*candidate_id)(const void *inst);
    /* LEADER_PLUGIN_CLASS_TRANSIENT, _CONFIG or _FATAL for a negative code this plugin returned
     * (0 for a code that is not an error). Static; any thread. */
    int (*error_class)(int rc);
    /* The instance's last error: returns its code (0 when no call failed yet) and, for each
     * pointer that is not NULL, its class refined by the driver's SQLSTATE (a refused login is
     * CONFIG where a refused connection is TRANSIENT), the SQLSTATE ("" when the error did not
     * come from the driver; sqlstate has room for 6 bytes), the driver's native code and its
     * message (NUL-terminated in msglen bytes, never a password). No I/O; tick's thread. */
    int (*last_error)(const void *inst, int *error_class, char *sqlstate, long *native,
                      char *msg, size_t msglen);
    /* ---- ABI 1.3 (abi_minor >= 3): sharded groups; each may be NULL ---- */
    /* The instance's shard count: 0 for an instance of one namespace, N for a member of a
     * group of N shards (odbc_leader.so: LeaderShards=N). In a group, tick returns 1 while
     * the instance leads any shard, is_leader says the same, term and leadership say 0, and
     * claim and finish act in the shard of their job, fenced by that shard's term. Static
     * after init; any thread. */
    uint32_t (*shards)(const void *inst);
    /* The shard of key (0 .. shards - 1; 0 when not a group): FNV-1a 64 of its bytes modulo
     * the shard count, the same in every binding and version. Any thread. */
    uint32_t (*shard_of)(const void *inst, const char *key);
    /* The term of shard led by this instance and, in *valid_for_ms (when not NULL), how
     * long its trust window still runs; 0 when not led. No I/O, no lock, any thread. */
    int64_t (*shard_leadership)(const void *inst, uint32_t shard, uint32_t *valid_for_ms);
    /* ---- ABI 1.4 (abi_minor >= 4): the fire lifecycle; each may be NULL ---- */
    /* claim() that says what it got (docs/lifecycle.md): max_attempts is how many attempts the
     * job allows (1: at most once; n > 1: a fire whose term ends without an outcome is offered
     * to the next leader, up to n attempts); fire_ms may be an offer's key below 0. Returns
     * LEADER_PLUGIN_CLAIM_RUN with *out filled (may be NULL), 0 claimed before,
     * LEADER_PLUGIN_CLAIM_PAUSED, LEADER_PLUGIN_ENOTLEADER or another negative error. In a
     * group: at most once (attempt 1 of 1), fenced by the shard's term. */
    int (*claim_fire)(void *inst, const char *job, int64_t fire_ms, int max_attempts,
                      struct leader_plugin_claim *out);
    /* finish() for the attempt claimed in term (out->term of claim_fire); a negative code when a
     * later term took the fire again (the attempt's term ended: its outcome is not kept). */
    int (*finish_fire)(void *inst, const char *job, int64_t fire_ms, int64_t term, int status);
    /* The fires offered to this leader, as its ticks learned them (no I/O; tick's thread):
     * fills out[0 .. min(n, max)) and returns n, the number offered (0 when not leader, and
     * in a group). */
    int (*offers)(void *inst, struct leader_plugin_offer *out, int max);
    /* Pauses (1) or resumes (0) job on every host, durably: claim_fire then answers
     * LEADER_PLUGIN_CLAIM_PAUSED for its fires (in a group too). Needs no leadership.
     * 0 or negative. */
    int (*pause_job)(void *inst, const char *job, int paused);
    /* Asks the leader to run job once now: 0 and the run-now's key (below 0) in *key (may be
     * NULL); it reaches the leader's offers() at its next tick. Needs no leadership. A
     * negative code in a group (its shards take no offered fires). */
    int (*trigger_job)(void *inst, const char *job, int64_t *key);
    /* ---- ABI 1.5 (abi_minor >= 5); may be NULL ---- */
    /* The fence predicate of the instance's dialect and table prefix (docs/fencing.md): the
     * SELECT that goes inside "AND EXISTS ( ... )" of a job's write, "?" for the namespace
     * (in a group, the shard's) and then the term. Written NUL-terminated into out (len
     * bytes; out may be NULL when len is 0); returns its length as snprintf does (>= len:
     * too short, ask again with length + 1), or a negative error. No I/O; the tick's thread
     * (a reconnect may load the dialect again). A binding needs no odbc-leader command to
     * fence. */
    int (*fence_sql)(void *inst, char *out, size_t len);
    /* ---- ABI 1.6 (abi_minor >= 6); each may be NULL ---- */
    /* Says how the host computes the nominal times of job's fires (docs/schedules.md): expr in
     * the engine's own syntax ("cron 0 9 * * *", "every 60s"; NULL forgets it), tz the IANA zone
     * it computes in (NULL: the host's, as local_zone() names it; "": none, for intervals no zone
     * changes), engine its name and DST rule. The first claim_fire/claim of a job records its
     * identity; a later claim computed by another is refused with LEADER_PLUGIN_ESCHEDULE, so two
     * hosts in different time zones never both run "the same" fire. 0 or negative; no I/O. */
    int (*set_schedule)(void *inst, const char *job, const char *expr, const char *tz,
                        const char *engine);
    /* The IANA name of the host's time zone as the C library computes local time (TZ, else
     * /etc/localtime), "UTC" for its aliases: 0, or negative when it has none. Any thread. */
    int (*local_zone)(char *out, size_t len);
    /* ---- ABI 1.7 (abi_minor >= 7); each may be NULL ---- */
    /* The catch-up policy (docs/catch-up.md), decided by the plugin so that every host decides
     * alike: of job's fire times times[0 .. n) (ascending, as the host's engine computes them, not
     * run here; present 1: the newest is the fire due now), which this leader claims after an
     * election, an outage or a pause. policy is "skip", "latest", "all" or "all:CAP"; grace_ms
     * how old a missed fire may be on the database clock; under "latest" and "skip" a fire
     * no later than the ledger's latest nominal time of job is not claimed, and a job with no
     * fire in the ledger catches up nothing. Returns the count, with the
     * first in *first (the claims are times[*first .. *first + count), oldest first), or a
     * negative error (a policy text or times it refuses). One round trip; tick's thread. */
    int (*catch_up)(void *inst, const char *job, const char *policy, int64_t grace_ms,
                    int present, const int64_t *times, size_t n, size_t *first);
    /* The same with the database clock now_ms and the latest nominal time last_ms given: no I/O,
     * no instance, any thread (the test vectors, docs/catch-up-vectors.txt). */
    int (*catch_up_select)(const char *policy, int64_t grace_ms, int present, int64_t now_ms,
                           int64_t last_ms, const int64_t *times, size_t n, size_t *first);
    /* ---- ABI 1.8 (abi_minor >= 8); each may be NULL ---- */
    /* The first-pass rule (docs/schedules.md), for an engine that runs a wall time the autumn
     * change repeats once, at its first pass, but computes the second pass when asked from within
     * the repeated hour. next(ctx, ms): the engine's first fire time strictly after ms, or -1;
     * same_wall(ctx, a, b): 1 when instants a and b show one wall time in the job's zone. Returns
     * 1 when fire time t is such a second pass, which is not to be run (its first pass was, under
     * another key), else 0, or a negative error. No I/O, no instance, any thread. */
    int (*second_pass)(int64_t (*next)(void *ctx, int64_t ms),
                       int (*same_wall)(void *ctx, int64_t a, int64_t b), void *ctx, int64_t t);
    /* next kept to the first pass: the first fire time after ms that second_pass does not drop,
     * in *out (1), or -1 in *out when next has none (0); or a negative error. */
    int (*first_pass_next)(int64_t (*next)(void *ctx, int64_t ms),
                           int (*same_wall)(void *ctx, int64_t a, int64_t b), void *ctx,
                           int64_t ms, int64_t *out);
    // clang-format on
};

/* 1 when the plugin table p (as the plugin built it) has member m: a host
 * checks this before calling a member of a later minor than 1.0 (claim,
 * finish, leadership; candidate_id, error_class, last_error; shards,
 * shard_of, shard_leadership), since the plugin may be older. */
#define LEADER_PLUGIN_HAS(p, m)                                                \
    ((p) != NULL &&                                                            \
     (p)->struct_size >= offsetof(struct leader_plugin, m) + sizeof((p)->m) && \
     (p)->m != NULL)

/* the plugin's only exported symbol; refuses another major with a negative code
 */
#if defined(__GNUC__)
__attribute__((visibility("default")))
#endif
int leader_plugin_entry(uint16_t host_abi_major,
                        const struct leader_plugin **out);

typedef int (*leader_plugin_entry_fn)(uint16_t host_abi_major,
                                      const struct leader_plugin **out);

#ifdef __cplusplus
}
#endif
#endif /* LEADER_PLUGIN_H */
