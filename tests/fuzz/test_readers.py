"""Every reader against the seeded corpus of mutated inputs (tests/fuzz/corpus.py, issue 13).

For each of the 2,200 inputs, the reader (called directly; the snapshot readers of
formats/snapshot.py without Spark) either accepts it, and then nothing in it is lost: every
partition, member and property of the input is in what it read, every name printable; or it
raises :class:`InputError` whose one printable line names the file. Nothing else: no other
exception, no hang (the limits of formats/limits.py bound each input's work before any is
done). A sample goes through the command line in this process, ``lagassign.cli.main``: exit
status 0 or 2, on 2 one line on stderr naming the file, never a traceback.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lagassign.cli import main
from lagassign.formats.client_properties import read_properties
from lagassign.formats.describe import load_describe
from lagassign.formats.errors import InputError
from lagassign.formats.group_file import load_group
from lagassign.formats.scenario import load_scenario
from lagassign.formats.snapshot import read_snapshot
from lagassign.formats.snapshot_rows import ROW_SCHEMA, build_group
from lagassign.model import Group
from tests.fuzz.corpus import COUNTS, PROPERTIES_LINES, Case, corpus, write

CASES = corpus()
#: every CLI_EVERY-th input of a reader the command line reads goes through lagassign.cli.main
CLI_EVERY = 5


def _printable(group: Group) -> None:
    """Every name of the group can be printed and encoded (a lone surrogate cannot)."""
    names = [group.id, *group.topics, *(m.id for m in group.members)]
    names += [x for m in group.members for x in (m.rack, m.instance_id) if x is not None]
    for name in names:
        assert name.isprintable() or name == "", repr(name)
        name.encode("utf-8")


def _text(path: Path) -> str:
    """The file's text as it is (a byte-order mark is no part of it)."""
    return path.read_bytes().decode("utf-8-sig")


def _doc(path: Path) -> Any:
    return json.loads(_text(path))


def _partitions_of(topics: dict[str, Any]) -> set[tuple[str, int]]:
    found = set()
    for topic, spec in topics.items():
        parts = spec["partitions"]
        if isinstance(parts, int):
            found |= {(topic, i) for i in range(parts)}
        else:
            found |= {(topic, p["partition"]) for p in parts}
    return found


def _same_group(group: Group, doc: dict[str, Any]) -> None:
    assert {(p.topic, p.partition) for p in group.partitions()} == _partitions_of(doc["topics"])
    assert [m.id for m in group.members] == [m["id"] for m in doc["members"]]
    for member, spec in zip(group.members, doc["members"], strict=True):
        assert member.topics == set(spec["topics"])
        assert [tuple(tp) for tp in member.owned] == [tuple(tp) for tp in spec.get("owned") or []]
    for topic, spec in doc["topics"].items():
        if isinstance(spec["partitions"], list):
            for p in spec["partitions"]:
                if p.get("lag") is not None:
                    assert group.partition((topic, p["partition"])).lag == p["lag"]  # type: ignore[arg-type]
    _printable(group)


def check_group(path: Path) -> None:
    _same_group(load_group(path), _doc(path))


def check_scenario(path: Path) -> None:
    scenario = load_scenario(path)
    doc = _doc(path)
    if isinstance(doc["group"], dict):
        _same_group(scenario.group, doc["group"])
    assert len(scenario.events) == len(doc.get("events") or [])


_DIGITS = re.compile(r"[0-9]+")


def check_describe(path: Path) -> None:
    groups = load_describe(path)
    # every line that looks like a row (a partition number third) is a partition read
    rows = []
    for line in _text(path).split("\n"):
        cells = line.split()
        if len(cells) >= 6 and cells[0] != "GROUP" and _DIGITS.fullmatch(cells[2]):
            rows.append(cells)
    read = {(g.id, p.topic, p.partition) for g in groups for p in g.partitions()}
    assert read == {(c[0], c[1], int(c[2])) for c in rows}
    assert sum(len(list(g.partitions())) for g in groups) == len(rows)
    members = {(g.id, m.id) for g in groups for m in g.members}
    assert members == {(c[0], c[6]) for c in rows if len(c) > 6 and c[6] != "-"}
    for g in groups:
        _printable(g)


_LINE_END = re.compile(r"\r\n|\r|\n")


def check_properties(path: Path) -> None:
    read = {(p.key, p.value) for p in read_properties(path)}
    lines = _LINE_END.split(_text(path))
    for line, expected in PROPERTIES_LINES:
        starts = [k for k, x in enumerate(lines) if x == line]
        # a base line that is still there and starts a line of its own: read as it was
        if expected and any(k == 0 or not lines[k - 1].endswith("\\") for k in starts):
            assert expected in read, (line, sorted(read))


def _snapshot_rows(path: Path) -> int:
    """How many rows the file holds, counted without lagassign's readers."""
    if path.suffix == ".parquet":
        return int(pq.read_table(path).num_rows)
    text = _text(path)
    if path.suffix == ".jsonl":
        return sum(1 for line in _LINE_END.split(text) if line.strip())
    records = list(csv.reader(io.StringIO(text, newline="")))
    return sum(1 for record in records[1:] if record)


def check_snapshot(path: Path) -> None:
    batches = list(read_snapshot(str(path)))
    table = pa.Table.from_batches(batches, schema=ROW_SCHEMA)
    assert table.num_rows == _snapshot_rows(path)
    by_group: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in table.to_pylist():
        by_group[row["group"]].append(row)
    for group_id, rows in by_group.items():
        group = build_group(rows)
        assert {(p.topic, p.partition) for p in group.partitions()} == {
            (r["topic"], r["partition"]) for r in rows
        }
        assert {m.id for m in group.members} == {
            r["member_id"] for r in rows if r["member_id"] is not None
        }
        assert group.id == group_id
        _printable(group)


CHECKS: dict[str, Callable[[Path], None]] = {
    "group": check_group,
    "scenario": check_scenario,
    "describe": check_describe,
    "properties": check_properties,
    "jsonl": check_snapshot,
    "csv": check_snapshot,
    "parquet": check_snapshot,
}


def _accepted_or_one_line(case: Case, path: Path) -> bool:
    try:
        CHECKS[case.reader](path)
    except InputError as e:
        line = str(e)
        assert line.startswith(str(path)) and line.isprintable(), (case.mutation, line)
        return False
    return True


@pytest.mark.parametrize("reader", list(COUNTS))
def test_every_input_is_read_whole_or_named_in_one_line(tmp_path: Path, reader: str) -> None:
    accepted = 0
    cases = [c for c in CASES if c.reader == reader]
    for case in cases:
        path = write(case, tmp_path)
        try:
            accepted += _accepted_or_one_line(case, path)
        except AssertionError as e:
            raise AssertionError(f"{case.name} ({case.mutation}): {e}") from None
    # the corpus holds both kinds: inputs still valid after their mutation, and bad ones
    assert 0 < accepted < len(cases), accepted


def _command(case: Case, path: Path) -> list[str]:
    if case.reader == "group":
        if case.number % 20 == 0:
            return ["assign", "--strategy", "balanced", "--format", "json", "--input", str(path)]
        return ["plan", "--input", str(path)]
    if case.reader == "scenario":
        return ["simulate", "--scenario", str(path), "--strategies", "range,balanced"]
    if case.reader == "describe":
        return ["plan", "--describe-file", str(path), "--strategies", "range,sticky,balanced"]
    return ["plan", "--input", str(path), "--format", "json"]


CLI_CASES = [c for c in CASES if c.reader != "properties" and c.number % CLI_EVERY == 0]


def test_a_sample_through_the_command_line_is_exit_0_or_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The properties are left out: a valid file would make the command connect."""
    assert len(CLI_CASES) >= 300
    for case in CLI_CASES:
        path = write(case, tmp_path)
        status = main(_command(case, path))
        out, err = capsys.readouterr()
        where = f"{case.name} ({case.mutation})"
        assert "Traceback" not in err, where
        if status == 2:
            assert err.startswith(f"lagassign: error: {path}") and err.count("\n") == 1, (
                where,
                err,
            )
        else:
            assert status == 0 and out, (where, status, err)
            assert all(line.startswith("lagassign: warning: ") for line in err.splitlines()), (
                where,
                err,
            )
