"""``call_tool_streaming`` (TOOL-7, SCH-3) over both shells, one suite, real servers:
``@modelcontextprotocol/server-everything``'s ``trigger-long-running-operation`` and
the SDK server's ``progress`` tool (tests/servers/sdk_server.py, dual-era: both eras),
behind ``stdio_tap.py`` where the test asserts what went on the wire.

The blocking shell's ``call_tool_streaming`` is a generator; the Trio shell's an async
generator. ``chunks``/``first_then_close`` below iterate either."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_proto.errors import ToolNotFound, ValidationError

from .conftest import EVERYTHING, PEERS_NODE_MODULES, SDK_SERVER, Shell, text_of

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
    assert [p["type"] for p in progress] == ["progress"] * len(progress)
    assert [p["progress"] for p in progress] == [1, 2, 3] and progress[0]["total"] == 3
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
    assert first["type"] == "progress" and first["progress"] == 1 and first["total"] == 200
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
