/* SPDX-License-Identifier: MIT */
/*
 * watchdog.c: the supervisor between "odbc-leader run" and CMD, a dead
 * man's switch that keeps CMD inside its lease whatever happens to run.
 *
 * run forks the supervisor, which forks CMD into a process group of its
 * own and holds a deadline on CLOCK_BOOTTIME (the trust window's end minus
 * the time a SIGKILL needs). CMD's group gets SIGTERM at deadline - grace
 * and SIGKILL at the deadline unless run has moved the deadline on (after
 * each renewal) in the meantime. The supervisor needs nothing from run to
 * do this: if run is paused (SIGSTOP, a tick blocked in the database) the
 * deadline passes and CMD dies; if run dies (kill -9, a crash, the OOM
 * killer) the control pipe reaches end of file and CMD's group gets
 * SIGKILL at once. CMD also gets PR_SET_PDEATHSIG, so killing the
 * supervisor itself takes CMD along (its group is then killed by run).
 *
 * The supervisor is a child subreaper: members of CMD's group whose parent
 * exits are reparented to it and reaped, so "the group is empty" can be
 * seen even where PID 1 does not reap. It lives in a process group of its
 * own (a terminal's SIGTSTP to run's group does not stop it) and keeps no
 * file descriptor but its two pipes and stdio: the database connections
 * of run stay with run. It never returns into run's code: it _exit()s.
 *
 * Messages are fixed-size records, written atomically (< PIPE_BUF):
 * run -> supervisor: DEADLINE(t), STOP(sig), KILL; supervisor -> run:
 * STARTED(pid of CMD) at once, DONE(wait status, flags) when CMD and its
 * whole group are gone, just before the supervisor exits.
 */
#define _GNU_SOURCE
#include <build_config.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "log.h"

#define NS_PER_MS INT64_C(1000000)
#define GROUP_POLL_MS 20 /* checking that a dying group is empty */

enum msg_type {
    MSG_DEADLINE = 1, /* run: t is the new deadline */
    MSG_STOP,         /* run: send arg to the group, SIGKILL after grace */
    MSG_KILL,         /* run: SIGKILL the group now */
    MSG_STARTED,      /* supervisor: CMD is pid arg */
    MSG_DONE,         /* supervisor: CMD's wait status arg, flags t */
};

struct msg {
    int32_t type;
    int32_t arg;
    int64_t t;
};

struct odbc_leader__wd {
    pid_t sup;  /* the supervisor */
    pid_t cmd;  /* CMD, the leader of its process group */
    int ctl;    /* write end: run -> supervisor (non-blocking) */
    int rep;    /* read end: supervisor -> run */
    int done;   /* the supervisor was reaped */
    int status; /* CMD's wait status, once done */
    int flags;  /* ODBC_LEADER__WD_* once done */
};

/* The supervisor's state, in the supervisor process only. */
struct sup {
    int ctl, rep, sfd, tfd;
    pid_t cmd;
    int64_t deadline;     /* SIGKILL at this time (CLOCK_BOOTTIME ns) */
    int64_t grace;        /* SIGTERM this long before */
    int64_t stop_kill_at; /* after a SIGTERM: SIGKILL then (0 = none) */
    int term_sent, killed, main_done, status, flags;
};

/* Writes the whole record m to fd. Returns 0 or -1. */
static int put(int fd, int32_t type, int32_t arg, int64_t t) {
    struct msg m;
    ssize_t n;

    memset(&m, 0, sizeof(m));
    m.type = type;
    m.arg = arg;
    m.t = t;
    do
        n = write(fd, &m, sizeof(m));
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof(m) ? 0 : -1;
}

/* Reads one record from fd. Returns 1, 0 at end of file, or -1 (EAGAIN
 * when nothing is there on a non-blocking fd). */
static int get(int fd, struct msg *m) {
    ssize_t n;

    do
        n = read(fd, m, sizeof(*m));
    while (n < 0 && errno == EINTR);
    if (n == 0)
        return 0;
    return n == (ssize_t)sizeof(*m) ? 1 : -1;
}

/* ---- the supervisor process ------------------------------------------- */

/* Sends sig to CMD's process group (to CMD alone if the group is gone but
 * CMD is not reaped). */
static void group_signal(const struct sup *s, int sig) {
    if (kill(-s->cmd, sig) < 0 && !s->main_done)
        kill(s->cmd, sig);
}

/* 1 while any process of CMD's group exists. */
static int group_alive(const struct sup *s) {
    return kill(-s->cmd, 0) == 0 || errno == EPERM;
}

/* SIGTERM now (when not sent yet), SIGKILL after the grace period or at
 * the deadline, whichever comes first. */
static void sup_term(struct sup *s, int sig, int64_t now) {
    group_signal(s, sig);
    if (s->term_sent)
        return;
    s->term_sent = 1;
    s->stop_kill_at = now + s->grace;
}

static void sup_kill(struct sup *s) {
    group_signal(s, SIGKILL);
    s->killed = 1;
}

/* The time SIGKILL is due. */
static int64_t kill_due(const struct sup *s) {
    if (s->stop_kill_at != 0 && s->stop_kill_at < s->deadline)
        return s->stop_kill_at;
    return s->deadline;
}

/* Acts on the clock: SIGTERM at deadline - grace, SIGKILL when due. */
static void sup_timers(struct sup *s) {
    int64_t now = odbc_leader__now_ns(NULL);

    if (s->killed)
        return;
    if (now >= kill_due(s)) {
        if (now >= s->deadline)
            s->flags |= ODBC_LEADER__WD_DEADLINE;
        sup_kill(s);
        return;
    }
    if (!s->term_sent && now >= s->deadline - s->grace) {
        s->flags |= ODBC_LEADER__WD_DEADLINE;
        sup_term(s, SIGTERM, now);
    }
}

/* Arms the timer for the next action of sup_timers (CLOCK_BOOTTIME,
 * absolute, so a suspend cannot stretch it), or a short poll while a
 * finished CMD's group empties. */
static void sup_arm(struct sup *s) {
    struct itimerspec it;
    int64_t at;

    memset(&it, 0, sizeof(it));
    if (s->killed || s->main_done)
        at = odbc_leader__now_ns(NULL) + GROUP_POLL_MS * NS_PER_MS;
    else if (s->term_sent)
        at = kill_due(s);
    else
        at = s->deadline - s->grace;
    if (at <= 0)
        at = 1;
    it.it_value.tv_sec = at / 1000000000;
    it.it_value.tv_nsec = at % 1000000000;
    timerfd_settime(s->tfd, TFD_TIMER_ABSTIME, &it, NULL);
}

/* Handles one message from run; at end of file (run is gone) kills the
 * group at once. */
static void sup_message(struct sup *s) {
    struct msg m;
    int n = get(s->ctl, &m);

    if (n <= 0) {
        if (n == 0 || errno != EAGAIN) {
            s->flags |= ODBC_LEADER__WD_ORPHANED;
            if (!s->killed)
                sup_kill(s);
            close(s->ctl);
            s->ctl = -1;
        }
        return;
    }
    switch (m.type) {
    case MSG_DEADLINE:
        s->deadline = m.t;
        break;
    case MSG_STOP:
        s->flags |= ODBC_LEADER__WD_STOPPED;
        sup_term(s, m.arg, odbc_leader__now_ns(NULL));
        break;
    case MSG_KILL:
        s->flags |= ODBC_LEADER__WD_STOPPED;
        sup_kill(s);
        break;
    default:
        break;
    }
}

/* Reaps every child that ended (CMD, and orphans of its group). When CMD
 * itself ended while others of its group live on, they are stopped like
 * CMD would be: SIGTERM, SIGKILL after the grace period. */
static void sup_reap(struct sup *s) {
    struct signalfd_siginfo si;
    pid_t pid;
    int st;

    while (read(s->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
        ;
    for (pid = waitpid(-1, &st, WNOHANG); pid > 0;
         pid = waitpid(-1, &st, WNOHANG)) {
        if (pid == s->cmd) {
            s->main_done = 1;
            s->status = st;
        }
    }
    if (s->main_done && !s->term_sent && !s->killed && group_alive(s))
        sup_term(s, SIGTERM, odbc_leader__now_ns(NULL));
}

/* In the forked CMD: own process group, killed with the supervisor, the
 * caller's signal mask and limit of open files, the ODBC_LEADER_*
 * variables, then exec. Never returns. */
static void exec_cmd(const struct odbc_leader__wd_spec *spec, pid_t sup) {
    int e;

    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != sup)
        _exit(ODBC_LEADER__EX_LOST);
    sigprocmask(SIG_SETMASK, spec->cmd_mask, NULL);
    if (spec->cmd_nofile != NULL)
        setrlimit(RLIMIT_NOFILE, spec->cmd_nofile);
    if (setenv("ODBC_LEADER_TERM", spec->term, 1) < 0 ||
        setenv("ODBC_LEADER_NAMESPACE", spec->ns, 1) < 0 ||
        setenv("ODBC_LEADER_ID", spec->id, 1) < 0) {
        fputs("odbc-leader: out of memory\n", stderr);
        _exit(EX_OSERR);
    }
    execvp(spec->cmd[0], spec->cmd);
    e = errno;
    fprintf(stderr, "odbc-leader: %s: %s\n", spec->cmd[0], strerror(e));
    _exit(e == ENOENT ? ODBC_LEADER__EX_NOTFOUND : ODBC_LEADER__EX_NOEXEC);
}

/* Closes every descriptor above stderr except keep1 and keep2 (which may
 * be anywhere, even below 3 when run started with stdio closed). */
static void close_others(int keep1, int keep2) {
    int keep[2] = {keep1 < keep2 ? keep1 : keep2,
                   keep1 < keep2 ? keep2 : keep1};
    unsigned from = 3;

    for (int i = 0; i < 2; i++) {
        if (keep[i] < (int)from)
            continue;
        if ((unsigned)keep[i] > from)
            close_range(from, (unsigned)keep[i] - 1, 0);
        from = (unsigned)keep[i] + 1;
    }
    close_range(from, ~0U, 0);
}

/* The supervisor's body, in the forked child of run. Never returns. */
static void supervise(const struct odbc_leader__wd_spec *spec, int ctl,
                      int rep) {
    struct sup s;
    sigset_t chld;
    struct pollfd pfd[3];

    memset(&s, 0, sizeof(s));
    s.ctl = ctl;
    s.rep = rep;
    s.deadline = spec->deadline_ns;
    s.grace = spec->grace_ns;
    close_others(ctl, rep);
    setpgid(0, 0);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    s.sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
    s.tfd = timerfd_create(CLOCK_BOOTTIME, TFD_NONBLOCK | TFD_CLOEXEC);
    if (s.sfd < 0 || s.tfd < 0)
        _exit(EX_OSERR);
    fcntl(ctl, F_SETFL, O_NONBLOCK);
    s.cmd = fork();
    if (s.cmd < 0)
        _exit(EX_OSERR);
    if (s.cmd == 0)
        exec_cmd(spec, getppid());
    setpgid(s.cmd, s.cmd); /* both sides: no signal can miss the group */
    put(rep, MSG_STARTED, s.cmd, 0);
    for (;;) {
        uint64_t ticks;

        sup_timers(&s);
        if (s.main_done && !group_alive(&s))
            break;
        sup_arm(&s);
        pfd[0].fd = s.ctl;
        pfd[0].events = POLLIN;
        pfd[1].fd = s.sfd;
        pfd[1].events = POLLIN;
        pfd[2].fd = s.tfd;
        pfd[2].events = POLLIN;
        if (poll(pfd, 3, -1) < 0 && errno != EINTR)
            _exit(EX_OSERR);
        if (pfd[2].revents & POLLIN)
            (void)!read(s.tfd, &ticks, sizeof(ticks));
        if (s.ctl >= 0 && (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
            sup_message(&s);
        sup_reap(&s);
    }
    put(rep, MSG_DONE, s.status, s.flags);
    _exit(0);
}

/* ---- run's side ---------------------------------------------------------- */

int odbc_leader__wd_start(struct odbc_leader__wd **out,
                          const struct odbc_leader__wd_spec *spec, char *err,
                          size_t errlen) {
    struct odbc_leader__wd *w = calloc(1, sizeof(*w));
    int ctl[2] = {-1, -1}, rep[2] = {-1, -1};
    struct msg m;

    *out = NULL;
    if (w == NULL) {
        odbc_leader__errf(err, errlen, "out of memory");
        return -1;
    }
    if (pipe2(ctl, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0) {
        odbc_leader__errf(err, errlen, "pipe: %s", strerror(errno));
        goto fail;
    }
    fflush(stdout);
    fflush(stderr);
    w->sup = fork();
    if (w->sup < 0) {
        odbc_leader__errf(err, errlen, "fork: %s", strerror(errno));
        goto fail;
    }
    if (w->sup == 0) {
        close(ctl[1]);
        close(rep[0]);
        supervise(spec, ctl[0], rep[1]);
    }
    close(ctl[0]);
    close(rep[1]);
    ctl[0] = rep[1] = -1;
    w->ctl = ctl[1];
    w->rep = rep[0];
    fcntl(w->ctl, F_SETFL, O_NONBLOCK);
    if (get(w->rep, &m) != 1 || m.type != MSG_STARTED) {
        odbc_leader__errf(err, errlen, "the supervisor of CMD failed");
        odbc_leader__wd_destroy(w);
        return -1;
    }
    w->cmd = m.arg;
    *out = w;
    return 0;
fail:
    for (int i = 0; i < 2; i++) {
        if (ctl[i] >= 0)
            close(ctl[i]);
        if (rep[i] >= 0)
            close(rep[i]);
    }
    free(w);
    return -1;
}

int odbc_leader__wd_extend(struct odbc_leader__wd *w, int64_t deadline_ns) {
    return put(w->ctl, MSG_DEADLINE, 0, deadline_ns);
}

int odbc_leader__wd_stop(struct odbc_leader__wd *w, int sig) {
    return put(w->ctl, MSG_STOP, sig, 0);
}

/* The supervisor cannot take the message (gone, or stopped with a full
 * pipe): kills CMD's group from here. */
int odbc_leader__wd_kill(struct odbc_leader__wd *w) {
    if (put(w->ctl, MSG_KILL, 0, 0) == 0)
        return 0;
    kill(-w->cmd, SIGKILL);
    return -1;
}

int odbc_leader__wd_done(struct odbc_leader__wd *w, int *status, int *flags) {
    struct msg m;
    int st;

    if (!w->done) {
        if (waitpid(w->sup, &st, WNOHANG) != w->sup)
            return 0;
        w->done = 1;
        w->flags = ODBC_LEADER__WD_LOST;
        w->status = 0;
        if (get(w->rep, &m) == 1 && m.type == MSG_DONE) {
            w->status = m.arg;
            w->flags = (int)m.t;
        } else {
            /* the supervisor died: take CMD's group down from here */
            kill(-w->cmd, SIGKILL);
        }
    }
    *status = w->status;
    *flags = w->flags;
    return 1;
}

void odbc_leader__wd_destroy(struct odbc_leader__wd *w) {
    int st;

    if (w == NULL)
        return;
    close(w->ctl); /* end of file: the supervisor kills what is left */
    if (!w->done && waitpid(w->sup, &st, 0) == w->sup)
        w->done = 1;
    close(w->rep);
    free(w);
}
