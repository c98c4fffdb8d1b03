"""Each committed partition's window of recent commits, for the group status
(:mod:`lagassign.status`) and the plans' consume rates (:mod:`.plans`).

Every commit a micro-batch decodes (the query reduces its records to the last of each key, so
one per partition) is added, in log order, to its partition's window
(:func:`lagassign.status.add_commit`: at most :data:`lagassign.status.WINDOW` commits, those
within a second of the newest replace it) as its offset, its commit time (the broker's commit
timestamp) and the partition's lag at that time: the core's lag rule against the log end at
the commit's own time, interpolated from the partition's log-end samples
(:func:`lagassign.lag_rules.end_at`, this micro-batch's sample included). The monitor sees a
commit only in the micro-batch after it; judged against the log end read then, a member that
commits several times between two reads would have each commit's lag counted against the same
end, so its lag would seem to shrink from one to the next while it reads slower than records
come (WARN missed). A commit older than every sample (the history the first micro-batch reads
from the start of ``__consumer_offsets``) counts against the oldest sample's end; one stamped
after the newest (a broker clock ahead of the monitor's) against the newest. A deleted offset
drops its window. Kept per micro-batch like the commit state (``DIR/windows-<id>.parquet``,
:mod:`.kept`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pyarrow as pa

from lagassign.formats.consumer_offsets import OffsetCommit, OffsetDeleted
from lagassign.lag_rules import DEFAULT_AUTO_OFFSET_RESET, end_at, lag_from_offsets
from lagassign.model import Offsets, TopicPartition
from lagassign.spark.monitor import kept
from lagassign.spark.monitor.commits import CommitKey
from lagassign.spark.monitor.samples import EndSamples
from lagassign.status import Commit, add_commit

_STATE_FILE = "windows"
WINDOWS_SCHEMA = pa.schema(
    [
        ("group", pa.string()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offsets", pa.list_(pa.int64())),
        ("times", pa.list_(pa.float64())),
        ("lags", pa.list_(pa.int64())),
    ]
)


class CommitWindows:
    def __init__(self, windows: dict[CommitKey, list[Commit]] | None = None) -> None:
        self.windows: dict[CommitKey, list[Commit]] = {
            key: list(w) for key, w in (windows or {}).items()
        }

    def add(
        self,
        changes: Iterable[OffsetCommit | OffsetDeleted],
        logs: Mapping[TopicPartition, Offsets],
        samples: EndSamples,
    ) -> None:
        """The state's changes in log order (:meth:`.commits.CommitState.apply`), with the
        log offsets read in the same micro-batch and the log-end samples including that read;
        a commit to a partition whose log was not read (the topic is gone) is left out."""
        for change in changes:
            key = (change.group, change.topic, change.partition)
            if isinstance(change, OffsetDeleted):
                self.windows.pop(key, None)
                continue
            tp = TopicPartition(change.topic, change.partition)
            log = logs.get(tp)
            if log is None:
                continue
            at = change.commit_timestamp_ms / 1000
            end = end_at(samples.of(tp), at)
            lag = lag_from_offsets(
                log.begin, log.end if end is None else end, change.offset, DEFAULT_AUTO_OFFSET_RESET
            )
            commit = Commit(change.offset, at, lag)
            add_commit(self.windows.setdefault(key, []), commit)

    def of(self, key: CommitKey) -> list[Commit]:
        return self.windows.get(key, [])

    def save(self, folder: Path, batch_id: int) -> None:
        """Writes the windows after micro-batch ``batch_id``: each window's commits as flat
        columns cut into lists (nested Python lists were most of a micro-batch's time at
        100,000 partitions)."""
        keys = sorted(self.windows)
        offsets: list[int] = []
        times: list[float] = []
        lags: list[int] = []
        ends = [0]
        for key in keys:
            for c in self.windows[key]:
                offsets.append(c.offset)
                times.append(c.time)
                lags.append(c.lag)
            ends.append(len(offsets))
        cuts = pa.array(ends, pa.int32())
        table = pa.table(
            {
                "group": pa.array([k[0] for k in keys], pa.string()),
                "topic": pa.array([k[1] for k in keys], pa.string()),
                "partition": pa.array([k[2] for k in keys], pa.int32()),
                "offsets": pa.ListArray.from_arrays(cuts, pa.array(offsets, pa.int64())),
                "times": pa.ListArray.from_arrays(cuts, pa.array(times, pa.float64())),
                "lags": pa.ListArray.from_arrays(cuts, pa.array(lags, pa.int64())),
            },
            schema=WINDOWS_SCHEMA,
        )
        kept.save(folder, _STATE_FILE, batch_id, table)

    @classmethod
    def load(cls, folder: Path, batch_id: int) -> CommitWindows:
        """The windows after micro-batch ``batch_id``; none before the first."""
        columns = kept.columns(folder, _STATE_FILE, batch_id, WINDOWS_SCHEMA)
        return cls(
            {
                (g, t, p): [Commit(*c) for c in zip(offsets, times, lags, strict=True)]
                for g, t, p, offsets, times, lags in zip(*columns, strict=True)
            }
        )
