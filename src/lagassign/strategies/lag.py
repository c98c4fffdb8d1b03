"""The lag-based assignor of the seed (grantneale/kafka-lag-based-assignor, KAFKA-5337).

Each topic is assigned on its own. Its partitions are taken in decreasing lag (equal lag: the
lower partition number first) and each goes to the subscribed member that has, for this topic,

1. the fewest partitions, then
2. the least total lag, then
3. the smallest member id (``String.compareTo`` order).

The counters start at zero for every topic, so a member's load on other topics plays no part:
this is what makes the seed's output reproducible topic by topic, and what :mod:`balanced`
improves on.

Example (seed 000): members C0 and C1 subscribe t0, whose partitions have lag
p0 = 100,000, p1 = 50,000, p2 = 60,000.

* p0 (100,000): both members have 0 partitions and 0 lag; C0 wins on id.
* p2 (60,000): C1 has fewer partitions.
* p1 (50,000): both have 1 partition; C1 has less lag (60,000 < 100,000).

Result: C0 [t0p0] with lag 100,000; C1 [t0p2, t0p1] with lag 110,000. Kafka's range assignor
gives C0 [t0p0, t0p1] (160,000) and C1 [t0p2] (50,000).

The Java original is eager only, sends no user data and is not sticky; neither is this.
"""

from __future__ import annotations

from operator import attrgetter

from lagassign.collector import collector_paused
from lagassign.java_ordering import java_order
from lagassign.lag_rules import topic_lags
from lagassign.model import Assignment, Group, TopicPartition
from lagassign.strategies.base import (
    Strategy,
    each,
    hottest_first,
    subscribers_by_topic,
)
from lagassign.strategies.registry import register


@register
class LagAssignor(Strategy):
    name = "lag"
    uses_lag = True

    def assign(self, group: Group) -> Assignment:
        with collector_paused():
            return self._assign(group)

    def _assign(self, group: Group) -> Assignment:
        assigned: dict[str, list[TopicPartition]] = {m.id: [] for m in group.members}
        by_id = sorted(group.members, key=lambda m: java_order(m.id))
        ids = [m.id for m in by_id]
        names = sorted(group.topics, key=java_order)
        readers = subscribers_by_topic(by_id, names)
        # topics read by the same members share one list of positions: their ids, once
        named: dict[int, list[str]] = {}
        for topic_name in names:
            positions = readers[topic_name]
            subscribers = named.get(id(positions))
            if subscribers is None:
                subscribers = named[id(positions)] = [ids[i] for i in positions]
            if not subscribers:
                continue
            # Decreasing lag; the sort is stable, so equal lags keep partition-number order.
            partitions = group.topics[topic_name].partitions
            lags = topic_lags(partitions, group.auto_offset_reset)
            order = hottest_first(lags)
            tps = list(map(_tp, partitions))
            # Fewest partitions comes first, so the partitions go out in rounds: each round
            # gives every subscriber one, in order of (lag so far, id) as the round starts,
            # because a member that has taken its partition of the round cannot win again
            # until all the others have. Sorting once per round replaces a choice per partition.
            ranked = subscribers
            rounds = range(0, len(order), len(subscribers))
            if len(rounds) > 1:  # only a later round reads the loads
                load = dict.fromkeys(subscribers, 0)
            for start in rounds:
                if start:
                    ranked = sorted(subscribers, key=load.__getitem__)  # stable: ties by id
                # the last round may be short: its partitions go to the first in rank
                chunk = order[start : start + len(subscribers)]
                each(list.append, map(assigned.__getitem__, ranked), map(tps.__getitem__, chunk))
                if start != rounds[-1]:  # only a later round reads the loads
                    for winner, i in zip(ranked, chunk, strict=False):
                        load[winner] += lags[i]
        return Assignment.build(group.members, assigned)


_tp = attrgetter("tp")
