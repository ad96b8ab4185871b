/* SPDX-License-Identifier: MIT */
/*
 * buf.c: a growable, always NUL-terminated byte buffer and a bounded string
 * copy, shared by the configuration and dialect parsers.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* Appends s[0..n) to b, growing it by doubling. Returns 0, or -1 when out
 * of memory (b is unchanged then). b owns its bytes; free b->p. */
int odbc_leader__buf_add(struct odbc_leader__buf *b, const char *s, size_t n) {
    size_t cap = b->cap != 0 ? b->cap : 64;
    char *p;

    while (b->len + n + 1 > cap)
        cap *= 2;
    if (cap != b->cap) {
        p = realloc(b->p, cap);
        if (p == NULL)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

/* Returns a malloc'd copy of s[0..n) with a NUL after it, owned by the
 * caller, or NULL when out of memory. s is borrowed. */
char *odbc_leader__strndup(const char *s, size_t n) {
    char *r = malloc(n + 1);

    if (r == NULL)
        return NULL;
    memcpy(r, s, n);
    r[n] = '\0';
    return r;
}
