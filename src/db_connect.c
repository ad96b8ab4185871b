/* SPDX-License-Identifier: MIT */
/*
 * db_connect.c: connecting a port (db.h). At the first connect the
 * dialect is chosen (LeaderDialect, or the driver's SQL_DBMS_NAME) and
 * kept across reconnects; every connect then looks for a transaction
 * pooler (db_pooler.c), opens the wake-up file of a @wake-file dialect
 * (wakefile.c), runs on_connect, checks or creates the schema
 * (db_schema.c) and prepares the protocol's statements (db.c).
 */
#include <build_config.h>

#include <stdio.h>
#include <syslog.h>

#include "config.h"
#include "db.h"
#include "db_internal.h"
#include "dialect.h"
#include "log.h"
#include "wakefile.h"

/* See db.h. A port of its own, connected once and never prepared: the
 * same login timeout, driver messages and redaction as a handle's
 * connect. */
int odbc_leader__db_dbms_name(const struct odbc_leader__config *cfg, char *name,
                              size_t n, char *err, size_t errlen) {
    struct odbc_leader__db *db = NULL;
    int rc = odbc_leader__db_create(&db, cfg, "", NULL);

    if (rc < 0) {
        odbc_leader__errf(err, errlen, "out of memory");
        return rc;
    }
    rc = odbc_leader__db_open(db, err, errlen);
    if (rc == 0)
        snprintf(name, n, "%s", db->dbms);
    odbc_leader__db_destroy(db);
    return rc;
}

/* See db_internal.h. */
int odbc_leader__db_load_dialect(const struct odbc_leader__db *db, int pooled,
                                 struct odbc_leader__dialect **out, char *err,
                                 size_t errlen) {
    struct odbc_leader__dialect_vars vars;

    vars.prefix = db->cfg->prefix;
    vars.timeout_ms = db->cfg->stmt_timeout_ms;
    vars.pooled = pooled;
    return odbc_leader__dialect_load(db->cfg->dialect, db->dbms, &vars, out,
                                     err, errlen);
}

/* At the first connect: chooses the dialect and, with it known, checks
 * LeaderPooler=transaction against it and connects again with its
 * @connect-keys. Returns 0 or a negative error with a message in err. */
static int choose_dialect(struct odbc_leader__db *db, char *err,
                          size_t errlen) {
    int rc =
        odbc_leader__db_load_dialect(db, db->pooled, &db->dialect, err, errlen);

    if (rc < 0)
        return rc;
    odbc_leader__logf(db->log, LOG_INFO, "database %s, dialect %s", db->dbms,
                      db->dialect->name);
    rc = odbc_leader__db_check_pooled(db, err, errlen);
    if (rc < 0)
        return rc;
    return odbc_leader__db_apply_connect_keys(db, err, errlen);
}

/* Opens the wake-up file of a @wake-file dialect (once) and runs the
 * dialect's on_connect statements (none under transaction pooling: no
 * session state). Returns 0 or a negative error with a message in err. */
static int ready_session(struct odbc_leader__db *db, char *err, size_t errlen) {
    int cls, rc;

    if (db->dialect->wake_file)
        odbc_leader__wakefile_open(&db->wake, db->cfg, db->log);
    if (db->dialect->ops[ODBC_LEADER__OP_ON_CONNECT].n == 0 || db->pooled)
        return 0;
    rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_ON_CONNECT, NULL, NULL,
                                &cls);
    if (rc < 0)
        odbc_leader__errf(err, errlen, "on_connect statement failed: %s",
                          db->last_error);
    return rc < 0 ? rc : 0;
}

/* Prepares the statements of every operation a handle runs. Returns 0 or
 * a negative error with a message in err. */
static int prepare_runtime(struct odbc_leader__db *db, char *err,
                           size_t errlen) {
    static const int runtime_ops[] = {
        ODBC_LEADER__OP_ATTEMPT,        ODBC_LEADER__OP_RENEW,
        ODBC_LEADER__OP_RESIGN,         ODBC_LEADER__OP_UNREGISTER,
        ODBC_LEADER__OP_LEADER,         ODBC_LEADER__OP_CANDIDATES,
        ODBC_LEADER__OP_REQUEST_RESIGN, ODBC_LEADER__OP_RELEASE,
        ODBC_LEADER__OP_WAIT,           ODBC_LEADER__OP_HOLD,
        ODBC_LEADER__OP_CLAIM,          ODBC_LEADER__OP_FINISH,
        ODBC_LEADER__OP_FIRE,           ODBC_LEADER__OP_FIRES,
        ODBC_LEADER__OP_FIRE_GC,
    };
    int cls;

    for (size_t i = 0; i < sizeof(runtime_ops) / sizeof(runtime_ops[0]); i++) {
        int rc = odbc_leader__db_prepare_op(db, runtime_ops[i], &cls);

        if (rc < 0) {
            odbc_leader__errf(err, errlen, "preparing %s failed: %s",
                              odbc_leader__op_name(runtime_ops[i]),
                              db->last_error);
            return rc;
        }
    }
    return 0;
}

/* See db.h. */
int odbc_leader__db_connect(struct odbc_leader__db *db, char *err,
                            size_t errlen) {
    int rc = 0;

    if (db->connected)
        return 0;
    if (db->refused)
        return odbc_leader__db_refused(db, err, errlen);
    if (db->pool_switch)
        rc = odbc_leader__db_switch_pooled(db, err, errlen);
    if (rc == 0)
        rc = odbc_leader__db_open(db, err, errlen);
    if (rc == 0 && db->dialect == NULL)
        rc = choose_dialect(db, err, errlen);
    if (rc == 0)
        rc = odbc_leader__db_check_pooler(db, err, errlen);
    if (rc == 0)
        rc = ready_session(db, err, errlen);
    if (rc == 0)
        rc = odbc_leader__db_ensure_schema(db, err, errlen);
    if (rc == 0)
        rc = prepare_runtime(db, err, errlen);
    if (rc < 0)
        odbc_leader__db_disconnect(db);
    return rc;
}
