#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""group-schedule.py: the fault schedule of sharded groups.

    group-schedule.py --db sqlite,postgresql,mariadb --host GROUP_HOST
        --proxy PROXY
        --checker GROUPCHECK --lib LIB.SH --work DIR [--shards N]
        [--procs N] [--rounds N] [--negative]

Per database, PROCS group-host processes (each behind its own fault-proxy
on a server database) start at once as members of one group of SHARDS
shards, then go through, ROUNDS times: kill -9 of a member, a join, a
SIGSTOP past the TTL, a graceful leave (SIGTERM), a restart under the
same id, a stall of one member's tick thread past the TTL (its worker
goes on asking), the database out of every member's reach for longer
than the TTL (every member lives on; its rows expire meanwhile: a cut of
every proxy, on SQLite a lock on the file), and on a server database a
network stall of one member
and a restart of the database (through pgbouncer: of the PostgreSQL
behind it). After each fault the schedule waits until every
shard is led again. groupcheck then reads every process's records: no
shard led in two windows at once, no term going back, no shard unled
longer than 2 TTL + 4 renew intervals (plus the database's restart).

--negative gives every member LeaderTestTrustExtra (trust windows that
outlive their leases) and runs the tick-thread stall only: the checker
must find overlaps, or the schedule fails.

--upgrade-from OLD_HOST runs a rolling upgrade instead (docs/protocol.md,
"A rolling upgrade"): the members start as OLD_HOST, the group-host of an
older build (its tables, its rows), and are replaced one by one by HOST,
each under its id, the first one upgrading the tables while the old
members go on; while both builds run, a new member and an old member are
killed with kill -9; after the last replacement the whole schedule runs
once. The checker reads both builds' records.
Exit status: 0 as expected, 1 not.
"""
import argparse
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

# tests/lib: processes and services (with the connection strings: one
# source for the MariaDB client timeouts a stalled network outlasts) and
# the record loader; no bytecode in the (maybe read-only) source tree
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "lib"))
import harness  # noqa: E402
import records  # noqa: E402

now_ns = harness.now_ns

TTL_MS = 2000
RENEW_MS = 500
MARGIN_MS = 600


class Group:
    """The members of one group, their proxies and their records."""

    def __init__(self, ctx, db, name, extra_ms=0):
        self.ctx, self.db = ctx, db
        self.dir = os.path.join(ctx.work, db + ("-negative" if extra_ms
                                                else ""))
        os.makedirs(self.dir)
        self.proxied = db in ctx.port
        self.config = "%s;LeaderNamespace=%s;LeaderShards=%d;LeaderTTL=%d;" \
            "LeaderRenewInterval=%d;LeaderSafetyMargin=%d" % (
                ctx.connect[db], name, ctx.shards, TTL_MS, RENEW_MS,
                MARGIN_MS)
        if extra_ms:
            self.config += ";LeaderTestTrustExtra=%d" % extra_ms
        self.hosts = {}  # member id -> Popen
        self.build = {}  # member id -> "old" or "new"
        self.proxy_of = {}  # member id -> its harness.Proxy
        self.next_id = 1
        self.log = open(os.path.join(self.dir, "hosts.log"), "ab")
        self.events = []

    def note(self, what):
        self.events.append((now_ns(), what))
        print("  %s: %s" % (self.db, what), file=sys.stderr, flush=True)

    def spawn(self, mid=None, host=None):
        """Starts member mid (a new id when None) as host (the build
        under test when None); returns its id."""
        if mid is None:
            mid = "m%d" % self.next_id
            self.next_id += 1
        config = "%s;LeaderId=%s" % (self.config, mid)
        if self.proxied:
            proxy = harness.Proxy(self.ctx.proxy, self.ctx.port[self.db],
                                  log_file=self.log)
            config = harness.with_port(config, proxy.port)
            self.proxy_of[mid] = proxy
        cmd = [host or self.ctx.host, "-d", self.dir, "-S",
               str(int(TTL_MS * 2.5)), config]
        if os.environ.get("OL_FAULTS_VERBOSE", "0") != "1":
            cmd.insert(1, "-q")
        self.hosts[mid] = subprocess.Popen(cmd, stdout=self.log,
                                           stderr=self.log)
        self.build[mid] = "old" if host else "new"
        return mid

    def kill(self, mid, sig=signal.SIGKILL):
        """Ends member mid: SIGKILL, or with sig=SIGTERM a graceful leave
        (SIGKILL after 10 s); its proxy goes with it."""
        p = self.hosts.pop(mid)
        if sig == signal.SIGKILL:
            p.kill()
            p.wait()
        else:
            harness.terminate([p], 10)
        proxy = self.proxy_of.pop(mid, None)
        if proxy is not None:
            proxy.stop()

    def unled_shards(self, after_ns):
        """The shards without a record whose last "yes" is recent and
        later than after_ns, and each shard's newest record."""
        recs = records.load_group(self.dir)[1]
        t = max(now_ns() - 300 * 1000000, after_ns)
        newest = {}
        for r in recs:
            if r["shard"] not in newest or \
                    r["last_before"] > newest[r["shard"]]["last_before"]:
                newest[r["shard"]] = r
        return [s for s in range(self.ctx.shards)
                if s not in newest or newest[s]["last_before"] <= t], newest

    def all_led(self, after_ns):
        """True when every shard is led recently, later than after_ns."""
        return not self.unled_shards(after_ns)[0]

    def unled(self, after_ns):
        """What all_led() misses, for the log: the count of shards not
        led recently, and the newest record of up to 5 of them."""
        out, newest = self.unled_shards(after_ns)
        shown = ["shard %d: %s" % (s, "never led" if s not in newest else
                                   "pid %d term %d, last led %.1f s ago" % (
                                       newest[s]["pid"], newest[s]["term"],
                                       (now_ns() - newest[s]["last_before"])
                                       / 1e9)) for s in out[:5]]
        return "%d shards unled (%s)" % (len(out), "; ".join(shown))

    def wait_led(self, timeout_s, after_ns=0):
        """Waits until every shard is led past after_ns (a fault's time +
        one TTL: past the window any member that stopped could still
        trust)."""
        return bool(harness.wait_for(lambda: self.all_led(after_ns),
                                     timeout_s, 0.1))

    def settle(self, what):
        """Notes fault what, then waits until every shard is led again.
        Raises RuntimeError when not."""
        self.note(what)
        t = now_ns()
        if not self.wait_led(4 * TTL_MS / 1000.0 + 10, t + TTL_MS * 1000000):
            raise RuntimeError("%s: not every shard led again within %.0f "
                               "s: %s; members alive: %s" % (
                                   what, (now_ns() - t) / 1e9,
                                   self.unled(t + TTL_MS * 1000000),
                                   ", ".join("%s (pid %d)" % (m, p.pid)
                                             for m, p in sorted(
                                                 self.hosts.items())
                                             if p.poll() is None)))
        print("    every shard led again after %.1f s" % (
            (now_ns() - t) / 1e9), file=sys.stderr, flush=True)
        time.sleep(RENEW_MS / 1000.0 * 4)  # moves after the fault, too

    def stop_all(self):
        """Graceful leaves, one member after the other."""
        for mid in list(self.hosts):
            self.kill(mid, signal.SIGTERM)


def cut_all(g, seconds):
    """The database out of every member's reach for seconds, all at once:
    on a server, every member's proxy cuts its connections and refuses new
    ones (fault-proxy SIGHUP); on SQLite, another process holds the file's
    exclusive lock. Longer than the TTL, every member's rows expire while
    nobody can renew them; every member lives on."""
    if g.proxied:
        for proxy in g.proxy_of.values():
            proxy.cut()
        time.sleep(seconds)
        for proxy in g.proxy_of.values():
            proxy.resume()
        return
    path = re.search(r"Database=([^;]+)", g.config).group(1)
    con = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        con.execute("BEGIN EXCLUSIVE")
        time.sleep(seconds)
        con.execute("ROLLBACK")
    finally:
        con.close()


def faults(ctx, g, rounds):
    """The schedule of one database. Raises RuntimeError when the group
    does not recover."""
    pause = TTL_MS / 1000.0 * 1.5

    for r in range(rounds):
        members = sorted(g.hosts)
        g.kill(members[0])
        g.settle("kill -9 %s" % members[0])
        g.settle("join %s" % g.spawn())
        victim = sorted(g.hosts)[0]
        harness.pause(g.hosts[victim].pid)
        time.sleep(pause)
        g.hosts[victim].send_signal(signal.SIGCONT)
        g.settle("SIGSTOP %s for %.1f s" % (victim, pause))
        leaver = sorted(g.hosts)[1]
        g.kill(leaver, signal.SIGTERM)
        g.settle("graceful leave of %s" % leaver)
        again = sorted(g.hosts)[-1]
        g.kill(again)
        g.spawn(again)
        g.settle("restart of %s under its id" % again)
        stuck = sorted(g.hosts)[0]
        g.hosts[stuck].send_signal(signal.SIGUSR1)
        time.sleep(TTL_MS / 1000.0 * 2.5)
        g.settle("tick thread of %s stalled for %.1f s" % (
            stuck, TTL_MS * 2.5e-3))
        outage = TTL_MS / 1000.0 * 1.5
        cut_all(g, outage)
        g.settle("database out of every member's reach for %.1f s" % outage)
        if g.proxied:
            stalled = sorted(g.hosts)[0]
            g.proxy_of[stalled].stall()
            time.sleep(pause)
            g.proxy_of[stalled].resume()
            g.settle("network stall of %s for %.1f s" % (stalled, pause))
            harness.restart_db(ctx.shell, g.db)
            g.settle("restart of the database")
        g.settle("join %s" % g.spawn())


def upgrade(ctx, g):
    """Replaces every member, started as ctx.upgrade_from, by the build
    under test under its id, one by one: graceful leaves, then, with both
    builds running, kill -9 of a new member and of an old one."""
    olds = sorted(g.hosts)
    for i, mid in enumerate(olds):
        if i == 2:
            new = [m for m in sorted(g.hosts) if g.build[m] == "new"]
            g.kill(new[0])
            g.settle("kill -9 %s (new build; old members still run)" % new[0])
            g.spawn(new[0])
            old = [m for m in sorted(g.hosts) if g.build[m] == "old"]
            g.kill(old[-1])
            g.settle("kill -9 %s (old build; new members run)" % old[-1])
            g.spawn(old[-1])
            g.settle("%s back as the new build" % old[-1])
        if mid not in g.hosts or g.build[mid] == "new":
            continue
        g.kill(mid, signal.SIGTERM)
        g.spawn(mid)
        g.settle("%s upgraded (graceful leave, then the new build)" % mid)


def run_db(ctx, db, negative):
    name = "grp-%s-%d%s" % (db, os.getpid(), "-neg" if negative else "")
    g = Group(ctx, db, name, extra_ms=3 * TTL_MS if negative else 0)
    t0 = now_ns()
    for _ in range(ctx.procs):
        g.spawn(host=ctx.upgrade_from)
    g.note("cold start of %d members over %d shards%s" % (
        ctx.procs, ctx.shards, " (old build)" if ctx.upgrade_from else ""))
    try:
        if not g.wait_led(30):
            raise RuntimeError("cold start: not every shard led")
        start = now_ns()
        time.sleep(RENEW_MS / 1000.0 * 6)
        if negative:
            for victim in sorted(g.hosts)[:2]:
                g.hosts[victim].send_signal(signal.SIGUSR1)
                time.sleep(TTL_MS / 1000.0 * 2.5)
                g.note("tick thread of %s stalled" % victim)
                time.sleep(TTL_MS / 1000.0 * 2)
        elif ctx.upgrade_from:
            upgrade(ctx, g)
            faults(ctx, g, 1)
        else:
            faults(ctx, g, ctx.rounds)
        end = now_ns()
    finally:
        g.stop_all()
    bound_ms = 2 * TTL_MS + 4 * RENEW_MS + (4000 if g.proxied else 0)
    res = ctx.checker.check(records.load_group(g.dir)[1], ctx.shards,
                            bound_ms * 1000000, start, end)
    res["db"] = db
    res["seconds"] = round((end - t0) / 1e9, 1)
    res["bound_ms"] = bound_ms
    with open(os.path.join(g.dir, "events.json"), "w") as f:
        json.dump({"events": g.events, "result": res}, f)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default="sqlite,postgresql,mariadb",
                    help="also pgbouncer: PostgreSQL through the pgbouncer "
                    "in transaction mode on $CL_PGB_PORT_transaction; "
                    "generic-sqlite, generic-postgresql, generic-mariadb: "
                    "the generic dialect in $OL_GENERIC_DIALECT_<database>")
    ap.add_argument("--host", required=True)
    ap.add_argument("--proxy", required=True)
    ap.add_argument("--checker", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--shards", type=int, default=1000)
    ap.add_argument("--procs", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--negative", action="store_true")
    ap.add_argument("--upgrade-from", metavar="OLD_HOST")
    ctx = ap.parse_args()
    ctx.checker = harness.load_script(ctx.checker, "groupcheck")
    ctx.shell = harness.Shell(ctx.lib)
    os.makedirs(ctx.work, exist_ok=True)
    harness.db_connects(ctx, os.path.join(ctx.work, "group.db"))
    if "CL_PGB_PORT_transaction" in os.environ and "postgresql" in ctx.connect:
        # the PostgreSQL server through pgbouncer in transaction mode
        port = int(os.environ["CL_PGB_PORT_transaction"])
        ctx.connect["pgbouncer"] = re.sub(
            r"Port=\d+", "Port=%d" % port, ctx.connect["postgresql"]) + \
            ";LeaderPooler=transaction"
        ctx.port["pgbouncer"] = port
    for base in ("sqlite", "postgresql", "mariadb"):
        # the generic dialect, made by ol_generic_dialect, on its own
        # tables (another schema version than the shipped dialect's)
        path = os.environ.get("OL_GENERIC_DIALECT_" + base)
        if path is None or base not in ctx.connect:
            continue
        c = ctx.connect[base]
        if base == "sqlite":
            c = "Driver=SQLite3;Database=%s" % os.path.join(ctx.work,
                                                            "generic.db")
        ctx.connect["generic-" + base] = c + \
            ";LeaderDialect=%s;LeaderTablePrefix=gen_" % path
        if base in ctx.port:
            ctx.port["generic-" + base] = ctx.port[base]
    failed = 0
    print("| database | shards | members | terms | moves | max unled ms "
          "| p99 unled ms | bound ms | violations |")
    print("|---|---|---|---|---|---|---|---|---|")
    for db in ctx.db.split(","):
        try:
            res = run_db(ctx, db, ctx.negative)
        except (RuntimeError, subprocess.CalledProcessError) as e:
            print("FAIL %s: %s" % (db, e))
            failed += 1
            continue
        print("| %s | %d | %d | %d | %d | %s | %s | %d | %d |" % (
            db, res["shards"], ctx.procs, res["terms"], res["moves"],
            res["max_unled_ms"], res["p99_unled_ms"], res["bound_ms"],
            len(res["violations"])), flush=True)
        overlaps = [v for v in res["violations"] if "overlap" in v]
        for v in res["violations"][:20]:
            print("  " + v)
        if ctx.negative and not overlaps:
            print("FAIL %s: the broken variant showed no overlap" % db)
            failed += 1
        elif not ctx.negative and res["violations"]:
            print("FAIL %s: %d violations" % (db, len(res["violations"])))
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
