"""Snapshot rows, both ways: a model :class:`~lagassign.model.Group` as rows, and one group's
rows as a model group.

A snapshot row is one group × partition (docs/pipeline.md lists the columns): what the snapshot
files hold (:mod:`lagassign.formats.snapshot` reads and checks them) and what every source of
the fleet pipeline (snapshot files, describe dumps, a live cluster, the sample fleet) turns its
input into. Inside the pipeline, rows carry more than a file does (:data:`ROW_SCHEMA`):
``source`` and ``row`` say where a row came from, so that every later error can name the file
and the row; ``lag`` is a lag given as such (describe dumps) instead of offsets;
``rate_window`` the seconds a live read measured the rates over
(:attr:`lagassign.model.Group.rate_window`, which decides saturation; a file's rates have none);
a row with a null ``topic`` is a member that owns nothing (live groups have them); ``error``
marks a source that failed (the only non-null column then, with ``source`` and ``row``).

The rows of a group make the model group this way (:func:`build_group`): its members are the
distinct non-null ``member_id``\\ s, each owning the partitions of its rows; a member subscribes
its ``subscribed`` topics, or every topic of the group when no row of it says; its ``rack``,
``instance_id`` (static membership), ``generation`` (of what it owns, for the sticky
strategies) and ``capacity`` are those its rows give; ``auto_offset_reset`` is the group's
(null means "latest"). Rows that disagree about a group or a member raise
:class:`~lagassign.formats.errors.InputError` naming the file and row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from lagassign.formats import snapshot_formats
from lagassign.formats.errors import InputError
from lagassign.formats.limits import MAX_PARTITIONS
from lagassign.java_ordering import java_order
from lagassign.lag_rules import DEFAULT_AUTO_OFFSET_RESET
from lagassign.model import (
    Group,
    Member,
    ModelError,
    Offsets,
    Partition,
    Topic,
    TopicPartition,
)


def place(source: str, row: int | None) -> str:
    """Where a row is, as error messages say it: ``file:line``, or ``file: row N`` (Parquet:
    formats whose rows are not lines)."""
    if row is None:
        return source
    fmt = snapshot_formats.file_format(source)
    if fmt is not None and not fmt.lines:
        return f"{source}: row {row}"
    return f"{source}:{row}"


#: a snapshot file's columns, one row per group × partition (docs/pipeline.md): what the
#: readers accept, the sample fleet holds and the benchmark writes
SNAPSHOT_SCHEMA = pa.schema(
    [
        pa.field("group", pa.string()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("begin", pa.int64()),
        pa.field("end", pa.int64()),
        pa.field("committed", pa.int64()),
        pa.field("member_id", pa.string()),
        pa.field("client_id", pa.string()),
        pa.field("host", pa.string()),
        pa.field("rack", pa.string()),
        pa.field("auto_offset_reset", pa.string()),
        pa.field("subscribed", pa.list_(pa.string())),
        pa.field("replica_racks", pa.list_(pa.string())),
        pa.field("rate_in", pa.float64()),
        pa.field("rate_out", pa.float64()),
        pa.field("instance_id", pa.string()),
        pa.field("generation", pa.int64()),
        pa.field("capacity", pa.float64()),
    ]
)

#: snapshot rows inside the pipeline: a file's columns and the internal extras (see above)
ROW_SCHEMA = pa.schema(
    [
        *SNAPSHOT_SCHEMA,
        pa.field("lag", pa.int64()),
        pa.field("rate_window", pa.float64()),
        pa.field("source", pa.string()),
        pa.field("row", pa.int64()),
        pa.field("error", pa.string()),
    ]
)

# ------------------------------------------------------------------------------------------------
# model groups -> rows (describe dumps, live groups, generated groups)


def group_rows(
    group: Group,
    source: str,
    clients: Mapping[str, tuple[str | None, str | None]] | None = None,
) -> dict[str, list[Any]]:
    """Snapshot rows of a model group: one per partition (a lag given as such stays a lag) and
    one per member that owns nothing, so that no member is lost. ``clients``: member id ->
    (client id, host)."""
    cols: dict[str, list[Any]] = {name: [] for name in ROW_SCHEMA.names}
    owners = group.current_owners()
    every_topic = set(group.topics)
    by_id = {m.id: m for m in group.members}

    def subscription(member_id: str | None) -> list[str] | None:
        if member_id is None:
            return None
        topics = by_id[member_id].topics
        return None if topics == every_topic else sorted(topics)

    def add(topic: str | None, partition: int | None, member_id: str | None, **values: Any) -> None:
        member = by_id.get(member_id) if member_id is not None else None
        client, host = (clients or {}).get(member_id or "", (None, None))
        row = {
            "group": group.id,
            "topic": topic,
            "partition": partition,
            "member_id": member_id,
            "client_id": client,
            "host": host,
            "rack": member.rack if member else None,
            "instance_id": member.instance_id if member else None,
            "generation": member.generation if member else None,
            "capacity": member.capacity if member else None,
            "auto_offset_reset": group.auto_offset_reset,
            "rate_window": group.rate_window,
            "subscribed": subscription(member_id),
            "source": source,
            **values,
        }
        for name in ROW_SCHEMA.names:
            cols[name].append(row.get(name))

    for p in group.partitions():
        offsets = p.offsets
        add(
            p.topic,
            p.partition,
            owners.get(p.tp),
            begin=offsets.begin if offsets else None,
            end=offsets.end if offsets else None,
            committed=offsets.committed if offsets else None,
            lag=p.lag if offsets is None else None,
            replica_racks=sorted(p.racks) or None,
            rate_in=p.rate_in,
            rate_out=p.rate_out,
        )
    owning = set(owners.values())
    for m in group.members:
        if m.id not in owning:
            add(None, None, m.id)
    return cols


def rows_batch(cols: Mapping[str, list[Any]]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(dict(cols), schema=ROW_SCHEMA)


def error_batch(
    error: InputError | str, source: str = "", row: int | None = None
) -> pa.RecordBatch:
    """A batch of one row that says a source failed."""
    if isinstance(error, InputError):
        source, message = error.place, error.message
    else:
        message = error
    cols: dict[str, list[Any]] = {name: [None] for name in ROW_SCHEMA.names}
    cols.update(source=[source], row=[row], error=[message])
    return rows_batch(cols)


Row = Mapping[str, Any]


def _where(row: Row) -> str:
    return place(str(row.get("source") or "<input>"), row.get("row"))


def _ordered(rows: Sequence[Row]) -> list[Row]:
    """``rows`` by topic (in Java's order; member rows without one last), partition, file and
    row."""
    keys: dict[str | None, bytes] = {}
    for row in rows:
        topic = row.get("topic")
        if topic not in keys:
            keys[topic] = java_order(topic or "")

    def order(row: Row) -> tuple[bool, bytes, int, str, int]:
        topic = row.get("topic")
        return (
            topic is None,
            keys[topic],
            row.get("partition") or 0,
            str(row.get("source") or ""),
            row.get("row") or 0,
        )

    return sorted(rows, key=order)


def in_file_order(rows: Sequence[Row]) -> list[Row]:
    """``rows`` by file and row."""
    return sorted(rows, key=lambda r: (str(r.get("source") or ""), r.get("row") or 0))


#: a member's columns that every row of the member must agree on (null rows say nothing)
MEMBER_COLUMNS = ("rack", "instance_id", "generation", "capacity")


@dataclass
class _MemberRows:
    first: Row
    #: column -> (value, the row that first gave it)
    said: dict[str, tuple[Any, Row]] = field(default_factory=dict)
    subscribed: set[str] | None = None
    owned: list[TopicPartition] = field(default_factory=list)

    def value(self, column: str) -> Any:
        return self.said[column][0] if column in self.said else None


def build_group(rows: Sequence[Row]) -> Group:
    """The model group of one group's rows (all with the same ``group``)."""
    if not rows:
        raise ValueError("a group needs rows")
    rows = _ordered(rows)
    group_id = str(rows[0]["group"])
    if len(rows) > MAX_PARTITIONS and rows[MAX_PARTITIONS].get("topic") is not None:
        raise InputError(
            _where(rows[MAX_PARTITIONS]),
            f"group {group_id!r} has more than the {MAX_PARTITIONS:,} partitions lagassign "
            "reads in one group",
        )
    reset: str | None = None
    reset_row: Row | None = None
    partitions: dict[str, list[Partition]] = {}
    seen: dict[TopicPartition, Row] = {}
    members: dict[str, _MemberRows] = {}
    all_topics = _topics(rows)
    resets = {row.get("auto_offset_reset") for row in rows}
    resets.discard(None)
    if len(resets) == 1:  # the rows agree
        [reset] = resets
    # else the first in file order, or the first row that disagrees with it
    for row in in_file_order(rows) if len(resets) > 1 else ():
        value = row.get("auto_offset_reset")
        if value is not None:
            if reset is None:
                reset, reset_row = value, row
            elif value.lower() != reset.lower():
                raise InputError(
                    _where(row),
                    f"auto_offset_reset: {value!r} disagrees with {reset!r} "
                    f"({_where(reset_row or row)}) for group {group_id!r}",
                )
    for row in rows:
        topic, number = row.get("topic"), row.get("partition")
        member_id = row.get("member_id")
        if topic is not None and number is not None:
            tp = TopicPartition(topic, number)
            if tp in seen:
                raise InputError(
                    _where(row),
                    f"partition: {tp} listed twice for group {group_id!r} "
                    f"(also at {_where(seen[tp])})",
                )
            seen[tp] = row
            try:
                partitions.setdefault(topic, []).append(_partition(row, topic, number))
            except ModelError as e:
                raise InputError(_where(row), f"{e.where or 'partition'}: {e.message}") from None
        if member_id is None:
            continue
        m = members.setdefault(member_id, _MemberRows(row))
        if topic is not None and number is not None:
            m.owned.append(TopicPartition(topic, number))
        for column in MEMBER_COLUMNS:
            value = row.get(column)
            if value is None:
                continue
            if column not in m.said:
                m.said[column] = (value, row)
            elif value != m.said[column][0]:
                first, first_row = m.said[column]
                raise InputError(
                    _where(row),
                    f"{column}: {value!r} disagrees with {first!r} ({_where(first_row)}) "
                    f"for member {member_id!r}",
                )
        subscribed = row.get("subscribed")
        if subscribed is not None:
            unknown = [t for t in subscribed if t not in all_topics]
            if unknown:
                raise InputError(
                    _where(row),
                    f"subscribed: topic {unknown[0]!r} has no partitions in group {group_id!r}",
                )
            m.subscribed = (m.subscribed or set()) | set(subscribed)
    every_topic = frozenset(partitions)
    model_members = []
    for mid, m in sorted(members.items()):
        try:
            model_members.append(
                Member(
                    mid,
                    frozenset(m.subscribed) if m.subscribed is not None else every_topic,
                    instance_id=m.value("instance_id"),
                    rack=m.value("rack"),
                    owned=tuple(m.owned),
                    generation=m.value("generation"),
                    capacity=m.value("capacity"),
                )
            )
        except ModelError as e:
            raise InputError(_where(m.first), f"{e.where}: {e.message}") from None
    topics = {
        name: Topic(name, tuple(partitions[name])) for name in sorted(partitions, key=java_order)
    }
    try:
        return Group(
            group_id,
            topics,
            tuple(model_members),
            reset or DEFAULT_AUTO_OFFSET_RESET,
            next((w for r in rows if (w := r.get("rate_window")) is not None), None),
        )
    except ModelError as e:  # pragma: no cover - the checks above come first
        raise InputError(_where(rows[0]), f"group {group_id!r}: {e}") from None


def _topics(rows: Sequence[Row]) -> set[str]:
    return {r["topic"] for r in rows if r.get("topic") is not None}


def _partition(row: Row, topic: str, number: int) -> Partition:
    listed = row.get("replica_racks")
    racks = frozenset(listed) if listed else frozenset()
    rate_in, rate_out = row.get("rate_in"), row.get("rate_out")
    lag = row.get("lag")
    if lag is not None:
        return Partition(topic, number, lag, None, racks, rate_in, rate_out)
    offsets = Offsets(row["begin"], row["end"], row.get("committed"))
    return Partition(topic, number, None, offsets, racks, rate_in, rate_out)
