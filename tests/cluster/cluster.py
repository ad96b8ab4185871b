#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""cluster.py: the driver of the database-topology tests (tests/cluster)
and of the SQLite host-clock step (tests/faults/clockstep-sqlite.test).

    cluster.py promotion|clockstep|sqlitestep|pgbouncer [OPTIONS]
               --lib ... --work DIR

promotion.test, clockstep.test, pgbouncer.test and clockstep-sqlite.test
start their servers with tests/integration/lib.sh and
tests/cluster/lib-cluster.sh, then run one scenario here. A scenario runs
elections (one namespace each) of two kinds of candidates on the same
namespace:

  * fault-host (tests/faults/fault-host.c): the plugin loaded as a
    scheduler loads it, is_leader() sampled from a thread of its own; the
    "yes" answers land in ELECTION/hosts/host-PID.rec and
    tests/faults/checker judges them (overlap, shared term, regression);
  * `odbc-leader run` under a service loop (restarted RESTART_DELAY_S
    after it exits, as a service manager would), CMD = cmd-life
    (tests/faults/cmd-life.c) with a --child: its life lands in
    ELECTION/cmds/life-PID.rec and tests/faults/cmdcheck judges the lives
    (overlap, orphan, term).

Both checkers run as they are, and once more on the union of both kinds of
claims (a CMD's life is a claim of its term by its run's candidate id), so
a fault-host and a CMD leading at once, or one term held by a fault-host
and a run, are caught too ("combined"). Every log line of every candidate
is kept with the time it arrived (ELECTION/log.txt); lines at warning
level or worse (fault-host: log level <= 4; odbc-leader run: "error:",
"warning:" and untagged error messages) are counted per fault: from the
fault to the next one (or the end).

Takeover: for each fault, the time from the fault to the first claim of a
tenure (candidate, term) other than the one leading at the fault, from the
records (fault-host: the first is_leader() "yes" of that term; run: its
CMD's start). "kept" when the leader kept its term through the fault.

Clock steps (clockstep, sqlitestep; run_clock_phases): per phase (a
timing and a step size, --phases), step after step, a FRESH namespace's
candidates (--hosts fault-hosts, --runs runs) start together, the
database clock steps forward right after the namespace's first election,
a candidate joins at the step and another (the other kind) JOIN_LATE_MS
after it, while the namespace of the step before (--keep) takes the same
step in steady state (and a joiner). Every namespace must then elect a
new leader within 2 TTLs + one renew interval; nobody may lead at once.
The step is a step of
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

Exit status: 0 pass, 1 fail. With --broken 0 means the checkers caught
the overlap of a deliberate bug, 1 that they did not: LeaderTestTrustExtra
(a trust window that outlives the lease) for promotion and pgbouncer; for
the clock steps LeaderTestNoWatch=1 (a takeover on database time alone),
or, in a build without it, LeaderTestTrustExtra and a SIGSTOP of the
first leader at each step.
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

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "faults"))
import schedule as faultlib  # noqa: E402  (load_checker, now_ns)

now_ns = faultlib.now_ns  # CLOCK_MONOTONIC, as every record
signal_pid = faultlib.signal_pid
proc_state = faultlib.proc_state
is_cmd_life = faultlib.is_cmd_life

TTL_MS = 3000
RENEW_MS = 1000
MARGIN_MS = 500
TERM_DELAY_MS = 300  # cmd-life's exit after SIGTERM
HOLD_MS = TTL_MS + 1500  # SIGSTOP of the leader lasts this long
RESTART_DELAY_S = 1.0  # the run service loop's restart delay
BROKEN_EXTRA_MS = 4 * TTL_MS  # LeaderTestTrustExtra of --broken
FRESH_CLAIM_NS = 50e6  # a claim this recent means "leads now"
STOP_WAIT_S = 10


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr,
          flush=True)


def children_of(ppid):
    """Pids whose parent is ppid."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == ppid:
            out.append(int(name))
    return out


# ---- log lines -------------------------------------------------------------

HOST_LINE = re.compile(r"^\S+: log\((\d+)\): ")
RUN_TAGGED = re.compile(r"^odbc-leader: (error|warning|debug): ")
RUN_NOTICE = re.compile(r"^odbc-leader: (resignation of |run --once|"
                        r"[^ ]+ \(term \d+\) is led by)")


def severity(src, line):
    """'error', 'warning' or None (info and below) for one log line of
    candidate src (hostN: a fault-host, runN: an odbc-leader run)."""
    if src.startswith("host"):
        m = HOST_LINE.match(line)
        if m is None:
            return "error"  # init failed, record file full
        lv = int(m.group(1))
        return "error" if lv <= 3 else "warning" if lv == 4 else None
    m = RUN_TAGGED.match(line)
    if m:
        return None if m.group(1) == "debug" else m.group(1)
    if RUN_NOTICE.match(line) or not line.strip():
        return None
    return "error"  # odbc-leader's own error messages are untagged


class LogSink:
    """Every candidate's stderr, line by line, with the arrival time."""

    def __init__(self, path):
        self.lock = threading.Lock()
        self.events = []  # (ns, src, severity, line)
        self.f = open(path, "a")
        self.threads = []

    def attach(self, src, stream):
        t = threading.Thread(target=self._pump, args=(src, stream),
                             daemon=True)
        t.start()
        self.threads.append(t)

    def _pump(self, src, stream):
        """One event per log message: a line that does not start like a
        message of src (psqlODBC's messages span lines) continues the
        one before."""
        start = "%s: " % src if src.startswith("host") else "odbc-leader: "
        cur = None
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            t = now_ns()
            with self.lock:
                if cur is not None and not line.startswith(start):
                    cur[3] += "\n" + line
                    self.f.write("%.3f %-6s %-7s | %s\n" % (t / 1e9, src, "",
                                                            line))
                else:
                    sev = severity(src, line)
                    cur = [t, src, sev, line]
                    self.events.append(cur)
                    self.f.write("%.3f %-6s %-7s %s\n" % (t / 1e9, src,
                                                          sev or "-", line))
                self.f.flush()
        stream.close()

    def close(self):
        for t in self.threads:
            t.join(2)
        with self.lock:
            self.f.close()

    def count(self, t0, t1, pattern=None, sev=("error", "warning")):
        """Lines in [t0, t1) of the given severities (None: any) matching
        pattern (a compiled regex, or None: every line)."""
        n = 0
        with self.lock:
            for t, _, s, line in self.events:
                if t0 <= t < t1 and (sev is None or s in sev) and \
                        (pattern is None or pattern.search(line)):
                    n += 1
        return n

    def samples(self, t0, t1, k=6):
        """Up to k distinct error/warning messages in [t0, t1), numbers
        blanked, with their counts."""
        seen = {}
        with self.lock:
            for t, _, s, line in self.events:
                if t0 <= t < t1 and s in ("error", "warning"):
                    msg = re.sub(r"^\S+: (log\(\d\): )?", "", line)
                    msg = re.sub(r"\d+", "N", msg.replace("\n", " "))
                    msg = msg[:200]
                    seen[msg] = seen.get(msg, 0) + 1
        return sorted(seen.items(), key=lambda kv: -kv[1])[:k]


# ---- candidates -------------------------------------------------------------

class RunCand:
    """One `odbc-leader run` candidate: its service loop's current run."""

    def __init__(self, ident):
        self.id = ident
        self.proc = None
        self.entry = None
        self.exited_at = 0.0


class Election:
    """fault-host and odbc-leader run candidates of one namespace, their
    logs and their records."""

    def __init__(self, ctx, name, conn, direct, extra_ms=0, timing=None,
                 keys="", env=None, spin_us=0):
        """conn: the candidates' connection string; direct: one that
        reaches the database directly, for operator commands; timing:
        (TTL, renew interval, safety margin) in ms (default TTL_MS,
        RENEW_MS, MARGIN_MS); keys: more Leader* keys for the
        candidates; env: the candidates' environment (None: ours);
        spin_us: fault-host -s (a pause between is_leader() calls while
        leading, so that many elections can share 2 cores)."""
        self.ctx = ctx
        self.name = name
        self.dir = os.path.join(ctx.work, name)
        self.hosts_dir = os.path.join(self.dir, "hosts")
        self.cmds_dir = os.path.join(self.dir, "cmds")
        os.makedirs(self.hosts_dir)
        os.makedirs(self.cmds_dir)
        self.ns = "cluster-%s-%d" % (name, os.getpid())
        self.ttl_ms, self.renew_ms, self.margin_ms = \
            timing or (TTL_MS, RENEW_MS, MARGIN_MS)
        self.conn = "%s;LeaderTTL=%d;LeaderRenewInterval=%d;" \
            "LeaderSafetyMargin=%d" % (conn, self.ttl_ms, self.renew_ms,
                                       self.margin_ms)
        if extra_ms:
            self.conn += ";LeaderTestTrustExtra=%d" % extra_ms
        if keys:
            self.conn += ";" + keys
        self.env = env
        self.spin_us = spin_us
        # SQLite: a fault-host whose init found the file locked (its
        # schema check waited out the busy timeout) is started again
        self.busy_init_restart = False
        self.replaced = set()  # pids of such hosts
        self.notes = []
        self.op_conn = direct + self.conn[len(conn):]
        self.logs = LogSink(os.path.join(self.dir, "log.txt"))
        self.hosts = {}  # pid -> Popen
        self.host_name = {}  # pid -> hostN
        self.nhosts = 0
        self.cands = []  # RunCand
        self.runs = []  # runs.json entries
        self.stopped = set()  # pids under SIGSTOP
        self.lock = threading.Lock()
        self.stopping = False
        self.fatal = None
        self.thread = threading.Thread(target=self._service, daemon=True)
        self.t_start = now_ns()
        self.faults = []  # dicts: name, ref, old, limit_ms, ...

    # -- fault-hosts --

    def spawn_host(self):
        self.nhosts += 1
        name = "host%d" % self.nhosts
        conf = "%s;LeaderNamespace=%s;LeaderId=%s-%s" % (
            self.conn, self.ns, self.name, name)
        spin = ["-s", str(self.spin_us)] if self.spin_us else []
        p = subprocess.Popen([self.ctx.host, "-p", self.ctx.plugin, "-d",
                              self.hosts_dir, "-n", name] + spin + [conf],
                             stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env=self.env)
        self.hosts[p.pid] = p
        self.host_name[p.pid] = name
        self.logs.attach(name, p.stderr)
        return p.pid

    # -- odbc-leader run under a service loop --

    def add_run(self):
        with self.lock:
            c = RunCand("run%d" % (len(self.cands) + 1))
            self.cands.append(c)
            self._spawn(c)
        if self.thread.ident is None:
            self.thread.start()
        return c

    def _spawn(self, c):
        """Starts one run of c (lock held)."""
        cmd = [self.ctx.odbc_leader, "run", "--id", c.id, "-C", self.conn,
               "-n", self.ns, "--", self.ctx.life, self.cmds_dir, "--child",
               "--term-delay", str(TERM_DELAY_MS)]
        start = now_ns()
        c.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, env=self.env)
        self.logs.attach(c.id, c.proc.stderr)
        c.entry = {"id": c.id, "pid": c.proc.pid, "start_ns": start,
                   "exit_ns": None, "rc": None, "died_ns": None}
        self.runs.append(c.entry)

    def _service(self):
        while True:
            with self.lock:
                for c in self.cands:
                    if c.proc is not None and c.proc.poll() is not None:
                        c.entry["exit_ns"] = now_ns()
                        c.entry["rc"] = c.proc.returncode
                        if c.proc.returncode in (64, 78) and not \
                                self.stopping:
                            self.fatal = "%s: odbc-leader run exited %d " \
                                "(usage or configuration; see %s/log.txt)" \
                                % (c.id, c.proc.returncode, self.dir)
                        c.proc = None
                        c.exited_at = time.monotonic()
                    if c.proc is None and not self.stopping and \
                            self.fatal is None and \
                            time.monotonic() - c.exited_at >= \
                            RESTART_DELAY_S:
                        self._spawn(c)
                if self.stopping and all(c.proc is None for c in self.cands):
                    return
            time.sleep(0.01)

    def check_fatal(self):
        if self.fatal:
            raise RuntimeError(self.fatal)
        for pid, p in list(self.hosts.items()):
            if p.poll() is not None and p.returncode != -signal.SIGKILL and \
                    not self.stopping and pid not in self.replaced:
                if self.busy_init_restart and p.returncode == 1 and \
                        self._init_busy(self.host_name[pid]):
                    # a service manager would start it again
                    self.replaced.add(pid)
                    new = self.spawn_host()
                    self.notes.append(
                        "%s: init failed on the locked SQLite file "
                        "(\"database is locked\"); %s started in its "
                        "place" % (self.host_name[pid], self.host_name[new]))
                    continue
                raise RuntimeError("%s exited %s (see %s/log.txt)" % (
                    self.host_name[pid], p.returncode, self.dir))

    def _init_busy(self, name):
        """True when fault-host name's init failed on SQLITE_BUSY (its
        log line may still be on its way: waits up to 1 s)."""
        deadline = time.monotonic() + 1
        while True:
            with self.logs.lock:
                for _, src, _, line in self.logs.events:
                    if src == name and "init failed" in line and \
                            "database is locked" in line:
                        return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)

    # -- what the records say --

    def host_records(self):
        return self.ctx.checker.load_run(self.hosts_dir)[1]

    def lives(self):
        return self.ctx.cmdcheck.load_lives(self.cmds_dir, partial_ok=True)

    def leader(self):
        """What leads now: ("host", pid, term, hostN) or ("run", RunCand,
        term, id), from claims at most FRESH_CLAIM_NS old; None."""
        t = now_ns()
        for r in self.host_records():
            p = self.hosts.get(r["pid"])
            if t - r["last_before"] < FRESH_CLAIM_NS and p is not None and \
                    p.poll() is None and r["pid"] not in self.stopped:
                return ("host", r["pid"], r["term"],
                        self.host_name[r["pid"]])
        for life in self.lives():
            if life["child"] or life["end"] or life["sigterm"] or \
                    t - life["beat"] > FRESH_CLAIM_NS:
                continue
            for c in self.cands:
                if c.id == life["id"]:
                    with self.lock:
                        pid = c.proc.pid if c.proc is not None else None
                    if pid is not None and pid not in self.stopped:
                        return ("run", c, life["term"], c.id)
        return None

    def wait_leader(self, timeout_s):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.check_fatal()
            cur = self.leader()
            if cur is not None:
                return cur
            time.sleep(0.02)
        raise RuntimeError("%s: no leader within %.0f s (see %s/log.txt)" %
                           (self.name, timeout_s, self.dir))

    def tenures(self):
        """{(holder, term): [first claim ns, last claim ns]} of both kinds
        (holder: hostN or the run candidate's id)."""
        out = {}
        for r in self.host_records():
            k = (self.host_name.get(r["pid"], "pid%d" % r["pid"]), r["term"])
            t = out.setdefault(k, [r["first_after"], r["last_before"]])
            t[0] = min(t[0], r["first_after"])
            t[1] = max(t[1], r["last_before"])
        for life in self.lives():
            k = (life["id"], life["term"])
            t = out.setdefault(k, [life["start"], life["last"]])
            t[0] = min(t[0], life["start"])
            t[1] = max(t[1], life["last"])
        return out

    def first_new_tenure(self, ref, old):
        """(ms from ref, holder, term) of the first tenure other than old
        whose first claim is at or after ref; None."""
        best = None
        for k, (first, _) in self.tenures().items():
            if k == old or first < ref:
                continue
            if best is None or first < best[0]:
                best = (first, k[0], k[1])
        if best is None:
            return None
        return (best[0] - ref) / 1e6, best[1], best[2]

    def wait_takeover(self, ref, old, limit_ms):
        """Waits until a new tenure claims after ref, at most limit_ms
        (+1 s); returns first_new_tenure's answer or None."""
        deadline = ref + (limit_ms + 1000) * 1e6
        while now_ns() < deadline:
            self.check_fatal()
            got = self.first_new_tenure(ref, old)
            if got is not None:
                return got
            time.sleep(0.02)
        return None

    # -- steering --

    def resign(self, to=None):
        """`odbc-leader resign [--to ID]` on the direct connection; returns
        its exit status."""
        args = [self.ctx.odbc_leader, "resign", "-C", self.op_conn, "-n",
                self.ns] + (["--to", to] if to else [])
        p = subprocess.run(args, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, timeout=30)
        with self.logs.lock:
            self.logs.f.write("%.3f resign %s: exit %d %s\n" % (
                now_ns() / 1e9, " ".join(args[5:]), p.returncode,
                p.stderr.strip().replace("\n", " | ")))
        return p.returncode

    def steer(self, kind, timeout_s=None):
        """Makes a candidate of kind ("host" or "run") the leader, with
        `odbc-leader resign --to` when another kind leads, so that every
        fault meets both kinds of leader. Returns the leader (another kind
        when that did not work in time: noted, not a failure)."""
        if timeout_s is None:
            timeout_s = 2 * self.ttl_ms / 1000.0
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            lead = self.wait_leader(10)
            if lead[0] == kind:
                return lead
            if kind == "run":
                with self.lock:
                    ids = [c.id for c in self.cands if c.proc is not None and
                           c.proc.pid not in self.stopped]
            else:
                ids = ["%s-%s" % (self.name, self.host_name[pid])
                       for pid, p in self.hosts.items()
                       if p.poll() is None and pid not in self.stopped]
            for ident in ids:
                if self.resign(ident) == 0:
                    break
            t = time.monotonic()
            while time.monotonic() - t < 2 * self.ttl_ms / 1000.0:
                cur = self.leader()
                if cur is not None and cur[0] == kind:
                    time.sleep(self.renew_ms / 1000.0 / 2)
                    return self.wait_leader(10)
                time.sleep(0.02)
        log("%s: could not make a %s the leader" % (self.name, kind))
        return self.wait_leader(10)

    # -- faults --

    def fault(self, name, ref, lead, limit_ms, **extra):
        """Records one fault: its time ref, the tenure leading at it."""
        f = {"name": name, "ref": ref, "limit_ms": limit_ms,
             "old": None if lead is None else (lead[3], lead[2])}
        f.update(extra)
        self.faults.append(f)
        return f

    def kill_leader(self, lead, sig):
        """Sends sig to the leading candidate's process; SIGKILL of a
        fault-host starts a fresh one in its place (the service loop does
        that for a run). Returns the pid and the time."""
        kind, who = lead[0], lead[1]
        with self.lock:
            if kind == "run" and who.proc is None:
                raise RuntimeError("%s: its run ended just now" % who.id)
            pid = who if kind == "host" else who.proc.pid
            os.kill(pid, sig)
            ref = now_ns()
            if kind == "run" and sig == signal.SIGKILL:
                who.entry["died_ns"] = ref
        if sig == signal.SIGSTOP:
            self.stopped.add(pid)
        if kind == "host" and sig == signal.SIGKILL:
            self.hosts[pid].wait()
            self.spawn_host()
        return pid, ref

    def after_fault(self, name, ref, lead, limit_ms, frozen=None, **extra):
        """Records the fault, waits for the next tenure within limit_ms,
        then continues the frozen (SIGSTOPped) leader once HOLD_MS (TTL +
        1.5 s) has passed since ref."""
        self.fault(name, ref, lead, limit_ms, **extra)
        self.wait_takeover(ref, (lead[3], lead[2]), limit_ms)
        if frozen is not None:
            rest = (self.ttl_ms + HOLD_MS - TTL_MS) / 1000.0 - \
                (now_ns() - ref) / 1e9
            if rest > 0:
                time.sleep(rest)
            self.cont(frozen)

    def cont(self, pid):
        if pid in self.stopped:
            self.stopped.discard(pid)
            signal_pid(pid, signal.SIGCONT)

    # -- the end --

    def stop(self):
        """SIGTERM to everyone (SIGKILL after STOP_WAIT_S, recorded as a
        death of a run), the cmd-life processes still alive are listed in
        alive.json and killed; writes runs.json."""
        self.t_stop = now_ns()
        with self.lock:
            self.stopping = True
            for pid in list(self.stopped):
                self.cont(pid)
            for c in self.cands:
                if c.proc is not None:
                    c.proc.send_signal(signal.SIGTERM)
        for p in self.hosts.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        killed = 0
        for p in self.hosts.values():
            try:
                p.wait(STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                killed += 1
        if self.thread.ident is not None:
            self.thread.join(STOP_WAIT_S)
        with self.lock:
            for c in self.cands:
                if c.proc is not None and c.proc.poll() is None:
                    c.proc.kill()
                    c.entry["died_ns"] = now_ns()
                    killed += 1
        if self.thread.ident is not None:
            self.thread.join()
        time.sleep(self.ctx.cmdcheck.ORPHAN_BOUND_MS / 1000.0 + 0.2
                   if killed else 0.2)
        alive = sorted(l["pid"] for l in self.lives()
                       if is_cmd_life(l["pid"]))
        for pid in alive:
            signal_pid(pid, signal.SIGKILL)
        with open(os.path.join(self.cmds_dir, "runs.json"), "w") as f:
            json.dump(self.runs, f, indent=1)
        with open(os.path.join(self.cmds_dir, "alive.json"), "w") as f:
            json.dump(alive, f)
        self.logs.close()
        self.killed_at_stop = killed


# ---- judging ----------------------------------------------------------------

def combined_records(el):
    """fault-host records and CMD lives as checker records, holder names
    as pids (strings), in time order."""
    recs = []
    for r in el.host_records():
        r = dict(r, pid=el.host_name.get(r["pid"], "pid%d" % r["pid"]))
        recs.append(r)
    for l in el.lives():
        recs.append({"pid": l["id"], "term": l["term"],
                     "first_before": l["start"], "first_after": l["start"],
                     "last_before": l["last"], "last_after": l["last"],
                     "n": 1})
    recs.sort(key=lambda r: r["first_after"])
    return recs


def judge(el, broken=False, err=None):
    """Checks one stopped election; returns a dict of figures, with
    'violations' (what makes the test fail, err among them: what stopped
    the scenario, if anything) and 'faults' (per fault: takeover,
    errors)."""
    ctx = el.ctx
    host = ctx.checker.check(el.host_records())
    lives, runs, alive = ctx.cmdcheck.load_run(el.cmds_dir)
    cmd = ctx.cmdcheck.check(lives, runs, alive)
    comb = ctx.checker.check(combined_records(el))
    tenures = el.tenures()
    simultaneous = []
    both, worst = 0, 0.0
    spans = sorted(tenures.items(), key=lambda kv: kv[1][0])
    for i, (ka, a) in enumerate(spans):
        for kb, b in spans[i + 1:]:
            if b[0] >= a[1]:
                break
            both += 1
            worst = max(worst, (min(a[1], b[1]) - b[0]) / 1e6)
            simultaneous.append("%s t%d and %s t%d both led for %.1f ms" % (
                ka[0], ka[1], kb[0], kb[1], (min(a[1], b[1]) - b[0]) / 1e6))
    out = {"election": el.name, "t_start": el.t_start,
           "term_base": min([k[1] for k in tenures] or [1]) - 1,
           "both": both, "both_worst_ms": worst,
           "terms": len({k[1] for k in tenures}), "tenures": len(tenures),
           "host_overlaps": host["overlaps"],
           "host_shared": host["shared_terms"],
           "host_regressions": host["regressions"],
           "cmd_overlaps": cmd["overlaps"], "cmd_orphans": cmd["orphans"],
           "cmd_terms": cmd["term_violations"],
           "comb_overlaps": comb["overlaps"],
           "comb_worst_ms": comb["overlap_worst_ms"],
           "comb_shared": comb["shared_terms"],
           "comb_regressions": comb["regressions"],
           "cmds": cmd["cmds"], "killed_at_stop": el.killed_at_stop,
           "violations": [], "notes": [], "faults": []}
    out["violations"] += ["is_leader: " + v for v in host["violations"]]
    out["violations"] += ["CMD: " + v for v in cmd["violations"]]
    out["violations"] += ["combined: " + v for v in comb["violations"]]
    out["violations"] += ["at once: " + v for v in simultaneous]
    out["caught"] = host["overlaps"] + cmd["overlaps"] + comb["overlaps"] + \
        both + host["shared_terms"] + comb["shared_terms"] + \
        cmd["term_violations"]
    starts = [f["ref"] for f in el.faults] + [el.t_stop]
    out["steady_errors"] = el.logs.count(el.t_start, starts[0])
    out["steady_s"] = (starts[0] - el.t_start) / 1e9
    for i, f in enumerate(el.faults):
        # since: where the next tenure is looked for (a step taken inside
        # the first election's commit lies between its attempt and its
        # first claim, ref)
        since = f.get("since", f["ref"])
        got = el.first_new_tenure(since, f["old"])
        if got is not None:
            got = ((since - f["ref"]) / 1e6 + got[0], got[1], got[2])
        end = starts[i + 1]
        if got is not None and f["ref"] + got[0] * 1e6 >= end:
            got = None  # that one belongs to the next fault
        kept = f["old"] is not None and f["old"] in tenures and \
            tenures[f["old"]][1] > f["ref"] + el.ttl_ms * 1e6
        row = dict(f)
        row["takeover_ms"] = None if got is None else got[0]
        row["next"] = None if got is None else (got[1], got[2])
        row["kept"] = kept and got is None
        row["errors"] = el.logs.count(f["ref"], end, sev=("error",))
        row["warnings"] = el.logs.count(f["ref"], end, sev=("warning",))
        row["samples"] = el.logs.samples(f["ref"], end)
        if got is None and not row["kept"]:
            out["violations"].append("%s: no new leader after the fault" %
                                     f["name"])
        elif got is not None and got[0] > f["limit_ms"]:
            out["violations"].append(
                "%s: next leader %.0f ms after the fault (limit %d ms)" % (
                    f["name"], got[0], f["limit_ms"]))
        out["faults"].append(row)
    if broken:
        # only the checkers' verdict matters: a deliberately broken
        # protocol must be caught
        out["violations"] = [] if out["caught"] else [
            "the broken protocol (LeaderTestTrustExtra) was not caught"]
    if err:
        out["violations"].append(err)
    return out


def fmt_ms(v):
    return "-" if v is None else "%.0f" % v


def tables(results, title):
    """The figures as two Markdown tables: per fault, per election."""
    lines = ["### %s: faults" % title, "",
             "Terms t1, t2, ... count from each election's first term; "
             "takeover: fault to the next tenure's first claim.", "",
             "| election | fault | at s | leader at the fault | next leader "
             "| takeover ms | errors | warnings | notes |",
             "|---|---|---:|---|---|---:|---:|---:|---|"]
    for r in results:
        el_start = r["t_start"]
        base = r["term_base"]
        for f in r["faults"]:
            old = "-" if f["old"] is None else "%s t%d" % (
                f["old"][0], f["old"][1] - base)
            nxt = "kept" if f["kept"] else "-" if f["next"] is None else \
                "%s t%d" % (f["next"][0], f["next"][1] - base)
            lines.append("| %s | %s | %.1f | %s | %s | %s | %d | %d | %s |" % (
                r["election"], f["name"], (f["ref"] - el_start) / 1e9, old,
                nxt, "kept" if f["kept"] else fmt_ms(f["takeover_ms"]),
                f["errors"], f["warnings"], f.get("note", "")))
    lines += ["", "### %s: safety" % title, "",
              "| election | terms | tenures | CMDs | steady err+warn (s) | "
              "is_leader overlaps | CMD overlaps | combined overlaps "
              "(worst ms) | led at once (worst ms) | shared terms "
              "(combined) | regressions (combined) | orphans | verdict |",
              "|---|---:|---:|---:|---|---:|---:|---|---|---:|---:|---:|---|"]
    for r in results:
        lines.append("| %s | %d | %d | %d | %d (%.0f s) | %d | %d | %d (%.0f) "
                     "| %d (%.0f) | %d | %d | %d | %s |" % (
                         r["election"], r["terms"], r["tenures"], r["cmds"],
                         r["steady_errors"], r["steady_s"],
                         r["host_overlaps"], r["cmd_overlaps"],
                         r["comb_overlaps"], r["comb_worst_ms"],
                         r["both"], r["both_worst_ms"],
                         r["comb_shared"], r["comb_regressions"],
                         r["cmd_orphans"],
                         "ok" if not r["violations"] else "FAIL"))
    return "\n".join(lines)


def report(results, title, table_path):
    """Prints the tables (and writes them to table_path), the error
    samples and the violations; returns the exit status."""
    text = tables(results, title)
    print(text)
    if table_path:
        with open(table_path, "w") as f:
            f.write(text + "\n")
    failed = False
    for r in results:
        for f in r["faults"]:
            for msg, n in f["samples"]:
                print("  %s/%s: %dx %s" % (r["election"], f["name"], n, msg))
        for n in r["notes"]:
            print("  %s: note: %s" % (r["election"], n))
        for v in r["violations"]:
            print("FAIL %s: %s" % (r["election"], v))
            failed = True
    return 1 if failed else 0


# ---- servers ----------------------------------------------------------------

def lib_call(ctx, cmd):
    """Runs a shell command with lib.sh and lib-cluster.sh sourced (they
    only need the exported OL_* and CL_* variables). Returns stdout."""
    p = subprocess.run(["bash", "-c", '. "$1"; . "$2"; ' + cmd, "lib",
                        ctx.lib, ctx.cluster_lib], stdout=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError("%s exited %d" % (cmd, p.returncode))
    return p.stdout.strip()


def kill_postmaster(datadir):
    """kill -9 of a PostgreSQL server: the postmaster and every process
    under it at once, as when its host dies. Returns the time."""
    with open(os.path.join(datadir, "postmaster.pid")) as f:
        pm = int(f.readline())
    victims = [pm] + children_of(pm)
    for pid in victims:
        signal_pid(pid, signal.SIGKILL)
    ref = now_ns()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and \
            any(proc_state(p) not in (None, "Z") for p in victims):
        time.sleep(0.01)
    return ref


class Proxy:
    """One fault-proxy: 127.0.0.1:listen -> 127.0.0.1:target."""

    def __init__(self, ctx, target, listen=0, log=None):
        self.p = subprocess.Popen([ctx.proxy, "-t", str(target), "-l",
                                   str(listen)], stdout=subprocess.PIPE,
                                  stderr=log)
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("fault-proxy -l %d did not start" % listen)
        self.port = int(line)
        self.target = target

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        self.p.wait()


def pg_conn(port):
    """The psqlODBC connection string of lib.sh's server, on port."""
    c = os.environ["OL_PG_CONNECT"]
    return re.sub(r"Port=\d+", "Port=%d" % port, c)


# ---- scenarios --------------------------------------------------------------

def start_election(ctx, name, conn, direct, hosts, runs, extra_ms):
    el = Election(ctx, name, conn, direct, extra_ms)
    for _ in range(hosts):
        el.spawn_host()
    for _ in range(runs):
        el.add_run()
    return el


def scenario_promotion(ctx):
    """Primary + lagging streaming standby behind one proxy address; kill
    -9 of the primary, the proxy retargeted at the standby, promotion."""
    extra = BROKEN_EXTRA_MS if ctx.broken else 0
    primary = int(os.environ["OL_PG_PORT"])
    standby = int(os.environ["CL_SB_PORT"])
    repl_proxy = int(os.environ["CL_REPL_PROXY_PID"])
    plog = open(os.path.join(ctx.work, "proxy.log"), "ab")
    proxy = Proxy(ctx, primary, 0, plog)
    addr = proxy.port
    log("candidates reach the database only through 127.0.0.1:%d "
        "(fault-proxy to the primary, port %d)" % (addr, primary))
    el = start_election(ctx, "promotion", pg_conn(addr), pg_conn(primary),
                        ctx.hosts,
                        ctx.runs, extra)
    ref = t_retarget = t_promote = None
    err = None
    el2 = lead2 = None
    try:
        el.wait_leader(20)
        time.sleep(ctx.steady)
        lead = el.wait_leader(10)
        if ctx.lag == "stall":
            # the replication link stops: the standby receives nothing
            # from here on, while the primary goes on (async replication)
            signal_pid(repl_proxy, signal.SIGUSR1)
            t_stall = now_ns()
            log("replication stalled; leader %s term %d" % (lead[3],
                                                            lead[2]))
            if ctx.handover:
                # a handover the standby never sees: the term goes up on
                # the primary only, to a run (CMD supervision across the
                # failover)
                time.sleep(0.5)
                lead = el.wait_leader(10)
                target = [c.id for c in el.cands
                          if lead[0] != "run" or c.id != lead[3]][0]
                rc = el.resign(target)
                if rc != 0:
                    rc = el.resign()
                t = now_ns()
                el.fault("resign-on-primary", t, lead, 2 * TTL_MS,
                         note="resign --to %s exited %d; not replicated" %
                         (target, rc))
                el.wait_takeover(t, (lead[3], lead[2]), 2 * TTL_MS)
            if ctx.first_row and not ctx.broken:
                # a namespace whose first row exists only on the primary:
                # the promoted standby has no row for it at all
                el2 = start_election(ctx, "promotion-first-row",
                                     pg_conn(addr), pg_conn(primary), 2, 1,
                                     extra)
                lead2 = el2.wait_leader(20)
                log("namespace %s started after the stall (leader %s term "
                    "%d): its row is on the primary only" % (
                        el2.ns, lead2[3], lead2[2]))
            rest = ctx.lag_s - (now_ns() - t_stall) / 1e9
            if rest > 0:
                time.sleep(rest)
        lead = el.wait_leader(10)
        if el2 is not None:
            lead2 = el2.wait_leader(10)
        frozen = None
        if ctx.broken:
            # the old leader sleeps through the failover: with the broken
            # trust window it goes on claiming when it wakes up
            frozen, _ = el.kill_leader(lead, signal.SIGSTOP)
        ref = kill_postmaster(os.environ["OL_PG_DATA"])
        signal_pid(repl_proxy, signal.SIGTERM)  # its host is gone too
        proxy.stop()
        proxy = Proxy(ctx, standby, addr, plog)  # same address, the standby
        t_retarget = now_ns()
        log("primary killed, the proxy now points at the standby (leader "
            "was %s term %d)" % (lead[3], lead[2]))
        time.sleep(ctx.readonly_s)
        lib_call(ctx, "cl_promote")
        t_promote = now_ns()
        log("standby promoted %.0f ms after the kill" % (
            (t_promote - ref) / 1e6))
        limit = (t_promote - ref) / 1e6 + 3 * TTL_MS
        el.after_fault("kill-primary", ref, lead, limit, frozen,
                       note="promoted %.0f ms after the kill" % (
                           (t_promote - ref) / 1e6))
        if el2 is not None:
            el2.after_fault("kill-primary", ref, lead2, limit,
                            note="first row lost with the primary")
        time.sleep(3 * TTL_MS / 1000.0)
        el.wait_leader(2 * TTL_MS / 1000.0 + 5)
    except RuntimeError as e:
        err = str(e)
    finally:
        el.stop()
        if el2 is not None:
            el2.stop()
        proxy.stop()
        plog.close()
    results = []
    if el2 is not None:
        results.append(judge(el2, err=err))
    r = judge(el, ctx.broken, err)
    if t_promote is not None:
        # what the promotion must look like
        tenures = el.tenures()
        before = max([k[1] for k, v in tenures.items() if v[0] < ref] or
                     [0])
        after = sorted(k for k, v in tenures.items() if v[0] >= ref)
        low = [k for k in after if k[1] <= before]
        n_ro = el.logs.count(t_retarget, t_promote,
                             re.compile(r"read.only", re.I), sev=None)
        row = r["faults"][-1]
        base = r["term_base"]
        row["note"] += "; %d read-only messages before it; terms after: " \
            "%s (highest before: t%d)" % (
                n_ro, ", ".join("t%d" % (k[1] - base) for k in after) or "-",
                before - base)
        if row["takeover_ms"] is not None:
            row["note"] += "; takeover %.0f ms after the promotion" % (
                row["takeover_ms"] - (t_promote - ref) / 1e6)
        if not ctx.broken:
            if low:
                r["violations"].append(
                    "terms after the promotion must exceed every earlier "
                    "term (%d): %s" % (before, ", ".join(
                        "%s t%d" % k for k in low)))
            if ctx.readonly_s >= 0.5 and n_ro == 0:
                r["violations"].append(
                    "no \"read-only\" log line while the proxy pointed at "
                    "the standby in recovery")
    return report([r] + results, "promotion", ctx.table)


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
        import sqlite3
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
        import sqlite3
        db = sqlite3.connect(ctx.sqlite_file, timeout=10)
        try:
            row = db.execute("SELECT expires_at_ms FROM odbc_leader_lease "
                             "WHERE namespace = ?", (el.ns,)).fetchone()
        finally:
            db.close()
        return None if row is None else row[0] - int(time.time() * 1000)
    out = lib_call(ctx, "ol_psql %s" % faultlib.sh_quote(
        "SELECT expires_at_ms - CAST(%d AS BIGINT) FROM odbc_leader_lease "
        "WHERE namespace = '%s'" % (int(time.time() * 1000), el.ns)))
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
    fresh.busy_init_restart = bool(ctx.sqlite_file)
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
    went on claiming until about that renewal (its trust window runs on
    CLOCK_BOOTTIME, which a wall clock step must not move), else a
    finding."""
    if f["ref"] > f["first_ns"] + 0.5 * renew_ms * 1e6:
        return None  # stepped too late to tell
    span = el.tenures().get(f["old"])
    if span is None:
        return None
    lasted = (span[1] - f["first_ns"]) / 1e6
    f["note"] += "; first tenure claimed for %.0f ms" % lasted
    if lasted < 0.8 * renew_ms:
        return "%s: the first tenure stopped claiming %.0f ms after its " \
            "first claim, before its first renewal was due (%d ms): did " \
            "the step move CLOCK_BOOTTIME?" % (el.name, lasted, renew_ms)
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
        if env_checks and not ctx.broken:
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
    refused = key_refusal(ctx, conn, "LeaderTestNoWatch", "1")
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
    lib_call(ctx, "%s schema --upgrade -C %s >/dev/null" % (
        faultlib.sh_quote(ctx.odbc_leader), faultlib.sh_quote(conn)))
    if ctx.broken:
        broken_opts(ctx, conn, opts)
    if ctx.clock == "sql" and ctx.step_at == "commit":
        lib_call(ctx, "cl_sql_clock_on_win")
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


def key_refusal(ctx, conn, key, value):
    """None when this build takes key=value, else its message (a quick
    `odbc-leader status` with the key)."""
    p = subprocess.run([ctx.odbc_leader, "status", "-C",
                        "%s;%s=%s" % (conn, key, value), "-n", "probe"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    for line in p.stderr.splitlines():
        if key in line and p.returncode in (64, 78) or \
                "unknown key" in line:
            return line.strip()
    return None


def pooler_refusal(ctx, conn, value):
    """None when this build takes LeaderPooler=value, else its message (a
    quick `odbc-leader status` with the key, on a direct connection)."""
    p = subprocess.run([ctx.odbc_leader, "status", "-C",
                        "%s;LeaderPooler=%s" % (conn, value), "-n",
                        "probe"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    for line in p.stderr.splitlines():
        if "LeaderPooler" in line and p.returncode in (64, 78) or \
                "unknown key" in line:
            return line.strip()
    return None


def pgb_fault(ctx, el, fault):
    """One fault on the election behind pgbouncer. The kills and stops
    meet a run and a fault-host leader in turn."""
    if fault in ("kill-9", "sigstop"):
        ctx.turn += 1
        el.steer("run" if ctx.turn % 2 else "host")
    lead = el.wait_leader(20)
    time.sleep(RENEW_MS / 1000.0 / 2)
    lead = el.wait_leader(20)
    if fault == "kill-9":
        _, ref = el.kill_leader(lead, signal.SIGKILL)
        el.after_fault(fault, ref, lead, 2 * TTL_MS, note=lead[0])
        time.sleep(TTL_MS / 1000.0)
    elif fault == "sigstop":
        pid, ref = el.kill_leader(lead, signal.SIGSTOP)
        el.after_fault(fault, ref, lead, 2 * TTL_MS, pid, note=lead[0])
        time.sleep(2 * RENEW_MS / 1000.0 + 1)  # the resumed one acts now
    elif fault == "pg-restart":
        t0 = now_ns()
        lib_call(ctx, "ol_restart_pg fast")
        ref = now_ns()
        el.fault(fault, t0, lead, 3 * TTL_MS,
                 note="restart took %.0f ms" % ((ref - t0) / 1e6))
        time.sleep(3 * TTL_MS / 1000.0)
    else:
        raise ValueError(fault)


# the refusals first (quick), then the elections
PGB_VARIANTS = ("transaction:none,transaction:session,"
                "transaction:transaction,session:session,transaction:-,"
                "transaction:-+nocheck,session:-")
POOLER_SWITCH = re.compile(r"running as with LeaderPooler=transaction")


def pgb_refusal(ctx, name, conn, direct):
    """A transaction pooler with LeaderPooler=none or session: `odbc-leader
    run` and the plugin (fault-host) must stop at init, exit 78 and 1, with
    a message naming LeaderPooler=transaction, and leave no row behind.
    Returns the violations."""
    out = []
    ns = name
    conf = "%s;LeaderNamespace=%s" % (conn, ns)
    tries = [("odbc-leader run", [ctx.odbc_leader, "run", "-C", conn, "-n",
                                  ns, "--", "sleep", "60"], 78),
             ("fault-host", [ctx.host, "-p", ctx.plugin, "-d", ctx.work,
                             "-n", "refused", conf], 1)]
    for what, cmd, want in tries:
        try:
            p = subprocess.run(cmd, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, timeout=30)
        except subprocess.TimeoutExpired:
            out.append("%s: still running after 30 s (no refusal)" % what)
            continue
        said = [ln for ln in p.stderr.splitlines()
                if "set LeaderPooler=transaction" in ln]
        log("%s: %s exit %d: %s" % (name, what, p.returncode,
                                    said[0] if said else
                                    p.stderr.strip()[-300:]))
        if p.returncode != want:
            out.append("%s: exit %d, not %d" % (what, p.returncode, want))
        if not said:
            out.append("%s: no message naming LeaderPooler=transaction "
                       "(stderr: %s)" % (what, p.stderr.strip()[-300:]))
    st = subprocess.run([ctx.odbc_leader, "status", "--json", "-C", direct,
                         "-n", ns], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True, timeout=60)
    try:
        j = json.loads(st.stdout)
    except ValueError:
        j = None
    if j is None or j.get("term") not in (None, 0) or j.get("candidates"):
        out.append("rows left behind in namespace %s: %s" % (
            ns, st.stdout.strip()[:300] or st.stderr.strip()[:300]))
    return out


def pgb_auto(el, r, switch, nocheck):
    """An election without LeaderPooler (auto): through a transaction
    pooler (switch) every candidate must say that it found one and runs as
    with LeaderPooler=transaction, found at connect or from a statement
    that failed with 26000 (only the latter with nocheck; the check at
    connect can miss while other clients take the pooler's sessions), and
    those lines are not counted as errors; through a session pooler none
    may say so."""
    srcs = set()
    with el.logs.lock:
        for _, src, _, _ in el.logs.events:
            srcs.add(src)
    said = {s: [] for s in srcs}
    with el.logs.lock:
        for _, src, _, line in el.logs.events:
            if POOLER_SWITCH.search(line):
                said[src].append(line)
    if not switch:
        for src in sorted(srcs):
            if said[src]:
                r["violations"].append("%s found a transaction pooler "
                                       "behind a session pooler: %s" % (
                                           src, said[src][0][:200]))
        return
    for src in sorted(srcs):
        if not said[src]:
            r["violations"].append("%s never said it runs as with "
                                   "LeaderPooler=transaction" % src)
        elif nocheck and not any("was not there" in ln for ln in said[src]):
            r["violations"].append("%s switched, but not on SQLSTATE "
                                   "26000: %s" % (src, said[src][0][:200]))
    lines = [ln for s in srcs for ln in said[s]]
    late = sum(1 for ln in lines if "was not there" in ln)
    r["notes"].append("%d of %d candidates switched to transaction pooling "
                      "by themselves: %d times at connect, %d times on a "
                      "statement that failed with 26000" % (
                          sum(1 for s in srcs if said[s]), len(srcs),
                          len(lines) - late, late))


LOST_RENEWAL = re.compile(r"renewing term \d+ failed \(connection to the "
                          r"database lost\)|deleting old (fires|terms of the "
                          r"election log) failed: connection to the "
                          r"database lost")


def pgb_excused(el, t0, t1):
    """Error/warning lines in [t0, t1) that an auto election through a
    transaction pooler may log: the warning that it switches (at connect,
    or instead of the statement that failed with 26000; any other line
    with 26000 counts) and, for each switch, one renewal (or the leader's
    retention of the fire ledger or of the election log, whichever
    statement met the 26000) that failed with it (the handle connects
    again before its next statement, as after a lost connection)."""
    n = el.logs.count(t0, t1, POOLER_SWITCH)
    return n + min(n, el.logs.count(t0, t1, LOST_RENEWAL))


def scenario_pgbouncer(ctx):
    """Elections through pgbouncer (transaction and session pooling), with
    kill -9 and SIGSTOP of the leader and a restart of PostgreSQL; without
    LeaderPooler (auto), and the refusals of none and session."""
    extra = BROKEN_EXTRA_MS if ctx.broken else 0
    results = []
    refusals = []
    ctx.turn = 0
    probe_conn = pg_conn(int(os.environ["OL_PG_PORT"]))
    no_check = key_refusal(ctx, probe_conn, "LeaderTestNoPoolerCheck", "1")
    for variant in ctx.variants.split(","):
        mode, key = variant.split(":")
        nocheck = key.endswith("+nocheck")
        key = key.replace("+nocheck", "")
        port = int(os.environ["CL_PGB_PORT_%s" % mode])
        conn = pg_conn(port)
        refused = None
        if ctx.no_pooler_key:
            refused = "--no-pooler-key"
        elif key != "-":
            refused = pooler_refusal(ctx, probe_conn, key)
        if refused is None and key != "-":
            conn += ";LeaderPooler=%s" % key
        if nocheck:
            if no_check is not None:
                log("%s: skipped (%s)" % (variant, no_check))
                continue
            conn += ";LeaderTestNoPoolerCheck=1"
        name = "pgb-%s-%s%s" % (mode, "default" if key == "-" else key,
                                "-nocheck" if nocheck else "")
        if mode == "transaction" and key in ("none", "session") and \
                refused is None:
            v = pgb_refusal(ctx, name, conn, probe_conn)
            refusals += ["%s: %s" % (name, x) for x in v]
            log("%s: %s" % (name, "refused at init" if not v else
                            "%d violations" % len(v)))
            continue
        auto = key in ("-", "auto") and refused is None
        log("%s: pool_mode=%s on port %d, LeaderPooler=%s" % (
            name, mode, port, "(not given: auto)" if key == "-" else
            key if refused is None else "(not given: %s)" % refused))
        el = start_election(ctx, name, conn, probe_conn, ctx.hosts,
                            ctx.runs, extra)
        err = None
        try:
            el.wait_leader(20)
            time.sleep(ctx.steady)
            for fault in ctx.faults.split(","):
                pgb_fault(ctx, el, fault)
        except RuntimeError as e:
            err = str(e)
        finally:
            el.stop()
        r = judge(el, ctx.broken, err)
        if refused is not None and not ctx.broken:
            r["violations"].append("LeaderPooler=%s refused (%s): ran "
                                   "without the key" % (key, refused))
        switch = auto and mode == "transaction"
        if auto:
            pgb_auto(el, r, switch, nocheck)
        if not ctx.broken:
            # a PostgreSQL restart ends every candidate's session: each
            # may log the lost statement and its first failed reconnect
            limit = ctx.max_errors * (ctx.hosts + ctx.runs)
            starts = [f["ref"] for f in r["faults"]] + [el.t_stop]
            for i, f in enumerate(r["faults"]):
                n = f["errors"] + f["warnings"]
                if switch:
                    n -= pgb_excused(el, f["ref"], starts[i + 1])
                if n > limit:
                    r["violations"].append(
                        "%s: %d error/warning lines (at most %d: %d per "
                        "candidate)" % (f["name"], n, limit,
                                        ctx.max_errors))
            steady = r["steady_errors"]
            if switch:
                steady -= pgb_excused(el, el.t_start, starts[0])
            if steady > 0:
                r["violations"].append("%d error/warning lines before the "
                                       "first fault" % steady)
        results.append(r)
        log("%s: %d overlaps (combined), %s" % (
            name, r["comb_overlaps"], "ok" if not r["violations"] else
            "%d violations" % len(r["violations"])))
    rc = report(results, "pgbouncer", ctx.table) if results else 0
    for v in refusals:
        print("FAIL %s" % v)
    return 1 if refusals else rc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=("promotion", "clockstep",
                                         "sqlitestep", "pgbouncer"))
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cluster-lib", required=True)
    ap.add_argument("--checker", required=True)
    ap.add_argument("--cmdcheck", required=True)
    ap.add_argument("--host", required=True)
    ap.add_argument("--proxy", required=True)
    ap.add_argument("--life", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--odbc-leader", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--table", default=None)
    ap.add_argument("--broken", action="store_true")
    ap.add_argument("--hosts", type=int, default=None,
                    help="fault-hosts per election (clock steps: per "
                    "fresh namespace, default 4; else 3)")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--steady", type=float, default=4.0,
                    help="seconds of normal running before the first fault")
    # promotion
    ap.add_argument("--lag", choices=("stall", "apply"), default="stall")
    ap.add_argument("--lag-s", type=float, default=4.0)
    ap.add_argument("--no-handover", dest="handover", action="store_false")
    ap.add_argument("--readonly-s", type=float, default=0.5)
    ap.add_argument("--no-first-row", dest="first_row",
                    action="store_false")
    # clockstep, sqlitestep
    ap.add_argument("--phases", default=None,
                    help="TTL/RENEW/MARGIN/STEP_SxSTEPS,... (clockstep: "
                    "%s; sqlitestep: %s)" % (PHASES_PG, PHASES_SQLITE))
    ap.add_argument("--start", choices=("held", "free", "alternate"),
                    default=None,
                    help="how a fresh namespace's candidates start: held "
                    "back until all have read the namespace, or free; "
                    "alternate: held in the 1st, 3rd, ... step of a phase "
                    "(clockstep: alternate; sqlitestep: held)")
    ap.add_argument("--keep", type=int, default=1,
                    help="older namespaces kept running through a step")
    ap.add_argument("--clock", choices=("faketime", "sql"), default="sql")
    ap.add_argument("--step-at", choices=("commit", "claim"),
                    default="commit",
                    help="--clock sql: step inside the first election's "
                    "transaction (commit) or when its first claim is seen")
    ap.add_argument("--broken-trust", action="store_true",
                    help="--broken with LeaderTestTrustExtra and SIGSTOP "
                    "even when LeaderTestNoWatch is there")
    ap.add_argument("--sqlite-file", default=None)
    ap.add_argument("--faketime-lib", default=None)
    # pgbouncer
    ap.add_argument("--variants", default=None,
                    help="POOL_MODE:LEADERPOOLER,... (LEADERPOOLER '-': "
                    "not given; a '+nocheck' suffix adds "
                    "LeaderTestNoPoolerCheck=1; default: %s; with --broken "
                    "session:session)" % PGB_VARIANTS)
    ap.add_argument("--faults", default=None,
                    help="kill-9,sigstop,pg-restart (with --broken: "
                    "sigstop)")
    ap.add_argument("--max-errors", type=int, default=3,
                    help="error/warning lines per candidate and fault")
    ap.add_argument("--no-pooler-key", action="store_true")
    ctx = ap.parse_args()
    if ctx.hosts is None:
        ctx.hosts = 4 if ctx.scenario in ("clockstep", "sqlitestep") else 3
    if ctx.start is None:
        ctx.start = "held" if ctx.scenario == "sqlitestep" else "alternate"
    if ctx.phases is None:
        ctx.phases = PHASES_SQLITE if ctx.scenario == "sqlitestep" else \
            PHASES_PG
    if ctx.scenario == "sqlitestep" and not (ctx.sqlite_file and
                                             ctx.faketime_lib):
        ap.error("sqlitestep needs --sqlite-file and --faketime-lib")
    if ctx.variants is None:
        ctx.variants = "session:session" if ctx.broken else PGB_VARIANTS
    if ctx.faults is None:
        ctx.faults = "sigstop" if ctx.broken else "kill-9,sigstop,pg-restart"
    ctx.checker = faultlib.load_checker(ctx.checker, "checker")
    ctx.cmdcheck = faultlib.load_checker(ctx.cmdcheck, "cmdcheck")
    os.makedirs(ctx.work, exist_ok=True)
    t0 = time.monotonic()
    try:
        rc = {"promotion": scenario_promotion,
              "clockstep": scenario_clockstep,
              "sqlitestep": scenario_sqlitestep,
              "pgbouncer": scenario_pgbouncer}[ctx.scenario](ctx)
    except RuntimeError as e:
        print("FAIL %s: %s" % (ctx.scenario, e))
        rc = 1
    log("%s%s: %s in %.0f s" % (ctx.scenario, " (broken)" if ctx.broken
                                else "", "pass" if rc == 0 else "FAIL",
                                time.monotonic() - t0))
    return rc


if __name__ == "__main__":
    sys.exit(main())
