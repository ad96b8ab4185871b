#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""serve_check.py: the HTTP side of tests/cli/serve.test.

  serve_check.py get URL [--method M] [--header K:V] [--cafile PEM]
                  [--user NAME:PASSWORD]
      prints the status code on one line, then the body; exits 0 unless
      the connection failed (exit 2: TLS refused, 1: other failures)
  serve_check.py raw HOST PORT REQUEST_BYTES_FILE
      sends the file's bytes as they are, prints the status line (or
      "closed" when the server cut the connection without an answer)
  serve_check.py slow HOST PORT SECONDS
      opens a connection, sends half a request line and holds it for
      SECONDS (a slow client), then prints what came back ("closed" when
      the server cut it)
  serve_check.py prom-wait PROM_URL QUERY SECONDS LABEL=VALUE...
      polls Prometheus's HTTP query API until QUERY returns exactly one
      series and each LABEL of it is VALUE (LABEL= : the series has no
      LABEL); prints the series; exits 1 with the last result after
      SECONDS
"""
import base64
import http.client
import json
import socket
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


def get(argv):
    url = argv[0]
    method = "GET"
    headers = {}
    ctx = None
    i = 1
    while i < len(argv):
        if argv[i] == "--method":
            method = argv[i + 1]
        elif argv[i] == "--header":
            k, v = argv[i + 1].split(":", 1)
            headers[k] = v
        elif argv[i] == "--cafile":
            ctx = ssl.create_default_context(cafile=argv[i + 1])
        elif argv[i] == "--user":
            token = base64.b64encode(argv[i + 1].encode()).decode()
            headers["Authorization"] = "Basic " + token
        i += 2
    req = urllib.request.Request(url, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=20, context=ctx) as r:
            print(r.status)
            for k in ("WWW-Authenticate",):
                if r.headers.get(k):
                    print(f"{k}: {r.headers[k]}", file=sys.stderr)
            sys.stdout.write(r.read().decode())
    except urllib.error.HTTPError as e:
        print(e.code)
        if e.headers.get("WWW-Authenticate"):
            print("WWW-Authenticate: " + e.headers["WWW-Authenticate"], file=sys.stderr)
        sys.stdout.write(e.read().decode())
    except urllib.error.URLError as e:
        print(f"connection failed: {e.reason}", file=sys.stderr)
        return 2 if isinstance(e.reason, ssl.SSLError) else 1
    except (http.client.HTTPException, OSError) as e:
        print(f"connection failed: {e!r}", file=sys.stderr)
        return 1
    return 0


def raw(argv):
    host, port, path = argv[0], int(argv[1]), argv[2]
    with open(path, "rb") as f:
        data = f.read()
    with socket.create_connection((host, port), timeout=20) as s:
        try:
            s.sendall(data)
            line = s.makefile("rb").readline().decode().strip()
        except (ConnectionResetError, BrokenPipeError):
            line = ""
    print(line or "closed")
    return 0


def slow(argv):
    host, port, secs = argv[0], int(argv[1]), float(argv[2])
    with socket.create_connection((host, port), timeout=secs + 20) as s:
        s.sendall(b"GET /met")
        time.sleep(secs)
        try:
            s.sendall(b"rics HTTP/1.1\r\nHost: x\r\n\r\n")
            line = s.makefile("rb").readline().decode().strip()
        except (ConnectionResetError, BrokenPipeError):
            line = ""
    print(line or "closed")
    return 0


def prom_wait(argv):
    base, query, secs = argv[0], argv[1], float(argv[2])
    want = dict(a.split("=", 1) for a in argv[3:])
    url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": query})
    deadline = time.monotonic() + secs
    last = None
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                last = json.load(r)["data"]["result"]
            if len(last) == 1 and all(
                    last[0]["metric"].get(k, "") == v for k, v in want.items()):
                print(json.dumps(last[0]))
                return 0
        except (OSError, ValueError, KeyError) as e:
            last = repr(e)
        if time.monotonic() > deadline:
            print(f"after {secs:g} s, {query} gave {last!r}, wanted one series "
                  f"with {want}", file=sys.stderr)
            return 1
        time.sleep(0.25)


def main():
    cmds = {"get": get, "raw": raw, "slow": slow, "prom-wait": prom_wait}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        return 64
    return cmds[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
