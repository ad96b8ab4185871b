/* SPDX-License-Identifier: MIT */
/*
 * cmd-life.c: the CMD of the "odbc-leader run" fault tests. It records its
 * own life, so a checker can tell whether two CMDs ever ran at once or a
 * CMD outlived the run that started it (tests/faults/cmdcheck).
 *
 *   cmd-life DIR [--term-delay MS] [--deaf] [--child] [--run-ms MS]
 *
 * On start it creates DIR/life-PID.rec and maps it MAP_SHARED: every store
 * lands in the page cache at once and survives SIGKILL and SIGSTOP without
 * a write(2). The record holds the pid, the parent pid, the term
 * (ODBC_LEADER_TERM) and candidate id (ODBC_LEADER_ID) run gave it, the
 * start time, the last heartbeat, the time a stop signal arrived and the
 * time it ended by itself. Times are CLOCK_MONOTONIC read by a raw system
 * call, so libfaketime cannot touch them and every process's records
 * compare (the schedule's time.monotonic_ns() reads the same clock).
 *
 * It heartbeats (stores the time) every 1 ms until
 *   - --run-ms MS have passed: it writes end_ns and exits 0;
 *   - SIGTERM (or SIGINT, SIGHUP: run passes all three on) arrives: it
 *     stores got_sigterm_ns, keeps heartbeating --term-delay MS more
 *     (default 0), writes end_ns and exits 0. With --deaf it stores
 *     got_sigterm_ns and keeps running: only SIGKILL stops it.
 * --child forks one child first, which stays in CMD's process group and
 * records itself the same way in its own file, with is_child set: it shows
 * whether run stops the whole group or only CMD.
 *
 * No signal handler: the stop signals are blocked and polled with
 * sigtimedwait() (zero timeout) after each 1 ms sleep.
 * Exit status: 0, or 2 for usage and setup errors (with a message).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LIFE_MAGIC "OLCMDLF1"
#define ID_MAX 128      /* ODBC_LEADER_ID bytes kept */
#define BEAT_NS 1000000 /* heartbeat period */
#define NS_PER_MS INT64_C(1000000)

/* The record file: 208 bytes, little-endian, every field naturally
 * aligned (tests/faults/cmdcheck reads it with struct "<8siiiiqqqqqq136s").
 * magic is written last, so a reader that sees it sees the fields. */
struct life {
    char magic[8];
    int32_t pid;
    int32_t ppid;              /* getppid() at start */
    int32_t is_child;          /* 1: the --child of a CMD */
    int32_t term_ok;           /* 1: ODBC_LEADER_TERM set and a number */
    int64_t term;              /* ODBC_LEADER_TERM, 0 when missing */
    int64_t start_ns;          /* at main() entry */
    int64_t last_heartbeat_ns; /* updated every BEAT_NS */
    int64_t got_sigterm_ns;    /* first stop signal, 0 never */
    int64_t end_ns;            /* exited by itself, 0 otherwise */
    int64_t beats;             /* heartbeats stored */
    char id[ID_MAX + 8];       /* ODBC_LEADER_ID, NUL-terminated */
};

_Static_assert(sizeof(struct life) == 208, "cmdcheck's LIFE layout");

/* Options. */
struct opts {
    const char *dir;
    int64_t term_delay_ns; /* --term-delay */
    int64_t run_ns;        /* --run-ms, 0 = until a signal */
    int deaf;              /* --deaf */
    int child;             /* --child */
};

/* CLOCK_MONOTONIC in nanoseconds, bypassing any LD_PRELOADed wrapper. */
static int64_t mono_ns(void) {
    struct timespec ts;

    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Stores v at *dst so that a process reading the mapping, even after our
 * death, sees the old or the new value, never a torn one. */
static void put(int64_t *dst, int64_t v) {
    __atomic_store_n(dst, v, __ATOMIC_RELEASE);
}

static void usage(void) {
    fputs("usage: cmd-life DIR [--term-delay MS] [--deaf] [--child] "
          "[--run-ms MS]\n",
          stderr);
    exit(2);
}

/* Parses a non-negative number of milliseconds into nanoseconds. */
static int64_t ms_arg(const char *s) {
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 0 ||
        v > INT64_MAX / NS_PER_MS)
        usage();
    return (int64_t)v * NS_PER_MS;
}

static void parse(struct opts *o, int argc, char **argv) {
    memset(o, 0, sizeof(*o));
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--term-delay") == 0 && i + 1 < argc)
            o->term_delay_ns = ms_arg(argv[++i]);
        else if (strcmp(argv[i], "--run-ms") == 0 && i + 1 < argc)
            o->run_ns = ms_arg(argv[++i]);
        else if (strcmp(argv[i], "--deaf") == 0)
            o->deaf = 1;
        else if (strcmp(argv[i], "--child") == 0)
            o->child = 1;
        else if (argv[i][0] != '-' && o->dir == NULL)
            o->dir = argv[i];
        else
            usage();
    }
    if (o->dir == NULL)
        usage();
}

/* Fills term/term_ok from ODBC_LEADER_TERM: a decimal integer, else
 * term_ok stays 0 (the checker reports it). */
static void read_term(struct life *l) {
    const char *s = getenv("ODBC_LEADER_TERM");
    char *end;
    long long v;

    if (s == NULL || *s == '\0')
        return;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return;
    l->term = v;
    l->term_ok = 1;
}

/* Creates DIR/life-PID.rec, maps it and fills in everything but the
 * heartbeat. Returns the mapping (kept until exit), or NULL with a
 * message on stderr. */
static struct life *open_life(const char *dir, int is_child, int64_t start_ns) {
    char path[4096];
    struct life *l;
    const char *id = getenv("ODBC_LEADER_ID");
    int fd;

    snprintf(path, sizeof(path), "%s/life-%ld.rec", dir, (long)getpid());
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ftruncate(fd, (off_t)sizeof(*l)) != 0) {
        fprintf(stderr, "cmd-life: %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    l = mmap(NULL, sizeof(*l), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (l == MAP_FAILED) {
        fprintf(stderr, "cmd-life: mmap %s: %s\n", path, strerror(errno));
        return NULL;
    }
    l->pid = (int32_t)getpid();
    l->ppid = (int32_t)getppid();
    l->is_child = is_child;
    read_term(l);
    if (id != NULL)
        snprintf(l->id, sizeof(l->id), "%.*s", ID_MAX, id);
    put(&l->start_ns, start_ns);
    put(&l->last_heartbeat_ns, start_ns);
    /* publish: the fields above are visible before the magic */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    memcpy(l->magic, LIFE_MAGIC, sizeof(l->magic));
    return l;
}

/* Heartbeats until --run-ms passes or a stop signal (plus --term-delay)
 * ends the life; with --deaf stop signals only get recorded. Returns
 * when the life ends by itself, end_ns written. */
static void live(struct life *l, const struct opts *o, const sigset_t *stop) {
    const struct timespec beat = {0, BEAT_NS};
    const struct timespec zero = {0, 0};
    int64_t stop_at = o->run_ns > 0 ? l->start_ns + o->run_ns : 0;

    for (;;) {
        int64_t now;

        clock_nanosleep(CLOCK_MONOTONIC, 0, &beat, NULL);
        now = mono_ns();
        put(&l->last_heartbeat_ns, now);
        put(&l->beats, l->beats + 1);
        if (sigtimedwait(stop, NULL, &zero) > 0 && l->got_sigterm_ns == 0) {
            put(&l->got_sigterm_ns, now);
            if (!o->deaf) {
                int64_t t = now + o->term_delay_ns;

                if (stop_at == 0 || t < stop_at)
                    stop_at = t;
            }
        }
        if (stop_at != 0 && now >= stop_at)
            break;
    }
    put(&l->end_ns, mono_ns());
}

int main(int argc, char **argv) {
    int64_t start_ns = mono_ns();
    struct opts o;
    struct life *l;
    sigset_t stop;
    int is_child = 0;

    parse(&o, argc, argv);
    /* The stop signals are blocked (and polled); SIG_DFL first, because an
     * ignored signal would be discarded even while blocked. */
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGHUP);
    sigprocmask(SIG_BLOCK, &stop, NULL);
    if (o.child) {
        pid_t pid = fork();

        if (pid < 0) {
            fprintf(stderr, "cmd-life: fork: %s\n", strerror(errno));
            return 2;
        }
        if (pid == 0) { /* same process group, same mask */
            is_child = 1;
            start_ns = mono_ns();
        }
    }
    l = open_life(o.dir, is_child, start_ns);
    if (l == NULL)
        return 2;
    live(l, &o, &stop);
    return 0;
}
