/* SPDX-License-Identifier: MIT */
/*
 * minicron_log.c: minicron's log, one line per message on stderr with its
 * syslog level ("minicron[PID] HH:MM:SS.mmm LEVEL: msg"), and the plugin's
 * callbacks that write to it: its log lines and one notice per change of
 * role.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>
#include <time.h>

#include "minicron.h"

static const char *const level_names[] = {
    "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

/* Writes one log line on stderr when level is important enough:
 * "minicron[PID] HH:MM:SS.mmm LEVEL: msg". msg is borrowed. */
static void emit(const struct minicron *mc, int level, const char *msg) {
    int64_t now = clock_ns(CLOCK_REALTIME);
    time_t secs = (time_t)(now / NS_PER_S);
    struct tm tm;
    char stamp[16] = "";

    if (level > mc->threshold)
        return;
    if (level < LOG_EMERG || level > LOG_DEBUG)
        level = LOG_ERR;
    if (localtime_r(&secs, &tm) != NULL)
        strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
    fprintf(stderr, "minicron[%ld] %s.%03d %s: %s\n", (long)mc->pid, stamp,
            (int)(now % NS_PER_S / NS_PER_MS), level_names[level], msg);
}

/* printf-style front end of emit(). */
__attribute__((format(printf, 3, 4))) void
say(const struct minicron *mc, int level, const char *fmt, ...) {
    char msg[ERR_MAX + 128];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    emit(mc, level, msg);
}

/* The plugin's log callback; ctx is the struct minicron. */
void on_log(void *ctx, int level, const char *msg) { emit(ctx, level, msg); }

/* The plugin's on_change callback: one notice per change of role. */
void on_change(void *ctx, int is_leader, int64_t term, const char *leader_id) {
    if (is_leader)
        say(ctx, LOG_NOTICE, "leader, term %lld", (long long)term);
    else
        say(ctx, LOG_NOTICE, "follower (leader: %s, term %lld)",
            leader_id ? leader_id : "none", (long long)term);
}
