"""The cooperative protocol's withholding (lagassign.strategies.cooperative), on random groups."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lagassign.model import Assignment, Group, Member, Partition, Topic, TopicPartition
from lagassign.strategies import RebalanceProtocol, create, names
from lagassign.strategies.balanced import BalancedAssignor
from lagassign.strategies.cooperative import (
    assign_cooperatively,
    holders,
    in_flight,
    withhold,
    withholds_itself,
)
from tests.groupgen import random_group

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: strategies whose answer does not depend on what members own: their target never changes
OWNERSHIP_BLIND = ("range", "roundrobin", "fair", "lag")


def tps(*names: str) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(n.split("-")[0], int(n.split("-")[1])) for n in names)


def owning(group: Group, assignment: Mapping[str, Sequence[TopicPartition]], gen: int) -> Group:
    """``group`` after a rebalance of generation ``gen`` that assigned ``assignment``."""
    members = tuple(
        dataclasses.replace(m, owned=tuple(assignment.get(m.id, ())), generation=gen)
        for m in group.members
    )
    return dataclasses.replace(group, members=members)


def one_round(strategy_name: str, group: Group) -> tuple[Assignment, Assignment]:
    """(target, what the cooperative protocol assigns this round) for any strategy."""
    target = create(strategy_name).assign(group)
    moving = in_flight(group.members, target.partitions)
    return target, withhold(group.members, target.partitions, moving)


def test_holders_newest_generation_wins() -> None:
    members = [
        Member("old", frozenset({"t"}), owned=tps("t-0", "t-1"), generation=3),
        Member("new", frozenset({"t"}), owned=tps("t-1", "t-2"), generation=4),
        Member("twin", frozenset({"t"}), owned=tps("t-2"), generation=4),
        Member("none", frozenset({"t"}), owned=tps("t-3")),
    ]
    assert holders(members) == {
        TopicPartition("t", 0): {"old"},
        TopicPartition("t", 1): {"new"},
        TopicPartition("t", 2): {"new", "twin"},
        TopicPartition("t", 3): {"none"},
    }
    # t-2 is held twice: withheld from both its claimants, so that both revoke it
    target = {"old": tps("t-1"), "new": tps("t-2"), "twin": tps("t-0"), "none": tps("t-3")}
    assert in_flight(members, target) == set(tps("t-0", "t-1", "t-2"))


def test_the_modules_example() -> None:
    """a owns t-0..t-3 and b joins: range's target splits them; b waits a round for its two."""
    topic = Topic("t", tuple(Partition("t", p, lag=0) for p in range(4)))
    a = Member("a", frozenset({"t"}), owned=tps("t-0", "t-1", "t-2", "t-3"), generation=4)
    group = Group.of([topic], [a, Member("b", frozenset({"t"}))])
    target, first = one_round("range", group)
    assert target.as_lists() == {"a": [("t", 0), ("t", 1)], "b": [("t", 2), ("t", 3)]}
    assert first.as_lists() == {"a": [("t", 0), ("t", 1)], "b": []}
    _, second = one_round("range", owning(group, first.partitions, 5))
    assert second == target


@given(st.randoms(use_true_random=False), st.sampled_from(names()))
@SETTINGS
def test_nothing_goes_to_a_member_while_another_holds_it(rng, name):
    group = random_group(rng, owned=True)
    target, first = one_round(name, group)
    held = holders(group.members)
    for mid, assigned in first.partitions.items():
        assert list(assigned) == [tp for tp in target[mid] if tp in assigned], "order kept"
        for tp in assigned:
            assert held.get(tp, {mid}) == {mid}, f"{tp} given to {mid}, held by {held[tp]}"
    withheld = set(target.owners()) - set(first.owners())
    assert withheld == in_flight(group.members, target.partitions)
    assert all(tp in held for tp in withheld), "withheld a partition nobody holds"


@given(st.randoms(use_true_random=False), st.sampled_from(OWNERSHIP_BLIND))
@SETTINGS
def test_the_follow_up_round_completes_the_target(rng, name):
    """Once the holders have revoked what moves, nobody holds it: the next round is the target."""
    group = random_group(rng, owned=True)
    target, first = one_round(name, group)
    generation = max((m.generation or 0 for m in group.members), default=0) + 1
    _, second = one_round(name, owning(group, first.partitions, generation))
    assert second == target


@given(st.randoms(use_true_random=False))
@SETTINGS
def test_balanced_reaches_a_round_without_moves(rng):
    """Sticky balanced under the cooperative protocol: each round only withholds, and the group
    soon reaches an assignment that moves nothing (nobody holds what is withheld, and balanced
    keeps what members own unless moving is clearly better)."""
    group = random_group(rng, owned=True, max_members=5)
    generation = max((m.generation or 0 for m in group.members), default=0)
    for _ in range(6):
        target, assigned = one_round("balanced", group)
        if assigned == target:
            return
        generation += 1
        group = owning(group, assigned.partitions, generation)
    pytest.fail(f"still moving partitions after 6 rounds: {group}")


@pytest.mark.parametrize("name", names())
def test_assign_cooperatively(name: str) -> None:
    strategy = create(name)
    group = random_group(random.Random(7), owned=True)
    if RebalanceProtocol.COOPERATIVE not in strategy.protocols:
        with pytest.raises(ValueError, match="cooperative"):
            assign_cooperatively(strategy, group)
    elif withholds_itself(strategy):
        assert assign_cooperatively(strategy, group) == strategy.assign(group)
    else:
        assert assign_cooperatively(strategy, group) == one_round(name, group)[1]


def test_who_withholds_by_itself() -> None:
    assert withholds_itself(create("cooperative-sticky"))
    assert not withholds_itself(create("sticky"))
    assert not withholds_itself(BalancedAssignor())
    assert RebalanceProtocol.COOPERATIVE in BalancedAssignor.protocols
