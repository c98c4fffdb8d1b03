"""``lagassign monitor``: continuous lag from ``__consumer_offsets`` (issue 14; docs/monitor.md).

:mod:`.query` runs Spark's Kafka source on ``__consumer_offsets`` and hands each micro-batch
to :mod:`.batch` (one micro-batch from records to rows), which keeps :mod:`.commits` (the
latest committed offset per group, topic and partition) and :mod:`.windows` (each partition's
recent commits), both kept per micro-batch id, and writes :mod:`.lag_table` (the ``lag``
table's rows by the core's lag rules) and :mod:`.groups_table` (the ``groups`` table: each
group's status by :mod:`lagassign.status`, and from :mod:`.plans`, every ``--plan-every``
minutes, its catch-up times now and under ``balanced`` and a recommendation), once per
micro-batch id;
:mod:`.options` turns the command's flags into :class:`.query.MonitorOptions`. The modules
but :mod:`.query` need no Spark.
"""
