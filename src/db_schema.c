/* SPDX-License-Identifier: MIT */
/*
 * db_schema.c: the tables at connect (odbc_leader__db_ensure_schema()):
 * read the schema version, create the tables when they are missing and
 * upgrade them from an earlier version, when LeaderCreateSchema allows
 * either. Candidates starting together may do the same at the same
 * moment, so every try ends by reading the version again, and that
 * decides.
 */
#include <build_config.h>

#include <stdio.h>
#include <syslog.h>
#include <time.h>

#include "config.h"
#include "db.h"
#include "db_internal.h"
#include "dialect.h"
#include "log.h"

/* Row callback of schema_version: ctx is an int64_t, -1 for NULL. */
static int version_row(void *ctx, void *stmt) {
    int64_t *v = ctx;
    int null = 0;
    int rc = odbc_leader__db_col_int_null(stmt, 1, v, &null);

    if (rc == 0 && null)
        *v = -1;
    return rc;
}

/* Reads the schema version: *version is -1 when the table is empty.
 * Returns 0 or a negative error (ENOTABLE when the table is missing). */
static int read_version(struct odbc_leader__db *db, int64_t *version) {
    int cls;
    int rc;

    *version = -1;
    rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_SCHEMA_VERSION, version_row,
                                version, &cls);
    return rc < 0 ? rc : 0;
}

/* Tries of creating or upgrading the tables while other candidates may do
 * the same: each failed or inconclusive try waits SCHEMA_PAUSE_MS times
 * its number, then reads the version again. */
#define SCHEMA_TRIES 5
#define SCHEMA_PAUSE_MS 50

/* After a schema statement whose COMMIT failed (EUNKNOWN: on Galera, a
 * certification conflict with another node creating the same tables),
 * connects again so the next try can read what was committed. Returns 0,
 * or rc (the failure being handled) when rc is another error or the new
 * connection fails. */
static int reopen_after(struct odbc_leader__db *db, int rc) {
    char err[256];
    int cls;

    if (rc != ODBC_LEADER_EUNKNOWN || db->connected)
        return rc;
    if (odbc_leader__db_open(db, err, sizeof(err)) < 0)
        return rc;
    if (db->dialect->ops[ODBC_LEADER__OP_ON_CONNECT].n > 0 && !db->pooled &&
        odbc_leader__db_run_op(db, ODBC_LEADER__OP_ON_CONNECT, NULL, NULL,
                               &cls) < 0)
        return rc;
    odbc_leader__logf(db->log, LOG_INFO,
                      "schema statement's commit failed; connected again to "
                      "read the schema version");
    return 0;
}

/* Sleeps SCHEMA_PAUSE_MS times try before the next schema try. */
static void schema_pause(int try) {
    struct timespec ts = {0, (long)try * SCHEMA_PAUSE_MS * 1000000L};

    nanosleep(&ts, NULL);
}

/*
 * Upgrades tables found at an earlier schema version `from` with the
 * dialect's upgrade statements (written to bring any earlier version up),
 * in one transaction,
 * when LeaderCreateSchema allows; a failed upgrade is tried again, up to
 * SCHEMA_TRIES times without the version moving (another candidate may
 * be upgrading at the same moment), and the version read afterwards
 * decides. Returns 0 or a negative error with a
 * message in err.
 */
static int upgrade_schema(struct odbc_leader__db *db, int64_t from, char *err,
                          size_t errlen) {
    const char *p = db->cfg->prefix;
    int to = db->dialect->schema_version;
    int64_t version = from;
    int cls;
    int rc = 0;

    if (!db->cfg->create_schema) {
        odbc_leader__errf(err, errlen,
                          "table %sschema holds schema version %lld and this "
                          "build of odbc-leader needs version %d; "
                          "LeaderCreateSchema=no, so upgrade the tables first: "
                          "odbc-leader schema --upgrade (or print the SQL with "
                          "odbc-leader schema --upgrade-sql)",
                          p, (long long)from, to);
        return ODBC_LEADER_ESCHEMA;
    }
    for (int try = 1; try <= SCHEMA_TRIES && version != to; try++) {
        int64_t before = version;

        if (try > 1)
            schema_pause(try - 1);
        odbc_leader__logf(db->log, LOG_NOTICE,
                          "upgrading tables %s* from schema version %lld to "
                          "%d",
                          p, (long long)version, to);
        db->upgrade_from = version;
        rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_UPGRADE, NULL, NULL,
                                    &cls);
        if (rc < 0 && !db->connected && reopen_after(db, rc) < 0)
            break;
        rc = read_version(db, &version);
        if (rc < 0)
            break;
        if (version > before)
            try = 0; /* progress (ours or a racer's, step by step on a
                        database whose DDL commits by itself): the tries
                        count again from the version reached */
    }
    if (rc == 0 && version == to)
        return 0;
    if (rc == 0) {
        odbc_leader__errf(err, errlen,
                          "upgrading tables %s* from schema version %lld to "
                          "%d failed; %sschema holds version %lld: %s",
                          p, (long long)from, to, p, (long long)version,
                          db->last_error);
        return ODBC_LEADER_ESCHEMA;
    }
    odbc_leader__errf(err, errlen,
                      "upgrading tables %s* from schema version %lld to %d "
                      "failed: %s",
                      p, (long long)from, to, db->last_error);
    return rc;
}

/*
 * Runs the DDL and reads the version into *version, again while another
 * candidate creating the tables at the same moment leaves them missing or
 * without their version row (seen on MariaDB with three candidates
 * starting at once). Returns 0 (with *version >= 0) or a negative error
 * with db->last_error naming the DDL's own failure.
 */
static int create_tables(struct odbc_leader__db *db, int64_t *version) {
    char ddl_error[sizeof(db->last_error)] = "";
    int cls;
    int rc = 0;

    for (int try = 1; try <= SCHEMA_TRIES; try++) {
        db->p_version = db->dialect->schema_version;
        ddl_error[0] = '\0';
        rc = odbc_leader__db_run_op(db, ODBC_LEADER__OP_DDL, NULL, NULL, &cls);
        /* Another candidate may have created them at the same moment:
         * the version decides. Otherwise report the DDL's own error. */
        if (rc < 0)
            snprintf(ddl_error, sizeof(ddl_error), "%.900s", db->last_error);
        if (rc < 0 && !db->connected && reopen_after(db, rc) < 0)
            return rc;
        rc = read_version(db, version);
        if (rc == 0 && *version >= 0)
            return 0;
        if (rc < 0 && rc != ODBC_LEADER_ENOTABLE)
            break;
        schema_pause(try);
    }
    if (ddl_error[0] != '\0')
        snprintf(db->last_error, sizeof(db->last_error),
                 "creating the tables failed: %.900s", ddl_error);
    else if (rc == 0)
        snprintf(db->last_error, sizeof(db->last_error),
                 "the tables were created but hold no version row");
    return rc < 0 ? rc : ODBC_LEADER_ENOTABLE;
}

/* See db_internal.h. */
int odbc_leader__db_ensure_schema(struct odbc_leader__db *db, char *err,
                                  size_t errlen) {
    const char *p = db->cfg->prefix;
    int64_t version = -1;
    int rc = read_version(db, &version);

    if (rc < 0 && rc != ODBC_LEADER_ENOTABLE)
        goto fail;
    if (rc == 0 && version >= 0)
        goto check;
    if (!db->cfg->create_schema) {
        odbc_leader__errf(err, errlen,
                          "table %sschema %s and LeaderCreateSchema=no: "
                          "create the tables with the dialect's DDL first",
                          p, rc < 0 ? "is missing" : "is empty");
        return ODBC_LEADER_ENOTABLE;
    }
    odbc_leader__logf(db->log, LOG_NOTICE,
                      "creating tables %slease, %scandidate, %sschema", p, p,
                      p);
    rc = create_tables(db, &version);
    if (rc < 0)
        goto fail;
check:
    if (version >= 1 && version < db->dialect->schema_version &&
        db->dialect->ops[ODBC_LEADER__OP_UPGRADE].n > 0)
        return upgrade_schema(db, version, err, errlen);
    if (version != db->dialect->schema_version) {
        odbc_leader__errf(err, errlen,
                          "table %sschema holds schema version %lld; dialect "
                          "%s (LeaderDialect) is written for version %d only",
                          p, (long long)version, db->dialect->name,
                          db->dialect->schema_version);
        return ODBC_LEADER_ESCHEMA;
    }
    return 0;
fail:
    odbc_leader__errf(err, errlen, "checking table %sschema failed: %s", p,
                      db->last_error);
    return rc;
}
