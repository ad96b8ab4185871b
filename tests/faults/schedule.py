#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""schedule.py: runs the fault schedule of the fault-injection suite.

Called by run-faults.sh once the databases are up (their OL_* variables
exported by tests/integration/lib.sh). For each database and fault it
starts fault-host candidates on a fresh namespace, injects the fault one
or more times, measures how long until a leader claims again, checks the
records with the checker's rules, and prints one table row per database
and fault. Exit status 0 when every positive run is safe and live and
every negative run was caught, else 1. Processes, proxies, databases,
records and the term rules come from tests/lib (harness.py, records.py,
ledger.py), the rules' verdict from the checker.
"""
import argparse
import os
import signal
import subprocess
import sys
import time

# tests/lib: processes and services, the record loader, the ledger rules;
# no bytecode is written into the (maybe read-only) source tree
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "lib"))
import harness  # noqa: E402
import ledger  # noqa: E402
import records  # noqa: E402

now_ns, ms = harness.now_ns, harness.ms

TTL_MS = 1500
RENEW_MS = 400
MARGIN_MS = 300
CHURN_RENEW_MS = 100  # churn: followers attempt often, transitions are fast
CANDIDATES = 3
NEG_EXTRA_MS = 4 * TTL_MS  # LeaderTestTrustExtra of the negative test

# fault name -> (databases it applies to, needs a new term, short reps,
# long reps)
FAULTS = {
    "kill-9": ("sqlite postgresql mariadb", True, 1, 20),
    "sigstop": ("sqlite postgresql mariadb", True, 1, 20),
    "restart-fast": ("postgresql mariadb", False, 1, 5),
    "restart-immediate": ("postgresql mariadb", False, 1, 5),
    "session-kill": ("postgresql mariadb", False, 1, 20),
    "stall": ("postgresql mariadb", True, 1, 20),
    "faketime": ("postgresql mariadb", True, 1, 20),
    "churn": ("sqlite postgresql mariadb", True, 6, 1000),
    "unreachable": ("postgresql mariadb", False, 1, 5),
    # SQLite has no network to stall, and after a SIGSTOP the resumed
    # ticker may step down before the spinner claims: not deterministic.
    "negative": ("postgresql mariadb", True, 1, 1),
}
FAKE_OFFSETS = ["-7h", "+3h", "+26h"]
NAN = float("nan")  # a figure of no run


class Election:
    """Candidates of one namespace, their proxies and their records."""

    def __init__(self, ctx, db, fault, index, renew_ms=RENEW_MS, extra_ms=0,
                 proxied=False, fake=False):
        self.ctx, self.db = ctx, db
        self.dir = os.path.join(ctx.work, db, "%s-%d" % (fault, index))
        os.makedirs(self.dir)
        self.renew_ms = renew_ms
        self.proxied, self.fake = proxied, fake
        ns = "faults-%s-%d-%d" % (fault, index, os.getpid())
        self.config = "%s;LeaderNamespace=%s;LeaderTTL=%d;" \
            "LeaderRenewInterval=%d;LeaderSafetyMargin=%d" % (
                ctx.connect[db], ns, TTL_MS, renew_ms, MARGIN_MS)
        if extra_ms:
            self.config += ";LeaderTestTrustExtra=%d" % extra_ms
        self.hosts = {}  # pid -> Popen
        self.born = {}  # pid -> spawn time (ns)
        self.fault_end = 0  # when the last fault ended (ns)
        self.proxy_of = {}  # host pid -> its harness.Proxy
        self.stopped = set()
        self.spawned = 0
        self.log = open(os.path.join(self.dir, "hosts.log"), "ab")

    def spawn(self):
        """Starts one candidate (behind its own proxy when proxied)."""
        config, proxy = self.config, None
        if self.proxied:
            proxy = harness.Proxy(self.ctx.proxy, self.ctx.port[self.db],
                                  log_file=self.log)
            config = harness.with_port(config, proxy.port)
        cmd = [self.ctx.host, "-p", self.ctx.plugin, "-d", self.dir, config]
        if os.environ.get("OL_FAULTS_VERBOSE", "0") != "1":
            cmd.insert(1, "-q")  # plugin log lines only when asked
        env = dict(os.environ)
        if self.fake:
            # libfaketime preloaded directly (the faketime program forks,
            # and the pid must be the candidate's); only the wall clock
            # moves
            env["LD_PRELOAD"] = self.ctx.faketime_lib
            env["FAKETIME"] = FAKE_OFFSETS[self.spawned % len(FAKE_OFFSETS)]
            env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
        p = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, env=env)
        self.spawned += 1
        self.hosts[p.pid] = p
        self.born[p.pid] = now_ns()
        if proxy is not None:
            self.proxy_of[p.pid] = proxy
        return p.pid

    def records(self):
        return records.load_hosts(self.dir)[1]

    def headers(self):
        return records.load_hosts(self.dir)[0]

    def leader(self):
        """(pid, term) of the process claiming right now, or None."""
        r = ledger.claiming_now(self.records(), now_ns())
        if r is not None and r["pid"] in self.hosts and \
                r["pid"] not in self.stopped:
            return r["pid"], r["term"]
        return None

    def wait_claim(self, ref_ns, min_term, timeout_s):
        """Waits for the first claim at or after ref_ns of a term >=
        min_term. Returns (ms from ref_ns, term, pid) or None on timeout."""
        got = harness.wait_for(lambda: ledger.first_claim(
            self.records(), ref_ns, min_term), timeout_s)
        return None if got is None else (ms(got[0] - ref_ns), got[1], got[2])

    def wait_leader(self, timeout_s=10):
        """Waits until some live process claims; returns (pid, term)."""
        cur = harness.wait_for(self.leader, timeout_s)
        if cur is None:
            raise RuntimeError("%s: no leader within %d s" % (self.dir,
                                                              timeout_s))
        return cur

    def stuck(self):
        """Live candidates whose last good tick is older than TTL + 2
        ticks + the 1 s reconnect backoff cap, counted from the last
        fault's end (or their start, when later) when they have not
        ticked well since. Waits until every candidate has ticked well
        since then or its time is up: measured at once, a follower still
        in its backoff after an outage counted as stuck."""
        limit = (TTL_MS + 2 * self.renew_ms + 1000) * 1e6
        while True:
            t = now_ns()
            last = {h["pid"]: h["last_ok_tick_ns"] for h in self.headers()}
            late, over = 0, 0
            for pid, p in self.hosts.items():
                if p.poll() is not None:
                    continue
                seen = last.get(pid, 0)
                since = max(self.fault_end, self.born[pid])
                stale = t - max(seen, since) > limit
                late += seen < since or stale
                over += stale
            if late == over:
                return over
            time.sleep(0.05)

    def stop_all(self):
        """SIGTERM (resign) every candidate; returns how many did not exit
        within 5 s (they are then killed)."""
        stuck = harness.terminate(list(self.hosts.values()), 5)
        for p in self.proxy_of.values():
            p.stop()
        self.log.close()
        return stuck


class Result:
    """Figures of one (database, fault) row."""

    def __init__(self):
        self.runs = 0
        self.transitions = 0
        self.overlaps = 0
        self.shared = 0
        self.regressions = 0
        self.times = []
        self.liveness_failures = 0
        self.stuck = 0
        self.frozen_lock = 0  # SQLite: stopped while holding the file lock
        self.violations = []
        self.seconds = 0.0


def inject(ctx, el, db, fault, res, limit_ms):
    """One injection of fault into election el; appends the time to a
    leader to res.times. Returns nothing; records a liveness failure when
    no leader claims within limit_ms of the fault's end."""
    for p in el.hosts.values():
        p.poll()  # reap candidates that exited
    pid, term = el.wait_leader()
    time.sleep(el.renew_ms / 1000.0)  # a renewal or two as leader
    pid, term = el.wait_leader()
    min_term = term + 1 if FAULTS[fault][1] else 1
    hold_s = (TTL_MS + 700) / 1000.0  # faults that last longer than TTL
    if fault in ("kill-9", "faketime"):
        os.kill(pid, signal.SIGKILL)
        ref = now_ns()
        del el.hosts[pid]
        el.spawn()
    elif fault == "churn":
        el.hosts[pid].send_signal(signal.SIGTERM)
        ref = now_ns()
        el.spawn()
    elif fault in ("sigstop", "negative") and db == "sqlite" or \
            fault == "sigstop":
        el.stopped.add(pid)
        ref = harness.pause(pid)  # returns once it is stopped
        if db == "sqlite" and harness.holds_file_lock(pid):
            # Frozen inside a transaction: the SQLite file stays locked and
            # nobody can be elected until it runs again. The fault then
            # ends at SIGCONT, and any leader will do.
            time.sleep(hold_s)
            os.kill(pid, signal.SIGCONT)
            el.stopped.discard(pid)
            ref, min_term = now_ns(), 1
            res.frozen_lock += 1
    elif fault in ("stall", "negative"):
        el.proxy_of[pid].stall()
        ref = now_ns()
    elif fault.startswith("restart-"):
        harness.restart_db(ctx.shell, db, fault.split("-", 1)[1])
        ref = now_ns()
    elif fault == "session-kill":
        harness.kill_session(ctx.shell, db, ctx.port[db], pid)
        ref = now_ns()
    elif fault == "unreachable":
        for p in list(el.proxy_of.values()):
            p.cut()
        time.sleep(hold_s)
        for p in list(el.proxy_of.values()):
            p.resume()
        ref = now_ns()
    else:
        raise ValueError(fault)
    got = el.wait_claim(ref, min_term, (limit_ms + 3000) / 1000.0)
    res.runs += 1
    if got is None or got[0] > limit_ms:
        res.liveness_failures += 1
        res.violations.append("%s/%s: no leader within %d ms (%s)" % (
            db, fault, limit_ms, "none" if got is None else
            "%.0f ms" % got[0]))
    if got is not None:
        res.times.append(got[0])
    if pid in el.stopped or pid in el.proxy_of and \
            fault in ("stall", "negative"):
        # the fault ends after more than a TTL; the old leader resumes
        rest = hold_s - ms(now_ns() - ref) / 1000.0
        if rest > 0:
            time.sleep(rest)
        if pid in el.stopped:
            os.kill(pid, signal.SIGCONT)
            el.stopped.discard(pid)
        else:
            el.proxy_of[pid].resume()
    el.fault_end = now_ns()
    if fault in ("sigstop", "stall", "negative"):
        time.sleep(2 * el.renew_ms / 1000.0)  # the resumed one acts now


def run_fault(ctx, db, fault, reps, res):
    """Runs reps injections of fault on db in elections of CANDIDATES
    candidates; adds the figures to res."""
    renew = CHURN_RENEW_MS if fault == "churn" else RENEW_MS
    limit_ms = TTL_MS + 2 * renew
    proxied = fault in ("stall", "unreachable") or \
        (fault == "negative" and db != "sqlite")
    per_election = 100 if fault == "churn" else 10
    done, index = 0, 0
    # The negative run is repeated (at most 3 times) only when a SQLite
    # leader froze inside a transaction, which makes an overlap impossible.
    while done < reps or fault == "negative" and res.overlaps == 0 and \
            res.frozen_lock >= index and index < 3:
        n = max(1, min(per_election, reps - done))
        el = Election(ctx, db, fault, index, renew_ms=renew,
                      extra_ms=NEG_EXTRA_MS if fault == "negative" else 0,
                      proxied=proxied, fake=fault == "faketime")
        stuck = 0
        try:
            for _ in range(CANDIDATES):
                el.spawn()
            for _ in range(n):
                inject(ctx, el, db, fault, res, limit_ms)
            if fault != "negative":
                el.wait_leader()
                stuck = el.stuck()
        finally:
            stuck += el.stop_all()
        res.stuck += stuck
        r = ctx.checker.check(el.records())
        res.transitions += r["transitions"]
        res.overlaps += r["overlaps"]
        res.shared += r["shared_terms"]
        res.regressions += r["regressions"]
        res.violations += ["%s/%s: %s" % (db, fault, v)
                           for v in r["violations"]]
        done += n
        index += 1


def table(rows):
    """The figures as a Markdown table."""
    out = ["| database | fault | runs | transitions | overlaps | "
           "to leader median ms | p99 ms | max ms | stuck | liveness | "
           "seconds |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for db, fault, r in rows:
        neg = fault == "negative"
        live = "caught" if neg and r.overlaps > 0 else \
            "NOT CAUGHT" if neg else \
            "ok" if r.liveness_failures == 0 else \
            "%d late" % r.liveness_failures
        if r.frozen_lock:
            live += " (%d frozen in a transaction)" % r.frozen_lock
        out.append("| %s | %s | %d | %d | %d | %.0f | %.0f | %.0f | %d | %s "
                   "| %.0f |" % (db, fault, r.runs, r.transitions,
                                 r.overlaps, records.pct(r.times, 50, NAN),
                                 records.pct(r.times, 99, NAN),
                                 max(r.times) if r.times else float("nan"),
                                 r.stuck, live, r.seconds))
    return "\n".join(out)


def verdict(db, fault, r):
    """Messages that make the schedule fail, for one row."""
    if fault == "negative":
        return [] if r.overlaps > 0 else [
            "%s/negative: the checker did not catch the broken protocol" % db]
    return r.violations + (["%s/%s: %d stuck candidates" % (db, fault,
                                                            r.stuck)]
                           if r.stuck else [])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("short", "long"), default="short")
    ap.add_argument("--db", default="sqlite,postgresql,mariadb")
    ap.add_argument("--faults", default=",".join(FAULTS))
    ap.add_argument("--host", required=True)
    ap.add_argument("--proxy", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--checker", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--table", default=None)
    args = ap.parse_args()

    ctx = args
    ctx.checker = harness.load_script(args.checker, "checker")
    ctx.shell = harness.Shell(args.lib)
    harness.db_connects(ctx, os.path.join(os.environ["OL_TMP"], "faults.db"))
    ctx.faketime_lib = harness.faketime_lib()
    rows, failures = [], []
    for db in args.db.split(","):
        for fault in args.faults.split(","):
            dbs, _, short, long_ = FAULTS[fault]
            if db not in dbs.split():
                continue
            if fault == "faketime" and ctx.faketime_lib is None:
                failures.append("faketime: libfaketimeMT.so.1 not found "
                                "(Debian package faketime)")
                continue
            res = Result()
            t0 = time.monotonic()
            try:
                reps = short if args.mode == "short" else long_
                reps = int(os.environ.get("OL_FAULTS_REPS", reps))
                run_fault(ctx, db, fault, reps, res)
            except (RuntimeError, subprocess.CalledProcessError) as e:
                res.violations.append("%s/%s: %s" % (db, fault, e))
            res.seconds = time.monotonic() - t0
            rows.append((db, fault, res))
            failures += verdict(db, fault, res)
            print("%s/%s: %d runs, %d transitions, %d overlaps, %.1f s" % (
                db, fault, res.runs, res.transitions, res.overlaps,
                res.seconds), file=sys.stderr, flush=True)
    text = table(rows)
    print(text)
    if args.table:
        with open(args.table, "w") as f:
            f.write(text + "\n")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
