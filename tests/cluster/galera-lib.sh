# SPDX-License-Identifier: MIT
# tests/cluster/galera-lib.sh: a private three-node MariaDB Galera cluster
# for tests/cluster/galera.test, sourced after tests/integration/lib.sh and
# ol_setup. Like lib.sh's server helpers, every function but gl_start_cluster
# needs only the exported GL_* variables, so galera_schedule.py can call
# them from a child bash (kill a node, start it again, run SQL on it).
#
#   gl_init                     skips (77) without mariadbd, galera-4, the
#                               MariaDB ODBC driver; sets GL_* programs
#   gl_start_cluster            three nodes in $OL_TMP/galera, node 1
#                               bootstrapped; database and user "leader";
#                               exports GL_CONNECT_1..3 (ODBC strings)
#   gl_start_node N [--new|--sst]  starts node N (again), waits until
#                               Synced (after a crash: --wsrep-recover
#                               first, so it rejoins by IST)
#   gl_kill_node N [SIG]        kill -SIG (KILL) node N's mariadbd, waits
#   gl_sql N SQL                root over node N's socket; rows tab-separated
#   gl_status N VAR             one wsrep status variable of node N
#
# Everything is on 127.0.0.1: per node a SQL port, a group communication
# port (gmcast.listen_addr), an IST port (ist.recv_addr) and an SST port
# (rsync, only used when IST cannot serve a joiner). Nodes 2 and 3 start
# from a copy of node 1's cleanly stopped data directory, so the first join
# is an IST of nothing and needs no SST. As root the servers run as mysql.
# The group communication timeouts are shortened (GL_EVS_SUSPECT, default
# PT3S) so that an isolated node leaves the primary component in seconds.

GL_PROVIDER_DEFAULT=/usr/lib/galera/libgalera_smm.so

# Skips unless the programs, the provider and the driver exist; sets and
# exports GL_BIN, GL_ADMIN, GL_CLIENT, GL_INSTALL, GL_PROVIDER.
gl_init() {
    GL_BIN=$(ol__mariadb_prog mariadbd mysqld) ||
        ol_skip "missing MariaDB server (mariadbd)"
    GL_ADMIN=$(ol__mariadb_prog mariadb-admin mysqladmin) ||
        ol_skip "missing program: mariadb-admin"
    GL_CLIENT=$(ol__mariadb_prog mariadb mysql) ||
        ol_skip "missing program: mariadb"
    GL_INSTALL=$(ol__mariadb_prog mariadb-install-db mysql_install_db) ||
        ol_skip "missing program: mariadb-install-db"
    GL_PROVIDER=${OL_GALERA_PROVIDER:-$GL_PROVIDER_DEFAULT}
    [ -f "$GL_PROVIDER" ] ||
        ol_skip "missing Galera provider $GL_PROVIDER (Debian package galera-4)"
    ol_need_cmd rsync
    ol_need_driver "MariaDB Unicode"
    if [ "$(id -u)" = 0 ]; then
        ol_need_cmd runuser
        id mysql >/dev/null 2>&1 || ol_skip "missing system user mysql"
    fi
    export GL_BIN GL_ADMIN GL_CLIENT GL_INSTALL GL_PROVIDER
}

# Runs a command as the servers' owner (mysql when we are root).
gl__as() {
    if [ "$(id -u)" = 0 ]; then
        (cd "$GL_DIR" && runuser -u mysql -- "$@")
    else
        (cd "$GL_DIR" && "$@")
    fi
}

# Exports $1 as a free port not yet handed to another node of this
# cluster (not in a subshell: it remembers the ports in GL__PORTS).
gl__port() {
    local p _
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        p=$(ol_free_port) || return 1
        case " ${GL__PORTS:-} " in
        *" $p "*) continue ;;
        esac
        GL__PORTS="${GL__PORTS:-} $p"
        export "$1=$p"
        return 0
    done
    return 1
}

# Variable $2 of node $1 (e.g. gl__v 2 PORT prints $GL_PORT_2).
gl__v() {
    local n="GL_${2}_$1"
    echo "${!n}"
}

# Prints node $1's mariadbd pid (from its pid file), or fails.
gl_pid() {
    local pid=''
    { read -r pid <"$GL_DIR/run$1/mariadb.pid"; } 2>/dev/null || true
    case $pid in
    '' | *[!0-9]*) return 1 ;;
    esac
    echo "$pid"
}

# Prints node $1's server pid: its pid file's, else its launcher's.
gl__server_pid() {
    gl_pid "$1" || cat "$GL_DIR/run$1/launcher.pid" 2>/dev/null
}

# Runs SQL $2 as root over node $1's socket (database $3, default none).
gl_sql() {
    "$GL_CLIENT" --no-defaults -uroot "--socket=$GL_DIR/run$1/mariadb.sock" \
        --connect-timeout=5 -N -B -e "$2" ${3:+"$3"}
}

# Prints wsrep status variable $2 (e.g. wsrep_local_state_comment) of node
# $1, or nothing when the node does not answer.
gl_status() {
    gl_sql "$1" "SHOW GLOBAL STATUS LIKE '$2'" 2>/dev/null | cut -f2
}

# The server options of node $1.
gl__opts() {
    local n=$1 run=$GL_DIR/run$1 addr prov gcomm
    gcomm=$(gl__v "$n" GCOMM)
    addr="gcomm://127.0.0.1:$GL_GCOMM_1,127.0.0.1:$GL_GCOMM_2"
    addr="$addr,127.0.0.1:$GL_GCOMM_3"
    prov="gmcast.listen_addr=tcp://127.0.0.1:$gcomm"
    prov="$prov;ist.recv_addr=127.0.0.1:$(gl__v "$n" IST);gcache.size=32M"
    prov="$prov;evs.suspect_timeout=${GL_EVS_SUSPECT:-PT3S}"
    prov="$prov;evs.inactive_timeout=${GL_EVS_INACTIVE:-PT6S}"
    prov="$prov;evs.inactive_check_period=PT0.5S;evs.keepalive_period=PT0.5S"
    prov="$prov;pc.wait_prim_timeout=PT30S"
    GL__OPTS=(--no-defaults "--datadir=$GL_DIR/node$n"
        "--socket=$run/mariadb.sock" "--port=$(gl__v "$n" PORT)"
        --bind-address=127.0.0.1 "--pid-file=$run/mariadb.pid"
        "--log-error=$GL_DIR/node$n.log" --skip-name-resolve
        "--tmpdir=$run" --innodb-flush-log-at-trx-commit=2
        --innodb-buffer-pool-size=32M --innodb-log-file-size=16M
        --binlog-format=ROW --default-storage-engine=InnoDB
        --innodb-autoinc-lock-mode=2 --wsrep-on=ON
        "--wsrep-provider=$GL_PROVIDER" --wsrep-cluster-name=odbc-leader-test
        "--wsrep-cluster-address=$addr"
        "--wsrep-node-address=127.0.0.1:$gcomm"
        "--wsrep-node-incoming-address=127.0.0.1:$(gl__v "$n" PORT)"
        "--wsrep-node-name=node$n" --wsrep-sst-method=rsync
        "--wsrep-sst-receive-address=127.0.0.1:$(gl__v "$n" SST)"
        "--wsrep-provider-options=$prov")
    if [ "$(id -u)" = 0 ]; then
        GL__OPTS+=(--user=mysql)
    fi
}

# After a crash grastate.dat says seqno -1: like the Debian service
# (galera_recovery), recovers the position from InnoDB with
# --wsrep-recover and appends --wsrep-start-position to GL__OPTS, so the
# node can rejoin by IST instead of a full SST (an rsync SST blocks the
# donor's commits while it copies). Returns 1 when no position was found.
gl__recover() {
    local n=$1 pos
    grep -q '^seqno: *-1' "$GL_DIR/node$n/grastate.dat" 2>/dev/null ||
        return 0
    : >"$GL_DIR/recover$n.log"
    if [ "$(id -u)" = 0 ]; then
        chown mysql: "$GL_DIR/recover$n.log"
    fi
    "$GL_BIN" "${GL__OPTS[@]}" --wsrep-recover \
        "--log-error=$GL_DIR/recover$n.log" </dev/null >/dev/null 2>&1
    pos=$(sed -n 's/.*WSREP: Recovered position: *//p' "$GL_DIR/recover$n.log" |
        tail -n 1)
    [ -n "$pos" ] || {
        tail -n 20 "$GL_DIR/recover$n.log" >&2
        return 1
    }
    GL__OPTS+=("--wsrep-start-position=$pos")
}

# Starts node $1 and waits until it is Synced and ready, at most
# $GL_START_WAIT s (120). $2: --new bootstraps a new cluster; --sst skips
# the position recovery after a crash (the node then needs a full rsync
# SST). Its launcher pid goes to run$1/launcher.pid. Returns 1 with the
# log tail on failure.
gl_start_node() {
    local n=$1 mode=${2:-} pid i state ready
    gl__opts "$n"
    case $mode in
    --new) GL__OPTS+=(--wsrep-new-cluster) ;;
    --sst) ;;
    *) gl__recover "$n" || return 1 ;;
    esac
    rm -f "$GL_DIR/run$n/mariadb.pid"
    "$GL_BIN" "${GL__OPTS[@]}" </dev/null >>"$GL_DIR/node$n.log" 2>&1 &
    pid=$!
    disown "$pid" 2>/dev/null || true # no "Killed" notice when a test kills it
    echo "$pid" >"$GL_DIR/run$n/launcher.pid"
    for ((i = 0; i < ${GL_START_WAIT:-120} * 5; i++)); do
        if ! ol__mariadb_alive "$pid"; then
            echo "node $n exited while starting; log tail:" >&2
            tail -n 30 "$GL_DIR/node$n.log" >&2
            return 1
        fi
        state=$(gl_status "$n" wsrep_local_state_comment)
        ready=$(gl_status "$n" wsrep_ready)
        if [ "$state" = Synced ] && [ "$ready" = ON ]; then
            return 0
        fi
        sleep 0.2
    done
    echo "node $n not Synced after ${GL_START_WAIT:-120} s (state '$state');" \
        "log tail:" >&2
    tail -n 30 "$GL_DIR/node$n.log" >&2
    return 1
}

# Sends signal $2 (KILL) to node $1's server and waits until it is gone
# (at most 30 s). Returns 0 when gone or not running.
gl_kill_node() {
    local n=$1 pid i
    pid=$(gl__server_pid "$n") || return 0
    kill "-${2:-KILL}" "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 300; i++)); do
        ol__mariadb_alive "$pid" || return 0
        sleep 0.1
    done
    return 1
}

# The cleanup hook: every node down (SIGTERM, SIGKILL after 10 s).
gl__cleanup() {
    local n pid i
    [ -n "${GL_DIR:-}" ] || return 0
    for n in 1 2 3; do
        pid=$(gl__server_pid "$n") || continue
        kill -TERM "$pid" 2>/dev/null
    done
    for n in 1 2 3; do
        pid=$(gl__server_pid "$n") || continue
        for ((i = 0; i < 100; i++)); do
            ol__mariadb_alive "$pid" || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null
    done
    return 0
}

# Creates and starts the cluster (see the top of the file); exports
# GL_DIR, GL_{PORT,GCOMM,IST,SST}_{1,2,3}, GL_USER, GL_PASSWORD,
# GL_CONNECT_{1,2,3}.
gl_start_cluster() {
    local n v keys
    GL_DIR=$OL_TMP/galera
    mkdir -m 755 "$GL_DIR" || ol_fail "cannot create $GL_DIR"
    [ "${#GL_DIR}" -lt 80 ] || ol_fail "path too long: $GL_DIR (set TMPDIR)"
    for n in 1 2 3; do
        mkdir -m 700 "$GL_DIR/run$n"
        : >"$GL_DIR/node$n.log"
        for v in PORT GCOMM IST SST; do
            gl__port "GL_${v}_$n" || ol_fail "no free TCP port found"
        done
    done
    mkdir -m 700 "$GL_DIR/node1"
    if [ "$(id -u)" = 0 ]; then
        chown mysql: "$GL_DIR" "$GL_DIR"/run? "$GL_DIR"/node?.log \
            "$GL_DIR/node1"
    fi
    export GL_DIR
    ol_on_exit gl__cleanup
    gl__as "$GL_INSTALL" --no-defaults "--datadir=$GL_DIR/node1" \
        --auth-root-authentication-method=normal --skip-test-db \
        --skip-name-resolve --innodb-log-file-size=16M "--tmpdir=$GL_DIR/run1" \
        >"$GL_DIR/install.log" 2>&1 || {
        tail -n 20 "$GL_DIR/install.log" >&2
        ol_fail "mariadb-install-db failed"
    }
    # Node 1 alone: the database, the user; a clean stop writes
    # grastate.dat (cluster state UUID and seqno), and nodes 2 and 3 start
    # from copies of it, so they join by IST with nothing to transfer.
    gl_start_node 1 --new || ol_fail "could not bootstrap node 1"
    GL_USER=leader
    GL_PASSWORD=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
    gl_sql 1 "CREATE DATABASE leader;
        CREATE USER '$GL_USER'@'127.0.0.1' IDENTIFIED BY '$GL_PASSWORD';
        GRANT ALL PRIVILEGES ON leader.* TO '$GL_USER'@'127.0.0.1';" ||
        ol_fail "creating database and user leader failed"
    gl_kill_node 1 TERM || ol_fail "node 1 did not stop"
    for n in 2 3; do
        gl__as cp -a "$GL_DIR/node1" "$GL_DIR/node$n" ||
            ol_fail "cannot copy the data directory to node $n"
        rm -f "$GL_DIR/node$n/gvwstate.dat"
    done
    gl_start_node 1 --new || ol_fail "could not bootstrap node 1 again"
    for n in 2 3; do
        gl_start_node "$n" || ol_fail "node $n did not join"
    done
    [ "$(gl_status 1 wsrep_cluster_size)" = 3 ] ||
        ol_fail "cluster size $(gl_status 1 wsrep_cluster_size), not 3"
    export GL_USER GL_PASSWORD
    keys="CONN_TIMEOUT=2;READ_TIMEOUT=2;WRITE_TIMEOUT=2"
    for n in 1 2 3; do
        v="Driver=MariaDB Unicode;Server=127.0.0.1;Port=$(gl__v "$n" PORT)"
        v="$v;Database=leader;UID=$GL_USER;PWD=$GL_PASSWORD;$keys"
        export "GL_CONNECT_$n=$v"
    done
    ol_log "Galera cluster of 3 ready: SQL ports $GL_PORT_1 $GL_PORT_2" \
        "$GL_PORT_3, gcomm $GL_GCOMM_1 $GL_GCOMM_2 $GL_GCOMM_3" \
        "(state $(gl_status 1 wsrep_cluster_state_uuid))"
}
