/* SPDX-License-Identifier: MIT */
/*
 * snapshot_metrics.c: the metric families of a namespace's snapshot (its
 * lease, candidates and group shards), written through prom.c for
 * "status --format=prometheus" and serve's /metrics.
 */
#include <build_config.h>

#include <string.h>

#include "cli.h"

/* clang-format off */
static const struct odbc_leader__prom_family m_leader_present = {
    "odbc_leader_leader_present", ODBC_LEADER__PROM_GAUGE,
    "1 when the namespace has a leader whose lease has not expired, else 0.",
    ODBC_LEADER__PROM_NS_OLD, {NULL}};
static const struct odbc_leader__prom_family m_term = {
    "odbc_leader_term", ODBC_LEADER__PROM_GAUGE,
    "Last term (fencing token) issued in the namespace.",
    ODBC_LEADER__PROM_NS_OLD, {NULL}};
static const struct odbc_leader__prom_family m_lease_remaining = {
    "odbc_leader_lease_remaining_seconds", ODBC_LEADER__PROM_GAUGE,
    "Seconds until the leader's lease expires, in database time; 0 without "
    "a leader.",
    ODBC_LEADER__PROM_NS_OLD, {NULL}};
static const struct odbc_leader__prom_family m_clock_offset = {
    "odbc_leader_db_clock_offset_seconds", ODBC_LEADER__PROM_GAUGE,
    "Database clock minus this host's wall clock, read with the lease; a "
    "jump is a clock step on one side. No sample before the namespace's "
    "first lease row.",
    ODBC_LEADER__PROM_NS_OLD, {NULL}};
static const struct odbc_leader__prom_family m_leader_info = {
    "odbc_leader_leader_info", ODBC_LEADER__PROM_GAUGE,
    "Always 1; the leader_id label names the current leader.",
    ODBC_LEADER__PROM_NS_OLD, {"leader_id", NULL}};
static const struct odbc_leader__prom_family m_candidates_alive = {
    "odbc_leader_candidates_alive", ODBC_LEADER__PROM_GAUGE,
    "Candidates whose heartbeat has not expired.",
    ODBC_LEADER__PROM_NS_OLD, {NULL}};
static const struct odbc_leader__prom_family m_heartbeat_age = {
    "odbc_leader_candidate_heartbeat_age_seconds", ODBC_LEADER__PROM_GAUGE,
    "Seconds since each live candidate's last heartbeat, in database time.",
    ODBC_LEADER__PROM_NS_OLD, {"candidate_id", NULL}};
static const struct odbc_leader__prom_family m_group_shards = {
    "odbc_leader_group_shards", ODBC_LEADER__PROM_GAUGE,
    "Shards of the group the namespace names.",
    ODBC_LEADER__PROM_NS_OLD, {NULL}};
static const struct odbc_leader__prom_family m_group_unled = {
    "odbc_leader_group_shards_unled", ODBC_LEADER__PROM_GAUGE,
    "Shards of the group with no unexpired lease.",
    ODBC_LEADER__PROM_NS_OLD, {NULL}};
static const struct odbc_leader__prom_family m_group_led = {
    "odbc_leader_group_shards_led", ODBC_LEADER__PROM_GAUGE,
    "Shards of the group each live candidate leads.",
    ODBC_LEADER__PROM_NS_OLD, {"candidate_id", NULL}};
/* clang-format on */

/* The families of the lease: present, term, lease left, clock offset, the
 * leader's id. */
static void prom_lease(FILE *f, const struct odbc_leader__snapshot *s,
                       size_t n) {
    odbc_leader__prom_head(f, &m_leader_present);
    for (size_t i = 0; i < n; i++)
        odbc_leader__prom_int(f, &m_leader_present, s[i].ns, NULL,
                              s[i].present);
    odbc_leader__prom_head(f, &m_term);
    for (size_t i = 0; i < n; i++)
        odbc_leader__prom_int(f, &m_term, s[i].ns, NULL, s[i].lease.term);
    odbc_leader__prom_head(f, &m_lease_remaining);
    for (size_t i = 0; i < n; i++)
        odbc_leader__prom_ms(f, &m_lease_remaining, s[i].ns, NULL,
                             s[i].remaining_ms);
    odbc_leader__prom_head(f, &m_clock_offset);
    for (size_t i = 0; i < n; i++) {
        if (s[i].have_clock)
            odbc_leader__prom_ms(f, &m_clock_offset, s[i].ns, NULL,
                                 s[i].offset_ms);
    }
    odbc_leader__prom_head(f, &m_leader_info);
    for (size_t i = 0; i < n; i++) {
        const char *id[] = {s[i].lease.leader_id};

        if (s[i].present)
            odbc_leader__prom_int(f, &m_leader_info, s[i].ns, id, 1);
    }
}

/* The families of the candidates: how many are alive, and with
 * candidates set, each one's heartbeat age. */
static void prom_candidates(FILE *f, const struct odbc_leader__snapshot *s,
                            size_t n, int candidates) {
    odbc_leader__prom_head(f, &m_candidates_alive);
    for (size_t i = 0; i < n; i++)
        odbc_leader__prom_int(f, &m_candidates_alive, s[i].ns, NULL,
                              (int64_t)s[i].n);
    if (!candidates)
        return;
    odbc_leader__prom_head(f, &m_heartbeat_age);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < s[i].n; j++) {
            const struct odbc_leader_candidate *c = &s[i].cands[j];
            const char *id[] = {c->id};

            odbc_leader__prom_ms(f, &m_heartbeat_age, s[i].ns, id,
                                 c->db_now_ms - c->heartbeat_at_ms);
        }
    }
}

/* The families of sharded groups (namespaces that name one). */
static void prom_groups(FILE *f, const struct odbc_leader__snapshot *s,
                        size_t n) {
    size_t groups = 0;

    for (size_t i = 0; i < n; i++)
        groups += s[i].shards > 0;
    if (groups == 0)
        return;
    odbc_leader__prom_head(f, &m_group_shards);
    for (size_t i = 0; i < n; i++) {
        if (s[i].shards > 0)
            odbc_leader__prom_int(f, &m_group_shards, s[i].ns, NULL,
                                  s[i].shards);
    }
    odbc_leader__prom_head(f, &m_group_unled);
    for (size_t i = 0; i < n; i++) {
        if (s[i].shards > 0)
            odbc_leader__prom_int(f, &m_group_unled, s[i].ns, NULL, s[i].unled);
    }
    odbc_leader__prom_head(f, &m_group_led);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; s[i].shards > 0 && j < s[i].n; j++) {
            const char *id[] = {s[i].cands[j].id};

            odbc_leader__prom_int(f, &m_group_led, s[i].ns, id, s[i].leads[j]);
        }
    }
}

void odbc_leader__cli_snapshot_prom(FILE *f,
                                    const struct odbc_leader__snapshot *s,
                                    size_t n, int candidates) {
    prom_lease(f, s, n);
    prom_candidates(f, s, n, candidates);
    prom_groups(f, s, n);
}
