// SPDX-License-Identifier: MIT
// QuartzExample.java: the Quartz example (contrib/java/examples/quartz runs
// it). Every host runs the same Quartz schedule (RAMJobStore), one job named
// "every" (--job) whose cron trigger (UTC) fires at each multiple of --every
// seconds since the epoch, or by the Quartz cron expression --cron in zone
// --tz (default: the JVM's, as TZ says); the LeaderGate runs each fire on
// the one host that claimed it and the job prints one flushed line per fire
// it runs: "FIRE <job> <fire_ms> <term> <attempt>" (nothing else goes to stdout), then
// takes --hold seconds. With --recover N the job requests recovery
// (JobBuilder.requestRecovery()): a fire whose host died before its end runs
// again on the next leader, up to N attempts in all. SIGTERM stops
// Quartz, waiting for a fire under way, and closes the Leader (it resigns, so
// another host takes over at once); exit 0. Bad arguments exit 64, a start
// that fails exits 1.
//
//   quartz --plugin SO --connect STR --namespace NS
//       (--every SECONDS | --cron EXPR [--tz NAME]) [--ttl MS] [--job NAME]
//       [--recover N] [--hold SECONDS]
package org.odbcleader.examples;

import java.io.PrintStream;
import java.util.Properties;
import java.util.TimeZone;
import java.util.concurrent.CountDownLatch;
import org.odbcleader.Fire;
import org.odbcleader.Leader;
import org.odbcleader.LeaderException;
import org.odbcleader.LeaderListener;
import org.odbcleader.quartz.LeaderGate;
import org.quartz.CronExpression;
import org.quartz.CronScheduleBuilder;
import org.quartz.Job;
import org.quartz.JobBuilder;
import org.quartz.JobDetail;
import org.quartz.JobExecutionContext;
import org.quartz.Scheduler;
import org.quartz.SchedulerException;
import org.quartz.Trigger;
import org.quartz.TriggerBuilder;
import org.quartz.impl.StdSchedulerFactory;

/** The example scheduler; subclasses (the test suite's broken variants) override its hooks. */
public class QuartzExample {
    /** The library's default LeaderTTL, for the grace when --ttl is not given. */
    static final long DEFAULT_TTL_MS = 15_000;
    /** The scheduler-context key of the Leader (for an ungated job). */
    static final String LEADER_KEY = "odbcleader.leader";
    private static final Object OUT = new Object();

    /** The parsed command line. */
    record Args(String plugin, String connect, String namespace, int every, String cron, String tz,
            String job, Long ttlMs, int recover, long holdMs) {
    }

    /** An argument problem: exit 64. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String msg) {
            super(msg);
        }
    }

    /** Returns the parsed command line. */
    static Args parse(String[] argv) throws UsageException {
        String plugin = null;
        String connect = null;
        String namespace = null;
        String every = null;
        String cron = null;
        String tz = null;
        String job = "every";
        String ttl = null;
        String recover = "1";
        String hold = "0";
        for (int i = 0; i < argv.length; i++) {
            String k = argv[i];
            if (!k.startsWith("--"))
                throw new UsageException("unexpected argument " + k);
            if (i + 1 >= argv.length)
                throw new UsageException(k + " needs a value");
            String v = argv[++i];
            switch (k) {
            case "--plugin":
                plugin = v;
                break;
            case "--connect":
                connect = v;
                break;
            case "--namespace":
                namespace = v;
                break;
            case "--every":
                every = v;
                break;
            case "--cron":
                cron = v;
                break;
            case "--tz":
                tz = v;
                break;
            case "--job":
                job = v;
                break;
            case "--ttl":
                ttl = v;
                break;
            case "--recover":
                recover = v;
                break;
            case "--hold":
                hold = v;
                break;
            default:
                throw new UsageException("unknown option " + k);
            }
        }
        if (connect == null)
            throw new UsageException("--connect is required");
        if (namespace == null)
            throw new UsageException("--namespace is required");
        if ((every == null) == (cron == null))
            throw new UsageException("give one of --every and --cron");
        if (tz != null && cron == null)
            throw new UsageException("--tz goes with --cron");
        if (cron != null && !CronExpression.isValidExpression(cron))
            throw new UsageException("--cron " + cron + ": not a Quartz cron expression");
        int e = 0;
        try {
            e = every == null ? 0 : Integer.parseInt(every);
        } catch (NumberFormatException x) {
            e = -1;
        }
        if (every != null && (e <= 0 || (60 % e != 0 && (e % 60 != 0 || 3600 % e != 0))))
            throw new UsageException("--every " + every
                    + ": give whole seconds that divide a minute, or whole minutes that divide an hour");
        Long ttlMs = null;
        if (ttl != null) {
            try {
                ttlMs = Long.parseLong(ttl);
            } catch (NumberFormatException x) {
                ttlMs = -1L;
            }
            if (ttlMs <= 0)
                throw new UsageException("--ttl " + ttl + ": give milliseconds");
        }
        int attempts;
        try {
            attempts = Integer.parseInt(recover);
        } catch (NumberFormatException x) {
            attempts = 0;
        }
        if (attempts < 1)
            throw new UsageException("--recover " + recover + ": give a whole number, at least 1");
        double holdS;
        try {
            holdS = Double.parseDouble(hold);
        } catch (NumberFormatException x) {
            holdS = -1;
        }
        if (!(holdS >= 0))
            throw new UsageException("--hold " + hold + ": give seconds");
        return new Args(plugin, connect, namespace, e, cron, tz, job, ttlMs, attempts,
                Math.round(holdS * 1000));
    }

    /** Returns the Quartz cron expression firing at every multiple of every seconds since the epoch (UTC). */
    static String cronOf(int every) {
        return every < 60 ? "0/" + every + " * * * * ?" : "0 0/" + every / 60 + " * * * ?";
    }

    /** --hold, in ms: how long each run lasts after its FIRE line. */
    static volatile long holdMs;

    /** Prints a FIRE line on stdout, flushed at once. */
    static void printFire(String job, long fireMs, long term, int attempt) {
        synchronized (OUT) {
            PrintStream out = System.out;
            out.print("FIRE " + job + " " + fireMs + " " + term + " " + attempt + "\n");
            out.flush();
        }
    }

    /** The job: prints the FIRE line of the fire it runs. */
    public static final class EveryJob implements Job {
        /** Quartz makes one per fire. */
        public EveryJob() {
        }

        @Override
        public void execute(JobExecutionContext context) {
            Fire fire = LeaderGate.fire(context);
            if (fire != null) {
                printFire(fire.job(), fire.fireMs(), fire.term(), fire.attempt());
                try {
                    if (holdMs > 0)
                        Thread.sleep(holdMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return;
            }
            // Not gated (a broken variant of the test suite): the time Quartz names.
            long term = 0;
            try {
                Object l = context.getScheduler().getContext().get(LEADER_KEY);
                if (l instanceof Leader)
                    term = ((Leader) l).term();
            } catch (SchedulerException e) {
                term = 0;
            }
            printFire(context.getTrigger().getKey().getName(), context.getScheduledFireTime().getTime(), term, 1);
        }
    }

    // ---- hooks -------------------------------------------------------------

    /** Returns true when the fires go through the LeaderGate (the example: always). */
    protected boolean gated() {
        return true;
    }

    /** Returns the trigger's schedule with the misfire policy the gate keeps: IGNORE_MISFIRE_POLICY. */
    protected CronScheduleBuilder misfirePolicy(CronScheduleBuilder schedule) {
        return schedule.withMisfireHandlingInstructionIgnoreMisfires();
    }

    /** Returns what the gate does about a misfire policy it cannot keep (the example: REFUSE). */
    protected LeaderGate.MisfireCheck misfireCheck() {
        return LeaderGate.MisfireCheck.REFUSE;
    }

    /**
     * Returns org.quartz.jobStore.misfireThreshold in ms (the example: 50; Quartz's default is
     * 60 s). Low, so that a wrong misfire policy shows at once: Quartz checks a trigger for a
     * misfire when it acquires it, about when the previous fire runs, so after a 1.2-s pause
     * the next slot is only about 0.1 s late. With the gate's IGNORE_MISFIRE_POLICY Quartz
     * never applies a misfire (a late fire runs under its own scheduled time, the claim
     * dedups), so the threshold changes nothing.
     */
    protected long misfireThresholdMs() {
        return 50;
    }

    // ---- the program ---------------------------------------------------------

    // What the SIGTERM hook stops; set under lock by run() while it starts.
    private final Object lock = new Object();
    private Leader leader;
    private Scheduler scheduler;
    private LeaderGate gate;
    private boolean exiting; // run() returns a failed start's status: the hook leaves the exit to it

    /**
     * The SIGTERM (shutdown) hook: waits for a start under way, stops the scheduler (waiting for
     * the fire under way), closes the gate and the Leader (it resigns) and halts with status 0.
     * Registered before the start, so that a SIGTERM during the start hands over too.
     */
    private void stopOnSignal() {
        synchronized (lock) {
            if (exiting)
                return;
            if (scheduler != null) {
                try {
                    scheduler.shutdown(true); // waits for the fire under way
                } catch (SchedulerException e) {
                    System.err.println("quartz: stopping the scheduler: " + e.getMessage());
                }
            }
            if (gate != null)
                gate.close();
            if (leader != null)
                leader.close(); // resigns
        }
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(0); // SIGTERM handled: exit 0, not 143
    }

    /** Runs the example; returns the exit status of a failed start (the JVM runs on otherwise). */
    public int run(String[] argv) throws InterruptedException {
        Args a;
        try {
            a = parse(argv);
        } catch (UsageException e) {
            System.err.println("quartz: " + e.getMessage());
            System.err.println("usage: quartz --plugin SO --connect STR --namespace NS (--every SECONDS"
                    + " | --cron EXPR [--tz NAME]) [--ttl MS] [--job NAME] [--recover N] [--hold SECONDS]");
            return 64;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(this::stopOnSignal, "odbc-leader-stop"));
        holdMs = a.holdMs();
        // the catch-up grace: a takeover takes about a TTL; five allow a host starved of CPU
        long grace = 5 * (a.ttlMs() != null ? a.ttlMs() : DEFAULT_TTL_MS) + a.every() * 1000L + 1000;
        synchronized (lock) {
            try {
                Leader.Builder lb = Leader.builder().connect(a.connect()).namespace(a.namespace())
                        .plugin(a.plugin());
                if (a.ttlMs() != null)
                    lb.ttlMs(a.ttlMs());
                leader = lb.build();
                leader.addListener(new LeaderListener() {
                    @Override
                    public void changed(boolean isLeader, long term, String leaderId) {
                        System.err.println(isLeader ? "leader term " + term : "follower");
                    }

                    @Override
                    public void tickFailed(LeaderException e) {
                        System.err.println("tick: " + e);
                    }
                });
                Properties p = new Properties();
                p.setProperty("org.quartz.scheduler.instanceName", "odbc-leader-example");
                p.setProperty("org.quartz.scheduler.skipUpdateCheck", "true");
                p.setProperty("org.quartz.threadPool.class", "org.quartz.simpl.SimpleThreadPool");
                p.setProperty("org.quartz.threadPool.threadCount", "3");
                p.setProperty("org.quartz.jobStore.class", "org.quartz.simpl.RAMJobStore");
                p.setProperty("org.quartz.jobStore.misfireThreshold", Long.toString(misfireThresholdMs()));
                scheduler = new StdSchedulerFactory(p).getScheduler();
                scheduler.getContext().put(LEADER_KEY, leader);
                JobDetail job = JobBuilder.newJob(EveryJob.class).withIdentity(a.job())
                        .requestRecovery(a.recover() > 1).build();
                // --every in UTC; --cron in --tz, else the JVM's zone (TZ)
                TimeZone zone = a.cron() == null ? TimeZone.getTimeZone("UTC")
                        : a.tz() == null ? TimeZone.getDefault() : TimeZone.getTimeZone(a.tz());
                Trigger trigger = TriggerBuilder.newTrigger().withIdentity(a.job()).forJob(job)
                        .withSchedule(misfirePolicy(CronScheduleBuilder
                                .cronSchedule(a.cron() != null ? a.cron() : cronOf(a.every()))
                                .inTimeZone(zone)))
                        .build();
                if (gated()) {
                    gate = LeaderGate.builder(leader, scheduler).graceMs(grace).misfireCheck(misfireCheck())
                            .recoveryAttempts(a.recover()).build();
                    gate.schedule(job, trigger);
                } else {
                    scheduler.scheduleJob(job, trigger);
                }
                leader.start();
                scheduler.start();
            } catch (LeaderException | SchedulerException | RuntimeException e) {
                System.err.println("quartz: " + e.getMessage());
                if (scheduler != null) {
                    try {
                        scheduler.shutdown(false);
                    } catch (SchedulerException e2) {
                        // exiting
                    }
                }
                if (leader != null)
                    leader.close();
                exiting = true;
                return 1;
            }
        }
        new CountDownLatch(1).await(); // until SIGTERM
        return 0;
    }

    /** The entry point. */
    public static void main(String[] argv) throws InterruptedException {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null)
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        System.exit(new QuartzExample().run(argv));
    }
}
