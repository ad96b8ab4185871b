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

/* Row callback of the offers: keeps the first ODBC_LEADER__OFFERS_MAX. */
static void keep(void *ctx, const struct odbc_leader_fire *f) {
    struct odbc_leader__offers *o = ctx;

    if (o->n < ODBC_LEADER__OFFERS_MAX)
        o->v[o->n++] = *f;
}

/* Runs the sweep of term once. Returns 0 or a negative error. */
static int sweep(struct odbc_leader__offers *o, struct odbc_leader__db *db,
                 const struct odbc_leader__log *log, int64_t term) {
    int rc;

    if (o->swept_term == term)
        return 0;
    rc = odbc_leader__db_sweep(db, term);
    if (rc < 0)
        return rc;
    if (rc > 0)
        odbc_leader__logf(log, LOG_WARNING,
                          "term %lld: %d fire(s) of earlier terms ended "
                          "without an outcome (interrupted or abandoned)",
                          (long long)term, rc);
    o->swept_term = term;
    o->term = 0; /* read them now */
    return 0;
}

int odbc_leader__offers_tick(struct odbc_leader__offers *o,
                             struct odbc_leader__db *db,
                             const struct odbc_leader__log *log, int64_t term) {
    int rc;

    if (term == 0 || !odbc_leader__db_has_lifecycle(db)) {
        o->n = 0;
        o->term = 0;
        return 0;
    }
    rc = sweep(o, db, log, term);
    if (rc < 0)
        goto failed;
    if (o->term == term && o->n == 0 && odbc_leader__db_offered(db) == 0)
        return 0;
    o->n = 0;
    o->term = 0;
    rc = odbc_leader__db_offers(db, term, keep, o);
    if (rc < 0)
        goto failed;
    o->term = term;
    return 0;
failed:
    odbc_leader__logf(log, LOG_WARNING,
                      "reading the fires offered to term %lld failed: %s",
                      (long long)term, odbc_leader_strerror(rc));
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
