// SPDX-License-Identifier: MIT
// lib/plugin.js: the koffi binding of the scheduler-plugin ABI
// (plugin/leader_plugin.h). Plugin loads a .so and reads its function
// table; Instance is one candidate made by init(). Every call that may do
// I/O (init, tick, claim, finish, shutdown) runs on a koffi worker thread
// and returns a Promise, and an Instance runs them one at a time, in the
// order they were asked for: the plugin's instances are not thread-safe.
// The calls without I/O (isLeader, term, leadership, shardLeadership,
// candidateId, shards) are synchronous, as the ABI allows from any thread.
'use strict';

const koffi = require('koffi');
const { LeaderPluginError, NotLeaderError, ScheduleError, classOf } = require('./errors');

const ABI_MAJOR = 1; // LEADER_PLUGIN_ABI_MAJOR
const ABI_MINOR = 8; // LEADER_PLUGIN_ABI_MINOR
const EABI = -1000; // LEADER_PLUGIN_EABI
const ENOTLEADER = -1001; // LEADER_PLUGIN_ENOTLEADER (ABI 1.1)
// LEADER_PLUGIN_ESCHEDULE (ABI 1.6): a claim computed by another schedule
// than the one its job's fires are recorded under (docs/schedules.md)
const ESCHEDULE = -1002;
const RESIGN_REQUESTED = 2; // LEADER_PLUGIN_RESIGN_REQUESTED
const CLAIM_RUN = 1; // LEADER_PLUGIN_CLAIM_RUN (ABI 1.4)
const CLAIM_PAUSED = 2; // LEADER_PLUGIN_CLAIM_PAUSED (ABI 1.4)
const OFFERS_MAX = 64; // offers() reads at most this many
const ERRLEN = 1024; // init's message buffer
const MSGLEN = 512; // last_error's message buffer

// ---- the C types, member for member as in leader_plugin.h ----------------

const LogFn = koffi.proto(
    'void odbc_leader_node_log(void *ctx, int level, const char *msg)');
const ChangeFn = koffi.proto(
    'void odbc_leader_node_change(void *ctx, int is_leader, int64_t term, ' +
    'const char *leader_id)');
const ShardFn = koffi.proto(
    'void odbc_leader_node_shard(void *ctx, uint32_t shard, int is_leader, ' +
    'int64_t term)');
const Host = koffi.struct('odbc_leader_node_host', {
    struct_size: 'uint32_t',
    ctx: 'void *',
    log: koffi.pointer(LogFn),
    on_change: koffi.pointer(ChangeFn),
    on_shard_change: koffi.pointer(ShardFn), // ABI 1.3
});

// struct leader_plugin: every function pointer as void *, decoded with its
// prototype below only once struct_size says the plugin has it.
const Table = koffi.struct('odbc_leader_node_table', {
    struct_size: 'uint32_t',
    abi_major: 'uint16_t',
    abi_minor: 'uint16_t',
    name: 'void *',
    version: 'void *',
    init: 'void *',
    tick: 'void *',
    is_leader: 'void *',
    shutdown: 'void *',
    term: 'void *',
    strerror: 'void *',
    claim: 'void *', // ABI 1.1
    finish: 'void *',
    leadership: 'void *',
    candidate_id: 'void *', // ABI 1.2
    error_class: 'void *',
    last_error: 'void *',
    shards: 'void *', // ABI 1.3
    shard_of: 'void *',
    shard_leadership: 'void *',
    claim_fire: 'void *', // ABI 1.4
    finish_fire: 'void *',
    offers: 'void *',
    pause_job: 'void *',
    trigger_job: 'void *',
    fence_sql: 'void *', // ABI 1.5
    set_schedule: 'void *', // ABI 1.6
    local_zone: 'void *',
    catch_up: 'void *', // ABI 1.7
    catch_up_select: 'void *',
    second_pass: 'void *', // ABI 1.8
    first_pass_next: 'void *',
});

// ABI 1.4: struct leader_plugin_claim and struct leader_plugin_offer.
const Claim = koffi.struct('odbc_leader_node_claim_rec', {
    struct_size: 'uint32_t',
    attempt: 'int32_t',
    max_attempts: 'int32_t',
    recovering: 'int32_t',
    triggered: 'int32_t',
    term: 'int64_t',
    nominal_ms: 'int64_t',
});
const Offer = koffi.struct('odbc_leader_node_offer_rec', {
    fire_ms: 'int64_t',
    attempt: 'int32_t',
    max_attempts: 'int32_t',
    job: koffi.array('char', 129, 'String'),
});

// ABI 1.8: the engine's next-fire function and the zone's wall-time
// comparison that the first-pass rule calls back.
koffi.proto('int64_t odbc_leader_node_next(void *ctx, int64_t ms)');
koffi.proto('int odbc_leader_node_same_wall(void *ctx, int64_t a, int64_t b)');

const PROTOS = {
    init: koffi.proto('int odbc_leader_node_init(const char *config, ' +
        'void *host, _Out_ void **inst, void *err, size_t errlen)'),
    tick: koffi.proto('int odbc_leader_node_tick(void *inst, ' +
        '_Out_ uint32_t *next_tick_ms)'),
    is_leader: koffi.proto('int odbc_leader_node_is_leader(void *inst)'),
    shutdown: koffi.proto('void odbc_leader_node_shutdown(void *inst)'),
    term: koffi.proto('int64_t odbc_leader_node_term(void *inst)'),
    strerror: koffi.proto('const char *odbc_leader_node_strerror(int rc)'),
    claim: koffi.proto('int odbc_leader_node_claim(void *inst, ' +
        'const char *job, int64_t fire_ms)'),
    finish: koffi.proto('int odbc_leader_node_finish(void *inst, ' +
        'const char *job, int64_t fire_ms, int status)'),
    leadership: koffi.proto('int64_t odbc_leader_node_leadership(' +
        'void *inst, _Out_ uint32_t *valid_for_ms)'),
    candidate_id: koffi.proto(
        'const char *odbc_leader_node_candidate_id(void *inst)'),
    error_class: koffi.proto('int odbc_leader_node_error_class(int rc)'),
    last_error: koffi.proto('int odbc_leader_node_last_error(void *inst, ' +
        '_Out_ int *error_class, void *sqlstate, _Out_ long *native, ' +
        'void *msg, size_t msglen)'),
    shards: koffi.proto('uint32_t odbc_leader_node_shards(void *inst)'),
    shard_of: koffi.proto('uint32_t odbc_leader_node_shard_of(void *inst, ' +
        'const char *key)'),
    shard_leadership: koffi.proto('int64_t odbc_leader_node_shard_leadership(' +
        'void *inst, uint32_t shard, _Out_ uint32_t *valid_for_ms)'),
    claim_fire: koffi.proto('int odbc_leader_node_claim_fire(void *inst, ' +
        'const char *job, int64_t fire_ms, int max_attempts, ' +
        '_Inout_ odbc_leader_node_claim_rec *out)'),
    finish_fire: koffi.proto('int odbc_leader_node_finish_fire(void *inst, ' +
        'const char *job, int64_t fire_ms, int64_t term, int status)'),
    offers: koffi.proto('int odbc_leader_node_offers(void *inst, ' +
        'void *out, int max)'),
    pause_job: koffi.proto('int odbc_leader_node_pause_job(void *inst, ' +
        'const char *job, int paused)'),
    trigger_job: koffi.proto('int odbc_leader_node_trigger_job(void *inst, ' +
        'const char *job, _Out_ int64_t *key)'),
    fence_sql: koffi.proto('int odbc_leader_node_fence_sql(void *inst, ' +
        'void *out, size_t len)'),
    set_schedule: koffi.proto('int odbc_leader_node_set_schedule(' +
        'void *inst, const char *job, const char *expr, const char *tz, ' +
        'const char *engine)'),
    local_zone: koffi.proto('int odbc_leader_node_local_zone(void *out, ' +
        'size_t len)'),
    catch_up: koffi.proto('int odbc_leader_node_catch_up(void *inst, ' +
        'const char *job, const char *policy, int64_t grace_ms, int present, ' +
        'void *times, size_t n, _Out_ size_t *first)'),
    catch_up_select: koffi.proto('int odbc_leader_node_catch_up_select(' +
        'const char *policy, int64_t grace_ms, int present, int64_t now_ms, ' +
        'int64_t last_ms, void *times, size_t n, _Out_ size_t *first)'),
    second_pass: koffi.proto('int odbc_leader_node_second_pass(' +
        'odbc_leader_node_next *next, odbc_leader_node_same_wall *same_wall, ' +
        'void *ctx, int64_t t)'),
    first_pass_next: koffi.proto('int odbc_leader_node_first_pass_next(' +
        'odbc_leader_node_next *next, odbc_leader_node_same_wall *same_wall, ' +
        'void *ctx, int64_t ms, _Out_ int64_t *out)'),
};

/** times (numbers) as a C array of int64_t. */
function int64s(times) {
    const buf = Buffer.alloc(8 * Math.max(times.length, 1));
    times.forEach((t, i) => buf.writeBigInt64LE(BigInt(t), 8 * i));
    return buf;
}

// The struct_size of a 1.0 table: it ends where claim (ABI 1.1) begins.
const SIZE_1_0 = koffi.offsetof(Table, 'claim');

/** A C string at ptr (a BigInt address) as a string, null for NULL. */
function cString(ptr) {
    if (ptr === null || ptr === undefined || ptr === 0n || ptr === 0)
        return null;
    return koffi.decode(ptr, 'char', -1);
}

/** The NUL-terminated text at the start of buf. */
function bufText(buf) {
    const end = buf.indexOf(0);
    return buf.toString('utf8', 0, end < 0 ? buf.length : end);
}

/** An int64 from koffi (Number or BigInt) as a Number. */
function num(v) {
    return typeof v === 'bigint' ? Number(v) : v;
}

/**
 * A loaded plugin and its function table. new Plugin(path) calls
 * leader_plugin_entry(abiMajor); a plugin of another major version
 * refuses with EABI, thrown as LeaderPluginError. abiMajor is a parameter
 * only so that tests can check that refusal. A library is never unloaded.
 */
class Plugin {
    constructor(path, abiMajor = ABI_MAJOR) {
        this.path = path;
        let lib;
        try {
            lib = koffi.load(path);
        } catch (e) {
            throw new LeaderPluginError(EABI, `${path}: cannot load: ${e.message}`,
                { strerror: 'cannot load the plugin' });
        }
        const entry = lib.func('int leader_plugin_entry(uint16_t host_abi_major, ' +
            '_Out_ void **out)');
        const out = [null];
        const rc = entry(abiMajor, out);
        if (rc !== 0 || !out[0]) {
            throw new LeaderPluginError(rc !== 0 ? rc : EABI,
                `${path}: ABI major ${abiMajor} refused (${rc})`,
                { strerror: 'unsupported plugin ABI major version' });
        }
        this._lib = lib; // keeps the library loaded
        this._table = out[0];
        this.structSize = koffi.decode(this._table, 'uint32_t');
        if (this.structSize < SIZE_1_0) {
            throw new LeaderPluginError(EABI,
                `${path}: struct leader_plugin too small (${this.structSize} bytes)`);
        }
        this.abiMajor = this._field('abi_major', 'uint16_t');
        this.abiMinor = this._field('abi_minor', 'uint16_t');
        this.name = cString(this._field('name', 'void *'));
        this.version = cString(this._field('version', 'void *'));
        this._fns = {};
    }

    /** The member of the table at its offset, decoded as type. */
    _field(member, type) {
        return koffi.decode(this._table, koffi.offsetof(Table, member), type);
    }

    /**
     * True when the table has member (a name of struct leader_plugin, such
     * as "claim") and it is set: struct_size covers it, as
     * LEADER_PLUGIN_HAS checks in C.
     */
    has(member) {
        if (!Object.prototype.hasOwnProperty.call(PROTOS, member))
            return false;
        const end = koffi.offsetof(Table, member) + koffi.sizeof('void *');
        if (this.structSize < end)
            return false;
        const p = this._field(member, 'void *');
        return p !== null && p !== 0n;
    }

    /**
     * The callable member (a koffi function with .async); throws
     * LeaderPluginError EABI when the plugin does not have it.
     */
    fn(member) {
        let f = this._fns[member];
        if (f === undefined) {
            if (!this.has(member)) {
                throw new LeaderPluginError(EABI,
                    `${this.path}: plugin ${this.name} (ABI ${this.abiMajor}.` +
                    `${this.abiMinor}) has no ${member}`,
                    { strerror: 'unsupported plugin ABI version' });
            }
            f = koffi.decode(this._field(member, 'void *'), PROTOS[member]);
            this._fns[member] = f;
        }
        return f;
    }

    /**
     * ABI 1.6: the IANA name of the host's time zone as the C library
     * computes local time (TZ, else /etc/localtime), 'UTC' for its
     * aliases. Throws LeaderPluginError when it has none.
     */
    localZone() {
        const buf = Buffer.alloc(128);
        const rc = this.fn('local_zone')(buf, buf.length);
        if (rc < 0)
            throw new LeaderPluginError(rc, "the host's time zone has no IANA name: set TZ",
                { strerror: this.strerror(rc) });
        return bufText(buf);
    }

    /**
     * ABI 1.7: the catch-up policy (docs/catch-up.md) with the database
     * clock nowMs and the ledger's latest nominal time lastMs given, no
     * I/O: of times (ascending; present: the newest is the fire due now),
     * those to claim, oldest first. Throws LeaderPluginError for a policy
     * text or times the plugin refuses.
     */
    catchUpSelect(policy, graceMs, nowMs, lastMs, times, { present = false } = {}) {
        const first = [0];
        const n = this.fn('catch_up_select')(String(policy), graceMs, present ? 1 : 0,
            nowMs, lastMs, int64s(times), times.length, first);
        if (n < 0)
            throw new LeaderPluginError(n, this.strerror(n));
        return times.slice(num(first[0]), num(first[0]) + n);
    }

    /**
     * ABI 1.8: the first-pass rule (docs/schedules.md) with the engine's
     * next(ms) (the first fire time after ms, or null) and sameWall(a, b)
     * (true when instants a and b show one wall time in the job's zone).
     * secondPass(t): true when fire time t is the second pass of a repeated
     * wall time, not to be run; firstPassNext(ms): next kept to the first
     * pass, or null. An exception of a callback is thrown after the call.
     */
    secondPass(next, sameWall, t) {
        return this._firstPass('second_pass', next, sameWall, t, []) === 1;
    }

    firstPassNext(next, sameWall, ms) {
        const out = [null];
        return this._firstPass('first_pass_next', next, sameWall, ms, [out]) === 1
            ? num(out[0]) : null;
    }

    _firstPass(member, next, sameWall, t, rest) {
        let thrown = null;
        const guard = (fn, none) => (...args) => {
            try {
                return thrown === null ? fn(...args.slice(1).map(num)) : none;
            } catch (e) {
                thrown = e;
                return none;
            }
        };
        const rc = this.fn(member)(guard((ms) => next(ms) ?? -1, -1),
            guard((a, b) => (sameWall(a, b) ? 1 : 0), 0), null, t, ...rest);
        if (thrown !== null)
            throw thrown;
        if (rc < 0)
            throw new LeaderPluginError(rc, this.strerror(rc));
        return rc;
    }

    /** The plugin's static message for one of its negative codes. */
    strerror(code) {
        return this.fn('strerror')(code) || 'unknown error';
    }

    /**
     * 'transient', 'config' or 'fatal' for one of the plugin's negative
     * codes (ABI 1.2; null before, or for a code that is not an error).
     */
    errorClass(code) {
        if (!this.has('error_class'))
            return null;
        return classOf(this.fn('error_class')(code));
    }

    /** Resolves to a new Instance of config (see Instance.create). */
    init(config, callbacks = {}) {
        return Instance.create(this, config, callbacks);
    }
}

/** Runs a koffi function's async form; resolves to its result. */
function callAsync(f, args) {
    return new Promise((resolve, reject) => {
        f.async(...args, (err, res) => (err ? reject(err) : resolve(res)));
    });
}

/**
 * One plugin instance: a candidate of one election namespace, or a member
 * of a sharded group. Made by Instance.create / Plugin.init. The I/O calls
 * return Promises and run one at a time; shutdown() ends the instance (a
 * leader resigns) and frees what it holds.
 */
class Instance {
    constructor(plugin) {
        this.plugin = plugin;
        this._inst = null;
        this._queue = Promise.resolve();
        this._closed = false;
        this._registered = [];
        this._host = null;
    }

    /**
     * Resolves to a new Instance of config (a string). callbacks may hold
     * log(level, message) (syslog levels), onChange(isLeader, term,
     * leaderId) and onShardChange(shard, isLeader, term); they run on the
     * main thread while the plugin waits for them, so a shard's stop is
     * handled before the shard is handed over. Rejects with
     * LeaderPluginError and the plugin's message when init fails.
     */
    static async create(plugin, config, callbacks = {}) {
        const self = new Instance(plugin);
        const reg = (fn, proto) => {
            if (typeof fn !== 'function')
                return null;
            const p = koffi.register((...a) => self._callback(fn, a),
                koffi.pointer(proto));
            self._registered.push(p);
            return p;
        };
        self._host = koffi.alloc(Host, 1);
        koffi.encode(self._host, Host, {
            struct_size: koffi.sizeof(Host),
            ctx: null,
            log: reg(callbacks.log && ((_c, level, msg) =>
                callbacks.log(level, msg || '')), LogFn),
            on_change: reg(callbacks.onChange && ((_c, leader, term, id) =>
                callbacks.onChange(leader !== 0, num(term), id)), ChangeFn),
            on_shard_change: reg(callbacks.onShardChange &&
                ((_c, shard, leader, term) =>
                    callbacks.onShardChange(shard, leader !== 0, num(term))),
                ShardFn),
        });
        const out = [null];
        const err = Buffer.alloc(ERRLEN);
        let rc;
        try {
            rc = await callAsync(plugin.fn('init'),
                [String(config), self._host, out, err, ERRLEN]);
        } catch (e) {
            self._free();
            throw e;
        }
        if (rc < 0 || !out[0]) {
            self._free();
            const strerror = plugin.strerror(rc);
            throw new LeaderPluginError(rc, bufText(err) || strerror,
                { strerror, errorClass: plugin.errorClass(rc) });
        }
        self._inst = out[0];
        self._rethrow();
        return self;
    }

    /** Calls a user callback; an exception is kept and thrown by the
     * call that made the plugin call it (never unwinds through C). */
    _callback(fn, args) {
        try {
            fn(...args);
        } catch (e) {
            if (this._pending === undefined)
                this._pending = e;
        }
    }

    _rethrow() {
        const e = this._pending;
        this._pending = undefined;
        if (e !== undefined)
            throw e;
    }

    _free() {
        for (const p of this._registered)
            koffi.unregister(p);
        this._registered = [];
        if (this._host !== null) {
            koffi.free(this._host);
            this._host = null;
        }
    }

    /** Queues op (a function returning a Promise) after every call asked
     * for before it; resolves to its result. */
    _serial(op) {
        const run = this._queue.then(op);
        this._queue = run.catch(() => {});
        return run;
    }

    _live() {
        if (this._closed)
            throw new LeaderPluginError(EABI, 'the instance was shut down',
                { strerror: 'the instance was shut down' });
        return this._inst;
    }

    /** A LeaderPluginError for code rc with this instance's last error. */
    /** The error a claim's negative rc means. */
    _claimError(rc) {
        if (rc === ENOTLEADER)
            return this._error(rc, NotLeaderError);
        if (rc === ESCHEDULE)
            return this._error(rc, ScheduleError);
        return this._error(rc);
    }

    _error(rc, Cls = LeaderPluginError) {
        const strerror = this.plugin.strerror(rc);
        const last = this.lastError();
        const same = last && last.code === rc;
        let msg = strerror;
        if (same && last.message && last.message !== strerror)
            msg = last.message.includes(strerror) ? last.message
                : `${strerror}: ${last.message}`;
        return new Cls(rc, msg, {
            strerror,
            errorClass: same && last.errorClass ? last.errorClass
                : this.plugin.errorClass(rc),
            sqlstate: same ? last.sqlstate : '',
            native: same ? last.native : 0,
        });
    }

    /**
     * One election step. Resolves to { leader, nextTickMs,
     * resignRequested }; rejects with a LeaderPluginError carrying
     * nextTickMs when the plugin failed (tick again after it).
     */
    tick() {
        return this._serial(async () => {
            const next = [1000];
            const rc = await callAsync(this.plugin.fn('tick'), [this._live(), next]);
            this._rethrow();
            if (rc < 0) {
                const e = this._error(rc);
                e.nextTickMs = next[0];
                throw e;
            }
            return { leader: rc >= 1, nextTickMs: next[0],
                resignRequested: rc === RESIGN_REQUESTED };
        });
    }

    /**
     * Claims fire fireMs (epoch ms, the nominal time) of job for the term
     * led (in a group, the term of job's shard). Resolves to true (run it)
     * or false (claimed before, by anyone, in any term); rejects with
     * NotLeaderError when this instance does not lead, LeaderPluginError
     * otherwise (the outcome is then unknown: do not run it).
     */
    claim(job, fireMs = 0) {
        const f = this.plugin.fn('claim');
        return this._serial(async () => {
            const rc = await callAsync(f, [this._live(), String(job), fireMs]);
            if (rc < 0)
                throw this._claimError(rc);
            return rc === 1;
        });
    }

    /** Records the outcome (0 success, else an exit status or -signal)
     * of a fire this instance claimed; idempotent. */
    finish(job, fireMs = 0, status = 0) {
        const f = this.plugin.fn('finish');
        return this._serial(async () => {
            const rc = await callAsync(f, [this._live(), String(job), fireMs,
                status | 0]);
            if (rc < 0)
                throw this._error(rc);
        });
    }

    // ---- ABI 1.4: the fire lifecycle (docs/lifecycle.md) ---------------

    /**
     * claim() that says what it got. maxAttempts > 1 opts the job into
     * recovery. Resolves to { run: true, claim } to run it (claim: job,
     * fireMs, attempt, maxAttempts, recovering, triggered, term,
     * nominalMs), { run: false, paused } otherwise (claimed before, or its
     * job is paused); rejects with NotLeaderError or LeaderPluginError.
     */
    claimFire(job, fireMs, maxAttempts = 1) {
        const f = this.plugin.fn('claim_fire');
        return this._serial(async () => {
            const c = { struct_size: koffi.sizeof(Claim), attempt: 0,
                max_attempts: 0, recovering: 0, triggered: 0, term: 0,
                nominal_ms: 0 };
            const rc = await callAsync(f, [this._live(), String(job), fireMs,
                maxAttempts | 0, c]);
            if (rc < 0)
                throw this._claimError(rc);
            if (rc !== CLAIM_RUN)
                return { run: false, paused: rc === CLAIM_PAUSED };
            return { run: true, claim: { job: String(job), fireMs,
                attempt: c.attempt, maxAttempts: c.max_attempts,
                recovering: c.recovering !== 0, triggered: c.triggered !== 0,
                term: num(c.term), nominalMs: num(c.nominal_ms) } };
        });
    }

    /** Records the outcome of the attempt claimFire() resolved to; rejects
     * when a later term took the fire again. */
    finishFire(claim, status = 0) {
        const f = this.plugin.fn('finish_fire');
        return this._serial(async () => {
            const rc = await callAsync(f, [this._live(), claim.job,
                claim.fireMs, claim.term, status | 0]);
            if (rc < 0)
                throw this._error(rc);
        });
    }

    /** Resolves to the fires offered to this leader as its ticks learned
     * them ([] for an older plugin): { job, fireMs, attempt, maxAttempts }.
     * No I/O, but queued behind the calls under way (the plugin reads what
     * tick writes: never at the same time). */
    offers() {
        return this._serial(async () => {
            if (this._closed || !this.plugin.has('offers'))
                return [];
            const size = koffi.sizeof(Offer);
            const buf = Buffer.alloc(size * OFFERS_MAX);
            const n = this.plugin.fn('offers')(this._inst, buf, OFFERS_MAX);
            if (n < 0)
                throw this._error(n);
            const list = [];
            for (let i = 0; i < Math.min(n, OFFERS_MAX); i++) {
                const o = koffi.decode(buf, i * size, Offer);
                list.push({ job: o.job, fireMs: num(o.fire_ms), attempt: o.attempt,
                    maxAttempts: o.max_attempts });
            }
            return list;
        });
    }

    /** Pauses (or resumes, paused false) job on every host, durably. */
    pauseJob(job, paused = true) {
        const f = this.plugin.fn('pause_job');
        return this._serial(async () => {
            const rc = await callAsync(f, [this._live(), String(job),
                paused ? 1 : 0]);
            if (rc < 0)
                throw this._error(rc);
        });
    }

    /** Asks the leader to run job once now; resolves to the run-now's key
     * (below 0). */
    triggerJob(job) {
        const f = this.plugin.fn('trigger_job');
        return this._serial(async () => {
            const key = [0];
            const rc = await callAsync(f, [this._live(), String(job), key]);
            if (rc < 0)
                throw this._error(rc);
            return num(key[0]);
        });
    }

    /**
     * ABI 1.7: resolves to the fire times to claim of job's times
     * (ascending, as this host's engine computes them; present: the
     * newest is the fire due now), oldest first, decided by the plugin's
     * catch-up policy (docs/catch-up.md) from the ledger's latest fire of
     * the job and the database clock. One round trip.
     */
    catchUp(job, policy, graceMs, times, { present = false } = {}) {
        const f = this.plugin.fn('catch_up');
        return this._serial(async () => {
            const first = [0];
            const n = await callAsync(f, [this._live(), String(job), String(policy),
                graceMs, present ? 1 : 0, int64s(times), times.length, first]);
            if (n < 0)
                throw this._error(n);
            return times.slice(num(first[0]), num(first[0]) + n);
        });
    }

    /**
     * ABI 1.5: resolves to the fence predicate of the instance's dialect
     * (the SELECT inside EXISTS ( ... ), `?` for the namespace and then
     * the term). No I/O, but queued behind the calls under way: a
     * reconnect in a tick may load the dialect again. Throws
     * LeaderPluginError (EABI before 1.5).
     */
    fenceSql() {
        const f = this.plugin.fn('fence_sql');
        return this._serial(async () => {
            let n = f(this._live(), null, 0);
            let buf = null;
            if (n >= 0) {
                buf = Buffer.alloc(n + 1);
                n = f(this._live(), buf, n + 1);
            }
            if (n < 0)
                throw this._error(n);
            return bufText(buf);
        });
    }

    /**
     * ABI 1.6: says how this host computes the nominal times of job's
     * fires (docs/schedules.md): expr in the engine's own syntax (null
     * forgets it), tz the IANA zone it computes in (null: the host's;
     * '': none, for intervals), engine its name and DST rule. A later
     * claim computed by another schedule than the job's recorded one
     * rejects with ScheduleError. No I/O; queued behind the calls under
     * way. Throws LeaderPluginError (a bad zone or part, named).
     */
    setSchedule(job, expr, tz = null, engine = '') {
        const f = this.plugin.fn('set_schedule');
        return this._serial(async () => {
            const rc = f(this._live(), String(job),
                expr === null ? null : String(expr),
                tz === null ? null : String(tz), String(engine));
            if (rc < 0)
                throw this._error(rc);
        });
    }

    /** Resigns if leader, leaves the election, frees the instance; a
     * second call does nothing. Resolves when done. */
    shutdown() {
        return this._serial(async () => {
            if (this._closed)
                return;
            this._closed = true;
            try {
                await callAsync(this.plugin.fn('shutdown'), [this._inst]);
            } finally {
                this._inst = null;
                this._free();
            }
            this._rethrow();
        });
    }

    get closed() {
        return this._closed;
    }

    /** True while this instance leads (a group: any shard). No I/O. */
    isLeader() {
        return !this._closed && this.plugin.fn('is_leader')(this._inst) !== 0;
    }

    /** The term (fencing token) led, 0 when not leader. No I/O. */
    term() {
        return this._closed ? 0 : num(this.plugin.fn('term')(this._inst));
    }

    /** { term, validForMs } read at once; term 0 when not leader. */
    leadership() {
        const f = this.plugin.fn('leadership');
        if (this._closed)
            return { term: 0, validForMs: 0 };
        const valid = [0];
        const term = num(f(this._inst, valid));
        return { term, validForMs: term !== 0 ? valid[0] : 0 };
    }

    /** This instance's candidate id (ABI 1.2). No I/O. */
    candidateId() {
        return this.plugin.fn('candidate_id')(this._live());
    }

    /** The shard count of a group member, 0 otherwise (or before 1.3). */
    shards() {
        if (this._closed || !this.plugin.has('shards'))
            return 0;
        return this.plugin.fn('shards')(this._inst);
    }

    /**
     * The shard of key in this instance's group, as the plugin's shard_of
     * computes it (FNV-1a 64 of its UTF-8 bytes, docs/abi.md); 0 outside a
     * group or once shut down.
     */
    shardOf(key) {
        if (this.shards() === 0)
            return 0;
        return this.plugin.fn('shard_of')(this._inst, String(key));
    }

    /** { term, validForMs } of shard as this member leads it. No I/O. */
    shardLeadership(shard) {
        const f = this.plugin.fn('shard_leadership');
        if (this._closed)
            return { term: 0, validForMs: 0 };
        const valid = [0];
        const term = num(f(this._inst, shard >>> 0, valid));
        return { term, validForMs: term !== 0 ? valid[0] : 0 };
    }

    /**
     * The instance's last error (ABI 1.2): { code, errorClass, sqlstate,
     * native, message }, code 0 when no call failed yet; null for an
     * older plugin. Not while a call of this instance runs.
     */
    lastError() {
        if (this._closed || !this.plugin.has('last_error'))
            return null;
        const cls = [0];
        const native = [0];
        const state = Buffer.alloc(6);
        const msg = Buffer.alloc(MSGLEN);
        const code = this.plugin.fn('last_error')(this._inst, cls, state,
            native, msg, MSGLEN);
        return { code, errorClass: classOf(cls[0]), sqlstate: bufText(state),
            native: num(native[0]), message: bufText(msg) };
    }
}

module.exports = {
    ABI_MAJOR, ABI_MINOR, EABI, ENOTLEADER, ESCHEDULE, RESIGN_REQUESTED,
    CLAIM_RUN, CLAIM_PAUSED, Plugin, Instance,
};
