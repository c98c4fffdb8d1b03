"""How Java orders strings and iterates hashed collections, for the Kafka assignors we reproduce.

Kafka's assignors sort member ids and topic names with ``String.compareTo`` (:func:`java_order`),
and where they walk a ``java.util.HashMap`` or ``HashSet`` their result follows its iteration
order, which ``String.hashCode`` decides (:func:`java_string_hash`, :func:`java_hashmap_order`,
:class:`TopicPartitionHashSet`). ``range`` walks its topics in HashMap order; ``sticky`` its
members, an eager member's previous assignment, and the partitions it moves back.

Only default-constructed maps and sets are modelled (16 slots, load factor 3/4). Bins of eight or
more colliding keys in a table of 64 or more slots become trees in Java, with another order; that
takes deliberately colliding keys and is not reproduced.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

_INT_MASK = 0xFFFF_FFFF
_DEFAULT_TABLE_SIZE = 16
# A Java hash bin is turned into a tree when it reaches this many entries (one fewer through
# computeIfAbsent), unless the table is smaller than _MIN_TREEIFY_TABLE: then the table doubles.
_TREEIFY_BIN_SIZE = 9
_MIN_TREEIFY_TABLE = 64


def java_order(s: str) -> bytes:
    """Sort key that orders strings as Java's ``String.compareTo`` does (UTF-16 code units).

    Python compares code points; the two differ only above U+FFFF, but the Java assignors we
    reproduce sort member ids and topic names with ``compareTo``.
    """
    return s.encode("utf-16-be", "surrogatepass")


def java_string_hash(s: str) -> int:
    """``String.hashCode()`` as an unsigned 32-bit value."""
    h = 0
    data = java_order(s)
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & _INT_MASK
    return h


def _bucket(h: int, table_size: int) -> int:
    # HashMap.hash() folds the high half into the low half before masking.
    return (h ^ (h >> 16)) & (table_size - 1)


def _table_size(hashes: Sequence[int], *, computed: bool) -> int:
    """The table size of a default ``HashMap`` after inserting keys with these hashes in order.

    ``computed``: inserted with ``computeIfAbsent``, which grows the table before an insertion
    rather than after one, and makes a tree of a bin one entry earlier than ``put``. A bin
    that would become a tree doubles a table smaller than 64 instead, so the insertion order
    matters and is replayed.
    """
    size = _DEFAULT_TABLE_SIZE
    full_bin = _TREEIFY_BIN_SIZE - 1 if computed else _TREEIFY_BIN_SIZE
    in_bin = Counter(_bucket(h, size) for h in hashes)
    if not in_bin or max(in_bin.values()) < full_bin:
        # No bin of the smallest table fills up, so none of a larger one does: only the
        # number of entries counts.
        entries = len(hashes) - 1 if computed else len(hashes)
        while entries > size * 3 // 4:
            size *= 2
        return size
    in_bin.clear()
    for present, h in enumerate(hashes):
        if computed and present > size * 3 // 4:
            size, in_bin = _doubled(size, hashes[:present])
        bucket = _bucket(h, size)
        in_bin[bucket] += 1
        if in_bin[bucket] >= full_bin and size < _MIN_TREEIFY_TABLE:
            size, in_bin = _doubled(size, hashes[:present + 1])
        if not computed and present + 1 > size * 3 // 4:
            size, in_bin = _doubled(size, hashes[:present + 1])
    return size


def _doubled(size: int, hashes: Sequence[int]) -> tuple[int, Counter[int]]:
    """A table resize: the new size and how many of the keys land in each bin."""
    return size * 2, Counter(_bucket(h, size * 2) for h in hashes)


def java_hashmap_order(
    keys: Sequence[str], hashes: Sequence[int] | None = None, *, computed: bool = False
) -> list[str]:
    """The order a default ``HashMap<String, ?>`` (or ``HashSet<String>``) filled with the
    distinct ``keys`` in order iterates them.

    Buckets in index order; within a bucket, insertion order for ``put``, the reverse for
    ``computeIfAbsent`` (``computed``), which links new entries in front (resizing keeps the
    order). The table doubles when it is more than 3/4 full, and also when a bin would become a
    tree while the table is below 64 slots. ``hashes`` may give the keys' hashes.
    """
    if hashes is None:
        hashes = [java_string_hash(k) for k in keys]
    size = _table_size(hashes, computed=computed)
    later_first = -1 if computed else 1
    position = sorted(range(len(keys)), key=lambda i: (_bucket(hashes[i], size), later_first * i))
    return [keys[i] for i in position]


class TopicPartitionHashSet:
    """A ``HashSet<TopicPartition>`` whose :meth:`first` is what ``iterator().next()`` returns.

    Partitions are ``(topic, partition)`` tuples; ``topic_hash`` holds ``String.hashCode()`` of
    every topic added (a cache shared by many sets).
    """

    def __init__(self, topic_hash: Mapping[str, int]) -> None:
        self._topic_hash = topic_hash
        self._items: dict[tuple[str, int], int] = {}
        self._inserted = 0
        self._size = _DEFAULT_TABLE_SIZE

    def _hash(self, key: tuple[str, int]) -> int:
        # TopicPartition.hashCode(): 31 * (31 + partition) + topic.hashCode()
        return (31 * (31 + key[1]) + self._topic_hash[key[0]]) & _INT_MASK

    def add(self, key: tuple[str, int]) -> None:
        if key in self._items:
            return
        self._inserted += 1
        self._items[key] = self._inserted
        if self._size < _MIN_TREEIFY_TABLE:
            own = _bucket(self._hash(key), self._size)
            same_bin = sum(_bucket(self._hash(x), self._size) == own for x in self._items)
            if same_bin >= _TREEIFY_BIN_SIZE:
                self._size *= 2
        if len(self._items) > self._size * 3 // 4:
            self._size *= 2

    def discard(self, key: tuple[str, int]) -> None:
        self._items.pop(key, None)

    def __len__(self) -> int:
        return len(self._items)

    def first(self) -> tuple[str, int]:
        size, items = self._size, self._items
        return min(items, key=lambda k: (_bucket(self._hash(k), size), items[k]))
