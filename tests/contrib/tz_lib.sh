# SPDX-License-Identifier: MIT
# tz_lib.sh: the time-zone scenario of schedule identities
# (docs/schedules.md), shared by every integration's test, sourced after
# tests/integration/lib.sh and ol_setup.
#
# Three processes of one integration share one SQLite file and an hourly
# job: host-a and host-b with TZ=UTC, host-c with TZ=Asia/Kolkata, whose
# hourly fires fall half an hour after UTC's (+05:30). Their clocks are
# moved with libfaketime (the same offset for all, monotonic clocks left
# alone; SQLite's clock is theirs) to just before a UTC hour H: host-a
# leads and runs the job at H:00Z. All stop; their clocks move to just
# before H:30Z, host-c leads and its fire at H:30Z would be the job's
# second run in hour H, unless the ledger refuses its claim.
#
# The including test defines:
#   tz_start HOST TZ CONF CLOCK_S  starts HOST in the background with
#       "$(tz_env CLOCK_S)" in its environment (and TZ), its stdout in
#       $OL_TMP/HOST.out, stderr in $OL_TMP/HOST.err; sets PID.
#   tz_runs  prints "FIRE_MS HOST" for every run of the hourly job.
#   TZ_LEADS  an ERE that HOST.err matches once HOST leads.
# and calls tz_phases, then tz_check_once_per_hour on the runs.

FAKETIME_LIB=$(ls /usr/lib/*/faketime/libfaketimeMT.so.1 2>/dev/null | head -n 1)
[ -n "$FAKETIME_LIB" ] || ol_fail "no libfaketimeMT.so.1: install faketime"
# How long before each boundary the phase starts. A host that leads less
# than a second before its boundary, or after it, started too slowly (a
# Python host under load took 8.5 s, beside the Java tests): its engine
# never schedules that fire, and a job with no fire in the ledger catches
# up nothing. tz_phases then runs its phases again with twice the lead.
TZ_LEAD_S=${TZ_LEAD_S:-10}
TZ_AFTER_S=${TZ_AFTER_S:-4} # how long after it the phase ends

# The first UTC hour boundary at least two minutes ahead (epoch s).
TZ_NOW=$(date -u +%s)
TZ_H=$(((TZ_NOW / 3600 + 1) * 3600))
[ $((TZ_H - TZ_NOW)) -ge 120 ] || TZ_H=$((TZ_H + 3600))

# Prints the environment (NAME=VALUE words) that sets a process's clock
# to CLOCK_S (epoch s) now: libfaketime, the wall clock only.
tz_env() {
    local d=$(($1 - $(date -u +%s)))
    [ "$d" -lt 0 ] || d=+$d # libfaketime's offset: +N or -N seconds
    echo "LD_PRELOAD=$FAKETIME_LIB FAKETIME=$d FAKETIME_DONT_FAKE_MONOTONIC=1"
}

# The lines of $OL_TMP/$1.err so far (0 when none).
tz_lines() {
    if [ -e "$OL_TMP/$1.err" ]; then wc -l <"$OL_TMP/$1.err"; else echo 0; fi
}

# Waits (at most 20 s) until $OL_TMP/$1.err, after its first $2 lines (a
# run of the same host before), matches TZ_LEADS. Sets TZ_LED_AT (epoch s).
tz_await_leader() {
    for _ in $(seq 200); do
        if tail -n +$(($2 + 1)) "$OL_TMP/$1.err" 2>/dev/null |
            grep -Eq "$TZ_LEADS"; then
            TZ_LED_AT=$(date -u +%s)
            return 0
        fi
        sleep 0.1
    done
    ol_fail "$1 never led: $(tail -n 5 "$OL_TMP/$1.err")"
}

# Waits until the real clock reaches $1 (epoch s).
tz_await_real() {
    while [ "$(date -u +%s)" -lt "$1" ]; do sleep 0.2; done
}

# Stops the processes $@ with SIGTERM and reaps them.
tz_stop() {
    kill -TERM "$@" 2>/dev/null || true
    wait "$@" || true
}

# Runs both phases into a fresh database with extra config $1 (e.g.
# ";LeaderTestNoSchedule=1", the broken variant). Sets TZ_CONF (without
# LeaderId). Runs them again, once, with twice the lead when a phase's
# host led late (TZ_LEAD_S); fails when it does again.
tz_phases() {
    tz__phases_once "$1" && return 0
    ol_log "a host led less than a second before its boundary (it started" \
        "too slowly): the phases again with a lead of $((TZ_LEAD_S * 2)) s"
    TZ_LEAD_S=$((TZ_LEAD_S * 2))
    tz__phases_once "$1" ||
        ol_fail "a host led less than a second before its boundary again"
}

# Succeeds when the host that led the phase started at t0 $1 led at least
# a second before the phase's boundary (TZ_LEAD_S after t0).
tz__led_in_time() {
    [ $((TZ_LED_AT - $1)) -lt $((TZ_LEAD_S - 1)) ]
}

# tz_phases once; returns 1 when a phase's host led late.
tz__phases_once() {
    local a b c n t0 rc=0
    TZ_CONF="Driver=SQLite3;Database=$OL_TMP/tz.db;LeaderNamespace=tz"
    TZ_CONF="$TZ_CONF;LeaderTTL=1500;LeaderRenewInterval=250;LeaderSafetyMargin=150$1"
    rm -f "$OL_TMP/tz.db" "$OL_TMP"/host-*.out "$OL_TMP"/host-*.err
    # minicron's job writes its runs there (minicron-tz.test)
    [ ! -e "$OL_TMP/runs.log" ] || : >"$OL_TMP/runs.log"
    # phase 1: the clocks just before H, host-a (UTC) leads
    t0=$(date -u +%s)
    tz_start host-a UTC "$TZ_CONF" $((TZ_H - TZ_LEAD_S))
    a=$PID
    tz_await_leader host-a 0
    tz__led_in_time "$t0" || rc=1
    tz_start host-b UTC "$TZ_CONF" $((TZ_H - TZ_LEAD_S + $(date -u +%s) - t0))
    b=$PID
    tz_start host-c Asia/Kolkata "$TZ_CONF" \
        $((TZ_H - TZ_LEAD_S + $(date -u +%s) - t0))
    c=$PID
    tz_await_real $((t0 + TZ_LEAD_S + TZ_AFTER_S))
    tz_stop "$a" "$b" "$c"
    # phase 2: the clocks just before H + 30 min, host-c (Kolkata) leads
    t0=$(date -u +%s)
    n=$(tz_lines host-c)
    tz_start host-c Asia/Kolkata "$TZ_CONF" $((TZ_H + 1800 - TZ_LEAD_S))
    c=$PID
    tz_await_leader host-c "$n"
    tz__led_in_time "$t0" || rc=1
    tz_start host-b UTC "$TZ_CONF" \
        $((TZ_H + 1800 - TZ_LEAD_S + $(date -u +%s) - t0))
    b=$PID
    tz_await_real $((t0 + TZ_LEAD_S + TZ_AFTER_S))
    tz_stop "$b" "$c"
    return $rc
}

# The checker: reads "FIRE_MS HOST" lines on stdin; exits 1 naming the
# hour when the job ran more than once in one UTC hour, 0 otherwise.
tz_check_once_per_hour() {
    awk '{ h = int($1 / 3600000); n[h]++; who[h] = who[h] " " $2 "@" $1 }
         END { bad = 0
               for (h in n) if (n[h] > 1) {
                   printf "hour %d: %d runs:%s\n", h, n[h], who[h]; bad = 1 }
               exit bad }'
}

# The common checks of both variants, after tz_phases: with identities
# ($1 = on), host-a ran at H:00Z, host-c never ran, no hour twice, and
# `odbc-leader jobs schedules` ($OLC) shows host-c's refusal of schedule
# $2 (a fixed string of host-c's identity); broken ($1 = off), the
# checker must find host-a's and host-c's runs in hour H.
tz_verify() {
    local runs out
    runs=$(tz_runs | sort -n)
    echo "runs ($1):" >&2
    echo "$runs" >&2
    if [ "$1" = on ]; then
        echo "$runs" | grep -qx "$((TZ_H * 1000)) host-a" ||
            ol_fail "host-a did not run at H:00Z: $runs"
        if echo "$runs" | grep -q ' host-c$'; then
            ol_fail "host-c ran with identities on: $runs"
        fi
        out=$(echo "$runs" | tz_check_once_per_hour) ||
            ol_fail "a double run with identities on: $out"
        out=$("$OLC" jobs -C "$TZ_CONF;LeaderId=op" schedules --json)
        echo "$out" >&2
        echo "$out" | grep -qF "\"refused\":\"$2\"" &&
            echo "$out" | grep -q '"refused_by":"host-c"' ||
            ol_fail "no refusal of host-c's schedule recorded: $out"
    else
        if out=$(echo "$runs" | tz_check_once_per_hour); then
            ol_fail "the checker missed the double run: $runs"
        fi
        echo "$out" | grep -q \
            "2 runs: host-a@$((TZ_H * 1000)) host-c@$(((TZ_H + 1800) * 1000))" ||
            ol_fail "not the expected double run: $out"
    fi
}
