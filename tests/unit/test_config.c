/* SPDX-License-Identifier: MIT */
/*
 * test_config.c: unit tests for src/config.c, the connection-string and
 * odbc.ini parser behind odbc_leader_create(), and its tokenizer
 * src/connstr.c. The group setup writes its own
 * odbc.ini/odbcinst.ini into a temporary directory and points ODBCSYSINI and
 * ODBCINI at it, so no test depends on the machine's ODBC setup.
 */
#include <build_config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "connstr.h"

#define ERRLEN 1024

/* The temporary ODBC directory, owned by the group state. */
struct fixture {
    char dir[64];
    char odbcini[128];
    char odbcinstini[128];
};

static const char odbc_ini_text[] = "[cfg_file]\n"
                                    "Driver = SQLite3\n"
                                    "Database = /nonexistent/cfg.db\n"
                                    "LeaderNamespace = fromfile\n"
                                    "LeaderId = file-node\n"
                                    "LeaderTTL = 30000\n"
                                    "LeaderCreateSchema = no\n"
                                    "LeaderDialect = sqlite\n"
                                    "LeaderTablePrefix = ff_\n"
                                    "\n"
                                    "[cfg_override]\n"
                                    "Driver = SQLite3\n"
                                    "LeaderNamespace = fromfile\n"
                                    "LeaderTTL = 30000\n"
                                    "LeaderSafetyMargin = 2000\n"
                                    "\n"
                                    "[cfg_badkey]\n"
                                    "Driver = SQLite3\n"
                                    "LeaderBogus = 1\n"
                                    "\n"
                                    "[cfg_badval]\n"
                                    "Driver = SQLite3\n"
                                    "LeaderTTL = 15s\n"
                                    "\n"
                                    "[cfg_trust_extra]\n"
                                    "Driver = SQLite3\n"
                                    "LeaderTestTrustExtra = 5000\n"
                                    "\n"
                                    "[cfg_noleader]\n"
                                    "Driver = SQLite3\n"
                                    "Database = /nonexistent/x.db\n";

static const char odbcinst_ini_text[] = "[SQLite3]\n"
                                        "Description = test entry\n"
                                        "Driver = libsqlite3odbc.so\n";

/* Writes text to path. Returns 0 or -1. */
static int write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    int rc = 0;

    if (!f)
        return -1;
    if (fputs(text, f) == EOF)
        rc = -1;
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}

/* Group setup: temp dir with odbc.ini + odbcinst.ini, env pointed at it. */
static int setup_odbc_dir(void **state) {
    struct fixture *fx = calloc(1, sizeof *fx);

    if (!fx)
        return -1;
    strcpy(fx->dir, "/tmp/odbc-leader-cfg-XXXXXX");
    if (!mkdtemp(fx->dir))
        goto fail;
    snprintf(fx->odbcini, sizeof fx->odbcini, "%s/odbc.ini", fx->dir);
    snprintf(fx->odbcinstini, sizeof fx->odbcinstini, "%s/odbcinst.ini",
             fx->dir);
    if (write_file(fx->odbcini, odbc_ini_text) != 0 ||
        write_file(fx->odbcinstini, odbcinst_ini_text) != 0)
        goto fail;
    if (setenv("ODBCSYSINI", fx->dir, 1) != 0 ||
        setenv("ODBCINI", fx->odbcini, 1) != 0)
        goto fail;
    *state = fx;
    return 0;
fail:
    free(fx);
    return -1;
}

/* Group teardown: removes the temp dir. */
static int teardown_odbc_dir(void **state) {
    struct fixture *fx = *state;

    unlink(fx->odbcini);
    unlink(fx->odbcinstini);
    rmdir(fx->dir);
    free(fx);
    return 0;
}

/* Parses s into *cfg, expecting success; fails the test with err if not. */
static void parse_ok(const char *s, struct odbc_leader__config *cfg) {
    char err[ERRLEN] = "";
    int rc = odbc_leader__config_parse(s, cfg, err, sizeof err);

    if (rc != 0)
        fail_msg("parse of \"%s\" failed: %d %s", s, rc, err);
}

/* Parses s expecting ODBC_LEADER_ECONFIG; err receives the message and
 * the config must come back zeroed. */
static void parse_bad(const char *s, char *err) {
    struct odbc_leader__config cfg, zero;

    memset(&zero, 0, sizeof zero);
    memset(&cfg, 0x5a, sizeof cfg);
    err[0] = '\0';
    assert_int_equal(odbc_leader__config_parse(s, &cfg, err, ERRLEN),
                     ODBC_LEADER_ECONFIG);
    assert_memory_equal(&cfg, &zero, sizeof cfg);
    assert_true(strlen(err) > 0);
}

/* Asserts that haystack contains needle. */
static void assert_has(const char *haystack, const char *needle) {
    if (!strstr(haystack, needle))
        fail_msg("\"%s\" does not contain \"%s\"", haystack, needle);
}

/* Asserts that haystack does not contain needle. */
static void assert_lacks(const char *haystack, const char *needle) {
    if (strstr(haystack, needle))
        fail_msg("\"%s\" contains \"%s\"", haystack, needle);
}

static void test_defaults(void **state) {
    struct odbc_leader__config cfg;

    parse_ok("Driver=SQLite3;Database=/tmp/x.db", &cfg);
    assert_string_equal(cfg.connect, "Driver=SQLite3;Database=/tmp/x.db");
    assert_string_equal(cfg.connect_redacted,
                        "Driver=SQLite3;Database=/tmp/x.db");
    assert_null(cfg.dsn);
    assert_string_equal(cfg.ns, "default");
    assert_string_equal(cfg.id, "");
    assert_int_equal(cfg.ttl_ms, 15000);
    assert_int_equal(cfg.renew_ms, 5000);
    assert_int_equal(cfg.margin_ms, 1500);
    /* the renew interval, but at most half of TTL - margin - renew */
    assert_int_equal(cfg.stmt_timeout_ms, 4250);
    assert_int_equal(cfg.report_resign, 0);
    assert_string_equal(cfg.dialect, "auto");
    assert_string_equal(cfg.prefix, "odbc_leader_");
    assert_int_equal(cfg.create_schema, 1);
    odbc_leader__config_free(&cfg);
}

static void test_every_key(void **state) {
    struct odbc_leader__config cfg;

    parse_ok("Driver=SQLite3;LeaderNamespace=jobs/eu-1;LeaderId=host-7:42@x;"
             "LeaderTTL=20000;LeaderRenewInterval=4000;"
             "LeaderSafetyMargin=3000;LeaderStatementTimeout=2500;"
             "LeaderDialect=/etc/my.sql;LeaderTablePrefix=app_;"
             "LeaderCreateSchema=no",
             &cfg);
    assert_string_equal(cfg.connect, "Driver=SQLite3");
    assert_string_equal(cfg.ns, "jobs/eu-1");
    assert_string_equal(cfg.id, "host-7:42@x");
    assert_int_equal(cfg.ttl_ms, 20000);
    assert_int_equal(cfg.renew_ms, 4000);
    assert_int_equal(cfg.margin_ms, 3000);
    assert_int_equal(cfg.stmt_timeout_ms, 2500);
    assert_string_equal(cfg.dialect, "/etc/my.sql");
    assert_string_equal(cfg.prefix, "app_");
    assert_int_equal(cfg.create_schema, 0);
    odbc_leader__config_free(&cfg);
}

static void test_derived_defaults(void **state) {
    static const struct {
        const char *s;
        int64_t ttl, renew, margin, stmt;
    } cases[] = {
        {"Driver=X;LeaderTTL=500", 500, 166, 50, 142},
        {"Driver=X;LeaderTTL=100", 100, 33, 10, 28},
        {"Driver=X;LeaderTTL=3000", 3000, 1000, 1000, 500},
        {"Driver=X;LeaderTTL=2000", 2000, 666, 1000, 167},
        {"Driver=X;LeaderTTL=60000", 60000, 20000, 6000, 5000},
        {"Driver=X;LeaderTTL=86400000", 86400000, 28800000, 8640000, 5000},
        {"Driver=X;LeaderRenewInterval=12000", 15000, 12000, 1500, 750},
        {"Driver=X;LeaderRenewInterval=13000", 15000, 13000, 1500, 250},
        {"Driver=X;LeaderSafetyMargin=9000", 15000, 5000, 9000, 500},
        {"Driver=X;LeaderTTL=1000;LeaderRenewInterval=50", 1000, 50, 100, 425},
        {"Driver=X;LeaderTTL=103;LeaderRenewInterval=91;LeaderSafetyMargin=10",
         103, 91, 10, 1},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct odbc_leader__config cfg;
        parse_ok(cases[i].s, &cfg);
        assert_int_equal(cfg.ttl_ms, cases[i].ttl);
        assert_int_equal(cfg.renew_ms, cases[i].renew);
        assert_int_equal(cfg.margin_ms, cases[i].margin);
        assert_int_equal(cfg.stmt_timeout_ms, cases[i].stmt);
        odbc_leader__config_free(&cfg);
    }
}

static void test_braces(void **state) {
    struct odbc_leader__config cfg;

    parse_ok("Driver={SQLite3};PWD={a;b=c}}d};"
             "LeaderDialect={my;dial=ect}}x}}};Server={}",
             &cfg);
    assert_string_equal(cfg.dialect, "my;dial=ect}x}");
    assert_string_equal(cfg.connect,
                        "Driver={SQLite3};PWD={a;b=c}}d};Server={}");
    assert_string_equal(cfg.connect_redacted,
                        "Driver={SQLite3};PWD=***;Server={}");
    odbc_leader__config_free(&cfg);

    /* a brace inside an unbraced value is literal */
    parse_ok("Driver=X;LeaderDialect=a{b}c;UID=u{", &cfg);
    assert_string_equal(cfg.dialect, "a{b}c");
    assert_string_equal(cfg.connect, "Driver=X;UID=u{");
    odbc_leader__config_free(&cfg);

    /* braced DSN value is unbraced in cfg.dsn */
    parse_ok("DSN={cfg_nosuch};LeaderTTL={2000}", &cfg);
    assert_string_equal(cfg.dsn, "cfg_nosuch");
    assert_string_equal(cfg.connect, "DSN={cfg_nosuch}");
    assert_int_equal(cfg.ttl_ms, 2000);
    odbc_leader__config_free(&cfg);
}

static void test_whitespace(void **state) {
    struct odbc_leader__config cfg;

    parse_ok("  Driver = SQLite3 ;\t LeaderTTL = 3000 ;"
             " LeaderNamespace= ns1 ; LeaderDialect = { sp ace }  ;"
             "  Database=/tmp/a b.db  ",
             &cfg);
    assert_int_equal(cfg.ttl_ms, 3000);
    assert_string_equal(cfg.ns, "ns1");
    assert_string_equal(cfg.dialect, " sp ace ");
    assert_string_equal(cfg.connect, "Driver = SQLite3;Database=/tmp/a b.db");
    odbc_leader__config_free(&cfg);
}

static void test_case_insensitive(void **state) {
    struct odbc_leader__config cfg;

    parse_ok("dsn=cfg_nosuch;LEADERTTL=1000;leaderrenewinterval=100;"
             "LeAdErNaMeSpAcE=Mixed;leadercreateschema=OFF",
             &cfg);
    assert_string_equal(cfg.dsn, "cfg_nosuch");
    assert_int_equal(cfg.ttl_ms, 1000);
    assert_int_equal(cfg.renew_ms, 100);
    assert_string_equal(cfg.ns, "Mixed");
    assert_int_equal(cfg.create_schema, 0);
    assert_string_equal(cfg.connect, "dsn=cfg_nosuch");
    odbc_leader__config_free(&cfg);
}

static void test_pass_through_order(void **state) {
    struct odbc_leader__config cfg;

    parse_ok("Driver=A;UID=u;LeaderTTL=1000;Server=s;UID=v;Port=5;"
             "LeaderTTL=2000;Extra={x;y}",
             &cfg);
    assert_string_equal(cfg.connect,
                        "Driver=A;UID=u;Server=s;UID=v;Port=5;Extra={x;y}");
    assert_int_equal(cfg.ttl_ms, 2000); /* last Leader* value wins */
    odbc_leader__config_free(&cfg);
}

static void test_empty_pairs(void **state) {
    struct odbc_leader__config cfg;

    parse_ok(";;Driver=A;;; ;LeaderTTL=1000;  ;", &cfg);
    assert_string_equal(cfg.connect, "Driver=A");
    assert_int_equal(cfg.ttl_ms, 1000);
    odbc_leader__config_free(&cfg);
}

static void test_dsn_rules(void **state) {
    struct odbc_leader__config cfg;

    /* first DSN wins, as in the driver manager */
    parse_ok("DSN=cfg_nosuch;DSN=other", &cfg);
    assert_string_equal(cfg.dsn, "cfg_nosuch");
    assert_string_equal(cfg.connect, "DSN=cfg_nosuch;DSN=other");
    odbc_leader__config_free(&cfg);

    /* Driver= before DSN= makes the driver manager ignore the DSN */
    parse_ok("Driver=SQLite3;DSN=cfg_file", &cfg);
    assert_null(cfg.dsn);
    assert_string_equal(cfg.ns, "default");
    odbc_leader__config_free(&cfg);

    parse_ok("FILEDSN=/tmp/some.dsn", &cfg);
    assert_null(cfg.dsn);
    assert_string_equal(cfg.connect, "FILEDSN=/tmp/some.dsn");
    odbc_leader__config_free(&cfg);
}

static void test_redaction(void **state) {
    struct odbc_leader__config cfg;

    parse_ok("Driver=A;PWD=secret1;UID=me;password={sec;ret2};"
             "Pwd2=visible; pwd = spaced ",
             &cfg);
    assert_string_equal(cfg.connect,
                        "Driver=A;PWD=secret1;UID=me;password={sec;ret2};"
                        "Pwd2=visible;pwd = spaced");
    assert_string_equal(cfg.connect_redacted,
                        "Driver=A;PWD=***;UID=me;password=***;"
                        "Pwd2=visible;pwd =***");
    assert_lacks(cfg.connect_redacted, "secret1");
    assert_lacks(cfg.connect_redacted, "ret2");
    assert_lacks(cfg.connect_redacted, "spaced");
    odbc_leader__config_free(&cfg);
}

static void test_password_never_in_err(void **state) {
    static const char *const bad[] = {
        "Driver=A;PWD=hunter2;LeaderTTL=abc",
        "Driver=A;PWD=hun;ter2",
        "Driver=A;PWD={hunter2",
        "Driver=A;PWD={hunter2}x;UID=u",
        "UID=a;PWD=hunter2",
        "Driver=A;Password=hunter2;LeaderBogus=1",
        "Driver=A;PWD=hunter2;LeaderNamespace=",
        "Driver=A;PWD=hunter2;LeaderTTL=1000;LeaderRenewInterval=999",
    };
    char err[ERRLEN];

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        parse_bad(bad[i], err);
        assert_lacks(err, "hunter2");
        assert_lacks(err, "hun");
        assert_lacks(err, "ter2");
    }
}

static void test_unknown_key(void **state) {
    char err[ERRLEN];

    parse_bad("Driver=A;LeaderTtl2=5", err);
    assert_has(err, "unknown key \"LeaderTtl2\"");
    assert_has(err, "LeaderTTL");
    assert_has(err, "LeaderNamespace");
    assert_has(err, "LeaderCreateSchema");

    parse_bad("Driver=A;Leader=5", err);
    assert_has(err, "unknown key \"Leader\"");
}

static void test_bad_numbers(void **state) {
    static const char *const bad[] = {
        "15s", "-5", "+5", "1 000", "", "0x10", "1e4", "1.5", "15000ms",
    };
    char s[128];
    char err[ERRLEN];
    char want[128];

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(s, sizeof s, "Driver=A;LeaderTTL=%s", bad[i]);
        parse_bad(s, err);
        snprintf(want, sizeof want,
                 "LeaderTTL: \"%s\" is not a whole number of milliseconds",
                 bad[i]);
        assert_has(err, want);
    }
    parse_bad("Driver=A;LeaderRenewInterval={ 100}", err);
    assert_has(err, "LeaderRenewInterval: \" 100\" is not a whole number");
    parse_bad("Driver=A;LeaderSafetyMargin=99999999999999999999999", err);
    assert_has(err, "LeaderSafetyMargin");
    assert_has(err, "99999999999999999999999");
    parse_bad("Driver=A;LeaderStatementTimeout=9223372036854775808", err);
    assert_has(err, "LeaderStatementTimeout");
    parse_bad("Driver=A;LeaderTTL=\x01\x7f", err);
    assert_has(err, "\\x01\\x7f");
}

static void test_ranges(void **state) {
    struct odbc_leader__config cfg;
    char err[ERRLEN];

    parse_bad("Driver=A;LeaderTTL=99", err);
    assert_has(err, "LeaderTTL");
    assert_has(err, "99");
    assert_has(err, "out of range");
    parse_bad("Driver=A;LeaderTTL=86400001", err);
    assert_has(err, "LeaderTTL");
    parse_bad("Driver=A;LeaderTTL=0", err);
    parse_bad("Driver=A;LeaderStatementTimeout=0", err);
    assert_has(err, "LeaderStatementTimeout");
    parse_bad("Driver=A;LeaderStatementTimeout=3600001", err);
    assert_has(err, "LeaderStatementTimeout");

    parse_ok("Driver=A;LeaderTTL=100", &cfg);
    assert_int_equal(cfg.ttl_ms, 100);
    odbc_leader__config_free(&cfg);
    parse_ok("Driver=A;LeaderTTL=86400000", &cfg);
    odbc_leader__config_free(&cfg);
    parse_ok("Driver=A;LeaderStatementTimeout=1", &cfg);
    assert_int_equal(cfg.stmt_timeout_ms, 1);
    odbc_leader__config_free(&cfg);
    parse_ok("Driver=A;LeaderTTL=86400000;LeaderStatementTimeout=3600000",
             &cfg);
    assert_int_equal(cfg.stmt_timeout_ms, 3600000);
    odbc_leader__config_free(&cfg);
    /* a statement started when a renewal is due must end inside the
     * trust window: TTL 15000 - margin 1500 - renew 5000 = 8500 */
    parse_ok("Driver=A;LeaderStatementTimeout=8500", &cfg);
    assert_int_equal(cfg.stmt_timeout_ms, 8500);
    odbc_leader__config_free(&cfg);
    parse_bad("Driver=A;LeaderStatementTimeout=8501", err);
    assert_has(err, "LeaderStatementTimeout (8501 ms) does not fit");
    assert_has(err, "at most 8500 ms");
    assert_has(err, "5000");
    parse_bad("Driver=A;LeaderStatementTimeout=3600000", err);
    assert_has(err, "at most 8500 ms");
    /* LeaderResignRequests */
    parse_ok("Driver=A;LeaderResignRequests=report", &cfg);
    assert_int_equal(cfg.report_resign, 1);
    odbc_leader__config_free(&cfg);
    parse_ok("Driver=A;LeaderResignRequests=RESIGN", &cfg);
    assert_int_equal(cfg.report_resign, 0);
    odbc_leader__config_free(&cfg);
    parse_bad("Driver=A;LeaderResignRequests=later", err);
    assert_has(err, "LeaderResignRequests");
    assert_has(err, "resign, report");
    parse_ok("Driver=A;LeaderTTL=000000000000000000000001000", &cfg);
    assert_int_equal(cfg.ttl_ms, 1000);
    odbc_leader__config_free(&cfg);
}

static void test_timing_fit(void **state) {
    struct odbc_leader__config cfg;
    char err[ERRLEN];

    parse_bad("Driver=A;LeaderTTL=10000;LeaderSafetyMargin=5000;"
              "LeaderRenewInterval=6000",
              err);
    assert_has(err, "LeaderRenewInterval (6000 ms) must be shorter than "
                    "LeaderTTL - LeaderSafetyMargin (5000 ms)");
    parse_bad("Driver=A;LeaderTTL=10000;LeaderSafetyMargin=5000;"
              "LeaderRenewInterval=5000",
              err);
    assert_has(err, "LeaderRenewInterval (5000 ms)");
    parse_ok("Driver=A;LeaderTTL=10000;LeaderSafetyMargin=5000;"
             "LeaderRenewInterval=4999",
             &cfg);
    odbc_leader__config_free(&cfg);

    parse_bad("Driver=A;LeaderTTL=1000;LeaderSafetyMargin=1000", err);
    assert_has(err, "LeaderSafetyMargin (1000 ms)");
    parse_bad("Driver=A;LeaderSafetyMargin=0", err);
    assert_has(err, "LeaderSafetyMargin (0 ms)");
    parse_bad("Driver=A;LeaderRenewInterval=0", err);
    assert_has(err, "LeaderRenewInterval");
    /* an explicit renew interval too long for even the smallest margin */
    parse_bad("Driver=A;LeaderRenewInterval=14000", err);
    assert_has(err, "LeaderRenewInterval (14000 ms)");
}

static void test_bad_names(void **state) {
    char s[512];
    char err[ERRLEN];
    char long_name[ODBC_LEADER__NAME_MAX + 2];

    parse_bad("Driver=A;LeaderNamespace=", err);
    assert_has(err, "LeaderNamespace");
    assert_has(err, "empty");
    parse_bad("Driver=A;LeaderId={}", err);
    assert_has(err, "LeaderId");
    assert_has(err, "empty");

    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    snprintf(s, sizeof s, "Driver=A;LeaderNamespace=%s", long_name);
    parse_bad(s, err);
    assert_has(err, "LeaderNamespace");
    assert_has(err, "too long (129 bytes, max 128)");

    parse_bad("Driver=A;LeaderNamespace=a b", err);
    assert_has(err, "LeaderNamespace");
    assert_has(err, "'\\x20'");
    parse_bad("Driver=A;LeaderId=ab\x07z", err);
    assert_has(err, "LeaderId");
    assert_has(err, "'\\x07'");
    assert_has(err, "byte 3");
    assert_lacks(err, "\x07");
    parse_bad("Driver=A;LeaderId=bad$id", err);
    assert_has(err, "'$'");
    parse_bad("Driver=A;LeaderId=caf\xc3\xa9", err);
    assert_has(err, "'\\xc3'");
}

/* LeaderTestTrustExtra: parsed in a build configured with
 * --enable-test-hooks, refused (from the string or odbc.ini) without. */
static void test_test_trust_extra(void **state) {
    struct odbc_leader__config cfg;
    char err[ERRLEN];

    parse_ok("Driver=A", &cfg);
    assert_int_equal(cfg.test_trust_extra_ms, 0); /* off unless asked */
    odbc_leader__config_free(&cfg);
    parse_bad("Driver=A;LeaderBogus=1", err);
#ifdef ODBC_LEADER_TEST_HOOKS
    assert_has(err, "test-only LeaderTestTrustExtra");
    parse_ok("Driver=A;LeaderTestTrustExtra=60000", &cfg);
    assert_int_equal(cfg.test_trust_extra_ms, 60000);
    odbc_leader__config_free(&cfg);
    parse_ok("DSN=cfg_trust_extra", &cfg);
    assert_int_equal(cfg.test_trust_extra_ms, 5000);
    odbc_leader__config_free(&cfg);
    parse_bad("Driver=A;LeaderTestTrustExtra=-1", err);
    assert_has(err, "LeaderTestTrustExtra");
#else
    assert_lacks(err, "LeaderTestTrustExtra"); /* not offered as valid */
    parse_bad("Driver=A;LeaderTestTrustExtra=60000", err);
    assert_has(err, "LeaderTestTrustExtra: a test-only key that breaks the "
                    "protocol; this build was configured without "
                    "--enable-test-hooks");
    parse_bad("Driver=A;leadertesttrustextra=0", err); /* any value, case */
    assert_has(err, "--enable-test-hooks");
    parse_bad("DSN=cfg_trust_extra", err);
    assert_has(err, "--enable-test-hooks");
    assert_has(err, "cfg_trust_extra"); /* where it came from */
#endif
}

/* LeaderTestNoWatch: a boolean in a build configured with
 * --enable-test-hooks, refused with any value without. */
static void test_test_no_watch(void **state) {
    struct odbc_leader__config cfg;
    char err[ERRLEN];

    (void)state;
    parse_ok("Driver=A", &cfg);
    assert_int_equal(cfg.test_no_watch, 0); /* off unless asked */
    odbc_leader__config_free(&cfg);
#ifdef ODBC_LEADER_TEST_HOOKS
    parse_ok("Driver=A;LeaderTestNoWatch=yes", &cfg);
    assert_int_equal(cfg.test_no_watch, 1);
    odbc_leader__config_free(&cfg);
    parse_ok("Driver=A;LeaderTestNoWatch=0", &cfg);
    assert_int_equal(cfg.test_no_watch, 0);
    odbc_leader__config_free(&cfg);
    parse_bad("Driver=A;LeaderTestNoWatch=maybe", err);
    assert_has(err, "LeaderTestNoWatch: \"maybe\" is not one of yes, no");
    parse_bad("Driver=A;LeaderBogus=1", err);
    assert_has(err, "LeaderTestNoWatch");
#else
    parse_bad("Driver=A;LeaderTestNoWatch=1", err);
    assert_has(err, "LeaderTestNoWatch: a test-only key that breaks the "
                    "protocol; this build was configured without "
                    "--enable-test-hooks");
    parse_bad("Driver=A;leadertestnowatch=no", err); /* any value, case */
    assert_has(err, "--enable-test-hooks");
    parse_bad("Driver=A;LeaderBogus=1", err);
    assert_lacks(err, "LeaderTestNoWatch"); /* not offered as valid */
#endif
}

/* LeaderPooler: auto unless given; the four names in any case; anything
 * else refused with the list. */
static void test_pooler(void **state) {
    static const struct {
        const char *text;
        int want;
    } ok[] = {
        {"auto", ODBC_LEADER__POOL_AUTO},
        {"none", ODBC_LEADER__POOL_NONE},
        {"Session", ODBC_LEADER__POOL_SESSION},
        {"TRANSACTION", ODBC_LEADER__POOL_TRANSACTION},
    };
    struct odbc_leader__config cfg;
    char conn[64], err[ERRLEN];

    (void)state;
    parse_ok("Driver=A", &cfg);
    assert_int_equal(cfg.pooler, ODBC_LEADER__POOL_AUTO);
    odbc_leader__config_free(&cfg);
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        snprintf(conn, sizeof conn, "Driver=A;LeaderPooler=%s", ok[i].text);
        parse_ok(conn, &cfg);
        assert_int_equal(cfg.pooler, ok[i].want);
        odbc_leader__config_free(&cfg);
    }
    parse_bad("Driver=A;LeaderPooler=statement", err);
    assert_has(err, "LeaderPooler: \"statement\" is not one of auto, none, "
                    "session, transaction");
    assert_string_equal(odbc_leader__pooler_name(ODBC_LEADER__POOL_AUTO),
                        "auto");
    assert_string_equal(odbc_leader__pooler_name(ODBC_LEADER__POOL_TRANSACTION),
                        "transaction");
    assert_string_equal(odbc_leader__pooler_name(99), "?");
}

/* LeaderElectionRetention: 90 days by default, in ms from 1000 ms to
 * 3660 days, apart from LeaderFireRetention. */
static void test_election_retention(void **state) {
    struct odbc_leader__config cfg;
    char err[ERRLEN];

    (void)state;
    parse_ok("Driver=A", &cfg);
    assert_int_equal(cfg.election_retention_ms, INT64_C(7776000000));
    odbc_leader__config_free(&cfg);
    parse_ok("Driver=A;LeaderElectionRetention=1000;LeaderFireRetention=5000",
             &cfg);
    assert_int_equal(cfg.election_retention_ms, 1000);
    assert_int_equal(cfg.fire_retention_ms, 5000);
    odbc_leader__config_free(&cfg);
    parse_bad("Driver=A;LeaderElectionRetention=999", err);
    assert_has(err, "LeaderElectionRetention");
    parse_bad("Driver=A;LeaderElectionRetention=316224000001", err);
    assert_has(err, "LeaderElectionRetention");
    parse_bad("Driver=A;LeaderElectionRetention=soon", err);
    assert_has(err, "LeaderElectionRetention");
}

/* LeaderTestNoPoolerCheck: a boolean in a build configured with
 * --enable-test-hooks, refused with any value without. */
static void test_test_no_pooler_check(void **state) {
    struct odbc_leader__config cfg;
    char err[ERRLEN];

    (void)state;
    parse_ok("Driver=A", &cfg);
    assert_int_equal(cfg.test_no_pooler_check, 0);
    odbc_leader__config_free(&cfg);
#ifdef ODBC_LEADER_TEST_HOOKS
    parse_ok("Driver=A;LeaderTestNoPoolerCheck=1", &cfg);
    assert_int_equal(cfg.test_no_pooler_check, 1);
    odbc_leader__config_free(&cfg);
    parse_bad("Driver=A;LeaderTestNoPoolerCheck=2", err);
    assert_has(err, "LeaderTestNoPoolerCheck: \"2\" is not one of yes, no");
#else
    parse_bad("Driver=A;LeaderTestNoPoolerCheck=0", err);
    assert_has(err, "LeaderTestNoPoolerCheck: a test-only key");
    assert_has(err, "--enable-test-hooks");
#endif
}

/* LeaderTestNoSchedule: likewise. */
static void test_test_no_schedule(void **state) {
    struct odbc_leader__config cfg;
    char err[ERRLEN];

    (void)state;
    parse_ok("Driver=A", &cfg);
    assert_int_equal(cfg.test_no_schedule, 0);
    odbc_leader__config_free(&cfg);
#ifdef ODBC_LEADER_TEST_HOOKS
    parse_ok("Driver=A;LeaderTestNoSchedule=yes", &cfg);
    assert_int_equal(cfg.test_no_schedule, 1);
    odbc_leader__config_free(&cfg);
    parse_bad("Driver=A;LeaderTestNoSchedule=2", err);
    assert_has(err, "LeaderTestNoSchedule: \"2\" is not one of yes, no");
#else
    parse_bad("Driver=A;LeaderTestNoSchedule=0", err);
    assert_has(err, "LeaderTestNoSchedule: a test-only key");
#endif
}

/* Asserts that stripping the password from in gives want. */
static void strip_is(const char *in, const char *want) {
    char err[ERRLEN] = "";
    char *out = NULL;

    assert_int_equal(
        odbc_leader__config_strip_password(in, &out, err, sizeof err), 0);
    assert_non_null(out);
    assert_string_equal(out, want);
    free(out);
}

/* odbc_leader__config_strip_password: what odbc-leader run leaves of
 * $ODBC_LEADER_CONNECT for CMD. */
static void test_strip_password(void **state) {
    char err[ERRLEN] = "";
    char *out = NULL;

    /* plain */
    strip_is("Driver=A;UID=u;PWD=s3cret;Database=x",
             "Driver=A;UID=u;Database=x");
    /* braced, with "}}" and ";" inside, and blanks around */
    strip_is("Driver=A; PWD = {se;cr}}et=1} ;X=1", "Driver=A;X=1");
    strip_is("Password={a}}}}b;c};Server=h", "Server=h");
    /* several password keys, any case */
    strip_is("PWD=a;Driver=A;pwd=b;Password=c;PASSWORD={d};passWord=e",
             "Driver=A");
    /* no password: unchanged pairs (Leader* keys and braces kept) */
    strip_is("Driver={SQLite3};Database=/x.db;LeaderTTL=3000",
             "Driver={SQLite3};Database=/x.db;LeaderTTL=3000");
    /* names that only look alike stay */
    strip_is("PWDX=1;MyPassword=2;Pass=3", "PWDX=1;MyPassword=2;Pass=3");
    /* nothing but the password, or nothing at all */
    strip_is("PWD=x", "");
    strip_is("", "");
    strip_is(";;", "");
    /* a string that does not parse: refused, the value not quoted */
    assert_int_equal(
        odbc_leader__config_strip_password("Driver=A;PWD={unterminated-s3cret",
                                           &out, err, sizeof err),
        ODBC_LEADER_ECONFIG);
    assert_null(out);
    assert_has(err, "PWD");
    assert_lacks(err, "s3cret");
}

/* Asserts that the value of key in s is want ("" and 0: not found). */
static void value_is(const char *s, const char *key, const char *want) {
    char buf[64] = "junk";

    assert_int_equal(odbc_leader__connstr_value(s, key, buf, sizeof buf),
                     want[0] != '\0');
    assert_string_equal(buf, want);
}

/* odbc_leader__connstr_value: what the SQLite wake-up file reads of
 * Database=, by config.c's own rules (a braced value keeps its ';' and
 * "}}" is one '}'; the first split on ';' used to cut it). */
static void test_connstr_value(void **state) {
    struct odbc_leader__config cfg;
    char err[ERRLEN] = "";
    char small[4];

    (void)state;
    value_is("Driver=SQLite3;Database=/tmp/a.db", "Database", "/tmp/a.db");
    value_is("Driver=X;Database={/tmp/a;b}}c.db};Timeout=1", "Database",
             "/tmp/a;b}c.db");
    value_is("Driver=X; database = /x.db ;Timeout=1", "Database", "/x.db");
    value_is("Database=;Database={};Database=/y.db", "Database", "/y.db");
    value_is("Driver=X;DatabaseName=/z.db", "Database", "");
    value_is("Driver=X;PWD={unterminated", "Database", "");
    assert_int_equal(odbc_leader__connstr_value("Database=abcdef", "Database",
                                                small, sizeof small),
                     1);
    assert_string_equal(small, "abc");
    /* the string a handle connects with keeps the braces as written */
    assert_int_equal(
        odbc_leader__config_parse("Driver=SQLite3;Database={/tmp/x;y}}.db};"
                                  "LeaderNamespace=n",
                                  &cfg, err, sizeof err),
        0);
    value_is(cfg.connect, "Database", "/tmp/x;y}.db");
    odbc_leader__config_free(&cfg);
}

static void test_prefix(void **state) {
    struct odbc_leader__config cfg;
    char err[ERRLEN];

    parse_bad("Driver=A;LeaderTablePrefix=", err);
    assert_has(err, "LeaderTablePrefix");
    assert_has(err, "empty");
    parse_ok("Driver=A;LeaderTablePrefix=_X9", &cfg);
    assert_string_equal(cfg.prefix, "_X9");
    odbc_leader__config_free(&cfg);

    parse_bad("Driver=A;LeaderTablePrefix=9x", err);
    assert_has(err, "LeaderTablePrefix");
    assert_has(err, "digit");
    parse_bad("Driver=A;LeaderTablePrefix=a-b", err);
    assert_has(err, "LeaderTablePrefix");
    assert_has(err, "'-'");
    parse_bad("Driver=A;LeaderTablePrefix=abcdefghijklmnopqrstuvwxyz0123456",
              err);
    assert_has(err, "too long (33 bytes, max 32)");
}

static void test_dialect(void **state) {
    struct odbc_leader__config cfg;
    char err[ERRLEN];
    char *s = malloc(4200);
    size_t head = strlen("Driver=A;LeaderDialect=");

    assert_non_null(s);
    parse_bad("Driver=A;LeaderDialect=", err);
    assert_has(err, "LeaderDialect");
    assert_has(err, "empty");

    strcpy(s, "Driver=A;LeaderDialect=");
    memset(s + head, 'd', 4096);
    s[head + 4096] = '\0';
    parse_ok(s, &cfg);
    assert_int_equal(strlen(cfg.dialect), 4096);
    odbc_leader__config_free(&cfg);
    s[head + 4096] = 'd';
    s[head + 4097] = '\0';
    parse_bad(s, err);
    assert_has(err, "too long (4097 bytes, max 4096)");
    free(s);
}

static void test_create_schema(void **state) {
    static const struct {
        const char *v;
        int want;
    } cases[] = {
        {"yes", 1}, {"YES", 1}, {"true", 1},  {"On", 1},  {"1", 1},
        {"no", 0},  {"No", 0},  {"FALSE", 0}, {"off", 0}, {"0", 0},
    };
    char s[128];
    char err[ERRLEN];

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct odbc_leader__config cfg;
        snprintf(s, sizeof s, "Driver=A;LeaderCreateSchema=%s", cases[i].v);
        parse_ok(s, &cfg);
        assert_int_equal(cfg.create_schema, cases[i].want);
        odbc_leader__config_free(&cfg);
    }
    parse_bad("Driver=A;LeaderCreateSchema=maybe", err);
    assert_has(err, "LeaderCreateSchema");
    assert_has(err, "\"maybe\"");
    parse_bad("Driver=A;LeaderCreateSchema=", err);
    assert_has(err, "LeaderCreateSchema");
}

static void test_syntax_errors(void **state) {
    char err[ERRLEN];

    parse_bad("Driver=A;LeaderDialect={abc", err);
    assert_has(err, "LeaderDialect");
    assert_has(err, "}");
    parse_bad("Driver={A}x;UID=u", err);
    assert_has(err, "Driver");
    assert_has(err, "offset 10");
    parse_bad("Driver={A} {B}", err);
    assert_has(err, "Driver");
    parse_bad("Driver=A;LeaderTTL", err);
    assert_has(err, "offset 9");
    parse_bad("Driver=A;junk;UID=u", err);
    assert_has(err, "offset 9");
    parse_bad("Driver=A; =x", err);
    assert_has(err, "empty key");
}

static void test_missing_target(void **state) {
    struct odbc_leader__config cfg;
    char err[ERRLEN];

    parse_bad("UID=x;LeaderTTL=1000", err);
    assert_string_equal(err, "no DSN= or Driver= in the connection string");
    parse_bad("", err);
    assert_has(err, "no DSN= or Driver=");
    parse_bad("LeaderNamespace=a; ;", err);
    assert_has(err, "no DSN= or Driver=");
    parse_bad("LeaderDSN=x", err); /* a Leader* key is not a DSN */
    assert_has(err, "unknown key");
    parse_ok("driver=A", &cfg);
    odbc_leader__config_free(&cfg);
}

static void test_null_and_free(void **state) {
    struct odbc_leader__config cfg;
    char err[ERRLEN] = "";

    memset(&cfg, 0x5a, sizeof cfg);
    assert_int_equal(odbc_leader__config_parse(NULL, &cfg, err, sizeof err),
                     ODBC_LEADER_EINVAL);
    assert_null(cfg.connect);
    assert_null(cfg.dialect);
    assert_int_equal(
        odbc_leader__config_parse("Driver=A", NULL, err, sizeof err),
        ODBC_LEADER_EINVAL);

    /* no err buffer, or a tiny one, is fine */
    assert_int_equal(odbc_leader__config_parse("UID=a", &cfg, NULL, 0),
                     ODBC_LEADER_ECONFIG);
    assert_int_equal(odbc_leader__config_parse("UID=a", &cfg, err, 4),
                     ODBC_LEADER_ECONFIG);
    assert_true(strlen(err) < 4);

    memset(&cfg, 0, sizeof cfg);
    odbc_leader__config_free(&cfg);
    odbc_leader__config_free(NULL);
    parse_ok("Driver=A", &cfg);
    odbc_leader__config_free(&cfg);
    assert_null(cfg.connect);
    odbc_leader__config_free(&cfg); /* already freed */
}

static void test_odbc_ini_keys(void **state) {
    struct odbc_leader__config cfg;

    parse_ok("DSN=cfg_file;UID=me", &cfg);
    assert_string_equal(cfg.dsn, "cfg_file");
    assert_string_equal(cfg.connect, "DSN=cfg_file;UID=me");
    assert_string_equal(cfg.ns, "fromfile");
    assert_string_equal(cfg.id, "file-node");
    assert_int_equal(cfg.ttl_ms, 30000);
    assert_int_equal(cfg.renew_ms, 10000);
    assert_int_equal(cfg.margin_ms, 3000);
    assert_string_equal(cfg.dialect, "sqlite");
    assert_string_equal(cfg.prefix, "ff_");
    assert_int_equal(cfg.create_schema, 0);
    odbc_leader__config_free(&cfg);

    /* the section name is looked up as written in the string */
    parse_ok("DSN={cfg_file}", &cfg);
    assert_string_equal(cfg.ns, "fromfile");
    odbc_leader__config_free(&cfg);
}

static void test_odbc_ini_override(void **state) {
    struct odbc_leader__config cfg;

    parse_ok("LeaderTTL=20000;DSN=cfg_override;LeaderCreateSchema=0", &cfg);
    assert_int_equal(cfg.ttl_ms, 20000);     /* string beats file */
    assert_string_equal(cfg.ns, "fromfile"); /* file beats default */
    assert_int_equal(cfg.margin_ms, 2000);
    assert_int_equal(cfg.create_schema, 0);
    odbc_leader__config_free(&cfg);

    /* a file value the string overrides is never checked */
    parse_ok("DSN=cfg_badval;LeaderTTL=4000", &cfg);
    assert_int_equal(cfg.ttl_ms, 4000);
    odbc_leader__config_free(&cfg);
}

static void test_odbc_ini_errors(void **state) {
    struct odbc_leader__config cfg;
    char err[ERRLEN];

    parse_bad("DSN=cfg_badkey", err);
    assert_has(err, "unknown key \"LeaderBogus\"");
    assert_has(err, "odbc.ini");
    assert_has(err, "cfg_badkey");
    assert_has(err, "LeaderTTL");

    /* the string cannot mask an unknown key in the file */
    parse_bad("DSN=cfg_badkey;LeaderBogus=2", err);
    assert_has(err, "LeaderBogus");

    parse_bad("DSN=cfg_badval", err);
    assert_has(err, "LeaderTTL: \"15s\" is not a whole number");
    assert_has(err, "odbc.ini");
    assert_has(err, "cfg_badval");

    /* a DSN without Leader keys, or one that does not exist, is fine */
    parse_ok("DSN=cfg_noleader", &cfg);
    assert_string_equal(cfg.ns, "default");
    assert_int_equal(cfg.ttl_ms, 15000);
    odbc_leader__config_free(&cfg);
    parse_ok("DSN=cfg_does_not_exist;PWD=x", &cfg);
    assert_string_equal(cfg.dsn, "cfg_does_not_exist");
    assert_string_equal(cfg.ns, "default");
    odbc_leader__config_free(&cfg);
}

static void test_valid_name(void **state) {
    char s[ODBC_LEADER__NAME_MAX + 2];

    memset(s, 'a', sizeof s - 1);
    s[ODBC_LEADER__NAME_MAX] = '\0';
    assert_true(odbc_leader__valid_name(s)); /* 128 bytes */
    s[ODBC_LEADER__NAME_MAX] = 'a';
    s[ODBC_LEADER__NAME_MAX + 1] = '\0';
    assert_false(odbc_leader__valid_name(s)); /* 129 bytes */

    assert_true(odbc_leader__valid_name("a"));
    assert_true(odbc_leader__valid_name("AZaz09._-:/@"));
    assert_true(odbc_leader__valid_name("9starts-with-digit"));
    assert_false(odbc_leader__valid_name(""));
    assert_false(odbc_leader__valid_name(NULL));
    assert_false(odbc_leader__valid_name("a b"));
    assert_false(odbc_leader__valid_name("a;b"));
    assert_false(odbc_leader__valid_name("a'b"));
    assert_false(odbc_leader__valid_name("a\nb"));
    assert_false(odbc_leader__valid_name("caf\xc3\xa9"));
}

static void test_valid_prefix(void **state) {
    char s[ODBC_LEADER__PREFIX_MAX + 2];

    memset(s, 'p', sizeof s - 1);
    s[ODBC_LEADER__PREFIX_MAX] = '\0';
    assert_true(odbc_leader__valid_prefix(s)); /* 32 bytes */
    s[ODBC_LEADER__PREFIX_MAX] = 'p';
    s[ODBC_LEADER__PREFIX_MAX + 1] = '\0';
    assert_false(odbc_leader__valid_prefix(s)); /* 33 bytes */

    assert_false(odbc_leader__valid_prefix("")); /* "schema" is reserved */
    assert_true(odbc_leader__valid_prefix("_"));
    assert_true(odbc_leader__valid_prefix("odbc_leader_"));
    assert_true(odbc_leader__valid_prefix("a1"));
    assert_false(odbc_leader__valid_prefix("1a"));
    assert_false(odbc_leader__valid_prefix("0"));
    assert_false(odbc_leader__valid_prefix("a-b"));
    assert_false(odbc_leader__valid_prefix("a.b"));
    assert_false(odbc_leader__valid_prefix("a b"));
    assert_false(odbc_leader__valid_prefix("\"x"));
    assert_false(odbc_leader__valid_prefix(NULL));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_every_key),
        cmocka_unit_test(test_derived_defaults),
        cmocka_unit_test(test_braces),
        cmocka_unit_test(test_whitespace),
        cmocka_unit_test(test_case_insensitive),
        cmocka_unit_test(test_pass_through_order),
        cmocka_unit_test(test_empty_pairs),
        cmocka_unit_test(test_dsn_rules),
        cmocka_unit_test(test_redaction),
        cmocka_unit_test(test_password_never_in_err),
        cmocka_unit_test(test_unknown_key),
        cmocka_unit_test(test_bad_numbers),
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_timing_fit),
        cmocka_unit_test(test_bad_names),
        cmocka_unit_test(test_prefix),
        cmocka_unit_test(test_test_trust_extra),
        cmocka_unit_test(test_test_no_watch),
        cmocka_unit_test(test_pooler),
        cmocka_unit_test(test_election_retention),
        cmocka_unit_test(test_test_no_pooler_check),
        cmocka_unit_test(test_test_no_schedule),
        cmocka_unit_test(test_strip_password),
        cmocka_unit_test(test_connstr_value),
        cmocka_unit_test(test_dialect),
        cmocka_unit_test(test_create_schema),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_missing_target),
        cmocka_unit_test(test_null_and_free),
        cmocka_unit_test(test_odbc_ini_keys),
        cmocka_unit_test(test_odbc_ini_override),
        cmocka_unit_test(test_odbc_ini_errors),
        cmocka_unit_test(test_valid_name),
        cmocka_unit_test(test_valid_prefix),
    };

    return cmocka_run_group_tests(tests, setup_odbc_dir, teardown_odbc_dir);
}
