"""The cluster's consumer groups: the ids the fleet pipeline reads (``list_consumer_groups``),
and how many members each has (``describe_consumer_groups``, for the monitor)."""

from __future__ import annotations

import concurrent.futures
import logging
import re
from collections.abc import Iterable, Mapping

from lagassign.kafka.offsets import OffsetsReader

log = logging.getLogger(__name__)


def list_groups(config: Mapping[str, str], timeout: float, pattern: str | None = None) -> list[str]:
    """Ids of the cluster's consumer groups (those whose whole id matches ``pattern``), sorted.

    Through :meth:`OffsetsReader.group_ids`, so a cluster that cannot be reached, or refuses
    the credentials, fails as fast as a read does."""
    with OffsetsReader(config, timeout=timeout) as reader:
        ids = reader.group_ids()
    regex = re.compile(pattern) if pattern is not None else None
    return [g for g in ids if regex is None or regex.fullmatch(g)]


class GroupMembers:
    """How many members each of many groups has now: one ``describe_consumer_groups`` for all
    of them (classic and KIP-848 groups alike), for the monitor's ``groups`` table.

    A group the coordinator cannot describe (an error for that group, or no answer within
    ``timeout`` seconds) counts None and is logged; the others still count."""

    def __init__(self, config: Mapping[str, str], timeout: float = 10.0) -> None:
        from confluent_kafka.admin import AdminClient

        self._admin = AdminClient({"client.id": "lagassign", **config})
        self._timeout = timeout

    def __call__(self, groups: Iterable[str]) -> dict[str, int | None]:
        from confluent_kafka import KafkaException

        wanted = sorted(set(groups))
        if not wanted:
            return {}
        futures = self._admin.describe_consumer_groups(wanted, request_timeout=self._timeout)
        counts: dict[str, int | None] = {}
        for group, future in futures.items():
            try:
                counts[group] = len(future.result(timeout=self._timeout).members)
            except (KafkaException, concurrent.futures.TimeoutError) as e:
                log.warning("describe_consumer_groups %s: %s (members left null)", group, e)
                counts[group] = None
        return counts
