// SPDX-License-Identifier: MIT
// BindingTest.java: the JNA binding and the Leader against the built
// odbc_leader.so and always_leader.so on SQLite files: versions and EABI,
// errors with their class and SQLSTATE, election and handover with the
// listeners, claims and outcomes in the ledger, the shard hash and the fence.
package org.odbcleader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class BindingTest {
    private static Leader leader(String connect, String ns, String id) throws LeaderException {
        return Leader.builder().connect(connect).namespace(ns).ttlMs(2000).plugin(TestEnv.odbcLeaderSo())
                .extra(TestEnv.FAST + ";LeaderId=" + id).log((l, m) -> { }).build();
    }

    @Test
    void pluginVersionAndMembers() throws Exception {
        Plugin p = new Plugin(TestEnv.odbcLeaderSo());
        assertEquals(1, p.abiMajor());
        assertTrue(p.abiMinor() >= 3, "minor " + p.abiMinor());
        assertNotNull(p.name());
        assertNotNull(p.version());
        for (String m : List.of("claim", "finish", "leadership", "candidate_id", "error_class", "last_error",
                "shards", "shard_of", "shard_leadership"))
            assertTrue(p.has(m), m);
        assertFalse(p.has("no_such_member"));
        assertTrue(p.structSize() >= Plugin.offsetOf("shard_leadership") + 8);
    }

    @Test
    void anotherMajorIsRefusedWithEabi() {
        LeaderException e = assertThrows(LeaderException.class, () -> new Plugin(TestEnv.odbcLeaderSo(), 2));
        assertEquals(LeaderException.EABI, e.code());
        LeaderException e2 = assertThrows(LeaderException.class, () -> new Plugin("/nonexistent/odbc_leader.so"));
        assertEquals(LeaderException.EABI, e2.code());
    }

    @Test
    void badKeyIsConfig() throws Exception {
        Plugin p = new Plugin(TestEnv.odbcLeaderSo());
        LeaderException e = assertThrows(LeaderException.class,
                () -> p.init(TestEnv.sqlite() + ";LeaderNamespace=x;LeaderBogus=1", null));
        assertTrue(e.getMessage().contains("LeaderBogus"), e.getMessage());
        assertEquals(ErrorClass.CONFIG, e.errorClass());
        assertTrue(e.code() < 0);
        LeaderException e2 = assertThrows(LeaderException.class,
                () -> p.init("Driver=SQLite3;Database=/nonexistent/dir/x.db;LeaderNamespace=x", null));
        assertEquals(ErrorClass.TRANSIENT, e2.errorClass(), e2.toString());
    }

    @Test
    void droppedLeaseTableGivesTheDriverSqlstate() throws Exception {
        String conn = TestEnv.sqlite();
        List<LeaderException> errors = new CopyOnWriteArrayList<>();
        try (Leader l = leader(conn, "err", "a")) {
            l.addListener(new LeaderListener() {
                @Override
                public void tickFailed(LeaderException e) {
                    errors.add(e);
                }
            });
            l.start();
            TestEnv.run("python3", "-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); "
                    + "c.execute('DROP TABLE odbc_leader_lease'); c.commit()", TestEnv.dbFile(conn));
            long deadline = System.currentTimeMillis() + 20_000;
            while (errors.isEmpty() && System.currentTimeMillis() < deadline)
                Thread.sleep(50);
        }
        assertFalse(errors.isEmpty(), "no tick failed");
        LeaderException e = errors.get(0);
        assertEquals(5, e.sqlstate().length(), "sqlstate '" + e.sqlstate() + "'");
        assertTrue(e.getMessage().contains("odbc_leader_lease"), e.getMessage());
        assertNotNull(e.errorClass());
    }

    @Test
    void electionAndHandoverWithListeners() throws Exception {
        String conn = TestEnv.sqlite();
        CountDownLatch aElected = new CountDownLatch(1);
        CountDownLatch aLost = new CountDownLatch(1);
        CountDownLatch bElected = new CountDownLatch(1);
        long[] terms = new long[2];
        Leader a = leader(conn, "ho", "a");
        try (Leader b = leader(conn, "ho", "b")) {
            a.addListener(new LeaderListener() {
                @Override
                public void elected(long term) {
                    terms[0] = term;
                    aElected.countDown();
                }

                @Override
                public void lost(long term) {
                    aLost.countDown();
                }
            });
            b.addListener(new LeaderListener() {
                @Override
                public void elected(long term) {
                    terms[1] = term;
                    bElected.countDown();
                }
            });
            a.start();
            assertTrue(aElected.await(10, TimeUnit.SECONDS), "a was not elected");
            assertTrue(a.isLeader());
            assertEquals(terms[0], a.term());
            Leadership ls = a.leadership();
            assertEquals(terms[0], ls.term());
            assertTrue(ls.validForMs() > 0 && ls.validForMs() <= 2000, "valid for " + ls.validForMs());
            assertEquals("a", a.candidateId());
            b.start();
            assertFalse(b.isLeader());
            assertEquals(0, b.term());
            a.close(); // resigns
            assertTrue(aLost.await(5, TimeUnit.SECONDS), "a heard no lost");
            assertFalse(a.isLeader());
            assertTrue(bElected.await(10, TimeUnit.SECONDS), "b was not elected after a resigned");
            assertTrue(terms[1] > terms[0], "terms " + terms[0] + " then " + terms[1]);
        } finally {
            a.close();
        }
    }

    @Test
    void claimAndFinishInTheLedger() throws Exception {
        String conn = TestEnv.sqlite();
        final long t = System.currentTimeMillis() / 1000 * 1000; // within LeaderFireRetention
        try (Leader a = leader(conn, "cl", "a"); Leader b = leader(conn, "cl", "b")) {
            a.start();
            b.start();
            assertTrue(a.isLeader());
            Fire f = a.claim("job", t + 5000);
            assertNotNull(f);
            assertEquals(a.term(), f.term());
            assertNull(a.claim("job", t + 5000), "claimed twice");
            assertNull(b.claim("job", t + 6000), "a follower claimed");
            assertThrows(NotLeaderException.class, () -> b.instance().claim("job", t + 6000));
            a.finish(f, 0);
            a.finish(f, 0); // idempotent
            String r = a.runFire("job", t + 7000, fire -> "ran " + fire.fireMs());
            assertEquals("ran " + (t + 7000), r);
            assertThrows(IllegalStateException.class, () -> a.runFire("job", t + 8000, fire -> {
                throw new IllegalStateException("boom");
            }));
            assertNull(a.runFire("job", t + 7000, fire -> "again"));
            assertThrows(IllegalArgumentException.class, () -> a.claim("", 1));
        }
        List<TestEnv.Row> rows = TestEnv.ledger(conn, "cl");
        assertEquals(3, rows.size(), rows.toString());
        for (TestEnv.Row row : rows) {
            assertEquals("job", row.job());
            assertEquals("a", row.claimedBy());
            assertEquals(row.fireMs() == t + 8000 ? Integer.valueOf(1) : Integer.valueOf(0), row.status(), row.toString());
        }
    }

    /** Ticks i until it leads (at most 30 s). */
    private static void tickUntilLeader(Instance i) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!i.tick().leader()) {
            assertTrue(System.nanoTime() < deadline, "never led");
            Thread.sleep(50);
        }
    }

    @Test
    void abi14RecoveryPauseAndRunNow() throws Exception {
        String conn = TestEnv.sqlite() + ";LeaderNamespace=life;LeaderTTL=3000";
        Plugin p = new Plugin(TestEnv.odbcLeaderSo());
        assertTrue(p.abiMinor() >= 4);
        final long t = System.currentTimeMillis() / 1000 * 1000;
        try (Instance a = p.init(conn + ";LeaderId=a", null);
                Instance b = p.init(conn + ";LeaderId=b", null)) {
            tickUntilLeader(a);
            Instance.Claim c1 = a.claimFire("rec", t, 2);
            assertNotNull(c1);
            assertEquals(1, c1.attempt());
            assertEquals(2, c1.maxAttempts());
            assertFalse(c1.recovering());
            assertEquals(a.term(), c1.term());
            assertNull(a.claimFire("rec", t, 2));
            assertFalse(a.lastClaimPaused());
            assertTrue(b.offers().isEmpty()); // b learns offers from now on
            // a stops ticking, as if killed: b takes over and is offered the fire
            tickUntilLeader(b);
            List<Instance.Offer> offers = b.offers();
            assertEquals(1, offers.size(), offers.toString());
            assertEquals("rec", offers.get(0).job());
            assertEquals(t, offers.get(0).fireMs());
            Instance.Claim c2 = b.claimFire("rec", t, 2);
            assertNotNull(c2);
            assertEquals(2, c2.attempt());
            assertTrue(c2.recovering());
            assertEquals(b.term(), c2.term());
            assertThrows(LeaderException.class, () -> a.finishFire(c1, 0));
            b.finishFire(c2, 0);
            b.pauseJob("p", true);
            assertNull(b.claimFire("p", t, 1));
            assertTrue(b.lastClaimPaused());
            b.pauseJob("p", false);
            long key = b.triggerJob("p");
            assertTrue(key < 0);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (b.offers().stream().noneMatch(o -> o.fireMs() == key)) {
                assertTrue(System.nanoTime() < deadline, "the run-now was never offered");
                b.tick();
                Thread.sleep(100);
            }
            Instance.Claim c3 = b.claimFire("p", key, 1);
            assertNotNull(c3);
            assertTrue(c3.triggered());
            b.finishFire(c3, 0);
        }
    }

    @Test
    void alwaysLeaderPlugin() throws Exception {
        Plugin p = new Plugin(TestEnv.alwaysLeaderSo());
        assertEquals(1, p.abiMajor());
        List<Boolean> changes = new ArrayList<>();
        try (Instance i = p.init("", new Instance.Callbacks() {
            @Override
            public void onChange(boolean isLeader, long term, String leaderId) {
                changes.add(isLeader);
            }
        })) {
            assertTrue(i.tick().leader());
            assertTrue(i.isLeader());
            assertTrue(i.term() != 0);
            assertEquals(0, i.shards());
        }
        assertThrows(LeaderException.class, () -> {
            Instance i = p.init("", null);
            i.shutdown();
            i.tick();
        });
    }

    /** docs/plugin-discovery-vectors.txt through Leader.resolvePlugin. */
    @Test
    void pluginDiscoveryVectors() throws Exception {
        java.nio.file.Path file = java.nio.file.Path.of(TestEnv.env("OL_JAVA_SRCDIR"), "docs",
                "plugin-discovery-vectors.txt");
        int n = 0;
        for (String raw : java.nio.file.Files.readAllLines(file)) {
            if (raw.isBlank() || raw.startsWith("#"))
                continue;
            String[] c = raw.split("\\|");
            for (int i = 0; i < c.length; i++)
                c[i] = c[i].trim();
            String given = c[0].equals("-") ? null : c[0];
            String env = c[1].equals("-") ? null : c[1];
            String pc = c[2].equals("-") ? null : c[2];
            java.util.Set<String> present = c[3].equals("-") ? java.util.Set.of()
                    : java.util.Set.of(c[3].split(","));
            boolean[] asked = {false};
            java.util.function.Supplier<String> pkglibdir = () -> {
                asked[0] = true;
                return pc;
            };
            if (!c[4].startsWith("error ")) {
                assertEquals(c[4], Leader.resolvePlugin(given, env, pkglibdir, present::contains), raw);
            } else {
                String[] want = c[4].split("\\s+");
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> Leader.resolvePlugin(given, env, pkglibdir, present::contains), raw);
                for (int i = 2; i < want.length; i++)
                    assertTrue(e.getMessage().contains(want[i]), raw + ": " + e.getMessage());
                assertEquals(want[1].equals("env") || want[1].equals("none"),
                        e.getMessage().contains("$ODBC_LEADER_PLUGIN"), e.getMessage());
                assertEquals(want[1].equals("none"), asked[0], raw);
            }
            n++;
        }
        assertTrue(n >= 15, "rows " + n);
    }

    /** docs/catch-up-vectors.txt: the same answers in C and every binding. */
    @Test
    void catchUpVectors() throws Exception {
        java.nio.file.Path file = java.nio.file.Path.of(TestEnv.env("OL_JAVA_SRCDIR"), "docs",
                "catch-up-vectors.txt");
        Plugin p = new Plugin(TestEnv.odbcLeaderSo());
        int n = 0;
        for (String raw : java.nio.file.Files.readAllLines(file)) {
            String line = raw.trim();
            if (line.isEmpty() || line.startsWith("#"))
                continue;
            String[] f = line.split("\\s+");
            if (f[7].equals("EINVAL"))
                assertThrows(LeaderException.class, () -> select(p, f), line);
            else
                org.junit.jupiter.api.Assertions.assertArrayEquals(longs(f[7]), select(p, f), line);
            n++;
        }
        assertTrue(n >= 30);
    }

    /** The plugin's answer to the vector f (its fields). */
    private static long[] select(Plugin p, String[] f) throws LeaderException {
        return p.catchUpSelect(f[0], Long.parseLong(f[1]), Long.parseLong(f[2]),
                Long.parseLong(f[3]), longs(f[5]), f[4].equals("present"));
    }

    /** A vector's comma-separated times ("-": none). */
    private static long[] longs(String text) {
        if (text.equals("-"))
            return new long[0];
        return java.util.Arrays.stream(text.split(",")).mapToLong(Long::parseLong).toArray();
    }

    /** The tests' own shard oracle: FNV-1a 64 of key's UTF-8 bytes modulo shards (docs/abi.md). */
    static int fnv1aShard(String key, int shards) {
        long h = 0xcbf29ce484222325L;
        for (byte b : key.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        return (int) Long.remainderUnsigned(h, shards);
    }

    /** docs/abi.md's vectors, asked of the plugin through a group of each shard count. */
    @Test
    void shardOfIsThePlugins() throws Exception {
        Plugin p = new Plugin(TestEnv.odbcLeaderSo());
        String conn = TestEnv.sqlite();
        Object[][] vectors = {{64, "backup", 63}, {64, "nightly-report", 43}, {1000, "job:42", 480},
                {1000, "", 37}, {16384, "caf\u00e9", 3465}};
        for (Object[] v : vectors) {
            int shards = (Integer) v[0];
            try (Instance g = p.init(conn + ";LeaderNamespace=v" + shards + ";LeaderShards=" + shards, null)) {
                assertEquals(v[2], g.shardOf((String) v[1]), v[1] + " of " + shards);
                assertEquals(v[2], fnv1aShard((String) v[1], shards));
            }
        }
        try (Instance single = p.init(conn + ";LeaderNamespace=single", null)) {
            assertEquals(0, single.shardOf("backup"));
        }
    }

    @Test
    void groupMemberAndShardHash() throws Exception {
        String conn = TestEnv.sqlite();
        try (Leader g = Leader.builder().connect(conn).namespace("grp").ttlMs(2000).shards(4)
                .plugin(TestEnv.odbcLeaderSo()).extra(TestEnv.FAST).log((l, m) -> { }).build()) {
            g.start();
            assertEquals(4, g.shards());
            long deadline = System.currentTimeMillis() + 10_000;
            while (!g.leads("j") && System.currentTimeMillis() < deadline)
                Thread.sleep(50);
            assertTrue(g.leads("j"));
            assertEquals(g.instance().shardLeadership(g.shardOf("j")).term(), g.termOf("j"));
            Fire f = g.claim("j", System.currentTimeMillis());
            assertNotNull(f);
            assertEquals(g.termOf("j"), f.term());
        }
    }

    @Test
    void leaderFenceFromThePlugin() throws Exception {
        String want = Fence.fromCommand("sqlite", "x", null, TestEnv.odbcLeader()).predicate();
        String conn = TestEnv.sqlite();
        try (Leader a = leader(conn, "fence", "fa");
                Leader g = Leader.builder().connect(conn).namespace("fenceg").ttlMs(2000).shards(4)
                        .plugin(TestEnv.odbcLeaderSo()).extra(TestEnv.FAST).log((l, m) -> { }).build()) {
            assertThrows(LeaderException.class, () -> a.fence(null));
            a.start();
            g.start();
            Fence f = a.fence(null);
            assertEquals(want, f.predicate());
            assertEquals(List.of("fence", 9L), f.params(9));
            assertEquals(List.of("fenceg/" + fnv1aShard("backup", 4), 9L), g.fence("backup").params(9));
            assertThrows(IllegalStateException.class, () -> g.fence(null));
        }
    }

    @Test
    void fenceClauseAndParameters() throws Exception {
        Fence f = Fence.fromCommand("sqlite", "ns", null, TestEnv.odbcLeader());
        assertTrue(f.predicate().contains("odbc_leader_lease"));
        String sql = f.sql("UPDATE t SET v = ? WHERE k = ?;");
        assertTrue(sql.startsWith("UPDATE t SET v = ? WHERE k = ? AND EXISTS (SELECT"), sql);
        List<Object> bound = new ArrayList<>();
        PreparedStatement ps = (PreparedStatement) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {PreparedStatement.class}, (proxy, m, args) -> {
                    if (m.getName().startsWith("set")) {
                        bound.add(args[0]);
                        bound.add(args[1]);
                    }
                    return null;
                });
        assertEquals(5, f.bind(ps, 3, 42L));
        assertEquals(List.of(3, "ns", 4, 42L), bound);
        assertEquals(List.of("ns", 7L), f.params(7));
        assertThrows(IllegalArgumentException.class, () -> new Fence("SELECT 1 WHERE a = ?", "ns"));
    }

    @Test
    void builderValidatesArguments() {
        assertThrows(IllegalArgumentException.class, () -> Leader.builder().build());
        assertThrows(IllegalArgumentException.class, () -> Leader.builder().ttlMs(0));
        assertThrows(IllegalArgumentException.class,
                () -> Leader.builder().connect("DSN=x").plugin("/nonexistent.so").build());
        assertEquals("DSN=x;LeaderNamespace=n;LeaderTTL=5;LeaderShards=2;LeaderId=i",
                Leader.configString("DSN=x;", "n", 5L, 2, ";LeaderId=i;"));
    }
}
