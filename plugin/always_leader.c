/* SPDX-License-Identifier: MIT */
/*
 * always_leader.c: a leader_plugin with no database behind it, for hosts'
 * own tests. With LeaderMode=always (the default) the instance becomes
 * leader of term 1 at its first tick and stays leader; with
 * LeaderMode=never it stays a follower that knows of no leader. Claims
 * (ABI 1.1) are kept in memory, per instance: each fire is claimed once
 * within the process, and never by an instance that does not lead.
 */
#ifdef HAVE_CONFIG_H
#include <build_config.h>
#endif

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include "leader_plugin.h"
#include "odbc_leader.h" /* the first-pass rule (src/firstpass.c) */

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0"
#endif

#define TICK_MS 1000
#define LEADER_ID "always_leader"

enum always_leader_error {
    AL_OK = 0,
    AL_ECONFIG = -1,
    AL_ENOMEM = -2,
    AL_EINVAL = -3,
    AL_ENOFIRE = -4,
    AL_EABI = LEADER_PLUGIN_EABI,
    AL_ENOTLEADER = LEADER_PLUGIN_ENOTLEADER,
};

/* One claimed fire. */
struct al_fire {
    char *job; /* owned */
    int64_t fire_ms;
    int finished;
    int status;
};

struct always_leader {
    void *ctx; /* borrowed from the host */
    void (*log)(void *ctx, int syslog_level, const char *msg);
    void (*on_change)(void *ctx, int is_leader, int64_t term,
                      const char *leader_id);
    int leader_mode;       /* 1 always, 0 never */
    int ticked;            /* set by the first tick */
    struct al_fire *fires; /* owned: the claims, in claim order */
    size_t nfires, capfires;
};

/* Formats a message into err when err and errlen allow it. */
__attribute__((format(printf, 3, 4))) static void
set_err(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;

    if (err == NULL || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Narrows [*s, *s + *len) so it has no leading or trailing blanks. */
static void trim(const char **s, size_t *len) {
    while (*len > 0 && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*len)--;
    }
    while (*len > 0 && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
        (*len)--;
}

/* 1 when the len bytes at s equal word, ignoring case, else 0. */
static int span_is(const char *s, size_t len, const char *word) {
    return strlen(word) == len && strncasecmp(s, word, len) == 0;
}

/*
 * Parses one "Key=Value" item of len bytes at s (borrowed) into
 * *leader_mode. Blank items are allowed. Returns 0 or AL_ECONFIG with a
 * message in err.
 */
static int parse_item(const char *s, size_t len, int *leader_mode, char *err,
                      size_t errlen) {
    const char *eq = memchr(s, '=', len);
    const char *key = s, *val;
    size_t klen = len, vlen;

    if (eq == NULL) {
        trim(&key, &klen);
        if (klen == 0)
            return AL_OK;
        set_err(err, errlen, "always_leader: expected Key=Value, got \"%.*s\"",
                (int)klen, key);
        return AL_ECONFIG;
    }
    klen = (size_t)(eq - s);
    val = eq + 1;
    vlen = len - klen - 1;
    trim(&key, &klen);
    trim(&val, &vlen);
    if (!span_is(key, klen, "LeaderMode")) {
        set_err(
            err, errlen,
            "always_leader: unknown key \"%.*s\" (only LeaderMode is known)",
            (int)klen, key);
        return AL_ECONFIG;
    }
    if (span_is(val, vlen, "always")) {
        *leader_mode = 1;
    } else if (span_is(val, vlen, "never")) {
        *leader_mode = 0;
    } else {
        set_err(err, errlen,
                "always_leader: LeaderMode must be always or never, not "
                "\"%.*s\"",
                (int)vlen, val);
        return AL_ECONFIG;
    }
    return AL_OK;
}

/*
 * Parses a ';'-separated config string (borrowed; NULL means empty) into
 * *leader_mode, default 1. Returns 0 or AL_ECONFIG with a message in err.
 */
static int parse_config(const char *config, int *leader_mode, char *err,
                        size_t errlen) {
    const char *p = config != NULL ? config : "";
    int rc = AL_OK;

    *leader_mode = 1;
    while (*p != '\0' && rc == AL_OK) {
        size_t len = strcspn(p, ";");

        rc = parse_item(p, len, leader_mode, err, errlen);
        p += len;
        if (*p == ';')
            p++;
    }
    return rc;
}

/*
 * Creates an instance from config, copying the callbacks the host built
 * with (host may be NULL). Returns 0 with the new instance, owned by the
 * caller until shutdown, in *inst; or a negative code, *inst NULL and a
 * message in err.
 */
static int al_init(const char *config, const struct leader_host *host,
                   void **inst, char *err, size_t errlen) {
    struct always_leader *al = NULL;
    int mode = 1;
    int rc;

    if (inst == NULL) {
        set_err(err, errlen, "always_leader: inst is NULL");
        return AL_EINVAL;
    }
    *inst = NULL;
    rc = parse_config(config, &mode, err, errlen);
    if (rc < 0)
        goto fail;
    al = calloc(1, sizeof(*al));
    if (al == NULL) {
        set_err(err, errlen, "always_leader: out of memory");
        rc = AL_ENOMEM;
        goto fail;
    }
    al->leader_mode = mode;
    if (LEADER_HOST_HAS(host, ctx))
        al->ctx = host->ctx;
    if (LEADER_HOST_HAS(host, log))
        al->log = host->log;
    if (LEADER_HOST_HAS(host, on_change))
        al->on_change = host->on_change;
    if (al->log != NULL)
        al->log(al->ctx, LOG_INFO,
                mode ? "always_leader: LeaderMode=always"
                     : "always_leader: LeaderMode=never");
    *inst = al;
    return AL_OK;
fail:
    free(al);
    return rc;
}

/* 1 when inst (borrowed) leads: after its first tick in mode always. */
static int al_is_leader(const void *inst) {
    const struct always_leader *al = inst;

    return al != NULL && al->ticked && al->leader_mode;
}

/* The term led (1) or 0 when not leader. */
static int64_t al_term(const void *inst) { return al_is_leader(inst) ? 1 : 0; }

/*
 * One step: the first one announces the state through on_change.
 * Returns 1 leader, 0 follower, or AL_EINVAL for a NULL inst; sets
 * *next_tick_ms (when not NULL) to 1000.
 */
static int al_tick(void *inst, uint32_t *next_tick_ms) {
    struct always_leader *al = inst;

    if (next_tick_ms != NULL)
        *next_tick_ms = TICK_MS;
    if (al == NULL)
        return AL_EINVAL;
    if (!al->ticked) {
        al->ticked = 1;
        if (al->on_change != NULL)
            al->on_change(al->ctx, al_is_leader(al), al_term(al),
                          al->leader_mode ? LEADER_ID : NULL);
    }
    return al_is_leader(al);
}

/* The claim of (job, fire_ms) in al, or NULL. Linear: a test plugin. */
static struct al_fire *al_find(struct always_leader *al, const char *job,
                               int64_t fire_ms) {
    for (size_t i = al->nfires; i > 0; i--) {
        struct al_fire *f = &al->fires[i - 1];

        if (f->fire_ms == fire_ms && strcmp(f->job, job) == 0)
            return f;
    }
    return NULL;
}

/* ABI 1.1 claim, in memory: 1 the first time a leading instance claims
 * (job, fire_ms), 0 after, AL_ENOTLEADER when not leading. */
static int al_claim(void *inst, const char *job, int64_t fire_ms) {
    struct always_leader *al = inst;
    struct al_fire *f;

    if (al == NULL || job == NULL || job[0] == '\0' || fire_ms < 0)
        return AL_EINVAL;
    if (!al_is_leader(al))
        return AL_ENOTLEADER;
    if (al_find(al, job, fire_ms) != NULL)
        return 0;
    if (al->nfires == al->capfires) {
        size_t cap = al->capfires ? 2 * al->capfires : 16;
        f = realloc(al->fires, cap * sizeof(*f));
        if (f == NULL)
            return AL_ENOMEM;
        al->fires = f;
        al->capfires = cap;
    }
    f = &al->fires[al->nfires];
    memset(f, 0, sizeof(*f));
    f->job = strdup(job);
    if (f->job == NULL)
        return AL_ENOMEM;
    f->fire_ms = fire_ms;
    al->nfires++;
    return 1;
}

/* ABI 1.1 finish: records status once; AL_ENOFIRE for an unclaimed fire. */
static int al_finish(void *inst, const char *job, int64_t fire_ms, int status) {
    struct always_leader *al = inst;
    struct al_fire *f;

    if (al == NULL || job == NULL)
        return AL_EINVAL;
    f = al_find(al, job, fire_ms);
    if (f == NULL)
        return AL_ENOFIRE;
    if (!f->finished) {
        f->finished = 1;
        f->status = status;
    }
    return AL_OK;
}

/* ABI 1.1 leadership: term 1 with an endless window while leading. */
static int64_t al_leadership(const void *inst, uint32_t *valid_for_ms) {
    int64_t term = al_term(inst);

    if (valid_for_ms != NULL)
        *valid_for_ms = term != 0 ? UINT32_MAX : 0;
    return term;
}

/* Frees inst (owned by the caller until now); NULL is a no-op. */
static void al_shutdown(void *inst) {
    struct always_leader *al = inst;

    if (al == NULL)
        return;
    for (size_t i = 0; i < al->nfires; i++)
        free(al->fires[i].job);
    free(al->fires);
    free(al);
}

/* A static message for one of this plugin's codes; never NULL. */
static const char *al_strerror(int rc) {
    switch ((enum always_leader_error)rc) {
    case AL_OK:
        return "success";
    case AL_ECONFIG:
        return "bad configuration";
    case AL_ENOMEM:
        return "out of memory";
    case AL_EINVAL:
        return "invalid argument";
    case AL_ENOFIRE:
        return "no such fire claimed by this instance";
    case AL_EABI:
        return "unsupported plugin ABI major version";
    case AL_ENOTLEADER:
        return "not the leader";
    }
    return "unknown error";
}

/* ABI 1.2: every instance is named "always_leader". */
static const char *al_candidate_id(const void *inst) {
    (void)inst;
    return "always_leader";
}

/* ABI 1.2: what a host does about one of this plugin's codes. */
static int al_error_class(int rc) {
    switch ((enum always_leader_error)rc) {
    case AL_OK:
        return 0;
    case AL_ECONFIG:
        return LEADER_PLUGIN_CLASS_CONFIG;
    case AL_ENOTLEADER:
        return LEADER_PLUGIN_CLASS_TRANSIENT;
    case AL_ENOMEM:
    case AL_EINVAL:
    case AL_ENOFIRE:
    case AL_EABI:
        return LEADER_PLUGIN_CLASS_FATAL;
    }
    return rc < 0 ? LEADER_PLUGIN_CLASS_FATAL : 0;
}

static const struct leader_plugin always_leader_plugin = {
    .struct_size = sizeof(struct leader_plugin),
    .abi_major = LEADER_PLUGIN_ABI_MAJOR,
    .abi_minor = LEADER_PLUGIN_ABI_MINOR,
    .name = "always_leader",
    .version = PACKAGE_VERSION,
    .init = al_init,
    .tick = al_tick,
    .is_leader = al_is_leader,
    .shutdown = al_shutdown,
    .term = al_term,
    .strerror = al_strerror,
    .claim = al_claim,
    .finish = al_finish,
    .leadership = al_leadership,
    .candidate_id = al_candidate_id,
    .error_class = al_error_class,
    .second_pass = odbc_leader_second_pass, /* ABI 1.8: src/firstpass.c */
    .first_pass_next = odbc_leader_first_pass_next,
};

/* Sets *out to the plugin table (static) for host major 1; otherwise
 * sets *out to NULL and returns LEADER_PLUGIN_EABI. */
int leader_plugin_entry(uint16_t host_abi_major,
                        const struct leader_plugin **out) {
    if (out == NULL)
        return AL_EINVAL;
    *out = NULL;
    if (host_abi_major != LEADER_PLUGIN_ABI_MAJOR)
        return LEADER_PLUGIN_EABI;
    *out = &always_leader_plugin;
    return AL_OK;
}
