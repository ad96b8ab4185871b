#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""cluster.py: the driver of the database-topology tests (tests/cluster).

    cluster.py promotion|clockstep|pgbouncer [OPTIONS] --lib ... --work DIR

promotion.test, clockstep.test and pgbouncer.test start their servers with
tests/integration/lib.sh and tests/cluster/lib-cluster.sh, then run one
scenario here. A scenario runs elections (one namespace each) of two kinds
of candidates on the same namespace:

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

Exit status: 0 pass, 1 fail. With --broken (LeaderTestTrustExtra: a trust
window that outlives the lease, a deliberate bug) 0 means the checkers
caught the overlap it causes, 1 that they did not.
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

    def __init__(self, ctx, name, conn, direct, extra_ms=0):
        """conn: the candidates' connection string; direct: one that
        reaches the database directly, for operator commands."""
        self.ctx = ctx
        self.name = name
        self.dir = os.path.join(ctx.work, name)
        self.hosts_dir = os.path.join(self.dir, "hosts")
        self.cmds_dir = os.path.join(self.dir, "cmds")
        os.makedirs(self.hosts_dir)
        os.makedirs(self.cmds_dir)
        self.ns = "cluster-%s-%d" % (name, os.getpid())
        self.conn = "%s;LeaderTTL=%d;LeaderRenewInterval=%d;" \
            "LeaderSafetyMargin=%d" % (conn, TTL_MS, RENEW_MS, MARGIN_MS)
        if extra_ms:
            self.conn += ";LeaderTestTrustExtra=%d" % extra_ms
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
        p = subprocess.Popen([self.ctx.host, "-p", self.ctx.plugin, "-d",
                              self.hosts_dir, "-n", name, conf],
                             stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
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
                                  stderr=subprocess.PIPE)
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
        for pid, p in self.hosts.items():
            if p.poll() is not None and p.returncode != -signal.SIGKILL and \
                    not self.stopping:
                raise RuntimeError("%s exited %s (see %s/log.txt)" % (
                    self.host_name[pid], p.returncode, self.dir))

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

    def steer(self, kind, timeout_s=2 * TTL_MS / 1000.0):
        """Makes a candidate of kind ("host" or "run") the leader, with
        `odbc-leader resign --to` when another kind leads, so that every
        fault meets both kinds of leader. Returns the leader (another kind
        when that did not work in time: noted, not a failure)."""
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
            while time.monotonic() - t < 2 * TTL_MS / 1000.0:
                cur = self.leader()
                if cur is not None and cur[0] == kind:
                    time.sleep(RENEW_MS / 1000.0 / 2)
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
        then continues the frozen (SIGSTOPped) leader once HOLD_MS has
        passed since ref."""
        self.fault(name, ref, lead, limit_ms, **extra)
        self.wait_takeover(ref, (lead[3], lead[2]), limit_ms)
        if frozen is not None:
            rest = HOLD_MS / 1000.0 - (now_ns() - ref) / 1e9
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
        got = el.first_new_tenure(f["ref"], f["old"])
        end = starts[i + 1]
        if got is not None and f["ref"] + got[0] * 1e6 >= end:
            got = None  # that one belongs to the next fault
        kept = f["old"] is not None and f["old"] in tenures and \
            tenures[f["old"]][1] > f["ref"] + TTL_MS * 1e6
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


def write_clock(path, offset_s):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("+%d\n" % offset_s)
    os.chmod(tmp, 0o644)
    os.rename(tmp, path)


def lease_clock(ctx, el):
    """How far the lease's expiry (written by the library in database
    time) is ahead of this host's clock, in ms; None when there is no lease
    row."""
    out = lib_call(ctx, "ol_psql %s" % faultlib.sh_quote(
        "SELECT expires_at_ms - CAST(%d AS BIGINT) FROM odbc_leader_lease "
        "WHERE namespace = '%s'" % (int(time.time() * 1000), el.ns)))
    return int(out) if out else None


def scenario_clockstep(ctx):
    """The server's wall clock steps forward by more than a TTL while
    candidates run; fresh candidates start right after each step."""
    extra = BROKEN_EXTRA_MS if ctx.broken else 0
    el = start_election(ctx, "clockstep", os.environ["OL_PG_CONNECT"],
                        os.environ["OL_PG_CONNECT"],
                        ctx.hosts, ctx.runs, extra)
    offset = 0
    step_re = re.compile(r"clock step|stepped", re.I)
    err = None
    try:
        el.wait_leader(20)
        time.sleep(ctx.steady)
        for i in range(ctx.steps):
            # a fault-host leads at the first step, a run at the second
            el.steer("host" if i % 2 == 0 else "run", 2 * TTL_MS / 1000.0)
            time.sleep(RENEW_MS / 1000.0 / 2)  # mid-way between renewals
            lead = el.wait_leader(15)
            offset += ctx.step_s
            if ctx.clock == "faketime":
                write_clock(os.environ["CL_FAKETIME_FILE"], offset)
            else:
                lib_call(ctx, "cl_sql_clock_step %d" % (offset * 1000))
            ref = now_ns()
            frozen = None
            if ctx.broken:
                # the old leader sleeps through the step: with the broken
                # trust window it goes on claiming when it wakes up
                frozen, _ = el.kill_leader(lead, signal.SIGSTOP)
            # the hard case: candidates with no history of this server
            el.spawn_host()
            el.add_run()
            seen = lib_call(ctx, "cl_pg_clock_offset")
            log("server clock stepped +%d s (offset now %s ms); leader was "
                "%s term %d" % (ctx.step_s, seen, lead[3], lead[2]))
            # under libfaketime the server's timers run a step late for a
            # while (README.md), which the limit allows for
            limit = 3 * TTL_MS + (ctx.step_s * 1000
                                  if ctx.clock == "faketime" else 0)
            el.after_fault("step+%ds" % ctx.step_s, ref, lead, limit, frozen,
                           note="server offset %.1f s" % (int(seen) / 1000.0))
            time.sleep(2 * TTL_MS / 1000.0)
            el.wait_leader(10)
            # the lease, renewed since, must be in the stepped clock
            ahead = lease_clock(ctx, el)
            el.faults[-1]["note"] += "; lease expiry %s s ahead of this " \
                "host's clock" % ("-" if ahead is None else
                                  "%.1f" % (ahead / 1000.0))
            if ahead is None or ahead < (offset - 1) * 1000:
                raise RuntimeError(
                    "the step did not reach the library's clock: the lease "
                    "expires %s ms ahead of this host's clock, offset %d s" %
                    (ahead, offset))
    except RuntimeError as e:
        err = str(e)
    finally:
        el.stop()
    r = judge(el, ctx.broken, err)
    ends = [f["ref"] for f in el.faults[1:]] + [el.t_stop]
    for f, end in zip(r["faults"], ends):
        n = el.logs.count(f["ref"], end, step_re, sev=None)
        f["note"] += "; %d clock-step lines" % n
        if n == 0 and not ctx.broken:
            r["violations"].append("%s: no log line says the clock stepped"
                                   % f["name"])
    return report([r], "clockstep", ctx.table)


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


def scenario_pgbouncer(ctx):
    """Elections through pgbouncer (transaction and session pooling), with
    kill -9 and SIGSTOP of the leader and a restart of PostgreSQL."""
    extra = BROKEN_EXTRA_MS if ctx.broken else 0
    results = []
    ctx.turn = 0
    probe_conn = pg_conn(int(os.environ["OL_PG_PORT"]))
    for variant in ctx.variants.split(","):
        mode, key = variant.split(":")
        port = int(os.environ["CL_PGB_PORT_%s" % mode])
        conn = pg_conn(port)
        refused = "--no-pooler-key" if ctx.no_pooler_key else \
            pooler_refusal(ctx, probe_conn, key)
        if refused is None:
            conn += ";LeaderPooler=%s" % key
        name = "pgb-%s-%s" % (mode, key)
        log("%s: pool_mode=%s on port %d, LeaderPooler=%s" % (
            name, mode, port, key if refused is None else
            "(not given: %s)" % refused))
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
        if not ctx.broken:
            # a PostgreSQL restart ends every candidate's session: each
            # may log the lost statement and its first failed reconnect
            limit = ctx.max_errors * (ctx.hosts + ctx.runs)
            for f in r["faults"]:
                n = f["errors"] + f["warnings"]
                if n > limit:
                    r["violations"].append(
                        "%s: %d error/warning lines (at most %d: %d per "
                        "candidate)" % (f["name"], n, limit,
                                        ctx.max_errors))
            steady = r["steady_errors"]
            if steady > 0:
                r["violations"].append("%d error/warning lines before the "
                                       "first fault" % steady)
        results.append(r)
        log("%s: %d overlaps (combined), %s" % (
            name, r["comb_overlaps"], "ok" if not r["violations"] else
            "%d violations" % len(r["violations"])))
    return report(results, "pgbouncer", ctx.table)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=("promotion", "clockstep",
                                         "pgbouncer"))
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
    ap.add_argument("--hosts", type=int, default=3)
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
    # clockstep
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--step-s", type=int, default=10)
    ap.add_argument("--clock", choices=("faketime", "sql"),
                    default="faketime")
    # pgbouncer
    ap.add_argument("--variants", default=None,
                    help="POOL_MODE:LEADERPOOLER,... (default transaction:"
                    "transaction,session:session; with --broken "
                    "session:session)")
    ap.add_argument("--faults", default=None,
                    help="kill-9,sigstop,pg-restart (with --broken: "
                    "sigstop)")
    ap.add_argument("--max-errors", type=int, default=3,
                    help="error/warning lines per candidate and fault")
    ap.add_argument("--no-pooler-key", action="store_true")
    ctx = ap.parse_args()
    if ctx.variants is None:
        ctx.variants = "session:session" if ctx.broken else \
            "transaction:transaction,session:session"
    if ctx.faults is None:
        ctx.faults = "sigstop" if ctx.broken else "kill-9,sigstop,pg-restart"
    ctx.checker = faultlib.load_checker(ctx.checker, "checker")
    ctx.cmdcheck = faultlib.load_checker(ctx.cmdcheck, "cmdcheck")
    os.makedirs(ctx.work, exist_ok=True)
    t0 = time.monotonic()
    try:
        rc = {"promotion": scenario_promotion,
              "clockstep": scenario_clockstep,
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
