# SPDX-License-Identifier: MIT
"""check_invocations.py: do the odbc-leader command lines in contrib parse?

    python3 check_invocations.py ODBC_LEADER_BIN FILE...

Finds every odbc-leader command line in the files: ExecStart= lines of
systemd units, the command column of /etc/cron.d lines (after five time
fields and a user), lines inside ``` blocks of Markdown files (a per-user
crontab line or a plain command). Comment lines are skipped. Placeholders
become sample values (%i, %H, $LEADER_CMD), then each line runs with
--help inserted before its "--" (or appended when it has none): the built
odbc-leader parses every option and value, then prints the subcommand's
help and exits 0; a bad option or value exits 64. Prints each line
checked; exits 1 when one fails or when no line was found at all.
"""

import os
import re
import shlex
import subprocess
import sys

CRON_TIME = re.compile(r"^[0-9*/,-]+$")
SAMPLES = {
    "%i": "mailer",
    "%H": "host1",
    "${LEADER_CMD}": "true",
    "$LEADER_CMD": "true",
    "$SERVE_ARGS": "-n mailer -n report --listen 127.0.0.1:9466",
}


def from_unit(lines):
    for line in lines:
        if line.startswith("ExecStart="):
            yield line[len("ExecStart="):].lstrip("-@:+!")


def from_cron(lines, user_column):
    for line in lines:
        s = line.strip()
        if not s or s.startswith("#") or re.match(r"^[A-Za-z_]+=", s):
            continue
        fields = s.split(None, 6 if user_column else 5)
        n = 7 if user_column else 6
        if len(fields) != n or not all(CRON_TIME.match(f) for f in fields[:5]):
            raise ValueError("not a cron line: %r" % line)
        yield fields[-1]


def from_markdown(lines):
    block = []
    inside = False
    for line in lines:
        if line.startswith("```"):
            inside = not inside
            continue
        if inside and "odbc-leader " in line and not line.lstrip().startswith("#"):
            block.append(line)
    for line in block:
        if CRON_TIME.match(line.split()[0]):
            yield from from_cron([line], user_column=False)
        else:
            yield line.strip()


def invocations(path):
    with open(path) as f:
        lines = f.read().splitlines()
    if path.endswith((".service", ".timer")):
        found = from_unit(lines)
    elif path.endswith(".cron"):
        found = from_cron(lines, user_column=True)
    elif path.endswith(".md"):
        found = from_markdown(lines)
    else:
        raise ValueError("%s: unknown kind of file" % path)
    return [c for c in found if re.search(r"(^|/)odbc-leader\s", c)]


def check(binary, command):
    """Returns None when command parses, else the reason."""
    for key, value in SAMPLES.items():
        command = command.replace(key, value)
    words = shlex.split(command)
    if not words[0].endswith("odbc-leader"):
        return "does not start with odbc-leader"
    args = words[1:]
    if "run" in args and ("--" not in args or args[-1] == "--"):
        return "run without \"-- CMD\""
    if "--" in args:
        args.insert(args.index("--"), "--help")
    else:
        args.append("--help")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ODBC_LEADER")}
    p = subprocess.run([binary] + args, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0 or not p.stdout.startswith("Usage: odbc-leader "):
        return "exit %d: %s" % (p.returncode, p.stderr.strip())
    return None


def main():
    binary, paths = sys.argv[1], sys.argv[2:]
    failed = checked = 0
    for path in paths:
        for command in invocations(path):
            checked += 1
            why = check(binary, command)
            print("%s: %s: %s" % ("ok" if why is None else "FAIL",
                                  os.path.basename(path), command))
            if why is not None:
                print("  " + why)
                failed += 1
    if checked == 0:
        print("FAIL: no odbc-leader command line found")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
