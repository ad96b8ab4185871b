/* SPDX-License-Identifier: MIT */
/*
 * crontab.c: parses the crontab subset described in crontab.h and
 * README.md (five fields with *, lists, ranges, steps and English names;
 * @hourly and friends; comments; NAME=VALUE lines) and matches a job
 * against a minute.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "crontab.h"

#define REASON_MAX 160 /* bytes of a parse error's reason */
#define BLANKS " \t"

/* The range and names of one time field. */
struct field_spec {
    const char *what;         /* for messages */
    int lo, hi;               /* accepted numbers */
    const char *const *names; /* three-letter names, or NULL */
    int n_names, names_base;  /* names[i] stands for names_base + i */
};

static const char *const month_names[] = {"jan", "feb", "mar", "apr",
                                          "may", "jun", "jul", "aug",
                                          "sep", "oct", "nov", "dec"};
static const char *const dow_names[] = {"sun", "mon", "tue", "wed",
                                        "thu", "fri", "sat"};

static const struct field_spec specs[5] = {
    {"minute", 0, 59, NULL, 0, 0},
    {"hour", 0, 23, NULL, 0, 0},
    {"day of month", 1, 31, NULL, 0, 0},
    {"month", 1, 12, month_names, 12, 1},
    {"day of week", 0, 7, dow_names, 7, 0}, /* 7 is Sunday too */
};

/* The @ shorthands and the five fields each stands for. */
static const char *const shorthands[][2] = {
    {"@yearly", "0 0 1 1 *"},  {"@annually", "0 0 1 1 *"},
    {"@monthly", "0 0 1 * *"}, {"@weekly", "0 0 * * 0"},
    {"@daily", "0 0 * * *"},   {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

/* The reader's state; freed by reader_free(). */
struct reader {
    char **env; /* owned "NAME=VALUE" strings set so far */
    size_t n_env;
    char reason[REASON_MAX]; /* why the current line was refused */
};

/* Writes a formatted reason for the current line into r. Returns -1. */
__attribute__((format(printf, 2, 3))) static int refuse(struct reader *r,
                                                        const char *fmt, ...) {
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
    va_end(ap);
    return -1;
}

/* Frees an array of n owned strings and the array. */
static void free_strings(char **v, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Frees what r owns. */
static void reader_free(struct reader *r) {
    free_strings(r->env, r->n_env);
    r->env = NULL;
    r->n_env = 0;
}

/*
 * Reads one number or name of field spec at *s (borrowed) into *out and
 * moves *s past it. Returns 0, or -1 with the reason in r.
 */
static int parse_value(struct reader *r, const char **s,
                       const struct field_spec *spec, int *out) {
    const char *p = *s;
    long v = 0;

    if (isdigit((unsigned char)*p)) {
        while (isdigit((unsigned char)*p) && v <= spec->hi)
            v = v * 10 + (*p++ - '0');
        if (isdigit((unsigned char)*p) || v < spec->lo || v > spec->hi)
            return refuse(r, "%s out of range %d-%d", spec->what, spec->lo,
                          spec->hi);
        *out = (int)v;
        *s = p;
        return 0;
    }
    for (int i = 0; i < spec->n_names; i++) {
        if (strncasecmp(p, spec->names[i], 3) == 0 &&
            !isalpha((unsigned char)p[3])) {
            *out = spec->names_base + i;
            *s = p + 3;
            return 0;
        }
    }
    return refuse(r, "bad %s \"%.20s\"", spec->what, p);
}

/*
 * Parses one list item of a field ("*", "N", "N-M", "*\/S", "N-M/S")
 * from *s, sets its bits in *bits and moves *s past it. Returns 0, or -1
 * with the reason in r.
 */
static int parse_item(struct reader *r, const char **s,
                      const struct field_spec *spec, uint64_t *bits) {
    int lo = spec->lo, hi = spec->hi, step = 1, ranged = 1;

    if (**s == '*') {
        (*s)++;
    } else if (parse_value(r, s, spec, &lo) < 0) {
        return -1;
    } else if (**s == '-') {
        (*s)++;
        if (parse_value(r, s, spec, &hi) < 0)
            return -1;
        if (hi < lo)
            return refuse(r, "%s range %d-%d runs backwards", spec->what, lo,
                          hi);
    } else {
        hi = lo;
        ranged = 0;
    }
    if (**s == '/') {
        const char *p = *s + 1;

        if (!ranged)
            return refuse(r, "%s step needs * or a range", spec->what);
        step = 0;
        while (isdigit((unsigned char)*p) && step <= spec->hi)
            step = step * 10 + (*p++ - '0');
        if (p == *s + 1 || step < 1 || step > spec->hi)
            return refuse(r, "bad %s step", spec->what);
        *s = p;
    }
    for (int v = lo; v <= hi; v += step)
        *bits |= (uint64_t)1 << v;
    return 0;
}

/*
 * Parses the comma-separated field text (borrowed, NUL-terminated) into
 * *bits; *star is set when it starts with '*'. Returns 0, or -1 with the
 * reason in r.
 */
static int parse_field(struct reader *r, const char *text,
                       const struct field_spec *spec, uint64_t *bits,
                       int *star) {
    const char *s = text;

    *bits = 0;
    *star = text[0] == '*';
    for (;;) {
        if (parse_item(r, &s, spec, bits) < 0)
            return -1;
        if (*s == '\0')
            return 0;
        if (*s != ',')
            return refuse(r, "unexpected \"%.20s\" in %s field", s, spec->what);
        s++;
    }
}

/* Copies n owned strings of src into a new array in *dst. Returns 0 or -1
 * (out of memory, *dst then NULL). */
static int copy_strings(char **src, size_t n, char ***dst) {
    char **v = calloc(n + 1, sizeof(*v));

    *dst = NULL;
    if (v == NULL)
        return -1;
    for (size_t i = 0; i < n; i++) {
        v[i] = strdup(src[i]);
        if (v[i] == NULL) {
            free_strings(v, i);
            return -1;
        }
    }
    *dst = v;
    return 0;
}

/*
 * Splits line (borrowed, modified in place) into five fields and the
 * command, or expands an @ shorthand, and fills job's time fields. On
 * success *command points into line. Returns 0, or -1 with the reason.
 */
static int parse_schedule(struct reader *r, char *line, struct cron_job *job,
                          char **command) {
    char expanded[32], *fields[5], *save = NULL, *s = line;
    uint64_t bits[5];
    int stars[5];

    if (*s == '@') {
        size_t n = strcspn(s, BLANKS);
        size_t i;

        for (i = 0; i < sizeof(shorthands) / sizeof(shorthands[0]); i++) {
            if (strlen(shorthands[i][0]) == n &&
                strncasecmp(s, shorthands[i][0], n) == 0)
                break;
        }
        if (i == sizeof(shorthands) / sizeof(shorthands[0]))
            return refuse(r, "unsupported \"%.*s\"", (int)(n > 20 ? 20 : n), s);
        snprintf(expanded, sizeof(expanded), "%s", shorthands[i][1]);
        s += n;
        for (int f = 0; f < 5; f++)
            fields[f] = strtok_r(f == 0 ? expanded : NULL, " ", &save);
    } else {
        for (int f = 0; f < 5; f++) {
            size_t n;

            s += strspn(s, BLANKS);
            n = strcspn(s, BLANKS);
            if (n == 0)
                return refuse(r, "%s field missing", specs[f].what);
            fields[f] = s;
            s += n;
            if (*s != '\0')
                *s++ = '\0';
        }
    }
    s += strspn(s, BLANKS);
    if (*s == '\0')
        return refuse(r, "no command");
    for (int f = 0; f < 5; f++) {
        if (parse_field(r, fields[f], &specs[f], &bits[f], &stars[f]) < 0)
            return -1;
    }
    job->minute = bits[0];
    job->hour = (uint32_t)bits[1];
    job->dom = (uint32_t)bits[2];
    job->month = (uint16_t)bits[3];
    job->dow = (uint8_t)((bits[4] | bits[4] >> 7) & 0x7f); /* 7 is 0 */
    job->dom_star = stars[2];
    job->dow_star = stars[4];
    if (asprintf(&job->spec, "%s %s %s %s %s", fields[0], fields[1], fields[2],
                 fields[3], fields[4]) < 0) {
        job->spec = NULL;
        return refuse(r, "out of memory");
    }
    *command = s;
    return 0;
}

/*
 * Appends the job described by line (borrowed, modified in place) to tab,
 * with a copy of the environment set so far. Returns 0, or -1 with the
 * reason in r.
 */
static int add_job(struct reader *r, char *line, unsigned lineno,
                   struct crontab *tab) {
    struct cron_job job = {0}, *grown;
    char *command = NULL;

    if (parse_schedule(r, line, &job, &command) < 0) {
        free(job.spec);
        return -1;
    }
    job.line = lineno;
    job.command = strdup(command);
    if (job.command == NULL || copy_strings(r->env, r->n_env, &job.env) < 0)
        goto oom;
    job.n_env = r->n_env;
    grown = realloc(tab->jobs, (tab->n_jobs + 1) * sizeof(*grown));
    if (grown == NULL)
        goto oom;
    tab->jobs = grown;
    tab->jobs[tab->n_jobs++] = job;
    return 0;
oom:
    free(job.command);
    free(job.spec);
    free_strings(job.env, job.env ? job.n_env : 0);
    return refuse(r, "out of memory");
}

/* Length of the environment variable name at s, or 0 when s does not
 * start with one followed by optional blanks and '='. */
static size_t env_name_len(const char *s) {
    size_t n = 0;

    if (!isalpha((unsigned char)s[0]) && s[0] != '_')
        return 0;
    while (isalnum((unsigned char)s[n]) || s[n] == '_')
        n++;
    return s[n + strspn(s + n, BLANKS)] == '=' ? n : 0;
}

/*
 * Records the assignment at line (borrowed, modified in place; its name is
 * n bytes long) in r's environment, replacing an earlier value of the
 * same name. Blanks around the value and one pair of matching quotes are
 * dropped. Returns 0, or -1 with the reason.
 */
static int set_env(struct reader *r, char *line, size_t n) {
    char *value = strchr(line + n, '=') + 1, *entry, **grown;
    size_t len, i;

    value += strspn(value, BLANKS);
    len = strlen(value);
    while (len > 0 && strchr(BLANKS, value[len - 1]) != NULL)
        len--;
    if (len >= 2 && (value[0] == '"' || value[0] == '\'') &&
        value[len - 1] == value[0]) {
        value++;
        len -= 2;
    }
    if (asprintf(&entry, "%.*s=%.*s", (int)n, line, (int)len, value) < 0)
        return refuse(r, "out of memory");
    for (i = 0; i < r->n_env; i++) {
        if (strncmp(r->env[i], entry, n + 1) == 0) {
            free(r->env[i]);
            r->env[i] = entry;
            return 0;
        }
    }
    grown = realloc(r->env, (r->n_env + 1) * sizeof(*grown));
    if (grown == NULL) {
        free(entry);
        return refuse(r, "out of memory");
    }
    r->env = grown;
    r->env[r->n_env++] = entry;
    return 0;
}

/* Handles one line (borrowed, modified in place; newline removed).
 * Returns 0, or -1 with the reason in r. */
static int read_line(struct reader *r, char *line, unsigned lineno,
                     struct crontab *tab) {
    char *s = line + strspn(line, BLANKS);
    size_t n;

    if (*s == '\0' || *s == '#')
        return 0;
    n = env_name_len(s);
    if (n > 0)
        return set_env(r, s, n);
    return add_job(r, s, lineno, tab);
}

int crontab_read(FILE *f, const char *name, struct crontab *tab, char *err,
                 size_t errlen) {
    struct reader r = {0};
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned lineno = 0;
    int rc = 0;

    tab->jobs = NULL;
    tab->n_jobs = 0;
    for (len = getline(&line, &cap, f); len >= 0;
         len = getline(&line, &cap, f)) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if ((size_t)len != strlen(line)) {
            rc = refuse(&r, "NUL byte in line");
            break;
        }
        rc = read_line(&r, line, lineno, tab);
        if (rc < 0)
            break;
    }
    if (rc == 0 && ferror(f)) {
        lineno++;
        rc = refuse(&r, "read error");
    }
    if (rc < 0)
        snprintf(err, errlen, "%s:%u: %s", name, lineno, r.reason);
    free(line);
    reader_free(&r);
    return rc;
}

void crontab_free(struct crontab *tab) {
    for (size_t i = 0; i < tab->n_jobs; i++) {
        free(tab->jobs[i].command);
        free(tab->jobs[i].spec);
        free_strings(tab->jobs[i].env, tab->jobs[i].n_env);
    }
    free(tab->jobs);
    tab->jobs = NULL;
    tab->n_jobs = 0;
}

int crontab_due(const struct cron_job *job, const struct tm *tm) {
    int dom = (job->dom >> tm->tm_mday) & 1;
    int dow = (job->dow >> tm->tm_wday) & 1;
    int day;

    /* Both day fields restricted: either may match (as in every cron). */
    if (job->dom_star || job->dow_star)
        day = dom && dow;
    else
        day = dom || dow;
    return day && ((job->minute >> tm->tm_min) & 1) &&
           ((job->hour >> tm->tm_hour) & 1) &&
           ((job->month >> (tm->tm_mon + 1)) & 1);
}
