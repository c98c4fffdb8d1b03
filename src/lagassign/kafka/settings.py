"""What a lagassign assignor takes from the application, whatever the Kafka client.

The group, the lag settings and the consumer's connection settings, turned into librdkafka
properties for the leader's :class:`~lagassign.kafka.offsets.OffsetsReader`
(:class:`AssignorSettings`, :func:`client_properties`), and the rebalance protocol a consumer
configured with several strategies runs (:func:`protocol_for`). Both adapters
(:mod:`lagassign.kafka.kafka_python`, :mod:`lagassign.kafka.aiokafka`) build these; the leader's
round (:mod:`lagassign.kafka.group`) reads them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from lagassign.model import Offsets, TopicPartition
from lagassign.strategies import RebalanceProtocol, Strategy

#: seconds the leader waits for offsets by default (kafka-python's adapter, and any other
#: caller of AssignorSettings): well below any rebalance timeout. aiokafka's adapter blocks its
#: event loop for that wait and has a shorter default of its own, aiokafka.AIOKAFKA_LAG_TIMEOUT_S
LAG_TIMEOUT_S = 3.0

#: reads committed, earliest and latest offsets: (group, topics, timeout) -> offsets
OffsetsFetch = Callable[[str, Sequence[str], float], Mapping[TopicPartition, Offsets]]


@dataclass(frozen=True)
class AssignorSettings:
    """What a lagassign assignor needs besides its strategy, whatever the client.

    ``offsets_config`` holds the client properties (``bootstrap.servers``, ``security.*``,
    ``sasl.*``, ``ssl.*``) of the leader's :class:`OffsetsReader`; ``fetch`` replaces the reader
    altogether (tests, benchmarks). Neither is used by strategies that do not read lag.
    ``auto_offset_reset`` should be the consumer's: it decides the lag of partitions without a
    committed offset.
    """

    group_id: str
    auto_offset_reset: str = "latest"
    lag_timeout: float = LAG_TIMEOUT_S
    offsets_config: Mapping[str, str] = field(default_factory=dict)
    fetch: OffsetsFetch | None = None
    #: messages per second this member can read, sent to the leader in the user data so
    #: that time-aware ``balanced`` knows it (else the leader estimates it from the rates)
    capacity: float | None = None
    #: import what the strategy loads on first use as the assignor is built, in a thread
    #: (:func:`lagassign.kafka.group.import_ahead`), rather than in the leader's ``assign()``
    #: on the client's event loop; False saves every member that memory (about 55 MiB and a
    #: second of CPU for ``balanced``'s NumPy and SciPy) at the price of a stall of about half a
    #: second in the first rebalance a member leads that needs them
    import_ahead: bool = True

    def __post_init__(self) -> None:
        if self.lag_timeout <= 0:
            raise ValueError(f"lag_timeout must be positive, got {self.lag_timeout}")
        if self.capacity is not None and not 0 <= self.capacity < math.inf:
            raise ValueError(
                f"capacity must be a non-negative number of messages per second, "
                f"got {self.capacity}"
            )
        object.__setattr__(self, "offsets_config", MappingProxyType(dict(self.offsets_config)))

    @classmethod
    def of(
        cls,
        *,
        group_id: str,
        auto_offset_reset: str = "latest",
        lag_timeout: float = LAG_TIMEOUT_S,
        offsets_config: Mapping[str, str] | None = None,
        fetch: OffsetsFetch | None = None,
        capacity: float | None = None,
        import_ahead: bool = True,
        **connection: object,
    ) -> AssignorSettings:
        """The settings from the keyword arguments the adapters' ``assignor()`` takes.

        ``connection``: the consumer's own connection settings, under the names
        ``KafkaConsumer`` / ``AIOKafkaConsumer`` give them (:data:`CONNECTION_PROPERTIES`);
        ``offsets_config``, librdkafka properties, applies on top. Unknown names raise
        ``TypeError``, so a misspelt setting is not silently ignored.
        """
        return cls(
            group_id,
            auto_offset_reset,
            lag_timeout,
            client_properties(connection, offsets_config),
            fetch,
            capacity,
            import_ahead,
        )


def protocol_for(strategies: Sequence[Strategy]) -> RebalanceProtocol:
    """The one protocol a consumer configured with these strategies runs: the first
    strategy's most preferred protocol that every strategy supports (the first strategy is the
    one the group uses once every member lists it)."""
    if not strategies:
        raise ValueError("no strategies")
    for protocol in strategies[0].protocols:
        if all(protocol in s.protocols for s in strategies):
            return protocol
    raise ValueError(
        "strategies "
        + ", ".join(repr(s.name) for s in strategies)
        + " have no rebalance protocol in common"
    )


# -- connection settings --------------------------------------------------------------------

#: kafka-python / aiokafka connection setting -> librdkafka property of the OffsetsReader
CONNECTION_PROPERTIES: Mapping[str, str] = {
    "bootstrap_servers": "bootstrap.servers",
    "client_id": "client.id",
    "security_protocol": "security.protocol",
    "sasl_mechanism": "sasl.mechanism",
    "sasl_plain_username": "sasl.username",
    "sasl_plain_password": "sasl.password",
    "sasl_kerberos_service_name": "sasl.kerberos.service.name",
    "ssl_cafile": "ssl.ca.location",
    "ssl_certfile": "ssl.certificate.location",
    "ssl_keyfile": "ssl.key.location",
    "ssl_password": "ssl.key.password",
    "ssl_crlfile": "ssl.crl.location",
    "ssl_ciphers": "ssl.cipher.suites",
    "ssl_check_hostname": "ssl.endpoint.identification.algorithm",
}


def client_properties(
    settings: Mapping[str, object], extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """librdkafka properties for the OffsetsReader from a Python client's connection settings.

    ``settings`` uses the keyword names of ``KafkaConsumer`` / ``AIOKafkaConsumer``
    (:data:`CONNECTION_PROPERTIES`); ``None`` values are skipped. ``extra`` (librdkafka
    properties, e.g. ``sasl.oauthbearer.*``) is applied last. Unknown names raise
    ``TypeError``.
    """
    unknown = sorted(set(settings) - set(CONNECTION_PROPERTIES))
    if unknown:
        raise TypeError(
            f"unknown connection setting(s) {', '.join(unknown)} "
            f"(known: {', '.join(CONNECTION_PROPERTIES)}; pass librdkafka properties "
            "in offsets_config)"
        )
    props: dict[str, str] = {}
    for key, value in settings.items():
        if value is None:
            continue
        name = CONNECTION_PROPERTIES[key]
        if isinstance(value, Iterable) and not isinstance(value, str):
            props[name] = ",".join(str(s) for s in value)  # a list of bootstrap servers
        elif key == "security_protocol":
            props[name] = str(value).lower()
        elif key == "ssl_check_hostname":
            props[name] = "https" if value else "none"
        else:
            props[name] = str(value)
    props.update(extra or {})
    return props
