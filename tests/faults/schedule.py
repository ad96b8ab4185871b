#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""schedule.py: runs the fault schedule of the fault-injection suite.

Called by run-faults.sh once the databases are up (their OL_* variables
exported by tests/integration/lib.sh). For each database and fault it
starts fault-host candidates on a fresh namespace, injects the fault one
or more times, measures how long until a leader claims again, checks the
records with the checker's rules, and prints one table row per database
and fault. Exit status 0 when every positive run is safe and live and
every negative run was caught, else 1.
"""
import argparse
import glob
import importlib.machinery
import importlib.util
import os
import re
import signal
import subprocess
import sys
import time

TTL_MS = 1500
RENEW_MS = 400
MARGIN_MS = 300
CHURN_RENEW_MS = 100  # churn: followers attempt often, transitions are fast
CANDIDATES = 3
NEG_EXTRA_MS = 4 * TTL_MS  # LeaderTestTrustExtra of the negative test

# fault name -> (databases it applies to, needs a new term, short reps,
# long reps)
FAULTS = {
    "kill-9": ("sqlite postgresql mariadb", True, 1, 20),
    "sigstop": ("sqlite postgresql mariadb", True, 1, 20),
    "restart-fast": ("postgresql mariadb", False, 1, 5),
    "restart-immediate": ("postgresql mariadb", False, 1, 5),
    "session-kill": ("postgresql mariadb", False, 1, 20),
    "stall": ("postgresql mariadb", True, 1, 20),
    "faketime": ("postgresql mariadb", True, 1, 20),
    "churn": ("sqlite postgresql mariadb", True, 6, 1000),
    "unreachable": ("postgresql mariadb", False, 1, 5),
    # SQLite has no network to stall, and after a SIGSTOP the resumed
    # ticker may step down before the spinner claims: not deterministic.
    "negative": ("postgresql mariadb", True, 1, 1),
}
FAKE_OFFSETS = ["-7h", "+3h", "+26h"]


def load_checker(path, name="checker"):
    """Imports a checker script (no .py suffix) as module name, without
    writing bytecode into the (maybe read-only) source tree."""
    sys.dont_write_bytecode = True
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def now_ns():
    return time.monotonic_ns()  # CLOCK_MONOTONIC, as the records


def signal_pid(pid, sig):
    """os.kill that lets a process which is already gone be."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def proc_state(pid):
    """The /proc state letter of pid, or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def holds_file_lock(pid):
    """True when process pid holds a POSIX or flock lock (/proc/locks;
    a waiter's "->" lines are not holds)."""
    with open("/proc/locks") as f:
        for line in f:
            fields = line.split()
            if "->" not in fields and len(fields) >= 5 and \
                    fields[4] == str(pid):
                return True
    return False


# Linux system call numbers of the calls a host idles in, by machine.
_SYSCALLS = {
    "x86_64": {"rt_sigtimedwait": 128},
    "aarch64": {"rt_sigtimedwait": 137},
}


def blocked_in(pid, name):
    """True when pid's main thread is blocked in system call name (by
    /proc/PID/syscall); True too on a machine whose number for it is not
    known here, so that callers only lose precision there."""
    nr = _SYSCALLS.get(os.uname().machine, {}).get(name)
    if nr is None:
        return True
    try:
        with open("/proc/%d/syscall" % pid) as f:
            return f.read().split()[0] == str(nr)
    except (OSError, IndexError):
        return False


def stop_unlocked(pid, tries=50, idle=None):
    """SIGSTOPs pid outside any file lock: a SQLite host stopped inside
    its short transaction keeps the database file locked, and nobody can
    be elected until it runs again (docs/reliability.md). With idle (a
    system call name), pid must also be stopped while blocked in it, so
    that what it does first on SIGCONT is known. Waits until pid is
    stopped; while it is not where it should be, continues it and tries
    again a little later. Returns the number of tries that missed;
    raises RuntimeError when every try did."""
    for i in range(tries):
        os.kill(pid, signal.SIGSTOP)
        while proc_state(pid) not in ("T", "t", None):
            time.sleep(0.001)
        if not holds_file_lock(pid) and (idle is None or
                                         blocked_in(pid, idle)):
            return i
        os.kill(pid, signal.SIGCONT)
        time.sleep(0.007 * (i % 5 + 1))
    raise RuntimeError("%d was never stopped outside a file lock%s in %d "
                       "tries" % (pid, "" if idle is None else
                                  " and in " + idle, tries))


def is_cmd_life(pid):
    """True when pid is a live (not zombie) cmd-life process."""
    st = proc_state(pid)
    if st is None or st == "Z":
        return False
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return b"cmd-life" in f.read()
    except OSError:
        return False


def stop_procs(procs, timeout_s=5):
    """SIGTERM (resign) to every running Popen of procs, then waits;
    returns how many did not exit within timeout_s (they are killed)."""
    stuck = 0
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout_s)
        except subprocess.TimeoutExpired:
            stuck += 1
            p.kill()
            p.wait()
    return stuck


def ms(ns):
    return ns / 1e6


class Election:
    """Candidates of one namespace, their proxies and their records."""

    def __init__(self, ctx, db, fault, index, renew_ms=RENEW_MS, extra_ms=0,
                 proxied=False, fake=False):
        self.ctx, self.db = ctx, db
        self.dir = os.path.join(ctx.work, db, "%s-%d" % (fault, index))
        os.makedirs(self.dir)
        self.renew_ms = renew_ms
        self.proxied, self.fake = proxied, fake
        ns = "faults-%s-%d-%d" % (fault, index, os.getpid())
        self.config = "%s;LeaderNamespace=%s;LeaderTTL=%d;" \
            "LeaderRenewInterval=%d;LeaderSafetyMargin=%d" % (
                ctx.connect[db], ns, TTL_MS, renew_ms, MARGIN_MS)
        if extra_ms:
            self.config += ";LeaderTestTrustExtra=%d" % extra_ms
        self.hosts = {}  # pid -> Popen
        self.born = {}  # pid -> spawn time (ns)
        self.fault_end = 0  # when the last fault ended (ns)
        self.proxy_of = {}  # host pid -> proxy Popen
        self.stopped = set()
        self.spawned = 0
        self.log = open(os.path.join(self.dir, "hosts.log"), "ab")

    def spawn(self):
        """Starts one candidate (behind its own proxy when proxied)."""
        config, proxy = self.config, None
        if self.proxied:
            proxy = subprocess.Popen(
                [self.ctx.proxy, "-t", str(self.ctx.port[self.db])],
                stdout=subprocess.PIPE, stderr=self.log)
            port = int(proxy.stdout.readline())
            config = re.sub(r"Port=\d+", "Port=%d" % port, config)
        cmd = [self.ctx.host, "-p", self.ctx.plugin, "-d", self.dir, config]
        if os.environ.get("OL_FAULTS_VERBOSE", "0") != "1":
            cmd.insert(1, "-q")  # plugin log lines only when asked
        env = dict(os.environ)
        if self.fake:
            # libfaketime preloaded directly (the faketime program forks,
            # and the pid must be the candidate's); only the wall clock
            # moves
            env["LD_PRELOAD"] = self.ctx.faketime_lib
            env["FAKETIME"] = FAKE_OFFSETS[self.spawned % len(FAKE_OFFSETS)]
            env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
        p = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, env=env)
        self.spawned += 1
        self.hosts[p.pid] = p
        self.born[p.pid] = now_ns()
        if proxy is not None:
            self.proxy_of[p.pid] = proxy
        return p.pid

    def records(self):
        _, recs = self.ctx.checker.load_run(self.dir)
        return recs

    def headers(self):
        hdrs, _ = self.ctx.checker.load_run(self.dir)
        return hdrs

    def leader(self):
        """(pid, term) of the process claiming right now, or None."""
        recs = self.records()
        if not recs:
            return None
        r = max(recs, key=lambda x: x["last_before"])
        if now_ns() - r["last_before"] < 50e6 and r["pid"] in self.hosts \
                and r["pid"] not in self.stopped:
            return r["pid"], r["term"]
        return None

    def wait_claim(self, ref_ns, min_term, timeout_s):
        """Waits for the first claim at or after ref_ns of a term >=
        min_term. Returns (ms from ref_ns, term, pid) or None on timeout."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            best = None
            for r in self.records():
                if r["last_before"] < ref_ns or r["term"] < min_term:
                    continue
                t = r["first_after"] if r["first_before"] >= ref_ns \
                    else ref_ns
                if best is None or t < best[0]:
                    best = (t, r["term"], r["pid"])
            if best is not None:
                return ms(best[0] - ref_ns), best[1], best[2]
            time.sleep(0.01)
        return None

    def wait_leader(self, timeout_s=10):
        """Waits until some live process claims; returns (pid, term)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            cur = self.leader()
            if cur is not None:
                return cur
            time.sleep(0.01)
        raise RuntimeError("%s: no leader within %d s" % (self.dir, timeout_s))

    def signal_proxy(self, pid, sig):
        self.proxy_of[pid].send_signal(sig)

    def stuck(self):
        """Live candidates whose last good tick is older than TTL + 2
        ticks + the 1 s reconnect backoff cap, counted from the last
        fault's end (or their start, when later) when they have not
        ticked well since. Waits until every candidate has ticked well
        since then or its time is up: measured at once, a follower still
        in its backoff after an outage counted as stuck."""
        limit = (TTL_MS + 2 * self.renew_ms + 1000) * 1e6
        while True:
            t = now_ns()
            last = {h["pid"]: h["last_ok_tick_ns"] for h in self.headers()}
            late, over = 0, 0
            for pid, p in self.hosts.items():
                if p.poll() is not None:
                    continue
                seen = last.get(pid, 0)
                since = max(self.fault_end, self.born[pid])
                stale = t - max(seen, since) > limit
                late += seen < since or stale
                over += stale
            if late == over:
                return over
            time.sleep(0.05)

    def stop_all(self):
        """SIGTERM (resign) every candidate; returns how many did not exit
        within 5 s (they are then killed)."""
        for pid in self.stopped:
            os.kill(pid, signal.SIGCONT)
        stuck = stop_procs(list(self.hosts.values()))
        for p in self.proxy_of.values():
            p.send_signal(signal.SIGTERM)
            p.wait()
        self.log.close()
        return stuck


def tcp_port_of(pid, db_port):
    """The local port of pid's established TCP connection to
    127.0.0.1:db_port, or None."""
    inodes = set()
    fd_dir = "/proc/%d/fd" % pid
    for fd in os.listdir(fd_dir):
        try:
            link = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        m = re.match(r"socket:\[(\d+)\]", link)
        if m:
            inodes.add(m.group(1))
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            next(f)
            for line in f:
                cols = line.split()
                if cols[9] in inodes and cols[3] == "01" and \
                        int(cols[2].split(":")[1], 16) == db_port:
                    return int(cols[1].split(":")[1], 16)
    return None


def lib_call(ctx, func):
    """Runs one lib.sh function in a child bash (it needs only the
    exported OL_* variables)."""
    subprocess.run(["bash", "-c", '. "$1"; %s' % func, "lib", ctx.lib],
                   check=True, stdout=subprocess.DEVNULL)


def kill_session(ctx, db, pid):
    """Has the server end pid's session. The leader may be between
    connections (a reconnect in progress): looks for up to 3 s. Raises
    RuntimeError when no session was ended."""
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        port = tcp_port_of(pid, ctx.port[db])
        if port is not None and end_session(ctx, db, port):
            return
        time.sleep(0.02)
    raise RuntimeError("no database session of pid %d could be ended" % pid)


def end_session(ctx, db, port):
    """Ends the server session whose client uses local port port; returns
    True when the server found one to end."""
    if db == "postgresql":
        sql = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity " \
              "WHERE client_port = %d" % port
        out = subprocess.run(
            ["bash", "-c", '. "$1"; ol_psql "$2"', "lib", ctx.lib, sql],
            check=True, capture_output=True, text=True).stdout.split()
        return "t" in out
    sql = "SELECT ID FROM information_schema.PROCESSLIST WHERE " \
          "HOST = '127.0.0.1:%d'" % port
    out = subprocess.run(
        ["bash", "-c", '. "$1"; ol_mariadb "$2"', "lib", ctx.lib, sql],
        check=True, capture_output=True, text=True).stdout.split()
    for cid in out:
        lib_call(ctx, "ol_mariadb %s" % sh_quote(
            "KILL CONNECTION %d" % int(cid)))
    return bool(out)


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


class Result:
    """Figures of one (database, fault) row."""

    def __init__(self):
        self.runs = 0
        self.transitions = 0
        self.overlaps = 0
        self.shared = 0
        self.regressions = 0
        self.times = []
        self.liveness_failures = 0
        self.stuck = 0
        self.frozen_lock = 0  # SQLite: stopped while holding the file lock
        self.violations = []
        self.seconds = 0.0


def inject(ctx, el, db, fault, res, limit_ms):
    """One injection of fault into election el; appends the time to a
    leader to res.times. Returns nothing; records a liveness failure when
    no leader claims within limit_ms of the fault's end."""
    for p in el.hosts.values():
        p.poll()  # reap candidates that exited
    pid, term = el.wait_leader()
    time.sleep(el.renew_ms / 1000.0)  # a renewal or two as leader
    pid, term = el.wait_leader()
    min_term = term + 1 if FAULTS[fault][1] else 1
    hold_s = (TTL_MS + 700) / 1000.0  # faults that last longer than TTL
    if fault in ("kill-9", "faketime"):
        os.kill(pid, signal.SIGKILL)
        ref = now_ns()
        del el.hosts[pid]
        el.spawn()
    elif fault == "churn":
        el.hosts[pid].send_signal(signal.SIGTERM)
        ref = now_ns()
        el.spawn()
    elif fault in ("sigstop", "negative") and db == "sqlite" or \
            fault == "sigstop":
        os.kill(pid, signal.SIGSTOP)
        el.stopped.add(pid)
        ref = now_ns()
        if db == "sqlite" and holds_file_lock(pid):
            # Frozen inside a transaction: the SQLite file stays locked and
            # nobody can be elected until it runs again. The fault then
            # ends at SIGCONT, and any leader will do.
            time.sleep(hold_s)
            os.kill(pid, signal.SIGCONT)
            el.stopped.discard(pid)
            ref, min_term = now_ns(), 1
            res.frozen_lock += 1
    elif fault in ("stall", "negative"):
        el.signal_proxy(pid, signal.SIGUSR1)
        ref = now_ns()
    elif fault.startswith("restart-"):
        mode = fault.split("-", 1)[1]
        lib_call(ctx, "ol_restart_pg %s" % mode if db == "postgresql"
                 else "ol_restart_mariadb %s" % mode)
        ref = now_ns()
    elif fault == "session-kill":
        kill_session(ctx, db, pid)
        ref = now_ns()
    elif fault == "unreachable":
        for p in list(el.proxy_of):
            el.signal_proxy(p, signal.SIGHUP)
        time.sleep(hold_s)
        for p in list(el.proxy_of):
            el.signal_proxy(p, signal.SIGUSR2)
        ref = now_ns()
    else:
        raise ValueError(fault)
    got = el.wait_claim(ref, min_term, (limit_ms + 3000) / 1000.0)
    res.runs += 1
    if got is None or got[0] > limit_ms:
        res.liveness_failures += 1
        res.violations.append("%s/%s: no leader within %d ms (%s)" % (
            db, fault, limit_ms, "none" if got is None else
            "%.0f ms" % got[0]))
    if got is not None:
        res.times.append(got[0])
    if pid in el.stopped or pid in el.proxy_of and \
            fault in ("stall", "negative"):
        # the fault ends after more than a TTL; the old leader resumes
        rest = hold_s - ms(now_ns() - ref) / 1000.0
        if rest > 0:
            time.sleep(rest)
        if pid in el.stopped:
            os.kill(pid, signal.SIGCONT)
            el.stopped.discard(pid)
        else:
            el.signal_proxy(pid, signal.SIGUSR2)
    el.fault_end = now_ns()
    if fault in ("sigstop", "stall", "negative"):
        time.sleep(2 * el.renew_ms / 1000.0)  # the resumed one acts now


def run_fault(ctx, db, fault, reps, res):
    """Runs reps injections of fault on db in elections of CANDIDATES
    candidates; adds the figures to res."""
    renew = CHURN_RENEW_MS if fault == "churn" else RENEW_MS
    limit_ms = TTL_MS + 2 * renew
    proxied = fault in ("stall", "unreachable") or \
        (fault == "negative" and db != "sqlite")
    per_election = 100 if fault == "churn" else 10
    done, index = 0, 0
    # The negative run is repeated (at most 3 times) only when a SQLite
    # leader froze inside a transaction, which makes an overlap impossible.
    while done < reps or fault == "negative" and res.overlaps == 0 and \
            res.frozen_lock >= index and index < 3:
        n = max(1, min(per_election, reps - done))
        el = Election(ctx, db, fault, index, renew_ms=renew,
                      extra_ms=NEG_EXTRA_MS if fault == "negative" else 0,
                      proxied=proxied, fake=fault == "faketime")
        stuck = 0
        try:
            for _ in range(CANDIDATES):
                el.spawn()
            for _ in range(n):
                inject(ctx, el, db, fault, res, limit_ms)
            if fault != "negative":
                el.wait_leader()
                stuck = el.stuck()
        finally:
            stuck += el.stop_all()
        res.stuck += stuck
        r = ctx.checker.check(el.records())
        res.transitions += r["transitions"]
        res.overlaps += r["overlaps"]
        res.shared += r["shared_terms"]
        res.regressions += r["regressions"]
        res.violations += ["%s/%s: %s" % (db, fault, v)
                           for v in r["violations"]]
        done += n
        index += 1


def pct(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def table(rows):
    """The figures as a Markdown table."""
    out = ["| database | fault | runs | transitions | overlaps | "
           "to leader median ms | p99 ms | max ms | stuck | liveness | "
           "seconds |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for db, fault, r in rows:
        neg = fault == "negative"
        live = "caught" if neg and r.overlaps > 0 else \
            "NOT CAUGHT" if neg else \
            "ok" if r.liveness_failures == 0 else \
            "%d late" % r.liveness_failures
        if r.frozen_lock:
            live += " (%d frozen in a transaction)" % r.frozen_lock
        out.append("| %s | %s | %d | %d | %d | %.0f | %.0f | %.0f | %d | %s "
                   "| %.0f |" % (db, fault, r.runs, r.transitions,
                                 r.overlaps, pct(r.times, 50),
                                 pct(r.times, 99),
                                 max(r.times) if r.times else float("nan"),
                                 r.stuck, live, r.seconds))
    return "\n".join(out)


def verdict(db, fault, r):
    """Messages that make the schedule fail, for one row."""
    if fault == "negative":
        return [] if r.overlaps > 0 else [
            "%s/negative: the checker did not catch the broken protocol" % db]
    return r.violations + (["%s/%s: %d stuck candidates" % (db, fault,
                                                            r.stuck)]
                           if r.stuck else [])


def db_connects(ctx, sqlite_file):
    """Sets ctx.connect (database -> connection string) and ctx.port
    (server -> TCP port) from the OL_* variables of tests/integration/
    lib.sh, with SQLite on sqlite_file. MariaDB gets client timeouts that a
    stalled network outlasts (Connector/ODBC ignores the ODBC ones)."""
    ctx.connect, ctx.port = {}, {}
    ctx.connect["sqlite"] = "Driver=SQLite3;Database=%s" % sqlite_file
    if "OL_PG_CONNECT" in os.environ:
        ctx.connect["postgresql"] = os.environ["OL_PG_CONNECT"]
        ctx.port["postgresql"] = int(os.environ["OL_PG_PORT"])
    if "OL_MARIADB_CONNECT" in os.environ:
        c = re.sub(r";(CONN|READ|WRITE)_TIMEOUT=\d+", "",
                   os.environ["OL_MARIADB_CONNECT"])
        ctx.connect["mariadb"] = c + \
            ";CONN_TIMEOUT=2;READ_TIMEOUT=2;WRITE_TIMEOUT=2"
        ctx.port["mariadb"] = int(os.environ["OL_MARIADB_PORT"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("short", "long"), default="short")
    ap.add_argument("--db", default="sqlite,postgresql,mariadb")
    ap.add_argument("--faults", default=",".join(FAULTS))
    ap.add_argument("--host", required=True)
    ap.add_argument("--proxy", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--checker", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--table", default=None)
    args = ap.parse_args()

    ctx = args
    ctx.checker = load_checker(args.checker)
    db_connects(ctx, os.path.join(os.environ["OL_TMP"], "faults.db"))
    libs = glob.glob("/usr/lib/*/faketime/libfaketimeMT.so.1") + \
        glob.glob("/usr/lib*/faketime/libfaketimeMT.so.1")
    ctx.faketime_lib = libs[0] if libs else None
    rows, failures = [], []
    for db in args.db.split(","):
        for fault in args.faults.split(","):
            dbs, _, short, long_ = FAULTS[fault]
            if db not in dbs.split():
                continue
            if fault == "faketime" and ctx.faketime_lib is None:
                failures.append("faketime: libfaketimeMT.so.1 not found "
                                "(Debian package faketime)")
                continue
            res = Result()
            t0 = time.monotonic()
            try:
                reps = short if args.mode == "short" else long_
                reps = int(os.environ.get("OL_FAULTS_REPS", reps))
                run_fault(ctx, db, fault, reps, res)
            except (RuntimeError, subprocess.CalledProcessError) as e:
                res.violations.append("%s/%s: %s" % (db, fault, e))
            res.seconds = time.monotonic() - t0
            rows.append((db, fault, res))
            failures += verdict(db, fault, res)
            print("%s/%s: %d runs, %d transitions, %d overlaps, %.1f s" % (
                db, fault, res.runs, res.transitions, res.overlaps,
                res.seconds), file=sys.stderr, flush=True)
    text = table(rows)
    print(text)
    if args.table:
        with open(args.table, "w") as f:
            f.write(text + "\n")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
