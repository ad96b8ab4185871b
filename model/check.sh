#!/bin/bash
# SPDX-License-Identifier: MIT
# check.sh: model-checks the election, its fire claims, the promotion of a
# stale replica and forward steps of the database clock (model/leader.pml),
# and the handover and rebalance of sharded groups (model/group.pml), with
# spin, and the rule groups move to, shards held under their member's
# lease (model/member.pml), for `make model`. The base models, with and without claims,
# promotions and clock steps, must verify with no error in a full,
# untruncated search;
# each broken variant must give a counterexample, whose trail is printed.
# Prints a table and exits non-zero when any expectation fails.
#
# Usage: model/check.sh [MODEL_DIR]   (default: the directory of this script)
# Environment: CC (default gcc), SPIN (default spin), OL_KEEP=1 keeps the
# work directory, MODEL_JOBS (default: the number of processors) runs that
# many configurations at once. The "depth" of a variant is the length of
# the shortest counterexample its iterative search found.

# Flags held in one variable are split into words on purpose.
# shellcheck disable=SC2086
set -u

dir=${1:-$(dirname "$0")}
jobs=${MODEL_JOBS:-$(nproc 2>/dev/null || echo 1)}
spin=${SPIN:-spin}
cc=${CC:-gcc}

if ! command -v "$spin" >/dev/null 2>&1; then
    echo "check.sh: spin not found: install the Debian package spin" \
        "(apt-get install spin)" >&2
    exit 1
fi
if ! command -v "${cc%% *}" >/dev/null 2>&1; then
    echo "check.sh: C compiler '$cc' not found" >&2
    exit 1
fi
for model in leader.pml group.pml member.pml; do
    if [ ! -r "$dir/$model" ]; then
        echo "check.sh: $dir/$model not found" >&2
        exit 1
    fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/ol-model.XXXXXX") || exit 1
if [ "${OL_KEEP:-0}" = 1 ]; then
    echo "check.sh: work directory $work"
else
    trap 'rm -rf "$work"' EXIT
fi
trap 'exit 1' HUP INT TERM

names=""

# now: prints the time in seconds with centiseconds.
now() {
    date +%s.%N | awk '{printf "%.2f", $1}'
}

# field FILE REGEX: prints the first number on the first line matching REGEX.
field() {
    grep -E "$2" "$1" | head -n 1 | grep -oE '[0-9][0-9.e+]*' | head -n 1
}

# one NAME EXPECT FLAGS MODEL [DEEP]: generates, compiles and runs pan for
# one configuration of MODEL (leader.pml, group.pml or member.pml) in
# $work/NAME, printing what it has to say; its table row goes to
# $work/NAME/row and a failed expectation leaves $work/NAME/failed. EXPECT
# is "verify" (no error, full search) or "violate" (at least one error;
# its trail is printed). DEEP (violate only): a plain depth-first search
# to that depth instead of the shortest counterexample within 30 steps;
# the depth shown is that of the trail found.
one() {
    name=$1
    expect=$2
    flags=$3
    model=$4
    deep=${5:-}
    d="$work/$name"
    mkdir -p "$d" && cp "$dir/$model" "$d/$model" || exit 1
    t0=$(now)
    if ! (cd "$d" && "$spin" -a $flags "$model" >spin.log 2>&1); then
        cat "$d/spin.log"
        echo "check.sh: $name: spin -a failed" >&2
        : >"$d/failed"
        return
    fi
    if [ "$expect" = verify ]; then
        ccflags="-O2 -DSAFETY -DMEMLIM=4096"
        panflags="-m20000 -w23"
    elif [ -n "$deep" ]; then
        ccflags="-O2 -DSAFETY -DMEMLIM=4096"
        panflags="-m$deep -w22"
    else
        # -DREACH with -i: iterative search for the shortest
        # counterexample within depth 30 (the ones known are 17 to 24
        # steps long; a clock tick is one step)
        ccflags="-O2 -DSAFETY -DREACH -DMEMLIM=4096"
        panflags="-m30 -i -w22"
    fi
    if ! (cd "$d" && $cc $ccflags -o pan pan.c >cc.log 2>&1); then
        cat "$d/cc.log"
        echo "check.sh: $name: compiling pan failed" >&2
        : >"$d/failed"
        return
    fi
    (cd "$d" && ./pan $panflags >pan.log 2>&1)
    t1=$(now)
    log="$d/pan.log"
    errors=$(grep -oE 'errors: [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+')
    stored=$(field "$log" 'states, stored')
    trans=$(field "$log" 'transitions \(')
    depth=$(grep -oE 'depth reached [0-9]+' "$log" | tail -n 1 |
        grep -oE '[0-9]+')
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')
    result=ok
    if [ -z "$errors" ]; then
        result=FAILED
        echo "check.sh: $name: pan gave no result" >&2
        cat "$log" >&2
    elif [ "$expect" = verify ]; then
        if [ "$errors" -ne 0 ]; then
            result=FAILED
            echo "check.sh: $name: expected no error, pan found $errors:" >&2
            grep -E 'violated|error' "$log" >&2
            echo "---- $name: the trail's last steps"
            (cd "$d" && "$spin" -t $flags "$model" 2>&1 |
                grep -E '^ *\||Error|text of failed' |
                sed 's/^ *//; s/   */ /g' | tail -n 40)
        elif grep -q 'max search depth too small' "$log" ||
            ! grep -q 'Full statespace search' "$log"; then
            result=FAILED
            echo "check.sh: $name: the search was not complete" >&2
        fi
    else
        if [ "$errors" -eq 0 ] || [ ! -f "$d/$model.trail" ]; then
            result=FAILED
            echo "check.sh: $name: expected a counterexample, found none" \
                "within ${deep:-30} steps" >&2
        else
            if [ -n "$deep" ]; then
                depth=$(grep -oE 'at depth [0-9]+' "$log" | head -n 1 |
                    grep -oE '[0-9]+$')
            else
                depth=$(grep 'reducing search depth' "$log" | tail -n 1 |
                    grep -oE '[0-9]+$')
            fi
            echo "---- $name: counterexample, $depth steps"
            (cd "$d" && "$spin" -t $flags "$model" 2>&1 |
                grep -E '^ *\||Error|text of failed' |
                sed 's/^ *//; s/   */ /g')
        fi
    fi
    [ "$result" = ok ] || : >"$d/failed"
    printf '| %-22s | %-7s | %-6s | %9s | %11s | %5s | %6s |\n' \
        "$name" "$expect" "$result" "${stored:--}" "${trans:--}" \
        "${depth:--}" "$secs" >"$d/row"
}

# run NAME EXPECT FLAGS [MODEL [DEEP]]: queues one configuration (MODEL
# defaults to leader.pml; DEEP as one's); start_all runs them. Its output
# is printed, in the order of the run lines, when all are done.
declare -A q_expect q_flags q_model q_deep
run() {
    names="$names $1"
    q_expect[$1]=$2
    q_flags[$1]=$3
    q_model[$1]=${4:-leader.pml}
    q_deep[$1]=${5:-}
}

# The longest searches, longest first (group-k1 about 100 s on the 2-core
# VM, 23.6 million states; then 30, 21 and 19 s): start_all starts them
# before the others. Started in the order of the run lines, group-k1 came
# last and ran alone while the other processors idled.
longest_first="group-k1 promote-claims-n2 steps-claims-n2 promote-twice-n2"

# start_all: runs the queued configurations, $longest_first first, then the
# rest in the order of the run lines, each in the background once fewer
# than $jobs run, and waits for all of them.
start_all() {
    local name
    for name in $longest_first $names; do
        [ -n "${q_expect[$name]:-}" ] || continue
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
            wait -n
        done
        one "$name" "${q_expect[$name]}" "${q_flags[$name]}" \
            "${q_model[$name]}" "${q_deep[$name]}" >"$work/$name.out" 2>&1 &
        unset "q_expect[$name]"
    done
    wait
}

echo "check.sh: $("$spin" -V)"
t_all=$(now)

# Base model: N candidates, local clocks within rho = 1/S of the database's,
# TTL = T ticks = T*S local units, margin T local units = rho * TTL.
# Takeover of a held lease needs the watch: the row unchanged for one TTL
# on the taker's clock (and expired in database time).
run base-n2 verify "-DN=2 -DS=2 -DT=2 -DMAXTERM=3"
run base-n2-rho4 verify "-DN=2 -DS=4 -DT=2 -DMAXTERM=3"
# Broken variants: each must yield an overlap of two trust windows.
run no-margin violate "-DN=2 -DS=2 -DT=2 -DMAXTERM=2 -DNO_MARGIN"
run short-margin violate "-DN=2 -DS=2 -DT=2 -DMAXTERM=2 -DSHORT_MARGIN"
run short-margin-rho4 violate "-DN=2 -DS=4 -DT=2 -DMAXTERM=2 -DSHORT_MARGIN"
run anchor-response violate "-DN=2 -DS=2 -DT=2 -DMAXTERM=2 -DANCHOR_RESPONSE"
# Fire claims (FIRES fires that every process that believes it holds a
# term claims, by a term-fenced statement) verify with clock steps below
# (steps-claims-n2); without steps they are checked by hand.
# Broken claims: each must yield a claim that breaks CLAIM_FENCED or
# CLAIM_ONCE.
run claim-unfenced violate \
    "-DN=2 -DS=2 -DT=2 -DMAXTERM=2 -DFIRES=2 -DBROKEN_CLAIM_UNFENCED"
run claim-no-unique violate \
    "-DN=2 -DS=2 -DT=2 -DMAXTERM=2 -DFIRES=2 -DBROKEN_CLAIM_NO_UNIQUE"
# Promotion of a stale asynchronous replica (PROMOTE promotions per run,
# the replica's copy refreshed at any time or never), made safe by the
# epoch quarantine. They keep only the stale row's epoch (ERASE_STALE,
# exact for the correct statements: docs/protocol.md); the full copy is
# checked by hand.
run promote-n2 verify \
    "-DN=2 -DS=2 -DT=2 -DMAXTERM=3 -DPROMOTE=1 -DERASE_STALE"
run promote-claims-n2 verify \
    "-DN=2 -DS=2 -DT=2 -DMAXTERM=2 -DPROMOTE=1 -DFIRES=1 -DERASE_STALE"
run promote-twice-n2 verify \
    "-DN=2 -DS=2 -DT=2 -DMAXTERM=3 -DPROMOTE=2 -DERASE_STALE"
# Broken promotion handling: a term issued twice (TERMS), two windows at
# once (NO_OVERLAP), a claim on a stale term (CLAIM_FENCED).
run no-quarantine violate \
    "-DN=2 -DS=2 -DT=2 -DMAXTERM=3 -DPROMOTE=1 -DBROKEN_NO_QUARANTINE"
run first-row-wins violate \
    "-DN=2 -DS=2 -DT=2 -DMAXTERM=3 -DPROMOTE=1 -DBROKEN_FIRST_ROW"
run term-reissue violate \
    "-DN=2 -DS=2 -DT=1 -DMAXTERM=2 -DPROMOTE=1 -DBROKEN_TERM_REISSUE"
run claim-no-epoch violate \
    "-DN=2 -DS=2 -DT=2 -DMAXTERM=3 -DPROMOTE=1 -DFIRES=1 \
     -DBROKEN_CLAIM_NO_EPOCH"
# Forward steps of the database clock, any number and size (STEPS). The
# margin is 2*T*S/(S+1) local units, rounded up: 3 for S=2, T=2; 4 for
# S=2, T=3, where the model's ticks are fine enough to show that one unit
# less fails.
run steps-n2 verify "-DN=2 -DS=2 -DT=2 -DMAXTERM=3 -DSTEPS"
run steps-n2-t3 verify "-DN=2 -DS=2 -DT=3 -DMAXTERM=2 -DSTEPS"
run steps-claims-n2 verify "-DN=2 -DS=2 -DT=2 -DMAXTERM=2 -DSTEPS -DFIRES=2"
# The fire lifecycle's recovery (RECOVER): a fire's next attempt is taken
# only in a later term, so the previous attempt's claimant can no longer
# act for it (RECOVER_APART), with clock steps; offering it on the
# database's expiry alone is refuted.
run recover-steps-n2 verify \
    "-DN=2 -DS=2 -DT=2 -DMAXTERM=2 -DSTEPS -DFIRES=1 -DRECOVER"
run recover-on-expiry violate \
    "-DN=2 -DS=2 -DT=2 -DMAXTERM=2 -DSTEPS -DFIRES=1 -DRECOVER \
     -DBROKEN_RECOVER_ON_EXPIRY"
run steps-promote-n2 verify \
    "-DN=2 -DS=2 -DT=2 -DMAXTERM=3 -DSTEPS -DPROMOTE=1 -DERASE_STALE"
# Broken step handling: each must yield an overlap of two trust windows.
# The margin one unit short; the watch's floor one unit short (at the
# margin 2, which the model verifies at S=2, T=2 with the full floor);
# no watch (database time alone); the rule of ed8ea1f (step detection,
# quarantine, first sight).
run steps-short-margin violate \
    "-DN=2 -DS=2 -DT=3 -DMAXTERM=2 -DSTEPS -DSHORT_MARGIN"
run watch-short violate \
    "-DN=2 -DS=2 -DT=2 -DMAXTERM=2 -DSTEPS -DMARGIN=2 -DWATCH_SHORT"
run no-watch violate "-DN=2 -DS=2 -DT=2 -DMAXTERM=2 -DSTEPS -DNO_WATCH"
run old-rule violate "-DN=2 -DS=2 -DT=2 -DMAXTERM=2 -DSTEPS -DOLD_RULE"

# Sharded groups (model/group.pml): two members, one or two shards, every
# choice of takes and releases, statements given up on that still run
# (orphans), crashes under the same id, up to MAXSEQ ticks per member.
# The searches of two shards, of a crash and of clock steps leave orphans
# out (-DNO_ORPHAN: the one-shard search covers them).
run group-k1 verify "-DK=1 -DT=1 -DMAXTERM=2 -DMAXINC=1 -DMAXSEQ=4" group.pml
run group-k2 verify \
    "-DK=2 -DT=1 -DMAXTERM=2 -DMAXINC=1 -DMAXSEQ=3 -DNO_ORPHAN" group.pml
run group-crash verify \
    "-DK=1 -DT=1 -DMAXTERM=2 -DMAXINC=2 -DCRASH_ONE -DNO_ORPHAN" group.pml
run group-steps verify \
    "-DK=1 -DT=2 -DMAXTERM=2 -DMAXINC=1 -DSTEPS -DNO_ORPHAN" group.pml
# Broken group variants: each must yield two windows on one shard.
run group-release-early violate \
    "-DK=1 -DT=1 -DMAXTERM=2 -DMAXINC=1 -DRELEASE_BEFORE_STOP" group.pml
run group-revive-stale violate \
    "-DK=1 -DT=1 -DMAXTERM=2 -DMAXINC=1 -DREVIVE_STALE" group.pml
run group-rel-unfenced violate \
    "-DK=1 -DT=1 -DMAXTERM=3 -DMAXINC=1 -DRELEASE_UNFENCED" group.pml
run group-no-watch violate \
    "-DK=1 -DT=2 -DMAXTERM=2 -DMAXINC=1 -DSTEPS -DNO_WATCH -DNO_ORPHAN" \
    group.pml

# Shards held under their member's lease (model/member.pml), the rule the
# group dialects run: a member's steady tick renews its lease row alone
# and may be answered without the shard rows. TTL 2 ticks (at 1 a lease lapses at every tick); each search
# bounds the ticks per incarnation, the one with orphans to 2. A lapse
# restarts the member as a new incarnation; a crash search of this model
# (MAXINC=2, 43 million states, about 270 s here) is left out of make
# model.
run member-k1 verify \
    "-DK=1 -DT=2 -DMAXTERM=2 -DMAXINC=1 -DMAXSEQ=3 -DNO_ORPHAN" member.pml
run member-orphan verify \
    "-DK=1 -DT=2 -DMAXTERM=2 -DMAXINC=1 -DMAXSEQ=2" member.pml
run member-k2 verify \
    "-DK=2 -DT=2 -DMAXTERM=2 -DMAXINC=1 -DMAXSEQ=2 -DNO_ORPHAN" member.pml
run member-steps verify \
    "-DK=1 -DT=2 -DMAXTERM=2 -DMAXINC=1 -DMAXSEQ=3 -DSTEPS -DNO_ORPHAN" \
    member.pml
# Broken member-lease variants: each must yield two windows on one shard.
# A shard trusted after its holder's lease lapsed needs a longer trail
# than the iterative search's 30 steps: a depth-first search finds one.
run member-lapse-trusted violate \
    "-DK=1 -DT=2 -DMAXTERM=2 -DMAXINC=1 -DMAXSEQ=3 -DNO_ORPHAN -DLAPSE_TRUSTED" \
    member.pml 100
run member-release-early violate \
    "-DK=1 -DT=2 -DMAXTERM=2 -DMAXINC=1 -DRELEASE_BEFORE_STOP" member.pml
run member-rel-unfenced violate \
    "-DK=1 -DT=2 -DMAXTERM=3 -DMAXINC=1 -DRELEASE_UNFENCED" member.pml
run member-no-watch violate \
    "-DK=1 -DT=2 -DMAXTERM=2 -DMAXINC=1 -DSTEPS -DNO_WATCH -DNO_ORPHAN" \
    member.pml
run member-steady-release violate \
    "-DK=1 -DT=2 -DMAXTERM=2 -DMAXINC=1 -DSTEADY_RELEASE" member.pml

start_all
failures=0
for name in $names; do
    cat "$work/$name.out"
    [ -f "$work/$name/failed" ] && failures=$((failures + 1))
done
t_end=$(now)
echo
echo "| configuration          | expect  | result | states    | transitions | depth | secs   |"
echo "|------------------------|---------|--------|-----------|-------------|-------|--------|"
for name in $names; do
    cat "$work/$name/row" 2>/dev/null ||
        printf '| %-22s | %-7s | %-6s |\n' "$name" - FAILED
done
echo
echo "total $(awk -v a="$t_all" -v b="$t_end" 'BEGIN {printf "%.0f", b - a}') s;" \
    "configurations failing their expectation: $failures"
[ "$failures" -eq 0 ]
