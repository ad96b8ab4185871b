/* SPDX-License-Identifier: MIT */
/*
 * elector.c: the election state machine.
 *
 * A follower attempts to take the lease; a leader renews the exact term it
 * holds. After each successful attempt or renewal the leader trusts its
 * term until attempt start + TTL - safety margin on the local
 * CLOCK_BOOTTIME, and odbc_leader__elector_is_leader() compares against that
 * deadline with one atomic load, so leadership lapses on its own when ticks
 * stop. Errors never extend trust: a leader that cannot renew keeps its
 * last window and steps down when it ends.
 *
 * Expiry is decided by the database clock, and a forward step of that
 * clock ends a lease early in real time while its leader still trusts
 * its window. So a follower takes over a lease someone holds only when
 * it has itself watched that exact row (term and expires_at_ms) go
 * unrenewed for one TTL on its own CLOCK_BOOTTIME: the attempt carries
 * the watched row and the database takes the lease only if it is still
 * that row and expired (see watch(), plan() and docs/protocol.md,
 * "Takeover: the watch"). The holder's window began before the renewal
 * that wrote that row, so it has ended by then whatever the database
 * clock did. A released lease (resigned, handed over) is taken at once.
 * Followers read the lease just after the leader's next renewal is due,
 * so that a watch starts close to the renewal it follows and a crashed
 * leader is replaced about one TTL after its last renewal, as before.
 */
#include <build_config.h>

#include <stdatomic.h>
#include <string.h>
#include <syslog.h>

#include "clock.h"
#include "elector.h"
#include "error.h"
#include "log.h"
#include "shard.h"

#define NS_PER_MS INT64_C(1000000)

/* Earliest time a follower re-attempts after seeing a lease that is about
 * to expire, so clock granularity cannot make it spin. */
#define MIN_RETRY_NS (10 * NS_PER_MS)
/* Slack added to the database's remaining lease time when a follower
 * schedules its next attempt at the expiry. */
#define EXPIRY_SLACK_NS (5 * NS_PER_MS)
/* A follower woken by a leader that holds no wake-up lock waits again
 * after this long, doubling each time the same term wakes it. */
#define REWAIT_MIN_NS (25 * NS_PER_MS)
/* How long a new leader waits for followers that hold the wake-up lock
 * for a moment, when its attempt could not take it. Short: a paused
 * former leader's session may hold the lock for as long as the pause, and
 * every millisecond here delays the winning tick's return (and so the
 * start of a supervised command); a busy hold only costs the followers
 * their fast wake-up until the next renewal takes the lock. */
#define HOLD_BUDGET_MS 25
/* A follower reads the lease this long after the leader's next renewal
 * should have committed, and when it had not, again after a gap that
 * starts at WATCH_MIN_NS and doubles, up to a quarter of the renew
 * interval (at most half the margin): how long after a renewal a watch
 * can start, when the leader is late. */
#define WATCH_SLACK_NS (20 * NS_PER_MS)
#define WATCH_MIN_NS (25 * NS_PER_MS)
/* The smallest jump of (database time - local time) between two answers
 * that counts as a clock step; the bound is half the safety margin. */
#define MIN_STEP_BOUND_NS (10 * NS_PER_MS)
/* While reconnects keep failing, a warning this often (the attempts in
 * between are logged at debug level). */
#define NS_PER_S (1000 * NS_PER_MS)
#define OUTAGE_REMIND_NS (60 * NS_PER_S)

/* xorshift64*: returns the next pseudo-random number; state lives in e. */
static uint64_t next_random(struct odbc_leader__elector *e) {
    uint64_t x = e->rng;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    e->rng = x;
    return x * UINT64_C(2685821657736338717);
}

/* Returns d scaled by a random factor in [0.8, 1.2). */
static int64_t jitter(struct odbc_leader__elector *e, int64_t d) {
    uint64_t r = next_random(e) % 400;

    return d / 1000 * (int64_t)(800 + r);
}

void odbc_leader__elector_init(struct odbc_leader__elector *e,
                               const struct odbc_leader__elector_conf *c) {
    memset(e, 0, sizeof(*e));
    e->ops = c->ops;
    e->port = c->port;
    odbc_leader__candidate_init(&e->cand, &c->cand);
    e->no_watch = c->test_no_watch;
    e->backoff_min_ns = 100 * NS_PER_MS;
    e->backoff_max_ns = e->cand.renew_ns;
    if (e->backoff_max_ns < 1000 * NS_PER_MS)
        e->backoff_max_ns = 1000 * NS_PER_MS;
    if (e->backoff_max_ns > 10000 * NS_PER_MS)
        e->backoff_max_ns = 10000 * NS_PER_MS;
    e->connected = c->connected;
    if (c->ops->wait != NULL && c->wait_ms > 0)
        e->wait_ns = c->wait_ms * NS_PER_MS;
    e->report_resign = c->report_resign;
    e->step_bound_ns = e->cand.margin_ns / 2;
    if (e->step_bound_ns < MIN_STEP_BOUND_NS)
        e->step_bound_ns = MIN_STEP_BOUND_NS;
    e->rng = odbc_leader__fnv1a64(c->cand.id, strlen(c->cand.id)) ^
             (uint64_t)e->cand.now_ns(e->cand.clock_ctx);
    if (e->rng == 0)
        e->rng = 1;
    atomic_init(&e->trusted_until_ns, 0);
    atomic_init(&e->term, 0);
    atomic_init(&e->clock_steps, 0);
    atomic_init(&e->last_step_ms, 0);
}

int64_t odbc_leader__elector_clock_steps(const struct odbc_leader__elector *e,
                                         int64_t *last_step_ms) {
    if (last_step_ms != NULL)
        *last_step_ms = atomic_load(&e->last_step_ms);
    return atomic_load(&e->clock_steps);
}

/*
 * Records a database time db_ms read by a statement that ran between the
 * local times lo and hi, and compares it with the previous reading: the
 * local time between the two readings lies in [lo - obs_hi, hi - obs_lo],
 * so a database delta outside that range by more than the step bound is a
 * step of the database clock (a pause of this process only widens the
 * range). Steps are logged and counted (odbc_leader_clock_steps()); safety
 * does not rest on seeing them: a takeover waits for its watch.
 */
static void observe(struct odbc_leader__elector *e, int64_t lo, int64_t hi,
                    int64_t db_ms) {
    int64_t step = 0;

    if (e->have_obs) {
        int64_t db_d = (db_ms - e->obs_db_ms) * NS_PER_MS;
        int64_t max_d = hi - e->obs_lo_ns;
        int64_t min_d = lo - e->obs_hi_ns;

        if (db_d > max_d + e->step_bound_ns)
            step = db_d - max_d;
        else if (db_d < min_d - e->step_bound_ns)
            step = db_d - min_d;
    }
    e->have_obs = 1;
    e->obs_lo_ns = lo;
    e->obs_hi_ns = hi;
    e->obs_db_ms = db_ms;
    if (step == 0)
        return;
    atomic_store(&e->last_step_ms, step / NS_PER_MS);
    atomic_fetch_add(&e->clock_steps, 1);
    if (step < 0) {
        odbc_leader__logf(&e->cand.log, LOG_WARNING,
                          "database clock step: the database clock went back "
                          "by about %lld ms against this host's (leases "
                          "last longer; safe)",
                          (long long)(-step / NS_PER_MS));
        return;
    }
    odbc_leader__logf(&e->cand.log, LOG_WARNING,
                      "database clock step: the database clock jumped ahead "
                      "by about %lld ms against this host's (leases end "
                      "early in database time; a held lease is still taken "
                      "only after it was watched for one TTL)",
                      (long long)(step / NS_PER_MS));
}

/* Records the lease row an answer that arrived at local time hi showed
 * (res->found): a row other than the one watched so far (another term,
 * or another expires_at_ms: a renewal) starts a new watch at hi; the same
 * row keeps the first sight. Returns 1 when the watch started anew. */
static int watch(struct odbc_leader__elector *e,
                 const struct odbc_leader__result *res, int64_t hi) {
    if (res->term == e->seen_term && res->expires_at_ms == e->seen_expires_ms)
        return 0;
    e->seen_term = res->term;
    e->seen_expires_ms = res->expires_at_ms;
    e->seen_at_ns = hi;
    e->seen_noted = 0;
    return 1;
}

/* The local time from which the watched row may be taken (when it has
 * expired in database time): one TTL after its first sight, or at once
 * with the test-only LeaderTestNoWatch. */
static int64_t watch_floor(const struct odbc_leader__elector *e) {
#ifdef ODBC_LEADER_TEST_HOOKS
    if (e->no_watch)
        return e->seen_at_ns;
#endif
    return e->seen_at_ns + e->cand.ttl_ns;
}

int odbc_leader__elector_is_leader(const struct odbc_leader__elector *e) {
    int64_t until =
        atomic_load_explicit(&e->trusted_until_ns, memory_order_acquire);

    if (until == 0)
        return 0;
    return e->cand.now_ns(e->cand.clock_ctx) < until;
}

int64_t odbc_leader__elector_leadership(const struct odbc_leader__elector *e,
                                        uint32_t *valid_for_ms) {
    int64_t until =
        atomic_load_explicit(&e->trusted_until_ns, memory_order_acquire);
    int64_t term = atomic_load_explicit(&e->term, memory_order_relaxed);
    int64_t left = until != 0 ? until - e->cand.now_ns(e->cand.clock_ctx) : 0;

    if (left <= 0 || term == 0) {
        if (valid_for_ms != NULL)
            *valid_for_ms = 0;
        return 0;
    }
    if (valid_for_ms != NULL)
        *valid_for_ms = left / NS_PER_MS > UINT32_MAX
                            ? UINT32_MAX
                            : (uint32_t)(left / NS_PER_MS);
    return term;
}

int64_t odbc_leader__elector_term(const struct odbc_leader__elector *e) {
    return odbc_leader__elector_leadership(e, NULL);
}

/* Calls on_change when (is_leader, term, leader_id) differs from what was
 * last reported. leader_id may be NULL or "" for "no leader known". */
static void report(struct odbc_leader__elector *e, int is_leader, int64_t term,
                   const char *leader_id) {
    const char *lid = leader_id != NULL ? leader_id : "";

    if (e->rep_valid && e->rep_leader == is_leader && e->rep_term == term &&
        strcmp(e->rep_id, lid) == 0)
        return;
    e->rep_valid = 1;
    e->rep_leader = is_leader;
    e->rep_term = term;
    strncpy(e->rep_id, lid, sizeof(e->rep_id) - 1);
    e->rep_id[sizeof(e->rep_id) - 1] = '\0';
    if (e->cand.cb.on_change != NULL)
        e->cand.cb.on_change(e->cand.cb.ctx, is_leader, term,
                             lid[0] != '\0' ? lid : NULL);
}

/* The test-only lengthening of the trust window past the lease
 * (LeaderTestTrustExtra), in ns; always 0 in a build configured without
 * --enable-test-hooks. */
static int64_t trust_extra_ns(const struct odbc_leader__elector *e) {
#ifdef ODBC_LEADER_TEST_HOOKS
    return e->cand.trust_extra_ns;
#else
    (void)e;
    return 0;
#endif
}

/* Publishes a new or renewed term: the term first, then the deadline, so
 * a reader that sees the deadline sees the term. */
static void trust(struct odbc_leader__elector *e, int64_t term,
                  int64_t attempt_start_ns) {
    e->leader = 1;
    e->held_term = term;
    atomic_store_explicit(&e->term, term, memory_order_relaxed);
    atomic_store_explicit(&e->trusted_until_ns,
                          attempt_start_ns + e->cand.ttl_ns -
                              e->cand.margin_ns + trust_extra_ns(e),
                          memory_order_release);
}

/* Stops being leader locally and reports it; leader_id is the new leader
 * when known (may be NULL). */
static void step_down(struct odbc_leader__elector *e, const char *why,
                      int64_t new_term, const char *leader_id) {
    if (!e->leader)
        return;
    atomic_store_explicit(&e->trusted_until_ns, 0, memory_order_release);
    atomic_store_explicit(&e->term, 0, memory_order_relaxed);
    odbc_leader__logf(&e->cand.log, LOG_NOTICE,
                      "stepping down from term %lld: %s",
                      (long long)e->held_term, why);
    e->leader = 0;
    e->held_term = 0;
    e->resign_reported = 0;
    e->must_release = e->ops->release != NULL;
    report(e, 0, new_term, leader_id);
}

/* Schedules the next reconnect after a failure at now. */
static void schedule_reconnect(struct odbc_leader__elector *e, int64_t now) {
    if (e->backoff_ns == 0)
        e->backoff_ns = e->backoff_min_ns;
    else if (e->backoff_ns < e->backoff_max_ns / 2)
        e->backoff_ns *= 2;
    else
        e->backoff_ns = e->backoff_max_ns;
    e->reconnect_at_ns = now + jitter(e, e->backoff_ns);
    e->next_ns = e->reconnect_at_ns;
}

/* Handles a failed operation: a lost connection, or an operation whose
 * outcome is unknown (a failed COMMIT, a client-side timeout: a kept
 * connection could still hold its transaction and, on SQLite, the file
 * lock), disconnects and backs off; other errors retry after a short
 * delay. Returns rc. */
static int failed(struct odbc_leader__elector *e, int rc, int64_t now) {
    if (odbc_leader__error_drops_connection(rc)) {
        if (e->connected)
            e->ops->disconnect(e->port);
        e->connected = 0;
        schedule_reconnect(e, now);
        return rc;
    }
    e->next_ns = now + jitter(e, e->backoff_min_ns);
    return rc;
}

/* Lets go of the wake-up lock after a step-down, so waiting followers
 * wake up. Best effort: a failure only costs them the fast wake-up, and
 * a lost connection took the lock with it. */
static void release_lock(struct odbc_leader__elector *e) {
    int rc;

    e->must_release = 0;
    rc = e->ops->release(e->port);
    if (rc < 0)
        odbc_leader__logf(&e->cand.log, LOG_INFO,
                          "releasing the wake-up lock failed: %s",
                          odbc_leader_strerror(rc));
    if (rc == ODBC_LEADER_ECONNLOST)
        failed(e, rc, e->cand.now_ns(e->cand.clock_ctx));
}

/* Takes the wake-up lock after attempt or renew reported it not held
 * (held_flag 0), so that followers can wait on this term. Best effort:
 * without it followers poll. */
static void take_lock(struct odbc_leader__elector *e, int held_flag) {
    int rc;

    if (held_flag != 0 || e->ops->hold == NULL)
        return;
    rc = e->ops->hold(e->port, HOLD_BUDGET_MS);
    odbc_leader__logf(&e->cand.log, LOG_DEBUG, "taking the wake-up lock: %s",
                      rc == 1   ? "held"
                      : rc == 0 ? "busy"
                                : odbc_leader_strerror(rc));
    if (rc == ODBC_LEADER_ECONNLOST)
        failed(e, rc, e->cand.now_ns(e->cand.clock_ctx));
}

/* An attempt or renew whose answer came back after the trust window it
 * opened had closed (what is "won" or "renewed"): such a term is never
 * reported as led; it is handed back at once so a follower need not wait
 * for the lease to run out. Returns ODBC_LEADER_FOLLOWER or the resign's
 * error. */
static int late_answer(struct odbc_leader__elector *e, const char *what) {
    int rc;

    odbc_leader__logf(&e->cand.log, LOG_WARNING,
                      "%s term %lld, but the answer came after its trust "
                      "window: resigning it",
                      what, (long long)e->held_term);
    rc = odbc_leader__elector_resign(e);
    return rc < 0 ? rc : ODBC_LEADER_FOLLOWER;
}

/* The gap between a follower's attempts (each one heartbeats its
 * candidate row): one and a half renew intervals, at most TTL - margin.
 * The watch's reads make most attempts come sooner (see follow()). */
static int64_t beat_gap(const struct odbc_leader__elector *e) {
    int64_t g = e->cand.renew_ns + e->cand.renew_ns / 2;

    return g < e->cand.ttl_ns - e->cand.margin_ns
               ? g
               : e->cand.ttl_ns - e->cand.margin_ns;
}

/* The longest gap between two reads of a lease whose renewal is late: a
 * quarter of the renew interval, at most half the margin, at least
 * WATCH_MIN_NS. */
static int64_t watch_gap_max(const struct odbc_leader__elector *e) {
    int64_t g = e->cand.renew_ns / 4;

    if (g > e->cand.margin_ns / 2)
        g = e->cand.margin_ns / 2;
    return g > WATCH_MIN_NS ? g : WATCH_MIN_NS;
}

/* When to read a lease that someone holds again, after an answer that
 * arrived at local time hi with left ns of the lease left in database
 * time (changed: that answer started the watch anew). Its leader renews
 * every renew interval, so the next renewal is due when TTL - renew of
 * the lease is left; reading just after that starts the watch of that
 * renewal close to it. When that time has passed (the leader is late or
 * dead, or the database clock stepped), the next read comes after a gap
 * that doubles. Database time only times these reads. Returns the local
 * time of the next read. */
static int64_t next_watch(struct odbc_leader__elector *e, int64_t left,
                          int64_t hi, int changed) {
    int64_t due =
        hi + left - (e->cand.ttl_ns - e->cand.renew_ns) + WATCH_SLACK_NS;
    int64_t max = watch_gap_max(e);

    if (due > hi + e->cand.renew_ns + WATCH_SLACK_NS)
        due = hi + e->cand.renew_ns + WATCH_SLACK_NS; /* a backward step, say */
    if (due > hi) {
        e->watch_gap_ns = 0;
        return due;
    }
    if (changed || e->watch_gap_ns == 0)
        e->watch_gap_ns = WATCH_MIN_NS;
    else
        e->watch_gap_ns = 2 * e->watch_gap_ns < max ? 2 * e->watch_gap_ns : max;
    return hi + e->watch_gap_ns;
}

/* Logs, once per watched row, that the database says it expired but the
 * watch holds it back (after a forward step of the database clock, or for
 * a candidate that has just started). */
static void note_floor(struct odbc_leader__elector *e,
                       const struct odbc_leader__result *res, int64_t hi,
                       int64_t floor) {
    if (e->seen_noted)
        return;
    e->seen_noted = 1;
    odbc_leader__logf(&e->cand.log, LOG_INFO,
                      "the lease (term %lld%s%s) expired in database time, "
                      "but this candidate first saw it %lld ms ago: not "
                      "taking it for %lld ms more (a takeover waits until "
                      "the row was watched for one TTL)",
                      (long long)res->term,
                      res->leader_id[0] != '\0' ? ", held by " : ", vacant",
                      res->leader_id,
                      (long long)((hi - e->seen_at_ns) / NS_PER_MS),
                      (long long)((floor - hi) / NS_PER_MS));
}

/* After an answer (found, not won) that arrived at hi for a statement that
 * started at start: when to attempt to take the lease (take_ns) and when
 * to read it again (watch_ns); next_ns is the earliest of them and the
 * heartbeat. A lease reserved for another candidate (vacant, unexpired) is
 * attempted at its expiry; a held lease at its expiry but not before the
 * watch's floor; so is a vacant, expired one that an attempt did not take
 * (a quarantine after a promotion, docs/protocol.md). */
static void plan(struct odbc_leader__elector *e,
                 const struct odbc_leader__result *res, int64_t start,
                 int64_t hi, int changed) {
    int64_t left = (res->expires_at_ms - res->now_ms) * NS_PER_MS;
    int64_t expiry = start + (left > 0 ? left : 0) + EXPIRY_SLACK_NS;
    int64_t floor = watch_floor(e);
    int held = res->leader_id[0] != '\0';

    e->take_ns = expiry;
    if ((held || left <= 0) && floor > expiry)
        e->take_ns = floor;
    if (e->take_ns < start + MIN_RETRY_NS)
        e->take_ns = start + MIN_RETRY_NS;
    e->watch_ns = held ? next_watch(e, left, hi, changed) : INT64_MAX;
    e->next_ns = e->take_ns;
    if (e->watch_ns < e->next_ns)
        e->next_ns = e->watch_ns;
    if (e->beat_ns < e->next_ns)
        e->next_ns = e->beat_ns;
    if (left <= 0 && hi < floor)
        note_floor(e, res, hi, floor);
}

/* A follower that saw another candidate hold the lease waits for it to
 * let go until its next step (see wait_for_leader()), when the dialect
 * has the wait. */
static void arm(struct odbc_leader__elector *e,
                const struct odbc_leader__result *res) {
    if (res->leader_id[0] == '\0' || e->wait_ns == 0)
        return;
    if (res->term != e->armed_term) {
        e->rewait_ns = 0;
        e->wait_after_ns = 0;
    }
    e->armed = 1;
    e->armed_term = res->term;
}

/* The follower's step: try to take the lease, passing the watched row
 * once its floor has passed. Returns the state or a negative error. */
static int attempt(struct odbc_leader__elector *e) {
    struct odbc_leader__result res;
    int64_t start = e->cand.now_ns(e->cand.clock_ctx);
    int64_t seen_term = 0, seen_expires_ms = 0, hi;
    int changed, rc;

    e->armed = 0;
    if (start < e->holdoff_ns) {
        e->next_ns = e->holdoff_ns;
        return ODBC_LEADER_FOLLOWER;
    }
    if (e->seen_term != 0 && start >= watch_floor(e)) {
        seen_term = e->seen_term;
        seen_expires_ms = e->seen_expires_ms;
    }
    e->attempted_ns = start;
    e->beat_ns = start + beat_gap(e);
    memset(&res, 0, sizeof(res));
    rc = e->ops->attempt(e->port, seen_term, seen_expires_ms, &res);
    hi = e->cand.now_ns(e->cand.clock_ctx);
    if (rc < 0)
        return failed(e, rc, hi);
    if (!res.found) {
        /* A lost race (nothing seen): read the new row soon. */
        e->take_ns = e->beat_ns;
        e->watch_ns = hi + WATCH_MIN_NS;
        e->next_ns = e->watch_ns;
        return ODBC_LEADER_FOLLOWER;
    }
    observe(e, start, hi, res.now_ms);
    changed = watch(e, &res, hi);
    if (res.won && strcmp(res.leader_id, e->cand.id) == 0) {
        trust(e, res.term, start);
        if (!odbc_leader__elector_is_leader(e))
            return late_answer(e, "won");
        odbc_leader__logf(&e->cand.log, LOG_NOTICE, "elected: term %lld",
                          (long long)res.term);
        report(e, 1, res.term, e->cand.id);
        e->next_ns = start + e->cand.renew_ns;
        take_lock(e, res.wake_held);
        return ODBC_LEADER_LEADER;
    }
    report(e, 0, res.leader_id[0] != '\0' ? res.term : 0, res.leader_id);
    plan(e, &res, start, hi, changed);
    arm(e, &res);
    return ODBC_LEADER_FOLLOWER;
}

/* The follower's read of the lease between attempts, for the watch: no
 * row, or a vacant one (released, or reserved: perhaps for this
 * candidate), is attempted at once. Returns the state or a negative
 * error. */
static int look(struct odbc_leader__elector *e) {
    struct odbc_leader__result res;
    int64_t lo = e->cand.now_ns(e->cand.clock_ctx);
    int64_t hi;
    int changed, rc;

    memset(&res, 0, sizeof(res));
    rc = e->ops->read(e->port, &res);
    hi = e->cand.now_ns(e->cand.clock_ctx);
    if (rc < 0)
        return failed(e, rc, hi);
    if (!res.found || res.leader_id[0] == '\0')
        return attempt(e);
    observe(e, lo, hi, res.now_ms);
    changed = watch(e, &res, hi);
    report(e, 0, res.leader_id[0] != '\0' ? res.term : 0, res.leader_id);
    plan(e, &res, lo, hi, changed);
    arm(e, &res);
    return ODBC_LEADER_FOLLOWER;
}

/* The follower's step while a live leader is known: block in the wait
 * statement until that leader lets go of its wake-up lock (then attempt
 * at once) or until the budget or the time of the next attempt runs out.
 * A leader that holds no wake-up lock (it crashed, or has not taken it
 * yet) wakes us at once: the attempt then finds the same term, and we
 * wait again after a pause that doubles each time. Returns the state or
 * a negative error. */
static int wait_for_leader(struct odbc_leader__elector *e, int64_t now) {
    int64_t budget = e->next_ns - now;
    int64_t term = e->armed_term;
    int rc;

    if (budget > e->wait_ns)
        budget = e->wait_ns;
    rc = e->ops->wait(e->port, (budget + NS_PER_MS - 1) / NS_PER_MS);
    odbc_leader__logf(&e->cand.log, LOG_DEBUG,
                      "waited up to %lld ms on term %lld's leader: %s",
                      (long long)((budget + NS_PER_MS - 1) / NS_PER_MS),
                      (long long)term,
                      rc == 1   ? "woken"
                      : rc == 0 ? "still held"
                                : "error");
    if (rc < 0) {
        e->armed = 0;
        return failed(e, rc, e->cand.now_ns(e->cand.clock_ctx));
    }
    if (rc == 0) {
        e->rewait_ns = 0;
        return ODBC_LEADER_FOLLOWER;
    }
    rc = attempt(e);
    if (rc == ODBC_LEADER_FOLLOWER && e->armed && e->armed_term == term) {
        e->rewait_ns = e->rewait_ns == 0 ? REWAIT_MIN_NS : 2 * e->rewait_ns;
        e->wait_after_ns = e->cand.now_ns(e->cand.clock_ctx) + e->rewait_ns;
        odbc_leader__logf(&e->cand.log, LOG_DEBUG,
                          "term %lld's leader holds no wake-up lock: "
                          "waiting again in %lld ms",
                          (long long)term,
                          (long long)(e->rewait_ns / NS_PER_MS));
    }
    return rc;
}

/* The follower's step: while armed and nothing is due, wait (or, within
 * a pause, nothing); else attempt, or only read the lease when no attempt
 * is due and one ran less than half a renew interval ago. Returns the
 * state or a negative error. */
static int follow(struct odbc_leader__elector *e, int64_t now) {
    if (e->armed && now < e->next_ns) {
        if (now < e->wait_after_ns)
            return ODBC_LEADER_FOLLOWER;
        return wait_for_leader(e, now);
    }
    if (e->ops->read != NULL && now < e->take_ns && now < e->beat_ns &&
        now - e->attempted_ns < e->cand.renew_ns / 2)
        return look(e);
    return attempt(e);
}

/* The leader's step: renew the exact term held. Falls through to an
 * attempt when the term is gone. Returns the state or a negative error. */
static int renew(struct odbc_leader__elector *e) {
    struct odbc_leader__result res;
    int64_t start = e->cand.now_ns(e->cand.clock_ctx);
    int rc;

    memset(&res, 0, sizeof(res));
    rc = e->ops->renew(e->port, e->held_term, &res);
    if (rc < 0) {
        int64_t until = atomic_load(&e->trusted_until_ns);

        odbc_leader__logf(
            &e->cand.log, LOG_WARNING,
            "renewing term %lld failed (%s); trusting it for "
            "%lld ms more",
            (long long)e->held_term, odbc_leader_strerror(rc),
            (long long)(until > start ? (until - start) / NS_PER_MS : 0));
        return failed(e, rc, e->cand.now_ns(e->cand.clock_ctx));
    }
    if (res.found) {
        int64_t hi = e->cand.now_ns(e->cand.clock_ctx);

        observe(e, start, hi, res.now_ms);
        watch(e, &res, hi);
    }
    if (res.found && res.term == e->held_term && res.resign_requested &&
        !e->report_resign) {
        odbc_leader__logf(&e->cand.log, LOG_NOTICE, "resignation requested%s%s",
                          res.handoff_to[0] != '\0' ? ", handing over to " : "",
                          res.handoff_to);
        rc = odbc_leader__elector_resign(e);
        return rc < 0 ? rc : ODBC_LEADER_FOLLOWER;
    }
    if (res.found && res.term == e->held_term) {
        trust(e, res.term, start);
        if (!odbc_leader__elector_is_leader(e))
            return late_answer(e, "renewed");
        e->next_ns = start + e->cand.renew_ns;
        take_lock(e, res.wake_held);
        if (!res.resign_requested)
            return ODBC_LEADER_LEADER;
        if (!e->resign_reported)
            odbc_leader__logf(&e->cand.log, LOG_NOTICE,
                              "resignation of term %lld requested%s%s: left "
                              "to the host (LeaderResignRequests=report)",
                              (long long)e->held_term,
                              res.handoff_to[0] != '\0' ? ", handing over to "
                                                        : "",
                              res.handoff_to);
        e->resign_reported = 1;
        return ODBC_LEADER_RESIGN_REQUESTED;
    }
    step_down(e, "the term was replaced or expired in the database", 0, NULL);
    return attempt(e);
}

/* Returns the milliseconds from now until the next useful tick, capped by
 * the trust deadline so a leader's host ticks in time to step down. */
static uint32_t delay_ms(const struct odbc_leader__elector *e, int64_t now) {
    int64_t next = e->next_ns;
    int64_t until = atomic_load(&e->trusted_until_ns);
    int64_t d;

    if (e->leader && until != 0 && until < next)
        next = until;
    /* An armed follower's next tick is its next wait. */
    if (!e->leader && e->armed && e->connected && now < e->next_ns &&
        e->wait_after_ns < next)
        next = e->wait_after_ns > now ? e->wait_after_ns : now;
    d = (next - now + NS_PER_MS - 1) / NS_PER_MS;
    if (d < 0)
        d = 0;
    if (d > UINT32_MAX)
        d = UINT32_MAX;
    return (uint32_t)d;
}

/* Logs a failed reconnect. The port has logged the driver's message; an
 * outage of many attempts gives one warning per OUTAGE_REMIND_NS here,
 * the other attempts are logged at debug level. */
static void connect_failed(struct odbc_leader__elector *e, int rc,
                           int64_t now) {
    if (e->outage_failures++ == 0) {
        e->outage_ns = now;
        e->outage_warned_ns = now;
    }
    if (now - e->outage_warned_ns >= OUTAGE_REMIND_NS) {
        e->outage_warned_ns = now;
        odbc_leader__logf(&e->cand.log, LOG_WARNING,
                          "still cannot reconnect: %lld attempts in %lld s "
                          "(%s)",
                          (long long)e->outage_failures,
                          (long long)((now - e->outage_ns) / NS_PER_S),
                          odbc_leader_strerror(rc));
        return;
    }
    odbc_leader__logf(&e->cand.log, LOG_DEBUG, "reconnect failed: %s",
                      odbc_leader_strerror(rc));
}

/* Connects when disconnected and the backoff allows. Returns 0 when
 * connected, else a negative error (EBACKOFF while waiting). */
static int ensure_connected(struct odbc_leader__elector *e, int64_t now) {
    int rc;

    if (e->connected)
        return 0;
    if (now < e->reconnect_at_ns) {
        e->next_ns = e->reconnect_at_ns;
        return ODBC_LEADER_EBACKOFF;
    }
    rc = e->ops->connect(e->port);
    if (rc < 0) {
        connect_failed(e, rc, now);
        schedule_reconnect(e, now);
        return rc;
    }
    if (e->outage_failures > 0)
        odbc_leader__logf(&e->cand.log, LOG_INFO,
                          "connected after %lld failed attempts in %lld ms",
                          (long long)e->outage_failures,
                          (long long)((now - e->outage_ns) / NS_PER_MS));
    else
        odbc_leader__logf(&e->cand.log, LOG_INFO, "connected");
    e->connected = 1;
    e->backoff_ns = 0;
    e->outage_failures = 0;
    return 0;
}

int odbc_leader__elector_tick(struct odbc_leader__elector *e,
                              uint32_t *next_tick_ms) {
    int64_t now = e->cand.now_ns(e->cand.clock_ctx);
    int rc;

    if (e->leader && !odbc_leader__elector_is_leader(e))
        step_down(e, "trust window passed without a renewal", 0, NULL);
    rc = ensure_connected(e, now);
    if (rc == 0 && e->must_release)
        release_lock(e);
    if (rc == 0 && !e->connected)
        rc = ODBC_LEADER_ECONNLOST;
    if (rc == 0)
        rc = e->leader ? renew(e) : follow(e, now);
    /* One truth: never report leadership that is_leader() would deny. */
    if (rc > 0 && !odbc_leader__elector_is_leader(e)) {
        step_down(e, "trust window passed during the tick", 0, NULL);
        rc = ODBC_LEADER_FOLLOWER;
    }
    if (next_tick_ms != NULL)
        *next_tick_ms = delay_ms(e, e->cand.now_ns(e->cand.clock_ctx));
    return rc;
}

int odbc_leader__elector_resign(struct odbc_leader__elector *e) {
    int64_t term = e->held_term;
    int64_t now = e->cand.now_ns(e->cand.clock_ctx);
    int rc = 0;

    if (!e->leader)
        return 0;
    step_down(e, "resigning", 0, NULL);
    e->holdoff_ns = now + e->cand.renew_ns;
    e->next_ns = e->holdoff_ns;
    e->armed = 0;
    if (e->connected) {
        rc = e->ops->resign(e->port, term);
        if (rc < 0)
            failed(e, rc, now);
    }
    /* Only after the vacant lease is committed: followers woken by the
     * release find it vacant. */
    if (e->connected && e->must_release)
        release_lock(e);
    return rc;
}

void odbc_leader__elector_shutdown(struct odbc_leader__elector *e) {
    /* A leader that lost its connection tries once more so followers need
     * not wait for the lease to expire. */
    if (e->leader && !e->connected)
        ensure_connected(e, e->reconnect_at_ns);
    odbc_leader__elector_resign(e);
    if (e->connected) {
        e->ops->unregister(e->port);
        e->ops->disconnect(e->port);
        e->connected = 0;
    }
}
