/* SPDX-License-Identifier: MIT */
/*
 * format.c: how the subcommands and serve write values for people and
 * programs: database times as UTC, strings as JSON literals (or null).
 */
#include <build_config.h>

#include <time.h>

#include "cli.h"

const char *odbc_leader__cli_utc(int64_t ms, char *buf, size_t len) {
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    size_t n;

    gmtime_r(&t, &tm);
    n = strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%03u", (unsigned)(ms % 1000) % 1000u);
    return buf;
}

void odbc_leader__cli_json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;

        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", f);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

void odbc_leader__cli_json_or_null(FILE *f, const char *s) {
    if (s[0] != '\0')
        odbc_leader__cli_json_string(f, s);
    else
        fputs("null", f);
}
