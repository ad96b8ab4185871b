#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""cluster.py: the driver of the database-topology tests (tests/cluster)
and of the SQLite host-clock step (tests/faults/clockstep-sqlite.test).

    cluster.py promotion|clockstep|sqlitestep|pgbouncer [OPTIONS]
               --lib ... --work DIR

promotion.test, clockstep.test, pgbouncer.test and clockstep-sqlite.test
start their servers with tests/integration/lib.sh and
tests/cluster/lib-cluster.sh, then run one scenario: promotion here,
clockstep and sqlitestep in clocksteps.py, pgbouncer in pgbouncer.py. A
scenario runs elections (one namespace each, elections.py) of two kinds
of candidates on the same namespace, fault-hosts and `odbc-leader run`
service loops, and judges each with tests/faults/checker, cmdcheck and
the checker on the union of both kinds of claims (see elections.py);
processes, proxies and servers go through tests/lib/harness.py.

promotion: a primary and a lagging streaming standby behind one proxy
address; kill -9 of the primary, the proxy retargeted at the standby, its
promotion; the terms after it must exceed every earlier one.

Exit status: 0 pass, 1 fail. With --broken 0 means the checkers caught
the overlap of a deliberate bug, 1 that they did not: LeaderTestTrustExtra
(a trust window that outlives the lease) for promotion and pgbouncer; for
the clock steps LeaderTestNoWatch=1 (a takeover on database time alone),
or, in a build without it, LeaderTestTrustExtra and a SIGSTOP of the
first leader at each step.
"""
import argparse
import os
import re
import signal
import sys
import time

sys.dont_write_bytecode = True  # the source tree may be read-only
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clocksteps  # noqa: E402
import elections  # noqa: E402
import pgbouncer  # noqa: E402
from elections import harness, now_ns, log  # noqa: E402

TTL_MS = elections.TTL_MS
BROKEN_EXTRA_MS = elections.BROKEN_EXTRA_MS
judge, report = elections.judge, elections.report
pg_conn, start_election = elections.pg_conn, elections.start_election


def kill_postmaster(datadir):
    """kill -9 of a PostgreSQL server: the postmaster and every process
    under it at once, as when its host dies. Returns the time."""
    with open(os.path.join(datadir, "postmaster.pid")) as f:
        pm = int(f.readline())
    victims = [pm] + harness.children_of(pm)
    for pid in victims:
        harness.signal_pid(pid, signal.SIGKILL)
    ref = now_ns()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and \
            any(harness.proc_state(p) not in (None, "Z") for p in victims):
        time.sleep(0.01)
    return ref


def scenario_promotion(ctx):
    """Primary + lagging streaming standby behind one proxy address; kill
    -9 of the primary, the proxy retargeted at the standby, promotion."""
    extra = BROKEN_EXTRA_MS if ctx.broken else 0
    primary = int(os.environ["OL_PG_PORT"])
    standby = int(os.environ["CL_SB_PORT"])
    repl_proxy = int(os.environ["CL_REPL_PROXY_PID"])
    plog = open(os.path.join(ctx.work, "proxy.log"), "ab")
    proxy = harness.Proxy(ctx.proxy, primary, 0, plog)
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
            harness.signal_pid(repl_proxy, signal.SIGUSR1)
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
        harness.signal_pid(repl_proxy, signal.SIGTERM)  # its host is gone too
        proxy.stop()
        # the same address, now the standby's
        proxy = harness.Proxy(ctx.proxy, standby, addr, plog)
        t_retarget = now_ns()
        log("primary killed, the proxy now points at the standby (leader "
            "was %s term %d)" % (lead[3], lead[2]))
        time.sleep(ctx.readonly_s)
        if ctx.readonly_s >= 0.5 and not ctx.broken:
            # and on until a candidate has met the standby in recovery: one
            # whose connection died with the primary reconnects with
            # backoff, which can outlast --readonly-s (a loaded run: none
            # within 1 s); at most 2 TTLs more. (Not when broken: the frozen
            # leader must wake after the promotion.)
            ro = re.compile(r"read.only", re.I)
            deadline = time.monotonic() + 2 * TTL_MS / 1000.0
            while el.logs.count(t_retarget, now_ns() + 1, ro, sev=None) == 0 \
                    and time.monotonic() < deadline:
                time.sleep(0.05)
        ctx.shell.call("cl_promote")
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=("promotion", "clockstep",
                                         "sqlitestep", "pgbouncer"))
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
    ap.add_argument("--hosts", type=int, default=None,
                    help="fault-hosts per election (clock steps: per "
                    "fresh namespace, default 4; else 3)")
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
    # clockstep, sqlitestep
    ap.add_argument("--phases", default=None,
                    help="TTL/RENEW/MARGIN/STEP_SxSTEPS,... (clockstep: "
                    "%s; sqlitestep: %s)" % (clocksteps.PHASES_PG,
                                             clocksteps.PHASES_SQLITE))
    ap.add_argument("--start", choices=("held", "free", "alternate"),
                    default=None,
                    help="how a fresh namespace's candidates start: held "
                    "back until all have read the namespace, or free; "
                    "alternate: held in the 1st, 3rd, ... step of a phase "
                    "(clockstep: alternate; sqlitestep: held)")
    ap.add_argument("--keep", type=int, default=1,
                    help="older namespaces kept running through a step")
    ap.add_argument("--clock", choices=("faketime", "sql"), default="sql")
    ap.add_argument("--step-at", choices=("commit", "claim"),
                    default="commit",
                    help="--clock sql: step inside the first election's "
                    "transaction (commit) or when its first claim is seen")
    ap.add_argument("--broken-trust", action="store_true",
                    help="--broken with LeaderTestTrustExtra and SIGSTOP "
                    "even when LeaderTestNoWatch is there")
    ap.add_argument("--sqlite-file", default=None)
    ap.add_argument("--faketime-lib", default=None)
    # pgbouncer
    ap.add_argument("--variants", default=None,
                    help="POOL_MODE:LEADERPOOLER,... (LEADERPOOLER '-': "
                    "not given; a '+nocheck' suffix adds "
                    "LeaderTestNoPoolerCheck=1; default: %s; with --broken "
                    "session:session)" % pgbouncer.PGB_VARIANTS)
    ap.add_argument("--faults", default=None,
                    help="kill-9,sigstop,pg-restart (with --broken: "
                    "sigstop)")
    ap.add_argument("--max-errors", type=int, default=3,
                    help="error/warning lines per candidate and fault")
    ap.add_argument("--no-pooler-key", action="store_true")
    ctx = ap.parse_args()
    if ctx.hosts is None:
        ctx.hosts = 4 if ctx.scenario in ("clockstep", "sqlitestep") else 3
    if ctx.start is None:
        ctx.start = "held" if ctx.scenario == "sqlitestep" else "alternate"
    if ctx.phases is None:
        ctx.phases = clocksteps.PHASES_SQLITE \
            if ctx.scenario == "sqlitestep" else clocksteps.PHASES_PG
    if ctx.scenario == "sqlitestep" and not (ctx.sqlite_file and
                                             ctx.faketime_lib):
        ap.error("sqlitestep needs --sqlite-file and --faketime-lib")
    if ctx.variants is None:
        ctx.variants = "session:session" if ctx.broken else \
            pgbouncer.PGB_VARIANTS
    if ctx.faults is None:
        ctx.faults = "sigstop" if ctx.broken else "kill-9,sigstop,pg-restart"
    ctx.checker = harness.load_script(ctx.checker, "checker")
    ctx.cmdcheck = harness.load_script(ctx.cmdcheck, "cmdcheck")
    ctx.shell = harness.Shell(ctx.lib, ctx.cluster_lib)
    os.makedirs(ctx.work, exist_ok=True)
    t0 = time.monotonic()
    try:
        rc = {"promotion": scenario_promotion,
              "clockstep": clocksteps.scenario_clockstep,
              "sqlitestep": clocksteps.scenario_sqlitestep,
              "pgbouncer": pgbouncer.scenario_pgbouncer}[ctx.scenario](ctx)
    except RuntimeError as e:
        print("FAIL %s: %s" % (ctx.scenario, e))
        rc = 1
    log("%s%s: %s in %.0f s" % (ctx.scenario, " (broken)" if ctx.broken
                                else "", "pass" if rc == 0 else "FAIL",
                                time.monotonic() - t0))
    return rc


if __name__ == "__main__":
    sys.exit(main())
