// SPDX-License-Identifier: MIT
// examples/common.js: what the four example schedulers share: the
// command line (--plugin SO --connect STR --namespace NS (--every SECONDS
// | --cron EXPR [--tz NAME]) [--ttl MS] [--job NAME] [--jobs N --shards
// N] [--recover N] [--hold SECONDS]; --every fires at every multiple of
// SECONDS since the epoch, in UTC; --cron by the engine's own cron syntax
// in zone NAME, by default the host's), the Leader, the job that prints one flushed line per fire it
// runs ("FIRE <job> <fire_ms> <term> <attempt>", then takes --hold
// seconds; with --recover N a fire whose host died before its end runs
// again on the next leader, up to N attempts), and SIGTERM/SIGINT, which stop the scheduler, wait for a fire
// under way and resign, so another host takes over at once (exit 0).
'use strict';

const fs = require('node:fs');
const { parseArgs } = require('node:util');
const { Leader } = require('odbc-leader');

const DEFAULT_TTL_MS = 15000; // the library's default LeaderTTL

/** Exits 64 with msg and the usage line. */
function usage(prog, msg) {
    process.stderr.write(`${prog}: ${msg}\nusage: node ${prog} --plugin SO ` +
        '--connect STR --namespace NS (--every SECONDS | --cron EXPR [--tz NAME]) ' +
        '[--ttl MS] [--job NAME] ' +
        '[--jobs N --shards N] [--recover N] [--hold SECONDS]\n');
    process.exit(64);
}

/** The parsed command line: { plugin, connect, namespace, every, cron,
 * tz, ttlMs, names, shards, recover, holdMs }: every 0 with --cron. */
function parse(prog) {
    let v;
    try {
        v = parseArgs({ options: {
            plugin: { type: 'string' }, connect: { type: 'string' },
            namespace: { type: 'string' }, every: { type: 'string' },
            cron: { type: 'string' }, tz: { type: 'string' },
            ttl: { type: 'string' }, job: { type: 'string', default: 'every' },
            jobs: { type: 'string', default: '1' }, shards: { type: 'string' },
            recover: { type: 'string', default: '1' },
            hold: { type: 'string', default: '0' },
        } }).values;
    } catch (e) {
        usage(prog, e.message);
    }
    for (const k of ['connect', 'namespace'])
        if (v[k] === undefined)
            usage(prog, `--${k} is required`);
    if ((v.every === undefined) === (v.cron === undefined))
        usage(prog, 'give one of --every and --cron');
    if (v.tz !== undefined && v.cron === undefined)
        usage(prog, '--tz goes with --cron');
    const every = v.cron === undefined ? Number(v.every) : 0;
    if (v.cron === undefined && (!Number.isInteger(every) || every <= 0 ||
        (60 % every !== 0 && (every % 60 !== 0 || 3600 % every !== 0))))
        usage(prog, `--every ${v.every}: give whole seconds that divide a minute, ` +
            'or whole minutes that divide an hour');
    const jobs = Number(v.jobs);
    if (!Number.isInteger(jobs) || jobs < 1)
        usage(prog, '--jobs must be at least 1');
    const ttlMs = v.ttl === undefined ? undefined : Number(v.ttl);
    if (ttlMs !== undefined && !(ttlMs > 0))
        usage(prog, `--ttl ${v.ttl}: give milliseconds`);
    const shards = v.shards === undefined ? undefined : Number(v.shards);
    const recover = Number(v.recover);
    if (!Number.isInteger(recover) || recover < 1)
        usage(prog, '--recover must be a whole number, at least 1');
    const hold = Number(v.hold);
    if (!(hold >= 0))
        usage(prog, `--hold ${v.hold}: give seconds`);
    const names = jobs === 1 ? [v.job] : [...Array(jobs).keys()].map((i) => `${v.job}-${i}`);
    return { plugin: v.plugin, connect: v.connect, namespace: v.namespace, every,
        cron: v.cron, tz: v.tz, ttlMs, names, shards, recover,
        holdMs: Math.round(hold * 1000) };
}

/** { expr, tz } of the command line's schedule: --cron in --tz (undefined:
 * the host's zone), or --every as a cron expression in UTC. */
function whenOf(a) {
    return a.cron !== undefined ? { expr: a.cron, tz: a.tz }
        : { expr: cronOf(a.every), tz: 'UTC' };
}

/** A cron expression (with seconds) that fires at every multiple of every
 * seconds since the epoch. */
function cronOf(every) {
    return every < 60 ? `*/${every} * * * * *` : `0 */${every / 60} * * * *`;
}

/** The catch-up grace: five TTLs, a period and a second. A takeover takes
 * about a TTL (three in a group: a crashed member's shards are taken over
 * after about two more); the rest is for a host starved of CPU, whose
 * election and catch-up come late (up to 8.6 s from a kill to the new
 * leader's first claim with a 2-s TTL, at a load of 15). */
function graceOf(a) {
    const ttl = a.ttlMs || DEFAULT_TTL_MS;
    return 5 * ttl + a.every * 1000 + 1000;
}

let holdMs = 0; // --hold

/** Prints the FIRE line of fire, flushed (a synchronous write); returns a
 * promise of the --hold that follows (undefined without one). */
function printFire(fire) {
    fs.writeSync(1, `FIRE ${fire.job} ${fire.fireMs} ${fire.term} ${fire.attempt}\n`);
    return holdMs > 0 ? new Promise((resolve) => setTimeout(resolve, holdMs)) : undefined;
}

/**
 * Starts the Leader of the command line, calls setup(leader, args,
 * options) to schedule the jobs (options, for the integration: graceMs and
 * maxAttempts; it returns a function that stops the scheduler),
 * and on SIGTERM or SIGINT stops the scheduler, waits for fires under way
 * and resigns. Exits 1 with the message when the Leader cannot start.
 */
async function main(prog, setup) {
    const a = parse(prog);
    holdMs = a.holdMs;
    let leader;
    let stopScheduler;
    let started; // resolves once the scheduler runs
    const startup = new Promise((resolve) => { started = resolve; });
    let stopping = false;
    // Handled from the start: a SIGTERM while the Leader starts (it may
    // win within its start) waits for the start, then hands over.
    const stop = async () => {
        if (stopping)
            return;
        stopping = true;
        await startup;
        await stopScheduler();
        await leader.stop();
        process.exit(0);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    try {
        leader = new Leader({ connect: a.connect, namespace: a.namespace,
            ttlMs: a.ttlMs, plugin: a.plugin, shards: a.shards });
        leader.on('change', ({ isLeader, term }) =>
            process.stderr.write(isLeader ? `leader term ${term}\n` : 'follower\n'));
        leader.on('shard', ({ shard, isLeader, term }) => process.stderr.write(
            `shard ${shard}: ${isLeader ? `leader term ${term}` : 'stopped'}\n`));
        await leader.start();
    } catch (e) {
        process.stderr.write(`${prog}: ${e.message}\n`);
        process.exit(1);
    }
    stopScheduler = await setup(leader, a,
        { graceMs: graceOf(a), maxAttempts: a.recover });
    started();
}

module.exports = {
    whenOf, main, cronOf, printFire,
};
