# SPDX-License-Identifier: MIT
"""test_python.py: the odbc_leader package of contrib/python against the
built plugins: the ABI binding (odbc_leader.plugin), Leader, the fence.

Run by tests/contrib/python.test, which sets up a hermetic odbcinst.ini
(ODBCSYSINI) and exports:

    OL_PY_SRC      contrib/python of the source tree (the module, the example)
    OL_PY_PLUGINS  the directory of the built odbc_leader.so, always_leader.so
    OL_TMP         a private temp dir for the SQLite files

odbc_leader.so campaigns on SQLite files through the SQLite3 ODBC driver.
Leases are long (60 s) wherever a takeover is checked, so that only a
resign, never an expiry, can explain it; the time bounds are generous
liveness limits.
"""

import ctypes
import gc
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import unittest

SRC = os.environ["OL_PY_SRC"]
PLUGINS = os.environ["OL_PY_PLUGINS"]
TMP = os.environ["OL_TMP"]
sys.path.insert(0, SRC)
import odbc_leader as ol  # noqa: E402
from odbc_leader import plugin as lp  # noqa: E402
from odbc_leader.fencing import Fence, FenceError  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "lib"))
from shards import fnv1a_shard  # noqa: E402 (tests/lib: the shard oracle)

ODBC_SO = os.path.join(PLUGINS, "odbc_leader.so")
ODBC_LEADER = os.environ["OL_PY_ODBC_LEADER"]
ALWAYS_SO = os.path.join(PLUGINS, "always_leader.so")
LIVENESS_S = 30  # bound on anything that should take well under a second


def catch_up_vectors():
    """The vector lines of docs/catch-up-vectors.txt."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        os.pardir, os.pardir, "docs", "catch-up-vectors.txt")
    with open(path, encoding="utf-8") as f:
        return [ln.strip() for ln in f
                if ln.strip() and not ln.startswith("#")]


def discovery_vectors():
    """The rows of docs/plugin-discovery-vectors.txt: (given, env,
    pkglibdir, files, result), "-" as None and files as a set."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        os.pardir, os.pardir, "docs",
                        "plugin-discovery-vectors.txt")
    rows = []
    with open(path, encoding="utf-8") as f:
        for ln in f:
            if not ln.strip() or ln.startswith("#"):
                continue
            given, env, pc, files, result = [c.strip() for c in ln.split("|")]
            none = (lambda v: None if v == "-" else v)
            rows.append((none(given), none(env), none(pc),
                         set() if files == "-" else set(files.split(",")),
                         result))
    return rows


def ints(text):
    """A vector's comma-separated times ("-": none)."""
    return [] if text == "-" else [int(x) for x in text.split(",")]


class Recorder:
    """Collects on_change and log calls."""

    def __init__(self):
        self.changes = []
        self.logs = []

    def on_change(self, is_leader, term, leader_id):
        self.changes.append((is_leader, term, leader_id))

    def log(self, level, msg):
        self.logs.append((level, msg))


def tick_until(inst, want_leader):
    """Ticks inst until its leadership is want_leader; returns the last
    TickResult. Fails after LIVENESS_S."""
    deadline = time.monotonic() + LIVENESS_S
    while True:
        r = inst.tick()
        if r.leader == want_leader:
            return r
        if time.monotonic() > deadline:
            raise AssertionError("leader=%s not reached" % want_leader)
        time.sleep(0.05)


class OdbcLeaderTest(unittest.TestCase):
    """odbc_leader.so on a SQLite file of its own per test."""

    def setUp(self):
        self.plugin = lp.Plugin(ODBC_SO)
        self.db = os.path.join(TMP, self.id().rsplit(".", 1)[-1] + ".db")
        self.insts = []

    def tearDown(self):
        for inst in self.insts:
            inst.shutdown()

    def config(self, cid, ttl=60000, ns="py"):
        return "Driver=SQLite3;Database=%s;LeaderNamespace=%s;LeaderId=%s;" \
            "LeaderTTL=%d" % (self.db, ns, cid, ttl)

    def candidate(self, cid, rec=None, **kw):
        rec = rec or Recorder()
        inst = self.plugin.init(self.config(cid, **kw), log=rec.log,
                                on_change=rec.on_change)
        self.insts.append(inst)
        return inst, rec

    def lease(self, ns="py"):
        """(leader_id, term) of the lease row, read with Python's sqlite3."""
        db = sqlite3.connect(self.db, timeout=10)
        try:
            return db.execute(
                "SELECT leader_id, term FROM odbc_leader_lease "
                "WHERE namespace = ?", (ns,)).fetchone()
        finally:
            db.close()

    def test_table(self):
        self.assertEqual(self.plugin.name, "odbc_leader")
        self.assertEqual(self.plugin.abi_major, lp.ABI_MAJOR)
        self.assertEqual(self.plugin._table.struct_size,
                         lp.ctypes.sizeof(lp._LeaderPlugin))
        self.assertTrue(self.plugin.version)

    def test_shard_of_vectors(self):
        # docs/abi.md's table, asked of the plugin through a group of each
        # shard count; the binding computes no hash of its own
        vectors = {64: [("backup", 63), ("nightly-report", 43)],
                   1000: [("job:42", 480), ("", 37)],
                   16384: [("caf\u00e9", 3465)]}
        for shards, keys in vectors.items():
            inst = self.plugin.init(self.config("v", ns="v%d" % shards) +
                                    ";LeaderShards=%d" % shards)
            self.insts.append(inst)
            for key, want in keys:
                self.assertEqual(inst.shard_of(key), want, (key, shards))
                self.assertEqual(fnv1a_shard(key, shards), want)
        single, _ = self.candidate("s")
        self.assertEqual(single.shard_of("backup"), 0)

    def test_plugin_discovery_vectors(self):
        from odbc_leader.leader import _resolve_plugin
        rows = discovery_vectors()
        self.assertGreaterEqual(len(rows), 15)
        for given, env, pc, files, result in rows:
            asked = []

            def pkglibdir(pc=pc):
                asked.append(1)
                return pc
            call = (lambda: _resolve_plugin(given, env, pkglibdir,
                                            files.__contains__))
            if not result.startswith("error "):
                self.assertEqual(call(), result, (given, env, pc, files))
                continue
            kind, *paths = result.split()[1:]
            with self.assertRaises(FileNotFoundError) as cm:
                call()
            msg = str(cm.exception)
            for p in paths:
                self.assertIn(p, msg)
            self.assertEqual("$ODBC_LEADER_PLUGIN" in msg,
                             kind in ("env", "none"), msg)
            self.assertEqual(bool(asked), kind == "none", msg)

    def test_catch_up_vectors(self):
        # docs/catch-up-vectors.txt: the same answers in C and every binding
        n = 0
        for line in catch_up_vectors():
            policy, grace, now, last, flags, times, _, want = line.split()
            args = (policy, int(grace), int(now), int(last), ints(times),
                    flags == "present")
            if want == "EINVAL":
                with self.assertRaises(lp.LeaderPluginError, msg=line):
                    self.plugin.catch_up_select(*args)
            else:
                self.assertEqual(self.plugin.catch_up_select(*args),
                                 ints(want), line)
            n += 1
        self.assertGreaterEqual(n, 30)

    def test_catch_up_reads_the_ledger(self):
        # the decision from the ledger's latest fire and the database clock
        inst, _ = self.candidate("cu")
        tick_until(inst, True)
        now = int(time.time()) * 1000
        times = [now - 30000, now - 20000, now - 4000]
        self.assertEqual(inst.catch_up("cu", "all", 60000, times), [])
        self.assertTrue(inst.claim("cu", now - 40000))
        self.assertEqual(inst.catch_up("cu", "all", 60000, times), times)
        self.assertEqual(inst.catch_up("cu", "latest", 60000, times),
                         times[2:])
        self.assertEqual(inst.catch_up("cu", "all", 10000, times), times[2:])
        with self.assertRaises(lp.LeaderPluginError):
            inst.catch_up("cu", "sometimes", 10000, times)

    def test_group_spreads_shards_and_claims_by_shard(self):
        # two members of a group of 16 shards: first ticks only look,
        # then one takes all; once the other has been seen alive for two
        # renew intervals, its share is stopped (reported) and released,
        # and it takes it
        changes = {"a": [], "b": []}

        def member(cid):
            conf = self.config(cid, ttl=3000, ns="grp") + ";LeaderShards=16"
            inst = self.plugin.init(
                conf, on_shard_change=lambda s, led, t, c=cid:
                changes[c].append((s, led, t)))
            self.insts.append(inst)
            return inst

        a = member("a")
        self.assertEqual(a.shards(), 16)
        self.assertEqual(a.shard_of("job:42"), fnv1a_shard("job:42", 16))
        self.assertFalse(a.tick().leader)  # the first tick only looks
        time.sleep(0.05)
        self.assertTrue(a.tick().leader)
        self.assertEqual(sum(a.shard_leadership(s)[0] != 0
                             for s in range(16)), 16)
        b = member("b")
        deadline = time.monotonic() + LIVENESS_S
        while True:
            a.tick()
            b.tick()
            led_a = [s for s in range(16) if a.shard_leadership(s)[0]]
            led_b = [s for s in range(16) if b.shard_leadership(s)[0]]
            if led_a and led_b and len(led_a) + len(led_b) == 16:
                break
            self.assertLess(time.monotonic(), deadline, (led_a, led_b))
            time.sleep(0.1)
        self.assertFalse(set(led_a) & set(led_b))
        # every shard b leads was reported stopped by a before b took it
        for s in led_b:
            self.assertIn((s, False), [(x, led) for x, led, _ in changes["a"]])
            self.assertIn((s, True), [(x, led) for x, led, _ in changes["b"]])
        # a claim goes to the job's shard, fenced by its term
        job = next(j for j in ("j%d" % i for i in range(100))
                   if fnv1a_shard(j, 16) in led_b)
        fire = int(time.time()) * 1000
        self.assertTrue(b.claim(job, fire))
        self.assertFalse(b.claim(job, fire))
        self.assertTrue(b.leads_job(job))
        self.assertFalse(a.leads_job(job))
        with self.assertRaises(lp.NotLeaderError):
            a.claim(job, fire + 1000)
        b.finish(job, fire, 0)

    def test_abi_1_4_recovery_pause_and_run_now(self):
        # a leads and claims a fire that allows 2 attempts, then stops
        # ticking (as if killed); b takes over, is offered the fire and
        # runs it as attempt 2; a's late finish is refused by its term
        a, _ = self.candidate("alpha", ttl=3000)
        b, _ = self.candidate("bravo", ttl=3000)
        tick_until(a, True)
        fire = int(time.time()) * 1000
        rc, c1 = a.claim_fire("rec", fire, 2)
        self.assertEqual(rc, lp.CLAIM_RUN)
        self.assertEqual((c1.attempt, c1.max_attempts, c1.recovering,
                          c1.triggered, c1.term, c1.nominal_ms),
                         (1, 2, False, False, a.term(), fire))
        self.assertEqual(a.claim_fire("rec", fire, 2), (0, None))
        self.assertEqual(b.offers(), [])  # b learns offers from now on
        tick_until(b, True)
        self.assertEqual([(o.job, o.fire_ms, o.attempt) for o in b.offers()],
                         [("rec", fire, 1)])
        rc, c2 = b.claim_fire("rec", fire, 2)
        self.assertEqual(rc, lp.CLAIM_RUN)
        self.assertEqual((c2.attempt, c2.recovering, c2.term),
                         (2, True, b.term()))
        with self.assertRaises(lp.LeaderPluginError):
            a.finish_fire(c1, 0)
        b.finish_fire(c2, 0)
        # pause: refused (recorded skipped); a run-now reaches the offers
        b.pause_job("p")
        self.assertEqual(b.claim_fire("p", fire, 1), (lp.CLAIM_PAUSED, None))
        b.pause_job("p", False)
        key = b.trigger_job("p")
        self.assertLess(key, 0)
        deadline = time.monotonic() + 10
        while key not in [o.fire_ms for o in b.offers()]:
            self.assertLess(time.monotonic(), deadline)
            b.tick()
            time.sleep(0.1)
        rc, c3 = b.claim_fire("p", key, 1)
        self.assertEqual(rc, lp.CLAIM_RUN)
        self.assertTrue(c3.triggered)
        b.finish_fire(c3, 0)
        self.assertEqual(b.claim_fire("p", key, 1), (0, None))

    def test_one_leads_the_other_follows(self):
        a, ra = self.candidate("alpha")
        b, rb = self.candidate("bravo")
        r = a.tick()
        self.assertTrue(r.leader)
        self.assertGreater(r.next_tick_ms, 0)
        self.assertLessEqual(r.next_tick_ms, 60000)
        self.assertFalse(b.tick().leader)
        term = a.term()
        self.assertGreater(term, 0)
        self.assertTrue(a.is_leader())
        self.assertFalse(b.is_leader())
        self.assertEqual(b.term(), 0)
        self.assertEqual(ra.changes, [(True, term, "alpha")])
        self.assertEqual(rb.changes, [(False, term, "alpha")])
        self.assertEqual(self.lease(), ("alpha", term))
        # is_leader and term from another thread
        seen = []
        t = threading.Thread(target=lambda: seen.append((a.is_leader(), a.term())))
        t.start()
        t.join()
        self.assertEqual(seen, [(True, term)])

    def test_shutdown_of_the_leader_lets_the_other_win(self):
        a, ra = self.candidate("alpha")
        b, rb = self.candidate("bravo")
        tick_until(a, True)
        tick_until(b, False)
        old = a.term()
        a.shutdown()
        self.assertTrue(a.closed)
        self.assertFalse(a.is_leader())
        self.assertEqual(a.term(), 0)
        a.shutdown()  # again: nothing
        self.assertEqual(ra.changes[-1][0], False)
        self.assertTrue(b.tick().leader)  # the lease was resigned, not expired
        self.assertEqual(b.term(), old + 1)
        self.assertEqual(rb.changes[-1], (True, old + 1, "bravo"))
        self.assertEqual(self.lease(), ("bravo", old + 1))
        with self.assertRaises(ValueError):
            a.tick()

    def test_context_manager_and_collection_resign(self):
        b, rb = self.candidate("bravo")
        with self.plugin.init(self.config("alpha")) as a:
            tick_until(a, True)
            tick_until(b, False)
        self.assertTrue(a.closed)
        self.assertTrue(b.tick().leader)
        # an instance dropped without shutdown resigns when collected
        c = self.plugin.init(self.config("charlie"))
        b.shutdown()
        tick_until(c, True)
        term = c.term()
        d, rd = self.candidate("delta")
        tick_until(d, False)
        del c
        gc.collect()
        self.assertTrue(d.tick().leader)
        self.assertEqual(d.term(), term + 1)

    def test_bad_config_raises_the_plugins_message(self):
        with self.assertRaises(lp.LeaderPluginError) as cm:
            self.plugin.init(self.config("alpha") + ";LeaderBogus=1")
        e = cm.exception
        self.assertEqual(e.code, -1)
        self.assertIn("LeaderBogus", str(e))
        self.assertEqual(e.strerror, self.plugin.strerror(e.code))
        self.assertNotEqual(e.strerror, "unknown error")
        with self.assertRaises(lp.LeaderPluginError) as cm:
            self.plugin.init("Driver=NoSuchDriver;PWD=hunter2secret")
        self.assertLess(cm.exception.code, 0)
        self.assertNotIn("hunter2secret", str(cm.exception))

    def test_abi_1_2_id_classes_and_last_error(self):
        a, ra = self.candidate("alpha")
        self.assertEqual(a.candidate_id(), "alpha")
        self.assertEqual(a.last_error().code, 0)
        self.assertEqual(self.plugin.error_class(-1), lp.CLASS_CONFIG)
        self.assertEqual(self.plugin.error_class(lp.ENOTLEADER),
                         lp.CLASS_TRANSIENT)
        self.assertEqual(self.plugin.error_class(0), 0)
        with self.assertRaises(lp.NotLeaderError):
            a.claim("job", 1)
        e = a.last_error()
        self.assertEqual(e.code, lp.ENOTLEADER)
        self.assertEqual(e.error_class, lp.CLASS_TRANSIENT)
        self.assertEqual(e.sqlstate, "")
        self.assertTrue(e.message)

    def test_log_callback(self):
        a, ra = self.candidate("alpha")
        a.tick()
        self.assertTrue(ra.logs)
        for level, msg in ra.logs:
            self.assertIsInstance(level, int)
            self.assertTrue(0 <= level <= 7, level)
            self.assertIsInstance(msg, str)
        self.assertTrue(any("alpha" in m for _, m in ra.logs), ra.logs)

    def test_claims_are_fenced_and_once(self):
        a, _ = self.candidate("alpha")
        b, _ = self.candidate("bravo")
        tick_until(a, True)
        tick_until(b, False)
        self.assertTrue(self.plugin.has("claim"))
        fire = (int(time.time()) // 60) * 60000  # this minute, epoch ms
        with self.assertRaises(lp.NotLeaderError) as cm:
            b.claim("job", fire)
        self.assertEqual(cm.exception.code, lp.ENOTLEADER)
        self.assertTrue(a.claim("job", fire))
        self.assertFalse(a.claim("job", fire))  # once, also for the claimant
        a.finish("job", fire, 3)
        a.finish("job", fire, 3)  # idempotent
        db = sqlite3.connect(self.db, timeout=10)
        try:
            row = db.execute(
                "SELECT term, claimed_by, status FROM odbc_leader_fire "
                "WHERE namespace = 'py' AND job = 'job' AND fire_ms = ?",
                (fire,)).fetchone()
        finally:
            db.close()
        self.assertEqual(row, (a.term(), "alpha", 3))
        # a fire older than LeaderFireRetention (7 days) is refused
        with self.assertRaises(lp.LeaderPluginError) as cm:
            a.claim("job", 1000)
        self.assertEqual(cm.exception.code, -15)
        # a fire bravo never claimed
        with self.assertRaises(lp.LeaderPluginError) as cm:
            b.finish("job", fire + 60000, 0)
        self.assertEqual(cm.exception.code, -16)
        term, valid = a.leadership()
        self.assertEqual(term, a.term())
        self.assertTrue(0 < valid <= 60000, valid)
        self.assertEqual(b.leadership(), (0, 0))
        # after the handover the new leader finds the fire claimed
        a.shutdown()
        tick_until(b, True)
        self.assertFalse(b.claim("job", fire))
        self.assertTrue(b.claim("job", fire + 60000))
        with self.assertRaises(ValueError):
            a.claim("job", fire)

    def test_callback_exception_is_raised_by_tick(self):
        def boom(*_):
            raise RuntimeError("from on_change")

        a = self.plugin.init(self.config("alpha"), on_change=boom)
        with self.assertRaisesRegex(RuntimeError, "from on_change"):
            a.tick()
        self.assertTrue(a.is_leader())  # the election went on
        self.assertTrue(a.tick().leader)
        # the step-down at shutdown calls on_change: raised once done
        with self.assertRaisesRegex(RuntimeError, "from on_change"):
            a.shutdown()
        self.assertTrue(a.closed)


class AbiTest(unittest.TestCase):
    def test_major_mismatch_refused(self):
        for so in (ODBC_SO, ALWAYS_SO):
            for major in (0, 2, 65535):
                with self.assertRaises(lp.LeaderPluginError) as cm:
                    lp.Plugin(so, abi_major=major)
                self.assertEqual(cm.exception.code, lp.EABI)

    def test_always_leader(self):
        p = lp.Plugin(ALWAYS_SO)
        self.assertEqual(p.name, "always_leader")
        rec = Recorder()
        with p.init("LeaderMode=always", rec.log, rec.on_change) as inst:
            self.assertFalse(inst.is_leader())
            self.assertEqual(inst.tick(), lp.TickResult(True, 1000))
            self.assertEqual(inst.term(), 1)
        self.assertEqual(rec.changes, [(True, 1, "always_leader")])
        self.assertIn((6, "always_leader: LeaderMode=always"), rec.logs)
        rec = Recorder()
        with p.init("LeaderMode=never", on_change=rec.on_change) as inst:
            self.assertFalse(inst.tick().leader)
        self.assertEqual(rec.changes, [(False, 0, None)])
        with self.assertRaises(lp.LeaderPluginError) as cm:
            p.init("LeaderMode=sometimes")
        self.assertIn("sometimes", str(cm.exception))
        self.assertEqual(cm.exception.strerror, "bad configuration")

    def test_always_leader_claims(self):
        p = lp.Plugin(ALWAYS_SO)
        self.assertEqual((p.abi_major, p.abi_minor), (lp.ABI_MAJOR, lp.ABI_MINOR))
        with p.init("") as inst:
            self.assertEqual(inst.leadership(), (0, 0))
            with self.assertRaises(lp.NotLeaderError):
                inst.claim("j", 5)
            inst.tick()
            self.assertEqual(inst.leadership(), (1, 2**32 - 1))
            self.assertTrue(inst.claim("j", 5))
            self.assertFalse(inst.claim("j", 5))
            self.assertTrue(inst.claim("j", 6))
            inst.finish("j", 5, 0)
            with self.assertRaises(lp.LeaderPluginError) as cm:
                inst.finish("k", 5, 0)
            self.assertEqual(cm.exception.code, -4)
        self.assertEqual(inst.leadership(), (0, 0))
        with p.init("LeaderMode=never") as inst:
            inst.tick()
            with self.assertRaises(lp.NotLeaderError):
                inst.claim("j", 5)

    def test_abi_1_0_table_has_no_claim(self):
        # A plugin whose struct_size ends before claim (ABI 1.0): the 1.1
        # members are missing, and calling them raises EABI without
        # reading past the table.
        real = lp.Plugin(ALWAYS_SO)
        old = lp._LeaderPlugin.from_buffer_copy(
            ctypes.string_at(ctypes.addressof(real._table),
                             ctypes.sizeof(lp._LeaderPlugin)))
        old.struct_size = ctypes.sizeof(lp._LeaderPlugin10)
        old.abi_minor = 0
        p = lp.Plugin.__new__(lp.Plugin)
        p.__dict__.update(real.__dict__)
        p._table = old
        p.abi_minor = 0
        for m in ("claim", "finish", "leadership"):
            self.assertFalse(p.has(m), m)
        self.assertTrue(p.has("term"))
        self.assertFalse(p.has("no_such_member"))
        with p.init("") as inst:
            inst.tick()
            self.assertTrue(inst.is_leader())
            for call in (lambda: inst.claim("j", 5),
                         lambda: inst.finish("j", 5, 0),
                         inst.leadership):
                with self.assertRaises(lp.LeaderPluginError) as cm:
                    call()
                self.assertEqual(cm.exception.code, lp.EABI)
                self.assertIn("ABI 1.0", str(cm.exception))
        # the 1.0 table ends exactly where claim begins
        self.assertEqual(lp.ctypes.sizeof(lp._LeaderPlugin10),
                         lp._LeaderPlugin.claim.offset)

    def test_logging_callback(self):
        import logging
        logger = logging.getLogger("leader_plugin_test")
        with self.assertLogs(logger, logging.INFO) as cm:
            with lp.Plugin(ALWAYS_SO).init(
                    "", log=lp.logging_callback(logger)) as inst:
                inst.tick()
        self.assertIn("INFO:leader_plugin_test:always_leader: LeaderMode=always",
                      cm.output)


class LeaderTest(unittest.TestCase):
    """odbc_leader.Leader: ticking in a thread, claims, find_plugin."""

    def setUp(self):
        self.db = os.path.join(TMP, self.id().rsplit(".", 1)[-1] + ".db")
        self.leaders = []

    def tearDown(self):
        for leader in self.leaders:
            leader.stop()

    def leader(self, cid, ttl_ms=60000, so=ODBC_SO):
        leader = ol.Leader("Driver=SQLite3;Database=%s;LeaderId=%s" % (
            self.db, cid), namespace="pkg", ttl_ms=ttl_ms, plugin=so)
        self.leaders.append(leader)
        return leader.start()

    def wait(self, cond):
        deadline = time.monotonic() + LIVENESS_S
        while not cond():
            self.assertLess(time.monotonic(), deadline, "liveness bound")
            time.sleep(0.01)

    def test_one_leads_claims_once_and_hands_over(self):
        changes = []
        t = int(time.time()) * 1000  # fires older than the retention fail
        a = self.leader("a")
        self.wait(a.is_leader)
        b = self.leader("b")
        b.add_listener(lambda leading, term: changes.append((leading, term)))
        time.sleep(0.3)  # b has ticked: a follower
        self.assertFalse(b.is_leader())
        self.assertIsNone(b.claim("job", t))  # not leading: not its fire
        fire = a.claim("job", t)
        self.assertEqual(fire, ol.Fire("job", t, a.term()))
        self.assertIsNone(a.claim("job", t))  # claimed before
        with a.claimed("job", t + 1000) as f:
            self.assertIsNotNone(f)
        with self.assertRaises(RuntimeError):
            with a.claimed("job", t + 2000) as f:
                raise RuntimeError("the job failed")
        db = sqlite3.connect(self.db, timeout=10)
        rows = db.execute("SELECT fire_ms, status FROM odbc_leader_fire "
                          "ORDER BY fire_ms").fetchall()
        db.close()
        self.assertEqual(rows, [(t, None), (t + 1000, 0), (t + 2000, 1)])
        term = a.term()
        a.stop()  # resigns: b takes over at its next attempt
        self.wait(b.is_leader)
        self.assertGreater(b.term(), term)
        self.wait(lambda: changes and changes[-1][0])
        self.assertEqual(changes[-1], (True, b.term()))

    def test_apscheduler_elected_before_it_started_catches_up(self):
        """A host elected before its scheduler started (within
        Leader.start(), when nobody led: a restart of every host): the
        executor still catches up the fires within the grace, once each,
        with the real APScheduler."""
        from datetime import datetime, timezone
        from apscheduler.schedulers.background import BackgroundScheduler
        from apscheduler.triggers.interval import IntervalTrigger
        from odbc_leader.apscheduler import LeaderExecutor, current_fire
        t0 = (int(time.time()) - 6) * 1000  # before the grace
        a = self.leader("a")
        self.wait(a.is_leader)
        a.finish(a.claim("tick", t0))
        a.stop()
        b = self.leader("b")
        self.wait(b.is_leader)
        since = time.time() * 1000
        runs = queue.Queue()
        sched = BackgroundScheduler(executors={"default": LeaderExecutor(b)},
                                    timezone=timezone.utc)
        sched.add_job(lambda: runs.put(current_fire().fire_ms),
                      IntervalTrigger(seconds=1, start_date=datetime(
                          1970, 1, 1, tzinfo=timezone.utc)),
                      id="tick", coalesce=False, max_instances=10,
                      misfire_grace_time=4)
        sched.start()
        time.sleep(1.5)
        sched.shutdown(wait=True)
        got = []
        while not runs.empty():
            got.append(runs.get())
        caught = [m for m in got if m <= since]
        self.assertGreaterEqual(len(caught), 2, "caught up %r" % got)
        self.assertEqual(len(set(got)), len(got), "ran twice: %r" % got)
        for m in caught:
            self.assertEqual(m % 1000, 0)
            self.assertGreater(m, since - 4001, "outside the grace: %r" % got)

    def paused_scheduler(self, coalesce):
        """A real APScheduler (LeaderExecutor, a job each second from the
        epoch, coalesce as given) paused for 3.6 s once the job ran, then
        resumed: returns (the newest fire run before the pause, the fire
        due at the resume, every fire run)."""
        from datetime import datetime, timezone
        from apscheduler.schedulers.background import BackgroundScheduler
        from apscheduler.triggers.interval import IntervalTrigger
        from odbc_leader.apscheduler import LeaderExecutor, current_fire
        leader = self.leader("a")
        self.wait(leader.is_leader)
        runs = []
        sched = BackgroundScheduler(
            executors={"default": LeaderExecutor(leader)},
            timezone=timezone.utc)
        sched.add_job(lambda: runs.append(current_fire().fire_ms),
                      IntervalTrigger(seconds=1, start_date=datetime(
                          1970, 1, 1, tzinfo=timezone.utc)),
                      id="tick-%s" % coalesce, coalesce=coalesce,
                      max_instances=10, misfire_grace_time=30)
        sched.start()
        self.wait(lambda: runs)
        sched.pause()
        time.sleep(0.2)  # a fire under way ends
        before = max(runs)
        time.sleep(3.4)
        due = int(time.time()) * 1000
        sched.resume()
        time.sleep(1.5)
        sched.shutdown(wait=True)
        leader.stop()
        return before, due, sorted(runs)

    def test_apscheduler_late_thread_follows_the_catch_up_policy(self):
        """A paused scheduler's skipped fires are run as the catch-up
        policy says (coalesce=False: all, each once; True: latest, the
        one due now)."""
        before, due, got = self.paused_scheduler(False)
        self.assertEqual([m for m in got if before < m <= due],
                         list(range(before + 1000, due + 1, 1000)),
                         "coalesce=False: %r" % got)
        before, due, got = self.paused_scheduler(True)
        self.assertEqual([m for m in got if before < m <= due], [due],
                         "coalesce=True: %r" % got)

    def late_beat(self, policy):
        """A real celery beat (LeaderScheduler, an in-memory broker) with an
        entry each second and odbc_leader_catch_up=policy, its loop held
        for 3.6 s once it sent a fire (a long send; its Leader keeps
        renewing), then run on: returns (the newest fire sent before the
        hold, the fire due when the loop ran again, every fire sent)."""
        from celery import Celery
        from odbc_leader.celery import LeaderScheduler
        app = Celery("late", broker="memory://")
        app.conf.beat_schedule = {"every": {"task": "every",
                                            "schedule": 1.0}}
        app.conf.odbc_leader_connect = (
            "Driver=SQLite3;Database=%s;LeaderId=beat" % self.db)
        app.conf.odbc_leader_namespace = "late-" + policy
        app.conf.odbc_leader_plugin = ODBC_SO
        app.conf.odbc_leader_catch_up = policy
        beat = LeaderScheduler(app)
        self.addCleanup(beat.close)
        sent = lambda: [r[0] for r in sqlite3.connect(
            self.db, timeout=10).execute(
                "SELECT fire_ms FROM odbc_leader_fire WHERE namespace = ? "
                "ORDER BY fire_ms", ("late-" + policy,))]
        deadline = time.monotonic() + LIVENESS_S
        while not sent():
            self.assertLess(time.monotonic(), deadline, "liveness bound")
            beat.tick()
            time.sleep(0.05)
        before = sent()[-1]
        time.sleep(3.6)
        due = int(time.time()) * 1000
        for _ in range(30):
            beat.tick()
            time.sleep(0.05)
        return before, due, sent()

    def test_celery_late_beat_follows_the_catch_up_policy(self):
        """A late beat's skipped entries are sent as the catch-up policy
        says, the one due now in any case: "all" sends each, "skip" none
        (before, beat's own loop sent each whatever the policy)."""
        before, due, got = self.late_beat("all")
        self.assertEqual([m for m in got if before < m <= due],
                         list(range(before + 1000, due + 1, 1000)),
                         "all: %r" % got)
        before, due, got = self.late_beat("skip")
        self.assertEqual([m for m in got if before < m <= due], [due],
                         "skip: %r" % got)

    def test_group_members_split_jobs_and_claim_in_the_shards_term(self):
        # two Leaders of a group of 8 shards: each leads some shards, and
        # a job is claimed by the one that leads its shard, under that
        # shard's term; a stop hands its shards to the other
        t = int(time.time()) * 1000
        shard_events = []

        def member(cid):
            leader = ol.Leader(
                "Driver=SQLite3;Database=%s;LeaderId=%s;"
                "LeaderRenewInterval=200" % (self.db, cid),
                namespace="fleet", ttl_ms=3000, plugin=ODBC_SO, shards=8)
            leader.add_shard_listener(
                lambda s, led, term: shard_events.append((cid, s, led, term)))
            self.leaders.append(leader)
            return leader.start()

        a, b = member("a"), member("b")
        self.assertEqual((a.shards, b.shards), (8, 8))
        jobs = ["job-%d" % i for i in range(40)]
        self.wait(lambda: all(a.leads(j) != b.leads(j) for j in jobs) and
                  any(a.leads(j) for j in jobs) and
                  any(b.leads(j) for j in jobs))
        ja = next(j for j in jobs if a.leads(j))
        jb = next(j for j in jobs if b.leads(j))
        self.assertIsNone(a.claim(jb, t))  # not its shard: b's fire
        fire = b.claim(jb, t)
        self.assertIsNotNone(fire)
        self.assertEqual(fire.term, b.term_of(jb))
        self.assertEqual(fire.term, lp.Instance.shard_leadership(
            b._inst, b.shard_of(jb))[0])
        self.assertIsNone(b.claim(jb, t))
        b.finish(fire)
        with a.claimed(ja, t) as f:
            self.assertEqual(f, ol.Fire(ja, t, a.term_of(ja)))
        self.assertEqual(a.shard_of(ja), fnv1a_shard(ja, 8))
        self.assertIn(("a", a.shard_of(ja), True, a.term_of(ja)),
                      shard_events)
        b.stop()  # leaves the group: a takes b's shards at once
        self.wait(lambda: all(a.leads(j) for j in jobs))
        self.assertIsNotNone(a.claim(jb, t + 1000))

    def test_stop_from_a_frame_that_holds_the_lock(self):
        # celery beat stops the scheduler in its SIGTERM handler, which may
        # interrupt the thread inside claim() or finish(), lock held
        a = self.leader("a")
        self.wait(a.is_leader)

        def interrupted():
            with a._lock:  # as inside claim()
                a.stop()

        t = threading.Thread(target=interrupted, daemon=True)
        t.start()
        t.join(LIVENESS_S)
        self.assertFalse(t.is_alive(), "stop() deadlocked")
        self.assertFalse(a.is_leader())

    def test_bad_configuration_names_the_key(self):
        with self.assertRaises(ol.LeaderPluginError) as cm:
            ol.Leader("Driver=SQLite3;Database=%s;LeaderTTL=soon" % self.db,
                      plugin=ODBC_SO)
        self.assertIn("LeaderTTL", str(cm.exception))

    def test_find_plugin(self):
        self.assertEqual(ol.find_plugin(ODBC_SO), ODBC_SO)
        with self.assertRaises(FileNotFoundError):
            ol.find_plugin(os.path.join(TMP, "nope.so"))
        old = os.environ.get(ol.PLUGIN_ENV)
        try:
            os.environ[ol.PLUGIN_ENV] = ALWAYS_SO
            self.assertEqual(ol.find_plugin(), ALWAYS_SO)
            os.environ[ol.PLUGIN_ENV] = os.path.join(TMP, "nope.so")
            with self.assertRaises(FileNotFoundError) as cm:
                ol.find_plugin()
            self.assertIn(ol.PLUGIN_ENV, str(cm.exception))
        finally:
            if old is None:
                os.environ.pop(ol.PLUGIN_ENV, None)
            else:
                os.environ[ol.PLUGIN_ENV] = old


# Two passwords: a braced one with a ';' in it (a form that shows a piece of
# the connection string cut at ';' would show its second half) and one under
# a lower-case key.
PASSWORDS = ("Sup3r", "S3cr3t", "An0therPw")


def pw_connect(db):
    """A connection string with both passwords on SQLite file db."""
    return "Driver=SQLite3;Database=%s;UID=ol;PWD={Sup3r;S3cr3t};" \
        "password = An0therPw" % db


def reachable_strings(obj, bound=100000):
    """Every str (and decoded bytes) reachable from obj through its
    attributes (__dict__, __slots__), containers and exception args."""
    seen, out, todo = set(), [], [obj]
    while todo and len(seen) < bound:
        v = todo.pop()
        if isinstance(v, str):
            out.append(v)
            continue
        if isinstance(v, (bytes, bytearray)):
            out.append(bytes(v).decode("utf-8", "replace"))
            continue
        if v is None or isinstance(v, (int, float, bool)) or id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
        elif isinstance(v, (list, tuple, set, frozenset)):
            todo.extend(v)
        if isinstance(v, BaseException):
            todo.extend(v.args)
            todo.extend([v.__cause__, v.__context__])
        d = getattr(v, "__dict__", None)
        if isinstance(d, dict):
            todo.append(d)
        for cls in type(v).__mro__:
            for name in getattr(cls, "__slots__", ()):
                todo.append(getattr(v, name, None))
    return out


class PrintableTest(unittest.TestCase):
    """No password in any printable form of the package's objects: repr,
    str, format, pprint, logging, vars() and everything reachable from
    them. A Leader shows what names it (namespace, plugin, shards, state),
    nothing of its connection string."""

    def setUp(self):
        self.db = os.path.join(TMP, self.id().rsplit(".", 1)[-1] + ".db")

    def forms(self, obj):
        import io
        import logging
        import pprint
        import traceback
        out = {"repr": repr(obj), "str": str(obj),
               "format": "%s %r {0} {0!r}".format(obj) % (obj, obj),
               "pprint": pprint.pformat(obj),
               "reachable": "\n".join(reachable_strings(obj))}
        try:
            out["vars"] = pprint.pformat(vars(obj))
        except TypeError:
            pass
        if isinstance(obj, BaseException):
            out["traceback"] = "".join(traceback.format_exception(
                type(obj), obj, obj.__traceback__))
        buf = io.StringIO()
        handler = logging.StreamHandler(buf)
        log = logging.getLogger("odbc_leader.test.printable")
        log.addHandler(handler)
        log.setLevel(logging.DEBUG)
        try:
            log.info("%s %r", obj, obj)
            log.info(obj)
            if isinstance(obj, BaseException):
                try:
                    raise obj
                except BaseException:
                    log.exception("failed")
        finally:
            log.removeHandler(handler)
        out["logging"] = buf.getvalue()
        return out

    def assert_no_password(self, what, obj):
        leaks = []
        for how, text in self.forms(obj).items():
            for pw in PASSWORDS:
                if pw in text:
                    at = text.index(pw)
                    leaks.append("  %s shows %s: ...%s..." % (
                        how, pw, text[max(0, at - 30):at + 20]))
                    break
        if leaks:
            self.fail("%s: the password is printed\n%s" % (what, "\n".join(leaks)))

    def test_leader_prints_no_password(self):
        import io
        import logging
        buf = io.StringIO()
        handler = logging.StreamHandler(buf)
        root = logging.getLogger("odbc_leader")
        root.addHandler(handler)
        old_level = root.level
        root.setLevel(logging.DEBUG)  # the plugin's own log lines too
        try:
            leader = ol.Leader(pw_connect(self.db), namespace="pw",
                               ttl_ms=3000, plugin=ODBC_SO,
                               extra="Pwd=An0therPw")
            try:
                self.assert_no_password("Leader", leader)
                leader.start()
                deadline = time.monotonic() + LIVENESS_S
                while not leader.is_leader():
                    self.assertLess(time.monotonic(), deadline)
                    time.sleep(0.01)
                self.assert_no_password("Leader (leading)", leader)
                self.assertIn(" leader=True term=", repr(leader))
                self.assert_no_password("Instance", leader._inst)
                self.assert_no_password("Plugin", leader._inst.plugin)
            finally:
                leader.stop()
            self.assert_no_password("Leader (stopped)", leader)
            # What names the Leader, nothing of the connection string.
            shown = repr(leader)
            for want in ("namespace='pw'", repr(ODBC_SO), "shards=0",
                         "leader=False", "term=0"):
                self.assertIn(want, shown)
            for part in ("Driver", "SQLite3", self.db, "UID", "PWD", "Pwd",
                         "password", "Leader"):
                self.assertNotIn(part, shown.replace("odbc_leader.Leader", ""),
                                 "repr shows the connection string")
        finally:
            root.removeHandler(handler)
            root.setLevel(old_level)
        self.assertNotEqual(buf.getvalue(), "", "the plugin logged nothing")
        for pw in PASSWORDS:
            self.assertNotIn(pw, buf.getvalue(), "the log shows a password")

    def test_refused_start_prints_no_password(self):
        cases = [
            ("a bad key", pw_connect(self.db) + ";LeaderBogus=1"),
            ("no database", "Driver=SQLite3;Database=/nonexistent/dir/x.db;"
                            "PWD={Sup3r;S3cr3t};Password=An0therPw"),
        ]
        for what, conn in cases:
            logged = []
            with self.assertRaises(ol.LeaderPluginError) as cm:
                ol.Leader(conn, namespace="pw", plugin=ODBC_SO,
                          log=lambda level, msg: logged.append(msg))
            self.assert_no_password(what + ": the error", cm.exception)
            self.assert_no_password(what + ": its log lines", logged)
            with self.assertRaises(ol.LeaderPluginError) as cm:
                lp.Plugin(ODBC_SO).init(conn, log=lambda level, msg: None)
            self.assert_no_password(what + ": Plugin.init's error",
                                    cm.exception)


class QuotingTest(unittest.TestCase):
    """A namespace reaches the library as one value, whatever it holds:
    the binding quotes it as the library's parser reads it (braces, '}'
    doubled), so it can neither add nor change a key."""

    def test_namespace_is_one_value(self):
        # The library refuses these bytes in a namespace; its message names
        # the byte and where it is in the value, so the whole value got
        # there. A namespace cut at the ';' would have set LeaderTTL, one
        # braced on its own would swallow the keys after it, and blanks
        # would be trimmed.
        db = os.path.join(TMP, "quoting.db")
        cases = [
            ("a;LeaderTTL=60000", "character ';' at byte 2 "),
            ("{x", "character '{' at byte 1 "),
            ("{a};LeaderTTL=60000", "character '{' at byte 1 "),
            ("a}", "character '}' at byte 2 "),
            (" ns", "character '\\x20' at byte 1 "),
            ("ns ", "character '\\x20' at byte 3 "),
        ]
        wrong = []
        for ns, want in cases:
            try:
                leader = ol.Leader("Driver=SQLite3;Database=%s" % db,
                                   namespace=ns, ttl_ms=3000, plugin=ODBC_SO)
            except ol.LeaderPluginError as e:
                if "LeaderNamespace: " + want not in str(e):
                    wrong.append("  %r: %s" % (ns, e))
            else:
                leader.stop()
                wrong.append("  %r: taken, the Leader started" % ns)
        if wrong:
            self.fail("namespaces not refused as one value:\n" +
                      "\n".join(wrong))

    def test_valid_names_pass_as_they_are(self):
        db = os.path.join(TMP, "quoting-ok.db")
        with ol.Leader("Driver=SQLite3;Database=%s" % db,
                       namespace="a.b-c:d/e@f_1", ttl_ms=3000,
                       plugin=ODBC_SO) as leader:
            deadline = time.monotonic() + LIVENESS_S
            while not leader.is_leader():
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.01)
            self.assertEqual(ol.leader._quote("a.b-c:d/e@f_1"), "a.b-c:d/e@f_1")
            self.assertIn("namespace='a.b-c:d/e@f_1'", repr(leader))


class FenceTest(unittest.TestCase):
    """odbc_leader.fencing.Fence: a fenced write with Python's sqlite3 on
    the file whose lease odbc_leader.so holds."""

    def test_clause_in_each_paramstyle(self):
        pred = "SELECT 1 FROM l WHERE namespace = ? AND term = ?"
        self.assertEqual(Fence(pred, "n").clause(),
                         " AND EXISTS (%s)" % pred)
        self.assertIn("namespace = %s AND term = %s",
                      Fence(pred, "n", "format").clause())
        self.assertIn("namespace = :3 AND term = :4",
                      Fence(pred, "n", "numeric").clause(3))
        with self.assertRaises(ValueError):
            Fence("SELECT 1", "n")
        with self.assertRaises(ValueError):
            Fence(pred, "n", "named")

    def _check_fenced_writes(self, db_path, leader, fence):
        """Waits until leader leads, then a write fenced by an older term
        changes no row and one fenced by its term changes the row."""
        deadline = time.monotonic() + LIVENESS_S
        while not leader.is_leader():
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.01)
        db = sqlite3.connect(db_path, timeout=10)
        db.execute("CREATE TABLE report (id INTEGER PRIMARY KEY, v TEXT)")
        db.execute("INSERT INTO report VALUES (1, 'old')")
        cur = db.cursor()
        sql = "UPDATE report SET v = ? WHERE id = ?"
        self.assertEqual(fence.execute(cur, sql, ("stale", 1),
                                       leader.term() - 1), 0)
        self.assertEqual(fence.execute(cur, sql, ("new", 1),
                                       leader.term()), 1)
        db.commit()
        self.assertEqual(db.execute("SELECT v FROM report").fetchone(),
                         ("new",))
        db.close()

    def test_write_applies_only_in_the_current_term(self):
        db_path = os.path.join(TMP, "fence.db")
        leader = ol.Leader("Driver=SQLite3;Database=%s" % db_path,
                           namespace="fence", plugin=ODBC_SO).start()
        try:
            self._check_fenced_writes(db_path, leader, Fence.from_command(
                "sqlite", "fence", odbc_leader=ODBC_LEADER))
        finally:
            leader.stop()

    def test_leader_fences_without_the_command(self):
        """Leader.fence(): the plugin's predicate (ABI 1.5), the same text
        as `odbc-leader fence --bare`, with no odbc-leader on PATH; in a
        group, the namespace of the job's shard."""
        db_path = os.path.join(TMP, "fence-plugin.db")
        want = Fence.from_command("sqlite", "fencep",
                                  odbc_leader=ODBC_LEADER).predicate
        path = os.environ.get("PATH", "")
        os.environ["PATH"] = os.path.join(TMP, "no-such-dir")
        leader = None
        try:
            leader = ol.Leader("Driver=SQLite3;Database=%s" % db_path,
                               namespace="fencep", plugin=ODBC_SO).start()
            fence = leader.fence()
            self.assertEqual(fence.predicate, want)
            self.assertEqual(fence.namespace, "fencep")
            self._check_fenced_writes(db_path, leader, fence)
        finally:
            os.environ["PATH"] = path
            if leader is not None:
                leader.stop()
        group = ol.Leader("Driver=SQLite3;Database=%s" % db_path,
                          namespace="fenceg", plugin=ODBC_SO, shards=4)
        try:
            self.assertEqual(group.fence(job="backup").namespace,
                             "fenceg/%d" % fnv1a_shard("backup", 4))
            with self.assertRaises(ValueError):
                group.fence()
        finally:
            group.stop()

    def test_missing_command_is_a_clear_error(self):
        with self.assertRaises(FenceError) as cm:
            Fence.from_command("sqlite", "n",
                               odbc_leader=os.path.join(TMP, "no-such-cmd"))
        self.assertIn("cannot run", str(cm.exception))


class Lines:
    """The stdout lines of a process, read by a thread into a queue."""

    def __init__(self, proc):
        self.q = queue.Queue()
        self.seen = []
        threading.Thread(target=self._read, args=(proc.stdout,),
                         daemon=True).start()

    def _read(self, f):
        for line in f:
            self.q.put(line.rstrip("\n"))
        self.q.put(None)

    def wait_for(self, prefix):
        """Returns the first new line that starts with prefix; fails at
        end of output or after LIVENESS_S."""
        deadline = time.monotonic() + LIVENESS_S
        while True:
            left = deadline - time.monotonic()
            try:
                line = self.q.get(timeout=max(left, 0.01))
            except queue.Empty:
                line = None
            if line is None:
                raise AssertionError("no line %r in %r" % (prefix, self.seen))
            self.seen.append(line)
            if line.startswith(prefix):
                return line


class TwoProcessTest(unittest.TestCase):
    """The example scheduler in a child process against an instance here."""

    def test_example_scheduler(self):
        plugin = lp.Plugin(ODBC_SO)
        db = os.path.join(TMP, "procs.db")
        conf = "Driver=SQLite3;Database=%s;LeaderNamespace=procs;" \
            "LeaderTTL=60000;LeaderId=" % db
        proc = subprocess.Popen(
            [sys.executable, os.path.join(SRC, "example_scheduler.py"),
             "--every", "0.2", ODBC_SO, conf + "child"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            lines = Lines(proc)
            term = int(lines.wait_for("leader term=").split("=")[1])
            self.assertGreater(term, 0)
            self.assertEqual(lines.wait_for("job ran"),
                             "job ran under term %d" % term)
            rec = Recorder()
            with plugin.init(conf + "parent", on_change=rec.on_change) as me:
                self.assertFalse(me.tick().leader)
                self.assertEqual(rec.changes, [(False, term, "child")])
                proc.send_signal(signal.SIGTERM)
                self.assertEqual(proc.wait(LIVENESS_S), 0)
                lines.wait_for("shut down")
                self.assertTrue(me.tick().leader)  # the child resigned
                self.assertEqual(me.term(), term + 1)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
