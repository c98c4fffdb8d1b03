"""The cluster's consumer groups: the ids the fleet pipeline reads (``list_consumer_groups``),
and the members each has with their assignments (``describe_consumer_groups``, for the
monitor)."""

from __future__ import annotations

import concurrent.futures
import logging
import re
from collections.abc import Iterable, Mapping

from lagassign.kafka.offsets import LiveMember, OffsetsReader, live_member

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
    """The members each of many groups has now, with the partitions each is assigned: one
    ``describe_consumer_groups`` for all of them (classic and KIP-848 groups alike), for the
    monitor (``member_id`` in ``lag``, ``members`` in ``groups``, the owners its plans start
    from).

    A group the coordinator cannot describe (an error for that group, or no answer within
    ``timeout`` seconds) is None and is logged; the others are still read."""

    def __init__(self, config: Mapping[str, str], timeout: float = 10.0) -> None:
        from confluent_kafka.admin import AdminClient

        self._admin = AdminClient({"client.id": "lagassign", **config})
        self._timeout = timeout

    def __call__(self, groups: Iterable[str]) -> dict[str, tuple[LiveMember, ...] | None]:
        from confluent_kafka import KafkaException

        wanted = sorted(set(groups))
        if not wanted:
            return {}
        futures = self._admin.describe_consumer_groups(wanted, request_timeout=self._timeout)
        members: dict[str, tuple[LiveMember, ...] | None] = {}
        for group, future in futures.items():
            try:
                described = future.result(timeout=self._timeout).members
            except (KafkaException, concurrent.futures.TimeoutError) as e:
                log.warning("describe_consumer_groups %s: %s (members left null)", group, e)
                members[group] = None
                continue
            members[group] = tuple(
                sorted((live_member(m) for m in described), key=lambda m: m.member_id)
            )
        return members
