"""``lagassign describe`` against Kafka's own ``kafka-consumer-groups --describe``
(org.apache.kafka.tools.consumer.group.ConsumerGroupCommand, kafka-tools 4.4, the broker's
version) on the same group of a real broker: the same offsets, lag and owner for every
partition Kafka's tool lists. Its output is read back with lagassign.formats.describe, the
reader of such dumps."""

from __future__ import annotations

import json

from lagassign.formats.describe import parse_describe
from lagassign.lag_rules import group_lags
from tests.javaref import CONSUMER_GROUPS, kafka_tool
from tests.kafka.broker import commit
from tests.kafka.test_cli_live import lagassign
from tests.kafka.test_offsets import COLD, HOT, MakeTopic, running_group, unique
from tests.kafka.test_offsets import admin as admin  # fixture used by make_topic
from tests.kafka.test_offsets import make_topic as make_topic  # fixture


def kafka_describe(bootstrap: str, group: str) -> str:
    done = kafka_tool(CONSUMER_GROUPS, ["--bootstrap-server", bootstrap, "--describe",
                                        "--group", group])  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_describe_agrees_with_kafka_consumer_groups(
    kafka_bootstrap: str, make_topic: MakeTopic
) -> None:
    hot, cold = make_topic(HOT), make_topic(COLD)
    group = unique("group")
    # committed below the log end, at it, and nothing on some partitions
    commit(kafka_bootstrap, group, {(hot, 0): 100, (hot, 2): 7, (hot, 5): 120, (cold, 1): 3})

    with running_group(kafka_bootstrap, group, [hot, cold], 2):
        theirs = kafka_describe(kafka_bootstrap, group)
        ours = lagassign("describe", "--bootstrap-server", kafka_bootstrap, "--group", group,
                         "--format", "json")  # fmt: skip
        table = lagassign("describe", "--bootstrap-server", kafka_bootstrap, "--group", group)

    assert ours.returncode == 0, ours.stderr
    header, *cells = [line.split() for line in theirs.splitlines() if line.split()]
    assert header[:6] == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"]
    kafka_rows = [dict(zip(header, row, strict=True)) for row in cells]

    def number(cell: str) -> int | None:
        return None if cell == "-" else int(cell)

    listed = {
        (r["TOPIC"], int(r["PARTITION"])): (
            number(r["CURRENT-OFFSET"]),
            number(r["LOG-END-OFFSET"]),
            # no committed offset: Kafka's tool shows no lag, auto.offset.reset latest counts 0
            number(r["LAG"]) or 0,
        )
        for r in kafka_rows
    }
    owners = {(r["TOPIC"], int(r["PARTITION"])): r["CONSUMER-ID"] for r in kafka_rows}
    # every partition is owned in a Stable group of two members: Kafka's tool lists them all
    assert set(listed) == {(t, p) for t, n in ((hot, HOT), (cold, COLD)) for p in range(len(n))}
    rows = {(r["topic"], r["partition"]): r for r in json.loads(ours.stdout)["partitions"]}
    assert {tp: (r["current_offset"], r["log_end_offset"], r["lag"]) for tp, r in rows.items()} \
        == listed  # fmt: skip
    assert {tp: r["member_id"] for tp, r in rows.items()} == owners
    # lagassign's reader of such dumps reads Kafka's own output to the same lags and owners
    (read,) = parse_describe(theirs.splitlines(), "kafka-consumer-groups")
    assert {(tp.topic, tp.partition): lag for tp, lag in group_lags(read).items()} \
        == {tp: lag for tp, (_, _, lag) in listed.items()}  # fmt: skip
    assert {(tp.topic, tp.partition): m.id for m in read.members for tp in m.owned} == owners
    # the table says the same: one line per partition, its numbers where Kafka's tool has them
    assert table.returncode == 0, table.stderr
    lines = {tuple(line.split()[:2]): line.split() for line in table.stdout.splitlines()}
    for (topic, number), (committed, end, lag) in listed.items():
        cells = lines[(topic, str(number))]
        assert cells[2:5] == [
            "-" if committed is None else f"{committed:,}", f"{end:,}", f"{lag:,}"
        ]
