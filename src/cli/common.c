/* SPDX-License-Identifier: MIT */
/*
 * common.c: what the subcommands of odbc-leader share beyond their command
 * line (options.c): building the connection string (options, environment,
 * per-user SQLite default), opening a handle with a useful error, exit
 * codes, the log callback, messages and the status line on stderr,
 * durations, signal waits and growing arrays.
 */
#include <build_config.h>

#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "config.h"

void odbc_leader__cli_clear_line(struct odbc_leader__cli *c) {
    if (!c->status_line)
        return;
    fputs("\r\033[K", stderr);
    c->status_line = 0;
}

void odbc_leader__cli_show_line(struct odbc_leader__cli *c, const char *msg) {
    fprintf(stderr, "\r\033[K%s", msg);
    fflush(stderr);
    c->status_line = 1;
}

/* Prints "odbc-leader: " and the message on stderr; with --syslog also
 * logs it at level. ap is consumed. */
static void vmsg(struct odbc_leader__cli *c, int level, const char *fmt,
                 va_list ap) {
    char msg[2048];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    odbc_leader__cli_clear_line(c);
    fprintf(stderr, "odbc-leader: %s\n", msg);
    if (c->syslog)
        syslog(level, "%s", msg);
}

void odbc_leader__cli_err(struct odbc_leader__cli *c, const char *fmt, ...) {
    va_list ap;

    va_start(ap, fmt);
    vmsg(c, LOG_ERR, fmt, ap);
    va_end(ap);
}

void odbc_leader__cli_msg(struct odbc_leader__cli *c, int level,
                          const char *fmt, ...) {
    va_list ap;

    va_start(ap, fmt);
    vmsg(c, level, fmt, ap);
    va_end(ap);
}

int odbc_leader__cli_usage(struct odbc_leader__cli *c, const char *subcmd,
                           const char *fmt, ...) {
    va_list ap;

    odbc_leader__cli_clear_line(c);
    if (fmt != NULL) {
        fprintf(stderr, "odbc-leader: %s: ", subcmd);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
    }
    fprintf(stderr, "Try 'odbc-leader %s --help'.\n", subcmd);
    return EX_USAGE;
}

void odbc_leader__cli_log(void *ctx, int level, const char *msg) {
    struct odbc_leader__cli *c = ctx;
    int max = c->verbose == 0   ? LOG_WARNING
              : c->verbose == 1 ? LOG_INFO
                                : LOG_DEBUG;
    const char *tag = "";

    if (level > max)
        return;
    if (c->quiet_connect && c->verbose == 0 && level >= LOG_WARNING) {
        if (level == LOG_WARNING && c->nheld < 4)
            snprintf(c->held[c->nheld++], sizeof(c->held[0]), "%s", msg);
        return;
    }
    if (c->syslog) {
        syslog(level, "%s", msg);
        return;
    }
    if (level <= LOG_ERR)
        tag = "error: ";
    else if (level == LOG_WARNING)
        tag = "warning: ";
    else if (level == LOG_DEBUG)
        tag = "debug: ";
    odbc_leader__cli_clear_line(c);
    fprintf(stderr, "odbc-leader: %s%s\n", tag, msg);
}

/* 1 when value must be written in braces inside a connection string. */
static int needs_braces(const char *value) {
    size_t n = strlen(value);

    if (strpbrk(value, ";{}") != NULL)
        return 1;
    return n > 0 && (value[0] == ' ' || value[n - 1] == ' ');
}

/* Appends text to *s (reallocated). Returns 0 or -1 (out of memory). */
static int append(char **s, const char *text) {
    size_t a = *s != NULL ? strlen(*s) : 0, b = strlen(text);
    char *p = realloc(*s, a + b + 1);

    if (p == NULL)
        return -1;
    memcpy(p + a, text, b + 1);
    *s = p;
    return 0;
}

/* Appends ";" to *s unless it is empty or already ends with one. Returns
 * 0 or -1. */
static int separate(char **s) {
    size_t n = *s != NULL ? strlen(*s) : 0;

    if (n == 0 || (*s)[n - 1] == ';')
        return append(s, "");
    return append(s, ";");
}

/* Appends value to *s in braces, doubling each '}'. Returns 0 or -1. */
static int append_braced(char **s, const char *value) {
    char ch[2] = {0, 0};
    int fail = append(s, "{");

    for (const char *v = value; !fail && *v != '\0'; v++) {
        ch[0] = *v;
        fail = append(s, *v == '}' ? "}}" : ch);
    }
    return fail || append(s, "}") ? -1 : 0;
}

int odbc_leader__cli_append_kv(char **s, const char *key, const char *value) {
    char *piece = NULL;
    int fail = append(&piece, key) || append(&piece, "=");

    if (!fail)
        fail = needs_braces(value) ? append_braced(&piece, value)
                                   : append(&piece, value);
    fail = fail || separate(s) || append(s, piece);
    free(piece);
    return fail ? -1 : 0;
}

/* Creates every missing directory of path with mode 0700. Returns 0 or
 * -1 with errno set. path is borrowed; a copy is edited. */
static int make_dirs(const char *path) {
    char *p = strdup(path);
    int rc = 0;

    if (p == NULL)
        return -1;
    for (char *s = p + 1; rc == 0; s++) {
        char save = *s;

        if (save != '/' && save != '\0')
            continue;
        *s = '\0';
        if (mkdir(p, 0700) < 0 && errno != EEXIST)
            rc = -1;
        *s = save;
        if (save == '\0')
            break;
    }
    free(p);
    return rc;
}

/* The per-user state directory: $XDG_STATE_HOME (when absolute), else
 * $HOME/.local/state, else the passwd entry's home. Returns a new string
 * or NULL. */
static char *state_home(void) {
    const char *xdg = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    char *s = NULL;

    if (xdg != NULL && xdg[0] == '/')
        return strdup(xdg);
    if (home == NULL || home[0] != '/') {
        struct passwd *pw = getpwuid(getuid());

        home = pw != NULL ? pw->pw_dir : NULL;
    }
    if (home == NULL || append(&s, home) || append(&s, "/.local/state")) {
        free(s);
        return NULL;
    }
    return s;
}

/* Sets *out to the default connection string (SQLite file in the state
 * directory, created 0700). Returns 0 or an exit code after a message. */
static int default_connect(struct odbc_leader__cli *c, char **out) {
    char *dir = state_home();
    char *db = NULL;
    int rc = 0;

    *out = NULL;
    if (dir == NULL || append(&dir, "/odbc-leader")) {
        odbc_leader__cli_err(c, "cannot tell the state directory: set "
                                "XDG_STATE_HOME or HOME, or use -d/-C");
        rc = EX_CONFIG;
        goto out;
    }
    if (make_dirs(dir) < 0) {
        odbc_leader__cli_err(c, "cannot create %s: %s", dir, strerror(errno));
        rc = EX_CANTCREAT;
        goto out;
    }
    if (append(&db, dir) || append(&db, "/leader.db") ||
        append(out, "Driver=SQLite3") ||
        odbc_leader__cli_append_kv(out, "Database", db)) {
        odbc_leader__cli_err(c, "out of memory");
        rc = EX_OSERR;
    }
out:
    if (rc != 0) {
        free(*out);
        *out = NULL;
    }
    free(db);
    free(dir);
    return rc;
}

/* Sets *out to the base connection string from the options and the
 * environment. Returns 0 or an exit code after a message. */
static int base_connect(struct odbc_leader__cli *c, char **out) {
    const char *conn = c->connect, *dsn = c->dsn;

    *out = NULL;
    if (conn != NULL && dsn != NULL) {
        odbc_leader__cli_err(c, "give -d/--dsn or -C/--connect, not both");
        return EX_USAGE;
    }
    if (conn == NULL && dsn == NULL) {
        conn = getenv("ODBC_LEADER_CONNECT");
        if (conn != NULL && conn[0] == '\0')
            conn = NULL;
        dsn = conn == NULL ? getenv("ODBC_LEADER_DSN") : NULL;
        if (dsn != NULL && dsn[0] == '\0')
            dsn = NULL;
    }
    if (conn == NULL && dsn == NULL)
        return default_connect(c, out);
    if ((conn != NULL && append(out, conn)) ||
        (dsn != NULL && odbc_leader__cli_append_kv(out, "DSN", dsn))) {
        free(*out);
        *out = NULL;
        odbc_leader__cli_err(c, "out of memory");
        return EX_OSERR;
    }
    return 0;
}

int odbc_leader__cli_config(struct odbc_leader__cli *c, const char *extra,
                            char **out) {
    int rc = base_connect(c, out);

    if (rc != 0)
        return rc;
    if (c->ns != NULL &&
        odbc_leader__cli_append_kv(out, "LeaderNamespace", c->ns) < 0)
        goto nomem;
    if (extra != NULL && extra[0] != '\0' &&
        (separate(out) < 0 || append(out, extra) < 0))
        goto nomem;
    return 0;
nomem:
    free(*out);
    *out = NULL;
    odbc_leader__cli_err(c, "out of memory");
    return EX_OSERR;
}

int odbc_leader__cli_config_parse(struct odbc_leader__cli *c, const char *extra,
                                  struct odbc_leader__config *cfg) {
    char err[512] = "";
    char *conf = NULL;
    int rc = odbc_leader__cli_config(c, extra, &conf);

    memset(cfg, 0, sizeof(*cfg));
    if (rc != 0)
        return rc;
    rc = odbc_leader__config_parse(conf, cfg, err, sizeof(err));
    free(conf);
    if (rc < 0) {
        memset(cfg, 0, sizeof(*cfg));
        odbc_leader__cli_err(c, "%s", err);
        return odbc_leader__cli_exit_code(rc);
    }
    return 0;
}

void *odbc_leader__cli_grow(void *v, size_t *cap, size_t n, size_t size) {
    size_t want = *cap != 0 ? 2 * *cap : 64;
    void *p;

    if (n < *cap)
        return v;
    p = realloc(v, want * size);
    if (p != NULL)
        *cap = want;
    return p;
}

void *odbc_leader__cli_push(void *v, size_t *cap, size_t *n, const void *elem,
                            size_t size, int *nomem) {
    char *p;

    if (*nomem)
        return v;
    p = odbc_leader__cli_grow(v, cap, *n, size);
    if (p == NULL) {
        *nomem = 1;
        return v;
    }
    memcpy(p + *n * size, elem, size);
    (*n)++;
    return p;
}

int odbc_leader__cli_exit_code(int rc) {
    switch (rc) {
    case ODBC_LEADER_OK:
        return 0;
    case ODBC_LEADER_ECONFIG:
    case ODBC_LEADER_EDIALECT:
    case ODBC_LEADER_ENOLEDGER:
    case ODBC_LEADER_ENOELECTIONS:
    case ODBC_LEADER_ENOLIFECYCLE:
    case ODBC_LEADER_EGROUPOFFER:
    case ODBC_LEADER_ESCHEDULE:
        return EX_CONFIG;
    case ODBC_LEADER_ENOMEM:
        return EX_OSERR;
    case ODBC_LEADER_ECONNECT:
    case ODBC_LEADER_EDB:
    case ODBC_LEADER_ECONNLOST:
    case ODBC_LEADER_ENOTABLE:
    case ODBC_LEADER_ESCHEMA:
    case ODBC_LEADER_EBACKOFF:
    case ODBC_LEADER_EUNKNOWN:
    case ODBC_LEADER_EREADONLY:
        return EX_UNAVAILABLE;
    case ODBC_LEADER_ENOCANDIDATE:
        return ODBC_LEADER__EX_NOCANDIDATE;
    case ODBC_LEADER_ENOLEADER:
        return ODBC_LEADER__EX_NOLEADER;
    default:
        return EX_SOFTWARE;
    }
}

int odbc_leader__cli_open(struct odbc_leader__cli *c, const char *extra,
                          const struct odbc_leader_callbacks *cb,
                          odbc_leader_t **out) {
    struct odbc_leader_callbacks own = {.struct_size = sizeof(own),
                                        .ctx = c,
                                        .log = odbc_leader__cli_log,
                                        .on_change = NULL};
    char err[1024] = "";
    char *conf = NULL;
    int rc = odbc_leader__cli_config(c, extra, &conf);

    *out = NULL;
    if (rc != 0)
        return rc;
    c->quiet_connect = 1;
    c->nheld = 0;
    rc =
        odbc_leader_create(out, conf, cb != NULL ? cb : &own, err, sizeof(err));
    c->quiet_connect = 0;
    free(conf);
    for (int i = 0; rc == 0 && i < c->nheld; i++)
        odbc_leader__cli_log(c, LOG_WARNING, c->held[i]);
    c->nheld = 0;
    if (rc < 0) {
        odbc_leader__cli_err(c, "%s",
                             err[0] != '\0' ? err : odbc_leader_strerror(rc));
        return odbc_leader__cli_exit_code(rc);
    }
    return 0;
}

int odbc_leader__cli_handle_cmd(struct odbc_leader__cli *c,
                                const struct odbc_leader__cli_cmdline *cl,
                                void *opts, int argc, char **argv,
                                int (*act)(struct odbc_leader__cli *c,
                                           odbc_leader_t *h,
                                           const void *opts)) {
    odbc_leader_t *h = NULL;
    int rc = odbc_leader__cli_parse(c, cl, opts, argc, argv);

    if (rc != 0)
        return rc == ODBC_LEADER__CLI_HELP ? 0 : rc;
    rc = odbc_leader__cli_open(c, NULL, NULL, &h);
    if (rc == 0)
        rc = act(c, h, opts);
    odbc_leader_destroy(h);
    return rc;
}

int odbc_leader__cli_redacted(struct odbc_leader__cli *c, char *buf,
                              size_t len) {
    struct odbc_leader__config cfg;
    char *conf = NULL;
    int rc = odbc_leader__cli_config(c, NULL, &conf);

    buf[0] = '\0';
    if (rc != 0)
        return rc;
    memset(&cfg, 0, sizeof(cfg));
    rc = odbc_leader__config_parse(conf, &cfg, NULL, 0);
    if (rc == 0)
        snprintf(buf, len, "%s", cfg.connect_redacted);
    odbc_leader__config_free(&cfg);
    free(conf);
    return rc < 0 ? odbc_leader__cli_exit_code(rc) : 0;
}

/* Parses the digits and optional fraction at s into *whole, *frac (the
 * fraction's digits as an integer, at most 9) and *scale (10^digits).
 * Returns the first unparsed char, or NULL when s has no digit. */
static const char *parse_number(const char *s, int64_t *whole, int64_t *frac,
                                int64_t *scale) {
    int digits = 0;

    *whole = 0;
    *frac = 0;
    *scale = 1;
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
        if (*whole > INT64_C(1000000000))
            return NULL;
        *whole = *whole * 10 + (*s - '0');
    }
    if (*s == '.') {
        for (s++; *s >= '0' && *s <= '9'; s++, digits++) {
            if (*scale < INT64_C(1000000000)) {
                *frac = *frac * 10 + (*s - '0');
                *scale *= 10;
            }
        }
    }
    return digits > 0 ? s : NULL;
}

int odbc_leader__cli_duration(const char *s, int64_t *ms) {
    int64_t whole, frac, scale, mult;
    const char *unit = parse_number(s, &whole, &frac, &scale);

    if (unit == NULL)
        return -1;
    if (strcmp(unit, "ms") == 0)
        mult = 1;
    else if (strcmp(unit, "s") == 0 || unit[0] == '\0')
        mult = 1000;
    else if (strcmp(unit, "m") == 0)
        mult = 60000;
    else if (strcmp(unit, "h") == 0)
        mult = 3600000;
    else
        return -1;
    *ms = whole * mult + frac * mult / scale;
    return 0;
}

int odbc_leader__cli_wait_signal(const sigset_t *sigs, int64_t timeout_ms) {
    struct timespec ts;
    int sig;

    if (timeout_ms < 0)
        timeout_ms = 0;
    ts.tv_sec = (time_t)(timeout_ms / 1000);
    ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
    sig = sigtimedwait(sigs, NULL, &ts);
    return sig > 0 ? sig : 0;
}
