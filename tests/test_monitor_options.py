"""lagassign monitor's flags: --command-config reaches the offsets reads as librdkafka
properties and Spark's Kafka source as the Java client's own (prefixed kafka.), bad flags are
one line naming the flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from lagassign.cli import _build_parser
from lagassign.formats.errors import InputError
from lagassign.spark.monitor.options import MonitorOptions, from_args
from lagassign.spark.monitor.query import source_options
from tests.test_cli import lagassign

JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";'


def options(*flags: str) -> MonitorOptions:
    args = _build_parser().parse_args(["monitor", "--bootstrap-server", "h:9093", *flags])
    return from_args(args)


def test_command_config_for_the_reader_and_the_source(tmp_path: Path) -> None:
    config = tmp_path / "client.properties"
    config.write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"
        f"sasl.jaas.config={JAAS}\nbootstrap.servers=ignored:1\n",
        encoding="utf-8",
    )
    parsed = options("--out", str(tmp_path / "out"), "--command-config", str(config))
    assert parsed.client_config["bootstrap.servers"] == "h:9093"
    assert parsed.client_config["sasl.username"] == "u"
    assert "sasl.jaas.config" not in parsed.client_config
    source = source_options(parsed)
    assert {k: v for k, v in source.items() if k.startswith("kafka.")} == {
        "kafka.bootstrap.servers": "h:9093",
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "PLAIN",
        "kafka.sasl.jaas.config": JAAS,
        "kafka.exclude.internal.topics": "false",
    }
    assert (source["subscribe"], source["startingOffsets"]) == ("__consumer_offsets", "earliest")


def test_defaults(tmp_path: Path) -> None:
    parsed = options("--out", str(tmp_path / "out"))
    assert (parsed.interval, parsed.duration, parsed.group, parsed.conf) == (10.0, None, None, ())
    assert (parsed.plan_every, parsed.recommend_threshold) == (5.0, 0.2)
    assert parsed.checkpoint_dir == tmp_path / "out" / "_checkpoint"
    assert source_options(parsed)["kafka.bootstrap.servers"] == "h:9093"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--group", "("], "--group: not a regular expression"),
        (["--conf", "novalue"], "--conf: expected KEY=VALUE"),
    ],
)
def test_bad_flags_name_the_flag(tmp_path: Path, flags: list[str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        options("--out", str(tmp_path), *flags)


def test_plan_every_and_the_recommend_threshold(tmp_path: Path) -> None:
    parsed = options("--out", str(tmp_path), "--plan-every", "0.5", "--recommend-threshold", "35%")
    assert (parsed.plan_every, parsed.recommend_threshold) == (0.5, 0.35)
    assert options("--out", str(tmp_path), "--recommend-threshold", "0").recommend_threshold == 0


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--plan-every", "0"], "argument --plan-every: must be a positive number of minutes"),
        (["--plan-every", "inf"], "argument --plan-every: must be a positive number of minutes"),
        (["--plan-every", "5m"], "argument --plan-every: not a number of minutes: '5m'"),
        (["--recommend-threshold", "100"], "argument --recommend-threshold: must be a percentage"),
        (["--recommend-threshold", "-1"], "argument --recommend-threshold: must be a percentage"),
        (["--recommend-threshold", "x"], "argument --recommend-threshold: not a percentage"),
    ],
)
def test_bad_plan_flags_are_one_line_exit_2_nothing_written(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    out = tmp_path / "out"
    done = lagassign("monitor", "--bootstrap-server", "127.0.0.1:9", "--out", str(out), *flags)
    assert done.returncode == 2
    (error,) = [line for line in done.stderr.splitlines() if "error:" in line]
    assert message in error and "Traceback" not in done.stderr
    assert not out.exists()
