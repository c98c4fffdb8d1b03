"""Produce and consume rates, and what rate-aware balancing weighs.

A partition's backlog is not the whole story when producers keep writing: a partition that
takes 1,000 messages a second is heavier than its lag says. Rate-aware balancing weighs each
partition by what its consumer must read before the group has drained:

    weight = lag + rate_in × horizon

where the horizon is the group's predicted time to drain at its current rates,
``total lag ÷ (consume rate − produce rate)``, capped at :data:`MAX_HORIZON`; it is
:data:`DEFAULT_HORIZON` when the consume rate is unknown, and the cap when the group is not
keeping up. Balancing these weights balances both the time to drain and the incoming load.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from lagassign.model import Group, ModelError, Topic, TopicPartition

#: seconds of produce rate counted when the group's consume rate is unknown
DEFAULT_HORIZON = 300.0
#: never look further ahead than this: the group will have rebalanced long before
MAX_HORIZON = 3600.0


def has_rates(group: Group) -> bool:
    return any(p.rate_in for p in group.partitions())


def measure_rates(before: Group, after: Group, seconds: float) -> Group:
    """``after`` with each partition's rates measured from two offset samples ``seconds`` apart:
    produce rate from the log end offsets, consume rate from the committed offsets."""
    if seconds <= 0:
        raise ModelError("seconds", f"samples must be apart in time, got {seconds}")
    topics = {}
    for name, topic in after.topics.items():
        partitions = []
        for p in topic.partitions:
            old = before.topics[name].partitions if name in before.topics else ()
            earlier = next((q for q in old if q.partition == p.partition), None)
            if earlier is None or earlier.offsets is None or p.offsets is None:
                partitions.append(p)
                continue
            a, b = earlier.offsets, p.offsets
            rate_in = max(b.end - a.end, 0) / seconds
            consumed = (
                max(b.committed - a.committed, 0) / seconds
                if a.committed is not None and b.committed is not None
                else None
            )
            partitions.append(replace(p, rate_in=rate_in, rate_out=consumed))
        topics[name] = Topic(name, tuple(partitions))
    return replace(after, topics=topics)


def drain_horizon(group: Group, lags: Mapping[TopicPartition, int]) -> float:
    """Seconds until the group drains at its current rates (see the module docstring)."""
    produced = sum(p.rate_in or 0.0 for p in group.partitions())
    known = [p.rate_out for p in group.partitions() if p.rate_out is not None]
    if not known:
        return DEFAULT_HORIZON
    spare = sum(known) - produced
    if spare <= 0:
        return MAX_HORIZON
    return min(sum(lags.values()) / spare, MAX_HORIZON)


def drain_weights(group: Group, lags: Mapping[TopicPartition, int]) -> dict[TopicPartition, float]:
    """Each partition's lag plus what its producers add over the drain horizon."""
    horizon = drain_horizon(group, lags)
    return {p.tp: lags[p.tp] + (p.rate_in or 0.0) * horizon for p in group.partitions()}
