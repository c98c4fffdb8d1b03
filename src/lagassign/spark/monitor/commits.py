"""The latest committed offset of every (group, topic, partition), kept per micro-batch.

:class:`CommitState` applies the records of ``__consumer_offsets`` in log order, as the group
coordinator does when it loads the topic: an offset commit replaces the partition's committed
offset (the last one wins, even when it is lower: a reset to earlier is a commit too), a
tombstone removes it. Other records change nothing. ``--group REGEX`` keeps only the groups
whose id the regular expression matches in full.

Exactly once across restarts: after micro-batch N the state is saved as
``DIR/commits-N.parquet`` (:mod:`.kept`), and micro-batch N starts from the state after N − 1,
in memory or, after a restart, from its file. A micro-batch that Spark replays after a crash
starts from the same state, so it computes the same rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from lagassign.formats.consumer_offsets import Decoded, OffsetCommit, OffsetDeleted
from lagassign.spark.monitor import kept

#: (group, topic, partition)
CommitKey = tuple[str, str, int]

STATE_SCHEMA = pa.schema(
    [
        ("group", pa.string()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("committed", pa.int64()),
        ("commit_timestamp_ms", pa.int64()),
    ]
)
_STATE_FILE = "commits"


@dataclass(frozen=True, slots=True)
class Committed:
    offset: int
    commit_timestamp_ms: int


class CommitState:
    """The latest committed offsets of the groups ``group_pattern`` matches (all when None)."""

    def __init__(
        self,
        commits: dict[CommitKey, Committed] | None = None,
        group_pattern: re.Pattern[str] | None = None,
    ) -> None:
        self.commits: dict[CommitKey, Committed] = dict(commits or {})
        self.group_pattern = group_pattern
        self._wanted: dict[str, bool] = {}  # by group id: a micro-batch has 100,000s of records

    def wanted(self, group: str) -> bool:
        if self.group_pattern is None:
            return True
        known = self._wanted.get(group)
        if known is None:
            known = self._wanted[group] = self.group_pattern.fullmatch(group) is not None
        return known

    def apply(self, records: Iterable[Decoded]) -> list[OffsetCommit | OffsetDeleted]:
        """The records, in log order; returns those that changed the state (the commits of
        wanted groups and the deletions), in that order."""
        changes: list[OffsetCommit | OffsetDeleted] = []
        for record in records:
            if isinstance(record, OffsetCommit) and self.wanted(record.group):
                key = (record.group, record.topic, record.partition)
                self.commits[key] = Committed(record.offset, record.commit_timestamp_ms)
                changes.append(record)
            elif isinstance(record, OffsetDeleted):
                key = (record.group, record.topic, record.partition)
                if self.commits.pop(key, None) is not None:
                    changes.append(record)
        return changes

    def topics(self) -> set[str]:
        return {topic for _, topic, _ in self.commits}

    def groups(self) -> set[str]:
        return {group for group, _, _ in self.commits}

    # -- kept per micro-batch ----------------------------------------------------------------

    def save(self, folder: Path, batch_id: int) -> None:
        """Writes the state after micro-batch ``batch_id``."""
        keys = sorted(self.commits)
        table = pa.table(
            {
                "group": [k[0] for k in keys],
                "topic": [k[1] for k in keys],
                "partition": [k[2] for k in keys],
                "committed": [self.commits[k].offset for k in keys],
                "commit_timestamp_ms": [self.commits[k].commit_timestamp_ms for k in keys],
            },
            schema=STATE_SCHEMA,
        )
        kept.save(folder, _STATE_FILE, batch_id, table)

    @classmethod
    def load(
        cls, folder: Path, batch_id: int, group_pattern: re.Pattern[str] | None = None
    ) -> CommitState:
        """The state saved after micro-batch ``batch_id``; empty when ``batch_id`` < 0 (no
        micro-batch before the first). A missing file is an error: the state and the query's
        checkpoint would disagree."""
        state = cls(group_pattern=group_pattern)
        columns = kept.columns(folder, _STATE_FILE, batch_id, STATE_SCHEMA)
        for g, t, p, o, ms in zip(*columns, strict=True):
            if state.wanted(g):
                state.commits[(g, t, p)] = Committed(o, ms)
        return state
