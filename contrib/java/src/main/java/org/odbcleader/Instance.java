// SPDX-License-Identifier: MIT
// Instance.java: one plugin instance made by init(): a candidate of one
// election namespace, or a member of a sharded group. The calls that may do
// I/O (init, tick, claim, finish, shutdown) run one at a time under one lock:
// the plugin's instances are not thread-safe. The calls without I/O
// (isLeader, term, leadership, shardLeadership, candidateId, shards) take no
// lock, as the ABI allows from any thread; shutdown waits for those under way
// before it frees the instance. The host struct lives in native memory and
// its callbacks are held here until shutdown, so the GC never frees them.
package org.odbcleader;

import com.sun.jna.Callback;
import com.sun.jna.CallbackReference;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.NativeLongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/** One plugin instance; see {@link Plugin#init}. */
public final class Instance implements AutoCloseable {
    private static final int ERRLEN = 1024; // init's message buffer
    private static final int MSGLEN = 512; // last_error's message buffer

    /**
     * What the plugin calls back, from inside tick and shutdown on the thread that called
     * them. An exception thrown here is caught and logged (never unwinds through C).
     */
    public interface Callbacks {
        /** A log line of the plugin at a syslog level (3 error, 4 warning, 6 info, 7 debug). */
        default void log(int level, String message) {
        }

        /** Leadership changed: isLeader, term, and the leader's id as known (may be null). */
        default void onChange(boolean isLeader, long term, String leaderId) {
        }

        /** In a group: this member started or stopped leading shard under term. */
        default void onShardChange(int shard, boolean isLeader, long term) {
        }
    }

    /** void (*log)(void *ctx, int level, const char *msg) */
    public interface LogFn extends Callback {
        /** Called by the plugin. */
        void invoke(Pointer ctx, int level, Pointer msg);
    }

    /** void (*on_change)(void *ctx, int is_leader, int64_t term, const char *leader_id) */
    public interface ChangeFn extends Callback {
        /** Called by the plugin. */
        void invoke(Pointer ctx, int isLeader, long term, Pointer leaderId);
    }

    /** void (*on_shard_change)(void *ctx, uint32_t shard, int is_leader, int64_t term) */
    public interface ShardFn extends Callback {
        /** Called by the plugin. */
        void invoke(Pointer ctx, int shard, int isLeader, long term);
    }

    private final Plugin plugin;
    private final Callbacks callbacks;
    // init, tick, claim, finish, shutdown. Fair: a follower's tick blocks in
    // the plugin and is called again at once, and an unfair lock lets that
    // thread take it back before a waiting claim (or lastError) ever runs.
    private final ReentrantLock io = new ReentrantLock(true);
    private final AtomicInteger readers = new AtomicInteger(); // lock-free reads under way
    private volatile boolean closed;
    private Pointer inst;
    // Held until shutdown: the native host struct and the callbacks it points to.
    private Memory host;
    private LogFn logFn;
    private ChangeFn changeFn;
    private ShardFn shardFn;
    private final int shards;

    /** Calls init(config); see {@link Plugin#init}. */
    Instance(Plugin plugin, String config, Callbacks callbacks) throws LeaderException {
        if (config == null)
            throw new IllegalArgumentException("Instance: config is required");
        this.plugin = plugin;
        this.callbacks = callbacks != null ? callbacks : new Callbacks() {
        };
        final int p = Native.POINTER_SIZE;
        logFn = (ctx, level, msg) -> {
            try {
                this.callbacks.log(level, msg == null ? "" : Plugin.cString(msg));
            } catch (RuntimeException | Error e) {
                System.err.println("odbc-leader: the log callback threw " + e);
            }
        };
        changeFn = (ctx, leader, term, id) -> guard("onChange",
                () -> this.callbacks.onChange(leader != 0, term, id == null ? null : Plugin.cString(id)));
        shardFn = (ctx, shard, leader, term) -> guard("onShardChange",
                () -> this.callbacks.onShardChange(shard, leader != 0, term));
        host = new Memory(5L * p);
        host.clear();
        host.setInt(0, (int) (5L * p)); // struct_size
        host.setPointer(p, null); // ctx
        host.setPointer(2L * p, CallbackReference.getFunctionPointer(logFn));
        host.setPointer(3L * p, CallbackReference.getFunctionPointer(changeFn));
        host.setPointer(4L * p, CallbackReference.getFunctionPointer(shardFn));
        PointerByReference out = new PointerByReference();
        byte[] err = new byte[ERRLEN];
        int rc;
        io.lock();
        try {
            rc = plugin.fn("init").invokeInt(new Object[] {Plugin.cBytes(config), host, out, err,
                    new NativeLong(ERRLEN)});
        } finally {
            io.unlock();
        }
        if (rc < 0 || out.getValue() == null) {
            free();
            String strerror = plugin.strerror(rc);
            String msg = Plugin.bufText(err);
            throw new LeaderException(rc, msg.isEmpty() ? strerror : msg, plugin.errorClass(rc), "",
                    0, strerror);
        }
        inst = out.getValue();
        shards = plugin.has("shards") ? plugin.fn("shards").invokeInt(new Object[] {inst}) : 0;
    }

    private void guard(String what, Runnable r) {
        try {
            r.run();
        } catch (RuntimeException | Error e) {
            try {
                callbacks.log(3, what + " listener threw: " + e);
            } catch (RuntimeException | Error e2) {
                System.err.println("odbc-leader: " + what + " listener threw " + e);
            }
        }
    }

    private void free() {
        host = null;
        logFn = null;
        changeFn = null;
        shardFn = null;
    }

    /** Returns inst for an I/O call (the lock held), or throws when shut down. */
    private Pointer live() throws LeaderException {
        if (closed || inst == null)
            throw new LeaderException(LeaderException.EABI, "the instance was shut down");
        return inst;
    }

    /**
     * Returns a LeaderException (or NotLeaderException for ENOTLEADER) for code rc, with
     * this instance's last error when it is rc's (the lock held: last_error is read on the
     * thread of the call that failed).
     */
    private LeaderException error(int rc) {
        String strerror = plugin.strerror(rc);
        ErrorClass cls = plugin.errorClass(rc);
        String msg = strerror;
        String sqlstate = "";
        long nativeCode = 0;
        LastError last = lastErrorLocked();
        if (last != null && last.code() == rc) {
            if (!last.message().isEmpty() && !last.message().equals(strerror))
                msg = last.message().contains(strerror) ? last.message() : strerror + ": " + last.message();
            if (last.errorClass() != null)
                cls = last.errorClass();
            sqlstate = last.sqlstate();
            nativeCode = last.nativeCode();
        }
        if (rc == LeaderException.ENOTLEADER)
            return new NotLeaderException(rc, msg, cls, sqlstate, nativeCode, strerror);
        if (rc == LeaderException.ESCHEDULE)
            return new ScheduleException(rc, msg, cls, sqlstate, nativeCode, strerror);
        return new LeaderException(rc, msg, cls, sqlstate, nativeCode, strerror);
    }

    /**
     * The answer of one tick: leader (tick returned 1 or RESIGN_REQUESTED), the delay the
     * plugin asks for before the next tick, and whether someone asked this leader to resign.
     */
    public record Tick(boolean leader, long nextTickMs, boolean resignRequested) {
    }

    /**
     * One election step. Returns the plugin's answer.
     *
     * @throws TickException (a LeaderException carrying nextTickMs) when the plugin failed
     */
    public Tick tick() throws LeaderException {
        io.lock();
        try {
            IntByReference next = new IntByReference(1000);
            int rc = plugin.fn("tick").invokeInt(new Object[] {live(), next});
            long nextMs = Integer.toUnsignedLong(next.getValue());
            if (rc < 0)
                throw new TickException(error(rc), nextMs);
            return new Tick(rc >= 1, nextMs, rc == Plugin.RESIGN_REQUESTED);
        } finally {
            io.unlock();
        }
    }

    /** A failed tick: the error and the delay after which to tick again. */
    public static final class TickException extends LeaderException {
        private static final long serialVersionUID = 1L;
        private final long nextTickMs;

        TickException(LeaderException e, long nextTickMs) {
            super(e.code(), e.getMessage(), e.errorClass(), e.sqlstate(), e.nativeCode(), e.strerror());
            this.nextTickMs = nextTickMs;
        }

        /** Returns the delay the plugin asks for before the next tick. */
        public long nextTickMs() {
            return nextTickMs;
        }
    }

    /**
     * Claims fire fireMs (epoch ms, the nominal time) of job for the term led (in a group,
     * the term of job's shard). Returns true (run it) or false (claimed before, by anyone,
     * in any term).
     *
     * @throws NotLeaderException when this instance does not lead
     * @throws LeaderException otherwise: the outcome is unknown, do not run the fire
     */
    public boolean claim(String job, long fireMs) throws LeaderException {
        checkJob(job);
        io.lock();
        try {
            int rc = plugin.fn("claim").invokeInt(new Object[] {live(), Plugin.cBytes(job), fireMs});
            if (rc < 0)
                throw error(rc);
            return rc == 1;
        } finally {
            io.unlock();
        }
    }

    /**
     * Records the outcome (0 success, else an exit status or -signal) of a fire this
     * instance claimed; idempotent.
     */
    public void finish(String job, long fireMs, int status) throws LeaderException {
        checkJob(job);
        io.lock();
        try {
            int rc = plugin.fn("finish").invokeInt(new Object[] {live(), Plugin.cBytes(job), fireMs, status});
            if (rc < 0)
                throw error(rc);
        } finally {
            io.unlock();
        }
    }

    // ---- ABI 1.4: the fire lifecycle (docs/lifecycle.md) ----

    /** LEADER_PLUGIN_CLAIM_RUN and LEADER_PLUGIN_CLAIM_PAUSED: claimFire's answers. */
    public static final int CLAIM_RUN = 1;
    public static final int CLAIM_PAUSED = 2;
    /** sizeof(struct leader_plugin_claim): uint32 + 4 x int32, then 2 x int64 (padded). */
    private static final int CLAIM_SIZE = 40;
    /** sizeof(struct leader_plugin_offer): int64, 2 x int32, char[129], padded to 8. */
    private static final int OFFER_SIZE = 152;
    private static final int OFFERS_MAX = 64;

    /**
     * A fire claimed to run, as the database recorded it: attempt (1, or n + 1 when attempt
     * n was interrupted), maxAttempts, recovering (Quartz's isRecovering()), triggered (a
     * run-now), term (the fencing token, which finishFire uses) and the nominal time.
     */
    public record Claim(String job, long fireMs, int attempt, int maxAttempts, boolean recovering,
            boolean triggered, long term, long nominalMs) {
    }

    /** A fire offered to the leader: a run-now (fireMs below 0) or an interrupted attempt. */
    public record Offer(String job, long fireMs, int attempt, int maxAttempts) {
    }

    /**
     * Claims a fire and says what it got (ABI 1.4): the Claim to run, or null when it was
     * claimed before or its job is paused ({@link #lastClaimPaused()} tells which).
     * maxAttempts above 1 opts the job into recovery.
     *
     * @throws NotLeaderException when this instance does not lead
     * @throws LeaderException otherwise
     */
    public Claim claimFire(String job, long fireMs, int maxAttempts) throws LeaderException {
        checkJob(job);
        io.lock();
        try {
            Memory c = new Memory(CLAIM_SIZE);
            c.clear();
            c.setInt(0, CLAIM_SIZE);
            int rc = plugin.fn("claim_fire")
                    .invokeInt(new Object[] {live(), Plugin.cBytes(job), fireMs, maxAttempts, c});
            if (rc < 0)
                throw error(rc);
            lastPaused = rc == CLAIM_PAUSED;
            if (rc != CLAIM_RUN)
                return null;
            return new Claim(job, fireMs, c.getInt(4), c.getInt(8), c.getInt(12) != 0,
                    c.getInt(16) != 0, c.getLong(24), c.getLong(32));
        } finally {
            io.unlock();
        }
    }

    private volatile boolean lastPaused;

    /** True when the last claimFire that returned null found its job paused. */
    public boolean lastClaimPaused() {
        return lastPaused;
    }

    /** Records the outcome of the attempt claimFire returned (ABI 1.4). */
    public void finishFire(Claim claim, int status) throws LeaderException {
        io.lock();
        try {
            int rc = plugin.fn("finish_fire").invokeInt(new Object[] {live(),
                    Plugin.cBytes(claim.job()), claim.fireMs(), claim.term(), status});
            if (rc < 0)
                throw error(rc);
        } finally {
            io.unlock();
        }
    }

    /** The fires offered to this leader as its ticks learned them; no I/O (ABI 1.4). */
    public java.util.List<Offer> offers() throws LeaderException {
        if (!plugin.has("offers"))
            return java.util.List.of();
        io.lock();
        try {
            Memory buf = new Memory((long) OFFER_SIZE * OFFERS_MAX);
            buf.clear();
            int n = plugin.fn("offers").invokeInt(new Object[] {live(), buf, OFFERS_MAX});
            if (n < 0)
                throw error(n);
            java.util.List<Offer> list = new java.util.ArrayList<>();
            for (int i = 0; i < Math.min(n, OFFERS_MAX); i++) {
                long o = (long) i * OFFER_SIZE;
                list.add(new Offer(buf.getString(o + 16, "UTF-8"), buf.getLong(o),
                        buf.getInt(o + 8), buf.getInt(o + 12)));
            }
            return list;
        } finally {
            io.unlock();
        }
    }

    /** Pauses (or resumes) job on every host, durably (ABI 1.4). */
    public void pauseJob(String job, boolean paused) throws LeaderException {
        checkJob(job);
        io.lock();
        try {
            int rc = plugin.fn("pause_job")
                    .invokeInt(new Object[] {live(), Plugin.cBytes(job), paused ? 1 : 0});
            if (rc < 0)
                throw error(rc);
        } finally {
            io.unlock();
        }
    }

    /** Asks the leader to run job once now; returns the run-now's key, below 0 (ABI 1.4). */
    public long triggerJob(String job) throws LeaderException {
        checkJob(job);
        io.lock();
        try {
            Memory key = new Memory(8);
            key.setLong(0, 0);
            int rc = plugin.fn("trigger_job").invokeInt(new Object[] {live(), Plugin.cBytes(job), key});
            if (rc < 0)
                throw error(rc);
            return key.getLong(0);
        } finally {
            io.unlock();
        }
    }

    private static void checkJob(String job) {
        if (job == null || job.isEmpty())
            throw new IllegalArgumentException("job name is required");
    }

    /**
     * Resigns if leader, leaves the election and frees the instance; waits for the
     * lock-free reads under way. A second call does nothing.
     */
    public void shutdown() {
        io.lock();
        try {
            if (closed)
                return;
            closed = true;
            while (readers.get() > 0)
                Thread.onSpinWait();
            try {
                plugin.fn("shutdown").invokeVoid(new Object[] {inst});
            } catch (LeaderException e) {
                throw new IllegalStateException(e); // every 1.0 plugin has shutdown
            } finally {
                inst = null;
                free();
            }
        } finally {
            io.unlock();
        }
    }

    /** Same as {@link #shutdown()}. */
    @Override
    public void close() {
        shutdown();
    }

    /** Returns true once shut down. */
    public boolean isClosed() {
        return closed;
    }

    // ---- lock-free reads: no I/O, any thread ----

    /** Runs a read unless closed; returns dflt when closed. */
    private <T> T read(T dflt, ReadFn<T> fn) {
        readers.incrementAndGet();
        try {
            if (closed)
                return dflt;
            return fn.read(inst);
        } catch (LeaderException e) {
            return dflt;
        } finally {
            readers.decrementAndGet();
        }
    }

    private interface ReadFn<T> {
        T read(Pointer p) throws LeaderException;
    }

    /** Returns true while this instance leads (a group: any shard). */
    public boolean isLeader() {
        return read(false, p -> plugin.fn("is_leader").invokeInt(new Object[] {p}) != 0);
    }

    /** Returns the term (fencing token) led, 0 when not leader (a group: 0). */
    public long term() {
        return read(0L, p -> plugin.fn("term").invokeLong(new Object[] {p}));
    }

    /** Returns the term led and how long its trust window still runs, read at once (ABI 1.1). */
    public Leadership leadership() throws LeaderException {
        plugin.fn("leadership");
        return read(Leadership.NONE, p -> {
            IntByReference valid = new IntByReference(0);
            long term = plugin.fn("leadership").invokeLong(new Object[] {p, valid});
            return term == 0 ? Leadership.NONE : new Leadership(term, Integer.toUnsignedLong(valid.getValue()));
        });
    }

    /** Returns the term of shard led by this member and its trust window (ABI 1.3). */
    public Leadership shardLeadership(int shard) throws LeaderException {
        plugin.fn("shard_leadership");
        return read(Leadership.NONE, p -> {
            IntByReference valid = new IntByReference(0);
            long term = plugin.fn("shard_leadership").invokeLong(new Object[] {p, shard, valid});
            return term == 0 ? Leadership.NONE : new Leadership(term, Integer.toUnsignedLong(valid.getValue()));
        });
    }

    /**
     * Says how this host computes the nominal times of job's fires (ABI 1.6,
     * docs/schedules.md): expr in the engine's own syntax (null forgets it), tz the IANA
     * zone it computes in (null: the host's; "": none, for intervals), engine its name and
     * DST rule. A later claim computed by another schedule than the job's recorded one
     * throws ScheduleException. No I/O.
     *
     * @throws LeaderException EABI for an older plugin, or a bad zone or part, named
     */
    public void setSchedule(String job, String expr, String tz, String engine)
            throws LeaderException {
        com.sun.jna.Function f = plugin.fn("set_schedule");
        io.lock();
        try {
            int rc = f.invokeInt(new Object[] {live(), job, expr, tz, engine});
            if (rc < 0)
                throw error(rc);
        } finally {
            io.unlock();
        }
    }

    /**
     * Returns, of job's fire times (ascending, as this host's engine computes them; present:
     * the newest is the fire due now), those to claim, oldest first, decided by the plugin's
     * catch-up policy (ABI 1.7, docs/catch-up.md) from the ledger's latest fire of the job and
     * the database clock. One round trip.
     *
     * @throws LeaderException EABI for an older plugin or a closed instance, or the plugin's error
     */
    public long[] catchUp(String job, String policy, long graceMs, long[] times, boolean present)
            throws LeaderException {
        com.sun.jna.Function f = plugin.fn("catch_up");
        com.sun.jna.Memory arr = Plugin.int64s(times);
        com.sun.jna.Memory first = new com.sun.jna.Memory(com.sun.jna.Native.SIZE_T_SIZE);
        io.lock();
        try {
            int n = f.invokeInt(new Object[] {live(), job, policy, graceMs, present ? 1 : 0, arr,
                (long) times.length, first});
            if (n < 0)
                throw error(n);
            return Plugin.selected(times, first, n);
        } finally {
            io.unlock();
        }
    }

    /**
     * Returns the fence predicate of the instance's dialect (ABI 1.5): the SELECT inside
     * EXISTS ( ... ), {@code ?} for the namespace and then the term. No I/O, but never beside
     * a tick (a reconnect may load the dialect again).
     *
     * @throws LeaderException EABI for an older plugin or a closed instance, or the plugin's error
     */
    public String fenceSql() throws LeaderException {
        com.sun.jna.Function f = plugin.fn("fence_sql");
        io.lock();
        try {
            Pointer p = live();
            int n = f.invokeInt(new Object[] {p, null, 0L});
            if (n < 0)
                throw error(n);
            Memory buf = new Memory(n + 1L);
            n = f.invokeInt(new Object[] {p, buf, (long) (n + 1)});
            if (n < 0)
                throw error(n);
            return buf.getString(0, "UTF-8");
        } finally {
            io.unlock();
        }
    }

    /** Returns this instance's candidate id as the lease and the ledger name it (ABI 1.2). */
    public String candidateId() throws LeaderException {
        plugin.fn("candidate_id");
        return read(null, p -> Plugin.cString(plugin.fn("candidate_id").invokePointer(new Object[] {p})));
    }

    /** Returns the shard count of a group member, 0 otherwise (or before ABI 1.3). */
    public int shards() {
        return shards;
    }

    /**
     * Returns the shard of key in this instance's group, as the plugin's shard_of computes it
     * (FNV-1a 64 of its UTF-8 bytes, docs/abi.md); 0 without shards or once shut down.
     */
    public int shardOf(String key) {
        if (shards == 0)
            return 0;
        return read(0, p -> plugin.fn("shard_of").invokeInt(new Object[] {p, Plugin.cBytes(key)}));
    }

    /**
     * The instance's last error (ABI 1.2): code (0 when no call failed yet), its class
     * refined by the SQLSTATE, the SQLSTATE ("" when not from the driver), the native code
     * and the message (never a password).
     */
    public record LastError(int code, ErrorClass errorClass, String sqlstate, long nativeCode,
                            String message) {
    }

    /** Returns the last error, or null for a plugin older than ABI 1.2 or when shut down. */
    public LastError lastError() {
        io.lock();
        try {
            return lastErrorLocked();
        } finally {
            io.unlock();
        }
    }

    private LastError lastErrorLocked() {
        if (closed || inst == null || !plugin.has("last_error"))
            return null;
        IntByReference cls = new IntByReference(0);
        NativeLongByReference nat = new NativeLongByReference(new NativeLong(0));
        byte[] state = new byte[6];
        byte[] msg = new byte[MSGLEN];
        int code;
        try {
            code = plugin.fn("last_error").invokeInt(new Object[] {inst, cls, state, nat, msg,
                    new NativeLong(MSGLEN)});
        } catch (LeaderException e) {
            return null;
        }
        return new LastError(code, ErrorClass.of(cls.getValue()), Plugin.bufText(state),
                nat.getValue().longValue(), Plugin.bufText(msg));
    }

    /** Returns the plugin this instance belongs to. */
    public Plugin plugin() {
        return plugin;
    }
}
