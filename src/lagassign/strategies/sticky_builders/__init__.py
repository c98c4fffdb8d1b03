"""What the ``sticky`` and ``cooperative-sticky`` assignors (strategies/sticky.py) build on,
split as Kafka splits ``AbstractStickyAssignor``: the group's subscriptions, claims and owners
(subscriptions.py), the constrained builder for identical subscriptions (constrained.py) and the
general builder (general.py)."""
