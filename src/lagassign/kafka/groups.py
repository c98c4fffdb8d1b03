"""The cluster's consumer groups: the ids the fleet pipeline reads (``list_consumer_groups``)."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping

from lagassign.kafka.offsets import ClientConfigError, ClientLog, OffsetsError

log = logging.getLogger(__name__)


def list_groups(config: Mapping[str, str], timeout: float, pattern: str | None = None) -> list[str]:
    """Ids of the cluster's consumer groups (those whose whole id matches ``pattern``), sorted."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient

    servers = config.get("bootstrap.servers", "")
    try:
        admin = AdminClient({"client.id": "lagassign", **config}, logger=ClientLog())
    except KafkaException as e:
        raise ClientConfigError(f"Kafka client for {servers}: {e.args[0]}") from None
    try:
        listed = admin.list_consumer_groups(request_timeout=timeout).result(timeout=timeout + 5)
    except KafkaException as e:
        raise OffsetsError(
            f"Kafka at {servers}: list_consumer_groups failed: {e.args[0]}"
        ) from None
    except TimeoutError:
        raise OffsetsError(
            f"Kafka at {servers}: no answer to list_consumer_groups within the {timeout:g} s "
            "timeout"
        ) from None
    problems = list(listed.errors or ())
    errors = [e.str() if isinstance(e, KafkaError) else str(e) for e in problems]
    if errors and not listed.valid:
        if isinstance(problems[0], KafkaError) and problems[0].code() == KafkaError._TIMED_OUT:
            raise OffsetsError(
                f"Kafka at {servers}: no answer to list_consumer_groups within the "
                f"{timeout:g} s timeout"
            )
        raise OffsetsError(f"Kafka at {servers}: list_consumer_groups failed: {errors[0]}")
    for error in errors:
        log.warning("listing consumer groups at %s: %s", servers, error)
    regex = re.compile(pattern) if pattern is not None else None
    ids = {g.group_id for g in listed.valid or () if g.group_id}
    return sorted(g for g in ids if regex is None or regex.fullmatch(g))
