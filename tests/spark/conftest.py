"""A local Spark session for the tests under tests/spark (and the live pipeline test).

One session for the whole test run, ``local[2]`` with 2 GB for the driver, started the way the
pipeline starts its own (:func:`lagassign.spark.pipeline.start_session`), without the web UI.
Every test in this folder gets the ``spark`` marker (``pytest -m "not spark"`` leaves them out).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from lagassign.spark.options import PipelineOptions
from lagassign.spark.pipeline import start_session

HERE = Path(__file__).resolve().parent
MASTER = "local[2]"
#: settings for test sessions: no web UI (ports), few shuffle partitions
TEST_CONF = (
    ("spark.ui.enabled", "false"),
    ("spark.sql.shuffle.partitions", "4"),
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "spark: tests that run a local Spark session")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """A ``local[2]`` session shared by every test of the run."""
    options = PipelineOptions(
        out=tmp_path_factory.mktemp("unused"), master=MASTER, conf=TEST_CONF, quiet=True
    )
    session = start_session(options)
    try:
        yield session
    finally:
        session.stop()
