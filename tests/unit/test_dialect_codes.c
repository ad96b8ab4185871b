/* SPDX-License-Identifier: MIT */
/*
 * test_dialect_codes.c: error classification (src/dialect_codes.c): the
 * built-in dialects' error-code lists, and the patterns a dialect file may
 * write (SQLSTATE, prefix, SQLSTATE:native, *:native).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_dialect.h"

void test_classify_postgresql(void **state) {
    struct odbc_leader__dialect *d = parse_builtin("postgresql");

    (void)state;
    assert_int_equal(odbc_leader__classify(d, "23505", 1),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "40001", 1),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "40P01", 1),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "55P03", 7),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "57014", 1),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "57P01", 1),
                     ODBC_LEADER__ERR_CONNLOST);
    assert_int_equal(odbc_leader__classify(d, "08S01", 0),
                     ODBC_LEADER__ERR_CONNLOST);
    assert_int_equal(odbc_leader__classify(d, "08003", 0),
                     ODBC_LEADER__ERR_CONNLOST);
    assert_int_equal(odbc_leader__classify(d, "42P01", 1),
                     ODBC_LEADER__ERR_UNDEFINED_TABLE);
    assert_int_equal(odbc_leader__classify(d, "42601", 1),
                     ODBC_LEADER__ERR_OTHER);
    assert_int_equal(odbc_leader__classify(d, "23503", 1),
                     ODBC_LEADER__ERR_OTHER);
    assert_int_equal(odbc_leader__classify(d, "HYT00", 0),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "HYT01", 0),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, NULL, 0), ODBC_LEADER__ERR_OTHER);
    assert_int_equal(odbc_leader__classify(d, "", 0), ODBC_LEADER__ERR_OTHER);
    odbc_leader__dialect_free(d);
}

void test_classify_mariadb(void **state) {
    struct odbc_leader__dialect *d = parse_builtin("mariadb");

    (void)state;
    /* a unique violation by native code, whatever the SQLSTATE */
    assert_int_equal(odbc_leader__classify(d, "23000", 1062),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "HY000", 1062),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "23000", 1048),
                     ODBC_LEADER__ERR_OTHER);
    assert_int_equal(odbc_leader__classify(d, "40001", 1213),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "HY000", 1205),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "70100", 1969),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "08S01", 2013),
                     ODBC_LEADER__ERR_CONNLOST);
    assert_int_equal(odbc_leader__classify(d, "HY000", 2006),
                     ODBC_LEADER__ERR_CONNLOST);
    assert_int_equal(odbc_leader__classify(d, "70100", 1927),
                     ODBC_LEADER__ERR_CONNLOST);
    assert_int_equal(odbc_leader__classify(d, "42S02", 1146),
                     ODBC_LEADER__ERR_UNDEFINED_TABLE);
    assert_int_equal(odbc_leader__classify(d, "42000", 1064),
                     ODBC_LEADER__ERR_OTHER);
    assert_int_equal(odbc_leader__classify(d, "42000", 1142),
                     ODBC_LEADER__ERR_OTHER);
    odbc_leader__dialect_free(d);
}

void test_classify_sqlite(void **state) {
    struct odbc_leader__dialect *d = parse_builtin("sqlite");

    (void)state;
    assert_int_equal(odbc_leader__classify(d, "HY000", 19),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "23000", 0),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "HY000", 5),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "HY000", 6),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "HY000", 1),
                     ODBC_LEADER__ERR_UNDEFINED_TABLE);
    assert_int_equal(odbc_leader__classify(d, "HY000", 7),
                     ODBC_LEADER__ERR_OTHER);
    assert_int_equal(odbc_leader__classify(d, "S1000", 19),
                     ODBC_LEADER__ERR_OTHER);
    /* no connection-lost list, still class 08 */
    assert_int_equal(odbc_leader__classify(d, "08S01", 19),
                     ODBC_LEADER__ERR_CONNLOST);
    odbc_leader__dialect_free(d);
}

void test_classify_patterns(void **state) {
    struct odbc_leader__dialect *d;

    (void)state;
    d = parse_ok(HEADER "-- @unique-violation *:1062 08001 HYT00 4000*\n"
                        "-- @transient 40001 *:1062 hy0*:1205\n"
                        "-- @connection-lost HY000:2013\n"
                        "-- @undefined-table 42S02\n" REQUIRED_OPS);
    /* native only, any SQLSTATE */
    assert_int_equal(odbc_leader__classify(d, "23000", 1062),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "HY000", 1062),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "23000", 1),
                     ODBC_LEADER__ERR_OTHER);
    /* class 08 wins over every list */
    assert_int_equal(odbc_leader__classify(d, "08001", 1062),
                     ODBC_LEADER__ERR_CONNLOST);
    /* a listed HYT00 follows the list */
    assert_int_equal(odbc_leader__classify(d, "HYT00", 0),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "HYT01", 0),
                     ODBC_LEADER__ERR_TRANSIENT);
    /* prefix, case-insensitive */
    assert_int_equal(odbc_leader__classify(d, "40002", 0),
                     ODBC_LEADER__ERR_UNIQUE);
    assert_int_equal(odbc_leader__classify(d, "HY000", 1205),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "hy001", 1205),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(d, "HY000", 2013),
                     ODBC_LEADER__ERR_CONNLOST);
    assert_int_equal(odbc_leader__classify(d, "HY000", 2014),
                     ODBC_LEADER__ERR_OTHER);
    assert_int_equal(odbc_leader__classify(d, "42S02", 1146),
                     ODBC_LEADER__ERR_UNDEFINED_TABLE);
    assert_int_equal(odbc_leader__classify(d, "42S0", 0),
                     ODBC_LEADER__ERR_OTHER);
    /* without a dialect only the fixed rules apply */
    assert_int_equal(odbc_leader__classify(NULL, "08S01", 0),
                     ODBC_LEADER__ERR_CONNLOST);
    assert_int_equal(odbc_leader__classify(NULL, "HYT00", 0),
                     ODBC_LEADER__ERR_TRANSIENT);
    assert_int_equal(odbc_leader__classify(NULL, "23505", 0),
                     ODBC_LEADER__ERR_OTHER);
    odbc_leader__dialect_free(d);
}
