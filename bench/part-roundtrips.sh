#!/bin/bash
# SPDX-License-Identifier: MIT
# part-roundtrips.sh: make bench part "roundtrips" (interface: bench/run.sh).
# Counts, on the database side, what one tick costs in steady state: a
# leader's renew and a follower's attempt, each over BENCH_RT_TICKS ticks
# (default 500) of bench/bench-tick, whose hooks read the counters right
# before and after the timed ticks (connect and shutdown excluded).
#   PostgreSQL: pg_stat_statements calls in database "leader" (reset before,
#     read after; psql runs in database "postgres", so it is not counted).
#   MariaDB: SHOW GLOBAL STATUS deltas on the otherwise idle server:
#     Questions (statements sent by clients; statements run inside a
#     compound statement are not counted) and Com_stmt_execute; the cost of
#     the SHOW itself is measured by a back-to-back pair and subtracted.
#   SQLite: SQLite's own statement trace (sqliteodbc's Tracefile option,
#     its sqlite3_trace log): BEGIN IMMEDIATE lines are transactions, each
#     "-- took" line one statement run (BEGIN and COMMIT included).
# Targets: 1 statement per tick on PostgreSQL and MariaDB, 1 transaction
# on SQLite. Short mode (BENCH_SHORT=1, bench/run.sh): 20 ticks.
set -eu
. "$srcdir/tests/integration/lib.sh"

[ "${BENCH_SHORT:-0}" = 1 ] && : "${BENCH_RT_TICKS:=20}"
ticks=${BENCH_RT_TICKS:-500}
out=$BENCH_DIR/roundtrips.json
tick=$top_builddir/bench/bench-tick
self=$srcdir/bench/part-roundtrips.sh

# ---- hooks: run by bench-tick through system() as "part-roundtrips.sh
# --hook DIALECT EVENT"; they write into $BENCH_WORK.

# PostgreSQL: reset before, dump the statements run in "leader" after;
# the WAL position at each event (pg-wal-EVENT.txt: the WAL the timed
# ticks wrote is the difference, bench_pg_wal).
hook_postgresql() {
    case $1 in
    before-*) ol_psql "SELECT pg_stat_statements_reset()" postgres >/dev/null ;;
    after-*)
        ol_psql "SELECT s.calls, regexp_replace(left(s.query, 70), '\s+', ' ', 'g')
                 FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
                 WHERE d.datname = '$OL_PG_DB' ORDER BY s.calls DESC" postgres \
            >"$BENCH_WORK/pg-$1.txt"
        ;;
    esac
    ol_psql "SELECT pg_current_wal_lsn()" postgres >"$BENCH_WORK/pg-wal-$1.txt"
}

# MariaDB: a snapshot of the counters at each event.
hook_mariadb() {
    ol_mariadb "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions',
        'Com_stmt_execute', 'Com_stmt_prepare', 'Com_stmt_close',
        'Com_begin', 'Com_commit', 'Com_select', 'Com_insert', 'Com_update',
        'Com_delete', 'Com_set_option')" mysql >"$BENCH_WORK/my-$1.txt"
}

# SQLite: a marker in the trace (the driver flushes it after each
# statement, and appends).
hook_sqlite() {
    echo "-- @bench $1" >>"$BENCH_WORK/sqlite-trace.log"
}

if [ "${1:-}" = --hook ]; then
    "hook_$2" "$3"
    exit $?
fi

# Runs bench-tick on config $2 with dialect $1's hook; its summary goes to
# $BENCH_WORK/$1-tick.txt.
run_ticks() {
    local hook
    hook="bash $(printf '%q' "$self") --hook $1"
    "$tick" -n "$ticks" -w 20 -H "$hook" \
        "$2;LeaderNamespace=bench-roundtrips;LeaderTTL=60000" \
        >"$BENCH_WORK/$1-tick.txt" ||
        ol_fail "bench-tick failed on $1 (see above)"
}

# Adds the row of dialect $1, role $2 (renew|attempt): value $3, unit $4,
# target $5, note $6.
add_row() {
    local what="leader renew"
    [ "$2" = attempt ] && what="follower attempt"
    $BENCH_PY add "$out" "metric=round trips per tick, $what" "dialect=$1" \
        "value=$3" "unit=$4" "target=$5" "note=$6"
}

measure_postgresql() {
    local role total top
    run_ticks postgresql "$OL_PG_CONNECT"
    for role in renew attempt; do
        total=$(awk -F'|' '{ s += $1 } END { print s + 0 }' \
            "$BENCH_WORK/pg-after-$role.txt")
        top=$(head -n 1 "$BENCH_WORK/pg-after-$role.txt" | cut -d'|' -f2 | cut -c1-40)
        add_row postgresql "$role" \
            "$(awk -v t="$total" -v n="$ticks" 'BEGIN { printf "%.3f", t / n }')" \
            statements/tick 1 \
            "pg_stat_statements: $total calls in $ticks ticks, $(wc -l <"$BENCH_WORK/pg-after-$role.txt") distinct ($top...)"
    done
}

# Prints counter $2 of MariaDB snapshot file $1.
my_counter() {
    awk -v k="$2" '$1 == k { print $2 }' "$1"
}

# Prints (after - before - calibration) / ticks for counter $2, role $1.
my_per_tick() {
    local b a cb ca
    b=$(my_counter "$BENCH_WORK/my-before-$1.txt" "$2")
    a=$(my_counter "$BENCH_WORK/my-after-$1.txt" "$2")
    cb=$(my_counter "$BENCH_WORK/my-before-calib.txt" "$2")
    ca=$(my_counter "$BENCH_WORK/my-after-calib.txt" "$2")
    awk -v a="$a" -v b="$b" -v ca="$ca" -v cb="$cb" -v n="$ticks" \
        'BEGIN { printf "%.3f", (a - b - (ca - cb)) / n }'
}

measure_mariadb() {
    local role q e
    hook_mariadb before-calib
    hook_mariadb after-calib
    run_ticks mariadb "$OL_MARIADB_CONNECT"
    for role in renew attempt; do
        q=$(my_per_tick "$role" Questions)
        e=$(my_per_tick "$role" Com_stmt_execute)
        add_row mariadb "$role" "$q" statements/tick 1 \
            "SHOW GLOBAL STATUS deltas per tick: Questions $q, Com_stmt_execute $e, Com_stmt_prepare $(my_per_tick "$role" Com_stmt_prepare), Com_commit $(my_per_tick "$role" Com_commit) (inside the block)"
    done
}

# Prints the lines of the SQLite trace between the markers of role $1.
sqlite_slice() {
    sed -n "/^-- @bench before-$1\$/,/^-- @bench after-$1\$/p" \
        "$BENCH_WORK/sqlite-trace.log"
}

measure_sqlite() {
    local role tx stmts commits
    run_ticks sqlite "Driver=SQLite3;Database=$BENCH_WORK/rt.db;Tracefile=$BENCH_WORK/sqlite-trace.log"
    for role in renew attempt; do
        tx=$(sqlite_slice "$role" | grep -c '^BEGIN IMMEDIATE;$' || true)
        commits=$(sqlite_slice "$role" | grep -c '^COMMIT;$' || true)
        stmts=$(sqlite_slice "$role" | grep -c '^-- took ' || true)
        add_row sqlite "$role" \
            "$(awk -v t="$tx" -v n="$ticks" 'BEGIN { printf "%.3f", t / n }')" \
            transactions/tick 1 \
            "SQLite trace: $tx BEGIN IMMEDIATE, $commits COMMIT, $(awk -v s="$stmts" -v n="$ticks" 'BEGIN { printf "%.2f", s / n }') statements/tick incl. BEGIN and COMMIT"
    done
}

rm -f "$out"
[ "$BENCH_HAVE_PG" = 1 ] && measure_postgresql
[ "$BENCH_HAVE_MARIADB" = 1 ] && measure_mariadb
[ "$BENCH_HAVE_SQLITE" = 1 ] && measure_sqlite
[ -s "$out" ] || exit 77
$BENCH_PY show "$out"
