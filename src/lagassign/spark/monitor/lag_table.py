"""The ``lag`` table: one row per committed partition per micro-batch, written once per batch.

Columns, exactly (:data:`LAG_SCHEMA`): ``time`` (UTC timestamp of the sample), ``group``,
``topic``, ``partition``, ``committed``, ``end`` (log end offset), ``lag``, ``lag_seconds``,
``lag_seconds_estimated``, ``member_id``. ``lag`` is the core's rule
(:func:`lagassign.lag_rules.lag_from_offsets`) with Kafka's default ``auto.offset.reset``
(latest): the monitor cannot see a group's setting, so a committed offset below the log start
counts 0. ``lag_seconds`` is :func:`lagassign.lag_rules.lag_seconds` over the partition's
log-end samples (:mod:`.samples`): 0 when the lag is 0, ``lag_seconds_estimated`` when the
committed offset is older than every sample and the time was extrapolated, null when the
samples cannot tell (a first sample, a log end that never moved). ``member_id`` is the member
whose assignment lists the partition in the group's description read in the same micro-batch
(:func:`partition_owners`); null when no member's does (the group is empty or rebalancing,
the coordinator could not describe it) or more than one member's does (mid-rebalance).

Files (:func:`write_batch`, the ``groups`` table's too):
``OUT/lag/date=YYYY-MM-DD/batch-<id>.parquet``, the date of the sample's ``time`` (readable
by pyarrow and Spark as a table partitioned by ``date``). A micro-batch writes one file named
by its id, to a temporary name then renamed, after removing any file of the same id under
another date: a replayed micro-batch replaces its rows, never adds to them.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from lagassign.kafka.offsets import LiveMember
from lagassign.lag_rules import DEFAULT_AUTO_OFFSET_RESET, lag_from_offsets, lags_seconds
from lagassign.model import Offsets, TopicPartition
from lagassign.spark.monitor.commits import CommitKey, CommitState
from lagassign.spark.monitor.samples import EndSamples

LAG_TABLE = "lag"
LAG_SCHEMA = pa.schema(
    [
        ("time", pa.timestamp("us", tz="UTC")),
        ("group", pa.string()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("committed", pa.int64()),
        ("end", pa.int64()),
        ("lag", pa.int64()),
        ("lag_seconds", pa.float64()),
        ("lag_seconds_estimated", pa.bool_()),
        ("member_id", pa.string()),
    ]
)


def partition_owners(
    members: Mapping[str, Sequence[LiveMember] | None],
) -> dict[CommitKey, str]:
    """The member owning each (group, topic, partition): the one member of the group whose
    assignment lists the partition; a partition two members list is nobody's (during a
    rebalance the coordinator may describe both the member giving it up and the one taking it)."""
    listed = Counter(
        (group, tp.topic, tp.partition)
        for group, live in members.items()
        for m in live or ()
        for tp in m.assigned
    )
    return {
        (group, tp.topic, tp.partition): m.member_id
        for group, live in members.items()
        for m in live or ()
        for tp in m.assigned
        if listed[(group, tp.topic, tp.partition)] == 1
    }


def lag_rows(
    state: CommitState,
    logs: Mapping[TopicPartition, Offsets],
    samples: EndSamples,
    time: datetime,
    owners: Mapping[CommitKey, str] | None = None,
) -> pa.Table:
    """The rows of one sample at ``time`` (timezone-aware, UTC): every committed partition
    whose log offsets were read, sorted by group, topic and partition; ``lag_seconds`` from
    the partitions' log-end ``samples`` (this one's included); ``member_id`` from ``owners``
    (:func:`partition_owners`; None: every row's is null)."""
    owners = owners or {}
    keys: list[CommitKey] = []
    committed: list[int] = []
    ends: list[int] = []
    lags: list[int] = []
    behind: dict[TopicPartition, list[int]] = defaultdict(list)  # rows with lag, by partition
    for key, commit in sorted(state.commits.items()):
        tp = TopicPartition(key[1], key[2])
        log = logs.get(tp)
        if log is None:  # the topic or partition is gone
            continue
        lag = lag_from_offsets(log.begin, log.end, commit.offset, DEFAULT_AUTO_OFFSET_RESET)
        if lag:
            behind[tp].append(len(keys))
        keys.append(key)
        committed.append(commit.offset)
        ends.append(log.end)
        lags.append(lag)
    seconds: list[float | None] = [0.0] * len(keys)
    estimated = [False] * len(keys)
    for tp, rows in behind.items():  # each partition's samples read once for all its groups
        found = lags_seconds(samples.of(tp), [committed[i] for i in rows], time.timestamp())
        for i, lag_s in zip(rows, found, strict=True):
            seconds[i], estimated[i] = lag_s.seconds, lag_s.estimated
    columns = {
        "time": [time] * len(keys),
        "group": [k[0] for k in keys],
        "topic": [k[1] for k in keys],
        "partition": [k[2] for k in keys],
        "committed": committed,
        "end": ends,
        "lag": lags,
        "lag_seconds": seconds,
        "lag_seconds_estimated": estimated,
        "member_id": [owners.get(k) for k in keys],
    }
    return pa.table(columns, schema=LAG_SCHEMA)


def write_batch(out: Path, table_name: str, batch_id: int, table: pa.Table, time: datetime) -> Path:
    """Writes micro-batch ``batch_id``'s rows as its one file of the table ``table_name``
    (``lag``, ``groups``) under ``out``, partitioned by the date of ``time``."""
    name = _file_name(batch_id)
    root = out / table_name
    for earlier in root.glob(f"date=*/{name}"):
        earlier.unlink()
    folder = root / f"date={time.date().isoformat()}"
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}.tmp-{os.getpid()}"
    pq.write_table(table, tmp)
    final = folder / name
    os.replace(tmp, final)
    return final


def read_batch(out: Path, table_name: str, batch_id: int, schema: pa.Schema) -> pa.Table | None:
    """Micro-batch ``batch_id``'s rows of the table ``table_name`` under ``out`` (whatever its
    date); None when it wrote none."""
    for path in (out / table_name).glob(f"date=*/{_file_name(batch_id)}"):
        return pq.read_table(path, schema=schema)
    return None


def _file_name(batch_id: int) -> str:
    return f"batch-{batch_id:012d}.parquet"
