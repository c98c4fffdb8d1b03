"""--command-config files: Java properties syntax, and Java client names -> librdkafka names.

The syntax cases were checked against ``java.util.Properties.load`` (Java 17): the expected
values below are what Java reads from the same text.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from lagassign.formats.client_properties import Property, parse_properties, read_properties
from lagassign.formats.errors import InputError
from lagassign.kafka.config import load_client_config, merge, to_librdkafka

# read by java.util.Properties.load as JAVA_READS below
JAVA_TEXT = r"""# comment
  ! bang comment

a=b
c : d
e f
h=
  i = spaced value  
multi=one,\
    two,\
  three
even=x\\
next=y
key\ with\ space=v
a\=b=c
u=\u0041\tB
colon:x:y
dup=1
dup=2
tab	sep
"""  # noqa: W291 - the trailing spaces of `i` are part of its value

JAVA_READS = {
    "a": "b",
    "c": "d",
    "e": "f",
    "h": "",
    "i": "spaced value  ",
    "multi": "one,two,three",
    "even": "x\\",
    "next": "y",
    "key with space": "v",
    "a=b": "c",
    "u": "A\tB",
    "colon": "x:y",
    "dup": "2",
    "tab": "sep",
}


def write(tmp_path: Path, text: str | bytes, name: str = "client.properties") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def props(text: str) -> dict[str, str]:
    return {p.key: p.value for p in parse_properties(text, "f")}


def mapped(text: str) -> dict[str, str]:
    return to_librdkafka(parse_properties(text, "f"), "f")


# ------------------------------------------------------------------------------------------------
# syntax


def test_reads_what_java_reads() -> None:
    assert props(JAVA_TEXT) == JAVA_READS


def test_line_numbers_are_where_a_property_starts() -> None:
    got = parse_properties(JAVA_TEXT, "f")
    assert Property("a", "b", 4) in got
    assert Property("multi", "one,two,three", 9) in got
    assert Property("next", "y", 13) in got
    assert [p.value for p in got if p.key == "dup"] == ["1", "2"]


def test_crlf_and_a_trailing_backslash_on_the_last_line() -> None:
    assert props("a=1\r\nb=2\\") == {"a": "1", "b": "2"}


def test_unicode_escapes_and_utf8() -> None:
    assert props("name=caf\\u00e9 \\uD83D\\uDE00\nraw=café 😀\n") == {
        "name": "café 😀",
        "raw": "café 😀",
    }


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        # a line without a separator may be a secret that lost its '=': not shown
        ("a=1\nhunter2\n", 2, "no '=' or ':' (expected key=value; the line is not shown)"),
        ("a=1\n\n=value\n", 3, "no key before the '=' or ':'"),
        # issue 13: nothing of a value is shown (it may be a secret), only its key
        ("a=1\nb=\\u12\n", 2, "malformed \\uXXXX escape in the value of 'b'"),
        ("x=\\\n  \\uZZZZ\n", 1, "malformed \\uXXXX escape in the value of 'x'"),
        ("pass\\u12word=x\n", 1, "malformed \\uXXXX escape in the key"),
        (
            "sasl.password=s3\\uD800cret\n",
            1,
            "a \\uXXXX escape in the value of 'sasl.password' is a lone surrogate (not valid "
            "Unicode)",
        ),
        ("a\\u0000b=1\n", 1, "key 'a\\x00b': a control character (U+0000) at character 2"),
    ],
)
def test_bad_lines_name_file_and_line(text: str, line: int, message: str) -> None:
    with pytest.raises(InputError) as raised:
        parse_properties(text, "client.properties")
    assert str(raised.value) == f"client.properties:{line}: {message}"


def test_read_properties_file(tmp_path: Path) -> None:
    path = write(tmp_path, "\ufeffbootstrap.servers=b:9092\n")
    assert read_properties(path) == [Property("bootstrap.servers", "b:9092", 1)]


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.properties"
    with pytest.raises(InputError, match=r"nope\.properties: cannot read: No such file"):
        read_properties(path)


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, b"a=1\nb=\xff\xfe\n")
    with pytest.raises(InputError) as raised:
        read_properties(path)
    assert str(raised.value) == f"{path}:2: not UTF-8 text"


# ------------------------------------------------------------------------------------------------
# Java client names -> librdkafka


def test_shared_names_pass_through() -> None:
    text = (
        "bootstrap.servers=k1:9093,k2:9093\n"
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        "ssl.keystore.location=/etc/client.p12\n"
        "ssl.keystore.password=ks-secret\n"
        "ssl.key.password=key-secret\n"
        "client.id=ops\n"
    )
    assert mapped(text) == props(text)


@pytest.mark.parametrize(
    ("module", "mechanism"),
    [
        ("org.apache.kafka.common.security.plain.PlainLoginModule", "PLAIN"),
        ("org.apache.kafka.common.security.scram.ScramLoginModule", "SCRAM-SHA-256"),
    ],
)
def test_jaas_username_and_password(module: str, mechanism: str) -> None:
    text = (
        "security.protocol=SASL_SSL\n"
        f"sasl.mechanism={mechanism}\n"
        f"sasl.jaas.config={module} required \\\n"
        '    username="alice" \\\n'
        # Properties unescapes \\ to \, then JAAS unescapes \" to "
        '    password="p@ss \\\\"word\\\\";x";\n'
    )
    assert mapped(text) == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": mechanism,
        "sasl.username": "alice",
        "sasl.password": 'p@ss "word";x',
    }


def test_jaas_kerberos() -> None:
    text = (
        "sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required "
        'useKeyTab=true storeKey=true keyTab="/etc/security/ops.keytab" '
        'principal="ops@EXAMPLE.COM";\n'
        "sasl.kerberos.service.name=kafka\n"
    )
    assert mapped(text) == {
        "sasl.kerberos.keytab": "/etc/security/ops.keytab",
        "sasl.kerberos.principal": "ops@EXAMPLE.COM",
        "sasl.kerberos.service.name": "kafka",
    }


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            'org.apache.kafka.common.security.plain.PlainLoginModule required username="a"',
            "sasl.jaas.config: must end with ';'",
        ),
        (
            'org.apache.kafka.common.security.plain.PlainLoginModule required username="a";',
            "sasl.jaas.config: org.apache.kafka.common.security.plain.PlainLoginModule "
            "needs password",
        ),
        ('username="a" password="b";', "sasl.jaas.config: expected '<LoginModule class> required"),
        (
            "org.apache.kafka.common.security.plain.PlainLoginModule required "
            'username="a" password="b"; other.Module required x="y";',
            "sasl.jaas.config: only one login module is supported",
        ),
        (
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
            "sasl.jaas.config: OAuthBearerLoginModule is not supported",
        ),
        ("com.example.Custom required;", "sasl.jaas.config: login module com.example.Custom"),
    ],
)
def test_bad_jaas(value: str, message: str) -> None:
    with pytest.raises(InputError) as raised:
        mapped(f"security.protocol=SASL_SSL\nsasl.jaas.config={value}\n")
    assert str(raised.value).startswith(f"f:2: {message}")


def test_jaas_errors_do_not_show_the_password() -> None:
    secret = "s3cr3t-value"
    with pytest.raises(InputError) as raised:
        mapped(
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="a" password={secret}" ;\n'
        )
    assert secret not in str(raised.value)


def test_jaas_and_explicit_credentials_must_agree() -> None:
    jaas = (
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="alice" password="pw";\n'
    )
    assert mapped("sasl.username=alice\n" + jaas)["sasl.password"] == "pw"
    with pytest.raises(
        InputError, match=re.escape("f:2: sasl.jaas.config: disagrees with sasl.username")
    ):
        mapped("sasl.username=bob\n" + jaas)


def test_java_trust_store_is_a_clear_error() -> None:
    with pytest.raises(InputError) as raised:
        mapped("security.protocol=SSL\n# trust\nssl.truststore.location=/etc/ts.jks\n")
    message = str(raised.value)
    assert message.startswith("f:3: ssl.truststore.location is not supported: ")
    assert "ssl.ca.location" in message


def test_trust_store_password_alone_is_an_error() -> None:
    with pytest.raises(
        InputError, match=re.escape("f:1: ssl.truststore.password is not supported")
    ):
        mapped("ssl.truststore.password=changeit\n")


def test_pem_trust_store_is_a_ca_file() -> None:
    text = (
        "ssl.truststore.type=PEM\n"
        "ssl.truststore.location=/etc/ca.pem\n"
        "ssl.truststore.password=ignored\n"
    )
    assert mapped(text) == {"ssl.ca.location": "/etc/ca.pem"}


def test_pem_certificates_inline() -> None:
    text = (
        "ssl.keystore.type=PEM\n"
        "ssl.keystore.certificate.chain=-----BEGIN CERTIFICATE-----\n"
        "ssl.keystore.key=-----BEGIN PRIVATE KEY-----\n"
        "ssl.truststore.certificates=-----BEGIN CERTIFICATE-----\n"
    )
    assert mapped(text) == {
        "ssl.certificate.pem": "-----BEGIN CERTIFICATE-----",
        "ssl.key.pem": "-----BEGIN PRIVATE KEY-----",
        "ssl.ca.pem": "-----BEGIN CERTIFICATE-----",
    }


def test_jks_key_store_is_an_error() -> None:
    with pytest.raises(
        InputError, match=re.escape("f:2: ssl.keystore.type=JKS: librdkafka reads PKCS12")
    ):
        mapped("ssl.keystore.location=/etc/ks.jks\nssl.keystore.type=JKS\n")


def test_pkcs12_key_store_passes() -> None:
    text = "ssl.keystore.type=PKCS12\nssl.keystore.location=/k.p12\nssl.keystore.password=x\n"
    assert mapped(text) == {"ssl.keystore.location": "/k.p12", "ssl.keystore.password": "x"}


def test_pem_key_store_location_is_an_error() -> None:
    with pytest.raises(
        InputError, match=re.escape("f:2: ssl.keystore.location with ssl.keystore.type=PEM")
    ):
        mapped("ssl.keystore.type=PEM\nssl.keystore.location=/k.pem\n")


@pytest.mark.parametrize(("java", "librdkafka"), [("", "none"), ("HTTPS", "https")])
def test_endpoint_identification(java: str, librdkafka: str) -> None:
    assert mapped(f"ssl.endpoint.identification.algorithm={java}\n") == {
        "ssl.endpoint.identification.algorithm": librdkafka
    }


def test_java_only_settings_are_dropped(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="lagassign.kafka.config"):
        got = mapped(
            "ssl.protocol=TLSv1.3\nssl.enabled.protocols=TLSv1.3\n"
            "default.api.timeout.ms=60000\nrequest.timeout.ms=30000\nclient.id=x\n"
        )
    assert got == {"client.id": "x"}
    assert "f:1: ssl.protocol has no librdkafka counterpart; ignored" in caplog.text


@pytest.mark.parametrize(
    "key",
    [
        "sasl.login.callback.handler.class",
        "sasl.client.callback.handler.class",
        "sasl.login.class",
        "ssl.engine.factory.class",
    ],
)
def test_java_classes_are_errors(key: str) -> None:
    with pytest.raises(InputError, match=f"^f:1: {key} is not supported"):
        mapped(f"{key}=com.example.Handler\n")


def test_load_client_config_and_merge(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "bootstrap.servers=from-file:9092\nsecurity.protocol=SASL_PLAINTEXT\n"
        "sasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain."
        'PlainLoginModule required username="u" password="p";\n',
    )
    config = load_client_config(path)
    assert config == {
        "bootstrap.servers": "from-file:9092",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "u",
        "sasl.password": "p",
    }
    assert merge(config, "cli:9092")["bootstrap.servers"] == "cli:9092"
    assert merge(config, None)["bootstrap.servers"] == "from-file:9092"


def test_mapped_config_is_accepted_by_librdkafka(tmp_path: Path) -> None:
    """librdkafka takes the mapped properties (creating a client does not connect)."""
    from lagassign.kafka.offsets import OffsetsReader

    path = write(
        tmp_path,
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="u" password="p";\nssl.endpoint.identification.algorithm=\n'
        "ssl.protocol=TLSv1.2\nclient.id=ops\n",
    )
    config = merge(load_client_config(path), "127.0.0.1:9")
    OffsetsReader(config, timeout=1).close()


def test_lines_end_where_java_ends_them() -> None:
    """Java's Properties.load ends lines at \\r, \\n and \\r\\n only: a form feed, U+0085 or
    U+2028 stays inside the value (str.splitlines split there, and the rest of the value
    became a property of its own)."""
    text = "a=x\u2028y\x85z\nb=1\x0c2\r\nc=3\rd=4\n"
    assert [(p.key, p.value, p.line) for p in parse_properties(text, "f")] == [
        ("a", "x\u2028y\x85z", 1),
        ("b", "1\x0c2", 2),
        ("c", "3", 3),
        ("d", "4", 4),
    ]
