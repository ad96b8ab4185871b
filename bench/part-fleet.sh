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
# membership change). On
# MariaDB the part raises the buffer pool and the redo log to 256 MB each.
set -eu
. "$srcdir/tests/integration/lib.sh"

if [ "${BENCH_SHORT:-0}" = 1 ]; then
    : "${BENCH_FLEET_MEMBERS:=3}" "${BENCH_FLEET_SHARDS:=100}"
    : "${BENCH_FLEET_SQLITE_MEMBERS:=3}" "${BENCH_FLEET_SQLITE_SHARDS:=100}"
    : "${BENCH_FLEET_SOAK:=15}"
    short=--short
else
    short=
fi
out=$BENCH_DIR/fleet.json
host=$top_builddir/tests/faults/group-host
[ -x "$host" ] || ol_fail "missing $host (make bench builds it)"

# Runs fleet.py on kind $1 through connection $2, $3 members over $4
# shards, soak $5 seconds.
fleet() {
    ol_log "fleet: $1, $3 members over $4 shards"
    python3 "$srcdir/bench/fleet.py" --kind "$1" --connect "$2" \
        --members "$3" --shards "$4" --host "$host" --work "$BENCH_WORK" \
        --out "$out" --soak "$5" $short ||
        ol_fail "fleet failed on $1 ($3 members over $4 shards)"
}

rm -f "$out"
export OL_PG_BIN OL_PG_PORT OL_PG_USER OL_MARIADB_SOCK OL_MARIADB_CLIENT
[ "$BENCH_HAVE_SQLITE" = 1 ] &&
    fleet sqlite "Driver=SQLite3;Database=$BENCH_WORK/fleet.db" \
        "${BENCH_FLEET_SQLITE_MEMBERS:-5}" "${BENCH_FLEET_SQLITE_SHARDS:-1000}" 0
[ "$BENCH_HAVE_PG" = 1 ] &&
    fleet postgresql "$OL_PG_CONNECT" "${BENCH_FLEET_MEMBERS:-10}" \
        "${BENCH_FLEET_SHARDS:-10000}" "${BENCH_FLEET_SOAK:-600}"
# The suite's MariaDB runs with a 32 MB buffer pool and a 16 MB redo log
# (tests/integration/lib.sh); ten members renewing 20,000 rows a second
# fill that log every few seconds. Give the fleet a server sized like a
# small production one (both settings are dynamic since MariaDB 10.9).
if [ "$BENCH_HAVE_MARIADB" = 1 ]; then
    ol_mariadb "SET GLOBAL innodb_buffer_pool_size = 268435456;
                SET GLOBAL innodb_log_file_size = 268435456" >/dev/null ||
        ol_log "fleet: could not resize MariaDB's buffer pool and redo log"
fi
[ "$BENCH_HAVE_MARIADB" = 1 ] &&
    fleet mariadb "$OL_MARIADB_CONNECT" "${BENCH_FLEET_MEMBERS:-10}" \
        "${BENCH_FLEET_SHARDS:-10000}" 0
[ -s "$out" ] || exit 77
$BENCH_PY show "$out"
