#!/bin/bash
# SPDX-License-Identifier: MIT
# part-memory.sh: make bench part "memory" (interface: bench/run.sh).
# On SQLite and PostgreSQL:
# - RSS of a host with one instance: bench/bench-tick -1 (one handle,
#   leader), VmRSS and VmHWM from /proc/self/status after connecting,
#   halfway through and after BENCH_MEM_TICKS renew ticks in a tight loop
#   (default 10000; a leak shows as growth in the second half too); and
#   contrib/leader-host (the plugin through dlopen, the example host) once
#   it leads.
# - valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect
#   --error-exitcode=1 over BENCH_MEM_TICKS ticks of bench-tick with two
#   handles (half renews by the leader, half attempts by the follower),
#   from connect to shutdown; the row holds valgrind's error count and its
#   leak summary. Both valgrind runs go in parallel.
# SQLite files live in a temp dir on /dev/shm when it is writable, so the
# runs wait for no disk (memory does not depend on it). Short mode
# (BENCH_SHORT=1, bench/run.sh): 200 ticks, and no valgrind fails the part.
set -eu
. "$srcdir/tests/integration/lib.sh"

[ "${BENCH_SHORT:-0}" = 1 ] && : "${BENCH_MEM_TICKS:=200}"
ticks=${BENCH_MEM_TICKS:-10000}
out=$BENCH_DIR/memory.json
tick=$top_builddir/bench/bench-tick
host=$top_builddir/contrib/leader-host/leader-host
plugin=$top_builddir/plugin/.libs/odbc_leader.so
W=$BENCH_WORK
# A lease that outlives the slowest run: the leader does not renew while
# the follower's half runs (under valgrind, about a minute).
conf="LeaderTTL=1800000"

shm=''
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    shm=$(mktemp -d /dev/shm/odbc-leader-bench.XXXXXX)
fi
trap '[ -n "$shm" ] && rm -rf -- "$shm"' EXIT
sqlite_dir=${shm:-$W}

# Prints field $2 of "memory at=$1 ..." in file $3.
mem() {
    sed -n "s/^memory at=$1 .*$2=\([0-9]*\).*/\1/p" "$3"
}

# RSS rows of dialect $1, config $2.
rss_tick() {
    local f=$W/rss-$1.txt c m r h
    "$tick" -1 -m -n "$ticks" -w 0 "$2;LeaderNamespace=bench-memory;$conf" \
        >"$f" || ol_fail "bench-tick failed on $1"
    c=$(mem created vmrss_kb "$f")
    m=$(mem half-ticks vmrss_kb "$f")
    r=$(mem after-ticks vmrss_kb "$f")
    h=$(mem after-ticks vmhwm_kb "$f")
    $BENCH_PY add "$out" "metric=RSS, host with one instance, after connect" \
        "dialect=$1" "value=$c" unit=KiB target=- \
        "note=bench-tick -1: library, unixODBC and the driver loaded, statements prepared"
    $BENCH_PY add "$out" "metric=RSS, host with one instance, after $ticks ticks" \
        "dialect=$1" "value=$r" unit=KiB target=- \
        "note=VmHWM $h KiB; growth over the first half of the ticks $((m - c)) KiB, over the second half $((r - m)) KiB"
}

# RSS row of contrib/leader-host on dialect $1, config $2, once it leads.
rss_host() {
    local f=$W/host-$1.txt pid i rss="" hwm=""
    "$host" -q -p "$plugin" -n bench "$2;LeaderNamespace=bench-memory-host;$conf" \
        >"$f" 2>&1 &
    pid=$!
    for ((i = 0; i < 100; i++)); do
        grep -q 'leader term=' "$f" && break
        sleep 0.1
    done
    sleep 0.5
    if grep -q 'leader term=' "$f"; then
        rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status")
        hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status")
    fi
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" || true
    [ -n "$rss" ] || ol_fail "leader-host did not lead on $1: $(cat "$f")"
    $BENCH_PY add "$out" "metric=RSS, contrib/leader-host leading" \
        "dialect=$1" "value=$rss" unit=KiB target=- \
        "note=the plugin loaded with dlopen; VmHWM $hwm KiB"
}

# Starts valgrind over the ticks of dialect $1 (config $2) in the
# background; its log goes to $W/valgrind-$1.log, its status to
# $W/valgrind-$1.rc.
valgrind_start() {
    (
        rc=0
        valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect \
            --error-exitcode=1 --log-file="$W/valgrind-$1.log" \
            "$tick" -n $((ticks / 2)) -w 0 \
            "$2;LeaderNamespace=bench-memory-vg;$conf" \
            >"$W/valgrind-$1.out" 2>&1 || rc=$?
        echo "$rc" >"$W/valgrind-$1.rc"
    ) &
}

# Prints the bytes of valgrind's leak line $2 ("definitely lost", ...) in
# log $1, or 0.
leak() {
    local v
    v=$(sed -n "s/.*$2: \([0-9,]*\) bytes.*/\1/p" "$1" | tr -d ,)
    echo "${v:-0}"
}

# The valgrind row of dialect $1.
valgrind_row() {
    local log=$W/valgrind-$1.log rc errors
    rc=$(cat "$W/valgrind-$1.rc")
    errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9,]*\) errors.*/\1/p' "$log" |
        tail -n 1 | tr -d ,)
    if [ "$rc" != 0 ] && [ "${errors:-0}" = 0 ]; then
        cat "$W/valgrind-$1.out" >&2
        ol_fail "bench-tick under valgrind failed on $1 (status $rc)"
    fi
    $BENCH_PY add "$out" "metric=valgrind errors over $ticks ticks" \
        "dialect=$1" "value=${errors:-0}" unit=errors target=0 \
        "note=memcheck, $((ticks / 2)) renews + $((ticks / 2)) attempts, connect to shutdown; definitely lost $(leak "$log" 'definitely lost') B, indirectly lost $(leak "$log" 'indirectly lost') B, possibly lost $(leak "$log" 'possibly lost') B, still reachable $(leak "$log" 'still reachable') B"
    [ "$rc" = 0 ] || ol_log "valgrind found errors on $1: see $log"
}

rm -f "$out"
dialects=''
[ "$BENCH_HAVE_SQLITE" = 1 ] && dialects="$dialects sqlite"
[ "$BENCH_HAVE_PG" = 1 ] && dialects="$dialects postgresql"
[ -n "$dialects" ] || exit 77
vg=0
if command -v valgrind >/dev/null 2>&1; then
    vg=1
else
    [ "${BENCH_SHORT:-0}" = 1 ] && ol_fail "valgrind missing: no leak check"
    ol_log "valgrind missing: no leak check"
fi
for d in $dialects; do
    case $d in
    sqlite) c="Driver=SQLite3;Database=$sqlite_dir/memory-vg.db" ;;
    postgresql) c=$OL_PG_CONNECT ;;
    esac
    [ "$vg" = 1 ] && valgrind_start "$d" "$c"
done
for d in $dialects; do
    case $d in
    sqlite) c="Driver=SQLite3;Database=$sqlite_dir/memory.db" ;;
    postgresql) c=$OL_PG_CONNECT ;;
    esac
    rss_tick "$d" "$c"
    rss_host "$d" "$c"
done
wait
if [ "$vg" = 1 ]; then
    for d in $dialects; do
        valgrind_row "$d"
    done
fi
$BENCH_PY show "$out"
