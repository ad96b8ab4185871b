# SPDX-License-Identifier: MIT
"""celery_lifecycle.py: the fire lifecycle through Celery beat.

    python3 celery_lifecycle.py --python PY --pkg DIR --plugin SO
        --connect CONN --odbc-leader BIN --broker URL --work DIR
    python3 celery_lifecycle.py --recover ... (the same, without --broker)

Runs two `celery beat -S odbc_leader.celery:LeaderScheduler` processes of
odbc_leader.examples.celery (one entry, "every", each second; a 2-second
lease) and one worker that prints a FIRE line per run. Once runs arrive:
`odbc-leader jobs pause every`; after a second for a send under way, the
leading beat is killed with SIGKILL (the pause must hold across the
failover) and no run may arrive for 3 TTLs; then `jobs resume every` and
runs arrive again; then `jobs trigger every` and exactly one run with the
run-now's key arrives. The checks must also fail on the log with a run
added while paused and with the run-now repeated. Exits 0 when all holds,
1 with the reasons.

--recover: a re-send (odbc_leader_max_attempts=2) after the leading beat
died between its claim and recording the send. The script starts its own
redis-server and stops it (SIGSTOP): the leading beat's next send hangs
with its fire claimed and running in the ledger. That beat is killed with
SIGKILL and redis continued: the other beat takes over, finds the fire
interrupted and sends it again as attempt 2, once, under its own term.
The send of attempt 1 may have reached redis before it stopped (at least
once: docs/lifecycle.md), at most once. The ledger must show the fire
done at attempt 2 in the new term. The check must also fail on the log
with attempt 2 repeated and on the log without it.
"""

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import harness  # noqa: E402  (tests/lib: wait_for, terminate)

TTL_MS = 2000
TIMING = "LeaderRenewInterval=250;LeaderSafetyMargin=150"
NAMESPACE = "celery-lifecycle"


def now_ms():
    return int(time.time() * 1000)


def fail(msg):
    print("celery_lifecycle: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def wait(what, secs, pred, detail):
    """Returns pred()'s first true value within secs; else fails with
    what and detail()."""
    got = harness.wait_for(pred, secs, 0.1)
    if not got:
        fail("%s (after %d s); %s" % (what, secs, detail()))
    return got


def problems(runs, quiet_from, resumed_at, key):
    """runs: (fire_ms, arrival ms). Runs that arrived while paused, and a
    run-now (key) that did not run exactly once."""
    out = []
    during = [r for r in runs if quiet_from <= r[1] <= resumed_at]
    if during:
        out.append("%d run(s) while paused: %r" % (len(during), during))
    n = len([r for r in runs if r[0] == key])
    if n != 1:
        out.append("the run-now %d ran %d times" % (key, n))
    return out


def recovery_problems(runs, fire_ms):
    """runs: (fire_ms, arrival ms, attempt). What is wrong with the runs of
    fire fire_ms: attempt 2 not exactly once, attempt 1 more than once, an
    attempt above 2, or a second attempt of another fire."""
    out = []
    mine = [r for r in runs if r[0] == fire_ms]
    n2 = len([r for r in mine if r[2] == 2])
    if n2 != 1:
        out.append("attempt 2 of %d ran %d times" % (fire_ms, n2))
    if len([r for r in mine if r[2] == 1]) > 1:
        out.append("attempt 1 of %d ran twice" % fire_ms)
    if [r for r in mine if r[2] > 2]:
        out.append("an attempt above 2 of %d: %r" % (fire_ms, mine))
    others = [r for r in runs if r[0] != fire_ms and r[2] != 1]
    if others:
        out.append("other fires recovered: %r" % others)
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Example:
    """odbc_leader.examples.celery's worker and beats for one scenario, on
    namespace ns and broker: runs holds (fire_ms, arrival ms, attempt) per
    FIRE line the worker printed; procs every process started (stop()
    ends them)."""

    def __init__(self, a, broker, ns, **env):
        self.a = a
        self.ns = ns
        self.env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1",
                        PYTHONPATH=a.pkg, CELERY_BROKER_URL=broker,
                        ODBC_LEADER_NAMESPACE=ns, ODBC_LEADER_PLUGIN=a.plugin,
                        ODBC_LEADER_TTL_MS=str(TTL_MS), ODBC_LEADER_EVERY="1",
                        **env)
        self.err = open(os.path.join(a.work, "stderr.log"), "ab")
        self.runs = []
        self.lock = threading.Lock()
        self.procs = []

    def worker(self):
        """Starts the worker and a thread that reads its FIRE lines."""
        w = subprocess.Popen(
            [self.a.python, "-m", "celery", "-A",
             "odbc_leader.examples.celery", "worker", "-l", "warning", "-c",
             "2", "--without-gossip", "--without-mingle"],
            stdout=subprocess.PIPE, stderr=self.err,
            env=dict(self.env, ODBC_LEADER_CONNECT=self.a.connect),
            cwd=self.a.work, text=True)
        self.procs.append(w)

        def read():
            for line in w.stdout:
                f = line.split()
                if len(f) == 5 and f[0] == "FIRE":
                    with self.lock:
                        self.runs.append((int(f[2]), now_ms(), int(f[4])))
        threading.Thread(target=read, daemon=True).start()

    def beat(self, cid):
        """Starts a beat with candidate id cid; returns its Popen."""
        b = subprocess.Popen(
            [self.a.python, "-m", "celery", "-A",
             "odbc_leader.examples.celery", "beat", "-S",
             "odbc_leader.celery:LeaderScheduler", "-l", "info",
             "--schedule", os.path.join(self.a.work, "unused-" + cid)],
            stdout=subprocess.DEVNULL, stderr=self.err,
            env=dict(self.env, ODBC_LEADER_CONNECT="%s;LeaderId=%s;%s" % (
                self.a.connect, cid, TIMING)), cwd=self.a.work)
        self.procs.append(b)
        return b

    def olc(self, *argv):
        """odbc-leader SUBCOMMAND -C CONNECT -n NS ARGS...: its output."""
        return subprocess.run([self.a.odbc_leader, argv[0], "-C",
                               self.a.connect, "-n", self.ns] +
                              list(argv[1:]), check=True,
                              stdout=subprocess.PIPE, text=True).stdout

    def leading(self, beats, prefix):
        """The beat of beats ({index: Popen}, ids PREFIX-index) that
        leads, by status; None when none does."""
        m = re.search(r"leader:\s+%s-(\d+)" % prefix, self.olc("status"))
        return beats[int(m.group(1))] if m else None

    def got(self):
        with self.lock:
            return list(self.runs)

    def stop(self):
        harness.terminate(list(reversed(self.procs)), 30)


def main():
    ap = argparse.ArgumentParser()
    for k in ("python", "pkg", "plugin", "connect", "odbc-leader", "work"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("--broker")
    ap.add_argument("--recover", action="store_true")
    a = ap.parse_args()
    if not a.recover and not a.broker:
        ap.error("--broker is needed (or --recover)")
    os.makedirs(a.work, exist_ok=True)
    if a.recover:
        return recover(a)
    ex = Example(a, a.broker, NAMESPACE)
    runs, olc = ex.runs, ex.olc

    def seen():
        return "runs: %r" % runs

    try:
        ex.worker()
        beats = {i: ex.beat("cl-%d" % i) for i in (0, 1)}
        wait("no run arrived", 60, lambda: len(runs) >= 2, seen)
        olc("jobs", "pause", "every")
        paused = now_ms()
        time.sleep(1.5)  # a send under way when the pause landed
        quiet_from = now_ms()
        victim = ex.leading(beats, "cl")
        if victim is None:
            fail("no beat leads: %s" % olc("status"))
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        time.sleep(3 * TTL_MS / 1000.0)
        resumed_at = now_ms()
        olc("jobs", "resume", "every")
        wait("no run after resume", 20,
             lambda: any(r[1] > resumed_at and r[0] > 0 for r in runs), seen)
        said = olc("jobs", "trigger", "every")
        m = re.search(r"\(key (-\d+)\)", said)
        if not m:
            fail("jobs trigger printed no key: %r" % said)
        key = int(m.group(1))
        wait("the run-now never ran", 20,
             lambda: any(r[0] == key for r in runs), seen)
        time.sleep(2)
        got = ex.got()
        bad = problems(got, quiet_from, resumed_at, key)
        if bad:
            fail("; ".join(bad) + " (paused at %d)" % paused)
        now = [r for r in got if r[0] == key][0]
        for what, broken in {
                "a run while paused": got + [(quiet_from // 1000 * 1000,
                                              quiet_from + 1)],
                "the run-now twice": got + [now]}.items():
            if not problems(broken, quiet_from, resumed_at, key):
                fail("the check passes %s" % what)
        print("celery: 0 runs in %d ms paused across a kill -9 of the "
              "leading beat, runs again after resume, the run-now %d sent "
              "once; the check fails on 2 broken variants"
              % (resumed_at - quiet_from, key))
        return 0
    finally:
        ex.stop()


def recover(a):
    """The --recover scenario (see the docstring). Returns 0, or exits 1."""
    port = free_port()
    ex = Example(a, "redis://127.0.0.1:%d/0" % port, NAMESPACE + "-recover",
                 ODBC_LEADER_MAX_ATTEMPTS="2")
    redis = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1",
         "--save", "", "--appendonly", "no", "--dir", a.work],
        stdout=ex.err, stderr=ex.err)
    ex.procs.append(redis)
    runs, olc = ex.runs, ex.olc

    def ledger():
        return [json.loads(x) for x in
                olc("fires", "--json", "--limit", "0").splitlines() if x]

    def seen():
        return "runs: %r; ledger: %r" % (runs, ledger()[-6:])

    def answers():
        with socket.socket() as c:
            return c.connect_ex(("127.0.0.1", port)) == 0

    try:
        wait("redis does not answer", 10, answers, seen)
        ex.worker()
        beats = {i: ex.beat("cr-%d" % i) for i in (0, 1)}
        wait("no run arrived", 60, lambda: len(runs) >= 2, seen)
        redis.send_signal(signal.SIGSTOP)
        hung = wait("no send hung with its fire running", 10, lambda: [
            r for r in ledger() if r["state"] == "running"], seen)[-1]
        victim = ex.leading(beats, "cr")
        if victim is None or hung["claimed_by"] != \
                "cr-%d" % [i for i, b in beats.items() if b is victim][0]:
            fail("the running fire %r is not the leader's: %s"
                 % (hung, olc("status")))
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        redis.send_signal(signal.SIGCONT)
        fire_ms = hung["fire_ms"]
        wait("attempt 2 of %d never ran" % fire_ms, 30, lambda: any(
            r[0] == fire_ms and r[2] == 2 for r in runs), seen)
        time.sleep(2)
        got = ex.got()
        bad = recovery_problems(got, fire_ms)
        row = [r for r in ledger() if r["fire_ms"] == fire_ms][0]
        if row["state"] != "done" or row["attempt"] != 2 or \
                row["term"] <= hung["term"] or row["claimed_by"] == hung["claimed_by"]:
            bad.append("the ledger's row %r (attempt 1 was %r)" % (row, hung))
        if bad:
            fail("; ".join(bad))
        second = [r for r in got if r[0] == fire_ms and r[2] == 2][0]
        for what, broken in {
                "attempt 2 twice": got + [second],
                "no attempt 2": [r for r in got if r != second]}.items():
            if not recovery_problems(broken, fire_ms):
                fail("the check passes %s" % what)
        first = len([r for r in got if r[0] == fire_ms and r[2] == 1])
        print("celery: the leading beat killed with fire %d's send hung "
              "(redis stopped): the next leader sent it again as attempt 2, "
              "once, in term %d (attempt 1 reached the worker %d time(s)); "
              "the check fails on 2 broken variants"
              % (fire_ms, row["term"], first))
        return 0
    finally:
        ex.stop()


if __name__ == "__main__":
    sys.exit(main())
