// SPDX-License-Identifier: MIT
// lib/node-cron.js: node-cron 4.x on odbc-leader. LeaderCoordinator is a
// node-cron RunCoordinator: shouldRun(key) claims the fire (task name,
// slot) in the fire ledger for the term this host leads, onComplete(key)
// records its outcome. The claim row outlives the run, so a host whose
// timer wakes late, or a new leader catching up, never runs the fire
// again. schedule() adds a task whose missed fires a new leader catches
// up within the grace.
'use strict';

const { FireRunner, identity, versionOf } = require('./runner');
const { fireStore } = require('./leader');

const ISO_LEN = 24; // "2026-01-01T00:00:00.000Z"

/** (job, fireMs) of a node-cron coordinator key "name:ISO", or null. */
function parseKey(key) {
    if (typeof key !== 'string' || key.length < ISO_LEN + 2 ||
        key[key.length - ISO_LEN - 1] !== ':')
        return null;
    const fireMs = Date.parse(key.slice(-ISO_LEN));
    if (!Number.isFinite(fireMs))
        return null;
    return { job: key.slice(0, -ISO_LEN - 1), fireMs };
}

/**
 * A RunCoordinator over leader (a started Leader). options: graceMs (the
 * catch-up window, default 60 s), cron (the node-cron module; default
 * require('node-cron')).
 */
class LeaderCoordinator {
    constructor(leader, options = {}) {
        this.leader = leader;
        this.runner = new FireRunner(leader, options);
        this._cron = options.cron;
        this._fires = new Map(); // key -> { fire, status }
    }

    /**
     * node-cron's hook: claims the fire named by key. Resolves to true
     * when this host claimed it (run it), false when it is not this
     * host's (claimed before, or this host does not lead the task); a
     * failed claim rejects, and node-cron skips the fire (fail-closed).
     */
    async shouldRun(key, _ttlMs) {
        const k = parseKey(key);
        if (k === null)
            throw new Error(`odbc-leader: not a node-cron key: ${key}`);
        // tracked from before the claim: a stop() that comes while the
        // claim is under way waits for the run and its finish, not only
        // for fires already claimed
        let release;
        this.leader.track(new Promise((resolve) => { release = resolve; }));
        let fire;
        try {
            fire = await this.leader.claim(k.job, k.fireMs,
                this.runner.attemptsOf(k.job));
        } catch (e) {
            release();
            throw e;
        }
        if (fire === null) {
            release();
            return false;
        }
        this._fires.set(key, { fire, status: 0, release });
        return true;
    }

    /** node-cron's hook after the run: records the outcome. The ledger
     * row stays: the fire is never run again. */
    async onComplete(key) {
        const f = this._fires.get(key);
        if (f === undefined)
            return;
        this._fires.delete(key);
        try {
            await this.leader.finish(f.fire, f.status);
        } finally {
            f.release();
        }
    }

    /**
     * Schedules fn(context) as the node-cron task name on expression,
     * distributed through this coordinator: each fire runs on one host,
     * with currentFire() set. options are node-cron's (name, distributed
     * and runCoordinator are set here). Returns the ScheduledTask.
     */
    schedule(expression, name, fn, options = {}) {
        const cron = this._cron || require('node-cron');
        if (!name)
            throw new TypeError('LeaderCoordinator.schedule: a task name is required');
        const task = cron.schedule(expression, (ctx) => {
            const key = `${name}:${ctx.date.toISOString()}`;
            const f = this._fires.get(key);
            if (f === undefined) // invoked by hand: not a claimed fire
                return fn(ctx);
            return fireStore.run(f.fire, async () => {
                try {
                    return await fn(ctx);
                } catch (e) {
                    f.status = 1;
                    throw e;
                }
            });
        }, { ...options, name, distributed: true, runCoordinator: this });
        this.runner.add(name, (fireMs, fire) => fn({
            date: new Date(fireMs), dateLocalIso: new Date(fireMs).toISOString(),
            triggeredAt: new Date(), task, fire,
        }), (ms) => nextMatch(task, ms), identity(expression, options.timezone,
            `node-cron ${versionOf('node-cron')} (DST gap: skipped; overlap: the first)`));
        return task;
    }
}

/** The first second strictly after ms that task matches, within a day;
 * null past that (node-cron's public match()). */
function nextMatch(task, ms) {
    let t = Math.floor(ms / 1000) * 1000 + 1000;
    for (let i = 0; i < 86400; i++, t += 1000) {
        if (task.match(new Date(t)))
            return t;
    }
    return null;
}

module.exports = { LeaderCoordinator, parseKey, nextMatch };
