// SPDX-License-Identifier: MIT
// test/printable.test.js: no password in any printable form of the
// package's objects (node --test). Every object that holds or reaches the
// connection string (Leader before and after start, its Instance, the
// scheduler integrations, FireRunner, the errors of a refused start) is
// printed the ways a Node program prints things: console.log, util.inspect
// (also with showHidden and no depth limit), util.format's %s %o %O %j,
// JSON.stringify, String(); and every property reachable from it is
// searched. None may hold the password; a Leader shows what names it
// (namespace, plugin, shards, state), nothing of its connection string.
// OL_NODE_PLUGINS and OL_NODE_TMP as for binding.test.js.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const fs = require('node:fs');
const util = require('node:util');
const { Writable } = require('node:stream');
const { Leader, FireRunner } = require('..');
const { LeaderCoordinator } = require('../lib/node-cron');
const { LeaderSchedule } = require('../lib/node-schedule');
const { LeaderCron } = require('../lib/croner');
const { LeaderCronJob } = require('../lib/cron');

const ODBC_SO = path.join(process.env.OL_NODE_PLUGINS || '', 'odbc_leader.so');
const TMP = process.env.OL_NODE_TMP || fs.mkdtempSync('/tmp/ol-node-');

// Two passwords: a braced one with a ';' in it (a form that shows a piece of
// the connection string cut at ';' would show its second half) and one
// under a lower-case key.
const PW1 = 'Sup3r;S3cr3t';
const PW2 = 'An0therPw';
const SECRETS = ['Sup3r', 'S3cr3t', PW2];

/** The SQLite file of connect(db). */
function dbFile(db) {
    return path.join(TMP, `pw${process.pid}-${db}.db`);
}

/** A connection string with both passwords on a new SQLite file. */
function connect(db) {
    return `Driver=SQLite3;Database=${dbFile(db)};UID=ol;PWD={${PW1}};password = ${PW2}`;
}

/** Fails when shown (a Leader's printed form) holds a piece of the
 * connection string or the Leader* keys made from it. */
function assertNothingOfConnect(shown, db) {
    for (const part of ['Driver', 'SQLite3', dbFile(db), 'UID', 'PWD', 'Pwd', 'password',
        'LeaderNamespace', 'LeaderTTL'])
        assert.ok(!shown.includes(part), `the connection string is shown (${part}): ${shown}`);
}

/** Every string reachable from o through own properties (not getters),
 * Map and Set entries, up to a bound. */
function reachableStrings(o) {
    const seen = new Set();
    const out = [];
    const todo = [o];
    while (todo.length > 0 && seen.size < 100000) {
        const v = todo.pop();
        if (typeof v === 'string') {
            out.push(v);
            continue;
        }
        if ((typeof v !== 'object' && typeof v !== 'function') || v === null || seen.has(v))
            continue;
        seen.add(v);
        if (v instanceof Map)
            for (const [k, x] of v) todo.push(k, x);
        if (v instanceof Set)
            for (const x of v) todo.push(x);
        let keys = [];
        try {
            keys = Reflect.ownKeys(v);
        } catch {
            continue;
        }
        for (const k of keys) {
            const d = Reflect.getOwnPropertyDescriptor(v, k);
            if (d && 'value' in d)
                todo.push(d.value);
        }
        try {
            todo.push(Object.getPrototypeOf(v));
        } catch {
            // a proxy or an exotic object: its own keys were enough
        }
    }
    return out;
}

/** Every printable form of o, as { how: text }. */
function printed(o) {
    const forms = {};
    let text = '';
    const sink = new Writable({ write(chunk, _enc, cb) { text += chunk; cb(); } });
    new console.Console({ stdout: sink, stderr: sink }).log(o);
    forms['console.log'] = text;
    forms.inspect = util.inspect(o);
    forms['inspect showHidden'] = util.inspect(o, { showHidden: true, depth: Infinity,
        getters: true });
    const tries = {
        JSON: () => JSON.stringify(o),
        String: () => String(o),
        '%s': () => util.format('%s', o),
        '%o': () => util.format('%o', o),
        '%O': () => util.format('%O', o),
        '%j': () => util.format('%j', o),
    };
    for (const [how, f] of Object.entries(tries)) {
        try {
            forms[how] = f();
        } catch (e) {
            forms[how] = `throws ${e.message}`;
        }
    }
    forms.reachable = reachableStrings(o).join('\n');
    return forms;
}

/** Fails when a printable form of o (named what) holds a password. */
function assertNoPassword(what, o) {
    const leaks = [];
    for (const [how, text] of Object.entries(printed(o))) {
        const s = SECRETS.find((x) => text.includes(x));
        if (s !== undefined)
            leaks.push(`  ${how} shows ${s}: ...${text.slice(Math.max(0, text.indexOf(s) - 30),
                text.indexOf(s) + 20)}...`);
    }
    if (leaks.length > 0)
        assert.fail(`${what}: the password is printed\n${leaks.join('\n')}`);
}

test('a Leader and what holds it print no password', async () => {
    const leader = new Leader({ connect: connect(1), namespace: 'pw', plugin: ODBC_SO,
        extra: `LeaderTTL=3000;Pwd=${PW2}`, log: () => {} });
    assertNoPassword('Leader (not started)', leader);
    for (const shown of [util.inspect(leader), JSON.stringify(leader)])
        assertNothingOfConnect(shown, 1);
    assert.deepEqual(leader.toJSON(), { namespace: 'pw', pluginPath: null, shards: 0,
        isLeader: false, term: 0 });
    await leader.start();
    try {
        assert.equal(leader.isLeader(), true);
        assertNoPassword('Leader (started)', leader);
        const shown = util.inspect(leader);
        assertNothingOfConnect(shown, 1);
        assert.match(shown, /^Leader \{/, shown);
        for (const want of ["namespace: 'pw'", `pluginPath: '${ODBC_SO}'`, 'isLeader: true'])
            assert.ok(shown.includes(want), `${want} not shown: ${shown}`);
        assertNoPassword('Instance', leader.inst);
        assertNoPassword('FireRunner', new FireRunner(leader));
        assertNoPassword('LeaderCoordinator', new LeaderCoordinator(leader));
        assertNoPassword('LeaderSchedule', new LeaderSchedule(leader));
        assertNoPassword('LeaderCron', new LeaderCron(leader));
        assertNoPassword('LeaderCronJob', new LeaderCronJob(leader));
        assertNoPassword('a map of leaders', new Map([['a', leader]]));
    } finally {
        await leader.stop();
    }
    assertNoPassword('Leader (stopped)', leader);
});

test('a refused start prints no password, nor does its error', async () => {
    const cases = [
        ['a bad key', `${connect(2)};LeaderBogus=1`],
        ['no database', `Driver=SQLite3;Database=/nonexistent/dir/x.db;PWD={${PW1}};Password=${PW2}`],
    ];
    for (const [what, conn] of cases) {
        const leader = new Leader({ connect: conn, namespace: 'pw', plugin: ODBC_SO,
            log: () => {} });
        let err = null;
        await leader.start().catch((e) => { err = e; });
        assert.ok(err, `${what}: start did not fail`);
        assertNoPassword(`${what}: the error`, err);
        assertNoPassword(`${what}: the error's message`, err.message);
        assertNoPassword(`${what}: the error's stack`, err.stack);
        assertNoPassword(`${what}: the Leader`, leader);
        await leader.stop();
    }
});
