// SPDX-License-Identifier: MIT
// index.d.ts: the TypeScript declarations of the odbc-leader package's
// root; each scheduler integration has its own (node-cron.d.ts for
// odbc-leader/node-cron, node-schedule.d.ts, croner.d.ts, cron.d.ts).
// test/exports.test.js checks that every value declared here is exported.
import { EventEmitter } from 'node:events';

export const ABI_MAJOR: number;
export const ABI_MINOR: number;
export const EABI: number;
export const ENOTLEADER: number;
/** LEADER_PLUGIN_ESCHEDULE (ABI 1.6): a claim computed by another schedule. */
export const ESCHEDULE: number;
export const PLUGIN_ENV: 'ODBC_LEADER_PLUGIN';

/** What to do about an error: keep going, alert an operator, alert a developer. */
export type ErrorClass = 'transient' | 'config' | 'fatal';

export class LeaderPluginError extends Error {
    code: number;
    strerror: string;
    errorClass: ErrorClass | null;
    /** The driver's SQLSTATE, '' when the error did not come from it. */
    sqlstate: string;
    native: number;
    /** tick() only: tick again after this many ms. */
    nextTickMs?: number;
}
export class NotLeaderError extends LeaderPluginError {}
/** A claim computed by another schedule than its job's recorded one
 * (docs/schedules.md): the message names both. */
export class ScheduleError extends LeaderPluginError {}

/** A fire this host claimed: run it under term (the fencing token). */
export interface Fire {
    job: string;
    /** The fire's nominal time (epoch ms); a run-now's key (below 0). */
    fireMs: number;
    /** The term the claim is fenced in. */
    term: number;
    /** 1, or n + 1 when attempt n's host died before its end. */
    attempt: number;
    /** An earlier attempt's term ended without its outcome. */
    recovering: boolean;
    /** A run-now (odbc-leader jobs trigger). */
    triggered: boolean;
}

export interface Leadership {
    term: number;
    validForMs: number;
}

export interface LastError {
    code: number;
    errorClass: ErrorClass | null;
    sqlstate: string;
    native: number;
    message: string;
}

export interface TickResult {
    leader: boolean;
    nextTickMs: number;
    resignRequested: boolean;
}

export interface Callbacks {
    log?: (level: number, message: string) => void;
    onChange?: (isLeader: boolean, term: number, leaderId: string | null) => void;
    onShardChange?: (shard: number, isLeader: boolean, term: number) => void;
}

export class Plugin {
    constructor(path: string, abiMajor?: number);
    readonly path: string;
    readonly name: string | null;
    readonly version: string | null;
    readonly abiMajor: number;
    readonly abiMinor: number;
    has(member: string): boolean;
    strerror(code: number): string;
    errorClass(code: number): ErrorClass | null;
    /** ABI 1.6: the IANA name of the host's time zone. */
    localZone(): string;
    /** ABI 1.7 (docs/catch-up.md): the catch-up policy with the database
     * clock and the ledger's latest fire given (no I/O). */
    catchUpSelect(policy: string, graceMs: number, nowMs: number, lastMs: number,
                  times: number[], options?: { present?: boolean }): number[];
    /** ABI 1.8 (docs/schedules.md): the first-pass rule, with the engine's
     * next fire time after ms (null: none) and a wall-time comparison in
     * the job's zone. */
    secondPass(next: (ms: number) => number | null,
               sameWall: (a: number, b: number) => boolean, t: number): boolean;
    firstPassNext(next: (ms: number) => number | null,
                  sameWall: (a: number, b: number) => boolean, ms: number): number | null;
    init(config: string, callbacks?: Callbacks): Promise<Instance>;
}

export class Instance {
    static create(plugin: Plugin, config: string, callbacks?: Callbacks): Promise<Instance>;
    readonly plugin: Plugin;
    readonly closed: boolean;
    tick(): Promise<TickResult>;
    claim(job: string, fireMs?: number): Promise<boolean>;
    finish(job: string, fireMs?: number, status?: number): Promise<void>;
    shutdown(): Promise<void>;
    isLeader(): boolean;
    term(): number;
    leadership(): Leadership;
    candidateId(): string;
    shards(): number;
    shardOf(key: string): number;
    shardLeadership(shard: number): Leadership;
    lastError(): LastError | null;
    /** ABI 1.4 (docs/lifecycle.md): a claim that says what it got. */
    claimFire(job: string, fireMs: number, maxAttempts?: number): Promise<ClaimResult>;
    finishFire(claim: Claim, status?: number): Promise<void>;
    offers(): Promise<Offer[]>;
    pauseJob(job: string, paused?: boolean): Promise<void>;
    triggerJob(job: string): Promise<number>;
    /** ABI 1.5: the fence predicate of the instance's dialect (no I/O). */
    fenceSql(): Promise<string>;
    /** ABI 1.6: this host's schedule identity of job (docs/schedules.md). */
    setSchedule(job: string, expr: string | null, tz?: string | null,
                engine?: string): Promise<void>;
    /** ABI 1.7 (docs/catch-up.md): of job's fire times, those to claim,
     * decided from the ledger's latest fire and the database clock. */
    catchUp(job: string, policy: string, graceMs: number, times: number[],
            options?: { present?: boolean }): Promise<number[]>;
}

/** A fire claimed to run, as the database recorded it (ABI 1.4). */
export interface Claim {
    job: string;
    fireMs: number;
    attempt: number;
    maxAttempts: number;
    /** An earlier attempt's term ended without its outcome. */
    recovering: boolean;
    /** A run-now an operator asked for. */
    triggered: boolean;
    /** The fencing token; finishFire uses it. */
    term: number;
    nominalMs: number;
}

export type ClaimResult =
    | { run: true; claim: Claim }
    | { run: false; paused: boolean };

/** A fire offered to the leader: a run-now (fireMs below 0) or an
 * interrupted attempt its job may run again. */
export interface Offer {
    job: string;
    fireMs: number;
    attempt: number;
    maxAttempts: number;
}

export interface LeaderOptions {
    /** An ODBC connection string or "DSN=name". */
    connect: string;
    namespace?: string;
    ttlMs?: number;
    /** A member of a sharded group of this many shards (LeaderShards). */
    shards?: number;
    /** More Leader* keys, "Key=value;...". */
    extra?: string;
    /** odbc_leader.so; default $ODBC_LEADER_PLUGIN, else the installed one
     * (looked for by start(), never by the constructor). */
    plugin?: string;
    log?: (level: number, message: string) => void;
}

export interface ChangeEvent {
    isLeader: boolean;
    term: number;
    leaderId: string | null;
}

export interface ShardEvent {
    shard: number;
    isLeader: boolean;
    term: number;
}

export interface RunResult<T> {
    ran: boolean;
    fire: Fire | null;
    result: T | undefined;
}

/** What a Leader shows when printed: nothing of the connection string. */
export interface LeaderSummary {
    namespace: string | undefined;
    pluginPath: string | null;
    shards: number;
    isLeader: boolean;
    term: number;
}

export class Leader extends EventEmitter {
    /** Does no I/O: start() finds and loads the plugin. */
    constructor(options: LeaderOptions);
    /** The plugin start() loaded; null before. */
    readonly pluginPath: string | null;
    readonly plugin: Plugin | null;
    readonly namespace: string | undefined;
    readonly shards: number;
    lastError: LeaderPluginError | null;
    inst: Instance | null;
    start(): Promise<this>;
    stop(): Promise<void>;
    isLeader(): boolean;
    term(): number;
    leadership(): Leadership;
    candidateId(): string;
    shardOf(job: string): number;
    leads(job: string): boolean;
    termOf(job: string): number;
    /** A Fence from the plugin's predicate (no odbc-leader command needed);
     * in a group, give job: the fence is its shard's. */
    fence(options?: { namespace?: string; job?: string; placeholder?: '?' | '$' }): Promise<Fence>;
    claim(job: string, fireMs?: number, maxAttempts?: number): Promise<Fire | null>;
    /** Says how this host computes job's fire times (docs/schedules.md);
     * false for a plugin before ABI 1.6. */
    setSchedule(job: string, expr: string | null, tz?: string | null,
                engine?: string): Promise<boolean>;
    /** Of job's fire times, those the library's catch-up policy names
     * (docs/catch-up.md). */
    catchUp(job: string, times: number[], policy: string, graceMs: number,
            options?: { present?: boolean }): Promise<number[]>;
    finish(fire: Fire, status?: number): Promise<void>;
    runFire<T>(job: string, fireMs: number, fn: (fire: Fire) => T | Promise<T>,
        maxAttempts?: number): Promise<RunResult<T>>;
    track<T>(promise: Promise<T>): Promise<T>;
    toJSON(): LeaderSummary;
    on(event: 'elected' | 'lost', listener: (term: number) => void): this;
    on(event: 'change', listener: (e: ChangeEvent) => void): this;
    on(event: 'shard', listener: (e: ShardEvent) => void): this;
    on(event: 'tickError', listener: (e: LeaderPluginError) => void): this;
    on(event: 'offers', listener: (offers: Offer[]) => void): this;
    on(event: string | symbol, listener: (...args: any[]) => void): this;
}

/** Synchronous (it waits for pkg-config); Leader.start() looks without blocking. */
export function findPlugin(file?: string): string;
export function currentFire(): Fire | undefined;

export interface FenceOptions {
    namespace?: string;
    /** '?' (mysql2, sqlite) or '$' (pg). */
    placeholder?: '?' | '$';
    prefix?: string;
    odbcLeader?: string;
}

export class Fence {
    constructor(predicate: string, namespace: string, placeholder?: '?' | '$');
    static fromCommand(dialect: string, options?: FenceOptions): Fence;
    readonly predicate: string;
    readonly namespace: string;
    clause(firstParam?: number): string;
    params(term: number): [string, number];
    statement(sql: string, values: unknown[], term: number): { text: string; values: unknown[] };
    forFire(leader: Leader, fire: Fire): Fence;
}
export function fence(dialect: string, options?: FenceOptions): Fence;

export interface RunnerOptions {
    /** How old a fire may be and still be caught up (ms, default 60000). */
    graceMs?: number;
    /** The catch-up policy (docs/catch-up.md): 'all' (default), 'all:CAP',
     * 'latest' or 'skip'. */
    catchUp?: string;
    log?: (level: number, message: string) => void;
    /** Attempts a fire may take when its host dies before it ends (default
     * 1: at most once); a number for every job or per job name. */
    maxAttempts?: number | Record<string, number>;
}

export class FireRunner {
    constructor(leader: Leader, options?: RunnerOptions);
    readonly graceMs: number;
    readonly catchUpPolicy: string;
    attemptsOf(name: string): number;
    runOffers(offers: Offer[]): void;
    add(name: string, fn: (fireMs: number, fire: Fire) => unknown,
        next: ((ms: number) => number | null) | null): void;
    remove(name: string): void;
    fire(name: string, fireMs: number): Promise<void>;
    fireDue(name: string, what: string): Promise<void> | undefined;
    catchUp(shard?: number, names?: Set<string>): Promise<void>;
    close(): void;
}
