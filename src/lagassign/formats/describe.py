"""Output of ``kafka-consumer-groups.sh --describe`` -> groups.

Both layouts are read, found by their header line, and any number of groups per file
(``--all-groups`` prints one block each)::

    GROUP  TOPIC  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  OWNER
    GROUP  TOPIC  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID  HOST  CLIENT-ID

Columns are matched by name, so extra columns of newer tools are ignored. ``-`` means no
committed offset (``CURRENT-OFFSET``, ``LAG``) or no owner. Every owner becomes a member that
owns its listed partitions and subscribes every topic of its group (the dump does not say
more). A partition without a committed offset follows ``auto.offset.reset``; the log start is
not in the dump, so "earliest" counts from offset 0, an upper bound of the real lag.

Nothing is skipped that could be data: a line is a header, a row of exactly the header's
columns, blank, or one of the notes the tool prints between tables (:data:`_NOTES`: "has no
active members", "is rebalancing", "does not exist"); anything else is an error naming its
line. Lines end at ``\n`` (``\r\n`` too, and a byte-order mark is dropped); every cell is
text without control characters, and every number within :mod:`lagassign.formats.limits`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from lagassign.formats.errors import InputError, read_text
from lagassign.formats.limits import (
    MAX_OFFSET,
    MAX_PARTITION,
    MAX_PARTITIONS,
    text_problem,
    too_large,
)
from lagassign.lag_rules import DEFAULT_AUTO_OFFSET_RESET
from lagassign.model import Group, Member, Offsets, Partition, Topic, TopicPartition

_REQUIRED = ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG")
_OWNER_COLUMNS = ("CONSUMER-ID", "OWNER")
_NONE = "-"
_INTEGER = re.compile(r"-?[0-9]+")
#: what ``kafka-consumer-groups --describe`` prints besides tables (its ConsumerGroupCommand:
#: an empty group, a rebalancing one, a group that does not exist; older tools' note on
#: ZooKeeper-based consumers), matched on the whole line
_NOTES = re.compile(
    r"(?:Error: )?(?:The )?[Cc]onsumer group '.*' does not exist\."
    r"|Consumer group '.*' has no active members\."
    r"|(?:Warning: )?Consumer group '.*' is rebalancing\."
    r"|Note: This will (?:not show|only show) information about .*"
)


@dataclass
class _GroupRows:
    partitions: dict[str, list[Partition]] = field(default_factory=dict)
    owned: dict[str, list[TopicPartition]] = field(default_factory=dict)


def load_describe(
    path: str | Path,
    auto_offset_reset: str = DEFAULT_AUTO_OFFSET_RESET,
    opener: Callable[[str], IO[bytes]] | None = None,
) -> list[Group]:
    """Read a ``--describe`` dump (``opener`` opens it as bytes; default: a local file).
    Raises :class:`InputError` naming the file and line."""
    text = read_text(path, opener)
    groups = parse_describe(text.split("\n"), str(path), auto_offset_reset)
    if not groups:
        raise InputError(str(path), "the input holds no group")
    return groups


def parse_describe(
    lines: Iterable[str],
    source: str = "<describe>",
    auto_offset_reset: str = DEFAULT_AUTO_OFFSET_RESET,
) -> list[Group]:
    groups: dict[str, _GroupRows] = {}
    header: list[str] | None = None
    stray: InputError | None = None
    partitions = 0
    for number, line in enumerate(lines, start=1):
        # (a byte-order mark before the first header would hide it, and the block with it)
        line = (line.removeprefix("\ufeff") if number == 1 else line).rstrip("\r")
        cells = line.split()
        place = f"{source}:{number}"
        if not cells or _NOTES.fullmatch(line.strip()):
            continue
        if cells[0] == "GROUP":
            if stray is not None:
                raise stray
            header = _read_header(cells, place)
            continue
        if header is None:
            # (an error once a header shows the file is a dump: a row that lost its header)
            stray = stray or InputError(
                place, f"before the first header, neither a header nor a note: {line[:40]!r}"
            )
            continue
        if len(cells) != len(header):
            raise InputError(
                place,
                f"expected {len(header)} columns ({' '.join(header)}), got {len(cells)}: "
                "neither a row nor one of kafka-consumer-groups' notes",
            )
        for cell in cells:
            problem = text_problem(cell)
            if problem is not None:
                raise InputError(place, f"{cell[:40]!r}: {problem}")
        partitions += 1
        if partitions > MAX_PARTITIONS:
            raise InputError(
                place, f"more than the {MAX_PARTITIONS:,} partition rows lagassign reads"
            )
        _read_row(dict(zip(header, cells, strict=True)), groups, place)
    if header is None:
        raise InputError(source, "no GROUP TOPIC PARTITION ... header line found")
    return [_build(name, rows, auto_offset_reset) for name, rows in groups.items()]


def _read_header(cells: list[str], place: str) -> list[str]:
    missing = [c for c in _REQUIRED if c not in cells]
    if missing:
        raise InputError(place, f"header lacks column(s) {', '.join(missing)}")
    for column in cells:
        if cells.count(column) > 1:
            raise InputError(place, f"column {column[:40]!r} appears twice in the header")
    return cells


def _number(row: dict[str, str], column: str, place: str, largest: int = MAX_OFFSET) -> int | None:
    value = row[column]
    if value == _NONE:
        return None
    if _INTEGER.fullmatch(value) is None:
        raise InputError(place, f"{column}: expected a number or '-', got {value[:40]!r}")
    digits = len(value.lstrip("-"))
    if digits > len(str(largest)):
        raise InputError(
            place, f"{column}: out of range (at most {largest:,}), got a number of {digits} digits"
        )
    number = int(value)
    if number < 0:
        raise InputError(place, f"{column}: must not be negative, got {number}")
    problem = too_large(number, largest)
    if problem is not None:
        raise InputError(place, f"{column}: {problem}")
    return number


def _read_row(row: dict[str, str], groups: dict[str, _GroupRows], place: str) -> None:
    topic = row["TOPIC"]
    partition = _number(row, "PARTITION", place, MAX_PARTITION)
    if partition is None:
        raise InputError(place, "PARTITION: expected a number, got '-'")
    committed = _number(row, "CURRENT-OFFSET", place)
    end = _number(row, "LOG-END-OFFSET", place)
    lag = _number(row, "LAG", place)
    if committed is not None and lag is not None:
        p = Partition(topic, partition, lag=lag)
    elif end is not None:
        p = Partition(topic, partition, offsets=Offsets(0, end, committed))
    else:
        p = Partition(topic, partition, lag=lag or 0)
    rows = groups.setdefault(row["GROUP"], _GroupRows())
    if any(q.partition == partition for q in rows.partitions.get(topic, ())):
        raise InputError(place, f"{topic}-{partition} listed twice for group {row['GROUP']}")
    rows.partitions.setdefault(topic, []).append(p)
    owner = next((row[c] for c in _OWNER_COLUMNS if c in row), _NONE)
    if owner != _NONE:
        rows.owned.setdefault(owner, []).append(p.tp)


def _build(name: str, rows: _GroupRows, auto_offset_reset: str) -> Group:
    topics = [
        Topic(t, tuple(sorted(ps, key=lambda p: p.partition))) for t, ps in rows.partitions.items()
    ]
    every_topic = frozenset(rows.partitions)
    members = [
        Member(mid, every_topic, owned=tuple(tps)) for mid, tps in sorted(rows.owned.items())
    ]
    return Group.of(topics, members, id=name, auto_offset_reset=auto_offset_reset)
