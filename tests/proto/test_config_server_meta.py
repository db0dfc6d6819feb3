"""Per-server ``request_meta=`` and ``extensions=`` (§E3; LIFE-12, LIFE-13, CACHE-7):
the config builders, raw dicts and ``mcpServers`` entries take them, validated with a
typed error; the connection lays the server's own over the client's on every
2026-07-28 request; the result cache keys on them. Every request validates against the
2026-07-28 schema (the ``Modern`` harness).
"""

from __future__ import annotations

from typing import Any

import pytest
from _client_modern import Peer, make
from _machine_driver import result
from _proto_support import drive
from test_connection_modern import discover_result, harness, open_probe

from mcp_proto.client import ClientCore, ServerEntry
from mcp_proto.client.era import key_params
from mcp_proto.config import (
    REDACTED,
    config_from_dict,
    http_config,
    parse_server_definitions,
    redact_config,
    sse_config,
    stdio_config,
    streamable_http_config,
)
from mcp_proto.errors import ValidationError
from mcp_proto.handlers import Handlers
from mcp_proto.modern.meta import CLIENT_CAPABILITIES, merge_host_meta
from mcp_proto.server_config import ServerConfig

TENANT = "com.example/tenant"
TASKS = "io.modelcontextprotocol/tasks"


def builders() -> list[Any]:
    return [
        lambda **kw: stdio_config(["srv"], **kw),
        lambda **kw: http_config("https://h.example/rpc", **kw),
        lambda **kw: streamable_http_config("https://h.example/mcp", **kw),
    ]


@pytest.mark.parametrize("build", builders())
def test_the_builders_take_both_and_copy_the_mapping(build: Any) -> None:
    given = {TENANT: "t1", "com.example/nested": {"a": [1]}}
    config = build(request_meta=given, extensions=[TASKS])
    given[TENANT] = "changed"
    given["com.example/nested"]["a"].append(2)
    assert config.request_meta == {TENANT: "t1", "com.example/nested": {"a": [1]}}
    assert config.extensions == {TASKS: {}}
    fn = lambda: {TENANT: "x"}  # noqa: E731
    assert build(request_meta=fn).request_meta is fn  # called per request, not now
    assert build().request_meta is None and build().extensions == {}


@pytest.mark.parametrize("build", builders())
@pytest.mark.parametrize(
    ("option", "value", "needle"),
    [
        ("request_meta", "tenant=t1", "request_meta must be a mapping"),
        ("request_meta", {TENANT: object()}, "not JSON data"),
        ("request_meta", {1: "x"}, "non-string key"),
        ("extensions", "io.modelcontextprotocol/tasks", "not the string"),
        ("extensions", ["tasks"], "prefix/name"),
        ("extensions", {TASKS: "on"}, "must be an object"),
    ],
)
def test_bad_values_are_a_typed_error(build: Any, option: str, value: Any, needle: str) -> None:
    with pytest.raises(ValidationError, match=needle):
        build(**{option: value})


def test_sse_has_neither() -> None:
    with pytest.raises(ValueError, match="do not apply to HTTP\\+SSE"):
        ServerConfig(type="sse", url="https://h.example/sse", request_meta={TENANT: "t"})
    with pytest.raises(ValueError, match="do not apply to HTTP\\+SSE"):
        ServerConfig(type="sse", url="https://h.example/sse", extensions=[TASKS])
    assert sse_config("https://h.example/sse").extensions == {}
    with pytest.raises(ValueError, match="do not apply to sse"):
        config_from_dict({"type": "sse", "url": "https://h/sse", "extensions": [TASKS]})


def test_raw_dicts_and_mcp_servers_entries_take_both() -> None:
    config = config_from_dict(
        {"command": "srv", "request_meta": {TENANT: "t1"}, "extensions": {TASKS: {"v": 1}}}
    )
    assert (config.request_meta, config.extensions) == ({TENANT: "t1"}, {TASKS: {"v": 1}})
    configs, warnings = parse_server_definitions(
        {
            "mcpServers": {
                "good": {
                    "type": "http",
                    "url": "https://h.example/mcp",
                    "request_meta": {TENANT: "t2"},
                },
                "bad": {"type": "stdio", "command": "srv", "extensions": ["no-prefix"]},
                "old": {"type": "sse", "url": "https://h/sse", "request_meta": {TENANT: "t3"}},
            }
        }
    )
    assert [(c.name, c.request_meta) for c in configs] == [("good", {TENANT: "t2"})]
    assert len(warnings) == 2
    assert any("bad" in w and "prefix/name" in w for w in warnings)
    assert any("old" in w and "do not apply to sse" in w for w in warnings)


def test_request_meta_is_redacted_in_logs() -> None:
    config = stdio_config(["srv"], request_meta={TENANT: "secret-tenant"})
    shown = redact_config(config)
    assert shown["request_meta"] == {TENANT: REDACTED}
    assert "secret-tenant" not in repr(config)


def test_merge_lays_the_server_over_the_client() -> None:
    assert merge_host_meta({"a": 1}, None) == {"a": 1}
    assert merge_host_meta(None, {"a": 1}) == {"a": 1}
    calls: list[str] = []

    def client() -> dict[str, Any]:
        calls.append("client")
        return {"a": 1, "b": 1}

    merged = merge_host_meta(client, {"b": 2})
    assert callable(merged) and merged() == {"a": 1, "b": 2} and calls == ["client"]
    with pytest.raises(ValidationError):
        merge_host_meta(lambda: ["no"], {"b": 2})()  # type: ignore[operator,misc]


# ------------------------------------------------------------------ the connection


def test_every_modern_request_carries_the_servers_own_meta_and_extensions() -> None:
    h = harness(
        options={"request_meta": {TENANT: "client", "com.example/a": 1}, "extensions": [TASKS]},
        request_meta={TENANT: "server"},
        extensions={"com.example/x": {"on": True}},
    )
    probe = open_probe(h)  # validated against the 2026-07-28 schema
    h.feed(discover_result(probe["id"]))
    h.conn.start_call("tools/list", now=h.now)
    (listed,) = h.written()
    for sent in (probe, listed):
        meta = sent["params"]["_meta"]
        assert (meta[TENANT], meta["com.example/a"]) == ("server", 1)
        assert meta[CLIENT_CAPABILITIES]["extensions"] == {
            TASKS: {},
            "com.example/x": {"on": True},
        }
    h.feed(result(listed["id"], {"tools": []}))


def test_a_server_without_its_own_sends_the_clients_alone() -> None:
    h = harness(options={"request_meta": {TENANT: "client"}})
    probe = open_probe(h)
    assert probe["params"]["_meta"][TENANT] == "client"
    assert "extensions" not in probe["params"]["_meta"][CLIENT_CAPABILITIES]


# ------------------------------------------------------------------ the result cache


def test_the_cache_keys_on_the_servers_own_meta() -> None:
    page = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}], "ttlMs": 60_000}
    _, d = make({"a": Peer(script={"tools/list": page}), "b": Peer(script={"tools/list": page})})
    entries = [
        ServerEntry("a", "http", request_meta={TENANT: "one"}, extensions={TASKS: {}}),
        ServerEntry("b", "http", request_meta=lambda: {TENANT: "two"}),
    ]
    core = ClientCore(entries, handlers=Handlers(), clock=d.clock, sleep=d.sleep)
    d.core = core
    # CACHE-7: the server's own meta and extensions are part of the key.
    key = key_params(core, "a", None)["_meta"]
    assert key[TENANT] == "one" and key[CLIENT_CAPABILITIES]["extensions"] == {TASKS: {}}
    drive(core.list_tools(server="a"), d.perform)
    drive(core.list_tools(server="a"), d.perform)
    assert [c.server for c in d.sent("tools/list")] == ["a"]  # fresh: served again
    # A callable cannot be known before the request is built: no reuse (CACHE-9).
    drive(core.list_tools(server="b"), d.perform)
    drive(core.list_tools(server="b"), d.perform)
    assert [c.server for c in d.sent("tools/list")] == ["a", "b", "b"]
