"""End to end: consumer processes with lagassign's assignors in a group on the real broker.

Each test starts real consumer processes (``tests/kafka/consumer_proc.py``, kafka-python or
aiokafka) on topics and a group of its own, reads what they report on stdout and compares it
with the core: the assignment a strategy computes from the same offsets, member ids and owned
partitions. Every process is killed at teardown; the processes also stop by themselves when
the test session is gone.

Timing for a shared 2-core machine: session timeout 6 s, heartbeats every second, every wait
bounded and generous (a group settles in a few seconds, the waits allow 90).
"""

from __future__ import annotations

import itertools
import sys
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient

from lagassign.model import Group, Member, Offsets, Partition, Topic, TopicPartition
from lagassign.strategies import create
from lagassign.strategies.cooperative import assign_cooperatively
from tests.kafka.broker import (
    closed_port,
    commit,
    committed_offsets,
    create_topics,
    produce,
)
from tests.kafka.processes import Processes, Reporting, wait_for

CONSUMER_PROC = Path(__file__).resolve().parent / "consumer_proc.py"
CLIENTS = ["kafka-python", "aiokafka"]

#: a group of fresh processes settles in a few seconds; this much is allowed
SETTLE_TIMEOUT_S = 90.0
#: a settled assignment must stay unchanged this long to count
STABLE_S = 2.0
#: the leader's deadline for offsets in the e2e tests (the defaults are for production)
LAG_TIMEOUT_S = 10.0

Assigned = dict[str, list[tuple[str, int]]]
#: records per partition of each topic: counts[topic][p]
Counts = Mapping[str, Sequence[int]]


# -- consumer processes ---------------------------------------------------------------------


class Procs(Processes):
    """Consumer processes (``consumer_proc.py``) of one test; all killed at teardown."""

    def __init__(self, bootstrap: str, log_dir: Path) -> None:
        super().__init__(log_dir)
        self.bootstrap = bootstrap

    def member(
        self, client: str, name: str, group: str, topics: Sequence[str], *extra: str
    ) -> Reporting:
        return self.start(
            name,
            [
                sys.executable, str(CONSUMER_PROC),
                "--client", client,
                "--name", name,
                "--bootstrap", self.bootstrap,
                "--group", group,
                "--topics", ",".join(topics),
                "--max-seconds", "240",
                "--debug", "lagassign.kafka.group",
                *extra,
            ],
        )  # fmt: skip

    def wait(self, check: Any, timeout: float, what: str) -> Any:
        return wait_for(check, timeout, what, self.procs)


@pytest.fixture
def procs(kafka_bootstrap: str, tmp_path: Path) -> Iterator[Procs]:
    started = Procs(kafka_bootstrap, tmp_path)
    try:
        yield started
    finally:
        started.close()


def consumed(proc: Reporting) -> dict[tuple[str, int], set[int]]:
    """The offsets ``proc`` processed, per partition."""
    offsets: dict[tuple[str, int], set[int]] = {}
    for e in proc.of("consumed"):
        for topic, partition, first, last in e["records"]:
            offsets.setdefault((topic, partition), set()).update(range(first, last + 1))
    return offsets


def current_assignment(members: Sequence[Reporting]) -> tuple[int, Assigned] | None:
    """(generation, member -> partitions) if every process's last report is of one generation."""
    latest = [p.latest("assigned") for p in members]
    if any(e is None for e in latest):
        return None
    reports = [e for e in latest if e is not None]
    generations = {e["generation"] for e in reports}
    if len(generations) != 1:
        return None
    assigned = {e["member_id"]: sorted((t, p) for t, p in e["partitions"]) for e in reports}
    if len(assigned) != len(members):
        return None
    return generations.pop(), assigned


def wait_settled(
    members: Sequence[Reporting], partitions: set[tuple[str, int]], procs: Procs, after: int = 0
) -> tuple[int, Assigned]:
    """The group's assignment once ``members`` agree on a generation after ``after``, every
    partition has exactly one owner, and nothing changes for :data:`STABLE_S`."""

    def settled() -> tuple[int, Assigned] | None:
        now = current_assignment(members)
        if now is None or now[0] <= after:
            return None
        owned = [tp for tps in now[1].values() for tp in tps]
        if sorted(owned) != sorted(partitions):
            return None
        time.sleep(STABLE_S)
        return now if current_assignment(members) == now else None

    names = ", ".join(p.name for p in members)
    result: tuple[int, Assigned] = procs.wait(settled, SETTLE_TIMEOUT_S, f"{names} to settle")
    return result


def leader_event(members: Sequence[Reporting], generation: int) -> dict[str, Any]:
    found = [e for p in members for e in p.of("leader") if e["generation"] == generation]
    assert len(found) == 1, f"leader reports for generation {generation}: {found}"
    return found[0]


# -- the cluster ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def admin(kafka_bootstrap: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": kafka_bootstrap})


def unique(prefix: str) -> str:
    return f"lagassign-e2e-{prefix}-{uuid.uuid4().hex[:10]}"


def backlog(admin: AdminClient, bootstrap: str, counts: Counts) -> None:
    """Creates the topics, ``counts[topic][p]`` records in partition p of each (once every
    partition has a leader: right after a test deleted 10,000 partitions, the broker may still
    refuse records for new ones)."""
    shape = {t: len(ns) for t, ns in counts.items()}
    create_topics(admin, shape)
    produce(bootstrap, per_partition(counts))


def per_partition(counts: Counts) -> dict[tuple[str, int], int]:
    return {(t, p): n for t, ns in counts.items() for p, n in enumerate(ns)}


def all_partitions(counts: Counts) -> set[tuple[str, int]]:
    return set(per_partition(counts))


# -- the core's answer ----------------------------------------------------------------------


def core_group(
    counts: Counts,
    committed: Mapping[TopicPartition, int] | None,
    members: Sequence[Member],
    auto_offset_reset: str = "earliest",
) -> Group:
    """The group the leader sees: the test's backlog and commits, ``members`` as given.

    ``committed`` None: every lag is 0 (what the leader assigns when it cannot read offsets).
    """
    topics = []
    for name, numbers in counts.items():
        if committed is None:
            parts = tuple(Partition(name, p, lag=0) for p in range(len(numbers)))
        else:
            parts = tuple(
                Partition(name, p, offsets=Offsets(0, n, committed.get(TopicPartition(name, p))))
                for p, n in enumerate(numbers)
            )
        topics.append(Topic(name, parts))
    return Group.of(topics, members, auto_offset_reset=auto_offset_reset)


def core_lag_assignment(
    counts: Counts, committed: Mapping[TopicPartition, int] | None, member_ids: Sequence[str]
) -> Assigned:
    """What ``lagassign.strategies.create("lag")`` assigns members subscribing every topic."""
    group = core_group(counts, committed, [Member(mid, frozenset(counts)) for mid in member_ids])
    assignment = create("lag").assign(group)
    return {mid: sorted((tp.topic, tp.partition) for tp in assignment[mid]) for mid in member_ids}


# -- the tests ------------------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_lag_assignment_is_the_cores(
    client: str, procs: Procs, admin: AdminClient, kafka_bootstrap: str
) -> None:
    """Three members with the lag strategy get exactly what the core computes from the
    group's offsets: a skewed backlog on 8 + 3 partitions, some committed, some not."""
    big, small, group = unique("big"), unique("small"), unique("group")
    counts = {big: [300, 10, 120, 0, 60, 5, 200, 40], small: [50, 0, 25]}
    backlog(admin, kafka_bootstrap, counts)
    # big-3, big-5, big-7, small-1, small-2 have no committed offset: earliest counts the log
    committed = {
        TopicPartition(big, 0): 100,
        TopicPartition(big, 1): 10,
        TopicPartition(big, 2): 20,
        TopicPartition(big, 4): 60,
        TopicPartition(big, 6): 50,
        TopicPartition(small, 0): 10,
    }
    commit(kafka_bootstrap, group, committed)

    members = [
        procs.member(client, f"{client}-{i}", group, [big, small], "--lag-timeout", f"{LAG_TIMEOUT_S}")
        for i in range(3)
    ]
    generation, assigned = wait_settled(members, all_partitions(counts), procs)

    assert assigned == core_lag_assignment(counts, committed, sorted(assigned))
    leader = leader_event(members, generation)
    assert leader["lag"] == "offsets", leader
    assert {m: sorted((t, p) for t, p in tps) for m, tps in leader["assignment"].items()} == assigned
    # nobody committed anything: the offsets the leader read are still the test's
    assert committed_offsets(admin, group) == committed
    for p in members:
        assert "Traceback" not in p.stderr(), p.stderr()


@pytest.fixture(scope="module")
def wide(admin: AdminClient, kafka_bootstrap: str) -> Iterator[Counts]:
    """20 topics of 500 partitions with a backlog on a few, made once for both clients' tests.

    The broker holds a file open per partition, a deleted topic's too until its files go, and
    this container allows a process 20,000 open files: two such backlogs one after the other
    (one per client) ran the broker out of them ("Too many open files"), and every test after
    failed. CPU-cheap: records on 40 partitions of the first 4 topics only."""
    topics = [unique(f"wide{i:02d}") for i in range(20)]
    counts = {t: [0] * 500 for t in topics}
    for i, t in enumerate(topics[:4]):
        for p in range(0, 500, 50):
            counts[t][p] = 20 + 37 * ((p // 50 + 3 * i) % 7)
    try:
        backlog(admin, kafka_bootstrap, counts)
        yield counts
    finally:
        for future in admin.delete_topics(topics, request_timeout=60).values():
            future.result(timeout=60)


@pytest.mark.parametrize("client", CLIENTS)
def test_group_of_10000_partitions_assigns_by_real_lag(
    client: str, procs: Procs, kafka_bootstrap: str, wide: Counts
) -> None:
    """Issue 15: a group reading 20 topics of 500 partitions gets the lag strategy's
    assignment of the real lags (read by the leader's OffsetsReader), not the lag-0 fallback.
    With either client the leader's offsets come from the read it started as it sent JoinGroup
    (every member prefetches as it joins; this group's first leader did not lead before).
    The leader's deadline is the e2e tests' generous one, so the test checks what is read, not
    how fast (bench/offsets.py and bench/rebalance.py measure that against aiokafka's 1 s
    default). Each client's group commits 0 where there are records and its members start at
    the log end elsewhere, so they fetch almost nothing; the groups differ, the topics are
    shared (``wide``)."""
    group = unique("group")
    counts = wide
    topics = list(counts)
    committed = {
        TopicPartition(t, p): 0 for t, ns in counts.items() for p, n in enumerate(ns) if n
    }
    commit(kafka_bootstrap, group, {(tp.topic, tp.partition): o for tp, o in committed.items()})
    settings = ["--lag-timeout", f"{LAG_TIMEOUT_S}", "--auto-offset-reset", "latest"]
    members = [procs.member(client, f"{client}-{i}", group, topics, *settings) for i in range(2)]
    generation, assigned = wait_settled(members, all_partitions(counts), procs)

    leader = leader_event(members, generation)
    assert (leader["lag"], leader["error"]) == ("offsets", None), leader["error"]
    by_lag = core_lag_assignment(counts, committed, sorted(assigned))
    assert assigned == by_lag
    assert by_lag != core_lag_assignment(counts, None, sorted(assigned))  # not the fallback
    for p in members:
        assert "Traceback" not in p.stderr(), p.stderr()
    assert leader["prefetched"], leader


@pytest.mark.parametrize("client", CLIENTS)
def test_killed_member_everything_consumed(
    client: str, procs: Procs, admin: AdminClient, kafka_bootstrap: str
) -> None:
    """SIGKILL the leader while three members work through a backlog: the other two take its
    partitions after the session timeout, every record is consumed at least once, every
    partition keeps an owner and the committed offsets reach the log end."""
    big, small, group = unique("big"), unique("small"), unique("group")
    counts = {big: [600, 40, 300, 0, 150, 20], small: [90, 0, 45]}
    backlog(admin, kafka_bootstrap, counts)
    everything = all_partitions(counts)

    slow = ["--consume", "--commit", "--max-records", "10", "--delay", "0.2"]
    members = [
        procs.member(client, f"{client}-{i}", group, [big, small], "--lag-timeout", f"{LAG_TIMEOUT_S}", *slow)
        for i in range(3)
    ]
    generation, _ = wait_settled(members, everything, procs)
    consumed_before = sum(len(o) for p in members for o in consumed(p).values())
    assert 0 < consumed_before < sum(map(sum, counts.values())), "not mid-stream"

    leader = leader_event(members, generation)
    victim = next(p for p in members if p.name == leader["name"])
    procs.kill(victim)
    survivors = [p for p in members if p is not victim]
    new_generation, assigned = wait_settled(survivors, everything, procs, after=generation)
    assert len(assigned) == 2
    assert leader_event(survivors, new_generation)["lag"] == "offsets"

    # records produced after the failover are consumed too
    more = {big: [25] * 6, small: [25] * 3}
    produce(kafka_bootstrap, per_partition(more))
    ends = {(t, p): n + more[t][p] for t, ns in counts.items() for p, n in enumerate(ns)}

    def all_committed() -> dict[tuple[str, int], int] | None:
        offsets = committed_offsets(admin, group)
        return offsets if all(offsets.get(tp, 0) == end for tp, end in ends.items()) else None

    procs.wait(all_committed, 120, "the committed offsets to reach the log ends")

    seen: dict[tuple[str, int], set[int]] = {}
    for p in members:
        for tp, offsets in consumed(p).items():
            seen.setdefault(tp, set()).update(offsets)
    missing = {tp: end - len(seen.get(tp, set()) & set(range(end))) for tp, end in ends.items()}
    assert {tp: n for tp, n in missing.items() if n} == {}
    # after the failover the survivors still own everything, each partition once
    final = current_assignment(survivors)
    assert final is not None
    owned = [tp for tps in final[1].values() for tp in tps]
    assert sorted(owned) == sorted(everything)


@pytest.mark.parametrize("client", CLIENTS)
def test_unreachable_offsets_count_balanced(
    client: str, procs: Procs, admin: AdminClient, kafka_bootstrap: str
) -> None:
    """The leader's offsets reader points at a closed port: the group still gets the lag
    strategy's assignment with every lag 0 (balanced counts) within the deadline, and the
    leader logs one warning for it."""
    big, small, group = unique("big"), unique("small"), unique("group")
    counts = {big: [300, 10, 120, 0, 60, 5, 200], small: [50, 0, 25, 7]}
    backlog(admin, kafka_bootstrap, counts)
    lag_timeout = 2.0
    nowhere = f"127.0.0.1:{closed_port()}"

    unreachable = ["--offsets-bootstrap", nowhere, "--lag-timeout", f"{lag_timeout}"]
    members = [
        procs.member(client, f"{client}-{i}", group, [big, small], *unreachable) for i in range(3)
    ]
    generation, assigned = wait_settled(members, all_partitions(counts), procs)

    assert assigned == core_lag_assignment(counts, None, sorted(assigned))
    for topic in counts:
        per_member = [sum(t == topic for t, _ in tps) for tps in assigned.values()]
        assert max(per_member) - min(per_member) <= 1, (topic, per_member)

    leader = leader_event(members, generation)
    assert leader["lag"] == "unavailable"
    assert nowhere in leader["error"] or "within" in leader["error"], leader["error"]
    assert leader["seconds"] < lag_timeout + 1.0, leader
    # every failed read logged a warning line (exactly one per read: see test_adapters; a
    # leader's assignment that a new rebalance overtook is logged but never reported)
    for p in members:
        warnings = [line for line in p.stderr().splitlines() if "could not read the offsets" in line]
        failures = [e for e in p.of("leader") if e["lag"] == "unavailable"]
        assert len(warnings) >= len(failures), (p.name, warnings, failures)
        assert all(group in line and "as if every lag were 0" in line for line in warnings)
        assert "Traceback" not in p.stderr(), p.stderr()
    leader_proc = next(p for p in members if p.name == leader["name"])
    assert any("WARNING lagassign.kafka.group" in line for line in leader_proc.stderr().splitlines())


def owned_now(proc: Reporting) -> tuple[int, list[tuple[str, int]]] | None:
    """(generation, partitions) of the process's last completed rebalance."""
    last = proc.latest("rebalanced")
    if last is None:
        return None
    return last["generation"], sorted((t, p) for t, p in last["partitions"])


def wait_owned(
    members: Sequence[Reporting], partitions: set[tuple[str, int]], procs: Procs
) -> dict[str, list[tuple[str, int]]]:
    """Each process's partitions once ``members`` completed one generation in which every
    partition has exactly one owner among them, and nothing changes for :data:`STABLE_S`."""

    def settled() -> dict[str, list[tuple[str, int]]] | None:
        now = {p.name: owned_now(p) for p in members}
        if any(v is None for v in now.values()) or len({v[0] for v in now.values() if v}) != 1:
            return None
        owned = [tp for v in now.values() if v is not None for tp in v[1]]
        if sorted(owned) != sorted(partitions):
            return None
        time.sleep(STABLE_S)
        if {p.name: owned_now(p) for p in members} != now:
            return None
        return {name: v[1] for name, v in now.items() if v is not None}

    names = ", ".join(p.name for p in members)
    owned: dict[str, list[tuple[str, int]]] = procs.wait(
        settled, SETTLE_TIMEOUT_S, f"{names} to own every partition once"
    )
    return owned


def test_cooperative_sticky_on_kafka_python(
    procs: Procs, admin: AdminClient, kafka_bootstrap: str
) -> None:
    """kafka-python 3 runs lagassign's cooperative-sticky on the cooperative protocol: when a
    third member joins, the two others keep what they keep (no revoke-everything), revoke only
    what moves, and the newcomer gets those partitions one rebalance later."""
    big, small, group = unique("big"), unique("small"), unique("group")
    counts = {big: [5] * 6, small: [5] * 3}
    create_topics(admin, {t: len(ns) for t, ns in counts.items()})
    everything = all_partitions(counts)
    coop = ["--strategy", "cooperative-sticky"]

    first = [procs.member("kafka-python", f"coop-{i}", group, [big, small], *coop) for i in range(2)]
    before = wait_owned(first, everything, procs)
    revoked_before = {p.name: len(p.of("revoked")) for p in first}

    newcomer = procs.member("kafka-python", "coop-2", group, [big, small], *coop)
    after = wait_owned([*first, newcomer], everything, procs)

    assert sorted(len(tps) for tps in after.values()) == [3, 3, 3]
    for p in first:
        assert set(after[p.name]) <= set(before[p.name]), "a member got partitions it lacked"
        revocations = p.of("revoked")[revoked_before[p.name] :]
        revoked = {(t, n) for e in revocations for t, n in e["partitions"]}
        assert revoked == set(before[p.name]) - set(after[p.name])
        assert revoked <= set(after[newcomer.name])
    # two phases: the newcomer is given the moved partitions after their owners revoked them
    first_gain = min(e["generation"] for e in newcomer.of("assigned") if e["partitions"])
    revoke_generations = {
        e["generation"] for p in first for e in p.of("revoked")[revoked_before[p.name] :]
    }
    assert revoke_generations and max(revoke_generations) < first_gain
    assert all(e["strategy"] == "cooperative-sticky" for p in procs.procs for e in p.of("leader"))


def ownership(members: Sequence[Reporting]) -> dict[int, dict[str, set[tuple[str, int]]]]:
    """member id -> partitions at every generation any member completed: what the member got
    in that generation, or, if it completed none, what it had from an earlier one."""
    events = sorted(
        (e["generation"], e["member_id"], {(t, n) for t, n in e["partitions"]})
        for p in members
        for e in p.of("rebalanced")
    )
    owned: dict[str, set[tuple[str, int]]] = {}
    timeline: dict[int, dict[str, set[tuple[str, int]]]] = {}
    for generation, member_id, partitions in events:
        owned[member_id] = partitions
        timeline[generation] = dict(owned)
    return timeline


def test_cooperative_balanced_on_kafka_python(
    procs: Procs, admin: AdminClient, kafka_bootstrap: str
) -> None:
    """kafka-python runs ``balanced`` on the cooperative protocol
    (``assignor("balanced", protocol="cooperative")``). A third member joins two that own every
    partition, on a skewed backlog. After the join, generation by generation:

    * the leader saw what the members really owned and assigned exactly what the core assigns
      from it: balanced's sticky answer minus the partitions another member still holds;
    * a member is given a partition only if nobody owned it in the generation before, and a
      partition withheld in one generation has its owner in the next: the old owner revokes
      first, the new owner gets it one rebalance later; no partition ever has two owners;
    * members revoke exactly what they lose, nothing more (no revoke-everything);
    * the group ends, within a few rebalances, on balanced's answer for what its members own,
      with nothing withheld.
    """
    big, small, group = unique("big"), unique("small"), unique("group")
    counts = {big: [400, 20, 150, 0, 80, 10], small: [60, 0, 300]}
    backlog(admin, kafka_bootstrap, counts)
    committed = {TopicPartition(big, 0): 100, TopicPartition(small, 2): 50}
    commit(kafka_bootstrap, group, committed)
    everything = all_partitions(counts)
    cooperative = ["--strategy", "balanced", "--protocol", "cooperative", "--lag-timeout", f"{LAG_TIMEOUT_S}"]

    first = [procs.member("kafka-python", f"bal-{i}", group, [big, small], *cooperative) for i in range(2)]
    wait_owned(first, everything, procs)
    joined = max(e["generation"] for p in first for e in p.of("rebalanced"))
    newcomer = procs.member("kafka-python", "bal-2", group, [big, small], *cooperative)
    members = [*first, newcomer]
    after = wait_owned(members, everything, procs)
    assert sorted(len(tps) for tps in after.values()) == [3, 3, 3]

    timeline = ownership(members)
    generations = sorted(g for g in timeline if g > joined)
    assert 2 <= len(generations) <= 4, f"rebalances after the join: {generations}"
    leaders = {e["generation"]: e for p in members for e in p.of("leader") if e["generation"] > joined}
    assert sorted(leaders) == generations, "one leader report for every rebalance"
    balanced = create("balanced")
    for previous, g in zip([joined, *generations], generations, strict=False):
        leader, was, now = leaders[g], timeline[previous], timeline[g]
        assert (leader["strategy"], leader["protocol"], leader["lag"]) == ("balanced", "cooperative", "offsets")
        saw = {m: {tuple(tp) for tp in tps} for m, tps in leader["owned"].items()}
        assert saw == {m: was.get(m, set()) for m in saw}, f"generation {g}: the owners the leader saw"
        seen = core_group(
            counts,
            committed,
            [
                Member(m, frozenset(counts), owned=tuple(TopicPartition(*tp) for tp in tps), generation=leader["generations"][m])
                for m, tps in leader["owned"].items()
            ],
        )
        consuming = {m: [TopicPartition(*tp) for tp in tps] for m, tps in leader["consuming"].items()}
        assert consuming == {o.id: list(o.owned) for o in seen.members if o.owned}, "all cooperative"
        core, _ = assign_cooperatively(balanced, seen, consuming)
        assert {m: sorted(tps) for m, tps in core.as_lists().items()} == {
            m: sorted(tuple(tp) for tp in tps) for m, tps in leader["assignment"].items()
        }, f"generation {g}: the leader's assignment is not the core's"
        withheld = {tuple(tp) for tp in leader["withheld"]}
        assert withheld == {(tp.topic, tp.partition) for tp in set(balanced.assign(seen).owners()) - set(core.owners())}

        held = [tp for tps in now.values() for tp in tps]
        assert len(held) == len(set(held)), f"generation {g}: a partition with two owners"
        for m, tps in now.items():
            for tp in tps - was.get(m, set()):
                assert not any(tp in o for o in was.values()), f"generation {g}: {tp} given to {m} while owned"
        if g != generations[-1]:
            after_next = {tp for tps in timeline[generations[generations.index(g) + 1]].values() for tp in tps}
            assert withheld <= after_next, f"withheld in generation {g}, unassigned in the next"
    # the last rebalance withheld nothing: the group is on balanced's answer for its owners
    assert leaders[generations[-1]]["withheld"] == []

    # members revoke exactly what they lose, in the generation they lose it
    revoked = {
        (e["member_id"], e["generation"]): {tuple(tp) for tp in e["partitions"]}
        for p in members
        for e in p.of("revoked")
        if e["generation"] > joined
    }
    lost = {
        (m, g): timeline[previous][m] - timeline[g][m]
        for previous, g in zip([joined, *generations], generations, strict=False)
        for m in timeline[previous]
        if timeline[previous][m] - timeline[g][m]
    }
    assert revoked == lost


def test_balanced_switching_protocols_on_kafka_python(
    procs: Procs, admin: AdminClient, kafka_bootstrap: str
) -> None:
    """A rolling switch of ``balanced`` between the protocols: members on the cooperative and
    on the eager protocol in one group (one strategy name), a cooperative member leading, four
    joins in turn. Every join settles with each partition owned once: nothing an eager member
    gave up waits for a rebalance nobody starts. Eager members tell the leader they consume
    nothing (their previous partitions reach it, for stickiness, in the user data), so only
    what cooperative members still consume is withheld, and no member is given a partition a
    cooperative member owned in the generation before."""
    big, small, group = unique("big"), unique("small"), unique("group")
    counts = {big: [400, 20, 150, 0, 80, 10], small: [60, 0, 300]}
    backlog(admin, kafka_bootstrap, counts)
    everything = all_partitions(counts)
    strategy = ["--strategy", "balanced", "--lag-timeout", f"{LAG_TIMEOUT_S}"]
    protocols = {"mix-0": "cooperative", "mix-1": "eager", "mix-2": "cooperative", "mix-3": "eager"}
    members: list[Reporting] = []
    for name, protocol in protocols.items():
        members.append(procs.member("kafka-python", name, group, [big, small], *strategy, "--protocol", protocol))
        after = wait_owned(members, everything, procs)
    assert sorted(len(tps) for tps in after.values()) == [2, 2, 2, 3]

    protocol_of = {e["member_id"]: protocols[p.name] for p in members for e in p.of("rebalanced")}
    cooperative = {m for m, protocol in protocol_of.items() if protocol == "cooperative"}
    timeline = ownership(members)
    generations = sorted(timeline)
    leaders = {e["generation"]: e for p in members for e in p.of("leader")}
    assert {p.name for p in members for _ in p.of("leader")} == {"mix-0"}, "the first member leads"
    for previous, g in itertools.pairwise(generations):
        leader, was, now = leaders[g], timeline[previous], timeline[g]
        assert (leader["strategy"], leader["protocol"]) == ("balanced", "cooperative")
        consuming = {m: {tuple(tp) for tp in tps} for m, tps in leader["consuming"].items()}
        assert set(consuming) <= cooperative, f"generation {g}: an eager member consuming"
        assert all(consuming[m] == was.get(m, set()) for m in consuming), f"generation {g}"
        withheld = {tuple(tp) for tp in leader["withheld"]}
        assert withheld <= {tp for tps in consuming.values() for tp in tps}
        held = [tp for tps in now.values() for tp in tps]
        assert len(held) == len(set(held)), f"generation {g}: a partition with two owners"
        for m, tps in now.items():
            for tp in tps - was.get(m, set()):
                owners = {o for o, ps in was.items() if tp in ps and o in cooperative}
                assert not owners, f"generation {g}: {tp} given to {m} while {owners} owned it"
    assert leaders[generations[-1]]["withheld"] == []
