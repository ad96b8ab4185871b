/* SPDX-License-Identifier: MIT */
/*
 * schedule.h: schedule identities (docs/schedules.md): how a host computes
 * the nominal times of a job's fires, as one string the ledger compares
 * (schedule.c), the IANA name of the host's time zone, and the identities
 * a handle registered per job (odbc_leader_set_schedule()).
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_SCHEDULE_H
#define ODBC_LEADER_SCHEDULE_H

#include <stddef.h>

#include "config.h"

#define ODBC_LEADER__SCHEDULE_MAX 512 /* an identity, bytes */
#define ODBC_LEADER__EXPR_MAX 256     /* its expression */
#define ODBC_LEADER__ZONE_MAX 64      /* its zone's name */
#define ODBC_LEADER__ENGINE_MAX 160   /* its engine and DST rule */

/*
 * Writes the identity of a schedule into out (ODBC_LEADER__SCHEDULE_MAX +
 * 1 bytes): "EXPR in ZONE by ENGINE", or "EXPR by ENGINE" when tz is "",
 * with runs of white space as one space and none at either end; tz NULL
 * is the host's zone (odbc_leader_local_zone()), and an alias of UTC is
 * "UTC". Returns 0, or ODBC_LEADER_EINVAL (a part empty, too long, with a
 * control character, or a zone that is no IANA name or that this host's
 * zoneinfo lacks) or ODBC_LEADER_ECONFIG (the host's zone has no name),
 * with a message in err. All borrowed.
 */
int odbc_leader__schedule_identity(const char *expr, const char *tz,
                                   const char *engine, char *out, char *err,
                                   size_t errlen);

/* A job's registered identity. */
struct odbc_leader__schedule_entry {
    char job[ODBC_LEADER__NAME_MAX + 1];
    char identity[ODBC_LEADER__SCHEDULE_MAX + 1];
};

/* The identities a handle registered, by job (a handle has a few jobs:
 * looked up by a linear scan). Zeroed is empty. */
struct odbc_leader__schedules {
    struct odbc_leader__schedule_entry *v; /* owned */
    size_t n, cap;
};

/* Sets job's identity (both borrowed, copied), or forgets it when
 * identity is NULL. Returns 0 or ODBC_LEADER_ENOMEM. */
int odbc_leader__schedules_set(struct odbc_leader__schedules *s,
                               const char *job, const char *identity);

/* Returns job's identity (borrowed from s until its next change), or NULL
 * when none is registered. */
const char *odbc_leader__schedules_get(const struct odbc_leader__schedules *s,
                                       const char *job);

/* Frees what s owns and empties it. */
void odbc_leader__schedules_free(struct odbc_leader__schedules *s);

#endif /* ODBC_LEADER_SCHEDULE_H */
