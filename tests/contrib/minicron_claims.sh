# SPDX-License-Identifier: MIT
# tests/contrib/minicron_claims.sh: starts minicron's exactly-once
# scenario (tests/contrib/minicron_claims.py, on tests/lib/harness.py),
# sourced by minicron.test (SQLite), minicron-pg.test (PostgreSQL) and
# minicron-mariadb.test (MariaDB) after ol_setup and the database's start.
#
#   claims_scenario CONNECT LABEL
#
# Three minicrons on CONNECT, the leader killed at slot boundaries and
# stopped past its lease; every slot between the first and the last must
# fire exactly once (tests/contrib/check_fires.py against the fire
# ledger), and the checker must fail on a crafted duplicate and a crafted
# gap. Needs MC, PLUGIN, PY (python3) and OL_TMP; takes about 20 s. The
# records stay in $OL_TMP/claims-LABEL.

claims_scenario() {
    local conn=$1 label=$2 dir=$OL_TMP/claims-$2 olc
    olc=${top_builddir:-.}/odbc-leader
    [ -x "$olc" ] || ol_fail "missing $olc (build first)"
    mkdir -p "$dir"
    ol_on_exit "echo '--- claims $label minicron stderr (tail):' >&2;
        tail -n 60 '$dir/minicron.err' >&2"
    "$PY" "${srcdir:-.}/tests/contrib/minicron_claims.py" --connect "$conn" \
        --label "$label" --minicron "$MC" --plugin "$PLUGIN" \
        --odbc-leader "$olc" \
        --checker "${srcdir:-.}/tests/contrib/check_fires.py" \
        --work "$dir" || ol_fail "claims ($label): exactly once failed"
}
