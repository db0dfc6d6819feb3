"""The client's side of 2025-11-25 tasks: the bounded store, pure, time a number.

Every result the store gives the server is validated against the 2025-11-25 schema.
"""

from __future__ import annotations

import itertools
from typing import Any

from _proto_support import drive, json_values
from _tasks_support import LEGACY_SCHEMA, assert_valid
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto.effects import CallHost
from mcp_proto.handlers import Handlers, Reply
from mcp_proto.tasks.store import (
    PENDING,
    ClientTaskStore,
    client_tasks_capability,
    echo_related_task,
    serve_as_task,
)

SAMPLING = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
    "maxTokens": 10,
    "task": {"ttl": 5000},
}


def store(**kw: Any) -> ClientTaskStore:
    counter = itertools.count(1)
    return ClientTaskStore(
        new_id=lambda: f"task-{next(counter)}",
        timestamp=lambda: "2025-11-25T10:30:00Z",
        **kw,
    )


def ok(result: Any, definition: str) -> Any:
    assert isinstance(result, Reply) and not result.is_error, result
    assert_valid(LEGACY_SCHEMA, definition, result.result)
    return result.result


def status(s: ClientTaskStore, tid: str, now: float) -> Any:
    reply = s.serve("tasks/get", {"taskId": tid}, now=now)
    assert isinstance(reply, Reply)
    return reply.result["status"] if not reply.is_error else reply.code


def run(op: Any, now: float = 5.0) -> None:
    drive(op, lambda e: e.fn(*e.args) if isinstance(e, CallHost) else None)


def test_a_sampling_request_runs_as_a_task_and_is_served() -> None:
    s = store()
    handlers = Handlers(sampling=lambda messages: "hello")
    reply, op = serve_as_task(
        s, handlers, "sampling/createMessage", SAMPLING, server="srv", now=0.0, clock=lambda: 1.0
    )
    created = ok(reply, "CreateTaskResult")["task"]
    assert created["status"] == "working" and created["ttl"] == 5000
    tid = created["taskId"]
    assert s.serve("tasks/result", {"taskId": tid}, now=0.5) is PENDING  # blocks: later
    assert (
        ok(s.serve("tasks/get", {"taskId": tid}, now=0.5), "GetTaskResult")["status"] == "working"
    )
    assert op is not None
    run(op)
    assert (
        ok(s.serve("tasks/get", {"taskId": tid}, now=2.0), "GetTaskResult")["status"] == "completed"
    )
    result = ok(s.serve("tasks/result", {"taskId": tid}, now=2.0), "CreateMessageResult")
    assert result["content"]["text"] == "hello"
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": tid}
    listed = ok(s.serve("tasks/list", {}, now=2.0), "ListTasksResult")
    assert [t["taskId"] for t in listed["tasks"]] == [tid]


def test_a_failing_handler_fails_the_task_with_its_error() -> None:
    def boom(messages: Any) -> Any:
        raise RuntimeError("secret detail")

    s = store()
    reply, op = serve_as_task(
        s,
        Handlers(sampling=boom),
        "sampling/createMessage",
        SAMPLING,
        server="x",
        now=0,
        clock=lambda: 1,
    )
    run(op)
    tid = reply.result["task"]["taskId"]
    assert status(s, tid, 1) == "failed"
    err = s.serve("tasks/result", {"taskId": tid}, now=1)
    assert isinstance(err, Reply) and err.is_error and "secret" not in (err.message or "")


def test_cancel_rules() -> None:
    s = store()
    tid = s.create("elicitation/create", 1000, now=0).result["task"]["taskId"]
    cancelled = ok(s.serve("tasks/cancel", {"taskId": tid}, now=0.1), "CancelTaskResult")
    assert cancelled["status"] == "cancelled"
    again = s.serve("tasks/cancel", {"taskId": tid}, now=0.2)
    assert isinstance(again, Reply) and again.code == -32602
    assert s.finish(tid, Reply(result={"action": "accept"}), now=0.3) is False  # stays cancelled
    assert s.is_cancelled(tid)


def test_ttl_count_and_bytes_are_bounded() -> None:
    s = store(max_tasks=2, max_bytes=100, max_ttl_ms=10_000, default_ttl_ms=1000)
    a = s.create("elicitation/create", 10**9, now=0).result["task"]
    assert a["ttl"] == 10_000  # clamped
    b = s.create("elicitation/create", "x", now=0).result["task"]
    assert b["ttl"] == 1000  # default
    full = s.create("elicitation/create", None, now=0)
    assert full.is_error  # both still running
    s.finish(a["taskId"], Reply(result={"action": "accept", "content": {"k": "v" * 20}}), now=0)
    c = s.create("elicitation/create", None, now=0.5)  # the finished one makes room
    assert not c.is_error and len(s) == 2
    big = s.finish(c.result["task"]["taskId"], Reply(result={"x": "y" * 500}), now=0.6)
    assert big and status(s, c.result["task"]["taskId"], 0.6) == "failed"
    assert s.stored_bytes <= 100
    gone = s.serve("tasks/get", {"taskId": b["taskId"]}, now=1.0)  # past its 1 s TTL
    assert isinstance(gone, Reply) and gone.code == -32602


def test_list_pages_and_bad_cursor() -> None:
    s = store(max_tasks=200)
    for _ in range(120):
        s.create("elicitation/create", None, now=0)
    first = ok(s.serve("tasks/list", {}, now=0), "ListTasksResult")
    second = ok(s.serve("tasks/list", {"cursor": first["nextCursor"]}, now=0), "ListTasksResult")
    third = ok(s.serve("tasks/list", {"cursor": second["nextCursor"]}, now=0), "ListTasksResult")
    assert [len(p["tasks"]) for p in (first, second, third)] == [50, 50, 20]
    assert "nextCursor" not in third
    bad = s.serve("tasks/list", {"cursor": "nope"}, now=0)
    assert isinstance(bad, Reply) and bad.code == -32602


def test_capability_follows_the_handlers_and_bad_requests_are_refused() -> None:
    assert client_tasks_capability(Handlers()) == {}
    caps = client_tasks_capability(Handlers(elicitation=lambda m, s: None))
    assert caps["requests"] == {"elicitation": {"create": {}}}
    s = store()
    for method, params in (
        ("roots/list", {"task": {}}),
        ("sampling/createMessage", {"messages": []}),  # no task field
        ("sampling/createMessage", SAMPLING),  # no sampling handler
    ):
        reply, op = serve_as_task(s, Handlers(), method, params, server="x", now=0, clock=lambda: 0)
        assert reply.is_error and op is None
    assert len(s) == 0


def test_related_task_meta_is_echoed() -> None:
    params = {"_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t7"}}}
    out = echo_related_task(params, {"action": "accept", "_meta": {"a": 1}})
    assert out["_meta"] == {"a": 1, "io.modelcontextprotocol/related-task": {"taskId": "t7"}}
    assert echo_related_task({}, {"x": 1}) == {"x": 1}


@given(
    st.sampled_from(["tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "x"]), json_values
)
def test_any_request_gets_a_reply(method: str, params: Any) -> None:
    s = store()
    s.create("elicitation/create", None, now=0)
    for p in (params, {"taskId": params}, {"cursor": params}):
        reply = s.serve(method, p, now=0)
        assert reply is PENDING or isinstance(reply, Reply)


def test_serve_request_echoes_the_related_task_of_the_request() -> None:
    # SAMP-10: a 2025-11-25 server asks for input on a task's tasks/result stream.
    from mcp_proto.handlers import serve_request

    params = {
        "mode": "form",
        "message": "Pick",
        "requestedSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
        "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t-9"}},
    }
    handlers = Handlers(elicitation=lambda message, schema: {"x": "y"})
    reply = drive(
        serve_request(handlers, "elicitation/create", params, server="s"),
        lambda e: e.fn(*e.args) if isinstance(e, CallHost) else None,
    )
    assert reply.result["_meta"] == {"io.modelcontextprotocol/related-task": {"taskId": "t-9"}}
    assert_valid(LEGACY_SCHEMA, "ElicitResult", reply.result)
    plain = drive(
        serve_request(handlers, "elicitation/create", {**params, "_meta": {}}, server="s"),
        lambda e: e.fn(*e.args) if isinstance(e, CallHost) else None,
    )
    assert "_meta" not in plain.result
