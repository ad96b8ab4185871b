# SPDX-License-Identifier: MIT
# tests/cli/scenarios.sh: the odbc-leader command's scenarios, run on one
# database by tests/cli/sqlite.test and tests/cli/postgresql.test.
#
# The caller sources tests/integration/lib.sh and tests/cli/lib.sh, sets
# OLC_CONN (a connection string with a short LeaderTTL) and defines
# olc_apply_sql FILE PREFIX (feeds printed DDL to the database and prints
# the connection string to use with those tables), then calls
# olc_scenarios. Each scenario uses its own namespace. The fire
# lifecycle's scenarios are in tests/cli/recover.sh.

. "${srcdir:-.}/tests/cli/recover.sh"

# CMD's own status comes back; 128+N when it was killed by signal N; 127
# and 126 when it cannot be run; the ODBC_LEADER_* variables are set and
# every run starts a new term.
sc_exit_codes() {
    local out t1 t2
    ol_log "exit codes and environment"
    olc_expect_rc 3 run -C "$OLC_CONN" -n codes -- sh -c 'exit 3'
    olc_expect_rc 0 run -C "$OLC_CONN" -n codes -- true
    olc_expect_rc 137 run -C "$OLC_CONN" -n codes -- sh -c 'kill -KILL $$'
    olc_expect_rc 127 run -C "$OLC_CONN" -n codes -- "$OL_TMP/no-such-cmd" \
        2>/dev/null
    : >"$OL_TMP/not-executable"
    olc_expect_rc 126 run -C "$OLC_CONN" -n codes -- "$OL_TMP/not-executable" \
        2>/dev/null
    out=$(olc run -C "$OLC_CONN" -n codes --id env-test -- sh -c \
        'echo "$ODBC_LEADER_TERM $ODBC_LEADER_NAMESPACE $ODBC_LEADER_ID"')
    t1=${out%% *}
    [ "${out#* }" = "codes env-test" ] || ol_fail "CMD saw '$out'"
    case $t1 in '' | *[!0-9]*) ol_fail "ODBC_LEADER_TERM is '$t1'" ;; esac
    t2=$(olc run -C "$OLC_CONN" -n codes -- sh -c 'echo $ODBC_LEADER_TERM')
    [ "$t2" -gt "$t1" ] || ol_fail "term did not grow: $t1 then $t2"
}

# Two concurrent "run --no-wait" in one namespace: CMD runs exactly once,
# the other exits 81. CMD lasts until the test creates the file "go",
# which it does once one of the two has exited.
sc_exactly_once() {
    local round p1 p2 rc1 rc2 out go cmd
    ol_log "two concurrent run --no-wait: CMD runs once"
    for round in 1 2 3; do
        out=$OL_TMP/once.$round go=$OL_TMP/go.$round
        : >"$out"
        cmd="while [ ! -e '$go' ]; do sleep 0.05; done"
        "$OLC_BIN" run -C "$OLC_CONN" -n "once$round" --no-wait -- \
            sh -c "echo 1 >>'$out'; $cmd" &
        p1=$!
        ol_track_pid "$p1"
        "$OLC_BIN" run -C "$OLC_CONN" -n "once$round" --no-wait -- \
            sh -c "echo 2 >>'$out'; $cmd" &
        p2=$!
        ol_track_pid "$p2"
        while kill -0 "$p1" 2>/dev/null && kill -0 "$p2" 2>/dev/null; do
            sleep 0.05
        done
        touch "$go"
        olc_wait_pid "$p1"
        rc1=$olc_rc
        olc_wait_pid "$p2"
        rc2=$olc_rc
        [ "$(wc -l <"$OL_TMP/once.$round")" = 1 ] ||
            ol_fail "round $round: CMD ran $(wc -l <"$OL_TMP/once.$round") times"
        case "$rc1 $rc2" in
        "0 81" | "81 0") ;;
        *) ol_fail "round $round: exit statuses $rc1 and $rc2, expected 0 and 81" ;;
        esac
    done
}

# --min-hold keeps the lease after a quick CMD: a second --no-wait run
# inside the window exits 81 without running; once the first has released
# the lease, one runs.
sc_min_hold() {
    local out=$OL_TMP/hold p
    ol_log "--min-hold"
    : >"$out"
    "$OLC_BIN" run -C "$OLC_CONN" -n hold --no-wait --min-hold 4s -- \
        sh -c "echo A >>'$out'" &
    p=$!
    ol_track_pid "$p"
    olc_wait_file "$out"
    olc_expect_rc 81 run -C "$OLC_CONN" -n hold --no-wait -- \
        sh -c "echo B >>'$out'"
    kill -0 "$p" 2>/dev/null || ol_fail "run --min-hold 4s ended early"
    olc_wait_pid "$p"
    [ "$olc_rc" = 0 ] || ol_fail "run --min-hold exited $olc_rc"
    olc_wait_field hold leader_present False
    olc_expect_rc 0 run -C "$OLC_CONN" -n hold --no-wait -- \
        sh -c "echo C >>'$out'"
    [ "$(tr '\n' ' ' <"$out")" = "A C " ] ||
        ol_fail "runs seen: $(tr '\n' ' ' <"$out")"
}

# A resign request from outside takes the leadership away: CMD gets
# SIGTERM and run exits 80. A CMD that ignores SIGTERM is killed after
# --grace.
sc_lost() {
    local f=$OL_TMP/lost p cmd_pid
    ol_log "leadership taken away: CMD stopped, exit 80"
    "$OLC_BIN" run -C "$OLC_CONN" -n lost --id loser -- sh -c \
        "trap 'echo TERM >>$f; exit 0' TERM; while :; do sleep 0.1; done" &
    p=$!
    ol_track_pid "$p"
    olc_wait_leader lost loser
    olc_expect_rc 0 resign -C "$OLC_CONN" -n lost >/dev/null
    olc_wait_pid "$p"
    [ "$olc_rc" = 80 ] || ol_fail "run exited $olc_rc after the resign, expected 80"
    grep -q TERM "$f" 2>/dev/null || ol_fail "CMD did not get SIGTERM"

    # --grace must fit the timing (TTL 3000 - margin 1000 - renew 1000 -
    # statement timeout 500 - 100 ms to kill = 400 ms): longer is refused
    # with the largest allowed value
    olc_expect_rc 78 run -C "$OLC_CONN" -n stubborn --grace 500ms -- true \
        2>"$f.err"
    grep -q "may be at most 400 ms" "$f.err" ||
        ol_fail "--grace 500ms: $(cat "$f.err")"
    "$OLC_BIN" run -C "$OLC_CONN" -n stubborn --id mule --grace 300ms -- sh -c \
        "trap '' TERM; echo \$\$ >$f.pid; while :; do sleep 0.1; done" &
    p=$!
    ol_track_pid "$p"
    olc_wait_file "$f.pid"
    cmd_pid=$(cat "$f.pid")
    olc_expect_rc 0 resign -C "$OLC_CONN" -n stubborn >/dev/null
    olc_wait_pid "$p"
    [ "$olc_rc" = 80 ] || ol_fail "stubborn run exited $olc_rc, expected 80"
    ! kill -0 "$cmd_pid" 2>/dev/null || ol_fail "CMD ignoring SIGTERM survived"
}

# SIGTERM to run while CMD runs is passed on; run exits with CMD's status
# and releases the lease (well before its 10 s TTL would end it).
# SIGTERM while campaigning: exit 143, the leader is unaffected.
sc_signals() {
    local f=$OL_TMP/sig p q
    ol_log "signals"
    "$OLC_BIN" run -C "$OLC_CONN" -n sig --id sig-leader --ttl 10s -- sh -c \
        "trap 'exit 5' TERM; echo \$\$ >$f; while :; do sleep 0.1; done" &
    p=$!
    ol_track_pid "$p"
    olc_wait_file "$f"
    "$OLC_BIN" run -C "$OLC_CONN" -n sig --id sig-waiter -- true &
    q=$!
    ol_track_pid "$q"
    olc_wait_field sig candidates_alive 2
    kill -TERM "$q"
    olc_wait_pid "$q"
    [ "$olc_rc" = 143 ] || ol_fail "campaigning run exited $olc_rc on SIGTERM"
    [ "$(olc_field sig leader)" = sig-leader ] || ol_fail "leader changed"
    kill -TERM "$p"
    olc_wait_pid "$p"
    [ "$olc_rc" = 5 ] || ol_fail "run exited $olc_rc, expected CMD's 5"
    olc_wait_field sig leader_present False 4
}

# Fails unless promtool check metrics (Debian's prometheus; skipped
# without it) accepts the exposition $1.
sc_promtool() {
    command -v promtool >/dev/null 2>&1 || return 0
    printf '%s\n' "$1" | promtool check metrics >"$OL_TMP/lint" 2>&1 ||
        ol_fail "promtool check metrics: $(cat "$OL_TMP/lint")
$1"
}

# status --json parses and has the fields; --format=prometheus is valid
# exposition format (promcheck.py, promtool); status itself never
# registers; no password shown. The leader's CMD outlives the checks
# (sleep 30 ended before them once, on a loaded machine).
sc_status() {
    local p q json prom tbl
    ol_log "status --json, --format=prometheus"
    "$OLC_BIN" run -C "$OLC_CONN" -n st --id alpha -- sleep 300 &
    p=$!
    ol_track_pid "$p"
    olc_wait_leader st alpha
    "$OLC_BIN" run -C "$OLC_CONN" -n st --id bravo -- true &
    q=$!
    ol_track_pid "$q"
    olc_wait_field st candidates_alive 2
    json=$(olc status -C "$OLC_CONN" -n st --json) || ol_fail "status --json"
    printf '%s' "$json" | python3 -c '
import json, sys
s = json.load(sys.stdin)
for k in ("namespace", "leader", "leader_present", "term",
          "lease_remaining_ms", "candidates_alive", "candidates"):
    assert k in s, k
assert s["namespace"] == "st" and s["leader"] == "alpha", s
assert s["leader_present"] is True and s["term"] >= 1, s
assert 0 < s["lease_remaining_ms"] <= 60000, s
ids = sorted(c["id"] for c in s["candidates"])
assert ids == ["alpha", "bravo"] and s["candidates_alive"] == 2, s
for c in s["candidates"]:
    assert c["heartbeat_age_ms"] >= 0 and c["leader"] == (c["id"] == "alpha")
' || ol_fail "status --json: $json"
    prom=$(olc status -C "$OLC_CONN" -n st --format=prometheus) ||
        ol_fail "status --format=prometheus"
    printf '%s\n' "$prom" | python3 "$srcdir/tests/cli/promcheck.py" \
        'odbc_leader_lease_held{leader_namespace="st"}=1' \
        'odbc_leader_candidates_alive{leader_namespace="st",namespace="st"}=2' \
        'odbc_leader_lease_holder_info{leader_namespace="st",leader_id="alpha"}=1' \
        'odbc_leader_leader_present{namespace="st"}=1' \
        'odbc_leader_leader_info{namespace="st",leader_id="alpha"}=1' ||
        ol_fail "invalid Prometheus output:
$prom"
    sc_promtool "$prom"
    tbl=$(olc status -C "$OLC_CONN;PWD=hunter2secret" -n st) ||
        ol_fail "status (table)"
    case $tbl in
    *hunter2secret*) ol_fail "status printed the password" ;;
    *"PWD=***"*) ;;
    *) ol_fail "status does not show the redacted connection: $tbl" ;;
    esac
    [ "$(olc_field st candidates_alive)" = 2 ] ||
        ol_fail "status registered itself as a candidate"
    kill -TERM "$q" "$p"
    olc_wait_pid "$q"
    olc_wait_pid "$p"
}

# resign --to hands over to the named live candidate; a dead one gives
# 83, a namespace without leader 82.
sc_handoff() {
    local pa pb pc
    ol_log "resign --to"
    "$OLC_BIN" run -C "$OLC_CONN" -n ho --id a -- sleep 60 &
    pa=$!
    ol_track_pid "$pa"
    olc_wait_leader ho a
    "$OLC_BIN" run -C "$OLC_CONN" -n ho --id b -- sleep 60 &
    pb=$!
    ol_track_pid "$pb"
    "$OLC_BIN" run -C "$OLC_CONN" -n ho --id c -- sleep 60 &
    pc=$!
    ol_track_pid "$pc"
    olc_wait_field ho candidates_alive 3
    olc_expect_rc 83 resign -C "$OLC_CONN" -n ho --to zz 2>/dev/null
    olc_expect_rc 82 resign -C "$OLC_CONN" -n ho-empty 2>/dev/null
    olc_expect_rc 0 resign -C "$OLC_CONN" -n ho --to c >/dev/null
    olc_wait_pid "$pa"
    [ "$olc_rc" = 80 ] || ol_fail "the old leader exited $olc_rc, expected 80"
    olc_wait_leader ho c
    olc_expect_rc 0 resign -C "$OLC_CONN" -n ho --to b --wait \
        --timeout 20s >"$OL_TMP/ho.out"
    grep -q "b leads now" "$OL_TMP/ho.out" ||
        ol_fail "resign --wait printed: $(cat "$OL_TMP/ho.out")"
    olc_wait_pid "$pc"
    [ "$(olc_field ho leader)" = b ] || ol_fail "b does not lead after handoff"
    kill -TERM "$pb"
    olc_wait_pid "$pb"
    # who led when: the election log, as the terms ended
    ol_log "elections"
    olc elections -C "$OLC_CONN" -n ho --json >"$OL_TMP/ho.json" ||
        ol_fail "elections --json failed"
    python3 - "$OL_TMP/ho.json" <<'PY' || ol_fail "elections: $(cat "$OL_TMP/ho.json")"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
got = [(r["leader_id"], r["ended_how"], r["handed_to"]) for r in rows]
assert got == [("a", "handover", "c"), ("c", "handover", "b"),
               ("b", "resigned", None)], got
for r, n in zip(rows, rows[1:]):
    assert r["term"] < n["term"], rows
    assert r["started_at_ms"] < r["ended_at_ms"] <= n["started_at_ms"], rows
    assert r["duration_ms"] == r["ended_at_ms"] - r["started_at_ms"], rows
PY
    olc elections -C "$OLC_CONN" -n ho --limit 1 >"$OL_TMP/ho.txt" ||
        ol_fail "elections failed"
    [ "$(wc -l <"$OL_TMP/ho.txt")" = 2 ] && grep -q '^[0-9]* *b .* resigned ' \
        "$OL_TMP/ho.txt" || ol_fail "elections --limit 1: $(cat "$OL_TMP/ho.txt")"
}

# watch prints one line per change of leader until SIGINT.
sc_watch() {
    local w t out=$OL_TMP/watch.out
    ol_log "watch"
    "$OLC_BIN" watch -C "$OLC_CONN" -n w >"$out" &
    w=$!
    ol_track_pid "$w"
    olc_wait_file "$out"
    olc_expect_rc 0 run -C "$OLC_CONN" -n w --id wx -- sleep 1
    olc_wait_pid_line "$out" "wx -> (none) term="
    kill -INT "$w"
    olc_wait_pid "$w"
    [ "$olc_rc" = 0 ] || ol_fail "watch exited $olc_rc on SIGINT"
    # the namespace's first term is the database clock in ms
    t=$(awk '$3 == "(none)" && $5 == "wx" { sub("term=", "", $6); print $6 }' \
        "$out")
    case $t in '' | *[!0-9]*) ol_fail "watch output: $(cat "$out")" ;; esac
    awk '{ print $2, $3, $4, $5, $6 }' "$out" >"$out.2"
    printf '%s\n' "w - -> (none) term=0" "w (none) -> wx term=$t" \
        "w wx -> (none) term=$t" | diff - "$out.2" ||
        ol_fail "watch output: $(cat "$out")"
    grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}[+-][0-9]{2}:[0-9]{2} ' \
        "$out" || ol_fail "watch time stamps: $(cat "$out")"
}

# Waits until file $1 holds a line ending in $2 (at most 10 s).
olc_wait_pid_line() {
    local i
    for ((i = 0; i < 100; i++)); do
        grep -qF -- "$2" "$1" && return 0
        sleep 0.1
    done
    ol_fail "no line '$2' in $1: $(cat "$1")"
}

# The printed DDL creates working tables: candidates with
# LeaderCreateSchema=no run on them. schema --apply creates them too.
sc_schema() {
    local conn
    ol_log "schema"
    olc schema -C "$OLC_CONN" --prefix cli_ >"$OL_TMP/ddl.sql" ||
        ol_fail "schema failed"
    conn=$(olc_apply_sql "$OL_TMP/ddl.sql" cli_) || ol_fail "applying the DDL"
    olc_expect_rc 0 run -C "$conn;LeaderCreateSchema=no;LeaderTablePrefix=cli_" \
        -n schema -- true
    olc_expect_rc 69 run -C "$OLC_CONN;LeaderCreateSchema=no;LeaderTablePrefix=nope_" \
        -n schema -- true 2>/dev/null
    olc schema --apply -C "$OLC_CONN;LeaderTablePrefix=app_" >"$OL_TMP/apply.out" ||
        ol_fail "schema --apply failed"
    grep -q "app_lease" "$OL_TMP/apply.out" || ol_fail "schema --apply said: $(cat "$OL_TMP/apply.out")"
    olc_expect_rc 0 run -C "$OLC_CONN;LeaderCreateSchema=no;LeaderTablePrefix=app_" \
        -n schema -- true
}

# Three concurrent "run --once K": CMD runs once; the others, and any
# later run of K, exit 84; the ledger holds K with CMD's status. With
# --once-per, the key is the slot: a second run in the slot exits 84.
sc_once() {
    local i rc n ok=0 done=0 out=$OL_TMP/once-key.out pids=()
    ol_log "run --once: three at once, CMD runs once"
    : >"$out"
    for i in 1 2 3; do
        "$OLC_BIN" run -C "$OLC_CONN" -n oncens --once K -- \
            sh -c "echo $i >>'$out'; sleep 1" 2>>"$OL_TMP/once-key.err" &
        pids+=($!)
        ol_track_pid "$!"
    done
    for i in "${pids[@]}"; do
        olc_wait_pid "$i"
        case $olc_rc in
        0) ok=$((ok + 1)) ;;
        84) done=$((done + 1)) ;;
        *) ol_fail "run --once exited $olc_rc: $(cat "$OL_TMP/once-key.err")" ;;
        esac
    done
    n=$(wc -l <"$out")
    [ "$n" = 1 ] && [ "$ok" = 1 ] && [ "$done" = 2 ] ||
        ol_fail "run --once: CMD ran $n times, $ok exits 0, $done exits 84"
    olc_expect_rc 84 run -C "$OLC_CONN" -n oncens --once K -- true 2>/dev/null
    olc_expect_rc 3 run -C "$OLC_CONN" -n oncens --once K3 -- sh -c 'exit 3'
    olc fires -C "$OLC_CONN" -n oncens --json >"$OL_TMP/fires.json" ||
        ol_fail "fires --json failed"
    python3 - "$OL_TMP/fires.json" <<'PY' || ol_fail "fires: $(cat "$OL_TMP/fires.json")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {r["job"]: r for r in rows}
assert len(rows) == 2, rows
assert by["K"]["fire_ms"] == 0 and by["K"]["status"] == 0, rows
assert by["K"]["duration_ms"] >= 900, rows
assert by["K3"]["status"] == 3 and by["K3"]["term"] > by["K"]["term"], rows
PY
    olc fires -C "$OLC_CONN" -n oncens --job K3 >"$OL_TMP/fires.txt" ||
        ol_fail "fires failed"
    [ "$(wc -l <"$OL_TMP/fires.txt")" = 2 ] && grep -q '^K3 .* once ' \
        "$OL_TMP/fires.txt" || ol_fail "fires --job: $(cat "$OL_TMP/fires.txt")"
    olc_expect_rc 0 run -C "$OLC_CONN" -n oncens --once-per 1h -- true
    olc_expect_rc 84 run -C "$OLC_CONN" -n oncens --once-per 1h -- true \
        2>/dev/null
    # another --once-per for the same key computes other keys: refused by
    # its schedule (docs/schedules.md), exit 78, CMD not run
    ol_log "run --once-per: another period for the same key is refused"
    rc=0
    "$OLC_BIN" run -C "$OLC_CONN" -n oncens --once-per 30m -- \
        sh -c "echo ran >>'$OL_TMP/once-30m.out'" 2>"$OL_TMP/once-30m.err" ||
        rc=$?
    [ "$rc" = 78 ] && [ ! -e "$OL_TMP/once-30m.out" ] &&
        grep -qF 'computes its fires as "every 1800000 ms by odbc-leader run --once-per' \
            "$OL_TMP/once-30m.err" &&
        grep -qF 'recorded as "every 3600000 ms by odbc-leader run' \
            "$OL_TMP/once-30m.err" ||
        ol_fail "run --once-per 30m after 1h: exit $rc: $(cat "$OL_TMP/once-30m.err")"
    olc_expect_rc 64 run -C "$OLC_CONN" -n oncens --once 'bad key' -- true \
        2>/dev/null
    rc=0
    olc fence -C "$OLC_CONN" >"$OL_TMP/fence.out" || rc=$?
    [ "$rc" = 0 ] && grep -q '^AND EXISTS' "$OL_TMP/fence.out" ||
        ol_fail "fence: $(cat "$OL_TMP/fence.out")"
}

# Version-1 tables (as odbc-leader 0.1 created them): refused with
# LeaderCreateSchema=no, naming the upgrade; schema --upgrade upgrades
# them in place.
sc_upgrade() {
    local conn err=$OL_TMP/upgrade.err
    ol_log "schema --upgrade of version-1 tables"
    cat >"$OL_TMP/v1.sql" <<'SQL'
CREATE TABLE v1_schema (version INTEGER NOT NULL);
CREATE TABLE v1_lease (namespace VARCHAR(128) NOT NULL PRIMARY KEY,
    leader_id VARCHAR(128) NULL, term BIGINT NOT NULL,
    elected_at_ms BIGINT, renewed_at_ms BIGINT,
    expires_at_ms BIGINT NOT NULL,
    resign_requested INTEGER NOT NULL DEFAULT 0,
    handoff_to VARCHAR(128) NULL);
CREATE TABLE v1_candidate (namespace VARCHAR(128) NOT NULL,
    candidate_id VARCHAR(128) NOT NULL, registered_at_ms BIGINT NOT NULL,
    heartbeat_at_ms BIGINT NOT NULL, expires_at_ms BIGINT NOT NULL,
    PRIMARY KEY (namespace, candidate_id));
INSERT INTO v1_schema (version) VALUES (1);
SQL
    conn=$(olc_apply_sql "$OL_TMP/v1.sql" v1_) || ol_fail "creating v1 tables"
    olc_expect_rc 69 run -C "$conn;LeaderCreateSchema=no;LeaderTablePrefix=v1_" \
        -n upgrade -- true 2>"$err"
    grep -q 'schema --upgrade' "$err" || ol_fail "no upgrade hint: $(cat "$err")"
    olc schema --upgrade -C "$conn;LeaderTablePrefix=v1_" >"$OL_TMP/upgrade.out" ||
        ol_fail "schema --upgrade failed"
    olc_expect_rc 0 run -C "$conn;LeaderCreateSchema=no;LeaderTablePrefix=v1_" \
        -n upgrade --once U -- true
    olc schema --upgrade-sql --dialect sqlite >"$OL_TMP/upgrade.sql" ||
        ol_fail "schema --upgrade-sql failed"
    grep -q 'SET version = 5 WHERE version < 5' "$OL_TMP/upgrade.sql" ||
        ol_fail "schema --upgrade-sql: $(cat "$OL_TMP/upgrade.sql")"
}

# A sharded group's assignment in status: two members (tests/faults/
# group-host, through the library) split 16 shards; status shows the
# shards each leads, in a table, JSON and Prometheus text; after one
# leaves gracefully the other leads all 16; after both left, all unled.
sc_group_status() {
    local host=${top_builddir:-.}/tests/faults/group-host grp=grp-$$ p1 p2
    local conf
    ol_log "status of a sharded group"
    [ -x "$host" ] || ol_fail "not built: $host"
    conf="$OLC_CONN;LeaderNamespace=$grp;LeaderShards=16;LeaderTTL=3000"
    "$host" -q -d "$OL_TMP" "$conf;LeaderId=member-a" &
    p1=$!
    ol_track_pid "$p1"
    "$host" -q -d "$OL_TMP" "$conf;LeaderId=member-b" &
    p2=$!
    ol_track_pid "$p2"
    group_split() {
        olc status -C "$OLC_CONN" -n "$grp" --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
led = sorted(c["shards_led"] for c in s["candidates"])
ok = s["group"] == {"shards": 16, "led": 16, "unled": 0} and \
    len(led) == 2 and led[0] > 0 and sum(led) == 16
sys.exit(0 if ok else 1)'
    }
    for ((i = 0; i < 200; i++)); do
        group_split && break
        sleep 0.1
    done
    group_split || ol_fail "group $grp not split: $(olc status -C "$OLC_CONN" -n "$grp" --json)"
    olc status -C "$OLC_CONN" -n "$grp" >"$OL_TMP/group.txt"
    grep -q '^group: *16 shards, 16 led, 0 unled' "$OL_TMP/group.txt" ||
        ol_fail "status table: $(cat "$OL_TMP/group.txt")"
    grep -Eq '^  member-a +[0-9.]+ s ago +[0-9]+$' "$OL_TMP/group.txt" ||
        ol_fail "status table: $(cat "$OL_TMP/group.txt")"
    olc status -C "$OLC_CONN" -n "$grp" --format=prometheus >"$OL_TMP/group.prom"
    python3 "$srcdir/tests/cli/promcheck.py" \
        "odbc_leader_group_shards{leader_namespace=\"$grp\",namespace=\"$grp\"}=16" \
        "odbc_leader_group_shards_unled{leader_namespace=\"$grp\",namespace=\"$grp\"}=0" \
        "odbc_leader_candidate_shards_led{leader_namespace=\"$grp\",candidate_id=\"member-a\"}>=0" \
        <"$OL_TMP/group.prom" ||
        ol_fail "prometheus: $(cat "$OL_TMP/group.prom")"
    sc_promtool "$(cat "$OL_TMP/group.prom")"
    kill -TERM "$p1"
    olc_wait_pid "$p1"
    for ((i = 0; i < 100; i++)); do
        [ "$(olc status -C "$OLC_CONN" -n "$grp" --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
print([c["shards_led"] for c in s["candidates"]])')" = "[16]" ] && break
        sleep 0.1
    done
    [ "$i" -lt 100 ] || ol_fail "member-b did not take member-a's shards"
    kill -TERM "$p2"
    olc_wait_pid "$p2"
    olc status -C "$OLC_CONN" -n "$grp" >"$OL_TMP/group.txt"
    grep -q '^group: *16 shards, 0 led, 16 unled' "$OL_TMP/group.txt" ||
        ol_fail "status after both left: $(cat "$OL_TMP/group.txt")"
}

olc_scenarios() {
    sc_group_status
    sc_exit_codes
    sc_exactly_once
    sc_min_hold
    sc_lost
    sc_signals
    sc_status
    sc_handoff
    sc_watch
    sc_schema
    sc_once
    sc_upgrade
    olc_recover_scenarios
}
