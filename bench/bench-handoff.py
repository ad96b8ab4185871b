#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench-handoff.py: the figures of make bench part "handoff" (run by
bench/part-handoff.sh): how fast `odbc-leader run` hands CMD from one host
to the next, measured on CMD lifetimes.

Per database, three candidates each run, in a service loop that starts
them again whenever they exit (tests/faults/cmd-schedule.py's Election,
imported, not copied),

    odbc-leader run --id cand-N -C "CONN;LeaderTTL=3000;LeaderRenewInterval=500;
        LeaderSafetyMargin=500;LeaderStatementTimeout=500" -n NS
        --grace 1000ms -- cmd-life DIR --term-delay 300

and every CMD (cmd-life) records its start, heartbeats, the arrival of
SIGTERM and its end on CLOCK_MONOTONIC, the clock of time.monotonic_ns().
ROUNDS rounds of each fault, one after another on whoever leads:

  resign   t_req = just before `odbc-leader resign -C CONN -n NS` runs;
           t_term = the old CMD's SIGTERM, t_dead = its last heartbeat
           (or end), t_next = the next CMD's start. Figures: request ->
           SIGTERM (the leader sees the request at its next renewal),
           SIGTERM -> dead (CMD's own shutdown, 300 ms by construction),
           dead -> next start, handoff excess = (t_next - t_term) -
           (t_dead - t_term) (algebraically the same number as dead ->
           next: what the handoff adds to CMD's own shutdown; the goal is
           <= 100 ms at the median and p90), request -> next start.
  kill-9   SIGKILL of the leader's run: kill -> old CMD dead, old dead ->
           next start.
  sigstop  SIGSTOP of the leader's run, SIGCONT TTL + 1500 ms later:
           stop -> old CMD dead, old dead -> next start (must be > 0).
  stall    (PostgreSQL, MariaDB; its own election, every candidate behind
           a fault-proxy) the leader's proxy stops forwarding (SIGUSR1)
           for TTL + 1500 ms: the same two figures.
The faults land at a random point of the renew cycle (0.3 to 0.8 s after
the previous round's CMD started). sigstop and stall rounds overlap: the
next round starts once a new CMD runs, while the stopped or stalled
candidate still waits for its SIGCONT / SIGUSR2 (with three candidates one
is always free to take over).

After every round cmdcheck's check() runs over every life so far, and at
the end over the whole election (runs.json, alive.json: orphans too). Any
overlap, orphan or term error, or a round without a next CMD within
TTL + 3 s of the fault's end, fails the part (exit 1), after writing the
rows. Rows go to --out (bench/benchlib.py's format: metric, dialect,
value = the median, unit, target, note with p90 / max / rounds); every
round's raw times to --samples.

    bench-handoff.py --out FILE --work DIR --odbc-leader PATH --life PATH
        --proxy PATH [--rounds N] [--db sqlite,postgresql,mariadb]
        [--samples FILE] [--srcdir DIR] [--trust-extra MS]

The servers' connections come from the OL_* variables of
tests/integration/lib.sh (OL_PG_CONNECT, OL_PG_PORT, OL_MARIADB_CONNECT,
OL_MARIADB_PORT), the ODBC drivers from ODBCSYSINI. --trust-extra MS sets
LeaderTestTrustExtra, a deliberate bug (the trust window outlives the
lease): the sigstop rounds then overlap and the run must fail.
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TERM_DELAY_MS = 300  # CMD's exit after SIGTERM
SETTLE_S = (0.3, 0.8)  # from a CMD's start to the next fault
RESIGN_TRIES = 10


sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import benchlib  # noqa: E402  (bench/benchlib.py: rank, add)

sched = None  # tests/faults/cmd-schedule.py, loaded in main()
harness = None  # tests/lib/harness.py, loaded in main()


def log(msg):
    print("[handoff %s] %s" % (time.strftime("%H:%M:%S"), msg),
          file=sys.stderr, flush=True)


def ms(ns):
    return ns / 1e6


class Bench:
    """One database: its elections, rounds and findings."""

    def __init__(self, ctx, db, rounds):
        self.ctx, self.db, self.rounds = ctx, db, rounds
        self.samples = {}  # fault -> list of per-round dicts
        self.violations = []
        self.safety = {"lives": 0, "overlaps": 0, "orphans": 0, "terms": 0,
                       "overlap_worst_ms": 0.0}

    # ---- elections ----

    def election(self, label, proxied):
        """A started Election of cmd-schedule.py with this part's
        namespace and CMD arguments."""
        el = sched.Election(self.ctx, self.db, "stall" if proxied else label,
                            0, extra_ms=self.ctx.trust_extra)
        el.ns = "bench-handoff-%s-%s-%d" % (self.db, label, os.getpid())
        el.proxied = proxied
        el.life_args = ["--term-delay", str(TERM_DELAY_MS)]
        el.start()
        return el

    def finish(self, el, label):
        """Stops el and has cmdcheck judge every life of it."""
        killed, _ = el.stop()
        if killed:
            log("%s/%s: %d runs SIGKILLed at the end" % (self.db, label,
                                                         killed))
        lives, runs, alive = self.ctx.checker.load_run(el.dir)
        r = self.ctx.checker.check(lives, runs, alive)
        s = self.safety
        s["lives"] += r["lives"]
        s["overlaps"] += r["overlaps"]
        s["orphans"] += r["orphans"]
        s["terms"] += r["term_violations"]
        s["overlap_worst_ms"] = max(s["overlap_worst_ms"],
                                    r["overlap_worst_ms"])
        for v in r["violations"]:
            self.fail("%s (%s)" % (v, el.dir))

    def fail(self, msg):
        msg = "%s: %s" % (self.db, msg)
        self.violations.append(msg)
        print("FAIL: " + msg, file=sys.stderr, flush=True)

    # ---- one round ----

    def settle(self):
        time.sleep(random.uniform(*SETTLE_S))

    def life(self, el, pid):
        return self.ctx.checker.load_life(
            os.path.join(el.dir, "life-%d.rec" % pid))

    def await_next(self, el, old_pid, ref_ns, limit_s):
        """Waits until the old CMD is gone and a CMD started at or after
        ref_ns; returns (old life, next life)."""
        deadline = time.monotonic() + limit_s
        nxt = None
        while True:
            el.check_fatal()
            if nxt is None:
                nxt = el.first_cmd_since(ref_ns)
            old = self.life(el, old_pid)
            if nxt is not None and (old["end"] or
                                    not sched.is_cmd_life(old_pid)):
                return self.life(el, old_pid), nxt
            if time.monotonic() > deadline:
                raise RuntimeError(
                    "no %s within %.1f s of the fault (%s)" % (
                        "next CMD" if nxt is None else
                        "end of the old CMD (pid %d)" % old_pid, limit_s,
                        el.dir))
            time.sleep(0.01)

    def check_round(self, el, fault, k, seen):
        """cmdcheck over every life so far; returns the overlap count."""
        r = self.ctx.checker.check(el.lives())
        if r["overlaps"] > seen:
            for v in r["violations"]:
                if v.startswith("overlap"):
                    self.fail("%s round %d: %s" % (fault, k + 1, v))
        return r["overlaps"]

    def signal_leader(self, el, c, sig):
        """Sends sig to c's current run; returns (time just before, pid).
        SIGKILL is recorded in runs.json (died_ns) as cmd-schedule does."""
        with el.lock:
            pid = c.run_pid()
            if pid is None:
                raise RuntimeError("%s has no run to signal" % c.id)
            t = sched.now_ns()
            os.kill(pid, sig)
            if sig == signal.SIGKILL:
                c.entry["died_ns"] = sched.now_ns()
            if sig == signal.SIGSTOP:
                el.stopped.add(pid)
        return t, pid

    def resign_round(self, el):
        old, c = el.wait_leader(sched.FIRST_LEADER_S)
        for _ in range(RESIGN_TRIES):
            t_req = sched.now_ns()
            rc, _ = el.odbc_leader("resign")
            if rc == 0:
                break
            if rc != 82:
                raise RuntimeError("odbc-leader resign exited %d" % rc)
            time.sleep(0.1)
            old, c = el.wait_leader(sched.FIRST_LEADER_S)
        else:
            raise RuntimeError("odbc-leader resign: no leader %d times" %
                               RESIGN_TRIES)
        old, nxt = self.await_next(el, old["pid"], t_req,
                                   sched.LIVENESS_MS / 1000.0)
        if not old["sigterm"]:
            raise RuntimeError("the resigned CMD (pid %d) never got SIGTERM"
                               % old["pid"])
        return {"t_req": t_req, "t_term": old["sigterm"],
                "t_dead": old["last"], "t_next": nxt["start"],
                "old": [old["id"], old["term"], old["pid"]],
                "next": [nxt["id"], nxt["term"], nxt["pid"]]}

    def fault_round(self, el, fault, timers):
        """kill-9, sigstop or stall on the current leader; the SIGCONT or
        the end of the stall is left to a timer (timers)."""
        old, c = el.wait_leader(sched.FIRST_LEADER_S)
        hold_s = sched.HOLD_MS / 1000.0
        limit = sched.LIVENESS_MS / 1000.0
        frozen = False
        if fault == "kill-9":
            t0, _ = self.signal_leader(el, c, signal.SIGKILL)
        elif fault == "sigstop":
            t0, pid = self.signal_leader(el, c, signal.SIGSTOP)
            harness.wait_stopped(pid)

            def cont(pid=pid):
                el.cont(pid)
            timers.append(threading.Timer(
                max(0.0, hold_s - ms(sched.now_ns() - t0) / 1000.0), cont))
            timers[-1].start()
            limit += hold_s
            if self.db == "sqlite" and harness.holds_file_lock(pid):
                frozen = True  # nobody can be elected before SIGCONT
        elif fault == "stall":
            t0 = sched.now_ns()
            c.proxy.stall()
            timers.append(threading.Timer(hold_s, c.proxy.resume))
            timers[-1].start()
            limit += hold_s
        else:
            raise ValueError(fault)
        old, nxt = self.await_next(el, old["pid"], t0, limit)
        return {"t_fault": t0, "t_dead": old["last"], "t_next": nxt["start"],
                "frozen": frozen,
                "old": [old["id"], old["term"], old["pid"]],
                "next": [nxt["id"], nxt["term"], nxt["pid"]]}

    def phase(self, el, fault):
        """self.rounds rounds of fault in election el."""
        t0 = time.monotonic()
        got = self.samples.setdefault(fault, [])
        timers = []
        seen = 0
        try:
            for k in range(self.rounds):
                self.settle()
                if fault == "resign":
                    got.append(self.resign_round(el))
                else:
                    got.append(self.fault_round(el, fault, timers))
                seen = self.check_round(el, fault, k, seen)
        except (RuntimeError, OSError, ValueError,
                subprocess.SubprocessError) as e:
            self.fail("%s: %s" % (fault, e))
        finally:
            for t in timers:  # every SIGCONT / end of stall is sent
                t.join()
        if timers:
            time.sleep(2 * sched.RENEW_MS / 1000.0)  # resumed runs act
        log("%s/%s: %d rounds, %.1f s" % (self.db, fault, len(got),
                                         time.monotonic() - t0))

    def run(self):
        el = self.election("direct", False)
        try:
            for fault in ("resign", "kill-9", "sigstop"):
                self.phase(el, fault)
        finally:
            self.finish(el, "direct")
        if self.db != "sqlite":
            el = self.election("stall", True)
            try:
                self.phase(el, "stall")
            finally:
                self.finish(el, "stall")


def stats(vals):
    """(median, p90, max) by nearest rank, or None."""
    if not vals:
        return None
    v = sorted(vals)
    return benchlib.rank(v, 0.5), benchlib.rank(v, 0.9), v[-1]


def rows_of(b):
    """(metric, median/p90/max or a value, target, note) of one database."""
    out = []
    tms = "%d ms" % TERM_DELAY_MS

    def fig(metric, vals, target="-", note="", which=None):
        s = stats(vals)
        if s is None:
            return
        if which is None:
            value = s[0]
            text = "p90 %.1f, max %.1f, min %.1f ms, %d rounds" % (
                s[1], s[2], min(vals), len(vals))
        else:
            value = s[which]
            text = "%d rounds" % len(vals)
        out.append((metric, round(value, 1), target,
                    text + ("; " + note if note else "")))
        return s

    r = b.samples.get("resign", [])
    fig("resign: request -> old CMD's SIGTERM, median",
        [ms(x["t_term"] - x["t_req"]) for x in r],
        note="from just before `odbc-leader resign` runs; the leader sees "
        "the request at its next renewal (every 500 ms)")
    fig("resign: old CMD's SIGTERM -> its end, median",
        [ms(x["t_dead"] - x["t_term"]) for x in r],
        note="CMD's own shutdown: --term-delay " + tms)
    same = sum(1 for x in r if x["next"][0] == x["old"][0])
    fig("resign: old CMD's end -> next CMD's start, median",
        [ms(x["t_next"] - x["t_dead"]) for x in r], "> 0",
        "the next CMD ran on another candidate in %d of %d rounds%s" % (
            len(r) - same, len(r),
            ", else on the resigned one (its run restarted by the service "
            "loop 100 ms after exiting, and won the vacant lease first)"
            if same else ""))
    excess = [ms((x["t_next"] - x["t_term"]) - (x["t_dead"] - x["t_term"]))
              for x in r]
    s = stats(excess)
    if s is not None:
        for which, name in ((0, "median"), (1, "p90")):
            met = "met" if s[which] <= 100 else "MISSED"
            fig("resign: handoff excess (next start - SIGTERM) - (end - "
                "SIGTERM), " + name, excess, "<= 100",
                "goal %s (handoff <= CMD's own shutdown + 100 ms)%s" % (
                    met, "; max %.1f ms" % s[2] if which else ""), which)
    fig("resign: request -> next CMD's start, median",
        [ms(x["t_next"] - x["t_req"]) for x in r])
    k = b.samples.get("kill-9", [])
    fig("kill -9 of the leader's run -> its CMD's end, median",
        [ms(x["t_dead"] - x["t_fault"]) for x in k],
        "<= %d" % b.ctx.checker.ORPHAN_BOUND_MS,
        "the supervisor SIGKILLs CMD's group when run's pipe closes; CMD "
        "heartbeats every 1 ms: a couple of ms either way")
    fig("kill -9: old CMD's end -> next CMD's start, median",
        [ms(x["t_next"] - x["t_dead"]) for x in k], "> 0",
        "the lease must run out (TTL 3000 ms)")
    trust = sched.TTL_MS - sched.MARGIN_MS - 100
    for fault, what in (("sigstop", "SIGSTOP of the leader's run"),
                        ("stall", "network stall of the leader (proxy)")):
        f = b.samples.get(fault, [])
        fz = sum(1 for x in f if x["frozen"])
        fig("%s -> its CMD's end, median" % what,
            [ms(x["t_dead"] - x["t_fault"]) for x in f], "<= %d" % trust,
            "SIGTERM at the trust window's end - 100 ms - grace 1000 ms, "
            "SIGKILL at its end - 100 ms; held TTL + 1500 ms")
        fig("%s: old CMD's end -> next CMD's start, median" % fault,
            [ms(x["t_next"] - x["t_dead"]) for x in f], "> 0",
            "must be positive (no overlap)" +
            ("; %d frozen (the stopped run held SQLite's file lock: nobody "
             "could be elected before SIGCONT)" % fz if fz else ""))
    s = b.safety
    out.append(("CMD lives overlapping (cmdcheck), every round",
                s["overlaps"], "0",
                "%d lives; orphans %d, term errors %d, worst overlap %.1f ms"
                % (s["lives"], s["orphans"], s["terms"],
                   s["overlap_worst_ms"])))
    return out


def main():
    global sched, harness
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--db", default="sqlite,postgresql,mariadb")
    ap.add_argument("--out", required=True, help="benchlib rows (JSON)")
    ap.add_argument("--samples", default=None, help="raw rounds (JSON)")
    ap.add_argument("--work", required=True)
    ap.add_argument("--odbc-leader", required=True)
    ap.add_argument("--life", required=True)
    ap.add_argument("--proxy", required=True)
    ap.add_argument("--srcdir", default=os.path.dirname(HERE))
    ap.add_argument("--trust-extra", type=int, default=0, metavar="MS",
                    help="LeaderTestTrustExtra: a deliberate bug (the trust "
                    "window outlives the lease), to see an overlap fail "
                    "the part")
    args = ap.parse_args()

    faults = os.path.join(args.srcdir, "tests", "faults")
    sys.path.insert(0, os.path.join(args.srcdir, "tests", "lib"))
    import harness  # tests/lib/harness.py: the script loader, connections
    sched = harness.load_script(os.path.join(faults, "cmd-schedule.py"),
                                "cmd_schedule")
    ctx = args  # what cmd-schedule's Election reads
    ctx.checker = harness.load_script(os.path.join(faults, "cmdcheck"),
                                      "cmdcheck")
    ctx.lib = os.path.join(args.srcdir, "tests", "integration", "lib.sh")
    ctx.sqlite_file = os.path.join(args.work, "handoff.db")
    harness.db_connects(ctx, ctx.sqlite_file)

    failed = []
    samples = {}
    if os.path.exists(args.out):
        os.remove(args.out)
    for db in args.db.split(","):
        if db not in ctx.connect:
            failed.append("%s: no connection (OL_* variables missing)" % db)
            continue
        t0 = time.monotonic()
        log("%s: %d rounds of each fault" % (db, args.rounds))
        b = Bench(ctx, db, args.rounds)
        try:
            b.run()
        except (RuntimeError, OSError, ValueError,
                subprocess.SubprocessError) as e:
            b.fail(str(e))
        log("%s: %.0f s" % (db, time.monotonic() - t0))
        for metric, value, target, note in rows_of(b):
            benchlib.cmd_add([args.out, "metric=" + metric, "dialect=" + db,
                              "value=%s" % value, "unit=" + (
                                  "overlaps" if metric.startswith("CMD lives")
                                  else "ms"),
                              "target=" + target, "note=" + note])
        samples[db] = b.samples
        failed += b.violations
    if args.samples:
        with open(args.samples, "w") as f:
            json.dump(samples, f, indent=1)
    for f in failed:
        print("FAIL " + f, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
