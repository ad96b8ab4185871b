/* SPDX-License-Identifier: MIT */
/*
 * test_shard.c: unit tests of sharded groups' pure logic: the key-to-shard
 * function's test vectors (docs/abi.md lists the same), the assignment's
 * balance and moves, and the group member (member.c) against a fake port
 * and a fake clock: trust windows, the watch of a holder, the first tick
 * that takes nothing, and the stop reported before a release.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "member.h"
#include "shard.h"

#define MS INT64_C(1000000)

/* ---- the key-to-shard function ---- */

static void test_fnv_vectors(void **state) {
    (void)state;
    /* the published FNV-1a 64 test vectors */
    assert_true(odbc_leader__fnv1a64("", 0) == UINT64_C(0xcbf29ce484222325));
    assert_true(odbc_leader__fnv1a64("a", 1) == UINT64_C(0xaf63dc4c8601ec8c));
    assert_true(odbc_leader__fnv1a64("foobar", 6) ==
                UINT64_C(0x85944171f73967e8));
    /* docs/abi.md's table */
    assert_int_equal(odbc_leader__shard_of("backup", 64), 63);
    assert_int_equal(odbc_leader__shard_of("nightly-report", 64), 43);
    assert_int_equal(odbc_leader__shard_of("job:42", 1000), 480);
    assert_int_equal(odbc_leader__shard_of("caf\xc3\xa9", 16384), 3465);
    assert_int_equal(odbc_leader__shard_of("", 1000), 37);
}

/* ---- the assignment ---- */

/* ids "host-0" ... into a static table. */
static const char **ids_of(size_t n) {
    static char names[64][32];
    static const char *ids[64];

    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof(names[i]), "host-%u", (unsigned)i);
        ids[i] = names[i];
    }
    return ids;
}

/* Assigns shards over ids; returns the owner by id (pointers into ids). */
static const char **assign_ids(const char **ids, size_t n, uint32_t shards,
                               uint32_t *load) {
    uint32_t *out = calloc(shards, sizeof(*out));
    uint64_t *hid = calloc(n, sizeof(*hid));
    const char **own = calloc(shards, sizeof(*own));

    assert_int_equal(odbc_leader__assign(ids, n, shards, out, load, hid), 0);
    for (uint32_t s = 0; s < shards; s++)
        own[s] = ids[out[s]];
    free(out);
    free(hid);
    return own;
}

static void test_balance_and_order(void **state) {
    const char **ids = ids_of(10);
    const char *rev[10];
    uint32_t load[10], load2[10], max = 0;
    const char **a, **b;

    (void)state;
    for (int i = 0; i < 10; i++)
        rev[i] = ids[9 - i];
    a = assign_ids(ids, 10, 10000, load);
    b = assign_ids(rev, 10, 10000, load2);
    for (uint32_t s = 0; s < 10000; s++)
        assert_string_equal(a[s], b[s]); /* the order of ids is irrelevant */
    for (int i = 0; i < 10; i++)
        max = load[i] > max ? load[i] : max;
    assert_true(max <= odbc_leader__shard_cap(10000, 10));
    assert_true(max * 100 <= 105 * 1000 + 100); /* max/mean <= 1.05 */
    assert_int_equal(odbc_leader__shard_cap(100, 3), 35);
    assert_int_equal(odbc_leader__assign(ids, 0, 10, NULL, NULL, NULL), -1);
    free(a);
    free(b);
}

/* Share of shards whose owner differs between a and b. */
static double moved(const char **a, const char **b, uint32_t shards) {
    uint32_t n = 0;

    for (uint32_t s = 0; s < shards; s++)
        n += strcmp(a[s], b[s]) != 0;
    return (double)n / shards;
}

static void check_join_leave(size_t n, uint32_t shards) {
    const char **ids = ids_of(n + 1);
    uint32_t load[64];
    const char **before = assign_ids(ids, n, shards, load);
    const char **join = assign_ids(ids, n + 1, shards, load);
    const char **leave = assign_ids(ids + 1, n - 1, shards, load);
    uint32_t others = 0;
    double j = moved(before, join, shards);

    print_message("%zu members, %u shards: a join moves %.4f (1/(N+1) = "
                  "%.4f)\n",
                  n, (unsigned)shards, j, 1.0 / (double)(n + 1));
    assert_true(j <= 1.25 / (double)(n + 1));
    for (uint32_t s = 0; s < shards; s++)
        others +=
            strcmp(before[s], ids[0]) != 0 && strcmp(before[s], leave[s]) != 0;
    print_message("... a leave moves %u shards of the others\n", others);
    assert_true(others * 100 <= shards); /* at most 1% of the others' */
    free(before);
    free(join);
    free(leave);
}

static void test_moves(void **state) {
    (void)state;
    check_join_leave(10, 10000);
    check_join_leave(5, 1000);
    check_join_leave(3, 64);
}

/* ---- the group member against a fake port ---- */

#define SHARDS 8

struct row {
    char holder[32];
    int64_t inc, seq, term, expires_ms;
};

struct fake {
    int64_t now_ns;
    struct row rows[SHARDS];
    int64_t other_beat_ms; /* the other member "b"'s heartbeat, 0 none */
    int ticks;
    char last_take[256], last_release[256], last_dead[256];
    int stopped_before_release; /* every released shard was reported */
    int reported[SHARDS];       /* last report per shard: 1 led, 0 not */
    int fail_next;
    int64_t answer_cost_ns;
    /* shards held under the member's lease (sqlite.sql version 7) */
    int by_lease;
    int64_t lease_inc, lease_seq, lease_expires_ms;
    int64_t db_ahead_ms; /* the database clock ahead of the member's */
    int honour_full;     /* answer :full 0 with K rows only, as the
                            shipped dialects do */
    int full_ticks;      /* ticks that asked for the shard rows */
    int64_t b_seq;       /* by_lease: the lease counter of a holder "b"
                            (incarnation 77) that is no member, 0 none */
    int64_t c_inc;       /* a holder "c" named before b (renew_seq 6,
                            never growing), 0 none */
    int d_live;          /* a live member "d" that never takes (an older
                            build: rows held under a lease are not its) */
};

static int64_t fake_now(void *ctx) { return ((struct fake *)ctx)->now_ns; }

static int64_t db_ms(const struct fake *f) {
    return f->now_ns / MS + f->db_ahead_ms;
}

static int fake_connect(void *port, char *err, size_t errlen) {
    (void)port;
    (void)err;
    (void)errlen;
    return 0;
}

static void fake_disconnect(void *port) { (void)port; }

/* 1 when the JSON list text holds the number s as an element. */
static int in_list(const char *text, int s) {
    char want[16];
    const char *p = text;

    snprintf(want, sizeof(want), "%d", s);
    while ((p = strstr(p, want)) != NULL) {
        char before = p == text ? '[' : p[-1];
        char after = p[strlen(want)];

        if ((before == '[' || before == ',') && (after == ']' || after == ','))
            return 1;
        p++;
    }
    return 0;
}

/* 1 when the JSON list of pairs text holds [s,term]. */
static int in_pairs(const char *text, int s, int64_t term) {
    char want[48];

    snprintf(want, sizeof(want), "[%d,%lld]", s, (long long)term);
    return strstr(text, want) != NULL;
}

/* Answers an L row per shard "a" holds (by_lease: every row of its
 * incarnation; else the rows this tick renewed or took) and a V row per
 * vacant shard. */
static void shard_rows(const struct fake *f,
                       const struct odbc_leader__group_args *a, int by_lease,
                       int64_t now, odbc_leader__group_row_fn fn, void *ctx) {
    struct odbc_leader__group_row r;

    for (int s = 0; s < SHARDS; s++) {
        const struct row *w = &f->rows[s];
        int mine = strcmp(w->holder, "a") == 0 &&
                   (by_lease ? w->inc == a->inc : w->seq == a->seq);

        memset(&r, 0, sizeof(r));
        r.a = s;
        r.b = w->term;
        r.c = w->expires_ms;
        r.now_ms = now;
        if (mine)
            r.kind = 'L';
        else if (w->holder[0] == '\0')
            r.kind = 'V';
        else
            continue;
        assert_int_equal(fn(ctx, &r), 0);
    }
}

/* 1 when the JSON list of pairs text names incarnation inc with a
 * renew_seq of at least seq. */
static int dead_at(const char *text, int64_t inc, int64_t seq) {
    char want[48];
    const char *p;

    snprintf(want, sizeof(want), "[%lld,", (long long)inc);
    p = strstr(text, want);
    return p != NULL && strtoll(p + strlen(want), NULL, 10) >= seq;
}

/* The fake tick under the member's lease (one lease, member "a"): the
 * lease is made for a new incarnation and renewed while unexpired, never
 * after; shard rows are written only by a take or a release; a take
 * needs the lease renewed and takes a vacant row, or one of an earlier
 * incarnation of "a" named in :dead with the counter its lease ended
 * with. Answers S first, then L (every row held), V and M. */
static int lease_tick(struct fake *f, const struct odbc_leader__group_args *a,
                      odbc_leader__group_row_fn fn, void *ctx) {
    int64_t now = db_ms(f), old_inc = f->lease_inc, old_seq = f->lease_seq;
    struct odbc_leader__group_row r;
    int renewed = 0;

    if (f->lease_inc != a->inc) { /* a new incarnation: its lease */
        f->lease_inc = a->inc;
        f->lease_seq = a->seq;
        f->lease_expires_ms = now + 1000;
        renewed = 1;
    } else if (f->lease_expires_ms > now && f->lease_seq < a->seq) {
        f->lease_seq = a->seq;
        f->lease_expires_ms = now + 1000;
        renewed = 1;
    }
    for (int s = 0; s < SHARDS; s++) {
        struct row *w = &f->rows[s];
        int mine = strcmp(w->holder, "a") == 0 && w->inc == a->inc;
        int lapsed = strcmp(w->holder, "a") == 0 && w->inc == old_inc &&
                     old_inc != a->inc && dead_at(a->dead, old_inc, old_seq);

        if (mine && in_pairs(a->release, s, w->term)) {
            memset(w, 0, sizeof(*w));
            w->expires_ms = now;
        } else if (renewed && in_list(a->take, s) &&
                   (w->holder[0] == '\0' || lapsed)) {
            snprintf(w->holder, sizeof(w->holder), "a");
            w->inc = a->inc;
            w->seq = a->seq;
            w->term++;
            w->expires_ms = INT64_MAX;
        }
    }
    f->now_ns += f->answer_cost_ns;
    f->full_ticks += a->full != 0;
    memset(&r, 0, sizeof(r));
    r.kind = 'S';
    r.a = renewed;
    r.b = f->lease_seq;
    r.c = f->lease_expires_ms;
    assert_int_equal(fn(ctx, &r), 0);
    if (f->honour_full && !a->full) { /* a steady tick: the counters */
        memset(&r, 0, sizeof(r));
        r.kind = 'K';
        snprintf(r.name, sizeof(r.name), "a");
        r.a = f->lease_inc;
        r.b = f->lease_seq;
        assert_int_equal(fn(ctx, &r), 0);
        if (f->b_seq != 0) {
            r.a = 77;
            r.b = f->b_seq;
            assert_int_equal(fn(ctx, &r), 0);
        }
        goto members;
    }
    if (f->b_seq != 0) {
        memset(&r, 0, sizeof(r));
        r.kind = 'H';
        snprintf(r.name, sizeof(r.name), "b");
        r.a = 77;
        r.b = f->b_seq;
        r.c = 1;
        assert_int_equal(fn(ctx, &r), 0);
    }
    shard_rows(f, a, 1, now, fn, ctx);
    for (int s = 0; s < SHARDS; s++) { /* the holders */
        const struct row *w = &f->rows[s];

        if (w->holder[0] == '\0')
            continue;
        memset(&r, 0, sizeof(r));
        r.kind = 'H';
        snprintf(r.name, sizeof(r.name), "a");
        r.a = w->inc;
        r.b = w->inc == f->lease_inc ? f->lease_seq : old_seq;
        r.c = 1;
        assert_int_equal(fn(ctx, &r), 0);
        break;
    }
members:
    memset(&r, 0, sizeof(r));
    r.kind = 'M';
    snprintf(r.name, sizeof(r.name), "a");
    r.b = now;
    return fn(ctx, &r);
}

/* The fake tick: this member is "a"; rows follow the dialect's rules. */
static int fake_tick(void *port, const struct odbc_leader__group_args *a,
                     odbc_leader__group_row_fn fn, void *ctx) {
    struct fake *f = port;
    int64_t now = db_ms(f);
    struct odbc_leader__group_row r;

    f->ticks++;
    snprintf(f->last_take, sizeof(f->last_take), "%s", a->take);
    snprintf(f->last_release, sizeof(f->last_release), "%s", a->release);
    snprintf(f->last_dead, sizeof(f->last_dead), "%s", a->dead);
    if (f->fail_next) {
        f->fail_next = 0;
        return ODBC_LEADER_ECONNLOST;
    }
    if (f->by_lease)
        return lease_tick(f, a, fn, ctx);
    for (int s = 0; s < SHARDS; s++) {
        struct row *w = &f->rows[s];
        int mine = strcmp(w->holder, "a") == 0 && w->inc == a->inc;

        if (mine && in_pairs(a->release, s, w->term)) {
            if (f->reported[s])
                f->stopped_before_release = 0;
            memset(w, 0, sizeof(*w));
            w->expires_ms = now;
        } else if (mine && w->expires_ms > now) {
            w->expires_ms = now + 1000;
            w->seq = a->seq;
        } else if (mine && in_list(a->take, s)) { /* its own, expired */
            w->term++;
            w->expires_ms = now + 1000;
            w->seq = a->seq;
        } else if (!mine && in_list(a->take, s) &&
                   (w->holder[0] == '\0' ||
                    (w->expires_ms <= now && strstr(a->dead, "[77,") &&
                     w->inc == 77))) {
            snprintf(w->holder, sizeof(w->holder), "a");
            w->inc = a->inc;
            w->seq = a->seq;
            w->term++;
            w->expires_ms = now + 1000;
        }
    }
    f->now_ns += f->answer_cost_ns;
    shard_rows(f, a, 0, now, fn, ctx);
    memset(&r, 0, sizeof(r));
    r.kind = 'M';
    snprintf(r.name, sizeof(r.name), "a");
    r.b = now;
    assert_int_equal(fn(ctx, &r), 0);
    if (f->d_live) {
        snprintf(r.name, sizeof(r.name), "d");
        r.b = now;
        assert_int_equal(fn(ctx, &r), 0);
    }
    if (f->other_beat_ms != 0) {
        snprintf(r.name, sizeof(r.name), "b");
        r.b = f->other_beat_ms;
        assert_int_equal(fn(ctx, &r), 0);
        memset(&r, 0, sizeof(r));
        r.kind = 'H';
        if (f->c_inc != 0) {
            snprintf(r.name, sizeof(r.name), "c");
            r.a = f->c_inc;
            r.b = 6;
            r.c = 1;
            assert_int_equal(fn(ctx, &r), 0);
        }
        snprintf(r.name, sizeof(r.name), "b");
        r.a = 77;
        r.b = 5; /* b's renew_seq never grows in these tests */
        r.c = 1;
        assert_int_equal(fn(ctx, &r), 0);
    }
    return 0;
}

static int fake_leave(void *port, int64_t inc) {
    (void)port;
    (void)inc;
    return 0;
}

static int64_t next_inc(void) { return 43; }

static const struct odbc_leader__group_port_ops fake_ops = {
    fake_connect, fake_disconnect, fake_tick, fake_leave};

static void on_shard(void *ctx, uint32_t s, int is_leader, int64_t term) {
    struct fake *f = ctx;

    (void)term;
    f->reported[s] = is_leader;
}

static void start(struct odbc_leader__group_member_state *m, struct fake *f) {
    struct odbc_leader__group_member_conf c;
    struct odbc_leader_callbacks cb;
    struct odbc_leader__log log = {NULL, NULL};

    memset(f, 0, sizeof(*f));
    f->now_ns = 1000 * MS;
    f->stopped_before_release = 1;
    memset(&cb, 0, sizeof(cb));
    cb.struct_size = sizeof(cb);
    cb.ctx = f;
    cb.on_shard_change = on_shard;
    memset(&c, 0, sizeof(c));
    c.ops = &fake_ops;
    c.port = f;
    c.cand.now_ns = fake_now;
    c.cand.clock_ctx = f;
    c.cand.log = &log;
    c.cand.cb = &cb;
    c.cand.id = "a";
    c.shards = SHARDS;
    c.inc = 42;
    c.new_inc = next_inc;
    c.cand.ttl_ms = 1000;
    c.cand.renew_ms = 300;
    c.cand.margin_ms = 200;
    c.connected = 1;
    assert_int_equal(odbc_leader__group_member_init(m, &c), 0);
}

static int led(const struct odbc_leader__group_member_state *m) {
    int n = 0;

    for (uint32_t s = 0; s < SHARDS; s++)
        n += odbc_leader__group_member_leadership(m, s, NULL) != 0;
    return n;
}

/* Alone: the first tick only looks, the second takes every shard; the
 * windows end by themselves when nobody ticks. */
static void test_alone_takes_all_then_windows_end(void **state) {
    struct odbc_leader__group_member_state m;
    struct fake f;
    uint32_t valid = 0;

    (void)state;
    start(&m, &f);
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL), 0);
    assert_string_equal(f.last_take, "[]");
    f.now_ns += 300 * MS;
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL), SHARDS);
    assert_string_equal(f.last_take, "[0,1,2,3,4,5,6,7]");
    assert_int_equal(led(&m), SHARDS);
    assert_true(odbc_leader__group_member_leadership(&m, 3, &valid) == 1);
    assert_int_equal(valid, 800); /* TTL - margin from the tick's start */
    f.now_ns += 799 * MS;
    assert_int_equal(led(&m), SHARDS);
    f.now_ns += 1 * MS;
    assert_int_equal(led(&m), 0); /* no I/O, no tick: the windows ended */
    assert_true(odbc_leader__group_member_leadership(&m, SHARDS, NULL) == 0);
    odbc_leader__group_member_free(&m);
}

/* A late answer (after the window it would open) is not trusted. */
static void test_late_answer_not_trusted(void **state) {
    struct odbc_leader__group_member_state m;
    struct fake f;

    (void)state;
    start(&m, &f);
    odbc_leader__group_member_tick(&m, NULL);
    f.now_ns += 300 * MS;
    f.answer_cost_ns = 900 * MS;
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL), 0);
    assert_int_equal(led(&m), 0);
    f.answer_cost_ns = 0;
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL), SHARDS);
    odbc_leader__group_member_free(&m);
}

/* A second member appears: after it has been seen alive for two renew
 * intervals, the shards the assignment gives it are reported stopped and
 * then released in the next statement (never the other way round). */
static void test_stop_then_release(void **state) {
    struct odbc_leader__group_member_state m;
    struct fake f;
    int n;

    (void)state;
    start(&m, &f);
    odbc_leader__group_member_tick(&m, NULL);
    f.now_ns += 300 * MS;
    odbc_leader__group_member_tick(&m, NULL);
    for (int i = 0; i < 2; i++) {
        f.now_ns += 300 * MS;
        f.other_beat_ms = db_ms(&f);
        n = odbc_leader__group_member_tick(&m, NULL);
        assert_int_equal(n, SHARDS); /* b not settled yet */
        assert_string_equal(f.last_release, "[]");
    }
    f.now_ns += 300 * MS;
    f.other_beat_ms = db_ms(&f);
    n = odbc_leader__group_member_tick(&m, NULL);
    assert_true(n > 0 && n < SHARDS);
    assert_string_not_equal(f.last_release, "[]");
    assert_true(f.stopped_before_release);
    for (uint32_t s = 0; s < SHARDS; s++)
        assert_int_equal(f.reported[s], odbc_leader__group_member_leadership(
                                            &m, s, NULL) != 0);
    odbc_leader__group_member_free(&m);
}

/* A release whose tick failed is sent again, naming the same term, by
 * every tick until an answer shows the shard gone; the shard stays
 * stopped meanwhile (a failed tick is not a renewal of it). */
static void test_failed_release_is_resent(void **state) {
    struct odbc_leader__group_member_state m;
    struct fake f;
    char first[256];
    int n, stopped = 0;

    (void)state;
    start(&m, &f);
    odbc_leader__group_member_tick(&m, NULL);
    for (int i = 0; i < 2; i++) { /* takes all; b seen, not settled */
        f.now_ns += 300 * MS;
        f.other_beat_ms = db_ms(&f);
        odbc_leader__group_member_tick(&m, NULL);
        assert_string_equal(f.last_release, "[]");
    }
    f.now_ns += 300 * MS;
    f.other_beat_ms = db_ms(&f);
    f.fail_next = 1;
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL),
                     ODBC_LEADER_ECONNLOST);
    assert_string_not_equal(f.last_release, "[]");
    assert_non_null(strstr(f.last_release, ",1]")); /* every term is 1 */
    snprintf(first, sizeof(first), "%s", f.last_release);
    for (int s = 0; s < SHARDS; s++)
        if (in_pairs(first, s, 1)) {
            stopped++;
            assert_int_equal(f.reported[s], 0);
            assert_true(odbc_leader__group_member_leadership(&m, s, NULL) == 0);
            assert_string_equal(f.rows[s].holder, "a"); /* not run */
        }
    assert_true(stopped > 0 && stopped < SHARDS);
    f.now_ns += 110 * MS;
    f.other_beat_ms = db_ms(&f);
    n = odbc_leader__group_member_tick(&m, NULL);
    assert_string_equal(f.last_release, first);
    assert_int_equal(n, SHARDS - stopped);
    for (int s = 0; s < SHARDS; s++)
        if (in_pairs(first, s, 1))
            assert_string_equal(f.rows[s].holder, "");
    f.now_ns += 300 * MS;
    f.other_beat_ms = db_ms(&f);
    odbc_leader__group_member_tick(&m, NULL);
    assert_string_equal(f.last_release, "[]");
    odbc_leader__group_member_free(&m);
}

/* Shard 0 held by "b" (incarnation 77, renew_seq 5, term 9), whose
 * heartbeat and counter never move, until expires_in_ms from now in
 * database time. */
static void held_by_stalled_b(struct fake *f, int64_t expires_in_ms) {
    f->other_beat_ms = 1;
    strcpy(f->rows[0].holder, "b");
    f->rows[0].inc = 77;
    f->rows[0].seq = 5;
    f->rows[0].term = 9;
    f->rows[0].expires_ms = db_ms(f) + expires_in_ms;
}

/* Dead holders are offered in ascending incarnation, whatever order the
 * answer named them in: every member's take then locks their leases in
 * the same order (MariaDB's take locks them in the list's order, and two
 * members that listed two dead holders in opposite orders deadlocked). */
static void test_dead_holders_in_ascending_order(void **state) {
    struct odbc_leader__group_member_state m;
    struct fake f;

    (void)state;
    start(&m, &f);
    held_by_stalled_b(&f, 1000);
    f.c_inc = 90; /* named first */
    odbc_leader__group_member_tick(&m, NULL);
    for (int i = 0; i < 4; i++) {
        f.now_ns += 300 * MS;
        odbc_leader__group_member_tick(&m, NULL);
    }
    assert_string_equal(f.last_dead, "[[77,5],[90,6]]");
    odbc_leader__group_member_free(&m);
}

/* A holder whose renew_seq stays the same is offered as dead only after
 * one TTL on this member's clock. */
static void test_watch_of_a_holder(void **state) {
    struct odbc_leader__group_member_state m;
    struct fake f;

    (void)state;
    start(&m, &f);
    held_by_stalled_b(&f, 1000);
    odbc_leader__group_member_tick(&m, NULL);
    assert_string_equal(f.last_dead, "[]");
    for (int i = 0; i < 3; i++) {
        f.now_ns += 300 * MS;
        odbc_leader__group_member_tick(&m, NULL);
        assert_string_equal(f.last_dead, "[]"); /* < 1 TTL watched */
    }
    f.now_ns += 300 * MS;
    odbc_leader__group_member_tick(&m, NULL);
    assert_string_equal(f.last_dead, "[[77,5]]");
    f.now_ns += 300 * MS;
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL), SHARDS);
    assert_true(odbc_leader__group_member_leadership(&m, 0, NULL) == 10);
    odbc_leader__group_member_free(&m);
}

/* The tick after a member's heartbeat stops is due when its watch ends,
 * not at the renewal after it; the tick that finds it dead and takes over
 * its assignment is followed at once by the one that takes its shards. */
static void test_wakes_at_watch_then_takes_at_once(void **state) {
    struct odbc_leader__group_member_state m;
    struct fake f;
    uint32_t next = 1;

    (void)state;
    start(&m, &f);
    held_by_stalled_b(&f, 500); /* b's heartbeat seen at 1000 ms */
    odbc_leader__group_member_tick(&m, &next);
    assert_int_equal(next, 0); /* first assignment: shards to take */
    f.now_ns += 1 * MS;
    odbc_leader__group_member_tick(&m, &next);
    assert_int_equal(next, 300);
    assert_int_equal(f.rows[0].inc, 77);
    for (int i = 0; i < 2; i++) {
        f.now_ns += 300 * MS;
        odbc_leader__group_member_tick(&m, &next);
        assert_int_equal(next, 300);
    }
    f.now_ns += 300 * MS; /* 1901 ms: b's watches end at 2000 */
    odbc_leader__group_member_tick(&m, &next);
    assert_int_equal(next, 99);
    assert_int_equal(odbc_leader__group_member_leadership(&m, 0, NULL), 0);
    f.now_ns += 99 * MS;
    odbc_leader__group_member_tick(&m, &next);
    assert_string_equal(f.last_dead, "[[77,5]]");
    assert_int_equal(next, 0); /* b is dead: shard 0 is this member's */
    assert_int_equal(odbc_leader__group_member_tick(&m, &next), SHARDS);
    assert_true(odbc_leader__group_member_leadership(&m, 0, NULL) == 10);
    assert_int_equal(next, 300); /* nothing left to wake for */
    odbc_leader__group_member_free(&m);
}

/* Every shard is held by "b", dead (heartbeat and counter stand still,
 * rows expired); the live members are this one and "d", which never takes
 * (a member of an older build, to which rows held under a member's lease
 * never expire). This member takes its own share once b's counter stood
 * still for one TTL, and d's share one TTL later: nobody else would. */
static void test_stranded_shards_of_a_dead_holder_taken(void **state) {
    struct odbc_leader__group_member_state m;
    struct fake f;
    int mine = 0, at_b = 0;

    (void)state;
    start(&m, &f);
    f.d_live = 1;
    f.other_beat_ms = 1;
    for (int s = 0; s < SHARDS; s++) {
        strcpy(f.rows[s].holder, "b");
        f.rows[s].inc = 77;
        f.rows[s].seq = 5;
        f.rows[s].term = 9;
        f.rows[s].expires_ms = db_ms(&f) - 1;
    }
    odbc_leader__group_member_tick(&m, NULL);
    for (int i = 0; i < 5; i++) { /* 1.5 s: past the watch */
        f.now_ns += 300 * MS;
        odbc_leader__group_member_tick(&m, NULL);
    }
    for (int s = 0; s < SHARDS; s++) {
        mine += strcmp(f.rows[s].holder, "a") == 0;
        at_b += strcmp(f.rows[s].holder, "b") == 0;
    }
    assert_true(mine > 0 && at_b > 0); /* the assignment's shares */
    assert_int_equal(mine + at_b, SHARDS);
    for (int i = 0; i < 2; i++) { /* 2.1 s: one TTL past the watch */
        f.now_ns += 300 * MS;
        odbc_leader__group_member_tick(&m, NULL);
    }
    for (int s = 0; s < SHARDS; s++)
        assert_string_not_equal(f.rows[s].holder, "b");
    odbc_leader__group_member_free(&m);
}

/* Leads all; its ticks stop for longer than the TTL, so every row
 * expires while it is still its own. The rows the assignment gives it
 * are taken back in a new term: nobody else would while it lives. */
static void test_own_expired_rows_taken_back(void **state) {
    struct odbc_leader__group_member_state m;
    struct fake f;

    (void)state;
    start(&m, &f);
    odbc_leader__group_member_tick(&m, NULL);
    f.now_ns += 300 * MS;
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL), SHARDS);
    f.now_ns += 1500 * MS; /* past the TTL: expired, still held by "a" */
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL), 0);
    assert_string_equal(f.rows[0].holder, "a");
    f.now_ns += 300 * MS;
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL), SHARDS);
    assert_string_equal(f.last_take, "[0,1,2,3,4,5,6,7]");
    assert_true(odbc_leader__group_member_leadership(&m, 0, NULL) == 2);
    odbc_leader__group_member_free(&m);
}

/* Starts member "a" under the member's lease (the fake answering :full 0
 * with K rows when honour_full) and ticks until it leads every shard. */
static void start_leading(struct odbc_leader__group_member_state *m,
                          struct fake *f, int honour_full) {
    start(m, f);
    f->by_lease = 1;
    f->honour_full = honour_full;
    odbc_leader__group_member_tick(m, NULL);
    f->now_ns += 300 * MS;
    assert_int_equal(odbc_leader__group_member_tick(m, NULL), SHARDS);
}

/* Under the member's lease: a steady tick leaves the shard rows alone;
 * when the database clock steps past the lease (the member's own windows
 * still open), the answer that says the lease lapsed stops every shard at
 * once, and the member goes on as a new incarnation that takes its rows
 * back, in new terms, at its next tick. */
static void test_lapsed_lease_stops_every_shard(void **state) {
    struct odbc_leader__group_member_state m;
    struct fake f;

    (void)state;
    start_leading(&m, &f, 0);
    assert_int_equal(f.rows[0].seq, 2);
    f.now_ns += 300 * MS;
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL), SHARDS);
    assert_int_equal(f.rows[0].seq, 2); /* no shard row written */
    assert_int_equal(f.lease_seq, 3);   /* the lease renewed instead */
    f.db_ahead_ms = 5000;               /* a step of the database clock */
    assert_int_equal(led(&m), SHARDS);  /* the windows are still open */
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL), 0);
    assert_int_equal(led(&m), 0); /* lapsed: nothing trusted */
    assert_int_equal(f.reported[0], 0);
    assert_int_equal(m.inc, 43);
    f.now_ns += 300 * MS;
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL), SHARDS);
    assert_string_equal(f.last_dead, "[[42,3]]");
    assert_true(odbc_leader__group_member_leadership(&m, 0, NULL) == 2);
    odbc_leader__group_member_free(&m);
}

/* Under the member's lease, with a dialect that answers a steady tick
 * (:full 0) with the lease counters only: the shards stay held and
 * trusted through steady ticks, which read no shard row; the rows are
 * read again at least every two TTLs; a lapse found by a steady tick
 * still stops every shard, and the new incarnation takes them back. */
static void test_steady_ticks_keep_shards_without_reading_them(void **state) {
    struct odbc_leader__group_member_state m;
    struct fake f;
    int full_before;

    (void)state;
    start_leading(&m, &f, 1);
    full_before = f.full_ticks; /* the first answer and the take */
    assert_int_equal(full_before, 2);
    for (int i = 0; i < 6; i++) { /* 1.8 s: below two TTLs of the last */
        f.now_ns += 300 * MS;
        assert_int_equal(odbc_leader__group_member_tick(&m, NULL), SHARDS);
        assert_int_equal(led(&m), SHARDS);
        assert_string_equal(f.last_take, "[]");
    }
    assert_int_equal(f.full_ticks, full_before); /* all six steady */
    for (int i = 0; i < 2; i++) {
        f.now_ns += 300 * MS;
        assert_int_equal(odbc_leader__group_member_tick(&m, NULL), SHARDS);
    }
    assert_int_equal(f.full_ticks, full_before + 1); /* two TTLs on */
    assert_true(odbc_leader__group_member_leadership(&m, 0, NULL) == 1);
    f.db_ahead_ms = 5000; /* the lease lapses under a steady tick */
    f.now_ns += 300 * MS;
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL), 0);
    assert_int_equal(led(&m), 0);
    f.now_ns += 300 * MS;
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL), SHARDS);
    assert_string_equal(f.last_dead, "[[42,10]]");
    assert_true(odbc_leader__group_member_leadership(&m, 0, NULL) == 2);
    odbc_leader__group_member_free(&m);
}

/* A quiet member (it leads every shard under its lease, with nothing to
 * take, release or offer) renews them all with the lease at a steady tick:
 * each shard's window is then TTL - margin from that tick's start, and
 * runs out by itself when nobody ticks; the first tick after that, even
 * one that fails, reports every shard stopped; the next one that renews
 * the lease in time leads them all again, without a take (the rows are
 * still its own). */
static void test_quiet_member_windows_follow_the_lease(void **state) {
    struct odbc_leader__group_member_state m;
    struct fake f;
    uint32_t valid = 0, next = 0;

    (void)state;
    start_leading(&m, &f, 1);
    for (int i = 0; i < 3; i++) { /* steady ticks */
        f.now_ns += 300 * MS;
        assert_int_equal(odbc_leader__group_member_tick(&m, &next), SHARDS);
        assert_int_equal(f.full_ticks, 2);
        assert_true(next > 0 && next <= 300);
        for (uint32_t s = 0; s < SHARDS; s++) {
            assert_true(odbc_leader__group_member_leadership(&m, s, &valid) ==
                        1);
            assert_int_equal(valid, 800);
            assert_int_equal(f.reported[s], 1);
        }
    }
    f.now_ns += 799 * MS;
    assert_int_equal(led(&m), SHARDS);
    f.now_ns += 1 * MS;
    assert_int_equal(led(&m), 0); /* no tick: the lease's window ended */
    f.fail_next = 1;
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL),
                     ODBC_LEADER_ECONNLOST);
    for (uint32_t s = 0; s < SHARDS; s++)
        assert_int_equal(f.reported[s], 0); /* and the host was told */
    f.now_ns += 100 * MS; /* the reconnect, before the lease expires */
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL), SHARDS);
    assert_string_equal(f.last_take, "[]");
    assert_int_equal(f.reported[5], 1);
    assert_true(odbc_leader__group_member_leadership(&m, 5, &valid) == 1);
    assert_int_equal(valid, 800);
    odbc_leader__group_member_free(&m);
}

/* The watch of a holder goes on through steady ticks: holder b takes a
 * shard after this member's last full answer (so it is first seen in the
 * K rows), its counter grows there, then stands still; the full answer
 * read in between (two TTLs after the last) shows the same counter and
 * keeps the watch, so b is offered as dead one TTL after its counter was
 * last seen moving, not one TTL after that full answer. */
static void test_watch_goes_on_through_steady_ticks(void **state) {
    struct odbc_leader__group_member_state m;
    struct fake f;

    (void)state;
    start_leading(&m, &f, 1);
    for (int i = 0; i < 5; i++) { /* b renews: its counter moves */
        f.now_ns += 300 * MS;
        f.b_seq++;
        odbc_leader__group_member_tick(&m, NULL);
        assert_string_equal(f.last_dead, "[]");
    }
    f.now_ns += 300 * MS; /* b stopped: 300 ms */
    odbc_leader__group_member_tick(&m, NULL);
    f.now_ns += 300 * MS; /* 600 ms: the periodic full answer */
    odbc_leader__group_member_tick(&m, NULL);
    assert_int_equal(f.full_ticks, 3);
    f.now_ns += 300 * MS; /* 900 ms */
    odbc_leader__group_member_tick(&m, NULL);
    assert_string_equal(f.last_dead, "[]");
    f.now_ns += 300 * MS; /* 1,200 ms: past the TTL */
    odbc_leader__group_member_tick(&m, NULL);
    assert_string_equal(f.last_dead, "[[77,5]]");
    odbc_leader__group_member_free(&m);
}

/* Leads all; its ticks stop for longer than the TTL, and the answer that
 * shows every row lost also shows a second member back, to whom the
 * assignment now gives some. Those rows are still this member's, expired,
 * and the other cannot take them while this member lives and renews the
 * rest: they are released in the term they were held in, the others taken
 * back. */
static void test_lost_rows_of_another_are_released(void **state) {
    struct odbc_leader__group_member_state m;
    struct fake f;
    int given = 0;

    (void)state;
    start(&m, &f);
    odbc_leader__group_member_tick(&m, NULL);
    f.now_ns += 300 * MS;
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL), SHARDS);
    f.now_ns += 1500 * MS;
    f.other_beat_ms = db_ms(&f); /* b is back */
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL), 0);
    f.now_ns += 10 * MS;
    f.other_beat_ms = db_ms(&f);
    odbc_leader__group_member_tick(&m, NULL);
    for (int s = 0; s < SHARDS; s++) {
        if (in_pairs(f.last_release, s, 1)) {
            given++;
            assert_string_equal(f.rows[s].holder, ""); /* vacant for b */
            assert_false(in_list(f.last_take, s));
        } else {
            assert_true(in_list(f.last_take, s));
            assert_int_equal(f.rows[s].term, 2);
        }
    }
    assert_true(given > 0 && given < SHARDS);
    assert_int_equal(led(&m), SHARDS - given);
    f.now_ns += 300 * MS;
    f.other_beat_ms = db_ms(&f);
    odbc_leader__group_member_tick(&m, NULL);
    assert_string_equal(f.last_release, "[]"); /* sent until seen gone */
    odbc_leader__group_member_free(&m);
}

/* A lost connection keeps each window until it ends, then reconnects. */
static void test_error_keeps_windows(void **state) {
    struct odbc_leader__group_member_state m;
    struct fake f;
    uint32_t next = 0;

    (void)state;
    start(&m, &f);
    odbc_leader__group_member_tick(&m, NULL);
    f.now_ns += 300 * MS;
    odbc_leader__group_member_tick(&m, NULL);
    f.now_ns += 300 * MS;
    f.fail_next = 1;
    assert_int_equal(odbc_leader__group_member_tick(&m, &next),
                     ODBC_LEADER_ECONNLOST);
    assert_int_equal(led(&m), SHARDS); /* still inside the windows */
    assert_true(next <= 100);
    f.now_ns += 50 * MS;
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL),
                     ODBC_LEADER_EBACKOFF);
    f.now_ns += 60 * MS;
    assert_int_equal(odbc_leader__group_member_tick(&m, NULL), SHARDS);
    odbc_leader__group_member_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fnv_vectors),
        cmocka_unit_test(test_balance_and_order),
        cmocka_unit_test(test_moves),
        cmocka_unit_test(test_alone_takes_all_then_windows_end),
        cmocka_unit_test(test_late_answer_not_trusted),
        cmocka_unit_test(test_stop_then_release),
        cmocka_unit_test(test_failed_release_is_resent),
        cmocka_unit_test(test_watch_of_a_holder),
        cmocka_unit_test(test_dead_holders_in_ascending_order),
        cmocka_unit_test(test_wakes_at_watch_then_takes_at_once),
        cmocka_unit_test(test_error_keeps_windows),
        cmocka_unit_test(test_own_expired_rows_taken_back),
        cmocka_unit_test(test_lost_rows_of_another_are_released),
        cmocka_unit_test(test_lapsed_lease_stops_every_shard),
        cmocka_unit_test(test_steady_ticks_keep_shards_without_reading_them),
        cmocka_unit_test(test_watch_goes_on_through_steady_ticks),
        cmocka_unit_test(test_quiet_member_windows_follow_the_lease),
        cmocka_unit_test(test_stranded_shards_of_a_dead_holder_taken),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
