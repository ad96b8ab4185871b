/* SPDX-License-Identifier: MIT */
/*
 * serve_counters.c: the counters of serve's /metrics: events serve has
 * read in the database since it started, kept in memory so that pruning
 * old rows (LeaderFireRetention, LeaderElectionRetention) cannot lower
 * them. Each read of a namespace's ledger or election log is compared with
 * the rows of the read before, by identity (a fire: job, fire time and
 * claim time; a term: its number); an event is counted once, at the first
 * read that shows it:
 *   - fires_total{outcome}: a fire read ended (ok, failed, interrupted,
 *     abandoned, skipped: its state) that the read before did not show
 *     ended;
 *   - fire_recoveries_total: a fire read with an attempt above 1 that the
 *     read before did not show (an attempt's take gives the row a new
 *     claim time, so a new identity);
 *   - terms_ended_total{how}: a term read ended that the read before did
 *     not show ended;
 *   - takeovers_total: a term the read before did not show.
 * Only events at or after serve's start count: the row's time (finished,
 * ended, started; database clock) must not be before serve's start in
 * database time, which is the read's database time minus how long serve
 * has run (on this host's monotonic clock). The first read of a namespace,
 * and of a job new to it, only makes its counters appear, at 0: its rows
 * are counted from the next read on, so that Prometheus sees each counter
 * at 0 before it rises.
 */
#include <build_config.h>

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "serve.h"

/* How a term ended: the values of the label how (the library's
 * ended_how), in the order they are written. */
static const char *const how_ended[] = {"resigned", "requested", "handover",
                                        "expired", "quarantined"};
#define N_HOW (sizeof(how_ended) / sizeof(how_ended[0]))

/* How a fire ended: the values of the label outcome, in the order they
 * are written. */
static const char *const outcomes[] = {"ok", "failed", "interrupted",
                                       "abandoned", "skipped"};
#define N_OUTCOME (sizeof(outcomes) / sizeof(outcomes[0]))

/* A job serve has seen in the ledger, and its counts. */
struct job_count {
    char name[ODBC_LEADER__NAME_MAX + 1];
    int64_t ended[N_OUTCOME];
    int64_t recoveries;
    unsigned long born; /* the read that first showed it */
};

/* A fire as a read showed it: its identity, and whether it had finished. */
struct fire_seen {
    uint32_t job; /* index into jobs */
    int64_t fire_ms, claimed_at_ms;
    int finished;
};

/* A term as a read showed it. */
struct term_seen {
    int64_t term;
    int ended;
};

struct odbc_leader__serve_counters {
    struct job_count *jobs; /* in order of first sight (fires index it) */
    uint32_t *by_name;      /* indexes of jobs, sorted by name */
    size_t njobs, jobs_cap, by_name_cap;
    unsigned long fire_reads; /* ledger reads so far */
    struct fire_seen *fires;  /* the last read's, sorted (fire_order) */
    size_t nfires;
    unsigned long term_reads; /* election log reads so far */
    int64_t ended[N_HOW];
    int64_t takeovers;
    struct term_seen *terms; /* the last read's, sorted by term */
    size_t nterms;
};

/* A fire of the read being counted, with what counting needs. */
struct fire_now {
    struct fire_seen id;
    int64_t finished_at_ms, claimed_at_ms, db_now_ms;
    int outcome; /* index into outcomes, or -1 while not ended */
    int attempt;
};

/* clang-format off */
static const struct odbc_leader__prom_family m_fires = {
    "odbc_leader_fires_total", ODBC_LEADER__PROM_COUNTER,
    "Fires of the job that ended since serve started, by outcome: ok "
    "(status 0), failed, interrupted (its term ended first), abandoned "
    "(its last allowed attempt was interrupted) or skipped (its job was "
    "paused). Each counts once, at the first read of the ledger that shows "
    "it ended, when it ended (database clock) after serve started; pruning "
    "does not lower it.",
    ODBC_LEADER__PROM_NS_NEW, {"job_name", "outcome", NULL}};
static const struct odbc_leader__prom_family m_recoveries = {
    "odbc_leader_fire_recoveries_total", ODBC_LEADER__PROM_COUNTER,
    "Attempts of the job's fires that recovered an interrupted attempt "
    "(attempt 2 or later) and were claimed since serve started "
    "(docs/lifecycle.md).",
    ODBC_LEADER__PROM_NS_NEW, {"job_name", NULL}};
static const struct odbc_leader__prom_family m_ended = {
    "odbc_leader_terms_ended_total", ODBC_LEADER__PROM_COUNTER,
    "Terms that ended since serve started, by how: resigned, requested, "
    "handover, expired (the lease ran out) or quarantined. Each counts "
    "once, at the first read of the election log that shows it ended, when "
    "it ended (database clock) after serve started.",
    ODBC_LEADER__PROM_NS_NEW, {"how", NULL}};
static const struct odbc_leader__prom_family m_takeovers = {
    "odbc_leader_takeovers_total", ODBC_LEADER__PROM_COUNTER,
    "Terms that began since serve started: a candidate took the lease. "
    "Each counts once, at the first read of the election log that shows "
    "it, when it began (database clock) after serve started.",
    ODBC_LEADER__PROM_NS_NEW, {NULL}};
/* clang-format on */

struct odbc_leader__serve_counters *odbc_leader__serve_counters_new(void) {
    return calloc(1, sizeof(struct odbc_leader__serve_counters));
}

void odbc_leader__serve_counters_free(struct odbc_leader__serve_counters *c) {
    if (c == NULL)
        return;
    free(c->jobs);
    free(c->by_name);
    free(c->fires);
    free(c->terms);
    free(c);
}

/* Returns the position in c->by_name where name is or would go; *found
 * says which. */
static size_t job_slot(const struct odbc_leader__serve_counters *c,
                       const char *name, int *found) {
    size_t lo = 0, hi = c->njobs;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(c->jobs[c->by_name[mid]].name, name);

        if (cmp == 0) {
            *found = 1;
            return mid;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

/* Returns the index of job name in c->jobs, adding it (born in this
 * read) when new; -1 when out of memory. */
static int64_t job_index(struct odbc_leader__serve_counters *c,
                         const char *name) {
    int found;
    size_t at = job_slot(c, name, &found);
    struct job_count *j;
    uint32_t *b;

    if (found)
        return c->by_name[at];
    j = odbc_leader__cli_grow(c->jobs, &c->jobs_cap, c->njobs, sizeof(*j));
    if (j == NULL)
        return -1;
    c->jobs = j;
    b = odbc_leader__cli_grow(c->by_name, &c->by_name_cap, c->njobs,
                              sizeof(*b));
    if (b == NULL)
        return -1;
    c->by_name = b;
    memset(&c->jobs[c->njobs], 0, sizeof(c->jobs[0]));
    snprintf(c->jobs[c->njobs].name, sizeof(c->jobs[0].name), "%s", name);
    c->jobs[c->njobs].born = c->fire_reads;
    memmove(&b[at + 1], &b[at], (c->njobs - at) * sizeof(*b));
    b[at] = (uint32_t)c->njobs;
    return (int64_t)c->njobs++;
}

/* qsort and merge order of fires: job index, fire time, claim time. */
static int fire_order(const struct fire_seen *x, const struct fire_seen *y) {
    if (x->job != y->job)
        return x->job < y->job ? -1 : 1;
    if (x->fire_ms != y->fire_ms)
        return x->fire_ms < y->fire_ms ? -1 : 1;
    return (x->claimed_at_ms > y->claimed_at_ms) -
           (x->claimed_at_ms < y->claimed_at_ms);
}

/* qsort comparator of struct fire_now by fire_order. */
static int by_fire(const void *a, const void *b) {
    return fire_order(&((const struct fire_now *)a)->id,
                      &((const struct fire_now *)b)->id);
}

/* The index in outcomes[] of how f ended, or -1 while it has not
 * (running, pending) or for a state this serve does not know. */
static int outcome_of(const struct odbc_leader_fire *f) {
    const char *state = odbc_leader__cli_fire_state(f);

    if (strcmp(state, "done") == 0)
        return 0;
    for (size_t k = 1; k < N_OUTCOME; k++)
        if (strcmp(state, outcomes[k]) == 0)
            return (int)k;
    return -1;
}

/* Makes the fires of l into an array of struct fire_now sorted by
 * fire_order, adding new jobs. Returns it (the caller frees it), or NULL
 * when out of memory (or l is empty). */
static struct fire_now *fires_now(struct odbc_leader__serve_counters *c,
                                  const struct odbc_leader__fire_list *l) {
    struct fire_now *v = l->n > 0 ? calloc(l->n, sizeof(*v)) : NULL;

    for (size_t i = 0; v != NULL && i < l->n; i++) {
        const struct odbc_leader_fire *f = &l->v[i];
        int64_t job = job_index(c, f->job);

        if (job < 0) {
            free(v);
            return NULL;
        }
        v[i].outcome = outcome_of(f);
        v[i].id = (struct fire_seen){(uint32_t)job, f->fire_ms,
                                     f->claimed_at_ms, v[i].outcome >= 0};
        v[i].finished_at_ms = f->finished_at_ms;
        v[i].claimed_at_ms = f->claimed_at_ms;
        v[i].db_now_ms = f->db_now_ms;
        v[i].attempt = f->attempt;
    }
    if (v != NULL)
        qsort(v, l->n, sizeof(*v), by_fire);
    return v;
}

/* Counts fire f (of this read) when it ended after serve started and old
 * (its entry in the read before, or NULL) did not show it ended, and a
 * recovery when it is a later attempt old did not show. */
static void count_fire(struct odbc_leader__serve_counters *c,
                       const struct fire_now *f, const struct fire_seen *old,
                       int64_t run_ms) {
    struct job_count *j = &c->jobs[f->id.job];

    if (old == NULL && f->attempt > 1 &&
        f->claimed_at_ms >= f->db_now_ms - run_ms)
        j->recoveries++;
    if (!f->id.finished || (old != NULL && old->finished) ||
        f->finished_at_ms < f->db_now_ms - run_ms)
        return;
    j->ended[f->outcome]++;
}

int odbc_leader__serve_counters_fires(struct odbc_leader__serve_counters *c,
                                      const struct odbc_leader__fire_list *l,
                                      int64_t run_ms) {
    struct fire_now *now;
    struct fire_seen *seen;
    size_t k = 0, n = 0;

    c->fire_reads++; /* before fires_now: the jobs it adds are born now */
    if (l->n == 0) {
        free(c->fires);
        c->fires = NULL;
        c->nfires = 0;
        return 0;
    }
    now = fires_now(c, l);
    seen = calloc(l->n, sizeof(*seen));
    if (now == NULL || seen == NULL) {
        free(now);
        free(seen);
        return -1;
    }
    for (size_t i = 0; i < l->n; i++) {
        const struct fire_seen *id = &now[i].id;

        while (k < c->nfires && fire_order(&c->fires[k], id) < 0)
            k++;
        if (c->jobs[id->job].born == c->fire_reads)
            continue; /* a new job: counted from the next read on */
        count_fire(c, &now[i],
                   k < c->nfires && fire_order(&c->fires[k], id) == 0
                       ? &c->fires[k]
                       : NULL,
                   run_ms);
        seen[n++] = *id;
    }
    free(now);
    free(c->fires);
    c->fires = seen;
    c->nfires = n;
    return 0;
}

/* Returns the index in how_ended[] of how term e ended, or N_HOW for a
 * value this serve does not know. */
static size_t how_index(const struct odbc_leader_election *e) {
    for (size_t k = 0; k < N_HOW; k++) {
        if (strcmp(e->ended_how, how_ended[k]) == 0)
            return k;
    }
    return N_HOW;
}

/* Counts term e (of this read) against old, its entry in the read before
 * (NULL when that read did not show it), if after serve's start. */
static void count_term(struct odbc_leader__serve_counters *c,
                       const struct odbc_leader_election *e,
                       const struct term_seen *old, int64_t run_ms) {
    int64_t start_ms = e->db_now_ms - run_ms; /* serve's, database clock */
    size_t k;

    if (old == NULL && e->started_at_ms >= start_ms)
        c->takeovers++;
    if (e->ended_how[0] == '\0' || (old != NULL && old->ended) ||
        e->ended_at_ms < start_ms)
        return;
    k = how_index(e);
    if (k < N_HOW)
        c->ended[k]++;
}

/* qsort comparator of terms by number. */
static int by_term(const void *a, const void *b) {
    const struct odbc_leader_election *x = a, *y = b;

    return (x->term > y->term) - (x->term < y->term);
}

int odbc_leader__serve_counters_terms(struct odbc_leader__serve_counters *c,
                                      struct odbc_leader__election_list *l,
                                      int64_t run_ms) {
    struct term_seen *seen = l->n > 0 ? calloc(l->n, sizeof(*seen)) : NULL;
    size_t k = 0;

    if (l->n > 0 && seen == NULL)
        return -1;
    if (l->n > 1)
        qsort(l->v, l->n, sizeof(*l->v), by_term);
    for (size_t i = 0; i < l->n; i++) {
        const struct odbc_leader_election *e = &l->v[i];

        while (k < c->nterms && c->terms[k].term < e->term)
            k++;
        if (c->term_reads > 0)
            count_term(c, e,
                       k < c->nterms && c->terms[k].term == e->term
                           ? &c->terms[k]
                           : NULL,
                       run_ms);
        seen[i] = (struct term_seen){e->term, e->ended_how[0] != '\0'};
    }
    free(c->terms);
    c->terms = seen;
    c->nterms = l->n;
    if (c->term_reads++ == 0) { /* the first read: counted from the next on */
        free(c->terms);
        c->terms = NULL;
        c->nterms = 0;
    }
    return 0;
}

/* Writes the counter families of fires of every namespace of sv. */
static void prom_fires(FILE *f, const struct odbc_leader__serve *sv) {
    odbc_leader__prom_head(f, &m_fires);
    for (size_t i = 0; i < sv->n; i++) {
        const struct odbc_leader__serve_counters *c = sv->ns[i].counters;

        for (size_t j = 0; c != NULL && j < c->njobs; j++) {
            const struct job_count *job = &c->jobs[c->by_name[j]];

            for (size_t k = 0; k < N_OUTCOME; k++) {
                const char *labels[] = {job->name, outcomes[k]};

                odbc_leader__prom_int(f, &m_fires, sv->ns[i].name, labels,
                                      job->ended[k]);
            }
        }
    }
    odbc_leader__prom_head(f, &m_recoveries);
    for (size_t i = 0; i < sv->n; i++) {
        const struct odbc_leader__serve_counters *c = sv->ns[i].counters;

        for (size_t j = 0; c != NULL && j < c->njobs; j++) {
            const struct job_count *job = &c->jobs[c->by_name[j]];
            const char *labels[] = {job->name};

            odbc_leader__prom_int(f, &m_recoveries, sv->ns[i].name, labels,
                                  job->recoveries);
        }
    }
}

/* Writes the counter families of terms of every namespace of sv whose log
 * was read. */
static void prom_terms(FILE *f, const struct odbc_leader__serve *sv) {
    odbc_leader__prom_head(f, &m_ended);
    for (size_t i = 0; i < sv->n; i++) {
        const struct odbc_leader__serve_counters *c = sv->ns[i].counters;

        for (size_t k = 0; c != NULL && c->term_reads > 0 && k < N_HOW; k++)
            odbc_leader__prom_int(f, &m_ended, sv->ns[i].name, &how_ended[k],
                                  c->ended[k]);
    }
    odbc_leader__prom_head(f, &m_takeovers);
    for (size_t i = 0; i < sv->n; i++) {
        const struct odbc_leader__serve_counters *c = sv->ns[i].counters;

        if (c != NULL && c->term_reads > 0)
            odbc_leader__prom_int(f, &m_takeovers, sv->ns[i].name, NULL,
                                  c->takeovers);
    }
}

void odbc_leader__serve_counters_prom(FILE *f,
                                      const struct odbc_leader__serve *sv,
                                      int fires) {
    if (fires)
        prom_fires(f, sv);
    else
        prom_terms(f, sv);
}
