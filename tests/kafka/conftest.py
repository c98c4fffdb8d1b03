"""A real Kafka broker for the tests under tests/kafka.

The session fixture ``kafka_bootstrap`` runs the same ``scripts/kafka.sh start`` a developer runs
by hand, with ``LAGASSIGN_KAFKA_DIR`` set to a session temp dir, and ``scripts/kafka.sh stop`` at
teardown, through :class:`tests.kafka.broker.DevBroker`, which the benchmarks use too. It never
skips: a broker that cannot start fails the tests, with the broker's log tail. Every test
that uses the broker gets the ``kafka`` marker (tests/conftest.py; ``pytest -m "not kafka"``
leaves them out).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator

import pytest

from tests.kafka.broker import BrokerError, DevBroker

KafkaSh = Callable[[str], subprocess.CompletedProcess[str]]


@pytest.fixture(scope="session")
def dev_broker(tmp_path_factory: pytest.TempPathFactory) -> DevBroker:
    """This session's broker; its run dir (server.properties, data, logs, pid file) is a
    session temp dir."""
    return DevBroker(tmp_path_factory.mktemp("kafka-run"))


@pytest.fixture(scope="session")
def kafka_sh(dev_broker: DevBroker) -> KafkaSh:
    """Runs ``scripts/kafka.sh CMD`` against this session's broker."""

    def run(cmd: str) -> subprocess.CompletedProcess[str]:
        try:
            return dev_broker.sh(cmd)
        except BrokerError as exc:
            pytest.fail(str(exc), pytrace=False)

    return run


@pytest.fixture(scope="session")
def kafka_bootstrap(dev_broker: DevBroker) -> Iterator[str]:
    """``127.0.0.1:PORT`` of a single-node Kafka broker started for this test session."""
    try:
        bootstrap = dev_broker.start()
    except BrokerError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield bootstrap
    finally:
        try:
            dev_broker.stop()
        except BrokerError as exc:
            pytest.fail(str(exc), pytrace=False)
