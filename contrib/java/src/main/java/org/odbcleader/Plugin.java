// SPDX-License-Identifier: MIT
// Plugin.java: the JNA binding of the scheduler-plugin ABI
// (plugin/leader_plugin.h). A Plugin is a loaded .so and its function table,
// read member by member: a member of a later minor than 1.0 is used only
// when the table's struct_size covers it and it is set (LEADER_PLUGIN_HAS).
// Instances are made by init() (see Instance). A library is never unloaded.
package org.odbcleader;

import com.sun.jna.Function;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** A loaded plugin (odbc_leader.so or any plugin of ABI 1.x) and its function table. */
public final class Plugin {
    /** LEADER_PLUGIN_ABI_MAJOR: the major this binding speaks. */
    public static final int ABI_MAJOR = 1;
    /** LEADER_PLUGIN_ABI_MINOR: the minor this binding knows (1.8: the first-pass rule). */
    public static final int ABI_MINOR = 8;
    /** LEADER_PLUGIN_RESIGN_REQUESTED: tick's answer when asked to resign. */
    public static final int RESIGN_REQUESTED = 2;

    /** The members of struct leader_plugin after abi_major/abi_minor, in order: all pointers. */
    private static final List<String> MEMBERS = List.of("name", "version", "init", "tick",
            "is_leader", "shutdown", "term", "strerror", // 1.0
            "claim", "finish", "leadership", // 1.1
            "candidate_id", "error_class", "last_error", // 1.2
            "shards", "shard_of", "shard_leadership", // 1.3
            "claim_fire", "finish_fire", "offers", "pause_job", "trigger_job", // 1.4
            "fence_sql", // 1.5
            "set_schedule", "local_zone", // 1.6
            "catch_up", "catch_up_select", // 1.7
            "second_pass", "first_pass_next"); // 1.8: laid out only (Quartz needs no rule)
    /** struct_size of a 1.0 table: it ends where claim begins. */
    static final int SIZE_1_0 = offsetOf("claim");

    private final String path;
    private final NativeLibrary library; // held: keeps the library loaded
    private final Pointer table;
    private final int structSize;
    private final int abiMajor;
    private final int abiMinor;
    private final String name;
    private final String version;
    private final Map<String, Function> functions = new ConcurrentHashMap<>();

    /** The offset of member in struct leader_plugin (uint32 + 2 x uint16, then pointers). */
    static int offsetOf(String member) {
        int i = MEMBERS.indexOf(member);
        if (i < 0)
            throw new IllegalArgumentException("struct leader_plugin has no member " + member);
        return 8 + i * Native.POINTER_SIZE;
    }

    /** Loads path and asks its leader_plugin_entry for ABI major 1; see {@link #Plugin(String, int)}. */
    public Plugin(String path) throws LeaderException {
        this(path, ABI_MAJOR);
    }

    /**
     * Loads the plugin at path and calls leader_plugin_entry(abiMajor). abiMajor is a
     * parameter only so that tests can check the refusal of another major: the plugin
     * answers LEADER_PLUGIN_EABI, thrown as a LeaderException of that code.
     *
     * @throws LeaderException (code EABI) when the file cannot be loaded, the major is
     *         refused or the table is smaller than ABI 1.0's
     */
    public Plugin(String path, int abiMajor) throws LeaderException {
        if (path == null || path.isEmpty())
            throw new IllegalArgumentException("Plugin: path is required");
        this.path = path;
        try {
            library = NativeLibrary.getInstance(path);
        } catch (UnsatisfiedLinkError e) {
            throw new LeaderException(LeaderException.EABI, path + ": cannot load: " + e.getMessage());
        }
        Function entry;
        try {
            entry = library.getFunction("leader_plugin_entry");
        } catch (UnsatisfiedLinkError e) {
            throw new LeaderException(LeaderException.EABI, path + ": no leader_plugin_entry: not a plugin");
        }
        PointerByReference out = new PointerByReference();
        int rc = entry.invokeInt(new Object[] {(short) abiMajor, out});
        if (rc != 0 || out.getValue() == null)
            throw new LeaderException(rc != 0 ? rc : LeaderException.EABI,
                    path + ": ABI major " + abiMajor + " refused (" + rc + ")");
        table = out.getValue();
        structSize = table.getInt(0);
        if (structSize < SIZE_1_0)
            throw new LeaderException(LeaderException.EABI,
                    path + ": struct leader_plugin too small (" + structSize + " bytes)");
        this.abiMajor = Short.toUnsignedInt(table.getShort(4));
        abiMinor = Short.toUnsignedInt(table.getShort(6));
        name = cString(table.getPointer(offsetOf("name")));
        version = cString(table.getPointer(offsetOf("version")));
    }

    /** Returns the C string at p decoded as UTF-8, null for NULL. */
    static String cString(Pointer p) {
        return p == null ? null : p.getString(0, StandardCharsets.UTF_8.name());
    }

    /** Returns s as a NUL-terminated UTF-8 array (JNA passes it as a char *). */
    static byte[] cBytes(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        byte[] z = new byte[b.length + 1];
        System.arraycopy(b, 0, z, 0, b.length);
        return z;
    }

    /** Returns the NUL-terminated text at the start of buf. */
    static String bufText(byte[] buf) {
        int n = 0;
        while (n < buf.length && buf[n] != 0)
            n++;
        return new String(buf, 0, n, StandardCharsets.UTF_8);
    }

    /**
     * Returns true when the table has member (a name of struct leader_plugin such as
     * "claim") and it is set: struct_size covers it, as LEADER_PLUGIN_HAS checks in C.
     */
    public boolean has(String member) {
        if (!MEMBERS.contains(member) || member.equals("name") || member.equals("version"))
            return false;
        int off = offsetOf(member);
        if (structSize < off + Native.POINTER_SIZE)
            return false;
        return table.getPointer(off) != null;
    }

    /**
     * Returns the callable member (cached).
     *
     * @throws LeaderException (EABI) naming the plugin's version when it lacks member
     */
    Function fn(String member) throws LeaderException {
        Function f = functions.get(member);
        if (f == null) {
            if (!has(member))
                throw new LeaderException(LeaderException.EABI, path + ": plugin " + name + " (ABI "
                        + abiMajor + "." + abiMinor + ") has no " + member);
            f = Function.getFunction(table.getPointer(offsetOf(member)));
            functions.put(member, f);
        }
        return f;
    }

    /**
     * Returns the IANA name of the host's time zone as the C library computes local time (ABI
     * 1.6): TZ, else /etc/localtime; "UTC" for its aliases.
     *
     * @throws LeaderException EABI for an older plugin, or when the zone has no such name
     */
    public String localZone() throws LeaderException {
        com.sun.jna.Memory buf = new com.sun.jna.Memory(128);
        int rc = fn("local_zone").invokeInt(new Object[] {buf, 128L});
        if (rc < 0)
            throw new LeaderException(rc, "the host's time zone has no IANA name: set TZ");
        return buf.getString(0, "UTF-8");
    }

    /**
     * Returns, of times (ascending; present: the newest is the fire due now), those to claim,
     * oldest first, by the catch-up policy (ABI 1.7, docs/catch-up.md) with the database clock
     * nowMs and the ledger's latest nominal time lastMs given. No I/O.
     *
     * @throws LeaderException EABI for an older plugin, or a policy text or times it refuses
     */
    public long[] catchUpSelect(String policy, long graceMs, long nowMs, long lastMs,
            long[] times, boolean present) throws LeaderException {
        com.sun.jna.Memory arr = int64s(times);
        com.sun.jna.Memory first = new com.sun.jna.Memory(Native.SIZE_T_SIZE);
        int n = fn("catch_up_select").invokeInt(new Object[] {policy, graceMs, present ? 1 : 0,
            nowMs, lastMs, arr, (long) times.length, first});
        if (n < 0)
            throw new LeaderException(n, strerror(n));
        return selected(times, first, n);
    }

    /** times as a C array of int64_t (never empty: C takes a valid pointer). */
    static com.sun.jna.Memory int64s(long[] times) {
        com.sun.jna.Memory arr = new com.sun.jna.Memory(8L * Math.max(times.length, 1));
        arr.write(0, times, 0, times.length);
        return arr;
    }

    /** times[first .. first + n), first read as a size_t. */
    static long[] selected(long[] times, com.sun.jna.Memory first, int n) {
        int from = (int) (Native.SIZE_T_SIZE == 8 ? first.getLong(0) : first.getInt(0));
        return java.util.Arrays.copyOfRange(times, from, from + n);
    }

    /** Returns the plugin's static message for one of its negative codes. */
    public String strerror(int code) {
        try {
            String s = cString(fn("strerror").invokePointer(new Object[] {code}));
            return s == null ? "unknown error" : s;
        } catch (LeaderException e) {
            return "unknown error";
        }
    }

    /** Returns the class the plugin gives a negative code, null before ABI 1.2 or for a non-error. */
    public ErrorClass errorClass(int code) {
        if (!has("error_class"))
            return null;
        try {
            return ErrorClass.of(fn("error_class").invokeInt(new Object[] {code}));
        } catch (LeaderException e) {
            return null;
        }
    }

    /**
     * Returns a new instance of config (the connection string with its Leader* keys),
     * whose callbacks go to listener (may be null) and log (may be null).
     *
     * @throws LeaderException with the plugin's message when init fails
     */
    public Instance init(String config, Instance.Callbacks callbacks) throws LeaderException {
        return new Instance(this, config, callbacks);
    }

    /** Returns the path the plugin was loaded from. */
    public String path() {
        return path;
    }

    /** Returns the table's struct_size as the plugin built it. */
    public int structSize() {
        return structSize;
    }

    /** Returns the plugin's ABI major version. */
    public int abiMajor() {
        return abiMajor;
    }

    /** Returns the plugin's ABI minor version. */
    public int abiMinor() {
        return abiMinor;
    }

    /** Returns the plugin's name. */
    public String name() {
        return name;
    }

    /** Returns the plugin's version. */
    public String version() {
        return version;
    }

    /** Returns the library handle (keeps it loaded while the Plugin is reachable). */
    NativeLibrary library() {
        return library;
    }
}
