/* SPDX-License-Identifier: MIT */
/*
 * test_dialect.h: what the files of the unit test test_dialect share:
 * short names of the parameters, the texts of minimal dialect files, the
 * parse helpers of test_dialect.c and the tests main() runs, by file.
 *
 *   test_dialect.c          main() and its table, the parse helpers
 *   test_dialect_builtin.c  the built-in dialects (sql/, builtin_dialects.c)
 *   test_dialect_format.c   the file format and its error messages
 *   test_dialect_codes.c    error-code lists and the classification
 *   test_dialect_load.c     finding the dialect LeaderDialect names
 */
#ifndef TEST_DIALECT_H
#define TEST_DIALECT_H

#include <stddef.h>

#include "dialect.h"

enum {
    NS = ODBC_LEADER__P_NS,
    ID = ODBC_LEADER__P_ID,
    TERM = ODBC_LEADER__P_TERM,
    TTL = ODBC_LEADER__P_TTL_MS,
    CTTL = ODBC_LEADER__P_CAND_TTL_MS,
    VERSION = ODBC_LEADER__P_VERSION,
    TO = ODBC_LEADER__P_TO,
    WAIT = ODBC_LEADER__P_WAIT_MS,
    JOB = ODBC_LEADER__P_JOB,
    FIRE = ODBC_LEADER__P_FIRE_MS,
    STATUS = ODBC_LEADER__P_STATUS,
    RET = ODBC_LEADER__P_RETENTION_MS,
    SEEN = ODBC_LEADER__P_SEEN_TERM,
    SEENX = ODBC_LEADER__P_SEEN_EXPIRES_MS,
    MAXATT = ODBC_LEADER__P_MAX_ATTEMPTS,
};

/* Every operation except on_connect, one trivial statement each. */
#define REQUIRED_OPS                                                           \
    "-- @statement ddl\n"                                                      \
    "CREATE TABLE t (x INTEGER);\n"                                            \
    "-- @statement schema_version\n"                                           \
    "SELECT 1;\n"                                                              \
    "-- @statement attempt\n"                                                  \
    "SELECT 2 WHERE :seen_term = :seen_expires_ms;\n"                          \
    "-- @statement renew\n"                                                    \
    "SELECT 3;\n"                                                              \
    "-- @statement resign\n"                                                   \
    "SELECT 4;\n"                                                              \
    "-- @statement unregister\n"                                               \
    "SELECT 5;\n"                                                              \
    "-- @statement leader\n"                                                   \
    "SELECT 6;\n"                                                              \
    "-- @statement candidates\n"                                               \
    "SELECT 7;\n"                                                              \
    "-- @statement request_resign\n"                                           \
    "SELECT 8;\n"

/* The fire ledger's operations, required from @schema-version 2 on. */
#define LEDGER_OPS                                                             \
    "-- @statement claim\n"                                                    \
    "SELECT 9;\n"                                                              \
    "-- @statement finish\n"                                                   \
    "SELECT 10;\n"                                                             \
    "-- @statement fire\n"                                                     \
    "SELECT 11;\n"                                                             \
    "-- @statement fires\n"                                                    \
    "SELECT 12;\n"                                                             \
    "-- @statement fire_gc\n"                                                  \
    "SELECT 13;\n"                                                             \
    "-- @statement fence\n"                                                    \
    "SELECT 14;\n"

#define HEADER "-- @dialect t\n-- @schema-version 1\n"

/* The variables of every parse and load here: table prefix "pfx_",
 * {timeout_ms} 1234, no transaction pooling. */
extern const struct odbc_leader__dialect_vars test_vars;

/* ---- test_dialect.c: the parse helpers ---- */

struct odbc_leader__dialect *parse_ok(const char *text);
void expect_error(const char *text, int line, const char *reason);
void expect_params(const struct odbc_leader__dialect *d, int op, size_t i,
                   const unsigned char *want, int n);
struct odbc_leader__dialect *parse_builtin(const char *name);

/* ---- test_dialect_builtin.c ---- */

void test_builtin_names(void **state);
void test_builtin_text_matches_file(void **state);
void test_builtin_sqlite(void **state);
void test_builtin_postgresql(void **state);
void test_builtin_postgresql_pooled(void **state);
void test_builtin_mariadb(void **state);
void test_fence_sql(void **state);

/* ---- test_dialect_format.c ---- */

void test_define_expands_with_params_and_prefix(void **state);
void test_err_define(void **state);
void test_session_id(void **state);
void test_wake_up_statements_go_together(void **state);
void test_err_too_many_statements(void **state);
void test_minimal_and_statement_text(void **state);
void test_quotes_left_alone(void **state);
void test_header_values(void **state);
void test_err_unknown_directive(void **state);
void test_err_unknown_op(void **state);
void test_err_group_ops_together(void **state);
void test_err_election_ops_together(void **state);
void test_err_lifecycle_ops_together(void **state);
void test_err_duplicate_op(void **state);
void test_err_missing_op(void **state);
void test_err_each_required_op_is_named(void **state);
void test_err_attempt_without_watch(void **state);
void test_err_lists_are_complete(void **state);
void test_ledger_ops_by_version(void **state);
void test_upgrade_steps(void **state);
void test_err_missing_header(void **state);
void test_err_bad_code(void **state);
void test_err_unknown_param(void **state);
void test_err_too_many_params(void **state);
void test_err_unknown_placeholder(void **state);
void test_connect_keys_and_query_timeout(void **state);
void test_err_transaction_directives(void **state);
void test_err_empty_section(void **state);
void test_err_unterminated(void **state);
void test_null_filename_and_vars(void **state);

/* ---- test_dialect_codes.c ---- */

void test_classify_postgresql(void **state);
void test_classify_mariadb(void **state);
void test_classify_sqlite(void **state);
void test_classify_patterns(void **state);

/* ---- test_dialect_load.c ---- */

void test_load_auto(void **state);
void test_load_named(void **state);
void test_load_path(void **state);

#endif /* TEST_DIALECT_H */
