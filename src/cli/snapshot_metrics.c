/* SPDX-License-Identifier: MIT */
/*
 * snapshot_metrics.c: the metric families of a namespace's snapshot (its
 * lease, candidates and group shards), gauges written through prom.c for
 * "status --format=prometheus" and serve's /metrics. The namespace is the
 * label leader_namespace; the families that existed before it also keep
 * namespace for one release, and the renamed ones are written under their
 * old names too, marked deprecated (serve_metrics.c says why).
 */
#include <build_config.h>

#include <string.h>

#include "cli.h"

#define NS_BOTH (ODBC_LEADER__PROM_NS_NEW | ODBC_LEADER__PROM_NS_OLD)
#define NS_NEW ODBC_LEADER__PROM_NS_NEW
#define NS_OLD ODBC_LEADER__PROM_NS_OLD
#define GAUGE ODBC_LEADER__PROM_GAUGE
#define DEPRECATED "Deprecated, removed in the next release: "

/* The value of a family for snapshot s: returns 0 when s has no sample,
 * else 1 with the value in *v (in ms when the family is in seconds). */
typedef int (*value_fn)(const struct odbc_leader__snapshot *s, int64_t *v);

/* A family of one sample per namespace. */
struct scalar {
    struct odbc_leader__prom_family m;
    int ms;      /* *v is ms, written as seconds */
    value_fn fn; /* its value */
};

static int held(const struct odbc_leader__snapshot *s, int64_t *v) {
    *v = s->present;
    return 1;
}

static int term(const struct odbc_leader__snapshot *s, int64_t *v) {
    *v = s->lease.term;
    return 1;
}

static int remaining(const struct odbc_leader__snapshot *s, int64_t *v) {
    *v = s->remaining_ms;
    return 1;
}

static int offset(const struct odbc_leader__snapshot *s, int64_t *v) {
    *v = s->offset_ms;
    return s->have_clock;
}

static int alive(const struct odbc_leader__snapshot *s, int64_t *v) {
    *v = (int64_t)s->n;
    return 1;
}

static int shards(const struct odbc_leader__snapshot *s, int64_t *v) {
    *v = s->shards;
    return s->shards > 0;
}

static int unled(const struct odbc_leader__snapshot *s, int64_t *v) {
    *v = s->unled;
    return s->shards > 0;
}

/* clang-format off */
static const struct scalar lease_families[] = {
    {{"odbc_leader_lease_held", GAUGE,
      "1 when a candidate holds the namespace's lease and it has not "
      "expired (database time), else 0.", NS_NEW, {NULL}}, 0, held},
    {{"odbc_leader_leader_present", GAUGE,
      DEPRECATED "use odbc_leader_lease_held. 1 when the namespace has a "
      "leader whose lease has not expired, else 0.", NS_OLD, {NULL}}, 0, held},
    {{"odbc_leader_term", GAUGE,
      "Last term (fencing token) issued in the namespace.", NS_BOTH, {NULL}},
     0, term},
    {{"odbc_leader_lease_remaining_seconds", GAUGE,
      "Seconds until the leader's lease expires, in database time; 0 without "
      "a leader.", NS_BOTH, {NULL}}, 1, remaining},
    {{"odbc_leader_db_clock_offset_seconds", GAUGE,
      "Database clock minus this host's wall clock, read with the lease; a "
      "jump is a clock step on one side. No sample before the namespace's "
      "first lease row.", NS_BOTH, {NULL}}, 1, offset},
};
static const struct scalar alive_family = {
    {"odbc_leader_candidates_alive", GAUGE,
     "Candidates whose heartbeat has not expired.", NS_BOTH, {NULL}}, 0,
    alive};
static const struct scalar group_families[] = {
    {{"odbc_leader_group_shards", GAUGE,
      "Shards of the group the namespace names.", NS_BOTH, {NULL}}, 0,
     shards},
    {{"odbc_leader_group_shards_unled", GAUGE,
      "Shards of the group with no unexpired lease.", NS_BOTH, {NULL}}, 0,
     unled},
};
static const struct odbc_leader__prom_family m_holder = {
    "odbc_leader_lease_holder_info", GAUGE,
    "Always 1; leader_id names the candidate that holds the namespace's "
    "unexpired lease. No sample without one.", NS_NEW, {"leader_id", NULL}};
static const struct odbc_leader__prom_family m_old_info = {
    "odbc_leader_leader_info", GAUGE,
    DEPRECATED "use odbc_leader_lease_holder_info. Always 1; the leader_id "
    "label names the current leader.", NS_OLD, {"leader_id", NULL}};
static const struct odbc_leader__prom_family m_heartbeat = {
    "odbc_leader_candidate_heartbeat_age_seconds", GAUGE,
    "Seconds since each live candidate's last heartbeat, in database time.",
    NS_BOTH, {"candidate_id", NULL}};
static const struct odbc_leader__prom_family m_led = {
    "odbc_leader_candidate_shards_led", GAUGE,
    "Shards of the group the namespace names that each live candidate "
    "leads.", NS_NEW, {"candidate_id", NULL}};
static const struct odbc_leader__prom_family m_old_led = {
    "odbc_leader_group_shards_led", GAUGE,
    DEPRECATED "use odbc_leader_candidate_shards_led. Shards of the group "
    "each live candidate leads.", NS_OLD, {"candidate_id", NULL}};
/* clang-format on */

/* Writes family c of the n snapshots s[]. */
static void scalar(FILE *f, const struct scalar *c,
                   const struct odbc_leader__snapshot *s, size_t n) {
    odbc_leader__prom_head(f, &c->m);
    for (size_t i = 0; i < n; i++) {
        int64_t v;

        if (!c->fn(&s[i], &v))
            continue;
        if (c->ms)
            odbc_leader__prom_ms(f, &c->m, s[i].ns, NULL, v);
        else
            odbc_leader__prom_int(f, &c->m, s[i].ns, NULL, v);
    }
}

/* Writes family m of the holders of the leases of s[]: 1 for each. */
static void holders(FILE *f, const struct odbc_leader__prom_family *m,
                    const struct odbc_leader__snapshot *s, size_t n) {
    odbc_leader__prom_head(f, m);
    for (size_t i = 0; i < n; i++) {
        const char *id[] = {s[i].lease.leader_id};

        if (s[i].present)
            odbc_leader__prom_int(f, m, s[i].ns, id, 1);
    }
}

/* Writes family m (heartbeat ages, or with shards set the shards led) of
 * every live candidate of s[]. */
static void per_candidate(FILE *f, const struct odbc_leader__prom_family *m,
                          const struct odbc_leader__snapshot *s, size_t n,
                          int shards_led) {
    odbc_leader__prom_head(f, m);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < s[i].n && (!shards_led || s[i].shards > 0);
             j++) {
            const struct odbc_leader_candidate *c = &s[i].cands[j];
            const char *id[] = {c->id};

            if (shards_led)
                odbc_leader__prom_int(f, m, s[i].ns, id, s[i].leads[j]);
            else
                odbc_leader__prom_ms(f, m, s[i].ns, id,
                                     c->db_now_ms - c->heartbeat_at_ms);
        }
    }
}

void odbc_leader__cli_snapshot_prom(FILE *f,
                                    const struct odbc_leader__snapshot *s,
                                    size_t n, int candidates) {
    size_t groups = 0;

    for (size_t k = 0; k < sizeof(lease_families) / sizeof(*lease_families);
         k++)
        scalar(f, &lease_families[k], s, n);
    holders(f, &m_holder, s, n);
    holders(f, &m_old_info, s, n);
    scalar(f, &alive_family, s, n);
    if (candidates)
        per_candidate(f, &m_heartbeat, s, n, 0);
    for (size_t i = 0; i < n; i++)
        groups += s[i].shards > 0;
    if (groups == 0)
        return;
    for (size_t k = 0; k < sizeof(group_families) / sizeof(*group_families);
         k++)
        scalar(f, &group_families[k], s, n);
    per_candidate(f, &m_led, s, n, 1);
    per_candidate(f, &m_old_led, s, n, 1);
}
