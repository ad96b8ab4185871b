#!/bin/bash
# SPDX-License-Identifier: MIT
# part-latency.sh: make bench part "latency" (interface: bench/run.sh).
# Tick latency (median, p99) of a leader's renew and a follower's attempt,
# per dialect, next to the same SQL run by the database's own client in the
# same run, against the same server and tables:
#   ours        bench/bench-tick: odbc_leader_tick() through ODBC, timed
#               tick by tick (the tick is synchronous: its duration is the
#               statement's round trip plus driver and library time)
#   PostgreSQL  pgbench -M prepared with a script of the dialect's
#               statement (:ns etc. as pgbench variables; the row is
#               fetched with \gset, as the library fetches it, and a \set
#               after it makes pgbench read the clock again: see
#               bench/bench-dialect.c); per-transaction latencies from
#               pgbench's log (-l), none of which may be 0
#   MariaDB     bench/raw-mariadb: Connector/C, server-side prepared
#               statement, after running the dialect's on_connect like
#               the library
#   SQLite      bench/raw-sqlite: the SQLite C API, the dialect's BEGIN
#               IMMEDIATE transaction, each statement prepared once, after
#               the PRAGMAs sqliteodbc runs at connect (read from its
#               trace, so the durability settings match)
#   ODBC only   bench/raw-odbc: the same statements through the same ODBC
#               driver, prepared and bound as the library does, without the
#               library: ours/ODBC-only is the library's own cost, and
#               ODBC-only/raw the driver's
# The raw clients' SQL is printed by bench/bench-dialect: the library's own
# expansion of the built-in dialect (placeholders, defines, prefix and the
# statement timeout of the same Leader* keys as ours), so it cannot fall
# behind the dialect files; a parameter the raw clients are not given a
# value for stops the part.
# The raw clients use a namespace of their own whose lease they hold (the
# renew must find its term; it is checked that every execution returns its
# row). Ours, raw and ODBC-only alternate for BENCH_LAT_ROUNDS rounds
# (default 4, so a burst of load elsewhere hits all of them alike) of
# BENCH_LAT_TICKS timed ticks each (default 500; SQLite, whose commits wait
# for the disk, BENCH_LAT_SQLITE_TICKS, default 100), after 50 untimed
# ones. On MariaDB and SQLite both sides pause 1 ms after each
# timed execution (untimed): the clock in the SQL counts milliseconds, and
# a second execution within the same millisecond writes identical values,
# which InnoDB and SQLite skip (no redo, no journal, no fsync), so an
# unpaced loop would time cheaper work than a real tick does. PostgreSQL
# writes a new row version anyway; there both sides run back to back, as
# pgbench does. Reports ours/raw of the medians and p99s; the target is at
# most 1.25 on PostgreSQL. Short mode (BENCH_SHORT=1, bench/run.sh): one
# round of 20 ticks (SQLite 10), and a raw client that is not built fails
# the part instead of leaving its database out.
set -eu
. "$srcdir/tests/integration/lib.sh"

if [ "${BENCH_SHORT:-0}" = 1 ]; then
    : "${BENCH_LAT_ROUNDS:=1}" "${BENCH_LAT_TICKS:=20}"
    : "${BENCH_LAT_SQLITE_TICKS:=10}"
fi
rounds=${BENCH_LAT_ROUNDS:-4}
out=$BENCH_DIR/latency.json
tick=$top_builddir/bench/bench-tick
raw_ns=bench-latency-raw
ttl=60000
keys="LeaderNamespace=bench-latency;LeaderTTL=$ttl" # ours, and the SQL's
pause=1000 # us between timed executions on MariaDB and SQLite
W=$BENCH_WORK

# Prints operation $3 of dialect $1 as the library expands it for config
# $2 (plus $keys; in the environment: it may hold a password), in the
# statement-file format of bench/raw.h, or with $4 = pgbench as a pgbench
# script (\gset $5 on its row).
render() {
    BENCH_DIALECT_CONNECT="$2;$keys" "$top_builddir/bench/bench-dialect" \
        -d "$1" ${4:+-s "$4"} ${5:+-g "$5"} - "$3" ||
        ol_fail "bench-dialect failed on $1 $3"
}

# The parameter values of the raw clients' statements: their own
# namespace, candidate $1, the raw leader's term (from $W/raw-term), and
# no watched row (a follower's attempt does not take a held lease).
values() {
    echo "ns=$raw_ns id=$1 term=$(cat "$W/raw-term") ttl_ms=$ttl" \
        "cand_ttl_ms=$ttl seen_term=0 seen_expires_ms=0"
}

# Runs our ticks on config $2 for dialect $1, $3 ticks, pausing $4 us
# after each.
ours() {
    "$tick" -n "$3" -w 50 -p "$4" -o "$W/$1-ours" "$2;$keys" >/dev/null ||
        ol_fail "bench-tick failed on $1"
}

# Creates the tables through the library (config $2, dialect $1), so the
# raw clients find them.
make_tables() {
    "$tick" -n 1 -w 0 -1 "$2;LeaderNamespace=bench-latency-setup" \
        >/dev/null || ol_fail "bench-tick failed on $1"
}

# Fails unless raw run output $2 ($1: what) shows one row per execution.
check_rows() {
    local n rows
    n=$(sed -n 's/.*executions=\([0-9]*\).*/\1/p' "$2")
    rows=$(sed -n 's/.* rows=\([0-9]*\).*/\1/p' "$2")
    [ -n "$n" ] && [ "$n" = "$rows" ] ||
        ol_fail "$1: $rows rows in $n executions (expected one each)"
}

# Runs raw-odbc for dialect $1 (connection string $2, may hold a password:
# passed in the environment) on statement file $3, $4 executions (after 50
# more when $4 > 1) as candidate $5, pausing $6 us, appending to $7; setup
# file $8 (optional).
odbc_run() {
    local w=50
    [ "$4" = 1 ] && w=0
    # shellcheck disable=SC2046 # values: NAME=VALUE words, split on purpose
    RAW_ODBC_CONNECT=$2 "$top_builddir/bench/raw-odbc" -n "$4" -w "$w" \
        -p "$6" -o "$7" ${8:+-s "$8"} "$3" $(values "$5") >"$W/raw.out" ||
        ol_fail "raw-odbc failed on $1"
    check_rows "raw-odbc on $1" "$W/raw.out"
}

# ---- PostgreSQL ----------------------------------------------------------

# Runs pgbench with script $1 for $2 transactions as candidate $3; appends
# the latencies (us) after the first 50 to $4.
pgbench_run() {
    local t=$1 n=$2 id=$3 dest=$4 term
    term=$(ol_psql "SELECT COALESCE(MAX(term), 0) FROM odbc_leader_lease
                    WHERE namespace = '$raw_ns' AND leader_id = 'raw-leader'")
    echo "$term" >"$W/raw-term"
    rm -f "$W"/pgbench-log.*
    # shellcheck disable=SC2046 # values: NAME=VALUE words, split on purpose
    "$OL_PG_BIN/pgbench" -n -M prepared -c 1 -j 1 -t $((n + 50)) -f "$t" \
        -l --log-prefix="$W/pgbench-log" -h 127.0.0.1 -p "$OL_PG_PORT" \
        -U "$OL_PG_USER" $(values "$id" | sed 's/[^ ]*/-D &/g') "$OL_PG_DB" \
        >"$W/pgbench.out" 2>&1 || {
        cat "$W/pgbench.out" >&2
        ol_fail "pgbench failed"
    }
    grep -q "number of failed transactions: 0 " "$W/pgbench.out" ||
        grep -q "number of transactions actually processed: $((n + 50))/" \
            "$W/pgbench.out" || ol_fail "pgbench: transactions failed"
    cat "$W"/pgbench-log.* | awk 'NR > 50 { print $3 }' >"$W/pgbench.times"
    # A round trip never takes 0 us: pgbench logs that when it did not read
    # the clock again after the result (bench-dialect's pgbench script ends
    # with a meta-command so that it does, even when it was descheduled)
    ! grep -qx '0' "$W/pgbench.times" ||
        ol_fail "pgbench logged $(grep -cx '0' "$W/pgbench.times") of" \
            "$n transactions as taking 0 us"
    cat "$W/pgbench.times" >>"$dest"
}

measure_postgresql() {
    local n=${BENCH_LAT_TICKS:-500} r
    render postgresql "$OL_PG_CONNECT" renew pgbench r_ >"$W/pg-renew.pgb"
    render postgresql "$OL_PG_CONNECT" attempt pgbench r_ >"$W/pg-attempt.pgb"
    render postgresql "$OL_PG_CONNECT" renew >"$W/pg-renew.q"
    render postgresql "$OL_PG_CONNECT" attempt >"$W/pg-attempt.q"
    make_tables postgresql "$OL_PG_CONNECT"
    # The raw leader takes its namespace's lease once (a first attempt).
    pgbench_run "$W/pg-attempt.pgb" 1 raw-leader /dev/null
    for ((r = 1; r <= rounds; r++)); do
        ours postgresql "$OL_PG_CONNECT" "$n" 0
        pgbench_run "$W/pg-renew.pgb" "$n" raw-leader "$W/postgresql-raw.renew"
        pgbench_run "$W/pg-attempt.pgb" "$n" raw-follower \
            "$W/postgresql-raw.attempt"
        odbc_run postgresql "$OL_PG_CONNECT" "$W/pg-renew.q" "$n" raw-leader \
            0 "$W/postgresql-odbc.renew"
        odbc_run postgresql "$OL_PG_CONNECT" "$W/pg-attempt.q" "$n" \
            raw-follower 0 "$W/postgresql-odbc.attempt"
    done
    report postgresql "pgbench -M prepared" "<= 1.25"
}

# ---- MariaDB -------------------------------------------------------------

# Runs raw-mariadb on statement $1, $2 executions (after 50 more when $2 >
# 1) as candidate $3, appending the latencies to $4.
mariadb_run() {
    local term w=50
    [ "$2" = 1 ] && w=0
    term=$(ol_mariadb "SELECT COALESCE(MAX(term), 0) FROM odbc_leader_lease
                       WHERE namespace = '$raw_ns' AND leader_id = 'raw-leader'")
    echo "$term" >"$W/raw-term"
    # shellcheck disable=SC2046 # values: NAME=VALUE words, split on purpose
    RAW_MARIADB_PASSWORD=$OL_MARIADB_PASSWORD \
        "$top_builddir/bench/raw-mariadb" -n "$2" -w "$w" -p "$pause" -o "$4" \
        -s "$W/my-on_connect.sql" -h 127.0.0.1 -P "$OL_MARIADB_PORT" \
        -u "$OL_MARIADB_USER" -D "$OL_MARIADB_DB" "$1" $(values "$3") \
        >"$W/raw.out" || ol_fail "raw-mariadb failed"
    check_rows raw-mariadb "$W/raw.out"
}

measure_mariadb() {
    local n=${BENCH_LAT_TICKS:-500} r
    if [ ! -x "$top_builddir/bench/raw-mariadb" ]; then
        [ "${BENCH_SHORT:-0}" = 1 ] && ol_fail "bench/raw-mariadb not built"
        ol_log "bench/raw-mariadb not built (libmariadb-dev missing): no MariaDB latency"
        return 0
    fi
    render mariadb "$OL_MARIADB_CONNECT" on_connect >"$W/my-on_connect.sql"
    render mariadb "$OL_MARIADB_CONNECT" renew >"$W/my-renew.sql"
    render mariadb "$OL_MARIADB_CONNECT" attempt >"$W/my-attempt.sql"
    make_tables mariadb "$OL_MARIADB_CONNECT"
    mariadb_run "$W/my-attempt.sql" 1 raw-leader /dev/null
    for ((r = 1; r <= rounds; r++)); do
        ours mariadb "$OL_MARIADB_CONNECT" "$n" "$pause"
        mariadb_run "$W/my-renew.sql" "$n" raw-leader "$W/mariadb-raw.renew"
        mariadb_run "$W/my-attempt.sql" "$n" raw-follower \
            "$W/mariadb-raw.attempt"
        odbc_run mariadb "$OL_MARIADB_CONNECT" "$W/my-renew.sql" "$n" \
            raw-leader "$pause" "$W/mariadb-odbc.renew" "$W/my-on_connect.sql"
        odbc_run mariadb "$OL_MARIADB_CONNECT" "$W/my-attempt.sql" "$n" \
            raw-follower "$pause" "$W/mariadb-odbc.attempt" \
            "$W/my-on_connect.sql"
    done
    report mariadb "Connector/C prepared" "-"
}

# ---- SQLite --------------------------------------------------------------

# Runs raw-sqlite like mariadb_run.
sqlite_run() {
    local term w=50 args=()
    [ "$2" = 1 ] && w=0
    term=$(python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("SELECT COALESCE(MAX(term), 0) FROM odbc_leader_lease "
                "WHERE namespace = ? AND leader_id = ?",
                (sys.argv[2], "raw-leader")).fetchone()[0])' "$W/lat.db" "$raw_ns")
    echo "$term" >"$W/raw-term"
    while IFS= read -r line; do
        args+=(-s "$line")
    done <"$W/sqlite-pragmas.txt"
    # shellcheck disable=SC2046 # values: NAME=VALUE words, split on purpose
    "$top_builddir/bench/raw-sqlite" -n "$2" -w "$w" -p "$pause" -o "$4" \
        "${args[@]}" "$W/lat.db" "$1" $(values "$3") >"$W/raw.out" ||
        ol_fail "raw-sqlite failed"
    check_rows raw-sqlite "$W/raw.out"
}

measure_sqlite() {
    local n=${BENCH_LAT_SQLITE_TICKS:-100} r conn
    if [ ! -x "$top_builddir/bench/raw-sqlite" ]; then
        [ "${BENCH_SHORT:-0}" = 1 ] && ol_fail "bench/raw-sqlite not built"
        ol_log "bench/raw-sqlite not built (libsqlite3-dev missing): no SQLite latency"
        return 0
    fi
    conn="Driver=SQLite3;Database=$W/lat.db"
    # One traced tick shows the PRAGMAs the driver runs at connect.
    "$tick" -n 1 -w 0 -1 "$conn;Tracefile=$W/sqlite-trace.log;LeaderNamespace=bench-latency-trace" \
        >/dev/null || ol_fail "bench-tick failed on sqlite"
    grep '^PRAGMA ' "$W/sqlite-trace.log" | sed 's/;$//' | sort -u \
        >"$W/sqlite-pragmas.txt"
    render sqlite "$conn" renew >"$W/sq-renew.q"
    render sqlite "$conn" attempt >"$W/sq-attempt.q"
    render sqlite "$conn" on_connect >"$W/sq-on_connect.q"
    sqlite_run "$W/sq-attempt.q" 1 raw-leader /dev/null
    for ((r = 1; r <= rounds; r++)); do
        ours sqlite "$conn" "$n" "$pause"
        sqlite_run "$W/sq-renew.q" "$n" raw-leader "$W/sqlite-raw.renew"
        sqlite_run "$W/sq-attempt.q" "$n" raw-follower "$W/sqlite-raw.attempt"
        odbc_run sqlite "$conn" "$W/sq-renew.q" "$n" raw-leader "$pause" \
            "$W/sqlite-odbc.renew" "$W/sq-on_connect.q"
        odbc_run sqlite "$conn" "$W/sq-attempt.q" "$n" raw-follower "$pause" \
            "$W/sqlite-odbc.attempt" "$W/sq-on_connect.q"
    done
    report sqlite "SQLite C API" "-"
}

# ---- results ---------------------------------------------------------------

# Prints field $2 (median, p99, n) of "benchlib.py stats" line $1.
field() {
    echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# Prints $1 / $2 with two decimals; fails naming the figure ($3) when $2
# is not a positive number (no ratio can be given).
ratio_of() {
    awk -v a="$1" -v b="$2" 'BEGIN { exit !(b + 0 > 0) }' ||
        ol_fail "latency: $3 is '$2' us: no ratio against it"
    awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'
}

# Adds the rows of dialect $1, baseline named $2, ratio target $3.
report() {
    local role what s_ours s_raw s_odbc ratio p99r oratio
    for role in renew attempt; do
        what="leader renew"
        [ "$role" = attempt ] && what="follower attempt"
        s_ours=$($BENCH_PY stats "$W/$1-ours.$role")
        s_raw=$($BENCH_PY stats "$W/$1-raw.$role")
        s_odbc=$($BENCH_PY stats "$W/$1-odbc.$role")
        oratio=$(ratio_of "$(field "$s_ours" median)" \
            "$(field "$s_odbc" median)" "the ODBC-only $role median on $1")
        ratio=$(ratio_of "$(field "$s_ours" median)" \
            "$(field "$s_raw" median)" "the raw client's $role median on $1")
        p99r=$(ratio_of "$(field "$s_ours" p99)" "$(field "$s_raw" p99)" \
            "the raw client's $role p99 on $1")
        $BENCH_PY add "$out" "metric=tick latency, $what" "dialect=$1" \
            "value=$(field "$s_ours" median)" unit=us-median target=- \
            "note=p99 $(field "$s_ours" p99) us; $(field "$s_ours" n) ticks"
        $BENCH_PY add "$out" "metric=raw client latency, $what" "dialect=$1" \
            "value=$(field "$s_raw" median)" unit=us-median target=- \
            "note=$2; p99 $(field "$s_raw" p99) us; $(field "$s_raw" n) runs"
        $BENCH_PY add "$out" "metric=ours/raw latency, $what" "dialect=$1" \
            "value=$ratio" unit=ratio-of-medians "target=$3" \
            "note=p99 ratio $p99r"
        $BENCH_PY add "$out" "metric=ours/ODBC-only latency, $what" \
            "dialect=$1" "value=$oratio" unit=ratio-of-medians target=- \
            "note=the same SQL through the same ODBC driver without the library: median $(field "$s_odbc" median) us, p99 $(field "$s_odbc" p99) us"
    done
}

rm -f "$out"
[ "$BENCH_HAVE_PG" = 1 ] && measure_postgresql
[ "$BENCH_HAVE_MARIADB" = 1 ] && measure_mariadb
[ "$BENCH_HAVE_SQLITE" = 1 ] && measure_sqlite
[ -s "$out" ] || exit 77
$BENCH_PY show "$out"
