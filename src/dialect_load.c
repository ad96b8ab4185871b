/* SPDX-License-Identifier: MIT */
/*
 * dialect_load.c: finds the dialect LeaderDialect names
 * (odbc_leader__dialect_load()): auto, the built-in whose @dbms the
 * driver's SQL_DBMS_NAME starts with; a name, a built-in or
 * PKGDATADIR/sql/NAME.sql; or the path of a dialect file. The text goes
 * to the parser of dialect.c.
 */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L /* strerror_r (XSI form) */
#endif

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "dialect.h"
#include "dialect_parser.h"
#include "log.h"

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/local/share/odbc-leader"
#endif

#define DIALECT_FILE_MAX (1024 * 1024) /* bytes; dialect files are small */

/* See dialect_parser.h. */
int odbc_leader__dialect_valid_name(const char *s, size_t n) {
    size_t i;

    if (n == 0)
        return 0;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(islower(c) || isdigit(c) || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

/* Writes the text of errno value e into buf. Returns buf or a constant. */
static const char *errno_text(int e, char *buf, size_t n) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
    return strerror_r(e, buf, n);
#else
    if (strerror_r(e, buf, n) != 0)
        snprintf(buf, n, "error %d", e);
    return buf;
#endif
}

/* Reads the whole file at path into *text (malloc'd, NUL-terminated).
 * Returns 0, -1 when out of memory, or a positive errno value (EFBIG when
 * larger than DIALECT_FILE_MAX, EILSEQ when it holds a NUL byte). */
static int read_file(const char *path, char **text) {
    struct odbc_leader__buf b = {NULL, 0, 0};
    char chunk[4096];
    size_t got;
    int rc = 0;
    FILE *f = fopen(path, "rb");

    *text = NULL;
    if (!f)
        return errno ? errno : EIO;
    do {
        got = fread(chunk, 1, sizeof chunk, f);
        if (b.len + got > DIALECT_FILE_MAX) {
            rc = EFBIG;
            goto out;
        }
        if (got > 0 && odbc_leader__buf_add(&b, chunk, got)) {
            rc = -1;
            goto out;
        }
    } while (got == sizeof chunk);
    if (ferror(f)) {
        rc = errno ? errno : EIO;
        goto out;
    }
    if (!b.p && odbc_leader__buf_add(&b, "", 0)) {
        rc = -1;
        goto out;
    }
    if (strlen(b.p) != b.len)
        rc = EILSEQ;
out:
    fclose(f);
    if (rc)
        free(b.p);
    else
        *text = b.p;
    return rc;
}

/* Parses the file at path. Returns as odbc_leader__dialect_parse; a read
 * failure gives ODBC_LEADER_EDIALECT naming the path, and sets *errnum
 * (when not NULL) to the errno value. */
static int load_file(const char *path,
                     const struct odbc_leader__dialect_vars *vars,
                     struct odbc_leader__dialect **out, char *err,
                     size_t errlen, int *errnum) {
    char msg[128];
    char *text;
    int rc = read_file(path, &text);

    if (errnum)
        *errnum = rc > 0 ? rc : 0;
    if (rc < 0) {
        odbc_leader__errf(err, errlen, "%s: out of memory", path);
        return ODBC_LEADER_ENOMEM;
    }
    if (rc > 0) {
        odbc_leader__errf(
            err, errlen, "LeaderDialect: cannot read dialect file %s: %s", path,
            rc == EILSEQ ? "it contains a NUL byte"
                         : errno_text(rc, msg, sizeof msg));
        return ODBC_LEADER_EDIALECT;
    }
    rc = odbc_leader__dialect_parse(text, path, vars, out, err, errlen);
    free(text);
    return rc;
}

/* Parses the built-in dialect name (known to exist). */
static int load_builtin(const char *name,
                        const struct odbc_leader__dialect_vars *vars,
                        struct odbc_leader__dialect **out, char *err,
                        size_t errlen) {
    char file[64];

    snprintf(file, sizeof file, "%s.sql", name);
    return odbc_leader__dialect_parse(odbc_leader__builtin_dialect(name), file,
                                      vars, out, err, errlen);
}

/* Writes the built-in names, comma-separated, into buf. */
static void builtin_list(char *buf, size_t n) {
    const char *name;
    size_t i, len = 0;

    buf[0] = '\0';
    for (i = 0; odbc_leader__builtin_dialect_name(i); i++) {
        name = odbc_leader__builtin_dialect_name(i);
        snprintf(buf + len, n - len, "%s%s", i ? ", " : "", name);
        len += strlen(buf + len);
    }
}

/* Picks the built-in whose @dbms is the longest case-insensitive prefix of
 * dbms_name. Returns as odbc_leader__dialect_parse. */
static int load_auto(const char *dbms_name,
                     const struct odbc_leader__dialect_vars *vars,
                     struct odbc_leader__dialect **out, char *err,
                     size_t errlen) {
    struct odbc_leader__dialect *best = NULL, *d = NULL;
    const char *name;
    char list[256];
    size_t i;
    int rc = 0;

    for (i = 0; dbms_name && odbc_leader__builtin_dialect_name(i); i++) {
        name = odbc_leader__builtin_dialect_name(i);
        rc = load_builtin(name, vars, &d, err, errlen);
        if (rc)
            goto out;
        if (d->dbms && strncasecmp(dbms_name, d->dbms, strlen(d->dbms)) == 0 &&
            (!best || strlen(d->dbms) > strlen(best->dbms))) {
            odbc_leader__dialect_free(best);
            best = d;
        } else {
            odbc_leader__dialect_free(d);
        }
        d = NULL;
    }
    if (!best && (!dbms_name || !*dbms_name)) {
        builtin_list(list, sizeof list);
        odbc_leader__errf(err, errlen,
                          "LeaderDialect=auto: the driver reports no DBMS "
                          "name (SQL_DBMS_NAME); set LeaderDialect to one of "
                          "%s or to the path of a dialect file",
                          list);
        rc = ODBC_LEADER_EDIALECT;
    } else if (!best) {
        builtin_list(list, sizeof list);
        odbc_leader__errf(err, errlen,
                          "LeaderDialect=auto: no built-in dialect for the "
                          "DBMS the driver reports (SQL_DBMS_NAME \"%s\"); "
                          "set LeaderDialect to one of %s or to the path of "
                          "a dialect file",
                          dbms_name ? dbms_name : "", list);
        rc = ODBC_LEADER_EDIALECT;
    }
out:
    if (rc)
        odbc_leader__dialect_free(best);
    else
        *out = best;
    return rc;
}

/* Loads a dialect by name: a built-in, else PKGDATADIR/sql/NAME.sql.
 * Returns as odbc_leader__dialect_parse. */
static int load_named(const char *name,
                      const struct odbc_leader__dialect_vars *vars,
                      struct odbc_leader__dialect **out, char *err,
                      size_t errlen) {
    char list[256];
    char *path = NULL;
    size_t n = strlen(PKGDATADIR) + strlen(name) + 16;
    int rc, errnum = 0;

    if (!odbc_leader__dialect_valid_name(name, strlen(name))) {
        odbc_leader__errf(err, errlen,
                          "LeaderDialect=%s: expected auto, a dialect name "
                          "([a-z0-9_-]+) or a path (containing '/' or "
                          "ending in .sql)",
                          name);
        return ODBC_LEADER_EDIALECT;
    }
    if (odbc_leader__builtin_dialect(name))
        return load_builtin(name, vars, out, err, errlen);
    path = malloc(n);
    if (!path) {
        odbc_leader__errf(err, errlen, "out of memory");
        return ODBC_LEADER_ENOMEM;
    }
    snprintf(path, n, "%s/sql/%s.sql", PKGDATADIR, name);
    rc = load_file(path, vars, out, err, errlen, &errnum);
    if (rc == ODBC_LEADER_EDIALECT && errnum == ENOENT) {
        builtin_list(list, sizeof list);
        odbc_leader__errf(err, errlen,
                          "LeaderDialect=%s: unknown dialect; expected auto, "
                          "a built-in (%s), a file in %s/sql or a path to a "
                          "dialect file",
                          name, list, PKGDATADIR);
    }
    free(path);
    return rc;
}

/* See dialect.h. spec, dbms_name and vars are borrowed; *out goes to the
 * caller. An empty or NULL spec means "auto". */
int odbc_leader__dialect_load(const char *spec, const char *dbms_name,
                              const struct odbc_leader__dialect_vars *vars,
                              struct odbc_leader__dialect **out, char *err,
                              size_t errlen) {
    size_t n = spec ? strlen(spec) : 0;

    *out = NULL;
    if (n == 0 || strcmp(spec, "auto") == 0)
        return load_auto(dbms_name, vars, out, err, errlen);
    if (strchr(spec, '/') || (n > 4 && strcmp(spec + n - 4, ".sql") == 0))
        return load_file(spec, vars, out, err, errlen, NULL);
    return load_named(spec, vars, out, err, errlen);
}
