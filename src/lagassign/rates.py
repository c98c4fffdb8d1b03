"""Produce and consume rates, and what rate-aware balancing weighs.

A partition's backlog is not the whole story when producers keep writing: a partition that
takes 1,000 messages a second is heavier than its lag says. Rate-aware balancing weighs each
partition by what its consumer must read before the group has drained:

    weight = lag + rate_in × horizon

where the horizon is the group's predicted time to drain at its current rates,
``total lag ÷ (consume rate − produce rate)``, capped at :data:`MAX_HORIZON`; it is
:data:`DEFAULT_HORIZON` when the consume rate is unknown, and the cap when the group is not
keeping up. Balancing these weights balances both the time to drain and the incoming load.

The same arithmetic, per member, predicts how long a plan takes to catch up
(:func:`catch_up_seconds`), which the fleet pipeline reports for every plan.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from lagassign.model import Assignment, Group, ModelError, Topic, TopicPartition

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


def drain_seconds(backlog: float, consume_rate: float, produce_rate: float) -> float:
    """Seconds to read ``backlog`` messages at ``consume_rate`` while ``produce_rate`` more
    arrive: only the spare rate gains on the backlog. ``inf`` when there is none to spare."""
    spare = consume_rate - produce_rate
    if spare <= 0:
        return math.inf
    return backlog / spare


def drain_horizon(group: Group, lags: Mapping[TopicPartition, int]) -> float:
    """Seconds until the group drains at its current rates (see the module docstring)."""
    produced = sum(p.rate_in or 0.0 for p in group.partitions())
    known = [p.rate_out for p in group.partitions() if p.rate_out is not None]
    if not known:
        return DEFAULT_HORIZON
    return min(drain_seconds(sum(lags.values()), sum(known), produced), MAX_HORIZON)


def catch_up_seconds(
    group: Group, assignment: Assignment, lags: Mapping[TopicPartition, int]
) -> float | None:
    """Predicted seconds until every member of ``assignment`` has read its backlog.

    Imbalance says how uneven a plan is in messages; this says what that costs in time, which
    is what an operator waiting for a group to catch up wants to know. The prediction uses what
    the group measurably reads now, the sum of its partitions' ``rate_out``, and shares it
    evenly among the members: like the strategies, it takes a group's members to be alike.
    Each member must also keep up with what is produced to its partitions (their ``rate_in``),
    so it gains on its lag at ``share − produce rate`` (:func:`drain_seconds`). The group has
    caught up when its slowest member has. For one member this is :func:`drain_horizon`
    without the cap.

    For example: members ``a`` and ``b`` read 80 msg/s together, 40 each. Partition ``t-0``
    has lag 1,000 and takes 10 msg/s, ``t-1`` has no lag and takes 30 msg/s. Given one each,
    ``a`` (with ``t-0``) gains 40 − 10 = 30 msg/s and catches up in 1,000 ÷ 30 ≈ 33 s, ``b`` has
    nothing to read: the plan takes 33 s. Given both, ``a`` takes in 40 msg/s, all of its
    share, and never catches up: ``inf``.

    A member without lag counts as caught up, even when its share falls short of what comes
    in. None when no partition's consume rate is known (or the group has no members). The
    estimate errs long: a member that has caught up reads only what arrives, so the measured
    rate understates what the group can read.
    """
    consumed = [p.rate_out for p in group.partitions() if p.rate_out is not None]
    if not consumed or not group.members:
        return None
    share = sum(consumed) / len(group.members)
    slowest = 0.0
    for tps in assignment.partitions.values():
        backlog = sum(lags[tp] for tp in tps)
        if backlog:
            produced = sum(group.partition(tp).rate_in or 0.0 for tp in tps)
            slowest = max(slowest, drain_seconds(backlog, share, produced))
    return slowest


def drain_weights(group: Group, lags: Mapping[TopicPartition, int]) -> dict[TopicPartition, float]:
    """Each partition's lag plus what its producers add over the drain horizon."""
    horizon = drain_horizon(group, lags)
    return {p.tp: lags[p.tp] + (p.rate_in or 0.0) * horizon for p in group.partitions()}
