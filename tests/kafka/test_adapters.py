"""The consumer-group adapters without a broker: wire formats, the leader's glue, the fallback.

Everything here runs in-process against fake cluster metadata and fake offset readers, except
:func:`test_unreachable_reader_falls_back_within_the_deadline`, which points a real
:class:`~lagassign.kafka.offsets.OffsetsReader` at a closed port on 127.0.0.1.
"""

from __future__ import annotations

import logging
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyAssignorUserDataV1
from aiokafka.coordinator.protocol import (
    ConsumerProtocolMemberAssignment,
    ConsumerProtocolMemberMetadata,
)
from kafka.coordinator.assignors.abstract import RebalanceProtocol as KafkaRebalanceProtocol
from kafka.protocol.consumer.group import JoinGroupResponse
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

from lagassign.kafka import aiokafka as aio
from lagassign.kafka import kafka_python as kp
from lagassign.kafka.group import (
    GroupAssignor,
    OffsetsUnavailable,
    Subscription,
    build_group,
    fetch_within,
    import_ahead,
    model_topics,
)
from lagassign.kafka.settings import AssignorSettings, client_properties, protocol_for
from lagassign.kafka.wire import (
    decode_capacity,
    decode_user_data,
    encode_user_data,
    sends_consuming,
    sends_previous,
)
from lagassign.model import Group, Member, Offsets, Partition, Topic, TopicPartition
from lagassign.strategies import RebalanceProtocol, create, names
from tests.kafka.broker import closed_port

GROUP = "orders"
WARNING = "could not read the offsets"

# topic "t": 6 partitions with very uneven lag, "u": 2 partitions
END = {"t": [100, 5, 60, 0, 30, 1], "u": [7, 9]}
COMMITTED = {TopicPartition("t", 0): 40, TopicPartition("u", 1): 9}


def offsets_of(end: Mapping[str, list[int]] = END) -> dict[TopicPartition, Offsets]:
    return {
        TopicPartition(t, p): Offsets(0, n, COMMITTED.get(TopicPartition(t, p)))
        for t, ns in end.items()
        for p, n in enumerate(ns)
    }


class Cluster:
    """kafka-python's / aiokafka's ClusterMetadata, as far as the adapters use it."""

    def __init__(self, partitions: Mapping[str, int]) -> None:
        self.counts = dict(partitions)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        n = self.counts.get(topic)
        return None if n is None else set(range(n))


CLUSTER = Cluster({t: len(ns) for t, ns in END.items()})


class Fetch:
    """A fake offsets reader: records its calls, answers, fails or hangs."""

    def __init__(
        self,
        answer: Mapping[TopicPartition, Offsets] | None = None,
        error: Exception | None = None,
        sleep: float = 0.0,
        gate: threading.Event | None = None,
    ) -> None:
        self.answer = offsets_of() if answer is None else answer
        self.error = error
        self.sleep = sleep
        #: answers only once the gate is set (``waiting`` meanwhile)
        self.gate = gate
        self.waiting = False
        self.calls: list[tuple[str, tuple[str, ...], float]] = []

    def __call__(
        self, group: str, topics: Sequence[str], timeout: float
    ) -> Mapping[TopicPartition, Offsets]:
        if self.gate is not None and not self.gate.is_set():
            self.waiting = True
        self.calls.append((group, tuple(topics), timeout))
        if self.gate is not None:
            self.gate.wait()
            self.waiting = False
        if self.sleep:
            time.sleep(self.sleep)
        if self.error is not None:
            raise self.error
        return {tp: o for tp, o in self.answer.items() if tp.topic in topics}


def wait_calls(fetch: Fetch, n: int) -> None:
    """Until ``fetch`` has been called ``n`` times: a prefetch calls it from its own thread."""
    deadline = time.monotonic() + 30
    while len(fetch.calls) < n:
        assert time.monotonic() < deadline, f"{len(fetch.calls)} of {n} calls"
        time.sleep(0.01)


def core(
    member_ids: Sequence[str], end: Mapping[str, list[int]] = END, *, lag: bool = True
) -> dict[str, list[tuple[str, int]]]:
    """The core lag strategy's answer for members subscribing every topic of ``end``."""
    committed = COMMITTED if lag else {}
    topics = [
        Topic(
            t,
            tuple(
                Partition(t, p, offsets=Offsets(0, n, committed.get(TopicPartition(t, p))))
                if lag
                else Partition(t, p, lag=0)
                for p, n in enumerate(ns)
            ),
        )
        for t, ns in end.items()
    ]
    group = Group.of(topics, [Member(m, frozenset(end)) for m in member_ids], id=GROUP)
    a = create("lag").assign(group)
    return {m: sorted((tp.topic, tp.partition) for tp in a[m]) for m in member_ids}


def warnings_in(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno == logging.WARNING and WARNING in r.message]


# -- user data ------------------------------------------------------------------------------


def test_user_data_round_trip() -> None:
    owned = (TopicPartition("t", 3), TopicPartition("t", 0), TopicPartition("ü", 1))
    assert decode_user_data(encode_user_data(owned, 7)) == (owned, 7)
    assert decode_user_data(encode_user_data((), None)) == ((), None)


def test_user_data_is_kafkas_sticky_layout() -> None:
    """aiokafka's own StickyAssignorUserDataV1 (Kafka's sticky user data v1) reads ours, and
    we read its."""
    owned = (TopicPartition("t", 1), TopicPartition("t", 2), TopicPartition("u", 0))
    theirs = StickyAssignorUserDataV1.decode(encode_user_data(owned, 5))
    assert [(t, list(ps)) for t, ps in theirs.previous_assignment] == [
        ("t", [1, 2]),
        ("u", [0]),
    ]
    assert theirs.generation == 5
    encoded = StickyAssignorUserDataV1([("t", [4]), ("u", [1, 0])], 9).encode()
    assert decode_user_data(encoded) == (
        (TopicPartition("t", 4), TopicPartition("u", 1), TopicPartition("u", 0)),
        9,
    )


@pytest.mark.parametrize(
    "data",
    [None, b"", b"\x00", b"\x00\x00\x00\x05\x00", b"\x00\x00\x00\x01\xff\xff", b"garbage!!"],
)
def test_unreadable_user_data_owns_nothing(data: bytes | None) -> None:
    assert decode_user_data(data) == ((), None)


def test_user_data_version_0_has_no_generation() -> None:
    v1 = encode_user_data([TopicPartition("t", 2)], 3)
    assert decode_user_data(v1[:-4]) == ((TopicPartition("t", 2),), None)


def test_capacity_rides_after_the_sticky_layout() -> None:
    """A member's capacity follows Kafka's sticky user data; aiokafka's own reader of that
    layout and ours still read the assignment and generation before it."""
    owned = (TopicPartition("t", 1), TopicPartition("u", 0))
    data = encode_user_data(owned, 5, 250.5)
    assert decode_capacity(data) == 250.5
    assert decode_user_data(data) == (owned, 5)
    theirs = StickyAssignorUserDataV1.decode(data)
    assert [(t, list(ps)) for t, ps in theirs.previous_assignment] == [("t", [1]), ("u", [0])]
    assert theirs.generation == 5
    assert decode_capacity(encode_user_data(owned, 5)) is None
    assert decode_capacity(encode_user_data((), None, 0.0)) == 0.0
    assert decode_capacity(b"garbage!!") is None


def test_capacity_setting_reaches_the_leaders_group() -> None:
    """Each member's ``capacity`` setting travels in its subscription, with either client, and
    the leader's model group has it: time-aware ``balanced`` plans with it."""
    fast = kp.assignor("balanced", group_id=GROUP, fetch=Fetch(), capacity=300)
    slow = kp.assignor("balanced", group_id=GROUP, fetch=Fetch())
    members = join_members(("c-1", fast.metadata({"t", "u"})), ("c-2", slow.metadata({"t", "u"})))
    fast.assign(CLUSTER, members)
    assert fast.last_result is not None
    assert {m.id: m.capacity for m in fast.last_result.group.members} == {
        "c-1": 300.0,
        "c-2": None,
    }
    member = aio.assignor("balanced", group_id=GROUP, fetch=Fetch(), capacity=40)
    assert aio.decode_metadata("a", member.metadata({"t"}).encode()).capacity == 40.0
    with pytest.raises(ValueError, match="capacity must be a non-negative number"):
        kp.assignor("balanced", group_id=GROUP, fetch=Fetch(), capacity=-1)


# -- connection settings --------------------------------------------------------------------


def test_client_properties() -> None:
    props = client_properties(
        {
            "bootstrap_servers": ["b1:9092", "b2:9092"],
            "security_protocol": "SASL_SSL",
            "sasl_mechanism": "SCRAM-SHA-512",
            "sasl_plain_username": "me",
            "sasl_plain_password": "secret",
            "ssl_cafile": "/ca.pem",
            "ssl_check_hostname": False,
            "client_id": None,
        },
        {"sasl.username": "override"},
    )
    assert props == {
        "bootstrap.servers": "b1:9092,b2:9092",
        "security.protocol": "sasl_ssl",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "override",
        "sasl.password": "secret",
        "ssl.ca.location": "/ca.pem",
        "ssl.endpoint.identification.algorithm": "none",
    }
    assert client_properties({"bootstrap_servers": "h:1"}) == {"bootstrap.servers": "h:1"}


def test_unknown_connection_setting_is_an_error() -> None:
    with pytest.raises(TypeError, match="ssl_context"):
        client_properties({"bootstrap_servers": "h:1", "ssl_context": object()})
    with pytest.raises(TypeError, match="enable_auto_commit"):
        kp.assignor("lag", group_id=GROUP, bootstrap_servers="h:1", enable_auto_commit=False)


def test_lag_strategy_needs_bootstrap_servers() -> None:
    with pytest.raises(ValueError, match=r"bootstrap\.servers"):
        kp.assignor("lag", group_id=GROUP)
    with pytest.raises(ValueError, match=r"bootstrap\.servers"):
        aio.assignor("lag", group_id=GROUP)
    kp.assignor("range", group_id=GROUP)  # reads no lag: no reader needed


# -- protocols ------------------------------------------------------------------------------


def test_every_strategy_under_its_protocol_name() -> None:
    built = kp.assignors(group_id=GROUP, bootstrap_servers="h:1")
    assert [a.name for a in built] == names()
    # a list mixing eager-only strategies runs eagerly, cooperative-sticky included
    assert {tuple(a.supported_protocols()) for a in built} == {(KafkaRebalanceProtocol.EAGER,)}
    assert [a.name for a in aio.assignors(group_id=GROUP, bootstrap_servers="h:1")] == names()


def test_cooperative_sticky_runs_cooperatively_on_its_own() -> None:
    alone = kp.assignor("cooperative-sticky", group_id=GROUP)
    assert alone.supported_protocols() == [KafkaRebalanceProtocol.COOPERATIVE]
    [also] = kp.assignors(["cooperative-sticky"], group_id=GROUP)
    assert also.supported_protocols() == [KafkaRebalanceProtocol.COOPERATIVE]
    eager = kp.assignor("cooperative-sticky", group_id=GROUP, protocol="eager")
    assert eager.supported_protocols() == [KafkaRebalanceProtocol.EAGER]
    with pytest.raises(ValueError, match="cooperative"):
        kp.assignor("range", group_id=GROUP, protocol=RebalanceProtocol.COOPERATIVE)


def test_protocol_for() -> None:
    """The first strategy's most preferred protocol that every strategy supports."""
    coop, sticky, balanced = create("cooperative-sticky"), create("sticky"), create("balanced")
    assert protocol_for([coop]) is RebalanceProtocol.COOPERATIVE
    assert protocol_for([coop, sticky]) is RebalanceProtocol.EAGER
    assert protocol_for([balanced]) is RebalanceProtocol.EAGER
    assert protocol_for([coop, balanced]) is RebalanceProtocol.COOPERATIVE
    assert protocol_for([balanced, coop]) is RebalanceProtocol.EAGER
    # the owned-partitions field: what a member still consumes, only on the cooperative protocol
    assert sends_consuming(RebalanceProtocol.COOPERATIVE)
    assert not sends_consuming(RebalanceProtocol.EAGER)
    # the previous assignment, in the user data: for stickiness, under either protocol...
    assert sends_previous(sticky, RebalanceProtocol.EAGER)
    assert sends_previous(balanced, RebalanceProtocol.EAGER)
    assert sends_previous(balanced, RebalanceProtocol.COOPERATIVE)
    assert sends_previous(coop, RebalanceProtocol.COOPERATIVE)
    # ...but cooperative-sticky, which reads only what members consume, sends none when eager
    assert not sends_previous(coop, RebalanceProtocol.EAGER)


def test_balanced_runs_either_protocol() -> None:
    assert kp.assignor("balanced", group_id=GROUP, bootstrap_servers="h:1").supported_protocols() == [
        KafkaRebalanceProtocol.EAGER
    ]
    coop = kp.assignor("balanced", group_id=GROUP, bootstrap_servers="h:1", protocol="cooperative")
    assert coop.supported_protocols() == [KafkaRebalanceProtocol.COOPERATIVE]
    both = kp.assignors(
        ["balanced", "cooperative-sticky"], group_id=GROUP, bootstrap_servers="h:1", protocol="cooperative"
    )
    assert [a.supported_protocols() for a in both] == [[KafkaRebalanceProtocol.COOPERATIVE]] * 2
    with pytest.raises(ValueError, match="cooperative"):
        kp.assignors(["balanced", "lag"], group_id=GROUP, bootstrap_servers="h:1", protocol="cooperative")


def test_settings() -> None:
    settings = AssignorSettings.of(
        group_id=GROUP, bootstrap_servers=["b1:9092", "b2:9092"], offsets_config={"client.id": "x"}
    )
    assert settings == AssignorSettings(
        GROUP, offsets_config={"bootstrap.servers": "b1:9092,b2:9092", "client.id": "x"}
    )
    with pytest.raises(ValueError, match="lag_timeout"):
        AssignorSettings.of(group_id=GROUP, lag_timeout=0)
    with pytest.raises(TypeError, match="group_id"):
        AssignorSettings.of(bootstrap_servers="h:1")
    # one settings object for every assignor of a consumer; aiokafka's shorter default deadline
    assert {a.glue.settings.lag_timeout for a in kp.assignors(group_id=GROUP, bootstrap_servers="h:1")} == {3.0}
    assert {a.glue.settings.lag_timeout for a in aio.assignors(group_id=GROUP, bootstrap_servers="h:1")} == {
        aio.AIOKAFKA_LAG_TIMEOUT_S
    }
    assert aio.assignor("range", group_id=GROUP, lag_timeout=4).glue.lag_timeout == 4


def test_kafka_python_validates_our_protocols() -> None:
    """kafka-python's own check that a consumer's assignors share one protocol."""
    from kafka.coordinator.consumer import ConsumerCoordinator

    def common(assignors: list[Any]) -> Any:
        fake = type("C", (), {"_assignors": {a.name: a for a in assignors}})()
        return ConsumerCoordinator._validate_rebalance_protocol(fake)

    assert common(kp.assignors(group_id=GROUP, bootstrap_servers="h:1")) == (
        KafkaRebalanceProtocol.EAGER
    )
    assert common([kp.assignor("cooperative-sticky", group_id=GROUP)]) == (
        KafkaRebalanceProtocol.COOPERATIVE
    )
    balanced = kp.assignor("balanced", group_id=GROUP, bootstrap_servers="h:1", protocol="cooperative")
    assert common([balanced]) == KafkaRebalanceProtocol.COOPERATIVE
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.errors import KafkaConfigurationError

    with pytest.raises(KafkaConfigurationError):
        common([kp.assignor("cooperative-sticky", group_id=GROUP), kp.assignor("range", group_id=GROUP)])
    # Kafka's upgrade from range: first bounce lists both and runs eagerly, the second
    # cooperative-sticky alone (docs/consumers.md); an instance declares the protocol it runs
    with pytest.raises(KafkaConfigurationError):
        common([kp.assignor("cooperative-sticky", group_id=GROUP), RangePartitionAssignor()])
    first_bounce = [kp.assignor("cooperative-sticky", group_id=GROUP, protocol="eager"), RangePartitionAssignor()]
    assert common(first_bounce) == KafkaRebalanceProtocol.EAGER
    assert common(kp.assignors(["cooperative-sticky", "range"], group_id=GROUP)) == KafkaRebalanceProtocol.EAGER


# -- kafka-python member metadata ----------------------------------------------------------


def join_members(*subscriptions: tuple[str, Any]) -> list[Any]:
    """JoinGroupResponse members as kafka-python hands them to assign(): metadata decoded."""
    member = JoinGroupResponse.JoinGroupResponseMember
    return [
        member(
            member_id=mid,
            group_instance_id=None,
            metadata=ConsumerProtocolSubscription.decode(meta.encode()),
        )
        for mid, meta in subscriptions
    ]


def test_kafka_python_subscription_round_trip() -> None:
    owned = (TopicPartition("t", 2), TopicPartition("t", 0), TopicPartition("u", 1))
    encoded = kp.encode_subscription({"u", "t"}, owned, 4, "rack-a", consuming=True).encode()
    sub = kp.decode_subscription("m1", encoded, "instance-1")
    in_field = (TopicPartition("t", 0), TopicPartition("t", 2), TopicPartition("u", 1))
    assert sub == Subscription(
        member_id="m1",
        topics=("t", "u"),
        owned=in_field,
        generation=4,
        instance_id="instance-1",
        rack="rack-a",
        consuming=in_field,
    )
    decoded = ConsumerProtocolSubscription.decode(encoded)
    assert decoded.version == kp.SUBSCRIPTION_VERSION
    assert decode_user_data(decoded.user_data) == (owned, 4)


def test_kafka_python_eager_subscription_consumes_nothing() -> None:
    """A member on the eager protocol revoked everything before it joined: the owned-partitions
    field is empty, the previous assignment is in the user data only, for stickiness."""
    owned = (TopicPartition("t", 2), TopicPartition("u", 1))
    encoded = kp.encode_subscription({"t", "u"}, owned, 4, consuming=False).encode()
    decoded = ConsumerProtocolSubscription.decode(encoded)
    assert decoded.owned_partitions == [] and decode_user_data(decoded.user_data) == (owned, 4)
    sub = kp.decode_subscription("m", encoded)
    assert (sub.owned, sub.consuming, sub.generation) == (owned, (), 4)


def test_kafka_python_reads_owned_partitions_from_sticky_user_data() -> None:
    """A version 0 subscription (an aiokafka member, Java's eager sticky) carries them there."""
    user_data = encode_user_data([TopicPartition("t", 5)], 2)
    sub = kp.decode_subscription("m", ConsumerProtocolSubscription(0, ["t"], user_data).encode())
    assert (sub.owned, sub.consuming, sub.generation) == ((TopicPartition("t", 5),), (), 2)
    plain = kp.decode_subscription("m", ConsumerProtocolSubscription(0, ["t"], b"").encode())
    assert (plain.owned, plain.generation) == ((), None)


def test_kafka_python_leader_assigns_as_the_core() -> None:
    fetch = Fetch()
    leader = kp.assignor("lag", group_id=GROUP, fetch=fetch, lag_timeout=5)
    members = join_members(*((m, leader.metadata({"t", "u"})) for m in ("c-2", "c-1", "c-3")))
    result = leader.assign(CLUSTER, members)

    assert set(result) == {"c-1", "c-2", "c-3"}
    got = {
        m: sorted(
            (tp.topic, tp.partition)
            for tp in ConsumerProtocolAssignment.decode(a.encode()).partitions()
        )
        for m, a in result.items()
    }
    assert got == core(["c-1", "c-2", "c-3"])
    assert fetch.calls == [(GROUP, ("t", "u"), 5)]
    assert leader.last_result is not None and leader.last_result.lag == "offsets"


def test_kafka_python_members_send_owned_partitions_and_generation() -> None:
    member = kp.assignor("sticky", group_id=GROUP)
    assignment = ConsumerProtocolAssignment(0, [("t", [4, 1])], b"")
    member.on_assignment(ConsumerProtocolAssignment.decode(assignment.encode()), 6)
    sub = kp.decode_subscription("m", member.metadata({"t"}).encode())
    assert set(sub.owned) == {TopicPartition("t", 1), TopicPartition("t", 4)}
    assert sub.generation == 6


def test_eager_cooperative_sticky_sends_no_owned_partitions() -> None:
    """Under the eager protocol members own nothing when they join (as in Kafka): otherwise
    the partitions cooperative-sticky withholds would stay unassigned."""
    assignment = ConsumerProtocolAssignment.decode(ConsumerProtocolAssignment(0, [("t", [0])], b"").encode())
    eager = kp.assignor("cooperative-sticky", group_id=GROUP, protocol="eager")
    eager.on_assignment(assignment, 3)
    assert kp.decode_subscription("m", eager.metadata({"t"}).encode()).owned == ()
    cooperative = kp.assignor("cooperative-sticky", group_id=GROUP)
    cooperative.on_assignment(assignment, 3)
    assert kp.decode_subscription("m", cooperative.metadata({"t"}).encode()).owned == (
        TopicPartition("t", 0),
    )


def test_cooperative_sticky_withholds_partitions_changing_owner() -> None:
    """c1 owns all 6 partitions of t, c2 joins: c1 keeps 3, the 3 that move to c2 wait for
    c1 to revoke them (the next rebalance)."""
    coop = kp.assignor("cooperative-sticky", group_id=GROUP)
    c1 = kp.encode_subscription({"t"}, [TopicPartition("t", p) for p in range(6)], 1, consuming=True)
    c2 = kp.encode_subscription({"t"}, [], None, consuming=True)
    result = coop.assign(Cluster({"t": 6}), join_members(("c1", c1), ("c2", c2)))
    first = {m: ConsumerProtocolAssignment.decode(a.encode()).partitions() for m, a in result.items()}
    assert len(first["c1"]) == 3 and first["c2"] == []
    kept = [TopicPartition("t", tp.partition) for tp in first["c1"]]
    c1 = kp.encode_subscription({"t"}, kept, 2, consuming=True)
    c2 = kp.encode_subscription({"t"}, [], 2, consuming=True)
    result = coop.assign(Cluster({"t": 6}), join_members(("c1", c1), ("c2", c2)))
    second = {m: ConsumerProtocolAssignment.decode(a.encode()).partitions() for m, a in result.items()}
    assert sorted(second["c1"]) == sorted(first["c1"])
    assert sorted(tp.partition for tp in second["c1"] + second["c2"]) == list(range(6))


def decoded(result: Mapping[str, Any]) -> dict[str, list[TopicPartition]]:
    """kafka-python assignments as members receive them."""
    return {
        m: sorted(
            TopicPartition(tp.topic, tp.partition)
            for tp in ConsumerProtocolAssignment.decode(a.encode()).partitions()
        )
        for m, a in result.items()
    }


def test_cooperative_balanced_hands_over_in_two_rounds() -> None:
    """balanced on the cooperative protocol: c1 owns all of t and u, c2 joins. Round one gives
    c2 nothing c1 holds; c1 keeps the rest. Round two, c1 having revoked the partitions that
    move, gives them to c2: the target of round one, which is the core's sticky answer."""
    fetch = Fetch()
    leader = kp.assignor("balanced", group_id=GROUP, fetch=fetch, protocol="cooperative")
    everything = [TopicPartition(t, p) for t, ns in END.items() for p in range(len(ns))]
    c1 = kp.encode_subscription({"t", "u"}, everything, 1, consuming=True)
    c2 = kp.encode_subscription({"t", "u"}, [], None, consuming=True)
    first = decoded(leader.assign(CLUSTER, join_members(("c1", c1), ("c2", c2))))
    result = leader.last_result
    assert result is not None and result.protocol is RebalanceProtocol.COOPERATIVE
    assert first["c2"] == [] and set(first["c1"]) | set(result.withheld) == set(everything)
    target = create("balanced").assign(result.group)
    assert first["c1"] == sorted(target["c1"]) and set(result.withheld) == set(target["c2"])

    c1 = kp.encode_subscription({"t", "u"}, first["c1"], 2, consuming=True)
    c2 = kp.encode_subscription({"t", "u"}, [], 2, consuming=True)
    second = decoded(leader.assign(CLUSTER, join_members(("c1", c1), ("c2", c2))))
    assert leader.last_result is not None and leader.last_result.withheld == ()
    assert second == {m: sorted(tps) for m, tps in target.partitions.items()}


def test_eager_balanced_stays_sticky() -> None:
    """On the eager protocol balanced still gets what members owned, and withholds nothing."""
    member = kp.assignor("balanced", group_id=GROUP, fetch=Fetch())
    member.on_assignment(ConsumerProtocolAssignment.decode(ConsumerProtocolAssignment(0, [("t", [0, 2])], b"").encode()), 4)
    sub = kp.decode_subscription("m", member.metadata({"t"}).encode())
    assert sub.owned == (TopicPartition("t", 0), TopicPartition("t", 2)) and sub.generation == 4
    assert sub.consuming == ()
    member.assign(CLUSTER, join_members(("m", member.metadata({"t"})), ("n", kp.encode_subscription({"t"}, [], None, consuming=False))))
    assert member.last_result is not None and member.last_result.withheld == ()
    assert sorted(tp for m in ("m", "n") for tp in member.last_result.partitions(m)) == [
        TopicPartition("t", p) for p in range(6)
    ]


def kp_member(name: str, protocol: str, owned: Mapping[str, list[int]], generation: int | None) -> Any:
    """A kafka-python member running ``name`` on ``protocol`` that was assigned ``owned``."""
    member = kp.assignor(name, group_id=GROUP, fetch=Fetch(), protocol=protocol)
    if owned:
        assignment = ConsumerProtocolAssignment(0, list(owned.items()), b"")
        member.on_assignment(ConsumerProtocolAssignment.decode(assignment.encode()), generation)
    return member


def mixed_group(name: str) -> tuple[dict[str, Any], dict[str, tuple[TopicPartition, ...]]]:
    """A group switching protocols: ``e`` runs the eager protocol, ``c`` the cooperative one,
    both owned partitions in generation 5; ``n`` just joined (cooperative). The members, and
    what each was assigned."""
    was = {"e": {"t": [0, 1, 2]}, "c": {"t": [3, 4, 5], "u": [0, 1]}, "n": {}}
    protocols = {"e": "eager", "c": "cooperative", "n": "cooperative"}
    members = {m: kp_member(name, protocols[m], was[m], 5) for m in was}
    owned = {m: tuple(TopicPartition(t, p) for t, ps in was[m].items() for p in ps) for m in was}
    return members, owned


@pytest.mark.parametrize("leader", ["e", "c"], ids=["eager-leader", "cooperative-leader"])
def test_mixed_protocols_balanced(leader: str) -> None:
    """balanced, members on both protocols (a rolling switch), whichever protocol the leader
    runs: the eager member's old partitions go to their new owners at once (it revoked them
    before it joined; withheld, they would wait for a rebalance nobody starts); the cooperative
    member's moving partitions are withheld until it has revoked them; stickiness comes from
    both (the eager member's previous assignment, in the user data)."""
    members, owned = mixed_group("balanced")
    metadata = {m: a.metadata({"t", "u"}) for m, a in members.items()}
    e, c = (kp.decode_subscription(m, metadata[m].encode()) for m in "ec")
    assert (e.owned, e.consuming) == (owned["e"], ())
    assert (c.owned, c.consuming) == (owned["c"], owned["c"])

    got = decoded(members[leader].assign(CLUSTER, join_members(*metadata.items())))
    result = members[leader].last_result
    assert result is not None and result.protocol.value == ("eager" if leader == "e" else "cooperative")
    assert result.consuming == {"c": owned["c"]}
    assert {m.id: m.owned for m in result.group.members} == owned
    target = create("balanced").assign(result.group)
    leaving_c = set(owned["c"]) - set(target["c"])
    leaving_e = set(owned["e"]) - set(target["e"])
    assert leaving_c and leaving_e, "the test needs partitions moving from both"
    assert set(result.withheld) == leaving_c
    assert got == {m: sorted(tp for tp in tps if tp not in leaving_c) for m, tps in target.partitions.items()}
    assert all(any(tp in got[m] for m in got if m != "e") for tp in leaving_e), "handed over at once"


@pytest.mark.parametrize("leader", ["e", "c"], ids=["eager-leader", "cooperative-leader"])
def test_mixed_protocols_cooperative_sticky(leader: str) -> None:
    """cooperative-sticky, members on both protocols (Kafka's second bounce), whichever the
    leader runs: the eager member sends nothing (as Kafka's), the cooperative member's moving
    partitions are withheld, every other partition is assigned."""
    members, owned = mixed_group("cooperative-sticky")
    metadata = {m: a.metadata({"t", "u"}) for m, a in members.items()}
    e = kp.decode_subscription("e", metadata["e"].encode())
    assert (e.owned, e.consuming) == ((), ())

    got = decoded(members[leader].assign(CLUSTER, join_members(*metadata.items())))
    result = members[leader].last_result
    assert result is not None and result.consuming == {"c": owned["c"]}
    assert result.withheld and set(result.withheld) == set(owned["c"]) - set(got["c"])
    everything = {TopicPartition(t, p) for t, ns in END.items() for p in range(len(ns))}
    assert {tp for tps in got.values() for tp in tps} == everything - set(result.withheld)
    assert set(got["c"]) <= set(owned["c"])


def test_leaders_of_both_protocols_agree() -> None:
    for name in ("balanced", "cooperative-sticky"):
        results = []
        for leader in "ec":
            members, _ = mixed_group(name)
            metadata = {m: a.metadata({"t", "u"}) for m, a in members.items()}
            results.append(decoded(members[leader].assign(CLUSTER, join_members(*metadata.items()))))
        assert results[0] == results[1], name


def test_eager_group_withholds_nothing() -> None:
    """Every member eager: nobody consumes anything when it joins, nothing is withheld, and
    balanced stays sticky through the user data."""
    members = {m: kp_member("balanced", "eager", owned, 3) for m, owned in (("a", {"t": [0, 1, 2, 3, 4, 5]}), ("b", {"u": [0, 1]}), ("n", {}))}
    leader = members["a"]
    got = decoded(leader.assign(CLUSTER, join_members(*((m, a.metadata({"t", "u"})) for m, a in members.items()))))
    assert leader.last_result is not None
    assert leader.last_result.withheld == () and leader.last_result.consuming == {}
    assert sum(map(len, got.values())) == 8 and all(got.values())


# -- the leader's glue ----------------------------------------------------------------------


def subs(*member_ids: str, topics: tuple[str, ...] = ("t", "u")) -> list[Subscription]:
    return [Subscription(m, topics) for m in member_ids]


def test_failed_read_assigns_with_lag_0_and_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    fetch = Fetch(error=RuntimeError("broker on fire"))
    glue = GroupAssignor("lag", AssignorSettings(GROUP, fetch=fetch, lag_timeout=1))
    with caplog.at_level(logging.WARNING):
        result = glue.assign(subs("b", "a", "c"), CLUSTER.partitions_for_topic)
    assert result.lag == "unavailable"
    assert result.error is not None and "broker on fire" in result.error
    assert {m: sorted((tp.topic, tp.partition) for tp in result.partitions(m)) for m in "abc"} == (
        core("abc", lag=False)
    )
    [warning] = warnings_in(caplog)
    assert GROUP in warning.message and "as if every lag were 0" in warning.message
    assert "\n" not in warning.getMessage()


def test_slow_read_is_cut_at_the_deadline(caplog: pytest.LogCaptureFixture) -> None:
    fetch = Fetch(sleep=3.0)
    glue = GroupAssignor("lag", AssignorSettings(GROUP, fetch=fetch, lag_timeout=0.5))
    started = time.monotonic()
    with caplog.at_level(logging.WARNING):
        result = glue.assign(subs("a", "b"), CLUSTER.partitions_for_topic)
    assert time.monotonic() - started < 1.5
    assert result.lag == "unavailable" and result.error == "no answer within 0.5 s"
    assert len(warnings_in(caplog)) == 1


def test_strategies_without_lag_never_read(caplog: pytest.LogCaptureFixture) -> None:
    for name in names():
        if create(name).uses_lag:
            continue
        fetch = Fetch(error=AssertionError("must not be called"))
        glue = GroupAssignor(name, AssignorSettings(GROUP, fetch=fetch))
        glue.prefetch({"t"})
        result = glue.assign(subs("a", "b"), CLUSTER.partitions_for_topic)
        assert result.lag == "unused" and fetch.calls == []
        assert sorted(tp for m in "ab" for tp in result.partitions(m)) == sorted(
            TopicPartition(t, p) for t, ns in END.items() for p in range(len(ns))
        )
    assert warnings_in(caplog) == []


def test_what_a_strategy_loads_on_first_use_is_imported_as_its_consumer_is_built() -> None:
    """``balanced`` imports SciPy's matching in its first handover to owners, about half a
    second; the assignor imports it in a thread as it is built, not in the leader's first
    ``assign()`` on the client's event loop. In a fresh interpreter: this one has SciPy."""
    code = (
        "import sys\n"
        "from lagassign.kafka.group import GroupAssignor\n"
        "from lagassign.kafka.settings import AssignorSettings\n"
        "assert 'scipy.optimize' not in sys.modules and 'numpy' not in sys.modules\n"
        "ranged = GroupAssignor('range', AssignorSettings('g', fetch=lambda *a: {}))\n"
        "off = GroupAssignor('balanced', AssignorSettings('g', fetch=lambda *a: {}, import_ahead=False))\n"
        "assert ranged.importing is None and off.importing is None\n"
        "assert 'numpy' not in sys.modules\n"
        "glue = GroupAssignor('balanced', AssignorSettings('g', fetch=lambda *a: {}))\n"
        "glue.importing.join()\n"
        "print('scipy.optimize' in sys.modules, 'numpy' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=300
    )
    assert (done.returncode, done.stdout.split()) == (0, ["True", "True"]), done.stderr
    assert "Traceback" not in done.stderr


def test_a_module_that_fails_to_import_ahead_is_left_to_the_strategy() -> None:
    sys.modules.pop("colorsys", None)  # a small module of the standard library, nothing of ours
    thread = import_ahead(["lagassign_no_such_module", "colorsys"])
    assert thread is not None
    thread.join()
    assert "colorsys" in sys.modules and "lagassign_no_such_module" not in sys.modules
    assert import_ahead(["colorsys"]) is None  # nothing left to import


def test_unknown_topics_and_stale_owned_partitions() -> None:
    """A topic the metadata lacks gets no partitions (and no read); owned partitions of topics
    or partitions that no longer exist are ignored."""
    fetch = Fetch()
    glue = GroupAssignor("sticky", AssignorSettings(GROUP, fetch=fetch))
    members = [
        Subscription("a", ("t", "gone"), owned=(TopicPartition("t", 9), TopicPartition("gone", 0))),
        Subscription("b", ("t",), owned=(TopicPartition("t", 1),)),
    ]
    result = glue.assign(members, CLUSTER.partitions_for_topic)
    assert result.group.topics["gone"].partitions == ()
    assert result.group.member("a").owned == ()
    assert TopicPartition("t", 1) in result.partitions("b")
    lag = GroupAssignor("lag", AssignorSettings(GROUP, fetch=fetch))
    lag.assign([Subscription("a", ("gone",))], CLUSTER.partitions_for_topic)
    assert fetch.calls == []  # nothing to read: no subscribed topic has partitions


def test_prefetch_is_used_once(caplog: pytest.LogCaptureFixture) -> None:
    fetch = Fetch()
    glue = GroupAssignor("lag", AssignorSettings(GROUP, fetch=fetch))
    glue.prefetch({"t", "u"})
    glue.prefetch({"u"})  # a JoinGroup retry: the recent prefetch covers it
    wait_calls(fetch, 1)
    assert len(fetch.calls) == 1
    first = glue.assign(subs("a", "b"), CLUSTER.partitions_for_topic)
    assert first.prefetched and first.lag == "offsets" and len(fetch.calls) == 1
    second = glue.assign(subs("a", "b"), CLUSTER.partitions_for_topic)
    assert not second.prefetched and len(fetch.calls) == 2
    assert first.assignment == second.assignment


def test_prefetch_missing_a_topic_reads_only_that_topic() -> None:
    """A new leader's prefetch read its own topics; assign() reads only the group's others and
    assigns from both reads as from one read of all."""
    fetch = Fetch()
    glue = GroupAssignor("lag", AssignorSettings(GROUP, fetch=fetch))
    glue.prefetch({"t"})
    result = glue.assign(subs("a", "b"), CLUSTER.partitions_for_topic)
    assert result.prefetched and result.lag == "offsets"
    assert [c[1] for c in fetch.calls] == [("t",), ("u",)]
    inline = GroupAssignor("lag", AssignorSettings(GROUP, fetch=Fetch()))
    assert result.assignment == inline.assign(subs("a", "b"), CLUSTER.partitions_for_topic).assignment


def test_a_failed_read_of_the_missing_topics_is_reported_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fetch = Fetch()
    glue = GroupAssignor("lag", AssignorSettings(GROUP, fetch=fetch))
    glue.prefetch({"t"})
    wait_calls(fetch, 1)
    fetch.error = RuntimeError("nope")
    with caplog.at_level(logging.WARNING):
        result = glue.assign(subs("a", "b"), CLUSTER.partitions_for_topic)
    assert result.lag == "unavailable" and result.error == "RuntimeError: nope"
    assert [c[1] for c in fetch.calls] == [("t",), ("u",)] and len(warnings_in(caplog)) == 1


def test_failed_prefetch_is_reported_by_assign(caplog: pytest.LogCaptureFixture) -> None:
    fetch = Fetch(error=RuntimeError("nope"))
    glue = GroupAssignor("lag", AssignorSettings(GROUP, fetch=fetch))
    with caplog.at_level(logging.WARNING):
        glue.prefetch({"t", "u"})
        assert warnings_in(caplog) == []
        result = glue.assign(subs("a", "b"), CLUSTER.partitions_for_topic)
    assert result.prefetched and result.lag == "unavailable"
    assert len(fetch.calls) == 1 and len(warnings_in(caplog)) == 1


def test_kafka_python_members_prefetch_before_they_join() -> None:
    """Every member reads offsets in metadata(), before JoinGroup, since any member may come
    out of it as the leader: the first member of a group, a new leader after the last one
    left. The leader's assign() uses that read, and reads only the group's topics it lacked;
    a member that led prefetches the group's topics too; one that did not drops its read."""
    fetch = Fetch()
    member = kp.assignor("lag", group_id=GROUP, fetch=fetch)
    first = member.metadata({"t"})  # never led: may lead, prefetches its own topics
    wait_calls(fetch, 1)
    assert [c[1] for c in fetch.calls] == [("t",)]
    other = kp.encode_subscription({"t", "u"}, [], None, consuming=False)
    member.assign(CLUSTER, join_members(("a", first), ("b", other)))
    assert member.last_result is not None and member.last_result.prefetched
    assert [c[1] for c in fetch.calls] == [("t",), ("u",)]  # only what the prefetch lacked
    member.on_assignment(ConsumerProtocolAssignment.decode(ConsumerProtocolAssignment(0, [], b"").encode()), 1)
    member.metadata({"t"})  # led: prefetches its own and the group's topics
    wait_calls(fetch, 3)
    assert fetch.calls[-1][1] == ("t", "u")
    result = member.assign(CLUSTER, join_members(("a", kp.encode_subscription({"t"}, [], 1, consuming=False)), ("b", kp.encode_subscription({"t", "u"}, [], 1, consuming=False))))
    assert len(result) == 2 and len(fetch.calls) == 3
    assert member.last_result is not None and member.last_result.prefetched
    member.on_assignment(ConsumerProtocolAssignment.decode(ConsumerProtocolAssignment(0, [], b"").encode()), 2)
    member.metadata({"t"})  # led again: the group's topics
    wait_calls(fetch, 4)
    # a member that did not lead drops its prefetch, and reads its own topics at its next join
    member.on_assignment(ConsumerProtocolAssignment.decode(ConsumerProtocolAssignment(0, [], b"").encode()), 3)
    member.metadata({"t"})
    wait_calls(fetch, 5)
    assert [c[1] for c in fetch.calls[3:]] == [("t", "u"), ("t",)]


def test_kafka_python_leader_reads_off_the_event_loop() -> None:
    """metadata() and assign() run inside kafka-python's event loop: the last leader's
    metadata() returns while its read still runs, and assign() takes the read's answer."""
    gate = threading.Event()
    fetch = Fetch(gate=gate)
    member = kp.assignor("lag", group_id=GROUP, fetch=fetch, lag_timeout=60)
    gate.set()  # the first leader: its own topic prefetched, the other's read in assign()
    member.assign(CLUSTER, join_members(("a", member.metadata({"t"})), ("b", kp.encode_subscription({"t", "u"}, [], None, consuming=False))))
    member.on_assignment(ConsumerProtocolAssignment.decode(ConsumerProtocolAssignment(0, [], b"").encode()), 1)
    assert len(fetch.calls) == 2
    gate.clear()
    member.metadata({"t"})  # returns although the read cannot finish yet
    wait_calls(fetch, 3)
    assert fetch.waiting
    gate.set()
    joined = (("a", kp.encode_subscription({"t"}, [], 1, consuming=False)), ("b", kp.encode_subscription({"t", "u"}, [], 1, consuming=False)))
    member.assign(CLUSTER, join_members(*joined))
    result = member.last_result
    assert result is not None and result.prefetched and result.lag == "offsets"
    assert len(fetch.calls) == 3
    # what a leader reading in assign() computes from the same offsets
    inline = GroupAssignor("lag", AssignorSettings(GROUP, fetch=Fetch()))
    subscriptions = [kp.decode_subscription(m, data.encode()) for m, data in joined]
    assert result.assignment == inline.assign(subscriptions, CLUSTER.partitions_for_topic).assignment


def test_a_leader_whose_read_still_runs_takes_its_earlier_read() -> None:
    """Issue 15: assign() runs on kafka-python's event loop, which a wait blocks. A leader
    whose JoinGroup answer came before its read ended (it joined last) does not wait for that
    read when a read of its own from an earlier join, younger than PREFETCH_MAX_AGE, covers
    the group's topics: it assigns from that one (``offsets_age`` says how old), and the read
    still running serves the next rebalance."""
    gate = threading.Event()
    gate.set()
    fetch = Fetch(gate=gate)
    member = kp.assignor("lag", group_id=GROUP, fetch=fetch, lag_timeout=60)
    empty = ConsumerProtocolAssignment.decode(ConsumerProtocolAssignment(0, [], b"").encode())
    other = ("b", kp.encode_subscription({"t", "u"}, [], None, consuming=False))
    member.assign(CLUSTER, join_members(("a", member.metadata({"t", "u"})), other))
    first = member.last_result
    assert first is not None and first.lag == "offsets" and first.offsets_age is not None
    member.on_assignment(empty, 1)
    gate.clear()
    mine = member.metadata({"t", "u"})  # this read cannot end until the gate opens
    wait_calls(fetch, 2)
    assert fetch.waiting
    member.assign(CLUSTER, join_members(("a", mine), other))
    second = member.last_result
    assert second is not None and second.lag == "offsets" and second.prefetched
    assert fetch.waiting  # assigned while its own read still ran
    assert second.offsets_age is not None and second.offsets_age > first.offsets_age
    assert second.assignment == first.assignment  # the same offsets
    member.on_assignment(empty, 2)
    gate.set()
    wait_calls(fetch, 2)
    deadline = time.monotonic() + 30
    while fetch.waiting:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    member.metadata({"t", "u"})
    wait_calls(fetch, 3)
    member.assign(CLUSTER, join_members(("a", mine), other))
    third = member.last_result
    assert third is not None and third.lag == "offsets" and third.prefetched


def test_a_lone_leader_does_not_wait_for_its_read() -> None:
    """Issue 15: a group of one member (a new group's first, on a broker without
    group.initial.rebalance.delay.ms) gets every partition whatever the lags: its leader does
    not wait on kafka-python's event loop for the read it started as it joined."""
    gate = threading.Event()
    fetch = Fetch(gate=gate)
    member = kp.assignor("lag", group_id=GROUP, fetch=fetch, lag_timeout=60)
    try:
        member.assign(CLUSTER, join_members(("a", member.metadata({"t", "u"}))))
        result = member.last_result
        assert result is not None and fetch.waiting
        assert (result.lag, result.prefetched, result.offsets_age) == ("unused", False, None)
        assert sorted(result.partitions("a")) == sorted(offsets_of())
    finally:
        gate.set()


def test_fetch_within_passes_the_answer() -> None:
    assert fetch_within(Fetch(), GROUP, ["u"], 1.0) == {
        tp: o for tp, o in offsets_of().items() if tp.topic == "u"
    }
    with pytest.raises(OffsetsUnavailable, match="ValueError: x"):
        fetch_within(Fetch(error=ValueError("x")), GROUP, ["u"], 1.0)


def test_build_group_derives_lag_from_offsets() -> None:
    group = build_group(
        GROUP,
        subs("a"),
        {"t": [0, 1], "u": [0]},
        {TopicPartition("t", 0): Offsets(10, 50, None), TopicPartition("t", 1): Offsets(0, 8, 3)},
        auto_offset_reset="earliest",
    )
    from lagassign.lag_rules import group_lags

    assert group_lags(group) == {
        TopicPartition("t", 0): 40,
        TopicPartition("t", 1): 5,
        TopicPartition("u", 0): 0,
    }
    assert group.auto_offset_reset == "earliest" and group.id == GROUP


def test_topics_made_ahead_are_the_topics_build_group_makes() -> None:
    """A prefetch makes the model's topics of its answer in its own thread (model_topics);
    build_group takes one as it is where the metadata gives its partitions, and makes the topic
    itself where the two disagree: the same group either way."""
    offsets = offsets_of()
    numbers = {t: list(range(len(ns))) for t, ns in END.items()}
    prepared = model_topics(offsets)
    made = build_group(GROUP, subs("a", "b"), numbers, offsets)
    ahead = build_group(GROUP, subs("a", "b"), numbers, offsets, prepared=prepared)
    assert ahead == made
    assert all(ahead.topics[t] is prepared[t] for t in END)
    # the metadata knows a partition the read did not answer for: "t" is made afresh
    grown = {**numbers, "t": [*numbers["t"], 6]}
    made = build_group(GROUP, subs("a", "b"), grown, offsets)
    ahead = build_group(GROUP, subs("a", "b"), grown, offsets, prepared=prepared)
    assert ahead == made and ahead.topics["t"] is not prepared["t"]
    assert ahead.topics["u"] is prepared["u"]
    assert ahead.topics["t"].partitions[-1].lag == 0


def test_a_prefetch_hands_assign_its_topics_made_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    """The leader's assign() takes the topics its prefetch made off the event loop, and the
    plan is the one of a read made inside assign()."""
    import lagassign.kafka.group as glue_module

    made: list[dict[str, Any]] = []

    def noted(offsets: Mapping[TopicPartition, Offsets]) -> dict[str, Any]:
        made.append(model_topics(offsets))
        return made[-1]

    monkeypatch.setattr(glue_module, "model_topics", noted)
    fetch = Fetch()
    glue = GroupAssignor("lag", AssignorSettings(GROUP, fetch=fetch))
    glue.prefetch({"t", "u"})
    result = glue.assign(subs("a", "b"), CLUSTER.partitions_for_topic)
    assert result.prefetched and result.lag == "offsets"
    assert len(made) == 1 and all(result.group.topics[t] is made[0][t] for t in END)
    inline = GroupAssignor("lag", AssignorSettings(GROUP, fetch=Fetch()))
    assert result.assignment == inline.assign(subs("a", "b"), CLUSTER.partitions_for_topic).assignment
    assert result.group == inline.assign(subs("a", "b"), CLUSTER.partitions_for_topic).group


def test_an_answer_within_the_deadline_is_used_however_long_its_topics_take(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Making a prefetch's topics is not part of the read: an answer in time is used even when
    the topics are made after the deadline (result() waits for them, as assign() would take
    to make them itself)."""
    import lagassign.kafka.group as glue_module

    gate = threading.Event()

    def slow(offsets: Mapping[TopicPartition, Offsets]) -> dict[str, Any]:
        gate.wait()
        return model_topics(offsets)

    monkeypatch.setattr(glue_module, "model_topics", slow)
    fetching = glue_module._Fetching(Fetch(), GROUP, ["t", "u"], 0.05, prepare=True)
    deadline = time.monotonic() + 30
    while not fetching.done:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    time.sleep(0.2)  # past the read's deadline (0.05 s and the grace)
    assert not fetching.settled
    threading.Timer(0.1, gate.set).start()
    assert fetching.result() == offsets_of()
    assert set(fetching.topics) == {"t", "u"}


def test_a_member_that_never_leads_keeps_no_finished_reads() -> None:
    """Every member prefetches as it joins; one that does not lead drops its read
    (discard_prefetch), which keeps only reads still running and the newest that ended."""
    fetch = Fetch()
    glue = GroupAssignor("lag", AssignorSettings(GROUP, fetch=fetch))
    for n in range(1, 6):
        glue.prefetch({"t", "u"} if n % 2 else {"t"})
        prefetched = glue._prefetched
        assert prefetched is not None
        deadline = time.monotonic() + 30
        while not prefetched.fetching.settled:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        glue.discard_prefetch()
        assert glue._unused == []
        assert glue._known is not None and glue._known.at == prefetched.at
    assert len(fetch.calls) == 5


def test_a_partition_the_read_gave_no_offsets_is_made_by_build_group() -> None:
    """model_topics leaves out what build_group gives lag 0 (no offsets); the topic is then
    made afresh, the same as without it."""
    offsets: dict[TopicPartition, Any] = {**offsets_of(), TopicPartition("u", 1): None}
    numbers = {t: list(range(len(ns))) for t, ns in END.items()}
    prepared = model_topics(offsets)
    made = build_group(GROUP, subs("a", "b"), numbers, offsets)
    ahead = build_group(GROUP, subs("a", "b"), numbers, offsets, prepared=prepared)
    assert ahead == made and ahead.topics["u"] is not prepared["u"]
    assert ahead.topics["t"] is prepared["t"]


def test_unreachable_reader_falls_back_within_the_deadline(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A real OffsetsReader pointed at a closed port: lag 0 after at most the deadline."""
    glue = GroupAssignor(
        "lag",
        AssignorSettings(
            GROUP, offsets_config={"bootstrap.servers": f"127.0.0.1:{closed_port()}"}, lag_timeout=1.0
        ),
    )
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="lagassign.kafka.group"):
        result = glue.assign(subs("a", "b", "c"), CLUSTER.partitions_for_topic)
    assert time.monotonic() - started < 1.0 + 0.5
    assert result.lag == "unavailable"
    assert {m: sorted((tp.topic, tp.partition) for tp in result.partitions(m)) for m in "abc"} == (
        core("abc", lag=False)
    )
    assert len(warnings_in(caplog)) == 1


# -- aiokafka -------------------------------------------------------------------------------


def test_aiokafka_leader_assigns_as_the_core() -> None:
    fetch = Fetch()
    leader = aio.assignor("lag", group_id=GROUP, fetch=fetch)
    metadata = {
        m: ConsumerProtocolMemberMetadata.decode(leader.metadata({"t", "u"}).encode())
        for m in ("x", "z", "y")
    }
    result = leader.assign(CLUSTER, metadata)
    got = {
        m: sorted(
            (tp.topic, tp.partition)
            for tp in ConsumerProtocolMemberAssignment.decode(a.encode()).partitions()
        )
        for m, a in result.items()
    }
    assert got == core(["x", "y", "z"])
    assert fetch.calls == [(GROUP, ("t", "u"), aio.AIOKAFKA_LAG_TIMEOUT_S)]


def test_aiokafka_members_prefetch_before_they_join() -> None:
    """As with kafka-python: every aiokafka member starts its read in metadata(), which runs on
    the event loop as the member sends JoinGroup; the leader's assign() uses it and reads only
    the group's topics it lacked; a member that led prefetches the group's topics too, one that
    did not drops its read (GroupAssignor.joining and synced, shared by both adapters)."""
    gate = threading.Event()
    fetch = Fetch(gate=gate)
    # (a deadline no wait on a busy machine reaches: the gate opens after metadata() returns)
    member = aio.assignor("lag", group_id=GROUP, fetch=fetch, lag_timeout=60)
    first = member.metadata({"t"})  # returns although the read cannot end yet
    wait_calls(fetch, 1)
    assert fetch.waiting and [c[1] for c in fetch.calls] == [("t",)]
    gate.set()
    other = ConsumerProtocolMemberMetadata(0, ["t", "u"], b"")
    member.assign(CLUSTER, {"a": first, "b": other})
    result = member.last_result
    assert result is not None and result.prefetched and result.lag == "offsets"
    assert [c[1] for c in fetch.calls] == [("t",), ("u",)]  # only what the prefetch lacked
    empty = ConsumerProtocolMemberAssignment(0, [], struct.pack(">i", 1))
    member.on_assignment(ConsumerProtocolMemberAssignment.decode(empty.encode()))
    member.metadata({"t"})  # led: its own and the group's topics
    wait_calls(fetch, 3)
    assert fetch.calls[-1][1] == ("t", "u")
    # a member that did not lead drops its prefetch, and reads its own topics at its next join
    member.on_assignment(ConsumerProtocolMemberAssignment.decode(empty.encode()))
    member.metadata({"t"})
    wait_calls(fetch, 4)
    assert fetch.calls[-1][1] == ("t",)


def test_aiokafka_generations_count_assignments() -> None:
    """aiokafka tells assignors no generation: the leader numbers its assignments and members
    report the number back with their owned partitions."""
    a = aio.assignor("sticky", group_id=GROUP)
    first = a.assign(Cluster({"t": 4}), {"m": ConsumerProtocolMemberMetadata.decode(a.metadata({"t"}).encode())})
    a.on_assignment(ConsumerProtocolMemberAssignment.decode(first["m"].encode()))
    sub = aio.decode_metadata("m", a.metadata({"t"}).encode())
    assert sub.generation == 1 and len(sub.owned) == 4 and sub.consuming == ()
    second = a.assign(Cluster({"t": 4}), {"m": ConsumerProtocolMemberMetadata.decode(a.metadata({"t"}).encode())})
    a.on_assignment(ConsumerProtocolMemberAssignment.decode(second["m"].encode()))
    assert aio.decode_metadata("m", a.metadata({"t"}).encode()).generation == 2


def test_aiokafka_cooperative_sticky_runs_eagerly() -> None:
    """aiokafka is eager only: members send no owned partitions, so cooperative-sticky
    withholds nothing and every partition is assigned at once."""
    members = [aio.assignor("cooperative-sticky", group_id=GROUP) for _ in range(2)]
    for m in members:
        m.on_assignment(ConsumerProtocolMemberAssignment(0, [("t", [0, 1, 2])], b"\x00\x00\x00\x01"))
        sub = aio.decode_metadata("m", m.metadata({"t"}).encode())
        assert (sub.owned, sub.consuming) == ((), ())
    metadata = {
        f"m{i}": ConsumerProtocolMemberMetadata.decode(m.metadata({"t"}).encode())
        for i, m in enumerate(members)
    }
    result = members[0].assign(Cluster({"t": 3}), metadata)
    assigned = sorted(tp.partition for r in result.values() for tp in r.partitions())
    assert assigned == [0, 1, 2]


def test_aiokafka_balanced_withholds_nothing() -> None:
    """aiokafka members are eager: balanced keeps what they owned (user data) and, nobody
    consuming anything when it joins, withholds nothing."""
    members = [aio.assignor("balanced", group_id=GROUP, fetch=Fetch()) for _ in range(3)]
    members[0].on_assignment(ConsumerProtocolMemberAssignment(0, [("t", list(range(6))), ("u", [0, 1])], b"\x00\x00\x00\x01"))
    metadata = {f"m{i}": ConsumerProtocolMemberMetadata.decode(m.metadata({"t", "u"}).encode()) for i, m in enumerate(members)}
    result = members[0].assign(CLUSTER, metadata)
    assert members[0].last_result is not None and members[0].last_result.withheld == ()
    assert len(members[0].last_result.group.member("m0").owned) == 8
    assert sorted((tp.topic, tp.partition) for r in result.values() for tp in r.partitions()) == sorted(
        (t, p) for t, ns in END.items() for p in range(len(ns))
    )
