# SPDX-License-Identifier: MIT
# tests/contrib/minicron_claims.sh: minicron's exactly-once scenario,
# sourced by minicron.test (SQLite), minicron-pg.test (PostgreSQL) and
# minicron-mariadb.test (MariaDB) after ol_setup and the database's start.
#
#   claims_scenario CONNECT LABEL
#
# Three minicrons on the database CONNECT (namespace "claims", LeaderTTL
# 2 s, 1-second slots, --misfire all, --misfire-window 10 s) with one job
# that appends "SLOT_START MINICRON_PID TERM NOW_MS" to a shared file.
# Each minicron runs with LeaderId=mc-PID, so the ledger names its pid.
# The leader is killed with SIGKILL at a slot boundary (just before: it
# has not claimed the slot; just after: it has, and ran it) and replaced,
# CL_KILLS times, then stopped with SIGSTOP past its lease and continued.
# Each failover lasts about the TTL, two slots, which the next leader
# catches up. Then tests/contrib/check_fires.py checks the job's log
# against `odbc-leader fires --json`: every slot between the first and the
# last fired exactly once (one ledger row each, no slot run twice, no gap,
# each run claimed by its minicron in its term), and at least one run per
# failover happened after its slot had ended (catch-up). Finally the
# checker must fail on a log with a duplicate and on one with a gap.
# Needs MC, PLUGIN, PY (python3) and OL_TMP; takes about 20 s.

CL_SLOT_S=1
CL_WINDOW_S=10
CL_KILL_OFFSETS_MS="-40 40 -15 150" # from a slot boundary, one per kill
CL_STOP_MS=3500                     # SIGSTOP this long: more than the TTL

# Starts one minicron of the scenario; sets cl_pid.
cl_start() {
    (exec "$MC" -p "$PLUGIN" -c "$CL_CONF;LeaderId=mc-$BASHPID" \
        -f "$CL_DIR/crontab" --slot-seconds "$CL_SLOT_S" --misfire all \
        --misfire-window "$CL_WINDOW_S" -v 2>>"$CL_DIR/minicron.err") &
    cl_pid=$!
    ol_track_pid "$cl_pid"
    cl_pids+=("$cl_pid")
}

# Wall clock in ms.
cl_now_ms() {
    date +%s%3N
}

# Sleeps until wall-clock ms $1 (at once when it has passed).
cl_sleep_until() {
    local ms=$(($1 - $(cl_now_ms)))
    ((ms > 0)) || return 0
    sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
}

# Prints the pid of the minicron that ran the newest slot of the log.
cl_newest_pid() {
    sort -n -k1,1 "$CL_RUNS" | awk 'END { print $2 }'
}

# Waits at most $3 ms (default 10 s) for a run of a slot >= $1 (epoch s)
# by a pid other than $2; prints that pid. Fails the test when none came,
# unless $4 is "soft": then returns 1.
cl_wait_other() {
    local i pid n=$((${3:-10000} / 50))
    for ((i = 0; i < n; i++)); do
        pid=$(awk -v s="$1" -v p="$2" '$1 >= s && $2 != p { print $2; exit }' \
            "$CL_RUNS")
        if [ -n "$pid" ]; then
            echo "$pid"
            return 0
        fi
        sleep 0.05
    done
    [ "${4:-}" = soft ] && return 1
    ol_fail "claims: no run of slot >= $1 by another minicron than $2 in" \
        "$((n / 20)) s"
}

# Waits at most 10 s until the minicron that ran the newest slot is the
# leader `odbc-leader status` names; prints its pid.
cl_wait_leader() {
    local i pid lead
    for ((i = 0; i < 50; i++)); do
        pid=$(cl_newest_pid)
        lead=$("$OLC" status --json -C "$CL_CONF" 2>/dev/null |
            sed -n 's/.*"leader":"mc-\([0-9]*\)".*/\1/p')
        if [ -n "$pid" ] && [ "$pid" = "$lead" ]; then
            echo "$pid"
            return 0
        fi
        sleep 0.2
    done
    ol_fail "claims: no settled leader in 10 s (newest run by $pid, leader $lead)"
}

# One failover: signal $1 (KILL or STOP) to the leader at $2 ms from the
# next slot boundary at least 300 ms ahead. A killed leader is replaced;
# a stopped one is continued CL_STOP_MS later, once another minicron runs
# the slots.
cl_round() {
    local sig=$1 off=$2 victim b next
    victim=$(cl_wait_leader)
    b=$((($(cl_now_ms) / 1000 + 1) * 1000))
    while ((b + off < $(cl_now_ms) + 300)); do
        b=$((b + 1000))
    done
    cl_sleep_until $((b + off))
    kill "-$sig" "$victim" || ol_fail "claims: leader $victim is not ours"
    ol_log "claims: SIG$sig to leader $victim at $off ms from slot $((b / 1000))"
    if [ "$sig" = KILL ]; then
        wait "$victim" 2>/dev/null || true
        cl_killed+=("$victim")
        cl_start
    fi
    if [ "$sig" != STOP ] || [ "$CL_LABEL" != sqlite ]; then
        next=$(cl_wait_other $(((b + off) / 1000)) "$victim")
    elif ! next=$(cl_wait_other $(((b + off) / 1000)) "$victim" \
        $((CL_STOP_MS + 1000)) soft); then
        # SQLite: a process stopped inside a transaction keeps the file
        # lock, and nobody takes over before it runs again
        # (docs/fencing.md). Continue it; the slots must then go on, and
        # check_fires still checks that none ran twice or in a lost term.
        kill -CONT "$victim"
        ol_log "claims: nobody took over while $victim was stopped" \
            "(SQLite: stopped holding the file lock); SIGCONT"
        next=$(cl_wait_other $(((b + off) / 1000)) "")
        ol_log "claims: slot runs continued by $next"
        return 0
    fi
    ol_log "claims: slot runs continued by $next"
    if [ "$sig" = STOP ]; then
        cl_sleep_until $((b + off + CL_STOP_MS))
        kill -CONT "$victim"
        ol_log "claims: SIGCONT to $victim"
    fi
}

# Stops the minicrons with SIGTERM: the followers, then the leader (so
# nobody takes over and catches up while they stop).
cl_stop_all() {
    local lead p
    lead=$(cl_newest_pid)
    for p in "${cl_pids[@]}"; do
        [ "$p" = "$lead" ] || cl_stop "$p"
    done
    cl_stop "$lead"
}

# Sends SIGTERM to minicron $1 and waits for it, if it still runs.
cl_stop() {
    if kill -TERM "$1" 2>/dev/null; then
        wait "$1" 2>/dev/null || true
    fi
}

# Runs the checker on runs $1 and ledger $2 from slot $3 to $4; the output
# goes to $5.
cl_check() {
    "$PY" "${srcdir:-.}/tests/contrib/check_fires.py" --runs "$1" \
        --ledger "$2" --slot-seconds "$CL_SLOT_S" --first "$3" --last "$4" \
        --killed "${cl_killed[@]}" --max-incomplete 1 \
        --expect-late "$CL_FAILOVERS" >"$5"
}

claims_scenario() {
    local conn=$1 label=$2 i off first last t0 out dup gap
    CL_LABEL=$label
    CL_DIR=$OL_TMP/claims-$label
    CL_RUNS=$CL_DIR/runs.log
    CL_CONF="$conn;LeaderNamespace=claims;LeaderTTL=2000"
    CL_CONF="$CL_CONF;LeaderRenewInterval=250;LeaderSafetyMargin=150"
    OLC=${top_builddir:-.}/odbc-leader
    [ -x "$OLC" ] || ol_fail "missing $OLC (build first)"
    cl_pids=() cl_killed=()
    CL_FAILOVERS=0
    mkdir -p "$CL_DIR"
    : >"$CL_RUNS"
    cat >"$CL_DIR/crontab" <<EOF
RUNS = $CL_RUNS
* * * * * echo "\$MINICRON_SLOT \$PPID \$ODBC_LEADER_TERM \$(date +%s%3N)" >>"\$RUNS"
EOF
    ol_on_exit "echo '--- claims $label minicron stderr (tail):' >&2;
        tail -n 60 '$CL_DIR/minicron.err' >&2"
    t0=$(cl_now_ms)
    ol_log "claims ($label): three minicrons, --misfire all, window ${CL_WINDOW_S} s"
    for i in 1 2 3; do
        cl_start
    done
    for off in $CL_KILL_OFFSETS_MS; do
        cl_round KILL "$off"
        CL_FAILOVERS=$((CL_FAILOVERS + 1))
    done
    cl_round STOP -20
    CL_FAILOVERS=$((CL_FAILOVERS + 1))
    last=$(($(cl_now_ms) / 1000 + 1))
    cl_wait_other "$last" 0 >/dev/null
    sleep 1
    cl_stop_all
    first=$(sort -n -k1,1 "$CL_RUNS" | awk 'NR == 1 { print $1 }')
    "$OLC" fires --json --limit 0 -C "$CL_CONF" >"$CL_DIR/ledger.json" ||
        ol_fail "claims: odbc-leader fires failed"
    ol_log "claims ($label): $(wc -l <"$CL_RUNS") runs," \
        "$(wc -l <"$CL_DIR/ledger.json") ledger rows," \
        "$(awk '{ print $3 }' "$CL_RUNS" | sort -u | wc -l) terms"
    ! grep -q "cannot claim fires" "$CL_DIR/minicron.err" ||
        ol_fail "claims ($label): minicron said the plugin cannot claim fires"
    out=$CL_DIR/check.out
    if ! cl_check "$CL_RUNS" "$CL_DIR/ledger.json" "$first" "$last" "$out"; then
        cat "$out" >&2
        ol_fail "claims ($label): slots did not fire exactly once"
    fi
    cat "$out" >&2
    (($(awk '{ print $3 }' "$CL_RUNS" | sort -u | wc -l) > CL_FAILOVERS)) ||
        ol_fail "claims ($label): fewer terms than failovers + 1"

    # The checker can fail: a slot run twice ...
    dup=$(awk '{ print $1 }' "$CL_RUNS" | sort -n | sed -n 3p)
    gap=$(awk '{ print $1 }' "$CL_RUNS" | sort -n | sed -n 4p)
    {
        cat "$CL_RUNS"
        awk -v s="$dup" '$1 == s' "$CL_RUNS"
    } >"$CL_DIR/dup.log"
    if cl_check "$CL_DIR/dup.log" "$CL_DIR/ledger.json" "$first" "$last" \
        "$out"; then
        ol_fail "claims: check_fires.py missed a duplicate"
    fi
    grep -q "^slot $((dup / CL_SLOT_S)): ran 2 times" "$out" ||
        ol_fail "claims: check_fires.py: $(cat "$out")"
    # ... and a slot missing from both the log and the ledger.
    awk -v s="$gap" '$1 != s' "$CL_RUNS" >"$CL_DIR/gap.log"
    grep -v "\"fire_ms\":$((gap * 1000))," "$CL_DIR/ledger.json" \
        >"$CL_DIR/gap.json"
    if cl_check "$CL_DIR/gap.log" "$CL_DIR/gap.json" "$first" "$last" \
        "$out"; then
        ol_fail "claims: check_fires.py missed a gap"
    fi
    grep -q "^slot $((gap / CL_SLOT_S)): claimed 0 times" "$out" ||
        ol_fail "claims: check_fires.py: $(cat "$out")"
    ol_log "claims ($label): passed in $((($(cl_now_ms) - t0) / 1000)) s;" \
        "negative checks: duplicate and gap detected"
}
