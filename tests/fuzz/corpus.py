"""A seeded corpus of mutated inputs for every reader (issue 13), kept in the repository so
that every run, and anyone reading a failure, sees the same inputs.

Each reader gets a small, valid base input and seeded mutations of it: values swapped for the
ones a hostile or broken file holds (integers at and beyond Kafka's int32 and int64, thousands
of digits, ``NaN``, ``Infinity``, 1e999, control characters, line separators, lone surrogates,
strings of 40,000 characters, the wrong JSON type, nesting 40 deep), keys deleted, repeated
and invented, cells dropped, added and replaced, lines deleted, repeated and cut, notes that
are Kafka's and notes that are not, byte-order marks, CRLF, bytes that are not UTF-8, broken
\\uXXXX escapes, Parquet columns of other types. Readers: the group file, the scenario file,
describe dumps, client properties, and the snapshot files (JSON lines, CSV, Parquet).

``corpus()`` returns the cases, ``write(case, folder)`` puts one in a file named as its
format wants. Run ``python -m tests.fuzz.corpus OUT`` to write the whole corpus to a folder.
"""

from __future__ import annotations

import copy
import csv
import datetime
import decimal
import io
import json
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

SEED = 13
#: cases per reader: 2,200 in all
COUNTS = {
    "group": 500,
    "scenario": 300,
    "describe": 400,
    "properties": 300,
    "jsonl": 250,
    "csv": 250,
    "parquet": 200,
}
SUFFIXES = {
    "group": ".json",
    "scenario": ".json",
    "describe": ".txt",
    "properties": ".properties",
    "jsonl": ".jsonl",
    "csv": ".csv",
    "parquet": ".parquet",
}


@dataclass(frozen=True)
class Case:
    reader: str
    number: int
    #: what was done to the base input, for failure messages
    mutation: str
    data: bytes

    @property
    def name(self) -> str:
        return f"{self.reader}-{self.number:04d}{SUFFIXES[self.reader]}"


# ------------------------------------------------------------------------------------------------
# base inputs: small, valid, every key and column used

GROUP: dict[str, Any] = {
    "group": "g",
    "auto_offset_reset": "earliest",
    "topics": {
        "t0": {
            "partitions": [
                {"partition": 0, "lag": 100, "racks": ["a", "b"], "rate_in": 2.5},
                {"partition": 1, "begin": 0, "end": 900, "committed": 40, "rate_out": 3},
                {"partition": 2, "begin": 5, "end": 9, "committed": None},
            ]
        },
        "t1": {"partitions": 3},
    },
    "members": [
        {
            "id": "C0",
            "topics": ["t0", "t1"],
            "instance_id": "i0",
            "rack": "a",
            "owned": [["t0", 0], ["t1", 1]],
            "generation": 4,
            "capacity": 50,
        },
        {"id": "C1", "topics": ["t0"]},
    ],
}

SCENARIO: dict[str, Any] = {
    "name": "s",
    "group": GROUP,
    "throughput": 100,
    "member_throughput": {"C1": 50},
    "rates": {"t0": [1, 2, 0.5]},
    "events": [
        {"time": 10, "join": {"id": "C9", "topics": ["t0"], "throughput": 80, "rack": "b"}},
        {"time": 20, "leave": "C0"},
    ],
    "dt": 1,
    "horizon": 100,
    "rebalance_pause": 2,
    "drain_threshold": 0.5,
}

DESCRIBE_LINES = [
    "",
    "Consumer group 'orders' has no active members.",
    "",
    "GROUP   TOPIC  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID  HOST  CLIENT-ID",
    "orders  o      0          10              50              40   -            -     -",
    "orders  o      1          -               70              -    -            -     -",
    "",
    "GROUP   TOPIC  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID  HOST  CLIENT-ID",
    "pay     p      0          5               9               4    consumer-1-ab  /10.0.0.1  c-1",
    "pay     p      1          5               8               3    consumer-2-cd  /10.0.0.2  c-2",
    "pay     q      0          0               8               8    consumer-2-cd  /10.0.0.2  c-2",
    "",
    "GROUP  TOPIC  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  OWNER",
    "g3     topic1 0          500             3333            2833 client-0_/192.168.1.13",
    "g3     topic1 1          0               3334            3334 client-1_/192.168.1.13",
]

#: (line, the (key, value) it holds when read, or None)
PROPERTIES_LINES: list[tuple[str, tuple[str, str] | None]] = [
    ("# as for kafka-consumer-groups --command-config", None),
    ("security.protocol=SASL_SSL", ("security.protocol", "SASL_SSL")),
    ("sasl.mechanism=SCRAM-SHA-512", ("sasl.mechanism", "SCRAM-SHA-512")),
    ("sasl.username: user", ("sasl.username", "user")),
    ("sasl.password=p\\u0061ss\\u00e9", ("sasl.password", "passé")),
    ("! another comment", None),
    ("ssl.ca.location /tmp/ca.pem", ("ssl.ca.location", "/tmp/ca.pem")),
    ("client.id=lagassign", ("client.id", "lagassign")),
]

SNAPSHOT_ROWS: list[dict[str, Any]] = [
    {
        "group": "g",
        "topic": "t",
        "partition": 0,
        "begin": 0,
        "end": 100,
        "committed": 10,
        "member_id": "m1",
        "client_id": "c1",
        "host": "/h1",
        "rack": "a",
        "auto_offset_reset": "earliest",
        "subscribed": ["t"],
        "replica_racks": ["a", "b"],
        "rate_in": 1.5,
        "rate_out": 2.0,
        "instance_id": "i1",
        "generation": 3,
        "capacity": 10.0,
    },
    {"group": "g", "topic": "t", "partition": 1, "begin": 5, "end": 50, "committed": None},
    {"group": "g", "topic": "u", "partition": 0, "begin": 0, "end": 7, "member_id": "m2"},
    {"group": "h", "topic": "t", "partition": 0, "begin": 0, "end": 3, "member_id": "m1"},
]
SNAPSHOT_COLUMNS = list(SNAPSHOT_ROWS[0])

# ------------------------------------------------------------------------------------------------
# what hostile and broken files hold

#: JSON tokens a value is replaced with (as JSON text: some are not JSON, on purpose)
JSON_TOKENS = [
    "0",
    "-1",
    "1",
    "3",
    "999",
    "0.5",
    "-0.0",
    "2147483647",
    "2147483648",
    "1000001",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551616",
    "1" + "0" * 30,
    "1" + "0" * 400,
    "9" * 5000,
    "1e308",
    "1e999",
    "-1e999",
    "NaN",
    "Infinity",
    "-Infinity",
    "null",
    "true",
    "false",
    '""',
    '"t0"',
    '"C0"',
    '"earliest"',
    '"a\\nlagassign: error: forged"',
    '"a\\r\\nb"',
    '"\\ud800"',
    '"x\\udfff"',
    '"\\u001b[31mred"',
    '"\\u0000"',
    '"\\u2028"',
    '"\\u0085"',
    '"\\ud83d\\ude00"',
    '"' + "x" * 40_000 + '"',
    "[]",
    "{}",
    '["t0"]',
    '[["t0", 0]]',
    '{"partitions": 2}',
    "[" * 40 + "]" * 40,
    "[" * 3000 + "]" * 3000,
]

#: cells a describe dump or a CSV file may hold
CELL_TOKENS = [
    "-",
    "",
    "x",
    "0",
    "-1",
    "2147483647",
    "2147483648",
    "9223372036854775807",
    "9223372036854775808",
    "1" + "0" * 5000,
    "٣",
    "1_0",
    "+5",
    "0x10",
    "1e3",
    "nan",
    "inf",
    "1e999",
    "\x1b[2J",
    "a\x00b",
    "a\u2028b",
    "a\u0085b",
    "a\x0cb",
    "GROUP",
    "x" * 40_000,
    '"unterminated',
    "a,b",
]

KAFKA_NOTES = [
    "Consumer group 'orders' has no active members.",
    "Warning: Consumer group 'pay' is rebalancing.",
    "Error: Consumer group 'gone' does not exist.",
    "Error: The consumer group 'gone' does not exist.",
    "Note: This will not show information about old Zookeeper-based consumers.",
]
OTHER_NOTES = [
    "this is a note",
    "Consumer group orders has no active members.",
    "pay p 2 0",
    "TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG",
    "$ kafka-consumer-groups.sh --describe --all-groups",
]

ESCAPES = ["\\u12", "\\uD800", "\\uDC00x", "\\uZZZZ", "\\u", "\\", "\\uD83D\\uDE00", "\\t\\n"]

# ------------------------------------------------------------------------------------------------
# mutations

_MARK = "\u0000MUTATED\u0000"
_MARK_JSON = json.dumps(_MARK)


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``node``."""
    found = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _paths(value, (*path, i))
    return found


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _json_mutation(doc: Any, rng: random.Random) -> tuple[str, str]:
    """(what was done, the JSON text) for one mutation of ``doc``."""
    doc = copy.deepcopy(doc)
    kind = rng.choice(
        ["value", "value", "value", "value", "delete", "repeat", "unknown", "text", "text"]
    )
    paths = _paths(doc)
    if kind == "value":
        path = rng.choice(paths[1:])
        token = rng.choice(JSON_TOKENS)
        _at(doc, path[:-1])[path[-1]] = _MARK
        return f"{list(path)} = {token[:30]}", json.dumps(doc).replace(_MARK_JSON, token, 1)
    objects = [p for p in paths if isinstance(_at(doc, p), dict) and _at(doc, p)]
    if kind in ("delete", "repeat", "unknown") and objects:
        path = rng.choice(objects)
        obj = _at(doc, path)
        key = rng.choice(sorted(obj))
        if kind == "delete":
            del obj[key]
            return f"{list(path)}: {key!r} deleted", json.dumps(doc)
        if kind == "repeat":
            obj[_MARK] = rng.choice([obj[key], 7, "x"])
            text = json.dumps(doc).replace(_MARK_JSON, json.dumps(key), 1)
            return f"{list(path)}: {key!r} repeated", text
        obj[rng.choice(["comitted", "partitons", "", "id\n"])] = 1
        return f"{list(path)}: an unknown key", json.dumps(doc)
    text = json.dumps(doc, indent=rng.choice([None, 1]))
    return _text_mutation(text, rng)


def _text_mutation(text: str, rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(["cut", "delete", "insert", "wrap", "bom", "crlf"])
    i = rng.randrange(len(text) + 1)
    if kind == "cut":
        return f"cut at {i}", text[:i]
    if kind == "delete":
        return f"character {i} deleted", text[:i] + text[i + 1 :]
    if kind == "insert":
        ch = rng.choice([",", ":", "[", "]", "{", "}", '"', "\\", "0", "-", "a", " ", "\n"])
        return f"{ch!r} inserted at {i}", text[:i] + ch + text[i:]
    if kind == "wrap":
        n = rng.choice([1, 31, 40])
        return f"wrapped in {n} lists", "[" * n + text + "]" * n
    if kind == "bom":
        return "byte-order mark", "\ufeff" + text
    return "CRLF", text.replace("\n", "\r\n")


def _encoded(text: str, rng: random.Random, mutation: str) -> tuple[str, bytes]:
    """UTF-8 (lone surrogates as their escapes would be: not encodable), now and then with
    bytes that are not UTF-8."""
    data = text.encode("utf-8", "backslashreplace")
    if rng.random() < 0.04:
        i = rng.randrange(len(data) + 1)
        return f"{mutation}; byte 0xff at {i}", data[:i] + b"\xff" + data[i:]
    return mutation, data


def _group_case(rng: random.Random) -> tuple[str, bytes]:
    mutation, text = _json_mutation(GROUP, rng)
    return _encoded(text, rng, mutation)


def _scenario_case(rng: random.Random) -> tuple[str, bytes]:
    mutation, text = _json_mutation(SCENARIO, rng)
    return _encoded(text, rng, mutation)


_DESCRIBE_MUTATIONS = [
    *("cell", "cell", "cell", "drop", "add", "delete", "repeat", "note", "other"),
    *("header", "only-header", "text", "text", "empty", "newgroup"),
]


def _describe_case(rng: random.Random) -> tuple[str, bytes]:
    lines = list(DESCRIBE_LINES)
    rows = [
        i for i, line in enumerate(lines) if line and line.split()[0] in ("orders", "pay", "g3")
    ]
    kind = rng.choice(_DESCRIBE_MUTATIONS)
    i = rng.choice(rows)
    cells = lines[i].split()
    if kind == "cell":
        j = rng.randrange(len(cells))
        cells[j] = rng.choice(CELL_TOKENS)
        lines[i] = "  ".join(cells)
        mutation = f"line {i + 1} cell {j} = {cells[j][:20]!r}"
    elif kind == "drop":
        del cells[rng.randrange(len(cells))]
        lines[i] = "  ".join(cells)
        mutation = f"line {i + 1}: a cell dropped"
    elif kind == "add":
        cells.insert(rng.randrange(len(cells) + 1), rng.choice(["x", "0", "-"]))
        lines[i] = "  ".join(cells)
        mutation = f"line {i + 1}: a cell added"
    elif kind == "delete":
        j = rng.randrange(len(lines))
        del lines[j]
        mutation = f"line {j + 1} deleted"
    elif kind == "repeat":
        lines.insert(i, lines[i])
        mutation = f"line {i + 1} repeated"
    elif kind in ("note", "other"):
        note = rng.choice(KAFKA_NOTES if kind == "note" else OTHER_NOTES)
        j = rng.randrange(len(lines) + 1)
        lines.insert(j, note)
        mutation = f"{note!r} at line {j + 1}"
    elif kind == "header":
        j = next(k for k, line in enumerate(lines) if line.startswith("GROUP"))
        header = lines[j].split()
        del header[rng.randrange(len(header))]
        lines[j] = "  ".join(header)
        mutation = f"header line {j + 1}: a column dropped"
    elif kind == "only-header":
        lines = [DESCRIBE_LINES[3]]
        mutation = "only a header"
    elif kind == "newgroup":
        cells[0] = rng.choice(["new", "orders", "g3", "pay"])
        lines[i] = "  ".join(cells)
        mutation = f"line {i + 1}: group {cells[0]}"
    elif kind == "empty":
        lines = []
        mutation = "empty"
    else:
        mutation, text = _text_mutation("\n".join(lines) + "\n", rng)
        return _encoded(text, rng, mutation)
    return _encoded("\n".join(lines) + "\n", rng, mutation)


def _properties_case(rng: random.Random) -> tuple[str, bytes]:
    lines = [line for line, _ in PROPERTIES_LINES]
    i = rng.randrange(len(lines))
    kind = rng.choice(["escape", "escape", "escape", "separator", "control", "comment", "text"])
    if kind == "escape":
        escape = rng.choice(ESCAPES)
        j = rng.randrange(len(lines[i]) + 1)
        lines[i] = lines[i][:j] + escape + lines[i][j:]
        mutation = f"line {i + 1}: {escape!r} at {j}"
    elif kind == "separator":
        lines[i] = lines[i].replace("=", "", 1).replace(":", "", 1).replace(" ", "", 1)
        mutation = f"line {i + 1}: no separator"
    elif kind == "control":
        ch = rng.choice(["\x00", "\x1b", "\u2028", "\x0c", "\r"])
        j = rng.randrange(len(lines[i]) + 1)
        lines[i] = lines[i][:j] + ch + lines[i][j:]
        mutation = f"line {i + 1}: {ch!r} at {j}"
    elif kind == "comment":
        lines[i] = "#" + lines[i]
        mutation = f"line {i + 1} commented out"
    else:
        mutation, text = _text_mutation("\n".join(lines) + "\n", rng)
        return _encoded(text, rng, mutation)
    return _encoded("\n".join(lines) + "\n", rng, mutation)


def _jsonl_case(rng: random.Random) -> tuple[str, bytes]:
    lines = [json.dumps(row) for row in SNAPSHOT_ROWS]
    i = rng.randrange(len(lines))
    if rng.random() < 0.8:
        mutation, lines[i] = _json_mutation(SNAPSHOT_ROWS[i], rng)
        lines[i] = lines[i].replace("\n", " ")
    else:
        mutation, text = _text_mutation("\n".join(lines) + "\n", rng)
        return _encoded(text, rng, mutation)
    return _encoded("\n".join(lines) + "\n", rng, f"row {i + 1}: {mutation}")


def _csv_text(header: list[str], rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ";".join(value)
    return str(value)


def _csv_case(rng: random.Random) -> tuple[str, bytes]:
    header = list(SNAPSHOT_COLUMNS)
    rows = [[_csv_cell(row.get(c)) for c in header] for row in SNAPSHOT_ROWS]
    kind = rng.choice(["cell", "cell", "cell", "drop", "add", "column", "text"])
    i = rng.randrange(len(rows))
    if kind == "cell":
        j = rng.randrange(len(header))
        rows[i][j] = rng.choice(CELL_TOKENS)
        mutation = f"row {i + 1} {header[j]} = {rows[i][j][:20]!r}"
    elif kind == "drop":
        del rows[i][rng.randrange(len(header))]
        mutation = f"row {i + 1}: a cell dropped"
    elif kind == "add":
        rows[i].append("x")
        mutation = f"row {i + 1}: a cell added"
    elif kind == "column":
        j = rng.randrange(len(header))
        change = rng.choice(["drop", "repeat", "rename"])
        if change == "drop":
            del header[j]
            for row in rows:
                del row[j]
        elif change == "repeat":
            header.append(header[j])
            for row in rows:
                row.append(row[j])
        else:
            header[j] = rng.choice(["comitted", "", "GROUP", "\ufeffgroup"])
        mutation = f"column {j}: {change}"
    else:
        mutation, text = _text_mutation(_csv_text(header, rows), rng)
        return _encoded(text, rng, mutation)
    return _encoded(_csv_text(header, rows), rng, mutation)


def not_utf8_strings(n: int) -> pa.Array:
    """A string column whose last value is a UTF-8-encoded surrogate (Arrow reads it as is)."""
    raw = pa.array([b"g"] * (n - 1) + [b"\xed\xa0\x80"], pa.binary())
    return pa.Array.from_buffers(pa.string(), n, raw.buffers())


def _parquet_array(column: str, n: int, rng: random.Random) -> tuple[str, pa.Array]:
    choices: list[tuple[str, Callable[[], pa.Array]]] = [
        ("timestamp", lambda: pa.array([datetime.datetime(2026, 1, 1)] * n)),
        ("binary", lambda: pa.array([b"x", b"\xff"] * (n // 2) + [b"y"] * (n % 2), pa.binary())),
        ("decimal", lambda: pa.array([decimal.Decimal("1.5")] * n, pa.decimal128(5, 1))),
        ("uint64 2^64-1", lambda: pa.array([1] * (n - 1) + [2**64 - 1], pa.uint64())),
        ("int64 -1", lambda: pa.array([0] * (n - 1) + [-1], pa.int64())),
        ("int64 2^40", lambda: pa.array([0] * (n - 1) + [2**40], pa.int64())),
        ("int64 2^63-1", lambda: pa.array([0] * (n - 1) + [2**63 - 1], pa.int64())),
        ("float NaN", lambda: pa.array([1.0] * (n - 1) + [float("nan")])),
        ("float inf", lambda: pa.array([1.0] * (n - 1) + [float("inf")])),
        ("float 1.5", lambda: pa.array([1.5] * n)),
        ("nulls", lambda: pa.nulls(n, pa.string())),
        ("string control", lambda: pa.array(["a"] * (n - 1) + ["b\nc"])),
        ("string 2028", lambda: pa.array(["a"] * (n - 1) + ["b\u2028"])),
        ("string empty", lambda: pa.array(["a"] * (n - 1) + [""])),
        ("string long", lambda: pa.array(["a"] * (n - 1) + ["x" * 40_000])),
        ("string digits", lambda: pa.array(["1"] * n)),
        ("string not UTF-8", lambda: not_utf8_strings(n)),
        ("dictionary", lambda: pa.array(["t"] * n).dictionary_encode()),
        ("list control", lambda: pa.array([["t"]] * (n - 1) + [["t\x1b"]])),
        ("list empty item", lambda: pa.array([["t"]] * (n - 1) + [[""]])),
        ("list null item", lambda: pa.array([["t"]] * (n - 1) + [[None]], pa.list_(pa.string()))),
        ("struct", lambda: pa.array([{"a": 1}] * n)),
    ]
    what, make = rng.choice(choices)
    return f"{column}: {what}", make()


def _parquet_case(rng: random.Random) -> tuple[str, bytes]:
    table = pa.Table.from_pylist(SNAPSHOT_ROWS)
    kind = rng.choice(["column", "column", "column", "drop", "unknown", "cut"])
    column = rng.choice(table.column_names)
    if kind == "column":
        mutation, array = _parquet_array(column, table.num_rows, rng)
        table = table.set_column(table.column_names.index(column), column, array)
    elif kind == "drop":
        table = table.drop_columns([column])
        mutation = f"{column} dropped"
    elif kind == "unknown":
        table = table.append_column("comitted", pa.array([1] * table.num_rows))
        mutation = "an unknown column"
    out = io.BytesIO()
    pq.write_table(table, out)
    data = out.getvalue()
    if kind == "cut":
        i = rng.randrange(len(data))
        return f"cut at byte {i}", data[:i]
    return mutation, data


_MAKERS: dict[str, Callable[[random.Random], tuple[str, bytes]]] = {
    "group": _group_case,
    "scenario": _scenario_case,
    "describe": _describe_case,
    "properties": _properties_case,
    "jsonl": _jsonl_case,
    "csv": _csv_case,
    "parquet": _parquet_case,
}


def corpus(counts: dict[str, int] = COUNTS, seed: int = SEED) -> list[Case]:
    """Every case, the same for the same ``seed``."""
    cases = []
    for reader, count in counts.items():
        rng = random.Random(f"{seed}-{reader}")
        for number in range(count):
            mutation, data = _MAKERS[reader](rng)
            cases.append(Case(reader, number, mutation, data))
    return cases


def write(case: Case, folder: Path) -> Path:
    path = folder / case.name
    path.write_bytes(case.data)
    return path


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for case in corpus():
        write(case, out)
    print(f"{sum(COUNTS.values())} cases written to {out}")
