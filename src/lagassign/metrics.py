"""How good an assignment is: per-member load, imbalance against the lower bound, moves."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, Any, cast

from lagassign.model import Assignment, Group, TopicPartition
from lagassign.rates import Capacities, capacities, member_catch_up, rates_in

if TYPE_CHECKING:
    from numpy.typing import NDArray


@dataclass(frozen=True, slots=True)
class MemberLoad:
    member_id: str
    partitions: int
    lag: int


@dataclass(frozen=True, slots=True)
class AssignmentMetrics:
    members: tuple[MemberLoad, ...]
    total_lag: int
    #: no assignment can give its largest member less (:func:`lower_bound`)
    lower_bound: float
    #: partitions that had an owner and are not kept by it
    moves: int
    #: partitions of subscribed topics not assigned (cooperative rounds withhold moving ones)
    unassigned: int
    #: each member's predicted seconds until it has read its backlog (inf: never); None when
    #: no capacity or consume rate is known (:func:`lagassign.rates.member_catch_up`)
    member_catch_up: Mapping[str, float] | None = None

    @property
    def max_member_lag(self) -> int:
        return max((m.lag for m in self.members), default=0)

    @property
    def mean_member_lag(self) -> float:
        return self.total_lag / len(self.members) if self.members else 0.0

    @property
    def imbalance(self) -> float:
        """Largest member lag divided by the lower bound; 1.0 is as good as can be."""
        return self.max_member_lag / self.lower_bound if self.lower_bound else 1.0

    @property
    def catch_up_seconds(self) -> float | None:
        """When the slowest member has caught up (inf: some member never does)."""
        if self.member_catch_up is None:
            return None
        return max(self.member_catch_up.values(), default=0.0)

    @property
    def falls_behind(self) -> tuple[str, ...]:
        """The members that never catch up: more comes in than they can read."""
        if self.member_catch_up is None:
            return ()
        return tuple(m for m, t in self.member_catch_up.items() if math.isinf(t))

    @property
    def count_spread(self) -> int:
        counts = [m.partitions for m in self.members]
        return max(counts) - min(counts) if counts else 0


def member_loads(
    assignment: Assignment, lags: Mapping[TopicPartition, int]
) -> tuple[MemberLoad, ...]:
    return tuple(
        MemberLoad(mid, len(tps), sum(lags[tp] for tp in tps))
        for mid, tps in assignment.partitions.items()
    )


def lower_bound(
    lags: Mapping[TopicPartition, float],
    members: int,
    subscribers: Mapping[str, Collection[object]] | None = None,
) -> float:
    """No assignment can give its most loaded member less than this: the mean member lag, the
    largest partition lag and, with ``subscribers`` (topic -> the members subscribing it), the
    share of each set of readers. Whatever is read only by members of a set S must go to them,
    so some member of S carries at least the lag of those topics ÷ |S|.

    Example: consumer-1 alone reads t0 (lag 166,000); it and three others read t1 (lag
    6,000). The mean is 43,000 but consumer-1 cannot carry less than 166,000: that is the
    bound, and an imbalance against it says what a better assignment could still gain.
    """
    if members == 0:
        return 0.0
    bound = max(sum(lags.values()) / members, max(lags.values(), default=0))
    if subscribers:
        by_topic: dict[str, float] = {}
        for tp, lag in lags.items():
            by_topic[tp.topic] = by_topic.get(tp.topic, 0) + lag
        # topics grouped by their set of readers: few sets, however many topics
        by_readers: dict[frozenset[object], float] = {}
        for topic, lag in by_topic.items():
            readers = frozenset(subscribers.get(topic, ()))
            if readers:
                by_readers[readers] = by_readers.get(readers, 0) + lag
        for readers in by_readers:
            only_theirs = sum(lag for other, lag in by_readers.items() if other <= readers)
            bound = max(bound, only_theirs / len(readers))
    return bound


def pigeonhole_bound(
    weights: Iterable[float] | NDArray[Any], members: int, min_count: int = 0
) -> float:
    """A lower bound on the largest member total, stronger than total ÷ members when a few
    partitions carry the lag.

    Among the k·M + 1 heaviest partitions some member gets k + 1, so its total is at least the
    k + 1 lightest of them; and when every member gets at least ``min_count`` partitions, that
    member holds at least ``min_count - k - 1`` more, no lighter than the lightest of the rest.
    """
    # an array (there only once NumPy is loaded) is sorted as it is, not listed first. Told by
    # its dtype, not by NumPy's module in sys.modules: another thread may still be importing it
    # there, half made (lagassign.kafka.group.import_ahead)
    listed = cast("NDArray[Any]", weights) if hasattr(weights, "dtype") else list(weights)
    n, total, window_sum, lightest = _sorted_sums(listed)
    best = total / members if members else 0.0
    for k in range((n - 1) // max(members, 1) + 1):
        top = k * members + 1
        window = window_sum(top - k - 1, top)  # the k + 1 lightest of the top k·M + 1
        more = max(min(min_count, n) - k - 1, 0)
        # the `more` lightest partitions outside the window (it starts n - top from the end)
        outside = n - top
        if more <= outside:
            rest = lightest(more)
        else:
            rest = lightest(outside) + lightest(k + 1 + more) - lightest(outside + k + 1)
        best = max(best, window + rest)
    return best


#: from this many weights on, :func:`pigeonhole_bound` works on whole numbers with NumPy
NUMPY_SORT_FROM = 50_000


def _sorted_sums(
    weights: list[float] | NDArray[Any],
) -> tuple[int, float, Callable[[int, int], float], Callable[[int], float]]:
    """For :func:`pigeonhole_bound`, of ``weights`` sorted heaviest first: how many, their
    total, the sum of the sorted ``[a:b]`` and that of the j lightest (added lightest first).
    A long list of whole numbers (lags) on NumPy arrays: the same sums, exact for ints and
    added one after the other in the same order for the floats, without a Python number per
    partition (a million lags: 0.15 s → 0.05 s, and tens of MiB less). Other numbers are left
    to Python, whose sort compares ints and floats exactly."""
    n = len(weights)
    if n >= NUMPY_SORT_FROM:
        import numpy as np  # here: it takes a while to load, small groups never need it

        values = np.asarray(weights)
        # whole numbers whose sums fit in 64 bits
        if values.dtype.kind == "i" and values.min() >= 0 and values.max() < 2**62 // n:
            desc = np.sort(values)[::-1]
            prefix = np.concatenate(([0], np.cumsum(desc)))
            light = np.concatenate(([0.0], np.cumsum(desc[::-1], dtype=np.float64)))
            return (
                n,
                int(prefix[-1]),
                lambda a, b: int(prefix[b] - prefix[a]),
                lambda j: float(light[j]),
            )
    if not isinstance(weights, list):
        weights = weights.tolist()  # an array's numbers, as Python's
    ordered = sorted(weights, reverse=True)
    partial = list(accumulate(reversed(ordered), initial=0.0))
    if all(type(w) is int for w in ordered):
        # ints add up exactly in any order: a window's sum off the running sums (summed
        # window by window, 10,000 lags on 2 members took a tenth of a second)
        running = list(accumulate(ordered, initial=0))
        return n, running[-1], lambda a, b: running[b] - running[a], partial.__getitem__
    return n, sum(ordered), lambda a, b: sum(ordered[a:b]), partial.__getitem__


def moves(group: Group, assignment: Assignment) -> int:
    return _moves(group.current_owners(), assignment.owners())


def _moves(owners: Mapping[TopicPartition, str], new_owner: Mapping[TopicPartition, str]) -> int:
    return sum(1 for tp, owner in owners.items() if new_owner.get(tp) != owner)


@dataclass(frozen=True, slots=True)
class GroupFacts:
    """What :func:`evaluate` reads of a group and its lags, whatever the assignment: found
    once per group (:func:`group_facts`) when several plans of it are evaluated."""

    #: :func:`lagassign.rates.capacities`
    capacity: Capacities | None
    #: the lags of the partitions of topics some member subscribes
    in_scope: dict[TopicPartition, int]
    lower_bound: float
    #: who owns each partition now (:meth:`Group.current_owners`)
    owners: dict[TopicPartition, str]
    #: each partition's produce rate (0 where none is known), when a capacity is known
    rate_in: dict[TopicPartition, float] | None


def group_facts(group: Group, lags: Mapping[TopicPartition, int]) -> GroupFacts:
    capacity = capacities(group, lags)
    readers: dict[str, list[str]] = {}
    for m in group.members:
        for t in m.topics:
            readers.setdefault(t, []).append(m.id)
    in_scope = {tp: lag for tp, lag in lags.items() if tp.topic in readers}
    return GroupFacts(
        capacity,
        in_scope,
        lower_bound(in_scope, len(group.members), readers),
        group.current_owners(),
        rates_in(group) if capacity is not None else None,
    )


def evaluate(
    group: Group,
    assignment: Assignment,
    lags: Mapping[TopicPartition, int],
    facts: GroupFacts | None = None,
) -> AssignmentMetrics:
    """Metrics of ``assignment`` for ``group``; ``lags`` from
    :func:`lagassign.lag_rules.group_lags`; ``facts``: :func:`group_facts` of them, when the
    caller has them already."""
    if facts is None:
        facts = group_facts(group, lags)
    assigned = assignment.owners()
    capacity = facts.capacity
    return AssignmentMetrics(
        members=member_loads(assignment, lags),
        total_lag=sum(facts.in_scope.values()),
        lower_bound=facts.lower_bound,
        moves=_moves(facts.owners, assigned),
        unassigned=sum(1 for tp in facts.in_scope if tp not in assigned),
        member_catch_up=(
            member_catch_up(group, assignment, lags, capacity, rate_in=facts.rate_in)
            if capacity is not None
            else None
        ),
    )
