// SPDX-License-Identifier: MIT
// lib/node-schedule.js: node-schedule on odbc-leader. scheduleJob() has
// node-schedule's shape and claims each fire under the fireDate
// node-schedule hands the job (its nominal time), so each fire runs on
// one host; a host that gains leadership catches up the fires within the
// grace that nobody ran (cron strings and RecurrenceRules: their fire
// times are computed from the schedule).
'use strict';

const { FireRunner, identity, versionOf } = require('./runner');

/** next(ms) for a node-schedule spec, or null when its fire times cannot
 * be listed (a Date, an object spec): such a job is not caught up. */
function nextOf(schedule, spec, tz) {
    if (spec instanceof schedule.RecurrenceRule) {
        return (ms) => {
            const d = spec.nextInvocationDate(new Date(ms));
            return d ? d.getTime() : null;
        };
    }
    if (spec && typeof spec === 'object' && typeof spec.rule === 'string')
        return nextOf(schedule, spec.rule, spec.tz ?? tz);
    if (typeof spec === 'string') {
        const cronParser = require(require.resolve('cron-parser',
            { paths: [require.resolve('node-schedule')] }));
        return (ms) => {
            try {
                return cronParser.parseExpression(spec, { currentDate: new Date(ms), tz })
                    .next().getTime();
            } catch {
                return null;
            }
        };
    }
    return null;
}

/**
 * node-schedule over leader (a started Leader). options: graceMs (the
 * catch-up window, default 60 s), schedule (the node-schedule module;
 * default require('node-schedule')), tz (for cron strings).
 */
class LeaderSchedule {
    constructor(leader, options = {}) {
        this.leader = leader;
        this.schedule = options.schedule || require('node-schedule');
        this.tz = options.tz;
        this.runner = new FireRunner(leader, options);
    }

    /**
     * schedule.scheduleJob(name, spec, fn), each fire claimed: fn(fireDate)
     * runs on the one host that claimed (name, fireDate), with
     * currentFire() set. Returns node-schedule's Job (cancel() it, then
     * call cancelJob(name) here).
     */
    scheduleJob(name, spec, fn) {
        if (typeof name !== 'string' || !name)
            throw new TypeError('LeaderSchedule.scheduleJob: a job name is required');
        const parser = versionOf('cron-parser', require.resolve('node-schedule'));
        this.runner.add(name, (fireMs) => fn(new Date(fireMs)),
            nextOf(this.schedule, spec, this.tz),
            identity(typeof spec.rule === 'string' ? spec.rule : spec,
                typeof spec === 'string' ? this.tz : spec.tz,
                `node-schedule ${versionOf('node-schedule')} with cron-parser ` +
                `${parser} (DST gap: an hour later; overlap: the first)`));
        return this.schedule.scheduleJob(name, spec,
            (fireDate) => this.runner.fire(name, fireDate.getTime()));
    }

    /** Cancels job name in node-schedule and here. */
    cancelJob(name) {
        this.runner.remove(name);
        return this.schedule.cancelJob(name);
    }
}

module.exports = { LeaderSchedule };
