// SPDX-License-Identifier: MIT
// lib/cron.js: cron (kelektiv's, the engine of NestJS's scheduler) on
// odbc-leader. Its onTick gets no time: the fire's nominal time is the
// latest time of the cronTime at or before the moment onTick runs (cron
// never ticks early). A tick more than one period late is counted as the
// latest fire it is late for; the fires it skipped are run then too
// (within the grace), as are those a new leader finds unrun.
'use strict';

const { FireRunner, identity, versionOf } = require('./runner');

/**
 * cron over leader (a started Leader). options: graceMs (the catch-up
 * window, default 60 s; also the latest a tick may run after its fire
 * time), CronJob (cron's class; default require('cron').CronJob).
 */
class LeaderCronJob {
    constructor(leader, options = {}) {
        this.leader = leader;
        this.CronJob = options.CronJob || require('cron').CronJob;
        this.runner = new FireRunner(leader, options);
    }

    /**
     * CronJob.from(params) whose every tick is claimed under its nominal
     * time: params.onTick(fire) runs on one host, with currentFire() set.
     * params.name is required (the job's name in the ledger). Returns the
     * CronJob.
     */
    from(params) {
        const name = params && params.name;
        if (!name)
            throw new TypeError('LeaderCronJob.from: params.name is required');
        const onTick = params.onTick;
        const job = this.CronJob.from({
            ...params,
            start: false,
            onTick: () => this.runner.fireDue(name, 'cron'),
        });
        const offset = params.utcOffset != null ? offsetZone(params.utcOffset) : null;
        const engine = `cron ${versionOf('cron')} ` +
            "(DST gap: the gap's end; overlap: the first)";
        this.runner.add(name, (fireMs, fire) => onTick.call(job, fire),
            LeaderCronJob.nextOf(job),
            offset === null ? identity(params.cronTime, params.timeZone, engine)
                : identity(`${params.cronTime} (${offset})`, 'Etc/UTC', engine));
        if (params.start)
            job.start();
        return job;
    }

    /**
     * The next-fire function of a CronJob: epoch ms -> the job's next fire
     * after it, computed in the job's zone or UTC offset as cron's own
     * timer does (getNextDateFrom alone computes in the host's zone).
     */
    static nextOf(job) {
        const ct = job.cronTime;
        const zone = ct.utcOffset !== undefined ? offsetZone(ct.utcOffset) : ct.timeZone;
        return (ms) => ct.getNextDateFrom(new Date(ms), zone).toMillis();
    }
}

/** cron's utcOffset (minutes east of UTC) as a fixed zone: "UTC+05:30". */
function offsetZone(minutes) {
    const abs = Math.abs(minutes);
    const hh = String(Math.trunc(abs / 60)).padStart(2, '0');
    const mm = String(abs % 60).padStart(2, '0');
    return `UTC${minutes < 0 ? '-' : '+'}${hh}:${mm}`;
}

module.exports = { LeaderCronJob };
