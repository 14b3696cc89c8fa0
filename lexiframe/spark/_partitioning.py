"""Bucket labels that Spark's hash partitioning sends one to a partition.

``repartition(n, column)`` places a row in partition ``pmod(murmur3(value, 42), n)``. The
buckets of the queries are numbered 0 to n - 1 by a hash of the query id, and numbers used
as they are collide under that second hash: 2 buckets share one partition (one task does
all the work while the other core waits), 8 fill 4, 15 fill 12, one holding twice the
average. Each bucket is therefore labelled by the smallest non-negative integer that
Spark's partitioning sends to the partition of its number, so that partition ``i`` holds
bucket ``i`` alone.
"""

from __future__ import annotations

from functools import cache

SEED = 42
"""The seed of Spark's ``HashPartitioning`` and of ``pyspark.sql.functions.hash``."""

_MASK = 0xFFFFFFFF


def _rotate(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK


def _mix_k1(k1: int) -> int:
    k1 = (k1 * 0xCC9E2D51) & _MASK
    return (_rotate(k1, 15) * 0x1B873593) & _MASK


def _mix_h1(h1: int, k1: int) -> int:
    h1 = _rotate(h1 ^ k1, 13)
    return (h1 * 5 + 0xE6546B64) & _MASK


def spark_hash_long(value: int, seed: int = SEED) -> int:
    """Spark's Murmur3 hash (x86, 32 bits) of a long, as ``F.hash`` gives it for a bigint.

    Example:
        >>> spark_hash_long(0)
        -1670924195
    """
    h1 = _mix_h1(seed & _MASK, _mix_k1(value & _MASK))
    h1 = _mix_h1(h1, _mix_k1((value >> 32) & _MASK))
    h1 ^= 8  # the length in bytes
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _MASK
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _MASK
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


@cache
def partition_labels(buckets: int) -> tuple[int, ...]:
    """For each bucket ``i`` below ``buckets``, the smallest non-negative bigint that Spark's
    hash partitioning into ``buckets`` partitions places in partition ``i``.

    Example:
        >>> [spark_hash_long(label) % 4 for label in partition_labels(4)]
        [0, 1, 2, 3]
    """
    labels: dict[int, int] = {}
    value = 0
    while len(labels) < buckets:  # about buckets × ln(buckets) hashes
        labels.setdefault(spark_hash_long(value) % buckets, value)
        value += 1
    return tuple(labels[index] for index in range(buckets))
