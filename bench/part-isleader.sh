#!/bin/bash
# SPDX-License-Identifier: MIT
# part-isleader.sh: make bench part "isleader" (interface: bench/run.sh).
# The cost of odbc_leader_is_leader() with 1, 2, 4 and 8 threads calling it
# at once on one leader handle (bench/bench-isleader, BENCH_ISL_MS per
# thread count, default 1000). The figure is CPU nanoseconds per call (the
# threads' CPU time over their calls), which does not depend on how many
# threads share a core; the note gives the elapsed time per call and the
# total rate, which do. Target: 50 ns or less. A reference row gives the
# cost of the clock read alone (clock_gettime(CLOCK_BOOTTIME), same loop).
# Also checks, in the machine code of libodbcleader.so (objdump), that the
# call's path (odbc_leader_is_leader, odbc_leader__elector_is_leader and
# the default clock odbc_leader__now_ns) holds no lock-prefixed or xchg
# instruction and calls nothing but clock_gettime: no lock, no syscall
# besides the clock (a vDSO call on Linux). Short mode (BENCH_SHORT=1,
# bench/run.sh): 50 ms per thread count, and a lock check that cannot run
# fails the part.
set -eu
. "$srcdir/tests/integration/lib.sh"

[ "${BENCH_SHORT:-0}" = 1 ] && : "${BENCH_ISL_MS:=50}"
out=$BENCH_DIR/isleader.json
ms=${BENCH_ISL_MS:-1000}
lib=$top_builddir/.libs/libodbcleader.so
cores=$(nproc)

if [ "$BENCH_HAVE_SQLITE" = 1 ]; then
    conn="Driver=SQLite3;Database=$BENCH_WORK/isleader.db"
elif [ "$BENCH_HAVE_PG" = 1 ]; then
    conn=$OL_PG_CONNECT
else
    exit 77
fi
# A lease far longer than the run, so the handle leads throughout.
"$top_builddir/bench/bench-isleader" -d "$ms" -t 1,2,4,8 \
    "$conn;LeaderNamespace=bench-isleader;LeaderTTL=600000" \
    >"$BENCH_WORK/isleader.txt" || ol_fail "bench-isleader failed"

# Prints field $1 of the bench-isleader line in $line.
val() {
    echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

rm -f "$out"
while read -r line; do
    if [ -n "$(val baseline)" ]; then
        $BENCH_PY add "$out" "metric=reference: clock_gettime(CLOCK_BOOTTIME), 1 thread" \
            dialect=- "value=$(val cpu_ns_per_call)" unit=ns/call-cpu target=- \
            "note=the clock is_leader() reads; the same loop"
        continue
    fi
    $BENCH_PY add "$out" "metric=is_leader() cost, $(val threads) threads" \
        dialect=- "value=$(val cpu_ns_per_call)" unit=ns/call-cpu \
        "target=<= 50" \
        "note=$cores cores; elapsed $(val wall_ns_per_call) ns/call per thread; $(val mcalls_per_s) M calls/s in all; $(val calls) calls, $(val not_leader) answered not leader"
done <"$BENCH_WORK/isleader.txt"

# Prints the disassembly of function $1 of the library.
disasm() {
    objdump -d --no-show-raw-insn --disassemble="$1" "$lib" 2>/dev/null |
        sed -n "/<$1>:/,/^\$/p"
}

if command -v objdump >/dev/null 2>&1 && [ -f "$lib" ]; then
    path=''
    for f in odbc_leader_is_leader odbc_leader__elector_is_leader \
        odbc_leader__now_ns; do
        path="$path$(disasm "$f")"$'\n'
    done
    if [ "$(echo "$path" | grep -c '>:$')" = 3 ]; then
        locks=$(echo "$path" | grep -cE $'\t(lock|xchg)' || true)
        calls=$(echo "$path" | grep -oE 'call +[^ ]+( <[^>]+>)?' |
            sed 's/.*<\(.*\)>/\1/; s/call *//' | sort -u | tr '\n' ' ')
        $BENCH_PY add "$out" "metric=is_leader() locks in its code path" \
            dialect=- "value=$locks" unit=instructions target=0 \
            "note=objdump of odbc_leader_is_leader, elector_is_leader, now_ns: $locks lock/xchg instructions; calls: ${calls% }"
    else
        [ "${BENCH_SHORT:-0}" = 1 ] && ol_fail "symbols not found in $lib"
        ol_log "symbols not found in $lib (stripped?): lock check skipped"
    fi
elif [ "${BENCH_SHORT:-0}" = 1 ]; then
    ol_fail "objdump or $lib missing: no lock check"
fi
$BENCH_PY show "$out"
