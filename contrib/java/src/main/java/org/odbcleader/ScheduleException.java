// SPDX-License-Identifier: MIT
// ScheduleException.java: a claim computed by another schedule than the one
// its job's fires are recorded under (LEADER_PLUGIN_ESCHEDULE,
// docs/schedules.md): do not run the fire.
package org.odbcleader;

/**
 * A claim computed by another schedule (time zone, expression or engine) than the one its
 * job's fires are recorded under (ESCHEDULE): the message names both, and the
 * {@code odbc-leader jobs reschedule} that changes the job's.
 */
public class ScheduleException extends LeaderException {
    private static final long serialVersionUID = 1L;

    /** See {@link LeaderException#LeaderException(int, String, ErrorClass, String, long, String)}. */
    public ScheduleException(int code, String message, ErrorClass errorClass, String sqlstate,
                             long nativeCode, String strerror) {
        super(code, message, errorClass, sqlstate, nativeCode, strerror);
    }
}
