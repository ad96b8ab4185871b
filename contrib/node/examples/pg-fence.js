// SPDX-License-Identifier: MIT
// examples/pg-fence.js: a job whose write to PostgreSQL (with the pg
// client) applies only while its fire's term still holds, by the
// database's clock: a leader that was paused past its lease and wakes up
// writes nothing (docs/fencing.md). The lease table must be in the
// database the job writes to; the predicate comes from the leader's
// plugin (leader.fence(): no odbc-leader command needed).
//   node examples/pg-fence.js --plugin SO --connect ODBC-STR --pg PG-URL \
//       --namespace NS
// Claims one fire of the job "report" now, writes a row fenced by its term
// and prints how many rows the write changed (0: fenced out).
'use strict';

const { parseArgs } = require('node:util');
const { Client } = require('pg');
const { Leader } = require('odbc-leader');

async function main() {
    const { values: a } = parseArgs({ options: {
        plugin: { type: 'string' }, connect: { type: 'string' },
        pg: { type: 'string' }, namespace: { type: 'string', default: 'report' },
    } });
    const leader = new Leader({ connect: a.connect, namespace: a.namespace, plugin: a.plugin });
    await leader.start();
    const pg = new Client({ connectionString: a.pg });
    await pg.connect();
    await pg.query('CREATE TABLE IF NOT EXISTS report (fire_ms BIGINT PRIMARY KEY, body TEXT)');
    const fireMs = Math.floor(Date.now() / 1000) * 1000;
    const r = await leader.runFire('report', fireMs, async (fire) => {
        const f = await leader.fence({ job: fire.job, placeholder: '$' });
        const s = f.statement(
            'INSERT INTO report (fire_ms, body) SELECT $1, $2 WHERE TRUE',
            [fire.fireMs, `written in term ${fire.term}`], fire.term);
        return (await pg.query(s.text, s.values)).rowCount;
    });
    console.log(r.ran ? `wrote ${r.result} row(s)` : 'not this host\'s fire');
    await pg.end();
    await leader.stop();
}

main().catch((e) => {
    console.error(`pg-fence: ${e.message}`);
    process.exit(1);
});
