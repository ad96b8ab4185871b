/* SPDX-License-Identifier: MIT */
/*
 * connstr.h: the one tokenizer of ODBC connection strings (connstr.c):
 * key=value pairs split on ';', a braced value holding ';' and "}}" for a
 * literal '}', blanks trimmed; the lookup of one key's value; and the
 * quoting of user text in messages. Pure functions: no I/O.
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_CONNSTR_H
#define ODBC_LEADER_CONNSTR_H

#include <stddef.h>

/* Bytes of user text quoted in a message, and the room they need once
 * escaped (odbc_leader__show()). */
#define ODBC_LEADER__SHOW_MAX 64
#define ODBC_LEADER__SHOW_BUF (ODBC_LEADER__SHOW_MAX * 4 + 8)

/* One key=value pair of a connection string, as offsets into it. */
struct odbc_leader__pair {
    size_t start;  /* first byte of the key */
    size_t keylen; /* key length, trailing blanks dropped */
    size_t eq;     /* offset of '=' */
    size_t end;    /* one past the pair's last non-blank byte */
    char *value;   /* owned: the value, braces decoded, blanks trimmed */
};

/*
 * Reads the next pair of s from *pos, skipping blanks and empty pairs.
 * Returns 1 with *p filled (p->value owned by the caller), 0 at the end,
 * or ODBC_LEADER_ECONFIG / ENOMEM with a message in err that never quotes
 * a value (text without '=' is reported by offset only: it may be a piece
 * of an unbraced password). s is borrowed.
 */
int odbc_leader__connstr_next(const char *s, size_t *pos,
                              struct odbc_leader__pair *p, char *err,
                              size_t errlen);

/* Copies the first non-empty value of key (any case; braces decoded,
 * blanks trimmed) of connection string s into buf (len bytes, cut to fit).
 * Returns 1 when found, else 0 with buf "" (also when s does not parse).
 * s and key are borrowed. */
int odbc_leader__connstr_value(const char *s, const char *key, char *buf,
                               size_t len);

/* 1 when key[0..n) equals name, ignoring ASCII case. */
int odbc_leader__connstr_key_is(const char *key, size_t n, const char *name);

/* Writes at most ODBC_LEADER__SHOW_MAX bytes of s[0..n) into dst
 * (ODBC_LEADER__SHOW_BUF bytes) as printable ASCII, other bytes and '"'
 * '\\' as \xNN. Returns dst. */
const char *odbc_leader__show(char *dst, const char *s, size_t n);

/* Like odbc_leader__show() for a whole string. */
const char *odbc_leader__show_str(char *dst, const char *s);

#endif /* ODBC_LEADER_CONNSTR_H */
