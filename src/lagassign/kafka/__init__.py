"""Edges to a live Kafka cluster.

* :mod:`lagassign.kafka.offsets` reads a consumer group's offsets, members and assignment with
  confluent-kafka's ``AdminClient`` (:class:`~lagassign.kafka.offsets.OffsetsReader`) and turns
  them into the model (:meth:`~lagassign.kafka.offsets.GroupSnapshot.to_group`).
* :mod:`lagassign.kafka.config` reads a Kafka client properties file (``--command-config``) into
  librdkafka properties.

Nothing here computes lag or assigns partitions: that is the core's job. Importing this package
does not import confluent-kafka; only creating an ``OffsetsReader`` needs it.
"""
