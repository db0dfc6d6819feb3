"""CACHE-3 over both shells: a stale list is served (with a warning) when its refetch
fails *transiently* over HTTP (a 503), and never over stdio, where the failure is the
server's own JSON-RPC answer and reaches the caller.

Scripted modern peer (``tests/servers/hostile_modern.py``, mode ``refetch_503``):
``tools/list`` answers ``ttlMs: 0`` (stale at once), then fails every refetch: HTTP
503, or -32603 on stdio. Every request it received validates against the 2026-07-28
schema.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_proto.errors import ServerError

from ._http_support import HTTP_READ_TIMEOUT
from .conftest import SERVERS, Shell, text_of

if str(SERVERS) not in sys.path:
    sys.path.insert(0, str(SERVERS))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proto" / "modern"))

import hostile_modern
from _modern_wire import REQUEST_DEFS, assert_valid_request, request


def check(received: list[dict[str, Any]]) -> list[str]:
    for i, got in enumerate(received):
        if got["method"] in REQUEST_DEFS:
            assert_valid_request(request(got["method"], got["params"], i + 1))
    return [got["method"] for got in received]


def test_a_transient_http_failure_serves_the_stale_list(shell: Shell) -> None:
    url, stop, peer = hostile_modern.start_http("refetch_503")

    async def scenario(c: Any) -> None:
        first = [t.name for t in await c.list_tools()]
        assert first[:2] == ["t", "h"]
        assert [t.name for t in await c.list_tools()] == first  # refetch 503: stale served
        info = c.servers[0].cache_info("tools")
        assert (info.ttl_ms, info.fresh) == (0, False)

    try:
        shell.run(scenario, url, protocol="modern", read_timeout=HTTP_READ_TIMEOUT, retries=0)
    finally:
        stop()
    assert check(peer.received).count("tools/list") == 2
    assert any("past its freshness" in m for m in shell.log.messages())


def test_stdio_never_serves_stale(shell: Shell) -> None:
    received: list[Any] = []

    async def scenario(c: Any) -> None:
        await c.list_tools()
        with pytest.raises(ServerError) as info:
            await c.list_tools()
        assert info.value.code == -32603
        received.extend(json.loads(text_of(await c.call_tool("received"))))

    argv = [sys.executable, str(SERVERS / "hostile_modern.py"), "refetch_503"]
    shell.run(scenario, argv, protocol="modern")
    assert check(received).count("tools/list") == 2
    assert not any("past its freshness" in m for m in shell.log.messages())
