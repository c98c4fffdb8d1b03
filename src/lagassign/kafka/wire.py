"""What a member tells the group leader besides its topics, whatever the Kafka client.

Which fields it fills under which protocol (:func:`sends_consuming`, :func:`sends_previous`),
and the user data that carries its previous assignment, generation and capacity
(:func:`encode_user_data`, :func:`decode_user_data`, :func:`decode_capacity`).

What a member sends follows Kafka. The subscription's owned-partitions field lists what the
member *still consumes*: its assignment on the cooperative protocol, nothing on the eager one
(eager members revoke everything before they join). Its previous assignment, which sticky
strategies keep as far as they can, travels in the user data, in the layout of Kafka's
``StickyAssignor``, under either protocol. The leader keeps the two apart
(:class:`lagassign.kafka.group.Subscription`): stickiness from the field or else the user data
(``owned``), what is in flight from the field only (``consuming``).
"""

from __future__ import annotations

import logging
import math
import struct
from collections.abc import Iterable
from itertools import repeat

from lagassign.model import NO_GENERATION, TopicPartition
from lagassign.strategies import RebalanceProtocol, Strategy

log = logging.getLogger(__name__)


def sends_consuming(protocol: RebalanceProtocol) -> bool:
    """Whether a member lists its assignment in the owned-partitions field, which tells the
    leader what the member still consumes while the group rebalances: only on the cooperative
    protocol. Eager members revoke everything before they join, so, as in Kafka, they list
    nothing; a leader would otherwise withhold their partitions from the members it gives them
    to, and since an eager member does not rejoin when it loses partitions, nothing would
    assign them until the next rebalance."""
    return protocol is RebalanceProtocol.COOPERATIVE


def sends_previous(strategy: Strategy, protocol: RebalanceProtocol) -> bool:
    """Whether a member sends its previous assignment in the user data, for stickiness.

    Always, except for a strategy that withholds by itself (``Strategy.withholds_moving``:
    cooperative-sticky) run under the eager protocol: as Kafka's ``CooperativeStickyAssignor``,
    it reads only what members still consume, so its eager members send nothing. A sticky
    strategy that prefers eager (``sticky``, ``balanced``) keeps what members owned under
    either protocol.
    """
    return protocol is RebalanceProtocol.COOPERATIVE or not strategy.withholds_moving


# -- user data: previous assignment, generation, capacity ------------------------------------

#: marks the capacity after the sticky layout (readers of that layout ignore what follows it)
CAPACITY_MAGIC = b"lgC1"


def encode_user_data(
    owned: Iterable[TopicPartition], generation: int | None, capacity: float | None = None
) -> bytes:
    """A member's previous assignment and generation, and its capacity, as subscription user
    data.

    The layout is that of Kafka's ``StickyAssignor`` user data, version 1 (what Java's eager
    sticky assignor and aiokafka's ``StickyPartitionAssignor`` send): an array of (topic: string,
    partitions: [int32]) followed by the generation (int32, -1 for none); big-endian, strings
    as int16 length + UTF-8, arrays as int32 count + items. A capacity follows as
    :data:`CAPACITY_MAGIC` and a float64 (messages per second); readers of the sticky layout
    stop before it (:func:`decode_capacity` reads it).
    """
    grouped: dict[str, list[int]] = {}
    for tp in owned:
        grouped.setdefault(tp.topic, []).append(tp.partition)
    out = [struct.pack(">i", len(grouped))]
    for topic, partitions in grouped.items():
        name = topic.encode()
        out.append(struct.pack(">h", len(name)))
        out.append(name)
        out.append(struct.pack(f">i{len(partitions)}i", len(partitions), *partitions))
    out.append(struct.pack(">i", NO_GENERATION if generation is None else generation))
    if capacity is not None:
        out.append(CAPACITY_MAGIC + struct.pack(">d", capacity))
    return b"".join(out)


def decode_capacity(data: bytes | None) -> float | None:
    """The capacity :func:`encode_user_data` put at the end of the user data, if any (a
    negative or non-finite one is ignored, as unreadable user data is)."""
    if not data or len(data) < 12 or data[-12:-8] != CAPACITY_MAGIC:
        return None
    (capacity,) = struct.unpack(">d", data[-8:])
    return capacity if 0 <= capacity < math.inf else None


def decode_user_data(data: bytes | None) -> tuple[tuple[TopicPartition, ...], int | None]:
    """Previous assignment and generation from :func:`encode_user_data`'s bytes.

    Empty or unreadable user data (a member of another assignor) means nothing owned and no
    generation. Version 0 (no generation) is read too.
    """
    if not data:
        return (), None
    try:
        owned: list[TopicPartition] = []
        (topics,), pos = struct.unpack_from(">i", data), 4
        for _ in range(topics):
            (length,) = struct.unpack_from(">h", data, pos)
            pos += 2
            if length < 0 or pos + length > len(data):
                raise ValueError("bad topic name length")
            topic = data[pos : pos + length].decode()
            pos += length
            (count,) = struct.unpack_from(">i", data, pos)
            pos += 4
            if count < 0:
                raise ValueError("bad partition count")
            # made by tuple.__new__ at C speed (TopicPartition's own __new__ is Python)
            numbers = struct.unpack_from(f">{count}i", data, pos)
            owned.extend(map(tuple.__new__, repeat(TopicPartition), zip(repeat(topic), numbers)))
            pos += 4 * count
        generation: int | None = None
        if pos + 4 <= len(data):
            (generation,) = struct.unpack_from(">i", data, pos)
        return tuple(owned), None if generation is None or generation < 0 else generation
    except (struct.error, ValueError, UnicodeDecodeError):
        log.debug("lagassign: ignoring unreadable user data %r", data[:64])
        return (), None
