#!/bin/sh
# SPDX-License-Identifier: MIT
# run-fuzz.sh: the running half of make fuzz (tests/fuzz, docs/reliability.md).
#
#   run-fuzz.sh --check CC        exits 1 with a message unless CC can build
#                                 a libFuzzer program
#   run-fuzz.sh SECONDS SRCDIR OUTDIR TARGET...
#                                 runs each built target (tests/fuzz/fuzz_NAME)
#                                 for SECONDS on a fresh writable copy of
#                                 SRCDIR/tests/fuzz/corpus/NAME in OUTDIR/NAME
#                                 (fuzz_dialect also reads SRCDIR/sql), then
#                                 prints one line per target:
#   fuzz: NAME: EXECS execs, N exec/s, cov N, ft N, corpus N, N crashes
#                                 and writes the same as a Markdown table to
#                                 OUTDIR/fuzz-table.md. Exits 1 when a target
#                                 crashed, leaked, timed out or failed a
#                                 property check (its log and the input that
#                                 did it stay in OUTDIR/NAME).
# FUZZ_JOBS=N in the environment (default 1) runs N targets at a time, each
# still for SECONDS (give each a processor of its own: a target that shares
# one runs fewer inputs); the lines and the table keep the targets' order.
set -u

# check CC: builds a minimal libFuzzer program with CC in a temp dir.
check() {
    cc=$1
    dir=$(mktemp -d "${TMPDIR:-/tmp}/ol-fuzz-check.XXXXXX") || exit 1
    printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
        'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
        'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)' \
        '{ (void)d; (void)n; return 0; }' >"$dir/probe.c"
    ok=1
    if [ -z "$cc" ] || ! $cc -fsanitize=fuzzer,address,undefined \
        -o "$dir/probe" "$dir/probe.c" >"$dir/log" 2>&1; then
        ok=0
        echo "make fuzz: needs clang with libFuzzer (Debian packages clang" \
            "and libclang-rt-14-dev, or FUZZ_CC=another clang);" >&2
        echo "make fuzz: FUZZ_CC='$cc' cannot build a" \
            "-fsanitize=fuzzer,address,undefined program:" >&2
        sed -n '1,10p' "$dir/log" >&2
    fi
    rm -rf "$dir"
    [ $ok -eq 1 ]
}

# final_stat NAME LOG: the value of libFuzzer's final "stat::NAME:" line, or 0.
final_stat() {
    sed -n "s/^stat::$1: *\([0-9][0-9]*\).*/\1/p" "$2" | tail -n 1 |
        grep . || echo 0
}

# status FIELD LOG: the number after "FIELD: " on the last status line
# ("#N DONE cov: C ft: F corp: N/SIZE ..."), or 0.
status() {
    grep -E '^#[0-9]+' "$2" | grep " $1: " | tail -n 1 |
        sed -n "s/.* $1: \([0-9][0-9]*\).*/\1/p" | grep . || echo 0
}

# run NAME BINARY: fuzzes one target; prints its line; returns 1 on a
# finding.
run() {
    name=$1
    bin=$2
    work=$outdir/$name
    rm -rf "$work"
    mkdir -p "$work/corpus" || return 1
    cp "$srcdir/tests/fuzz/corpus/$name/"* "$work/corpus/" || return 1
    chmod -R u+w "$work/corpus"
    extra=""
    [ "$name" = dialect ] && extra=$srcdir/sql
    dict=$srcdir/tests/fuzz/$name.dict
    [ "$name" = redact ] && dict=$srcdir/tests/fuzz/config.dict
    # The outer timeout only guards against a target that hangs outside
    # libFuzzer's own -timeout (per input) and -max_total_time.
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
        timeout $((seconds * 2 + 120)) "$bin" -max_total_time="$seconds" \
        -print_final_stats=1 -timeout=25 -rss_limit_mb=2048 \
        -dict="$dict" -artifact_prefix="$work/" \
        "$work/corpus" $extra >"$work/log" 2>&1
    rc=$?
    log=$work/log
    found=$(find "$work" -maxdepth 1 -type f \( -name 'crash-*' -o \
        -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
    [ $rc -ne 0 ] && [ "$found" -eq 0 ] && found=1
    execs=$(final_stat number_of_executed_units "$log")
    rate=$(final_stat average_exec_per_sec "$log")
    cov=$(status cov "$log")
    ft=$(status ft "$log")
    corp=$(status corp "$log")
    echo "fuzz: $name: $execs execs, $rate exec/s, cov $cov, ft $ft," \
        "corpus $corp, $found crashes"
    echo "| $name | $seconds | $execs | $rate | $cov | $ft | $corp | $found |" \
        >"$outdir/$name.row"
    if [ $rc -ne 0 ]; then
        echo "fuzz: $name: FAILED (exit $rc); the end of $log:"
        tail -n 60 "$log"
        find "$work" -maxdepth 1 -type f ! -name log | sed 's/^/fuzz: input: /'
        return 1
    fi
    return 0
}

if [ "${1:-}" = --check ]; then
    check "${2:-}"
    exit $?
fi
if [ $# -lt 4 ]; then
    echo "usage: $0 SECONDS SRCDIR OUTDIR TARGET..." >&2
    exit 64
fi
seconds=$1
srcdir=$2
outdir=$3
shift 3
mkdir -p "$outdir" || exit 1
{
    echo "| target | seconds | executions | exec/s | cov | ft | corpus | crashes |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
} >"$outdir/fuzz-table.md"
jobs=${FUZZ_JOBS:-1}
case $jobs in
'' | *[!0-9]* | 0) echo "$0: FUZZ_JOBS must be a positive number" >&2 && exit 64 ;;
esac

# lane K: runs targets K, K + jobs, K + 2 jobs... (1-based) one after
# another, each one's output into OUTDIR/NAME.out and its status into
# OUTDIR/NAME.rc.
lane() {
    i=0
    for bin in "$@"; do
        i=$((i + 1))
        [ $(((i - lane_k) % jobs)) -eq 0 ] || continue
        name=${bin##*/fuzz_}
        st=0
        run "$name" "$bin" >"$outdir/$name.out" 2>&1 || st=1
        echo $st >"$outdir/$name.rc"
    done
}

for bin in "$@"; do
    name=${bin##*/fuzz_}
    rm -f "$outdir/$name.out" "$outdir/$name.row" "$outdir/$name.rc"
done
lane_k=1
while [ $lane_k -le "$jobs" ] && [ $lane_k -le $# ]; do
    lane "$@" &
    lane_k=$((lane_k + 1))
done
wait
failed=0
for bin in "$@"; do
    name=${bin##*/fuzz_}
    cat "$outdir/$name.out" 2>/dev/null
    cat "$outdir/$name.row" 2>/dev/null >>"$outdir/fuzz-table.md"
    [ "$(cat "$outdir/$name.rc" 2>/dev/null)" = 0 ] ||
        failed=$((failed + 1))
    rm -f "$outdir/$name.out" "$outdir/$name.row" "$outdir/$name.rc"
done
if [ $failed -ne 0 ]; then
    echo "fuzz: $failed of $# targets FAILED"
    exit 1
fi
echo "fuzz: all $# targets ran ${seconds}s without a finding"
