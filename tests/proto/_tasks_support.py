"""A scripted driver for the task operations (no I/O, time a number).

``TaskDriver`` is the shared scripted driver (tests/proto/_scripted_driver.py: the
peer's ServerInfo for ``Connect``, ``Call`` answered from a per-server script, the
core's clock and sleep on :attr:`TaskDriver.now`). Every request sent is first checked against its
revision's schema: 2025-11-25 requests against ``schema_2025_11_25.json``; 2026-07-28
task requests against the tasks extension's schema (``modern/schema_tasks_extension.json``,
``schema/draft/schema.json`` of github.com/modelcontextprotocol/ext-tasks at e434597),
the others against the 2026-07-28 schema.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

import attrs
import jsonschema_rs

from mcp_proto.client.router import ServerEntry
from mcp_proto.effects import Call
from mcp_proto.handlers import Handlers
from mcp_proto.tasks import EXTENSION
from mcp_proto.tasks.ops import TaskOps

sys.path.insert(0, str(Path(__file__).parent / "modern"))
from _modern_wire import REQUEST_DEFS, assert_valid_request, request
from _scripted_driver import ScriptedDriver, ScriptedPeer

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
class Peer(ScriptedPeer):
    version: str = LEGACY
    caps: dict[str, Any] = attrs.Factory(lambda: dict(LEGACY_CAPS))
    script: dict[str, Any] = attrs.Factory(dict)


class TaskCore(TaskOps):
    """The task operations on the router, as the client core will include them."""


@attrs.define
class TaskDriver(ScriptedDriver):
    """Every request is validated against its revision's schema (the module's
    docstring); answers are copies, as decoded from the wire."""

    copy_answers: bool = True

    def validate(self, peer: Any, effect: Call) -> None:
        rid = len(self.calls) + 1
        if peer.version == LEGACY:
            msg = {"jsonrpc": "2.0", "id": rid, "method": effect.method}
            if effect.params is not None:
                msg["params"] = effect.params
            assert_valid(LEGACY_SCHEMA, LEGACY_REQUESTS[effect.method], msg)
            assert_valid(LEGACY_SCHEMA, "ClientRequest", msg)
            return
        assert self.core is not None
        wire = self.modern_params(effect, extensions=self.core.extensions)
        if effect.method in EXT_REQUESTS:
            assert_valid(EXT_SCHEMA, EXT_REQUESTS[effect.method], request(effect.method, wire, rid))
        else:
            assert effect.method in REQUEST_DEFS, effect.method
            assert_valid_request(request(effect.method, wire, rid))


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
