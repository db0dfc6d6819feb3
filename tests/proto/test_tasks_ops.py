"""The task operations of both eras, driven by scripted server replies (time a number).

Every request the operations send is validated against its revision's schema (the
2026-07-28 task requests against the tasks extension's schema): see _tasks_support.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _proto_support import drive
from _tasks_support import (
    LEGACY,
    LEGACY_CAPS,
    MODERN,
    MODERN_CAPS,
    OK,
    Peer,
    legacy_task,
    make,
    modern_task,
    tool,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto import errors
from mcp_proto.handlers import Handlers
from mcp_proto.tasks import MIN_POLL_INTERVAL, Task, TaskPage, TaskStatus

STRUCTURED_TOOL = tool(
    "research",
    execution={"taskSupport": "required"},
    outputSchema={
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
    },
)
GOOD = {"content": [], "structuredContent": {"answer": "42"}, "isError": False}
BAD = {"content": [], "structuredContent": {"answer": 42}, "isError": False}


def legacy_peer(**script: Any) -> Peer:
    base: dict[str, Any] = {
        "tools/list": {
            "tools": [
                tool("slow", execution={"taskSupport": "optional"}),
                tool("plain"),
                STRUCTURED_TOOL,
            ]
        }
    }
    base.update(script)
    return Peer(LEGACY, dict(LEGACY_CAPS), base)


def modern_peer(**script: Any) -> Peer:
    base: dict[str, Any] = {
        "tools/list": {"resultType": "complete", "tools": [tool("slow"), STRUCTURED_TOOL]}
    }
    base.update(script)
    return Peer(MODERN, dict(MODERN_CAPS), base)


# ---------------------------------------------------------------- 2025-11-25


def test_call_tool_as_task_sends_the_task_field_and_returns_the_handle() -> None:
    core, d = make({"s": legacy_peer(**{"tools/call": {"task": legacy_task()}})})
    task = drive(core.call_tool_as_task("slow", {"x": 1}, ttl=5000), d.perform)
    assert (task.task_id, task.status, task.server, task.era) == ("t1", "working", "s", "legacy")
    assert task.ttl == 60000 and task.poll_interval == 500
    assert task.tool is not None and task.tool["name"] == "slow"  # SCH-19: the definition
    (call,) = d.sent("tools/call")
    assert call.params == {"name": "slow", "arguments": {"x": 1}, "task": {"ttl": 5000}}
    assert call.cancel_on_timeout is False  # TASK-19


@pytest.mark.parametrize(
    ("caps", "name"),
    [({"tools": {}}, "slow"), (LEGACY_CAPS, "plain")],
    ids=["no-capability", "tool-forbids"],
)
def test_call_tool_as_task_is_gated_and_sends_nothing(caps: dict[str, Any], name: str) -> None:
    peer = legacy_peer()
    peer.caps = dict(caps)
    core, d = make({"s": peer})
    with pytest.raises(errors.TaskError):
        drive(core.call_tool_as_task(name), d.perform)
    assert d.sent("tools/call") == []


def test_creation_failures_are_task_errors() -> None:
    core, d = make({"s": legacy_peer(**{"tools/call": errors.ServerError("no", code=-32601)})})
    with pytest.raises(errors.TaskError) as info:
        drive(core.call_tool_as_task("slow"), d.perform)
    assert isinstance(info.value.__cause__, errors.ServerError)
    core, d = make({"s": legacy_peer(**{"tools/call": OK})})  # answered without a task
    with pytest.raises(errors.TaskError, match="did not create a task"):
        drive(core.call_tool_as_task("slow"), d.perform)


def test_task_routing_by_handle_bare_id_and_server_false() -> None:
    core, d = make(
        {
            "a": legacy_peer(),
            "b": legacy_peer(**{"tasks/get": legacy_task("t9", "completed")}),
        }
    )
    got = drive(core.get_task(Task("t9", "working", server="b")), d.perform)
    assert got.status is TaskStatus.COMPLETED and got.server == "b"
    with pytest.raises(ValueError, match="several servers"):
        drive(core.get_task("t9"), d.perform)
    with pytest.raises(TypeError):
        drive(core.get_task("t9", server=False), d.perform)
    assert drive(core.get_task("t9", server="b"), d.perform).server == "b"


def test_unknown_task_is_task_not_found_and_other_errors_task_error() -> None:
    peer = legacy_peer(
        **{
            "tasks/get": [
                errors.ServerError("gone", code=-32602),
                errors.ServerError("x", code=-32603),
            ]
        }
    )
    core, d = make({"s": peer})
    with pytest.raises(errors.TaskNotFound):
        drive(core.get_task("t1"), d.perform)
    with pytest.raises(errors.TaskError) as info:
        drive(core.get_task("t1"), d.perform)
    assert not isinstance(info.value, errors.TaskNotFound)


def test_a_reused_id_raises_task_replaced() -> None:
    # TASK-17: same id, another createdAt: a new task, not this handle's.
    core, d = make(
        {"s": legacy_peer(**{"tasks/get": legacy_task(createdAt="2030-01-01T00:00:00Z")})}
    )
    handle = Task.from_dict(legacy_task(), server="s")
    with pytest.raises(errors.TaskReplacedError):
        drive(core.get_task(handle), d.perform)
    # A bare id names whatever task the server has under it.
    assert drive(core.get_task("t1"), d.perform).created_at == "2030-01-01T00:00:00Z"


def test_list_tasks_pages_and_gates() -> None:
    page1 = {"tasks": [legacy_task("a"), legacy_task("b", "completed")], "nextCursor": "c2"}
    core, d = make({"s": legacy_peer(**{"tasks/list": [page1, {"tasks": []}]})})
    first = drive(core.list_tasks(), d.perform)
    assert isinstance(first, TaskPage)
    assert [t.task_id for t in first.tasks] == ["a", "b"] and first["next_cursor"] == "c2"
    second = drive(core.list_tasks(cursor="c2"), d.perform)
    assert second.tasks == () and second.next_cursor is None
    assert [c.params for c in d.sent("tasks/list")] == [{}, {"cursor": "c2"}]
    peer = legacy_peer()
    peer.caps = {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}}
    core, d = make({"s": peer})
    with pytest.raises(errors.CapabilityError):
        drive(core.list_tasks(), d.perform)
    core, d = make({"s": modern_peer()})
    with pytest.raises(errors.CapabilityError, match="no tasks/list"):
        drive(core.list_tasks(), d.perform)
    assert d.calls == []


def test_cancel_task() -> None:
    core, d = make({"s": legacy_peer(**{"tasks/cancel": legacy_task(status="cancelled")})})
    done = drive(core.cancel_task(Task.from_dict(legacy_task(), server="s")), d.perform)
    assert done.status is TaskStatus.CANCELLED
    with pytest.raises(errors.TaskError, match="already cancelled"):
        drive(core.cancel_task(done), d.perform)
    assert len(d.sent("tasks/cancel")) == 1  # the terminal one sent nothing


def test_wait_for_task_polls_at_the_servers_pace() -> None:
    polls = [
        legacy_task(pollInterval=2000),
        legacy_task(pollInterval=3000),
        legacy_task(status="completed"),
    ]
    core, d = make({"s": legacy_peer(**{"tasks/get": polls})})
    handle = Task.from_dict(legacy_task(), server="s")
    start = d.now
    done = drive(core.wait_for_task(handle), d.perform)
    assert done.is_completed
    times = [start] + [start + sum(d.sleeps[: i + 1]) for i in range(len(d.sleeps))]
    assert len(d.sent("tasks/get")) == 3
    # First poll at once (a handle from elsewhere), then 2 s, then 3 s: the server's pace.
    assert d.sleeps == [2.0, 3.0] and times[-1] == start + 5.0


def test_call_tool_runs_a_task_required_tool_as_a_task_and_validates() -> None:
    script = {
        "tools/call": {"task": legacy_task()},
        "tasks/get": [legacy_task(), legacy_task(status="completed")],
        "tasks/result": GOOD,
    }
    core, d = make({"s": legacy_peer(**script)})
    assert drive(core.call_tool("research"), d.perform) == GOOD
    assert d.methods() == ["tools/list", "tools/call", "tasks/get", "tasks/get", "tasks/result"]
    assert d.sent("tools/call")[0].params["task"] == {}
    assert d.sleeps == [0.5, 0.5]
    # SCH-19: the task-delivered result is checked against the creating definition.
    script["tasks/result"] = BAD
    script["tasks/get"] = [legacy_task(status="completed")]
    core, d = make({"s": legacy_peer(**script)}, validate_structured_content="strict")
    with pytest.raises(errors.ValidationError):
        drive(core.call_tool("research"), d.perform)


def test_call_tool_on_a_required_tool_without_the_capability_sends_nothing() -> None:
    peer = legacy_peer()
    peer.caps = {"tools": {}}
    core, d = make({"s": peer})
    with pytest.raises(errors.ToolCallError, match="requires task augmentation"):
        drive(core.call_tool("research"), d.perform)
    assert d.sent("tools/call") == []


def test_plain_tools_are_called_as_before() -> None:
    core, d = make({"s": legacy_peer(**{"tools/call": OK})})
    assert drive(core.call_tool("slow"), d.perform) == OK
    assert "task" not in d.sent("tools/call")[0].params


def test_legacy_input_required_opens_tasks_result() -> None:
    script = {
        "tools/call": {"task": legacy_task()},
        "tasks/get": [legacy_task(status="input_required"), legacy_task(status="completed")],
        "tasks/result": OK,
    }
    core, d = make({"s": legacy_peer(**script)})
    assert drive(core.call_tool("research"), d.perform) == OK
    # The result read on the stream is kept: tasks/result is not asked twice.
    assert d.methods()[1:] == ["tools/call", "tasks/get", "tasks/result", "tasks/get"]


def test_a_failed_legacy_result_stream_keeps_polling_to_the_failed_status() -> None:
    # 2025-11-25 § Task Execution Errors: tasks/result returns the request's own error;
    # the wait goes on to the terminal status and the result read raises that error.
    failure = errors.ServerError("tool exploded", code=-32603)
    script = {
        "tools/call": {"task": legacy_task()},
        "tasks/get": [legacy_task(status="input_required"), legacy_task(status="failed")],
        "tasks/result": failure,
    }
    core, d = make({"s": legacy_peer(**script)})
    with pytest.raises(errors.ServerError) as info:
        drive(core.call_tool("research"), d.perform)
    assert info.value is failure  # as the plain call would have raised it
    assert d.methods()[1:] == [
        "tools/call",
        "tasks/get",
        "tasks/result",
        "tasks/get",
        "tasks/result",
    ]


def test_cancelling_a_task_the_server_already_finished_is_a_task_error() -> None:
    refused = errors.ServerError("already in terminal status 'completed'", code=-32602)
    core, d = make({"s": legacy_peer(**{"tasks/cancel": refused})})
    with pytest.raises(errors.TaskError) as info:
        drive(core.cancel_task(Task.from_dict(legacy_task(), server="s")), d.perform)
    assert not isinstance(info.value, errors.TaskNotFound)


def test_immediate_handles_need_no_request() -> None:
    core, d = make({"s": modern_peer(**{"tools/call": OK})})
    now = drive(core.call_tool_as_task("slow"), d.perform)
    assert drive(core.wait_for_task(now), d.perform) is now
    assert drive(core.get_task_result(now), d.perform) == OK
    assert d.methods() == ["tools/list", "tools/call"]


def test_list_tasks_with_several_servers_needs_server() -> None:
    core, d = make({"a": legacy_peer(), "b": legacy_peer(**{"tasks/list": {"tasks": []}})})
    with pytest.raises(ValueError, match="list_tasks"):
        drive(core.list_tasks(), d.perform)
    assert drive(core.list_tasks(server="b"), d.perform).tasks == ()


def test_a_timed_out_task_is_cancelled_with_tasks_cancel() -> None:
    script = {
        "tools/call": {"task": legacy_task()},
        "tasks/get": legacy_task(),
        "tasks/cancel": legacy_task(status="cancelled"),
    }
    core, d = make({"s": legacy_peer(**script)})
    with pytest.raises(errors.RequestTimeoutError):
        drive(core.call_tool("research", timeout=2.0), d.perform)
    assert d.methods()[-1] == "tasks/cancel"
    assert sum(d.sleeps) == pytest.approx(2.0)


def test_get_task_result_validates_through_the_handle_only() -> None:
    script = {"tools/call": {"task": legacy_task()}, "tasks/result": BAD}
    core, d = make({"s": legacy_peer(**script)}, validate_structured_content="strict")
    task = drive(core.call_tool_as_task("research"), d.perform)
    with pytest.raises(errors.ValidationError):
        drive(core.get_task_result(task), d.perform)
    assert drive(core.get_task_result("t1"), d.perform) == BAD  # a bare id: not validated


def test_a_handle_is_finished_by_another_client() -> None:
    # TASK-16: the serialised handle (JSON) continues in a second client core.
    core, d = make({"s": legacy_peer(**{"tools/call": {"task": legacy_task()}})})
    task = drive(core.call_tool_as_task("research"), d.perform)
    text = json.dumps(task.to_dict())
    script = {"tasks/get": legacy_task(status="completed"), "tasks/result": BAD}
    other, d2 = make({"s": legacy_peer(**script)}, validate_structured_content="strict")
    handle = Task.from_dict(json.loads(text))
    assert handle == task and handle.tool == task.tool
    done = drive(other.wait_for_task(handle), d2.perform)
    with pytest.raises(errors.ValidationError):  # the definition travelled with it
        drive(other.get_task_result(done), d2.perform)


# ---------------------------------------------------------------- 2026-07-28 extension

ELICIT = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}


def created(**extra: Any) -> dict[str, Any]:
    return modern_task(resultType="task", **extra)


def test_modern_call_tool_polls_answers_input_twice_and_returns_the_result() -> None:
    asked: list[str] = []

    def elicit(message: str, schema: Any) -> dict[str, Any]:
        asked.append(message)
        return {"name": "Ada"}

    script = {
        "tools/call": created(),
        "tasks/get": [
            modern_task(),
            modern_task(status="input_required", inputRequests={"one": ELICIT}),
            # eventually consistent: the answered key is still listed; never asked again
            modern_task(status="input_required", inputRequests={"one": ELICIT}),
            modern_task(status="input_required", inputRequests={"two": ELICIT}),
            modern_task(status="completed", result=GOOD),
        ],
        "tasks/update": {"resultType": "complete"},
    }
    core, d = make({"s": modern_peer(**script)}, handlers=Handlers(elicitation=elicit))
    assert drive(core.call_tool("research"), d.perform) == GOOD
    assert asked == ["Your name?", "Your name?"]
    updates = [c.params for c in d.sent("tasks/update")]
    answer = {"action": "accept", "content": {"name": "Ada"}}
    assert updates == [
        {"taskId": "t1", "inputResponses": {"one": answer}},
        {"taskId": "t1", "inputResponses": {"two": answer}},
    ]
    assert "notifications/cancelled" not in d.methods()


def test_partial_answers_are_kept_across_a_failed_handler() -> None:
    # MRTR-8 / TASK-20: two requests, the second handler fails: the first answer is
    # sent; waiting again asks only the second.
    calls: list[str] = []

    def sample(messages: Any) -> Any:
        calls.append("sample")
        if calls.count("sample") == 1:
            raise RuntimeError("model down")
        return "hi"

    def elicit(message: str, schema: Any) -> dict[str, Any]:
        calls.append("elicit")
        return {"name": "Ada"}

    sampling = {
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "?"}}],
            "maxTokens": 5,
        },
    }
    both = modern_task(status="input_required", inputRequests={"a": ELICIT, "b": sampling})
    script = {
        "tasks/get": [both, both, modern_task(status="completed", result=OK)],
        "tasks/update": {"resultType": "complete"},
    }
    core, d = make(
        {"s": modern_peer(**script)}, handlers=Handlers(elicitation=elicit, sampling=sample)
    )
    handle = Task.from_dict(modern_task(), server="s")
    with pytest.raises(errors.TaskError) as info:
        drive(core.wait_for_task(handle), d.perform)
    kept = info.value.task
    assert isinstance(kept, Task) and kept.answered == {"a"}
    assert [list(c.params["inputResponses"]) for c in d.sent("tasks/update")] == [["a"]]
    # Another process may go on from the serialised handle: "a" is not asked again.
    resumed = Task.from_dict(json.loads(json.dumps(kept.to_dict())))
    done = drive(core.wait_for_task(resumed), d.perform)
    assert done.is_completed and calls == ["elicit", "sample", "sample"]
    assert [list(c.params["inputResponses"]) for c in d.sent("tasks/update")] == [["a"], ["b"]]


def test_a_failed_task_raises_the_servers_error() -> None:
    failed = modern_task(status="failed", error={"code": -32603, "message": "rate limited"})
    core, d = make({"s": modern_peer(**{"tools/call": created(), "tasks/get": failed})})
    with pytest.raises(errors.ServerError) as info:
        drive(core.call_tool("slow"), d.perform)
    assert info.value.code == -32603


def test_a_task_outliving_its_ttl_is_not_found() -> None:
    script = {"tools/call": created(ttlMs=1500), "tasks/get": modern_task(ttlMs=1500)}
    core, d = make({"s": modern_peer(**script)})
    with pytest.raises(errors.TaskNotFound, match="outlived its TTL"):
        drive(core.call_tool("slow"), d.perform)
    assert sum(d.sleeps) == pytest.approx(1.5)


def test_poll_interval_zero_is_floored_and_one_hour_is_capped_by_the_timeout() -> None:
    fast = [modern_task(pollIntervalMs=0)] * 3 + [modern_task(status="completed", result=OK)]
    script = {"tools/call": created(pollIntervalMs=0), "tasks/get": fast}
    core, d = make({"s": modern_peer(**script)})
    assert drive(core.call_tool("slow"), d.perform) == OK
    assert d.sleeps == pytest.approx([MIN_POLL_INTERVAL] * 4)
    slow = {
        "tools/call": created(pollIntervalMs=3_600_000),
        "tasks/get": modern_task(pollIntervalMs=3_600_000),
        "tasks/cancel": {"resultType": "complete"},
    }
    core, d = make({"s": modern_peer(**slow)})
    with pytest.raises(errors.RequestTimeoutError):
        drive(core.call_tool("slow", timeout=5.0), d.perform)
    assert d.sleeps == [5.0] and d.sent("tasks/get") == []  # never earlier than asked
    assert d.methods()[-1] == "tasks/cancel"


def test_a_task_result_without_the_declared_extension_is_refused() -> None:
    core, d = make({"s": modern_peer(**{"tools/call": created()})}, extensions=())
    with pytest.raises(errors.UnknownResultTypeError):
        drive(core.call_tool("slow"), d.perform)
    with pytest.raises(errors.TaskError, match="extensions="):
        drive(core.call_tool_as_task("slow"), d.perform)


def test_modern_call_tool_as_task_and_its_immediate_answer() -> None:
    core, d = make({"s": modern_peer(**{"tools/call": [created(), OK]})})
    task = drive(core.call_tool_as_task("slow", ttl=99), d.perform)
    assert task.era == "modern" and task.task_id == "t1" and task.ttl_ms == 60000
    assert "task" not in d.sent("tools/call")[0].params  # TASK-12: ttl not sent
    now = drive(core.call_tool_as_task("slow"), d.perform)
    assert now.is_immediate and now.is_completed and now.result == OK
    with pytest.raises(errors.TaskError):
        drive(core.get_task(now), d.perform)


def test_update_and_cancel_on_the_extension() -> None:
    script = {
        "tasks/update": {"resultType": "complete"},
        "tasks/cancel": {"resultType": "complete"},
        "tasks/get": [modern_task(status="cancelled")],
    }
    core, d = make({"s": modern_peer(**script)})
    handle = Task.from_dict(
        modern_task(status="input_required", inputRequests={"k": ELICIT}), server="s"
    )
    after = drive(core.update_task(handle, {"k": {"action": "decline"}}), d.perform)
    assert after.answered == {"k"}
    cancelled = drive(core.cancel_task(after), d.perform)
    assert cancelled.status is TaskStatus.CANCELLED
    assert d.methods() == ["tasks/update", "tasks/cancel", "tasks/get"]


def test_a_legacy_handle_on_a_modern_server_is_refused() -> None:
    core, d = make({"s": modern_peer()})
    with pytest.raises(errors.TaskError, match="legacy task"):
        drive(core.get_task(Task("t1", "working", server="s")), d.perform)
    assert d.calls == []


# ---------------------------------------------------------------- any server behaviour

_poll_reply = st.one_of(
    st.builds(
        lambda status, poll, ttl, era_extra: {
            **era_extra,
            "status": status,
            "pollIntervalMs": poll,
            "ttlMs": ttl,
        },
        st.sampled_from(["working", "input_required", "completed", "failed", "cancelled", "bogus"]),
        st.integers(0, 4_000_000) | st.none(),
        st.integers(0, 100_000) | st.none(),
        st.sampled_from(
            [
                {},
                {"result": OK},
                {"error": {"code": -32603, "message": "x"}},
                {"inputRequests": {"k": ELICIT}},
                {"inputRequests": {"r": {"method": "roots/list"}}},
                {"inputRequests": {"z": {"method": "tools/call"}}},
                {"createdAt": "another lifetime"},
                {"taskId": "other"},
            ]
        ),
    ),
    st.sampled_from(
        [errors.ServerError("gone", code=-32602), errors.ServerError("x", code=-32603), 7, []]
    ),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_poll_reply, min_size=1, max_size=12), st.floats(0.5, 30))
def test_any_sequence_of_polls_ends_in_one_outcome_or_one_typed_error(
    replies: list[Any], timeout: float
) -> None:
    script: list[Any] = []
    for reply in replies:
        if isinstance(reply, dict):
            base = modern_task()
            base.update({k: v for k, v in reply.items() if v is not None or k == "ttlMs"})
            if reply.get("pollIntervalMs") is None:
                base.pop("pollIntervalMs", None)
            script.append(base)
        else:
            script.append(reply)
    script.append(modern_task())  # then the task stays working
    core, d = make(
        {
            "s": modern_peer(
                **{
                    "tasks/get": script,
                    "tasks/update": {"resultType": "complete"},
                    "tasks/cancel": {"resultType": "complete"},
                }
            )
        },
        handlers=Handlers(elicitation=lambda m, s: {"name": "x"}),
    )
    handle = Task.from_dict(modern_task(), server="s")
    try:
        done = drive(core.wait_for_task(handle, timeout=timeout), d.perform)
    except errors.MCPError:
        outcome = "error"
    else:
        assert done.is_terminal
        outcome = "done"
    assert outcome in ("done", "error")
    polls = [c for c in d.calls if c.method == "tasks/get"]
    assert len(polls) <= len(script) + int(timeout / 0.1) + 1
    assert d.now - 100.0 <= timeout + 1e-6  # the wait never ran past the timeout
