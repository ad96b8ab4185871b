/* SPDX-License-Identifier: MIT */
/*
 * minicron_fire.c: which fires run. Without claims (an ABI 1.0 plugin), a
 * slot's jobs are started on crossing into it by a process that led
 * before it began; with claims, every wake-up claims the due fires not
 * settled yet, by the --misfire policy within the window, and starts those
 * claimed here; with ABI 1.4, a leader also runs the run-now requests its
 * ticks learned. The outcome of each claimed fire is recorded with
 * finish() (finish_fire() for its term), retried when that fails.
 */
#define _GNU_SOURCE
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "minicron.h"

/* finish() status of a claimed fire not started: it could not start, or
 * the term ended after the claim (80, as odbc-leader run --once records) */
#define START_FAILED 127
#define LOST_LEADERSHIP 80
#define FINISH_TRIES 5    /* finish() calls before an outcome is dropped */
#define CATCH_UP_MAX 1024 /* due slots handed to catch_up(), the newest */

/* 1 when job (borrowed) is due in slot. Slot k is matched as minute k
 * since the epoch: local time with 60-second slots, UTC else. */
static int slot_due(const struct minicron *mc, const struct cron_job *job,
                    int64_t slot) {
    time_t minute = (time_t)(slot * 60);
    struct tm tm;

    if (mc->slot_s == 60)
        localtime_r(&minute, &tm);
    else
        gmtime_r(&minute, &tm);
    return crontab_due(job, &tm);
}

/* Without claims: starts every job due in slot, as leader of term. */
static void fire_slot(struct minicron *mc, int64_t slot, int64_t term) {
    int fired = 0;

    for (size_t i = 0; i < mc->tab.n_jobs; i++) {
        if (!slot_due(mc, &mc->tab.jobs[i], slot))
            continue;
        start_job(mc, i, slot, slot_ms(mc, slot), term, 0);
        fired++;
    }
    say(mc, LOG_DEBUG, "slot %lld: leader of term %lld, %d job(s) due",
        (long long)slot, (long long)term, fired);
}

/*
 * Without claims, called once on entering slot (computed before this
 * call, so the question below is asked at or after the boundary). Fires
 * the slot when this process leads with the term it was already seen
 * leading in an earlier slot: two terms never overlap, so no other process
 * can pass the same test for this slot.
 */
void cross(struct minicron *mc, int64_t slot) {
    int64_t term = led_term(mc);

    if (term == 0) {
        say(mc, LOG_DEBUG, "slot %lld: not leader", (long long)slot);
        return;
    }
    if (term != mc->held_term || mc->held_since >= slot) {
        say(mc, LOG_INFO,
            "slot %lld: became leader (term %lld) too late "
            "for this slot, not firing",
            (long long)slot, (long long)term);
        return;
    }
    fire_slot(mc, slot, term);
}

/* Notes whether this process leads and, for a new term, in which slot it
 * was first seen (read after the question, so never too early). */
void observe(struct minicron *mc) {
    int64_t term = led_term(mc);
    int64_t slot = slot_at(mc, clock_ns(CLOCK_REALTIME));

    if (term == 0) {
        mc->held_term = 0;
    } else if (term != mc->held_term) {
        mc->held_term = term;
        mc->held_since = slot;
    }
}

/* Calls finish() (finish_fire() for the claim's term, with ABI 1.4) for
 * the outcome f (copied) that failed f->tries times before; keeps it to
 * try again after the next good tick when it fails, up to FINISH_TRIES
 * calls and MAX_RUNS outcomes. */
static void finish_or_keep(struct minicron *mc, struct pending_finish f) {
    int rc =
        LEADER_PLUGIN_HAS(mc->p, finish_fire)
            ? mc->p->finish_fire(mc->inst, f.job, f.fire_ms, f.term, f.status)
            : mc->p->finish(mc->inst, f.job, f.fire_ms, f.status);

    if (rc >= 0)
        return;
    f.tries++;
    if (f.tries >= FINISH_TRIES || mc->n_pending == MAX_RUNS) {
        say(mc, LOG_ERR, "finish %s at %lld (status %d): %s; not recorded",
            f.job, (long long)f.fire_ms, f.status, mc->p->strerror(rc));
        return;
    }
    say(mc, LOG_WARNING, "finish %s at %lld (status %d): %s; will retry", f.job,
        (long long)f.fire_ms, f.status, mc->p->strerror(rc));
    mc->pending[mc->n_pending++] = f;
}

/* Records status as the outcome of fire_ms of job (borrowed), claimed
 * in term. */
void record_finish(struct minicron *mc, const char *job, int64_t fire_ms,
                   int64_t term, int status) {
    finish_or_keep(mc, (struct pending_finish){job, fire_ms, term, status, 0});
}

/* Tries every pending finish() once more, in order; keeps the failures. */
void retry_finishes(struct minicron *mc) {
    size_t n = mc->n_pending;
    struct pending_finish todo[MAX_RUNS];

    memcpy(todo, mc->pending, n * sizeof(todo[0]));
    mc->n_pending = 0;
    for (size_t i = 0; i < n; i++)
        finish_or_keep(mc, todo[i]);
}

/* Logs why claiming stopped at slot for crontab line i: not leader
 * (info), or why (the plugin's static text, or a static string of ours),
 * a warning once until a claim gets an answer. */
static void claim_stopped(struct minicron *mc, size_t i, int64_t slot, int rc,
                          const char *why) {
    if (rc == LEADER_PLUGIN_ENOTLEADER) {
        say(mc, LOG_INFO, "slot %lld: line %u (%s): not leader, claims stop",
            (long long)slot, mc->tab.jobs[i].line, mc->jobs[i].name);
        return;
    }
    if (mc->claim_err == NULL || strcmp(mc->claim_err, why) != 0)
        say(mc, LOG_WARNING, "slot %lld: line %u (%s): not claimed yet: %s",
            (long long)slot, mc->tab.jobs[i].line, mc->jobs[i].name, why);
    mc->claim_err = why;
}

/*
 * Claims the fire of crontab line i in slot for term and starts it when
 * claimed here. Returns 1 when the fire is settled (claimed here, or
 * already claimed by anyone), 0 when claiming stops for this round: the
 * run table is full, this process does not lead, or an error left the
 * outcome unknown (the fire stays due).
 */
static int claim_fire(struct minicron *mc, size_t i, int64_t slot,
                      int64_t term) {
    const char *name = mc->jobs[i].name;
    int rc;

    if (mc->n_runs == MAX_RUNS) {
        claim_stopped(mc, i, slot, 0, "too many jobs running, it waits");
        return 0;
    }
    rc = mc->p->claim(mc->inst, name, slot_ms(mc, slot));
    if (rc == LEADER_PLUGIN_ESCHEDULE) {
        char why[ERR_MAX] = "";

        /* settled, not run: the ledger records this job's fires as
         * computed by another schedule (docs/schedules.md) */
        mc->p->last_error(mc->inst, NULL, NULL, NULL, why, sizeof(why));
        say(mc, LOG_ERR, "slot %lld: line %u (%s) not run: %s", (long long)slot,
            mc->tab.jobs[i].line, name, why);
        return 1;
    }
    if (rc < 0) {
        claim_stopped(mc, i, slot, rc, mc->p->strerror(rc));
        return 0;
    }
    mc->claim_err = NULL;
    if (rc == 0) {
        say(mc, LOG_INFO, "slot %lld: line %u (%s) already claimed",
            (long long)slot, mc->tab.jobs[i].line, name);
        return 1;
    }
    if (job_term(mc, name) != term) {
        say(mc, LOG_NOTICE,
            "slot %lld: line %u (%s): term %lld ended after the claim, "
            "not started",
            (long long)slot, mc->tab.jobs[i].line, name, (long long)term);
        record_finish(mc, name, slot_ms(mc, slot), term, LOST_LEADERSHIP);
    } else if (!start_job(mc, i, slot, slot_ms(mc, slot), term, 1)) {
        record_finish(mc, name, slot_ms(mc, slot), term, START_FAILED);
    }
    return 1;
}

/*
 * --misfire once: claims the newest slot from..now_slot in which crontab
 * line i is due, if any, and settles every slot up to now_slot (older
 * missed slots are coalesced into the newest). Returns 0 when claiming
 * stops for this round, else 1.
 */
static int settle_newest(struct minicron *mc, size_t i, int64_t from,
                         int64_t now_slot, int64_t term) {
    int64_t s = now_slot;

    while (s >= from && !slot_due(mc, &mc->tab.jobs[i], s))
        s--;
    if (s >= from && !claim_fire(mc, i, s, term))
        return 0;
    mc->jobs[i].settled = now_slot;
    return 1;
}

/*
 * Settles the slots from..now_slot of crontab line i, oldest first: claims
 * each due one (--misfire all and skip). Returns 0 when claiming stops for
 * this round (the slot it stopped at stays unsettled), else 1.
 */
static int settle_all(struct minicron *mc, size_t i, int64_t from,
                      int64_t now_slot, int64_t term) {
    for (int64_t s = from; s <= now_slot; s++) {
        if (slot_due(mc, &mc->tab.jobs[i], s) && !claim_fire(mc, i, s, term))
            return 0;
        mc->jobs[i].settled = s;
    }
    return 1;
}

/* The policy text of --misfire for the plugin's catch_up (ABI 1.7). */
static const char *policy_text(int misfire) {
    switch ((enum misfire)misfire) {
    case MISFIRE_SKIP:
        return "skip";
    case MISFIRE_ONCE:
        return "latest";
    case MISFIRE_ALL:
        return "all:1024"; /* every due slot handed in: CATCH_UP_MAX */
    }
    return "skip";
}

/*
 * With a plugin of ABI 1.7: settles the slots from..now_slot of crontab
 * line i by the plugin's catch-up policy (docs/catch-up.md), the same
 * decision on every host: the due slots, the present one (now_slot)
 * flagged, go to catch_up(), which answers which to claim by --misfire
 * within the window on the database clock (once: later than the
 * ledger's latest fire of the job); those are claimed oldest first. A lone
 * present slot is claimed without asking (a steady leader's fire costs no
 * read). Returns 0 when claiming stops for this round (the slot it stopped at
 * stays unsettled), else 1.
 */
static int settle_by_policy(struct minicron *mc, size_t i, int64_t from,
                            int64_t now_slot, int64_t term) {
    int64_t times[CATCH_UP_MAX];
    size_t n = 0, first = 0;
    int present, rc;

    /* the newest CATCH_UP_MAX due slots, newest first, then turned */
    for (int64_t s = now_slot; s >= from && n < CATCH_UP_MAX; s--)
        if (slot_due(mc, &mc->tab.jobs[i], s))
            times[n++] = slot_ms(mc, s);
    for (size_t a = 0, b = n; a + 1 < b; a++, b--) {
        int64_t t = times[a];

        times[a] = times[b - 1];
        times[b - 1] = t;
    }
    present = n > 0 && times[n - 1] == slot_ms(mc, now_slot);
    if (n == 1 && present) {
        rc = 1;
        first = 0;
    } else {
        rc = n == 0 ? 0
                    : mc->p->catch_up(
                          mc->inst, mc->jobs[i].name, policy_text(mc->misfire),
                          mc->window_ns / NS_PER_MS, present, times, n, &first);
    }
    if (rc < 0) {
        claim_stopped(mc, i, now_slot, rc, mc->p->strerror(rc));
        return 0;
    }
    if (n > (size_t)rc)
        say(mc, LOG_INFO,
            "line %u (%s): %zu due fire(s) not claimed here (--misfire %s, "
            "the window, or a later fire claimed already)",
            mc->tab.jobs[i].line, mc->jobs[i].name, n - (size_t)rc,
            policy_text(mc->misfire));
    for (size_t k = first; k < first + (size_t)rc; k++) {
        int64_t s = times[k] / (mc->slot_s * 1000);

        if (!claim_fire(mc, i, s, term)) {
            mc->jobs[i].settled = s - 1;
            return 0;
        }
    }
    mc->jobs[i].settled = now_slot;
    return 1;
}

/* The oldest slot the misfire window reaches at wall-clock time now_ns:
 * the first to begin at most window_ns ago, never after now's slot. */
static int64_t window_start(const struct minicron *mc, int64_t now_ns) {
    int64_t now_slot = slot_at(mc, now_ns);
    int64_t first = slot_at(mc, now_ns - mc->window_ns - 1) + 1;

    return first < now_slot ? first : now_slot;
}

/*
 * With claims, on every wake-up: when this process leads (in a group: for
 * each job whose shard it leads), claims the due fires of every job not
 * settled yet, by the --misfire policy, within the misfire window (skip:
 * only slots begun after this term was first seen), and starts those it
 * claims.
 */
void fire_due(struct minicron *mc) {
    int64_t term = led_term(mc), now = clock_ns(CLOCK_REALTIME);
    int64_t now_slot = slot_at(mc, now), lo = window_start(mc, now);

    if (mc->shards == 0 && (term == 0 || term != mc->held_term))
        return;
    if (mc->misfire == MISFIRE_SKIP && lo <= mc->held_since)
        lo = mc->held_since + 1;
    for (size_t i = 0; i < mc->tab.n_jobs; i++) {
        int64_t from = mc->jobs[i].settled + 1;
        int64_t t = mc->shards ? job_term(mc, mc->jobs[i].name) : term;
        int go;

        if (t == 0)
            continue; /* a group: another process leads its shard */
        if (from < lo)
            from = lo;
        if (LEADER_PLUGIN_HAS(mc->p, catch_up))
            go = settle_by_policy(mc, i, from, now_slot, t);
        else if (mc->misfire == MISFIRE_ONCE)
            go = settle_newest(mc, i, from, now_slot, t);
        else
            go = settle_all(mc, i, from, now_slot, t);
        /* one namespace: the round stops; a group: only this job's */
        if (!go && (mc->shards == 0 || mc->n_runs == MAX_RUNS))
            break;
    }
}

/* The crontab line of the job named name (borrowed), or -1. */
static long line_of(const struct minicron *mc, const char *name) {
    for (size_t i = 0; i < mc->tab.n_jobs; i++)
        if (strcmp(mc->jobs[i].name, name) == 0)
            return (long)i;
    return -1;
}

/* 1 when fire_ms of job (borrowed) runs here now. */
static int running(const struct minicron *mc, const char *job,
                   int64_t fire_ms) {
    for (size_t i = 0; i < mc->n_runs; i++)
        if (mc->runs[i].job == job && mc->runs[i].fire_ms == fire_ms)
            return 1;
    return 0;
}

/* Claims the run-now o (borrowed) of crontab line i and starts it when
 * claimed here, in the slot this process is in. */
static void run_now(struct minicron *mc, size_t i,
                    const struct leader_plugin_offer *o) {
    const char *name = mc->jobs[i].name;
    struct leader_plugin_claim c = {.struct_size = sizeof(c)};
    int rc = mc->p->claim_fire(mc->inst, name, o->fire_ms, 1, &c);

    if (rc != LEADER_PLUGIN_CLAIM_RUN) {
        if (rc < 0)
            say(mc, LOG_WARNING, "run-now %lld of line %u (%s): %s",
                (long long)o->fire_ms, mc->tab.jobs[i].line, name,
                mc->p->strerror(rc));
        return;
    }
    say(mc, LOG_INFO, "run-now %lld of line %u (%s) claimed in term %lld",
        (long long)o->fire_ms, mc->tab.jobs[i].line, name, (long long)c.term);
    if (job_term(mc, name) != c.term)
        record_finish(mc, name, o->fire_ms, c.term, LOST_LEADERSHIP);
    else if (!start_job(mc, i, mc->cur_slot, o->fire_ms, c.term, 1))
        record_finish(mc, name, o->fire_ms, c.term, START_FAILED);
}

/*
 * With a plugin of ABI 1.4, on every wake-up of a leader of one namespace:
 * runs the run-now requests (odbc-leader jobs trigger) its ticks learned,
 * each claimed once. Offers of interrupted fires are not taken: minicron
 * claims at most once, since a killed minicron's jobs outlive it (a second
 * attempt could run beside the first).
 */
void fire_offers(struct minicron *mc) {
    struct leader_plugin_offer v[16];
    int n;

    if (mc->shards != 0 || !LEADER_PLUGIN_HAS(mc->p, offers) ||
        !LEADER_PLUGIN_HAS(mc->p, claim_fire) || led_term(mc) == 0)
        return;
    n = mc->p->offers(mc->inst, v, 16);
    for (int k = 0; k < n && k < 16 && mc->n_runs < MAX_RUNS; k++) {
        long i = line_of(mc, v[k].job);

        if (v[k].fire_ms >= 0 || i < 0 ||
            running(mc, mc->jobs[i].name, v[k].fire_ms))
            continue;
        run_now(mc, (size_t)i, &v[k]);
    }
}
