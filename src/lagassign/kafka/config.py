"""Kafka client properties files (``--command-config``) -> librdkafka client properties.

The file is read the way Kafka's own tools read it (:mod:`lagassign.formats.client_properties`).
Then the Java client's property names that librdkafka spells differently, or does not have,
are mapped (:func:`to_librdkafka`); docs/kafka.md lists every mapping.

Bad input raises :class:`~lagassign.formats.errors.InputError` naming ``file:line``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from pathlib import Path

from lagassign.formats.client_properties import Property, read_properties
from lagassign.formats.errors import InputError

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------------
# Java client names -> librdkafka

#: Java-only settings that name Java machinery librdkafka cannot use: an error, with the way out
UNSUPPORTED = {
    "ssl.truststore.location": "librdkafka cannot read Java trust stores (JKS/PKCS12); export "
    "the CA certificates to a PEM file and set ssl.ca.location (or ssl.truststore.type=PEM)",
    "ssl.truststore.password": "librdkafka cannot read Java trust stores; export the CA "
    "certificates to a PEM file and set ssl.ca.location instead of the trust store",
    "sasl.login.callback.handler.class": "Java callback classes cannot run in librdkafka",
    "sasl.client.callback.handler.class": "Java callback classes cannot run in librdkafka",
    "sasl.login.class": "Java login classes cannot run in librdkafka",
    "ssl.engine.factory.class": "Java SSL engine factories cannot run in librdkafka",
}

#: Java client settings with no librdkafka counterpart and no effect on what is read: dropped
IGNORED = frozenset(
    {
        "ssl.protocol",
        "ssl.enabled.protocols",
        "ssl.keymanager.algorithm",
        "ssl.trustmanager.algorithm",
        "ssl.secure.random.implementation",
        "ssl.provider",
        "ssl.truststore.type",
        "ssl.keystore.type",
        "default.api.timeout.ms",
        "request.timeout.ms",
        "retries",
        "key.deserializer",
        "value.deserializer",
        "key.serializer",
        "value.serializer",
        "exclude.internal.topics",
        "sasl.login.refresh.window.factor",
        "sasl.login.refresh.window.jitter",
        "sasl.login.refresh.min.period.seconds",
        "sasl.login.refresh.buffer.seconds",
    }
)

#: the same setting under another name
RENAMED = {
    "ssl.keystore.key": "ssl.key.pem",
    "ssl.keystore.certificate.chain": "ssl.certificate.pem",
    "ssl.truststore.certificates": "ssl.ca.pem",
}

_JAAS_MODULE = re.compile(r"^\s*([\w.$]+)\s+(required|requisite|sufficient|optional)\b(.*)$", re.S)
_JAAS_OPTION = re.compile(r'\s*([\w.$-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([^\s;"\']+))')

_PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
_SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
_KERBEROS = "com.sun.security.auth.module.Krb5LoginModule"
_OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"


def parse_jaas(text: str, place: str) -> tuple[str, dict[str, str]]:
    """(login module class, options) of a one-module ``sasl.jaas.config`` value."""
    body = text.strip()
    if not body.endswith(";"):
        raise InputError(place, "sasl.jaas.config: must end with ';'")
    body = body[:-1]
    match = _JAAS_MODULE.match(body)
    if match is None:
        raise InputError(
            place, "sasl.jaas.config: expected '<LoginModule class> required key=\"value\" ...;'"
        )
    module, _flag, rest = match.groups()
    options: dict[str, str] = {}
    pos = 0
    while rest[pos:].strip():
        if rest[pos:].lstrip().startswith(";"):
            raise InputError(place, "sasl.jaas.config: only one login module is supported")
        opt = _JAAS_OPTION.match(rest, pos)
        if opt is None:
            # the value may hold a password: say where, not what
            raise InputError(
                place,
                f"sasl.jaas.config: cannot read option {len(options) + 1} of {module} "
                '(expected key="value")',
            )
        name, double_quoted, single_quoted, bare = opt.groups()
        if double_quoted is not None:
            options[name] = re.sub(r"\\(.)", r"\1", double_quoted)
        else:
            options[name] = single_quoted if single_quoted is not None else bare
        pos = opt.end()
    return module, options


def _jaas_to_librdkafka(text: str, place: str) -> dict[str, str]:
    module, options = parse_jaas(text, place)
    if module in (_PLAIN, _SCRAM):
        missing = [k for k in ("username", "password") if k not in options]
        if missing:
            raise InputError(place, f"sasl.jaas.config: {module} needs {' and '.join(missing)}")
        return {"sasl.username": options["username"], "sasl.password": options["password"]}
    if module == _KERBEROS:
        out = {}
        if "keyTab" in options:
            out["sasl.kerberos.keytab"] = options["keyTab"]
        if "principal" in options:
            out["sasl.kerberos.principal"] = options["principal"]
        return out
    if module == _OAUTH:
        raise InputError(
            place,
            "sasl.jaas.config: OAuthBearerLoginModule is not supported; set librdkafka's "
            "sasl.oauthbearer.method=oidc and sasl.oauthbearer.client.id/.client.secret/"
            ".token.endpoint.url instead",
        )
    raise InputError(place, f"sasl.jaas.config: login module {module} is not supported")


def to_librdkafka(props: list[Property], source: str) -> dict[str, str]:
    """Maps Java client properties to librdkafka's. Later repeats of a key win, as in Java.

    Names librdkafka shares with the Java client pass through unchanged, and so do names this
    mapping does not know: librdkafka rejects those itself when the client is created.
    """
    last = {p.key: p for p in props}

    def where(key: str) -> str:
        return f"{source}:{last[key].line}"

    def setting(key: str) -> str:
        return last[key].value.strip().upper() if key in last else ""

    truststore_type, keystore_type = setting("ssl.truststore.type"), setting("ssl.keystore.type")
    if keystore_type not in ("", "PKCS12", "PEM"):
        raise InputError(
            where("ssl.keystore.type"),
            f"ssl.keystore.type={last['ssl.keystore.type'].value}: librdkafka reads PKCS12 key "
            "stores (ssl.keystore.location) or PEM (ssl.certificate.location, ssl.key.location); "
            "convert the key store with keytool -importkeystore -deststoretype PKCS12",
        )
    if keystore_type == "PEM" and "ssl.keystore.location" in last:
        raise InputError(
            where("ssl.keystore.location"),
            "ssl.keystore.location with ssl.keystore.type=PEM: librdkafka reads PEM key pairs "
            "from ssl.certificate.location and ssl.key.location",
        )

    out: dict[str, str] = {}
    for key, p in last.items():
        value = p.value
        if key == "sasl.jaas.config":
            for k, v in _jaas_to_librdkafka(value, where(key)).items():
                if k in last and last[k].value != v:
                    raise InputError(
                        where(key), f"sasl.jaas.config: disagrees with {k} on line {last[k].line}"
                    )
                out[k] = v
        elif truststore_type == "PEM" and key == "ssl.truststore.location":
            out["ssl.ca.location"] = value  # a PEM trust store is a CA file
        elif truststore_type == "PEM" and key == "ssl.truststore.password":
            log.info("%s: ssl.truststore.password of a PEM trust store ignored", where(key))
        elif key in UNSUPPORTED:
            raise InputError(where(key), f"{key} is not supported: {UNSUPPORTED[key]}")
        elif key in IGNORED:
            log.info("%s: %s has no librdkafka counterpart; ignored", where(key), key)
        elif key == "ssl.endpoint.identification.algorithm":
            # Java turns host name verification off with an empty value, librdkafka with "none"
            out[key] = value.strip().lower() or "none"
        else:
            out[RENAMED.get(key, key)] = value
    return out


def load_client_config(path: str | Path) -> dict[str, str]:
    """A ``--command-config`` file as librdkafka client properties."""
    return to_librdkafka(read_properties(path), str(path))


def merge(config: Mapping[str, str], bootstrap_servers: str | None) -> dict[str, str]:
    """``config`` with ``bootstrap.servers`` set from the command line, which wins (as in
    Kafka's tools)."""
    out = dict(config)
    if bootstrap_servers:
        out["bootstrap.servers"] = bootstrap_servers
    return out


def client_config(bootstrap_server: str, command_config: str | None) -> dict[str, str]:
    """The client properties for ``--bootstrap-server`` and ``--command-config``."""
    base = load_client_config(command_config) if command_config else {}
    return merge(base, bootstrap_server)
