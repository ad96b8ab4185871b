/* SPDX-License-Identifier: MIT */
/*
 * test_elector.c: unit tests of the election state machine with a fake
 * clock and a fake database port. The fake port keeps one lease row in
 * memory with the protocol's rules (vacant-or-expired takeover, exact-term
 * renew and resign) in "database time", so the tests check the elector's
 * decisions: trust windows, step-down, backoff, scheduling, reporting.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "config.h"
#include "elector.h"
#include "log.h"

#define MS INT64_C(1000000)

struct fake {
    int64_t now_ns;        /* the local clock */
    int64_t db_offset_ms;  /* database clock = local / 1e6 + offset */
    int64_t op_cost_ns;    /* each operation advances the clock this much */
    int64_t reply_cost_ns; /* renew: the answer takes this long to come
                              back after the database acted */
    /* the lease row */
    char leader[ODBC_LEADER__NAME_MAX + 1];
    int64_t term, expires_at_ms, ttl_ms;
    int has_row;
    int resign_requested; /* someone asked the leader to resign */
    /* injected failures: the next call of that kind returns it */
    int fail_attempt, fail_renew, fail_connect, fail_resign;
    int lose_race; /* the next attempt loses a race: no row, no error */
    /* what the last attempt passed as the watched row */
    int64_t seen_term_arg, seen_expires_arg;
    /* call counters */
    int connects, disconnects, attempts, renews, resigns, unregisters;
    int64_t last_resigned_term;
    int connected;
    /* on_change log */
    int changes;
    int last_is_leader;
    int64_t last_term;
    char last_leader[ODBC_LEADER__NAME_MAX + 1];
    const char *me;
    /* the wake-up lock: the other leader holds it and lets go of it by
     * resigning at other_resigns_at_ns (0 = never) */
    int other_holds_lock;
    int64_t other_resigns_at_ns;
    int waits, releases, holds, reads;
    int attempt_held, renew_held; /* the wake_held the port reports */
    int64_t wait_budgets[8];
    char calls[64]; /* A attempt, N renew, S resign, L release, W wait,
                       H hold, R read */
    /* the elector's log: lines per level, the last warning, and the
     * lines that say how long reconnecting took */
    int warnings, infos, debugs, reconnected;
    char last_warning[256];
};

static void fake_log(void *ctx, int level, const char *msg) {
    struct fake *f = ctx;

    if (level <= LOG_WARNING) {
        f->warnings++;
        snprintf(f->last_warning, sizeof(f->last_warning), "%s", msg);
    } else if (level == LOG_DEBUG) {
        f->debugs++;
    } else {
        f->infos++;
        f->reconnected += strstr(msg, "connected after") != NULL;
    }
}

static void called(struct fake *f, char c) {
    size_t n = strlen(f->calls);

    if (n + 1 < sizeof(f->calls)) {
        f->calls[n] = c;
        f->calls[n + 1] = '\0';
    }
}

static int64_t fake_now(void *ctx) { return ((struct fake *)ctx)->now_ns; }

static int64_t db_now(struct fake *f) {
    return f->now_ns / MS + f->db_offset_ms;
}

static void fill(struct fake *f, struct odbc_leader__result *out) {
    out->found = f->has_row;
    strcpy(out->leader_id, f->leader);
    out->term = f->term;
    out->expires_at_ms = f->expires_at_ms;
    out->now_ms = db_now(f);
}

static int take(int *slot) {
    int rc = *slot;

    *slot = 0;
    return rc;
}

static int fake_connect(void *port) {
    struct fake *f = port;
    int rc = take(&f->fail_connect);

    f->connects++;
    if (rc == 0)
        f->connected = 1;
    return rc;
}

static void fake_disconnect(void *port) {
    struct fake *f = port;

    f->disconnects++;
    f->connected = 0;
}

/* The attempt: takes the lease when there is no row, when it is vacant
 * (released), or when it expired and is the row the caller watched. */
static int fake_attempt(void *port, int64_t seen_term, int64_t seen_expires_ms,
                        struct odbc_leader__result *out) {
    struct fake *f = port;
    int rc = take(&f->fail_attempt);
    int64_t now;

    f->attempts++;
    called(f, 'A');
    assert_true(f->connected);
    f->seen_term_arg = seen_term;
    f->seen_expires_arg = seen_expires_ms;
    f->now_ns += f->op_cost_ns;
    if (rc != 0)
        return rc;
    now = db_now(f);
    memset(out, 0, sizeof(*out));
    if (take(&f->lose_race))
        return 0; /* another writer won: nothing seen */
    if (!f->has_row || f->leader[0] == '\0' ||
        (f->expires_at_ms <= now && f->term == seen_term &&
         f->expires_at_ms == seen_expires_ms)) {
        f->has_row = 1;
        strcpy(f->leader, f->me);
        f->term++;
        f->expires_at_ms = now + f->ttl_ms;
        out->won = 1;
    }
    fill(f, out);
    out->wake_held = out->won ? f->attempt_held : -1;
    return 0;
}

static int fake_renew(void *port, int64_t term,
                      struct odbc_leader__result *out) {
    struct fake *f = port;
    int rc = take(&f->fail_renew);
    int64_t now;

    f->renews++;
    called(f, 'N');
    assert_true(f->connected);
    f->now_ns += f->op_cost_ns;
    if (rc != 0)
        return rc;
    now = db_now(f);
    memset(out, 0, sizeof(*out));
    if (f->has_row && strcmp(f->leader, f->me) == 0 && f->term == term &&
        f->expires_at_ms > now) {
        f->expires_at_ms = now + f->ttl_ms;
        fill(f, out);
        out->resign_requested = f->resign_requested;
        out->wake_held = f->renew_held;
    }
    f->now_ns += f->reply_cost_ns;
    return 0;
}

static int fake_resign(void *port, int64_t term) {
    struct fake *f = port;
    int rc = take(&f->fail_resign);

    f->resigns++;
    called(f, 'S');
    f->last_resigned_term = term;
    if (rc != 0)
        return rc;
    if (f->term == term && strcmp(f->leader, f->me) == 0) {
        f->resign_requested = 0;
        f->leader[0] = '\0';
        f->expires_at_ms = db_now(f);
    }
    return 0;
}

static int fake_unregister(void *port) {
    ((struct fake *)port)->unregisters++;
    return 0;
}

static int fake_release(void *port) {
    struct fake *f = port;

    f->releases++;
    called(f, 'L');
    return 0;
}

/* Blocks (advances the clock) until the other leader resigns or the
 * budget runs out; returns at once when nobody holds the lock. */
static int fake_wait(void *port, int64_t budget_ms) {
    struct fake *f = port;
    int64_t end = f->now_ns + budget_ms * MS;

    if (f->waits < 8)
        f->wait_budgets[f->waits] = budget_ms;
    f->waits++;
    called(f, 'W');
    if (!f->other_holds_lock)
        return 1;
    if (f->other_resigns_at_ns == 0 || f->other_resigns_at_ns > end) {
        f->now_ns = end;
        return 0;
    }
    f->now_ns = f->other_resigns_at_ns;
    f->leader[0] = '\0';
    f->expires_at_ms = db_now(f);
    f->other_holds_lock = 0;
    return 1;
}

static int fake_hold(void *port, int64_t budget_ms) {
    struct fake *f = port;

    (void)budget_ms;
    f->holds++;
    called(f, 'H');
    return 1;
}

/* Reads the lease without writing: what a candidate does before its
 * first attempt. */
static int fake_read(void *port, struct odbc_leader__result *out) {
    struct fake *f = port;

    f->reads++;
    called(f, 'R');
    assert_true(f->connected);
    f->now_ns += f->op_cost_ns;
    memset(out, 0, sizeof(*out));
    fill(f, out);
    return 0;
}

static const struct odbc_leader__port_ops fake_ops = {
    fake_connect,    fake_disconnect, fake_attempt, fake_renew, fake_resign,
    fake_unregister, fake_release,    fake_wait,    fake_hold,  NULL,
};

/* The same port with the read a candidate makes before its first
 * attempt. */
static const struct odbc_leader__port_ops fake_ops_read = {
    fake_connect,    fake_disconnect, fake_attempt, fake_renew, fake_resign,
    fake_unregister, fake_release,    fake_wait,    fake_hold,  fake_read,
};

static void on_change(void *ctx, int is_leader, int64_t term,
                      const char *leader_id) {
    struct fake *f = ctx;

    f->changes++;
    f->last_is_leader = is_leader;
    f->last_term = term;
    strcpy(f->last_leader, leader_id != NULL ? leader_id : "");
}

struct fixture {
    struct fake f;
    struct odbc_leader__elector e;
    struct odbc_leader__log log;
};

/* TTL 3000 ms, renew every 1000 ms, margin 500 ms: trust lasts 2500 ms
 * from the start of the attempt that won or renewed. */
static int setup_with_wait(void **state, int64_t wait_ms) {
    static const struct odbc_leader__elector_conf base = {0};
    struct fixture *x = test_calloc(1, sizeof(*x));
    struct odbc_leader__elector_conf c = base;
    struct odbc_leader_callbacks cb = {0};

    x->f.now_ns = 1000 * MS;
    x->f.db_offset_ms = 1700000000000; /* the database's wall clock */
    x->f.ttl_ms = 3000;
    x->f.me = "me";
    x->f.connected = 1;
    x->f.attempt_held = -1; /* like a dialect without the wake-up lock */
    x->f.renew_held = -1;
    cb.struct_size = sizeof(cb);
    cb.ctx = &x->f;
    cb.on_change = on_change;
    x->log.fn = fake_log;
    x->log.ctx = &x->f;
    c.cand.log = &x->log;
    c.ops = &fake_ops;
    c.port = &x->f;
    c.cand.now_ns = fake_now;
    c.cand.clock_ctx = &x->f;
    c.cand.cb = &cb;
    c.cand.id = "me";
    c.cand.ttl_ms = 3000;
    c.cand.renew_ms = 1000;
    c.cand.margin_ms = 500;
    c.connected = 1;
    c.wait_ms = wait_ms;
    odbc_leader__elector_init(&x->e, &c);
    *state = x;
    return 0;
}

static int setup(void **state) { return setup_with_wait(state, 0); }

/* The same, with followers waiting up to 800 ms per tick. */
static int setup_wait(void **state) { return setup_with_wait(state, 800); }

/* The same, with the read before the first attempt. */
static int setup_read(void **state) {
    int rc = setup_with_wait(state, 0);

    ((struct fixture *)*state)->e.ops = &fake_ops_read;
    return rc;
}

static int teardown(void **state) {
    test_free(*state);
    return 0;
}

/* Another candidate holds the lease until db time now + ms. */
static void other_leads(struct fake *f, int64_t ms) {
    f->has_row = 1;
    strcpy(f->leader, "other");
    f->term++;
    f->expires_at_ms = db_now(f) + ms;
}

/* The other candidate renews its term: a lease of one TTL from now. */
static void other_renews(struct fake *f) {
    assert_string_equal(f->leader, "other");
    f->expires_at_ms = db_now(f) + f->ttl_ms;
}

/* Ticks x, advancing the fake clock to each next tick, until the tick
 * returns something else than FOLLOWER or the clock reaches until_ms;
 * returns the last tick's result. */
static int tick_until(struct fixture *x, int64_t until_ms) {
    uint32_t next = 0;
    int rc;

    for (;;) {
        rc = odbc_leader__elector_tick(&x->e, &next);
        if (rc != ODBC_LEADER_FOLLOWER || x->f.now_ns >= until_ms * MS)
            return rc;
        x->f.now_ns += (int64_t)(next > 0 ? next : 1) * MS;
        if (x->f.now_ns > until_ms * MS)
            x->f.now_ns = until_ms * MS;
    }
}

static void test_wins_vacant_lease(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_LEADER);
    assert_true(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(odbc_leader__elector_term(&x->e), 1);
    assert_int_equal(x->f.changes, 1);
    assert_int_equal(x->f.last_is_leader, 1);
    assert_int_equal(x->f.last_term, 1);
    assert_string_equal(x->f.last_leader, "me");
    assert_int_equal(next, 1000); /* the renew interval */
}

/* A follower that sees another lead: it reports it, and looks again
 * soon when the lease is overdue for a renewal (400 ms left of 3000, its
 * renewal was due at 1000 left), else just after the next renewal is
 * due, at most a renew interval (+ 20 ms) ahead. */
static void test_follower_sees_leader_and_waits_for_expiry(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    other_leads(&x->f, 400);
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(odbc_leader__elector_term(&x->e), 0);
    assert_int_equal(x->f.last_is_leader, 0);
    assert_string_equal(x->f.last_leader, "other");
    assert_int_equal(next, 25);

    other_leads(&x->f, 60000);
    odbc_leader__elector_tick(&x->e, &next);
    assert_int_equal(next, 1020);
    other_leads(&x->f, 2500);
    odbc_leader__elector_tick(&x->e, &next);
    assert_int_equal(next, 520); /* 500 ms to the renewal, + 20 */
}

static void test_trust_window_lapses_without_ticks(void **state) {
    struct fixture *x = *state;

    x->f.op_cost_ns = 200 * MS; /* a slow round trip */
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_LEADER);
    /* anchored at the attempt start (1000 ms), not the response (1200) */
    x->f.now_ns = 1000 * MS + 2500 * MS - 1;
    assert_true(odbc_leader__elector_is_leader(&x->e));
    x->f.now_ns = 1000 * MS + 2500 * MS;
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(odbc_leader__elector_term(&x->e), 0);
    /* nothing was reported yet: no tick ran */
    assert_int_equal(x->f.changes, 1);
}

static void test_lapsed_leader_reports_step_down_on_next_tick(void **state) {
    struct fixture *x = *state;

    odbc_leader__elector_tick(&x->e, NULL);
    other_leads(&x->f, 60000); /* the lease was taken meanwhile */
    x->f.now_ns += 5000 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    assert_int_equal(x->f.renews, 0); /* a lapsed leader does not renew */
    assert_int_equal(x->f.last_is_leader, 0);
    assert_string_equal(x->f.last_leader, "other");
}

static void test_renew_extends_from_attempt_start(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    odbc_leader__elector_tick(&x->e, NULL);
    x->f.now_ns += 1000 * MS;
    x->f.op_cost_ns = 300 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_LEADER);
    assert_int_equal(x->f.renews, 1);
    assert_int_equal(x->f.term, 1); /* renewing keeps the term */
    x->f.now_ns = 2000 * MS + 2500 * MS - 1;
    assert_true(odbc_leader__elector_is_leader(&x->e));
    x->f.now_ns = 2000 * MS + 2500 * MS;
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(x->f.changes, 1);
}

static void test_renew_error_keeps_window_without_extending(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    odbc_leader__elector_tick(&x->e, NULL); /* trusted until 3500 ms */
    x->f.now_ns = 2000 * MS;
    x->f.fail_renew = ODBC_LEADER_EDB;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next), ODBC_LEADER_EDB);
    assert_true(odbc_leader__elector_is_leader(&x->e));
    assert_true(next > 0 && next <= 1500);
    x->f.now_ns = 3500 * MS;
    assert_false(odbc_leader__elector_is_leader(&x->e));
}

static void test_term_replaced_steps_down_then_attempts(void **state) {
    struct fixture *x = *state;

    odbc_leader__elector_tick(&x->e, NULL);
    other_leads(&x->f, 60000); /* e.g. an operator forced a new term */
    x->f.now_ns += 1000 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(x->f.renews, 1);
    assert_int_equal(x->f.attempts, 2); /* stepped down, then attempted */
    assert_int_equal(x->f.last_is_leader, 0);
    assert_int_equal(x->f.last_term, 2);
    assert_string_equal(x->f.last_leader, "other");
}

static void test_same_id_unexpired_lease_is_not_adopted(void **state) {
    struct fixture *x = *state;

    /* A previous incarnation with the same id holds an unexpired term:
     * the attempt does not win it, so it must not be trusted. */
    x->f.has_row = 1;
    strcpy(x->f.leader, "me");
    x->f.term = 7;
    x->f.expires_at_ms = db_now(&x->f) + 2000;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    /* expired in the database, but watched for less than one TTL: the
     * same id gets no shortcut (ids of running processes are unique, but
     * a paused one is not dead) */
    x->f.now_ns += 2100 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    x->f.now_ns += 900 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader__elector_term(&x->e), 8);
}

static void test_connection_lost_backs_off(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;
    uint32_t first;

    x->f.fail_attempt = ODBC_LEADER_ECONNLOST;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_ECONNLOST);
    assert_int_equal(x->f.disconnects, 1);
    assert_true(next >= 80 && next <= 120); /* 100 ms +-20% */
    first = next;
    /* before the backoff: no connect */
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_EBACKOFF);
    assert_int_equal(x->f.connects, 0);
    /* a failed reconnect doubles the delay */
    x->f.now_ns += (int64_t)first * MS;
    x->f.fail_connect = ODBC_LEADER_ECONNECT;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_ECONNECT);
    assert_int_equal(x->f.connects, 1);
    assert_true(next >= 160 && next <= 240);
    /* then it reconnects and campaigns in the same tick */
    x->f.now_ns += (int64_t)next * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_LEADER);
    assert_int_equal(x->f.connects, 2);
}

/* An outage of many failed reconnects is one warning a minute (the port
 * logs the driver's message); the reconnect says how long it took. */
static void test_outage_is_logged_once_a_minute(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;
    int64_t start;
    int i;

    x->f.fail_attempt = ODBC_LEADER_ECONNLOST;
    odbc_leader__elector_tick(&x->e, &next);
    start = x->f.now_ns;
    x->f.warnings = 0;
    for (i = 0; x->f.now_ns - start < 150 * INT64_C(1000) * MS; i++) {
        x->f.now_ns += (int64_t)next * MS;
        x->f.fail_connect = ODBC_LEADER_ECONNECT;
        assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                         ODBC_LEADER_ECONNECT);
    }
    assert_true(i > 100);               /* about one attempt a second */
    assert_int_equal(x->f.warnings, 2); /* after 60 s and after 120 s */
    assert_non_null(strstr(x->f.last_warning, "still cannot reconnect"));
    assert_true(x->f.debugs >= i - 2);
    x->f.now_ns += (int64_t)next * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_LEADER);
    assert_int_equal(x->f.reconnected, 1);
    assert_int_equal(x->f.warnings, 2);
    /* the next outage starts counting again */
    x->f.fail_renew = ODBC_LEADER_ECONNLOST;
    x->f.now_ns += 1000 * MS;
    odbc_leader__elector_tick(&x->e, &next);
    x->f.now_ns += (int64_t)next * MS;
    x->f.fail_connect = ODBC_LEADER_ECONNECT;
    odbc_leader__elector_tick(&x->e, &next);
    assert_int_equal(x->e.outage_failures, 1);
}

static void test_backoff_is_capped(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    x->f.fail_attempt = ODBC_LEADER_ECONNLOST;
    odbc_leader__elector_tick(&x->e, &next);
    for (int i = 0; i < 20; i++) {
        x->f.now_ns += (int64_t)next * MS;
        x->f.fail_connect = ODBC_LEADER_ECONNECT;
        odbc_leader__elector_tick(&x->e, &next);
    }
    /* cap: max(1 s, renew interval) +20% */
    assert_true(next >= 800 && next <= 1200);
}

static void test_leader_keeps_window_while_disconnected(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    odbc_leader__elector_tick(&x->e, NULL); /* trusted until 3500 */
    x->f.now_ns = 2000 * MS;
    x->f.fail_renew = ODBC_LEADER_ECONNLOST;
    odbc_leader__elector_tick(&x->e, &next);
    assert_true(odbc_leader__elector_is_leader(&x->e));
    /* the host is told to come back by the end of the window at most */
    x->f.now_ns = 3400 * MS;
    x->f.fail_connect = ODBC_LEADER_ECONNECT;
    odbc_leader__elector_tick(&x->e, &next);
    assert_true(next <= 100);
    x->f.now_ns = 3500 * MS;
    assert_false(odbc_leader__elector_is_leader(&x->e));
    x->f.fail_connect = ODBC_LEADER_ECONNECT;
    x->f.now_ns += 2000 * MS;
    odbc_leader__elector_tick(&x->e, &next);
    assert_int_equal(x->f.last_is_leader, 0);
}

static void test_unknown_commit_outcome_is_not_leadership(void **state) {
    struct fixture *x = *state;

    x->f.fail_attempt = ODBC_LEADER_EUNKNOWN;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_EUNKNOWN);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    /* the connection is dropped: a kept one could still hold the
     * transaction (and SQLite's file lock) */
    assert_int_equal(x->f.disconnects, 1);
    assert_false(x->e.connected);
    /* say the COMMIT did take effect: the term the attempt won is never
     * adopted; the next attempt, after the reconnect, finds it unexpired
     * and follows until it expires */
    x->f.has_row = 1;
    strcpy(x->f.leader, "me");
    x->f.term = 1;
    x->f.expires_at_ms = db_now(&x->f) + 3000;
    x->f.now_ns += 2000 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    assert_int_equal(x->f.connects, 1);
}

static void test_late_renew_is_never_reported(void **state) {
    struct fixture *x = *state;

    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_LEADER);
    x->f.now_ns += 1000 * MS;
    /* the database renews at once, the answer arrives 2600 ms later:
     * after the 2500 ms window the renewal would open */
    x->f.reply_cost_ns = 2600 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(odbc_leader__elector_term(&x->e), 0);
    assert_int_equal(x->f.last_is_leader, 0);
    assert_int_equal(x->f.resigns, 1); /* handed back at once */
    assert_int_equal(x->f.last_resigned_term, 1);
}

/* tick() returns leader only while is_leader() is true: every cost of
 * the attempt and the renewal, from instant to far past the window, at
 * every point of the renew cycle. */
static void test_tick_never_says_leader_without_is_leader(void **state) {
    struct fixture *x = *state;
    int positive = 0, negative = 0;

    for (int64_t cost = 0; cost <= 4000; cost += 50) {
        for (int64_t gap = 0; gap <= 3000; gap += 250) {
            int rc;

            x->f.op_cost_ns = cost * MS / 2;
            x->f.reply_cost_ns = cost * MS / 2;
            rc = odbc_leader__elector_tick(&x->e, NULL);
            if (rc > 0) {
                assert_true(odbc_leader__elector_is_leader(&x->e));
                assert_true(odbc_leader__elector_term(&x->e) > 0);
                positive++;
            } else {
                negative++;
            }
            x->f.now_ns += gap * MS;
        }
    }
    /* both outcomes happened, so the assertion above was exercised */
    assert_true(positive > 10);
    assert_true(negative > 10);
}

static void test_reported_resign_request_keeps_the_term(void **state) {
    struct fixture *x = *state;
    int64_t expires;

    x->e.report_resign = 1;
    odbc_leader__elector_tick(&x->e, NULL);
    x->f.resign_requested = 1;
    x->f.now_ns += 1000 * MS;
    expires = x->f.expires_at_ms;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_RESIGN_REQUESTED);
    /* still leader, renewed, nothing resigned: the host stops first */
    assert_true(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(odbc_leader__elector_term(&x->e), 1);
    assert_true(x->f.expires_at_ms > expires);
    assert_int_equal(x->f.resigns, 0);
    x->f.now_ns += 1000 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_RESIGN_REQUESTED);
    assert_int_equal(x->f.resigns, 0);
    /* then the host resigns: the exact term, handed over */
    assert_int_equal(odbc_leader__elector_resign(&x->e), 0);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(x->f.resigns, 1);
    assert_int_equal(x->f.last_resigned_term, 1);
    assert_string_equal(x->f.leader, "");
}

static void test_leadership_is_one_read(void **state) {
    struct fixture *x = *state;
    uint32_t valid = 7;

    assert_int_equal(odbc_leader__elector_leadership(&x->e, &valid), 0);
    assert_int_equal(valid, 0);
    odbc_leader__elector_tick(&x->e, NULL);
    assert_int_equal(odbc_leader__elector_leadership(&x->e, &valid), 1);
    assert_int_equal(valid, 2500); /* TTL - margin from the attempt */
    x->f.now_ns += 2499 * MS;
    assert_int_equal(odbc_leader__elector_leadership(&x->e, &valid), 1);
    assert_int_equal(valid, 1);
    x->f.now_ns += 1 * MS;
    assert_int_equal(odbc_leader__elector_leadership(&x->e, &valid), 0);
    assert_int_equal(valid, 0);
}

static void test_resign_hands_over_and_holds_off(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    odbc_leader__elector_tick(&x->e, NULL);
    assert_int_equal(odbc_leader__elector_resign(&x->e), 0);
    assert_int_equal(x->f.resigns, 1);
    assert_int_equal(x->f.last_resigned_term, 1);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(x->f.last_is_leader, 0);
    assert_string_equal(x->f.leader, "");
    /* it does not grab the vacant lease right back */
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    assert_int_equal(x->f.attempts, 1);
    assert_int_equal(next, 1000);
    x->f.now_ns += 1000 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader__elector_term(&x->e), 2);
}

static void test_resign_request_is_honoured_at_renewal(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    odbc_leader__elector_tick(&x->e, NULL);
    x->f.resign_requested = 1; /* e.g. odbc-leader resign from elsewhere */
    x->f.now_ns += 1000 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(x->f.resigns, 1);
    assert_int_equal(x->f.last_resigned_term, 1);
    assert_string_equal(x->f.leader, "");
    assert_int_equal(x->f.last_is_leader, 0);
    assert_int_equal(next, 1000); /* holds off like a local resign */
}

static void test_resign_failure_still_steps_down(void **state) {
    struct fixture *x = *state;

    odbc_leader__elector_tick(&x->e, NULL);
    x->f.fail_resign = ODBC_LEADER_ECONNLOST;
    assert_int_equal(odbc_leader__elector_resign(&x->e), ODBC_LEADER_ECONNLOST);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(x->f.disconnects, 1);
}

static void test_shutdown_resigns_and_unregisters(void **state) {
    struct fixture *x = *state;

    odbc_leader__elector_tick(&x->e, NULL);
    odbc_leader__elector_shutdown(&x->e);
    assert_int_equal(x->f.resigns, 1);
    assert_int_equal(x->f.unregisters, 1);
    assert_int_equal(x->f.disconnects, 1);
    assert_int_equal(x->f.last_is_leader, 0);
    assert_false(odbc_leader__elector_is_leader(&x->e));
}

static void test_follower_shutdown_does_not_resign(void **state) {
    struct fixture *x = *state;

    other_leads(&x->f, 60000);
    odbc_leader__elector_tick(&x->e, NULL);
    odbc_leader__elector_shutdown(&x->e);
    assert_int_equal(x->f.resigns, 0);
    assert_int_equal(x->f.unregisters, 1);
    assert_string_equal(x->f.leader, "other");
}

static void test_changes_reported_once_in_order(void **state) {
    struct fixture *x = *state;

    other_leads(&x->f, 500);
    odbc_leader__elector_tick(&x->e, NULL);
    odbc_leader__elector_tick(&x->e, NULL);
    assert_int_equal(x->f.changes, 1); /* same leader, same term */
    x->f.now_ns += 3000 * MS;          /* expired, and watched for one TTL */
    odbc_leader__elector_tick(&x->e, NULL);
    assert_int_equal(x->f.changes, 2);
    assert_int_equal(x->f.last_is_leader, 1);
    assert_int_equal(x->f.last_term, 2);
}

static void test_follower_wakes_when_leader_resigns(void **state) {
    struct fixture *x = *state;
    uint32_t next = 99;

    other_leads(&x->f, 60000);
    x->f.other_holds_lock = 1;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    assert_int_equal(next, 0); /* the next tick waits */
    x->f.other_resigns_at_ns = x->f.now_ns + 300 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_LEADER);
    assert_string_equal(x->f.calls, "AWA");
    assert_int_equal(x->f.wait_budgets[0], 800);
    /* elected at the release, not at the next regular attempt */
    assert_int_equal(x->f.now_ns, 1300 * MS);
    assert_int_equal(odbc_leader__elector_term(&x->e), 2);
}

static void test_wait_times_out_until_the_next_attempt(void **state) {
    struct fixture *x = *state;
    uint32_t next = 99;

    other_leads(&x->f, 60000);
    x->f.other_holds_lock = 1;
    odbc_leader__elector_tick(&x->e, &next);
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    assert_int_equal(next, 0);
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    /* budgets: the longest wait, then what is left until the next step
     * (just after the leader's next renewal is due: 1000 + 20 ms) */
    assert_int_equal(x->f.waits, 2);
    assert_int_equal(x->f.wait_budgets[0], 800);
    assert_int_equal(x->f.wait_budgets[1], 220);
    odbc_leader__elector_tick(&x->e, &next);
    assert_string_equal(x->f.calls, "AWWA"); /* the regular attempt */
}

static void test_wake_without_lock_holder_backs_off(void **state) {
    struct fixture *x = *state;
    uint32_t next = 99;

    other_leads(&x->f, 60000); /* it crashed: nobody holds the lock */
    odbc_leader__elector_tick(&x->e, &next);
    assert_int_equal(next, 0);
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    assert_string_equal(x->f.calls, "AWA");
    /* the same term still leads: no spinning, wait again later */
    assert_int_equal(next, 25);
    odbc_leader__elector_tick(&x->e, &next); /* too early: nothing */
    assert_string_equal(x->f.calls, "AWA");
    x->f.now_ns += 25 * MS;
    odbc_leader__elector_tick(&x->e, &next);
    assert_string_equal(x->f.calls, "AWAWA");
    assert_int_equal(next, 50); /* doubled */
    /* the leader takes its lock: the next wait blocks again */
    x->f.other_holds_lock = 1;
    x->f.now_ns += 50 * MS;
    odbc_leader__elector_tick(&x->e, &next);
    assert_string_equal(x->f.calls, "AWAWAW");
    assert_int_equal(x->f.now_ns, (1000 + 75 + 800) * MS);
    assert_int_equal(next, 0);
}

static void test_new_leader_takes_lock_when_attempt_did_not(void **state) {
    struct fixture *x = *state;

    x->f.attempt_held = 0; /* a waking follower held it for a moment */
    odbc_leader__elector_tick(&x->e, NULL);
    assert_string_equal(x->f.calls, "AH");
    x->f.now_ns += 1000 * MS;
    x->f.renew_held = 1;
    odbc_leader__elector_tick(&x->e, NULL);
    assert_string_equal(x->f.calls, "AHN"); /* held now: no second hold */
}

/* The leader crashed (nobody holds the wake-up lock) 2.3 s into a 3 s
 * lease that this follower first saw at 1000 ms: elected at the floor of
 * its watch, one TTL after that first sight; the pauses between useless
 * wake-ups double, so they are few. */
static void test_wake_to_crashed_leader_attempts_at_expiry(void **state) {
    struct fixture *x = *state;
    uint32_t next = 99;

    int64_t start = x->f.now_ns;
    int rc = ODBC_LEADER_FOLLOWER;
    int ticks = 0;

    other_leads(&x->f, 700);
    for (;;) {
        rc = odbc_leader__elector_tick(&x->e, &next);
        if (rc != ODBC_LEADER_FOLLOWER || ++ticks > 100)
            break;
        x->f.now_ns += (int64_t)next * MS;
    }
    assert_int_equal(rc, ODBC_LEADER_LEADER);
    assert_true(x->f.now_ns - start >= 3000 * MS);
    assert_true(x->f.now_ns - start <= 3020 * MS);
    assert_true(x->f.waits <= 20);
}

static void test_resign_releases_after_the_resign(void **state) {
    struct fixture *x = *state;

    odbc_leader__elector_tick(&x->e, NULL);
    odbc_leader__elector_resign(&x->e);
    assert_string_equal(x->f.calls, "ASL");
    odbc_leader__elector_tick(&x->e, NULL);
    assert_int_equal(x->f.releases, 1); /* once */
}

static void test_step_down_releases_before_next_step(void **state) {
    struct fixture *x = *state;

    odbc_leader__elector_tick(&x->e, NULL);
    other_leads(&x->f, 60000); /* the term was replaced */
    x->f.now_ns += 1000 * MS;
    odbc_leader__elector_tick(&x->e, NULL);
    assert_string_equal(x->f.calls, "ANA");
    x->f.now_ns += 1020 * MS; /* the follower's next step is due */
    odbc_leader__elector_tick(&x->e, NULL);
    assert_string_equal(x->f.calls, "ANALA");
}

static void test_late_win_is_never_reported(void **state) {
    struct fixture *x = *state;

    x->f.op_cost_ns = 2600 * MS; /* past the 2500 ms trust window */
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    assert_false(odbc_leader__elector_is_leader(&x->e));
    /* on_change never said "leader": at most one call, saying follower */
    assert_true(x->f.changes <= 1);
    assert_int_equal(x->f.last_is_leader, 0);
    assert_int_equal(x->f.resigns, 1); /* the term was handed back */
    assert_string_equal(x->f.leader, "");
}

static void test_no_wait_when_disabled(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    other_leads(&x->f, 60000);
    x->f.other_holds_lock = 1;
    odbc_leader__elector_tick(&x->e, &next);
    assert_int_equal(next, 1020);
    odbc_leader__elector_tick(&x->e, &next);
    assert_int_equal(x->f.waits, 0);
}

/* A held lease is taken only one TTL after the follower first saw that
 * exact row (the watch), even when the database calls it expired long
 * before; until then every attempt passes no watched row. */
static void test_takeover_waits_for_one_ttl_of_watching(void **state) {
    struct fixture *x = *state;

    other_leads(&x->f, 400); /* first seen at 1000 ms, expires at 1400 */
    assert_int_equal(tick_until(x, 3999), ODBC_LEADER_FOLLOWER);
    assert_int_equal(x->f.seen_term_arg, 0);
    assert_true(x->f.attempts >= 2); /* it tried at the expiry */
    assert_int_equal(tick_until(x, 10000), ODBC_LEADER_LEADER);
    /* won by the attempt that started at the floor: 1000 + 3000 ms */
    assert_true(x->f.now_ns >= 4000 * MS && x->f.now_ns <= 4010 * MS);
    assert_int_equal(x->f.seen_term_arg, 1);
    assert_int_equal(odbc_leader__elector_term(&x->e), 2);
}

/* The database clock steps 10 s ahead while another candidate holds a
 * healthy lease: the database calls it expired at once, but the follower
 * watched it for less than one TTL, so it does not take it before then
 * (the old leader may still trust its window). The step is counted. */
static void test_forward_step_does_not_hand_over_early(void **state) {
    struct fixture *x = *state;
    int64_t last = 0;

    other_leads(&x->f, 3000);
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    x->f.now_ns += 100 * MS;
    x->f.db_offset_ms += 10000;
    assert_int_equal(tick_until(x, 3999), ODBC_LEADER_FOLLOWER);
    assert_string_equal(x->f.leader, "other");
    assert_false(odbc_leader__elector_is_leader(&x->e));
    assert_int_equal(odbc_leader__elector_clock_steps(&x->e, &last), 1);
    assert_true(last >= 9900 && last <= 10000);
    assert_int_equal(tick_until(x, 10000), ODBC_LEADER_LEADER);
    assert_true(x->f.now_ns >= 4000 * MS && x->f.now_ns <= 4010 * MS);
    assert_true(odbc_leader__elector_is_leader(&x->e));
}

/* The measured case of ed8ea1f: the follower's attempt before the step
 * saw no row (it lost the race for the first one), and its first sight of
 * the lease comes after the step, when the database already calls it
 * expired. That first sight starts the watch: no takeover for one TTL. */
static void test_first_sight_after_a_step_waits_one_ttl(void **state) {
    struct fixture *x = *state;

    other_leads(&x->f, 3000);
    x->f.lose_race = 1;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    x->f.db_offset_ms += 7000; /* 2 TTL + 1 s */
    x->f.now_ns += 10 * MS;
    assert_int_equal(tick_until(x, 1000 + 10 + 2999), ODBC_LEADER_FOLLOWER);
    assert_string_equal(x->f.leader, "other");
    assert_int_equal(tick_until(x, 10000), ODBC_LEADER_LEADER);
    assert_true(x->f.now_ns >= 4010 * MS && x->f.now_ns <= 4060 * MS);
}

/* A renewal seen by the watch starts it anew: the takeover comes one TTL
 * after the renewal's first sight, not after the older row's. */
static void test_renewal_restarts_the_watch(void **state) {
    struct fixture *x = *state;

    other_leads(&x->f, 3000);
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    x->f.now_ns += 1000 * MS;
    other_renews(&x->f); /* at 2000 ms; then the other dies */
    assert_int_equal(tick_until(x, 4999), ODBC_LEADER_FOLLOWER);
    assert_int_equal(tick_until(x, 10000), ODBC_LEADER_LEADER);
    assert_true(x->f.now_ns >= 5000 * MS && x->f.now_ns <= 5030 * MS);
}

/* With the read: a follower reads the lease just after the leader's
 * next renewal is due (TTL - renew left, plus 20 ms), so its watch of
 * that renewal starts close to it; when the leader is late it reads again
 * after gaps that double (25, 50, ... ms, at most a quarter of the renew
 * interval and half the margin: 250 ms here). A crashed leader is
 * replaced one TTL after the first sight of its last renewal. */
static void test_watch_reads_follow_the_renewals(void **state) {
    struct fixture *x = *state;
    uint32_t next = 0;

    other_leads(&x->f, 3000);
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    assert_int_equal(next, 1020); /* due at 2000 ms, + 20 */
    x->f.now_ns = 2000 * MS;
    other_renews(&x->f); /* on time */
    x->f.now_ns = 2020 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, &next),
                     ODBC_LEADER_FOLLOWER);
    assert_string_equal(x->f.calls, "AA"); /* a heartbeat attempt, too */
    assert_int_equal(next, 1000);
    x->f.now_ns = 3000 * MS;
    other_renews(&x->f);
    x->f.now_ns = 3020 * MS;
    odbc_leader__elector_tick(&x->e, &next);
    assert_string_equal(x->f.calls, "AAA");
    /* the renewal at 4000 ms comes 100 ms late, then the leader dies */
    x->f.now_ns = 4020 * MS;
    odbc_leader__elector_tick(&x->e, &next);
    assert_string_equal(x->f.calls, "AAAA");
    assert_int_equal(next, 25);
    x->f.now_ns += 25 * MS;
    odbc_leader__elector_tick(&x->e, &next);
    assert_string_equal(x->f.calls, "AAAAR"); /* a read, no heartbeat */
    assert_int_equal(next, 50);
    x->f.now_ns = 4100 * MS;
    other_renews(&x->f);
    x->f.now_ns = 4095 * MS + 50 * MS; /* the read at 4095 + 50 */
    odbc_leader__elector_tick(&x->e, &next);
    assert_string_equal(x->f.calls, "AAAARR");
    /* seen at 4145 ms: taken at 7145, after reads every 250 ms at most */
    assert_int_equal(tick_until(x, 7144), ODBC_LEADER_FOLLOWER);
    assert_true(x->f.reads > 3 && x->f.reads <= 25);
    assert_int_equal(tick_until(x, 10000), ODBC_LEADER_LEADER);
    assert_true(x->f.now_ns >= 7145 * MS && x->f.now_ns <= 7160 * MS);
}

/* A released lease (the other resigned) needs no watch. */
static void test_released_lease_is_taken_at_once(void **state) {
    struct fixture *x = *state;

    other_leads(&x->f, 3000);
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    x->f.leader[0] = '\0'; /* resigned: vacant, expired now */
    x->f.expires_at_ms = db_now(&x->f);
    x->f.now_ns += 10 * MS;
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_LEADER);
    assert_int_equal(x->f.seen_term_arg, 0);
}

#ifdef ODBC_LEADER_TEST_HOOKS
/* LeaderTestNoWatch (tests only): the takeover rests on database time
 * alone, so the forward step above hands the lease over at once, while
 * the old leader may still trust it. The clock-step tests use it to show
 * that they catch two leaders. */
static void test_no_watch_takes_on_database_time(void **state) {
    struct fixture *x = *state;

    x->e.no_watch = 1;
    other_leads(&x->f, 3000);
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_FOLLOWER);
    x->f.now_ns += 100 * MS;
    x->f.db_offset_ms += 10000;
    assert_int_equal(tick_until(x, 1200), ODBC_LEADER_LEADER);
}
#endif

/* A backward step is counted and logged; leases then last longer in local
 * time, which is safe. */
static void test_backward_step_is_counted_only(void **state) {
    struct fixture *x = *state;
    int64_t last = 0;

    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_LEADER);
    x->f.now_ns += 1000 * MS;
    x->f.db_offset_ms -= 5000;
    x->f.expires_at_ms -= 5000; /* still unexpired in the stepped clock */
    assert_int_equal(odbc_leader__elector_tick(&x->e, NULL),
                     ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader__elector_clock_steps(&x->e, &last), 1);
    assert_true(last <= -4900 && last >= -5000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
#define TW(name) cmocka_unit_test_setup_teardown(name, setup_wait, teardown)
#define TR(name) cmocka_unit_test_setup_teardown(name, setup_read, teardown)
        T(test_takeover_waits_for_one_ttl_of_watching),
        T(test_forward_step_does_not_hand_over_early),
        T(test_first_sight_after_a_step_waits_one_ttl),
        T(test_renewal_restarts_the_watch),
        TR(test_watch_reads_follow_the_renewals),
        T(test_released_lease_is_taken_at_once),
#ifdef ODBC_LEADER_TEST_HOOKS
        T(test_no_watch_takes_on_database_time),
#endif
        T(test_backward_step_is_counted_only),
        TW(test_follower_wakes_when_leader_resigns),
        TW(test_wait_times_out_until_the_next_attempt),
        TW(test_wake_without_lock_holder_backs_off),
        TW(test_new_leader_takes_lock_when_attempt_did_not),
        TW(test_wake_to_crashed_leader_attempts_at_expiry),
        TW(test_resign_releases_after_the_resign),
        TW(test_step_down_releases_before_next_step),
        T(test_no_wait_when_disabled),
        T(test_late_win_is_never_reported),
        T(test_wins_vacant_lease),
        T(test_follower_sees_leader_and_waits_for_expiry),
        T(test_trust_window_lapses_without_ticks),
        T(test_lapsed_leader_reports_step_down_on_next_tick),
        T(test_renew_extends_from_attempt_start),
        T(test_renew_error_keeps_window_without_extending),
        T(test_term_replaced_steps_down_then_attempts),
        T(test_same_id_unexpired_lease_is_not_adopted),
        T(test_connection_lost_backs_off),
        T(test_outage_is_logged_once_a_minute),
        T(test_backoff_is_capped),
        T(test_leader_keeps_window_while_disconnected),
        T(test_unknown_commit_outcome_is_not_leadership),
        T(test_late_renew_is_never_reported),
        T(test_tick_never_says_leader_without_is_leader),
        T(test_reported_resign_request_keeps_the_term),
        T(test_leadership_is_one_read),
        T(test_resign_hands_over_and_holds_off),
        T(test_resign_request_is_honoured_at_renewal),
        T(test_resign_failure_still_steps_down),
        T(test_shutdown_resigns_and_unregisters),
        T(test_follower_shutdown_does_not_resign),
        T(test_changes_reported_once_in_order),
#undef T
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
