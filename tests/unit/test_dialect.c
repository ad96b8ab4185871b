/* SPDX-License-Identifier: MIT */
/*
 * test_dialect.c: unit tests of the dialect layer: the built-in dialect
 * files, the file format and its error messages, error classification
 * and dialect selection (src/dialect*.c, src/builtin_dialects.c). This
 * file runs them (main) and holds the parse helpers they share; the tests
 * are in the test_dialect_*.c files that test_dialect.h lists.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "test_dialect.h"

const struct odbc_leader__dialect_vars test_vars = {"pfx_", 1234, 0};

/* Parses text as "t.sql" with test_vars; returns the result code and
 * leaves the dialect (or NULL) in *out and the message in err. */
static int parse(const char *text, struct odbc_leader__dialect **out, char *err,
                 size_t errlen) {
    err[0] = '\0';
    return odbc_leader__dialect_parse(text, "t.sql", &test_vars, out, err,
                                      errlen);
}

/* Parses text, which must succeed; returns the dialect (caller frees). */
struct odbc_leader__dialect *parse_ok(const char *text) {
    struct odbc_leader__dialect *d = NULL;
    char err[512];
    int rc = parse(text, &d, err, sizeof err);

    if (rc != 0)
        print_error("unexpected error: %s\n", err);
    assert_int_equal(rc, 0);
    assert_non_null(d);
    return d;
}

/* Parses text, which must fail with "t.sql:LINE: " and a message holding
 * reason. */
void expect_error(const char *text, int line, const char *reason) {
    struct odbc_leader__dialect *d = (void *)1;
    char err[512], want[32];
    int rc = parse(text, &d, err, sizeof err);

    snprintf(want, sizeof want, "t.sql:%d: ", line);
    if (strncmp(err, want, strlen(want)) != 0 || !strstr(err, reason))
        print_error("got \"%s\", want \"%s...%s...\"\n", err, want, reason);
    assert_int_equal(rc, ODBC_LEADER_EDIALECT);
    assert_null(d);
    assert_memory_equal(err, want, strlen(want));
    assert_non_null(strstr(err, reason));
}

/* Asserts that statement i of op has exactly the n parameters in want
 * and one '?' per parameter. */
void expect_params(const struct odbc_leader__dialect *d, int op, size_t i,
                   const unsigned char *want, int n) {
    const struct odbc_leader__stmt *st;
    int marks = 0;
    const char *c;

    assert_true(i < d->ops[op].n);
    st = &d->ops[op].v[i];
    assert_int_equal(st->nparams, n);
    assert_memory_equal(st->params, want, (size_t)n);
    for (c = st->sql; *c; c++)
        marks += *c == '?';
    assert_int_equal(marks, n);
}

struct odbc_leader__dialect *parse_builtin(const char *name) {
    const char *text = odbc_leader__builtin_dialect(name);

    assert_non_null(text);
    return parse_ok(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_names),
        cmocka_unit_test(test_builtin_text_matches_file),
        cmocka_unit_test(test_builtin_sqlite),
        cmocka_unit_test(test_builtin_postgresql),
        cmocka_unit_test(test_builtin_mariadb),
        cmocka_unit_test(test_builtin_postgresql_pooled),
        cmocka_unit_test(test_fence_sql),
        cmocka_unit_test(test_minimal_and_statement_text),
        cmocka_unit_test(test_define_expands_with_params_and_prefix),
        cmocka_unit_test(test_err_define),
        cmocka_unit_test(test_session_id),
        cmocka_unit_test(test_wake_up_statements_go_together),
        cmocka_unit_test(test_err_too_many_statements),
        cmocka_unit_test(test_quotes_left_alone),
        cmocka_unit_test(test_header_values),
        cmocka_unit_test(test_err_unknown_directive),
        cmocka_unit_test(test_err_unknown_op),
        cmocka_unit_test(test_err_duplicate_op),
        cmocka_unit_test(test_err_missing_op),
        cmocka_unit_test(test_err_each_required_op_is_named),
        cmocka_unit_test(test_err_lists_are_complete),
        cmocka_unit_test(test_err_group_ops_together),
        cmocka_unit_test(test_err_election_ops_together),
        cmocka_unit_test(test_err_lifecycle_ops_together),
        cmocka_unit_test(test_err_attempt_without_watch),
        cmocka_unit_test(test_ledger_ops_by_version),
        cmocka_unit_test(test_upgrade_steps),
        cmocka_unit_test(test_err_missing_header),
        cmocka_unit_test(test_err_bad_code),
        cmocka_unit_test(test_err_unknown_param),
        cmocka_unit_test(test_err_too_many_params),
        cmocka_unit_test(test_err_unknown_placeholder),
        cmocka_unit_test(test_connect_keys_and_query_timeout),
        cmocka_unit_test(test_err_transaction_directives),
        cmocka_unit_test(test_err_empty_section),
        cmocka_unit_test(test_err_unterminated),
        cmocka_unit_test(test_null_filename_and_vars),
        cmocka_unit_test(test_classify_postgresql),
        cmocka_unit_test(test_classify_mariadb),
        cmocka_unit_test(test_classify_sqlite),
        cmocka_unit_test(test_classify_patterns),
        cmocka_unit_test(test_load_auto),
        cmocka_unit_test(test_load_named),
        cmocka_unit_test(test_load_path),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
