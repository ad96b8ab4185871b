"""apscheduler_fires.py: exactly-once fires of APScheduler on odbc-leader.

    python3 apscheduler_fires.py --python PY --pkg DIR --plugin SO
        --connect CONN --odbc-leader BIN --checker CHECK_FIRES --work DIR
        [--kills N]

Runs three `PY -m odbc_leader.examples.apscheduler` processes (the real
APScheduler, PYTHONPATH=DIR) on one namespace with a 1-second job and a
2-second lease. Each runs with LeaderId=mc-PID, so the fire ledger names
the process. The process that prints FIRE lines (the leader) is killed
with SIGKILL just after it fired, --kills times (default 2), each time
replaced by a new process; then it gets SIGTERM (a graceful handover) and
is replaced; the rest run on and are stopped with SIGTERM.

Every FIRE line becomes "SLOT PID TERM ARRIVAL_MS" in WORK/runs.log, the
ledger (`odbc-leader fires --json --limit 0`) goes to WORK/ledger.json,
and tests/contrib/check_fires.py checks that every 1-second slot from the
first fire to the last watched one fired exactly once (one ledger row,
one run, claimed by the process that ran it in its term), that nothing ran
twice; a slot that fell due during a failover runs only through the
new leader's catch-up, so "no gap" checks the catch-up. Then the checker must fail on the same log with one line repeated
and with one line removed. Exits 0 when all of that holds.
"""

import argparse
import os
import signal
import subprocess
import sys
import threading
import time

TTL_MS = 2000
EVERY_S = 1
NAMESPACE = "aps"
LIVENESS_S = 30


def now_ms():
    return int(time.time() * 1000)


class Procs:
    """The example processes and what they printed."""

    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.procs = {}  # pid -> Popen
        self.last_fire = {}  # pid -> arrival ms of its last FIRE line
        self.killed = []
        self.runs = open(os.path.join(args.work, "runs.log"), "a")
        self.err = open(os.path.join(args.work, "stderr.log"), "ab")
        self.first_slot = None

    def start(self):
        a = self.args
        cmd = ('exec "$0" -m odbc_leader.examples.apscheduler --plugin "$1" '
               '--connect "$2;LeaderId=mc-$$;LeaderRenewInterval=250;'
               'LeaderSafetyMargin=150" --namespace "$3" --every "$4" '
               '--ttl "$5"')
        env = dict(os.environ, PYTHONPATH=a.pkg, PYTHONDONTWRITEBYTECODE="1")
        p = subprocess.Popen(
            ["bash", "-c", cmd, a.python, a.plugin, a.connect, NAMESPACE,
             str(EVERY_S), str(TTL_MS)],
            stdout=subprocess.PIPE, stderr=self.err, env=env, text=True)
        with self.lock:
            self.procs[p.pid] = p
        threading.Thread(target=self._read, args=(p,), daemon=True).start()
        return p.pid

    def _read(self, p):
        for line in p.stdout:
            t = now_ms()
            f = line.split()
            if len(f) != 4 or f[0] != "FIRE":
                print("unexpected output of %d: %r" % (p.pid, line))
                continue
            slot_s = int(f[2]) // 1000
            with self.lock:
                self.runs.write("%d %d %s %d\n" % (slot_s, p.pid, f[3], t))
                self.runs.flush()
                self.last_fire[p.pid] = t
                if self.first_slot is None:
                    self.first_slot = slot_s

    def leader(self, since_ms):
        """The pid that printed a FIRE line after since_ms (the latest)."""
        with self.lock:
            got = [(t, pid) for pid, t in self.last_fire.items()
                   if t > since_ms and self.procs[pid].poll() is None]
        return max(got)[1] if got else None

    def wait_leader(self, since_ms):
        deadline = time.monotonic() + LIVENESS_S
        while time.monotonic() < deadline:
            pid = self.leader(since_ms)
            if pid is not None:
                return pid
            time.sleep(0.02)
        raise RuntimeError("no FIRE line for %d s" % LIVENESS_S)

    def stop_all(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        bad = []
        for pid, p in self.procs.items():
            try:
                rc = p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = p.wait()
                bad.append("%d did not stop on SIGTERM" % pid)
            if pid not in self.killed and rc not in (0, -signal.SIGKILL):
                bad.append("%d exited %d" % (pid, rc))
        return bad


def run_checker(args, runs, ledger, first, last, killed, expect_late):
    cmd = [sys.executable, args.checker, "--runs", runs, "--ledger", ledger,
           "--slot-seconds", str(EVERY_S), "--first", str(first), "--last",
           str(last), "--expect-late", str(expect_late), "--killed"] + \
        [str(k) for k in killed]
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser()
    for a in ("python", "pkg", "plugin", "connect", "odbc-leader", "checker",
              "work"):
        ap.add_argument("--" + a, required=True)
    ap.add_argument("--kills", type=int, default=2)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    ps = Procs(args)
    failures = []
    try:
        for _ in range(3):
            ps.start()
        since = now_ms()
        for i in range(args.kills + 1):
            lead = ps.wait_leader(since)
            time.sleep(0.1)  # just after its fire: a slot claimed and run
            sig = signal.SIGKILL if i < args.kills else signal.SIGTERM
            ps.procs[lead].send_signal(sig)
            if sig == signal.SIGKILL:
                ps.killed.append(lead)
            print("%s leader %d" % ("killed" if sig == signal.SIGKILL
                                     else "stopped (SIGTERM)", lead))
            since = now_ms()
            time.sleep(0.5)
            ps.start()
            # the next leader fires (catching up the slots of the failover)
            ps.wait_leader(since + 1)
            since = now_ms()
        time.sleep(TTL_MS / 1000.0 + 2)
        last = now_ms() // 1000 - 2  # due, fired and printed by now
    except RuntimeError as e:
        failures.append(str(e))
        last = now_ms() // 1000
    failures += ps.stop_all()
    ps.runs.close()
    ledger = os.path.join(args.work, "ledger.json")
    with open(ledger, "w") as f:
        out = subprocess.run(
            [args.odbc_leader, "fires", "-C", args.connect, "-n", NAMESPACE,
             "--json", "--limit", "0"], stdout=f, stderr=subprocess.PIPE,
            text=True)
    if out.returncode != 0:
        failures.append("odbc-leader fires: %s" % out.stderr.strip())
    runs = os.path.join(args.work, "runs.log")
    first = ps.first_slot if ps.first_slot is not None else last
    # Each SIGKILL comes 0.1 s after the leader fired slot k; its lease
    # lasts until at least k + 1.75 s (renewed every 250 ms), so nobody
    # leads when slot k + 1 falls due: only the next leader's catch-up can
    # run it, and "no gap" checks that it did.
    res = run_checker(args, runs, ledger, first, last, ps.killed, 0)
    print(res.stdout, end="")
    if res.returncode != 0:
        failures.append("check_fires: exactly once broken")
    with open(runs) as f:
        lines = f.readlines()
    if len(lines) < 5:
        failures.append("only %d fires ran" % len(lines))
    else:
        for name, bad_lines in (
                ("duplicate", lines + [lines[len(lines) // 2]]),
                ("gap", lines[:len(lines) // 2] + lines[len(lines) // 2 + 1:])):
            path = os.path.join(args.work, "runs-%s.log" % name)
            with open(path, "w") as f:
                f.writelines(bad_lines)
            r = run_checker(args, path, ledger, first, last, ps.killed, 0)
            if r.returncode == 0:
                failures.append("check_fires passed a log with a %s" % name)
    for f in failures:
        print("FAIL: %s" % f)
    print("slots %d..%d, %d fires, %d kills: %s" % (
        first, last, len(lines), len(ps.killed),
        "FAIL" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
