/* SPDX-License-Identifier: MIT */
/*
 * error.h: the class of an error refined by the driver's SQLSTATE
 * (error.c), for odbc_leader_last_error(). Internal.
 */
#ifndef ODBC_LEADER_ERROR_H
#define ODBC_LEADER_ERROR_H

/* Returns odbc_leader_error_class(rc), overridden by the class of sqlstate
 * (borrowed; NULL or "" when the error did not come from the driver) when
 * that class says more: 08, 40, 53, 57 and HYT0x are transient; 28, 42,
 * 3D, 3F and IM are configuration. */
int odbc_leader__error_class_refined(int rc, const char *sqlstate);

#endif /* ODBC_LEADER_ERROR_H */
