"""The cooperative rebalance protocol (KIP-429) for any strategy, written once.

Under the cooperative protocol members keep consuming what they own while the group
rebalances. A partition may therefore go to a new member only after the member consuming it
has let it go. The leader computes the assignment it wants (the *target*) and leaves out, for
this round, every partition the target hands from a member still consuming it to another
member: that member sees it missing from its assignment and revokes it, its revocation makes it
rejoin, and in that follow-up rebalance nobody consumes the partition any more, so the target's
member gets it.

What a member still consumes is what it reports in the subscription's owned-partitions field,
as in Kafka: a member on the cooperative protocol lists there what it owns; a member on the
eager protocol revoked everything before it joined and lists nothing. (An eager member's
previous assignment may still reach the leader, in the assignor's user data, for stickiness:
that is ``Member.owned``, and it decides nothing here.) Several claims of one partition are
settled by generation (:func:`~lagassign.model.newest_claims`): a member of an older generation
that still lists a partition has been replaced as its owner, and it stops consuming it as soon
as it learns of the newer generation. Several members claiming a partition in the same newest
generation may all be consuming it; then it is withheld from every one of them, so that all
revoke it before it is assigned again.

The leader withholds whatever protocol it runs itself, because members of one group may run
different ones while they switch (Kafka's ``CooperativeStickyAssignor`` does the same): eager
members consume nothing at the time, so nothing is withheld for them.

A strategy supports the cooperative protocol in one of two ways:

* its ``target`` (``assign`` unless it weighs what a handover costs, as ``balanced`` does)
  returns the target and :func:`assign_cooperatively` withholds by the rule above
  (``balanced``);
* its ``assign`` already withholds by rules of its own (``Strategy.withholds_moving``:
  ``cooperative-sticky`` follows Kafka's ``CooperativeStickyAssignor`` to the partition); it
  then reads, as Kafka's does, only what members still consume, for stickiness too.

Example: ``a`` owns t-0, t-1, t-2 and t-3 in generation 4 and ``b`` joins. The target is
``a`` [t-0, t-1], ``b`` [t-2, t-3]. This round ``a`` gets [t-0, t-1] and ``b`` nothing; ``a``
revokes t-2 and t-3, and the follow-up rebalance, in which ``a`` owns [t-0, t-1], gives ``b``
[t-2, t-3].
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import NamedTuple

from lagassign.model import Assignment, Group, Member, TopicPartition, newest_claims
from lagassign.strategies.base import RebalanceProtocol, Strategy

#: what each member reports it still consumes (the owned-partitions field), by member id
Consuming = Mapping[str, Iterable[TopicPartition]]


class RebalanceRound(NamedTuple):
    """One round's assignment and the partitions it withholds because a member other than
    the one they go to still consumes them (none under a strategy that withholds nothing)."""

    assignment: Assignment
    withheld: frozenset[TopicPartition]


def in_flight(
    consuming: Iterable[Member], target: Mapping[str, Iterable[TopicPartition]]
) -> set[TopicPartition]:
    """The partitions ``target`` gives to a member other than the one consuming them.

    ``consuming``: the members, each with ``owned`` listing what it still consumes.
    """
    claims = newest_claims(consuming)
    return {
        tp
        for mid, tps in target.items()
        for tp in tps
        if (by := claims.get(tp)) is not None and by != {mid}
    }


def withhold(
    members: Sequence[Member],
    target: Mapping[str, Iterable[TopicPartition]],
    moving: Collection[TopicPartition],
) -> Assignment:
    """``target`` without ``moving``: this round's assignment under the cooperative protocol.

    ``moving`` is what :func:`in_flight` finds; every member of ``members`` is listed, the
    order of each member's partitions kept.
    """
    return Assignment.build(
        members, {mid: [tp for tp in tps if tp not in moving] for mid, tps in target.items()}
    )


def assign_cooperatively(
    strategy: Strategy, group: Group, consuming: Consuming | None = None
) -> RebalanceRound:
    """What ``strategy`` assigns ``group`` this round under the cooperative protocol.

    ``consuming``: what each member reports it still consumes; a member without an entry
    consumes nothing, and every partition must be one of ``group``'s. ``None``: every member
    still consumes its ``owned`` partitions (a group on the cooperative protocol).
    """
    if RebalanceProtocol.COOPERATIVE not in strategy.protocols:
        raise ValueError(f"strategy {strategy.name!r} does not support the cooperative protocol")
    current = group if consuming is None else _consuming(group, consuming)
    if strategy.withholds_moving:
        assignment = strategy.assign(current)
        # it assigns every partition of a subscribed topic but those it withholds
        subscribed = {t for m in group.members for t in m.topics}
        assigned = assignment.owners()
        withheld = frozenset(
            tp
            for tp in newest_claims(current.members)
            if tp.topic in subscribed and tp not in assigned
        )
        return RebalanceRound(assignment, withheld)
    target = strategy.target(group, current)
    moving = in_flight(current.members, target.partitions)
    if not moving:
        return RebalanceRound(target, frozenset())
    return RebalanceRound(withhold(group.members, target.partitions, moving), frozenset(moving))


def _consuming(group: Group, consuming: Consuming) -> Group:
    """``group`` with every member's ``owned`` replaced by what it still consumes."""
    members = tuple(
        dataclasses.replace(m, owned=tuple(consuming.get(m.id, ()))) for m in group.members
    )
    return dataclasses.replace(group, members=members)
