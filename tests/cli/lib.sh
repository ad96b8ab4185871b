# SPDX-License-Identifier: MIT
# tests/cli/lib.sh: helpers for the odbc-leader command's tests, sourced
# after tests/integration/lib.sh (and after ol_setup).
#
#   olc ARGS...                  run the built odbc-leader
#   olc_expect_rc WANT ARGS...   run it, fail unless it exits WANT
#   olc_field NS FIELD           a field of "status --json" for NS
#   olc_wait_leader NS ID [S]    wait (at most S seconds) until ID leads NS
#   olc_wait_field NS F V [S]    wait until field F of NS's status is V
#   olc_wait_file FILE [S]       wait until FILE exists and is not empty
#   olc_wait_pid PID [S]         wait for a background job; sets olc_rc
#
# Every helper reads the connection string from $OLC_CONN.

OLC_BIN=${top_builddir:-.}/odbc-leader
[ -x "$OLC_BIN" ] || ol_fail "no odbc-leader at $OLC_BIN (build first)"
ol_need_cmd python3
# Never touch the caller's ~/.local/state.
export XDG_STATE_HOME="$OL_TMP/state"
unset ODBC_LEADER_CONNECT ODBC_LEADER_DSN

olc() {
    "$OLC_BIN" "$@"
}

# Runs odbc-leader with the remaining arguments; fails unless the exit
# status is $1.
olc_expect_rc() {
    local want=$1 rc=0
    shift
    "$OLC_BIN" "$@" || rc=$?
    [ "$rc" = "$want" ] || ol_fail "odbc-leader $*: exit $rc, expected $want"
}

# Prints field $2 of "status --json" for namespace $1 ("" for null;
# Python's str() otherwise: True/False for booleans).
olc_field() {
    olc status -C "$OLC_CONN" -n "$1" --json |
        python3 -c 'import json, sys
v = json.load(sys.stdin)[sys.argv[1]]
print("" if v is None else v)' "$2"
}

# Waits until field $2 of namespace $1 equals $3, at most $4 seconds
# (default 10). Fails otherwise.
olc_wait_field() {
    local i v=''
    for ((i = 0; i < ${4:-10} * 10; i++)); do
        v=$(olc_field "$1" "$2" 2>/dev/null) || v=''
        [ "$v" = "$3" ] && return 0
        sleep 0.1
    done
    ol_fail "namespace $1: $2 is '$v' after ${4:-10} s, expected '$3'"
}

olc_wait_leader() {
    olc_wait_field "$1" leader "$2" "${3:-10}"
}

# Waits until file $1 exists and is not empty, at most $2 seconds.
olc_wait_file() {
    local i
    for ((i = 0; i < ${2:-10} * 10; i++)); do
        [ -s "$1" ] && return 0
        sleep 0.1
    done
    ol_fail "$1 still empty after ${2:-10} s"
}

# Waits for background job $1 (a child of this shell) at most $2 seconds
# (default 15) and sets olc_rc to its exit status. Fails on timeout.
olc_wait_pid() {
    local i
    for ((i = 0; i < ${2:-15} * 10; i++)); do
        if ! kill -0 "$1" 2>/dev/null; then
            olc_rc=0
            wait "$1" || olc_rc=$?
            return 0
        fi
        sleep 0.1
    done
    ol_fail "process $1 still running after ${2:-15} s"
}
