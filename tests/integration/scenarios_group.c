/* SPDX-License-Identifier: MIT */
/*
 * scenarios_group.c: the scenarios of sharded groups (odbc_leader_group_*):
 * members splitting the shards and claiming in them, a crashed member
 * replaced after the watch, members back after an outage, lost shards of
 * another released, bad settings, a group of many shards, the race of a
 * group's first members, and late ticks fenced.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <sql.h>
#include <sqlext.h>
#include <stdatomic.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "db.h"
#include "db_group.h"
#include "db_ledger.h"
#include "dialect.h"
#include "member.h"
#include "scenarios.h"

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
void group_members_split_and_claim(void **state) {
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
void group_crashed_member_is_replaced_after_the_watch(void **state) {
    char grp[64];
    odbc_leader_group_t *m[2] = {NULL, NULL};
    const char *extra = "LeaderShards=8;LeaderTTL=2000;"
                        "LeaderRenewInterval=200;LeaderSafetyMargin=600";
    int64_t t0, terms[8];
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
    for (uint32_t s = 0; s < 8; s++)
        terms[s] = odbc_leader_group_leadership(m[1], s, NULL);
    odbc_leader_group_destroy(m[0]); /* its leave releases nothing: */
    m[0] = NULL;
    {
        odbc_leader_group_t *only_b[2] = {NULL, m[1]};

        /* b leads all 8 again after a tick or more (one answer that came
         * after its trust window, as under ASan on a loaded machine, is
         * not trusted), each in the term it had: no shard was released
         * and taken back */
        assert_true(tick_members(only_b, 2, 100, 8000, second_leads_all));
    }
    for (uint32_t s = 0; s < 8; s++)
        assert_int_equal(odbc_leader_group_leadership(m[1], s, NULL), terms[s]);
    odbc_leader_group_destroy(m[1]);
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
void group_members_back_after_an_outage_lead_again(void **state) {
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
void group_lost_shards_of_another_are_released(void **state) {
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
void group_first_members_race(void **state) {
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
void group_of_many_shards_is_made_whole(void **state) {
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

/* A group of another size, shard names taken by single handles, and
 * LeaderShards on a single handle are refused with messages naming them. */
void group_bad_settings_are_refused(void **state) {
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

/* Runs one group_tick of incarnation inc with the given lists (dead may
 * be NULL), rows to fn; fails the test on an error. */
static void run_tick(struct odbc_leader__db *db, int64_t inc, int64_t seq,
                     const char *take, const char *release, const char *dead,
                     odbc_leader__db_row_fn fn, void *ctx) {
    struct odbc_leader__group_args a;

    memset(&a, 0, sizeof(a));
    a.inc = inc;
    a.seq = seq;
    a.shards = 2;
    a.take = take;
    a.release = release;
    a.dead = dead;
    assert_true(odbc_leader__db_group_run(db, ODBC_LEADER__OP_GROUP_TICK, &a,
                                          fn, ctx) >= 0);
}

/* Runs one group_tick of incarnation 7 with the given lists and reads
 * shard 0 back; fails the test on an error. */
static struct shard0 group_tick0(struct odbc_leader__db *db, int64_t seq,
                                 const char *take, const char *release) {
    struct odbc_leader__group_args a;
    struct shard0 r;

    memset(&a, 0, sizeof(a));
    memset(&r, 0, sizeof(r));
    run_tick(db, 7, seq, take, release, NULL, NULL, NULL);
    assert_true(odbc_leader__db_group_run(db, ODBC_LEADER__OP_GROUP_SHARDS, &a,
                                          shard0_row, &r) >= 0);
    return r;
}

/* Opens member-a's port on a new group of 2 shards named after what
 * (into grp, of size len), makes its rows and opens raw; returns the
 * port, closed with port_close(db, cfg). */
static struct odbc_leader__db *group2_open(struct odbc_leader__config *cfg,
                                           char *grp, size_t len,
                                           const char *what, struct raw *raw) {
    struct odbc_leader__group_args a;
    struct odbc_leader__db *db;

    ns_name(grp, len, what);
    raw_open(raw);
    db = port_open(cfg, grp, "member-a", "LeaderShards=2");
    memset(&a, 0, sizeof(a));
    a.shards = 2;
    assert_true(odbc_leader__db_group_run(db, ODBC_LEADER__OP_GROUP_INIT, &a,
                                          NULL, NULL) >= 0);
    return db;
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
void group_late_ticks_are_fenced(void **state) {
    struct odbc_leader__config cfg;
    struct odbc_leader__db *db;
    struct shard0 r;
    struct raw raw;
    char grp[64], rel[96], sql[256];
    int64_t t1, seq = 0;

    (void)state;
    db = group2_open(&cfg, grp, sizeof(grp), "grpfence", &raw);
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
    snprintf(sql, sizeof(sql),          /* the member's lease */
             "SELECT renew_seq FROM odbc_leader_member WHERE grp = '%s'", grp);
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

/* The S row of a group_tick: whether the incarnation's lease holds. */
static int lease_row(void *ctx, void *stmt) {
    int64_t *renewed = ctx;
    char kind[4] = "";

    if (odbc_leader__db_col_text(stmt, 1, kind, sizeof(kind)) < 0)
        return ODBC_LEADER_EDB;
    return kind[0] == 'S' ? odbc_leader__db_col_int(stmt, 3, renewed) : 0;
}

/* One group_tick of incarnation inc; returns the S row's "lease holds". */
static int64_t lease_tick(struct odbc_leader__db *db, int64_t inc, int64_t seq,
                          const char *take, const char *dead) {
    int64_t renewed = -1;

    run_tick(db, inc, seq, take, NULL, dead, lease_row, &renewed);
    assert_true(renewed == 0 || renewed == 1);
    return renewed;
}

/* Claims the fire now + fire_ms of job j on shard 0 of grp in term. */
static int claim0(struct odbc_leader__db *db, const char *grp, int64_t term,
                  int64_t fire_ms) {
    char ns[96];
    int rc;

    snprintf(ns, sizeof(ns), "%s/0", grp);
    odbc_leader__db_set_ns(db, ns);
    /* a fire of now (not older than the retention) + fire_ms */
    rc = odbc_leader__db_claim(
        db, term, "j", (int64_t)time(NULL) * 1000 + fire_ms, 1, 0, NULL);
    odbc_leader__db_set_ns(db, grp);
    return rc;
}

/*
 * Shards held under their member's lease (issue 42; docs/protocol.md):
 * a steady tick renews the member's lease and writes no shard row; a
 * claim, or a write under the fence of docs/fencing.md, in a shard's term
 * holds only while its holder's lease does, even though the row still
 * names it; a lapsed lease is never renewed again;
 * another incarnation takes the shard only once that lease expired and
 * its counter was watched no higher than the lease's.
 */
void group_shards_hold_under_the_members_lease(void **state) {
    struct odbc_leader__config cfg;
    struct odbc_leader__db *db;
    struct shard0 r;
    struct raw raw;
    char grp[64], sql[256], renewed[256], dead[64], shard[96], table[64];
    char fence[1024];
    int64_t t1, before = 0, after = 0, seq = 0, v = 0;

    (void)state;
    printed_fence(fence, sizeof(fence));
    db = group2_open(&cfg, grp, sizeof(grp), "grplease", &raw);
    snprintf(shard, sizeof(shard), "%s/0", grp);
    snprintf(table, sizeof(table), "shardfenced%ld", (long)getpid());
    snprintf(sql, sizeof(sql), "CREATE TABLE %s (id INTEGER, v INTEGER)",
             table);
    assert_true(raw_exec(&raw, sql, NULL));
    snprintf(sql, sizeof(sql), "INSERT INTO %s VALUES (1, 0)", table);
    assert_true(raw_exec(&raw, sql, NULL));
    assert_int_equal(lease_tick(db, 7, 1, "[0]", "[]"), 1);
    r = group_tick0(db, 2, "[]", "[]");
    assert_string_equal(r.leader, "member-a");
    t1 = r.term;
    snprintf(renewed, sizeof(renewed),
             "SELECT renewed_at_ms + renew_seq FROM odbc_leader_lease "
             "WHERE grp = '%s' AND shard = 0",
             grp);
    assert_true(raw_exec(&raw, renewed, &before));
    usleep(20000);
    assert_int_equal(lease_tick(db, 7, 3, "[]", "[]"), 1);
    assert_true(raw_exec(&raw, renewed, &after));
    assert_int_equal(after, before); /* the steady tick left the row */
    snprintf(sql, sizeof(sql),
             "SELECT renew_seq FROM odbc_leader_member WHERE grp = '%s' AND "
             "inc = 7",
             grp);
    assert_true(raw_exec(&raw, sql, &seq));
    assert_int_equal(seq, 3); /* the lease was renewed instead */
    assert_int_equal(claim0(db, grp, t1, 1000), ODBC_LEADER_CLAIM_RUN);
    assert_int_equal(fenced_update(&raw, table, fence, shard, t1), 1);

    /* the lease ends in database time; the row still names member-a */
    snprintf(sql, sizeof(sql),
             "UPDATE odbc_leader_member SET expires_at_ms = 0 WHERE grp = "
             "'%s' AND inc = 7",
             grp);
    assert_true(raw_exec(&raw, sql, NULL));
    assert_int_equal(claim0(db, grp, t1, 2000), ODBC_LEADER_ENOTLEADER);
    assert_int_equal(fenced_update(&raw, table, fence, shard, t1), 0);
    assert_int_equal(lease_tick(db, 7, 4, "[0]", "[]"), 0); /* never again */
    r = group_tick0(db, 5, "[]", "[]");
    assert_string_equal(r.leader, "member-a");
    assert_int_equal(r.term, t1);

    /* another incarnation: not with a sighting older than the lease's
     * counter (3), then with one as high */
    snprintf(dead, sizeof(dead), "[[7,2]]");
    assert_int_equal(lease_tick(db, 8, 1, "[0]", dead), 1);
    r = group_tick0(db, 5, "[]", "[]");
    assert_int_equal(r.term, t1);
    snprintf(dead, sizeof(dead), "[[7,3]]");
    assert_int_equal(lease_tick(db, 8, 2, "[0]", dead), 1);
    r = group_tick0(db, 6, "[]", "[]");
    assert_int_equal(r.term, t1 + 1);
    assert_int_equal(claim0(db, grp, t1, 3000), ODBC_LEADER_ENOTLEADER);
    assert_int_equal(fenced_update(&raw, table, fence, shard, t1), 0);
    assert_int_equal(fenced_update(&raw, table, fence, shard, t1 + 1), 1);
    snprintf(sql, sizeof(sql), "SELECT v FROM %s WHERE id = 1", table);
    assert_true(raw_exec(&raw, sql, &v));
    assert_int_equal(v, 2); /* t1 while its lease held, then t1 + 1 */
    snprintf(sql, sizeof(sql), "DROP TABLE %s", table);
    raw_exec(&raw, sql, NULL);
    raw_close(&raw);
    port_close(db, &cfg);
}

/* The rows of a group_tick by kind, and the last K row's numbers. */
struct kinds {
    int n[128];
    int64_t k_inc, k_seq;
};

static int kind_row(void *ctx, void *stmt) {
    struct kinds *k = ctx;
    char kind[4] = "";

    if (odbc_leader__db_col_text(stmt, 1, kind, sizeof(kind)) < 0)
        return ODBC_LEADER_EDB;
    k->n[kind[0] & 127]++;
    if (kind[0] == 'K' && (odbc_leader__db_col_int(stmt, 3, &k->k_inc) < 0 ||
                           odbc_leader__db_col_int(stmt, 4, &k->k_seq) < 0))
        return ODBC_LEADER_EDB;
    return 0;
}

/* One group_tick of incarnation 7, full or steady; returns its rows. */
static struct kinds kinds_tick(struct odbc_leader__db *db, int64_t seq,
                               const char *take, int64_t full) {
    struct odbc_leader__group_args a;
    struct kinds k;

    memset(&a, 0, sizeof(a));
    memset(&k, 0, sizeof(k));
    a.inc = 7;
    a.seq = seq;
    a.shards = 2;
    a.take = take;
    a.full = full;
    assert_true(odbc_leader__db_group_run(db, ODBC_LEADER__OP_GROUP_TICK, &a,
                                          kind_row, &k) >= 0);
    return k;
}

/* The rows of a tick through the port, by kind, and the S row. */
struct port_kinds {
    int n[128];
    int64_t s_renewed, s_seq;
};

static int port_kind_row(void *ctx, const struct odbc_leader__group_row *r) {
    struct port_kinds *k = ctx;

    k->n[r->kind & 127]++;
    if (r->kind == 'S') {
        k->s_renewed = r->a;
        k->s_seq = r->b;
    }
    return 0;
}

/* One steady tick of incarnation 7 as a member runs it: through the port
 * (odbc_leader__db_group_ops), which picks the dialect's group_steady
 * when it has one. Returns its rows. */
static struct port_kinds port_steady(struct odbc_leader__db *db, int64_t seq) {
    struct odbc_leader__group_args a;
    struct port_kinds k;

    memset(&a, 0, sizeof(a));
    memset(&k, 0, sizeof(k));
    a.inc = 7;
    a.seq = seq;
    a.shards = 2;
    a.take = a.release = a.dead = "[]";
    assert_true(odbc_leader__db_group_ops.tick(db, &a, port_kind_row, &k) >= 0);
    return k;
}

/*
 * A steady tick reads no shard row (issue 42; docs/protocol.md, "A
 * steady tick"): asked in full, the tick answers the shard held (L), its
 * holder (H) and the vacant shard (V); asked with :full 0 it answers the
 * lease (S), the members (M) and the leases' counters (K) instead, so
 * its cost does not grow with the group. The shard stays held. A steady
 * tick as the member runs it (group_steady where the dialect has it)
 * answers the same, renews the lease, and never renews one that expired
 * in database time.
 */
void group_steady_tick_reads_no_shard_row(void **state) {
    struct odbc_leader__config cfg;
    struct odbc_leader__db *db;
    struct port_kinds p;
    struct kinds k;
    struct raw raw;
    char grp[64], sql[256];
    int64_t seq = 0;

    (void)state;
    db = group2_open(&cfg, grp, sizeof(grp), "grpsteady", &raw);
    kinds_tick(db, 1, "[0]", 1);
    /* PostgreSQL answers H and V as before its statement: read again */
    k = kinds_tick(db, 2, "[]", 1);
    assert_int_equal(k.n['S'], 1);
    assert_int_equal(k.n['L'], 1);
    assert_int_equal(k.n['H'], 1);
    assert_int_equal(k.n['V'], 1);
    assert_int_equal(k.n['M'], 1);
    assert_int_equal(k.n['K'], 0);
    k = kinds_tick(db, 3, "[]", 0);
    assert_int_equal(k.n['S'], 1);
    assert_int_equal(k.n['M'], 1);
    assert_int_equal(k.n['L'] + k.n['H'] + k.n['V'], 0);
    assert_int_equal(k.n['K'], 1);
    assert_int_equal(k.k_inc, 7);
    /* the counter a watcher follows, as of this statement or (PostgreSQL,
     * as its H rows) as before it */
    assert_true(k.k_seq == 3 || k.k_seq == 2);
    k = kinds_tick(db, 4, "[]", 1);
    assert_int_equal(k.n['L'], 1); /* still held */
    assert_int_equal(k.n['V'], 1);

    /* as the member runs it */
    p = port_steady(db, 5);
    assert_int_equal(p.n['S'], 1);
    assert_int_equal(p.n['M'], 1);
    assert_int_equal(p.n['K'], 1);
    assert_int_equal(p.n['L'] + p.n['H'] + p.n['V'], 0);
    assert_int_equal(p.s_renewed, 1);
    assert_int_equal(p.s_seq, 5);
    snprintf(sql, sizeof(sql),
             "SELECT renew_seq FROM odbc_leader_member WHERE grp = '%s' AND "
             "inc = 7",
             grp);
    assert_true(raw_exec(&raw, sql, &seq));
    assert_int_equal(seq, 5);
    k = kinds_tick(db, 6, "[]", 1);
    assert_int_equal(k.n['L'], 1); /* still held */
    /* a lease that expired in database time is not renewed */
    snprintf(sql, sizeof(sql),
             "UPDATE odbc_leader_member SET expires_at_ms = 0 WHERE grp = "
             "'%s' AND inc = 7",
             grp);
    assert_true(raw_exec(&raw, sql, NULL));
    p = port_steady(db, 7);
    assert_int_equal(p.s_renewed, 0);
    snprintf(sql, sizeof(sql),
             "SELECT renew_seq FROM odbc_leader_member WHERE grp = '%s' AND "
             "inc = 7",
             grp);
    assert_true(raw_exec(&raw, sql, &seq));
    assert_int_equal(seq, 6);
    raw_close(&raw);
    port_close(db, &cfg);
}

/*
 * A rolling upgrade (docs/protocol.md, "A rolling upgrade"): a member of
 * the old build, still connected, runs the old rule's take. Emulated
 * here with that take's SQL (version 6/8: a row that is vacant, or
 * expired and held by a watched-dead holder) at a clock an hour ahead, a
 * holder it has watched forever: it takes the vacant shard but never one
 * held under a member's lease. And the new member takes the old member's
 * row only once it expired and its renew_seq was watched.
 */
void group_upgrade_leaves_old_members_safe(void **state) {
    struct odbc_leader__config cfg;
    struct odbc_leader__db *db;
    struct shard0 r;
    struct raw raw;
    char grp[64], sql[640];
    int64_t later = ((int64_t)time(NULL) + 3600) * 1000, n = 0;

    (void)state;
    db = group2_open(&cfg, grp, sizeof(grp), "grpupgrade", &raw);
    assert_int_equal(lease_tick(db, 7, 1, "[0]", "[]"), 1);
    /* the old build's take of both shards, incarnation 7 watched dead */
    snprintf(sql, sizeof(sql),
             "UPDATE odbc_leader_lease SET leader_id = 'old', inc = 99, "
             "renew_seq = 1, term = term + 1, expires_at_ms = %lld "
             "WHERE grp = '%s' AND shard IN (0, 1) "
             "AND ((leader_id IS NULL AND inc IS NULL AND handoff_to IS NULL) "
             "OR (expires_at_ms <= %lld AND inc <> 99 AND inc = 7 "
             "AND renew_seq <= 1000000))",
             (long long)(later + 60000), grp, (long long)later);
    assert_true(raw_exec(&raw, sql, NULL));
    r = group_tick0(db, 2, "[]", "[]");
    assert_string_equal(r.leader, "member-a"); /* shard 0 stayed */
    snprintf(sql, sizeof(sql),
             "SELECT COUNT(*) FROM odbc_leader_lease WHERE grp = '%s' "
             "AND leader_id = 'old'",
             grp);
    assert_true(raw_exec(&raw, sql, &n));
    assert_int_equal(n, 1); /* the vacant shard 1 went to the old one */
    /* the new member: not while the old row is unexpired, then once it
     * expired and its renew_seq (1) was watched */
    assert_int_equal(lease_tick(db, 7, 3, "[1]", "[[99,1]]"), 1);
    assert_true(raw_exec(&raw, sql, &n));
    assert_int_equal(n, 1);
    snprintf(sql, sizeof(sql),
             "UPDATE odbc_leader_lease SET expires_at_ms = 1 WHERE grp = "
             "'%s' AND leader_id = 'old'",
             grp);
    assert_true(raw_exec(&raw, sql, NULL));
    assert_int_equal(lease_tick(db, 7, 4, "[1]", "[[99,0]]"), 1);
    snprintf(sql, sizeof(sql),
             "SELECT COUNT(*) FROM odbc_leader_lease WHERE grp = '%s' "
             "AND leader_id = 'old'",
             grp);
    assert_true(raw_exec(&raw, sql, &n));
    assert_int_equal(n, 1); /* renewed since the sighting (1 > 0) */
    assert_int_equal(lease_tick(db, 7, 5, "[1]", "[[99,1]]"), 1);
    assert_true(raw_exec(&raw, sql, &n));
    assert_int_equal(n, 0);
    raw_close(&raw);
    port_close(db, &cfg);
}
