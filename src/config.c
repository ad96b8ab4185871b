/* SPDX-License-Identifier: MIT */
/*
 * config.c: turns the string given to odbc_leader_create() into a struct
 * odbc_leader__config. The string is an ODBC connection string: the keys
 * starting with "Leader" configure the election and are taken out, every
 * other pair is handed on to the driver manager as written. Leader* keys may
 * also sit in the odbc.ini section of the DSN named (read with odbcinst);
 * the string overrides them. The tokenizer of connstr.c splits the
 * string into pairs.
 */
#include <build_config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <odbcinst.h>

#include "buf.h"
#include "config.h"
#include "connstr.h"
#include "log.h"
#include "shard.h"

/* iODBC's headers (iodbcunix.h, through odbcinst.h) include <unistd.h>,
 * whose F_OK macro would replace this file's enumerator F_OK. Nothing here
 * calls access(); unixODBC's headers do not define F_OK. */
#if defined(_IODBCUNIX_H) && defined(F_OK)
#undef F_OK
#endif

#define DIALECT_MAX 4096       /* LeaderDialect, bytes */
#define INI_NAME_MAX 1000      /* unixODBC's longest odbc.ini key name */
#define KEY_LIST_START 4096    /* first buffer size for the key list */
#define KEY_LIST_MAX (1 << 20) /* give up growing the key list here */

#define TTL_MIN 100
#define TTL_MAX 86400000
#define TTL_DEFAULT 15000
#define FOLLOWER_WAIT_DEFAULT 1000
#define FOLLOWER_WAIT_MAX 60000
#define FIRE_RETENTION_DEFAULT (7 * 24 * 3600 * INT64_C(1000)) /* 7 days */
#define FIRE_RETENTION_MIN 1000
#define FIRE_RETENTION_MAX (3660 * 24 * 3600 * INT64_C(1000)) /* ~10 years */
#define ELECTION_RETENTION_DEFAULT (90 * 24 * 3600 * INT64_C(1000)) /* 90 d */
#define STMT_TIMEOUT_MIN 1
#define STMT_TIMEOUT_MAX 3600000
#define STMT_TIMEOUT_CAP 5000 /* default: the renew interval, clamped */
#define STMT_TIMEOUT_FLOOR                                                     \
    1000                  /* to [FLOOR, CAP]: short intervals must not         \
                             make every statement race its timeout */
#define MARGIN_FLOOR 1000 /* default margin is at least this when it fits */

#define NAME_CHARS "A-Z a-z 0-9 . _ - : / @"

enum key {
    K_NAMESPACE,
    K_ID,
    K_TTL,
    K_RENEW,
    K_MARGIN,
    K_STMT_TIMEOUT,
    K_DIALECT,
    K_PREFIX,
    K_CREATE_SCHEMA,
    K_FOLLOWER_WAIT,
    K_TEST_TRUST_EXTRA,
    K_RESIGN_REQUESTS,
    K_FIRE_RETENTION,
    K_POOLER,
    K_TEST_NO_WATCH,
    K_TEST_NO_POOLER_CHECK,
    K_SHARDS,
    K_ELECTION_RETENTION,
    K_TEST_NO_SCHEDULE,
    K_COUNT
};

static const char *const key_names[K_COUNT] = {
    "LeaderNamespace",
    "LeaderId",
    "LeaderTTL",
    "LeaderRenewInterval",
    "LeaderSafetyMargin",
    "LeaderStatementTimeout",
    "LeaderDialect",
    "LeaderTablePrefix",
    "LeaderCreateSchema",
    "LeaderFollowerWait",
    "LeaderTestTrustExtra",
    "LeaderResignRequests",
    "LeaderFireRetention",
    "LeaderPooler",
    "LeaderTestNoWatch",
    "LeaderTestNoPoolerCheck",
    "LeaderShards",
    "LeaderElectionRetention",
    "LeaderTestNoSchedule",
};

/* The keys a user may set; the test-only keys, known in every build so
 * that they get a clear refusal, are listed only where they can be set. */
#ifdef ODBC_LEADER_TEST_HOOKS
#define TEST_KEYS                                                              \
    " (and the test-only LeaderTestTrustExtra, LeaderTestNoWatch, "            \
    "LeaderTestNoPoolerCheck and LeaderTestNoSchedule)"
#else
#define TEST_KEYS ""
#endif
#define VALID_KEYS                                                             \
    "LeaderNamespace, LeaderId, LeaderTTL, LeaderRenewInterval, "              \
    "LeaderSafetyMargin, LeaderStatementTimeout, LeaderDialect, "              \
    "LeaderTablePrefix, LeaderCreateSchema, LeaderFollowerWait, "              \
    "LeaderResignRequests, LeaderFireRetention, LeaderPooler, "                \
    "LeaderShards, LeaderElectionRetention" TEST_KEYS

/* Why a name or prefix is rejected. */
enum fault { F_OK, F_EMPTY, F_LONG, F_CHAR, F_DIGIT };

/* One Leader* value as found, before conversion. */
struct value {
    char *text;    /* owned, NULL = not given */
    int from_file; /* 1 when read from the DSN's odbc.ini section */
};

/* Everything collected while parsing; freed by state_free(). */
struct state {
    struct value v[K_COUNT];
    struct odbc_leader__buf connect;
    struct odbc_leader__buf redacted;
    char *dsn;      /* owned: the DSN= the driver manager will use, or NULL */
    int dsn_closed; /* DSN=, Driver= or FILEDSN= seen: later DSN= is ignored */
    int target;     /* DSN=, Driver= or FILEDSN= seen at all */
    char origin[ODBC_LEADER__SHOW_BUF +
                64]; /* note added to messages on file values */
};

/* Writes one byte into dst (8 bytes) as 'c' or '\xNN'. Returns dst. */
static const char *show_char(char *dst, unsigned char c) {
    if (c > 0x20 && c < 0x7f && c != '\'' && c != '\\')
        snprintf(dst, 8, "'%c'", c);
    else
        snprintf(dst, 8, "'\\x%02x'", c);
    return dst;
}

/* The enum key of a Leader* key name, or -1. */
static int key_lookup(const char *key, size_t n) {
    for (int k = 0; k < K_COUNT; k++) {
        if (odbc_leader__connstr_key_is(key, n, key_names[k]))
            return k;
    }
    return -1;
}

/* 1 when key[0..n) starts with "Leader" in any case. */
static int is_leader_key(const char *key, size_t n) {
    return n >= 6 && strncasecmp(key, "Leader", 6) == 0;
}

/* Frees what st owns. */
static void state_free(struct state *st) {
    for (int k = 0; k < K_COUNT; k++)
        free(st->v[k].text);
    free(st->connect.p);
    free(st->redacted.p);
    free(st->dsn);
    memset(st, 0, sizeof *st);
}

/* Stores text (ownership passes to st) as the value of key k; a value
 * given again replaces the earlier one. */
static void set_value(struct state *st, int k, char *text, int from_file) {
    free(st->v[k].text);
    st->v[k].text = text;
    st->v[k].from_file = from_file;
}

/* 1 when key[0..n) is a password key whose value must be hidden. */
static int is_secret_key(const char *key, size_t n) {
    return odbc_leader__connstr_key_is(key, n, "PWD") ||
           odbc_leader__connstr_key_is(key, n, "Password");
}

/* Notes DSN=, Driver= and FILEDSN= the way the driver manager reads them:
 * the first of DSN and Driver/FILEDSN wins. Takes p->value when it becomes
 * the DSN (p->value is then NULL). */
static void note_target(struct state *st, const char *key,
                        struct odbc_leader__pair *p) {
    int is_dsn = odbc_leader__connstr_key_is(key, p->keylen, "DSN");

    if (!is_dsn && !odbc_leader__connstr_key_is(key, p->keylen, "Driver") &&
        !odbc_leader__connstr_key_is(key, p->keylen, "FILEDSN"))
        return;
    st->target = 1;
    if (is_dsn && !st->dsn_closed) {
        st->dsn = p->value;
        p->value = NULL;
    }
    st->dsn_closed = 1;
}

/* Appends a pass-through pair to connect and (redacted) to
 * connect_redacted. Returns 0 or ODBC_LEADER_ENOMEM. */
static int keep_pair(struct state *st, const char *s,
                     struct odbc_leader__pair *p, char *err, size_t errlen) {
    int fail = 0;

    if (st->connect.len > 0) {
        fail |= odbc_leader__buf_add(&st->connect, ";", 1);
        fail |= odbc_leader__buf_add(&st->redacted, ";", 1);
    }
    fail |= odbc_leader__buf_add(&st->connect, s + p->start, p->end - p->start);
    if (is_secret_key(s + p->start, p->keylen)) {
        fail |= odbc_leader__buf_add(&st->redacted, s + p->start,
                                     p->eq + 1 - p->start);
        fail |= odbc_leader__buf_add(&st->redacted, "***", 3);
    } else {
        fail |= odbc_leader__buf_add(&st->redacted, s + p->start,
                                     p->end - p->start);
    }
    if (fail) {
        odbc_leader__errf(err, errlen, "out of memory");
        return ODBC_LEADER_ENOMEM;
    }
    note_target(st, s + p->start, p);
    return 0;
}

/* Reports an unknown Leader* key; where is "" or a note on its origin.
 * Returns ODBC_LEADER_ECONFIG. */
static int unknown_key(const char *key, size_t n, const char *where, char *err,
                       size_t errlen) {
    char kbuf[ODBC_LEADER__SHOW_BUF];

    odbc_leader__errf(err, errlen, "unknown key \"%s\"%s (valid keys: %s)",
                      odbc_leader__show(kbuf, key, n), where, VALID_KEYS);
    return ODBC_LEADER_ECONFIG;
}

/* Splits the connection string into st. Returns 0 or a negative error. */
static int parse_string(struct state *st, const char *s, char *err,
                        size_t errlen) {
    size_t pos = 0;
    struct odbc_leader__pair p = {0};
    int rc;

    for (;;) {
        rc = odbc_leader__connstr_next(s, &pos, &p, err, errlen);
        if (rc <= 0)
            break;
        rc = 0;
        if (!is_leader_key(s + p.start, p.keylen)) {
            rc = keep_pair(st, s, &p, err, errlen);
        } else {
            int k = key_lookup(s + p.start, p.keylen);
            if (k < 0) {
                rc = unknown_key(s + p.start, p.keylen, "", err, errlen);
            } else {
                set_value(st, k, p.value, 0);
                p.value = NULL;
            }
        }
        free(p.value);
        p.value = NULL;
        if (rc != 0)
            break;
    }
    return rc;
}

/*
 * Returns a new buffer holding the NUL-separated key names of the DSN's
 * odbc.ini section, ending with an empty name, or NULL when out of memory.
 * A missing section or file gives an empty list. The count unixODBC returns
 * differs between versions, so the list is measured here; the buffer grows
 * while a key might have been cut off.
 */
static char *list_dsn_keys(const char *dsn) {
    int cap = KEY_LIST_START;

    for (;;) {
        char *list = calloc((size_t)cap + 2, 1);
        if (!list)
            return NULL;
        int n =
            SQLGetPrivateProfileString(dsn, NULL, "", list, cap, "odbc.ini");
        if (n < 0) {
            memset(list, 0, (size_t)cap + 2);
            return list;
        }
        size_t used = 0;
        while (used < (size_t)cap && list[used] != '\0')
            used += strnlen(list + used, (size_t)cap - used) + 1;
        if (used + INI_NAME_MAX + 2 < (size_t)cap || cap >= KEY_LIST_MAX) {
            memset(list + used, 0, (size_t)cap + 2 - used);
            return list;
        }
        free(list);
        cap *= 4;
    }
}

/* Stores the odbc.ini value of Leader* key `name` as key k unless the
 * string already set it. Returns 0 or ODBC_LEADER_ENOMEM. */
static int read_dsn_value(struct state *st, const char *dsn, const char *name,
                          int k, char *err, size_t errlen) {
    char val[DIALECT_MAX + 2];
    char *copy;

    if (st->v[k].text && !st->v[k].from_file)
        return 0;
    val[0] = '\0';
    SQLGetPrivateProfileString(dsn, name, "", val, (int)sizeof val, "odbc.ini");
    val[sizeof val - 1] = '\0';
    copy = strdup(val);
    if (!copy) {
        odbc_leader__errf(err, errlen, "out of memory");
        return ODBC_LEADER_ENOMEM;
    }
    set_value(st, k, copy, 1);
    return 0;
}

/* Reads the Leader* keys of the DSN's odbc.ini section into st, keeping the
 * values the string gave. A DSN that does not exist gives no keys. Returns 0
 * or a negative error. */
static int read_dsn(struct state *st, const char *dsn, char *err,
                    size_t errlen) {
    char dbuf[ODBC_LEADER__SHOW_BUF];
    char *list;
    int rc = 0;

    snprintf(st->origin, sizeof st->origin,
             " (from the odbc.ini section of DSN \"%s\")",
             odbc_leader__show_str(dbuf, dsn));
    list = list_dsn_keys(dsn);
    if (!list) {
        odbc_leader__errf(err, errlen, "out of memory");
        return ODBC_LEADER_ENOMEM;
    }
    for (const char *name = list; *name; name += strlen(name) + 1) {
        size_t n = strlen(name);
        if (!is_leader_key(name, n))
            continue;
        int k = key_lookup(name, n);
        if (k < 0)
            rc = unknown_key(name, n, st->origin, err, errlen);
        else
            rc = read_dsn_value(st, dsn, name, k, err, errlen);
        if (rc != 0)
            break;
    }
    free(list);
    return rc;
}

/* " (from the odbc.ini ...)" when key k came from the file, else "". */
static const char *origin(const struct state *st, int k) {
    return st->v[k].from_file ? st->origin : "";
}

/* Refuses the value of key k: "KEY: "VALUE" what" and the note on its
 * origin, the value quoted with odbc_leader__show(). Returns
 * ODBC_LEADER_ECONFIG. */
static int bad_value(const struct state *st, int k, const char *what, char *err,
                     size_t errlen) {
    char vbuf[ODBC_LEADER__SHOW_BUF];

    odbc_leader__errf(err, errlen, "%s: \"%s\" %s%s", key_names[k],
                      odbc_leader__show_str(vbuf, st->v[k].text), what,
                      origin(st, k));
    return ODBC_LEADER_ECONFIG;
}

/* Parses key k as a count of milliseconds: digits only. Returns 0 with
 * *ms set, or ODBC_LEADER_ECONFIG naming the key and the value. */
static int parse_ms(const struct state *st, int k, int64_t *ms, char *err,
                    size_t errlen) {
    const char *s = st->v[k].text;
    int64_t v = 0;
    size_t i = 0;

    for (; s[i] >= '0' && s[i] <= '9'; i++) {
        int d = s[i] - '0';
        if (v > (INT64_MAX - d) / 10)
            return bad_value(st, k, "is too large", err, errlen);
        v = v * 10 + d;
    }
    if (i == 0 || s[i] != '\0')
        return bad_value(st, k, "is not a whole number of milliseconds", err,
                         errlen);
    *ms = v;
    return 0;
}

/* Like parse_ms(), and checks lo <= value <= hi. */
static int parse_ms_range(const struct state *st, int k, int64_t lo, int64_t hi,
                          int64_t *ms, char *err, size_t errlen) {
    int rc = parse_ms(st, k, ms, err, errlen);

    if (rc == 0 && (*ms < lo || *ms > hi)) {
        odbc_leader__errf(err, errlen,
                          "%s: %" PRId64 " ms is out of range (%" PRId64
                          "..%" PRId64 ")%s",
                          key_names[k], *ms, lo, hi, origin(st, k));
        rc = ODBC_LEADER_ECONFIG;
    }
    return rc;
}

/* Parses key k into *ms when given, else stores deflt. Returns 0 or
 * ODBC_LEADER_ECONFIG. */
static int ms_or_default(const struct state *st, int k, int64_t deflt,
                         int64_t *ms, char *err, size_t errlen) {
    if (!st->v[k].text) {
        *ms = deflt;
        return 0;
    }
    return parse_ms(st, k, ms, err, errlen);
}

/* The default safety margin: max(1000, ttl/10) when that leaves room for
 * the renew interval, else ttl/10. */
static int64_t default_margin(int64_t ttl, int64_t renew) {
    int64_t m = ttl / 10 > MARGIN_FLOOR ? ttl / 10 : MARGIN_FLOOR;

    if (m >= ttl - renew)
        m = ttl / 10;
    return m;
}

/* Checks that the margin and the renew interval fit inside the TTL.
 * Returns 0 or ODBC_LEADER_ECONFIG. */
static int check_timing(const struct odbc_leader__config *c, char *err,
                        size_t errlen) {
    if (c->margin_ms <= 0 || c->margin_ms >= c->ttl_ms) {
        odbc_leader__errf(err, errlen,
                          "LeaderSafetyMargin (%" PRId64
                          " ms) must be greater than 0 and shorter than "
                          "LeaderTTL (%" PRId64 " ms)",
                          c->margin_ms, c->ttl_ms);
        return ODBC_LEADER_ECONFIG;
    }
    if (c->renew_ms >= c->ttl_ms - c->margin_ms) {
        odbc_leader__errf(err, errlen,
                          "LeaderRenewInterval (%" PRId64
                          " ms) must be shorter than LeaderTTL - "
                          "LeaderSafetyMargin (%" PRId64 " ms)",
                          c->renew_ms, c->ttl_ms - c->margin_ms);
        return ODBC_LEADER_ECONFIG;
    }
    return 0;
}

/* The default statement timeout: the renew interval clamped to
 * [STMT_TIMEOUT_FLOOR, STMT_TIMEOUT_CAP], but at most half of what is left
 * of the trust window once a renewal is due (TTL - margin - renew), so
 * that a renewal's answer and the stopping of a supervised command (run
 * --grace) share that rest. At least 1 ms. */
static int64_t default_stmt_timeout(const struct odbc_leader__config *c) {
    int64_t t = c->renew_ms < STMT_TIMEOUT_CAP ? c->renew_ms : STMT_TIMEOUT_CAP;
    int64_t half = (c->ttl_ms - c->margin_ms - c->renew_ms) / 2;

    if (t < STMT_TIMEOUT_FLOOR)
        t = STMT_TIMEOUT_FLOOR;
    if (t > half)
        t = half;
    return t < 1 ? 1 : t;
}

/* Checks that a statement started when a renewal is due ends before the
 * trust window does: timeout <= TTL - margin - renew. Returns 0 or
 * ODBC_LEADER_ECONFIG with the numbers in err. */
static int check_stmt_timeout(const struct state *st,
                              const struct odbc_leader__config *c, char *err,
                              size_t errlen) {
    int64_t room = c->ttl_ms - c->margin_ms - c->renew_ms;

    if (c->stmt_timeout_ms <= room)
        return 0;
    odbc_leader__errf(err, errlen,
                      "LeaderStatementTimeout (%" PRId64
                      " ms) does not fit: a renewal starts LeaderRenewInterval "
                      "(%" PRId64 " ms) into a trust window of LeaderTTL - "
                      "LeaderSafetyMargin (%" PRId64 " - %" PRId64
                      " ms) and must end inside it, so the timeout may be at "
                      "most %" PRId64 " ms%s",
                      c->stmt_timeout_ms, c->renew_ms, c->ttl_ms, c->margin_ms,
                      room, origin(st, K_STMT_TIMEOUT));
    return ODBC_LEADER_ECONFIG;
}

#ifndef ODBC_LEADER_TEST_HOOKS
/* The refusal of test-only key k (given) in a build configured without
 * --enable-test-hooks. Returns ODBC_LEADER_ECONFIG. */
static int refuse_test_key(const struct state *st, int k, char *err,
                           size_t errlen) {
    odbc_leader__errf(err, errlen,
                      "%s: a test-only key that breaks the protocol; this "
                      "build was configured without --enable-test-hooks%s",
                      key_names[k], origin(st, k));
    return ODBC_LEADER_ECONFIG;
}
#endif

/* Reads LeaderTestTrustExtra (given) into c->test_trust_extra_ms. It
 * breaks the protocol on purpose, for the fault suite: a build configured
 * without --enable-test-hooks refuses it. Returns 0 or
 * ODBC_LEADER_ECONFIG. */
static int settle_trust_extra(const struct state *st,
                              struct odbc_leader__config *c, char *err,
                              size_t errlen) {
#ifdef ODBC_LEADER_TEST_HOOKS
    return parse_ms_range(st, K_TEST_TRUST_EXTRA, 0, TTL_MAX,
                          &c->test_trust_extra_ms, err, errlen);
#else
    (void)c;
    return refuse_test_key(st, K_TEST_TRUST_EXTRA, err, errlen);
#endif
}

/* Converts the durations into c, applying defaults, and checks them.
 * Returns 0 or ODBC_LEADER_ECONFIG. */
static int settle_durations(const struct state *st,
                            struct odbc_leader__config *c, char *err,
                            size_t errlen) {
    int rc = 0;

    c->ttl_ms = TTL_DEFAULT;
    if (st->v[K_TTL].text)
        rc = parse_ms_range(st, K_TTL, TTL_MIN, TTL_MAX, &c->ttl_ms, err,
                            errlen);
    if (rc == 0)
        rc = ms_or_default(st, K_RENEW, c->ttl_ms / 3, &c->renew_ms, err,
                           errlen);
    if (rc == 0 && c->renew_ms <= 0) {
        odbc_leader__errf(err, errlen,
                          "LeaderRenewInterval: must be greater than 0 ms%s",
                          origin(st, K_RENEW));
        rc = ODBC_LEADER_ECONFIG;
    }
    if (rc == 0)
        rc = ms_or_default(st, K_MARGIN, default_margin(c->ttl_ms, c->renew_ms),
                           &c->margin_ms, err, errlen);
    if (rc == 0)
        rc = check_timing(c, err, errlen);
    if (rc != 0)
        return rc;
    c->stmt_timeout_ms = default_stmt_timeout(c);
    if (st->v[K_STMT_TIMEOUT].text)
        rc = parse_ms_range(st, K_STMT_TIMEOUT, STMT_TIMEOUT_MIN,
                            STMT_TIMEOUT_MAX, &c->stmt_timeout_ms, err, errlen);
    if (rc == 0)
        rc = check_stmt_timeout(st, c, err, errlen);
    c->follower_wait_ms = FOLLOWER_WAIT_DEFAULT;
    if (rc == 0 && st->v[K_FOLLOWER_WAIT].text)
        rc = parse_ms_range(st, K_FOLLOWER_WAIT, 0, FOLLOWER_WAIT_MAX,
                            &c->follower_wait_ms, err, errlen);
    c->fire_retention_ms = FIRE_RETENTION_DEFAULT;
    if (rc == 0 && st->v[K_FIRE_RETENTION].text)
        rc = parse_ms_range(st, K_FIRE_RETENTION, FIRE_RETENTION_MIN,
                            FIRE_RETENTION_MAX, &c->fire_retention_ms, err,
                            errlen);
    c->election_retention_ms = ELECTION_RETENTION_DEFAULT;
    if (rc == 0 && st->v[K_ELECTION_RETENTION].text)
        rc = parse_ms_range(st, K_ELECTION_RETENTION, FIRE_RETENTION_MIN,
                            FIRE_RETENTION_MAX, &c->election_retention_ms, err,
                            errlen);
    if (rc == 0 && st->v[K_TEST_TRUST_EXTRA].text)
        rc = settle_trust_extra(st, c, err, errlen);
    return rc;
}

/* Why s is not a valid name (F_OK when it is); *at is the 0-based offset
 * of the first bad byte for F_CHAR. */
static enum fault name_fault(const char *s, size_t *at) {
    size_t n = strlen(s);

    if (n == 0)
        return F_EMPTY;
    if (n > ODBC_LEADER__NAME_MAX)
        return F_LONG;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                 (c >= '0' && c <= '9') || strchr("._-:/@", c) != NULL;
        if (!ok) {
            *at = i;
            return F_CHAR;
        }
    }
    return F_OK;
}

/* Why s is not a valid table prefix (F_OK when it is), as name_fault(). */
static enum fault prefix_fault(const char *s, size_t *at) {
    size_t n = strlen(s);

    if (n == 0)
        return F_EMPTY; /* bare names such as "schema" are reserved words */
    if (n > ODBC_LEADER__PREFIX_MAX)
        return F_LONG;
    if (s[0] >= '0' && s[0] <= '9')
        return F_DIGIT;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                 (c >= '0' && c <= '9') || c == '_';
        if (!ok) {
            *at = i;
            return F_CHAR;
        }
    }
    return F_OK;
}

/* 1 when s is a valid namespace or candidate id, else 0 (see config.h). */
int odbc_leader__valid_name(const char *s) {
    size_t at = 0;

    return s != NULL && name_fault(s, &at) == F_OK;
}

/* 1 when s is a valid table prefix, else 0 (see config.h). */
int odbc_leader__valid_prefix(const char *s) {
    size_t at = 0;

    return s != NULL && prefix_fault(s, &at) == F_OK;
}

/* Reports fault f of key k's value; allowed describes the valid bytes and
 * max is the length limit. Returns ODBC_LEADER_ECONFIG. */
static int report_fault(const struct state *st, int k, enum fault f, size_t at,
                        const char *allowed, size_t max, char *err,
                        size_t errlen) {
    const char *s = st->v[k].text;
    char cbuf[8];

    if (f == F_EMPTY)
        odbc_leader__errf(err, errlen, "%s: must not be empty%s", key_names[k],
                          origin(st, k));
    else if (f == F_LONG)
        odbc_leader__errf(err, errlen, "%s: too long (%zu bytes, max %zu)%s",
                          key_names[k], strlen(s), max, origin(st, k));
    else if (f == F_DIGIT)
        odbc_leader__errf(err, errlen, "%s: must not start with a digit%s",
                          key_names[k], origin(st, k));
    else
        odbc_leader__errf(err, errlen,
                          "%s: character %s at byte %zu is not allowed "
                          "(allowed: %s)%s",
                          key_names[k], show_char(cbuf, (unsigned char)s[at]),
                          at + 1, allowed, origin(st, k));
    return ODBC_LEADER_ECONFIG;
}

/* How a name-like value is checked: its fault function, the bytes the
 * message says it may hold, and its longest length. */
struct name_rule {
    enum fault (*fault)(const char *s, size_t *at);
    const char *allowed;
    size_t max;
};

static const struct name_rule name_rule = {name_fault, NAME_CHARS,
                                           ODBC_LEADER__NAME_MAX};
static const struct name_rule prefix_rule = {prefix_fault, "A-Z a-z 0-9 _",
                                             ODBC_LEADER__PREFIX_MAX};

/* Checks key k by rule and copies it into dst (rule->max + 1 bytes);
 * keeps dst when the key is not given. Returns 0 or ODBC_LEADER_ECONFIG. */
static int settle_name(const struct state *st, int k,
                       const struct name_rule *rule, char *dst, char *err,
                       size_t errlen) {
    size_t at = 0;
    enum fault f;

    if (!st->v[k].text)
        return 0;
    f = rule->fault(st->v[k].text, &at);
    if (f != F_OK)
        return report_fault(st, k, f, at, rule->allowed, rule->max, err,
                            errlen);
    strcpy(dst, st->v[k].text);
    return 0;
}

/* Parses boolean key k (when given) into *out: yes, true, on, 1 or no,
 * false, off, 0, in any case. Returns 0 or ODBC_LEADER_ECONFIG. */
static int settle_bool(const struct state *st, int k, int *out, char *err,
                       size_t errlen) {
    static const char *const yes[] = {"yes", "true", "on", "1"};
    static const char *const no[] = {"no", "false", "off", "0"};
    const char *s = st->v[k].text;

    if (!s)
        return 0;
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return bad_value(st, k, "is not one of yes, no, true, false, on, off, 1, 0",
                     err, errlen);
}

/* Reads test-only boolean key k (when given) into *out, default 0;
 * refused without --enable-test-hooks. The keys: LeaderTestNoWatch (a
 * takeover on database time alone, the rule before the watch, for the
 * tests that must show it failing) and LeaderTestNoPoolerCheck (no check
 * for a transaction pooler at connect, so the tests reach the run-time
 * detection, SQLSTATE 26000 in db_pooler.c) and LeaderTestNoSchedule (no
 * schedule identity check before a claim, for the tests that must show
 * two time zones double-firing). Returns 0 or ODBC_LEADER_ECONFIG.
 */
static int settle_test_bool(const struct state *st, int k, int *out, char *err,
                            size_t errlen) {
    *out = 0;
    if (st->v[k].text == NULL)
        return 0;
#ifdef ODBC_LEADER_TEST_HOOKS
    return settle_bool(st, k, out, err, errlen);
#else
    return refuse_test_key(st, k, err, errlen);
#endif
}

/* Reads LeaderResignRequests: "resign" (default: the library resigns at
 * the renewal that finds a request) or "report" (tick returns
 * ODBC_LEADER_RESIGN_REQUESTED and the host resigns). Returns 0 or
 * ODBC_LEADER_ECONFIG. */
static int settle_resign_requests(const struct state *st,
                                  struct odbc_leader__config *c, char *err,
                                  size_t errlen) {
    const char *s = st->v[K_RESIGN_REQUESTS].text;

    c->report_resign = 0;
    if (s == NULL || strcasecmp(s, "resign") == 0)
        return 0;
    if (strcasecmp(s, "report") == 0) {
        c->report_resign = 1;
        return 0;
    }
    return bad_value(st, K_RESIGN_REQUESTS, "is not one of resign, report", err,
                     errlen);
}

/* The LeaderPooler values, indexed by enum odbc_leader__pooler. */
static const char *const pooler_names[] = {
    [ODBC_LEADER__POOL_NONE] = "none",
    [ODBC_LEADER__POOL_AUTO] = "auto",
    [ODBC_LEADER__POOL_SESSION] = "session",
    [ODBC_LEADER__POOL_TRANSACTION] = "transaction",
};

/* See config.h. */
const char *odbc_leader__pooler_name(int pooler) {
    if (pooler < 0 ||
        (size_t)pooler >= sizeof pooler_names / sizeof *pooler_names)
        return "?";
    return pooler_names[pooler];
}

/* Reads LeaderPooler: "auto" (default), "none", "session" or
 * "transaction". Returns 0 or ODBC_LEADER_ECONFIG. */
static int settle_pooler(const struct state *st, struct odbc_leader__config *c,
                         char *err, size_t errlen) {
    const char *s = st->v[K_POOLER].text;

    c->pooler = ODBC_LEADER__POOL_AUTO;
    if (s == NULL)
        return 0;
    for (size_t i = 0; i < sizeof pooler_names / sizeof pooler_names[0]; i++) {
        if (strcasecmp(s, pooler_names[i]) == 0) {
            c->pooler = (int)i;
            return 0;
        }
    }
    return bad_value(st, K_POOLER,
                     "is not one of auto, none, session, transaction", err,
                     errlen);
}

/* Reads LeaderShards (when given): the shard count of a group, 1 to
 * ODBC_LEADER__SHARDS_MAX, whose name is LeaderNamespace; every shard's
 * namespace NAME/SHARD must fit in ODBC_LEADER__NAME_MAX bytes. Returns 0
 * or ODBC_LEADER_ECONFIG. */
static int settle_shards(const struct state *st, struct odbc_leader__config *c,
                         char *err, size_t errlen) {
    const char *s = st->v[K_SHARDS].text;
    char vbuf[ODBC_LEADER__SHOW_BUF], *end = NULL;
    long long v;
    int digits = 1;

    c->shards = 0;
    if (s == NULL)
        return 0;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || s[0] == '+' ||
        v < 1 || v > ODBC_LEADER__SHARDS_MAX) {
        odbc_leader__errf(err, errlen,
                          "LeaderShards: \"%s\" is not a whole number from 1 "
                          "to %d%s",
                          odbc_leader__show_str(vbuf, s),
                          ODBC_LEADER__SHARDS_MAX, origin(st, K_SHARDS));
        return ODBC_LEADER_ECONFIG;
    }
    for (long long x = v - 1; x >= 10; x /= 10)
        digits++;
    if (strlen(c->ns) + 1 + (size_t)digits > ODBC_LEADER__NAME_MAX) {
        odbc_leader__errf(err, errlen,
                          "LeaderNamespace: a group of %lld shards needs a "
                          "name of at most %d bytes (its shards are NAME/0 "
                          "to NAME/%lld)",
                          v, ODBC_LEADER__NAME_MAX - 1 - digits, v - 1);
        return ODBC_LEADER_ECONFIG;
    }
    c->shards = (int)v;
    return 0;
}

/* Checks LeaderDialect and copies it (or "auto") into c->dialect. Returns
 * 0, ODBC_LEADER_ECONFIG or ENOMEM. */
static int settle_dialect(const struct state *st, struct odbc_leader__config *c,
                          char *err, size_t errlen) {
    const char *s = st->v[K_DIALECT].text ? st->v[K_DIALECT].text : "auto";

    if (s[0] == '\0' || strlen(s) > DIALECT_MAX)
        return report_fault(st, K_DIALECT, s[0] ? F_LONG : F_EMPTY, 0, "",
                            DIALECT_MAX, err, errlen);
    c->dialect = strdup(s);
    if (!c->dialect) {
        odbc_leader__errf(err, errlen, "out of memory");
        return ODBC_LEADER_ENOMEM;
    }
    return 0;
}

/* Fills the Leader* fields of c from st with defaults, checking each.
 * Returns 0 or a negative error; c->dialect is owned by c either way. */
static int settle(const struct state *st, struct odbc_leader__config *c,
                  char *err, size_t errlen) {
    int rc;

    strcpy(c->ns, "default");
    c->id[0] = '\0';
    strcpy(c->prefix, "odbc_leader_");
    c->create_schema = 1;
    rc = settle_name(st, K_NAMESPACE, &name_rule, c->ns, err, errlen);
    if (rc == 0)
        rc = settle_name(st, K_ID, &name_rule, c->id, err, errlen);
    if (rc == 0)
        rc = settle_durations(st, c, err, errlen);
    if (rc == 0)
        rc = settle_name(st, K_PREFIX, &prefix_rule, c->prefix, err, errlen);
    if (rc == 0)
        rc = settle_bool(st, K_CREATE_SCHEMA, &c->create_schema, err, errlen);
    if (rc == 0)
        rc = settle_test_bool(st, K_TEST_NO_WATCH, &c->test_no_watch, err,
                              errlen);
    if (rc == 0)
        rc = settle_test_bool(st, K_TEST_NO_POOLER_CHECK,
                              &c->test_no_pooler_check, err, errlen);
    if (rc == 0)
        rc = settle_test_bool(st, K_TEST_NO_SCHEDULE, &c->test_no_schedule, err,
                              errlen);
    if (rc == 0)
        rc = settle_dialect(st, c, err, errlen);
    if (rc == 0)
        rc = settle_resign_requests(st, c, err, errlen);
    if (rc == 0)
        rc = settle_pooler(st, c, err, errlen);
    if (rc == 0)
        rc = settle_shards(st, c, err, errlen);
    return rc;
}

/* See config.h. Borrows config; on success *out owns its strings. */
int odbc_leader__config_parse(const char *config,
                              struct odbc_leader__config *out, char *err,
                              size_t errlen) {
    struct state st;
    int rc;

    memset(&st, 0, sizeof st);
    if (out)
        memset(out, 0, sizeof *out);
    if (!config || !out) {
        odbc_leader__errf(err, errlen, "no configuration string given");
        return ODBC_LEADER_EINVAL;
    }
    rc = parse_string(&st, config, err, errlen);
    if (rc != 0)
        goto fail;
    if (!st.target) {
        odbc_leader__errf(err, errlen,
                          "no DSN= or Driver= in the connection string");
        rc = ODBC_LEADER_ECONFIG;
        goto fail;
    }
    if (st.dsn && st.dsn[0] != '\0')
        rc = read_dsn(&st, st.dsn, err, errlen);
    if (rc == 0)
        rc = settle(&st, out, err, errlen);
    if (rc != 0)
        goto fail;
    out->connect = st.connect.p;
    out->connect_redacted = st.redacted.p;
    out->dsn = st.dsn;
    st.connect.p = NULL;
    st.redacted.p = NULL;
    st.dsn = NULL;
    state_free(&st);
    return 0;
fail:
    odbc_leader__config_free(out);
    state_free(&st);
    return rc;
}

/* Frees the strings cfg owns and zeroes it; NULL is a no-op. */
void odbc_leader__config_free(struct odbc_leader__config *cfg) {
    if (!cfg)
        return;
    free(cfg->connect);
    free(cfg->connect_redacted);
    free(cfg->dsn);
    free(cfg->dialect);
    memset(cfg, 0, sizeof *cfg);
}

/* See config.h. Borrows s; on success *out is the caller's. */
int odbc_leader__config_strip_password(const char *s, char **out, char *err,
                                       size_t errlen) {
    struct odbc_leader__buf b = {0};
    struct odbc_leader__pair p = {0};
    size_t pos = 0;
    int oom = odbc_leader__buf_add(&b, "", 0);
    int rc;

    *out = NULL;
    for (rc = odbc_leader__connstr_next(s, &pos, &p, err, errlen); rc > 0;
         rc = odbc_leader__connstr_next(s, &pos, &p, err, errlen)) {
        free(p.value);
        p.value = NULL;
        if (is_secret_key(s + p.start, p.keylen))
            continue;
        if (b.len > 0)
            oom |= odbc_leader__buf_add(&b, ";", 1);
        oom |= odbc_leader__buf_add(&b, s + p.start, p.end - p.start);
    }
    if (rc == 0 && oom) {
        odbc_leader__errf(err, errlen, "out of memory");
        rc = ODBC_LEADER_ENOMEM;
    }
    if (rc != 0)
        goto fail;
    *out = b.p;
    return 0;
fail:
    free(b.p);
    return rc;
}
