/* SPDX-License-Identifier: MIT */
/*
 * shard.c: the key-to-shard function and the assignment of a group's
 * shards to its members (shard.h). Pure functions: no I/O, no clock, no
 * allocation.
 */
#include <string.h>

#include "shard.h"

#define FNV_OFFSET UINT64_C(0xcbf29ce484222325)
#define FNV_PRIME UINT64_C(0x100000001b3)

uint64_t odbc_leader__fnv1a64(const char *s, size_t n) {
    uint64_t h = FNV_OFFSET;

    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= FNV_PRIME;
    }
    return h;
}

uint32_t odbc_leader__shard_of(const char *key, uint32_t shards) {
    return (uint32_t)(odbc_leader__fnv1a64(key, strlen(key)) % shards);
}

/* The splitmix64 finaliser: spreads every input bit over the output. */
static uint64_t mix(uint64_t x) {
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

uint32_t odbc_leader__shard_cap(uint32_t shards, size_t n) {
    uint64_t num = (uint64_t)shards * 105;
    uint64_t den = (uint64_t)n * 100;

    return (uint32_t)((num + den - 1) / den);
}

/* The member of ids with the highest score for shard s among those whose
 * load is below cap; ties (equal ids hash alike) go to the smaller id.
 * Returns its index. At least one member is below cap (cap * n >= shards). */
static size_t best(const char *const *ids, const uint64_t *hid, size_t n,
                   uint32_t s, const uint32_t *load, uint32_t cap) {
    uint64_t ms = mix((uint64_t)s + 1);
    size_t pick = n;
    uint64_t top = 0;

    for (size_t i = 0; i < n; i++) {
        uint64_t score = mix(hid[i] ^ ms);

        if (load[i] >= cap)
            continue;
        if (pick == n || score > top ||
            (score == top && strcmp(ids[i], ids[pick]) < 0)) {
            pick = i;
            top = score;
        }
    }
    return pick;
}

int odbc_leader__assign(const char *const *ids, size_t n, uint32_t shards,
                        uint32_t *out, uint32_t *load, uint64_t *hid) {
    uint32_t cap;

    if (n == 0 || shards == 0)
        return -1;
    cap = odbc_leader__shard_cap(shards, n);
    for (size_t i = 0; i < n; i++) {
        load[i] = 0;
        hid[i] = odbc_leader__fnv1a64(ids[i], strlen(ids[i]));
    }
    for (uint32_t s = 0; s < shards; s++) {
        size_t pick = best(ids, hid, n, s, load, cap);

        out[s] = (uint32_t)pick;
        load[pick]++;
    }
    return 0;
}
