"""``ToolStream``, the pure buffer behind ``call_tool_streaming`` (TOOL-7, SCH-3):
chunks in order, the result last (it is ``call_tool``'s checked result), an error
raised after the chunks before it, bounded for a consumer that does not keep up."""

from __future__ import annotations

from typing import Any

import pytest
from _proto_support import drive

from mcp_proto.client import ClientCore, ServerEntry
from mcp_proto.client.streaming import (
    END,
    ProgressChunk,
    ToolStream,
)
from mcp_proto.effects import Call, Connect, Effect
from mcp_proto.errors import ServerError, ValidationError
from mcp_proto.handlers import Handlers
from mcp_proto.results import ToolResult
from mcp_proto.session import ServerInfo

SCHEMA = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}
TOOLS = [{"name": "add", "inputSchema": {"type": "object"}, "outputSchema": SCHEMA}]


def _perform(answer: Any) -> Any:
    def perform(effect: Effect) -> Any:
        if isinstance(effect, Connect):
            return ServerInfo("2025-11-25", {"tools": {}}, None, None)
        assert isinstance(effect, Call)
        if effect.method == "tools/list":
            return {"tools": TOOLS}
        assert effect.progress is not None  # the stream is the call's progress callback
        effect.progress(1, 2, "half")
        effect.progress(2, 2, None)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return perform


def _all(stream: ToolStream) -> list[Any]:
    out = []
    while (chunk := stream.take()) is not END:
        assert chunk is not None
        out.append(chunk)
    return out


def test_progress_chunks_then_the_checked_result() -> None:
    core = ClientCore([ServerEntry("s", "stdio")], handlers=Handlers())
    stream = ToolStream()
    assert stream.take() is None and not stream.ended  # nothing yet: wait
    answer = {"content": [], "structuredContent": {"sum": 3}}
    drive(stream.op(core, "add", {"a": 1}), _perform(answer))
    *progress, result = _all(stream)
    assert progress == [ProgressChunk(1, 2, "half"), ProgressChunk(2, 2, None)]
    assert progress[0].type == "progress"
    assert isinstance(result, ToolResult) and result.structured_content == {"sum": 3}
    assert stream.exhausted and stream.take() is END


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ({"content": [], "structuredContent": {"sum": "x"}}, ValidationError),  # SCH-3
        (ServerError("boom", code=-32603), ServerError),
    ],
)
def test_a_failed_call_raises_after_its_chunks(answer: Any, error: type[Exception]) -> None:
    core = ClientCore(
        [ServerEntry("s", "stdio")], handlers=Handlers(), validate_structured_content="strict"
    )
    stream = ToolStream()
    drive(stream.op(core, "add", {}), _perform(answer))
    assert stream.take() == ProgressChunk(1, 2, "half")
    assert stream.take() == ProgressChunk(2, 2, None)
    with pytest.raises(error):
        stream.take()
    assert stream.take() is END


def test_a_slow_consumer_keeps_a_bounded_buffer() -> None:
    woken: list[int] = []
    stream = ToolStream(max_pending=3, wake=lambda: woken.append(1))
    for i in range(1000):
        stream.progress(i, None, None)
    assert stream.dropped == 997 and len(woken) == 1000
    stream.finish(ToolResult.from_wire({"content": []}, server="s"))
    stream.progress(5000, None, None)  # after the outcome: nothing more is kept
    chunks = _all(stream)
    assert chunks[:-1] == [ProgressChunk(i) for i in (997, 998, 999)]  # the newest kept
    assert isinstance(chunks[-1], ToolResult)
    with pytest.raises(ValueError):
        ToolStream(max_pending=0)
