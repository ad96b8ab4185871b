// SPDX-License-Identifier: MIT
// test/fence-pg.test.js: the fence helper on a real PostgreSQL with the
// pg client (node --test), its predicate from the leader's plugin
// (leader.fence(), no odbc-leader command: the example runs with it off
// PATH). OL_NODE_PG_CONNECT is the ODBC connection string of the server,
// OL_NODE_PG_URL its pg URL, OL_NODE_PLUGINS as for binding.test.js;
// without them it skips. tests/contrib/node-pg.test runs it.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { Client } = require('pg');
const { Leader } = require('..');

const CONNECT = process.env.OL_NODE_PG_CONNECT;
const URL = process.env.OL_NODE_PG_URL;
const PLUGIN = path.join(process.env.OL_NODE_PLUGINS || '', 'odbc_leader.so');
const skip = !CONNECT || !URL ? 'no PostgreSQL given (OL_NODE_PG_CONNECT)' : false;

test('a fenced write applies in the current term only', { skip }, async () => {
    const ns = 'fence-node';
    let f = null;
    const pg = new Client({ connectionString: URL });
    await pg.connect();
    try {
        await pg.query('CREATE TABLE fenced (k INT PRIMARY KEY, term BIGINT)');
        const write = (k, term) => {
            const s = f.statement('INSERT INTO fenced (k, term) SELECT $1, $2 WHERE TRUE',
                [k, term], term);
            return pg.query(s.text, s.values).then((r) => r.rowCount);
        };
        const a = new Leader({ connect: CONNECT, namespace: ns, plugin: PLUGIN });
        await a.start();
        f = await a.fence({ placeholder: '$' });
        const fireMs = Math.floor(Date.now() / 1000) * 1000;
        const r = await a.runFire('report', fireMs, (fire) => write(1, fire.term));
        assert.equal(r.ran, true);
        assert.equal(r.result, 1, 'the leader\'s write applies');
        const oldTerm = r.fire.term;
        await a.stop(); // resigns: the term is over
        assert.equal(await write(2, oldTerm), 0, 'a write of an ended term is fenced out');
        const b = new Leader({ connect: CONNECT, namespace: ns, plugin: PLUGIN });
        await b.start();
        assert.ok(b.term() > oldTerm);
        assert.equal(await write(3, oldTerm), 0, 'the old term stays fenced out');
        assert.equal(await write(4, b.term()), 1, 'the new leader\'s write applies');
        await b.stop();
        const rows = (await pg.query('SELECT k FROM fenced ORDER BY k')).rows.map((x) => x.k);
        assert.deepEqual(rows, [1, 4]);
    } finally {
        await pg.end();
    }
});

test('examples/pg-fence.js writes its row', { skip }, () => {
    const out = execFileSync(process.execPath, [path.join(__dirname, '..', 'examples',
        'pg-fence.js'), '--plugin', PLUGIN, '--connect', CONNECT, '--pg', URL],
    { encoding: 'utf8', env: { ...process.env, PATH: '/nonexistent' } });
    assert.match(out, /^wrote 1 row\(s\)$/m);
});
