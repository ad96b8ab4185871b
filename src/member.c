/* SPDX-License-Identifier: MIT */
/*
 * member.c: a member of a sharded group (member.h; docs/protocol.md,
 * "Groups"), the state machine behind the public handle of group.c.
 *
 * Every tick is one statement (the port's tick): heartbeat, renew every
 * shard held, release the shards handed over, take the shards the
 * assignment gives this member that are free. Its answer lists the shards
 * held afterwards, the live members, the holders of shards with their
 * renewal counters, and the vacant shards. From it each member computes
 * the same assignment (shard.c) from the same member list.
 *
 * Safety per shard is the single lease's: a shard is trusted until the
 * start of the statement that renewed or took it + TTL - margin on
 * CLOCK_BOOTTIME; a held shard is taken only when it expired in database
 * time and its holder incarnation's renew_seq has not grown for one TTL on
 * this member's own clock (the watch, per holder rather than per row: a
 * holder renews all its rows in one statement that also raises the
 * counter); a shard is released only after its stop was reported to the
 * host.
 *
 * Under the member's lease (a dialect whose tick answers an S row;
 * docs/protocol.md, "Shards held under the member's lease") the tick
 * renews one lease row of this incarnation instead of every shard row,
 * and the window of every shard held is the lease's. A lease that lapsed
 * is never renewed: the answer says so, every shard stops here and the
 * member goes on as a new incarnation (lapse()), which takes the old
 * one's rows back without a watch.
 *
 * A steady tick (nothing to take, release or offer as dead) reads no
 * shard row either (:full 0; docs/protocol.md, "A steady tick"): while
 * the lease holds, nobody else can take a shard from this member, so the
 * shards held are the ones held before; the holders' watches go on from
 * their leases' counters (K rows). The rows are read in full at the first
 * tick of a connection, at every tick that takes, releases or offers a
 * dead holder, and at least every FULL_TTLS TTLs (vacant shards nobody
 * takes, holders of version 6 that have no lease row).
 *
 * Neither does a steady tick of a quiet member do anything shard by shard
 * here (find_quiet()): when every shard the assignment gives it is held
 * and led under the lease, and nothing else is held, being released or
 * vacant, the shards' windows are one value (lease_until, each led
 * shard's until[] saying ODBC_LEADER__UNDER_LEASE), and the renewal
 * extends them all with one store. So the cost of a steady tick does not
 * grow with the shards, in the database or here.
 */
#include <build_config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "clock.h"
#include "error.h"
#include "member.h"
#include "shard.h"

#define NS_PER_MS INT64_C(1000000)
#define BACKOFF_MIN_NS (100 * NS_PER_MS)
/* A shard is handed to a member only after this member has seen it alive
 * for this many renew intervals (no moves for a member that flaps). */
#define SETTLE_RENEWS 2
/* A vacant shard nobody takes for this many TTLs is taken by anyone. */
#define ORPHAN_TTLS 2
/* A holder whose counter has stood still this many TTLs (one TTL past
 * the watch) still holds shards: any member tries every shard it does not
 * hold (stranded()). */
#define STRANDED_TTLS 2
/* release[s]: the answer just showed shard s lost (settle_lost()). */
#define LOST 2
/* A steady tick (nothing to take, release or offer as dead) asks for the
 * shard rows only when the last full answer is this many TTLs old. */
#define FULL_TTLS 2
/* The lapsed incarnations m remembers. */
#define N_LAPSED(m) (sizeof((m)->lapsed) / sizeof((m)->lapsed[0]))

/* Publishes a held shard: term first, then the deadline. */
static void trust(struct odbc_leader__group_member_state *m, uint32_t s,
                  int64_t term, int64_t until) {
    atomic_store_explicit(&m->term[s], term, memory_order_relaxed);
    atomic_store_explicit(&m->until[s], until, memory_order_release);
}

/* Reports shard s's leadership to the host when it changed. */
static void report(struct odbc_leader__group_member_state *m, uint32_t s,
                   int is_leader, int64_t term) {
    if (m->rep[s] == is_leader)
        return;
    m->rep[s] = (unsigned char)is_leader;
    if (m->cand.cb.on_shard_change != NULL)
        m->cand.cb.on_shard_change(m->cand.cb.ctx, s, is_leader, term);
}

/* Stops trusting shard s here and reports it. */
static void stop(struct odbc_leader__group_member_state *m, uint32_t s) {
    int64_t term = atomic_load_explicit(&m->term[s], memory_order_relaxed);

    atomic_store_explicit(&m->until[s], 0, memory_order_release);
    atomic_store_explicit(&m->term[s], 0, memory_order_relaxed);
    report(m, s, 0, term);
}

/* Shard s's window: until[s], or the lease's for a shard led under the
 * member's lease. */
static int64_t window(const struct odbc_leader__group_member_state *m,
                      uint32_t s) {
    int64_t until = atomic_load_explicit(&m->until[s], memory_order_acquire);

    return until == ODBC_LEADER__UNDER_LEASE
               ? atomic_load_explicit(&m->lease_until, memory_order_acquire)
               : until;
}

int odbc_leader__group_member_init(
    struct odbc_leader__group_member_state *m,
    const struct odbc_leader__group_member_conf *c) {
    size_t n = c->shards;

    memset(m, 0, sizeof(*m));
    m->ops = c->ops;
    m->port = c->port;
    odbc_leader__candidate_init(&m->cand, &c->cand);
    m->shards = c->shards;
    m->inc = c->inc;
    m->new_inc = c->new_inc;
    m->connected = c->connected;
    m->self = -1;
    m->held = calloc(n, sizeof(*m->held));
    m->vacant_ns = calloc(n, sizeof(*m->vacant_ns));
    m->release = calloc(n, 1);
    m->rep = calloc(n, 1);
    m->owner = calloc(n, sizeof(*m->owner));
    m->until = calloc(n, sizeof(*m->until));
    m->term = calloc(n, sizeof(*m->term));
    if (m->held == NULL || m->vacant_ns == NULL || m->release == NULL ||
        m->rep == NULL || m->owner == NULL || m->until == NULL ||
        m->term == NULL)
        return ODBC_LEADER_ENOMEM;
    return 0;
}

void odbc_leader__group_member_free(struct odbc_leader__group_member_state *m) {
    free(m->held);
    free(m->vacant_ns);
    free(m->release);
    free(m->rep);
    free(m->owner);
    free((void *)m->until);
    free((void *)m->term);
    free(m->members);
    free(m->holders);
    free(m->load);
    free(m->hid);
    free(m->take.p);
    free(m->rel.p);
    free(m->dead.p);
    memset(m, 0, sizeof(*m));
}

int64_t odbc_leader__group_member_leadership(
    const struct odbc_leader__group_member_state *m, uint32_t s,
    uint32_t *valid_for_ms) {
    int64_t until, term, left;

    if (valid_for_ms != NULL)
        *valid_for_ms = 0;
    if (s >= m->shards)
        return 0;
    until = window(m, s);
    term = atomic_load_explicit(&m->term[s], memory_order_relaxed);
    if (until == 0 || term == 0)
        return 0;
    left = until - m->cand.now_ns(m->cand.clock_ctx);
    if (left <= 0)
        return 0;
    if (valid_for_ms != NULL)
        *valid_for_ms = left / NS_PER_MS > UINT32_MAX
                            ? UINT32_MAX
                            : (uint32_t)(left / NS_PER_MS);
    return term;
}

/* ---- the lists a tick sends ---- */

/* Appends ",n" (or "n" first) to b. Returns 0 or ODBC_LEADER_ENOMEM. */
static int add_num(struct odbc_leader__buf *b, int64_t n) {
    char num[48];
    int len = snprintf(num, sizeof(num), "%s%lld", b->len > 1 ? "," : "",
                       (long long)n);

    return odbc_leader__buf_add(b, num, (size_t)len) < 0 ? ODBC_LEADER_ENOMEM
                                                         : 0;
}

/* Appends ",[x,y]" (or "[x,y]" first) to b. Returns 0 or
 * ODBC_LEADER_ENOMEM. */
static int add_pair(struct odbc_leader__buf *b, int64_t x, int64_t y) {
    char pair[64];
    int len = snprintf(pair, sizeof(pair), "%s[%lld,%lld]",
                       b->len > 1 ? "," : "", (long long)x, (long long)y);

    return odbc_leader__buf_add(b, pair, (size_t)len) < 0 ? ODBC_LEADER_ENOMEM
                                                          : 0;
}

/* Starts a JSON array in b. */
static int list_open(struct odbc_leader__buf *b) {
    b->len = 0;
    return odbc_leader__buf_add(b, "[", 1) < 0 ? ODBC_LEADER_ENOMEM : 0;
}

static int list_close(struct odbc_leader__buf *b) {
    return odbc_leader__buf_add(b, "]", 1) < 0 ? ODBC_LEADER_ENOMEM : 0;
}

/* The member this member hands shard s to has been alive here long
 * enough. */
static int settled(const struct odbc_leader__group_member_state *m, uint32_t s,
                   int64_t now) {
    const struct odbc_leader__group_member *d = &m->members[m->owner[s]];

    return now - d->since_ns >= SETTLE_RENEWS * m->cand.renew_ns;
}

/* The assignment gives shard s to this member. */
static int assigned_here(const struct odbc_leader__group_member_state *m,
                         uint32_t s) {
    return m->assigned && m->self >= 0 && m->owner[s] == (uint32_t)m->self;
}

/* Before a tick: stops (and reports) the held shards the assignment gives
 * to another member, which this tick then releases, and reports the
 * shards whose windows ran out without a renewal. */
static void plan_releases(struct odbc_leader__group_member_state *m,
                          int64_t now) {
    if (m->quiet &&
        now < atomic_load_explicit(&m->lease_until, memory_order_relaxed))
        return; /* every shard led is in the lease's window, none moves */
    m->quiet = 0;
    for (uint32_t s = 0; s < m->shards; s++) {
        int64_t until = window(m, s);

        if (m->rep[s] && until != 0 && now >= until)
            stop(m, s);
        if (!m->assigned || m->held[s] == 0 || m->release[s] ||
            m->owner[s] == (uint32_t)m->self || !settled(m, s, now))
            continue;
        stop(m, s);
        m->release[s] = 1;
    }
}

/* 1 when inc is an incarnation of this member that lapsed. */
static int was_mine(const struct odbc_leader__group_member_state *m,
                    int64_t inc) {
    for (size_t i = 0; i < m->n_lapsed; i++) {
        if (m->lapsed[i].inc == inc)
            return 1;
    }
    return 0;
}

/* 1 when holder h is another incarnation than this member's and its
 * counter has stood still for ttls TTLs at now (the watch: ttls 1). */
static int stood_still(const struct odbc_leader__group_member_state *m,
                       const struct odbc_leader__group_holder *h, int64_t now,
                       int ttls) {
    return h->inc != m->inc && now - h->seq_seen_ns >= ttls * m->cand.ttl_ns;
}

/* One pair of the dead list: an incarnation and its renew_seq seen. */
struct dead_pair {
    int64_t inc, seq;
};

/* qsort's order of struct dead_pair: ascending incarnation. */
static int by_inc(const void *a, const void *b) {
    const struct dead_pair *x = a, *y = b;

    return (x->inc > y->inc) - (x->inc < y->inc);
}

/* Appends to m->dead (open) this member's lapsed incarnations and the
 * holders watched standing still for one TTL at now, in ascending
 * incarnation: every member then locks the leases a take reads FOR
 * UPDATE in the same order (MariaDB's take locks them in the list's;
 * two members that listed two dead holders in opposite orders
 * deadlocked, and their takes waited a renew interval). Returns 0 or
 * ODBC_LEADER_ENOMEM. */
static int add_dead(struct odbc_leader__group_member_state *m, int64_t now) {
    size_t n = 0, cap = m->n_lapsed + m->n_holders;
    struct dead_pair *v;
    int rc = 0;

    if (cap == 0)
        return 0;
    v = malloc(cap * sizeof(*v));
    if (v == NULL)
        return ODBC_LEADER_ENOMEM;
    for (size_t i = 0; i < m->n_lapsed; i++) {
        v[n].inc = m->lapsed[i].inc;
        v[n++].seq = m->lapsed[i].seq;
    }
    for (size_t i = 0; i < m->n_holders; i++) {
        const struct odbc_leader__group_holder *h = &m->holders[i];

        if (!was_mine(m, h->inc) && stood_still(m, h, now, 1)) {
            v[n].inc = h->inc;
            v[n++].seq = h->seq;
        }
    }
    qsort(v, n, sizeof(*v), by_inc);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = add_pair(&m->dead, v[i].inc, v[i].seq);
    free(v);
    return rc;
}

/*
 * 1 when a holder other than this incarnation has stood still for
 * STRANDED_TTLS TTLs at now and still held shards at the last full answer
 * (every tick that offers a dead holder reads in full): its shards'
 * assigned members had a TTL to take them and did not. That happens when
 * they cannot: a member of an older build never takes a row held under a
 * member's lease (docs/protocol.md, "A rolling upgrade"), so the shards of
 * a new member that died would stay with it while the assignment gives
 * them to old members. Then this member puts every shard it does not hold
 * in its take list. The statement decides what a take may take (a vacant
 * row, or one of a holder in :dead whose lease expired and whose counter
 * is the one watched), so this changes only who takes; the shards it takes
 * that the assignment gives to others are handed over as any others.
 */
static int stranded(const struct odbc_leader__group_member_state *m,
                    int64_t now) {
    for (size_t i = 0; i < m->n_holders; i++) {
        if (stood_still(m, &m->holders[i], now, STRANDED_TTLS))
            return 1;
    }
    return 0;
}

/* Fills the take, release and dead lists for a tick at now. */
static int build_lists(struct odbc_leader__group_member_state *m, int64_t now) {
    int sweep = m->answers > 0 && stranded(m, now);
    int rc = list_open(&m->take);

    rc = rc < 0 ? rc : list_open(&m->rel);
    rc = rc < 0 ? rc : list_open(&m->dead);
    /* quiet: nothing to release, vacant or assigned here and not held */
    for (uint32_t s = 0; rc == 0 && (!m->quiet || sweep) && s < m->shards;
         s++) {
        int mine = assigned_here(m, s);
        int orphan = m->vacant_ns[s] != 0 &&
                     now - m->vacant_ns[s] >= ORPHAN_TTLS * m->cand.ttl_ns;

        if (m->release[s])
            rc = add_pair(&m->rel, s, m->held[s]); /* fenced by its term */
        else if (m->held[s] == 0 && m->answers > 0 && (mine || orphan || sweep))
            rc = add_num(&m->take, s);
    }
    rc = rc < 0 ? rc : add_dead(m, now);
    rc = rc < 0 ? rc : list_close(&m->take);
    rc = rc < 0 ? rc : list_close(&m->rel);
    return rc < 0 ? rc : list_close(&m->dead);
}

/* ---- reading a tick's answer ---- */

struct answer {
    struct odbc_leader__group_member_state *m;
    int lease;    /* an S row came: shards held under the member's lease */
    int renewed;  /* S: the lease holds after the tick */
    int64_t lseq; /* S: its renew_seq */
    int64_t *got; /* per shard: the term held after the tick, 0 none */
    unsigned char *vacant;
    struct odbc_leader__group_member *members;
    size_t n_members, cap_members;
    struct odbc_leader__group_holder *holders;
    size_t n_holders, cap_holders;
    struct odbc_leader__group_holder *keys; /* K: lease counters */
    size_t n_keys, cap_keys;
    int full; /* H or V rows came: the shard rows were read */
    int bad;  /* rows out of range, logged once */
};

/* Appends one zeroed element of size sz to the array *v (*n elements,
 * room for *cap), growing it when full. Returns the element (the array's),
 * or NULL when out of memory. */
static void *append(void **v, size_t *cap, size_t *n, size_t sz) {
    size_t c = *cap ? *cap * 2 : 16;
    char *p;

    if (*n >= *cap) {
        p = realloc(*v, c * sz);
        if (p == NULL)
            return NULL;
        *v = p;
        *cap = c;
    }
    p = (char *)*v + (*n)++ * sz;
    memset(p, 0, sz);
    return p;
}

/* Makes the answer's array (av, acap, n elements) the member's (mv,
 * mcap, mn) and hands the member's old array to the answer, which frees
 * it. A macro: the arrays have different element types. */
#define SWAP_IN(mv, mcap, mn, av, acap, n)                                     \
    do {                                                                       \
        void *old_v_ = (mv);                                                   \
        size_t old_cap_ = (mcap);                                              \
                                                                               \
        (mv) = (av);                                                           \
        (mcap) = (acap);                                                       \
        (mn) = (n);                                                            \
        (av) = old_v_;                                                         \
        (acap) = old_cap_;                                                     \
    } while (0)

/* Allocates a's per-shard arrays unless it has them (a steady answer
 * needs none). Returns 0 or ODBC_LEADER_ENOMEM. */
static int shard_rows(struct answer *a) {
    if (a->got == NULL)
        a->got = calloc(a->m->shards, sizeof(*a->got));
    if (a->vacant == NULL)
        a->vacant = calloc(a->m->shards, 1);
    return a->got == NULL || a->vacant == NULL ? ODBC_LEADER_ENOMEM : 0;
}

static int answer_row(void *ctx, const struct odbc_leader__group_row *r) {
    struct answer *a = ctx;
    uint32_t shards = a->m->shards;

    if ((r->kind == 'L' || r->kind == 'V') &&
        (r->a < 0 || r->a >= (int64_t)shards)) {
        a->bad++;
        return 0;
    }
    if ((r->kind == 'L' || r->kind == 'V') && shard_rows(a) < 0)
        return ODBC_LEADER_ENOMEM;
    if (r->kind == 'S') {
        a->lease = 1;
        a->renewed = r->a != 0;
        a->lseq = r->b;
    } else if (r->kind == 'L') {
        a->got[r->a] = r->b;
    } else if (r->kind == 'V') {
        a->vacant[r->a] = 1;
    } else if (r->kind == 'M') {
        struct odbc_leader__group_member *x = append(
            (void **)&a->members, &a->cap_members, &a->n_members, sizeof(*x));

        if (x == NULL)
            return ODBC_LEADER_ENOMEM;
        memcpy(x->id, r->name, sizeof(x->id));
        x->beat_ms = r->b;
    } else if (r->kind == 'H') {
        struct odbc_leader__group_holder *x = append(
            (void **)&a->holders, &a->cap_holders, &a->n_holders, sizeof(*x));

        if (x == NULL)
            return ODBC_LEADER_ENOMEM;
        memcpy(x->id, r->name, sizeof(x->id));
        x->inc = r->a;
        x->seq = r->b;
        x->rows = r->c;
    } else if (r->kind == 'K') {
        struct odbc_leader__group_holder *x =
            append((void **)&a->keys, &a->cap_keys, &a->n_keys, sizeof(*x));

        if (x == NULL)
            return ODBC_LEADER_ENOMEM;
        memcpy(x->id, r->name, sizeof(x->id));
        x->inc = r->a;
        x->seq = r->b;
    }
    a->full |= r->kind == 'H' || r->kind == 'V';
    return 0;
}

static int by_id(const void *x, const void *y) {
    return strcmp(((const struct odbc_leader__group_member *)x)->id,
                  ((const struct odbc_leader__group_member *)y)->id);
}

/* The previous sight of member id, or NULL. */
static const struct odbc_leader__group_member *
old_member(const struct odbc_leader__group_member_state *m, const char *id) {
    for (size_t i = 0; i < m->n_members; i++) {
        if (strcmp(m->members[i].id, id) == 0)
            return &m->members[i];
    }
    return NULL;
}

/* 1 when the live ids of a (n of them) differ from those of b. */
static int live_differs(const struct odbc_leader__group_member *a, size_t na,
                        const struct odbc_leader__group_member *b, size_t nb) {
    size_t i = 0, j = 0;

    for (;;) {
        while (i < na && !a[i].live)
            i++;
        while (j < nb && !b[j].live)
            j++;
        if (i == na || j == nb)
            return i != na || j != nb;
        if (strcmp(a[i].id, b[j].id) != 0)
            return 1;
        i++;
        j++;
    }
}

/* Takes the members of the answer (adding this member when missing), each
 * live when it is alive in the database and (except this member) its
 * heartbeat moved within one TTL on this member's clock. Returns 1 when
 * the set of live ids changed, 0 when not, or ODBC_LEADER_ENOMEM. */
static int take_members(struct odbc_leader__group_member_state *m,
                        struct answer *a, int64_t hi) {
    int self = 0, changed;

    for (size_t i = 0; i < a->n_members; i++)
        self |= strcmp(a->members[i].id, m->cand.id) == 0;
    if (!self) {
        struct odbc_leader__group_member *x = append(
            (void **)&a->members, &a->cap_members, &a->n_members, sizeof(*x));

        if (x == NULL)
            return ODBC_LEADER_ENOMEM;
        snprintf(x->id, sizeof(x->id), "%s", m->cand.id);
    }
    for (size_t i = 0; i < a->n_members; i++) {
        struct odbc_leader__group_member *x = &a->members[i];
        const struct odbc_leader__group_member *o = old_member(m, x->id);
        int is_self = strcmp(x->id, m->cand.id) == 0;

        x->beat_seen_ns =
            o != NULL && o->beat_ms == x->beat_ms ? o->beat_seen_ns : hi;
        x->live = is_self || hi - x->beat_seen_ns < m->cand.ttl_ns;
        x->since_ns = o != NULL && o->live && x->live ? o->since_ns : hi;
    }
    qsort(a->members, a->n_members, sizeof(*a->members), by_id);
    changed = live_differs(a->members, a->n_members, m->members, m->n_members);
    SWAP_IN(m->members, m->cap_members, m->n_members, a->members,
            a->cap_members, a->n_members);
    m->self = -1;
    for (size_t i = 0; i < m->n_members; i++) {
        if (strcmp(m->members[i].id, m->cand.id) == 0)
            m->self = (int)i;
    }
    return changed;
}

/* Recomputes the assignment over the live members; owner[] then indexes
 * members[]. Returns 0 or ODBC_LEADER_ENOMEM. */
static int assign(struct odbc_leader__group_member_state *m) {
    size_t n = 0, cap = m->n_members ? m->n_members : 1;
    const char **ids = malloc(cap * sizeof(*ids));
    size_t *at = malloc(cap * sizeof(*at));
    uint32_t *load = realloc(m->load, cap * sizeof(*load));
    uint64_t *hid;
    uint32_t mine = 0;

    if (load != NULL)
        m->load = load;
    hid = realloc(m->hid, cap * sizeof(*hid));
    if (hid != NULL)
        m->hid = hid;
    if (ids == NULL || at == NULL || load == NULL || hid == NULL) {
        free(ids);
        free(at);
        return ODBC_LEADER_ENOMEM;
    }
    for (size_t i = 0; i < m->n_members; i++) {
        if (!m->members[i].live)
            continue;
        at[n] = i;
        ids[n++] = m->members[i].id;
    }
    odbc_leader__assign(ids, n, m->shards, m->owner, m->load, m->hid);
    for (uint32_t s = 0; s < m->shards; s++) {
        m->owner[s] = (uint32_t)at[m->owner[s]];
        mine += m->owner[s] == (uint32_t)m->self;
    }
    free(ids);
    free(at);
    m->assigned = 1;
    odbc_leader__logf(&m->cand.log, LOG_INFO,
                      "group of %u shards over %zu live members: this "
                      "member's share is %u",
                      (unsigned)m->shards, n, (unsigned)mine);
    return 0;
}

/* Keeps the holders of the answer with their watches: a holder whose
 * renew_seq did not grow keeps the local time it was first read. */
static void take_holders(struct odbc_leader__group_member_state *m,
                         struct answer *a, int64_t hi) {
    for (size_t i = 0; i < a->n_holders; i++) {
        struct odbc_leader__group_holder *x = &a->holders[i];

        x->seq_seen_ns = hi;
        for (size_t j = 0; j < m->n_holders; j++) {
            const struct odbc_leader__group_holder *o = &m->holders[j];

            if (o->inc == x->inc && x->seq <= o->seq) {
                x->seq_seen_ns = o->seq_seen_ns;
                x->seq = o->seq;
            }
        }
    }
    SWAP_IN(m->holders, m->cap_holders, m->n_holders, a->holders,
            a->cap_holders, a->n_holders);
}

/* After a steady answer (no shard rows read): the holders' watches go on
 * from the lease counters of a (K: the leases that hold a shard), a
 * holder whose counter grew seen moving at hi; a lease that holds a
 * shard and is not yet a known holder (it took since the last full
 * answer) is watched from hi on. A version-6 holder has no lease row and
 * keeps its last counter until the next full answer, which also drops
 * the holders that hold nothing any more. Returns 0 or
 * ODBC_LEADER_ENOMEM. */
static int count_holders(struct odbc_leader__group_member_state *m,
                         const struct answer *a, int64_t hi) {
    for (size_t i = 0; i < a->n_keys; i++) {
        const struct odbc_leader__group_holder *k = &a->keys[i];
        struct odbc_leader__group_holder *h = NULL;

        for (size_t j = 0; j < m->n_holders && h == NULL; j++)
            h = m->holders[j].inc == k->inc ? &m->holders[j] : NULL;
        if (h == NULL) {
            h = append((void **)&m->holders, &m->cap_holders, &m->n_holders,
                       sizeof(*h));
            if (h == NULL)
                return ODBC_LEADER_ENOMEM;
            *h = *k;
            h->seq_seen_ns = hi;
        } else if (k->seq > h->seq) {
            h->seq = k->seq;
            h->seq_seen_ns = hi;
        }
    }
    return 0;
}

/* After a steady answer: the shards held and the vacant ones are the ones
 * known. Nobody takes a shard from a live lease, a steady tick neither
 * takes nor releases, and a lapse has emptied held[] already. */
static void keep_rows(const struct odbc_leader__group_member_state *m,
                      struct answer *a) {
    for (uint32_t s = 0; s < m->shards; s++) {
        a->got[s] = m->held[s];
        a->vacant[s] = m->vacant_ns[s] != 0;
    }
}

/* The end of the window of what a tick that started at start renewed or
 * took. */
static int64_t window_end(const struct odbc_leader__group_member_state *m,
                          int64_t start) {
    return start + m->cand.ttl_ns - m->cand.margin_ns + m->cand.trust_extra_ns;
}

/* Applies the shards held after a tick that started at start and was
 * answered at hi. Under the member's lease (a->lease), a shard led is led
 * until lease_until, which moves only after every shard the answer shows
 * lost has stopped; until then a shard just taken has the lease's previous
 * window, which ends no later. Returns the number of shards led. */
static int take_shards(struct odbc_leader__group_member_state *m,
                       const struct answer *a, int64_t start, int64_t hi) {
    int64_t until = window_end(m, start);
    int64_t mark = a->lease ? ODBC_LEADER__UNDER_LEASE : until;
    int led = 0, won = 0, lost = 0, released = 0;

    for (uint32_t s = 0; s < m->shards; s++) {
        int64_t t = a->got[s];

        m->vacant_ns[s] =
            a->vacant[s] ? (m->vacant_ns[s] != 0 ? m->vacant_ns[s] : hi) : 0;
        if (t == 0) {
            if (m->rep[s])
                stop(m, s);
            if (m->held[s] != 0 && !m->release[s]) {
                /* lost: settled by settle_lost() once the members of
                 * this answer are known */
                lost++;
                m->release[s] = LOST;
                continue;
            }
            if (m->held[s] != 0)
                released++;
            m->held[s] = 0;
            m->release[s] = 0;
            continue;
        }
        if (m->held[s] != t) {
            won++;
            if (m->rep[s])
                stop(m, s); /* another term of ours: report the change */
        }
        m->held[s] = t;
        if (until <= hi) {
            stop(m, s); /* a late answer: held, not trusted; renewed next */
            continue;
        }
        trust(m, s, t, mark);
        report(m, s, 1, t);
        led++;
    }
    if (a->lease && a->renewed && until > hi)
        atomic_store_explicit(&m->lease_until, until, memory_order_release);
    if (won || lost || released)
        odbc_leader__logf(&m->cand.log, LOG_NOTICE,
                          "leading %d of %u shards: took %d, released %d, "
                          "lost %d",
                          led, (unsigned)m->shards, won, released, lost);
    return led;
}

/*
 * After an answer and the assignment it led to: each shard this answer
 * showed lost (held here before, renewed by nobody: its row expired in a
 * pause of this member's ticks, or another took it). Its row may still
 * be this incarnation's, expired. Then nobody else takes it while this
 * member lives: a taker waits for its holder's renewals to stand still,
 * and this member renews its other rows. So a lost shard the assignment
 * gives to this member is taken back (its own expired row, in a new
 * term: held 0 puts it in the next take list), and one it gives to
 * another member is released in the term it was held in (a row another
 * took since has a later term and stays as it is).
 */
static void settle_lost(struct odbc_leader__group_member_state *m) {
    for (uint32_t s = 0; s < m->shards; s++) {
        if (m->release[s] != LOST)
            continue;
        if (assigned_here(m, s)) {
            m->held[s] = 0;
            m->release[s] = 0;
        } else {
            m->release[s] = 1;
        }
    }
}

/*
 * After an answer under the member's lease that found the lease lapsed
 * (expired in database time before this tick could renew it: a pause or
 * an outage longer than the TTL): the incarnation is over. Every shard
 * stops here, whatever the rows still say, and the member goes on as a
 * new incarnation, which takes its shards again in new terms. The old
 * incarnation's rows go into every dead list from now on: nobody else
 * trusts them and an expired lease is never renewed, so they need no
 * watch. a's rows of the old incarnation are dropped.
 */
static void lapse(struct odbc_leader__group_member_state *m, struct answer *a) {
    int64_t old = m->inc;

    atomic_store_explicit(&m->lease_until, 0, memory_order_release);
    m->quiet = 0;
    for (uint32_t s = 0; s < m->shards; s++) {
        if (m->rep[s])
            stop(m, s);
        m->held[s] = 0;
        m->release[s] = 0;
        if (a->got != NULL)
            a->got[s] = 0;
    }
    memmove(&m->lapsed[1], &m->lapsed[0],
            (N_LAPSED(m) - 1) * sizeof(m->lapsed[0]));
    m->lapsed[0].inc = old;
    m->lapsed[0].seq = a->lseq;
    if (m->n_lapsed < N_LAPSED(m))
        m->n_lapsed++;
    m->inc = m->new_inc != NULL ? m->new_inc() : old + 1;
    odbc_leader__logf(&m->cand.log, LOG_WARNING,
                      "group member's lease lapsed before this tick could "
                      "renew it (a pause or an outage longer than the "
                      "TTL): every shard stopped; incarnation %lld "
                      "follows %lld and takes its shards again",
                      (long long)m->inc, (long long)old);
}

/* Forgets the lapsed incarnations that hold nothing any more (no holder
 * row of the answer names them). */
static void forget_lapsed(struct odbc_leader__group_member_state *m) {
    size_t k = 0;

    for (size_t i = 0; i < m->n_lapsed; i++) {
        int holds = 0;

        for (size_t j = 0; j < m->n_holders; j++)
            holds |= m->holders[j].inc == m->lapsed[i].inc;
        if (holds)
            m->lapsed[k++] = m->lapsed[i];
    }
    m->n_lapsed = k;
}

/* 1 when shard s is reported led here under the member's lease. */
static int led_under_lease(const struct odbc_leader__group_member_state *m,
                           uint32_t s) {
    return m->rep[s] &&
           atomic_load_explicit(&m->until[s], memory_order_relaxed) ==
               ODBC_LEADER__UNDER_LEASE;
}

/* Sets m->quiet after an answer (lease: under the member's lease) and
 * what it led to: 1 when a steady tick has nothing to do shard by shard
 * as long as the lease is renewed in time. Every shard the assignment
 * gives this member is held and led under the lease (nothing to take),
 * no other shard is held (nothing to hand over), none is being released
 * and none of the others is vacant (no orphan to take; a shard this tick
 * took may still be marked vacant from a snapshot before the take). Then
 * only a change of the live members (a new assignment), a full answer, a
 * lapse or the lease's window running out here changes a shard, and each
 * of those goes shard by shard again. */
static void find_quiet(struct odbc_leader__group_member_state *m, int lease) {
    uint32_t led = 0;
    int quiet = lease && m->assigned && m->self >= 0;

    for (uint32_t s = 0; quiet && s < m->shards; s++) {
        int mine = m->owner[s] == (uint32_t)m->self;
        int held = m->held[s] != 0;

        if (held)
            quiet = mine && !m->release[s] && led_under_lease(m, s);
        else
            quiet = !mine && !m->release[s] && m->vacant_ns[s] == 0;
        led += (uint32_t)held;
    }
    m->quiet = quiet;
    m->n_led = quiet ? led : 0;
}

/* ---- the tick ---- */

/* After a failure at now: a lost connection is reopened after a backoff. */
static int failed(struct odbc_leader__group_member_state *m, int rc,
                  int64_t now) {
    if (odbc_leader__error_drops_connection(rc)) {
        if (m->connected)
            m->ops->disconnect(m->port);
        m->connected = 0;
        m->full_ns = 0;
        m->backoff_ns = m->backoff_ns == 0 ? BACKOFF_MIN_NS : 2 * m->backoff_ns;
        if (m->backoff_ns > m->cand.renew_ns)
            m->backoff_ns = m->cand.renew_ns;
        m->reconnect_at_ns = now + m->backoff_ns;
        m->next_ns = m->reconnect_at_ns;
    } else {
        m->next_ns = now + m->cand.renew_ns;
    }
    return rc;
}

/* The delay until the next useful tick (next_ns: the next renewal or an
 * earlier moment of next_useful()), or earlier when a led shard's window
 * ends first. */
static uint32_t delay_ms(const struct odbc_leader__group_member_state *m,
                         int64_t now) {
    int64_t next = m->next_ns;
    int64_t lease = atomic_load_explicit(&m->lease_until, memory_order_relaxed);

    if (m->quiet && m->n_led > 0 && lease != 0 && lease < next)
        next = lease;
    for (uint32_t s = 0; !m->quiet && s < m->shards; s++) {
        int64_t u = window(m, s);

        if (u != 0 && u < next)
            next = u;
    }
    return next <= now ? 0
                       : (uint32_t)((next - now + NS_PER_MS - 1) / NS_PER_MS);
}

/* 1 when the assignment gives this member a shard it does not hold and is
 * not releasing: the next tick has something to take. */
static int has_takes(const struct odbc_leader__group_member_state *m) {
    if (!m->assigned || m->self < 0)
        return 0;
    for (uint32_t s = 0; s < m->shards; s++) {
        if (assigned_here(m, s) && m->held[s] == 0 && !m->release[s])
            return 1;
    }
    return 0;
}

/*
 * The time of the next tick after one answered at hi: the next renewal
 * (next), or sooner when a tick then can do more than renew. Right away
 * when the live members just changed and the new assignment gives this
 * member shards to take; else at the first watch that ends before next:
 * a member whose heartbeat stopped turns dead one TTL after it was last
 * seen moving, a holder whose renew_seq stopped can be offered as dead one
 * TTL after that, so waking then (not at the renewal after it) takes a
 * crashed member's shards up to one renew interval sooner. Each deadline
 * wakes one tick at most: once passed, it is no longer after hi.
 */
static int64_t next_useful(const struct odbc_leader__group_member_state *m,
                           int changed, int64_t hi, int64_t next) {
    if (changed && has_takes(m))
        return hi;
    for (size_t i = 0; i < m->n_members; i++) {
        int64_t d = m->members[i].beat_seen_ns + m->cand.ttl_ns;

        if ((int)i != m->self && m->members[i].live && d > hi && d < next)
            next = d;
    }
    for (size_t i = 0; i < m->n_holders; i++) {
        int64_t d = m->holders[i].seq_seen_ns + m->cand.ttl_ns;

        if (m->holders[i].inc != m->inc && d > hi && d < next)
            next = d;
    }
    return next;
}

/* 1 when the tick at now must read the shard rows: the first of a
 * connection, one that takes, releases or offers a dead holder (each list
 * is "[]" when empty), or FULL_TTLS TTLs after the last full answer. */
static int wants_full(const struct odbc_leader__group_member_state *m,
                      int64_t now) {
    return m->full_ns == 0 || m->take.len > 2 || m->rel.len > 2 ||
           m->dead.len > 2 || now - m->full_ns >= FULL_TTLS * m->cand.ttl_ns;
}

/* Runs one tick statement and applies its answer. Returns the shards led
 * or a negative error. */
static int run_tick(struct odbc_leader__group_member_state *m) {
    struct odbc_leader__group_args args;
    struct answer a;
    int64_t start, hi, until;
    int rc, changed, quiet;

    memset(&a, 0, sizeof(a));
    a.m = m;
    start = m->cand.now_ns(m->cand.clock_ctx);
    plan_releases(m, start);
    rc = build_lists(m, start);
    if (rc < 0)
        goto done;
    memset(&args, 0, sizeof(args));
    args.inc = m->inc;
    args.seq = ++m->seq;
    args.shards = m->shards;
    args.take = m->take.p;
    args.release = m->rel.p;
    args.dead = m->dead.p;
    args.full = wants_full(m, start);
    rc = m->ops->tick(m->port, &args, answer_row, &a);
    hi = m->cand.now_ns(m->cand.clock_ctx);
    if (rc < 0) {
        rc = failed(m, rc, hi);
        goto done;
    }
    if (a.bad) {
        /* members that disagree on the size: nothing here is trusted */
        odbc_leader__logf(&m->cand.log, LOG_ERR,
                          "group tick: %d rows name a shard outside 0..%u: "
                          "the group has more shards than LeaderShards says",
                          a.bad, (unsigned)m->shards - 1);
        rc = failed(m, ODBC_LEADER_ECONFIG, hi);
        goto done;
    }
    m->backoff_ns = 0;
    m->next_ns = start + m->cand.renew_ns;
    if (a.lease && !a.renewed)
        lapse(m, &a);
    a.full |= args.full != 0 || !a.lease;
    if (a.full)
        m->full_ns = start;
    until = window_end(m, start);
    quiet = m->quiet && !a.full && a.renewed && until > hi;
    if (quiet) {
        /* the shards led are the ones led before, all under the lease */
        atomic_store_explicit(&m->lease_until, until, memory_order_release);
        rc = (int)m->n_led;
    } else if (shard_rows(&a) < 0) {
        m->quiet = 0; /* the answer is not applied: look again next tick */
        rc = ODBC_LEADER_ENOMEM;
        goto done;
    } else {
        if (!a.full)
            keep_rows(m, &a); /* after a lapse, nothing is held */
        rc = take_shards(m, &a, start, hi);
    }
    if (a.full)
        take_holders(m, &a, hi);
    else if (count_holders(m, &a, hi) < 0)
        rc = ODBC_LEADER_ENOMEM;
    forget_lapsed(m);
    changed = take_members(m, &a, hi);
    if (changed < 0)
        rc = changed;
    else if ((changed || !m->assigned) && m->self >= 0) {
        int r = assign(m);

        if (r < 0)
            rc = r;
    }
    if (changed != 0 || !m->assigned)
        quiet = 0; /* the assignment may have moved shards */
    if (!quiet) {
        settle_lost(m);
        find_quiet(m, a.lease);
    }
    m->answers++;
    if (changed >= 0)
        m->next_ns = next_useful(m, changed, hi, m->next_ns);
done:
    free(a.got);
    free(a.vacant);
    free(a.members);
    free(a.holders);
    free(a.keys);
    return rc;
}

int odbc_leader__group_member_tick(struct odbc_leader__group_member_state *m,
                                   uint32_t *next_tick_ms) {
    int64_t now = m->cand.now_ns(m->cand.clock_ctx);
    int rc = 0;

    if (!m->connected && now < m->reconnect_at_ns) {
        plan_releases(m, now);
        rc = ODBC_LEADER_EBACKOFF;
    } else if (!m->connected) {
        rc = m->ops->connect(m->port, NULL, 0);
        if (rc < 0)
            rc = failed(m, rc, m->cand.now_ns(m->cand.clock_ctx));
        else
            m->connected = 1;
    }
    if (rc == 0)
        rc = run_tick(m);
    if (next_tick_ms != NULL)
        *next_tick_ms = delay_ms(m, m->cand.now_ns(m->cand.clock_ctx));
    return rc;
}

void odbc_leader__group_member_leave(
    struct odbc_leader__group_member_state *m) {
    int rc;

    m->quiet = 0;
    for (uint32_t s = 0; s < m->shards; s++) {
        if (m->rep[s])
            stop(m, s);
    }
    if (!m->connected)
        return;
    rc = m->ops->leave(m->port, m->inc);
    if (rc < 0)
        odbc_leader__logf(&m->cand.log, LOG_WARNING,
                          "leaving the group failed (%s): its shards move "
                          "when their leases expire",
                          odbc_leader_strerror(rc));
    else
        odbc_leader__logf(&m->cand.log, LOG_INFO, "left the group");
    m->ops->disconnect(m->port);
    m->connected = 0;
}
