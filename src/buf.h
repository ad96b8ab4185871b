/* SPDX-License-Identifier: MIT */
/*
 * buf.h: a growable string buffer and a bounded
 * string copy (buf.c).
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_BUF_H
#define ODBC_LEADER_BUF_H

#include <stddef.h>

struct odbc_leader__buf {
    char *p; /* owned; NUL-terminated once anything was added */
    size_t len;
    size_t cap;
};

/* Appends s[0..n) to b. Returns 0, or -1 when out of memory. */
int odbc_leader__buf_add(struct odbc_leader__buf *b, const char *s, size_t n);

/* A malloc'd, NUL-terminated copy of s[0..n). Returns NULL when out of
 * memory; the caller owns the copy. */
char *odbc_leader__strndup(const char *s, size_t n);

#endif /* ODBC_LEADER_BUF_H */
