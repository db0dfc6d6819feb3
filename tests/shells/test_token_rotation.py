"""A rotated token through the public API of both shells (``client.set_authorization``,
CACHE-6): a *private* cached result asked for under the new ``Authorization`` is a
miss (the server is asked again, and sees the new token), while a *public* one is
still served; every later request carries the new token.

Scripted modern peer over Streamable HTTP (``tests/servers/hostile_modern.py``):
``private_scope`` answers ``cacheScope: "private"`` and names the token it received in
tool ``t``'s description (``for <sha256[:12]>``); ``baseline`` answers public results.
Every request it received validates against the 2026-07-28 schema.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

import pytest

from ._http_support import HTTP_READ_TIMEOUT
from .conftest import SDK_SERVER, SERVERS, Shell

if str(SERVERS) not in sys.path:
    sys.path.insert(0, str(SERVERS))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proto" / "modern"))

import hostile_modern
from _modern_wire import REQUEST_DEFS, assert_valid_request, request


def token_id(value: str) -> str:
    return "for " + hashlib.sha256(value.encode()).hexdigest()[:12]


def run(shell: Shell, mode: str, scenario: Any) -> Any:
    url, stop, peer = hostile_modern.start_http(mode)
    try:
        shell.run(
            scenario,
            url,
            protocol="modern",
            headers={"Authorization": "Bearer one"},
            read_timeout=HTTP_READ_TIMEOUT,
        )
    finally:
        stop()
    for i, got in enumerate(peer.received):
        if got["method"] in REQUEST_DEFS:
            assert_valid_request(request(got["method"], got["params"], i + 1))
    return peer


def description(tools: list[Any]) -> str | None:
    (t,) = [x for x in tools if x.name == "t"]
    return t.description


def test_a_private_entry_is_not_served_under_a_rotated_token(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        assert description(await c.list_tools()) == token_id("Bearer one")
        await c.list_tools()  # fresh, and the same token: no request
        getattr(c, "raw", c).set_authorization("Bearer two")
        assert description(await c.list_tools()) == token_id("Bearer two")
        await c.list_tools()  # fresh under the new token

    peer = run(shell, "private_scope", scenario)
    lists = [r for r in peer.received if r["method"] == "tools/list"]
    assert [r["headers"].get("authorization") for r in lists] == ["Bearer one", "Bearer two"]


def test_a_public_entry_is_still_served_and_the_new_token_is_sent(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        await c.list_tools()
        getattr(c, "raw", c).set_authorization("Bearer two")
        await c.list_tools()  # public: served from the cache
        await c.call_tool("t")

    peer = run(shell, "baseline", scenario)
    assert peer.counts.get("tools/list") == 1
    (call,) = [r for r in peer.received if r["method"] == "tools/call"]
    assert call["headers"].get("authorization") == "Bearer two"


def test_set_authorization_refuses_what_cannot_carry_it(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        client = getattr(c, "raw", c)
        with pytest.raises(ValueError, match="stdio"):
            client.set_authorization("Bearer x")
        with pytest.raises(shell.mod.ServerNotFound):
            client.set_authorization("Bearer x", server="nope")

    shell.run(scenario, SDK_SERVER, protocol="modern")
