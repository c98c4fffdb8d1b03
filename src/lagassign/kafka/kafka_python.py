"""lagassign's strategies as kafka-python 3.x partition assignors.

::

    from kafka import KafkaConsumer
    from lagassign.kafka.kafka_python import assignor

    settings = dict(bootstrap_servers="127.0.0.1:9092", group_id="orders")
    consumer = KafkaConsumer(
        "orders",
        partition_assignment_strategy=[assignor("lag", auto_offset_reset="earliest", **settings)],
        auto_offset_reset="earliest",
        **settings,
    )

:func:`assignor` builds one assignor instance, :func:`assignors` one for every registered
strategy (or the names given). Each carries the strategy's registry name as its protocol name, so
consumers of a group agree on it as on any Kafka assignor.

The group leader runs the strategy through :class:`~lagassign.kafka.group.GroupAssignor`: for a
strategy that reads lag it opens an :class:`~lagassign.kafka.offsets.OffsetsReader` of its own
(kafka-python calls ``assign()`` on its IO thread, so the consumer's own client cannot be used),
waits at most ``lag_timeout`` seconds (3 by default) and otherwise assigns with lag 0 and one
warning. The reader connects with the same settings as the consumer: pass ``bootstrap_servers``,
``security_protocol``, ``sasl_*`` and ``ssl_*`` as to ``KafkaConsumer``, and librdkafka
properties kafka-python has no name for in ``offsets_config``.

**When the offsets are read.** kafka-python 3.0 (3.0.12 at least) loses a rebalance when the
``poll()`` that started it times out while the leader is still between assigning and receiving
its SyncGroup answer, if the rebalance was started by the leader itself because the partitions
of a subscribed topic changed (its metadata snapshot; the usual case at start-up, when the
first rebalance runs before the topics' metadata is known): the coordinator then no longer sees
a rejoin pending, never completes the join and the member drops out of the group for good. A
leader that spends up to ``lag_timeout`` reading offsets inside ``assign()`` makes that window
wide. So a member that led the last rebalance reads the offsets in ``metadata()``, before it
sends JoinGroup (while kafka-python still knows it is rejoining), and its ``assign()`` uses them
(:meth:`~lagassign.kafka.group.GroupAssignor.prefetch`); a failed read is then reported by
``assign()`` as any other. Only a member that did not lead the last rebalance reads the offsets
inside ``assign()``: the first leader of a group, or a new leader after the old one left, and
kafka-python always knows those rebalances as pending. A rebalance adds at most ``lag_timeout``
either way. What is left is the window every assignor has (the assignment itself and the
SyncGroup round trip); a consumer that iterates (``for record in consumer``) or polls without a
deadline (``poll(timeout_ms=float("inf"))``) has none.

Rebalance protocol: kafka-python 3 implements KIP-429, and a consumer runs the cooperative
protocol when every one of its assignors supports it. An instance built here declares exactly
one protocol: ``assignor("cooperative-sticky")`` the cooperative one, every other strategy, and
every instance of a list from :func:`assignors` that mixes strategies, the eager one. Under the
eager protocol ``cooperative-sticky`` sends no owned partitions (eager members revoke everything
before they join, as in Kafka), so it withholds nothing.

Member metadata is ``ConsumerProtocolSubscription`` version 3: topics, owned partitions,
generation and ``client_rack``; the user data repeats owned partitions and generation in the
layout of Kafka's sticky assignor (:func:`~lagassign.kafka.group.encode_user_data`), which a
leader reads when the owned-partitions field is empty (members on aiokafka, Java's ``sticky``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kafka.coordinator.assignors.abstract import (  # type: ignore[import-untyped]
    AbstractPartitionAssignor,
)
from kafka.coordinator.assignors.abstract import (
    RebalanceProtocol as KafkaRebalanceProtocol,
)
from kafka.protocol.consumer.metadata import (  # type: ignore[import-untyped]
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

from lagassign.kafka.group import (
    DEFAULT_LAG_TIMEOUT,
    GroupAssignor,
    LeaderAssignment,
    OffsetsFetch,
    Subscription,
    client_properties,
    decode_user_data,
    encode_user_data,
    protocol_for,
    sends_owned,
)
from lagassign.model import TopicPartition
from lagassign.strategies import RebalanceProtocol, Strategy, create, names

__all__ = ["LagassignAssignor", "assignor", "assignors", "decode_subscription"]

#: the ConsumerProtocolSubscription version members send (owned partitions, generation, rack)
SUBSCRIPTION_VERSION = 3
ASSIGNMENT_VERSION = 0

_PROTOCOLS = {
    RebalanceProtocol.EAGER: KafkaRebalanceProtocol.EAGER,
    RebalanceProtocol.COOPERATIVE: KafkaRebalanceProtocol.COOPERATIVE,
}


class LagassignAssignor(AbstractPartitionAssignor):  # type: ignore[misc]
    """A kafka-python assignor running one lagassign strategy (build it with :func:`assignor`).

    ``last_result`` holds what this member computed the last time it led the group.
    """

    def __init__(
        self,
        glue: GroupAssignor,
        protocol: RebalanceProtocol,
        client_rack: str | None = None,
    ) -> None:
        if protocol not in glue.protocols:
            raise ValueError(
                f"strategy {glue.name!r} does not support the {protocol.value} protocol"
            )
        self.glue = glue
        self.protocol = protocol
        self.client_rack = client_rack or None
        self.last_result: LeaderAssignment | None = None
        self._owned: tuple[TopicPartition, ...] = ()
        self._generation: int | None = None
        # whether this member led the last rebalance (assign() ran before on_assignment()),
        # and the topics its group subscribed then
        self._assigned = False
        self._led_last = False
        self._group_topics: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        return self.glue.name

    def __repr__(self) -> str:
        return f"LagassignAssignor({self.name!r}, {self.protocol.value})"

    def supported_protocols(self) -> list[Any]:
        return [_PROTOCOLS[self.protocol]]

    def metadata(self, topics: Iterable[str]) -> Any:
        """This member's subscription for the JoinGroup request.

        A member that led the last rebalance reads the offsets here, before it joins, so that
        its ``assign()`` is quick: kafka-python 3.0 drops a rebalance whose leader is still
        assigning when the ``poll()`` that started it times out (see the module docstring).
        """
        topics = frozenset(topics)
        self._assigned = False  # a new join attempt: what an earlier one assigned never arrived
        if self._led_last:
            self.glue.prefetch(topics | self._group_topics)
        owned = self._owned if sends_owned(self.glue.strategy, self.protocol) else ()
        return encode_subscription(topics, owned, self._generation, self.client_rack)

    def assign(self, cluster: Any, members: Iterable[Any]) -> dict[str, Any]:
        """The leader's assignment: ``{member_id: ConsumerProtocolAssignment}``."""
        subscriptions = [
            decode_subscription(m.member_id, m.metadata, getattr(m, "group_instance_id", None))
            for m in members
        ]
        result = self.glue.assign(subscriptions, cluster.partitions_for_topic)
        self.last_result = result
        self._assigned = True
        self._group_topics = frozenset(t for s in subscriptions for t in s.topics)
        return {
            s.member_id: ConsumerProtocolAssignment(
                ASSIGNMENT_VERSION, result.by_topic(s.member_id), b""
            )
            for s in subscriptions
        }

    def on_assignment(self, assignment: Any, generation: int) -> None:
        self._led_last, self._assigned = self._assigned, False
        if not self._led_last:
            self.glue.discard_prefetch()
        self._owned = tuple(
            TopicPartition(tp.topic, tp.partition) for tp in assignment.partitions()
        )
        self._generation = generation if generation is not None and generation >= 0 else None


def encode_subscription(
    topics: Iterable[str],
    owned: Iterable[TopicPartition],
    generation: int | None,
    rack: str | None = None,
) -> Any:
    """A ``ConsumerProtocolSubscription`` (version 3) as kafka-python sends it."""
    owned = tuple(owned)
    grouped: dict[str, list[int]] = {}
    for tp in owned:
        grouped.setdefault(tp.topic, []).append(tp.partition)
    owned_field = [
        ConsumerProtocolSubscription.TopicPartition(topic=t, partitions=sorted(ps))
        for t, ps in sorted(grouped.items())
    ]
    return ConsumerProtocolSubscription(
        version=SUBSCRIPTION_VERSION,
        topics=sorted(topics),
        user_data=encode_user_data(owned, generation),
        owned_partitions=owned_field,
        generation_id=-1 if generation is None else generation,
        rack_id=rack,
    )


def decode_subscription(
    member_id: str, metadata: Any, instance_id: str | None = None
) -> Subscription:
    """A member's subscription (decoded by kafka-python, or its bytes) as the leader sees it.

    Owned partitions come from the owned-partitions field (version 1+), else from sticky user
    data; the generation from the generation field (version 2+), else from the user data.
    """
    if isinstance(metadata, (bytes, bytearray, memoryview)):
        metadata = ConsumerProtocolSubscription.decode(bytes(metadata))
    from_user_data, user_generation = decode_user_data(getattr(metadata, "user_data", None))
    owned = (
        tuple(
            TopicPartition(tp.topic, p)
            for tp in getattr(metadata, "owned_partitions", None) or ()
            for p in tp.partitions
        )
        or from_user_data
    )
    generation = getattr(metadata, "generation_id", -1)
    return Subscription(
        member_id=member_id,
        topics=tuple(metadata.topics),
        owned=owned,
        generation=generation if generation is not None and generation >= 0 else user_generation,
        instance_id=instance_id or None,
        rack=getattr(metadata, "rack_id", None) or None,
    )


def assignor(
    name: str,
    *,
    group_id: str,
    auto_offset_reset: str = "latest",
    lag_timeout: float = DEFAULT_LAG_TIMEOUT,
    protocol: RebalanceProtocol | str | None = None,
    client_rack: str | None = None,
    offsets_config: Mapping[str, str] | None = None,
    fetch: OffsetsFetch | None = None,
    **connection: Any,
) -> LagassignAssignor:
    """A kafka-python assignor for the strategy ``name`` (a name of ``lagassign strategies``).

    ``connection``: the consumer's ``bootstrap_servers``, ``client_id``, ``security_protocol``,
    ``sasl_*`` and ``ssl_*`` settings, for the leader's offsets reader (strategies that read
    lag need ``bootstrap_servers``). ``auto_offset_reset`` should be the consumer's: it decides
    the lag of partitions without a committed offset. ``protocol``: the strategy's preferred
    one unless given.
    """
    strategy = create(name)
    chosen = strategy.protocols[0] if protocol is None else RebalanceProtocol(protocol)
    return _build(
        strategy,
        chosen,
        group_id=group_id,
        auto_offset_reset=auto_offset_reset,
        lag_timeout=lag_timeout,
        client_rack=client_rack,
        offsets_config=offsets_config,
        fetch=fetch,
        connection=connection,
    )


def assignors(
    strategies: Iterable[str] | None = None,
    *,
    group_id: str,
    auto_offset_reset: str = "latest",
    lag_timeout: float = DEFAULT_LAG_TIMEOUT,
    client_rack: str | None = None,
    offsets_config: Mapping[str, str] | None = None,
    fetch: OffsetsFetch | None = None,
    **connection: Any,
) -> list[LagassignAssignor]:
    """Assignors for ``strategies`` (every registered strategy if None), in that order of
    preference, all on the one protocol they have in common (see :func:`assignor`)."""
    built = [create(n) for n in (names() if strategies is None else strategies)]
    protocol = protocol_for(built)
    return [
        _build(
            s,
            protocol,
            group_id=group_id,
            auto_offset_reset=auto_offset_reset,
            lag_timeout=lag_timeout,
            client_rack=client_rack,
            offsets_config=offsets_config,
            fetch=fetch,
            connection=connection,
        )
        for s in built
    ]


def _build(
    strategy: Strategy,
    protocol: RebalanceProtocol,
    *,
    group_id: str,
    auto_offset_reset: str,
    lag_timeout: float,
    client_rack: str | None,
    offsets_config: Mapping[str, str] | None,
    fetch: OffsetsFetch | None,
    connection: Mapping[str, Any],
) -> LagassignAssignor:
    glue = GroupAssignor(
        strategy,
        group_id=group_id,
        offsets_config=client_properties(connection, offsets_config),
        auto_offset_reset=auto_offset_reset,
        lag_timeout=lag_timeout,
        fetch=fetch,
    )
    return LagassignAssignor(glue, protocol, client_rack)
