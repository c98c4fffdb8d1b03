"""Kafka's sticky assignors: ``sticky`` (eager) and ``cooperative-sticky``.

Both follow ``AbstractStickyAssignor`` of kafka-clients 4.x: keep every partition a member owned
before as long as the assignment stays balanced, spread the rest evenly, and align partitions
with the member's rack when racks are known (KIP-881). The cooperative variant then withholds for
one round every partition that changes owner, so that its old owner can revoke it first.

The algorithm has two paths, chosen as Kafka chooses them, after the members' claims are
settled by generation (``sticky_builders/subscriptions.py``):

* all members subscribe to the same topics: the quota-based "constrained" path (linear time;
  ``sticky_builders/constrained.py``);
* otherwise: the "general" path, which assigns the free partitions to the least loaded
  subscriber and then moves partitions until no move improves the balance
  (``sticky_builders/general.py``).

Members' subscriptions are taken in group order, as our Java reference harness passes them (a
Kafka leader collects them in a ``HashMap``; that order shows only in how partitions claimed by
several members of one generation are settled). Where Kafka's result further depends on the
iteration order of a Java ``HashMap`` of members, we iterate members in the order such a map
filled in group order yields them (``String.hashCode`` buckets, see
:func:`lagassign.java_ordering.java_hashmap_order`). Kafka's other hash-ordered choices are
reproduced the same way: which of several moved partitions to move back first
(:class:`~lagassign.java_ordering.TopicPartitionHashSet`), and the order of an eager
member's previous assignment after its user data round trip (``grouped_by_topic`` in
``sticky_builders/subscriptions.py``). So the result, list order included, is kafka-clients
4.4's, except where Kafka goes wrong:

* On the general path Kafka moves a partition back to a claimant of an older generation
  without checking that it still subscribes to the topic, handing out a partition the member
  did not ask for (or failing when that member takes no part in the rebalancing); we leave
  such moves out.
* Kafka's "same subscriptions" check skips members without topics seen before the first member
  with topics, and may then give them partitions; we compare all subscriptions as they are.
* Kafka fails on a group without members; we return an empty assignment.
* Kafka remembers the highest generation seen in the assignor instance across rebalances; we
  keep no state, as a fresh assignor per rebalance does.
* Hash bins of eight or more colliding member ids or topic names in a table of 64 or more
  become trees in Java, whose order is not reproduced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lagassign.collector import collector_paused
from lagassign.model import Assignment, Group, Member, TopicPartition
from lagassign.strategies.base import RebalanceProtocol, Strategy
from lagassign.strategies.registry import register
from lagassign.strategies.sticky_builders.constrained import ConstrainedBuilder
from lagassign.strategies.sticky_builders.general import GeneralBuilder
from lagassign.strategies.sticky_builders.subscriptions import Racks, Subscriptions, resolve_owned


@dataclass
class _StickyResult:
    assignment: dict[str, list[TopicPartition]]
    #: partition -> its new owner, when it was owned by another member; None on the general path
    transferring: dict[TopicPartition, str] | None


def _sticky_assign(group: Group, *, eager: bool) -> _StickyResult:
    with collector_paused():
        return _sticky_assign_now(group, eager=eager)


def _sticky_assign_now(group: Group, *, eager: bool) -> _StickyResult:
    subs = Subscriptions.of(group, claims_from_user_data=eager)
    if not subs.order:
        return _StickyResult({}, {})
    racks = Racks(group, subs)
    owned = resolve_owned(subs)
    if subs.identical:
        builder = ConstrainedBuilder(subs, racks, owned)
        return _StickyResult(builder.build(), builder.transferring)
    return _StickyResult(GeneralBuilder(subs, racks, owned).build(), None)


def _moving_between_members(
    members: Sequence[Member], assignment: Mapping[str, list[TopicPartition]]
) -> dict[TopicPartition, str]:
    """Partitions assigned to a member that did not claim them while another member did."""
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for m in members:
        assigned = assignment[m.id]
        claimed = set(m.owned)
        added.update((tp, m.id) for tp in assigned if tp not in claimed)
        kept = set(assigned)
        revoked.update(tp for tp in m.owned if tp not in kept)
    return {tp: mid for tp, mid in added.items() if tp in revoked}


@register
class StickyAssignor(Strategy):
    """Kafka's ``sticky`` assignor: balanced, and keeps what each member owned where it can.

    A member's previous assignment comes from ``Member.owned`` and ``Member.generation`` (the
    user data a Kafka sticky member sends). When members claim the same partition the newest
    generation wins; two claims of the same generation cancel each other out.

    Identical subscriptions: with P partitions and N members, each member gets ``P // N`` or
    one more. Members keep owned partitions up to that (the lowest partition numbers first; a
    member at the upper quota only while fewer than ``P % N`` members are), and the partitions
    left over go round-robin to the members under quota, sorted by id. Different subscriptions:
    free partitions go to the least loaded subscriber, then partitions move from heavier to
    lighter subscribers until no move helps (see :class:`GeneralBuilder`).

    Example: topic ``t`` has six partitions; ``c1`` owns t-0 and t-3, ``c2`` t-1 and t-4, ``c3``
    t-2 and t-5. ``c2`` leaves. The quota becomes 3 each, so ``c1`` and ``c3`` keep what they
    own and take c2's partitions in turn: ``c1`` [t-0, t-3, t-1], ``c3`` [t-2, t-5, t-4]. Only
    the two partitions of the member that left move; range or round-robin would move four.

    With racks on members and partitions (KIP-881) owned partitions off the member's rack are
    given up, and free partitions go to members on their racks first, as long as the quotas
    allow.
    """

    name = "sticky"
    protocols = (RebalanceProtocol.EAGER,)

    def assign(self, group: Group) -> Assignment:
        return Assignment.build(group.members, _sticky_assign(group, eager=True).assignment)


@register
class CooperativeStickyAssignor(Strategy):
    """Kafka's ``cooperative-sticky`` assignor: the sticky assignment, minus partitions in flight.

    Members keep consuming what they own during a cooperative rebalance, so a partition may only
    go to a new member after its old owner has revoked it. This assignor computes the
    :class:`StickyAssignor` assignment and withholds, for this round, every partition that is
    handed to a member other than the one that owned it; the old owner sees it missing and
    revokes it, which triggers the follow-up rebalance that assigns it.

    Owned partitions come from ``Member.owned`` with ``Member.generation``. With identical
    subscriptions the owners are those of the sticky rules (newest generation wins, contested
    partitions are always withheld); otherwise every partition listed in another member's
    ``owned`` counts, whatever its generation, as Kafka does.

    Example: ``c1``, ``c2`` and ``c3`` own two partitions each of topic ``t`` (six partitions)
    and ``c4`` joins. The quotas become 2, 2, 1, 1: two of the old members keep both partitions,
    the third keeps one, and the partition it gives up goes to ``c4`` - but not yet: this round
    ``c4`` gets nothing. Once the owner has revoked it, the next rebalance gives it to ``c4``,
    and nothing else moves.
    """

    name = "cooperative-sticky"
    protocols = (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)
    withholds_moving = True

    def assign(self, group: Group) -> Assignment:
        result = _sticky_assign(group, eager=False)
        transferring = result.transferring
        if transferring is None:
            transferring = _moving_between_members(group.members, result.assignment)
        withheld: dict[str, set[TopicPartition]] = {}
        for tp, mid in transferring.items():
            withheld.setdefault(mid, set()).add(tp)
        assigned = {
            mid: [tp for tp in tps if tp not in withheld[mid]] if mid in withheld else tps
            for mid, tps in result.assignment.items()
        }
        return Assignment.build(group.members, assigned)
