// SPDX-License-Identifier: MIT
// Fence.java: fenced writes in a job's own SQL over JDBC (docs/fencing.md).
// A leader that was paused may write after another host took over; the
// fence moves the check into the write: the statement applies only while the
// fire's term still holds, by the database's clock. The predicate is the
// dialect's; it needs the lease table in the database the job writes to.
// Leader.fence builds one from the plugin (no odbc-leader command needed);
// Fence.fromCommand asks `odbc-leader fence --bare`, for a process without
// a Leader.
package org.odbcleader;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The fence of a namespace: a predicate (the SELECT inside EXISTS ( ... ), with two
 * {@code ?} parameters: namespace, then term) and the namespace it binds.
 */
public final class Fence {
    private final String predicate;
    private final String namespace;

    /**
     * predicate: the SELECT with exactly two {@code ?} placeholders (namespace, term);
     * namespace: the election namespace (in a group "NAMESPACE/SHARD", see {@link #forFire}).
     */
    public Fence(String predicate, String namespace) {
        Objects.requireNonNull(predicate, "predicate");
        Objects.requireNonNull(namespace, "namespace");
        long n = predicate.chars().filter(c -> c == '?').count();
        if (n != 2)
            throw new IllegalArgumentException(
                    "a fence predicate has two ? placeholders (namespace, term); got " + n);
        this.predicate = predicate.trim();
        this.namespace = namespace;
    }

    /**
     * Returns the fence of dialect (sqlite, postgresql, mariadb or a dialect file) for
     * namespace, as `odbcLeader fence --bare --dialect DIALECT [--prefix PREFIX]` prints
     * it. odbcLeader is the command (null: "odbc-leader" on the PATH); prefix may be null.
     *
     * @throws IOException with the command's message when it fails
     */
    public static Fence fromCommand(String dialect, String namespace, String prefix, String odbcLeader)
            throws IOException {
        List<String> cmd = new ArrayList<>(List.of(odbcLeader != null ? odbcLeader : "odbc-leader",
                "fence", "--bare", "--dialect", Objects.requireNonNull(dialect, "dialect")));
        if (prefix != null)
            cmd.addAll(List.of("--prefix", prefix));
        Process p = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.PIPE).start();
        p.getOutputStream().close();
        String out;
        String err;
        try (InputStream o = p.getInputStream(); InputStream e = p.getErrorStream()) {
            out = new String(o.readAllBytes(), StandardCharsets.UTF_8);
            err = new String(e.readAllBytes(), StandardCharsets.UTF_8).trim();
        }
        try {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(cmd.get(0) + " fence timed out");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        if (p.exitValue() != 0)
            throw new IOException(cmd.get(0) + " fence failed: " + err);
        return new Fence(out, namespace);
    }

    /** Returns " AND EXISTS (predicate)", to append to a statement's WHERE clause. */
    public String clause() {
        return " AND EXISTS (" + predicate + ")";
    }

    /** Returns sql (ending in its WHERE clause, no trailing ';') with the fence appended. */
    public String sql(String sql) {
        return sql.trim().replaceAll(";$", "") + clause();
    }

    /**
     * Binds the fence's two parameters (namespace, term) at index and index + 1 of ps.
     * Returns the index after them.
     */
    public int bind(PreparedStatement ps, int index, long term) throws SQLException {
        ps.setString(index, namespace);
        ps.setLong(index + 1, term);
        return index + 2;
    }

    /**
     * Returns a PreparedStatement of sql (an UPDATE or DELETE whose WHERE clause ends the
     * statement, or an INSERT ... SELECT ... WHERE) with the fence appended and bound after
     * the statement's own params (bound first, from index 1). The caller owns and closes it;
     * executeUpdate() answering 0 means the term no longer holds (or no row matched).
     */
    public PreparedStatement prepare(Connection c, String sql, long term, Object... params) throws SQLException {
        PreparedStatement ps = c.prepareStatement(sql(sql));
        try {
            int i = 1;
            for (Object p : params)
                ps.setObject(i++, p);
            bind(ps, i, term);
            return ps;
        } catch (SQLException | RuntimeException e) {
            ps.close();
            throw e;
        }
    }

    /** Returns the predicate's parameters for a term: [namespace, term]. */
    public List<Object> params(long term) {
        return List.of(namespace, term);
    }

    /**
     * Returns the fence of a fire's namespace: this one, or in a group of leader's,
     * "namespace/shard" of the fire's job.
     */
    public Fence forFire(Leader leader, Fire fire) {
        if (leader.shards() == 0)
            return this;
        return new Fence(predicate, namespace + "/" + leader.shardOf(fire.job()));
    }

    /** Returns the predicate. */
    public String predicate() {
        return predicate;
    }

    /** Returns the namespace the fence binds. */
    public String namespace() {
        return namespace;
    }
}
