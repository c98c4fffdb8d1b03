"""KIP-49's fair assignor: equal partition counts for members with non-identical subscriptions.

Topics are taken most constrained first, to keep the flexible choices for last:

1. topics with the fewest subscribers first;
2. equal subscribers: the topic with more partitions first;
3. then by topic name.

Each partition, in number order, goes to the eligible (subscribed) member holding the fewest
partitions so far across all topics, ties to the smallest member id.

Example (KIP-49): topics T1:2, T2:1, T3:2, T4:1, T5:2 partitions; C1 and C4 subscribe all
five, C2 and C3 subscribe T1, T3, T5. Order: T2, T4 (two subscribers each), then T1, T3, T5.

* T2-0 -> C1 (everyone at 0; C1 first by id), T4-0 -> C4 (C1 already has one);
* T1-0 -> C2, T1-1 -> C3 (the two members still at 0);
* T3-0 -> C1, T3-1 -> C2, T5-0 -> C3, T5-1 -> C4 (everyone at 1, then by id).

Result: C1 [T2-0, T3-0], C2 [T1-0, T3-1], C3 [T1-1, T5-0], C4 [T4-0, T5-1]; range gives C1
five partitions and C3, C4 none.
"""

from __future__ import annotations

import heapq

from lagassign.java_ordering import java_order
from lagassign.model import Assignment, Group, TopicPartition
from lagassign.strategies.base import Strategy
from lagassign.strategies.registry import register


@register
class FairAssignor(Strategy):
    name = "fair"

    def assign(self, group: Group) -> Assignment:
        subscribers = {t: [m.id for m in group.subscribers(t)] for t in group.topics}
        order = sorted(
            (t for t in group.topics if subscribers[t]),
            key=lambda t: (len(subscribers[t]), -len(group.topics[t].partitions), java_order(t)),
        )
        assigned: dict[str, list[TopicPartition]] = {m.id: [] for m in group.members}
        for topic in order:
            # A heap per topic keyed by (load, id): the load of a member only grows, and only
            # the members of this topic compete for its partitions.
            heap = [(len(assigned[m]), java_order(m), m) for m in subscribers[topic]]
            heapq.heapify(heap)
            for p in sorted(group.topics[topic].partitions, key=lambda p: p.partition):
                load, key, member = heapq.heappop(heap)
                assigned[member].append(p.tp)
                heapq.heappush(heap, (load + 1, key, member))
        return Assignment.build(group.members, assigned)
