#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/ship/ship.sh: checks what ships. Given the tree `make install
# DESTDIR=DESTDIR` wrote from a build configured WITHOUT
# --enable-test-hooks (./dev ship does both), it checks, on the installed
# files only:
#   - the installed plugin (odbc_leader.so, loaded with the Python
#     binding contrib/python/odbc_leader/plugin.py) refuses a SQLite
#     config carrying LeaderTestTrustExtra in init, with the message that
#     names the key and --enable-test-hooks; the same config without the
#     key inits and leads;
#   - the installed odbc-leader refuses the key the same way (status), and
#     works without it; it refuses LeaderTestNoWatch (a takeover on
#     database time alone) and LeaderTestNoPoolerCheck the same way;
#   - odbc-leader has no __demo-job subcommand, and `odbc-leader demo`
#     runs from the installed tree (two takeovers, exit 0);
#   - no installed ELF file (the command, the library, the plugins) has
#     the test-only symbol odbc_leader__db_stats (nm, with
#     odbc_leader__config_parse as the proof that nm sees the symbols).
# Against a build configured with --enable-test-hooks it fails.
#
#   tests/ship/ship.sh DESTDIR [PREFIX]     (PREFIX default /usr/local)
#
# Exit status: 0 every check passed, 1 one failed (each is listed), 77 the
# SQLite3 ODBC driver or python3 is missing.
set -euo pipefail

[ $# -ge 1 ] && [ $# -le 2 ] || {
    echo "usage: $0 DESTDIR [PREFIX]" >&2
    exit 64
}
dest=$(cd "$1" && pwd)
root=$dest${2:-/usr/local}
src=$(cd "$(dirname "$0")/../.." && pwd)
srcdir=$src
. "$src/tests/integration/lib.sh"
ol_need_cmd python3
ol_need_cmd nm
ol_setup
ol_need_driver SQLite3

exe=$root/bin/odbc-leader
plugin=$root/lib/odbc-leader/odbc_leader.so
key_error="LeaderTestTrustExtra: a test-only key that breaks the protocol; this build was configured without --enable-test-hooks"
fails=0

# bad MESSAGE: reports one failed check and carries on.
bad() {
    echo "ship: FAIL: $*" >&2
    fails=$((fails + 1))
}

# ok MESSAGE: reports one passed check.
ok() {
    echo "ship: ok: $*" >&2
}

for f in "$exe" "$plugin"; do
    [ -f "$f" ] || ol_fail "not installed: $f"
done
conn=$(ol_sqlite_connect "$OL_TMP/ship.db")
conn="$conn;LeaderNamespace=ship;LeaderTTL=3000"

# ---- the plugin, through the Python binding ----
# For config N (1, 2, ...) prints "N refused: MESSAGE", or "N leads" /
# "N never led" after ticking it for at most 10 s. Exit 1 on anything
# unexpected.
cat >"$OL_TMP/host.py" <<'EOF'
import sys
import time
from odbc_leader.plugin import LeaderPluginError, Plugin

plugin = Plugin(sys.argv[1])
for n, config in enumerate(sys.argv[2:], 1):
    try:
        inst = plugin.init(config)
    except LeaderPluginError as e:
        print("%d refused: %s" % (n, e))
        continue
    with inst:
        deadline = time.monotonic() + 10
        while not inst.is_leader() and time.monotonic() < deadline:
            time.sleep(inst.tick().next_tick_ms / 1000.0)
        print("%d %s" % (n, "leads" if inst.is_leader() else "never led"))
EOF
PYTHONPATH=$src/contrib/python python3 "$OL_TMP/host.py" "$plugin" \
    "$conn;LeaderTestTrustExtra=1000" "$conn" >"$OL_TMP/host.out" 2>&1 ||
    bad "the Python host failed: $(cat "$OL_TMP/host.out")"
cat "$OL_TMP/host.out" >&2
if grep -qxF "1 refused: $key_error" "$OL_TMP/host.out"; then
    ok "the plugin's init refuses LeaderTestTrustExtra"
else
    bad "the installed plugin did not refuse LeaderTestTrustExtra with \"$key_error\""
fi
if grep -qx "2 leads" "$OL_TMP/host.out"; then
    ok "the plugin inits and leads without the key"
else
    bad "the installed plugin did not init and lead without the key"
fi

# ---- the command ----
rc=0
"$exe" -C "$conn;LeaderTestTrustExtra=1000" status >"$OL_TMP/status.out" \
    2>&1 || rc=$?
cat "$OL_TMP/status.out" >&2
if [ "$rc" != 0 ] && grep -qF "$key_error" "$OL_TMP/status.out"; then
    ok "odbc-leader refuses LeaderTestTrustExtra (exit $rc)"
else
    bad "odbc-leader status with LeaderTestTrustExtra: exit $rc, without \"$key_error\""
fi
for key in LeaderTestNoWatch LeaderTestNoPoolerCheck; do
    rc=0
    "$exe" -C "$conn;$key=1" status >"$OL_TMP/status.out" 2>&1 || rc=$?
    cat "$OL_TMP/status.out" >&2
    if [ "$rc" != 0 ] && grep -qF "${key_error/LeaderTestTrustExtra/$key}" \
        "$OL_TMP/status.out"; then
        ok "odbc-leader refuses $key (exit $rc)"
    else
        bad "odbc-leader status with $key: exit $rc, without the refusal"
    fi
done
"$exe" -C "$conn" status >/dev/null 2>"$OL_TMP/status.err" ||
    bad "odbc-leader status without the key failed: $(cat "$OL_TMP/status.err")"
rc=0
# (the old hidden job ran until a signal: hence the timeout)
timeout 5 "$exe" __demo-job "$OL_TMP/job.log" >"$OL_TMP/job.out" 2>&1 ||
    rc=$?
if [ "$rc" = 0 ] || [ -e "$OL_TMP/job.log" ]; then
    bad "odbc-leader has a __demo-job subcommand (exit $rc)"
else
    ok "odbc-leader has no __demo-job (exit $rc: $(head -n 1 "$OL_TMP/job.out"))"
fi
mkdir "$OL_TMP/demo-tmp"
rc=0
TMPDIR=$OL_TMP/demo-tmp "$exe" demo --pause 300ms >"$OL_TMP/demo.out" 2>&1 ||
    rc=$?
if [ "$rc" = 0 ] &&
    [ "$(grep -c 'took over after' "$OL_TMP/demo.out")" = 2 ] &&
    grep -q ': started$' "$OL_TMP/demo.out"; then
    ok "odbc-leader demo runs from the installed tree"
else
    cat "$OL_TMP/demo.out" >&2
    bad "odbc-leader demo from the installed tree: exit $rc"
fi

# ---- symbols ----
n=0
while IFS= read -r f; do
    [ "$(od -An -tx1 -N4 "$f" | tr -d ' ')" = 7f454c46 ] || continue # ELF
    n=$((n + 1))
    nm "$f" >"$OL_TMP/nm.out" 2>&1 || true
    if grep -q ' odbc_leader__db_stats$' "$OL_TMP/nm.out"; then
        bad "$f has the test-only symbol odbc_leader__db_stats"
    elif ! grep -q ' odbc_leader__config_parse$' "$OL_TMP/nm.out" &&
        ! grep -q 'leader_plugin_entry$' "$OL_TMP/nm.out"; then
        bad "$f: nm shows none of the library's symbols (stripped?)"
    else
        ok "no odbc_leader__db_stats in $f"
    fi
done < <(find "$root" -type f \( -path '*/bin/*' -o -name '*.so*' \))
[ "$n" -ge 3 ] || bad "found $n installed ELF files under $root, expected 3 or more"

if [ "$fails" != 0 ]; then
    echo "ship: $fails check(s) failed" >&2
    exit 1
fi
echo "ship: what ships has no test hooks ($root)" >&2
