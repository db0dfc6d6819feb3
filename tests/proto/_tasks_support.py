"""A scripted driver for the task operations (no I/O, time a number).

``TaskDriver`` answers ``Connect`` with the peer's ServerInfo, ``Call`` from a
per-server script (method -> value | exception | list consumed in turn | fn(params)),
and ``CallHost`` by calling the function, except the core's clock and sleep, which read
and advance :attr:`TaskDriver.now`. Every request sent is first checked against its
revision's schema: 2025-11-25 requests against ``schema_2025_11_25.json``; 2026-07-28
task requests against the tasks extension's schema (``modern/schema_tasks_extension.json``,
``schema/draft/schema.json`` of github.com/modelcontextprotocol/ext-tasks at e434597),
the others against the 2026-07-28 schema.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import attrs
import jsonschema_rs

from mcp_proto.client.router import ServerEntry
from mcp_proto.effects import Call, CallHost, Connect, Effect, Log, PeekEra
from mcp_proto.handlers import Handlers
from mcp_proto.modern.meta import with_meta
from mcp_proto.session import ServerInfo
from mcp_proto.tasks import EXTENSION
from mcp_proto.tasks.ops import TaskOps

sys.path.insert(0, str(Path(__file__).parent / "modern"))
from _modern_wire import REQUEST_DEFS, assert_valid_request, request

HERE = Path(__file__).parent
LEGACY = "2025-11-25"
MODERN = "2026-07-28"

LEGACY_CAPS: dict[str, Any] = {
    "tools": {},
    "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
}
MODERN_CAPS: dict[str, Any] = {"tools": {}, "extensions": {EXTENSION: {}}}
OK = {"content": [{"type": "text", "text": "ok"}], "isError": False}


@cache
def _schema(path: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((HERE / path).read_text(encoding="utf-8"))
    return data


@cache
def validator(path: str, definition: str) -> Any:
    schema = _schema(path)
    assert definition in schema["$defs"], definition
    root = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    return jsonschema_rs.Draft202012Validator(root)


def assert_valid(path: str, definition: str, instance: Any) -> None:
    problems = [str(e) for e in validator(path, definition).iter_errors(instance)]
    assert not problems, f"not a valid {definition}: {problems} in {instance!r}"


LEGACY_SCHEMA = "schema_2025_11_25.json"
EXT_SCHEMA = "modern/schema_tasks_extension.json"
LEGACY_REQUESTS = {
    "tools/call": "CallToolRequest",
    "tools/list": "ListToolsRequest",
    "tasks/get": "GetTaskRequest",
    "tasks/result": "GetTaskPayloadRequest",
    "tasks/list": "ListTasksRequest",
    "tasks/cancel": "CancelTaskRequest",
}
EXT_REQUESTS = {
    "tasks/get": "GetTaskRequest",
    "tasks/update": "UpdateTaskRequest",
    "tasks/cancel": "CancelTaskRequest",
}


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object"}, **extra}


def legacy_task(task_id: str = "t1", status: str = "working", **extra: Any) -> dict[str, Any]:
    out = {
        "taskId": task_id,
        "status": status,
        "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:30:00Z",
        "ttl": 60000,
        "pollInterval": 500,
    }
    out.update(extra)
    return out


def modern_task(task_id: str = "t1", status: str = "working", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "resultType": "complete",
        "taskId": task_id,
        "status": status,
        "createdAt": "2026-07-28T10:30:00Z",
        "lastUpdatedAt": "2026-07-28T10:30:00Z",
        "ttlMs": 60000,
        "pollIntervalMs": 500,
    }
    out.update(extra)
    return out


@attrs.define
class Peer:
    version: str = LEGACY
    caps: dict[str, Any] = attrs.Factory(lambda: dict(LEGACY_CAPS))
    script: dict[str, Any] = attrs.Factory(dict)

    def info(self) -> ServerInfo:
        return ServerInfo(self.version, self.caps, None, None)


class TaskCore(TaskOps):
    """The task operations on the router, as the client core will include them."""


@attrs.define
class TaskDriver:
    peers: dict[str, Peer]
    core: TaskCore | None = None
    now: float = 100.0
    calls: list[Call] = attrs.Factory(list)
    logs: list[Log] = attrs.Factory(list)
    sleeps: list[float] = attrs.Factory(list)
    on_call: Callable[[Call], None] | None = None

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps.append(seconds)
        self.now += seconds

    def sent(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def methods(self) -> list[str]:
        return [c.method for c in self.calls]

    def _validate(self, peer: Peer, effect: Call) -> None:
        rid = len(self.calls) + 1
        if peer.version == LEGACY:
            msg = {"jsonrpc": "2.0", "id": rid, "method": effect.method}
            if effect.params is not None:
                msg["params"] = effect.params
            assert_valid(LEGACY_SCHEMA, LEGACY_REQUESTS[effect.method], msg)
            assert_valid(LEGACY_SCHEMA, "ClientRequest", msg)
            return
        assert self.core is not None
        wire = with_meta(
            effect.params,
            protocol_version=MODERN,
            client_info=self.core.client_info,
            capabilities=self.core.capabilities,
            extensions=self.core.extensions,
        )
        if effect.method in EXT_REQUESTS:
            assert_valid(EXT_SCHEMA, EXT_REQUESTS[effect.method], request(effect.method, wire, rid))
        else:
            assert effect.method in REQUEST_DEFS, effect.method
            assert_valid_request(request(effect.method, wire, rid))

    def perform(self, effect: Effect) -> Any:
        if isinstance(effect, Connect):
            return self.peers[effect.server].info()
        if isinstance(effect, PeekEra):  # the era the connection decided (LIFE-4)
            return self.peers[effect.server].info().protocol_era
        if isinstance(effect, Call):
            peer = self.peers[effect.server]
            self._validate(peer, effect)
            self.calls.append(effect)
            if self.on_call is not None:
                self.on_call(effect)
            answer = peer.script.get(effect.method)
            if isinstance(answer, list):
                answer = answer.pop(0) if len(answer) > 1 else answer[0]
            if answer is None:
                raise AssertionError(f"unscripted {effect.method}")
            if isinstance(answer, BaseException):
                raise answer
            if callable(answer):
                return answer(effect.params)
            return json.loads(json.dumps(answer))
        if isinstance(effect, CallHost):
            if effect.fn == self.clock:
                return self.now
            return effect.fn(*effect.args)
        if isinstance(effect, Log):
            self.logs.append(effect)
            return None
        raise AssertionError(effect)


def make(
    peers: dict[str, Peer],
    *,
    handlers: Handlers | None = None,
    extensions: Any = (EXTENSION,),
    **kwargs: Any,
) -> tuple[TaskCore, TaskDriver]:
    driver = TaskDriver(peers)
    entries = [ServerEntry(name, "http", read_timeout=30.0) for name in peers]
    core = TaskCore(
        entries,
        handlers=handlers or Handlers(),
        clock=driver.clock,
        sleep=driver.sleep,
        extensions=extensions,
        **kwargs,
    )
    driver.core = core
    return core, driver
