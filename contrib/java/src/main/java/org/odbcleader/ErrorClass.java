// SPDX-License-Identifier: MIT
// ErrorClass.java: what a host should do about a plugin error, as the
// plugin's error_class() and last_error() say (LEADER_PLUGIN_CLASS_* in
// plugin/leader_plugin.h, ABI 1.2).
package org.odbcleader;

/** The class of a plugin error: what to do about it. */
public enum ErrorClass {
    /** Keep ticking: the database is down, failing over or busy; the plugin reconnects. */
    TRANSIENT,
    /** Ticking cannot help until someone fixes a setting, the schema, a grant or a password. */
    CONFIG,
    /** A bug in the host or the plugin, or resource exhaustion: alert a developer. */
    FATAL;

    /**
     * Returns the class of a LEADER_PLUGIN_CLASS_* value (1, 2, 3), or null for 0 or an
     * unknown value.
     */
    public static ErrorClass of(int value) {
        switch (value) {
        case 1:
            return TRANSIENT;
        case 2:
            return CONFIG;
        case 3:
            return FATAL;
        default:
            return null;
        }
    }
}
