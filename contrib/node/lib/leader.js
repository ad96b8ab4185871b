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
const util = require('node:util');
const { execFile, execFileSync } = require('node:child_process');
const { Plugin } = require('./plugin');
const { LeaderPluginError, NotLeaderError, ScheduleError } = require('./errors');
const { quote } = require('./config');
const { Fence } = require('./fence');

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

const PKGCONFIG_ARGS = ['--variable=pkglibdir', 'odbcleader'];
const PKGCONFIG_OPTS = { encoding: 'utf8', timeout: 10000 };

/** The pkglibdir of an installed odbcleader.pc, or null; blocks while
 * pkg-config runs. */
function pkgconfigDirSync() {
    try {
        const out = execFileSync('pkg-config', PKGCONFIG_ARGS,
            { ...PKGCONFIG_OPTS, stdio: ['ignore', 'pipe', 'ignore'] });
        return out.trim() || null;
    } catch {
        return null;
    }
}

/** Resolves to the pkglibdir of an installed odbcleader.pc, or null. */
function pkgconfigDir() {
    return new Promise((resolve) => {
        execFile('pkg-config', PKGCONFIG_ARGS, PKGCONFIG_OPTS,
            (err, out) => resolve(err ? null : out.trim() || null));
    });
}

/** The plugin's path in each installed directory, pkg-config's first. */
function installed(pcDir) {
    return [pcDir, ...PKGLIBDIRS].filter(Boolean).map((d) => path.join(d, PLUGIN_NAME));
}

/**
 * The plugin's path in docs/abi.md's order ("Finding the plugin"): file
 * when given, else env ($ODBC_LEADER_PLUGIN), else the installed pkglibdir
 * (pkglibdir() asks pkg-config, then the usual prefixes). exists(p) says
 * whether p is a file. Throws an Error naming every place it looked.
 * Pure: findPlugin gives it the host's.
 */
function resolvePlugin(file, env, pkglibdir, exists) {
    if (file) {
        if (!exists(file))
            throw new Error(`odbc-leader plugin ${file}: no such file`);
        return file;
    }
    if (env) {
        if (!exists(env))
            throw new Error(`odbc-leader plugin ${env} (from $${PLUGIN_ENV}): no such file`);
        return env;
    }
    const tried = installed(pkglibdir());
    const found = tried.find((p) => exists(p));
    if (found === undefined)
        throw new Error('odbc-leader plugin not found: pass plugin, set ' +
            `$${PLUGIN_ENV}, or install odbc-leader (tried ${tried.join(', ')})`);
    return found;
}

/**
 * The path of odbc_leader.so: file when given, else $ODBC_LEADER_PLUGIN,
 * else the installed pkglibdir (pkg-config's, then the usual prefixes).
 * Throws an Error naming every place it looked. Synchronous: it waits for
 * pkg-config; Leader.start() looks without blocking (findPluginAsync).
 */
function findPlugin(file) {
    return resolvePlugin(file, process.env[PLUGIN_ENV], pkgconfigDirSync, fs.existsSync);
}

/** findPlugin without blocking the event loop: resolves to the path,
 * rejects with the same Error. */
async function findPluginAsync(file) {
    const env = process.env[PLUGIN_ENV];
    const named = file || env;
    const pcDir = named ? null : await pkgconfigDir();
    const present = new Set();
    for (const p of named ? [named] : installed(pcDir)) {
        if (await fs.promises.access(p).then(() => true, () => false))
            present.add(p);
    }
    return resolvePlugin(file, env, () => pcDir, (p) => present.has(p));
}

/** The plugin's configuration: the connection string with the Leader* keys
 * (the namespace quoted: it is one value, whatever it holds). */
function configString(o) {
    const parts = [String(o.connect || '').replace(/;+$/, '')];
    if (o.namespace !== undefined)
        parts.push(`LeaderNamespace=${quote(o.namespace)}`);
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
 * shards), extra (more Leader* keys), plugin (the .so, see findPlugin; it
 * is looked for and loaded by start()), log(level, message) (syslog
 * levels; default: warnings and errors on stderr). Events: 'elected'
 * (term), 'lost' (term), 'change' ({ isLeader, term, leaderId }), 'shard'
 * ({ shard, isLeader, term }) in a group, 'tickError' (LeaderPluginError;
 * ticking goes on), 'offers' (after a tick that left fires offered to this
 * leader, run-now requests and interrupted fires with attempts left:
 * [{ job, fireMs, attempt, maxAttempts }]; an offer stays until claimed,
 * so it comes again at the next tick: claim it, with its maxAttempts; a
 * FireRunner does). The constructor does no I/O. The configuration, which
 * may hold a password, is kept private: printed (util.inspect, console.log,
 * JSON.stringify), a Leader shows its namespace, plugin, shards and state,
 * nothing of the connection string.
 */
class Leader extends EventEmitter {
    #config;
    #pluginOption;
    #starting = null;

    constructor(options = {}) {
        super();
        if (!options.connect)
            throw new TypeError('Leader: options.connect is required');
        this.#config = configString(options);
        this.#pluginOption = options.plugin;
        this.pluginPath = null; // set by start()
        this.plugin = null;
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
     * Finds and loads the plugin (the plugin option, else
     * $ODBC_LEADER_PLUGIN, else the installed one: pkg-config runs as a
     * child process the event loop does not wait for), creates the
     * instance and starts ticking. Resolves once the first tick has
     * answered (leader or not); rejects with an Error when no plugin is
     * found, with LeaderPluginError when the plugin, the configuration or
     * the database is refused (the message names the problem).
     */
    start() {
        if (this.#starting === null) {
            this.#starting = this.#start().catch((e) => {
                this.#starting = null; // start() may be called again
                throw e;
            });
        }
        return this.#starting;
    }

    async #start() {
        if (this._stopped)
            return this;
        if (this.plugin === null) {
            const file = await findPluginAsync(this.#pluginOption);
            this.plugin = new Plugin(file);
            this.pluginPath = file;
        }
        if (this._stopped) // stop() came while the plugin was looked for
            return this;
        this.inst = await this.plugin.init(this.#config, {
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

    /** What a Leader shows of itself: its namespace, its plugin and its
     * state; nothing of the connection string. */
    toJSON() {
        return {
            namespace: this.namespace,
            pluginPath: this.pluginPath, shards: this.shards,
            isLeader: this.isLeader(), term: this.term(),
        };
    }

    [util.inspect.custom](depth, options, inspect) {
        if (depth < 0)
            return options.stylize('[Leader]', 'special');
        const inner = { ...options, depth: options.depth === null ? null : options.depth - 1 };
        return `Leader ${inspect(this.toJSON(), inner)}`;
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
        let offers = [];
        try {
            delay = (await this.inst.tick()).nextTickMs;
            if (this.listenerCount('offers') > 0)
                offers = await this.inst.offers();
        } catch (e) {
            if (!(e instanceof LeaderPluginError))
                throw e;
            this.lastError = e;
            delay = e.nextTickMs || 1000;
            this.emit('tickError', e);
        }
        if (offers.length > 0 && this._running)
            this.emit('offers', offers);
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

    /** The shard of job in the group, as the plugin computes it (0 without
     * shards, or before start). */
    shardOf(job) {
        return this.inst !== null ? this.inst.shardOf(job) : 0;
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

    /**
     * Resolves to a Fence for this host's writes, from the plugin's
     * predicate for its own dialect (ABI 1.5: no odbc-leader command
     * needed). options: namespace (default this leader's), job (in a
     * group: the fence is the job's shard's, NAMESPACE/SHARD),
     * placeholder ('?' or '$').
     */
    async fence(options = {}) {
        let ns = options.namespace !== undefined ? options.namespace : this.namespace;
        if (ns === undefined || ns === null)
            throw new TypeError('fence: give options.namespace (the leader was made without one)');
        if (this.shards) {
            if (options.job === undefined)
                throw new TypeError("fence: a group's fence is its job's shard's: give options.job");
            ns = `${ns}/${this.shardOf(options.job)}`;
        }
        return new Fence(await this.inst.fenceSql(), ns, options.placeholder || '?');
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
     * host) of job for the term led. Resolves to the Fire to run, as the
     * database recorded it ({ job, fireMs, term, attempt, recovering,
     * triggered }: the term it is fenced in; attempt 1 unless it recovers
     * a run whose host died, recovering then; triggered for a run-now,
     * whose fireMs is its key, below 0), or null when it is not this
     * host's to run (claimed before by anyone, its job paused: recorded
     * skipped, this host does not lead job, or it computes job's fires by
     * another schedule than the recorded one: setSchedule, logged). maxAttempts above 1 opts
     * the fire into recovery: the next leader gets it offered ('offers')
     * if this host dies before finish. Rejects with LeaderPluginError
     * when the outcome is unknown (do not run it).
     */
    async claim(job, fireMs = 0, maxAttempts = 1) {
        if (!this._running || !this.leads(job))
            return null;
        const term = this.termOf(job);
        try {
            if (!this._has('claim_fire')) { // before ABI 1.4
                const claimed = await this.inst.claim(job, fireMs);
                return claimed ? { job: String(job), fireMs, term, attempt: 1,
                    recovering: false, triggered: false } : null;
            }
            const r = await this.inst.claimFire(job, fireMs, maxAttempts);
            if (!r.run) {
                if (r.paused)
                    this.log(6, `${job} at ${fireMs} not run: the job is paused`);
                return null;
            }
            const c = r.claim;
            return { job: c.job, fireMs, term: c.term, attempt: c.attempt,
                recovering: c.recovering, triggered: c.triggered };
        } catch (e) {
            if (e instanceof NotLeaderError)
                return null;
            if (e instanceof ScheduleError) {
                this.log(3, `${job} at ${fireMs} not run: ${e.message}`);
                return null;
            }
            throw e;
        }
    }

    /**
     * Says how this host computes job's nominal fire times
     * (docs/schedules.md): expr in the scheduler's own syntax (null
     * forgets it), tz the IANA zone it computes in (null: the host's; '':
     * none, for fixed intervals), engine the scheduler and its DST rule.
     * The first claim records it for job; a claim from a host that
     * computes it otherwise (another zone) is refused, logged and not
     * run. Resolves to true, or false for a plugin before ABI 1.6 (which
     * cannot check); rejects with LeaderPluginError for a bad zone.
     */
    async setSchedule(job, expr, tz = null, engine = '') {
        if (!this._has('set_schedule'))
            return false;
        await this.inst.setSchedule(job, expr, tz, engine);
        return true;
    }

    /**
     * Resolves to the fire times of job (epoch ms, ascending, as this
     * host's engine computes them; present: the newest is the fire due
     * now) to claim after an election, an outage or a pause, decided by
     * the library's catch-up policy (docs/catch-up.md): no older than
     * graceMs on the database clock, by policy ('skip', 'latest' (later
     * than the ledger's latest fire of the job), 'all' or 'all:CAP'). A
     * job with no fire in the ledger catches up nothing. With a plugin
     * before ABI 1.7: those within the grace by this host's clock.
     */
    async catchUp(job, times, policy, graceMs, { present = false } = {}) {
        if (!this._has('catch_up')) {
            const floor = Date.now() - graceMs;
            return times.filter((t) => t >= floor);
        }
        return this.inst.catchUp(job, policy, graceMs, times, { present });
    }

    /** True when the instance's plugin has member (an instance without a
     * plugin, as the tests' fakes: the calls before ABI 1.4). */
    _has(member) {
        return Boolean(this.inst.plugin && this.inst.plugin.has(member));
    }

    /** Records the outcome of a claimed fire (status 0: success) for its
     * term; rejects when a later term took the fire again (this host was
     * paused past its lease) or the outcome could not be recorded. */
    finish(fire, status = 0) {
        if (!this._has('finish_fire'))
            return this.inst.finish(fire.job, fire.fireMs, status);
        return this.inst.finishFire(fire, status);
    }

    /**
     * Claims the fire and, when this host is to run it, runs fn(fire) with
     * currentFire() set, then records its outcome (status 1 when fn threw,
     * and the error is thrown again). Resolves to { ran, fire, result }.
     */
    runFire(job, fireMs, fn, maxAttempts = 1) {
        return this.track(this._runFire(job, fireMs, fn, maxAttempts));
    }

    /** Makes stop() wait for promise (a fire under way) before it shuts
     * the instance down; returns promise. */
    track(promise) {
        this._inflight.add(promise);
        const done = () => this._inflight.delete(promise);
        promise.then(done, done);
        return promise;
    }

    async _runFire(job, fireMs, fn, maxAttempts) {
        const fire = await this.claim(job, fireMs, maxAttempts);
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

module.exports = {
    Leader, findPlugin, findPluginAsync, resolvePlugin, configString, currentFire, fireStore,
    PLUGIN_ENV,
};
