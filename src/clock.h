/* SPDX-License-Identifier: MIT */
/*
 * clock.h: the local clocks: CLOCK_BOOTTIME for the trust
 * window and timers, CLOCK_REALTIME for display only (clock.c).
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_CLOCK_H
#define ODBC_LEADER_CLOCK_H

#include <stdint.h>

/* Nanoseconds on CLOCK_BOOTTIME (keeps running through suspend); the
 * argument is unused (the elector's injectable clock has this shape). */
int64_t odbc_leader__now_ns(void *unused);

/* Milliseconds on CLOCK_BOOTTIME. */
int64_t odbc_leader__now_ms(void);

/* Milliseconds since the epoch on CLOCK_REALTIME: only for showing times
 * and the database clock's offset to people, never for the protocol. */
int64_t odbc_leader__wall_ms(void);

#endif /* ODBC_LEADER_CLOCK_H */
