#!/bin/bash
# SPDX-License-Identifier: MIT
# run-faults.sh: the fault-injection suite. Starts the databases it needs
# (tests/integration/lib.sh: private servers in a temp dir on 127.0.0.1),
# runs the fault schedule with fault-host candidates, checks every run with
# the checker's rules and prints the table of figures.
#
#   run-faults.sh [--short|--long] [--db sqlite,postgresql,mariadb]
#                 [--faults F1,F2] [--negative|--positive] [--table FILE]
#
# --short (default) is the make check schedule, --long the make faults one.
# --negative runs only the negative test: the protocol broken on purpose
# (LeaderTestTrustExtra) must be caught by the checker. Without it the
# negative test runs as part of the schedule; --positive leaves it out. The table goes to stdout and
# to FILE (default fault-table.md in the current directory).
# Runs from the build directory with srcdir and top_builddir set, as
# make check does; by hand from a build dir:
#   srcdir=/path/to/src top_builddir=. /path/to/src/tests/faults/run-faults.sh
# Exit status: 0 pass, 1 fail, 77 skip (a program is missing).
set -eu
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
. "$srcdir/tests/integration/lib.sh"

mode=short
dbs=sqlite,postgresql,mariadb
faults=''
table=$PWD/fault-table.md
while [ $# -gt 0 ]; do
    case $1 in
    --short) mode=short ;;
    --long) mode=long ;;
    --db) dbs=$2; shift ;;
    --faults) faults=$2; shift ;;
    --negative) faults=negative ;;
    --positive) faults=kill-9,sigstop,restart-fast,restart-immediate,session-kill,stall,faketime,churn,unreachable ;;
    --table) table=$2; shift ;;
    *) ol_fail "unknown argument: $1" ;;
    esac
    shift
done

ol_need_cmd python3
host=$top_builddir/tests/faults/fault-host
proxy=$top_builddir/tests/faults/fault-proxy
plugin=$top_builddir/plugin/.libs/odbc_leader.so
for f in "$host" "$proxy" "$plugin"; do
    [ -x "$f" ] || [ -f "$f" ] || ol_fail "not built: $f (run make first)"
done
case ",$faults," in
,, | *,faketime,*) ol_need_cmd faketime ;;
esac

ol_setup
case ",$dbs," in *,sqlite,*) ol_need_driver SQLite3 ;; esac
case ",$dbs," in *,postgresql,*) ol_start_pg ;; esac
case ",$dbs," in *,mariadb,*) ol_start_mariadb ;; esac

args=(--mode "$mode" --db "$dbs" --host "$host" --proxy "$proxy"
    --plugin "$plugin" --checker "$srcdir/tests/faults/checker"
    --lib "$srcdir/tests/integration/lib.sh" --work "$OL_TMP/faults"
    --table "$table")
[ -n "$faults" ] && args+=(--faults "$faults")
ol_log "fault schedule $mode on $dbs"
start=$(date +%s)
rc=0
python3 "$srcdir/tests/faults/schedule.py" "${args[@]}" || rc=$?
ol_log "fault schedule took $(($(date +%s) - start)) s"
if [ "$rc" != 0 ]; then
    OL_KEEP=${OL_KEEP:-0}
    ol_fail "fault schedule failed (records: set OL_KEEP=1 to keep $OL_TMP)"
fi
