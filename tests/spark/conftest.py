"""A local Spark session for the tests under tests/spark (and the live pipeline test).

One session for the whole test run, ``local[2]`` with 2 GB for the driver, started the way the
pipeline starts its own (:func:`lagassign.spark.pipeline.start_session`), without the web UI,
with Hadoop's S3A connector (scripts/spark-s3.sh) on its class path for tests/spark/test_storage.py.
Every test that uses it gets the ``spark`` marker (tests/conftest.py; ``pytest -m "not spark"``
leaves them out).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from lagassign.spark.options import PipelineOptions
from lagassign.spark.pipeline import start_session
from lagassign.spark.s3_jars import s3_jars

MASTER = "local[2]"
#: settings for test sessions: no web UI (ports), few shuffle partitions
TEST_CONF = (
    ("spark.ui.enabled", "false"),
    ("spark.sql.shuffle.partitions", "4"),
)


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """A ``local[2]`` session shared by every test of the run."""
    s3 = ("spark.driver.extraClassPath", os.pathsep.join(str(j) for j in s3_jars()))
    options = PipelineOptions(
        out=tmp_path_factory.mktemp("unused"), master=MASTER, conf=(*TEST_CONF, s3), quiet=True
    )
    session = start_session(options)
    try:
        yield session
    finally:
        session.stop()
