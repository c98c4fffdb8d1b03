"""Edges to a live Kafka cluster.

* :mod:`lagassign.kafka.offsets` reads a consumer group's offsets, members and assignment with
  confluent-kafka (an ``AdminClient`` and a ``Consumer`` that never joins a group:
  :class:`~lagassign.kafka.offsets.OffsetsReader`) and turns them into the model
  (:meth:`~lagassign.kafka.offsets.GroupSnapshot.to_group`).
  With a window it reads twice and measures produce and consume rates
  (:meth:`~lagassign.kafka.offsets.OffsetsReader.sampled`).
* :mod:`lagassign.kafka.groups` lists the cluster's consumer groups (the fleet pipeline),
  through the same reader.
* :mod:`lagassign.kafka.config` turns a Kafka client properties file (``--command-config``, read
  by :mod:`lagassign.formats.client_properties`) into librdkafka properties.
* the consumer-group adapters: :mod:`lagassign.kafka.kafka_python` and
  :mod:`lagassign.kafka.aiokafka` translate each client's types; :mod:`lagassign.kafka.group`
  is the leader's round (offsets under a deadline, then the core's rebalance round),
  :mod:`lagassign.kafka.settings` what both take from the application (and which protocol
  they run), :mod:`lagassign.kafka.wire` what a member sends the leader (the user data codec).

Nothing here computes lag or assigns partitions: that is the core's job. Importing this package
does not import confluent-kafka; only creating an ``OffsetsReader`` needs it.
"""
