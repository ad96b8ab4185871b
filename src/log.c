/* SPDX-License-Identifier: MIT */
/*
 * log.c: formatting helpers for the host's log callback and for error
 * messages written into caller-supplied buffers.
 */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

/* Formats at most 1 KiB and hands it to log->fn; the message is borrowed
 * by the callback for the duration of the call only. */
void odbc_leader__logf(const struct odbc_leader__log *log, int level,
                       const char *fmt, ...) {
    char buf[1024];
    va_list ap;

    if (log == NULL || log->fn == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    log->fn(log->ctx, level, buf);
}

/* Writes a message into err (truncating) when err is non-NULL and errlen
 * is non-zero. */
void odbc_leader__errf(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;

    if (err == NULL || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
