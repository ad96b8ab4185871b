#!/bin/bash
# SPDX-License-Identifier: MIT
# contrib/demo.sh: a ~20 second demonstration of leader election.
#
#   contrib/demo.sh [--check] [BUILD_DIR]
#
# Starts three leader-host processes (alpha, bravo, charlie) campaigning in
# one namespace of one SQLite file, shows who leads, kills the leader with
# SIGKILL and times the takeover (the lease has to expire), then stops the
# new leader with SIGTERM and times the graceful handoff (it resigns, so
# this is faster). With --check the exit status is non-zero unless exactly
# one leader was seen at every stage, never two at once, both takeovers
# happened and terms only grew; make check uses that.
#
# Environment:
#   LEADER_HOST    leader-host binary (BUILD_DIR/contrib/leader-host/leader-host)
#   LEADER_PLUGIN  plugin .so (BUILD_DIR/plugin/.libs/odbc_leader.so)
#   LEADER_CONFIG  config template; @DIR@ is the demo's temp dir, @NAME@
#                  the host's name. Default:
#                  Driver=SQLite3;Database=@DIR@/leader.db;LeaderNamespace=demo;LeaderTTL=3000;LeaderId=@NAME@
#   DEMO_KEEP=1    keep the temp dir (host outputs) for inspection
set -u

check=0
if [ "${1:-}" = --check ]; then
    check=1
    shift
fi
builddir=${1:-.}
host_bin=${LEADER_HOST:-$builddir/contrib/leader-host/leader-host}
plugin=${LEADER_PLUGIN:-$builddir/plugin/.libs/odbc_leader.so}
template=${LEADER_CONFIG:-'Driver=SQLite3;Database=@DIR@/leader.db;LeaderNamespace=demo;LeaderTTL=3000;LeaderId=@NAME@'}
names="alpha bravo charlie"
timeout_s=20 # per stage

declare -A pid    # name -> pid of its leader-host
alive=""          # names of the hosts still running
problems=0        # failed expectations
max_leaders=0     # most leaders ever seen at one poll
summary=""

die() {
    echo "demo: $*" >&2
    exit 1
}

# Records a failed expectation; fatal only with --check.
problem() {
    echo "PROBLEM: $*"
    problems=$((problems + 1))
}

now_ms() {
    echo $(($(date +%s%N) / 1000000))
}

# Formats milliseconds as seconds with three decimals.
secs() {
    printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000))
}

say() {
    printf '[%6ss] %s\n' "$(secs $(($(now_ms) - start_ms)))" "$*"
}

pause() {
    if [ "$check" = 1 ]; then sleep 1; else sleep 4; fi
}

# Stops every host still running (SIGTERM, then SIGKILL) and removes the
# temp dir unless DEMO_KEEP=1. Runs from the EXIT trap.
# shellcheck disable=SC2317
cleanup() {
    local n i
    for n in $alive; do
        kill -TERM "${pid[$n]}" 2>/dev/null
    done
    for ((i = 0; i < 30; i++)); do
        jobs -rp | grep -q . || break
        sleep 0.1
    done
    for n in $alive; do
        kill -KILL "${pid[$n]}" 2>/dev/null
    done
    wait 2>/dev/null
    if [ "${DEMO_KEEP:-0}" = 1 ]; then
        echo "demo: kept $dir"
    else
        rm -rf -- "$dir"
    fi
}

# The state a host last printed: leader, follower, stopped or none.
state_of() {
    local line
    line=$(grep -E "^$1: (leader|follower|stopped)" "$dir/$1.out" | tail -n 1)
    case $line in
    "$1: leader"*) echo leader ;;
    "$1: follower"*) echo follower ;;
    "$1: stopped") echo stopped ;;
    *) echo none ;;
    esac
}

# The last term a host printed as leader.
term_of() {
    grep -E "^$1: leader term=" "$dir/$1.out" | tail -n 1 | sed 's/.*term=//'
}

# Sets $leaders to the running hosts whose last state is leader, counts
# them in $nleaders and remembers the highest count ever seen.
poll_leaders() {
    local n
    leaders="" nleaders=0
    for n in $alive; do
        if [ "$(state_of "$n")" = leader ]; then
            leaders="$leaders $n"
            nleaders=$((nleaders + 1))
        fi
    done
    leaders=${leaders# }
    if [ "$nleaders" -gt "$max_leaders" ]; then
        max_leaders=$nleaders
        if [ "$nleaders" -gt 1 ]; then
            problem "$nleaders leaders at once: $leaders"
        fi
    fi
}

# Fails when a host that should run has exited.
check_alive() {
    local n
    for n in $alive; do
        if ! kill -0 "${pid[$n]}" 2>/dev/null; then
            tail -n 5 "$dir/$n.out" "$dir/$n.err" >&2
            die "$n exited unexpectedly"
        fi
    done
}

# Waits until exactly one running host other than $1 leads; sets $leader.
# Returns 1 after $timeout_s seconds.
wait_new_leader() {
    local deadline=$(($(now_ms) + timeout_s * 1000))
    while [ "$(now_ms)" -lt "$deadline" ]; do
        check_alive
        poll_leaders
        if [ "$nleaders" = 1 ] && [ "$leaders" != "$1" ]; then
            leader=$leaders
            return 0
        fi
        sleep 0.05
    done
    return 1
}

# Prints each running host's last state line.
show() {
    local n
    for n in $alive; do
        echo "           $(grep -E "^$n: " "$dir/$n.out" | tail -n 1)"
    done
}

# Checks that the term of the new leader $1 is above $2; prints it.
check_term() {
    local t
    t=$(term_of "$1")
    if [ -z "$t" ] || [ "$t" -le "$2" ]; then
        problem "term did not grow: $1 has term '$t' after term $2"
    fi
    term=${t:-0}
}

# Removes $1 from the running hosts.
forget() {
    alive=$(echo " $alive " | sed "s/ $1 / /; s/^ *//; s/ *$//")
}

case $plugin in /*) ;; *) plugin=$PWD/$plugin ;; esac
[ -x "$host_bin" ] || die "no leader-host at $host_bin (build first, or set LEADER_HOST)"
[ -f "$plugin" ] || die "no plugin at $plugin (build first, or set LEADER_PLUGIN)"
dir=$(mktemp -d "${TMPDIR:-/tmp}/odbc-leader-demo.XXXXXXXX") || die "mktemp failed"
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
start_ms=$(now_ms)

echo "== odbc-leader demo: 3 candidates, one SQLite database, lease TTL 3 s =="
for n in $names; do
    config=${template//@DIR@/$dir}
    config=${config//@NAME@/$n}
    "$host_bin" -p "$plugin" -n "$n" "$config" >"$dir/$n.out" 2>"$dir/$n.err" &
    pid[$n]=$!
    alive="$alive $n"
done
alive=${alive# }
say "started $alive"

wait_new_leader "" || die "no single leader after ${timeout_s} s"
first=$leader
term=$(term_of "$first")
say "$first leads (term $term):"
show
pause
poll_leaders
[ "$leaders" = "$first" ] || problem "leadership moved without a failure: $leaders"
summary="start: $first leads, term $term"

echo
say "kill -9 $first (no chance to resign: the others wait for its lease to expire)"
t0=$(now_ms)
kill -KILL "${pid[$first]}"
wait "${pid[$first]}" 2>/dev/null # reap it quietly
forget "$first"
if ! wait_new_leader "$first"; then
    problem "no takeover within ${timeout_s} s after kill -9 $first"
    die "giving up"
fi
crash_ms=$(($(now_ms) - t0))
second=$leader
check_term "$second" "$term"
say "$second took over after $(secs "$crash_ms") s (term $term):"
show
summary="$summary
crash: kill -9 $first -> $second leads after $(secs "$crash_ms") s, term $term"
pause

echo
say "kill -TERM $second (graceful: it resigns on its way out)"
prev_term=$term
t0=$(now_ms)
kill -TERM "${pid[$second]}"
forget "$second"
if ! wait_new_leader "$second"; then
    problem "no takeover within ${timeout_s} s after SIGTERM to $second"
    die "giving up"
fi
handoff_ms=$(($(now_ms) - t0))
third=$leader
check_term "$third" "$prev_term"
say "$third took over after $(secs "$handoff_ms") s (term $term):"
show
wait "${pid[$second]}"
rc=$?
[ "$rc" = 0 ] || problem "$second exited with status $rc after SIGTERM"
grep -q "^$second: stopped" "$dir/$second.out" ||
    problem "$second did not report a clean stop"
summary="$summary
handoff: SIGTERM $second -> $third leads after $(secs "$handoff_ms") s, term $term"

echo
echo "== summary =="
echo "$summary"
echo "most leaders seen at once: $max_leaders"
if [ "$problems" -gt 0 ]; then
    echo "$problems problem(s) seen"
    [ "$check" = 1 ] && exit 1
fi
exit 0
