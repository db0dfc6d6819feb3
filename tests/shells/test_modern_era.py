"""The 2026-07-28 era in both shells (issue 10 items 1, 2, 3, 5; LIFE-5..19, HDR-1/6,
SHTTP-6/7, RETRY-7/8): what the client puts on the wire and how a broken response stream
is handled, against the scripted modern peer ``tests/servers/hostile_modern.py`` (over
stdio and Streamable HTTP; it records every request with its headers) and the official
SDK server (``mcp==2.3.0``, dual-era).

Every request the peer received is validated against the 2026-07-28 schema. The era
decision across servers and ``protocol=`` values is ``test_dual_era_matrix.py``'s.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_proto import errors

from ._http_support import HTTP_READ_TIMEOUT, hostile_http_server
from .conftest import SDK_SERVER, SERVERS, Shell, text_of

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proto" / "modern"))
from _modern_wire import REQUEST_DEFS, assert_valid_request
from hostile_modern import start_http  # tests/servers is on the path (_http_support)

V = "2026-07-28"
DEADLINE = 60.0
HOSTILE = SERVERS / "hostile_modern.py"
TAP = Path(__file__).with_name("stdio_tap.py")
TRACE = {"com.example/trace": {"id": "t-1"}}


@contextlib.contextmanager
def modern_peer(transport: str, modes: str = "baseline") -> Iterator[Any]:
    """A target for ``connect``: the scripted modern peer over ``transport``."""
    if transport == "stdio":
        yield [sys.executable, str(HOSTILE), modes]
        return
    url, stop, _peer = start_http(modes)
    try:
        yield url
    finally:
        stop()


def options(transport: str, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"deadline": DEADLINE, **extra}
    if transport == "http":
        out["read_timeout"] = HTTP_READ_TIMEOUT
    return out


async def received(c: Any) -> list[dict[str, Any]]:
    """What the peer received before this call (its ``received`` tool, which does not
    list itself), every request checked against the 2026-07-28 schema."""
    seen: list[dict[str, Any]] = json.loads(text_of(await c.call_tool("received")))
    for r in seen:
        msg = {"jsonrpc": "2.0", "id": r["id"], "method": r["method"], "params": r["params"]}
        if r["method"] in REQUEST_DEFS:
            assert_valid_request(msg)
    return seen


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_every_request_carries_the_meta_and_no_handshake(shell: Shell, transport: str) -> None:
    calls = []

    def host_meta() -> dict[str, Any]:
        calls.append(1)
        return TRACE

    async def scenario(c: Any) -> list[dict[str, Any]]:
        server = c.servers[0]
        assert (server.protocol_era, server.protocol_version) == ("modern", V)
        assert [t.name for t in await c.list_tools()] == ["t", "h", "received"]
        assert text_of(await c.call_tool("t")).startswith("ok t")
        assert await c.ping() == {}  # sent as server/discover (LIFE-14)
        return await received(c)

    with modern_peer(transport) as target:
        seen = shell.run(
            scenario,
            target,
            request_meta=host_meta,
            extensions=["io.example/ext"],
            **options(transport),
        )
    methods = [r["method"] for r in seen]
    assert methods[0] == "server/discover"  # the probe comes first (LIFE-5)
    assert "initialize" not in methods
    assert methods.count("server/discover") == 2  # the probe and the ping
    for r in seen:
        meta = r["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == V
        assert meta["io.modelcontextprotocol/clientInfo"]["name"]
        caps = meta["io.modelcontextprotocol/clientCapabilities"]
        assert caps["extensions"] == {"io.example/ext": {}}  # LIFE-13
        assert meta["com.example/trace"] == {"id": "t-1"}  # LIFE-12
    assert len(calls) >= len(seen)  # called per request, copied then


def test_http_requests_carry_the_standard_headers_and_no_session(shell: Shell) -> None:
    async def scenario(c: Any) -> list[dict[str, Any]]:
        await c.call_tool("t")
        return await received(c)

    with modern_peer("http") as target:
        seen = shell.run(
            scenario,
            target,
            headers={"X-Api-Key": "k", "Mcp-Param-Region": "forged", "Mcp-Session-Id": "x"},
            **options("http"),
        )
    for r in seen:
        h = r["headers"]
        assert h["mcp-protocol-version"] == V  # LIFE-11
        assert h["mcp-method"] == r["method"]
        assert h["x-api-key"] == "k"
        assert "mcp-param-region" not in h  # HDR-6: the client owns Mcp-Param-*
        assert "mcp-session-id" not in h  # SHTTP-6: no session
    calls = [r for r in seen if r["method"] == "tools/call"]
    assert [r["headers"]["mcp-name"] for r in calls] == ["t"]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_unsupported_version_answer_is_probed_again_not_fallen_back(
    shell: Shell, transport: str
) -> None:
    async def scenario(c: Any) -> list[dict[str, Any]]:
        assert c.servers[0].protocol_era == "modern"
        return await received(c)

    with modern_peer(transport, "unsupported_discover") as target:
        seen = shell.run(scenario, target, **options(transport))
    methods = [r["method"] for r in seen]
    assert methods[:2] == ["server/discover", "server/discover"]  # LIFE-6
    assert "initialize" not in methods


def test_a_broken_stream_is_reissued_once_with_a_new_id(shell: Shell) -> None:
    async def scenario(c: Any) -> tuple[str, list[dict[str, Any]]]:
        text = text_of(await c.call_tool("t"))
        return text, await received(c)

    with modern_peer("http", "break_before") as target:
        text, seen = shell.run(scenario, target, **options("http"))
    calls = [r for r in seen if r["method"] == "tools/call" and r["params"]["name"] == "t"]
    assert len(calls) == 2  # RETRY-7: re-issued once, tools/call included
    assert calls[0]["id"] != calls[1]["id"]
    assert text == "ok t 2"


def test_a_second_break_is_response_stream_closed(shell: Shell) -> None:
    async def scenario(c: Any) -> Any:
        with pytest.raises(errors.ToolCallError) as info:
            await c.call_tool("t")
        return info.value

    with modern_peer("http", "break_before_twice") as target:
        failure = shell.run(scenario, target, **options("http"))
    assert isinstance(failure.__cause__, errors.ResponseStreamClosedError)
    assert "twice" in str(failure.__cause__)


def test_a_result_that_arrived_is_never_replaced(shell: Shell) -> None:
    async def scenario(c: Any) -> tuple[str, list[dict[str, Any]]]:
        text = text_of(await c.call_tool("t"))
        return text, await received(c)

    with modern_peer("http", "break_after") as target:
        text, seen = shell.run(scenario, target, **options("http"))
    assert text == "ok t 1"  # RETRY-8: the result before the break
    assert [r["params"]["name"] for r in seen if r["method"] == "tools/call"] == ["t"]


def test_log_level_rides_in_meta_and_set_level_is_never_sent(shell: Shell, tmp_path: Path) -> None:
    # LIFE-15 / LOG-2 against the SDK server over stdio, behind a tap recording every
    # line: set_log_level sends nothing; the requests after it carry the level.
    log = tmp_path / "tap.jsonl"

    async def scenario(c: Any) -> None:
        assert c.servers[0].protocol_era == "modern"
        await c.call_tool("echo", {"text": "before"})
        await c.set_log_level("error")
        await c.call_tool("echo", {"text": "after"})

    # discover_timeout: the SDK server's cold start on a busy machine outlasts the
    # default probe wait, and the era would then be decided as legacy (LIFE-7).
    shell.run(
        scenario,
        [sys.executable, str(TAP), str(log), "--", *SDK_SERVER],
        deadline=DEADLINE,
        discover_timeout=30.0,
    )
    entries = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    sent = [json.loads(e["line"]) for e in entries if e["dir"] == "c2s" and "line" in e]
    requests = [m for m in sent if "id" in m and "method" in m]
    for msg in requests:
        if msg["method"] in REQUEST_DEFS:
            assert_valid_request(msg)
    assert "logging/setLevel" not in [m["method"] for m in requests]
    assert "initialize" not in [m["method"] for m in requests]
    echoes = {
        m["params"]["arguments"]["text"]: m["params"]["_meta"]
        for m in requests
        if m["method"] == "tools/call"
    }
    assert "io.modelcontextprotocol/logLevel" not in echoes["before"]
    assert echoes["after"]["io.modelcontextprotocol/logLevel"] == "error"


@pytest.mark.parametrize(
    ("option", "value", "needle"),
    [("request_meta", 5, "request_meta"), ("extensions", ["no-prefix"], "extension identifier")],
)
def test_bad_era_options_are_refused_before_anything_starts(
    shell: Shell, option: str, value: Any, needle: str
) -> None:
    async def never(c: Any) -> None:
        raise AssertionError("a client was built")

    with pytest.raises(ValueError, match=needle):
        shell.run_client(never, [], **{option: value})


def test_the_era_is_probed_once_per_origin_per_client(shell: Shell) -> None:
    # LIFE-18: after cleanup() the next call reconnects; the era of the origin is known
    # (legacy here), so initialize goes first: no second server/discover.
    async def scenario(c: Any) -> None:
        assert await c.ping() == {}
        await c.cleanup()
        assert await c.ping() == {}
        assert c.servers[0].protocol_era == "legacy"

    with hostile_http_server("ok") as peer:
        shell.run(scenario, peer.base + "/mcp", **options("http"))
        methods = [r.rpc_method for r in peer.recorder.requests if r.method == "POST"]
    assert methods.count("server/discover") == 1, methods
    assert methods.count("initialize") == 2, methods
    assert methods.index("server/discover") < methods.index("initialize")


def test_a_tools_call_mirrors_its_tool_definition_into_mcp_param_headers(shell: Shell) -> None:
    # HDR-1 through the shell: a request carrying the tool definition (as the client
    # core's tools/call effect does) gets the Mcp-Param-* headers of its annotations.
    tool = {
        "name": "h",
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        },
    }

    async def scenario(c: Any) -> list[dict[str, Any]]:
        pending = c.servers[0].request(
            "tools/call", {"name": "h", "arguments": {"region": "Zürich"}}, tool=tool
        )
        if shell.is_trio:
            await pending
        return await received(c)

    with modern_peer("http") as target:
        seen = shell.run(scenario, target, **options("http"))
    (call,) = [r for r in seen if r["method"] == "tools/call"]
    assert call["headers"]["mcp-name"] == "h"
    assert call["headers"]["mcp-param-region"] == "=?base64?WsO8cmljaA==?="
