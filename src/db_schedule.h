/* SPDX-License-Identifier: MIT */
/*
 * db_schedule.h: schedule identities in the ODBC port (db_schedule.c,
 * docs/schedules.md): the check a claim makes first, an operator's
 * reschedule, and the list.
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_DB_SCHEDULE_H
#define ODBC_LEADER_DB_SCHEDULE_H

#include "db.h"
#include "odbc_leader.h"

/* 1 when the dialect has the statements of schedule identities. */
int odbc_leader__db_has_schedules(const struct odbc_leader__db *db);

/*
 * Before a claim of job computed by identity, in the port's namespace:
 * records identity as the job's when it has none (the first claim), and
 * compares. Returns 0 when they are the same; ODBC_LEADER_ESCHEDULE when
 * they differ (the refusal counted in the job's row; the message, naming
 * both, logged and in the port's diagnostic); or another negative error.
 * A dialect without the statements (a site's file of an older schema)
 * checks nothing: 0, with a warning the first time.
 * Borrows job and identity.
 */
int odbc_leader__db_schedule_check(struct odbc_leader__db *db, const char *job,
                                   const char *identity);

/* Sets job's identity to identity (NULL: none), as an operator asks.
 * Returns 0, ODBC_LEADER_ENOLIFECYCLE or a negative error. Borrows. */
int odbc_leader__db_reschedule(struct odbc_leader__db *db, const char *job,
                               const char *identity);

/* Calls fn(ctx, s) for each job of the namespace with an identity or
 * refusals. Returns how many, ODBC_LEADER_ENOLIFECYCLE or a negative
 * error. */
int odbc_leader__db_schedules(struct odbc_leader__db *db,
                              odbc_leader_schedule_fn fn, void *ctx);

#endif /* ODBC_LEADER_DB_SCHEDULE_H */
