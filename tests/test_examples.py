"""`lagassign assign` on the examples/ group files reproduces every worked example.

Each case names its source; examples/README.md lists the files.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def assign(strategy: str, example: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "lagassign.cli", "assign", "--strategy", strategy,
         "--input", str(EXAMPLES / example), "--format", "json"],
        capture_output=True, text=True, timeout=120, check=True,
    )
    return json.loads(done.stdout)


def named(assignment: dict[str, list[list]]) -> dict[str, list[str]]:
    return {m: [f"{t}-{p}" for t, p in tps] for m, tps in assignment.items()}


CASES = [
    # (source, strategy, file, expected assignment in the strategy's order)
    ("seed 000", "lag", "seed000-lag.json", {"C0": ["t0-0"], "C1": ["t0-2", "t0-1"]}),
    ("the Java original's LagBasedPartitionAssignorTest", "lag", "java-unit-test.json",
     {"consumer-1": ["topic1-0", "topic1-2", "topic2-0", "topic2-1"],
      "consumer-2": ["topic1-1", "topic1-3"]}),
    ("issue 2, zero lag", "lag", "zero-lag.json",
     {"consumer-1": ["t-0", "t-2", "t-4", "t-6"], "consumer-2": ["t-1", "t-3", "t-5"]}),
    ("issue 2, skewed topic", "lag", "skewed-topic.json",
     {"consumer-1": ["topic1-8", "topic1-2", "topic1-7"],
      "consumer-2": ["topic1-9", "topic1-1", "topic1-3"],
      "consumer-3": ["topic1-4", "topic1-0", "topic1-5", "topic1-6"]}),
    ("seed 003 (KIP-49), Fair", "fair", "kip49.json",
     {"C1": ["T2-0", "T3-0"], "C2": ["T1-0", "T3-1"], "C3": ["T1-1", "T5-0"], "C4": ["T4-0", "T5-1"]}),
    ("seed 003 (KIP-49), Round Robin", "roundrobin", "kip49.json",
     {"C1": ["T1-0", "T3-0", "T5-0"], "C2": ["T1-1", "T3-1", "T5-1"], "C3": [], "C4": ["T2-0", "T4-0"]}),
]


@pytest.mark.parametrize(("source", "strategy", "example", "expected"), CASES,
                         ids=[c[0] for c in CASES])
def test_exact(source, strategy, example, expected):
    assert named(assign(strategy, example)["assignment"]) == expected


SETS = [
    # Kafka lists range's partitions in its HashMap topic order (docs/strategies.md), so these
    # compare what each member gets, as the sources print it.
    ("seed 003 (KIP-49), Range", "kip49.json",
     {"C1": {"T1-0", "T2-0", "T3-0", "T4-0", "T5-0"}, "C2": {"T1-1", "T3-1", "T5-1"}, "C3": set(), "C4": set()}),
    ("seed 004", "seed004-range.json", {"C0": {"t0-0", "t0-1", "t1-0", "t1-1"}, "C1": {"t0-2", "t1-2"}}),
    ("seed 004, static members I0 (C3) and I1 (C2)", "seed004-static.json",
     {"C3": {"t0-0", "t0-1", "t1-0", "t1-1"}, "C2": {"t0-2", "t1-2"}}),
]


@pytest.mark.parametrize(("source", "example", "expected"), SETS, ids=[c[0] for c in SETS])
def test_range_examples(source, example, expected):
    got = named(assign("range", example)["assignment"])
    assert {m: set(ps) for m, ps in got.items()} == expected


def test_balanced_spreads_the_hot_partitions():
    """balanced's docstring example: one hot partition per topic, one per member."""
    assert assign("balanced", "hot-partitions.json")["member_lag"] == {"a": 920, "b": 920, "c": 920}
    assert sorted(assign("lag", "hot-partitions.json")["member_lag"].values()) == [30, 30, 2700]
