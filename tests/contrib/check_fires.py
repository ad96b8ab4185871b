# SPDX-License-Identifier: MIT
"""check_fires.py: did every slot fire exactly once? (minicron's claims)

    python3 check_fires.py --runs RUNS --ledger LEDGER --slot-seconds N
        --first K --last K [--killed PID...] [--max-incomplete N]
        [--expect-late N [--late-after-ms MS]]

RUNS is the log the job appends to, one line per run: "SLOT_START PID
TERM WRITTEN_MS" (MINICRON_SLOT, the minicron's pid, ODBC_LEADER_TERM,
the wall clock in ms when the job ran). LEDGER is the output of
`odbc-leader fires --json --limit 0` for the namespace, whose one job is
the job of RUNS; each minicron ran with LeaderId=mc-PID.

Slot k is the k-th N-second span since the epoch (fire_ms = k * N * 1000).
The rules:

- every slot of FIRST..LAST has exactly one ledger row (no gap in the
  claims) and no slot anywhere has two (the database's key);
- no slot anywhere ran twice (no duplicate run);
- each run has its ledger row, claimed by the minicron that ran it
  (claimed_by mc-PID; PID 1 when the job logged after its killed
  minicron was gone) in the term it ran under; that row is finished with
  status 0, or unfinished when its claimant was killed (a killed minicron
  cannot call finish(); unfinished is also a row the next leader's sweep
  recorded interrupted or abandoned, docs/lifecycle.md);
- a slot of FIRST..LAST that was claimed but never ran is a gap, except
  when its row is unfinished and its claimant was killed (killed between
  the claim and the start: the documented limit) or finished with a
  nonzero status; at most --max-incomplete (default 0) such slots;
- with --expect-late N, at least N runs happened after their slot had
  ended (with --late-after-ms MS: MS or more after their slot's start):
  a leader caught up slots that fell due before it led.

Prints one line per problem and a summary; exits 1 when a rule is broken,
0 otherwise.
"""

import argparse
import collections
import json
import os
import sys

# tests/lib/ledger.py: the fire rule shared with tests/faults/claimcheck
# (every fire of a range claimed once); no bytecode in the source tree
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "lib"))
import ledger as rules  # noqa: E402


def read_runs(path):
    runs = collections.defaultdict(list)
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.split()
            if len(fields) != 4:
                raise ValueError("%s:%d: not SLOT PID TERM MS: %r" % (path, n, line))
            runs[int(fields[0])].append(
                {"pid": int(fields[1]), "term": int(fields[2]), "ms": int(fields[3])}
            )
    return runs


def read_ledger(path):
    rows = collections.defaultdict(list)
    jobs = set()
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                jobs.add(r["job"])
                rows[r["fire_ms"]].append(r)
    return rows, jobs


def unfinished(row):
    """True when row's claimant never recorded its outcome: no end yet, or
    the next term's sweep ended it as interrupted or abandoned (a row of a
    ledger before the fire lifecycle has no state)."""
    return row["finished_at_ms"] is None or \
        row.get("state") in ("interrupted", "abandoned")


def claimant_pid(row):
    who = row["claimed_by"]
    return int(who[3:]) if who.startswith("mc-") and who[3:].isdigit() else None


def check(args):
    slot_ms = args.slot_seconds * 1000
    runs = read_runs(args.runs)
    ledger, jobs = read_ledger(args.ledger)
    killed = set(args.killed)
    bad = []
    incomplete = []
    late = 0
    late_ms = args.late_after_ms if args.late_after_ms is not None else slot_ms
    late_what = ("runs after their slot ended" if late_ms == slot_ms else
                 "runs %d ms or more after their slot started" % late_ms)

    if len(jobs) > 1:
        bad.append("the ledger holds several jobs: %s" % sorted(jobs))
    counts, twice = rules.fire_counts(
        [f for f, rows in ledger.items() for _ in rows],
        args.first * slot_ms, args.last * slot_ms, slot_ms)
    for fire_ms in twice:
        bad.append("slot %d: %d ledger rows" % (fire_ms // slot_ms,
                                                len(ledger[fire_ms])))
    for start, lines in sorted(runs.items()):
        k = start // args.slot_seconds
        if start % args.slot_seconds:
            bad.append("slot time %d is not a slot's start" % start)
            continue
        if len(lines) > 1:
            bad.append("slot %d: ran %d times (pids %s)"
                       % (k, len(lines), " ".join(str(r["pid"]) for r in lines)))
        rows = ledger.get(k * slot_ms, [])
        if not rows:
            bad.append("slot %d: ran without a ledger row" % k)
            continue
        row = rows[0]
        for r in lines:
            if r["ms"] >= k * slot_ms + late_ms:
                late += 1
            # pid 1: the job logged after its minicron was killed (the
            # shell's $PPID is then init's)
            orphan = r["pid"] == 1 and claimant_pid(row) in killed
            if (claimant_pid(row) != r["pid"] and not orphan) or \
                    row["term"] != r["term"]:
                bad.append("slot %d: ran by pid %d in term %d, claimed by %s in term %d"
                           % (k, r["pid"], r["term"], row["claimed_by"], row["term"]))
        if unfinished(row):
            if claimant_pid(row) not in killed:
                bad.append("slot %d: ran, but its claimant %s (alive) never finished it"
                           % (k, row["claimed_by"]))
        elif row["status"] != 0:
            bad.append("slot %d: ran, finished with status %d" % (k, row["status"]))
    for k in range(args.first, args.last + 1):
        if counts[k * slot_ms] != 1:
            bad.append("slot %d: claimed %d times" % (k, counts[k * slot_ms]))
            continue
        rows = ledger[k * slot_ms]
        if runs.get(k * args.slot_seconds):
            continue
        row = rows[0]
        unfinished_by_killed = unfinished(row) and claimant_pid(row) in killed
        failed = not unfinished(row) and row["status"] != 0
        if unfinished_by_killed or failed:
            incomplete.append(k)
            print("note: slot %d: claimed by %s, never ran (%s)"
                  % (k, row["claimed_by"],
                     "claimant killed" if unfinished_by_killed
                     else "status %d" % row["status"]))
        else:
            bad.append("slot %d: claimed by %s, never ran" % (k, row["claimed_by"]))
    if len(incomplete) > args.max_incomplete:
        bad.append("%d slots claimed but never run, at most %d allowed"
                   % (len(incomplete), args.max_incomplete))
    if args.expect_late is not None and late < args.expect_late:
        bad.append("%d %s (caught up), expected at least %d"
                   % (late, late_what, args.expect_late))
    for b in bad:
        print(b)
    n = args.last - args.first + 1
    print("slots %d..%d (%d): %s; %d %s, %d claimed but not run"
          % (args.first, args.last, n, "BROKEN" if bad else
             "each claimed exactly once, none ran twice", late, late_what,
             len(incomplete)))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", required=True)
    ap.add_argument("--ledger", required=True)
    ap.add_argument("--slot-seconds", type=int, required=True)
    ap.add_argument("--first", type=int, required=True)
    ap.add_argument("--last", type=int, required=True)
    ap.add_argument("--killed", type=int, nargs="*", default=[])
    ap.add_argument("--max-incomplete", type=int, default=0)
    ap.add_argument("--expect-late", type=int)
    ap.add_argument("--late-after-ms", type=int)
    sys.exit(check(ap.parse_args()))


if __name__ == "__main__":
    main()
