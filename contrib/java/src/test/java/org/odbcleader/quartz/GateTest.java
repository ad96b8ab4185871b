// SPDX-License-Identifier: MIT
// GateTest.java: the Quartz gate with real in-process Quartz schedulers
// (RAMJobStore) and Leaders on SQLite files: two schedulers on one file run
// each fire once, in the ledger; a SMART trigger is refused at registration
// (accepted with a warning in WARN mode); a new leader catches up the fires
// due within the grace, at their nominal times, and not older ones.
package org.odbcleader.quartz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TimeZone;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.odbcleader.Fire;
import org.odbcleader.Leader;
import org.odbcleader.LeaderException;
import org.odbcleader.TestEnv;
import org.quartz.CronScheduleBuilder;
import org.quartz.Job;
import org.quartz.JobBuilder;
import org.quartz.JobDetail;
import org.quartz.JobExecutionContext;
import org.quartz.Scheduler;
import org.quartz.SimpleScheduleBuilder;
import org.quartz.Trigger;
import org.quartz.TriggerBuilder;
import org.quartz.impl.StdSchedulerFactory;

@Timeout(90)
class GateTest {
    /** One run of RecordJob: the scheduler that ran it, its Fire and the context's term. */
    record Run(String scheduler, Fire fire, Object contextTerm, long scheduledMs) {
    }

    static final ConcurrentLinkedQueue<Run> RUNS = new ConcurrentLinkedQueue<>();

    /** Records each fire it runs. */
    public static final class RecordJob implements Job {
        /** Quartz makes one per fire. */
        public RecordJob() {
        }

        @Override
        public void execute(JobExecutionContext c) {
            try {
                RUNS.add(new Run(c.getScheduler().getSchedulerName(), LeaderGate.fire(c), c.get(LeaderGate.TERM),
                        c.getScheduledFireTime().getTime()));
            } catch (org.quartz.SchedulerException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static Scheduler scheduler(String name) throws Exception {
        Properties p = new Properties();
        p.setProperty("org.quartz.scheduler.instanceName", name);
        p.setProperty("org.quartz.scheduler.skipUpdateCheck", "true");
        p.setProperty("org.quartz.threadPool.threadCount", "2");
        p.setProperty("org.quartz.jobStore.class", "org.quartz.simpl.RAMJobStore");
        p.setProperty("org.quartz.jobStore.misfireThreshold", "500");
        return new StdSchedulerFactory(p).getScheduler();
    }

    private static Leader leader(String conn, String ns, String id) throws LeaderException {
        return Leader.builder().connect(conn).namespace(ns).ttlMs(2000).plugin(TestEnv.odbcLeaderSo())
                .extra(TestEnv.FAST + ";LeaderId=" + id).log((l, m) -> { }).build();
    }

    private static JobDetail job() {
        return JobBuilder.newJob(RecordJob.class).withIdentity("tick").build();
    }

    private static Trigger everySecond(CronScheduleBuilder policy) {
        return TriggerBuilder.newTrigger().withIdentity("tick").forJob("tick")
                .withSchedule(policy).build();
    }

    private static CronScheduleBuilder cron() {
        return CronScheduleBuilder.cronSchedule("0/1 * * * * ?").inTimeZone(TimeZone.getTimeZone("UTC"));
    }

    /** Leader b of ns on conn runs "tick" once at t0, then resigns: the ledger's fire of it. */
    private static void ranOnceAndLeft(String conn, String ns, long t0) throws Exception {
        try (Leader b = leader(conn, ns, "b")) {
            b.start();
            long until = System.currentTimeMillis() + 10_000;
            while (!b.isLeader() && System.currentTimeMillis() < until)
                Thread.sleep(20);
            b.finish(b.claim("tick", t0), 0);
        }
    }

    /** A trigger of "tick" every second from a minute on: what runs before is a catch-up. */
    private static Trigger startingInAMinute() {
        return TriggerBuilder.newTrigger().withIdentity("tick").forJob("tick")
                .startAt(new java.util.Date(System.currentTimeMillis() + 60_000))
                .withSchedule(cron().withMisfireHandlingInstructionIgnoreMisfires()).build();
    }

    /** Waits (at most 10 s) until prefix's schedulers ran n fires, then half a second more. */
    private static void awaitRuns(String prefix, int n) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 10_000;
        while (runsOf(prefix).size() < n && System.currentTimeMillis() < deadline)
            Thread.sleep(50);
        Thread.sleep(500);
    }

    private static List<Run> runsOf(String prefix) {
        List<Run> out = new ArrayList<>();
        for (Run r : RUNS)
            if (r.scheduler().startsWith(prefix))
                out.add(r);
        return out;
    }

    @Test
    void twoSchedulersRunEachFireOnce() throws Exception {
        String conn = TestEnv.sqlite();
        Leader la = leader(conn, "two", "a");
        Leader lb = leader(conn, "two", "b");
        Scheduler sa = scheduler("two-a");
        Scheduler sb = scheduler("two-b");
        LeaderGate ga = LeaderGate.builder(la, sa).graceMs(2000).build();
        LeaderGate gb = LeaderGate.builder(lb, sb).graceMs(2000).build();
        ga.schedule(job(), everySecond(cron().withMisfireHandlingInstructionIgnoreMisfires()));
        gb.schedule(job(), everySecond(cron().withMisfireHandlingInstructionIgnoreMisfires()));
        la.start();
        lb.start();
        sa.start();
        sb.start();
        Thread.sleep(3500);
        la.close(); // a resigns with Quartz still firing: b takes over
        Thread.sleep(3000);
        sa.shutdown(true);
        sb.shutdown(true);
        ga.close();
        gb.close();
        lb.close();
        List<Run> runs = runsOf("two-");
        assertTrue(runs.size() >= 5, "runs " + runs);
        Set<Long> seen = new HashSet<>();
        Set<String> by = new HashSet<>();
        for (Run r : runs) {
            assertNotNull(r.fire(), "a gated job ran without its fire");
            assertEquals("tick", r.fire().job());
            assertEquals(0, r.fire().fireMs() % 1000, "unaligned " + r);
            assertTrue(seen.add(r.fire().fireMs()), "fire ran twice: " + r);
            assertEquals(r.fire().term(), r.contextTerm());
            by.add(r.scheduler());
        }
        assertEquals(Set.of("two-a", "two-b"), by, "both schedulers led in turn");
        Map<Long, TestEnv.Row> ledger = new HashMap<>();
        for (TestEnv.Row row : TestEnv.ledger(conn, "two"))
            ledger.put(row.fireMs(), row);
        // a's last run may still be running when la closes (Quartz keeps
        // firing): its finish then has no handle, and its row no status
        long lastOfA = runs.stream().filter(r -> r.scheduler().equals("two-a"))
                .mapToLong(r -> r.fire().fireMs()).max().orElse(-1);
        for (Run r : runs) {
            TestEnv.Row row = ledger.get(r.fire().fireMs());
            assertNotNull(row, "no ledger row for " + r);
            assertEquals(r.fire().term(), row.term());
            if (row.status() == null && r.fire().fireMs() == lastOfA)
                continue;
            assertEquals(Integer.valueOf(0), row.status(), row.toString());
        }
    }

    @Test
    void smartPolicyIsRefusedAtRegistration() throws Exception {
        String conn = TestEnv.sqlite();
        try (Leader l = leader(conn, "smart", "a")) {
            Scheduler s = scheduler("smart");
            LeaderGate g = LeaderGate.builder(l, s).build();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> g.schedule(job(), everySecond(cron())));
            assertTrue(e.getMessage().contains("SMART"), e.getMessage());
            assertThrows(IllegalArgumentException.class,
                    () -> g.schedule(job(), everySecond(cron().withMisfireHandlingInstructionFireAndProceed())));
            Trigger simple = TriggerBuilder.newTrigger().withIdentity("s").forJob("tick")
                    .withSchedule(SimpleScheduleBuilder.repeatSecondlyForever()).build();
            assertThrows(IllegalArgumentException.class, () -> g.schedule(job(), simple));
            assertFalse(s.checkExists(simple.getKey()), "a refused trigger was scheduled");
            assertEquals(null, LeaderGate.misfireProblem(everySecond(cron().withMisfireHandlingInstructionDoNothing())));
            g.close();
            LeaderGate w = LeaderGate.builder(l, s).misfireCheck(LeaderGate.MisfireCheck.WARN).build();
            w.schedule(job(), everySecond(cron()));
            assertTrue(s.checkExists(everySecond(cron()).getKey()));
            w.close();
            s.shutdown(false);
        }
    }

    @Test
    void electionCatchesUpFiresWithinTheGraceAtTheirNominalTimes() throws Exception {
        String conn = TestEnv.sqlite();
        // The grace holds five slots; the catch-up's floor is the database clock's, read a
        // moment after the gate's own clock, so one or two of them may fall out of it on a
        // loaded machine: at least three run.
        long grace = 5000;
        // b ran the job once, before the grace, then left: the ledger has a fire of "tick"
        // (a job with no fire catches up nothing), and that fire is outside the window
        long t0 = System.currentTimeMillis() / 1000 * 1000 - 8000;
        ranOnceAndLeft(conn, "catch", t0);
        try (Leader l = leader(conn, "catch", "a")) {
            Scheduler s = scheduler("catch");
            LeaderGate g = LeaderGate.builder(l, s).graceMs(grace).build();
            // A trigger that starts in a minute: what runs now is the catch-up alone.
            Trigger t = startingInAMinute();
            g.schedule(job(), t);
            s.start();
            long before = System.currentTimeMillis();
            l.start(); // elected: b resigned
            long after = System.currentTimeMillis();
            awaitRuns("catch", 3);
            s.shutdown(true);
            g.close();
            List<Run> runs = runsOf("catch");
            assertTrue(runs.size() >= 3, "caught up " + runs);
            Set<Long> seen = new HashSet<>();
            for (Run r : runs) {
                long ms = r.fire().fireMs();
                assertEquals(0, ms % 1000, "unaligned " + r);
                assertTrue(ms >= before - grace - 1 && ms <= after, "outside the grace: " + r);
                assertTrue(r.scheduledMs() >= ms, "the one-off ran before its nominal time " + r);
                assertTrue(seen.add(ms), "ran twice " + r);
            }
            for (TestEnv.Row row : TestEnv.ledger(conn, "catch"))
                assertTrue(row.fireMs() >= before - grace - 1 || row.claimedBy().equals("b"),
                        "an older fire was claimed: " + row);
            // Again: everything within the grace is claimed already, nothing runs twice.
            int n = runs.size();
            assertEquals(0, new HashSet<>(runs).size() - n);
        }
    }

    @Test
    void aTriggerGatedWhileLeadingIsCaughtUp() throws Exception {
        // a is elected within start() (b resigned: nobody leads, as after a restart of every
        // host), and its gate and trigger come after: the fires within the grace still run
        String conn = TestEnv.sqlite();
        long grace = 5000;
        long t0 = System.currentTimeMillis() / 1000 * 1000 - 8000; // before the grace
        ranOnceAndLeft(conn, "late", t0);
        try (Leader l = leader(conn, "late", "a")) {
            l.start();
            assertTrue(l.isLeader(), "not elected within start()");
            long since = System.currentTimeMillis();
            Scheduler s = scheduler("late");
            LeaderGate g = LeaderGate.builder(l, s).graceMs(grace).build();
            Thread.sleep(300); // the jobs come a moment after the gate
            Trigger t = startingInAMinute();
            g.schedule(job(), t);
            long gated = System.currentTimeMillis();
            s.start();
            awaitRuns("late", 3);
            s.shutdown(true);
            g.close();
            List<Run> runs = runsOf("late");
            assertTrue(runs.size() >= 3, "caught up " + runs);
            Set<Long> seen = new HashSet<>();
            for (Run r : runs) {
                long ms = r.fire().fireMs();
                assertEquals(0, ms % 1000, "unaligned " + r);
                assertTrue(ms > since - grace - 1 && ms <= gated, "outside the grace: " + r);
                assertTrue(seen.add(ms), "ran twice " + r);
            }
        }
    }

    @Test
    void firesSkippedInAPauseFollowTheCatchUpPolicy() throws Exception {
        // Quartz on standby for 3.6 s, its misfires skipped (DO_NOTHING): at the next fire
        // the gate catches up the gap as the policy says, all of it ("all") or none ("skip")
        for (String policy : new String[] {"all", "skip"}) {
            String ns = "gap-" + policy;
            try (Leader l = leader(TestEnv.sqlite(), ns, "a")) {
                l.start();
                assertTrue(l.isLeader(), "not elected within start()");
                Scheduler s = scheduler(ns);
                LeaderGate g = LeaderGate.builder(l, s).graceMs(10_000).catchUp(policy).build();
                g.schedule(job(), everySecond(cron().withMisfireHandlingInstructionDoNothing()));
                s.start();
                long deadline = System.currentTimeMillis() + 10_000;
                while (runsOf(ns).isEmpty() && System.currentTimeMillis() < deadline)
                    Thread.sleep(20);
                s.standby();
                long paused = System.currentTimeMillis();
                Thread.sleep(3600);
                s.start();
                long woke = System.currentTimeMillis();
                Thread.sleep(2000);
                s.shutdown(true);
                g.close();
                List<Long> skipped = new ArrayList<>();
                for (Run r : runsOf(ns))
                    if (r.fire().fireMs() > paused && r.fire().fireMs() < woke - 1000)
                        skipped.add(r.fire().fireMs());
                if (policy.equals("all"))
                    assertTrue(skipped.size() >= 2, "all: the gap not caught up: " + runsOf(ns));
                else
                    assertEquals(List.of(), skipped, "skip: the gap ran: " + runsOf(ns));
            }
        }
    }
}
