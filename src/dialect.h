/* SPDX-License-Identifier: MIT */
/*
 * dialect.h: a dialect file's named operations and statements, its
 * error-code classes, and the parser and loader (dialect.c with
 * dialect_header.c, dialect_codes.c and dialect_load.c;
 * builtin_dialects.c). docs/dialects.md describes the format.
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_DIALECT_H
#define ODBC_LEADER_DIALECT_H

#include <stddef.h>
#include <stdint.h>

#include "odbc_leader.h"

/* The named operations a dialect file defines. */
enum odbc_leader__op {
    ODBC_LEADER__OP_ON_CONNECT,     /* optional: run after each connect */
    ODBC_LEADER__OP_DDL,            /* create tables and the version row */
    ODBC_LEADER__OP_SCHEMA_VERSION, /* -> version */
    ODBC_LEADER__OP_ATTEMPT,        /* -> leader_id, term, expires_at_ms,
                                       now_ms, won */
    ODBC_LEADER__OP_RENEW,          /* -> leader_id, term, expires_at_ms,
                                       now_ms, resign_requested, handoff_to;
                                       no row = lost */
    ODBC_LEADER__OP_RESIGN,         /* DML only */
    ODBC_LEADER__OP_UNREGISTER,     /* DML only */
    ODBC_LEADER__OP_LEADER,         /* -> leader_id, term, expires_at_ms,
                                       now_ms */
    ODBC_LEADER__OP_CANDIDATES,     /* -> candidate_id, heartbeat_at_ms,
                                       expires_at_ms, now_ms */
    ODBC_LEADER__OP_REQUEST_RESIGN, /* DML only; rows changed = 1 when a
                                       leader was asked */
    ODBC_LEADER__OP_RELEASE,        /* optional, with wait: let go of the
                                       wake-up lock the leader holds */
    ODBC_LEADER__OP_WAIT,           /* optional, with release: block up to
                                       :wait_ms until the leader lets go;
                                       -> woken (1, or 0 on timeout) */
    ODBC_LEADER__OP_HOLD,           /* optional, with release and wait:
                                       take the wake-up lock, waiting up
                                       to :wait_ms; -> held (1 or 0) */
    /* The fire ledger (schema version 2; a dialect file of version 1 may
     * leave these out and has no ledger). */
    ODBC_LEADER__OP_UPGRADE, /* optional: tables of schema-version - 1 to
                                schema-version, in one transaction */
    ODBC_LEADER__OP_CLAIM,   /* DML only; rows changed = 1 when claimed;
                                unique violation = already claimed */
    ODBC_LEADER__OP_FINISH,  /* DML only; rows changed = 1 when recorded */
    ODBC_LEADER__OP_FIRE,    /* -> the fire columns of one fire */
    ODBC_LEADER__OP_FIRES,   /* -> the fire columns, every fire (of :job
                                unless it is '') */
    ODBC_LEADER__OP_FIRE_GC, /* DML only: retention */
    ODBC_LEADER__OP_FENCE,   /* the fence query of docs/fencing.md: a row
                                while :term of :ns holds */
    /* Optional, one statement without parameters: one row, one text
     * naming the server session, which no other session open at the same
     * time has (db_pooler.c looks for a transaction pooler with it). */
    ODBC_LEADER__OP_SESSION_ID,
    /* Optional, all four or none: sharded groups (member.c). */
    ODBC_LEADER__OP_GROUP_INIT,   /* create a group's missing shard rows;
                                     -> shards, foreign_rows */
    ODBC_LEADER__OP_GROUP_TICK,   /* a member's tick: kind, name, a, b, c,
                                     won, now_ms rows (db_group.c) */
    ODBC_LEADER__OP_GROUP_LEAVE,  /* DML only: release all, unregister */
    ODBC_LEADER__OP_GROUP_SHARDS, /* read only: -> shard, leader_id, term,
                                     expires_at_ms, now_ms per shard */
    /* Optional, both or none: the election log (attempt and resign write
     * it). */
    ODBC_LEADER__OP_ELECTIONS,   /* -> term, leader_id, started_at_ms,
                                    ended_at_ms, ended_how, handed_to,
                                    now_ms per term, oldest first */
    ODBC_LEADER__OP_ELECTION_GC, /* DML only: :election_retention_ms */
    /* Optional, all of them or none: the fire lifecycle (db_fires.c,
     * docs/lifecycle.md); with them, fire, fires and offers add the
     * columns state, attempt, max_attempts, and renew may add the count
     * of offered fires as its eighth column. */
    ODBC_LEADER__OP_TAKE,    /* DML only; rows changed = 1 when an offered
                                fire was taken */
    ODBC_LEADER__OP_SKIP,    /* DML only: a paused job's fire, recorded */
    ODBC_LEADER__OP_SWEEP,   /* DML only: a new term ends earlier terms'
                                running fires */
    ODBC_LEADER__OP_OFFERS,  /* -> the fire columns of the offered fires */
    ODBC_LEADER__OP_PAUSE,   /* DML only: :paused 1 or 0 for :job */
    ODBC_LEADER__OP_TRIGGER, /* -> the new run-now's key */
    ODBC_LEADER__OP_JOBS,    /* -> job, paused, changed_at_ms, changed_by,
                                fires, running, offered, last_fire_ms,
                                last_done_ms, last_failed_ms, now_ms */
    /* Optional, all three or none: schedule identities (db_schedule.c,
     * docs/schedules.md). */
    ODBC_LEADER__OP_SCHEDULE,   /* record :schedule for :job when it has
                                   none, count a refusal when it differs;
                                   -> schedule, since_ms, since_by */
    ODBC_LEADER__OP_RESCHEDULE, /* DML only: :job's identity := :schedule
                                   (NULL: none) */
    ODBC_LEADER__OP_SCHEDULES,  /* -> job, schedule, since_ms, since_by,
                                   refusals, refused, refused_at_ms,
                                   refused_by, now_ms */
    /* Optional: the catch-up's read (docs/catch-up.md); without it the
     * jobs listing serves. */
    ODBC_LEADER__OP_LAST_FIRE, /* -> :job's latest nominal time, now_ms */
    /* Optional: the schedule check's read (db_schedule.c); without it every
     * check runs the schedule statement. */
    ODBC_LEADER__OP_SCHEDULE_READ, /* -> schedule, since_ms, since_by of :job
                                      (no row: none recorded) */
    /* Optional, with the group statements: a steady tick (member.c sends
     * :full 0 and nothing to take, release or offer) as a statement of
     * its own, which answers what group_tick answers then (S, M and K
     * rows). Without it group_tick serves. A small statement keeps a
     * server's cached plan: PostgreSQL planned the whole group_tick
     * again at every run once a group had 10,000 shards. */
    ODBC_LEADER__OP_GROUP_STEADY,
    ODBC_LEADER__OP_COUNT
};

/* Named parameters a statement may use (":ns" and so on). */
enum odbc_leader__param {
    ODBC_LEADER__P_NS,              /* :ns namespace, VARCHAR */
    ODBC_LEADER__P_ID,              /* :id candidate id, VARCHAR */
    ODBC_LEADER__P_TERM,            /* :term held term, BIGINT */
    ODBC_LEADER__P_TTL_MS,          /* :ttl_ms lease TTL, BIGINT */
    ODBC_LEADER__P_CAND_TTL_MS,     /* :cand_ttl_ms candidate TTL, BIGINT */
    ODBC_LEADER__P_VERSION,         /* :version schema version, BIGINT */
    ODBC_LEADER__P_TO,              /* :to handoff target, VARCHAR or NULL */
    ODBC_LEADER__P_WAIT_MS,         /* :wait_ms follower wait budget, BIGINT */
    ODBC_LEADER__P_JOB,             /* :job fire ledger job, VARCHAR */
    ODBC_LEADER__P_FIRE_MS,         /* :fire_ms nominal fire time, BIGINT */
    ODBC_LEADER__P_STATUS,          /* :status outcome of a fire, BIGINT */
    ODBC_LEADER__P_RETENTION_MS,    /* :retention_ms LeaderFireRetention */
    ODBC_LEADER__P_SEEN_TERM,       /* :seen_term attempt: the term of the
                                       held lease the caller has watched for
                                       one TTL, 0 = none, BIGINT */
    ODBC_LEADER__P_SEEN_EXPIRES_MS, /* :seen_expires_ms ... and its
                                       expires_at_ms, BIGINT */
    ODBC_LEADER__P_INC,             /* :inc the process's incarnation, BIGINT */
    ODBC_LEADER__P_SEQ,             /* :seq its tick number, BIGINT */
    ODBC_LEADER__P_SHARDS,          /* :shards a group's shard count, BIGINT */
    ODBC_LEADER__P_TAKE,            /* :take shards to take, JSON array, text */
    ODBC_LEADER__P_RELEASE,         /* :release [shard, term] pairs, JSON */
    ODBC_LEADER__P_DEAD,            /* :dead watched holders, JSON array of
                                       [inc, renew_seq] pairs */
    ODBC_LEADER__P_TAKE_MASK,       /* :take_mask :take without JSON: one
                                       character per shard, '1' at shard + 1
                                       to take it, else '0'; text */
    ODBC_LEADER__P_RELEASE_MASK,    /* :release_mask the same for :release's
                                       shards (without their terms) */
    ODBC_LEADER__P_DEAD_INC,        /* :dead_inc one pair of :dead (a
                                       different one each tick), 0 none */
    ODBC_LEADER__P_DEAD_SEQ,        /* :dead_seq its renew_seq, -1 none */
    ODBC_LEADER__P_ELECTION_RETENTION_MS, /* :election_retention_ms
                                             LeaderElectionRetention */
    ODBC_LEADER__P_MAX_ATTEMPTS, /* :max_attempts the attempts a fire's job
                                    allows (1: at most once), BIGINT */
    ODBC_LEADER__P_PAUSED,       /* :paused 1 pause, 0 resume, BIGINT */
    ODBC_LEADER__P_SCHEDULE,     /* :schedule a schedule identity, VARCHAR
                                    (512) or NULL */
    ODBC_LEADER__P_FULL,         /* :full group_tick: 1 to answer the shard
                                    rows (L, H, V), 0 for a steady tick
                                    (the lease counters, K), BIGINT */
    ODBC_LEADER__P_COUNT
};

#define ODBC_LEADER__MAX_PARAMS 96 /* per statement */
#define ODBC_LEADER__MAX_STMTS 32  /* per operation */

struct odbc_leader__stmt {
    char *sql; /* owned: ? placeholders, {prefix} and {timeout_ms} expanded */
    int nparams;
    unsigned char params[ODBC_LEADER__MAX_PARAMS]; /* enum odbc_leader__param */
    int line; /* first line in the dialect file */
    int step; /* upgrade: runs on tables below this version; 0 = always */
};

struct odbc_leader__stmt_list {
    struct odbc_leader__stmt *v; /* owned */
    size_t n;
};

/* One error-code pattern: SQLSTATE (5 chars, or a prefix ending in '*', or
 * "*" for any) and an optional native error code. */
struct odbc_leader__code {
    char state[6];
    int state_len; /* chars of state to compare: 5, a prefix length, or 0 */
    int has_native;
    long native;
};

struct odbc_leader__code_list {
    struct odbc_leader__code *v; /* owned */
    size_t n;
};

enum odbc_leader__errclass {
    ODBC_LEADER__ERR_OTHER = 0,
    ODBC_LEADER__ERR_UNIQUE,    /* unique-key violation */
    ODBC_LEADER__ERR_TRANSIENT, /* deadlock, lock timeout, serialization */
    ODBC_LEADER__ERR_CONNLOST,  /* the connection is gone */
    ODBC_LEADER__ERR_UNDEFINED_TABLE, /* a table does not exist */
    ODBC_LEADER__ERR_READONLY,        /* the server takes no writes (a
                                         standby, read_only) */
};

struct odbc_leader__dialect {
    char *name; /* owned: "@dialect" */
    char *dbms; /* owned: "@dbms", matched against SQL_DBMS_NAME; may be NULL */
    int schema_version; /* "@schema-version" */
    char *begin;    /* owned: "@begin" statement, or NULL = ODBC transaction */
    char *commit;   /* owned: "@commit", NULL when begin is NULL */
    char *rollback; /* owned: "@rollback", NULL when begin is NULL */
    char *connect_keys;    /* owned: "@connect-keys" (timeouts expanded), put
                              in front of the connection string; or NULL */
    int no_query_timeout;  /* "@query-timeout off": statements get no ODBC
                              query timeout (the session bounds them) */
    int wake_file;         /* "@wake-file": the follower wake-up through a lock
                              file beside the database file (wakefile.c), for dialects
                              without release/wait/hold statements */
    char *pooled_prologue; /* owned: "@pooled-prologue" (timeouts expanded),
                              run first in every transaction under
                              transaction pooling; NULL = no support */
    char *pooled_keys;     /* owned: "@pooled-connect-keys", put in front of
                              the connection string under transaction
                              pooling; or NULL */
    struct odbc_leader__code_list
        codes[6]; /* indexed by errclass; [0] unused */
    struct odbc_leader__stmt_list ops[ODBC_LEADER__OP_COUNT];
};

/* Values substituted into statements at parse time. */
struct odbc_leader__dialect_vars {
    const char *prefix; /* table prefix for {prefix}; validated by caller */
    int64_t timeout_ms; /* for {timeout_ms} */
    int pooled;         /* transaction pooling: "@pooled NAME TEXT" lines
                           replace the @define of NAME, and the @pooled-*
                           header lines apply */
};

/*
 * Parses a dialect file's text. filename is only used in messages.
 * Returns 0 and a new dialect in *out (free with odbc_leader__dialect_free),
 * or ODBC_LEADER_EDIALECT with "FILE:LINE: reason" in err, or
 * ODBC_LEADER_ENOMEM.
 */
int odbc_leader__dialect_parse(const char *text, const char *filename,
                               const struct odbc_leader__dialect_vars *vars,
                               struct odbc_leader__dialect **out, char *err,
                               size_t errlen);

/* Frees d; NULL is a no-op. */
void odbc_leader__dialect_free(struct odbc_leader__dialect *d);

/* 1 when some statement of operation op of d uses parameter k (an enum
 * odbc_leader__param), else 0. */
int odbc_leader__dialect_uses(const struct odbc_leader__dialect *d, int op,
                              int k);

/*
 * Loads the dialect named by spec: a path (contains '/' or ends in
 * ".sql") is read from disk; "auto" uses dbms_name (SQL_DBMS_NAME, may be
 * NULL) to pick a built-in; any other name is a built-in, then
 * $(pkgdatadir)/sql/NAME.sql. Returns as odbc_leader__dialect_parse; a
 * missing file or unknown name gives ODBC_LEADER_EDIALECT with a message
 * that names LeaderDialect.
 */
int odbc_leader__dialect_load(const char *spec, const char *dbms_name,
                              const struct odbc_leader__dialect_vars *vars,
                              struct odbc_leader__dialect **out, char *err,
                              size_t errlen);

/* The text of a built-in dialect file ("sqlite", "postgresql", "mariadb"),
 * or NULL. */
const char *odbc_leader__builtin_dialect(const char *name);

/* The name of the i-th built-in dialect (0-based), or NULL past the end. */
const char *odbc_leader__builtin_dialect_name(size_t i);

/* Classifies a driver error with the dialect's code lists. SQLSTATE class
 * "08" is always CONNLOST. Returns an enum odbc_leader__errclass. */
int odbc_leader__classify(const struct odbc_leader__dialect *d,
                          const char *sqlstate, long native);

/* The name of operation op as a dialect file spells it ("attempt"), for
 * the parser and for messages; static, never NULL for a valid op. */
const char *odbc_leader__op_name(enum odbc_leader__op op);

/* The name of a parameter as a dialect file spells it, without the ':'
 * ("ns", "seen_term"...); static. "?" when out of range. */
const char *odbc_leader__param_name(enum odbc_leader__param param);

#endif /* ODBC_LEADER_DIALECT_H */
