"""``lagassign describe`` and ``lagassign plan --bootstrap-server`` as a user runs them: a real
process against the real broker, its output and exit status."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from confluent_kafka.admin import AdminClient

from lagassign.strategies import names
from tests.kafka.broker import closed_port, commit
from tests.kafka.test_offsets import (
    COLD,
    HOT,
    MakeTopic,
    running_group,
    unique,
)
from tests.kafka.test_offsets import admin as admin  # fixture used by make_topic
from tests.kafka.test_offsets import make_topic as make_topic  # fixture

CLI_TIMEOUT_S = 120


def lagassign(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lagassign.cli", *args],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


def test_describe_json_of_a_running_group(kafka_bootstrap: str, make_topic: MakeTopic) -> None:
    hot, cold = make_topic(HOT), make_topic(COLD)
    group = unique("group")
    committed = {(hot, 0): 100, (hot, 2): 3, (hot, 5): 120, (cold, 0): 1}
    commit(kafka_bootstrap, group, committed)

    with running_group(kafka_bootstrap, group, [hot, cold], 2) as consumers:
        owner = {(tp.topic, tp.partition): c.memberid() for c in consumers for tp in c.assignment()}
        out = lagassign(
            "describe", "--bootstrap-server", kafka_bootstrap, "--group", group, "--format", "json"
        )
        earliest = lagassign(
            "describe",
            "--bootstrap-server",
            kafka_bootstrap,
            "--group",
            group,
            "--format",
            "json",
            "--auto-offset-reset",
            "earliest",
        )
        table = lagassign("describe", "--bootstrap-server", kafka_bootstrap, "--group", group)

    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    result = json.loads(out.stdout)
    rows = [
        {
            "topic": topic,
            "partition": p,
            "current_offset": committed.get((topic, p)),
            "log_end_offset": n,
            "lag": n - committed[(topic, p)] if (topic, p) in committed else 0,
            "member_id": owner[(topic, p)],
        }
        for topic, counts in sorted([(hot, HOT), (cold, COLD)])
        for p, n in enumerate(counts)
    ]
    members = {
        mid: {
            "partitions": sum(1 for r in rows if r["member_id"] == mid),
            "lag": sum(r["lag"] for r in rows if r["member_id"] == mid),
        }
        for mid in sorted(set(owner.values()))
    }
    assert result == {"group": group, "partitions": rows, "members": members}
    assert sum(m["lag"] for m in result["members"].values()) == 300 + 4 + 0 + 4

    # without a committed offset, "earliest" counts the whole log
    assert earliest.returncode == 0, earliest.stderr
    lags = {
        (r["topic"], r["partition"]): r["lag"] for r in json.loads(earliest.stdout)["partitions"]
    }
    assert lags == {
        (topic, p): n - committed.get((topic, p), 0)
        for topic, counts in [(hot, HOT), (cold, COLD)]
        for p, n in enumerate(counts)
    }

    assert table.returncode == 0, table.stderr
    assert f"group {group} (Stable): 2 members, 8 partitions, total lag 308" in table.stdout
    assert "member-0" in table.stdout and "member-1" in table.stdout


def test_describe_of_a_group_with_only_commits(kafka_bootstrap: str, make_topic: MakeTopic) -> None:
    topic = make_topic([10, 20])
    group = unique("group")
    commit(kafka_bootstrap, group, {(topic, 1): 5})
    out = lagassign(
        "describe", "--bootstrap-server", kafka_bootstrap, "--group", group, "--format", "json"
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {
        "group": group,
        "partitions": [
            {
                "topic": topic,
                "partition": 1,
                "current_offset": 5,
                "log_end_offset": 20,
                "lag": 15,
                "member_id": None,
            }
        ]
        if False
        else [
            {
                "topic": topic,
                "partition": 0,
                "current_offset": None,
                "log_end_offset": 10,
                "lag": 0,
                "member_id": None,
            },
            {
                "topic": topic,
                "partition": 1,
                "current_offset": 5,
                "log_end_offset": 20,
                "lag": 15,
                "member_id": None,
            },
        ],
        "members": {},
    }


def test_plan_of_a_running_group(
    kafka_bootstrap: str, make_topic: MakeTopic, tmp_path: Path
) -> None:
    hot = make_topic(HOT)
    group = unique("group")
    committed = {(hot, p): 0 for p in range(len(HOT))}
    commit(kafka_bootstrap, group, committed)
    config = tmp_path / "client.properties"
    config.write_text(
        "# as for kafka-consumer-groups --command-config\nclient.id: lagassign-test\n"
    )

    with running_group(kafka_bootstrap, group, [hot], 3) as consumers:
        current = {
            c.memberid(): sorted([tp.topic, tp.partition] for tp in c.assignment())
            for c in consumers
        }
        out = lagassign(
            "plan",
            "--bootstrap-server",
            kafka_bootstrap,
            "--group",
            group,
            "--command-config",
            str(config),
            "--format",
            "json",
            "--plot",
            str(tmp_path / "plan.png"),
        )
        table = lagassign("plan", "--bootstrap-server", kafka_bootstrap, "--group", group)

    assert out.returncode == 0, out.stderr
    [result] = json.loads(out.stdout)
    assert result["group"] == group
    assert result["total_lag"] == sum(HOT)
    plans = {p["strategy"]: p for p in result["plans"]}
    # (names() order in this process depends on which strategy modules tests imported first)
    assert result["plans"][0]["strategy"] == "current"
    assert sorted(plans) == sorted(["current", *names()])
    assert {m: sorted(tps) for m, tps in plans["current"]["assignment"].items()} == current
    for plan in plans.values():
        assigned = sorted(tuple(tp) for tps in plan["assignment"].values() for tp in tps)
        assert assigned == [(hot, p) for p in range(len(HOT))], plan["strategy"]
        assert plan["lower_bound"] == max(HOT)  # the hot partition alone
    # the lag strategy puts the hot partition alone on one member
    assert plans["lag"]["max_member_lag"] == max(HOT)
    assert (tmp_path / "plan.png").stat().st_size > 0

    assert table.returncode == 0, table.stderr
    assert f"group {group}: 3 members, 6 partitions, total lag {sum(HOT):,}" in table.stdout


def test_unknown_group_exits_2(kafka_bootstrap: str) -> None:
    group = unique("unknown")
    for command in ("describe", "plan"):
        out = lagassign(command, "--bootstrap-server", kafka_bootstrap, "--group", group)
        assert out.returncode == 2, out.stderr
        assert out.stdout == ""
        assert out.stderr == (
            f"lagassign: error: --group: no consumer group {group!r} at {kafka_bootstrap}\n"
        )


def test_unreachable_bootstrap_exits_1_at_once_with_the_cause() -> None:
    """Issue 13: a refused connection is exit 1 with librdkafka's cause, long before the
    timeout (not "no answer ... within the timeout" after waiting all of it)."""
    port = closed_port()
    for command in ("describe", "plan"):
        started = time.monotonic()
        out = lagassign(
            command, "--bootstrap-server", f"127.0.0.1:{port}", "--group", "g", "--timeout", "60"
        )
        elapsed = time.monotonic() - started
        assert out.returncode == 1, out.stderr
        assert out.stdout == ""
        lines = out.stderr.splitlines()
        assert len(lines) == 1, out.stderr
        assert lines[0].startswith(
            f"lagassign: error: Kafka at 127.0.0.1:{port}: cannot connect: 127.0.0.1:{port}/"
            f"bootstrap: Connect to ipv4#127.0.0.1:{port} failed: Connection refused"
        ), lines[0]
        assert elapsed < 30, elapsed  # starting Python and failing, not the 60 s timeout


def test_command_config_errors_exit_2(kafka_bootstrap: str, tmp_path: Path) -> None:
    java_only = tmp_path / "java.properties"
    java_only.write_text(
        "security.protocol=SSL\nssl.truststore.location=/etc/kafka/truststore.jks\n"
    )
    unknown = tmp_path / "unknown.properties"
    unknown.write_text("no.such.property=1\n")
    missing = tmp_path / "missing.properties"

    out = lagassign(
        "describe", "--bootstrap-server", kafka_bootstrap, "--group", "g",
        "--command-config", str(java_only),
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.startswith(f"lagassign: error: {java_only}:2: ssl.truststore.location ")
    assert len(out.stderr.splitlines()) == 1

    out = lagassign(
        "plan", "--bootstrap-server", kafka_bootstrap, "--group", "g",
        "--command-config", str(unknown),
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr == (
        f"lagassign: error: Kafka client for {kafka_bootstrap}: "
        'No such configuration property: "no.such.property"\n'
    )

    out = lagassign(
        "describe", "--bootstrap-server", kafka_bootstrap, "--group", "g",
        "--command-config", str(missing),
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.startswith(f"lagassign: error: {missing}: cannot read")


def test_plan_live_needs_a_group(kafka_bootstrap: str) -> None:
    out = lagassign("plan", "--bootstrap-server", kafka_bootstrap)
    assert out.returncode == 2
    assert out.stderr == "lagassign: error: --group: required with --bootstrap-server\n"


def test_plan_of_a_group_whose_consumers_all_stopped(
    kafka_bootstrap: str, make_topic: MakeTopic, admin: AdminClient
) -> None:
    """Kafka 4.4 keeps no members of an empty group: plan shows the real lag, says there is
    nothing to plan for, and plans for --members N."""
    hot = make_topic(HOT)
    group = unique("group")
    commit(kafka_bootstrap, group, {(hot, p): 0 for p in range(len(HOT))})
    with running_group(kafka_bootstrap, group, [hot], 2):
        pass
    # the closed consumers have left; wait for the coordinator to say so (no fixed sleep)
    deadline = time.monotonic() + 60
    while admin.describe_consumer_groups([group])[group].result().state.name != "EMPTY":
        assert time.monotonic() < deadline, "the group did not become Empty"
        time.sleep(0.2)

    described = lagassign(
        "describe", "--bootstrap-server", kafka_bootstrap, "--group", group, "--format", "json"
    )
    live = ("--bootstrap-server", kafka_bootstrap, "--group", group, "--rate-window", "0")
    nobody = lagassign("plan", *live, "--format", "json")
    table = lagassign("plan", *live)
    three = lagassign("plan", *live, "--members", "3", "--format", "json")
    three_table = lagassign("plan", *live, "--members", "3", "--strategies", "balanced")

    assert described.returncode == 0, described.stderr
    assert sum(p["lag"] for p in json.loads(described.stdout)["partitions"]) == sum(HOT)

    assert nobody.returncode == 0, nobody.stderr
    assert json.loads(nobody.stdout) == [
        {
            "group": group,
            "total_lag": sum(HOT),
            "members": 0,
            "members_from": "group",
            "time_aware": False,
            "plans": [],
        }
    ]
    (warning,) = nobody.stderr.splitlines()
    assert warning == (
        f"lagassign: warning: group {group} has no members (its consumers are all stopped, and "
        "Kafka keeps no record of the members a group had): nothing to plan; --members N plans "
        "for N members reading its topics"
    )
    assert table.returncode == 0, table.stderr
    assert f"group {group}: 0 members, 6 partitions, total lag {sum(HOT):,}\n" in table.stdout
    assert "--members N plans for N members" in table.stdout

    assert three.returncode == 0, three.stderr
    [result] = json.loads(three.stdout)
    assert (result["total_lag"], result["members"], result["members_from"]) == (
        sum(HOT),
        3,
        "--members",
    )
    assert sorted(p["strategy"] for p in result["plans"]) == sorted(names())
    for plan in result["plans"]:
        assert set(plan["assignment"]) == {"member-1", "member-2", "member-3"}
        assigned = sorted(tuple(tp) for tps in plan["assignment"].values() for tp in tps)
        assert assigned == [(hot, p) for p in range(len(HOT))], plan["strategy"]
        assert plan["lower_bound"] == max(HOT)
    assert three_table.returncode == 0, three_table.stderr
    assert (
        f"group {group}: 3 members (--members; it has 0 now), 6 partitions, "
        f"total lag {sum(HOT):,}, lower bound {max(HOT):,}"
    ) in three_table.stdout
