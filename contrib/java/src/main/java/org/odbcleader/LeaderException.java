// SPDX-License-Identifier: MIT
// LeaderException.java: the error of a plugin call. It carries the plugin's
// negative code, the class the plugin gives it (TRANSIENT keep going, CONFIG
// alert an operator, FATAL alert a developer) and, when the driver failed,
// its SQLSTATE, native code and message (never a password).
package org.odbcleader;

/** A plugin call failed; see {@link #code()}, {@link #errorClass()}, {@link #sqlstate()}. */
public class LeaderException extends Exception {
    private static final long serialVersionUID = 1L;

    /** LEADER_PLUGIN_EABI: the plugin refused the host's ABI or lacks a member. */
    public static final int EABI = -1000;
    /** LEADER_PLUGIN_ENOTLEADER: a claim by an instance that does not lead. */
    public static final int ENOTLEADER = -1001;
    /**
     * LEADER_PLUGIN_ESCHEDULE (ABI 1.6): a claim computed by another schedule than the one its
     * job's fires are recorded under (docs/schedules.md).
     */
    public static final int ESCHEDULE = -1002;

    private final int code;
    private final transient ErrorClass errorClass;
    private final String sqlstate;
    private final long nativeCode;
    private final String strerror;

    /**
     * code: the plugin's negative code; message: the most precise text there is;
     * errorClass: may be null (a plugin older than ABI 1.2); sqlstate: "" when the error
     * did not come from the driver; strerror: the plugin's static message for code.
     */
    public LeaderException(int code, String message, ErrorClass errorClass, String sqlstate,
                           long nativeCode, String strerror) {
        super(message);
        this.code = code;
        this.errorClass = errorClass;
        this.sqlstate = sqlstate == null ? "" : sqlstate;
        this.nativeCode = nativeCode;
        this.strerror = strerror == null ? message : strerror;
    }

    /** An error of code with message only (no class, no SQLSTATE). */
    public LeaderException(int code, String message) {
        this(code, message, null, "", 0, message);
    }

    /** Returns the plugin's negative code (LEADER_PLUGIN_EABI, ENOTLEADER or its own). */
    public int code() {
        return code;
    }

    /** Returns the class the plugin gives the error, or null when it does not say (ABI &lt; 1.2). */
    public ErrorClass errorClass() {
        return errorClass;
    }

    /** Returns the driver's SQLSTATE, "" when the error did not come from the driver. */
    public String sqlstate() {
        return sqlstate;
    }

    /** Returns the driver's native error code, 0 when none. */
    public long nativeCode() {
        return nativeCode;
    }

    /** Returns the plugin's static message for {@link #code()}. */
    public String strerror() {
        return strerror;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(getClass().getName()).append(": ").append(getMessage());
        b.append(" (code ").append(code);
        if (errorClass != null)
            b.append(", ").append(errorClass);
        if (!sqlstate.isEmpty())
            b.append(", SQLSTATE ").append(sqlstate);
        return b.append(')').toString();
    }
}
