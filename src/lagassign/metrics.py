"""How good an assignment is: per-member load, imbalance against the lower bound, moves."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import accumulate

from lagassign.model import Assignment, Group, TopicPartition


@dataclass(frozen=True, slots=True)
class MemberLoad:
    member_id: str
    partitions: int
    lag: int


@dataclass(frozen=True, slots=True)
class AssignmentMetrics:
    members: tuple[MemberLoad, ...]
    total_lag: int
    #: max(total lag / members, largest partition lag): no assignment can do better
    lower_bound: float
    #: partitions that had an owner and are not kept by it
    moves: int
    #: partitions of subscribed topics not assigned (cooperative rounds withhold moving ones)
    unassigned: int

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


def lower_bound(lags: Mapping[TopicPartition, int], members: int) -> float:
    if members == 0:
        return 0.0
    return max(sum(lags.values()) / members, max(lags.values(), default=0))


def pigeonhole_bound(weights: Iterable[float], members: int, min_count: int = 0) -> float:
    """A lower bound on the largest member total, stronger than total ÷ members when a few
    partitions carry the lag.

    Among the k·M + 1 heaviest partitions some member gets k + 1, so its total is at least the
    k + 1 lightest of them; and when every member gets at least ``min_count`` partitions, that
    member holds at least ``min_count - k - 1`` more, no lighter than the lightest of the rest.
    """
    desc = sorted(weights, reverse=True)
    n = len(desc)
    lightest = list(accumulate(reversed(desc), initial=0.0))  # lightest[j]: the j lightest
    best = sum(desc) / members if members else 0.0
    for k in range((n - 1) // max(members, 1) + 1):
        top = k * members + 1
        window = desc[top - k - 1 : top]  # the k + 1 lightest of the top k·M + 1
        more = max(min(min_count, n) - k - 1, 0)
        # the `more` lightest partitions outside the window (it starts n - top from the end)
        outside = n - top
        if more <= outside:
            rest = lightest[more]
        else:
            rest = lightest[outside] + lightest[k + 1 + more] - lightest[outside + k + 1]
        best = max(best, sum(window) + rest)
    return best


def moves(group: Group, assignment: Assignment) -> int:
    new_owner = assignment.owners()
    return sum(1 for tp, owner in group.current_owners().items() if new_owner.get(tp) != owner)


def evaluate(
    group: Group, assignment: Assignment, lags: Mapping[TopicPartition, int]
) -> AssignmentMetrics:
    """Metrics of ``assignment`` for ``group``; ``lags`` from :func:`lagassign.lag.group_lags`."""
    subscribed = {t for m in group.members for t in m.topics}
    in_scope = {tp: lag for tp, lag in lags.items() if tp.topic in subscribed}
    assigned = assignment.owners()
    return AssignmentMetrics(
        members=member_loads(assignment, lags),
        total_lag=sum(in_scope.values()),
        lower_bound=lower_bound(in_scope, len(group.members)),
        moves=moves(group, assignment),
        unassigned=sum(1 for tp in in_scope if tp not in assigned),
    )
