"""Fuzz target: server definition files and their redaction (``mcp_proto.config``).

Feeds, structure-aware: an ``mcpServers`` document (or a bare list, or one server
object) built from the keys the common hosts write (``type`` in every spelling,
``command``/``args``/``env``, ``url``/``headers``, timeouts, ``disabled``...) with
boundary values (400-digit numbers, NaN-like floats, wrong types). JSON text is used as
the document directly.

Contract: ``parse_server_definitions`` returns ``(configs, warnings)`` or raises
``ValueError`` (the documented "not a definition document"); ``redact_config`` of a mapping
or a parsed ``ServerConfig`` returns a dict in which every value under a sensitive key
is ``"[REDACTED]"`` (or ``None``, or a mapping of redacted values), and of anything
else raises ``TypeError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from _fuzzlib import Reader, Target, json_input, json_value

from mcp_proto.config import REDACTED, ServerConfig, parse_server_definitions, redact_config

KEYS = (
    "mcpServers",
    "type",
    "transport",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "serverUrl",
    "endpoint",
    "headers",
    "Authorization",
    "token",
    "access_token",
    "api-key",
    "API_KEY",
    "password",
    "client_secret",
    "auth",
    "read_timeout",
    "discover_timeout",
    "retry_backoff",
    "retries",
    "ping",
    "timeout",
    "disabled",
    "comment",
    "description",
    "name",
    "max_line_size",
)
STRINGS = (
    "stdio",
    "http",
    "sse",
    "streamable-http",
    "streamable_http",
    "streamableHttp",
    "plain_http",
    "websocket",
    "python",
    "npx",
    "-y",
    "http://127.0.0.1:8000/mcp",
    "https://example.com/",
    "http://[::1",
    "http://h:99999/",
    "/rpc",
    "//evil/x",
    "Bearer s3cr3t",
    "a b",
    "\r\n",
    1e-9,
    float(10**20),
    10**400,
    -(10**400),
    1.7976931348623157e308,
)
_SENSITIVE = {
    "headers",
    "env",
    "token",
    "accesstoken",
    "apikey",
    "auth",
    "authorization",
    "password",
    "secret",
    "clientsecret",
    "oauthprovider",
}


def _document(reader: Reader) -> Any:
    shape = reader.below(4)
    server = lambda: json_value(reader, KEYS, STRINGS, max_depth=3)  # noqa: E731
    if shape == 0:
        return {"mcpServers": {reader.text(6) or "s": server() for _ in range(reader.below(4))}}
    if shape == 1:
        return {"mcpServers": [server() for _ in range(reader.below(4))]}
    if shape == 2:
        return [server() for _ in range(reader.below(3))]
    return json_value(reader, KEYS, STRINGS)


def _check_redacted(value: Any) -> None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            normal = key.lower().replace("_", "").replace("-", "") if isinstance(key, str) else ""
            if normal in _SENSITIVE and item is not None:
                if isinstance(item, Mapping):
                    assert all(v == REDACTED for v in item.values()), key
                else:
                    assert item == REDACTED, key
            else:
                _check_redacted(item)
    elif isinstance(value, list):
        for item in value:
            _check_redacted(item)


def check(data: bytes) -> None:
    document = json_input(data, _document)
    try:
        configs, warnings = parse_server_definitions(document)
    except ValueError as exc:
        assert str(exc)
        configs, warnings = [], []
    assert all(isinstance(w, str) for w in warnings)
    for config in configs:
        assert isinstance(config, ServerConfig)
        _check_redacted(redact_config(config))
    try:
        redacted = redact_config(document)
    except TypeError:
        assert not isinstance(document, Mapping)
        return
    assert isinstance(document, Mapping) and isinstance(redacted, dict)
    _check_redacted(redacted)


TARGET = Target(
    name="config",
    description="mcpServers document -> parse_server_definitions, redact_config",
    check=check,
    seeds=(
        b'{"mcpServers":{"time":{"command":"uvx","args":["mcp-server-time"]},'
        b'"web":{"type":"http","url":"http://127.0.0.1:8000/mcp",'
        b'"headers":{"Authorization":"Bearer s3cr3t"}}}}',
        b'[{"type":"sse","url":"http://127.0.0.1:9/sse","env":{"K":"v"},"disabled":true}]',
        b'{"command":"npx","args":["-y","@modelcontextprotocol/server-everything"],'
        b'"read_timeout":1e400}',
        b'{"mcpServers":{"a":{"type":"streamableHttp","url":"http://[::1"}}}',
        b"\x00\x03\x01\x05\x13\x02\x07",
    ),
    max_len=4096,
)

if __name__ == "__main__":
    from run import main

    main(["config"])
