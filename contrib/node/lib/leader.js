// SPDX-License-Identifier: MIT
// lib/leader.js: Leader, a candidate that campaigns on its own: it ticks
// its plugin instance on koffi's worker threads as the plugin asks, emits
// leadership events, and claims and finishes fires in the fire ledger so
// that each fire of a job runs on one host at most. With shards it is a
// member of a sharded group (docs/groups.md): each job belongs to a shard,
// each shard is led by one member under a term of its own.
'use strict';

const { EventEmitter } = require('node:events');
const { AsyncLocalStorage } = require('node:async_hooks');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { Plugin, shardOf } = require('./plugin');
const { LeaderPluginError, NotLeaderError } = require('./errors');

const PLUGIN_ENV = 'ODBC_LEADER_PLUGIN';
const PLUGIN_NAME = 'odbc_leader.so';
// Where `make install` puts the plugin ($(pkglibdir)) for the usual
// prefixes, after what pkg-config says.
const PKGLIBDIRS = [
    '/usr/local/lib/odbc-leader',
    '/usr/lib/odbc-leader',
    '/usr/lib/x86_64-linux-gnu/odbc-leader',
    '/usr/lib/aarch64-linux-gnu/odbc-leader',
];

const fireStore = new AsyncLocalStorage();

/** The pkglibdir of an installed odbcleader.pc, or null. */
function pkgconfigDir() {
    try {
        const out = execFileSync('pkg-config', ['--variable=pkglibdir', 'odbcleader'],
            { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10000 });
        return out.trim() || null;
    } catch {
        return null;
    }
}

/**
 * The path of odbc_leader.so: file when given, else $ODBC_LEADER_PLUGIN,
 * else the installed pkglibdir (pkg-config's, then the usual prefixes).
 * Throws an Error naming every place it looked.
 */
function findPlugin(file) {
    if (file) {
        if (!fs.existsSync(file))
            throw new Error(`odbc-leader plugin ${file}: no such file`);
        return file;
    }
    const env = process.env[PLUGIN_ENV];
    if (env) {
        if (!fs.existsSync(env))
            throw new Error(`odbc-leader plugin ${env} (from $${PLUGIN_ENV}): no such file`);
        return env;
    }
    const tried = [];
    for (const dir of [pkgconfigDir(), ...PKGLIBDIRS]) {
        if (!dir)
            continue;
        const p = path.join(dir, PLUGIN_NAME);
        if (fs.existsSync(p))
            return p;
        tried.push(p);
    }
    throw new Error('odbc-leader plugin not found: pass plugin, set ' +
        `$${PLUGIN_ENV}, or install odbc-leader (tried ${tried.join(', ')})`);
}

/** The plugin's configuration: the connection string with the Leader* keys. */
function configString(o) {
    const parts = [String(o.connect || '').replace(/;+$/, '')];
    if (o.namespace !== undefined)
        parts.push(`LeaderNamespace=${o.namespace}`);
    if (o.ttlMs !== undefined)
        parts.push(`LeaderTTL=${Math.trunc(o.ttlMs)}`);
    if (o.shards !== undefined)
        parts.push(`LeaderShards=${Math.trunc(o.shards)}`);
    if (o.extra)
        parts.push(String(o.extra).replace(/^;+|;+$/g, ''));
    return parts.filter(Boolean).join(';');
}

/** The fire the calling code runs ({ job, fireMs, term }), or undefined
 * outside a fire run by Leader.runFire or an integration. */
function currentFire() {
    return fireStore.getStore();
}

/**
 * One candidate. options: connect (an ODBC connection string or
 * "DSN=name"), namespace, ttlMs, shards (a member of a group of that many
 * shards), extra (more Leader* keys), plugin (the .so, see findPlugin),
 * log(level, message) (syslog levels; default: warnings and errors on
 * stderr). Events: 'elected' (term), 'lost' (term), 'change' ({ isLeader,
 * term, leaderId }), 'shard' ({ shard, isLeader, term }) in a group,
 * 'tickError' (LeaderPluginError; ticking goes on).
 */
class Leader extends EventEmitter {
    constructor(options = {}) {
        super();
        if (!options.connect)
            throw new TypeError('Leader: options.connect is required');
        this.pluginPath = findPlugin(options.plugin);
        this.plugin = new Plugin(this.pluginPath);
        this.config = configString(options);
        this.namespace = options.namespace;
        this.log = options.log || ((level, msg) => {
            if (level <= 4)
                process.stderr.write(`odbc-leader: ${msg}\n`);
        });
        this.inst = null;
        this.shards = 0;
        this.lastError = null;
        this._timer = null;
        this._running = false;
        this._stopped = false;
        this._leading = false;
        this._term = 0; // the term of the last 'elected'
        this._inflight = new Set(); // runFire promises under way
    }

    /**
     * Creates the instance and starts ticking. Resolves once the first
     * tick has answered (leader or not); rejects with LeaderPluginError
     * when the configuration or the database is refused (the message
     * names the problem).
     */
    async start() {
        if (this.inst !== null || this._stopped)
            return this;
        this.inst = await this.plugin.init(this.config, {
            log: this.log,
            onChange: (isLeader, term, leaderId) =>
                this._onChange(isLeader, term, leaderId),
            onShardChange: (shard, isLeader, term) =>
                this.emit('shard', { shard, isLeader, term }),
        });
        this.shards = this.inst.shards();
        if (this._stopped) { // stop() came while init ran
            await this.inst.shutdown();
            return this;
        }
        this._running = true;
        await this._tick();
        return this;
    }

    _onChange(isLeader, term, leaderId) {
        this.emit('change', { isLeader, term, leaderId });
        const was = this._leading;
        this._leading = isLeader;
        if (isLeader && !was) {
            this._term = term;
            this.emit('elected', term);
        } else if (!isLeader && was) {
            this.emit('lost', this._term);
        }
    }

    /** One tick, then the timer of the next one. */
    async _tick() {
        this._timer = null;
        if (!this._running)
            return;
        let delay;
        try {
            delay = (await this.inst.tick()).nextTickMs;
        } catch (e) {
            if (!(e instanceof LeaderPluginError))
                throw e;
            this.lastError = e;
            delay = e.nextTickMs || 1000;
            this.emit('tickError', e);
        }
        if (this._running)
            this._timer = setTimeout(() => {
                this._tick().catch((e) => this.emit('error', e));
            }, delay);
    }

    /**
     * Stops ticking and shuts the instance down: a leader resigns, so
     * another candidate takes over at once. Waits for a claim or finish
     * under way. Idempotent.
     */
    async stop() {
        this._stopped = true;
        this._running = false;
        if (this._timer !== null) {
            clearTimeout(this._timer);
            this._timer = null;
        }
        while (this._inflight.size > 0)
            await Promise.allSettled([...this._inflight]);
        if (this.inst !== null)
            await this.inst.shutdown();
    }

    // ---- state, no I/O ----

    /** True while this candidate leads (a group: any shard). */
    isLeader() {
        return this.inst !== null && this.inst.isLeader();
    }

    /** The term led, 0 when not (a group: 0, see termOf). */
    term() {
        return this.inst === null ? 0 : this.inst.term();
    }

    /** { term, validForMs }: the term led and how long its trust window
     * still runs, read at once. */
    leadership() {
        return this.inst === null ? { term: 0, validForMs: 0 } : this.inst.leadership();
    }

    /** This candidate's id, as the lease and the ledger name it. */
    candidateId() {
        return this.inst.candidateId();
    }

    /** The shard of job in the group (0 without shards). */
    shardOf(job) {
        return shardOf(job, this.shards);
    }

    /** True while this host may run job: it leads job's shard (a group)
     * or leads (one namespace). */
    leads(job) {
        if (this.inst === null)
            return false;
        if (this.shards === 0)
            return this.inst.isLeader();
        return this.inst.shardLeadership(this.shardOf(job)).term !== 0;
    }

    /** The term under which this host runs job (its shard's in a group);
     * 0 when it does not lead it. */
    termOf(job) {
        if (this.inst === null)
            return 0;
        if (this.shards === 0)
            return this.inst.term();
        return this.inst.shardLeadership(this.shardOf(job)).term;
    }

    // ---- fires ----

    /**
     * Claims fire fireMs (epoch ms, its nominal time, the same on every
     * host) of job for the term led. Resolves to the Fire to run ({ job,
     * fireMs, term }) or null when it is not this host's to run (claimed
     * before by anyone, or this host does not lead job). Rejects with
     * LeaderPluginError when the outcome is unknown (do not run it).
     */
    async claim(job, fireMs = 0) {
        if (!this._running || !this.leads(job))
            return null;
        const term = this.termOf(job);
        let claimed;
        try {
            claimed = await this.inst.claim(job, fireMs);
        } catch (e) {
            if (e instanceof NotLeaderError)
                return null;
            throw e;
        }
        return claimed ? { job: String(job), fireMs, term } : null;
    }

    /** Records the outcome of a claimed fire (status 0: success). */
    finish(fire, status = 0) {
        return this.inst.finish(fire.job, fire.fireMs, status);
    }

    /**
     * Claims the fire and, when this host is to run it, runs fn(fire) with
     * currentFire() set, then records its outcome (status 1 when fn threw,
     * and the error is thrown again). Resolves to { ran, fire, result }.
     */
    runFire(job, fireMs, fn) {
        return this.track(this._runFire(job, fireMs, fn));
    }

    /** Makes stop() wait for promise (a fire under way) before it shuts
     * the instance down; returns promise. */
    track(promise) {
        this._inflight.add(promise);
        const done = () => this._inflight.delete(promise);
        promise.then(done, done);
        return promise;
    }

    async _runFire(job, fireMs, fn) {
        const fire = await this.claim(job, fireMs);
        if (fire === null)
            return { ran: false, fire: null, result: undefined };
        let status = 1;
        try {
            const result = await fireStore.run(fire, () => fn(fire));
            status = 0;
            return { ran: true, fire, result };
        } finally {
            try {
                await this.finish(fire, status);
            } catch (e) {
                this.lastError = e;
                this.log(4, `recording the outcome of ${fire.job} at ${fire.fireMs} failed: ${e.message}`);
            }
        }
    }
}

module.exports = { Leader, findPlugin, configString, currentFire, fireStore, PLUGIN_ENV };
