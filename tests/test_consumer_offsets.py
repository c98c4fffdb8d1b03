"""formats/consumer_offsets.py: the module docstring's worked examples byte for byte, every value
version Kafka 4.x writes, tombstones, other record types, unknown versions, malformed bytes,
and hypothesis: any bytes decode to one typed result (never an exception), and every
well-formed record decodes to what was encoded. The real-broker check is
tests/kafka/test_consumer_offsets_live.py."""

from __future__ import annotations

import struct
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lagassign.formats.consumer_offsets import (
    RECORD_TYPES,
    DecodeCounts,
    OffsetCommit,
    OffsetDeleted,
    OtherRecord,
    Undecodable,
    UnknownVersion,
    decode,
)

# the module docstring's bytes, as written there
DOC_KEY = bytes.fromhex("0001 000167 000174 00000002")
DOC_VALUE_V3 = bytes.fromhex("0003 000000000000002a 00000005 0000 0000018bcfe56800")
COMMIT_MS = 1_700_000_000_000
EXPIRE_MS = 1_700_086_400_000


def text(s: str) -> bytes:
    raw = s.encode()
    return struct.pack(">h", len(raw)) + raw


def compact_text(s: str) -> bytes:
    return uvarint(len(s.encode()) + 1) + s.encode()


def uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def key(group: str, topic: str, partition: int, record_type: int = 1) -> bytes:
    return struct.pack(">h", record_type) + text(group) + text(topic) + struct.pack(">i", partition)


def value(
    version: int,
    offset: int,
    metadata: str = "",
    *,
    epoch: int = -1,
    commit_ms: int = COMMIT_MS,
    expire_ms: int = EXPIRE_MS,
    tags: list[tuple[int, bytes]] | None = None,
) -> bytes:
    """An offset-commit value as Kafka lays out ``version``."""
    out = struct.pack(">hq", version, offset)
    if version >= 3:
        out += struct.pack(">i", epoch)
    out += compact_text(metadata) if version >= 4 else text(metadata)
    out += struct.pack(">q", commit_ms)
    if version == 1:
        out += struct.pack(">q", expire_ms)
    if version >= 4:
        fields = tags or []
        out += uvarint(len(fields))
        for tag, data in fields:
            out += uvarint(tag) + uvarint(len(data)) + data
    return out


def commit(**fields: object) -> OffsetCommit:
    base: dict[str, object] = {
        "group": "g",
        "topic": "t",
        "partition": 2,
        "offset": 42,
        "leader_epoch": None,
        "metadata": "",
        "commit_timestamp_ms": COMMIT_MS,
        "expire_timestamp_ms": None,
        "topic_id": None,
        "value_version": 3,
    }
    return OffsetCommit(**{**base, **fields})  # type: ignore[arg-type]


# -- the docstring's worked examples ----------------------------------------------------------


def test_docstring_key_and_version_3_value() -> None:
    assert key("g", "t", 2) == DOC_KEY
    assert value(3, 42, epoch=5) == DOC_VALUE_V3
    assert decode(DOC_KEY, DOC_VALUE_V3) == commit(leader_epoch=5)


def test_docstring_tombstone() -> None:
    assert decode(DOC_KEY, None) == OffsetDeleted("g", "t", 2)


def test_docstring_version_1_value_has_an_expire_time_and_no_epoch() -> None:
    raw = bytes.fromhex("0001 0000000000000007 00026d64") + struct.pack(">qq", COMMIT_MS, EXPIRE_MS)
    assert raw == value(1, 7, "md")
    assert decode(DOC_KEY, raw) == commit(
        offset=7, metadata="md", expire_timestamp_ms=EXPIRE_MS, value_version=1
    )


def test_docstring_version_4_value_compact_metadata_and_topic_id() -> None:
    topic_id = uuid.UUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")
    plain = value(4, 9, "md", epoch=3)
    assert plain.endswith(bytes.fromhex("036d64") + struct.pack(">q", COMMIT_MS) + b"\x00")
    assert decode(DOC_KEY, plain) == commit(
        offset=9, metadata="md", leader_epoch=3, value_version=4
    )
    tagged = value(4, 9, "md", epoch=3, tags=[(0, topic_id.bytes)])
    assert tagged.endswith(bytes.fromhex("010010") + topic_id.bytes)
    assert decode(DOC_KEY, tagged) == commit(
        offset=9, metadata="md", leader_epoch=3, topic_id=topic_id, value_version=4
    )


def test_docstring_other_and_unknown_records() -> None:
    assert decode(bytes.fromhex("0002 000167"), b"anything") == OtherRecord(2, "GroupMetadata", "g")
    assert decode(bytes.fromhex("0063") + DOC_KEY[2:], DOC_VALUE_V3) == UnknownVersion("key", 99)
    assert decode(DOC_KEY, bytes.fromhex("0005") + DOC_VALUE_V3[2:]) == UnknownVersion("value", 5)


# -- every version, every record type -----------------------------------------------------------


@pytest.mark.parametrize("version", [0, 2])
def test_versions_0_and_2_carry_offset_metadata_and_commit_time(version: int) -> None:
    assert decode(DOC_KEY, value(version, 11, "m")) == commit(
        offset=11, metadata="m", value_version=version
    )


def test_legacy_key_type_0_is_an_offset_commit_too() -> None:
    legacy = key("grp", "orders", 7, record_type=0)
    assert decode(legacy, value(3, 5, epoch=1)) == commit(
        group="grp", topic="orders", partition=7, offset=5, leader_epoch=1
    )
    assert decode(legacy, None) == OffsetDeleted("grp", "orders", 7)


def test_unknown_tagged_fields_are_skipped() -> None:
    raw = value(4, 1, tags=[(3, b"\x01\x02\x03"), (7, b"")])
    assert decode(DOC_KEY, raw) == commit(offset=1, value_version=4)


def test_a_topic_id_of_the_wrong_size_is_undecodable() -> None:
    assert isinstance(decode(DOC_KEY, value(4, 1, tags=[(0, b"\x00" * 15)])), Undecodable)


@pytest.mark.parametrize("record_type", sorted(set(RECORD_TYPES) - {0, 1}))
def test_every_other_coordinator_record_type_is_recognised_with_its_group(record_type: int) -> None:
    raw = struct.pack(">h", record_type) + text("grp") + b"\x00\x01rest of the key"
    assert decode(raw, b"\x00\x00value") == OtherRecord(
        record_type, RECORD_TYPES[record_type], "grp"
    )
    assert decode(raw, None) == OtherRecord(record_type, RECORD_TYPES[record_type], "grp")
    assert decode(struct.pack(">h", record_type), None) == OtherRecord(
        record_type, RECORD_TYPES[record_type], None
    )


def test_non_ascii_names_and_metadata() -> None:
    raw_key = key("grüppe", "tópico", 0)
    assert decode(raw_key, value(4, 3, "métadonnées")) == commit(
        group="grüppe",
        topic="tópico",
        partition=0,
        offset=3,
        metadata="métadonnées",
        value_version=4,
    )


# -- malformed bytes --------------------------------------------------------------------------


def test_every_cut_of_a_record_is_undecodable() -> None:
    for version in range(5):
        raw_value = value(version, 123, "meta", epoch=4, tags=[(0, uuid.uuid4().bytes)])
        for n in range(2, len(raw_value)):
            assert isinstance(decode(DOC_KEY, raw_value[:n]), Undecodable), (version, n)
    for n in range(len(DOC_KEY)):
        assert isinstance(decode(DOC_KEY[:n], DOC_VALUE_V3), Undecodable), n


@pytest.mark.parametrize(
    ("raw_key", "raw_value", "reason"),
    [
        (None, DOC_VALUE_V3, "key: null"),
        (DOC_KEY + b"\x00", DOC_VALUE_V3, "key: 1 bytes after the end"),
        (DOC_KEY, DOC_VALUE_V3 + b"\x00", "value: 1 bytes after the end"),
        (
            key("g", "t", 2)[:2] + b"\x00\x01\xff" + DOC_KEY[5:],
            DOC_VALUE_V3,
            "key: group is not UTF-8",
        ),
        (b"\x00\x01\xff\xff", DOC_VALUE_V3, "key: group is null"),
        # version 4: version, offset and leader epoch take 14 bytes, then the compact metadata
        (DOC_KEY, value(4, 1)[:14] + b"\x00" + value(4, 1)[15:], "value: metadata is null"),
        (
            DOC_KEY,
            value(4, 1)[:14] + b"\xff" * 6,
            "value: metadata is a varint longer than 5 bytes",
        ),
    ],
)
def test_malformed_records_name_the_place(
    raw_key: bytes | None, raw_value: bytes, reason: str
) -> None:
    assert decode(raw_key, raw_value) == Undecodable(reason)


# -- counts -------------------------------------------------------------------------------------


def test_counts_tell_each_unknown_version_once() -> None:
    counts = DecodeCounts()
    results = [
        decode(DOC_KEY, DOC_VALUE_V3),
        decode(DOC_KEY, None),
        decode(bytes.fromhex("0002 000167"), b""),
        decode(DOC_KEY, b"\x00\x09"),
        decode(DOC_KEY, b"\x00\x09"),
        decode(b"\x00\x63", None),
        decode(b"\x01", None),
    ]
    firsts = [counts.add(r) for r in results]
    assert firsts == [False, False, False, True, False, True, False]
    assert (counts.commits, counts.deleted, counts.other, counts.undecodable) == (1, 1, 1, 1)
    assert counts.unknown_versions == {("value", 9): 2, ("key", 99): 1}
    assert counts.total == len(results)


# -- hypothesis -------------------------------------------------------------------------------

DECODED = (OffsetCommit, OffsetDeleted, OtherRecord, UnknownVersion, Undecodable)
names = st.text(min_size=0, max_size=40)
int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)


@settings(max_examples=400, deadline=None)
@given(
    raw_key=st.one_of(st.none(), st.binary(max_size=64)),
    raw_value=st.one_of(st.none(), st.binary(max_size=96)),
)
def test_random_bytes_never_raise(raw_key: bytes | None, raw_value: bytes | None) -> None:
    counts = DecodeCounts()
    result = decode(raw_key, raw_value)
    counts.add(result)
    assert isinstance(result, DECODED)
    assert counts.total == 1


@settings(max_examples=200, deadline=None)
@given(
    prefix=st.sampled_from([b"\x00\x00", b"\x00\x01"]),
    version=st.sampled_from([b"\x00\x00", b"\x00\x01", b"\x00\x02", b"\x00\x03", b"\x00\x04"]),
    rest=st.binary(max_size=80),
)
def test_random_values_of_real_versions_never_raise(
    prefix: bytes, version: bytes, rest: bytes
) -> None:
    """Random bytes behind a real key and a real value version reach the value's decoding."""
    result = decode(prefix + DOC_KEY[2:], version + rest)
    assert isinstance(result, (OffsetCommit, Undecodable))


@settings(max_examples=200, deadline=None)
@given(
    record_type=st.sampled_from([0, 1]),
    group=names,
    topic=names,
    partition=int32,
    version=st.integers(0, 4),
    offset=int64,
    epoch=int32,
    metadata=names,
    commit_ms=int64,
    expire_ms=int64,
    topic_id=st.one_of(st.none(), st.uuids()),
)
def test_well_formed_records_decode_to_what_was_encoded(
    record_type: int,
    group: str,
    topic: str,
    partition: int,
    version: int,
    offset: int,
    epoch: int,
    metadata: str,
    commit_ms: int,
    expire_ms: int,
    topic_id: uuid.UUID | None,
) -> None:
    tags = [(0, topic_id.bytes)] if topic_id is not None and version >= 4 else None
    raw_value = value(
        version, offset, metadata, epoch=epoch, commit_ms=commit_ms, expire_ms=expire_ms, tags=tags
    )
    assert decode(key(group, topic, partition, record_type), raw_value) == OffsetCommit(
        group=group,
        topic=topic,
        partition=partition,
        offset=offset,
        leader_epoch=epoch if version >= 3 and epoch != -1 else None,
        metadata=metadata,
        commit_timestamp_ms=commit_ms,
        expire_timestamp_ms=expire_ms if version == 1 else None,
        topic_id=topic_id if tags else None,
        value_version=version,
    )
