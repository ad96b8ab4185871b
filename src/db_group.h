/* SPDX-License-Identifier: MIT */
/*
 * db_group.h: the statements of sharded groups on the ODBC port
 * (db_group.c) and the port table that hands them to a group member
 * (member.h).
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_DB_GROUP_H
#define ODBC_LEADER_DB_GROUP_H

#include <stddef.h>

#include "db.h"
#include "member.h"
#include "odbc_leader.h"

/* 1 when the dialect has the group statements. */
int odbc_leader__db_has_group(const struct odbc_leader__db *db);

/* Runs group operation op (ODBC_LEADER__OP_GROUP_*) with the arguments
 * in a and hands its rows to fn (may be NULL). Returns the rows fetched
 * or affected, ODBC_LEADER_EDIALECT without group statements, or a
 * negative error. */
int odbc_leader__db_group_op(struct odbc_leader__db *db, int op,
                             const struct odbc_leader__group_args *a,
                             odbc_leader__db_row_fn fn, void *ctx);

/* Connects db (odbc_leader__db_connect()), checks that the dialect has
 * the group statements and creates the group's missing rows. Returns 0 or
 * a negative error with a message in err; disconnected on failure. */
int odbc_leader__db_group_connect(struct odbc_leader__db *db, char *err,
                                  size_t errlen);

/* Runs group operation op as odbc_leader__db_group_op() does, first
 * writing a's JSON lists also as the masks and the one dead holder that a
 * dialect without JSON reads (when op's statements use them). Returns
 * what odbc_leader__db_group_op() returns, or ODBC_LEADER_ENOMEM. */
int odbc_leader__db_group_run(struct odbc_leader__db *db, int op,
                              const struct odbc_leader__group_args *a,
                              odbc_leader__db_row_fn fn, void *ctx);

/* Calls fn for each shard row of the group named by db's namespace.
 * Returns the rows (0 without group statements) or a negative error. */
int odbc_leader__db_group_shards(struct odbc_leader__db *db,
                                 odbc_leader_shard_fn fn, void *ctx);

/* The member's port table; port is a struct odbc_leader__db. */
extern const struct odbc_leader__group_port_ops odbc_leader__db_group_ops;

#endif /* ODBC_LEADER_DB_GROUP_H */
