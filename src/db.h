/* SPDX-License-Identifier: MIT */
/*
 * db.h: the ODBC port: one connection, the dialect's statements prepared
 * once per connection, error classification, the integrity-error retry.
 */
#ifndef ODBC_LEADER_DB_H
#define ODBC_LEADER_DB_H

#include "config.h"
#include "dialect.h"
#include "elector.h"
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

/* The operations; see struct odbc_leader__port_ops. */
int odbc_leader__db_attempt(struct odbc_leader__db *db, int64_t seen_term,
                            int64_t seen_expires_ms,
                            struct odbc_leader__result *out);
int odbc_leader__db_renew(struct odbc_leader__db *db, int64_t term,
                          struct odbc_leader__result *out);
/* Returns 1 when the exact term was resigned, 0 when it was not held. */
int odbc_leader__db_resign(struct odbc_leader__db *db, int64_t term);
int odbc_leader__db_unregister(struct odbc_leader__db *db);
/* Asks the current leader to resign at its next renewal, reserving the
 * lease for to_id (NULL or "" for anyone). Returns 1 when a leader was
 * asked, 0 when the namespace has no leader, or a negative error. */
int odbc_leader__db_request_resign(struct odbc_leader__db *db,
                                   const char *to_id);
/* 1 when the dialect defines the wake-up statements (release, wait). */
int odbc_leader__db_has_wait(const struct odbc_leader__db *db);
/* Lets go of the wake-up lock this session may hold (no-op without the
 * wake-up statements). Returns 0 or a negative error. */
int odbc_leader__db_release(struct odbc_leader__db *db);
/* Blocks up to budget_ms until no leader holds the wake-up lock. Returns 1
 * when the lock was free (a leader let go, or none holds it), 0 when the
 * budget ran out, or a negative error (EINVAL without wake-up statements).
 * The run_op log line of a timed-out wait is at most a warning. */
int odbc_leader__db_wait(struct odbc_leader__db *db, int64_t budget_ms);
/* Takes the wake-up lock, waiting up to budget_ms for followers that hold
 * it for a moment. Returns 1 when held, 0 when not (or the dialect has no
 * hold statement), or a negative error. */
int odbc_leader__db_hold(struct odbc_leader__db *db, int64_t budget_ms);
/* out->found is 0 when the namespace has no lease row yet. */
int odbc_leader__db_read_lease(struct odbc_leader__db *db,
                               struct odbc_leader__result *out);
/* Returns the number of live candidates or a negative error. */
int odbc_leader__db_candidates(struct odbc_leader__db *db,
                               odbc_leader_candidate_fn fn, void *ctx);

/* 1 when the dialect has the fire ledger's statements (schema 2). */
int odbc_leader__db_has_ledger(const struct odbc_leader__db *db);
/* Claims (job, fire_ms) for term in one statement. Returns 1 claimed, 0
 * already claimed (the unique violation), ODBC_LEADER_ENOTLEADER,
 * ODBC_LEADER_EFIREAGE (told apart with one more read), ENOLEDGER or
 * another negative error. job is borrowed and valid. */
int odbc_leader__db_claim(struct odbc_leader__db *db, int64_t term,
                          const char *job, int64_t fire_ms);
/* 1 when a claim that failed with rc is worth one more try at once: the
 * connection was lost (the caller reopens it first), the outcome is
 * unknown, or the statement failed for a passing reason in the dialect's
 * terms (a lock or statement timeout, a deadlock, a busy file). */
int odbc_leader__db_claim_retryable(const struct odbc_leader__db *db, int rc);
/* The one more try of a claim whose first try failed with first, on a
 * connection the caller has reopened. Returns what odbc_leader__db_claim
 * returns, except that a 0 after a first try of unknown outcome
 * (ECONNLOST, EUNKNOWN) whose row holds this candidate's claim in term
 * returns first again, with its diagnostic: that row is the first try's
 * own or an earlier claim of the same fire, and the row cannot tell
 * which. job is borrowed and valid. */
int odbc_leader__db_claim_again(struct odbc_leader__db *db, int64_t term,
                                const char *job, int64_t fire_ms, int first);
/* Records the outcome of a fire this candidate claimed. Returns 0 (also
 * when it was finished before), ODBC_LEADER_ENOFIRE, or a negative
 * error. */
int odbc_leader__db_finish(struct odbc_leader__db *db, const char *job,
                           int64_t fire_ms, int status);
/* Reads one fire into *out: 1 found, 0 not, or a negative error. */
int odbc_leader__db_fire(struct odbc_leader__db *db, const char *job,
                         int64_t fire_ms, struct odbc_leader_fire *out);
/* Calls fn for every fire (of job unless NULL or ""). Returns the count
 * or a negative error. */
int odbc_leader__db_fires(struct odbc_leader__db *db, const char *job,
                          odbc_leader_fire_fn fn, void *ctx);
/* Deletes the finished fires older than LeaderFireRetention. Returns the
 * rows deleted (0 without a ledger) or a negative error. */
int odbc_leader__db_fire_gc(struct odbc_leader__db *db);

/* 1 when the dialect keeps the election log (elections, election_gc). */
int odbc_leader__db_has_elections(const struct odbc_leader__db *db);

/* Calls fn(ctx, election) for each term of the namespace's election log,
 * oldest first. Returns the number of terms, ODBC_LEADER_ENOELECTIONS or
 * a negative error. */
int odbc_leader__db_elections(struct odbc_leader__db *db,
                              odbc_leader_election_fn fn, void *ctx);

/* Deletes the terms that ended more than LeaderElectionRetention ago.
 * Returns the rows deleted (0 without an election log) or a negative
 * error. */
int odbc_leader__db_election_gc(struct odbc_leader__db *db);

/* ---- sharded groups (db_group.c runs these) ---- */

/* The configuration db was created with; borrowed. */
const struct odbc_leader__config *
odbc_leader__db_config(const struct odbc_leader__db *db);

/* The log db writes to; borrowed. */
const struct odbc_leader__log *
odbc_leader__db_log(const struct odbc_leader__db *db);
/* 1 when the dialect has the group statements. */
int odbc_leader__db_has_group(const struct odbc_leader__db *db);
/* Sets :ns for the statements that follow (a group's name, or one of its
 * shards' namespaces for claim and finish); ns is copied. */
void odbc_leader__db_set_ns(struct odbc_leader__db *db, const char *ns);

/* The parameters of a group statement; the lists are borrowed for the
 * call (NULL: "[]"). */
struct odbc_leader__group_args {
    int64_t inc, seq, shards;
    const char *take, *release, *dead; /* JSON arrays (group.c) */
    /* the same for a dialect without JSON (db_group.c fills them): */
    const char *take_mask, *release_mask; /* NULL when unused */
    int64_t dead_inc, dead_seq;
};

/* Called for each row of a group statement's result; stmt is opaque and
 * valid for the call (read it with odbc_leader__db_col_*()). Returns 0 or
 * a negative error, which stops the fetch. */
typedef int (*odbc_leader__db_row_fn)(void *ctx, void *stmt);

/* Runs group operation op (ODBC_LEADER__OP_GROUP_*) with the arguments
 * in a and hands its rows to fn (may be NULL). Returns the rows fetched
 * or affected, ODBC_LEADER_EDIALECT without group statements, or a
 * negative error. */
int odbc_leader__db_group_op(struct odbc_leader__db *db, int op,
                             const struct odbc_leader__group_args *a,
                             odbc_leader__db_row_fn fn, void *ctx);
/* Column col (1-based) of a row as a 64-bit integer (0 for NULL) or as
 * text ("" for NULL). Return 0 or ODBC_LEADER_EDB. */
int odbc_leader__db_col_int(void *stmt, int col, int64_t *v);
int odbc_leader__db_col_text(void *stmt, int col, char *buf, size_t len);

/* The dialect in use after the first connect, else NULL; borrowed. */
const struct odbc_leader__dialect *
odbc_leader__db_dialect(const struct odbc_leader__db *db);

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

/* The port table handing a struct odbc_leader__db * to the elector. */
extern const struct odbc_leader__port_ops odbc_leader__db_ops;

#endif /* ODBC_LEADER_DB_H */
