/* SPDX-License-Identifier: MIT */
/*
 * fence.h: the fence predicate a dialect gives jobs (docs/fencing.md), for
 * the handles (odbc_leader_fence_sql()) and the fence command.
 */
#ifndef ODBC_LEADER_FENCE_H
#define ODBC_LEADER_FENCE_H

#include <stddef.h>

#include "dialect.h"

/*
 * Writes the fence predicate of dialect d into out (len bytes,
 * NUL-terminated, cut as snprintf cuts): the SELECT that goes inside
 * "AND EXISTS ( ... )", "?" for its parameters, the namespace then the
 * term. Returns its length (>= len: out was too short; out may be NULL
 * with len 0), or ODBC_LEADER_EDIALECT with a message in err when d has
 * no fence statement or binds other parameters, or these in another order.
 * Borrows d.
 */
int odbc_leader__fence_sql(const struct odbc_leader__dialect *d, char *out,
                           size_t len, char *err, size_t errlen);

#endif /* ODBC_LEADER_FENCE_H */
