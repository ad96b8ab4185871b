/* SPDX-License-Identifier: MIT */
/*
 * member.h: the member of a sharded group (member.c), the group's state
 * machine, independent of ODBC: what a tick asks of the database, how its
 * answer changes the shards this member leads, and the trust window of
 * each. A "port" runs the statements: db_group.c over ODBC, a fake one in
 * the unit tests. The public handle odbc_leader_group_t is group.c.
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_MEMBER_H
#define ODBC_LEADER_MEMBER_H

#include <stdatomic.h>
#include <stdint.h>

#include "buf.h"
#include "candidate.h"
#include "config.h"

/* The parameters of a group statement; the lists are borrowed for the
 * call (NULL: "[]"). */
struct odbc_leader__group_args {
    int64_t inc, seq, shards;
    const char *take, *release, *dead; /* JSON arrays (member.c) */
    /* the same for a dialect without JSON (db_group.c fills them): */
    const char *take_mask, *release_mask; /* NULL when unused */
    int64_t dead_inc, dead_seq;
    /* 1: answer every row the member holds, the holders and the vacant
     * shards (L, H, V); 0: a steady tick, which answers the lease
     * counters instead (K). A dialect that ignores it answers in full. */
    int64_t full;
};

/* One row of a group tick's answer (the dialect's group_tick). */
struct odbc_leader__group_row {
    char kind; /* 'S' own lease, 'L' held shard, 'M' member, 'H' holder,
                  'V' vacant, 'K' a member lease's counter (steady tick) */
    char name[ODBC_LEADER__NAME_MAX + 1]; /* M: member id; H: holder id */
    int64_t a;      /* S: 1 when the lease holds after the tick; L, V: shard;
                       H, K: incarnation */
    int64_t b;      /* S: its renew_seq; L, V: term; M: heartbeat_at_ms; H: the
                       lease's renew_seq (a version-6 holder's highest); K: the
                       lease's renew_seq */
    int64_t c;      /* S, L, V, M: expires_at_ms; H: rows */
    int64_t now_ms; /* the database clock */
};

typedef int (*odbc_leader__group_row_fn)(
    void *ctx, const struct odbc_leader__group_row *row);

/* The statements a member needs. Each returns 0 (or rows) or a negative
 * odbc_leader_error; ECONNLOST, ECONNECT and EUNKNOWN leave the port
 * disconnected. */
struct odbc_leader__group_port_ops {
    /* Connects (no-op when connected) and creates the group's missing
     * rows; a group of another size is ECONFIG with a message in err. */
    int (*connect)(void *port, char *err, size_t errlen);
    void (*disconnect)(void *port);
    /* One tick (struct odbc_leader__group_args); rows go to fn. */
    int (*tick)(void *port, const struct odbc_leader__group_args *a,
                odbc_leader__group_row_fn fn, void *ctx);
    /* Releases every shard of incarnation inc and unregisters. */
    int (*leave)(void *port, int64_t inc);
};

/* A live member as this member sees it. */
struct odbc_leader__group_member {
    char id[ODBC_LEADER__NAME_MAX + 1];
    int64_t beat_ms;      /* its heartbeat_at_ms as last read */
    int64_t beat_seen_ns; /* local time that heartbeat was first read */
    int64_t since_ns;     /* local time it was first seen alive */
    int live; /* in the database and its heartbeat moved within one TTL */
};

/* A holder incarnation of shards, watched: taken from only after its
 * renew_seq has not grown for one TTL on this member's clock. */
struct odbc_leader__group_holder {
    int64_t inc;
    int64_t seq;         /* the highest renew_seq of its rows */
    int64_t seq_seen_ns; /* local time that seq was first read */
    int64_t rows;
    char id[ODBC_LEADER__NAME_MAX + 1];
};

struct odbc_leader__group_member_conf {
    const struct odbc_leader__group_port_ops *ops;
    void *port;
    struct odbc_leader__candidate_conf cand; /* its log is required */
    uint32_t shards;
    int64_t inc;   /* this process's incarnation, not 0 */
    int connected; /* the port is already connected */
    /* Draws the next incarnation after a lapse (not 0, below 2^62). */
    int64_t (*new_inc)(void);
};

/* An earlier incarnation of this member whose lease lapsed: its rows are
 * taken back at once (nobody else trusts them, and an expired lease is
 * never renewed). */
struct odbc_leader__group_lapsed {
    int64_t inc, seq;
};

struct odbc_leader__group_member_state {
    /* wiring */
    const struct odbc_leader__group_port_ops *ops;
    void *port;
    struct odbc_leader__candidate cand;
    uint32_t shards;
    int64_t inc;
    int64_t (*new_inc)(void);

    /* tick thread */
    struct odbc_leader__group_lapsed lapsed[4]; /* the latest first */
    size_t n_lapsed;
    int connected;
    int64_t seq;        /* the tick number written into renewed rows */
    int64_t answers;    /* ticks answered since create */
    int64_t full_ns;    /* start of the last tick answered in full (every
                           row held, the holders, the vacant shards), 0
                           none on this connection */
    int64_t backoff_ns; /* reconnect delay, 0 after a success */
    int64_t reconnect_at_ns;
    int64_t next_ns;        /* next useful tick */
    int64_t *held;          /* per shard: the term held in the database as
                               far as known, 0 none */
    int64_t *vacant_ns;     /* per shard: first seen vacant, 0 not vacant */
    unsigned char *release; /* per shard: stopped here, release it (2: just
                               lost, to settle once assigned) */
    unsigned char *rep;     /* per shard: reported as led */
    uint32_t *owner;        /* per shard: index into members */
    struct odbc_leader__group_member *members; /* sorted by id, live or
                                                  not (the watch) */
    size_t n_members, cap_members;
    int self; /* index of this member in members, -1 before the first */
    struct odbc_leader__group_holder *holders;
    size_t n_holders, cap_holders;
    uint32_t *load; /* n_members scratch for the assignment */
    uint64_t *hid;  /* likewise */
    int assigned;   /* owner[] matches members[] */
    struct odbc_leader__buf take, rel, dead; /* the lists sent */
    /* Nothing to do shard by shard while the lease is renewed (member.c,
     * quiet()): under the member's lease, every shard the assignment gives
     * this member is held and led under the lease, and no other shard is
     * held, being released or vacant. */
    int quiet;
    uint32_t n_led; /* when quiet: the shards led */

    /* any thread */
    _Atomic int64_t *until;      /* per shard: trusted until, 0 = not led,
                                    ODBC_LEADER__UNDER_LEASE: until lease_until */
    _Atomic int64_t *term;       /* per shard: the term led */
    _Atomic int64_t lease_until; /* the window of the shards led under the
                                    member's lease, 0 none */
};

/* until[s] of a shard led under the member's lease: its window is
 * lease_until, which one store extends for every such shard. Negative, so
 * a reader that forgot to resolve it would see a window long passed. */
#define ODBC_LEADER__UNDER_LEASE INT64_C(-1)

/* Initialises m; allocates the per-shard arrays. Returns 0 or
 * ODBC_LEADER_ENOMEM. Free with odbc_leader__group_member_free(). */
int odbc_leader__group_member_init(
    struct odbc_leader__group_member_state *m,
    const struct odbc_leader__group_member_conf *c);

/* Frees what m owns (not the port); safe after a failed init. */
void odbc_leader__group_member_free(struct odbc_leader__group_member_state *m);

/* One step; see odbc_leader_group_tick(). */
int odbc_leader__group_member_tick(struct odbc_leader__group_member_state *m,
                                   uint32_t *next_tick_ms);

/* The term of shard s while inside its window, else 0; *valid_for_ms as
 * odbc_leader_group_leadership(). Any thread. */
int64_t odbc_leader__group_member_leadership(
    const struct odbc_leader__group_member_state *m, uint32_t s,
    uint32_t *valid_for_ms);

/* Reports every led shard stopped, then leaves (one statement). */
void odbc_leader__group_member_leave(struct odbc_leader__group_member_state *m);

#endif /* ODBC_LEADER_MEMBER_H */
