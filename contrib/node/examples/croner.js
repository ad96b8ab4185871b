// SPDX-License-Identifier: MIT
// examples/croner.js: one croner job whose every fire runs on one host,
// claimed under its nominal time (computed from the pattern).
//   node examples/croner.js --plugin SO --connect STR --namespace NS \
//       --every SECONDS [--ttl MS]
// Prints "FIRE <job> <fire_ms> <term> <attempt>" per fire it runs; SIGTERM hands over.
'use strict';

const { Cron } = require('croner');
const { currentFire } = require('odbc-leader');
const { LeaderCron } = require('odbc-leader/croner');
const { main, whenOf, printFire } = require('./common');

main('examples/croner.js', (leader, a, opts) => {
    const c = new LeaderCron(leader, { ...opts, Cron });
    const w = whenOf(a);
    const jobs = a.names.map((name) => c.schedule(w.expr,
        { name, timezone: w.tz }, () => printFire(currentFire())));
    return () => {
        for (const j of jobs)
            j.stop();
    };
});
