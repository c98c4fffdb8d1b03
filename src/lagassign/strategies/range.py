"""Kafka's ``range`` assignor, reproducing ``org.apache.kafka.clients.consumer.RangeAssignor``
of kafka-clients 4.x partition for partition and in the same order.

How Kafka does it
-----------------
Each topic is split on its own. The topic's subscribers are sorted the way Kafka's ``MemberInfo``
sorts them: static members (those with a ``group.instance.id``) first, by instance id, then
dynamic members by member id, both in Java ``String.compareTo`` order. With ``n`` partitions and
``k`` subscribers, every subscriber gets ``n // k`` consecutive partitions and the first
``n % k`` get one more.

Worked example (seed 004, Kafka's own javadoc): consumers C0 and C1 both subscribe to t0 and t1,
three partitions each. Per topic, 3 // 2 = 1 partition each and 3 % 2 = 1 extra, which goes to
C0, the first in order::

    C0: [t0p0, t0p1, t1p0, t1p1]
    C1: [t0p2, t1p2]

With static membership (seed 004 again) the instance ids decide: members C3 (instance I0) and C2
(instance I1) sort as I0 < I1 although C2 < C3, so C3 gets [t0p0, t0p1, t1p0, t1p1] and keeps it
across restarts that hand out new member ids.

Seed 002 lists, for consumers consumer1 and consumer2 on topic1 and topic2 of three partitions
each, [topic1p0, topic1p1, topic2p0, topic2p1] and [topic1p2, topic2p2], which is what Kafka
gives. Its listing "after consumer3 joins" is only illustrative: Kafka gives one partition of each
topic to each member, in member order: consumer1 [topic1-0, topic2-0], consumer2 [topic1-1,
topic2-1], consumer3 [topic1-2, topic2-2].

Order within a member
---------------------
Kafka walks the topics in the iteration order of a ``java.util.HashMap`` keyed by topic name, and
appends each topic's range to the member's list, so a member of t0 and t4 is handed
[t4-0, t0-0] (t4 hashes into an earlier bucket). :func:`kafka_topic_order` reproduces that order.
When the rack-aware path below runs, Kafka sorts every member's list by topic and partition.

Rack-aware assignment (KIP-881)
-------------------------------
It applies when some subscriber of a topic has a rack (``Member.rack``) that also holds replicas
of the topic (``Partition.racks``), and the topic's partitions are not all on the same racks. Then,
before the plain ranges, partitions are matched to members on the same rack without breaking the
per-topic quotas above (a member may take ``n // k`` partitions, plus one while extra ones remain):

* Topics with the same subscribers and the same partition count are co-partitioned: partition
  ``p`` of all of them goes to the first member (in member order) that is on a rack of partition
  ``p`` in every one of those topics and still has room in all of them.
* Any other topic that needs rack awareness gives each member, in member order, the unassigned
  partitions on its rack, up to its quota.

A member without a rack matches every partition. What is left is then assigned as plain ranges:
each member, in order, takes the lowest unassigned partitions up to its quota.

Kafka builds partition ``p`` of co-partitioned topics as the number ``p`` for ``p`` below the
partition count, assuming partitions are numbered from zero as Kafka numbers them. A topic of this
model may skip numbers; such a missing partition is never matched here, where Kafka would
hand out a partition that does not exist.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from lagassign.java_ordering import java_hashmap_order, java_order
from lagassign.model import Assignment, Group, Member, TopicPartition
from lagassign.strategies.base import Strategy
from lagassign.strategies.registry import register


def kafka_member_key(member: Member) -> tuple[int, bytes]:
    """Sort key reproducing ``AbstractPartitionAssignor.MemberInfo.compareTo``."""
    if member.instance_id is not None:
        return 0, java_order(member.instance_id)
    return 1, java_order(member.id)


def kafka_member_order(members: Iterable[Member]) -> list[Member]:
    """Members as Kafka's assignors sort them; ties keep the given order, as Java's stable sort."""
    return sorted(members, key=kafka_member_key)


def kafka_topic_order(group: Group) -> list[str]:
    """The order RangeAssignor walks the group's topics in.

    Kafka collects the subscribed topics into a HashSet (members in group order, each member's
    topics in String order, as ``tests/java/AssignorHarness.java`` sends them), then copies those
    with partitions into a HashMap in the set's order, and walks that map.
    """
    subscribed = [t for m in group.members for t in sorted(m.topics, key=java_order)]
    in_set_order = java_hashmap_order(list(dict.fromkeys(subscribed)))
    return java_hashmap_order([t for t in in_set_order if group.topics[t].partitions])


# -- the assignor ----------------------------------------------------------------------------------

_Assigned = dict[str, list[TopicPartition]]
_MayAssign = Callable[[str, TopicPartition], bool]


class _TopicState:
    """One topic's progress: its sorted subscribers, quotas and still unassigned partitions."""

    def __init__(self, group: Group, topic: str) -> None:
        self.topic = topic
        subscribers = kafka_member_order(group.subscribers(topic))
        self.consumers = [m.id for m in subscribers]
        # Kafka treats an empty client.rack as no rack.
        self.rack_of = {m.id: m.rack or None for m in subscribers}
        partitions = sorted(group.topics[topic].partitions, key=lambda p: p.partition)
        self.unassigned = {p.tp: None for p in partitions}  # an insertion-ordered set
        self.assigned_count = dict.fromkeys(self.consumers, 0)
        count, members = len(partitions), len(self.consumers)
        self.per_consumer = count // members
        self.remaining_extra = count % members

        consumer_racks = {r for r in self.rack_of.values() if r is not None}
        # Kafka only looks at replica racks when some subscriber has a rack; the number of
        # entries also decides which topics count as co-partitioned.
        self.partition_racks = (
            {p.partition: p.racks for p in partitions} if consumer_racks else {}
        )
        self.needs_rack_aware = _racks_matter(consumer_racks, self.partition_racks)

    def max_assignable(self, consumer: str) -> int:
        quota = self.per_consumer + (1 if self.remaining_extra > 0 else 0)
        return max(0, quota - self.assigned_count[consumer])

    def racks_match(self, consumer: str, tp: TopicPartition) -> bool:
        rack = self.rack_of[consumer]
        return rack is None or rack in self.partition_racks.get(tp.partition, frozenset())

    def give(self, consumer: str, tps: Sequence[TopicPartition], assigned: _Assigned) -> None:
        assigned[consumer].extend(tps)
        self.assigned_count[consumer] += len(tps)
        # Kafka counts an extra partition as used on every call that leaves the member above
        # the base quota; a member at its quota is never given more, so this counts it once.
        if self.assigned_count[consumer] > self.per_consumer:
            self.remaining_extra -= 1
        for tp in tps:
            del self.unassigned[tp]


def _racks_matter(
    consumer_racks: set[str], partition_racks: dict[int, frozenset[str]]
) -> bool:
    """``AbstractPartitionAssignor.useRackAwareAssignment``: some member rack holds replicas,
    and not every partition is on all the racks the topic's replicas are on."""
    all_racks = frozenset().union(*partition_racks.values())
    if not consumer_racks or consumer_racks.isdisjoint(all_racks):
        return False
    return any(racks != all_racks for racks in partition_racks.values())


def _assign_ranges(state: _TopicState, may_assign: _MayAssign, assigned: _Assigned) -> None:
    for consumer in state.consumers:
        if not state.unassigned:
            return
        limit = state.max_assignable(consumer)
        matching = [tp for tp in state.unassigned if may_assign(consumer, tp)][:limit]
        if matching:
            state.give(consumer, matching, assigned)


def _assign_with_rack_matching(states: Sequence[_TopicState], assigned: _Assigned) -> None:
    # Topics are co-partitioned when they share their subscribers and their partition count.
    # The order groups are visited in does not matter: each topic belongs to exactly one group.
    groups: dict[tuple[tuple[str, ...], int], list[_TopicState]] = {}
    for state in states:
        key = (tuple(state.consumers), len(state.partition_racks))
        groups.setdefault(key, []).append(state)
    for (consumers, count), members in groups.items():
        if len(members) > 1:
            _assign_co_partitioned(consumers, count, members, assigned)
        elif members[0].needs_rack_aware:
            _assign_ranges(members[0], members[0].racks_match, assigned)


def _takes_slice(
    consumer: str, states: Sequence[_TopicState], slices: Sequence[TopicPartition]
) -> bool:
    """Whether ``consumer`` may take partition p of every co-partitioned topic at once."""
    return all(
        tp in state.unassigned
        and state.racks_match(consumer, tp)
        and state.max_assignable(consumer) > 0
        for state, tp in zip(states, slices, strict=True)
    )


def _assign_co_partitioned(
    consumers: Sequence[str], count: int, states: Sequence[_TopicState], assigned: _Assigned
) -> None:
    remaining = list(consumers)
    for p in range(count):
        slices = [TopicPartition(s.topic, p) for s in states]
        consumer = next((c for c in remaining if _takes_slice(c, states, slices)), None)
        if consumer is None:
            continue
        for state, tp in zip(states, slices, strict=True):
            state.give(consumer, [tp], assigned)
        if all(s.max_assignable(consumer) == 0 for s in states):
            remaining.remove(consumer)
            if not remaining:
                return


@register
class RangeAssignor(Strategy):
    """Kafka's ``range`` assignor (see the module documentation for the algorithm)."""

    name = "range"

    def assign(self, group: Group) -> Assignment:
        states = [_TopicState(group, topic) for topic in kafka_topic_order(group)]
        assigned: _Assigned = {m.id: [] for m in group.members}
        rack_aware = any(s.needs_rack_aware for s in states)
        if rack_aware:
            _assign_with_rack_matching(states, assigned)
        for state in states:
            _assign_ranges(state, lambda _consumer, _tp: True, assigned)
        if rack_aware:
            for tps in assigned.values():
                tps.sort(key=TopicPartition.sort_key)
        return Assignment.build(group.members, assigned)
