"""The development broker (scripts/kafka.sh) is a real Kafka: topics, records, group offsets.

Each test works on its own topic and group, so the tests do not depend on one another.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import (
    Consumer,
    ConsumerGroupTopicPartitions,
    KafkaError,
    Message,
    Producer,
    TopicCollection,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

from lagassign.kafka.offsets import OffsetsReader
from lagassign.model import Offsets
from lagassign.model import TopicPartition as ModelTopicPartition
from tests.kafka.broker import (
    DevBroker,
    admin_client,
    commit,
    create_topics,
    produce,
    wait_every_broker_knows,
)
from tests.kafka.conftest import KafkaSh

PARTITIONS = 6
# records produced to each partition: an empty one, a single one, uneven others
COUNTS = [5, 0, 3, 8, 1, 12]
REQUEST_TIMEOUT_S = 30.0


@pytest.fixture(scope="module")
def admin(kafka_bootstrap: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": kafka_bootstrap})


@pytest.fixture
def topic(admin: AdminClient, kafka_bootstrap: str) -> Iterator[str]:
    """A new 6-partition topic holding COUNTS[p] records in partition p."""
    name = f"lagassign-test-{uuid.uuid4().hex[:12]}"
    futures = admin.create_topics(
        [NewTopic(name, num_partitions=PARTITIONS, replication_factor=1)],
        request_timeout=REQUEST_TIMEOUT_S,
        operation_timeout=REQUEST_TIMEOUT_S,
    )
    futures[name].result(timeout=REQUEST_TIMEOUT_S)
    _produce(kafka_bootstrap, name, COUNTS)
    yield name
    admin.delete_topics([name], request_timeout=REQUEST_TIMEOUT_S)[name].result(
        timeout=REQUEST_TIMEOUT_S
    )


def _produce(bootstrap: str, topic: str, counts: list[int]) -> None:
    errors: list[str] = []

    def on_delivery(err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            errors.append(str(err))

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    for partition, count in enumerate(counts):
        for i in range(count):
            producer.produce(
                topic,
                key=f"k{partition}".encode(),
                value=f"p{partition}-m{i}".encode(),
                partition=partition,
                on_delivery=on_delivery,
            )
    remaining = producer.flush(REQUEST_TIMEOUT_S)
    assert remaining == 0, f"{remaining} records not delivered"
    assert errors == []


def _offsets(admin: AdminClient, topic: str, spec: OffsetSpec) -> dict[int, int]:
    request = {TopicPartition(topic, p): spec for p in range(PARTITIONS)}
    futures = admin.list_offsets(request, request_timeout=REQUEST_TIMEOUT_S)
    return {tp.partition: f.result(timeout=REQUEST_TIMEOUT_S).offset for tp, f in futures.items()}


def _group_offsets(admin: AdminClient, group: str) -> dict[int, int]:
    futures = admin.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group)], request_timeout=REQUEST_TIMEOUT_S
    )
    result = futures[group].result(timeout=REQUEST_TIMEOUT_S)
    assert result.group_id == group
    return {tp.partition: tp.offset for tp in result.topic_partitions}


def _consumer(bootstrap: str, group: str) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": 10_000,
        }
    )


def test_status_reports_running(kafka_sh: KafkaSh, kafka_bootstrap: str) -> None:
    status = kafka_sh("status")
    assert status.returncode == 0, status.stderr
    assert status.stdout.startswith("running (pid ")
    assert status.stdout.strip().splitlines()[-1] == f"bootstrap={kafka_bootstrap}"


def test_start_when_running_prints_the_same_bootstrap(
    kafka_sh: KafkaSh, kafka_bootstrap: str
) -> None:
    again = kafka_sh("start")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip().splitlines()[-1] == f"bootstrap={kafka_bootstrap}"
    assert "already running" in again.stderr


def test_bootstrap_is_loopback_single_broker(admin: AdminClient, kafka_bootstrap: str) -> None:
    host, port = kafka_bootstrap.split(":")
    assert host == "127.0.0.1"
    cluster = admin.list_topics(timeout=REQUEST_TIMEOUT_S)
    assert [(b.id, b.host, b.port) for b in cluster.brokers.values()] == [(1, host, int(port))]


def test_topic_has_six_partitions(admin: AdminClient, topic: str) -> None:
    metadata = admin.list_topics(topic, timeout=REQUEST_TIMEOUT_S).topics[topic]
    assert metadata.error is None
    assert sorted(metadata.partitions) == list(range(PARTITIONS))
    assert all(p.leader == 1 and p.replicas == [1] for p in metadata.partitions.values())


def test_auto_create_topics_is_off(admin: AdminClient, kafka_bootstrap: str) -> None:
    missing = f"lagassign-missing-{uuid.uuid4().hex[:12]}"
    errors: list[KafkaError | None] = []
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "message.timeout.ms": 1000})
    producer.produce(missing, value=b"x", on_delivery=lambda err, _msg: errors.append(err))
    producer.flush(REQUEST_TIMEOUT_S)
    assert len(errors) == 1
    assert errors[0] is not None
    assert missing not in admin.list_topics(timeout=REQUEST_TIMEOUT_S).topics


def test_earliest_and_latest_offsets(admin: AdminClient, topic: str) -> None:
    assert _offsets(admin, topic, OffsetSpec.earliest()) == dict.fromkeys(range(PARTITIONS), 0)
    assert _offsets(admin, topic, OffsetSpec.latest()) == dict(enumerate(COUNTS))

    # deleting records moves the earliest offset (the log start), not the latest
    deleted = admin.delete_records(
        [TopicPartition(topic, 3, 6), TopicPartition(topic, 5, 2)],
        request_timeout=REQUEST_TIMEOUT_S,
    )
    for future in deleted.values():
        future.result(timeout=REQUEST_TIMEOUT_S)
    expected_earliest = dict.fromkeys(range(PARTITIONS), 0) | {3: 6, 5: 2}
    assert _offsets(admin, topic, OffsetSpec.earliest()) == expected_earliest
    assert _offsets(admin, topic, OffsetSpec.latest()) == dict(enumerate(COUNTS))


def test_committed_offsets_and_lag(admin: AdminClient, kafka_bootstrap: str, topic: str) -> None:
    """A Consumer commits chosen offsets for a group; the admin API reads them back as lag."""
    group = f"lagassign-group-{uuid.uuid4().hex[:12]}"
    committed = {0: 2, 2: 3, 3: 1, 4: 0, 5: 12}  # partition 1 has no committed offset
    consumer = _consumer(kafka_bootstrap, group)
    try:
        result = consumer.commit(
            offsets=[TopicPartition(topic, p, o) for p, o in committed.items()],
            asynchronous=False,
        )
        assert result is not None
        assert all(tp.error is None for tp in result)
        read_back = consumer.committed(
            [TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=REQUEST_TIMEOUT_S
        )
        assert {tp.partition: tp.offset for tp in read_back if tp.offset >= 0} == committed
    finally:
        consumer.close()

    assert _group_offsets(admin, group) == committed
    latest = _offsets(admin, topic, OffsetSpec.latest())
    lag = {p: latest[p] - o for p, o in committed.items()}
    assert lag == {0: 3, 2: 0, 3: 7, 4: 1, 5: 0}


def test_group_consumes_everything_and_commits(
    admin: AdminClient, kafka_bootstrap: str, topic: str
) -> None:
    """A subscribed Consumer reads every record in order and commits its positions."""
    group = f"lagassign-group-{uuid.uuid4().hex[:12]}"
    consumer = _consumer(kafka_bootstrap, group)
    seen: dict[int, list[str]] = {p: [] for p in range(PARTITIONS)}
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        while sum(map(len, seen.values())) < sum(COUNTS):
            assert time.monotonic() < deadline, f"only consumed {seen}"
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            value = msg.value()
            assert value is not None
            seen[msg.partition()].append(value.decode())
        assignment = consumer.assignment()
        assert sorted(tp.partition for tp in assignment) == list(range(PARTITIONS))
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()

    assert seen == {p: [f"p{p}-m{i}" for i in range(n)] for p, n in enumerate(COUNTS)}
    # an empty partition has no position to commit
    expected = {p: n for p, n in enumerate(COUNTS) if n > 0}
    assert _group_offsets(admin, group) == expected

    groups = admin.list_consumer_groups(request_timeout=REQUEST_TIMEOUT_S).result(
        timeout=REQUEST_TIMEOUT_S
    )
    assert group in {g.group_id for g in groups.valid}


def test_a_two_node_cluster_serves_partitions_on_both_brokers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """scripts/kafka.sh with LAGASSIGN_KAFKA_NODES=2 (docs/kafka.md): two JVMs of one cluster,
    node 1 the controller and a broker, node 2 a broker; the bootstrap line names both, a
    topic's partitions are led by both, lagassign's reader reads them (through Kafka's
    protocol, one ListOffsets per leader), and `stop` ends both JVMs."""
    cluster = DevBroker(tmp_path / "cluster", nodes=2)
    try:
        bootstrap = cluster.start()
        brokers = bootstrap.split(",")
        assert len(brokers) == 2 and all(b.startswith("127.0.0.1:") for b in brokers)
        status = cluster.sh("status")
        assert status.returncode == 0, status.stderr
        assert status.stdout.startswith("running (2 nodes, pids ")
        assert status.stdout.strip().splitlines()[-1] == f"bootstrap={bootstrap}"
        pids = [cluster.pid(1), cluster.pid(2)]
        assert None not in pids and len(set(pids)) == 2

        admin = admin_client(bootstrap)
        nodes = admin.describe_cluster(request_timeout=REQUEST_TIMEOUT_S).result(
            timeout=REQUEST_TIMEOUT_S
        )
        assert sorted(n.id for n in nodes.nodes) == [1, 2]
        topic = f"lagassign-test-{uuid.uuid4().hex[:12]}"
        create_topics(admin, {topic: PARTITIONS})  # and waits for every partition's leader
        # as one broker sees it: the other may not know the topic yet
        wait_every_broker_knows(bootstrap, {topic: PARTITIONS})
        described = admin.describe_topics(
            TopicCollection([topic]), request_timeout=REQUEST_TIMEOUT_S
        )[topic].result(timeout=REQUEST_TIMEOUT_S)
        assert {p.leader.id for p in described.partitions} == {1, 2}

        produce(bootstrap, {(topic, p): n for p, n in enumerate(COUNTS)})
        group = f"lagassign-group-{uuid.uuid4().hex[:12]}"
        commit(bootstrap, group, {(topic, 0): 2, (topic, 3): 8})
        with (
            caplog.at_level(logging.DEBUG, logger="lagassign.kafka.offsets"),
            OffsetsReader({"bootstrap.servers": bootstrap}, timeout=REQUEST_TIMEOUT_S) as reader,
        ):
            read = reader.offsets(group, [topic])
        assert read == {
            ModelTopicPartition(topic, p): Offsets(0, n, {0: 2, 3: 8}.get(p))
            for p, n in enumerate(COUNTS)
        }
        assert not [r for r in caplog.records if "through librdkafka" in r.getMessage()]
    finally:
        cluster.stop()
    assert cluster.sh("status").returncode == 3
    for pid in pids:
        assert pid is not None and not Path(f"/proc/{pid}").exists()
