/* SPDX-License-Identifier: MIT */
/*
 * error.c: messages and classes of the library's error codes, and
 * which of them leave the connection gone. The
 * switches have no default case, so the compiler names any code added
 * without a message or a class.
 */
#include <string.h>

#include "error.h"
#include "odbc_leader.h"

const char *odbc_leader_strerror(int rc) {
    switch ((enum odbc_leader_error)rc) {
    case ODBC_LEADER_OK:
        return "success";
    case ODBC_LEADER_ECONFIG:
        return "bad configuration";
    case ODBC_LEADER_ENOMEM:
        return "out of memory";
    case ODBC_LEADER_ECONNECT:
        return "cannot connect to the database";
    case ODBC_LEADER_EDB:
        return "database statement failed";
    case ODBC_LEADER_ECONNLOST:
        return "connection to the database lost";
    case ODBC_LEADER_ENOTABLE:
        return "election tables missing";
    case ODBC_LEADER_ESCHEMA:
        return "unknown schema version in the database";
    case ODBC_LEADER_EDIALECT:
        return "SQL dialect cannot be chosen or parsed";
    case ODBC_LEADER_EBACKOFF:
        return "waiting to reconnect to the database";
    case ODBC_LEADER_EUNKNOWN:
        return "commit failed: outcome unknown";
    case ODBC_LEADER_EINVAL:
        return "invalid argument";
    case ODBC_LEADER_ENOCANDIDATE:
        return "no such live candidate";
    case ODBC_LEADER_ENOLEADER:
        return "the namespace has no leader";
    case ODBC_LEADER_ENOTLEADER:
        return "not the leader of the namespace's current term";
    case ODBC_LEADER_EFIREAGE:
        return "fire older than LeaderFireRetention";
    case ODBC_LEADER_ENOFIRE:
        return "no such fire claimed by this candidate";
    case ODBC_LEADER_ENOLEDGER:
        return "the dialect has no fire ledger (schema version 1)";
    case ODBC_LEADER_EREADONLY:
        return "the database server is read-only (a standby in recovery, or "
               "read_only set): connect to the primary";
    case ODBC_LEADER_ENOELECTIONS:
        return "the dialect keeps no election log (a dialect file of an "
               "older schema)";
    case ODBC_LEADER_ESUPERSEDED:
        return "the attempt's term ended and a later term took its fire "
               "again: its outcome is not recorded";
    case ODBC_LEADER_ENOLIFECYCLE:
        return "the dialect has no fire lifecycle (recovery, pause, "
               "run-now: a dialect file of an older schema)";
    case ODBC_LEADER_EGROUPOFFER:
        return "a sharded group's shards take no run-now and no recovery "
               "(pause works): run the job on a plain namespace for those";
    case ODBC_LEADER_ESCHEDULE:
        return "the fire was computed by another schedule than the one its "
               "job is recorded under (time zone, expression or engine): "
               "claim refused";
    }
    return "unknown error";
}

/* The class of a code alone (see odbc_leader.h). */
static int class_of_code(enum odbc_leader_error rc) {
    switch (rc) {
    case ODBC_LEADER_OK:
        return ODBC_LEADER_CLASS_NONE;
    case ODBC_LEADER_ECONNECT:
    case ODBC_LEADER_ECONNLOST:
    case ODBC_LEADER_EBACKOFF:
    case ODBC_LEADER_EUNKNOWN:
    case ODBC_LEADER_ENOCANDIDATE:
    case ODBC_LEADER_ENOLEADER:
    case ODBC_LEADER_ENOTLEADER:
    case ODBC_LEADER_EREADONLY:   /* a standby until the failover ends */
    case ODBC_LEADER_ESUPERSEDED: /* leadership moved on */
        return ODBC_LEADER_CLASS_TRANSIENT;
    case ODBC_LEADER_ECONFIG:
    case ODBC_LEADER_ENOTABLE:
    case ODBC_LEADER_ESCHEMA:
    case ODBC_LEADER_EDIALECT:
    case ODBC_LEADER_EFIREAGE: /* LeaderFireRetention too short */
    case ODBC_LEADER_ENOLEDGER:
    case ODBC_LEADER_ENOELECTIONS:
    case ODBC_LEADER_ENOLIFECYCLE:
    case ODBC_LEADER_EGROUPOFFER:
    case ODBC_LEADER_ESCHEDULE:
        return ODBC_LEADER_CLASS_CONFIG;
    case ODBC_LEADER_ENOMEM:
    case ODBC_LEADER_EDB: /* unclassified: refined by the SQLSTATE */
    case ODBC_LEADER_EINVAL:
    case ODBC_LEADER_ENOFIRE:
        return ODBC_LEADER_CLASS_FATAL;
    }
    return ODBC_LEADER_CLASS_FATAL;
}

int odbc_leader_error_class(int rc) {
    if (rc >= 0)
        return ODBC_LEADER_CLASS_NONE;
    return class_of_code((enum odbc_leader_error)rc);
}

/* SQLSTATE classes (first two characters) that say what to do whatever
 * the code: ISO/IEC 9075 and ODBC 3 (IM: the driver manager). Any other
 * class (HY: driver-specific, ...) leaves the code's own class. */
static const struct {
    const char cls[3];
    int error_class;
} state_classes[] = {
    {"08", ODBC_LEADER_CLASS_TRANSIENT}, /* connection exception */
    {"40", ODBC_LEADER_CLASS_TRANSIENT}, /* rollback: deadlock, serialize */
    {"53", ODBC_LEADER_CLASS_TRANSIENT}, /* PostgreSQL: out of resources */
    {"57", ODBC_LEADER_CLASS_TRANSIENT}, /* PostgreSQL: server shutting down */
    {"28", ODBC_LEADER_CLASS_CONFIG},    /* invalid authorization */
    {"42", ODBC_LEADER_CLASS_CONFIG},    /* syntax error or access rule */
    {"3D", ODBC_LEADER_CLASS_CONFIG},    /* invalid catalog (database) name */
    {"3F", ODBC_LEADER_CLASS_CONFIG},    /* invalid schema name */
    {"IM", ODBC_LEADER_CLASS_CONFIG},    /* no such DSN or driver */
};

int odbc_leader__error_class_refined(int rc, const char *sqlstate) {
    int cls = odbc_leader_error_class(rc);

    if (rc >= 0 || sqlstate == NULL || strlen(sqlstate) < 2)
        return cls;
    if (strcmp(sqlstate, "HYT00") == 0 || strcmp(sqlstate, "HYT01") == 0)
        return ODBC_LEADER_CLASS_TRANSIENT; /* a timeout */
    for (size_t i = 0; i < sizeof(state_classes) / sizeof(state_classes[0]);
         i++) {
        if (strncmp(sqlstate, state_classes[i].cls, 2) == 0)
            return state_classes[i].error_class;
    }
    return cls;
}

/* See error.h. */
int odbc_leader__error_drops_connection(int rc) {
    return rc == ODBC_LEADER_ECONNLOST || rc == ODBC_LEADER_ECONNECT ||
           rc == ODBC_LEADER_EUNKNOWN || rc == ODBC_LEADER_EREADONLY;
}
