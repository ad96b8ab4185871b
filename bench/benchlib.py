#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""benchlib.py: helpers shared by the make bench scripts (bench/run.sh and
bench/part-*.sh).

The SQL the raw clients run is not rendered here: bench/bench-dialect
prints it from the library's own dialect expansion (bench/part-latency.sh).

Subcommands:
  stats FILE...
      Median, p99 (nearest rank) and mean of the numbers in the files, one
      per line: "n=N median=M p99=P mean=A".
  add FILE metric=M dialect=D value=V unit=U [target=T] [note=N]
      Appends one result row to FILE (a JSON list; created when missing).
  show FILE...
      Prints the rows of part files as a plain-text table.
  check FILE...
      Fails (status 1, the reasons on stdout) unless every file exists and
      holds at least one row, and every row has a metric, a dialect, a
      unit and a finite numeric value, or no value (null) and a note that
      says why, as scale's "largest count sustained" when its first step
      failed (bench/run.sh, after each part).
  merge OUT.json OUT.md MACHINE.md FILE...
      Merges part files into OUT.json ({"machine": [lines], "rows": [...]},
      each row with its "part") and OUT.md (the machine lines, then one
      markdown table).
"""
import json
import math
import os
import sys


def numbers(paths):
    vals = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            vals.extend(float(x) for x in f.read().split())
    return sorted(vals)


def rank(vals, q):
    """Nearest-rank quantile q (0..1) of sorted vals."""
    k = max(1, math.ceil(q * len(vals)))
    return vals[k - 1]


def cmd_stats(args):
    vals = numbers(args)
    if not vals:
        raise SystemExit("benchlib: no numbers in %s" % " ".join(args))
    print("n=%d median=%.1f p99=%.1f mean=%.1f" % (
        len(vals), rank(vals, 0.5), rank(vals, 0.99), sum(vals) / len(vals)))


def load(path):
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return []
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def cmd_add(args):
    path = args[0]
    row = {"metric": None, "dialect": None, "value": None, "unit": None,
           "target": None, "note": None}
    for a in args[1:]:
        k, _, v = a.partition("=")
        if k not in row:
            raise SystemExit("benchlib add: unknown field %s" % k)
        row[k] = v
    try:
        row["value"] = float(row["value"])
        if row["value"] == int(row["value"]) and abs(row["value"]) < 1e15:
            row["value"] = int(row["value"])
    except (TypeError, ValueError):
        pass
    rows = load(path)
    rows.append(row)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def fmt(v):
    if isinstance(v, float):
        return "%.3g" % v if abs(v) < 10 else "%.1f" % v
    return "" if v is None else str(v)


COLS = ("metric", "dialect", "value", "unit", "target", "note")


def table_rows(paths):
    rows = []
    for p in paths:
        part = os.path.basename(p)
        part = part[:-5] if part.endswith(".json") else part
        for r in load(p):
            rows.append(dict(r, part=part))
    return rows


def cmd_show(args):
    rows = table_rows(args)
    cells = [[fmt(r.get(c)) for c in COLS] for r in rows]
    widths = [max([len(c)] + [len(x[i]) for x in cells])
              for i, c in enumerate(COLS)]
    print("  ".join(c.ljust(w) for c, w in zip(COLS, widths)).rstrip())
    for x in cells:
        print("  ".join(v.ljust(w) for v, w in zip(x, widths)).rstrip())


def cmd_check(args):
    bad = []
    for p in args:
        try:
            rows = load(p)
        except (OSError, ValueError) as e:
            bad.append("%s: %s" % (p, e))
            continue
        if not isinstance(rows, list) or not rows:
            bad.append("%s: no rows" % p)
            continue
        for i, r in enumerate(rows, 1):
            what = "%s: row %d (%s)" % (p, i, r.get("metric"))
            for k in ("metric", "dialect", "unit"):
                if not r.get(k):
                    bad.append("%s: no %s" % (what, k))
            v = r.get("value")
            if v is None:
                if not r.get("note"):
                    bad.append("%s: no value, and no note saying why" % what)
            elif isinstance(v, bool) or not isinstance(v, (int, float)) \
                    or not math.isfinite(v):
                bad.append("%s: value %r is not a number" % (what, v))
    for b in bad:
        print("benchlib check: " + b)
    if bad:
        sys.exit(1)


def cmd_merge(args):
    out_json, out_md, machine = args[0], args[1], args[2]
    rows = table_rows(args[3:])
    with open(machine, encoding="utf-8") as f:
        about = [l.rstrip("\n") for l in f if l.strip()]
    with open(out_json, "w", encoding="utf-8") as f:
        json.dump({"machine": [l[2:] if l.startswith("- ") else l
                               for l in about], "rows": rows}, f, indent=1)
        f.write("\n")
    with open(out_md, "w", encoding="utf-8") as f:
        f.write("\n".join(about) + "\n\n")
        f.write("| part | metric | dialect | value | unit | target | note |\n")
        f.write("|---|---|---|---:|---|---|---|\n")
        for r in rows:
            cells = [r["part"]] + [fmt(r.get(c)) for c in COLS]
            f.write("| " + " | ".join(c.replace("|", "\\|")
                                      for c in cells) + " |\n")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd = {"stats": cmd_stats, "add": cmd_add, "show": cmd_show,
           "check": cmd_check, "merge": cmd_merge}.get(sys.argv[1])
    if cmd is None:
        sys.exit(__doc__)
    cmd(sys.argv[2:])


if __name__ == "__main__":
    main()
