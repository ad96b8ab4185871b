// SPDX-License-Identifier: MIT
// examples/node-cron.js: one node-cron task whose every fire runs on one
// host, through LeaderCoordinator (node-cron's RunCoordinator).
//   node examples/node-cron.js --plugin SO --connect STR --namespace NS \
//       (--every SECONDS | --cron EXPR [--tz NAME]) [--ttl MS]
// Prints "FIRE <job> <fire_ms> <term> <attempt>" per fire it runs; SIGTERM hands over.
'use strict';

const cron = require('node-cron');
const { currentFire } = require('odbc-leader');
const { LeaderCoordinator } = require('odbc-leader/node-cron');
const { main, whenOf, printFire } = require('./common');

main('examples/node-cron.js', (leader, a, opts) => {
    const coordinator = new LeaderCoordinator(leader, { ...opts, cron });
    const w = whenOf(a);
    const tasks = a.names.map((name) => coordinator.schedule(w.expr, name,
        () => printFire(currentFire()), { noOverlap: false, timezone: w.tz }));
    return async () => {
        for (const t of tasks)
            await t.stop();
    };
});
