/* SPDX-License-Identifier: MIT */
/*
 * probe.c: the second connection of db_pooler.c's check for a transaction
 * pooler (see probe.h). It runs on a thread of its own because a session pooler
 * with no free server (all of pgbouncer's pool_size in use) makes a new
 * client wait for the pooler's query_wait_timeout (120 s by default),
 * which the login timeout does not cover: the handle's thread waits for it
 * only up to its statement timeout and goes on without it. The thread is
 * joined, never detached, so that no code of this library runs after
 * odbc_leader__probe_destroy() returns (a host may dlclose the plugin).
 * The thread logs nothing: the handle's log callback belongs to the
 * handle's thread.
 */
#include <build_config.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sql.h>
#include <sqlext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe.h"

struct odbc_leader__probe {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;      /* the thread has finished (under mu) */
    int ok;        /* ... and read both answers */
    SQLHSTMT stmt; /* the statement running, for SQLCancel (under mu) */
    char *connect; /* owned */
    char *sql;     /* owned */
    SQLULEN timeout_s;
    char text[2][ODBC_LEADER__PROBE_TEXT];
    char error[300]; /* why it failed */
};

/* Copies the first diagnostic record of (type, h) into buf, after what. */
static void diag(SQLSMALLINT type, SQLHANDLE h, const char *what, char *buf,
                 size_t n) {
    SQLCHAR state[6] = "", msg[256] = "";
    SQLINTEGER native = 0;
    SQLSMALLINT len = 0;

    if (h == SQL_NULL_HANDLE ||
        !SQL_SUCCEEDED(
            SQLGetDiagRec(type, h, 1, state, &native, msg, sizeof(msg), &len)))
        snprintf(buf, n, "%s failed", what);
    else
        snprintf(buf, n, "%s failed: [%s] %s", what, (char *)state,
                 (char *)msg);
}

/* Runs p->sql on dbc, its one text into out. Returns 0, or -1 with the
 * reason in p->error. */
static int read_text(struct odbc_leader__probe *p, SQLHDBC dbc, char *out) {
    SQLHSTMT h = SQL_NULL_HSTMT;
    SQLLEN ind = 0;
    SQLRETURN r = SQLAllocHandle(SQL_HANDLE_STMT, dbc, &h);

    if (!SQL_SUCCEEDED(r)) {
        diag(SQL_HANDLE_DBC, dbc, "the read", p->error, sizeof(p->error));
        return -1;
    }
    SQLSetStmtAttr(h, SQL_ATTR_QUERY_TIMEOUT, (SQLPOINTER)p->timeout_s, 0);
    pthread_mutex_lock(&p->mu);
    p->stmt = h;
    pthread_mutex_unlock(&p->mu);
    r = SQLExecDirect(h, (SQLCHAR *)p->sql, SQL_NTS);
    if (SQL_SUCCEEDED(r))
        r = SQLFetch(h);
    if (SQL_SUCCEEDED(r))
        r = SQLGetData(h, 1, SQL_C_CHAR, out, ODBC_LEADER__PROBE_TEXT, &ind);
    if (SQL_SUCCEEDED(r) && ind == SQL_NULL_DATA)
        out[0] = '\0';
    if (!SQL_SUCCEEDED(r))
        diag(SQL_HANDLE_STMT, h, "the read", p->error, sizeof(p->error));
    else if (out[0] == '\0')
        snprintf(p->error, sizeof(p->error), "the read returned nothing");
    pthread_mutex_lock(&p->mu);
    p->stmt = SQL_NULL_HSTMT;
    pthread_mutex_unlock(&p->mu);
    SQLFreeHandle(SQL_HANDLE_STMT, h);
    return SQL_SUCCEEDED(r) && out[0] != '\0' ? 0 : -1;
}

/* The probe's thread: connects, reads twice, disconnects, publishes. */
static void *probe_main(void *arg) {
    struct odbc_leader__probe *p = arg;
    SQLHENV env = SQL_NULL_HENV;
    SQLHDBC dbc = SQL_NULL_HDBC;
    char text[2][ODBC_LEADER__PROBE_TEXT] = {"", ""};
    int ok = 0;

    snprintf(p->error, sizeof(p->error), "cannot allocate ODBC handles");
    if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &env)) ||
        !SQL_SUCCEEDED(SQLSetEnvAttr(env, SQL_ATTR_ODBC_VERSION,
                                     (SQLPOINTER)SQL_OV_ODBC3, 0)) ||
        !SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_DBC, env, &dbc)))
        goto out;
    SQLSetConnectAttr(dbc, SQL_ATTR_LOGIN_TIMEOUT, (SQLPOINTER)p->timeout_s, 0);
    if (!SQL_SUCCEEDED(SQLDriverConnect(dbc, NULL, (SQLCHAR *)p->connect,
                                        SQL_NTS, NULL, 0, NULL,
                                        SQL_DRIVER_NOPROMPT))) {
        diag(SQL_HANDLE_DBC, dbc, "connecting", p->error, sizeof(p->error));
        goto out;
    }
    ok = read_text(p, dbc, text[0]) == 0 && read_text(p, dbc, text[1]) == 0;
    SQLDisconnect(dbc);
out:
    if (dbc != SQL_NULL_HDBC)
        SQLFreeHandle(SQL_HANDLE_DBC, dbc);
    if (env != SQL_NULL_HENV)
        SQLFreeHandle(SQL_HANDLE_ENV, env);
    pthread_mutex_lock(&p->mu);
    memcpy(p->text, text, sizeof(text));
    p->ok = ok;
    p->done = 1;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Frees p's memory and synchronisation objects (no thread). */
static void probe_free(struct odbc_leader__probe *p) {
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p->connect);
    free(p->sql);
    free(p);
}

/* See probe.h. */
struct odbc_leader__probe *odbc_leader__probe_start(const char *connect,
                                                    const char *sql,
                                                    int64_t timeout_ms,
                                                    char *note, size_t n) {
    struct odbc_leader__probe *p = calloc(1, sizeof(*p));
    pthread_condattr_t ca;
    sigset_t all, old;
    int rc = -1;

    if (p == NULL)
        goto nomem;
    if (pthread_condattr_init(&ca) == 0) {
        if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0)
            rc = pthread_cond_init(&p->cv, &ca);
        pthread_condattr_destroy(&ca);
    }
    if (rc != 0) {
        free(p);
        goto nomem;
    }
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        pthread_cond_destroy(&p->cv);
        free(p);
        goto nomem;
    }
    p->connect = strdup(connect);
    p->sql = strdup(sql);
    p->timeout_s = (SQLULEN)((timeout_ms + 999) / 1000);
    if (p->connect == NULL || p->sql == NULL) {
        probe_free(p);
        goto nomem;
    }
    /* the thread takes no signal meant for the host's threads */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&p->thread, NULL, probe_main, p);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        probe_free(p);
        snprintf(note, n, "cannot start a thread: %s", strerror(rc));
        return NULL;
    }
    return p;
nomem:
    snprintf(note, n, "out of memory");
    return NULL;
}

/* See probe.h. */
int odbc_leader__probe_wait(struct odbc_leader__probe *p, int64_t wait_ms,
                            char out[2][ODBC_LEADER__PROBE_TEXT], char *note,
                            size_t n) {
    struct timespec until;
    int ok;

    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)(wait_ms / 1000);
    until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&p->mu);
    while (!p->done &&
           pthread_cond_timedwait(&p->cv, &p->mu, &until) != ETIMEDOUT)
        ;
    ok = p->done && p->ok;
    if (ok)
        memcpy(out, p->text, sizeof(p->text));
    else if (p->done)
        snprintf(note, n, "%s", p->error);
    else
        snprintf(note, n, "no answer within %lld ms", (long long)wait_ms);
    pthread_mutex_unlock(&p->mu);
    return ok;
}

/* See probe.h. */
int odbc_leader__probe_done(struct odbc_leader__probe *p) {
    int done;

    pthread_mutex_lock(&p->mu);
    done = p->done;
    pthread_mutex_unlock(&p->mu);
    return done;
}

/* See probe.h. SQLCancel is the one ODBC call meant for another thread
 * than the one running the statement; a probe still connecting is waited
 * for (its login timeout bounds that). */
void odbc_leader__probe_destroy(struct odbc_leader__probe *p) {
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    if (!p->done && p->stmt != SQL_NULL_HSTMT)
        SQLCancel(p->stmt);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    probe_free(p);
}
