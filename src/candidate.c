/* SPDX-License-Identifier: MIT */
/*
 * candidate.c: the candidate a state machine runs, from its configuration
 * (candidate.h).
 */
#include <build_config.h>

#include <string.h>

#include "candidate.h"
#include "clock.h"

#define NS_PER_MS INT64_C(1000000)

void odbc_leader__candidate_init(struct odbc_leader__candidate *k,
                                 const struct odbc_leader__candidate_conf *c) {
    memset(k, 0, sizeof(*k));
    k->now_ns = c->now_ns != NULL ? c->now_ns : odbc_leader__now_ns;
    k->clock_ctx = c->clock_ctx;
    if (c->log != NULL)
        k->log = *c->log;
    if (c->cb != NULL)
        k->cb = *c->cb;
    k->id = c->id;
    k->ttl_ns = c->ttl_ms * NS_PER_MS;
    k->renew_ns = c->renew_ms * NS_PER_MS;
    k->margin_ns = c->margin_ms * NS_PER_MS;
    k->trust_extra_ns = c->test_trust_extra_ms * NS_PER_MS;
}
