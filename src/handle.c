/* SPDX-License-Identifier: MIT */
/*
 * handle.c: what the two public handles (leader.c: one namespace;
 * group.c: a group of shards) share: copying the host's callbacks and
 * recording the last error.
 */
#include <build_config.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "db.h"
#include "error.h"
#include "handle.h"
#include "log.h"

/* The size of the callbacks struct up to and including member m. */
#define CB_END(m)                                                              \
    (offsetof(struct odbc_leader_callbacks, m) +                               \
     sizeof(((struct odbc_leader_callbacks *)0)->m))

/* Copies the host's callbacks (cb, borrowed; may be NULL) into *dst at this
 * library's size: members past cb->struct_size (a host built against an
 * older, shorter struct) stay NULL, members past this library's struct (a
 * newer host) are ignored; only whole members are read. Returns 0, or
 * ODBC_LEADER_EINVAL with a message in err when struct_size does not even cover
 * ctx. */
int odbc_leader__copy_callbacks(struct odbc_leader_callbacks *dst,
                                const struct odbc_leader_callbacks *cb,
                                char *err, size_t errlen) {
    memset(dst, 0, sizeof(*dst));
    dst->struct_size = sizeof(*dst);
    if (cb == NULL)
        return 0;
    if (cb->struct_size < CB_END(ctx)) {
        odbc_leader__errf(err, errlen,
                          "struct odbc_leader_callbacks: struct_size is %u; "
                          "set it to sizeof(struct odbc_leader_callbacks)",
                          (unsigned)cb->struct_size);
        return ODBC_LEADER_EINVAL;
    }
    dst->ctx = cb->ctx;
    if (cb->struct_size >= CB_END(log))
        dst->log = cb->log;
    if (cb->struct_size >= CB_END(on_change))
        dst->on_change = cb->on_change;
    if (cb->struct_size >= CB_END(on_shard_change))
        dst->on_shard_change = cb->on_shard_change;
    return 0;
}

/* See handle.h. */
int odbc_leader__note_error(struct odbc_leader__db *db,
                            struct odbc_leader_error_info *last, int rc) {
    struct odbc_leader__diag d;

    if (rc >= 0 || rc == ODBC_LEADER_EBACKOFF)
        return rc;
    odbc_leader__db_diag(db, &d);
    memset(last, 0, sizeof(*last));
    last->code = rc;
    last->native = d.native;
    memcpy(last->sqlstate, d.sqlstate, sizeof(last->sqlstate));
    snprintf(last->message, sizeof(last->message), "%s",
             d.sqlstate[0] != '\0' ? d.message : odbc_leader_strerror(rc));
    last->error_class = d.errclass == ODBC_LEADER__ERR_TRANSIENT
                            ? ODBC_LEADER_CLASS_TRANSIENT
                            : odbc_leader__error_class_refined(rc, d.sqlstate);
    return rc;
}
