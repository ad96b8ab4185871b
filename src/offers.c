/* SPDX-License-Identifier: MIT */
/*
 * offers.c: the offered fires a leader's ticks learn (offers.h). No
 * binding polls: the first tick of a term sweeps and reads, and later
 * ticks read only when the renewal's count says there is something.
 */
#include <build_config.h>

#include <stddef.h>
#include <string.h>
#include <syslog.h>

#include "db.h"
#include "db_lifecycle.h"
#include "log.h"
#include "offers.h"

/* Row callback of the offers: keeps the first ODBC_LEADER__OFFERS_MAX
 * offered fires, and notes a fire still running in an earlier term (to
 * sweep) in o->unswept. */
static void keep(void *ctx, const struct odbc_leader_fire *f) {
    struct odbc_leader__offers *o = ctx;

    if (strcmp(f->state, "running") == 0)
        o->unswept = 1;
    else if (o->n < ODBC_LEADER__OFFERS_MAX)
        o->v[o->n++] = *f;
}

/* Reads the offers of term into o. Returns 0 or a negative error. */
static int read_offers(struct odbc_leader__offers *o,
                       struct odbc_leader__db *db, int64_t term) {
    int rc;

    o->n = 0;
    o->term = 0;
    o->unswept = 0;
    rc = odbc_leader__db_offers(db, term, keep, o);
    if (rc >= 0)
        o->term = term;
    return rc < 0 ? rc : 0;
}

/* Runs the sweep of term (once it found fires to sweep). Returns 0 or a
 * negative error. */
static int sweep(struct odbc_leader__db *db, const struct odbc_leader__log *log,
                 int64_t term) {
    int rc = odbc_leader__db_sweep(db, term);

    if (rc > 0)
        odbc_leader__logf(log, LOG_WARNING,
                          "term %lld: %d fire(s) of earlier terms ended "
                          "without an outcome (interrupted or abandoned)",
                          (long long)term, rc);
    return rc < 0 ? rc : 0;
}

int odbc_leader__offers_tick(struct odbc_leader__offers *o,
                             struct odbc_leader__db *db,
                             const struct odbc_leader__log *log, int64_t term) {
    int rc = 0;

    if (term == 0 || !odbc_leader__db_has_lifecycle(db)) {
        o->n = 0;
        o->term = 0;
        return 0;
    }
    /* a new term reads first, and writes (the sweep) only when a fire of
     * an earlier term still shows running: a leader with nothing to sweep
     * takes no write lock for it */
    if (o->swept_term == term && o->term == term && o->n == 0 &&
        odbc_leader__db_offered(db) == 0)
        return 0;
    rc = read_offers(o, db, term);
    if (rc == 0 && o->unswept)
        rc = sweep(db, log, term);
    if (rc == 0 && o->unswept)
        rc = read_offers(o, db, term);
    if (rc == 0)
        o->swept_term = term;
    if (rc < 0) {
        o->term = 0;
        odbc_leader__logf(log, LOG_WARNING,
                          "reading the fires offered to term %lld failed: %s",
                          (long long)term, odbc_leader_strerror(rc));
    }
    return rc;
}

int odbc_leader__offers_list(const struct odbc_leader__offers *o, int64_t term,
                             odbc_leader_fire_fn fn, void *ctx) {
    if (term == 0 || o->term != term)
        return 0;
    for (int i = 0; i < o->n; i++)
        if (fn != NULL)
            fn(ctx, &o->v[i]);
    return o->n;
}

int odbc_leader__offers_may_hold(const struct odbc_leader__offers *o,
                                 int64_t term, const char *job,
                                 int64_t fire_ms) {
    if (fire_ms < 0 || o->swept_term != term || o->term != term ||
        o->n >= ODBC_LEADER__OFFERS_MAX)
        return 1;
    for (int i = 0; i < o->n; i++)
        if (o->v[i].fire_ms == fire_ms && strcmp(o->v[i].job, job) == 0)
            return 1;
    return 0;
}
