"""lagassign's strategies as aiokafka 0.14 partition assignors.

::

    from aiokafka import AIOKafkaConsumer
    from lagassign.kafka.aiokafka import assignor

    settings = dict(bootstrap_servers="127.0.0.1:9092", group_id="orders")
    consumer = AIOKafkaConsumer(
        "orders",
        partition_assignment_strategy=[assignor("lag", auto_offset_reset="earliest", **settings)],
        auto_offset_reset="earliest",
        **settings,
    )

aiokafka implements the eager rebalance protocol only, so every strategy runs eagerly here:
members revoke everything before they join and tell the leader they consume nothing, so a
leader withholds nothing from them. ``cooperative-sticky`` sends no previous assignment either
(as Kafka's, run eagerly) and is not sticky: use ``sticky`` or ``balanced`` for stickiness with
aiokafka. Keep aiokafka members out of groups whose members run the cooperative protocol
(kafka-python, same strategy): aiokafka hands its leader only the version 0 fields of a
subscription, so an aiokafka leader cannot see what those members still consume, and would
not withhold it.

**Blocking.** aiokafka calls ``metadata()`` and the group leader's ``assign()`` synchronously,
on the event loop. A strategy that reads lag therefore reads the offsets in a worker thread
(through an :class:`~lagassign.kafka.offsets.OffsetsReader` of its own), started in
``metadata()`` as the member sends JoinGroup, as with kafka-python: any member may come out of
JoinGroup as the leader, and only JoinGroup's answer says which, so every member reads the
offsets of its topics (and of the group's, when it led the last rebalance) once per
rebalance, and a member that does not lead drops its read
(:meth:`~lagassign.kafka.group.GroupAssignor.joining`). The leader's ``assign()`` waits for
what is left of that read, under ``lag_timeout`` from its start, **1 s by default**
(kafka-python: 3 s), and reads only the group's topics its own subscription lacked; past the
deadline, the leader assigns with lag 0 and logs one warning. A wait happens only on the leader,
only for strategies that read lag, and only inside a rebalance, when aiokafka has stopped
heartbeats and (eager protocol) revoked every partition, so no message is held up; other
coroutines of the application are. What the strategy imports on first use is imported when the
assignor is built (:func:`~lagassign.kafka.group.import_ahead`).

**Member metadata.** aiokafka's ``ConsumerProtocolMemberMetadata`` is version 0 (topics and user
data): the previous assignment and the generation travel in the user data, in the layout of
Kafka's sticky assignor (:func:`~lagassign.kafka.wire.encode_user_data`). aiokafka does not tell
assignors the group's generation: the leader numbers its assignments instead (one more than the
highest number its members report) and sends the number in the assignment's user data; members
report it back as their generation.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from typing import Any

from aiokafka.coordinator.assignors.abstract import (  # type: ignore[import-untyped]
    AbstractPartitionAssignor,
)
from aiokafka.coordinator.protocol import (  # type: ignore[import-untyped]
    ConsumerProtocolMemberAssignment,
    ConsumerProtocolMemberMetadata,
)

from lagassign.kafka.group import GroupAssignor, LeaderAssignment, Subscription
from lagassign.kafka.settings import AssignorSettings
from lagassign.kafka.wire import decode_capacity, decode_user_data, encode_user_data
from lagassign.model import TopicPartition
from lagassign.strategies import RebalanceProtocol, create, names

__all__ = ["AIOKAFKA_LAG_TIMEOUT_S", "LagassignAssignor", "assignor", "assignors"]

#: seconds the leader blocks the event loop for offsets at most, by default (shorter than
#: settings.LAG_TIMEOUT_S, kafka-python's default, because the event loop waits)
AIOKAFKA_LAG_TIMEOUT_S = 1.0
METADATA_VERSION = 0
ASSIGNMENT_VERSION = 0


class LagassignAssignor(AbstractPartitionAssignor):  # type: ignore[misc]
    """An aiokafka assignor running one lagassign strategy (build it with :func:`assignor`).

    ``last_result`` holds what this member computed the last time it led the group.
    """

    def __init__(self, glue: GroupAssignor) -> None:
        self.glue = glue
        self.last_result: LeaderAssignment | None = None
        self._owned: tuple[TopicPartition, ...] = ()
        self._generation: int | None = None

    @property
    def name(self) -> str:
        return self.glue.name

    def __repr__(self) -> str:
        return f"LagassignAssignor({self.name!r})"

    def metadata(self, topics: Iterable[str]) -> Any:
        """This member's subscription for the JoinGroup request. Every member starts reading
        the offsets here, in a worker thread, since any member may come out of JoinGroup as
        the leader (see the module docstring)."""
        topics = frozenset(topics)
        self.glue.joining(topics)
        previous = self._owned if self.glue.sends_previous else ()
        return ConsumerProtocolMemberMetadata(
            METADATA_VERSION,
            sorted(topics),
            encode_user_data(previous, self._generation, self.glue.settings.capacity),
        )

    def assign(self, cluster: Any, members: Mapping[str, Any]) -> dict[str, Any]:
        """The leader's assignment: ``{member_id: ConsumerProtocolMemberAssignment}``."""
        subscriptions = [decode_metadata(mid, metadata) for mid, metadata in members.items()]
        result = self.glue.assign(subscriptions, cluster.partitions_for_topic)
        self.last_result = result
        generation = 1 + max((s.generation or 0 for s in subscriptions), default=0)
        user_data = struct.pack(">i", generation)
        return {
            s.member_id: ConsumerProtocolMemberAssignment(
                ASSIGNMENT_VERSION, result.by_topic(s.member_id), user_data
            )
            for s in subscriptions
        }

    def on_assignment(self, assignment: Any) -> None:
        self.glue.synced()
        self._owned = tuple(
            TopicPartition(tp.topic, tp.partition) for tp in assignment.partitions()
        )
        data = assignment.user_data
        self._generation = struct.unpack(">i", data)[0] if data and len(data) == 4 else None


def decode_metadata(member_id: str, metadata: Any) -> Subscription:
    """A member's ``ConsumerProtocolMemberMetadata`` (or its bytes) as the leader sees it:
    its previous assignment, and nothing it still consumes (version 0 has no field for it, and
    eager members consume nothing when they join)."""
    if isinstance(metadata, (bytes, bytearray, memoryview)):
        metadata = ConsumerProtocolMemberMetadata.decode(bytes(metadata))
    owned, generation = decode_user_data(metadata.user_data)
    return Subscription(
        member_id,
        tuple(metadata.subscription),
        owned,
        generation,
        capacity=decode_capacity(metadata.user_data),
    )


def assignor(name: str, **settings: Any) -> LagassignAssignor:
    """An aiokafka assignor for the strategy ``name`` (a name of ``lagassign strategies``).

    ``settings``: as for kafka-python's :func:`~lagassign.kafka.kafka_python.assignor`
    (:meth:`~lagassign.kafka.settings.AssignorSettings.of`), ``lag_timeout`` defaulting to
    :data:`AIOKAFKA_LAG_TIMEOUT_S`; for what the consumer's ``ssl_context`` holds, ``ssl_cafile``,
    ``ssl_certfile``, ``ssl_keyfile`` and ``ssl_password``.
    """
    return _build(name, _settings(settings))


def assignors(strategies: Iterable[str] | None = None, **settings: Any) -> list[LagassignAssignor]:
    """Assignors for ``strategies`` (every registered strategy if None), in that order of
    preference (see :func:`assignor`)."""
    shared = _settings(settings)
    return [_build(n, shared) for n in (names() if strategies is None else strategies)]


def _settings(settings: Mapping[str, Any]) -> AssignorSettings:
    # the event loop waits for the offsets: a shorter default than kafka-python's
    return AssignorSettings.of(**{"lag_timeout": AIOKAFKA_LAG_TIMEOUT_S, **settings})


def _build(name: str, settings: AssignorSettings) -> LagassignAssignor:
    strategy = create(name)
    if RebalanceProtocol.EAGER not in strategy.protocols:
        raise ValueError(f"strategy {strategy.name!r} needs the cooperative protocol")
    return LagassignAssignor(GroupAssignor(strategy, settings, RebalanceProtocol.EAGER))
