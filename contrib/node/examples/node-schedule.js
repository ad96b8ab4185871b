// SPDX-License-Identifier: MIT
// examples/node-schedule.js: one node-schedule job whose every fire runs
// on one host, claimed under the fireDate node-schedule hands the job.
//   node examples/node-schedule.js --plugin SO --connect STR --namespace NS \
//       --every SECONDS [--ttl MS]
// Prints "FIRE <job> <fire_ms> <term> <attempt>" per fire it runs; SIGTERM hands over.
'use strict';

const schedule = require('node-schedule');
const { currentFire } = require('odbc-leader');
const { LeaderSchedule } = require('odbc-leader/node-schedule');
const { main, whenOf, printFire } = require('./common');

main('examples/node-schedule.js', (leader, a, opts) => {
    const w = whenOf(a);
    const s = new LeaderSchedule(leader, { ...opts, schedule });
    for (const name of a.names)
        s.scheduleJob(name, { rule: w.expr, tz: w.tz }, () => printFire(currentFire()));
    return () => schedule.gracefulShutdown();
});
