/* SPDX-License-Identifier: MIT */
/*
 * dialect_header.c: the header of a dialect file, the directives before
 * the first @statement (docs/dialects.md): its name and @dbms, the schema
 * version, the transaction statements, the error-code lists, @define and
 * @pooled texts, the connection keys, the query timeout, the wake-up
 * file. Each directive is read once; end_header checks what must be
 * there.
 */
#include <build_config.h>

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "dialect.h"
#include "dialect_parser.h"

/* Directive words of the code lists, indexed by enum odbc_leader__errclass. */
static const char *const code_directives[6] = {
    NULL,
    "unique-violation",
    "transient",
    "connection-lost",
    "undefined-table",
    "read-only",
};

/* Appends the space-separated codes in args to d->codes[cls]. Returns 0
 * or an error code with the message set. */
static int parse_codes(struct odbc_leader__parser *p, int cls, const char *args,
                       size_t n) {
    struct odbc_leader__code_list *l = &p->d->codes[cls];
    struct odbc_leader__code code, *v;
    size_t i = 0, start;

    if (n == 0)
        return odbc_leader__dialect_fail(p, p->line,
                                         "@%s needs at least one error code",
                                         code_directives[cls]);
    while (i < n) {
        while (i < n && isspace((unsigned char)args[i]))
            i++;
        start = i;
        while (i < n && !isspace((unsigned char)args[i]))
            i++;
        if (i == start)
            break;
        if (odbc_leader__dialect_parse_code(args + start, i - start, &code) !=
            0)
            return odbc_leader__dialect_fail(
                p, p->line,
                "bad error code \"%.*s\" in @%s; expected a "
                "SQLSTATE (23505), a prefix (08*), SQLSTATE:native "
                "(HY000:19) or *:native (*:1062)",
                (int)(i - start), args + start, code_directives[cls]);
        v = realloc(l->v, (l->n + 1) * sizeof *v);
        if (!v)
            return odbc_leader__dialect_nomem(p);
        l->v = v;
        l->v[l->n++] = code;
    }
    return 0;
}

/* Stores a copy of the n-byte text s in *dst, once. Returns 0 or an error
 * code with the message set. */
static int set_text(struct odbc_leader__parser *p, const char *word,
                    int *seen_line, char **dst, const char *s, size_t n) {
    if (*seen_line)
        return odbc_leader__dialect_fail(
            p, p->line, "duplicate @%s (first at line %d)", word, *seen_line);
    if (n == 0)
        return odbc_leader__dialect_fail(p, p->line, "@%s needs a value", word);
    *dst = odbc_leader__strndup(s, n);
    if (!*dst)
        return odbc_leader__dialect_nomem(p);
    *seen_line = p->line;
    return 0;
}

/* Handles @begin, @commit and @rollback: the SQL text, without a trailing
 * ';'. Returns 0 or an error code with the message set. */
static int set_tx(struct odbc_leader__parser *p, const char *word,
                  int *seen_line, char **dst, const char *s, size_t n) {
    if (n > 0 && s[n - 1] == ';')
        n = odbc_leader__dialect_trim(s, n - 1, &s);
    return set_text(p, word, seen_line, dst, s, n);
}

/* Handles @schema-version N. Returns 0 or an error code. */
static int set_version(struct odbc_leader__parser *p, const char *s, size_t n) {
    long v = 0;
    size_t i;

    if (p->version_line)
        return odbc_leader__dialect_fail(
            p, p->line, "duplicate @schema-version (first at line %d)",
            p->version_line);
    for (i = 0; i < n && v <= INT_MAX; i++) {
        if (!isdigit((unsigned char)s[i]))
            break;
        v = v * 10 + (s[i] - '0');
    }
    if (n == 0 || i != n || v < 1 || v > INT_MAX)
        return odbc_leader__dialect_fail(
            p, p->line,
            "bad @schema-version \"%.*s\"; expected a positive "
            "integer",
            (int)n, s);
    p->d->schema_version = (int)v;
    p->version_line = p->line;
    return 0;
}

/* Handles @dialect NAME. Returns 0 or an error code. */
static int set_name(struct odbc_leader__parser *p, const char *s, size_t n) {
    if (n > 0 && !odbc_leader__dialect_valid_name(s, n))
        return odbc_leader__dialect_fail(
            p, p->line, "bad @dialect name \"%.*s\"; expected [a-z0-9_-]+",
            (int)n, s);
    return set_text(p, "dialect", &p->dialect_line, &p->d->name, s, n);
}

/* See dialect_parser.h. */
int odbc_leader__dialect_end_header(struct odbc_leader__parser *p) {
    struct odbc_leader__dialect *d = p->d;

    p->in_header = 0;
    if (!d->name)
        return odbc_leader__dialect_fail(
            p, p->line, "missing @dialect NAME before the first @statement");
    if (!d->schema_version)
        return odbc_leader__dialect_fail(
            p, p->line,
            "missing @schema-version N before the first @statement");
    if (d->begin && (!d->commit || !d->rollback))
        return odbc_leader__dialect_fail(
            p, p->begin_line,
            "@begin without %s; @begin, @commit and @rollback go "
            "together",
            !d->commit ? "@commit" : "@rollback");
    if (!d->begin && (d->commit || d->rollback))
        return odbc_leader__dialect_fail(
            p, d->commit ? p->commit_line : p->rollback_line,
            "@%s without @begin; @begin, @commit and @rollback go "
            "together",
            d->commit ? "commit" : "rollback");
    return 0;
}

/* Returns the define named s[0..n) from "@define" (pooled 0) or
 * "@pooled" (pooled 1), or NULL. Borrowed from p. */
static const struct odbc_leader__define *
find_define(const struct odbc_leader__parser *p, const char *s, size_t n,
            int pooled) {
    for (int i = 0; i < p->ndefines; i++)
        if (p->defines[i].pooled == pooled && strlen(p->defines[i].name) == n &&
            memcmp(p->defines[i].name, s, n) == 0)
            return &p->defines[i];
    return NULL;
}

/* See dialect_parser.h. */
const struct odbc_leader__define *
odbc_leader__dialect_define(const struct odbc_leader__parser *p, const char *s,
                            size_t n) {
    const struct odbc_leader__define *def =
        p->pooled ? find_define(p, s, n, 1) : NULL;

    return def != NULL ? def : find_define(p, s, n, 0);
}

/* Handles "@define NAME TEXT" (pooled 0) and "@pooled NAME TEXT" (pooled
 * 1): NAME is [a-z_][a-z0-9_]*, not a built-in placeholder, defined once
 * by each. Under transaction pooling a @pooled text replaces the @define
 * of the same name; otherwise @pooled lines are only checked. Returns 0
 * or an error code. */
static int add_define(struct odbc_leader__parser *p, const char *s, size_t n,
                      int pooled) {
    const char *word = pooled ? "@pooled" : "@define";
    struct odbc_leader__define *def;
    const struct odbc_leader__define *old;
    const char *text;
    size_t wn = 0, tn;

    while (wn < n && (islower((unsigned char)s[wn]) || s[wn] == '_' ||
                      (wn > 0 && isdigit((unsigned char)s[wn]))))
        wn++;
    tn = odbc_leader__dialect_trim(s + wn, n - wn, &text);
    if (wn == 0 || wn > DEFINE_NAME_MAX ||
        (wn < n && !isspace((unsigned char)s[wn])))
        return odbc_leader__dialect_fail(
            p, p->line,
            "bad %s name; expected %s NAME TEXT with NAME "
            "of at most %d characters [a-z0-9_]",
            word, word, DEFINE_NAME_MAX);
    if (tn == 0)
        return odbc_leader__dialect_fail(p, p->line, "%s %.*s needs a text",
                                         word, (int)wn, s);
    if ((wn == 6 && memcmp(s, "prefix", 6) == 0) ||
        (wn == 10 && memcmp(s, "timeout_ms", 10) == 0) ||
        (wn == 15 && memcmp(s, "timeout_half_ms", 15) == 0))
        return odbc_leader__dialect_fail(
            p, p->line, "%s %.*s: the name is built in", word, (int)wn, s);
    old = find_define(p, s, wn, pooled);
    if (old != NULL)
        return odbc_leader__dialect_fail(p, p->line,
                                         "duplicate %s %.*s (first at line %d)",
                                         word, (int)wn, s, old->line);
    if (p->ndefines == DEFINES_MAX)
        return odbc_leader__dialect_fail(
            p, p->line, "more than %d @define lines", DEFINES_MAX);
    def = &p->defines[p->ndefines++];
    def->text = odbc_leader__strndup(text, tn);
    if (def->text == NULL)
        return odbc_leader__dialect_nomem(p);
    memcpy(def->name, s, wn);
    def->name[wn] = '\0';
    def->line = p->line;
    def->pooled = pooled;
    return 0;
}

/* Appends to b the n bytes of s with {timeout_ms} and {timeout_half_ms}
 * (half the statement timeout, rounded up) expanded. Returns 0 or an
 * error code with the message set. */
static int expand_timeouts(struct odbc_leader__parser *p,
                           struct odbc_leader__buf *b, const char *s,
                           size_t n) {
    static const char full[] = "{timeout_ms}", half[] = "{timeout_half_ms}";
    char num[32];

    for (size_t i = 0; i < n;) {
        const char *add = s + i;
        size_t len = 1;

        if (s[i] == '{' && n - i >= sizeof(full) - 1 &&
            memcmp(s + i, full, sizeof(full) - 1) == 0) {
            snprintf(num, sizeof num, "%lld", p->timeout_ms);
            add = num;
            len = strlen(num);
            i += sizeof(full) - 1;
        } else if (s[i] == '{' && n - i >= sizeof(half) - 1 &&
                   memcmp(s + i, half, sizeof(half) - 1) == 0) {
            snprintf(num, sizeof num, "%lld", (p->timeout_ms + 1) / 2);
            add = num;
            len = strlen(num);
            i += sizeof(half) - 1;
        } else if (s[i] == '{' || s[i] == '}') {
            return odbc_leader__dialect_fail(
                p, p->line,
                "@connect-keys: only {timeout_ms} and "
                "{timeout_half_ms} may stand in braces");
        } else {
            i++;
        }
        if (odbc_leader__buf_add(b, add, len))
            return odbc_leader__dialect_nomem(p);
    }
    return 0;
}

/* Handles "@connect-keys KEY=VALUE;...": keys put in front of the
 * connection string (the driver reads the first of a repeated key), with
 * the timeouts expanded. Returns 0 or an error code with the message
 * set. */
static int set_connect_keys(struct odbc_leader__parser *p, const char *s,
                            size_t n) {
    struct odbc_leader__buf b = {0};
    int rc;

    if (p->keys_line)
        return odbc_leader__dialect_fail(
            p, p->line, "duplicate @connect-keys (first at line %d)",
            p->keys_line);
    if (n == 0 || memchr(s, '=', n) == NULL)
        return odbc_leader__dialect_fail(
            p, p->line, "@connect-keys needs KEY=VALUE pairs separated by ';'");
    rc = expand_timeouts(p, &b, s, n);
    if (rc != 0) {
        free(b.p);
        return rc;
    }
    p->d->connect_keys = b.p;
    p->keys_line = p->line;
    return 0;
}

/* Handles "@pooled-prologue SQL" (keys 0) and "@pooled-connect-keys
 * KEY=VALUE;..." (keys 1): kept, with the timeouts expanded, for
 * transaction pooling. Returns 0 or an error code with the message set. */
static int set_pooled(struct odbc_leader__parser *p, int keys, const char *s,
                      size_t n) {
    struct odbc_leader__buf b = {0};
    int *line = keys ? &p->pooled_keys_line : &p->prologue_line;
    const char *word = keys ? "@pooled-connect-keys" : "@pooled-prologue";
    int rc;

    if (*line)
        return odbc_leader__dialect_fail(
            p, p->line, "duplicate %s (first at line %d)", word, *line);
    if (n == 0 || (keys && memchr(s, '=', n) == NULL))
        return odbc_leader__dialect_fail(
            p, p->line, "%s needs %s", word,
            keys ? "KEY=VALUE pairs separated by ';'" : "a statement");
    rc = expand_timeouts(p, &b, s, n);
    if (rc != 0) {
        free(b.p);
        return rc;
    }
    *line = p->line;
    if (keys)
        p->d->pooled_keys = b.p;
    else
        p->d->pooled_prologue = b.p;
    return 0;
}

/* Handles "@query-timeout on|off": whether statements get the ODBC query
 * timeout (off when the dialect bounds them in the session and the
 * driver's own handling would override that). Returns 0 or an error code
 * with the message set. */
static int set_query_timeout(struct odbc_leader__parser *p, const char *s,
                             size_t n) {
    if (p->qt_line)
        return odbc_leader__dialect_fail(
            p, p->line, "duplicate @query-timeout (first at line %d)",
            p->qt_line);
    p->qt_line = p->line;
    if (n == 2 && memcmp(s, "on", 2) == 0) {
        p->d->no_query_timeout = 0;
        return 0;
    }
    if (n == 3 && memcmp(s, "off", 3) == 0) {
        p->d->no_query_timeout = 1;
        return 0;
    }
    return odbc_leader__dialect_fail(
        p, p->line, "@query-timeout takes on or off, not \"%.*s\"", (int)n, s);
}

/* Handles "@wake-file" (no arguments): the follower wake-up through a
 * lock file beside the database file, for databases that are files on
 * one host. Returns 0 or an error code with the message set. */
static int set_wake_file(struct odbc_leader__parser *p, size_t an) {
    if (p->wake_line)
        return odbc_leader__dialect_fail(
            p, p->line, "duplicate @wake-file (first at line %d)",
            p->wake_line);
    if (an != 0)
        return odbc_leader__dialect_fail(p, p->line,
                                         "@wake-file takes no arguments");
    p->wake_line = p->line;
    p->d->wake_file = 1;
    return 0;
}

/* See dialect_parser.h. */
int odbc_leader__dialect_header(struct odbc_leader__parser *p, const char *w,
                                size_t wn, const char *args, size_t an) {
    struct odbc_leader__dialect *d = p->d;
    int cls = odbc_leader__dialect_lookup(code_directives, 6, w, wn);

    if (cls > 0)
        return parse_codes(p, cls, args, an);
    if (wn == 7 && memcmp(w, "dialect", 7) == 0)
        return set_name(p, args, an);
    if (wn == 4 && memcmp(w, "dbms", 4) == 0)
        return set_text(p, "dbms", &p->dbms_line, &d->dbms, args, an);
    if (wn == 14 && memcmp(w, "schema-version", 14) == 0)
        return set_version(p, args, an);
    if (wn == 5 && memcmp(w, "begin", 5) == 0)
        return set_tx(p, "begin", &p->begin_line, &d->begin, args, an);
    if (wn == 6 && memcmp(w, "commit", 6) == 0)
        return set_tx(p, "commit", &p->commit_line, &d->commit, args, an);
    if (wn == 8 && memcmp(w, "rollback", 8) == 0)
        return set_tx(p, "rollback", &p->rollback_line, &d->rollback, args, an);
    if (wn == 6 && memcmp(w, "define", 6) == 0)
        return add_define(p, args, an, 0);
    if (wn == 6 && memcmp(w, "pooled", 6) == 0)
        return add_define(p, args, an, 1);
    if (wn == 15 && memcmp(w, "pooled-prologue", 15) == 0)
        return set_pooled(p, 0, args, an);
    if (wn == 19 && memcmp(w, "pooled-connect-keys", 19) == 0)
        return set_pooled(p, 1, args, an);
    if (wn == 12 && memcmp(w, "connect-keys", 12) == 0)
        return set_connect_keys(p, args, an);
    if (wn == 13 && memcmp(w, "query-timeout", 13) == 0)
        return set_query_timeout(p, args, an);
    if (wn == 9 && memcmp(w, "wake-file", 9) == 0)
        return set_wake_file(p, an);
    return odbc_leader__dialect_fail(p, p->line, "unknown directive @%.*s",
                                     (int)wn, w);
}
