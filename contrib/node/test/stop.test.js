// SPDX-License-Identifier: MIT
// test/stop.test.js: stop() while a fire is under way (node --test). A
// SIGTERM can come while node-cron's coordinator is claiming a fire: the
// claim succeeds, node-cron runs the fire, and its outcome must be
// recorded before the instance shuts down, or the ledger keeps the fire
// unfinished under a live claimant (seen in tests/contrib/node-pg.test's
// group schedule). The plugin is a fake that records the order of calls;
// the Leader and the coordinator are the real ones.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { Leader } = require('../lib/leader');
const { LeaderCoordinator } = require('../lib/node-cron');

// A started Leader on a fake instance whose claims wait for release().
function fakeLeader() {
    const calls = [];
    let release;
    const claimed = new Promise((resolve) => { release = resolve; });
    const leader = new Leader({ connect: 'Driver=none', namespace: 'stop' });
    leader.inst = {
        isLeader: () => true,
        term: () => 7,
        claim: async (job, fireMs) => {
            calls.push(`claim ${job} ${fireMs}`);
            await claimed;
            return true;
        },
        finish: async (job, fireMs, status) => {
            calls.push(`finish ${job} ${fireMs} ${status}`);
        },
        shutdown: async () => { calls.push('shutdown'); },
    };
    leader._running = true;
    return { leader, calls, release };
}

test('node-cron: stop() during a claim waits for the run and its finish', async () => {
    const { leader, calls, release } = fakeLeader();
    const coordinator = new LeaderCoordinator(leader);
    const key = 'job:2026-01-01T00:00:10.000Z';
    const allowed = coordinator.shouldRun(key, 0); // the claim is under way
    await new Promise((r) => setImmediate(r));
    const stopped = leader.stop(); // SIGTERM now
    await new Promise((r) => setImmediate(r));
    release(); // the claim answers: this host runs the fire
    assert.equal(await allowed, true);
    calls.push('run'); // node-cron runs the task, then onComplete
    await coordinator.onComplete(key);
    await stopped;
    assert.deepEqual(calls, ['claim job ' + Date.UTC(2026, 0, 1, 0, 0, 10),
        'run', 'finish job ' + Date.UTC(2026, 0, 1, 0, 0, 10) + ' 0', 'shutdown']);
});

test('node-cron: a claim that is not this host\'s lets stop() go on', async () => {
    const { leader, calls, release } = fakeLeader();
    leader.inst.claim = async () => { calls.push('claim'); await null; return false; };
    const coordinator = new LeaderCoordinator(leader);
    release();
    assert.equal(await coordinator.shouldRun('job:2026-01-01T00:00:10.000Z', 0), false);
    await leader.stop();
    assert.deepEqual(calls, ['claim', 'shutdown']);
});

test('node-cron: a failed claim lets stop() go on and skips the fire', async () => {
    const { leader, calls } = fakeLeader();
    leader.inst.claim = async () => { calls.push('claim'); throw new Error('lost'); };
    const coordinator = new LeaderCoordinator(leader);
    await assert.rejects(coordinator.shouldRun('job:2026-01-01T00:00:10.000Z', 0), /lost/);
    await leader.stop();
    assert.deepEqual(calls, ['claim', 'shutdown']);
});
