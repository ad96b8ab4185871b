/* SPDX-License-Identifier: MIT */
/*
 * http.c: the request parsing of "odbc-leader serve" and "run
 * --health-listen" that needs no server: routing a path, the limit
 * parameter, an ADDR:PORT argument, a line of the --basic-auth file and
 * HTML escaping. Pure functions over their arguments, so that
 * tests/fuzz/fuzz_serve.c can run them on anything.
 */
#include <build_config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum odbc_leader__route odbc_leader__http_route(const char *url,
                                                const char **rest) {
    static const struct {
        const char *path;
        enum odbc_leader__route route;
    } paths[] = {
        {"/", ODBC_LEADER__ROUTE_PAGE},
        {"/dashboard.js", ODBC_LEADER__ROUTE_SCRIPT},
        {"/metrics", ODBC_LEADER__ROUTE_METRICS},
        {"/health/leader", ODBC_LEADER__ROUTE_HEALTH},
        {"/api/v1/namespaces", ODBC_LEADER__ROUTE_NAMESPACES},
        {"/api/v1/fires", ODBC_LEADER__ROUTE_FIRES},
        {"/api/v1/elections", ODBC_LEADER__ROUTE_ELECTIONS},
        {"/api/v1/jobs", ODBC_LEADER__ROUTE_JOBS},
    };
    static const char api_ns[] = "/api/v1/namespaces/";

    *rest = NULL;
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        if (strcmp(url, paths[i].path) == 0)
            return paths[i].route;
    }
    if (strncmp(url, api_ns, sizeof(api_ns) - 1) == 0) {
        *rest = url + sizeof(api_ns) - 1;
        return ODBC_LEADER__ROUTE_NAMESPACE;
    }
    return ODBC_LEADER__ROUTE_NONE;
}

int odbc_leader__http_limit(const char *s, long def, long max, long *limit) {
    char *end;
    long v;

    if (s == NULL) {
        *limit = def;
        return 0;
    }
    if (s[0] < '0' || s[0] > '9') /* no sign, no blank */
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < 1 || v > max)
        return -1;
    *limit = v;
    return 0;
}

int odbc_leader__http_split_listen(const char *listen, char *host, size_t len,
                                   long *port, const char **why) {
    const char *colon = strrchr(listen, ':');
    const char *from = listen;
    char *end;
    size_t hl;

    *why = "want ADDR:PORT";
    if (colon == NULL)
        return -1;
    *why = "bad port";
    if (colon[1] < '0' || colon[1] > '9')
        return -1;
    errno = 0;
    *port = strtol(colon + 1, &end, 10);
    if (errno != 0 || *end != '\0' || *port < 0 || *port > 65535)
        return -1;
    hl = (size_t)(colon - listen);
    if (hl >= 2 && listen[0] == '[' && listen[hl - 1] == ']') {
        from = listen + 1;
        hl -= 2;
    }
    *why = "address too long";
    if (hl >= len)
        return -1;
    memcpy(host, from, hl);
    host[hl] = '\0';
    return 0;
}

int odbc_leader__http_user_line(char *line, char **name, char **hash) {
    char *colon;

    line[strcspn(line, "\r")] = '\0';
    if (line[0] == '\0' || line[0] == '#')
        return 0;
    colon = strchr(line, ':');
    if (colon == NULL || colon == line || colon[1] == '\0')
        return -1;
    *colon = '\0';
    *name = line;
    *hash = colon + 1;
    return 1;
}

void odbc_leader__http_html(FILE *f, const char *s) {
    static const char special[] = "<>&\"'";
    static const char *const entity[] = {"&lt;", "&gt;", "&amp;", "&quot;",
                                         "&#39;"};

    for (; *s != '\0'; s++) {
        const char *p = strchr(special, *s);

        if (p != NULL)
            fputs(entity[p - special], f);
        else
            fputc(*s, f);
    }
}
