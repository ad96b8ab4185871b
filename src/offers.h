/* SPDX-License-Identifier: MIT */
/*
 * offers.h: what a leader's ticks learn of the fires offered to it
 * (offers.c, docs/lifecycle.md): each new term reads the offered fires at
 * its first tick, sweeping earlier terms' running fires first when that
 * read shows some, and reads them again only while the renewal reports
 * some.
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_OFFERS_H
#define ODBC_LEADER_OFFERS_H

#include <stdint.h>

#include "odbc_leader.h"

struct odbc_leader__db;
struct odbc_leader__log;

#define ODBC_LEADER__OFFERS_MAX 64

/* The offers as the last leading tick read them. Zeroed = none. */
struct odbc_leader__offers {
    int64_t swept_term; /* the term whose sweep has run, 0 none */
    int64_t term;       /* the term the list was read for */
    int unswept;        /* the last read showed a fire still running in an
                           earlier term */
    int n;
    struct odbc_leader_fire v[ODBC_LEADER__OFFERS_MAX];
};

/* After a tick of the port db: term is the term it leads, 0 when it does
 * not. A new term runs the sweep (once) and reads the offers; a term
 * that ran it reads them again when the last renewal reported any, or
 * when the list it holds is not empty (to drop the ones taken). Returns
 * 0 or the negative error of a statement (logged on log, borrowed; the
 * next tick tries again). */
int odbc_leader__offers_tick(struct odbc_leader__offers *o,
                             struct odbc_leader__db *db,
                             const struct odbc_leader__log *log, int64_t term);

/* Calls fn(ctx, fire) for each offer held for term (none when term is not
 * the term they were read for). Returns the count. */
int odbc_leader__offers_list(const struct odbc_leader__offers *o, int64_t term,
                             odbc_leader_fire_fn fn, void *ctx);

/* 1 when (job, fire_ms) may be offered to term, so that a claim that
 * meets it claimed before must try to take it: it is listed, or the list
 * cannot tell (not read for term after its sweep, or full). 0 when the
 * list, complete for term, does not hold it: the fire is claimed, and the
 * claim answers so without another round trip. A key below 0 (a run-now)
 * always may be. */
int odbc_leader__offers_may_hold(const struct odbc_leader__offers *o,
                                 int64_t term, const char *job,
                                 int64_t fire_ms);

#endif /* ODBC_LEADER_OFFERS_H */
