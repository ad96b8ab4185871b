// SPDX-License-Identifier: MIT
// LeaderGate.java: the Quartz integration. A TriggerListener and JobListener
// pair that runs each fire (trigger, scheduled fire time) of the triggers it
// gates on the one host whose Leader claimed it in the fire ledger: every
// host runs the same Quartz schedule, vetoJobExecution claims the fire and
// vetoes it when the claim is not this host's, jobWasExecuted records the
// outcome. When this host is elected (or gains a shard of a group) it
// catches up the fires that fell due while no one led, within a grace,
// listed from each trigger's own schedule, never from the clock: each runs as
// a one-off trigger that carries its nominal time. The misfire policy of a
// gated trigger is checked when it is registered (docs/java.md).
package org.odbcleader.quartz;

import java.text.ParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.odbcleader.Fire;
import org.odbcleader.Instance;
import org.odbcleader.Leader;
import org.odbcleader.LeaderException;
import org.odbcleader.LeaderListener;
import org.quartz.CronExpression;
import org.quartz.CronTrigger;
import org.quartz.JobDataMap;
import org.quartz.JobDetail;
import org.quartz.JobExecutionContext;
import org.quartz.JobExecutionException;
import org.quartz.JobListener;
import org.quartz.ObjectAlreadyExistsException;
import org.quartz.Scheduler;
import org.quartz.SchedulerException;
import org.quartz.SimpleScheduleBuilder;
import org.quartz.SimpleTrigger;
import org.quartz.Trigger;
import org.quartz.TriggerBuilder;
import org.quartz.TriggerKey;
import org.quartz.TriggerListener;
import org.quartz.impl.matchers.EverythingMatcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs each fire of the gated triggers of a Quartz {@link Scheduler} on one host: see
 * {@link #builder(Leader, Scheduler)}. A job reads its fire with {@link #fire(JobExecutionContext)}
 * (or {@code context.get("odbcleader.term")}, {@code context.get("odbcleader.fireMs")}).
 */
public final class LeaderGate implements TriggerListener, JobListener, AutoCloseable {
    /** Context key of the {@link Fire} a job runs. */
    public static final String FIRE = "odbcleader.fire";
    /** Context key of the fire's term (a Long: the fencing token). */
    public static final String TERM = "odbcleader.term";
    /** Context key of the fire's nominal time (a Long, epoch ms). */
    public static final String FIRE_MS = "odbcleader.fireMs";
    /** The trigger group of the gate's one-off catch-up triggers. */
    public static final String CATCH_UP_GROUP = "odbcleader-catchup";
    /** JobDataMap key of a catch-up trigger: the nominal time it runs. */
    public static final String NOMINAL = "odbcleader.nominal";
    /** JobDataMap key of a catch-up trigger: the ledger name of the trigger it stands for. */
    public static final String FOR_TRIGGER = "odbcleader.trigger";
    /** JobDataMap key of a one-off trigger of an offered fire: the attempts it may take. */
    public static final String ATTEMPTS = "odbcleader.attempts";
    /** The default catch-up grace: how old a fire may be and still be caught up. */
    public static final long DEFAULT_GRACE_MS = 60_000;
    private static final int MAX_CATCH_UP = 10_000; // fires per trigger and catch-up, at most
    private static final Logger LOG = LoggerFactory.getLogger(LeaderGate.class);

    /** What registering a trigger whose misfire policy the gate cannot keep does. */
    public enum MisfireCheck {
        /** Throw IllegalArgumentException (the default). */
        REFUSE,
        /**
         * Log a warning and gate the trigger anyway: a production escape hatch for a schedule
         * that cannot be changed at once; a misfire may then run at a time the schedule does
         * not name, or be skipped.
         */
        WARN
    }

    private final Leader leader;
    private final Scheduler scheduler;
    private final String name;
    private final long graceMs;
    private final String catchUpPolicy;
    private final int recoveryAttempts;
    private final MisfireCheck misfireCheck;
    // Gated trigger -> the latest nominal time it fired here (Long.MIN_VALUE: none yet).
    private final Map<TriggerKey, AtomicLong> gated = new ConcurrentHashMap<>();
    /** Ledger name -> {expr, tz} of a gated trigger's schedule identity (docs/schedules.md). */
    private final Map<String, String[]> identities = new ConcurrentHashMap<>();
    /** Ledger names whose identity the leader was told. */
    private final Map<String, Boolean> declared = new ConcurrentHashMap<>();
    private final ExecutorService catchUps;
    private final LeaderListener listener;
    private volatile boolean closed;

    /** Returns a Builder of the gate of scheduler by leader. */
    public static Builder builder(Leader leader, Scheduler scheduler) {
        return new Builder(leader, scheduler);
    }

    /** The options of a LeaderGate. */
    public static final class Builder {
        private final Leader leader;
        private final Scheduler scheduler;
        private long graceMs = DEFAULT_GRACE_MS;
        private String catchUp = "all";
        private int recoveryAttempts = 2;
        private MisfireCheck misfireCheck = MisfireCheck.REFUSE;
        private String name = "odbc-leader-gate";

        private Builder(Leader leader, Scheduler scheduler) {
            this.leader = Objects.requireNonNull(leader, "leader");
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
        }

        /** How old a fire may be and still be caught up (default 60 s); more than the takeover time. */
        public Builder graceMs(long graceMs) {
            if (graceMs < 0)
                throw new IllegalArgumentException("graceMs must not be negative, got " + graceMs);
            this.graceMs = graceMs;
            return this;
        }

        /**
         * The catch-up policy of a new leader (docs/catch-up.md): "all" (default), "all:CAP",
         * "latest" or "skip"; decided by the library from the ledger's latest fire of each job.
         */
        public Builder catchUp(String policy) {
            this.catchUp = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * How many times a fire of a job that requests recovery ({@code
         * JobBuilder.requestRecovery()}, as with Quartz's JDBC store) may run when the host
         * running it dies before it ends (default 2: one recovery, on the next leader, once the
         * dead host's term can no longer act; never two attempts at once). After the last one
         * the fire is recorded abandoned. Other jobs' fires run at most once.
         */
        public Builder recoveryAttempts(int attempts) {
            if (attempts < 1)
                throw new IllegalArgumentException("recoveryAttempts must be at least 1, got " + attempts);
            this.recoveryAttempts = attempts;
            return this;
        }

        /** REFUSE (default) or WARN about a trigger whose misfire policy the gate cannot keep. */
        public Builder misfireCheck(MisfireCheck check) {
            this.misfireCheck = Objects.requireNonNull(check, "misfireCheck");
            return this;
        }

        /** The listeners' name in the scheduler (default "odbc-leader-gate"). */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /**
         * Returns the gate, its listeners added to the scheduler. When the leader leads
         * already, it catches up at once.
         */
        public LeaderGate build() throws SchedulerException {
            return new LeaderGate(this);
        }
    }

    private LeaderGate(Builder b) throws SchedulerException {
        leader = b.leader;
        scheduler = b.scheduler;
        name = b.name;
        graceMs = b.graceMs;
        catchUpPolicy = b.catchUp;
        recoveryAttempts = b.recoveryAttempts;
        misfireCheck = b.misfireCheck;
        catchUps = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "odbc-leader-catch-up");
            t.setDaemon(true);
            return t;
        });
        listener = new LeaderListener() {
            @Override
            public void elected(long term) {
                catchUpLater(-1);
            }

            @Override
            public void shardChanged(int shard, boolean isLeader, long term) {
                if (isLeader)
                    catchUpLater(shard);
            }

            @Override
            public void offered(List<Instance.Offer> offers) {
                try {
                    catchUps.execute(() -> scheduleOffers(offers));
                } catch (RejectedExecutionException e) {
                    // closed
                }
            }
        };
        scheduler.getListenerManager().addTriggerListener(this, EverythingMatcher.allTriggers());
        scheduler.getListenerManager().addJobListener(this, EverythingMatcher.allJobs());
        leader.addListener(listener);
        if (leader.isLeader())
            catchUpLater(-1);
    }

    // ---- registration --------------------------------------------------------

    /**
     * Returns null when the gate keeps trigger's misfire policy, else why not. Kept:
     * MISFIRE_INSTRUCTION_IGNORE_MISFIRE_POLICY (each missed fire runs with its own scheduled
     * time, the claim dedups); DO_NOTHING of a cron, calendar-interval or daily-time-interval
     * trigger and RESCHEDULE_NEXT_WITH_REMAINING_COUNT of a simple trigger (the missed fires
     * are skipped and the gate catches them up at the next fire, within the grace). Refused:
     * SMART_POLICY, FIRE_ONCE_NOW, FIRE_NOW and the other RESCHEDULE_* (a fire time the
     * schedule does not name).
     */
    public static String misfireProblem(Trigger trigger) {
        int m = trigger.getMisfireInstruction();
        if (m == Trigger.MISFIRE_INSTRUCTION_IGNORE_MISFIRE_POLICY)
            return null;
        if (trigger instanceof SimpleTrigger) {
            if (m == SimpleTrigger.MISFIRE_INSTRUCTION_RESCHEDULE_NEXT_WITH_REMAINING_COUNT)
                return null;
        } else if (m == CronTrigger.MISFIRE_INSTRUCTION_DO_NOTHING) { // 2 for every other kind
            return null;
        }
        String what = m == Trigger.MISFIRE_INSTRUCTION_SMART_POLICY ? "the SMART policy (Quartz's default)"
                : "misfire instruction " + m;
        return "trigger " + trigger.getKey() + " has " + what + ", which runs a missed fire at a time its"
                + " schedule does not name (now): the fire ledger cannot recognise it; use"
                + " withMisfireHandlingInstructionIgnoreMisfires() (or DoNothing; docs/java.md)";
    }

    private void checkMisfire(Trigger trigger) {
        String problem = misfireProblem(trigger);
        if (problem == null)
            return;
        if (misfireCheck == MisfireCheck.REFUSE)
            throw new IllegalArgumentException("odbc-leader gate: " + problem);
        LOG.warn("odbc-leader gate (misfire check WARN): {}", problem);
    }

    /**
     * Schedules job with trigger (scheduler.scheduleJob) and gates the trigger.
     *
     * @throws IllegalArgumentException when the trigger's misfire policy is refused (REFUSE)
     */
    public Date schedule(JobDetail job, Trigger trigger) throws SchedulerException {
        checkMisfire(trigger);
        Date first = scheduler.scheduleJob(job, trigger);
        remember(trigger);
        gateKey(trigger.getKey());
        return first;
    }

    /**
     * Gates key; when this host leads its job already (elected within Leader.start(), before
     * the trigger was gated), catches it up: the election's catch-up did not see it.
     */
    private void gateKey(TriggerKey key) {
        if (gated.putIfAbsent(key, new AtomicLong(Long.MIN_VALUE)) == null && leader.leads(ledgerName(key)))
            catchUpLater(-1, key);
    }

    /**
     * Gates a trigger already scheduled.
     *
     * @throws IllegalArgumentException when it does not exist or its misfire policy is refused
     */
    public void gate(TriggerKey key) throws SchedulerException {
        Trigger t = scheduler.getTrigger(key);
        if (t == null)
            throw new IllegalArgumentException("odbc-leader gate: no trigger " + key);
        checkMisfire(t);
        remember(t);
        gateKey(key);
    }

    /**
     * The engine part of a schedule identity: Quartz's version and its DST rule, as measured
     * (docs/schedules.md): a time in the spring gap is skipped, one in the autumn's repeated
     * hour fires once, at its second occurrence.
     */
    private String engine() {
        String v;
        try {
            v = scheduler.getMetaData().getVersion();
        } catch (SchedulerException e) {
            v = "?";
        }
        return "quartz " + v + " (DST gap: skipped; overlap: the second)";
    }

    /**
     * Keeps the schedule identity of trigger t, {expr, tz}: a cron trigger's expression in its
     * time zone, a simple trigger's interval from its start (no zone); another kind of trigger
     * has none (its claims are not checked: logged).
     */
    private void remember(Trigger t) {
        String[] id = null;
        if (t instanceof CronTrigger) {
            CronTrigger c = (CronTrigger) t;
            id = new String[] {"cron " + c.getCronExpression(), c.getTimeZone().getID()};
        } else if (t instanceof SimpleTrigger) {
            SimpleTrigger st = (SimpleTrigger) t;
            id = new String[] {"every " + st.getRepeatInterval() + " ms from "
                    + st.getStartTime().getTime() + " ms, " + st.getRepeatCount() + " repeats", ""};
        }
        if (id == null) {
            LOG.warn("odbc-leader gate: trigger {} ({}) has no schedule identity: hosts in other"
                    + " time zones are not refused (docs/schedules.md)", t.getKey(),
                    t.getClass().getSimpleName());
            return;
        }
        identities.put(ledgerName(t.getKey()), id);
    }

    /** Tells the leader job's schedule identity once, before its first claim. */
    private void declare(String job) throws LeaderException {
        String[] id = identities.get(job);
        if (id == null || declared.containsKey(job))
            return;
        if (leader.setSchedule(job, id[0], id[1], engine()))
            declared.put(job, Boolean.TRUE);
    }

    /**
     * Returns the name of trigger key's fires in the fire ledger: the trigger's name in the
     * DEFAULT group, else "group.name". Each trigger is a schedule of its own, so two triggers
     * of one job never share a fire.
     */
    public static String ledgerName(TriggerKey key) {
        return Scheduler.DEFAULT_GROUP.equals(key.getGroup()) ? key.getName()
                : key.getGroup() + "." + key.getName();
    }

    /** Returns the fire a job runs (its ledger name, nominal time and term), null when not gated. */
    public static Fire fire(JobExecutionContext context) {
        Object f = context.get(FIRE);
        return f instanceof Fire ? (Fire) f : null;
    }

    // ---- the listeners -------------------------------------------------------

    @Override
    public String getName() {
        return name;
    }

    @Override
    public void triggerFired(Trigger trigger, JobExecutionContext context) {
    }

    /**
     * Returns true (veto) unless this host claimed the fire; a trigger the gate does not gate
     * is let through. The fire is put in the context (see {@link #fire}).
     */
    @Override
    public boolean vetoJobExecution(Trigger trigger, JobExecutionContext context) {
        TriggerKey key = trigger.getKey();
        String job;
        long fireMs;
        int attempts = context.getJobDetail().requestsRecovery() ? recoveryAttempts : 1;
        if (CATCH_UP_GROUP.equals(key.getGroup())) {
            JobDataMap m = trigger.getJobDataMap();
            if (!m.containsKey(NOMINAL) || !m.containsKey(FOR_TRIGGER))
                return false;
            job = m.getString(FOR_TRIGGER);
            fireMs = m.getLong(NOMINAL);
            if (m.containsKey(ATTEMPTS))
                attempts = Math.max(attempts, m.getInt(ATTEMPTS));
        } else {
            AtomicLong last = gated.get(key);
            if (last == null)
                return false;
            job = ledgerName(key);
            fireMs = context.getScheduledFireTime().getTime();
            long prev = last.getAndAccumulate(fireMs, Math::max);
            if (prev != Long.MIN_VALUE && prev < fireMs)
                catchUpGap(trigger, job, prev, fireMs);
        }
        if (closed)
            return true;
        try {
            declare(job);
            Fire f = leader.claim(job, fireMs, attempts);
            if (f == null)
                return true;
            context.put(FIRE, f);
            context.put(TERM, f.term());
            context.put(FIRE_MS, f.fireMs());
            return false;
        } catch (LeaderException e) {
            LOG.warn("odbc-leader gate: claiming {} at {} failed, not run: {}", job, fireMs, e.toString());
            return true;
        }
    }

    @Override
    public void triggerMisfired(Trigger trigger) {
    }

    @Override
    public void triggerComplete(Trigger trigger, JobExecutionContext context,
                                Trigger.CompletedExecutionInstruction instruction) {
    }

    @Override
    public void jobToBeExecuted(JobExecutionContext context) {
    }

    /** Another listener vetoed a fire this host claimed: records it as failed (status 1). */
    @Override
    public void jobExecutionVetoed(JobExecutionContext context) {
        Fire f = fire(context);
        if (f != null) {
            LOG.warn("odbc-leader gate: {} at {} was claimed but vetoed by another listener", f.job(), f.fireMs());
            finish(f, 1);
        }
    }

    /** Records the outcome of a fire this host ran: status 0, or 1 when the job threw. */
    @Override
    public void jobWasExecuted(JobExecutionContext context, JobExecutionException jobException) {
        Fire f = fire(context);
        if (f != null)
            finish(f, jobException == null ? 0 : 1);
    }

    private void finish(Fire f, int status) {
        try {
            leader.finish(f, status);
        } catch (LeaderException e) {
            LOG.warn("odbc-leader gate: recording the outcome of {} at {} failed: {}", f.job(), f.fireMs(),
                    e.toString());
        }
    }

    // ---- catching up -----------------------------------------------------------

    /**
     * Returns the fire times of trigger's schedule in (fromMs, toMs], oldest first. A cron
     * trigger's come from its expression and time zone (up to its end time), so that fires due
     * before the trigger was scheduled in this process count too; other triggers' from
     * getFireTimeAfter.
     */
    static List<Long> slotsIn(Trigger trigger, long fromMs, long toMs) {
        List<Long> out = new ArrayList<>();
        CronExpression cron = null;
        if (trigger instanceof CronTrigger) {
            CronTrigger ct = (CronTrigger) trigger;
            try {
                cron = new CronExpression(ct.getCronExpression());
                cron.setTimeZone(ct.getTimeZone());
            } catch (ParseException e) {
                cron = null;
            }
        }
        Date end = trigger.getEndTime();
        long t = fromMs;
        while (out.size() < MAX_CATCH_UP) {
            Date next = cron != null ? cron.getNextValidTimeAfter(new Date(t)) : trigger.getFireTimeAfter(new Date(t));
            if (next == null || (end != null && next.after(end)) || next.getTime() <= t || next.getTime() > toMs)
                break;
            t = next.getTime();
            out.add(t);
        }
        return out;
    }

    /** Catches up (on the catch-up thread) the fires of every gated trigger (shard's, when &gt;= 0). */
    private void catchUpLater(int shard) {
        catchUpLater(shard, null);
    }

    /** Catches up (on the catch-up thread) the fires of the gated trigger only, when not null. */
    private void catchUpLater(int shard, TriggerKey only) {
        try {
            catchUps.execute(() -> catchUp(shard, only));
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /**
     * Schedules a one-off trigger for every fire within the grace that the catch-up policy
     * names (docs/catch-up.md), of every gated trigger this host leads (of shard's, when shard &gt;= 0), oldest first; each is
     * claimed when it fires. Called when this host gains leadership or a shard. Returns the
     * number scheduled.
     */
    public int catchUp(int shard) {
        return catchUp(shard, null);
    }

    /** catchUp(shard), of the gated trigger only when not null. */
    private int catchUp(int shard, TriggerKey only) {
        long now = System.currentTimeMillis();
        List<Object[]> due = new ArrayList<>();
        for (TriggerKey key : gated.keySet()) {
            if (only != null && !only.equals(key))
                continue;
            String job = ledgerName(key);
            if (shard >= 0 && leader.shardOf(job) != shard)
                continue;
            Trigger t;
            try {
                t = scheduler.getTrigger(key);
            } catch (SchedulerException e) {
                LOG.warn("odbc-leader gate: catching up {}: {}", key, e.toString());
                continue;
            }
            if (t == null)
                continue;
            for (long slot : policySlots(job, slotsIn(t, now - graceMs - 1, now), false))
                due.add(new Object[] {slot, job, t});
        }
        due.sort(Comparator.comparingLong(a -> (Long) a[0]));
        int n = 0;
        for (Object[] d : due) {
            if (closed || !leader.leads((String) d[1]))
                break;
            if (scheduleOne((Trigger) d[2], (String) d[1], (Long) d[0], n))
                n++;
        }
        if (n > 0)
            LOG.info("odbc-leader gate: catching up {} fire(s) within {} ms", n, graceMs);
        return n;
    }

    /**
     * Of job's fire times (present: the last is the fire due now), those the catch-up policy
     * names; none when the read failed (logged).
     */
    private long[] policySlots(String job, List<Long> slots, boolean present) {
        if (slots.isEmpty())
            return new long[0];
        try {
            return leader.catchUp(job, slots.stream().mapToLong(Long::longValue).toArray(),
                    catchUpPolicy, graceMs, present);
        } catch (LeaderException e) {
            LOG.warn("odbc-leader gate: catching up {}: {}", job, e.getMessage());
            return new long[0];
        }
    }

    /**
     * Schedules the fires of trigger skipped here between prev and fireMs (a misfire that
     * skipped) that the catch-up policy names (docs/catch-up.md), fireMs being the fire due
     * now; none when this host does not lead the job or the read failed (logged).
     */
    private void catchUpGap(Trigger trigger, String job, long prev, long fireMs) {
        List<Long> gap = slotsIn(trigger, Math.max(prev, fireMs - graceMs - 1), fireMs - 1);
        if (gap.isEmpty() || !leader.leads(job))
            return;
        gap.add(fireMs);
        int n = 0;
        for (long slot : policySlots(job, gap, true))
            if (slot != fireMs && scheduleOne(trigger, job, slot, n))
                n++;
    }

    /**
     * Schedules a one-off trigger for each offered fire (a recovery or a run-now) of a gated
     * trigger, claimed when it fires with the attempts the offer allows; one already pending
     * is left as it is. Runs on the catch-up thread.
     */
    private void scheduleOffers(List<Instance.Offer> offers) {
        for (Instance.Offer o : offers) {
            for (TriggerKey key : gated.keySet()) {
                if (closed || !ledgerName(key).equals(o.job()))
                    continue;
                try {
                    Trigger t = scheduler.getTrigger(key);
                    if (t != null && scheduleOne(t, o.job(), o.fireMs(), 0, o.maxAttempts()))
                        LOG.info("odbc-leader gate: running offered {} at {} ({} attempt(s) so far, {} allowed)",
                                o.job(), o.fireMs(), o.attempt(), o.maxAttempts());
                } catch (SchedulerException e) {
                    LOG.warn("odbc-leader gate: the offered {} at {}: {}", o.job(), o.fireMs(), e.toString());
                }
            }
        }
    }

    /** Schedules one catch-up fire; returns true when scheduled (false: one is pending already). */
    private boolean scheduleOne(Trigger of, String job, long slot, int order) {
        return scheduleOne(of, job, slot, order, 0);
    }

    /** scheduleOne of an offered fire: attempts above 0 go in its JobDataMap (ATTEMPTS). */
    private boolean scheduleOne(Trigger of, String job, long slot, int order, int attempts) {
        TriggerBuilder<Trigger> b = TriggerBuilder.newTrigger().withIdentity(job + "@" + slot, CATCH_UP_GROUP)
                .forJob(of.getJobKey()).usingJobData(NOMINAL, slot).usingJobData(FOR_TRIGGER, job);
        if (attempts > 0)
            b = b.usingJobData(ATTEMPTS, attempts);
        Trigger t = b
                .startAt(new Date(System.currentTimeMillis() + order)) // oldest first
                .withSchedule(SimpleScheduleBuilder.simpleSchedule().withMisfireHandlingInstructionFireNow())
                .build();
        try {
            scheduler.scheduleJob(t);
            return true;
        } catch (ObjectAlreadyExistsException e) {
            return false;
        } catch (SchedulerException e) {
            LOG.warn("odbc-leader gate: scheduling the catch-up of {} at {}: {}", job, slot, e.toString());
            return false;
        }
    }

    /** Returns the catch-up grace in ms. */
    public long graceMs() {
        return graceMs;
    }

    /**
     * Removes the gate's listeners from the scheduler and the leader and stops catching up.
     * Does not stop the scheduler or close the leader: stop the scheduler first (waiting for
     * the jobs), then close the leader.
     */
    @Override
    public void close() {
        closed = true;
        leader.removeListener(listener);
        catchUps.shutdown();
        try {
            catchUps.awaitTermination(10, TimeUnit.SECONDS);
            scheduler.getListenerManager().removeTriggerListener(name);
            scheduler.getListenerManager().removeJobListener(name);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (SchedulerException e) {
            LOG.debug("odbc-leader gate: removing the listeners: {}", e.toString());
        }
    }
}
