// SPDX-License-Identifier: MIT
// Leader.java: a candidate that campaigns on its own. It ticks its plugin
// instance on a thread of its own as the plugin asks, tells its listeners
// when it is elected and when it loses, and claims and finishes fires in the
// fire ledger, so that each fire of a job runs on one host at most. With
// shards it is a member of a sharded group (docs/groups.md): each job
// belongs to a shard, each shard is led by one member under a term of its
// own. The election, the claim and the fencing stay in the C plugin.
package org.odbcleader;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * One candidate; made by {@link #builder()}, started by {@link #start()}, ended by
 * {@link #close()} (a leader resigns, so another candidate takes over at once). The
 * configuration string, which may hold a password, stays private: {@link #toString()} shows
 * the namespace, the plugin, the shards and the state, nothing of the connection string.
 */
public final class Leader implements AutoCloseable {
    /** The environment variable naming the plugin when no path is given. */
    public static final String PLUGIN_ENV = "ODBC_LEADER_PLUGIN";
    private static final String PLUGIN_NAME = "odbc_leader.so";
    private static final String[] PKGLIBDIRS = {"/usr/local/lib/odbc-leader", "/usr/lib/odbc-leader",
        "/usr/lib/x86_64-linux-gnu/odbc-leader", "/usr/lib/aarch64-linux-gnu/odbc-leader"};

    private final Plugin plugin;
    private final String config; // may hold a password: never shown
    private final String namespace;
    private final BiConsumer<Integer, String> log;
    private final List<LeaderListener> listeners = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService ticker;
    private final ReentrantLock state = new ReentrantLock();
    private final Condition idle = state.newCondition();
    private int inflight; // runFire calls under way (state held)
    private volatile Instance inst;
    private volatile boolean running;
    private volatile boolean stopped;
    private volatile LeaderException lastError;
    private boolean leading; // tick thread only
    private long electedTerm; // tick thread only

    private Leader(Builder b) throws LeaderException {
        this.plugin = new Plugin(findPlugin(b.plugin));
        this.config = configString(b.connect, b.namespace, b.ttlMs, b.shards, b.extra);
        this.namespace = b.namespace;
        this.log = b.log != null ? b.log : (level, msg) -> {
            if (level <= 4)
                System.err.println("odbc-leader: " + msg);
        };
        this.ticker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "odbc-leader-tick");
            t.setDaemon(true);
            return t;
        });
    }

    /** Returns a new Builder. */
    public static Builder builder() {
        return new Builder();
    }

    /** The options of a Leader. connect is required. */
    public static final class Builder {
        private String connect;
        private String namespace;
        private Long ttlMs;
        private Integer shards;
        private String extra;
        private String plugin;
        private BiConsumer<Integer, String> log;

        private Builder() {
        }

        /** An ODBC connection string or "DSN=name" (the Leader* keys may be in it). */
        public Builder connect(String connect) {
            this.connect = connect;
            return this;
        }

        /** The election namespace (LeaderNamespace). */
        public Builder namespace(String namespace) {
            this.namespace = namespace;
            return this;
        }

        /** The lease's TTL in ms (LeaderTTL). */
        public Builder ttlMs(long ttlMs) {
            if (ttlMs <= 0)
                throw new IllegalArgumentException("ttlMs must be positive, got " + ttlMs);
            this.ttlMs = ttlMs;
            return this;
        }

        /** Makes this candidate a member of a group of that many shards (LeaderShards). */
        public Builder shards(int shards) {
            if (shards <= 0)
                throw new IllegalArgumentException("shards must be positive, got " + shards);
            this.shards = shards;
            return this;
        }

        /** More Leader* keys, "Key=value;Key=value". */
        public Builder extra(String extra) {
            this.extra = extra;
            return this;
        }

        /** The plugin's path; see {@link Leader#findPlugin}. */
        public Builder plugin(String plugin) {
            this.plugin = plugin;
            return this;
        }

        /** Where the plugin's log lines go (syslog level, message); default: warnings on stderr. */
        public Builder log(BiConsumer<Integer, String> log) {
            this.log = log;
            return this;
        }

        /**
         * Returns a Leader that is not started yet (it loads the plugin now).
         *
         * @throws LeaderException when the plugin cannot be loaded
         * @throws IllegalArgumentException when connect is missing or the plugin is not found
         */
        public Leader build() throws LeaderException {
            if (connect == null || connect.isBlank())
                throw new IllegalArgumentException("Leader: connect is required");
            return new Leader(this);
        }
    }

    /**
     * Returns the path of odbc_leader.so: file when given, else $ODBC_LEADER_PLUGIN, else the
     * installed pkglibdir (pkg-config's odbcleader, then the usual prefixes).
     *
     * @throws IllegalArgumentException naming every place it looked
     */
    public static String findPlugin(String file) {
        return resolvePlugin(file, System.getenv(PLUGIN_ENV), Leader::pkgconfigDir, p -> new File(p).exists());
    }

    /**
     * Returns the plugin's path in docs/abi.md's order ("Finding the plugin"): file when given,
     * else env ($ODBC_LEADER_PLUGIN), else the installed pkglibdir (pkglibdir asks pkg-config,
     * then the usual prefixes); exists says whether a path is a file. Pure: findPlugin gives it
     * the host's.
     *
     * @throws IllegalArgumentException naming every place it looked
     */
    static String resolvePlugin(String file, String env, Supplier<String> pkglibdir, Predicate<String> exists) {
        if (file != null && !file.isEmpty()) {
            if (!exists.test(file))
                throw new IllegalArgumentException("odbc-leader plugin " + file + ": no such file");
            return file;
        }
        if (env != null && !env.isEmpty()) {
            if (!exists.test(env))
                throw new IllegalArgumentException(
                        "odbc-leader plugin " + env + " (from $" + PLUGIN_ENV + "): no such file");
            return env;
        }
        List<String> tried = new ArrayList<>();
        String pc = pkglibdir.get();
        if (pc != null)
            tried.add(new File(pc, PLUGIN_NAME).getPath());
        for (String dir : PKGLIBDIRS)
            tried.add(new File(dir, PLUGIN_NAME).getPath());
        for (String f : tried)
            if (exists.test(f))
                return f;
        throw new IllegalArgumentException("odbc-leader plugin not found: pass plugin, set $" + PLUGIN_ENV
                + ", or install odbc-leader (tried " + String.join(", ", tried) + ")");
    }

    /** Returns the pkglibdir of an installed odbcleader.pc, or null. */
    private static String pkgconfigDir() {
        try {
            Process p = new ProcessBuilder("pkg-config", "--variable=pkglibdir", "odbcleader")
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            String out;
            try (InputStream in = p.getInputStream()) {
                out = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
            }
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroy();
                return null;
            }
            return p.exitValue() == 0 && !out.isEmpty() ? out : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /**
     * Returns the plugin's configuration: the connection string with the Leader* keys (the
     * namespace quoted: one value, whatever it holds).
     */
    static String configString(String connect, String namespace, Long ttlMs, Integer shards, String extra) {
        StringBuilder b = new StringBuilder(connect.replaceAll(";+$", ""));
        if (namespace != null)
            b.append(";LeaderNamespace=").append(quote(namespace));
        if (ttlMs != null)
            b.append(";LeaderTTL=").append(ttlMs);
        if (shards != null)
            b.append(";LeaderShards=").append(shards);
        if (extra != null && !extra.replaceAll("^;+|;+$", "").isEmpty())
            b.append(';').append(extra.replaceAll("^;+|;+$", ""));
        return b.toString();
    }

    private static boolean isBlank(char c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == 0x0b || c == '\f';
    }

    /**
     * Returns value as the library's parser (src/config.c) reads it back as one value: as it
     * is, or in braces with '}' doubled when it holds ';', '{', '}' or blanks at either end.
     */
    static String quote(String value) {
        boolean plain = !value.isEmpty() && !isBlank(value.charAt(0))
                && !isBlank(value.charAt(value.length() - 1));
        for (int i = 0; plain && i < value.length(); i++)
            plain = ";{}\0".indexOf(value.charAt(i)) < 0;
        return plain || value.isEmpty() ? value : "{" + value.replace("}", "}}") + "}";
    }

    /**
     * Returns the Leader as it may be printed: its namespace, its plugin and its state; nothing
     * of the connection string.
     */
    @Override
    public String toString() {
        return "Leader[namespace=" + namespace + ", plugin=" + plugin.path() + ", shards=" + shards()
                + ", leader=" + isLeader() + ", term=" + term() + "]";
    }

    /** Adds a listener of leadership events (see {@link LeaderListener}); returns this. */
    public Leader addListener(LeaderListener l) {
        listeners.add(Objects.requireNonNull(l, "listener"));
        return this;
    }

    /** Removes a listener. */
    public void removeListener(LeaderListener l) {
        listeners.remove(l);
    }

    /**
     * Creates the instance and starts ticking on the Leader's thread. Returns once the first
     * tick has answered (leader or not); a second call does nothing.
     *
     * @throws LeaderException when init is refused (configuration, database): the message names
     *         the problem; the Leader is then closed
     */
    public Leader start() throws LeaderException {
        if (inst != null || stopped)
            return this;
        Instance.Callbacks cb = new Instance.Callbacks() {
            @Override
            public void log(int level, String message) {
                log.accept(level, message);
            }

            @Override
            public void onChange(boolean isLeader, long term, String leaderId) {
                changed(isLeader, term, leaderId);
            }

            @Override
            public void onShardChange(int shard, boolean isLeader, long term) {
                for (LeaderListener l : listeners)
                    l.shardChanged(shard, isLeader, term);
            }
        };
        Future<?> first = ticker.submit(() -> {
            inst = plugin.init(config, cb);
            running = true;
            tickOnce();
            return null;
        });
        try {
            first.get();
        } catch (ExecutionException e) {
            close();
            if (e.getCause() instanceof LeaderException)
                throw (LeaderException) e.getCause();
            if (e.getCause() instanceof RuntimeException)
                throw (RuntimeException) e.getCause();
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close();
            throw new LeaderException(LeaderException.EABI, "interrupted while starting");
        }
        return this;
    }

    private void changed(boolean isLeader, long term, String leaderId) {
        for (LeaderListener l : listeners)
            l.changed(isLeader, term, leaderId);
        boolean was = leading;
        leading = isLeader;
        if (isLeader && !was) {
            electedTerm = term;
            for (LeaderListener l : listeners)
                l.elected(term);
        } else if (!isLeader && was) {
            for (LeaderListener l : listeners)
                l.lost(electedTerm);
        }
    }

    /** The offers the last tick left (no I/O); empty, logged, when the plugin refuses to list them. */
    private java.util.List<Instance.Offer> offers() {
        try {
            return inst.offers();
        } catch (LeaderException e) {
            lastError = e;
            log.accept(4, "listing the offered fires failed: " + e.getMessage());
            return java.util.List.of();
        }
    }

    /** One tick on the tick thread, then the next one after the delay the plugin asks for. */
    private void tickOnce() {
        if (!running)
            return;
        long delay;
        java.util.List<Instance.Offer> offers = java.util.List.of();
        try {
            delay = inst.tick().nextTickMs();
            if (!listeners.isEmpty())
                offers = offers();
        } catch (Instance.TickException e) {
            lastError = e;
            delay = e.nextTickMs() > 0 ? e.nextTickMs() : 1000;
            for (LeaderListener l : listeners)
                l.tickFailed(e);
        } catch (LeaderException e) { // shut down meanwhile
            return;
        }
        if (!offers.isEmpty() && running)
            for (LeaderListener l : listeners)
                l.offered(offers);
        if (running) {
            try {
                ticker.schedule(this::tickOnce, Math.max(1, delay), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // closing
            }
        }
    }

    /**
     * Stops ticking and shuts the instance down: a leader resigns, so another candidate
     * takes over at once. Waits for the tick and the fires (runFire) under way. Idempotent.
     */
    @Override
    public void close() {
        stopped = true;
        running = false;
        ticker.shutdown();
        try {
            ticker.awaitTermination(1, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        state.lock();
        try {
            while (inflight > 0)
                idle.awaitUninterruptibly();
        } finally {
            state.unlock();
        }
        Instance i = inst;
        if (i != null) {
            // The listeners hear "lost" from the plugin's on_change inside shutdown
            // (the resign), on this thread.
            i.shutdown();
        }
    }

    // ---- state, no I/O ----

    /** Returns true while this candidate leads (a group: any shard). */
    public boolean isLeader() {
        Instance i = inst;
        return i != null && i.isLeader();
    }

    /** Returns the term led, 0 when not (a group: 0; see {@link #termOf}). */
    public long term() {
        Instance i = inst;
        return i == null ? 0 : i.term();
    }

    /** Returns the term led and how long its trust window still runs, read at once. */
    public Leadership leadership() throws LeaderException {
        Instance i = inst;
        return i == null ? Leadership.NONE : i.leadership();
    }

    /** Returns this candidate's id, as the lease and the ledger name it (null before start). */
    public String candidateId() throws LeaderException {
        Instance i = inst;
        return i == null ? null : i.candidateId();
    }

    /** Returns the shard count of a group member, 0 otherwise. */
    public int shards() {
        Instance i = inst;
        return i == null ? 0 : i.shards();
    }

    /** Returns the shard of job in the group, as the plugin computes it (0 without shards). */
    public int shardOf(String job) {
        Instance i = inst;
        return i == null ? 0 : i.shardOf(job);
    }

    /** Returns true while this host may run job: it leads job's shard (a group) or leads. */
    public boolean leads(String job) {
        return termOf(job) != 0;
    }

    /**
     * Returns a Fence for this host's writes, from the plugin's predicate for its own dialect
     * (ABI 1.5: no odbc-leader command needed): of this leader's namespace, or in a group of
     * job's shard ("NAMESPACE/SHARD"; job is then required, else it may be null).
     *
     * @throws LeaderException before start, or from a plugin without the fence (EABI)
     * @throws IllegalStateException without a namespace, or in a group without job
     */
    public Fence fence(String job) throws LeaderException {
        Instance i = inst;
        if (i == null)
            throw new LeaderException(LeaderException.EABI, "fence: the leader is not started");
        if (namespace == null)
            throw new IllegalStateException("fence: the leader was built without a namespace");
        if (i.shards() == 0)
            return new Fence(i.fenceSql(), namespace);
        if (job == null)
            throw new IllegalStateException("fence: a group's fence is its job's shard's: give job");
        return new Fence(i.fenceSql(), namespace + "/" + i.shardOf(job));
    }

    /** Returns the term under which this host runs job (its shard's in a group); 0 when it does not lead it. */
    public long termOf(String job) {
        Instance i = inst;
        if (i == null)
            return 0;
        if (i.shards() == 0)
            return i.term();
        try {
            return i.shardLeadership(i.shardOf(job)).term();
        } catch (LeaderException e) {
            return 0;
        }
    }

    /** Returns the namespace given to the builder (null when the connection string has it). */
    public String namespace() {
        return namespace;
    }

    /** Returns the plugin this Leader loaded. */
    public Plugin plugin() {
        return plugin;
    }

    /** Returns the low-level instance (null before start). */
    public Instance instance() {
        return inst;
    }

    /** Returns the last tick error, or null. */
    public LeaderException lastError() {
        return lastError;
    }

    // ---- fires ----

    /** {@link #claim(String, long, int)} of a fire that runs at most once. */
    public Fire claim(String job, long fireMs) throws LeaderException {
        return claim(job, fireMs, 1);
    }

    /**
     * Claims fire fireMs (epoch ms, its nominal time, the same on every host) of job for the
     * term led. Returns the Fire to run, as the database recorded it (the term it is fenced
     * in, its attempt), or null when it is not this host's to run (claimed before by anyone,
     * its job paused: recorded skipped, this host does not lead job, or it computes job's
     * fires by another schedule than the recorded one: {@link #setSchedule}, logged).
     * maxAttempts above 1
     * opts the fire into recovery: the next leader gets it offered ({@link
     * LeaderListener#offered}) if this host dies before finish.
     *
     * @throws LeaderException when the outcome is unknown (do not run the fire)
     */
    public Fire claim(String job, long fireMs, int maxAttempts) throws LeaderException {
        Instance i = inst;
        if (!running || i == null || !leads(job))
            return null;
        try {
            if (!i.plugin().has("claim_fire")) { // a plugin before ABI 1.4
                long term = termOf(job);
                return i.claim(job, fireMs) ? new Fire(job, fireMs, term) : null;
            }
            Instance.Claim c = i.claimFire(job, fireMs, maxAttempts);
            if (c == null) {
                if (i.lastClaimPaused())
                    log.accept(6, job + " at " + fireMs + " not run: the job is paused");
                return null;
            }
            return new Fire(job, fireMs, c.term(), c.attempt(), c.recovering(), c.triggered());
        } catch (NotLeaderException e) {
            return null;
        } catch (ScheduleException e) {
            log.accept(3, job + " at " + fireMs + " not run: " + e.getMessage());
            return null;
        }
    }

    /**
     * Says how this host computes job's nominal fire times (docs/schedules.md): expr in the
     * scheduler's own terms (null forgets it), tz the IANA zone it computes in (null: the
     * host's; "": none, for fixed intervals), engine the scheduler and its DST rule. The first
     * claim records it for job; a claim from a host that computes it otherwise (another zone)
     * is refused, logged and not run, so "the same" fire never runs twice across zones.
     *
     * @return true, or false for a plugin before ABI 1.6 (which cannot check) or before start
     * @throws LeaderException for a bad zone or part, named
     */
    public boolean setSchedule(String job, String expr, String tz, String engine)
            throws LeaderException {
        Instance i = inst;
        if (i == null || !i.plugin().has("set_schedule"))
            return false;
        i.setSchedule(job, expr, tz, engine);
        return true;
    }

    /**
     * Returns, of job's fire times (epoch ms, ascending, as this host's engine computes them;
     * present: the newest is the fire due now), those to claim after an election, an outage or
     * a pause, decided by the library's catch-up policy (docs/catch-up.md): no older than
     * graceMs on the database clock, by policy ("skip", "latest" (later than the ledger's
     * latest fire of the job), "all" or "all:CAP"). A job with no fire in the ledger catches up
     * nothing. With a plugin before ABI 1.7: those within the grace by this host's clock.
     *
     * @throws LeaderException a bad policy, the read failed, or not started
     */
    public long[] catchUp(String job, long[] times, String policy, long graceMs, boolean present)
            throws LeaderException {
        Instance i = inst;
        if (i == null)
            throw new LeaderException(LeaderException.EABI, "the leader is not started");
        if (!i.plugin().has("catch_up")) {
            long floor = System.currentTimeMillis() - graceMs;
            return java.util.Arrays.stream(times).filter(t -> t >= floor).toArray();
        }
        return i.catchUp(job, policy, graceMs, times, present);
    }

    /**
     * Records the outcome of a claimed fire (status 0: success, else an exit status) for its
     * term.
     *
     * @throws LeaderException when a later term took the fire again (this host was paused past
     *     its lease) or the outcome could not be recorded
     */
    public void finish(Fire fire, int status) throws LeaderException {
        Instance i = inst;
        if (i == null)
            throw new LeaderException(LeaderException.EABI, "the Leader was not started");
        if (!i.plugin().has("finish_fire")) {
            i.finish(fire.job(), fire.fireMs(), status);
            return;
        }
        i.finishFire(new Instance.Claim(fire.job(), fire.fireMs(), fire.attempt(), 0,
                fire.recovering(), fire.triggered(), fire.term(), fire.fireMs()), status);
    }

    /**
     * Claims the fire and, when this host is to run it, runs fn, then records its outcome
     * (status 1 when fn threw, and the exception is thrown again). Returns fn's result, or
     * null when the fire was not this host's to run. close() waits for it.
     */
    public <T> T runFire(String job, long fireMs, FireFunction<T> fn) throws Exception {
        state.lock();
        try {
            if (stopped)
                return null;
            inflight++;
        } finally {
            state.unlock();
        }
        try {
            Fire fire = claim(job, fireMs);
            if (fire == null)
                return null;
            int status = 1;
            try {
                T r = fn.run(fire);
                status = 0;
                return r;
            } finally {
                try {
                    finish(fire, status);
                } catch (LeaderException e) {
                    log.accept(4, "recording the outcome of " + job + " at " + fireMs + " failed: " + e.getMessage());
                }
            }
        } finally {
            state.lock();
            try {
                if (--inflight == 0)
                    idle.signalAll();
            } finally {
                state.unlock();
            }
        }
    }

    /** The work of one fire, given the Fire (its job, nominal time and term). */
    @FunctionalInterface
    public interface FireFunction<T> {
        /** Runs the fire; returns its result. */
        T run(Fire fire) throws Exception;
    }

    /** Adapts a Callable to {@link FireFunction}. */
    public static <T> FireFunction<T> of(Callable<T> c) {
        return fire -> c.call();
    }
}
