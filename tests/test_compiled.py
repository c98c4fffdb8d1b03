"""The compiled `balanced` (scripts/compile.py, mypyc) against its own source: the same plans.

scripts/test.sh sets LAGASSIGN_EXPECT_COMPILED=1 after set-up has built the extension, so that a
build that silently stopped working fails here instead of leaving every other test on the
interpreted module. Without the extension (a checkout where compile.py has not run) there is no
compiled module to compare, and the comparisons say so by skipping.
"""

from __future__ import annotations

import importlib.machinery
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lagassign.model import Group, Member
from lagassign.samples import FAMILIES, catch_up_suite, generate, with_rates
from lagassign.strategies import compiled, interpreted
from lagassign.strategies.cooperative import assign_cooperatively
from tests.builders import lag_topic
from tests.groupgen import random_group

COMPILED = compiled("balanced")
needs_compiled = pytest.mark.skipif(not COMPILED, reason="balanced is not compiled here")
source = interpreted("balanced")


def test_the_extension_is_in_use_where_set_up_built_it() -> None:
    if os.environ.get("LAGASSIGN_EXPECT_COMPILED") != "1":
        pytest.skip("LAGASSIGN_EXPECT_COMPILED is not set (scripts/test.sh sets it)")
    assert COMPILED, "scripts/compile.py ran but lagassign.strategies.balanced is the source"


def extension() -> ModuleType:
    """The module the strategies' registry uses: the extension where it is compiled."""
    return sys.modules["lagassign.strategies.balanced"]


def assert_same_plans(group: Group) -> None:
    made_by = extension().BalancedAssignor
    for options in ({}, {"sticky": False}, {"tolerance": 0.0}):
        made = made_by(**options).assign(group)
        expected = source.BalancedAssignor(**options).assign(group)
        assert made.as_lists() == expected.as_lists(), options


@needs_compiled
@pytest.mark.parametrize("seed", range(120))
def test_lag_plans_are_the_sources(seed: int) -> None:
    """Random groups (owned partitions, racks, offsets, mixed subscriptions) and the sample
    families, up to 1,500 partitions: restarts, splits, double swaps on lists and arrays."""
    rng = random.Random(seed)
    assert_same_plans(random_group(rng, max_topics=6, max_partitions=60, max_members=12))
    assert_same_plans(generate(FAMILIES[seed % len(FAMILIES)], seed, 300 if seed % 4 else 1_500))


@needs_compiled
@pytest.mark.parametrize("sample", list(catch_up_suite(8)), ids=lambda s: f"{s.family}-{s.seed}")
def test_time_aware_plans_are_the_sources(sample) -> None:  # type: ignore[no-untyped-def]
    """Produce rates and member capacities: catch-up plans, sticky and fresh."""
    assert_same_plans(sample.group)


@needs_compiled
@pytest.mark.parametrize("seed", range(30))
def test_cooperative_rounds_are_the_sources(seed: int) -> None:
    """On the cooperative protocol, what members still consume priced into time-aware plans:
    the same assignment and the same partitions withheld for a follow-up round."""
    group = with_rates(random_group(random.Random(seed), owned=True, max_partitions=40), seed)
    made = assign_cooperatively(extension().BalancedAssignor(), group)
    expected = assign_cooperatively(source.BalancedAssignor(), group)
    assert made.assignment.as_lists() == expected.assignment.as_lists()
    assert made.withheld == expected.withheld


@needs_compiled
def test_a_million_partitions_on_arrays_are_the_sources() -> None:
    """Above ARRAYS_ABOVE partitions (weights on arrays, constructed per topic) the plan of a
    group the size of bench/speed.py's 100k one, smaller: 60,000 partitions on 300 members."""
    rng = random.Random(7)
    topics = [
        lag_topic(f"t{t}", [rng.randrange(0, 5_000) for _ in range(600)]) for t in range(100)
    ]
    names = frozenset(t.name for t in topics)
    group = Group.of(topics, [Member(f"m{i:03}", names) for i in range(300)])
    assert_same_plans(group)


@needs_compiled
@settings(max_examples=60, deadline=None)
@given(
    lags=st.lists(st.integers(0, 2**47), min_size=1, max_size=40),
    members=st.integers(1, 8),
)
def test_any_lags_within_floats_give_the_sources_plan(lags: list[int], members: int) -> None:
    """Any lags whose total is below 2**53 (40 of up to 2**47), where every sum of them is a
    float exactly. (Compiled, the search holds a weight as a float and adds weights as floats;
    loads are floats either way. Past 2**53 a float rounds what Python's ints add exactly.)"""
    readers = [Member(f"m{i}", frozenset({"t"})) for i in range(members)]
    group = Group.of([lag_topic("t", lags)], readers)
    assert_same_plans(group)


def test_an_edited_source_is_run_instead_of_a_stale_extension(tmp_path: Path) -> None:
    """An extension built from another source than the one beside it is not imported: the
    edited source is (Python alone would take the extension first)."""
    package = Path(__file__).parents[1] / "src" / "lagassign"
    copy = tmp_path / "lagassign"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    strategies = copy / "strategies"
    here = "import lagassign.strategies.balanced as b; print(b.__file__)"

    def imported() -> str:
        env = {**os.environ, "PYTHONPATH": str(tmp_path)}
        done = subprocess.run(
            [sys.executable, "-c", here], env=env, capture_output=True, text=True, check=True
        )
        return Path(done.stdout.strip()).name

    if COMPILED:
        assert imported().endswith(".so")
    else:
        # an extension of this checkout's own (stale) making: any file named as one is taken
        # for one by the check, which runs before Python would try to load it
        extension = "balanced" + importlib.machinery.EXTENSION_SUFFIXES[0]
        (strategies / extension).write_bytes(b"")
    with (strategies / "balanced.py").open("a") as edited:
        edited.write("\n# edited after the extension was built\n")
    assert imported() == "balanced.py"


def test_an_extension_is_current_only_while_its_stamp_names_the_source(tmp_path: Path) -> None:
    """lagassign.extensions, the rule scripts/compile.py and lagassign.strategies share."""
    from lagassign import extensions

    assert extensions.source("lagassign.strategies.balanced").name == "balanced.py"
    assert extensions.source("lagassign.strategies.balanced").is_file()
    with pytest.raises(ValueError, match="not a module of lagassign"):
        extensions.source("kafka.coordinator")
    source = tmp_path / "mod.py"
    source.write_text("x = 1\n")
    assert not extensions.current(source)  # nothing built
    extensions.extension(source).write_bytes(b"")
    assert not extensions.current(source)  # built, but from no known source
    extensions.stamp(source).write_text(extensions.digest(source) + "\n")
    assert extensions.current(source)
    source.write_text("x = 2\n")
    assert not extensions.current(source)  # the source edited since
