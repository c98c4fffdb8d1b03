"""Input formats: the group file and kafka-consumer-groups --describe dumps."""

import json

import pytest

from lagassign.formats.describe import load_describe, parse_describe
from lagassign.formats.errors import InputError
from lagassign.formats.group_file import load_group, parse_group
from lagassign.lag_rules import group_lags
from lagassign.model import Offsets, TopicPartition

ISSUE_2_GROUP = {
    "group": "g",
    "auto_offset_reset": "earliest",
    "topics": {
        "t0": {
            "partitions": [
                {"partition": 0, "lag": 100000},
                {"partition": 1, "begin": 0, "end": 900, "committed": None, "racks": ["a", "b"]},
            ]
        },
        "t1": {"partitions": 3},
    },
    "members": [
        {
            "id": "C0",
            "topics": ["t0", "t1"],
            "instance_id": None,
            "rack": "a",
            "owned": [["t0", 0]],
            "generation": 4,
        }
    ],
}


def test_issue_2_group_file():
    g = parse_group(ISSUE_2_GROUP)
    assert g.id == "g" and g.auto_offset_reset == "earliest"
    p1 = g.partition(TopicPartition("t0", 1))
    assert p1.offsets == Offsets(0, 900, None) and p1.racks == frozenset({"a", "b"})
    assert [p.lag for p in g.topics["t1"].partitions] == [0, 0, 0]
    (m,) = g.members
    assert (m.rack, m.owned, m.generation) == ("a", (TopicPartition("t0", 0),), 4)
    assert group_lags(g)[TopicPartition("t0", 1)] == 900


def test_only_id_and_topics_are_required_on_a_member():
    g = parse_group(
        {"topics": {"t": {"partitions": 1}}, "members": [{"id": "m", "topics": ["t"]}]},
        source="x/my-group.json",
    )
    assert g.id == "my-group" and g.auto_offset_reset == "latest"


def _mutated(change):
    data = json.loads(json.dumps(ISSUE_2_GROUP))
    change(data)
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["members"].append({"id": "C0", "topics": []}),
            "f.json: members[1].id: duplicate member id 'C0'",
        ),
        (
            lambda d: d["members"][0]["topics"].append("nope"),
            "f.json: members[0].topics: unknown topic 'nope'",
        ),
        (
            lambda d: d["topics"]["t0"]["partitions"][1].update(begin=-3),
            "f.json: topics.t0.partitions[1].begin: offset must not be negative, got -3",
        ),
        (
            lambda d: d["topics"]["t0"]["partitions"][1].update(begin=1000),
            "f.json: topics.t0.partitions[1].end: end offset 900 is below begin offset 1000",
        ),
        (
            lambda d: d["topics"]["t0"]["partitions"][0].update(lag=-1),
            "f.json: topics.t0.partitions[0].lag: lag must not be negative, got -1",
        ),
        (
            lambda d: d["topics"]["t0"]["partitions"][0].update(lag="many"),
            'f.json: topics.t0.partitions[0].lag: expected an integer, got "many"',
        ),
        (lambda d: d["members"][0].update(comitted=3), "f.json: members[0].comitted: unknown key"),
        (lambda d: d["members"][0].pop("topics"), "f.json: members[0]: missing key 'topics'"),
        (
            lambda d: d["members"][0].update(owned=[["t0", 7]]),
            "f.json: members[0].owned: unknown partition t0-7",
        ),
        (
            lambda d: d["topics"]["t0"]["partitions"].append({"partition": 1, "lag": 0}),
            "f.json: topics.t0.partitions[2]: duplicate partition 1",
        ),
        (
            lambda d: d["topics"]["t0"]["partitions"][1].pop("end"),
            "f.json: topics.t0.partitions[1]: missing key 'end'",
        ),
    ],
)
def test_bad_group_names_the_key(change, message):
    with pytest.raises(InputError) as e:
        parse_group(_mutated(change), source="f.json")
    assert str(e.value).startswith(message)
    assert "\n" not in str(e.value)


def test_malformed_json_names_file_line_and_column(tmp_path):
    path = tmp_path / "g.json"
    path.write_text('{"topics": {},\n "members": [,]}')
    with pytest.raises(InputError, match=r"g\.json:2:14: invalid JSON"):
        load_group(path)


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        load_group(tmp_path / "absent.json")


SEED_002_GROUP03 = """\
GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG OWNER
test-group03 topic2 0 0 3333 3333 client-0_/192.168.1.13
test-group03 topic1 0 500 3333 2833 client-0_/192.168.1.13
test-group03 topic2 2 0 3333 3333 client-2_/192.168.1.13
test-group03 topic1 2 500 3333 2833 client-2_/192.168.1.13
test-group03 topic2 1 500 3334 2834 client-1_/192.168.1.13
test-group03 topic1 1 0 3334 3334 client-1_/192.168.1.13
"""

MODERN = """\

Consumer group 'orders' has no active members.

GROUP   TOPIC  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID  HOST  CLIENT-ID
orders  o      0          10              50              40   -            -     -
orders  o      1          -               70              -    -            -     -

GROUP   TOPIC  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID        HOST        CLIENT-ID
pay     p      0          5               9               4    consumer-1-ab12    /10.0.0.1   consumer-1
pay     p      1          5               8               3    consumer-2-cd34    /10.0.0.2   consumer-2
"""


def test_seed_002_seven_column_table():
    """shared/seeds/002: the test-group03 table (OWNER column)."""
    (g,) = parse_describe(SEED_002_GROUP03.splitlines())
    assert g.id == "test-group03"
    assert [m.id for m in g.members] == [f"client-{i}_/192.168.1.13" for i in range(3)]
    assert all(m.topics == {"topic1", "topic2"} for m in g.members)
    assert g.member("client-1_/192.168.1.13").owned == (
        TopicPartition("topic2", 1),
        TopicPartition("topic1", 1),
    )
    assert sum(group_lags(g).values()) == 3333 + 2833 + 3333 + 2833 + 2834 + 3334


def test_todays_layout_several_groups_no_commit_and_no_owner():
    orders, pay = parse_describe(MODERN.splitlines(), auto_offset_reset="earliest")
    assert orders.id == "orders" and orders.members == ()
    # no commit under "earliest": whole log from offset 0 (the dump has no log start)
    assert group_lags(orders) == {TopicPartition("o", 0): 40, TopicPartition("o", 1): 70}
    assert [m.id for m in pay.members] == ["consumer-1-ab12", "consumer-2-cd34"]
    latest = parse_describe(MODERN.splitlines())[0]
    assert group_lags(latest)[TopicPartition("o", 1)] == 0


def test_embedded_sample_is_seed_002():
    from lagassign.cli import sample_describe_file

    groups = load_describe(sample_describe_file())
    assert [g.id for g in groups] == ["test-group03", "test-group02"]
    assert len(groups[1].members) == 10
    assert group_lags(groups[1])[TopicPartition("topic01", 3)] == 719966


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG OWNER\ng t x 1 2 1 o\n",
            "d.txt:2: PARTITION: expected a number or '-', got 'x'",
        ),
        (
            "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG OWNER\ng t 0 1 2 1 o extra\n",
            "d.txt:2: expected 7 columns",
        ),
        (
            "GROUP TOPIC PARTITION CURRENT-OFFSET LAG OWNER\n",
            "d.txt:1: header lacks column(s) LOG-END-OFFSET",
        ),
        ("nothing here\n", "d.txt: no GROUP TOPIC PARTITION"),
        (
            "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG OWNER\n"
            "g t 0 1 2 1 o\ng t 0 1 2 1 o\n",
            "d.txt:3: t-0 listed twice",
        ),
        (
            # issue 13: a row cut short is an error, not a note to skip (its partition vanished)
            "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG OWNER\n"
            "g t 0 1 2 1 o\ntest-group03 topic1 1 0\n",
            "d.txt:3: expected 7 columns",
        ),
    ],
)
def test_bad_describe_names_the_line(text, message):
    with pytest.raises(InputError) as e:
        parse_describe(text.splitlines(), source="d.txt")
    assert str(e.value).startswith(message)


def test_describe_with_a_byte_order_mark_keeps_its_first_group():
    """Issue 13: a dump saved with a UTF-8 byte-order mark lost its first group."""
    text = "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG OWNER\ng t 0 1 2 1 o\n"
    (plain,) = parse_describe(text.splitlines())
    (marked,) = parse_describe(("\ufeff" + text).splitlines())
    assert marked == plain and marked.id == "g"


def test_notes_between_blocks_are_still_skipped():
    text = "Consumer group 'orders' has no active members.\n\n" + MODERN
    assert [g.id for g in parse_describe(text.splitlines())] == ["orders", "pay"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"topics": {"t": {"partitions": [{"partition": 0, "lag": 5, "lag": 500}]}}, '
            '"members": []}',
            "key 'lag' appears twice in one object",
        ),
        ("[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
        ("[" * 33 + "]" * 33, "JSON nested too deeply (more than 32 levels)"),
    ],
)
def test_json_that_python_would_misread_is_one_error(tmp_path, text, message):
    """Issue 13: a repeated key kept its last value silently; deep nesting was a traceback.
    (Huge integers: test_numbers_json_cannot_hold_name_their_key.)"""
    from lagassign.formats.group_file import load_group

    path = tmp_path / "g.json"
    path.write_text(text)
    with pytest.raises(InputError) as e:
        load_group(path)
    assert e.value.place == str(path) and e.value.message.startswith(message)


def test_snapshot_json_lines_with_a_repeated_key_name_the_line(tmp_path):
    from lagassign.formats.snapshot import read_snapshot

    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"group": "g", "topic": "t", "partition": 0, "begin": 0, "end": 1}\n'
        '{"group": "g", "topic": "t", "partition": 1, "begin": 0, "end": 1, "end": 9}\n'
    )
    with pytest.raises(InputError, match=r"s\.jsonl:2: key 'end' appears twice"):
        list(read_snapshot(str(path)))


# ------------------------------------------------------------------------------------------------
# issue 13: the limits every reader checks (lagassign.formats.limits), strict JSON


def _group_with(partition=None, member=None, partitions=None):
    part = {"partition": 0, "lag": 5, **(partition or {})}
    return {
        "topics": {"t": {"partitions": [part] if partitions is None else partitions}},
        "members": [{"id": "m", "topics": ["t"], **(member or {})}],
    }


@pytest.mark.parametrize(
    ("text", "place", "message"),
    [
        ('{"topics": {}, "members": [], "group": ' + "9" * 5000 + "}", "group", "5,000 digits"),
        (json.dumps(_group_with()).replace('"lag": 5', '"lag": 1' + "0" * 400), "lag", "401 dig"),
        (json.dumps(_group_with({"rate_in": 1})).replace(": 1}", ": NaN}"), "rate_in", "NaN"),
        (
            json.dumps(_group_with({"rate_out": 1})).replace(": 1}", ": -Infinity}"),
            "rate_out",
            "-Inf",
        ),
        (
            json.dumps(_group_with(member={"capacity": 1})).replace(": 1}", ": 1e999}"),
            "capacity",
            "1e999",
        ),
    ],
)
def test_numbers_json_cannot_hold_name_their_key(tmp_path, text, place, message):
    """Strict JSON: NaN and Infinity are not JSON; a number beyond a double or of more digits
    than any limit is one line naming its key (a 5,000-digit integer was a traceback, 10^400
    an OverflowError in metrics.lower_bound)."""
    path = tmp_path / "g.json"
    path.write_text(text)
    with pytest.raises(InputError) as e:
        load_group(path)
    assert e.value.place.startswith(f"{path}: ") and e.value.place.endswith(place)
    assert message in e.value.message and "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"topics": {"t": {"partitions": 1_000_000_000}}, "members": []},
            "f.json: topics.t.partitions: 1,000,000,000 partitions in the group so far, more "
            "than the 1,000,000",
        ),
        (
            {"topics": {"a": {"partitions": 600_000}, "b": {"partitions": 600_000}}, "members": []},
            "f.json: topics.b.partitions: 1,200,000 partitions in the group so far",
        ),
        (
            _group_with({"lag": 2**63}),
            "f.json: topics.t.partitions[0].lag: out of range (at most 9,223,372,036,854,775,807)",
        ),
        (
            _group_with({"lag": None, "begin": 0, "end": 2**63}),
            "f.json: topics.t.partitions[0].end: out of range",
        ),
        (
            _group_with({"partition": 2**31}),
            "f.json: topics.t.partitions[0].partition: out of range (at most 2,147,483,647)",
        ),
        (
            _group_with(member={"generation": 2**31}),
            "f.json: members[0].generation: out of range",
        ),
        (
            _group_with({"rate_in": 1e16}),
            "f.json: topics.t.partitions[0].rate_in: out of range (at most 1,000,000,000,000,000)",
        ),
        (
            _group_with(member={"id": "a\nlagassign: error: forged"}),
            'f.json: members[0].id: "a\\nlagassign: error: forged": a control character (U+000A)',
        ),
        (
            _group_with(member={"id": "\ud800"}),
            'f.json: members[0].id: "\\ud800": a lone surrogate (U+D800) at character 1',
        ),
        (
            _group_with(member={"rack": "x" * 40_000}),
            "f.json: members[0].rack: ",
        ),
        (
            {"topics": {"t\x1b[2J": {"partitions": 1}}, "members": []},
            'f.json: topics.t\\x1b[2J: "t\\u001b[2J": a control character (U+001B)',
        ),
        (
            _group_with(member={"owned": [["t\u2028", 0]]}),
            'f.json: members[0].owned[0]: "t\\u2028": a control character (U+2028)',
        ),
    ],
)
def test_values_beyond_the_limits_name_their_key(data, message):
    """Issue 13: a partition count of 10^9 ran until killed; lags beyond int64 overflowed;
    a newline in an id split the error line (forging a second ``lagassign: error:``); a lone
    surrogate failed on output. Every limit is checked before any partition is made."""
    with pytest.raises(InputError) as e:
        parse_group(data, source="f.json")
    assert str(e.value).startswith(message), str(e.value)
    assert str(e.value).isprintable()


def test_values_at_the_limits_are_read():
    g = parse_group(
        _group_with({"lag": 2**63 - 1, "partition": 2**31 - 1}, {"generation": 2**31 - 1}),
        source="f.json",
    )
    (p,) = g.partitions()
    assert (p.lag, p.partition, g.members[0].generation) == (2**63 - 1, 2**31 - 1, 2**31 - 1)
    assert parse_group(_group_with(member={"id": "consumer-ü-😀"})).members[0].id.endswith("😀")


def test_an_input_error_is_one_line_whatever_its_text():
    e = InputError("a\nb.json", "unknown topic 'x\r\nlagassign: error: y' \u2028 \ud800")
    assert str(e).isprintable() and "\\n" in str(e) and "\\ud800" in str(e)


def test_json_nesting_limit_is_exact():
    from lagassign.formats.json_reader import parse_json
    from lagassign.formats.limits import MAX_DEPTH

    deepest = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_json(deepest, "x") == json.loads(deepest)
    assert parse_json('["[[[[' + "[" * 40 + '"]', "x") == ["[[[[" + "[" * 40]
    with pytest.raises(InputError, match="nested too deeply"):
        parse_json("[" + deepest + "]", "x")
    with pytest.raises(InputError, match=r"x:1:\d+: invalid JSON"):
        parse_json("[" * 5 + "}", "x")


def test_scenario_numbers_are_strict(tmp_path):
    from lagassign.formats.scenario import load_scenario

    group = _group_with()
    for key, value, message in [
        ("throughput", "NaN", "throughput: expected a number, got NaN"),
        ("dt", "Infinity", "dt: expected a number, got Infinity"),
        ("throughput", "1e16", "throughput: out of range"),
        ("horizon", "1" + "0" * 30, "horizon: expected a number, got a number of 31 digits"),
    ]:
        path = tmp_path / "s.json"
        path.write_text(f'{{"group": {json.dumps(group)}, "{key}": {value}}}')
        with pytest.raises(InputError) as e:
            load_scenario(path)
        assert str(e.value).startswith(f"{path}: {message}"), str(e.value)


KAFKA_NOTES = [
    "Consumer group 'orders app' has no active members.",
    "Warning: Consumer group 'orders' is rebalancing.",
    "Error: Consumer group 'gone' does not exist.",
    "Error: The consumer group 'gone' does not exist.",
    "Note: This will not show information about old Zookeeper-based consumers.",
]


@pytest.mark.parametrize("note", KAFKA_NOTES)
def test_kafka_tools_notes_are_recognised_anywhere(note):
    """Notes are what kafka-consumer-groups prints (ConsumerGroupCommand), not any short
    line; before, between and after tables, with CRLF line ends."""
    text = f"{note}\r\n\r\n{MODERN}\r\n{note}\r\n".replace("\n", "\r\n")
    assert [g.id for g in parse_describe(text.split("\n"))] == ["orders", "pay"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (MODERN + "this is a note\n", "d.txt:11: expected 9 columns"),
        (MODERN + "Consumer group orders has no active members.\n", "d.txt:11: expected 9"),
        ("g t 0 1 2 1 o\n" + MODERN, "d.txt:1: before the first header"),
        (
            MODERN + "pay p 2 5 9 4 c\x1b[2J /h c\n",
            "d.txt:11: 'c\\x1b[2J': a control character (U+001B)",
        ),
        (
            MODERN + "pay p 2147483648 5 9 4 c /h c\n",
            "d.txt:11: PARTITION: out of range (at most 2,147,483,647), got 2147483648",
        ),
        (
            MODERN + "pay p 2 5 9223372036854775808 4 c /h c\n",
            "d.txt:11: LOG-END-OFFSET: out of range (at most 9,223,372,036,854,775,807)",
        ),
        (
            MODERN + "pay p 2 5 9 1" + "0" * 5000 + " c /h c\n",
            "d.txt:11: LAG: out of range (at most 9,223,372,036,854,775,807), got a number of "
            "5001 digits",
        ),
        (MODERN + "pay p ² 5 9 4 c /h c\n", "d.txt:11: PARTITION: expected a number or '-'"),
        (MODERN + "pay p 1_0 5 9 4 c /h c\n", "d.txt:11: PARTITION: expected a number or '-'"),
    ],
)
def test_describe_lines_that_are_neither_rows_nor_notes(text, message):
    with pytest.raises(InputError) as e:
        parse_describe(text.split("\n"), source="d.txt")
    assert str(e.value).startswith(message), str(e.value)
    assert str(e.value).isprintable()


def test_describe_lines_end_only_at_newlines(tmp_path):
    """A line separator (U+2028) inside a row does not split it in two."""
    path = tmp_path / "d.txt"
    path.write_text(MODERN + "pay p 2 5 9 4 c\u2028x /h c\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"d\.txt:11: expected 9 columns \(.*\), got 10"):
        load_describe(path)


def test_a_describe_file_of_only_a_header_is_an_error_naming_it(tmp_path):
    path = tmp_path / "dump.txt"
    path.write_text("GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG OWNER\r\n")
    with pytest.raises(InputError) as e:
        load_describe(path)
    assert str(e.value) == f"{path}: the input holds no group"


# ------------------------------------------------------------------------------------------------
# issue 13: snapshot files (formats/snapshot.py) check the same limits, naming row and column

_ROW = '{"group": "g", "topic": "t", "partition": 0, "begin": 0, "end": 10'


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("s.jsonl", _ROW + ', "rate_in": NaN}\n', "s.jsonl:1: rate_in: expected a number, got NaN"),
        ("s.jsonl", _ROW + ', "capacity": 1e999}\n', "s.jsonl:1: capacity: expected a number"),
        ("s.jsonl", _ROW.replace('"end": 10', '"end": 1' + "0" * 5000) + "}\n", "s.jsonl:1: end"),
        ("s.jsonl", _ROW + ', "member_id": "a\\nb"}\n', "s.jsonl:1: member_id: 'a\\nb': a control"),
        (
            "s.jsonl",
            _ROW.replace('"g"', '"\\ud800"') + "}\n",
            "s.jsonl:1: group: '\\ud800': a lone surrogate (U+D800)",
        ),
        ("s.jsonl", _ROW + ', "subscribed": ["t\\u2028"]}\n', "s.jsonl:1: subscribed: 't\\u2028'"),
        ("s.jsonl", _ROW + ', "generation": 2147483648}\n', "s.jsonl:1: generation: out of range"),
        ("s.jsonl", _ROW + ', "rate_out": 1e16}\n', "s.jsonl:1: rate_out: out of range"),
        ("s.jsonl", "[" * 40 + "]" * 40 + "\n", "s.jsonl:1: JSON nested too deeply"),
        ("s.csv", "group,topic,partition,begin,end\ng,t,1_0,0,1\n", "s.csv:2: partition: expected"),
        ("s.csv", "group,topic,partition,begin,end\ng,t,٣,0,1\n", "s.csv:2: partition: expected"),
        ("s.csv", "group,topic,partition,begin,end\ng,t,0,0," + "9" * 5000, "s.csv:2: end: out of"),
        (
            "s.csv",
            "group,topic,partition,begin,end,rate_in\ng,t,0,0,1,inf\n",
            "s.csv:2: rate_in: expected a number, got 'inf'",
        ),
        ("s.csv", "group,topic,partition,begin,end\ng\x1b,t,0,0,1\n", "s.csv:2: group: 'g\\x1b'"),
    ],
)
def test_snapshot_values_beyond_the_limits_name_row_and_column(tmp_path, name, text, message):
    from lagassign.formats.snapshot import read_snapshot

    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as e:
        list(read_snapshot(str(path)))
    assert str(e.value).startswith(f"{tmp_path}/{message}"), str(e.value)
    assert str(e.value).isprintable()


def test_parquet_columns_of_other_types_and_bad_text_name_the_row(tmp_path):
    """Issue 13: timestamp, binary and decimal columns, an unsigned 2^64 - 1, a control
    character in a string or list column: one line naming the row, never a traceback."""
    import datetime
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    from lagassign.formats.snapshot import read_snapshot
    from tests.fuzz.corpus import not_utf8_strings

    good = {"group": ["g", "g"], "topic": ["t", "t"], "partition": [0, 1], "begin": [0, 0]}
    good["end"] = [10, 20]
    cases = {
        "end": (pa.array([datetime.datetime(2026, 1, 1)] * 2), "row 1: end: expected an integer"),
        "topic": (pa.array([b"t", b"\xff"], pa.binary()), "row 1: topic: expected a string"),
        "rate_in": (
            pa.array([decimal.Decimal("1.5")] * 2, pa.decimal128(5, 1)),
            "row 1: rate_in: expected a number, got a Decimal",
        ),
        "committed": (pa.array([1, 2**64 - 1], pa.uint64()), "row 2: committed: out of range"),
        "generation": (pa.array([1, 2**31]), "row 2: generation: out of range"),
        "member_id": (pa.array(["a", "b\nc"]), "row 2: member_id: 'b\\nc': a control character"),
        "subscribed": (pa.array([["t"], ["t\x1b"]]), "row 2: subscribed: 't\\x1b': a control"),
        "host": (pa.array(["h", "x" * 40_000]), "row 2: host: "),
        # Parquet strings are not checked as UTF-8 by Arrow: to_pylist raised UnicodeDecodeError
        "client_id": (not_utf8_strings(2), "row 2: client_id: not UTF-8 text"),
        "group": (not_utf8_strings(2), "row 2: group: not UTF-8 text"),
        "replica_racks": (
            pa.ListArray.from_arrays(pa.array([0, 1, 2], pa.int32()), not_utf8_strings(2)),
            "row 2: replica_racks: not UTF-8 text",
        ),
    }
    for column, (array, message) in cases.items():
        path = tmp_path / f"{column}.parquet"
        pq.write_table(pa.table({**good, column: array}), path)
        with pytest.raises(InputError) as e:
            list(read_snapshot(str(path)))
        assert str(e.value).startswith(f"{path}: {message}"), str(e.value)


def test_snapshot_rows_of_a_group_are_limited(monkeypatch):
    from lagassign.formats import snapshot_rows

    monkeypatch.setattr(snapshot_rows, "MAX_PARTITIONS", 2)
    rows = [
        {"group": "g", "topic": "t", "partition": i, "begin": 0, "end": 1, "source": "f.csv"}
        | {"row": i + 2}
        for i in range(3)
    ]
    assert len(list(snapshot_rows.build_group(rows[:2]).partitions())) == 2
    with pytest.raises(InputError, match=r"^f\.csv:4: group 'g' has more than the 2 partitions"):
        snapshot_rows.build_group(rows)


def test_a_scenario_longer_than_the_limit_names_the_horizon(tmp_path):
    """2,000,000 steps (the simulator's MAX_STEPS) over 1,000 partitions would simulate for
    hours; the scenario reader says so before any step."""
    from lagassign.formats.scenario import load_scenario

    group = {"topics": {"t": {"partitions": 1000}}, "members": [{"id": "m", "topics": ["t"]}]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"group": group, "horizon": 2_000_000, "dt": 1}))
    with pytest.raises(InputError) as e:
        load_scenario(path)
    assert str(e.value) == (
        f"{path}: horizon: horizon ÷ dt × partitions is 2,000,000,000 partition-steps, more "
        "than the 100,000,000 lagassign simulates (formats/limits.py): a larger dt or a "
        "shorter horizon"
    )
    path.write_text(json.dumps({"group": group, "horizon": 100_000, "dt": 1}))
    assert load_scenario(path).steps == 100_000


def test_a_group_files_auto_offset_reset_is_one_kafka_knows():
    """A misspelt policy counted every log whole, as "earliest" does, without a word; the
    snapshot files rejected it already, now the group file (and a scenario's group) too."""
    for known in ("latest", "Earliest", "none", "by_duration:PT1H"):
        assert parse_group({**_group_with(), "auto_offset_reset": known}).auto_offset_reset == known
    with pytest.raises(InputError) as e:
        parse_group({**_group_with(), "auto_offset_reset": "lastest"}, source="f.json")
    assert str(e.value) == (
        "f.json: auto_offset_reset: expected latest, earliest, none or by_duration:<duration>, "
        'got "lastest"'
    )


def test_a_byte_order_mark_is_no_error_in_any_text_format(tmp_path):
    """JSON may start with one (RFC 8259 lets readers ignore it; Windows tools write it): the
    group file and JSON lines read as without it, as describe dumps and CSV files did."""
    from lagassign.formats.snapshot import read_snapshot

    group = tmp_path / "g.json"
    group.write_text(json.dumps(ISSUE_2_GROUP), encoding="utf-8-sig")
    assert load_group(group) == parse_group(ISSUE_2_GROUP)
    rows = tmp_path / "s.jsonl"
    rows.write_text(_ROW + "}\n" + _ROW.replace('"partition": 0', '"partition": 1') + "}\n")
    plain = [b.to_pylist() for b in read_snapshot(str(rows))]
    rows.write_text(rows.read_text(), encoding="utf-8-sig")
    assert [b.to_pylist() for b in read_snapshot(str(rows))] == plain


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG LAG OWNER\n",
            "d.txt:1: column 'LAG' appears twice in the header",
        ),
        # a lone carriage return is no line end (Kafka's tool ends lines with \n)
        (
            "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG OWNER\ng t 0 1 2 1 o\rg t 1\n",
            "d.txt:2: expected 7 columns",
        ),
    ],
)
def test_describe_headers_and_line_ends(tmp_path, text, message):
    path = tmp_path / "d.txt"
    path.write_bytes(text.encode())
    with pytest.raises(InputError) as e:
        load_describe(path)
    assert str(e.value).startswith(f"{tmp_path}/{message}"), str(e.value)


# ------------------------------------------------------------------------------------------------
# the registries: snapshot formats by file name, and what --input reads


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("a.jsonl", "jsonl"),
        ("a.NDJSON", "jsonl"),
        ("a.json", "jsonl"),
        ("a.json.gz", "jsonl"),
        ("a.csv", "csv"),
        ("a.csv.gz", "csv"),
        ("a.parquet", "parquet"),
        ("a.PQ", "parquet"),
        ("a.parquet.gz", None),  # Parquet compresses itself
        ("a.txt", None),
        ("a.gz", None),
        ("jsonl", None),
    ],
)
def test_a_snapshot_file_name_says_its_format(name, fmt):
    from lagassign.formats.snapshot_formats import format_of

    assert format_of(name) == fmt


def test_snapshot_formats_and_where_their_rows_are():
    from lagassign.formats.snapshot_formats import names, shown_suffixes
    from lagassign.formats.snapshot_rows import place

    assert names() == ["jsonl", "csv", "parquet"]
    assert shown_suffixes() == ".jsonl, .csv, .parquet"
    assert shown_suffixes(" or ") == ".jsonl, .csv or .parquet"
    assert place("f.csv", 3) == "f.csv:3"
    assert place("f.jsonl.gz", 3) == "f.jsonl.gz:3"
    assert place("f.pq", 3) == "f.pq: row 3"
    assert place("dump.txt", 3) == "dump.txt:3"
    assert place("f.pq", None) == "f.pq"


def test_an_unknown_snapshot_format_is_one_error(tmp_path):
    from lagassign.formats.snapshot import read_snapshot

    path = tmp_path / "fleet.xml"
    path.write_text("<fleet/>")
    with pytest.raises(InputError) as e:
        list(read_snapshot(str(path)))
    assert str(e.value) == f"{path}: unknown snapshot format (expected .jsonl, .csv or .parquet)"
    with pytest.raises(InputError, match="unknown snapshot format"):
        list(read_snapshot(str(tmp_path / "fleet.csv"), "xml"))


def test_input_reads_by_file_name(tmp_path):
    """.json and any name no format says: a group file; a snapshot name (.json.gz too): a
    snapshot file of many groups."""
    from lagassign.formats.inputs import input_help, load_groups

    row = {"group": "g", "topic": "t", "partition": 0, "begin": 0, "end": 5, "member_id": "m"}
    group = {"group": "g", "topics": {"t": {"partitions": 1}}, "members": [{"id": "m", "topics": ["t"]}]}
    for name, text in (("g.json", json.dumps(group)), ("g.TXT", json.dumps(group)),
                       ("s.ndjson", json.dumps(row) + "\n"), ("s.csv", "group,topic,partition,begin,end\ng,t,0,0,5\n")):
        (tmp_path / name).write_text(text)
        (read,) = load_groups(str(tmp_path / name))
        assert read.id == "g" and [p.tp for p in read.partitions()] == [TopicPartition("t", 0)]
    (tmp_path / "s.jsonl.gz").write_text(json.dumps(row))  # not gzip: read as a snapshot
    with pytest.raises(InputError, match=r"s\.jsonl\.gz"):
        load_groups(str(tmp_path / "s.jsonl.gz"))
    assert input_help() == (
        "a group file (JSON), or a snapshot file of many groups (.jsonl, .csv, .parquet; "
        "--group picks one)"
    )
