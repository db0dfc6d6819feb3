"""The task operations against a real server: ``@modelcontextprotocol/server-everything``
(npm, tests/peers) over stdio, through the connection machine and the reference driver
of tests/test_machine_real.py (a test helper, not a shell: the shells do not include
the task operations yet). Its 2025-11-25 task API: ``simulate-research-query`` (a
task-only tool; with ``ambiguous`` the server asks for a clarification on the
``tasks/result`` stream) and ``trigger-sampling-request-async`` (the server asks the
client to run its sampling request as a task, then polls the client's ``tasks/get``
and reads ``tasks/result``).

Time is real here (the server's stages take a second each): the operations get the
monotonic clock and ``time.sleep``; the assertions are on messages and states.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from pathlib import Path
from typing import Any

import pytest
from test_machine_real import Driver, everything_http_server

from mcp_proto.client.router import ServerEntry
from mcp_proto.config import stdio_config, streamable_http_config
from mcp_proto.connection import CallFailed, CallSucceeded, Connected
from mcp_proto.effects import Call, CallHost, Connect, Effect, Log, PeekEra
from mcp_proto.handlers import Handlers, Reply
from mcp_proto.tasks import Task, TaskStatus
from mcp_proto.tasks.ops import TaskOps
from mcp_proto.tasks.store import PENDING, ClientTaskStore, client_tasks_capability, serve_as_task

ROOT = Path(__file__).resolve().parent.parent
EVERYTHING = ROOT / "tests" / "peers" / "node_modules" / ".bin" / "mcp-server-everything"

pytestmark = pytest.mark.skipif(not EVERYTHING.exists(), reason="make peers not run")


class Core(TaskOps):
    pass


class TaskDriver(Driver):
    """The reference driver, answering server requests through the core's handlers
    and the client's task store, and performing the task operations' effects."""

    def __init__(self, handlers: Handlers, url: str | None) -> None:
        self.handlers = handlers
        caps: dict[str, Any] = {"elicitation": {"form": {}}, "sampling": {}}
        caps["tasks"] = client_tasks_capability(handlers)
        config = (
            stdio_config([str(EVERYTHING), "stdio"], read_timeout=20.0)
            if url is None
            else streamable_http_config(url, read_timeout=20.0)
        )
        super().__init__(config, caps)
        ids = itertools.count(1)
        self.store = ClientTaskStore(
            new_id=lambda: f"client-task-{next(ids)}", timestamp=lambda: "2026-12-03T00:00:00Z"
        )
        self.core = Core(
            [ServerEntry("everything", "stdio", read_timeout=20.0)],
            handlers=handlers,
            clock=time.monotonic,
            sleep=time.sleep,
        )
        self.served: list[str] = []
        self.replies: dict[str, Any] = {}

    def _perform(self) -> None:
        conn = self.conn
        while True:
            frames = conn.frames_to_send()
            for frame in frames:
                self._do(frame)
            answered = False
            event = conn.next_event()
            while event is not conn_need_data():
                self.events.append(event)
                if type(event).__name__ == "ServerRequest":
                    self._serve(event)
                    answered = True
                event = conn.next_event()
            if not frames and not answered:
                return

    def _serve(self, request: Any) -> None:
        now = time.monotonic()
        self.served.append(request.method)
        params = request.params or {}
        if request.method.startswith("tasks/"):
            reply = self.store.serve(request.method, params, now=now)
            assert reply is not PENDING  # the handler ran before the first poll
        elif isinstance(params.get("task"), dict):
            reply, op = serve_as_task(
                self.store, self.handlers, request.method, params,
                server="everything", now=now, clock=time.monotonic,
            )  # fmt: skip
            if op is not None:
                _run_host_op(op)
        else:
            from mcp_proto.handlers import serve_request

            reply = _run_host_op(serve_request(self.handlers, request.method, params, server="e"))
        assert isinstance(reply, Reply)
        self.replies.setdefault(request.method, reply.result)
        if reply.is_error:
            self.conn.refuse(request.request_id, reply.code or -32603, reply.message or "", now=now)
        else:
            self.conn.answer(request.request_id, reply.result, now=now)

    def perform(self, effect: Effect) -> Any:
        if isinstance(effect, Connect):
            if not any(isinstance(e, Connected) for e in self.events):
                self.call("ping")
            return next(e.info for e in self.events if isinstance(e, Connected))
        if isinstance(effect, PeekEra):  # the era the connection decided, if connected
            info = next((e.info for e in self.events if isinstance(e, Connected)), None)
            return None if info is None else info.protocol_era
        if isinstance(effect, Call):
            outcome = self.call(effect.method, effect.params, timeout=effect.timeout)
            if isinstance(outcome, CallFailed):
                raise outcome.error
            assert isinstance(outcome, CallSucceeded)
            return outcome.result
        if isinstance(effect, CallHost):
            return effect.fn(*effect.args)
        if isinstance(effect, Log):
            return None
        raise AssertionError(effect)

    def run(self, op: Any) -> Any:
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                effect = op.throw(error) if error is not None else op.send(value)
            except StopIteration as stop:
                return stop.value
            value, error = None, None
            try:
                value = self.perform(effect)
            except Exception as exc:
                error = exc

    def sent(self, method: str) -> list[dict[str, Any]]:
        return [c for c in self.calls_sent if c["method"] == method]

    def call(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> Any:
        self.calls_sent.append({"method": method, "params": params})
        return super().call(method, params, **kw)

    calls_sent: list[dict[str, Any]]


def conn_need_data() -> Any:
    from mcp_proto import NEED_DATA

    return NEED_DATA


def _run_host_op(op: Any) -> Any:
    value: Any = None
    while True:
        try:
            effect = op.send(value)
        except StopIteration as stop:
            return stop.value
        value = effect.fn(*effect.args) if isinstance(effect, CallHost) else None


@pytest.fixture(params=["stdio", "streamable_http"])
def everything(request: pytest.FixtureRequest) -> Any:
    made: list[TaskDriver] = []
    with contextlib.ExitStack() as stack:
        url = None
        if request.param == "streamable_http":
            url = stack.enter_context(everything_http_server("streamableHttp")).url

        def make(handlers: Handlers) -> TaskDriver:
            d = TaskDriver(handlers, url)
            d.calls_sent = []
            made.append(d)
            return d

        yield make
        for d in made:
            d.close()


def pick(message: str, schema: Any) -> dict[str, Any]:
    options = schema["properties"]["interpretation"]["oneOf"]
    return {"interpretation": options[0]["const"]}


def test_research_query_runs_as_a_task(everything: Any) -> None:
    d = everything(Handlers(elicitation=pick, sampling=lambda m: "x"))
    result = d.run(d.core.call_tool("simulate-research-query", {"topic": "tasks"}, timeout=60))
    assert "Research Report: tasks" in result["content"][0]["text"]
    (create,) = d.sent("tools/call")
    assert "task" in create["params"]  # task-augmented, as the tool requires
    assert d.sent("tasks/get") and d.sent("tasks/result")


def test_ambiguous_research_query_asks_on_the_result_stream(everything: Any) -> None:
    d = everything(Handlers(elicitation=pick, sampling=lambda m: "x"))
    task = d.run(
        d.core.call_tool_as_task("simulate-research-query", {"topic": "python", "ambiguous": True})
    )
    assert task.status is TaskStatus.WORKING and task.server == "everything"
    done = d.run(d.core.wait_for_task(task, timeout=60))
    assert done.is_completed
    assert "elicitation/create" in d.served  # asked on tasks/result (input_required)
    result = d.run(d.core.get_task_result(done))
    assert "Clarification" in result["content"][0]["text"]


def test_list_and_cancel(everything: Any) -> None:
    d = everything(Handlers(elicitation=pick, sampling=lambda m: "x"))
    task = d.run(d.core.call_tool_as_task("simulate-research-query", {"topic": "x"}))
    page = d.run(d.core.list_tasks())
    assert task.task_id in [t.task_id for t in page.tasks]
    cancelled = d.run(d.core.cancel_task(task))
    assert cancelled.status is TaskStatus.CANCELLED
    again = d.run(d.core.get_task(Task.from_dict(task.to_dict())))
    assert again.status is TaskStatus.CANCELLED


def test_the_server_runs_sampling_on_the_client_as_a_task(everything: Any) -> None:
    d = everything(Handlers(elicitation=pick, sampling=lambda messages: "sampled text"))
    result = d.run(d.core.call_tool("trigger-sampling-request-async", {"prompt": "hi"}, timeout=60))
    assert "sampled text" in str(result)
    assert d.served[0] == "sampling/createMessage" and "tasks/get" in d.served
    assert "task" in d.replies["sampling/createMessage"]  # answered with a CreateTaskResult
    assert "tasks/result" in d.served
