/* SPDX-License-Identifier: MIT */
/*
 * config.h: a handle's settings, parsed from an ODBC
 * connection string and the odbc.ini section it names (config.c).
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_CONFIG_H
#define ODBC_LEADER_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "odbc_leader.h"

#define ODBC_LEADER__NAME_MAX 128  /* namespace and candidate id, bytes */
#define ODBC_LEADER__PREFIX_MAX 32 /* table prefix, bytes */

struct odbc_leader__config {
    char *connect; /* owned: the connection string without Leader* keys */
    char *connect_redacted; /* owned: same, with PWD/Password values as "***" */
    char *dsn;              /* owned: value of DSN=, or NULL */
    char ns[ODBC_LEADER__NAME_MAX + 1];
    char id[ODBC_LEADER__NAME_MAX + 1]; /* "" = generate a UUID at create */
    int64_t ttl_ms;                     /* LeaderTTL, default 15000 */
    int64_t renew_ms;                   /* LeaderRenewInterval, default ttl/3 */
    int64_t margin_ms;       /* LeaderSafetyMargin, default max(1000, ttl/10) */
    int64_t stmt_timeout_ms; /* LeaderStatementTimeout, default renew interval
                                clamped to 1000..5000, at most
                                (ttl - margin - renew) / 2; never more than
                                ttl - margin - renew */
    char *dialect;           /* owned: LeaderDialect, default "auto" */
    char prefix[ODBC_LEADER__PREFIX_MAX + 1]; /* LeaderTablePrefix */
    int create_schema; /* LeaderCreateSchema, default 1 */
    /* LeaderFollowerWait, default 1000: the longest a follower's tick
     * blocks in the dialect's wait statement (0 = never wait). */
    int64_t follower_wait_ms;
    /* LeaderTestTrustExtra, default 0: TEST ONLY. Lengthens the trust
     * window past the lease, which breaks the protocol on purpose so the
     * fault suite can show its checker catching two leaders. Only a build
     * configured with --enable-test-hooks (ODBC_LEADER_TEST_HOOKS) accepts
     * the key; elsewhere this stays 0. The field is there in every build,
     * so the struct's layout does not depend on build_config.h. */
    int64_t test_trust_extra_ms;
    /* LeaderTestNoWatch, default 0: TEST ONLY, like LeaderTestTrustExtra.
     * 1 makes a follower take over a held lease as soon as the database
     * says it expired, without watching it for one TTL on its own clock
     * (the rule before the watch, docs/protocol.md "Takeover: the
     * watch"): two leaders after a forward step of the database clock. */
    int test_no_watch;
    /* LeaderTestNoPoolerCheck, default 0: TEST ONLY, likewise. 1 skips the
     * check for a transaction pooler at connect (db_pooler.c), so that only the
     * run-time detection (a prepared statement gone, SQLSTATE 26000) can
     * find one. */
    int test_no_pooler_check;
    /* LeaderTestNoSchedule, default 0: TEST ONLY, likewise. 1 claims
     * without checking the job's schedule identity (docs/schedules.md):
     * hosts in different time zones double-fire, as before the check. */
    int test_no_schedule;
    /* LeaderResignRequests: 0 "resign" (default), 1 "report": a renewal
     * that finds a resign request returns ODBC_LEADER_RESIGN_REQUESTED
     * and leaves the resign to the host. */
    int report_resign;
    /* LeaderFireRetention, default 7 days: the leader deletes finished
     * fires older than this, and claims of older fires are refused. */
    int64_t fire_retention_ms;
    /* LeaderElectionRetention, default 90 days: the leader deletes the
     * election log's terms that ended longer ago than this. */
    int64_t election_retention_ms;
    /* LeaderPooler, an enum odbc_leader__pooler: ODBC_LEADER__POOL_AUTO
     * (default: checked at every connect, and a transaction pooler found
     * makes the handle run as with TRANSACTION), NONE or SESSION (a pooler
     * that gives each client its own server session; a transaction pooler
     * found makes the connect fail) or TRANSACTION (a server session per
     * transaction, as pgbouncer's pool_mode=transaction): no session state
     * is kept. db_pooler.c does the checking. */
    int pooler;
    /* LeaderShards, default 0: a group of this many shards named
     * LeaderNamespace (odbc_leader_group_create() needs it, and
     * odbc_leader_create() refuses it). */
    int shards;
};

/* The values of LeaderPooler. NONE stays the lowest and TRANSACTION the
 * highest (tests/fuzz/fuzz_config.c checks the range). */
enum odbc_leader__pooler {
    ODBC_LEADER__POOL_NONE = 0,
    ODBC_LEADER__POOL_AUTO,
    ODBC_LEADER__POOL_SESSION,
    ODBC_LEADER__POOL_TRANSACTION,
};

/* The name of a LeaderPooler value ("auto", "none", ...); static. */
const char *odbc_leader__pooler_name(int pooler);

/*
 * Parses an ODBC connection string: Leader* keys (case-insensitive) go into
 * *out, every other key stays in out->connect verbatim. When the string
 * names a DSN, Leader* keys of that DSN's odbc.ini section are read first
 * (odbcinst), then the string overrides them. Applies defaults and checks
 * every value. Returns 0, or ODBC_LEADER_ECONFIG / ODBC_LEADER_ENOMEM with
 * a message naming the key and the problem in err. On error *out holds
 * nothing that needs freeing. On success free with odbc_leader__config_free.
 */
int odbc_leader__config_parse(const char *config,
                              struct odbc_leader__config *out, char *err,
                              size_t errlen);

/* Frees what *cfg owns; safe on a zeroed or already freed config. */
void odbc_leader__config_free(struct odbc_leader__config *cfg);

/*
 * The connection string s without its password: every PWD= and Password=
 * pair (any case, braced values with "}}" and ";" inside included) is
 * dropped, the other pairs are kept as written, joined by ";". Uses the
 * parser's own tokenizer. Returns 0 and a new string in *out (the caller
 * frees it; "" when nothing is left), or ODBC_LEADER_ECONFIG (s does not
 * parse: the message in err never quotes a value) / ODBC_LEADER_ENOMEM
 * with *out NULL.
 */
int odbc_leader__config_strip_password(const char *s, char **out, char *err,
                                       size_t errlen);

/* 1 when s is a valid namespace or candidate id (1..128 bytes of
 * A-Z a-z 0-9 . _ - : / @), else 0. */
int odbc_leader__valid_name(const char *s);

/* 1 when s is a valid table prefix ([A-Za-z_][A-Za-z0-9_]*, 1 to 32
 * bytes), else 0. */
int odbc_leader__valid_prefix(const char *s);

/* The parsed configuration of a handle (leader.c); borrowed from h. */
const struct odbc_leader__config *
odbc_leader__config_of(const odbc_leader_t *h);

#endif /* ODBC_LEADER_CONFIG_H */
