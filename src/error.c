/* SPDX-License-Identifier: MIT */
/*
 * error.c: messages for the library's error codes. The switch has no
 * default case, so the compiler names any code added without a message.
 */
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
    }
    return "unknown error";
}
