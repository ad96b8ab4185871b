// SPDX-License-Identifier: MIT
// lib/runner.js: what every scheduler integration shares. A FireRunner
// holds the jobs of one scheduler, each with its name, its function and a
// way to compute its fire times from its schedule (never from the clock);
// it claims and runs each fire through a Leader, catches up the fires that
// fell due while no one led (within a grace) when this host gains a job,
// and, on each fire, those this host's timer skipped since its last one.
'use strict';

const fs = require('fs');
const path = require('path');

const DEFAULT_GRACE_MS = 60000;
const MAX_CATCH_UP = 10000; // fires per job and catch-up, at most

/**
 * The fire times of a schedule in (fromMs, toMs], oldest first, at most
 * max of them. next(ms) gives the first fire time strictly after ms (epoch
 * ms), or null.
 */
function slotsIn(next, fromMs, toMs, max = MAX_CATCH_UP) {
    const out = [];
    let t = next(fromMs);
    while (t !== null && t > fromMs && t <= toMs && out.length < max) {
        out.push(t);
        const after = next(t);
        if (after !== null && after <= t)
            break; // a schedule that does not move on: no endless loop
        t = after;
    }
    return out;
}

/**
 * The latest fire time at or before nowMs and no older than maxBackMs,
 * or null: the nominal time of a callback that only knows "now". Looks
 * back 2 s first, then 4 times further each time.
 */
function latestSlot(next, nowMs, maxBackMs) {
    for (let back = 2000; ; back *= 4) {
        const w = Math.min(back, maxBackMs);
        const slots = slotsIn(next, nowMs - w - 1, nowMs, Infinity);
        if (slots.length > 0)
            return slots[slots.length - 1];
        if (w >= maxBackMs)
            return null;
    }
}

/**
 * next kept to the first pass of an hour the autumn change repeats (the
 * rule "overlap: the first" of every Node engine's identity; cron and
 * cron-parser compute a daily 01:30's second pass when asked from within
 * the repeated hour). The rule is the plugin's (ABI 1.8, docs/schedules.md);
 * this only hands it next and the wall time in zone tz (an IANA name, or
 * undefined for the host's zone). plugin() returns the loaded Plugin, or
 * null before start(): then, as with a plugin before ABI 1.8, next's times
 * are kept as they are. Returns the function, whose dropped(t) says
 * whether fire time t is a second pass not to be run.
 */
function firstPassOnly(next, tz, plugin) {
    const fmt = new Intl.DateTimeFormat('en-US', {
        timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric',
        day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    const sameWall = (a, b) => fmt.format(new Date(a)) === fmt.format(new Date(b));
    const rule = () => {
        const p = plugin();
        return p && p.has('second_pass') ? p : null;
    };
    const kept = (ms) => {
        const p = rule();
        return p ? p.firstPassNext(next, sameWall, ms) : next(ms);
    };
    kept.dropped = (t) => {
        const p = rule();
        return p !== null && p.secondPass(next, sameWall, t);
    };
    return kept;
}

/**
 * Runs the fires of a scheduler's jobs through leader. options: graceMs
 * (default 60 s: how old a fire may be and still be caught up), catchUp
 * (the catch-up policy of docs/catch-up.md: 'all', the default,
 * 'all:CAP', 'latest' or 'skip'), log,
 * maxAttempts (how many times a fire may run when its host dies before it
 * ends: 1, the default, at most once; a number for every job, or an
 * object { job: attempts }, other jobs 1). Fires offered to the leader
 * (recoveries of interrupted fires, run-now requests of `odbc-leader jobs
 * trigger`) run through the same jobs; a paused job's fires do not run.
 */
class FireRunner {
    constructor(leader, options = {}) {
        this.leader = leader;
        this.graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
        this.catchUpPolicy = options.catchUp ?? 'all';
        this.maxAttempts = options.maxAttempts ?? 1;
        this.jobs = new Map(); // name -> { fn, next, last }
        this._offered = new Set(); // `${job} ${fireMs}` of offers under way
        this._added = new Set(); // jobs added while led, caught up soon
        this._log = options.log || ((level, msg) => leader.log(level, msg));
        this._onElected = () => this.catchUp();
        this._onShard = ({ shard, isLeader }) => {
            if (isLeader)
                this.catchUp(shard);
        };
        this._onOffers = (offers) => this.runOffers(offers);
        leader.on('elected', this._onElected);
        leader.on('shard', this._onShard);
        leader.on('offers', this._onOffers);
    }

    /** Stops catching up on leadership changes and running offers (the
     * jobs stay). */
    close() {
        this.leader.off('elected', this._onElected);
        this.leader.off('shard', this._onShard);
        this.leader.off('offers', this._onOffers);
    }

    /** The attempts a fire of job may take (options.maxAttempts). */
    attemptsOf(name) {
        const m = this.maxAttempts;
        return typeof m === 'number' ? m : (m[name] ?? 1);
    }

    /**
     * Runs the offered fires of this runner's jobs, each once while it is
     * under way (its claim runs it at most once in any case). A run-now's
     * job gets the time it runs at, not its key.
     */
    runOffers(offers) {
        for (const o of offers) {
            const job = this.jobs.get(o.job);
            const key = `${o.job} ${o.fireMs}`;
            if (!job || this._offered.has(key))
                continue;
            this._offered.add(key);
            const attempts = Math.max(o.maxAttempts, this.attemptsOf(o.job));
            this.leader.runFire(o.job, o.fireMs, (fire) => {
                this._log(6, `running ${o.job} at ${o.fireMs}: ${fire.triggered ?
                    'run-now' : 'recovery'}, attempt ${fire.attempt} (term ${fire.term})`);
                return job.fn(fire.triggered ? Date.now() : o.fireMs, fire);
            }, attempts).catch((e) => {
                this._log(3, `offered ${o.job} at ${o.fireMs}: ${e && e.message}`);
            }).finally(() => this._offered.delete(key));
        }
    }

    /**
     * Adds job name: fn(fireMs, fire) runs each fire this host claims;
     * next(ms) is the first fire time strictly after ms from the job's
     * schedule (null: none); schedule ({ expr, tz, engine }, optional)
     * its identity (docs/schedules.md), said to the leader before the
     * job's first claim: a host computing the job's fires otherwise has
     * its claims refused.
     */
    add(name, fn, next, schedule = null) {
        if (this.jobs.has(name))
            throw new Error(`odbc-leader: a job named ${name} is already scheduled`);
        const declared = schedule === null ? Promise.resolve()
            : this.leader.setSchedule(name, schedule.expr, schedule.tz,
                schedule.engine).then(() => undefined, (e) => {
                this._log(3, `job ${name}: its schedule cannot be said: ${e.message}`);
                throw e;
            });
        declared.catch(() => {}); // logged; _runOne waits on it
        // a zone with DST (not "" of an interval): the first pass only
        const tz = schedule === null ? undefined : schedule.tz ?? undefined;
        const kept = next && tz !== ''
            ? firstPassOnly(next, tz, () => this.leader.plugin) : next;
        this.jobs.set(name, { fn, next: kept, last: null, declared });
        if (kept && this.leader.leads?.(name))
            this._catchUpAdded(name);
    }

    /**
     * Catches up job name, added while this host led it already: a host
     * elected within its Leader.start(), before its jobs were added, had
     * nothing to catch up when it won. The jobs added in one turn of the
     * event loop are caught up together, oldest fire first.
     */
    _catchUpAdded(name) {
        this._added.add(name);
        if (this._added.size > 1)
            return;
        setImmediate(() => {
            const names = new Set(this._added);
            this._added.clear();
            this.catchUp(undefined, names).catch((e) =>
                this._log(3, `catching up added jobs: ${e && e.message}`));
        });
    }

    remove(name) {
        this.jobs.delete(name);
    }

    /**
     * The scheduler fired job at nominal time fireMs: claims and runs
     * fireMs and, as the library's catch-up policy says (docs/catch-up.md),
     * the fires of job this host skipped since the last one it saw (a late
     * timer, a paused process) within the grace. Resolves when they have
     * run; a failed fire is logged.
     */
    async fire(name, fireMs) {
        const job = this.jobs.get(name);
        if (!job)
            return;
        if (job.next && job.next.dropped && job.next.dropped(fireMs)) {
            this._log(6, `job ${name} at ${new Date(fireMs).toISOString()}: ` +
                'the second pass of a repeated hour, not run (its first ran)');
            return;
        }
        const skipped = job.last !== null && job.next ? slotsIn(job.next,
            Math.max(job.last, fireMs - this.graceMs), fireMs - 1) : [];
        if (job.last === null || fireMs > job.last)
            job.last = fireMs;
        for (const t of await this._dueOf(name, skipped, fireMs))
            await this._runOne(name, job, t);
    }

    /**
     * Of the skipped fire times of job name and the fire due now (fireMs),
     * those the catch-up policy names, oldest first; fireMs alone when
     * none was skipped, when this host does not lead the job (its claims
     * would not run) or when the policy's read failed (logged).
     */
    async _dueOf(name, skipped, fireMs) {
        if (skipped.length === 0 || !this.leader.leads?.(name))
            return [fireMs];
        return this._policy(name, [...skipped, fireMs], true);
    }

    /**
     * Of the fire times of job name (present: the last is the fire due
     * now), those the catch-up policy names; when the read failed
     * (logged), none, or the present one alone.
     */
    async _policy(name, times, present) {
        if (times.length === 0)
            return [];
        try {
            return await this.leader.catchUp(name, times, this.catchUpPolicy,
                this.graceMs, { present });
        } catch (e) {
            this._log(4, `catching up job ${name}: ${e && e.message}`);
            return present ? [times.at(-1)] : [];
        }
    }

    /**
     * A scheduler that hands its callback only "now" fired job name: runs
     * fire() at the nominal time, the latest fire time of the job's
     * schedule at or before now; none within the grace: logs a warning and
     * runs nothing. what names the scheduler in that warning.
     */
    fireDue(name, what) {
        const job = this.jobs.get(name);
        if (!job)
            return undefined;
        const fireMs = latestSlot(job.next, Date.now(), this.graceMs);
        if (fireMs === null) {
            this._log(4, `${what} job ${name}: no fire time of its schedule within ` +
                'the grace before now (a late wake-up, or the second pass of a repeated ' +
                'hour): nothing run');
            return undefined;
        }
        return this.fire(name, fireMs);
    }

    async _runOne(name, job, fireMs) {
        try {
            await job.declared; // a schedule that cannot be said: no claim
            await this.leader.runFire(name, fireMs, (fire) => job.fn(fireMs, fire),
                this.attemptsOf(name));
        } catch (e) {
            this._log(3, `job ${name} at ${new Date(fireMs).toISOString()}: ${e && e.message}`);
        }
    }

    /**
     * Claims and runs, oldest first across the jobs, the fires within the
     * grace that the library's catch-up policy names (docs/catch-up.md),
     * of every job (of
     * shard's jobs, when given; of the names in the set names, when given)
     * this host leads. Called when this host gains leadership or a shard,
     * and for jobs added while it leads them.
     */
    async catchUp(shard, names) {
        const now = Date.now();
        const due = [];
        for (const [name, job] of this.jobs) {
            if (!job.next || (names !== undefined && !names.has(name)))
                continue;
            if (shard !== undefined && this.leader.shardOf(name) !== shard)
                continue;
            const times = slotsIn(job.next, now - this.graceMs - 1, now);
            for (const t of await this._policy(name, times, false))
                due.push([t, name, job]);
        }
        due.sort((a, b) => a[0] - b[0]);
        for (const [t, name, job] of due) {
            if (!this.leader.leads(name))
                continue;
            await this._runOne(name, job, t);
            if (job.last === null || t > job.last)
                job.last = t;
        }
    }
}

/**
 * The version of package pkg as installed where from (a module path)
 * resolves it, or '?'.
 */
function versionOf(pkg, from = __dirname) {
    try {
        let dir = path.dirname(require.resolve(pkg, { paths: [from] }));
        for (;;) {
            const f = path.join(dir, 'package.json');
            if (fs.existsSync(f)) {
                const j = JSON.parse(fs.readFileSync(f, 'utf8'));
                if (j.name === pkg)
                    return j.version;
            }
            const up = path.dirname(dir);
            if (up === dir)
                return '?';
            dir = up;
        }
    } catch {
        return '?';
    }
}

/**
 * A schedule identity (docs/schedules.md) for FireRunner.add(): expr (a
 * cron string becomes "cron EXPR", a Date "date ISO" with no zone,
 * anything else its JSON), tz the zone the engine computes in (undefined
 * or null: the host's, as the library names it), engine its name and
 * version and its DST rule.
 */
function identity(spec, tz, engine) {
    if (spec instanceof Date)
        return { expr: `date ${spec.toISOString()}`, tz: '', engine };
    if (typeof spec === 'string')
        return { expr: `cron ${spec}`, tz: tz ?? null, engine };
    return { expr: `spec ${JSON.stringify(spec)}`, tz: tz ?? null, engine };
}

module.exports = {
    FireRunner, slotsIn, latestSlot, firstPassOnly, DEFAULT_GRACE_MS, identity, versionOf,
};
