"""The lag-based assignor of the seed (grantneale/kafka-lag-based-assignor, KAFKA-5337).

Each topic is assigned on its own. Its partitions are taken in decreasing lag (equal lag: the
lower partition number first) and each goes to the subscribed member that has, for this topic,

1. the fewest partitions, then
2. the least total lag, then
3. the smallest member id (``String.compareTo`` order).

The counters start at zero for every topic, so a member's load on other topics plays no part:
this is what makes the seed's output reproducible topic by topic, and what :mod:`balanced`
improves on.

Example (seed 000): members C0 and C1 subscribe t0, whose partitions have lag
p0 = 100,000, p1 = 50,000, p2 = 60,000.

* p0 (100,000): both members have 0 partitions and 0 lag; C0 wins on id.
* p2 (60,000): C1 has fewer partitions.
* p1 (50,000): both have 1 partition; C1 has less lag (60,000 < 100,000).

Result: C0 [t0p0] with lag 100,000; C1 [t0p2, t0p1] with lag 110,000. Kafka's range assignor
gives C0 [t0p0, t0p1] (160,000) and C1 [t0p2] (50,000).

The Java original is eager only, sends no user data and is not sticky; neither is this.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from lagassign.collector import collector_paused
from lagassign.java_ordering import java_order
from lagassign.lag_rules import topic_lags, topic_lags_on_array
from lagassign.model import Assignment, Group, Member, Topic, TopicPartition
from lagassign.strategies.base import (
    Strategy,
    each,
    hottest_first,
    hottest_first_on_array,
    keys_on_array,
    listed_by_owner,
    subscribers_by_topic,
)
from lagassign.strategies.registry import register

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    #: whole numbers, in a list or on an array
    _Whole = Sequence[int] | NDArray[np.integer[Any]]

#: from this many partitions on, topics are ordered and the assignment listed on arrays
#: (:class:`_OnArrays`): the same assignment, without a Python step per partition (a million
#: partitions: 0.52 -> 0.30 s). The first such group of a process also loads NumPy, some
#: 0.15 s, which a first call wins back only from about 650,000-800,000 partitions (scaled
#: from the million's saving); with NumPy loaded already, smaller groups gain too. The
#: threshold between is a choice, not a measured break-even.
ARRAYS_FROM = 200_000


@register
class LagAssignor(Strategy):
    name = "lag"
    uses_lag = True

    def assign(self, group: Group) -> Assignment:
        with collector_paused():
            return self._assign(group)

    def _assign(self, group: Group) -> Assignment:
        by_id = sorted(group.members, key=lambda m: java_order(m.id))
        names = sorted(group.topics, key=java_order)
        readers = subscribers_by_topic(by_id, names)
        read = [name for name in names if readers[name]]
        size = sum(len(group.topics[name].partitions) for name in read)
        listing = _OnArrays(group, by_id, read, size) if size >= ARRAYS_FROM else _InLists(by_id)
        for name in read:
            subscribers = readers[name]
            lags, order = listing.topic(group.topics[name], group.auto_offset_reset, subscribers)
            listing.give(_rounds(subscribers, lags, order))
        return Assignment.build(group.members, listing.assigned())


def _rounds(
    subscribers: list[int], lags: _Whole, order: _Whole
) -> Iterator[tuple[list[int], _Whole]]:
    """The seed's rule on one topic, a round at a time: the subscribers (positions, in id
    order) in the order they take, and the partitions (places in ``lags``) they take, hottest
    first (``order``); the last round's may be fewer, and go to the first in rank.

    Fewest partitions comes first, so the partitions go out in rounds: each round gives every
    subscriber one, in order of (lag so far, id) as the round starts, because a member that
    has taken its partition of the round cannot win again until all the others have. Sorting
    once per round replaces a choice per partition."""
    n = len(subscribers)
    yield subscribers, order[:n]  # the first round: no lag yet, by id
    if len(order) <= n:
        return
    load = dict.fromkeys(subscribers, 0)
    ranked = subscribers
    for start in range(n, len(order), n):
        for winner, i in zip(ranked, order[start - n : start], strict=True):
            load[winner] += lags[i]
        ranked = sorted(subscribers, key=load.__getitem__)  # stable: ties by id
        yield ranked, order[start : start + n]


class _InLists:
    """The assignment as it is made: a list per member, each partition appended to it."""

    def __init__(self, members: Sequence[Member]) -> None:
        self.members = members
        self.lists: list[list[TopicPartition]] = [[] for _ in members]
        self.tps: list[TopicPartition] = []

    def topic(
        self, topic: Topic, auto_offset_reset: str, subscribers: list[int]
    ) -> tuple[_Whole, _Whole]:
        """The next topic's lags and their order, hottest first (equal lags: the lower
        partition number first; the sort is stable)"""
        self.tps = list(map(_tp, topic.partitions))
        lags = topic_lags(topic.partitions, auto_offset_reset)
        return lags, hottest_first(lags)

    def give(self, rounds: Iterable[tuple[list[int], _Whole]]) -> None:
        """Each round's partitions to its takers, in order (:func:`_rounds`)"""
        for ranked, chunk in rounds:
            each(list.append, map(self.lists.__getitem__, ranked), map(self.tps.__getitem__, chunk))

    def assigned(self) -> Mapping[str, Sequence[TopicPartition]]:
        return {m.id: listed for m, listed in zip(self.members, self.lists, strict=True)}


class _OnArrays:
    """The assignment as :class:`_InLists` makes it, listed on arrays: who takes which
    partition, in the order they take them, and at the end a stable sort by member
    (:func:`~lagassign.strategies.base.listed_by_owner`). On 500 topics of 2,000 partitions
    and 2,000 members, the appends alone took a quarter of a second."""

    def __init__(
        self, group: Group, members: Sequence[Member], names: Sequence[str], size: int
    ) -> None:
        import numpy as np

        self.members = members
        #: the keys of the partitions of the topics ``names`` read, and where each topic's
        #: start among them
        self.tps, self.starts = keys_on_array(group, names)
        self.start = 0
        #: each partition given, in the order given: who takes it (a position in ``members``)
        #: and which it is (its place in ``tps``); 32 bits, for memory
        self.owner = np.empty(size, dtype=np.int32)
        self.picks = np.empty(size, dtype=np.int32)
        self.given = 0
        #: the subscribers of a topic (topics read by the same members share one list) and
        #: theirs as an array
        self.readers: dict[int, tuple[list[int], NDArray[np.int32]]] = {}

    def topic(
        self, topic: Topic, auto_offset_reset: str, subscribers: list[int]
    ) -> tuple[_Whole, _Whole]:
        import numpy as np

        self.start = self.starts[topic.name]
        if id(subscribers) not in self.readers:
            self.readers[id(subscribers)] = (subscribers, np.array(subscribers, dtype=np.int32))
        partitions = topic.partitions
        lags: Any = topic_lags_on_array(partitions, auto_offset_reset)
        if lags is None:  # lags beyond 64 bits, ordered in Python
            lags = topic_lags(partitions, auto_offset_reset)
            return lags, hottest_first(lags)
        order = hottest_first_on_array(lags)
        if len(partitions) > len(subscribers):
            # later rounds add lags up: as Python's ints, which do not overflow
            return lags.tolist(), order.tolist()
        return lags, order

    def give(self, rounds: Iterable[tuple[list[int], _Whole]]) -> None:
        for ranked, chunk in rounds:
            known = self.readers.get(id(ranked))
            given = slice(self.given, self.given + len(chunk))
            self.owner[given] = ranked[: len(chunk)] if known is None else known[1][: len(chunk)]
            self.picks[given] = chunk
            self.picks[given] += self.start
            self.given = given.stop

    def assigned(self) -> Mapping[str, Sequence[TopicPartition]]:
        return listed_by_owner(self.members, self.tps, self.owner, self.picks)


_tp = attrgetter("tp")
