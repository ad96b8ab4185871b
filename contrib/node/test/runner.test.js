// SPDX-License-Identifier: MIT
// test/runner.test.js: the fire times the integrations compute from a
// schedule (node --test): slotsIn and latestSlot on a plain schedule, then
// on each scheduler's own next-fire function, so that a callback that only
// knows "now" is given the fire it was due for.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { slotsIn, latestSlot } = require('../lib/runner');
const { parseKey, nextMatch } = require('../lib/node-cron');

const T = Date.UTC(2026, 0, 1, 0, 0, 10); // a whole second
const every = (ms) => (t) => (Math.floor(t / ms) + 1) * ms;

test('slotsIn: the fire times in (from, to], oldest first', () => {
    assert.deepEqual(slotsIn(every(1000), T - 3000, T), [T - 2000, T - 1000, T]);
    assert.deepEqual(slotsIn(every(1000), T - 2500, T - 1), [T - 2000, T - 1000]);
    assert.deepEqual(slotsIn(every(1000), T, T + 999), []);
    assert.equal(slotsIn(every(1000), T - 100000, T, 10).length, 10);
    assert.deepEqual(slotsIn(() => T, T - 5000, T + 5000), [T], 'a stuck schedule ends');
});

test('latestSlot: the latest fire at or before now, within the grace', () => {
    assert.equal(latestSlot(every(1000), T, 60000), T);
    assert.equal(latestSlot(every(1000), T + 999, 60000), T);
    assert.equal(latestSlot(every(60000), T + 59000, 600000), Date.UTC(2026, 0, 1, 0, 1));
    assert.equal(latestSlot(every(3600000), T + 1800000, 60000), null, 'older than the grace');
});

test('each scheduler\'s schedule gives the fire a late callback is due for', () => {
    const { Cron } = require('croner');
    const { CronJob } = require('cron');
    const cronParser = require(require.resolve('cron-parser',
        { paths: [require.resolve('node-schedule')] }));
    const nodeCron = require('node-cron');
    const croner = new Cron('*/5 * * * * *', { paused: true, timezone: 'UTC' }, () => {});
    const kelektiv = CronJob.from({ cronTime: '*/5 * * * * *', onTick() {}, start: false,
        timeZone: 'UTC' });
    const task = nodeCron.createTask('*/5 * * * * *', () => {}, { timezone: 'UTC' });
    const nexts = {
        croner: (ms) => croner.nextRun(new Date(ms)).getTime(),
        cron: (ms) => kelektiv.cronTime.getNextDateFrom(new Date(ms)).toMillis(),
        'node-schedule': (ms) => cronParser.parseExpression('*/5 * * * * *',
            { currentDate: new Date(ms), tz: 'UTC' }).next().getTime(),
        'node-cron': (ms) => nextMatch(task, ms),
    };
    for (const [name, next] of Object.entries(nexts)) {
        assert.equal(latestSlot(next, T, 60000), T, `${name}: on time`);
        assert.equal(latestSlot(next, T + 4999, 60000), T, `${name}: late`);
        assert.equal(latestSlot(next, T + 12000, 60000), T + 10000, `${name}: two periods late`);
        assert.deepEqual(slotsIn(next, T - 10000, T), [T - 5000, T], name);
    }
    croner.stop();
    task.destroy();
});

test('node-cron keys: task name and slot', () => {
    assert.deepEqual(parseKey('report:2026-01-01T00:00:10.000Z'), { job: 'report', fireMs: T });
    assert.deepEqual(parseKey('a:b:2026-01-01T00:00:10.000Z'), { job: 'a:b', fireMs: T });
    assert.equal(parseKey('2026-01-01T00:00:10.000Z'), null);
    assert.equal(parseKey('report:yesterday'), null);
});

test('cron (kelektiv): fire times in the job\'s zone or UTC offset, not the host\'s', () => {
    const { CronJob } = require('cron');
    const { LeaderCronJob } = require('../lib/cron');
    const host = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const zone = host === 'Asia/Kathmandu' ? 'America/New_York' : 'Asia/Kathmandu';
    const daily = CronJob.from({ cronTime: '0 30 1 * * *', onTick() {}, start: false,
        timeZone: zone });
    const want = zone === 'Asia/Kathmandu' ? Date.UTC(2026, 0, 1, 19, 45)
        : Date.UTC(2026, 0, 2, 6, 30);
    assert.equal(LeaderCronJob.nextOf(daily)(Date.UTC(2026, 0, 1, 12)), want,
        `01:30 ${zone} from a host in ${host}`);
    const hourly = CronJob.from({ cronTime: '0 0 * * * *', onTick() {}, start: false,
        utcOffset: 330 });
    assert.equal(LeaderCronJob.nextOf(hourly)(Date.UTC(2026, 0, 1, 12)),
        Date.UTC(2026, 0, 1, 12, 30), 'hourly at UTC+05:30 is at :30Z');
    assert.equal(LeaderCronJob.nextOf(hourly)(Date.UTC(2026, 0, 1, 12, 30)),
        Date.UTC(2026, 0, 1, 13, 30));
});

// The first-pass rule is the plugin's (ABI 1.8): these tests load the
// built odbc_leader.so from OL_NODE_PLUGINS (tests/contrib/node.test).
const PLUGIN_SO = process.env.OL_NODE_PLUGINS
    && require('node:path').join(process.env.OL_NODE_PLUGINS, 'odbc_leader.so');
const NO_PLUGIN = !PLUGIN_SO && 'OL_NODE_PLUGINS is not set';

test('firstPassOnly: a daily time runs in the first pass of a repeated hour only', { skip: NO_PLUGIN }, () => {
    const { firstPassOnly } = require('../lib/runner');
    const plugin = new (require('../lib/plugin').Plugin)(PLUGIN_SO);
    const { CronJob } = require('cron');
    const { LeaderCronJob } = require('../lib/cron');
    const { Cron } = require('croner');
    const cronParser = require(require.resolve('cron-parser',
        { paths: [require.resolve('node-schedule')] }));
    const tz = 'America/New_York'; // 2025-11-02: 01:00-01:59 twice, 05:00Z-06:59Z
    const at = (s) => Date.parse(s);
    for (const [expr, want] of [
        ['0 30 1 * * *', { from0600: at('2025-11-03T06:30:00Z'), second: true }],
        ['0 */15 * * * *', { from0600: at('2025-11-02T06:15:00Z'), second: false }],
    ]) {
        const kelektiv = CronJob.from({ cronTime: expr, onTick() {}, start: false, timeZone: tz });
        const engines = {
            cron: LeaderCronJob.nextOf(kelektiv),
            croner: (ms) => new Cron(expr, { paused: true, timezone: tz })
                .nextRun(new Date(ms)).getTime(),
            'cron-parser': (ms) => cronParser.parseExpression(expr,
                { currentDate: new Date(ms), tz }).next().getTime(),
        };
        for (const [name, next] of Object.entries(engines)) {
            const kept = firstPassOnly(next, tz, () => plugin);
            const what = `${name} ${expr}`;
            assert.equal(kept(at('2025-11-02T06:00:00Z')), want.from0600,
                `${what}: asked from within the repeated hour`);
            assert.equal(kept.dropped(at('2025-11-02T06:30:00Z')), want.second,
                `${what}: 06:30Z, the second 01:30`);
            assert.equal(kept.dropped(at('2025-11-02T05:30:00Z')), false,
                `${what}: 05:30Z, the first 01:30`);
            assert.equal(kept(at('2025-11-02T05:00:00Z')),
                expr.startsWith('0 30') ? at('2025-11-02T05:30:00Z') : at('2025-11-02T05:15:00Z'),
                `${what}: the first pass runs`);
            assert.equal(kept(at('2025-11-04T12:00:00Z')), next(at('2025-11-04T12:00:00Z')),
                `${what}: other days as the engine says`);
        }
    }
    // a callback's exception reaches the caller, after the plugin's call
    assert.throws(() => plugin.secondPass(() => { throw new Error('engine broke'); },
        () => true, at('2025-11-02T06:30:00Z')), /engine broke/);
    assert.equal(plugin.firstPassNext(() => null, () => false, 0), null);
});

test('FireRunner.fire: the second pass of a daily time is not run, its first is', { skip: NO_PLUGIN }, async () => {
    const { EventEmitter } = require('node:events');
    const { FireRunner } = require('../lib/runner');
    const cronParser = require(require.resolve('cron-parser',
        { paths: [require.resolve('node-schedule')] }));
    // the decisions only: a leader that records what it is asked to run
    const ran = [];
    const leader = Object.assign(new EventEmitter(), {
        log() {},
        setSchedule: async () => {},
        runFire: async (job, fireMs) => { ran.push(fireMs); },
        plugin: new (require('../lib/plugin').Plugin)(PLUGIN_SO),
    });
    const runner = new FireRunner(leader);
    const tz = 'America/New_York';
    const next = (ms) => cronParser.parseExpression('30 1 * * *',
        { currentDate: new Date(ms), tz }).next().getTime();
    runner.add('daily', () => {}, next, { expr: 'cron 30 1 * * *', tz, engine: 'test' });
    await runner.fire('daily', Date.parse('2025-11-02T06:30:00Z'));
    assert.deepEqual(ran, [], 'the second 01:30 is not run');
    await runner.fire('daily', Date.parse('2025-11-02T05:30:00Z'));
    assert.deepEqual(ran, [Date.parse('2025-11-02T05:30:00Z')]);
    runner.close();
});
