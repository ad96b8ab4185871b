/* SPDX-License-Identifier: MIT */
/*
 * test_elector_fake.c: the fake clock and database port of test_elector.
 * The port keeps one lease row in memory with the protocol's rules
 * (vacant-or-expired takeover of the watched row, exact-term renew and
 * resign) in "database time", counts and records its calls, and fails
 * when told to; the setups build an elector on it (TTL 3000 ms, renew
 * 1000 ms, margin 500 ms), and the helpers play the other candidate.
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

#include "test_elector.h"

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

int64_t db_now(struct fake *f) { return f->now_ns / MS + f->db_offset_ms; }

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

int setup(void **state) { return setup_with_wait(state, 0); }

/* The same, with followers waiting up to 800 ms per tick. */
int setup_wait(void **state) { return setup_with_wait(state, 800); }

/* The same, with the read before the first attempt. */
int setup_read(void **state) {
    int rc = setup_with_wait(state, 0);

    ((struct fixture *)*state)->e.ops = &fake_ops_read;
    return rc;
}

int teardown(void **state) {
    test_free(*state);
    return 0;
}

/* Another candidate holds the lease until db time now + ms. */
void other_leads(struct fake *f, int64_t ms) {
    f->has_row = 1;
    strcpy(f->leader, "other");
    f->term++;
    f->expires_at_ms = db_now(f) + ms;
}

/* The other candidate renews its term: a lease of one TTL from now. */
void other_renews(struct fake *f) {
    assert_string_equal(f->leader, "other");
    f->expires_at_ms = db_now(f) + f->ttl_ms;
}

/* Ticks x, advancing the fake clock to each next tick, until the tick
 * returns something else than FOLLOWER or the clock reaches until_ms;
 * returns the last tick's result. */
int tick_until(struct fixture *x, int64_t until_ms) {
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
