#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""galera_schedule.py: the fault schedule of tests/cluster/galera.test.

Called by galera.test once the three-node Galera cluster runs (the GL_*
variables of tests/cluster/galera-lib.sh exported). Two elections run side
by side for the whole schedule, their candidates spread over the nodes,
each connected to one node only:

  fh   three fault-host processes (tests/faults/fault-host.c), host i on
       node i, their is_leader() answers recorded and judged by
       tests/faults/checker (overlap, shared term, term regression);
  run  three `odbc-leader run` service loops (tests/faults/cmd-schedule.py's
       Election, on tests/lib/harness.py's RunService), candidate cand-i on
       node i, CMD = cmd-life; the CMD lives are judged by
       tests/faults/cmdcheck (overlap, orphan, term).

Phases (each fault waits for a leader in both elections first):
  schema-race  before the elections: three fault-hosts, one per node, all
               creating the tables of a fresh prefix at once (ROUNDS
               times); reports how many inits failed, and why
  kill-9       SIGKILL of the fh leader process and of the run leader's
               `odbc-leader run`
  node-kill    SIGKILL of the mariadbd the fh leader (then: the run leader)
               is connected to; the node is started again after TTL + 2 s
               and rejoins (IST)
  isolate      gmcast.isolate=1 on the node the fh leader (then: the run
               leader) is connected to, set as root over its socket: the
               node falls out of the primary component and refuses
               statements (1047); gmcast.isolate=0 after HOLD, then it
               rejoins
Per fault and election: the takeover (fault start to the first claim of
a newer term for fh, to the next CMD's start for run; "kept" when the
old leader still leads once the fault is over, which a leader on another
node does only when the group's view change is shorter than its trust
window) and when the old leader quit (its last claim, its CMD's last
heartbeat); the new terms during the fault and during the node's
restart or rejoin (a membership change stalls every node's commits);
the warnings and errors the candidates logged from the fault's start to
the next fault, by SQLSTATE/native code (lines without a diagnostic by
their message), and the attempts the library took as a lost race (info
lines, by native code: 1213 a certification conflict or brute-force
abort, 1969 max_statement_time while waiting for a row lock).
Every candidate's output is in WORK/fh/fh-nodeN-K.log and
WORK/galera/run-0/runs-cand-N.log, each line behind the ms since the
schedule started (the time base of the schedule's own log lines).

Exit status 0 when both elections are safe (no overlap, shared term,
regression, orphan, term error), every election that lost its leader had
a new one within LIVENESS_MS of the fault and no fault-host was stuck; 1
otherwise (a failed schema-race init only with --strict-schema). Figures
go to stdout and --table.
"""
import argparse
import collections
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

now_ns, ms = harness.now_ns, harness.ms  # CLOCK_MONOTONIC, as every record

TTL_MS = 3000
RENEW_MS = 1000
MARGIN_MS = 500
STATEMENT_MS = 500
# odbc-leader run: --grace at most TTL - margin - renew - statement - 100
GRACE = "800ms"
SPIN_US = 200  # fault-host: is_leader() every 200 us while leader
NODES = (1, 2, 3)
LIVENESS_MS = 25000  # an affected election elects again this soon
HOLD_MS = TTL_MS + 2000  # a killed node stays down (at least) this long
ISOLATE_HOLD_MS = TTL_MS + 3000  # an isolated node stays out this long
SETTLE_S = 2.0  # after a node is back, before the next fault
RACE_ROUNDS = 3
STUCK_MS = TTL_MS + 2 * RENEW_MS + 10000  # no good tick for this long


T0 = now_ns()  # the time base of every log line: ms since the start


def log(msg):
    print("[%s +%.3fs] %s" % (time.strftime("%H:%M:%S"), (now_ns() - T0) / 1e9,
                               msg), file=sys.stderr, flush=True)


def pump(pipe, path):
    """Copies the lines of a child's output to path, each behind the ms
    since T0, from a thread of its own."""
    harness.pump(pipe, path, T0)


class Cluster:
    """The nodes, through galera-lib.sh's functions in a child bash."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.port = {n: int(os.environ["GL_PORT_%d" % n]) for n in NODES}
        self.connect = {n: os.environ["GL_CONNECT_%d" % n] for n in NODES}
        self.shell = harness.Shell(ctx.lib, ctx.galera_lib)

    def call(self, func, *args, check=True, timeout=180):
        """galera-lib.sh's func with args; its output. Raises RuntimeError
        when it fails (unless not check: then the output is "")."""
        try:
            return self.shell.call('"$@"', func, *args, timeout=timeout,
                                   capture_err=True)
        except RuntimeError:
            if check:
                raise
            return ""

    def sql(self, n, sql, db=""):
        return self.call("gl_sql", n, sql, *([db] if db else []))

    def status(self, n, var):
        return self.call("gl_status", n, var, check=False)

    def kill(self, n):
        self.call("gl_kill_node", n, "KILL")

    def start(self, n, sst=False):
        self.call("gl_start_node", n, *(["--sst"] if sst else []))

    def wait(self, pred, timeout_s, what):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if pred():
                return
            time.sleep(0.1)
        raise RuntimeError("cluster: %s not within %d s" % (what, timeout_s))


class Hosts:
    """The fh election: fault-host processes, each on one node."""

    def __init__(self, ctx, cluster, name, prefix=None, verbose=True):
        self.ctx, self.cluster = ctx, cluster
        self.dir = os.path.join(ctx.work, name)
        os.makedirs(self.dir)
        self.ns = "galera-%s-%d" % (name, os.getpid())
        self.extra = ";LeaderTablePrefix=%s" % prefix if prefix else ""
        self.verbose = verbose
        self.procs = {}  # pid -> Popen (alive or not yet reaped)
        self.node = {}  # pid -> node
        self.born = {}  # pid -> spawn time ns
        self.logpath = {}  # pid -> its log file
        self.exits = collections.Counter()  # exit status -> count
        self.respawn_at = {}  # node -> time.monotonic() to respawn
        self.seq = 0

    def config(self, n):
        return "%s;LeaderNamespace=%s;LeaderTTL=%d;LeaderRenewInterval=%d;" \
            "LeaderSafetyMargin=%d;LeaderStatementTimeout=%d%s" % (
                self.cluster.connect[n], self.ns, TTL_MS, RENEW_MS,
                MARGIN_MS, STATEMENT_MS, self.extra)

    def spawn(self, n):
        self.seq += 1
        path = os.path.join(self.dir, "fh-node%d-%d.log" % (n, self.seq))
        cmd = [self.ctx.host, "-p", self.ctx.plugin, "-d", self.dir, "-n",
               "fh-node%d" % n, "-s", str(SPIN_US), self.config(n)]
        if not self.verbose:
            cmd.insert(1, "-q")
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
        pump(p.stdout, path)
        self.procs[p.pid] = p
        self.node[p.pid] = n
        self.born[p.pid] = now_ns()
        self.logpath[p.pid] = path
        return p.pid

    def poll(self, respawn=True):
        """Reaps candidates that exited by themselves (init failed: the
        node was down, or the schema check failed) and, as a service
        manager would, starts one again on that node a second later."""
        for pid, p in list(self.procs.items()):
            if p.poll() is not None:
                self.exits[p.returncode] += 1
                del self.procs[pid]
                if respawn:
                    self.respawn_at.setdefault(self.node[pid],
                                               time.monotonic() + 1.0)
        for n, t in list(self.respawn_at.items()):
            if respawn and time.monotonic() >= t:
                del self.respawn_at[n]
                self.spawn(n)

    def kill(self, pid):
        """SIGKILL; a new candidate starts on the same node at once."""
        self.procs[pid].kill()
        self.procs[pid].wait()
        self.exits[-9] += 1
        del self.procs[pid]
        self.spawn(self.node[pid])

    def records(self):
        return records.load_hosts(self.dir)[1]

    def headers(self):
        return records.load_hosts(self.dir)[0]

    def leader(self):
        """(pid, term, node) of the process claiming right now, or None."""
        r = ledger.claiming_now(self.records(), now_ns())
        if r is not None and r["pid"] in self.procs:
            return r["pid"], r["term"], self.node[r["pid"]]
        return None

    def wait_leader(self, timeout_s):
        def lead():
            self.poll()
            return self.leader()
        cur = harness.wait_for(lead, timeout_s)
        if cur is None:
            raise RuntimeError("fh: no leader within %d s" % timeout_s)
        return cur

    def first_claim(self, ref_ns, min_term):
        """(ms from ref_ns, term, pid) of the first claim of a term >=
        min_term at or after ref_ns, or None."""
        got = ledger.first_claim(self.records(), ref_ns, min_term)
        return None if got is None else (ms(got[0] - ref_ns), got[1], got[2])

    def stuck(self):
        """Live candidates whose last good tick is older than STUCK_MS."""
        last = {h["pid"]: h["last_ok_tick_ns"] for h in self.headers()}
        t = now_ns()
        return [(pid, self.node[pid]) for pid, p in self.procs.items()
                if p.poll() is None and
                t - max(last.get(pid, 0), self.born[pid]) > STUCK_MS * 1e6]

    def stop(self):
        """SIGTERM (resign) to all; SIGKILL after 5 s. Returns how many
        needed SIGKILL."""
        return harness.terminate(list(self.procs.values()), 5)

    def log_files(self):
        return sorted(os.path.join(self.dir, f) for f in os.listdir(self.dir)
                      if f.endswith(".log"))


def election_class(cs):
    """cmd-schedule.py's Election, each run verbose (-v) with its output
    in a log file of its candidate (runs-cand-N.log), every line behind
    its time."""
    class Election(cs.Election):
        def popen(self, c):
            p = subprocess.Popen(self.run_argv(c), stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL)
            pump(p.stdout, os.path.join(self.dir, "runs-%s.log" % c.id))
            return p
    return Election


class Runs:
    """The run election: cmd-schedule.py's Election, each candidate
    connected to its own node (its Port= rewritten, no proxy)."""

    def __init__(self, ctx, cluster):
        rctx = argparse.Namespace(
            work=ctx.work, connect={"galera": cluster.connect[1]},
            port={}, odbc_leader=ctx.odbc_leader, life=ctx.life,
            checker=ctx.cmdcheck_mod, proxy=None)
        self.el = election_class(ctx.cmdsched)(
            rctx, "galera", "run", 0,
            timing=(TTL_MS, RENEW_MS, MARGIN_MS, STATEMENT_MS), grace=GRACE,
            restart_delay_s=1.0)  # a service manager's restart delay
        self.el.verbose = True
        self.node = {}
        for n, c in zip(NODES, self.el.cands):
            c.port = cluster.port[n]  # _spawn puts it in Port=
            self.node[c.id] = n
        self.dir = self.el.dir

    def start(self):
        self.el.start()

    def leader(self):
        """(life, candidate, node) of the CMD running now, or None."""
        cur = self.el.leader()
        if cur is None:
            return None
        return cur[0], cur[1], self.node[cur[1].id]

    def wait_leader(self, timeout_s):
        life, c = self.el.wait_leader(timeout_s)
        return life, c, self.node[c.id]

    def first_cmd(self, ref_ns, min_term):
        """(ms from ref_ns, term, id) of the first CMD started at or after
        ref_ns with a term >= min_term, or None."""
        got = [l for l in self.el.lives() if not l["child"] and
               l["start"] >= ref_ns and l["term"] >= min_term]
        if not got:
            return None
        l = min(got, key=lambda x: x["start"])
        return ms(l["start"] - ref_ns), l["term"], l["id"]

    def log_files(self):
        return sorted(os.path.join(self.dir, f) for f in os.listdir(self.dir)
                      if f.startswith("runs-") and f.endswith(".log"))


class Logs:
    """Counts the warning and error lines the candidates logged between
    two marks, per native error code, and the lost certification races
    (info lines)."""

    LEVEL = re.compile(r"log\(([0-7])\): |odbc-leader: (warning|error): ")
    NATIVE = re.compile(r"native (\d+)")
    STATE = re.compile(r"\[([0-9A-Z]{5})\] native")

    def __init__(self, sources):
        self.sources = sources  # callables returning lists of files
        self.pos = {}

    def mark(self):
        """Remembers the end of every log file."""
        for src in self.sources:
            for f in src():
                self.pos[f] = os.path.getsize(f)

    def count(self):
        """Figures of the lines written since mark(): warnings+errors,
        Counter of 'SQLSTATE/native' among them, lost races, init
        failures. Moves the mark."""
        warn, codes, inits = 0, collections.Counter(), 0
        races = collections.Counter()
        samples = {}
        for src in self.sources:
            for f in src():
                start = self.pos.get(f, 0)
                with open(f, "rb") as fh:
                    fh.seek(start)
                    data = fh.read()
                self.pos[f] = start + len(data)
                for line in data.decode("utf-8", "replace").splitlines():
                    if "lost a race" in line:
                        n = self.NATIVE.search(line)
                        races[n.group(1) if n else "-"] += 1
                    if "init failed" in line:
                        inits += 1
                    m = self.LEVEL.search(line)
                    if m is None:
                        continue
                    if m.group(1) is not None and int(m.group(1)) > 4:
                        continue
                    warn += 1
                    n = self.NATIVE.search(line)
                    s = self.STATE.search(line)
                    if n is not None:
                        key = "%s/%s" % (s.group(1) if s else "-",
                                         n.group(1))
                    else:
                        # no diagnostic: the message's start, digits out
                        msg = re.sub(r"\d+", "N", line[m.end():])
                        key = re.split(r" \(|: ", msg)[0][:48]
                    codes[key] += 1
                    samples.setdefault(key, line.strip()[:300])
        return {"warn": warn, "codes": codes, "races": races,
                "inits": inits, "samples": samples}


def fmt_codes(codes, coded_only=False):
    """'08S01/2013 x6, ...'; coded_only: the lines without a diagnostic
    summed up as 'other xN'."""
    items = codes.most_common()
    if coded_only:
        other = sum(v for k, v in items if "/" not in k)
        items = [(k, v) for k, v in items if "/" in k]
        if other:
            items.append(("other", other))
    return ", ".join("%s x%d" % kv for kv in items) or "-"


class Row:
    def __init__(self, fault, node):
        self.fault, self.node = fault, node
        self.fh = "-"  # takeover text
        self.run = "-"
        self.extra = ""
        self.logs = None
        self.t_fault = now_ns()  # the fault starts
        self.t_restore = None  # the node is started again / rejoins
        self.t_end = None  # the next fault starts (set by main)
        self.terms = ""  # new terms during the fault + during the rejoin


def count_terms(fh, runs, rows):
    """Fills row.terms: the new terms (fh: first claims, run: CMD starts)
    from the fault to the restart or rejoin, and from there to the next
    fault. A rejoin that costs a leader shows up in the second number."""
    fh_first = {}
    for r in fh.records():
        t = fh_first.get(r["term"])
        if t is None or r["first_after"] < t:
            fh_first[r["term"]] = r["first_after"]
    run_first = {}
    for l in runs.el.lives():
        if not l["child"]:
            t = run_first.get(l["term"])
            if t is None or l["start"] < t:
                run_first[l["term"]] = l["start"]
    for row in rows:
        mid = row.t_restore if row.t_restore is not None else row.t_end
        parts = []
        for first in (fh_first, run_first):
            a = sum(1 for t in first.values() if row.t_fault <= t < mid)
            b = sum(1 for t in first.values() if mid <= t < row.t_end)
            parts.append("%d+%d" % (a, b))
        row.terms = "fh %s, run %s" % tuple(parts)


def takeover(got, kept, quit_ms=None):
    """Text of one election's takeover for the table: fault start to the
    new leader's first claim, and to the old leader's last one."""
    if got is not None:
        text = "%.0f" % got[0]
    else:
        text = "kept" if kept else "NONE"
    if quit_ms is not None and got is not None:
        text += " (old quit %.0f)" % quit_ms
    return text


def check_live(failures, what, got, kept):
    for k, g, kp in (("fh", got[0], kept[0]), ("run", got[1], kept[1])):
        if not kp and (g is None or g[0] > LIVENESS_MS):
            failures.append("%s: no %s leader within %d ms" % (
                what, k, LIVENESS_MS))


def fh_quit(fh, ref, term):
    """ms from ref to the last claim of term (negative: before ref)."""
    last = [r["last_before"] for r in fh.records() if r["term"] == term]
    return ms(max(last) - ref) if last else None


def run_quit(runs, ref, pid):
    """ms from ref to the last heartbeat of CMD pid and its children."""
    last = [l["last"] for l in runs.el.lives()
            if l["pid"] == pid or l["ppid"] == pid]
    return ms(max(last) - ref) if last else None


def fh_leading(fh, term):
    """True while term is claimed right now (a claim in the last 50 ms)."""
    t = now_ns()
    return any(r["term"] == term and t - r["last_before"] < 50e6
               for r in fh.records())


def run_leading(runs, pid):
    """True while CMD pid runs unstopped (heartbeat in the last 50 ms)."""
    t = now_ns()
    return any(l["pid"] == pid and not l["sigterm"] and not l["end"] and
               t - l["beat"] < 50e6 for l in runs.el.lives())


def wait_takeovers(fh, runs, ref, fterm, rlife, until_s):
    """Waits at least until_s after ref, then until each election either
    claimed a newer term or still has its old leader, at most LIVENESS_MS
    after ref. Returns (fh got, run got, fh kept, run kept)."""
    deadline = ref + LIVENESS_MS * 1e6
    while True:
        fh.poll()
        runs.el.check_fatal()
        fgot = fh.first_claim(ref, fterm + 1)
        rgot = runs.first_cmd(ref, rlife["term"] + 1)
        t = now_ns()
        if t >= ref + until_s * 1e9:
            fkept = fgot is None and fh_leading(fh, fterm)
            rkept = rgot is None and run_leading(runs, rlife["pid"])
            if (fgot is not None or fkept) and (rgot is not None or rkept) \
                    or t > deadline:
                return fgot, rgot, fkept, rkept
        time.sleep(0.02)


def leaders(fh, runs):
    f = fh.wait_leader(30)
    r = runs.wait_leader(30)
    return f, r


def fault_kill9(ctx, cluster, fh, runs, failures):
    (fpid, fterm, fnode), (life, cand, rnode) = leaders(fh, runs)
    row = Row("kill-9 (fh leader, run leader)",
              "fh@%d run@%d" % (fnode, rnode))
    ref = row.t_fault = now_ns()
    fh.kill(fpid)
    runs.el.kill_run(cand, signal.SIGKILL)
    log("  killed fh leader pid %d (node %d) and the run of %s (node %d)" % (
        fpid, fnode, cand.id, rnode))
    fgot, rgot, _, _ = wait_takeovers(fh, runs, ref, fterm, life,
                                      2 * RENEW_MS / 1000.0)
    row.fh = takeover(fgot, False, fh_quit(fh, ref, fterm))
    row.run = takeover(rgot, False, run_quit(runs, ref, life["pid"]))
    check_live(failures, "kill-9", (fgot, rgot), (False, False))
    return row


def fault_node(ctx, cluster, fh, runs, failures, kind, target):
    """node-kill or isolate on the node of the `target` election's
    leader."""
    (fpid, fterm, fnode), (life, cand, rnode) = leaders(fh, runs)
    node = fnode if target == "fh" else rnode
    row = Row("%s (node of the %s leader)" % (kind, target),
              "%d (fh@%d run@%d)" % (node, fnode, rnode))
    ref = row.t_fault = now_ns()
    if kind == "node-kill":
        cluster.kill(node)
        hold = HOLD_MS
    else:
        cluster.sql(node, "SET GLOBAL wsrep_provider_options="
                    "'gmcast.isolate=1'")
        hold = ISOLATE_HOLD_MS
    log("  %s node %d done (fh leader on %d, run leader on %d)" % (
        kind, node, fnode, rnode))
    # the remaining nodes form the primary component without it
    others = [n for n in NODES if n != node]
    try:
        cluster.wait(lambda: all(cluster.status(n, "wsrep_cluster_size") ==
                                 "2" for n in others), 30, "a 2-node view")
        view_ms = ms(now_ns() - ref)
        if kind == "isolate":
            cluster.wait(lambda: cluster.status(node, "wsrep_cluster_status")
                         == "non-Primary", 30, "node %d non-Primary" % node)
        row.extra = "2-node view after %.0f ms" % view_ms
    except RuntimeError as e:
        failures.append("%s: %s" % (kind, e))
        row.extra = str(e)
    fgot, rgot, fkept, rkept = wait_takeovers(fh, runs, ref, fterm, life,
                                              hold / 1000.0)
    row.fh = takeover(fgot, fkept, fh_quit(fh, ref, fterm))
    row.run = takeover(rgot, rkept, run_quit(runs, ref, life["pid"]))
    check_live(failures, "%s node %d" % (kind, node), (fgot, rgot),
               (fkept, rkept))
    t = row.t_restore = now_ns()
    log("  %s node %d" % ("restarting" if kind == "node-kill" else
                         "ending the isolation of", node))
    if kind == "node-kill":
        cluster.start(node, ctx.sst)
        row.extra += ", restarted and Synced in %.0f ms" % ms(now_ns() - t)
    else:
        cluster.sql(node, "SET GLOBAL wsrep_provider_options="
                    "'gmcast.isolate=0'")
        cluster.wait(lambda: cluster.status(node, "wsrep_local_state_comment")
                     == "Synced" and cluster.status(node, "wsrep_ready") ==
                     "ON" and cluster.status(node, "wsrep_cluster_size") ==
                     "3", 60, "node %d back in the cluster" % node)
        row.extra += ", rejoined in %.0f ms" % ms(now_ns() - t)
    log("  node %d is back: %s" % (node, row.extra))
    settle = time.monotonic() + SETTLE_S
    while time.monotonic() < settle:
        fh.poll()
        time.sleep(0.05)
    return row


def schema_race(ctx, cluster, rounds):
    """Three fault-hosts, one per node, create the tables of a fresh
    prefix at once. Returns [(round, inits failed, first reasons)]."""
    out = []
    for i in range(rounds):
        h = Hosts(ctx, cluster, "race-%d" % i, prefix="race%d_" % i)
        for n in NODES:
            h.spawn(n)
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            if all(p.poll() is not None for p in h.procs.values()):
                break
            if h.leader() is not None and all(
                    hd["ticks"] > 0 for hd in h.headers()) and \
                    len(h.headers()) == len(NODES):
                break
            time.sleep(0.05)
        failed = [pid for pid, p in h.procs.items() if p.poll() is not None]
        reasons = []
        for pid in failed:
            diag = []  # the statements that failed, in order
            with open(h.logpath[pid], errors="replace") as f:
                for line in f:
                    if "log(7): " in line and "native" in line:
                        diag.append(line.split("log(7): ", 1)[1]
                                    .split(": [ma-", 1)[0].strip())
                    if "init failed" in line:
                        reasons.append("node %d: %s [statements: %s]" % (
                            h.node[pid], line.strip()[:200],
                            "; ".join(diag[-3:])))
        h.stop()
        out.append((i, len(failed), reasons))
    return out


def table(rows):
    out = ["| fault | node | fh takeover ms | run takeover ms | new terms "
           "(fault+rejoin) | warnings+errors (fh+run) | by SQLSTATE/native "
           "| lost races (native) | cluster |",
           "|---|---|---|---|---|---:|---|---|---|"]
    for r in rows:
        lg = r.logs
        out.append("| %s | %s | %s | %s | %s | %d | %s | %s | %s |" % (
            r.fault, r.node, r.fh, r.run, r.terms, lg["warn"],
            fmt_codes(lg["codes"], coded_only=True),
            fmt_codes(lg["races"]), r.extra))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    for a in ("host", "plugin", "odbc-leader", "life", "checker", "cmdcheck",
              "lib", "galera-lib", "work", "faults-dir"):
        ap.add_argument("--" + a, required=True)
    ap.add_argument("--table", default=None)
    ap.add_argument("--race-rounds", type=int, default=RACE_ROUNDS)
    ap.add_argument("--sst", action="store_true",
                    help="restart a killed node without recovering its "
                    "position: it rejoins by a full rsync SST")
    ap.add_argument("--strict-schema", action="store_true",
                    help="fail when a schema-race init fails")
    ctx = ap.parse_args()
    ctx.checker = harness.load_script(ctx.checker, "checker")
    ctx.cmdcheck_mod = harness.load_script(ctx.cmdcheck, "cmdcheck")
    ctx.cmdsched = harness.load_script(os.path.join(ctx.faults_dir,
                                                    "cmd-schedule.py"),
                                       "cmd_schedule")
    cluster = Cluster(ctx)
    failures, notes = [], []
    t0 = time.monotonic()

    # ---- concurrent schema creation, one candidate per node ----
    if ctx.race_rounds > 0:
        log("schema race: %d rounds of 3 candidates creating tables at once"
            % ctx.race_rounds)
        for i, n, reasons in schema_race(ctx, cluster, ctx.race_rounds):
            msg = "schema race round %d: %d of 3 inits failed" % (i, n)
            log(msg)
            notes.append(msg)
            if n and ctx.strict_schema:
                failures.append(msg)
            for r in reasons:
                log("  " + r)
                notes.append("  " + r)

    # ---- the elections ----
    p = subprocess.run([ctx.odbc_leader, "schema", "--apply", "-C",
                        cluster.connect[1]], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise SystemExit("odbc-leader schema --apply failed: " + p.stdout)
    fh = Hosts(ctx, cluster, "fh")
    runs = Runs(ctx, cluster)
    lg = Logs([fh.log_files, runs.log_files])
    rows = []
    try:
        for n in NODES:
            fh.spawn(n)
        runs.start()
        (fpid, fterm, fnode), (life, cand, rnode) = leaders(fh, runs)
        log("fh leader on node %d (term %d), run leader %s on node %d" % (
            fnode, fterm, cand.id, rnode))
        time.sleep(2 * RENEW_MS / 1000.0)
        lg.count()  # startup lines are not a fault's
        plan = [("kill-9", None), ("node-kill", "fh"), ("node-kill", "run"),
                ("isolate", "fh"), ("isolate", "run")]
        for kind, target in plan:
            log("fault %s%s" % (kind, "" if target is None else
                                " (node of the %s leader)" % target))
            if kind == "kill-9":
                row = fault_kill9(ctx, cluster, fh, runs, failures)
            else:
                row = fault_node(ctx, cluster, fh, runs, failures, kind,
                                 target)
            row.logs = lg.count()
            log("  %s: fh %s, run %s, %d warnings/errors (%s), lost "
                "races by native code: %s; %s" % (
                    row.node, row.fh, row.run, row.logs["warn"],
                    fmt_codes(row.logs["codes"]),
                    fmt_codes(row.logs["races"]), row.extra))
            for key, line in sorted(row.logs["samples"].items()):
                log("    e.g. %s" % line)
            if rows:
                rows[-1].t_end = row.t_fault
            rows.append(row)
        # every election has a leader at the end, nobody is stuck
        leaders(fh, runs)
        stuck = fh.stuck()
        if stuck:
            failures.append("fh: stuck candidates (pid, node): %s" % stuck)
        if rows:
            rows[-1].t_end = now_ns()
            count_terms(fh, runs, rows)
    except (RuntimeError, OSError, ValueError,
            subprocess.SubprocessError) as e:
        failures.append("schedule: %s" % e)
    finally:
        fh.stop()
        killed, _ = runs.el.stop()
        if killed:
            notes.append("run: %d runs needed SIGKILL at the end" % killed)

    # ---- the verdicts ----
    r = ctx.checker.check(fh.records())
    log("fh checker: terms %d, transitions %d, overlaps %d, shared %d, "
        "regressions %d, claims %d" % (r["terms"], r["transitions"],
                                       r["overlaps"], r["shared_terms"],
                                       r["regressions"], r["claims"]))
    failures += ["fh: " + v for v in r["violations"]]
    lives, rr, alive = records.load_cmd_run(runs.dir)
    c = ctx.cmdcheck_mod.check(lives, rr, alive)
    log("run cmdcheck: " + ctx.cmdcheck_mod.summary(runs.dir, c))
    failures += ["run: " + v for v in c["violations"]]
    exits = collections.Counter(x["rc"] for x in runs.el.runs)
    log("fh exits by status: %s; run exits by status: %s" % (
        dict(fh.exits), dict(exits)))
    # the epoch every lease row carries: the cluster's state UUID
    try:
        uuid = cluster.status(1, "wsrep_cluster_state_uuid")
        epochs = cluster.sql(1, "SELECT namespace, term, epoch FROM "
                             "odbc_leader_lease", "leader")
        log("cluster state UUID %s; lease rows:\n%s" % (uuid, epochs))
        for line in epochs.splitlines():
            if line.split("\t")[-1] not in (uuid, "NULL"):
                notes.append("lease row with another epoch: " + line)
    except RuntimeError as e:
        notes.append(str(e))

    text = table(rows)
    text += "\n\nfh: %d terms, %d overlaps, %d shared terms, %d " \
        "regressions; run: %d CMD lives, %d overlaps, %d orphans, %d term " \
        "errors; %.0f s\n" % (r["terms"], r["overlaps"], r["shared_terms"],
                              r["regressions"], c["lives"], c["overlaps"],
                              c["orphans"], c["term_violations"],
                              time.monotonic() - t0)
    if notes:
        text += "\n" + "\n".join(notes) + "\n"
    print(text)
    if ctx.table:
        with open(ctx.table, "w") as f:
            f.write(text)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
