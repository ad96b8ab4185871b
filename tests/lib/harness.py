#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""harness.py: starting, signalling, pausing and watching the processes and
database services of every fault schedule (tests/faults/*schedule.py,
tests/cluster/*.py, tests/contrib/minicron_claims.py and
scheduler_fires.py, bench/bench-handoff.py).

    python3 harness.py --self-test     the rules below, on real processes

What it holds:
  clocks and deadlines  now_ns() (CLOCK_MONOTONIC, the clock of every
                        record), wait_for()
  scripts               load_script(): imports an extensionless checker
                        without writing bytecode into the source tree
  processes             spawn(), terminate(), signal_pid(), proc_state(),
                        children_of(), is_cmd_life(); pause() and
                        stop_unlocked() (below); LogSink and pump(), which
                        keep every line a candidate writes with its time
  fault-proxy           Proxy: stall (SIGUSR1), cut (SIGHUP), resume
                        (SIGUSR2), stop
  databases             db_connects() (the OL_* variables of
                        tests/integration/lib.sh), Shell (lib.sh and
                        friends in a child bash: ol_psql, ol_mariadb,
                        restarts), restart_db(), kill_session()
  the run service loop  RunService: `odbc-leader run` candidates restarted
                        after they exit, as a service manager would

Settled rules (each pinned by --self-test):
  * a pause is complete when the process shows as stopped in /proc (state
    T): pause() waits for it, so that what the process holds (a SQLite
    file lock) is read once it can no longer change; it was read right
    after the SIGSTOP in one copy, before the signal had landed;
  * stop_unlocked() stops a process outside any file lock (and, asked, only
    while it is blocked in a given system call), or fails after its tries;
  * the run service loop never starts a candidate again once a run exited
    64 (usage) or 78 (configuration), however long it ran: that is what
    the shipped systemd unit does (RestartPreventExitStatus=64 78), and
    the library refuses a configuration after connecting too (a transaction
    pooler behind LeaderPooler=session), which a loaded machine makes
    later than any fixed window. One copy of the loop held to that only
    within 1 s of the start and restarted a later refusal for ever. An exit
    while the harness stops the runs is never a refusal.
"""
import glob
import importlib.machinery
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # the source tree may be read-only
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import records  # noqa: E402


# ---- clocks and deadlines ---------------------------------------------------

def now_ns():
    """CLOCK_MONOTONIC in ns: the clock of every record the hosts write."""
    return time.monotonic_ns()


def ms(ns):
    return ns / 1e6


def wait_for(pred, timeout_s, poll_s=0.01):
    """Calls pred until it returns something true, at most timeout_s;
    returns that value, or None at the deadline."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = pred()
        if got:
            return got
        if time.monotonic() >= deadline:
            return None
        time.sleep(poll_s)


def log(msg):
    """A line on stderr behind the wall-clock time."""
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr,
          flush=True)


# ---- scripts ----------------------------------------------------------------

def load_script(path, name):
    """Imports the Python script at path (any file name, such as the
    extensionless checkers) as module name, writing no bytecode."""
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


# ---- processes --------------------------------------------------------------

def spawn(argv, log_file, env=None, stdout=None):
    """Starts argv with stdin from /dev/null and its output appended to
    log_file (an open binary file); stdout may go elsewhere (a pipe)."""
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                            stdout=log_file if stdout is None else stdout,
                            stderr=log_file, env=env)


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


def terminate(procs, timeout_s=10):
    """SIGCONT and SIGTERM (resign) to every running Popen of procs (a
    stopped process acts on SIGTERM only once continued), then waits for
    each; returns how many did not exit within timeout_s (killed)."""
    stuck = 0
    for p in procs:
        if p.poll() is None:
            signal_pid(p.pid, signal.SIGCONT)
            signal_pid(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout_s)
        except subprocess.TimeoutExpired:
            stuck += 1
            p.kill()
            p.wait()
    return stuck


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


def wait_stopped(pid, timeout_s=1.0):
    """Waits until pid shows as stopped (T, t) in /proc, or is gone.
    Returns True when it did within timeout_s."""
    return bool(wait_for(lambda: proc_state(pid) in ("T", "t", None),
                         timeout_s, 0.001))


def pause(pid, timeout_s=1.0):
    """SIGSTOP to pid, and waits until it is stopped (what it holds, such
    as a SQLite file lock, can no longer change). Returns the time of the
    signal (now_ns)."""
    os.kill(pid, signal.SIGSTOP)
    t = now_ns()
    wait_stopped(pid, timeout_s)
    return t


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
        pause(pid, 5.0)
        if not holds_file_lock(pid) and (idle is None or
                                         blocked_in(pid, idle)):
            return i
        os.kill(pid, signal.SIGCONT)
        time.sleep(0.007 * (i % 5 + 1))
    raise RuntimeError("%d was never stopped outside a file lock%s in %d "
                       "tries" % (pid, "" if idle is None else
                                  " and in " + idle, tries))


def pump(pipe, path, t0_ns):
    """Copies the lines of a child's output to path, each behind the ms
    since t0_ns (CLOCK_MONOTONIC), from a thread of its own."""
    def run():
        with open(path, "ab", buffering=0) as f:
            for line in iter(pipe.readline, b""):
                f.write(b"%.0f %s" % ((now_ns() - t0_ns) / 1e6, line))
        pipe.close()
    threading.Thread(target=run, daemon=True).start()


class LogSink:
    """Every candidate's output, one event per log message with the time
    it arrived, kept in memory and written to path. classify(src, line)
    gives a message's severity ('error', 'warning' or None); a line that
    does not start with starts(src) continues the message before it (a
    driver's message that spans lines)."""

    def __init__(self, path, classify, starts):
        self.lock = threading.Lock()
        self.events = []  # [ns, src, severity, text]
        self.f = open(path, "a")
        self.threads = []
        self.classify, self.starts = classify, starts

    def attach(self, src, stream):
        t = threading.Thread(target=self._pump, args=(src, stream),
                             daemon=True)
        t.start()
        self.threads.append(t)

    def _pump(self, src, stream):
        start = self.starts(src)
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
                    sev = self.classify(src, line)
                    cur = [t, src, sev, line]
                    self.events.append(cur)
                    self.f.write("%.3f %-6s %-7s %s\n" % (t / 1e9, src,
                                                          sev or "-", line))
                self.f.flush()
        stream.close()

    def note(self, text):
        """A line of the harness's own in the file."""
        with self.lock:
            self.f.write("%.3f %s\n" % (now_ns() / 1e9, text))

    def close(self):
        for t in self.threads:
            t.join(2)
        with self.lock:
            self.f.close()

    def count(self, t0, t1, pattern=None, sev=("error", "warning")):
        """Messages in [t0, t1) of the given severities (None: any)
        matching pattern (a compiled regex, or None: every message)."""
        n = 0
        with self.lock:
            for t, _, s, line in self.events:
                if t0 <= t < t1 and (sev is None or s in sev) and \
                        (pattern is None or pattern.search(line)):
                    n += 1
        return n

    def lines(self, src=None):
        """(src, text) of every message so far (of src only, if given)."""
        with self.lock:
            return [(s, line) for _, s, _, line in self.events
                    if src is None or s == src]

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


# ---- fault-proxy ------------------------------------------------------------

class Proxy:
    """One tests/faults/fault-proxy: 127.0.0.1:listen (0: any free port,
    read back as .port) -> 127.0.0.1:target."""

    def __init__(self, path, target, listen=0, log_file=None):
        self.p = subprocess.Popen([path, "-t", str(target), "-l",
                                   str(listen)], stdout=subprocess.PIPE,
                                  stderr=log_file)
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("fault-proxy -l %d did not start" % listen)
        self.port = int(line)
        self.target = target

    def stall(self):
        """Stops forwarding: no byte moves, connections stay open."""
        self.p.send_signal(signal.SIGUSR1)

    def cut(self):
        """Closes every connection and new ones at once."""
        self.p.send_signal(signal.SIGHUP)

    def resume(self):
        """Back to forwarding."""
        self.p.send_signal(signal.SIGUSR2)

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        self.p.wait()


def with_port(conn, port):
    """conn with its Port= set to port."""
    return re.sub(r"Port=\d+", "Port=%d" % port, conn)


# ---- databases --------------------------------------------------------------

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


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


class Shell:
    """Shell libraries (tests/integration/lib.sh, tests/cluster/
    lib-cluster.sh, galera-lib.sh) sourced in a child bash, whose
    functions need only the variables their setup exported."""

    def __init__(self, *libs):
        self.libs = libs

    def argv(self, script, args):
        head = "".join('. "$%d"; ' % (i + 1) for i in range(len(self.libs)))
        return ["bash", "-c", head + "shift %d; %s" % (len(self.libs),
                                                       script),
                "lib"] + list(self.libs) + [str(a) for a in args]

    def call(self, script, *args, timeout=None, capture_err=False):
        """Runs script (its arguments are "$1"...) and returns its output,
        stripped; raises RuntimeError when it fails (with its stderr when
        capture_err, else that went to ours)."""
        try:
            p = subprocess.run(self.argv(script, args),
                               stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE if capture_err
                               else None, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError("%s: still running after %s s" % (script,
                                                                timeout))
        if p.returncode != 0:
            raise RuntimeError("%s %s exited %d%s" % (
                script, " ".join(map(str, args)), p.returncode,
                ": " + p.stderr.strip()[-2000:] if capture_err else ""))
        return p.stdout.strip()

    def popen(self, script, *args, **kw):
        """Starts script in the background (a Popen)."""
        return subprocess.Popen(self.argv(script, args), **kw)


def restart_db(shell, db, mode="fast"):
    """Restarts the server of db (lib.sh ol_restart_pg or
    ol_restart_mariadb): PostgreSQL for postgresql, pgbouncer and the
    generic dialect on it."""
    shell.call("ol_restart_mariadb %s" % mode if db.endswith("mariadb")
               else "ol_restart_pg %s" % mode)


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


def end_session(shell, db, port):
    """Ends the server session whose client uses local port port; returns
    True when the server found one to end."""
    if db == "postgresql":
        out = shell.call('ol_psql "$1"', "SELECT pg_terminate_backend(pid) "
                         "FROM pg_stat_activity WHERE client_port = %d" %
                         port).split()
        return "t" in out
    out = shell.call('ol_mariadb "$1"', "SELECT ID FROM information_schema."
                     "PROCESSLIST WHERE HOST = '127.0.0.1:%d'" % port).split()
    for cid in out:
        shell.call('ol_mariadb "$1"', "KILL CONNECTION %d" % int(cid))
    return bool(out)


def kill_session(shell, db, db_port, pid):
    """Has the server end pid's session. The process may be between
    connections (a reconnect in progress): looks for up to 3 s. Raises
    RuntimeError when no session was ended."""
    if not wait_for(lambda: tcp_port_of(pid, db_port) is not None and
                    end_session(shell, db, tcp_port_of(pid, db_port)),
                    3, 0.02):
        raise RuntimeError("no database session of pid %d could be ended" %
                           pid)


def faketime_lib(name="libfaketimeMT.so.1"):
    """The path of libfaketime's library name, or None."""
    libs = glob.glob("/usr/lib/*/faketime/" + name) + \
        glob.glob("/usr/lib*/faketime/" + name)
    return libs[0] if libs else None


# ---- the run service loop ---------------------------------------------------

REFUSED_EXITS = (64, 78)  # usage, configuration


def refused(rc):
    """True when a run's exit status says that starting it again cannot
    help (64 usage, 78 configuration), whenever it came."""
    return rc in REFUSED_EXITS


class RunCandidate:
    """One candidate of a RunService: its id and its current run."""

    def __init__(self, ident):
        self.id = ident
        self.proc = None  # Popen of the current run, None between runs
        self.entry = None  # its runs.json entry
        self.exited_at = 0.0  # time.monotonic() the last run exited
        self.proxy = None  # a Proxy of its own (network faults)
        self.port = None  # the port its connection string names

    def run_pid(self):
        p = self.proc
        return p.pid if p is not None else None


class RunService:
    """`odbc-leader run` candidates, each under a service loop (one thread
    for all): a run that exits is started again restart_delay_s later, as
    a service manager would, unless it refused its arguments or
    configuration (refused()): the first such exit sets .fatal (which
    check_fatal() raises) and nothing starts again. Subclasses give
    popen(c), which starts one run of candidate c. Every run started is an
    entry of .runs (runs.json): id, pid, start_ns (before the fork: no CMD
    of it starts earlier), exit_ns, rc, died_ns (when the harness
    SIGKILLed it). where: what the fatal message points at (a log)."""

    STOP_WAIT_S = 10

    def __init__(self, restart_delay_s, where):
        self.restart_delay_s = restart_delay_s
        self.where = where
        self.cands = []
        self.runs = []
        self.stopped = set()  # pids under SIGSTOP
        self.lock = threading.Lock()
        self.stopping = False
        self.fatal = None
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def popen(self, c):
        raise NotImplementedError

    def add(self, ident, now=False):
        """A new candidate; its first run starts at once (now) or with the
        loop (start())."""
        c = RunCandidate(ident)
        with self.lock:
            self.cands.append(c)
            if now:
                self._spawn(c)
        return c

    def start(self):
        """Starts the loop (once)."""
        if self.thread.ident is None:
            self.thread.start()

    def _spawn(self, c):
        start = now_ns()
        c.proc = self.popen(c)
        c.entry = {"id": c.id, "pid": c.proc.pid, "start_ns": start,
                   "exit_ns": None, "rc": None, "died_ns": None}
        self.runs.append(c.entry)

    def _loop(self):
        while True:
            with self.lock:
                for c in self.cands:
                    if c.proc is not None and c.proc.poll() is not None:
                        rc = c.proc.returncode
                        c.entry["exit_ns"] = now_ns()
                        c.entry["rc"] = rc
                        if refused(rc) and not self.stopping and \
                                self.fatal is None:
                            self.fatal = "%s: odbc-leader run exited %d " \
                                "(usage or configuration: a service " \
                                "manager does not start it again; see %s)" \
                                % (c.id, rc, self.where)
                        c.proc = None
                        c.exited_at = time.monotonic()
                    if c.proc is None and not self.stopping and \
                            self.fatal is None and \
                            time.monotonic() - c.exited_at >= \
                            self.restart_delay_s:
                        self._spawn(c)
                if self.stopping and all(c.proc is None for c in self.cands):
                    return
            time.sleep(0.01)

    def check_fatal(self):
        if self.fatal:
            raise RuntimeError(self.fatal)

    def cand(self, ident):
        for c in self.cands:
            if c.id == ident:
                return c
        raise RuntimeError("a CMD ran for an unknown candidate %r" % ident)

    def kill_run(self, c, sig):
        """Sends sig to candidate c's current run (SIGSTOP: pause(), the
        pid noted in .stopped; SIGKILL: died_ns noted right after). Returns
        (pid, the time of the signal)."""
        with self.lock:
            pid = c.run_pid()
            if pid is None:
                raise RuntimeError("%s has no run to signal" % c.id)
            if sig == signal.SIGSTOP:
                self.stopped.add(pid)
                return pid, pause(pid)
            os.kill(pid, sig)
            t = now_ns()
            if sig == signal.SIGKILL:
                c.entry["died_ns"] = t
        return pid, t

    def cont(self, pid):
        """SIGCONT to pid, when it is under SIGSTOP."""
        if pid in self.stopped:
            self.stopped.discard(pid)
            signal_pid(pid, signal.SIGCONT)

    def begin_stop(self):
        """No more restarts; SIGCONT to every stopped pid, SIGTERM to every
        run."""
        with self.lock:
            self.stopping = True
            for pid in list(self.stopped):
                self.cont(pid)
            for c in self.cands:
                if c.proc is not None:
                    c.proc.send_signal(signal.SIGTERM)

    def end_stop(self, wait_s=None):
        """Waits up to wait_s for the runs to exit, SIGKILLs the rest
        (recorded as deaths). Returns how many were killed."""
        wait_s = self.STOP_WAIT_S if wait_s is None else wait_s
        started = self.thread.ident is not None
        if started:
            self.thread.join(wait_s)
        killed = 0
        with self.lock:
            for c in self.cands:
                if c.proc is not None and c.proc.poll() is None:
                    c.proc.kill()
                    c.entry["died_ns"] = now_ns()
                    killed += 1
        if started:
            self.thread.join()
        else:
            for c in self.cands:
                if c.proc is not None:
                    c.proc.wait()
        return killed

    def finish(self, cmds_dir, orphan_bound_ms, killed):
        """After the stop: waits for the CMDs of killed runs (up to the
        orphan bound), kills the cmd-life processes still alive and writes
        runs.json and alive.json (their pids) into cmds_dir. Returns
        those pids."""
        time.sleep(orphan_bound_ms / 1000.0 + 0.2 if killed else 0.2)
        alive = sorted(l["pid"] for l in
                       records.load_lives(cmds_dir, partial_ok=True)
                       if is_cmd_life(l["pid"]))
        for pid in alive:
            signal_pid(pid, signal.SIGKILL)  # a descendant of ours
        with open(os.path.join(cmds_dir, "runs.json"), "w") as f:
            json.dump(self.runs, f, indent=1)
        with open(os.path.join(cmds_dir, "alive.json"), "w") as f:
            json.dump(alive, f)
        return alive


# ---- self-test --------------------------------------------------------------

class _ShService(RunService):
    """A RunService whose "runs" are sh scripts, one per candidate."""

    def __init__(self, scripts, delay_s):
        RunService.__init__(self, delay_s, "the self-test")
        self.scripts = scripts

    def popen(self, c):
        return subprocess.Popen(["sh", "-c", self.scripts[c.id]],
                                stdin=subprocess.DEVNULL)


def self_test():
    """The settled rules on real processes (about 5 s). Returns 0 when
    every one holds."""
    import tempfile
    bad = []

    def want(name, ok, got):
        print("self-test %-52s %s %s" % (name, "ok " if ok else "BAD", got))
        if not ok:
            bad.append(name)

    # a late refusal is fatal; a failure is started again
    s = _ShService({"fails": "exit 1", "late": "sleep 1.5; exit 78"}, 0.2)
    s.add("fails")
    s.add("late")
    s.start()
    wait_for(lambda: s.fatal, 5)
    with s.lock:
        late = [r for r in s.runs if r["id"] == "late"]
        fails = len([r for r in s.runs if r["id"] == "fails"])
    want("a run that exits 78 after 1.5 s is fatal", s.fatal is not None
         and "exited 78" in s.fatal, s.fatal)
    want("... and is not started again", len(late) == 1, "%d runs" %
         len(late))
    want("a run that exits 1 is started again", fails >= 4,
         "%d runs" % fails)
    time.sleep(0.5)
    with s.lock:
        after = len([r for r in s.runs if r["id"] == "fails"])
    want("nothing starts again once fatal", after == fails,
         "%d runs, then %d" % (fails, after))
    try:
        s.check_fatal()
        want("check_fatal raises", False, "nothing")
    except RuntimeError as e:
        want("check_fatal raises", True, "RuntimeError")
    s.begin_stop()
    s.end_stop(2)
    # an exit 78 while the harness stops the runs is not a refusal; a run
    # that ignores SIGTERM is killed and its death recorded
    s = _ShService({"quits": "trap 'exit 78' TERM; "
                    "while :; do sleep 0.05; done",
                    "deaf": "trap '' TERM; exec sleep 30"}, 0.2)
    s.add("quits", now=True)
    s.add("deaf", now=True)
    s.start()
    time.sleep(0.3)
    s.begin_stop()
    killed = s.end_stop(1)
    rcs = {r["id"]: r["rc"] for r in s.runs}
    want("exit 78 during the stop is not fatal", s.fatal is None and
         rcs.get("quits") == 78, "fatal %r, exits %r" % (s.fatal, rcs))
    want("a run deaf to SIGTERM is killed, its death noted",
         killed == 1 and s.runs[1]["died_ns"] is not None,
         "%d killed" % killed)
    # pause(): stopped on return, whatever the load
    p = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        pause(p.pid)
        st = proc_state(p.pid)
        want("pause() returns once the process is stopped", st in ("T", "t"),
             "state %s" % st)
        os.kill(p.pid, signal.SIGCONT)
        want("... busy in no system call: stop_unlocked(idle=) misses",
             _raises(lambda: stop_unlocked(p.pid, tries=3,
                                           idle="rt_sigtimedwait")) or
             os.uname().machine not in _SYSCALLS, "RuntimeError")
    finally:
        p.kill()
        p.wait()
    # stop_unlocked(): never inside a file lock
    with tempfile.TemporaryDirectory() as d:
        code = ("import fcntl, signal, sys, time\n"
                "f = open(sys.argv[1], 'w')\n"
                "fcntl.lockf(f, fcntl.LOCK_EX)\n"
                "print('locked', flush=True)\n"
                "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])\n"
                "if sys.argv[2] == 'release':\n"
                "    fcntl.lockf(f, fcntl.LOCK_UN)\n"
                "signal.sigtimedwait([signal.SIGUSR1], 30)\n")
        for mode in ("hold", "release"):
            p = subprocess.Popen([sys.executable, "-c", code,
                                  os.path.join(d, "f"), mode],
                                 stdout=subprocess.PIPE)
            try:
                p.stdout.readline()
                time.sleep(0.1)
                if mode == "hold":
                    want("stop_unlocked() fails on a lock held throughout",
                         _raises(lambda: stop_unlocked(p.pid, tries=3)),
                         "RuntimeError")
                else:
                    missed = stop_unlocked(p.pid, tries=5,
                                           idle="rt_sigtimedwait")
                    st = proc_state(p.pid)
                    want("stop_unlocked() stops it idle and unlocked",
                         st in ("T", "t") and not holds_file_lock(p.pid),
                         "state %s after %d misses" % (st, missed))
            finally:
                p.kill()
                p.wait()
    return 1 if bad else 0


def _raises(fn):
    try:
        fn()
    except RuntimeError:
        return True
    return False


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    print(__doc__, file=sys.stderr)
    sys.exit(2)
