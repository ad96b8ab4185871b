/* SPDX-License-Identifier: MIT */
/*
 * fuzz_redact.c: libFuzzer target for the password redaction of
 * odbc_leader__config_parse(): connect_redacted, the connection string
 * the library and the CLI print, must show "***" for every PWD= and
 * Password= value. The redactor is not a function of its own, so it is
 * tested through the parser.
 *
 * Each input line "KEY=VALUE" becomes one pair of a well-formed
 * connection string. A VALUE starting with '{' is written braced (every
 * '}' doubled as "}}"), any other as a plain value (';' and a leading '{'
 * dropped, so the pair stays one pair). When KEY is a password key (PWD or
 * Password in any case, blanks around it allowed) a marker is put in the
 * middle of its value. The property: the marker never appears in
 * connect_redacted nor in an error message; abort() otherwise. The marker
 * holds a byte removed from all other text, so only a leak can show it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "fuzz.h"

#define MARK_BYTE '\x02'
static const char marker[] = "\x02pw-s3cr3t\x02"; /* never written by input */

/* Points odbcinst at an empty private directory, so that a DSN= in the
 * input reads no system file. Returns 0. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    fuzz_private_odbc("");
    return 0;
}

/* Appends n bytes of s to b; aborts when out of memory. */
static void add(struct odbc_leader__buf *b, const char *s, size_t n) {
    if (odbc_leader__buf_add(b, s, n) != 0)
        abort();
}

/* 1 when c is a blank as the parser sees it, else 0. */
static int blank(char c) { return c != '\0' && strchr(" \t\r\n\v\f", c); }

/* 1 when the n-byte key k, blanks around it ignored, is PWD or Password
 * in any case, else 0. */
static int secret_key(const char *k, size_t n) {
    while (n > 0 && blank(k[0])) {
        k++;
        n--;
    }
    while (n > 0 && blank(k[n - 1]))
        n--;
    return (n == 3 && strncasecmp(k, "PWD", 3) == 0) ||
           (n == 8 && strncasecmp(k, "Password", 8) == 0);
}

/* Appends the n-byte key k without the bytes that would end it early
 * ('=', ';') and without the marker's byte. A key with nothing else left
 * becomes "K". */
static void add_key(struct odbc_leader__buf *b, const char *k, size_t n) {
    size_t kept = 0;

    for (size_t i = 0; i < n; i++) {
        if (k[i] != '=' && k[i] != ';' && k[i] != MARK_BYTE && !blank(k[i]))
            kept++;
    }
    for (size_t i = 0; i < n; i++) {
        if (k[i] != '=' && k[i] != ';' && k[i] != MARK_BYTE)
            add(b, &k[i], 1);
    }
    if (kept == 0)
        add(b, "K", 1);
}

/* Appends v[0..n) as the body of a braced value: '}' doubled, the
 * marker's byte dropped, and the marker after the first half when
 * secret. */
static void add_braced(struct odbc_leader__buf *b, const char *v, size_t n,
                       int secret) {
    add(b, "{", 1);
    for (size_t i = 0; i < n; i++) {
        if (secret && i == n / 2)
            add(b, marker, sizeof marker - 1);
        if (v[i] == '}')
            add(b, "}}", 2);
        else if (v[i] != MARK_BYTE)
            add(b, &v[i], 1);
    }
    if (secret && n == 0)
        add(b, marker, sizeof marker - 1);
    add(b, "}", 1);
}

/* Appends v[0..n) as a plain value: ';', the marker's byte and a '{'
 * that would open a braced value dropped; the marker after the first
 * half when secret. */
static void add_plain(struct odbc_leader__buf *b, const char *v, size_t n,
                      int secret) {
    int lead = 1; /* still in the leading blanks */

    for (size_t i = 0; i < n; i++) {
        if (secret && i == n / 2) {
            add(b, marker, sizeof marker - 1);
            lead = 0;
        }
        if (v[i] == ';' || v[i] == MARK_BYTE || (lead && v[i] == '{'))
            continue;
        lead = lead && blank(v[i]);
        add(b, &v[i], 1);
    }
    if (secret && n == 0)
        add(b, marker, sizeof marker - 1);
}

/* Appends the pair of one input line (n bytes, no newline) to b and
 * returns 1 when its key is a password key, else 0. */
static int add_line(struct odbc_leader__buf *b, const char *line, size_t n) {
    const char *eq = memchr(line, '=', n);
    size_t kn = eq ? (size_t)(eq - line) : n;
    const char *v = eq ? eq + 1 : line + n;
    size_t vn = eq ? n - kn - 1 : 0;
    int secret = secret_key(line, kn);

    add_key(b, line, kn);
    add(b, "=", 1);
    if (vn > 0 && v[0] == '{')
        add_braced(b, v + 1, vn - 1, secret);
    else
        add_plain(b, v, vn, secret);
    add(b, ";", 1);
    return secret;
}

/* Builds the connection string of the input text (owned by the caller;
 * it ends with a Driver= pair so that it names a target); *secrets gets
 * the number of password pairs. */
static char *build(const char *text, int *secrets) {
    struct odbc_leader__buf b = {0};
    const char *s = text;

    *secrets = 0;
    add(&b, "", 0);
    while (*s) {
        size_t n = strcspn(s, "\n");
        *secrets += add_line(&b, s, n);
        s += n;
        s += *s == '\n';
    }
    add(&b, "Driver={fuzz}", 13);
    return b.p;
}

/* Aborts when the marker shows in what (a string the library would print,
 * or NULL), naming it and the connection string. */
static void check_hidden(const char *what, const char *text, const char *conn) {
    if (text && strstr(text, marker))
        fuzz_fail(what, conn);
}

/* Parses the connection string built from the input and checks that no
 * password leaks. Returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_string(data, size);
    int secrets;
    char *conn = build(text, &secrets);
    char err[512] = "";
    struct odbc_leader__config cfg;
    int rc = odbc_leader__config_parse(conn, &cfg, err, sizeof err);

    check_hidden("password in an error message", err, conn);
    if (rc == 0) {
        check_hidden("password in connect_redacted", cfg.connect_redacted,
                     conn);
        fuzz_check(secrets == 0 || strstr(cfg.connect, marker) != NULL,
                   "password kept in connect");
    }
    odbc_leader__config_free(&cfg);
    free(conn);
    free(text);
    return 0;
}
