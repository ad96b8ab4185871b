// SPDX-License-Identifier: MIT
// FencePgTest.java: the fence helper on a real PostgreSQL through JDBC
// (Debian's PostgreSQL JDBC driver), its predicate from the leader's plugin
// (Leader.fence). OL_JAVA_PG_CONNECT is the server's ODBC
// connection string, OL_JAVA_PG_JDBC its JDBC URL; without them the tests
// are skipped (tests/contrib/java-pg.test sets them and requires both to run).
package org.odbcleader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FencePgTest {
    private static final String CONNECT = System.getenv("OL_JAVA_PG_CONNECT");
    private static final String JDBC = System.getenv("OL_JAVA_PG_JDBC");

    /** Returns the rows the fenced INSERT wrote (1 applied, 0 fenced out). */
    private static int write(Connection c, Fence f, int k, long term) throws SQLException {
        try (PreparedStatement ps = f.prepare(c, "INSERT INTO fenced (k, term) SELECT ?, ? WHERE TRUE", term, k,
                term)) {
            return ps.executeUpdate();
        }
    }

    private static Leader leader(String ns) throws LeaderException {
        return Leader.builder().connect(CONNECT + ";" + TestEnv.FAST).namespace(ns).ttlMs(2000)
                .plugin(TestEnv.odbcLeaderSo()).build().start();
    }

    @Test
    void aFencedWriteAppliesInTheCurrentTermOnly() throws Exception {
        assumeTrue(CONNECT != null && JDBC != null, "no PostgreSQL given (OL_JAVA_PG_CONNECT)");
        String ns = "fence-java";
        Fence f;
        try (Connection c = DriverManager.getConnection(JDBC)) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE fenced (k INT PRIMARY KEY, term BIGINT)");
            }
            long fireMs = System.currentTimeMillis() / 1000 * 1000;
            long oldTerm;
            try (Leader a = leader(ns)) {
                assertTrue(a.isLeader(), "the first candidate leads");
                f = a.fence(null); // the plugin's predicate: no odbc-leader needed
                Integer r = a.runFire("report", fireMs, fire -> write(c, f, 1, fire.term()));
                assertNotNull(r, "the leader claims its fire");
                assertEquals(1, r, "the leader's write applies");
                oldTerm = a.term();
            } // close() resigns: the term is over
            assertEquals(0, write(c, f, 2, oldTerm), "a write of an ended term is fenced out");
            try (Leader b = leader(ns)) {
                assertTrue(b.term() > oldTerm, "the next leader has a greater term");
                assertEquals(0, write(c, f, 3, oldTerm), "the old term stays fenced out");
                assertEquals(1, write(c, f, 4, b.term()), "the new leader's write applies");
            }
            List<Integer> ks = new ArrayList<>();
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT k FROM fenced ORDER BY k")) {
                while (rs.next())
                    ks.add(rs.getInt(1));
            }
            assertEquals(List.of(1, 4), ks);
        }
    }
}
