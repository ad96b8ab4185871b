#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""cmd-schedule.py: the fault schedule of `odbc-leader run`, checked at the
level users rely on: CMD lifetimes.

Called by cmd.test once the databases are up (their OL_* variables
exported by tests/integration/lib.sh). For each database and fault it
starts CANDIDATES candidates on a fresh namespace, each a service loop
that runs

    odbc-leader run --id cand-N -C "CONN;LeaderTTL=...;..." -n NS \\
        --grace 1000ms -- cmd-life RUNDIR --term-delay MS --child

and starts it again whenever it exits, as a service manager would
(tests/lib/harness.py RunService: never after exit 64 or 78, usage or
configuration, however late it came; the election then fails). Every
CMD (cmd-life) records its life in RUNDIR (see cmd-life.c). The schedule
finds the leader (the candidate whose CMD is alive with the newest start),
injects the fault, waits for the next CMD to start (liveness), then stops
everything with SIGTERM, looks for cmd-life processes still alive and has
cmdcheck judge the lives. One Markdown table row per database and fault.

Faults (short schedule: each once; --long: LONG_REPS times):
  resign     `odbc-leader resign` while CMD needs 800 ms to exit after
             SIGTERM: CMD must be gone before another CMD starts
  resign-to  the same with --to a live follower, which must be next
  kill-9     SIGKILL of the leader's run: CMD must die within
             cmdcheck.ORPHAN_BOUND_MS
  sigstop    SIGSTOP of the leader's run for TTL + 1500 ms (SQLite: when
             it froze holding the file lock nobody can be elected; counted
             as "frozen")
  deaf       CMD ignores SIGTERM; a resign request: CMD must be SIGKILLed
             after --grace, before any other CMD starts
  stall      (PostgreSQL, MariaDB) the leader's own fault-proxy stops
             forwarding for TTL + 1500 ms
  db-lock    another session locks the lease table for 4.5 s (PostgreSQL
             LOCK TABLE, MariaDB LOCK TABLES, SQLite BEGIN EXCLUSIVE)
  db-read    (SQLite) a reader holds its shared lock for 4.5 s, which
             blocks a writer's COMMIT in rollback-journal mode
--negative: LeaderTestTrustExtra (the trust window outlives the lease, a
deliberate bug) with the sigstop fault on PostgreSQL and MariaDB; passes
only when cmdcheck reports an overlap on each.

OL_CMD_REPS=N sets the injections per fault (default 1, --long 10).
Exit status 0 when every run is safe and live (--negative: every broken
run was caught), else 1.
"""
import argparse
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import threading
import time

# tests/lib: processes and services (the run service loop among them) and
# the record loader; no bytecode is written into the (maybe read-only)
# source tree
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "lib"))
import harness  # noqa: E402
import records  # noqa: E402

now_ns, ms = harness.now_ns, harness.ms
is_cmd_life = harness.is_cmd_life

TTL_MS = 3000
RENEW_MS = 500
MARGIN_MS = 500
STATEMENT_MS = 500
GRACE = "1000ms"  # within TTL - margin - renew - statement - 100 ms
TERM_DELAY_MS = 300  # CMD's exit after SIGTERM
SLOW_TERM_DELAY_MS = 800  # resign, resign-to: a slow CMD
HOLD_MS = TTL_MS + 1500  # sigstop, stall
DB_LOCK_S = 4.5  # db-lock, db-read
LIVENESS_MS = TTL_MS + 3000  # a CMD runs again this soon after a fault
CANDIDATES = 3
NEG_EXTRA_MS = 12000  # LeaderTestTrustExtra of --negative
STOP_WAIT_S = 10  # SIGTERM to SIGKILL of the runs at the end
RESTART_DELAY_S = 0.1  # the service loop's restart delay
FIRST_LEADER_S = 15  # the first CMD of an election starts this soon
RESIGN_TRIES = 10  # resign exits 82 (nobody leads) this often at most
LONG_REPS = 10
ALL = "sqlite postgresql mariadb"
SERVERS = "postgresql mariadb"

# fault -> databases it applies to
FAULTS = {
    "resign": ALL,
    "resign-to": ALL,
    "kill-9": ALL,
    "sigstop": ALL,
    "deaf": ALL,
    "stall": SERVERS,
    "db-lock": ALL,
    "db-read": "sqlite",
}


class Election(harness.RunService):
    """The candidates of one namespace under their service loops
    (harness.RunService, one thread for all), their proxies (stall) and
    their records. ctx: connect, port, odbc_leader, life, proxy, work;
    timing: (TTL, renew interval, safety margin, statement timeout) in ms,
    grace (run --grace) and restart_delay_s (the service loop's) default
    to this schedule's."""

    def __init__(self, ctx, db, fault, index, extra_ms=0, timing=None,
                 grace=GRACE, restart_delay_s=RESTART_DELAY_S):
        self.dir = os.path.join(ctx.work, db, "%s-%d" % (fault, index))
        os.makedirs(self.dir)
        harness.RunService.__init__(self, restart_delay_s,
                                    "%s/runs.log" % self.dir)
        self.ctx, self.db, self.fault = ctx, db, fault
        self.ns = "cmd-%s-%d-%d" % (fault, index, os.getpid())
        self.proxied = fault == "stall"
        self.base = ctx.connect[db]
        self.ttl_ms = (timing or (TTL_MS,))[0]
        self.conn = "%s;LeaderTTL=%d;LeaderRenewInterval=%d;" \
            "LeaderSafetyMargin=%d;LeaderStatementTimeout=%d" % (
                (self.base,) + tuple(timing or (TTL_MS, RENEW_MS, MARGIN_MS,
                                                STATEMENT_MS)))
        if extra_ms:
            self.conn += ";LeaderTestTrustExtra=%d" % extra_ms
        self.grace = grace
        self.verbose = os.environ.get("OL_CMD_VERBOSE", "0") == "1"
        self.life_args = ["--child", "--term-delay", str(
            SLOW_TERM_DELAY_MS if fault in ("resign", "resign-to")
            else TERM_DELAY_MS)]
        if fault == "deaf":
            self.life_args.append("--deaf")
        for i in range(CANDIDATES):
            self.add("cand-%d" % (i + 1))
        self.log = open(os.path.join(self.dir, "runs.log"), "ab")

    # ---- the service loops ----

    def start(self):
        """Starts the proxies (network faults) and the service loops."""
        for c in self.cands:
            if self.proxied:
                c.proxy = harness.Proxy(self.ctx.proxy,
                                        self.ctx.port[self.db],
                                        log_file=self.log)
                c.port = c.proxy.port
        harness.RunService.start(self)

    def run_argv(self, c):
        """The command line of one run of candidate c: its own port (its
        proxy's) in the connection string."""
        conn = self.conn
        if c.port is not None:
            conn = harness.with_port(conn, c.port)
        cmd = [self.ctx.odbc_leader, "run", "--id", c.id, "-C", conn, "-n",
               self.ns, "--grace", self.grace, "--", self.ctx.life,
               self.dir] + self.life_args
        if self.verbose:
            cmd.insert(2, "-v")
        return cmd

    def popen(self, c):
        return harness.spawn(self.run_argv(c), self.log)

    # ---- what the records say ----

    def lives(self):
        """Every published life in the run directory."""
        return records.load_lives(self.dir, partial_ok=True)

    def leader(self):
        """(life, candidate) of the CMD alive with the newest start (not a
        --child, no stop signal yet, heartbeat in the last 50 ms), or
        None."""
        t = now_ns()
        best = None
        for life in self.lives():
            if life["child"] or life["end"] or life["sigterm"] or \
                    t - life["beat"] > 50e6:
                continue
            if best is None or life["start"] > best["start"]:
                best = life
        if best is None:
            return None
        return best, self.cand(best["id"])

    def wait_leader(self, timeout_s):
        """Waits until a CMD runs under a live run; returns (life,
        candidate)."""
        def live():
            self.check_fatal()
            cur = self.leader()
            if cur is not None:
                with self.lock:
                    pid = cur[1].run_pid()
                if pid is not None and pid not in self.stopped:
                    return cur
            return None
        got = harness.wait_for(live, timeout_s)
        if got is None:
            raise RuntimeError("%s: no CMD within %d s" % (self.dir,
                                                           timeout_s))
        return got

    def first_cmd_since(self, ref_ns):
        """The earliest CMD (not a child) started at or after ref_ns, or
        None."""
        got = [l for l in self.lives() if not l["child"] and
               l["start"] >= ref_ns]
        return min(got, key=lambda l: l["start"]) if got else None

    # ---- faults ----

    def odbc_leader(self, *args):
        """Runs an odbc-leader operator command on the direct connection
        (never through a proxy); returns (status, stdout)."""
        p = subprocess.run([self.ctx.odbc_leader] + list(args) +
                           ["-C", self.conn, "-n", self.ns],
                           stdout=subprocess.PIPE, stderr=self.log,
                           text=True, timeout=30)
        return p.returncode, p.stdout

    def resign(self, to=None):
        """`odbc-leader resign [--to ID]`, retried while it exits 82 (no
        leader at that instant, e.g. between a renewal and a take-over)."""
        args = ["resign"] + (["--to", to] if to else [])
        for _ in range(RESIGN_TRIES):
            rc, _ = self.odbc_leader(*args)
            if rc == 0:
                return
            if rc != 82:
                raise RuntimeError("odbc-leader resign exited %d" % rc)
            time.sleep(0.2)
        raise RuntimeError("odbc-leader resign: no leader %d times" %
                           RESIGN_TRIES)

    def follower(self, leader_id):
        """A live follower from `odbc-leader status --json` whose service
        loop has a run going."""
        rc, out = self.odbc_leader("status", "--json")
        if rc != 0:
            raise RuntimeError("odbc-leader status exited %d" % rc)
        for c in json.loads(out)["candidates"]:
            if c["id"] != leader_id and not c["leader"] and \
                    c["heartbeat_age_ms"] < self.ttl_ms:
                with self.lock:
                    if self.cand(c["id"]).run_pid() is not None:
                        return c["id"]
        raise RuntimeError("no live follower to resign to: %s" % out.strip())

    # ---- the end ----

    def stop(self):
        """Stops every run with SIGTERM (SIGKILL, recorded as a death,
        after STOP_WAIT_S), then lists the cmd-life processes still alive
        (alive.json) and kills them, writes runs.json, stops the proxies.
        Returns (runs SIGKILLed, pids still alive)."""
        for c in self.cands:
            if c.proxy is not None:
                c.proxy.resume()
        self.begin_stop()
        killed = self.end_stop(STOP_WAIT_S)
        alive = self.finish(self.dir, self.ctx.checker.ORPHAN_BOUND_MS,
                            killed)
        for c in self.cands:
            if c.proxy is not None:
                c.proxy.stop()
        self.log.close()
        return killed, alive


class Locker:
    """db-lock, db-read: another session holds a lock on the lease table
    for DB_LOCK_S, in the background. start() returns once the lock is
    held (SQLite) or the client is started (servers); ended_ns is set when
    the lock is gone."""

    def __init__(self, ctx, db, mode):
        self.ctx, self.db, self.mode = ctx, db, mode
        self.ended_ns = None
        self.error = None
        self.thread = None

    def start(self):
        ready = threading.Event()
        self.thread = threading.Thread(target=self._hold, args=(ready,),
                                       daemon=True)
        self.thread.start()
        ready.wait(30)

    def _hold(self, ready):
        try:
            if self.db == "sqlite":
                self._sqlite(ready)
            else:
                self._server(ready)
        except Exception as e:  # reported by the schedule
            self.error = "%s %s: %s" % (self.db, self.mode, e)
            ready.set()
        self.ended_ns = now_ns()

    def _sqlite(self, ready):
        """BEGIN EXCLUSIVE (db-lock), or a read transaction (db-read: its
        shared lock keeps a writer from committing), on the candidates'
        file, from this process."""
        c = sqlite3.connect(self.ctx.sqlite_file, isolation_level=None,
                            timeout=10)
        try:
            if self.mode == "db-lock":
                c.execute("BEGIN EXCLUSIVE")
            else:
                c.execute("BEGIN")
                c.execute("SELECT * FROM odbc_leader_lease").fetchall()
            ready.set()
            time.sleep(DB_LOCK_S)
            c.execute("COMMIT")
        finally:
            c.close()

    def _server(self, ready):
        """The lock from the servers' own clients (tests/integration/lib.sh
        ol_psql, ol_mariadb as root over the socket)."""
        if self.db == "postgresql":
            func = "ol_psql"
            sql = "BEGIN; LOCK TABLE odbc_leader_lease IN ACCESS EXCLUSIVE " \
                "MODE; SELECT pg_sleep(%s); COMMIT;" % DB_LOCK_S
        else:
            func = "ol_mariadb"
            sql = "LOCK TABLES odbc_leader_lease WRITE; DO SLEEP(%s); " \
                "UNLOCK TABLES;" % DB_LOCK_S
        p = self.ctx.shell.popen('%s "$1"' % func, sql,
                                 stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        ready.set()
        _, err = p.communicate(timeout=60)
        if p.returncode != 0:
            raise RuntimeError("%s exited %d: %s" % (func, p.returncode,
                                                     err.strip()))


class Result:
    """Figures of one (database, fault) row."""

    def __init__(self):
        self.runs = 0  # injections
        self.lives = 0
        self.overlaps = 0
        self.overlap_worst_ms = 0.0
        self.orphans = 0
        self.terms = 0
        self.handoffs = []  # fault start to the next CMD's start, ms
        self.cmd_gaps = []  # old CMD's last heartbeat to the next start
        self.liveness_failures = 0
        self.frozen = 0  # SQLite: stopped while holding the file lock
        self.killed_at_stop = 0  # runs that ignored SIGTERM for 10 s
        self.after_kill_ms = 0.0  # longest CMD life after its run's kill
        self.exits = {}  # run exit status -> count
        self.violations = []
        self.seconds = 0.0


def inject(ctx, el, res):
    """One injection of el.fault: finds the leader, injects, waits for the
    next CMD (liveness) and for the fault to end. Returns (old leader's
    CMD pid, next CMD's pid or None) for the CMD-to-CMD gap."""
    db, fault = el.db, el.fault
    el.wait_leader(FIRST_LEADER_S)
    time.sleep(RENEW_MS / 1000.0 + 0.1)  # a renewal or so as leader
    old, c = el.wait_leader(FIRST_LEADER_S)
    pending = []  # (time ns, action) still to do: the fault's end
    end_ns = None  # the fault's end, liveness runs from it
    target = None
    locker = None
    if fault in ("resign", "deaf"):
        ref = now_ns()
        el.resign()
        end_ns = ref
    elif fault == "resign-to":
        target = el.follower(c.id)
        ref = now_ns()
        el.resign(target)
        end_ns = ref
    elif fault == "kill-9":
        _, ref = el.kill_run(c, signal.SIGKILL)
        end_ns = ref
    elif fault == "sigstop":
        pid, ref = el.kill_run(c, signal.SIGSTOP)  # back once stopped
        end_ns = ref

        def cont(pid=pid):
            el.cont(pid)
        if db == "sqlite" and harness.holds_file_lock(pid):
            # Frozen inside a transaction: the file stays locked and
            # nobody can be elected until it runs again. The fault ends at
            # SIGCONT; it cannot overlap meanwhile.
            time.sleep(HOLD_MS / 1000.0)
            cont()
            res.frozen += 1
            end_ns = now_ns()
        else:
            pending.append((ref + HOLD_MS * 1e6, cont))
    elif fault == "stall":
        c.proxy.stall()
        ref = end_ns = now_ns()
        pending.append((ref + HOLD_MS * 1e6, c.proxy.resume))
    elif fault in ("db-lock", "db-read"):
        locker = Locker(ctx, db, fault)
        locker.start()
        ref = now_ns()
    else:
        raise ValueError(fault)
    # Waits for the next CMD while the fault runs its course.
    nxt = None
    while True:
        el.check_fatal()
        t = now_ns()
        for item in [p for p in pending if p[0] <= t]:
            pending.remove(item)
            item[1]()
        if locker is not None and locker.ended_ns is not None:
            end_ns = locker.ended_ns
            if locker.error:
                raise RuntimeError(locker.error)
        if nxt is None:
            nxt = el.first_cmd_since(ref)
        late = end_ns is not None and t > end_ns + LIVENESS_MS * 1e6
        if (nxt is not None or late) and not pending and \
                (locker is None or locker.ended_ns is not None):
            break
        time.sleep(0.01)
    res.runs += 1
    if nxt is None or end_ns is not None and \
            nxt["start"] > end_ns + LIVENESS_MS * 1e6:
        res.liveness_failures += 1
        res.violations.append("%s/%s: no CMD within %d ms of the fault's end"
                              % (db, fault, LIVENESS_MS))
    if nxt is not None:
        res.handoffs.append(ms(nxt["start"] - ref))
        if target is not None and nxt["id"] != target:
            res.violations.append("%s/%s: resign --to %s, but the next CMD "
                                  "ran on %s" % (db, fault, target,
                                                 nxt["id"]))
    time.sleep(2 * RENEW_MS / 1000.0)  # a resumed run acts now
    return old["pid"], None if nxt is None else nxt["pid"]


def run_fault(ctx, db, fault, reps, res, extra_ms=0):
    """Runs reps injections of fault on db in one election; adds the
    figures to res."""
    el = Election(ctx, db, fault, 0, extra_ms=extra_ms)
    handovers = []
    try:
        el.start()
        for _ in range(reps):
            handovers.append(inject(ctx, el, res))
    except (RuntimeError, OSError, ValueError,
            subprocess.SubprocessError) as e:
        # the schedule could not go on (no CMD, a failed command): a
        # failure, and the lives so far are still checked
        res.violations.append("%s/%s: %s" % (db, fault, e))
        res.liveness_failures += 1
    finally:
        killed, _ = el.stop()
        res.killed_at_stop += killed
        for r in el.runs:
            res.exits[r["rc"]] = res.exits.get(r["rc"], 0) + 1
    lives, runs, alive = records.load_cmd_run(el.dir)
    r = ctx.checker.check(lives, runs, alive)
    by_pid = {l["pid"]: l for l in lives}
    for old, new in handovers:
        if new is not None:
            res.cmd_gaps.append(ms(by_pid[new]["start"] -
                                   by_pid[old]["last"]))
    res.lives += r["lives"]
    res.overlaps += r["overlaps"]
    res.overlap_worst_ms = max(res.overlap_worst_ms, r["overlap_worst_ms"])
    res.orphans += r["orphans"]
    res.after_kill_ms = max(res.after_kill_ms, r["after_kill_max_ms"])
    res.terms += r["term_violations"]
    res.violations += ["%s/%s: %s" % (db, fault, v) for v in r["violations"]]


def fmt(values, f):
    return "%.0f" % f(values) if values else "-"


def table(rows, negative):
    """The figures as a Markdown table. runs = fault injections; lives =
    cmd-life processes (CMDs and their --child); handoff = fault start to
    the next CMD's start; CMD gap = the old leader's CMD's last heartbeat
    to the next CMD's start (negative: they overlapped)."""
    out = ["| database | fault | runs | lives | overlaps | worst overlap ms "
           "| orphans | term errors | handoff median ms | max ms | "
           "CMD gap min ms | liveness | seconds |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for db, fault, r in rows:
        if negative:
            live = "caught" if r.overlaps > 0 else "NOT CAUGHT"
        else:
            live = "ok" if r.liveness_failures == 0 else \
                "%d late" % r.liveness_failures
        if r.frozen:
            live += " (%d frozen)" % r.frozen
        out.append("| %s | %s | %d | %d | %d | %.0f | %d | %d | %s | %s | %s "
                   "| %s | %.0f |" % (
                       db, fault, r.runs, r.lives, r.overlaps,
                       r.overlap_worst_ms, r.orphans, r.terms,
                       fmt(r.handoffs, statistics.median),
                       fmt(r.handoffs, max), fmt(r.cmd_gaps, min), live,
                       r.seconds))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--long", action="store_true",
                    help="each fault %d times" % LONG_REPS)
    ap.add_argument("--negative", action="store_true")
    ap.add_argument("--db", default=None)
    ap.add_argument("--faults", default=",".join(FAULTS))
    ap.add_argument("--odbc-leader", required=True)
    ap.add_argument("--life", required=True)
    ap.add_argument("--proxy", required=True)
    ap.add_argument("--checker", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--table", default=None)
    args = ap.parse_args()

    ctx = args
    ctx.checker = harness.load_script(args.checker, "cmdcheck")
    ctx.shell = harness.Shell(args.lib)
    ctx.sqlite_file = os.path.join(os.environ["OL_TMP"], "cmd.db")
    harness.db_connects(ctx, ctx.sqlite_file)
    if args.negative:
        dbs = args.db or "postgresql,mariadb"
        faults = "sigstop"
    else:
        dbs = args.db or "sqlite,postgresql,mariadb"
        faults = args.faults
    rows, failures = [], []
    for db in dbs.split(","):
        for fault in faults.split(","):
            if db not in FAULTS[fault].split():
                continue
            res = Result()
            t0 = time.monotonic()
            reps = int(os.environ.get("OL_CMD_REPS",
                                      LONG_REPS if args.long else 1))
            try:
                run_fault(ctx, db, fault, reps, res,
                          extra_ms=NEG_EXTRA_MS if args.negative else 0)
            except (RuntimeError, OSError, ValueError,
                    subprocess.SubprocessError) as e:
                res.violations.append("%s/%s: %s" % (db, fault, e))
                res.liveness_failures += 1
            res.seconds = time.monotonic() - t0
            rows.append((db, fault, res))
            if args.negative:
                if res.overlaps == 0:
                    failures.append("%s/%s: the broken protocol was not "
                                    "caught" % (db, fault))
            else:
                failures += res.violations
            print("%s/%s: %d runs, %d lives, %d overlaps, %d orphans "
                  "(CMD after its run's kill: %.0f ms), run exit statuses "
                  "%s (%d SIGKILLed at the end), %.1f s" % (
                      db, fault, res.runs, res.lives, res.overlaps,
                      res.orphans, res.after_kill_ms, ", ".join(
                          "%s:%d" % kv for kv in sorted(
                              res.exits.items(), key=str)),
                      res.killed_at_stop, res.seconds),
                  file=sys.stderr, flush=True)
            for v in res.violations:
                print("  %s" % v, file=sys.stderr, flush=True)
    text = table(rows, args.negative)
    print(text)
    if args.table:
        with open(args.table, "w") as f:
            f.write(text + "\n")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
