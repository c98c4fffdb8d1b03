"""The one interface every strategy implements."""

from __future__ import annotations

import enum
import itertools
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

# Re-exported for bench/quality.py's and bench/cost.py's `--before REV`, which run `balanced`
# as it was at REV against today's modules: revisions before lagassign/collector.py import it
# from here.
from lagassign.collector import collector_paused as collector_paused
from lagassign.model import Assignment, Group, Member, TopicPartition

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


class RebalanceProtocol(enum.Enum):
    """How members hand partitions over, as in Kafka's ``ConsumerPartitionAssignor``.

    EAGER: every member revokes everything before the new assignment.
    COOPERATIVE: members keep what they own; a partition that changes owner is withheld from
    the new owner for one round, until the old owner has revoked it.
    """

    EAGER = "eager"
    COOPERATIVE = "cooperative"


class Strategy(ABC):
    """Assigns every partition of the topics a group subscribes to its members.

    ``assign`` is pure: it reads the group (members, subscriptions, owned partitions, lag or
    offsets) and returns an :class:`Assignment` listing every member. Implementations keep no
    state between calls.
    """

    #: the protocol name on the wire; also the registry name
    name: ClassVar[str]
    #: protocols the strategy supports, preferred first
    protocols: ClassVar[tuple[RebalanceProtocol, ...]] = (RebalanceProtocol.EAGER,)
    #: whether ``assign`` itself leaves out the partitions changing owner (cooperative-sticky,
    #: by Kafka's rules); otherwise a strategy that supports the cooperative protocol computes
    #: the target and :mod:`lagassign.strategies.cooperative` withholds
    withholds_moving: ClassVar[bool] = False
    #: whether the strategy reads partition lag (the adapters fetch offsets only then)
    uses_lag: ClassVar[bool] = False
    #: modules ``assign`` imports only when a group needs them, slow to load (NumPy for large
    #: groups, SciPy's matching): a consumer imports them ahead of its first rebalance
    #: (:class:`lagassign.kafka.group.GroupAssignor`), not in its leader's ``assign()``
    imported_on_use: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def assign(self, group: Group) -> Assignment: ...

    def target(self, group: Group, consuming: Group) -> Assignment:
        """What ``assign`` would give ``group`` in a round of the cooperative protocol, where
        members go on reading what they still consume (``consuming``: ``group`` with each
        member's ``owned`` what it still consumes, from the owned-partitions field) and a
        partition changing owner is withheld for a round
        (:func:`lagassign.strategies.cooperative.assign_cooperatively`). A strategy that
        weighs what a handover costs overrides it (``balanced``); by default, ``assign``."""
        return self.assign(group)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def each(function: Callable[..., object], *arguments: Iterable[object]) -> None:
    """``function`` on each set of ``arguments``, in order, at C speed: the loops over every
    partition of a million-partition group run a good part of a second in Python."""
    deque(map(function, *arguments), maxlen=0)


def subscribers_by_topic(members: Sequence[Member], topics: Iterable[str]) -> dict[str, list[int]]:
    """For each of ``topics``, the positions in ``members`` of the members subscribing it, in
    order. Members of the same subscriptions are looked at once per topic, not one by one (a
    million checks on 500 topics and 2,000 members), so topics read by the same members share
    one list: read it, do not change it."""
    kinds = list(dict.fromkeys(m.topics for m in members))
    readers: dict[tuple[bool, ...], list[int]] = {}
    found = {}
    for name in topics:
        key = tuple(name in kind for kind in kinds)
        if key not in readers:
            readers[key] = [i for i, m in enumerate(members) if name in m.topics]
        found[name] = readers[key]
    return found


def hottest_first(weights: Sequence[float]) -> list[int]:
    """The positions of ``weights`` in decreasing weight, equal weights in their order (Python's
    sort is stable, reversed too). Sorting positions by weight makes no object per partition,
    as sorting (weight, partition) pairs would: a good part of a tenth of a second on a
    million partitions."""
    return sorted(range(len(weights)), key=weights.__getitem__, reverse=True)


# -- on arrays -------------------------------------------------------------------------------
# Large groups (hundreds of thousands of partitions) are ordered and listed on NumPy arrays: the
# same results, without a Python step per partition. NumPy is imported where it is used: it
# takes a while to load, and small groups never need it.


def hottest_first_on_array(weights: NDArray[Any]) -> NDArray[np.intp]:
    """:func:`hottest_first` of ``weights``, ints or floats that are not NaN, on an array (a
    million weights sorted in Python took a sixth of a second, in NumPy 30 ms)."""
    import numpy as np

    n = len(weights)
    if weights.dtype.kind == "i" and n and weights.min() >= 0 and (
        weights.max() <= (2**63 - n) // n
    ):
        # each weight and its place in one whole number, all different: weight × n + places
        # from the end, in increasing order and read backwards
        return np.argsort(weights * n + np.arange(n - 1, -1, -1))[::-1]
    # the weights backwards in increasing order, read backwards
    return (n - 1) - stable_order(weights[::-1])[::-1]


def stable_order(values: NDArray[Any]) -> NDArray[np.intp]:
    """``np.argsort(values, kind="stable")`` (equal values in their order) of values that are
    not NaN, sooner: NumPy's default sort is several times faster than its stable one, and when
    no two values are equal every sort gives that order. When some are (loads of members in the
    construction on arrays mostly are), each place is ordered by its value's rank among the
    distinct values, then by the place itself: one whole number each, all different, sorted by
    the default sort again (2,000 floats: 80 µs, where the stable sort after the first took
    150)."""
    import numpy as np

    order: NDArray[np.intp] = np.argsort(values)
    ordered = values[order]
    rises = ordered[1:] != ordered[:-1]
    if rises.all():
        return order
    n = len(values)
    rank = np.concatenate((np.zeros(1, dtype=np.intp), np.cumsum(rises, dtype=np.intp)))
    return np.sort(rank * n + order) % n


def keys_on_array(
    group: Group, names: Iterable[str]
) -> tuple[NDArray[np.object_], dict[str, int]]:
    """The keys of the partitions of the topics ``names``, in that order (each topic's in
    number order) on an array, and where each topic's start there. Read from the group's
    index (:meth:`Group.partition_keys`), not partition by partition; and in the order an
    assignment lists them, so that listing a member's partitions reads the array forwards
    (:func:`listed_by_owner`: twice as fast as reading it in the group's order)."""
    import numpy as np

    sizes = [len(topic.partitions) for topic in group.topics.values()]
    where = dict(zip(group.topics, itertools.accumulate(sizes, initial=0), strict=False))
    keys = np.fromiter(group.partition_keys(), dtype=object, count=sum(sizes))
    starts: dict[str, int] = {}
    pieces: list[NDArray[np.object_]] = []
    at = 0
    for name in names:
        starts[name] = at
        at += len(group.topics[name].partitions)
        pieces.append(keys[where[name] : where[name] + at - starts[name]])
    return (np.concatenate(pieces) if pieces else keys[:0]), starts


def listed_by_owner(
    members: Sequence[Member],
    tps: NDArray[np.object_],
    owner: NDArray[np.integer[Any]],
    picks: NDArray[np.integer[Any]] | None = None,
) -> dict[str, tuple[TopicPartition, ...]]:
    """Each of ``members``' partitions, by member id, in order: the k-th partition listed is
    ``tps[picks[k]]`` (``tps[k]`` without ``picks``) and goes to ``members[owner[k]]``, to
    nobody where ``owner[k]`` is -1. A stable sort by owner puts each member's partitions
    together in the order listed."""
    import numpy as np

    n = len(members)
    counts = np.bincount(owner[owner >= 0], minlength=n).tolist()
    # small whole numbers sort by radix: a million in milliseconds; nobody's (-1) sorts last
    key = owner.astype(np.uint16) if n < 2**16 else np.where(owner < 0, n, owner)
    in_order = np.argsort(key, kind="stable")
    del key
    taken = in_order if picks is None else picks[in_order]
    del in_order
    assigned = {}
    end = 0
    for member, count in zip(members, counts, strict=True):
        start, end = end, end + count
        # A member's partitions lie all over memory, and touching each (its reference count)
        # is most of the time here: NumPy's take touches them in a loop of its own, several
        # at once, 2-3 times as fast as a Python call per partition; the tuple is then made
        # of partitions just touched.
        assigned[member.id] = tuple(tps.take(taken[start:end]).tolist())
    return assigned
