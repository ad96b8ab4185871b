// SPDX-License-Identifier: MIT
// TestEnv.java: what the Java tests share: the built plugins and command
// (tests/contrib/java.test sets OL_JAVA_PLUGINS, OL_JAVA_ODBC_LEADER and
// OL_JAVA_TMP), fresh SQLite files and the fire ledger as the command lists it.
package org.odbcleader;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Paths and helpers of the tests. */
public final class TestEnv {
    private static final AtomicInteger SEQ = new AtomicInteger();

    private TestEnv() {
    }

    /** Returns $name or fails the test run naming it. */
    static String env(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty())
            throw new IllegalStateException("$" + name + " is not set (run tests/contrib/java.test)");
        return v;
    }

    /** Returns the built odbc_leader.so. */
    public static String odbcLeaderSo() {
        return new File(env("OL_JAVA_PLUGINS"), "odbc_leader.so").getPath();
    }

    /** Returns the built always_leader.so. */
    public static String alwaysLeaderSo() {
        return new File(env("OL_JAVA_PLUGINS"), "always_leader.so").getPath();
    }

    /** Returns the built odbc-leader command. */
    public static String odbcLeader() {
        return env("OL_JAVA_ODBC_LEADER");
    }

    /** Returns the connection string of a new SQLite file in the test's temp dir. */
    public static String sqlite() {
        File f = new File(env("OL_JAVA_TMP"), "java-" + ProcessHandle.current().pid() + "-"
                + SEQ.incrementAndGet() + ".db");
        return "Driver=SQLite3;Database=" + f.getPath();
    }

    /** Returns the database file of a connection string of {@link #sqlite()}. */
    public static String dbFile(String connect) {
        return connect.substring(connect.indexOf("Database=") + "Database=".length());
    }

    /** Runs a command; returns its stdout; throws with its stderr when it fails. */
    public static String run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.PIPE).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0)
            throw new IOException(String.join(" ", cmd) + " failed: " + err);
        return out;
    }

    /** One row of the fire ledger. */
    public record Row(String job, long fireMs, long term, String claimedBy, Integer status) {
    }

    private static final Pattern ROW = Pattern.compile("\\{\"job\":\"([^\"]*)\",\"fire_ms\":(-?\\d+),"
            + "\"term\":(-?\\d+),\"claimed_by\":\"([^\"]*)\".*\"status\":(null|-?\\d+)");

    /** Returns the ledger of namespace (odbc-leader fires --json --limit 0). */
    public static List<Row> ledger(String connect, String namespace) throws IOException, InterruptedException {
        String out = run(odbcLeader(), "fires", "-C", connect, "-n", namespace, "--json", "--limit", "0");
        List<Row> rows = new ArrayList<>();
        for (String line : out.split("\n")) {
            if (line.isBlank())
                continue;
            Matcher m = ROW.matcher(line);
            if (!m.find())
                throw new IOException("unexpected ledger line " + line);
            rows.add(new Row(m.group(1), Long.parseLong(m.group(2)), Long.parseLong(m.group(3)), m.group(4),
                    m.group(5).equals("null") ? null : Integer.valueOf(m.group(5))));
        }
        return rows;
    }

    /** The fast-failover keys the tests add to a connection string. */
    public static final String FAST = "LeaderRenewInterval=250;LeaderSafetyMargin=150";
}
