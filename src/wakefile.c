/* SPDX-License-Identifier: MIT */
/*
 * wakefile.c: the follower wake-up through a lock file (wakefile.h), for
 * a database that is a file (SQLite): a server dialect's wait statement
 * blocks on a lock of the server's, a file has only the locks of the
 * file system. The file is the database file's name with WAKE_SUFFIX; the
 * byte locked is the namespace's FNV-1a hash (shard.c) below 2^30.
 */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include <build_config.h>

#include <errno.h>
#include <fcntl.h>
#include <odbcinst.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "connstr.h"
#include "odbc_leader.h"
#include "shard.h"
#include "wakefile.h"

/* The wake-up lock file: beside the database file, this suffix. */
#define WAKE_SUFFIX "-odbc-leader-wake"
/* A follower waiting on the lock file tries again this often. */
#define WAKE_POLL_NS (5 * INT64_C(1000000))

void odbc_leader__wakefile_init(struct odbc_leader__wakefile *w) {
    memset(w, 0, sizeof(*w));
    w->fd = -1;
}

/* Copies the value of key Database= of cfg's connection string (braces
 * decoded, as connstr.c reads every pair), else of the DSN's odbc.ini
 * section, into buf. Returns 1 when it names a file, else 0. */
static int database_file(const struct odbc_leader__config *cfg, char *buf,
                         size_t len) {
    odbc_leader__connstr_value(cfg->connect, "Database", buf, len);
    if (buf[0] == '\0' && cfg->dsn != NULL)
        SQLGetPrivateProfileString(cfg->dsn, "Database", "", buf, (int)len,
                                   "odbc.ini");
    return buf[0] != '\0' && strcmp(buf, ":memory:") != 0;
}

void odbc_leader__wakefile_open(struct odbc_leader__wakefile *w,
                                const struct odbc_leader__config *cfg,
                                const struct odbc_leader__log *log) {
    char file[4096], path[4096 + sizeof(WAKE_SUFFIX)];

    if (w->tried)
        return;
    w->tried = 1;
    if (!database_file(cfg, file, sizeof(file))) {
        odbc_leader__logf(log, LOG_INFO,
                          "no database file named: no follower wake-up");
        return;
    }
    snprintf(path, sizeof(path), "%s%s", file, WAKE_SUFFIX);
    w->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (w->fd < 0) {
        odbc_leader__logf(log, LOG_INFO,
                          "no follower wake-up: cannot open %s: %s", path,
                          strerror(errno));
        return;
    }
    w->off = (off_t)(odbc_leader__fnv1a64(cfg->ns, strlen(cfg->ns)) %
                     (UINT64_C(1) << 30));
}

int odbc_leader__wakefile_is_open(const struct odbc_leader__wakefile *w) {
    return w->fd >= 0;
}

/* Sets *fl to cover the namespace's byte with lock type type. */
static void namespace_byte(const struct odbc_leader__wakefile *w,
                           struct flock *fl, short type) {
    memset(fl, 0, sizeof(*fl));
    fl->l_type = type;
    fl->l_whence = SEEK_SET;
    fl->l_start = w->off;
    fl->l_len = 1;
}

int odbc_leader__wakefile_lock(struct odbc_leader__wakefile *w, int exclusive,
                               int64_t budget_ms) {
    struct flock fl;
    int64_t end = odbc_leader__now_ns(NULL) + budget_ms * INT64_C(1000000);

    namespace_byte(w, &fl, exclusive ? F_WRLCK : F_RDLCK);
    for (;;) {
        int64_t left;
        struct timespec ts;

        if (fcntl(w->fd, F_OFD_SETLK, &fl) == 0)
            return 1;
        if (errno != EAGAIN && errno != EACCES)
            return ODBC_LEADER_EDB;
        left = end - odbc_leader__now_ns(NULL);
        if (left <= 0)
            return 0;
        if (left > WAKE_POLL_NS)
            left = WAKE_POLL_NS;
        ts.tv_sec = 0;
        ts.tv_nsec = (long)left;
        nanosleep(&ts, NULL);
    }
}

void odbc_leader__wakefile_unlock(struct odbc_leader__wakefile *w) {
    struct flock fl;

    if (w->fd < 0)
        return;
    namespace_byte(w, &fl, F_UNLCK);
    fcntl(w->fd, F_OFD_SETLK, &fl);
}

void odbc_leader__wakefile_close(struct odbc_leader__wakefile *w) {
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
}
