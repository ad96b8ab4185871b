/* SPDX-License-Identifier: MIT */
/*
 * wakefile.h: the follower wake-up of a dialect with @wake-file (SQLite)
 * through a lock file beside the database file (wakefile.c): a leader
 * holds its namespace's byte exclusively, a waiting follower takes it
 * shared once the leader lets go.
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_WAKEFILE_H
#define ODBC_LEADER_WAKEFILE_H

#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "log.h"

/* One handle's lock file; zeroed, then odbc_leader__wakefile_init(). */
struct odbc_leader__wakefile {
    int fd;    /* DATABASE-odbc-leader-wake, or -1 */
    off_t off; /* the byte of this namespace in it */
    int tried; /* looked for it already (once per handle) */
};

/* Makes w closed and not yet looked for. */
void odbc_leader__wakefile_init(struct odbc_leader__wakefile *w);

/* Opens the lock file beside the database file that cfg's connection
 * string (Database=) or its DSN's odbc.ini section names, once per
 * handle: later calls do nothing. Without it (no file named, no
 * permission) the reason is logged and followers poll. cfg and log are
 * borrowed for the call. */
void odbc_leader__wakefile_open(struct odbc_leader__wakefile *w,
                                const struct odbc_leader__config *cfg,
                                const struct odbc_leader__log *log);

/* 1 when w's file is open. */
int odbc_leader__wakefile_is_open(const struct odbc_leader__wakefile *w);

/* Takes the namespace's byte, exclusively (a leader) or shared (a
 * follower looking whether a leader holds it), trying for up to
 * budget_ms. An open-file-description lock: per handle, and gone with the
 * process. Returns 1 when taken, 0 when the budget ran out, or
 * ODBC_LEADER_EDB. */
int odbc_leader__wakefile_lock(struct odbc_leader__wakefile *w, int exclusive,
                               int64_t budget_ms);

/* Lets go of the namespace's byte (no-op when not held or not open). */
void odbc_leader__wakefile_unlock(struct odbc_leader__wakefile *w);

/* Closes the file; w is closed afterwards. */
void odbc_leader__wakefile_close(struct odbc_leader__wakefile *w);

#endif /* ODBC_LEADER_WAKEFILE_H */
