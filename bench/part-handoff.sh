#!/bin/bash
# SPDX-License-Identifier: MIT
# part-handoff.sh: make bench part "handoff" (interface: bench/run.sh).
#
# How fast `odbc-leader run` hands CMD from one host to the next, on CMD
# lifetimes: three candidates per database, each `odbc-leader run ... --
# cmd-life DIR --term-delay 300` (TTL 3 s, renew 500 ms, margin 500 ms,
# statement timeout 500 ms, --grace 1000ms) restarted by a service loop,
# and BENCH_HO_ROUNDS rounds (default 10) of each fault on whoever leads:
# `odbc-leader resign` (request -> SIGTERM, SIGTERM -> CMD's end, end ->
# next CMD's start, and the handoff excess, goal <= 100 ms at the median
# and p90), kill -9 of the leader's run, SIGSTOP of it for TTL + 1500 ms
# and, on PostgreSQL and MariaDB, a network stall through its fault-proxy
# (fault -> old CMD's end, end -> next CMD's start). bench/bench-handoff.py
# measures (it imports tests/faults/cmd-schedule.py's service loops and
# cmdcheck); every round is checked for overlapping CMD lives, and one
# makes the part fail. About 6 minutes with three databases.
#
# Needs odbc-leader, tests/faults/cmd-life and tests/faults/fault-proxy in
# the build directory (make odbc-leader tests/faults/cmd-life
# tests/faults/fault-proxy). Each round's raw times: $BENCH_DIR/
# handoff-samples.json; the runs' records and logs: $BENCH_WORK (OL_KEEP=1).
# Short mode (BENCH_SHORT=1, bench/run.sh): one round of each fault.
set -eu
. "$srcdir/tests/integration/lib.sh"

[ "${BENCH_SHORT:-0}" = 1 ] && : "${BENCH_HO_ROUNDS:=1}"
out=$BENCH_DIR/handoff.json
rounds=${BENCH_HO_ROUNDS:-10}
leader=$top_builddir/odbc-leader
life=$top_builddir/tests/faults/cmd-life
proxy=$top_builddir/tests/faults/fault-proxy
for f in "$leader" "$life" "$proxy"; do
    [ -x "$f" ] || ol_fail "missing $f (make odbc-leader tests/faults/cmd-life tests/faults/fault-proxy builds it)"
done
rm -f "$out"

dbs=''
if [ "$BENCH_HAVE_SQLITE" = 1 ]; then dbs=sqlite; fi
if [ "$BENCH_HAVE_PG" = 1 ]; then dbs=${dbs:+$dbs,}postgresql; fi
if [ "$BENCH_HAVE_MARIADB" = 1 ]; then dbs=${dbs:+$dbs,}mariadb; fi
[ -n "$dbs" ] || exit 77

ol_log "handoff: $rounds rounds of each fault on $dbs"
rc=0
python3 "$srcdir/bench/bench-handoff.py" --rounds "$rounds" --db "$dbs" \
    --out "$out" --samples "$BENCH_DIR/handoff-samples.json" \
    --work "$BENCH_WORK" --odbc-leader "$leader" --life "$life" \
    --proxy "$proxy" --srcdir "$srcdir" || rc=$?
[ -s "$out" ] && $BENCH_PY show "$out"
[ "$rc" = 0 ] || ol_fail "handoff: a round failed (see FAIL lines above)"
