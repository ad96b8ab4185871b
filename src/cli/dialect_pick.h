/* SPDX-License-Identifier: MIT */
/*
 * dialect_pick.h: the dialect that "odbc-leader schema" and "odbc-leader
 * fence" print, and its table prefix (dialect_pick.c).
 */
#ifndef ODBC_LEADER_CLI_DIALECT_PICK_H
#define ODBC_LEADER_CLI_DIALECT_PICK_H

#include "cli.h"
#include "config.h"
#include "dialect.h"

/* The options both commands take: --dialect and --prefix. */
struct odbc_leader__cli_dialect_opts {
    const char *cmd;     /* "schema" or "fence", for messages */
    const char *dialect; /* --dialect, borrowed; NULL = from the config */
    const char *prefix;  /* --prefix, borrowed; NULL = from the config */
};

/* getopt_long entries of --dialect ('D') and --prefix ('P'). */
#define ODBC_LEADER__CLI_DIALECT_LONGOPTS                                      \
    {"dialect", required_argument, NULL, 'D'}, {                               \
        "prefix", required_argument, NULL, 'P'                                 \
    }

/* A dialect picked for printing. */
struct odbc_leader__cli_dialect {
    struct odbc_leader__config cfg; /* owned: the connection's, when one is
                                       given (else zeroed) */
    struct odbc_leader__dialect *d; /* owned */
    const char *prefix; /* its table prefix: the option's, cfg's or the
                           default; borrowed */
};

/* Takes --dialect or --prefix into *o. Returns 0, 1 when opt is neither,
 * or EX_USAGE after a message. arg is borrowed from argv. */
int odbc_leader__cli_dialect_opt(struct odbc_leader__cli *c,
                                 struct odbc_leader__cli_dialect_opts *o,
                                 int opt, const char *arg);

/*
 * Loads the dialect to print: --dialect, else the connection's
 * LeaderDialect, else the one its database asks for (db.c connects and
 * reads SQL_DBMS_NAME), else sqlite when no connection is given. Returns 0
 * with *out filled (free it with odbc_leader__cli_dialect_free, also after
 * a failure), or an exit code after a message.
 */
int odbc_leader__cli_dialect_pick(struct odbc_leader__cli *c,
                                  const struct odbc_leader__cli_dialect_opts *o,
                                  struct odbc_leader__cli_dialect *out);

/* Frees what *p owns. */
void odbc_leader__cli_dialect_free(struct odbc_leader__cli_dialect *p);

#endif /* ODBC_LEADER_CLI_DIALECT_PICK_H */
