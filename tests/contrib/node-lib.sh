# SPDX-License-Identifier: MIT
# node-lib.sh: what the tests of the Node package (contrib/node) share,
# sourced after tests/integration/lib.sh and ol_setup. Sets NODE, NODE_PKG
# (contrib/node, whose node_modules `npm ci` installed: ./dev test does),
# PLUGIN, OLC and compiles the ABI 1.0 and 1.2 test plugins into $OL_TMP.
# Without node or node_modules the test skips, or fails when
# OL_REQUIRE_NODE is set (./dev test sets it: a skip would hide a missing
# install).
ol_node_need() {
    if [ -n "${OL_REQUIRE_NODE:-}" ]; then
        ol_fail "$*"
    fi
    ol_skip "$*"
}
NODE=$(command -v node || true)
[ -n "$NODE" ] || ol_node_need "no node: install Debian's nodejs (./dev does)"
NODE_PKG=$(cd "${srcdir:-.}/contrib/node" && pwd)
[ -d "$NODE_PKG/node_modules/koffi" ] ||
    ol_node_need "no $NODE_PKG/node_modules: run npm ci there (./dev test does)"
PLUGIN=$(cd "${top_builddir:-.}/plugin/.libs" && pwd)/odbc_leader.so
OLC=$(cd "${top_builddir:-.}" && pwd)/odbc-leader
for f in "$PLUGIN" "$OLC"; do
    [ -e "$f" ] || ol_fail "missing $f (build first)"
done
