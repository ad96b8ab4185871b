#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""benchlib.py: helpers shared by the make bench scripts (bench/run.sh and
bench/part-*.sh).

Subcommands:
  render DIALECT.sql OP --style pgbench|qmark|named [--prefix P]
         [--timeout-ms N] [--gset PREFIX]
      Prints statement section OP of a dialect file, the way the library
      sends it: comments dropped, {prefix}, {timeout_ms} and @define'd
      names substituted, statements split at a ';' ending a line. The raw
      clients run this text, so they cannot drift from the dialect file.
      pgbench: a pgbench script (:name variables, ';' terminators, BEGIN /
      COMMIT around several statements as the dialect's @begin/@commit say;
      --gset ends the last query with \\gset PREFIX). qmark and named: the
      format read by raw-mariadb.c and raw-sqlite.c, one "-- @stmt NAMES"
      line before each statement (NAMES: its parameters in order), optional
      "-- @begin SQL" / "-- @commit SQL" first; qmark turns :name into ?,
      named keeps :name (SQLite binds those natively).
  stats FILE...
      Median, p99 (nearest rank) and mean of the numbers in the files, one
      per line: "n=N median=M p99=P mean=A".
  add FILE metric=M dialect=D value=V unit=U [target=T] [note=N]
      Appends one result row to FILE (a JSON list; created when missing).
  show FILE...
      Prints the rows of part files as a plain-text table.
  merge OUT.json OUT.md MACHINE.md FILE...
      Merges part files into OUT.json ({"machine": [lines], "rows": [...]},
      each row with its "part") and OUT.md (the machine lines, then one
      markdown table).
"""
import json
import math
import os
import re
import sys

PARAMS = ("ns", "id", "term", "ttl_ms", "cand_ttl_ms", "version", "to")


def strip_trailing_comment(line):
    """Returns line without a '--' comment that starts outside quotes."""
    quote = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"`":
            quote = c
        elif line.startswith("--", i):
            return line[:i]
        i += 1
    return line


def parse_dialect(path):
    """Returns (header, sections): header maps define names and begin /
    commit to text; sections maps an operation to its list of statements
    (raw text, placeholders not yet substituted)."""
    header = {"defines": {}}
    sections = {}
    current = None
    stmt = []
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\r\n")
            s = line.strip()
            m = re.match(r"--\s*@([a-z0-9-]+)\s*(.*)$", s)
            if m:
                word, arg = m.group(1), m.group(2).strip()
                if word == "statement":
                    current = arg
                    sections[current] = []
                    stmt = []
                elif word == "define":
                    name, _, text = arg.partition(" ")
                    header["defines"][name] = text.strip()
                elif word in ("begin", "commit", "rollback"):
                    header[word] = arg.rstrip(";").strip()
                continue
            if s.startswith("--") or not s or current is None:
                continue
            line = strip_trailing_comment(line).rstrip()
            if not line.strip():
                continue
            stmt.append(line)
            if line.endswith(";"):
                stmt[-1] = line[:-1]
                sections[current].append("\n".join(stmt))
                stmt = []
    return header, sections


def substitute(sql, defines, prefix, timeout_ms):
    """Replaces {prefix}, {timeout_ms} and {NAME} outside quotes and block
    comments; defines may themselves hold {prefix}."""
    def one(m):
        name = m.group(1)
        if name == "prefix":
            return prefix
        if name == "timeout_ms":
            return str(timeout_ms)
        if name in defines:
            return re.sub(r"\{prefix\}", prefix, defines[name])
        raise SystemExit("benchlib: unknown placeholder {%s}" % name)

    return map_outside_quotes(sql, lambda t: re.sub(r"\{([a-z_][a-z0-9_]*)\}", one, t))


def map_outside_quotes(sql, fn):
    """Applies fn to the runs of sql outside quotes and /* */ comments."""
    out = []
    i = 0
    start = 0
    while i < len(sql):
        c = sql[i]
        end = None
        if c in "'\"`":
            end = sql.find(c, i + 1)
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2) + 1
        if end is None:
            i += 1
            continue
        if end <= 0:
            end = len(sql) - 1
        out.append(fn(sql[start:i]))
        out.append(sql[i:end + 1])
        i = start = end + 1
    out.append(fn(sql[start:]))
    return "".join(out)


def parameters(sql):
    """Returns the named parameters of sql in order of appearance."""
    found = []

    def note(text):
        for m in re.finditer(r"(?<!:):([a-z_][a-z0-9_]*)", text):
            found.append(m.group(1))
        return text

    map_outside_quotes(sql, note)
    for p in found:
        if p not in PARAMS:
            raise SystemExit("benchlib: unknown parameter :%s" % p)
    return found


def to_qmark(sql):
    """Replaces each :name parameter outside quotes by '?'."""
    return map_outside_quotes(
        sql, lambda t: re.sub(r"(?<!:):([a-z_][a-z0-9_]*)", "?", t))


def cmd_render(args):
    path, op = args[0], args[1]
    opts = {"--style": "named", "--prefix": "odbc_leader_",
            "--timeout-ms": "5000", "--gset": None}
    rest = args[2:]
    while rest:
        opts[rest[0]] = rest[1]
        rest = rest[2:]
    header, sections = parse_dialect(path)
    if op not in sections:
        raise SystemExit("benchlib: %s has no @statement %s" % (path, op))
    stmts = [substitute(s, header["defines"], opts["--prefix"],
                        opts["--timeout-ms"]) for s in sections[op]]
    style = opts["--style"]
    tx = len(stmts) > 1 and "begin" in header
    if style == "pgbench":
        lines = []
        if len(stmts) > 1:
            lines.append(header.get("begin", "BEGIN") + ";")
        for i, s in enumerate(stmts):
            last = i == len(stmts) - 1
            if last and opts["--gset"] and len(stmts) == 1:
                lines.append(s + " \\gset " + opts["--gset"])
            else:
                lines.append(s + ";")
        if len(stmts) > 1:
            lines.append(header.get("commit", "COMMIT") + ";")
        print("\n".join(lines))
        return
    if tx:
        print("-- @begin " + header["begin"])
        print("-- @commit " + header["commit"])
    for s in stmts:
        print("-- @stmt " + " ".join(parameters(s)))
        print(to_qmark(s) if style == "qmark" else s)


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
    cmd = {"render": cmd_render, "stats": cmd_stats, "add": cmd_add,
           "show": cmd_show, "merge": cmd_merge}.get(sys.argv[1])
    if cmd is None:
        sys.exit(__doc__)
    cmd(sys.argv[2:])


if __name__ == "__main__":
    main()
