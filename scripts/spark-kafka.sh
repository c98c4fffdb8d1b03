#!/usr/bin/env bash
# Fetch Spark's Kafka source (org.apache.spark:spark-sql-kafka-0-10_2.13) at exactly the
# installed PySpark's version, with the jars it needs that PySpark does not ship, from Maven
# Central into .cache/spark-kafka/<version>/ (lagassign.spark.kafka_jars lists them for
# spark.jars). `lagassign monitor` never downloads anything at run time. Needs Maven and the
# venv of scripts/setup.sh. Idempotent: a version already fetched is not fetched again.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/fetch-jars.sh" spark-kafka spark.version \
  'import pyspark; print(pyspark.__version__)'
