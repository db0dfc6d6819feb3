"""``call_tool_streaming``'s chunks from the core (TOOL-7, SCH-3, issue 23 item 5): the
task a call runs as, at each change of status, and the input a server asks for
(``input_required`` rounds, a 2026-07-28 task's ``inputRequests``), before the result;
log messages through the stream's sink; a bounded buffer whatever the kinds. Scripted
replies, every request schema-checked (``_tasks_support``), time a number."""

from __future__ import annotations

from typing import Any

import pytest
from _proto_support import drive
from _tasks_support import (
    LEGACY,
    LEGACY_CAPS,
    MODERN,
    MODERN_CAPS,
    Peer,
    legacy_task,
    make,
    modern_task,
    tool,
)

from mcp_proto.client.streaming import (
    END,
    InputChunk,
    LogChunk,
    ProgressChunk,
    StreamSink,
    TaskChunk,
    ToolStream,
    hook,
)
from mcp_proto.errors import ServerError
from mcp_proto.handlers import Handlers
from mcp_proto.results import ToolResult
from mcp_proto.tasks import Task, TaskStatus

RESEARCH = tool("research", execution={"taskSupport": "required"})
GOOD = {"content": [{"type": "text", "text": "42"}], "isError": False}
ELICIT = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}
ANSWER = {"action": "accept", "content": {"name": "Ada"}}


def elicit(message: str, schema: Any) -> dict[str, Any]:
    return {"name": "Ada"}


def chunks(stream: ToolStream) -> list[Any]:
    out = []
    while (chunk := stream.take()) is not END:
        assert chunk is not None  # the call ended: nothing left to wait for
        out.append(chunk)
    return out


def shown(items: list[Any]) -> list[Any]:
    """Chunks as (type, what): a task's status and message, the input keys."""
    out: list[Any] = []
    for c in items:
        if isinstance(c, TaskChunk):
            out.append(("task", c.status, c.task.status_message))
        elif isinstance(c, InputChunk):
            out.append(("input_required", sorted(c.requests)))
        else:
            out.append(c)
    return out


def test_a_2026_task_streams_its_statuses_and_input_requests_then_the_result() -> None:
    script = {
        "tools/list": {"resultType": "complete", "tools": [RESEARCH]},
        "tools/call": modern_task(resultType="task"),
        "tasks/get": [
            modern_task(),  # as created: nothing new to show
            modern_task(statusMessage="reading"),
            modern_task(status="input_required", inputRequests={"one": ELICIT}),
            # still listed (eventually consistent): not asked, not shown again
            modern_task(status="input_required", inputRequests={"one": ELICIT}),
            modern_task(status="input_required", inputRequests={"two": ELICIT}),
            modern_task(status="completed", result=GOOD),
        ],
        "tasks/update": {"resultType": "complete"},
    }
    core, d = make(
        {"s": Peer(MODERN, dict(MODERN_CAPS), script)}, handlers=Handlers(elicitation=elicit)
    )
    stream = ToolStream()
    drive(stream.op(core, "research", {"q": 1}), d.perform)
    *interim, result = chunks(stream)
    assert shown(interim) == [
        ("task", "working", None),
        ("task", "working", "reading"),
        ("task", "input_required", None),
        ("input_required", ["one"]),
        ("input_required", ["two"]),
        ("task", "completed", None),
    ]
    assert interim[0].task.task_id == "t1" and interim[0].task.server == "s"
    assert interim[3].requests == {"one": ELICIT}
    assert isinstance(result, ToolResult) and result.text == "42"
    updates = [c.params for c in d.sent("tasks/update")]
    assert updates == [
        {"taskId": "t1", "inputResponses": {"one": ANSWER}},
        {"taskId": "t1", "inputResponses": {"two": ANSWER}},
    ]


def test_a_2025_required_task_streams_its_statuses_then_the_result() -> None:
    script = {
        "tools/list": {"tools": [RESEARCH]},
        "tools/call": {"task": legacy_task(statusMessage="queued")},
        "tasks/get": [
            legacy_task(statusMessage="queued"),
            legacy_task(statusMessage="half way"),
            legacy_task(status="completed", statusMessage="done"),
        ],
        "tasks/result": GOOD,
    }
    core, d = make({"s": Peer(LEGACY, dict(LEGACY_CAPS), script)})
    stream = ToolStream()
    drive(stream.op(core, "research"), d.perform)
    *interim, result = chunks(stream)
    assert isinstance(result, ToolResult) and result.text == "42"
    assert shown(interim) == [
        ("task", "working", "queued"),
        ("task", "working", "half way"),
        ("task", "completed", "done"),
    ]
    assert d.sent("tools/call")[0].params["task"] == {}


def test_a_failed_task_raises_the_servers_error_after_its_statuses() -> None:
    script = {
        "tools/list": {"resultType": "complete", "tools": [RESEARCH]},
        "tools/call": modern_task(resultType="task"),
        "tasks/get": [
            modern_task(status="failed", error={"code": -32603, "message": "boom"}),
        ],
    }
    core, d = make({"s": Peer(MODERN, dict(MODERN_CAPS), script)})
    stream = ToolStream()
    drive(stream.op(core, "research"), d.perform)
    assert shown([stream.take(), stream.take()]) == [
        ("task", "working", None),
        ("task", "failed", None),
    ]
    with pytest.raises(ServerError):
        stream.take()
    assert stream.take() is END


def test_input_required_rounds_are_streamed_before_they_are_answered() -> None:
    # 2026-07-28 basic/patterns/mrtr: the interim results of a plain call.
    script = {
        "tools/list": {"resultType": "complete", "tools": [tool("ask")]},
        "tools/call": [
            {"resultType": "input_required", "inputRequests": {"k": ELICIT}, "requestState": "s"},
            {"resultType": "complete", **GOOD},
        ],
    }
    asked: list[int] = []

    def counted(message: str, schema: Any) -> dict[str, Any]:
        asked.append(len(stream.__dict__["_pending"]))  # the chunk was put first
        return {"name": "Ada"}

    core, d = make(
        {"s": Peer(MODERN, dict(MODERN_CAPS), script)},
        handlers=Handlers(elicitation=counted),
        extensions=(),
    )
    stream = ToolStream()
    drive(stream.op(core, "ask"), d.perform)
    first, result = chunks(stream)
    assert first == InputChunk({"k": ELICIT}) and first.type == "input_required"
    assert asked == [1]
    assert d.sent("tools/call")[1].params["inputResponses"] == {"k": ANSWER}
    assert isinstance(result, ToolResult) and result.text == "42"


def test_the_sink_makes_each_kind_of_chunk_and_a_plain_callback_has_no_hooks() -> None:
    stream = ToolStream()
    sink = stream.sink
    sink(1, 2, "half")
    sink.on_log({"level": "info", "logger": "db", "data": {"rows": 3}})
    sink.on_log({"level": 5, "data": "odd"})  # a level that is not a string: None
    sink.on_input({"k": ELICIT})
    stream.finish(ToolResult.from_wire({"content": []}, server="s"))
    assert chunks(stream)[:-1] == [
        ProgressChunk(1, 2, "half"),
        LogChunk("info", {"rows": 3}, "db"),
        LogChunk(None, "odd", None),
        InputChunk({"k": ELICIT}),
    ]
    assert isinstance(sink, StreamSink) and hook(sink, "on_log") == sink.on_log
    assert hook(lambda p, t, m: None, "on_log") is None
    assert hook(None, "on_task") is None


def test_the_buffer_is_bounded_whatever_the_kinds_of_chunk() -> None:
    stream = ToolStream(max_pending=4)
    for i in range(300):
        stream.sink(i, None, None)
        stream.sink.on_log({"level": "info", "data": "x" * 100})
        stream.sink.on_input({str(i): ELICIT})
    assert stream.dropped == 896 and len(stream.__dict__["_pending"]) == 4
    stream.finish(ToolResult.from_wire({"content": []}, server="s"))
    kept = chunks(stream)[:-1]
    assert kept == [
        InputChunk({"298": ELICIT}),
        ProgressChunk(299),
        LogChunk("info", "x" * 100),
        InputChunk({"299": ELICIT}),
    ]
    assert TaskStatus.WORKING.value == "working"


def left_stream(task: dict[str, Any]) -> ToolStream:
    """A stream whose call had become ``task`` when its consumer left."""
    stream = ToolStream()
    stream.sink.on_task(Task.from_dict(task, server="s"))
    return stream


def test_leaving_a_call_that_became_a_running_task_cancels_the_task() -> None:
    core, d = make(
        {
            "s": Peer(
                LEGACY,
                dict(LEGACY_CAPS),
                {
                    "tools/list": {"tools": [RESEARCH]},
                    "tasks/cancel": legacy_task(status="cancelled"),
                },
            )
        }
    )
    drive(left_stream(legacy_task()).leave_op(core), d.perform)
    assert [c.params for c in d.sent("tasks/cancel")] == [{"taskId": "t1"}]
    assert d.sent("notifications/cancelled") == [] and d.logs == []


def test_leaving_a_finished_or_plain_call_sends_nothing() -> None:
    core, d = make({"s": Peer(LEGACY, dict(LEGACY_CAPS), {"tools/list": {"tools": [RESEARCH]}})})
    drive(left_stream(legacy_task(status="completed")).leave_op(core), d.perform)
    drive(ToolStream().leave_op(core), d.perform)
    assert d.calls == []


def test_a_refused_tasks_cancel_of_a_left_stream_is_logged_not_raised() -> None:
    refused = ServerError("no such task", code=-32602)
    core, d = make(
        {
            "s": Peer(
                LEGACY,
                dict(LEGACY_CAPS),
                {"tools/list": {"tools": [RESEARCH]}, "tasks/cancel": refused},
            )
        }
    )
    drive(left_stream(legacy_task()).leave_op(core), d.perform)
    assert len(d.sent("tasks/cancel")) == 1
    assert [(log.level, log.message) for log in d.logs] == [
        (
            "warning",
            "tasks/cancel of 't1' (a stream left early) failed: tasks/cancel for task"
            " 't1' on server 's' failed: no such task (code -32602)",
        )
    ]
