/* SPDX-License-Identifier: MIT */
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
#include <build_config.h>

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
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "db.h"
#include "db_group.h"
#include "db_lease.h"
#include "db_ledger.h"
#include "dialect.h"
#include "log.h"
#include "member.h"

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

/* Log callback when OL_DEBUG is set: every line to stderr. */
static void debug_log(void *ctx, int level, const char *msg) {
    (void)ctx;
    if (level <= atoi(getenv("OL_DEBUG")))
        fprintf(stderr, "  [log %d] %s\n", level, msg);
}

/* Creates a handle or fails the test with the error message. */
static odbc_leader_t *make(const char *cfg) {
    char err[512] = "";
    odbc_leader_t *h = NULL;
    struct odbc_leader_callbacks cb = {0};
    int rc;

    cb.struct_size = sizeof(cb);
    cb.log = debug_log;
    rc = odbc_leader_create(&h, cfg, getenv("OL_DEBUG") != NULL ? &cb : NULL,
                            err, sizeof(err));

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

/* Creates a group member (LeaderShards in extra) or fails the test. */
static odbc_leader_group_t *make_member(const char *grp, const char *id,
                                        const char *extra) {
    char *cfg = config("LeaderNamespace=%s;LeaderId=%s;%s", grp, id, extra);
    char err[512] = "";
    odbc_leader_group_t *g = NULL;
    int rc = odbc_leader_group_create(&g, cfg, NULL, err, sizeof(err));

    if (rc != 0)
        fail_msg("odbc_leader_group_create: %s (%s)", err,
                 odbc_leader_strerror(rc));
    test_free(cfg);
    return g;
}

/* Shards of g led now. */
static uint32_t led_by(const odbc_leader_group_t *g) {
    return odbc_leader_group_led(g);
}

/* Ticks every member every step_ms until done(ctx) or timeout_ms. Returns
 * 1 when done. */
static int tick_members(odbc_leader_group_t **m, int n, int64_t step_ms,
                        int64_t timeout_ms,
                        int (*done)(odbc_leader_group_t **m, int n)) {
    int64_t end = mono_ms() + timeout_ms;

    while (mono_ms() < end) {
        for (int i = 0; i < n; i++) {
            if (m[i] != NULL)
                odbc_leader_group_tick(m[i], NULL);
        }
        if (done(m, n))
            return 1;
        sleep_ms(step_ms);
    }
    return 0;
}

/* Every shard led by exactly one of the members, and each leads some. */
static int split_evenly(odbc_leader_group_t **m, int n) {
    uint32_t shards = odbc_leader_group_shards(m[0]), total = 0;

    for (uint32_t s = 0; s < shards; s++) {
        int leaders = 0;

        for (int i = 0; i < n; i++)
            leaders += odbc_leader_group_leadership(m[i], s, NULL) != 0;
        if (leaders != 1)
            return 0;
    }
    for (int i = 0; i < n; i++) {
        if (led_by(m[i]) == 0)
            return 0;
        total += led_by(m[i]);
    }
    return total == shards;
}

/* The second member leads every shard. */
static int second_leads_all(odbc_leader_group_t **m, int n) {
    (void)n;
    return led_by(m[1]) == odbc_leader_group_shards(m[1]);
}

/* Two members split a group's shards; a job's fire is claimed in its
 * shard by the member that leads it only; the lease rows agree. A dialect
 * without group statements refuses the group with a message naming them. */
static void group_members_split_and_claim(void **state) {
    char grp[64], sql[256];
    odbc_leader_group_t *m[2] = {NULL, NULL};
    const char *extra = "LeaderShards=24;LeaderTTL=3000;"
                        "LeaderRenewInterval=200;LeaderSafetyMargin=600";
    int64_t fire = (int64_t)time(NULL) * 1000, rows = -1;
    uint32_t s;
    struct raw r;
    char job[32];
    int owner = -1;

    (void)state;
    ns_name(grp, sizeof(grp), "grp");
    m[0] = make_member(grp, "member-a", extra);
    m[1] = make_member(grp, "member-b", extra);
    assert_int_equal(odbc_leader_group_shards(m[0]), 24);
    assert_true(tick_members(m, 2, 100, 20000, split_evenly));
    /* a job whose shard member b leads: b claims it, a cannot */
    for (int i = 0; owner != 1 && i < 1000; i++) {
        snprintf(job, sizeof(job), "job-%d", i);
        s = odbc_leader_shard_of(job, 24);
        owner = odbc_leader_group_leadership(m[1], s, NULL) != 0 ? 1 : 0;
    }
    assert_int_equal(owner, 1);
    assert_int_equal(odbc_leader_group_claim(m[0], job, fire),
                     ODBC_LEADER_ENOTLEADER);
    assert_int_equal(odbc_leader_group_claim(m[1], job, fire), 1);
    assert_int_equal(odbc_leader_group_claim(m[1], job, fire), 0);
    assert_int_equal(odbc_leader_group_finish(m[1], job, fire, 0), 0);
    /* the database agrees: every shard row held, by one of the two */
    raw_open(&r);
    snprintf(sql, sizeof(sql),
             "SELECT COUNT(*) FROM odbc_leader_lease WHERE grp = '%s' AND "
             "leader_id IN ('member-a', 'member-b')",
             grp);
    assert_true(raw_exec(&r, sql, &rows));
    assert_int_equal(rows, 24);
    snprintf(sql, sizeof(sql),
             "SELECT COUNT(*) FROM odbc_leader_fire WHERE namespace = '%s/%u' "
             "AND job = '%s'",
             grp, (unsigned)s, job);
    assert_true(raw_exec(&r, sql, &rows));
    assert_int_equal(rows, 1);
    /* the shards keep no election log */
    snprintf(sql, sizeof(sql),
             "SELECT COUNT(*) FROM odbc_leader_election WHERE namespace LIKE "
             "'%s/%%'",
             grp);
    assert_true(raw_exec(&r, sql, &rows));
    assert_int_equal(rows, 0);
    raw_close(&r);
    /* a graceful leave hands everything over at once, well inside a TTL */
    odbc_leader_group_destroy(m[0]);
    m[0] = NULL;
    assert_true(tick_members(m, 2, 100, 2000, second_leads_all));
    odbc_leader_group_destroy(m[1]);
}

/* A member that stops ticking (a crash) keeps its shards until their
 * leases expire and its renewals were watched standing still for one TTL:
 * the other takes none of them sooner. */
static void group_crashed_member_is_replaced_after_the_watch(void **state) {
    char grp[64];
    odbc_leader_group_t *m[2] = {NULL, NULL};
    const char *extra = "LeaderShards=8;LeaderTTL=2000;"
                        "LeaderRenewInterval=200;LeaderSafetyMargin=600";
    int64_t t0;
    uint32_t b_before;

    (void)state;
    ns_name(grp, sizeof(grp), "grpcrash");
    m[0] = make_member(grp, "member-a", extra);
    m[1] = make_member(grp, "member-b", extra);
    assert_true(tick_members(m, 2, 100, 20000, split_evenly));
    b_before = led_by(m[1]);
    /* a stops ticking: its windows end by themselves */
    t0 = mono_ms();
    while (mono_ms() - t0 < 1500) {
        odbc_leader_group_tick(m[1], NULL);
        assert_int_equal(led_by(m[1]), b_before); /* nothing taken early */
        sleep_ms(100);
    }
    assert_int_equal(led_by(m[0]), 0); /* a's windows ended */
    {
        odbc_leader_group_t *only_b[2] = {NULL, m[1]};

        assert_true(tick_members(only_b, 2, 100, 8000, second_leads_all));
    }
    assert_true(mono_ms() - t0 >= 1800); /* about one TTL after a's last */
    odbc_leader_group_destroy(m[0]);     /* its leave releases nothing */
    odbc_leader_group_tick(m[1], NULL);
    assert_int_equal(led_by(m[1]), 8);
    odbc_leader_group_destroy(m[1]);
}

/* Every shard led by one of the members (an uneven split counts). */
static int all_led(odbc_leader_group_t **m, int n) {
    uint32_t total = 0;

    for (int i = 0; i < n; i++)
        total += led_by(m[i]);
    return total == odbc_leader_group_shards(m[0]);
}

/*
 * Members that all lose the database for longer than the TTL (a restart
 * behind a pooler that refuses logins for a while, a long network cut)
 * and then come back, alive all along: every member's shards expired
 * while nobody could reach them, and each is still assigned to it. Every
 * shard must be led again within a few renew intervals. Once seen
 * failing: a member's own expired rows could be neither renewed (expired)
 * nor taken (its own incarnation, never on its own dead list), and nobody
 * else took them (their live holder is their assignee), so they stayed
 * unled for as long as that member lived.
 */
static void group_members_back_after_an_outage_lead_again(void **state) {
    char grp[64];
    odbc_leader_group_t *m[2] = {NULL, NULL};
    const char *extra = "LeaderShards=8;LeaderTTL=1500;"
                        "LeaderRenewInterval=200;LeaderSafetyMargin=400";
    int64_t t0;

    (void)state;
    ns_name(grp, sizeof(grp), "grpback");
    m[0] = make_member(grp, "member-a", extra);
    m[1] = make_member(grp, "member-b", extra);
    assert_true(tick_members(m, 2, 100, 20000, split_evenly));
    /* the outage: neither ticks for more than the TTL; the windows end */
    sleep_ms(2500);
    assert_int_equal(led_by(m[0]) + led_by(m[1]), 0);
    /* back: both tick again and lead every shard again, a few renew
     * intervals after their first tick (not one TTL more: nothing of
     * another member has to be watched) */
    t0 = mono_ms();
    assert_true(tick_members(m, 2, 100, 6000, all_led));
    print_message("    all %u shards led again %lld ms after the outage\n",
                  odbc_leader_group_shards(m[0]), (long long)(mono_ms() - t0));
    assert_true(tick_members(m, 2, 100, 20000, split_evenly));
    /* and a member alone, back after an outage, leads all of them again */
    odbc_leader_group_destroy(m[1]);
    m[1] = NULL;
    assert_true(tick_members(m, 1, 100, 6000, all_led));
    sleep_ms(2500);
    assert_int_equal(led_by(m[0]), 0);
    assert_true(tick_members(m, 1, 100, 6000, all_led));
    odbc_leader_group_destroy(m[0]);
}

/* Rows of group grp held by member id (any expiry). */
static int64_t rows_held_by(const char *grp, const char *id) {
    char sql[256];
    int64_t rows = -1;
    struct raw r;

    raw_open(&r);
    snprintf(sql, sizeof(sql),
             "SELECT COUNT(*) FROM odbc_leader_lease WHERE grp = '%s' AND "
             "leader_id = '%s'",
             grp, id);
    assert_true(raw_exec(&r, sql, &rows));
    raw_close(&r);
    return rows;
}

/*
 * A member that took another's shards while that one was away loses them
 * all (its ticks stop for longer than the TTL) just as the other comes
 * back, so the answer that shows them lost gives some of them to the
 * other. Their rows are still the first member's, expired; the other
 * cannot take them, for the first lives and renews its other rows (its
 * renew_seq keeps growing, so it is never watched dead). Every shard must
 * be led again within a few renew intervals. Once seen failing (the group
 * fault schedule under load: 36 shards unled until the end of the run):
 * the lost rows were forgotten, neither taken back (not this member's in
 * the assignment) nor released.
 */
static void group_lost_shards_of_another_are_released(void **state) {
    char grp[64];
    odbc_leader_group_t *m[2] = {NULL, NULL};
    odbc_leader_group_t *only_a[1];
    const char *extra = "LeaderShards=8;LeaderTTL=1500;"
                        "LeaderRenewInterval=200;LeaderSafetyMargin=400";
    int64_t t_a, t0;

    (void)state;
    ns_name(grp, sizeof(grp), "grplost");
    m[0] = make_member(grp, "member-a", extra);
    m[1] = make_member(grp, "member-b", extra);
    assert_true(tick_members(m, 2, 100, 20000, split_evenly));
    /* b goes away: a takes b's shards after the watch */
    only_a[0] = m[0];
    assert_true(tick_members(only_a, 1, 100, 10000, all_led));
    t_a = mono_ms(); /* a's last renewal */
    /* b comes back (one tick: a's rows are unexpired, it takes none) */
    sleep_ms(800);
    odbc_leader_group_tick(m[1], NULL);
    assert_int_equal(led_by(m[1]), 0);
    /* a's rows expire before a ticks again; a's answer shows them lost
     * and b back (b still sees a alive: it saw a's heartbeat 800 ms after
     * a's last tick) */
    if (mono_ms() < t_a + 1700)
        sleep_ms(t_a + 1700 - mono_ms());
    odbc_leader_group_tick(m[0], NULL);
    assert_int_equal(led_by(m[0]), 0);
    assert_int_equal(rows_held_by(grp, "member-a"), 8); /* expired */
    t0 = mono_ms();
    assert_true(tick_members(m, 2, 100, 6000, all_led));
    print_message("    all %u shards led again %lld ms after, b leads %u\n",
                  odbc_leader_group_shards(m[0]), (long long)(mono_ms() - t0),
                  led_by(m[1]));
    assert_true(tick_members(m, 2, 100, 20000, split_evenly));
    odbc_leader_group_destroy(m[0]);
    odbc_leader_group_destroy(m[1]);
}

/* A group of another size, shard names taken by single handles, and
 * LeaderShards on a single handle are refused with messages naming them. */
static const char *lock_wait_probe(void);

/*
 * Waits, after a racer thread started, until probe_sql (a count of
 * sessions waiting on a lock) shows it waiting, or its done flag is set
 * (it returned without waiting); where the database cannot show waits
 * (probe_sql NULL, SQLite), pauses 300 ms instead. Returns the count
 * seen, 1 after the pause. The loop's bound is a liveness bound only
 * (valgrind on a loaded machine is slow).
 */
static int64_t await_waiter(struct raw *probe, const char *probe_sql,
                            atomic_int *done) {
    int64_t waiting = 0;

    if (probe_sql == NULL) {
        sleep_ms(300);
        return 1;
    }
    for (int i = 0; i < 6000 && waiting == 0 && !atomic_load(done); i++) {
        sleep_ms(10);
        raw_exec(probe, probe_sql, &waiting);
    }
    return waiting;
}

struct group_racer {
    char *cfg;
    odbc_leader_group_t *g;
    char err[512];
    int rc;
    atomic_int done; /* set when odbc_leader_group_create returned */
};

static void *race_group_create(void *arg) {
    struct group_racer *r = arg;

    r->rc =
        odbc_leader_group_create(&r->g, r->cfg, NULL, r->err, sizeof(r->err));
    atomic_store(&r->done, 1);
    return NULL;
}

/*
 * Two first members of a group at once, driven as first_row_race drives
 * two candidates: a blocker session inserts the group's rows and keeps
 * its transaction open; a member's create starts, and once the server
 * shows it waiting (MariaDB: running its insert; SQLite: after a
 * pause), the blocker commits. The member's group_init skipped the
 * blocker's rows and counted from a snapshot without them; it must run
 * once more and join the group of the right size, not refuse it as a
 * group of 0 shards. The blocker holds on for longer than the member's
 * statement timeout (500 ms here), as the first member of a fleet
 * inserting 10,000 rows does: the member's wait times out and is retried.
 */
static void group_first_members_race(void **state) {
    /* MariaDB: the member's INSERT (IGNORE), once it runs, has read the
     * group's row count; it does not always show as an InnoDB lock wait */
    const char *probe_sql =
        is_kind("mariadb")
            ? "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE "
              "ID <> CONNECTION_ID() AND INFO LIKE "
              "'INSERT%INTO odbc_leader_lease%'"
            : lock_wait_probe();
    char grp[64], sql[512];
    struct raw blocker, probe;
    struct group_racer r;
    odbc_leader_group_t *warm;
    pthread_t t;
    int64_t waiting = 0;

    (void)state;
    /* the tables exist before the blocker writes to them */
    ns_name(grp, sizeof(grp), "grpwarm");
    warm = make_member(grp, "member-w", "LeaderShards=1");
    odbc_leader_group_destroy(warm);
    ns_name(grp, sizeof(grp), "grprace");
    raw_open(&blocker);
    raw_open(&probe);
    SQLSetConnectAttr(blocker.dbc, SQL_ATTR_AUTOCOMMIT,
                      (SQLPOINTER)SQL_AUTOCOMMIT_OFF, 0);
    for (int i = 0; i < 4; i++) {
        snprintf(sql, sizeof(sql),
                 "INSERT INTO odbc_leader_lease (namespace, leader_id, term, "
                 "elected_at_ms, renewed_at_ms, expires_at_ms, grp, shard) "
                 "VALUES ('%s/%d', NULL, 1, NULL, 0, 0, '%s', %d)",
                 grp, i, grp, i);
        assert_true(raw_exec(&blocker, sql, NULL));
    }
    memset(&r, 0, sizeof(r));
    atomic_init(&r.done, 0);
    r.cfg = config("LeaderNamespace=%s;LeaderId=member-a;LeaderShards=4;"
                   "LeaderTTL=3000;LeaderRenewInterval=500;"
                   "LeaderStatementTimeout=500",
                   grp);
    assert_int_equal(pthread_create(&t, NULL, race_group_create, &r), 0);
    waiting = await_waiter(&probe, probe_sql, &r.done);
    if (waiting == 0 && atomic_load(&r.done))
        fail_msg("the create did not wait for the blocker: %d %s", r.rc, r.err);
    assert_true(waiting > 0);
    sleep_ms(800);
    assert_true(
        SQL_SUCCEEDED(SQLEndTran(SQL_HANDLE_DBC, blocker.dbc, SQL_COMMIT)));
    pthread_join(t, NULL);
    if (r.rc != 0)
        fail_msg("odbc_leader_group_create: %s (%s)", r.err,
                 odbc_leader_strerror(r.rc));
    assert_int_equal(odbc_leader_group_shards(r.g), 4);
    odbc_leader_group_destroy(r.g);
    test_free(r.cfg);
    raw_close(&blocker);
    raw_close(&probe);
}

/* A group of more shards than a dialect's recursion limit (MariaDB stops a
 * recursive CTE after max_recursive_iterations, 1,000 by default, with a
 * warning only): its create makes every row, or it would refuse the group
 * as one of another size. */
static void group_of_many_shards_is_made_whole(void **state) {
    char grp[64];
    odbc_leader_group_t *g;

    (void)state;
    ns_name(grp, sizeof(grp), "grpmany");
    g = make_member(grp, "member-a", "LeaderShards=2500");
    assert_int_equal(odbc_leader_group_shards(g), 2500);
    odbc_leader_group_destroy(g);
    g = make_member(grp, "member-b", "LeaderShards=2500");
    assert_int_equal(odbc_leader_group_shards(g), 2500);
    odbc_leader_group_destroy(g);
}

static void group_bad_settings_are_refused(void **state) {
    char grp[64], ns[80], err[512] = "";
    odbc_leader_group_t *g = NULL, *other = NULL;
    odbc_leader_t *h = NULL;
    char *cfg;
    int rc;

    (void)state;
    ns_name(grp, sizeof(grp), "grpbad");
    g = make_member(grp, "member-a", "LeaderShards=8");
    cfg = config("LeaderNamespace=%s;LeaderShards=9", grp);
    rc = odbc_leader_group_create(&other, cfg, NULL, err, sizeof(err));
    assert_int_equal(rc, ODBC_LEADER_ECONFIG);
    assert_null(other);
    assert_non_null(strstr(err, "has 8 shards"));
    test_free(cfg);
    cfg = config("LeaderNamespace=%s;LeaderShards=8", grp);
    rc = odbc_leader_create(&h, cfg, NULL, err, sizeof(err));
    assert_int_equal(rc, ODBC_LEADER_ECONFIG);
    assert_non_null(strstr(err, "odbc_leader_group_create"));
    test_free(cfg);
    odbc_leader_group_destroy(g);
    /* a single handle leads GRP2/0; a group named GRP2 is refused */
    ns_name(grp, sizeof(grp), "grpforeign");
    snprintf(ns, sizeof(ns), "%s/0", grp);
    h = make_ns(ns, "");
    assert_int_equal(odbc_leader_tick(h, NULL), ODBC_LEADER_LEADER);
    cfg = config("LeaderNamespace=%s;LeaderShards=4", grp);
    rc = odbc_leader_group_create(&other, cfg, NULL, err, sizeof(err));
    assert_int_equal(rc, ODBC_LEADER_ECONFIG);
    assert_non_null(strstr(err, "single handles"));
    test_free(cfg);
    odbc_leader_destroy(h);
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
    /* most of the dead lease runs out before b starts: b has watched it
     * for less than its TTL when the database calls it expired */
    sleep_ms(1500);

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
            /* taken only once the dead leader's lease had expired ... */
            assert_true(lease.db_now_ms >= old_expiry);
            /* ... and b had watched it for one TTL on its own clock
             * (its first sight came in its first tick, after t0) */
            if (mono_ms() - t0 < 2000)
                fail_msg("took a held lease %lld ms after first seeing it, "
                         "before one TTL (2000 ms)",
                         (long long)(mono_ms() - t0));
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

    assert_int_equal(odbc_leader__db_attempt(db, 0, 0, &res), 0);
    assert_true(res.won);
    t1 = res.term;
    assert_int_equal(odbc_leader__db_resign(db, t1), 1);
    assert_int_equal(odbc_leader__db_attempt(db, 0, 0, &res), 0);
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
    assert_int_equal(odbc_leader__db_attempt(other, 0, 0, &res), 0);
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

/* Closes a handle of port_open and frees its config. */
static void port_close(struct odbc_leader__db *db,
                       struct odbc_leader__config *cfg) {
    odbc_leader__db_destroy(db);
    odbc_leader__config_free(cfg);
}

/* A row of group_shards: shard 0's holder and term. */
struct shard0 {
    char leader[128];
    int64_t term;
};

static int shard0_row(void *ctx, void *stmt) {
    struct shard0 *r = ctx;
    int64_t shard = -1;

    if (odbc_leader__db_col_int(stmt, 1, &shard) < 0 || shard != 0)
        return 0;
    if (odbc_leader__db_col_text(stmt, 2, r->leader, sizeof(r->leader)) < 0)
        return ODBC_LEADER_EDB;
    return odbc_leader__db_col_int(stmt, 3, &r->term);
}

/* Runs one group_tick of incarnation 7 with the given lists and reads
 * shard 0 back; fails the test on an error. */
static struct shard0 group_tick0(struct odbc_leader__db *db, int64_t seq,
                                 const char *take, const char *release) {
    struct odbc_leader__group_args a;
    struct shard0 r;

    memset(&a, 0, sizeof(a));
    memset(&r, 0, sizeof(r));
    a.inc = 7;
    a.seq = seq;
    a.shards = 2;
    a.take = take;
    a.release = release;
    assert_true(odbc_leader__db_group_run(db, ODBC_LEADER__OP_GROUP_TICK, &a,
                                          NULL, NULL) >= 0);
    assert_true(odbc_leader__db_group_run(db, ODBC_LEADER__OP_GROUP_SHARDS, &a,
                                          shard0_row, &r) >= 0);
    return r;
}

/*
 * A group's release names the term it releases: a late copy of an old
 * tick (left running on a lost connection) that releases shard 0 in an
 * earlier term leaves the later term the same incarnation took since
 * held (generic.sql, whose lists carry no terms, tells by renew_seq: the
 * row was taken by a later tick than the copy's); the release naming the
 * current term empties the row. And a late
 * copy of an old tick that renews does not lower the row's renew_seq,
 * which would hide the later renewal from a member watching the holder.
 */
static void group_late_ticks_are_fenced(void **state) {
    struct odbc_leader__config cfg;
    struct odbc_leader__db *db;
    struct odbc_leader__group_args a;
    struct shard0 r;
    struct raw raw;
    char grp[64], rel[96], sql[256];
    int64_t t1, seq = 0;

    (void)state;
    ns_name(grp, sizeof(grp), "grpfence");
    raw_open(&raw);
    db = port_open(&cfg, grp, "member-a", "LeaderShards=2");
    memset(&a, 0, sizeof(a));
    a.shards = 2;
    assert_true(odbc_leader__db_group_run(db, ODBC_LEADER__OP_GROUP_INIT, &a,
                                          NULL, NULL) >= 0);
    r = group_tick0(db, 1, "[0]", "[]");
    assert_string_equal(r.leader, "member-a");
    t1 = r.term;
    snprintf(rel, sizeof(rel), "[[0,%lld]]", (long long)t1);
    r = group_tick0(db, 2, "[]", rel);
    assert_string_equal(r.leader, ""); /* released in t1 */
    r = group_tick0(db, 3, "[0]", "[]");
    assert_string_equal(r.leader, "member-a");
    assert_int_equal(r.term, t1 + 1);
    r = group_tick0(db, 2, "[]", rel); /* the late copy of tick 2: t1 */
    assert_string_equal(r.leader, "member-a");
    assert_int_equal(r.term, t1 + 1);
    r = group_tick0(db, 5, "[]", "[]"); /* renews: renew_seq 5 */
    snprintf(sql, sizeof(sql),
             "SELECT renew_seq FROM odbc_leader_lease WHERE grp = '%s' "
             "AND shard = 0",
             grp);
    assert_true(raw_exec(&raw, sql, &seq));
    assert_int_equal(seq, 5);
    r = group_tick0(db, 2, "[]", "[]"); /* a late tick numbered 2 renews */
    assert_string_equal(r.leader, "member-a");
    assert_true(raw_exec(&raw, sql, &seq));
    assert_int_equal(seq, 5);
    snprintf(rel, sizeof(rel), "[[0,%lld]]", (long long)(t1 + 1));
    r = group_tick0(db, 6, "[]", rel);
    assert_string_equal(r.leader, "");
    assert_int_equal(r.term, t1 + 1);
    raw_close(&raw);
    port_close(db, &cfg);
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
    int64_t t1, exp;

    (void)state;
    ns_name(ns, sizeof(ns), "expired");
    db = port_open(&cfg, ns, "cand-x",
                   "LeaderTTL=400;LeaderRenewInterval=100;"
                   "LeaderSafetyMargin=100");
    assert_int_equal(odbc_leader__db_attempt(db, 0, 0, &res), 0);
    assert_true(res.won);
    t1 = res.term;
    assert_int_equal(odbc_leader__db_attempt(db, 0, 0, &res), 0);
    assert_false(res.won); /* our own lease is unexpired */
    assert_string_equal(res.leader_id, "cand-x");
    assert_int_equal(res.term, t1);
    assert_int_equal(odbc_leader__db_renew(db, t1, &res), 0);
    assert_true(res.found);
    assert_true(res.expires_at_ms > res.now_ms);
    exp = res.expires_at_ms;
    sleep_ms(600); /* past the TTL, nobody takes over */
    assert_int_equal(odbc_leader__db_renew(db, t1, &res), 0);
    assert_false(res.found);
    /* expired, but held: taken only as the row the caller watched */
    assert_int_equal(odbc_leader__db_attempt(db, 0, 0, &res), 0);
    assert_false(res.won);
    assert_int_equal(odbc_leader__db_attempt(db, t1, exp, &res), 0);
    assert_true(res.won);
    assert_int_equal(res.term, t1 + 1);
    odbc_leader__db_destroy(db);
    odbc_leader__config_free(&cfg);
}

/*
 * The attempt's compare-and-set (docs/protocol.md, "Takeover"): a lease
 * someone holds is taken, once it expired in database time, only when the
 * caller names exactly that row (term and expires_at_ms) as watched; a
 * row renewed since, or no row named, leaves it. A released lease
 * (resigned) needs no watch, and a reservation for another candidate
 * holds until it runs out, then needs none either.
 */
static void held_lease_is_taken_only_as_watched(void **state) {
    static const char *const t = "LeaderTTL=600;LeaderRenewInterval=200;"
                                 "LeaderSafetyMargin=100";
    char ns[64];
    struct odbc_leader__config ca, cb, cc;
    struct odbc_leader__db *a, *b, *c;
    struct odbc_leader__result res, old, cur;
    int64_t t1;

    (void)state;
    ns_name(ns, sizeof(ns), "watched");
    a = port_open(&ca, ns, "cand-a", t);
    b = port_open(&cb, ns, "cand-b", t);
    c = port_open(&cc, ns, "cand-c", t);
    assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
    assert_true(res.won);
    t1 = res.term;
    assert_int_equal(odbc_leader__db_read_lease(b, &old), 0);
    sleep_ms(20);
    assert_int_equal(odbc_leader__db_renew(a, t1, &cur), 0);
    assert_true(cur.found);
    assert_true(cur.expires_at_ms > old.expires_at_ms); /* a renewal */
    sleep_ms(700); /* a's lease expires in database time */
    assert_int_equal(odbc_leader__db_read_lease(b, &res), 0);
    assert_true(res.expires_at_ms <= res.now_ms);
    assert_string_equal(res.leader_id, "cand-a");
    /* no watch, a watch of the row before the renewal, a wrong term: no */
    assert_int_equal(odbc_leader__db_attempt(b, 0, 0, &res), 0);
    assert_false(res.won);
    assert_int_equal(
        odbc_leader__db_attempt(b, old.term, old.expires_at_ms, &res), 0);
    assert_false(res.won);
    assert_int_equal(
        odbc_leader__db_attempt(b, t1 + 1, cur.expires_at_ms, &res), 0);
    assert_false(res.won);
    assert_string_equal(res.leader_id, "cand-a");
    assert_int_equal(res.term, t1);
    /* the row as it is: taken, term + 1 */
    assert_int_equal(odbc_leader__db_attempt(b, t1, cur.expires_at_ms, &res),
                     0);
    assert_true(res.won);
    assert_string_equal(res.leader_id, "cand-b");
    assert_int_equal(res.term, t1 + 1);
    /* a released lease: c takes it at once, with no watch */
    assert_int_equal(odbc_leader__db_resign(b, t1 + 1), 1);
    assert_int_equal(odbc_leader__db_attempt(c, 0, 0, &res), 0);
    assert_true(res.won);
    assert_int_equal(res.term, t1 + 2);
    /* reserved for a: c's resignation hands over to a; b cannot take it
     * (not even naming the row), a can */
    assert_int_equal(odbc_leader__db_request_resign(b, "cand-a"), 1);
    assert_int_equal(odbc_leader__db_renew(c, t1 + 2, &res), 0);
    assert_true(res.found && res.resign_requested);
    assert_int_equal(odbc_leader__db_resign(c, t1 + 2), 1);
    assert_int_equal(odbc_leader__db_read_lease(b, &cur), 0);
    assert_int_equal(
        odbc_leader__db_attempt(b, cur.term, cur.expires_at_ms, &res), 0);
    assert_false(res.won);
    assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
    assert_true(res.won);
    assert_int_equal(res.term, t1 + 3);
    /* ... and once such a reservation ran out, anyone takes it */
    assert_int_equal(odbc_leader__db_request_resign(b, "cand-c"), 1);
    assert_int_equal(odbc_leader__db_renew(a, t1 + 3, &res), 0);
    assert_int_equal(odbc_leader__db_resign(a, t1 + 3), 1);
    sleep_ms(700);
    assert_int_equal(odbc_leader__db_attempt(b, 0, 0, &res), 0);
    assert_true(res.won);
    assert_int_equal(res.term, t1 + 4);
    port_close(a, &ca);
    port_close(b, &cb);
    port_close(c, &cc);
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

    r->rc = odbc_leader__db_attempt(r->db, 0, 0, &r->res);
    atomic_store(&r->done, 1);
    return NULL;
}

#ifdef ODBC_LEADER_TEST_HOOKS /* the counts of odbc_leader__db_stats */
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
#endif

/* The schema version of the dialect under test: 6 (epochs, groups, then
 * the election log) on PostgreSQL and MariaDB, 4 (groups and the election
 * log, no epochs) on SQLite and with the generic dialect. */
static int64_t current_schema_version(void) {
    const char *extra = getenv("OL_LEADER_EXTRA");

    if (extra != NULL && strstr(extra, "generic"))
        return 4;
    return is_kind("sqlite") ? 4 : 6;
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
#ifdef ODBC_LEADER_TEST_HOOKS
    struct odbc_leader__db_stats st;
#endif
    struct odbc_leader__log log = {NULL, NULL};
    struct raw blocker, probe;
    struct racer r;
    pthread_t t;
    char *s;

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
    assert_true(await_waiter(&probe, probe_sql, &r.done) > 0);
    assert_true(
        SQL_SUCCEEDED(SQLEndTran(SQL_HANDLE_DBC, blocker.dbc, SQL_COMMIT)));
    pthread_join(t, NULL);

    assert_int_equal(r.rc, 0);
    assert_false(r.res.won);
    assert_string_equal(r.res.leader_id, "blocker");
#ifdef ODBC_LEADER_TEST_HOOKS
    /* the counts come from a test hook; the outcome above holds anyway */
    odbc_leader__db_stats(db, &st);
    if (first_row_waits(db)) {
        assert_int_equal(st.unique_violations, 0);
        assert_int_equal(st.retries, 0);
    } else {
        assert_int_equal(st.unique_violations, 1);
        assert_int_equal(st.retries, 1);
    }
#endif

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
 * A claim is the first call after a server restart, on a connection the
 * restart killed. The handle (and a group member) still leads within its
 * trust window, so the claim tries once more on a new connection: the
 * first attempt failed before the server could run it, and the fire is
 * claimed (1), once (0 the next time), in the term that leads.
 */
static void claim_after_server_restart_is_tried_again(void **state) {
    const char *cmd = getenv("OL_RESTART_CMD");
    char ns[64], grp[64];
    struct odbc_leader_fire f;
    odbc_leader_t *a;
    odbc_leader_group_t *g;

    (void)state;
    if (cmd == NULL)
        skip(); /* SQLite has no server to restart */
    ns_name(ns, sizeof(ns), "claimrst");
    ns_name(grp, sizeof(grp), "claimrstg");
    a = make_ns(ns, "LeaderTTL=30000;LeaderRenewInterval=500");
    g = make_member(grp, "g1",
                    "LeaderShards=2;LeaderTTL=30000;LeaderRenewInterval=500");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_true(tick_members(&g, 1, 50, 10000, all_led));
    assert_int_equal(odbc_leader_claim(a, "before", 0), 1);
    assert_int_equal(odbc_leader_group_claim(g, "before", 0), 1);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(odbc_leader_claim(a, "after", 0), 1);
    assert_int_equal(odbc_leader_claim(a, "after", 0), 0);
    assert_int_equal(odbc_leader_read_fire(a, "after", 0, &f), 1);
    assert_int_equal(f.term, odbc_leader_term(a));
    assert_string_equal(f.claimed_by, odbc_leader_id(a));
    assert_int_equal(odbc_leader_group_claim(g, "after", 0), 1);
    assert_int_equal(odbc_leader_group_claim(g, "after", 0), 0);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    odbc_leader_group_destroy(g);
    odbc_leader_destroy(a);
}

/* Log callback of claim_answer_lost_is_not_claimed_twice: counts the
 * warnings that a claim's outcome is unknown (ctx: an int). */
static void count_unknown_claims(void *ctx, int level, const char *msg) {
    if (level == LOG_WARNING && strstr(msg, "outcome is unknown") != NULL)
        ++*(int *)ctx;
    if (getenv("OL_DEBUG") != NULL)
        debug_log(NULL, level, msg);
}

/* Tells the fault proxy to lose the answer to the next request it
 * forwards (fault-proxy.c, SIGWINCH). */
static void lose_next_answer(pid_t proxy) {
    assert_int_equal(kill(proxy, SIGWINCH), 0);
}

/*
 * A claim whose answer is lost. The handle reaches the database through
 * the fault proxy (OL_LOSE_CONNECT, its pid in OL_LOSE_PID), which, when
 * told, forwards a claim's request and drops the server's answer with the
 * connection: the server ran the claim, the handle never learns how it
 * went. The library tries once more on a new connection; that second try
 * finds the fire claimed in the handle's own term, and the library cannot
 * tell whether its first try or an earlier claim of the same process made
 * that row. So a claim of a fire this process already claimed (and ran)
 * must not answer 1, which would run it twice: it returns the first try's
 * error and warns. A new fire (the claim is one statement, committed by
 * the server before the answer was lost) is left claimed in the leading
 * term and unrun the same way: the price of never running a fire twice.
 * A group member's claims (odbc_leader_group_claim) must do the same.
 */
static void claim_answer_lost_is_not_claimed_twice(void **state) {
    const char *conn = getenv("OL_LOSE_CONNECT"), *pid = getenv("OL_LOSE_PID");
    const char *extra = getenv("OL_LEADER_EXTRA");
    char ns[64], cfg[1024], err[512] = "";
    struct odbc_leader_callbacks cb = {0};
    struct odbc_leader_fire f;
    odbc_leader_t *a = NULL;
    odbc_leader_group_t *g = NULL;
    pid_t proxy;
    int warned = 0, rc;

    (void)state;
    if (conn == NULL || pid == NULL)
        skip(); /* no server (SQLite), so no proxy in front of one */
    proxy = (pid_t)atol(pid);
    ns_name(ns, sizeof(ns), "claimlost");
    snprintf(cfg, sizeof(cfg),
             "%s;%s;LeaderNamespace=%s;LeaderTTL=30000;LeaderRenewInterval=500",
             conn, extra != NULL ? extra : "", ns);
    cb.struct_size = sizeof(cb);
    cb.log = count_unknown_claims;
    cb.ctx = &warned;
    rc = odbc_leader_create(&a, cfg, &cb, err, sizeof(err));
    if (rc != 0)
        fail_msg("odbc_leader_create: %s (%s)", err, odbc_leader_strerror(rc));
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_claim(a, "again", 0), 1);

    /* The same fire again, the answer lost: never 1. */
    lose_next_answer(proxy);
    rc = odbc_leader_claim(a, "again", 0);
    assert_true(rc == ODBC_LEADER_ECONNLOST || rc == ODBC_LEADER_EUNKNOWN);
    assert_int_equal(warned, 1);
    assert_int_equal(odbc_leader_claim(a, "again", 0), 0);

    /* A new fire, the answer lost. */
    lose_next_answer(proxy);
    rc = odbc_leader_claim(a, "new", 0);
    assert_true(rc == ODBC_LEADER_ECONNLOST || rc == ODBC_LEADER_EUNKNOWN);
    assert_int_equal(warned, 2);
    assert_int_equal(odbc_leader_claim(a, "new", 0), 0);
    assert_int_equal(odbc_leader_read_fire(a, "new", 0, &f), 1);
    assert_int_equal(f.term, odbc_leader_term(a));
    assert_string_equal(f.claimed_by, odbc_leader_id(a));
    assert_int_equal(f.finished_at_ms, 0);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    odbc_leader_destroy(a);

    /* The same for a group member leading both shards of its group. */
    ns_name(ns, sizeof(ns), "claimlostg");
    snprintf(cfg, sizeof(cfg),
             "%s;%s;LeaderNamespace=%s;LeaderId=g1;LeaderShards=2;"
             "LeaderTTL=30000;LeaderRenewInterval=500",
             conn, extra != NULL ? extra : "", ns);
    warned = 0;
    rc = odbc_leader_group_create(&g, cfg, &cb, err, sizeof(err));
    if (rc != 0)
        fail_msg("odbc_leader_group_create: %s (%s)", err,
                 odbc_leader_strerror(rc));
    assert_true(tick_members(&g, 1, 50, 10000, all_led));
    assert_int_equal(odbc_leader_group_claim(g, "again", 0), 1);
    lose_next_answer(proxy);
    rc = odbc_leader_group_claim(g, "again", 0);
    assert_true(rc == ODBC_LEADER_ECONNLOST || rc == ODBC_LEADER_EUNKNOWN);
    assert_int_equal(warned, 1);
    /* The member closed its (healthy) connection on that error and opens
     * a new one on its next call: this claim does, so the next lost answer
     * is a claim's, not the new connection's first query. */
    assert_int_equal(odbc_leader_group_claim(g, "again", 0), 0);
    lose_next_answer(proxy);
    rc = odbc_leader_group_claim(g, "new", 0);
    assert_true(rc == ODBC_LEADER_ECONNLOST || rc == ODBC_LEADER_EUNKNOWN);
    assert_int_equal(warned, 2);
    assert_int_equal(odbc_leader_group_claim(g, "again", 0), 0);
    assert_int_equal(odbc_leader_group_claim(g, "new", 0), 0);
    odbc_leader_group_destroy(g);
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

/* ---- the fire ledger (issue 13) ------------------------------------------ */

/* A claim inserts a fire only for the exact, unexpired term of the caller;
 * a second claim of the fire, in any term, answers 0; finish records the
 * outcome once and only for the claimant; the retention bounds claims. */
static void claims_are_fenced_by_term(void **state) {
    char ns[64];
    struct odbc_leader__config ca, cb;
    struct odbc_leader__db *a, *b;
    struct odbc_leader__result res, seen;
    struct odbc_leader_fire f;
    int64_t t1, t2, now, f1, f2, f3, f4;

    (void)state;
    ns_name(ns, sizeof(ns), "claim");
    a = port_open(&ca, ns, "cand-a", "LeaderTTL=1000;LeaderSafetyMargin=200");
    b = port_open(&cb, ns, "cand-b", "LeaderTTL=1000;LeaderSafetyMargin=200");
    assert_true(odbc_leader__db_has_ledger(a));

    assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
    assert_true(res.won);
    t1 = res.term;
    now = res.now_ms;
    assert_int_equal(odbc_leader__db_attempt(b, 0, 0, &seen), 0);
    assert_false(seen.won); /* b watches a's lease from here */
    f1 = now - 1000;        /* nominal fire times near the database clock */
    f2 = now;
    f3 = now + 1000;
    f4 = now + 2000;
    assert_int_equal(odbc_leader__db_claim(a, t1, "job", f1), 1);
    assert_int_equal(odbc_leader__db_claim(a, t1, "job", f1), 0);
    assert_int_equal(odbc_leader__db_claim(a, t1, "other-job", f1), 1);
    /* b does not lead: neither with a's term nor with a made-up one */
    assert_int_equal(odbc_leader__db_claim(b, t1, "job", f2),
                     ODBC_LEADER_ENOTLEADER);
    assert_int_equal(odbc_leader__db_claim(b, t1 + 1, "job", f2),
                     ODBC_LEADER_ENOTLEADER);
    /* a's own stale term number is refused too */
    assert_int_equal(odbc_leader__db_claim(a, t1 - 1, "job", f2),
                     ODBC_LEADER_ENOTLEADER);

    /* the lease expires without renewal: a's term no longer claims */
    sleep_ms(1100);
    assert_int_equal(odbc_leader__db_claim(a, t1, "job", f2),
                     ODBC_LEADER_ENOTLEADER);
    assert_int_equal(
        odbc_leader__db_attempt(b, seen.term, seen.expires_at_ms, &res), 0);
    assert_true(res.won);
    t2 = res.term;
    assert_true(t2 > t1);
    assert_int_equal(odbc_leader__db_claim(a, t1, "job", f2),
                     ODBC_LEADER_ENOTLEADER);
    assert_int_equal(odbc_leader__db_claim(b, t2, "job", f1), 0);
    assert_int_equal(odbc_leader__db_claim(b, t2, "job", f2), 1);

    /* finish: the claimant only, once, also after its term ended */
    assert_int_equal(odbc_leader__db_finish(b, "job", f1, 0),
                     ODBC_LEADER_ENOFIRE);
    assert_int_equal(odbc_leader__db_finish(a, "job", f1, 3), 0);
    assert_int_equal(odbc_leader__db_finish(a, "job", f1, 0), 0);
    assert_int_equal(odbc_leader__db_finish(a, "job", f3, 0),
                     ODBC_LEADER_ENOFIRE);
    assert_int_equal(odbc_leader__db_fire(b, "job", f1, &f), 1);
    assert_string_equal(f.job, "job");
    assert_int_equal(f.fire_ms, f1);
    assert_int_equal(f.term, t1);
    assert_string_equal(f.claimed_by, "cand-a");
    assert_true(f.claimed_at_ms >= now);
    assert_true(f.finished_at_ms >= f.claimed_at_ms);
    assert_int_equal(f.status, 3); /* the first finish counts */
    assert_int_equal(odbc_leader__db_fire(b, "job", f2, &f), 1);
    assert_int_equal(f.term, t2);
    assert_int_equal(f.finished_at_ms, 0);
    assert_int_equal(odbc_leader__db_fire(b, "job", f4, &f), 0);
    assert_int_equal(odbc_leader__db_fires(b, NULL, NULL, NULL), 3);
    assert_int_equal(odbc_leader__db_fires(b, "job", NULL, NULL), 2);
    assert_int_equal(odbc_leader__db_fires(b, "nothing", NULL, NULL), 0);

    /* a fire older than the retention (7 days) is refused; fire 0, a
     * one-off key, never is; a recent one is claimed */
    assert_int_equal(odbc_leader__db_claim(b, t2, "old", now - 8 * 86400000LL),
                     ODBC_LEADER_EFIREAGE);
    assert_int_equal(odbc_leader__db_claim(b, t2, "once", 0), 1);
    assert_int_equal(odbc_leader__db_claim(b, t2, "once", 0), 0);
    assert_int_equal(odbc_leader__db_claim(b, t2, "recent", now - 86400000LL),
                     1);
    port_close(a, &ca);
    port_close(b, &cb);
}

/* Retention deletes finished fires older than LeaderFireRetention, keeps
 * unfinished ones and one-off keys, and claims of such old fires are
 * refused, so a deleted fire is never claimed again. */
static void retention_deletes_old_finished_fires(void **state) {
    char ns[64];
    struct odbc_leader__config c;
    struct odbc_leader__db *a;
    struct odbc_leader__result res;
    int64_t t, now, f1, f2;

    (void)state;
    ns_name(ns, sizeof(ns), "gc");
    a = port_open(&c, ns, "cand-a", "LeaderFireRetention=3000");
    assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
    assert_true(res.won);
    t = res.term;
    now = res.now_ms;
    f1 = now - 1000; /* room for slow runs (valgrind) */
    f2 = now - 900;
    assert_int_equal(odbc_leader__db_claim(a, t, "j", f1), 1);
    assert_int_equal(odbc_leader__db_claim(a, t, "j", f2), 1);
    assert_int_equal(odbc_leader__db_claim(a, t, "j", 0), 1);
    assert_int_equal(odbc_leader__db_finish(a, "j", f1, 0), 0);
    assert_int_equal(odbc_leader__db_finish(a, "j", 0, 0), 0);
    assert_int_equal(odbc_leader__db_fire_gc(a), 0); /* not old yet */
    sleep_ms(3600);
    assert_int_equal(odbc_leader__db_fire_gc(a), 1); /* f1 only */
    assert_int_equal(odbc_leader__db_fires(a, "j", NULL, NULL), 2);
    assert_int_equal(odbc_leader__db_claim(a, t, "j", f1),
                     ODBC_LEADER_EFIREAGE);
    port_close(a, &c);
}

/* The public calls: claim checks is_leader locally first; the plugin-level
 * answers match the database's. */
static void public_claim_api(void **state) {
    char ns[64];
    struct odbc_leader_fire f;
    struct odbc_leader_lease lease;
    odbc_leader_t *a, *b;
    int64_t f5, f6;

    (void)state;
    ns_name(ns, sizeof(ns), "pubclaim");
    a = make_ns(ns, "");
    b = make_ns(ns, "");
    assert_int_equal(odbc_leader_claim(a, "j", 5), ODBC_LEADER_ENOTLEADER);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_read_lease(a, &lease), 0);
    f5 = lease.db_now_ms;
    f6 = f5 + 1;
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
    assert_int_equal(odbc_leader_claim(a, "j", f5), 1);
    assert_int_equal(odbc_leader_claim(a, "j", f5), 0);
    assert_int_equal(odbc_leader_claim(b, "j", f6), ODBC_LEADER_ENOTLEADER);
    assert_int_equal(odbc_leader_claim(a, "bad job", f6), ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_claim(a, "", f6), ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_claim(a, "j", -1), ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_finish(a, "j", f5, 0), 0);
    assert_int_equal(odbc_leader_finish(b, "j", f5, 0), ODBC_LEADER_ENOFIRE);
    assert_int_equal(odbc_leader_read_fire(b, "j", f5, &f), 1);
    assert_string_equal(f.claimed_by, odbc_leader_id(a));
    assert_int_equal(f.term, odbc_leader_term(a));
    assert_int_equal(odbc_leader_list_fires(b, "j", NULL, NULL), 1);
    assert_int_equal(odbc_leader_list_fires(b, "bad job", NULL, NULL),
                     ODBC_LEADER_EINVAL);
    odbc_leader_destroy(a);
    odbc_leader_destroy(b);
}

/* A deleted lease row, or a new table prefix, starts the namespace at a
 * term above every term it had: the first row's term is the database
 * clock in ms. */
static void terms_keep_growing_across_a_deleted_lease_row(void **state) {
    char ns[64], sql[256];
    struct odbc_leader__config c;
    struct odbc_leader__db *a;
    struct odbc_leader__result res;
    struct raw r;
    int64_t t1, t2;
    int i;

    (void)state;
    ns_name(ns, sizeof(ns), "regrow");
    a = port_open(&c, ns, "cand-a", "");
    assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
    assert_true(res.won);
    t1 = res.term;
    /* seeded from the clock: the database's ms when the row was made */
    if (!(t1 <= res.now_ms && t1 > res.now_ms - 60000))
        fail_msg("term %lld, database clock %lld", (long long)t1,
                 (long long)res.now_ms);
    /* each election moves it on by one */
    for (i = 1; i <= 3; i++) {
        assert_int_equal(odbc_leader__db_resign(a, res.term), 1);
        assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
        assert_true(res.won);
        assert_int_equal(res.term, t1 + i);
    }
    assert_int_equal(odbc_leader__db_resign(a, res.term), 1);
    /* an admin deletes the row */
    raw_open(&r);
    snprintf(sql, sizeof(sql),
             "DELETE FROM odbc_leader_lease WHERE namespace = '%s'", ns);
    assert_true(raw_exec(&r, sql, NULL));
    raw_close(&r);
    sleep_ms(20);
    assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
    assert_true(res.won);
    t2 = res.term;
    if (!(t2 > t1 + 3))
        fail_msg("term after the deleted row %lld, before %lld", (long long)t2,
                 (long long)(t1 + 3));
    port_close(a, &c);
}

/* ---- the election log ---------------------------------------------------- */

#define ELOG_MAX 16

/* A namespace's election log as odbc_leader_list_elections reads it. */
struct elog {
    struct odbc_leader_election e[ELOG_MAX];
    int n; /* rows seen, also beyond ELOG_MAX */
};

static void elog_row(void *ctx, const struct odbc_leader_election *e) {
    struct elog *l = ctx;

    if (l->n < ELOG_MAX)
        l->e[l->n] = *e;
    l->n++;
}

/* Reads h's namespace's election log into *l and checks what holds for
 * every log: the count returned is the rows seen; terms ascend; a term
 * starts no later than the next one and has ended, at or after its start
 * and no later than that start; an open term has ended_how ""; handed_to
 * only on a handover. Fails the test otherwise. Returns the row count. */
static int read_elog(odbc_leader_t *h, struct elog *l) {
    int rc;

    memset(l, 0, sizeof(*l));
    rc = odbc_leader_list_elections(h, elog_row, l);
    if (rc < 0)
        fail_msg("odbc_leader_list_elections: %s", odbc_leader_strerror(rc));
    assert_int_equal(rc, l->n);
    assert_true(l->n <= ELOG_MAX);
    for (int i = 0; i < l->n; i++) {
        const struct odbc_leader_election *e = &l->e[i], *next = e + 1;

        assert_true(e->started_at_ms > 0 && e->started_at_ms <= e->db_now_ms);
        assert_true(e->ended_at_ms == 0 || e->ended_at_ms >= e->started_at_ms);
        assert_int_equal(e->ended_at_ms == 0, e->ended_how[0] == '\0');
        assert_true(strcmp(e->ended_how, "handover") == 0 ||
                    e->handed_to[0] == '\0');
        if (i + 1 == l->n)
            continue;
        if (!(e->term < next->term && e->started_at_ms <= next->started_at_ms &&
              e->ended_at_ms != 0 && e->ended_at_ms <= next->started_at_ms))
            fail_msg("term %lld (%lld-%lld) before term %lld (from %lld)",
                     (long long)e->term, (long long)e->started_at_ms,
                     (long long)e->ended_at_ms, (long long)next->term,
                     (long long)next->started_at_ms);
    }
    return l->n;
}

/* Row i of l is term, won by leader, ended how ("" while open) in favour
 * of to ("" but for a handover). */
static void expect_term(const struct elog *l, int i, int64_t term,
                        const char *leader, const char *how, const char *to) {
    const struct odbc_leader_election *e = &l->e[i];

    assert_true(i < l->n);
    if (e->term != term || strcmp(e->leader_id, leader) != 0 ||
        strcmp(e->ended_how, how) != 0 || strcmp(e->handed_to, to) != 0)
        fail_msg("election log row %d: term %lld of '%s' ended '%s' to '%s'; "
                 "expected term %lld of '%s' ended '%s' to '%s'",
                 i, (long long)e->term, e->leader_id, e->ended_how,
                 e->handed_to, (long long)term, leader, how, to);
}

/*
 * The election log follows the terms: one row per won term, in order, with
 * its winner; renewals and lost attempts write none; the current term is
 * open; each earlier one ended as it did: a handover (with its target), a
 * requested resignation, the leader's own resignation, its shutdown.
 */
static void election_log_follows_terms_and_their_ends(void **state) {
    static const char *const fast = "LeaderTTL=30000;LeaderRenewInterval=100;"
                                    "LeaderFollowerWait=0";
    char ns[64], a_id[129];
    odbc_leader_t *a, *b, *c;
    struct elog l;
    int64_t t;

    (void)state;
    ns_name(ns, sizeof(ns), "elog");
    a = make_ns(ns, fast);
    b = make_ns(ns, fast);
    c = make_ns(ns, fast);
    snprintf(a_id, sizeof(a_id), "%s", odbc_leader_id(a));
    assert_int_equal(read_elog(c, &l), 0);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    t = odbc_leader_term(a);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
        assert_int_equal(odbc_leader_tick(c, NULL), ODBC_LEADER_FOLLOWER);
        assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    }
    assert_int_equal(read_elog(b, &l), 1);
    expect_term(&l, 0, t, a_id, "", "");
    assert_int_equal(l.e[0].ended_at_ms, 0);
    /* c asks a to hand over to b */
    assert_int_equal(odbc_leader_request_resign(c, odbc_leader_id(b)), 0);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_FOLLOWER);
    assert_int_equal(odbc_leader_tick(c, NULL), ODBC_LEADER_FOLLOWER);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_term(b), t + 1);
    /* a asks b to resign; c takes over */
    assert_int_equal(odbc_leader_request_resign(a, NULL), 0);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
    assert_int_equal(odbc_leader_tick(c, NULL), ODBC_LEADER_LEADER);
    /* c resigns, a takes over (once the renew interval a holds off for
     * after its own resignation has passed) and shuts down, b takes over */
    assert_int_equal(odbc_leader_resign(c), 0);
    sleep_ms(120);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    odbc_leader_destroy(a);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_term(b), t + 4);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(odbc_leader_tick(c, NULL), ODBC_LEADER_FOLLOWER);
        assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_LEADER);
    }
    assert_int_equal(read_elog(c, &l), 5);
    expect_term(&l, 0, t, a_id, "handover", odbc_leader_id(b));
    expect_term(&l, 1, t + 1, odbc_leader_id(b), "requested", "");
    expect_term(&l, 2, t + 2, odbc_leader_id(c), "resigned", "");
    expect_term(&l, 3, t + 3, a_id, "resigned", "");
    expect_term(&l, 4, t + 4, odbc_leader_id(b), "", "");
    assert_int_equal(l.e[4].ended_at_ms, 0);
    odbc_leader_destroy(b);
    odbc_leader_destroy(c);
}

/* A leader that stops ticking (killed): once its lease ran out, the
 * candidate that watched it takes over, and the log ends the dead term as
 * expired at the expiry of the lease the taker saw. */
static void election_log_ends_an_expired_term(void **state) {
    static const char *const fast = "LeaderTTL=1000;LeaderSafetyMargin=200;"
                                    "LeaderFollowerWait=0";
    char ns[64];
    struct odbc_leader_lease lease;
    odbc_leader_t *a, *b;
    struct elog l;
    int64_t t0, term, expiry;
    int rc = ODBC_LEADER_FOLLOWER;

    (void)state;
    ns_name(ns, sizeof(ns), "elogexp");
    a = make_ns(ns, fast);
    b = make_ns(ns, fast);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
    term = odbc_leader_term(a);
    assert_int_equal(odbc_leader_read_lease(b, &lease), 0);
    assert_int_equal(lease.term, term);
    expiry = lease.expires_at_ms;
    /* a is never ticked again */
    sleep_ms(1100);
    for (t0 = mono_ms(); rc != ODBC_LEADER_LEADER && mono_ms() - t0 < 10000;) {
        rc = odbc_leader_tick(b, NULL);
        if (rc != ODBC_LEADER_LEADER)
            sleep_ms(50);
    }
    assert_int_equal(rc, ODBC_LEADER_LEADER);
    assert_int_equal(odbc_leader_term(b), term + 1);
    assert_int_equal(read_elog(b, &l), 2);
    expect_term(&l, 0, term, odbc_leader_id(a), "expired", "");
    assert_true(l.e[0].ended_at_ms > l.e[0].started_at_ms);
    if (l.e[0].ended_at_ms != expiry)
        fail_msg("the expired term ended at %lld, its lease expired at %lld",
                 (long long)l.e[0].ended_at_ms, (long long)expiry);
    expect_term(&l, 1, term + 1, odbc_leader_id(b), "", "");
    odbc_leader_destroy(a);
    odbc_leader_destroy(b);
}

/* LeaderElectionRetention: the leader deletes the terms that ended longer
 * ago than that (here its gc runs every 100 ms: a tenth of
 * LeaderFireRetention); the current term stays, however old. */
static void election_log_retention_deletes_old_terms(void **state) {
    char ns[64];
    odbc_leader_t *a;
    struct elog l;
    int64_t t;

    (void)state;
    ns_name(ns, sizeof(ns), "eloggc");
    a = make_ns(ns, "LeaderTTL=3000;LeaderRenewInterval=100;"
                    "LeaderFollowerWait=0;LeaderFireRetention=1000;"
                    "LeaderElectionRetention=1000");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    t = odbc_leader_term(a);
    assert_int_equal(odbc_leader_resign(a), 0);
    /* past the gc's interval: the next tick's gc keeps the term that
     * ended just now */
    sleep_ms(150);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(read_elog(a, &l), 2); /* ended too recently */
    expect_term(&l, 0, t, odbc_leader_id(a), "resigned", "");
    expect_term(&l, 1, t + 1, odbc_leader_id(a), "", "");
    sleep_ms(1100);
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(read_elog(a, &l), 1);
    expect_term(&l, 0, t + 1, odbc_leader_id(a), "", "");
    odbc_leader_destroy(a);
}

/* ---- upgrades from every earlier schema version ---- */

/* The dialects, as indexes of old_schema's since[]. */
enum old_dialect { OLD_SQLITE, OLD_PG, OLD_MARIADB, OLD_GENERIC };

static enum old_dialect dialect_under_test(void) {
    const char *extra = getenv("OL_LEADER_EXTRA");

    if (extra != NULL && strstr(extra, "generic"))
        return OLD_GENERIC;
    if (is_kind("postgresql"))
        return OLD_PG;
    return is_kind("mariadb") ? OLD_MARIADB : OLD_SQLITE;
}

/*
 * The tables of every earlier schema version, from the history of
 * sql/{sqlite,postgresql,mariadb,generic}.sql (each version's ddl and
 * upgrade, as its last release wrote them): a statement is part of the
 * tables of a dialect from the version since[dialect] on (0: never).
 * {prefix}, {version} (the version built), {ns} and {epoch} (the
 * database's epoch, as the dialect defines it) are replaced; {opts} is
 * the MariaDB dialect's table options. The version row and a vacant
 * lease row at term 41 come right after the version-1 tables.
 */
static const struct {
    int since[4];
    const char *sql;
} old_schema[] = {
    {{1, 1, 1, 1},
     "CREATE TABLE {prefix}schema (version INTEGER NOT NULL){opts}"},
    {{1, 1, 1, 1},
     "CREATE TABLE {prefix}lease (namespace VARCHAR(128) NOT NULL PRIMARY KEY, "
     "leader_id VARCHAR(128) NULL, term BIGINT NOT NULL, elected_at_ms BIGINT, "
     "renewed_at_ms BIGINT, expires_at_ms BIGINT NOT NULL, resign_requested "
     "INTEGER NOT NULL DEFAULT 0, handoff_to VARCHAR(128) NULL){opts}"},
    {{1, 1, 1, 1},
     "CREATE TABLE {prefix}candidate (namespace VARCHAR(128) NOT NULL, "
     "candidate_id VARCHAR(128) NOT NULL, registered_at_ms BIGINT NOT NULL, "
     "heartbeat_at_ms BIGINT NOT NULL, expires_at_ms BIGINT NOT NULL, PRIMARY "
     "KEY (namespace, candidate_id)){opts}"},
    {{1, 1, 1, 1}, "INSERT INTO {prefix}schema (version) VALUES ({version})"},
    {{1, 1, 1, 1},
     "INSERT INTO {prefix}lease (namespace, leader_id, term, elected_at_ms, "
     "renewed_at_ms, expires_at_ms, resign_requested, handoff_to) VALUES "
     "('{ns}', NULL, 41, 1, 1, 1, 0, NULL)"},
    /* 2: the fire ledger */
    {{2, 2, 2, 2},
     "CREATE TABLE {prefix}fire (namespace VARCHAR(128) NOT NULL, job "
     "VARCHAR(128) NOT NULL, fire_ms BIGINT NOT NULL, term BIGINT NOT NULL, "
     "claimed_by VARCHAR(128) NOT NULL, claimed_at_ms BIGINT NOT NULL, "
     "finished_at_ms BIGINT NULL, status INTEGER NULL, PRIMARY KEY (namespace, "
     "job, fire_ms)){opts}"},
    /* PostgreSQL and MariaDB 3: the lease's epoch (written with the row) */
    {{0, 3, 3, 0},
     "ALTER TABLE {prefix}lease ADD COLUMN epoch VARCHAR(64) NULL"},
    {{0, 3, 3, 0}, "UPDATE {prefix}lease SET epoch = {epoch}"},
    /* PostgreSQL and MariaDB 4: the database's epoch */
    {{0, 4, 4, 0},
     "ALTER TABLE {prefix}schema ADD COLUMN epoch VARCHAR(64) NULL"},
    {{0, 4, 4, 0},
     "ALTER TABLE {prefix}schema ADD COLUMN epoch_since_ms BIGINT NULL"},
    {{0, 4, 4, 0},
     "UPDATE {prefix}schema SET epoch = {epoch}, epoch_since_ms = 0"},
    /* sharded groups: SQLite and generic 3, PostgreSQL and MariaDB 5 */
    {{3, 5, 5, 3},
     "ALTER TABLE {prefix}lease ADD COLUMN grp VARCHAR(128) NULL"},
    {{3, 5, 5, 3}, "ALTER TABLE {prefix}lease ADD COLUMN shard INTEGER NULL"},
    {{3, 5, 5, 3}, "ALTER TABLE {prefix}lease ADD COLUMN inc BIGINT NULL"},
    {{3, 5, 5, 3},
     "ALTER TABLE {prefix}lease ADD COLUMN renew_seq BIGINT NULL"},
    {{3, 5, 5, 3},
     "CREATE UNIQUE INDEX {prefix}lease_grp_shard ON {prefix}lease (grp, "
     "shard)"},
    {{3, 5, 5, 3},
     "CREATE INDEX {prefix}lease_grp_inc ON {prefix}lease (grp, inc)"},
    {{0, 5, 0, 0}, "ALTER TABLE {prefix}lease SET (fillfactor = 50)"},
};

/* Writes old_schema's sql into out (of size cap) with its {names}
 * replaced; fails the test when it does not fit. */
static void old_sql(char *out, size_t cap, const char *sql, const char *p,
                    const char *ns, int version, enum old_dialect d) {
    static const char *const epoch[4] = {
        [OLD_PG] = "((SELECT CAST(system_identifier AS TEXT) FROM "
                   "pg_control_system()) || '/' || CASE WHEN "
                   "pg_is_in_recovery() THEN 'recovery' ELSE "
                   "SUBSTR(pg_walfile_name(pg_current_wal_insert_lsn()), 1, "
                   "8) END)",
        [OLD_MARIADB] = "IF(@@wsrep_on, (SELECT VARIABLE_VALUE FROM "
                        "information_schema.GLOBAL_STATUS WHERE "
                        "VARIABLE_NAME = 'WSREP_CLUSTER_STATE_UUID'), "
                        "CONCAT(@@hostname, ':', @@port, '/', @@server_id))",
    };
    static const char *const names[] = {"{prefix}", "{version}", "{ns}",
                                        "{epoch}", "{opts}"};
    char v[16];
    const char *values[] = {p, v, ns, epoch[d],
                            d == OLD_MARIADB
                                ? " ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 "
                                  "COLLATE = utf8mb4_bin"
                                : ""};
    size_t n = 0;

    snprintf(v, sizeof(v), "%d", version);
    while (*sql != '\0') {
        const char *text = sql;
        size_t len = 1, skip = 1;

        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
            if (strncmp(sql, names[k], strlen(names[k])) == 0) {
                assert_non_null(values[k]);
                text = values[k];
                len = strlen(text);
                skip = strlen(names[k]);
            }
        }
        if (n + len >= cap)
            fail_msg("statement too long: %.60s...", out);
        memcpy(out + n, text, len);
        n += len;
        sql += skip;
    }
    out[n] = '\0';
}

/* Creates the tables of schema version `version` of the dialect under
 * test with prefix p, and the lease row of namespace ns at term 41, as a
 * site that ran that release has them. */
static void create_old_tables(const char *p, const char *ns, int version) {
    enum old_dialect d = dialect_under_test();
    char sql[1024];
    struct raw r;

    raw_open(&r);
    for (size_t i = 0; i < sizeof(old_schema) / sizeof(old_schema[0]); i++) {
        int since = old_schema[i].since[d];

        if (since == 0 || since > version)
            continue;
        old_sql(sql, sizeof(sql), old_schema[i].sql, p, ns, version, d);
        if (!raw_exec(&r, sql, NULL))
            fail_msg("creating version-%d tables: %s", version, sql);
    }
    raw_close(&r);
}

static void raw_run(const char *sql, int64_t *first);

/* Tables of every earlier schema version of the dialect: refused with
 * LeaderCreateSchema=no (naming their version, changing nothing),
 * upgraded at connect otherwise, in place; the namespace's terms go on
 * from the old row, fires are claimed and the election log is written. */
static void earlier_schema_versions_are_upgraded(void **state) {
    char prefix[64], ns[64], table[96], sql[256], err[512] = "", what[32];
    odbc_leader_t *h;
    struct elog l;
    int64_t n;
    char *cfg;
    int rc;

    (void)state;
    for (int v = 1; v < current_schema_version(); v++) {
        snprintf(prefix, sizeof(prefix), "v%dx%ld_", v, (long)getpid());
        snprintf(what, sizeof(what), "upgrade-v%d", v);
        ns_name(ns, sizeof(ns), what);
        create_old_tables(prefix, ns, v);
        snprintf(table, sizeof(table), "%selection", prefix);
        snprintf(sql, sizeof(sql), "SELECT MAX(version) FROM %sschema", prefix);

        h = NULL;
        cfg = config("LeaderNamespace=%s;LeaderTablePrefix=%s;"
                     "LeaderCreateSchema=no",
                     ns, prefix);
        rc = odbc_leader_create(&h, cfg, NULL, err, sizeof(err));
        test_free(cfg);
        assert_int_equal(rc, ODBC_LEADER_ESCHEMA);
        assert_null(h);
        snprintf(what, sizeof(what), "schema version %d ", v);
        if (strstr(err, what) == NULL ||
            strstr(err, "odbc-leader schema --upgrade") == NULL)
            fail_msg("version %d refused with: %s", v, err);
        assert_false(table_exists(table));
        raw_run(sql, &n);
        assert_int_equal(n, v);

        cfg = config("LeaderNamespace=%s;LeaderTablePrefix=%s", ns, prefix);
        h = make(cfg);
        test_free(cfg);
        raw_run(sql, &n);
        if (n != current_schema_version())
            fail_msg("version %d upgraded to %lld", v, (long long)n);
        snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM %sschema", prefix);
        raw_run(sql, &n);
        assert_int_equal(n, 1); /* one row, upgraded in place */
        /* the old row's next term; a fire; the term's election row */
        rc = odbc_leader_tick(h, NULL);
        if (rc != ODBC_LEADER_LEADER || odbc_leader_term(h) != 42)
            fail_msg("tables of version %d: tick %d (%s), term %lld", v, rc,
                     odbc_leader_strerror(rc), (long long)odbc_leader_term(h));
        rc = odbc_leader_claim(h, "j", 0);
        if (rc != 1)
            fail_msg("tables of version %d: claim %d (%s)", v, rc,
                     odbc_leader_strerror(rc));
        assert_int_equal(read_elog(h, &l), 1);
        expect_term(&l, 0, 42, odbc_leader_id(h), "", "");
        odbc_leader_destroy(h);

        /* a second connect finds the current version; the term ended */
        cfg = config("LeaderNamespace=%s;LeaderTablePrefix=%s;"
                     "LeaderCreateSchema=no",
                     ns, prefix);
        h = make(cfg);
        test_free(cfg);
        assert_int_equal(read_elog(h, &l), 1);
        assert_string_equal(l.e[0].ended_how, "resigned");
        odbc_leader_destroy(h);
    }
}

/* Attempts every 50 ms (for at most 20 s) until db wins, each time
 * passing the row the previous answer showed as the watched one (res on
 * entry: an answer of db's; the local floor of the watch is the elector's,
 * not tested here); res gets the winning result. */
static void attempt_until_won(struct odbc_leader__db *db,
                              struct odbc_leader__result *res) {
    int64_t t0 = mono_ms();

    do {
        sleep_ms(50);
        assert_int_equal(
            odbc_leader__db_attempt(db, res->term, res->expires_at_ms, res), 0);
    } while (!res->won && mono_ms() - t0 < 20000);
    assert_true(res->won);
}

/* Runs sql on a new raw connection; fails the test when it fails. A
 * returned row's first column goes to *first (if given). */
static void raw_run(const char *sql, int64_t *first) {
    struct raw r;

    raw_open(&r);
    if (!raw_exec(&r, sql, first))
        fail_msg("%s failed", sql);
    raw_close(&r);
}

/* Rows as a promoted standby or a restored copy has them (docs/protocol.md,
 * "Database epochs"), staged by writing another epoch into them: a lease
 * row of another epoch cannot be renewed and is not taken before one TTL
 * of this clock has passed, with a term above the old one; when the schema
 * row says the database changed epochs, a namespace's first row is
 * quarantined the same way, until one TTL after the change was seen. New
 * tables are settled from the start. */
static void rows_of_another_epoch_are_quarantined(void **state) {
    char prefix[64], extra[192], ns[64], ns2[64], ns3[64], ns4[64], sql[256];
    struct odbc_leader__config ca, cb, cc, cd, ce;
    struct odbc_leader__db *a, *b, *c, *d, *e;
    struct odbc_leader__result res, q;
    int64_t t1, n = -1;

    (void)state;
    if (dialect_under_test() == OLD_SQLITE ||
        dialect_under_test() == OLD_GENERIC)
        skip(); /* no epochs: SQLite and the generic dialect */
    snprintf(prefix, sizeof(prefix), "ep%ld_", (long)getpid());
    snprintf(extra, sizeof(extra),
             "LeaderTablePrefix=%s;LeaderTTL=1500;LeaderRenewInterval=500;"
             "LeaderSafetyMargin=200",
             prefix);
    ns_name(ns, sizeof(ns), "epoch");
    a = port_open(&ca, ns, "cand-a", extra);
    b = port_open(&cb, ns, "cand-b", extra);
    assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
    assert_true(res.won); /* new tables: won at once */
    t1 = res.term;

    snprintf(sql, sizeof(sql),
             "UPDATE %slease SET epoch = 'elsewhere' WHERE namespace = '%s'",
             prefix, ns);
    raw_run(sql, NULL);
    assert_int_equal(odbc_leader__db_renew(a, t1, &res), 0);
    assert_false(res.found);
    assert_int_equal(odbc_leader__db_attempt(b, 0, 0, &q), 0);
    assert_false(q.won);
    assert_string_equal(q.leader_id, "");
    assert_true(q.term > t1);
    assert_true(q.term >= q.now_ms);
    assert_int_equal(q.expires_at_ms, q.now_ms + 1500);
    assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
    assert_false(res.won); /* reserved for nobody, not even its old holder */
    /* once it ran out in database time, only a watched row is taken */
    sleep_ms(1600);
    assert_int_equal(odbc_leader__db_attempt(b, 0, 0, &res), 0);
    assert_false(res.won);
    assert_string_equal(res.leader_id, "");
    assert_true(res.expires_at_ms <= res.now_ms);
    res = q;
    attempt_until_won(b, &res);
    assert_true(res.now_ms >= q.expires_at_ms);
    assert_int_equal(res.term, q.term + 1);

    /* a promoted copy that lacks the namespace's row */
    snprintf(sql, sizeof(sql), "UPDATE %sschema SET epoch = 'elsewhere'",
             prefix);
    raw_run(sql, NULL);
    ns_name(ns2, sizeof(ns2), "epoch2");
    ns_name(ns3, sizeof(ns3), "epoch3");
    ns_name(ns4, sizeof(ns4), "epoch4");
    c = port_open(&cc, ns2, "cand-c", extra);
    d = port_open(&cd, ns3, "cand-d", extra);
    assert_int_equal(odbc_leader__db_attempt(c, 0, 0, &q), 0);
    assert_false(q.won);
    assert_string_equal(q.leader_id, "");
    assert_int_equal(q.term, q.now_ms);
    assert_int_equal(q.expires_at_ms, q.now_ms + 1500);
    snprintf(sql, sizeof(sql),
             "SELECT COUNT(*) FROM %sschema WHERE epoch = 'elsewhere'", prefix);
    raw_run(sql, &n);
    assert_int_equal(n, 0); /* the change is recorded */
    /* within one TTL of it, any namespace's first row waits */
    assert_int_equal(odbc_leader__db_attempt(d, 0, 0, &res), 0);
    assert_false(res.won);
    assert_string_equal(res.leader_id, "");
    res = q;
    attempt_until_won(c, &res);
    assert_true(res.now_ms >= q.expires_at_ms);
    assert_int_equal(res.term, q.term + 1);
    /* after it, a first row is won at once again */
    e = port_open(&ce, ns4, "cand-e", extra);
    assert_int_equal(odbc_leader__db_attempt(e, 0, 0, &res), 0);
    assert_true(res.won);
    port_close(a, &ca);
    port_close(b, &cb);
    port_close(c, &cc);
    port_close(d, &cd);
    port_close(e, &ce);
}

/* The fence of docs/fencing.md, taken from the dialect: a leader that
 * stopped ticking past its lease (a pause) has its fenced write refused
 * once another candidate took over; the new leader's write applies. */
static int fenced_update(struct raw *r, const char *table, const char *fence,
                         const char *ns, int64_t term) {
    char sql[2048];
    SQLHSTMT h;
    SQLLEN rows = -1, nts = SQL_NTS, zero = 0;
    SQLBIGINT t = term;
    SQLRETURN rc;

    snprintf(sql, sizeof(sql),
             "UPDATE %s SET v = v + 1 WHERE id = 1 AND EXISTS (%s)", table,
             fence);
    SQLAllocHandle(SQL_HANDLE_STMT, r->dbc, &h);
    rc = SQLPrepare(h, (SQLCHAR *)sql, SQL_NTS);
    assert_true(SQL_SUCCEEDED(rc));
    SQLBindParameter(h, 1, SQL_PARAM_INPUT, SQL_C_CHAR, SQL_VARCHAR, 128, 0,
                     (SQLPOINTER)ns, 0, &nts);
    SQLBindParameter(h, 2, SQL_PARAM_INPUT, SQL_C_SBIGINT, SQL_BIGINT, 0, 0, &t,
                     0, &zero);
    rc = SQLExecute(h);
    assert_true(SQL_SUCCEEDED(rc) || rc == SQL_NO_DATA);
    if (rc != SQL_NO_DATA)
        SQLRowCount(h, &rows);
    else
        rows = 0;
    SQLFreeHandle(SQL_HANDLE_STMT, h);
    return (int)rows;
}

/* Reads the fence the CLI prints (odbc-leader fence --dialect D --bare)
 * into buf. */
static void printed_fence(const char *dialect, char *buf, size_t len) {
    const char *top = getenv("top_builddir");
    char cmd[4096];
    FILE *p;
    size_t n;

    if (top == NULL)
        top = "."; /* run by hand from the build directory */
    snprintf(cmd, sizeof(cmd), "'%s/odbc-leader' fence --dialect %s --bare",
             top, dialect);
    p = popen(cmd, "r");
    assert_non_null(p);
    n = fread(buf, 1, len - 1, p);
    buf[n] = '\0';
    assert_int_equal(pclose(p), 0);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ';'))
        buf[--n] = '\0';
    assert_true(n > 0);
}

static void fenced_write_is_refused_after_takeover(void **state) {
    char ns[64], table[64], sql[256], fence[1024];
    const char *extra = getenv("OL_LEADER_EXTRA");
    const char *dialect = getenv("OL_KIND");
    odbc_leader_t *a, *b;
    int64_t ta, tb, v = 0;
    struct raw r;

    char spec[512];

    (void)state;
    /* the dialect the suite runs with: OL_LEADER_EXTRA's LeaderDialect=
     * (the generic.sql copy), else the built-in one of the database */
    if (extra != NULL && strncmp(extra, "LeaderDialect=", 14) == 0) {
        snprintf(spec, sizeof(spec), "%.*s", (int)strcspn(extra + 14, ";"),
                 extra + 14);
        dialect = spec;
    }
    assert_non_null(dialect);
    printed_fence(dialect, fence, sizeof(fence));
    ns_name(ns, sizeof(ns), "fence");
    snprintf(table, sizeof(table), "fenced%ld", (long)getpid());
    raw_open(&r);
    snprintf(sql, sizeof(sql), "CREATE TABLE %s (id INTEGER, v INTEGER)",
             table);
    assert_true(raw_exec(&r, sql, NULL));
    snprintf(sql, sizeof(sql), "INSERT INTO %s VALUES (1, 0)", table);
    assert_true(raw_exec(&r, sql, NULL));

    a = make_ns(ns, "LeaderTTL=1000;LeaderSafetyMargin=200");
    b = make_ns(ns, "LeaderTTL=1000;LeaderSafetyMargin=200");
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    /* b follows a healthy lease (a candidate whose first sight is an
     * expired one does not trust a takeover for one TTL: protocol.md) */
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
    ta = odbc_leader_term(a);
    assert_int_equal(fenced_update(&r, table, fence, ns, ta), 1);
    /* a pauses: no tick past its lease; b takes over */
    sleep_ms(1100);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_LEADER);
    tb = odbc_leader_term(b);
    assert_true(tb > ta);
    /* a wakes up and writes with its old term: refused */
    assert_int_equal(fenced_update(&r, table, fence, ns, ta), 0);
    assert_int_equal(fenced_update(&r, table, fence, ns, tb), 1);
    /* after b resigns, its term no longer writes either */
    assert_int_equal(odbc_leader_resign(b), 0);
    assert_int_equal(fenced_update(&r, table, fence, ns, tb), 0);
    snprintf(sql, sizeof(sql), "SELECT v FROM %s WHERE id = 1", table);
    assert_true(raw_exec(&r, sql, &v));
    assert_int_equal(v, 2);
    snprintf(sql, sizeof(sql), "DROP TABLE %s", table);
    raw_exec(&r, sql, NULL);
    raw_close(&r);
    odbc_leader_destroy(a);
    odbc_leader_destroy(b);
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
        cmocka_unit_test(held_lease_is_taken_only_as_watched),
        cmocka_unit_test(resign_request_and_handoff),
        cmocka_unit_test(same_id_winning_again_gets_a_new_term),
        cmocka_unit_test(trust_window_lapses_when_ticks_stop),
        cmocka_unit_test(candidates_are_listed),
        cmocka_unit_test(leader_removes_long_dead_candidates),
        cmocka_unit_test(settings_from_odbc_ini_and_string),
        cmocka_unit_test(first_row_race),
        cmocka_unit_test(waiting_follower_wakes_on_resign),
        cmocka_unit_test(reconnects_after_server_restart),
        cmocka_unit_test(claim_after_server_restart_is_tried_again),
        cmocka_unit_test(claim_answer_lost_is_not_claimed_twice),
        cmocka_unit_test(least_privilege_candidates),
        cmocka_unit_test(bad_config_gives_clear_errors_and_writes_nothing),
        cmocka_unit_test(missing_tables_and_wrong_version_are_refused),
        cmocka_unit_test(unreachable_database_gives_clear_error),
        cmocka_unit_test(claims_are_fenced_by_term),
        cmocka_unit_test(retention_deletes_old_finished_fires),
        cmocka_unit_test(public_claim_api),
        cmocka_unit_test(terms_keep_growing_across_a_deleted_lease_row),
        cmocka_unit_test(earlier_schema_versions_are_upgraded),
        cmocka_unit_test(election_log_follows_terms_and_their_ends),
        cmocka_unit_test(election_log_ends_an_expired_term),
        cmocka_unit_test(election_log_retention_deletes_old_terms),
        cmocka_unit_test(rows_of_another_epoch_are_quarantined),
        cmocka_unit_test(fenced_write_is_refused_after_takeover),
        cmocka_unit_test(group_members_split_and_claim),
        cmocka_unit_test(group_crashed_member_is_replaced_after_the_watch),
        cmocka_unit_test(group_members_back_after_an_outage_lead_again),
        cmocka_unit_test(group_lost_shards_of_another_are_released),
        cmocka_unit_test(group_bad_settings_are_refused),
        cmocka_unit_test(group_of_many_shards_is_made_whole),
        cmocka_unit_test(group_first_members_race),
        cmocka_unit_test(group_late_ticks_are_fenced),
    };

    if (getenv("OL_CONNECT") == NULL) {
        fprintf(stderr, "OL_CONNECT is not set: run through sqlite.test or "
                        "postgresql.test\n");
        return 1;
    }
    cmocka_set_message_output(CM_OUTPUT_STDOUT);
    return cmocka_run_group_tests_name(getenv("OL_KIND"), tests, NULL, NULL);
}
