/* SPDX-License-Identifier: MIT */
/*
 * serve_metrics.c: serve's GET /metrics: for every namespace served, its
 * snapshot (snapshot_metrics.c), its fires by job and its terms by how
 * they ended, as Prometheus text through prom.c. What it says of an
 * election log is kept between scrapes (the tally) and read again only
 * when the lease changed hands or the read is 10 s old.
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

/* How a term ended: the values of the label ended of
 * odbc_leader_elections; "current" is a term that has not. */
static const char *const ended_how[] = {"resigned", "requested",   "handover",
                                        "expired",  "quarantined", "current"};
#define N_ENDED (sizeof(ended_how) / sizeof(ended_how[0]))

/* What /metrics says of a namespace's election log, kept between scrapes
 * (ELECTIONS_REREAD_NS). */
struct odbc_leader__serve_tally {
    int64_t read_ns;      /* monotonic: when read; 0 = never, or invalid */
    unsigned long failed; /* the namespace's failed reads at that read */
    int64_t term;         /* the lease's term and leader at that read */
    char leader[129];
    int kept;                /* the dialect keeps a log (else no samples) */
    long ended[N_ENDED];     /* terms by ended_how[] */
    int64_t last_started_ms; /* the newest term's start; 0 = no term */
};

/* What the metrics say of one job. */
struct job_stats {
    const char *job; /* borrowed from the fire list */
    long ok, failed, running;
    int64_t last_ok_ms;        /* nominal time of the newest success; 0 none */
    int64_t oldest_running_ms; /* age of the oldest unfinished fire */
};

/* clang-format off */
static const struct odbc_leader__prom_family m_up = {
    "odbc_leader_up", ODBC_LEADER__PROM_GAUGE,
    "1 when the namespace's tables could be read, else 0.",
    ODBC_LEADER__PROM_NS_OLD, {NULL}};
static const struct odbc_leader__prom_family m_fires = {
    "odbc_leader_fires", ODBC_LEADER__PROM_GAUGE,
    "Fires in the ledger (within LeaderFireRetention) by job and outcome: "
    "ok, failed (a non-zero status) or running (unfinished).",
    ODBC_LEADER__PROM_NS_OLD, {"job_name", "outcome", NULL}};
static const struct odbc_leader__prom_family m_last_success = {
    "odbc_leader_fire_last_success_timestamp_seconds", ODBC_LEADER__PROM_GAUGE,
    "Nominal time of the job's newest successful fire, Unix seconds.",
    ODBC_LEADER__PROM_NS_OLD, {"job_name", NULL}};
static const struct odbc_leader__prom_family m_running_age = {
    "odbc_leader_fire_running_oldest_age_seconds", ODBC_LEADER__PROM_GAUGE,
    "Seconds since the job's oldest unfinished fire was claimed, in "
    "database time.",
    ODBC_LEADER__PROM_NS_OLD, {"job_name", NULL}};
static const struct odbc_leader__prom_family m_elections = {
    "odbc_leader_elections", ODBC_LEADER__PROM_GAUGE,
    "Terms in the election log (within LeaderElectionRetention) by how they "
    "ended: resigned, requested, handover, expired, quarantined, or current "
    "(not ended).",
    ODBC_LEADER__PROM_NS_OLD, {"ended", NULL}};
static const struct odbc_leader__prom_family m_last_election = {
    "odbc_leader_last_election_timestamp_seconds", ODBC_LEADER__PROM_GAUGE,
    "Start of the newest term in the election log, Unix seconds (database "
    "clock).",
    ODBC_LEADER__PROM_NS_OLD, {NULL}};
/* clang-format on */

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
    for (size_t i = from; i < to; i++) {
        const struct odbc_leader_fire *f = &l->v[i];

        if (f->finished_at_ms == 0) {
            int64_t age = f->db_now_ms - f->claimed_at_ms;

            j->running++;
            if (age > j->oldest_running_ms)
                j->oldest_running_ms = age;
        } else if (f->status == 0) {
            j->ok++;
            j->last_ok_ms = f->fire_ms != 0 ? f->fire_ms : f->finished_at_ms;
        } else {
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

/* Writes the samples of family k (0 fires, 1 last success, 2 oldest
 * running) of job j of namespace ns. */
static void job_samples(FILE *f, size_t k, const char *ns,
                        const struct job_stats *j) {
    static const char *const outcome[] = {"ok", "failed", "running"};
    const long v[] = {j->ok, j->failed, j->running};

    for (size_t o = 0; k == 0 && o < 3; o++) {
        const char *labels[] = {j->job, outcome[o]};

        odbc_leader__prom_int(f, &m_fires, ns, labels, v[o]);
    }
    if (k == 1 && j->last_ok_ms != 0)
        odbc_leader__prom_ms(f, &m_last_success, ns, &j->job, j->last_ok_ms);
    if (k == 2 && j->running != 0)
        odbc_leader__prom_ms(f, &m_running_age, ns, &j->job,
                             j->oldest_running_ms);
}

/* Prints the fire families of the namespaces whose ledgers are in l[]. */
static void prom_fires(FILE *f, const struct odbc_leader__serve *sv,
                       const struct odbc_leader__fire_list *l) {
    static const struct odbc_leader__prom_family *const heads[] = {
        &m_fires, &m_last_success, &m_running_age};

    for (size_t k = 0; k < 3; k++) {
        odbc_leader__prom_head(f, heads[k]);
        for (size_t i = 0; i < sv->n; i++) {
            for (size_t from = 0, to; from < l[i].n; from = to) {
                struct job_stats j;

                to = job_end(&l[i], from);
                job_sum(&l[i], from, to, &j);
                job_samples(f, k, sv->ns[i].name, &j);
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

/* Brings ns's tally up to date for the lease read in s (re-reading the log
 * only when needed). Returns 0, or -1 with ns->error set when the log
 * cannot be read. */
static int ns_tally(struct odbc_leader__serve *sv,
                    struct odbc_leader__serve_ns *ns,
                    const struct odbc_leader__snapshot *s) {
    struct odbc_leader__election_list l = {NULL, 0, 0, 0};
    int64_t now = odbc_leader__now_ns(NULL);
    struct odbc_leader__serve_tally *t;
    int rc;

    if (ns->tally == NULL)
        ns->tally = calloc(1, sizeof(*ns->tally));
    if (ns->tally == NULL) {
        snprintf(ns->error, sizeof(ns->error), "out of memory");
        return -1;
    }
    t = ns->tally;
    if (tally_fresh(ns, t, s, now))
        return 0;
    rc = odbc_leader__serve_elections(sv, ns, &l);
    memset(t, 0, sizeof(*t));
    if (rc >= 0) {
        t->read_ns = now;
        t->failed = ns->failed;
        t->term = s->lease.term;
        snprintf(t->leader, sizeof(t->leader), "%s", s->lease.leader_id);
        t->kept = rc == 0;
    }
    for (size_t i = 0; i < l.n; i++) {
        size_t k = ended_index(&l.v[i]);

        if (k < N_ENDED)
            t->ended[k]++;
        t->last_started_ms = l.v[i].started_at_ms;
    }
    free(l.v);
    return rc >= 0 ? 0 : -1;
}

void odbc_leader__serve_tally_free(struct odbc_leader__serve_ns *ns) {
    free(ns->tally);
    ns->tally = NULL;
}

/* Prints the election families of the namespaces that are up[] and keep
 * a log (their tallies). */
static void prom_elections(FILE *f, const struct odbc_leader__serve *sv,
                           const int *up) {
    odbc_leader__prom_head(f, &m_elections);
    for (size_t i = 0; i < sv->n; i++) {
        const struct odbc_leader__serve_tally *t = sv->ns[i].tally;

        for (size_t k = 0; up[i] && t->kept && k < N_ENDED; k++)
            odbc_leader__prom_int(f, &m_elections, sv->ns[i].name,
                                  &ended_how[k], t->ended[k]);
    }
    odbc_leader__prom_head(f, &m_last_election);
    for (size_t i = 0; i < sv->n; i++) {
        const struct odbc_leader__serve_tally *t = sv->ns[i].tally;

        if (up[i] && t->last_started_ms != 0)
            odbc_leader__prom_ms(f, &m_last_election, sv->ns[i].name, NULL,
                                 t->last_started_ms);
    }
}

/* The reads of one scrape, one entry per namespace served. */
struct scrape {
    struct odbc_leader__snapshot *s;  /* every namespace's */
    struct odbc_leader__snapshot *ok; /* those up, in order (borrowed) */
    struct odbc_leader__fire_list *l; /* ledgers, sorted by job */
    int *up;                          /* read */
    size_t nok;
};

/* Allocates *sc for n namespaces. Returns 0 or -1 (out of memory; free
 * *sc anyway). */
static int scrape_alloc(struct scrape *sc, size_t n) {
    memset(sc, 0, sizeof(*sc));
    sc->s = calloc(n, sizeof(*sc->s));
    sc->ok = calloc(n, sizeof(*sc->ok));
    sc->l = calloc(n, sizeof(*sc->l));
    sc->up = calloc(n, sizeof(*sc->up));
    return sc->s && sc->ok && sc->l && sc->up ? 0 : -1;
}

/* Frees what *sc owns for n namespaces. */
static void scrape_free(struct scrape *sc, size_t n) {
    for (size_t i = 0; sc->s != NULL && i < n; i++)
        odbc_leader__cli_snapshot_free(&sc->s[i]);
    for (size_t i = 0; sc->l != NULL && i < n; i++)
        free(sc->l[i].v);
    free(sc->s);
    free(sc->ok);
    free(sc->l);
    free(sc->up);
}

/* Reads every namespace into *sc: snapshot, ledger and tally; a namespace
 * is up when all three could be read. */
static void scrape_read(struct odbc_leader__serve *sv, struct scrape *sc) {
    for (size_t i = 0; i < sv->n; i++) {
        struct odbc_leader__serve_ns *ns = &sv->ns[i];

        sc->up[i] = odbc_leader__serve_snapshot(sv, ns, &sc->s[i]) == 0 &&
                    odbc_leader__serve_fires(sv, ns, NULL, &sc->l[i]) == 0 &&
                    ns_tally(sv, ns, &sc->s[i]) == 0;
        if (sc->up[i]) {
            sc->ok[sc->nok++] = sc->s[i];
            if (sc->l[i].n > 1)
                qsort(sc->l[i].v, sc->l[i].n, sizeof(*sc->l[i].v), by_job);
        } else {
            sc->l[i].n = 0;
        }
    }
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
    odbc_leader__prom_head(b.f, &m_up);
    for (size_t i = 0; i < sv->n; i++)
        odbc_leader__prom_int(b.f, &m_up, sv->ns[i].name, NULL, sc.up[i]);
    odbc_leader__cli_snapshot_prom(b.f, sc.ok, sc.nok, 1);
    prom_fires(b.f, sv, sc.l);
    prom_elections(b.f, sv, sc.up);
    ret = odbc_leader__httpd_reply_body(
        conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", &b);
out:
    scrape_free(&sc, sv->n);
    return ret;
}
