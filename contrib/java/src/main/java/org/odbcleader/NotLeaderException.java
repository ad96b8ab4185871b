// SPDX-License-Identifier: MIT
// NotLeaderException.java: a claim by an instance that does not lead
// (LEADER_PLUGIN_ENOTLEADER): do not run the fire.
package org.odbcleader;

/** A claim or finish by an instance that does not lead (ENOTLEADER). */
public class NotLeaderException extends LeaderException {
    private static final long serialVersionUID = 1L;

    /** See {@link LeaderException#LeaderException(int, String, ErrorClass, String, long, String)}. */
    public NotLeaderException(int code, String message, ErrorClass errorClass, String sqlstate,
                              long nativeCode, String strerror) {
        super(code, message, errorClass, sqlstate, nativeCode, strerror);
    }
}
