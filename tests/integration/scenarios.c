/*
 * scenarios.c: the protocol's scenarios against a real database through
 * its real ODBC driver. The same program runs on every database: the
 * wrapper script (sqlite.test, postgresql.test) starts the server, writes
 * a hermetic odbcinst.ini and sets
 *   OL_CONNECT      base connection string (no Leader* keys)
 *   OL_KIND         "sqlite", "postgresql" or "mariadb"
 *   OL_RESTART_CMD  shell command restarting the server (servers only)
 *   OL_DOWN_CONNECT a connection string whose server is unreachable
 *   OL_DSN          an odbc.ini DSN whose section sets LeaderNamespace=
 *                   from-odbc-ini and LeaderTTL=4000
 *   OL_LIMITED_CONNECT the same database as an account limited to SELECT,
 *                   INSERT, UPDATE, DELETE (servers only)
 *   OL_LEADER_EXTRA Leader* settings added to every handle's config, e.g.
 *                   LeaderDialect=generic.sql for the conformance pairs
 *   OL_FIRST_ROW    "waits" or "collides": what first_row_race expects
 *                   on a database the suite does not know (see there)
 * Each scenario uses its own namespace (and table prefix where it needs
 * fresh tables), so scenarios do not see each other's rows.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <sql.h>
#include <sqlext.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "internal.h"

static const char *base_connect(void) {
    const char *s = getenv("OL_CONNECT");

    return s != NULL ? s : "";
}

static int is_kind(const char *kind) {
    const char *k = getenv("OL_KIND");

    return k != NULL && strcmp(k, kind) == 0;
}

/* Milliseconds on the monotonic clock. */
static int64_t mono_ms(void) {
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* A config string: the base plus the given Leader* settings. */
static char *config(const char *fmt, ...) {
    static const size_t cap = 4096;
    char *s = test_malloc(cap);
    const char *extra = getenv("OL_LEADER_EXTRA");
    size_t n =
        (size_t)snprintf(s, cap, "%s;%s%s", base_connect(),
                         extra != NULL ? extra : "", extra != NULL ? ";" : "");
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(s + n, cap - n, fmt, ap);
    va_end(ap);
    return s;
}

/* A namespace unique to this run and scenario. */
static void ns_name(char *buf, size_t len, const char *scenario) {
    snprintf(buf, len, "%s-%ld", scenario, (long)getpid());
}

/* Creates a handle or fails the test with the error message. */
static odbc_leader_t *make(const char *cfg) {
    char err[512] = "";
    odbc_leader_t *h = NULL;
    int rc = odbc_leader_create(&h, cfg, NULL, err, sizeof(err));

    if (rc != 0)
        fail_msg("odbc_leader_create: %s (%s)", err, odbc_leader_strerror(rc));
    return h;
}

static odbc_leader_t *make_ns(const char *ns, const char *extra) {
    char *cfg = config("LeaderNamespace=%s;%s", ns, extra);
    odbc_leader_t *h = make(cfg);

    test_free(cfg);
    return h;
}

/* ---- a raw ODBC connection for inspecting and staging rows ---------- */

struct raw {
    SQLHENV env;
    SQLHDBC dbc;
};

static void raw_open(struct raw *r) {
    SQLRETURN rc;

    SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &r->env);
    SQLSetEnvAttr(r->env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0);
    SQLAllocHandle(SQL_HANDLE_DBC, r->env, &r->dbc);
    rc = SQLDriverConnect(r->dbc, NULL, (SQLCHAR *)base_connect(), SQL_NTS,
                          NULL, 0, NULL, SQL_DRIVER_NOPROMPT);
    assert_true(SQL_SUCCEEDED(rc));
}

static void raw_close(struct raw *r) {
    SQLDisconnect(r->dbc);
    SQLFreeHandle(SQL_HANDLE_DBC, r->dbc);
    SQLFreeHandle(SQL_HANDLE_ENV, r->env);
}

/* Runs sql; returns 1 when it succeeded, 0 when it failed. When the
 * statement returns a row, its first column goes to *first (if given). */
static int raw_exec(struct raw *r, const char *sql, int64_t *first) {
    SQLHSTMT h;
    SQLRETURN rc;
    SQLSMALLINT ncols = 0;
    int ok;

    SQLAllocHandle(SQL_HANDLE_STMT, r->dbc, &h);
    rc = SQLExecDirect(h, (SQLCHAR *)sql, SQL_NTS);
    ok = SQL_SUCCEEDED(rc) || rc == SQL_NO_DATA;
    if (ok && first != NULL && SQL_SUCCEEDED(SQLNumResultCols(h, &ncols)) &&
        ncols > 0 && SQL_SUCCEEDED(SQLFetch(h))) {
        SQLBIGINT v = 0;
        SQLLEN ind = 0;

        SQLGetData(h, 1, SQL_C_SBIGINT, &v, sizeof(v), &ind);
        *first = v;
    }
    SQLFreeHandle(SQL_HANDLE_STMT, h);
    return ok;
}

static int table_exists(const char *table) {
    struct raw r;
    char sql[256];
    int ok;

    raw_open(&r);
    snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM %s", table);
    ok = raw_exec(&r, sql, NULL);
    raw_close(&r);
    return ok;
}

/* ---- scenarios ---------------------------------------------------------- */

static void one_candidate_becomes_leader(void **state) {
    char ns[64];
    struct odbc_leader_lease lease;
    odbc_leader_t *a;

    (void)state;
    ns_name(ns, sizeof(ns), "one");
    a = make_ns(ns, "");
    assert_false(odbc_leader_is_leader(a));
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_true(odbc_leader_is_leader(a));
    assert_true(odbc_leader_term(a) >= 1);
    assert_int_equal(odbc_leader_read_lease(a, &lease), 0);
    assert_string_equal(lease.leader_id, odbc_leader_id(a));
    assert_int_equal(lease.term, odbc_leader_term(a));
    /* the default TTL, measured in database time */
    assert_true(lease.expires_at_ms - lease.db_now_ms > 10000);
    assert_true(lease.expires_at_ms - lease.db_now_ms <= 15000);
    odbc_leader_destroy(a);
}

static void two_candidates_exactly_one_leads(void **state) {
    char ns[64];
    struct odbc_leader_lease lease;
    odbc_leader_t *a, *b;

    (void)state;
    ns_name(ns, sizeof(ns), "two");
    a = make_ns(ns, "LeaderRenewInterval=200");
    b = make_ns(ns, "LeaderRenewInterval=200");
    for (int i = 0; i < 10; i++) {
        odbc_leader_tick(i % 2 ? a : b, NULL);
        odbc_leader_tick(i % 2 ? b : a, NULL);
        assert_int_equal(odbc_leader_is_leader(a) + odbc_leader_is_leader(b),
                         1);
    }
    assert_int_equal(odbc_leader_read_lease(a, &lease), 0);
    assert_string_equal(lease.leader_id,
                        odbc_leader_id(odbc_leader_is_leader(a) ? a : b));
    odbc_leader_destroy(a);
    odbc_leader_destroy(b);
}

static void renewing_keeps_the_term(void **state) {
    char ns[64];
    struct odbc_leader_lease before, after;
    odbc_leader_t *a;
    int64_t term;

    (void)state;
    ns_name(ns, sizeof(ns), "renew");
    a = make_ns(ns, "LeaderTTL=3000;LeaderRenewInterval=300");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    term = odbc_leader_term(a);
    odbc_leader_read_lease(a, &before);
    for (int i = 0; i < 5; i++) {
        sleep_ms(300);
        assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
        assert_int_equal(odbc_leader_term(a), term);
    }
    odbc_leader_read_lease(a, &after);
    assert_int_equal(after.term, term);
    assert_true(after.expires_at_ms > before.expires_at_ms);
    odbc_leader_destroy(a);
}

static void graceful_shutdown_hands_over_before_expiry(void **state) {
    char ns[64];
    struct odbc_leader_lease lease;
    odbc_leader_t *a, *b;
    int64_t term;

    (void)state;
    ns_name(ns, sizeof(ns), "handover");
    /* a 60 s lease: only the resignation can explain a fast takeover */
    a = make_ns(ns, "LeaderTTL=60000;LeaderRenewInterval=100");
    b = make_ns(ns, "LeaderTTL=60000;LeaderRenewInterval=100");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
    term = odbc_leader_term(a);
    odbc_leader_read_lease(b, &lease);
    assert_true(lease.expires_at_ms - lease.db_now_ms > 50000);
    odbc_leader_destroy(a); /* resigns */
    odbc_leader_read_lease(b, &lease);
    assert_string_equal(lease.leader_id, "");
    assert_int_equal(lease.term, term); /* resign keeps the term number */
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_term(b), term + 1);
    odbc_leader_destroy(b);
}

static void killed_leader_is_replaced_after_expiry(void **state) {
    char ns[64];
    struct odbc_leader_lease lease;
    odbc_leader_t *b;
    int fds[2];
    pid_t pid;
    int64_t old_term = 0, old_expiry;
    int won = 0;

    (void)state;
    ns_name(ns, sizeof(ns), "killed");
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char *cfg = config("LeaderNamespace=%s;LeaderTTL=2000", ns);
        odbc_leader_t *a = NULL;
        int64_t t = 0;

        close(fds[0]);
        if (odbc_leader_create(&a, cfg, NULL, NULL, 0) == 0 &&
            odbc_leader_tick(a, NULL) == ODBC_LEADER_LEADER)
            t = odbc_leader_term(a);
        if (write(fds[1], &t, sizeof(t)) != sizeof(t))
            _exit(1);
        for (;;)
            pause(); /* leader until killed; never resigns */
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], &old_term, sizeof(old_term)),
                     sizeof(old_term));
    close(fds[0]);
    assert_true(old_term > 0);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);

    b = make_ns(ns, "LeaderTTL=2000");
    odbc_leader_read_lease(b, &lease);
    assert_int_equal(lease.term, old_term);
    old_expiry = lease.expires_at_ms;
    /* liveness bound: generous, the machine may be busy */
    for (int64_t t0 = mono_ms(); !won && mono_ms() - t0 < 30000;) {
        uint32_t next = 0;
        int rc = odbc_leader_tick(b, &next);

        if (rc < 0)
            fprintf(stderr, "killed_leader: tick: %s\n",
                    odbc_leader_strerror(rc));
        odbc_leader_read_lease(b, &lease);
        if (rc == ODBC_LEADER_LEADER) {
            won = 1;
            /* taken only once the dead leader's lease had expired */
            assert_true(lease.db_now_ms >= old_expiry);
        }
        sleep_ms(next > 50 ? 50 : next);
    }
    assert_true(won);
    assert_int_equal(odbc_leader_term(b), old_term + 1);
    odbc_leader_destroy(b);
}

static void stale_term_can_neither_renew_nor_resign(void **state) {
    char ns[64];
    struct odbc_leader__config cfg;
    struct odbc_leader__db *db = NULL, *other = NULL;
    struct odbc_leader__result res;
    struct odbc_leader__log log = {NULL, NULL};
    char err[256] = "";
    char *s;
    int64_t t1;

    (void)state;
    ns_name(ns, sizeof(ns), "stale");
    s = config("LeaderNamespace=%s", ns);
    memset(&cfg, 0, sizeof(cfg));
    assert_int_equal(odbc_leader__config_parse(s, &cfg, err, sizeof(err)), 0);
    test_free(s);
    assert_int_equal(odbc_leader__db_create(&db, &cfg, "cand-a", &log), 0);
    assert_int_equal(odbc_leader__db_create(&other, &cfg, "cand-b", &log), 0);
    assert_int_equal(odbc_leader__db_connect(db, err, sizeof(err)), 0);
    assert_int_equal(odbc_leader__db_connect(other, err, sizeof(err)), 0);

    assert_int_equal(odbc_leader__db_attempt(db, &res), 0);
    assert_true(res.won);
    t1 = res.term;
    assert_int_equal(odbc_leader__db_resign(db, t1), 1);
    assert_int_equal(odbc_leader__db_attempt(db, &res), 0);
    assert_true(res.won);               /* the same id wins again ... */
    assert_int_equal(res.term, t1 + 1); /* ... with a new term */

    /* the old term is dead: no renew, no resign */
    assert_int_equal(odbc_leader__db_renew(db, t1, &res), 0);
    assert_false(res.found);
    assert_int_equal(odbc_leader__db_resign(db, t1), 0);
    /* another id cannot use the current term either */
    assert_int_equal(odbc_leader__db_renew(other, t1 + 1, &res), 0);
    assert_false(res.found);
    assert_int_equal(odbc_leader__db_resign(other, t1 + 1), 0);
    assert_int_equal(odbc_leader__db_attempt(other, &res), 0);
    assert_false(res.won);

    assert_int_equal(odbc_leader__db_read_lease(db, &res), 0);
    assert_string_equal(res.leader_id, "cand-a");
    assert_int_equal(res.term, t1 + 1);
    /* the current term renews */
    assert_int_equal(odbc_leader__db_renew(db, t1 + 1, &res), 0);
    assert_true(res.found);

    odbc_leader__db_destroy(db);
    odbc_leader__db_destroy(other);
    odbc_leader__config_free(&cfg);
}

/* Opens a port handle for id on namespace ns with extra settings; fails
 * the test when it cannot connect. cfg is filled and owned by the caller. */
static struct odbc_leader__db *port_open(struct odbc_leader__config *cfg,
                                         const char *ns, const char *id,
                                         const char *extra) {
    static const struct odbc_leader__log log = {NULL, NULL};
    struct odbc_leader__db *db = NULL;
    char err[256] = "";
    char *s = config("LeaderNamespace=%s;%s", ns, extra);

    memset(cfg, 0, sizeof(*cfg));
    assert_int_equal(odbc_leader__config_parse(s, cfg, err, sizeof(err)), 0);
    test_free(s);
    assert_int_equal(odbc_leader__db_create(&db, cfg, id, &log), 0);
    if (odbc_leader__db_connect(db, err, sizeof(err)) != 0)
        fail_msg("connect: %s", err);
    return db;
}

/*
 * A lease that expired while nobody took it cannot be renewed, even by
 * its holder with the exact term; and an attempt never takes an unexpired
 * lease, not even its own. Both need the dialect to tell what its own
 * statements changed from what an earlier transaction left behind.
 */
static void
expired_lease_is_not_renewed_and_own_lease_not_retaken(void **state) {
    char ns[64];
    struct odbc_leader__config cfg;
    struct odbc_leader__db *db;
    struct odbc_leader__result res;
    int64_t t1;

    (void)state;
    ns_name(ns, sizeof(ns), "expired");
    db = port_open(&cfg, ns, "cand-x",
                   "LeaderTTL=400;LeaderRenewInterval=100;"
                   "LeaderSafetyMargin=100");
    assert_int_equal(odbc_leader__db_attempt(db, &res), 0);
    assert_true(res.won);
    t1 = res.term;
    assert_int_equal(odbc_leader__db_attempt(db, &res), 0);
    assert_false(res.won); /* our own lease is unexpired */
    assert_string_equal(res.leader_id, "cand-x");
    assert_int_equal(res.term, t1);
    assert_int_equal(odbc_leader__db_renew(db, t1, &res), 0);
    assert_true(res.found);
    assert_true(res.expires_at_ms > res.now_ms);
    sleep_ms(600); /* past the TTL, nobody takes over */
    assert_int_equal(odbc_leader__db_renew(db, t1, &res), 0);
    assert_false(res.found);
    assert_int_equal(odbc_leader__db_attempt(db, &res), 0);
    assert_true(res.won);
    assert_int_equal(res.term, t1 + 1);
    odbc_leader__db_destroy(db);
    odbc_leader__config_free(&cfg);
}

/*
 * odbc_leader_request_resign from any handle: the leader resigns at its
 * next renewal; with a target, the lease is reserved for that candidate,
 * so another follower cannot take it first. A dead target and a
 * namespace without a leader give their own errors.
 */
static void resign_request_and_handoff(void **state) {
    static const char *const fast = "LeaderTTL=30000;LeaderRenewInterval=100";
    char ns[64];
    odbc_leader_t *a, *b, *c;
    int64_t term;

    (void)state;
    ns_name(ns, sizeof(ns), "handoff");
    a = make_ns(ns, fast);
    b = make_ns(ns, fast);
    c = make_ns(ns, fast);
    assert_int_equal(odbc_leader_request_resign(c, NULL),
                     ODBC_LEADER_ENOLEADER);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
    assert_int_equal(odbc_leader_tick(c, NULL), ODBC_LEADER_FOLLOWER);
    term = odbc_leader_term(a);
    assert_int_equal(odbc_leader_request_resign(c, "nobody-here"),
                     ODBC_LEADER_ENOCANDIDATE);

    /* hand over to b: c asks, a resigns at its next renewal */
    assert_int_equal(odbc_leader_request_resign(c, odbc_leader_id(b)), 0);
    assert_true(odbc_leader_is_leader(a)); /* only at its next tick */
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_FOLLOWER);
    assert_false(odbc_leader_is_leader(a));
    assert_int_equal(odbc_leader_tick(c, NULL), ODBC_LEADER_FOLLOWER);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_term(b), term + 1);

    /* a plain request: b resigns, and whoever ticks first takes over */
    assert_int_equal(odbc_leader_request_resign(a, NULL), 0);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
    assert_int_equal(odbc_leader_tick(c, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_term(c), term + 2);
    odbc_leader_destroy(a);
    odbc_leader_destroy(b);
    odbc_leader_destroy(c);
}

static void same_id_winning_again_gets_a_new_term(void **state) {
    char ns[64], extra[128];
    odbc_leader_t *a;
    int64_t term;

    (void)state;
    ns_name(ns, sizeof(ns), "sameid");
    snprintf(extra, sizeof(extra), "LeaderId=host-%ld", (long)getpid());
    a = make_ns(ns, extra);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    term = odbc_leader_term(a);
    odbc_leader_destroy(a);
    a = make_ns(ns, extra);
    assert_string_equal(odbc_leader_id(a) + 5, extra + 14);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_term(a), term + 1);
    odbc_leader_destroy(a);
}

static void trust_window_lapses_when_ticks_stop(void **state) {
    char ns[64];
    struct odbc_leader_lease lease;
    odbc_leader_t *a;

    (void)state;
    ns_name(ns, sizeof(ns), "lapse");
    a = make_ns(ns, "LeaderTTL=1500;LeaderSafetyMargin=500;"
                    "LeaderRenewInterval=300");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_true(odbc_leader_is_leader(a));
    sleep_ms(1100); /* past TTL - margin = 1000 ms, no tick */
    assert_false(odbc_leader_is_leader(a));
    assert_int_equal(odbc_leader_term(a), 0);
    /* the database still shows the lease: the process stepped down first */
    odbc_leader_read_lease(a, &lease);
    assert_string_equal(lease.leader_id, odbc_leader_id(a));
    odbc_leader_destroy(a);
}

struct names {
    char ids[8][129];
    int n;
};

static void collect(void *ctx, const struct odbc_leader_candidate *c) {
    struct names *n = ctx;

    assert_true(c->expires_at_ms > c->db_now_ms);
    assert_true(c->heartbeat_at_ms <= c->db_now_ms);
    if (n->n < 8)
        strcpy(n->ids[n->n++], c->id);
}

static int has_name(const struct names *n, const char *id) {
    for (int i = 0; i < n->n; i++)
        if (strcmp(n->ids[i], id) == 0)
            return 1;
    return 0;
}

static void candidates_are_listed(void **state) {
    char ns[64];
    odbc_leader_t *h[3];
    struct names n;

    (void)state;
    ns_name(ns, sizeof(ns), "cands");
    for (int i = 0; i < 3; i++) {
        h[i] = make_ns(ns, "");
        odbc_leader_tick(h[i], NULL);
    }
    memset(&n, 0, sizeof(n));
    assert_int_equal(odbc_leader_list_candidates(h[0], collect, &n), 3);
    assert_int_equal(n.n, 3);
    for (int i = 0; i < 3; i++)
        assert_true(has_name(&n, odbc_leader_id(h[i])));
    odbc_leader_destroy(h[2]); /* unregisters */
    memset(&n, 0, sizeof(n));
    assert_int_equal(odbc_leader_list_candidates(h[0], collect, &n), 2);
    odbc_leader_destroy(h[0]);
    odbc_leader_destroy(h[1]);
}

static void leader_removes_long_dead_candidates(void **state) {
    char ns[64], sql[512];
    odbc_leader_t *a;
    struct raw r;
    int64_t count = -1;

    (void)state;
    ns_name(ns, sizeof(ns), "gc");
    a = make_ns(ns, "LeaderTTL=3000;LeaderRenewInterval=100");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    raw_open(&r);
    /* a crashed candidate, expired long ago, and one expired just now */
    snprintf(sql, sizeof(sql),
             "INSERT INTO odbc_leader_candidate (namespace, candidate_id, "
             "registered_at_ms, heartbeat_at_ms, expires_at_ms) VALUES "
             "('%s', 'dead', 0, 0, 1000)",
             ns);
    assert_true(raw_exec(&r, sql, NULL));
    sleep_ms(100);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    snprintf(sql, sizeof(sql),
             "SELECT COUNT(*) FROM odbc_leader_candidate WHERE namespace = "
             "'%s'",
             ns);
    assert_true(raw_exec(&r, sql, &count));
    assert_int_equal(count, 1); /* only the leader's own row is left */
    raw_close(&r);
    odbc_leader_destroy(a);
}

static void settings_from_odbc_ini_and_string(void **state) {
    const char *dsn = getenv("OL_DSN");
    struct odbc_leader_lease lease;
    char cfg[1024];
    odbc_leader_t *a;
    int64_t ttl;

    (void)state;
    assert_non_null(dsn);
    /* the namespace comes from the file, the TTL from the string */
    snprintf(cfg, sizeof(cfg), "DSN=%s;LeaderTTL=6000;%s", dsn,
             getenv("OL_LEADER_EXTRA") != NULL ? getenv("OL_LEADER_EXTRA")
                                               : "");
    a = make(cfg);
    assert_string_equal(odbc_leader_namespace(a), "from-odbc-ini");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_read_lease(a, &lease), 0);
    ttl = lease.expires_at_ms - lease.db_now_ms;
    assert_true(ttl > 4000 && ttl <= 6000);
    odbc_leader_destroy(a);
}

struct racer {
    struct odbc_leader__db *db;
    struct odbc_leader__result res;
    int rc;
    atomic_int done; /* set when the attempt returned */
};

static void *race_attempt(void *arg) {
    struct racer *r = arg;

    r->rc = odbc_leader__db_attempt(r->db, &r->res);
    atomic_store(&r->done, 1);
    return NULL;
}

/*
 * 1 when first_row_race's attempt should wait for the blocker and then see
 * its row (no unique violation), 0 when it should collide with it.
 * OL_FIRST_ROW=waits or =collides says so for a database the suite does
 * not know; otherwise SQLite waits (its write lock), and so does the
 * generic dialect on MariaDB (its leading UPDATE is a locking read).
 */
static int first_row_waits(const struct odbc_leader__db *db) {
    const struct odbc_leader__dialect *d = odbc_leader__db_dialect(db);
    const char *v = getenv("OL_FIRST_ROW");

    if (v != NULL)
        return strcmp(v, "waits") == 0;
    return is_kind("sqlite") ||
           (is_kind("mariadb") && d != NULL && strcmp(d->name, "generic") == 0);
}

/* The statement that counts sessions waiting on a row or key lock, or
 * NULL where the database cannot show it (SQLite). */
static const char *lock_wait_probe(void) {
    if (is_kind("postgresql"))
        return "SELECT COUNT(*) FROM pg_stat_activity WHERE "
               "wait_event_type = 'Lock' AND datname = current_database()";
    if (is_kind("mariadb"))
        return "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE "
               "trx_state = 'LOCK WAIT'";
    return NULL;
}

/*
 * Two candidates creating a namespace's first lease row at once, driven
 * deterministically: a blocker session inserts the first row and keeps
 * its transaction open; the candidate's attempt starts, and once the
 * server shows it waiting, the blocker commits.
 * - PostgreSQL (its own dialect and generic) and MariaDB: the attempt saw
 *   no row, inserted, waited on the primary key and now fails with a
 *   unique violation: it rolls back, retries once and finds the blocker's
 *   lease (the integrity-error retry path).
 * - generic on MariaDB: its first statement, an UPDATE of the lease row,
 *   is a locking read in InnoDB: it waits on the blocker's uncommitted
 *   row and then sees it committed, so nothing collides.
 * - Another database: OL_FIRST_ROW says which of the two outcomes to
 *   expect (see first_row_waits).
 * - SQLite: the blocker holds the database's write lock, so the attempt
 *   waits before reading anything (BEGIN IMMEDIATE, or the generic
 *   dialect's leading UPDATE) and then finds the row: no collision can
 *   happen there, and none is reported. SQLite cannot show lock waits, so
 *   the blocker commits after a pause; the outcome is the same whether
 *   the attempt was already waiting or not.
 */
static void first_row_race(void **state) {
    const char *probe_sql = lock_wait_probe();
    char ns[64], sql[512], err[256] = "";
    struct odbc_leader__config cfg;
    struct odbc_leader__db *db = NULL;
    struct odbc_leader__db_stats st;
    struct odbc_leader__log log = {NULL, NULL};
    struct raw blocker, probe;
    struct racer r;
    pthread_t t;
    char *s;
    int64_t waiting = 0;

    (void)state;
    ns_name(ns, sizeof(ns), "race");
    s = config("LeaderNamespace=%s", ns);
    memset(&cfg, 0, sizeof(cfg));
    assert_int_equal(odbc_leader__config_parse(s, &cfg, err, sizeof(err)), 0);
    test_free(s);
    assert_int_equal(odbc_leader__db_create(&db, &cfg, "racer", &log), 0);
    assert_int_equal(odbc_leader__db_connect(db, err, sizeof(err)), 0);

    raw_open(&blocker);
    raw_open(&probe);
    SQLSetConnectAttr(blocker.dbc, SQL_ATTR_AUTOCOMMIT,
                      (SQLPOINTER)SQL_AUTOCOMMIT_OFF, 0);
    snprintf(sql, sizeof(sql),
             "INSERT INTO odbc_leader_lease (namespace, leader_id, term, "
             "elected_at_ms, renewed_at_ms, expires_at_ms) VALUES ('%s', "
             "'blocker', 1, 0, 0, 9000000000000)",
             ns);
    assert_true(raw_exec(&blocker, sql, NULL));

    memset(&r, 0, sizeof(r));
    atomic_init(&r.done, 0);
    r.db = db;
    assert_int_equal(pthread_create(&t, NULL, race_attempt, &r), 0);
    if (probe_sql != NULL) {
        /* a liveness bound only (valgrind on a loaded machine is slow);
         * an attempt that ends without waiting ends the loop at once */
        for (int i = 0; i < 6000 && waiting == 0 && !atomic_load(&r.done);
             i++) {
            sleep_ms(10);
            raw_exec(&probe, probe_sql, &waiting);
        }
        assert_true(waiting > 0);
    } else {
        sleep_ms(300);
    }
    assert_true(
        SQL_SUCCEEDED(SQLEndTran(SQL_HANDLE_DBC, blocker.dbc, SQL_COMMIT)));
    pthread_join(t, NULL);

    assert_int_equal(r.rc, 0);
    assert_false(r.res.won);
    assert_string_equal(r.res.leader_id, "blocker");
    odbc_leader__db_stats(db, &st);
    if (first_row_waits(db)) {
        assert_int_equal(st.unique_violations, 0);
        assert_int_equal(st.retries, 0);
    } else {
        assert_int_equal(st.unique_violations, 1);
        assert_int_equal(st.retries, 1);
    }

    raw_close(&blocker);
    raw_close(&probe);
    odbc_leader__db_destroy(db);
    odbc_leader__config_free(&cfg);
}

/* 1 when the dialect cfg connects with defines the follower wake-up. */
static int dialect_has_wait(const char *cfg_text) {
    struct odbc_leader__config cfg;
    struct odbc_leader__db *db = NULL;
    struct odbc_leader__log log = {NULL, NULL};
    char err[256] = "";
    int has;

    memset(&cfg, 0, sizeof(cfg));
    assert_int_equal(
        odbc_leader__config_parse(cfg_text, &cfg, err, sizeof(err)), 0);
    assert_int_equal(odbc_leader__db_create(&db, &cfg, "probe", &log), 0);
    assert_int_equal(odbc_leader__db_connect(db, err, sizeof(err)), 0);
    has = odbc_leader__db_has_wait(db);
    odbc_leader__db_destroy(db);
    odbc_leader__config_free(&cfg);
    return has;
}

/* The statement that counts sessions blocked on a wake-up lock. */
static const char *wake_wait_probe(void) {
    if (is_kind("postgresql"))
        return "SELECT COUNT(*) FROM pg_stat_activity WHERE "
               "wait_event_type = 'Lock' AND wait_event = 'advisory' "
               "AND datname = current_database()";
    return "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE "
           "STATE = 'User lock'";
}

struct ticker {
    odbc_leader_t *h;
    int rc;
    uint32_t next;
    _Atomic int started; /* the thread is about to call tick */
};

static void *tick_once(void *arg) {
    struct ticker *t = arg;

    atomic_store(&t->started, 1);
    t->rc = odbc_leader_tick(t->h, &t->next);
    return NULL;
}

/* Waits until b's tick (thread t) is blocked in the wake-up wait: on the
 * servers, until the server shows a session waiting on the lock; on
 * SQLite (a lock file, polled by the follower) 300 ms after the tick
 * began: a tick that did not wait would have returned as a follower by
 * then, as a live leader still held the lease. */
static void until_waiting(const struct ticker *t) {
    struct raw probe;
    int64_t waiting = 0;

    while (!atomic_load(&t->started))
        sleep_ms(1);
    if (is_kind("sqlite")) {
        sleep_ms(300);
        return;
    }
    raw_open(&probe);
    for (int i = 0; i < 800 && waiting == 0; i++) { /* the wait lasts 8 s */
        sleep_ms(10);
        raw_exec(&probe, wake_wait_probe(), &waiting);
    }
    raw_close(&probe);
    assert_true(waiting > 0); /* b's tick is blocked in the wait */
}

/*
 * The follower wake-up: a follower whose tick is blocked in the dialect's
 * wait statement becomes leader within that same tick when the leader
 * resigns, long before its next scheduled attempt (20 s away here; the
 * wait may last 8 s). Without the wake-up that tick would end as a
 * follower. SQLite waits on a lock file (@wake-file); dialects without a
 * wake-up (generic) skip.
 */
static void waiting_follower_wakes_on_resign(void **state) {
    const char *timing = "LeaderTTL=60000;LeaderRenewInterval=20000;"
                         "LeaderStatementTimeout=10000;"
                         "LeaderFollowerWait=8000";
    char ns[64], *cfg;
    struct ticker t;
    odbc_leader_t *a, *b;
    pthread_t th;
    int64_t term;

    (void)state;
    ns_name(ns, sizeof(ns), "wake");
    cfg = config("LeaderNamespace=%s;%s", ns, timing);
    if (!dialect_has_wait(cfg)) {
        test_free(cfg);
        skip();
    }
    test_free(cfg);
    a = make_ns(ns, timing);
    b = make_ns(ns, timing);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    term = odbc_leader_term(a);
    memset(&t, 0, sizeof(t));
    t.h = b;
    assert_int_equal(odbc_leader_tick(b, &t.next), ODBC_LEADER_FOLLOWER);
    assert_int_equal(t.next, 0); /* its next tick waits */

    assert_int_equal(pthread_create(&th, NULL, tick_once, &t), 0);
    until_waiting(&t);
    assert_int_equal(odbc_leader_resign(a), 0);
    pthread_join(th, NULL);
    assert_int_equal(t.rc, ODBC_LEADER_LEADER); /* the same tick */
    assert_int_equal(odbc_leader_term(b), term + 1);

    odbc_leader_destroy(a);
    odbc_leader_destroy(b);
}

static void reconnects_after_server_restart(void **state) {
    const char *cmd = getenv("OL_RESTART_CMD");
    char ns[64];
    odbc_leader_t *a;
    int64_t term;
    int errors = 0, rc = 0;

    (void)state;
    if (cmd == NULL)
        skip(); /* SQLite has no server to restart */
    ns_name(ns, sizeof(ns), "restart");
    a = make_ns(ns, "LeaderTTL=30000;LeaderRenewInterval=500");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    term = odbc_leader_term(a);
    assert_int_equal(system(cmd), 0);
    for (int i = 0; i < 400; i++) {
        uint32_t next = 0;

        rc = odbc_leader_tick(a, &next);
        if (rc < 0)
            errors++;
        else if (errors > 0 && rc == ODBC_LEADER_LEADER)
            break;
        sleep_ms(next > 100 ? 100 : next);
    }
    assert_true(errors > 0); /* the restart was noticed */
    assert_int_equal(rc, ODBC_LEADER_LEADER);
    /* the lease outlived the restart: the same term was renewed */
    assert_int_equal(odbc_leader_term(a), term);
    odbc_leader_destroy(a);
}

/*
 * Least privilege: the tables were created by the admin account (the
 * suite's own); OL_LIMITED_CONNECT logs in as an account that may only
 * SELECT, INSERT, UPDATE and DELETE on them. Such candidates elect,
 * renew and resign with LeaderCreateSchema=no; asked to create tables
 * they cannot, they fail with the database's reason and create nothing.
 */
static void least_privilege_candidates(void **state) {
    const char *limited = getenv("OL_LIMITED_CONNECT");
    const char *extra = getenv("OL_LEADER_EXTRA");
    char ns[64], cfg[1024], err[512] = "", prefix[64], table[96];
    odbc_leader_t *a = NULL, *b = NULL, *admin;
    int64_t term;
    int rc;

    (void)state;
    if (limited == NULL)
        skip(); /* SQLite has no accounts */
    ns_name(ns, sizeof(ns), "leastpriv");
    admin = make_ns(ns, ""); /* makes sure the tables exist */
    odbc_leader_destroy(admin);
    snprintf(cfg, sizeof(cfg), "%s;%s;LeaderNamespace=%s;LeaderCreateSchema=no",
             limited, extra != NULL ? extra : "", ns);
    assert_int_equal(odbc_leader_create(&a, cfg, NULL, err, sizeof(err)), 0);
    assert_int_equal(odbc_leader_create(&b, cfg, NULL, err, sizeof(err)), 0);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
    term = odbc_leader_term(a);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    odbc_leader_destroy(a); /* resigns and unregisters */
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_term(b), term + 1);
    odbc_leader_destroy(b);

    snprintf(prefix, sizeof(prefix), "lp%ld_", (long)getpid());
    snprintf(cfg, sizeof(cfg), "%s;%s;LeaderTablePrefix=%s", limited,
             extra != NULL ? extra : "", prefix);
    a = (odbc_leader_t *)1;
    rc = odbc_leader_create(&a, cfg, NULL, err, sizeof(err));
    assert_true(rc < 0);
    assert_null(a);
    assert_non_null(strstr(err, "creating the tables failed"));
    snprintf(table, sizeof(table), "%sschema", prefix);
    assert_false(table_exists(table));
}

static void bad_config_gives_clear_errors_and_writes_nothing(void **state) {
    static const struct {
        const char *extra;
        const char *expect;
    } cases[] = {
        {"LeaderBogus=1", "LeaderBogus"},
        {"LeaderTTL=15s", "LeaderTTL"},
        {"LeaderTTL=3000;LeaderSafetyMargin=3000", "LeaderSafetyMargin"},
        {"LeaderNamespace=a b", "LeaderNamespace"},
        {"LeaderTablePrefix=x;y", ""},
        {"LeaderTablePrefix=1bad", "LeaderTablePrefix"},
        {"LeaderDialect=nosuchdialect", "nosuchdialect"},
    };
    char prefix[64];

    (void)state;
    snprintf(prefix, sizeof(prefix), "bad%ld_", (long)getpid());
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *cfg = config("LeaderTablePrefix=%s;%s", prefix, cases[i].extra);
        char err[512] = "";
        odbc_leader_t *h = (odbc_leader_t *)1;
        int rc = odbc_leader_create(&h, cfg, NULL, err, sizeof(err));

        assert_true(rc < 0);
        assert_null(h);
        assert_true(err[0] != '\0');
        assert_non_null(strstr(err, cases[i].expect));
        test_free(cfg);
    }
    {
        char table[96];

        snprintf(table, sizeof(table), "%slease", prefix);
        assert_false(table_exists(table));
        snprintf(table, sizeof(table), "%sschema", prefix);
        assert_false(table_exists(table));
    }
}

static void missing_tables_and_wrong_version_are_refused(void **state) {
    char prefix[64], table[96], sql[256], err[512] = "";
    odbc_leader_t *h = NULL;
    struct raw r;
    char *cfg;
    int rc;

    (void)state;
    snprintf(prefix, sizeof(prefix), "nt%ld_", (long)getpid());
    cfg = config("LeaderTablePrefix=%s;LeaderCreateSchema=no", prefix);
    rc = odbc_leader_create(&h, cfg, NULL, err, sizeof(err));
    test_free(cfg);
    assert_int_equal(rc, ODBC_LEADER_ENOTABLE);
    assert_non_null(strstr(err, "LeaderCreateSchema=no"));
    snprintf(table, sizeof(table), "%sschema", prefix);
    assert_false(table_exists(table));

    /* create them, then pretend a newer release changed the schema */
    cfg = config("LeaderTablePrefix=%s", prefix);
    h = make(cfg);
    odbc_leader_destroy(h);
    raw_open(&r);
    snprintf(sql, sizeof(sql), "UPDATE %sschema SET version = 99", prefix);
    assert_true(raw_exec(&r, sql, NULL));
    raw_close(&r);
    h = NULL;
    rc = odbc_leader_create(&h, cfg, NULL, err, sizeof(err));
    test_free(cfg);
    assert_int_equal(rc, ODBC_LEADER_ESCHEMA);
    assert_null(h);
    assert_non_null(strstr(err, "99"));
}

static void unreachable_database_gives_clear_error(void **state) {
    const char *down = getenv("OL_DOWN_CONNECT");
    char cfg[1024], err[512] = "";
    odbc_leader_t *h = (odbc_leader_t *)1;
    int rc;

    (void)state;
    assert_non_null(down);
    snprintf(cfg, sizeof(cfg), "%s;PWD=sekrit-password", down);
    rc = odbc_leader_create(&h, cfg, NULL, err, sizeof(err));
    assert_int_equal(rc, ODBC_LEADER_ECONNECT);
    assert_null(h);
    assert_non_null(strstr(err, "cannot connect"));
    assert_null(strstr(err, "sekrit-password"));

    /* an odbc.ini DSN that does not exist */
    h = (odbc_leader_t *)1;
    rc = odbc_leader_create(&h, "DSN=no-such-dsn-here", NULL, err, sizeof(err));
    assert_int_equal(rc, ODBC_LEADER_ECONNECT);
    assert_null(h);
    assert_non_null(strstr(err, "no-such-dsn-here"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_candidate_becomes_leader),
        cmocka_unit_test(two_candidates_exactly_one_leads),
        cmocka_unit_test(renewing_keeps_the_term),
        cmocka_unit_test(graceful_shutdown_hands_over_before_expiry),
        cmocka_unit_test(killed_leader_is_replaced_after_expiry),
        cmocka_unit_test(stale_term_can_neither_renew_nor_resign),
        cmocka_unit_test(
            expired_lease_is_not_renewed_and_own_lease_not_retaken),
        cmocka_unit_test(resign_request_and_handoff),
        cmocka_unit_test(same_id_winning_again_gets_a_new_term),
        cmocka_unit_test(trust_window_lapses_when_ticks_stop),
        cmocka_unit_test(candidates_are_listed),
        cmocka_unit_test(leader_removes_long_dead_candidates),
        cmocka_unit_test(settings_from_odbc_ini_and_string),
        cmocka_unit_test(first_row_race),
        cmocka_unit_test(waiting_follower_wakes_on_resign),
        cmocka_unit_test(reconnects_after_server_restart),
        cmocka_unit_test(least_privilege_candidates),
        cmocka_unit_test(bad_config_gives_clear_errors_and_writes_nothing),
        cmocka_unit_test(missing_tables_and_wrong_version_are_refused),
        cmocka_unit_test(unreachable_database_gives_clear_error),
    };

    if (getenv("OL_CONNECT") == NULL) {
        fprintf(stderr, "OL_CONNECT is not set: run through sqlite.test or "
                        "postgresql.test\n");
        return 1;
    }
    cmocka_set_message_output(CM_OUTPUT_STDOUT);
    return cmocka_run_group_tests_name(getenv("OL_KIND"), tests, NULL, NULL);
}
