#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""scale-report.py: turns bench-scale's JSON results into the Scale part's
rows (BENCH_DIR/scale.json) and a table on stdout; also the pass/fail
check and the memory estimate the sweep uses.

  scale-report.py check RESULT.json          exit 0 when the run held up
  scale-report.py need RESULT.json N         kB of memory N candidates need
  scale-report.py rows BENCH_DIR SWEEP LABEL...   write scale.json, print table

A run holds up when every handle was created, no tick failed, at most
LATE_LIMIT_PCT of the ticks were late, no leadership changed and the
monitor never saw two leaders in a namespace.
"""
import json
import os
import sys

LATE_LIMIT_PCT = 1.0
DIALECT = "postgresql"


def load(path):
    """Returns the parsed result, or None when it is missing or broken."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def failures(r):
    """Returns the reasons run r did not hold up (empty when it did)."""
    if r is None:
        return ["no result (bench-scale failed; see its .log)"]
    why = []
    if r["create_failures"] > 0:
        why.append("%d of %d handles could not connect"
                   % (r["create_failures"], r["candidates"]))
    if r["tick_errors"] > 0:
        why.append("%d ticks failed" % r["tick_errors"])
    if r["late_share_pct"] > LATE_LIMIT_PCT:
        why.append("%.2f %% of ticks late (> %g %%)"
                   % (r["late_share_pct"], LATE_LIMIT_PCT))
    if r["leader_changes"] > 0:
        why.append("%d spurious leadership changes" % r["leader_changes"])
    if r["safety_violations"] > 0:
        why.append("two leaders seen %d times" % r["safety_violations"])
    return why


def settings(r):
    """A short description of a run's settings."""
    wait = r["follower_wait_ms"]
    return "%d cand (%d ns x %d), TTL %g s, renew %g s, FollowerWait %s, " \
        "%s, %g s window" % (
            r["candidates"], r["namespaces"], r["per_namespace"],
            r["ttl_ms"] / 1000, r["renew_ms"] / 1000,
            "unset" if wait is None else "%d ms" % wait,
            "thread per candidate" if r["thread_per_candidate"]
            else "%d worker threads" % r["workers"], r["window_s"])


def warmup(r):
    """The warm-up changes of run r, in words."""
    n = r.get("warmup_leader_changes", 0)
    if n == 0:
        return "no change in the %g s warm-up" % r["settle_s"]
    return "%d changes in the %g s warm-up, the last %.1f s after start" % (
        n, r["settle_s"], r.get("warmup_last_change_s", 0))


def per_tick_us(cpu_pct, ticks_per_s):
    """CPU microseconds per tick from a CPU share (% of one core)."""
    if cpu_pct is None or not ticks_per_s:
        return None
    return round(cpu_pct / 100 * 1e6 / ticks_per_s, 1)


def row(metric, value, unit, target, note):
    return {"metric": metric, "dialect": DIALECT, "value": value,
            "unit": unit, "target": target, "note": note}


def run_rows(label, r):
    """The rows of one full run."""
    s = settings(r)
    m = "scale %s: " % label
    waits = r["follower_wait_ms"] is not None and r["follower_wait_ms"] > 0
    tick_note = "one statement round trip per tick"
    stmt_note = "pg_stat_statements calls"
    if waits:
        tick_note = "a follower's tick blocks in the wait statement"
        stmt_note += " (waits that time out end in an error: not counted)"
    other = None
    if r["pg_cpu_pct"] is not None:
        other = round(r["machine_busy_pct"] - r["pg_cpu_pct"]
                      - r["client_cpu_pct"], 1)
    return [
        row(m + "spurious leadership changes", r["leader_changes"], "count",
            "0", s + "; step-downs %d; %s" % (r["stepdowns"], warmup(r))),
        row(m + "samples with two leaders in a namespace",
            r["safety_violations"], "count", "0",
            "%d samples of %d namespaces every 100 ms"
            % (r["safety_samples"], r["namespaces"])),
        row(m + "ticks past their deadline", r["late_share_pct"], "%",
            "<= %g" % LATE_LIMIT_PCT,
            "late = started > %d ms after the time asked for; %d of %d"
            % (r["late_threshold_ms"], r["late_ticks"], r["ticks"])),
        row(m + "tick lateness p99", r["lateness_p99_ms"], "ms", None,
            "p50 %.2f ms, max %.2f ms" % (r["lateness_p50_ms"],
                                          r["lateness_max_ms"])),
        row(m + "tick duration p50", r["tick_p50_ms"], "ms", None,
            tick_note),
        row(m + "tick duration p99", r["tick_p99_ms"], "ms", None,
            "max %.2f ms" % r["tick_max_ms"]),
        row(m + "queries per second (client ticks)", r["ticks_per_s"], "1/s",
            None, "one statement per tick on PostgreSQL; tick errors %d"
            % r["tick_errors"]),
        row(m + "longest gap between a leader's renewals",
            r["renew_gap_max_ms"], "ms", None,
            "tick start to tick start; the lease lasts %g s"
            % (r["ttl_ms"] / 1000)),
        row(m + "database transactions per second", r["db_xact_per_s"],
            "1/s", None, "pg_stat_database xact_commit+xact_rollback"),
        row(m + "database statements per second", r["db_stmt_per_s"], "1/s",
            None, stmt_note),
        row(m + "database CPU", r["pg_cpu_pct"], "% of a core", None,
            "all PostgreSQL processes; backends %s %%"
            % r["pg_backend_cpu_pct"]),
        row(m + "database CPU per tick",
            per_tick_us(r["pg_cpu_pct"], r["ticks_per_s"]), "us", None, ""),
        row(m + "client CPU", r["client_cpu_pct"], "% of a core", None,
            "user %s %%, system %s %% (library + driver + threads)"
            % (r["client_user_pct"], r["client_sys_pct"])),
        row(m + "client CPU per tick",
            per_tick_us(r["client_cpu_pct"], r["ticks_per_s"]), "us", None,
            ""),
        row(m + "machine busy", r["machine_busy_pct"],
            "%% of %d cores" % r["cores"], None,
            "other processes: %s %% of a core" % other),
        row(m + "client memory per candidate", r["client_rss_per_cand_kb"],
            "kB", None, "RSS growth / handles"),
        row(m + "PostgreSQL memory per backend", r["pg_backend_uss_kb"],
            "kB", None, "USS (smaps_rollup); PSS %s kB" % r["pg_backend_pss_kb"]),
        row(m + "setup", r["setup_s"], "s", None,
            "connect, check the schema and prepare %d handles"
            % r["created"]),
    ]


def sweep_rows(results, mode):
    """One row per sweep step plus the largest count sustained."""
    rows = []
    best = None
    first_fail = None
    for label, r in results:
        why = failures(r)
        n = r["candidates"] if r else label
        if r:
            rows.append(row(
                "scale sweep %s: ticks past their deadline" % n,
                r["late_share_pct"], "%", "<= %g" % LATE_LIMIT_PCT,
                "%s; changes %d, %s; DB CPU %s %%, client CPU %s %%, "
                "machine %s %%, setup %s s" % (
                    "; ".join(why) or "held up", r["leader_changes"],
                    warmup(r), r["pg_cpu_pct"], r["client_cpu_pct"],
                    r["machine_busy_pct"], r["setup_s"])))
        if why and first_fail is None:
            first_fail = (n, why)
        if not why and first_fail is None:
            best = r["candidates"]
    if first_fail:
        note = "first failure at %s: %s" % (first_fail[0],
                                           "; ".join(first_fail[1]))
    else:
        note = "no step failed (%s sweep%s)" % (
            mode, "; SCALE_SWEEP=full searches further"
            if mode != "full" else "")
    rows.append(row("scale: largest count sustained (ticks every second)",
                    best, "candidates", None, note))
    return rows


def need_kb(r, n):
    """Memory (kB) n candidates need, from run r's figures with 30 %
    headroom; 5 MB a candidate when r is missing."""
    per = 5000.0
    if r is not None:
        per = max(r["mem_used_per_cand_kb"],
                  (r["pg_backend_uss_kb"] or 0) + r["client_rss_per_cand_kb"])
    return int(per * n * 1.3)


def fmt(v):
    return "-" if v is None else str(v)


def table(rows):
    """Prints rows as an aligned text table."""
    head = ("metric", "value", "unit", "target", "note")
    cells = [head] + [(r["metric"], fmt(r["value"]), r["unit"],
                       fmt(r["target"]), r["note"]) for r in rows]
    w = [max(len(c[i]) for c in cells) for i in range(4)]
    for c in cells:
        print("  ".join(c[i].ljust(w[i]) for i in range(4)) + "  " + c[4])


def main(argv):
    if len(argv) == 3 and argv[1] == "check":
        why = failures(load(argv[2]))
        print("; ".join(why) or "ok")
        return 1 if why else 0
    if len(argv) == 4 and argv[1] == "need":
        print(need_kb(load(argv[2]), int(argv[3])))
        return 0
    if len(argv) >= 4 and argv[1] == "rows":
        bench_dir, mode = argv[2], argv[3]
        rows, sweep = [], []
        for label in argv[4:]:
            r = load(os.path.join(bench_dir, "scale-%s.json" % label))
            if label.startswith("sweep-"):
                sweep.append((label[6:], r))
                continue
            if label == "main":
                sweep.insert(0, (label, r))
            if r is not None:
                rows += run_rows(label, r)
            else:
                rows.append(row("scale %s: run" % label, None, "", None,
                                "bench-scale failed; see scale-%s.log"
                                % label))
        rows += sweep_rows(sweep, mode)
        with open(os.path.join(bench_dir, "scale.json"), "w",
                  encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
            f.write("\n")
        table(rows)
        return 0
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv))
