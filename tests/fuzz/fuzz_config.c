/* SPDX-License-Identifier: MIT */
/*
 * fuzz_config.c: libFuzzer target for odbc_leader__config_parse(), the
 * parser of the connection string handed to odbc_leader_create(). The
 * input is the string. A DSN= in it makes the parser read odbc.ini through
 * odbcinst: LLVMFuzzerInitialize() points ODBCINI and ODBCSYSINI at a
 * private temporary directory holding a small odbc.ini of its own, so the
 * target never reads the system's configuration. A parsed configuration
 * must hold the invariants the elector relies on (checked below), a
 * refused one must leave *out empty, and nothing may leak.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "fuzz.h"

/* The private odbc.ini: one good section with Leader* keys, and sections
 * whose keys the parser must refuse. */
static const char odbc_ini[] = "[fz]\n"
                               "Driver=none\n"
                               "LeaderNamespace=fromfile\n"
                               "LeaderTTL=20000\n"
                               "LeaderPooler=session\n"
                               "[fzbad]\n"
                               "Driver=none\n"
                               "LeaderBogus=1\n"
                               "[fzttl]\n"
                               "Driver=none\n"
                               "LeaderTTL=not-a-number\n";

/* Creates the private odbc.ini and points unixODBC (or iODBC) at it.
 * Returns 0. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    fuzz_private_odbc(odbc_ini);
    return 0;
}

/* Checks the durations of a parsed configuration (borrowed). */
static void check_durations(const struct odbc_leader__config *c) {
    int64_t room = c->ttl_ms - c->margin_ms - c->renew_ms;

    fuzz_check(c->ttl_ms >= 100 && c->ttl_ms <= 86400000, "ttl range");
    fuzz_check(c->renew_ms > 0, "renew > 0");
    fuzz_check(c->margin_ms > 0 && c->margin_ms < c->ttl_ms, "margin range");
    fuzz_check(room > 0, "renew < ttl - margin");
    fuzz_check(c->stmt_timeout_ms >= 1 && c->stmt_timeout_ms <= room,
               "statement timeout fits the trust window");
    fuzz_check(c->follower_wait_ms >= 0 && c->follower_wait_ms <= 60000,
               "follower wait range");
    fuzz_check(c->fire_retention_ms >= 1000, "fire retention range");
    fuzz_check(c->test_trust_extra_ms >= 0, "trust extra >= 0");
}

/* Checks every field of a parsed configuration (borrowed). */
static void check_config(const struct odbc_leader__config *c) {
    fuzz_check(c->connect != NULL && c->connect_redacted != NULL,
               "connect strings set");
    fuzz_check(strlen(c->connect) > 0, "connect names a DSN or driver");
    fuzz_check(odbc_leader__valid_name(c->ns), "namespace valid");
    fuzz_check(c->id[0] == '\0' || odbc_leader__valid_name(c->id),
               "candidate id valid");
    fuzz_check(odbc_leader__valid_prefix(c->prefix), "prefix valid");
    fuzz_check(c->dialect != NULL && c->dialect[0] != '\0', "dialect set");
    fuzz_check(c->create_schema == 0 || c->create_schema == 1, "bool");
    fuzz_check(c->report_resign == 0 || c->report_resign == 1, "resign");
    fuzz_check(c->pooler >= ODBC_LEADER__POOL_NONE &&
                   c->pooler <= ODBC_LEADER__POOL_TRANSACTION,
               "pooler");
    check_durations(c);
}

/* 1 when every byte of the n-byte p is zero, else 0. */
static int all_zero(const void *p, size_t n) {
    const unsigned char *b = p;

    for (size_t i = 0; i < n; i++) {
        if (b[i] != 0)
            return 0;
    }
    return 1;
}

/* Parses the input as a connection string. Returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *s = fuzz_string(data, size);
    size_t errlen = 1 + size % 300; /* short buffers test truncation */
    char *err = malloc(errlen);
    struct odbc_leader__config cfg;
    int rc;

    if (!err)
        abort();
    rc = odbc_leader__config_parse(s, &cfg, err, errlen);
    if (rc == 0) {
        check_config(&cfg);
    } else {
        fuzz_check(rc == ODBC_LEADER_ECONFIG || rc == ODBC_LEADER_ENOMEM,
                   "error code");
        fuzz_check(memchr(err, '\0', errlen) != NULL, "message terminated");
        fuzz_check(errlen == 1 || err[0] != '\0', "message given");
        fuzz_check(all_zero(&cfg, sizeof cfg), "refused config is empty");
    }
    odbc_leader__config_free(&cfg);
    odbc_leader__config_free(&cfg); /* a freed config frees again safely */
    free(err);
    free(s);
    return 0;
}
