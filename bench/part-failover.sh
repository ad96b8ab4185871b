#!/bin/bash
# SPDX-License-Identifier: MIT
# part-failover.sh: make bench part "failover" (interface: bench/run.sh).
#
# How fast leadership moves, per database, with three candidate processes
# (bench/bench-failover): after kill -9 of the leader (the followers, which
# were watching, must wait out the lease and one TTL from their first
# sight of its last renewal: target TTL + 1 s; at the default TTL with the
# follower wait on and off, the kill spread over the renew cycle), when
# three fresh candidates start after a killed leader's lease ran out in
# database time (a candidate that has just started waits one TTL of
# watching before it takes a held lease: docs/protocol.md, "Takeover: the
# watch"), after a graceful shutdown
# (odbc_leader_destroy: resign, release the wake-up lock, disconnect) and
# after odbc_leader_resign() (target for both: median <= 100 ms, p99 <=
# 250 ms on PostgreSQL and MariaDB), at the default TTL (15 s) and at a
# 2 s TTL. The time runs from the fault (kill(2), or the call in the
# leader) to the moment a new leader's tick returned LEADER, on the
# CLOCK_MONOTONIC all processes share; faults land at a random point of
# the leader's renew cycle.
#
# Then what the wake-up costs the database: statements per second with one
# leader and two followers idle for BENCH_FO_IDLE_S seconds (default 10),
# with the follower wait on (default) and off (LeaderFollowerWait=0),
# counted by the server (PostgreSQL: pg_stat_statements calls in database
# "leader"; MariaDB: the Questions status counter, less the queries that
# read it).
#
# Rounds: BENCH_FO_ROUNDS (graceful, default 40), BENCH_FO_KILL_ROUNDS
# (default 10 at 2 s TTL, a third of that at the default TTL, and the
# rounds of resign at the default TTL, which wait out a 5 s holdoff).
# BENCH_FO_TTL_MS (default 15000, the library's default: no LeaderTTL key)
# is the TTL of the "default TTL" runs; the rows name it, and their
# targets, pauses and waits follow it.
# Short mode (BENCH_SHORT=1, bench/run.sh): one round of each, 1 s idle,
# and the "default TTL" runs at a 3 s TTL, so it takes about a minute and
# a half instead of many.
set -eu
. "$srcdir/tests/integration/lib.sh"

if [ "${BENCH_SHORT:-0}" = 1 ]; then
    : "${BENCH_FO_ROUNDS:=1}" "${BENCH_FO_KILL_ROUNDS:=1}"
    : "${BENCH_FO_IDLE_S:=1}" "${BENCH_FO_TTL_MS:=3000}"
fi
out=$BENCH_DIR/failover.json
prog=$top_builddir/bench/bench-failover
rounds=${BENCH_FO_ROUNDS:-40}
kill_rounds=${BENCH_FO_KILL_ROUNDS:-10}
idle_s=${BENCH_FO_IDLE_S:-10}
# The "default TTL" runs: TTL, its label, its key (none at the library's
# default) and the renew interval the library derives from it (TTL / 3).
dttl=${BENCH_FO_TTL_MS:-15000}
# Prints milliseconds $1 in seconds ("15", "2.5").
secs() {
    awk -v t="$1" 'BEGIN { printf "%g", t / 1000 }'
}
dlabel=$(secs "$dttl")s
dkeys='' dwhat='default TTL'
[ "$dttl" = 15000 ] || dkeys="LeaderTTL=$dttl" dwhat=TTL
drenew=$((dttl / 3))
[ -x "$prog" ] || ol_fail "missing $prog (make bench builds it)"
rm -f "$out"

# Prints field $1 of the summary line in $line.
val() {
    echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# run_mode DIALECT CONNECT MODE TTL_LABEL EXTRA ROUNDS TARGET_MEDIAN
#   TARGET_P99 [PAUSE_MS [MORE_ARGS]]: one bench-failover run, two rows
#   (median, p99). LeaderFollowerWait=0 in EXTRA is named in the metric.
run_mode() {
    local dialect=$1 conn=$2 mode=$3 label=$4 extra=$5 n=$6 tmed=$7 tp99=$8
    local pause=${9:-0} more=${10:-} ns="bench-failover-$mode-$label-$$" what
    local tag=$label
    case ";$extra;" in *";LeaderFollowerWait=0;"*) tag="$label, follower wait off" ;; esac
    ol_log "failover: $dialect $mode, TTL $tag, $n rounds"
    # shellcheck disable=SC2086 # more: extra options, split on purpose
    line=$("$prog" -q -m "$mode" -n "$n" -p "$pause" $more \
        -j "$BENCH_WORK/$dialect-$mode-${tag// /_}.json" \
        -C "$conn;LeaderNamespace=$ns${extra:+;$extra}" | tail -n 1) ||
        ol_fail "bench-failover $mode on $dialect failed"
    case $mode in
    kill) what="kill -9 of the leader" ;;
    shutdown) what="graceful shutdown" ;;
    resign) what="odbc_leader_resign()" ;;
    fresh) what="3 fresh candidates start (first takeover of a held, expired lease)" ;;
    esac
    label=$tag
    $BENCH_PY add "$out" "metric=new leader after $what, TTL $label: median" \
        "dialect=$dialect" "value=$(val median_ms)" unit=ms "target=$tmed" \
        "note=$(val rounds) rounds, min $(val min_ms) ms"
    $BENCH_PY add "$out" "metric=new leader after $what, TTL $label: p99" \
        "dialect=$dialect" "value=$(val p99_ms)" unit=ms "target=$tp99" \
        "note=max $(val max_ms) ms"
}

# Prints the server's statement counter for dialect $1. PostgreSQL: the
# statements its log shows (log_statement = all during the measurement;
# pg_stat_statements leaves out the waits that end in a lock timeout).
statements() {
    case $1 in
    postgresql)
        grep -c 'LOG:  \(execute\|statement\)' "$OL_PG_LOG" || true
        ;;
    mariadb)
        ol_mariadb "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{print $2}'
        ;;
    esac
}

# Sets PostgreSQL's log_statement to $1 and reloads.
pg_log_statements() {
    ol_psql "ALTER SYSTEM SET log_statement = '$1'" postgres &&
        ol_psql "SELECT pg_reload_conf()" postgres >/dev/null
}

# idle_cost DIALECT CONNECT WAIT_MS: statements per second, 3 candidates,
# counted between the hook's "start" and "end" (after the election).
idle_cost() {
    local dialect=$1 conn=$2 wait=$3 before after rate
    local ns="bench-failover-idle-$wait-$$" hook=$BENCH_WORK/idle-hook.sh
    printf '#!/bin/bash\n. "%s/tests/integration/lib.sh"\n%s\n%s\n' \
        "$srcdir" "$(declare -f statements)" \
        "statements $dialect >\"$BENCH_WORK/idle-\$1\"" >"$hook"
    chmod +x "$hook"
    [ "$dialect" = postgresql ] && pg_log_statements all
    "$prog" -q -m idle -n "$idle_s" -H "$hook" \
        -C "$conn;LeaderNamespace=$ns;LeaderFollowerWait=$wait${dkeys:+;$dkeys}" \
        >/dev/null ||
        ol_fail "bench-failover idle on $dialect failed"
    [ "$dialect" = postgresql ] && pg_log_statements none
    before=$(cat "$BENCH_WORK/idle-start")
    after=$(cat "$BENCH_WORK/idle-end")
    # the counter reads themselves: pg_stat_statements does not count the
    # query reading it in "leader"; MariaDB counts one per SHOW
    [ "$dialect" = mariadb ] && after=$((after - 1))
    rate=$(awk -v a="$after" -v b="$before" -v s="$idle_s" \
        'BEGIN { printf "%.2f", (a - b) / s }')
    $BENCH_PY add "$out" \
        "metric=database statements/s, 1 leader + 2 followers idle, follower wait ${wait} ms" \
        "dialect=$dialect" "value=$rate" unit=stmt/s target=- \
        "note=$dwhat $(secs "$dttl") s (renew $(secs "$drenew") s), ${idle_s} s after the election; wait 0: followers only attempt, every renew interval"
}

# every_mode DIALECT CONNECT
every_mode() {
    local d=$1 c=$2 kr=$(((kill_rounds + 2) / 3))
    local dl=$dlabel dk=$dkeys dkill="<= $((dttl + 1000))"
    # resign: a resigned candidate holds off for one renew interval (5 s at
    # the default TTL, 667 ms at 2 s); rounds wait that out
    run_mode "$d" "$c" shutdown "$dl" "$dk" "$rounds" "<= 100" "<= 250"
    run_mode "$d" "$c" resign "$dl" "$dk" "$kill_rounds" "<= 100" "<= 250" \
        "$drenew"
    run_mode "$d" "$c" shutdown 2s "LeaderTTL=2000" "$rounds" "<= 100" "<= 250"
    run_mode "$d" "$c" resign 2s "LeaderTTL=2000" "$rounds" "<= 100" "<= 250" 700
    run_mode "$d" "$c" kill 2s "LeaderTTL=2000" "$kill_rounds" "-" "<= 3000"
    run_mode "$d" "$c" kill "$dl" "$dk" "$kr" "-" "$dkill" 0 "-r $drenew"
    run_mode "$d" "$c" kill "$dl" "${dk:+$dk;}LeaderFollowerWait=0" "$kr" "-" \
        "$dkill" 0 "-r $drenew"
    run_mode "$d" "$c" fresh 2s "LeaderTTL=2000" "$kr" "-" "-" 0 "-w 2500"
    run_mode "$d" "$c" fresh "$dl" "$dk" "$kr" "-" "-" 0 "-w $((dttl + 500))"
    idle_cost "$d" "$c" 1000
    idle_cost "$d" "$c" 0
}

ran=0
if [ "$BENCH_HAVE_PG" = 1 ]; then
    every_mode postgresql "$OL_PG_CONNECT"
    ran=1
fi
if [ "$BENCH_HAVE_MARIADB" = 1 ]; then
    every_mode mariadb "$OL_MARIADB_CONNECT"
    ran=1
fi
if [ "$BENCH_HAVE_SQLITE" = 1 ]; then
    # No wake-up statements on SQLite: a follower notices a resignation at
    # its next attempt. For comparison only; no target.
    conn="Driver=SQLite3;Database=$BENCH_WORK/failover.db"
    sq=(10 5 3)
    [ "${BENCH_SHORT:-0}" = 1 ] && sq=(1 1 1)
    run_mode sqlite "$conn" shutdown 2s "LeaderTTL=2000" "${sq[0]}" - -
    run_mode sqlite "$conn" kill 2s "LeaderTTL=2000" "${sq[1]}" - "<= 3000"
    run_mode sqlite "$conn" fresh 2s "LeaderTTL=2000" "${sq[2]}" - - 0 "-w 2500"
    ran=1
fi
[ "$ran" = 1 ] || exit 77
$BENCH_PY show "$out"
