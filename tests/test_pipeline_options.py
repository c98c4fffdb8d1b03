"""The pipeline's flags and options, from the sources' registry (lagassign.spark.sources): no
Spark needed."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from lagassign.arguments import DEFAULT_RATE_WINDOW_S, DEFAULT_TIMEOUT_S
from lagassign.formats.errors import InputError
from lagassign.spark import sources
from lagassign.spark.options import PipelineOptions, add_arguments, from_args


def parse(*args: str) -> PipelineOptions:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return from_args(parser.parse_args([*args, "--out", "o"]))


def test_every_flag_in_the_help() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    flags = {s for a in parser._actions for s in a.option_strings}
    assert flags == {
        "-h", "--help", "--input", "--describe", "--sample", "--bootstrap-server", "--format",
        "--command-config", "--timeout", "--rate-window", "--groups", "--auto-offset-reset",
        "--strategies", "--out", "--master", "--conf", "--partitions", "--no-report", "--quiet",
    }  # fmt: skip
    text = " ".join(parser.format_help().split())
    assert all(f in text for f in flags)
    assert "--format {jsonl,csv,parquet}" in text
    assert "for --describe and --bootstrap-server: the groups' auto.offset.reset" in text


def test_each_source_from_its_flags() -> None:
    o = parse("--input", "a", "b.csv", "--format", "csv", "--groups", "g.*")
    assert sources.chosen(o).name == "snapshots"
    assert (o.inputs, o.input_format, o.groups, o.describe, o.bootstrap_server) == (
        ("a", "b.csv"), "csv", "g.*", (), None
    )
    o = parse("--describe", "d", "--auto-offset-reset", "earliest")
    assert sources.chosen(o).name == "describe"
    assert (o.describe, o.auto_offset_reset, o.inputs) == (("d",), "earliest", ())
    o = parse("--sample")
    assert sources.chosen(o).name == "sample" and o.sample is True
    o = parse("--bootstrap-server", "h:1", "--command-config", "c", "--rate-window", "0")
    assert sources.chosen(o).name == "live"
    assert (o.bootstrap_server, o.command_config, o.timeout, o.rate_window) == (
        "h:1", "c", DEFAULT_TIMEOUT_S, 0
    )
    assert parse("--bootstrap-server", "h:1", "--timeout", "3").rate_window == DEFAULT_RATE_WINDOW_S
    assert parse("--bootstrap-server", "h:1", "--timeout", "3").timeout == 3


@pytest.mark.parametrize(
    ("args", "place", "message"),
    [
        (["--sample", "--format", "csv"], "--format", "only with --input"),
        (["--describe", "d", "--command-config", "c"], "--command-config", "only with --bootstrap-server"),
        (["--input", "a", "--timeout", "3"], "--timeout", "only with --bootstrap-server"),
        (["--sample", "--rate-window", "0"], "--rate-window", "only with --bootstrap-server"),
        (
            ["--input", "a", "--auto-offset-reset", "earliest"],
            "--auto-offset-reset",
            "only with --describe or --bootstrap-server (snapshot files have a column for it)",
        ),
    ],
)
def test_a_flag_without_its_source_is_named(args: list[str], place: str, message: str) -> None:
    with pytest.raises(InputError) as e:
        parse(*args)
    assert (e.value.place, e.value.message) == (place, message)


def test_options_in_code_choose_by_precedence() -> None:
    assert sources.chosen(PipelineOptions(out=Path("o"))).name == "sample"  # the fallback
    both = PipelineOptions(out=Path("o"), inputs=("a",), bootstrap_server="h:1", describe=("d",))
    assert sources.chosen(both).name == "live"
    assert sources.chosen(PipelineOptions(out=Path("o"), inputs=("a",), describe=("d",))).name == "describe"
    assert [s.name for s in sources.listed()] == ["snapshots", "describe", "sample", "live"]
    with pytest.raises(TypeError, match="unknown option 'input'"):
        PipelineOptions(out=Path("o"), input=("a",))
    with pytest.raises(AttributeError):
        _ = PipelineOptions(out=Path("o")).no_such_option
