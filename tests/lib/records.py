#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""records.py: the one reader of what the fault suite's test hosts write,
and pct(), for every checker and schedule of tests/faults, tests/cluster,
tests/contrib and bench/.

    python3 records.py --self-test     pct() and each loader on made-up files

Binary record files (little-endian, CLOCK_MONOTONIC ns, laid out as the C
structs of their writers):
  host-PID.rec   tests/faults/fault-host.c, FAULT: one header (pid, cap,
                 count, started_ns, last_tick_ns, last_ok_tick_ns, last_rc,
                 ticks), then one record per run of is_leader() "yes"
                 answers of one term (term, first_before, first_after,
                 last_before, last_after, n)
  group-PID.rec  tests/faults/group-host.c, GROUP: the header (pid, cap,
                 count, started_ns, last_tick_ns, last_led, ticks, shards),
                 then one record per (shard, term) as that process believed
                 it (shard, term, first_before, first_after, last_before,
                 last_after)
  life-PID.rec   tests/faults/cmd-life.c: one CMD's life (pid, ppid, child,
                 term, candidate id, start, heartbeat, stop signal, end)
Every record read from a FAULT or GROUP file carries the writer's pid and
"seq", its index in the file (the process's own order).
Beside the lives, the run service loop (tests/lib/harness.py RunService)
writes runs.json (every `odbc-leader run` it started: id, pid, start_ns,
exit_ns, rc, died_ns) and alive.json (cmd-life pids alive at the end).
Text: claim-host's log lines "OP PID FIRE TERM RC" and the fire ledger as
`odbc-leader fires --json` prints it (one JSON object a line).

A header whose magic is all zero, or shorter than a header, is a process
that died before its first write: no records. Another magic is an error
(ValueError), as is a truncated record (struct.error).
"""
import json
import os
import struct
import sys


class Format:
    """One binary record file format: its magic, its file name prefix, the
    header's and the records' layouts and field names (the header's magic
    and the records' count are read by name: "count", "cap")."""

    def __init__(self, magic, prefix, writer, header, header_fields, record,
                 record_fields):
        self.magic, self.prefix, self.writer = magic, prefix, writer
        self.header = struct.Struct(header)
        self.header_fields = header_fields
        self.record = struct.Struct(record)
        self.record_fields = record_fields


FAULT = Format(b"OLFAULT1", "host-", "fault-host",
               "<8siiqqqqqq",  # 64 bytes, struct rec_header
               ("pid", "cap", "count", "started_ns", "last_tick_ns",
                "last_ok_tick_ns", "last_rc", "ticks"),
               "<qqqqqq",  # 48 bytes, struct rec
               ("term", "first_before", "first_after", "last_before",
                "last_after", "n"))
GROUP = Format(b"OLGROUP1", "group-", "group-host",
               "<8siiqqqqqq",  # 64 bytes, struct rec_header
               ("pid", "cap", "count", "started_ns", "last_tick_ns",
                "last_led", "ticks", "shards"),
               "<qqqqqq",  # 48 bytes, struct rec
               ("shard", "term", "first_before", "first_after",
                "last_before", "last_after"))

LIFE = struct.Struct("<8siiiiqqqqqq136s")  # 208 bytes, struct life
LIFE_MAGIC = b"OLCMDLF1"


def load_file(path, fmt):
    """(header dict, list of record dicts) of one FAULT or GROUP file;
    (None, []) when its process died before its first write."""
    with open(path, "rb") as f:
        data = f.read(fmt.header.size)
        if len(data) < fmt.header.size or data[:8] == bytes(8):
            return None, []
        values = fmt.header.unpack_from(data, 0)
        if values[0] != fmt.magic:
            raise ValueError("%s: not a %s record file" % (path, fmt.writer))
        hdr = dict(zip(fmt.header_fields, values[1:]))
        n = min(hdr["count"], hdr["cap"])
        data += f.read(n * fmt.record.size)
    hdr.pop("cap")
    recs = []
    for i in range(n):
        r = dict(zip(fmt.record_fields, fmt.record.unpack_from(
            data, fmt.header.size + i * fmt.record.size)))
        r["pid"] = hdr["pid"]
        r["seq"] = i
        recs.append(r)
    return hdr, recs


def load_dir(rundir, fmt):
    """(headers, records) of every PREFIX-PID.rec file of fmt in rundir,
    files in name order, each file's records in its own order."""
    headers, records = [], []
    for name in sorted(os.listdir(rundir)):
        if name.startswith(fmt.prefix) and name.endswith(".rec"):
            hdr, recs = load_file(os.path.join(rundir, name), fmt)
            if hdr is not None:
                headers.append(hdr)
            records.extend(recs)
    return headers, records


def load_hosts(rundir):
    """(headers, records) of the fault-host files in rundir."""
    return load_dir(rundir, FAULT)


def load_group(rundir):
    """(headers, records) of the group-host files in rundir."""
    return load_dir(rundir, GROUP)


def load_life(path):
    """The life of one life-PID.rec file as a dict, or None when the
    process died before it published its record. "last" is its last sign
    of life: max(heartbeat, end)."""
    with open(path, "rb") as f:
        data = f.read(LIFE.size)
    if len(data) < LIFE.size or data[:8] == bytes(8):
        return None
    (magic, pid, ppid, is_child, term_ok, term, start, beat, sigterm, end,
     beats, ident) = LIFE.unpack(data)
    if magic != LIFE_MAGIC:
        raise ValueError("%s: not a cmd-life record file" % path)
    return {"pid": pid, "ppid": ppid, "child": bool(is_child),
            "term_ok": bool(term_ok), "term": term,
            "id": ident.split(b"\0", 1)[0].decode("utf-8", "replace"),
            "start": start, "beat": beat, "last": max(beat, end),
            "sigterm": sigterm, "end": end, "beats": beats}


def load_lives(rundir, partial_ok=False):
    """Every published life of one run directory. While the run goes on
    (partial_ok), a record being written or removed is skipped; once it
    has stopped, an unreadable record is an error."""
    lives = []
    for name in sorted(os.listdir(rundir)):
        if name.startswith("life-") and name.endswith(".rec"):
            try:
                life = load_life(os.path.join(rundir, name))
            except (OSError, ValueError):
                if not partial_ok:
                    raise
                continue
            if life is not None:
                lives.append(life)
    return lives


def load_json(path, default):
    """The JSON document at path, or default when there is none."""
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return default


def load_cmd_run(rundir):
    """(lives, runs, alive pids) of one run directory of cmd-life records,
    runs.json and alive.json."""
    lives = load_lives(rundir)
    runs = load_json(os.path.join(rundir, "runs.json"), [])
    alive = load_json(os.path.join(rundir, "alive.json"), [])
    return lives, runs, alive


def parse_claim_log(lines):
    """claim-host's log as a list of (op, pid, fire, term, rc); lines that
    are not five fields are skipped."""
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) != 5:
            continue
        op, pid, fire, term, rc = parts
        out.append((op, int(pid), int(fire), int(term), int(rc)))
    return out


def load_jsonl(path):
    """The objects of a JSON-lines file (blank lines skipped)."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def pct(values, p, empty=None):
    """The p-th percentile (p in percent) of values by nearest rank: the
    smallest value with at least p% of the values at or below it (p99 of
    100 values is the 99th smallest, p50 of 10 the 5th). empty when there
    are no values."""
    if not values:
        return empty
    v = sorted(values)
    rank = -(-p * len(v) // 100)  # ceil(p * n / 100), exact for ints
    return v[min(len(v), max(1, int(rank))) - 1]


# ---- self-test ----------------------------------------------------------

def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def self_test():
    """pct() on the ranks the three old copies disagreed on, and each
    loader on files written here. Returns 0 when all is as expected."""
    import tempfile
    bad = []

    def want(name, got, expected):
        ok = got == expected
        print("self-test %-44s %s %r" % (name, "ok " if ok else "BAD", got))
        if not ok:
            bad.append(name)

    hundred = list(range(1, 101))
    want("pct p99 of 1..100 is 99", pct(hundred, 99), 99)
    want("pct p50 of 1..10 is 5", pct(list(range(1, 11)), 50), 5)
    want("pct p50 of 1..3 is 2", pct([3, 1, 2], 50), 2)
    want("pct p99 of 1..1000 is 990", pct(list(range(1, 1001)), 99), 990)
    want("pct p100 is the max", pct(hundred, 100), 100)
    want("pct p0 is the min", pct(hundred, 0), 1)
    want("pct p99.9 of 1..1000 is 999", pct(list(range(1, 1001)), 99.9),
         999)
    want("pct of nothing", pct([], 50), None)
    want("pct of nothing, nan asked", str(pct([], 50, float("nan"))),
         "nan")
    with tempfile.TemporaryDirectory() as d:
        h = FAULT.header.pack(b"OLFAULT1", 7, 4, 2, 1, 2, 3, 0, 9)
        recs = FAULT.record.pack(5, 10, 11, 20, 21, 3) + \
            FAULT.record.pack(6, 30, 31, 40, 41, 2)
        _write(os.path.join(d, "host-7.rec"), h + recs + bytes(96))
        _write(os.path.join(d, "host-8.rec"), bytes(64))  # died at once
        _write(os.path.join(d, "life-9.rec"), bytes(208))  # not a host's
        hdrs, got = load_hosts(d)
        want("fault-host header", [(x["pid"], x["count"], x["ticks"])
                                   for x in hdrs], [(7, 2, 9)])
        want("fault-host records", [(r["pid"], r["seq"], r["term"],
                                     r["first_after"], r["last_before"],
                                     r["n"]) for r in got],
             [(7, 0, 5, 11, 20, 3), (7, 1, 6, 31, 40, 2)])
        g = GROUP.header.pack(b"OLGROUP1", 3, 2, 5, 1, 2, 1, 4, 16) + \
            GROUP.record.pack(2, 9, 1, 2, 3, 4) + \
            GROUP.record.pack(1, 4, 5, 6, 7, 8)
        _write(os.path.join(d, "group-3.rec"), g)
        hdrs, got = load_group(d)
        want("group header (count above cap)", [(x["shards"], x["count"])
                                                for x in hdrs], [(16, 5)])
        want("group records", [(r["shard"], r["term"], r["seq"])
                               for r in got], [(2, 9, 0), (1, 4, 1)])
        _write(os.path.join(d, "group-4.rec"), b"OLFAULT1" + bytes(56))
        try:
            load_group(d)
            want("a foreign magic is refused", "read", "ValueError")
        except ValueError:
            want("a foreign magic is refused", "ValueError", "ValueError")
        life = LIFE.pack(b"OLCMDLF1", 11, 10, 1, 1, 3, 100, 250, 0, 300, 5,
                         b"cand-1\0")
        e = os.path.join(d, "e")
        os.makedirs(e)
        _write(os.path.join(e, "life-11.rec"), life)
        _write(os.path.join(e, "life-12.rec"), b"junk" * 52)
        got = load_lives(e, partial_ok=True)
        want("life", [(x["pid"], x["ppid"], x["child"], x["term"], x["id"],
                       x["last"]) for x in got],
             [(11, 10, True, 3, "cand-1", 300)])
        try:
            load_cmd_run(e)
            want("an unreadable life once stopped", "read", "ValueError")
        except ValueError:
            want("an unreadable life once stopped", "ValueError",
                 "ValueError")
        os.remove(os.path.join(e, "life-12.rec"))
        with open(os.path.join(e, "runs.json"), "w") as f:
            json.dump([{"id": "cand-1", "pid": 10}], f)
        lives, runs, alive = load_cmd_run(e)
        want("runs.json, no alive.json", (len(lives), runs, alive),
             (1, [{"id": "cand-1", "pid": 10}], []))
    want("claim log", parse_claim_log(["W 1 0 10 0", "junk", "C 1 100 10 1"]),
         [("W", 1, 0, 10, 0), ("C", 1, 100, 10, 1)])
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.dont_write_bytecode = True
        sys.exit(self_test())
    print(__doc__, file=sys.stderr)
    sys.exit(2)
