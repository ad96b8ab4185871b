// SPDX-License-Identifier: MIT
// node-cron.d.ts: the TypeScript declarations of odbc-leader/node-cron
// (lib/node-cron.js): node-cron 4.x's RunCoordinator on odbc-leader.
import type { Leader, RunnerOptions } from './index';

/** A node-cron RunCoordinator over a started Leader: each fire claimed once. */
export class LeaderCoordinator {
    constructor(leader: Leader, options?: RunnerOptions & { cron?: unknown });
    readonly leader: Leader;
    shouldRun(key: string, ttlMs: number): Promise<boolean>;
    onComplete(key: string): Promise<void>;
    schedule(expression: string, name: string, fn: (context: any) => unknown,
        options?: Record<string, unknown>): any;
}

/** The job and fire time of a node-cron coordinator key "name:ISO", or null. */
export function parseKey(key: string): { job: string; fireMs: number } | null;

/** The first second strictly after ms that task matches, within a day, or null. */
export function nextMatch(task: { match(date: Date): boolean }, ms: number): number | null;
