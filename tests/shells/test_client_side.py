"""What the client itself sends, seen by tests/shells/recording_server.py (both shells)."""

from __future__ import annotations

import json
import logging
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from mcp_proto import errors
from mcp_proto.limits import Limits

from .conftest import Shell, text_of

TAP = Path(__file__).with_name("stdio_tap.py")
RECORDING: list[str] = [sys.executable, str(Path(__file__).with_name("recording_server.py"))]


async def _tool_json(c: Any, name: str, arguments: dict[str, Any] | None = None) -> Any:
    return json.loads(text_of(await c.call_tool(name, arguments or {})))


def test_initialize_declares_capabilities_from_the_handlers(shell: Shell) -> None:
    """CAP-4: roots / sampling / sampling.tools / elicitation only when registered."""

    async def scenario(c: Any) -> Any:
        return await _tool_json(c, "init")

    def sampler(messages: Any) -> str:
        return "x"

    def elicit(message: str) -> Any:
        return None

    # With a sampling or elicitation handler the client also runs those requests as
    # tasks when a 2025-11-25 server asks (issue 23; basic/utilities/tasks.mdx).
    def tasks(*requests: str) -> dict[str, Any]:
        wire = {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}
        return {"list": {}, "cancel": {}, "requests": {r: wire[r] for r in requests}}

    cases: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({}, {}),
        ({"roots": []}, {"roots": {"listChanged": True}}),
        ({"roots": [{"uri": "file:///r"}]}, {"roots": {"listChanged": True}}),
        ({"sampling_handler": sampler}, {"sampling": {}, "tasks": tasks("sampling")}),
        (
            {"sampling_handler": sampler, "sampling_supports_tools": True},
            {"sampling": {"tools": {}}, "tasks": tasks("sampling")},
        ),
        (
            {"elicitation_handler": elicit, "roots": []},
            {
                "roots": {"listChanged": True},
                "elicitation": {"form": {}, "url": {}},
                "tasks": tasks("elicitation"),
            },
        ),
    ]
    for kwargs, expected in cases:
        params = shell.run(scenario, RECORDING, **kwargs)
        assert params["capabilities"] == expected, kwargs
        assert params["protocolVersion"] == "2025-11-25"
        assert params["clientInfo"] == {"name": "mcp-proto", "version": "0.1.0"}

    params = shell.run(scenario, RECORDING, client_info={"name": "my-host", "version": "9.9"})
    assert params["clientInfo"]["name"] == "my-host"
    assert params["clientInfo"]["version"] == "9.9"


def test_set_roots_notifies_connected_servers_only(shell: Shell) -> None:
    """ROOT-3: notifications/roots/list_changed goes to connected servers; setting roots
    does not connect anything."""

    async def scenario(c: Any) -> list[str]:
        await c.set_roots([{"uri": "file:///a"}])
        assert not c.servers[0].is_connected
        await c.ping()
        await c.set_roots([{"uri": "file:///b", "name": "b"}])
        notes = await _tool_json(c, "notifications")
        asked = await _tool_json(c, "ask", {"requests": [{"method": "roots/list"}]})
        assert [r["result"] for r in asked] == [{"roots": [{"uri": "file:///b", "name": "b"}]}]
        return [n["method"] for n in notes]

    methods = shell.run_client(
        scenario, [{"name": "rec", "command": RECORDING, "read_timeout": 20}]
    )
    assert methods == ["notifications/initialized", "notifications/roots/list_changed"]


def test_server_request_backlog_is_bounded_and_each_request_answered_once(shell: Shell) -> None:
    """UT-8: beyond the backlog a server request is refused at once ("Client busy"),
    and still gets exactly one answer."""

    async def slow_sampler(messages: Any) -> str:
        await shell.sleep(0.3)
        return "done"

    request = {
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 5,
        },
    }

    async def scenario(c: Any) -> list[dict[str, Any]]:
        return await _tool_json(c, "ask", {"requests": [request] * 6, "linger": 0.5})

    replies = shell.run(
        scenario,
        RECORDING,
        sampling_handler=shell.callback(slow_sampler),
        limits=Limits(server_request_concurrency=1, server_request_backlog=2),
    )
    ids = [r["id"] for r in replies]
    assert sorted(ids) == sorted(set(ids)) and len(ids) == 6, replies
    busy = [r for r in replies if "error" in r]
    done = [r for r in replies if "result" in r]
    assert busy and done
    assert all(r["error"]["message"] == "Client busy" for r in busy)
    assert all(r["result"]["content"]["text"] == "done" for r in done)


def test_server_requests_run_concurrently(shell: Shell, tmp_path: Path) -> None:
    """UT-8 / STDIO-9: several server requests are served at once (bounded pool), and a
    ping from the server is answered while a slow handler runs.

    What happened is read, not timed: the handlers count how many run at once, and the
    wire (stdio_tap.py) shows the ping's answer written while all three still ran."""
    wire = tmp_path / "wire.jsonl"
    lock = threading.Lock()
    running = [0, 0]  # now, at most

    def pong_written() -> bool:
        lines = wire.read_text(encoding="utf-8").splitlines() if wire.exists() else []
        return any(
            entry.get("dir") == "c2s" and json.loads(entry["line"]).get("id") == "ask-4"
            for entry in map(json.loads, lines)
            if "line" in entry
        )

    async def slow_sampler(messages: Any) -> str:
        with lock:
            running[0] += 1
            running[1] = max(running)
        # Each handler stays until all three run at once and the ping is answered:
        # handlers served one at a time, or a ping queued behind them, never get there
        # (each gives up after 5 s; the server's own wait is 10 s).
        await shell.wait_for(lambda: running[1] == 3 and pong_written(), timeout=5.0)
        with lock:
            running[0] -= 1
        return "slow"

    sampling = {
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 5,
        },
    }

    async def scenario(c: Any) -> list[dict[str, Any]]:
        await c.ping()
        return await _tool_json(
            c,
            "ask",
            {"requests": [sampling, sampling, sampling, {"method": "ping"}], "linger": 0},
        )

    tapped = [sys.executable, str(TAP), str(wire), "--", *RECORDING]
    replies = shell.run(scenario, tapped, sampling_handler=shell.callback(slow_sampler))
    assert running == [0, 3], f"the three handlers were not all running at once: {running}"
    # The ping did not wait behind the slow handlers: answered first, while they ran.
    assert replies[0] == {"jsonrpc": "2.0", "id": "ask-4", "result": {}}
    assert len(replies) == 4
    assert all(r["result"]["content"]["text"] == "slow" for r in replies[1:]), replies


def test_list_tools_skips_a_server_that_cannot_start(shell: Shell) -> None:
    """TOOL-1: a failing server is logged and skipped; with no server left, the first
    error is raised."""
    missing = {"name": "missing", "command": ["/nonexistent/mcp-server-binary"], "read_timeout": 5}

    async def scenario(c: Any) -> None:
        tools = await c.list_tools()
        assert sorted(t.name for t in tools) == ["ask", "init", "notifications"]
        assert {t.server for t in tools} == {"rec"}
        with pytest.raises(errors.ConnectionError):
            await c.ping(server="missing")
        assert text_of(await c.call_tool("init")).startswith("{")

    shell.run_client(scenario, [missing, {"name": "rec", "command": RECORDING, "read_timeout": 20}])
    assert any("missing" in m for m in shell.log.messages(logging.WARNING))

    async def only_missing(c: Any) -> None:
        with pytest.raises(errors.ConnectionError):
            await c.list_tools()

    shell.run_client(only_missing, [missing])
