"""The cooperative protocol's withholding (lagassign.strategies.cooperative), on random groups.

The safety check is an oracle of its own, not the code's rule: Kafka's
``ConsumerCoordinator.validateCooperativeAssignment``, which a Java leader runs on every
cooperative assignment. For each member, what the assignment adds to it (assigned, not listed as
owned) and what it revokes from it (listed as owned, not assigned) are collected; a partition
added to one member while revoked from another is handed over while its owner still consumes
it. Kafka checks the members' raw lists of what they still consume (every strategy passes
that). ``balanced`` passes it also with the lists refined by the generation rule (a claim
older than another claim of the same partition no longer counts), which is stricter: then a
partition may not go back to an older claimant either. Kafka's ``cooperative-sticky`` (Java's
and ours) does give it back to an older claimant on its general path, as Kafka's own check
allows, since that member lists it as owned.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Collection, Mapping, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lagassign.model import (
    Assignment,
    Group,
    Member,
    Partition,
    Topic,
    TopicPartition,
    newest_claims,
)
from lagassign.strategies import RebalanceProtocol, create, names
from lagassign.strategies.balanced import BalancedAssignor, _MemberTotals
from lagassign.strategies.cooperative import _consuming, assign_cooperatively, in_flight, withhold
from tests.groupgen import random_group
from tests.test_properties import check_per_topic_counts, check_valid

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: strategies whose answer does not depend on what members own: their target never changes
OWNERSHIP_BLIND = ("range", "roundrobin", "fair", "lag")
#: the strategies that run on the cooperative protocol
COOPERATIVE = ("balanced", "cooperative-sticky")


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


# -- the oracle: Kafka's validateCooperativeAssignment ----------------------------------------


def listed_owned(
    group: Group, consuming: Mapping[str, Collection[TopicPartition]] | None = None
) -> dict[str, set[TopicPartition]]:
    """What each member lists as still consuming: ``consuming``, else ``Member.owned``."""
    return {
        m.id: set(m.owned if consuming is None else consuming.get(m.id, ())) for m in group.members
    }


def still_owned(
    group: Group, consuming: Mapping[str, Collection[TopicPartition]] | None = None
) -> dict[str, set[TopicPartition]]:
    """:func:`listed_owned` less the partitions some member lists in a newer generation."""
    listed = listed_owned(group, consuming)
    generation = {m.id: -1 if m.generation is None else m.generation for m in group.members}
    newest: dict[TopicPartition, int] = {}
    for mid, claimed in listed.items():
        for tp in claimed:
            newest[tp] = max(newest.get(tp, generation[mid]), generation[mid])
    return {
        mid: {tp for tp in claimed if newest[tp] == generation[mid]}
        for mid, claimed in listed.items()
    }


def handed_over_while_owned(
    owned: Mapping[str, Collection[TopicPartition]], assigned: Mapping[str, Collection[TopicPartition]]
) -> set[TopicPartition]:
    """Kafka's ``validateCooperativeAssignment``: partitions added to a member while revoked
    from another (an empty set is a valid cooperative assignment)."""
    added: set[TopicPartition] = set()
    revoked: set[TopicPartition] = set()
    for mid, tps in assigned.items():
        mine = set(owned.get(mid, ()))
        added |= set(tps) - mine
        revoked |= mine - set(tps)
    return added & revoked


def test_the_oracle() -> None:
    owned = {"a": tps("t-0", "t-1"), "b": tps("t-2")}
    assert handed_over_while_owned(owned, {"a": tps("t-0"), "b": tps("t-2", "t-1")}) == set(
        tps("t-1")
    )
    assert handed_over_while_owned(owned, {"a": tps("t-0"), "b": tps("t-2", "t-3")}) == set()
    topic = Topic.of("t", 3)
    group = Group.of(
        [topic],
        [
            Member("old", frozenset({"t"}), owned=tps("t-0", "t-1"), generation=3),
            Member("new", frozenset({"t"}), owned=tps("t-1", "t-2"), generation=4),
        ],
    )
    assert still_owned(group) == {"old": set(tps("t-0")), "new": set(tps("t-1", "t-2"))}


def random_consuming(rng: random.Random, group: Group) -> dict[str, tuple[TopicPartition, ...]]:
    """A group switching protocols: some members run the eager protocol and consume nothing
    (their previous assignment, ``owned``, reaches the leader in the user data only)."""
    return {m.id: m.owned for m in group.members if rng.random() < 0.6}


def check_round(
    group: Group,
    strategy_name: str,
    consuming: Mapping[str, Collection[TopicPartition]] | None,
) -> None:
    strategy = create(strategy_name)
    assignment, withheld = assign_cooperatively(strategy, group, consuming)
    listed = listed_owned(group, consuming)
    conflicts = handed_over_while_owned(listed, assignment.partitions)
    assert not conflicts, f"{sorted(conflicts)} handed over while another member consumes them"
    assert not withheld & set(assignment.owners()), "withheld and assigned"
    # only what somebody still consumes is ever withheld, and only partitions of its topics
    assert withheld <= {tp for claimed in listed.values() for tp in claimed}
    subscribed = {t for m in group.members for t in m.topics}
    assert {tp.topic for tp in withheld} <= subscribed
    if strategy.withholds_moving:
        return
    owned = still_owned(group, consuming)
    conflicts = handed_over_while_owned(owned, assignment.partitions)
    assert not conflicts, f"{sorted(conflicts)} handed over while a newer claimant consumes them"
    # the strategy's target in this round (Strategy.target: time-aware balanced prices the
    # handovers of what members still consume, so its target is not always assign's)
    current = group if consuming is None else _consuming(group, consuming)
    target = strategy.target(group, current)
    assert withheld == set(target.owners()) - set(assignment.owners())
    for mid, assigned in assignment.partitions.items():
        assert list(assigned) == [tp for tp in target[mid] if tp not in withheld], "order kept"
    # nothing withheld needlessly: giving it to its target member would hand it over while
    # owned (Kafka's rule), or it is contested (two members of its newest generation claim it)
    for tp, mid in target.owners().items():
        if tp not in withheld:
            continue
        claimants = [m for m, claimed in owned.items() if tp in claimed]
        given = {m: [*ps, tp] if m == mid else ps for m, ps in assignment.partitions.items()}
        assert len(claimants) > 1 or handed_over_while_owned(owned, given), f"{tp} withheld"


@given(st.randoms(use_true_random=False), st.sampled_from(COOPERATIVE))
@SETTINGS
def test_nothing_goes_to_a_member_while_another_consumes_it(rng, name):
    """Every member on the cooperative protocol: each consumes what it owns."""
    check_round(random_group(rng, owned=True), name, None)


@given(st.randoms(use_true_random=False), st.sampled_from(COOPERATIVE))
@SETTINGS
def test_mixed_protocols_withhold_only_what_is_still_consumed(rng, name):
    """Members of one group on both protocols (a rolling switch): eager members' previous
    partitions are never withheld, cooperative members' moving ones always are."""
    group = random_group(rng, owned=True)
    check_round(group, name, random_consuming(rng, group))


@given(st.randoms(use_true_random=False), st.sampled_from(names()))
@SETTINGS
def test_any_target_withheld_by_the_rule(rng, name):
    """The rule alone, on every strategy's answer (most support only the eager protocol)."""
    group = random_group(rng, owned=True)
    target, first = one_round(name, group)
    assert not handed_over_while_owned(still_owned(group), first.partitions)
    for mid, assigned in first.partitions.items():
        assert list(assigned) == [tp for tp in target[mid] if tp in assigned], "order kept"


# -- the rule itself --------------------------------------------------------------------------


def test_newest_claims() -> None:
    members = [
        Member("old", frozenset({"t"}), owned=tps("t-0", "t-1"), generation=3),
        Member("new", frozenset({"t"}), owned=tps("t-1", "t-2"), generation=4),
        Member("twin", frozenset({"t"}), owned=tps("t-2"), generation=4),
        Member("none", frozenset({"t"}), owned=tps("t-3")),
        Member("later", frozenset({"t"}), owned=tps("t-4"), generation=1),
        Member("first", frozenset({"t"}), owned=tps("t-4"), generation=1),
        Member("newest", frozenset({"t"}), owned=tps("t-4"), generation=2),
    ]
    assert newest_claims(members) == {
        TopicPartition("t", 0): {"old"},
        TopicPartition("t", 1): {"new"},
        TopicPartition("t", 2): {"new", "twin"},
        TopicPartition("t", 3): {"none"},
        TopicPartition("t", 4): {"newest"},
    }
    group = Group.of([Topic.of("t", 5)], members)
    assert group.current_owners() == {
        tp: next(iter(ids)) for tp, ids in newest_claims(members).items() if len(ids) == 1
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


def with_rates_and_capacities(rng: random.Random, group: Group) -> Group:
    """``group`` with a produce rate on every partition and a capacity on every member, the
    inflow 60–95% of what they read together: time-aware balanced plans it, and on the
    cooperative protocol searches its plan on the catch-up time with the handovers' pause
    priced (balanced._settle_handovers)."""
    topics = [
        Topic(
            t.name,
            tuple(dataclasses.replace(p, rate_in=min(rng.paretovariate(1.5), 1e3)) for p in t.partitions),
        )
        for t in group.topics.values()
    ]
    inflow = sum(p.rate_in or 0.0 for t in topics for p in t.partitions)
    speeds = [rng.choice((1, 2, 3, 6)) for _ in group.members]
    scale = inflow / rng.uniform(0.6, 0.95) / sum(speeds)
    members = [
        dataclasses.replace(m, capacity=s * scale)
        for m, s in zip(group.members, speeds, strict=True)
    ]
    return dataclasses.replace(group, topics={t.name: t for t in topics}, members=tuple(members))


@given(st.randoms(use_true_random=False))
@SETTINGS
def test_time_aware_balanced_rounds_follow_the_protocol(rng):
    """With rates and capacities, every member on the cooperative protocol or some on the
    eager one: the same rule and counts as without them, and the rounds settle."""
    group = with_rates_and_capacities(rng, random_group(rng, owned=True, max_members=6))
    check_round(group, "balanced", None)
    check_round(group, "balanced", random_consuming(rng, group))
    generation = max((m.generation or 0 for m in group.members), default=0)
    for _ in range(8):
        target, assigned = one_round("balanced", group)
        check_valid(group, assigned, cooperative=True)
        if assigned == target:
            check_per_topic_counts(group, target)
            return
        generation += 1
        group = owning(group, assigned.partitions, generation)
    pytest.fail(f"still moving partitions after 8 rounds: {group}")


@pytest.mark.parametrize("name", names())
def test_assign_cooperatively(name: str) -> None:
    strategy = create(name)
    group = random_group(random.Random(7), owned=True)
    if RebalanceProtocol.COOPERATIVE not in strategy.protocols:
        with pytest.raises(ValueError, match="cooperative"):
            assign_cooperatively(strategy, group)
    elif strategy.withholds_moving:
        assert assign_cooperatively(strategy, group).assignment == strategy.assign(group)
    else:
        assert assign_cooperatively(strategy, group).assignment == one_round(name, group)[1]


def test_withholds_itself_reads_only_what_members_consume() -> None:
    """cooperative-sticky, as Kafka's, takes both stickiness and what is in flight from what
    members still consume: an eager member's previous assignment does not count."""
    group = Group.of(
        [Topic.of("t", 4)],
        [
            Member("a", frozenset({"t"}), owned=tps("t-0", "t-1", "t-2", "t-3"), generation=2),
            Member("b", frozenset({"t"}), generation=2),
        ],
    )
    strategy = create("cooperative-sticky")
    eager_a = assign_cooperatively(strategy, group, {})
    assert eager_a.withheld == frozenset() and len(eager_a.assignment.owners()) == 4
    cooperative_a = assign_cooperatively(strategy, group, {"a": group.member("a").owned})
    assert len(cooperative_a.assignment["a"]) == 2 and cooperative_a.assignment["b"] == ()
    assert cooperative_a.withheld == set(group.member("a").owned) - set(cooperative_a.assignment["a"])


def test_who_withholds_by_itself() -> None:
    assert create("cooperative-sticky").withholds_moving
    assert not any(create(n).withholds_moving for n in names() if n != "cooperative-sticky")
    assert not BalancedAssignor.withholds_moving
    assert RebalanceProtocol.COOPERATIVE in BalancedAssignor.protocols


def test_settle_the_modules_example() -> None:
    """cooperative-sticky: b joins a, which owns t-0..t-3; the first round withholds t-2 and
    t-3, the second gives them to b; plan_group's settled holds that plan, its moves counted from
    what the members own now."""
    from lagassign.plan import plan_group, rebalance_round, settle

    topic = Topic("t", tuple(Partition("t", p, lag=10 * (p + 1)) for p in range(4)))
    a = Member("a", frozenset({"t"}), owned=tps("t-0", "t-1", "t-2", "t-3"), generation=4)
    group = Group.of([topic], [a, Member("b", frozenset({"t"}))])
    strategy = create("cooperative-sticky")
    first = rebalance_round(strategy, group)
    assert first.assignment.as_lists() == {"a": [("t", 0), ("t", 1)], "b": []}
    assert first.withheld == frozenset(tps("t-2", "t-3"))
    final = {"a": [("t", 0), ("t", 1)], "b": [("t", 2), ("t", 3)]}
    assert settle(strategy, group).assignment.as_lists() == final
    end = settle(strategy, group, first)
    assert (end.assignment.as_lists(), end.rounds, end.settles) == (final, 2, True)
    gp = plan_group(group, ["sticky", "cooperative-sticky"])
    [settled] = gp.settled.values()  # sticky's only round withholds nothing
    assert settled.strategy == "cooperative-sticky"
    assert settled.assignment.as_lists() == final
    assert (settled.metrics.unassigned, settled.metrics.moves) == (0, 2)
    assert gp.plans[1].metrics.unassigned == 2


@given(st.randoms(use_true_random=False), st.sampled_from(names()))
@SETTINGS
def test_every_strategy_settles_with_every_partition_assigned(rng, name):
    """Whatever the group, the rounds settle on an assignment that gives every partition of a
    subscribed topic to a member, or come back to an assignment they made before (never at
    MAX_ROUNDS). Only Kafka's rack-aware cooperative-sticky does that, on a few groups with
    racks, and Java's the same (test_differential_java). A strategy whose first round
    withholds nothing settles on that round."""
    from lagassign.plan import MAX_ROUNDS, rebalance_round, settle

    group = random_group(rng, owned=True)
    strategy = create(name)
    first = rebalance_round(strategy, group)
    end = settle(strategy, group, first)
    read = {t for m in group.members for t in m.topics}
    everything = {p.tp for p in group.partitions() if p.topic in read}
    assert end.rounds < MAX_ROUNDS
    if end.settles:
        assert set(end.assignment.owners()) == everything
    else:
        assert name == "cooperative-sticky" and any(m.rack for m in group.members)
        assert set(end.assignment.owners()) < everything
    if not first.withheld:
        assert (end.assignment, end.rounds) == (first.assignment, 1)


#: tests.groupgen.random_group(random.Random(seed), owned=True) on which cooperative-sticky's
#: rounds (and Kafka's, test_differential_java) never settle: the fifth repeats the third, and so
#: on for ever, withholding 19, 1, 8, 1, 8 … partitions
NEVER_SETTLES_SEED = 2236


def test_settle_stops_where_the_rounds_repeat() -> None:
    """settle stops at the first repeat; plan_group names the strategy in ``unsettled`` and
    its settled plan leaves the partitions in flight unassigned (the tables and the JSON:
    test_report_tables)."""
    from lagassign.plan import plan_group, settle

    group = random_group(random.Random(NEVER_SETTLES_SEED), owned=True)
    end = settle(create("cooperative-sticky"), group)
    assert (end.rounds, end.settles) == (5, False)
    gp = plan_group(group, ["sticky", "cooperative-sticky"])
    assert gp.unsettled == {"cooperative-sticky"}
    assert gp.settled["cooperative-sticky"].assignment == end.assignment
    assert gp.settled["cooperative-sticky"].metrics.unassigned == 8
    # a group whose rounds settle only in their fifth round (Kafka's four are not enough)
    late = settle(create("cooperative-sticky"), random_group(random.Random(52), owned=True))
    assert (late.rounds, late.settles) == (5, True)


def _joined(sample_group: Group) -> Group:
    """``sample_group`` as its last member joins: the others own balanced's plan without it
    (generation 1), the joiner owns nothing."""
    balanced = create("balanced")
    before = dataclasses.replace(sample_group, members=sample_group.members[:-1])
    plan = balanced.assign(before)
    return owning(sample_group, plan.partitions, 1)


#: catch_up_suite(3, max_partitions=120) groups whose follow-up round, planned afresh from
#: owned partitions, revoked more (offsets #2: 22 partitions, mixed-subscriptions #0: 22, #2: 5)
FOLLOW_UPS = (("offsets", 2), ("mixed-subscriptions", 0), ("mixed-subscriptions", 2))


@pytest.mark.parametrize("family,seed", FOLLOW_UPS)
def test_time_aware_balanced_follow_up_places_the_withheld_and_revokes_nothing(family, seed):
    """Kafka's cooperative protocol: the first round revokes only what moves, and the follow-up
    round, in which nobody owns those partitions any more, gives them out and revokes nothing
    (with rates and capacities, balanced plans for catch-up time; its first candidate then keeps
    every owned partition and places only what nobody owns)."""
    from lagassign.plan import rebalance_round
    from lagassign.samples import catch_up_suite

    [sample] = [
        s for s in catch_up_suite(seed + 1, max_partitions=120)
        if (s.family, s.seed) == (family, seed)
    ]
    balanced = create("balanced")
    group = _joined(sample.group)
    first = rebalance_round(balanced, group, {m.id: m.owned for m in group.members})
    assert first.withheld
    group = owning(group, first.assignment.partitions, 2)
    second = rebalance_round(balanced, group, {m.id: m.owned for m in group.members})
    assert second.withheld == frozenset()
    for m in group.members:
        assert set(m.owned) <= set(second.assignment[m.id]), m.id
    read = {t for m in group.members for t in m.topics}
    assert set(second.assignment.owners()) == {p.tp for p in group.partitions() if p.topic in read}


def _near_the_end() -> Group:
    """a owns both lagging partitions of t (lag 100, 10 msg/s in each), b the two without lag
    (10 msg/s each); both read 100 msg/s: a catches up in 200 ÷ 80 = 2.5 s, b at once. Swapping
    t-0 and t-2 would make it 1.25 s for both."""
    lags = (100, 100, 0, 0)
    partitions = (Partition("t", p, lag=lag, rate_in=10.0) for p, lag in enumerate(lags))
    topic = Topic("t", tuple(partitions))
    return Group.of(
        [topic],
        [
            Member("a", frozenset({"t"}), owned=tps("t-0", "t-1"), generation=3, capacity=100),
            Member("b", frozenset({"t"}), owned=tps("t-2", "t-3"), generation=3, capacity=100),
        ],
    )


def test_time_aware_balanced_prices_a_handover_by_the_round_it_goes_unread():
    """On the cooperative protocol a partition that changes owner is not read for a round
    (its owner revokes it at the round's end, its new member gets it in the follow-up), so b,
    handed t-0, has 100 + 10 × 10 behind on it when it gets it, nothing else, and catches up
    no sooner than 10 s + 200 ÷ (100 − 20) = 12.5 s: the swap is slower than staying,
    and balanced keeps what both members consume. Eager members consume nothing while the
    group rebalances: there the swap costs no extra pause, and balanced makes it, as it does
    with the pause priced at 0."""
    from lagassign.plan import rebalance_round

    group = _near_the_end()
    consuming = {m.id: m.owned for m in group.members}
    swapped = {"a": [("t", 1), ("t", 2)], "b": [("t", 0), ("t", 3)]}
    cooperative = rebalance_round(BalancedAssignor(), group, consuming)
    kept = {"a": [("t", 0), ("t", 1)], "b": [("t", 2), ("t", 3)]}
    assert cooperative.assignment.as_lists() == kept
    assert cooperative.withheld == frozenset()
    assert rebalance_round(BalancedAssignor(), group, {}).assignment.as_lists() == swapped
    assert BalancedAssignor().assign(group).as_lists() == swapped
    unpriced = rebalance_round(BalancedAssignor(handover_pause=0), group, consuming)
    assert unpriced.withheld == frozenset(tps("t-0", "t-2"))


@pytest.mark.parametrize("own_backlog", [0, 6_000])
def test_a_handover_is_priced_by_what_the_pause_adds_and_the_members_whole_inflow(own_backlog):
    """a (100 msg/s) keeps t-1 (50 msg/s in) and is handed t-0 (no lag, 40 msg/s in) from b.
    Unread for the 10 s pause, t-0 holds 400 when a gets it, and a reads it at 100 − 90 msg/s
    spare: done at 10 + 400 ÷ 10 = 50 s. Priced by the handed partition's inflow alone it
    looked done at 10 + 0 ÷ 60 = 10 s, and near the end of a drain a follow-up round preferred
    such a handover to a partition nobody reads with 40 s of backlog (tests/test_simulate.py's
    storm). With 6,000 behind on t-1, a is busy through the pause and catches up in 600 s
    anyway: the handover's 50 s costs it nothing (the plan's time is the later of the two)."""
    import numpy as np

    partitions = (Partition("t", 0, lag=0, rate_in=40.0), Partition("t", 1, lag=own_backlog, rate_in=50.0))
    group = Group.of(
        [Topic("t", partitions)],
        [Member("a", frozenset({"t"}), capacity=100), Member("b", frozenset({"t"}), capacity=100)],
    )
    totals = _MemberTotals(group)
    backlogs = totals.column([p.lag or 0 for p in totals.partitions])
    inflows = totals.column([p.rate_in or 0.0 for p in totals.partitions])
    speeds = {"a": 100.0, "b": 100.0}
    plan, now = np.array([0, 0]), np.array([1, 0])  # a gets t-0, which b consumes now
    handed = totals.handed_over(group.members, plan, now, backlogs, inflows, speeds, 10.0)
    assert handed == 50.0
    assert totals.handed_over(group.members, now, now, backlogs, inflows, speeds, 10.0) == 0.0


def test_a_handover_pause_is_a_non_negative_number():
    for bad in (-1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="handover_pause"):
            BalancedAssignor(handover_pause=bad)
