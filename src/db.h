/* SPDX-License-Identifier: MIT */
/*
 * db.h: the ODBC port, the adapter between the library's core and a
 * database: one connection per handle, the dialect's statements prepared
 * once per connection, error classification (db.c, db_connect.c). Its
 * operations are declared by what they serve: db_lease.h (the lease, the
 * elector's port), db_ledger.h (fires and the election log) and
 * db_group.h (sharded groups). db_internal.h holds its insides.
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_DB_H
#define ODBC_LEADER_DB_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "dialect.h"
#include "log.h"

struct odbc_leader__db;

/*
 * Allocates a port. cfg, id and log are borrowed and must outlive it.
 * Returns 0 or ODBC_LEADER_ENOMEM. Nothing is connected yet.
 */
int odbc_leader__db_create(struct odbc_leader__db **out,
                           const struct odbc_leader__config *cfg,
                           const char *id, const struct odbc_leader__log *log);

/* Disconnects and frees; NULL is a no-op. */
void odbc_leader__db_destroy(struct odbc_leader__db *db);

/*
 * Connects with cfg's connection string (no Leader* keys), reads the
 * driver's SQL_DBMS_NAME into name (n bytes; what LeaderDialect=auto goes
 * by) and disconnects, for tools that need the dialect without a handle.
 * cfg is borrowed. Returns 0, or ODBC_LEADER_ECONNECT or ENOMEM with a
 * message in err that names the database by its redacted connection
 * string.
 */
int odbc_leader__db_dbms_name(const struct odbc_leader__config *cfg, char *name,
                              size_t n, char *err, size_t errlen);

/*
 * Connects, picks the dialect (first time only), runs on_connect, checks
 * or creates the schema and prepares the statements. No-op when connected.
 * Returns 0 or a negative error with a message in err (when non-NULL).
 */
int odbc_leader__db_connect(struct odbc_leader__db *db, char *err,
                            size_t errlen);

/* Frees every statement and the connection. Safe when disconnected. */
void odbc_leader__db_disconnect(struct odbc_leader__db *db);

/* The configuration db was created with; borrowed. */
const struct odbc_leader__config *
odbc_leader__db_config(const struct odbc_leader__db *db);

/* The log db writes to; borrowed. */
const struct odbc_leader__log *
odbc_leader__db_log(const struct odbc_leader__db *db);

/* The dialect in use after the first connect, else NULL; borrowed. */
const struct odbc_leader__dialect *
odbc_leader__db_dialect(const struct odbc_leader__db *db);

/* Sets :ns for the statements that follow (a group's name, or one of its
 * shards' namespaces for claim and finish); ns is copied. */
void odbc_leader__db_set_ns(struct odbc_leader__db *db, const char *ns);

/* Called for each row of a statement's result; stmt is opaque and valid
 * for the call (read it with odbc_leader__db_col_*()). Returns 0 or a
 * negative error, which stops the fetch. */
typedef int (*odbc_leader__db_row_fn)(void *ctx, void *stmt);

/* Column col (1-based) of a row as a 64-bit integer (0 for NULL) or as
 * text ("" for NULL). Return 0 or ODBC_LEADER_EDB. */
int odbc_leader__db_col_int(void *stmt, int col, int64_t *v);
int odbc_leader__db_col_text(void *stmt, int col, char *buf, size_t len);

/* The first diagnostic record of the port's last driver failure. */
struct odbc_leader__diag {
    char sqlstate[6]; /* "" when none since the last clear */
    long native;
    char message[512];
    int errclass; /* enum odbc_leader__errclass of the whole failure */
};

/* Copies the last failure's diagnostic into *out (the caller's). */
void odbc_leader__db_diag(const struct odbc_leader__db *db,
                          struct odbc_leader__diag *out);

/* Forgets the last failure's diagnostic, so that a call that fails
 * without the driver is not given an older call's SQLSTATE. */
void odbc_leader__db_clear_diag(struct odbc_leader__db *db);

/* Counts for tests: unique-key violations seen, and retries made. */
struct odbc_leader__db_stats {
    unsigned long unique_violations;
    unsigned long retries;
    unsigned long connects;
};
#ifdef ODBC_LEADER_TEST_HOOKS
/* Copies db's counts into *out (test hooks only: a build configured
 * without --enable-test-hooks has no such function). Borrows db. */
void odbc_leader__db_stats(const struct odbc_leader__db *db,
                           struct odbc_leader__db_stats *out);
#endif

#endif /* ODBC_LEADER_DB_H */
