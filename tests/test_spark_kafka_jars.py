"""spark/kafka_jars.py: the jars scripts/spark-kafka.sh fetched, less what PySpark ships."""

from __future__ import annotations

from pathlib import Path

import pytest

from lagassign.spark.kafka_jars import KafkaJarsMissing, artifact_of, kafka_jars


@pytest.mark.parametrize(
    ("jar", "artifact"),
    [
        ("spark-sql-kafka-0-10_2.13-4.3.0.jar", "spark-sql-kafka-0-10_2.13"),
        ("kafka-clients-3.9.2.jar", "kafka-clients"),
        ("zstd-jni-1.5.7-7.jar", "zstd-jni"),
        ("snappy-java-1.1.10.5.jar", "snappy-java"),
        ("jsr305-3.0.0.jar", "jsr305"),
        ("spark-core_2.13-4.2.0-preview5.jar", "spark-core_2.13"),
    ],
)
def test_artifact_of(jar: str, artifact: str) -> None:
    assert artifact_of(jar) == artifact


def test_jars_less_what_pyspark_ships(tmp_path: Path) -> None:
    folder = tmp_path / "9.9.9"
    folder.mkdir()
    names = [
        "spark-sql-kafka-0-10_2.13-9.9.9.jar",
        "spark-token-provider-kafka-0-10_2.13-9.9.9.jar",
        "kafka-clients-3.9.2.jar",
        "commons-pool2-2.13.1.jar",
        "scala-library-2.13.15.jar",  # PySpark ships these
        "hadoop-client-runtime-3.5.0.jar",
        "slf4j-api-1.7.36.jar",
    ]
    for name in names:
        (folder / name).write_bytes(b"")
    (folder / ".complete").write_bytes(b"")
    assert [j.name for j in kafka_jars(tmp_path, "9.9.9")] == sorted(names[:4])


def test_a_missing_or_unfinished_fetch_names_the_command(tmp_path: Path) -> None:
    with pytest.raises(KafkaJarsMissing, match=r"run bash scripts/spark-kafka.sh"):
        kafka_jars(tmp_path, "9.9.9")
    folder = tmp_path / "9.9.9"
    folder.mkdir()
    (folder / "spark-sql-kafka-0-10_2.13-9.9.9.jar").write_bytes(b"")
    with pytest.raises(KafkaJarsMissing, match=r"PySpark 9\.9\.9"):
        kafka_jars(tmp_path, "9.9.9")
