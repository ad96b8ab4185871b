#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/part-scale.sh: the Scale part of `make bench` (docs/performance.md, section Scale).
#
# Runs bench/bench-scale against one PostgreSQL: 1,000 candidates (100
# namespaces x 10) ticking every second (TTL 5 s, renew 1 s, no follower
# wait) for 60 s after 10 s of warm-up, the same with the follower wait on
# (LeaderFollowerWait=1000, a thread per candidate) for 20 s, then a short
# sweep to larger counts. Writes
# $BENCH_DIR/scale.json (rows: metric, dialect, value, unit, target, note),
# each run's raw result as $BENCH_DIR/scale-LABEL.json (its stderr in
# scale-LABEL.log), and prints the table. Runs standalone as well, from the
# build directory: `bench/part-scale.sh` or `../bench/part-scale.sh`.
#
# Environment (all optional):
#   BENCH_DIR           results directory (default ./bench-results)
#   srcdir, top_builddir  source and build trees (default: this script's
#                       parent directory and the current directory)
#   SCALE_PG_CONNECT    ODBC connection string of a PostgreSQL to use; it must
#                       accept enough connections. Default: a private server
#                       on 127.0.0.1 (tests/integration/lib.sh) with
#                       max_connections raised and pg_stat_statements loaded
#                       (also under make bench: the driver's server keeps
#                       the default max_connections)
#   SCALE_N             candidates of the main run (1000)
#   SCALE_SECONDS       its measured window in seconds (60)
#   SCALE_WORKERS       0: a thread per candidate (default); M: M threads
#   SCALE_SWEEP         short (default: one step, 1500 candidates for 20 s),
#                       full (1500, 2000, ... 20 s each until a step fails,
#                       plus runs with default timing and with a worker
#                       pool), none
#   SCALE_MAX           the full sweep's largest step (8000)
#   SCALE_STEP          its step (500); steps start at SCALE_N + SCALE_STEP
#   SCALE_WARMUP        seconds of warm-up before each window (default 10
#                       for the main, follower-wait and pool runs, 20 for
#                       the sweep's steps and the default-timing run)
#   SCALE_LEG_SECONDS   the window of the follower-wait and pool runs and
#                       of each sweep step (20)
#   BENCH_SHORT         1 (bench/run.sh --short): the smallest runs that
#                       still write every row: SCALE_N=20, SCALE_SECONDS=2,
#                       SCALE_STEP=10, SCALE_WARMUP=2, SCALE_LEG_SECONDS=2,
#                       the short sweep (variables set explicitly still win)
# The default run takes about four minutes; the full sweep 6 to 10 minutes.
set -u

if [ "${BENCH_SHORT:-0}" = 1 ]; then
    : "${SCALE_N:=20}" "${SCALE_SECONDS:=2}" "${SCALE_STEP:=10}"
    : "${SCALE_WARMUP:=2}" "${SCALE_LEG_SECONDS:=2}" "${SCALE_SWEEP:=short}"
fi
here=$(cd "$(dirname "$0")" && pwd)
srcdir=${srcdir:-$(dirname "$here")}
top_builddir=${top_builddir:-$(pwd)}
BENCH_DIR=${BENCH_DIR:-$(pwd)/bench-results}
prog=$top_builddir/bench/bench-scale
report=$srcdir/bench/scale-report.py
n_main=${SCALE_N:-1000}
window=${SCALE_SECONDS:-60}
workers=${SCALE_WORKERS:-0}
sweep=${SCALE_SWEEP:-short}
n_max=${SCALE_MAX:-8000}
step=${SCALE_STEP:-500}
warm=${SCALE_WARMUP:-10}
warm_long=${SCALE_WARMUP:-20}
leg=${SCALE_LEG_SECONDS:-20}
labels=()

# Prints a progress line on stderr.
log() {
    echo "[scale $(date +%H:%M:%S)] $*" >&2
}

# run LABEL ARGS...: one bench-scale run; its JSON goes to
# $BENCH_DIR/scale-LABEL.json, its stderr to scale-LABEL.log. Returns
# bench-scale's status (2 when some handles could not connect).
run() {
    local label=$1 rc=0
    shift
    labels+=("$label")
    log "$label: bench-scale $*"
    "$prog" -c "$conn" -p "bench-scale-$$-$label-" "$@" \
        >"$BENCH_DIR/scale-$label.json" \
        2>"$BENCH_DIR/scale-$label.log" || rc=$?
    [ "$rc" = 0 ] || log "$label: bench-scale exited $rc (see scale-$label.log)"
    log "$label: $(python3 "$report" check "$BENCH_DIR/scale-$label.json")"
    return "$rc"
}

# Succeeds when the library knows LeaderFollowerWait.
have_follower_wait() {
    "$prog" -c "$conn" -n 1 -d 0.1 -s 0 -w 0 -p "bench-scale-$$-probe-" \
        >/dev/null 2>&1
}

# Succeeds when the machine has the memory $1 candidates need, estimated
# from the result file $2 (leaving 2 GB to everything else).
memory_for() {
    local need avail
    need=$(python3 "$report" need "$2" "$1")
    avail=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
    [ $((need + 2097152)) -lt "$avail" ] || {
        log "$1 candidates need ~$((need / 1024)) MB, $((avail / 1024)) MB available: stop"
        return 1
    }
}

# The sweep: from SCALE_N + SCALE_STEP up by SCALE_STEP until a step
# fails (full), or that one step (short).
run_sweep() {
    local n=$((n_main + step)) prev=$BENCH_DIR/scale-main.json
    local last=$((n_main + step))
    [ "$sweep" = full ] && last=$n_max
    python3 "$report" check "$prev" >/dev/null || return 0
    while [ "$n" -le "$last" ]; do
        memory_for "$n" "$prev" || break
        run "sweep-$n" -n "$n" -d "$leg" -s "$warm_long" -T 5000 -r 1000 \
            -W "$workers" -q "${wait0[@]}" || true
        prev=$BENCH_DIR/scale-sweep-$n.json
        python3 "$report" check "$prev" >/dev/null || break
        n=$((n + step))
    done
}

# Starts the private server (lib.sh's EXIT trap stops it and removes its
# directory), sized for the largest run.
start_pg() {
    local most=$n_main
    [ "$sweep" = full ] && [ "$n_max" -gt "$most" ] && most=$n_max
    [ "$sweep" = short ] && most=$((n_main + step))
    # shellcheck source=/dev/null
    . "$srcdir/tests/integration/lib.sh"
    ol_setup
    ol_start_pg "-c max_connections=$((most + 50)) \
-c shared_preload_libraries=pg_stat_statements"
    ol_psql "CREATE EXTENSION pg_stat_statements" >/dev/null ||
        log "pg_stat_statements unavailable: no statement counts"
    conn=$OL_PG_CONNECT
}

main() {
    if [ ! -x "$prog" ]; then
        echo "part-scale: $prog is not built (make bench/bench-scale)" >&2
        exit 1
    fi
    command -v python3 >/dev/null || {
        echo "part-scale: python3 is needed" >&2
        exit 1
    }
    mkdir -p "$BENCH_DIR" || exit 1
    rm -f "$BENCH_DIR"/scale-*.json "$BENCH_DIR"/scale-*.log
    if [ -n "${SCALE_PG_CONNECT:-}" ]; then
        conn=$SCALE_PG_CONNECT
    else
        start_pg
    fi
    wait0=()
    if have_follower_wait; then
        wait0=(-w 0)
    else
        log "this build has no LeaderFollowerWait: runs without the key"
    fi
    # Ticks every second: TTL 5 s, renew 1 s (margin 1 s).
    run main -n "$n_main" -d "$window" -s "$warm" -T 5000 -r 1000 \
        -W "$workers" "${wait0[@]}"
    if [ "${#wait0[@]}" -gt 0 ]; then
        run wait -n "$n_main" -d "$leg" -s "$warm" -T 5000 -r 1000 -W 0 \
            -w 1000 -q
    fi
    if [ "$sweep" = full ]; then
        run defaults -n "$n_main" -d "$window" -s "$warm_long" -T 15000 \
            -r 5000 -W "$workers" "${wait0[@]}"
        run pool16 -n "$n_main" -d "$leg" -s "$warm" -T 5000 -r 1000 -W 16 \
            -q "${wait0[@]}"
    fi
    if [ "$sweep" != none ]; then
        run_sweep
    fi
    python3 "$report" rows "$BENCH_DIR" "$sweep" "${labels[@]}"
}

main "$@"
