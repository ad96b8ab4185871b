/* SPDX-License-Identifier: MIT */
/*
 * handle.h: what the two public handles share (handle.c).
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_HANDLE_H
#define ODBC_LEADER_HANDLE_H

#include <stddef.h>

#include "db.h"
#include "odbc_leader.h"

/* Copies the host's callbacks (cb, borrowed; may be NULL) into *dst at this
 * library's size: members past cb->struct_size (a host built against an
 * older, shorter struct) stay NULL, members past this library's struct (a
 * newer host) are ignored; only whole members are read. Returns 0, or
 * ODBC_LEADER_EINVAL with a message in err when struct_size does not even
 * cover ctx. */
int odbc_leader__copy_callbacks(struct odbc_leader_callbacks *dst,
                                const struct odbc_leader_callbacks *cb,
                                char *err, size_t errlen);

/* Records a failed call's rc in *last, with the driver's diagnostic from
 * db when the failure came from the driver; EBACKOFF keeps the failure it
 * waits after, and rc >= 0 changes nothing. Returns rc. */
int odbc_leader__note_error(struct odbc_leader__db *db,
                            struct odbc_leader_error_info *last, int rc);

/* Points h's reads (odbc_leader_read_lease, odbc_leader_list_candidates,
 * _list_shards, _list_fires, _list_elections) and odbc_leader_namespace()
 * at namespace ns: one connection reads many namespaces (odbc-leader
 * serve). Only for a handle that never ticks. Returns 0, or
 * ODBC_LEADER_EINVAL for a bad handle or name. ns is borrowed for the
 * call. */
int odbc_leader__read_namespace(odbc_leader_t *h, const char *ns);

#endif /* ODBC_LEADER_HANDLE_H */
