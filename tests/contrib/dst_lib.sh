# SPDX-License-Identifier: MIT
# dst_lib.sh: the DST phases of an engine's example at the changes of
# America/New_York (2025), shared by node-dst.test, java-dst.test and
# ruby-dst.test; sourced after tests/integration/lib.sh, ol_setup and
# tests/contrib/tz_lib.sh (tz_env, tz_await_real).
#
# Each phase runs the example alone, one host that leads, with its wall
# clock (libfaketime; monotonic clocks left alone) DST_LEAD s before an
# instant, for DST_LEAD + 5 s:
#   A  05:30Z with a daily 01:30: 01:30 EDT, the overlap's first pass;
#   B  06:30Z, the same job on the same database: 01:30 EST, its second
#      pass, as a host that restarts (or takes over) within the repeated
#      hour sees it; "the first" means nothing more runs, whether the
#      engine drops the time or claims it as the first pass's key;
#   C  07:00Z with a daily 02:30, a fresh database: 03:00 EDT, the spring
#      gap's end;
#   D  07:30Z, the same job: 03:30 EDT, an hour after 02:30.
# An engine that runs a time of the gap an hour later does so only when
# it was running before the gap; a host started within the hour after it
# (D) computes tomorrow's 02:30. So D runs nothing for every engine, and
# "an hour later" is told from "skipped" by the engine's own next-time
# function in the binding's unit tests, not here.
# The including test defines dst_exec NAME CONNECT CRON: execs the example
# NAME on connection string CONNECT with --cron CRON (a job named daily),
# its FIRE lines on stdout, its log on stderr.

A_0530=$(date -u -d '2025-11-02 05:30:00 UTC' +%s) # 01:30 EDT
A_0630=$((A_0530 + 3600))                          # 01:30 EST
S_0700=$(date -u -d '2025-03-09 07:00:00 UTC' +%s) # 03:00 EDT, the gap's end
S_0730=$((S_0700 + 1800))                          # 03:30 EDT
DST_LEAD=${DST_LEAD:-8}

# dst_phase DIR NAME TZ AT CRON [SAME]: one phase of example NAME in zone
# TZ, its clock DST_LEAD s before AT (epoch s), its database in DIR (a
# fresh one unless SAME is given); prints the fire_ms of its FIRE lines,
# space-separated.
dst_phase() {
    local dir=$1 name=$2 tz=$3 at=$4 cron=$5 t0 pid
    [ -n "${6:-}" ] || rm -f "$dir/dst.db"
    : >"$dir/out"
    t0=$(date -u +%s)
    # shellcheck disable=SC2046 # tz_env prints NAME=VALUE words
    (export $(tz_env $((at - DST_LEAD))) TZ="$tz"
    dst_exec "$name" \
        "Driver=SQLite3;Database=$dir/dst.db;LeaderTTL=1500;LeaderId=$name" \
        "$cron") >>"$dir/out" 2>>"$dir/err" &
    pid=$!
    tz_await_real $((t0 + DST_LEAD + 5))
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" || true
    awk '$1 == "FIRE" { printf "%s ", $3 }' "$dir/out"
}

# dst_dir NAME TZ: the directory of NAME's phases in zone TZ.
dst_dir() {
    echo "$OL_TMP/dst-$1-${2//\//_}"
}

# dst_runs NAME TZ AUTUMN SPRING: the four phases of example NAME in zone
# TZ (AUTUMN: a daily 01:30 in the engine's cron syntax; SPRING: 02:30),
# written as "A:MS B:MS C:MS D:MS" (each phase's fires, ms) to
# $(dst_dir NAME TZ)/result.
dst_runs() {
    local dir a b c d
    dir=$(dst_dir "$1" "$2")
    mkdir -p "$dir"
    a=$(dst_phase "$dir" "$1" "$2" "$A_0530" "$3")
    b=$(dst_phase "$dir" "$1" "$2" "$A_0630" "$3" same)
    c=$(dst_phase "$dir" "$1" "$2" "$S_0700" "$4")
    d=$(dst_phase "$dir" "$1" "$2" "$S_0730" "$4")
    echo "A:${a% } B:${b% } C:${c% } D:${d% }" >"$dir/result"
}

# dst_expected OVERLAP GAP: the result of an engine whose identity says
# "(DST gap: GAP; overlap: OVERLAP)" (docs/schedules.md): OVERLAP "the
# first" or "the second"; GAP "skipped", "the gap's end" or "an hour
# later".
dst_expected() {
    local ab cd
    case $1 in
    "the first") ab="A:${A_0530}000 B:" ;;
    "the second") ab="A: B:${A_0630}000" ;;
    *) ol_fail "dst_expected: overlap $1?" ;;
    esac
    case $2 in
    skipped | "an hour later") cd="C: D:" ;;
    "the gap's end") cd="C:${S_0700}000 D:" ;;
    *) ol_fail "dst_expected: gap $2?" ;;
    esac
    echo "$ab $cd"
}

# dst_check NAME TZ OVERLAP GAP: 0 when NAME's result in zone TZ is what
# its rule gives, else prints both and the tail of its log and returns 1.
dst_check() {
    local got want dir
    dir=$(dst_dir "$1" "$2")
    got=$(cat "$dir/result")
    want=$(dst_expected "$3" "$4")
    if [ "$got" = "$want" ]; then
        ol_log "$1 in $2: $got (overlap: $3; gap: $4)"
        return 0
    fi
    echo "== $1's log" >&2
    tail -n 30 "$dir/err" >&2
    ol_log "$1 in $2 ran $got, want $want (overlap: $3; gap: $4)"
    return 1
}
