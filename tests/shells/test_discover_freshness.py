"""LIFE-20 / CACHE-13 / CAP-6 over both shells: a 2026-07-28 server's
``server/discover`` result is re-fetched once its ``ttlMs`` has elapsed, before the
next capability judgement, on stdio and Streamable HTTP; calls the server judges
itself (``tools/call``) add no discover round trip, whatever the ``ttlMs``.

Counted on the server: the scripted modern peer (``tests/servers/hostile_modern.py``;
its ``ttl_missing`` mode answers discover without ``ttlMs``, i.e. stale at once) lists
the requests it received (the ``received`` tool on stdio, ``peer.received`` over HTTP).
Real peer: the SDK server forced modern answers discover with ``ttlMs`` 0 (counted on
the client's request log). Every request sent validates against the 2026-07-28 schema.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._http_support import HTTP_READ_TIMEOUT, PeerPool, requests_logged
from .conftest import SDK_SERVER, SERVERS, Shell, text_of

if str(SERVERS) not in sys.path:
    sys.path.insert(0, str(SERVERS))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proto" / "modern"))

import hostile_modern
from _modern_wire import REQUEST_DEFS, assert_valid_request, request

HOSTILE_MODERN = [sys.executable, str(SERVERS / "hostile_modern.py")]


@pytest.fixture(scope="module")
def peers() -> Iterator[PeerPool]:
    pool = PeerPool()
    try:
        yield pool
    finally:
        pool.close()


def check_wire(received: list[dict[str, Any]]) -> list[str]:
    """Validate every request the peer received; return their methods in order."""
    for i, got in enumerate(received):
        if got["method"] in REQUEST_DEFS:
            assert_valid_request(request(got["method"], got["params"], i + 1))
    return [got["method"] for got in received]


def run_scenario(shell: Shell, transport: str, modes: str, scenario: Any) -> list[str]:
    """Run ``scenario`` against the scripted peer; the methods it received."""
    if transport == "http":
        url, stop, peer = hostile_modern.start_http(modes)
        try:
            shell.run(scenario, url, protocol="modern", read_timeout=HTTP_READ_TIMEOUT)
        finally:
            stop()
        return check_wire(peer.received)
    seen: list[list[dict[str, Any]]] = []

    async def with_received(c: Any) -> None:
        await scenario(c)
        seen.append(json.loads(text_of(await c.call_tool("received"))))

    shell.run(with_received, [*HOSTILE_MODERN, modes], protocol="modern")
    return check_wire(seen[0])


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_stale_discover_is_refetched_before_judging_capabilities(
    shell: Shell, transport: str
) -> None:
    async def scenario(c: Any) -> None:
        await c.list_tools()  # "tools" declared? the probe's result is already stale
        await c.list_tools()
        await c.call_tool("t")  # judged by the server: no discover first
        await c.call_tool("t")

    methods = run_scenario(shell, transport, "ttl_missing", scenario)
    assert methods == [
        "server/discover",  # the probe
        "server/discover",
        "tools/list",
        "server/discover",
        "tools/list",
        "tools/call",
        "tools/call",
    ]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_fresh_discover_is_not_refetched(shell: Shell, transport: str) -> None:
    async def scenario(c: Any) -> None:
        await c.list_tools(cache=False)
        await c.list_tools(cache=False)
        await c.call_tool("t")

    methods = run_scenario(shell, transport, "baseline", scenario)  # ttlMs 60000
    assert methods == ["server/discover", "tools/list", "tools/list", "tools/call"]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_sdk_server_refetches_its_zero_ttl_discover(
    shell: Shell, peers: PeerPool, transport: str
) -> None:
    target = SDK_SERVER if transport == "stdio" else peers.sdk("streamable-http").url

    async def scenario(c: Any) -> None:
        server = c.servers[0]
        assert server.is_modern
        await c.list_tools()
        # The log shows the client's requests, not the connection's probe: one re-fetch.
        assert requests_logged(shell, "server/discover") == 1
        await c.call_tool("echo", {"text": "hi"})
        await c.call_tool("echo", {"text": "hi"})
        assert requests_logged(shell, "server/discover") == 1
        await c.list_prompts()
        assert requests_logged(shell, "server/discover") == 2
        info = server.cache_info("discover")
        assert (info.ttl_ms, info.fresh) == (0, False)
        assert server.has_capability("tools")

    shell.run(scenario, target, protocol="modern", read_timeout=HTTP_READ_TIMEOUT)
