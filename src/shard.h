/* SPDX-License-Identifier: MIT */
/*
 * shard.h: the pure logic of sharded groups (shard.c): the documented
 * key-to-shard function every binding reproduces, and the assignment of a
 * group's shards to its live members (rendezvous hashing with a load cap)
 * that every member computes alike from the same member list.
 * Internal: every name has the odbc_leader__ prefix and hidden visibility.
 */
#ifndef ODBC_LEADER_SHARD_H
#define ODBC_LEADER_SHARD_H

#include <stddef.h>
#include <stdint.h>

/* Shards per group: at least 1, at most this many. */
#define ODBC_LEADER__SHARDS_MAX 65536

/* FNV-1a, 64 bits, of the n bytes at s. */
uint64_t odbc_leader__fnv1a64(const char *s, size_t n);

/* The shard of key (its UTF-8 bytes up to the NUL): FNV-1a 64 of the bytes
 * modulo shards (docs/abi.md lists test vectors). shards must be >= 1. */
uint32_t odbc_leader__shard_of(const char *key, uint32_t shards);

/* The most shards a member may be given among n members:
 * ceil(1.05 * shards / n) (n >= 1). */
uint32_t odbc_leader__shard_cap(uint32_t shards, size_t n);

/*
 * Assigns each of shards shards to one of the n members (n >= 1), by
 * rendezvous hashing with a load cap: shard s goes, in the order s = 0, 1,
 * ..., to the member with the highest score mix(H(member) ^ mix(s + 1))
 * among those still below odbc_leader__shard_cap(). The result depends
 * only on the set of member ids (their order does not matter), so members
 * that read the same list compute the same map; a join moves about
 * 1/(n+1) of the shards and a leave mostly only the leaver's.
 * Owns: ids (n NUL-terminated strings) borrowed; out (shards entries, the
 * index into ids of each shard's member), load (n entries, each member's
 * count) and hid (n entries of scratch) are the caller's. Returns 0, or -1
 * when n is 0 or shards is 0. Costs shards * n hashes.
 */
int odbc_leader__assign(const char *const *ids, size_t n, uint32_t shards,
                        uint32_t *out, uint32_t *load, uint64_t *hid);

#endif /* ODBC_LEADER_SHARD_H */
