/* SPDX-License-Identifier: MIT */
/*
 * dialect.c: reads dialect files (the SQL an engine runs for one kind of
 * database; docs/dialects.md describes the format),
 * picks a dialect for a driver and classifies driver errors with the
 * dialect's error-code lists.
 */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L /* strdup, strerror_r (XSI form) */
#endif

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "config.h"
#include "dialect.h"
#include "log.h"

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/local/share/odbc-leader"
#endif

#define DIALECT_FILE_MAX (1024 * 1024) /* bytes; dialect files are small */
#define REASON_MAX 640 /* the longest message lists every operation */

/* What the parser asks of an operation (struct op_info's flags):
 * OPTIONAL, it may be left out; V2, only from @schema-version 2 on (the
 * fire ledger, the upgrade), and required there unless also OPTIONAL;
 * WAKEUP, one of the follower wake-up's statements; WAKEUP_CORE, needed
 * once any wake-up statement is there. */
#define OPF_OPTIONAL 1u
#define OPF_V2 2u
#define OPF_WAKEUP 4u
#define OPF_WAKEUP_CORE 8u
#define OPF_GROUP 16u    /* sharded groups: all of them or none */
#define OPF_ELECTION 32u /* the election log: both or none */

/* One operation: its name in "@statement NAME" and its OPF_* flags. The
 * parser's checks and every message that lists operations come from this
 * table. */
struct op_info {
    const char *name;
    unsigned flags;
};

static const struct op_info op_names[ODBC_LEADER__OP_COUNT] = {
    [ODBC_LEADER__OP_ON_CONNECT] = {"on_connect", OPF_OPTIONAL},
    [ODBC_LEADER__OP_DDL] = {"ddl", 0},
    [ODBC_LEADER__OP_SCHEMA_VERSION] = {"schema_version", 0},
    [ODBC_LEADER__OP_ATTEMPT] = {"attempt", 0},
    [ODBC_LEADER__OP_RENEW] = {"renew", 0},
    [ODBC_LEADER__OP_RESIGN] = {"resign", 0},
    [ODBC_LEADER__OP_UNREGISTER] = {"unregister", 0},
    [ODBC_LEADER__OP_LEADER] = {"leader", 0},
    [ODBC_LEADER__OP_CANDIDATES] = {"candidates", 0},
    [ODBC_LEADER__OP_REQUEST_RESIGN] = {"request_resign", 0},
    [ODBC_LEADER__OP_RELEASE] = {"release",
                                 OPF_OPTIONAL | OPF_WAKEUP | OPF_WAKEUP_CORE},
    [ODBC_LEADER__OP_WAIT] = {"wait",
                              OPF_OPTIONAL | OPF_WAKEUP | OPF_WAKEUP_CORE},
    [ODBC_LEADER__OP_HOLD] = {"hold", OPF_OPTIONAL | OPF_WAKEUP},
    [ODBC_LEADER__OP_UPGRADE] = {"upgrade", OPF_OPTIONAL | OPF_V2},
    [ODBC_LEADER__OP_CLAIM] = {"claim", OPF_V2},
    [ODBC_LEADER__OP_FINISH] = {"finish", OPF_V2},
    [ODBC_LEADER__OP_FIRE] = {"fire", OPF_V2},
    [ODBC_LEADER__OP_FIRES] = {"fires", OPF_V2},
    [ODBC_LEADER__OP_FIRE_GC] = {"fire_gc", OPF_V2},
    [ODBC_LEADER__OP_FENCE] = {"fence", OPF_V2},
    [ODBC_LEADER__OP_SESSION_ID] = {"session_id", OPF_OPTIONAL},
    [ODBC_LEADER__OP_GROUP_INIT] = {"group_init", OPF_OPTIONAL | OPF_GROUP},
    [ODBC_LEADER__OP_GROUP_TICK] = {"group_tick", OPF_OPTIONAL | OPF_GROUP},
    [ODBC_LEADER__OP_GROUP_LEAVE] = {"group_leave", OPF_OPTIONAL | OPF_GROUP},
    [ODBC_LEADER__OP_GROUP_SHARDS] = {"group_shards", OPF_OPTIONAL | OPF_GROUP},
    [ODBC_LEADER__OP_ELECTIONS] = {"elections", OPF_OPTIONAL | OPF_ELECTION},
    [ODBC_LEADER__OP_ELECTION_GC] = {"election_gc",
                                     OPF_OPTIONAL | OPF_ELECTION},
};

/* Returns the name of op as a dialect file spells it; static. */
const char *odbc_leader__op_name(enum odbc_leader__op op) {
    return (unsigned)op < ODBC_LEADER__OP_COUNT ? op_names[op].name : "?";
}

static const char *const param_names[ODBC_LEADER__P_COUNT] = {
    "ns",
    "id",
    "term",
    "ttl_ms",
    "cand_ttl_ms",
    "version",
    "to",
    "wait_ms",
    "job",
    "fire_ms",
    "status",
    "retention_ms",
    "seen_term",
    "seen_expires_ms",
    "inc",
    "seq",
    "shards",
    "take",
    "release",
    "dead",
    "take_mask",
    "release_mask",
    "dead_inc",
    "dead_seq",
    "election_retention_ms",
};

/* Returns the name of param as a dialect file spells it (after the ':');
 * static. */
const char *odbc_leader__param_name(enum odbc_leader__param param) {
    return (unsigned)param < ODBC_LEADER__P_COUNT ? param_names[param] : "?";
}

/* Directive words of the code lists, indexed by enum odbc_leader__errclass. */
static const char *const code_directives[6] = {
    NULL,
    "unique-violation",
    "transient",
    "connection-lost",
    "undefined-table",
    "read-only",
};

/* Every directive word allowed in the header. */
#define HEADER_WORDS 18
static const char *const header_words[HEADER_WORDS] = {
    "dialect",          "dbms",
    "schema-version",   "begin",
    "commit",           "rollback",
    "unique-violation", "transient",
    "connection-lost",  "undefined-table",
    "define",           "connect-keys",
    "query-timeout",    "wake-file",
    "read-only",        "pooled",
    "pooled-prologue",  "pooled-connect-keys",
};

#define DEFINES_MAX 16 /* @define names per file */
#define DEFINE_NAME_MAX 32

/* One "@define NAME TEXT": {NAME} in SQL expands to TEXT. */
struct define {
    char name[DEFINE_NAME_MAX + 1];
    char *text; /* owned */
    int line;
    int pooled; /* from "@pooled" (transaction pooling only) */
};

/* Parser state for one file. */
struct parser {
    const char *file;
    const char *prefix;
    long long timeout_ms;
    int pooled; /* transaction pooling: "@pooled" replaces "@define" */
    struct odbc_leader__dialect *d;
    char *err;
    size_t errlen;
    int line;                           /* current line, 1-based */
    int in_header;                      /* before the first @statement */
    int op;                             /* section being read, or -1 */
    int op_line[ODBC_LEADER__OP_COUNT]; /* line of each @statement, 0 = none */
    int begin_line, commit_line, rollback_line;
    int dialect_line, version_line, dbms_line;
    int keys_line, qt_line, wake_line, prologue_line, pooled_keys_line;
    struct odbc_leader__buf sql; /* statement being collected */
    int stmt_line;               /* its first line, 0 = none in progress */
    int quote; /* open quote: '\'', '"', '`', '*' (block comment) or 0 */
    int nparams;
    unsigned char params[ODBC_LEADER__MAX_PARAMS];
    struct define defines[DEFINES_MAX];
    int ndefines;
    int expanding; /* inside a define's text: no nested {NAME} */
    int step;      /* "@step N" in force in the upgrade section, 0 none */
};

/* Writes "FILE:LINE: reason" into the parser's err. Returns
 * ODBC_LEADER_EDIALECT. */
static int fail(const struct parser *p, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(const struct parser *p, int line, const char *fmt, ...) {
    char reason[REASON_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    odbc_leader__errf(p->err, p->errlen, "%s:%d: %s", p->file,
                      line > 0 ? line : 1, reason);
    return ODBC_LEADER_EDIALECT;
}

/* Reports an allocation failure. Returns ODBC_LEADER_ENOMEM. */
static int nomem(const struct parser *p) {
    odbc_leader__errf(p->err, p->errlen, "%s: out of memory", p->file);
    return ODBC_LEADER_ENOMEM;
}

/* 1 when s (n bytes) is a dialect name: [a-z0-9_-]+, else 0. */
static int valid_dialect_name(const char *s, size_t n) {
    size_t i;

    if (n == 0)
        return 0;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(islower(c) || isdigit(c) || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

/* Index of the n-byte word s in names[count], or -1. */
static int lookup(const char *const *names, int count, const char *s,
                  size_t n) {
    int i;

    for (i = 0; i < count; i++) {
        if (names[i] && strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
            return i;
    }
    return -1;
}

/* The text between leading and trailing blanks of s[0..n): sets *start and
 * returns its length. */
static size_t trim(const char *s, size_t n, const char **start) {
    while (n > 0 && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    *start = s;
    return n;
}

/* ---- lists in messages ---- */

#define LIST_MAX 384 /* bytes of one list of names in a message */

/* Appends item i of count to the list in buf (n bytes, NUL-terminated):
 * ", " before it, or " CONJ " before the last, then pre and name. */
static void list_add(char *buf, size_t n, size_t i, size_t count,
                     const char *pre, const char *name, const char *conj) {
    size_t len = strlen(buf);
    char sep[16] = "";

    if (i > 0 && i + 1 == count)
        snprintf(sep, sizeof sep, " %s ", conj);
    else if (i > 0)
        snprintf(sep, sizeof sep, ", ");
    snprintf(buf + len, n - len, "%s%s%s", sep, pre, name);
}

/* Writes the count names, each after pre, into buf as "a, b or c" (conj
 * "or"). Returns buf. */
static const char *name_list(char *buf, size_t n, const char *const *names,
                             size_t count, const char *pre, const char *conj) {
    buf[0] = '\0';
    for (size_t i = 0; i < count; i++)
        list_add(buf, n, i, count, pre, names[i], conj);
    return buf;
}

/* Picks operations for a list: returns 1 when op belongs to it in a file
 * of schema version `version`. */
typedef int (*op_pick)(int op, int version);

/* 1 when a file of schema version `version` may hold op. */
static int op_allowed(int op, int version) {
    return !(op_names[op].flags & OPF_V2) || version >= 2;
}

/* op_pick: every operation. */
static int pick_any(int op, int version) {
    (void)op;
    (void)version;
    return 1;
}

/* op_pick: the operations a file of this version must have. */
static int pick_required(int op, int version) {
    return op_allowed(op, version) && !(op_names[op].flags & OPF_OPTIONAL);
}

/* op_pick: the operations a file of this version may leave out. */
static int pick_optional(int op, int version) {
    return op_allowed(op, version) && (op_names[op].flags & OPF_OPTIONAL);
}

/* op_pick: the operations that need schema version 2. */
static int pick_v2(int op, int version) {
    (void)version;
    return (op_names[op].flags & OPF_V2) != 0;
}

/* op_pick: the follower wake-up's statements that go together. */
static int pick_wakeup_core(int op, int version) {
    (void)version;
    return (op_names[op].flags & OPF_WAKEUP_CORE) != 0;
}

/* op_pick: the follower wake-up's optional statements. */
static int pick_wakeup_extra(int op, int version) {
    (void)version;
    return (op_names[op].flags & (OPF_WAKEUP | OPF_WAKEUP_CORE)) == OPF_WAKEUP;
}

/* Writes the names of the operations pick selects (for a file of schema
 * version `version`) into buf as "a, b and c" (conj "and"). Returns
 * buf. */
static const char *op_list(char *buf, size_t n, op_pick pick, int version,
                           const char *conj) {
    size_t count = 0, i = 0;

    buf[0] = '\0';
    for (int op = 0; op < ODBC_LEADER__OP_COUNT; op++)
        count += pick(op, version) != 0;
    for (int op = 0; op < ODBC_LEADER__OP_COUNT; op++) {
        if (pick(op, version))
            list_add(buf, n, i++, count, "", op_names[op].name, conj);
    }
    return buf;
}

/* Index of the operation named s[0..n), or -1. */
static int lookup_op(const char *s, size_t n) {
    for (int op = 0; op < ODBC_LEADER__OP_COUNT; op++) {
        if (strlen(op_names[op].name) == n &&
            memcmp(op_names[op].name, s, n) == 0)
            return op;
    }
    return -1;
}

/* ---- error codes ---- */

/* Parses one code pattern (23505, 08*, HY000:19, *:1062) of n bytes into
 * *c. Returns 0, or -1 when malformed. */
static int parse_code(const char *s, size_t n, struct odbc_leader__code *c) {
    const char *colon = memchr(s, ':', n);
    size_t sl = colon ? (size_t)(colon - s) : n;
    char num[24];
    char *end;
    size_t i;

    memset(c, 0, sizeof *c);
    if (sl == 0)
        return -1;
    if (s[sl - 1] == '*') {
        c->state_len = (int)(sl - 1);
        if (sl - 1 > 4)
            return -1;
    } else {
        c->state_len = (int)sl;
        if (sl != 5)
            return -1;
    }
    for (i = 0; i < (size_t)c->state_len; i++) {
        if (!isalnum((unsigned char)s[i]))
            return -1;
        c->state[i] = (char)toupper((unsigned char)s[i]);
    }
    if (!colon)
        return c->state_len > 0 ? 0 : -1; /* a bare "*" matches everything */
    n -= sl + 1;
    if (n == 0 || n >= sizeof num)
        return -1;
    memcpy(num, colon + 1, n);
    num[n] = '\0';
    if (!(isdigit((unsigned char)num[0]) || num[0] == '-'))
        return -1;
    errno = 0;
    c->native = strtol(num, &end, 10);
    if (errno || *end || end == num)
        return -1;
    c->has_native = 1;
    return 0;
}

/* Appends the space-separated codes in args to d->codes[cls]. Returns 0
 * or an error code with the message set. */
static int parse_codes(struct parser *p, int cls, const char *args, size_t n) {
    struct odbc_leader__code_list *l = &p->d->codes[cls];
    struct odbc_leader__code code, *v;
    size_t i = 0, start;

    if (n == 0)
        return fail(p, p->line, "@%s needs at least one error code",
                    code_directives[cls]);
    while (i < n) {
        while (i < n && isspace((unsigned char)args[i]))
            i++;
        start = i;
        while (i < n && !isspace((unsigned char)args[i]))
            i++;
        if (i == start)
            break;
        if (parse_code(args + start, i - start, &code) != 0)
            return fail(p, p->line,
                        "bad error code \"%.*s\" in @%s; expected a "
                        "SQLSTATE (23505), a prefix (08*), SQLSTATE:native "
                        "(HY000:19) or *:native (*:1062)",
                        (int)(i - start), args + start, code_directives[cls]);
        v = realloc(l->v, (l->n + 1) * sizeof *v);
        if (!v)
            return nomem(p);
        l->v = v;
        l->v[l->n++] = code;
    }
    return 0;
}

/* 1 when pattern c matches the SQLSTATE st and native code, else 0. */
static int code_matches(const struct odbc_leader__code *c, const char *st,
                        long native) {
    if (c->state_len > 0 && strncasecmp(st, c->state, c->state_len) != 0)
        return 0;
    return !c->has_native || c->native == native;
}

/* See dialect.h: class 08 first, then the lists in the order UNIQUE,
 * TRANSIENT, CONNLOST, UNDEFINED_TABLE, READONLY, then HYT00/HYT01 as
 * TRANSIENT. d may be NULL (fixed rules only); sqlstate may be NULL. */
int odbc_leader__classify(const struct odbc_leader__dialect *d,
                          const char *sqlstate, long native) {
    static const int order[] = {
        ODBC_LEADER__ERR_UNIQUE,   ODBC_LEADER__ERR_TRANSIENT,
        ODBC_LEADER__ERR_CONNLOST, ODBC_LEADER__ERR_UNDEFINED_TABLE,
        ODBC_LEADER__ERR_READONLY,
    };
    const char *st = sqlstate ? sqlstate : "";
    size_t i, j;

    if (st[0] == '0' && st[1] == '8')
        return ODBC_LEADER__ERR_CONNLOST;
    for (i = 0; d && i < sizeof order / sizeof order[0]; i++) {
        const struct odbc_leader__code_list *l = &d->codes[order[i]];
        for (j = 0; j < l->n; j++) {
            if (code_matches(&l->v[j], st, native))
                return order[i];
        }
    }
    if (strcmp(st, "HYT00") == 0 || strcmp(st, "HYT01") == 0)
        return ODBC_LEADER__ERR_TRANSIENT;
    return ODBC_LEADER__ERR_OTHER;
}

/* ---- header directives ---- */

/* Stores a copy of the n-byte text s in *dst, once. Returns 0 or an error
 * code with the message set. */
static int set_text(struct parser *p, const char *word, int *seen_line,
                    char **dst, const char *s, size_t n) {
    if (*seen_line)
        return fail(p, p->line, "duplicate @%s (first at line %d)", word,
                    *seen_line);
    if (n == 0)
        return fail(p, p->line, "@%s needs a value", word);
    *dst = odbc_leader__strndup(s, n);
    if (!*dst)
        return nomem(p);
    *seen_line = p->line;
    return 0;
}

/* Handles @begin, @commit and @rollback: the SQL text, without a trailing
 * ';'. Returns 0 or an error code with the message set. */
static int set_tx(struct parser *p, const char *word, int *seen_line,
                  char **dst, const char *s, size_t n) {
    if (n > 0 && s[n - 1] == ';')
        n = trim(s, n - 1, &s);
    return set_text(p, word, seen_line, dst, s, n);
}

/* Handles @schema-version N. Returns 0 or an error code. */
static int set_version(struct parser *p, const char *s, size_t n) {
    long v = 0;
    size_t i;

    if (p->version_line)
        return fail(p, p->line, "duplicate @schema-version (first at line %d)",
                    p->version_line);
    for (i = 0; i < n && v <= INT_MAX; i++) {
        if (!isdigit((unsigned char)s[i]))
            break;
        v = v * 10 + (s[i] - '0');
    }
    if (n == 0 || i != n || v < 1 || v > INT_MAX)
        return fail(p, p->line,
                    "bad @schema-version \"%.*s\"; expected a positive "
                    "integer",
                    (int)n, s);
    p->d->schema_version = (int)v;
    p->version_line = p->line;
    return 0;
}

/* Handles @dialect NAME. Returns 0 or an error code. */
static int set_name(struct parser *p, const char *s, size_t n) {
    if (n > 0 && !valid_dialect_name(s, n))
        return fail(p, p->line,
                    "bad @dialect name \"%.*s\"; expected [a-z0-9_-]+", (int)n,
                    s);
    return set_text(p, "dialect", &p->dialect_line, &p->d->name, s, n);
}

/* Checks what the header must hold once it ends. Returns 0 or an error. */
static int end_header(struct parser *p) {
    struct odbc_leader__dialect *d = p->d;

    p->in_header = 0;
    if (!d->name)
        return fail(p, p->line,
                    "missing @dialect NAME before the first @statement");
    if (!d->schema_version)
        return fail(p, p->line,
                    "missing @schema-version N before the first @statement");
    if (d->begin && (!d->commit || !d->rollback))
        return fail(p, p->begin_line,
                    "@begin without %s; @begin, @commit and @rollback go "
                    "together",
                    !d->commit ? "@commit" : "@rollback");
    if (!d->begin && (d->commit || d->rollback))
        return fail(p, d->commit ? p->commit_line : p->rollback_line,
                    "@%s without @begin; @begin, @commit and @rollback go "
                    "together",
                    d->commit ? "commit" : "rollback");
    return 0;
}

/* Returns the define named s[0..n) from "@define" (pooled 0) or
 * "@pooled" (pooled 1), or NULL. Borrowed from p. */
static const struct define *find_define(const struct parser *p, const char *s,
                                        size_t n, int pooled) {
    for (int i = 0; i < p->ndefines; i++)
        if (p->defines[i].pooled == pooled && strlen(p->defines[i].name) == n &&
            memcmp(p->defines[i].name, s, n) == 0)
            return &p->defines[i];
    return NULL;
}

/* Returns the text in force for {s[0..n)}: under transaction pooling a
 * "@pooled" text first, else the "@define". NULL when neither. */
static const struct define *define_in_force(const struct parser *p,
                                            const char *s, size_t n) {
    const struct define *def = p->pooled ? find_define(p, s, n, 1) : NULL;

    return def != NULL ? def : find_define(p, s, n, 0);
}

/* Handles "@define NAME TEXT" (pooled 0) and "@pooled NAME TEXT" (pooled
 * 1): NAME is [a-z_][a-z0-9_]*, not a built-in placeholder, defined once
 * by each. Under transaction pooling a @pooled text replaces the @define
 * of the same name; otherwise @pooled lines are only checked. Returns 0
 * or an error code. */
static int add_define(struct parser *p, const char *s, size_t n, int pooled) {
    const char *word = pooled ? "@pooled" : "@define";
    struct define *def;
    const struct define *old;
    const char *text;
    size_t wn = 0, tn;

    while (wn < n && (islower((unsigned char)s[wn]) || s[wn] == '_' ||
                      (wn > 0 && isdigit((unsigned char)s[wn]))))
        wn++;
    tn = trim(s + wn, n - wn, &text);
    if (wn == 0 || wn > DEFINE_NAME_MAX ||
        (wn < n && !isspace((unsigned char)s[wn])))
        return fail(p, p->line,
                    "bad %s name; expected %s NAME TEXT with NAME "
                    "of at most %d characters [a-z0-9_]",
                    word, word, DEFINE_NAME_MAX);
    if (tn == 0)
        return fail(p, p->line, "%s %.*s needs a text", word, (int)wn, s);
    if ((wn == 6 && memcmp(s, "prefix", 6) == 0) ||
        (wn == 10 && memcmp(s, "timeout_ms", 10) == 0) ||
        (wn == 15 && memcmp(s, "timeout_half_ms", 15) == 0))
        return fail(p, p->line, "%s %.*s: the name is built in", word, (int)wn,
                    s);
    old = find_define(p, s, wn, pooled);
    if (old != NULL)
        return fail(p, p->line, "duplicate %s %.*s (first at line %d)", word,
                    (int)wn, s, old->line);
    if (p->ndefines == DEFINES_MAX)
        return fail(p, p->line, "more than %d @define lines", DEFINES_MAX);
    def = &p->defines[p->ndefines++];
    def->text = odbc_leader__strndup(text, tn);
    if (def->text == NULL)
        return nomem(p);
    memcpy(def->name, s, wn);
    def->name[wn] = '\0';
    def->line = p->line;
    def->pooled = pooled;
    return 0;
}

/* Appends to b the n bytes of s with {timeout_ms} and {timeout_half_ms}
 * (half the statement timeout, rounded up) expanded. Returns 0 or an
 * error code with the message set. */
static int expand_timeouts(struct parser *p, struct odbc_leader__buf *b,
                           const char *s, size_t n) {
    static const char full[] = "{timeout_ms}", half[] = "{timeout_half_ms}";
    char num[32];

    for (size_t i = 0; i < n;) {
        const char *add = s + i;
        size_t len = 1;

        if (s[i] == '{' && n - i >= sizeof(full) - 1 &&
            memcmp(s + i, full, sizeof(full) - 1) == 0) {
            snprintf(num, sizeof num, "%lld", p->timeout_ms);
            add = num;
            len = strlen(num);
            i += sizeof(full) - 1;
        } else if (s[i] == '{' && n - i >= sizeof(half) - 1 &&
                   memcmp(s + i, half, sizeof(half) - 1) == 0) {
            snprintf(num, sizeof num, "%lld", (p->timeout_ms + 1) / 2);
            add = num;
            len = strlen(num);
            i += sizeof(half) - 1;
        } else if (s[i] == '{' || s[i] == '}') {
            return fail(p, p->line,
                        "@connect-keys: only {timeout_ms} and "
                        "{timeout_half_ms} may stand in braces");
        } else {
            i++;
        }
        if (odbc_leader__buf_add(b, add, len))
            return nomem(p);
    }
    return 0;
}

/* Handles "@connect-keys KEY=VALUE;...": keys put in front of the
 * connection string (the driver reads the first of a repeated key), with
 * the timeouts expanded. Returns 0 or an error code with the message
 * set. */
static int set_connect_keys(struct parser *p, const char *s, size_t n) {
    struct odbc_leader__buf b = {0};
    int rc;

    if (p->keys_line)
        return fail(p, p->line, "duplicate @connect-keys (first at line %d)",
                    p->keys_line);
    if (n == 0 || memchr(s, '=', n) == NULL)
        return fail(p, p->line,
                    "@connect-keys needs KEY=VALUE pairs separated by ';'");
    rc = expand_timeouts(p, &b, s, n);
    if (rc != 0) {
        free(b.p);
        return rc;
    }
    p->d->connect_keys = b.p;
    p->keys_line = p->line;
    return 0;
}

/* Handles "@pooled-prologue SQL" (keys 0) and "@pooled-connect-keys
 * KEY=VALUE;..." (keys 1): kept, with the timeouts expanded, for
 * transaction pooling. Returns 0 or an error code with the message set. */
static int set_pooled(struct parser *p, int keys, const char *s, size_t n) {
    struct odbc_leader__buf b = {0};
    int *line = keys ? &p->pooled_keys_line : &p->prologue_line;
    const char *word = keys ? "@pooled-connect-keys" : "@pooled-prologue";
    int rc;

    if (*line)
        return fail(p, p->line, "duplicate %s (first at line %d)", word, *line);
    if (n == 0 || (keys && memchr(s, '=', n) == NULL))
        return fail(p, p->line, "%s needs %s", word,
                    keys ? "KEY=VALUE pairs separated by ';'" : "a statement");
    rc = expand_timeouts(p, &b, s, n);
    if (rc != 0) {
        free(b.p);
        return rc;
    }
    *line = p->line;
    if (keys)
        p->d->pooled_keys = b.p;
    else
        p->d->pooled_prologue = b.p;
    return 0;
}

/* Handles "@query-timeout on|off": whether statements get the ODBC query
 * timeout (off when the dialect bounds them in the session and the
 * driver's own handling would override that). Returns 0 or an error code
 * with the message set. */
static int set_query_timeout(struct parser *p, const char *s, size_t n) {
    if (p->qt_line)
        return fail(p, p->line, "duplicate @query-timeout (first at line %d)",
                    p->qt_line);
    p->qt_line = p->line;
    if (n == 2 && memcmp(s, "on", 2) == 0) {
        p->d->no_query_timeout = 0;
        return 0;
    }
    if (n == 3 && memcmp(s, "off", 3) == 0) {
        p->d->no_query_timeout = 1;
        return 0;
    }
    return fail(p, p->line, "@query-timeout takes on or off, not \"%.*s\"",
                (int)n, s);
}

/* Handles "@wake-file" (no arguments): the follower wake-up through a
 * lock file beside the database file, for databases that are files on
 * one host. Returns 0 or an error code with the message set. */
static int set_wake_file(struct parser *p, size_t an) {
    if (p->wake_line)
        return fail(p, p->line, "duplicate @wake-file (first at line %d)",
                    p->wake_line);
    if (an != 0)
        return fail(p, p->line, "@wake-file takes no arguments");
    p->wake_line = p->line;
    p->d->wake_file = 1;
    return 0;
}

/* Handles one header directive word (n bytes) with its trimmed args.
 * Returns 0 or an error code with the message set. */
static int header_directive(struct parser *p, const char *w, size_t wn,
                            const char *args, size_t an) {
    struct odbc_leader__dialect *d = p->d;
    int cls = lookup(code_directives, 6, w, wn);

    if (cls > 0)
        return parse_codes(p, cls, args, an);
    if (wn == 7 && memcmp(w, "dialect", 7) == 0)
        return set_name(p, args, an);
    if (wn == 4 && memcmp(w, "dbms", 4) == 0)
        return set_text(p, "dbms", &p->dbms_line, &d->dbms, args, an);
    if (wn == 14 && memcmp(w, "schema-version", 14) == 0)
        return set_version(p, args, an);
    if (wn == 5 && memcmp(w, "begin", 5) == 0)
        return set_tx(p, "begin", &p->begin_line, &d->begin, args, an);
    if (wn == 6 && memcmp(w, "commit", 6) == 0)
        return set_tx(p, "commit", &p->commit_line, &d->commit, args, an);
    if (wn == 8 && memcmp(w, "rollback", 8) == 0)
        return set_tx(p, "rollback", &p->rollback_line, &d->rollback, args, an);
    if (wn == 6 && memcmp(w, "define", 6) == 0)
        return add_define(p, args, an, 0);
    if (wn == 6 && memcmp(w, "pooled", 6) == 0)
        return add_define(p, args, an, 1);
    if (wn == 15 && memcmp(w, "pooled-prologue", 15) == 0)
        return set_pooled(p, 0, args, an);
    if (wn == 19 && memcmp(w, "pooled-connect-keys", 19) == 0)
        return set_pooled(p, 1, args, an);
    if (wn == 12 && memcmp(w, "connect-keys", 12) == 0)
        return set_connect_keys(p, args, an);
    if (wn == 13 && memcmp(w, "query-timeout", 13) == 0)
        return set_query_timeout(p, args, an);
    if (wn == 9 && memcmp(w, "wake-file", 9) == 0)
        return set_wake_file(p, an);
    return fail(p, p->line, "unknown directive @%.*s", (int)wn, w);
}

/* ---- statements ---- */

/* Moves the collected statement into the current section. Returns 0 or an
 * error code with the message set. */
static int finish_statement(struct parser *p) {
    struct odbc_leader__stmt_list *l = &p->d->ops[p->op];
    struct odbc_leader__stmt *v, *st;
    const char *s;
    size_t n = trim(p->sql.p ? p->sql.p : "", p->sql.len, &s);

    if (n == 0)
        return fail(p, p->stmt_line,
                    "empty statement; expected SQL before ';'");
    if (l->n == ODBC_LEADER__MAX_STMTS)
        return fail(p, p->stmt_line,
                    "more than %d statements in @statement %s; expected at "
                    "most %d",
                    ODBC_LEADER__MAX_STMTS, odbc_leader__op_name(p->op),
                    ODBC_LEADER__MAX_STMTS);
    v = realloc(l->v, (l->n + 1) * sizeof *v);
    if (!v)
        return nomem(p);
    l->v = v;
    st = &l->v[l->n];
    memset(st, 0, sizeof *st);
    st->sql = odbc_leader__strndup(s, n);
    if (!st->sql)
        return nomem(p);
    st->nparams = p->nparams;
    memcpy(st->params, p->params, sizeof st->params);
    st->line = p->stmt_line;
    st->step = p->step;
    l->n++;
    p->sql.len = 0;
    p->stmt_line = 0;
    p->nparams = 0;
    return 0;
}

/* Ends the current section (if any): flushes a statement without ';' and
 * rejects an empty section. Returns 0 or an error code. */
static int end_section(struct parser *p) {
    int rc;

    if (p->op < 0)
        return 0;
    if (p->quote)
        return fail(p, p->stmt_line,
                    "unterminated %s in the statement starting here",
                    p->quote == '*' ? "/* comment" : "quoted text");
    if (p->stmt_line) {
        rc = finish_statement(p);
        if (rc)
            return rc;
    }
    if (p->d->ops[p->op].n == 0)
        return fail(p, p->op_line[p->op],
                    "empty @statement %s; expected SQL lines after it",
                    odbc_leader__op_name(p->op));
    p->op = -1;
    return 0;
}

static int scan_plain(struct parser *p, const char *s, size_t n, size_t i,
                      size_t *used, int *stop);
static int scan_quoted(struct parser *p, const char *s, size_t n, size_t i,
                       size_t *used);

/* Appends a define's text as if it stood in the SQL: parameters, quotes
 * and {prefix} work inside it, other defines do not. Returns 0 or an error
 * code. */
static int expand_define(struct parser *p, const struct define *def) {
    size_t n = strlen(def->text), i = 0, used = 0;
    int rc = 0, stop = 0;

    p->expanding = 1;
    while (rc == 0 && i < n && !stop) {
        if (p->quote)
            rc = scan_quoted(p, def->text, n, i, &used);
        else
            rc = scan_plain(p, def->text, n, i, &used, &stop);
        i += used;
    }
    p->expanding = 0;
    if (rc == 0 && (p->quote || stop))
        return fail(p, p->line,
                    "@define %s (line %d) leaves a quote or comment open",
                    def->name, def->line);
    return rc;
}

/* Handles "{word}" at s (n bytes left, s[0] == '{'): appends the value.
 * Sets *used to the bytes consumed (1 when it is not a placeholder).
 * Returns 0 or an error code. */
static int placeholder(struct parser *p, const char *s, size_t n,
                       size_t *used) {
    const struct define *def;
    char num[32];
    size_t i = 1;

    while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_'))
        i++;
    *used = 1;
    if (i == 1 || i >= n || s[i] != '}')
        return odbc_leader__buf_add(&p->sql, "{", 1) ? nomem(p) : 0;
    *used = i + 1;
    if (i - 1 == 6 && memcmp(s + 1, "prefix", 6) == 0)
        return odbc_leader__buf_add(&p->sql, p->prefix, strlen(p->prefix))
                   ? nomem(p)
                   : 0;
    if (i - 1 == 10 && memcmp(s + 1, "timeout_ms", 10) == 0) {
        snprintf(num, sizeof num, "%lld", p->timeout_ms);
        return odbc_leader__buf_add(&p->sql, num, strlen(num)) ? nomem(p) : 0;
    }
    if (i - 1 == 15 && memcmp(s + 1, "timeout_half_ms", 15) == 0) {
        snprintf(num, sizeof num, "%lld", (p->timeout_ms + 1) / 2);
        return odbc_leader__buf_add(&p->sql, num, strlen(num)) ? nomem(p) : 0;
    }
    def = p->expanding ? NULL : define_in_force(p, s + 1, i - 1);
    if (def != NULL)
        return expand_define(p, def);
    return fail(p, p->line,
                "unknown placeholder {%.*s}; expected {prefix}, "
                "{timeout_ms}, {timeout_half_ms} or a name from @define",
                (int)(i - 1), s + 1);
}

/* Handles ":name" at s (s[0] == ':', s[1] in [a-z_]): appends '?' and
 * records the parameter. Sets *used. Returns 0 or an error code. */
static int parameter(struct parser *p, const char *s, size_t n, size_t *used) {
    char list[LIST_MAX];
    size_t i = 1;
    int k;

    while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_'))
        i++;
    *used = i;
    k = lookup(param_names, ODBC_LEADER__P_COUNT, s + 1, i - 1);
    if (k < 0)
        return fail(p, p->line, "unknown parameter :%.*s; expected %s",
                    (int)(i - 1), s + 1,
                    name_list(list, sizeof list, param_names,
                              ODBC_LEADER__P_COUNT, ":", "or"));
    if (p->nparams >= ODBC_LEADER__MAX_PARAMS)
        return fail(p, p->line,
                    "more than %d parameters in one statement; expected "
                    "at most %d",
                    ODBC_LEADER__MAX_PARAMS, ODBC_LEADER__MAX_PARAMS);
    p->params[p->nparams++] = (unsigned char)k;
    return odbc_leader__buf_add(&p->sql, "?", 1) ? nomem(p) : 0;
}

/* Scans s[0..n) outside quotes: copies text, expands placeholders and
 * parameters, enters quotes. Returns the bytes consumed in *used, and
 * *stop = 1 at a "--" comment. Returns 0 or an error code. */
static int scan_plain(struct parser *p, const char *s, size_t n, size_t i,
                      size_t *used, int *stop) {
    char c = s[i];
    char next = i + 1 < n ? s[i + 1] : '\0';
    char prev = i > 0 ? s[i - 1] : '\0';

    *used = 1;
    if (c == '-' && next == '-') {
        *stop = 1;
        return 0;
    }
    if (c == '{')
        return placeholder(p, s + i, n - i, used);
    if (c == ':' && prev != ':' &&
        (islower((unsigned char)next) || next == '_'))
        return parameter(p, s + i, n - i, used);
    if (c == '\'' || c == '"' || c == '`')
        p->quote = c;
    if (c == '/' && next == '*') {
        p->quote = '*';
        *used = 2;
    }
    return odbc_leader__buf_add(&p->sql, s + i, *used) ? nomem(p) : 0;
}

/* Copies the quoted or commented text at s[i] (one byte, or "*" "/" that
 * closes a block comment), closing the quote when it ends. Sets *used.
 * Returns 0 or an error code. */
static int scan_quoted(struct parser *p, const char *s, size_t n, size_t i,
                       size_t *used) {
    int closes_block =
        p->quote == '*' && s[i] == '*' && i + 1 < n && s[i + 1] == '/';

    *used = closes_block ? 2 : 1;
    if (closes_block || (p->quote != '*' && s[i] == p->quote))
        p->quote = 0;
    return odbc_leader__buf_add(&p->sql, s + i, *used) ? nomem(p) : 0;
}

/* Appends one SQL line to the statement being collected, ending the
 * statement at a final ';'. Returns 0 or an error code. */
static int sql_line(struct parser *p, const char *s, size_t n) {
    size_t i = 0, used, line_start;
    int rc = 0, stop = 0;

    if (p->stmt_line && odbc_leader__buf_add(&p->sql, "\n", 1))
        return nomem(p);
    if (!p->stmt_line)
        p->stmt_line = p->line;
    line_start = p->sql.len;
    while (rc == 0 && i < n && !stop) {
        if (p->quote)
            rc = scan_quoted(p, s, n, i, &used);
        else
            rc = scan_plain(p, s, n, i, &used, &stop);
        i += used;
    }
    if (rc || p->quote)
        return rc;
    while (p->sql.len > line_start &&
           isspace((unsigned char)p->sql.p[p->sql.len - 1]))
        p->sql.p[--p->sql.len] = '\0';
    if (p->sql.len > line_start && p->sql.p[p->sql.len - 1] == ';') {
        p->sql.p[--p->sql.len] = '\0';
        return finish_statement(p);
    }
    return 0;
}

/* ---- lines ---- */

/* Handles "@statement OP". Returns 0 or an error code. */
static int statement_directive(struct parser *p, const char *args, size_t n) {
    char list[LIST_MAX];
    int rc = end_section(p);
    int op;

    if (rc)
        return rc;
    if (p->in_header) {
        rc = end_header(p);
        if (rc)
            return rc;
    }
    op = lookup_op(args, n);
    if (op < 0)
        return fail(
            p, p->line, "unknown operation \"%.*s\" in @statement; expected %s",
            (int)n, args, op_list(list, sizeof list, pick_any, 0, "or"));
    if (p->op_line[op])
        return fail(p, p->line, "duplicate @statement %s (first at line %d)",
                    op_names[op].name, p->op_line[op]);
    p->op = op;
    p->op_line[op] = p->line;
    p->step = 0;
    return 0;
}

/*
 * Handles "@step N" inside the upgrade section: the statements after it
 * take tables from version N - 1 to N, so they run only on tables of a
 * version below N (the statements before the first @step run always).
 * Steps grow and end at the file's @schema-version. Returns 0 or an
 * error code.
 */
static int step_directive(struct parser *p, const char *args, size_t n) {
    char *end = NULL;
    char num[16];
    long v;

    if (p->op != ODBC_LEADER__OP_UPGRADE)
        return fail(p, p->line,
                    "@step outside @statement upgrade; expected it only "
                    "between the statements of upgrade");
    if (p->stmt_line)
        return fail(p, p->line,
                    "@step inside a statement; expected it after a ';'");
    snprintf(num, sizeof num, "%.*s", (int)(n < sizeof num ? n : 0), args);
    v = strtol(num, &end, 10);
    if (n == 0 || n >= sizeof num || *end != '\0' || v < 2 ||
        v > p->d->schema_version || v <= p->step)
        return fail(p, p->line,
                    "bad @step \"%.*s\"; expected a version from %d to the "
                    "file's @schema-version %d, above the previous @step",
                    (int)n, args, p->step > 1 ? p->step + 1 : 2,
                    p->d->schema_version);
    p->step = (int)v;
    return 0;
}

/* Handles a directive line; s points just after '@'. Returns 0 or an
 * error code. */
static int directive(struct parser *p, const char *s, size_t n) {
    char list[LIST_MAX];
    size_t wn = 0, an;
    const char *args;
    int known;

    while (wn < n && (islower((unsigned char)s[wn]) ||
                      isdigit((unsigned char)s[wn]) || s[wn] == '-'))
        wn++;
    an = trim(s + wn, n - wn, &args);
    if (wn == 0 || (wn < n && !isspace((unsigned char)s[wn])))
        return fail(p, p->line,
                    "bad directive \"@%.*s\"; expected @word followed by a "
                    "space",
                    (int)n, s);
    if (wn == 9 && memcmp(s, "statement", 9) == 0)
        return statement_directive(p, args, an);
    if (wn == 4 && memcmp(s, "step", 4) == 0 && !p->in_header)
        return step_directive(p, args, an);
    known = lookup(header_words, HEADER_WORDS, s, wn) >= 0;
    if (known && !p->in_header)
        return fail(p, p->line,
                    "@%.*s after the first @statement; expected header "
                    "directives before all @statement sections",
                    (int)wn, s);
    if (!known)
        return fail(p, p->line,
                    "unknown directive @%.*s; expected @statement or a "
                    "header directive: %s",
                    (int)wn, s,
                    name_list(list, sizeof list, header_words, HEADER_WORDS,
                              "@", "or"));
    return header_directive(p, s, wn, args, an);
}

/* Handles one line (without its newline). Returns 0 or an error code. */
static int handle_line(struct parser *p, const char *s, size_t n) {
    const char *t;
    size_t tn;

    if (n > 0 && s[n - 1] == '\r')
        n--;
    if (p->quote)
        return sql_line(p, s, n);
    tn = trim(s, n, &t);
    if (tn == 0)
        return 0;
    if (tn >= 2 && t[0] == '-' && t[1] == '-') {
        tn = trim(t + 2, tn - 2, &t);
        if (tn > 0 && t[0] == '@')
            return directive(p, t + 1, tn - 1);
        return 0;
    }
    if (p->in_header || p->op < 0)
        return fail(p, p->line,
                    "SQL text outside a statement section; expected a "
                    "directive, a -- comment or a blank line before the "
                    "first @statement");
    return sql_line(p, s, n);
}

/* Checks that every operation the file's schema version needs has a
 * section. Returns 0 or an error code with the message naming the missing
 * operation, the required set and the optional one. */
static int check_required(struct parser *p) {
    char need[LIST_MAX], may[LIST_MAX];
    int version = p->d->schema_version;

    for (int op = 0; op < ODBC_LEADER__OP_COUNT; op++) {
        if (!pick_required(op, version) || p->op_line[op])
            continue;
        op_list(may, sizeof may, pick_optional, version, "and");
        return fail(p, p->line,
                    "missing @statement %s; a dialect file of "
                    "@schema-version %d needs %s%s%s",
                    op_names[op].name, version,
                    op_list(need, sizeof need, pick_required, version, "and"),
                    may[0] ? ", and may also have " : "", may);
    }
    return 0;
}

/* Checks that the file holds no operation its schema version does not
 * allow. Returns 0 or an error code with the message set. */
static int check_allowed(struct parser *p) {
    char list[LIST_MAX];
    int version = p->d->schema_version;

    for (int op = 0; op < ODBC_LEADER__OP_COUNT; op++) {
        if (!p->op_line[op] || op_allowed(op, version))
            continue;
        return fail(p, p->op_line[op],
                    "@statement %s needs @schema-version 2 or later (the "
                    "fire ledger's table); a file of @schema-version %d "
                    "has no %s",
                    op_names[op].name, version,
                    op_list(list, sizeof list, pick_v2, version, "or"));
    }
    return 0;
}

/* Checks the follower wake-up: once any of its statements is there, the
 * ones that go together must all be. Returns 0 or an error code with the
 * message set. */
static int check_wakeup(struct parser *p) {
    char need[LIST_MAX], may[LIST_MAX];
    int first = -1;

    for (int op = 0; op < ODBC_LEADER__OP_COUNT && first < 0; op++) {
        if ((op_names[op].flags & OPF_WAKEUP) && p->op_line[op])
            first = op;
    }
    for (int op = 0; first >= 0 && op < ODBC_LEADER__OP_COUNT; op++) {
        if (!pick_wakeup_core(op, 0) || p->op_line[op])
            continue;
        op_list(may, sizeof may, pick_wakeup_extra, 0, "and");
        return fail(p, p->op_line[first],
                    "missing @statement %s; the follower wake-up (@statement "
                    "%s here) needs %s%s%s",
                    op_names[op].name, op_names[first].name,
                    op_list(need, sizeof need, pick_wakeup_core, 0, "and"),
                    may[0] ? ", and may also have " : "", may);
    }
    return 0;
}

/* Checks a set of statements that go together (the OPF_* flag): once any
 * of them is there, all must be. what names the feature and need lists
 * its statements. Returns 0 or an error code with the message set. */
static int check_together(struct parser *p, unsigned flag, const char *what,
                          const char *need) {
    int first = -1;

    for (int op = 0; op < ODBC_LEADER__OP_COUNT && first < 0; op++) {
        if ((op_names[op].flags & flag) && p->op_line[op])
            first = op;
    }
    for (int op = 0; first >= 0 && op < ODBC_LEADER__OP_COUNT; op++) {
        if (!(op_names[op].flags & flag) || p->op_line[op])
            continue;
        return fail(p, p->op_line[first],
                    "missing @statement %s; %s (@statement %s here) need %s",
                    op_names[op].name, what, op_names[first].name, need);
    }
    return 0;
}

int odbc_leader__dialect_uses(const struct odbc_leader__dialect *d, int op,
                              int k) {
    const struct odbc_leader__stmt_list *l = &d->ops[op];

    for (size_t i = 0; i < l->n; i++) {
        for (int j = 0; j < l->v[i].nparams; j++) {
            if (l->v[i].params[j] == k)
                return 1;
        }
    }
    return 0;
}

/* Checks that attempt takes a held lease only as the caller watched it:
 * its statements must use :seen_term and :seen_expires_ms (docs/
 * protocol.md, "Takeover: the watch"; a dialect written before the watch
 * would take a lease on database time alone). Returns 0 or an error code
 * with the message set. */
static int check_watch(struct parser *p) {
    static const int need[] = {ODBC_LEADER__P_SEEN_TERM,
                               ODBC_LEADER__P_SEEN_EXPIRES_MS};

    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        if (odbc_leader__dialect_uses(p->d, ODBC_LEADER__OP_ATTEMPT, need[i]))
            continue;
        return fail(p, p->op_line[ODBC_LEADER__OP_ATTEMPT],
                    "@statement attempt does not use :%s; attempt must take "
                    "a held lease only when it expired and its term and "
                    "expires_at_ms equal :seen_term and :seen_expires_ms, "
                    "the row the candidate watched for one TTL "
                    "(docs/dialects.md, \"attempt\")",
                    param_names[need[i]]);
    }
    return 0;
}

/* Checks session_id: one statement without parameters, since the pooler
 * check runs it on a second connection of its own too (db_pooler.c), where
 * nothing is bound. Returns 0 or an error code with the message set. */
static int check_session_id(struct parser *p) {
    const struct odbc_leader__stmt_list *l =
        &p->d->ops[ODBC_LEADER__OP_SESSION_ID];

    if (l->n > 1)
        return fail(p, l->v[1].line,
                    "@statement session_id holds %zu statements; it must be "
                    "one SELECT of one row and one column",
                    l->n);
    if (l->n == 1 && l->v[0].nparams > 0)
        return fail(p, l->v[0].line,
                    "@statement session_id uses :%s; it takes no parameters",
                    param_names[l->v[0].params[0]]);
    return 0;
}

/* Runs the parser over text and the end-of-file checks. Returns 0 or an
 * error code. */
static int parse_text(struct parser *p, const char *text) {
    const char *s = text, *nl;
    int rc;

    while (*s) {
        nl = strchr(s, '\n');
        p->line++;
        rc = handle_line(p, s, nl ? (size_t)(nl - s) : strlen(s));
        if (rc)
            return rc;
        if (!nl)
            break;
        s = nl + 1;
    }
    rc = end_section(p);
    if (rc == 0 && p->in_header)
        rc = end_header(p);
    if (rc == 0)
        rc = check_required(p);
    if (rc == 0)
        rc = check_allowed(p);
    if (rc == 0)
        rc = check_wakeup(p);
    if (rc == 0)
        rc = check_watch(p);
    if (rc == 0)
        rc = check_session_id(p);
    if (rc == 0)
        rc = check_together(p, OPF_GROUP, "sharded groups",
                            "group_init, group_tick, group_leave and "
                            "group_shards");
    if (rc == 0)
        rc = check_together(p, OPF_ELECTION, "the election log",
                            "elections and election_gc");
    return rc;
}

/* See dialect.h. Owns nothing on return: *out goes to the caller; text,
 * filename and vars are only borrowed during the call. */
int odbc_leader__dialect_parse(const char *text, const char *filename,
                               const struct odbc_leader__dialect_vars *vars,
                               struct odbc_leader__dialect **out, char *err,
                               size_t errlen) {
    struct parser p;
    int rc;

    memset(&p, 0, sizeof p);
    p.file = filename ? filename : "<dialect>";
    p.prefix = vars && vars->prefix ? vars->prefix : "";
    p.timeout_ms = vars ? (long long)vars->timeout_ms : 0;
    p.pooled = vars ? vars->pooled : 0;
    p.err = err;
    p.errlen = errlen;
    p.in_header = 1;
    p.op = -1;
    *out = NULL;
    p.d = calloc(1, sizeof *p.d);
    if (!p.d)
        return nomem(&p);
    rc = parse_text(&p, text ? text : "");
    free(p.sql.p);
    for (int i = 0; i < p.ndefines; i++)
        free(p.defines[i].text);
    if (rc) {
        odbc_leader__dialect_free(p.d);
        return rc;
    }
    *out = p.d;
    return 0;
}

/* Frees d and everything it owns; NULL is a no-op. */
void odbc_leader__dialect_free(struct odbc_leader__dialect *d) {
    size_t i, j;

    if (!d)
        return;
    free(d->name);
    free(d->dbms);
    free(d->begin);
    free(d->commit);
    free(d->rollback);
    free(d->connect_keys);
    free(d->pooled_prologue);
    free(d->pooled_keys);
    for (i = 0; i < sizeof d->codes / sizeof d->codes[0]; i++)
        free(d->codes[i].v);
    for (i = 0; i < ODBC_LEADER__OP_COUNT; i++) {
        for (j = 0; j < d->ops[i].n; j++)
            free(d->ops[i].v[j].sql);
        free(d->ops[i].v);
    }
    free(d);
}

/* ---- loading ---- */

/* Writes the text of errno value e into buf. Returns buf or a constant. */
static const char *errno_text(int e, char *buf, size_t n) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
    return strerror_r(e, buf, n);
#else
    if (strerror_r(e, buf, n) != 0)
        snprintf(buf, n, "error %d", e);
    return buf;
#endif
}

/* Reads the whole file at path into *text (malloc'd, NUL-terminated).
 * Returns 0, -1 when out of memory, or a positive errno value (EFBIG when
 * larger than DIALECT_FILE_MAX, EILSEQ when it holds a NUL byte). */
static int read_file(const char *path, char **text) {
    struct odbc_leader__buf b = {NULL, 0, 0};
    char chunk[4096];
    size_t got;
    int rc = 0;
    FILE *f = fopen(path, "rb");

    *text = NULL;
    if (!f)
        return errno ? errno : EIO;
    do {
        got = fread(chunk, 1, sizeof chunk, f);
        if (b.len + got > DIALECT_FILE_MAX) {
            rc = EFBIG;
            goto out;
        }
        if (got > 0 && odbc_leader__buf_add(&b, chunk, got)) {
            rc = -1;
            goto out;
        }
    } while (got == sizeof chunk);
    if (ferror(f)) {
        rc = errno ? errno : EIO;
        goto out;
    }
    if (!b.p && odbc_leader__buf_add(&b, "", 0)) {
        rc = -1;
        goto out;
    }
    if (strlen(b.p) != b.len)
        rc = EILSEQ;
out:
    fclose(f);
    if (rc)
        free(b.p);
    else
        *text = b.p;
    return rc;
}

/* Parses the file at path. Returns as odbc_leader__dialect_parse; a read
 * failure gives ODBC_LEADER_EDIALECT naming the path, and sets *errnum
 * (when not NULL) to the errno value. */
static int load_file(const char *path,
                     const struct odbc_leader__dialect_vars *vars,
                     struct odbc_leader__dialect **out, char *err,
                     size_t errlen, int *errnum) {
    char msg[128];
    char *text;
    int rc = read_file(path, &text);

    if (errnum)
        *errnum = rc > 0 ? rc : 0;
    if (rc < 0) {
        odbc_leader__errf(err, errlen, "%s: out of memory", path);
        return ODBC_LEADER_ENOMEM;
    }
    if (rc > 0) {
        odbc_leader__errf(
            err, errlen, "LeaderDialect: cannot read dialect file %s: %s", path,
            rc == EILSEQ ? "it contains a NUL byte"
                         : errno_text(rc, msg, sizeof msg));
        return ODBC_LEADER_EDIALECT;
    }
    rc = odbc_leader__dialect_parse(text, path, vars, out, err, errlen);
    free(text);
    return rc;
}

/* Parses the built-in dialect name (known to exist). */
static int load_builtin(const char *name,
                        const struct odbc_leader__dialect_vars *vars,
                        struct odbc_leader__dialect **out, char *err,
                        size_t errlen) {
    char file[64];

    snprintf(file, sizeof file, "%s.sql", name);
    return odbc_leader__dialect_parse(odbc_leader__builtin_dialect(name), file,
                                      vars, out, err, errlen);
}

/* Writes the built-in names, comma-separated, into buf. */
static void builtin_list(char *buf, size_t n) {
    const char *name;
    size_t i, len = 0;

    buf[0] = '\0';
    for (i = 0; odbc_leader__builtin_dialect_name(i); i++) {
        name = odbc_leader__builtin_dialect_name(i);
        snprintf(buf + len, n - len, "%s%s", i ? ", " : "", name);
        len += strlen(buf + len);
    }
}

/* Picks the built-in whose @dbms is the longest case-insensitive prefix of
 * dbms_name. Returns as odbc_leader__dialect_parse. */
static int load_auto(const char *dbms_name,
                     const struct odbc_leader__dialect_vars *vars,
                     struct odbc_leader__dialect **out, char *err,
                     size_t errlen) {
    struct odbc_leader__dialect *best = NULL, *d = NULL;
    const char *name;
    char list[256];
    size_t i;
    int rc = 0;

    for (i = 0; dbms_name && odbc_leader__builtin_dialect_name(i); i++) {
        name = odbc_leader__builtin_dialect_name(i);
        rc = load_builtin(name, vars, &d, err, errlen);
        if (rc)
            goto out;
        if (d->dbms && strncasecmp(dbms_name, d->dbms, strlen(d->dbms)) == 0 &&
            (!best || strlen(d->dbms) > strlen(best->dbms))) {
            odbc_leader__dialect_free(best);
            best = d;
        } else {
            odbc_leader__dialect_free(d);
        }
        d = NULL;
    }
    if (!best && (!dbms_name || !*dbms_name)) {
        builtin_list(list, sizeof list);
        odbc_leader__errf(err, errlen,
                          "LeaderDialect=auto: the driver reports no DBMS "
                          "name (SQL_DBMS_NAME); set LeaderDialect to one of "
                          "%s or to the path of a dialect file",
                          list);
        rc = ODBC_LEADER_EDIALECT;
    } else if (!best) {
        builtin_list(list, sizeof list);
        odbc_leader__errf(err, errlen,
                          "LeaderDialect=auto: no built-in dialect for the "
                          "DBMS the driver reports (SQL_DBMS_NAME \"%s\"); "
                          "set LeaderDialect to one of %s or to the path of "
                          "a dialect file",
                          dbms_name ? dbms_name : "", list);
        rc = ODBC_LEADER_EDIALECT;
    }
out:
    if (rc)
        odbc_leader__dialect_free(best);
    else
        *out = best;
    return rc;
}

/* Loads a dialect by name: a built-in, else PKGDATADIR/sql/NAME.sql.
 * Returns as odbc_leader__dialect_parse. */
static int load_named(const char *name,
                      const struct odbc_leader__dialect_vars *vars,
                      struct odbc_leader__dialect **out, char *err,
                      size_t errlen) {
    char list[256];
    char *path = NULL;
    size_t n = strlen(PKGDATADIR) + strlen(name) + 16;
    int rc, errnum = 0;

    if (!valid_dialect_name(name, strlen(name))) {
        odbc_leader__errf(err, errlen,
                          "LeaderDialect=%s: expected auto, a dialect name "
                          "([a-z0-9_-]+) or a path (containing '/' or "
                          "ending in .sql)",
                          name);
        return ODBC_LEADER_EDIALECT;
    }
    if (odbc_leader__builtin_dialect(name))
        return load_builtin(name, vars, out, err, errlen);
    path = malloc(n);
    if (!path) {
        odbc_leader__errf(err, errlen, "out of memory");
        return ODBC_LEADER_ENOMEM;
    }
    snprintf(path, n, "%s/sql/%s.sql", PKGDATADIR, name);
    rc = load_file(path, vars, out, err, errlen, &errnum);
    if (rc == ODBC_LEADER_EDIALECT && errnum == ENOENT) {
        builtin_list(list, sizeof list);
        odbc_leader__errf(err, errlen,
                          "LeaderDialect=%s: unknown dialect; expected auto, "
                          "a built-in (%s), a file in %s/sql or a path to a "
                          "dialect file",
                          name, list, PKGDATADIR);
    }
    free(path);
    return rc;
}

/* See dialect.h. spec, dbms_name and vars are borrowed; *out goes to the
 * caller. An empty or NULL spec means "auto". */
int odbc_leader__dialect_load(const char *spec, const char *dbms_name,
                              const struct odbc_leader__dialect_vars *vars,
                              struct odbc_leader__dialect **out, char *err,
                              size_t errlen) {
    size_t n = spec ? strlen(spec) : 0;

    *out = NULL;
    if (n == 0 || strcmp(spec, "auto") == 0)
        return load_auto(dbms_name, vars, out, err, errlen);
    if (strchr(spec, '/') || (n > 4 && strcmp(spec + n - 4, ".sql") == 0))
        return load_file(spec, vars, out, err, errlen, NULL);
    return load_named(spec, vars, out, err, errlen);
}
