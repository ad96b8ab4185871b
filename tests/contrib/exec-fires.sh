# SPDX-License-Identifier: MIT
# exec-fires.sh: the exactly-once schedule of an example that follows the
# integrations' contract (`EXE --plugin SO --connect STR --namespace NS
# --every SECONDS --ttl MS`, a flushed "FIRE <job> <fire_ms> <term>" line
# per fire run, SIGTERM hands over), sourced by the Java and Ruby tests
# after tests/integration/lib.sh and ol_setup. Through
# tests/contrib/scheduler_fires.py --kind exec --faults full --short-stop:
# three processes and a fourth whose clock runs 700 ms ahead (libfaketime),
# a 1-s job on a 2-s lease; the leader is stopped for 1.2 s from just
# before a slot (it keeps its lease; its scheduler wakes late), killed -9
# just after a fire, then just before one, stopped with SIGSTOP past its
# TTL and continued, then stopped with SIGTERM; every slot from the first
# fire to the last ran exactly once, at its nominal time, in the term that
# claimed it, as the FIRE lines and `odbc-leader fires --json` show
# (tests/contrib/check_fires.py).
FAKETIME_LIB=$(ls /usr/lib/*/faketime/libfaketimeMT.so.1 2>/dev/null | head -n 1)
[ -n "$FAKETIME_LIB" ] || ol_fail "no libfaketimeMT.so.1: install faketime"
EXEC_PLUGIN=$(cd "${top_builddir:-.}/plugin/.libs" && pwd)/odbc_leader.so
EXEC_OLC=$(cd "${top_builddir:-.}" && pwd)/odbc-leader
for f in "$EXEC_PLUGIN" "$EXEC_OLC"; do
    [ -e "$f" ] || ol_fail "missing $f (build first)"
done

# exec_fires NAME EXE CONNECT [ARGS...]: the schedule; its output in
# $OL_TMP/NAME.out. ARGS go to scheduler_fires.py (--env K=V...).
# Returns the driver's status.
exec_fires() {
    local name=$1 exe=$2 connect=$3
    shift 3
    python3 "${srcdir:-.}/tests/contrib/scheduler_fires.py" --kind exec \
        --exe "$exe" --faults full --short-stop \
        --faketime-lib "$FAKETIME_LIB" --plugin "$EXEC_PLUGIN" \
        --connect "$connect" --odbc-leader "$EXEC_OLC" \
        --checker "${srcdir:-.}/tests/contrib/check_fires.py" \
        --work "$OL_TMP/$name" "$@" >"$OL_TMP/$name.out" 2>&1
}

# exec_good NAME EXE CONNECT [ARGS...]: exec_fires that must pass; logs
# its summary.
exec_good() {
    local name=$1
    if ! exec_fires "$@"; then
        cat "$OL_TMP/$name.out"
        ol_fail "$name: exactly once broken"
    fi
    ol_log "$name: $(grep -h -E -o '[0-9]* runs [0-9]* ms or more after their slot started' \
        "$OL_TMP/$name.out" | head -n 1) (caught up); $(tail -n 1 "$OL_TMP/$name.out")"
}

# exec_broken NAME EXE CONNECT [ARGS...]: exec_fires of a broken variant,
# started in the background; exec_caught NAME then waits for it, which
# must fail for a slot that ran twice or a fire run at a time its
# schedule does not name.
declare -A exec_pid
exec_broken() {
    exec_fires "$@" &
    exec_pid[$1]=$!
}
exec_caught() {
    local name=$1 pattern='^slot [0-9]+: ran [2-9] times|not a slot.s start'
    if wait "${exec_pid[$name]}"; then
        cat "$OL_TMP/$name.out"
        ol_fail "the checker passed the broken variant $name"
    fi
    grep -E -q "$pattern" "$OL_TMP/$name.out" || {
        cat "$OL_TMP/$name.out"
        ol_fail "the broken variant $name failed, but not for a fire run" \
            "twice or at an invented time"
    }
    ol_log "broken variant $name caught: $(grep -E -c '^slot [0-9]+: ran [2-9] times' \
        "$OL_TMP/$name.out") slots ran more than once, $(grep -E -c \
        'not a slot.s start' "$OL_TMP/$name.out") fires at an invented time"
}
