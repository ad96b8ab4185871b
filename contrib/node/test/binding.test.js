// SPDX-License-Identifier: MIT
// test/binding.test.js: the binding against real plugins (node --test).
// OL_NODE_PLUGINS is the directory of the built odbc_leader.so and
// always_leader.so, OL_NODE_ABI10 and OL_NODE_ABI12 plugins of ABI 1.0
// and 1.2 (tests/contrib/abi10_plugin.c), OL_NODE_ODBC_LEADER the
// odbc-leader command, OL_NODE_TMP a scratch directory; every candidate
// runs on a SQLite file of its own test.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const fs = require('node:fs');
const { spawn, execFileSync } = require('node:child_process');
const {
    Plugin, Leader, LeaderPluginError, NotLeaderError, EABI, currentFire,
    findPlugin, Fence,
} = require('..');

const PLUGINS = process.env.OL_NODE_PLUGINS;
const ODBC_SO = path.join(PLUGINS || '', 'odbc_leader.so');
const ALWAYS_SO = path.join(PLUGINS || '', 'always_leader.so');
const TMP = process.env.OL_NODE_TMP || fs.mkdtempSync('/tmp/ol-node-');
let dbs = 0;

/** A connection string on a new SQLite file. */
function sqlite() {
    dbs += 1;
    return `Driver=SQLite3;Database=${path.join(TMP, `t${process.pid}-${dbs}.db`)}`;
}

/**
 * The tests' own shard oracle: FNV-1a 64 of key's UTF-8 bytes modulo
 * shards (docs/abi.md), apart from the plugin the binding asks.
 */
function fnv1aShard(key, shards) {
    let h = 0xcbf29ce484222325n;
    for (const b of Buffer.from(key, 'utf8'))
        h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
    return Number(h % BigInt(shards));
}

/** Resolves after ms. */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Ticks inst until tick().leader is want (at most 30 s). */
async function tickUntil(inst, want) {
    const deadline = Date.now() + 30000;
    for (;;) {
        const r = await inst.tick();
        if (r.leader === want)
            return r;
        assert.ok(Date.now() < deadline, `leader=${want} not reached`);
        await sleep(50);
    }
}

test('odbc_leader.so: ABI 1.3 table', () => {
    const p = new Plugin(ODBC_SO);
    assert.equal(p.name, 'odbc_leader');
    assert.equal(p.abiMajor, 1);
    assert.ok(p.abiMinor >= 3);
    for (const m of ['claim', 'finish', 'leadership', 'candidate_id', 'last_error',
        'shards', 'shard_leadership'])
        assert.ok(p.has(m), m);
    assert.equal(p.has('no_such_member'), false);
});

test('another major version is refused with EABI', () => {
    assert.throws(() => new Plugin(ODBC_SO, 2),
        (e) => e instanceof LeaderPluginError && e.code === EABI &&
            /ABI major 2 refused/.test(e.message));
});

test('a missing file is a clear error', () => {
    assert.throws(() => new Plugin(path.join(TMP, 'none.so')), /cannot load/);
    assert.throws(() => findPlugin(path.join(TMP, 'none.so')), /no such file/);
    const saved = process.env.ODBC_LEADER_PLUGIN;
    process.env.ODBC_LEADER_PLUGIN = ODBC_SO;
    try {
        assert.equal(findPlugin(), ODBC_SO);
        process.env.ODBC_LEADER_PLUGIN = path.join(TMP, 'gone.so');
        assert.throws(() => findPlugin(), /from \$ODBC_LEADER_PLUGIN\): no such file/);
    } finally {
        if (saved === undefined)
            delete process.env.ODBC_LEADER_PLUGIN;
        else
            process.env.ODBC_LEADER_PLUGIN = saved;
    }
});

test('an ABI 1.0 plugin: no claim, no leadership, no groups', async () => {
    const p = new Plugin(process.env.OL_NODE_ABI10);
    assert.equal(p.abiMinor, 0);
    for (const m of ['claim', 'finish', 'leadership', 'candidate_id', 'shards'])
        assert.equal(p.has(m), false, m);
    const inst = await p.init('');
    await inst.tick();
    assert.equal(inst.isLeader(), true);
    assert.equal(inst.term(), 7);
    assert.equal(inst.shards(), 0);
    assert.equal(inst.lastError(), null);
    await assert.rejects(async () => inst.claim('j', 1000),
        (e) => e.code === EABI && /ABI 1\.0\) has no claim/.test(e.message));
    assert.throws(() => inst.leadership(), (e) => e.code === EABI);
    await inst.shutdown();
    assert.equal(inst.isLeader(), false);
});

test('an ABI 1.2 plugin: claims and ids, no groups', async () => {
    const p = new Plugin(process.env.OL_NODE_ABI12);
    assert.equal(p.abiMinor, 2);
    assert.ok(p.has('claim') && p.has('last_error'));
    assert.equal(p.has('shards'), false);
    assert.equal(p.errorClass(-5), 'transient');
    const leader = new Leader({ connect: 'x', plugin: process.env.OL_NODE_ABI12 });
    await leader.start();
    assert.equal(leader.shards, 0);
    assert.equal(leader.candidateId(), 'abi12');
    assert.deepEqual(leader.leadership(), { term: 7, validForMs: 1000 });
    assert.deepEqual(await leader.claim('j', 5000), { job: 'j', fireMs: 5000, term: 7,
        attempt: 1, recovering: false, triggered: false });
    assert.equal(await leader.claim('j', 5000), null);
    await leader.stop();
});

test('bad configuration: the message names the key, class config', async () => {
    const p = new Plugin(ODBC_SO);
    await assert.rejects(p.init(`${sqlite()};LeaderBogus=1`),
        (e) => e instanceof LeaderPluginError && /LeaderBogus/.test(e.message) &&
            e.errorClass === 'config' && e.code < 0);
    await assert.rejects(p.init('Driver=SQLite3;Database=/nonexistent/dir/x.db'),
        (e) => /cannot connect/.test(e.message) && e.errorClass === 'transient');
});

test('a failed tick carries the driver SQLSTATE and goes on', async () => {
    const conn = sqlite();
    const db = conn.split('Database=')[1];
    const leader = new Leader({ connect: conn, namespace: 'err', plugin: ODBC_SO,
        log: () => {} });
    const errors = [];
    leader.on('tickError', (e) => errors.push(e));
    await leader.start();
    execFileSync('python3', ['-c', 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); ' +
        'c.execute("DROP TABLE odbc_leader_lease"); c.commit()', db]);
    const deadline = Date.now() + 20000;
    while (errors.length === 0 && Date.now() < deadline)
        await sleep(50);
    await leader.stop();
    assert.ok(errors.length > 0, 'no tick failed');
    const e = errors[0];
    assert.ok(e instanceof LeaderPluginError);
    assert.equal(e.sqlstate.length, 5, `sqlstate ${JSON.stringify(e.sqlstate)}`);
    assert.match(e.message, /odbc_leader_lease/);
    assert.ok(['config', 'transient', 'fatal'].includes(e.errorClass));
    assert.equal(leader.lastError, errors[errors.length - 1]);
});

test('a follower waiting in tick does not block the event loop', async () => {
    const conn = sqlite();
    const db = conn.split('Database=')[1];
    const p = new Plugin(ODBC_SO);
    const inst = await p.init(`${conn};LeaderNamespace=wait;LeaderTTL=60000`);
    await tickUntil(inst, true);
    // A writer holds the file's lock until told on stdin: the next tick
    // waits in the driver's busy handler, on a koffi worker thread.
    const holder = spawn('python3', ['-c', 'import sqlite3,sys; ' +
        'c=sqlite3.connect(sys.argv[1], isolation_level=None); ' +
        'c.execute("BEGIN EXCLUSIVE"); print("locked", flush=True); ' +
        'sys.stdin.readline(); c.execute("COMMIT")', db],
        { stdio: ['pipe', 'pipe', 'inherit'] });
    await new Promise((r) => holder.stdout.once('data', r));
    let settled = false;
    let beats = 0;
    const pending = inst.tick().finally(() => { settled = true; });
    const timer = setInterval(() => {
        if (!settled)
            beats += 1;
        if (beats === 3)
            holder.stdin.end('\n'); // the timer ran while tick waited
    }, 20);
    await pending.catch(() => {});
    clearInterval(timer);
    holder.kill();
    assert.ok(beats >= 3, `the timer fired ${beats} times while tick was pending`);
    await inst.shutdown();
});

test('calls of one instance never overlap, in the order asked', async () => {
    const p = new Plugin(ALWAYS_SO);
    const inst = await p.init('');
    // The plugin's calls replaced by slow ones that count how many run at
    // once (the queue is pure logic; the real calls are tested above).
    let active = 0;
    let most = 0;
    const order = [];
    const slow = (name, rc) => Object.assign(() => rc, {
        async: (...args) => {
            const cb = args.pop();
            active += 1;
            most = Math.max(most, active);
            order.push(`${name}:${args[1] ?? ''}`);
            setTimeout(() => {
                active -= 1;
                cb(null, rc);
            }, 5);
        },
    });
    p._fns.tick = slow('tick', 1);
    p._fns.claim = slow('claim', 1);
    const calls = [];
    for (let i = 0; i < 5; i++) {
        calls.push(inst.tick());
        calls.push(inst.claim(`job${i}`, 1000));
    }
    await Promise.all(calls);
    assert.equal(most, 1, `${most} calls ran at once`);
    assert.equal(order.filter((x) => x.startsWith('claim')).map((x) => x.slice(6)).join(),
        'job0,job1,job2,job3,job4');
    delete p._fns.tick;
    delete p._fns.claim;
    await inst.shutdown();
    await inst.shutdown(); // idempotent
    await assert.rejects(inst.tick(), /shut down/);
});

test('one leads, the other follows; stop hands over', async () => {
    const conn = `${sqlite()};LeaderRenewInterval=200`;
    const a = new Leader({ connect: conn, namespace: 'pair', ttlMs: 3000, plugin: ODBC_SO });
    const events = [];
    a.on('elected', (t) => events.push(['a-elected', t]));
    a.on('lost', (t) => events.push(['a-lost', t]));
    await a.start();
    assert.equal(a.isLeader(), true);
    const b = new Leader({ connect: conn, namespace: 'pair', ttlMs: 3000, plugin: ODBC_SO });
    const changes = [];
    b.on('change', (c) => changes.push(c));
    await b.start();
    assert.equal(b.isLeader(), false);
    assert.equal(changes.at(-1).leaderId, a.candidateId());
    const term = a.term();
    assert.ok(term > 0);
    assert.deepEqual(events, [['a-elected', term]]);
    const elected = new Promise((r) => b.once('elected', r));
    await a.stop();
    assert.deepEqual(events, [['a-elected', term], ['a-lost', term]],
        'a resign is a loss of the term led');
    const bTerm = await elected;
    assert.ok(bTerm > term, 'terms only grow');
    assert.equal(b.isLeader(), true);
    await b.stop();
});

test('a host elected within its start catches up the jobs it adds after', async () => {
    // b ran "tick" once, 6 s ago, then resigned. a is elected within
    // start(), before its runner and job exist (a whole-cluster restart):
    // the fires within the grace still run, once each.
    const { FireRunner } = require('../lib/runner');
    const conn = sqlite();
    const b = new Leader({ connect: conn, namespace: 'late', plugin: ODBC_SO });
    await b.start();
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 6000;
    await b.finish(await b.claim('tick', t0), 0);
    await b.stop();
    const a = new Leader({ connect: conn, namespace: 'late', plugin: ODBC_SO });
    await a.start();
    assert.equal(a.isLeader(), true, 'elected within start()');
    const since = Date.now();
    const runner = new FireRunner(a, { graceMs: 4000 });
    const ran = [];
    runner.add('tick', (ms) => { ran.push(ms); },
        (t) => (Math.floor(t / 1000) + 1) * 1000);
    const deadline = Date.now() + 10000;
    while (ran.length < 2 && Date.now() < deadline)
        await sleep(50);
    await sleep(300);
    runner.close();
    await a.stop();
    assert.ok(ran.length >= 2, `caught up ${JSON.stringify(ran)}`);
    assert.equal(new Set(ran).size, ran.length, 'a fire ran twice');
    for (const ms of ran) {
        assert.equal(ms % 1000, 0);
        assert.ok(ms > t0 && ms > since - 4001 && ms <= since,
            `${ms}: not a missed fire within the grace (t0 ${t0}, since ${since})`);
    }
});

test('a late timer\'s skipped fires run as the catch-up policy says', async () => {
    // the job's timer fired at t, then woke 4 s late: 1, 2 and 3 s were
    // skipped; the library's policy (docs/catch-up.md) picks which run
    const { FireRunner } = require('../lib/runner');
    const l = new Leader({ connect: sqlite(), namespace: 'late-timer', plugin: ODBC_SO });
    await l.start();
    assert.equal(l.isLeader(), true);
    const t = Math.floor(Date.now() / 1000) * 1000 - 5000;
    const got = {};
    for (const policy of ['all', 'all:2', 'latest', 'skip']) {
        const ran = [];
        const runner = new FireRunner(l, { catchUp: policy });
        const job = `j-${policy}`;
        runner.add(job, (ms) => { ran.push(ms - t); }, (m) => (Math.floor(m / 1000) + 1) * 1000);
        await sleep(200); // the catch-up of a job added while led: none (no fire yet)
        await runner.fire(job, t);
        await runner.fire(job, t + 4000);
        runner.close();
        got[policy] = ran;
    }
    await l.stop();
    assert.deepEqual(got, {
        all: [0, 1000, 2000, 3000, 4000], 'all:2': [0, 3000, 4000],
        latest: [0, 4000], skip: [0, 4000],
    });
});

test('claims: once, by the leader only, with currentFire set', async () => {
    const conn = sqlite();
    const a = new Leader({ connect: conn, namespace: 'fires', plugin: ODBC_SO });
    const b = new Leader({ connect: conn, namespace: 'fires', plugin: ODBC_SO });
    await a.start();
    await b.start();
    const fireMs = Math.floor(Date.now() / 1000) * 1000;
    assert.equal(await b.claim('job', fireMs), null, 'a follower claims nothing');
    let seen;
    const r = await a.runFire('job', fireMs, () => {
        seen = currentFire();
        return 42;
    });
    assert.equal(r.ran, true);
    assert.equal(r.result, 42);
    assert.deepEqual(seen, { job: 'job', fireMs, term: a.term(), attempt: 1,
        recovering: false, triggered: false });
    assert.equal((await a.runFire('job', fireMs, () => 1)).ran, false, 'claimed before');
    await assert.rejects(a.runFire('job', fireMs + 1000, () => {
        throw new Error('job failed');
    }), /job failed/);
    await a.stop();
    await b.stop();
    const out = execFileSync(process.env.OL_NODE_ODBC_LEADER, ['fires', '-C', conn,
        '-n', 'fires', '--json', '--limit', '0'], { encoding: 'utf8' });
    const rows = out.trim().split('\n').map((l) => JSON.parse(l));
    const byFire = Object.fromEntries(rows.map((x) => [x.fire_ms, x]));
    assert.equal(byFire[fireMs].status, 0);
    assert.equal(byFire[fireMs + 1000].status, 1);
});

test('ABI 1.4: an interrupted fire recovered once, pause, run-now', async () => {
    const conn = `${sqlite()};LeaderNamespace=life;LeaderTTL=3000`;
    const p = new Plugin(ODBC_SO);
    assert.ok(p.abiMinor >= 4);
    const a = await p.init(`${conn};LeaderId=a`);
    const b = await p.init(`${conn};LeaderId=b`);
    await tickUntil(a, true);
    const fireMs = Math.floor(Date.now() / 1000) * 1000;
    const r1 = await a.claimFire('rec', fireMs, 2);
    assert.equal(r1.run, true);
    assert.deepEqual([r1.claim.attempt, r1.claim.maxAttempts, r1.claim.recovering,
        r1.claim.term, r1.claim.nominalMs], [1, 2, false, a.term(), fireMs]);
    assert.deepEqual(await a.claimFire('rec', fireMs, 2), { run: false, paused: false });
    assert.deepEqual(await b.offers(), [], 'b learns offers from now on');
    // a stops ticking, as if killed: b takes over and is offered the fire
    await tickUntil(b, true);
    assert.deepEqual((await b.offers()).map((o) => [o.job, o.fireMs, o.attempt]),
        [['rec', fireMs, 1]]);
    const r2 = await b.claimFire('rec', fireMs, 2);
    assert.deepEqual([r2.run, r2.claim.attempt, r2.claim.recovering, r2.claim.term],
        [true, 2, true, b.term()]);
    await assert.rejects(a.finishFire(r1.claim, 0), LeaderPluginError);
    await b.finishFire(r2.claim, 0);
    await b.pauseJob('p');
    assert.deepEqual(await b.claimFire('p', fireMs, 1), { run: false, paused: true });
    await b.pauseJob('p', false);
    const key = await b.triggerJob('p');
    assert.ok(key < 0);
    const deadline = Date.now() + 10000;
    while (!(await b.offers()).some((o) => o.fireMs === key)) {
        assert.ok(Date.now() < deadline, 'the run-now was never offered');
        await b.tick();
        await sleep(100);
    }
    const r3 = await b.claimFire('p', key, 1);
    assert.equal(r3.run, true);
    assert.equal(r3.claim.triggered, true);
    await b.finishFire(r3.claim, 0);
    await a.shutdown();
    await b.shutdown();
});

test('a group: members share the shards, claims in the shard term', async () => {
    const conn = `${sqlite()};LeaderRenewInterval=200`;
    const opts = { connect: conn, namespace: 'grp', shards: 8, ttlMs: 3000, plugin: ODBC_SO };
    const a = new Leader(opts);
    const b = new Leader(opts);
    const gained = new Set();
    a.on('shard', ({ shard, isLeader }) => isLeader && gained.add(shard));
    await a.start();
    await b.start();
    assert.equal(a.shards, 8);
    const deadline = Date.now() + 20000;
    while (Date.now() < deadline) {
        const led = [...Array(8).keys()].filter((s) =>
            a.inst.shardLeadership(s).term || b.inst.shardLeadership(s).term);
        const mine = [...Array(8).keys()].filter((s) => b.inst.shardLeadership(s).term);
        if (led.length === 8 && mine.length > 0)
            break;
        await sleep(100);
    }
    const jobs = [...Array(40).keys()].map((i) => `job-${i}`);
    const fireMs = Math.floor(Date.now() / 1000) * 1000;
    let ranA = 0;
    let ranB = 0;
    for (const job of jobs) {
        const fa = await a.claim(job, fireMs);
        const fb = await b.claim(job, fireMs);
        assert.ok(!(fa && fb), `${job} claimed twice`);
        const f = fa || fb;
        assert.ok(f, `${job} claimed by nobody`);
        const owner = fa ? a : b;
        assert.equal(f.term, owner.inst.shardLeadership(owner.shardOf(job)).term);
        fa ? ranA++ : ranB++;
    }
    assert.ok(ranA > 0 && ranB > 0, `spread: ${ranA} and ${ranB}`);
    assert.ok(gained.size > 0);
    await a.stop();
    await b.stop();
});

test('leader.fence(): the plugin\'s predicate, no odbc-leader on PATH', async () => {
    const want = Fence.fromCommand('sqlite', { odbcLeader: process.env.OL_NODE_ODBC_LEADER });
    const savedPath = process.env.PATH;
    process.env.PATH = path.join(TMP, 'no-such-dir');
    const conn = sqlite();
    const a = new Leader({ connect: conn, namespace: 'fence', ttlMs: 3000, plugin: ODBC_SO });
    const g = new Leader({ connect: conn, namespace: 'fenceg', shards: 4, ttlMs: 3000,
        plugin: ODBC_SO });
    try {
        await a.start();
        await g.start();
        const f = await a.fence({ placeholder: '$' });
        assert.equal(f.predicate, want.predicate);
        assert.equal(f.namespace, 'fence');
        assert.deepEqual(f.statement('DELETE FROM t WHERE id = $1', [1], 9).values,
            [1, 'fence', 9]);
        assert.equal((await g.fence({ job: 'backup' })).namespace, `fenceg/${fnv1aShard('backup', 4)}`);
        await assert.rejects(g.fence(), /give options.job/);
    } finally {
        process.env.PATH = savedPath;
        await a.stop();
        await g.stop();
    }
    const old = await new Plugin(process.env.OL_NODE_ABI10).init('');
    assert.throws(() => old.fenceSql(), (e) => e.code === EABI && /has no fence_sql/.test(e.message));
    await old.shutdown();
});

test('catchUpSelect: docs/catch-up-vectors.txt, the same in C and every binding', () => {
    const file = path.join(__dirname, '..', '..', '..', 'docs', 'catch-up-vectors.txt');
    const ints = (t) => (t === '-' ? [] : t.split(',').map(Number));
    const lines = fs.readFileSync(file, 'utf8').split('\n').map((l) => l.trim())
        .filter((l) => l && !l.startsWith('#'));
    const p = new Plugin(ODBC_SO);
    for (const line of lines) {
        const [policy, grace, now, last, flags, times, , want] = line.split(/\s+/);
        const call = () => p.catchUpSelect(policy, Number(grace), Number(now), Number(last),
            ints(times), { present: flags === 'present' });
        if (want === 'EINVAL')
            assert.throws(call, LeaderPluginError, line);
        else
            assert.deepEqual(call(), ints(want), line);
    }
    assert.ok(lines.length >= 30);
});

test('shardOf: docs/abi.md\'s vectors, asked of the plugin', async () => {
    const vectors = { 64: [['backup', 63], ['nightly-report', 43]],
        1000: [['job:42', 480], ['', 37]], 16384: [['caf\u00e9', 3465]] };
    const p = new Plugin(ODBC_SO);
    const conn = sqlite();
    for (const [shards, keys] of Object.entries(vectors)) {
        const inst = await p.init(`${conn};LeaderNamespace=v${shards};LeaderShards=${shards}`);
        try {
            for (const [key, want] of keys) {
                assert.equal(inst.shardOf(key), want, `${key} of ${shards}`);
                assert.equal(fnv1aShard(key, Number(shards)), want);
            }
        } finally {
            await inst.shutdown();
        }
    }
    const single = await p.init(`${conn};LeaderNamespace=single`);
    assert.equal(single.shardOf('backup'), 0);
    await single.shutdown();
});

test('fence: the predicate with pg placeholders after the statement\'s own', () => {
    const f = Fence.fromCommand('postgresql', { namespace: 'nightly', placeholder: '$',
        odbcLeader: process.env.OL_NODE_ODBC_LEADER });
    const s = f.statement('UPDATE report SET body = $1 WHERE day = $2', ['x', '2026-01-01'], 42);
    assert.match(s.text, /namespace = CAST\(\$3 AS VARCHAR\(128\)\)/);
    assert.match(s.text, /term = CAST\(\$4 AS BIGINT\)/);
    assert.deepEqual(s.values, ['x', '2026-01-01', 'nightly', 42]);
    assert.throws(() => new Fence('SELECT 1', 'ns'), /two \? placeholders/);
    assert.throws(() => Fence.fromCommand('nosuch', { odbcLeader: process.env.OL_NODE_ODBC_LEADER }),
        /fence failed/);
});

test('plugin discovery: docs/plugin-discovery-vectors.txt through resolvePlugin', () => {
    const { resolvePlugin } = require('../lib/leader');
    const file = path.join(__dirname, '..', '..', '..', 'docs', 'plugin-discovery-vectors.txt');
    const rows = fs.readFileSync(file, 'utf8').split('\n')
        .filter((l) => l.trim() && !l.startsWith('#'));
    assert.ok(rows.length >= 15);
    const none = (v) => (v === '-' ? undefined : v);
    for (const row of rows) {
        const [given, env, pc, files, result] = row.split('|').map((c) => c.trim());
        const present = new Set(files === '-' ? [] : files.split(','));
        let asked = false;
        const call = () => resolvePlugin(none(given), none(env),
            () => { asked = true; return none(pc); }, (p) => present.has(p));
        if (!result.startsWith('error ')) {
            assert.equal(call(), result, row);
            continue;
        }
        const [, kind, ...paths] = result.split(/\s+/);
        assert.throws(call, (e) => {
            for (const p of paths)
                assert.ok(e.message.includes(p), `${row}: ${e.message}`);
            assert.equal(e.message.includes('$ODBC_LEADER_PLUGIN'),
                kind === 'env' || kind === 'none', e.message);
            return true;
        }, row);
        assert.equal(asked, kind === 'none', row);
    }
});
