/* SPDX-License-Identifier: MIT */
/*
 * dialect_codes.c: a dialect's error-code lists: the syntax of one
 * pattern (a SQLSTATE, a prefix, SQLSTATE:native, *:native) and the
 * classification of a driver error with the lists (dialect.h), by which
 * the port tells a lost connection, a unique violation or a passing
 * failure from any other.
 */
#include <build_config.h>

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dialect.h"
#include "dialect_parser.h"

/* See dialect_parser.h. */
int odbc_leader__dialect_parse_code(const char *s, size_t n,
                                    struct odbc_leader__code *c) {
    const char *colon = memchr(s, ':', n);
    size_t sl = colon ? (size_t)(colon - s) : n;
    char num[24];
    char *end;
    size_t i;

    memset(c, 0, sizeof *c);
    if (sl == 0)
        return -1;
    if (s[sl - 1] == '*') {
        c->state_len = (int)(sl - 1);
        if (sl - 1 > 4)
            return -1;
    } else {
        c->state_len = (int)sl;
        if (sl != 5)
            return -1;
    }
    for (i = 0; i < (size_t)c->state_len; i++) {
        if (!isalnum((unsigned char)s[i]))
            return -1;
        c->state[i] = (char)toupper((unsigned char)s[i]);
    }
    if (!colon)
        return c->state_len > 0 ? 0 : -1; /* a bare "*" matches everything */
    n -= sl + 1;
    if (n == 0 || n >= sizeof num)
        return -1;
    memcpy(num, colon + 1, n);
    num[n] = '\0';
    if (!(isdigit((unsigned char)num[0]) || num[0] == '-'))
        return -1;
    errno = 0;
    c->native = strtol(num, &end, 10);
    if (errno || *end || end == num)
        return -1;
    c->has_native = 1;
    return 0;
}

/* 1 when pattern c matches the SQLSTATE st and native code, else 0. */
static int code_matches(const struct odbc_leader__code *c, const char *st,
                        long native) {
    if (c->state_len > 0 && strncasecmp(st, c->state, c->state_len) != 0)
        return 0;
    return !c->has_native || c->native == native;
}

/* See dialect.h: class 08 first, then the lists in the order UNIQUE,
 * TRANSIENT, CONNLOST, UNDEFINED_TABLE, READONLY, then HYT00/HYT01 as
 * TRANSIENT. d may be NULL (fixed rules only); sqlstate may be NULL. */
int odbc_leader__classify(const struct odbc_leader__dialect *d,
                          const char *sqlstate, long native) {
    static const int order[] = {
        ODBC_LEADER__ERR_UNIQUE,   ODBC_LEADER__ERR_TRANSIENT,
        ODBC_LEADER__ERR_CONNLOST, ODBC_LEADER__ERR_UNDEFINED_TABLE,
        ODBC_LEADER__ERR_READONLY,
    };
    const char *st = sqlstate ? sqlstate : "";
    size_t i, j;

    if (st[0] == '0' && st[1] == '8')
        return ODBC_LEADER__ERR_CONNLOST;
    for (i = 0; d && i < sizeof order / sizeof order[0]; i++) {
        const struct odbc_leader__code_list *l = &d->codes[order[i]];
        for (j = 0; j < l->n; j++) {
            if (code_matches(&l->v[j], st, native))
                return order[i];
        }
    }
    if (strcmp(st, "HYT00") == 0 || strcmp(st, "HYT01") == 0)
        return ODBC_LEADER__ERR_TRANSIENT;
    return ODBC_LEADER__ERR_OTHER;
}
