#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""minicron_claims.py: minicron's exactly-once fault schedule, run by
tests/contrib/minicron_claims.sh's claims_scenario for minicron.test
(SQLite), minicron-pg.test (PostgreSQL) and minicron-mariadb.test
(MariaDB) once their database is up.

    python3 minicron_claims.py --connect CONN --label LABEL --minicron MC
        --plugin SO --odbc-leader BIN --checker CHECK_FIRES --work DIR

Three minicrons on the database CONN (namespace "claims", LeaderTTL 2.5 s,
1-second slots, --misfire all, --misfire-window 10 s) with one job that
appends "SLOT_START MINICRON_PID TERM NOW_MS" to WORK/runs.log. Each
minicron runs with LeaderId=mc-PID, so the ledger names its pid. The
leader is killed with SIGKILL at a slot boundary (just before: it has not
claimed the slot; just after: it has, and ran it) and replaced, once per
KILL_OFFSETS_MS, then stopped with SIGSTOP past its lease and continued.
Each failover lasts about the TTL, two and a half slots (a whole number
of slots would put the takeover at a boundary, where the slot it lands in
may or may not have begun), which the next leader
catches up. Then tests/contrib/check_fires.py checks the job's log
against `odbc-leader fires --json`: every slot between the first and the
last fired exactly once (one ledger row each, no slot run twice, no gap,
each run claimed by its minicron in its term), and at least one run per
failover happened after its slot had ended (catch-up). Finally the
checker must fail on a log with a duplicate and on one with a gap.
Processes, pauses and waits go through tests/lib/harness.py. Takes about
20 s. Exit status 0 pass, 1 fail (FAIL lines on stderr).
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

SLOT_S = 1
WINDOW_S = 10
KILL_OFFSETS_MS = (-40, 40, -15, 150)  # from a slot boundary, one per kill
STOP_MS = 3500  # SIGSTOP this long: more than the TTL
STOP_OFFSET_MS = -20
TIMING = "LeaderTTL=2500;LeaderRenewInterval=250;LeaderSafetyMargin=150"


class Failed(Exception):
    """The scenario failed (the message says why)."""


def now_ms():
    """The wall clock in ms (the slots are cut from it)."""
    return int(time.time() * 1000)


def sleep_until(ms):
    """Sleeps until wall-clock ms (at once when it has passed)."""
    rest = ms - now_ms()
    if rest > 0:
        time.sleep(rest / 1000.0)


class Claims:
    """The minicrons of one scenario and what their job logged."""

    def __init__(self, a):
        self.a = a
        self.conf = "%s;LeaderNamespace=claims;%s" % (a.connect, TIMING)
        self.runs = os.path.join(a.work, "runs.log")
        self.err = open(os.path.join(a.work, "minicron.err"), "ab")
        self.procs = {}  # pid -> Popen
        self.killed = []
        with open(self.runs, "w"):
            pass
        with open(os.path.join(a.work, "crontab"), "w") as f:
            f.write('RUNS = %s\n* * * * * echo "$MINICRON_SLOT $PPID '
                    '$ODBC_LEADER_TERM $(date +%%s%%3N)" >>"$RUNS"\n' %
                    self.runs)

    def start(self):
        """Starts one minicron (LeaderId=mc-PID: exec keeps the pid)."""
        a = self.a
        p = subprocess.Popen(
            ["bash", "-c", 'exec "$0" -p "$1" -c "$2;LeaderId=mc-$$" -f "$3" '
             '--slot-seconds "$4" --misfire all --misfire-window "$5" -v',
             a.minicron, a.plugin, self.conf,
             os.path.join(a.work, "crontab"), str(SLOT_S), str(WINDOW_S)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=self.err)
        self.procs[p.pid] = p
        return p.pid

    def lines(self):
        """The job's log: (slot start s, minicron pid, term, ms)."""
        out = []
        with open(self.runs) as f:
            for line in f:
                v = line.split()
                if len(v) == 4:
                    out.append(tuple(int(x) for x in v))
        return out

    def newest_pid(self):
        """The pid of the minicron that ran the newest slot, or None."""
        runs = self.lines()
        return max(runs)[1] if runs else None

    def wait_other(self, slot, pid, timeout_ms=10000, soft=False):
        """Waits for a run of a slot >= slot by a pid other than pid;
        returns that pid. Raises Failed when none came, unless soft (then
        None)."""
        got = harness.wait_for(lambda: next(
            (p for s, p, _, _ in self.lines() if s >= slot and p != pid),
            None), timeout_ms / 1000.0, 0.05)
        if got is None and not soft:
            raise Failed("no run of slot >= %d by another minicron than %s "
                         "in %d s" % (slot, pid, timeout_ms // 1000))
        return got

    def wait_leader(self):
        """Waits at most 10 s until the minicron that ran the newest slot
        is the leader `odbc-leader status` names; returns its pid."""
        seen = []

        def settled():
            pid = self.newest_pid()
            p = subprocess.run([self.a.odbc_leader, "status", "--json", "-C",
                                self.conf], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
            try:
                lead = json.loads(p.stdout).get("leader")
            except ValueError:
                lead = None
            seen[:] = [pid, lead]
            return pid if pid is not None and lead == "mc-%d" % pid else None
        got = harness.wait_for(settled, 10, 0.2)
        if got is None:
            raise Failed("no settled leader in 10 s (newest run by %s, "
                         "leader %s)" % tuple(seen))
        return got

    def round(self, sig, off):
        """One failover: sig (SIGKILL or SIGSTOP) to the leader at off ms
        from the next slot boundary at least 300 ms ahead. A killed leader
        is replaced; a stopped one is continued STOP_MS later, once
        another minicron runs the slots."""
        victim = self.wait_leader()
        b = (now_ms() // 1000 + 1) * 1000
        while b + off < now_ms() + 300:
            b += 1000
        sleep_until(b + off)
        if victim not in self.procs:
            raise Failed("leader %d is not ours" % victim)
        if sig == signal.SIGSTOP:
            harness.pause(victim)
        else:
            os.kill(victim, sig)
        harness.log("claims: %s to leader %d at %d ms from slot %d" % (
            signal.Signals(sig).name, victim, off, b // 1000))
        if sig == signal.SIGKILL:
            self.procs[victim].wait()
            self.killed.append(victim)
            self.start()
        slot = (b + off) // 1000
        if sig != signal.SIGSTOP or self.a.label != "sqlite":
            nxt = self.wait_other(slot, victim)
        else:
            nxt = self.wait_other(slot, victim, STOP_MS + 1000, soft=True)
            if nxt is None:
                # SQLite: a process stopped inside a transaction keeps the
                # file lock, and nobody takes over before it runs again
                # (docs/fencing.md). Continue it; the slots must then go
                # on, and check_fires still checks that none ran twice or
                # in a lost term.
                os.kill(victim, signal.SIGCONT)
                harness.log("claims: nobody took over while %d was stopped "
                            "(SQLite: stopped holding the file lock); "
                            "SIGCONT" % victim)
                nxt = self.wait_other(slot, None)
                harness.log("claims: slot runs continued by %d" % nxt)
                return
        harness.log("claims: slot runs continued by %d" % nxt)
        if sig == signal.SIGSTOP:
            sleep_until(b + off + STOP_MS)
            os.kill(victim, signal.SIGCONT)
            harness.log("claims: SIGCONT to %d" % victim)

    def stop_all(self):
        """SIGTERM to the followers, then to the leader (so nobody takes
        over and catches up while they stop)."""
        lead = self.newest_pid()
        for pid, p in self.procs.items():
            if pid != lead:
                harness.terminate([p], 20)
        if lead in self.procs:
            harness.terminate([self.procs[lead]], 20)

    def kill_all(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()

    def check(self, runs, ledger, first, last, failovers):
        """check_fires.py on runs and ledger from slot first to last;
        returns (passed, its output)."""
        p = subprocess.run(
            [sys.executable, self.a.checker, "--runs", runs, "--ledger",
             ledger, "--slot-seconds", str(SLOT_S), "--first", str(first),
             "--last", str(last), "--killed"] +
            [str(k) for k in self.killed] +
            ["--max-incomplete", "1", "--expect-late", str(failovers)],
            stdout=subprocess.PIPE, text=True)
        return p.returncode == 0, p.stdout


def scenario(c):
    """The schedule, the checks and the checker's two broken variants.
    Raises Failed."""
    a = c.a
    t0 = now_ms()
    harness.log("claims (%s): three minicrons, --misfire all, window %d s"
                % (a.label, WINDOW_S))
    for _ in range(3):
        c.start()
    failovers = 0
    for off in KILL_OFFSETS_MS:
        c.round(signal.SIGKILL, off)
        failovers += 1
    c.round(signal.SIGSTOP, STOP_OFFSET_MS)
    failovers += 1
    last = now_ms() // 1000 + 1
    c.wait_other(last, 0)
    time.sleep(1)
    c.stop_all()
    runs = c.lines()
    first = min(s for s, _, _, _ in runs)
    ledger = os.path.join(a.work, "ledger.json")
    with open(ledger, "w") as f:
        if subprocess.run([a.odbc_leader, "fires", "--json", "--limit", "0",
                           "-C", c.conf], stdout=f).returncode != 0:
            raise Failed("odbc-leader fires failed")
    with open(ledger) as f:
        rows = [line for line in f if line.strip()]
    terms = len({t for _, _, t, _ in runs})
    harness.log("claims (%s): %d runs, %d ledger rows, %d terms" % (
        a.label, len(runs), len(rows), terms))
    with open(os.path.join(a.work, "minicron.err"), errors="replace") as f:
        if "cannot claim fires" in f.read():
            raise Failed("minicron said the plugin cannot claim fires")
    ok, out = c.check(c.runs, ledger, first, last, failovers)
    sys.stderr.write(out)
    if not ok:
        raise Failed("slots did not fire exactly once")
    if terms <= failovers:
        raise Failed("fewer terms than failovers + 1")

    # The checker can fail: a slot run twice ...
    slots = sorted(s for s, _, _, _ in runs)
    dup, gap = slots[2], slots[3]
    with open(c.runs) as f:
        text = f.read()
    dup_log = os.path.join(a.work, "dup.log")
    with open(dup_log, "w") as f:
        f.write(text + "".join(line + "\n" for line in text.splitlines()
                               if line.split()[:1] == [str(dup)]))
    ok, out = c.check(dup_log, ledger, first, last, failovers)
    if ok:
        raise Failed("check_fires.py missed a duplicate")
    if not any(line.startswith("slot %d: ran 2 times" % (dup // SLOT_S))
               for line in out.splitlines()):
        raise Failed("check_fires.py: %s" % out)
    # ... and a slot missing from both the log and the ledger.
    gap_log = os.path.join(a.work, "gap.log")
    with open(gap_log, "w") as f:
        f.write("".join(line + "\n" for line in text.splitlines()
                        if line.split()[:1] != [str(gap)]))
    gap_json = os.path.join(a.work, "gap.json")
    with open(gap_json, "w") as f:
        f.write("".join(r for r in rows
                        if json.loads(r)["fire_ms"] != gap * 1000))
    ok, out = c.check(gap_log, gap_json, first, last, failovers)
    if ok:
        raise Failed("check_fires.py missed a gap")
    if not any(line.startswith("slot %d: claimed 0 times" % (gap // SLOT_S))
               for line in out.splitlines()):
        raise Failed("check_fires.py: %s" % out)
    harness.log("claims (%s): passed in %d s; negative checks: duplicate "
                "and gap detected" % (a.label, (now_ms() - t0) // 1000))


def main():
    ap = argparse.ArgumentParser()
    for name in ("connect", "label", "minicron", "plugin", "odbc-leader",
                 "checker", "work"):
        ap.add_argument("--" + name, required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    c = Claims(a)
    try:
        scenario(c)
    except Failed as e:
        print("FAIL: claims (%s): %s" % (a.label, e), file=sys.stderr)
        return 1
    finally:
        c.kill_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
