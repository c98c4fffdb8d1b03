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

import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Literal

from lagassign.model import Assignment, Group, ModelError, Topic, TopicPartition

#: seconds of produce rate counted when the group's consume rate is unknown
DEFAULT_HORIZON = 300.0
#: never look further ahead than this: the group will have rebalanced long before
MAX_HORIZON = 3600.0


def has_rates(group: Group) -> bool:
    # at C speed: on a million partitions a generator here took a good part of a second
    partitions = itertools.chain.from_iterable(t.partitions for t in group.topics.values())
    return any(map(attrgetter("rate_in"), partitions))


def rates_in(group: Group) -> dict[TopicPartition, float]:
    """Every partition's ``rate_in``, 0 where none is known: what the catch-up time, its
    yardstick (:mod:`lagassign.optimum`) and the metrics read per partition."""
    return {p.tp: p.rate_in or 0.0 for p in group.partitions()}


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
            rate_in = growth_rate(a.end, b.end, seconds)
            consumed = (
                growth_rate(a.committed, b.committed, seconds)
                if a.committed is not None and b.committed is not None
                else None
            )
            partitions.append(replace(p, rate_in=rate_in, rate_out=consumed))
        topics[name] = Topic(name, tuple(partitions))
    return replace(after, topics=topics, rate_window=seconds)


def growth_rate(before: int, after: int, seconds: float) -> float:
    """An offset's growth per second between two samples ``seconds`` apart, the one
    definition of a produce rate (log end offsets) and a consume rate (committed offsets): an
    offset that went down (a reset to earlier, a truncated log) counts 0."""
    return max(after - before, 0) / seconds


#: one offset's samples ``(time in seconds, offset)``, oldest first
OffsetSeries = Sequence[tuple[float, int]]


def series_rate(series: OffsetSeries) -> float | None:
    """:func:`growth_rate` from the oldest sample of ``series`` to its newest: over the whole
    span, not from one sample to the next, so an offset that moves in steps (commits every few
    seconds) is measured by how far it went. None with fewer than two samples or none later
    than the oldest.

    >>> series_rate([(100.0, 1000), (110.0, 1500), (120.0, 3000)]), series_rate([(1.0, 5)])
    (100.0, None)
    """
    if len(series) < 2 or series[-1][0] <= series[0][0]:
        return None
    (t0, a), (t1, b) = series[0], series[-1]
    return growth_rate(a, b, t1 - t0)


def rates_from_series(
    group: Group,
    produced: Mapping[TopicPartition, OffsetSeries],
    consumed: Mapping[TopicPartition, OffsetSeries],
) -> Group:
    """``group`` with each partition's rates measured over sample series
    (:func:`series_rate`): its produce rate over its log end offsets' series in ``produced``,
    its consume rate over its committed offsets' in ``consumed``; None where a series is
    missing or too short to tell. The form of :func:`measure_rates` for a monitor that keeps
    many samples of each offset rather than two snapshots of the group; its
    :attr:`~lagassign.model.Group.rate_window` (what :func:`saturated` weighs a backlog
    against) is the longest span a rate was measured over, as :func:`measure_rates`' is the
    seconds between its two samples (None when no rate was).

    >>> from lagassign.model import Partition
    >>> g = Group("g", {"t": Topic("t", (Partition("t", 0, lag=5),))}, ())
    >>> tp = TopicPartition("t", 0)
    >>> m = rates_from_series(g, {tp: [(0.0, 100), (10.0, 300)]}, {tp: [(5.0, 50), (10.0, 100)]})
    >>> m.partition(tp).rate_in, m.partition(tp).rate_out, m.rate_window
    (20.0, 10.0, 10.0)
    """
    spans = [
        s[-1][0] - s[0][0]
        for series in (produced, consumed)
        for s in series.values()
        if series_rate(s) is not None
    ]
    topics = {
        name: Topic(
            name,
            tuple(
                replace(
                    p,
                    rate_in=series_rate(produced.get(p.tp, ())),
                    rate_out=series_rate(consumed.get(p.tp, ())),
                )
                for p in topic.partitions
            ),
        )
        for name, topic in group.topics.items()
    }
    return replace(group, topics=topics, rate_window=max(spans, default=None))


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


#: how a member's capacity was found (:func:`capacities`)
CapacitySource = Literal["given", "measured", "assumed", "share"]


@dataclass(frozen=True)
class Capacities:
    """Each member's capacity, in messages per second, and where it comes from.

    ``given``: the member says (``Member.capacity``); ``measured``: the member is saturated,
    so what it reads now is what it can read; ``assumed``: neither, so it is taken to read like
    the members whose capacity is known (their median); ``share``: nothing is known of any
    member, and each is credited with an equal share of what the group reads now. A share is
    only a lower bound (nobody is saturated, so members may read more), so a member that would
    not be saturated (:func:`saturated`: without backlog, or, with rates measured over a known
    window, with no more than its partitions are read in it) counts as caught up under it
    whatever comes in (:func:`member_catch_up`).
    """

    by_member: Mapping[str, float]
    source: Mapping[str, CapacitySource]

    @property
    def shared(self) -> bool:
        """Whether these are equal shares, not capacities known of any member."""
        return any(s == "share" for s in self.source.values())


def saturated(backlog: float, reads: float, window: float | None) -> bool:
    """Whether a member with ``backlog`` messages to read, reading ``reads`` msg/s, reads as
    fast as it can; ``window``: the group's :attr:`~lagassign.model.Group.rate_window`. The
    one rule, for :func:`capacities` and :func:`catch_up_time`:

    * Rates given as such (``window`` None: a group file): whenever it has backlog.
    * Rates measured between two samples ``window`` seconds apart (``plan``/``pipeline
      --rate-window``), or over sample series spanning up to that (the monitor's plans):
      only when its backlog is more than it reads in that window, ``backlog > reads ×
      window``. A member that keeps up still has some lag at any
      sample, what came in since its last commit; that much it reads within the window, so
      it is in flight, not a backlog the member could not clear.

    Worked example, a window of 10 s: a member reads 56 msg/s while 56 msg/s come in and has
    170 messages of lag at the sample (3 s of inflow since its last commit): 170 ≤ 56 × 10 =
    560, in flight, not saturated (as in a file, lag 170 would make it saturated: capacity
    56 msg/s, exactly its inflow, catching up never). Another reads 56 msg/s with 20,000 of
    lag: 20,000 > 560, saturated, capacity 56 msg/s.

    >>> saturated(170, 56.0, None), saturated(170, 56.0, 10.0), saturated(20_000, 56.0, 10.0)
    (True, False, True)
    """
    return backlog > (0.0 if window is None else reads * window)


def capacities(group: Group, lags: Mapping[TopicPartition, int]) -> Capacities | None:
    """What each member of ``group`` can read, in messages per second; None if nothing says.

    1. A member that gives its capacity has it.
    2. A member that owns partitions with backlog is saturated (:func:`saturated`: with rates
       measured over a known window, only a backlog more than it reads in the window): it
       reads as fast as it can, so its measured consume rate, the sum of ``rate_out`` over
       what it owns, is its capacity. (Only when every partition it owns has a known
       ``rate_out`` and the sum is positive: a member that reads nothing at all has stalled,
       which says nothing of its capacity.)
    3. Every other member is assumed to read like those: the median of the capacities of
       steps 1 and 2.
    4. When no member's capacity is known that way, but the group's consume rate is, every
       member gets an equal share of it (``share``); with no consume rate either, None.

    Example: ``a`` owns t-0 (lag 5,000, ``rate_out`` 120) and ``b`` owns t-1 (lag 0,
    ``rate_out`` 30), ``c`` joins and owns nothing. ``a`` is saturated: 120 msg/s, measured.
    ``b`` reads 30 msg/s because that is all that arrives, which says nothing of what it could
    read: it is assumed to read like ``a``, 120, and so is ``c``.
    """
    if not group.members:
        return None
    owners = group.current_owners()
    owned: dict[str, list[TopicPartition]] = {}
    for tp, member_id in owners.items():
        owned.setdefault(member_id, []).append(tp)
    by_member: dict[str, float] = {}
    source: dict[str, CapacitySource] = {}
    for m in group.members:
        if m.capacity is not None:
            by_member[m.id], source[m.id] = m.capacity, "given"
            continue
        tps = owned.get(m.id, ())
        consumed = [group.partition(tp).rate_out for tp in tps]
        if all(r is not None for r in consumed):
            measured = sum(r for r in consumed if r is not None)
            backlog = sum(lags.get(tp, 0) for tp in tps)
            if measured > 0 and saturated(backlog, measured, group.rate_window):
                by_member[m.id], source[m.id] = measured, "measured"
    if by_member:
        typical = statistics.median(by_member.values())
        for m in group.members:
            if m.id not in by_member:
                by_member[m.id], source[m.id] = typical, "assumed"
        return Capacities(by_member, source)
    group_reads = [r for p in group.partitions() if (r := p.rate_out) is not None]
    if not group_reads:
        return None
    share = sum(group_reads) / len(group.members)
    return Capacities({m.id: share for m in group.members}, {m.id: "share" for m in group.members})


def planning_capacities(group: Group, lags: Mapping[TopicPartition, int]) -> Capacities | None:
    """The capacities a time-aware plan is made for: those of :func:`capacities` when the
    group has produce rates; None (plan for the lag snapshot) otherwise."""
    return capacities(group, lags) if has_rates(group) else None


def catch_up_time(
    backlog: float,
    inflow: float,
    capacity: float,
    *,
    lower_bound: bool = False,
    reads: float = 0.0,
    window: float | None = None,
) -> float:
    """Seconds until a member reading ``capacity`` msg/s has read ``backlog`` while ``inflow``
    more arrives: ``backlog ÷ (capacity − inflow)``; ``inf`` (never) when ``inflow`` is not
    below ``capacity``, even without backlog now, for the backlog will grow (a member with neither
    backlog nor inflow has caught up, whatever its capacity). With
    ``lower_bound`` (the capacity is only a share, :class:`Capacities`), a member that would
    not be saturated counts as caught up: one without backlog, or, with rates measured over
    ``window`` seconds, one whose backlog its partitions' readers read within it (``reads``:
    their measured consume rate; :func:`saturated`)."""
    if (lower_bound and not saturated(backlog, reads, window)) or (backlog == 0 and inflow == 0):
        return 0.0
    if inflow >= capacity:
        return math.inf
    return backlog / (capacity - inflow)


def member_catch_up(
    group: Group,
    assignment: Assignment,
    lags: Mapping[TopicPartition, int],
    capacity: Capacities,
    *,
    rate_in: Mapping[TopicPartition, float] | None = None,
) -> dict[str, float]:
    """Each member's catch-up time under ``assignment`` (:func:`catch_up_time`): its backlog
    L (the lag of its partitions), its inflow I (their ``rate_in``, or 0 where none is
    known), its capacity C; under shares with rates measured over a known window, what its
    partitions are read at (their ``rate_out``, or 0 where none is known). ``rate_in``: every
    partition's, if the caller has them already."""
    # One pass over the partitions and one look at the sources, not one per member: on groups
    # of a million partitions that was most of a time-aware plan's work.
    if rate_in is None:
        rate_in = rates_in(group)
    shared = capacity.shared
    window = group.rate_window if shared else None
    rate_out = {p.tp: p.rate_out or 0.0 for p in group.partitions()} if window is not None else None
    return {
        member_id: catch_up_time(
            sum(map(lags.__getitem__, tps)),
            sum(map(rate_in.__getitem__, tps)),
            capacity.by_member[member_id],
            lower_bound=shared,
            reads=sum(map(rate_out.__getitem__, tps)) if rate_out is not None else 0.0,
            window=window,
        )
        for member_id, tps in assignment.partitions.items()
    }


def catch_up_seconds(
    group: Group, assignment: Assignment, lags: Mapping[TopicPartition, int]
) -> float | None:
    """Predicted seconds until every member of ``assignment`` has read its backlog: the
    slowest member's :func:`member_catch_up`; ``inf`` when some member never catches up; None
    when no member's capacity and no consume rate is known (:func:`capacities`).

    Imbalance says how uneven a plan is in messages; this says what that costs in time, which
    is what an operator waiting for a group to catch up wants to know.

    For example: members ``a`` and ``b`` own nothing yet and read 80 msg/s together, so each is
    credited with 40 (a share). Partition ``t-0`` has lag 1,000 and takes 10 msg/s, ``t-1`` has
    no lag and takes 30 msg/s. Given one each, ``a`` (with ``t-0``) gains 40 − 10 = 30 msg/s
    and catches up in 1,000 ÷ 30 ≈ 33 s, ``b`` has nothing to read: the plan takes 33 s. Given
    both, ``a`` takes in 40 msg/s, all of its share, and never catches up: ``inf``.
    """
    capacity = capacities(group, lags)
    if capacity is None:
        return None
    return max(member_catch_up(group, assignment, lags, capacity).values(), default=0.0)


def drain_weights(group: Group, lags: Mapping[TopicPartition, int]) -> dict[TopicPartition, float]:
    """Each partition's lag plus what its producers add over the drain horizon."""
    horizon = drain_horizon(group, lags)
    return {p.tp: lags[p.tp] + (p.rate_in or 0.0) * horizon for p in group.partitions()}
