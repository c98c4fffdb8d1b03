"""The one interface every strategy implements."""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import ClassVar

# Re-exported for bench/quality.py's and bench/cost.py's `--before REV`, which run `balanced`
# as it was at REV against today's modules: revisions before lagassign/collector.py import it
# from here.
from lagassign.collector import collector_paused as collector_paused
from lagassign.model import Assignment, Group, Member


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
