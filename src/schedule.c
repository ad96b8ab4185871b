/* SPDX-License-Identifier: MIT */
/*
 * schedule.c: schedule identities (docs/schedules.md). The ledger keys a
 * fire by its job and nominal time, and each host computes that time with
 * its own engine in its own time zone; two hosts that compute "the same"
 * fire differently would claim different keys and both run it. So a claim
 * carries how its time was computed, one string made here from the
 * expression, the IANA zone and the engine with its DST rule, and the
 * ledger refuses a claim whose string differs from the job's (db_schedule.c).
 * Here: that string, the name of the host's zone, and a handle's
 * identities by job.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "odbc_leader.h"
#include "schedule.h"

/* Names of the zone UTC: zero offset, no DST, whatever the spelling (a
 * zoneinfo directory links some of them, not all, to Etc/UTC). */
static const char *const utc_aliases[] = {
    "UTC",      "Etc/UTC", "Etc/UCT", "UCT",     "Etc/Universal", "Universal",
    "Etc/Zulu", "Zulu",    "GMT",     "Etc/GMT", "Etc/GMT+0",     "Etc/GMT-0",
    "Etc/GMT0", "GMT0",    "GMT+0",   "GMT-0",   "Etc/Greenwich", "Greenwich",
};

/* "UTC" when name is one of its aliases, else name. */
static const char *utc_or(const char *name) {
    for (size_t i = 0; i < sizeof(utc_aliases) / sizeof(utc_aliases[0]); i++)
        if (strcmp(name, utc_aliases[i]) == 0)
            return "UTC";
    return name;
}

/* The zoneinfo directory of this host. */
static const char *zoneinfo_dir(void) {
    const char *d = getenv("TZDIR");

    return d != NULL && d[0] == '/' ? d : "/usr/share/zoneinfo";
}

/* 1 when name is spelled as an IANA zone name: components of letters,
 * digits and "_+-." separated by single slashes, none "." or "..". */
static int zone_spelling(const char *name) {
    size_t len = strlen(name), comp = 0;

    if (len == 0 || len > ODBC_LEADER__ZONE_MAX)
        return 0;
    for (size_t i = 0; i <= len; i++) {
        char ch = name[i];

        if (ch == '/' || ch == '\0') {
            if (comp == 0 || (comp <= 2 && name[i - 1] == '.' &&
                              (comp == 1 || name[i - 2] == '.')))
                return 0;
            comp = 0;
            continue;
        }
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9') || strchr("_+-.", ch) != NULL))
            return 0;
        comp++;
    }
    return 1;
}

/* The name a link in zoneinfo directory dir stands for: name itself, or,
 * when dir/name is a link within dir (a backward name such as
 * "Asia/Calcutta", or "US/Eastern"), the path of its target under dir,
 * written into buf (PATH_MAX bytes). Borrowed. */
static const char *canonical(const char *dir, const char *name, char *buf) {
    char path[PATH_MAX], root[PATH_MAX];
    size_t n;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (realpath(path, buf) == NULL || realpath(dir, root) == NULL)
        return name;
    n = strlen(root);
    if (strncmp(buf, root, n) != 0 || buf[n] != '/')
        return name;
    return buf + n + 1;
}

/* Writes zone name (checked) into out (len bytes): the zone a backward
 * name links to, "UTC" for an alias of it, "posix/" dropped. Returns 0,
 * or ODBC_LEADER_EINVAL with a message in err for a name that is no IANA
 * name or that this host's zoneinfo lacks (when it has one), or when out
 * is too short. */
static int name_zone(const char *name, char *out, size_t len, char *err,
                     size_t errlen) {
    char path[PATH_MAX], real[PATH_MAX];
    struct stat st;
    const char *dir = zoneinfo_dir();

    if (strncmp(name, "posix/", 6) == 0)
        name += 6;
    if (strcasecmp(name, "local") == 0 || strcasecmp(name, "localtime") == 0) {
        odbc_leader__errf(err, errlen,
                          "time zone \"%s\" names no zone: give an IANA name "
                          "(\"Europe/Berlin\"), or none for the host's",
                          name);
        return ODBC_LEADER_EINVAL;
    }
    if (!zone_spelling(name)) {
        odbc_leader__errf(err, errlen,
                          "time zone \"%.80s\" is not an IANA zone name "
                          "(\"Area/City\", \"UTC\")",
                          name);
        return ODBC_LEADER_EINVAL;
    }
    name = utc_or(name);
    if (strcmp(name, "UTC") != 0 && stat(dir, &st) == 0 &&
        S_ISDIR(st.st_mode)) {
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            odbc_leader__errf(err, errlen,
                              "time zone \"%s\" is not in %s: no such IANA "
                              "zone on this host",
                              name, dir);
            return ODBC_LEADER_EINVAL;
        }
        name = utc_or(canonical(dir, name, real));
    }
    if ((size_t)snprintf(out, len, "%s", name) >= len) {
        odbc_leader__errf(err, errlen, "no room for the zone's name");
        return ODBC_LEADER_EINVAL;
    }
    return 0;
}

/* The part of path after its last "zoneinfo/" directory, or NULL. */
static const char *after_zoneinfo(const char *path) {
    const char *p = NULL;

    for (const char *s = strstr(path, "zoneinfo/"); s != NULL;
         s = strstr(s + 1, "zoneinfo/"))
        p = s + strlen("zoneinfo/");
    return p;
}

/* Reads the first line of /etc/timezone into buf (len bytes). Returns 0,
 * or -1 when it cannot. */
static int etc_timezone(char *buf, size_t len) {
    FILE *f = fopen("/etc/timezone", "re");
    int rc = -1;

    if (f == NULL)
        return -1;
    if (fgets(buf, (int)len, f) != NULL) {
        buf[strcspn(buf, " \t\r\n")] = '\0';
        rc = buf[0] != '\0' ? 0 : -1;
    }
    fclose(f);
    return rc;
}

/* The host's zone as the C library finds it, in err's words when it has
 * no name: writes the name (not yet checked) into buf (len bytes).
 * Returns 0 or ODBC_LEADER_ECONFIG with a message in err. */
static int host_zone(char *buf, size_t len, char *err, size_t errlen) {
    const char *tz = getenv("TZ");
    const char *name;
    ssize_t n;

    if (tz != NULL) {
        tz += tz[0] == ':';
        name = tz[0] == '\0' ? "UTC" : tz;
        if (tz[0] == '/' && (name = after_zoneinfo(tz)) == NULL) {
            odbc_leader__errf(err, errlen,
                              "TZ=%.80s is a file outside any zoneinfo "
                              "directory: set TZ to an IANA zone name",
                              tz);
            return ODBC_LEADER_ECONFIG;
        }
        snprintf(buf, len, "%s", name);
        return 0;
    }
    n = readlink("/etc/localtime", buf, len - 1);
    if (n >= 0) {
        buf[n] = '\0';
        name = after_zoneinfo(buf);
        if (name != NULL) {
            memmove(buf, name, strlen(name) + 1);
            return 0;
        }
    } else if (errno == ENOENT) {
        snprintf(buf, len, "UTC"); /* glibc's zone without the file */
        return 0;
    }
    if (etc_timezone(buf, len) == 0)
        return 0;
    odbc_leader__errf(err, errlen,
                      "the host's time zone has no IANA name (/etc/localtime "
                      "is no link into a zoneinfo directory, and "
                      "/etc/timezone names none): set TZ, or give the zone");
    return ODBC_LEADER_ECONFIG;
}

/* odbc_leader_local_zone() with its reason in err. */
static int local_zone(char *out, size_t len, char *err, size_t errlen) {
    char buf[PATH_MAX];
    int rc = host_zone(buf, sizeof(buf), err, errlen);

    if (rc == 0 && name_zone(buf, out, len, err, errlen) != 0) {
        odbc_leader__errf(err, errlen,
                          "the host's time zone \"%.80s\" is no IANA zone "
                          "name: set TZ to one (\"Europe/Berlin\"), or give "
                          "the zone",
                          buf);
        rc = ODBC_LEADER_ECONFIG;
    }
    return rc;
}

int odbc_leader_local_zone(char *out, size_t len) {
    char zone[ODBC_LEADER__ZONE_MAX + 1], err[256];
    int rc;

    if (out == NULL || len == 0)
        return ODBC_LEADER_EINVAL;
    out[0] = '\0';
    rc = local_zone(zone, sizeof(zone), err, sizeof(err));
    if (rc == 0 && (size_t)snprintf(out, len, "%s", zone) >= len) {
        out[0] = '\0';
        rc = ODBC_LEADER_EINVAL;
    }
    return rc;
}

/* Appends s to out (at *n, room for max bytes) with runs of white space
 * as one space and none at either end. Returns 0, or -1 when s is empty
 * once trimmed, too long, or holds a control character. */
static int append_part(char *out, size_t *n, size_t max, const char *s) {
    size_t start = *n;
    int space = 0;

    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;

        if (ch == ' ' || ch == '\t') {
            space = *n > start;
            continue;
        }
        if (ch < 0x20 || ch == 0x7f)
            return -1;
        if (*n + (size_t)space + 1 > max)
            return -1;
        if (space)
            out[(*n)++] = ' ';
        space = 0;
        out[(*n)++] = (char)ch;
    }
    out[*n] = '\0';
    return *n > start ? 0 : -1;
}

int odbc_leader__schedule_identity(const char *expr, const char *tz,
                                   const char *engine, char *out, char *err,
                                   size_t errlen) {
    char zone[ODBC_LEADER__ZONE_MAX + 1] = "";
    size_t n = 0;
    int rc = 0;

    if (expr == NULL || engine == NULL) {
        odbc_leader__errf(err, errlen,
                          "a schedule needs its expression and "
                          "its engine");
        return ODBC_LEADER_EINVAL;
    }
    if (tz == NULL)
        rc = local_zone(zone, sizeof(zone), err, errlen);
    else if (tz[0] != '\0')
        rc = name_zone(tz, zone, sizeof(zone), err, errlen);
    if (rc != 0)
        return rc;
    if (append_part(out, &n, ODBC_LEADER__EXPR_MAX, expr) != 0) {
        odbc_leader__errf(err, errlen,
                          "schedule expression \"%.80s\" is empty, longer "
                          "than %d bytes or holds a control character",
                          expr, ODBC_LEADER__EXPR_MAX);
        return ODBC_LEADER_EINVAL;
    }
    if (zone[0] != '\0') {
        n += (size_t)sprintf(out + n, " in %s", zone);
    }
    memcpy(out + n, " by ", 5);
    n += 4;
    if (append_part(out, &n, n + ODBC_LEADER__ENGINE_MAX, engine) != 0) {
        odbc_leader__errf(err, errlen,
                          "schedule engine \"%.80s\" is empty, longer than %d "
                          "bytes or holds a control character",
                          engine, ODBC_LEADER__ENGINE_MAX);
        return ODBC_LEADER_EINVAL;
    }
    return 0;
}

/* The index of job in s, or s->n. */
static size_t find(const struct odbc_leader__schedules *s, const char *job) {
    size_t i = 0;

    while (i < s->n && strcmp(s->v[i].job, job) != 0)
        i++;
    return i;
}

int odbc_leader__schedules_set(struct odbc_leader__schedules *s,
                               const char *job, const char *identity) {
    size_t i = find(s, job);
    struct odbc_leader__schedule_entry *v;

    if (identity == NULL) {
        if (i < s->n)
            s->v[i] = s->v[--s->n];
        return 0;
    }
    if (i == s->n) {
        if (s->n == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 4;

            v = realloc(s->v, cap * sizeof(*v));
            if (v == NULL)
                return ODBC_LEADER_ENOMEM;
            s->v = v;
            s->cap = cap;
        }
        snprintf(s->v[i].job, sizeof(s->v[i].job), "%s", job);
        s->n++;
    }
    snprintf(s->v[i].identity, sizeof(s->v[i].identity), "%s", identity);
    return 0;
}

const char *odbc_leader__schedules_get(const struct odbc_leader__schedules *s,
                                       const char *job) {
    size_t i = find(s, job);

    return i < s->n ? s->v[i].identity : NULL;
}

void odbc_leader__schedules_free(struct odbc_leader__schedules *s) {
    free(s->v);
    memset(s, 0, sizeof(*s));
}
