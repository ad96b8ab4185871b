// SPDX-License-Identifier: MIT
// lib/croner.js: croner on odbc-leader. croner hands its callback only
// the job, not the time it was due: the fire's nominal time is the latest
// time of the pattern at or before the moment the callback runs (croner
// never calls early). A callback that runs more than one period late is
// counted as the latest fire it is late for; the fires it skipped are run
// then too (within the grace), as are those a new leader finds unrun.
'use strict';

const { FireRunner, identity, versionOf } = require('./runner');

/**
 * croner over leader (a started Leader). options: graceMs (the catch-up
 * window, default 60 s; also the latest a callback may run after its
 * fire time), Cron (croner's class; default require('croner').Cron).
 */
class LeaderCron {
    constructor(leader, options = {}) {
        this.leader = leader;
        this.Cron = options.Cron || require('croner').Cron;
        this.runner = new FireRunner(leader, options);
    }

    /**
     * new Cron(pattern, options, fn) whose every fire is claimed under its
     * nominal time: fn(job, fire) runs on one host, with currentFire()
     * set. options.name is required (the job's name in the ledger).
     * Returns the Cron.
     */
    schedule(pattern, options, fn) {
        const name = options && options.name;
        if (!name)
            throw new TypeError('LeaderCron.schedule: options.name is required');
        let job = null;
        const next = (ms) => {
            const d = job.nextRun(new Date(ms));
            return d ? d.getTime() : null;
        };
        job = new this.Cron(pattern, { ...options, paused: true },
            () => this.runner.fireDue(name, 'croner'));
        this.runner.add(name, (fireMs, fire) => fn(job, fire), next,
            identity(pattern, options.timezone, `croner ${versionOf('croner')} ` +
                "(DST gap: the gap's end; overlap: the first)"));
        if (!(options && options.paused))
            job.resume();
        return job;
    }
}

module.exports = { LeaderCron };
