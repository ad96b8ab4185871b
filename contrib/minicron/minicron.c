/* SPDX-License-Identifier: MIT */
/*
 * minicron.c: main() and the command line of minicron, a small cron that
 * fires its jobs only while a leader_plugin says this process leads, so
 * several copies on several hosts run each job once. It is the worked
 * example of a host of leader_plugin.h; minicron.h lists the files of its
 * parts. What minicron does, all files together:
 *
 *   minicron -p PLUGIN.so -c CONFIG -f CRONTAB [-v] [--slot-seconds N]
 *            [--grace SECONDS] [--misfire skip|once|all]
 *            [--misfire-window DURATION]
 *
 * Time is cut into slots of N seconds (60: the minutes of the wall clock);
 * a job's fire is one (job, slot) pair, named in the plugin's fire ledger
 * by the job's name (below) and the slot's nominal start in epoch ms, the
 * same on every host.
 *
 * With a plugin of ABI 1.1 or later (it has claim and finish), fires are
 * claimed: on every wake-up, the leader claims each fire that is due and
 * not yet settled in this process, and starts the job only when claim()
 * answers 1. The database records the claim only while this process holds
 * the namespace's current term, and never twice for one fire, so a fire
 * runs at most once whoever claims it in whatever term. The fires looked
 * at are those of the slots begun within the misfire window
 * (--misfire-window, default 5 minutes; the current slot always), so a new
 * leader catches up what fell due during a failover: --misfire all claims
 * every due slot of the window, oldest first; once (the default) only the
 * newest due slot of each job, older missed ones being coalesced into it;
 * skip only slots that began after this process was seen leading its term
 * (no catch-up). With a plugin of ABI 1.7 (it has catch_up), the plugin
 * decides which due slots to claim, the same on every host
 * (docs/catch-up.md): --misfire is the policy (skip, once as latest, all),
 * the window its grace on the database clock, and under once a slot no
 * later than the ledger's latest fire of the job is not claimed (a job
 * with no fire in the ledger catches up nothing under any policy); the
 * present slot is claimed under every policy. Each job's
 * settled slots are remembered as one watermark
 * (every due slot up to it was answered 0 or 1, or passed over), so a
 * process claims a fire at most once and its memory is one number a job.
 * claim() answering not-leader stops the round; another error leaves the
 * fire due, retried at the next wake-up while it is inside the window.
 * When a job's shell is reaped, finish() records 0, its exit status or
 * -signal (retried after good ticks when it fails); a claimed fire that is
 * not started records 127, or 80 when the term ended after the claim.
 * So, with --misfire all, a fire whose slot began while some minicron was
 * alive and got to lead (and reach the database) before the slot left the
 * window is claimed exactly once, and no fire is ever run twice; a fire
 * whose claimant dies between the claim and the start stays claimed, not
 * run. Clock skew between hosts shifts when a fire is seen due, never
 * which fire it is.
 *
 * Job names: "cron-" and the 64-bit FNV-1a hash of the command, in hex,
 * with "-K" added for the K-th line (K >= 2) with the same command; so
 * editing other lines (comments, line numbers) keeps a job's identity.
 *
 * In a sharded group (a plugin of ABI 1.3 whose shards() is N > 0, e.g.
 * LeaderShards=N in the configuration), each job belongs to the shard of
 * its name (shard_of) and runs on the process that leads that shard, under
 * that shard's term: the processes share the jobs. Each job is claimed,
 * started and killed by its own shard's term as above; a process that
 * gains a shard catches up its jobs' due fires within the window (--misfire
 * once or all; skip, which needs one term to date from, is refused).
 *
 * With an ABI 1.0 plugin (no claim), the old rule holds: when the process
 * crosses into a new slot it fires the slot's jobs only when it leads with
 * a term it already led before the slot began. A slot whose boundary falls
 * inside a failover is skipped by everyone (at most once, with gaps); the
 * misfire options are ignored.
 *
 * Jobs run with /bin/sh -c, stdin from /dev/null, and ODBC_LEADER_TERM
 * (the term they were started under), ODBC_LEADER_FIRE_MS (the fire's key:
 * the slot's start in ms, or a run-now's key), MINICRON_SLOT (the slot's
 * start, epoch seconds) and MINICRON_JOB (the job's name) in the
 * environment. With an ABI 1.4 plugin, a leader of one namespace also runs
 * the run-now requests its ticks learn (odbc-leader jobs trigger), each
 * once; a paused job's fires are refused by the claim itself.
 *
 * Each job runs in a process group of its own and is remembered, with the
 * term it was started under, until its shell is reaped (at most MAX_RUNS
 * at once; beyond that a due fire is not claimed yet, or, without claims,
 * not started). A job lives no longer than its term does here: on every
 * wake-up and after every tick, the process group of each job whose term
 * is not the one the plugin says this process leads gets SIGKILL at once.
 * The plugin's next tick is never later than the end of its trust window,
 * which ends a safety margin before the lease, so the kill comes before
 * another process can lead.
 *
 * The plugin is ticked on the schedule it asks for; the process also wakes
 * at every slot boundary and at least once a second (a wall-clock step is
 * noticed within a second). SIGTERM, SIGINT and SIGCHLD are blocked and
 * collected with sigtimedwait(), which is also the sleep: no handlers and
 * no global flags. SIGCHLD reaps finished jobs. SIGTERM and SIGINT stop:
 * every running job's group gets SIGTERM, then up to --grace seconds pass
 * (the plugin is still ticked, so the lease is renewed, and a job whose
 * term ends meanwhile is killed at once; a second SIGTERM or SIGINT cuts
 * the wait short), what is left gets SIGKILL and is reaped, and only then
 * is the plugin shut down (which resigns). Exit status 0.
 *
 * Limits: a process cannot act while it is stopped or dead. When minicron
 * itself is killed with SIGKILL (or crashes) its jobs keep running (their
 * fires stay claimed and never finished in the ledger, and are not run
 * again), and while it is stopped with SIGSTOP its jobs outlive its term
 * until it is continued; posix_spawn cannot set PR_SET_PDEATHSIG. Such
 * jobs are fenced only: they must fence what they write with
 * ODBC_LEADER_TERM, or run under `odbc-leader run`, whose supervisor stops
 * them for exactly this case. Processes a job leaves in its group after
 * its shell has exited are not tracked.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sysexits.h>
#include <unistd.h>

#include "minicron.h"

#define SLOT_S_DEFAULT 60
#define SLOT_S_MAX 86400
#define GRACE_S_DEFAULT 5 /* --grace */
#define GRACE_S_MAX 86400
#define WINDOW_S_DEFAULT 300 /* --misfire-window */
#define WINDOW_S_MAX 86400

static const char *const misfire_names[] = {"skip", "once", "all"};

/* The command line. All strings are borrowed from argv. */
struct options {
    const char *plugin;  /* -p, required */
    const char *config;  /* -c, "" when absent */
    const char *crontab; /* -f, required */
    int threshold;       /* least important syslog level printed */
    int slot_s;          /* --slot-seconds */
    int grace_s;         /* --grace */
    int misfire;         /* --misfire, an enum misfire */
    int window_s;        /* --misfire-window */
};

static void usage(FILE *to) {
    fprintf(to,
            "usage: minicron -p PLUGIN.so -f CRONTAB [-c CONFIG] [-v]...\n"
            "                [--slot-seconds N] [--grace SECONDS]\n"
            "                [--misfire skip|once|all] [--misfire-window D]\n"
            "  -p, --plugin PATH     leader plugin to dlopen (required)\n"
            "  -c, --config STRING   the plugin's configuration, e.g. an ODBC\n"
            "                        connection string with Leader* keys\n"
            "  -f, --crontab FILE    jobs, in crontab format (required)\n"
            "  -v, --verbose         more log lines (-vv: debug)\n"
            "      --slot-seconds N  for tests: a \"minute\" lasts N seconds\n"
            "                        and the minute field counts slots\n"
            "                        (default 60: the wall clock's minutes)\n"
            "      --grace SECONDS   on SIGTERM or SIGINT, how long running\n"
            "                        jobs get between SIGTERM and SIGKILL\n"
            "                        (default 5); the plugin resigns after\n"
            "                        the jobs have ended\n"
            "      --misfire POLICY  fires a new leader catches up, with a\n"
            "                        plugin that claims fires (ABI 1.1):\n"
            "                        all: every due slot of the window;\n"
            "                        once: each job's newest due slot of the\n"
            "                        window (default); skip: none, only\n"
            "                        slots begun while leading\n"
            "      --misfire-window D  how far back a leader looks for due\n"
            "                        fires: seconds, or a number with s, m,\n"
            "                        h or d (default 5m, at most 1d)\n"
            "  -h, --help            this text\n"
            "Jobs run only while the plugin says this process leads, with\n"
            "ODBC_LEADER_TERM, ODBC_LEADER_FIRE_MS, MINICRON_SLOT and\n"
            "MINICRON_JOB in their environment; a job is killed when the\n"
            "term it was started under ends here. With claims, each (job,\n"
            "slot) runs at most once; odbc-leader jobs pauses a job, or runs\n"
            "it once now (trigger), on every minicron of the namespace.\n"
            "With LeaderShards=N in the configuration (a group), each job\n"
            "runs where its shard is led, so the processes share the jobs.\n");
}

/* Reads optarg s as an integer lo..hi into *out. Returns 0, or EX_USAGE
 * after saying why (name is the option, borrowed). */
static int parse_int(const char *name, const char *s, long lo, long hi,
                     int *out) {
    char *end;
    long n;

    errno = 0;
    n = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || n < lo || n > hi) {
        fprintf(stderr, "minicron: --%s: %ld..%ld, not %s\n", name, lo, hi, s);
        return EX_USAGE;
    }
    *out = (int)n;
    return 0;
}

/* Reads the duration s ("N" seconds, or N with s, m, h or d) as seconds,
 * 0..WINDOW_S_MAX, into *out. Returns 0, or EX_USAGE after saying why. */
static int parse_window(const char *s, int *out) {
    static const char units[] = "smhd";
    static const long unit_s[] = {1, 60, 3600, 86400};
    const char *u;
    char *end;
    long n;

    errno = 0;
    n = strtol(s, &end, 10);
    u = *end != '\0' && end[1] == '\0' ? strchr(units, *end) : NULL;
    if (u != NULL && n >= 0 && n <= WINDOW_S_MAX)
        n *= unit_s[u - units];
    if (errno != 0 || end == s || (*end != '\0' && u == NULL) || n < 0 ||
        n > WINDOW_S_MAX) {
        fprintf(stderr,
                "minicron: --misfire-window: 0..%d seconds (or 0s..1d), "
                "not %s\n",
                WINDOW_S_MAX, s);
        return EX_USAGE;
    }
    *out = (int)n;
    return 0;
}

/* Reads the policy name s into *out. Returns 0, or EX_USAGE after saying
 * why. */
static int parse_misfire(const char *s, int *out) {
    for (int i = 0; i <= MISFIRE_ALL; i++) {
        if (strcmp(s, misfire_names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    fprintf(stderr, "minicron: --misfire: skip, once or all, not %s\n", s);
    return EX_USAGE;
}

/* Handles one long option without a short form (opt from getopt_long,
 * arg its argument) into *o. Returns 0 or EX_USAGE. */
static int long_option(int opt, const char *arg, struct options *o) {
    switch (opt) {
    case 'S':
        return parse_int("slot-seconds", arg, 1, SLOT_S_MAX, &o->slot_s);
    case 'G':
        return parse_int("grace", arg, 0, GRACE_S_MAX, &o->grace_s);
    case 'M':
        return parse_misfire(arg, &o->misfire);
    case 'W':
        return parse_window(arg, &o->window_s);
    }
    usage(stderr);
    return EX_USAGE;
}

/* Fills *o from the command line. Returns -1 to go on, else the exit
 * status (0 after --help). */
static int parse_options(int argc, char **argv, struct options *o) {
    static const struct option longs[] = {
        {"plugin", required_argument, NULL, 'p'},
        {"config", required_argument, NULL, 'c'},
        {"crontab", required_argument, NULL, 'f'},
        {"verbose", no_argument, NULL, 'v'},
        {"slot-seconds", required_argument, NULL, 'S'},
        {"grace", required_argument, NULL, 'G'},
        {"misfire", required_argument, NULL, 'M'},
        {"misfire-window", required_argument, NULL, 'W'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt;

    *o = (struct options){NULL,           "",
                          NULL,           LOG_NOTICE,
                          SLOT_S_DEFAULT, GRACE_S_DEFAULT,
                          MISFIRE_ONCE,   WINDOW_S_DEFAULT};
    for (opt = getopt_long(argc, argv, "p:c:f:vh", longs, NULL); opt != -1;
         opt = getopt_long(argc, argv, "p:c:f:vh", longs, NULL)) {
        switch (opt) {
        case 'p':
            o->plugin = optarg;
            break;
        case 'c':
            o->config = optarg;
            break;
        case 'f':
            o->crontab = optarg;
            break;
        case 'v':
            o->threshold += o->threshold < LOG_DEBUG;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            if (long_option(opt, optarg, o) != 0)
                return EX_USAGE;
        }
    }
    if (optind != argc || o->plugin == NULL || o->crontab == NULL) {
        usage(stderr);
        return EX_USAGE;
    }
    return -1;
}

/* Says at start what the plugin allows: claimed fires with the misfire
 * policy, or the old at-most-once rule. Sets mc->claims. */
static void announce(struct minicron *mc, const struct options *o) {
    mc->claims =
        LEADER_PLUGIN_HAS(mc->p, claim) && LEADER_PLUGIN_HAS(mc->p, finish);
    say(mc, LOG_INFO, "plugin %s %s (ABI %u.%u), %d-second slots, %d s grace",
        mc->p->name, mc->p->version, mc->p->abi_major, mc->p->abi_minor,
        mc->slot_s, o->grace_s);
    if (mc->claims)
        say(mc, LOG_INFO, "fires claimed: misfire %s, window %d s",
            misfire_names[mc->misfire], o->window_s);
    else
        say(mc, LOG_NOTICE,
            "plugin %s cannot claim fires: each slot is fired only by a "
            "process leading since before it began, --misfire ignored",
            mc->p->name);
    if (mc->shards > 0)
        say(mc, LOG_INFO,
            "a member of a group of %u shards: each job runs "
            "where its shard is led",
            (unsigned)mc->shards);
}

int main(int argc, char **argv) {
    struct options o;
    struct minicron mc = {0};
    struct leader_host host = {.struct_size = sizeof(host),
                               .ctx = &mc,
                               .log = on_log,
                               .on_change = on_change};
    char err[ERR_MAX] = "";
    void *dl = NULL;
    sigset_t sigs;
    int status = parse_options(argc, argv, &o);

    if (status >= 0)
        return status;
    mc.threshold = o.threshold;
    mc.slot_s = o.slot_s;
    mc.misfire = o.misfire;
    mc.window_ns = o.window_s * NS_PER_S;
    mc.pid = getpid();
    /* Blocked before anything else: collected by sigtimedwait() only. */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGCHLD);
    sigprocmask(SIG_BLOCK, &sigs, NULL);

    status = load_crontab(&mc, o.crontab);
    if (status != 0)
        goto out;
    status = EX_UNAVAILABLE;
    mc.p = load(&mc, o.plugin, &dl);
    if (mc.p == NULL)
        goto out;
    status = EX_CONFIG;
    if (mc.p->init(o.config, &host, &mc.inst, err, sizeof(err)) < 0) {
        say(&mc, LOG_ERR, "%s: init failed: %s", mc.p->name, err);
        goto out;
    }
    mc.shards = LEADER_PLUGIN_HAS(mc.p, shards) &&
                        LEADER_PLUGIN_HAS(mc.p, shard_of) &&
                        LEADER_PLUGIN_HAS(mc.p, shard_leadership)
                    ? mc.p->shards(mc.inst)
                    : 0;
    if (mc.shards > 0 && mc.misfire == MISFIRE_SKIP) {
        say(&mc, LOG_ERR,
            "--misfire skip: in a group of shards (LeaderShards) "
            "use once or all; skip dates from one term");
        mc.p->shutdown(mc.inst);
        goto out;
    }
    if (declare_schedules(&mc) != 0) {
        mc.p->shutdown(mc.inst);
        goto out;
    }
    announce(&mc, &o);
    run(&mc, &sigs);
    stop_jobs(&mc, &sigs, o.grace_s); /* no job of ours outlives the term */
    mc.p->shutdown(mc.inst); /* resigns: a follower takes over at once */
    say(&mc, LOG_INFO, "stopped");
    status = 0;
out:
    if (dl != NULL)
        dlclose(dl);
    crontab_free(&mc.tab);
    free(mc.jobs);
    return status;
}
