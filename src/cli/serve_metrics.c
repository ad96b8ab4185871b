/* SPDX-License-Identifier: MIT */
/*
 * serve_metrics.c: serve's GET /metrics: serve's own series (build, scrape
 * duration), then for every namespace served whether it could be read and
 * how often it could not, its snapshot (snapshot_metrics.c), its fires by
 * job, its jobs' refused claims (docs/schedules.md) and its terms, as
 * Prometheus text through prom.c. The counters of
 * fires and terms are serve_counters.c's; the gauges say what the
 * database holds now. What it reads of an election log is kept between
 * scrapes (the tally) and read again only when the lease changed hands,
 * a read failed, or the read is 10 s old.
 *
 * Label names: leader_namespace, not namespace, which Kubernetes service
 * discovery sets on every target (Prometheus would rename ours
 * exported_namespace). For one release the series that existed before
 * keep namespace too, and the renamed families are also written under
 * their old names, marked deprecated in their help (docs/operations.md).
 */
#include <build_config.h>

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "serve.h"

/* /metrics reads a namespace's whole election log again only when the
 * lease changed hands (term or leader) since the last read, or when that
 * read is this old: a scrape every second of a long log costs one read
 * per term and one per 10 s, not one per scrape. */
#define ELECTIONS_REREAD_NS (10 * INT64_C(1000000000))
/* The labels of the series that existed before leader_namespace. */
#define NS_BOTH (ODBC_LEADER__PROM_NS_NEW | ODBC_LEADER__PROM_NS_OLD)
#define NS_NEW ODBC_LEADER__PROM_NS_NEW
#define NS_OLD ODBC_LEADER__PROM_NS_OLD
#define GAUGE ODBC_LEADER__PROM_GAUGE
#define DEPRECATED "Deprecated, removed in the next release: "

/* How a term ended, as the deprecated odbc_leader_elections counts the
 * log's terms; "current" is a term that has not. */
static const char *const ended_how[] = {"resigned", "requested",   "handover",
                                        "expired",  "quarantined", "current"};
#define N_ENDED (sizeof(ended_how) / sizeof(ended_how[0]))

/* What /metrics read of a namespace's election log, kept between scrapes
 * (ELECTIONS_REREAD_NS). */
struct odbc_leader__serve_tally {
    int64_t read_ns;      /* monotonic: when read; 0 = never, or invalid */
    unsigned long failed; /* the namespace's failed reads at that read */
    int64_t term;         /* the lease's term and leader at that read */
    char leader[129];
    int kept;                /* the dialect keeps a log (else no samples) */
    long ended[N_ENDED];     /* terms in the log by ended_how[] */
    int64_t last_started_ms; /* the newest term's start; 0 = no term */
};

/* What the gauges say of one job, from one read of the ledger. */
struct job_stats {
    const char *job; /* borrowed from the fire list */
    long ok, failed, running;
    int64_t last_ok_ms;        /* nominal time of the newest success; 0 none */
    int64_t last_ok_end_ms;    /* when the newest success finished; 0 none */
    int64_t oldest_running_ms; /* age of the oldest unfinished fire */
    int64_t db_now_ms;         /* the database's time at the read */
};

/* clang-format off */
static const struct odbc_leader__prom_family m_build = {
    "odbc_leader_build_info", GAUGE,
    "Always 1; version is odbc-leader's.", 0, {"version", NULL}};
static const struct odbc_leader__prom_family m_duration = {
    "odbc_leader_scrape_duration_seconds", GAUGE,
    "Seconds this scrape took to read every namespace served.", 0, {NULL}};
static const struct odbc_leader__prom_family m_up = {
    "odbc_leader_up", GAUGE,
    "1 when the namespace's tables could be read at this scrape, else 0.",
    NS_BOTH, {NULL}};
static const struct odbc_leader__prom_family m_errors = {
    "odbc_leader_read_errors_total", ODBC_LEADER__PROM_COUNTER,
    "Reads of the namespace's tables that failed since serve started, by "
    "any request: each failed attempt (a failed read is tried once more on "
    "a new connection) and each time no connection could be had.",
    NS_NEW, {NULL}};
static const struct odbc_leader__prom_family m_running = {
    "odbc_leader_fires_running", GAUGE,
    "Fires of the job in the ledger that run: in the leader's term, or in "
    "a term that ended and that no later term has swept yet (their "
    "claimant died; the next leader records them interrupted).",
    NS_NEW, {"job_name", NULL}};
static const struct odbc_leader__prom_family m_success_time = {
    "odbc_leader_fire_last_success_timestamp_seconds", GAUGE,
    "Nominal time of the job's newest successful fire, Unix seconds (the "
    "time its host named; for display: alert on "
    "odbc_leader_fire_last_success_age_seconds).",
    NS_BOTH, {"job_name", NULL}};
static const struct odbc_leader__prom_family m_success_age = {
    "odbc_leader_fire_last_success_age_seconds", GAUGE,
    "Seconds since the job's newest successful fire finished, in database "
    "time.",
    NS_NEW, {"job_name", NULL}};
static const struct odbc_leader__prom_family m_running_age = {
    "odbc_leader_fire_running_oldest_age_seconds", GAUGE,
    "Seconds since the job's oldest running fire was claimed, in database "
    "time.",
    NS_BOTH, {"job_name", NULL}};
static const struct odbc_leader__prom_family m_old_fires = {
    "odbc_leader_fires", GAUGE,
    DEPRECATED "use odbc_leader_fires_total and odbc_leader_fires_running. "
    "Fires in the ledger (within LeaderFireRetention) by job and outcome: "
    "ok, failed (a non-zero status) or running (unfinished).",
    NS_OLD, {"job_name", "outcome", NULL}};
static const struct odbc_leader__prom_family m_election_time = {
    "odbc_leader_last_election_timestamp_seconds", GAUGE,
    "Start of the newest term in the election log, Unix seconds (database "
    "clock; for display: alert on odbc_leader_last_election_age_seconds).",
    NS_BOTH, {NULL}};
static const struct odbc_leader__prom_family m_election_age = {
    "odbc_leader_last_election_age_seconds", GAUGE,
    "Seconds since the newest term in the election log began, in database "
    "time.",
    NS_NEW, {NULL}};
static const struct odbc_leader__prom_family m_old_elections = {
    "odbc_leader_elections", GAUGE,
    DEPRECATED "use odbc_leader_terms_ended_total and "
    "odbc_leader_takeovers_total. Terms in the election log (within "
    "LeaderElectionRetention) by how they ended: resigned, requested, "
    "handover, expired, quarantined, or current (not ended).",
    NS_OLD, {"ended", NULL}};
/* clang-format on */

/* The reads of one scrape, one entry per namespace served. */
struct scrape {
    struct odbc_leader__snapshot *s;        /* every namespace's */
    struct odbc_leader__snapshot *ok;       /* those up, in order (borrowed) */
    struct odbc_leader__fire_list *l;       /* ledgers, sorted by job */
    struct odbc_leader__schedule_list *sch; /* schedule identities */
    int *up;                                /* read */
    size_t nok;
    int64_t took_ns; /* how long the reads took */
};

static const struct odbc_leader__prom_family m_refusals = {
    "odbc_leader_schedule_refusals_total",
    ODBC_LEADER__PROM_COUNTER,
    "Claims of the job refused since its schedule was recorded (or last "
    "changed) because a host computed its fires by another schedule: "
    "another time zone, expression or engine (docs/schedules.md).",
    NS_NEW,
    {"job_name", NULL}};

/* Writes the refused claims of every job with a recorded schedule. */
static void prom_schedules(FILE *f, const struct odbc_leader__serve *sv,
                           const struct scrape *sc) {
    odbc_leader__prom_head(f, &m_refusals);
    for (size_t i = 0; i < sv->n; i++) {
        for (size_t k = 0; k < sc->sch[i].n; k++) {
            const char *job = sc->sch[i].v[k].job;

            odbc_leader__prom_int(f, &m_refusals, sv->ns[i].name, &job,
                                  sc->sch[i].v[k].refusals);
        }
    }
}

/* qsort order of fires: by job, then by fire time. */
static int by_job(const void *a, const void *b) {
    const struct odbc_leader_fire *x = a, *y = b;
    int c = strcmp(x->job, y->job);

    if (c != 0)
        return c;
    return (x->fire_ms > y->fire_ms) - (x->fire_ms < y->fire_ms);
}

/* Sums the fires of one job, l->v[from..to), sorted by fire time. */
static void job_sum(const struct odbc_leader__fire_list *l, size_t from,
                    size_t to, struct job_stats *j) {
    memset(j, 0, sizeof(*j));
    j->job = l->v[from].job;
    j->db_now_ms = l->v[from].db_now_ms;
    for (size_t i = from; i < to; i++) {
        const struct odbc_leader_fire *f = &l->v[i];
        const char *state = odbc_leader__cli_fire_state(f);

        if (strcmp(state, "running") == 0) {
            int64_t age = f->db_now_ms - f->claimed_at_ms;

            j->running++;
            if (age > j->oldest_running_ms)
                j->oldest_running_ms = age;
        } else if (strcmp(state, "done") == 0) {
            j->ok++;
            j->last_ok_ms = f->fire_ms > 0 ? f->fire_ms : f->finished_at_ms;
            if (f->finished_at_ms > j->last_ok_end_ms)
                j->last_ok_end_ms = f->finished_at_ms;
        } else if (strcmp(state, "failed") == 0) {
            j->failed++;
        }
    }
}

/* Returns the end of the job that starts at l->v[from]: the first index
 * of another job, or l->n. */
static size_t job_end(const struct odbc_leader__fire_list *l, size_t from) {
    size_t to = from + 1;

    while (to < l->n && strcmp(l->v[to].job, l->v[from].job) == 0)
        to++;
    return to;
}

/* Writes the samples of job j of namespace ns in family m. */
static void job_samples(FILE *f, const struct odbc_leader__prom_family *m,
                        const char *ns, const struct job_stats *j) {
    static const char *const outcome[] = {"ok", "failed", "running"};
    const long v[] = {j->ok, j->failed, j->running};

    if (m == &m_running)
        odbc_leader__prom_int(f, m, ns, &j->job, j->running);
    else if (m == &m_success_time && j->last_ok_ms != 0)
        odbc_leader__prom_ms(f, m, ns, &j->job, j->last_ok_ms);
    else if (m == &m_success_age && j->last_ok_end_ms != 0)
        odbc_leader__prom_ms(f, m, ns, &j->job,
                             j->db_now_ms - j->last_ok_end_ms);
    else if (m == &m_running_age && j->running != 0)
        odbc_leader__prom_ms(f, m, ns, &j->job, j->oldest_running_ms);
    for (size_t o = 0; m == &m_old_fires && o < 3; o++) {
        const char *labels[] = {j->job, outcome[o]};

        odbc_leader__prom_int(f, m, ns, labels, v[o]);
    }
}

/* Writes the fire families: the counters, then the gauges of the jobs of
 * the namespaces whose ledgers are in l[]. */
static void prom_fires(FILE *f, const struct odbc_leader__serve *sv,
                       const struct odbc_leader__fire_list *l) {
    static const struct odbc_leader__prom_family *const gauges[] = {
        &m_running, &m_success_time, &m_success_age, &m_running_age,
        &m_old_fires};

    odbc_leader__serve_counters_prom(f, sv, 1);
    for (size_t k = 0; k < sizeof(gauges) / sizeof(gauges[0]); k++) {
        odbc_leader__prom_head(f, gauges[k]);
        for (size_t i = 0; i < sv->n; i++) {
            for (size_t from = 0, to; from < l[i].n; from = to) {
                struct job_stats j;

                to = job_end(&l[i], from);
                job_sum(&l[i], from, to, &j);
                job_samples(f, gauges[k], sv->ns[i].name, &j);
            }
        }
    }
}

/* Returns the index in ended_how[] of how term e ended, or N_ENDED for a
 * value this serve does not know. */
static size_t ended_index(const struct odbc_leader_election *e) {
    if (e->ended_how[0] == '\0')
        return N_ENDED - 1;
    for (size_t k = 0; k + 1 < N_ENDED; k++) {
        if (strcmp(e->ended_how, ended_how[k]) == 0)
            return k;
    }
    return N_ENDED;
}

/* Returns 1 when ns's tally t holds for the lease read in s: read less
 * than ELECTIONS_REREAD_NS ago, with no failed read since, for the same
 * term and leader. */
static int tally_fresh(const struct odbc_leader__serve_ns *ns,
                       const struct odbc_leader__serve_tally *t,
                       const struct odbc_leader__snapshot *s, int64_t now) {
    return t->read_ns != 0 && now - t->read_ns < ELECTIONS_REREAD_NS &&
           t->failed == ns->failed && t->term == s->lease.term &&
           strcmp(t->leader, s->lease.leader_id) == 0;
}

/* Fills ns's tally t from the log l read at now (rc as
 * odbc_leader__serve_elections returned) and counts its terms. Returns 0,
 * or -1 with ns->error set. */
static int tally_fill(struct odbc_leader__serve *sv,
                      struct odbc_leader__serve_ns *ns,
                      const struct odbc_leader__snapshot *s,
                      struct odbc_leader__election_list *l, int64_t now) {
    struct odbc_leader__serve_tally *t = ns->tally;

    if (odbc_leader__serve_counters_terms(
            ns->counters, l, (now - sv->start_ns) / 1000000) != 0) {
        snprintf(ns->error, sizeof(ns->error), "out of memory");
        return -1;
    }
    t->read_ns = now;
    t->failed = ns->failed;
    t->term = s->lease.term;
    snprintf(t->leader, sizeof(t->leader), "%s", s->lease.leader_id);
    t->kept = 1;
    for (size_t i = 0; i < l->n; i++) {
        size_t k = ended_index(&l->v[i]);

        if (k < N_ENDED)
            t->ended[k]++;
        t->last_started_ms = l->v[i].started_at_ms;
    }
    return 0;
}

/* Brings ns's tally up to date for the lease read in s (re-reading the log
 * only when needed). Returns 0, or -1 with ns->error set when the log
 * cannot be read. */
static int ns_tally(struct odbc_leader__serve *sv,
                    struct odbc_leader__serve_ns *ns,
                    const struct odbc_leader__snapshot *s) {
    struct odbc_leader__election_list l = {NULL, 0, 0, 0};
    int64_t now = odbc_leader__now_ns(NULL);
    int rc;

    if (tally_fresh(ns, ns->tally, s, now))
        return 0;
    rc = odbc_leader__serve_elections(sv, ns, &l);
    memset(ns->tally, 0, sizeof(*ns->tally));
    if (rc == 0) {
        rc = tally_fill(sv, ns, s, &l, now);
    } else if (rc > 0) { /* the dialect keeps no log */
        ns->tally->read_ns = now;
        ns->tally->failed = ns->failed;
        ns->tally->term = s->lease.term;
        snprintf(ns->tally->leader, sizeof(ns->tally->leader), "%s",
                 s->lease.leader_id);
        rc = 0;
    }
    free(l.v);
    return rc;
}

/* Writes the election families: the counters, then the gauges of the
 * namespaces that are up and keep a log (their tallies). */
static void prom_elections(FILE *f, const struct odbc_leader__serve *sv,
                           const struct scrape *sc) {
    odbc_leader__serve_counters_prom(f, sv, 0);
    odbc_leader__prom_head(f, &m_election_time);
    for (size_t i = 0; i < sv->n; i++) {
        const struct odbc_leader__serve_tally *t = sv->ns[i].tally;

        if (sc->up[i] && t->last_started_ms != 0)
            odbc_leader__prom_ms(f, &m_election_time, sv->ns[i].name, NULL,
                                 t->last_started_ms);
    }
    odbc_leader__prom_head(f, &m_election_age);
    for (size_t i = 0; i < sv->n; i++) {
        const struct odbc_leader__serve_tally *t = sv->ns[i].tally;
        int64_t db_now = sc->s[i].lease.db_now_ms;

        if (sc->up[i] && t->last_started_ms != 0 && db_now > 0)
            odbc_leader__prom_ms(f, &m_election_age, sv->ns[i].name, NULL,
                                 db_now - t->last_started_ms);
    }
    odbc_leader__prom_head(f, &m_old_elections);
    for (size_t i = 0; i < sv->n; i++) {
        const struct odbc_leader__serve_tally *t = sv->ns[i].tally;

        for (size_t k = 0; sc->up[i] && t->kept && k < N_ENDED; k++)
            odbc_leader__prom_int(f, &m_old_elections, sv->ns[i].name,
                                  &ended_how[k], t->ended[k]);
    }
}

/* Makes sure ns has a tally and counters. Returns 0, or -1 with
 * ns->error set. */
static int ns_kept(struct odbc_leader__serve_ns *ns) {
    if (ns->tally == NULL)
        ns->tally = calloc(1, sizeof(*ns->tally));
    if (ns->counters == NULL)
        ns->counters = odbc_leader__serve_counters_new();
    if (ns->tally != NULL && ns->counters != NULL)
        return 0;
    snprintf(ns->error, sizeof(ns->error), "out of memory");
    return -1;
}

void odbc_leader__serve_metrics_free(struct odbc_leader__serve_ns *ns) {
    free(ns->tally);
    ns->tally = NULL;
    odbc_leader__serve_counters_free(ns->counters);
    ns->counters = NULL;
}

/* Reads ns's ledger into *l (sorted by job) and counts its fires. Returns
 * 0, or -1 with ns->error set. */
static int ns_fires(struct odbc_leader__serve *sv,
                    struct odbc_leader__serve_ns *ns,
                    struct odbc_leader__fire_list *l) {
    int64_t run_ms = (odbc_leader__now_ns(NULL) - sv->start_ns) / 1000000;

    if (odbc_leader__serve_fires(sv, ns, NULL, l) != 0)
        return -1;
    if (odbc_leader__serve_counters_fires(ns->counters, l, run_ms) != 0) {
        snprintf(ns->error, sizeof(ns->error), "out of memory");
        return -1;
    }
    if (l->n > 1)
        qsort(l->v, l->n, sizeof(*l->v), by_job);
    return 0;
}

/* Allocates *sc for n namespaces. Returns 0 or -1 (out of memory; free
 * *sc anyway). */
static int scrape_alloc(struct scrape *sc, size_t n) {
    memset(sc, 0, sizeof(*sc));
    sc->s = calloc(n, sizeof(*sc->s));
    sc->ok = calloc(n, sizeof(*sc->ok));
    sc->l = calloc(n, sizeof(*sc->l));
    sc->sch = calloc(n, sizeof(*sc->sch));
    sc->up = calloc(n, sizeof(*sc->up));
    return sc->s && sc->ok && sc->l && sc->sch && sc->up ? 0 : -1;
}

/* Frees what *sc owns for n namespaces. */
static void scrape_free(struct scrape *sc, size_t n) {
    for (size_t i = 0; sc->s != NULL && i < n; i++)
        odbc_leader__cli_snapshot_free(&sc->s[i]);
    for (size_t i = 0; sc->l != NULL && i < n; i++)
        free(sc->l[i].v);
    for (size_t i = 0; sc->sch != NULL && i < n; i++)
        free(sc->sch[i].v);
    free(sc->sch);
    free(sc->s);
    free(sc->ok);
    free(sc->l);
    free(sc->up);
}

/* Reads every namespace into *sc: snapshot, ledger, schedules and
 * election log; a namespace is up when all four could be read. */
static void scrape_read(struct odbc_leader__serve *sv, struct scrape *sc) {
    int64_t start = odbc_leader__now_ns(NULL);

    for (size_t i = 0; i < sv->n; i++) {
        struct odbc_leader__serve_ns *ns = &sv->ns[i];

        sc->up[i] = ns_kept(ns) == 0 &&
                    odbc_leader__serve_snapshot(sv, ns, &sc->s[i]) == 0 &&
                    ns_fires(sv, ns, &sc->l[i]) == 0 &&
                    odbc_leader__serve_schedules(sv, ns, &sc->sch[i]) == 0 &&
                    ns_tally(sv, ns, &sc->s[i]) == 0;
        if (sc->up[i]) {
            sc->ok[sc->nok++] = sc->s[i];
        } else {
            sc->l[i].n = 0;
            sc->sch[i].n = 0;
        }
    }
    sc->took_ns = odbc_leader__now_ns(NULL) - start;
}

/* Writes serve's own families and those of whether each namespace could
 * be read. */
static void prom_serve(FILE *f, const struct odbc_leader__serve *sv,
                       const struct scrape *sc) {
    const char *version[] = {PACKAGE_VERSION};

    odbc_leader__prom_head(f, &m_build);
    odbc_leader__prom_int(f, &m_build, NULL, version, 1);
    odbc_leader__prom_head(f, &m_duration);
    odbc_leader__prom_nanos(f, &m_duration, NULL, NULL, sc->took_ns);
    odbc_leader__prom_head(f, &m_up);
    for (size_t i = 0; i < sv->n; i++)
        odbc_leader__prom_int(f, &m_up, sv->ns[i].name, NULL, sc->up[i]);
    odbc_leader__prom_head(f, &m_errors);
    for (size_t i = 0; i < sv->n; i++)
        odbc_leader__prom_int(f, &m_errors, sv->ns[i].name, NULL,
                              (int64_t)sv->ns[i].failed);
}

enum MHD_Result odbc_leader__serve_metrics(struct odbc_leader__serve *sv,
                                           struct MHD_Connection *conn) {
    enum MHD_Result ret;
    struct scrape sc;
    struct odbc_leader__body b;

    if (scrape_alloc(&sc, sv->n) != 0 ||
        odbc_leader__httpd_body_open(&b) != 0) {
        ret = odbc_leader__httpd_reply_text(
            conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
        goto out;
    }
    scrape_read(sv, &sc);
    prom_serve(b.f, sv, &sc);
    odbc_leader__cli_snapshot_prom(b.f, sc.ok, sc.nok, 1);
    prom_fires(b.f, sv, sc.l);
    prom_schedules(b.f, sv, &sc);
    prom_elections(b.f, sv, &sc);
    ret = odbc_leader__httpd_reply_body(
        conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", &b);
out:
    scrape_free(&sc, sv->n);
    return ret;
}
