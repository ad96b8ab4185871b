/* SPDX-License-Identifier: MIT */
/*
 * db_internal.h: the insides of the ODBC adapter, shared by its files and
 * included by no other: the port's state (struct odbc_leader__db) and the
 * calls one of its files makes into another.
 *
 *   db.c          the executor: diagnostics, transactions, binding, run_op
 *   db_connect.c  connecting: dialect, pooler check, schema, prepare
 *   db_schema.c   creating and upgrading the tables
 *   db_pooler.c   transaction-pooler detection and the connection string
 *   db_lease.c    the lease operations and the elector's port table
 *   db_ledger.c   the fire ledger and the election log
 *   db_group.c    the statements of sharded groups and the member's port
 *   wakefile.c    the follower wake-up through a lock file (SQLite)
 *   probe.c       the pooler check's second connection
 *
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_DB_INTERNAL_H
#define ODBC_LEADER_DB_INTERNAL_H

#include <sql.h>
#include <stddef.h>
#include <sqlext.h>
#include <stdint.h>

#include "config.h"
#include "db.h"
#include "dialect.h"
#include "log.h"
#include "schedule.h"
#include "wakefile.h"

struct odbc_leader__probe;

struct odbc_leader__db {
    const struct odbc_leader__config *cfg; /* borrowed */
    const char *id;                        /* borrowed */
    const struct odbc_leader__log *log;    /* borrowed */
    SQLHENV env;
    SQLHDBC dbc;
    int connected;
    struct odbc_leader__dialect *dialect; /* owned, kept across reconnects */
    char *connect; /* owned: the dialect's @connect-keys in front of the
                      configured string, once the dialect is known; NULL
                      before (the configured string is used) */
    SQLHSTMT stmts[ODBC_LEADER__OP_COUNT]
                  [ODBC_LEADER__MAX_STMTS]; /* prepared */
    char dbms[64];
    char last_error[1024];         /* first diagnostic of the last failure */
    struct odbc_leader__diag diag; /* the same, split, for last_error() */
    int last_timeout; /* the last failure was a client-side timeout (HYT00,
                         HYT01): its outcome is unknown */
    char connect_error[1024]; /* the failed connect logged as a warning
                                 last; "" after a connect succeeded */

    /* transaction pooling (db_pooler.c) */
    int pooled;      /* LeaderPooler=transaction, or a transaction pooler
                        found under auto: every operation is a transaction
                        of its own that starts with the dialect's
                        @pooled-prologue, and nothing is kept in the
                        session */
    int pool_switch; /* found at run time under auto: the next connect
                        switches to it */
    int refused;     /* found although LeaderPooler said none or session:
                        every connect fails with refusal */
    int refusal_logged;
    char refusal[768];
    struct odbc_leader__probe *probe; /* owned: the last check's second
                                         connection (probe.c) */

    /* parameter buffers, bound once per prepared statement */
    SQLCHAR p_ns[ODBC_LEADER__NAME_MAX + 1];
    SQLCHAR p_id[ODBC_LEADER__NAME_MAX + 1];
    SQLCHAR p_to[ODBC_LEADER__NAME_MAX + 1];
    SQLLEN p_to_ind; /* SQL_NTS, or SQL_NULL_DATA for "no handoff" */
    SQLCHAR p_job[ODBC_LEADER__NAME_MAX + 1];
    SQLBIGINT p_term, p_ttl_ms, p_cand_ttl_ms, p_version, p_wait_ms;
    SQLBIGINT p_fire_ms, p_status, p_retention_ms, p_election_retention_ms;
    SQLBIGINT p_seen_term, p_seen_expires_ms; /* attempt's watched row */
    SQLBIGINT p_inc, p_seq, p_shards;         /* sharded groups */
    int64_t upgrade_from;  /* the version upgrade starts from (its @step) */
    const char *p_list[3]; /* borrowed per call: :take, :release, :dead */
    SQLLEN p_list_len[3];
    const char *p_mask[2]; /* borrowed per call: :take_mask, :release_mask */
    SQLLEN p_mask_len[2];
    SQLBIGINT p_dead_inc, p_dead_seq, p_full;
    SQLBIGINT p_max_attempts, p_paused;                /* the fire lifecycle */
    SQLCHAR p_schedule[ODBC_LEADER__SCHEDULE_MAX + 1]; /* an identity */
    SQLLEN p_schedule_ind; /* SQL_NTS, or SQL_NULL_DATA for none */
    int schedules_warned;  /* said once: the dialect checks no schedules */
    int64_t offered;       /* the last renewal's count of offered fires, -1 when
                              it did not say */
    SQLLEN nts;            /* SQL_NTS, the indicator of both strings */
    SQLLEN zero;           /* 0, the indicator of every integer */

    struct odbc_leader__db_stats stats;

    /* @wake-file dialects: the follower wake-up through a lock file */
    struct odbc_leader__wakefile wake;
};

/* ---- db.c: the executor ---- */

/* Allocates the environment and connection and connects with db->connect
 * (else the configured string). Returns 0, or ECONNECT with the driver's
 * first diagnostic in err (logged too) or ENOMEM. */
int odbc_leader__db_open(struct odbc_leader__db *db, char *err, size_t errlen);

/* Prepares every statement of operation op into db->stmts[op]. Returns 0
 * or a negative error with *cls set and the diagnostic in
 * db->last_error. */
int odbc_leader__db_prepare_op(struct odbc_leader__db *db, int op, int *cls);

/*
 * Runs operation op: each statement in order, inside one transaction when
 * there are several (or under transaction pooling), the last one's rows to
 * fn (may be NULL) with ctx. Returns the rows fetched, or the rows
 * affected when there is no result set, or a negative error with *cls
 * set (an enum odbc_leader__errclass) and the diagnostic in
 * db->last_error. A lost connection leaves db disconnected.
 */
int odbc_leader__db_run_op(struct odbc_leader__db *db, int op,
                           odbc_leader__db_row_fn fn, void *ctx, int *cls);

/* Reads column col of a row as a 64-bit integer into *v and *null (1 for
 * NULL, *v then 0). Returns 0 or ODBC_LEADER_EDB. */
int odbc_leader__db_col_int_null(void *stmt, int col, int64_t *v, int *null);

/* One column of a row and the field of a struct it is read into: text
 * (cut to the field, "" for NULL), or an integer field of 4 or 8 bytes (0
 * for NULL). */
struct odbc_leader__db_col {
    int col;     /* 1-based, increasing along a row's list */
    int text;    /* 1: text, 0: integer */
    size_t off;  /* offsetof the field */
    size_t size; /* sizeof the field */
};
#define ODBC_LEADER__DB_NUM(c, type, f)                                        \
    { (c), 0, offsetof(type, f), sizeof(((type *)0)->f) }
#define ODBC_LEADER__DB_TEXT(c, type, f)                                       \
    { (c), 1, offsetof(type, f), sizeof(((type *)0)->f) }

/* Reads the n columns cols of the current row of stmt into the struct at
 * row (the caller's). Returns 0 or ODBC_LEADER_EDB (the fields before the
 * failed one are read). */
int odbc_leader__db_read_row(void *stmt, void *row,
                             const struct odbc_leader__db_col *cols, size_t n);

/* The rows of a result read into one struct by a column table: the
 * context of odbc_leader__db_table_row(). */
struct odbc_leader__db_rows {
    const struct odbc_leader__db_col *cols; /* borrowed */
    size_t ncols;
    void *row; /* the caller's struct of size bytes: the row last read */
    size_t size;
    /* Called with each row (NULL: none); returns 0 or a negative error,
     * which stops the fetch. */
    int (*each)(void *ctx, const void *row);
    void *ctx;
};
#define ODBC_LEADER__DB_ROWS(cols, row, each, ctx)                             \
    {                                                                          \
        (cols), sizeof(cols) / sizeof((cols)[0]), (row), sizeof(*(row)),       \
            (each), (ctx)                                                      \
    }

/* The odbc_leader__db_row_fn of a struct odbc_leader__db_rows (ctx):
 * zeroes its row, reads the columns into it and hands it to each. Returns
 * 0 or a negative error. */
int odbc_leader__db_table_row(void *ctx, void *stmt);

/* Runs operation op with each row read into rows (borrowed; see
 * odbc_leader__db_table_row). Returns as odbc_leader__db_run_op. */
int odbc_leader__db_run_rows(struct odbc_leader__db *db, int op,
                             struct odbc_leader__db_rows *rows);

/* A host's callback of the rows it lists: the one of the public
 * odbc_leader_*_fn that takes the rows' type (none set, or NULL: the rows
 * are dropped), with its ctx. */
struct odbc_leader__db_host {
    odbc_leader_candidate_fn candidate;
    odbc_leader_fire_fn fire;
    odbc_leader_election_fn election;
    odbc_leader_shard_fn shard;
    odbc_leader_job_fn job;
    odbc_leader_schedule_fn schedule;
    void *ctx;
};

/* The each of a struct odbc_leader__db_rows whose ctx is a struct
 * odbc_leader__db_host: hands row (borrowed for the call) to the host's
 * callback. Returns 0. */
int odbc_leader__db_to_host(void *ctx, const void *row);

/* ---- db_connect.c ---- */

/* Loads the dialect LeaderDialect names (or the one for db->dbms), with
 * the texts for transaction pooling when pooled, into *out (the caller
 * owns it). Returns 0 or a negative error with a message in err. */
int odbc_leader__db_load_dialect(const struct odbc_leader__db *db, int pooled,
                                 struct odbc_leader__dialect **out, char *err,
                                 size_t errlen);

/* ---- db_schema.c ---- */

/* Checks the schema version, creating the tables first when they are
 * missing, or upgrading them, when LeaderCreateSchema allows it. Returns
 * 0 or a negative error with a message in err. */
int odbc_leader__db_ensure_schema(struct odbc_leader__db *db, char *err,
                                  size_t errlen);

/* ---- db_pooler.c ---- */

/* Under LeaderPooler=transaction, once the dialect is known: checks that
 * it says how (a @pooled-prologue) and logs what changes. Returns 0 or
 * ECONFIG with a message in err. */
int odbc_leader__db_check_pooled(struct odbc_leader__db *db, char *err,
                                 size_t errlen);

/* Once the dialect is known: when it has @connect-keys, builds the
 * connection string with them in front and connects again with it.
 * Returns 0 or a negative error with a message in err. */
int odbc_leader__db_apply_connect_keys(struct odbc_leader__db *db, char *err,
                                       size_t errlen);

/* At connect: looks for a transaction pooler (unless the handle runs
 * under transaction pooling already) and switches an auto handle to it,
 * connecting again, or refuses. Returns 0 or a negative error with a
 * message in err. */
int odbc_leader__db_check_pooler(struct odbc_leader__db *db, char *err,
                                 size_t errlen);

/* The connect of a handle that has refused a transaction pooler: fails
 * with the refusal in err, or logged. Returns ODBC_LEADER_ECONFIG. */
int odbc_leader__db_refused(struct odbc_leader__db *db, char *err,
                            size_t errlen);

/* The connect after session_moved() under auto: makes the handle run
 * under transaction pooling. Returns 0 or a negative error with a message
 * in err. */
int odbc_leader__db_switch_pooled(struct odbc_leader__db *db, char *err,
                                  size_t errlen);

/* After a failed statement: SQLSTATE 26000 shows a transaction pooler the
 * check at connect missed. Returns ECONNLOST or ECONFIG (disconnected,
 * warning logged), or 0 when the failure is no such thing. */
int odbc_leader__db_session_moved(struct odbc_leader__db *db);

#endif /* ODBC_LEADER_DB_INTERNAL_H */
