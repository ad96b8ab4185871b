# SPDX-License-Identifier: MIT
# tests/cli/recover.sh: the fire lifecycle through "odbc-leader run --once
# --recover" (docs/lifecycle.md), sourced by tests/cli/scenarios.sh after
# tests/cli/lib.sh: a leader killed (kill -9) or paused (SIGSTOP) while its
# CMD runs, a job paused and run now. Every CMD here holds an exclusive
# flock on one file for its whole life and writes "OVERLAP" when it finds
# that lock taken, so two attempts alive at once cannot go unseen (the
# checker, seen failing in sc_recover_broken).

# The CMD of the recovery scenarios, for the files of $1 (a prefix): takes
# $1.lock or logs OVERLAP and exits 9; logs "start ATTEMPT RECOVERING
# FIRE"; attempt 1 (and any attempt listed in $1.slow) then sleeps until
# killed, the others end at once with "end ATTEMPT".
olc_rec_cmd() {
    printf '%s' "exec 9>>'$1.lock'; flock -n 9 || { echo OVERLAP >>'$1.log'; exit 9; }; echo \"start \$ODBC_LEADER_ATTEMPT \$ODBC_LEADER_RECOVERING \$ODBC_LEADER_FIRE_MS\" >>'$1.log'; if grep -qx \"\$ODBC_LEADER_ATTEMPT\" '$1.slow' 2>/dev/null; then while :; do sleep 0.1; done; fi; echo \"end \$ODBC_LEADER_ATTEMPT\" >>'$1.log'"
}

# Prints field $3 of fire (job $2, the only fire of that job) of
# namespace $1 from "fires --json".
olc_fire_field() {
    olc fires -C "$OLC_CONN" -n "$1" --job "$2" --json |
        python3 -c 'import json, sys
rows = [json.loads(l) for l in sys.stdin if l.strip()]
assert len(rows) == 1, rows
v = rows[0][sys.argv[1]]
print("" if v is None else v)' "$3"
}

# Waits until fire field $3 of job $2 in namespace $1 is $4 (at most 15 s).
olc_wait_fire() {
    local i v=''
    for ((i = 0; i < 150; i++)); do
        v=$(olc_fire_field "$1" "$2" "$3" 2>/dev/null) || v=''
        [ "$v" = "$4" ] && return 0
        sleep 0.1
    done
    ol_fail "$1: fire of $2: $3 is '$v', expected '$4'"
}

# Starts "run --once K --recover N" for the files of $2 with id $1 in the
# background (extra run options after $3); sets olc_pid.
olc_rec_start() {
    local id=$1 f=$2 n=$3
    shift 3
    "$OLC_BIN" run -C "$OLC_CONN" -n "$(basename "$f")" --id "$id" \
        --once K --recover "$n" "$@" -- sh -c "$(olc_rec_cmd "$f")" \
        2>>"$f.$id.err" &
    olc_pid=$!
    ol_track_pid "$olc_pid"
}

# kill -9 of the leader while attempt 1 runs: a second host, waiting all
# along, runs the fire again once, as attempt 2 and recovering, after the
# first term ended, never beside attempt 1; the fire is then done and a
# third run exits 84.
sc_recover_kill() {
    local f=$OL_TMP/reckill a b
    ol_log "run --once --recover 2: kill -9 of the leader mid-fire"
    echo 1 >"$f.slow"
    olc_rec_start ra "$f" 2
    a=$olc_pid
    olc_wait_file "$f.log"
    olc_rec_start rb "$f" 2
    b=$olc_pid
    sleep 1
    kill -0 "$b" 2>/dev/null || ol_fail "the second run ended while attempt 1 ran"
    kill -9 "$a"
    olc_wait_pid "$b" 20
    [ "$olc_rc" = 0 ] || ol_fail "the recovering run exited $olc_rc: $(cat "$f.rb.err")"
    [ "$(cut -d' ' -f1-3 "$f.log" | tr '\n' '|')" = "start 1 0|start 2 1|end 2|" ] ||
        ol_fail "CMD's log: $(tr '\n' '|' <"$f.log")"
    [ "$(olc_fire_field reckill K state)" = done ] &&
        [ "$(olc_fire_field reckill K attempt)" = 2 ] &&
        [ "$(olc_fire_field reckill K claimed_by)" = rb ] ||
        ol_fail "fire K: $(olc fires -C "$OLC_CONN" -n reckill --json)"
    olc_expect_rc 84 run -C "$OLC_CONN" -n reckill --once K --recover 2 \
        -- true 2>/dev/null
}

# Without --recover the killed leader's fire is recorded interrupted by the
# next term and never runs again; with --recover 2 and a second kill
# during attempt 2 it is abandoned.
sc_recover_none_and_cap() {
    local f=$OL_TMP/recnone g=$OL_TMP/reccap a b
    ol_log "run --once: interrupted without --recover, abandoned at the cap"
    echo 1 >"$f.slow"
    olc_rec_start na "$f" 1
    a=$olc_pid
    olc_wait_file "$f.log"
    kill -9 "$a"
    olc_expect_rc 84 run -C "$OLC_CONN" -n recnone --once K -- true 2>/dev/null
    olc_expect_rc 0 run -C "$OLC_CONN" -n recnone --once OTHER -- true
    [ "$(olc_fire_field recnone K state)" = interrupted ] ||
        ol_fail "fire K: $(olc fires -C "$OLC_CONN" -n recnone --json)"
    [ "$(cut -d' ' -f1-2 "$f.log" | tr '\n' '|')" = "start 1|" ] ||
        ol_fail "CMD's log: $(tr '\n' '|' <"$f.log")"

    printf '1\n2\n' >"$g.slow"
    olc_rec_start ca "$g" 2
    a=$olc_pid
    olc_wait_file "$g.log"
    olc_rec_start cb "$g" 2
    b=$olc_pid
    kill -9 "$a"
    olc_wait_fire reccap K attempt 2
    kill -9 "$b"
    olc_expect_rc 0 run -C "$OLC_CONN" -n reccap --once OTHER -- true
    [ "$(olc_fire_field reccap K state)" = abandoned ] ||
        ol_fail "fire K: $(olc fires -C "$OLC_CONN" -n reccap --json)"
    olc_expect_rc 84 run -C "$OLC_CONN" -n reccap --once K --recover 2 \
        -- true 2>/dev/null
    [ "$(cut -d' ' -f1-3 "$g.log" | tr '\n' '|')" = "start 1 0|start 2 1|" ] ||
        ol_fail "CMD's log: $(tr '\n' '|' <"$g.log")"
}

# SIGSTOP of the leader past its TTL: its supervisor kills attempt 1 at
# the trust window's end, the next leader runs attempt 2; after SIGCONT
# the old run's finish is refused by its term and the fire stays the
# recovery's. $1 "broken": the old run trusts its term past the lease
# (LeaderTestTrustExtra), so attempt 2 starts beside attempt 1 and the
# flock checker must see it.
sc_recover_stop() {
    local f=$OL_TMP/recstop$1 a b
    ol_log "run --once --recover 2: SIGSTOP of the leader mid-fire ($1)"
    echo 1 >"$f.slow"
    if [ "$1" = broken ]; then
        OLC_CONN="$OLC_CONN;LeaderTestTrustExtra=20000" olc_rec_start sa "$f" 2
    else
        olc_rec_start sa "$f" 2
    fi
    a=$olc_pid
    olc_wait_file "$f.log"
    kill -STOP "$a"
    olc_rec_start sb "$f" 2
    b=$olc_pid
    olc_wait_pid "$b" 20
    kill -CONT "$a"
    if [ "$1" = broken ]; then
        grep -q OVERLAP "$f.log" ||
            ol_fail "broken variant: the checker saw no overlap: $(tr '\n' '|' <"$f.log")"
        kill -9 "$a" 2>/dev/null || true
        return 0
    fi
    [ "$olc_rc" = 0 ] || ol_fail "the recovering run exited $olc_rc: $(cat "$f.sb.err")"
    olc_wait_pid "$a" 20
    [ "$olc_rc" = 80 ] || ol_fail "the stopped run exited $olc_rc, expected 80"
    grep -q 'later term took its fire again' "$f.sa.err" ||
        ol_fail "the stopped run's finish: $(cat "$f.sa.err")"
    ! grep -q OVERLAP "$f.log" || ol_fail "CMD's log: $(tr '\n' '|' <"$f.log")"
    [ "$(olc_fire_field "recstop$1" K state)" = done ] &&
        [ "$(olc_fire_field "recstop$1" K claimed_by)" = sb ] ||
        ol_fail "fire K: $(olc fires -C "$OLC_CONN" -n "recstop$1" --json)"
}

# A paused job's fires are skipped on the leader (run exits 84 and the
# fire of a slot is recorded skipped; a one-off key stays unused and runs
# after the resume).
sc_jobs() {
    local out
    ol_log "jobs pause, resume, trigger"
    olc_expect_rc 0 jobs -C "$OLC_CONN" -n jobsns pause K >/dev/null
    olc_expect_rc 84 run -C "$OLC_CONN" -n jobsns --once K --once-per 1h \
        -- true 2>/dev/null
    [ "$(olc_fire_field jobsns K state)" = skipped ] ||
        ol_fail "fire K: $(olc fires -C "$OLC_CONN" -n jobsns --json)"
    olc_expect_rc 84 run -C "$OLC_CONN" -n jobsns --once K -- true 2>/dev/null
    out=$(olc jobs -C "$OLC_CONN" -n jobsns --json)
    python3 -c 'import json, sys
j = json.loads(sys.argv[1])
assert j["job"] == "K" and j["paused"] is True and j["fires"] == 1, j' "$out" ||
        ol_fail "jobs --json: $out"
    olc_expect_rc 0 jobs -C "$OLC_CONN" -n jobsns resume K >/dev/null
    olc_expect_rc 0 run -C "$OLC_CONN" -n jobsns --once K -- true
    olc_expect_rc 64 jobs -C "$OLC_CONN" -n jobsns pause 2>/dev/null
    olc_expect_rc 64 jobs -C "$OLC_CONN" -n jobsns stop K 2>/dev/null
    olc_expect_rc 64 jobs -C "$OLC_CONN" -n jobsns pause 'bad job' 2>/dev/null
    olc_expect_rc 64 run -C "$OLC_CONN" -n jobsns --recover 2 -- true \
        2>/dev/null
}

olc_recover_scenarios() {
    sc_jobs
    sc_recover_kill
    sc_recover_none_and_cap
    sc_recover_stop plain
    if grep -q '^#define ODBC_LEADER_TEST_HOOKS 1' \
        "${top_builddir:-.}/build_config.h" && [ -z "${OL_C_PATHS_ONLY:-}" ]; then
        sc_recover_stop broken
    fi
}
