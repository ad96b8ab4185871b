# SPDX-License-Identifier: MIT
# lifecycle.sh: the fire lifecycle through an example that follows the
# integrations' contract (docs/integrations.md), sourced by the Python,
# Node, Java and Ruby tests after tests/integration/lib.sh and ol_setup.
# tests/contrib/recover_fires.py runs the example's processes on one
# database: a kill -9 of the host running a fire with --recover 2 (the next
# leader runs attempt 2 once, after the kill, in a later term; a second
# kill leaves it abandoned), the same without --recover (recorded
# interrupted, never run again), and `odbc-leader jobs pause` across a
# failover, resume and trigger (no run while paused, one run-now); its
# checks must also fail on broken variants of its own logs.

# lifecycle_good NAME CONNECT EXAMPLE [ARGS...]: the three scenarios through
# EXAMPLE ARGS (with --plugin among them), which must pass; the output goes
# to $OL_TMP/NAME.out and its summary to the log.
lifecycle_good() {
    local name=$1 connect=$2
    shift 2
    if ! python3 "${srcdir:-.}/tests/contrib/recover_fires.py" \
        --connect "$connect" --odbc-leader "$(cd "${top_builddir:-.}" && pwd)/odbc-leader" \
        --work "$OL_TMP/$name" -- "$@" >"$OL_TMP/$name.out" 2>&1; then
        cat "$OL_TMP/$name.out"
        tail -n 30 "$OL_TMP/$name"/*.err 2>/dev/null || true
        ol_fail "$name: the fire lifecycle through the example failed"
    fi
    grep -E '^\[[0-9:]+\] (recover|at most once|pause):' "$OL_TMP/$name.out" |
        grep -v 'processes$' | while read -r line; do
        ol_log "$name: ${line#*] }"
    done
}
