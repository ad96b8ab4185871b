/* SPDX-License-Identifier: MIT */
/*
 * dialect_parser.h: the reader of dialect files inside, shared by its
 * files and included by no other: the parser's state and the calls one
 * file makes into another.
 *
 *   dialect.c         the vocabulary, lines, statements, the checks
 *   dialect_header.c  the header directives (@dialect, @define, ...)
 *   dialect_codes.c   error-code patterns and the classification
 *   dialect_load.c    finding a dialect: built in, by name, by path
 *
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_DIALECT_PARSER_H
#define ODBC_LEADER_DIALECT_PARSER_H

#include <stddef.h>

#include "buf.h"
#include "dialect.h"

#define DEFINES_MAX 16 /* @define names per file */
#define DEFINE_NAME_MAX 32

/* One "@define NAME TEXT": {NAME} in SQL expands to TEXT. */
struct odbc_leader__define {
    char name[DEFINE_NAME_MAX + 1];
    char *text; /* owned */
    int line;
    int pooled; /* from "@pooled" (transaction pooling only) */
};

/* Parser state for one file. */
struct odbc_leader__parser {
    const char *file;
    const char *prefix;
    long long timeout_ms;
    int pooled; /* transaction pooling: "@pooled" replaces "@define" */
    struct odbc_leader__dialect *d;
    char *err;
    size_t errlen;
    int line;                           /* current line, 1-based */
    int in_header;                      /* before the first @statement */
    int op;                             /* section being read, or -1 */
    int op_line[ODBC_LEADER__OP_COUNT]; /* line of each @statement, 0 = none */
    int begin_line, commit_line, rollback_line;
    int dialect_line, version_line, dbms_line;
    int keys_line, qt_line, wake_line, prologue_line, pooled_keys_line;
    struct odbc_leader__buf sql; /* statement being collected */
    int stmt_line;               /* its first line, 0 = none in progress */
    int quote; /* open quote: '\'', '"', '`', '*' (block comment) or 0 */
    int nparams;
    unsigned char params[ODBC_LEADER__MAX_PARAMS];
    struct odbc_leader__define defines[DEFINES_MAX];
    int ndefines;
    int expanding; /* inside a define's text: no nested {NAME} */
    int step;      /* "@step N" in force in the upgrade section, 0 none */
};

/* ---- dialect.c ---- */

/* Writes "FILE:LINE: reason" into the parser's err. Returns
 * ODBC_LEADER_EDIALECT. */
int odbc_leader__dialect_fail(const struct odbc_leader__parser *p, int line,
                              const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Reports an allocation failure. Returns ODBC_LEADER_ENOMEM. */
int odbc_leader__dialect_nomem(const struct odbc_leader__parser *p);

/* Index of the n-byte word s in names[count], or -1. */
int odbc_leader__dialect_lookup(const char *const *names, int count,
                                const char *s, size_t n);

/* The text between leading and trailing blanks of s[0..n): sets *start and
 * returns its length. */
size_t odbc_leader__dialect_trim(const char *s, size_t n, const char **start);

/* ---- dialect_header.c ---- */

/* Handles one header directive word (n bytes) with its trimmed args.
 * Returns 0 or an error code with the message set. */
int odbc_leader__dialect_header(struct odbc_leader__parser *p, const char *w,
                                size_t wn, const char *args, size_t an);

/* Checks what the header must hold once it ends. Returns 0 or an error. */
int odbc_leader__dialect_end_header(struct odbc_leader__parser *p);

/* Returns the text in force for {s[0..n)}: under transaction pooling a
 * "@pooled" text first, else the "@define". NULL when neither. Borrowed
 * from p. */
const struct odbc_leader__define *
odbc_leader__dialect_define(const struct odbc_leader__parser *p, const char *s,
                            size_t n);

/* ---- dialect_codes.c ---- */

/* Parses one code pattern (23505, 08*, HY000:19, *:1062) of n bytes into
 * *c. Returns 0, or -1 when malformed. */
int odbc_leader__dialect_parse_code(const char *s, size_t n,
                                    struct odbc_leader__code *c);

/* ---- dialect_load.c ---- */

/* 1 when s (n bytes) is a dialect name: [a-z0-9_-]+, else 0. */
int odbc_leader__dialect_valid_name(const char *s, size_t n);

#endif /* ODBC_LEADER_DIALECT_PARSER_H */
