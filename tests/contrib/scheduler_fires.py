# SPDX-License-Identifier: MIT
"""scheduler_fires.py: exactly-once fires of a Python scheduler on odbc-leader.

    python3 scheduler_fires.py --kind apscheduler|celery|node|exec
        --python PY --pkg DIR --plugin SO --connect CONN --odbc-leader BIN
        --checker CHECK_FIRES --work DIR [--broker URL] [--kills N]
        [--jobs N --shards N] [--exe EXE [--env K=V ...]]
        [--faults full --faketime-lib SO [--short-stop]]

Runs three scheduler processes, each with LeaderId=mc-PID so that the
fire ledger names the process, on one namespace with a 1-second job and
a 2-second lease:

- apscheduler: `PY -m odbc_leader.examples.apscheduler` (the real
  APScheduler, PYTHONPATH=DIR); a run is a FIRE line on its stdout.
- node: `node PKG/examples/LIB.js` (--lib LIB), the same contract.
- exec: EXE itself (--exe; any example that follows the contract, such
  as the Java and Ruby ones), with each --env K=V added to its
  environment.
- celery: `PY -m celery -A odbc_leader.examples.celery beat -S
  odbc_leader.celery:LeaderScheduler` and one real worker of the same app,
  both on the broker URL; a beat's "sent" log line marks the leader, and a
  run is a FIRE line on the worker's stdout (the fire's time and term come
  in the task's headers).

The process that sends or runs fires (the leader) is killed with SIGKILL
just after a fire, --kills times (default 2), each time replaced by a new
process; then it gets SIGTERM (a graceful handover) and is replaced; the
rest run on and are stopped with SIGTERM.

The runs become "SLOT PID TERM ARRIVAL_MS" in WORK/runs.log, the ledger
(`odbc-leader fires --json --limit 0`) goes to WORK/ledger.json, and
tests/contrib/check_fires.py checks that every 1-second slot from the
first fire (or, if later, the first slot due after the first process
started: earlier ones are caught up within the grace only as a bonus) to
the last watched one fired exactly once (one ledger row, one run, in the
term that claimed it) and that nothing ran twice. A slot
that fell due during a failover runs only through the new leader's
catch-up, so "no gap" checks the catch-up. Then the checker must fail on
the same log with one line repeated and with one line removed. Exits 0
when all of that holds.

With --jobs N --shards N the three processes run N 1-second jobs as
members of a sharded group (Leader(shards=N); celery: N beat entries and
odbc_leader_shards): the process killed is one that fired (celery: sent)
last, each job's runs go to
WORK/runs-JOB.log, its ledger rows (from the namespace of its shard,
NAMESPACE/shard) to WORK/ledger-JOB.json and check_fires.py checks each
job. The jobs must also be spread: in the last seconds before the stop,
at least two processes ran (celery: sent) fires.
"""

import argparse
import collections
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "lib"))
import harness  # noqa: E402 (tests/lib: pause, holds_file_lock)
from shards import fnv1a_shard  # noqa: E402 (tests/lib: the shard oracle)

TTL_MS = 2000
EVERY_S = 1
NAMESPACE = "sched"
LIVENESS_S = 30
ERR_TAIL = 20  # the stderr lines a finding on a bad exit shows
TIMING = "LeaderRenewInterval=250;LeaderSafetyMargin=150"
FAKE_AHEAD = "+0.7"  # libfaketime: the fourth process's clock, 700 ms ahead
SHORT_STOP_S = 1.2  # --short-stop: less than the trust window's 1.6 s
SENT = re.compile(r"sent (\S+) fire (\d+) term (\d+)")
# a start that timed out (the examples print why their start failed)
START_TIMEOUT = re.compile(r"timeout|timed out", re.I)
INCOMPLETE = re.compile(r"(\d+) claimed but not run")


def now_ms():
    return int(time.time() * 1000)


class Procs:
    """The scheduler processes, who fired last, and the runs."""

    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.procs = {}  # pid -> Popen
        self.last_fire = {}  # pid -> arrival ms of its last fire
        self.killed = []
        self.termed = {}  # pid -> ms of the SIGTERM a fault sent it
        self.started_ms = 0
        self.runs = {}  # job -> its runs file
        self.err = open(os.path.join(args.work, "stderr.log"), "ab")
        self.err_tail = {}  # pid -> its last stderr lines
        self.registered = set()  # the pids seen as candidates
        self.err_threads = {}  # pid -> the thread copying its stderr
        self.first_slot = {}  # job -> the slot of its first run
        self.fired_by = []  # (arrival ms, pid) of every run
        self.env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1",
                        PYTHONFAULTHANDLER="1",
                        PYTHONPATH=args.pkg,
                        CELERY_BROKER_URL=args.broker or "",
                        ODBC_LEADER_NAMESPACE=NAMESPACE,
                        ODBC_LEADER_PLUGIN=args.plugin,
                        ODBC_LEADER_TTL_MS=str(TTL_MS),
                        ODBC_LEADER_EVERY=str(EVERY_S))
        if args.shards:
            self.env.update(ODBC_LEADER_JOBS=str(args.jobs),
                            ODBC_LEADER_SHARDS=str(args.shards))
        self.worker = None
        self.fake = set()  # the pids whose clock runs FAKE_AHEAD ahead
        self.task_lines = []  # (job, fire_ms, term, arrival ms), the worker's
        self.unaligned = []  # the runs whose fire time is not a slot's

    def start(self, fake=False):
        a = self.args
        if a.kind in ("node", "exec"):
            cmd = ('exec "$0" "$1" --plugin "$2" --connect '
                   '"$3;LeaderId=mc-$$;%s" --namespace "$4" --every "$5" '
                   '--ttl "$6" "${@:7}"' % TIMING)
            if a.kind == "node":
                head = [a.node, os.path.join(a.pkg, "examples", a.lib + ".js")]
            else:  # the exe is $0, $1 an empty argument it never sees
                cmd = cmd.replace('"$0" "$1"', '"$0"')
                head = [a.exe, ""]
            argv = ["bash", "-c", cmd] + head + [
                a.plugin, a.connect, NAMESPACE, str(EVERY_S), str(TTL_MS)]
            if a.shards:
                argv += ["--jobs", str(a.jobs), "--shards", str(a.shards)]
            env = dict(self.env)
            env.update(kv.split("=", 1) for kv in a.env)
            if fake:  # its wall clock runs FAKE_AHEAD ahead of the others'
                env.update(LD_PRELOAD=a.faketime_lib, FAKETIME=FAKE_AHEAD,
                           FAKETIME_DONT_FAKE_MONOTONIC="1")
            if a.broken:
                env.update(NODE_OPTIONS="--require %s" % a.broken_module,
                           ODBC_LEADER_BROKEN=a.broken)
            p = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=env, text=True)
            stream = p.stdout
        elif a.kind == "apscheduler":
            cmd = ('exec "$0" -m odbc_leader.examples.apscheduler --plugin '
                   '"$1" --connect "$2;LeaderId=mc-$$;%s" --namespace "$3" '
                   '--every "$4" --ttl "$5" "${@:6}"' % TIMING)
            argv = ["bash", "-c", cmd, a.python, a.plugin, a.connect,
                    NAMESPACE, str(EVERY_S), str(TTL_MS)]
            if a.shards:
                argv += ["--jobs", str(a.jobs), "--shards", str(a.shards)]
            p = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=self.env,
                                 text=True)
            stream = p.stdout
        else:
            cmd = ('ODBC_LEADER_CONNECT="$1;LeaderId=mc-$$;%s" exec "$0" -m '
                   'celery -A odbc_leader.examples.celery beat -S '
                   'odbc_leader.celery:LeaderScheduler -l info --schedule '
                   '"$2"' % TIMING)
            argv = ["bash", "-c", cmd, a.python, a.connect,
                    os.path.join(a.work, "unused-schedule")]
            p = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, env=self.env,
                                 text=True, cwd=a.work)
            stream = p.stderr
        if stream is p.stdout:  # celery's stderr is its stream
            self._tee_stderr(p)
        with self.lock:
            self.procs[p.pid] = p
            if fake:
                self.fake.add(p.pid)
        threading.Thread(target=self._read, args=(p, stream),
                         daemon=True).start()
        return p.pid

    def _tee_stderr(self, p):
        """Copies p's stderr to stderr.log, each line under p's pid, and
        keeps its last lines for a finding on how p exited."""
        tail = self.err_tail[p.pid] = collections.deque(maxlen=ERR_TAIL)

        def copy():
            for line in p.stderr:
                tail.append(line.rstrip("\n"))
                self._err_line(p.pid, line)

        t = threading.Thread(target=copy, daemon=True)
        t.start()
        self.err_threads[p.pid] = t

    def _err_line(self, pid, line):
        """Writes a stderr line of pid to stderr.log, under its pid."""
        with self.lock:
            self.err.write(("%d: %s" % (pid, line)).encode())
            self.err.flush()

    def _failed_start(self, pid, rc):
        """True (and says so on stdout) when pid exited 1 before it ever
        registered as a candidate, its stderr naming a timeout: its
        Leader's start (the first connect and its statements, bounded by
        the statement timeout) timed out on a loaded machine, which init
        reports as documented (docs/abi.md) and a service manager cures
        by starting it again; the others carried the schedule."""
        if rc != 1 or pid in self.registered:
            return False
        err = self.err_of(pid)
        if not START_TIMEOUT.search(err):
            return False
        print("%d exited 1 at its start (a timeout), never a candidate; "
              "its stderr ended:%s" % (pid, err), flush=True)
        return True

    def err_of(self, pid):
        """The last lines p wrote to its stderr, as a finding's tail
        (empty for a process whose stderr is read elsewhere)."""
        t = self.err_threads.get(pid)
        if t is not None:
            t.join(5)  # the process has exited: its stderr ends soon
        lines = list(self.err_tail.get(pid, ()))
        return "".join("\n    %d: %s" % (pid, l) for l in lines)

    def start_worker(self):
        a = self.args
        log = open(os.path.join(a.work, "worker.log"), "ab")
        self.worker = subprocess.Popen(
            [a.python, "-m", "celery", "-A", "odbc_leader.examples.celery",
             "worker", "-l", "warning", "-c", "2", "--without-gossip",
             "--without-mingle"], stdout=subprocess.PIPE, stderr=log,
            env=dict(self.env, ODBC_LEADER_CONNECT=a.connect), cwd=a.work,
            text=True)
        threading.Thread(target=self._read_worker, daemon=True).start()

    def _read_worker(self):
        for line in self.worker.stdout:
            t = now_ms()
            f = line.split()
            if len(f) == 5 and f[0] == "FIRE":  # else its banner
                with self.lock:
                    self.task_lines.append((f[1], int(f[2]), int(f[3]), t))

    def _read(self, p, stream):
        kind = self.args.kind
        for line in stream:
            t = now_ms()
            if kind in ("apscheduler", "node", "exec"):
                f = line.split()
                # FIRE <job> <fire_ms> <term> <attempt>: no --recover here,
                # so every run is a first attempt
                if len(f) != 5 or f[0] != "FIRE" or f[4] != "1":
                    print("unexpected output of %d: %r" % (p.pid, line))
                    continue
                self._ran(f[1], int(f[2]), p.pid, int(f[3]), t)
            else:
                self._err_line(p.pid, line)
                if SENT.search(line):
                    with self.lock:
                        self.last_fire[p.pid] = t
                        self.fired_by.append((t, p.pid))

    def _ran(self, job, fire_ms, pid, term, t):
        slot_s = fire_ms // 1000
        with self.lock:
            self.registered.add(pid)  # it started: it fired
            if fire_ms % (EVERY_S * 1000):
                # its claim key is not the slot's: another host's catch-up
                # would run the slot again
                self.unaligned.append("%d ran %s at %d, not a slot's start "
                                      "(an invented fire time)"
                                      % (pid, job, fire_ms))
            if job not in self.runs:
                self.runs[job] = open(runs_path(self.args, job), "a")
            self.runs[job].write("%d %d %d %d\n" % (slot_s, pid, term, t))
            self.runs[job].flush()
            self.last_fire[pid] = t
            self.fired_by.append((t, pid))
            self.first_slot.setdefault(job, slot_s)

    def leader(self, since_ms):
        """The live pid that fired last after since_ms, or None."""
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
        raise RuntimeError("nothing fired for %d s" % LIVENESS_S)

    def fault(self, pid, sig):
        """Sends sig to pid as a fault: a SIGKILL makes it a killed
        claimant, a SIGTERM a graceful handover that stop_all does not
        repeat."""
        self.procs[pid].send_signal(sig)
        if sig == signal.SIGKILL:
            self.killed.append(pid)
        elif sig == signal.SIGTERM:
            self.termed[pid] = now_ms()

    def stop_all(self):
        """Stops every process with one SIGTERM (none more to one that a
        fault already stopped: a Python process still finishing its exit
        has the default handler back, and a second SIGTERM kills it with
        -15); returns the findings: a process that did not stop, or
        exited with neither 0 nor SIGKILL (but for a start that timed out,
        _failed_start)."""
        for pid, p in self.procs.items():
            if p.poll() is None and pid not in self.termed:
                p.send_signal(signal.SIGTERM)
        bad = []
        for pid, p in self.procs.items():
            try:
                rc = p.wait(20)
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGABRT)  # faulthandler: the stacks
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                rc = p.wait()
                bad.append("%d did not stop on SIGTERM (its threads' stacks "
                           "are in stderr.log)" % pid)
            if pid not in self.killed and rc not in (0, -signal.SIGKILL) \
                    and not self._failed_start(pid, rc):
                bad.append("%d exited %d%s; its stderr ended:%s" % (
                    pid, rc, "" if pid not in self.termed else
                    " (a fault's SIGTERM at %d)" % self.termed[pid],
                    self.err_of(pid)))
        return bad

    def task_runs(self, ledger_rows):
        """celery: the worker's task runs as the runs logs' lines; the
        pid is the ledger's claimant of the fire (the beat that sent it).
        ledger_rows: each job's ledger rows."""
        by_fire = {job: {r["fire_ms"]: r for r in rows}
                   for job, rows in ledger_rows.items()}
        with self.lock:
            lines = list(self.task_lines)
        for job, fire_ms, term, t in lines:
            row = by_fire.get(job, {}).get(fire_ms)
            who = row["claimed_by"] if row else ""
            pid = int(who[3:]) if who.startswith("mc-") else 0
            self._ran(job, fire_ms, pid, term, t)

    def spread(self, since_ms):
        """The pids that ran fires (celery: sent them) after since_ms."""
        with self.lock:
            return {pid for t, pid in self.fired_by if t > since_ms}


def jobs_of(args):
    """The job names the processes run."""
    if not args.shards:
        return ["every"]
    return ["every-%d" % i for i in range(args.jobs)]


def runs_path(args, job):
    name = "runs.log" if not args.shards else "runs-%s.log" % job
    return os.path.join(args.work, name)


def ledger_path(args, job):
    name = "ledger.json" if not args.shards else "ledger-%s.json" % job
    return os.path.join(args.work, name)


def write_ledgers(args):
    """Writes each job's ledger rows (odbc-leader fires --json) to its
    ledger file: the namespace's, or in a group its shard's. Returns the
    list of failures."""
    shard_of = fnv1a_shard if args.shards else None
    namespaces = {}
    for job in jobs_of(args):
        ns = NAMESPACE if shard_of is None else \
            "%s/%d" % (NAMESPACE, shard_of(job, args.shards))
        namespaces.setdefault(ns, []).append(job)
    failures = []
    for ns, jobs in sorted(namespaces.items()):
        out = subprocess.run(
            [args.odbc_leader, "fires", "-C", args.connect, "-n", ns,
             "--json", "--limit", "0"], capture_output=True, text=True)
        if out.returncode != 0:
            failures.append("odbc-leader fires -n %s: %s"
                            % (ns, out.stderr.strip()))
        rows = [json.loads(x) for x in out.stdout.splitlines() if x.strip()]
        for job in jobs:
            with open(ledger_path(args, job), "w") as f:
                for r in rows:
                    if r["job"] == job:
                        f.write(json.dumps(r) + "\n")
    return failures


def run_checker(args, runs, ledger, first, last, killed):
    """check_fires.py on one job. A process killed between a claim and
    the run leaves that fire claimed and never run (the documented limit):
    at most one per kill, which main() also checks across the jobs."""
    cmd = [sys.executable, args.checker, "--runs", runs, "--ledger", ledger,
           "--slot-seconds", str(EVERY_S), "--first", str(first), "--last",
           str(last), "--max-incomplete", str(len(killed)),
           "--killed"] + [str(k) for k in killed]
    if args.faults == "full" and not args.shards:
        # the kill -9 just before a slot leaves that slot (or, when the
        # leader's clock ran ahead and it had fired it, the next) to the
        # next leader's catch-up, at least 0.5 s after its start. Other
        # takeovers may fall within one slot's second: a kill just after
        # the fire of a leader 700 ms ahead leaves the next slot, run some
        # 200 ms late. So: at least one run 250 ms late or more.
        cmd += ["--expect-late", "1", "--late-after-ms", "250"]
    return subprocess.run(cmd, capture_output=True, text=True)


def scenario(ps, kills):
    """Kills and replaces the leader; returns the last slot to check."""
    ps.started_ms = now_ms()
    for _ in range(3):
        ps.start()
    ready_for_takeover(ps)
    since = now_ms()
    for i in range(kills + 1):
        lead = ps.wait_leader(since)
        time.sleep(0.1)  # just after its fire: a slot claimed and sent
        sig = signal.SIGKILL if i < kills else signal.SIGTERM
        ps.fault(lead, sig)
        print("%s leader %d" % ("killed" if sig == signal.SIGKILL
                                 else "stopped (SIGTERM)", lead), flush=True)
        since = now_ms()
        time.sleep(0.5)
        ps.start()
        ps.wait_leader(since + 1)  # the next leader fires (and catches up)
        since = now_ms()
    # a group's member killed last: its shards are taken after about two
    # TTLs (the watch), then caught up
    time.sleep((3 if ps.args.shards else 1) * TTL_MS / 1000.0 + 2)
    # the replacement has started (stop_all's SIGTERM before its handler
    # exists kills it) and the stopped leader has exited
    wait_registered(ps)
    return now_ms() // 1000 - 2  # due, fired and run by now


def ready_for_takeover(ps):
    """Before the first fault: waits until every process has started (a
    candidate of the namespace, a group's member too). A fault that comes
    while the others still start on a loaded machine tests their
    start-up, not the takeover: at a load of 15 it took 4 to 8.6 s from
    the first kill to the next leader's first claim, and the slot in
    between fell out of the catch-up grace."""
    wait_registered(ps)


def until_before_slot(margin_s):
    """Sleeps until margin_s before the next slot boundary."""
    now = time.time()
    nxt = (int(now) // EVERY_S + 1) * EVERY_S
    if nxt - now < margin_s + 0.05:
        nxt += EVERY_S
    time.sleep(nxt - margin_s - now)


def scenario_full(ps):
    """A process whose clock runs FAKE_AHEAD ahead (faketime) starts first
    and leads; then three others. The leader is killed -9 just after a
    fire (the first time: the one ahead), then just before one, stopped
    with SIGSTOP past its TTL and continued, stopped with SIGTERM; each
    time (but the SIGSTOP) replaced by a process with the same clock.
    With --short-stop, first the leader is stopped for SHORT_STOP_S from
    just before a slot and continued: it keeps its lease and its
    scheduler wakes late. Returns the last slot to check."""
    ps.started_ms = now_ms()
    fake = ps.start(fake=True)
    print("process %d runs %s s ahead" % (fake, FAKE_AHEAD), flush=True)
    ps.wait_leader(ps.started_ms)
    for _ in range(3):
        ps.start()
    ready_for_takeover(ps)
    since = now_ms()
    steps = ("kill-after", "kill-before", "stop-cont", "term")
    if ps.args.short_stop:
        steps = ("short-stop",) + steps
    for step in steps:
        lead = ps.wait_leader(since)
        if step == "short-stop":
            # a pause shorter than the leader's trust window (TTL - the
            # safety margin from its last renew attempt, at least 1.6 s
            # here), from just before a slot: the slot falls due while it
            # is stopped, and it wakes still leading, its scheduler late
            # (a Quartz misfire past a 500 ms threshold)
            until_before_slot(0.1)
            harness.pause(lead)
            try:
                time.sleep(SHORT_STOP_S)
            finally:
                ps.procs[lead].send_signal(signal.SIGCONT)
            print("stopped leader %d for %.1f s (SIGSTOP, SIGCONT)"
                  % (lead, SHORT_STOP_S), flush=True)
            time.sleep(2)
            since = now_ms()
            continue
        if step == "kill-before":
            until_before_slot(0.15)
        elif step != "stop-cont":
            time.sleep(0.1)  # just after its fire
        if step == "stop-cont":
            harness.pause(lead)
            print("stopped leader %d (SIGSTOP)" % lead, flush=True)
            try:
                time.sleep(TTL_MS / 1000.0 + 1.5)  # past its TTL
                since = now_ms()
                if harness.holds_file_lock(lead):
                    # SQLite: stopped inside its short transaction, it
                    # keeps the file locked and nobody can be elected
                    # until it runs again (docs/reliability.md): the
                    # fault ends at SIGCONT
                    ps.procs[lead].send_signal(signal.SIGCONT)
                    print("%d froze holding the file lock; continued"
                          % lead, flush=True)
                other = ps.wait_leader(since)
            finally:
                ps.procs[lead].send_signal(signal.SIGCONT)
            print("continued %d; %d leads" % (lead, other), flush=True)
            time.sleep(2)
            since = now_ms()
            continue
        sig = signal.SIGKILL if step.startswith("kill") else signal.SIGTERM
        ps.fault(lead, sig)
        print("%s leader %d%s" % (step, lead, " (ahead)" if lead in ps.fake
                                  else ""), flush=True)
        since = now_ms()
        time.sleep(0.5)
        ps.start(fake=lead in ps.fake)
        ps.wait_leader(since + 1)
        since = now_ms()
    time.sleep(TTL_MS / 1000.0 + 2)
    wait_registered(ps)
    return now_ms() // 1000 - 2


def wait_registered(ps):
    """Waits until every live process is a candidate of the namespace (it
    has started: the last one may still be, on a loaded machine; a JVM
    or a celery beat killed by SIGTERM before its handler exists exits
    143) and every process a fault stopped has exited (it resigned, so it
    is no candidate), then 1 s more for its scheduler. A group's members
    are candidates of the group's namespace. Raises RuntimeError after
    LIVENESS_S."""
    deadline = time.monotonic() + LIVENESS_S
    while True:
        with ps.lock:
            live = {pid for pid, p in ps.procs.items() if p.poll() is None}
        out = subprocess.run(
            [ps.args.odbc_leader, "status", "-C", ps.args.connect, "-n",
             NAMESPACE, "--json"], capture_output=True, text=True)
        ids = set()
        if out.returncode == 0:
            ids = {c.get("id") for c in json.loads(out.stdout)["candidates"]}
        ps.registered |= {pid for pid in live if "mc-%d" % pid in ids}
        missing = sorted(pid for pid in live if "mc-%d" % pid not in ids)
        if not missing:
            time.sleep(1)
            return
        if time.monotonic() > deadline:
            raise RuntimeError("processes %s never registered as candidates"
                               "%s" % ([p for p in missing
                                        if p not in ps.termed],
                                       "; stopped by a fault, still running: "
                                       "%s" % [p for p in missing
                                               if p in ps.termed]))
        time.sleep(0.2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", choices=("apscheduler", "celery", "node",
                                       "exec"), required=True)
    for a in ("plugin", "connect", "odbc-leader", "checker", "work"):
        ap.add_argument("--" + a, required=True)
    ap.add_argument("--pkg", default="",
                    help="the package (python: PYTHONPATH; node: its dir)")
    ap.add_argument("--exe", help="exec: the example to run")
    ap.add_argument("--env", action="append", default=[], metavar="K=V",
                    help="exec: added to the example's environment")
    ap.add_argument("--short-stop", action="store_true",
                    help="--faults full: also stop the leader with SIGSTOP "
                    "for %.1f s from just before a slot, within its lease "
                    "(the scheduler wakes late and still leads)"
                    % SHORT_STOP_S)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--node", default="node")
    ap.add_argument("--lib", help="node: the example, examples/LIB.js")
    ap.add_argument("--faults", choices=("kills", "full"), default="kills",
                    help="full: a kill just after and one just before a "
                    "fire, SIGSTOP past the TTL, SIGTERM, and a fourth "
                    "process whose clock runs ahead")
    ap.add_argument("--faketime-lib", help="libfaketimeMT.so.1 (--faults full)")
    ap.add_argument("--broken", help="node: a broken variant of the "
                    "binding (ODBC_LEADER_BROKEN) that the checker must fail")
    ap.add_argument("--broken-module", help="the module that makes it")
    ap.add_argument("--broker")
    ap.add_argument("--kills", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--shards", type=int, default=0)
    args = ap.parse_args()
    if args.shards and args.jobs < 2:
        ap.error("--shards: give --jobs 2 or more")
    if (args.kind == "exec") != (args.exe is not None):
        ap.error("--exe goes with --kind exec")
    if any("=" not in kv for kv in args.env):
        ap.error("--env: give K=V")
    os.makedirs(args.work, exist_ok=True)
    ps = Procs(args)
    failures = []
    if args.kind == "celery":
        ps.start_worker()
    try:
        last = scenario_full(ps) if args.faults == "full" else \
            scenario(ps, args.kills)
    except RuntimeError as e:
        failures.append(str(e))
        last = now_ms() // 1000
    spread = ps.spread(now_ms() - 4000)
    if args.shards and len(spread) < 2:
        failures.append("the jobs are not spread: in the last 4 s only %s "
                        "ran fires" % sorted(spread))
    failures += ps.stop_all()
    if ps.worker is not None:
        time.sleep(1)  # the last tasks sent reach the worker
        ps.worker.send_signal(signal.SIGTERM)
        try:
            ps.worker.wait(30)
        except subprocess.TimeoutExpired:
            ps.worker.kill()
            failures.append("the worker did not stop on SIGTERM")
    failures += write_ledgers(args)
    if args.kind == "celery":
        rows = {}
        for job in jobs_of(args):
            with open(ledger_path(args, job)) as f:
                rows[job] = [json.loads(x) for x in f if x.strip()]
        ps.task_runs(rows)
    for f in ps.runs.values():
        f.close()
    total = incomplete = 0
    for job in jobs_of(args):
        runs, ledger = runs_path(args, job), ledger_path(args, job)
        if not os.path.exists(runs):
            failures.append("%s: never ran" % job)
            continue
        # from the first slot due once the first process had started: an
        # earlier slot is only caught up within the grace, best effort (a
        # beat killed in the middle of its start-up catch-up leaves the
        # rest to its successor, by then maybe past the grace)
        first = max(ps.first_slot.get(job, last),
                    -(-ps.started_ms // 1000))
        res = run_checker(args, runs, ledger, first, last, ps.killed)
        print("%s: %s" % (job, res.stdout), end="")
        if res.returncode != 0:
            failures.append("check_fires: exactly once broken for %s" % job)
        m = INCOMPLETE.search(res.stdout)
        incomplete += int(m.group(1)) if m else 0
        with open(runs) as f:
            lines = f.readlines()
        total += len(lines)
        if len(lines) < 5:
            failures.append("%s: only %d fires ran" % (job, len(lines)))
            continue
        if job != jobs_of(args)[0]:
            continue  # the checker's own test, on the first job
        # drop or repeat a run of a slot the checker covers, by a process
        # that was not killed: a line of a slot caught up from before
        # `first` or run after `last` is not checked, and a run whose
        # killed claimant never finished it may be missing (a kill between
        # the claim and the run), so neither would hide a gap
        inside = [i for i, x in enumerate(lines)
                  if first <= int(x.split()[0]) // EVERY_S <= last and
                  int(x.split()[1]) not in ps.killed + [1]]
        if not inside:
            failures.append("%s: no run within slots %d..%d" % (job, first,
                                                                 last))
            continue
        mid = inside[len(inside) // 2]
        for name, bad_lines in (("duplicate", lines + [lines[mid]]),
                                ("gap", lines[:mid] + lines[mid + 1:])):
            path = os.path.join(args.work, "runs-%s.log" % name)
            with open(path, "w") as f:
                f.writelines(bad_lines)
            r = run_checker(args, path, ledger, first, last, ps.killed)
            if r.returncode == 0:
                failures.append("check_fires passed a log with a %s" % name)
    failures += ps.unaligned
    ahead = sum(1 for _, pid in ps.fired_by if pid in ps.fake)
    if args.faults == "full" and ahead == 0:
        failures.append("no fire ran in a process whose clock runs ahead")
    if incomplete > len(ps.killed):
        failures.append("%d fires claimed and never run, more than the %d "
                        "kills" % (incomplete, len(ps.killed)))
    for f in failures:
        print("FAIL: %s" % f)
    print("%s: %d jobs%s, up to slot %d, %d fires%s, %d kills, %d processes "
          "fired in the last 4 s: %s" % (
              args.kind, len(jobs_of(args)),
              " in %d shards" % args.shards if args.shards else "", last,
              total, " (%d by a clock %s s ahead)" % (ahead, FAKE_AHEAD)
              if args.faults == "full" else "", len(ps.killed), len(spread),
              "FAIL" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
