// SPDX-License-Identifier: MIT
// cron.d.ts: the TypeScript declarations of odbc-leader/cron
// (lib/cron.js): cron, the engine of NestJS's scheduler.
import type { Fire, Leader, RunnerOptions } from './index';

/** cron over a started Leader: each fire claimed once. */
export class LeaderCronJob {
    constructor(leader: Leader, options?: RunnerOptions & { CronJob?: unknown });
    readonly leader: Leader;
    from(params: { name: string; cronTime: string | Date; onTick: (fire: Fire) => unknown }
        & Record<string, unknown>): any;
    /** A CronJob's next fire after an epoch ms, in its timeZone or utcOffset. */
    static nextOf(job: any): (ms: number) => number;
}
