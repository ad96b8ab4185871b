// SPDX-License-Identifier: MIT
// ConfigTest.java: what the Leader makes of its connection string. No
// password in any printable form of the objects that hold or reach it (the
// Leader and its Builder before, during and after their run, the Quartz
// gate, the exceptions of a refused start), printed the ways a Java program
// prints things: toString, String.valueOf, String.format, concatenation,
// java.util.logging, a stack trace; a Leader shows what names it (namespace,
// plugin, shards, state), nothing of its connection string. And a namespace
// reaches the library as
// one value, whatever it holds (quoted as the library's parser reads it:
// braces, '}' doubled), so it can neither add nor change a key.
package org.odbcleader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;
import java.util.logging.StreamHandler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.odbcleader.quartz.LeaderGate;
import org.quartz.Scheduler;
import org.quartz.impl.StdSchedulerFactory;

@Timeout(60)
class ConfigTest {
    // Two passwords: a braced one with a ';' in it (a form that shows a piece
    // of the connection string cut at ';' would show its second half) and one
    // under a lower-case key.
    private static final String[] SECRETS = {"Sup3r", "S3cr3t", "An0therPw"};

    private static String connect() {
        return connect(TestEnv.sqlite());
    }

    private static String connect(String sqlite) {
        return sqlite + ";UID=ol;PWD={Sup3r;S3cr3t};password = An0therPw";
    }

    /**
     * Fails when shown (a Leader's printed form) holds a piece of the connection string sqlite
     * (TestEnv.sqlite()'s) or the Leader* keys made from it.
     */
    private static void assertNothingOfConnect(String shown, String sqlite) {
        String db = sqlite.substring(sqlite.indexOf("Database=") + "Database=".length());
        for (String part : new String[] {"Driver", "SQLite3", db, "UID", "PWD", "Pwd", "password",
                "LeaderNamespace", "LeaderTTL"})
            assertTrue(!shown.contains(part), "the connection string is shown (" + part + "): " + shown);
    }

    /** Every printable form of o, how -> text. */
    private static Map<String, String> forms(Object o) {
        Map<String, String> out = new LinkedHashMap<>();
        out.put("toString", o.toString());
        out.put("String.valueOf", String.valueOf(o));
        out.put("String.format", String.format("%s", o));
        out.put("concatenation", "leader: " + o);
        out.put("List.toString", List.of(o).toString());
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        StreamHandler h = new StreamHandler(buf, new SimpleFormatter());
        Logger log = Logger.getLogger("org.odbcleader.test.printable");
        log.setUseParentHandlers(false);
        log.addHandler(h);
        try {
            log.log(Level.INFO, "{0}", o);
            if (o instanceof Throwable)
                log.log(Level.WARNING, "failed", (Throwable) o);
        } finally {
            h.flush();
            log.removeHandler(h);
        }
        out.put("java.util.logging", buf.toString(StandardCharsets.UTF_8));
        if (o instanceof Throwable) {
            StringWriter sw = new StringWriter();
            ((Throwable) o).printStackTrace(new PrintWriter(sw));
            out.put("printStackTrace", sw.toString());
            out.put("getMessage", String.valueOf(((Throwable) o).getMessage()));
        }
        return out;
    }

    /** Fails when a printable form of o (named what) holds a password. */
    private static void assertNoPassword(String what, Object o) {
        List<String> leaks = new ArrayList<>();
        for (Map.Entry<String, String> f : forms(o).entrySet()) {
            for (String s : SECRETS) {
                int at = f.getValue().indexOf(s);
                if (at >= 0) {
                    leaks.add("  " + f.getKey() + " shows " + s + ": ..."
                            + f.getValue().substring(Math.max(0, at - 30), Math.min(f.getValue().length(), at + 20))
                            + "...");
                    break;
                }
            }
        }
        if (!leaks.isEmpty())
            fail(what + ": the password is printed\n" + String.join("\n", leaks));
    }

    private static Scheduler scheduler(String name) throws Exception {
        Properties p = new Properties();
        p.setProperty("org.quartz.scheduler.instanceName", name);
        p.setProperty("org.quartz.scheduler.skipUpdateCheck", "true");
        p.setProperty("org.quartz.threadPool.threadCount", "1");
        p.setProperty("org.quartz.jobStore.class", "org.quartz.simpl.RAMJobStore");
        return new StdSchedulerFactory(p).getScheduler();
    }

    @Test
    void leaderAndWhatHoldsItPrintNoPassword() throws Exception {
        List<String> logged = new CopyOnWriteArrayList<>();
        String sqlite = TestEnv.sqlite();
        Leader.Builder b = Leader.builder().connect(connect(sqlite)).namespace("pw").ttlMs(3000)
                .plugin(TestEnv.odbcLeaderSo()).extra("Pwd=An0therPw").log((l, m) -> logged.add(m));
        assertNoPassword("Leader.Builder", b);
        Leader leader = b.build();
        assertNoPassword("Leader (not started)", leader);
        assertNothingOfConnect(leader.toString(), sqlite);
        Scheduler s = scheduler("printable");
        LeaderGate gate = LeaderGate.builder(leader, s).build();
        try {
            leader.start();
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (!leader.isLeader() && System.nanoTime() < deadline)
                Thread.sleep(10);
            assertTrue(leader.isLeader());
            assertNoPassword("Leader (leading)", leader);
            String shown = leader.toString();
            assertNothingOfConnect(shown, sqlite);
            for (String want : new String[] {"namespace=pw", "plugin=" + TestEnv.odbcLeaderSo(),
                    "leader=true"})
                assertTrue(shown.contains(want), want + " not shown: " + shown);
            assertNoPassword("LeaderGate", gate);
        } finally {
            s.shutdown(true);
            gate.close();
            leader.close();
        }
        assertNoPassword("Leader (closed)", leader);
        assertNoPassword("its log lines", logged);
    }

    @Test
    void refusedStartPrintsNoPassword() throws Exception {
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("a bad key", connect() + ";LeaderBogus=1");
        cases.put("no database", "Driver=SQLite3;Database=/nonexistent/dir/x.db;PWD={Sup3r;S3cr3t};Password=An0therPw");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            Leader leader = Leader.builder().connect(c.getValue()).namespace("pw").plugin(TestEnv.odbcLeaderSo())
                    .log((l, m) -> { }).build();
            LeaderException e = assertThrows(LeaderException.class, leader::start);
            assertNoPassword(c.getKey() + ": the exception", e);
            assertNoPassword(c.getKey() + ": the Leader", leader);
            leader.close();
        }
    }

    @Test
    void namespaceIsOneValue() throws Exception {
        // The library refuses these bytes in a namespace; its message names
        // the byte and where it is in the value, so the whole value got
        // there. A namespace cut at the ';' would have set LeaderTTL, one
        // braced on its own would swallow the keys after it, and blanks
        // would be trimmed.
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("a;LeaderTTL=60000", "character ';' at byte 2 ");
        cases.put("{x", "character '{' at byte 1 ");
        cases.put("{a};LeaderTTL=60000", "character '{' at byte 1 ");
        cases.put("a}", "character '}' at byte 2 ");
        cases.put(" ns", "character '\\x20' at byte 1 ");
        cases.put("ns ", "character '\\x20' at byte 3 ");
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, String> c : cases.entrySet()) {
            try (Leader leader = Leader.builder().connect(TestEnv.sqlite()).namespace(c.getKey()).ttlMs(3000)
                    .plugin(TestEnv.odbcLeaderSo()).log((l, m) -> { }).build()) {
                leader.start();
                wrong.add("  \"" + c.getKey() + "\": taken, the Leader started");
            } catch (LeaderException e) {
                if (!e.getMessage().contains("LeaderNamespace: " + c.getValue())
                        || e.errorClass() != ErrorClass.CONFIG)
                    wrong.add("  \"" + c.getKey() + "\": " + e.getMessage());
            }
        }
        if (!wrong.isEmpty())
            fail("namespaces not refused as one value:\n" + String.join("\n", wrong));
    }

    @Test
    void validNamesPassAsTheyAre() throws Exception {
        try (Leader leader = Leader.builder().connect(TestEnv.sqlite()).namespace("a.b-c:d/e@f_1").ttlMs(3000)
                .plugin(TestEnv.odbcLeaderSo()).log((l, m) -> { }).build()) {
            leader.start();
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (!leader.isLeader() && System.nanoTime() < deadline)
                Thread.sleep(10);
            assertTrue(leader.isLeader());
            assertEquals("a.b-c:d/e@f_1", Leader.quote("a.b-c:d/e@f_1"));
            assertTrue(leader.toString().contains("namespace=a.b-c:d/e@f_1"), leader.toString());
        }
    }
}
