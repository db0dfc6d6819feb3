"""The task operations against the scripted tasks-extension server
(tests/servers/tasks_modern.py), in-process: each ``Call`` becomes the JSON-RPC request
the connection would send (per-request ``_meta`` with the client's capabilities and
extensions), validated against the 2026-07-28 schema or the extension's, answered by
the server's logic; time is a number the driver's sleep advances. The server checks
every answer it sends against the schemas itself.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from _proto_support import drive
from _tasks_support import EXT_REQUESTS, EXT_SCHEMA, assert_valid

from mcp_proto import errors
from mcp_proto.client.router import ServerEntry
from mcp_proto.effects import Call, CallHost, Connect, Effect, Log, PeekEra
from mcp_proto.errors import server_error_from
from mcp_proto.handlers import Handlers
from mcp_proto.modern.meta import with_meta
from mcp_proto.session import ServerInfo
from mcp_proto.tasks import EXTENSION, Task
from mcp_proto.tasks.ops import TaskOps

sys.path.insert(0, str(Path(__file__).parent / "modern"))
sys.path.insert(0, str(Path(__file__).parents[1] / "servers"))
from _modern_wire import assert_valid_request, request
from tasks_modern import TasksServer

VERSION = "2026-07-28"


class Core(TaskOps):
    pass


class InProcess:
    """The shell and the connection, played in-process against ``TasksServer``."""

    def __init__(self, server: TasksServer, *, extensions: Any = (EXTENSION,), **kw: Any) -> None:
        self.server = server
        self.now = 0.0
        self.sleeps: list[float] = []
        self.sent: list[dict[str, Any]] = []
        self.logs: list[str] = []
        self.core = Core(
            [ServerEntry("tasks", "stdio", read_timeout=30.0)],
            handlers=kw.pop("handlers", Handlers()),
            clock=self.clock,
            sleep=self.sleep,
            extensions=extensions,
            **kw,
        )
        self.info: ServerInfo | None = None

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def rpc(self, method: str, params: dict[str, Any] | None) -> Any:
        wire = with_meta(
            params,
            protocol_version=VERSION,
            client_info=self.core.client_info,
            capabilities=self.core.capabilities,
            extensions=self.core.extensions,
        )
        message = request(method, wire, len(self.sent) + 1)
        if method in EXT_REQUESTS:
            assert_valid(EXT_SCHEMA, EXT_REQUESTS[method], message)
        else:
            assert_valid_request(message)
        self.sent.append(message)
        reply = self.server.handle(message, self.now)
        assert reply is not None
        if "error" in reply:
            raise server_error_from(reply["error"], method=method)
        return reply["result"]

    def perform(self, effect: Effect) -> Any:
        if isinstance(effect, Connect):
            if self.info is None:
                result = self.rpc("server/discover", None)
                self.info = ServerInfo(VERSION, result["capabilities"], None, None)
            return self.info
        if isinstance(effect, PeekEra):  # the era the connection decided, once connected
            return None if self.info is None else self.info.protocol_era
        if isinstance(effect, Call):
            return self.rpc(effect.method, effect.params)
        if isinstance(effect, CallHost):
            return self.now if effect.fn == self.clock else effect.fn(*effect.args)
        if isinstance(effect, Log):
            self.logs.append(effect.message)
            return None
        raise AssertionError(effect)

    def run(self, op: Any) -> Any:
        return drive(op, self.perform)

    def methods(self) -> list[str]:
        return [m["method"] for m in self.sent]


def name_handler(message: str, schema: Any) -> dict[str, Any]:
    return {"name": message.split()[0].upper()}


def test_a_task_that_needs_input_twice() -> None:
    s = InProcess(TasksServer(), handlers=Handlers(elicitation=name_handler))
    result = s.run(s.core.call_tool("two_inputs"))
    assert result["content"][0]["text"] == "FIRST and SECOND"
    updates = [m["params"]["inputResponses"] for m in s.sent if m["method"] == "tasks/update"]
    assert [list(u) for u in updates] == [["first"], ["second"]]
    assert "notifications/cancelled" not in s.methods()


def test_a_failing_task_raises_its_error() -> None:
    s = InProcess(TasksServer())
    with pytest.raises(errors.ServerError) as info:
        s.run(s.core.call_tool("fails"))
    assert info.value.code == -32603 and "rate limited" in str(info.value)


def test_a_task_outliving_its_ttl() -> None:
    s = InProcess(TasksServer())
    with pytest.raises(errors.TaskNotFound):
        s.run(s.core.call_tool("outlives_ttl", timeout=60))
    assert s.now == pytest.approx(2.0)  # the TTL, not the timeout, ended the wait


def test_an_id_reused_for_a_new_task() -> None:
    s = InProcess(TasksServer())
    first = s.run(s.core.call_tool_as_task("reused_id"))
    s.run(s.core.call_tool_as_task("reused_id"))  # the server hands "reused" out again
    with pytest.raises(errors.TaskReplacedError):
        s.run(s.core.get_task(first))


def test_poll_interval_zero_and_one_hour() -> None:
    s = InProcess(TasksServer())
    assert s.run(s.core.call_tool("poll_zero"))["content"][0]["text"] == "done"
    assert s.sleeps == pytest.approx([0.1, 0.1, 0.1])  # floored, never a busy loop
    s = InProcess(TasksServer())
    with pytest.raises(errors.RequestTimeoutError):
        s.run(s.core.call_tool("poll_hour", timeout=5))
    assert s.sleeps == [5.0] and s.methods()[-1] == "tasks/cancel"
    assert s.server.tasks["task-1"].status == "cancelled"


def test_task_results_are_validated_against_the_creating_definition() -> None:
    s = InProcess(TasksServer(), validate_structured_content="strict")
    with pytest.raises(errors.ValidationError):
        s.run(s.core.call_tool("bad_output"))


def test_a_client_without_the_extension_gets_no_task() -> None:
    s = InProcess(TasksServer(), extensions=())
    with pytest.raises(errors.MissingRequiredClientCapabilityError):
        s.run(s.core.call_tool("two_inputs"))


def test_a_handle_continued_by_another_client() -> None:
    server = TasksServer()
    a = InProcess(server, handlers=Handlers(elicitation=name_handler))
    task = a.run(a.core.call_tool_as_task("two_inputs"))
    b = InProcess(server, handlers=Handlers(elicitation=name_handler))
    b.now = a.now
    done = b.run(b.core.wait_for_task(Task.from_dict(task.to_dict())))
    assert done.is_completed and done.result is not None
    assert done.result["content"][0]["text"] == "FIRST and SECOND"


def test_a_handle_cancelled_by_another_client() -> None:
    # TASK-16: the serialised handle names the same task in a second client, whose
    # tasks/cancel the first client then sees.
    from mcp_proto.tasks import TaskStatus

    server = TasksServer()
    a = InProcess(server, handlers=Handlers(elicitation=name_handler))
    task = a.run(a.core.call_tool_as_task("two_inputs"))
    b = InProcess(server)
    b.now = a.now
    cancelled = b.run(b.core.cancel_task(Task.from_dict(task.to_dict())))
    assert cancelled.task_id == task.task_id and cancelled.status is TaskStatus.CANCELLED
    assert "tasks/cancel" in b.methods() and "tasks/cancel" not in a.methods()
    assert a.run(a.core.get_task(task)).status is TaskStatus.CANCELLED
