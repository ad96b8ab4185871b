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
    static const char api_ns[] = "/api/v1/namespaces/";

    *rest = NULL;
    if (strcmp(url, "/") == 0)
        return ODBC_LEADER__ROUTE_PAGE;
    if (strcmp(url, "/dashboard.js") == 0)
        return ODBC_LEADER__ROUTE_SCRIPT;
    if (strcmp(url, "/metrics") == 0)
        return ODBC_LEADER__ROUTE_METRICS;
    if (strcmp(url, "/health/leader") == 0)
        return ODBC_LEADER__ROUTE_HEALTH;
    if (strcmp(url, "/api/v1/namespaces") == 0)
        return ODBC_LEADER__ROUTE_NAMESPACES;
    if (strcmp(url, "/api/v1/fires") == 0)
        return ODBC_LEADER__ROUTE_FIRES;
    if (strcmp(url, "/api/v1/elections") == 0)
        return ODBC_LEADER__ROUTE_ELECTIONS;
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
    for (; *s != '\0'; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}
