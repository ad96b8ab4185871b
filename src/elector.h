/* SPDX-License-Identifier: MIT */
/*
 * elector.h: the election state machine, independent of ODBC.
 *
 * The elector decides what to do on each tick (renew, attempt, reconnect,
 * step down) and keeps the trust window; a "port" carries out the database
 * operations. The real port is db_lease.c; unit tests plug in a fake port and a
 * fake clock.
 */
#ifndef ODBC_LEADER_ELECTOR_H
#define ODBC_LEADER_ELECTOR_H

#include <stdatomic.h>
#include <stdint.h>

#include "candidate.h"
#include "config.h"

/* What the database said about the lease, in database time. */
struct odbc_leader__result {
    int found; /* a row came back */
    int won;   /* attempt: this call started a new term */
    char leader_id[ODBC_LEADER__NAME_MAX + 1]; /* "" when vacant */
    int64_t term;
    int64_t expires_at_ms;
    int64_t now_ms;
    int resign_requested; /* renew: someone asked this leader to resign */
    char handoff_to[ODBC_LEADER__NAME_MAX + 1]; /* renew: ... for this id */
    int wake_held;   /* attempt, renew: the wake-up lock is held (1), not
                        (0), or the dialect does not say (-1) */
    int64_t offered; /* renew: fires offered to the leader (run-now or to
                        recover), -1 when the dialect does not say */
};

/*
 * Database operations. Each returns 0 or a negative odbc_leader_error:
 * ODBC_LEADER_ECONNLOST or ODBC_LEADER_ECONNECT (the port is disconnected
 * afterwards), ODBC_LEADER_EUNKNOWN (a commit failed), ODBC_LEADER_EDB.
 */
struct odbc_leader__port_ops {
    int (*connect)(void *port); /* no-op when already connected */
    void (*disconnect)(void *port);
    /* Takes the lease when it is released (vacant and not reserved for
     * another), or when it expired and is exactly the row the caller
     * watched: term seen_term and expires_at_ms seen_expires_ms (seen_term
     * 0: the caller has watched nothing for long enough; matches no row). */
    int (*attempt)(void *port, int64_t seen_term, int64_t seen_expires_ms,
                   struct odbc_leader__result *out);
    /* out->found is 0 when the term was not renewed (gone or expired) */
    int (*renew)(void *port, int64_t term, struct odbc_leader__result *out);
    int (*resign)(void *port, int64_t term);
    int (*unregister)(void *port);
    /* Optional (NULL = none). release lets go of the wake-up lock a
     * leader's attempt or renew takes; wait blocks up to budget_ms until
     * no leader holds it and returns 1 (free), 0 (budget ran out) or a
     * negative error. */
    int (*release)(void *port);
    int (*wait)(void *port, int64_t budget_ms);
    /* Optional: take the wake-up lock when attempt or renew could not,
     * waiting up to budget_ms; 1 held, 0 not, or a negative error. */
    int (*hold)(void *port, int64_t budget_ms);
    /* Optional: read the lease without writing (out->found is 0 when the
     * namespace has no row). A follower reads it just after the leader's
     * next renewal is due, so that its watch starts close to that renewal
     * (without it, attempt does the reading). */
    int (*read)(void *port, struct odbc_leader__result *out);
};

struct odbc_leader__elector {
    /* wiring, set by odbc_leader__elector_init */
    const struct odbc_leader__port_ops *ops;
    void *port;
    struct odbc_leader__candidate cand;
    int no_watch; /* test only: takeover on database time alone */
    int64_t backoff_min_ns, backoff_max_ns;
    int64_t wait_ns;   /* longest follower wait per tick; 0 = never wait */
    int report_resign; /* resign requests are reported, not acted on */

    /* state, owned by the thread that ticks */
    int leader; /* this instance believes it holds held_term */
    int64_t held_term;
    int connected;
    int64_t backoff_ns;       /* current reconnect delay, 0 after success */
    int64_t reconnect_at_ns;  /* no reconnect before this */
    int64_t outage_failures;  /* failed reconnects since the last success */
    int64_t outage_ns;        /* when the first of them failed */
    int64_t outage_warned_ns; /* when the outage was last warned about */
    int64_t next_ns;          /* when the next tick is useful */
    int64_t holdoff_ns;       /* after resign: no attempt before this */
    int armed;                /* a live leader was seen: wait until next_ns */
    int64_t armed_term;       /* ... and this was its term */
    int must_release;         /* stepped down: let go of the wake-up lock */
    int resign_reported;      /* a resign request for held_term was logged */
    int64_t rewait_ns;        /* woken by a leader without the wake-up lock:
                                 wait again after this long (doubling) */
    int64_t wait_after_ns;    /* ... that is, not before this */
    uint64_t rng;

    /* The watch (see watch()): the lease row last seen, by its term and
     * expires_at_ms, and the local time its first sight arrived. A held
     * lease is taken only as this row, one TTL after that. */
    int64_t seen_term; /* 0: no row seen */
    int64_t seen_expires_ms;
    int64_t seen_at_ns;
    int seen_noted;       /* the wait for this row's floor was logged */
    int64_t take_ns;      /* follower: the next attempt to take it */
    int64_t watch_ns;     /* ... the next read of it (a renewal due) */
    int64_t watch_gap_ns; /* ... late renewal: the gap between reads */
    int64_t attempted_ns; /* ... start of its last attempt */
    int64_t beat_ns;      /* ... an attempt (heartbeat) by then */

    /* The database clock against the local one (see observe()): the last
     * reading, taken between local times obs_lo_ns and obs_hi_ns. Steps
     * are logged and counted; the watch keeps them from mattering. */
    int have_obs;
    int64_t obs_lo_ns, obs_hi_ns, obs_db_ms;
    int64_t step_bound_ns; /* a larger jump of the difference is a step */

    /* last state reported through on_change */
    int rep_valid, rep_leader;
    int64_t rep_term;
    char rep_id[ODBC_LEADER__NAME_MAX + 1];

    /* read from any thread */
    _Atomic int64_t trusted_until_ns; /* 0 when not leader */
    _Atomic int64_t term;             /* held term, 0 when not leader */
    _Atomic int64_t clock_steps;      /* database clock steps seen */
    _Atomic int64_t last_step_ms;     /* the last one, signed, in ms */
};

struct odbc_leader__elector_conf {
    const struct odbc_leader__port_ops *ops;
    void *port;
    struct odbc_leader__candidate_conf cand;
    int test_no_watch; /* test only, see config.h */
    int64_t wait_ms;   /* follower wait budget; 0 = never wait
                          (needs ops->wait) */
    int connected;     /* the port is already connected */
    int report_resign; /* 1: a renewal that finds a resign request returns
                          ODBC_LEADER_RESIGN_REQUESTED and keeps the term
                          (the host resigns once its work has stopped);
                          0: the elector resigns at once */
};

/* Initialises e (no allocation). */
void odbc_leader__elector_init(struct odbc_leader__elector *e,
                               const struct odbc_leader__elector_conf *c);

/* One step; see odbc_leader_tick(). */
int odbc_leader__elector_tick(struct odbc_leader__elector *e,
                              uint32_t *next_tick_ms);

/* 1 while leader and inside the trust window; no I/O, any thread. */
int odbc_leader__elector_is_leader(const struct odbc_leader__elector *e);

/* Held term while inside the trust window, else 0, and in *valid_for_ms
 * (when not NULL) the milliseconds the window still runs (0 when not
 * leader). One read of the window, so the two cannot disagree; any
 * thread. */
int64_t odbc_leader__elector_leadership(const struct odbc_leader__elector *e,
                                        uint32_t *valid_for_ms);

/* Database clock steps seen so far (forward or backward beyond the bound,
 * see elector.c), and in *last_step_ms (when not NULL) the last one's size
 * in ms, negative for a backward step; any thread. */
int64_t odbc_leader__elector_clock_steps(const struct odbc_leader__elector *e,
                                         int64_t *last_step_ms);

/* Held term while leader, else 0; any thread. */
int64_t odbc_leader__elector_term(const struct odbc_leader__elector *e);

/* Resigns the held term (if any) and holds off campaigning for one renew
 * interval. Returns 0 or a negative error (local step-down happens anyway). */
int odbc_leader__elector_resign(struct odbc_leader__elector *e);

/* Resigns if leader, unregisters, disconnects. The port stays allocated. */
void odbc_leader__elector_shutdown(struct odbc_leader__elector *e);

#endif /* ODBC_LEADER_ELECTOR_H */
