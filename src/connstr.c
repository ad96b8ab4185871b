/* SPDX-License-Identifier: MIT */
/*
 * connstr.c: the tokenizer of ODBC connection strings (connstr.h), shared
 * by the configuration parser (config.c), the password stripping of
 * odbc-leader run and the wake-up file's look-up of Database= (wakefile.c),
 * so that every reader splits a string the way the driver manager does.
 */
#include <build_config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "connstr.h"
#include "log.h"
#include "odbc_leader.h"

static int is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
           c == '\f';
}

/* Writes at most ODBC_LEADER__SHOW_MAX bytes of s[0..n) into dst
 * (ODBC_LEADER__SHOW_BUF bytes) as printable ASCII, other bytes and '"' '\\' as
 * \xNN. Returns dst. */
const char *odbc_leader__show(char *dst, const char *s, size_t n) {
    size_t o = 0;
    for (size_t i = 0; i < n && i < ODBC_LEADER__SHOW_MAX; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            dst[o++] = (char)c;
        else
            o += (size_t)snprintf(dst + o, 5, "\\x%02x", c);
    }
    if (n > ODBC_LEADER__SHOW_MAX) {
        memcpy(dst + o, "...", 3);
        o += 3;
    }
    dst[o] = '\0';
    return dst;
}

/* Like odbc_leader__show() for a whole string. */
const char *odbc_leader__show_str(char *dst, const char *s) {
    return odbc_leader__show(dst, s, strlen(s));
}

/* 1 when key[0..n) equals name, ignoring ASCII case. */
int odbc_leader__connstr_key_is(const char *key, size_t n, const char *name) {
    return strlen(name) == n && strncasecmp(key, name, n) == 0;
}

/*
 * Decodes the braced value starting at s[*pos] == '{' ("}}" is a literal
 * '}'). On return *pos is just past the closing brace. Returns 0 and a new
 * string in *value, ODBC_LEADER_ECONFIG (unterminated) or ENOMEM. The key
 * is only used in the message; the value never appears in it.
 */
static int decode_braced(const char *s, size_t *pos,
                         const struct odbc_leader__pair *p, char **value,
                         char *err, size_t errlen) {
    struct odbc_leader__buf b = {0};
    char kbuf[ODBC_LEADER__SHOW_BUF];
    size_t i = *pos + 1;
    int oom = odbc_leader__buf_add(&b, "", 0);
    int rc = 0;

    while (!oom) {
        size_t run = strcspn(s + i, "}");
        oom |= odbc_leader__buf_add(&b, s + i, run);
        i += run;
        if (s[i] != '}' || s[i + 1] != '}')
            break;
        oom |= odbc_leader__buf_add(&b, "}", 1);
        i += 2;
    }
    if (oom) {
        odbc_leader__errf(err, errlen, "out of memory");
        rc = ODBC_LEADER_ENOMEM;
        goto fail;
    }
    if (s[i] == '\0') {
        odbc_leader__errf(err, errlen,
                          "connection string: the value of \"%s\" (offset "
                          "%zu) has no closing \"}\"",
                          odbc_leader__show(kbuf, s + p->start, p->keylen),
                          *pos);
        rc = ODBC_LEADER_ECONFIG;
        goto fail;
    }
    *pos = i + 1;
    *value = b.p;
    return 0;
fail:
    free(b.p);
    return rc;
}

/* Reads an unbraced value from s[*pos] up to ';' or the end, blanks
 * trimmed; *pos ends on the ';' or NUL. Returns 0 or ENOMEM. */
static int read_plain(const char *s, size_t *pos, char **value, char *err,
                      size_t errlen) {
    size_t i = *pos;
    size_t n = strcspn(s + i, ";");
    size_t len = n;

    while (len > 0 && is_blank(s[i + len - 1]))
        len--;
    *value = odbc_leader__strndup(s + i, len);
    if (!*value) {
        odbc_leader__errf(err, errlen, "out of memory");
        return ODBC_LEADER_ENOMEM;
    }
    *pos = i + n;
    return 0;
}

/* Reads the value of p, which starts after its '='. Sets p->value and
 * p->end; *pos ends just past the pair's ';' (or on the NUL). Returns 0,
 * ODBC_LEADER_ECONFIG or ENOMEM. */
static int read_value(const char *s, size_t *pos, struct odbc_leader__pair *p,
                      char *err, size_t errlen) {
    char kbuf[ODBC_LEADER__SHOW_BUF];
    size_t i = p->eq + 1;
    int rc;

    while (is_blank(s[i]))
        i++;
    if (s[i] == '{')
        rc = decode_braced(s, &i, p, &p->value, err, errlen);
    else
        rc = read_plain(s, &i, &p->value, err, errlen);
    if (rc != 0)
        return rc;
    p->end = i;
    while (p->end > p->eq + 1 && is_blank(s[p->end - 1]))
        p->end--;
    while (is_blank(s[i]))
        i++;
    if (s[i] != ';' && s[i] != '\0') {
        odbc_leader__errf(err, errlen,
                          "connection string: unexpected text after the "
                          "closing \"}\" of \"%s\" (offset %zu)",
                          odbc_leader__show(kbuf, s + p->start, p->keylen), i);
        free(p->value);
        p->value = NULL;
        return ODBC_LEADER_ECONFIG;
    }
    *pos = s[i] == ';' ? i + 1 : i;
    return 0;
}

/*
 * Reads the next pair of s from *pos, skipping blanks and empty pairs.
 * Returns 1 with *p filled (p->value owned by the caller), 0 at the end,
 * or a negative error. Text without '=' is reported by offset only: it may
 * be a piece of an unbraced password.
 */
int odbc_leader__connstr_next(const char *s, size_t *pos,
                              struct odbc_leader__pair *p, char *err,
                              size_t errlen) {
    size_t i = *pos;
    int rc;

    while (is_blank(s[i]) || s[i] == ';')
        i++;
    if (s[i] == '\0') {
        *pos = i;
        return 0;
    }
    memset(p, 0, sizeof *p);
    p->start = i;
    p->eq = i + strcspn(s + i, "=;");
    if (s[p->eq] != '=') {
        odbc_leader__errf(err, errlen,
                          "connection string: the text at offset %zu is not "
                          "a key=value pair (no \"=\")",
                          p->start);
        return ODBC_LEADER_ECONFIG;
    }
    p->keylen = p->eq - p->start;
    while (p->keylen > 0 && is_blank(s[p->start + p->keylen - 1]))
        p->keylen--;
    if (p->keylen == 0) {
        odbc_leader__errf(err, errlen,
                          "connection string: empty key at offset %zu",
                          p->start);
        return ODBC_LEADER_ECONFIG;
    }
    rc = read_value(s, &i, p, err, errlen);
    if (rc != 0)
        return rc;
    *pos = i;
    return 1;
}

/* See connstr.h. */
int odbc_leader__connstr_value(const char *s, const char *key, char *buf,
                               size_t len) {
    struct odbc_leader__pair p;
    size_t pos = 0;
    int rc;

    buf[0] = '\0';
    while ((rc = odbc_leader__connstr_next(s, &pos, &p, NULL, 0)) > 0) {
        int hit = odbc_leader__connstr_key_is(s + p.start, p.keylen, key) &&
                  p.value[0] != '\0';

        if (hit)
            snprintf(buf, len, "%s", p.value);
        free(p.value);
        if (hit)
            return 1;
    }
    return 0;
}
