# SPDX-License-Identifier: MIT
# tests/integration/lib.sh: helpers sourced by the integration test scripts.
#
# The scripts run under automake's test harness from the build directory,
# with $srcdir set. Typical use:
#
#   . "$srcdir/tests/integration/lib.sh"
#   ol_setup                     # private temp dir + hermetic ODBC config
#   ol_need_driver SQLite3       # exit 77 (SKIP) when a driver is missing
#   ol_need_test_hooks           # exit 77 unless built --enable-test-hooks
#   ol_start_pg                  # private PostgreSQL on 127.0.0.1
#   ol_start_mariadb             # or a private MariaDB on 127.0.0.1
#   conn=$OL_PG_CONNECT          # or: conn=$(ol_sqlite_connect "$OL_TMP/x.db")
#
# Exit codes follow automake: 0 pass, 1 fail, 77 skip. Skip only when a
# required program or driver is really absent (CI installs everything),
# or in the sanitizer pass (ol_c_paths_only_skip).
# ol_setup owns the EXIT/INT/TERM traps: add cleanup with ol_on_exit and
# background processes with ol_track_pid instead of calling trap yourself.
# Works with or without `set -eu` in the calling script. ol_stop_pg,
# ol_start_pg_again, ol_restart_pg and ol_psql also work in a child bash
# that sources this file without calling ol_setup: the OL_* variables they
# need are exported by ol_setup and ol_start_pg.

OL_PG_DB=leader

# Prints a message on stderr and exits 77 (automake SKIP).
ol_skip() {
    echo "SKIP: $*" >&2
    exit 77
}

# Skips with the message, or fails with it when OL_REQUIRE_CONTRIB is set
# (./dev test sets it: the Java and Ruby tests must not skip there, a skip
# would hide a missing install).
ol_contrib_need() {
    [ -z "${OL_REQUIRE_CONTRIB:-}" ] || ol_fail "$*"
    ol_skip "$*"
}

# Exits 77 (SKIP) in the sanitizer pass of ./dev (OL_C_PATHS_ONLY=1),
# which repeats only the tests of C code paths: a Python binding, a
# checker's broken variant or a guide ran in the plain pass against the
# same library. $* says what the test is.
ol_c_paths_only_skip() {
    [ -z "${OL_C_PATHS_ONLY:-}" ] ||
        ol_skip "$*: the sanitizer pass (OL_C_PATHS_ONLY) repeats C code paths only"
}

# Prints the databases a fault schedule runs on by default: $1, or in the
# sanitizer pass (OL_C_PATHS_ONLY) $2 alone. The plain pass ran the
# schedule on every database; the C code paths a schedule drives (the
# elector, reconnects, the ports) are the same on each, and the sanitizer
# pass spreads the schedules over the databases (tests/faults: the group
# schedule on PostgreSQL, the command's on MariaDB, the claims' on SQLite)
# while the integration tests still run every dialect under it.
ol_c_paths_dbs() {
    if [ -n "${OL_C_PATHS_ONLY:-}" ]; then
        printf '%s\n' "$2"
    else
        printf '%s\n' "$1"
    fi
}

# Prints a message on stderr and exits 1 (automake FAIL).
ol_fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# Exits 77 (SKIP) unless the build in $top_builddir was configured with
# --enable-test-hooks (its build_config.h defines ODBC_LEADER_TEST_HOOKS):
# the tests that need LeaderTestTrustExtra, which such a build refuses.
ol_need_test_hooks() {
    local h=${top_builddir:-.}/build_config.h
    [ -f "$h" ] || ol_fail "ol_need_test_hooks: no $h (not a build directory?)"
    grep -q '^#define ODBC_LEADER_TEST_HOOKS 1' "$h" ||
        ol_skip "needs LeaderTestTrustExtra: this build was configured without --enable-test-hooks"
}

# Prints a progress line on stderr (ends up in the test's .log file).
ol_log() {
    echo "[$(date +%H:%M:%S)] $*" >&2
}

# Skips the test unless every named command is on PATH.
ol_need_cmd() {
    local c
    for c in "$@"; do
        command -v "$c" >/dev/null 2>&1 || ol_skip "missing program: $c"
    done
}

# Prints the full path of an ODBC driver library, or nothing.
ol__find_driver_lib() {
    local f
    for f in /usr/lib/*/odbc/"$1" /usr/lib/odbc/"$1" /usr/lib64/odbc/"$1"; do
        if [ -e "$f" ]; then
            echo "$f"
            return 0
        fi
    done
    return 1
}

# Skips the test unless ol_setup found the named driver (odbcinst.ini
# section name: SQLite3, "PostgreSQL Unicode" or "MariaDB Unicode").
ol_need_driver() {
    case " ${OL__DRIVERS_MISSING:-} " in
    *" [$1] "*) ol_skip "missing ODBC driver library for [$1]" ;;
    esac
}

# Appends a shell command to run at exit (before the temp dir goes away).
ol_on_exit() {
    OL__ON_EXIT="${OL__ON_EXIT:-}$1;"
}

# Prints the start time of process $1 (field 22 of /proc/PID/stat, in
# clock ticks since boot); fails when there is no such process.
ol__start_time() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) } # the fields after the command's name: state first
    # shellcheck disable=SC2086 # split on purpose
    set -- $stat
    echo "${20}"
}

# Registers a background process to be killed at exit, with its start
# time: the cleanup kills it only while that PID is still that process.
# The kernel gives a PID again once its process is reaped (pid_max is
# 32768 here, and the suite starts far more processes than that), so a
# tracked process that ended early may have passed its PID to another
# test's process, which a kill by number alone would hit (seen: a
# finished test's cleanup killed the next test's candidates).
ol_track_pid() {
    local t
    t=$(ol__start_time "$1") || return 0 # gone already: nothing to kill
    OL__PIDS="${OL__PIDS:-} $1:$t"
}

# The EXIT trap: kills tracked processes, stops PostgreSQL, removes OL_TMP
# unless OL_KEEP=1. Never changes the script's exit status.
ol__cleanup() {
    local rc=$? pid entry
    set +e
    if [ -n "${OL__ON_EXIT:-}" ]; then
        eval "$OL__ON_EXIT"
    fi
    for entry in ${OL__PIDS:-}; do
        pid=${entry%%:*}
        # only the process tracked, never another that got its PID since
        if [ "$(ol__start_time "$pid")" = "${entry#*:}" ]; then
            kill -TERM "$pid" 2>/dev/null && sleep 0.2
            [ "$(ol__start_time "$pid")" = "${entry#*:}" ] &&
                kill -KILL "$pid" 2>/dev/null
        fi
        wait "$pid" 2>/dev/null
    done
    if [ -n "${OL_PG_DATA:-}" ] && [ -f "$OL_PG_DATA/postmaster.pid" ]; then
        ol__pg_as "$OL_PG_BIN/pg_ctl" -D "$OL_PG_DATA" -m immediate \
            -w -t 30 stop >/dev/null 2>&1
    fi
    if [ -n "${OL_TMP:-}" ] && [ -d "$OL_TMP" ]; then
        if [ "${OL_KEEP:-0}" = 1 ]; then
            echo "OL_KEEP=1: kept $OL_TMP" >&2
        else
            rm -rf -- "$OL_TMP"
        fi
    fi
    return "$rc"
}

# Writes one odbcinst.ini section when its driver library exists, else
# records the driver as missing. $1 section, $2 library file, rest: lines.
ol__driver_section() {
    local name=$1 lib=$2 path line
    shift 2
    path=$(ol__find_driver_lib "$lib") || {
        OL__DRIVERS_MISSING="${OL__DRIVERS_MISSING:-} [$name]"
        return 0
    }
    {
        echo "[$name]"
        echo "Driver=$path"
        for line in "$@"; do
            echo "$line"
        done
        echo
    } >>"$OL_TMP/odbcinst.ini"
}

# Makes the private temp dir $OL_TMP, installs the cleanup traps and the
# hermetic ODBC configuration (ODBCSYSINI/ODBCINI point into $OL_TMP).
ol_setup() {
    OL_TMP=$(mktemp -d "${TMPDIR:-/tmp}/odbc-leader-test.XXXXXXXX") ||
        ol_fail "mktemp -d failed"
    export OL_TMP
    chmod 755 "$OL_TMP" # the postgres user must traverse it
    OL__PIDS='' OL__ON_EXIT='' OL__DRIVERS_MISSING=''
    trap ol__cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM

    # A build configured --with-odbc=iodbc (tests/iodbc/iodbc.sh): iODBC
    # calls a Unicode driver's W functions with its 4-byte SQLWCHAR, which
    # Debian's drivers (built for unixODBC's 2-byte one) misread, so the
    # PostgreSQL section gets psqlODBC's ANSI library there.
    local pg_lib=psqlodbcw.so iodbc=no
    if grep -qs '^#define ODBC_LEADER_IODBC 1' "${top_builddir:-.}/build_config.h"; then
        iodbc=yes pg_lib=psqlodbca.so
    fi
    printf '[ODBC]\nTrace=No\nPooling=No\n\n' >"$OL_TMP/odbcinst.ini"
    ol__driver_section SQLite3 libsqlite3odbc.so
    ol__driver_section "PostgreSQL Unicode" "$pg_lib" CommLog=0 Debug=0
    ol__driver_section "MariaDB Unicode" libmaodbc.so
    : >"$OL_TMP/odbc.ini"
    export ODBCSYSINI="$OL_TMP" ODBCINI="$OL_TMP/odbc.ini"
    # iODBC ignores ODBCSYSINI: it reads the files $ODBCINSTINI and
    # $ODBCINI, then the system ones ($SYSODBCINSTINI, $SYSODBCINI, else
    # /etc/odbcinst.ini and /etc/odbc.ini, whose [PostgreSQL ANSI] turns
    # psqlODBC's CommLog on). unixODBC takes ODBCINSTINI as a file name
    # inside $ODBCSYSINI, so these are for iODBC builds only.
    if [ "$iodbc" = yes ]; then
        export ODBCINSTINI="$OL_TMP/odbcinst.ini" \
            SYSODBCINSTINI="$OL_TMP/odbcinst.ini" SYSODBCINI="$OL_TMP/odbc.ini"
    fi
}

# Echoes the connection string of a SQLite database file.
ol_sqlite_connect() {
    echo "Driver=SQLite3;Database=$1"
}

# ---- PostgreSQL -------------------------------------------------------

# Runs a command as the cluster's owner (postgres when we are root), from
# a directory that user can read.
ol__pg_as() {
    if [ "$(id -u)" = 0 ]; then
        (cd "$OL_TMP" && runuser -u postgres -- "$@")
    else
        (cd "$OL_TMP" && "$@")
    fi
}

# Succeeds when nothing listens on 127.0.0.1:$1.
ol__port_free() {
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
        return 1
    fi
    if command -v ss >/dev/null 2>&1 &&
        [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; then
        return 1
    fi
    return 0
}

# Writes into file $2 sql/generic.sql with its "@define now" line set to
# the expression generic.sql's own comment documents for database $1
# (sqlite, postgresql, mariadb): the documented lines are the tested ones,
# and a site does the same. Fails when there is no such line or the
# result is not a one-line change.
ol_generic_dialect() {
    local label expr
    case $1 in
    sqlite) label='SQLite (tested' ;;
    postgresql) label='PostgreSQL (tested' ;;
    mariadb) label='MariaDB 10.3+ / MySQL 8 (tested' ;;
    *) ol_fail "ol_generic_dialect: unknown database $1" ;;
    esac
    expr=$(awk -v label="--   $label" '
        found { sub(/^--[ \t]*/, ""); print; exit }
        index($0, label) == 1 { found = 1 }
    ' "$srcdir/sql/generic.sql")
    [ -n "$expr" ] || ol_fail "generic.sql documents no clock for $1"
    awk -v e="$expr" '
        /^-- @define now / { print "-- @define now " e; n++; next }
        { print }
        END { if (n != 1) exit 1 }
    ' "$srcdir/sql/generic.sql" >"$2" ||
        ol_fail "generic.sql must hold exactly one \"-- @define now\" line"
    ol_log "generic on $1: now = $expr"
}

# Prints a free TCP port on 127.0.0.1, searching from a random base
# below the kernel's ephemeral range (ip_local_port_range): a server
# restarted on its old port (a killed Galera node, PostgreSQL) must not
# find it taken by some client's outgoing connection, which happened with
# ports inside that range (CI, stop 33: "Bind on TCP/IP port ... 98").
ol_free_port() {
    local low=32768 high=60999 lo hi base i
    read -r low high </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null ||
        true
    if ((low >= 12000)); then
        lo=10000 hi=$((low - 1))
    else
        lo=$((high + 1)) hi=65535
    fi
    if ((hi - lo < 1000)); then
        lo=10000 hi=30000
    fi
    base=$((lo + RANDOM % (hi - lo - 500)))
    for ((i = 0; i < 500; i++)); do
        if ol__port_free $((base + i)); then
            echo $((base + i))
            return 0
        fi
    done
    return 1
}

# Starts the cluster on $OL_PG_PORT and waits until it accepts
# connections. Returns 0 when ready, 2 when the port was taken meanwhile,
# 1 on any other failure (the log tail is printed on stderr).
ol__pg_launch() {
    local opts lines i
    opts="-c listen_addresses=127.0.0.1 -k $OL_PG_DATA -p $OL_PG_PORT"
    opts="$opts -c fsync=off ${OL_PG_EXTRA_OPTS:-}"
    lines=$(wc -l <"$OL_PG_LOG")
    if ! ol__pg_as "$OL_PG_BIN/pg_ctl" -D "$OL_PG_DATA" -l "$OL_PG_LOG" \
        -o "$opts" -w -t 30 start >/dev/null 2>&1; then
        if tail -n +$((lines + 1)) "$OL_PG_LOG" |
            grep -q 'could not bind\|already in use'; then
            return 2
        fi
        echo "PostgreSQL did not start; log tail:" >&2
        tail -n 20 "$OL_PG_LOG" >&2
        return 1
    fi
    for ((i = 0; i < 150; i++)); do
        if "$OL_PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$OL_PG_PORT"; then
            return 0
        fi
        sleep 0.2
    done
    echo "PostgreSQL not ready after 30 s; log tail:" >&2
    tail -n 20 "$OL_PG_LOG" >&2
    return 1
}

# Creates a PostgreSQL cluster in $OL_TMP/pg, starts it on a free port of
# 127.0.0.1 with trust auth, creates database "leader" and exports
# OL_PG_PORT, OL_PG_USER, OL_PG_CONNECT; adds DSN [pgtest] to odbc.ini.
# $1 (optional): more postgres options, kept for restarts, e.g.
# "-c shared_preload_libraries=pg_stat_statements" (make bench).
ol_start_pg() {
    local bins rc _
    [ -n "${OL_TMP:-}" ] || ol_fail "ol_start_pg called before ol_setup"
    OL_PG_EXTRA_OPTS=${1:-}
    export OL_PG_EXTRA_OPTS
    bins=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
    if [ ! -x "$bins/initdb" ]; then
        ol_skip "missing PostgreSQL server binaries (/usr/lib/postgresql/*/bin)"
    fi
    ol_need_driver "PostgreSQL Unicode"
    OL_PG_BIN=$bins
    OL_PG_DATA=$OL_TMP/pg
    OL_PG_LOG=$OL_TMP/pg.log
    if ! mkdir -m 700 "$OL_PG_DATA" || ! : >"$OL_PG_LOG"; then
        ol_fail "cannot create $OL_PG_DATA"
    fi
    if [ "$(id -u)" = 0 ]; then
        ol_need_cmd runuser
        id postgres >/dev/null 2>&1 || ol_skip "missing system user postgres"
        chown postgres: "$OL_PG_DATA" "$OL_PG_LOG"
        OL_PG_USER=postgres
    else
        OL_PG_USER=$(id -un)
    fi
    export OL_PG_BIN OL_PG_DATA OL_PG_LOG OL_PG_USER
    ol__pg_as "$OL_PG_BIN/initdb" -D "$OL_PG_DATA" -A trust -U "$OL_PG_USER" \
        --no-sync >"$OL_TMP/initdb.log" 2>&1 || {
        tail -n 20 "$OL_TMP/initdb.log" >&2
        ol_fail "initdb failed"
    }
    for _ in 1 2 3 4 5; do
        OL_PG_PORT=$(ol_free_port) || ol_fail "no free TCP port found"
        export OL_PG_PORT
        rc=0
        ol__pg_launch || rc=$?
        [ "$rc" = 2 ] || break
        ol_log "port $OL_PG_PORT was taken, trying another"
    done
    [ "$rc" = 0 ] || ol_fail "could not start PostgreSQL"
    ol_psql "CREATE DATABASE $OL_PG_DB" postgres ||
        ol_fail "CREATE DATABASE $OL_PG_DB failed"
    OL_PG_CONNECT="Driver=PostgreSQL Unicode;Server=127.0.0.1"
    OL_PG_CONNECT="$OL_PG_CONNECT;Port=$OL_PG_PORT;Database=$OL_PG_DB"
    OL_PG_CONNECT="$OL_PG_CONNECT;UID=$OL_PG_USER"
    export OL_PG_CONNECT
    printf '[pgtest]\nDriver=PostgreSQL Unicode\nServername=127.0.0.1\n%s\n%s\n%s\n\n' \
        "Port=$OL_PG_PORT" "Database=$OL_PG_DB" "Username=$OL_PG_USER" \
        >>"$OL_TMP/odbc.ini"
    ol_log "PostgreSQL ready on 127.0.0.1:$OL_PG_PORT (log: $OL_PG_LOG)"
}

# Stops the cluster; $1 is the pg_ctl shutdown mode (fast by default,
# immediate simulates a crash).
ol_stop_pg() {
    ol__pg_as "$OL_PG_BIN/pg_ctl" -D "$OL_PG_DATA" -m "${1:-fast}" \
        -w -t 30 stop >/dev/null 2>&1 || {
        tail -n 20 "$OL_PG_LOG" >&2
        ol_fail "pg_ctl stop -m ${1:-fast} failed"
    }
}

# Starts the stopped cluster again on the same directory and port.
ol_start_pg_again() {
    ol__pg_launch || ol_fail "could not restart PostgreSQL on $OL_PG_PORT"
}

# Stops (mode $1, default fast) and starts the cluster again.
ol_restart_pg() {
    ol_stop_pg "${1:-fast}"
    ol_start_pg_again
}

# Starts tests/faults/fault-proxy in front of 127.0.0.1:$1 and exports
# OL_LOSE_CONNECT (connect string $2 with its Port= pointed at the proxy)
# and OL_LOSE_PID (the proxy's pid: SIGWINCH makes it lose one answer, see
# fault-proxy.c). Fails when the proxy is not built (make check builds
# it with the other check programs).
ol_lose_proxy() {
    local proxy=${top_builddir:-.}/tests/faults/fault-proxy port
    [ -x "$proxy" ] || ol_fail "not built: $proxy (run make check)"
    coproc OL__LOSE { exec "$proxy" -t "$1"; }
    OL_LOSE_PID=$OL__LOSE_PID
    ol_track_pid "$OL_LOSE_PID"
    read -r port <&"${OL__LOSE[0]}" || ol_fail "fault-proxy printed no port"
    export OL_LOSE_PID OL_LOSE_CONNECT="${2//Port=$1/Port=$port}"
}

# Runs one SQL string with psql against database $2 (default leader) and
# prints the result unaligned, tuples only. Returns psql's status.
ol_psql() {
    PGCONNECT_TIMEOUT=10 "$OL_PG_BIN/psql" -X -A -t -q -v ON_ERROR_STOP=1 \
        -h 127.0.0.1 -p "$OL_PG_PORT" -U "$OL_PG_USER" \
        -d "${2:-$OL_PG_DB}" -c "$1"
}

# ---- MariaDB ------------------------------------------------------------
#
# A private server: datadir $OL_TMP/mariadb, socket and pid file in
# $OL_TMP/mariadb-run, log $OL_TMP/mariadb.log, TCP on 127.0.0.1 only.
# As root the server runs as the mysql user; otherwise as the caller.
# root@localhost has no password and is reached over the socket only
# (ol_mariadb); the tests connect over TCP as user "leader", who holds
# every privilege on database "leader" and nothing else. Like the
# PostgreSQL helpers, ol_stop_mariadb, ol_start_mariadb_again,
# ol_restart_mariadb and ol_mariadb also work in a child bash: they only
# need the exported OL_MARIADB_* variables.

OL_MARIADB_DB=leader
OL_MARIADB_USER=leader

# Prints the path of the first of the named programs found on PATH or in
# /usr/sbin, /usr/libexec, /usr/local/sbin; fails when none is.
ol__mariadb_prog() {
    local p d
    for p in "$@"; do
        if command -v "$p" >/dev/null 2>&1; then
            command -v "$p"
            return 0
        fi
        for d in /usr/sbin /usr/libexec /usr/local/sbin; do
            if [ -x "$d/$p" ]; then
                echo "$d/$p"
                return 0
            fi
        done
    done
    return 1
}

# Runs a command as the server's owner (mysql when we are root).
ol__mariadb_as() {
    if [ "$(id -u)" = 0 ]; then
        (cd "$OL_TMP" && runuser -u mysql -- "$@")
    else
        (cd "$OL_TMP" && "$@")
    fi
}

# Succeeds while process $1 exists and is not a zombie (an orphaned server
# may stay a zombie where PID 1 does not reap).
ol__mariadb_alive() {
    local state=''
    kill -0 "$1" 2>/dev/null || return 1
    if [ -r "/proc/$1/stat" ]; then
        state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
    fi
    [ "$state" != Z ]
}

# Prints the server's pid from its pid file, or nothing.
ol__mariadb_pid() {
    local pid=''
    if [ -r "$OL_MARIADB_RUN/mariadb.pid" ]; then
        read -r pid <"$OL_MARIADB_RUN/mariadb.pid" || true
    fi
    case $pid in
    '' | *[!0-9]*) return 1 ;;
    esac
    echo "$pid"
}

# Starts the server on $OL_MARIADB_PORT and waits until it answers. Its
# pid goes to $OL_MARIADB_RUN/launcher.pid at once; the server writes
# mariadb.pid there itself. Returns 0 when ready, 2 when the port was
# taken, 1 on any other failure (the log tail is printed on stderr).
ol__mariadb_launch() {
    local lines pid i
    local -a opts
    opts=(--no-defaults "--datadir=$OL_MARIADB_DATA"
        "--socket=$OL_MARIADB_SOCK" "--port=$OL_MARIADB_PORT"
        --bind-address=127.0.0.1 "--pid-file=$OL_MARIADB_RUN/mariadb.pid"
        "--log-error=$OL_MARIADB_LOG" --skip-name-resolve
        "--tmpdir=$OL_MARIADB_RUN"
        --innodb-flush-log-at-trx-commit=2 --innodb-buffer-pool-size=32M
        --innodb-log-file-size=16M)
    [ "$(id -u)" = 0 ] && opts+=(--user=mysql)
    lines=$(wc -l <"$OL_MARIADB_LOG")
    # A child of this shell (ol__cleanup reaps it); when a child bash
    # (OL_RESTART_CMD) starts it, it outlives that bash. The pid file is
    # the record either way.
    "$OL_MARIADB_BIN" "${opts[@]}" </dev/null >>"$OL_MARIADB_LOG" 2>&1 &
    pid=$!
    echo "$pid" >"$OL_MARIADB_RUN/launcher.pid"
    for ((i = 0; i < 300; i++)); do
        if "$OL_MARIADB_ADMIN" --no-defaults -uroot \
            "--socket=$OL_MARIADB_SOCK" --connect-timeout=2 ping \
            >/dev/null 2>&1; then
            return 0
        fi
        if ! ol__mariadb_alive "$pid"; then
            if tail -n +$((lines + 1)) "$OL_MARIADB_LOG" |
                grep -q 'Address already in use\|Do you already have another'; then
                return 2
            fi
            break
        fi
        sleep 0.1
    done
    echo "MariaDB did not start; log tail:" >&2
    tail -n 20 "$OL_MARIADB_LOG" >&2
    ol__mariadb_kill KILL
    return 1
}

# Sends signal $1 to the server and waits until it is gone, at most $2
# tenths of a second (default 600). Returns 0 when it is gone (or was not
# running), 1 otherwise.
ol__mariadb_kill() {
    local pid i
    pid=$(ol__mariadb_pid) ||
        pid=$(cat "$OL_MARIADB_RUN/launcher.pid" 2>/dev/null) || return 0
    kill "-$1" "$pid" 2>/dev/null
    for ((i = 0; i < ${2:-600}; i++)); do
        ol__mariadb_alive "$pid" || return 0
        sleep 0.1
    done
    return 1
}

# The cleanup hook: stops the server, whoever started it last (a clean
# shutdown, SIGKILL when that takes more than 10 s).
ol__mariadb_cleanup() {
    [ -n "${OL_MARIADB_RUN:-}" ] || return 0
    ol__mariadb_kill TERM 100 || ol__mariadb_kill KILL
    rm -f -- "$OL_MARIADB_RUN/mariadb.pid" "$OL_MARIADB_RUN/launcher.pid"
}

# Creates a MariaDB data directory in $OL_TMP/mariadb, starts the server on
# a free port of 127.0.0.1, creates database "leader" and user "leader"
# (random password, every privilege on leader.*), and exports
# OL_MARIADB_PORT, OL_MARIADB_USER, OL_MARIADB_PASSWORD and
# OL_MARIADB_CONNECT; adds DSN [mariadbtest] to odbc.ini. The connection
# string carries CONN_TIMEOUT, READ_TIMEOUT and WRITE_TIMEOUT (seconds):
# Connector/ODBC 3.1 ignores the ODBC login and query timeouts, and
# WRITE_TIMEOUT only ends a stalled write when READ_TIMEOUT is set too.
ol_start_mariadb() {
    local rc _ keys
    [ -n "${OL_TMP:-}" ] || ol_fail "ol_start_mariadb called before ol_setup"
    OL_MARIADB_BIN=$(ol__mariadb_prog mariadbd mysqld) ||
        ol_skip "missing MariaDB server (mariadbd)"
    OL_MARIADB_ADMIN=$(ol__mariadb_prog mariadb-admin mysqladmin) ||
        ol_skip "missing program: mariadb-admin"
    OL_MARIADB_CLIENT=$(ol__mariadb_prog mariadb mysql) ||
        ol_skip "missing program: mariadb"
    OL_MARIADB_INSTALL=$(ol__mariadb_prog mariadb-install-db \
        mysql_install_db) || ol_skip "missing program: mariadb-install-db"
    ol_need_driver "MariaDB Unicode"
    OL_MARIADB_DATA=$OL_TMP/mariadb
    OL_MARIADB_RUN=$OL_TMP/mariadb-run
    OL_MARIADB_SOCK=$OL_MARIADB_RUN/mariadb.sock
    OL_MARIADB_LOG=$OL_TMP/mariadb.log
    [ "${#OL_MARIADB_SOCK}" -lt 100 ] ||
        ol_fail "socket path too long: $OL_MARIADB_SOCK (set TMPDIR)"
    if ! mkdir -m 700 "$OL_MARIADB_DATA" "$OL_MARIADB_RUN" ||
        ! : >"$OL_MARIADB_LOG"; then
        ol_fail "cannot create $OL_MARIADB_DATA"
    fi
    if [ "$(id -u)" = 0 ]; then
        ol_need_cmd runuser
        id mysql >/dev/null 2>&1 || ol_skip "missing system user mysql"
        chown mysql: "$OL_MARIADB_DATA" "$OL_MARIADB_RUN" "$OL_MARIADB_LOG"
    fi
    export OL_MARIADB_BIN OL_MARIADB_ADMIN OL_MARIADB_CLIENT \
        OL_MARIADB_DATA OL_MARIADB_RUN OL_MARIADB_SOCK OL_MARIADB_LOG
    ol_on_exit ol__mariadb_cleanup
    ol__mariadb_as "$OL_MARIADB_INSTALL" --no-defaults \
        "--datadir=$OL_MARIADB_DATA" --auth-root-authentication-method=normal \
        --skip-test-db --skip-name-resolve --innodb-log-file-size=16M \
        "--tmpdir=$OL_MARIADB_RUN" \
        >"$OL_TMP/mariadb-install.log" 2>&1 || {
        tail -n 20 "$OL_TMP/mariadb-install.log" >&2
        ol_fail "mariadb-install-db failed"
    }
    for _ in 1 2 3 4 5; do
        OL_MARIADB_PORT=$(ol_free_port) || ol_fail "no free TCP port found"
        export OL_MARIADB_PORT
        rc=0
        ol__mariadb_launch || rc=$?
        [ "$rc" = 2 ] || break
        ol_log "port $OL_MARIADB_PORT was taken, trying another"
    done
    [ "$rc" = 0 ] || ol_fail "could not start MariaDB"
    ol_track_pid "$(cat "$OL_MARIADB_RUN/launcher.pid")"
    OL_MARIADB_PASSWORD=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
    export OL_MARIADB_USER OL_MARIADB_PASSWORD
    ol_mariadb "CREATE DATABASE $OL_MARIADB_DB;
        CREATE USER '$OL_MARIADB_USER'@'127.0.0.1'
            IDENTIFIED BY '$OL_MARIADB_PASSWORD';
        GRANT ALL PRIVILEGES ON $OL_MARIADB_DB.*
            TO '$OL_MARIADB_USER'@'127.0.0.1';" mysql ||
        ol_fail "creating database and user $OL_MARIADB_DB failed"
    keys="CONN_TIMEOUT=5;READ_TIMEOUT=15;WRITE_TIMEOUT=15"
    OL_MARIADB_CONNECT="Driver=MariaDB Unicode;Server=127.0.0.1"
    OL_MARIADB_CONNECT="$OL_MARIADB_CONNECT;Port=$OL_MARIADB_PORT"
    OL_MARIADB_CONNECT="$OL_MARIADB_CONNECT;Database=$OL_MARIADB_DB"
    OL_MARIADB_CONNECT="$OL_MARIADB_CONNECT;UID=$OL_MARIADB_USER"
    OL_MARIADB_CONNECT="$OL_MARIADB_CONNECT;PWD=$OL_MARIADB_PASSWORD;$keys"
    export OL_MARIADB_CONNECT
    printf '[mariadbtest]\nDriver=MariaDB Unicode\nServer=127.0.0.1\n%s\n' \
        "Port=$OL_MARIADB_PORT" >>"$OL_TMP/odbc.ini"
    printf '%s\n' "Database=$OL_MARIADB_DB" "UID=$OL_MARIADB_USER" \
        "PWD=$OL_MARIADB_PASSWORD" "${keys//;/$'\n'}" '' >>"$OL_TMP/odbc.ini"
    ol_log "MariaDB ready on 127.0.0.1:$OL_MARIADB_PORT (log: $OL_MARIADB_LOG)"
}

# Stops the server: fast (default) is a clean shutdown that closes every
# client connection, immediate kills it with SIGKILL (a crash; InnoDB
# recovers at the next start).
ol_stop_mariadb() {
    local sig=TERM
    case ${1:-fast} in
    fast) ;;
    immediate) sig=KILL ;;
    *) ol_fail "ol_stop_mariadb: unknown mode $1 (fast or immediate)" ;;
    esac
    ol__mariadb_kill "$sig" || {
        tail -n 20 "$OL_MARIADB_LOG" >&2
        ol_fail "MariaDB did not stop (${1:-fast})"
    }
    rm -f -- "$OL_MARIADB_RUN/mariadb.pid" "$OL_MARIADB_RUN/launcher.pid"
}

# Starts the stopped server again on the same directory and port.
ol_start_mariadb_again() {
    ol__mariadb_launch ||
        ol_fail "could not restart MariaDB on $OL_MARIADB_PORT"
}

# Stops (mode $1, default fast) and starts the server again.
ol_restart_mariadb() {
    ol_stop_mariadb "${1:-fast}"
    ol_start_mariadb_again
}

# Runs SQL (one or more statements) as root over the socket against
# database $2 (default leader) and prints the rows tab-separated, without
# column names. Returns the client's status.
ol_mariadb() {
    "$OL_MARIADB_CLIENT" --no-defaults -uroot "--socket=$OL_MARIADB_SOCK" \
        --connect-timeout=10 -N -B -e "$1" "${2:-$OL_MARIADB_DB}"
}
