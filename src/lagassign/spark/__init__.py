"""The fleet pipeline on PySpark: lag and every strategy's plan for every consumer group.

* :mod:`lagassign.spark.pipeline`: the job (``lagassign pipeline``, ``python -m
  lagassign.spark.pipeline``, spark-submit);
* :mod:`lagassign.spark.sources`: snapshot files, describe dumps, the sample fleet and a live
  cluster as one DataFrame of snapshot rows, read on the executors: one module per source,
  registered by name;
* :mod:`lagassign.spark.groups`: what the executors run for each group: its model group
  (:mod:`lagassign.formats.snapshot_rows`, from rows that :mod:`lagassign.formats.snapshot`
  read and checked), the core's plans, the result rows;
* :mod:`lagassign.spark.outputs`: the output folder, written whole or not at all;
* :mod:`lagassign.spark.options`: the flags, shared by every way of running it.

Spark moves rows; every rule (lag, strategies, metrics) is the core's. Importing this package
(or :mod:`~lagassign.spark.options`, or the sources' registry) does not import PySpark.
"""
