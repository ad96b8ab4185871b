/* SPDX-License-Identifier: MIT */
/*
 * fuzz_dialect.c: libFuzzer target for odbc_leader__dialect_parse(), the
 * reader of dialect files (the files of sql/, or one named by LeaderDialect).
 * The input is the file's text; make fuzz also hands the fuzzer sql/ as
 * a read-only seed directory. The text is parsed as a plain dialect and,
 * when it mentions @pooled, again under transaction pooling. A parsed
 * dialect must hold what db.c relies on (checked below); a refused one
 * must say why. Error classification runs over the code lists. Nothing
 * may leak.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dialect.h"
#include "fuzz.h"

/* Checks the statements of one operation (borrowed). */
static void check_stmts(const struct odbc_leader__stmt_list *l) {
    fuzz_check(l->n <= ODBC_LEADER__MAX_STMTS, "statements per operation");
    for (size_t i = 0; i < l->n; i++) {
        const struct odbc_leader__stmt *st = &l->v[i];
        fuzz_check(st->sql != NULL && st->sql[0] != '\0', "statement text");
        fuzz_check(st->nparams >= 0 && st->nparams <= ODBC_LEADER__MAX_PARAMS,
                   "parameter count");
        for (int p = 0; p < st->nparams; p++)
            fuzz_check(st->params[p] < ODBC_LEADER__P_COUNT, "parameter");
        fuzz_check(st->line > 0, "statement line");
    }
}

/* Checks a parsed dialect (borrowed) and classifies a few errors with
 * it. */
static void check_dialect(const struct odbc_leader__dialect *d) {
    static const char *const states[] = {"23505", "40001", "08S01", "HY000",
                                         "42P01", "25006", "HYT00", ""};

    fuzz_check(d->name != NULL && d->name[0] != '\0', "dialect name");
    fuzz_check(d->schema_version >= 1, "schema version");
    fuzz_check(!d->begin == !d->commit && !d->begin == !d->rollback,
               "begin, commit and rollback together");
    for (int op = 0; op < ODBC_LEADER__OP_COUNT; op++)
        check_stmts(&d->ops[op]);
    fuzz_check(d->ops[ODBC_LEADER__OP_ATTEMPT].n > 0, "attempt statement");
    for (int c = 1; c < 6; c++) {
        for (size_t i = 0; i < d->codes[c].n; i++)
            fuzz_check(d->codes[c].v[i].state_len <= 5, "code length");
    }
    for (size_t i = 0; i < sizeof states / sizeof states[0]; i++) {
        int cls = odbc_leader__classify(d, states[i], (long)i - 1);
        fuzz_check(cls >= ODBC_LEADER__ERR_OTHER &&
                       cls <= ODBC_LEADER__ERR_READONLY,
                   "error class");
    }
}

/* Parses text with pooled set as given and checks the outcome. */
static void parse_once(const char *text, int pooled) {
    struct odbc_leader__dialect_vars vars = {"odbc_leader_", 5000, pooled};
    struct odbc_leader__dialect *d = NULL;
    char err[512] = "";
    int rc = odbc_leader__dialect_parse(text, "fuzz.sql", &vars, &d, err,
                                        sizeof err);

    if (rc == 0) {
        fuzz_check(d != NULL, "dialect returned");
        check_dialect(d);
    } else {
        fuzz_check(rc == ODBC_LEADER_EDIALECT || rc == ODBC_LEADER_ENOMEM,
                   "error code");
        fuzz_check(d == NULL, "no dialect on error");
        fuzz_check(strncmp(err, "fuzz.sql", 8) == 0 ||
                       rc != ODBC_LEADER_EDIALECT,
                   "message names the file");
    }
    odbc_leader__dialect_free(d);
}

/* Parses the input as a dialect file. Returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_string(data, size);

    parse_once(text, 0);
    if (strstr(text, "@pooled"))
        parse_once(text, 1);
    free(text);
    return 0;
}
