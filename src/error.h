/* SPDX-License-Identifier: MIT */
/*
 * error.h: what the core reads in an error code (error.c): whether it
 * leaves the connection gone, and its class refined by the driver's
 * SQLSTATE, for odbc_leader_last_error(). Internal.
 */
#ifndef ODBC_LEADER_ERROR_H
#define ODBC_LEADER_ERROR_H

/* Returns odbc_leader_error_class(rc), overridden by the class of sqlstate
 * (borrowed; NULL or "" when the error did not come from the driver) when
 * that class says more: 08, 40, 53, 57 and HYT0x are transient; 28, 42,
 * 3D, 3F and IM are configuration. */
int odbc_leader__error_class_refined(int rc, const char *sqlstate);

/* 1 when a call that failed with rc leaves no connection to go on with,
 * so the next call connects again: the connection was lost or could not
 * be made (ECONNLOST, ECONNECT), the outcome is unknown (EUNKNOWN: a kept
 * session could still hold its transaction and, on SQLite, the file's
 * lock), or the server is read-only (EREADONLY: a reconnect may reach the
 * primary). Else 0. */
int odbc_leader__error_drops_connection(int rc);

#endif /* ODBC_LEADER_ERROR_H */
