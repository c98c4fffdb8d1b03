"""Markers that say what a test needs, given by what it uses rather than where it lives.

* ``kafka``: a real Kafka broker (the test uses the session broker of tests/kafka/conftest.py:
  ``dev_broker``, ``kafka_sh`` or ``kafka_bootstrap``, directly or through another fixture);
* ``spark``: a local Spark session (the ``spark`` fixture of tests/spark/conftest.py, or, for
  every test under tests/spark, a ``lagassign pipeline`` run that starts its own);
* ``java``: Kafka's Java assignors through tests/javaref.py (marked in the test module);
* ``slow``: more than a few seconds of CPU on 2 cores: everything on ``kafka``, ``spark`` or
  ``java``, and the tests marked ``slow`` by hand (MILP certifications against HiGHS).

``pytest -m "not slow"`` runs the quick core suite; ``-m "not kafka and not spark"`` leaves out
what needs a broker or Spark. CI runs everything.
"""

from __future__ import annotations

from pathlib import Path

import pytest

MARKERS = {
    "kafka": "tests against a real Kafka broker started by scripts/kafka.sh (Java 17, Maven)",
    "spark": "tests that run a local Spark session",
    "java": "differential tests against Kafka's Java assignors (needs the kafka-clients jars)",
    "slow": "tests that take more than a few seconds on 2 cores (broker, Spark, MILP solver)",
}
#: fixture -> the marker a test using it gets
NEEDS = {
    "dev_broker": "kafka",
    "kafka_sh": "kafka",
    "kafka_bootstrap": "kafka",
    "spark": "spark",
}
#: folder -> the marker every test in it gets
FOLDERS = {Path(__file__).resolve().parent / "spark": "spark"}
#: markers that make a test slow by themselves
SLOW = frozenset({"kafka", "spark", "java"})


def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        # fixturenames is the closure: fixtures a test reaches through other fixtures count
        needs = {NEEDS[f] for f in getattr(item, "fixturenames", ()) if f in NEEDS}
        needs.update(marker for folder, marker in FOLDERS.items() if folder in item.path.parents)
        for marker in sorted(needs):
            item.add_marker(marker)
        if needs & SLOW and item.get_closest_marker("slow") is None:
            item.add_marker("slow")
