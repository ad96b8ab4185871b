/* SPDX-License-Identifier: MIT */
/*
 * serve_stubs.c: serve and run --health-listen in a build without
 * libmicrohttpd (configure found none, or --without-microhttpd): serve
 * prints its help when asked and otherwise says what is missing and exits
 * 69, as does run --health-listen.
 */
#include <build_config.h>

#include <string.h>

#include "cli.h"

int odbc_leader__cli_serve(struct odbc_leader__cli *c, int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(odbc_leader__serve_help, stdout);
            return 0;
        }
    }
    odbc_leader__cli_err(c, "serve: this odbc-leader was built without "
                            "libmicrohttpd (configure found none)");
    return EX_UNAVAILABLE;
}

int odbc_leader__cli_health_start(struct odbc_leader__health **out,
                                  struct odbc_leader__cli *c,
                                  const char *listen, const odbc_leader_t *h) {
    (void)listen;
    (void)h;
    *out = NULL;
    odbc_leader__cli_err(c, "run: --health-listen: this odbc-leader was "
                            "built without libmicrohttpd");
    return EX_UNAVAILABLE;
}

void odbc_leader__cli_health_running(struct odbc_leader__health *hs,
                                     int running) {
    (void)hs;
    (void)running;
}

void odbc_leader__cli_health_stop(struct odbc_leader__health *hs) { (void)hs; }
