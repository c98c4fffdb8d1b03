"""Kafka's sticky assignors: ``sticky`` (eager) and ``cooperative-sticky``.

Both follow ``AbstractStickyAssignor`` of kafka-clients 4.x: keep every partition a member owned
before as long as the assignment stays balanced, spread the rest evenly, and align partitions
with the member's rack when racks are known (KIP-881). The cooperative variant then withholds for
one round every partition that changes owner, so that its old owner can revoke it first.

The algorithm has two paths, chosen as Kafka chooses them:

* all members subscribe to the same topics: the quota-based "constrained" path (linear time);
* otherwise: the "general" path, which assigns the free partitions to the least loaded
  subscriber and then moves partitions until no move improves the balance.

Members' subscriptions are taken in group order, as our Java reference harness passes them (a
Kafka leader collects them in a ``HashMap``; that order shows only in how partitions claimed by
several members of one generation are settled). Where Kafka's result further depends on the
iteration order of a Java ``HashMap`` of members, we iterate members in the order such a map
filled in group order yields them (``String.hashCode`` buckets, see :func:`_java_hashmap_order`).
Kafka's other hash-ordered choices are reproduced the same way: which of several moved
partitions to move back first (:class:`_JavaHashSet`), and the order of an eager member's
previous assignment after its user data round trip (:func:`_grouped_by_topic`). So the result,
list order included, is kafka-clients 4.4's, except where Kafka goes wrong:

* On the general path Kafka moves a partition back to a claimant of an older generation
  without checking that it still subscribes to the topic, handing out a partition the member
  did not ask for (or failing when that member takes no part in the rebalancing); we leave
  such moves out.
* Kafka's "same subscriptions" check skips members without topics seen before the first member
  with topics, and may then give them partitions; we compare all subscriptions as they are.
* Kafka fails on a group without members; we return an empty assignment.
* Kafka remembers the highest generation seen in the assignor instance across rebalances; we
  keep no state, as a fresh assignor per rebalance does.
* Hash bins of eight or more colliding member ids or topic names in a table of 64 or more
  become trees in Java, whose order is not reproduced.
"""

from __future__ import annotations

import bisect
import heapq
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby, repeat
from operator import attrgetter, itemgetter
from typing import NamedTuple

from lagassign.model import NO_GENERATION, Assignment, Group, Member, TopicPartition, java_order
from lagassign.strategies.base import RebalanceProtocol, Strategy, collector_paused
from lagassign.strategies.registry import register

_INT_MASK = 0xFFFF_FFFF
_DEFAULT_TABLE_SIZE = 16
# A Java hash bin is turned into a tree when it reaches this many entries (one fewer through
# computeIfAbsent), unless the table is smaller than _MIN_TREEIFY_TABLE: then the table doubles.
_TREEIFY_BIN_SIZE = 9
_MIN_TREEIFY_TABLE = 64

# A partition as (topic, number): hashing a TopicPartition runs Python code, and the hot
# dictionaries hold a million of them, so those are keyed by this tuple instead.
_Key = tuple[str, int]


# -- Java hash order --------------------------------------------------------------------------

def _java_string_hash(s: str) -> int:
    """``String.hashCode()`` as an unsigned 32-bit value."""
    h = 0
    data = s.encode("utf-16-be", "surrogatepass")
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


def _java_hashmap_order(
    keys: Sequence[str], hashes: Sequence[int] | None = None, *, computed: bool = False
) -> list[str]:
    """The order a default ``HashMap<String, ?>`` filled with ``keys`` in order iterates them.

    Buckets in index order; within a bucket, insertion order for ``put``, the reverse for
    ``computeIfAbsent`` (``computed``), which links new entries in front (resizing keeps the
    order). Bins of eight or more colliding keys in a table of 64 or more become trees with
    another order; that takes deliberately colliding keys and is not reproduced. ``hashes``
    may give the keys' hashes.
    """
    if hashes is None:
        hashes = [_java_string_hash(k) for k in keys]
    size = _table_size(hashes, computed=computed)
    later_first = -1 if computed else 1
    position = sorted(range(len(keys)), key=lambda i: (_bucket(hashes[i], size), later_first * i))
    return [keys[i] for i in position]


class _JavaHashSet:
    """A set of partitions whose :meth:`first` is what ``HashSet.iterator().next()`` returns."""

    def __init__(self, topic_hash: Mapping[str, int]) -> None:
        self._topic_hash = topic_hash
        self._items: dict[_Key, int] = {}
        self._inserted = 0
        self._size = _DEFAULT_TABLE_SIZE

    def _hash(self, key: _Key) -> int:
        # TopicPartition.hashCode(): 31 * (31 + partition) + topic.hashCode()
        return (31 * (31 + key[1]) + self._topic_hash[key[0]]) & _INT_MASK

    def add(self, key: _Key) -> None:
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

    def discard(self, key: _Key) -> None:
        self._items.pop(key, None)

    def __len__(self) -> int:
        return len(self._items)

    def first(self) -> _Key:
        size, items = self._size, self._items
        return min(items, key=lambda k: (_bucket(self._hash(k), size), items[k]))


# -- what both paths derive from the group ----------------------------------------------------

def _generation(m: Member) -> int:
    return NO_GENERATION if m.generation is None else m.generation


def _key(tp: TopicPartition) -> _Key:
    return tp.topic, tp.partition


def _grouped_by_topic(
    claims: Sequence[TopicPartition], topic_hash: dict[str, int]
) -> tuple[TopicPartition, ...]:
    """The claims as the eager sticky assignor's user data round trip returns them.

    Kafka serializes a member's previous assignment grouped by topic, topics in the iteration
    order of a ``HashMap`` keyed by topic (filled with ``computeIfAbsent``), partitions in their
    listed order within a topic.
    ``topic_hash`` caches ``String.hashCode()`` of topic names across members.
    """
    topic_of = list(map(attrgetter("topic"), claims))
    topics = list(dict.fromkeys(topic_of))
    if len(topics) <= 1:
        return tuple(claims)
    for topic in topics:
        if topic not in topic_hash:
            topic_hash[topic] = _java_string_hash(topic)
    in_map_order = _java_hashmap_order(topics, [topic_hash[t] for t in topics], computed=True)
    rank = {t: i for i, t in enumerate(in_map_order)}
    ranks = list(map(rank.__getitem__, topic_of))
    return tuple(claims[i] for i in sorted(range(len(claims)), key=ranks.__getitem__))


def _numbers(sorted_numbers: list[int]) -> range | frozenset[int]:
    """A fast membership test for a topic's partition numbers (usually 0..n-1)."""
    if sorted_numbers == list(range(len(sorted_numbers))):
        return range(len(sorted_numbers))
    return frozenset(sorted_numbers)


@dataclass(frozen=True)
class _Subscriptions:
    """The group as Kafka's sticky assignor sees it.

    ``order`` is the order of the members' subscriptions (group order); ``map_order`` the
    iteration order of the per-member ``HashMap`` Kafka builds from them. ``claims`` holds each
    member's previously owned partitions as the assignor receives them. ``topics`` maps every
    subscribed topic that has partitions to its partition numbers, sorted. ``identical``: all
    members subscribe to the same topics.
    """

    identical: bool
    members: dict[str, Member]
    order: tuple[str, ...]
    map_order: tuple[str, ...]
    claims: dict[str, tuple[TopicPartition, ...]]
    topics: dict[str, list[int]]
    topic_order: tuple[str, ...]
    valid: dict[str, range | frozenset[int]]

    @staticmethod
    def of(group: Group, *, claims_from_user_data: bool) -> _Subscriptions:
        members = {m.id: m for m in group.members}
        order = tuple(members)
        subscribed = {t for m in group.members for t in m.topics}
        topics = {
            t: sorted(p.partition for p in group.topics[t].partitions)
            for t in subscribed if group.topics[t].partitions
        }
        first = group.members[0].topics if group.members else frozenset()
        identical = all(m.topics == first for m in group.members)
        # Only the general path lists claims in received order; the constrained path sorts
        # them, so it is spared the regrouping.
        regroup = claims_from_user_data and not identical
        topic_hash: dict[str, int] = {}
        claims = {
            m.id: _grouped_by_topic(m.owned, topic_hash) if regroup else m.owned
            for m in group.members
        }
        return _Subscriptions(
            identical=identical,
            members=members,
            order=order,
            map_order=tuple(_java_hashmap_order(order)),
            claims=claims,
            topics=topics,
            topic_order=tuple(sorted(topics, key=java_order)),
            valid={t: _numbers(ns) for t, ns in topics.items()},
        )


@dataclass
class _Owned:
    """Previously owned partitions after Kafka's generation rules.

    ``by_member`` keeps each member's still valid claims in claim order; ``contested`` holds
    partitions two members of one generation both claimed.
    """

    by_member: dict[str, dict[_Key, TopicPartition]]
    contested: set[_Key]
    max_generation: int


def _resolve_owned(subs: _Subscriptions) -> _Owned:
    """Decide which member owns each claimed partition.

    Members are visited in subscription order. A partition first claimed stays with its
    claimant until a member of a higher generation claims it too (the newer claim wins), while a
    claim from the same generation makes the partition contested: neither keeps it, and whoever
    gets it next is treated as a new owner. Claims of a lower generation than the current owner's
    are ignored. Claims on partitions outside the subscribed topics are dropped.
    """
    by_member: dict[str, dict[_Key, TopicPartition]] = {}
    claimant: dict[_Key, str] = {}
    contested: set[_Key] = set()
    generation = {mid: _generation(m) for mid, m in subs.members.items()}
    valid = subs.valid
    for mid in subs.order:
        claims = [tp for tp in subs.claims[mid] if tp.partition in valid.get(tp.topic, ())]
        keys = [(tp.topic, tp.partition) for tp in claims]
        mine = dict(zip(keys, claims, strict=True))
        by_member[mid] = mine
        if len(mine) == len(keys) and claimant.keys().isdisjoint(keys):
            # the common case, nobody else claimed any of these: no per-claim work
            claimant.update(zip(keys, repeat(mid)))
            continue
        mine.clear()
        own = generation[mid]
        for key, tp in zip(keys, claims, strict=True):
            other = claimant.get(key)
            if other is None:
                mine[key] = tp
            elif own == generation[other]:
                contested.add(key)
                by_member[other].pop(key, None)
            elif own > generation[other]:
                mine[key] = tp
                by_member[other].pop(key, None)
            else:
                continue
            claimant[key] = mid
    max_generation = max([NO_GENERATION, *generation.values()])
    return _Owned(by_member, contested, max_generation)


class _Racks:
    """KIP-881 rack information, enabled only when aligning racks can make a difference.

    That is when some member has a rack, some partition has a replica on a member's rack, and
    not every partition has replicas on the same set of racks.
    """

    def __init__(self, group: Group, subs: _Subscriptions) -> None:
        self.enabled = False
        self.member_rack: dict[str, str] = {}
        self._racks: dict[str, dict[int, frozenset[str]]] = {}
        self._members_on: Counter[str] = Counter()
        member_rack = {mid: m.rack for mid, m in subs.members.items() if m.rack}
        if not member_rack:
            return
        racks = {
            t: {p.partition: p.racks for p in group.topics[t].partitions} for t in subs.topics
        }
        every_rack = frozenset().union(*(r for by in racks.values() for r in by.values()))
        if every_rack.isdisjoint(member_rack.values()):
            return
        if all(r == every_rack for by in racks.values() for r in by.values()):
            return
        self.enabled = True
        self.member_rack = member_rack
        self._racks = racks
        self._members_on = Counter(member_rack.values())

    def of(self, topic: str, partition: int) -> frozenset[str]:
        return self._racks[topic][partition]

    def mismatch(self, member: str, topic: str, partition: int) -> bool:
        """A member on a rack that holds no replica of the partition (never when disabled)."""
        rack = self.member_rack.get(member)
        return rack is not None and rack not in self._racks[topic][partition]

    def by_rack_members(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        """Partitions with the fewest members on their replicas' racks first (stable)."""
        if not self.enabled:
            return partitions
        on, racks = self._members_on, self._racks
        return sorted(partitions, key=lambda tp: sum(on[r] for r in racks[tp.topic][tp.partition]))

    def next_on_rack(self, tp: TopicPartition, members: Sequence[str], start: int) -> int:
        """Index of the first member, cycling from ``start``, on a rack of the partition."""
        racks = self.of(tp.topic, tp.partition)
        if not racks:
            return -1
        n = len(members)
        for i in range(n):
            index = (start + i) % n
            rack = self.member_rack.get(members[index])
            if rack is not None and rack in racks:
                return index
        return -1


# -- constrained path: identical subscriptions ------------------------------------------------

class _ConstrainedBuilder:
    """Quota-based assignment for groups whose members all subscribe to the same topics.

    With P partitions and N members every member gets ``P // N`` partitions and ``P % N`` of
    them one more. Members first keep owned partitions up to those quotas (rack-aligned ones
    only, lowest partition numbers first); the rest are handed out round-robin, rack-aligned
    where possible. Partitions that were owned by another member, or contested, are recorded as
    transferring ownership for the cooperative protocol.
    """

    def __init__(self, subs: _Subscriptions, racks: _Racks, owned: _Owned) -> None:
        self.subs = subs
        self.racks = racks
        self.owned = owned
        total = sum(len(ns) for ns in subs.topics.values())
        self.min_quota, self.expected_over_min = divmod(total, len(subs.order))
        self.max_quota = self.min_quota + (1 if self.expected_over_min else 0)
        self.over_min = 0
        self.assignment: dict[str, list[TopicPartition]] = {mid: [] for mid in subs.order}
        self.kept: dict[str, int] = {}
        self.under_min: list[str] = []
        self.at_min: list[str] = []
        self.given_up: dict[_Key, str] = {}
        self.transferring: dict[TopicPartition, str] = {}
        self._taken: dict[str, set[int]] = {t: set() for t in subs.topics}

    def build(self) -> dict[str, list[TopicPartition]]:
        self._keep_owned()
        unassigned = self._unassigned()
        self.under_min.sort(key=java_order)
        self.at_min.sort(key=java_order)
        unassigned = self.racks.by_rack_members(unassigned)
        if self.racks.enabled:
            unassigned = self._fill_on_racks(unassigned)
        self._fill_round_robin(unassigned)
        self._check_filled()
        self._find_transferring()
        return self.assignment

    def _keep_owned(self) -> None:
        rank = {t: i for i, t in enumerate(self.subs.topic_order)}
        width = len(rank)
        contested = self.owned.contested
        for mid in self.subs.map_order:
            claims = self.owned.by_member[mid]
            if self.racks.enabled:
                kept = []
                for key, tp in claims.items():
                    if self.racks.mismatch(mid, tp.topic, tp.partition):
                        self.given_up[key] = mid
                    else:
                        kept.append(tp)
            else:
                kept = list(claims.values())
            # Lowest partition numbers first, across topics, so a member that must give some
            # up keeps a spread over its topics rather than whole topics.
            kept.sort(key=lambda tp: tp.partition * width + rank[tp.topic])
            if contested:
                kept = [tp for tp in kept if _key(tp) not in contested]
            self._keep(mid, kept)

    def _keep(self, mid: str, kept: list[TopicPartition]) -> None:
        if len(kept) < self.min_quota:
            quota = len(kept)
            self.under_min.append(mid)
        elif len(kept) >= self.max_quota and self.over_min < self.expected_over_min:
            quota = self.max_quota
            self.over_min += 1
            if self.over_min == self.expected_over_min:
                self.at_min.clear()
        else:
            quota = self.min_quota
            if self.over_min < self.expected_over_min:
                self.at_min.append(mid)
        self.assignment[mid].extend(kept[:quota])
        self.kept[mid] = quota
        for tp in kept[:quota]:
            self._taken[tp.topic].add(tp.partition)
        for tp in kept[quota:]:
            self.given_up[_key(tp)] = mid

    def _unassigned(self) -> list[TopicPartition]:
        result: list[TopicPartition] = []
        for topic in self.subs.topic_order:
            taken = self._taken[topic]
            numbers = self.subs.topics[topic]
            free = [n for n in numbers if n not in taken] if taken else numbers
            result.extend(map(TopicPartition, repeat(topic), free))
        return result

    def _fill_on_racks(self, unassigned: list[TopicPartition]) -> list[TopicPartition]:
        """Hand out partitions to members on their racks, within the quotas; returns the rest."""
        under, at_min, racks = self.under_min, self.at_min, self.racks
        rest: list[TopicPartition] = []
        start = 0
        for tp in unassigned:
            mid: str | None = None
            index = racks.next_on_rack(tp, under, start)
            if index >= 0:
                mid = under[index]
                count = len(self.assignment[mid]) + 1
                if count >= self.min_quota:
                    del under[index]
                    if count < self.max_quota and self.over_min < self.expected_over_min:
                        at_min.append(mid)
                else:
                    index += 1
                start = index % len(under) if under else 0
            elif at_min:
                index = racks.next_on_rack(tp, at_min, 0)
                if index >= 0:
                    mid = at_min[index]
                    if len(self.assignment[mid]) + 1 == self.max_quota:
                        del at_min[index]
                        self.over_min += 1
                        if self.over_min == self.expected_over_min:
                            at_min.clear()
            if mid is None:
                rest.append(tp)
            else:
                self.assignment[mid].append(tp)
        return rest

    def _fill_round_robin(self, unassigned: list[TopicPartition]) -> None:
        """Members under the minimum quota in turn, then one more each for members at it.

        A member reaching the minimum quota leaves the turn and queues for one more partition.
        Whole turns in which nobody leaves are handed out as slices.
        """
        under, assignment, min_quota = self.under_min, self.assignment, self.min_quota
        at_min = deque(self.at_min)
        done, total = 0, len(unassigned)
        while under:
            n = len(under)
            turns = min(min(min_quota - len(assignment[mid]) for mid in under), (total - done) // n)
            if turns == 0:
                break
            end = done + turns * n
            for i, mid in enumerate(under):
                assignment[mid].extend(unassigned[done + i:end:n])
            done = end
            at_min.extend(mid for mid in under if len(assignment[mid]) == min_quota)
            under[:] = [mid for mid in under if len(assignment[mid]) < min_quota]
        # What is left does not make a whole turn: one partition at a time, as Kafka does.
        cursor = 0
        for tp in unassigned[done:]:
            if cursor < len(under):
                mid = under[cursor]
                cursor += 1
            elif under:
                mid = under[0]
                cursor = 1
            elif at_min:
                mid = at_min.popleft()
            else:
                raise RuntimeError("sticky assignor: partitions left but every member is full")
            assigned = assignment[mid]
            assigned.append(tp)
            if len(assigned) == min_quota:
                cursor -= 1
                del under[cursor]
                at_min.append(mid)
            elif len(assigned) == self.max_quota:
                self.over_min += 1

    def _check_filled(self) -> None:
        if not self.under_min:
            return
        if self.over_min != self.expected_over_min:
            raise RuntimeError("sticky assignor: members under quota but no partitions left")
        for mid in self.under_min:
            if len(self.assignment[mid]) != self.min_quota:
                raise RuntimeError(f"sticky assignor: member {mid!r} is under its quota")

    def _find_transferring(self) -> None:
        """Newly given partitions that another member gave up, or that were contested."""
        given_up, contested = self.given_up, self.owned.contested
        if not given_up and not contested:
            return
        for mid, assigned in self.assignment.items():
            for tp in assigned[self.kept[mid]:]:
                key = (tp.topic, tp.partition)
                previous = given_up.get(key)
                if (previous is not None and previous != mid) or key in contested:
                    self.transferring[tp] = mid


# -- general path: different subscriptions ----------------------------------------------------

class _Previous(NamedTuple):
    member: str
    generation: int


def _previous_owners(subs: _Subscriptions, max_generation: int) -> dict[_Key, _Previous]:
    """The newest claim on each partition from members behind the group's newest generation.

    The general path moves a partition back to such a member when that improves the balance.
    """
    previous: dict[_Key, _Previous] = {}
    for mid in subs.order:
        generation = _generation(subs.members[mid])
        if generation >= max_generation:
            continue
        for tp in subs.claims[mid]:
            key = (tp.topic, tp.partition)
            known = previous.get(key)
            if known is None or generation > known.generation:
                previous[key] = _Previous(mid, generation)
    return previous


class _Movements:
    """Where partitions moved during rebalancing, to undo a move rather than make another.

    If a partition is to move from A to B while another partition of the same topic already
    moved from B to A, that earlier move is reverted instead.
    """

    def __init__(self, topics: Iterable[str]) -> None:
        self._topic_hash = {t: _java_string_hash(t) for t in topics}
        self._moved: dict[_Key, tuple[str, str]] = {}
        self._by_topic: dict[str, dict[tuple[str, str], _JavaHashSet]] = {}

    def partition_to_move(self, key: _Key, old: str, new: str) -> _Key:
        moves = self._by_topic.get(key[0])
        if moves is None:
            return key
        earlier = self._moved.get(key)
        source = old if earlier is None else earlier[0]
        back = moves.get((new, source))
        return key if back is None else back.first()

    def record(self, key: _Key, old: str, new: str) -> None:
        earlier = self._moved.pop(key, None)
        if earlier is None:
            self._add(key, (old, new))
            return
        self._remove(key, earlier)
        if earlier[0] != new:
            self._add(key, (earlier[0], new))

    def _add(self, key: _Key, pair: tuple[str, str]) -> None:
        self._moved[key] = pair
        moves = self._by_topic.setdefault(key[0], {})
        moved = moves.get(pair)
        if moved is None:
            moved = moves[pair] = _JavaHashSet(self._topic_hash)
        moved.add(key)

    def _remove(self, key: _Key, pair: tuple[str, str]) -> None:
        moves = self._by_topic[key[0]]
        moves[pair].discard(key)
        if not moves[pair]:
            del moves[pair]
        if not moves:
            del self._by_topic[key[0]]


class _LoadOrder:
    """Members ordered by (number of partitions, id) like Kafka's ``TreeSet`` of consumers."""

    def __init__(self, counts: Mapping[str, int], keys: Mapping[str, bytes]) -> None:
        self._key = keys
        self._entries = sorted((n, keys[mid], mid) for mid, n in counts.items())

    def __iter__(self) -> Iterator[str]:
        return (mid for _, _, mid in self._entries)

    def change(self, mid: str, old: int, new: int) -> None:
        key = self._key[mid]
        del self._entries[bisect.bisect_left(self._entries, (old, key, mid))]
        bisect.insort(self._entries, (new, key, mid))

    def remove(self, mid: str, count: int) -> None:
        del self._entries[bisect.bisect_left(self._entries, (count, self._key[mid], mid))]


class _LoadRange:
    """How many members hold each number of partitions, for the lowest and highest load."""

    def __init__(self, counts: Iterable[int]) -> None:
        self._members_at = Counter(counts)

    def change(self, old: int, new: int) -> None:
        self.remove(old)
        self._members_at[new] += 1

    def remove(self, count: int) -> None:
        self._members_at[count] -= 1
        if not self._members_at[count]:
            del self._members_at[count]

    def lowest(self) -> int:
        return min(self._members_at)

    def highest(self) -> int:
        return max(self._members_at)


# Above this many distinct subscriber sets, a load change would feed too many heaps; the
# lightest subscriber is then found by walking the load order, as Kafka does.
_MAX_SUBSCRIBER_SETS = 16


class _SubscriberHeaps:
    """The least loaded member of a subscriber set, optionally among those on given racks.

    One lazy min-heap of (load, id) per subscriber set and member rack; a load change pushes a
    fresh entry and outdated ones are dropped when they surface.
    """

    def __init__(
        self,
        sets: Sequence[tuple[str, ...]],
        member_rack: Mapping[str, str],
        keys: Mapping[str, bytes],
        load: Callable[[str], int],
    ) -> None:
        self._load = load
        self._key = keys
        self._heaps: list[dict[str | None, list[tuple[int, bytes, str]]]] = []
        self._containing: dict[str, list[list[tuple[int, bytes, str]]]] = {}
        for members in sets:
            by_rack: dict[str | None, list[tuple[int, bytes, str]]] = {}
            self._heaps.append(by_rack)
            for mid in members:
                heap = by_rack.setdefault(member_rack.get(mid), [])
                heap.append((load(mid), keys[mid], mid))
                self._containing.setdefault(mid, []).append(heap)
        for by_rack in self._heaps:
            for heap in by_rack.values():
                heapq.heapify(heap)

    def changed(self, mid: str) -> None:
        entry = (self._load(mid), self._key[mid], mid)
        for heap in self._containing.get(mid, ()):
            heapq.heappush(heap, entry)

    def lightest(self, subscriber_set: int, racks: frozenset[str] | None) -> str | None:
        """The lightest member of set number ``subscriber_set`` (an index into the sets given).

        ``racks`` None: any member; else members without a rack or on one of ``racks``.
        """
        best: tuple[int, bytes, str] | None = None
        for rack, heap in self._heaps[subscriber_set].items():
            if racks is not None and rack is not None and rack not in racks:
                continue
            while heap and heap[0][0] != self._load(heap[0][2]):
                heapq.heappop(heap)
            if heap and (best is None or heap[0] < best):
                best = heap[0]
        return None if best is None else best[2]


class _GeneralBuilder:
    """Balance-seeking assignment for groups whose members subscribe to different topics.

    1. Keep every owned partition whose topic the member still subscribes to (and, when racks
       are aligned, that has a replica on the member's rack).
    2. Give each free partition, topics with the fewest subscribers first, to its least loaded
       subscriber (rack-aligned subscribers in a first pass).
    3. While some subscriber of a topic holds two or more partitions fewer than the member
       holding a partition of it, move that partition: back to its owner of an older generation
       if that one is lighter, else to the least loaded subscriber. Keep the moves only if they
       improve the balance score (the sum of load differences over all member pairs).
    """

    def __init__(self, subs: _Subscriptions, racks: _Racks, owned: _Owned) -> None:
        self.subs = subs
        self.racks = racks
        self.owned = owned
        self.topics_of = {
            mid: frozenset(t for t in m.topics if t in subs.topics)
            for mid, m in subs.members.items()
        }
        # Topics with the same subscribers share one entry of ``subscriber_sets``; a small
        # number identifies it, as hashing the tuple of members each time would be slow.
        numbered: dict[tuple[str, ...], int] = {}
        self.potential: dict[str, tuple[str, ...]] = {}
        self.set_of: dict[str, int] = {}
        for topic in subs.topics:
            subscribers = tuple(mid for mid in subs.order if topic in self.topics_of[mid])
            self.set_of[topic] = numbered.setdefault(subscribers, len(numbered))
            self.potential[topic] = subscribers
        self.subscriber_sets = list(numbered)
        self.current: dict[str, dict[_Key, None]] = {
            mid: dict.fromkeys(claims) for mid, claims in owned.by_member.items()
        }
        self.owner = {key: mid for mid, claims in self.current.items() for key in claims}
        self.previous = _previous_owners(subs, owned.max_generation)
        self.capacity = {
            mid: sum(len(subs.topics[t]) for t in topics) for mid, topics in self.topics_of.items()
        }
        order = sorted(subs.topics, key=lambda t: (len(self.potential[t]), java_order(t)))
        self.all_partitions = [(t, n) for t in order for n in subs.topics[t]]
        self.movements = _Movements(subs.topics)
        self.keys = keys = {mid: java_order(mid) for mid in subs.order}
        loads = {mid: len(claims) for mid, claims in self.current.items()}
        self.load_range = _LoadRange(loads.values())
        # Either heaps per subscriber set, or Kafka's walk through all members in load order.
        self.heaps: _SubscriberHeaps | None = None
        self.load: _LoadOrder | None = None
        if len(self.subscriber_sets) <= _MAX_SUBSCRIBER_SETS:
            self.heaps = _SubscriberHeaps(
                self.subscriber_sets, racks.member_rack, keys, self._count
            )
        else:
            self.load = _LoadOrder(loads, keys)
        self.participating: set[str] = set(self.current)
        self.holders: dict[str, Counter[str]] = {}
        self._version = 0
        self._balanced_at: tuple[int, bool] = (-1, False)
        self._lightest_at: dict[int, str] = {}

    def build(self) -> dict[str, list[TopicPartition]]:
        revocation_required, kept = self._drop_invalid_claims()
        unassigned = [key for key in self.all_partitions if key not in kept]
        self._balance(unassigned, revocation_required)
        # Hand back the members' own TopicPartition objects where there are some.
        claimed = {k: tp for claims in self.owned.by_member.values() for k, tp in claims.items()}
        return {
            mid: [claimed[k] if k in claimed else TopicPartition(k[0], k[1]) for k in keys]
            for mid, keys in self.current.items()
        }

    def _drop_invalid_claims(self) -> tuple[bool, set[_Key]]:
        """Drop claims on unsubscribed topics or off-rack partitions.

        Returns whether any was dropped (then some member must revoke) and the claims kept.
        """
        dropped = False
        kept: set[_Key] = set()
        racks = self.racks
        for mid, claims in self.current.items():
            subscribed = self.subs.members[mid].topics
            invalid = [
                k for k in claims
                if k[0] not in subscribed or (racks.enabled and racks.mismatch(mid, *k))
            ]
            # Kafka leaves a dropped claim in its partition -> owner map until the partition
            # is reassigned; nothing reads it before that, so neither do we.
            for key in invalid:
                del claims[key]
            if invalid:
                self._load_changed(mid, len(claims) + len(invalid))
                dropped = True
            kept.update(claims)
        return dropped, kept

    def _count(self, mid: str) -> int:
        return len(self.current[mid])

    def _load_changed(self, mid: str, old: int) -> None:
        new = self._count(mid)
        self.load_range.change(old, new)
        if self.heaps is not None:
            self.heaps.changed(mid)
        else:
            assert self.load is not None
            self.load.change(mid, old, new)
        self._version += 1
        self._lightest_at.clear()

    def _lightest(self, topic: str, on_rack_of: _Key | None = None) -> str | None:
        """The first subscriber of ``topic`` in load order; if ``on_rack_of`` is given, the
        first that is rackless or on a rack of that partition's replicas."""
        if self.heaps is not None:
            racks = None if on_rack_of is None else self.racks.of(*on_rack_of)
            return self.heaps.lightest(self.set_of[topic], racks)
        assert self.load is not None
        for mid in self.load:
            if topic in self.topics_of[mid] and not (
                on_rack_of is not None and self.racks.mismatch(mid, *on_rack_of)
            ):
                return mid
        return None

    def _lightest_subscriber(self, topic: str) -> str:
        """Like :meth:`_lightest` without racks, for a topic with subscribers, until a move."""
        subscriber_set = self.set_of[topic]
        cached = self._lightest_at.get(subscriber_set)
        if cached is None:
            found = self._lightest(topic)
            assert found is not None
            cached = self._lightest_at[subscriber_set] = found
        return cached

    # -- step 2

    def _assign_free(self, unassigned: list[_Key]) -> None:
        rest = unassigned
        if self.racks.enabled:
            rest = [key for key in unassigned if not self._assign_on_rack(key)]
        before = {mid: self._count(mid) for mid in self.current}
        for topic, keys in groupby(rest, key=itemgetter(0)):
            self._assign_to_lightest(topic, list(keys))
        # The dealing reads loads straight from the claims; the load indexes catch up once.
        for mid, old in before.items():
            if self._count(mid) != old:
                self._load_changed(mid, old)

    def _assign_on_rack(self, key: _Key) -> bool:
        """Give the partition to its least loaded subscriber on a rack of its replicas."""
        mid = self._lightest(key[0], key)
        if mid is None:
            return False
        self._take(mid, (key,))
        self._load_changed(mid, self._count(mid) - 1)
        return True

    def _assign_to_lightest(self, topic: str, keys: list[_Key]) -> None:
        """Give each partition in turn to the least loaded subscriber (ties: smallest id).

        That deals the partitions level by level: at load level L every subscriber holding at
        most L partitions gets one, in id order. Levels without a newcomer are dealt as slices.
        The load indexes are left for the caller to update.
        """
        current, keys_of = self.current, self.keys
        loads = [(len(current[mid]), keys_of[mid], mid) for mid in self.potential[topic]]
        # Only the len(keys) lightest members can get any of the partitions.
        lightest = heapq.nsmallest(len(keys), loads) if len(keys) < len(loads) else sorted(loads)
        by_load = [mid for _, _, mid in lightest]
        before = {mid: n for n, _, mid in lightest}
        dealing: list[tuple[bytes, str]] = []
        joined, done, level = 0, 0, before[by_load[0]]
        while done < len(keys):
            while joined < len(by_load) and before[by_load[joined]] <= level:
                bisect.insort(dealing, (self.keys[by_load[joined]], by_load[joined]))
                joined += 1
            n, left = len(dealing), len(keys) - done
            if left < n:
                # the last, partial level: the first members in id order get one more each
                for i, (_, mid) in enumerate(dealing[:left]):
                    self._take(mid, keys[done + i:done + i + 1])
                break
            levels = left // n
            if joined < len(by_load):
                levels = min(levels, before[by_load[joined]] - level)
            end = done + levels * n
            for i, (_, mid) in enumerate(dealing):
                self._take(mid, keys[done + i:end:n])
            done, level = end, level + levels

    def _take(self, mid: str, keys: Sequence[_Key]) -> None:
        self.current[mid].update(dict.fromkeys(keys))
        self.owner.update(dict.fromkeys(keys, mid))

    # -- step 3

    def _balance(self, unassigned: list[_Key], revocation_required: bool) -> None:
        initializing = self.load_range.highest() == 0
        self._assign_free(unassigned)

        movable = [key for key in self.all_partitions if len(self.potential[key[0]]) >= 2]
        movable_free = [key for key in unassigned if len(self.potential[key[0]]) >= 2]
        fixed = {mid: self.current.pop(mid) for mid in self.subs.order if not self._can_move(mid)}
        for mid, claims in fixed.items():
            self.load_range.remove(len(claims))
            if self.load is not None:
                self.load.remove(mid, len(claims))
            self.participating.discard(mid)
        self.holders = {t: Counter() for t, ms in self.potential.items() if len(ms) >= 2}
        for mid, claims in self.current.items():
            for topic, _ in claims:
                if topic in self.holders:
                    self.holders[topic][mid] += 1

        before = {mid: dict(claims) for mid, claims in self.current.items()}
        owner_before = dict(self.owner)
        if not revocation_required:
            self._reassign(movable_free)
        moved = self._reassign(movable)
        if not initializing and moved and _balance_score(self.current) >= _balance_score(before):
            self.current = before
            self.owner = owner_before
        self.current.update(fixed)

    def _can_move(self, mid: str) -> bool:
        """Whether a member can gain partitions or hold one another member could take."""
        claims = self.current[mid]
        if len(claims) < self.capacity[mid]:
            return True
        return any(len(self.potential[topic]) >= 2 for topic, _ in claims)

    def _reassign(self, partitions: list[_Key]) -> bool:
        """Kafka's ``performReassignments``: True if any partition moved."""
        moved_any = False
        moved = True
        while moved:
            moved = False
            for key in partitions:
                if self._is_balanced():
                    break
                count = self._count(self.owner[key])
                previous = self.previous.get(key)
                if (
                    previous is not None
                    and self._may_take(previous.member, key)
                    and count > self._count(previous.member) + 1
                ):
                    self._move(key, previous.member)
                    moved = moved_any = True
                    continue
                lightest = self._lightest_subscriber(key[0])
                if count > self._count(lightest) + 1:
                    self._move(key, lightest)
                    moved = moved_any = True
        return moved_any

    def _may_take(self, mid: str, key: _Key) -> bool:
        # Kafka moves a partition back to its older-generation owner without checking that the
        # owner still subscribes to its topic; we only do it when that gives a valid assignment.
        return mid in self.participating and key[0] in self.topics_of[mid]

    def _move(self, key: _Key, new: str) -> None:
        actual = self.movements.partition_to_move(key, self.owner[key], new)
        old = self.owner[actual]
        self.movements.record(actual, old, new)
        del self.current[old][actual]
        self.current[new][actual] = None
        self.owner[actual] = new
        self._load_changed(old, self._count(old) + 1)
        self._load_changed(new, self._count(new) - 1)
        holders = self.holders.get(actual[0])
        if holders is not None:
            holders[old] -= 1
            if not holders[old]:
                del holders[old]
            holders[new] += 1

    def _is_balanced(self) -> bool:
        """Kafka's ``isBalanced``, cached until the next load change.

        Balanced if loads differ by at most one, or no member below its capacity could take a
        partition of one of its topics from a member holding two or more partitions more.
        """
        version, balanced = self._balanced_at
        if version != self._version:
            balanced = self._compute_balanced()
            self._balanced_at = (self._version, balanced)
        return balanced

    def _compute_balanced(self) -> bool:
        if self.load_range.lowest() >= self.load_range.highest() - 1:
            return True
        # the two heaviest holders of each topic, so "heaviest other than me" is one lookup
        heaviest: dict[str, tuple[int, str | None, int]] = {}
        for topic, holders in self.holders.items():
            first, first_holder, second = -1, None, -1
            for mid in holders:
                n = self._count(mid)
                if n > first:
                    first, first_holder, second = n, mid, first
                elif n > second:
                    second = n
            heaviest[topic] = (first, first_holder, second)
        for mid in self.current:
            count = self._count(mid)
            if count == self.capacity[mid]:
                continue
            for topic in self.topics_of[mid]:
                top = heaviest.get(topic)
                if top is None:
                    continue
                other = top[0] if top[1] != mid else top[2]
                if count + 1 < other:
                    return False
        return True


def _balance_score(assignment: Mapping[str, Mapping[_Key, None]]) -> int:
    """Sum of |load difference| over all member pairs (0 when perfectly even)."""
    loads = sorted(len(claims) for claims in assignment.values())
    n = len(loads)
    return sum(load * (2 * i - n + 1) for i, load in enumerate(loads))


# -- the assignors ----------------------------------------------------------------------------

@dataclass
class _StickyResult:
    assignment: dict[str, list[TopicPartition]]
    #: partition -> its new owner, when it was owned by another member; None on the general path
    transferring: dict[TopicPartition, str] | None


def _sticky_assign(group: Group, *, eager: bool) -> _StickyResult:
    with collector_paused():
        return _sticky_assign_now(group, eager=eager)


def _sticky_assign_now(group: Group, *, eager: bool) -> _StickyResult:
    subs = _Subscriptions.of(group, claims_from_user_data=eager)
    if not subs.order:
        return _StickyResult({}, {})
    racks = _Racks(group, subs)
    owned = _resolve_owned(subs)
    if subs.identical:
        builder = _ConstrainedBuilder(subs, racks, owned)
        return _StickyResult(builder.build(), builder.transferring)
    return _StickyResult(_GeneralBuilder(subs, racks, owned).build(), None)


def _moving_between_members(
    members: Sequence[Member], assignment: Mapping[str, list[TopicPartition]]
) -> dict[TopicPartition, str]:
    """Partitions assigned to a member that did not claim them while another member did."""
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for m in members:
        assigned = assignment[m.id]
        claimed = set(m.owned)
        added.update((tp, m.id) for tp in assigned if tp not in claimed)
        kept = set(assigned)
        revoked.update(tp for tp in m.owned if tp not in kept)
    return {tp: mid for tp, mid in added.items() if tp in revoked}


@register
class StickyAssignor(Strategy):
    """Kafka's ``sticky`` assignor: balanced, and keeps what each member owned where it can.

    A member's previous assignment comes from ``Member.owned`` and ``Member.generation`` (the
    user data a Kafka sticky member sends). When members claim the same partition the newest
    generation wins; two claims of the same generation cancel each other out.

    Identical subscriptions: with P partitions and N members, each member gets ``P // N`` or
    one more. Members keep owned partitions up to that (the lowest partition numbers first; a
    member at the upper quota only while fewer than ``P % N`` members are), and the partitions
    left over go round-robin to the members under quota, sorted by id. Different subscriptions:
    free partitions go to the least loaded subscriber, then partitions move from heavier to
    lighter subscribers until no move helps (see :class:`_GeneralBuilder`).

    Example: topic ``t`` has six partitions; ``c1`` owns t-0 and t-3, ``c2`` t-1 and t-4, ``c3``
    t-2 and t-5. ``c2`` leaves. The quota becomes 3 each, so ``c1`` and ``c3`` keep what they
    own and take c2's partitions in turn: ``c1`` [t-0, t-3, t-1], ``c3`` [t-2, t-5, t-4]. Only
    the two partitions of the member that left move; range or round-robin would move four.

    With racks on members and partitions (KIP-881) owned partitions off the member's rack are
    given up, and free partitions go to members on their racks first, as long as the quotas
    allow.
    """

    name = "sticky"
    protocols = (RebalanceProtocol.EAGER,)

    def assign(self, group: Group) -> Assignment:
        return Assignment.build(group.members, _sticky_assign(group, eager=True).assignment)


@register
class CooperativeStickyAssignor(Strategy):
    """Kafka's ``cooperative-sticky`` assignor: the sticky assignment, minus partitions in flight.

    Members keep consuming what they own during a cooperative rebalance, so a partition may only
    go to a new member after its old owner has revoked it. This assignor computes the
    :class:`StickyAssignor` assignment and withholds, for this round, every partition that is
    handed to a member other than the one that owned it; the old owner sees it missing and
    revokes it, which triggers the follow-up rebalance that assigns it.

    Owned partitions come from ``Member.owned`` with ``Member.generation``. With identical
    subscriptions the owners are those of the sticky rules (newest generation wins, contested
    partitions are always withheld); otherwise every partition listed in another member's
    ``owned`` counts, whatever its generation, as Kafka does.

    Example: ``c1``, ``c2`` and ``c3`` own two partitions each of topic ``t`` (six partitions)
    and ``c4`` joins. The quotas become 2, 2, 1, 1: two of the old members keep both partitions,
    the third keeps one, and the partition it gives up goes to ``c4`` - but not yet: this round
    ``c4`` gets nothing. Once the owner has revoked it, the next rebalance gives it to ``c4``,
    and nothing else moves.
    """

    name = "cooperative-sticky"
    protocols = (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)
    withholds_moving = True

    def assign(self, group: Group) -> Assignment:
        result = _sticky_assign(group, eager=False)
        transferring = result.transferring
        if transferring is None:
            transferring = _moving_between_members(group.members, result.assignment)
        withheld: dict[str, set[TopicPartition]] = {}
        for tp, mid in transferring.items():
            withheld.setdefault(mid, set()).add(tp)
        assigned = {
            mid: [tp for tp in tps if tp not in withheld[mid]] if mid in withheld else tps
            for mid, tps in result.assignment.items()
        }
        return Assignment.build(group.members, assigned)
