"""Issue 9 items 3 and 4 over both shells: ``connect`` never falls back after an answer
that proves an MCP server is there, and such answers are typed errors built from facts.

The scripted server's ``unauthorized`` mode answers every request with a 401 and a full
Bearer challenge (a protected server reached without a token); ``session_expired``
expires a session with a 404.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_proto import errors

from ._http_support import HTTP_READ_TIMEOUT, hostile_http_server
from .conftest import Shell, text_of

#: Handshake-era behaviour (server requests, sessions, the GET stream, initialize on the
#: wire): pinned to protocol="legacy" (conftest ``Shell.protocol``); the 2026-07-28 era
#: has its own suites (test_modern_*.py, test_dual_era_matrix.py).
PROTOCOL = "legacy"

DEADLINE = 30.0


async def _never(c: Any) -> None:
    raise AssertionError("connected to a server that answers 401 to everything")


@pytest.mark.parametrize("path", ["/", "/nowhere", ""], ids=["root", "path", "no-path"])
def test_401_on_an_ambiguous_url_tries_one_transport(shell: Shell, path: str) -> None:
    # http://127.0.0.1:PORT/ is ambiguous (CONN-6: Streamable HTTP, then SSE, then plain
    # HTTP); the first answer, a 401, proves a server is there and ends the connect.
    with hostile_http_server("unauthorized") as peer:
        url = peer.base + path
        with pytest.raises(errors.UnauthorizedError) as info:
            shell.run(_never, url, read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE)
        sent = [(r.method, r.path) for r in peer.recorder.requests]

    error = info.value
    assert not isinstance(error, errors.AllTransportsFailedError)
    assert isinstance(error, errors.ConnectionError)
    assert sent == [("POST", path or "/")]  # one transport: Streamable HTTP's initialize
    assert error.status == 401
    assert error.resource_metadata == f"{peer.base}/.well-known/oauth-protected-resource"
    assert error.scope == "a b"
    assert error.error == "invalid_token"
    assert str(error) == "Authorization failed: HTTP 401"


@pytest.mark.parametrize("path", ["/mcp", "/sse"])
def test_401_on_a_detected_transport_is_an_unauthorized_error(shell: Shell, path: str) -> None:
    # No fallback chain here (CONN-2/3); the legacy SSE GET's 401 is typed the same way.
    with hostile_http_server("unauthorized") as peer:
        with pytest.raises(errors.UnauthorizedError) as info:
            shell.run(_never, peer.base + path, read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE)
        sent = [(r.method, r.path) for r in peer.recorder.requests]

    assert sent == [("GET" if path == "/sse" else "POST", path)]
    assert (info.value.status, info.value.scope, info.value.error) == (401, "a b", "invalid_token")


def test_404_everywhere_still_falls_back_through_every_transport(shell: Shell) -> None:
    # The other side of the rule: a bare 404 proves nothing, so all three are tried.
    with (
        hostile_http_server("ok") as peer,
        pytest.raises(errors.AllTransportsFailedError) as info,
    ):
        shell.run(_never, peer.base + "/x", read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE)
    assert [kind for kind, _, _ in info.value.attempts] == ["streamable_http", "sse", "http"]


def test_an_expired_session_is_a_session_expired_error(shell: Shell) -> None:
    # tools/call is never re-sent on the new session (RETRY-6): the caller gets the
    # core's SessionExpiredError (as the cause of the ToolCallError naming the server).
    with hostile_http_server("session_expired", expire_on="tools/call") as peer:

        async def scenario(c: Any) -> None:
            await c.list_tools()
            with pytest.raises(errors.ToolCallError) as info:
                await c.call_tool("t")
            cause = info.value.__cause__
            assert type(cause) is errors.SessionExpiredError
            assert "the session expired during tools/call" in str(cause)
            assert text_of(await c.call_tool("t")) == "ok"  # on the new session

        shell.run(scenario, peer.url, read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE)
        assert len(peer.recorder.posts("tools/call")) == 2
        assert len(peer.recorder.sessions) == 2


def test_no_fallback_once_the_server_answered_initialize(shell: Shell) -> None:
    # The server answered initialize (and assigned an Mcp-Session-Id), then refused
    # notifications/initialized with a bare 400. A bare 400 alone would fall back; after
    # an answer to initialize it proves the server is there, so connect stops.
    with hostile_http_server("refuse_after_initialize") as peer:
        with pytest.raises(errors.ServerError) as info:
            shell.run(_never, peer.base + "/", read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE)
        rec = peer.recorder
        initializes = rec.posts("initialize")
        others = [r for r in rec.requests if r.rpc_method != "initialize"]
    assert not isinstance(info.value, errors.AllTransportsFailedError)
    assert str(info.value) == "HTTP 400 from the server"
    assert len(initializes) == 1  # plain HTTP (which would initialize again) never tried
    # Everything else belongs to that one Streamable HTTP session (the initialized
    # notification, its standalone GET stream, the closing DELETE): HTTP+SSE, which
    # would GET without a session id, was never tried.
    assert rec.posts("notifications/initialized")
    assert {r.header("mcp-session-id") for r in others} == {"hs-1"}
