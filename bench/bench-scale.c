/* SPDX-License-Identifier: MIT */
/*
 * bench-scale.c: the scale benchmark. One process runs N candidates, each
 * its own odbc_leader_t handle with its own ODBC connection, spread over
 * N/K namespaces of K candidates, against one database, and measures what
 * that costs and whether the elections stay quiet.
 *
 *   bench-scale -c CONNECT [-n N] [-k K] [-d SECONDS] [-s SETTLE_S]
 *               [-T TTL_MS] [-r RENEW_MS] [-w FOLLOWER_WAIT_MS] [-x KEYS]
 *               [-W WORKERS] [-L LATE_MS] [-p PREFIX] [-P POSTMASTER_PID]
 *               [-C CONNECT_CONCURRENCY] [-S STACK_KB] [-q]
 *
 * CONNECT is an ODBC connection string without Leader* keys; the program
 * adds LeaderNamespace, LeaderId, LeaderTTL, LeaderRenewInterval, and
 * LeaderFollowerWait only when -w is given (libraries without that key
 * reject it), then the -x text verbatim.
 *
 * Ticks are blocking calls, so worker threads drive them: -W 0 (the
 * default) gives every candidate its own thread, -W M shares the
 * candidates among M threads, each ticking its own in deadline order. A
 * tick is late when it starts more than LATE_MS after the time the
 * previous tick's *next_tick_ms asked for. First ticks are spread over one
 * renew interval. After SETTLE_S seconds (the initial elections, and
 * each new connection's first, slower statements) the window of SECONDS seconds
 * starts: ticks due in it are counted, and every new term in a namespace that
 * already had one is a leadership change (nobody is killed or resigns, so each
 * is spurious); such changes before the window are counted apart, as warm-up
 * changes. A monitor thread samples is_leader()/term() of every handle every
 * 100 ms and counts namespaces with two leaders of different terms (safety) and
 * without a leader.
 *
 * Costs over the window: this process's CPU (getrusage), the database
 * server's CPU when it runs on this host (PostgreSQL: the postmaster's
 * process tree from /proc, found through data_directory or -P), the
 * machine's busy time (/proc/stat), transactions per second
 * (pg_stat_database) and statements per second (pg_stat_statements, when
 * installed), resident memory per candidate and per server backend.
 * The result is one JSON object on stdout; progress goes to stderr.
 * At the end every handle is destroyed (leaders resign), unless -q leaves
 * them to process exit: unixODBC walks its list of every statement handle
 * of the process for each handle freed, so tearing down N handles costs
 * O(N^2) and takes minutes from about 2,000 candidates on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>
#include <sql.h>
#include <sqlext.h>

#include "odbc_leader.h"

#define NS_PER_MS INT64_C(1000000)
#define NS_PER_S INT64_C(1000000000)
#define HIST_BUCKETS 288 /* log-linear, 8 steps per octave, in us */
#define SAMPLE_NS (100 * NS_PER_MS)
#define MAX_LOGGED_WARNINGS 5 /* first library warnings echoed on stderr */
#define CONFIG_MAX 2048

/* Command-line settings. */
struct opts {
    const char *connect; /* borrowed from argv */
    const char *extra;   /* -x, borrowed, may be NULL */
    const char *prefix;  /* namespace prefix, borrowed or a literal */
    char prefix_buf[64];
    long n, per_ns, workers, concurrency, stack_kb;
    long follower_wait_ms; /* -1: key not given */
    long ttl_ms, renew_ms, late_ms, postmaster_pid;
    int quick_exit; /* -q: leave the handles to process exit */
    double window_s, settle_s;
};

/* Counts for one histogram of durations in microseconds. */
struct hist {
    uint32_t b[HIST_BUCKETS];
    int64_t max_us;
};

/* Tick statistics of one worker over the window. */
struct stats {
    int64_t ticks, late, errors, leader_ticks;
    int64_t renew_gap_max; /* ns between a leader's successive renewals */
    struct hist lateness, duration;
};

/* The shared state of one namespace. */
struct nsstate {
    _Atomic int64_t max_term;   /* highest term any of its handles reported */
    _Atomic int64_t elected_ns; /* when max_term first became non-zero */
};

struct bench;

/* One candidate: its handle, its schedule and its reported state. */
struct cand {
    struct bench *b;  /* borrowed */
    odbc_leader_t *h; /* owned; NULL when creation failed */
    long idx, ns;
    int64_t due;        /* CLOCK_MONOTONIC ns the next tick is due */
    int was_leader;     /* last is_leader reported through on_change */
    int64_t lead_start; /* start of the last tick that kept leadership */
};

/* A worker thread and the candidates it ticks (a min-heap on due). */
struct worker {
    struct bench *b;    /* borrowed */
    struct cand **heap; /* owned array of borrowed pointers */
    size_t n;
    pthread_t th;
    int started;
    struct stats st;
};

/* Resource counters read at the window's start and end. */
struct snap {
    int64_t t_ns;
    struct rusage ru;
    int64_t pg_backend_ticks, pg_other_ticks; /* clock ticks */
    long pg_backends;
    int64_t cpu_busy, cpu_total; /* /proc/stat jiffies, all cores */
    int64_t xacts, stmts;        /* -1 when unknown */
};

/* Everything the threads share; lives in main's frame. */
struct bench {
    struct opts o;
    struct cand *cands; /* owned, o.n */
    struct nsstate *ns; /* owned, nns */
    long nns;
    struct worker *workers; /* owned, nworkers */
    long nworkers;
    sem_t connect_slots; /* bounds concurrent connects */
    pthread_mutex_t mu;  /* guards ready and go */
    pthread_cond_t cv;
    long ready;
    int go;
    int teardown; /* the counters are read: workers may destroy */
    int64_t t_start, t_settle, t_end; /* written before go */
    _Atomic long created, create_failures, warnings;
    _Atomic long changes, stepdowns, late_initial, warmup_changes;
    _Atomic int64_t warmup_last_ns; /* last warm-up change, from t_start */
    _Atomic int64_t samples, ns_samples, unsafe, leaderless;
    int64_t setup_ns, rss_before_kb, rss_after_kb;
    long no_leader_at_settle;
    SQLHENV env; /* monitoring connection, may be NULL */
    SQLHDBC dbc;
    long pg_pid;
    int64_t pg_uss_kb, pg_pss_kb;            /* sums over backends at the end */
    int64_t avail_before_kb, avail_after_kb; /* MemAvailable */
    long pg_mem_backends;
};

/* CLOCK_MONOTONIC in nanoseconds. */
static int64_t now_ns(void) {
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* Sleeps until CLOCK_MONOTONIC reaches t (ns); returns at once if past. */
static void sleep_until(int64_t t) {
    struct timespec ts = {(time_t)(t / NS_PER_S), (long)(t % NS_PER_S)};

    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* Prints a message on stderr prefixed with the program name. */
static void say(const char *fmt, ...) {
    va_list ap;

    va_start(ap, fmt);
    fputs("bench-scale: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- histograms ------------------------------------------------------ */

/* The bucket of a value in microseconds: exact below 16, then 8 steps per
 * octave (each bucket spans at most 12.5% of its lower bound). */
static int bucket_of(int64_t us) {
    int msb, idx;

    if (us < 16)
        return us < 0 ? 0 : (int)us;
    msb = 63 - __builtin_clzll((unsigned long long)us);
    idx = 16 + (msb - 4) * 8 + (int)((us >> (msb - 3)) & 7);
    return idx < HIST_BUCKETS ? idx : HIST_BUCKETS - 1;
}

/* The upper bound (exclusive) of bucket i in microseconds. */
static int64_t bucket_top(int i) {
    int octave, step;

    if (i < 16)
        return i + 1;
    octave = (i - 16) / 8 + 4;
    step = (i - 16) % 8;
    return (INT64_C(8) + step + 1) << (octave - 3);
}

/* Counts one duration of ns nanoseconds in h. */
static void hist_add(struct hist *h, int64_t ns) {
    int64_t us = ns / 1000;

    h->b[bucket_of(us)]++;
    if (us > h->max_us)
        h->max_us = us;
}

/* Adds src's counts into dst. */
static void hist_merge(struct hist *dst, const struct hist *src) {
    for (int i = 0; i < HIST_BUCKETS; i++)
        dst->b[i] += src->b[i];
    if (src->max_us > dst->max_us)
        dst->max_us = src->max_us;
}

/* The q-quantile (0..1) in milliseconds: the top of the bucket holding
 * it, capped by the maximum seen; 0 for an empty histogram. */
static double hist_quantile_ms(const struct hist *h, double q) {
    uint64_t total = 0, seen = 0, want;

    for (int i = 0; i < HIST_BUCKETS; i++)
        total += h->b[i];
    if (total == 0)
        return 0;
    want = (uint64_t)(q * (double)total);
    if (want >= total)
        want = total - 1;
    for (int i = 0; i < HIST_BUCKETS; i++) {
        seen += h->b[i];
        if (seen > want) {
            int64_t top = bucket_top(i);
            return (double)(top < h->max_us ? top : h->max_us) / 1000.0;
        }
    }
    return (double)h->max_us / 1000.0;
}

/* ---- library callbacks ---------------------------------------------- */

/* Counts the library's warnings and echoes the first few. */
static void on_log(void *ctx, int level, const char *msg) {
    struct cand *c = ctx;
    long n;

    if (level > LOG_WARNING)
        return;
    n = atomic_fetch_add(&c->b->warnings, 1);
    if (n < MAX_LOGGED_WARNINGS)
        say("candidate %ld: %s", c->idx, msg);
}

/* Raises *v to x; returns the old value, or x itself when *v was already
 * at least that high. */
static int64_t raise_max(_Atomic int64_t *v, int64_t x) {
    int64_t old = atomic_load(v);

    while (old < x) {
        if (atomic_compare_exchange_weak(v, &old, x))
            return old;
    }
    return x;
}

/* Records terms and step-downs; counts those inside the window. */
static void on_change(void *ctx, int is_leader, int64_t term,
                      const char *leader_id) {
    struct cand *c = ctx;
    struct bench *b = c->b;
    struct nsstate *s = &b->ns[c->ns];
    int64_t t = now_ns();
    int in_window = t >= b->t_settle && t < b->t_end;
    int64_t old;

    if (c->was_leader && !is_leader && in_window)
        atomic_fetch_add(&b->stepdowns, 1);
    c->was_leader = is_leader;
    if (term <= 0)
        return;
    old = raise_max(&s->max_term, term);
    if (old == term)
        return;
    if (old == 0) {
        int64_t zero = 0;
        atomic_compare_exchange_strong(&s->elected_ns, &zero, t);
        if (in_window)
            atomic_fetch_add(&b->late_initial, 1);
    } else if (t < b->t_settle) {
        atomic_fetch_add(&b->warmup_changes, 1);
        raise_max(&b->warmup_last_ns, t - b->t_start);
    } else if (in_window &&
               atomic_fetch_add(&b->changes, 1) < MAX_LOGGED_WARNINGS) {
        say("namespace %ld: term %" PRId64 " -> %" PRId64
            " at %.3f s into the window, seen by candidate %ld (%s, "
            "leader %s)",
            c->ns, old, term, (double)(t - b->t_settle) / 1e9, c->idx,
            is_leader ? "leader" : "follower",
            leader_id != NULL ? leader_id : "none");
    }
}

/* ---- candidates and workers ----------------------------------------- */

/* Writes candidate c's configuration into buf. Returns 0, or -1 when it
 * does not fit. */
static int cand_config(const struct bench *b, const struct cand *c, char *buf,
                       size_t len) {
    const struct opts *o = &b->o;
    char wait[48] = "";
    int n;

    if (o->follower_wait_ms >= 0)
        snprintf(wait, sizeof(wait), ";LeaderFollowerWait=%ld",
                 o->follower_wait_ms);
    n = snprintf(buf, len,
                 "%s;LeaderNamespace=%sns-%03ld;LeaderId=c%06ld;"
                 "LeaderTTL=%ld;LeaderRenewInterval=%ld%s%s%s",
                 o->connect, o->prefix, c->ns, c->idx, o->ttl_ms, o->renew_ms,
                 wait, o->extra != NULL ? ";" : "",
                 o->extra != NULL ? o->extra : "");
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* Creates c's handle, at most o.concurrency at a time across workers.
 * Failures leave c->h NULL and are counted; the first few are printed. */
static void cand_create(struct bench *b, struct cand *c) {
    struct odbc_leader_callbacks cb = {.struct_size = sizeof(cb),
                                       .ctx = c,
                                       .log = on_log,
                                       .on_change = on_change};
    char config[CONFIG_MAX], err[512] = "";
    int rc = -1;

    if (cand_config(b, c, config, sizeof(config)) == 0) {
        while (sem_wait(&b->connect_slots) != 0)
            ;
        rc = odbc_leader_create(&c->h, config, &cb, err, sizeof(err));
        sem_post(&b->connect_slots);
    } else {
        snprintf(err, sizeof(err), "configuration too long");
    }
    if (rc == 0) {
        atomic_fetch_add(&b->created, 1);
        return;
    }
    c->h = NULL;
    if (atomic_fetch_add(&b->create_failures, 1) < MAX_LOGGED_WARNINGS)
        say("candidate %ld: %s", c->idx, err);
}

/* Restores the heap order below position i. */
static void heap_down(struct cand **h, size_t n, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        struct cand *t;

        if (l < n && h[l]->due < h[m]->due)
            m = l;
        if (r < n && h[r]->due < h[m]->due)
            m = r;
        if (m == i)
            return;
        t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* Blocks until the main thread opens the gate, after counting this
 * thread as ready. */
static void gate_wait(struct bench *b) {
    pthread_mutex_lock(&b->mu);
    b->ready++;
    pthread_cond_broadcast(&b->cv);
    while (!b->go)
        pthread_cond_wait(&b->cv, &b->mu);
    pthread_mutex_unlock(&b->mu);
}

/* Blocks until main has read the window's counters and the monitor has
 * stopped reading the handles. */
static void wait_teardown(struct bench *b) {
    pthread_mutex_lock(&b->mu);
    while (!b->teardown)
        pthread_cond_wait(&b->cv, &b->mu);
    pthread_mutex_unlock(&b->mu);
}

/* Lets the workers destroy their handles. */
static void start_teardown(struct bench *b) {
    pthread_mutex_lock(&b->mu);
    b->teardown = 1;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

/* A pseudo-random offset in [0, span) for candidate idx, so first ticks
 * spread over one renew interval. */
static int64_t spread(long idx, int64_t span) {
    uint64_t x = (uint64_t)idx * UINT64_C(0x9E3779B97F4A7C15);

    x ^= x >> 29;
    return span > 0 ? (int64_t)(x % (uint64_t)span) : 0;
}

/* Runs one tick of c and, when it was due inside the window, records it
 * in st. Sets c->due to when the library asks for the next tick. */
static void tick_one(struct bench *b, struct cand *c, struct stats *st) {
    int64_t start = now_ns();
    uint32_t next_ms = 0;
    int rc = odbc_leader_tick(c->h, &next_ms);
    int64_t end = now_ns();

    if (c->due >= b->t_settle && c->due < b->t_end) {
        st->ticks++;
        if (start - c->due > b->o.late_ms * NS_PER_MS)
            st->late++;
        if (rc < 0)
            st->errors++;
        if (rc == ODBC_LEADER_LEADER)
            st->leader_ticks++;
        if (rc == ODBC_LEADER_LEADER && c->lead_start > 0 &&
            start - c->lead_start > st->renew_gap_max)
            st->renew_gap_max = start - c->lead_start;
        hist_add(&st->lateness, start - c->due);
        hist_add(&st->duration, end - start);
    }
    c->lead_start = rc == ODBC_LEADER_LEADER ? start : 0;
    c->due = end + (int64_t)next_ms * NS_PER_MS;
}

/* Worker thread: creates its candidates' handles (main made the first),
 * waits at the gate,
 * ticks them in deadline order until the window ends, then waits for the
 * end and destroys them (a leader resigns then). Returns NULL. */
static void *worker_main(void *arg) {
    struct worker *w = arg;
    struct bench *b = w->b;
    size_t live = 0;

    for (size_t i = 0; i < w->n; i++) {
        if (w->heap[i]->h == NULL)
            cand_create(b, w->heap[i]);
        if (w->heap[i]->h != NULL)
            w->heap[live++] = w->heap[i];
    }
    w->n = live;
    gate_wait(b);
    for (size_t i = 0; i < w->n; i++)
        w->heap[i]->due =
            b->t_start + spread(w->heap[i]->idx, b->o.renew_ms * NS_PER_MS);
    for (size_t i = w->n / 2 + 1; i-- > 0;)
        heap_down(w->heap, w->n, i);
    while (w->n > 0 && w->heap[0]->due < b->t_end) {
        sleep_until(w->heap[0]->due);
        tick_one(b, w->heap[0], &w->st);
        heap_down(w->heap, w->n, 0);
    }
    sleep_until(b->t_end);
    wait_teardown(b);
    for (size_t i = 0; i < w->n && !b->o.quick_exit; i++) {
        odbc_leader_destroy(w->heap[i]->h);
        w->heap[i]->h = NULL;
    }
    return NULL;
}

/* ---- safety monitor -------------------------------------------------- */

/* Samples every namespace once: counts namespaces whose handles show two
 * leaders of different terms, and namespaces without a leader. */
static void sample_once(struct bench *b) {
    long k = b->o.per_ns;

    for (long ns = 0; ns < b->nns; ns++) {
        int64_t seen = 0;
        int leaders = 0, unsafe = 0;

        for (long i = ns * k; i < (ns + 1) * k && i < b->o.n; i++) {
            int64_t t = odbc_leader_term(b->cands[i].h);
            if (t == 0)
                continue;
            if (leaders > 0 && t != seen)
                unsafe = 1;
            seen = t;
            leaders++;
        }
        atomic_fetch_add(&b->ns_samples, 1);
        if (unsafe)
            atomic_fetch_add(&b->unsafe, 1);
        if (leaders == 0)
            atomic_fetch_add(&b->leaderless, 1);
    }
    atomic_fetch_add(&b->samples, 1);
}

/* Monitor thread: samples from the window's start to its end. Handles are
 * destroyed only after main has joined it, so reading them is safe. */
static void *monitor_main(void *arg) {
    struct bench *b = arg;
    int64_t t;

    gate_wait(b);
    t = b->t_settle;
    while (t < b->t_end) {
        sleep_until(t);
        sample_once(b);
        t += SAMPLE_NS;
    }
    return NULL;
}

/* ---- database monitoring connection --------------------------------- */

/* Connects the monitoring connection. Returns 0, or -1 (a warning on
 * stderr; the figures that need it are then left out). */
static int mon_connect(struct bench *b) {
    SQLRETURN r;

    if (!SQL_SUCCEEDED(
            SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &b->env)))
        return -1;
    SQLSetEnvAttr(b->env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0);
    if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_DBC, b->env, &b->dbc)))
        return -1;
    r = SQLDriverConnect(b->dbc, NULL, (SQLCHAR *)b->o.connect, SQL_NTS, NULL,
                         0, NULL, SQL_DRIVER_NOPROMPT);
    if (SQL_SUCCEEDED(r))
        return 0;
    say("monitoring connection failed: no database-side figures");
    SQLFreeHandle(SQL_HANDLE_DBC, b->dbc);
    b->dbc = NULL;
    return -1;
}

/* Closes the monitoring connection (if any) and frees its handles. */
static void mon_close(struct bench *b) {
    if (b->dbc != NULL) {
        SQLDisconnect(b->dbc);
        SQLFreeHandle(SQL_HANDLE_DBC, b->dbc);
    }
    if (b->env != NULL)
        SQLFreeHandle(SQL_HANDLE_ENV, b->env);
    b->dbc = NULL;
    b->env = NULL;
}

/* Runs sql (a constant query with no parameters) on the monitoring
 * connection and copies the first column of the first row into buf as
 * text. Returns 0, or -1 when there is no connection, the query fails or
 * the value is NULL. */
static int mon_query(struct bench *b, const char *sql, char *buf, size_t len) {
    SQLHSTMT st = SQL_NULL_HSTMT;
    SQLLEN ind = 0;
    int rc = -1;

    if (b->dbc == NULL)
        return -1;
    if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_STMT, b->dbc, &st)))
        return -1;
    if (!SQL_SUCCEEDED(SQLExecDirect(st, (SQLCHAR *)sql, SQL_NTS)))
        goto out;
    if (!SQL_SUCCEEDED(SQLFetch(st)))
        goto out;
    if (!SQL_SUCCEEDED(SQLGetData(st, 1, SQL_C_CHAR, buf, (SQLLEN)len, &ind)) ||
        ind == SQL_NULL_DATA)
        goto out;
    rc = 0;
out:
    SQLFreeHandle(SQL_HANDLE_STMT, st);
    return rc;
}

/* A counter from the monitoring connection, -1 when unknown. */
static int64_t mon_count(struct bench *b, const char *sql) {
    char buf[64];

    if (mon_query(b, sql, buf, sizeof(buf)) != 0)
        return -1;
    return strtoll(buf, NULL, 10);
}

/* Finds the PostgreSQL postmaster's pid through data_directory (the
 * server must be on this host and its directory readable). Returns the
 * pid or 0. */
static long find_postmaster(struct bench *b) {
    char dir[1024], path[1100];
    long pid = 0;
    FILE *f;

    if (mon_query(b, "SELECT current_setting('data_directory')", dir,
                  sizeof(dir)) != 0)
        return 0;
    snprintf(path, sizeof(path), "%s/postmaster.pid", dir);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    if (fscanf(f, "%ld", &pid) != 1)
        pid = 0;
    fclose(f);
    return pid;
}

/* ---- /proc readings --------------------------------------------------- */

/* Reads "Key:  N kB" from /proc/PID/FILE (pid 0: /proc/self, pid -1:
 * /proc itself). Returns N or -1. */
static int64_t proc_kb(long pid, const char *file, const char *key) {
    char path[64], line[256];
    size_t klen = strlen(key);
    int64_t v = -1;
    FILE *f;

    if (pid == 0)
        snprintf(path, sizeof(path), "/proc/self/%s", file);
    else if (pid < 0)
        snprintf(path, sizeof(path), "/proc/%s", file);
    else
        snprintf(path, sizeof(path), "/proc/%ld/%s", pid, file);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            v = strtoll(line + klen + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

/* Process pid's parent, user+system CPU ticks and its children's reaped
 * ticks, from /proc/PID/stat. Returns 0 or -1. */
static int proc_stat(long pid, long *ppid, int64_t *ticks, int64_t *cticks) {
    char path[64], buf[1024], *p;
    unsigned long long ut, st, cut, cst;
    size_t n;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')');
    if (p == NULL ||
        sscanf(p + 2,
               "%*c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu "
               "%llu",
               ppid, &ut, &st, &cut, &cst) != 5)
        return -1;
    *ticks = (int64_t)(ut + st);
    *cticks = (int64_t)(cut + cst);
    return 0;
}

/* 1 when process pid is a PostgreSQL client backend ("postgres: user db
 * host(port) state" in its title), else 0. */
static int is_backend(long pid) {
    char path[64], buf[256];
    size_t n;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strchr(buf, '(') != NULL || strstr(buf, "[local]") != NULL;
}

/* Adds one child of the postmaster to s (and, with mem, its memory to
 * b's sums). */
static void pg_child(struct bench *b, struct snap *s, long pid, int64_t ticks,
                     int mem) {
    if (!is_backend(pid)) {
        s->pg_other_ticks += ticks;
        return;
    }
    s->pg_backend_ticks += ticks;
    s->pg_backends++;
    if (!mem)
        return;
    b->pg_uss_kb += proc_kb(pid, "smaps_rollup", "Private_Clean") +
                    proc_kb(pid, "smaps_rollup", "Private_Dirty");
    b->pg_pss_kb += proc_kb(pid, "smaps_rollup", "Pss");
    b->pg_mem_backends++;
}

/* Sums the CPU of the postmaster and its children into s (the
 * postmaster's reaped-children ticks count as "other"); with mem, also
 * the backends' memory. */
static void pg_scan(struct bench *b, struct snap *s, int mem) {
    int64_t ticks, cticks;
    struct dirent *e;
    long ppid;
    DIR *d;

    if (b->pg_pid <= 0 || proc_stat(b->pg_pid, &ppid, &ticks, &cticks) != 0)
        return;
    s->pg_other_ticks = ticks + cticks;
    d = opendir("/proc");
    if (d == NULL)
        return;
    for (e = readdir(d); e != NULL; e = readdir(d)) {
        long pid = strtol(e->d_name, NULL, 10);

        if (pid <= 0 || proc_stat(pid, &ppid, &ticks, &cticks) != 0 ||
            ppid != b->pg_pid)
            continue;
        pg_child(b, s, pid, ticks, mem);
    }
    closedir(d);
}

/* The machine's busy and total jiffies over all cores from /proc/stat. */
static void machine_cpu(int64_t *busy, int64_t *total) {
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");

    *busy = *total = 0;
    if (f == NULL)
        return;
    if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
               &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
        for (int i = 0; i < 8; i++)
            *total += (int64_t)v[i];
        *busy = *total - (int64_t)(v[3] + v[4]); /* minus idle, iowait */
    }
    fclose(f);
}

/* Takes every counter of the window's start or end (mem: also the
 * backends' memory, at the end). */
static void take_snap(struct bench *b, struct snap *s, int mem) {
    memset(s, 0, sizeof(*s));
    s->t_ns = now_ns();
    getrusage(RUSAGE_SELF, &s->ru);
    machine_cpu(&s->cpu_busy, &s->cpu_total);
    pg_scan(b, s, mem);
    s->xacts = mon_count(b, "SELECT sum(xact_commit + xact_rollback) "
                            "FROM pg_stat_database");
    s->stmts = mon_count(b, "SELECT sum(calls) FROM pg_stat_statements");
}

/* ---- setup and report -------------------------------------------------- */

/* Prints the usage on stderr. */
static void usage(void) {
    fputs("usage: bench-scale -c CONNECT [-n N] [-k PER_NS] [-d SECONDS] "
          "[-s SETTLE_S]\n"
          "         [-T TTL_MS] [-r RENEW_MS] [-w FOLLOWER_WAIT_MS] [-x "
          "KEYS]\n"
          "         [-W WORKERS (0: a thread per candidate)] [-L LATE_MS] "
          "[-p PREFIX]\n"
          "         [-P POSTMASTER_PID] [-C CONNECT_CONCURRENCY] [-S "
          "STACK_KB] [-q]\n",
          stderr);
}

/* Parses a non-negative integer option; returns 0 or -1. */
static int num(const char *s, long *out) {
    char *end;

    errno = 0;
    *out = strtol(s, &end, 10);
    return errno == 0 && end != s && *end == '\0' && *out >= 0 ? 0 : -1;
}

/* Parses one option letter c with argument a into o; returns 0 or -1. */
static int parse_opt(struct opts *o, int c, const char *a) {
    switch (c) {
    case 'q':
        o->quick_exit = 1;
        return 0;
    case 'c':
        o->connect = a;
        return 0;
    case 'x':
        o->extra = a;
        return 0;
    case 'p':
        o->prefix = a;
        return 0;
    case 'n':
        return num(a, &o->n);
    case 'k':
        return num(a, &o->per_ns);
    case 'W':
        return num(a, &o->workers);
    case 'C':
        return num(a, &o->concurrency);
    case 'S':
        return num(a, &o->stack_kb);
    case 'w':
        return num(a, &o->follower_wait_ms);
    case 'T':
        return num(a, &o->ttl_ms);
    case 'r':
        return num(a, &o->renew_ms);
    case 'L':
        return num(a, &o->late_ms);
    case 'P':
        return num(a, &o->postmaster_pid);
    case 'd':
        o->window_s = atof(a);
        return o->window_s > 0 ? 0 : -1;
    case 's':
        o->settle_s = atof(a);
        return o->settle_s >= 0 ? 0 : -1;
    default:
        return -1;
    }
}

/* Fills o from argv. Returns 0, or -1 after printing the usage. */
static int parse_args(struct opts *o, int argc, char **argv) {
    int c;

    memset(o, 0, sizeof(*o));
    o->n = 1000;
    o->per_ns = 10;
    o->concurrency = 8;
    o->stack_kb = 256;
    o->follower_wait_ms = -1;
    o->ttl_ms = 5000;
    o->renew_ms = 1000;
    o->late_ms = 100;
    o->window_s = 60;
    o->settle_s = 5;
    snprintf(o->prefix_buf, sizeof(o->prefix_buf), "scale-%ld-",
             (long)getpid());
    o->prefix = o->prefix_buf;
    for (c = getopt(argc, argv, "qc:x:p:n:k:W:C:S:w:T:r:L:P:d:s:"); c != -1;
         c = getopt(argc, argv, "qc:x:p:n:k:W:C:S:w:T:r:L:P:d:s:")) {
        if (parse_opt(o, c, optarg) != 0)
            goto bad;
    }
    if (o->connect == NULL || o->n < 1 || o->per_ns < 1 || o->concurrency < 1 ||
        optind != argc)
        goto bad;
    return 0;
bad:
    usage();
    return -1;
}

/* Allocates candidates, namespaces and workers and deals the candidates
 * out round-robin. Returns 0 or -1 (out of memory); b owns the arrays. */
static int allocate(struct bench *b) {
    long n = b->o.n;
    long per = 0;

    b->nns = (n + b->o.per_ns - 1) / b->o.per_ns;
    b->nworkers = b->o.workers > 0 && b->o.workers < n ? b->o.workers : n;
    b->cands = calloc((size_t)n, sizeof(*b->cands));
    b->ns = calloc((size_t)b->nns, sizeof(*b->ns));
    b->workers = calloc((size_t)b->nworkers, sizeof(*b->workers));
    if (b->cands == NULL || b->ns == NULL || b->workers == NULL)
        return -1;
    for (long w = 0; w < b->nworkers; w++) {
        per = n / b->nworkers + (w < n % b->nworkers);
        b->workers[w].b = b;
        b->workers[w].heap = calloc((size_t)per, sizeof(struct cand *));
        if (b->workers[w].heap == NULL)
            return -1;
    }
    for (long i = 0; i < n; i++) {
        struct worker *w = &b->workers[i % b->nworkers];

        b->cands[i].b = b;
        b->cands[i].idx = i;
        b->cands[i].ns = i / b->o.per_ns;
        w->heap[w->n++] = &b->cands[i];
    }
    return 0;
}

/* Frees what allocate() made; safe after a partial allocation. */
static void release(struct bench *b) {
    if (b->workers != NULL) {
        for (long w = 0; w < b->nworkers; w++)
            free(b->workers[w].heap);
    }
    free(b->workers);
    free(b->cands);
    free(b->ns);
}

/* Starts the workers and the monitor with small stacks. Returns the
 * number of threads started (the monitor included). */
static long start_threads(struct bench *b, pthread_t *mon, int *mon_started) {
    pthread_attr_t attr;
    long started = 0;

    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)b->o.stack_kb * 1024);
    for (long w = 0; w < b->nworkers; w++) {
        if (pthread_create(&b->workers[w].th, &attr, worker_main,
                           &b->workers[w]) != 0) {
            say("could not start worker %ld of %ld", w, b->nworkers);
            break;
        }
        b->workers[w].started = 1;
        started++;
    }
    *mon_started = pthread_create(mon, &attr, monitor_main, b) == 0;
    started += *mon_started;
    pthread_attr_destroy(&attr);
    return started;
}

/* Waits until `threads` threads wait at the gate, fixes the timeline and
 * opens the gate. */
static void open_gate(struct bench *b, long threads) {
    pthread_mutex_lock(&b->mu);
    while (b->ready < threads)
        pthread_cond_wait(&b->cv, &b->mu);
    b->rss_after_kb = proc_kb(0, "status", "VmRSS");
    b->t_start = now_ns() + 100 * NS_PER_MS;
    b->t_settle = b->t_start + (int64_t)(b->o.settle_s * 1e9);
    b->t_end = b->t_settle + (int64_t)(b->o.window_s * 1e9);
    b->go = 1;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

/* Namespaces that have no elected term yet. */
static long count_unelected(struct bench *b) {
    long n = 0;

    for (long i = 0; i < b->nns; i++)
        n += atomic_load(&b->ns[i].max_term) == 0;
    return n;
}

/* The latest first election after t_start in seconds (-1 if none). */
static double settled_s(struct bench *b) {
    int64_t last = -1;

    for (long i = 0; i < b->nns; i++) {
        int64_t t = atomic_load(&b->ns[i].elected_ns);
        if (t > last)
            last = t;
    }
    return last < 0 ? -1 : (double)(last - b->t_start) / 1e9;
}

/* CPU time of a rusage in seconds: user (which 0) or system (which 1). */
static double ru_s(const struct rusage *r, int which) {
    const struct timeval *tv = which ? &r->ru_stime : &r->ru_utime;

    return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

/* Prints "key": rate per second of the counter delta, or null. */
static void put_rate(const char *key, int64_t a, int64_t z, double wall) {
    if (a < 0 || z < 0)
        printf("  \"%s\": null,\n", key);
    else
        printf("  \"%s\": %.1f,\n", key, (double)(z - a) / wall);
}

/* Prints the cost figures of the window. */
static void report_costs(struct bench *b, const struct snap *a,
                         const struct snap *z) {
    double wall = (double)(z->t_ns - a->t_ns) / 1e9;
    double hz = (double)sysconf(_SC_CLK_TCK);
    double cu = ru_s(&z->ru, 0) - ru_s(&a->ru, 0);
    double cs = ru_s(&z->ru, 1) - ru_s(&a->ru, 1);
    int64_t tot = z->cpu_total - a->cpu_total;
    int have_pg = b->pg_pid > 0;
    long live = atomic_load(&b->created);

    printf("  \"wall_s\": %.2f,\n", wall);
    printf("  \"client_cpu_pct\": %.1f,\n", 100 * (cu + cs) / wall);
    printf("  \"client_user_pct\": %.1f,\n", 100 * cu / wall);
    printf("  \"client_sys_pct\": %.1f,\n", 100 * cs / wall);
    printf("  \"machine_busy_pct\": %.1f,\n",
           tot > 0 ? 100.0 * (double)sysconf(_SC_NPROCESSORS_ONLN) *
                         (double)(z->cpu_busy - a->cpu_busy) / (double)tot
                   : 0.0);
    printf("  \"cores\": %ld,\n", sysconf(_SC_NPROCESSORS_ONLN));
    if (have_pg) {
        printf("  \"pg_cpu_pct\": %.1f,\n",
               100 *
                   ((double)(z->pg_backend_ticks - a->pg_backend_ticks +
                             z->pg_other_ticks - a->pg_other_ticks) /
                    hz) /
                   wall);
        printf("  \"pg_backend_cpu_pct\": %.1f,\n",
               100 *
                   ((double)(z->pg_backend_ticks - a->pg_backend_ticks) / hz) /
                   wall);
        printf("  \"pg_backends\": %ld,\n", z->pg_backends);
    } else {
        printf("  \"pg_cpu_pct\": null,\n  \"pg_backend_cpu_pct\": null,\n"
               "  \"pg_backends\": null,\n");
    }
    put_rate("db_xact_per_s", a->xacts, z->xacts, wall);
    put_rate("db_stmt_per_s", a->stmts, z->stmts, wall);
    printf("  \"client_rss_kb\": %" PRId64 ",\n", b->rss_after_kb);
    printf("  \"client_rss_per_cand_kb\": %.1f,\n",
           live > 0
               ? (double)(b->rss_after_kb - b->rss_before_kb) / (double)live
               : 0.0);
    printf("  \"mem_used_per_cand_kb\": %.1f,\n",
           live > 0
               ? (double)(b->avail_before_kb - b->avail_after_kb) / (double)live
               : 0.0);
    if (b->pg_mem_backends > 0)
        printf("  \"pg_backend_uss_kb\": %.1f,\n"
               "  \"pg_backend_pss_kb\": %.1f,\n",
               (double)b->pg_uss_kb / (double)b->pg_mem_backends,
               (double)b->pg_pss_kb / (double)b->pg_mem_backends);
    else
        printf("  \"pg_backend_uss_kb\": null,\n"
               "  \"pg_backend_pss_kb\": null,\n");
}

/* Prints the tick figures merged over the workers. */
static void report_ticks(struct bench *b, double wall) {
    struct stats t;

    memset(&t, 0, sizeof(t));
    for (long w = 0; w < b->nworkers; w++) {
        t.ticks += b->workers[w].st.ticks;
        t.late += b->workers[w].st.late;
        t.errors += b->workers[w].st.errors;
        t.leader_ticks += b->workers[w].st.leader_ticks;
        if (b->workers[w].st.renew_gap_max > t.renew_gap_max)
            t.renew_gap_max = b->workers[w].st.renew_gap_max;
        hist_merge(&t.lateness, &b->workers[w].st.lateness);
        hist_merge(&t.duration, &b->workers[w].st.duration);
    }
    printf("  \"ticks\": %" PRId64 ",\n", t.ticks);
    printf("  \"ticks_per_s\": %.1f,\n", (double)t.ticks / wall);
    printf("  \"leader_ticks\": %" PRId64 ",\n", t.leader_ticks);
    printf("  \"tick_errors\": %" PRId64 ",\n", t.errors);
    printf("  \"renew_gap_max_ms\": %.1f,\n", (double)t.renew_gap_max / 1e6);
    printf("  \"late_ticks\": %" PRId64 ",\n", t.late);
    printf("  \"late_share_pct\": %.3f,\n",
           t.ticks > 0 ? 100.0 * (double)t.late / (double)t.ticks : 0.0);
    printf("  \"lateness_p50_ms\": %.2f,\n  \"lateness_p99_ms\": %.2f,\n"
           "  \"lateness_max_ms\": %.2f,\n",
           hist_quantile_ms(&t.lateness, 0.5),
           hist_quantile_ms(&t.lateness, 0.99),
           (double)t.lateness.max_us / 1000);
    printf("  \"tick_p50_ms\": %.2f,\n  \"tick_p99_ms\": %.2f,\n"
           "  \"tick_max_ms\": %.2f,\n",
           hist_quantile_ms(&t.duration, 0.5),
           hist_quantile_ms(&t.duration, 0.99),
           (double)t.duration.max_us / 1000);
}

/* Prints the whole result as one JSON object on stdout. */
static void report(struct bench *b, const struct snap *a,
                   const struct snap *z) {
    const struct opts *o = &b->o;
    double wall = (double)(z->t_ns - a->t_ns) / 1e9;
    int64_t ns_samples = atomic_load(&b->ns_samples);

    printf("{\n  \"candidates\": %ld,\n  \"created\": %ld,\n", o->n,
           atomic_load(&b->created));
    printf("  \"create_failures\": %ld,\n  \"namespaces\": %ld,\n",
           atomic_load(&b->create_failures), b->nns);
    printf("  \"per_namespace\": %ld,\n  \"ttl_ms\": %ld,\n"
           "  \"renew_ms\": %ld,\n",
           o->per_ns, o->ttl_ms, o->renew_ms);
    if (o->follower_wait_ms >= 0)
        printf("  \"follower_wait_ms\": %ld,\n", o->follower_wait_ms);
    else
        printf("  \"follower_wait_ms\": null,\n");
    printf("  \"workers\": %ld,\n  \"thread_per_candidate\": %s,\n",
           b->nworkers, b->nworkers == o->n ? "true" : "false");
    printf("  \"late_threshold_ms\": %ld,\n  \"settle_s\": %.1f,\n"
           "  \"window_s\": %.1f,\n",
           o->late_ms, o->settle_s, o->window_s);
    printf("  \"setup_s\": %.2f,\n  \"elections_settled_s\": %.2f,\n",
           (double)b->setup_ns / 1e9, settled_s(b));
    printf("  \"ns_without_leader_at_settle\": %ld,\n", b->no_leader_at_settle);
    report_ticks(b, wall);
    printf("  \"leader_changes\": %ld,\n  \"stepdowns\": %ld,\n"
           "  \"late_first_elections\": %ld,\n"
           "  \"warmup_leader_changes\": %ld,\n"
           "  \"warmup_last_change_s\": %.2f,\n",
           atomic_load(&b->changes), atomic_load(&b->stepdowns),
           atomic_load(&b->late_initial), atomic_load(&b->warmup_changes),
           (double)atomic_load(&b->warmup_last_ns) / 1e9);
    printf("  \"safety_samples\": %" PRId64 ",\n"
           "  \"safety_violations\": %" PRId64 ",\n",
           atomic_load(&b->samples), atomic_load(&b->unsafe));
    printf("  \"leaderless_share_pct\": %.3f,\n",
           ns_samples > 0 ? 100.0 * (double)atomic_load(&b->leaderless) /
                                (double)ns_samples
                          : 0.0);
    printf("  \"library_warnings\": %ld,\n", atomic_load(&b->warnings));
    report_costs(b, a, z);
    printf("  \"postmaster_pid\": %ld\n}\n", b->pg_pid);
}

/* Joins the monitor, lets the workers destroy their handles and joins
 * them. */
static void join_threads(struct bench *b, pthread_t mon, int mon_started) {
    if (mon_started)
        pthread_join(mon, NULL);
    start_teardown(b);
    for (long w = 0; w < b->nworkers; w++) {
        if (b->workers[w].started)
            pthread_join(b->workers[w].th, NULL);
    }
}

/* Runs the benchmark described by b->o: setup, the window, teardown and
 * the report. Returns the exit status. */
static int run(struct bench *b) {
    struct snap a, z;
    pthread_t mon;
    int mon_started = 0;
    long threads;
    int64_t t0 = now_ns();

    if (mon_connect(b) == 0)
        b->pg_pid =
            b->o.postmaster_pid > 0 ? b->o.postmaster_pid : find_postmaster(b);
    b->rss_before_kb = proc_kb(0, "status", "VmRSS");
    b->avail_before_kb = proc_kb(-1, "meminfo", "MemAvailable");
    /* The first handle alone: it creates the tables, or fails fast. */
    cand_create(b, &b->cands[0]);
    if (b->cands[0].h == NULL) {
        mon_close(b);
        return 1;
    }
    say("%ld candidates, %ld namespaces, %ld worker threads", b->o.n, b->nns,
        b->nworkers);
    threads = start_threads(b, &mon, &mon_started);
    open_gate(b, threads);
    b->setup_ns = b->t_start - t0;
    say("%ld handles created in %.1f s (%ld failed)", atomic_load(&b->created),
        (double)b->setup_ns / 1e9, atomic_load(&b->create_failures));
    sleep_until(b->t_settle);
    b->no_leader_at_settle = count_unelected(b);
    take_snap(b, &a, 0);
    sleep_until(b->t_end);
    take_snap(b, &z, 1);
    b->avail_after_kb = proc_kb(-1, "meminfo", "MemAvailable");
    join_threads(b, mon, mon_started);
    report(b, &a, &z);
    mon_close(b);
    return atomic_load(&b->create_failures) > 0 ? 2 : 0;
}

int main(int argc, char **argv) {
    struct bench b;
    int rc = 1;

    memset(&b, 0, sizeof(b));
    if (parse_args(&b.o, argc, argv) != 0)
        return 64;
    if (sem_init(&b.connect_slots, 0, (unsigned)b.o.concurrency) != 0)
        return 1;
    pthread_mutex_init(&b.mu, NULL);
    pthread_cond_init(&b.cv, NULL);
    if (allocate(&b) != 0) {
        say("out of memory");
        goto out;
    }
    rc = run(&b);
out:
    release(&b);
    pthread_cond_destroy(&b.cv);
    pthread_mutex_destroy(&b.mu);
    sem_destroy(&b.connect_slots);
    return rc;
}
