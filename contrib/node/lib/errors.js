// SPDX-License-Identifier: MIT
// lib/errors.js: the errors of the binding. A LeaderPluginError carries
// the plugin's negative code, the class the plugin gives it (what to do:
// 'transient' keep going, 'config' alert an operator, 'fatal' alert a
// developer) and, when the driver failed, its SQLSTATE, native code and
// message (never a password).
'use strict';

const CLASSES = { 1: 'transient', 2: 'config', 3: 'fatal' };

/** 'transient', 'config' or 'fatal' for a LEADER_PLUGIN_CLASS_* value;
 * null for 0 or an unknown one. */
function classOf(n) {
    return CLASSES[n] || null;
}

class LeaderPluginError extends Error {
    /**
     * code: the plugin's negative code; message: the most precise text
     * there is; details: { strerror, errorClass, sqlstate, native }.
     */
    constructor(code, message, details = {}) {
        super(message);
        this.name = 'LeaderPluginError';
        this.code = code;
        this.strerror = details.strerror || message;
        this.errorClass = details.errorClass || null;
        this.sqlstate = details.sqlstate || '';
        this.native = details.native || 0;
    }
}

/** A claim by an instance that does not lead (ENOTLEADER): do not run
 * the fire. */
class NotLeaderError extends LeaderPluginError {
    constructor(code, message, details) {
        super(code, message, details);
        this.name = 'NotLeaderError';
    }
}

/** A claim computed by another schedule than the one its job's fires
 * are recorded under (ESCHEDULE, docs/schedules.md): another time zone,
 * expression or engine. Do not run the fire; the message names both
 * schedules and the `odbc-leader jobs reschedule` that changes it. */
class ScheduleError extends LeaderPluginError {
    constructor(code, message, details) {
        super(code, message, details);
        this.name = 'ScheduleError';
    }
}

module.exports = { LeaderPluginError, NotLeaderError, ScheduleError, classOf };
