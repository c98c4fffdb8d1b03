"""Records of Kafka's ``__consumer_offsets`` topic -> typed results, for ``lagassign monitor``.

The group coordinator keeps every group's state in ``__consumer_offsets`` as key/value records.
Both start with a big-endian int16: in the key it is the **record type**, in the value the
value's **version**. :func:`decode` turns one record (key bytes, value bytes or None) into
exactly one of:

* :class:`OffsetCommit`: a committed offset (record types 0 and 1, the two versions of the
  offset-commit key);
* :class:`OffsetDeleted`: an offset-commit key with a null value, a tombstone: the group's
  committed offset for that partition is gone (deleted, expired, or its group removed);
* :class:`OtherRecord`: a record type the coordinator writes that is not an offset commit
  (:data:`RECORD_TYPES`: the classic group's metadata, KIP-848 consumer groups, share and
  streams groups), recognised and skipped;
* :class:`UnknownVersion`: a key record type or an offset-commit value version this module
  does not know; counted by the caller (:class:`DecodeCounts`), never an exception;
* :class:`Undecodable`: bytes that do not follow the schema (cut short, trailing bytes,
  invalid UTF-8, a null key, a negative length).

Nothing here raises on any input; the functions are pure (bytes in, values out).

The schemas, as Kafka 4.4's group coordinator declares them (``OffsetCommitKey``,
``LegacyOffsetCommitKey``, ``OffsetCommitValue``, ``GroupMetadataKey``, ``ConsumerGroup*``):
strings in keys and in values up to version 3 are an int16 byte length and UTF-8 bytes;
version 4 of the value is Kafka's first "flexible" version: its string is an unsigned varint
of length + 1, and it ends with a tagged-field section (a varint count, then per field a varint
tag, a varint size and that many bytes; tag 0 is the topic id, a 16-byte UUID; other tags are
skipped, as Kafka's own readers do).

=======  ===========================================================================
key      record type (int16), group (string), topic (string), partition (int32);
         record types 0 and 1 are the same layout
value 0  version, offset (int64), metadata (string), commit timestamp (int64, ms)
value 1  version, offset, metadata, commit timestamp, expire timestamp (int64, ms)
value 2  version, offset, metadata, commit timestamp
value 3  version, offset, leader epoch (int32), metadata, commit timestamp
value 4  version, offset, leader epoch, metadata (compact), commit timestamp, tagged fields
=======  ===========================================================================

Worked examples (the bytes are hand-built; ``tests/test_consumer_offsets.py`` checks them).
Group ``g``, topic ``t``, partition 2, record type 1::

    key    00 01 | 00 01 67 | 00 01 74 | 00 00 00 02

A version-3 value (what Kafka 4.x writes for a commit without an expire time): offset 42,
leader epoch 5, metadata ``""``, commit time 1,700,000,000,000 ms (0x18BCFE56800)::

    value  00 03 | 00 00 00 00 00 00 00 2a | 00 00 00 05 | 00 00 | 00 00 01 8b cf e5 68 00

decodes to ``OffsetCommit(group='g', topic='t', partition=2, offset=42, leader_epoch=5,
metadata='', commit_timestamp_ms=1700000000000, expire_timestamp_ms=None, topic_id=None,
value_version=3)``. The same key with a null value is ``OffsetDeleted('g', 't', 2)``. A
version-1 value carries no leader epoch but an expire time after the commit time::

    value  00 01 | 00 00 00 00 00 00 00 07 | 00 02 6d 64 | <commit ms> | <expire ms>

(offset 7, metadata ``"md"``). A version-4 value writes the metadata ``"md"`` as ``03 6d 64``
(length 2 + 1) and ends with ``00`` (no tagged fields) or ``01 00 10 <16 bytes>`` (one field,
tag 0, size 16: the topic id). A key ``00 02 | 00 01 67`` is the classic group ``g``'s
metadata: ``OtherRecord(record_type=2, name='GroupMetadata', group='g')``. A key
``00 63 ...`` (type 99) is ``UnknownVersion(part='key', version=99)``; the offset-commit key
with a value ``00 05 ...`` is ``UnknownVersion(part='value', version=5)``.
"""

from __future__ import annotations

import struct
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

#: the topic the group coordinator writes these records to
CONSUMER_OFFSETS_TOPIC = "__consumer_offsets"
#: key record types that are offset commits (LegacyOffsetCommitKey, OffsetCommitKey)
OFFSET_COMMIT_TYPES = frozenset({0, 1})
#: the offset-commit value versions this module decodes (every one Kafka 4.x writes)
VALUE_VERSIONS = frozenset({0, 1, 2, 3, 4})
#: every key record type Kafka's group coordinator has written, by the name of its key schema
#: (without "Key"); 9 and 18 were written by 4.x releases before 4.4 and are kept here so that
#: their records in an older log count as recognised
RECORD_TYPES: dict[int, str] = {
    0: "LegacyOffsetCommit",
    1: "OffsetCommit",
    2: "GroupMetadata",
    3: "ConsumerGroupMetadata",
    4: "ConsumerGroupPartitionMetadata",
    5: "ConsumerGroupMemberMetadata",
    6: "ConsumerGroupTargetAssignmentMetadata",
    7: "ConsumerGroupTargetAssignmentMember",
    8: "ConsumerGroupCurrentMemberAssignment",
    9: "ShareGroupPartitionMetadata",
    10: "ShareGroupMemberMetadata",
    11: "ShareGroupMetadata",
    12: "ShareGroupTargetAssignmentMetadata",
    13: "ShareGroupTargetAssignmentMember",
    14: "ShareGroupCurrentMemberAssignment",
    15: "ShareGroupStatePartitionMetadata",
    16: "ConsumerGroupRegularExpression",
    17: "StreamsGroupMetadata",
    18: "StreamsGroupPartitionMetadata",
    19: "StreamsGroupMemberMetadata",
    20: "StreamsGroupTargetAssignmentMetadata",
    21: "StreamsGroupTargetAssignmentMember",
    22: "StreamsGroupCurrentMemberAssignment",
    23: "StreamsGroupTopology",
}
#: the tag of the topic id in a version-4 value's tagged fields
_TOPIC_ID_TAG = 0


@dataclass(frozen=True)
class OffsetCommit:
    """A committed offset: ``group`` has committed ``offset`` for ``topic``/``partition``.
    ``leader_epoch`` is None before value version 3 (and when a client sent -1),
    ``expire_timestamp_ms`` exists only in version 1, ``topic_id`` only in version 4."""

    group: str
    topic: str
    partition: int
    offset: int
    leader_epoch: int | None
    metadata: str
    commit_timestamp_ms: int
    expire_timestamp_ms: int | None
    topic_id: uuid.UUID | None
    value_version: int


@dataclass(frozen=True)
class OffsetDeleted:
    """A tombstone: ``group`` no longer has a committed offset for ``topic``/``partition``."""

    group: str
    topic: str
    partition: int


@dataclass(frozen=True)
class OtherRecord:
    """A record of a type the coordinator writes that is not an offset commit; skipped.
    Every such key starts with its group id: ``group`` (None when that string is malformed;
    the rest of the key is not read)."""

    record_type: int
    name: str
    group: str | None


@dataclass(frozen=True)
class UnknownVersion:
    """A key record type (``part="key"``) or an offset-commit value version
    (``part="value"``) not known here."""

    part: Literal["key", "value"]
    version: int


@dataclass(frozen=True)
class Undecodable:
    """Bytes that do not follow the schema; ``reason`` says where."""

    reason: str


Decoded = OffsetCommit | OffsetDeleted | OtherRecord | UnknownVersion | Undecodable


@dataclass
class DecodeCounts:
    """How many records of each kind a stream of :func:`decode` results held.
    :meth:`add` returns True the first time an unknown version is seen, so that the caller
    logs each unknown version once."""

    commits: int = 0
    deleted: int = 0
    other: int = 0
    undecodable: int = 0
    unknown_versions: Counter[tuple[str, int]] = field(default_factory=Counter)

    def add(self, decoded: Decoded) -> bool:
        match decoded:
            case OffsetCommit():
                self.commits += 1
            case OffsetDeleted():
                self.deleted += 1
            case OtherRecord():
                self.other += 1
            case UnknownVersion(part=part, version=version):
                self.unknown_versions[(part, version)] += 1
                return self.unknown_versions[(part, version)] == 1
            case Undecodable():
                self.undecodable += 1
        return False

    @property
    def total(self) -> int:
        return (
            self.commits
            + self.deleted
            + self.other
            + self.undecodable
            + sum(self.unknown_versions.values())
        )


class _Malformed(Exception):
    """The bytes break the schema at the named place (internal: :func:`decode` catches it)."""


_INT16, _INT32, _INT64 = struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")


class _Bytes:
    """A cursor over one record's bytes with the primitive types of Kafka's schemas."""

    def __init__(self, data: bytes, what: str) -> None:
        self.data = data
        self.pos = 0
        self.what = what

    def take(self, n: int, name: str) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise _Malformed(f"{self.what} cut short in {name}")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def int16(self, name: str) -> int:
        return self._unpack(_INT16, name)

    def int32(self, name: str) -> int:
        return self._unpack(_INT32, name)

    def int64(self, name: str) -> int:
        return self._unpack(_INT64, name)

    def _unpack(self, fmt: struct.Struct, name: str) -> int:
        """One integer read in place (no slice: a monitor's micro-batch decodes 100,000s)."""
        end = self.pos + fmt.size
        if end > len(self.data):
            raise _Malformed(f"{self.what} cut short in {name}")
        value: int = fmt.unpack_from(self.data, self.pos)[0]
        self.pos = end
        return value

    def uvarint(self, name: str) -> int:
        """An unsigned varint of at most 5 bytes (Kafka's are int32)."""
        value = 0
        for shift in range(0, 35, 7):
            byte = self.take(1, name)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
        raise _Malformed(f"{self.what}: {name} is a varint longer than 5 bytes")

    def string(self, name: str) -> str:
        """A non-null string: int16 byte length, UTF-8."""
        return self._utf8(self.take(self._length(self.int16(name), name), name), name)

    def compact_string(self, name: str) -> str:
        """A non-null string of a flexible version: varint (length + 1), UTF-8."""
        return self._utf8(self.take(self._length(self.uvarint(name) - 1, name), name), name)

    def _length(self, n: int, name: str) -> int:
        if n < 0:
            raise _Malformed(f"{self.what}: {name} is null")
        return n

    def _utf8(self, raw: bytes, name: str) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _Malformed(f"{self.what}: {name} is not UTF-8") from None

    def end(self) -> None:
        if self.pos != len(self.data):
            raise _Malformed(f"{self.what}: {len(self.data) - self.pos} bytes after the end")


def decode(key: bytes | None, value: bytes | None) -> Decoded:
    """One record of ``__consumer_offsets``, typed (see the module's worked examples)."""
    if key is None:
        return Undecodable("key: null")
    try:
        keys = _Bytes(key, "key")
        record_type = keys.int16("record type")
        if record_type not in OFFSET_COMMIT_TYPES:
            if record_type in RECORD_TYPES:
                return OtherRecord(record_type, RECORD_TYPES[record_type], _group_of(keys))
            return UnknownVersion("key", record_type)
        group = keys.string("group")
        topic = keys.string("topic")
        partition = keys.int32("partition")
        keys.end()
        if value is None:
            return OffsetDeleted(group, topic, partition)
        return _commit(group, topic, partition, _Bytes(value, "value"))
    except _Malformed as e:
        return Undecodable(str(e))


def _group_of(keys: _Bytes) -> str | None:
    try:
        return keys.string("group")
    except _Malformed:
        return None


def _commit(group: str, topic: str, partition: int, values: _Bytes) -> Decoded:
    version = values.int16("version")
    if version not in VALUE_VERSIONS:
        return UnknownVersion("value", version)
    offset = values.int64("offset")
    epoch = values.int32("leader epoch") if version >= 3 else -1
    flexible = version >= 4
    metadata = values.compact_string("metadata") if flexible else values.string("metadata")
    committed_ms = values.int64("commit timestamp")
    expire_ms = values.int64("expire timestamp") if version == 1 else None
    topic_id = _tagged_topic_id(values) if flexible else None
    values.end()
    return OffsetCommit(
        group=group,
        topic=topic,
        partition=partition,
        offset=offset,
        leader_epoch=None if epoch == -1 else epoch,
        metadata=metadata,
        commit_timestamp_ms=committed_ms,
        expire_timestamp_ms=expire_ms,
        topic_id=topic_id,
        value_version=version,
    )


def _tagged_topic_id(values: _Bytes) -> uuid.UUID | None:
    """The tagged-field section of a flexible value: the topic id if tag 0 is there."""
    topic_id = None
    for _ in range(values.uvarint("tagged field count")):
        tag = values.uvarint("tag")
        data = values.take(values.uvarint("tagged field size"), f"tagged field {tag}")
        if tag == _TOPIC_ID_TAG:
            if len(data) != 16:
                raise _Malformed(f"value: the topic id is {len(data)} bytes, not 16")
            topic_id = uuid.UUID(bytes=data)
    return topic_id
