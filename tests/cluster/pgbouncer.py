#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pgbouncer.py: the pgbouncer scenario of tests/cluster/cluster.py
(tests/cluster/pgbouncer.test), on the elections of elections.py.

Elections through pgbouncer (transaction and session pooling), with kill
-9 and SIGSTOP of the leader (a run and a fault-host leader in turn) and a
restart of PostgreSQL; without LeaderPooler (auto: each candidate must say
that it found a transaction pooler, or must not behind a session pooler),
and the refusals of LeaderPooler=none and session behind a transaction
pooler (exit 78 and 1, a message naming LeaderPooler=transaction, no row
left behind). --broken: LeaderTestTrustExtra and SIGSTOP only; the checks
must catch an overlap.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # the source tree may be read-only
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import elections  # noqa: E402
from elections import harness, now_ns, log  # noqa: E402

TTL_MS, RENEW_MS = elections.TTL_MS, elections.RENEW_MS
BROKEN_EXTRA_MS = elections.BROKEN_EXTRA_MS
judge, report = elections.judge, elections.report

pg_conn, start_election = elections.pg_conn, elections.start_election

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
        harness.restart_db(ctx.shell, "postgresql")
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
    no_check = elections.key_refusal(ctx, probe_conn,
                                     "LeaderTestNoPoolerCheck", "1")
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
