#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/iodbc/iodbc.sh: builds odbc-leader against iODBC and runs, under
# iODBC, the protocol scenarios on SQLite and PostgreSQL
# (tests/integration/sqlite.test, postgresql.test), the odbc-leader
# command's suites on both (tests/cli/sqlite.test, postgresql.test,
# demo.test) and tests/iodbc/dsn.test (DSNs and their Leader* keys read
# from iODBC's odbc.ini; the programs load libiodbc, not libodbc).
#
#   tests/iodbc/iodbc.sh [BUILDDIR]
#
# BUILDDIR (default _build/iodbc in the source tree) is configured once
# with --with-odbc=iodbc --enable-werror --enable-test-hooks (the suites
# need the test-only knobs, see configure.ac), then built and tested with the
# automake harness (logs in BUILDDIR/tests/.../*.log). Exits 0 when every
# test passed, 1 otherwise (printing the failed tests' logs), 2 when
# something it needs is missing.
#
# Needs the iODBC runtime (Debian: libiodbc2), the drivers (libsqliteodbc,
# odbc-postgresql), PostgreSQL, cmocka and python3. The iODBC headers come
# from libiodbc2-dev when it is installed (pkg-config libiodbc). Debian
# 12's unixodbc-dev declares Conflicts: libiodbc2-dev, so when it is not,
# the script unpacks libiodbc2-dev (apt-get download, no root needed) into
# BUILDDIR/iodbc-dev and builds against that copy.
#
# Drivers under iODBC: iODBC passes 4-byte wchar_t strings to a driver's W
# functions, and Debian's Unicode drivers are built for unixODBC's 2-byte
# SQLWCHAR: psqlodbcw.so fails to connect, MariaDB's libmaodbc.so crashes.
# tests/integration/lib.sh therefore points [PostgreSQL Unicode] at the
# ANSI psqlodbca.so in an iODBC build; sqliteodbc has no W functions.
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/_build/iodbc}
jobs=$(nproc 2>/dev/null || echo 2)
tests=(tests/integration/sqlite.test tests/integration/postgresql.test
    tests/cli/sqlite.test tests/cli/postgresql.test tests/cli/demo.test
    tests/iodbc/dsn.test)

say() { echo "iodbc: $*" >&2; }
missing() {
    say "$*"
    exit 2
}

# Prints the path of an installed shared library ($1: its soname). awk
# reads to the end: exiting at the first match would kill ldconfig with
# SIGPIPE once its output outgrows the pipe, and pipefail would then end
# the script with status 141.
soname_path() {
    /sbin/ldconfig -p 2>/dev/null |
        awk -v n="$1" '$1 == n && !found {print $NF; found = 1}'
}

# Sets iodbc_env to the configure arguments that select the iODBC headers
# and libraries: none when pkg-config knows libiodbc, else ODBC_CFLAGS and
# ODBC_LIBS for a private copy of libiodbc2-dev under $build/iodbc-dev.
find_iodbc_dev() {
    local dev=$build/iodbc-dev lib so deb
    iodbc_env=()
    if [ "${OL_IODBC_UNPACK:-0}" != 1 ] && pkg-config --exists libiodbc; then
        return 0
    fi
    lib=$(soname_path libiodbc.so.2)
    if [ -z "$lib" ] || [ -z "$(soname_path libiodbcinst.so.2)" ]; then
        missing "the iODBC runtime is not installed (Debian: libiodbc2)"
    fi
    if [ ! -f "$dev/usr/include/iodbc/sql.h" ]; then
        if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
            missing "no libiodbc2-dev and no apt-get to fetch it"
        fi
        say "libiodbc2-dev is not installed (it conflicts with" \
            "unixodbc-dev): unpacking a copy into $dev"
        rm -rf "$dev" && mkdir -p "$dev/deb" "$dev/lib"
        chmod 755 "$dev/deb"
        (cd "$dev/deb" && apt-get download -q libiodbc2-dev >&2) ||
            missing "apt-get download libiodbc2-dev failed"
        deb=$(ls "$dev"/deb/libiodbc2-dev_*.deb)
        dpkg-deb -x "$deb" "$dev"
    fi
    # link against the installed runtime through unversioned names
    for so in libiodbc libiodbcinst; do
        ln -sfn "$(soname_path "$so.so.2")" "$dev/lib/$so.so"
    done
    iodbc_env=("ODBC_CFLAGS=-I$dev/usr/include/iodbc"
        "ODBC_LIBS=-L$dev/lib -liodbc -liodbcinst -ldl")
}

command -v pkg-config >/dev/null || missing "pkg-config is missing"
mkdir -p "$build"
build=$(cd "$build" && pwd)

# configure: generated in the source tree as ./dev does it
if [ ! -x "$src/configure" ] || [ "$src/configure.ac" -nt "$src/configure" ] ||
    [ "$src/Makefile.am" -nt "$src/Makefile.in" ]; then
    (cd "$src" && autoreconf -fi)
fi

start=$(date +%s)
if [ ! -f "$build/Makefile" ]; then
    find_iodbc_dev
    say "configuring $build (--with-odbc=iodbc)"
    (cd "$build" && "$src/configure" --with-odbc=iodbc --enable-werror \
        --enable-test-hooks --without-java ${iodbc_env[@]+"${iodbc_env[@]}"} \
        >configure.out) || {
        tail -n 30 "$build/config.log" >&2
        say "configure --with-odbc=iodbc failed ($build/config.log)"
        exit 1
    }
fi
grep -qs '^#define ODBC_LEADER_IODBC 1' "$build/build_config.h" ||
    missing "$build is not configured --with-odbc=iodbc; remove it or pass another BUILDDIR"
grep -qs '^#define ODBC_LEADER_TEST_HOOKS 1' "$build/build_config.h" ||
    missing "$build is not configured --enable-test-hooks; remove it or pass another BUILDDIR"
grep -qs '^S\["HAVE_CMOCKA_TRUE"\]=""' "$build/config.status" ||
    missing "cmocka not found at configure time (Debian: libcmocka-dev); remove $build after installing it"

say "building (the library, the command, the plugins and every test program)"
if ! make -C "$build" -j"$jobs" >/dev/null ||
    ! make -C "$build" -j"$jobs" check TESTS= >/dev/null; then
    say "the build against iODBC failed ($(($(date +%s) - start)) s)"
    exit 1
fi

say "testing under iODBC: ${tests[*]}"
rc=0
make -C "$build" -j"$jobs" check TESTS="${tests[*]}" || rc=$?
if [ "$rc" != 0 ]; then
    for t in "${tests[@]}"; do
        if grep -qs -E '^:test-result: (FAIL|ERROR)' "$build/${t%.test}.trs" ||
            [ ! -f "$build/${t%.test}.trs" ]; then
            echo "==== $build/${t%.test}.log"
            cat "$build/${t%.test}.log" 2>/dev/null || true
        fi
    done
    say "FAILED ($(($(date +%s) - start)) s)"
    exit 1
fi
trs=()
for t in "${tests[@]}"; do
    trs+=("$build/${t%.test}.trs")
done
if grep -qs -E '^:test-result: SKIP' "${trs[@]}"; then
    say "a test was skipped: a driver or server is missing (see the logs)"
    exit 1
fi
say "all passed under iODBC ($(($(date +%s) - start)) s)"
