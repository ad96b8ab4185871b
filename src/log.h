/* SPDX-License-Identifier: MIT */
/*
 * log.h: the library's log sink and the
 * bounded error-message writer (log.c).
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_LOG_H
#define ODBC_LEADER_LOG_H

#include <stddef.h>

struct odbc_leader__log {
    void (*fn)(void *ctx, int level, const char *msg); /* may be NULL */
    void *ctx;
};

/* Formats and sends one message to log->fn; no-op when fn is NULL. */
void odbc_leader__logf(const struct odbc_leader__log *log, int level,
                       const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* snprintf into err (when err && errlen), never overflowing. */
void odbc_leader__errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* ODBC_LEADER_LOG_H */
