// SPDX-License-Identifier: MIT
// test/config.test.js: what Leader makes of its options (node --test).
// A namespace reaches the library as one value, whatever it holds (the
// binding quotes it as the library's parser reads it: braces, '}' doubled),
// so it can neither add nor change a key; and the constructor never
// spawns a process (the plugin is looked for in start(), without blocking
// the event loop). OL_NODE_PLUGINS and OL_NODE_TMP as for binding.test.js.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const { Leader } = require('..');

const PKG_DIR = path.join(__dirname, '..');
const ODBC_SO = path.join(process.env.OL_NODE_PLUGINS || '', 'odbc_leader.so');
const TMP = process.env.OL_NODE_TMP || fs.mkdtempSync('/tmp/ol-node-');
let dbs = 0;

/** A connection string on a new SQLite file. */
function sqlite() {
    dbs += 1;
    return `Driver=SQLite3;Database=${path.join(TMP, `cfg${process.pid}-${dbs}.db`)}`;
}

test('a namespace is one value: its ; { } and blanks reach the library', async () => {
    // The library refuses these bytes in a namespace; its message names the
    // byte and where it is in the value, so the whole value got there. A
    // namespace cut at the ';' would have set LeaderTTL, one braced on its
    // own would swallow the keys after it, and blanks would be trimmed.
    const cases = [
        ['a;LeaderTTL=60000', /LeaderNamespace: character ';' at byte 2 /],
        ['{x', /LeaderNamespace: character '\{' at byte 1 /],
        ['{a};LeaderTTL=60000', /LeaderNamespace: character '\{' at byte 1 /],
        ['a}', /LeaderNamespace: character '\}' at byte 2 /],
        [' ns', /LeaderNamespace: character '\\x20' at byte 1 /],
        ['ns ', /LeaderNamespace: character '\\x20' at byte 3 /],
    ];
    const wrong = [];
    for (const [ns, want] of cases) {
        const leader = new Leader({ connect: sqlite(), namespace: ns, ttlMs: 3000,
            plugin: ODBC_SO, log: () => {} });
        let err = null;
        await leader.start().catch((e) => { err = e; });
        await leader.stop();
        if (err === null)
            wrong.push(`  ${JSON.stringify(ns)}: taken, the Leader started`);
        else if (!want.test(err.message) || err.errorClass !== 'config')
            wrong.push(`  ${JSON.stringify(ns)}: ${err.errorClass}: ${err.message}`);
    }
    if (wrong.length > 0)
        assert.fail(`namespaces not refused as one value:\n${wrong.join('\n')}`);
});

test('valid names are passed as they are', async () => {
    const leader = new Leader({ connect: sqlite(), namespace: 'a.b-c:d/e@f_1', ttlMs: 3000,
        plugin: ODBC_SO, log: () => {} });
    await leader.start();
    try {
        assert.equal(leader.isLeader(), true);
    } finally {
        await leader.stop();
    }
});

/** Runs script in a new node whose child_process calls are recorded
 * (a preload wraps them); resolves to { calls, out } from its stdout. */
function withSpawnLog(script, env) {
    const preload = path.join(TMP, `spawn-log-${process.pid}.js`);
    fs.writeFileSync(preload, `'use strict';
const cp = require('node:child_process');
const calls = [];
for (const name of ['execFileSync', 'execSync', 'spawnSync', 'execFile', 'exec',
    'spawn', 'fork']) {
    const real = cp[name];
    cp[name] = function (...args) {
        calls.push(name + ' ' + args[0]);
        return real.apply(this, args);
    };
}
globalThis.spawnLog = calls;
`);
    const out = execFileSync(process.execPath, ['--require', preload, '-e', script],
        { encoding: 'utf8', env, cwd: PKG_DIR, timeout: 60000 });
    return JSON.parse(out.trim().split('\n').pop());
}

test('the constructor spawns nothing; start() finds the plugin through pkg-config', () => {
    // A pkg-config of our own on PATH names a directory that holds the
    // plugin, as an installed odbcleader.pc would: no option, no
    // $ODBC_LEADER_PLUGIN.
    const bin = path.join(TMP, `bin${process.pid}`);
    const lib = path.join(TMP, `pkglib${process.pid}`);
    fs.mkdirSync(bin, { recursive: true });
    fs.mkdirSync(lib, { recursive: true });
    fs.rmSync(path.join(lib, 'odbc_leader.so'), { force: true });
    fs.symlinkSync(ODBC_SO, path.join(lib, 'odbc_leader.so'));
    fs.writeFileSync(path.join(bin, 'pkg-config'), '#!/bin/sh\n' +
        `[ "$1 $2" = "--variable=pkglibdir odbcleader" ] && echo '${lib}'\n`, { mode: 0o755 });
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
    delete env.ODBC_LEADER_PLUGIN;
    const script = `
const { Leader } = require('.');
(async () => {
    const leader = new Leader({ connect: ${JSON.stringify(sqlite())}, namespace: 'pc',
        log: () => {} });
    const inConstructor = [...globalThis.spawnLog];
    let started = null;
    try {
        await leader.start();
        started = leader.isLeader();
    } catch (e) {
        started = 'start failed: ' + e.message;
    }
    await leader.stop();
    console.log(JSON.stringify({ inConstructor, all: globalThis.spawnLog, started,
        pluginPath: leader.pluginPath }));
})();
`;
    const r = withSpawnLog(script, env);
    assert.deepEqual(r.inConstructor, [], 'the Leader constructor spawned a process');
    assert.equal(r.started, true);
    assert.equal(r.pluginPath, path.join(lib, 'odbc_leader.so'));
    assert.deepEqual(r.all.filter((c) => /Sync /.test(c)), [],
        'start() ran a synchronous child process');
});
