#!/bin/bash
# SPDX-License-Identifier: MIT
# part-fleet.sh: make bench part "fleet" (interface: bench/run.sh). A fleet
# of group members, one process each (tests/faults/group-host), measured
# from the lease table by bench/fleet.py: cold start, steady state
# (statements per process per tick counted by the server, balance, tick
# latency), a join, a graceful leave, a fast restart under the same id, a
# kill -9, terms per shard per membership change, and on PostgreSQL a soak
# with a membership change every 20 s (ping-pong). Sizes: 10 processes
# over 10,000 shards on PostgreSQL and MariaDB, 5 over 1,000 on SQLite
# (BENCH_FLEET_MEMBERS, BENCH_FLEET_SHARDS, BENCH_FLEET_SQLITE_MEMBERS,
# BENCH_FLEET_SQLITE_SHARDS); soak BENCH_FLEET_SOAK seconds (default 600).
# Short mode: 3 processes over 100 shards everywhere, a 15 s soak (one
# membership change), and the three databases' fleets at the same time
# (each its own server or file; their progress follows, database by
# database, once all are done). On
# MariaDB the part raises the buffer pool and the redo log to 256 MB each.
set -eu
. "$srcdir/tests/integration/lib.sh"

if [ "${BENCH_SHORT:-0}" = 1 ]; then
    : "${BENCH_FLEET_MEMBERS:=3}" "${BENCH_FLEET_SHARDS:=100}"
    : "${BENCH_FLEET_SQLITE_MEMBERS:=3}" "${BENCH_FLEET_SQLITE_SHARDS:=100}"
    : "${BENCH_FLEET_SOAK:=15}"
    short=--short together=1
else
    short='' together=0
fi
out=$BENCH_DIR/fleet.json
host=$top_builddir/tests/faults/group-host
[ -x "$host" ] || ol_fail "missing $host (make bench builds it)"

# Runs fleet.py on kind $1 through connection $2, $3 members over $4
# shards, soak $5 seconds; its rows go to $BENCH_WORK/fleet-$1.json. In
# the short mode in the background, its progress into
# $BENCH_WORK/fleet-$1.log (fleet_wait collects it); else it adds $1 to
# $failed when it fails.
fleet() {
    ol_log "fleet: $1, $3 members over $4 shards"
    if [ "$together" = 1 ]; then
        fleet_run "$@" 2>"$BENCH_WORK/fleet-$1.log" &
        pids="$pids $!" kinds="$kinds $1"
    else
        fleet_run "$@" || failed="$failed $1"
    fi
}

fleet_run() {
    python3 "$srcdir/bench/fleet.py" --kind "$1" --connect "$2" \
        --members "$3" --shards "$4" --host "$host" --work "$BENCH_WORK" \
        --out "$BENCH_WORK/fleet-$1.json" --soak "$5" $short
}

# Waits for the fleets started in the background, adding the ones that
# failed to $failed, and prints each one's progress, in the order they
# started.
fleet_wait() {
    local pid kind
    # shellcheck disable=SC2086 # kinds: one word per fleet
    set -- $kinds
    for pid in $pids; do
        kind=$1
        shift
        wait "$pid" || failed="$failed $kind"
        cat "$BENCH_WORK/fleet-$kind.log" >&2
    done
}

rm -f "$out" "$BENCH_WORK"/fleet-*.json
pids='' kinds='' failed=''
export OL_PG_BIN OL_PG_PORT OL_PG_USER OL_MARIADB_SOCK OL_MARIADB_CLIENT
# The suite's MariaDB runs with a 32 MB buffer pool and a 16 MB redo log
# (tests/integration/lib.sh); ten members renewing 20,000 rows a second
# fill that log every few seconds. Give the fleet a server sized like a
# small production one (both settings are dynamic since MariaDB 10.9).
if [ "$BENCH_HAVE_MARIADB" = 1 ]; then
    ol_mariadb "SET GLOBAL innodb_buffer_pool_size = 268435456;
                SET GLOBAL innodb_log_file_size = 268435456" >/dev/null ||
        ol_log "fleet: could not resize MariaDB's buffer pool and redo log"
fi
[ "$BENCH_HAVE_SQLITE" = 1 ] &&
    fleet sqlite "Driver=SQLite3;Database=$BENCH_WORK/fleet.db" \
        "${BENCH_FLEET_SQLITE_MEMBERS:-5}" "${BENCH_FLEET_SQLITE_SHARDS:-1000}" 0
[ "$BENCH_HAVE_PG" = 1 ] &&
    fleet postgresql "$OL_PG_CONNECT" "${BENCH_FLEET_MEMBERS:-10}" \
        "${BENCH_FLEET_SHARDS:-10000}" "${BENCH_FLEET_SOAK:-600}"
[ "$BENCH_HAVE_MARIADB" = 1 ] &&
    fleet mariadb "$OL_MARIADB_CONNECT" "${BENCH_FLEET_MEMBERS:-10}" \
        "${BENCH_FLEET_SHARDS:-10000}" 0
[ -z "$pids" ] || fleet_wait
# the rows, database by database (a failed fleet's too: it writes none)
python3 -c 'import json, os, sys
rows = []
for p in sys.argv[2:]:
    if os.path.exists(p):
        with open(p) as f:
            rows += json.load(f)
if rows:
    with open(sys.argv[1], "w") as f:
        json.dump(rows, f, indent=1)' "$out" "$BENCH_WORK/fleet-sqlite.json" \
    "$BENCH_WORK/fleet-postgresql.json" "$BENCH_WORK/fleet-mariadb.json"
[ -z "$failed" ] || {
    [ -s "$out" ] && $BENCH_PY show "$out"
    ol_fail "fleet failed on$failed"
}
[ -s "$out" ] || exit 77
$BENCH_PY show "$out"
