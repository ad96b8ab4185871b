/* SPDX-License-Identifier: MIT */
/*
 * test_abi.c: checks that leader_plugin shared objects honour the ABI of
 * plugin/leader_plugin.h, the way a host would use them.
 *
 * Usage: test_abi [PLUGIN.so...]; without arguments the paths come from
 * the space-separated env var OL_PLUGINS. The init config of a plugin is
 * the env var OL_ABI_CONFIG_<name>, <name> being the file's basename
 * without ".so" (other characters than [A-Za-z0-9_] become '_'), e.g.
 * OL_ABI_CONFIG_always_leader="LeaderMode=always". The config must make
 * the plugin able to become leader within about ten seconds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <dlfcn.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "leader_plugin.h"

/* RTLD_NODELETE: unloading the plugin would unload unixODBC, whose caches
 * live in globals with no destructor; valgrind would then report them as
 * lost and hide the plugin's own leaks among them. */
#define DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)
#define MAX_PLUGINS 16
#define MAX_TICKS 50
#define MAX_SLEEP_MS 200

/* The ELF class of this process, which is the one dlopen() accepts. */
#if UINTPTR_MAX > 0xffffffffu
#define NATIVE_CLASS ELFCLASS64
typedef Elf64_Ehdr ehdr_t;
typedef Elf64_Shdr shdr_t;
typedef Elf64_Sym sym_t;
#define SYM_BIND ELF64_ST_BIND
#define SYM_TYPE ELF64_ST_TYPE
#define SYM_VIS ELF64_ST_VISIBILITY
#else
#define NATIVE_CLASS ELFCLASS32
typedef Elf32_Ehdr ehdr_t;
typedef Elf32_Shdr shdr_t;
typedef Elf32_Sym sym_t;
#define SYM_BIND ELF32_ST_BIND
#define SYM_TYPE ELF32_ST_TYPE
#define SYM_VIS ELF32_ST_VISIBILITY
#endif

/* One plugin under test; both strings are borrowed from argv or env. */
struct plugin_case {
    const char *path;
    const char *config;
};

/* What the host callbacks saw. */
struct recorder {
    int changes; /* on_change calls */
    int last_is_leader;
    int64_t last_term;
    char last_leader[129]; /* leader_id of the last on_change, "" = none */
    int logs;              /* log calls */
};

/* A view of a .so's dynamic symbol table, borrowing the file image. */
struct dynsym {
    const sym_t *syms;
    size_t count;
    const char *strtab;
    size_t strsize;
};

/* Sleeps ms milliseconds. */
static void sleep_ms(uint32_t ms) {
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* Host log callback: counts and prints the message for the test log. */
static void record_log(void *ctx, int level, const char *msg) {
    struct recorder *r = ctx;

    r->logs++;
    print_message("  [plugin log %d] %s\n", level, msg ? msg : "(null)");
}

/* Host on_change callback: counts and remembers the last state. */
static void record_change(void *ctx, int is_leader, int64_t term,
                          const char *leader_id) {
    struct recorder *r = ctx;

    r->changes++;
    r->last_is_leader = is_leader;
    r->last_term = term;
    snprintf(r->last_leader, sizeof(r->last_leader), "%s",
             leader_id != NULL ? leader_id : "");
    print_message("  [on_change] is_leader=%d term=%lld leader=%s\n", is_leader,
                  (long long)term, leader_id ? leader_id : "(none)");
}

/* Reads a whole file into a new buffer. Returns 0 with *buf (owned by
 * the caller) and *size, or -1. */
static int read_file(const char *path, unsigned char **buf, size_t *size) {
    FILE *f = fopen(path, "rb");
    long len;
    int rc = -1;

    *buf = NULL;
    if (f == NULL)
        return -1;
    if (fseek(f, 0, SEEK_END) != 0)
        goto out;
    len = ftell(f);
    if (len <= 0 || fseek(f, 0, SEEK_SET) != 0)
        goto out;
    *buf = malloc((size_t)len);
    if (*buf == NULL)
        goto out;
    *size = (size_t)len;
    if (fread(*buf, 1, *size, f) == *size)
        rc = 0;
out:
    if (rc != 0) {
        free(*buf);
        *buf = NULL;
    }
    fclose(f);
    return rc;
}

/* 1 when [off, off + len) lies inside a file of size bytes, else 0. */
static int in_file(size_t size, uint64_t off, uint64_t len) {
    return off <= size && len <= size - off;
}

/* Finds the section of type SHT_DYNSYM and its string table in the file
 * image img (borrowed, size bytes). Returns 0 and fills *out (borrowing
 * img), or -1 when the image is not a sane native ELF with a .dynsym. */
static int find_dynsym(const unsigned char *img, size_t size,
                       struct dynsym *out) {
    const ehdr_t *eh = (const void *)img;
    const shdr_t *sh, *str;
    size_t i;

    if (size < sizeof(*eh) || memcmp(img, ELFMAG, SELFMAG) != 0 ||
        img[EI_CLASS] != NATIVE_CLASS || eh->e_shentsize != sizeof(*sh) ||
        !in_file(size, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(*sh)))
        return -1;
    sh = (const void *)(img + eh->e_shoff);
    for (i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM)
            continue;
        if (sh[i].sh_entsize != sizeof(sym_t) || sh[i].sh_link >= eh->e_shnum)
            return -1;
        str = &sh[sh[i].sh_link];
        if (!in_file(size, sh[i].sh_offset, sh[i].sh_size) ||
            !in_file(size, str->sh_offset, str->sh_size))
            return -1;
        out->syms = (const void *)(img + sh[i].sh_offset);
        out->count = sh[i].sh_size / sizeof(sym_t);
        out->strtab = (const char *)img + str->sh_offset;
        out->strsize = str->sh_size;
        return 0;
    }
    return -1;
}

/* 1 when the symbol is defined here and visible to other objects. */
static int is_export(const sym_t *s) {
    int bind = SYM_BIND(s->st_info), type = SYM_TYPE(s->st_info);
    int vis = SYM_VIS(s->st_other);

    return s->st_shndx != SHN_UNDEF &&
           (bind == STB_GLOBAL || bind == STB_WEAK) &&
           (type == STT_FUNC || type == STT_OBJECT || type == STT_TLS ||
            type == STT_GNU_IFUNC) &&
           (vis == STV_DEFAULT || vis == STV_PROTECTED);
}

/* Writes the names of the .so's exported symbols, space-separated, into
 * names (truncated to len). Returns their number, or -1 when the file
 * cannot be read or parsed. */
static int list_exports(const char *path, char *names, size_t len) {
    unsigned char *img = NULL;
    size_t size = 0, i, used = 0;
    struct dynsym ds;
    int n = -1;

    names[0] = '\0';
    if (read_file(path, &img, &size) != 0 || find_dynsym(img, size, &ds) != 0)
        goto out;
    n = 0;
    for (i = 0; i < ds.count; i++) {
        const sym_t *s = &ds.syms[i];
        const char *name = "?";

        if (!is_export(s))
            continue;
        if (s->st_name < ds.strsize &&
            memchr(ds.strtab + s->st_name, '\0', ds.strsize - s->st_name))
            name = ds.strtab + s->st_name;
        n++;
        if (used < len)
            used += (size_t)snprintf(names + used, len - used, "%s%s",
                                     used ? " " : "", name);
    }
out:
    free(img);
    return n;
}

/* dlopen()s the plugin and fetches its table for our major; fails the
 * test on any problem. Returns the dl handle (caller dlclose()s it). */
static void *load(const struct plugin_case *pc,
                  const struct leader_plugin **p) {
    void *dl = dlopen(pc->path, DLOPEN_FLAGS);
    leader_plugin_entry_fn entry;

    if (dl == NULL)
        fail_msg("dlopen(%s): %s", pc->path, dlerror());
    entry = (leader_plugin_entry_fn)dlsym(dl, "leader_plugin_entry");
    assert_non_null(entry);
    assert_int_equal(entry(LEADER_PLUGIN_ABI_MAJOR, p), 0);
    assert_non_null(*p);
    return dl;
}

/* Ticks until the instance leads (at most MAX_TICKS ticks, sleeping what
 * it asks, capped). Returns the number of ticks used; fails the test when
 * a tick errs, is_leader disagrees with tick, or term breaks its rule. */
static int tick_until_leader(const struct leader_plugin *p, void *inst) {
    int i, rc = 0;

    for (i = 1; i <= MAX_TICKS; i++) {
        uint32_t next = 0;

        rc = p->tick(inst, &next);
        if (rc < 0)
            fail_msg("tick %d: %d (%s)", i, rc, p->strerror(rc));
        assert_true(rc == 0 || rc == 1);
        assert_int_equal(p->is_leader(inst), rc);
        if (rc == 1)
            return i;
        assert_int_equal(p->term(inst), 0);
        sleep_ms(next < MAX_SLEEP_MS ? next : MAX_SLEEP_MS);
    }
    fail_msg("not leader after %d ticks", MAX_TICKS);
    return -1;
}

/* The .so exports leader_plugin_entry and nothing else. */
static void test_exports(void **state) {
    const struct plugin_case *pc = *state;
    char names[1024];
    void *dl = dlopen(pc->path, DLOPEN_FLAGS);
    int n;

    if (dl == NULL)
        fail_msg("dlopen(%s): %s", pc->path, dlerror());
    assert_non_null(dlsym(dl, "leader_plugin_entry"));
    dlclose(dl);
    n = list_exports(pc->path, names, sizeof(names));
    if (n < 0)
        fail_msg("%s: cannot read its ELF dynamic symbol table", pc->path);
    if (n != 1 || strcmp(names, "leader_plugin_entry") != 0)
        fail_msg("%s exports %d symbols: %s", pc->path, n, names);
}

/* The entry refuses other majors and leaves *out NULL. */
static void test_entry_refuses_other_major(void **state) {
    const struct plugin_case *pc = *state;
    const struct leader_plugin *p = NULL;
    void *dl = load(pc, &p);
    leader_plugin_entry_fn entry;
    static const uint16_t majors[] = {LEADER_PLUGIN_ABI_MAJOR + 1, 0, 0xffff};
    size_t i;

    entry = (leader_plugin_entry_fn)dlsym(dl, "leader_plugin_entry");
    for (i = 0; i < sizeof(majors) / sizeof(majors[0]); i++) {
        p = (const void *)&majors; /* any non-NULL value */
        assert_true(entry(majors[i], &p) < 0);
        assert_null(p);
    }
    dlclose(dl);
}

/* The table describes itself and has every member. */
static void test_table(void **state) {
    const struct plugin_case *pc = *state;
    const struct leader_plugin *p = NULL;
    void *dl = load(pc, &p);

    assert_true(p->struct_size >= sizeof(struct leader_plugin));
    assert_int_equal(p->abi_major, LEADER_PLUGIN_ABI_MAJOR);
    assert_non_null(p->name);
    assert_non_null(p->version);
    assert_non_null(p->init);
    assert_non_null(p->tick);
    assert_non_null(p->is_leader);
    assert_non_null(p->shutdown);
    assert_non_null(p->term);
    assert_non_null(p->strerror);
    assert_non_null(p->strerror(-1));
    print_message("  %s: name=%s version=%s abi=%u.%u\n", pc->path, p->name,
                  p->version, p->abi_major, p->abi_minor);
    dlclose(dl);
}

/* An unknown Leader* key makes init fail with a message. */
static void test_bad_config(void **state) {
    const struct plugin_case *pc = *state;
    const struct leader_plugin *p = NULL;
    struct recorder r = {0};
    struct leader_host host = {.struct_size = sizeof(host),
                               .ctx = &r,
                               .log = record_log,
                               .on_change = record_change};
    void *dl = load(pc, &p);
    void *inst = &r; /* must be reset to NULL */
    char config[4096], err[512] = "";
    int rc;

    snprintf(config, sizeof(config), "%s%sLeaderBogus=1", pc->config,
             pc->config[0] ? ";" : "");
    rc = p->init(config, &host, &inst, err, sizeof(err));
    assert_true(rc < 0);
    assert_null(inst);
    assert_true(err[0] != '\0');
    assert_non_null(p->strerror(rc));
    if (LEADER_PLUGIN_HAS(p, error_class)) /* ABI 1.2 */
        assert_int_equal(p->error_class(rc), LEADER_PLUGIN_CLASS_CONFIG);
    print_message("  bad config refused: %d (%s): %s\n", rc, p->strerror(rc),
                  err);
    assert_int_equal(r.changes, 0);
    dlclose(dl);
}

/* With the good config the instance becomes leader, says so through
 * on_change, has a term, and shuts down. */
static void test_elect(void **state) {
    const struct plugin_case *pc = *state;
    const struct leader_plugin *p = NULL;
    struct recorder r = {0};
    struct leader_host host = {.struct_size = sizeof(host),
                               .ctx = &r,
                               .log = record_log,
                               .on_change = record_change};
    void *dl = load(pc, &p);
    void *inst = NULL;
    char err[512] = "";
    int rc;

    rc = p->init(pc->config, &host, &inst, err, sizeof(err));
    if (rc != 0)
        fail_msg("init: %d: %s", rc, err);
    assert_non_null(inst);
    tick_until_leader(p, inst);
    assert_true(p->term(inst) > 0);
    assert_true(r.changes >= 1);
    assert_int_equal(r.last_is_leader, 1);
    assert_true(r.last_term == p->term(inst));
    assert_non_null(p->strerror(-1));
    if (LEADER_PLUGIN_HAS(p, candidate_id)) { /* ABI 1.2 */
        const char *id = p->candidate_id(inst);

        assert_non_null(id);
        assert_true(id[0] != '\0');
        if (r.last_leader[0] != '\0')
            assert_string_equal(id, r.last_leader);
    }
    p->shutdown(inst);
    p->shutdown(NULL);
    dlclose(dl);
}

/* tick always writes a usable delay: a NULL instance is an error whose
 * *next_tick_ms is not 0 (a host that sleeps what it says must not spin). */
static void test_tick_null(void **state) {
    const struct plugin_case *pc = *state;
    const struct leader_plugin *p = NULL;
    void *dl = load(pc, &p);
    uint32_t next = 0;

    assert_true(p->tick(NULL, &next) < 0);
    assert_true(next > 0);
    assert_true(p->tick(NULL, NULL) < 0);
    dlclose(dl);
}

/* ABI 1.5: the fence predicate, without I/O: its length first, then the
 * text with "?" for the namespace and the term. */
static void check_fence_sql(const struct leader_plugin *p, void *inst) {
    char buf[2048];
    int n = p->fence_sql(inst, NULL, 0), marks = 0;

    assert_true(n > 0 && (size_t)n < sizeof(buf));
    assert_int_equal(p->fence_sql(inst, buf, sizeof(buf)), n);
    assert_non_null(strstr(buf, "SELECT 1 FROM "));
    for (const char *c = buf; *c != '\0'; c++)
        marks += *c == '?';
    assert_int_equal(marks, 2);
    assert_true(p->fence_sql(NULL, buf, sizeof(buf)) < 0);
    print_message("  fence_sql: %d bytes\n", n);
}

/* ABI 1.6: a job's schedule identity (docs/schedules.md): the first claim
 * records it; a claim computed by another is refused with
 * LEADER_PLUGIN_ESCHEDULE, class CONFIG, last_error() naming both; a bad
 * zone is refused at once; the host's zone has a name. */
static void check_schedules(const struct leader_plugin *p, void *inst,
                            int64_t fire) {
    char msg[512] = "", zone[64] = "";
    int cls = 0;

    assert_int_equal(p->set_schedule(inst, "sj", "every 60s", "", "abi"), 0);
    assert_int_equal(p->claim(inst, "sj", fire), 1);
    assert_int_equal(p->set_schedule(inst, "sj", "every 30s", "", "abi"), 0);
    assert_int_equal(p->claim(inst, "sj", fire + 1), LEADER_PLUGIN_ESCHEDULE);
    assert_int_equal(p->last_error(inst, &cls, NULL, NULL, msg, sizeof(msg)),
                     LEADER_PLUGIN_ESCHEDULE);
    assert_int_equal(cls, LEADER_PLUGIN_CLASS_CONFIG);
    assert_int_equal(p->error_class(LEADER_PLUGIN_ESCHEDULE),
                     LEADER_PLUGIN_CLASS_CONFIG);
    assert_non_null(strstr(msg, "\"every 30s by abi\""));
    assert_non_null(strstr(msg, "\"every 60s by abi\""));
    assert_non_null(strstr(p->strerror(LEADER_PLUGIN_ESCHEDULE), "schedule"));
    assert_true(p->set_schedule(inst, "sj", "e", "local", "abi") < 0);
    assert_int_equal(p->set_schedule(inst, "sj", NULL, NULL, NULL), 0);
    assert_int_equal(p->claim(inst, "sj", fire + 2), 1); /* unchecked */
    assert_true(p->set_schedule(NULL, "sj", "e", "", "abi") < 0);
    assert_int_equal(p->local_zone(zone, sizeof(zone)), 0);
    assert_true(zone[0] != '\0');
    print_message("  schedules: refused as named; the host's zone: %s\n", zone);
}

/* ABI 1.7: the catch-up policy through the plugin, against the ledger:
 * nothing for a job with no fire; after a claim 40 s ago, the missed
 * times later than it, by policy, the grace on the database clock and
 * the present fire; a bad policy text refused; the pure selection. */
static void check_catch_up(const struct leader_plugin *p, void *inst,
                           int64_t fire) {
    int64_t t[] = {fire - 30000, fire - 20000, fire - 4000, fire - 2000};
    size_t first = 99;

    assert_int_equal(p->catch_up(inst, "cj", "all", 60000, 0, t, 4, &first), 0);
    assert_int_equal(p->claim(inst, "cj", fire - 40000), 1);
    assert_int_equal(p->catch_up(inst, "cj", "all", 60000, 0, t, 4, &first), 4);
    assert_int_equal(first, 0);
    assert_int_equal(p->catch_up(inst, "cj", "all:2", 60000, 0, t, 4, &first),
                     2);
    assert_int_equal(first, 2);
    assert_int_equal(p->catch_up(inst, "cj", "latest", 60000, 0, t, 4, &first),
                     1);
    assert_int_equal(first, 3);
    assert_int_equal(p->catch_up(inst, "cj", "skip", 60000, 0, t, 4, &first),
                     0);
    /* the floor: the database clock less 10 s */
    assert_int_equal(p->catch_up(inst, "cj", "all", 10000, 0, t, 4, &first), 2);
    assert_int_equal(first, 2);
    assert_int_equal(p->catch_up(inst, "cj", "skip", 10000, 1, t, 4, &first),
                     1);
    assert_int_equal(first, 3);
    assert_true(p->catch_up(inst, "cj", "sometimes", 10000, 0, t, 4, &first) <
                0);
    assert_true(p->catch_up(NULL, "cj", "all", 10000, 0, t, 4, &first) < 0);
    assert_int_equal(p->catch_up_select("all:3", 600000, 1, 960005, 600000,
                                        (int64_t[]){660000, 720000, 780000,
                                                    840000, 900000, 960000},
                                        6, &first),
                     3);
    assert_int_equal(first, 3);
    print_message("  catch_up: by policy, grace and the ledger's floor\n");
}

/* ABI 1.8: the first-pass rule through the table. A fake daily engine
 * whose wall time of 10:00Z repeats at 11:00Z (its "zone" turns back an
 * hour at 10:30Z), and which computes the second pass only when asked
 * from 10:30Z on: the second pass is dropped, and a host asked from
 * within the repeated hour gets the next day's time. */
#define ABI_HOUR INT64_C(3600000)

static int64_t abi_daily(void *ctx, int64_t ms) {
    static const int64_t t[] = {10 * ABI_HOUR, 11 * ABI_HOUR, 34 * ABI_HOUR};
    size_t i;

    (void)ctx;
    for (i = 0; i < 3; i++)
        if (t[i] > ms && (i != 1 || 2 * ms >= 21 * ABI_HOUR))
            return t[i];
    return -1;
}

static int abi_same_wall(void *ctx, int64_t a, int64_t b) {
    (void)ctx;
    return (2 * a < 21 * ABI_HOUR ? a : a - ABI_HOUR) ==
           (2 * b < 21 * ABI_HOUR ? b : b - ABI_HOUR);
}

static void check_first_pass(const struct leader_plugin *p) {
    int64_t out = 0;

    assert_true(LEADER_PLUGIN_HAS(p, first_pass_next));
    assert_int_equal(
        p->second_pass(abi_daily, abi_same_wall, NULL, 11 * ABI_HOUR), 1);
    assert_int_equal(
        p->second_pass(abi_daily, abi_same_wall, NULL, 10 * ABI_HOUR), 0);
    assert_int_equal(p->first_pass_next(abi_daily, abi_same_wall, NULL,
                                        11 * ABI_HOUR - 10, &out),
                     1);
    assert_int_equal(out, 34 * ABI_HOUR);
    assert_int_equal(
        p->first_pass_next(abi_daily, abi_same_wall, NULL, 34 * ABI_HOUR, &out),
        0);
    assert_int_equal(out, -1);
    assert_true(p->second_pass(NULL, abi_same_wall, NULL, 1) < 0);
    print_message("  first pass: the second pass of a repeated hour dropped\n");
}

/* ABI 1.1: claim, finish and leadership, as a host built against 1.1
 * calls them (after checking struct_size with LEADER_PLUGIN_HAS). */
static void test_claims(void **state) {
    const struct plugin_case *pc = *state;
    const struct leader_plugin *p = NULL;
    struct leader_host host = {.struct_size = sizeof(host),
                               .ctx = NULL,
                               .log = NULL,
                               .on_change = NULL};
    void *dl = load(pc, &p);
    void *inst = NULL;
    char err[512] = "";
    uint32_t valid = 7;
    struct timespec ts;
    int64_t fire;

    assert_true(p->abi_minor >= 1);
    assert_true(LEADER_PLUGIN_HAS(p, claim));
    assert_true(LEADER_PLUGIN_HAS(p, finish));
    assert_true(LEADER_PLUGIN_HAS(p, leadership));
    clock_gettime(CLOCK_REALTIME, &ts);
    fire = (int64_t)ts.tv_sec * 1000; /* now: inside any retention */
    if (p->init(pc->config, &host, &inst, err, sizeof(err)) != 0)
        fail_msg("init: %s", err);
    assert_int_equal(p->leadership(inst, &valid), 0);
    assert_int_equal(valid, 0);
    assert_int_equal(p->claim(inst, "job", fire), LEADER_PLUGIN_ENOTLEADER);
    assert_non_null(p->strerror(LEADER_PLUGIN_ENOTLEADER));
    tick_until_leader(p, inst);
    assert_int_equal(p->leadership(inst, &valid), p->term(inst));
    assert_true(valid > 0);
    assert_int_equal(p->claim(inst, "job", fire), 1);
    assert_int_equal(p->claim(inst, "job", fire), 0);
    assert_int_equal(p->claim(inst, "job", fire + 1), 1);
    assert_int_equal(p->finish(inst, "job", fire, 0), 0);
    assert_int_equal(p->finish(inst, "job", fire, 0), 0); /* idempotent */
    assert_true(p->finish(inst, "job", fire + 2, 0) < 0); /* not claimed */
    assert_true(p->claim(inst, "", fire) < 0);
    if (LEADER_PLUGIN_HAS(p, fence_sql)) /* ABI 1.5 */
        check_fence_sql(p, inst);
    if (LEADER_PLUGIN_HAS(p, set_schedule)) /* ABI 1.6 */
        check_schedules(p, inst, fire);
    if (LEADER_PLUGIN_HAS(p, catch_up)) /* ABI 1.7 */
        check_catch_up(p, inst, fire);
    if (LEADER_PLUGIN_HAS(p, second_pass)) /* ABI 1.8 */
        check_first_pass(p);
    p->shutdown(inst);
    dlclose(dl);
}

/* Runs an election with a host struct cut at member offset: members at or
 * past it are poisoned counters that must never be called. */
static void elect_with_host_size(const struct plugin_case *pc, size_t size) {
    const struct leader_plugin *p = NULL;
    struct recorder r = {0};
    struct leader_host host = {.struct_size = (uint32_t)size,
                               .ctx = &r,
                               .log = record_log,
                               .on_change = record_change};
    void *dl = load(pc, &p);
    void *inst = NULL;
    char err[512] = "";
    int rc;

    rc = p->init(pc->config, &host, &inst, err, sizeof(err));
    if (rc != 0)
        fail_msg("init with struct_size %zu: %d: %s", size, rc, err);
    tick_until_leader(p, inst);
    assert_true(p->term(inst) > 0);
    p->shutdown(inst);
    assert_int_equal(r.changes, 0);
    if (size <= offsetof(struct leader_host, log))
        assert_int_equal(r.logs, 0);
    dlclose(dl);
}

/* A host built before on_change existed is accepted and never called
 * back through it. */
static void test_old_host_without_on_change(void **state) {
    elect_with_host_size(*state, offsetof(struct leader_host, on_change));
}

/* A host built with neither log nor on_change. */
static void test_old_host_without_callbacks(void **state) {
    elect_with_host_size(*state, offsetof(struct leader_host, log));
}

/* The env var name holding the config of the plugin at path: written
 * into buf (len bytes). */
static void config_var(const char *path, char *buf, size_t len) {
    const char *base = strrchr(path, '/');
    size_t n, i;

    base = base ? base + 1 : path;
    n = strlen(base);
    if (n > 3 && strcmp(base + n - 3, ".so") == 0)
        n -= 3;
    snprintf(buf, len, "OL_ABI_CONFIG_%.*s", (int)n, base);
    for (i = strlen("OL_ABI_CONFIG_"); buf[i] != '\0'; i++)
        if (!isalnum((unsigned char)buf[i]))
            buf[i] = '_';
}

/* Runs every test against one plugin. Returns the number of failures. */
static int run_plugin(const char *path) {
    char var[256];
    const char *config;
    struct plugin_case pc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_exports, &pc),
        cmocka_unit_test_prestate(test_entry_refuses_other_major, &pc),
        cmocka_unit_test_prestate(test_table, &pc),
        cmocka_unit_test_prestate(test_bad_config, &pc),
        cmocka_unit_test_prestate(test_elect, &pc),
        cmocka_unit_test_prestate(test_tick_null, &pc),
        cmocka_unit_test_prestate(test_claims, &pc),
        cmocka_unit_test_prestate(test_old_host_without_on_change, &pc),
        cmocka_unit_test_prestate(test_old_host_without_callbacks, &pc),
    };

    config_var(path, var, sizeof(var));
    config = getenv(var);
    pc.path = path;
    pc.config = config ? config : "";
    print_message("plugin %s, config from %s%s\n", path, var,
                  config ? "" : " (unset: empty)");
    return cmocka_run_group_tests_name(path, tests, NULL, NULL);
}

int main(int argc, char **argv) {
    char *list = NULL, *tok, *save = NULL;
    const char *paths[MAX_PLUGINS];
    int n = 0, i, failures = 0;

    for (i = 1; i < argc && n < MAX_PLUGINS; i++)
        paths[n++] = argv[i];
    if (n == 0 && getenv("OL_PLUGINS") != NULL) {
        list = strdup(getenv("OL_PLUGINS"));
        if (list == NULL)
            return 1;
        for (tok = strtok_r(list, " \t\n", &save); tok && n < MAX_PLUGINS;
             tok = strtok_r(NULL, " \t\n", &save))
            paths[n++] = tok;
    }
    if (n == 0) {
        fprintf(stderr, "test_abi: no plugin given (arguments or "
                        "OL_PLUGINS)\n");
        free(list);
        return 1;
    }
    for (i = 0; i < n; i++)
        failures += run_plugin(paths[i]);
    free(list);
    return failures == 0 ? 0 : 1;
}
