/* SPDX-License-Identifier: MIT */
/*
 * scenarios_lifecycle.c: the scenarios of the fire lifecycle
 * (docs/lifecycle.md) through the public calls: an interrupted fire is
 * offered to the next term only, taken once as the next attempt, its old
 * attempt's late finish refused, and abandoned after the last attempt; a
 * fire of a job without recovery stays interrupted; a paused job's fires
 * are skipped and a run-now runs once; a sharded group's job is paused
 * in its shard; and the take statement itself, through the port.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "db_lease.h"
#include "db_ledger.h"
#include "db_lifecycle.h"
#include "scenarios.h"

/* Settings of every handle here: short leases, followers poll (the
 * scenarios tick several handles from one thread). */
#define LC_SETTINGS "LeaderTTL=1000;LeaderSafetyMargin=200;LeaderFollowerWait=0"

/* Ticks h (and, while it does not lead, the followers in also, which
 * watch the lease) until h leads, for at most 10 s; fails the test
 * otherwise. Returns h's term. */
static int64_t lead(odbc_leader_t *h, odbc_leader_t *also) {
    int64_t until = mono_ms() + 10000;

    while (mono_ms() < until) {
        if (odbc_leader_tick(h, NULL) == ODBC_LEADER_LEADER)
            return odbc_leader_term(h);
        if (also != NULL)
            odbc_leader_tick(also, NULL);
        sleep_ms(50);
    }
    fail_msg("no leadership within 10 s");
    return 0;
}

/* The database clock now, as h reads it: a nominal fire time inside the
 * retention. */
static int64_t fire_of_now(odbc_leader_t *h) {
    struct odbc_leader_lease l;

    assert_true(odbc_leader_read_lease(h, &l) >= 0);
    assert_true(l.db_now_ms > 0);
    return l.db_now_ms;
}

/* What odbc_leader_offers() listed. */
struct offers {
    int n;
    char job[8][129];
    int64_t fire_ms[8];
    int attempt[8];
    char state[8][16];
};

static void offer_seen(void *ctx, const struct odbc_leader_fire *f) {
    struct offers *o = ctx;

    if (o->n < 8) {
        snprintf(o->job[o->n], sizeof(o->job[0]), "%s", f->job);
        o->fire_ms[o->n] = f->fire_ms;
        o->attempt[o->n] = f->attempt;
        snprintf(o->state[o->n], sizeof(o->state[0]), "%s", f->state);
    }
    o->n++;
}

/* h's offers now. */
static struct offers offers_of(odbc_leader_t *h) {
    struct offers o;

    int n;

    memset(&o, 0, sizeof(o));
    n = odbc_leader_offers(h, offer_seen, &o);
    assert_int_equal(n, o.n);
    return o;
}

/* The state column of (job, fire_ms) as list_fires reads it; "" when the
 * fire is not in the ledger. */
struct one_fire {
    const char *job;
    int64_t fire_ms;
    struct odbc_leader_fire f;
    int found;
};

static void fire_seen(void *ctx, const struct odbc_leader_fire *f) {
    struct one_fire *o = ctx;

    if (strcmp(f->job, o->job) == 0 && f->fire_ms == o->fire_ms) {
        o->f = *f;
        o->found = 1;
    }
}

static struct odbc_leader_fire fire_of(odbc_leader_t *h, const char *job,
                                       int64_t fire_ms) {
    struct one_fire o;

    memset(&o, 0, sizeof(o));
    o.job = job;
    o.fire_ms = fire_ms;
    assert_true(odbc_leader_list_fires(h, job, fire_seen, &o) >= 0);
    assert_true(o.found);
    return o.f;
}

/* A leader killed between claim and finish: the next term sweeps the fire
 * to interrupted and offers it (only then: no earlier term sees it
 * offered), takes it once as attempt 2, refuses the first attempt's late
 * finish, and records the second's. A job without recovery stays
 * interrupted; a fire interrupted at its last attempt is abandoned. */
void interrupted_fire_is_recovered_once_in_a_later_term(void **state) {
    char ns[64];
    odbc_leader_t *a, *b, *c;
    struct odbc_leader_claim cl = {.struct_size = sizeof(cl)};
    struct odbc_leader_fire f;
    struct offers o;
    int64_t ta, tb, tc, fire;

    (void)state;
    ns_name(ns, sizeof(ns), "recover");
    a = make_ns(ns, "LeaderId=lc-a;" LC_SETTINGS);
    b = make_ns(ns, "LeaderId=lc-b;" LC_SETTINGS);
    c = make_ns(ns, "LeaderId=lc-c;" LC_SETTINGS);
    ta = lead(a, NULL);
    fire = fire_of_now(a);
    assert_int_equal(odbc_leader_claim_fire(a, "rec", fire, 2, &cl),
                     ODBC_LEADER_CLAIM_RUN);
    assert_int_equal(cl.attempt, 1);
    assert_int_equal(cl.max_attempts, 2);
    assert_false(cl.recovering);
    assert_false(cl.triggered);
    assert_int_equal(cl.term, ta);
    assert_int_equal(cl.nominal_ms, fire);
    assert_int_equal(odbc_leader_claim_fire(a, "once", fire, 1, &cl),
                     ODBC_LEADER_CLAIM_RUN);
    assert_int_equal(odbc_leader_claim_fire(a, "cap", fire, 2, &cl),
                     ODBC_LEADER_CLAIM_RUN);
    /* a fire of the live term is not taken again in it */
    assert_int_equal(odbc_leader_claim_fire(a, "rec", fire, 2, &cl),
                     ODBC_LEADER_CLAIM_TAKEN);
    /* the live term's own fires are never offered, to anyone */
    assert_int_equal(odbc_leader_tick(a, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(offers_of(a).n, 0);
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_FOLLOWER);
    assert_int_equal(offers_of(b).n, 0);

    /* a "dies": it never ticks again; b takes over after the watch */
    tb = lead(b, NULL);
    assert_true(tb > ta);
    o = offers_of(b);
    assert_int_equal(o.n, 2); /* rec and cap; once has no recovery */
    assert_string_equal(o.state[0], "interrupted");
    assert_int_equal(o.attempt[0], 1);
    f = fire_of(b, "once", fire);
    assert_string_equal(f.state, "interrupted");
    assert_int_equal(odbc_leader_claim_fire(b, "once", fire, 1, &cl),
                     ODBC_LEADER_CLAIM_TAKEN);

    assert_int_equal(odbc_leader_claim_fire(b, "rec", fire, 2, &cl),
                     ODBC_LEADER_CLAIM_RUN);
    assert_int_equal(cl.attempt, 2);
    assert_true(cl.recovering);
    assert_int_equal(cl.term, tb);
    assert_int_equal(cl.nominal_ms, fire);
    assert_int_equal(odbc_leader_claim_fire(b, "rec", fire, 2, &cl),
                     ODBC_LEADER_CLAIM_TAKEN);
    assert_int_equal(odbc_leader_claim_fire(b, "cap", fire, 2, &cl),
                     ODBC_LEADER_CLAIM_RUN);
    assert_int_equal(cl.attempt, 2);
    /* the first attempt's late outcome is refused by its term; the
     * recovery's is recorded */
    assert_int_equal(odbc_leader_finish_fire(a, "rec", fire, ta, 0),
                     ODBC_LEADER_ESUPERSEDED);
    assert_int_equal(odbc_leader_finish_fire(b, "rec", fire, tb, 0), 0);
    f = fire_of(b, "rec", fire);
    assert_string_equal(f.state, "done");
    assert_int_equal(f.attempt, 2);
    assert_int_equal(f.term, tb);
    assert_string_equal(f.claimed_by, "lc-b");
    /* a job without recovery takes a late outcome after all */
    assert_int_equal(odbc_leader_finish_fire(a, "once", fire, ta, 0), 0);
    assert_string_equal(fire_of(b, "once", fire).state, "done");
    assert_int_equal(odbc_leader_tick(b, NULL), ODBC_LEADER_LEADER);
    assert_int_equal(offers_of(b).n, 0);

    /* b dies during cap's second and last attempt: abandoned */
    tc = lead(c, NULL);
    assert_true(tc > tb);
    assert_int_equal(offers_of(c).n, 0);
    f = fire_of(c, "cap", fire);
    assert_string_equal(f.state, "abandoned");
    assert_int_equal(f.attempt, 2);
    assert_int_equal(odbc_leader_claim_fire(c, "cap", fire, 2, &cl),
                     ODBC_LEADER_CLAIM_TAKEN);
    odbc_leader_destroy(c);
    odbc_leader_destroy(b);
    odbc_leader_destroy(a);
}

/* What odbc_leader_list_jobs() said of one job. */
struct one_job {
    const char *name;
    struct odbc_leader_job j;
    int found;
};

static void job_seen(void *ctx, const struct odbc_leader_job *j) {
    struct one_job *o = ctx;

    if (strcmp(j->job, o->name) == 0) {
        o->j = *j;
        o->found = 1;
    }
}

static struct odbc_leader_job job_of(odbc_leader_t *h, const char *name) {
    struct one_job o;

    memset(&o, 0, sizeof(o));
    o.name = name;
    assert_true(odbc_leader_list_jobs(h, job_seen, &o) >= 1);
    assert_true(o.found);
    return o.j;
}

/* Ticks h until its offers list key (at most 5 s). */
static void until_offered(odbc_leader_t *h, int64_t key) {
    int64_t until = mono_ms() + 5000;

    while (mono_ms() < until) {
        struct offers o;

        assert_int_equal(odbc_leader_tick(h, NULL), ODBC_LEADER_LEADER);
        o = offers_of(h);
        for (int i = 0; i < o.n && i < 8; i++)
            if (o.fire_ms[i] == key)
                return;
        sleep_ms(50);
    }
    fail_msg("run-now %lld never offered", (long long)key);
}

/* An operator's pause holds on the leader (its fires are refused and
 * recorded skipped, and stay skipped after the resume); a run-now is
 * offered to the leader at its next tick, runs once, and waits while its
 * job is paused. */
void paused_jobs_skip_and_run_now_runs_once(void **state) {
    char ns[64];
    odbc_leader_t *a, *op;
    struct odbc_leader_claim cl = {.struct_size = sizeof(cl)};
    struct odbc_leader_job j;
    int64_t ta, fire, k1, k2, k3;

    (void)state;
    ns_name(ns, sizeof(ns), "pause");
    a = make_ns(ns, "LeaderId=lp-a;" LC_SETTINGS);
    op = make_ns(ns, "LeaderId=lp-operator;" LC_SETTINGS); /* never ticks */
    ta = lead(a, NULL);
    fire = fire_of_now(a);
    assert_int_equal(odbc_leader_pause_job(op, "p", 1), 0);
    assert_int_equal(odbc_leader_claim_fire(a, "p", fire, 1, &cl),
                     ODBC_LEADER_CLAIM_PAUSED);
    assert_int_equal(cl.attempt, 0);
    assert_int_equal(odbc_leader_claim(a, "p", fire + 1), 0);
    assert_string_equal(fire_of(a, "p", fire).state, "skipped");
    j = job_of(op, "p");
    assert_true(j.paused);
    assert_string_equal(j.changed_by, "lp-operator");
    assert_int_equal(odbc_leader_pause_job(op, "p", 0), 0);
    assert_false(job_of(op, "p").paused);
    /* a fire skipped while paused stays skipped */
    assert_int_equal(odbc_leader_claim_fire(a, "p", fire, 1, &cl),
                     ODBC_LEADER_CLAIM_TAKEN);
    assert_int_equal(odbc_leader_claim_fire(a, "p", fire + 2, 1, &cl),
                     ODBC_LEADER_CLAIM_RUN);
    assert_int_equal(odbc_leader_finish_fire(a, "p", fire + 2, ta, 0), 0);

    /* run-now: offered at the leader's next tick, runs once */
    assert_int_equal(odbc_leader_trigger_job(op, "p", &k1), 0);
    assert_true(k1 < 0);
    assert_int_equal(odbc_leader_trigger_job(op, "p", &k2), 0);
    assert_true(k2 < k1);
    until_offered(a, k1);
    assert_int_equal(odbc_leader_claim_fire(a, "p", k1, 1, &cl),
                     ODBC_LEADER_CLAIM_RUN);
    assert_true(cl.triggered);
    assert_false(cl.recovering);
    assert_int_equal(cl.attempt, 1);
    assert_int_equal(cl.term, ta);
    assert_true(cl.nominal_ms >= fire);
    assert_int_equal(odbc_leader_claim_fire(a, "p", k1, 1, &cl),
                     ODBC_LEADER_CLAIM_TAKEN);
    assert_int_equal(odbc_leader_finish_fire(a, "p", k1, ta, 0), 0);
    assert_string_equal(fire_of(a, "p", k1).state, "done");
    /* a key no run-now has */
    assert_int_equal(odbc_leader_claim_fire(a, "p", k2 - 1000, 1, &cl),
                     ODBC_LEADER_ENOFIRE);
    /* the second run-now waits while the job is paused */
    assert_int_equal(odbc_leader_pause_job(op, "p", 1), 0);
    assert_int_equal(odbc_leader_claim_fire(a, "p", k2, 1, &cl),
                     ODBC_LEADER_CLAIM_PAUSED);
    assert_string_equal(fire_of(a, "p", k2).state, "pending");
    assert_int_equal(odbc_leader_pause_job(op, "p", 0), 0);
    assert_int_equal(odbc_leader_claim_fire(a, "p", k2, 1, &cl),
                     ODBC_LEADER_CLAIM_RUN);
    assert_int_equal(odbc_leader_finish_fire(a, "p", k2, ta, 1), 0);
    assert_string_equal(fire_of(a, "p", k2).state, "failed");
    j = job_of(op, "p");
    assert_int_equal(j.fires, 5); /* fire, fire + 1, fire + 2, k1, k2 */
    assert_int_equal(j.running, 0);
    assert_int_equal(j.offered, 0);
    assert_int_equal(j.last_fire_ms, fire + 2);
    assert_true(j.last_done_ms > 0);
    assert_true(j.last_failed_ms >= j.last_done_ms);
    /* a one-off key (fire 0) is not used up by a pause */
    assert_int_equal(odbc_leader_pause_job(op, "p", 1), 0);
    assert_int_equal(odbc_leader_claim_fire(a, "p", 0, 1, &cl),
                     ODBC_LEADER_CLAIM_PAUSED);
    assert_int_equal(odbc_leader_pause_job(op, "p", 0), 0);
    assert_int_equal(odbc_leader_claim_fire(a, "p", 0, 1, &cl),
                     ODBC_LEADER_CLAIM_RUN);
    /* a follower's claim of a run-now is refused by the lease */
    assert_int_equal(odbc_leader_trigger_job(op, "p", &k3), 0);
    assert_int_equal(odbc_leader_claim_fire(op, "p", k3, 1, &cl),
                     ODBC_LEADER_ENOTLEADER);
    /* bad input */
    assert_int_equal(odbc_leader_pause_job(op, "bad job", 1),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_trigger_job(op, "", &k3), ODBC_LEADER_EINVAL);
    odbc_leader_destroy(op);
    odbc_leader_destroy(a);
}

/* The take statement itself, through the port: an attempt of a fire is
 * taken again only by the holder of a later, unexpired term, once; never
 * in the term that claimed it (even by its own holder), never by a term
 * that is not the current one, never beyond the attempts the job
 * allows. The claim answers "already claimed" without a take when told
 * the fire is not offered. */
void take_needs_a_later_term(void **state) {
    char ns[64];
    struct odbc_leader__config ca, cb;
    struct odbc_leader__db *a, *b;
    struct odbc_leader__result res, seen;
    struct odbc_leader_claim cl = {.struct_size = sizeof(cl)};
    int64_t t1, t2, fire;

    (void)state;
    ns_name(ns, sizeof(ns), "take");
    a = port_open(&ca, ns, "tk-a", "LeaderTTL=1000;LeaderSafetyMargin=200");
    b = port_open(&cb, ns, "tk-b", "LeaderTTL=1000;LeaderSafetyMargin=200");
    assert_true(odbc_leader__db_has_lifecycle(a));
    assert_int_equal(odbc_leader__db_attempt(a, 0, 0, &res), 0);
    assert_true(res.won);
    t1 = res.term;
    fire = res.now_ms;
    assert_int_equal(odbc_leader__db_attempt(b, 0, 0, &seen), 0);
    assert_int_equal(odbc_leader__db_claim(a, t1, "j", fire, 2, 1, &cl),
                     ODBC_LEADER_CLAIM_RUN);
    assert_int_equal(cl.attempt, 1);
    /* the claiming term, its own holder included: not again */
    assert_int_equal(odbc_leader__db_take(a, t1, "j", fire, 2, &cl),
                     ODBC_LEADER_CLAIM_TAKEN);
    assert_int_equal(odbc_leader__db_claim(a, t1, "j", fire, 2, 1, &cl),
                     ODBC_LEADER_CLAIM_TAKEN);
    assert_int_equal(odbc_leader__db_claim(a, t1, "j", fire, 2, 0, &cl),
                     ODBC_LEADER_CLAIM_TAKEN);
    /* a later term that is not the current one: refused by the lease */
    assert_int_equal(odbc_leader__db_take(b, t1 + 1, "j", fire, 2, &cl),
                     ODBC_LEADER_ENOTLEADER);
    sleep_ms(1100);
    assert_int_equal(
        odbc_leader__db_attempt(b, seen.term, seen.expires_at_ms, &res), 0);
    assert_true(res.won);
    t2 = res.term;
    assert_int_equal(odbc_leader__db_sweep(b, t2), 1);
    assert_int_equal(odbc_leader__db_take(b, t2, "j", fire, 2, &cl),
                     ODBC_LEADER_CLAIM_RUN);
    assert_int_equal(cl.attempt, 2);
    assert_true(cl.recovering);
    assert_int_equal(cl.term, t2);
    /* the old term cannot take it back, and the cap holds */
    assert_int_equal(odbc_leader__db_take(a, t1, "j", fire, 2, &cl),
                     ODBC_LEADER_CLAIM_TAKEN);
    assert_int_equal(odbc_leader__db_take(b, t2, "j", fire, 2, &cl),
                     ODBC_LEADER_CLAIM_TAKEN);
    assert_int_equal(odbc_leader__db_finish(a, "j", fire, t1, 0),
                     ODBC_LEADER_ESUPERSEDED);
    assert_int_equal(odbc_leader__db_finish(b, "j", fire, t2, 0), 0);
    port_close(a, &ca);
    port_close(b, &cb);
}

/* The one member leads every shard. */
static int leads_every_shard(odbc_leader_group_t **m, int n) {
    (void)n;
    return led_by(m[0]) == odbc_leader_group_shards(m[0]);
}

/* A job of another shard than job's in a group of shards shards. */
static void other_shard_job(const char *job, uint32_t shards, char *out,
                            size_t len) {
    for (int i = 0; i < 1000; i++) {
        snprintf(out, len, "other-%d", i);
        if (odbc_leader_shard_of(out, shards) !=
            odbc_leader_shard_of(job, shards))
            return;
    }
    fail_msg("no job outside the shard of %s", job);
}

/* A sharded group's job is paused in its shard's namespace, whether an
 * operator names the group (a handle on the group's name, as the CLI and
 * serve have) or a member pauses it: the member leading the shard refuses
 * its fires and records them skipped, jobs of other shards run, the
 * group's job list shows it; a group claims at most once and takes no
 * run-now. */
void group_jobs_pause_in_their_shard(void **state) {
    char grp[64], shard[80], other[32];
    odbc_leader_group_t *m[1];
    odbc_leader_t *op, *sh;
    struct odbc_leader_claim cl = {.struct_size = sizeof(cl)};
    struct one_job listed;
    int64_t fire = (int64_t)time(NULL) * 1000, key = 0, term;
    uint32_t s = odbc_leader_shard_of("p", 4);

    (void)state;
    ns_name(grp, sizeof(grp), "gpause");
    m[0] = make_member(grp, "gp-a",
                       "LeaderShards=4;LeaderTTL=3000;"
                       "LeaderRenewInterval=200;LeaderSafetyMargin=600");
    assert_true(tick_members(m, 1, 100, 20000, leads_every_shard));
    term = odbc_leader_group_leadership(m[0], s, NULL);
    assert_true(term > 0);
    op = make_ns(grp, "LeaderId=gp-operator;" LC_SETTINGS); /* never ticks */
    snprintf(shard, sizeof(shard), "%s/%u", grp, (unsigned)s);
    sh = make_ns(shard, "LeaderId=gp-reader;" LC_SETTINGS); /* never ticks */
    /* an operator pauses through the group's name */
    assert_int_equal(odbc_leader_pause_job(op, "p", 1), 0);
    assert_int_equal(odbc_leader_group_claim_fire(m[0], "p", fire, 3, &cl),
                     ODBC_LEADER_CLAIM_PAUSED);
    assert_int_equal(cl.attempt, 0);
    assert_int_equal(odbc_leader_group_claim(m[0], "p", fire + 1), 0);
    assert_string_equal(fire_of(sh, "p", fire).state, "skipped");
    assert_true(job_of(sh, "p").paused);
    assert_true(job_of(op, "p").paused);
    assert_int_equal(job_of(op, "p").fires, 2);
    /* a member resumes: the next fire runs once, at most once, in the
     * shard's term */
    assert_int_equal(odbc_leader_group_pause_job(m[0], "p", 0), 0);
    assert_false(job_of(op, "p").paused);
    assert_int_equal(odbc_leader_group_claim_fire(m[0], "p", fire + 2, 3, &cl),
                     ODBC_LEADER_CLAIM_RUN);
    assert_int_equal(cl.attempt, 1);
    assert_int_equal(cl.max_attempts, 1);
    assert_false(cl.recovering);
    assert_int_equal(cl.term, term);
    assert_int_equal(cl.nominal_ms, fire + 2);
    assert_int_equal(odbc_leader_group_claim_fire(m[0], "p", fire + 2, 1, &cl),
                     ODBC_LEADER_CLAIM_TAKEN);
    assert_int_equal(odbc_leader_group_finish(m[0], "p", fire + 2, 0), 0);
    assert_string_equal(fire_of(sh, "p", fire + 2).state, "done");
    /* a member pauses p: a job of another shard still runs */
    other_shard_job("p", 4, other, sizeof(other));
    assert_int_equal(odbc_leader_group_pause_job(m[0], "p", 1), 0);
    assert_int_equal(odbc_leader_group_claim_fire(m[0], "p", fire + 3, 1, &cl),
                     ODBC_LEADER_CLAIM_PAUSED);
    assert_int_equal(odbc_leader_group_claim_fire(m[0], other, fire, 1, &cl),
                     ODBC_LEADER_CLAIM_RUN);
    assert_true(job_of(op, "p").paused);
    assert_false(job_of(op, other).paused);
    memset(&listed, 0, sizeof(listed));
    listed.name = "none";
    assert_int_equal(odbc_leader_list_jobs(op, job_seen, &listed), 2);
    /* no run-now for a group's job, through either handle */
    assert_int_equal(odbc_leader_trigger_job(op, "p", &key),
                     ODBC_LEADER_EGROUPOFFER);
    assert_int_equal(key, 0);
    assert_int_equal(odbc_leader_group_claim_fire(m[0], "p", -5, 1, &cl),
                     ODBC_LEADER_EGROUPOFFER);
    /* bad input */
    assert_int_equal(odbc_leader_group_pause_job(m[0], "bad job", 1),
                     ODBC_LEADER_EINVAL);
    assert_int_equal(odbc_leader_group_pause_job(NULL, "p", 1),
                     ODBC_LEADER_EINVAL);
    odbc_leader_destroy(sh);
    odbc_leader_destroy(op);
    odbc_leader_group_destroy(m[0]);
}
