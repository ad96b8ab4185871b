#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""elections.py: the elections of the database-topology tests
(tests/cluster/cluster.py and its scenarios in clocksteps.py and
pgbouncer.py): two kinds of candidates on one namespace, their logs, and
how a stopped election is judged and shown.

  * fault-host (tests/faults/fault-host.c): the plugin loaded as a
    scheduler loads it, is_leader() sampled from a thread of its own; the
    "yes" answers land in ELECTION/hosts/host-PID.rec and
    tests/faults/checker judges them (overlap, shared term, regression);
  * `odbc-leader run` under a service loop (tests/lib/harness.py
    RunService, restarted RESTART_DELAY_S after it exits, as a service
    manager would), CMD = cmd-life (tests/faults/cmd-life.c) with a
    --child: its life lands in ELECTION/cmds/life-PID.rec and
    tests/faults/cmdcheck judges the lives (overlap, orphan, term).

judge() runs both checkers as they are, and the is_leader() checker once
more on the union of both kinds of claims (a CMD's life is a claim of its
term by its run's candidate id), so a fault-host and a CMD leading at
once, or one term held by a fault-host and a run, are caught too
("combined"); and tests/lib/ledger.py at_once() on the tenures of both
kinds ("at once"). Every log line of every candidate is kept with the time
it arrived (ELECTION/log.txt); lines at warning level or worse
(fault-host: log level <= 4; odbc-leader run: "error:", "warning:" and
untagged error messages) are counted per fault: from the fault to the
next one (or the end).

Takeover: for each fault, the time from the fault to the first claim of a
tenure (candidate, term) other than the one leading at the fault, from the
records (fault-host: the first is_leader() "yes" of that term; run: its
CMD's start). "kept" when the leader kept its term through the fault.
"""
import os
import re
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

now_ns, log = harness.now_ns, harness.log

TTL_MS = 3000
RENEW_MS = 1000
MARGIN_MS = 500
TERM_DELAY_MS = 300  # cmd-life's exit after SIGTERM
HOLD_MS = TTL_MS + 1500  # SIGSTOP of the leader lasts this long
RESTART_DELAY_S = 1.0  # the run service loop's restart delay
BROKEN_EXTRA_MS = 4 * TTL_MS  # LeaderTestTrustExtra of --broken
FRESH_CLAIM_NS = 50e6  # a claim this recent means "leads now"


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


def line_start(src):
    """How a new message of candidate src begins (a line that does not
    continues the one before: psqlODBC's messages span lines)."""
    return "%s: " % src if src.startswith("host") else "odbc-leader: "


# ---- candidates -------------------------------------------------------------

class Election(harness.RunService):
    """fault-host and odbc-leader run candidates of one namespace, their
    logs and their records; the runs under harness.RunService."""

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
        harness.RunService.__init__(self, RESTART_DELAY_S,
                                    "%s/log.txt" % self.dir)
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
        # a fault-host whose init failed for a cause a service manager's
        # restart cures is started again: the SQLite file locked (its
        # schema check waited out the busy timeout), or a connect that
        # timed out (the login timeout is the statement timeout, the
        # renew interval's length here: a host of a loaded machine whose
        # clock a step round moved may not log in within it)
        self.init_restart = False
        self.replaced = set()  # pids of such hosts
        self.notes = []
        self.op_conn = direct + self.conn[len(conn):]
        self.logs = harness.LogSink(os.path.join(self.dir, "log.txt"),
                                    severity, line_start)
        self.hosts = {}  # pid -> Popen
        self.host_name = {}  # pid -> hostN
        self.nhosts = 0
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
        """A new run candidate (runN), its first run started at once."""
        c = self.add("run%d" % (len(self.cands) + 1), now=True)
        self.start()
        return c

    def popen(self, c):
        p = subprocess.Popen(
            [self.ctx.odbc_leader, "run", "--id", c.id, "-C", self.conn,
             "-n", self.ns, "--", self.ctx.life, self.cmds_dir, "--child",
             "--term-delay", str(TERM_DELAY_MS)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, env=self.env)
        self.logs.attach(c.id, p.stderr)
        return p

    def check_fatal(self):
        """Raises RuntimeError when a run refused its configuration or a
        fault-host exited by itself (one whose init found the SQLite file
        locked or could not connect in time is started again, as a
        service manager would)."""
        harness.RunService.check_fatal(self)
        for pid, p in list(self.hosts.items()):
            if p.poll() is not None and p.returncode != -signal.SIGKILL and \
                    not self.stopping and pid not in self.replaced:
                why = self._init_transient(self.host_name[pid]) \
                    if self.init_restart and p.returncode == 1 else None
                if why is not None:
                    # a service manager would start it again
                    self.replaced.add(pid)
                    new = self.spawn_host()
                    self.notes.append(
                        "%s: init failed (%s); %s started in its place" % (
                            self.host_name[pid], why, self.host_name[new]))
                    continue
                name = self.host_name[pid]
                harness.wait_for(lambda: self.logs.lines(name), 1, 0.02)
                last = [line for _, line in self.logs.lines(name)][-3:]
                raise RuntimeError("%s exited %s (see %s/log.txt); its last "
                                   "lines: %s" % (name, p.returncode,
                                                  self.dir, last))

    # what a fault-host's "init failed" line says when a restart cures it
    INIT_TRANSIENT = (("database is locked", "the SQLite file locked"),
                      ("timeout expired", "its connect timed out"))

    def _init_transient(self, name):
        """Why fault-host name's init failed, when a restart cures it
        (INIT_TRANSIENT), else None (its log line may still be on its
        way: waits up to 1 s for it)."""
        def why():
            for _, line in self.logs.lines(name):
                if "init failed" not in line:
                    continue
                for text, cause in self.INIT_TRANSIENT:
                    if text in line:
                        return cause
                return "another"
            return None
        cause = harness.wait_for(why, 1, 0.02)
        return None if cause in (None, "another") else cause

    # -- what the records say --

    def host_records(self):
        return records.load_hosts(self.hosts_dir)[1]

    def lives(self):
        return records.load_lives(self.cmds_dir, partial_ok=True)

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
        def lead():
            self.check_fatal()
            return self.leader()
        cur = harness.wait_for(lead, timeout_s, 0.02)
        if cur is not None:
            return cur
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
        def new():
            self.check_fatal()
            return self.first_new_tenure(ref, old)
        return harness.wait_for(new, max(0, (ref + (limit_ms + 1000) * 1e6 -
                                             now_ns()) / 1e9), 0.02)

    # -- steering --

    def resign(self, to=None):
        """`odbc-leader resign [--to ID]` on the direct connection; returns
        its exit status."""
        args = [self.ctx.odbc_leader, "resign", "-C", self.op_conn, "-n",
                self.ns] + (["--to", to] if to else [])
        p = subprocess.run(args, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, timeout=30)
        self.logs.note("resign %s: exit %d %s" % (
            " ".join(args[5:]), p.returncode,
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
        if kind == "run":
            return self.kill_run(who, sig)
        pid = who
        if sig == signal.SIGSTOP:
            self.stopped.add(pid)
            ref = harness.pause(pid)
        else:
            os.kill(pid, sig)
            ref = now_ns()
        if sig == signal.SIGKILL:
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

    # -- the end --

    def stop(self):
        """SIGTERM to everyone (SIGKILL after STOP_WAIT_S, recorded as a
        death of a run), the cmd-life processes still alive are listed in
        alive.json and killed; writes runs.json."""
        self.t_stop = now_ns()
        self.begin_stop()
        killed = harness.terminate(list(self.hosts.values()),
                                   self.STOP_WAIT_S)
        killed += self.end_stop()
        self.finish(self.cmds_dir, self.ctx.cmdcheck.ORPHAN_BOUND_MS, killed)
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
    lives, runs, alive = records.load_cmd_run(el.cmds_dir)
    cmd = ctx.cmdcheck.check(lives, runs, alive)
    comb = ctx.checker.check(combined_records(el))
    tenures = el.tenures()
    pairs = ledger.at_once([(k, a, b, (k, a)) for k, (a, b) in
                            tenures.items()])
    simultaneous = []
    both, worst = len(pairs), 0.0
    for inter, (ka, a0), (kb, b0) in sorted(pairs.values(),
                                            key=lambda v: (v[1][1], v[2][1])):
        worst = max(worst, inter / 1e6)
        simultaneous.append("%s t%d and %s t%d both led for %.1f ms" % (
            ka[0], ka[1], kb[0], kb[1], inter / 1e6))
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


def pg_conn(port):
    """The psqlODBC connection string of lib.sh's server, on port."""
    return harness.with_port(os.environ["OL_PG_CONNECT"], port)


# ---- helpers of the scenarios ----------------------------------------------

def start_election(ctx, name, conn, direct, hosts, runs, extra_ms):
    """An Election of hosts fault-hosts and runs runs, all started."""
    el = Election(ctx, name, conn, direct, extra_ms)
    for _ in range(hosts):
        el.spawn_host()
    for _ in range(runs):
        el.add_run()
    return el


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
