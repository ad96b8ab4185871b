#!/bin/bash
# SPDX-License-Identifier: MIT
# run.sh: the make bench driver. Starts private PostgreSQL and MariaDB
# servers (tests/integration/lib.sh), runs the benchmark parts one after
# another, then merges their results into bench-results.json and
# bench-results.md (a markdown table docs/performance.md can paste) in the
# current directory and prints the combined table. Never part of make
# check. From a build directory:
#
#   make bench                                # every part
#   make bench BENCH_ARGS='--only latency,isleader'
#   make bench BENCH_ARGS=--short             # the short mode (./dev test)
#   srcdir=/path/to/src top_builddir=. /path/to/src/bench/run.sh [--short]
#       [--only P,Q]
#
# Exit status: 0 when every part that ran passed (or skipped), 1 otherwise.
# A part fails when it exits with another status than 0 or 77, or when
# its rows are malformed (benchlib.py check: a row without a metric, a
# unit or a numeric value; no value at all only with a note saying why).
# OL_KEEP=1 keeps the temp dir (servers' logs, the parts' work files).
#
# The short mode (--short, or BENCH_SHORT=1 in the environment) runs every
# part with the smallest rounds and durations that still take every path
# of the part and print every row (each part picks them when BENCH_SHORT
# is 1; a variable set explicitly still wins), in about 3.5 minutes. It
# checks that the bench still works, not how fast anything is: no target
# is judged, and its figures mean nothing. A part fails it also by exiting
# 77 (skipping) or writing no rows. It writes bench-results-short.json and
# bench-results-short.md, so a full run's results stay.
#
# ---- Interface for parts -------------------------------------------------
# A part is bench/part-NAME.sh; the driver runs the ones that exist, in the
# order of $part_order below, then any other bench/part-*.sh alphabetically.
# --only NAME[,NAME] runs a subset. Each part runs with bash, from the
# build directory, with this environment:
#   srcdir, top_builddir  as for the tests (AM_TESTS_ENVIRONMENT)
#   BENCH_DIR    where the part writes BENCH_DIR/NAME.json: a JSON list of
#                rows {"metric", "dialect", "value", "unit", "target",
#                "note"} (value a number; target a short text such as
#                "<= 1.25" or "1"; dialect sqlite, postgresql, mariadb or
#                "-"). Easiest: $BENCH_PY add "$BENCH_DIR/NAME.json"
#                metric=... dialect=... value=... unit=... target=...
#                note=... (one call per row).
#   BENCH_WORK   an empty scratch directory of its own
#   BENCH_SHORT  1 in the short mode: take the smallest rounds and
#                durations that still run every path and write every row
#                (a variable the user set explicitly still wins), never
#                skip, and judge no target (exit 0 unless something broke);
#                else 0
#   BENCH_PY     "python3 $srcdir/bench/benchlib.py" (add, show, stats,
#                check, merge: see that file)
#   BENCH_HAVE_SQLITE, BENCH_HAVE_PG, BENCH_HAVE_MARIADB
#                1 when that database is usable, else 0
#   ODBCSYSINI, ODBCINI, OL_TMP
#                the hermetic ODBC configuration (drivers "SQLite3",
#                "PostgreSQL Unicode", "MariaDB Unicode") and the run's
#                temp dir
#   OL_PG_CONNECT, OL_PG_PORT, OL_PG_USER, OL_PG_BIN, OL_PG_DATA, ...
#                PostgreSQL (database "leader"), started with
#                pg_stat_statements preloaded; it and pg_walinspect
#                exist in database "postgres"
#   OL_MARIADB_CONNECT, OL_MARIADB_PORT, OL_MARIADB_USER,
#   OL_MARIADB_PASSWORD, OL_MARIADB_SOCK, ...
#                MariaDB (database "leader"); never print the password or
#                the connection string
# A part may source tests/integration/lib.sh (without calling ol_setup) for
# ol_psql, ol_mariadb and the stop/restart helpers; a server it stops it
# must start again before it exits. It uses namespaces of its own
# (bench-NAME-...). It prints its human-readable table on stdout (e.g.
# $BENCH_PY show "$BENCH_DIR/NAME.json") and progress on stderr, and exits
# 0 when done, 77 when it has nothing to measure here, anything else on
# failure. Rows of a failed part are still merged. The SQL a part runs
# outside the library comes from bench/bench-dialect (the library's own
# dialect expansion), never from reading sql/*.sql itself.
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-.}
export srcdir top_builddir
. "$srcdir/tests/integration/lib.sh"

part_order="roundtrips latency isleader memory failover handoff claims scale groups fleet serve"
only=''
BENCH_SHORT=${BENCH_SHORT:-0}
while [ $# -gt 0 ]; do
    case $1 in
    --only) only=$2; shift ;;
    --only=*) only=${1#--only=} ;;
    --short) BENCH_SHORT=1 ;;
    *) ol_fail "unknown argument: $1 (usage: run.sh [--short] [--only PART[,PART]])" ;;
    esac
    shift
done
[ "$BENCH_SHORT" = 1 ] || BENCH_SHORT=0
export BENCH_SHORT

# Prints the names of the parts to run, in order.
bench_parts() {
    local p f names=''
    for p in $part_order; do
        [ -f "$srcdir/bench/part-$p.sh" ] && names="$names $p"
    done
    for f in "$srcdir"/bench/part-*.sh; do
        [ -f "$f" ] || continue
        p=${f##*/part-}
        p=${p%.sh}
        case " $names " in *" $p "*) ;; *) names="$names $p" ;; esac
    done
    for p in $names; do
        case ",${only:-$p}," in *",$p,"*) echo "$p" ;; esac
    done
}

# Prints the machine description (markdown list) for the results.
bench_machine() {
    local cpu mem os v p
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
    mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
    os=$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-unknown}")
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- machine: $(nproc) CPUs ($cpu), $mem RAM, $os, kernel $(uname -r)"
    for p in postgresql-15 mariadb-server odbc-postgresql odbc-mariadb \
        libsqliteodbc libsqlite3-0 unixodbc libmariadb3; do
        v=$(dpkg-query -W -f '${Version}' "$p" 2>/dev/null) || continue
        echo "- $p $v"
    done
}

# Starts the servers the parts may use and exports BENCH_HAVE_*.
bench_servers() {
    BENCH_HAVE_SQLITE=0 BENCH_HAVE_PG=0 BENCH_HAVE_MARIADB=0
    case " ${OL__DRIVERS_MISSING:-} " in
    *" [SQLite3] "*) ;;
    *) BENCH_HAVE_SQLITE=1 ;;
    esac
    if (ol_need_driver "PostgreSQL Unicode") 2>/dev/null &&
        ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
        ol_start_pg "-c shared_preload_libraries=pg_stat_statements"
        ol_psql "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" postgres ||
            ol_fail "CREATE EXTENSION pg_stat_statements failed"
        ol_psql "CREATE EXTENSION IF NOT EXISTS pg_walinspect" postgres ||
            ol_fail "CREATE EXTENSION pg_walinspect failed"
        BENCH_HAVE_PG=1
    else
        ol_log "PostgreSQL or its ODBC driver missing: its figures are skipped"
    fi
    if (ol_need_driver "MariaDB Unicode") 2>/dev/null &&
        ol__mariadb_prog mariadbd mysqld >/dev/null; then
        ol_start_mariadb
        BENCH_HAVE_MARIADB=1
    else
        ol_log "MariaDB or its ODBC driver missing: its figures are skipped"
    fi
    export BENCH_HAVE_SQLITE BENCH_HAVE_PG BENCH_HAVE_MARIADB
}

# Runs part $1; returns its exit status, or 1 when its rows are malformed
# (or, in the short mode, missing).
bench_run_part() {
    local rc=0 t0=$SECONDS
    BENCH_WORK=$OL_TMP/work-$1
    mkdir -p "$BENCH_WORK"
    export BENCH_WORK
    echo
    echo "== $1 =="
    ol_log "part $1 starts"
    bash "$srcdir/bench/part-$1.sh" || rc=$?
    ol_log "part $1 ended with status $rc ($((SECONDS - t0)) s)"
    if [ "$BENCH_SHORT" = 1 ] && [ "$rc" = 77 ]; then
        ol_log "part $1 skipped: the short mode needs every part"
        rc=1
    fi
    if [ "$rc" != 77 ] && ! $BENCH_PY check "$BENCH_DIR/$1.json" >&2; then
        ol_log "part $1: its rows are missing or malformed"
        [ "$rc" = 0 ] && rc=1
    fi
    return "$rc"
}

ol_need_cmd python3
# bench-handoff.py imports benchlib.py: no __pycache__ in the source tree
export PYTHONDONTWRITEBYTECODE=1
parts=$(bench_parts)
[ -n "$parts" ] || ol_fail "no part matches --only $only"
ol_setup
BENCH_DIR=$OL_TMP/results
BENCH_PY="python3 $srcdir/bench/benchlib.py"
mkdir -p "$BENCH_DIR"
export BENCH_DIR BENCH_PY
bench_servers
start=$(date +%s)
failed=''
for p in $parts; do
    rc=0
    bench_run_part "$p" || rc=$?
    case $rc in
    0 | 77) ;;
    *) failed="$failed $p" ;;
    esac
done
bench_machine >"$OL_TMP/machine.md"
json=()
for p in $parts; do
    [ -s "$BENCH_DIR/$p.json" ] && json+=("$BENCH_DIR/$p.json")
done
out=bench-results
if [ "$BENCH_SHORT" = 1 ]; then
    out=bench-results-short
    echo "- short mode (make bench BENCH_ARGS=--short): the figures mean nothing" \
        >>"$OL_TMP/machine.md"
fi
$BENCH_PY merge "$PWD/$out.json" "$PWD/$out.md" \
    "$OL_TMP/machine.md" "${json[@]}" || ol_fail "merging the results failed"
echo
echo "== results ($(($(date +%s) - start)) s; $out.md, $out.json) =="
cat "$PWD/$out.md"
if [ -n "$failed" ]; then
    echo "FAILED parts:$failed" >&2
    exit 1
fi
[ "$BENCH_SHORT" = 1 ] &&
    echo "short mode: every part ran and wrote its rows ($(($(date +%s) - start)) s)"
exit 0
