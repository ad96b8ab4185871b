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
        let job = null;
        const next = (ms) => job.cronTime.getNextDateFrom(new Date(ms)).toMillis();
        job = this.CronJob.from({
            ...params,
            start: false,
            onTick: () => this.runner.fireDue(name, 'cron'),
        });
        this.runner.add(name, (fireMs, fire) => onTick.call(job, fire), next,
            identity(params.cronTime, params.timeZone, `cron ${versionOf('cron')} ` +
                "(DST gap: the gap's end; overlap: the first)"));
        if (params.start)
            job.start();
        return job;
    }
}

module.exports = { LeaderCronJob };
