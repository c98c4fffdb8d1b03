#!/usr/bin/env bash
# Fetch Hadoop's S3A connector (org.apache.hadoop:hadoop-aws) at exactly the Hadoop version of
# the installed PySpark's jars (pyspark/jars/hadoop-client-api-<version>.jar), with the AWS SDK
# bundle it needs, from Maven Central into .cache/spark-s3/<version>/
# (lagassign.spark.s3_jars lists them): s3a:// inputs and --out for `lagassign pipeline`, and
# the tests' local S3 server. Nothing is downloaded at run time. Needs Maven and the venv of
# scripts/setup.sh (which runs this). Idempotent: a version already fetched is not fetched again.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/fetch-jars.sh" spark-s3 hadoop.version \
  'from lagassign.spark.s3_jars import hadoop_version; print(hadoop_version())'
