"""How good an assignment is: per-member load, imbalance against the lower bound, moves."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

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
