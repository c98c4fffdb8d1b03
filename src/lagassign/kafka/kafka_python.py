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
wide. So every member starts reading the offsets in ``metadata()``, as it sends JoinGroup
(while kafka-python still knows it is rejoining), in a worker thread: any member may come out
of JoinGroup as the leader (the first member of a group, or the next after the leader left),
and only JoinGroup's answer says which. The leader's ``assign()`` uses that read, waiting at
most for what is left of it, and reads only the group's topics its own subscription lacked
(:meth:`~lagassign.kafka.group.GroupAssignor.prefetch`); a member that led the last
rebalance reads the group's topics too, and a member that does not lead drops its read. A
failed read is reported by ``assign()`` as any other. ``metadata()`` and ``assign()`` run
inside kafka-python's event loop (a step longer than 0.1 s is logged as ``Task … ran for …
It is blocking the event loop``), so the read must not run there: it runs beside the JoinGroup
round trip instead. The cost: every member reads the offsets of its topics once per
rebalance, not only the leader (at 10,000 partitions one Metadata, one OffsetFetch and two
ListOffsets requests per broker, about 60 ms of CPU in the member). A rebalance adds at most
``lag_timeout`` either way. When JoinGroup answers before the read ends (this member joined
last), ``assign()`` does not wait for it on the loop if an earlier read of this member's
serves (younger than 60 s, of every subscribed topic: it assigns from that one) or if the
group has one member (its assignment does not depend on lags); only a first read is waited
for (:meth:`~lagassign.kafka.group.GroupAssignor.assign`). What is left is the window every
assignor has (the assignment itself and the SyncGroup round trip); a consumer that iterates
(``for record in consumer``) or polls without a deadline (``poll(timeout_ms=float("inf"))``)
has none.

Rebalance protocol: kafka-python 3 implements KIP-429. A consumer runs the highest protocol
that all of its assignors declare (``supported_protocols()``) and refuses to start if they
declare none in common. An instance built here declares exactly one protocol, the one it runs:
the one asked for (``protocol=``), else the strategy's preferred one, and for a list from
:func:`assignors` the first strategy's most preferred protocol that all of them support. It
must know which protocol its consumer runs, because that decides what it tells the leader; an
instance declaring both could not know, since the other assignors of the consumer decide.
``cooperative-sticky`` prefers the cooperative protocol; ``balanced`` supports it; the others
are eager only. For both, a leader withholds for one round every partition another member
still consumes (:mod:`lagassign.strategies.cooperative`), whichever protocol it runs itself,
so members of one group may run different protocols while it switches (docs/consumers.md).

Member metadata is ``ConsumerProtocolSubscription`` version 3: topics, owned partitions,
generation and ``client_rack``. As in Kafka, the owned-partitions field lists what the member
still consumes: its assignment on the cooperative protocol, nothing on the eager one (eager
members revoke everything before they join). The user data carries the previous assignment
and generation, under either protocol, in the layout of Kafka's sticky assignor
(:func:`~lagassign.kafka.wire.encode_user_data`), for sticky strategies; ``cooperative-sticky``
run eagerly sends none, as Kafka's. A leader keeps stickiness from the field, else the user data
(members on aiokafka or on the eager protocol, Java's ``sticky``), and decides what is in flight
from the field only.
"""

from __future__ import annotations

from collections.abc import Iterable
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

from lagassign.kafka.group import GroupAssignor, LeaderAssignment, Subscription
from lagassign.kafka.settings import AssignorSettings, protocol_for
from lagassign.kafka.wire import decode_capacity, decode_user_data, encode_user_data
from lagassign.model import TopicPartition
from lagassign.strategies import RebalanceProtocol, create, names

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

    def __init__(self, glue: GroupAssignor, client_rack: str | None = None) -> None:
        self.glue = glue
        self.client_rack = client_rack or None
        self.last_result: LeaderAssignment | None = None
        self._owned: tuple[TopicPartition, ...] = ()
        self._generation: int | None = None

    @property
    def name(self) -> str:
        return self.glue.name

    @property
    def protocol(self) -> RebalanceProtocol:
        return self.glue.protocol

    def __repr__(self) -> str:
        return f"LagassignAssignor({self.name!r}, {self.protocol.value})"

    def supported_protocols(self) -> list[Any]:
        return [_PROTOCOLS[self.protocol]]

    def metadata(self, topics: Iterable[str]) -> Any:
        """This member's subscription for the JoinGroup request.

        Every member starts reading the offsets here, in a worker thread, since any member may
        come out of JoinGroup as the leader: so that the leader's ``assign()`` is quick and the
        read does not block kafka-python's event loop, and because kafka-python 3.0 drops a
        rebalance whose leader is still assigning when the ``poll()`` that started it times
        out (see the module docstring).
        """
        topics = frozenset(topics)
        self.glue.joining(topics)
        previous = self._owned if self.glue.sends_previous else ()
        return encode_subscription(
            topics,
            previous,
            self._generation,
            self.client_rack,
            consuming=self.glue.sends_consuming,
            capacity=self.glue.settings.capacity,
        )

    def assign(self, cluster: Any, members: Iterable[Any]) -> dict[str, Any]:
        """The leader's assignment: ``{member_id: ConsumerProtocolAssignment}``."""
        subscriptions = [
            decode_subscription(m.member_id, m.metadata, getattr(m, "group_instance_id", None))
            for m in members
        ]
        result = self.glue.assign(subscriptions, cluster.partitions_for_topic)
        self.last_result = result
        return {
            s.member_id: ConsumerProtocolAssignment(
                ASSIGNMENT_VERSION, result.by_topic(s.member_id), b""
            )
            for s in subscriptions
        }

    def on_assignment(self, assignment: Any, generation: int) -> None:
        self.glue.synced()
        self._owned = tuple(
            TopicPartition(tp.topic, tp.partition) for tp in assignment.partitions()
        )
        self._generation = generation if generation is not None and generation >= 0 else None


def encode_subscription(
    topics: Iterable[str],
    owned: Iterable[TopicPartition],
    generation: int | None,
    rack: str | None = None,
    *,
    consuming: bool,
    capacity: float | None = None,
) -> Any:
    """A ``ConsumerProtocolSubscription`` (version 3) as kafka-python sends it.

    ``owned``, the member's previous assignment, goes in the user data, and, if the member
    still consumes it (``consuming``: the cooperative protocol), in the owned-partitions field.
    """
    owned = tuple(owned)
    grouped: dict[str, list[int]] = {}
    for tp in owned if consuming else ():
        grouped.setdefault(tp.topic, []).append(tp.partition)
    owned_field = [
        ConsumerProtocolSubscription.TopicPartition(topic=t, partitions=sorted(ps))
        for t, ps in sorted(grouped.items())
    ]
    return ConsumerProtocolSubscription(
        version=SUBSCRIPTION_VERSION,
        topics=sorted(topics),
        user_data=encode_user_data(owned, generation, capacity),
        owned_partitions=owned_field,
        generation_id=-1 if generation is None else generation,
        rack_id=rack,
    )


def decode_subscription(
    member_id: str, metadata: Any, instance_id: str | None = None
) -> Subscription:
    """A member's subscription (decoded by kafka-python, or its bytes) as the leader sees it.

    What the member still consumes comes from the owned-partitions field (version 1+) only;
    its previous assignment from that field, else from sticky user data; the generation from
    the generation field (version 2+), else from the user data.
    """
    if isinstance(metadata, (bytes, bytearray, memoryview)):
        metadata = ConsumerProtocolSubscription.decode(bytes(metadata))
    user_data = getattr(metadata, "user_data", None)
    from_user_data, user_generation = decode_user_data(user_data)
    consuming = tuple(
        TopicPartition(tp.topic, p)
        for tp in getattr(metadata, "owned_partitions", None) or ()
        for p in tp.partitions
    )
    generation = getattr(metadata, "generation_id", -1)
    return Subscription(
        member_id=member_id,
        topics=tuple(metadata.topics),
        owned=consuming or from_user_data,
        generation=generation if generation is not None and generation >= 0 else user_generation,
        instance_id=instance_id or None,
        rack=getattr(metadata, "rack_id", None) or None,
        consuming=consuming,
        capacity=decode_capacity(user_data),
    )


def assignor(
    name: str,
    *,
    protocol: RebalanceProtocol | str | None = None,
    client_rack: str | None = None,
    **settings: Any,
) -> LagassignAssignor:
    """A kafka-python assignor for the strategy ``name`` (a name of ``lagassign strategies``).

    ``settings``: ``group_id`` (required), ``auto_offset_reset`` (the consumer's: it decides
    the lag of partitions without a committed offset), ``lag_timeout``, ``offsets_config`` and
    the consumer's ``bootstrap_servers``, ``client_id``, ``security_protocol``, ``sasl_*`` and
    ``ssl_*`` settings for the leader's offsets reader (strategies that read lag need
    ``bootstrap_servers``); see :meth:`~lagassign.kafka.settings.AssignorSettings.of`.
    ``protocol``: the one the consumer runs, the strategy's preferred one unless given (the
    instance declares only that one). ``client_rack``: the consumer's.
    """
    strategy = create(name)
    chosen = strategy.protocols[0] if protocol is None else RebalanceProtocol(protocol)
    return LagassignAssignor(
        GroupAssignor(strategy, AssignorSettings.of(**settings), chosen), client_rack
    )


def assignors(
    strategies: Iterable[str] | None = None,
    *,
    protocol: RebalanceProtocol | str | None = None,
    client_rack: str | None = None,
    **settings: Any,
) -> list[LagassignAssignor]:
    """Assignors for ``strategies`` (every registered strategy if None), in that order of
    preference, all on one protocol: ``protocol``, else the first strategy's most preferred
    protocol that every strategy supports (see :func:`assignor` for the other arguments)."""
    built = [create(n) for n in (names() if strategies is None else strategies)]
    chosen = protocol_for(built) if protocol is None else RebalanceProtocol(protocol)
    shared = AssignorSettings.of(**settings)
    return [LagassignAssignor(GroupAssignor(s, shared, chosen), client_rack) for s in built]
