# SPDX-License-Identifier: MIT
"""fleet.py: a fleet of group members in separate processes (make bench part
"fleet", bench/part-fleet.sh), measured from the lease table.

    python3 fleet.py --kind postgresql|mariadb|sqlite --connect CONN
        --members N --shards S --host PATH/group-host --work DIR
        --out ROWS.json [--soak SECONDS] [--short]

N tests/faults/group-host processes (TTL 3 s, renew every 0.5 s, margin
0.5 s) lead one group of S shards. The script reads the group's rows (shard,
leader_id, term) straight from the database every POLL seconds (psql,
mariadb, or Python's sqlite3; the SQL is a plain read of the table, not a
dialect statement) and writes rows for bench/benchlib.py:

- cold start: every shard held, and the shares balanced, in renew intervals
  after the processes started (goal: fully led within 3 ticks), with the
  most terms any shard went through (goal: at most 2);
- steady state: statements per process per tick counted by the server
  (PostgreSQL: pg_stat_statements calls in the database; MariaDB: the
  Questions counter, less this script's own reads measured before the
  fleet starts), ticks counted from the members' renew_seq (each tick of a
  member raises it by one); balance, max / mean shards led; the members'
  tick latency (group-host SIGUSR2), against a fleet of groups of 1 shard;
- join of an (N+1)th member: share moved, against 1/(N+1) (goal <= 1.25 x),
  and moves that did not go to the newcomer (goal 0);
- graceful leave (SIGTERM) of that member: shards moved that it did not lead
  (goal 0), p99 and max of the time until each of its shards is held again
  (goal p99 <= 2 s);
- fast restart (kill -9, then the same LeaderId at once): shards moved to
  another member (goal 0);
- kill -9 of one member: the time until each of its shards is held by
  another (goal: all within TTL + 2 ticks);
- the most terms any shard went through in one membership change (goal 1);
- soak (--soak SECONDS): a membership change every 20 s (join, graceful
  leave, kill -9, kill -9 and restart under the same id); ping-pong = a
  shard whose leader changed more than once in one change's window (goal
  0), and moves after the window's membership had settled (goal 0).
Progress goes to stderr. Exit 0 when every phase ran (goals are judged in
the table, not here), 1 when the fleet did not settle.
"""
import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

# tests/lib/records.py: pct(), the suite's one percentile (nearest rank)
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "tests", "lib"))
import records  # noqa: E402

TTL_MS, RENEW_MS, MARGIN_MS = 3000, 500, 500
POLL = 0.05


def log(msg):
    print("[fleet] %s" % msg, file=sys.stderr, flush=True)


class Db:
    """Plain reads of the group's rows and the server's counters."""

    def __init__(self, kind, connect, group):
        self.kind, self.group = kind, group
        if kind == "sqlite":
            path = [kv.split("=", 1)[1] for kv in connect.split(";")
                    if kv.lower().startswith("database=")][0]
            self.path = path

    def query(self, sql, dbname=None):
        """Rows of sql as tuples of text; dbname: another PostgreSQL
        database than the group's."""
        if self.kind == "sqlite":
            for _ in range(50):
                try:
                    con = sqlite3.connect(self.path, timeout=5)
                    try:
                        return [tuple(str(c) if c is not None else ""
                                      for c in r)
                                for r in con.execute(sql).fetchall()]
                    finally:
                        con.close()
                except sqlite3.OperationalError as e:
                    if not any(w in str(e) for w in ("no such", "locked")):
                        raise  # not a table the first member is making
                    time.sleep(0.1)
            return []
        if self.kind == "postgresql":
            cmd = [os.environ["OL_PG_BIN"] + "/psql", "-X", "-A", "-t", "-q",
                   "-F", "\t", "-h", "127.0.0.1", "-p",
                   os.environ["OL_PG_PORT"], "-U", os.environ["OL_PG_USER"],
                   "-d", dbname or os.environ.get("OL_PG_DB", "leader"),
                   "-c", sql]
        else:
            cmd = [os.environ.get("OL_MARIADB_CLIENT", "mariadb"),
                   "--no-defaults", "-uroot",
                   "--socket=" + os.environ["OL_MARIADB_SOCK"], "-N", "-B",
                   "-e", sql, os.environ.get("OL_MARIADB_DB", "leader")]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            if any(w in out.stderr for w in ("does not exist",
                                             "doesn't exist",
                                             "Unknown column")):
                return []  # the first member is making the tables
            raise RuntimeError("%s: %s" % (self.kind, out.stderr.strip()))
        return [tuple(line.split("\t")) for line in out.stdout.splitlines()
                if line]

    def shards(self):
        """{shard: (leader or "", term)}"""
        rows = self.query("SELECT shard, leader_id, term FROM "
                          "odbc_leader_lease WHERE grp = '%s'" % self.group)
        return {int(r[0]): (r[1] if r[1] not in ("NULL", "\\N") else "",
                            int(r[2])) for r in rows}

    def seqs(self):
        """Sum over holders of their highest renew_seq (fleetmark)."""
        rows = self.query("SELECT inc, MAX(renew_seq) AS fleetmark FROM "
                          "odbc_leader_lease WHERE grp = '%s' AND inc IS NOT "
                          "NULL GROUP BY inc" % self.group)
        return {r[0]: int(r[1]) for r in rows if r[1] not in ("", "NULL")}

    def statements(self):
        """The server's statement counter, or None."""
        if self.kind == "postgresql":
            cmd = ("SELECT COALESCE(SUM(calls), 0) FROM pg_stat_statements s "
                   "JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = "
                   "'%s' AND s.query NOT LIKE '%%fleetmark%%' AND s.query "
                   "NOT LIKE '%%odbc_leader_lease WHERE grp =%%'"
                   % os.environ.get("OL_PG_DB", "leader"))
            return int(self.query(cmd, "postgres")[0][0])
        if self.kind == "mariadb":
            rows = self.query("SHOW GLOBAL STATUS LIKE 'Questions'")
            return int(rows[0][1])
        return None

    def reset(self):
        if self.kind == "postgresql":
            self.query("SELECT pg_stat_statements_reset()", "postgres")


class Fleet:
    def __init__(self, args, group, shards):
        self.args, self.group, self.shards = args, group, shards
        self.procs = {}
        self.conf = ("%s;LeaderNamespace=%s;LeaderShards=%d;LeaderTTL=%d;"
                     "LeaderRenewInterval=%d;LeaderSafetyMargin=%d"
                     % (args.connect, group, shards, TTL_MS, RENEW_MS,
                        MARGIN_MS))

    def start(self, mid):
        d = os.path.join(self.args.work, "%s-%s" % (self.group, mid))
        os.makedirs(d, exist_ok=True)
        err = open(os.path.join(d, "stderr"), "ab")
        p = subprocess.Popen([self.args.host, "-d", d, "-q", "-s", "500000",
                              self.conf + ";LeaderId=" + mid],
                             stdout=subprocess.PIPE, stderr=err, text=True)
        self.procs[mid] = p

    def stop(self, mid, sig=signal.SIGTERM):
        p = self.procs.pop(mid)
        p.send_signal(sig)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

    def tick_stats(self):
        """SIGUSR2 to every member; their lines, parsed."""
        for p in self.procs.values():
            p.send_signal(signal.SIGUSR2)
        out = []
        for p in self.procs.values():
            line = p.stdout.readline().split()
            out.append(dict(zip(line[0::2], (int(x) for x in line[1::2]))))
        return out

    def stop_all(self):
        for mid in list(self.procs):
            self.stop(mid)


def loads(snap):
    counts = {}
    for leader, _ in snap.values():
        if leader:
            counts[leader] = counts.get(leader, 0) + 1
    return counts


def balanced(snap, members, nshards):
    c = loads(snap)
    if not set(c) <= set(members) or sum(c.values()) != nshards:
        return False
    # the library's load cap (src/shard.c): ceil(1.05 x shards / members)
    cap = (nshards * 105 + len(members) * 100 - 1) // (len(members) * 100)
    return max(c.values()) <= cap


def settle(db, members, nshards, limit, quiet_s=2.0):
    """Polls until every shard is held by one of members, the shares are
    balanced and nothing moved for quiet_s. Returns (snap, seconds to
    fully led, seconds to settled), or raises."""
    t0 = time.monotonic()
    full = None
    last, last_change = None, t0
    while time.monotonic() - t0 < limit:
        snap = db.shards()
        now = time.monotonic()
        held = sum(1 for s in snap.values() if s[0] in members)
        if full is None and len(snap) == nshards and held == nshards:
            full = now - t0
        if snap != last:
            last, last_change = snap, now
        elif (balanced(snap, members, nshards)
              and now - last_change >= quiet_s):
            return snap, full, last_change - t0
        time.sleep(POLL)
    raise RuntimeError("the fleet did not settle in %d s: %s" %
                       (limit, loads(last or {})))


def moves(before, after):
    return [s for s in before if before[s][0] != after[s][0]]


def bumps(before, after):
    return max((after[s][1] - before[s][1] for s in before), default=0)


def watch(db, shards, done, limit, what):
    """Polls until done(current row, shard) for every shard in shards;
    returns each one's seconds (what names the wait in an error)."""
    t0 = time.monotonic()
    left, took = set(shards), {}
    while left and time.monotonic() - t0 < limit:
        cur = db.shards()
        now = time.monotonic() - t0
        for x in list(left):
            if done(cur[x], x):
                took[x] = now
                left.discard(x)
        time.sleep(POLL)
    if left:
        raise RuntimeError("%d shards not %s in %d s" % (len(left), what,
                                                         limit))
    return list(took.values()) or [0.0]


def watch_releds(db, shards, gone, limit):
    """Seconds until each shard is held by another member than gone."""
    return watch(db, shards, lambda row, x: row[0] and row[0] != gone,
                 limit, "re-led without " + gone)


def watch_retaken(db, shards, snap, limit):
    """Seconds until each shard has another term than in snap."""
    return watch(db, shards, lambda row, x: row[0] and row[1] != snap[x][1],
                 limit, "re-taken")


class Rows:
    def __init__(self, kind, label):
        self.kind, self.label, self.rows = kind, label, []

    def add(self, metric, value, unit, target, note):
        self.rows.append({"metric": "%s: %s" % (self.label, metric),
                          "dialect": self.kind, "value": value,
                          "unit": unit, "target": target, "note": note})


def calibrate(db):
    """This script's own statements between two counter reads around one
    seqs() (MariaDB counts every client's), measured with no fleet."""
    if db.kind != "mariadb":
        return 0
    a = db.statements()
    db.seqs()
    return db.statements() - a


def steady(db, fleet, members, seconds, overhead=0):
    """Statements per process per tick and tick latency over seconds."""
    fleet.tick_stats()  # forget the ticks so far
    db.reset()
    s0, q0 = db.seqs(), db.statements()
    time.sleep(seconds)
    s1 = db.seqs()
    q1 = db.statements()
    stats = fleet.tick_stats()
    ticks = sum(s1[i] - s0[i] for i in s1 if i in s0)
    stmts = None if q0 is None else q1 - q0 - overhead
    return ticks, stmts, stats


def run(args):
    kind = args.kind
    out = []
    n, s = args.members, args.shards
    label = "%d members, %d shards" % (n, s)
    rows = Rows(kind, label)
    tick = RENEW_MS / 1000.0

    # the baseline: the same processes over a group of n shards, one each
    overhead = calibrate(Db(kind, args.connect, "bench-fleet-none"))
    base_group = "bench-fleet-base-%d" % os.getpid()
    base = Fleet(args, base_group, n)
    bdb = Db(kind, args.connect, base_group)
    members = ["m%d" % i for i in range(1, n + 1)]
    for m in members:
        base.start(m)
    settle(bdb, members, n, 60)
    _, _, bstats = steady(bdb, base, members, 3 if args.short else 10)
    base.stop_all()
    bmed = records.pct([x["median_us"] for x in bstats], 50, 0)
    bp99 = max(x["p99_us"] for x in bstats)

    group = "bench-fleet-%d" % os.getpid()
    db = Db(kind, args.connect, group)
    fleet = Fleet(args, group, s)
    try:
        # ---- cold start
        log("%s %s: cold start" % (kind, label))
        for m in members:
            fleet.start(m)
        snap, full_s, settled_s = settle(db, members, s, 120)
        init_term = min(t for _, t in snap.values()) - 1
        rows.add("cold start, every shard held after", round(full_s / tick, 1),
                 "ticks", "<= 3",
                 "%.2f s from the start of %d processes at once; renew every "
                 "%.1f s" % (full_s, n, tick))
        most = max(t for _, t in snap.values())
        first = min(t for _, t in snap.values())
        rows.add("cold start, balanced after", round(settled_s / tick, 1),
                 "ticks", "-",
                 "%.2f s; terms per shard at most %d (goal <= 2)"
                 % (settled_s, most - first + 1))
        rows.add("cold start, terms per shard, most", most - first + 1,
                 "terms", "<= 2", "the group's rows were new")
        c = loads(snap)
        rows.add("balance, max / mean shards led",
                 round(max(c.values()) / (s / n), 3), "ratio", "<= 1.05",
                 "shares %d..%d" % (min(c.values()), max(c.values())))

        # ---- steady state
        log("%s %s: steady state" % (kind, label))
        ticks, stmts, stats = steady(db, fleet, members,
                                     3 if args.short else 10, overhead)
        if stmts is not None and ticks > 0:
            rows.add("statements per process per tick", round(stmts / ticks, 3),
                     "statements/tick", "1",
                     "%d statements counted by the server in %d ticks of %d "
                     "processes" % (stmts, ticks, n))
        med = records.pct([x["median_us"] for x in stats], 50, 0)
        p99 = max(x["p99_us"] for x in stats)
        rows.add("tick latency, median over members", round(med / 1000.0, 1),
                 "ms", "-",
                 "p99 %.1f ms (highest member); a fleet of %d over a group "
                 "of %d shards: median %.1f ms, p99 %.1f ms"
                 % (p99 / 1000.0, n, n, bmed / 1000.0, bp99 / 1000.0))

        # ---- join
        log("%s %s: join" % (kind, label))
        new = "m%d" % (n + 1)
        fleet.start(new)
        after, _, join_s = settle(db, members + [new], s, 60)
        mv = moves(snap, after)
        stray = [x for x in mv if after[x][0] != new]
        rows.add("join, share moved / (1/(N+1))",
                 round(len(mv) / s * (n + 1), 3), "ratio", "<= 1.25",
                 "%d of %d shards moved, %d of them not to the newcomer "
                 "(goal 0); settled after %.1f s; terms per shard at most +%d"
                 % (len(mv), s, len(stray), join_s, bumps(snap, after)))
        change_bumps = [bumps(snap, after)]
        snap = after

        # ---- graceful leave
        log("%s %s: graceful leave" % (kind, label))
        its = [x for x in snap if snap[x][0] == new]
        fleet.stop(new)
        took = watch_releds(db, its, new, 30)
        after, _, _ = settle(db, members, s, 60)
        stray = [x for x in moves(snap, after) if snap[x][0] != new]
        rows.add("graceful leave of 1, re-led p99",
                 round(records.pct(took, 99, 0), 2), "s", "<= 2",
                 "%d shards, max %.2f s; %d shards moved that the leaver did "
                 "not lead (goal 0)" % (len(its), max(took), len(stray)))
        change_bumps.append(bumps(snap, after))
        snap = after

        # ---- fast restart under the same id
        log("%s %s: fast restart" % (kind, label))
        victim = members[0]
        its = [x for x in snap if snap[x][0] == victim]
        fleet.stop(victim, signal.SIGKILL)
        fleet.start(victim)
        took = watch_retaken(db, its, snap, 60)
        after, _, _ = settle(db, members, s, 60)
        mv = moves(snap, after)
        rows.add("fast restart (kill -9, same id), shards moved", len(mv),
                 "shards", "0",
                 "its %d shards re-taken by the new process after %.1f s at "
                 "most (the old process's leases run out and are watched "
                 "for a TTL first)" % (len(its), max(took)))
        change_bumps.append(bumps(snap, after))
        snap = after

        # ---- kill -9
        log("%s %s: kill -9" % (kind, label))
        victim = members[-1]
        its = [x for x in snap if snap[x][0] == victim]
        fleet.stop(victim, signal.SIGKILL)
        took = watch_releds(db, its, victim, 60)
        rest = members[:-1]
        after, _, _ = settle(db, rest, s, 60)
        rows.add("kill -9 of 1, every shard re-led after", round(max(took), 2),
                 "s", "<= %.1f" % ((TTL_MS + 2 * RENEW_MS) / 1000.0),
                 "%d shards; median %.2f s; TTL %.1f s + 2 ticks"
                 % (len(its), records.pct(took, 50, 0), TTL_MS / 1000.0))
        change_bumps.append(bumps(snap, after))
        snap = after
        fleet.start(victim)
        snap, _, _ = settle(db, members, s, 60)
        rows.add("terms per shard per membership change, most",
                 max(change_bumps), "terms", "<= 1",
                 "join, leave, fast restart, kill -9: %s"
                 % ", ".join("+%d" % b for b in change_bumps))

        if args.soak > 0:
            soak(db, fleet, members, s, args.soak, rows)
    finally:
        fleet.stop_all()
    out.extend(rows.rows)
    return out


def soak(db, fleet, members, nshards, seconds, rows):
    """A membership change every 20 s for seconds (the fleet keeps between
    N-1 and N+1 members): a join, a graceful leave, a kill -9, or a kill -9
    and a restart under the same id. Counts the shards whose leader changed
    more than once in one change's window (ping-pong), and changes of
    leader after the window's membership had settled."""
    log("soak for %d s" % seconds)
    rnd = random.Random(7)
    ids = list(members) + ["m%d" % (len(members) + 1)]
    live = list(members)
    t_end = time.monotonic() + seconds
    done = {"join": 0, "leave": 0, "kill": 0, "restart": 0}
    pingpong = stable_moves = total_moves = 0
    snap = db.shards()
    while time.monotonic() < t_end:
        can = ["restart"]
        if len(live) < len(ids):
            can.append("join")
        if len(live) >= len(members):
            can += ["leave", "kill"]
        what = rnd.choice(can)
        if what == "join":
            v = rnd.choice([x for x in ids if x not in live])
            fleet.start(v)
            live.append(v)
        elif what in ("leave", "kill"):
            v = rnd.choice(live)
            fleet.stop(v, signal.SIGTERM if what == "leave" else
                       signal.SIGKILL)
            live.remove(v)
        else:
            v = rnd.choice(live)
            fleet.stop(v, signal.SIGKILL)
            fleet.start(v)
        done[what] += 1
        owners = {x: [snap[x][0]] for x in snap}
        t0 = time.monotonic()
        settled_at = None
        while time.monotonic() - t0 < 20:
            cur = db.shards()
            for x, (leader, _) in cur.items():
                if leader and leader != owners[x][-1]:
                    owners[x].append(leader)
                    if settled_at is not None:
                        stable_moves += 1
            if settled_at is None and balanced(cur, live, nshards):
                settled_at = time.monotonic()
            time.sleep(0.2)
        for x, seq in owners.items():
            total_moves += len(seq) - 1
            if len(seq) > 2:
                pingpong += 1
        snap = db.shards()
    rows.add("soak, shards that ping-ponged", pingpong, "shards", "0",
             "%d s, a change every 20 s: %s; %d moves in all; %d moves "
             "after a change had settled (goal 0)"
             % (seconds, ", ".join("%d %s" % (n, w) for w, n in done.items()),
                total_moves, stable_moves))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", required=True)
    ap.add_argument("--connect", required=True)
    ap.add_argument("--members", type=int, default=10)
    ap.add_argument("--shards", type=int, default=10000)
    ap.add_argument("--host", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--soak", type=int, default=0)
    ap.add_argument("--short", action="store_true")
    args = ap.parse_args()
    try:
        rows = run(args)
    except RuntimeError as e:
        log("failed: %s" % e)
        return 1
    old = []
    if os.path.exists(args.out):
        with open(args.out) as f:
            old = json.load(f)
    with open(args.out, "w") as f:
        json.dump(old + rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
