# SPDX-License-Identifier: MIT
"""celery_lifecycle.py: pause, resume and run-now through Celery beat.

    python3 celery_lifecycle.py --python PY --pkg DIR --plugin SO
        --connect CONN --odbc-leader BIN --broker URL --work DIR

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
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import threading
import time

TTL_MS = 2000
TIMING = "LeaderRenewInterval=250;LeaderSafetyMargin=150"
NAMESPACE = "celery-lifecycle"


def now_ms():
    return int(time.time() * 1000)


def fail(msg):
    print("celery_lifecycle: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


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


def main():
    ap = argparse.ArgumentParser()
    for k in ("python", "pkg", "plugin", "connect", "odbc-leader", "broker",
              "work"):
        ap.add_argument("--" + k, required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=a.pkg,
               CELERY_BROKER_URL=a.broker, ODBC_LEADER_NAMESPACE=NAMESPACE,
               ODBC_LEADER_PLUGIN=a.plugin, ODBC_LEADER_TTL_MS=str(TTL_MS),
               ODBC_LEADER_EVERY="1")
    err = open(os.path.join(a.work, "stderr.log"), "ab")
    runs = []
    lock = threading.Lock()
    worker = subprocess.Popen(
        [a.python, "-m", "celery", "-A", "odbc_leader.examples.celery",
         "worker", "-l", "warning", "-c", "2", "--without-gossip",
         "--without-mingle"], stdout=subprocess.PIPE, stderr=err,
        env=dict(env, ODBC_LEADER_CONNECT=a.connect), cwd=a.work, text=True)

    def read():
        for line in worker.stdout:
            f = line.split()
            if len(f) == 5 and f[0] == "FIRE":
                with lock:
                    runs.append((int(f[2]), now_ms()))
    threading.Thread(target=read, daemon=True).start()
    beats = []

    def beat(i):
        conn = "%s;LeaderId=cl-%d;%s" % (a.connect, i, TIMING)
        p = subprocess.Popen(
            [a.python, "-m", "celery", "-A", "odbc_leader.examples.celery",
             "beat", "-S", "odbc_leader.celery:LeaderScheduler", "-l", "info",
             "--schedule", os.path.join(a.work, "unused-%d" % i)],
            stdout=subprocess.DEVNULL, stderr=err,
            env=dict(env, ODBC_LEADER_CONNECT=conn), cwd=a.work)
        beats.append(p)

    def olc(*argv):
        return subprocess.run([a.odbc_leader, argv[0], "-C", a.connect, "-n",
                               NAMESPACE] + list(argv[1:]), check=True,
                              stdout=subprocess.PIPE, text=True).stdout

    def leading_beat():
        out = olc("status")
        m = re.search(r"leader:\s+cl-(\d+)", out)
        return beats[int(m.group(1))] if m else None

    def wait(what, secs, pred):
        deadline = time.monotonic() + secs
        while not pred():
            if time.monotonic() > deadline:
                fail("%s (after %d s); runs: %r" % (what, secs, runs))
            time.sleep(0.1)

    try:
        beat(0)
        beat(1)
        wait("no run arrived", 60, lambda: len(runs) >= 2)
        olc("jobs", "pause", "every")
        paused = now_ms()
        time.sleep(1.5)  # a send under way when the pause landed
        quiet_from = now_ms()
        victim = leading_beat()
        if victim is None:
            fail("no beat leads: %s" % olc("status"))
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        time.sleep(3 * TTL_MS / 1000.0)
        resumed_at = now_ms()
        olc("jobs", "resume", "every")
        wait("no run after resume", 20,
             lambda: any(r[1] > resumed_at and r[0] > 0 for r in runs))
        said = olc("jobs", "trigger", "every")
        m = re.search(r"\(key (-\d+)\)", said)
        if not m:
            fail("jobs trigger printed no key: %r" % said)
        key = int(m.group(1))
        wait("the run-now never ran", 20, lambda: any(r[0] == key
                                                      for r in runs))
        time.sleep(2)
        with lock:
            got = list(runs)
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
        for p in beats + [worker]:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in beats + [worker]:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


if __name__ == "__main__":
    sys.exit(main())
