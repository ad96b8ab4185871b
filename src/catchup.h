/* SPDX-License-Identifier: MIT */
/*
 * catchup.h: what the handles read for the catch-up policy (catchup.c,
 * docs/catch-up.md). The policy itself is public: odbc_leader_catch_up_*.
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_CATCHUP_H
#define ODBC_LEADER_CATCHUP_H

#include <stdint.h>

#include "odbc_leader.h"

/* One job's row of a jobs listing, as the policy needs it: the ledger's
 * latest nominal time of job (0: none) and the database clock then. */
struct odbc_leader__last_fire {
    const char *job; /* borrowed: the job looked for */
    int64_t last_ms;
    int64_t now_ms;
};

/* odbc_leader_job_fn for odbc_leader__db_jobs(): keeps, in ctx (a struct
 * odbc_leader__last_fire), the database clock of any row and the latest
 * nominal time of the row of its job. */
void odbc_leader__keep_last_fire(void *ctx, const struct odbc_leader_job *j);

#endif /* ODBC_LEADER_CATCHUP_H */
