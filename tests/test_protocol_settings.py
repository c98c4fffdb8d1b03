"""Which librdkafka properties the offsets reader's protocol path takes (lagassign.kafka.protocol):
those kafka-python has an exact meaning for; any other keeps the reader on librdkafka."""

from __future__ import annotations

import pytest

from lagassign.kafka.offsets import OffsetsReader
from lagassign.kafka.protocol import RECEIVE_MESSAGE_MAX_BYTES, WireClient, wire_settings


def test_connection_properties_map_to_kafka_python() -> None:
    assert wire_settings(
        {
            "bootstrap.servers": "a:9092,b:9092",
            "client.id": "lagassign",
            "security.protocol": "sasl_ssl",
            "sasl.mechanisms": "SCRAM-SHA-512",
            "sasl.username": "u",
            "sasl.password": "p",
            "ssl.ca.location": "/ca.pem",
            "ssl.certificate.location": "/cert.pem",
            "ssl.key.location": "/key.pem",
            "ssl.key.password": "k",
            "ssl.endpoint.identification.algorithm": "none",
        }
    ) == {
        "bootstrap_servers": "a:9092,b:9092",
        "client_id": "lagassign",
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "u",
        "sasl_plain_password": "p",
        "ssl_cafile": "/ca.pem",
        "ssl_certfile": "/cert.pem",
        "ssl_keyfile": "/key.pem",
        "ssl_password": "k",
        "ssl_check_hostname": False,
    }


@pytest.mark.parametrize(
    "config",
    [
        {},  # no bootstrap servers
        {"bootstrap.servers": "a:9092", "sasl.oauthbearer.method": "oidc"},
        {"bootstrap.servers": "a:9092", "ssl.keystore.location": "/ks.p12"},
        {"bootstrap.servers": "a:9092", "security.protocol": "SASL_PLAINTEXT"},  # GSSAPI
        {"bootstrap.servers": "a:9092", "sasl.mechanism": "OAUTHBEARER"},
        {"bootstrap.servers": "a:9092", "ssl.endpoint.identification.algorithm": "other"},
    ],
    ids=["no-servers", "oauthbearer", "keystore", "gssapi", "oauth-mechanism", "identification"],
)
def test_what_kafka_python_cannot_mean_stays_on_librdkafka(config: dict[str, str]) -> None:
    assert wire_settings(config) is None


def test_the_reader_can_be_kept_on_librdkafka() -> None:
    config = {"bootstrap.servers": "127.0.0.1:9"}
    with OffsetsReader(config, protocol=False) as r:
        assert r._wire_settings is None
    with OffsetsReader(config) as r:
        assert r._wire_settings == {"bootstrap_servers": "127.0.0.1:9", "client_id": "lagassign"}


def test_answers_as_large_as_librdkafka_takes() -> None:
    """Issue 15: the Metadata answer of 50,000 partitions (1.3 MB on 6 brokers) is over
    kafka-python's 1,000,000-byte limit, and every read of that size went through librdkafka
    ("Invalid frame length"); the protocol path takes what librdkafka takes (its
    ``receive.message.max.bytes``: 100,000,000 unless set)."""
    assert wire_settings(
        {"bootstrap.servers": "a:9092", "receive.message.max.bytes": "5000000"}
    ) == {"bootstrap_servers": "a:9092", "receive_message_max_bytes": 5_000_000}
    assert wire_settings({"bootstrap.servers": "a:9092", "receive.message.max.bytes": "x"}) is None
    assert RECEIVE_MESSAGE_MAX_BYTES == 100_000_000
    for settings, limit in (
        ({"bootstrap_servers": "127.0.0.1:9"}, RECEIVE_MESSAGE_MAX_BYTES),
        ({"bootstrap_servers": "127.0.0.1:9", "receive_message_max_bytes": 5_000_000}, 5_000_000),
    ):
        client = WireClient(settings)
        try:
            assert {m.config["receive_message_max_bytes"] for m in client._managers} == {limit}
        finally:
            client.close()
