# SPDX-License-Identifier: MIT
"""recover_fires.py: a scheduler example's fire lifecycle on odbc-leader.

    python3 recover_fires.py --connect CONN --odbc-leader BIN --work DIR
        [--env K=V ...] -- EXAMPLE ARGS...

EXAMPLE ARGS is a command that follows the example contract (it must take
--plugin SO itself): the harness adds --connect CONN;LeaderId=rf-N;...
--namespace NS --every S --ttl 2000 --recover N --hold S, and reads the
flushed line "FIRE <job> <fire_ms> <term> <attempt>" each run prints on
stdout when it starts. Three scenarios, each on a namespace of its own:

- recover (--recover 2, a 3 s run every 6 s, three processes): the
  process that prints an on-time first attempt (having run the slot
  before on time in the same term) is killed with SIGKILL at once; the
  fire must run again, as attempt 2, exactly once, on another process,
  in a later term, after the kill; that process is killed in turn 1 s
  after attempt 2 starts, and the fire must then be recorded abandoned
  (2 of 2 attempts) and never run a third time.
- at-most-once (the default --recover 1, two processes): the killed
  process's fire must be recorded interrupted and never run again.
- pause (a 1 s job, two processes): `odbc-leader jobs pause` stops the
  job on every host across a kill -9 of the leader (no run starts while
  it is paused, once a run already under way had time to print, until
  2.5 s after another process leads), `jobs
  resume` starts it again, and `jobs trigger` runs exactly one run-now,
  keyed by the key trigger printed, on the leader (the process that ran
  the nominal fire before it).

Every (job, fire_ms, attempt) must run at most once, attempts of one fire
in increasing terms. The checks of the recover scenario must then fail on
its own log with the attempt-2 line repeated, with it removed and with it
moved before the kill (the broken variants: a second runner, a lost
recovery, a recovery that ran while the first attempt could still act),
and those of the pause scenario on its log with a run while paused, the
run-now repeated, lost, or run on another process.
The ledger rows come from `odbc-leader fires --json --limit 0`. Exits 0
when all of that holds, 1 with the reasons.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

TTL_MS = 2000
TIMING = "LeaderRenewInterval=250;LeaderSafetyMargin=150"
JOB = "every"
ON_TIME_MS = 1500  # a FIRE line this soon after its nominal time is no catch-up


def now_ms():
    return int(time.time() * 1000)


def fail(msg):
    print("recover_fires: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


class Fleet:
    """The example processes of one scenario and the FIRE lines they print:
    (pid, job, fire_ms, term, attempt, arrival ms)."""

    def __init__(self, args, ns, every, recover, hold):
        self.args, self.ns = args, ns
        self.every_ms = every * 1000
        self.extra = ["--namespace", ns, "--every", str(every), "--ttl",
                      str(TTL_MS), "--recover", str(recover), "--hold",
                      str(hold)]
        self.lock = threading.Lock()
        self.procs = {}
        self.ids = {}  # pid -> LeaderId
        self.lines = []
        self.n = 0
        self.err = open(os.path.join(args.work, ns + ".err"), "ab")
        self.env = dict(os.environ)
        self.env.update(kv.split("=", 1) for kv in args.env)

    def start(self):
        self.n += 1
        conn = "%s;LeaderId=rf-%s-%d;%s" % (self.args.connect, self.ns,
                                            self.n, TIMING)
        p = subprocess.Popen(self.args.example + ["--connect", conn]
                             + self.extra, stdout=subprocess.PIPE,
                             stderr=self.err, env=self.env, text=True)
        self.procs[p.pid] = p
        self.ids[p.pid] = "rf-%s-%d" % (self.ns, self.n)
        threading.Thread(target=self._read, args=(p,), daemon=True).start()
        return p.pid

    def _read(self, p):
        for line in p.stdout:
            t = now_ms()
            f = line.split()
            if len(f) != 5 or f[0] != "FIRE":
                self.err.write(("%d stdout: %s" % (p.pid, line)).encode())
                continue
            with self.lock:
                self.lines.append((p.pid, f[1], int(f[2]), int(f[3]),
                                   int(f[4]), t))

    def wait_line(self, pred, secs, what):
        """The first line pred accepts, waiting up to secs."""
        deadline = time.monotonic() + secs
        while time.monotonic() < deadline:
            with self.lock:
                for ln in self.lines:
                    if pred(ln):
                        return ln
            time.sleep(0.02)
        fail("%s: no such FIRE line in %d s; lines: %r" % (
            what, secs, self.lines))

    def kill(self, pid):
        os.kill(pid, signal.SIGKILL)
        self.procs[pid].wait()
        return now_ms()

    def stop(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def wait_new_leader(self, old_pid, secs):
        """Waits until `odbc-leader status` names a leader other than the
        process old_pid (at most secs)."""
        deadline = time.monotonic() + secs
        while time.monotonic() < deadline:
            m = re.search(r"leader:\s+(\S+)", self.olc("status"))
            if m and m.group(1).startswith("rf-") and \
                    m.group(1) != self.ids[old_pid]:
                return m.group(1)
            time.sleep(0.1)
        fail("%s: no leader after %s's for %d s" % (self.ns,
                                                   self.ids[old_pid], secs))

    def start_all(self, n):
        """Starts n processes, 0.3 s apart."""
        for _ in range(n):
            self.start()
            time.sleep(0.3)

    def wait_state(self, job, fire_ms, state, secs):
        """Waits up to secs for the ledger row of (job, fire_ms) to be in
        state. Returns (True, row), or (False, the last row read)."""
        deadline = time.monotonic() + secs
        while True:
            row = row_of(self.ledger(), job, fire_ms)
            if row and row.get("state") == state:
                return True, row
            if time.monotonic() > deadline:
                return False, row
            time.sleep(0.25)

    def ledger(self):
        out = subprocess.run(
            [self.args.odbc_leader, "fires", "-C", self.args.connect, "-n",
             self.ns, "--json", "--limit", "0"], check=True,
            stdout=subprocess.PIPE, text=True).stdout
        return [json.loads(x) for x in out.splitlines() if x.strip()]

    def olc(self, *argv):
        return subprocess.run(
            [self.args.odbc_leader, argv[0], "-C", self.args.connect, "-n",
             self.ns] + list(argv[1:]), check=True, stdout=subprocess.PIPE,
            text=True).stdout


def generic_problems(lines):
    """Each (job, fire_ms, attempt) at most once; a fire's attempts in
    increasing terms, attempt numbers from 1 without a gap."""
    out = []
    seen = {}
    for pid, job, fire_ms, term, attempt, t in sorted(lines,
                                                      key=lambda x: x[5]):
        key = (job, fire_ms)
        runs = seen.setdefault(key, [])
        if any(a == attempt for _, a, _ in runs):
            out.append("%s at %d attempt %d ran twice" % (job, fire_ms,
                                                          attempt))
        elif attempt != len(runs) + 1:
            out.append("%s at %d: attempt %d after %d attempt(s)"
                       % (job, fire_ms, attempt, len(runs)))
        elif runs and term <= runs[-1][2]:
            out.append("%s at %d: attempt %d in term %d, not after %d"
                       % (job, fire_ms, attempt, term, runs[-1][2]))
        runs.append((pid, attempt, term))
    return out


def on_time(x):
    """A nominal fire's first attempt, printed within ON_TIME_MS."""
    return x[4] == 1 and x[2] > 0 and 0 <= x[5] - x[2] < ON_TIME_MS


def settled(lines, x, every_ms):
    """True when x is on time and its process ran the slot every_ms
    before it on time in the same term (the term's catch-up is over)."""
    return on_time(x) and any(
        on_time(y) and y[0] == x[0] and y[3] == x[3]
        and y[2] == x[2] - every_ms for y in lines)


def recover_problems(lines, first, killed_ms):
    """What is wrong with the recovery of first (a FIRE line whose process
    was killed at killed_ms): it must run again exactly once, attempt 2,
    by another process, in a later term, after the kill."""
    pid, job, fire_ms, term = first[:4]
    again = [x for x in lines if x[1] == job and x[2] == fire_ms
             and x[4] == 2]
    out = generic_problems(lines)
    if len(again) != 1:
        out.append("%s at %d ran %d times as attempt 2" % (job, fire_ms,
                                                         len(again)))
        return out
    a = again[0]
    if a[0] == pid:
        out.append("attempt 2 ran in the killed process")
    if a[3] <= term:
        out.append("attempt 2 ran in term %d, not after %d" % (a[3], term))
    if a[5] < killed_ms:
        out.append("attempt 2 started at %d, before attempt 1's process "
                   "was killed at %d" % (a[5], killed_ms))
    return out


def pause_problems(lines, quiet_from, resumed_at):
    """Runs that started while the job was paused (between quiet_from and
    resumed_at), a run-now not run exactly once (when one ran), and what
    generic_problems finds."""
    out = generic_problems(lines)
    during = [x for x in lines if quiet_from <= x[5] <= resumed_at]
    if during:
        out.append("%d run(s) while paused: %r" % (len(during), during))
    nows = [x for x in lines if x[2] < 0]
    if nows and len(nows) != 1:
        out.append("%d run-now runs, want 1: %r" % (len(nows), nows))
    if any(x[5] > resumed_at for x in lines) and not nows:
        out.append("no run-now ran")
    for now in nows[:1]:
        # on the leader: the process that ran the nominal fire before it
        before = [x for x in lines if x[2] > 0 and x[5] <= now[5]]
        if before and max(before, key=lambda x: x[5])[0] != now[0]:
            out.append("the run-now ran on %d, not on the leader %d"
                       % (now[0], max(before, key=lambda x: x[5])[0]))
    return out


def row_of(rows, job, fire_ms):
    for r in rows:
        if r["job"] == job and r["fire_ms"] == fire_ms:
            return r
    return None


def scenario_recover(args):
    log("recover: --recover 2, a 3 s run every 6 s, three processes")
    fl = Fleet(args, "rf-recover", 6, 2, 3)
    try:
        fl.start_all(3)
        # an on-time first attempt of a leader that also ran the slot
        # before it on time in the same term: at an election the leader
        # catches up the fires within the grace at once, and a kill then
        # can land between one's claim and its FIRE line (attempt 1 claimed
        # and interrupted without a line: its attempt 2 would look like a
        # gap). CI saw it: elected just before a slot, the on-time line
        # came first and the kill took the catch-up of the slot before.
        # A term that ran the previous slot on time had caught up long
        # before.
        first = fl.wait_line(lambda x: settled(fl.lines, x, fl.every_ms), 60,
                             "an on-time first attempt, the slot before it "
                             "on time in its term")
        killed = fl.kill(first[0])
        log("killed %d running %s at %d (term %d)" % (first[0], first[1],
                                                      first[2], first[3]))
        second = fl.wait_line(lambda x: x[2] == first[2] and x[4] == 2,
                              30, "attempt 2 of the killed fire")
        # 1 s later, not at once: this process's election also caught up
        # the fires within the grace that nobody ran (the slot before the
        # first election), claimed beside attempt 2, and one killed
        # between its claim and its FIRE line looks like a gap (attempt 2
        # of it without attempt 1: a verification run saw it, loaded).
        # Attempt 2 takes 3 s, so it is still under way.
        time.sleep(1.0)
        fl.kill(second[0])
        log("attempt 2 on %d (term %d), %d ms after the kill; killed it 1 s "
            "later" % (second[0], second[3], second[5] - killed))
        # the third process takes over: its sweep records the fire
        # abandoned, and a third attempt must not run (it would start at
        # that process's first ticks)
        problems = []
        ok, row = fl.wait_state(first[1], first[2], "abandoned", 20)
        if not ok:
            problems.append("the ledger row of the fire is %r, not "
                            "abandoned" % row)
        time.sleep(1.5)
        with fl.lock:
            lines = list(fl.lines)
        problems += recover_problems(lines, first, killed)
        if any(x[2] == first[2] and x[4] >= 3 for x in lines):
            problems.append("a third attempt ran: %r" % lines)
        if row and (row.get("attempt"), row.get("max_attempts")) != (2, 2):
            problems.append("the abandoned row says attempt %s of %s" % (
                row.get("attempt"), row.get("max_attempts")))
        if problems:
            fail("recover: " + "; ".join(problems))
        # the checks, on broken variants of this log
        a2 = next(x for x in lines if x[2] == first[2] and x[4] == 2)
        variants = {
            "a second runner of attempt 2": lines + [a2],
            "a lost recovery": [x for x in lines if x is not a2],
            "a recovery before the kill": [
                x if x is not a2 else x[:5] + (killed - 1,) for x in lines],
        }
        for what, broken in variants.items():
            if not recover_problems(broken, first, killed):
                fail("recover: the check passes %s" % what)
        log("recover: attempt 2 once, after the kill, then abandoned; the "
            "check fails on its %d broken variants" % len(variants))
    finally:
        fl.stop()


def scenario_at_most_once(args):
    log("at most once: the default --recover 1, two processes")
    fl = Fleet(args, "rf-once", 6, 1, 3)
    try:
        fl.start_all(2)
        first = fl.wait_line(lambda x: True, 40, "a first run")
        fl.kill(first[0])
        log("killed %d running %s at %d" % (first[0], first[1], first[2]))
        ok, row = fl.wait_state(first[1], first[2], "interrupted", 20)
        if not ok:
            fail("at most once: the killed fire's row is %r, not "
                 "interrupted" % row)
        time.sleep(TTL_MS / 1000.0)
        with fl.lock:
            lines = list(fl.lines)
        again = [x for x in lines if x[2] == first[2] and x is not first]
        problems = generic_problems(lines)
        if again:
            problems.append("the fire ran again: %r" % again)
        if problems:
            fail("at most once: " + "; ".join(problems))
        log("at most once: the killed fire recorded interrupted, not run "
            "again")
    finally:
        fl.stop()


def scenario_pause(args):
    log("pause, resume, trigger: a 1 s job, two processes")
    fl = Fleet(args, "rf-pause", 1, 1, 0)
    try:
        fl.start_all(2)
        first = fl.wait_line(lambda x: True, 40, "a first run")
        fl.olc("jobs", "pause", first[1])
        paused = now_ms()
        time.sleep(1.5)  # a run under way when the pause landed prints
        quiet_from = now_ms()
        leader = max(fl.lines, key=lambda x: x[5])[0]
        fl.kill(leader)
        fl.start()
        # the next leader, paused: two of its slots go by without a run
        fl.wait_new_leader(leader, 20)
        time.sleep(2.5)
        resumed_at = now_ms()
        with fl.lock:
            problems = pause_problems(fl.lines, quiet_from, resumed_at)
        if problems:
            fail("pause: %s (paused at %d, across a kill -9 of %d)"
                 % ("; ".join(problems), paused, leader))
        skipped = [r for r in fl.ledger() if r.get("state") == "skipped"]
        if not skipped:
            fail("pause: no fire recorded skipped while paused")
        fl.olc("jobs", "resume", first[1])
        fl.wait_line(lambda x: x[5] > resumed_at and x[2] > 0, 15,
                     "a run after resume")
        said = fl.olc("jobs", "trigger", first[1])
        m = re.search(r"\(key (-\d+)\)", said)
        if not m:
            fail("pause: jobs trigger printed no key: %r" % said)
        key = int(m.group(1))
        run = fl.wait_line(lambda x: x[2] == key, 15, "the run-now %d" % key)
        time.sleep(2)
        with fl.lock:
            lines = list(fl.lines)
        problems = pause_problems(lines, quiet_from, resumed_at)
        if problems:
            fail("pause: " + "; ".join(problems))
        variants = {
            "a run while paused": lines + [
                (leader, first[1], quiet_from // 1000 * 1000, first[3], 1,
                 quiet_from + 1)],
            "a second run of the run-now": lines + [run],
            "a lost run-now": [x for x in lines if x is not run],
            "a run-now on a follower": [
                x if x is not run else (-1,) + x[1:] for x in lines],
        }
        for what, broken in variants.items():
            if not pause_problems(broken, quiet_from, resumed_at):
                fail("pause: the check passes %s" % what)
        log("pause: 0 runs while paused across a failover (%d skipped), "
            "runs again after resume, the run-now %d ran once on %d"
            % (len(skipped), key, run[0]))
    finally:
        fl.stop()


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 64
    i = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--connect", required=True)
    ap.add_argument("--odbc-leader", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--only", default=None,
                    help="recover, at-most-once or pause")
    args = ap.parse_args(argv[:i])
    args.example = argv[i + 1:]
    os.makedirs(args.work, exist_ok=True)
    scenarios = {"recover": scenario_recover,
                 "at-most-once": scenario_at_most_once,
                 "pause": scenario_pause}
    for name, fn in scenarios.items():
        if args.only in (None, name):
            fn(args)
    log("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
