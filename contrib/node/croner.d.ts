// SPDX-License-Identifier: MIT
// croner.d.ts: the TypeScript declarations of odbc-leader/croner
// (lib/croner.js).
import type { Fire, Leader, RunnerOptions } from './index';

/** croner over a started Leader: each fire claimed once. */
export class LeaderCron {
    constructor(leader: Leader, options?: RunnerOptions & { Cron?: unknown });
    readonly leader: Leader;
    schedule(pattern: string, options: { name: string } & Record<string, unknown>,
        fn: (job: any, fire: Fire) => unknown): any;
}
