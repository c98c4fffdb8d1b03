"""What each strategy would assign for a group, with its metrics: the core's main entry point.

offsets -> lag -> assignment -> metrics; the CLI, the pipeline and the reports all come here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lagassign.lag import group_lags
from lagassign.metrics import AssignmentMetrics, evaluate
from lagassign.model import Assignment, Group, TopicPartition
from lagassign.strategies import Strategy, create, names

#: the name under which the members' current assignment is shown beside the strategies
CURRENT = "current"


@dataclass(frozen=True, slots=True)
class Plan:
    strategy: str
    assignment: Assignment
    metrics: AssignmentMetrics


@dataclass(frozen=True, slots=True)
class GroupPlans:
    group: Group
    lags: dict[TopicPartition, int]
    plans: tuple[Plan, ...]
    #: the assignment the members own now, when they own anything
    current: Plan | None = None


def plan_with(group: Group, strategy: Strategy, lags: dict[TopicPartition, int]) -> Plan:
    assignment = strategy.assign(group)
    return Plan(strategy.name, assignment, evaluate(group, assignment, lags))


def plan_group(group: Group, strategies: Iterable[str] | None = None) -> GroupPlans:
    """Every named strategy (default: all registered) applied to ``group``, side by side."""
    lags = group_lags(group)
    chosen = list(strategies) if strategies is not None else names()
    plans = tuple(plan_with(group, create(n), lags) for n in chosen)
    return GroupPlans(group, lags, plans, current_plan(group, lags))


def current_plan(group: Group, lags: dict[TopicPartition, int]) -> Plan | None:
    owners = group.current_owners()
    if not owners:
        return None
    held: dict[str, list[TopicPartition]] = {}
    for tp, member_id in owners.items():
        held.setdefault(member_id, []).append(tp)
    owned = Assignment.build(group.members, held)
    return Plan(CURRENT, owned, evaluate(group, owned, lags))
