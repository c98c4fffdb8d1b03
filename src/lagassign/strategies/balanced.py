"""``balanced``: the smallest largest-member lag across the whole group, with the seed's counts.

The seed's ``lag`` assignor balances each topic on its own and breaks ties by member id, so
when every topic has one hot partition they all land on the same member. ``balanced`` looks at
every topic together and minimises the largest total lag any member gets, while keeping the
seed's count guarantees:

* per topic, each subscriber gets the floor or the ceiling of partitions ÷ subscribers;
* when every member subscribes the same topics, each member's total is the floor or ceiling
  of all partitions ÷ members too.

It works in two steps.

1. **Construction**, topic by topic, hottest topic first (by its largest partition lag). The
   topic's extra partitions (the ceilings) go to the members with the fewest partitions (when
   subscriptions are identical, so that totals stay balanced) or the least lag; then its
   partitions, hottest first, each go to the least-loaded subscriber with room left.
2. **Improvement**: while the most-loaded member can hand load to another member without
   breaking a count guarantee — swapping two partitions of the same topic, moving a partition
   of a topic where it holds the ceiling to one holding the floor, or swapping partitions of
   two topics where the members hold opposite ceilings — take the exchange that lowers the
   larger of the two loads the most. Every step lowers the largest load or the number of
   members at it, so the search ends; a work budget bounds it on very large groups.

Ties go to the member with fewer partitions, then to a stable hash of the member id: no
member is favoured for sorting first.

Example: members a, b, c subscribe t0, t1, t2 of 3 partitions each; each topic has one hot
partition of lag 900 and two of lag 10.

* ``lag`` (per topic, ties to the smallest id) gives a all three hot partitions: a 2,700,
  b 30, c 30.
* ``balanced`` gives each member one hot partition: 920 each, which is the optimum.

With ``sticky`` (default) and owned partitions, it starts from what members own (dropping
what they may not keep: partitions of topics they no longer subscribe, partitions claimed
twice in one generation or from a stale one, and what exceeds their quota), and moves a
partition only when that lowers the largest member lag by more than ``tolerance`` (relative,
default 5%) compared with staying; the moves are reported by the metrics. When it does move,
the fresh assignment's holdings go, whole, to the members owning most of them.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import itertools
import math
import operator
import random
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any

from lagassign.collector import collector_paused
from lagassign.java_ordering import java_order
from lagassign.lag_rules import GroupLags, group_lags, topic_lags, topic_lags_on_array
from lagassign.metrics import lower_bound, pigeonhole_bound
from lagassign.model import Assignment, Group, Member, Partition, TopicPartition
from lagassign.rates import (
    Capacities,
    catch_up_time,
    drain_weights,
    has_rates,
    planning_capacities,
)
from lagassign.strategies.base import (
    RebalanceProtocol,
    Strategy,
    hottest_first,
    hottest_first_on_array,
    keys_on_array,
    listed_by_owner,
    stable_order,
    subscribers_by_topic,
)
from lagassign.strategies.base import each as _each
from lagassign.strategies.registry import register

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

#: sticky mode keeps partitions where they are while the largest member lag stays within this
#: fraction of what a fresh assignment achieves
DEFAULT_TOLERANCE = 0.05
#: seconds a partition handed from one member to another is not read under the cooperative
#: protocol: one rebalance round (its owner revokes it at the end of the round, its new member
#: gets it in the follow-up). What a time-aware sticky plan prices a handover at
#: (:func:`catch_up_plan`); the simulator's default round (``rebalance_pause``) is as long
DEFAULT_HANDOVER_PAUSE = 10.0
#: candidate exchanges examined at most per assignment; bounds the improvement step on
#: groups of millions of partitions, far above what groups of thousands need
DEFAULT_SEARCH_BUDGET = 2_000_000
#: exchanges that lower a load by less than this fraction of the largest load are not worth
#: a step: they cannot change the largest load measurably, and they would make the search long
MIN_GAIN = 1e-4
#: the smallest step a catch-up plan's search takes, as a fraction of the catch-up time T
#: itself rather than of a load (see :func:`catch_up_plan`): finer than MIN_GAIN only where a
#: member has less than a tenth of its capacity to spare
CATCH_UP_STEP = 1e-3
#: the least spare fraction of capacity CATCH_UP_STEP is scaled by: steps of the load no
#: smaller than CATCH_UP_STEP × this, whatever the float noise of a member at capacity
LEAST_SPARE = 1e-4
#: relative error a bound on whole-number loads may carry before it is rounded up to the next
#: whole number (see :func:`_balanced_state`)
WHOLE_SLACK = 1e-12
#: pairs of members with more same-topic swaps than this are not searched for double swaps
MAX_DOUBLE_SWAPS = 4_000
#: from this many same-topic swaps on, double swaps are paired with NumPy (the same pairs)
VECTOR_DOUBLE_SWAPS = 200
#: from this many combinations on, a split's best is found with NumPy (the same one)
VECTOR_SPLITS = 64
#: above this many partitions, only the member at the largest load looks for double swaps:
#: there one giver's look may cost half the budget (a swap per topic per taker: 1M on 500
#: topics and 2,000 members), and on the 1M-partition benchmark (bench/speed.py) the one giver
#: below the top that looked found none before the budget ran out. Smaller groups search as
#: before.
DOUBLE_SWAPS_TOP_ONLY = 50_000
#: The work budget of the restarts (perturbed constructions, each searched), in work units:
#: candidate exchanges the search examines, plus one per partition a construction places
#: (and, placing by earliest completion, one per further member it looks at: _place_earliest).
#: Restarts run one after the other while the work they have spent is below
#: :func:`restart_work`: WORK_BASE + WORK_SMALL ÷ partitions, at most WORK_MOST. An anytime
#: search: it stops at the lower bound or when the budget is spent (a restart cut short by it
#: is still a valid assignment, kept if it is the best). Counted in work, never in seconds, so
#: the same group always gets the same plan. Small groups get more: there a search is cheap
#: and one local optimum can be percents off (offsets #6 of tests/test_balanced.py's certified
#: suite, 25 partitions on 6 members, comes within 1% of the optimum at its 63rd restart, some
#: 50,000 units), while with more partitions per member local optima lie close together: a
#: group of 100 partitions gets 19,000 units, one of 1,000 partitions 5,500 (the restart
#: count's old rule, 3,000 ÷ partitions restarts, gave it 3 searches of its whole size).
WORK_BASE = 4_000
WORK_SMALL = 1_500_000
WORK_MOST = 60_000
#: restarts end when this many in a row constructed a start already searched (same loads and
#: counts): the perturbations find nothing new, as on groups of a few partitions, where the
#: budget would otherwise pay for thousands of restarts of the same two or three starts (a
#: time-aware group of 2 partitions on 2 members took 0.45 s in the sample fleet)
STALE_RESTARTS = 8
#: groups above this many partitions get no restarts: there the construction is most of the
#: work and a restart as dear as the first search
RESTART_LIMIT = 3_000
#: pairs of members whose shared partitions split more ways than this are not split exhaustively
MAX_SPLITS = 1_000
#: catch-up rounds at most after the first plan, in each of their two runs (each one re-weighs
#: partitions by the best catch-up time so far; see CATCH_UP_RESTARTS); none on groups above
#: GLOBAL_CONSTRUCTION_LIMIT partitions
CATCH_UP_ROUNDS = 12
#: a catch-up round that shortens the largest catch-up time by less than this fraction ends them
CATCH_UP_GAIN = 0.0005
#: catch-up rounds end once no plan can have every member catch up this fraction sooner than
#: the best so far: at T ÷ (1 + this), the search's own lower bound (:func:`_load_bound`) on the
#: weights of that time exceeds it. Of bench/cost.py's ordinary groups with rates that have
#: rounds, a third are proven so right after the first plan, where the rounds after it took
#: most of their time and could gain at most this much, and two thirds before the rounds end
#: (docs/strategies.md, *Proven near*).
CATCH_UP_PROVEN = 0.001
#: The catch-up rounds run twice: first without restarts, each plan its deterministic starts
#: only, until T stops falling; then on from there with this many times each plan's restarts'
#: budget (:func:`restart_work`). Where the rounds end depends on the local optima of the plans
#: on the way; with the restarts every round (1 time the budget) the slowest member ended 2-3%
#: above the optimum on 4 of bench/quality.py's 229 catch-up groups, and 9.5% above on one of
#: 77 groups from seed 1,000. Spent where T has nearly settled, 3 times the budget took every
#: one of them within 0.6%, in up to 1.2 times the time on groups of up to 200 partitions
#: (1.6-1.9 times on one of 3,000 partitions on 1,000 members; docs/strategies.md).
CATCH_UP_RESTARTS = 3
#: The catch-up rounds with restarts (:data:`CATCH_UP_RESTARTS`) then try best-fit starts
#: (:func:`_construct_best_fit`) on this many times each plan's restarts' budget more. The
#: perturbed restarts place each partition on the member done with it soonest, which spreads
#: load; they left the slowest member 2-14% above the best plan found on 4 of the 1,352
#: groups of `catch_up_suite` seeds 60-419 that can keep up (hot-partitions #61: 757 s against
#: 708 s, single-topic #329: 177 s against 156 s), where that plan packs one member close to
#: its capacity with inflow and leaves the backlog to others. Packing each partition where it
#: leaves the least room under the round's T found both (docs/strategies.md, *Best-fit
#: restarts*).
BEST_FIT_RESTARTS = 1
#: a best-fit start packs under the round's T times a factor drawn from [this, 1)
BEST_FIT_BELOW = 0.97
#: The catch-up rounds with restarts last try ruin-and-recreate starts
#: (:func:`_construct_ruined`) on this many times each plan's restarts' budget more. The other
#: restarts build a plan from nothing; near T* the plans they miss differ from the best one
#: found on a few members only, and no exchange the search makes leads there. On the 1,352
#: groups of `catch_up_suite` seeds 60-419 that can keep up, the groups more than 2% above the
#: best plan any run found went from at least 3 to 1 (hot-partitions #149, 4.7% above), and more
#: than 1% from at least 7 to 2 (docs/strategies.md, *Ruin-and-recreate restarts*). One or two
#: times the budget, or fewer perturbed restarts beside them, left other groups above 2%.
RUIN_RESTARTS = 3
#: a ruin-and-recreate start places afresh the slowest member's partitions and those of 1 to
#: this many others drawn at random
RUIN_OTHERS = 5
#: :func:`catch_up_plan`: each time a plan keeping what members own is tried for is this many
#: times the one before
KEPT_LADDER = 1.5
#: from this many members on, a group where no topic gives any member more than one partition
#: is constructed on arrays (:func:`_construct_one_each`)
ONE_EACH_ARRAYS_FROM = 256
#: a member's speed (capacity) below this counts as none: its reciprocal, scaled for the
#: members that read nothing (:func:`_scale`), would overflow a double
LEAST_SPEED = 1e-290
#: up to this many partitions, a second construction (all partitions hottest first) is tried
#: beside the topic-by-topic one; its per-topic heaps go stale too often on huge groups
GLOBAL_CONSTRUCTION_LIMIT = 50_000
#: above this many partitions, each topic's weights are ordered on an array (:class:`_Topic`)
#: and the assignment is listed on arrays (:func:`_to_assignment_on_arrays`): the same plans,
#: without a Python step per partition; by then the pigeonhole bound has loaded NumPy
#: (:data:`lagassign.metrics.NUMPY_SORT_FROM`)
ARRAYS_ABOVE = 50_000
#: whole numbers whose running sums stay below this add up exactly as doubles, as the compiled
#: module adds weights, in any order (:func:`_count_bound`)
EXACT_WHOLE = 2**53


@dataclass(slots=True)
class _Topic:
    """A topic as the plan sees it: its partitions hottest first (equal weights in number
    order), whom they may go to and how many each subscriber gets.

    On groups above :data:`ARRAYS_ABOVE` partitions a topic's weights are ordered
    on an array (:func:`_ordered_on_array`) and its (weight, partition) pairs are made only if
    something reads them all (:attr:`partitions`): the search reads the few it looks at
    (:meth:`item`) of a topic the construction placed one each, and where the construction
    reaches the bound (bench/speed.py's million partitions) the construction, the bound and the
    assignment read ``weights`` and ``places``: ordering and making the pairs took a third of
    the time there (0.45 of 1.31 s of CPU, cProfile at load 0.3).
    """

    name: str
    subscribers: list[int]
    floor: int
    ceil: int
    #: each partition's place among the topic's partitions in number order, hottest first
    #: (machine integers: a million of them as Python ints would take some 30 MiB)
    places: array[int] | NDArray[np.intp]
    #: (weight, partition) hottest first, once made (see :attr:`partitions`)
    listed: list[tuple[float, TopicPartition]] | None = None
    #: the weights hottest first (int64 or float64, holding them exactly), for a topic ordered
    #: on an array; None otherwise
    weights: NDArray[Any] | None = None
    #: the topic's partitions in number order, for a topic ordered on an array
    source: Sequence[Partition] = ()

    @property
    def partitions(self) -> list[tuple[float, TopicPartition]]:
        """(weight, partition) hottest first, equal weights in number order."""
        if self.listed is None:
            assert self.weights is not None
            places = self.places.tolist()
            # an array of ints or of floats gives back the very numbers it was made from
            heat = self.weights.tolist()
            tps = list(map(_tp, map(self.source.__getitem__, places)))
            self.listed = list(zip(heat, tps, strict=True))
        return self.listed

    @property
    def size(self) -> int:
        """How many partitions the topic has."""
        return len(self.places)

    @property
    def heaviest(self) -> float:
        """The heaviest partition's weight (the topic has one)."""
        if self.listed is None and self.weights is not None:
            return self.weights[0].item()  # type: ignore[no-any-return]
        return self.partitions[0][0]

    def item(self, i: int) -> tuple[float, TopicPartition]:
        """The ``i``-th (weight, partition), hottest first, without making the others: equal to
        ``partitions[i]``."""
        if self.listed is None and self.weights is not None:
            return self.weights[i].item(), self.source[self.places[i]].tp
        return self.partitions[i]

    def weighed(self) -> Iterable[float]:
        """The weights hottest first, as Python numbers."""
        if self.listed is None and self.weights is not None:
            return self.weights.tolist()  # type: ignore[no-any-return]
        return map(itemgetter(0), self.partitions)


@dataclass(slots=True)
class _State:
    """An assignment under construction, indexed by member position.

    ``load`` is each member's total weight times its ``scale``, the time it takes to read that
    weight at its speed (1 for every member unless members read at different speeds, see
    :func:`balance`): everything the search compares is a load, so members of different speeds
    are compared by how long their share takes them.
    """

    topics: list[_Topic]
    identical: bool
    load: list[float]
    count: list[int]
    tie: list[int]
    scale: list[float]
    #: every scale is 1: loads are plain totals (and results exactly those of equal members)
    uniform: bool = True
    #: (topic index, member) -> that member's partitions of the topic, lightest first. For a
    #: topic still in ``placed``, only the holdings something has read (:meth:`holds`)
    held: dict[tuple[int, int], list[tuple[float, TopicPartition]]] = field(default_factory=dict)
    #: topic index -> the member of each partition (in the topic's order), for topics where
    #: nobody takes more than one. Their holdings are written into ``held`` one at a time as
    #: something reads them, and a topic whole only when something of it changes hands
    #: (:meth:`give`, :meth:`take`), which then takes it from here: on huge groups writing every
    #: holding was most of the work, and the search reads a few thousand of a million
    #: (bench/speed.py's time-aware plan). A topic left here is taken whole by the assignment.
    placed: dict[int, list[int]] = field(default_factory=dict)
    #: topic index -> each member's place among the topic's partitions (-1: it holds none), for
    #: topics in ``placed``: made by the construction on arrays, else when something reads the
    #: topic's holdings
    places_of: dict[int, Sequence[int] | NDArray[np.int32]] = field(default_factory=dict)
    global_floor: int = 0
    global_ceil: int = 0
    #: ``held`` has every topic's holdings, ``placed`` ones included
    materialized: bool = False
    #: work units the construction took beyond one per partition placed (see
    #: :data:`WORK_BASE`): :func:`_place_earliest` looks at every subscriber of each
    #: partition's topic
    extra_work: int = 0

    def materialize(self) -> None:
        """Write ``placed`` into ``held`` (what the reads wrote stays as it is)."""
        if self.materialized:
            return
        for t in self.placed:
            self._write(t)
        self.materialized = True

    def _write(self, t: int) -> None:
        """Every holding of ``t``, a topic in ``placed``, into ``held``, at C speed."""
        keys = zip(itertools.repeat(t), self.placed[t])
        _each(self.held.setdefault, keys, map(list, zip(self.topics[t].partitions)))

    def holding(self, t: int, m: int) -> list[tuple[float, TopicPartition]]:
        """What ``m`` holds of topic ``t``, to change (not of a topic in ``placed``)."""
        return self.held.setdefault((t, m), [])

    def holds(self, t: int, m: int) -> Sequence[tuple[float, TopicPartition]]:
        """What ``m`` holds of topic ``t``, to read: no empty holding is written for it."""
        found = self.held.get((t, m))
        if found is not None:
            return found
        return self._read(t, m) if t in self.placed else ()

    def _read(self, t: int, m: int) -> Sequence[tuple[float, TopicPartition]]:
        """:meth:`holds` of a topic in ``placed`` whose holding of ``m`` is not written yet:
        written now, so that every read gives the same list."""
        places = self.places_of.get(t)
        if places is None:
            places = self.places_of[t] = array("q", [-1]) * len(self.load)
            _each(places.__setitem__, self.placed[t], range(len(self.placed[t])))
        i = int(places[m])
        if i < 0:
            return ()
        held = self.held[(t, m)] = [self.topics[t].item(i)]
        return held

    def _unplace(self, t: int) -> None:
        """Topic ``t`` written into ``held`` whole and out of ``placed``, before something of
        it changes hands."""
        if self.placed and t in self.placed:
            self._write(t)
            del self.placed[t]
            self.places_of.pop(t, None)

    def give(self, t: int, m: int, item: tuple[float, TopicPartition]) -> None:
        self._unplace(t)
        bisect.insort(self.holding(t, m), item)
        self.load[m] += item[0] * self.scale[m]
        self.count[m] += 1

    def take(self, t: int, m: int, item: tuple[float, TopicPartition]) -> None:
        self._unplace(t)
        held = self.held[(t, m)]
        del held[bisect.bisect_left(held, item)]
        self.load[m] -= item[0] * self.scale[m]
        self.count[m] -= 1

    def may_move(self, t: int, giver: int, taker: int) -> bool:
        """Whether a partition of topic ``t`` may go from ``giver`` to ``taker``, nothing
        coming back, within the counts."""
        topic = self.topics[t]
        if not (len(self.holds(t, giver)) > topic.floor and len(self.holds(t, taker)) < topic.ceil):
            return False
        return not self.identical or (
            self.count[giver] > self.global_floor and self.count[taker] < self.global_ceil
        )

    def reads(self) -> list[list[int]]:
        """The topics each member reads (their indices, per member)."""
        reads: list[list[int]] = [[] for _ in self.load]
        for t, topic in enumerate(self.topics):
            for m in topic.subscribers:
                reads[m].append(t)
        return reads


def _speed(scale: Sequence[float]) -> float:
    """What the members read together, in the units of ``scale`` (each member's time per unit
    of weight): the sum of their speeds. (From 0.0: compiled, a sum of floats from the int 0
    was taken for an int.)"""
    return sum((1 / c for c in scale), 0.0)


def _stable_tie(member_id: str) -> int:
    # crc32 is stable across processes (unlike hash()) and unrelated to sort order.
    return zlib.crc32(member_id.encode())


_tp = attrgetter("tp")


def _topics(group: Group, weights: _Weights | None) -> list[_Topic]:
    """``weights``: None weighs partitions by their lags, read from the group topic by topic
    (:func:`lagassign.lag_rules.topic_lags`) without a dictionary of them; a
    :class:`_Column` is read topic by topic too."""
    names = sorted(group.topics, key=java_order)
    readers = subscribers_by_topic(group.members, names)
    read = [name for name in names if readers[name]]
    on_arrays = sum(len(group.topics[n].partitions) for n in read) > ARRAYS_ABOVE
    keyed = []
    for name in read:
        subscribers = readers[name]  # shared by topics of the same readers: never changed
        partitions = group.topics[name].partitions
        heat: list[float] | NDArray[np.float64]
        if weights is None:
            # on arrays, read as one (None: a lag beyond 64 bits, read as Python's)
            lags = topic_lags_on_array(partitions, group.auto_offset_reset) if on_arrays else None
            heat = topic_lags(partitions, group.auto_offset_reset) if lags is None else lags  # type: ignore[assignment]
        elif isinstance(weights, _Column):
            heat = weights.of(name, partitions)
        else:
            heat = list(map(weights.__getitem__, map(_tp, partitions)))
        n, s = len(partitions), len(subscribers)
        ordered = _ordered_on_array(heat) if on_arrays else None
        if ordered is not None:
            places, hottest = ordered
            topic = _Topic(name, subscribers, n // s, -(-n // s), places, None, hottest, partitions)
            # the same numbers as below: the sum of ints is exact in any order, floats are
            # added hottest first
            heaviest = topic.heaviest if n else 0
            total = _total(hottest)
        else:
            # Hottest first, equal weights in partition order: the sort is stable.
            numbers = heat if isinstance(heat, list) else heat.tolist()  # a column's floats
            order = hottest_first(numbers)
            tps = list(map(_tp, partitions))
            parts = list(
                zip(map(numbers.__getitem__, order), map(tps.__getitem__, order), strict=True)
            )
            topic = _Topic(name, subscribers, n // s, -(-n // s), array("q", order), parts)
            heaviest = parts[0][0] if parts else 0
            total = sum(map(itemgetter(0), parts))
        keyed.append(((-heaviest, -total), topic))
    # Hottest topic first: its big partitions are placed while every member is still light.
    keyed.sort(key=itemgetter(0))
    return [topic for _, topic in keyed]


def _ordered_on_array(
    heat: list[float] | NDArray[np.float64],
) -> tuple[NDArray[np.intp], NDArray[Any]] | None:
    """:func:`hottest_first` of ``heat`` and the weights in that order, on arrays (a million
    weights sorted in Python took a sixth of a second); None unless the weights are all ints
    within 64 bits or all floats and not NaN: then an array holds them exactly and orders them
    as Python does. ``heat``: Python numbers, or floats on an array (:class:`_Column`)."""
    import numpy as np  # here: it takes a while to load, small groups never get here

    if isinstance(heat, np.ndarray):
        values = heat
        mixed = False
    else:
        values = np.array(heat) if heat else np.zeros(0, dtype=np.int64)
        # a float array may come from ints and floats mixed, which Python adds otherwise
        mixed = values.dtype.kind == "f" and set(map(type, heat)) != {float}
    if values.dtype.kind == "f":
        if mixed or np.isnan(values).any():
            return None
    elif values.dtype.kind != "i":
        return None
    order = hottest_first_on_array(values)
    return order, values[order]


def _total(hottest: NDArray[Any]) -> float:
    """The sum of a topic's weights ordered on an array (:func:`_ordered_on_array`), as Python
    adds them: ints exactly in any order (on the array unless they could overflow 64 bits),
    floats one after the other, hottest first (:func:`_added`)."""
    if hottest.dtype.kind == "f":
        return _added(hottest)
    if not len(hottest) or len(hottest) * max(int(hottest[0]), -int(hottest[-1])) < 2**63:
        return int(hottest.sum())
    return sum(hottest.tolist())  # type: ignore[no-any-return]


def _added(floats: NDArray[np.float64]) -> float:
    """``sum(floats.tolist())``, to the last bit, without a Python number per value: Python
    adds floats one after the other, from 0, as NumPy's running sum does (its ``sum`` adds
    pairwise). They differ only in the sign of a zero, which adding 0.0 makes Python's.
    (A million floats made Python numbers and added took 25 ms.)"""
    import numpy as np

    if not len(floats):
        return 0.0
    return float(np.add.accumulate(floats)[-1]) + 0.0


def _lightest_sums(topics: Sequence[_Topic]) -> list[list[float]]:
    """Per topic u, [j]: the sum of u's j lightest partitions (j from 0 to all of them), as
    :func:`_count_bound` and :func:`_slowest_bound` read them."""
    return [
        list(itertools.accumulate(map(itemgetter(0), reversed(t.partitions)), initial=0.0))
        for t in topics
    ]


def _count_bound(
    topics: Sequence[_Topic],
    scale: Sequence[float] | None = None,
    global_floor: int = 0,
    *,
    lightest: Sequence[Sequence[float]] | None = None,
) -> float:
    """A lower bound on the largest member total from the per-topic counts, which the
    pigeonhole bound (over all partitions at once) does not see.

    Every subscriber of a topic u holds at least its floor of u's partitions, so at least its
    floor lightest. Among topic t's k·s + 1 heaviest partitions (s subscribers) some member
    holds k + 1; that member carries the k + 1 lightest of them, the rest of its floor of t
    (no lighter than t's lightest outside them), and its floor of every other topic it reads.
    On ordinary groups (bench/cost.py: lags of a different scale per topic) this is where the
    optimum usually is, while the pigeonhole bound lies percents below it; a search that
    reaches it stops (``bench/results/cost.md``).

    Example: members a, b read t (lags 900, 10, 10, 10) and u (lags 500, 500). Each holds two
    of t and one of u, so whoever holds t's 900 carries at least 900 + 10 + 500 = 1,410; the
    pigeonhole bound says 1,010 (someone holds two of the three heaviest, 500 + 500, and a
    third partition, at least 10).

    With ``global_floor`` (identical subscriptions: every member holds at least that many
    partitions in all), that member holds as many more as its floors leave it short of it, the
    lightest it may take: each topic's next lightest up to its ceiling (:func:`_lightest_more`).
    Example: members a, b, c read t (lags 900, 1, 1), u (9), v (8) and w (7). Each holds two
    partitions and one of t, so whoever holds t's 900 holds one of u, v and w too: at least
    907. The pigeonhole bound says 901 (the 900 and a 1 of t, which that member cannot hold).
    On 5 of bench/cost.py's 25 slowest ordinary groups this was balanced's plan (the optimum),
    which the restarts then spent their whole budget trying to beat.

    With ``scale`` (members of different speeds, see :class:`_State`), a member's load is its
    total times its scale, and the member that holds the k + 1 may be any subscriber: the
    least of their loads is the bound (the global floor holds for each of them alike).

    ``lightest``: :func:`_lightest_sums` of ``topics``, where the caller has it already.
    """
    lightest = _lightest_sums(topics) if lightest is None else lightest
    floors: dict[int, float] = {}  # member -> its floors' lightest, over the topics it reads
    for u, topic in enumerate(topics):
        for m in topic.subscribers:
            floors[m] = floors.get(m, 0.0) + lightest[u][topic.floor]
    # partitions every member holds by the topics' floors alone
    floor_count = sum(topic.floor for topic in topics)
    # what each topic has past its floor, for _lightest_more (only members short of the
    # global floor need it)
    spares = _spares(topics) if global_floor else []
    best = 0.0
    for t, topic in enumerate(topics):
        light, s, n = lightest[t], len(topic.subscribers), len(topic.partitions)
        # A window's sum is read off the running sums where they are exact: non-negative whole
        # numbers whose total a double holds add up to the same in any order. (Summed window
        # by window, a topic of 10,000 partitions on 2 members took a tenth of a second.)
        exact = _whole([topic]) and light[min(n, 1)] >= 0 and light[n] < EXACT_WHOLE
        if scale is None:
            alone = [(1.0, min(floors[m] for m in topic.subscribers) - light[topic.floor])]
        else:
            # per subscriber: its scale, and its floors of the other topics
            alone = [(scale[m], floors[m] - light[topic.floor]) for m in topic.subscribers]
        for k in range(topic.ceil):
            top = k * s + 1
            if top > n:
                break
            # the k + 1 lightest of the top k·s + 1
            window = (
                light[n - top + k + 1] - light[n - top]
                if exact
                else sum(w for w, _ in topic.partitions[top - k - 1 : top])
            )
            more, outside = max(topic.floor - k - 1, 0), n - top
            # the `more` lightest outside the window (as metrics.pigeonhole_bound counts them)
            rest = (
                light[more]
                if more <= outside
                else light[outside] + light[k + 1 + more] - light[outside + k + 1]
            )
            short = global_floor - max(k + 1, topic.floor) - (floor_count - topic.floor)
            if short > 0:
                rest += _lightest_more(topics, spares, t, k, short)
            best = max(best, min(c * (window + rest + others) for c, others in alone))
    return best


def _spares(topics: Sequence[_Topic]) -> list[tuple[int, Any]]:
    """Every topic's partitions past its floor up to its ceiling, as (topic, (weight,
    partition)), lightest first over all topics: what a member of identical subscriptions short
    of the global floor may take more of each (:func:`_lightest_more`). (Items typed ``Any``
    here and below are read as they are: read as a typed tuple, the compiled module would turn
    an int weight into a float.)"""
    spare = [
        (u, item)
        for u, topic in enumerate(topics)
        for item in _ascending(topic.partitions, topic.floor, topic.ceil)
    ]
    spare.sort(key=itemgetter(1))
    return spare


def _ascending(descending: Sequence[Any], start: int, stop: int) -> list[Any]:
    """``descending`` lightest first, from its ``start``-th lightest to before its ``stop``-th,
    without reversing all of it."""
    n = len(descending)
    return [descending[n - 1 - j] for j in range(start, min(stop, n))]


def _lightest_more(
    topics: Sequence[_Topic],
    spares: Sequence[tuple[int, Any]],
    t: int,
    k: int,
    more: int,
) -> float:
    """The least weight ``more`` partitions add to a member of identical subscriptions that
    holds k + 1 of topic ``t``'s heaviest k·s + 1 (:func:`_count_bound`) and its floor of every
    topic: per topic, its partitions lightest first past the floor (t's past the floor and
    those k + 1) up to its ceiling; the ``more`` lightest of them all, added lightest first.
    ``spares``: :func:`_spares` of ``topics`` (t's own are left out of them here)."""
    topic = topics[t]
    descending: Sequence[Any] = topic.partitions
    n = len(descending)
    top = k * len(topic.subscribers) + 1
    # t lightest first without the k + 1 (the lightest of its top k·s + 1): the n - top below
    # the top, then the heaviest k·s, from its floor less those k + 1 up to its ceiling
    below = n - top
    held = max(topic.floor - k - 1, 0)
    mine = [
        descending[n - 1 - j if j < below else top - k - 2 - (j - below)]
        for j in range(held, min(max(topic.ceil - k - 1, held), n - k - 1))
    ]
    # the `more` lightest of the other topics' spares and t's own, lightest first, without
    # heapq.merge's generator (partitions of equal weight may come in another order than it
    # took them in: the same numbers in the same order, so the same sum)
    taken: list[Any] = []
    i = 0
    for u, item in spares:
        if len(taken) == more:
            break
        if u == t:
            continue
        while i < len(mine) and len(taken) < more and mine[i] < item:
            taken.append(mine[i])
            i += 1
        if len(taken) < more:
            taken.append(item)
    taken += mine[i : i + more - len(taken)]
    added: float = sum(map(itemgetter(0), taken))
    return added


def _identical_subscriptions(members: Iterable[Member]) -> bool:
    return len({m.topics for m in members}) <= 1


def _new_state(group: Group, topics: list[_Topic], scale: Sequence[float] | None = None) -> _State:
    n = len(group.members)
    identical = _identical_subscriptions(group.members)
    total = sum(t.size for t in topics)
    state = _State(
        topics,
        identical,
        [0.0] * n,
        [0] * n,
        [_stable_tie(m.id) for m in group.members],
        [1.0] * n if scale is None else list(scale),
        scale is None,
    )
    if identical and n:
        state.global_floor, state.global_ceil = total // n, -(-total // n)
    return state


def _ranked(members: Sequence[int], keys: Sequence[Sequence[float]]) -> list[int]:
    """``members`` sorted by ``(keys[0][m], keys[1][m], ...)``, equal ones in their order: one
    stable sort per key, the last key first, each looking its values up at C speed (no tuple
    per member, as a key function would make)."""
    ranked = list(members)
    for key in reversed(keys):
        ranked.sort(key=key.__getitem__)
    return ranked


def _construct_one_each(state: _State) -> None:
    """:func:`_construct_by_topic` where no topic gives any member more than one partition, on
    arrays: the same plan, to the last bit (each load adds the same products in the same
    order), without a Python step per partition (500 topics of 2,000 partitions on 2,000
    members: 0.4 s → 0.1 s)."""
    import numpy as np  # here: it takes a while to load, small groups never get here

    load = np.array(state.load, dtype=np.float64)
    count = np.array(state.count, dtype=np.int64)
    tie = np.array(state.tie, dtype=np.int64)
    scale = np.array(state.scale, dtype=np.float64)
    # per list of readers (topics of the same readers share theirs): the readers, and the
    # readers in the order of their ties (a stable sort: equal ties in their order)
    readers: dict[int, tuple[NDArray[np.intp], NDArray[np.intp]]] = {}
    for t, topic in enumerate(state.topics):
        n = topic.size
        if not n:
            continue
        known = readers.get(id(topic.subscribers))
        if known is None:
            everyone = np.array(topic.subscribers, dtype=np.intp)
            by_tie = everyone[np.argsort(tie[everyone], kind="stable")]
            known = readers[id(topic.subscribers)] = (everyone, by_tie)
        subscribers, by_tie = known
        if n < len(subscribers):
            # the n extras: the fewest partitions first when subscriptions are identical, else
            # the least loaded (as _construct_by_topic); they take in the order of subscribers
            keys = (count, load, tie) if state.identical else (load, count, tie)
            first = np.lexsort([k[subscribers] for k in reversed(keys)])[:n]
            subscribers = subscribers[np.sort(first)]
            by_tie = subscribers[np.argsort(tie[subscribers], kind="stable")]
        # The least loaded takes the hottest, then the one of fewer partitions, then by tie:
        # stable sorts of the readers in the order of their ties, by count and load (the last
        # key first), or by load alone when their counts are all the same (as on a group of
        # identical subscriptions and full topics): one sort of a topic's readers, not three.
        counts = count[by_tie]
        if counts.min() == counts.max():
            takers = by_tie[stable_order(load[by_tie])]
        else:
            takers = by_tie[np.lexsort((counts, load[by_tie]))]
        weights = (
            np.fromiter(map(itemgetter(0), topic.partitions), dtype=np.float64, count=n)
            if topic.weights is None
            else topic.weights.astype(np.float64)  # as float() makes them of Python numbers
        )
        load[takers] += weights if state.uniform else weights * scale[takers]
        count[takers] += 1
        state.placed[t] = takers.tolist()
        # each member's place among the topic's partitions, for the search's reads
        # (:meth:`_State.holds`): here in microseconds, where a Python step per partition takes
        # a fifth of a millisecond a topic
        places = state.places_of[t] = np.full(len(state.load), -1, dtype=np.int32)
        places[takers] = np.arange(n)
    state.load[:] = load.tolist()
    state.count[:] = count.tolist()


def _construct_by_topic(state: _State) -> None:
    """Topic by topic, hottest first; within a topic, hottest partition to the least loaded."""
    load, count, tie, held, scale = state.load, state.count, state.tie, state.held, state.scale
    if state.held or state.placed:
        raise ValueError("construct on an empty state")
    if len(load) >= ONE_EACH_ARRAYS_FROM and all(t.ceil <= 1 for t in state.topics):
        _construct_one_each(state)
        return
    for t, topic in enumerate(state.topics):
        subscribers = topic.subscribers
        extra = len(topic.partitions) - topic.floor * len(subscribers)
        # The topic's extra partitions: with identical subscriptions to the members with the
        # fewest partitions (that keeps totals within floor and ceiling), else the least loaded.
        chosen: list[int] = []
        if extra:
            keys = (count, load, tie) if state.identical else (load, count, tie)
            chosen = _ranked(subscribers, keys)[:extra]
        if topic.ceil == 1:
            # One partition each: the least loaded takes the hottest and is done, so the order
            # in which members take is their order as the topic starts. One sort does it; then
            # every taker's load and count go up at once (none takes twice).
            if topic.floor:
                takers = _ranked(subscribers, (load, count, tie))
            else:
                extras = set(chosen)
                takers = _ranked([m for m in subscribers if m in extras], (load, count, tie))
            weights = map(itemgetter(0), topic.partitions)
            if not state.uniform:
                weights = map(operator.mul, weights, map(scale.__getitem__, takers))
            loads = map(operator.add, map(load.__getitem__, takers), weights)
            _each(load.__setitem__, takers, loads)
            _each(count.__setitem__, takers, map((1).__add__, map(count.__getitem__, takers)))
            state.placed[t] = takers
            continue
        quota = dict.fromkeys(subscribers, topic.floor)
        for m in chosen:
            quota[m] += 1
        takers = [m for m in subscribers if quota[m]]
        heap = [(load[m], count[m], tie[m], m) for m in takers]
        heapq.heapify(heap)
        for item in topic.partitions:
            m = heap[0][3]
            held.setdefault((t, m), []).append(item)
            load[m] += item[0] * scale[m]
            count[m] += 1
            quota[m] -= 1
            if quota[m]:
                heapq.heapreplace(heap, (load[m], count[m], tie[m], m))
            else:
                heapq.heappop(heap)
        # Each member received its partitions hottest first; the search wants them lightest
        # first.
        for m in takers:
            held[(t, m)].sort()


def _quotas(
    state: _State,
    keep: Mapping[tuple[int, int], int],
    tie: Sequence[float] | None = None,
    holders_first: bool = False,
) -> dict[tuple[int, int], int]:
    """How many partitions of each topic each subscriber gets: the floor, or the ceiling for as
    many members as the topic has extra partitions. The extras go to members that hold more
    than the floor already (``keep``), and, when subscriptions are identical, to the members
    with the fewest partitions planned before that, which keeps totals within one.

    ``holders_first``: with identical subscriptions too, the extras go to the members holding
    them first, if every total then stays within the floor and ceiling of all partitions ÷
    members (as after a cooperative round that only withheld partitions); else as above."""
    ties: Sequence[float] = state.tie if tie is None else tie
    if holders_first and state.identical:
        held = _quotas_of_holders(state, keep, ties)
        if held is not None:
            return held
    planned = [0] * len(state.load)
    quota = {}
    for t, topic in enumerate(state.topics):
        extra = len(topic.partitions) - topic.floor * len(topic.subscribers)

        def rank(m: int, t: int = t, floor: int = topic.floor) -> tuple[int, int, float]:
            gives_up = int(keep.get((t, m), 0) <= floor)
            if state.identical:
                return planned[m], gives_up, ties[m]
            return gives_up, planned[m], ties[m]

        extras = set(sorted(topic.subscribers, key=rank)[:extra])
        for m in topic.subscribers:
            quota[(t, m)] = topic.floor + (m in extras)
            planned[m] += quota[(t, m)]
    return quota


def _quotas_of_holders(
    state: _State, keep: Mapping[tuple[int, int], int], ties: Sequence[float]
) -> dict[tuple[int, int], int] | None:
    """:func:`_quotas` for identical subscriptions where members holding more than a topic's
    floor keep their extra partition, every topic at once; the topics' other extras then go,
    topic by topic (the most left to give first), to the members with the fewest extras so far
    (as for a bipartite degree sequence). None if that leaves a total outside the floor and
    ceiling of all partitions ÷ members, or a topic's extra without a member."""
    n = len(state.load)
    extras: list[set[int]] = []
    given = [0] * n
    for t, topic in enumerate(state.topics):
        holders = sorted(
            (m for m in topic.subscribers if keep.get((t, m), 0) > topic.floor),
            key=ties.__getitem__,
        )
        chosen = set(holders[: len(topic.partitions) - topic.floor * len(topic.subscribers)])
        extras.append(chosen)
        for m in chosen:
            given[m] += 1
    base = sum(topic.floor for topic in state.topics)
    low, high = state.global_floor - base, state.global_ceil - base
    left = {
        t: len(topic.partitions) - topic.floor * len(topic.subscribers) - len(extras[t])
        for t, topic in enumerate(state.topics)
    }
    for t in sorted(left, key=lambda t: (-left[t], t)):
        wanting = sorted(
            (m for m in state.topics[t].subscribers if m not in extras[t] and given[m] < high),
            key=lambda m: (given[m], ties[m]),
        )
        if len(wanting) < left[t]:
            return None
        for m in wanting[: left[t]]:
            extras[t].add(m)
            given[m] += 1
    if not all(low <= g <= high for g in given):
        return None
    return {
        (t, m): topic.floor + (m in extras[t])
        for t, topic in enumerate(state.topics)
        for m in topic.subscribers
    }


def _place(
    state: _State,
    items: list[tuple[int, tuple[float, TopicPartition]]],
    room: dict[tuple[int, int], int],
    heat: Callable[[tuple[float, TopicPartition]], float] = lambda item: item[0],
    tie: Sequence[float] | None = None,
    earliest: bool = False,
    fit_under: float | None = None,
) -> None:
    """Hottest first (LPT), each partition to the least-loaded member with room for its topic;
    ``earliest``: to the member with room that would be done with it soonest
    (:func:`_place_earliest`); ``fit_under``: to the one it leaves with the least room under
    that load (:func:`_place_best_fit`).

    ``heat`` orders the partitions and ``tie`` breaks ties between members; restarts perturb
    both to reach other local optima (which member takes the hottest partition, say)."""
    # TopicPartition.sort_key's order, with each topic's key made once: an encode per partition
    # was a tenth of a construction on 10,000 partitions
    names = [java_order(topic.name) for topic in state.topics]
    ordered = sorted(items, key=lambda e: (-heat(e[1]), names[e[0]], e[1][1].partition))
    ties = state.tie if tie is None else tie
    if fit_under is not None:
        _place_best_fit(state, ordered, room, ties, fit_under)
        return
    place = _place_earliest if earliest else _place_least_loaded
    place(state, ordered, room, ties)


def _place_least_loaded(
    state: _State,
    ordered: list[tuple[int, tuple[float, TopicPartition]]],
    room: dict[tuple[int, int], int],
    tie: Sequence[float],
) -> None:
    """:func:`_place`'s partitions, in their order, each to the least-loaded member with room."""
    load, count = state.load, state.count
    heaps = [
        [(load[m], count[m], tie[m], m) for m in topic.subscribers if room[(t, m)]]
        for t, topic in enumerate(state.topics)
    ]
    for heap in heaps:
        heapq.heapify(heap)
    for t, item in ordered:
        heap = heaps[t]
        while True:
            # Entries go stale when their member takes a partition of another topic; loads only
            # grow, so a stale entry surfaces early and is pushed back with its current load.
            seen_load, seen_count, _, m = heapq.heappop(heap)
            if seen_load == load[m] and seen_count == count[m]:
                break
            heapq.heappush(heap, (load[m], count[m], tie[m], m))
        state.give(t, m, item)
        room[(t, m)] -= 1
        if room[(t, m)]:
            heapq.heappush(heap, (load[m], count[m], tie[m], m))


def _place_earliest(
    state: _State,
    ordered: list[tuple[int, tuple[float, TopicPartition]]],
    room: dict[tuple[int, int], int],
    tie: Sequence[float],
) -> None:
    """:func:`_place`'s partitions, in their order, by the rule for uniform machines (members
    of different speeds): each to the member with room that would be done with it soonest, its
    load plus the partition's weight at its speed, not the least loaded. A fast member may so
    take a second hot partition before a slow one takes its first: on a tight group near
    capacity (bench/quality.py's catch-up suite, hot-partitions #29) the optimum's plan does,
    and searches from least-loaded starts never reached it.

    Every subscriber of a partition's topic is looked at (counted in ``extra_work``): restarts,
    the only user, run on groups of up to :data:`RESTART_LIMIT` partitions."""
    load, count, scale = state.load, state.count, state.scale
    looked = 0
    for t, item in ordered:
        weight = item[0]
        best = -1
        best_key = (math.inf, 0, 0.0)
        for m in state.topics[t].subscribers:
            if room[(t, m)]:
                key = (load[m] + weight * scale[m], count[m], tie[m])
                if best < 0 or key < best_key:
                    best, best_key = m, key
        looked += len(state.topics[t].subscribers)
        assert best >= 0, "the quotas leave room for every partition"
        state.give(t, best, item)
        room[(t, best)] -= 1
    state.extra_work += max(looked - len(ordered), 0)


def _place_best_fit(
    state: _State,
    ordered: list[tuple[int, tuple[float, TopicPartition]]],
    room: dict[tuple[int, int], int],
    tie: Sequence[float],
    limit: float,
) -> None:
    """:func:`_place`'s partitions, in their order, by bin packing's best fit: each to the
    member with room for its topic that it leaves with the least room under ``limit``, or, under
    nobody's, to the member done with it soonest (:func:`_place_earliest`'s rule).

    Where the soonest-done rule spreads partitions over the members with most room, this one
    fills a member before it opens another: a plan that packs one member near its capacity with
    inflow and leaves the backlog to others (hot-partitions #61 of ``catch_up_suite``,
    docs/strategies.md) is one it builds and the other rarely does.

    Example: limit 100, members a and b alike and empty, two partitions each, weights 60, 40,
    30 and 30: a takes 60 (the tie), then 40 (it leaves a no room under 100, b 60), b the two
    30s: 100 and 60. The soonest-done rule gives a 60 and 30, b 40 and 30: 90 and 70, where no
    member has room for a partition of more than 30. Every subscriber of a partition's topic is
    looked at (counted in ``extra_work``)."""
    load, scale = state.load, state.scale
    looked = 0
    for t, item in ordered:
        weight = item[0]
        fit, fit_key = -1, (math.inf, 0.0)
        soonest, soonest_key = -1, (math.inf, 0.0)
        for m in state.topics[t].subscribers:
            if room[(t, m)]:
                after = load[m] + weight * scale[m]
                if soonest < 0 or (after, tie[m]) < soonest_key:
                    soonest, soonest_key = m, (after, tie[m])
                if after <= limit and (fit < 0 or (limit - after, tie[m]) < fit_key):
                    fit, fit_key = m, (limit - after, tie[m])
        looked += len(state.topics[t].subscribers)
        assert soonest >= 0, "the quotas leave room for every partition"
        m = fit if fit >= 0 else soonest
        state.give(t, m, item)
        room[(t, m)] -= 1
    state.extra_work += max(looked - len(ordered), 0)


def _construct_global(state: _State) -> None:
    """All partitions hottest first, with the rooms (who holds each topic's ceilings) fixed
    first so that counts stay balanced."""
    items = [(t, item) for t, topic in enumerate(state.topics) for item in topic.partitions]
    _place(state, items, _quotas(state, {}))


def _construct_perturbed(state: _State, rng: random.Random) -> None:
    """Like :func:`_construct_global` with shuffled ceilings and member ties, and partition
    heat jittered by up to ±25%: a restart that lands in another local optimum. Members of
    different speeds are placed by :func:`_place_earliest`."""
    noise = {
        item[1]: rng.uniform(0.75, 1.25) for topic in state.topics for item in topic.partitions
    }
    tie = [rng.random() for _ in state.load]
    items = [(t, item) for t, topic in enumerate(state.topics) for item in topic.partitions]
    heat = lambda item: item[0] * noise[item[1]]  # noqa: E731
    room = _quotas(state, {}, tie)
    _place(state, items, room, heat=heat, tie=tie, earliest=not state.uniform)


def _construct_best_fit(state: _State, rng: random.Random, under: float) -> None:
    """A restart of a catch-up round, which asks whether every member's load fits under
    ``under`` (the round's T: a member within it catches up within T): heat and ties perturbed
    as :func:`_construct_perturbed`'s, then best fit decreasing (:func:`_place_best_fit`) under
    a limit drawn from [:data:`BEST_FIT_BELOW`, 1) times ``under``."""
    items = [(t, item) for t, topic in enumerate(state.topics) for item in topic.partitions]
    _pack_best_fit(state, rng, under, lambda tie: (items, _quotas(state, {}, tie)))


def _pack_best_fit(
    state: _State,
    rng: random.Random,
    under: float,
    to_place: Callable[[list[float]], tuple[list[_Held], dict[tuple[int, int], int]]],
) -> None:
    """What :func:`_construct_best_fit` and :func:`_construct_ruined` share: ties and heat
    perturbed as :func:`_construct_perturbed`'s, then best fit decreasing
    (:func:`_place_best_fit`) of the partitions ``to_place`` gives for those ties (with the room
    it leaves them) under a limit drawn from [:data:`BEST_FIT_BELOW`, 1) times ``under``."""
    tie = [rng.random() for _ in state.load]
    noise = {
        item[1]: rng.uniform(0.75, 1.25) for topic in state.topics for item in topic.partitions
    }
    items, room = to_place(tie)
    limit = under * rng.uniform(BEST_FIT_BELOW, 1.0)
    heat = lambda item: item[0] * noise[item[1]]  # noqa: E731
    _place(state, items, room, heat=heat, tie=tie, fit_under=limit)


def _perturbed_start(seed: int) -> Callable[[_State], None]:
    """The restart numbered ``seed``: :func:`_construct_perturbed` with its own random stream."""
    return functools.partial(_construct_perturbed, rng=random.Random(seed))


def _best_fit_start(under: float, seed: int) -> Callable[[_State], None]:
    """The best-fit restart numbered ``seed``: :func:`_construct_best_fit` under ``under``,
    with its own random stream."""
    return functools.partial(_construct_best_fit, rng=random.Random(seed), under=under)


def _warm_start(warm: _State) -> Callable[[_State], None]:
    """A start with each partition where ``warm``, a plan of the same partitions under other
    weights, has it (:func:`_construct_sticky`, holders first: a plan within the counts is
    rebuilt as it is)."""
    warm.materialize()
    members = {item[1]: m for (_, m), items in warm.held.items() for item in items}

    def construct(state: _State) -> None:
        _construct_sticky(state, members, holders_first=True)

    return construct


def _construct_sticky(
    state: _State, owners: Mapping[TopicPartition, int], holders_first: bool = False
) -> set[TopicPartition]:
    """Start from what members own: each keeps its partitions of topics it still subscribes,
    up to its quota (giving up its hottest first, which is what unloads it most; the quotas of
    :func:`_quotas`, ``holders_first`` passed on); the rest is placed hottest first. Returns
    the partitions placed that way: those nobody keeps."""
    free, room = _keep_owned(state, owners, None, holders_first)
    _place(state, free, room)
    return {item[1] for _, item in free}


def _keep_owned(
    state: _State,
    owners: Mapping[TopicPartition, int],
    tie: Sequence[float] | None,
    holders_first: bool,
) -> tuple[list[_Held], dict[tuple[int, int], int]]:
    """:func:`_construct_sticky`'s first half: owned partitions given to their owners within
    the quotas (``tie`` and ``holders_first`` to :func:`_quotas`); returns the partitions left
    to place and the room left for them."""
    kept: dict[tuple[int, int], list[tuple[float, TopicPartition]]] = {}
    free: list[_Held] = []
    for t, topic in enumerate(state.topics):
        subscribers = set(topic.subscribers)
        for item in topic.partitions:
            m = owners.get(item[1])
            if m is not None and m in subscribers:
                kept.setdefault((t, m), []).append(item)
            else:
                free.append((t, item))
    room = _quotas(state, {key: len(items) for key, items in kept.items()}, tie, holders_first)
    for (t, m), items in kept.items():
        excess = max(len(items) - room[(t, m)], 0)
        # topic.partitions is hottest first, so the excess is the member's hottest
        free.extend((t, item) for item in items[:excess])
        for item in items[excess:]:
            state.give(t, m, item)
        room[(t, m)] -= len(items) - excess
    return free, room


def _construct_ruined(
    state: _State,
    rng: random.Random,
    under: float,
    holder: Mapping[TopicPartition, int],
    loads: Sequence[float],
) -> None:
    """A restart of a catch-up round from the best plan found (``holder``: each partition's
    member there; ``loads``: the members' loads): the slowest member and 1 to
    :data:`RUIN_OTHERS` others drawn at random give up all their partitions, the others keep
    theirs (:func:`_keep_owned`, holders first: one may take a topic's extra partition that a
    ruined member gave up), and what was given up is placed afresh as
    :func:`_construct_best_fit` places it, under ``under`` (the round's T) times a factor drawn
    from [:data:`BEST_FIT_BELOW`, 1).

    Example: members a, b, c and d alike, two partitions each; the best plan so far has a
    (slowest) with 70 and 50, b 60 and 40, c 55 and 45, d 30 and 20: loads 120, 100, 100 and
    50. Ruined a and d, under 110: b and c keep theirs, and best fit packs 70 with 30 (a) and
    50 with 20 (d): loads 100, 100, 100 and 70."""
    slowest = max(range(len(loads)), key=loads.__getitem__)
    others = [m for m in range(len(loads)) if m != slowest]
    drawn = rng.sample(others, min(len(others), rng.randint(1, RUIN_OTHERS)))
    ruined = {slowest, *drawn}
    owners = {tp: m for tp, m in holder.items() if m not in ruined}
    _pack_best_fit(state, rng, under, lambda tie: _keep_owned(state, owners, tie, True))


def _ruined_starts(best: _State, under: float) -> Iterator[Callable[[_State], None]]:
    """The ruin-and-recreate restarts from ``best`` (:func:`_construct_ruined`), numbered from
    0, each with its own random stream."""
    best.materialize()
    holder = {item[1]: m for (_, m), items in best.held.items() for item in items}
    loads = list(best.load)
    for seed in itertools.count():
        yield functools.partial(
            _construct_ruined, rng=random.Random(seed), under=under, holder=holder, loads=loads
        )


_Held = tuple[int, tuple[float, TopicPartition]]  # (topic index, (weight, partition))


@dataclass(slots=True)
class _Exchange:
    """Partitions the giver hands to the taker, and those it takes back; ``gain`` is how much
    the larger of the two loads falls."""

    gain: float
    giver: int
    taker: int
    out: tuple[_Held, ...]
    back: tuple[_Held, ...] = ()


_Item = tuple[float, TopicPartition]  # (weight, partition)


def _equal_pairs(pairs: Iterable[tuple[int, Sequence[_Item], Sequence[_Item]]]) -> int:
    """How many pairs of one partition from each holding weigh the same, over ``pairs`` (a
    topic and two members' holdings of it)."""
    equal = 0
    for _, mine, theirs in pairs:
        weights = Counter(map(itemgetter(0), theirs))
        equal += sum(map(weights.__getitem__, map(itemgetter(0), mine)))
    return equal


_weight = itemgetter(0)


def _nearest(
    held: Sequence[tuple[float, TopicPartition]], target: float
) -> Iterable[tuple[float, TopicPartition]]:
    """The items of ``held`` (sorted by weight) just below and above ``target``."""
    if len(held) <= 1:
        return held  # what the slice below gives, without the search
    i = bisect.bisect_left(held, target, key=_weight)
    return held[max(i - 1, 0) : i + 1]


def _subscribed(topics: Sequence[_Topic], members: int) -> tuple[list[set[int]], list[set[int]]]:
    """Each member's topics, as their indexes in ``topics``, and the topics it shares with a
    member of the same topics, ordered as the search looks at them; members of the same
    topics share both sets: read them, do not change them.

    Topics of the same readers share one list of them (:func:`_topics`), so each member is
    looked at once per such list, not once per topic: adding a member's topics one at a time
    took 0.16 s of CPU on 500 topics and 2,000 members (bench/speed.py's million partitions).
    Each set is built as one topic at a time would build it, its indexes added in increasing
    order, and what two members share is two such sets intersected: the same sets, iterated
    in the same order, which the search's choices follow.
    """
    # each list of readers, and the topics it reads
    lists: dict[int, tuple[list[int], list[int]]] = {}
    for t, topic in enumerate(topics):
        lists.setdefault(id(topic.subscribers), (topic.subscribers, []))[1].append(t)
    kinds: list[list[int]] = [[] for _ in range(members)]  # per member: the lists it is on
    for k, (readers, _) in enumerate(lists.values()):
        _each(list.append, map(kinds.__getitem__, readers), itertools.repeat(k))
    read = [read for _, read in lists.values()]
    shared: dict[tuple[int, ...], tuple[set[int], set[int]]] = {}
    subscribed, alike = [], []
    for kind in map(tuple, kinds):
        found = shared.get(kind)
        if found is None:
            ordered = sorted(itertools.chain.from_iterable(map(read.__getitem__, kind)))
            one = set(ordered)  # added in that order, as set.add would
            found = shared[kind] = (one, one & set(ordered))
        subscribed.append(found[0])
        alike.append(found[1])
    return subscribed, alike


@dataclass(slots=True)
class _Reach:
    """What a giver can hand over (:meth:`_Search.reach`), for its look for an exchange
    (:meth:`_Search.best_exchange`).

    ``by_topic``: per topic it holds, the most handing over one of its partitions can lower its
    load, and how many it holds. ``alike``: those topics that takers of the giver's own topics
    share with it, in the order :meth:`_Search.best_with` looks at them, with that most, and
    ``alike_work`` the partitions the giver holds of them. A look that no longer beats the best
    exchange so far drops them (:meth:`above`): on bench/speed.py's million partitions, the
    giver held one partition of each of 500 topics, and of every taker's 500 the search looked
    at one or two, after stepping over the others one by one.
    """

    by_topic: dict[int, tuple[float, int]]
    alike: list[tuple[int, float]]
    alike_work: int
    #: ``alike`` holds only topics whose most is above this
    floor: float = -math.inf

    @staticmethod
    def of(by_topic: dict[int, tuple[float, int]], alike: Iterable[int]) -> _Reach:
        held = [(t, by_topic[t]) for t in alike if t in by_topic]
        return _Reach(by_topic, [(t, r[0]) for t, r in held], sum(r[1] for _, r in held))

    def above(self, floor: float) -> list[tuple[int, float]]:
        """``alike`` without the topics whose most is not above ``floor``: the best exchange
        found so far only gets better, so they never beat it again in this look."""
        if floor > self.floor:
            self.alike = [e for e in self.alike if e[1] > floor]
            self.floor = floor
        return self.alike


class _Search:
    """The improvement step; ``budget`` counts candidate exchanges examined; ``min_gain``: the
    smallest gain worth a step, a fraction of the largest load (:data:`MIN_GAIN`)."""

    def __init__(self, state: _State, budget: int, min_gain: float = MIN_GAIN) -> None:
        self.state = state
        self.budget = budget
        self.min_gain = min_gain
        self.threshold = 0.0
        #: member -> the topics it subscribes (indexes), and those it shares with a member of
        #: the same topics (see _subscribed); filled when the search starts
        self.subscribed: list[set[int]] = []
        self.alike: list[set[int]] = []
        uneven = [topic.ceil > topic.floor for topic in state.topics]
        #: the topics whose subscribers do not all hold as many partitions (ceiling > floor):
        #: the only ones a partition may leave without one coming back
        self.uneven = {t for t, u in enumerate(uneven) if u}
        # Per topic, the count a member holds at its ceiling and at its floor where the two
        # differ, else -1 (no count): the look-ups below run millions of times.
        self.ceils = [t.ceil if u else -1 for t, u in zip(state.topics, uneven, strict=True)]
        self.floors = [t.floor if u else -1 for t, u in zip(state.topics, uneven, strict=True)]
        #: member -> exchanges applied to it so far, and what :meth:`bounds_held` found of it
        self.changes = [0] * len(state.load)
        self.held_bounds: dict[int, tuple[int, set[int], set[int]]] = {}

    def at_ceil(self, t: int, m: int) -> bool:
        return len(self.state.holds(t, m)) == self.ceils[t]

    def at_floor(self, t: int, m: int) -> bool:
        return len(self.state.holds(t, m)) == self.floors[t]

    def may_move_total(self, giver: int, taker: int) -> bool:
        s = self.state
        if not s.identical:
            return True
        return s.count[giver] == s.global_ceil and s.count[taker] == s.global_floor < s.global_ceil

    def run(self, target: float = 0.0) -> None:
        """Improve until no exchange helps, the budget is spent, or no load exceeds ``target``.

        Sweeps go heaviest member first: each exchange lowers the larger of two loads, so the
        loads sorted in decreasing order fall lexicographically and the sweeps end. Balancing
        pairs below the top is what frees room for the top member on a later sweep.
        """
        load = self.state.load
        if not load or max(load) <= target:
            return  # nothing to improve, or nothing can be better
        self.subscribed, self.alike = _subscribed(self.state.topics, len(load))
        huge = sum(t.size for t in self.state.topics) > DOUBLE_SWAPS_TOP_ONLY
        changed = True
        while changed and self.budget > 0:
            changed = False
            # Only members above the level at which all would finish together can hold the
            # largest load or make room for it (the mean load, when members are alike).
            scale = self.state.scale
            level = sum(x / c for x, c in zip(load, scale, strict=True)) / _speed(scale)
            heavy = [m for m in range(len(load)) if load[m] > level]
            for giver in sorted(heavy, key=lambda m: (-load[m], self.state.tie[m])):
                self.threshold = self.min_gain * max(load)
                while self.budget > 0:
                    if max(load) <= target:
                        return
                    # Exhaustive splits cost the most; only the top member is worth them, and
                    # on huge groups double swaps too (see DOUBLE_SWAPS_TOP_ONLY).
                    top = load[giver] == max(load)
                    best = (
                        self.best_exchange(giver)
                        or (self.best_double(giver) if top or not huge else None)
                        or (self.best_split(giver) if top else None)
                    )
                    if best is None:
                        break
                    self.apply(best)
                    changed = True

    def best_exchange(self, giver: int) -> _Exchange | None:
        """The exchange with a lighter member that lowers the larger of the two loads most."""
        s = self.state
        best: _Exchange | None = None
        reach = _Reach.of(self.reach(giver), self.alike[giver])
        for taker in self.takers():
            gap = s.load[giver] - s.load[taker]
            # No exchange with this or any later (heavier) taker can gain more than this.
            most = self.most_gain(giver, taker, gap)
            if most <= self.threshold or (best is not None and most <= best.gain):
                break
            best = self.best_with(giver, taker, gap, best, reach)
            if self.budget <= 0:
                break
        return best if best is not None and best.gain > self.threshold else None

    def takers(self) -> Iterator[int]:
        """Members lightest first, the order every look for an exchange takes them in.

        With members of different speeds (a time-aware plan) the look is counted in full: one
        unit per member sorted and one per taker looked at. Their loads' bounds end a look
        later than between members alike, and on groups of a few partitions per member most
        of the search went into these sorts and looks, uncounted (2,500 partitions on 2,000
        members took forty seconds within the budget). Between members alike the count is
        what it always was, so lag plans stay as they were.
        """
        s = self.state
        ordered = sorted(range(len(s.load)), key=s.load.__getitem__)
        if s.uniform:
            yield from ordered
            return
        self.budget -= len(ordered)
        for taker in ordered:
            self.budget -= 1
            yield taker

    def most_gain(self, giver: int, taker: int, gap: float) -> float:
        """The most any exchange between the two can lower the giver's load: what it does
        when both end at the same load (half the gap between members alike)."""
        scale = self.state.scale
        return gap * scale[giver] / (scale[giver] + scale[taker])

    def gain(self, giver: int, taker: int, gap: float, d: float) -> float:
        """How much handing weight ``d`` from the giver to the taker lowers the larger of
        their two loads; not positive when it does not."""
        scale = self.state.scale
        return min(d * scale[giver], gap - d * scale[taker])

    def reach(self, giver: int) -> dict[int, tuple[float, int]]:
        """Per topic the giver holds: the most handing over one of its partitions of it can
        lower the giver's load (its heaviest weight × the giver's scale, for what it takes
        back weighs nothing less than nothing), and how many it holds."""
        s = self.state
        scale = s.scale[giver]
        reach = {}
        for t in self.subscribed[giver]:
            mine = s.holds(t, giver)
            if mine:
                reach[t] = (mine[-1][0] * scale, len(mine))
        return reach

    def floor_gain(self, best: _Exchange | None) -> float:
        """What an exchange must gain to matter: more than the best so far and more than the
        threshold (an exchange at or below it is never taken, whatever it beats)."""
        return self.threshold if best is None else max(best.gain, self.threshold)

    def best_with(
        self,
        giver: int,
        taker: int,
        gap: float,
        best: _Exchange | None,
        reach: _Reach,
    ) -> _Exchange | None:
        """``reach``: what the giver can hand over (:class:`_Reach`)."""
        s = self.state
        alike = self.subscribed[giver] is self.subscribed[taker]
        common = self.alike[giver] if alike else self.subscribed[giver] & self.subscribed[taker]
        if not s.uniform:
            self.budget -= len(common)  # each topic's holdings looked up (see takers)
        move_total = self.may_move_total(giver, taker)
        # handing over weight in (0, most) lowers the larger load; its best is at `even`
        sg, st = s.scale[giver], s.scale[taker]
        most = gap / st
        even = gap / (sg + st)
        floor = self.floor_gain(best)
        holds, ceils, floors = s.holds, self.ceils, self.floors
        best_gain = -math.inf if best is None else best.gain
        # Every topic of both that the giver holds costs its holdings, whether it is looked at
        # or not: one that cannot beat the best so far is counted but not looked at (the same
        # exchanges win, and on huge groups most of the giver's topics are so).
        looked: Iterable[tuple[int, float]]
        if alike:
            self.budget -= reach.alike_work
            looked = reach.above(floor)
        else:
            held = [(t, r) for t in common if (r := reach.by_topic.get(t)) is not None]
            self.budget -= sum(r[1] for _, r in held)
            looked = [(t, r[0]) for t, r in held]
        for t, most_here in looked:
            if most_here <= floor:
                continue
            mine = holds(t, giver)
            theirs = holds(t, taker)
            movable = move_total and len(mine) == ceils[t] and len(theirs) == floors[t]
            # Handing over weight w lowers the giver's load by w × its scale at most: the
            # lightest partitions, up to what the best so far gains, cannot beat it.
            light = bisect.bisect_right(mine, floor / sg, key=_weight)
            few = len(theirs) <= 1
            for item in itertools.islice(mine, light, None):
                w = item[0]
                if movable and 0 < w < most:
                    gain = min(w * sg, gap - w * st)  # self.gain, inline: it runs most
                    if gain > best_gain:
                        best_gain = gain
                        best = _Exchange(gain, giver, taker, ((t, item),))
                if few:
                    near = theirs
                else:  # _nearest, inline
                    i = bisect.bisect_left(theirs, w - even, key=_weight)
                    near = theirs[i - 1 : i + 1] if i else theirs[:1]
                for other in near:
                    d = w - other[0]
                    if 0 < d < most:
                        gain = min(d * sg, gap - d * st)
                        if gain > best_gain:
                            best_gain = gain
                            best = _Exchange(gain, giver, taker, ((t, item),), ((t, other),))
            floor = best_gain if best_gain > self.threshold else self.threshold  # floor_gain
        if len(common) > 1 and not self.uneven.isdisjoint(common):
            best = self.best_cross_topic(giver, taker, gap, common, best)
        return best

    def best_cross_topic(
        self, giver: int, taker: int, gap: float, common: set[int], best: _Exchange | None
    ) -> _Exchange | None:
        # Giver hands over a partition of a topic where it holds the ceiling and the taker the
        # floor, and takes back one of a topic where the roles are reversed: every member's
        # counts stay within their floors and ceilings.
        s = self.state
        giver_ceil, giver_floor = self.bounds_held(giver)
        taker_ceil, taker_floor = self.bounds_held(taker)
        out_topics = [t for t in common if t in giver_ceil and t in taker_floor]
        if not out_topics:
            return best
        back_topics = [u for u in common if u in giver_floor and u in taker_ceil]
        if not back_topics:
            return best
        most = gap / s.scale[taker]
        even = gap / (s.scale[giver] + s.scale[taker])
        for t in out_topics:
            for item in s.holds(t, giver):
                w = item[0]
                if w * s.scale[giver] <= self.floor_gain(best):
                    self.budget -= len(back_topics)  # cannot win (see best_with)
                    continue
                for u in back_topics:
                    self.budget -= 1
                    for other in _nearest(s.holds(u, taker), w - even):
                        d = w - other[0]
                        if 0 < d < most:
                            gain = self.gain(giver, taker, gap, d)
                            if best is None or gain > best.gain:
                                best = _Exchange(gain, giver, taker, ((t, item),), ((u, other),))
        return best

    def best_double(self, giver: int) -> _Exchange | None:
        """Two same-topic swaps with one lighter member at once, for when no single exchange
        helps: e.g. the giver trades a hot partition of t for a cold one and takes a hot one of
        u back for a warm one, which neither swap does alone."""
        s = self.state
        best: _Exchange | None = None
        # the giver's holdings, looked up once rather than once per taker
        holdings = [(t, s.holds(t, giver)) for t in self.reach(giver)]
        for taker in self.takers():
            gap = s.load[giver] - s.load[taker]
            top = self.most_gain(giver, taker, gap)
            if top <= self.threshold or (best is not None and top <= best.gain):
                break
            most = gap / s.scale[taker]
            even = gap / (s.scale[giver] + s.scale[taker])
            theirs_of = self.subscribed[taker]
            # every swap's tuple differs: sorted, they come in one order however they are made.
            # A swap of equal weights is left out: beside another swap it does what that one
            # does alone, and no single swap helps (best_exchange found none).
            pairs = [
                (t, held, theirs)
                for t, held in holdings
                if t in theirs_of and (theirs := s.holds(t, taker))
            ]
            listed = sum(len(held) * len(theirs) for _, held, theirs in pairs)
            self.budget -= listed  # what listing them takes, searched or not
            if listed >= VECTOR_DOUBLE_SWAPS:
                unequal = listed - _equal_pairs(pairs)
                if unequal > MAX_DOUBLE_SWAPS:
                    continue  # too many to search: not listed at all
                if unequal >= VECTOR_DOUBLE_SWAPS:
                    best = self.best_pair_of_swaps(giver, taker, gap, pairs, best)
                    if self.budget <= 0:
                        break
                    continue
            swaps = [
                (mine[0] - theirs[0], t, mine, theirs)
                for t, held, their_items in pairs
                for mine in held
                for theirs in their_items
                if mine[0] != theirs[0]
            ]
            swaps.sort()
            deltas = [swap[0] for swap in swaps]
            sg, st = s.scale[giver], s.scale[taker]
            best_gain = -math.inf if best is None else best.gain
            for d1, t1, mine1, theirs1 in swaps:
                j = bisect.bisect_left(deltas, even - d1)
                for d2, t2, mine2, theirs2 in swaps[j - 2 if j > 2 else 0 : j + 2]:
                    d = d1 + d2
                    # one partition twice? (by the partition: compiled, an item is rebuilt
                    # wherever it is unpacked, so its identity says nothing)
                    if not 0 < d < most or mine1[1] is mine2[1] or theirs1[1] is theirs2[1]:
                        continue
                    gain = min(d * sg, gap - d * st)  # self.gain, inline: it runs most
                    if gain > best_gain:
                        best_gain = gain
                        best = _Exchange(
                            gain,
                            giver,
                            taker,
                            ((t1, mine1), (t2, mine2)),
                            ((t1, theirs1), (t2, theirs2)),
                        )
            if self.budget <= 0:
                break
        return best if best is not None and best.gain > self.threshold else None

    def best_pair_of_swaps(
        self,
        giver: int,
        taker: int,
        gap: float,
        pairs: Sequence[tuple[int, Sequence[_Item], Sequence[_Item]]],
        best: _Exchange | None,
    ) -> _Exchange | None:
        """:meth:`best_double`'s look on arrays, for many swaps: ``pairs`` holds, per topic
        both hold, the giver's and the taker's partitions of it. The swaps of unequal weights
        are sorted as the loop sorts their tuples (weight handed over, topic, the giver's
        partition, the taker's), and for each swap the (up to) four whose weight brings the
        two loads nearest to even are looked at, in the loop's order: the first of the largest
        gains wins as there, to the last bit (weights are whole numbers or floats, and each is
        added and multiplied as Python does)."""
        import numpy as np  # here: it takes a while to load, small groups never get here

        s = self.state
        # per swap: weight handed over, topic, the giver's partition (index into mine_items,
        # weight, number), the taker's (index into theirs_items, weight, number)
        columns: list[list[NDArray[Any]]] = [[] for _ in range(8)]
        mine_items: list[_Item] = []
        theirs_items: list[_Item] = []
        for t, held, theirs in pairs:
            a, b = len(held), len(theirs)
            mw = np.array([w for w, _ in held], dtype=float)
            tw = np.array([w for w, _ in theirs], dtype=float)
            mp = np.array([p.partition for _, p in held])
            tq = np.array([p.partition for _, p in theirs])
            rows, cols = np.divmod(np.arange(a * b), b)  # row-major, as the loop lists them
            made = (
                (mw[:, None] - tw[None, :]).ravel(),
                np.full(a * b, t),
                rows + len(mine_items),
                mw[rows],
                mp[rows],
                cols + len(theirs_items),
                tw[cols],
                tq[cols],
            )
            for column, values in zip(columns, made, strict=True):
                column.append(values)
            mine_items += held
            theirs_items += theirs
        delta, topic, mine_i, mine_w, mine_p, theirs_i, theirs_w, theirs_p = map(
            np.concatenate, columns
        )
        keep = delta != 0
        order = np.lexsort(
            tuple(x[keep] for x in (theirs_p, theirs_w, mine_p, mine_w, topic, delta))
        )
        deltas, mine_i, theirs_i = delta[keep][order], mine_i[keep][order], theirs_i[keep][order]
        topic = topic[keep][order]
        sg, st = s.scale[giver], s.scale[taker]
        most, even = gap / st, gap / (sg + st)
        n = len(deltas)
        near = np.searchsorted(deltas, even - deltas, side="left")
        other = near[:, None] + np.arange(-2, 2)  # swaps[j - 2 : j + 2], each row in order
        valid = (other >= 0) & (other < n)
        other = np.clip(other, 0, n - 1)
        d = deltas[:, None] + deltas[other]
        valid &= (d > 0) & (d < most) & (mine_i[:, None] != mine_i[other])
        valid &= theirs_i[:, None] != theirs_i[other]
        gains = np.where(valid, np.minimum(d * sg, gap - d * st), -np.inf)
        k = int(np.argmax(gains))  # the first of the largest, row by row
        gain = float(gains.flat[k])
        if gain == -np.inf or (best is not None and gain <= best.gain):
            return best
        first, second = k // 4, int(other.flat[k])
        t1, t2 = int(topic[first]), int(topic[second])
        return _Exchange(
            gain,
            giver,
            taker,
            ((t1, mine_items[mine_i[first]]), (t2, mine_items[mine_i[second]])),
            ((t1, theirs_items[theirs_i[first]]), (t2, theirs_items[theirs_i[second]])),
        )

    def best_split(self, giver: int) -> _Exchange | None:
        """The best way to split again the partitions two members hold of the topics they
        share, found by trying every split when there are few enough: this finds exchanges of
        three and more partitions each way that no sequence of swaps reaches."""
        s = self.state
        best: _Exchange | None = None
        for taker in self.takers():
            gap = s.load[giver] - s.load[taker]
            top = self.most_gain(giver, taker, gap)
            if top <= self.threshold or (best is not None and top <= best.gain):
                break
            split = self.split(giver, taker)
            if split is not None and (best is None or split.gain > best.gain):
                best = split
        return best if best is not None and best.gain > self.threshold else None

    def counts_for(self, t: int, giver: int, taker: int) -> tuple[int, ...]:
        """How many of topic ``t``'s pooled partitions the giver may end up with: as many as
        now, or one fewer / one more where the two hold the topic's ceiling and floor."""
        held = len(self.state.holds(t, giver))
        if self.at_ceil(t, giver) and self.at_floor(t, taker):
            return held, held - 1
        if self.at_floor(t, giver) and self.at_ceil(t, taker):
            return held, held + 1
        return (held,)

    def split(self, giver: int, taker: int) -> _Exchange | None:
        s = self.state
        pools = [
            (t, s.holds(t, giver), s.holds(t, taker), self.counts_for(t, giver, taker))
            for t in sorted(self.subscribed[giver] & self.subscribed[taker])
        ]
        pools = [p for p in pools if p[1] or p[2]]
        work = 1
        for _, mine, theirs, counts in pools:
            work *= sum(math.comb(len(mine) + len(theirs), k) for k in counts)
        if not pools or work > MAX_SPLITS:
            return None
        self.budget -= work
        if s.uniform:
            fixed = s.load[giver] - sum(w for _, mine, _, _ in pools for w, _ in mine)
            total = s.load[giver] + s.load[taker]

            def loads(weight: Any) -> tuple[Any, Any]:  # a weight, or an array of them
                return fixed + weight, total - fixed - weight
        else:
            sg, st = s.scale[giver], s.scale[taker]
            mine_total = sum(w for _, mine, _, _ in pools for w, _ in mine)
            theirs_total = sum(w for _, _, theirs, _ in pools for w, _ in theirs)
            pooled = mine_total + theirs_total
            fixed_g = s.load[giver] - mine_total * sg
            fixed_t = s.load[taker] - theirs_total * st

            def loads(weight: Any) -> tuple[Any, Any]:  # a weight, or an array of them
                return fixed_g + weight * sg, fixed_t + (pooled - weight) * st

        # Per topic, every way the giver may end up with its pooled partitions: (change in its
        # count, the weight it takes, which pick), the weights summed at C speed.
        Choice = tuple[int, float, int]
        choices: list[list[Choice]] = []
        for _, mine, theirs, counts in pools:
            weights = [w for w, _ in (*mine, *theirs)]
            here: list[Choice] = []
            for k in counts:
                sums = map(sum, itertools.combinations(weights, k))
                here += zip(itertools.repeat(k - len(mine)), sums, itertools.count(len(here)))
            choices.append(here)
        if work >= VECTOR_SPLITS:
            lightest = self.lightest_split_on_arrays(giver, taker, choices, loads)
        else:
            lightest = self.lightest_split(giver, taker, choices, loads)
        if lightest is None:
            return None
        weight, chosen = lightest
        gain = s.load[giver] - max(loads(weight))
        if gain <= self.threshold:
            return None
        out: list[_Held] = []
        back: list[_Held] = []
        for (t, mine, theirs, counts), i in zip(pools, chosen, strict=True):
            picks = itertools.chain.from_iterable(
                itertools.combinations((*mine, *theirs), k) for k in counts
            )
            pick = next(itertools.islice(picks, i, None))
            kept, had = set(pick), set(mine)
            out += [(t, item) for item in mine if item not in kept]
            back += [(t, item) for item in pick if item not in had]
        return _Exchange(gain, giver, taker, tuple(out), tuple(back))

    def lightest_split(
        self,
        giver: int,
        taker: int,
        choices: Sequence[Sequence[tuple[int, float, int]]],
        loads: Callable[[float], tuple[float, float]],
    ) -> tuple[float, tuple[int, ...]] | None:
        """Of :meth:`split`'s ``choices`` (per topic, every way the giver may end up with its
        pooled partitions: change in its count, the weight it takes, which pick), one per topic,
        the combination whose larger load is least and the counts allow: its weight and picks.
        """
        # (change in the giver's count, its share of the pooled weight) -> the picks that make
        # it, one per topic (the first found, as they are enumerated)
        shares: dict[tuple[int, float], tuple[int, ...]] = {(0, 0.0): ()}
        for here in choices:
            grown: dict[tuple[int, float], tuple[int, ...]] = {}
            for (delta, weight), chosen in shares.items():
                for d, w, i in here:
                    grown.setdefault((delta + d, weight + w), (*chosen, i))
            shares = grown
        options = [key for key in shares if self.may_change_totals(giver, taker, key[0])]
        if not options:
            return None
        key = min(options, key=lambda k: max(loads(k[1])))
        return key[1], shares[key]

    def lightest_split_on_arrays(
        self,
        giver: int,
        taker: int,
        choices: Sequence[Sequence[tuple[int, float, int]]],
        loads: Callable[[Any], tuple[Any, Any]],
    ) -> tuple[float, tuple[int, ...]] | None:
        """:meth:`lightest_split` on arrays, for many combinations, to the last bit: every
        combination in the order the dictionary meets them (the first topic's pick varies
        slowest), its weight summed from 0.0 topic after topic as there; the first of the least
        larger loads is the first key the dictionary holds with it, and its first picks."""
        import numpy as np  # here: it takes a while to load, small groups never get here

        deltas = np.zeros(1, dtype=np.int64)
        weights = np.zeros(1)
        for here in choices:
            deltas = np.add.outer(deltas, [d for d, _, _ in here]).ravel()
            weights = np.add.outer(weights, np.array([w for _, w, _ in here], float)).ravel()
        counted, where = np.unique(deltas, return_inverse=True)
        allowed = np.array([self.may_change_totals(giver, taker, d) for d in counted.tolist()])
        if not allowed.any():
            return None
        larger = np.where(allowed[where], np.maximum(*loads(weights)), np.inf)
        at = int(np.argmin(larger))
        picks = np.unravel_index(at, [len(here) for here in choices])
        return weights[at].item(), tuple(int(i) for i in picks)

    def may_change_totals(self, giver: int, taker: int, delta: int) -> bool:
        """Whether the giver may end with ``delta`` more partitions in all (the taker with as
        many fewer) and both stay within the floor and ceiling of identical subscriptions."""
        s = self.state
        if not s.identical or delta == 0:
            return True
        low, high = s.global_floor, s.global_ceil
        return low <= s.count[giver] + delta <= high and low <= s.count[taker] - delta <= high

    def bounds_held(self, m: int) -> tuple[set[int], set[int]]:
        """The topics of uneven counts where ``m`` holds its ceiling, and where its floor:
        worked out again only after an exchange changed what it holds. Every pair of members
        looks at them (:meth:`best_cross_topic`), and on a group of a few partitions per
        member (2,500 on 2,000 members, 25 topics) counting them per pair was most of the
        search: 3.7 million look-ups for one plan."""
        known = self.held_bounds.get(m)
        if known is not None and known[0] == self.changes[m]:
            return known[1], known[2]
        holds, ceils, floors = self.state.holds, self.ceils, self.floors
        at_ceil: set[int] = set()
        at_floor: set[int] = set()
        for t in self.subscribed[m]:
            ceil = ceils[t]
            if ceil < 0:
                continue  # as many partitions for each subscriber: none moves alone
            count = len(holds(t, m))
            if count == ceil:
                at_ceil.add(t)
            elif count == floors[t]:
                at_floor.add(t)
        self.held_bounds[m] = (self.changes[m], at_ceil, at_floor)
        return at_ceil, at_floor

    def apply(self, e: _Exchange) -> None:
        s = self.state
        self.changes[e.giver] += 1
        self.changes[e.taker] += 1
        for t, item in e.out:
            s.take(t, e.giver, item)
            s.give(t, e.taker, item)
        for u, other in e.back:
            s.take(u, e.taker, other)
            s.give(u, e.giver, other)


def balance(
    group: Group,
    weights: Mapping[TopicPartition, float],
    *,
    owners: Mapping[TopicPartition, str] | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    search_budget: int = DEFAULT_SEARCH_BUDGET,
    speeds: Mapping[str, float] | None = None,
) -> Assignment:
    """Assign ``group`` minimising the largest member total of ``weights``.

    With ``owners``, partitions stay with them unless that leaves the largest total more than
    ``tolerance`` (a fraction) above what a fresh assignment achieves.

    With ``speeds`` (member id -> how fast it works through weight; positive), a member's load
    is its total divided by its speed, and the largest load is minimised: what uniform machines
    are in scheduling. Members of speed 0 are taken as the slowest positive speed × 10⁻⁹: they
    get as little as the counts allow.
    """
    return _to_assignment(
        group, _balanced_state(group, weights, owners, tolerance, search_budget, speeds)
    )


def _scale(group: Group, speeds: Mapping[str, float] | None) -> list[float] | None:
    """Each member's load per unit of weight, 1 ÷ speed; None when every member is alike."""
    if speeds is None:
        return None
    given = [float(speeds[m.id]) for m in group.members]
    if any(not (0 <= v < math.inf) for v in given):
        raise ValueError(f"speeds must be non-negative and finite, got {given}")
    # 1 ÷ a speed this small, or a billion ÷ it for a member that reads nothing, is beyond a
    # double: such a member reads nothing (the speeds hypothesis drew of 1e-309 msg/s made
    # every load infinite, and the bound's division by their sum failed)
    given = [v if v >= LEAST_SPEED else 0.0 for v in given]
    fastest = max(given, default=0.0)
    if fastest == 0 or all(v == given[0] for v in given):
        return None  # alike (or nothing known): plain totals, exactly as without speeds
    slowest = min((v for v in given if v > 0), default=fastest) * 1e-9
    return [1 / max(v, slowest) for v in given]


@dataclass(slots=True)
class _Work:
    """Work units left to the deterministic starts' searches (and the sticky one) of the plans
    of one assignment, :func:`catch_up_plan`'s: their ``search_budget`` (see :data:`WORK_BASE`)."""

    search: int


def restart_work(partitions: int) -> int:
    """The restarts' work budget for a group of ``partitions`` (see :data:`WORK_BASE`)."""
    return min(WORK_BASE + WORK_SMALL // max(partitions, 1), WORK_MOST)


def _load_bound(
    group: Group, topics: Sequence[_Topic], scale: Sequence[float] | None, empty: _State, size: int
) -> float:
    """A largest load no plan of ``topics`` (``size`` partitions in all) on ``group``'s members
    is below: a search that reaches it stops, and :func:`catch_up_plan` ends its rounds once it
    proves no plan much sooner. ``scale``: the members' (:func:`_scale`); ``empty``: a state of
    them holding nothing yet."""
    if scale is not None:
        # what all members finishing together would take, and the heaviest partition on the
        # fastest member
        heaviest = max((t.heaviest for t in topics if t.size), default=0.0)
        # added one after the other as a generator would, at C speed
        on_arrays = [t.weights for t in topics if t.weights is not None]
        if topics and len(on_arrays) == len(topics) and {w.dtype.kind for w in on_arrays} == {"f"}:
            import numpy as np

            total = _added(np.concatenate(on_arrays))
        else:
            total = sum(itertools.chain.from_iterable(t.weighed() for t in topics))
        bound = max(total / _speed(scale), heaviest * min(scale))
    else:
        bound = pigeonhole_bound(_all_weights(topics), len(group.members), empty.global_floor)
    if scale is None and not empty.identical:
        # members that alone read some topics must carry them, whatever the others do
        readers = {t.name: t.subscribers for t in topics}
        subscribed = {tp: w for t in topics for w, tp in t.partitions}
        bound = max(bound, lower_bound(subscribed, len(group.members), readers))
    if size <= GLOBAL_CONSTRUCTION_LIMIT:
        if scale is None:
            bound = max(bound, _count_bound(topics))
        else:
            # (lag plans, of members alike, keep the bound they had: the same plans)
            floor, light = empty.global_floor, _lightest_sums(topics)
            counted = _count_bound(topics, scale, floor, lightest=light)
            bound = max(bound, counted, _slowest_bound(topics, scale, floor, lightest=light))
    return bound


def _slowest_bound(
    topics: Sequence[_Topic],
    scale: Sequence[float],
    global_floor: int,
    *,
    lightest: Sequence[Sequence[float]] | None = None,
) -> float:
    """A lower bound on the largest load from what the slowest members must hold, for members
    of different speeds (``scale``, see :class:`_State`).

    Every subscriber of a topic holds at least its floor of it, and with identical
    subscriptions at least ``global_floor`` partitions in all: the j slowest members together
    hold at least their floors' lightest, and at least the j·``global_floor`` lightest of all.
    Read at their speeds together, one of them has a load of at least that weight ÷ the sum
    of their speeds. The count bound (:func:`_count_bound`) takes the fastest subscriber
    that could hold a heavy partition; this one sees slow members vying for the light ones, as
    where every member holds a partition or two and the slowest can barely keep up with any.

    Example: members a and b (1 msg/s each) and c (4) read t (weights 1, 1, 10, 10, 10, 30):
    two each. The slowest two hold four partitions, at least 1 + 1 + 10 + 10 = 22, at 2 msg/s
    together: one of them has a load of at least 11, as a and b have with a 1 and a 10 each
    (c: 40 ÷ 4 = 10). The total over everyone's speed says 62 ÷ 6 ≈ 10.3, and the count bound
    30 ÷ 4 + 1 ÷ 4 = 7.75 (c holding the 30).

    ``lightest``: :func:`_lightest_sums` of ``topics``, where the caller has it already.
    """
    lightest = _lightest_sums(topics) if lightest is None else lightest
    everyone = sorted(itertools.chain.from_iterable(t.weighed() for t in topics))
    all_lightest = list(itertools.accumulate(everyone, initial=0.0))
    reads: list[list[int]] = [[] for _ in scale]  # member -> the topics it reads
    for u, topic in enumerate(topics):
        for m in topic.subscribers:
            reads[m].append(u)
    held = [0] * len(topics)  # per topic, what the slowest so far hold of it at least
    speed = best = 0.0
    slowest_first = sorted(range(len(scale)), key=lambda m: -scale[m])
    for j, m in enumerate(slowest_first, start=1):
        speed += 1 / scale[m]
        for u in reads[m]:
            held[u] += topics[u].floor
        weight = sum(lightest[u][min(h, topics[u].size)] for u, h in enumerate(held))
        if global_floor:
            weight = max(weight, all_lightest[min(j * global_floor, len(everyone))])
        best = max(best, weight / speed)
    return best


def _none_within(
    group: Group, weights: _Weights, scale: Sequence[float] | None, per: float, time: float
) -> bool:
    """Whether no plan has every member of ``group`` catch up within ``time``, proven by the
    search's own lower bound (:func:`_load_bound`). ``weights``: ``lag + time × rate_in`` per
    partition; ``scale``: the members' (:func:`_scale` of their capacities); ``per``: their
    common capacity when they are alike (plain totals then), else 1. A member catching up
    within ``time`` has L + time·I ≤ time·C, a load of at most ``time`` × ``per`` at these
    weights: a bound above that rules every plan out.

    Example: members a (capacity 2 msg/s) and b (1) read t-0 (lag 90, 0.5 msg/s in) and t-1
    (lag 10, 0.5 msg/s), one partition each. Within 50 s they weigh 115 and 35. All finishing
    together would take (115 + 35) ÷ 3 = 50 s, which rules nothing out, but whoever holds t-0
    has a load of at least 115 ÷ 2 = 57.5 > 50 (:func:`_count_bound`): no plan within 50 s.
    (The soonest, a with t-0, takes 90 ÷ 1.5 = 60 s.)
    """
    topics = _topics(group, weights)
    empty = _new_state(group, topics, scale)
    size = sum(t.size for t in topics)
    return _load_bound(group, topics, scale, empty, size) > time * per


def _balanced_state(
    group: Group,
    weights: _Weights | None,
    owners: Mapping[TopicPartition, str] | None,
    tolerance: float,
    search_budget: int,
    speeds: Mapping[str, float] | None,
    work: _Work | None = None,
    restart_factor: int = 1,
    warm: _State | None = None,
    fit_under: float | None = None,
    min_gain: float = MIN_GAIN,
) -> _State:
    """The plan :func:`balance` makes. ``work``: a budget shared with other plans (those of
    :func:`catch_up_plan`), spent by this one; without it the plan has a budget of its own.
    ``restart_factor``: the restarts get that many times :func:`restart_work`. ``warm``: a
    plan (of the same partitions under other weights) to search from too, beside the
    deterministic starts: each partition with its member there. ``fit_under``: a load every
    member should fit under (a catch-up round's T); with restarts, members of different
    speeds then get :data:`BEST_FIT_RESTARTS` times their budget more, of best-fit starts
    (:func:`_construct_best_fit`), after the others, and then :data:`RUIN_RESTARTS` times it
    more of ruin-and-recreate starts from the best plan found (:func:`_construct_ruined`).
    ``min_gain``: the smallest step the search takes, a fraction of the largest load; a plan
    within it of the bound is taken as optimal (:func:`catch_up_plan` makes it smaller near
    capacity)."""
    scale = _scale(group, speeds)
    topics = _topics(group, weights)
    size = sum(t.size for t in topics)
    constructions: list[Callable[[_State], None]] = [_construct_by_topic]
    if size <= GLOBAL_CONSTRUCTION_LIMIT:
        constructions.append(_construct_global)
    if warm is not None:
        constructions.append(_warm_start(warm))
    budget = search_budget // (len(constructions) + bool(owners))
    # Nothing beats this bound, so a start that reaches it needs no search and no restarts.
    empty = _new_state(group, topics, scale)
    bound = _load_bound(group, topics, scale, empty, size)
    # Where loads are sums of whole numbers, no plan's largest load lies between the bound and
    # the next whole number: a plan there is optimal. Without this, a plan at the optimum,
    # 1,353, above a bound of 1,352.9 ran every restart (52, 0.18 s) looking for a better one.
    # (The bound's last bits come from divisions: one a hair above a whole number is that.)
    whole_loads = scale is None and _whole(topics)
    whole = math.ceil(bound * (1 - WHOLE_SLACK)) if whole_loads else 0
    # (only where the floors leave members short of the global floor: elsewhere it is the
    # count bound above, not worked out twice)
    short = empty.global_floor > sum(t.floor for t in topics)
    if whole_loads and short and size <= GLOBAL_CONSTRUCTION_LIMIT:
        # The count bound with the global floor (members its floors leave short of it take
        # their lightest more) was the optimum on 5 of bench/cost.py's 25 slowest ordinary
        # groups, where the restarts spent their whole budget looking for better. A plan at
        # it ends the search; one within MIN_GAIN above it does not, as it does for the
        # bounds above: there the restarts often reach it (17 of 1,000 groups ended up to
        # 0.009% worse when they stopped short).
        filled = _count_bound(topics, None, empty.global_floor)
        whole = max(whole, math.ceil(filled * (1 - WHOLE_SLACK)))
    least = max(bound, whole)  # no plan's largest load is below this
    # within min_gain of the bound is as good as at it: the search takes no smaller step
    bound = max(bound * (1 + min_gain), whole)
    sticky: _State | None = None  # what members own, kept up to their quotas
    owned: dict[TopicPartition, int] = {}
    if owners:
        index = {m.id: i for i, m in enumerate(group.members)}
        owned = {tp: index[m] for tp, m in owners.items() if m in index}
        sticky = _new_state(group, topics, scale)
        _construct_sticky(sticky, owned)
        # What members own, within the tolerance of what no plan beats, is within it of the
        # fresh plan too, whatever the search finds: kept as it is, the same plan as after the
        # search, without it. A group that rebalances with little changed (a member restarts,
        # the metadata is refreshed) is so. Not with a budget shared with other plans
        # (catch_up_plan's): the fresh search spends it.
        if work is None and max(sticky.load, default=0.0) <= least * (1 + tolerance):
            return sticky

    #: the starts constructed so far, by their loads and counts
    seen: set[tuple[tuple[float, ...], tuple[int, ...]]] = set()

    def searched(construct: Callable[[_State], None], budget: int) -> tuple[_State | None, int]:
        """A start and its search, and the work they took (see :data:`WORK_BASE`); no state
        (and only the construction's work) for a start already searched."""
        state = _new_state(group, topics, scale)
        construct(state)
        start = (tuple(state.load), tuple(state.count))
        if start in seen:
            return None, size + state.extra_work
        seen.add(start)
        search = _Search(state, budget, min_gain)
        search.run(target=bound)
        return state, size + state.extra_work + budget - search.budget

    # Different starting points reach different local optima; keep the best. The deterministic
    # starts search in full (up to their share of search_budget); then restarts, seeded by
    # their number, while restart_work(size) lasts: on small groups, where a single local
    # optimum can be a few percent off and a search is cheap, there are many.
    if work is not None:
        # the shared budget: each start searches at most its share of what is left
        budget = min(budget, work.search)
    best: _State | None = None
    repeats = 0  # starts in a row already searched (see STALE_RESTARTS)
    for construct in constructions:
        state, spent = searched(construct, budget)
        if work is not None:
            work.search -= spent
        repeats = repeats + 1 if state is None else 0
        if state is not None and (best is None or _worse(best, state)):
            best = state
        if best is not None and max(best.load, default=0.0) <= bound:
            break
    assert best is not None

    def restarted(
        family: Iterable[Callable[[_State], None]], left: int, best: _State, streak: int
    ) -> _State:
        """``best``, or a better plan from the starts of ``family`` (numbered restarts),
        searched one after the other while the work they take is within ``left``; ``streak``:
        starts in a row already searched before these."""
        for construct in family:
            if left <= 0 or streak >= STALE_RESTARTS or max(best.load, default=0.0) <= bound:
                break
            state, spent = searched(construct, min(left, budget))
            left -= spent
            streak = streak + 1 if state is None else 0
            if state is not None and _worse(best, state):
                best = state
        return best

    left = restart_work(size) * restart_factor if size <= RESTART_LIMIT else 0
    more = left > 0 and repeats < STALE_RESTARTS and max(best.load, default=0.0) > bound
    if more and sticky is not None and work is None:
        target = max(best.load, default=0.0) * (1 + tolerance)
        if _kept_before_restarts(sticky, budget, target, least * (1 + tolerance)):
            return sticky
        sticky = _new_state(group, topics, scale)  # to search afresh after the restarts
        _construct_sticky(sticky, owned)
    # (maps: compiled, a generator expression handed on is made a list first, and these never
    # end)
    best = restarted(map(_perturbed_start, itertools.count()), left, best, repeats)
    if fit_under is not None and scale is not None and left > 0:
        fits = map(functools.partial(_best_fit_start, fit_under), itertools.count())
        best = restarted(fits, restart_work(size) * BEST_FIT_RESTARTS, best, 0)
        best = restarted(
            _ruined_starts(best, fit_under), restart_work(size) * RUIN_RESTARTS, best, 0
        )
    if sticky is not None:
        target = max(best.load, default=0.0) * (1 + tolerance)
        search = _Search(sticky, budget, min_gain)
        search.run(target)
        if work is not None:
            work.search -= budget - search.budget
        if max(sticky.load, default=0.0) <= target:
            best = sticky
        else:
            best = _handed_to_owners(group, best, owned)
    return best


def _kept_before_restarts(sticky: _State, budget: int, target: float, limit: float) -> bool:
    """Whether what members own (``sticky``), searched towards ``target`` (the best plan
    before any restart, times 1 + tolerance), is kept whatever the restarts find: it ends
    within ``limit`` (what no plan beats, times 1 + tolerance). ``sticky`` is searched either
    way.

    The restarts only lower the fresh plan that what members own is held to, and the sticky
    search after them takes the same exchanges whatever its target, stopping at the first
    state within it. So this search stops no later than that one would, and where it stops
    within ``limit``, that one stops there too and keeps it: the same plan, without the
    restarts. On the fleet pipeline's groups (members own what ``range`` gave them) this
    halved `balanced`'s time (bench/results/pipeline.md).
    """
    _Search(sticky, budget).run(target)
    return max(sticky.load, default=0.0) <= limit


def _whole(topics: Sequence[_Topic]) -> bool:
    """Whether every weight is a whole number (lags are; weights with rates are not)."""
    for t in topics:
        if t.listed is None and t.weights is not None:
            if t.weights.dtype.kind != "i":
                return False
        # the weights' own types: unpacked into a float, an int would read as a float
        elif not {*map(type, map(_weight, t.partitions))} <= {int}:
            return False
    return True


def _all_weights(topics: Sequence[_Topic]) -> Iterable[float]:
    """Every topic's weights, for :func:`lagassign.metrics.pigeonhole_bound`: one array when
    every topic holds its weights as ints on one (the bound sorts them with NumPy), else the
    Python numbers hottest first, topic after topic."""
    arrays = [t.weights for t in topics if t.weights is not None and t.weights.dtype.kind == "i"]
    if arrays and len(arrays) == len(topics):
        import numpy as np

        return np.concatenate(arrays)
    return itertools.chain.from_iterable(t.weighed() for t in topics)


def _handed_to_owners(group: Group, state: _State, owners: Mapping[TopicPartition, int]) -> _State:
    """``state`` with whole holdings swapped between members of the same subscriptions so that
    as many partitions as possible stay with the members that own them.

    Members that subscribe the same topics at the same speed are interchangeable: either can
    take the other's whole holding and every load and count guarantee still holds. A fresh
    assignment hands holdings out without regard to who owns what; matching holdings to owners
    (a maximum-weight bipartite matching, SciPy's ``linear_sum_assignment``) keeps the moves
    down when staying put was not good enough. Only members with something to keep enter the
    matching.
    """
    # imported here: NumPy and SciPy take a while to load, and most assignments never get here
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    state.materialize()

    alike: dict[tuple[frozenset[str], float], list[int]] = {}
    for i, member in enumerate(group.members):
        alike.setdefault((member.topics, state.scale[i]), []).append(i)
    kind = [0] * len(group.members)  # members of one kind subscribe the same topics
    for k, members in enumerate(alike.values()):
        for m in members:
            kind[m] = k
    # per kind: (holder, owner) -> partitions the holder holds that the owner owns
    kept: list[Counter[tuple[int, int]]] = [Counter() for _ in alike]
    for (_, m), items in state.held.items():
        for _, tp in items:
            owner = owners.get(tp)
            if owner is not None and kind[owner] == kind[m]:
                kept[kind[m]][(m, owner)] += 1
    to = list(range(len(group.members)))
    for members, pairs in zip(alike.values(), kept, strict=True):
        if not pairs:
            continue
        holders = sorted({m for m, _ in pairs})
        owning = sorted({o for _, o in pairs})
        row, col = {m: i for i, m in enumerate(holders)}, {o: j for j, o in enumerate(owning)}
        common = np.zeros((len(holders), len(owning)))
        for (m, o), n in pairs.items():
            common[row[m], col[o]] = n
        rows, cols = linear_sum_assignment(common, maximize=True)
        matched = {holders[r]: owning[c] for r, c in zip(rows, cols, strict=True)}
        # The others stay where nobody was matched to, else take the places left over.
        taken = set(matched.values())
        left_over = iter(m for m in members if m in matched and m not in taken)
        for m in members:
            if m in matched:
                to[m] = matched[m]
            elif m in taken:
                to[m] = next(left_over)
    moved = _new_state(group, state.topics, None if state.uniform else state.scale)
    for (t, m), items in state.held.items():
        moved.held[(t, to[m])] = items
    for m in range(len(group.members)):
        moved.load[to[m]], moved.count[to[m]] = state.load[m], state.count[m]
    return moved


def _kept_state(
    group: Group,
    weights: _Weights,
    owners: Mapping[TopicPartition, str],
    speeds: Mapping[str, float] | None,
    work: _Work,
    target: float,
) -> _State:
    """Every owned partition where it is (as far as the count guarantees let it stay, as in
    :func:`_construct_sticky`), and the partitions nobody keeps placed, hottest first, then
    exchanged among the members while that lowers the larger load of two: the plan that moves
    nothing it need not move. The exchanges (:func:`_exchange_free`) touch none of the kept
    partitions and keep the counts; they spend ``work``.

    If some load still exceeds ``target``, the search (:class:`_Search`) goes on from there with
    every partition, until none does: owned partitions move only as far as that needs.

    This is what a cooperative follow-up round needs: the round before revoked only what moves,
    and the partitions it withheld are the ones nobody keeps now.
    """
    index = {m.id: i for i, m in enumerate(group.members)}
    state = _new_state(group, _topics(group, weights), _scale(group, speeds))
    owned = {tp: index[m] for tp, m in owners.items() if m in index}
    movable = _construct_sticky(state, owned, holders_first=True)
    _exchange_free(state, movable, work)
    if state.load and max(state.load) > target:
        search = _Search(state, work.search)
        search.run(target)
        work.search = search.budget
    return state


def _exchange_free(state: _State, movable: Collection[TopicPartition], work: _Work) -> None:
    """Exchanges of the ``movable`` partitions only, while one lowers the larger load of its two
    members: moving one, swapping two of one topic, or, where only the totals of identical
    subscriptions stop a move, swapping it for one of another topic."""
    if not movable:
        return
    topics, load, scale = state.topics, state.load, state.scale
    reads = state.reads()

    def free(t: int, m: int) -> list[_Item]:
        return [item for item in state.holds(t, m) if item[1] in movable]

    def best_for(giver: int) -> tuple[float, int, _Held, _Held | None] | None:
        """the exchange that lowers the larger load of the giver and a taker most:
        (gain, taker, (topic, item) the giver hands over, (topic, item) it takes back)"""
        top = load[giver]
        best: tuple[float, int, _Held, _Held | None] | None = None
        threshold = MIN_GAIN * max(load)
        for t in reads[giver]:
            mine = free(t, giver)
            if not mine:
                continue
            for taker in topics[t].subscribers:
                if taker == giver or load[taker] >= top:
                    continue
                # back: nothing, a partition of the same topic, or one of a topic where the
                # taker holds the ceiling and the giver the floor, while in t it is the reverse
                theirs: list[_Held | None] = [(t, item) for item in free(t, taker)]
                if state.may_move(t, giver, taker):
                    theirs.append(None)
                elif (
                    len(state.holds(t, giver)) > topics[t].floor
                    and len(state.holds(t, taker)) < topics[t].ceil
                ):
                    # only the totals stop it: one of another topic comes back
                    theirs += [
                        (u, item)
                        for u in reads[taker]
                        if u != t
                        and giver in topics[u].subscribers
                        and len(state.holds(u, taker)) > topics[u].floor
                        and len(state.holds(u, giver)) < topics[u].ceil
                        for item in free(u, taker)
                    ]
                work.search -= len(mine) * len(theirs)
                for a in mine:
                    for b in theirs:
                        d = a[0] - (b[1][0] if b is not None else 0.0)
                        if d <= 0:
                            continue
                        gain = top - max(top - d * scale[giver], load[taker] + d * scale[taker])
                        if gain > threshold and (best is None or gain > best[0]):
                            best = (gain, taker, (t, a), b)
        return best

    # Sweeps heaviest member first, as the search's (:meth:`_Search.run`): each exchange lowers
    # the larger of two loads, and below the top it makes room for the top.
    while work.search > 0:
        best = None
        for giver in sorted(range(len(load)), key=lambda m: (-load[m], state.tie[m])):
            best = best_for(giver)
            if best is not None:
                break
        if best is None:
            break
        _, taker, (t, a), b = best
        state.take(t, giver, a)
        state.give(t, taker, a)
        if b is not None:
            state.take(b[0], taker, b[1])
            state.give(b[0], giver, b[1])


def _settle_handovers(
    state: _State,
    totals: _MemberTotals,
    current: NDArray[np.intp],
    backlogs: NDArray[np.float64],
    inflows: NDArray[np.float64],
    capacity: Sequence[float],
    pause: float,
    work: _Work,
    withholding: bool,
) -> list[tuple[int, int, int, _Item, _Item | None]]:
    """``state`` searched on each member's catch-up time with its handovers' pause priced
    (:meth:`_MemberTotals.handed_over`), exactly as :func:`catch_up_plan` judges it: moving
    one of the slowest member's partitions to a member of its topic, or swapping it for one
    of theirs, while that lowers the later of the two members' times. Without
    ``withholding``, only exchanges that take no partition from the member reading it now
    (each such would withhold it for another round). It keeps the counts and spends
    ``work``. Returns the exchanges made, in order: (topic, giver, taker, the partition
    given, the one taken back or None), for :func:`_undone`.

    The plans before this one are searched on loads that cannot tell a partition a member
    reads now from one handed to it a round later: a member near its capacity and given a
    partition that goes unread meanwhile can take many times what its load says. Here a
    handover that costs more than it brings is undone or sent to a member with the room for
    it (one still reading a backlog through the pause loses nothing to it).
    """
    state.materialize()
    topics = state.topics
    members = len(state.load)
    lag, rate, now = backlogs.tolist(), inflows.tolist(), current.tolist()

    place = totals.place
    reads = state.reads()

    def sums(m: int) -> tuple[float, float, float, float, int]:
        """backlog and inflow of what ``m`` holds, and of what of it is handed over to it, and
        how many partitions are (an exchange's sums are worked out by adding and taking away,
        and the count, not a float left near 0, tells whether anything is handed over)"""
        backlog = inflow = handed_backlog = handed_inflow = 0.0
        handed = 0
        for t in reads[m]:
            for _, tp in state.holds(t, m):
                i = place(tp)
                backlog += lag[i]
                inflow += rate[i]
                if 0 <= now[i] != m:
                    handed_backlog += lag[i]
                    handed_inflow += rate[i]
                    handed += 1
        return backlog, inflow, handed_backlog, handed_inflow, handed

    def time(m: int, backlog: float, inflow: float, lh: float, ih: float, handed: int) -> float:
        done = catch_up_time(backlog, inflow, capacity[m])
        return max(done, _after_handover(lh, ih, inflow, capacity[m], pause)) if handed else done

    made: list[tuple[int, int, int, _Item, _Item | None]] = []
    totals_of = [sums(m) for m in range(members)]
    times = [time(m, *totals_of[m]) for m in range(members)]
    while work.search > 0:
        slowest = max(range(members), key=lambda m: (times[m], -state.tie[m]))
        top = times[slowest]
        if not 0 < top < math.inf:
            return made
        backlog, inflow, handed, handed_in, count = totals_of[slowest]
        enough = top * (1 - MIN_GAIN)
        best: tuple[float, int, int, _Item, _Item | None] | None = None
        for t in reads[slowest]:
            mine = list(state.holds(t, slowest))
            for taker in topics[t].subscribers:
                if taker == slowest or times[taker] >= top:
                    continue
                theirs: list[_Item | None] = list(state.holds(t, taker))
                if state.may_move(t, slowest, taker):
                    theirs.append(None)
                work.search -= len(mine) * len(theirs)
                b2, i2, h2, hi2, n2 = totals_of[taker]
                for a in mine:
                    i = place(a[1])
                    a_lag, a_rate = lag[i], rate[i]
                    a_from = 0 <= now[i] != slowest  # handed to the giver
                    a_to = 0 <= now[i] != taker  # handed to the taker
                    for b in theirs:
                        j = place(b[1]) if b is not None else -1
                        if not withholding and (now[i] == slowest or (j >= 0 and now[j] == taker)):
                            continue  # it takes a partition from the member reading it now
                        gb, gi = backlog - a_lag, inflow - a_rate
                        gh, ghi, gn = handed, handed_in, count
                        tb, ti, th, thi, tn = b2 + a_lag, i2 + a_rate, h2, hi2, n2
                        if a_from:
                            gh, ghi, gn = gh - a_lag, ghi - a_rate, gn - 1
                        if a_to:
                            th, thi, tn = th + a_lag, thi + a_rate, tn + 1
                        if j >= 0:
                            gb, gi, tb, ti = gb + lag[j], gi + rate[j], tb - lag[j], ti - rate[j]
                            if 0 <= now[j] != slowest:
                                gh, ghi, gn = gh + lag[j], ghi + rate[j], gn + 1
                            if 0 <= now[j] != taker:
                                th, thi, tn = th - lag[j], thi - rate[j], tn - 1
                        giver_done = time(slowest, gb, gi, gh, ghi, gn)
                        later = max(giver_done, time(taker, tb, ti, th, thi, tn))
                        if later < enough and (best is None or later < best[0]):
                            best = (later, taker, t, a, b)
        if best is None:
            return made
        _, taker, t, a, b = best
        _exchanged(state, t, slowest, taker, a, b)
        made.append((t, slowest, taker, a, b))
        for m in (slowest, taker):
            totals_of[m] = sums(m)
            times[m] = time(m, *totals_of[m])
    return made


def _exchanged(state: _State, t: int, giver: int, taker: int, a: _Item, b: _Item | None) -> None:
    """``a`` of topic ``t`` from ``giver`` to ``taker``, and ``b`` (if any) back"""
    state.take(t, giver, a)
    state.give(t, taker, a)
    if b is not None:
        state.take(t, taker, b)
        state.give(t, giver, b)


def _undone(state: _State, made: Sequence[tuple[int, int, int, _Item, _Item | None]]) -> None:
    """``state`` as before the exchanges ``made`` (see :func:`_settle_handovers`)"""
    for t, giver, taker, a, b in reversed(made):
        _exchanged(state, t, taker, giver, a, b)


def _after_handover(
    backlog: float, inflow: float, member_inflow: float, capacity: float, pause: float
) -> float:
    """When a member of ``capacity`` with ``member_inflow`` in all has read what is handed over
    to it, partitions of ``backlog`` and ``inflow`` unread for ``pause`` seconds: then it holds
    ``backlog`` + ``pause`` × ``inflow`` of them, read at ``capacity`` − ``member_inflow`` (never
    if that is not positive). 0 when nothing with backlog or inflow is handed over. The member's
    catch-up time is the later of this and its time without the pause
    (:meth:`_MemberTotals.handed_over`)."""
    if backlog <= 0 and inflow <= 0:
        return 0.0
    return pause + catch_up_time(backlog + pause * inflow, member_inflow, capacity)


def _worse(a: _State, b: _State) -> bool:
    """Whether ``a`` is worse than ``b``: loads compared largest first."""
    return sorted(a.load, reverse=True) > sorted(b.load, reverse=True)


def _to_assignment(
    group: Group,
    state: _State,
    totals: _MemberTotals | None = None,
    owner: NDArray[np.intp] | None = None,
) -> Assignment:
    """Each member's partitions in topic order (as Java compares names), then by number.

    ``totals`` (of ``group``) and ``owner`` (its :meth:`_MemberTotals.owners` of ``state``),
    when known, are not made again for the assignment on arrays."""
    if sum(map(len, map(attrgetter("partitions"), group.topics.values()))) > ARRAYS_ABOVE:
        return _to_assignment_on_arrays(group, state, totals, owner)
    assigned: list[list[TopicPartition]] = [[] for _ in group.members]
    in_order = sorted(enumerate(state.topics), key=lambda e: java_order(e[1].name))
    for t, topic in in_order:
        placed = state.placed.get(t)
        if placed is not None:
            parts = map(itemgetter(1), topic.partitions)
            _each(list.append, map(assigned.__getitem__, placed), parts)
            continue
        for m in topic.subscribers:
            items = state.held.get((t, m))
            if not items:
                continue
            if len(items) == 1:
                assigned[m].append(items[0][1])
            else:
                assigned[m] += sorted(tp for _, tp in items)  # one topic: by partition number
    return Assignment.build(group.members, {m.id: assigned[i] for i, m in enumerate(group.members)})


def _to_assignment_on_arrays(
    group: Group,
    state: _State,
    totals: _MemberTotals | None = None,
    owner: NDArray[np.intp] | None = None,
) -> Assignment:
    """:func:`_to_assignment` without a Python step per partition: each partition's member in
    the order the assignment lists them (:class:`_MemberTotals`: topics as Java orders names,
    then by number), and a stable sort by member gives each member's partitions in that
    order (:func:`~lagassign.strategies.base.listed_by_owner`)."""
    totals = _MemberTotals(group) if totals is None else totals
    owner = totals.owners(state) if owner is None else owner
    tps, _ = keys_on_array(group, totals.start)  # as the totals list them
    return Assignment(listed_by_owner(group.members, tps, owner))


def catch_up_plan(
    group: Group,
    lags: Mapping[TopicPartition, int],
    capacity: Capacities,
    *,
    owners: Mapping[TopicPartition, str] | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    search_budget: int = DEFAULT_SEARCH_BUDGET,
    consuming: Mapping[TopicPartition, str] | None = None,
    handover_pause: float = DEFAULT_HANDOVER_PAUSE,
) -> Assignment:
    """The plan under which every member catches up soonest, or falls behind least.

    Member m with partitions S reads C_m msg/s (``capacity``) and has backlog L_m (their lag)
    and inflow I_m (their ``rate_in``). It catches up in T_m = L_m ÷ (C_m − I_m), or never when
    I_m ≥ C_m (:func:`lagassign.rates.catch_up_time`).

    A plan whose every member stays within T·C_m of weight ``lag + T × rate_in`` has
    L_m + T·I_m ≤ T·C_m, so every T_m ≤ T. Hence:

    1. **Start** at T₀ = Σ lag ÷ (Σ C − Σ rate_in), all members finishing together, which no
       plan beats: :func:`balance` with weights ``lag + T₀ × rate_in`` and speeds C.
    2. **Utilisation**, only if that plan leaves some member behind: minimise the largest
       I_m ÷ C_m (weights ``rate_in``). If some member still never catches up, no plan the
       search finds keeps every member ahead: this plan, where the group falls behind least,
       is the answer.
    3. **Rounds:** with T the largest T_m so far, weigh ``lag + T × rate_in`` again, and
       search from the plan so far as well as from the deterministic starts (it is within
       T·C_m at these weights): each round's plan is at least as good as the last, and a
       better one lowers T for the next (Dinkelbach's method for a largest ratio). Rounds
       end when T stops falling, after :data:`CATCH_UP_ROUNDS`, or once no plan can be
       :data:`CATCH_UP_PROVEN` sooner: the search's lower bound on the largest load
       (:func:`_load_bound`) at the weights of T ÷ (1 + CATCH_UP_PROVEN) is above that time
       (not where capacities are only shares, which count a member within its share as
       caught up whatever its load). They run twice: without
       restarts first, then on from where they ended with :data:`CATCH_UP_RESTARTS` times
       the restarts' budget, :data:`BEST_FIT_RESTARTS` times it more of restarts that
       pack members under T (:func:`_construct_best_fit`), and :data:`RUIN_RESTARTS` times it
       more of restarts that pack afresh only some members of the best plan so far
       (:func:`_construct_ruined`). Without the plan so far among a
       round's starts, a round whose fresh starts all ended above T ended the rounds there:
       on held-out groups the slowest member was left up to 3.2 times above the best plan
       found (docs/strategies.md). On
       groups above :data:`GLOBAL_CONSTRUCTION_LIMIT` partitions the start is the answer
       (there, a lag plan is one partition of thousands per member, and a round would double
       the time).

    Steps 1 and 3 search loads (L + T·I) ÷ C, whose change is only (C − I) ÷ C of the change
    of the catch-up time: near capacity their smallest step and the bound they stop within
    shrink with the tightest member's spare capacity, so that a step of CATCH_UP_STEP of T
    still counts.

    The counts are those of :func:`balance` in every step. Stickiness is judged on the
    catch-up time: the steps above plan afresh, and owned partitions then stay where they are
    if that keeps the slowest member's catch-up time within ``tolerance`` of the fresh plan's
    (or, in a group that falls behind whatever it is given, its largest utilisation within
    ``tolerance``). Staying is tried first with every owned partition kept (as far as the
    counts allow) and only the partitions nobody owns placed and exchanged, then moving owned
    partitions only until every member catches up within a time (:func:`_kept_state`: what
    a cooperative follow-up round needs, where the partitions withheld in the round before are
    owned by nobody); then by :func:`balance`'s sticky search; if neither is within, the
    fresh plan's holdings go to the members owning most of them (:func:`balance`), and if even
    that is slower, the fresh plan as it is.

    ``consuming``: what members still consume (on the cooperative protocol), partition ->
    member. A plan handing one of those partitions to another member leaves it unread for
    ``handover_pause`` seconds, a round; every plan above, the fresh one included, is judged
    with that pause (:meth:`_MemberTotals.handed_over`). The fresh plan, blind to it, may hand
    partitions to members near their capacity that then take far longer than planned, so the
    times :func:`_kept_state` is tried for rise by :data:`KEPT_LADDER` from the fresh plan's
    time without the pause to its time with it; at the first time the soonest plan so far is
    within, the last one tried within the tolerance of it is taken (a plan tried for a later
    time moves less). If none is within the tolerance, one that keeps more is taken
    when the fresh plan's pause makes it slower. The plan taken is then searched on the
    catch-up time with the pause itself (:func:`_settle_handovers`).

    Example: members a (capacity 100 msg/s) and b (50) share t-0 (lag 6,000, 40 msg/s in),
    t-1 (lag 6,000, 10 msg/s), t-2 (lag 0, 30 msg/s) and t-3 (lag 0, 10 msg/s). By lag alone
    a plan is even whenever each gets one lagging partition, and b may get t-0 with t-2: 70
    msg/s in on 50, never. T₀ = 12,000 ÷ (150 − 90) = 200 s weighs the partitions 14,000,
    8,000, 6,000 and 2,000; a [t-0, t-2] (20,000 ÷ 100) and b [t-1, t-3] (10,000 ÷ 50) both
    reach 200: a catches up in 6,000 ÷ (100 − 70) = 200 s, b in 6,000 ÷ (50 − 20) = 200 s, as
    soon as any plan could.
    """
    # Each partition's backlog and inflow, looked up once: on a million partitions every pass
    # over a dictionary keyed by partition costs a good part of a second.
    totals = _MemberTotals(group)
    inflow = [p.rate_in or 0.0 for p in totals.partitions]
    if isinstance(lags, GroupLags):
        # without a dictionary of them when it is not built
        owed, backlogs = totals.whole(lags.of(totals.partitions))
    else:
        backlog = list(map(lags.get, map(_tp, totals.partitions), itertools.repeat(0)))
        owed, backlogs = sum(backlog, 0.0), totals.column(backlog)
    speeds = capacity.by_member
    inflows = totals.column(inflow)
    shared = capacity.shared
    # under shares with rates measured over a known window, what each member's partitions are
    # read at decides whether its backlog is only in flight (rates.saturated)
    window = group.rate_window if shared else None
    reads = (
        totals.column([p.rate_out or 0.0 for p in totals.partitions])
        if window is not None
        else None
    )
    # One search budget for every plan below, the lag plan's: each spends what the ones
    # before it left (the restarts, restart_work, are each plan's own).
    work = _Work(search_budget)

    def rates() -> _Column:
        """rate_in per partition: the weights of the utilisation plan"""
        return _Column(totals, inflow)

    def weighed(horizon: float) -> _Column:
        """lag + horizon × rate_in, per partition (NumPy's arithmetic is Python's, a
        partition at a time: the same weights, to the last bit)"""
        return _Column(totals, backlogs + horizon * inflows)

    #: the plan judged last and its owners (:meth:`_MemberTotals.owners`): the plan taken is
    #: mostly the one judged last, and its owners list its assignment too
    judged: list[tuple[_State, NDArray[np.intp]]] = []

    def owner_of(plan: _State) -> NDArray[np.intp]:
        if not judged or judged[0][0] is not plan:
            judged[:] = [(plan, totals.owners(plan))]
        return judged[0][1]

    def listed(plan: _State) -> Assignment:
        return _to_assignment(group, plan, totals, owner_of(plan))

    def slowest(plan: _State) -> float:
        """the largest catch-up time (:func:`lagassign.rates.member_catch_up`, exactly)"""
        owner = owner_of(plan)
        read = totals.sum(owner, reads) if reads is not None else [0.0] * len(group.members)
        times = (
            catch_up_time(b, r, speeds[m.id], lower_bound=shared, reads=o, window=window)
            for m, b, r, o in zip(
                group.members,
                totals.sum(owner, backlogs),
                totals.sum(owner, inflows),
                read,
                strict=True,
            )
        )
        return max(times, default=0.0)

    def plan_for(
        weights: _Column,
        owned: Mapping[TopicPartition, str] | None = None,
        within: float = tolerance,
        restart_factor: int = 1,
        warm: _State | None = None,
        fit_under: float | None = None,
        min_gain: float = MIN_GAIN,
    ) -> _State:
        return _balanced_state(
            group,
            weights,
            owned,
            within,
            search_budget,
            speeds,
            work,
            restart_factor,
            warm,
            fit_under,
            min_gain,
        )

    def fine(spare_fraction: float) -> float:
        """The search's smallest step on weights ``lag + T × rate_in`` (a fraction of the
        largest load, as MIN_GAIN), for a member with ``spare_fraction`` (C − I) ÷ C of its
        capacity to spare: at most CATCH_UP_STEP of its catch-up time. Its load
        (L + T·I) ÷ C near T falls by only that fraction of what its catch-up time
        L ÷ (C − I) falls by: at 99.9% of capacity, MIN_GAIN of the load is a tenth of T, and
        on held-out groups that near capacity the search, and the bound it stops within,
        left the slowest member up to 25% above HiGHS's plan (docs/strategies.md, *Near
        capacity*)."""
        return min(MIN_GAIN, CATCH_UP_STEP * max(spare_fraction, LEAST_SPARE))

    def tightest(plan: _State) -> float:
        """the least fraction of its capacity a member of ``plan`` has to spare, of those
        below capacity (under shares a member at or above its share may count as caught up,
        and its time is then no catch-up time to refine)"""
        owner = owner_of(plan)
        return min(
            (
                (speeds[m.id] - i) / speeds[m.id]
                for m, i in zip(group.members, totals.sum(owner, inflows), strict=True)
                if speeds[m.id] > i
            ),
            default=1.0,
        )

    # Start from all members finishing together, a time no plan beats; only if that plan
    # leaves someone behind is the utilisation plan needed to tell whether anyone can keep up.
    # (sums from 0.0: compiled, a sum from the int 0 is taken for an int, and a float in it fails)
    readable = sum(speeds.values(), 0.0)
    # Weighed at a time T, a member's load (L + T·I) ÷ C is at most T exactly when it catches
    # up within it. (members all alike read plain totals: then the limit is T·C)
    alike = set(speeds.values())
    per = alike.pop() if len(alike) == 1 else 1.0
    spare = readable - sum(inflow, 0.0)
    together = owed / spare if spare > 0 else math.inf
    best_time = math.inf
    if math.isfinite(together):
        best = plan_for(weighed(together), min_gain=fine(spare / readable))
        best_time = slowest(best)
    if math.isinf(best_time):
        best = plan_for(rates())
        best_time = slowest(best)
    rounds = CATCH_UP_ROUNDS if len(totals.partitions) <= GLOBAL_CONSTRUCTION_LIMIT else 0
    scale = _scale(group, speeds)

    proven = False  # that no plan is CATCH_UP_PROVEN sooner than best_time
    checked = math.nan  # the best time that was last checked so
    for restart_factor in (0, CATCH_UP_RESTARTS) if rounds else ():
        for _ in range(rounds):
            if not 0 < best_time < math.inf:
                break  # falls behind whatever the search tried, or nothing to catch up on
            # (not under shares: a member within its share may count as caught up, whatever
            # its load)
            if not shared and best_time != checked:
                sooner = best_time / (1 + CATCH_UP_PROVEN)
                proven = _none_within(group, weighed(sooner), scale, per, sooner)
                checked = best_time
            if proven:
                break
            # searched from the plan so far too: it is within T·C_m at these weights, so the
            # round ends no worse, and lower wherever an exchange helps its slowest member
            # (and with restarts, best-fit ones too: does every member fit under T?)
            plan = plan_for(
                weighed(best_time),
                restart_factor=restart_factor,
                warm=best,
                fit_under=best_time,
                min_gain=fine(tightest(best)),
            )
            time = slowest(plan)
            if time >= best_time:
                break
            gained = time < best_time * (1 - CATCH_UP_GAIN)
            best, best_time = plan, time
            if not gained:
                break
    if owners:
        # Staying is judged by the catch-up time itself: near capacity, loads (L + T·I) ÷ C
        # within 5% of the fresh plan's can mean a catch-up time several times longer. And
        # every plan by its time with its handovers' pause (:meth:`_MemberTotals.handed_over`):
        # without it a cooperative follow-up round near the end of a drain, where catch-up
        # times are seconds, found a fresh plan a few percent better at every round, moved
        # partitions again, and never settled.
        current = totals.owners_of(group, consuming or {})

        def paused(plan: _State) -> float:
            return max(
                slowest(plan),
                totals.handed_over(
                    group.members,
                    owner_of(plan),
                    current,
                    backlogs,
                    inflows,
                    speeds,
                    handover_pause,
                ),
            )

        # (a group whose capacities are only shares judges catch-up otherwise: not searched)
        searched_on_time = handover_pause > 0 and not shared and bool((current >= 0).any())

        def settled(plan: _State) -> Assignment:
            """``plan`` searched on the catch-up time with the pause priced: first with what
            members read now staying with them, then with all of it, kept only if that is
            sooner beyond the tolerance (each partition it takes from its reader withholds it
            for another round, and with any gain each follow-up round found one more: in
            bench/drain.py, rebalances of up to 50 rounds)"""
            if not searched_on_time:
                return listed(plan)
            capacities = [speeds[m.id] for m in group.members]
            budget = _Work(restart_work(len(totals.partitions)))
            args = (totals, current, backlogs, inflows, capacities, handover_pause, budget)
            _settle_handovers(plan, *args, withholding=False)
            judged.clear()  # the plan has changed
            staying = paused(plan)
            made = _settle_handovers(plan, *args, withholding=True)
            judged.clear()
            if made and paused(plan) * (1 + tolerance) > staying:
                _undone(plan, made)
                judged.clear()
            return listed(plan)

        weights = rates() if math.isinf(best_time) else weighed(best_time)
        fresh_time = paused(best)
        allowed = fresh_time * (1 + tolerance)
        tried: list[tuple[float, _State]] = []
        if 0 < allowed < math.inf:
            # The fresh plan ignores what members own, and handed over to members near their
            # capacity its partitions can take far longer than it planned; what keeps more may
            # do better than it by far. So the times tried rise from the fresh plan's own,
            # pause aside, to its time with the pause, and the first time the soonest plan so
            # far is within, the last plan tried within the tolerance of that one is taken: a
            # plan tried for a later time moves less (taking the soonest, the follow-up rounds
            # of bench/drain.py's twofold volumes #4 moved two partitions back and forth
            # between the same two members, each round the mirror of the last: 15 rounds).
            rung = best_time * (1 + tolerance) if best_time > 0 else allowed
            while True:
                rung = min(rung, allowed)
                kept = _kept_state(group, weighed(rung), owners, speeds, work, rung * per)
                tried.append((paused(kept), kept))
                soonest = min(map(itemgetter(0), tried))
                if soonest <= rung:
                    within = min(rung, soonest * (1 + tolerance))
                    near = (k for t, k in reversed(tried) if t <= within)
                    return settled(next(near))
                if rung >= allowed:
                    break
                rung *= KEPT_LADDER
        for within in (tolerance, 0.0):  # the second: the fresh plan's holdings to their owners
            kept = plan_for(weights, owners, within)
            tried.append((paused(kept), kept))
            if tried[-1][0] <= allowed:
                return settled(kept)
        # none within the tolerance: the fresh plan, unless its handovers' pause makes one
        # that keeps more sooner (the first of the least time)
        time, kept = min(tried, key=itemgetter(0), default=(math.inf, best))
        if fresh_time > best_time and time < fresh_time:
            return settled(kept)
        return settled(best)
    return listed(best)


class _MemberTotals:
    """Members' totals of a value per partition (backlog, inflow) under a plan still in its
    :class:`_State`, without a dictionary look-up per partition (on a million partitions, each
    pass of look-ups took most of a second).

    ``partitions`` is the order in which :func:`_to_assignment` lists a member's partitions
    (topics as Java orders names, then by number); a plan's totals add each member's values in
    that order, so they are exactly the sums over its assignment
    (:func:`lagassign.rates.member_catch_up`), to the last bit.
    """

    def __init__(self, group: Group) -> None:
        self.members = len(group.members)
        self.partitions: list[Partition] = []
        #: topic -> where its partitions start in ``partitions``, and each number's place
        #: among them (None when they are numbered 0, 1, 2, …: the number is the place)
        self.start: dict[str, tuple[int, dict[int, int] | None]] = {}
        for name in sorted(group.topics, key=java_order):
            # a Topic keeps its partitions in number order, each number once: numbered 0 to
            # n - 1 when the first is 0 and the last n - 1
            numbered = group.topics[name].partitions
            n = len(numbered)
            dense = not n or (numbered[0].partition, numbered[-1].partition) == (0, n - 1)
            place = None if dense else {p.partition: i for i, p in enumerate(numbered)}
            self.start[name] = (len(self.partitions), place)
            self.partitions += numbered

    def column(self, values: Sequence[float]) -> NDArray[np.float64]:
        """``values`` (one per partition, in the order of ``partitions``) as an array"""
        import numpy as np  # here: it takes a while to load, most assignments never get here

        # each made a float as np.array(values, dtype=float) makes it, a third sooner
        return np.fromiter(values, dtype=float, count=len(values))

    def whole(self, lags: Sequence[int]) -> tuple[float, NDArray[np.float64]]:
        """``sum(lags, 0.0)`` of ``lags`` (whole numbers, one per partition, as :meth:`column`
        takes them) and their column, read as 64-bit ints where they fit: these become the
        floats Python's ints become, added in the same order (:func:`_added`), where a million
        Python ints made floats one at a time took twice as long."""
        import numpy as np

        try:
            ints = np.fromiter(lags, dtype=np.int64, count=len(lags))
        except OverflowError:
            return sum(lags, 0.0), self.column(lags)
        floats = ints.astype(np.float64)
        return _added(floats), floats

    def owners(self, state: _State) -> NDArray[np.intp]:
        """Each partition's member (its index) under ``state``; -1 where nobody reads it"""
        import numpy as np

        owner: NDArray[np.intp] = np.full(len(self.partitions), -1, dtype=np.intp)
        for t, topic in enumerate(state.topics):
            placed = state.placed.get(t)
            start, place = self.start[topic.name]
            if placed is not None and len(topic.places) == len(placed):
                # a topic keeps its partitions in number order (model.Topic), as ``partitions``
                # lists them: a partition's place in it is its place here
                places = np.asarray(topic.places, dtype=np.intp) + start
                made = state.places_of.get(t)
                if made is None:
                    owner[places] = placed
                else:
                    # each member's place among the topic's, as the construction on arrays
                    # left them: no list of members to read into an array (a million, 70 ms)
                    place_of = np.asarray(made)
                    holders = np.flatnonzero(place_of >= 0)
                    owner[places[place_of[holders]]] = holders
                continue
            if placed is not None:
                members, items = placed, topic.partitions
            else:
                members, items = [], []
                for m in topic.subscribers:
                    held = state.held.get((t, m), ())
                    members += [m] * len(held)
                    items += held
            numbers = list(map(attrgetter("partition"), map(itemgetter(1), items)))
            if place is not None:
                numbers = [place[n] for n in numbers]
            owner[np.array(numbers, dtype=np.intp) + start] = members
        return owner

    def owners_of(self, group: Group, owners: Mapping[TopicPartition, str]) -> NDArray[np.intp]:
        """Each partition's member (its index in ``group``) by ``owners``; -1 where nobody of
        ``group`` owns it"""
        import numpy as np

        index = {m.id: i for i, m in enumerate(group.members)}
        owner: NDArray[np.intp] = np.full(len(self.partitions), -1, dtype=np.intp)
        for tp, member_id in owners.items():
            m = index.get(member_id)
            at = self.place(tp)
            if m is not None and at >= 0:
                owner[at] = m
        return owner

    def place(self, tp: TopicPartition) -> int:
        """``tp``'s place in ``partitions``; -1 if it is not one of them"""
        found = self.start.get(tp.topic)
        if found is None:
            return -1
        start, place = found
        at = start + (tp.partition if place is None else place.get(tp.partition, -1))
        return at if start <= at < len(self.partitions) and self.partitions[at].tp == tp else -1

    def handed_over(
        self,
        members: Sequence[Member],
        owner: NDArray[np.intp],
        current: NDArray[np.intp],
        backlogs: NDArray[np.float64],
        inflows: NDArray[np.float64],
        speeds: Mapping[str, float],
        pause: float,
    ) -> float:
        """The latest any member of a plan (``owner``: its :meth:`owners`) catches up with what
        is handed to it: a partition that it gives to another member than the one owning it now
        (``current``, from :meth:`owners_of`) is not read for ``pause`` seconds, for under the
        cooperative protocol its owner revokes it only at the end of this round and its new
        member gets it in the follow-up round. 0 when nothing with backlog or inflow is handed
        over.

        A member of capacity C given partitions of backlog L and inflow I, of which those handed
        over hold L_h and I_h, reads the others at C during the pause, then all of them at
        C − I. If the others keep it busy through the pause, the pause costs it nothing: it is
        done at L ÷ (C − I), as without a handover. Otherwise what is left after the pause is
        what the handed partitions hold then, L_h + pause × I_h, and it is done at
        pause + (L_h + pause × I_h) ÷ (C − I): the later of the two, never if I ≥ C.

        The member's whole inflow slows it after the pause, not the handed partitions' alone:
        priced by those (pause + L_h ÷ (C − I_h)), a member near its capacity given a partition
        without lag looked done when the pause ends, and a cooperative follow-up round near the
        end of a drain swapped the partition withheld in the round before, grown while unread,
        for another one to withhold, and each round mirrored the last
        (tests/data/storm)."""
        import numpy as np

        handed = np.where((current >= 0) & (owner >= 0) & (current != owner), owner, -1)
        if pause <= 0 or not (handed >= 0).any():
            return 0.0
        latest = 0.0
        for m, backlog, inflow, total in zip(
            members,
            self.sum(handed, backlogs),
            self.sum(handed, inflows),
            self.sum(owner, inflows),
            strict=True,
        ):
            latest = max(latest, _after_handover(backlog, inflow, total, speeds[m.id], pause))
        return latest

    def sum(self, owner: NDArray[np.intp], column: NDArray[np.float64]) -> list[float]:
        """Each member's total of ``column`` (see :meth:`column`) under ``owner`` (see
        :meth:`owners`), added in the order of ``partitions``: NumPy's bincount adds its weights
        one after the other, as Python's sum does"""
        import numpy as np

        read = owner >= 0
        totals = np.bincount(owner[read], weights=column[read], minlength=self.members)
        return totals.tolist()  # type: ignore[no-any-return]


class _Column:
    """A weight per partition in the order of a :class:`_MemberTotals`' ``partitions``, read
    by :func:`_topics` a topic at a time, as a slice (a :class:`~lagassign.model.Topic` keeps
    its partitions in number order, as ``partitions`` lists them): no dictionary of a million
    weights, no look-up per partition.

    ``values``: Python numbers, or float64 (whose every value is a Python float, exactly):
    a topic ordered on an array takes its slice as it is, where a million floats made into
    Python numbers and back took a tenth of a second."""

    def __init__(self, totals: _MemberTotals, values: list[float] | NDArray[np.float64]) -> None:
        self.totals, self.values = totals, values

    def of(self, topic: str, partitions: Sequence[Partition]) -> list[float] | NDArray[np.float64]:
        """The weights of ``partitions``, the group's partitions of ``topic``, in their order"""
        start = self.totals.start[topic][0]
        return self.values[start : start + len(partitions)]


#: what a plan weighs partitions by: a weight per partition, by key or as a column
_Weights = Mapping[TopicPartition, float] | _Column


@register
class BalancedAssignor(Strategy):
    name = "balanced"
    # Eager by default; under the cooperative protocol the adapters withhold what changes
    # owner for a round (lagassign.strategies.cooperative), as Kafka's protocol requires.
    protocols = (RebalanceProtocol.EAGER, RebalanceProtocol.COOPERATIVE)
    uses_lag = True
    # NumPy above ARRAYS_ABOVE partitions; SciPy's matching when the fresh plan's holdings go
    # to their owners (_handed_to_owners): importing scipy.optimize takes about half a second
    imported_on_use = ("numpy", "scipy.optimize")

    def __init__(
        self,
        *,
        sticky: bool = True,
        tolerance: float = DEFAULT_TOLERANCE,
        rate_aware: bool | None = None,
        search_budget: int = DEFAULT_SEARCH_BUDGET,
        handover_pause: float = DEFAULT_HANDOVER_PAUSE,
    ) -> None:
        """``rate_aware``: weigh partitions by lag plus produce rate over the drain horizon
        (:mod:`lagassign.rates`); ``None`` (default) does so when any partition has a rate.
        ``handover_pause``: seconds a partition changing owner goes unread, what a time-aware
        sticky plan prices each handover at (:func:`catch_up_plan`)."""
        if tolerance < 0:
            raise ValueError(f"tolerance must not be negative, got {tolerance}")
        if not 0 <= handover_pause < math.inf:
            raise ValueError(f"handover_pause must be a non-negative number, got {handover_pause}")
        self.handover_pause = handover_pause
        self.sticky = sticky
        self.tolerance = tolerance
        self.rate_aware = rate_aware
        self.search_budget = search_budget

    def weights(
        self, group: Group, lags: Mapping[TopicPartition, int] | None = None
    ) -> Mapping[TopicPartition, float]:
        """What the lag objective weighs: lags, or with rates and no capacity known, lag plus
        what producers write over the drain horizon (:func:`lagassign.rates.drain_weights`).
        ``lags``: the group's (:func:`lagassign.lag_rules.group_lags`), if known."""
        lags = group_lags(group) if lags is None else lags
        if self.rate_aware is False or not has_rates(group):
            return lags  # ints are weights as they are
        return drain_weights(group, lags)

    def capacities(
        self, group: Group, lags: Mapping[TopicPartition, int] | None = None
    ) -> Capacities | None:
        """Members' capacities when the plan is for catch-up time (:func:`catch_up_plan`):
        the group has produce rates and its members' capacities can be told or estimated
        (:func:`lagassign.rates.capacities`); None when the plan is for lag."""
        if self.rate_aware is False:
            return None
        return planning_capacities(group, group_lags(group) if lags is None else lags)

    def assign(self, group: Group) -> Assignment:
        with collector_paused():
            return self._assign(group, None)

    def target(self, group: Group, consuming: Group) -> Assignment:
        """The plan of :meth:`assign`, with what members still consume known: a time-aware
        plan prices handing one of those partitions to another member by the round it goes
        unread (:func:`catch_up_plan`'s ``consuming``). Eager members consume nothing while
        the group rebalances, so for them it is :meth:`assign`'s plan."""
        with collector_paused():
            return self._assign(group, consuming.current_owners())

    def _assign(self, group: Group, consuming: Mapping[TopicPartition, str] | None) -> Assignment:
        owners = group.current_owners() if self.sticky else None
        if self.rate_aware is False or not has_rates(group):
            # a plan for lag: each topic's lags are read as its partitions are, no dictionary
            plan = _balanced_state(group, None, owners, self.tolerance, self.search_budget, None)
            return _to_assignment(group, plan)
        # once, and as a dictionary only if something looks lags up by partition: on a
        # million partitions that takes a good part of a second
        lags = GroupLags(group)
        capacity = self.capacities(group, lags)
        if capacity is not None:
            return catch_up_plan(
                group,
                lags,
                capacity,
                owners=owners,
                tolerance=self.tolerance,
                search_budget=self.search_budget,
                consuming=consuming,
                handover_pause=self.handover_pause,
            )
        return balance(
            group,
            self.weights(group, lags),
            owners=owners,
            tolerance=self.tolerance,
            search_budget=self.search_budget,
        )
