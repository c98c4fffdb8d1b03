"""The cluster's consumer groups: the ids the fleet pipeline reads (``list_consumer_groups``)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from lagassign.kafka.offsets import OffsetsReader


def list_groups(config: Mapping[str, str], timeout: float, pattern: str | None = None) -> list[str]:
    """Ids of the cluster's consumer groups (those whose whole id matches ``pattern``), sorted.

    Through :meth:`OffsetsReader.group_ids`, so a cluster that cannot be reached, or refuses
    the credentials, fails as fast as a read does."""
    with OffsetsReader(config, timeout=timeout) as reader:
        ids = reader.group_ids()
    regex = re.compile(pattern) if pattern is not None else None
    return [g for g in ids if regex is None or regex.fullmatch(g)]
