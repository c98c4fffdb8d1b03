"""The group as Kafka's sticky assignors see it, before either builder runs.

Subscriptions in the order the leader received them, each member's claims (its previously owned
partitions, regrouped as an eager member's user data round trip returns them), which member
owns each claimed partition after the generation rules (:func:`resolve_owned`), and KIP-881 rack
information (:class:`Racks`). Kafka keeps this in ``AbstractStickyAssignor`` and its
``RackInfo``; both builders (constrained.py, general.py) start from it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter

from lagassign.java_ordering import java_hashmap_order, java_order, java_string_hash
from lagassign.model import NO_GENERATION, Group, Member, TopicPartition

# A partition as (topic, number): hashing a TopicPartition runs Python code, and the hot
# dictionaries hold a million of them, so those are keyed by this tuple instead.
Key = tuple[str, int]


def member_generation(m: Member) -> int:
    return NO_GENERATION if m.generation is None else m.generation


def key_of(tp: TopicPartition) -> Key:
    return tp.topic, tp.partition


def grouped_by_topic(
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
            topic_hash[topic] = java_string_hash(topic)
    in_map_order = java_hashmap_order(topics, [topic_hash[t] for t in topics], computed=True)
    rank = {t: i for i, t in enumerate(in_map_order)}
    ranks = list(map(rank.__getitem__, topic_of))
    return tuple(claims[i] for i in sorted(range(len(claims)), key=ranks.__getitem__))


def _numbers(sorted_numbers: list[int]) -> range | frozenset[int]:
    """A fast membership test for a topic's partition numbers (usually 0..n-1)."""
    if sorted_numbers == list(range(len(sorted_numbers))):
        return range(len(sorted_numbers))
    return frozenset(sorted_numbers)


@dataclass(frozen=True)
class Subscriptions:
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
    def of(group: Group, *, claims_from_user_data: bool) -> Subscriptions:
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
            m.id: grouped_by_topic(m.owned, topic_hash) if regroup else m.owned
            for m in group.members
        }
        return Subscriptions(
            identical=identical,
            members=members,
            order=order,
            map_order=tuple(java_hashmap_order(order)),
            claims=claims,
            topics=topics,
            topic_order=tuple(sorted(topics, key=java_order)),
            valid={t: _numbers(ns) for t, ns in topics.items()},
        )


@dataclass
class Owned:
    """Previously owned partitions after Kafka's generation rules.

    ``by_member`` keeps each member's still valid claims in claim order; ``contested`` holds
    partitions two members of one generation both claimed.
    """

    by_member: dict[str, dict[Key, TopicPartition]]
    contested: set[Key]
    max_generation: int


def resolve_owned(subs: Subscriptions) -> Owned:
    """Decide which member owns each claimed partition.

    Members are visited in subscription order. A partition first claimed stays with its
    claimant until a member of a higher generation claims it too (the newer claim wins), while a
    claim from the same generation makes the partition contested: neither keeps it, and whoever
    gets it next is treated as a new owner. Claims of a lower generation than the current owner's
    are ignored. Claims on partitions outside the subscribed topics are dropped.
    """
    by_member: dict[str, dict[Key, TopicPartition]] = {}
    claimant: dict[Key, str] = {}
    contested: set[Key] = set()
    generation = {mid: member_generation(m) for mid, m in subs.members.items()}
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
    return Owned(by_member, contested, max_generation)


class Racks:
    """KIP-881 rack information, enabled only when aligning racks can make a difference.

    That is when some member has a rack, some partition has a replica on a member's rack, and
    not every partition has replicas on the same set of racks.
    """

    def __init__(self, group: Group, subs: Subscriptions) -> None:
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
