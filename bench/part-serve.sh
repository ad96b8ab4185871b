#!/bin/bash
# SPDX-License-Identifier: MIT
# part-serve.sh: make bench part "serve" (interface: bench/run.sh).
# odbc-leader serve under load, on SQLite: one serve process over
# SERVE_NAMESPACES namespaces (default 200) answers SERVE_CLIENTS
# concurrent clients (default 100) for SERVE_SECONDS (default 30), after
# a warm-up of a sixth of that (at least 1 s) that is not counted.
# - The namespaces: one short-lived python3 helper loads the library
#   (.libs/libodbcleader.so, through ctypes) and, per namespace, creates a
#   handle with LeaderId=leader-K and LeaderTTL=600000 and ticks it until it
#   leads, then exits without odbc_leader_destroy(): nothing resigns, so
#   every namespace keeps a live leader (leader-K, lease of 10 minutes, its
#   candidate row soon stale) for the whole run, and no process writes to
#   the database while serve reads it. 200 namespaces take about a second.
# - The load: a python3 script (stdlib only: threads and http.client), one
#   keep-alive connection per client; each client loops over GET
#   /health/leader?namespace=nsK&id=ID for a random K, ID alternately
#   leader-K (must answer 200) and x (must answer 503), and makes every
#   20th request GET /metrics (every namespace; each must show
#   odbc_leader_up 1). Errors: any other status or answer, a connection
#   error (the client reconnects), a /metrics without every namespace up.
#   Latency is per request, from sending it to the body read, seen by the
#   client: it includes waiting behind the other clients' requests (serve
#   answers one at a time on one thread) and the clients' own GIL.
# - serve's VmRSS (/proc/PID/status) right after it listens, after the
#   warm-up and at the end of the load; its CPU time over the measured
#   window (/proc/PID/stat).
# - serve must stop on SIGTERM with status 0; the lines it logs besides
#   its start line (warnings: a failed read, libmicrohttpd's errors) are
#   counted in the errors row's note.
# The rows: requests/s (all, /health/leader, /metrics), p50 and p99 of
# both paths, errors (target 0), RSS (start, after warm-up, end) and its
# growth over the measured window. A full run fails on any error. Short
# mode (BENCH_SHORT=1, bench/run.sh): 10 clients for 3 s, nothing judged;
# a build without libmicrohttpd (no serve) fails it instead of skipping.
set -eu
. "$srcdir/tests/integration/lib.sh"

if [ "${BENCH_SHORT:-0}" = 1 ]; then
    : "${SERVE_CLIENTS:=10}" "${SERVE_SECONDS:=3}"
fi
clients=${SERVE_CLIENTS:-100}
seconds=${SERVE_SECONDS:-30}
nsn=${SERVE_NAMESPACES:-200}
warmup=$(((seconds + 5) / 6))
out=$BENCH_DIR/serve.json
bin=$top_builddir/odbc-leader
lib=$top_builddir/.libs/libodbcleader.so
W=$BENCH_WORK
conn="Driver=SQLite3;Database=$W/serve.db"
pid=''

# Not measurable here: skip, or fail in the short mode (which needs every
# part).
cannot() {
    [ "${BENCH_SHORT:-0}" = 1 ] && ol_fail "serve: $*"
    ol_log "serve: $*: skipped"
    exit 77
}

grep -q '^#define ODBC_LEADER_HAVE_MHD 1' "$top_builddir/build_config.h" ||
    cannot "odbc-leader was built without libmicrohttpd (no serve)"
[ "$BENCH_HAVE_SQLITE" = 1 ] || cannot "no SQLite ODBC driver"
[ -f "$lib" ] || ol_fail "$lib missing (a build without shared libraries?)"
trap '[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; true' EXIT
rm -f "$out"

# ---- the namespaces: a leader each, left holding a 10-minute lease ----
cat >"$W/seed.py" <<'EOF'
import ctypes, os, sys, time
lib = ctypes.CDLL(sys.argv[1])
conn, n = sys.argv[2], int(sys.argv[3])
lib.odbc_leader_create.argtypes = [
    ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_void_p,
    ctypes.c_char_p, ctypes.c_size_t]
lib.odbc_leader_tick.argtypes = [ctypes.c_void_p,
                                 ctypes.POINTER(ctypes.c_uint32)]
t0 = time.monotonic()
for k in range(1, n + 1):
    h = ctypes.c_void_p()
    err = ctypes.create_string_buffer(512)
    cfg = "%s;LeaderNamespace=ns%d;LeaderId=leader-%d;LeaderTTL=600000" % (
        conn, k, k)
    rc = lib.odbc_leader_create(ctypes.byref(h), cfg.encode(), None, err, 512)
    if rc < 0:
        sys.exit("create ns%d: %d %s" % (k, rc, err.value.decode()))
    for _ in range(20):
        rc = lib.odbc_leader_tick(h, None)
        if rc == 1:
            break
        if rc < 0:
            sys.exit("tick ns%d: error %d" % (k, rc))
    else:
        sys.exit("ns%d: not leader after 20 ticks" % k)
print("%d namespaces led in %.2f s" % (n, time.monotonic() - t0))
sys.stdout.flush()
os._exit(0)  # no odbc_leader_destroy(): the leases stay held
EOF
seed=$(python3 "$W/seed.py" "$lib" "$conn" "$nsn") ||
    ol_fail "serve: making the namespaces' leaders failed"
ol_log "serve: $seed"

# ---- serve ----
args=()
for ((k = 1; k <= nsn; k++)); do
    args+=(-n "ns$k")
done
: >"$W/serve.err" # before serve starts: the loop below reads it at once
"$bin" serve -C "$conn" "${args[@]}" --listen 127.0.0.1:0 2>"$W/serve.err" &
pid=$!
port=''
for ((i = 0; i < 300; i++)); do
    port=$(sed -n 's/.*serve: listening on .*, port \([0-9]*\),.*/\1/p' \
        "$W/serve.err")
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$port" ]; then
    cat "$W/serve.err" >&2
    ol_fail "serve did not start listening"
fi
ol_log "serve: pid $pid, port $port, $nsn namespaces"

# ---- the load ----
cat >"$W/load.py" <<'EOF'
import http.client, math, random, re, sys, threading, time

port, pid = int(sys.argv[1]), int(sys.argv[2])
clients, seconds, warmup, nsn = map(int, sys.argv[3:7])
UP = re.compile(rb"^odbc_leader_up\{[^}]*\} (\d+)$", re.M)


def rss():
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def cpu_ticks():
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


class Client(threading.Thread):
    def __init__(self, seed):
        super().__init__(daemon=True)
        self.rnd = random.Random(seed)
        self.health, self.metrics = [], []
        self.codes = {200: 0, 503: 0}
        self.errors, self.wrong, self.connects = 0, 0, 0
        self.msgs = []

    def fail(self, what):
        self.errors += 1
        if len(self.msgs) < 5:
            self.msgs.append(what)

    def run(self):
        conn, i = None, 0
        while True:
            t0 = time.monotonic()
            if t0 >= end:
                break
            i += 1
            is_metrics = i % 20 == 0
            if is_metrics:
                path, want = "/metrics", 200
            else:
                k = self.rnd.randint(1, nsn)
                ident = "leader-%d" % k if i % 2 else "x"
                want = 200 if i % 2 else 503
                path = "/health/leader?namespace=ns%d&id=%s" % (k, ident)
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", port,
                                                      timeout=60)
                    self.connects += 1
                conn.request("GET", path)
                r = conn.getresponse()
                body = r.read()
                t1 = time.monotonic()
                if r.will_close:
                    conn.close()
                    conn = None
            except (OSError, http.client.HTTPException) as e:
                if conn is not None:
                    conn.close()
                conn = None
                if t0 >= start:
                    self.fail("%s: %r" % (path, e))
                continue
            if t0 < start or t1 > end:
                continue  # warm-up, or past the window
            if r.status not in (200, 503):
                self.fail("%s: status %d" % (path, r.status))
                continue
            if not is_metrics:
                self.codes[r.status] += 1
            if r.status != want:
                self.wrong += 1
                self.fail("%s: status %d, want %d: %r" % (
                    path, r.status, want, body[:100]))
                continue
            if is_metrics:
                up = UP.findall(body)
                if len(up) != nsn or any(v != b"1" for v in up):
                    self.fail("/metrics: %d namespaces up of %d" % (
                        sum(v == b"1" for v in up), nsn))
                    continue
                self.metrics.append((t1 - t0) * 1e3)
            else:
                self.health.append((t1 - t0) * 1e3)
        if conn is not None:
            conn.close()


def rank(vals, q):
    """Nearest-rank quantile q of vals (as benchlib.py)."""
    vals = sorted(vals)
    if not vals:
        return float("nan")
    return vals[max(1, math.ceil(q * len(vals))) - 1]


rss_start = rss()
t = time.monotonic()
start, end = t + warmup, t + warmup + seconds
threads = [Client(c) for c in range(clients)]
for c in threads:
    c.start()
time.sleep(max(0.0, start - time.monotonic()))
rss_warm, cpu0 = rss(), cpu_ticks()
for c in threads:
    c.join()
rss_end, cpu1 = rss(), cpu_ticks()
health = [x for c in threads for x in c.health]
metrics = [x for c in threads for x in c.metrics]
msgs = [m for c in threads for m in c.msgs]
for m in msgs[:10]:
    print("serve load: error: " + m, file=sys.stderr)
hz = 100  # USER_HZ on Linux
out = {
    "health_n": len(health), "metrics_n": len(metrics),
    "total_rps": (len(health) + len(metrics)) / seconds,
    "health_rps": len(health) / seconds, "metrics_rps": len(metrics) / seconds,
    "health_p50": rank(health, 0.5), "health_p99": rank(health, 0.99),
    "health_max": max(health, default=float("nan")),
    "metrics_p50": rank(metrics, 0.5), "metrics_p99": rank(metrics, 0.99),
    "metrics_max": max(metrics, default=float("nan")),
    "ok200": sum(c.codes[200] for c in threads),
    "ok503": sum(c.codes[503] for c in threads),
    "errors": sum(c.errors for c in threads),
    "wrong": sum(c.wrong for c in threads),
    "connects": sum(c.connects for c in threads),
    "rss_start": rss_start, "rss_warm": rss_warm, "rss_end": rss_end,
    "cpu_pct": 100.0 * (cpu1 - cpu0) / hz / seconds,
}
for k, v in out.items():
    print("%s=%s" % (k, ("%.2f" % v) if isinstance(v, float) else v))
EOF
ol_log "serve: $clients clients, $warmup s warm-up, $seconds s measured"
python3 "$W/load.py" "$port" "$pid" "$clients" "$seconds" "$warmup" \
    "$nsn" >"$W/load.out" || ol_fail "serve: the load script failed"
kill -0 "$pid" 2>/dev/null || {
    cat "$W/serve.err" >&2
    ol_fail "serve died under load"
}

# Prints field $1 of the load script's output.
f() {
    sed -n "s/^$1=//p" "$W/load.out"
}

# ---- stop ----
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=''
# Everything serve logged but its start line: warnings, failed reads.
warnings=$(grep -vc 'serve: listening on' "$W/serve.err" || true)
if [ "$warnings" != 0 ]; then
    ol_log "serve logged $warnings lines:"
    grep -v 'serve: listening on' "$W/serve.err" | head -n 20 >&2
fi

win="$clients clients, keep-alive, $nsn namespaces, ${seconds} s after ${warmup} s of warm-up"
$BENCH_PY add "$out" "metric=serve under load: requests/s, all" \
    dialect=sqlite "value=$(f total_rps)" unit=1/s target=- \
    "note=$win; every 20th request /metrics; serve's CPU $(f cpu_pct) % of a core; $(f connects) connections opened"
$BENCH_PY add "$out" "metric=serve under load: requests/s, /health/leader" \
    dialect=sqlite "value=$(f health_rps)" unit=1/s target=- \
    "note=$(f health_n) answered: $(f ok200) 200 (id the leader), $(f ok503) 503 (id x)"
$BENCH_PY add "$out" "metric=serve under load: requests/s, /metrics" \
    dialect=sqlite "value=$(f metrics_rps)" unit=1/s target=- \
    "note=$(f metrics_n) answered, each with every namespace up"
$BENCH_PY add "$out" "metric=serve under load: /health/leader latency p50" \
    dialect=sqlite "value=$(f health_p50)" unit=ms target=- \
    "note=client side, queueing included"
$BENCH_PY add "$out" "metric=serve under load: /health/leader latency p99" \
    dialect=sqlite "value=$(f health_p99)" unit=ms target=- \
    "note=max $(f health_max) ms"
$BENCH_PY add "$out" "metric=serve under load: /metrics latency p50" \
    dialect=sqlite "value=$(f metrics_p50)" unit=ms target=- \
    "note=client side, queueing included; $nsn namespaces a request"
$BENCH_PY add "$out" "metric=serve under load: /metrics latency p99" \
    dialect=sqlite "value=$(f metrics_p99)" unit=ms target=- \
    "note=max $(f metrics_max) ms"
$BENCH_PY add "$out" "metric=serve under load: errors" \
    dialect=sqlite "value=$(f errors)" unit=errors target=0 \
    "note=other statuses, wrong answers ($(f wrong)), connection errors, /metrics without every namespace up; serve logged $warnings lines; exit status on SIGTERM $rc"
$BENCH_PY add "$out" "metric=serve under load: RSS after start" \
    dialect=sqlite "value=$(f rss_start)" unit=KiB target=- \
    "note=VmRSS once listening, $nsn namespaces read on one ODBC connection"
$BENCH_PY add "$out" "metric=serve under load: RSS after warm-up" \
    dialect=sqlite "value=$(f rss_warm)" unit=KiB target=- \
    "note=after ${warmup} s of load"
$BENCH_PY add "$out" "metric=serve under load: RSS at the end" \
    dialect=sqlite "value=$(f rss_end)" unit=KiB target=- \
    "note=after ${seconds} s more"
$BENCH_PY add "$out" "metric=serve under load: RSS growth while measured" \
    dialect=sqlite "value=$(($(f rss_end) - $(f rss_warm)))" unit=KiB \
    target=- "note=end minus after warm-up; end minus start $(($(f rss_end) - $(f rss_start))) KiB"
$BENCH_PY show "$out"

[ "$rc" = 0 ] || ol_fail "serve exited with status $rc on SIGTERM"
if [ "$(f health_n)" = 0 ] || [ "$(f metrics_n)" = 0 ]; then
    ol_fail "serve: no request of each kind answered in the window"
fi
if [ "${BENCH_SHORT:-0}" != 1 ] && [ "$(f errors)" != 0 ]; then
    ol_fail "serve: $(f errors) errors under load"
fi
exit 0
