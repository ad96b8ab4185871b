#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""claim-schedule.py: the fault schedule of the fire ledger, checked at the
level a scheduler relies on: each fire claimed exactly once.

Called by claim.test once the databases are up (their OL_* variables
exported by tests/integration/lib.sh). For each database it starts, on a
fresh namespace, a rogue claim-host (LeaderTestTrustExtra: its window
outlives its lease, and it claims whether or not it leads) and then
CANDIDATES ordinary claim-hosts; each claims the fires of 100 ms slots
while it leads, catching up on the window after a takeover. Then:

  rogue-stop  SIGSTOP the rogue while it leads, for TTL + 1000 ms and
              until another host has won a term (a loaded machine once
              took longer: the rogue resumed undeposed, so nothing was
              refused); on SIGCONT the rogue claims with its stale term
              before its next tick, and the database must refuse
  kill-9      SIGKILL of the leader (twice, once right after a slot
              boundary); the host is started again
  sigstop     SIGSTOP of the leader for TTL + 1000 ms, then SIGCONT

after each of which the claims must go on. At the end every host gets
SIGTERM, the ledger is read with `odbc-leader fires --json` and claimcheck
judges the run: every fire between the first and the last claimed exactly
once, never told twice, never by a deposed term, the rogue refused.
Exit status 0 when every database passes, else 1.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

# tests/lib: processes and services; no bytecode is written into the
# (maybe read-only) source tree
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "lib"))
import harness  # noqa: E402
import records  # noqa: E402

TTL_MS = 2000
SLOT_MS = 100
WINDOW_MS = 30000
CANDIDATES = 3
STOP_MS = TTL_MS + 1000
SETTLE_S = 2.0  # claims go on for this long between faults
FIRST_LEADER_S = 15


class Run:
    """The hosts of one database's run."""

    def __init__(self, ctx, db):
        self.ctx = ctx
        self.db = db
        self.ns = "claims-%s-%d" % (db, os.getpid())
        self.dir = os.path.join(ctx.work, db)
        os.makedirs(self.dir, exist_ok=True)
        self.log = os.path.join(self.dir, "claims.log")
        self.procs = {}  # id -> Popen
        self.killed = []
        self.rogue_pid = None

    def config(self, cid, extra=""):
        return ("%s;LeaderNamespace=%s;LeaderId=%s;LeaderTTL=%d;"
                "LeaderRenewInterval=400;LeaderSafetyMargin=400;"
                "LeaderStatementTimeout=400;LeaderFollowerWait=300%s" % (
                    self.ctx.connect[self.db], self.ns, cid, TTL_MS, extra))

    def start(self, cid, rogue=False):
        args = [self.ctx.host,
                self.config(cid, ";LeaderTestTrustExtra=30000" if rogue
                            else ""),
                self.log, "--slot-ms", str(SLOT_MS), "--window-ms",
                str(WINDOW_MS)] + (["--rogue"] if rogue else [])
        err = open(os.path.join(self.dir, cid + ".err"), "a")
        p = subprocess.Popen(args, stderr=err)
        err.close()
        self.procs[cid] = p
        return p

    def entries(self):
        """The hosts' log so far: (op, pid, fire, term, rc)."""
        try:
            with open(self.log) as f:
                return records.parse_claim_log(f)
        except FileNotFoundError:
            return []

    def leader(self, timeout_s=FIRST_LEADER_S):
        """The id of the host leading now (status --json), or None."""
        def ask():
            out = subprocess.run(
                [self.ctx.odbc_leader, "status", "--json", "-C",
                 self.ctx.connect[self.db], "-n", self.ns],
                capture_output=True, text=True)
            if out.returncode == 0:
                st = json.loads(out.stdout)
                if st.get("leader") in self.procs:
                    return st["leader"]
            return None
        return harness.wait_for(ask, timeout_s, 0.1)

    def claims(self):
        return sum(1 for e in self.entries() if e[0] == "C")

    def wait_claims(self, what):
        """Waits until a new claim after a fault: liveness."""
        n = self.claims()
        if harness.wait_for(lambda: self.claims() > n,
                            TTL_MS / 1000.0 + 8, 0.05):
            time.sleep(SETTLE_S)
            return
        raise RuntimeError("no claim within %.1f s after %s" % (
            TTL_MS / 1000.0 + 8, what))

    def stop_for(self, cid, ms):
        p = self.procs[cid]
        harness.pause(p.pid)
        time.sleep(ms / 1000.0)
        os.kill(p.pid, signal.SIGCONT)

    def stop_until_taken(self, cid, ms):
        """SIGSTOP of cid for ms, and longer until another host has won a
        term (up to 4 TTLs more), so that cid resumes deposed however
        slowly a loaded machine runs the takeover. cid is stopped while
        it waits between rounds (in sigtimedwait), so that on SIGCONT it
        claims before it ticks: stopped in a tick or a claim, it finished
        the tick first, learnt that it was deposed and never made a stale
        claim (CI once saw no stale claim refused on PostgreSQL). That
        also keeps it outside its SQLite transactions: stopped inside one,
        it would keep the file locked and nobody could take over (a loaded
        machine once hit one). Raises RuntimeError when nobody takes
        over."""
        p = self.procs[cid]

        def others_won():
            return sum(1 for e in self.entries()
                       if e[0] == "W" and e[1] != p.pid)
        before = others_won()
        missed = harness.stop_unlocked(p.pid, idle="rt_sigtimedwait")
        if missed:
            print("%s: %s was busy at %d stops; stopped while it waited" % (
                self.db, cid, missed), file=sys.stderr, flush=True)
        time.sleep(ms / 1000.0)
        taken = harness.wait_for(lambda: others_won() > before,
                                 4 * TTL_MS / 1000.0, 0.05)
        os.kill(p.pid, signal.SIGCONT)
        if not taken:
            raise RuntimeError("nobody took over within %d ms of stopping "
                               "%s" % (ms + 4 * TTL_MS, cid))

    def kill(self, cid):
        p = self.procs[cid]
        p.kill()
        p.wait()
        self.killed.append(p.pid)
        self.start(cid)

    def stop_all(self):
        harness.terminate(list(self.procs.values()), 10)


def after_boundary():
    """Sleeps until 5 ms after the next slot boundary (the hosts' slots
    are cut from CLOCK_REALTIME)."""
    t = time.time() * 1000
    time.sleep(((t // SLOT_MS + 1) * SLOT_MS + 5 - t) / 1000.0)


def run_db(ctx, db):
    """Runs the schedule on db. Returns the list of violations."""
    r = Run(ctx, db)
    try:
        r.rogue_pid = r.start("rogue", rogue=True).pid
        if r.leader() != "rogue":
            return ["%s: the rogue did not lead first" % db]
        for i in range(CANDIDATES):
            r.start("cand-%d" % i)
        r.wait_claims("the start")
        r.stop_until_taken("rogue", STOP_MS)
        r.wait_claims("rogue-stop")
        for fault in ("kill-9", "kill-9-boundary", "sigstop"):
            cid = r.leader()
            if cid is None:
                return ["%s: no leader before %s" % (db, fault)]
            if fault == "sigstop":
                r.stop_for(cid, STOP_MS)
            else:
                if fault == "kill-9-boundary":
                    after_boundary()
                r.kill(cid)
            r.wait_claims(fault)
        end_ms = int(time.time() * 1000)
    except RuntimeError as e:
        return ["%s: %s" % (db, e)]
    finally:
        r.stop_all()
    ledger = os.path.join(r.dir, "ledger.jsonl")
    with open(ledger, "w") as f:
        subprocess.run([ctx.odbc_leader, "fires", "--json", "--limit", "0",
                        "--job", "tick", "-C", ctx.connect[db], "-n", r.ns],
                       stdout=f, check=True)
    out = subprocess.run(
        [sys.executable, ctx.checker, "--log", r.log, "--ledger", ledger,
         "--slot-ms", str(SLOT_MS), "--killed",
         ",".join(str(p) for p in r.killed), "--rogue", str(r.rogue_pid),
         "--end-ms", str(end_ms), "--live-ms", str(TTL_MS + 5000)],
        capture_output=True, text=True)
    with open(ledger) as f:
        n = sum(1 for line in f if line.strip())
    stale = sum(1 for e in r.entries()
                if e[0] == "N" and e[1] == r.rogue_pid and e[3] != 0)
    print("%s: %d fires claimed once each, %d terms, %d kills, %d stale "
          "claims of the rogue refused" % (
              db, n, sum(1 for e in r.entries() if e[0] == "W"),
              len(r.killed), stale), file=sys.stderr, flush=True)
    return ["%s: %s" % (db, v) for v in out.stdout.split("\n") if v]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default="sqlite,postgresql,mariadb")
    ap.add_argument("--host", required=True)
    ap.add_argument("--odbc-leader", required=True)
    ap.add_argument("--checker", required=True)
    ap.add_argument("--work", required=True)
    ctx = ap.parse_args()
    harness.db_connects(ctx, os.path.join(os.environ["OL_TMP"],
                                          "claims.db"))
    failures = []
    for db in ctx.db.split(","):
        t0 = time.monotonic()
        failures += run_db(ctx, db)
        print("%s: %.1f s" % (db, time.monotonic() - t0), file=sys.stderr)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
