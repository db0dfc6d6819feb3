"""The client core includes the task and skill operations (issue 23), and what that
costs the usual call: nothing.

- ``ClientCore`` has ``TaskOps`` (before ``ToolOps``: its ``call_tool`` sees tasks
  through) and ``SkillOps``; the shells expose their methods through their method
  tables (``blocking()`` / ``awaiting()``) and the per-server objects.
- A call that cannot meet a task (a cached tool whose ``taskSupport`` is not
  ``required``, the tasks extension not declared) is ``ToolOps``' operation itself:
  no routing layer, not even a ``PeekEra`` (issue 22's per-call cost).
- On a 2026-07-28 connection ``tasks/cancel`` is gated by the declared extension
  (SEP-2663), not by the 2025-11-25 ``tasks.cancel`` capability the session checks
  for handshake-era servers.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from _machine_driver import Harness
from _proto_support import drive

import mcp_io_sync
import mcp_io_trio
from mcp_proto.client import ClientCore, ServerEntry
from mcp_proto.client.scoped import AwaitingMethods, BlockingMethods, ServerMethods
from mcp_proto.client.tools import ToolOps
from mcp_proto.config import stdio_config
from mcp_proto.connection import CallFailed
from mcp_proto.effects import Call, Connect, Effect, PeekEra
from mcp_proto.errors import CapabilityError, RequestTimeoutError
from mcp_proto.handlers import Handlers
from mcp_proto.session import ServerInfo, Session
from mcp_proto.skills import SkillOps
from mcp_proto.tasks import EXTENSION, status_note
from mcp_proto.tasks.ops import TaskOps
from mcp_proto.types import Implementation

TASK_METHODS = (
    "call_tool_as_task",
    "get_task",
    "get_task_result",
    "list_tasks",
    "cancel_task",
    "update_task",
    "wait_for_task",
)
SKILL_METHODS = ("list_skills", "get_skill", "load_skill", "read_skill_file")
TOOLS = [
    {"name": "plain", "inputSchema": {"type": "object"}},
    {"name": "needs", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
]


def test_the_core_includes_tasks_and_skills() -> None:
    mro = ClientCore.__mro__
    assert mro.index(TaskOps) < mro.index(ToolOps) and SkillOps in mro
    assert ClientCore.call_tool is TaskOps.call_tool


@pytest.mark.parametrize("module", [mcp_io_sync, mcp_io_trio])
def test_both_shells_expose_them_with_the_cores_signatures(module: Any) -> None:
    for name in (*TASK_METHODS, *SKILL_METHODS):
        method = getattr(module.Client, name)
        core = getattr(ClientCore, name)
        assert method.__wrapped__ is core, name  # the table's wrapper, written once
        assert inspect.iscoroutinefunction(method) is (module is mcp_io_trio)
    for name in (*TASK_METHODS, "list_skills", "get_skill", "load_skill"):
        scoped_op = ServerMethods.__dict__[name]  # a scoped op: its function's signature
        params = inspect.signature(getattr(scoped_op, "_op", scoped_op)).parameters
        assert "server" not in params, name  # scoped: the server object is the server


def _performer(era: str, seen: list[Effect]) -> Any:
    version = "2025-11-25" if era == "legacy" else "2026-07-28"
    info = ServerInfo(
        version, {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}}, None, None
    )

    def perform(effect: Effect) -> Any:
        seen.append(effect)
        if isinstance(effect, Connect):
            return info
        if isinstance(effect, PeekEra):
            return era
        if isinstance(effect, Call) and effect.method == "tools/list":
            return {"tools": TOOLS}
        if isinstance(effect, Call) and effect.method == "tools/call":
            return {"content": [{"type": "text", "text": "ok"}]}
        return None

    return perform


def test_a_call_that_cannot_meet_a_task_adds_nothing() -> None:
    core = ClientCore([ServerEntry("s", "stdio")], handlers=Handlers())
    seen: list[Effect] = []
    perform = _performer("legacy", seen)
    drive(core.list_tools(), perform)
    seen.clear()
    op = core.call_tool("plain", {})
    assert op.gi_code is ToolOps._call_tool.__code__  # type: ignore[attr-defined]
    assert drive(op, perform).text == "ok"
    # ToolOps' operation alone: one plain Call, no era asked, no task layer.
    assert [type(e) for e in seen] == [Call]
    assert "task" not in seen[0].params


def test_a_task_required_tool_or_a_declared_extension_is_routed() -> None:
    core = ClientCore([ServerEntry("s", "stdio")], handlers=Handlers())
    drive(core.list_tools(), _performer("legacy", []))
    # The tool requires a task: the call goes out task-augmented (2025-11-25).
    op = core.call_tool("needs", {})
    perform = _performer("legacy", [])
    effect = next(op)
    while not (isinstance(effect, Call) and effect.method == "tools/call"):
        effect = op.send(perform(effect))
    assert "task" in effect.params
    op.close()
    declared = ClientCore([ServerEntry("s", "stdio")], handlers=Handlers(), extensions=[EXTENSION])
    seen: list[Effect] = []
    drive(declared.list_tools(), _performer("modern", seen))
    seen.clear()
    op = declared.call_tool("plain", {})
    assert drive(op, _performer("modern", seen)).text == "ok"
    assert any(isinstance(e, PeekEra) for e in seen)  # the era decides how a task is read


@pytest.mark.parametrize(("version", "refused"), [("2025-11-25", True), ("2026-07-28", False)])
def test_tasks_cancel_is_gated_by_the_era(version: str, refused: bool) -> None:
    session = Session(client_info=Implementation("t", "1"), capabilities={})
    session.server = ServerInfo(version, {"tools": {}}, None, None)
    if refused:
        with pytest.raises(CapabilityError, match=r"tasks\.cancel"):
            session.require_capability("tasks/cancel")
    else:
        session.require_capability("tasks/cancel")  # SEP-2663: the extension gates it
    with pytest.raises(CapabilityError):
        session.require_capability("prompts/get")  # other capabilities still checked


# ---------------------------------------------------------------- TASK-19, the machine


@pytest.mark.parametrize("quiet", [False, True])
def test_a_task_augmented_timeout_sends_no_cancelled(quiet: bool) -> None:
    """TASK-19: the machine honours ``start_call(cancel_on_timeout=False)`` (what the
    shells pass from ``Call.cancel_on_timeout``): the call fails with the timeout and
    nothing is written; the default still sends ``notifications/cancelled``."""
    h = Harness(stdio_config(["server"]))
    h.connect_stdio()
    params = {"name": "slow", "arguments": {}, "task": {"ttl": 60000}}
    cid = h.conn.start_call("tools/call", params, now=1.0, timeout=5, cancel_on_timeout=not quiet)
    (sent,) = h.written()
    h.advance(6.0)
    (failed,) = h.take_events()
    assert isinstance(failed, CallFailed) and failed.call_id == cid
    assert isinstance(failed.error, RequestTimeoutError)
    written = h.written()
    if quiet:
        assert written == []
    else:
        assert [m["method"] for m in written] == ["notifications/cancelled"]
        assert written[0]["params"]["requestId"] == sent["id"]


# ---------------------------------------------------------------- NOTIF-2, task status


def test_status_notes_of_both_eras() -> None:
    legacy = {
        "taskId": "t-1",
        "status": "working",
        "statusMessage": "step\n2",
        "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z",
        "ttl": None,
    }
    level, line = status_note("s", "notifications/tasks/status", legacy) or ("", "")
    assert level == "DEBUG" and line == "server 's': task 't-1' is working (step\\x0a2)"
    modern = {**legacy, "status": "cancelled", "ttlMs": 1000}
    del modern["ttl"], modern["statusMessage"]
    assert status_note("s", "notifications/tasks", modern) == (
        "DEBUG",
        "server 's': task 't-1' is cancelled",
    )
    level, line = status_note("s", "notifications/tasks/status", {"taskId": 5}) or ("", "")
    assert level == "WARNING" and "malformed notifications/tasks/status" in line
    assert status_note("s", "notifications/progress", legacy) is None


def test_call_tool_streaming_is_an_iterator_in_each_shell() -> None:
    assert inspect.isgeneratorfunction(mcp_io_sync.Client.call_tool_streaming)
    assert inspect.isasyncgenfunction(mcp_io_trio.Client.call_tool_streaming)
    # The per-server objects (§E3), typed per shell: an iterator, an async iterator.
    for methods, returns in ((BlockingMethods, "Iterator"), (AwaitingMethods, "AsyncIterator")):
        sig = inspect.signature(methods.call_tool_streaming)
        assert "server" not in sig.parameters and "timeout" in sig.parameters
        assert str(sig.return_annotation) == f"{returns}[ToolChunk]"
    assert issubclass(mcp_io_sync.StdioServer, BlockingMethods)
    assert issubclass(mcp_io_trio.StdioServer, AwaitingMethods)


def test_a_2026_request_declares_no_client_tasks() -> None:
    """SEP-2663: the 2026-07-28 tasks extension has no client-hosted tasks, so the
    handshake-era ``tasks`` capability is left out of a modern request's
    clientCapabilities."""
    from mcp_proto.modern.meta import modern_capabilities

    caps = {"sampling": {}, "tasks": {"requests": {"sampling": {"createMessage": {}}}}}
    assert modern_capabilities(caps) == {"sampling": {}}
