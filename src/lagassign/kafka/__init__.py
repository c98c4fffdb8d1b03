"""Edges to a live Kafka cluster.

* :mod:`lagassign.kafka.offsets` reads a consumer group's offsets, members and assignment with
  confluent-kafka's ``AdminClient`` (:class:`~lagassign.kafka.offsets.OffsetsReader`) and turns
  them into the model (:meth:`~lagassign.kafka.offsets.GroupSnapshot.to_group`).
  With a window it reads twice and measures produce and consume rates
  (:meth:`~lagassign.kafka.offsets.OffsetsReader.sampled`).
* :mod:`lagassign.kafka.groups` lists the cluster's consumer groups (the fleet pipeline).
* :mod:`lagassign.kafka.config` turns a Kafka client properties file (``--command-config``, read
  by :mod:`lagassign.formats.client_properties`) into librdkafka properties.
* :mod:`lagassign.kafka.group`, :mod:`lagassign.kafka.kafka_python`,
  :mod:`lagassign.kafka.aiokafka`: the consumer-group adapters (the leader's round, the
  subscription user data, each client's types).

Nothing here computes lag or assigns partitions: that is the core's job. Importing this package
does not import confluent-kafka; only creating an ``OffsetsReader`` needs it.
"""
