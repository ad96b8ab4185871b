/* SPDX-License-Identifier: MIT */
/*
 * odbc_leader.h: public API of libodbcleader, leader election over one ODBC
 * connection.
 *
 * One handle campaigns for one namespace. The host calls odbc_leader_tick()
 * from one thread, as often as *next_tick_ms asks; odbc_leader_is_leader()
 * may be called from any thread at any time and does no I/O.
 *
 * Every function returning int returns 0 (or a documented non-negative
 * value) on success and a negative enum odbc_leader_error value on failure.
 *
 * Each declaration says, in this order:
 *   Owns:    who owns what it takes and returns (borrowed pointers must
 *            stay valid for the call only, unless it says otherwise);
 *   Thread:  "any" (no lock, no I/O: safe from any thread, even while
 *            another thread ticks) or "tick" (the thread that calls
 *            odbc_leader_tick(); one such call at a time per handle);
 *   Blocks:  "no", or "yes" with what it waits for. Blocking calls wait
 *            at most about LeaderStatementTimeout per statement (plus
 *            LeaderFollowerWait for a follower's tick).
 * odbc_leader(7) is the long form.
 */
#ifndef ODBC_LEADER_H
#define ODBC_LEADER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header: MAJOR.MINOR.PATCH, and as one number
 * 0xMMmmpp that grows with every release (compare it with #if). At run
 * time odbc_leader_version() names the library actually loaded. */
#define ODBC_LEADER_VERSION_MAJOR 0
#define ODBC_LEADER_VERSION_MINOR 1
#define ODBC_LEADER_VERSION_PATCH 0
#define ODBC_LEADER_VERSION "0.1.0"
#define ODBC_LEADER_VERSION_NUM 0x000100

#if defined(__GNUC__) && defined(ODBC_LEADER_BUILDING)
#define ODBC_LEADER_EXTERN __attribute__((visibility("default")))
#else
#define ODBC_LEADER_EXTERN
#endif

/* Error codes. Append only: values never change meaning. */
enum odbc_leader_error {
    ODBC_LEADER_OK = 0,
    ODBC_LEADER_ECONFIG = -1,       /* bad configuration key or value */
    ODBC_LEADER_ENOMEM = -2,        /* out of memory */
    ODBC_LEADER_ECONNECT = -3,      /* cannot connect to the database */
    ODBC_LEADER_EDB = -4,           /* a statement failed (details logged) */
    ODBC_LEADER_ECONNLOST = -5,     /* the connection was lost */
    ODBC_LEADER_ENOTABLE = -6,      /* tables missing, schema creation off */
    ODBC_LEADER_ESCHEMA = -7,       /* unknown schema version in the database */
    ODBC_LEADER_EDIALECT = -8,      /* dialect cannot be chosen or parsed */
    ODBC_LEADER_EBACKOFF = -9,      /* waiting before the next reconnect */
    ODBC_LEADER_EUNKNOWN = -10,     /* commit failed: outcome unknown */
    ODBC_LEADER_EINVAL = -11,       /* invalid argument */
    ODBC_LEADER_ENOCANDIDATE = -12, /* the named candidate is not alive */
    ODBC_LEADER_ENOLEADER = -13,    /* the namespace has no leader */
    ODBC_LEADER_ENOTLEADER = -14,   /* claim by a handle that does not lead
                                       the current, unexpired term */
    ODBC_LEADER_EFIREAGE = -15,     /* fire older than LeaderFireRetention */
    ODBC_LEADER_ENOFIRE = -16,      /* finish of a fire this handle did not
                                       claim */
    ODBC_LEADER_ENOLEDGER = -17,    /* the dialect has no fire ledger */
    ODBC_LEADER_EREADONLY = -18,    /* the server takes no writes (a standby
                                       or a read-only server) */
    ODBC_LEADER_ENOELECTIONS = -19, /* the dialect keeps no election log */
    ODBC_LEADER_ESUPERSEDED = -20,  /* finish of an attempt whose term ended
                                       and whose fire a later term took
                                       again (recovered) */
    ODBC_LEADER_ENOLIFECYCLE = -21, /* the dialect has no fire lifecycle
                                       (recovery, pause, run-now) */
    ODBC_LEADER_EGROUPOFFER = -22,  /* a run-now of a sharded group's job:
                                       its shards take no offered fires */
    ODBC_LEADER_ESCHEDULE = -23,    /* a claim computed by another schedule
                                       than the one the job's fires were
                                       recorded under (docs/schedules.md) */
};

/*
 * What a host should do about an error (odbc_leader_error_class(),
 * struct odbc_leader_error_info). Append only.
 */
enum odbc_leader_error_class {
    ODBC_LEADER_CLASS_NONE = 0, /* not an error */
    /* Retry: keep ticking (the handle reconnects with backoff); the
     * database is down, restarting, failing over, busy, or leadership
     * moved. */
    ODBC_LEADER_CLASS_TRANSIENT = 1,
    /* Retrying cannot help until someone changes a setting, the schema,
     * a grant or a password: alert an operator. */
    ODBC_LEADER_CLASS_CONFIG = 2,
    /* A bug in the host or the library, or resource exhaustion: the call
     * was wrong or cannot work in this process; alert a developer. */
    ODBC_LEADER_CLASS_FATAL = 3,
};

/* Leadership states returned by odbc_leader_tick(). */
enum odbc_leader_state {
    ODBC_LEADER_FOLLOWER = 0,
    ODBC_LEADER_LEADER = 1,
    /* Only with LeaderResignRequests=report: still leader (is_leader() is
     * true), and someone asked this leader to resign (odbc-leader resign,
     * odbc_leader_request_resign). The handle keeps renewing the term;
     * the host stops its leader-only work, then calls odbc_leader_resign()
     * (or odbc_leader_destroy()), which hands over. */
    ODBC_LEADER_RESIGN_REQUESTED = 2,
};

typedef struct odbc_leader odbc_leader_t;

/*
 * Callbacks, copied at create time. Set struct_size to
 * sizeof(struct odbc_leader_callbacks): the library reads only the members
 * that fit in struct_size, so a host built against an older, shorter
 * struct keeps working when members are appended. Members are only ever
 * appended. Every function member may be NULL.
 */
struct odbc_leader_callbacks {
    uint32_t struct_size; /* sizeof(struct odbc_leader_callbacks) */
    void *ctx;            /* handed back to every callback; borrowed */
    /* level is a syslog(3) priority; msg never contains a password and is
     * borrowed for the call. Called from the thread of the call that logs
     * (tick's thread, or create's). */
    void (*log)(void *ctx, int level, const char *msg);
    /* Called from odbc_leader_tick() and odbc_leader_destroy(), in order,
     * whenever this instance's leadership or the leader it knows of
     * changes. leader_id is NULL when no leader is known; borrowed for the
     * call. */
    void (*on_change)(void *ctx, int is_leader, int64_t term,
                      const char *leader_id);
    /* Groups only (odbc_leader_group_create()): called from
     * odbc_leader_group_tick() and odbc_leader_group_destroy(), in order
     * per shard, whenever this instance starts or stops leading a shard.
     * A stop is reported before the shard is handed to anyone: the host
     * stops that shard's work before it returns. */
    void (*on_shard_change)(void *ctx, uint32_t shard, int is_leader,
                            int64_t term);
};

/* The last error of a handle (odbc_leader_last_error()). */
struct odbc_leader_error_info {
    int code;          /* enum odbc_leader_error; 0 when none yet */
    int error_class;   /* enum odbc_leader_error_class, refined by sqlstate */
    char sqlstate[6];  /* the driver's SQLSTATE, "" when the error did not
                          come from the driver */
    long native;       /* the driver's native error code, 0 when none */
    char message[512]; /* the driver's text (or the library's); never
                          contains a password */
};

/* A lease row as read from the database, in database time. */
struct odbc_leader_lease {
    char leader_id[129]; /* empty when vacant */
    int64_t term;        /* last term issued, 0 when none yet */
    int64_t expires_at_ms;
    int64_t db_now_ms; /* database clock when read */
};

/* A live candidate, in database time. */
struct odbc_leader_candidate {
    char id[129];
    int64_t heartbeat_at_ms;
    int64_t expires_at_ms;
    int64_t db_now_ms;
};

typedef void (*odbc_leader_candidate_fn)(
    void *ctx, const struct odbc_leader_candidate *candidate);

/* A shard of a group, in database time (odbc_leader_list_shards()). */
struct odbc_leader_shard {
    uint32_t shard;
    char leader_id[129]; /* empty when vacant */
    int64_t term;
    int64_t expires_at_ms;
    int64_t db_now_ms; /* database clock when read */
};

typedef void (*odbc_leader_shard_fn)(void *ctx,
                                     const struct odbc_leader_shard *shard);

/* A row of the fire ledger, in database time (docs/fencing.md). */
struct odbc_leader_fire {
    char job[129];
    int64_t fire_ms; /* the nominal time the host named; 0 = a one-off key */
    int64_t term;    /* the term that claimed it */
    char claimed_by[129];
    int64_t claimed_at_ms;
    int64_t finished_at_ms; /* 0 while unfinished */
    int status;             /* when finished: 0 ok, exit status or -signal */
    int64_t db_now_ms;      /* database clock when read */
    /* Since 0.2 (the fire lifecycle, docs/lifecycle.md): filled by
     * odbc_leader_list_fires(), odbc_leader_offers() and
     * odbc_leader_read_fire_ex(); odbc_leader_read_fire() fills only the
     * members above. Without the
     * lifecycle in the dialect: "", 1 and 1. */
    char state[16];   /* running, done, failed, interrupted, abandoned,
                         skipped (a paused job's) or pending (a run-now not
                         taken yet) */
    int attempt;      /* 1 for the first run, n + 1 for a recovery; 0 for a
                         pending run-now or a skipped fire */
    int max_attempts; /* the attempts its job allows: 1 = at most once */
};

typedef void (*odbc_leader_fire_fn)(void *ctx,
                                    const struct odbc_leader_fire *fire);

/* odbc_leader_claim_fire(): run it. */
#define ODBC_LEADER_CLAIM_RUN 1
/* odbc_leader_claim_fire(): claimed before, by anyone in any term. */
#define ODBC_LEADER_CLAIM_TAKEN 0
/* odbc_leader_claim_fire(): the job is paused (the fire is recorded as
 * skipped, or an offered one stays offered until the job resumes). */
#define ODBC_LEADER_CLAIM_PAUSED 2

/* What odbc_leader_claim_fire() got, as the database recorded it. Set
 * struct_size to sizeof(struct odbc_leader_claim): the library writes
 * only that many bytes. */
struct odbc_leader_claim {
    uint32_t struct_size;
    int attempt;        /* 1, or n + 1 when attempt n was interrupted */
    int max_attempts;   /* the attempts the fire's job allows */
    int recovering;     /* 1: an earlier attempt's term ended without an
                           outcome (Quartz's isRecovering()) */
    int triggered;      /* 1: a run-now an operator asked for */
    int64_t term;       /* the term the database fenced the claim in: pass
                           it to odbc_leader_finish_fire() */
    int64_t nominal_ms; /* the fire's nominal time (fire_ms), or for a
                           run-now when it was asked (database clock) */
};

/* A job of the namespace as the database knows it (odbc_leader_list_jobs):
 * jobs that have fires in the ledger or a pause record. Times are the
 * database clock's ms, 0 when unknown. */
struct odbc_leader_job {
    char job[129];
    int paused;             /* an operator paused it on every host */
    int64_t changed_at_ms;  /* the last pause or resume */
    char changed_by[129];   /* ... by this candidate id ("" never) */
    int64_t fires;          /* its fires in the ledger */
    int64_t running;        /* ... running now */
    int64_t offered;        /* ... offered: run-now or to recover */
    int64_t last_fire_ms;   /* its latest nominal fire time */
    int64_t last_done_ms;   /* the latest end of a successful fire */
    int64_t last_failed_ms; /* ... of one that failed, was interrupted
                               or abandoned */
    int64_t db_now_ms;      /* database clock when read */
};

typedef void (*odbc_leader_job_fn)(void *ctx,
                                   const struct odbc_leader_job *job);

/* The schedule a job's fires are recorded under
 * (odbc_leader_list_schedules(), docs/schedules.md): its identity, who
 * recorded it, and the claims refused since because they were computed
 * by another one. Times are the database clock's ms, 0 when unknown. */
struct odbc_leader_schedule {
    char job[129];
    char schedule[513];    /* the identity ("" none yet: the next claim
                              records its own) */
    int64_t since_ms;      /* recorded at the first claim or a reschedule */
    char since_by[129];    /* ... by this candidate id */
    int64_t refusals;      /* claims refused since (another identity) */
    char refused[513];     /* the identity of the latest refused claim */
    int64_t refused_at_ms; /* ... when */
    char refused_by[129];  /* ... by this candidate id */
    int64_t db_now_ms;     /* database clock when read */
};

typedef void (*odbc_leader_schedule_fn)(
    void *ctx, const struct odbc_leader_schedule *schedule);

/* One term of a namespace in the election log (odbc_leader_list_elections):
 * who won it and when, and how it ended. Times are the database clock's
 * ms. The winner writes the row in its winning statement; the term's own
 * resignation, or the next winner, ends it. */
struct odbc_leader_election {
    int64_t term;
    char leader_id[129];
    int64_t started_at_ms;
    int64_t ended_at_ms; /* 0 while the term has not ended (the current
                            term, or the last one before a takeover) */
    /* "" while not ended; "resigned" (it resigned, or shut down),
     * "requested" (it resigned when asked to), "handover" (asked to
     * resign in favour of handed_to), "expired" (its lease ran out and
     * a later term began; ended_at_ms is then the expiry, or the next
     * term's start), "quarantined" (the database moved to a new epoch:
     * a promoted standby or a restored copy) */
    char ended_how[17];
    char handed_to[129]; /* the handover's target, else "" */
    int64_t db_now_ms;   /* database clock when read */
};

typedef void (*odbc_leader_election_fn)(
    void *ctx, const struct odbc_leader_election *election);

/*
 * Parses config (an ODBC connection string whose Leader* keys configure the
 * election), connects, checks or creates the schema and prepares the
 * statements. On failure returns a negative code, sets *out to NULL and
 * writes a message naming the problem into err (when err is not NULL).
 * cb may be NULL; a cb whose struct_size is smaller than its ctx member
 * (0: not set) gives ODBC_LEADER_EINVAL.
 * Owns: on success the caller owns *out and frees it with
 *   odbc_leader_destroy(); config, cb and err are borrowed for the call
 *   (*cb is copied, cb->ctx must outlive the handle).
 * Thread: any; the handle is then used from the thread that ticks.
 * Blocks: yes: connect, schema check or creation.
 */
ODBC_LEADER_EXTERN int
odbc_leader_create(odbc_leader_t **out, const char *config,
                   const struct odbc_leader_callbacks *cb, char *err,
                   size_t errlen);

/*
 * One election step: renew when leader, attempt when follower (both also
 * heartbeat the candidate row). Reconnects with backoff after a failure.
 * Returns ODBC_LEADER_LEADER (or ODBC_LEADER_RESIGN_REQUESTED, see
 * there), ODBC_LEADER_FOLLOWER or a negative error. A positive return
 * means odbc_leader_is_leader() was true when tick returned: an attempt or
 * renewal whose answer arrives after the trust window it would open has
 * closed steps down (and hands the term back) instead. Leadership survives
 * an error only until the trust window ends. An error whose outcome is
 * unknown (ODBC_LEADER_EUNKNOWN: a failed COMMIT, a client-side timeout)
 * drops the connection, so no transaction or lock stays open; a term such
 * a statement may have won is never reported and simply expires.
 * *next_tick_ms (when not NULL) is the delay until the next useful tick.
 * odbc_leader_error_class() of a negative return says whether to keep
 * ticking (transient) or to alert someone.
 * Owns: nothing. Thread: tick. Blocks: yes: one round trip, a reconnect,
 * or a follower's wait for the leader to let go (LeaderFollowerWait).
 */
ODBC_LEADER_EXTERN int odbc_leader_tick(odbc_leader_t *h,
                                        uint32_t *next_tick_ms);

/* 1 while leader and inside the trust window, else 0. NULL gives 0.
 * Thread: any (no I/O, no lock). Blocks: no. */
ODBC_LEADER_EXTERN int odbc_leader_is_leader(const odbc_leader_t *h);

/* The fencing token of the term held, 0 when not leader.
 * Thread: any. Blocks: no. */
ODBC_LEADER_EXTERN int64_t odbc_leader_term(const odbc_leader_t *h);

/* Database clock steps this handle has seen (the database time moving
 * against CLOCK_BOOTTIME by more than half the safety margin between two
 * answers), and in *last_step_ms (when not NULL) the last one in ms,
 * negative for a backward step. After a forward step a term won within
 * one TTL is held but not trusted until the TTL has passed (protocol.md).
 * Thread: any. Blocks: no. */
ODBC_LEADER_EXTERN int64_t odbc_leader_clock_steps(const odbc_leader_t *h,
                                                   int64_t *last_step_ms);

/* The term led and, in *valid_for_ms (when not NULL), how long the trust
 * window still runs, in milliseconds on CLOCK_BOOTTIME; 0 (and 0) when not
 * leader. One read of the window, so "is leader" and "which term" cannot
 * disagree. A supervisor that must stop work before the lease can lapse
 * uses valid_for_ms as its deadline.
 * Thread: any (no I/O, no lock). Blocks: no. */
ODBC_LEADER_EXTERN int64_t odbc_leader_leadership(const odbc_leader_t *h,
                                                  uint32_t *valid_for_ms);

/* This candidate's id (LeaderId, or the UUID generated at create), as
 * written in the lease and candidate rows.
 * Owns: borrowed from h, valid until odbc_leader_destroy(); never NULL for
 * a handle. Thread: any. Blocks: no. */
ODBC_LEADER_EXTERN const char *odbc_leader_id(const odbc_leader_t *h);

/* The namespace this handle campaigns in.
 * Owns: borrowed from h, valid until odbc_leader_destroy().
 * Thread: any. Blocks: no. */
ODBC_LEADER_EXTERN const char *odbc_leader_namespace(const odbc_leader_t *h);

/* Gives up the term held (if any) at once; the handle stays a candidate
 * and campaigns again at its next tick. Returns 0 or a negative error.
 * Thread: tick. Blocks: yes: one round trip. */
ODBC_LEADER_EXTERN int odbc_leader_resign(odbc_leader_t *h);

/*
 * Asks the namespace's current leader (whoever it is) to resign at its next
 * renewal. With to_id (not NULL, not ""), the lease is then reserved for
 * that candidate for one TTL, so it takes over rather than any other;
 * to_id must be a live candidate. Any handle of the namespace may ask; it
 * needs no leadership. Returns 0, ODBC_LEADER_ENOCANDIDATE when to_id is
 * not alive, ODBC_LEADER_ENOLEADER when nobody leads, or another negative
 * error.
 * Owns: to_id borrowed for the call. Thread: tick. Blocks: yes: one round
 * trip.
 */
ODBC_LEADER_EXTERN int odbc_leader_request_resign(odbc_leader_t *h,
                                                  const char *to_id);

/* Reads the namespace's lease row into *out (the caller's).
 * Thread: tick. Blocks: yes: one round trip. */
ODBC_LEADER_EXTERN int odbc_leader_read_lease(odbc_leader_t *h,
                                              struct odbc_leader_lease *out);

/* Calls fn(ctx, candidate) for each live candidate of the namespace; the
 * candidate is borrowed for the call. Returns the number of candidates or
 * a negative error.
 * Thread: tick (fn runs on it). Blocks: yes: one round trip. */
ODBC_LEADER_EXTERN int odbc_leader_list_candidates(odbc_leader_t *h,
                                                   odbc_leader_candidate_fn fn,
                                                   void *ctx);

/* Calls fn(ctx, shard) for each shard of the group named by this handle's
 * namespace (a group's member rows, odbc_leader_group_create()), in shard
 * order; the shard is borrowed for the call. The handle needs no
 * LeaderShards: "odbc-leader status" reads a group this way. Returns the
 * number of shards (0: the namespace is no group, or the dialect has no
 * group statements) or a negative error.
 * Thread: tick (fn runs on it). Blocks: yes: one round trip. */
ODBC_LEADER_EXTERN int
odbc_leader_list_shards(odbc_leader_t *h, odbc_leader_shard_fn fn, void *ctx);

/*
 * Claims fire fire_ms of job for the term this handle leads, checked by the
 * database in the same statement that records the claim: the row goes into
 * the namespace's fire ledger only while, at database time, this handle
 * holds the namespace's current, unexpired term. job is 1 to 128 bytes of
 * A-Z a-z 0-9 . _ - : / @; fire_ms is the fire's nominal time in epoch ms
 * as the host's schedule names it (every host must name a fire alike), or
 * 0 for a one-off key that never expires. Returns 1: claimed, run it; 0:
 * already claimed by anyone in any term (this handle included), do not run
 * it; ODBC_LEADER_ENOTLEADER: this handle does not lead (checked locally
 * first, then by the database); ODBC_LEADER_EFIREAGE: fire_ms is older
 * than LeaderFireRetention by the database clock (its row may already be
 * gone, so it could run twice); ODBC_LEADER_ENOLEDGER; or another negative
 * error, after which the outcome is unknown (the ledger tells). A try that
 * fails for a passing reason (a lost connection, a timeout, a deadlock, a
 * busy file) is made once more at once, on a new connection when the old
 * one is gone, while the term still leads here: a 1 then means the first
 * try never committed. A 0 after a first try of unknown outcome, with the
 * row claimed in this term by this handle, returns the first error: that
 * row is the first try's or an earlier claim's, and it cannot tell which.
 * Owns: job borrowed for the call. Thread: tick. Blocks: yes: one round
 * trip; after such a failure a reconnect and up to two more (none when
 * this handle does not lead).
 */
ODBC_LEADER_EXTERN int odbc_leader_claim(odbc_leader_t *h, const char *job,
                                         int64_t fire_ms);

/*
 * Records the outcome of a fire this handle claimed: status 0 for success,
 * else an exit status or -signal. Idempotent: finishing a finished fire
 * changes nothing and returns 0. Works after leadership is gone (the fire
 * ran). Returns 0, ODBC_LEADER_ENOFIRE when this handle never claimed it,
 * or another negative error.
 * Owns: job borrowed for the call. Thread: tick. Blocks: yes: one round
 * trip.
 */
ODBC_LEADER_EXTERN int odbc_leader_finish(odbc_leader_t *h, const char *job,
                                          int64_t fire_ms, int status);

/*
 * The claim of the fire lifecycle (docs/lifecycle.md): odbc_leader_claim()
 * that says what it got. max_attempts is how many attempts the job allows
 * (1: at most once, the default elsewhere; n > 1: a fire whose term ends
 * without an outcome is offered to the next leader, up to n attempts, then
 * recorded abandoned). fire_ms may also be a key below 0 that
 * odbc_leader_offers() listed (a run-now). Returns ODBC_LEADER_CLAIM_RUN
 * (run it: *out says which attempt, whether it recovers one, and the term
 * to finish it in), ODBC_LEADER_CLAIM_TAKEN (0), ODBC_LEADER_CLAIM_PAUSED,
 * or the errors of odbc_leader_claim(); ODBC_LEADER_ENOFIRE for a key
 * below 0 that names no run-now; ODBC_LEADER_ENOLIFECYCLE when the dialect
 * has no lifecycle and max_attempts > 1 or fire_ms < 0. out may be NULL;
 * it is zeroed (to its struct_size) unless the claim runs.
 * Owns: job borrowed, *out the caller's. Thread: tick. Blocks: yes: one
 * round trip for a new fire; two or three to take an offered one, to
 * record a skip or to tell why not.
 */
ODBC_LEADER_EXTERN int odbc_leader_claim_fire(odbc_leader_t *h, const char *job,
                                              int64_t fire_ms, int max_attempts,
                                              struct odbc_leader_claim *out);

/*
 * Records the outcome of the attempt this handle claimed in term (as
 * odbc_leader_claim_fire() returned it in out->term): done for status 0,
 * else failed. Idempotent. Works after leadership is gone, also when the
 * next term found the attempt interrupted, until a later term takes the
 * fire again: then ODBC_LEADER_ESUPERSEDED (the attempt's outcome is not
 * recorded; the recovery's is). Returns 0, ODBC_LEADER_ESUPERSEDED,
 * ODBC_LEADER_ENOFIRE or another negative error.
 * Owns: job borrowed. Thread: tick. Blocks: yes: one round trip (two when
 * nothing changed).
 */
ODBC_LEADER_EXTERN int odbc_leader_finish_fire(odbc_leader_t *h,
                                               const char *job, int64_t fire_ms,
                                               int64_t term, int status);

/*
 * The fires offered to this leader, as its ticks learned them: run-now
 * requests and fires whose term ended without an outcome while their job
 * allows another attempt (only after that term can no longer act: a later
 * term exists). A new term reads them at its first tick (one read; a
 * write only to sweep fires still running in earlier terms); later ticks
 * read them again only while the renewal reports some (no extra round
 * trip otherwise). Calls fn(ctx, fire) for each, oldest first (fire borrowed
 * for the call), at most 64; the host claims each with
 * odbc_leader_claim_fire(job, fire_ms, its max_attempts) and runs it when
 * that says so. Returns the number listed; 0 when not leader.
 * Thread: tick (fn runs on it). Blocks: no.
 */
ODBC_LEADER_EXTERN int odbc_leader_offers(odbc_leader_t *h,
                                          odbc_leader_fire_fn fn, void *ctx);

/*
 * Pauses (paused 1) or resumes (0) job on every host, durably: while
 * paused, odbc_leader_claim_fire() refuses its fires
 * (ODBC_LEADER_CLAIM_PAUSED; odbc_leader_claim() returns 0) and records
 * them skipped. Needs no leadership. When the handle's namespace names a
 * sharded group (odbc_leader_group_create()), the pause is recorded in the
 * namespace of the job's shard, where the group's claims look for it.
 * Returns 0, ODBC_LEADER_ENOLIFECYCLE or another negative error.
 * Owns: job borrowed. Thread: tick. Blocks: yes: one round trip (two for a
 * group: the first reads its shard count).
 */
ODBC_LEADER_EXTERN int odbc_leader_pause_job(odbc_leader_t *h, const char *job,
                                             int paused);

/*
 * Asks for one run of job now: a pending fire, offered to the leader of
 * the namespace at its next tick (odbc_leader_offers()), keyed below 0 so
 * that it never collides with a nominal time; it runs once. Needs no
 * leadership. Returns 0 with the key in *key (when not NULL),
 * ODBC_LEADER_ENOLIFECYCLE, ODBC_LEADER_EGROUPOFFER when the namespace
 * names a sharded group, or another negative error.
 * Owns: job borrowed. Thread: tick. Blocks: yes: one round trip (two when
 * the namespace names a group).
 */
ODBC_LEADER_EXTERN int odbc_leader_trigger_job(odbc_leader_t *h,
                                               const char *job, int64_t *key);

/* Calls fn(ctx, job) for each job of the namespace that has fires or a
 * pause record, by name (job borrowed for the call); for a namespace that
 * names a sharded group, the jobs of each of its shards, shard by shard.
 * Returns the number of jobs, ODBC_LEADER_ENOLIFECYCLE or another negative
 * error.
 * Thread: tick (fn runs on it). Blocks: yes: one round trip (for a group,
 * one more and one per shard). */
ODBC_LEADER_EXTERN int odbc_leader_list_jobs(odbc_leader_t *h,
                                             odbc_leader_job_fn fn, void *ctx);

/*
 * The fence predicate of this handle's dialect and table prefix
 * (docs/fencing.md): the SELECT a job puts inside "AND EXISTS ( ... )" in
 * the WHERE clause of its own writes, so that a write applies only while
 * its term holds, by the database clock; "?" for its two parameters, the
 * namespace and then the term. What `odbc-leader fence --bare` prints, for
 * the dialect this handle chose. Writes it NUL-terminated into out (len
 * bytes, cut as snprintf cuts; out may be NULL when len is 0) and returns
 * its length (>= len: out was too short), or ODBC_LEADER_EDIALECT (a
 * dialect without a fence, or one that binds other parameters: the last
 * error says which) or ODBC_LEADER_EINVAL.
 * Owns: out is the caller's. Thread: tick (a reconnect may load the
 * dialect again). Blocks: no (no I/O).
 */
ODBC_LEADER_EXTERN int odbc_leader_fence_sql(odbc_leader_t *h, char *out,
                                             size_t len);

/*
 * Says how this process computes the nominal times of job's fires
 * (docs/schedules.md): its schedule identity. Every later claim of a fire
 * of job (nominal time > 0) first checks it against the identity the
 * ledger recorded for job; the first claim records it. A claim computed by
 * another identity is refused with ODBC_LEADER_ESCHEDULE (nothing is
 * claimed; the refusal is counted, odbc_leader_list_schedules()), so two
 * hosts that compute different times for "the same" fire, in different
 * time zones or by engines with other DST rules, never both run it.
 *   expr:   the schedule in the engine's own syntax, as the host wrote it
 *           ("cron 0 9 * * *", "every 60s"); NULL forgets job's identity
 *           (its claims are no longer checked).
 *   tz:     the IANA time zone the engine computes in ("Europe/Berlin");
 *           NULL: the host's zone, named by odbc_leader_local_zone(); "":
 *           none, for schedules that no zone changes (fixed intervals).
 *   engine: the engine and its DST rule ("quartz-2.3 (gap: ..., ...)").
 * Returns 0, ODBC_LEADER_EINVAL (a bad name or part: the last error says
 * which) or ODBC_LEADER_ECONFIG (the host's zone has no IANA name).
 * Owns: the strings are borrowed for the call (copied). Thread: tick.
 * Blocks: no (no I/O).
 */
ODBC_LEADER_EXTERN int
odbc_leader_set_schedule(odbc_leader_t *h, const char *job, const char *expr,
                         const char *tz, const char *engine);

/*
 * The IANA name of the host's time zone, as the C library computes local
 * time: TZ (":Area/City", "Area/City" or a path under a zoneinfo
 * directory), else the link /etc/localtime (else /etc/timezone), else
 * "UTC" (glibc's default when /etc/localtime is missing). The aliases of
 * UTC ("Etc/UTC", "Zulu", ...) are named "UTC". Writes it NUL-terminated
 * into out (len bytes) and returns 0, or ODBC_LEADER_ECONFIG when the zone
 * has no such name (TZ="EST5EDT,M3.2.0,M11.1.0", a copied file), or
 * ODBC_LEADER_EINVAL when out is too short.
 * Owns: out is the caller's. Thread: any. Blocks: no (reads a link).
 */
ODBC_LEADER_EXTERN int odbc_leader_local_zone(char *out, size_t len);

/*
 * An operator changes the schedule identity job's fires are recorded
 * under, deliberately: to identity (a schedule as listed by
 * odbc_leader_list_schedules(), e.g. the refused one), or with identity
 * NULL to none, so that the next claim records its own. Refusals are
 * counted from 0 again. For a namespace that names a sharded group, in
 * the job's shard. Needs no leadership. Returns 0,
 * ODBC_LEADER_ENOLIFECYCLE (the dialect keeps no schedules) or another
 * negative error.
 * Owns: borrowed. Thread: tick. Blocks: yes: one round trip (two for a
 * group).
 */
ODBC_LEADER_EXTERN int odbc_leader_reschedule_job(odbc_leader_t *h,
                                                  const char *job,
                                                  const char *identity);

/* Calls fn(ctx, schedule) for each job of the namespace with a recorded
 * schedule or refused claims, by name (borrowed for the call); for a
 * namespace that names a sharded group, shard by shard. Returns the
 * number listed, ODBC_LEADER_ENOLIFECYCLE or another negative error.
 * Thread: tick (fn runs on it). Blocks: yes: one round trip (for a group,
 * one more and one per shard). */
ODBC_LEADER_EXTERN int odbc_leader_list_schedules(odbc_leader_t *h,
                                                  odbc_leader_schedule_fn fn,
                                                  void *ctx);

/* A schedule engine's next-fire function, as a binding hands it to the
 * first-pass rule: the first fire time (epoch ms) strictly after ms, or -1
 * when there is none. */
typedef int64_t (*odbc_leader_next_fn)(void *ctx, int64_t ms);
/* 1 when the instants a and b (epoch ms) show one wall time in the job's
 * zone, else 0. */
typedef int (*odbc_leader_same_wall_fn)(void *ctx, int64_t a, int64_t b);

/*
 * The first-pass rule (docs/schedules.md): 1 when fire time t (epoch ms,
 * >= 0) of an engine is the second pass of a wall time the autumn change
 * repeats (same_wall(t - 60 or 30 minutes, t)) and next, asked from that
 * first pass, answers a time after t: a daily 01:30's second 01:30, which
 * some engines compute only when asked from within the repeated hour,
 * while a host that ran through ran the first under another key. Such a
 * time is not to be run. 0 for any other time (a schedule every 15
 * minutes keeps its times in the repeated hour), or ODBC_LEADER_EINVAL
 * (next or same_wall NULL, t negative).
 * Owns: nothing; next and same_wall are called with ctx during the call.
 * Thread: any. Blocks: no (only on what the callbacks do).
 */
ODBC_LEADER_EXTERN int
odbc_leader_second_pass(odbc_leader_next_fn next,
                        odbc_leader_same_wall_fn same_wall, void *ctx,
                        int64_t t);

/*
 * next kept to the first pass: the first fire time after ms that
 * odbc_leader_second_pass() does not drop (at most four dropped ones in a
 * row are skipped). Writes it to *out and returns 1, or writes -1 and
 * returns 0 when next has none, or ODBC_LEADER_EINVAL (a NULL argument).
 * Owns: out is the caller's. Thread: any. Blocks: no.
 */
ODBC_LEADER_EXTERN int
odbc_leader_first_pass_next(odbc_leader_next_fn next,
                            odbc_leader_same_wall_fn same_wall, void *ctx,
                            int64_t ms, int64_t *out);

/* The catch-up policies (docs/catch-up.md): which of a job's missed fires
 * a leader claims after an election, an outage or a pause. */
enum odbc_leader_catch_up_policy {
    ODBC_LEADER_CATCH_UP_SKIP = 0,   /* none (the present fire only) */
    ODBC_LEADER_CATCH_UP_LATEST = 1, /* the newest one, for all of them */
    ODBC_LEADER_CATCH_UP_ALL = 2     /* each, the newest cap of them */
};

/* A job's catch-up policy: "skip", "latest" or "all[:CAP]" within a grace
 * on the database clock (odbc_leader_catch_up_parse() fills policy and
 * cap from the text). */
struct odbc_leader_catch_up {
    size_t struct_size; /* sizeof(struct odbc_leader_catch_up) */
    int policy;         /* enum odbc_leader_catch_up_policy */
    int cap;            /* ALL: at most this many, the newest (1 .. 10000; 0:
                           ODBC_LEADER_CATCH_UP_CAP) */
    int64_t grace_ms;   /* how old a missed fire may be and still run, by the
                           database clock (>= 0) */
};

#define ODBC_LEADER_CATCH_UP_CAP 100       /* cap 0 means this */
#define ODBC_LEADER_CATCH_UP_CAP_MAX 10000 /* and the largest */
/* odbc_leader_catch_up*() flag: the newest time handed in is the fire due
 * now (on time, not missed): every policy claims it, whatever its age */
#define ODBC_LEADER_CATCH_UP_PRESENT 1

/*
 * Parses a catch-up policy as operators write it ("skip", "latest", "all"
 * or "all:CAP") into out->policy and out->cap; out->grace_ms is left as
 * it is. Returns 0, or ODBC_LEADER_EINVAL (out unchanged) for another
 * text. Thread: any. Blocks: no.
 */
ODBC_LEADER_EXTERN int
odbc_leader_catch_up_parse(const char *text, struct odbc_leader_catch_up *out);

/*
 * The catch-up policy p itself, with no I/O: of a job's fire times
 * times[0 .. n) (ascending, as its engine computes them, not yet run
 * here), which to claim when the ledger's latest nominal time of the job
 * is last_ms (0: it has none) and the database clock reads now_ms. A
 * missed time may run when it is at most p->grace_ms older than now_ms
 * and, under LATEST, later than last_ms (a later fire ran and stands for
 * it; ALL claims each, a claim of one that ran answering taken). With
 * ODBC_LEADER_CATCH_UP_PRESENT the newest time is the present fire:
 * claimed under every policy (under SKIP and LATEST when later than
 * last_ms), and under LATEST it stands for the missed ones. A job without a
 * fire in the ledger (last_ms 0) catches up nothing: nothing says it was
 * scheduled then. The claims are times[*first .. *first + count), a contiguous
 * run, oldest first. Returns count (>= 0), or ODBC_LEADER_EINVAL (p, its
 * policy, cap or grace, times out of order or more than
 * ODBC_LEADER_CATCH_UP_CAP_MAX of them, first NULL).
 * Owns: all borrowed. Thread: any. Blocks: no.
 */
ODBC_LEADER_EXTERN int
odbc_leader_catch_up_select(const struct odbc_leader_catch_up *p, int flags,
                            int64_t now_ms, int64_t last_ms,
                            const int64_t *times, size_t n, size_t *first);

/*
 * odbc_leader_catch_up_select() with last_ms and now_ms read from the
 * ledger: job's latest nominal fire time and the database clock, so every
 * host that computes job's times alike picks the same fires after a
 * failover. The caller then claims each (odbc_leader_claim_fire()).
 * Returns the count, ODBC_LEADER_EINVAL, ODBC_LEADER_ENOLIFECYCLE (the
 * dialect lists no jobs) or another negative error.
 * Owns: borrowed. Thread: tick. Blocks: yes: two round trips (whether
 * the namespace names a sharded group, then the read, in the job's shard
 * for a group); odbc_leader_group_catch_up() makes only the read.
 */
ODBC_LEADER_EXTERN int
odbc_leader_catch_up(odbc_leader_t *h, const char *job,
                     const struct odbc_leader_catch_up *p, int flags,
                     const int64_t *times, size_t n, size_t *first);

/* Reads one fire of the ledger into *out (the caller's). Returns 1 when
 * found, 0 when the fire was never claimed (or retention deleted it), or a
 * negative error.
 * Owns: job borrowed for the call. Thread: tick. Blocks: yes: one round
 * trip. */
ODBC_LEADER_EXTERN int odbc_leader_read_fire(odbc_leader_t *h, const char *job,
                                             int64_t fire_ms,
                                             struct odbc_leader_fire *out);

/* odbc_leader_read_fire() that fills every member of the lifecycle too
 * (state, attempt, max_attempts): out_size is sizeof(*out) as the caller
 * built it, and the library writes at most that many bytes.
 * Owns: job borrowed for the call. Thread: tick. Blocks: yes: one round
 * trip. */
ODBC_LEADER_EXTERN int
odbc_leader_read_fire_ex(odbc_leader_t *h, const char *job, int64_t fire_ms,
                         struct odbc_leader_fire *out, size_t out_size);

/* Calls fn(ctx, fire) for each fire of the namespace's ledger (of job only,
 * unless job is NULL or ""), oldest fire first; the fire is borrowed for
 * the call. Returns the number of fires or a negative error.
 * Thread: tick (fn runs on it). Blocks: yes: one round trip. */
ODBC_LEADER_EXTERN int odbc_leader_list_fires(odbc_leader_t *h, const char *job,
                                              odbc_leader_fire_fn fn,
                                              void *ctx);

/* Calls fn(ctx, election) for each term of the namespace's election log,
 * oldest term first; the election is borrowed for the call. Rows older
 * than LeaderElectionRetention are deleted by the leaders; a sharded
 * group's shards have no rows. Returns the number of terms, or
 * ODBC_LEADER_ENOELECTIONS (the dialect keeps no log: a site's dialect
 * file of an older schema) or another negative error.
 * Thread: tick (fn runs on it). Blocks: yes: one round trip. */
ODBC_LEADER_EXTERN int odbc_leader_list_elections(odbc_leader_t *h,
                                                  odbc_leader_election_fn fn,
                                                  void *ctx);

/*
 * Copies the handle's last error into *out (the caller's): the negative
 * code a call of this handle last returned, its class refined by the
 * driver's SQLSTATE (a refused login is CONFIG where a refused connection
 * is TRANSIENT), and the driver's SQLSTATE, native code and text when the
 * error came from the driver. A later success does not clear it;
 * ODBC_LEADER_EBACKOFF does not replace the failure it waits after.
 * Returns the code (0 when no call has failed yet), or ODBC_LEADER_EINVAL
 * when h or out is NULL.
 * Thread: tick. Blocks: no.
 */
ODBC_LEADER_EXTERN int
odbc_leader_last_error(const odbc_leader_t *h,
                       struct odbc_leader_error_info *out);

/* Resigns if leader, unregisters, disconnects and frees h. NULL is a no-op.
 * Owns: takes h. Thread: tick (no other thread may use h any more).
 * Blocks: yes: up to two round trips. */
ODBC_LEADER_EXTERN void odbc_leader_destroy(odbc_leader_t *h);

/*
 * Sharded groups (docs/protocol.md, "Groups"): one handle, one connection
 * and one round trip per tick lead a share of a group's shards. The group
 * is LeaderNamespace, its size LeaderShards (required; every member of a
 * group must give the same); shard s is the namespace "GROUP/s", with its
 * own lease, term, fences and fire ledger. The live members spread the
 * shards evenly among themselves; a shard moves from one to another only
 * after the first has stopped its work and released it.
 */
typedef struct odbc_leader_group odbc_leader_group_t;

/*
 * Parses config as odbc_leader_create() does (LeaderShards required),
 * connects and creates the group's shard rows that are missing. A group
 * found in the database with another shard count is refused
 * (ODBC_LEADER_ECONFIG). cb->on_shard_change reports each shard's
 * transitions; on_change is not used.
 * Owns: as odbc_leader_create(). Thread: any. Blocks: yes: connect,
 * schema check, the group's rows.
 */
ODBC_LEADER_EXTERN int
odbc_leader_group_create(odbc_leader_group_t **out, const char *config,
                         const struct odbc_leader_callbacks *cb, char *err,
                         size_t errlen);

/*
 * One step of the member: one statement heartbeats it, renews every shard
 * it leads, releases the shards it hands over (their stop was reported
 * before) and takes the shards the assignment gives it that are free.
 * Returns the number of shards led after the step, or a negative error
 * (leadership of each shard then survives until its trust window ends).
 * *next_tick_ms (when not NULL) is the delay until the next useful tick.
 * Owns: nothing. Thread: tick. Blocks: yes: one round trip, or a
 * reconnect.
 */
ODBC_LEADER_EXTERN int odbc_leader_group_tick(odbc_leader_group_t *g,
                                              uint32_t *next_tick_ms);

/* The group's shard count (LeaderShards); 0 for NULL.
 * Thread: any. Blocks: no. */
ODBC_LEADER_EXTERN uint32_t
odbc_leader_group_shards(const odbc_leader_group_t *g);

/* The shard of key in a group of shards shards (>= 1): FNV-1a 64 of the
 * key's bytes modulo shards (docs/abi.md has test vectors). Every member
 * and every binding maps a job to the same shard. 0 when key is NULL or
 * shards is 0. Thread: any. Blocks: no. */
ODBC_LEADER_EXTERN uint32_t odbc_leader_shard_of(const char *key,
                                                 uint32_t shards);

/* The term of shard s led by this member and, in *valid_for_ms (when not
 * NULL), how long its trust window still runs; 0 (and 0) when not led or
 * s is out of range. Thread: any (no I/O, no lock). Blocks: no. */
ODBC_LEADER_EXTERN int64_t odbc_leader_group_leadership(
    const odbc_leader_group_t *g, uint32_t shard, uint32_t *valid_for_ms);

/* The number of shards this member leads now (inside their windows).
 * Thread: any. Blocks: no. */
ODBC_LEADER_EXTERN uint32_t odbc_leader_group_led(const odbc_leader_group_t *g);

/* This member's candidate id; borrowed from g until destroy.
 * Thread: any. Blocks: no. */
ODBC_LEADER_EXTERN const char *
odbc_leader_group_id(const odbc_leader_group_t *g);

/* odbc_leader_claim() for the shard of job (odbc_leader_shard_of()):
 * fenced by that shard's term, tried once more as odbc_leader_claim() is.
 * ODBC_LEADER_ENOTLEADER when this member does not lead it. Reopens a
 * lost connection first, as odbc_leader_group_finish() does. Thread:
 * tick. Blocks: yes: one round trip (more after a lost connection). */
ODBC_LEADER_EXTERN int odbc_leader_group_claim(odbc_leader_group_t *g,
                                               const char *job,
                                               int64_t fire_ms);

/* odbc_leader_claim_fire() for the shard of job, as
 * odbc_leader_group_claim() does; a paused job's fire answers
 * ODBC_LEADER_CLAIM_PAUSED and is recorded skipped. A group member claims
 * at most once: max_attempts is taken as 1 (out->max_attempts says so)
 * and a key below 0 (a run-now) is ODBC_LEADER_EGROUPOFFER: a group's
 * shards take no offered fires (docs/lifecycle.md). out may be NULL.
 * Owns: job borrowed, *out the caller's. Thread: tick. Blocks: yes: one
 * round trip (two or three to record a skip or to tell why not). */
ODBC_LEADER_EXTERN int
odbc_leader_group_claim_fire(odbc_leader_group_t *g, const char *job,
                             int64_t fire_ms, int max_attempts,
                             struct odbc_leader_claim *out);

/* odbc_leader_pause_job() for job in its shard's namespace: every member
 * of the group, whichever leads that shard, refuses its fires while it is
 * paused. Returns 0, ODBC_LEADER_ENOLIFECYCLE or another negative error.
 * Owns: job borrowed. Thread: tick. Blocks: yes: one round trip. */
ODBC_LEADER_EXTERN int odbc_leader_group_pause_job(odbc_leader_group_t *g,
                                                   const char *job, int paused);

/* odbc_leader_set_schedule() for a job of the group: its claims are
 * checked in the job's shard. Thread: tick. Blocks: no. */
ODBC_LEADER_EXTERN int odbc_leader_group_set_schedule(odbc_leader_group_t *g,
                                                      const char *job,
                                                      const char *expr,
                                                      const char *tz,
                                                      const char *engine);

/* odbc_leader_catch_up() for a job of the group: the ledger of the job's
 * shard. Thread: tick. Blocks: yes: one round trip. */
ODBC_LEADER_EXTERN int
odbc_leader_group_catch_up(odbc_leader_group_t *g, const char *job,
                           const struct odbc_leader_catch_up *p, int flags,
                           const int64_t *times, size_t n, size_t *first);

/* odbc_leader_fence_sql() for the group's dialect: a shard's writes bind
 * the shard's namespace ("GROUP/s") and its term.
 * Owns: out is the caller's. Thread: tick. Blocks: no. */
ODBC_LEADER_EXTERN int odbc_leader_group_fence_sql(odbc_leader_group_t *g,
                                                   char *out, size_t len);

/* odbc_leader_finish() for a fire this member claimed in job's shard.
 * Thread: tick. Blocks: yes: one round trip. */
ODBC_LEADER_EXTERN int odbc_leader_group_finish(odbc_leader_group_t *g,
                                                const char *job,
                                                int64_t fire_ms, int status);

/* As odbc_leader_last_error(). Thread: tick. Blocks: no. */
ODBC_LEADER_EXTERN int
odbc_leader_group_last_error(const odbc_leader_group_t *g,
                             struct odbc_leader_error_info *out);

/* Leaves the group: reports every led shard stopped, releases them all
 * and unregisters in one round trip, disconnects and frees. NULL is a
 * no-op. Owns: takes g. Thread: tick. Blocks: yes: one round trip. */
ODBC_LEADER_EXTERN void odbc_leader_group_destroy(odbc_leader_group_t *g);

/* A static message for an error code; never NULL.
 * Thread: any. Blocks: no. */
ODBC_LEADER_EXTERN const char *odbc_leader_strerror(int rc);

/* The class of an error code (enum odbc_leader_error_class) without the
 * driver's detail: ODBC_LEADER_CLASS_NONE for 0 and positive values,
 * ODBC_LEADER_CLASS_FATAL for a code this library does not know.
 * odbc_leader_last_error() refines it with the SQLSTATE.
 * Thread: any. Blocks: no. */
ODBC_LEADER_EXTERN int odbc_leader_error_class(int rc);

/* The version of the library loaded, "MAJOR.MINOR.PATCH" (static).
 * Thread: any. Blocks: no. */
ODBC_LEADER_EXTERN const char *odbc_leader_version(void);

#ifdef __cplusplus
}
#endif
#endif /* ODBC_LEADER_H */
