#!/bin/bash
# SPDX-License-Identifier: MIT
# part-claims.sh: make bench part "claims" (interface: bench/run.sh).
# Prices odbc_leader_claim() on each database: the latency of a new claim
# (one insert, fenced by the term) and of a claim of a fire already claimed
# (the unique violation), median and p99 over BENCH_CLAIMS calls (default
# 1000) of bench/bench-claim; and what one claim sends, counted on the
# database side around exactly the timed calls with the hooks of
# part-roundtrips.sh (PostgreSQL pg_stat_statements calls, MariaDB
# Questions, SQLite's statement trace).
# Targets: 1 statement per claim. Short mode (BENCH_SHORT=1,
# bench/run.sh): 20 calls.
set -eu
. "$srcdir/tests/integration/lib.sh"

[ "${BENCH_SHORT:-0}" = 1 ] && : "${BENCH_CLAIMS:=20}"
n=${BENCH_CLAIMS:-1000}
out=$BENCH_DIR/claims.json
claim=$top_builddir/bench/bench-claim
rt=$srcdir/bench/part-roundtrips.sh

# Runs bench-claim on dialect $1, config $2; its lines go to
# $BENCH_WORK/$1-claims.txt.
run_claims() {
    local hook
    hook="bash $(printf '%q' "$rt") --hook $1"
    "$claim" -n "$n" -H "$hook" \
        "$2;LeaderNamespace=bench-claims-$$;LeaderTTL=60000" \
        >"$BENCH_WORK/$1-claims.txt" ||
        ol_fail "bench-claim failed on $1 (see above)"
}

# Prints field $3 (median_us, p99_us) of role $2 from dialect $1's run.
field() {
    awk -v r="role=$2" -v k="$3" '$1 == r {
        for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' \
        "$BENCH_WORK/$1-claims.txt"
}

# Adds the latency rows and the round-trip row ($2 per claim, $3 note) of
# dialect $1.
add_rows() {
    local role what
    for role in claim claimed scheduled; do
        what="new fire"
        [ "$role" = claimed ] && what="fire already claimed"
        [ "$role" = scheduled ] && what="new fire of a job with a schedule identity"
        $BENCH_PY add "$out" "metric=claim latency, $what" "dialect=$1" \
            "value=$(field "$1" "$role" median_us)" unit=us "target=" \
            "note=median of $n calls; p99 $(field "$1" "$role" p99_us) us"
    done
    $BENCH_PY add "$out" "metric=round trips per claim" "dialect=$1" \
        "value=$2" unit=statements/claim target=1 "note=$3"
    $BENCH_PY add "$out" "metric=round trips per claim with a schedule identity" \
        "dialect=$1" "value=$4" unit=statements/claim target=2 \
        "note=the identity's read, then the claim (docs/schedules.md)"
}

# Per-claim count of role $1 from pg_stat_statements.
pg_per_claim() {
    awk -F'|' -v n="$n" '{ s += $1 } END { printf "%.3f", s / n }' \
        "$BENCH_WORK/pg-after-$1.txt"
}

# Prints counter $2 of MariaDB snapshot file $1.
my_counter() {
    awk -v k="$2" '$1 == k { print $2 }' "$1"
}

# Questions per claim of role $1, less the SHOW's own (calibration).
my_per_claim() {
    local b a cb ca
    b=$(my_counter "$BENCH_WORK/my-before-$1.txt" Questions)
    a=$(my_counter "$BENCH_WORK/my-after-$1.txt" Questions)
    cb=$(my_counter "$BENCH_WORK/my-before-calib.txt" Questions)
    ca=$(my_counter "$BENCH_WORK/my-after-calib.txt" Questions)
    awk -v a="$a" -v b="$b" -v ca="$ca" -v cb="$cb" -v n="$n" \
        'BEGIN { printf "%.3f", (a - b - (ca - cb)) / n }'
}

measure_postgresql() {
    run_claims postgresql "$OL_PG_CONNECT"
    add_rows postgresql "$(pg_per_claim claim)" \
        "pg_stat_statements calls per claim: new $(pg_per_claim claim), already claimed $(pg_per_claim claimed)" \
        "$(pg_per_claim scheduled)"
}

measure_mariadb() {
    bash "$rt" --hook mariadb before-calib
    bash "$rt" --hook mariadb after-calib
    run_claims mariadb "$OL_MARIADB_CONNECT"
    add_rows mariadb "$(my_per_claim claim)" \
        "Questions per claim: new $(my_per_claim claim), already claimed $(my_per_claim claimed)" \
        "$(my_per_claim scheduled)"
}

measure_sqlite() {
    local role s new old sched
    run_claims sqlite "Driver=SQLite3;Database=$BENCH_WORK/claims.db;Tracefile=$BENCH_WORK/sqlite-trace.log"
    for role in claim claimed scheduled; do
        s=$(sed -n "/^-- @bench before-$role\$/,/^-- @bench after-$role\$/p" \
            "$BENCH_WORK/sqlite-trace.log" | grep -c '^-- took ' || true)
        s=$(awk -v s="$s" -v n="$n" 'BEGIN { printf "%.3f", s / n }')
        case $role in
        claim) new=$s ;;
        claimed) old=$s ;;
        *) sched=$s ;;
        esac
    done
    add_rows sqlite "$new" \
        "SQLite trace, statements per claim: new $new, already claimed $old (a failed statement may not be traced)" \
        "$sched"
}

rm -f "$out"
[ "$BENCH_HAVE_PG" = 1 ] && measure_postgresql
[ "$BENCH_HAVE_MARIADB" = 1 ] && measure_mariadb
[ "$BENCH_HAVE_SQLITE" = 1 ] && measure_sqlite
[ -s "$out" ] || exit 77
$BENCH_PY show "$out"
