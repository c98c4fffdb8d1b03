"""The exact optimum of the balancing problem, by a real MILP solver (HiGHS through highspy).

Minimise the largest member total of ``weights`` subject to the counts ``balanced`` promises:
each partition to exactly one subscriber; per topic, each subscriber gets the floor or ceiling
of partitions ÷ subscribers; with identical subscriptions, each member's total the floor or
ceiling of partitions ÷ members.

This is what ``balanced`` is measured against (``tests/test_balanced.py``,
``bench/quality.py``). highspy is an optional dependency (``pip install 'lagassign[exact]'``);
it is imported only when a solve is asked for.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from lagassign.metrics import pigeonhole_bound
from lagassign.model import Group, TopicPartition


class OptimumUnavailable(RuntimeError):
    """No MILP solver is installed."""


@dataclass(frozen=True, slots=True)
class Optimum:
    """The best largest member total the solver found, and the bound it proved."""

    #: the best solution's largest member total (inf if the solver found none in time)
    value: float
    #: no assignment does better than this; equals ``value`` when optimality is proven
    bound: float

    @property
    def proven(self) -> bool:
        return self.value - self.bound <= 1e-6 * max(self.value, 1.0)

    def certifies(self, achieved: float, within: float) -> bool:
        """Whether ``achieved`` is provably within the fraction ``within`` of the optimum."""
        return achieved <= self.bound * (1 + within) + 1e-9


def optimum(
    group: Group,
    weights: Mapping[TopicPartition, float],
    *,
    time_limit: float = 20.0,
    gap: float = 1e-4,
) -> Optimum:
    members = list(group.members)
    pairs = [
        (p.tp, i)
        for p in group.partitions()
        for i, m in enumerate(members)
        if p.tp.topic in m.topics
    ]
    if not pairs:
        return Optimum(0.0, 0.0)
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

    n = len(pairs) + 1  # x[pair] binary, then z, the largest member total
    cost = np.zeros(n)
    cost[-1] = 1.0
    upper = np.ones(n)
    upper[-1] = math.inf
    h.addVars(n, np.zeros(n), upper)
    h.changeColsCost(n, np.arange(n, dtype=np.int32), cost)
    h.changeColsIntegrality(
        n - 1, np.arange(n - 1, dtype=np.int32), np.full(n - 1, highspy.HighsVarType.kInteger)
    )

    by_tp: dict[TopicPartition, list[int]] = defaultdict(list)
    by_member_topic: dict[tuple[int, str], list[int]] = defaultdict(list)
    by_member: dict[int, list[int]] = defaultdict(list)
    for j, (tp, i) in enumerate(pairs):
        by_tp[tp].append(j)
        by_member_topic[(i, tp.topic)].append(j)
        by_member[i].append(j)

    def row(lower: float, upper: float, cols: list[int], coefs: list[float]) -> None:
        h.addRow(lower, upper, len(cols), np.array(cols, dtype=np.int32), np.array(coefs))

    for cols in by_tp.values():
        row(1, 1, cols, [1.0] * len(cols))
    for topic in group.topics:
        subs = [i for i, m in enumerate(members) if topic in m.topics]
        if subs:
            size = len(group.topics[topic].partitions)
            floor, ceil = size // len(subs), -(-size // len(subs))
            for i in subs:
                cols = by_member_topic[(i, topic)]
                row(floor, ceil, cols, [1.0] * len(cols))
    identical = len({m.topics for m in members}) == 1
    if identical:
        total = len(by_tp)
        floor, ceil = total // len(members), -(-total // len(members))
        for i in range(len(members)):
            row(floor, ceil, by_member[i], [1.0] * len(by_member[i]))
    for i in range(len(members)):
        cols = by_member[i]
        row(-math.inf, 0, [*cols, n - 1], [float(weights[pairs[j][0]]) for j in cols] + [-1.0])
    if identical:
        # Interchangeable members: order their loads to spare the solver symmetric branches.
        for i in range(len(members) - 1):
            a, b = by_member[i], by_member[i + 1]
            row(
                0,
                math.inf,
                a + b,
                [float(weights[pairs[j][0]]) for j in a]
                + [-float(weights[pairs[j][0]]) for j in b],
            )

    h.run()
    info = h.getInfo()
    min_count = len(by_tp) // len(members) if identical else 0
    bound = max(
        float(info.mip_dual_bound),
        pigeonhole_bound([weights[tp] for tp in by_tp], len(members), min_count),
    )
    if info.primal_solution_status != 2:  # 2: a feasible solution exists
        return Optimum(math.inf, bound)
    return Optimum(
        float(info.objective_function_value), min(bound, float(info.objective_function_value))
    )
