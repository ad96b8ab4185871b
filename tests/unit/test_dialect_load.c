/* SPDX-License-Identifier: MIT */
/*
 * test_dialect_load.c: finding the dialect LeaderDialect names
 * (src/dialect_load.c): auto by the DBMS name, a built-in by name, or a
 * file by path, and the messages when none fits.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_dialect.h"

/* Loads spec; returns the result code, *out and the message in err. */
static int load(const char *spec, const char *dbms,
                struct odbc_leader__dialect **out, char *err, size_t errlen) {
    err[0] = '\0';
    return odbc_leader__dialect_load(spec, dbms, &test_vars, out, err, errlen);
}

/* Loads spec, which must succeed and give the dialect called name. */
static void expect_load(const char *spec, const char *dbms, const char *name) {
    struct odbc_leader__dialect *d = NULL;
    char err[512];
    int rc = load(spec, dbms, &d, err, sizeof err);

    if (rc != 0)
        print_error("load(%s, %s): %s\n", spec, dbms ? dbms : "NULL", err);
    assert_int_equal(rc, 0);
    assert_non_null(d);
    assert_string_equal(d->name, name);
    odbc_leader__dialect_free(d);
}

/* Loads spec, which must fail with EDIALECT and a message holding each of
 * the (NULL-terminated) strings. */
static void expect_load_error(const char *spec, const char *dbms, ...) {
    struct odbc_leader__dialect *d = (void *)1;
    char err[512];
    const char *want;
    va_list ap;
    int rc = load(spec, dbms, &d, err, sizeof err);

    assert_int_equal(rc, ODBC_LEADER_EDIALECT);
    assert_null(d);
    va_start(ap, dbms);
    for (want = va_arg(ap, const char *); want;
         want = va_arg(ap, const char *)) {
        if (!strstr(err, want))
            print_error("\"%s\" lacks \"%s\"\n", err, want);
        assert_non_null(strstr(err, want));
    }
    va_end(ap);
}

void test_load_auto(void **state) {
    (void)state;
    expect_load("auto", "PostgreSQL", "postgresql");
    expect_load("auto", "postgresql 15.4", "postgresql");
    expect_load("auto", "SQLite", "sqlite");
    expect_load("auto", "MariaDB", "mariadb");
    expect_load(NULL, "SQLITE", "sqlite");
    expect_load("", "SQLite", "sqlite");
    expect_load_error("auto", "Oracle", "\"Oracle\"", "LeaderDialect", "sqlite",
                      "postgresql", NULL);
    expect_load_error("auto", "Postgre", "\"Postgre\"", NULL);
    expect_load_error("auto", NULL, "LeaderDialect", NULL);
    expect_load_error("auto", "", "LeaderDialect", NULL);
}

void test_load_named(void **state) {
    (void)state;
    expect_load("postgresql", NULL, "postgresql");
    expect_load("sqlite", "PostgreSQL", "sqlite");
    expect_load_error("oracle", "PostgreSQL", "LeaderDialect", "oracle",
                      "sqlite, postgresql", NULL);
    expect_load_error("Bad Name", NULL, "LeaderDialect", "[a-z0-9_-]+", NULL);
}

/* Writes text to a new temp file; returns its path (caller unlinks and
 * frees). */
static char *temp_file(const char *text) {
    char *path = strdup("/tmp/test_dialect_XXXXXX");
    int fd;

    assert_non_null(path);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

void test_load_path(void **state) {
    char *path = temp_file("-- @dialect from-file\n-- @schema-version 3\n"
                           "-- @dbms Oracle\n" REQUIRED_OPS LEDGER_OPS);
    char *bad = temp_file(HEADER "-- @statement nope\n");
    char want[128];
    struct odbc_leader__dialect *d = NULL;
    char err[512];

    (void)state;
    expect_load(path, "PostgreSQL", "from-file");
    snprintf(want, sizeof want, "%s:3: ", bad);
    expect_load_error(bad, NULL, want, "unknown operation \"nope\"", NULL);
    assert_int_equal(load(path, NULL, &d, err, sizeof err), 0);
    assert_int_equal(d->schema_version, 3);
    odbc_leader__dialect_free(d);
    unlink(path);
    unlink(bad);
    expect_load_error(path, NULL, "LeaderDialect", path, strerror(ENOENT),
                      NULL);
    expect_load_error("/tmp/", NULL, "/tmp/", strerror(EISDIR), NULL);
    expect_load_error("missing.sql", NULL, "missing.sql", strerror(ENOENT),
                      NULL);
    free(path);
    free(bad);
}
