"""OffsetsReader against the real broker: exact offsets, group snapshots, live members, faults.

Each test makes its own topics and group, so the tests do not depend on one another. The
helpers here (topics with a chosen backlog, committed offsets, a running group) are also used by
test_cli_live.py.
"""

from __future__ import annotations

import contextlib
import logging
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager

import pytest
from confluent_kafka import Consumer, KafkaError
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient

from lagassign.kafka.offsets import (
    ClientConfigError,
    GroupSnapshot,
    LiveMember,
    OffsetsError,
    OffsetsReader,
    PartitionState,
)
from lagassign.lag_rules import group_lags
from lagassign.model import Offsets, TopicPartition
from tests.kafka.broker import closed_port, commit, create_topics, produce

REQUEST_TIMEOUT_S = 30.0
READ_TIMEOUT_S = 20.0
#: how long a group may take to settle (join, sync, assignment seen by describe)
SETTLE_S = 60.0

# a skewed backlog: one hot partition, an empty one, a few small ones
HOT = [400, 0, 7, 13, 2, 120]
COLD = [5, 9]

MakeTopic = Callable[[Sequence[int]], str]


def unique(prefix: str) -> str:
    return f"lagassign-{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def admin(kafka_bootstrap: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": kafka_bootstrap})


@pytest.fixture
def make_topic(admin: AdminClient, kafka_bootstrap: str) -> Iterator[MakeTopic]:
    """Creates topics with ``counts[p]`` records in partition p; deletes them afterwards."""
    made: list[str] = []

    def make(counts: Sequence[int]) -> str:
        name = unique("topic")
        create_topics(admin, {name: len(counts)})
        made.append(name)
        produce(kafka_bootstrap, {(name, p): n for p, n in enumerate(counts)})
        return name

    yield make
    if made:
        for future in admin.delete_topics(made, request_timeout=REQUEST_TIMEOUT_S).values():
            future.result(timeout=REQUEST_TIMEOUT_S)


def _poll_all(consumers: Sequence[Consumer]) -> None:
    for c in consumers:
        msg = c.poll(0.1)
        assert (
            msg is None or msg.error() is None or msg.error().code() in (KafkaError._PARTITION_EOF,)
        ), msg.error()


@contextmanager
def running_group(
    bootstrap: str,
    group: str,
    topics: Sequence[str],
    members: int,
    protocol: str = "classic",
    instance_ids: Sequence[str | None] = (),
) -> Iterator[list[Consumer]]:
    """``members`` subscribed consumers, polled until every partition of ``topics`` is assigned
    exactly once and the coordinator reports the group Stable with that assignment.
    ``instance_ids``: the first members' ``group.instance.id`` (static membership)."""
    consumers = [
        Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "group.protocol": protocol,
                "client.id": f"member-{i}",
                "enable.auto.commit": False,
                "auto.offset.reset": "latest",  # read nothing, so no position moves
                **({"session.timeout.ms": 10_000} if protocol == "classic" else {}),
                **(
                    {"group.instance.id": instance_ids[i]}
                    if i < len(instance_ids) and instance_ids[i]
                    else {}
                ),
            }
        )
        for i in range(members)
    ]
    admin = AdminClient({"bootstrap.servers": bootstrap})
    meta = admin.list_topics(timeout=REQUEST_TIMEOUT_S).topics
    everything = {(t, p) for t in topics for p in meta[t].partitions}
    try:
        for c in consumers:
            c.subscribe(list(topics))
        deadline = time.monotonic() + SETTLE_S
        while True:
            assert time.monotonic() < deadline, "the group did not settle"
            _poll_all(consumers)
            owned = [{(tp.topic, tp.partition) for tp in c.assignment()} for c in consumers]
            if sum(map(len, owned)) != len(everything) or set().union(*owned) != everything:
                continue
            described = admin.describe_consumer_groups([group], request_timeout=5)[group].result()
            seen = {
                m.client_id: {(tp.topic, tp.partition) for tp in m.assignment.topic_partitions}
                for m in described.members
            }
            expected = {f"member-{i}": o for i, o in enumerate(owned)}
            if described.state.name == "STABLE" and seen == expected:
                break
        yield consumers
    finally:
        for c in consumers:
            c.close()


def expected_offsets(
    topic: str, counts: Sequence[int], committed: Mapping[int, int], begins: Mapping[int, int]
) -> dict[TopicPartition, Offsets]:
    return {
        TopicPartition(topic, p): Offsets(begins.get(p, 0), n, committed.get(p))
        for p, n in enumerate(counts)
    }


def delete_records(admin: AdminClient, topic: str, before: Mapping[int, int]) -> None:
    """Moves the log start of ``topic``'s partitions to the offsets ``before`` gives."""
    deleted = admin.delete_records(
        [KafkaTopicPartition(topic, p, o) for p, o in before.items()],
        request_timeout=REQUEST_TIMEOUT_S,
    )
    for future in deleted.values():
        future.result(timeout=REQUEST_TIMEOUT_S)


# ------------------------------------------------------------------------------------------------
# offsets


def test_offsets_are_exact(admin: AdminClient, kafka_bootstrap: str, make_topic: MakeTopic) -> None:
    hot, cold = make_topic(HOT), make_topic(COLD)
    # move the log start of two partitions: begin is the earliest offset, not 0
    delete_records(admin, hot, {0: 150, 5: 20})
    group = unique("group")
    committed_hot = {0: 100, 2: 7, 3: 1, 5: 60}  # 0 is below the log start now
    commit(
        kafka_bootstrap,
        group,
        {(hot, p): o for p, o in committed_hot.items()} | {(cold, 1): 4},
    )

    with OffsetsReader({"bootstrap.servers": kafka_bootstrap}, timeout=READ_TIMEOUT_S) as r:
        got = r.offsets(group, [hot, cold, hot])

    assert got == expected_offsets(hot, HOT, committed_hot, {0: 150, 5: 20}) | expected_offsets(
        cold, COLD, {1: 4}, {}
    )


def test_offsets_of_a_group_without_commits(kafka_bootstrap: str, make_topic: MakeTopic) -> None:
    topic = make_topic(COLD)
    with OffsetsReader({"bootstrap.servers": kafka_bootstrap}, timeout=READ_TIMEOUT_S) as r:
        assert r.offsets(unique("nobody"), [topic]) == expected_offsets(topic, COLD, {}, {})
        assert r.offsets(unique("nobody"), []) == {}


def test_offsets_leave_out_missing_topics(
    kafka_bootstrap: str, make_topic: MakeTopic, caplog: pytest.LogCaptureFixture
) -> None:
    topic = make_topic([3])
    missing = unique("missing")
    with (
        caplog.at_level(logging.WARNING, logger="lagassign.kafka"),
        OffsetsReader({"bootstrap.servers": kafka_bootstrap}, timeout=READ_TIMEOUT_S) as r,
    ):
        got = r.offsets(unique("g"), [missing, topic])
    assert got == {TopicPartition(topic, 0): Offsets(0, 3, None)}
    assert f"topic {missing} does not exist" in caplog.text


# ------------------------------------------------------------------------------------------------
# snapshots


def test_snapshot_of_a_group_with_only_commits(kafka_bootstrap: str, make_topic: MakeTopic) -> None:
    hot = make_topic(HOT)
    make_topic(COLD)  # a topic the group has nothing to do with: not in the snapshot
    group = unique("group")
    commit(kafka_bootstrap, group, {(hot, 0): 10, (hot, 3): 13})

    with OffsetsReader({"bootstrap.servers": kafka_bootstrap}, timeout=READ_TIMEOUT_S) as r:
        snap = r.snapshot(group)

    assert snap == GroupSnapshot(
        group=group,
        state="Empty",
        members=(),
        partitions=tuple(
            PartitionState(hot, p, 0, n, {0: 10, 3: 13}.get(p)) for p, n in enumerate(HOT)
        ),
    )
    assert snap.exists
    model = snap.to_group("earliest")
    assert model.members == ()
    assert group_lags(model) == {
        TopicPartition(hot, p): lag for p, lag in enumerate([390, 0, 7, 0, 2, 120])
    }
    assert group_lags(snap.to_group()) == {
        TopicPartition(hot, p): lag for p, lag in enumerate([390, 0, 0, 0, 0, 0])
    }


def test_snapshot_of_an_unknown_group(kafka_bootstrap: str) -> None:
    with OffsetsReader({"bootstrap.servers": kafka_bootstrap}, timeout=READ_TIMEOUT_S) as r:
        snap = r.snapshot(unique("unknown"))
    assert (snap.state, snap.members, snap.partitions, snap.exists) == ("Dead", (), (), False)


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_snapshot_of_a_running_group(
    kafka_bootstrap: str, make_topic: MakeTopic, protocol: str
) -> None:
    """Two subscribed consumers (the classic protocol and KIP-848's): their members, what each
    is assigned, and every partition's offsets and owner."""
    hot, cold = make_topic(HOT), make_topic(COLD)
    group = unique("group")
    committed = {(hot, 0): 100, (hot, 2): 3, (cold, 0): 5}
    commit(kafka_bootstrap, group, committed)

    with running_group(kafka_bootstrap, group, [hot, cold], 2, protocol) as consumers:
        owned = {
            f"member-{i}": sorted(
                (TopicPartition(tp.topic, tp.partition) for tp in c.assignment()),
                key=TopicPartition.sort_key,
            )
            for i, c in enumerate(consumers)
        }
        member_ids = {f"member-{i}": c.memberid() for i, c in enumerate(consumers)}
        with OffsetsReader({"bootstrap.servers": kafka_bootstrap}, timeout=READ_TIMEOUT_S) as r:
            snap = r.snapshot(group)

    assert snap.group == group and snap.state == "Stable"
    members = {m.client_id: m for m in snap.members}
    assert set(members) == {"member-0", "member-1"}
    for client, m in members.items():
        assert m == LiveMember(
            member_id=member_ids[client],
            client_id=client,
            host="/127.0.0.1",
            instance_id=None,
            topics=frozenset(tp.topic for tp in owned[client]),
            assigned=tuple(owned[client]),
        )
    owner = {tp: client for client, tps in owned.items() for tp in tps}
    expected = [
        PartitionState(
            topic,
            p,
            0,
            n,
            committed.get((topic, p)),
            member_ids[owner[TopicPartition(topic, p)]],
            owner[TopicPartition(topic, p)],
            "/127.0.0.1",
        )
        for topic, counts in sorted([(hot, HOT), (cold, COLD)])
        for p, n in enumerate(counts)
    ]
    assert list(snap.partitions) == expected

    model = snap.to_group()
    assert {m.id: m.owned for m in model.members} == {
        member_ids[c]: tuple(tps) for c, tps in owned.items()
    }
    assert all(m.topics == frozenset(tp.topic for tp in m.owned) for m in model.members)
    assert group_lags(model)[TopicPartition(hot, 0)] == 300
    assert sum(group_lags(model).values()) == 300 + 0 + 4  # hot-0, hot-2 (7-3), cold-0 (5-5)


def test_members_assigned_nothing_subscribe_what_the_group_reads(
    kafka_bootstrap: str, make_topic: MakeTopic
) -> None:
    """Three members, two partitions: the idle member is in the model and may be assigned."""
    topic = make_topic([4, 6])
    group = unique("group")
    with (
        running_group(kafka_bootstrap, group, [topic], 3) as _,
        OffsetsReader({"bootstrap.servers": kafka_bootstrap}, timeout=READ_TIMEOUT_S) as r,
    ):
        snap = r.snapshot(group)
    idle = [m for m in snap.members if not m.assigned]
    assert len(snap.members) == 3 and len(idle) == 1
    assert idle[0].topics == frozenset()
    model = snap.to_group()
    assert all(m.topics == {topic} for m in model.members)


# ------------------------------------------------------------------------------------------------
# faults


#: a read that fails fast must not wait for this; none of the faults below takes a second
FAULT_TIMEOUT_S = 60.0
#: what "at once" allows on a loaded machine: far below FAULT_TIMEOUT_S
FAST_S = 10.0
#: librdkafka and Python read different clocks: its timeout can end a tick before ours
CLOCK_SLACK_S = 0.25


def read_once(reader: OffsetsReader, read: str) -> None:
    if read == "offsets":
        reader.offsets("g", ["t"])
    else:
        reader.snapshot("g")


def failed_read(config: Mapping[str, str], read: str, timeout: float) -> tuple[str, float]:
    """The message of the OffsetsError a read raises, and the seconds it took."""
    started = time.monotonic()
    with OffsetsReader(config, timeout=timeout) as r, pytest.raises(OffsetsError) as raised:
        read_once(r, read)
    elapsed = time.monotonic() - started
    message = str(raised.value)
    assert "\n" not in message
    return message, elapsed


@pytest.mark.parametrize("read", ["offsets", "snapshot"])
def test_refused_connection_fails_at_once_with_the_cause(read: str) -> None:
    """Issue 13: a closed port is reported as such at once, not as the timeout of whichever
    request happened to be waiting (which varied under load)."""
    port = closed_port()
    message, elapsed = failed_read(
        {"bootstrap.servers": f"127.0.0.1:{port}"}, read, FAULT_TIMEOUT_S
    )
    assert message.startswith(
        f"Kafka at 127.0.0.1:{port}: cannot connect: 127.0.0.1:{port}/bootstrap: "
        f"Connect to ipv4#127.0.0.1:{port} failed: Connection refused"
    ), message
    assert elapsed < FAST_S, elapsed


@pytest.mark.parametrize("read", ["offsets", "snapshot"])
def test_unknown_host_fails_at_once_with_the_cause(read: str) -> None:
    server = "lagassign-no-such-host.invalid:9092"
    message, elapsed = failed_read({"bootstrap.servers": server}, read, FAULT_TIMEOUT_S)
    assert message.startswith(
        f"Kafka at {server}: cannot connect: {server}/bootstrap: Failed to resolve '{server}'"
    ), message
    assert elapsed < FAST_S, elapsed


@pytest.mark.parametrize(
    ("security", "cause"),  # cause: a regular expression, {server} the broker's address
    [
        # the broker's PLAINTEXT listener refuses the SASL handshake: librdkafka's
        # authentication failure, as for a wrong password
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.username": "u",
                "sasl.password": "p",
            },
            "authentication failed: sasl_plaintext://{server}/bootstrap: SASL PLAIN mechanism "
            "handshake failed",
        ),
        # librdkafka words the TLS failure by which it sees first, the plaintext listener's
        # answer to its ClientHello or the listener closing the connection (seen both ways on
        # one machine): either names TLS and the handshake
        (
            {"security.protocol": "SSL"},
            r"cannot connect: ssl://{server}/bootstrap: (SSL handshake failed|Disconnected: SSL"
            r" connection closed by peer \(after \d+ms in state SSL_HANDSHAKE\))",
        ),
    ],
    ids=["sasl", "ssl"],
)
def test_refused_security_fails_at_once_with_the_cause(
    kafka_bootstrap: str, security: Mapping[str, str], cause: str
) -> None:
    message, elapsed = failed_read(
        {"bootstrap.servers": kafka_bootstrap, **security}, "snapshot", FAULT_TIMEOUT_S
    )
    server = re.escape(kafka_bootstrap)
    assert re.match(f"Kafka at {server}: " + cause.format(server=server), message), message
    assert "password" not in message.lower()
    assert elapsed < FAST_S, elapsed


@pytest.mark.parametrize("read", ["offsets", "snapshot"])
def test_a_broker_that_never_answers_times_out(read: str) -> None:
    """A listener that accepts connections and never answers: the read waits its timeout, and
    says so (which request it names depends on what was in flight, so it is not asserted)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)  # the kernel accepts; nobody reads or answers
        port = silent.getsockname()[1]
        message, elapsed = failed_read({"bootstrap.servers": f"127.0.0.1:{port}"}, read, 2.0)
    assert message.startswith(f"Kafka at 127.0.0.1:{port}: no answer to "), message
    assert " within the 2 s timeout" in message
    # librdkafka starts its timer before ours and rounds to its own clock ticks: seen at 1.9998 s
    assert 2.0 - CLOCK_SLACK_S <= elapsed < 2.0 + FAST_S, elapsed


@contextmanager
def forwarding(port: int, to: str) -> Iterator[None]:
    """Forwards connections to 127.0.0.1:``port`` to ``to`` (HOST:PORT), both ways, while
    the block runs: a bootstrap address that can be turned on."""
    host, target = to.rsplit(":", 1)
    server = socket.create_server(("127.0.0.1", port))
    threads: list[threading.Thread] = []

    def pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = server.accept()
                upstream = socket.create_connection((host, int(target)))
                for a, b in ((client, upstream), (upstream, client)):
                    t = threading.Thread(target=pump, args=(a, b), daemon=True)
                    t.start()
                    threads.append(t)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield
    finally:
        server.close()


def test_a_reader_recovers_after_a_fault(kafka_bootstrap: str, make_topic: MakeTopic) -> None:
    """librdkafka reports "every broker is down" once, when it happens: a reader that met it
    starts its next read on new clients, so the fault does not stick to it once the cluster
    can be reached (here: its bootstrap address starts forwarding to the broker)."""
    topic = make_topic([3])
    port = closed_port()
    with OffsetsReader({"bootstrap.servers": f"127.0.0.1:{port}"}, timeout=FAULT_TIMEOUT_S) as r:
        with pytest.raises(OffsetsError, match="cannot connect"):
            r.offsets("g", [topic])
        with forwarding(port, kafka_bootstrap):
            assert r.offsets("g", [topic]) == {TopicPartition(topic, 0): Offsets(0, 3, None)}


def test_bad_client_property_is_a_config_error() -> None:
    with pytest.raises(ClientConfigError, match=r'No such configuration property: "no\.such"'):
        OffsetsReader({"bootstrap.servers": "127.0.0.1:9", "no.such": "1"})


def test_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="timeout"):
        OffsetsReader({"bootstrap.servers": "127.0.0.1:9"}, timeout=0)


def test_a_closed_reader_says_so(kafka_bootstrap: str) -> None:
    reader = OffsetsReader({"bootstrap.servers": kafka_bootstrap})
    reader.close()
    with pytest.raises(OffsetsError, match="closed"):
        reader.snapshot("g")


def test_sampled_measures_rates_between_two_snapshots(
    kafka_bootstrap: str, make_topic: MakeTopic
) -> None:
    """Produce and consume rates from two snapshots: what happens "while the reader sleeps"
    is done by the test, so the rates are exact whatever the machine's load."""
    hot = make_topic([100, 40])
    group = unique("group")
    commit(kafka_bootstrap, group, {(hot, 0): 20, (hot, 1): 40})
    now = [0.0]

    def between(seconds: float) -> None:
        assert seconds == 10.0
        produce(kafka_bootstrap, {(hot, 0): 300, (hot, 1): 50})
        commit(kafka_bootstrap, group, {(hot, 0): 120, (hot, 1): 90})
        now[0] += seconds

    with OffsetsReader({"bootstrap.servers": kafka_bootstrap}, timeout=READ_TIMEOUT_S) as r:
        ((snap, model),) = r.sampled([group], 10.0, "earliest", clock=lambda: now[0], sleep=between)
        ((_, unsampled),) = r.sampled([group], 0.0, "earliest", clock=lambda: now[0], sleep=between)

    p0, p1 = model.topics[hot].partitions
    assert (p0.rate_in, p0.rate_out) == (30.0, 10.0)
    assert (p1.rate_in, p1.rate_out) == (5.0, 5.0)
    assert group_lags(model) == {TopicPartition(hot, 0): 280, TopicPartition(hot, 1): 0}
    assert snap.partitions[0].committed == 120
    assert all(p.rate_in is None for p in unsampled.partitions())  # window 0: one read


# ------------------------------------------------------------------------------------------------
# the protocol path


def test_the_protocol_path_reads_what_librdkafka_reads(
    admin: AdminClient,
    kafka_bootstrap: str,
    make_topic: MakeTopic,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 15: the reader's requests through Kafka's protocol (lagassign.kafka.protocol)
    answer every read, and answer exactly what the reads through librdkafka answer: log starts
    moved by deleted records, committed offsets below the log start, partitions without one,
    topics in the asked order, a second read on the kept connections alike."""
    hot, cold = make_topic(HOT), make_topic(COLD)
    delete_records(admin, hot, {1: 0, 5: 100})
    group = unique("group")
    commit(kafka_bootstrap, group, {(hot, 0): 3, (hot, 5): 50, (cold, 0): 5})
    config = {"bootstrap.servers": kafka_bootstrap}

    with (
        caplog.at_level(logging.DEBUG, logger="lagassign.kafka.offsets"),
        OffsetsReader(config, timeout=READ_TIMEOUT_S) as wire,
        OffsetsReader(config, timeout=READ_TIMEOUT_S, protocol=False) as librdkafka,
    ):
        answers = [wire.offsets(group, [cold, hot]), wire.offsets(group, [cold, hot])]
        snapshot = wire.snapshot(group)
        assert not [r for r in caplog.records if "through librdkafka" in r.getMessage()]
        assert answers == [librdkafka.offsets(group, [cold, hot])] * 2
        assert snapshot == librdkafka.snapshot(group)
    assert answers[0] == expected_offsets(hot, HOT, {0: 3, 5: 50}, {5: 100}) | expected_offsets(
        cold, COLD, {0: 5}, {}
    )
    assert [p.tp for p in snapshot.partitions] == sorted(answers[0], key=TopicPartition.sort_key)


def test_a_kept_reader_reads_partitions_added_between_reads(
    admin: AdminClient,
    kafka_bootstrap: str,
    make_topic: MakeTopic,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 15: a kept reader sends its ListOffsets to the leaders of its last read before the
    metadata arrives; when the metadata names other partitions (a topic grew) those answers are
    not used and the new partitions are read, through Kafka's protocol still."""
    from confluent_kafka.admin import NewPartitions

    topic = make_topic([3, 4])
    group = unique("group")
    commit(kafka_bootstrap, group, {(topic, 1): 2})
    with (
        caplog.at_level(logging.DEBUG, logger="lagassign.kafka.offsets"),
        OffsetsReader({"bootstrap.servers": kafka_bootstrap}, timeout=READ_TIMEOUT_S) as reader,
    ):
        assert reader.offsets(group, [topic]) == expected_offsets(topic, [3, 4], {1: 2}, {})
        grown = admin.create_partitions(
            [NewPartitions(topic, 4)], request_timeout=REQUEST_TIMEOUT_S
        )
        grown[topic].result(timeout=REQUEST_TIMEOUT_S)
        produce(kafka_bootstrap, {(topic, 2): 6, (topic, 3): 1})
        commit(kafka_bootstrap, group, {(topic, 3): 1})
        deadline = time.monotonic() + SETTLE_S
        while True:  # until the broker's metadata names the new partitions
            read = reader.offsets(group, [topic])
            if len(read) == 4 or time.monotonic() > deadline:
                break
            assert read == expected_offsets(topic, [3, 4], {1: 2}, {})
        assert read == expected_offsets(topic, [3, 4, 6, 1], {1: 2, 3: 1}, {})
        assert reader.offsets(group, [topic]) == read
        assert not [r for r in caplog.records if "through librdkafka" in r.getMessage()]


def test_a_kept_reader_reads_again_when_the_broker_closed_its_connections(
    kafka_bootstrap: str, make_topic: MakeTopic, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 15: a broker closes a connection idle for connections.max.idle.ms (10 minutes by
    default); a kept reader's next read finds its connections closed before any answer and
    reads again on new ones, through Kafka's protocol still, not through librdkafka. Here the
    connections are closed under the reader, which has not noticed when its next read starts
    (nothing drives its selector between reads), as after an idle close."""
    topic = make_topic([3, 4])
    group = unique("group")
    commit(kafka_bootstrap, group, {(topic, 1): 2})
    expected = expected_offsets(topic, [3, 4], {1: 2}, {})
    with (
        caplog.at_level(logging.DEBUG, logger="lagassign.kafka"),
        OffsetsReader({"bootstrap.servers": kafka_bootstrap}, timeout=READ_TIMEOUT_S) as reader,
    ):
        assert reader.offsets(group, [topic]) == expected
        wire = reader._wire
        assert wire is not None
        kept = [c for m in wire._managers for c in m._conns.values()]
        assert kept
        for conn in kept:
            conn.transport._sock.shutdown(socket.SHUT_RDWR)
        assert reader.offsets(group, [topic]) == expected
        assert reader._wire is wire
        assert not [r for r in caplog.records if "through librdkafka" in r.getMessage()]
        assert [r for r in caplog.records if "connection lost" in r.getMessage()]
