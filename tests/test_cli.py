"""The `lagassign` command as a user runs it: a real process, its output and exit status."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_formats import ISSUE_2_GROUP


def lagassign(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lagassign.cli", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def group_file(tmp_path: Path):
    def write(data: object, name: str = "group.json") -> str:
        path = tmp_path / name
        path.write_text(data if isinstance(data, str) else json.dumps(data))
        return str(path)

    return write


def test_assign_json_seed_000(group_file):
    path = group_file(
        {
            "group": "g",
            "topics": {
                "t0": {
                    "partitions": [
                        {"partition": 0, "lag": 100000},
                        {"partition": 1, "lag": 50000},
                        {"partition": 2, "lag": 60000},
                    ]
                }
            },
            "members": [{"id": "C0", "topics": ["t0"]}, {"id": "C1", "topics": ["t0"]}],
        }
    )
    out = lagassign("assign", "--strategy", "lag", "--input", path, "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {
        "strategy": "lag",
        "assignment": {"C0": [["t0", 0]], "C1": [["t0", 2], ["t0", 1]]},
        "member_lag": {"C0": 100000, "C1": 110000},
    }


def test_assign_lists_every_member(group_file):
    data = json.loads(json.dumps(ISSUE_2_GROUP))
    data["members"].append({"id": "idle", "topics": []})
    out = lagassign("assign", "--strategy", "lag", "--input", group_file(data), "--format", "json")
    result = json.loads(out.stdout)
    assert result["assignment"]["idle"] == [] and result["member_lag"]["idle"] == 0
    assert result["member_lag"]["C0"] == 100000 + 900


def test_assign_table(group_file):
    out = lagassign("assign", "--strategy", "fair", "--input", group_file(ISSUE_2_GROUP))
    assert out.returncode == 0 and "C0" in out.stdout and "100,900" in out.stdout


@pytest.mark.parametrize(
    ("args", "data", "fragment"),
    [
        (["--strategy", "nope"], ISSUE_2_GROUP, "unknown strategy 'nope'"),
        (["--strategy", "lag"], '{"topics": ', "group.json:1:12: invalid JSON"),
        (
            ["--strategy", "lag"],
            {**ISSUE_2_GROUP, "members": [{"id": "a", "topics": ["zz"]}]},
            "members[0].topics: unknown topic 'zz'",
        ),
        (
            ["--strategy", "lag"],
            {**ISSUE_2_GROUP, "members": [{"id": "a", "topics": []}, {"id": "a", "topics": []}]},
            "members[1].id: duplicate member id 'a'",
        ),
        (
            ["--strategy", "lag"],
            {
                **ISSUE_2_GROUP,
                "topics": {"t": {"partitions": [{"partition": 0, "begin": 5, "end": 1}]}},
                "members": [],
            },
            "topics.t.partitions[0].end: end offset 1 is below begin offset 5",
        ),
        (
            ["--strategy", "lag"],
            {
                **ISSUE_2_GROUP,
                "topics": {"t": {"partitions": [{"partition": 0, "lag": -4}]}},
                "members": [],
            },
            "topics.t.partitions[0].lag: lag must not be negative",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2_no_traceback(group_file, args, data, fragment):
    out = lagassign("assign", *args, "--input", group_file(data))
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in out.stderr


def test_missing_input_file_is_exit_2():
    out = lagassign("assign", "--strategy", "lag", "--input", "/nonexistent/g.json")
    assert out.returncode == 2 and "/nonexistent/g.json: cannot read" in out.stderr


def test_plan_sample_with_plot(tmp_path):
    png = tmp_path / "plan.png"
    out = lagassign("plan", "--sample", "--plot", str(png))
    assert out.returncode == 0, out.stderr
    for name in ("current", "range", "roundrobin", "sticky", "cooperative-sticky", "fair", "lag"):
        assert name in out.stdout
    assert "test-group02" in out.stdout and "test-group03" in out.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plan_json_from_describe_file(tmp_path):
    from tests.test_formats import SEED_002_GROUP03

    dump = tmp_path / "describe.txt"
    dump.write_text(SEED_002_GROUP03)
    out = lagassign(
        "plan", "--describe-file", str(dump), "--strategies", "lag,range", "--format", "json"
    )
    (group,) = json.loads(out.stdout)
    assert [p["strategy"] for p in group["plans"]] == ["current", "lag", "range"]
    current = group["plans"][0]
    assert current["moves"] == 0 and current["max_member_lag"] == 6168
    assert all(p["max_member_lag"] >= p["lower_bound"] for p in group["plans"])


def test_plan_unknown_group_and_strategy_are_exit_2():
    assert lagassign("plan", "--sample", "--group", "zz").returncode == 2
    out = lagassign("plan", "--sample", "--strategies", "lag,zz")
    assert out.returncode == 2 and "--strategies: unknown strategy 'zz'" in out.stderr


def test_unwritable_plot_is_exit_2():
    out = lagassign("plan", "--sample", "--plot", "/nonexistent/dir/p.png")
    assert out.returncode == 2 and "--plot: cannot write" in out.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["plan", "--sample", "--strategies", " , "], "--strategies: name at least one strategy"),
        (["simulate", "--strategies", ","], "--strategies: name at least one strategy"),
        (["assign", "--strategy", "nope", "--sample"], "--strategy: unknown strategy 'nope'"),
        (["plan", "--sample", "--timeout", "0"], "argument --timeout: must be positive, got 0"),
        (["plan", "--sample", "--timeout", "nan"], "argument --timeout: must be positive"),
        (["plan", "--sample", "--timeout", "10s"], "argument --timeout: not a number of seconds"),
        (["plan", "--sample", "--rate-window", "-1"], "argument --rate-window: must be 0 or more"),
        (["plan", "--sample", "--rate-window", "inf"], "argument --rate-window: must be 0 or more"),
        (["plan", "--sample", "--rate-window", "5"], "--rate-window: only with --bootstrap-server"),
        # librdkafka takes request timeouts up to 3,600,000 ms; beyond, a ValueError traceback
        (["plan", "--sample", "--timeout", "4000"], "argument --timeout: at most 3600 s"),
        (["describe", "--bootstrap-server", "127.0.0.1:9", "--group", "g", "--timeout", "inf"],
         "argument --timeout: at most 3600 s"),
        (["describe", "--bootstrap-server", "", "--group", "g"],
         "argument --bootstrap-server: empty"),
        (["plan", "--bootstrap-server", " , ", "--group", "g"],
         "argument --bootstrap-server: empty"),
        (["plan", "--bootstrap-server", "127.0.0.1:x", "--group", "g"],
         "argument --bootstrap-server: not HOST:PORT (port 1-65535): '127.0.0.1:x'"),
        (["plan", "--sample", "--members", "0"], "argument --members: must be at least 1, got 0"),
        (["plan", "--sample", "--members", "1000001"], "argument --members: at most 1,000,000"),
        # a misspelt policy counted every log whole, as earliest, without a word
        (["plan", "--sample", "--auto-offset-reset", "erliest"],
         "argument --auto-offset-reset: expected latest, earliest, none or by_duration:<duration>, "
         "got 'erliest'"),
        (["describe", "--bootstrap-server", "127.0.0.1:9", "--group", "g",
          "--auto-offset-reset", "lates"], "argument --auto-offset-reset: expected latest"),
        (["pipeline", "--sample", "--out", "never-written", "--auto-offset-reset", "first"],
         "argument --auto-offset-reset: expected latest"),
        # the pipeline's live flags are the same types as plan's and describe's
        (["pipeline", "--bootstrap-server", "", "--out", "never-written"],
         "argument --bootstrap-server: empty"),
        (["pipeline", "--bootstrap-server", "127.0.0.1:9", "--out", "never-written",
          "--timeout", "4000"], "argument --timeout: at most 3600 s"),
    ],
)
def test_bad_flags_name_the_flag_in_one_line(args, message):
    out = lagassign(*args)
    assert out.returncode == 2
    (error,) = [line for line in out.stderr.splitlines() if "error:" in line]
    assert message in error


def test_shared_argument_types_accept_what_they_should():
    from lagassign.arguments import (
        auto_offset_reset,
        bootstrap_servers,
        positive_int,
        positive_seconds,
        strategy_list,
        timeout_seconds,
    )

    assert positive_seconds("2.5") == 2.5
    assert timeout_seconds("3600") == 3600.0 and timeout_seconds("0.5") == 0.5
    assert bootstrap_servers(" a:9092, [::1]:9093,b") == "a:9092,[::1]:9093,b"
    assert positive_int("8") == 8
    assert strategy_list(" balanced, lag ,") == ["balanced", "lag"]
    assert [auto_offset_reset(p) for p in ("Earliest", "by_duration:PT1H")] == [
        "Earliest",
        "by_duration:PT1H",
    ]


# -- --input reads every format a group comes in ---------------------------------------------

STATIC_GROUP_FILE = {
    "group": "g",
    "topics": {
        "t0": {"partitions": [{"partition": p, "begin": 0, "end": e, "committed": c}
                              for p, (e, c) in enumerate([(90, 10), (40, 40), (300, 0)])]},
        "t1": {"partitions": [{"partition": p, "begin": 5, "end": e, "committed": None}
                              for p, e in enumerate([70, 5, 20])]},
    },
    "auto_offset_reset": "earliest",
    "members": [
        {"id": "C1", "topics": ["t0", "t1"], "instance_id": "z", "owned": [["t0", 0]],
         "generation": 3},
        {"id": "C2", "topics": ["t0", "t1"], "instance_id": "a", "owned": [["t1", 2]],
         "capacity": 40},
        {"id": "C3", "topics": ["t0", "t1"], "owned": [["t0", 1], ["t1", 0]], "generation": 5},
    ],
}


def snapshot_rows_of(data: dict) -> list[dict]:
    """The snapshot rows (docs/pipeline.md) of a group file's group, written out by hand."""
    owner = {tuple(tp): m for m in data["members"] for tp in m.get("owned", [])}
    rows = []
    for topic, spec in data["topics"].items():
        for p in spec["partitions"]:
            m = owner.get((topic, p["partition"]), {})
            rows.append({
                "group": data["group"], "topic": topic, "partition": p["partition"],
                "begin": p["begin"], "end": p["end"], "committed": p["committed"],
                "member_id": m.get("id"), "auto_offset_reset": data["auto_offset_reset"],
                "instance_id": m.get("instance_id"), "generation": m.get("generation"),
                "capacity": m.get("capacity"),
            })
    return rows


@pytest.mark.parametrize("suffix", ["jsonl", "csv", "parquet"])
def test_input_snapshot_files_plan_as_the_group_file(group_file, tmp_path, suffix):
    import csv

    import pyarrow as pa
    import pyarrow.parquet as pq

    other = {**STATIC_GROUP_FILE, "group": "other"}
    rows = snapshot_rows_of(STATIC_GROUP_FILE) + snapshot_rows_of(other)
    path = tmp_path / f"fleet.{suffix}"
    if suffix == "parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    elif suffix == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    for strategy in ("range", "sticky", "balanced"):
        ours = lagassign("assign", "--strategy", strategy, "--format", "json",
                         "--input", str(path), "--group", "g")
        theirs = lagassign("assign", "--strategy", strategy, "--format", "json",
                           "--input", group_file(STATIC_GROUP_FILE))
        assert ours.returncode == 0, ours.stderr
        assert json.loads(ours.stdout) == json.loads(theirs.stdout), strategy
    planned = lagassign("plan", "--input", str(path), "--format", "json")
    assert [g["group"] for g in json.loads(planned.stdout)] == ["g", "other"]
    many = lagassign("assign", "--strategy", "range", "--input", str(path))
    assert many.returncode == 2
    assert many.stderr == "lagassign: error: the input holds 2 groups; choose one with --group\n"
    reset = lagassign("plan", "--input", str(path), "--auto-offset-reset", "latest")
    assert reset.returncode == 2 and "the input file sets auto_offset_reset" in reset.stderr


def test_input_snapshot_bad_row_is_one_line(tmp_path):
    path = tmp_path / "fleet.csv"
    path.write_text("group,topic,partition,begin,end\ng,t,0,0,10\ng,t,1,0,x\n")
    out = lagassign("plan", "--input", str(path))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == f"lagassign: error: {path}:3: end: expected an integer, got 'x'\n"


def test_a_describe_file_of_only_a_header_names_the_file(tmp_path):
    path = tmp_path / "dump.txt"
    path.write_text("GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG OWNER\n")
    out = lagassign("plan", "--describe-file", str(path))
    assert out.returncode == 2
    assert out.stderr == f"lagassign: error: {path}: the input holds no group\n"


def test_every_flag_of_every_command_has_an_accurate_help_text():
    import argparse

    from lagassign.cli import _build_parser

    parser = _build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    helps: dict[str, dict[str, str]] = {}
    for name, command in commands.choices.items():
        helps[name] = {
            flag: action.help or ""
            for action in command._actions
            for flag in action.option_strings
        }
        for flag, text in helps[name].items():
            assert text.strip(), f"{name} {flag} has no help text"
    # assign reads no cluster: its --group picks a group of a file, nothing "live"
    assert "live" not in helps["assign"]["--group"]
    assert "live" not in helps["assign"]["--auto-offset-reset"]
    assert "--bootstrap-server" in helps["plan"]["--group"]
    assert helps["plan"]["--timeout"].startswith("with --bootstrap-server")
    assert "at most 3600" in helps["describe"]["--timeout"]


@pytest.mark.parametrize(
    ("command", "text", "fragment"),
    [
        # ran until killed
        (
            ["assign", "--strategy", "range"],
            '{"topics":{"t":{"partitions":1000000000}},"members":[{"id":"a","topics":["t"]}]}',
            "topics.t.partitions: 1,000,000,000 partitions in the group so far",
        ),
        # a two-line error, the second forged by the input
        (
            ["plan"],
            '{"topics":{"a\\nlagassign: error: forged":{"partitions":-1}},"members":[]}',
            "topics.a\\nlagassign: error: forged: ",
        ),
        # UnicodeEncodeError on output
        (
            ["assign", "--strategy", "range"],
            '{"topics":{"t":{"partitions":1}},"members":[{"id":"\\ud800","topics":["t"]}]}',
            'members[0].id: "\\ud800": a lone surrogate',
        ),
        # OverflowError in metrics.lower_bound
        (
            ["plan", "--format", "json"],
            '{"topics":{"t":{"partitions":[{"partition":0,"lag":1' + "0" * 400 + "}]}},"
            '"members":[{"id":"a","topics":["t"]}]}',
            "topics.t.partitions[0].lag: expected an integer, got a number of 401 digits",
        ),
    ],
)
def test_issue_13_inputs_are_one_line_exit_2(group_file, command, text, fragment):
    out = lagassign(*command, "--input", group_file(text))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("lagassign: error: ")
    assert fragment in out.stderr, out.stderr


@pytest.mark.parametrize("value", ["QQ1\\uZZK9", "QQ1\\uD800ZK9", "QQ1\\u1ZK9"])
def test_a_bad_escape_in_client_properties_is_one_line_without_the_secret(
    tmp_path, capsys, value
):
    """Issue 13: a malformed escape echoed part of the password; a lone surrogate was a
    UnicodeDecodeError traceback. The file is read before any connection is tried."""
    from lagassign.cli import main

    config = tmp_path / "client.properties"
    config.write_text(f"security.protocol=SASL_SSL\nsasl.password={value}\n")
    args = ["describe", "--bootstrap-server", "127.0.0.1:1", "--group", "g"]
    assert main([*args, "--command-config", str(config), "--timeout", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"lagassign: error: {config}:2: ") and err.count("\n") == 1
    assert "the value of 'sasl.password'" in err and "QQ1" not in err and "ZK" not in err


@pytest.mark.parametrize("error", ["CliError", "OffsetsError", "ModelError"])
def test_every_error_is_one_line_whatever_text_it_carries(monkeypatch, capsys, error):
    """Text from outside the files (a group id on a cluster may hold anything) cannot forge a
    second 'lagassign: error:' line either."""
    from lagassign import cli
    from lagassign.kafka.offsets import OffsetsError
    from lagassign.model import ModelError

    forged = "g\nlagassign: error: forged\u2028"
    made = {
        "CliError": cli.CliError(forged),
        "OffsetsError": OffsetsError(forged),
        "ModelError": ModelError("members[0].id", forged),
    }[error]

    def fail(args):
        raise made

    monkeypatch.setattr(cli, "_load_groups", fail)
    assert cli.main(["plan", "--sample"]) in (1, 2)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "g\\nlagassign: error: forged\\u2028" in err, err


def test_the_command_line_builds_without_pyarrow_or_pyspark():
    """Every flag's help (the snapshot formats, the input formats, the pipeline's sources) comes
    from registries whose modules import pyarrow and PySpark only when they read."""
    code = (
        "import sys; from lagassign.cli import _build_parser; _build_parser().format_help(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyarrow', 'pyspark')))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "[]\n"
