/* SPDX-License-Identifier: MIT */
/*
 * db_pooler.c: transaction pooling and the connection string a port
 * connects with.
 *
 * Under LeaderPooler=auto (the default), none or session, every connect
 * also looks for a transaction pooler between the handle and the server
 * (find_pooler): the dialect's session_id read in two transactions of the
 * handle's connection, with two reads on a second connection between
 * them. A transaction pooler found makes an auto handle run as under
 * LeaderPooler=transaction from then on, and fails the connects of a
 * handle that said none or session. So does a statement that fails with
 * SQLSTATE 26000 (a prepared statement gone from the session). Once the
 * dialect is known, the connection string gets its @connect-keys (and,
 * pooled, its @pooled-connect-keys) in front.
 */
#include <build_config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "config.h"
#include "db.h"
#include "db_internal.h"
#include "dialect.h"
#include "log.h"
#include "probe.h"

/* ---- the connection string ---- */

/* Builds db->connect, the connection string with the dialect's
 * @connect-keys (and, under transaction pooling, its @pooled-connect-keys)
 * in front, once the dialect is known; every later connect uses it.
 * Returns 1 when it built one, 0 when the dialect has no keys (or it was
 * built before), or ENOMEM with a message in err. */
static int build_connect(struct odbc_leader__db *db, char *err, size_t errlen) {
    const char *keys = db->dialect->connect_keys;
    const char *pkeys = db->pooled ? db->dialect->pooled_keys : NULL;
    size_t n;

    if ((keys == NULL && pkeys == NULL) || db->connect != NULL)
        return 0;
    n = (keys ? strlen(keys) : 0) + (pkeys ? strlen(pkeys) : 0) +
        strlen(db->cfg->connect) + 3;
    db->connect = malloc(n);
    if (db->connect == NULL) {
        odbc_leader__errf(err, errlen, "out of memory");
        return ODBC_LEADER_ENOMEM;
    }
    /* keys only (the connection string may hold a password) */
    snprintf(db->connect, n, "%s%s%s", keys ? keys : "",
             keys && pkeys ? ";" : "", pkeys ? pkeys : "");
    odbc_leader__logf(db->log, LOG_INFO,
                      "connecting again with the dialect's keys %s",
                      db->connect);
    snprintf(db->connect + strlen(db->connect), n - strlen(db->connect), ";%s",
             db->cfg->connect);
    return 1;
}

/* Once the dialect is known: when it has @connect-keys (sqliteodbc's own
 * busy Timeout, say), builds the connection string with them in front and
 * connects again with it. Returns 0 or a negative error with a message in
 * err. */
int odbc_leader__db_apply_connect_keys(struct odbc_leader__db *db, char *err,
                                       size_t errlen) {
    int rc = build_connect(db, err, errlen);

    if (rc <= 0)
        return rc;
    odbc_leader__db_disconnect(db);
    return odbc_leader__db_open(db, err, errlen);
}

/* Logs what transaction pooling changes. */
static void note_pooled(struct odbc_leader__db *db) {
    odbc_leader__logf(db->log, LOG_NOTICE,
                      "transaction pooling: every operation is one "
                      "transaction starting with \"%s\", no session state "
                      "and no on_connect; the follower wake-up is off "
                      "(followers poll at the lease's expiry)",
                      db->dialect->pooled_prologue);
}

/* Under LeaderPooler=transaction, once the dialect is known: it must say
 * how (a @pooled-prologue); logs what changes. Returns 0 or ECONFIG with a
 * message in err. */
int odbc_leader__db_check_pooled(struct odbc_leader__db *db, char *err,
                                 size_t errlen) {
    if (!db->pooled)
        return 0;
    if (db->dialect->pooled_prologue == NULL) {
        odbc_leader__errf(err, errlen,
                          "LeaderPooler=transaction: dialect %s has no "
                          "@pooled-prologue, so it does not support "
                          "transaction pooling (see docs/deployment.md)",
                          db->dialect->name);
        return ODBC_LEADER_ECONFIG;
    }
    note_pooled(db);
    return 0;
}

/* ---- the check for a transaction pooler --------------------------------
 *
 * A pooler in transaction mode (pgbouncer pool_mode=transaction) hands
 * each transaction whichever server session is free, so the session state
 * the handle keeps (psqlODBC's prepared statements, on_connect's
 * settings, the wake-up lock) does not follow it. Without such a pooler,
 * a connection keeps its server session, and two connections open at the
 * same time never share one; a session pooler (pool_mode=session) keeps
 * that too. So the check reads the dialect's session_id (a text naming the
 * server session) on the handle's connection (a1), twice on a second
 * connection opened for it (b1, b2), and on the handle's again (a2), each
 * read a transaction of its own, and finds a transaction pooler when
 * a1 != a2, b1 != b2, or b1 or b2 equals a1. A pooler that reuses the
 * server session freed last (pgbouncer's default, server_round_robin = 0)
 * gives the second connection the handle's session; one that hands them
 * out in turn (server_round_robin = 1) changes the second connection's
 * session between its reads, once two are idle.
 *
 * The second connection runs on a thread of its own (probe.c), and the
 * check waits for it up to LeaderStatementTimeout: a session pooler with
 * no free server makes a new client wait for its query_wait_timeout. When
 * it does not answer in time the check goes on with the handle's two reads
 * alone; the probe stays with the handle until the next check or
 * odbc_leader__db_destroy(), which cancels and joins it. */

#define SID_MAX ODBC_LEADER__PROBE_TEXT

/* Opens the check's second connection (probe.c) and waits for its two
 * reads up to LeaderStatementTimeout. Returns 1 with them in sid, or 0
 * with the reason in note (no thread, the connection or a read failed, no
 * answer in time, or the last check's probe has not finished). */
static int second_session(struct odbc_leader__db *db, char sid[2][SID_MAX],
                          char *note, size_t n) {
    char why[320] = "";
    int ok;

    if (db->probe != NULL) {
        if (!odbc_leader__probe_done(db->probe)) {
            snprintf(note, n,
                     "the second connection of the last check has not "
                     "returned yet");
            return 0;
        }
        odbc_leader__probe_destroy(db->probe);
    }
    db->probe = odbc_leader__probe_start(
        db->connect != NULL ? db->connect : db->cfg->connect,
        db->dialect->ops[ODBC_LEADER__OP_SESSION_ID].v[0].sql,
        db->cfg->stmt_timeout_ms, why, sizeof(why));
    if (db->probe == NULL) {
        snprintf(note, n, "second connection: %s", why);
        return 0;
    }
    ok = odbc_leader__probe_wait(db->probe, db->cfg->stmt_timeout_ms, sid, why,
                                 sizeof(why));
    if (!ok)
        snprintf(note, n, "second connection: %s%s", why,
                 odbc_leader__probe_done(db->probe)
                     ? ""
                     : " (LeaderStatementTimeout)");
    return ok;
}

/* Row callback of session_id: ctx is a char[SID_MAX]. */
static int sid_row(void *ctx, void *stmt) {
    return odbc_leader__db_col_text(stmt, 1, ctx, SID_MAX);
}

/* Reads session_id on the handle's connection into sid. Returns 0, 1
 * when it failed but the connection stays (the check cannot tell), or a
 * negative error that dropped the connection. */
static int read_sid(struct odbc_leader__db *db, char *sid) {
    int cls;
    int rc;

    sid[0] = '\0';
    rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_SESSION_ID, sid_row, sid,
                                &cls);
    if (rc < 0 && !db->connected)
        return rc;
    if (rc < 0 || sid[0] == '\0') {
        odbc_leader__logf(db->log, LOG_INFO,
                          "no check for a transaction pooler: session_id "
                          "%s",
                          rc < 0 ? "failed" : "returned nothing");
        return 1;
    }
    return 0;
}

/*
 * Looks for a transaction pooler between the handle's connection and the
 * server (see above). Returns 1 with how it showed in why, 0 when none
 * showed (or the check could not tell), or a negative error that dropped
 * the connection.
 */
static int find_pooler(struct odbc_leader__db *db, char *why, size_t n) {
    char a1[SID_MAX], a2[SID_MAX], b[2][SID_MAX], note[400] = "";
    int second, rc;

    rc = read_sid(db, a1);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    second = second_session(db, b, note, sizeof(note));
    rc = read_sid(db, a2);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (strcmp(a1, a2) != 0) {
        snprintf(why, n,
                 "the server session changed between two transactions of "
                 "one connection (%s, then %s)",
                 a1, a2);
        return 1;
    }
    if (second && strcmp(b[0], b[1]) != 0) {
        snprintf(why, n,
                 "the server session changed between two transactions of "
                 "one connection (a second one: %s, then %s)",
                 b[0], b[1]);
        return 1;
    }
    if (second && (strcmp(b[0], a1) == 0 || strcmp(b[1], a1) == 0)) {
        snprintf(why, n,
                 "a second connection got this connection's server "
                 "session (%s) while this one was open",
                 a1);
        return 1;
    }
    if (second)
        odbc_leader__logf(db->log, LOG_DEBUG,
                          "no transaction pooler: server session %s, a "
                          "second connection's %s",
                          a1, b[0]);
    else
        odbc_leader__logf(db->log, LOG_INFO,
                          "checked for a transaction pooler on this "
                          "connection only (server session %s): %s",
                          a1, note);
    return 0;
}

/* ---- what a pooler found changes ---- */

/* The sticky refusal: every connect of a handle that found a transaction
 * pooler it cannot run through fails with db->refusal, in err at create
 * (the caller shows it), else logged as a warning once, then at debug
 * level. Returns ODBC_LEADER_ECONFIG. */
int odbc_leader__db_refused(struct odbc_leader__db *db, char *err,
                            size_t errlen) {
    odbc_leader__errf(err, errlen, "%s", db->refusal);
    if (err == NULL) {
        odbc_leader__logf(db->log, db->refusal_logged ? LOG_DEBUG : LOG_WARNING,
                          "%s", db->refusal);
        db->refusal_logged = 1;
    }
    return ODBC_LEADER_ECONFIG;
}

/* Refuses to run: a transaction pooler showed as why, and the handle
 * cannot run through it. Disconnects. Returns ODBC_LEADER_ECONFIG. */
static int refuse(struct odbc_leader__db *db, const char *why, char *err,
                  size_t errlen) {
    const char *mode = odbc_leader__pooler_name(db->cfg->pooler);

    if (db->cfg->pooler != ODBC_LEADER__POOL_AUTO)
        snprintf(db->refusal, sizeof(db->refusal),
                 "LeaderPooler=%s, but %s: a transaction-mode pooler "
                 "(pgbouncer pool_mode=transaction?) is in the way; set "
                 "LeaderPooler=transaction",
                 mode, why);
    else
        snprintf(db->refusal, sizeof(db->refusal),
                 "%s: a transaction-mode pooler (pgbouncer "
                 "pool_mode=transaction?) is in the way, and dialect %s "
                 "has no @pooled-prologue, so it cannot run through it "
                 "(LeaderPooler=transaction; see docs/deployment.md)",
                 why, db->dialect->name);
    db->refused = 1;
    odbc_leader__db_disconnect(db);
    return odbc_leader__db_refused(db, err, errlen);
}

/* Logs the one warning of an auto handle that found a transaction
 * pooler (why: how it showed). */
static void warn_pooled(struct odbc_leader__db *db, const char *why) {
    odbc_leader__logf(db->log, LOG_WARNING,
                      "%s: a transaction-mode pooler (pgbouncer "
                      "pool_mode=transaction?); running as with "
                      "LeaderPooler=transaction; set it to say so",
                      why);
}

/* Makes an auto handle run under transaction pooling, with the warning
 * naming why (none when why is "": the caller warned): the dialect again
 * with its @pooled texts, the connection string with its
 * @pooled-connect-keys. Disconnected or not, nothing is prepared after
 * it; the caller connects. Returns 0 or a negative error with a message
 * in err (ECONFIG, sticky, when the dialect has no @pooled-prologue). */
static int become_pooled(struct odbc_leader__db *db, const char *why, char *err,
                         size_t errlen) {
    struct odbc_leader__dialect *d = NULL;
    int rc;

    if (db->dialect->pooled_prologue == NULL)
        return refuse(db, why, err, errlen);
    if (why[0] != '\0')
        warn_pooled(db, why);
    rc = odbc_leader__db_load_dialect(db, 1, &d, err, errlen);
    if (rc < 0)
        return rc;
    odbc_leader__db_disconnect(db);
    odbc_leader__dialect_free(db->dialect);
    db->dialect = d;
    db->pooled = 1;
    free(db->connect);
    db->connect = NULL;
    rc = build_connect(db, err, errlen);
    if (rc < 0)
        return rc;
    note_pooled(db);
    return 0;
}

/* At connect, unless the handle runs under transaction pooling already
 * or the dialect has no session_id: looks for a transaction pooler and,
 * when one shows, switches an auto handle to transaction pooling (and
 * connects again) or refuses (none, session). Returns 0 or a negative
 * error with a message in err. */
int odbc_leader__db_check_pooler(struct odbc_leader__db *db, char *err,
                                 size_t errlen) {
    char why[512];
    int rc;

    if (db->pooled || db->dialect->ops[ODBC_LEADER__OP_SESSION_ID].n == 0)
        return 0;
    if (db->cfg->test_no_pooler_check) {
        odbc_leader__logf(db->log, LOG_NOTICE,
                          "LeaderTestNoPoolerCheck=1: no check for a "
                          "transaction pooler at connect");
        return 0;
    }
    rc = find_pooler(db, why, sizeof(why));
    if (rc <= 0)
        return rc;
    if (db->cfg->pooler != ODBC_LEADER__POOL_AUTO)
        return refuse(db, why, err, errlen);
    rc = become_pooled(db, why, err, errlen);
    if (rc < 0)
        return rc;
    return odbc_leader__db_open(db, err, errlen);
}

/* See db_internal.h: the 26000 under auto that odbc_leader__db_session_moved()
 * logged. */
int odbc_leader__db_switch_pooled(struct odbc_leader__db *db, char *err,
                                  size_t errlen) {
    int rc = become_pooled(db, "", err, errlen);

    if (rc == 0)
        db->pool_switch = 0;
    return rc;
}

/* After a failed statement: SQLSTATE 26000 (a prepared statement the
 * session had is gone: it ran in another server session) shows a
 * transaction pooler the check at connect missed (it may have given the
 * same session every time). An auto handle switches to transaction
 * pooling at its next connect; none and session refuse. Returns
 * ECONNLOST or ECONFIG (disconnected, warning logged), or 0 when the
 * failure is no such thing. */
int odbc_leader__db_session_moved(struct odbc_leader__db *db) {
    char why[sizeof(db->last_error) + 96];

    if (db->pooled || db->pool_switch ||
        db->dialect->ops[ODBC_LEADER__OP_SESSION_ID].n == 0 ||
        strcmp(db->diag.sqlstate, "26000") != 0)
        return 0;
    snprintf(why, sizeof(why),
             "a statement prepared in this connection's server session was "
             "not there (%s)",
             db->last_error);
    if (db->cfg->pooler != ODBC_LEADER__POOL_AUTO ||
        db->dialect->pooled_prologue == NULL)
        return refuse(db, why, NULL, 0);
    warn_pooled(db, why);
    db->pool_switch = 1;
    odbc_leader__db_disconnect(db);
    return ODBC_LEADER_ECONNLOST;
}
