#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""promcheck.py: checks Prometheus text exposition format (version 0.0.4)
read from stdin, as written by "odbc-leader status --format=prometheus"
and serve's /metrics (promtool check metrics lints the names besides).

  promcheck.py [SAMPLE=VALUE | SAMPLE>=VALUE ...] < metrics.txt

Each line must be a "# HELP name text" line, a "# TYPE name type" line,
another comment, or a sample "name{label="value",...} value [timestamp]"
whose names and label values follow the format's grammar. Every metric
needs HELP and TYPE before its first sample, at most one of each, and its
samples must form one group and carry the same label names in the same
order (one label set per family), as must a family whose name extends
another's (odbc_leader_group_shards, odbc_leader_group_shards_unled)
unless its help says it is deprecated; a counter's name ends in _total,
a gauge's does not. Each SAMPLE=VALUE argument (SAMPLE written
as in the output, labels in output order) must appear with that value,
each SAMPLE>=VALUE with at least that value.
Exits 0 when all holds, 1 with the reasons on stderr otherwise.
"""
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
LABEL_VALUE = r'"(?:[^"\\\n]|\\[\\"n])*"'
LABEL_NAMES = re.compile(rf'({LABEL})=' + LABEL_VALUE)
NUMBER = r"[+-]?(?:Inf|inf|NaN|nan|[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)"
SAMPLE = re.compile(
    rf"^({NAME})(\{{(?:{LABEL}={LABEL_VALUE}(?:,{LABEL}={LABEL_VALUE})*,?)?\}})?"
    rf" ({NUMBER})(?: (-?[0-9]+))?$"
)
HELP = re.compile(rf"^# HELP ({NAME}) (.*)$")
TYPE = re.compile(rf"^# TYPE ({NAME}) (counter|gauge|histogram|summary|untyped)$")
SUFFIXES = ("_bucket", "_sum", "_count")


def family(name, types):
    """The metric family a sample name belongs to."""
    if name in types:
        return name
    for s in SUFFIXES:
        if name.endswith(s) and name[: -len(s)] in types:
            return name[: -len(s)]
    return name


def check(text):
    """Returns (problems, samples) for the exposition text."""
    problems, samples = [], {}
    helps, types, done, labelsets, deprecated = set(), {}, set(), {}, set()
    current = None
    if text and not text.endswith("\n"):
        problems.append("the output does not end with a newline")
    for n, line in enumerate(text.splitlines(), 1):
        m = HELP.match(line)
        if m:
            if m.group(1) in helps:
                problems.append(f"line {n}: second HELP for {m.group(1)}")
            helps.add(m.group(1))
            if m.group(2).startswith("Deprecated"):
                deprecated.add(m.group(1))
            continue
        m = TYPE.match(line)
        if m:
            if m.group(1) in types:
                problems.append(f"line {n}: second TYPE for {m.group(1)}")
            types[m.group(1)] = m.group(2)
            continue
        if line.startswith("#"):
            if line.startswith("# HELP") or line.startswith("# TYPE"):
                problems.append(f"line {n}: malformed: {line!r}")
            continue
        if line == "":
            problems.append(f"line {n}: empty line")
            continue
        m = SAMPLE.match(line)
        if not m:
            problems.append(f"line {n}: not a sample: {line!r}")
            continue
        fam = family(m.group(1), types)
        if fam not in helps or fam not in types:
            problems.append(f"line {n}: {fam} has no HELP and TYPE before it")
        if fam != current:
            if fam in done:
                problems.append(f"line {n}: samples of {fam} are not grouped")
            if current is not None:
                done.add(current)
            current = fam
        names = tuple(LABEL_NAMES.findall(m.group(2) or ""))
        if labelsets.setdefault(fam, names) != names:
            problems.append(f"line {n}: {fam} has labels {names}, its first "
                            f"sample {labelsets[fam]}")
        samples[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    for fam, kind in types.items():
        if (kind == "counter") != fam.endswith("_total"):
            problems.append(f"{fam} is a {kind}: only counters end in _total")
    live = {f: set(v) for f, v in labelsets.items() if f not in deprecated}
    for a in live:
        for b in live:
            if b.startswith(a + "_") and live[a] != live[b]:
                problems.append(f"{b} extends the name of {a} with other "
                                f"labels: {sorted(live[b])}, {sorted(live[a])}")
    return problems, samples


def main():
    problems, samples = check(sys.stdin.read())
    for want in sys.argv[1:]:
        key, _, value = want.rpartition("=")
        at_least = key.endswith(">")
        key = key.removesuffix(">")
        if key not in samples:
            problems.append(f"missing sample {key}")
        elif at_least and samples[key] < float(value):
            problems.append(f"{key} is {samples[key]}, expected at least {value}")
        elif not at_least and samples[key] != float(value):
            problems.append(f"{key} is {samples[key]}, expected {value}")
    for p in problems:
        print("promcheck:", p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
