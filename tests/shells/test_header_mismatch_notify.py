"""HDR-5 over both shells: the ``tools/list`` refresh after a -32020
``HeaderMismatchError`` emits a synthetic ``notifications/tools/list_changed`` through
the routing of a received one (NOTIF-3: bookkeeping, cache invalidation, listeners,
host callback), so a host's ``on_notification`` callback and the listeners of a
subscription that asked for ``toolsListChanged`` see the refresh; a subscription that
did not ask for it does not.

Scripted peer (``tests/servers/hostile_modern.py`` over Streamable HTTP, where
``x-mcp-header`` applies): -32020 once (the retry succeeds), then twice (it raises).
The peer itself never sends list_changed, so whatever arrives is the client's own.
Every request the peer received validates against the 2026-07-28 schema.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from ._http_support import HTTP_READ_TIMEOUT
from .conftest import SERVERS, Shell, text_of

if str(SERVERS) not in sys.path:
    sys.path.insert(0, str(SERVERS))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proto" / "modern"))

import hostile_modern
from _modern_wire import REQUEST_DEFS, assert_valid_request, request

LIST_CHANGED = "notifications/tools/list_changed"


async def done(value: Any) -> Any:
    if hasattr(value, "__await__"):
        return await value
    return value


@pytest.mark.parametrize("mode", ["mismatch_once", "mismatch_twice"])
def test_the_refresh_after_a_header_mismatch_is_seen_as_list_changed(
    shell: Shell, mode: str
) -> None:
    hosts: list[tuple[str, str]] = []
    heard: list[str] = []
    elsewhere: list[str] = []

    async def scenario(c: Any) -> None:
        c.on_notification(lambda server, method, params: hosts.append((server.name, method)))

        async def listener(method: str, params: dict[str, Any]) -> None:
            heard.append(method)

        async def other(method: str, params: dict[str, Any]) -> None:
            elsewhere.append(method)

        sub = await c.listen({"tools_list_changed": True}, shell.callback(listener))
        prompts = await c.listen({"prompts_list_changed": True}, shell.callback(other))
        await done(sub.wait_acknowledged(10))
        await done(prompts.wait_acknowledged(10))
        await c.list_tools()
        if mode == "mismatch_once":
            assert text_of(await c.call_tool("h", {"region": "eu"})).startswith("ok h")
        else:
            with pytest.raises(shell.mod.HeaderMismatchError):
                await c.call_tool("h", {"region": "eu"})
        assert await shell.wait_for(lambda: bool(hosts) and bool(heard))
        # The refreshed list is fresh again: no other tools/list than the refresh.
        await c.list_tools()
        await done(sub.close())
        await done(prompts.close())
        name = c.servers[0].name
        assert hosts == [(name, LIST_CHANGED)]
        assert heard == [LIST_CHANGED]
        assert elsewhere == []

    url, stop, peer = hostile_modern.start_http(mode)
    try:
        shell.run(scenario, url, protocol="modern", read_timeout=HTTP_READ_TIMEOUT)
    finally:
        stop()
    methods = [r["method"] for r in peer.received]
    assert methods.count("tools/call") == 2
    assert methods.count("tools/list") == 2  # the first listing and the refresh
    for i, got in enumerate(peer.received):
        if got["method"] in REQUEST_DEFS:
            assert_valid_request(request(got["method"], got["params"], i + 1))
