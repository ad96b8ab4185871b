/* SPDX-License-Identifier: MIT */
/*
 * fence.c: the fence predicate a dialect gives jobs (docs/fencing.md): the
 * dialect's fence statement, checked to bind the namespace and then the
 * term, which is what every binding and the fence command promise their
 * callers. The handles hand it out (odbc_leader_fence_sql()), so a
 * binding needs no odbc-leader command to fence.
 */
#include <build_config.h>

#include <stdio.h>
#include <string.h>

#include "fence.h"
#include "log.h"

int odbc_leader__fence_sql(const struct odbc_leader__dialect *d, char *out,
                           size_t len, char *err, size_t errlen) {
    const struct odbc_leader__stmt_list *l = &d->ops[ODBC_LEADER__OP_FENCE];
    const struct odbc_leader__stmt *st = l->n == 1 ? &l->v[0] : NULL;

    if (st == NULL) {
        odbc_leader__errf(err, errlen,
                          "dialect %s (schema version %d) has no fence "
                          "statement",
                          d->name, d->schema_version);
        return ODBC_LEADER_EDIALECT;
    }
    if (st->nparams != 2 || st->params[0] != ODBC_LEADER__P_NS ||
        st->params[1] != ODBC_LEADER__P_TERM) {
        odbc_leader__errf(err, errlen,
                          "dialect %s: its fence statement (line %d) must "
                          "bind :ns and then :term, once each",
                          d->name, st->line);
        return ODBC_LEADER_EDIALECT;
    }
    return snprintf(out, len, "%s", st->sql);
}
