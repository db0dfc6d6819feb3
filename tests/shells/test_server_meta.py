"""Per-server ``request_meta=`` and ``extensions=`` (§E3, LIFE-12, LIFE-13) over both
shells: a server configured with its own (config builder, or a raw ``mcpServers``
entry) gets them laid over the client's on every 2026-07-28 request; another server of
the same client gets the client's alone.

Scripted modern peer (``tests/servers/hostile_modern.py``): over Streamable HTTP it
records every request with its ``_meta``; over stdio its ``received`` tool lists them.
Every request it received validates against the 2026-07-28 schema.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mcp_proto.config import streamable_http_config
from mcp_proto.modern.meta import CLIENT_CAPABILITIES

from ._http_support import HTTP_READ_TIMEOUT
from .conftest import SERVERS, Shell, text_of

if str(SERVERS) not in sys.path:
    sys.path.insert(0, str(SERVERS))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proto" / "modern"))

import hostile_modern
from _modern_wire import REQUEST_DEFS, assert_valid_request, request

TENANT = "com.example/tenant"
TASKS = "io.modelcontextprotocol/tasks"


def check(received: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for i, got in enumerate(received):
        if got["method"] in REQUEST_DEFS:
            assert_valid_request(request(got["method"], got["params"], i + 1))
    return [got["params"]["_meta"] for got in received]


def test_each_server_gets_its_own_meta_over_the_clients(shell: Shell) -> None:
    url_a, stop_a, peer_a = hostile_modern.start_http("baseline")
    url_b, stop_b, peer_b = hostile_modern.start_http("baseline")
    stdio_seen: list[Any] = []

    async def scenario(c: Any) -> None:
        for name in ("a", "b", "c"):
            await c.call_tool("t", server=name)
        stdio_seen.extend(json.loads(text_of(await c.call_tool("received", server="c"))))

    configs = [
        streamable_http_config(
            url_a,
            name="a",
            protocol="modern",
            read_timeout=HTTP_READ_TIMEOUT,
            request_meta={TENANT: "for-a", "com.example/only-a": True},
            extensions=[TASKS],
        ),
        streamable_http_config(url_b, name="b", protocol="modern", read_timeout=HTTP_READ_TIMEOUT),
        {
            "name": "c",
            "command": [*hostile_modern_argv(), "baseline"],
            "protocol": "modern",
            "request_meta": {TENANT: "for-c"},
            "extensions": {"com.example/x": {"level": 2}},
        },
    ]
    try:
        shell.run_client(scenario, configs, request_meta={TENANT: "client", "com.example/all": 1})
    finally:
        stop_a()
        stop_b()
    for metas, tenant, extensions in (
        (check(peer_a.received), "for-a", {TASKS: {}}),
        (check(peer_b.received), "client", None),
        (check(stdio_seen), "for-c", {"com.example/x": {"level": 2}}),
    ):
        assert metas  # the probe and the calls
        for meta in metas:
            assert meta[TENANT] == tenant and meta["com.example/all"] == 1
            assert meta[CLIENT_CAPABILITIES].get("extensions") == extensions
    assert all(m.get("com.example/only-a") is True for m in check(peer_a.received))
    assert not any("com.example/only-a" in m for m in check(peer_b.received))


def hostile_modern_argv() -> list[str]:
    return [sys.executable, str(SERVERS / "hostile_modern.py")]
