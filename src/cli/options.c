/* SPDX-License-Identifier: MIT */
/*
 * options.c: the command line of the subcommands: the options every
 * subcommand accepts (-d, -C, -n, -v, --syslog, -h; cli.h lists them),
 * the one getopt_long loop that reads them together with a subcommand's
 * own options, then answers -h with the subcommand's help and checks its
 * operands, and the option values several subcommands take alike (a
 * name, --json and --limit).
 */
#include <build_config.h>

#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "cli.h"
#include "config.h"

/* The common long options: room for them in a subcommand's table. */
#define COMMON_MAX 8

int odbc_leader__cli_common_opt(struct odbc_leader__cli *c, int opt,
                                const char *arg) {
    switch (opt) {
    case 'd':
    case 'C':
        if (arg[0] == '\0') {
            odbc_leader__cli_err(c, "-%c needs a non-empty value", opt);
            return EX_USAGE;
        }
        if (opt == 'd')
            c->dsn = arg;
        else
            c->connect = arg;
        return 1;
    case 'n':
        if (!odbc_leader__valid_name(arg)) {
            odbc_leader__cli_err(c,
                                 "invalid namespace \"%s\": 1-128 bytes of "
                                 "A-Z a-z 0-9 . _ - : / @",
                                 arg);
            return EX_USAGE;
        }
        c->ns = arg;
        return 1;
    case 'v':
        c->verbose++;
        return 1;
    case ODBC_LEADER__CLI_OPT_SYSLOG:
        if (!c->syslog)
            openlog("odbc-leader", LOG_PID, LOG_DAEMON);
        c->syslog = 1;
        return 1;
    case 'h':
        c->help = 1;
        return 1;
    default:
        return 0;
    }
}

void odbc_leader__cli_getopt_reset(void) {
    optind = 0; /* GNU: reinitialise and start again at argv[1] */
    opterr = 1;
}

/* Builds the getopt_long tables of cl: the common options it takes then
 * its own, into longopts (COMMON_MAX + ODBC_LEADER__CLI_OWN_MAX + 1
 * entries) and shortopts (len bytes). Returns 0, or -1 when the short
 * letters do not fit (a mistake of the caller). */
static int tables(const struct odbc_leader__cli_cmdline *cl,
                  struct option *longopts, char *shortopts, size_t len) {
    static const struct option common[COMMON_MAX] = {ODBC_LEADER__CLI_LONGOPTS};
    int all = cl->common == ODBC_LEADER__CLI_ALL_COMMON;
    size_t n = 0;
    int w;

    for (size_t i = 0; i < COMMON_MAX && common[i].name != NULL; i++) {
        if (all || common[i].val == 'v' || common[i].val == 'h')
            longopts[n++] = common[i];
    }
    for (size_t i = 0;
         i < ODBC_LEADER__CLI_OWN_MAX && cl->longopts[i].name != NULL; i++)
        longopts[n++] = cl->longopts[i];
    memset(&longopts[n], 0, sizeof(longopts[n]));
    w = snprintf(shortopts, len, "%s%s%s",
                 cl->operands == ODBC_LEADER__CLI_CMD ? "+" : "",
                 all ? ODBC_LEADER__CLI_SHORTOPTS : "vh",
                 cl->shortopts != NULL ? cl->shortopts : "");
    return w > 0 && (size_t)w < len ? 0 : -1;
}

/* Checks what follows the options: operands refused, or a CMD needed.
 * Returns 0 or EX_USAGE after a message. */
static int operands(struct odbc_leader__cli *c,
                    const struct odbc_leader__cli_cmdline *cl, int argc,
                    char **argv) {
    if (cl->operands == ODBC_LEADER__CLI_CMD && optind >= argc)
        return odbc_leader__cli_usage(c, cl->subcmd, "missing CMD to run");
    if (cl->operands == ODBC_LEADER__CLI_NO_OPERANDS && optind < argc)
        return odbc_leader__cli_usage(
            c, cl->subcmd, "unexpected argument \"%s\"", argv[optind]);
    return 0;
}

int odbc_leader__cli_parse(struct odbc_leader__cli *c,
                           const struct odbc_leader__cli_cmdline *cl, void *ctx,
                           int argc, char **argv) {
    struct option longopts[COMMON_MAX + ODBC_LEADER__CLI_OWN_MAX + 1];
    char shortopts[64];
    int opt, rc;

    if (tables(cl, longopts, shortopts, sizeof(shortopts)) != 0) {
        odbc_leader__cli_err(c, "%s: too many options", cl->subcmd);
        return EX_SOFTWARE;
    }
    while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        rc = odbc_leader__cli_common_opt(c, opt, optarg);
        if (rc == 1 && !(cl->see_ns && opt == 'n'))
            continue;
        if (rc != 0 && rc != 1)
            return EX_USAGE;
        rc = opt == '?' || opt == ':' || cl->opt == NULL
                 ? 1
                 : cl->opt(c, ctx, opt, optarg);
        if (rc == 1)
            return odbc_leader__cli_usage(c, cl->subcmd, NULL);
        if (rc != 0)
            return rc;
    }
    if (c->help) {
        fputs(cl->help, stdout);
        return ODBC_LEADER__CLI_HELP;
    }
    return operands(c, cl, argc, argv);
}

int odbc_leader__cli_name_arg(struct odbc_leader__cli *c, const char *subcmd,
                              const char *name, const char *arg,
                              const char **out) {
    if (!odbc_leader__valid_name(arg))
        return odbc_leader__cli_usage(c, subcmd,
                                      "invalid %s \"%s\": 1-128 bytes of "
                                      "A-Z a-z 0-9 . _ - : / @",
                                      name, arg);
    if (arg[0] == '-') /* "--once --recover 2": getopt took the option */
        return odbc_leader__cli_usage(c, subcmd,
                                      "invalid %s \"%s\": it starts with "
                                      "'-' (an option where %s belongs?)",
                                      name, arg, name);
    *out = arg;
    return 0;
}

int odbc_leader__cli_list_opt(struct odbc_leader__cli *c, const char *subcmd,
                              struct odbc_leader__cli_list_opts *o, int opt,
                              const char *arg) {
    char *end;

    if (opt == 'j') {
        o->json = 1;
        return 0;
    }
    if (opt != 'L')
        return 1;
    o->limit = strtol(arg, &end, 10);
    if (end == arg || *end != '\0' || o->limit < 0)
        return odbc_leader__cli_usage(c, subcmd, "invalid --limit \"%s\"", arg);
    return 0;
}
