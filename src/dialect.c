/* SPDX-License-Identifier: MIT */
/*
 * dialect.c: reads dialect files, the SQL an engine runs for one kind of
 * database (docs/dialects.md describes the format): the vocabulary of
 * operations and parameters, the file's lines and statements, and the
 * checks at its end. The header's directives are dialect_header.c, the
 * error codes dialect_codes.c, and finding a file dialect_load.c.
 */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L /* strdup */
#endif

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "dialect.h"
#include "dialect_parser.h"
#include "log.h"

#define REASON_MAX 768 /* the longest message lists every operation */

/* What the parser asks of an operation (struct op_info's flags):
 * OPTIONAL, it may be left out; V2, only from @schema-version 2 on (the
 * fire ledger, the upgrade), and required there unless also OPTIONAL;
 * WAKEUP, one of the follower wake-up's statements; WAKEUP_CORE, needed
 * once any wake-up statement is there. */
#define OPF_OPTIONAL 1u
#define OPF_V2 2u
#define OPF_WAKEUP 4u
#define OPF_WAKEUP_CORE 8u
#define OPF_GROUP 16u     /* sharded groups: all of them or none */
#define OPF_ELECTION 32u  /* the election log: both or none */
#define OPF_LIFECYCLE 64u /* the fire lifecycle: all of them or none */
#define OPF_SCHEDULE 128u /* schedule identities: all three or none */

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
    [ODBC_LEADER__OP_TAKE] = {"take", OPF_OPTIONAL | OPF_V2 | OPF_LIFECYCLE},
    [ODBC_LEADER__OP_SKIP] = {"skip", OPF_OPTIONAL | OPF_V2 | OPF_LIFECYCLE},
    [ODBC_LEADER__OP_SWEEP] = {"sweep", OPF_OPTIONAL | OPF_V2 | OPF_LIFECYCLE},
    [ODBC_LEADER__OP_OFFERS] = {"offers",
                                OPF_OPTIONAL | OPF_V2 | OPF_LIFECYCLE},
    [ODBC_LEADER__OP_PAUSE] = {"pause", OPF_OPTIONAL | OPF_V2 | OPF_LIFECYCLE},
    [ODBC_LEADER__OP_TRIGGER] = {"trigger",
                                 OPF_OPTIONAL | OPF_V2 | OPF_LIFECYCLE},
    [ODBC_LEADER__OP_JOBS] = {"jobs", OPF_OPTIONAL | OPF_V2 | OPF_LIFECYCLE},
    [ODBC_LEADER__OP_SCHEDULE] = {"schedule",
                                  OPF_OPTIONAL | OPF_V2 | OPF_SCHEDULE},
    [ODBC_LEADER__OP_RESCHEDULE] = {"reschedule",
                                    OPF_OPTIONAL | OPF_V2 | OPF_SCHEDULE},
    [ODBC_LEADER__OP_SCHEDULES] = {"schedules",
                                   OPF_OPTIONAL | OPF_V2 | OPF_SCHEDULE},
    [ODBC_LEADER__OP_LAST_FIRE] = {"last_fire", OPF_OPTIONAL | OPF_V2},
    [ODBC_LEADER__OP_SCHEDULE_READ] = {"schedule_read", OPF_OPTIONAL | OPF_V2},
    [ODBC_LEADER__OP_GROUP_STEADY] = {"group_steady", OPF_OPTIONAL},
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
    "max_attempts",
    "paused",
    "schedule",
    "full",
};

/* Returns the name of param as a dialect file spells it (after the ':');
 * static. */
const char *odbc_leader__param_name(enum odbc_leader__param param) {
    return (unsigned)param < ODBC_LEADER__P_COUNT ? param_names[param] : "?";
}

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

/* See dialect_parser.h. */
int odbc_leader__dialect_fail(const struct odbc_leader__parser *p, int line,
                              const char *fmt, ...) {
    char reason[REASON_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    odbc_leader__errf(p->err, p->errlen, "%s:%d: %s", p->file,
                      line > 0 ? line : 1, reason);
    return ODBC_LEADER_EDIALECT;
}

/* See dialect_parser.h. */
int odbc_leader__dialect_nomem(const struct odbc_leader__parser *p) {
    odbc_leader__errf(p->err, p->errlen, "%s: out of memory", p->file);
    return ODBC_LEADER_ENOMEM;
}

/* See dialect_parser.h. */
int odbc_leader__dialect_lookup(const char *const *names, int count,
                                const char *s, size_t n) {
    int i;

    for (i = 0; i < count; i++) {
        if (names[i] && strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
            return i;
    }
    return -1;
}

/* See dialect_parser.h. */
size_t odbc_leader__dialect_trim(const char *s, size_t n, const char **start) {
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

#define LIST_MAX 448 /* bytes of one list of names in a message */

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

/* ---- statements ---- */

/* Moves the collected statement into the current section. Returns 0 or an
 * error code with the message set. */
static int finish_statement(struct odbc_leader__parser *p) {
    struct odbc_leader__stmt_list *l = &p->d->ops[p->op];
    struct odbc_leader__stmt *v, *st;
    const char *s;
    size_t n =
        odbc_leader__dialect_trim(p->sql.p ? p->sql.p : "", p->sql.len, &s);

    if (n == 0)
        return odbc_leader__dialect_fail(
            p, p->stmt_line, "empty statement; expected SQL before ';'");
    if (l->n == ODBC_LEADER__MAX_STMTS)
        return odbc_leader__dialect_fail(
            p, p->stmt_line,
            "more than %d statements in @statement %s; expected at "
            "most %d",
            ODBC_LEADER__MAX_STMTS, odbc_leader__op_name(p->op),
            ODBC_LEADER__MAX_STMTS);
    v = realloc(l->v, (l->n + 1) * sizeof *v);
    if (!v)
        return odbc_leader__dialect_nomem(p);
    l->v = v;
    st = &l->v[l->n];
    memset(st, 0, sizeof *st);
    st->sql = odbc_leader__strndup(s, n);
    if (!st->sql)
        return odbc_leader__dialect_nomem(p);
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
static int end_section(struct odbc_leader__parser *p) {
    int rc;

    if (p->op < 0)
        return 0;
    if (p->quote)
        return odbc_leader__dialect_fail(
            p, p->stmt_line, "unterminated %s in the statement starting here",
            p->quote == '*' ? "/* comment" : "quoted text");
    if (p->stmt_line) {
        rc = finish_statement(p);
        if (rc)
            return rc;
    }
    if (p->d->ops[p->op].n == 0)
        return odbc_leader__dialect_fail(
            p, p->op_line[p->op],
            "empty @statement %s; expected SQL lines after it",
            odbc_leader__op_name(p->op));
    p->op = -1;
    return 0;
}

static int scan_plain(struct odbc_leader__parser *p, const char *s, size_t n,
                      size_t i, size_t *used, int *stop);
static int scan_quoted(struct odbc_leader__parser *p, const char *s, size_t n,
                       size_t i, size_t *used);

/* Appends a define's text as if it stood in the SQL: parameters, quotes
 * and {prefix} work inside it, other defines do not. Returns 0 or an error
 * code. */
static int expand_define(struct odbc_leader__parser *p,
                         const struct odbc_leader__define *def) {
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
        return odbc_leader__dialect_fail(
            p, p->line, "@define %s (line %d) leaves a quote or comment open",
            def->name, def->line);
    return rc;
}

/* Handles "{word}" at s (n bytes left, s[0] == '{'): appends the value.
 * Sets *used to the bytes consumed (1 when it is not a placeholder).
 * Returns 0 or an error code. */
static int placeholder(struct odbc_leader__parser *p, const char *s, size_t n,
                       size_t *used) {
    const struct odbc_leader__define *def;
    char num[32];
    size_t i = 1;

    while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_'))
        i++;
    *used = 1;
    if (i == 1 || i >= n || s[i] != '}')
        return odbc_leader__buf_add(&p->sql, "{", 1)
                   ? odbc_leader__dialect_nomem(p)
                   : 0;
    *used = i + 1;
    if (i - 1 == 6 && memcmp(s + 1, "prefix", 6) == 0)
        return odbc_leader__buf_add(&p->sql, p->prefix, strlen(p->prefix))
                   ? odbc_leader__dialect_nomem(p)
                   : 0;
    if (i - 1 == 10 && memcmp(s + 1, "timeout_ms", 10) == 0) {
        snprintf(num, sizeof num, "%lld", p->timeout_ms);
        return odbc_leader__buf_add(&p->sql, num, strlen(num))
                   ? odbc_leader__dialect_nomem(p)
                   : 0;
    }
    if (i - 1 == 15 && memcmp(s + 1, "timeout_half_ms", 15) == 0) {
        snprintf(num, sizeof num, "%lld", (p->timeout_ms + 1) / 2);
        return odbc_leader__buf_add(&p->sql, num, strlen(num))
                   ? odbc_leader__dialect_nomem(p)
                   : 0;
    }
    def = p->expanding ? NULL : odbc_leader__dialect_define(p, s + 1, i - 1);
    if (def != NULL)
        return expand_define(p, def);
    return odbc_leader__dialect_fail(
        p, p->line,
        "unknown placeholder {%.*s}; expected {prefix}, "
        "{timeout_ms}, {timeout_half_ms} or a name from @define",
        (int)(i - 1), s + 1);
}

/* Handles ":name" at s (s[0] == ':', s[1] in [a-z_]): appends '?' and
 * records the parameter. Sets *used. Returns 0 or an error code. */
static int parameter(struct odbc_leader__parser *p, const char *s, size_t n,
                     size_t *used) {
    char list[LIST_MAX];
    size_t i = 1;
    int k;

    while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_'))
        i++;
    *used = i;
    k = odbc_leader__dialect_lookup(param_names, ODBC_LEADER__P_COUNT, s + 1,
                                    i - 1);
    if (k < 0)
        return odbc_leader__dialect_fail(
            p, p->line, "unknown parameter :%.*s; expected %s", (int)(i - 1),
            s + 1,
            name_list(list, sizeof list, param_names, ODBC_LEADER__P_COUNT, ":",
                      "or"));
    if (p->nparams >= ODBC_LEADER__MAX_PARAMS)
        return odbc_leader__dialect_fail(
            p, p->line,
            "more than %d parameters in one statement; expected "
            "at most %d",
            ODBC_LEADER__MAX_PARAMS, ODBC_LEADER__MAX_PARAMS);
    p->params[p->nparams++] = (unsigned char)k;
    return odbc_leader__buf_add(&p->sql, "?", 1) ? odbc_leader__dialect_nomem(p)
                                                 : 0;
}

/* Scans s[0..n) outside quotes: copies text, expands placeholders and
 * parameters, enters quotes. Returns the bytes consumed in *used, and
 * *stop = 1 at a "--" comment. Returns 0 or an error code. */
static int scan_plain(struct odbc_leader__parser *p, const char *s, size_t n,
                      size_t i, size_t *used, int *stop) {
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
    return odbc_leader__buf_add(&p->sql, s + i, *used)
               ? odbc_leader__dialect_nomem(p)
               : 0;
}

/* Copies the quoted or commented text at s[i] (one byte, or "*" "/" that
 * closes a block comment), closing the quote when it ends. Sets *used.
 * Returns 0 or an error code. */
static int scan_quoted(struct odbc_leader__parser *p, const char *s, size_t n,
                       size_t i, size_t *used) {
    int closes_block =
        p->quote == '*' && s[i] == '*' && i + 1 < n && s[i + 1] == '/';

    *used = closes_block ? 2 : 1;
    if (closes_block || (p->quote != '*' && s[i] == p->quote))
        p->quote = 0;
    return odbc_leader__buf_add(&p->sql, s + i, *used)
               ? odbc_leader__dialect_nomem(p)
               : 0;
}

/* Appends one SQL line to the statement being collected, ending the
 * statement at a final ';'. Returns 0 or an error code. */
static int sql_line(struct odbc_leader__parser *p, const char *s, size_t n) {
    size_t i = 0, used, line_start;
    int rc = 0, stop = 0;

    if (p->stmt_line && odbc_leader__buf_add(&p->sql, "\n", 1))
        return odbc_leader__dialect_nomem(p);
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
static int statement_directive(struct odbc_leader__parser *p, const char *args,
                               size_t n) {
    char list[LIST_MAX];
    int rc = end_section(p);
    int op;

    if (rc)
        return rc;
    if (p->in_header) {
        rc = odbc_leader__dialect_end_header(p);
        if (rc)
            return rc;
    }
    op = lookup_op(args, n);
    if (op < 0)
        return odbc_leader__dialect_fail(
            p, p->line, "unknown operation \"%.*s\" in @statement; expected %s",
            (int)n, args, op_list(list, sizeof list, pick_any, 0, "or"));
    if (p->op_line[op])
        return odbc_leader__dialect_fail(
            p, p->line, "duplicate @statement %s (first at line %d)",
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
static int step_directive(struct odbc_leader__parser *p, const char *args,
                          size_t n) {
    char *end = NULL;
    char num[16];
    long v;

    if (p->op != ODBC_LEADER__OP_UPGRADE)
        return odbc_leader__dialect_fail(
            p, p->line,
            "@step outside @statement upgrade; expected it only "
            "between the statements of upgrade");
    if (p->stmt_line)
        return odbc_leader__dialect_fail(
            p, p->line, "@step inside a statement; expected it after a ';'");
    snprintf(num, sizeof num, "%.*s", (int)(n < sizeof num ? n : 0), args);
    v = strtol(num, &end, 10);
    if (n == 0 || n >= sizeof num || *end != '\0' || v < 2 ||
        v > p->d->schema_version || v <= p->step)
        return odbc_leader__dialect_fail(
            p, p->line,
            "bad @step \"%.*s\"; expected a version from %d to the "
            "file's @schema-version %d, above the previous @step",
            (int)n, args, p->step > 1 ? p->step + 1 : 2, p->d->schema_version);
    p->step = (int)v;
    return 0;
}

/* Handles a directive line; s points just after '@'. Returns 0 or an
 * error code. */
static int directive(struct odbc_leader__parser *p, const char *s, size_t n) {
    char list[LIST_MAX];
    size_t wn = 0, an;
    const char *args;
    int known;

    while (wn < n && (islower((unsigned char)s[wn]) ||
                      isdigit((unsigned char)s[wn]) || s[wn] == '-'))
        wn++;
    an = odbc_leader__dialect_trim(s + wn, n - wn, &args);
    if (wn == 0 || (wn < n && !isspace((unsigned char)s[wn])))
        return odbc_leader__dialect_fail(
            p, p->line,
            "bad directive \"@%.*s\"; expected @word followed by a "
            "space",
            (int)n, s);
    if (wn == 9 && memcmp(s, "statement", 9) == 0)
        return statement_directive(p, args, an);
    if (wn == 4 && memcmp(s, "step", 4) == 0 && !p->in_header)
        return step_directive(p, args, an);
    known = odbc_leader__dialect_lookup(header_words, HEADER_WORDS, s, wn) >= 0;
    if (known && !p->in_header)
        return odbc_leader__dialect_fail(
            p, p->line,
            "@%.*s after the first @statement; expected header "
            "directives before all @statement sections",
            (int)wn, s);
    if (!known)
        return odbc_leader__dialect_fail(
            p, p->line,
            "unknown directive @%.*s; expected @statement or a "
            "header directive: %s",
            (int)wn, s,
            name_list(list, sizeof list, header_words, HEADER_WORDS, "@",
                      "or"));
    return odbc_leader__dialect_header(p, s, wn, args, an);
}

/* Handles one line (without its newline). Returns 0 or an error code. */
static int handle_line(struct odbc_leader__parser *p, const char *s, size_t n) {
    const char *t;
    size_t tn;

    if (n > 0 && s[n - 1] == '\r')
        n--;
    if (p->quote)
        return sql_line(p, s, n);
    tn = odbc_leader__dialect_trim(s, n, &t);
    if (tn == 0)
        return 0;
    if (tn >= 2 && t[0] == '-' && t[1] == '-') {
        tn = odbc_leader__dialect_trim(t + 2, tn - 2, &t);
        if (tn > 0 && t[0] == '@')
            return directive(p, t + 1, tn - 1);
        return 0;
    }
    if (p->in_header || p->op < 0)
        return odbc_leader__dialect_fail(
            p, p->line,
            "SQL text outside a statement section; expected a "
            "directive, a -- comment or a blank line before the "
            "first @statement");
    return sql_line(p, s, n);
}

/* Checks that every operation the file's schema version needs has a
 * section. Returns 0 or an error code with the message naming the missing
 * operation, the required set and the optional one. */
static int check_required(struct odbc_leader__parser *p) {
    char need[LIST_MAX], may[LIST_MAX];
    int version = p->d->schema_version;

    for (int op = 0; op < ODBC_LEADER__OP_COUNT; op++) {
        if (!pick_required(op, version) || p->op_line[op])
            continue;
        op_list(may, sizeof may, pick_optional, version, "and");
        return odbc_leader__dialect_fail(
            p, p->line,
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
static int check_allowed(struct odbc_leader__parser *p) {
    char list[LIST_MAX];
    int version = p->d->schema_version;

    for (int op = 0; op < ODBC_LEADER__OP_COUNT; op++) {
        if (!p->op_line[op] || op_allowed(op, version))
            continue;
        return odbc_leader__dialect_fail(
            p, p->op_line[op],
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
static int check_wakeup(struct odbc_leader__parser *p) {
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
        return odbc_leader__dialect_fail(
            p, p->op_line[first],
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
static int check_together(struct odbc_leader__parser *p, unsigned flag,
                          const char *what, const char *need) {
    int first = -1;

    for (int op = 0; op < ODBC_LEADER__OP_COUNT && first < 0; op++) {
        if ((op_names[op].flags & flag) && p->op_line[op])
            first = op;
    }
    for (int op = 0; first >= 0 && op < ODBC_LEADER__OP_COUNT; op++) {
        if (!(op_names[op].flags & flag) || p->op_line[op])
            continue;
        return odbc_leader__dialect_fail(
            p, p->op_line[first],
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
static int check_watch(struct odbc_leader__parser *p) {
    static const int need[] = {ODBC_LEADER__P_SEEN_TERM,
                               ODBC_LEADER__P_SEEN_EXPIRES_MS};

    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        if (odbc_leader__dialect_uses(p->d, ODBC_LEADER__OP_ATTEMPT, need[i]))
            continue;
        return odbc_leader__dialect_fail(
            p, p->op_line[ODBC_LEADER__OP_ATTEMPT],
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
static int check_session_id(struct odbc_leader__parser *p) {
    const struct odbc_leader__stmt_list *l =
        &p->d->ops[ODBC_LEADER__OP_SESSION_ID];

    if (l->n > 1)
        return odbc_leader__dialect_fail(
            p, l->v[1].line,
            "@statement session_id holds %zu statements; it must be "
            "one SELECT of one row and one column",
            l->n);
    if (l->n == 1 && l->v[0].nparams > 0)
        return odbc_leader__dialect_fail(
            p, l->v[0].line,
            "@statement session_id uses :%s; it takes no parameters",
            param_names[l->v[0].params[0]]);
    return 0;
}

/* Checks the statements of sharded groups: all of them or none, and
 * group_steady only with them. Returns 0 or an error code with the
 * message set. */
static int check_groups(struct odbc_leader__parser *p) {
    int steady = p->op_line[ODBC_LEADER__OP_GROUP_STEADY];
    int rc = check_together(p, OPF_GROUP, "sharded groups",
                            "group_init, group_tick, group_leave and "
                            "group_shards");

    if (rc == 0 && steady && !p->op_line[ODBC_LEADER__OP_GROUP_TICK])
        rc = odbc_leader__dialect_fail(
            p, steady,
            "@statement group_steady without group_tick; a steady tick "
            "is one kind of group tick: sharded groups need group_init, "
            "group_tick, group_leave and group_shards");
    return rc;
}

/* Checks the statements of the election log: both or none. */
static int check_elections(struct odbc_leader__parser *p) {
    return check_together(p, OPF_ELECTION, "the election log",
                          "elections and election_gc");
}

/* Checks the statements of the fire lifecycle: all of them or none. */
static int check_lifecycle(struct odbc_leader__parser *p) {
    return check_together(p, OPF_LIFECYCLE, "the fire lifecycle",
                          "take, skip, sweep, offers, pause, trigger and "
                          "jobs");
}

/* Checks the statements of schedule identities: all three or none. */
static int check_schedules(struct odbc_leader__parser *p) {
    return check_together(p, OPF_SCHEDULE, "schedule identities",
                          "schedule, reschedule and schedules");
}

/* The checks at the end of a file, in this order; each returns 0 or an
 * error code with the message set. */
static int (*const checks[])(struct odbc_leader__parser *p) = {
    check_required,  check_allowed,    check_wakeup,
    check_watch,     check_session_id, check_groups,
    check_elections, check_lifecycle,  check_schedules,
};

/* Runs the parser over text and the end-of-file checks. Returns 0 or an
 * error code. */
static int parse_text(struct odbc_leader__parser *p, const char *text) {
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
        rc = odbc_leader__dialect_end_header(p);
    for (size_t i = 0; rc == 0 && i < sizeof(checks) / sizeof(checks[0]); i++)
        rc = checks[i](p);
    return rc;
}

/* See dialect.h. Owns nothing on return: *out goes to the caller; text,
 * filename and vars are only borrowed during the call. */
int odbc_leader__dialect_parse(const char *text, const char *filename,
                               const struct odbc_leader__dialect_vars *vars,
                               struct odbc_leader__dialect **out, char *err,
                               size_t errlen) {
    struct odbc_leader__parser p;
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
        return odbc_leader__dialect_nomem(&p);
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
