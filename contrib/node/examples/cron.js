// SPDX-License-Identifier: MIT
// examples/cron.js: one cron (kelektiv) job whose every tick runs on one
// host, claimed under its nominal time (computed from the cronTime).
//   node examples/cron.js --plugin SO --connect STR --namespace NS \
//       --every SECONDS [--ttl MS]
// Prints "FIRE <job> <fire_ms> <term> <attempt>" per fire it runs; SIGTERM hands over.
'use strict';

const { CronJob } = require('cron');
const { currentFire } = require('odbc-leader');
const { LeaderCronJob } = require('odbc-leader/cron');
const { main, whenOf, printFire } = require('./common');

main('examples/cron.js', (leader, a, opts) => {
    const c = new LeaderCronJob(leader, { ...opts, CronJob });
    const w = whenOf(a);
    const jobs = a.names.map((name) => c.from({ name, cronTime: w.expr,
        timeZone: w.tz, start: true, onTick: () => printFire(currentFire()) }));
    return async () => {
        for (const j of jobs)
            await j.stop();
    };
});
