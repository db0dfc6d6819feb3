"""``call_tool_streaming`` (TOOL-7, SCH-3) over both shells, one suite, real servers:
``@modelcontextprotocol/server-everything``'s ``trigger-long-running-operation`` and
``simulate-research-query`` (a task), the SDK server's ``progress`` and ``chatty``
tools (tests/servers/sdk_server.py, dual-era: both eras; stdio and Streamable HTTP),
behind ``stdio_tap.py`` where the test asserts what went on the wire, and the scripted
2026-07-28 tasks server (tests/servers/tasks_modern.py). Chunks are the typed records
of :mod:`mcp_proto.client.streaming`.

The blocking shell's ``call_tool_streaming`` is a generator; the Trio shell's an async
generator. ``chunks``/``first_then_close`` below iterate either."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_proto.client.streaming import InputChunk, LogChunk, ProgressChunk, TaskChunk
from mcp_proto.errors import ToolNotFound, ValidationError
from mcp_proto.results import ToolResult
from mcp_proto.tasks import EXTENSION

from ._http_support import sdk_http_server
from .conftest import EVERYTHING, PEERS_NODE_MODULES, SDK_SERVER, SERVERS, Shell, text_of

TAP = Path(__file__).with_name("stdio_tap.py")


async def chunks(stream: Any) -> list[Any]:
    if hasattr(stream, "__anext__"):
        return [chunk async for chunk in stream]
    return list(stream)


async def first_then_close(stream: Any) -> Any:
    """The consumer that stops after the first chunk."""
    if hasattr(stream, "__anext__"):
        first = await stream.__anext__()
        await stream.aclose()
        return first
    first = next(stream)
    stream.close()
    return first


def _wire(log: Path, direction: str) -> list[dict[str, Any]]:
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    return [json.loads(e["line"]) for e in entries if e["dir"] == direction and "line" in e]


@pytest.mark.skipif(not PEERS_NODE_MODULES.is_dir(), reason="make peers not run")
def test_progress_chunks_then_the_result_from_server_everything(shell: Shell) -> None:
    async def scenario(c: Any) -> list[Any]:
        stream = c.call_tool_streaming(
            "trigger-long-running-operation", {"duration": 0.6, "steps": 3}
        )
        return await chunks(stream)

    got = shell.run(scenario, EVERYTHING, protocol="legacy")
    *progress, result = got
    assert [type(p) for p in progress] == [ProgressChunk] * len(progress)
    assert [p.progress for p in progress] == [1, 2, 3] and progress[0].total == 3
    assert isinstance(result, ToolResult)
    assert "Long running operation completed" in text_of(result)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_leaving_after_the_first_chunk_cancels_the_call(
    shell: Shell, era: str, tmp_path: Path
) -> None:
    log = tmp_path / "tap.jsonl"

    async def scenario(c: Any) -> Any:
        stream = c.call_tool_streaming("progress", {"steps": 200, "delay": 0.1}, timeout=60)
        first = await first_then_close(stream)
        # The client goes on: the next call is answered.
        assert text_of(await c.call_tool("echo", {"text": "after"})) == "after"
        return first

    first = shell.run(
        scenario, [sys.executable, str(TAP), str(log), "--", *SDK_SERVER], protocol=era
    )
    assert first == ProgressChunk(1, 200, "step 1/200")
    sent = _wire(log, "c2s")
    (call,) = [
        m for m in sent if m.get("method") == "tools/call" and m["params"]["name"] == "progress"
    ]
    cancels = [m for m in sent if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in cancels] == [call["id"]]
    assert cancels[0]["params"]["reason"] == "Request cancelled by the client"  # not a timeout


def test_the_result_chunk_is_checked_like_call_tool(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        *_, result = await chunks(c.call_tool_streaming("add", {"a": 2, "b": 3}))
        assert result.structured_content == {"sum": 5}
        with pytest.raises(ValidationError):  # SCH-3: strict, like call_tool
            await chunks(c.call_tool_streaming("bad_structured", {}))
        with pytest.raises(ToolNotFound):
            await chunks(c.call_tool_streaming("no-such-tool", {}))

    shell.run(scenario, SDK_SERVER, protocol="legacy", validate_structured_content="strict")


# ---------------------------------------------------------------- log messages


def _logs_and_progress(got: list[Any]) -> list[Any]:
    return [
        ("log", c.level, c.logger, c.data) if isinstance(c, LogChunk) else ("progress", c.progress)
        for c in got[:-1]
    ]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_log_messages_and_progress_of_the_call_over_stdio(shell: Shell, era: str) -> None:
    # stdio: the call is the only request in flight, so the server's log messages
    # meanwhile are the call's (mcp_proto/client/streaming.py). 2026-07-28: a server
    # logs only for a request carrying a log level (server/utilities/logging.mdx §
    # Per-request log level), which set_log_level puts on every request (LOG-2).
    async def scenario(c: Any) -> list[Any]:
        if era == "modern":
            await c.set_log_level("info")
        return await chunks(c.call_tool_streaming("chatty", {"steps": 3}, timeout=30))

    got = shell.run(scenario, SDK_SERVER, protocol=era)
    assert _logs_and_progress(got) == [
        item
        for i in (1, 2, 3)
        for item in (("log", "info", "sdk_server", f"working on step {i}"), ("progress", i))
    ]
    assert text_of(got[-1]) == "done"


@pytest.mark.peer
def test_log_messages_of_the_call_over_streamable_http(shell: Shell) -> None:
    # Streamable HTTP: the log messages on the call's own response stream are its; a
    # concurrent call's are not (each stream carries its own request's).
    async def scenario(c: Any) -> tuple[list[Any], str]:
        streamed = await chunks(c.call_tool_streaming("chatty", {"steps": 2}, timeout=30))
        other = await c.call_tool("log", {"level": "info", "message": "not streamed"})
        return streamed, text_of(other)

    with sdk_http_server("streamable-http") as peer:
        got, other = shell.run(scenario, peer.url, protocol="legacy")
    assert other == "sent"
    assert _logs_and_progress(got) == [
        ("log", "info", "sdk_server", "working on step 1"),
        ("progress", 1),
        ("log", "info", "sdk_server", "working on step 2"),
        ("progress", 2),
    ]


# ---------------------------------------------------------------- tasks


@pytest.mark.peer
@pytest.mark.skipif(not PEERS_NODE_MODULES.is_dir(), reason="make peers not run")
def test_a_task_call_streams_its_statuses_from_server_everything(shell: Shell) -> None:
    # 2025-11-25: simulate-research-query requires a task; the stream shows the task's
    # status changes (server-everything's stage messages) and then the report.
    async def scenario(c: Any) -> list[Any]:
        stream = c.call_tool_streaming("simulate-research-query", {"topic": "tasks"}, timeout=60)
        return await chunks(stream)

    *interim, result = shell.run(scenario, EVERYTHING, protocol="legacy")
    tasks = [c for c in interim if isinstance(c, TaskChunk)]
    assert len(tasks) >= 2 and tasks[0].status == "working"
    assert tasks[-1].status == "completed" and tasks[-1].task.is_terminal
    assert len({c.task.task_id for c in tasks}) == 1
    pairs = [(c.status, c.task.status_message) for c in tasks]
    assert len(set(pairs)) == len(pairs)  # a chunk per change, never a repeat
    assert "Research Report: tasks" in text_of(result)


MODERN = [sys.executable, str(SERVERS / "tasks_modern.py")]


def test_a_2026_task_streams_its_statuses_and_input_requests(shell: Shell) -> None:
    answers = iter(["Ada", "Lovelace"])

    def elicit(message: str, schema: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": next(answers)}}

    async def scenario(c: Any) -> list[Any]:
        return await chunks(c.call_tool_streaming("two_inputs", {}, timeout=30))

    got = shell.run(scenario, MODERN, extensions=[EXTENSION], elicitation_handler=elicit)
    *interim, result = got
    shown = [
        (c.type, c.status) if isinstance(c, TaskChunk) else (c.type, sorted(c.requests))
        for c in interim
    ]
    # The server asks the second question at the poll after the first answer (the task
    # stays input_required: no new status, no TaskChunk), then completes.
    assert shown == [
        ("task", "working"),
        ("task", "input_required"),
        ("input_required", ["first"]),
        ("input_required", ["second"]),
        ("task", "completed"),
    ]
    assert all(isinstance(c, (TaskChunk, InputChunk)) for c in interim)
    assert text_of(result) == "Ada and Lovelace"


def test_the_per_server_object_streams_too(shell: Shell) -> None:
    # §E3: server.call_tool_streaming, typed per shell (an iterator / async iterator).
    async def scenario(c: Any) -> list[Any]:
        server = c.servers[0]
        return await chunks(server.call_tool_streaming("progress", {"steps": 2}, timeout=30))

    *progress, result = shell.run(scenario, SDK_SERVER, protocol="legacy")
    assert progress == [ProgressChunk(1, 2, "step 1/2"), ProgressChunk(2, 2, "step 2/2")]
    assert text_of(result) == "done"


def test_leaving_a_task_stream_early_cancels_the_task(shell: Shell) -> None:
    # A streamed call that became a task: leaving after its first chunk ends the wait
    # at once (the poll interval here is an hour; the blocking shell's worker was
    # asleep in it) and cancels the task with tasks/cancel (TASK-19).
    async def scenario(c: Any) -> tuple[Any, Any]:
        stream = c.call_tool_streaming("poll_hour", {}, timeout=3600)
        first = await first_then_close(stream)
        assert isinstance(first, TaskChunk) and first.status == "working"
        return first.task, await c.get_task(first.task)

    task, after = shell.run(scenario, MODERN, extensions=[EXTENSION], deadline=30)
    assert after.task_id == task.task_id and after.status.value == "cancelled"


@pytest.mark.peer
@pytest.mark.skipif(not PEERS_NODE_MODULES.is_dir(), reason="make peers not run")
def test_leaving_a_2025_task_stream_early_cancels_the_task(shell: Shell, tmp_path: Path) -> None:
    log = tmp_path / "tap.jsonl"

    async def scenario(c: Any) -> tuple[Any, Any]:
        stream = c.call_tool_streaming("simulate-research-query", {"topic": "x"}, timeout=60)
        first = await first_then_close(stream)
        assert isinstance(first, TaskChunk) and first.status == "working"
        return first.task, await c.get_task(first.task)

    command = [sys.executable, str(TAP), str(log), "--", *EVERYTHING]
    task, after = shell.run(scenario, command, protocol="legacy")
    assert after.status.value == "cancelled"
    sent = _wire(log, "c2s")
    cancels = [m["params"] for m in sent if m.get("method") == "tasks/cancel"]
    assert cancels == [{"taskId": task.task_id}]
    assert not [m for m in sent if m.get("method") == "notifications/cancelled"]
