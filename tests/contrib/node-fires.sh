# SPDX-License-Identifier: MIT
# node-fires.sh: the exactly-once schedule of the Node integrations on one
# database, sourced by node-sqlite.test and node-pg.test with CONNECT set.
# For each of node-cron, node-schedule, croner and cron,
# tests/contrib/scheduler_fires.py --faults full runs three
# `node contrib/node/examples/LIB.js` processes and a fourth whose clock
# runs 700 ms ahead (libfaketime), a 1-s job on a 2-s lease; the leader is
# killed -9 just after a fire, then just before one, stopped with SIGSTOP
# past its TTL and continued, then stopped with SIGTERM; every slot from
# the first fire to the last ran exactly once, in the term that claimed
# it, as the FIRE lines and `odbc-leader fires --json` show
# (tests/contrib/check_fires.py).
FAKETIME_LIB=$(ls /usr/lib/*/faketime/libfaketimeMT.so.1 2>/dev/null | head -n 1)
[ -n "$FAKETIME_LIB" ] || ol_fail "no libfaketimeMT.so.1: install faketime"

# node_fires NAME LIB CONNECT [ARGS...]: the schedule; its output in
# $OL_TMP/NAME.out. Returns the driver's status.
node_fires() {
    local name=$1 lib=$2 connect=$3
    shift 3
    python3 "${srcdir:-.}/tests/contrib/scheduler_fires.py" --kind node \
        --lib "$lib" --faults full --faketime-lib "$FAKETIME_LIB" \
        --node "$NODE" --pkg "$NODE_PKG" --plugin "$PLUGIN" \
        --connect "$connect" --odbc-leader "$OLC" \
        --checker "${srcdir:-.}/tests/contrib/check_fires.py" \
        --work "$OL_TMP/$name" "$@" >"$OL_TMP/$name.out" 2>&1
}

# all_libs DB CONNECT-OF [GROUP-CONNECT]: the four integrations at once
# (each a few percent of a core), and with GROUP-CONNECT node-cron with 12
# jobs in a sharded group of 16 shards too (each job's slots exactly
# once, the jobs spread over the members at the end). CONNECT-OF LIB
# prints the connection string of LIB's run.
all_libs() {
    local db=$1 connect_of=$2 group=${3:-} lib rc=0
    local -a pids=() names=()
    for lib in node-cron node-schedule croner cron; do
        node_fires "$db-$lib" "$lib" "$($connect_of "$lib")" &
        pids+=($!)
        names+=("$lib")
    done
    if [ -n "$group" ]; then
        node_fires "$db-group" node-cron "$group" --jobs 12 --shards 16 &
        pids+=($!)
        names+=(group)
    fi
    for i in "${!pids[@]}"; do
        if wait "${pids[$i]}"; then
            ol_log "$db ${names[$i]}: $(grep -h -E -o '[0-9]* runs [0-9]* ms or more after their slot started' \
                "$OL_TMP/$db-${names[$i]}.out" | head -n 1) (caught up);" \
                "$(tail -n 1 "$OL_TMP/$db-${names[$i]}.out")"
            # a start that timed out on a loaded machine: said, not failed
            grep -h -A 3 'at its start (a timeout)' \
                "$OL_TMP/$db-${names[$i]}.out" || true
        else
            cat "$OL_TMP/$db-${names[$i]}.out"
            ol_log "$db ${names[$i]}: exactly once broken"
            rc=1
        fi
    done
    [ "$rc" -eq 0 ] || ol_fail "the Node integrations on $db: exactly once broken"
}
