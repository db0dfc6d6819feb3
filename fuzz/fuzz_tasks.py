"""Fuzz target: task results and notifications of both eras (``mcp_proto.tasks``).

Feeds, structure-aware: task objects, ``CreateTaskResult``s, ``tasks/list`` results
and ``DetailedTask``s built from the schemas' keys with boundary values (400-digit
numbers, ``5000.0``, ``null`` TTLs, unknown statuses, ``inputRequests`` of any shape);
JSON text is used directly. Each document also goes through :class:`TaskWatch` as the
next poll of a working task, and through the client's task store as a server's
``tasks/*`` request.

Contract: every parser returns its value or raises ``RemoteProtocolError``;
``Task.from_dict`` / ``Task.from_json`` (of the raw bytes too) return a handle or raise
``ValueError``/``TypeError``; a handle round-trips through ``to_dict`` and its JSON text;
``LogChunk.from_params`` takes any params object; ``TaskWatch.observe`` raises only
``MCPError``s and its next action is one of the actions; the store answers every
request with a reply.
"""

from __future__ import annotations

import json
from typing import Any

from _fuzzlib import Reader, Target, json_input, json_value

from mcp_proto.client.streaming import LogChunk
from mcp_proto.errors import MCPError, RemoteProtocolError
from mcp_proto.handlers import Reply
from mcp_proto.tasks import (
    Task,
    TaskWatch,
    parse_create_result,
    parse_list_result,
    parse_task,
)
from mcp_proto.tasks._watch import Answer, Done, Expired, FetchResult, Poll, TimedOut, Wait
from mcp_proto.tasks.store import PENDING, ClientTaskStore

KEYS = (
    "taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttl", "ttlMs",
    "pollInterval", "pollIntervalMs", "result", "error", "inputRequests", "method",
    "params", "task", "tasks", "nextCursor", "resultType", "_meta", "code", "message",
)  # fmt: skip
STRINGS = (
    "t1", "working", "input_required", "completed", "failed", "cancelled", "done",
    "task", "complete", "elicitation/create", "roots/list", "2025-11-25T10:30:00Z",
    0, -1, 5000, 5000.0, 1.5, 10**400, None, True, 2**53,
)  # fmt: skip
ACTIONS = (Poll, Wait, Answer, FetchResult, Done, TimedOut, Expired)


def _document(reader: Reader) -> Any:
    base = {"taskId": "t1", "status": reader.choice(STRINGS[1:6]), "createdAt": "c"}
    for _ in range(reader.below(6)):
        base[reader.choice(KEYS)] = json_value(reader, KEYS, STRINGS, max_depth=3)
    shape = reader.below(4)
    if shape == 0:
        return {"task": base}
    if shape == 1:
        return {"tasks": [base, json_value(reader, KEYS, STRINGS, max_depth=2)]}
    if shape == 2:
        return json_value(reader, KEYS, STRINGS)
    return base


def check(data: bytes) -> None:
    document = json_input(data, _document)
    for era in ("legacy", "modern"):
        for parse in (
            lambda d: parse_task(d, era=era),  # noqa: B023
            lambda d: parse_create_result(d, era=era),  # noqa: B023
            lambda d: parse_list_result(d),
        ):
            try:
                value = parse(document)
            except RemoteProtocolError as exc:
                assert str(exc)
                continue
            for task in value.tasks if hasattr(value, "tasks") else (value,):
                assert isinstance(task, Task)
                text = json.dumps(task.to_dict(), default=str)
                again = Task.from_dict(json.loads(text))
                assert again == task and again.era == task.era
                assert Task.from_json(text) == task  # TASK-16: as another process reads it
        try:
            observed = parse_task(document, era=era)
        except RemoteProtocolError:
            observed = None
        if observed is not None:
            watch = TaskWatch(Task("t1", "working", era=era, created_at="c"), now=0.0, timeout=9)
            try:
                watch.observe(observed, 1.0)
            except MCPError:
                pass
            assert isinstance(watch.next_action(2.0), ACTIONS)
    try:
        Task.from_dict(document)
    except (ValueError, TypeError):
        pass
    try:
        Task.from_json(data)  # the bytes as another process's handle, or a bare id
    except (ValueError, TypeError):
        pass
    if isinstance(document, dict):
        # A notifications/message's params as call_tool_streaming shows them (LogChunk).
        chunk = LogChunk.from_params(document)
        assert chunk.level is None or isinstance(chunk.level, str)
        assert chunk.logger is None or isinstance(chunk.logger, str)
    store = ClientTaskStore(new_id=lambda: "t1", timestamp=lambda: "now", max_tasks=1)
    store.create("elicitation/create", 1000, now=0.0)
    params = document.get("task", document) if isinstance(document, dict) else document
    for method in ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel"):
        reply = store.serve(method, params, now=0.5)
        assert reply is PENDING or isinstance(reply, Reply)


TARGET = Target(
    name="tasks",
    description="task results of both eras -> parsers, Task.from_dict, TaskWatch, the task store",
    check=check,
    seeds=(
        b'{"task":{"taskId":"t1","status":"working","createdAt":"c","lastUpdatedAt":"c",'
        b'"ttl":60000,"pollInterval":5000}}',
        b'{"resultType":"task","taskId":"t1","status":"input_required","createdAt":"c",'
        b'"lastUpdatedAt":"c","ttlMs":null,"inputRequests":{"k":{"method":"roots/list"}}}',
        b'{"tasks":[{"taskId":"t1","status":"completed","ttl":1e400}],"nextCursor":7}',
        b'{"taskId":"t1","status":"failed","error":{"code":-32603,"message":"x"},"ttlMs":5000.0}',
        b"\x01\x02\x03\x04\x05\x06\x07\x08",
    ),
    max_len=4096,
)

if __name__ == "__main__":
    from run import main

    main(["tasks"])
