"""``lagassign monitor``: continuous lag from ``__consumer_offsets`` (issue 14; docs/monitor.md).

Built so far, and usable without Spark: :mod:`.commits` (the latest committed offset per
group, topic and partition, from decoded records, kept per micro-batch id), :mod:`.lag_table`
(the ``lag`` table's rows by the core's lag rules, written once per micro-batch id) and
:mod:`.batch` (one micro-batch from records to rows). The streaming query that feeds them from
Spark's Kafka source is not built yet (docs/monitor.md says why).
"""
