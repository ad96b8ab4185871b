/* SPDX-License-Identifier: MIT */
/*
 * serve_help.c: the text of "odbc-leader serve --help", with the limits of
 * the HTTP servers (httpd.h) written in; shared by serve and by the stubs
 * of a build without libmicrohttpd, which still print it.
 */
#include <build_config.h>

#include "httpd.h"

#define STR_(x) #x
#define STR(x) STR_(x)
/* The limits as they stand in the text. */
#define CONNS STR(ODBC_LEADER__HTTPD_CONN_LIMIT)
#define SILENCE STR(ODBC_LEADER__HTTPD_TIMEOUT_S)
#define SERVE_KIB STR(ODBC_LEADER__HTTPD_SERVE_KIB)
#define HEALTH_KIB STR(ODBC_LEADER__HTTPD_HEALTH_KIB)

/* The help; the limits stand inside its lines. */
/* clang-format off */
const char odbc_leader__serve_help[] =
    "Usage: odbc-leader serve [--listen ADDR:PORT] [-n NS ...] [OPTIONS]\n"
    "Serve the namespaces' state over HTTP, read only: it never campaigns,\n"
    "never creates or upgrades the tables (LeaderCreateSchema=no) and\n"
    "needs only SELECT on them.\n"
    "\n"
    "  --listen ADDR:PORT    where to listen (default 127.0.0.1:9466;\n"
    "                        [::1]:PORT for IPv6, :PORT for every address,\n"
    "                        port 0 for any free port, printed at start)\n"
    "  -n, --namespace NS    a namespace to serve; repeat for more\n"
    "                        (default: LeaderNamespace, else \"default\")\n"
    "      --id ID           the candidate id /health/leader checks when\n"
    "                        the request has no id= (this host's LeaderId)\n"
    "      --tls-cert FILE   serve HTTPS with this PEM certificate (chain)\n"
    "      --tls-key FILE    ... and this PEM private key\n"
    "      --basic-auth FILE every request needs one of the users of FILE,\n"
    "                        lines NAME:HASH (HASH from openssl passwd -6)\n"
    "" ODBC_LEADER__CLI_COMMON_HELP "\n"
    "Paths (GET or HEAD):\n"
    "  /                     the namespaces as a page that refreshes itself\n"
    "  /metrics              Prometheus text format, label leader_namespace:\n"
    "                        leader, term, lease, candidates; counted since\n"
    "                        serve started: fires by job and outcome, terms\n"
    "                        by how they ended, takeovers, failed reads\n"
    "  /health/leader?namespace=NS&id=ID\n"
    "                        200 while ID (default --id) leads NS (database\n"
    "                        time), else 503\n"
    "  /api/v1/namespaces    every namespace served, as JSON\n"
    "  /api/v1/namespaces/NS one namespace\n"
    "  /api/v1/fires?namespace=NS[&job=J][&limit=N]\n"
    "                        the newest N fires (default 100, at most 10000)\n"
    "  /api/v1/elections?namespace=NS[&limit=N]\n"
    "                        the newest N terms of the election log, who led\n"
    "                        when (default 100, at most 10000)\n"
    "  /api/v1/jobs?namespace=NS\n"
    "                        the jobs: paused, fires running and offered,\n"
    "                        latest fire and outcomes (as jobs --json)\n"
    "  POST /api/v1/jobs?namespace=NS&job=J&action=pause|resume|trigger\n"
    "                        as odbc-leader jobs ACTION J; only with\n"
    "                        --basic-auth and the header X-Requested-By\n"
    "                        (403 without), logged with the user\n"
    "\n"
    "Limits (the same for run --health-listen, with " HEALTH_KIB
    " KiB a request):\n"
    "  at most " CONNS " connections at once, all clients together (fewer\n"
    "  when the hard limit of open files is too low: said at start; the soft\n"
    "  one is raised to fit); past them a new connection waits in the\n"
    "  kernel's listen queue (net.core.somaxconn) until one closes. A\n"
    "  connection silent for " SILENCE " s, in a request or between two, is\n"
    "  closed without an answer; a request's line and headers may take\n"
    "  " SERVE_KIB " KiB (431 or 414 past it).\n"
    "\n"
    "It reads every namespace on one database connection, and starts only\n"
    "when it can open it and read the tables; later outages answer 503 (and\n"
    "odbc_leader_up 0) until the database is back. Stops on SIGTERM or\n"
    "SIGINT.\n"
    "Exit status: 0; 64 usage; 66 a file cannot be read; 69 database\n"
    "unavailable at start, or built without libmicrohttpd; 71 cannot\n"
    "listen (or a bad TLS key or certificate); 78 configuration.\n"
    "\n"
    "Examples:\n"
    "  odbc-leader serve -d sched -n report -n backup\n"
    "  odbc-leader serve -d sched --listen 0.0.0.0:9466 -n report --id host1\n";
/* clang-format on */
