#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""idle_check.py: the client side of tests/cli/idle.test, idle and slow
clients in front of "odbc-leader serve" or "run --health-listen".

  idle_check.py flood PORT --partial N --silent N --checks K
                [--want STATUS:PATH:BODY_START ...] [--deadline S]
                [--pid PID] [--timeout T]
      from 127.0.0.1: opens N connections that send half a request (a
      request line and one header, no blank line) and N that send
      nothing, all held open at once; then, through them, K times each
      --want (a new connection each time: GET PATH, HTTP/1.1), which
      must answer STATUS with a body that starts with BODY_START within
      S seconds (default 3); prints the latencies (p50, max) of each
      path. With --pid, the checks wait (at most 1 s) until the server,
      process PID, holds as many descriptors as there are idle
      connections, and after them it must still hold that many; when
      they took less than the server's timeout T, none of the idle
      connections may have been closed yet. Exits 0, or 1 with the
      first failure on stderr.
  idle_check.py drop PORT SECONDS [--slack S]
      opens one connection that sends half a request and one that sends
      nothing, and waits for the server to close each (end of file or
      reset): each must close after SECONDS (the documented timeout,
      minus 0.5 s for rounding) and within SECONDS + S (default 3).
      Prints when each was closed. Exits 0 or 1.

Raises its own RLIMIT_NOFILE to the hard limit; exits 77 (skip) when the
hard limit is too low for the connections asked for.
"""
import os
import resource
import selectors
import socket
import statistics
import sys
import time

HALF = b"GET /health/leader HTTP/1.1\r\nHost: 127.0.0.1\r\n"


def raise_nofile(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < need:
        print(f"SKIP: RLIMIT_NOFILE hard limit {hard} < {need} descriptors",
              file=sys.stderr)
        sys.exit(77)
    if soft != resource.RLIM_INFINITY and soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


def server_fds(pid):
    """How many descriptors process pid has open."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def connect(port, timeout):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def closed_now(s):
    """True when the server closed s (end of file or reset); never blocks."""
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        s.setblocking(True)


def get(port, path, deadline):
    """GET path on a new connection. Returns (status, body, seconds)."""
    t0 = time.monotonic()
    with connect(port, deadline) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  "Connection: close\r\n\r\n".encode())
        data = b""
        while True:
            left = deadline - (time.monotonic() - t0)
            if left <= 0:
                raise TimeoutError(f"no full answer within {deadline:g} s "
                                   f"(got {data[:80]!r})")
            s.settimeout(left)
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    took = time.monotonic() - t0
    head, _, body = data.partition(b"\r\n\r\n")
    line = head.split(b"\r\n", 1)[0].decode(errors="replace")
    parts = line.split()
    if len(parts) < 2 or not parts[1].isdigit():
        raise ValueError(f"no status line: {data[:80]!r}")
    return int(parts[1]), body.decode(errors="replace"), took


def flood(argv):
    port = int(argv[0])
    partial = silent = 0
    checks = 20
    deadline = 3.0
    wants = []
    pid = None
    timeout = None
    i = 1
    while i < len(argv):
        opt, val = argv[i], argv[i + 1]
        if opt == "--partial":
            partial = int(val)
        elif opt == "--silent":
            silent = int(val)
        elif opt == "--checks":
            checks = int(val)
        elif opt == "--deadline":
            deadline = float(val)
        elif opt == "--pid":
            pid = int(val)
        elif opt == "--timeout":
            timeout = float(val)
        elif opt == "--want":
            status, path, start = val.split(":", 2)
            wants.append((int(status), path, start))
        else:
            print(__doc__, file=sys.stderr)
            return 64
        i += 2
    raise_nofile(partial + silent + 64)
    held = []
    t0 = time.monotonic()
    try:
        for n in range(partial + silent):
            s = connect(port, 10)
            if n < partial:
                s.sendall(HALF)
            held.append(s)
        opened = time.monotonic() - t0
        print(f"held: {partial} half requests + {silent} silent connections, "
              f"opened in {opened:.2f} s")
        if pid is not None:  # measure once the server has accepted them
            while (server_fds(pid) < len(held) and
                   time.monotonic() - t0 < opened + 1):
                time.sleep(0.01)
            print(f"the server holds {server_fds(pid)} descriptors after "
                  f"{time.monotonic() - t0:.2f} s")
        took = {path: [] for _, path, _ in wants}
        for _ in range(checks):
            for status, path, start in wants:
                try:
                    got, body, secs = get(port, path, deadline)
                except (OSError, ValueError) as e:
                    print(f"FAIL: GET {path} through {len(held)} idle "
                          f"connections: {e}", file=sys.stderr)
                    return 1
                if got != status or not body.startswith(start):
                    print(f"FAIL: GET {path}: {got} {body[:200]!r}, want "
                          f"{status} {start!r}...", file=sys.stderr)
                    return 1
                took[path].append(secs)
        for path, t in took.items():
            print(f"GET {path}: {len(t)} answers, p50 "
                  f"{statistics.median(t) * 1000:.1f} ms, max "
                  f"{max(t) * 1000:.1f} ms")
        if pid is not None:
            fds = server_fds(pid)
            print(f"the server holds {fds} descriptors after the checks")
            if fds < len(held):
                print(f"FAIL: the server holds {fds} descriptors, fewer than "
                      f"the {len(held)} idle connections", file=sys.stderr)
                return 1
        since = time.monotonic() - t0
        gone = sum(1 for s in held if closed_now(s))
        print(f"held connections the server closed meanwhile: {gone}, after "
              f"{since:.2f} s")
        if gone and timeout is not None and since < timeout - 0.5:
            print(f"FAIL: the server closed {gone} idle connections after "
                  f"{since:.2f} s, before its timeout of {timeout:g} s",
                  file=sys.stderr)
            return 1
    finally:
        for s in held:
            s.close()
    return 0


def drop(argv):
    port, secs = int(argv[0]), float(argv[1])
    slack = float(argv[3]) if len(argv) > 3 and argv[2] == "--slack" else 3.0
    sel = selectors.DefaultSelector()
    t0 = time.monotonic()
    for name, data in (("half request", HALF), ("silent", b"")):
        s = connect(port, 10)
        if data:
            s.sendall(data)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, name)
    left = 2
    rc = 0
    while left:
        wait = t0 + secs + slack - time.monotonic()
        events = sel.select(timeout=max(wait, 0)) if wait > 0 else []
        if not events:
            names = [k.data for k in sel.get_map().values()]
            print(f"FAIL: still open {secs + slack:g} s after connecting: "
                  f"{', '.join(names)}", file=sys.stderr)
            return 1
        for key, _ in events:
            try:
                chunk = key.fileobj.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            at = time.monotonic() - t0
            if chunk:
                print(f"FAIL: {key.data}: the server answered "
                      f"{chunk[:80]!r} after {at:.2f} s", file=sys.stderr)
                return 1
            print(f"{key.data}: closed by the server after {at:.2f} s")
            if at < secs - 0.5:
                print(f"FAIL: {key.data}: closed after {at:.2f} s, before the "
                      f"timeout of {secs:g} s", file=sys.stderr)
                rc = 1
            sel.unregister(key.fileobj)
            key.fileobj.close()
            left -= 1
    return rc


def main():
    cmds = {"flood": flood, "drop": drop}
    if len(sys.argv) < 3 or sys.argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        return 64
    return cmds[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
