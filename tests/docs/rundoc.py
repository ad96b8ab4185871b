#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rundoc.py: runs the shell blocks a guide marks as runnable and checks
what they print, so that a guide that goes stale fails the suite.

    rundoc.py [--work DIR] [--timeout S] [--mutate OLD:NEW] FILE.md...

In a Markdown file, a fenced block whose info string is "sh run" (GitHub
and every renderer show it as sh) is runnable. "sh run status=N" expects
exit status N from the block (default 0). A fenced block "text output"
right after a runnable one (blank lines only between them) is what its
standard output must be:

  * each line is compared with the next line printed, trailing blanks
    ignored; "..." inside a line matches any characters (a term, a time);
  * a line that is only "..." matches any number of lines, none included.

Standard error is not compared (it is shown on a failure). All runnable
blocks of one file run in one bash process, in order, in a fresh
directory of their own (--work DIR/NAME), so variables and files carry
over from block to block; a block that fails, or prints something else,
ends that file. The process group is killed when the file is done.
Blocks run as written: the caller sets up PATH (odbc-leader, python3),
the ODBC configuration (DSN sched) and the rest of the environment.

A block whose text holds "--once-per 1h" does not start within 3 s of
half past an hour, where the slot nearest the clock changes (two hosts
on both sides of that instant would claim different slots, as the guide
explains): the runner waits those seconds out.

--mutate OLD:NEW replaces the first OLD in the runnable blocks of the
files with NEW before running them: the suite uses it to show that an
edit to a wrong flag fails (exit 1 expected then).

Exit status: 0 every block passed, 1 one failed (it is shown), 2 usage.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import time

FENCE = re.compile(r"^(`{3,}|~{3,})\s*(.*)$")


class Block:
    """One fenced block: its line, info words and text."""

    def __init__(self, line, info, text):
        self.line = line
        self.info = info.split()
        self.text = text

    def runnable(self):
        return len(self.info) >= 2 and self.info[0] in ("sh", "bash") and \
            "run" in self.info[1:]

    def is_output(self):
        return len(self.info) >= 2 and self.info[0] == "text" and \
            self.info[1] == "output"

    def status(self):
        for w in self.info[1:]:
            if w.startswith("status="):
                return int(w[len("status="):])
        return 0


def blocks_of(path):
    """The fenced blocks of a Markdown file, each with whether only blank
    lines separate it from the one before (a list of (Block, adjacent))."""
    out = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    last_end = None
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info, start = m.group(1), m.group(2), i + 1
        j = start
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        adjacent = last_end is not None and \
            all(not lines[k].strip() for k in range(last_end + 1, i))
        out.append((Block(i + 1, info, "\n".join(lines[start:j])), adjacent))
        last_end = j
        i = j + 1
    return out


def steps_of(path):
    """The runnable blocks of path, each with its expected output (a list
    of lines) or None. Fails on an output block without a runnable one."""
    steps = []
    for b, adjacent in blocks_of(path):
        if b.runnable():
            steps.append([b, None])
        elif b.is_output():
            if not adjacent or not steps or steps[-1][1] is not None:
                raise SystemExit("%s:%d: a \"text output\" block must follow "
                                 "a \"sh run\" block" % (path, b.line))
            steps[-1][1] = b.text.split("\n")
    return steps


def line_matches(pattern, line):
    parts = [re.escape(p) for p in pattern.rstrip().split("...")]
    return re.fullmatch(".*".join(parts), line.rstrip()) is not None


def output_matches(expected, actual):
    """1 when the actual lines match the expected patterns."""
    def match(i, j):
        if i == len(expected):
            return j == len(actual)
        if expected[i].strip() == "...":
            return any(match(i + 1, k) for k in range(j, len(actual) + 1))
        return j < len(actual) and line_matches(expected[i], actual[j]) and \
            match(i + 1, j + 1)
    while actual and not actual[-1].strip():
        actual = actual[:-1]
    while expected and not expected[-1].strip():
        expected = expected[:-1]
    return match(0, 0)


def wait_off_slot_edge(text):
    """Waits out the 3 s around half past the hour for --once-per 1h."""
    if "--once-per 1h" not in text:
        return
    into = time.time() % 3600
    if 1797 <= into < 1803:
        time.sleep(1803 - into)


def run_file(path, work, timeout, mutate):
    """Runs the runnable blocks of path; returns a list of problems."""
    steps = steps_of(path)
    if not steps:
        return ["%s: no \"sh run\" block" % path]
    if mutate:
        old, new = mutate
        for st in steps:
            if old in st[0].text:
                st[0].text = st[0].text.replace(old, new, 1)
                break
        else:
            return ["%s: --mutate: %r is in no runnable block" % (path, old)]
    os.makedirs(work, exist_ok=True)
    ctl = os.path.join(work, ".rundoc")
    os.makedirs(ctl, exist_ok=True)
    # one bash reads the blocks from a FIFO-free driver: it sources each
    # block file when its "go" file appears and writes the status after
    driver = os.path.join(ctl, "driver.sh")
    with open(driver, "w") as f:
        f.write("cd %s || exit 1\n" % shlex_quote(work))
        for n in range(len(steps)):
            f.write("while [ ! -e %(c)s/go.%(n)d ]; do sleep 0.05; done\n"
                    "{ . %(c)s/block.%(n)d.sh; } >%(c)s/out.%(n)d "
                    "2>%(c)s/err.%(n)d </dev/null\n"
                    "echo $? >%(c)s/rc.%(n)d.tmp && "
                    "mv %(c)s/rc.%(n)d.tmp %(c)s/rc.%(n)d\n"
                    % {"c": shlex_quote(ctl), "n": n})
    proc = subprocess.Popen(["bash", driver], start_new_session=True,
                            stdin=subprocess.DEVNULL)
    problems = []
    try:
        for n, (b, expected) in enumerate(steps):
            with open(os.path.join(ctl, "block.%d.sh" % n), "w") as f:
                f.write(b.text + "\n")
            wait_off_slot_edge(b.text)
            open(os.path.join(ctl, "go.%d" % n), "w").close()
            rc_path = os.path.join(ctl, "rc.%d" % n)
            deadline = time.monotonic() + timeout
            while not os.path.exists(rc_path) and proc.poll() is None and \
                    time.monotonic() < deadline:
                time.sleep(0.05)
            where = "%s:%d" % (path, b.line)
            if not os.path.exists(rc_path):
                problems.append("%s: the block did not finish within %d s"
                                % (where, timeout) if proc.poll() is None
                                else "%s: the shell exited (a block must not "
                                "call exit)" % where)
            else:
                rc = int(open(rc_path).read())
                out = open(os.path.join(ctl, "out.%d" % n)).read()
                err = open(os.path.join(ctl, "err.%d" % n)).read()
                if rc != b.status():
                    problems.append("%s: exit status %d, expected %d\n"
                                    "--- stdout\n%s--- stderr\n%s"
                                    % (where, rc, b.status(), out, err))
                elif expected is not None and \
                        not output_matches(expected, out.split("\n")):
                    problems.append("%s: the output differs from the guide's\n"
                                    "--- expected\n%s\n--- got\n%s--- stderr\n%s"
                                    % (where, "\n".join(expected), out, err))
                else:
                    print("ok %s" % where, flush=True)
            if problems:
                break
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        time.sleep(0.3)
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # stragglers of the group
        except ProcessLookupError:
            pass
    return problems


def shlex_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--work", default=os.getcwd())
    ap.add_argument("--timeout", type=int, default=120,
                    help="seconds a block may take")
    ap.add_argument("--mutate", default=None)
    args = ap.parse_args()
    mutate = tuple(args.mutate.split(":", 1)) if args.mutate else None
    if mutate is not None and len(mutate) != 2:
        ap.error("--mutate OLD:NEW")
    failed = 0
    for path in args.files:
        name = os.path.splitext(os.path.basename(path))[0]
        problems = run_file(path, os.path.join(args.work, name), args.timeout,
                            mutate)
        for p in problems:
            print("FAIL %s" % p, flush=True)
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
