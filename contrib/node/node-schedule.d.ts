// SPDX-License-Identifier: MIT
// node-schedule.d.ts: the TypeScript declarations of
// odbc-leader/node-schedule (lib/node-schedule.js).
import type { Leader, RunnerOptions } from './index';

/** node-schedule over a started Leader: each fire claimed once. */
export class LeaderSchedule {
    constructor(leader: Leader, options?: RunnerOptions & { schedule?: unknown; tz?: string });
    readonly leader: Leader;
    scheduleJob(name: string, spec: unknown, fn: (fireDate: Date) => unknown): any;
    cancelJob(name: string): boolean;
}
