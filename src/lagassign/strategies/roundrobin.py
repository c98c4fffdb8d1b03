"""Kafka's ``roundrobin`` assignor, reproducing
``org.apache.kafka.clients.consumer.RoundRobinAssignor`` of kafka-clients 4.x.

How Kafka does it
-----------------
All partitions of all subscribed topics are laid out in one list: topics in Java
``String.compareTo`` order, partitions by number. The members are sorted as Kafka's ``MemberInfo``
sorts them (static members by ``group.instance.id`` first, then dynamic members by member id) and
placed on a circle. One walk round the circle hands out the partitions: each partition goes to the
next member that subscribes to its topic, skipping members that do not, and the walk goes on from
the member after the one just served. Unlike ``range``, the walk does not restart per topic.

Worked example (Kafka's javadoc): consumers C0 and C1 subscribe to t0 and t1, three partitions
each. The walk over t0p0, t0p1, t0p2, t1p0, t1p1, t1p2 alternates C0, C1, C0, ...::

    C0: [t0p0, t0p2, t1p1]
    C1: [t0p1, t1p0, t1p2]

Skipping (Kafka's javadoc): C0 subscribes t0; C1 t0, t1; C2 t0, t1, t2; the topics have 1, 2 and
3 partitions. t0p0 goes to C0, t1p0 to C1, t1p1 to C2, and every t2 partition skips C0 and C1 for
C2, which ends up with four of the six: C0 [t0p0], C1 [t1p0], C2 [t1p1, t2p0, t2p1, t2p2].

Seed 002's roundrobin listing (consumer1 [topic1p0, topic1p1, topic2p2], consumer2
[topic2p0, topic2p1, topic1p2]) is illustrative only. For consumer1 and consumer2 subscribing
to topic1 and topic2 of three partitions each, Kafka gives consumer1 [topic1-0, topic1-2,
topic2-1] and consumer2 [topic1-1, topic2-0, topic2-2].

Kafka numbers the partitions of a topic from zero up to its partition count; a topic of this
model that skips numbers contributes its actual partitions, in number order.
"""

from __future__ import annotations

from lagassign.java_ordering import java_order
from lagassign.model import Assignment, Group, TopicPartition
from lagassign.strategies.base import Strategy
from lagassign.strategies.range import kafka_member_order
from lagassign.strategies.registry import register


def _partitions_in_walk_order(group: Group) -> list[TopicPartition]:
    subscribed = {t for m in group.members for t in m.topics}
    return [
        p.tp
        for topic in sorted(subscribed, key=java_order)
        for p in sorted(group.topics[topic].partitions, key=lambda p: p.partition)
    ]


@register
class RoundRobinAssignor(Strategy):
    """Kafka's ``roundrobin`` assignor (see the module documentation for the algorithm)."""

    name = "roundrobin"

    def assign(self, group: Group) -> Assignment:
        circle = kafka_member_order(group.members)
        assigned: dict[str, list[TopicPartition]] = {m.id: [] for m in group.members}
        at = 0
        for tp in _partitions_in_walk_order(group):
            # Some member subscribes to every listed topic, so this always stops.
            while tp.topic not in circle[at].topics:
                at = (at + 1) % len(circle)
            assigned[circle[at].id].append(tp)
            at = (at + 1) % len(circle)
        return Assignment.build(group.members, assigned)
