/* SPDX-License-Identifier: MIT */
/*
 * abi10_plugin.c: a leader_plugin as a plugin built against ABI 1.0 sees
 * it (struct_size ends before claim, no claim, finish or leadership), for
 * minicron.test: it leads, in term 7, from its first tick on. A host must
 * load it and fall back to its 1.0 behaviour. minicron.test compiles it
 * with $OL_CC into a shared object; it is not built by make.
 * Built with -DABI10_MINOR=2 it is a plugin of ABI 1.2 instead (claim,
 * finish, leadership, candidate_id, error_class, last_error; no groups):
 * node.test loads both.
 */
#include <stddef.h>
#include <stdint.h>

#include "leader_plugin.h"

#define TERM 7
#define TICK_MS 500
#ifndef ABI10_MINOR
#define ABI10_MINOR 0
#endif

/* The only state: whether the instance has ticked. */
struct abi10 {
    int ticked;
};

/* Allocates nothing: the instance is the caller's static. */
static int a_init(const char *config, const struct leader_host *host,
                  void **inst, char *err, size_t errlen) {
    static struct abi10 one;

    (void)config;
    (void)host;
    (void)err;
    (void)errlen;
    one.ticked = 0;
    *inst = &one;
    return 0;
}

/* Leads from the first tick on. Returns 1. */
static int a_tick(void *inst, uint32_t *next_tick_ms) {
    struct abi10 *a = inst;

    a->ticked = 1;
    *next_tick_ms = TICK_MS;
    return 1;
}

/* 1 once ticked. */
static int a_is_leader(const void *inst) {
    const struct abi10 *a = inst;

    return a != NULL && a->ticked;
}

/* Nothing to free. */
static void a_shutdown(void *inst) { (void)inst; }

/* TERM once ticked, else 0. */
static int64_t a_term(const void *inst) { return a_is_leader(inst) ? TERM : 0; }

/* A static message; never NULL. */
static const char *a_strerror(int rc) {
    (void)rc;
    return "abi10 plugin error";
}

#if ABI10_MINOR >= 2
/* 1 the first time a fire is claimed, 0 after: a ledger of one fire. */
static int a_claim(void *inst, const char *job, int64_t fire_ms) {
    static int64_t last = -1;

    (void)job;
    if (!a_is_leader(inst))
        return LEADER_PLUGIN_ENOTLEADER;
    if (fire_ms == last)
        return 0;
    last = fire_ms;
    return 1;
}

/* Always recorded. */
static int a_finish(void *inst, const char *job, int64_t fire_ms,
                    int status) {
    (void)inst;
    (void)job;
    (void)fire_ms;
    (void)status;
    return 0;
}

/* TERM and a second of trust once ticked. */
static int64_t a_leadership(const void *inst, uint32_t *valid_for_ms) {
    if (valid_for_ms != NULL)
        *valid_for_ms = a_is_leader(inst) ? 1000 : 0;
    return a_term(inst);
}

/* A fixed id. */
static const char *a_candidate_id(const void *inst) {
    (void)inst;
    return "abi12";
}

/* Every negative code is transient. */
static int a_error_class(int rc) {
    return rc < 0 ? LEADER_PLUGIN_CLASS_TRANSIENT : 0;
}

/* No call ever fails. */
static int a_last_error(const void *inst, int *error_class, char *sqlstate,
                        long *native, char *msg, size_t msglen) {
    (void)inst;
    if (error_class != NULL)
        *error_class = 0;
    if (sqlstate != NULL)
        sqlstate[0] = '\0';
    if (native != NULL)
        *native = 0;
    if (msg != NULL && msglen > 0)
        msg[0] = '\0';
    return 0;
}
#endif

static const struct leader_plugin abi10_plugin = {
#if ABI10_MINOR >= 2
    .struct_size = offsetof(struct leader_plugin, shards),
#else
    .struct_size = offsetof(struct leader_plugin, claim),
#endif
    .abi_major = 1,
    .abi_minor = ABI10_MINOR,
    .name = "abi10",
    .version = "1.0",
    .init = a_init,
    .tick = a_tick,
    .is_leader = a_is_leader,
    .shutdown = a_shutdown,
    .term = a_term,
    .strerror = a_strerror,
#if ABI10_MINOR >= 2
    .claim = a_claim,
    .finish = a_finish,
    .leadership = a_leadership,
    .candidate_id = a_candidate_id,
    .error_class = a_error_class,
    .last_error = a_last_error,
#endif
};

/* Sets *out to the table for host major 1; refuses any other major. */
int leader_plugin_entry(uint16_t host_abi_major,
                        const struct leader_plugin **out) {
    if (host_abi_major != LEADER_PLUGIN_ABI_MAJOR)
        return LEADER_PLUGIN_EABI;
    *out = &abi10_plugin;
    return 0;
}
