"""lagassign: assign Kafka partitions across a consumer group so that lag is spread evenly."""

__version__ = "0.1.0"
