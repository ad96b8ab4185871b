/* SPDX-License-Identifier: MIT */
/*
 * fuzz_serve.c: libFuzzer target for the request parsing of "odbc-leader
 * serve" (src/cli/http.c). The input is up to five lines: a request path,
 * a limit parameter, an ADDR:PORT argument, a line of a --basic-auth file
 * and any text; each part goes through its parser and the whole input
 * through the HTML escaping. Checked: a route's namespace lies inside the
 * path after /api/v1/namespaces/; every other route (/metrics,
 * /api/v1/fires, /api/v1/elections, ...) is given for its exact path and
 * only for it; an accepted limit (of fires or of elections) is 1-10000
 * and is the decimal the parameter spells; an accepted ADDR:PORT gives a
 * port of 0-65535 and a host that fits and is a part of the argument; an
 * accepted user line gives a non-empty name without ':' and a non-empty
 * hash; the escaped text holds no < > " ' and no & that does not start one
 * of the five entities, and unescapes to the input. Nothing may leak.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fuzz.h"

/* Splits *s at the next newline: returns the line (in place), moves *s
 * past it (NULL after the last). */
static char *next_line(char **s) {
    char *line = *s, *nl;

    if (line == NULL)
        return NULL;
    nl = strchr(line, '\n');
    if (nl != NULL) {
        *nl = '\0';
        *s = nl + 1;
    } else {
        *s = NULL;
    }
    return line;
}

/* The routes of one exact path each. */
static const struct {
    enum odbc_leader__route route;
    const char *path;
} exact[] = {
    {ODBC_LEADER__ROUTE_PAGE, "/"},
    {ODBC_LEADER__ROUTE_SCRIPT, "/dashboard.js"},
    {ODBC_LEADER__ROUTE_METRICS, "/metrics"},
    {ODBC_LEADER__ROUTE_HEALTH, "/health/leader"},
    {ODBC_LEADER__ROUTE_NAMESPACES, "/api/v1/namespaces"},
    {ODBC_LEADER__ROUTE_FIRES, "/api/v1/fires"},
    {ODBC_LEADER__ROUTE_ELECTIONS, "/api/v1/elections"},
};

static void check_route(const char *url) {
    const char *rest = "";
    enum odbc_leader__route r = odbc_leader__http_route(url, &rest);

    for (size_t k = 0; k < sizeof(exact) / sizeof(exact[0]); k++) {
        fuzz_check((r == exact[k].route) == (strcmp(url, exact[k].path) == 0),
                   exact[k].path);
    }

    if (r == ODBC_LEADER__ROUTE_NAMESPACE) {
        fuzz_check(rest == url + strlen("/api/v1/namespaces/"),
                   "the namespace follows the prefix");
        fuzz_check(strncmp(url, "/api/v1/namespaces/", 19) == 0, "prefix");
    } else {
        fuzz_check(rest == NULL, "no namespace outside that route");
    }
}

static void check_limit(const char *s) {
    long limit = -1;
    char back[32];

    if (odbc_leader__http_limit(s, 100, 10000, &limit) != 0)
        return;
    fuzz_check(limit >= 1 && limit <= 10000, "limit in range");
    snprintf(back, sizeof(back), "%ld", limit);
    /* the same number: leading zeros are the only other spelling */
    fuzz_check(strlen(s) >= strlen(back) &&
                   strcmp(s + strlen(s) - strlen(back), back) == 0 &&
                   strspn(s, "0") >= strlen(s) - strlen(back),
               s);
}

static void check_listen(const char *s) {
    char host[16];
    long port = -1;
    const char *why = NULL;

    if (odbc_leader__http_split_listen(s, host, sizeof(host), &port, &why) !=
        0) {
        fuzz_check(why != NULL, "a refusal says why");
        return;
    }
    fuzz_check(port >= 0 && port <= 65535, "port in range");
    fuzz_check(strlen(host) < sizeof(host), "host fits");
    fuzz_check(strstr(s, host) != NULL, "host is part of the argument");
}

static void check_user(const char *s) {
    char *line = strdup(s), *name = NULL, *hash = NULL;
    int kind;

    if (line == NULL)
        abort();
    kind = odbc_leader__http_user_line(line, &name, &hash);
    if (kind == 1) {
        fuzz_check(name[0] != '\0' && strchr(name, ':') == NULL, "name");
        fuzz_check(hash[0] != '\0', "hash");
    }
    free(line);
}

/* Decodes the five entities of odbc_leader__http_html; returns 0 on text
 * the escaping could not have written. */
static int unescape_matches(const char *esc, const char *want) {
    static const char *const ent[][2] = {{"&lt;", "<"},
                                         {"&gt;", ">"},
                                         {"&amp;", "&"},
                                         {"&quot;", "\""},
                                         {"&#39;", "'"}};

    while (*esc != '\0') {
        size_t k;

        if (*esc != '&') {
            if (*esc++ != *want++)
                return 0;
            continue;
        }
        for (k = 0; k < 5; k++) {
            if (strncmp(esc, ent[k][0], strlen(ent[k][0])) == 0)
                break;
        }
        if (k == 5 || *want++ != ent[k][1][0])
            return 0;
        esc += strlen(ent[k][0]);
    }
    return *want == '\0';
}

static void check_html(const char *s) {
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);

    if (f == NULL)
        abort();
    odbc_leader__http_html(f, s);
    if (fclose(f) != 0)
        abort();
    fuzz_check(strpbrk(out, "<>\"'") == NULL, "no markup left");
    fuzz_check(unescape_matches(out, s), "escaping is reversible");
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *all = fuzz_string(data, size), *copy = strdup(all), *p = copy;
    char *part;

    if (copy == NULL)
        abort();
    if ((part = next_line(&p)) != NULL)
        check_route(part);
    if ((part = next_line(&p)) != NULL)
        check_limit(part);
    if ((part = next_line(&p)) != NULL)
        check_listen(part);
    if ((part = next_line(&p)) != NULL)
        check_user(part);
    check_html(all);
    free(copy);
    free(all);
    return 0;
}
