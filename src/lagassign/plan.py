"""One rebalance round, and what each strategy would assign for a group with its metrics: the
core's main entry point.

offsets -> lag -> assignment -> metrics. The CLI, the pipeline and the reports come here for
plans; the consumer-group adapters and the simulator come here for each rebalance round
(:func:`rebalance_round`), so that a round means the same thing wherever it happens.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from lagassign.lag_rules import group_lags
from lagassign.metrics import AssignmentMetrics, GroupFacts, evaluate, group_facts
from lagassign.model import Assignment, Group, Member, Topic, TopicPartition
from lagassign.rates import Capacities, planning_capacities
from lagassign.strategies import RebalanceProtocol, Strategy, create, names
from lagassign.strategies.cooperative import Consuming, RebalanceRound, assign_cooperatively

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
    #: the members' capacities when the group has produce rates: ``balanced`` then plans for
    #: catch-up time (:func:`lagassign.strategies.balanced.catch_up_plan`); None: for lag
    capacities: Capacities | None = None
    #: by strategy name, for each plan whose first round gives some partitions to nobody
    #: (withheld under the cooperative protocol): the plan its rounds settle on
    #: (:func:`settle`), with its metrics; moves are counted from the members' current
    #: assignment, as for the first round
    settled: Mapping[str, Plan] = field(default_factory=dict)
    #: the strategies of ``settled`` whose rounds never settle on this group
    #: (:attr:`Settling.settles`): their plan there is the round that repeats an earlier one,
    #: one phase of the cycle, and its unassigned partitions are those that phase withholds
    unsettled: frozenset[str] = frozenset()

    @property
    def time_aware(self) -> bool:
        return self.capacities is not None


def rebalance_round(
    strategy: Strategy, group: Group, consuming: Consuming | None = None
) -> RebalanceRound:
    """What ``strategy`` assigns ``group`` in one rebalance round, and what it withholds.

    ``consuming``: what each member still consumes, as it reports in the owned-partitions field
    (a member without an entry consumes nothing). ``None``: as the strategy's own protocol
    (its first) has it: under the cooperative protocol every member still consumes what it
    owns; under the eager protocol nobody consumes anything, for members revoke everything
    before they join.

    A strategy that supports the cooperative protocol withholds, by
    :mod:`lagassign.strategies.cooperative`, every partition it would hand from a member still
    consuming it to another, whatever protocol the leader runs; any other strategy assigns
    every partition and withholds nothing.

    Example: ``a`` owns t-0..t-3 and ``b`` joins. ``range`` gives ``a`` [t-0, t-1] and ``b``
    [t-2, t-3] at once. ``cooperative-sticky`` (cooperative) gives ``a`` [t-0, t-1] and ``b``
    nothing this round, withholding t-2 and t-3 until ``a`` has revoked them. ``balanced``
    (eager first) gives its whole target; with ``consuming={"a": [t-0..t-3]}`` it withholds
    what moves, as ``cooperative-sticky`` does.
    """
    if RebalanceProtocol.COOPERATIVE not in strategy.protocols:
        return RebalanceRound(strategy.assign(group), frozenset())
    if consuming is None and strategy.protocols[0] is RebalanceProtocol.EAGER:
        consuming = {}
    return assign_cooperatively(strategy, group, consuming)


#: rebalance rounds :func:`settle` runs at most. Kafka has no such cap (a member that revoked
#: anything rejoins, so rounds go on until one revokes nothing); it only ends rounds that neither
#: settle nor come back to an assignment they made before, which no group seen so far does
MAX_ROUNDS = 50


@dataclass(frozen=True, slots=True)
class Settling:
    """Where a strategy's rebalance rounds on a group end (:func:`settle`)."""

    #: the assignment the rounds settle on; when they never do, that of the round that repeats
    #: an earlier one (a phase of the cycle), which gives what it withholds to nobody
    assignment: Assignment
    #: rounds run, the first included
    rounds: int
    #: False: the rounds come back to an assignment they made before, so the group would
    #: rebalance for ever, some partition always in flight between two members (or they ran
    #: :data:`MAX_ROUNDS` without settling or repeating, which no group seen so far does)
    settles: bool


def settle(strategy: Strategy, group: Group, first: RebalanceRound | None = None) -> Settling:
    """Where the rebalance rounds of ``strategy`` on ``group`` end, from its first round
    (``first``, else :func:`rebalance_round` now).

    A round that withholds partitions (the cooperative protocol: they move, and a member
    still consumes them) is followed by another, as in Kafka: every member revokes what it was
    not given and rejoins owning what it was given, in the next generation; in that round
    nobody consumes the withheld partitions any more, so they are assigned. A strategy that
    withholds nothing settles in its first round.

    The rounds need not settle. Kafka's rack-aware ``CooperativeStickyAssignor`` (kafka-clients
    4.4, and ours, which gives the same assignment in every round) can hand a partition back and
    forth for ever: rounds that come back to an assignment they made before repeat from there,
    so they stop at the first repeat, ``settles`` False, with the repeating round's assignment.
    ``tests/test_differential_java.py`` has such a group, and four that settle only in their
    fifth round.

    Example: ``a`` owns t-0..t-3 and ``b`` joins; ``cooperative-sticky``'s first round gives
    ``a`` [t-0, t-1] and ``b`` nothing, withholding t-2 and t-3; the second gives ``b``
    [t-2, t-3]: it settles in 2 rounds.
    """
    assignment, withheld = first if first is not None else rebalance_round(strategy, group)
    generation = max((m.generation or 0 for m in group.members), default=0)
    # every member's list, in order: a round's result depends only on what the members own
    # (all of one generation after the first round), so an assignment seen before repeats
    seen = {_as_key(assignment)}
    rounds = 1
    while withheld and rounds < MAX_ROUNDS:
        generation += 1
        members = tuple(
            replace(m, owned=tuple(assignment.partitions.get(m.id, ())), generation=generation)
            for m in group.members
        )
        assignment, withheld = rebalance_round(strategy, replace(group, members=members))
        rounds += 1
        key = _as_key(assignment)
        if key in seen:
            break
        seen.add(key)
    return Settling(assignment, rounds, settles=not withheld)


def _as_key(assignment: Assignment) -> tuple[tuple[str, tuple[TopicPartition, ...]], ...]:
    return tuple(assignment.partitions.items())


def plan_with(
    group: Group,
    strategy: Strategy,
    lags: dict[TopicPartition, int],
    facts: GroupFacts | None = None,
) -> Plan:
    """One round of ``strategy`` on ``group`` under its own protocol, with its metrics
    (``facts``: :func:`lagassign.metrics.group_facts`, when the caller has them)."""
    assignment = rebalance_round(strategy, group).assignment
    return Plan(strategy.name, assignment, evaluate(group, assignment, lags, facts))


def plan_group(group: Group, strategies: Iterable[str] | None = None) -> GroupPlans:
    """Every named strategy (default: all registered) applied to ``group``, side by side."""
    lags = group_lags(group)
    # what every plan's metrics read of the group, found once
    facts = group_facts(group, lags)
    chosen = list(strategies) if strategies is not None else names()
    # each strategy's first round, kept for settle: it starts from there
    made = [create(n) for n in chosen]
    rounds = [rebalance_round(strategy, group) for strategy in made]
    plans = tuple(
        Plan(strategy.name, r.assignment, evaluate(group, r.assignment, lags, facts))
        for strategy, r in zip(made, rounds, strict=True)
    )
    endings = {
        plan.strategy: settle(create(plan.strategy), group, first)
        for plan, first in zip(plans, rounds, strict=True)
        if plan.metrics.unassigned
    }
    settled = {
        name: Plan(name, end.assignment, evaluate(group, end.assignment, lags, facts))
        for name, end in endings.items()
    }
    return GroupPlans(
        group,
        lags,
        plans,
        current_plan(group, lags, facts),
        planning_capacities(group, lags),
        settled,
        frozenset(name for name, end in endings.items() if not end.settles),
    )


def with_members(group: Group, count: int) -> Group:
    """``group`` with ``count`` members of its own instead of the ones it has: ``member-1`` …
    ``member-<count>``, each subscribing every topic of the group and owning nothing.

    For planning a group whose consumers are all stopped: Kafka keeps no record of the members
    an empty group had (``describe_consumer_groups`` lists none, classic or consumer protocol,
    and committed offsets carry only what a client wrote as their metadata, empty by default),
    so how many will consume is the user's to say. Every partition keeps its lag and produce
    rate; consume rates are dropped, for what the old members read (nothing, once stopped) says
    nothing of what new ones can (:func:`lagassign.rates.capacities` would share it out).
    """
    members = tuple(Member(f"member-{i}", frozenset(group.topics)) for i in range(1, count + 1))
    topics = {
        name: Topic(name, tuple(replace(p, rate_out=None) for p in topic.partitions))
        for name, topic in group.topics.items()
    }
    return replace(group, topics=topics, members=members)


def shown_plans(gp: GroupPlans) -> list[Plan]:
    """What a one-group view shows: the current assignment (when the members own something),
    then each strategy where its rounds settle (a strategy that withholds nothing settles in
    its first round)."""
    current = [gp.current] if gp.current else []
    return current + [gp.settled.get(plan.strategy, plan) for plan in gp.plans]


def current_plan(
    group: Group, lags: dict[TopicPartition, int], facts: GroupFacts | None = None
) -> Plan | None:
    owners = facts.owners if facts is not None else group.current_owners()
    if not owners:
        return None
    held: dict[str, list[TopicPartition]] = {}
    for tp, member_id in owners.items():
        held.setdefault(member_id, []).append(tp)
    owned = Assignment.build(group.members, held)
    return Plan(CURRENT, owned, evaluate(group, owned, lags, facts))
