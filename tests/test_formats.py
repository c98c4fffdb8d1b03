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
        ('{"topics": {}, "members": [], "group": ' + "9" * 5000 + "}", "cannot read a number"),
    ],
)
def test_json_that_python_would_misread_is_one_error(tmp_path, text, message):
    """Issue 13: a repeated key kept its last value silently; deep nesting and huge integers
    were tracebacks."""
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
