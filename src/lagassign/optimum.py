"""The exact optima of ``balanced``'s objectives, by a real MILP solver (HiGHS through highspy).

Every model here assigns each partition to exactly one subscriber with the counts ``balanced``
promises: per topic, each subscriber gets the floor or ceiling of partitions ÷ subscribers;
with identical subscriptions, each member's total the floor or ceiling of partitions ÷
members. On top of that:

* :func:`optimum`: minimise the largest member total of ``weights`` (the lag objective);
* :func:`utilisation_optimum`: minimise the largest inflow ÷ capacity (how far the group falls
  behind when it must);
* :func:`catch_up_optimum`: minimise the largest catch-up time L_m ÷ (C_m − I_m) among plans
  that keep every member below capacity. For a fixed T, "every member catches up within T" is
  L_m + T·I_m ≤ T·C_m, linear in the assignment, so T is found by bisection over feasibility
  problems.

This is what ``balanced`` is measured against (``tests/test_balanced.py``,
``bench/quality.py``). highspy is an optional dependency (``pip install 'lagassign[exact]'``);
it is imported only when a solve is asked for.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from lagassign.metrics import pigeonhole_bound
from lagassign.model import Group, TopicPartition

#: a member keeps up when its inflow stays this fraction below its capacity (I_m < C_m, strict)
KEEP_UP_MARGIN = 1e-9
#: catch_up_optimum looks no further for a plan than this many seconds (about 30 years)
MAX_CATCH_UP = 1e9


class OptimumUnavailable(RuntimeError):
    """No MILP solver is installed."""


@dataclass(frozen=True, slots=True)
class Optimum:
    """The best value the solver found for an objective to minimise, and the bound it proved."""

    #: the best solution's value (inf if the solver found none in time)
    value: float
    #: no assignment does better than this; equals ``value`` when optimality is proven
    bound: float

    @property
    def proven(self) -> bool:
        return self.value - self.bound <= 1e-6 * max(self.value, 1.0)

    def certifies(self, achieved: float, within: float) -> bool:
        """Whether ``achieved`` is provably within the fraction ``within`` of the optimum."""
        return achieved <= self.bound * (1 + within) + 1e-9

    def matched(self, achieved: float) -> bool:
        """Whether ``achieved`` is as good as the best solution the solver found, up to the
        solver's own tolerance (HiGHS reports a plan of total 14,261 as 14260.999999999956)."""
        return achieved <= self.value + 1e-6 * max(abs(self.value), 1.0)


class _Assignments:
    """A HiGHS model whose binary x[p, m] assigns partition p to member m, with the counts;
    objectives and member rows are added by the callers."""

    def __init__(
        self, group: Group, time_limit: float, gap: float, extra: int, node_limit: int | None = None
    ) -> None:
        self.members = list(group.members)
        self.pairs = [
            (p.tp, i)
            for p in group.partitions()
            for i, m in enumerate(self.members)
            if p.tp.topic in m.topics
        ]
        try:
            import highspy
        except ImportError:
            raise OptimumUnavailable(
                "the exact optimum needs highspy: pip install 'lagassign[exact]'"
            ) from None
        h = highspy.Highs()  # type: ignore[no-untyped-call]
        h.setOptionValue("output_flag", False)
        h.setOptionValue("time_limit", float(time_limit))
        h.setOptionValue("mip_rel_gap", float(gap))
        h.setOptionValue("threads", 1)
        if node_limit is not None:
            # a budget of branch-and-bound nodes ends the search at the same place however
            # loaded the machine is (one thread: HiGHS is deterministic), where a time limit
            # ends it wherever the clock says
            h.setOptionValue("mip_max_nodes", int(node_limit))
        self.h: Any = h
        # x[pair] binary, then `extra` continuous columns (z, the objective)
        n = len(self.pairs) + extra
        self.columns = n
        upper = np.ones(n)
        upper[len(self.pairs) :] = math.inf
        h.addVars(n, np.zeros(n), upper)
        h.changeColsIntegrality(
            len(self.pairs),
            np.arange(len(self.pairs), dtype=np.int32),
            np.full(len(self.pairs), highspy.HighsVarType.kInteger),
        )
        self.by_tp: dict[TopicPartition, list[int]] = defaultdict(list)
        by_member_topic: dict[tuple[int, str], list[int]] = defaultdict(list)
        self.by_member: dict[int, list[int]] = defaultdict(list)
        for j, (tp, i) in enumerate(self.pairs):
            self.by_tp[tp].append(j)
            by_member_topic[(i, tp.topic)].append(j)
            self.by_member[i].append(j)
        for cols in self.by_tp.values():
            self.row(1, 1, cols, [1.0] * len(cols))
        for topic in group.topics:
            subs = [i for i, m in enumerate(self.members) if topic in m.topics]
            if subs:
                size = len(group.topics[topic].partitions)
                floor, ceil = size // len(subs), -(-size // len(subs))
                for i in subs:
                    cols = by_member_topic[(i, topic)]
                    self.row(floor, ceil, cols, [1.0] * len(cols))
        self.identical = len({m.topics for m in self.members}) == 1
        if self.identical:
            total = len(self.by_tp)
            floor, ceil = total // len(self.members), -(-total // len(self.members))
            for i in range(len(self.members)):
                self.row(floor, ceil, self.by_member[i], [1.0] * len(self.by_member[i]))

    def row(self, lower: float, upper: float, cols: list[int], coefs: list[float]) -> None:
        self.h.addRow(lower, upper, len(cols), np.array(cols, dtype=np.int32), np.array(coefs))

    def member_total(self, i: int, weights: Mapping[TopicPartition, float]) -> list[float]:
        """Coefficients of member ``i``'s columns for its total of ``weights``."""
        return [float(weights[self.pairs[j][0]]) for j in self.by_member[i]]

    def minimise(self, column: int) -> None:
        cost = np.zeros(self.columns)
        cost[column] = 1.0
        self.h.changeColsCost(self.columns, np.arange(self.columns, dtype=np.int32), cost)

    def solve(self) -> tuple[float, float] | None:
        """(objective value, proven bound), or None when the solver found no solution."""
        self.h.run()
        info = self.h.getInfo()
        if info.primal_solution_status != 2:  # 2: a feasible solution exists
            return None
        return float(info.objective_function_value), float(info.mip_dual_bound)

    def feasible(self) -> bool | None:
        """Whether the constraints can all hold: True, False, or None when the solver could
        not tell in its time."""
        self.h.run()
        status = self.h.getModelStatus()
        name = self.h.modelStatusToString(status).lower()
        if "infeasible" in name:
            return False
        if self.h.getInfo().primal_solution_status == 2:
            return True
        return None


def optimum(
    group: Group,
    weights: Mapping[TopicPartition, float],
    *,
    time_limit: float = 20.0,
    gap: float = 1e-4,
    node_limit: int | None = None,
) -> Optimum:
    """The smallest largest member total of ``weights``; ``node_limit``: stop after that many
    branch-and-bound nodes (a deterministic budget), else only at ``time_limit``."""
    if not group.members or not any(
        p.tp.topic in m.topics for p in group.partitions() for m in group.members
    ):
        return Optimum(0.0, 0.0)
    model = _Assignments(group, time_limit, gap, extra=1, node_limit=node_limit)
    z = model.columns - 1
    model.minimise(z)
    for i in range(len(model.members)):
        model.row(-math.inf, 0, [*model.by_member[i], z], [*model.member_total(i, weights), -1.0])
    if model.identical:
        # Interchangeable members: order their loads to spare the solver symmetric branches.
        for i in range(len(model.members) - 1):
            a, b = model.by_member[i], model.by_member[i + 1]
            row_weights = model.member_total(i, weights)
            next_weights = model.member_total(i + 1, weights)
            model.row(0, math.inf, a + b, row_weights + [-w for w in next_weights])
    solved = model.solve()
    min_count = len(model.by_tp) // len(model.members) if model.identical else 0
    pigeonhole = pigeonhole_bound(
        [weights[tp] for tp in model.by_tp], len(model.members), min_count
    )
    if solved is None:
        bound = max(float(model.h.getInfo().mip_dual_bound), pigeonhole)
        return Optimum(math.inf, bound)
    value, dual = solved
    return Optimum(value, min(max(dual, pigeonhole), value))


def utilisation_optimum(
    group: Group,
    rates: Mapping[TopicPartition, float],
    capacity: Mapping[str, float],
    *,
    time_limit: float = 20.0,
    gap: float = 1e-4,
    node_limit: int | None = None,
    target: float | None = None,
) -> Optimum:
    """The smallest largest inflow ÷ capacity over members (``rates``: produce rate per
    partition; ``capacity``: msg/s per member id, positive); ``node_limit`` as in
    :func:`optimum`. ``target``: stop at the first plan found at or below it (HiGHS's
    ``objective_target``), for callers that only ask whether some plan gets there: whether
    every member can keep up is ``utilisation_optimum(..., target=...).value < 1``."""
    if not group.members or not any(
        p.tp.topic in m.topics for p in group.partitions() for m in group.members
    ):
        return Optimum(0.0, 0.0)
    model = _Assignments(group, time_limit, gap, extra=1, node_limit=node_limit)
    if target is not None:
        model.h.setOptionValue("objective_target", float(target))
    u = model.columns - 1
    model.minimise(u)
    for i, m in enumerate(model.members):
        model.row(
            -math.inf,
            0,
            [*model.by_member[i], u],
            [*model.member_total(i, rates), -float(capacity[m.id])],
        )
    solved = model.solve()
    if solved is None:
        return Optimum(math.inf, max(float(model.h.getInfo().mip_dual_bound), 0.0))
    value, dual = solved
    return Optimum(value, min(dual, value))


def catch_up_feasible(
    group: Group,
    lags: Mapping[TopicPartition, float],
    rates: Mapping[TopicPartition, float],
    capacity: Mapping[str, float],
    within: float,
    *,
    time_limit: float = 20.0,
    node_limit: int | None = None,
) -> bool | None:
    """Whether some plan has every member catch up within ``within`` seconds while it keeps
    below capacity: L_m + T·I_m ≤ T·C_m and I_m < C_m for every m. None: the solver could not
    tell in ``time_limit`` or ``node_limit`` branch-and-bound nodes."""
    model = _Assignments(group, time_limit, 0.0, extra=0, node_limit=node_limit)
    together = {tp: lags[tp] + within * rates[tp] for tp in rates}
    for i, m in enumerate(model.members):
        cols = model.by_member[i]
        c = float(capacity[m.id])
        if not cols:
            continue
        model.row(-math.inf, within * c, cols, model.member_total(i, together))
        model.row(-math.inf, c * (1 - KEEP_UP_MARGIN), cols, model.member_total(i, rates))
    return model.feasible()


def catch_up_optimum(
    group: Group,
    lags: Mapping[TopicPartition, float],
    rates: Mapping[TopicPartition, float],
    capacity: Mapping[str, float],
    upper: float | None = None,
    *,
    precision: float = 0.002,
    time_limit: float = 20.0,
    node_limit: int | None = None,
) -> Optimum:
    """The smallest largest catch-up time among plans that keep every member below capacity,
    by bisection between 0 and ``upper``, a catch-up time some plan achieves. Without
    ``upper``, one is found by doubling from a second (feasibility is monotone: a plan within
    T is within any longer time); ``Optimum(inf, inf)`` when no plan keeps every member below
    capacity.

    ``value``: the smallest time found feasible; ``bound``: the largest proven infeasible (0
    when none). They end within ``precision`` of each other unless the solver could not tell
    some time, which then leaves them further apart (never wrong).
    """
    if upper is not None and (not math.isfinite(upper) or upper < 0):
        raise ValueError(f"upper must be a catch-up time some plan achieves, got {upper}")
    low = 0.0

    def feasible(within: float) -> bool | None:
        return catch_up_feasible(
            group, lags, rates, capacity, within, time_limit=time_limit, node_limit=node_limit
        )

    if feasible(0.0):
        return Optimum(0.0, 0.0)
    if upper is None:
        # all members finishing together is as soon as any plan can: a start for the doubling
        spare = sum(capacity.values()) - sum(rates.values())
        upper = max(sum(lags.values()) / spare if spare > 0 else 1.0, 1.0)
        while not feasible(upper):
            low, upper = upper, upper * 2
            if upper > MAX_CATCH_UP:
                return Optimum(math.inf, low)
    high = upper
    while high - low > precision * high:
        middle = (low + high) / 2
        answer = feasible(middle)
        if answer is None:
            break  # the solver cannot tell: stop with what is proven
        if answer:
            high = middle
        else:
            low = middle
    return Optimum(high, low)
