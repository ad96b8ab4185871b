/* SPDX-License-Identifier: MIT */
/*
 * minicron_plugin.c: minicron's side of leader_plugin.h: loading the
 * plugin with dlopen(), ticking it on the schedule it asks for, and asking
 * it which term this process leads, for the whole namespace or for one
 * job's shard in a group.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "minicron.h"

#define DEFAULT_TICK_MS 1000 /* when a plugin leaves next_tick_ms alone */

/* dlopen()s path and returns its plugin table (static in the plugin), or
 * NULL after logging why. *dl gets the handle to dlclose(). A 1.0 table
 * (up to strerror) is enough; claim and finish are used when present. */
const struct leader_plugin *load(const struct minicron *mc, const char *path,
                                 void **dl) {
    const struct leader_plugin *p = NULL;
    leader_plugin_entry_fn entry;
    int rc;

    /* RTLD_NODELETE: a plugin built on unixODBC must stay mapped, as the
     * driver manager keeps state in globals it never frees. */
    *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (*dl == NULL) {
        say(mc, LOG_ERR, "%s", dlerror());
        return NULL;
    }
    entry = (leader_plugin_entry_fn)dlsym(*dl, "leader_plugin_entry");
    if (entry == NULL) {
        say(mc, LOG_ERR, "%s: no leader_plugin_entry", path);
        return NULL;
    }
    rc = entry(LEADER_PLUGIN_ABI_MAJOR, &p);
    if (rc < 0 || !LEADER_PLUGIN_HAS(p, strerror)) {
        say(mc, LOG_ERR, "%s refuses plugin ABI %d (%d)", path,
            LEADER_PLUGIN_ABI_MAJOR, rc);
        return NULL;
    }
    return p;
}

/* The term this process leads by the plugin's word, 0 when it does not
 * lead: leadership() in one call when the plugin has it, else
 * is_leader() and term(). */
int64_t led_term(const struct minicron *mc) {
    uint32_t valid_for_ms = 0;
    int64_t term;

    if (LEADER_PLUGIN_HAS(mc->p, leadership))
        return mc->p->leadership(mc->inst, &valid_for_ms);
    term = mc->p->term(mc->inst);
    return mc->p->is_leader(mc->inst) && term > 0 ? term : 0;
}

/* The term under which this process may run the job named name
 * (borrowed): in a group, the term of the job's shard; else the term led.
 * 0 when it may not. */
int64_t job_term(const struct minicron *mc, const char *name) {
    if (mc->shards == 0)
        return led_term(mc);
    return mc->p->shard_leadership(mc->inst, mc->p->shard_of(mc->inst, name),
                                   NULL);
}

/* One election step; logs a tick error when it differs from the last.
 * After a good tick, retries the finish() calls that failed. */
void tick(struct minicron *mc) {
    uint32_t next = DEFAULT_TICK_MS;
    int rc = mc->p->tick(mc->inst, &next);

    if (rc < 0 && (mc->last_err == NULL ||
                   strcmp(mc->last_err, mc->p->strerror(rc)) != 0)) {
        mc->last_err = mc->p->strerror(rc);
        say(mc, LOG_WARNING, "tick: %s", mc->last_err);
    } else if (rc >= 0) {
        mc->last_err = NULL;
    }
    mc->next_tick_ns = clock_ns(CLOCK_MONOTONIC) + next * NS_PER_MS;
    if (rc >= 0 && mc->n_pending > 0)
        retry_finishes(mc);
}
