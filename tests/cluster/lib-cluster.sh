# SPDX-License-Identifier: MIT
# tests/cluster/lib-cluster.sh: server helpers of the database-topology
# tests (tests/cluster/*.test, and tests/faults/clockstep-sqlite.test),
# sourced after tests/integration/lib.sh and ol_setup. Like lib.sh's
# PostgreSQL helpers they only need exported variables, so cluster.py can
# call them from a child bash.
#
#   cl_init                      sets CL_* paths (programs of the build;
#                                OL_CLUSTER_ODBC_LEADER, OL_CLUSTER_PLUGIN
#                                test other binaries)
#   cl_start_standby DELAY       a streaming standby of the ol_start_pg
#                                primary, its replication through a
#                                fault-proxy (so a test can stall it)
#   cl_faketime_pg               restarts the ol_start_pg server with
#                                libfaketime preloaded (clock file
#                                $CL_FAKETIME_FILE, "+0" at first)
#   cl_sql_clock_pg              the SQL clock instead: a shadowing
#                                public.clock_timestamp() with an offset
#   cl_sql_clock_on_win          a trigger that steps the SQL clock inside
#                                the first election of an armed namespace
#   cl_start_pgbouncer MODE      pgbouncer in front of the ol_start_pg server
#
# Everything runs on 127.0.0.1, inside $OL_TMP, as the postgres user when
# we are root; the cleanup is registered with ol_on_exit.

# Sets the paths of the programs the cluster tests use and skips (77) when
# a system program is missing; fails when a build product is missing.
# OL_CLUSTER_ODBC_LEADER and OL_CLUSTER_PLUGIN test other binaries.
cl_init() {
    local f top
    ol_need_cmd python3
    top=$(cd "$top_builddir" && pwd) || ol_fail "no build directory $top_builddir"
    CL_HOST=$top/tests/faults/fault-host
    CL_PROXY=$top/tests/faults/fault-proxy
    CL_LIFE=$top/tests/faults/cmd-life
    CL_PLUGIN=${OL_CLUSTER_PLUGIN:-$top/plugin/.libs/odbc_leader.so}
    CL_ODBC_LEADER=${OL_CLUSTER_ODBC_LEADER:-$top/odbc-leader}
    for f in "$CL_HOST" "$CL_PROXY" "$CL_LIFE" "$CL_PLUGIN" "$CL_ODBC_LEADER"; do
        [ -f "$f" ] || ol_fail "not built: $f (run make first)"
    done
    export CL_HOST CL_PROXY CL_LIFE CL_PLUGIN CL_ODBC_LEADER
    "$srcdir/tests/faults/checker" --self-test >/dev/null ||
        ol_fail "checker --self-test failed"
    "$srcdir/tests/faults/cmdcheck" --self-test >/dev/null ||
        ol_fail "cmdcheck --self-test failed"
}

# Runs python3 tests/cluster/cluster.py with the common arguments.
cl_python() {
    python3 "$srcdir/tests/cluster/cluster.py" "$@" \
        --lib "$srcdir/tests/integration/lib.sh" \
        --cluster-lib "$srcdir/tests/cluster/lib-cluster.sh" \
        --checker "$srcdir/tests/faults/checker" \
        --cmdcheck "$srcdir/tests/faults/cmdcheck" \
        --host "$CL_HOST" --proxy "$CL_PROXY" --life "$CL_LIFE" \
        --plugin "$CL_PLUGIN" --odbc-leader "$CL_ODBC_LEADER" \
        --work "$OL_TMP/cluster"
}

# Makes file or directory $1 (more: its mode) owned by the cluster owner.
cl__own() {
    if [ "$(id -u)" = 0 ]; then
        chown postgres: "$1"
    fi
}

# Starts a fault-proxy towards 127.0.0.1:$1 in the background; prints
# "PID PORT". Its stdout goes to $2 (the port is its first line).
cl__proxy() {
    local pid i port=''
    : >"$2"
    "$CL_PROXY" -t "$1" >"$2" 2>>"$OL_TMP/proxies.log" &
    pid=$!
    for ((i = 0; i < 100; i++)); do
        read -r port <"$2" 2>/dev/null || true
        [ -n "$port" ] && break
        sleep 0.05
    done
    [ -n "$port" ] || ol_fail "fault-proxy did not start"
    echo "$pid $port"
}

# Stops the standby (immediate), if it runs; the EXIT hook.
cl__standby_cleanup() {
    if [ -n "${CL_SB_DATA:-}" ] && [ -f "$CL_SB_DATA/postmaster.pid" ]; then
        ol__pg_as "$OL_PG_BIN/pg_ctl" -D "$CL_SB_DATA" -m immediate \
            -w -t 30 stop >/dev/null 2>&1
    fi
}

# Creates a streaming standby of the primary of ol_start_pg with
# pg_basebackup -R, through a fault-proxy (the replication link: SIGUSR1
# stalls it, as a slow or broken network between the two hosts would),
# with recovery_min_apply_delay = $1 (e.g. 4s), and starts it on another
# free port. Exports CL_SB_DATA, CL_SB_PORT, CL_SB_LOG, CL_REPL_PROXY_PID.
cl_start_standby() {
    local delay=${1:-4s} pp i
    CL_SB_DATA=$OL_TMP/standby
    CL_SB_LOG=$OL_TMP/standby.log
    mkdir -m 700 "$CL_SB_DATA" && : >"$CL_SB_LOG" ||
        ol_fail "cannot create $CL_SB_DATA"
    cl__own "$CL_SB_DATA"
    cl__own "$CL_SB_LOG"
    pp=$(cl__proxy "$OL_PG_PORT" "$OL_TMP/repl-proxy.port")
    CL_REPL_PROXY_PID=${pp% *}
    ol_track_pid "$CL_REPL_PROXY_PID"
    # The primary's socket (in its data directory) cannot be copied: the
    # warnings about it are dropped with the rest of the output.
    ol__pg_as "$OL_PG_BIN/pg_basebackup" -h 127.0.0.1 -p "${pp#* }" \
        -U "$OL_PG_USER" -D "$CL_SB_DATA" -R -X stream -c fast \
        >"$OL_TMP/basebackup.log" 2>&1 || {
        tail -n 20 "$OL_TMP/basebackup.log" >&2
        ol_fail "pg_basebackup failed"
    }
    echo "recovery_min_apply_delay = '$delay'" >>"$CL_SB_DATA/postgresql.auto.conf"
    export CL_SB_DATA CL_SB_LOG CL_REPL_PROXY_PID
    ol_on_exit cl__standby_cleanup
    for i in 1 2 3 4 5; do
        CL_SB_PORT=$(ol_free_port) || ol_fail "no free TCP port found"
        if ol__pg_as "$OL_PG_BIN/pg_ctl" -D "$CL_SB_DATA" -l "$CL_SB_LOG" \
            -o "-c listen_addresses=127.0.0.1 -k $CL_SB_DATA -p $CL_SB_PORT -c fsync=off" \
            -w -t 30 start >/dev/null 2>&1; then
            break
        fi
        CL_SB_PORT=''
        grep -q 'could not bind\|already in use' "$CL_SB_LOG" ||
            { tail -n 20 "$CL_SB_LOG" >&2; ol_fail "standby did not start"; }
    done
    [ -n "$CL_SB_PORT" ] || ol_fail "could not start the standby"
    export CL_SB_PORT
    for ((i = 0; i < 150; i++)); do
        [ "$(cl_sb_psql 'SELECT pg_is_in_recovery()' 2>/dev/null)" = t ] &&
            break
        sleep 0.2
    done
    [ "$(cl_sb_psql 'SELECT pg_is_in_recovery()')" = t ] ||
        ol_fail "the standby is not in recovery"
    ol_log "standby ready on 127.0.0.1:$CL_SB_PORT (replication through" \
        "fault-proxy pid $CL_REPL_PROXY_PID, apply delay $delay)"
}

# Runs one SQL string against the standby's database leader.
cl_sb_psql() {
    PGCONNECT_TIMEOUT=10 "$OL_PG_BIN/psql" -X -A -t -q -v ON_ERROR_STOP=1 \
        -h 127.0.0.1 -p "$CL_SB_PORT" -U "$OL_PG_USER" -d "$OL_PG_DB" -c "$1"
}

# Promotes the standby (pg_ctl promote -w).
cl_promote() {
    ol__pg_as "$OL_PG_BIN/pg_ctl" -D "$CL_SB_DATA" -w -t 30 promote \
        >/dev/null 2>&1 || {
        tail -n 20 "$CL_SB_LOG" >&2
        ol_fail "pg_ctl promote failed"
    }
}

# Prints the path of libfaketime.so.1 (or of $1, e.g. libfaketimeMT.so.1,
# the variant for processes with threads), or fails.
cl__faketime_lib() {
    local f name=${1:-libfaketime.so.1}
    for f in /usr/lib/*/faketime/"$name" /usr/lib*/faketime/"$name"; do
        if [ -f "$f" ]; then
            echo "$f"
            return 0
        fi
    done
    return 1
}

# Restarts the ol_start_pg server with libfaketime preloaded through the
# environment (pg_ctl and the postmaster inherit it; the faketime program
# would fork). The offset is read from $CL_FAKETIME_FILE at every clock
# call (FAKETIME_NO_CACHE); monotonic clocks stay real. Write "+10" into
# the file to step the server's wall clock 10 s forward. Skips (77) when
# libfaketime is not installed (Debian package faketime).
cl_faketime_pg() {
    local lib off
    lib=${OL_CLUSTER_FAKETIME_LIB:-$(cl__faketime_lib)} && [ -f "$lib" ] ||
        ol_skip "missing libfaketime.so.1 (Debian package faketime)"
    CL_FAKETIME_FILE=$OL_TMP/server-clock
    echo "+0" >"$CL_FAKETIME_FILE"
    chmod 644 "$CL_FAKETIME_FILE"
    export CL_FAKETIME_FILE
    ol_stop_pg fast
    LD_PRELOAD=$lib FAKETIME_TIMESTAMP_FILE=$CL_FAKETIME_FILE \
        FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1 ol_start_pg_again
    off=$(cl_pg_clock_offset)
    ol_log "PostgreSQL runs under libfaketime ($lib); server clock offset ${off} ms"
    [ "${off#-}" -lt 2000 ] || ol_fail "server clock offset $off ms at +0"
}

# The other way to step the database clock (clockstep.test --clock sql):
# the dialect reads the clock with an unqualified clock_timestamp(), so a
# public.clock_timestamp() ahead of pg_catalog in the database's search_path
# (new sessions) shadows it: pg_catalog.clock_timestamp() + the offset in
# public.cl_clock_offset (ms). cl_sql_clock_step MS sets the offset. Only
# SQL sees this clock; the server's own timers do not (under libfaketime
# they fire about one step late for a while after each step).
cl_sql_clock_pg() {
    ol_psql "CREATE TABLE public.cl_clock_offset (ms BIGINT NOT NULL);
        INSERT INTO public.cl_clock_offset VALUES (0);
        CREATE FUNCTION public.clock_timestamp() RETURNS timestamptz
            LANGUAGE sql VOLATILE AS
            'SELECT pg_catalog.clock_timestamp() + make_interval(secs =>
                (SELECT ms FROM public.cl_clock_offset) / 1000.0)';
        ALTER DATABASE $OL_PG_DB SET search_path = public, pg_catalog;" ||
        ol_fail "cannot install the SQL clock"
    cl_sql_clock_step 0
    ol_log "the database clock is public.clock_timestamp() (offset 0 ms)"
}

# Lets the SQL clock step inside the transaction that wins a namespace
# (cl_sql_clock_pg first, and the lease table must exist): a row
# (namespace, step_ms) in public.cl_clock_arm arms that namespace, and the
# first write of a lease row with a leader in it (its first election)
# adds step_ms to the offset and marks the row fired, in the winner's own
# transaction. So the step takes effect at the commit of the election:
# any statement that sees the new lease row sees the stepped clock, and a
# candidate that read the namespace before (no row yet) has no earlier
# reading of it. clockstep.test's default (the harness cannot step that
# close to a commit from outside).
cl_sql_clock_on_win() {
    ol_psql "CREATE TABLE public.cl_clock_arm (
            namespace VARCHAR(128) NOT NULL PRIMARY KEY,
            step_ms BIGINT NOT NULL,
            fired BOOLEAN NOT NULL DEFAULT FALSE);
        CREATE FUNCTION public.cl_clock_fire() RETURNS trigger
            LANGUAGE plpgsql AS \$\$
        DECLARE
            s BIGINT;
        BEGIN
            IF NEW.leader_id IS NOT NULL THEN
                UPDATE public.cl_clock_arm SET fired = TRUE
                WHERE namespace = NEW.namespace AND NOT fired
                RETURNING step_ms INTO s;
                IF s IS NOT NULL THEN
                    UPDATE public.cl_clock_offset SET ms = ms + s;
                END IF;
            END IF;
            RETURN NULL;
        END \$\$;
        CREATE TRIGGER cl_clock_fire AFTER INSERT OR UPDATE
            ON public.odbc_leader_lease
            FOR EACH ROW EXECUTE FUNCTION public.cl_clock_fire();" \
        >/dev/null || ol_fail "cannot install the SQL clock's trigger"
}

# Sets the SQL clock's offset to $1 ms.
cl_sql_clock_step() {
    ol_psql "UPDATE public.cl_clock_offset SET ms = $1" >/dev/null ||
        ol_fail "cannot set the SQL clock"
}

# Prints the server clock minus this host's clock, in ms.
cl_pg_clock_offset() {
    local db now
    now=$(date +%s%3N)
    db=$(ol_psql "SELECT CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT)") ||
        return 1
    echo $((db - now))
}

# Stops the pgbouncer of mode $1 (the EXIT hook).
cl__pgbouncer_stop() {
    local pid
    pid=$(cat "$OL_TMP/pgbouncer/pgbouncer-$1.pid" 2>/dev/null) || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
    return 0
}

# Starts pgbouncer (as the postgres user when root) in front of the
# ol_start_pg server with pool_mode = $1 (transaction or session), auth_type
# = any (user= on the [databases] line), listening on a free port of
# 127.0.0.1; its ini, log and pid file are in $OL_TMP/pgbouncer. Exports
# CL_PGB_PORT_<MODE> (e.g. CL_PGB_PORT_transaction). Call it directly,
# not in $(...): the export and the cleanup hook must reach this shell.
cl_start_pgbouncer() {
    local mode=$1 dir=$OL_TMP/pgbouncer port ini i
    ol_need_cmd pgbouncer
    mkdir -p "$dir"
    chmod 755 "$dir"
    cl__own "$dir"
    for _ in 1 2 3 4 5; do
        port=$(ol_free_port) || ol_fail "no free TCP port found"
        ini=$dir/pgbouncer-$mode.ini
        cat >"$ini" <<EOF
[databases]
$OL_PG_DB = host=127.0.0.1 port=$OL_PG_PORT dbname=$OL_PG_DB user=$OL_PG_USER

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = any
pool_mode = $mode
max_client_conn = 200
default_pool_size = 20
min_pool_size = 0
server_reset_query = DISCARD ALL
ignore_startup_parameters = extra_float_digits
server_connect_timeout = 5
server_login_retry = 1
logfile = $dir/pgbouncer-$mode.log
pidfile = $dir/pgbouncer-$mode.pid
EOF
        chmod 644 "$ini"
        rm -f "$dir/pgbouncer-$mode.pid"
        if ol__pg_as pgbouncer -d "$ini" >>"$dir/pgbouncer-$mode.out" 2>&1; then
            for ((i = 0; i < 100; i++)); do
                if PGCONNECT_TIMEOUT=5 "$OL_PG_BIN/psql" -X -A -t -q \
                    -h 127.0.0.1 -p "$port" -U "$OL_PG_USER" -d "$OL_PG_DB" \
                    -c 'SELECT 1' >/dev/null 2>&1; then
                    ol_on_exit "cl__pgbouncer_stop $mode"
                    export "CL_PGB_PORT_$mode=$port"
                    ol_log "pgbouncer pool_mode=$mode on 127.0.0.1:$port"
                    return 0
                fi
                sleep 0.1
            done
        fi
        cl__pgbouncer_stop "$mode"
        grep -q 'in use' "$dir/pgbouncer-$mode.log" "$dir/pgbouncer-$mode.out" \
            2>/dev/null || break
    done
    tail -n 20 "$dir/pgbouncer-$mode.log" "$dir/pgbouncer-$mode.out" >&2 2>/dev/null
    ol_fail "pgbouncer (pool_mode=$mode) did not start"
}
