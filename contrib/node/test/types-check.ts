// SPDX-License-Identifier: MIT
// test/types-check.ts: index.d.ts against a program that uses the package
// as docs/node.md shows; node.test type-checks it with tsc --strict
// (never run).
import { Leader, LeaderPluginError, currentFire, fence, Fire } from 'odbc-leader';
import { LeaderCoordinator } from 'odbc-leader/node-cron';
import { LeaderSchedule } from 'odbc-leader/node-schedule';
import { LeaderCron } from 'odbc-leader/croner';
import { LeaderCronJob } from 'odbc-leader/cron';

async function main(): Promise<void> {
    const leader = new Leader({ connect: 'DSN=sched', namespace: 'jobs', ttlMs: 15000 });
    await leader.start();
    leader.on('elected', (term: number) => console.log(term));
    leader.on('change', (e) => console.log(e.isLeader, e.term, e.leaderId));
    leader.on('shard', (e) => console.log(e.shard, e.isLeader, e.term));
    leader.on('tickError', (e: LeaderPluginError) => console.log(e.errorClass, e.sqlstate));
    const fire: Fire | null = await leader.claim('report', Date.now());
    if (fire !== null)
        await leader.finish(fire, 0);
    const r = await leader.runFire('report', 0, (f: Fire) => f.term * 2);
    const doubled: number | undefined = r.result;
    const { term, validForMs } = leader.leadership();
    new LeaderCoordinator(leader, { graceMs: 60000 }).schedule('* * * * * *', 'a', () => 1);
    new LeaderSchedule(leader).scheduleJob('b', '* * * * * *', (d: Date) => d.getTime());
    new LeaderCron(leader).schedule('* * * * * *', { name: 'c' }, () => currentFire()?.term);
    new LeaderCronJob(leader).from({ name: 'd', cronTime: '* * * * * *', onTick: (f: Fire) => f.job });
    const f = fence('postgresql', { namespace: 'jobs', placeholder: '$' });
    const s = f.statement('UPDATE t SET x = $1 WHERE y = $2', [1, 2], term);
    const g = (await leader.fence({ job: 'report', placeholder: '$' })).statement('DELETE FROM t WHERE y = $1', [2], term);
    const predicate: string = await leader.inst!.fenceSql();
    console.log(doubled, validForMs, s.text, s.values, g.values, predicate);
    await leader.stop();
}

main().catch((e: unknown) => console.error(e));
