"""formats/consumer_offsets.py against what the real broker (Kafka 4.4) writes.

A classic group (kafka-python, joined through the classic protocol) and a KIP-848 group
(confluent-kafka, ``group.protocol=consumer``) commit known offsets with known metadata; one of
the classic group's offsets is then deleted (a tombstone). ``__consumer_offsets`` is read raw
from its start and every record decoded: each group's commits are exactly what it committed,
in order, the deletion is a tombstone, the groups' other records (the classic group's
metadata, the KIP-848 group's records) are recognised and skipped, and no record of the whole
topic is of an unknown version or undecodable. Kafka 4.4 writes every commit as value version 4 (the
flexible one) with the topic id, so that path is checked here against the topic's real id.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence

from confluent_kafka import Consumer, KafkaError, TopicCollection
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient, KafkaConsumer
from kafka.errors import NoError, RebalanceInProgressError
from kafka.structs import OffsetAndMetadata
from kafka.structs import TopicPartition as KafkaPythonTopicPartition

from lagassign.formats.consumer_offsets import (
    CONSUMER_OFFSETS_TOPIC,
    RECORD_TYPES,
    DecodeCounts,
    Decoded,
    OffsetCommit,
    OffsetDeleted,
    OtherRecord,
    decode,
)
from tests.kafka.test_offsets import REQUEST_TIMEOUT_S, SETTLE_S, MakeTopic, running_group, unique
from tests.kafka.test_offsets import admin as admin  # fixture used by make_topic
from tests.kafka.test_offsets import make_topic as make_topic  # fixture

READ_TIMEOUT_S = 60.0
#: (partition, offset, metadata) in the order each group commits them
CLASSIC_COMMITS = [(0, 2, "first"), (1, 8, ""), (0, 4, "second"), (2, 1, "x" * 300)]
KIP848_COMMITS = [(1, 3, "kip-848"), (0, 5, ""), (1, 7, "again")]
#: librdkafka sends a metadata string with its C terminator (an empty one too); the broker keeps it
KIP848_STORED = [(p, o, f"{m}\x00") for p, o, m in KIP848_COMMITS]
DELETED_PARTITION = 1


Commits = Sequence[tuple[int, int, str]]


def commit_classic(
    bootstrap: str, group: str, topic: str, commits: Commits = CLASSIC_COMMITS
) -> None:
    """kafka-python joins ``group`` (classic protocol), then commits ``commits`` (partition,
    offset, metadata) one at a time, and leaves.

    It subscribes only once its metadata has the topic: subscribed at once, it could join
    before its first metadata answer, lead with no partitions of the topic ("No partition
    metadata for topic"), assign nothing and wait for a metadata refresh minutes away (seen
    once in a fresh-clone CI run)."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="latest",
        session_timeout_ms=10_000,
    )
    try:
        deadline = time.monotonic() + SETTLE_S
        while not consumer.partitions_for_topic(topic):
            assert time.monotonic() < deadline, f"kafka-python never saw topic {topic}"
            time.sleep(0.1)
        consumer.subscribe([topic])
        while not consumer.assignment():
            assert time.monotonic() < deadline, "the kafka-python group did not settle"
            consumer.poll(timeout_ms=100)
        for partition, offset, metadata in commits:
            at = KafkaPythonTopicPartition(topic, partition)
            while True:
                try:
                    consumer.commit({at: OffsetAndMetadata(offset, metadata, -1)})
                    break
                except RebalanceInProgressError:
                    # kafka-python rejoins by itself once its metadata of the topic changes
                    # after the first assignment (seen once in a fresh-clone CI run); the
                    # commit goes once that rebalance is done, as its message advises
                    assert time.monotonic() < deadline, "the kafka-python group kept rebalancing"
                    consumer.poll(timeout_ms=100)
    finally:
        consumer.close(autocommit=False)


def commit_kip848(
    bootstrap: str, group: str, topic: str, commits: Commits = KIP848_COMMITS
) -> None:
    """A confluent-kafka member of a ``group.protocol=consumer`` group commits ``commits``."""
    with running_group(bootstrap, group, [topic], members=1, protocol="consumer") as (member,):
        for partition, offset, metadata in commits:
            result = member.commit(
                offsets=[KafkaTopicPartition(topic, partition, offset, metadata)],
                asynchronous=False,
            )
            assert result is not None and all(tp.error is None for tp in result), result


def broker_offsets(bootstrap: str, group: str) -> dict[int, tuple[int, str]]:
    """The broker's answer to OffsetFetch for ``group``: partition -> (offset, metadata)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        fetched = admin.list_group_offsets({group: None})[group]
        return {tp.partition: (om.offset, om.metadata) for tp, om in fetched.items()}
    finally:
        admin.close()


def topic_id(bootstrap: str, topic: str) -> uuid.UUID:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.describe_topics(TopicCollection([topic]), request_timeout=REQUEST_TIMEOUT_S)
    kafka_id = futures[topic].result(timeout=REQUEST_TIMEOUT_S).topic_id
    high, low = kafka_id.get_most_significant_bits(), kafka_id.get_least_significant_bits()
    return uuid.UUID(int=((high % 2**64) << 64) | (low % 2**64))


def delete_offset(bootstrap: str, group: str, topic: str, partition: int) -> None:
    """Deletes ``group``'s committed offset of one partition (OffsetDelete, a tombstone)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        errors = admin.delete_group_offsets(group, [KafkaPythonTopicPartition(topic, partition)])
        assert all(e is NoError for e in errors.values()), errors
    finally:
        admin.close()


def read_raw(bootstrap: str) -> Iterator[tuple[bytes | None, bytes | None]]:
    """Every record of __consumer_offsets from its start to its current end: (key, value).
    Assigned, not subscribed, so librdkafka reads the internal topic as any other."""
    reader = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("raw-reader"),
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        meta = reader.list_topics(CONSUMER_OFFSETS_TOPIC, timeout=REQUEST_TIMEOUT_S)
        partitions = sorted(meta.topics[CONSUMER_OFFSETS_TOPIC].partitions)
        ends = {
            p: reader.get_watermark_offsets(
                KafkaTopicPartition(CONSUMER_OFFSETS_TOPIC, p), timeout=REQUEST_TIMEOUT_S
            )[1]
            for p in partitions
        }
        pending = {p for p, end in ends.items() if end > 0}
        reader.assign([KafkaTopicPartition(CONSUMER_OFFSETS_TOPIC, p, 0) for p in partitions])
        deadline = time.monotonic() + READ_TIMEOUT_S
        while pending:
            assert time.monotonic() < deadline, f"__consumer_offsets not read to its end: {pending}"
            msg = reader.poll(0.5)
            if msg is None:
                continue
            if msg.error() is not None:
                assert msg.error().code() == KafkaError._PARTITION_EOF, msg.error()
                if msg.offset() >= ends[msg.partition()]:
                    pending.discard(msg.partition())
                continue
            yield msg.key(), msg.value()
            if msg.offset() + 1 >= ends[msg.partition()]:
                pending.discard(msg.partition())
    finally:
        reader.close()


def test_commits_of_a_classic_and_a_kip848_group_decode_exactly(
    kafka_bootstrap: str, make_topic: MakeTopic
) -> None:
    topic = make_topic([10, 10, 10])
    classic, kip848 = unique("classic"), unique("kip848")
    began_ms = int(time.time() * 1000)
    commit_classic(kafka_bootstrap, classic, topic)
    commit_kip848(kafka_bootstrap, kip848, topic)
    delete_offset(kafka_bootstrap, classic, topic, DELETED_PARTITION)
    ended_ms = int(time.time() * 1000)

    counts = DecodeCounts()
    decoded: list[Decoded] = []
    for key, value in read_raw(kafka_bootstrap):
        result = decode(key, value)
        counts.add(result)
        decoded.append(result)

    assert counts.undecodable == 0 and not counts.unknown_versions, counts
    assert counts.total == len(decoded) > 0
    for group, committed in ((classic, CLASSIC_COMMITS), (kip848, KIP848_STORED)):
        commits = [r for r in decoded if isinstance(r, OffsetCommit) and r.group == group]
        assert [(c.partition, c.offset, c.metadata) for c in commits] == committed, group
        # the last record of each partition, less the deleted one, is what OffsetFetch answers
        latest = {c.partition: (c.offset, c.metadata) for c in commits}
        if group == classic:
            del latest[DELETED_PARTITION]
        assert latest == broker_offsets(kafka_bootstrap, group), group
        assert {c.topic for c in commits} == {topic}
        assert all(began_ms <= c.commit_timestamp_ms <= ended_ms for c in commits), commits
        assert all(c.expire_timestamp_ms is None for c in commits), commits
        # Kafka 4.4 writes the flexible version 4 with the topic id as a tagged field
        assert {(c.value_version, c.topic_id) for c in commits} == {
            (4, topic_id(kafka_bootstrap, topic))
        }
    tombstones = [
        r for r in decoded if isinstance(r, OffsetDeleted) and r.group in (classic, kip848)
    ]
    assert tombstones == [OffsetDeleted(classic, topic, DELETED_PARTITION)]
    # the deletion comes after the partition's last commit
    last_commit = max(
        i
        for i, r in enumerate(decoded)
        if isinstance(r, OffsetCommit) and r.group == classic and r.partition == DELETED_PARTITION
    )
    assert decoded.index(tombstones[0]) > last_commit

    others = {(r.group, r.name) for r in decoded if isinstance(r, OtherRecord)}
    assert (classic, "GroupMetadata") in others
    kip848_types = {name for group, name in others if group == kip848}
    assert {"ConsumerGroupMetadata", "ConsumerGroupMemberMetadata"} <= kip848_types, kip848_types
    assert kip848_types <= {RECORD_TYPES[t] for t in range(3, 9)} | {
        "ConsumerGroupRegularExpression"
    }
    assert not {name for group, name in others if group == classic} - {"GroupMetadata"}
