/* SPDX-License-Identifier: MIT */
/*
 * abi10_plugin.c: a leader_plugin as a plugin built against ABI 1.0 sees
 * it (struct_size ends before claim, no claim, finish or leadership), for
 * minicron.test: it leads, in term 7, from its first tick on. A host must
 * load it and fall back to its 1.0 behaviour. minicron.test compiles it
 * with $OL_CC into a shared object; it is not built by make.
 */
#include <stddef.h>
#include <stdint.h>

#include "leader_plugin.h"

#define TERM 7
#define TICK_MS 500

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

static const struct leader_plugin abi10_plugin = {
    .struct_size = offsetof(struct leader_plugin, claim),
    .abi_major = 1,
    .abi_minor = 0,
    .name = "abi10",
    .version = "1.0",
    .init = a_init,
    .tick = a_tick,
    .is_leader = a_is_leader,
    .shutdown = a_shutdown,
    .term = a_term,
    .strerror = a_strerror,
};

/* Sets *out to the table for host major 1; refuses any other major. */
int leader_plugin_entry(uint16_t host_abi_major,
                        const struct leader_plugin **out) {
    if (host_abi_major != LEADER_PLUGIN_ABI_MAJOR)
        return LEADER_PLUGIN_EABI;
    *out = &abi10_plugin;
    return 0;
}
