#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""clocksteps.py: the clock-step scenarios of tests/cluster/cluster.py
(clockstep: tests/cluster/clockstep.test; sqlitestep:
tests/faults/clockstep-sqlite.test), on the elections of elections.py.

Per phase (a timing and a step size, --phases), step after step, a FRESH
namespace's candidates (--hosts fault-hosts, --runs runs) start together,
the database clock steps forward right after the namespace's first
election, a candidate joins at the step and another (the other kind)
JOIN_LATE_MS after it, while the namespace of the step before (--keep)
takes the same step in steady state (and a joiner). Every namespace must
then elect a new leader within 2 TTLs + one renew interval; nobody may
lead at once. The step is a step of
  * clockstep --clock sql (the default): public.clock_timestamp(), which
    the dialect's unqualified clock_timestamp() resolves to, taken inside
    the transaction of the first election (a trigger, lib-cluster.sh's
    cl_sql_clock_on_win): whoever read the namespace before sees the new
    row and the new clock together;
  * clockstep --clock faketime: the server's libfaketime file, written
    as soon as the first claim is seen (a few ms after the commit);
  * sqlitestep: every candidate's own wall clock (libfaketime preloaded
    through the environment, one file, monotonic clocks real), written as
    soon as the first claim is seen.
A "held" start (--start) keeps the namespace's first row back until every
candidate has read the namespace and waits to create it (PostgreSQL: an
uncommitted INSERT of the row, whose waiters are counted in pg_locks;
SQLite: the file's write lock), then lets them race: they all enter the
election without a reading of the row, as candidates started together do.
--broken: LeaderTestNoWatch=1 (a takeover on database time alone), or, in
a build without it, LeaderTestTrustExtra and a SIGSTOP of the first
leader at each step; the checks must catch an overlap.
"""
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # the source tree may be read-only
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import elections  # noqa: E402
from elections import now_ns, log  # noqa: E402

Election, judge, report = elections.Election, elections.judge, \
    elections.report
BROKEN_EXTRA_MS = elections.BROKEN_EXTRA_MS
FRESH_CLAIM_NS = elections.FRESH_CLAIM_NS

# ---- clock steps (clockstep.test, tests/faults/clockstep-sqlite.test) ------

# Per fresh namespace: a phase's candidates start together (fault-hosts
# and runs), then two joiners: one at the step, one JOIN_LATE_MS after it.
JOIN_LATE_MS = 100
# fault-host -s: a pause between is_leader() calls while leading, so that
# up to three elections' leaders and a spin model check share 2 cores.
CLOCK_SPIN_US = 200
# How often the first claim of a fresh namespace is looked for.
FIRST_CLAIM_POLL_S = 0.002
# The phases (TTL/RENEW/MARGIN/STEP_SxSTEPS): steps of 2 TTL + 1 s at the
# default timing and at a 3-s TTL.
PHASES_PG = "3000/1000/500/7x6,15000/5000/1500/31x4"
PHASES_SQLITE = "3000/1000/500/7x5"


def write_clock(path, offset_s):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("+%d\n" % offset_s)
    os.chmod(tmp, 0o644)
    os.rename(tmp, path)


def parse_phases(spec):
    """TTL/RENEW/MARGIN/STEP_SxSTEPS,... (ms, ms, ms, s, count) as a list
    of dicts."""
    out = []
    for part in spec.split(","):
        m = re.match(r"^(\d+)/(\d+)/(\d+)/(\d+)x(\d+)$", part.strip())
        if m is None:
            raise SystemExit("--phases: TTL/RENEW/MARGIN/STEP_SxSTEPS,... "
                             "not %r" % part)
        ttl, renew, margin, step_s, steps = (int(g) for g in m.groups())
        out.append({"ttl": ttl, "renew": renew, "margin": margin,
                    "step_s": step_s, "steps": steps,
                    "name": "ttl%d" % (ttl // 1000)})
    return out


class Psql:
    """A psql kept open on lib.sh's PostgreSQL server (its database
    leader), fed statements one batch at a time: an answer comes back in
    a millisecond or two, where a new psql takes tens. Errors go to
    err_path; an error inside a transaction aborts it (the batch's later
    SELECTs then answer nothing)."""

    END = "__cl_end__"

    def __init__(self, err_path):
        env = os.environ
        db = re.search(r"Database=([^;]+)", env["OL_PG_CONNECT"]).group(1)
        self.err = open(err_path, "a")
        self.p = subprocess.Popen(
            [os.path.join(env["OL_PG_BIN"], "psql"), "-X", "-A", "-t", "-q",
             "-h", "127.0.0.1", "-p", env["OL_PG_PORT"], "-U",
             env["OL_PG_USER"], "-d", db], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.err, text=True, bufsize=1)

    def query(self, text):
        """Runs text (statements ending in ';'); returns the output lines."""
        self.p.stdin.write(text + "\n\\echo " + self.END + "\n")
        self.p.stdin.flush()
        lines = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("psql ended (see %s)" % self.err.name)
            line = line.rstrip("\n")
            if line == self.END:
                return lines
            lines.append(line)

    def close(self):
        self.p.stdin.close()
        self.p.wait(10)
        self.err.close()


class StepClock:
    """The clock a scenario steps forward, as a running total offset.
    'faketime': the PostgreSQL server's libfaketime file
    ($CL_FAKETIME_FILE); 'sql': public.clock_timestamp()'s offset row
    (cl_sql_clock_pg), through a psql kept open so that the step lands
    within a millisecond or two; 'host': the candidates' own libfaketime
    file (SQLite: every candidate's wall clock at once, as an NTP step
    on their host)."""

    def __init__(self, kind, path=None, psql=None):
        self.kind = kind
        self.path = path
        self.offset_s = 0
        self.psql = psql

    def arm(self, ns, by_s):
        """'sql' only: the first election of namespace ns steps the clock
        forward by by_s seconds in the winner's transaction
        (cl_sql_clock_on_win)."""
        self.psql.query("INSERT INTO public.cl_clock_arm (namespace, "
                        "step_ms) VALUES ('%s', %d);" % (ns, by_s * 1000))
        self.offset_s += by_s

    def fired(self, ns):
        """'sql' only: True when the armed step of ns has been taken."""
        return self.psql.query("SELECT fired FROM public.cl_clock_arm "
                               "WHERE namespace = '%s';" % ns) == ["t"]

    def step(self, by_s):
        """Steps the clock forward by by_s seconds; returns the time (our
        CLOCK_MONOTONIC) at which the step was in place."""
        self.offset_s += by_s
        if self.kind == "sql":
            self.psql.query("UPDATE public.cl_clock_offset SET ms = %d;" %
                            (self.offset_s * 1000))
        else:
            write_clock(self.path, self.offset_s)
        return now_ns()


class HeldStartPg:
    """Holds a new namespace's first row back: an uncommitted INSERT of
    it (through psql, a Psql of our own) makes every candidate's first
    reading find no row and its attempt wait on that key; release()
    rolls it back, and the candidates race for the row at once."""

    def __init__(self, psql, watcher):
        self.psql = psql
        self.watcher = watcher  # another Psql, to count the waiters
        self.xid = None

    def hold(self, ns):
        out = self.psql.query(
            "BEGIN; INSERT INTO odbc_leader_lease (namespace, term, "
            "expires_at_ms) VALUES ('%s', 1, 0); "
            "SELECT 'held ' || CAST(pg_current_xact_id() AS TEXT);" % ns)
        if not out or not out[-1].startswith("held "):
            self.psql.query("ROLLBACK;")
            return False
        self.xid = out[-1].split()[1]
        return True

    def waiting(self):
        out = self.watcher.query(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'transactionid' "
            "AND NOT granted AND CAST(transactionid AS TEXT) = '%s';" %
            self.xid)
        return int(out[0]) if out else 0

    def release(self):
        self.psql.query("ROLLBACK;")
        self.xid = None


class HeldStartSqlite:
    """Holds a SQLite file's write lock (BEGIN IMMEDIATE, nothing
    written) while a new namespace's candidates start: each reads the
    namespace (no row yet) and waits in its attempt's BEGIN IMMEDIATE;
    release() lets them race for the row at once."""

    def __init__(self, path):
        self.path = path
        self.db = None

    def hold(self, ns):
        self.db = sqlite3.connect(self.path, timeout=10,
                                  isolation_level=None)
        self.db.execute("BEGIN IMMEDIATE")
        return True

    def waiting(self):
        return None  # not known: SQLite keeps no list of waiters

    def release(self):
        self.db.execute("ROLLBACK")
        self.db.close()
        self.db = None


def lease_clock(ctx, el):
    """How far the lease's expiry (written by the library in database
    time) is ahead of this host's clock, in ms; None when there is no lease
    row."""
    if ctx.sqlite_file:
        db = sqlite3.connect(ctx.sqlite_file, timeout=10)
        try:
            row = db.execute("SELECT expires_at_ms FROM odbc_leader_lease "
                             "WHERE namespace = ?", (el.ns,)).fetchone()
        finally:
            db.close()
        return None if row is None else row[0] - int(time.time() * 1000)
    out = ctx.shell.call(
        'ol_psql "$1"', "SELECT expires_at_ms - CAST(%d AS BIGINT) FROM "
        "odbc_leader_lease WHERE namespace = '%s'" % (
            int(time.time() * 1000), el.ns))
    return int(out) if out else None


def first_claim(el):
    """(ns, holder, term) of the earliest claim of el so far, or None."""
    best = None
    for (holder, term), (first, _) in el.tenures().items():
        if best is None or first < best[0]:
            best = (first, holder, term)
    return best


def led_since(el):
    """How long (ms) the tenure claiming now has been claiming; 0 when
    nobody claims now."""
    t = now_ns()
    for k, (first, last) in el.tenures().items():
        if t - last < FRESH_CLAIM_NS:
            return (t - first) / 1e6
    return 0.0


def spawn_kind(el, kind):
    if kind == "host":
        return el.spawn_host()
    return el.add_run().id


def maps_faketime(pid):
    """True when process pid has libfaketime mapped; None when it is
    gone."""
    try:
        with open("/proc/%d/maps" % pid) as f:
            return "libfaketime" in f.read()
    except OSError:
        return None


def probe_clocks(env, offset_s):
    """Reads CLOCK_BOOTTIME, CLOCK_MONOTONIC and CLOCK_REALTIME in a
    python3 started with the candidates' environment (libfaketime
    preloaded, the same variables) and compares them with ours. Returns a
    list of findings (empty: the monotonic clocks are real, the wall clock
    is offset_s ahead)."""
    code = "import time; print(time.clock_gettime_ns(time.CLOCK_BOOTTIME)," \
        " time.clock_gettime_ns(time.CLOCK_MONOTONIC), time.time_ns())"
    b0 = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
    m0 = time.monotonic_ns()
    r0 = time.time_ns()
    out = subprocess.run([sys.executable, "-c", code], env=env,
                         stdout=subprocess.PIPE, text=True, timeout=30,
                         check=True).stdout.split()
    b1 = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
    m1 = time.monotonic_ns()
    r1 = time.time_ns()
    boot, mono, real = (int(v) for v in out)
    bad = []
    if not b0 <= boot <= b1:
        bad.append("CLOCK_BOOTTIME under libfaketime is %.3f s off ours" %
                   ((boot - b0) / 1e9))
    if not m0 <= mono <= m1:
        bad.append("CLOCK_MONOTONIC under libfaketime is %.3f s off ours" %
                   ((mono - m0) / 1e9))
    off = offset_s * 1e9
    if not r0 + off - 5e8 <= real <= r1 + off + 5e8:
        bad.append("CLOCK_REALTIME under libfaketime is %.3f s ahead of "
                   "ours, not %d s" % ((real - r0) / 1e9, offset_s))
    return bad


def step_round(ctx, clock, ph, i, live, done, opts):
    """One step: a fresh namespace whose candidates start together, the
    clock stepped right after its first claim, a joiner at the step and
    one JOIN_LATE_MS later (the other kind); the older namespaces in live
    take the step in steady state (and a joiner each). Waits for a new
    tenure everywhere. The fresh Election goes to done at once (with its
    phase) and is returned."""
    timing = (ph["ttl"], ph["renew"], ph["margin"])
    # the old leader steps down at its next renewal (at most a renew
    # interval after the step), a follower takes over when its watch of
    # the unrenewed row has lasted one TTL; one more TTL of slack
    limit = 2 * ph["ttl"] + ph["renew"] + (ph["step_s"] * 1000
                                           if clock.kind == "faketime"
                                           else 0)
    # the older namespaces: a leader that has renewed at least once
    deadline = time.monotonic() + limit / 1000.0
    for el in live:
        while led_since(el) < 1.2 * ph["renew"]:
            el.check_fatal()
            if time.monotonic() > deadline:
                raise RuntimeError("%s: no steady leader within %d ms" % (
                    el.name, limit))
            time.sleep(0.05)
    olds = [(el, el.wait_leader(10)) for el in live]
    name = "%s-ns%d" % (ph["name"], i + 1)
    fresh = Election(ctx, name, opts["conn"], opts["conn"],
                     opts.get("extra_ms", 0), timing, opts.get("keys", ""),
                     opts.get("env"), CLOCK_SPIN_US)
    fresh.init_restart = True
    done.append((fresh, ph))
    at_commit = clock.kind == "sql" and ctx.step_at == "commit"
    if at_commit:
        clock.arm(fresh.ns, ph["step_s"])
    hs = opts.get("held")
    held = hs is not None and (ctx.start == "held" or
                               ctx.start == "alternate" and i % 2 == 0)
    if held and not hs.hold(fresh.ns):
        log("%s: could not hold the first row back (see the psql log): "
            "a free start" % name)
        held = False
    # together; which kind is spawned first alternates
    order = ["host"] * ctx.hosts + ["run"] * ctx.runs
    if i % 2:
        order.reverse()
    t_spawn = now_ns()
    for kind in order:
        spawn_kind(fresh, kind)
    start_note = "free start"
    if held:
        start_note = release_held(ctx, ph, fresh, hs, len(order), t_spawn)
    deadline = time.monotonic() + 30
    first = None
    while first is None:
        if time.monotonic() > deadline:
            raise RuntimeError("%s: no first claim within 30 s (see %s/"
                               "log.txt)" % (name, fresh.dir))
        fresh.check_fatal()
        first = first_claim(fresh)
        if first is None:
            time.sleep(FIRST_CLAIM_POLL_S)
    seen = now_ns()
    since = None
    if at_commit:
        ref, since = first[0], fresh.t_start
        if not clock.fired(fresh.ns):
            raise RuntimeError("%s: the first claim came but the armed step "
                               "was not taken" % name)
    else:
        ref = clock.step(ph["step_s"])
    # the hard cases: candidates with no history of this clock
    k0, k1 = ("host", "run") if i % 2 == 0 else ("run", "host")
    spawn_kind(fresh, k0)
    for el, _ in olds:
        spawn_kind(el, k0)
    frozen = None
    if opts.get("stop_leader"):
        # the first leader sleeps through the step: with the broken trust
        # window it goes on claiming when it wakes up
        cur = fresh.leader()
        if cur is not None:
            frozen, _ = fresh.kill_leader(cur, signal.SIGSTOP)
    rest = JOIN_LATE_MS / 1000.0 - (now_ns() - ref) / 1e9
    if rest > 0:
        time.sleep(rest)
    spawn_kind(fresh, k1)
    delay = ((seen if at_commit else ref) - first[0]) / 1e6
    when = "with the first election's commit, seen %.1f ms after the " \
        "first claim" % delay if at_commit else \
        "%.1f ms after the first claim" % delay
    log("%s: clock stepped +%d s (offset %d s) %s (%s term %d); joiners: "
        "%s at the step, %s %d ms later" % (
            name, ph["step_s"], clock.offset_s, when, first[1], first[2],
            k0, k1, JOIN_LATE_MS))
    fname = "step+%ds" % ph["step_s"]
    fresh.fault(fname, ref, ("first", None, first[2], first[1]), limit,
                note="fresh, %s: step %s" % (start_note,
                    "at the first commit" if at_commit else
                    "%.0f ms after the first claim" % delay),
                first_ns=first[0], step_delay_ms=delay, since=since or ref)
    for el, lead in olds:
        el.fault(fname, ref, lead, limit, note="steady")
    for el in [fresh] + [el for el, _ in olds]:
        el.wait_takeover(el.faults[-1]["since"] if el is fresh else ref,
                         el.faults[-1]["old"], limit)
    if at_commit:
        # the first claim seen may be a later term's (a CMD starts a few
        # ms after its run wins): the first election is the lowest term
        f = fresh.faults[-1]
        low = min(fresh.tenures(), key=lambda k: k[1])
        if low != f["old"]:
            f["old"] = low
            fresh.wait_takeover(f["since"], low, limit)
    if frozen is not None:
        rest = (ph["ttl"] + 1500) / 1000.0 - (now_ns() - ref) / 1e9
        if rest > 0:
            time.sleep(rest)
        fresh.cont(frozen)
    for el in [fresh] + [el for el, _ in olds]:
        el.check_fatal()
    return fresh


def release_held(ctx, ph, fresh, hs, n, t_spawn):
    """Lets a held start go once all n candidates of fresh wait for the
    row (PostgreSQL: waiters on the held key; SQLite: every fault-host
    has logged its start, plus 50 ms), or at the latest 45% of the
    default statement timeout after the spawns (the first candidates
    wait that long at most, which stays inside their statement and busy
    timeouts). Returns a note."""
    stmt = min(ph["renew"], 5000, (ph["ttl"] - ph["margin"] -
                                   ph["renew"]) // 2)
    cap_ns = t_spawn + 0.45 * stmt * 1e6
    started = re.compile(r": log\(6\): candidate ")
    ready_at = None
    w = None
    while now_ns() < cap_ns:
        fresh.check_fatal()
        w = hs.waiting()
        if w is not None and w >= n:
            break
        if w is None:
            if ready_at is None and fresh.logs.count(
                    t_spawn, now_ns() + 1, started, sev=None) >= ctx.hosts:
                ready_at = now_ns() + 50e6
            if ready_at is not None and now_ns() >= ready_at:
                break
        time.sleep(0.005)
    hs.release()
    took = (now_ns() - t_spawn) / 1e6
    if w is None:
        return "held start (%.0f ms)" % took
    return "held start (%d of %d waiting after %.0f ms)" % (w, n, took)


def check_step_effects(ctx, el, offset_s):
    """Notes (and returns as findings) whether the step reached the
    library's clock: the lease, written since the step, expires at least
    offset_s - 1 s ahead of this host's clock."""
    ahead = lease_clock(ctx, el)
    el.faults[-1]["note"] += "; lease expiry %s s ahead of this host's " \
        "clock" % ("-" if ahead is None else "%.1f" % (ahead / 1000.0))
    if ahead is None or ahead < (offset_s - 1) * 1000:
        return ["%s: the step did not reach the library's clock: the lease "
                "expires %s ms ahead of this host's clock, offset %d s" % (
                    el.name, ahead, offset_s)]
    return []


def window_kept(el, f, renew_ms):
    """For a fresh namespace stepped before its first leader's first
    renewal (f: its step's row of judge()): None when the first tenure
    went on claiming well past the step (its trust window runs on
    CLOCK_BOOTTIME, which a wall clock step must not move), else a
    finding.

    Measured from the step, not from the first claim: the tenure claims
    until its first renewal, due one renew interval after its attempt
    started, and the attempt starts before the first claim by the
    election's own latency (205 ms on a loaded run). Stepped at most half
    a renew interval after the first claim, a kept window therefore claims
    for about half a renew interval past the step less that latency; a
    window the step cut short stops within a few ms of it. Measured at
    TTL 3 s: kept, 919 to 1,073 ms past the step; with libfaketime
    stepping the monotonic clocks as well (FAKETIME_DONT_FAKE_MONOTONIC=0),
    -1 to 0 ms in the namespaces a fault-host led first. The bound is a
    fifth of the renew interval."""
    if f["ref"] > f["first_ns"] + 0.5 * renew_ms * 1e6:
        return None  # stepped too late to tell
    span = el.tenures().get(f["old"])
    if span is None:
        return None
    lasted = (span[1] - f["first_ns"]) / 1e6
    after = (span[1] - f["ref"]) / 1e6
    f["note"] += "; first tenure claimed for %.0f ms, %.0f ms past the " \
        "step" % (lasted, after)
    if after < 0.2 * renew_ms:
        return "%s: the first tenure stopped claiming %.0f ms after the " \
            "step (%.0f ms after its first claim), before its first " \
            "renewal was due (%d ms after its attempt): did the step move " \
            "CLOCK_BOOTTIME?" % (el.name, after, lasted, renew_ms)
    return None


def recorder_bounds(el):
    """Findings when a record's time lies outside the election's life on
    our CLOCK_MONOTONIC (a recorder that libfaketime reached)."""
    bad = []
    for (holder, term), (first, last) in el.tenures().items():
        if first < el.t_start or last > el.t_stop + 1e9:
            bad.append("%s: %s t%d claims outside [start, stop] on our "
                       "CLOCK_MONOTONIC: the recorders must stay on the "
                       "real clock" % (el.name, holder, term))
    return bad


def run_clock_phases(ctx, clock, phases, opts, title, env_checks=False):
    """Runs the step rounds of every phase; judges every election; prints
    the tables. Returns the exit status."""
    done = []  # (Election, phase), in order of start
    live = []
    extra = []  # findings beyond the checkers'
    err = None
    probed = False
    try:
        for ph in phases:
            live = []
            log("phase %s: TTL %d ms, renew %d ms, margin %d ms; %d steps of "
                "+%d s" % (ph["name"], ph["ttl"], ph["renew"], ph["margin"],
                           ph["steps"], ph["step_s"]))
            for i in range(ph["steps"]):
                fresh = step_round(ctx, clock, ph, i, live, done, opts)
                if not ctx.broken:
                    extra += check_step_effects(ctx, fresh, clock.offset_s)
                if env_checks and not probed:
                    probed = True
                    extra += probe_clocks(opts["env"], clock.offset_s)
                    with fresh.lock:
                        pids = [c.proc.pid for c in fresh.cands
                                if c.proc is not None]
                    pids += [p for p, h in fresh.hosts.items()
                             if h.poll() is None]
                    missing = [p for p in pids if maps_faketime(p) is False]
                    if missing:
                        extra.append("libfaketime is not mapped in "
                                     "candidate pids %s" % missing)
                live.append(fresh)
                while len(live) > ctx.keep + 1:
                    live.pop(0).stop()
            while live:
                live.pop(0).stop()
    except RuntimeError as e:
        err = str(e)
    finally:
        for el, _ in done:
            if not hasattr(el, "t_stop"):
                el.stop()
    step_re = re.compile(r"clock step|stepped", re.I)
    results = []
    for el, ph in done:
        r = judge(el, False, None)
        r["notes"] += el.notes
        if env_checks and not ctx.broken and r["faults"]:
            w = window_kept(el, r["faults"][0], ph["renew"])
            if w:
                r["violations"].append(w)
            r["violations"] += recorder_bounds(el)
        ends = [f["ref"] for f in el.faults[1:]] + [el.t_stop]
        for f, end in zip(r["faults"], ends):
            f["note"] += "; %d clock-step lines" % el.logs.count(
                f["ref"], end, step_re, sev=None)
            if f["kept"] and not ctx.broken:
                r["violations"].append(
                    "%s: the leader kept its term across a step of more "
                    "than two TTLs" % f["name"])
        results.append(r)
    caught = sum(r["caught"] for r in results)
    for r in results:
        log("%s: %d overlaps (combined, worst %.1f ms), led at once %d "
            "(worst %.1f ms), shared %d, CMD overlaps %d" % (
                r["election"], r["comb_overlaps"], r["comb_worst_ms"],
                r["both"], r["both_worst_ms"], r["comb_shared"],
                r["cmd_overlaps"]))
        if ctx.broken:
            r["violations"] = []
    if ctx.broken and not caught:
        results[-1]["violations"].append(
            "the broken protocol (%s) was not caught" % opts["broken_what"])
    if results:
        results[-1]["violations"] += extra
        if err:
            results[-1]["violations"].append(err)
    elif err:
        print("FAIL %s: %s" % (title, err))
        return 1
    log("%s: %d elections, %d of them caught something%s" % (
        title, len(results), sum(1 for r in results if r["caught"]),
        " (broken: must be > 0)" if ctx.broken else " (must be 0)"))
    return report(results, title, ctx.table)


def broken_opts(ctx, conn, opts):
    """--broken: LeaderTestNoWatch=1 (takeover on database time alone)
    when this build takes it, else LeaderTestTrustExtra and a SIGSTOP of
    the fresh namespace's first leader at each step."""
    refused = elections.key_refusal(ctx, conn, "LeaderTestNoWatch", "1")
    if refused is None and not ctx.broken_trust:
        opts["keys"] = "LeaderTestNoWatch=1"
        opts["broken_what"] = "LeaderTestNoWatch=1"
    else:
        if refused is not None:
            log("LeaderTestNoWatch refused (%s): --broken falls back to "
                "LeaderTestTrustExtra and a SIGSTOP of the leader" % refused)
        opts["extra_ms"] = BROKEN_EXTRA_MS
        opts["stop_leader"] = True
        opts["broken_what"] = "LeaderTestTrustExtra and SIGSTOP"


def scenario_clockstep(ctx):
    """The PostgreSQL server's clock steps forward by more than two TTLs
    right after a fresh namespace's first election, while older
    namespaces are in steady state; joiners at the step and 100 ms
    after it."""
    conn = os.environ["OL_PG_CONNECT"]
    opts = {"conn": conn}
    ctx.shell.call('"$1" schema --upgrade -C "$2" >/dev/null',
                   ctx.odbc_leader, conn)
    if ctx.broken:
        broken_opts(ctx, conn, opts)
    if ctx.clock == "sql" and ctx.step_at == "commit":
        ctx.shell.call("cl_sql_clock_on_win")
    err = os.path.join(ctx.work, "psql.log")
    psqls = [Psql(err), Psql(err)]
    opts["held"] = HeldStartPg(*psqls)
    if ctx.clock == "sql":
        psqls.append(Psql(err))
    clock = StepClock(ctx.clock, os.environ.get("CL_FAKETIME_FILE"),
                      psqls[-1] if ctx.clock == "sql" else None)
    try:
        return run_clock_phases(ctx, clock, parse_phases(ctx.phases), opts,
                                "clockstep")
    finally:
        for p in psqls:
            p.close()


def scenario_sqlitestep(ctx):
    """Every candidate's wall clock steps forward together (libfaketime,
    one file), monotonic clocks untouched, on one SQLite file: a fresh
    namespace's first election then a step, joiners at the step and
    100 ms after it."""
    conn = "Driver=SQLite3;Database=%s" % ctx.sqlite_file
    clock_file = os.path.join(ctx.work, "host-clock")
    write_clock(clock_file, 0)
    env = dict(os.environ)
    env["LD_PRELOAD"] = (ctx.faketime_lib + " " +
                         env.get("LD_PRELOAD", "")).strip()
    env["FAKETIME_TIMESTAMP_FILE"] = clock_file
    env["FAKETIME_NO_CACHE"] = "1"
    env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
    # an ASan build's programs otherwise refuse a preload that comes first
    env["ASAN_OPTIONS"] = ":".join(
        [o for o in [env.get("ASAN_OPTIONS", "")] if o] +
        ["verify_asan_link_order=0"])
    opts = {"conn": conn, "env": env}
    subprocess.run([ctx.odbc_leader, "schema", "--upgrade", "-C", conn],
                   stdout=subprocess.DEVNULL, check=True, timeout=60)
    if ctx.broken:
        broken_opts(ctx, conn, opts)
    opts["held"] = HeldStartSqlite(ctx.sqlite_file)
    clock = StepClock("host", clock_file)
    return run_clock_phases(ctx, clock, parse_phases(ctx.phases), opts,
                            "clockstep-sqlite", env_checks=True)
