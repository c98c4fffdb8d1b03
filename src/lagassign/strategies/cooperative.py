"""The cooperative rebalance protocol (KIP-429) for any strategy, written once.

Under the cooperative protocol members keep consuming what they own while the group
rebalances. A partition may therefore go to a new member only after the member holding it has
let it go. The leader computes the assignment it wants (the *target*) and leaves out, for this
round, every partition the target hands from its holder to another member: the holder sees it
missing from its assignment and revokes it, its revocation makes it rejoin, and in that
follow-up rebalance nobody holds the partition any more, so the target's member gets it.

Who holds a partition comes from the members' owned partitions and the generation they were
assigned in. The newest claim is the one that counts: a member of an older generation that
still lists a partition has been replaced as its owner, and it stops consuming it as soon as
it learns of the newer generation. Several members claiming a partition in the same newest
generation may all be consuming it; then it is withheld from every one of them, so that all
revoke it before it is assigned again.

A strategy supports the cooperative protocol in one of two ways (``Strategy.protocols``):

* it prefers the eager protocol and supports the cooperative one: its ``assign`` returns the
  target, and :func:`assign_cooperatively` withholds by the rule above (``balanced``);
* it prefers the cooperative protocol: its ``assign`` already withholds, by rules of its own
  (``cooperative-sticky`` follows Kafka's ``CooperativeStickyAssignor`` to the partition), and
  is used as it is.

Example: ``a`` owns t-0, t-1, t-2 and t-3 in generation 4 and ``b`` joins. The target is
``a`` [t-0, t-1], ``b`` [t-2, t-3]. This round ``a`` gets [t-0, t-1] and ``b`` nothing; ``a``
revokes t-2 and t-3, and the follow-up rebalance, in which ``a`` owns [t-0, t-1], gives ``b``
[t-2, t-3].
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from lagassign.model import Assignment, Group, Member, TopicPartition
from lagassign.strategies.base import RebalanceProtocol, Strategy

#: the generation of a member that reports none, as in Kafka
_NO_GENERATION = -1


def withholds_itself(strategy: Strategy) -> bool:
    """Whether ``strategy.assign`` already leaves out the partitions in flight: it prefers the
    cooperative protocol (``cooperative-sticky``)."""
    return strategy.protocols[0] is RebalanceProtocol.COOPERATIVE


def holders(members: Iterable[Member]) -> dict[TopicPartition, frozenset[str]]:
    """The members that may be consuming each owned partition: its claimants of the newest
    generation that claims it."""
    newest: dict[TopicPartition, tuple[int, set[str]]] = {}
    for m in members:
        generation = _NO_GENERATION if m.generation is None else m.generation
        for tp in m.owned:
            seen = newest.get(tp)
            if seen is None or generation > seen[0]:
                newest[tp] = (generation, {m.id})
            elif generation == seen[0]:
                seen[1].add(m.id)
    return {tp: frozenset(ids) for tp, (_, ids) in newest.items()}


def in_flight(
    members: Iterable[Member], target: Mapping[str, Iterable[TopicPartition]]
) -> set[TopicPartition]:
    """The partitions ``target`` gives to a member other than the one holding them."""
    held = holders(members)
    return {
        tp
        for mid, tps in target.items()
        for tp in tps
        if (by := held.get(tp)) is not None and by != {mid}
    }


def withhold(
    members: Sequence[Member],
    target: Mapping[str, Iterable[TopicPartition]],
    moving: Collection[TopicPartition],
) -> Assignment:
    """``target`` without ``moving``: this round's assignment under the cooperative protocol.

    ``moving`` is what :func:`in_flight` finds, or what a strategy with rules of its own
    decided is in flight; every member of ``members`` is listed, the order of each member's
    partitions kept.
    """
    return Assignment.build(
        members, {mid: [tp for tp in tps if tp not in moving] for mid, tps in target.items()}
    )


def assign_cooperatively(strategy: Strategy, group: Group) -> Assignment:
    """What ``strategy`` assigns ``group`` this round under the cooperative protocol."""
    if RebalanceProtocol.COOPERATIVE not in strategy.protocols:
        raise ValueError(f"strategy {strategy.name!r} does not support the cooperative protocol")
    target = strategy.assign(group)
    if withholds_itself(strategy):
        return target
    return withhold(group.members, target.partitions, in_flight(group.members, target.partitions))
