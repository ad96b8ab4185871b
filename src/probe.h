/* SPDX-License-Identifier: MIT */
/*
 * probe.h: a second, short-lived ODBC connection that reads one text twice
 * (each read its own transaction) on a thread of its own, for db_pooler.c's
 * check for a transaction pooler: the handle's thread waits for it with a bound
 * and never blocks on it longer (probe.c).
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_PROBE_H
#define ODBC_LEADER_PROBE_H

#include <stddef.h>
#include <stdint.h>

#define ODBC_LEADER__PROBE_TEXT 129 /* bytes of an answer, NUL included */

struct odbc_leader__probe;

/* Starts a probe: a thread connects with connect, runs sql (one row, one
 * text column, no parameters) twice and disconnects; timeout_ms bounds the
 * login and each statement where the driver honours it. Both strings are
 * copied. Returns the probe, or NULL with the reason in note (no memory,
 * no thread). The caller owns it: odbc_leader__probe_destroy(). */
struct odbc_leader__probe *odbc_leader__probe_start(const char *connect,
                                                    const char *sql,
                                                    int64_t timeout_ms,
                                                    char *note, size_t n);

/* Waits up to wait_ms for probe p. Returns 1 with the two answers in out,
 * or 0 with the reason in note (the connection or a read failed, or no
 * answer yet). */
int odbc_leader__probe_wait(struct odbc_leader__probe *p, int64_t wait_ms,
                            char out[2][ODBC_LEADER__PROBE_TEXT], char *note,
                            size_t n);

/* 1 when the probe's thread has finished, else 0. */
int odbc_leader__probe_done(struct odbc_leader__probe *p);

/* Cancels a probe's statement that still runs, waits for its thread to
 * end and frees it. Accepts NULL. */
void odbc_leader__probe_destroy(struct odbc_leader__probe *p);

#endif /* ODBC_LEADER_PROBE_H */
