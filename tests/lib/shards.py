# SPDX-License-Identifier: MIT
"""shards.py: the tests' own oracle of a job's shard, FNV-1a 64 of its
UTF-8 bytes modulo the shard count, as docs/abi.md defines it. Written here
apart from the plugin (src/shard.c) and every binding, which ask the
plugin's shard_of: a test compares the two."""


def fnv1a_shard(key, shards):
    """The shard of key in a group of shards shards (0 when shards is 0)."""
    if shards <= 0:
        return 0
    h = 0xCBF29CE484222325
    for b in key.encode("utf-8"):
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h % shards
