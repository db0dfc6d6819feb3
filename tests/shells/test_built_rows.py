"""Rows that were built but had no test (issue 24, item 10), over both shells:

* HTTP-2: plain HTTP (``transport="http"``) handles its session as Streamable HTTP does
  (SESS-1..3): the ``Mcp-Session-Id`` of the initialize answer is sent, with
  ``MCP-Protocol-Version``, on every later request; a 404 for it starts a new session and
  re-sends the request; ``cleanup`` ends it with ``DELETE``. (SESS-4, resumption, needs an
  event stream, which plain HTTP does not have.) Peer: the scripted hostile server
  (tests/servers/hostile_http.py through ``flex_http_server``), which issues session ids.
* SCH-17: after a -32020 ``HeaderMismatchError``, the refresh and the retry, the result is
  checked against the refreshed tool definition, the one the answered request went out
  under, not the one cached before.
* SCH-20: a refreshed ``inputSchema`` whose dialect is unsupported stops the retry before
  it is sent.
* PROG-3: a progress callback that raises is logged, and neither the call nor the later
  progress callbacks see it (the SDK server of tests/servers/sdk_server.py).

For SCH-17/20 the peer is ``tests/servers/hostile_modern.py`` over Streamable HTTP (the
2026-07-28 revision, where ``x-mcp-header`` applies): no real server answers -32020 and then
lists a different schema, so its tool list is changed here for the refreshed listing.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from ._http_support import HTTP_READ_TIMEOUT, flex_http_server
from .conftest import SDK_SERVER, SERVERS, Shell, text_of

if str(SERVERS) not in sys.path:
    sys.path.insert(0, str(SERVERS))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proto" / "modern"))

import hostile_modern
from _modern_wire import REQUEST_DEFS, assert_valid_request, request

DEADLINE = 60.0


# ---------------------------------------------------------------------- HTTP-2


def test_plain_http_session_is_handled_as_streamable_http_does(shell: Shell) -> None:
    with flex_http_server("session_expired", expire_on="tools/list") as peer:
        rec = peer.recorder

        async def scenario(c: Any) -> None:
            assert c.servers[0].type == "http"
            # SESS expiry: the list answered 404 on hs-1 is re-sent on a new session.
            assert [t.name for t in await c.list_tools()] == ["t"]
            assert text_of(await c.call_tool("t")) == "ok"
            await c.cleanup()  # SESS-3: DELETE with the session id
            assert not c.servers[0].is_connected

        shell.run(
            scenario,
            peer.url,
            transport="http",
            protocol="legacy",
            read_timeout=HTTP_READ_TIMEOUT,
            deadline=DEADLINE,
        )
        assert rec.sessions == ["hs-1", "hs-2"]
        lists = [(p.header("mcp-session-id"), p.status) for p in rec.posts("tools/list")]
        assert lists[:2] == [("hs-1", 404), ("hs-2", 200)]
        assert [(p.header("mcp-session-id"), p.status) for p in rec.posts("tools/call")] == [
            ("hs-2", 200)
        ]
        assert [(d.header("mcp-session-id"), d.status) for d in rec.deletes()] == [("hs-2", 200)]
        # SESS-1/2: after each initialize, every request carries that session's id and the
        # negotiated version; plain HTTP never opens a GET stream nor asks for SSE.
        assert rec.gets() == []
        session = None
        for req in rec.requests:
            assert "text/event-stream" not in (req.header("accept") or ""), req
            if req.rpc_method == "initialize":
                assert req.header("mcp-session-id") is None
                session = {"hs-1": "hs-2", None: "hs-1"}[session]
                continue
            assert req.header("mcp-session-id") == session, req
            assert req.header("mcp-protocol-version") == "2025-11-25", req


# ---------------------------------------------------------------------- SCH-17 / SCH-20

OUTPUT_BEFORE = {
    "type": "object",
    "properties": {"v": {"type": "integer"}},
    "required": ["v"],
}
OUTPUT_AFTER = {
    "type": "object",
    "properties": {"v": {"type": "string"}},
    "required": ["v"],
}


def _refreshing_peer(mode: str, refreshed: dict[str, Any]) -> Any:
    """hostile_modern over HTTP whose tool ``h`` declares ``OUTPUT_BEFORE`` until the
    -32020, then is listed with ``refreshed`` merged in; its calls return
    ``structuredContent {"v": "refreshed"}`` (valid only under ``OUTPUT_AFTER``)."""
    url, stop, peer = hostile_modern.start_http(mode)
    base_tools, base_call = peer.tools, peer._call

    def tools(headers: dict[str, str]) -> list[dict[str, Any]]:
        listed = base_tools(headers)
        for tool in listed:
            if tool["name"] == "h":
                tool["outputSchema"] = OUTPUT_BEFORE
                if peer.mismatches:
                    tool.update(refreshed)
        return listed

    def call(req_id: Any, params: dict[str, Any], n: int) -> list[Any]:
        actions = base_call(req_id, params, n)
        for kind, message in actions:
            if kind == "message" and "result" in message:
                message["result"]["structuredContent"] = {"v": "refreshed"}
        return actions

    peer.tools, peer._call = tools, call
    return url, stop, peer


def _assert_sent_valid(peer: Any) -> None:
    for i, got in enumerate(peer.received):
        if got["method"] in REQUEST_DEFS:
            assert_valid_request(request(got["method"], got["params"], i + 1))


def test_the_result_after_a_header_mismatch_is_checked_against_the_refreshed_tool(
    shell: Shell,
) -> None:
    async def scenario(c: Any) -> None:
        before = {t.name: t for t in await c.list_tools()}
        assert before["h"].output_schema == OUTPUT_BEFORE
        # Strict: checked against the definition cached before the -32020, the result
        # would raise ValidationError ("v" is no integer).
        result = await c.call_tool("h", {"region": "eu"})
        assert result.structured_content == {"v": "refreshed"}
        assert text_of(result).startswith("ok h")
        after = {t.name: t for t in await c.list_tools()}
        assert after["h"].output_schema == OUTPUT_AFTER

    url, stop, peer = _refreshing_peer("mismatch_once", {"outputSchema": OUTPUT_AFTER})
    try:
        shell.run(
            scenario,
            url,
            protocol="modern",
            validate_structured_content="strict",
            read_timeout=HTTP_READ_TIMEOUT,
            deadline=DEADLINE,
        )
    finally:
        stop()
    methods = [r["method"] for r in peer.received]
    assert methods.count("tools/call") == 2  # the -32020 and the retry
    assert methods.count("tools/list") == 2  # the first listing and the refresh
    assert not [m for m in shell.log.messages(logging.WARNING) if "structured output" in m]
    _assert_sent_valid(peer)


def test_a_refreshed_input_schema_in_an_unsupported_dialect_stops_the_retry(
    shell: Shell,
) -> None:
    unreadable = {
        "inputSchema": {
            "$schema": "https://example.com/no-such-dialect",
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Zone"}},
            "required": ["region"],
        }
    }

    async def scenario(c: Any) -> None:
        await c.list_tools()
        with pytest.raises(shell.mod.ValidationError, match="no-such-dialect"):
            await c.call_tool("h", {"region": "eu"})

    url, stop, peer = _refreshing_peer("mismatch_once", unreadable)
    try:
        shell.run(
            scenario,
            url,
            protocol="modern",
            read_timeout=HTTP_READ_TIMEOUT,
            deadline=DEADLINE,
        )
    finally:
        stop()
    methods = [r["method"] for r in peer.received]
    # The -32020 answered the only tools/call: the retry was never sent.
    assert methods.count("tools/call") == 1
    assert methods.count("tools/list") == 2
    _assert_sent_valid(peer)


# ---------------------------------------------------------------------- PROG-3


class ProgressBoom(Exception):
    pass


def test_a_raising_progress_callback_is_logged_not_propagated(shell: Shell) -> None:
    seen: list[float] = []

    def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append(done)
        raise ProgressBoom(f"progress callback broke at {done:g}")

    async def scenario(c: Any) -> None:
        result = await c.call_tool("progress", {"steps": 3, "delay": 0}, progress=progress)
        assert text_of(result) == "done"
        # The client still works, progress included.
        again: list[float] = []
        result = await c.call_tool(
            "progress", {"steps": 2, "delay": 0}, progress=lambda p, t, m: again.append(p)
        )
        assert text_of(result) == "done"
        assert again == [1, 2]

    shell.run(scenario, SDK_SERVER, protocol="legacy")
    # Every notification reached the callback: one raising did not stop the next.
    assert seen == [1, 2, 3]
    failures = [
        r for r in shell.log.records if r.exc_info and isinstance(r.exc_info[1], ProgressBoom)
    ]
    assert len(failures) == 3
    assert all(r.levelno >= logging.ERROR for r in failures)
