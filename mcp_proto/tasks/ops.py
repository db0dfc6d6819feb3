"""The client's task operations, both eras, as sans-IO generators (TASK-1..20).

:class:`TaskOps` is a feature class in the style of :class:`~mcp_proto.client.tools.ToolOps`
(it extends it): the client core that includes it gets ``call_tool_as_task``,
``get_task``, ``get_task_result``, ``list_tasks``, ``cancel_task``, ``update_task``,
``wait_for_task``, and a ``call_tool`` that sees tasks through:

- a 2025-11-25 tool whose ``execution.taskSupport`` is ``"required"`` runs as a task
  (TOOL-18) and its result comes back as the plain call's would;
- a 2026-07-28 server that answers ``resultType: "task"`` (it may, once the client
  declared ``io.modelcontextprotocol/tasks``) is polled transparently (TASK-11).

Either way the result is then checked by ``ToolOps.call_tool`` against the definition
the call went out under (SCH-19, TASK-18).

Effects used: ``Call``, ``Connect``, ``CallHost`` (the host's handlers, and the
shell's ``clock`` and ``sleep`` exactly as the ``input_required`` wait uses them:
:mod:`mcp_proto.modern.mrtr`), ``Log``. No effect of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from .. import deprecations
from ..client import era as _era
from ..client._intercept import intercept
from ..client.router import PASS_THROUGH
from ..client.streaming import hook
from ..client.tools import ToolOps, _check_required
from ..effects import Call, CallHost, Connect, Log, Op, PeekEra
from ..errors import (
    CapabilityError,
    ConnectionError,
    MCPError,
    RemoteProtocolError,
    RequestTimeoutError,
    ServerError,
    ServerNotFound,
    TaskError,
    TaskNotFound,
    ToolCallError,
    TransportError,
    server_error_from,
)
from ..handlers import serve_request
from ..modern.meta import result_type
from ..results import ToolResult
from ..session import ServerInfo
from ..types import Tool
from ._model import (
    EXTENSION,
    Era,
    Task,
    TaskPage,
    TaskStatus,
    parse_create_result,
    parse_list_result,
    parse_task,
    task_of_notification,
)
from ._watch import (
    DEFAULT_WAIT_TIMEOUT,
    Answer,
    Done,
    Expired,
    FetchResult,
    Poll,
    TaskWatch,
    TimedOut,
    Wait,
)

__all__ = ["TaskOps", "task_of_notification"]

#: What a 2026-07-28 task's ``inputRequests`` may ask (SEP-2663: the MRTR
#: ``InputRequest`` union: sampling, roots, elicitation).
_INPUT_METHODS: Final = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})
_NOT_FOUND: Final = -32602  # 2025-11-25 and SEP-2663 § Protocol Errors: unknown task id
#: A placeholder result standing in for a task handle inside an intercepted call.
_TASK_MARK: Final = "io.modelcontextprotocol-client/task"


class TaskOps(ToolOps):
    """Task operations of a client core (both eras)."""

    #: The servers the tasks extension is declared for (TASK-10), found on first use:
    #: the client's declaration and each entry's never change after construction
    #: (the router's updates evolve a server's type and credentials only).
    _task_owners: frozenset[str] | None = None

    # ------------------------------------------------------------------ routing

    def task_server(self, task: Task | str | None, server: Any = None) -> str:
        """The server a task operation goes to (TASK-7): an explicit ``server=`` wins
        (``server=False`` is a ``TypeError``, not "omitted"); else the handle's own;
        a bare id works with one configured server and is a ``ValueError`` with several
        (never guess)."""
        if server is not None:
            return self.select_server(server)
        if isinstance(task, Task) and task.server is not None:
            return self.select_server(task.server)
        if not self.servers:
            raise ServerNotFound("the client has no servers")
        if len(self.servers) > 1:
            what = "list_tasks" if task is None else "a bare task id"
            raise ValueError(f"{what} with several servers configured: pass server=")
        return self.servers[0].name

    def _handle(self, task: Task | str, server: str, era: Era) -> Task:
        if isinstance(task, str):
            return Task.from_dict(task, server=server, era=era)
        if not isinstance(task, Task):
            raise TypeError("task must be a Task or a task id")
        if task.era != era:
            raise TaskError(
                f"task {task.task_id!r} is a {task.era} task; server {server!r} now speaks"
                f" the {era} task protocol",
                task=task,
            )
        if task.is_immediate:
            raise TaskError("this call completed at once: there is no task on the server")
        return task if task.server == server else attrs.evolve(task, server=server)

    def _task_era(self, server: str) -> Op[tuple[Era, ServerInfo]]:
        # The connection decides the era (LIFE-4); its info carries it.
        info: ServerInfo = yield from self._connect(server)
        return ("modern" if info.protocol_era == "modern" else "legacy"), info

    def _extension_declared(self, server: str) -> bool:
        """The client declared the tasks extension for ``server`` (TASK-10: without the
        declaration the server may not answer with a task)."""
        return EXTENSION in self.extensions or EXTENSION in self._entry(server).extensions

    def _require_modern_tasks(self, server: str, info: ServerInfo) -> None:
        if not self._extension_declared(server):
            raise TaskError(
                f"tasks on the 2026-07-28 server {server!r} need extensions="
                f"[{EXTENSION!r}] (the client did not declare it)"
            )
        if not info.has_capability("extensions", EXTENSION):
            raise TaskError(f"server {server!r} does not declare the {EXTENSION} extension")

    # ------------------------------------------------------------------ requests

    def _task_call(
        self,
        server: str,
        method: str,
        params: dict[str, Any],
        timeout: float | None = None,
        *,
        task: Task | None = None,
    ) -> Op[Any]:
        """One task request. An unknown id (-32602) is ``TaskNotFound``; any other
        server or connection failure a ``TaskError`` (TASK-3); timeouts and the like
        pass through as they are."""
        try:
            return (yield Call(server, method, params, timeout))
        except PASS_THROUGH:
            raise
        except ServerError as exc:
            what = f"{method} for task {params.get('taskId')!r} on server {server!r}"
            # (-32602 on tasks/cancel also means "already terminal": a TaskError)
            if exc.code == _NOT_FOUND and method in ("tasks/get", "tasks/result", "tasks/update"):
                raise TaskNotFound(f"{what}: {exc.message}", task=task) from exc
            raise TaskError(f"{what} failed: {exc}", task=task) from exc
        except (TransportError, ConnectionError) as exc:
            raise TaskError(f"{method} on server {server!r} failed: {exc}", task=task) from exc

    def _fetch(self, server: str, task: Task, timeout: float | None = None) -> Op[Task]:
        """``tasks/get`` → the task as the server now reports it (not yet checked
        against the handle)."""
        result = yield from self._task_call(
            server, "tasks/get", {"taskId": task.task_id}, timeout, task=task
        )
        if task.era == "modern":
            result_type(result, method="tasks/get")  # complete (absent is complete)
        return parse_task(result, era=task.era, server=server, where="the tasks/get result")

    # ------------------------------------------------------------------ creation

    def call_tool_as_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        ttl: int | None = None,
        server: Any = None,
        timeout: float | None = None,
    ) -> Op[Task]:
        """Call a tool as a task and return its handle at once (TASK-1, TASK-12).

        2025-11-25: needs the server's ``tasks.requests.tools.call`` and the tool's
        ``taskSupport`` ``optional``/``required`` (else ``TaskError``, nothing sent);
        sends ``params.task = {ttl}``. 2026-07-28: needs the extension declared on both
        sides; the server decides (``ttl`` is ignored): a call it answers at once gives
        a completed handle with ``is_immediate``. Creation failures are ``TaskError``s.
        """
        tool: Tool = yield from self._resolve("tools", name, server)
        owner = tool.server or self._default_server(server)
        era, info = yield from self._task_era(owner)
        args = dict(arguments or {})
        meta = args.pop("_meta", None)  # TOOL-14: hoisted to params._meta
        if meta is not None and deprecations.features_in_meta(meta):
            self._deprecated("logging")
        _check_required(tool, args)
        params: dict[str, Any] = {"name": name, "arguments": args}
        if isinstance(meta, Mapping):
            params["_meta"] = dict(meta)
        if era == "legacy":
            if not info.has_capability("tasks", "requests", "tools", "call"):
                raise TaskError(
                    f"server {owner!r} does not support task-augmented tools/call"
                    " (capability tasks.requests.tools.call)"
                )
            if not tool.supports_task:
                raise TaskError(
                    f"tool {name!r} on server {owner!r} does not support tasks"
                    f" (execution.taskSupport is {tool.task_support or 'unset'})"
                )
            return (yield from self._create_legacy(owner, params, ttl, tool, timeout))
        self._require_modern_tasks(owner, info)
        if ttl is not None:
            yield Log("DEBUG", f"ttl={ttl} ignored: a 2026-07-28 server sets a task's TTL")
        holder: list[Task] = []
        try:
            op = _era.request(self, owner, "tools/call", params, timeout, tool=tool)
            result = yield from intercept(op, self._task_router(holder, tool, None))
        except PASS_THROUGH:
            raise
        except (ServerError, TransportError, ConnectionError) as exc:
            raise TaskError(f"creating a task for tool {name!r} failed: {exc}") from exc
        if holder:
            return holder[0]
        return Task(
            "", TaskStatus.COMPLETED, era="modern", server=owner, result=result, tool=tool.to_dict()
        )

    def _create_legacy(
        self, owner: str, params: dict[str, Any], ttl: int | None, tool: Tool, timeout: float | None
    ) -> Op[Task]:
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0):
            raise ValueError(f"ttl must be a number of milliseconds >= 0, not {ttl!r}")
        sent = dict(params)
        sent["task"] = {} if ttl is None else {"ttl": ttl}
        try:
            # TASK-19: a timeout here sends no notifications/cancelled.
            result = yield Call(
                owner, "tools/call", sent, timeout, tool=tool, cancel_on_timeout=False
            )
        except PASS_THROUGH:
            raise
        except (ServerError, TransportError, ConnectionError) as exc:
            raise TaskError(f"creating a task for tool {tool.name!r} failed: {exc}") from exc
        try:
            task = parse_create_result(result, era="legacy", server=owner)
        except RemoteProtocolError as exc:
            raise TaskError(f"server {owner!r} did not create a task: {exc}") from exc
        return attrs.evolve(task, tool=tool.to_dict())

    def _task_router(
        self, holder: list[Task], tool: Tool, wait: float | None
    ) -> Callable[[Any], Op[Any] | None]:
        """Route a 2026-07-28 ``tools/call``'s requests: a ``resultType: "task"`` answer
        (to the first request or to an ``input_required`` retry: SEP-2663 § Composition
        with MRTR) becomes a handle in ``holder`` — then, with ``wait`` not ``None``,
        the task is waited for and its result stands in for the call's."""

        def route(effect: Any) -> Op[Any] | None:
            if isinstance(effect, Call) and effect.method == "tools/call":
                return self._modern_call(effect, holder, tool, wait)
            return None

        return route

    def _modern_call(
        self, effect: Call, holder: list[Task], tool: Tool, wait: float | None
    ) -> Op[Any]:
        result = yield effect
        if not (isinstance(result, Mapping) and result.get("resultType") == "task"):
            return result
        if not self._extension_declared(effect.server):
            return result  # undeclared: era's check calls it an unknown resultType
        task = parse_create_result(result, era="modern", server=effect.server)
        task = attrs.evolve(task, tool=tool.to_dict())
        if wait is None:
            holder.append(task)
            return {"resultType": "complete", "content": [], _TASK_MARK: task.task_id}
        done = yield from self._wait(
            task, timeout=wait, fresh=True, cancel_on_timeout=True, progress=effect.progress
        )
        return (yield from self._final_result(done))

    # ------------------------------------------------------------------ call_tool

    def _routes_through_tasks(self, tool: Tool, owner: str) -> bool:
        """``call_tool`` sees tasks through (TOOL-18, TASK-11) for a tool that requires
        one, or on a server the tasks extension is declared for (TASK-10): the result
        is the one the plain call would give, checked against the tool's output schema.
        A task's wait is bounded by the call's ``timeout`` (else
        :data:`~mcp_proto.tasks._watch.DEFAULT_WAIT_TIMEOUT`); past it the task is
        cancelled with ``tasks/cancel`` and ``RequestTimeoutError`` raised."""
        # call_tool asks on every call: one set lookup (_extension_declared, once per
        # server and for all calls).
        if tool.task_support == "required":
            return True
        owners = self._task_owners
        if owners is None:
            owners = self._task_owners = frozenset(
                entry.name for entry in self.servers if self._extension_declared(entry.name)
            )
        return owner in owners

    def _through_tasks(self, op: Op[ToolResult], timeout: float | None) -> Op[ToolResult]:
        return self._seen_through(op, timeout)

    def _seen_through(self, op: Op[ToolResult], timeout: float | None) -> Op[ToolResult]:
        wait = DEFAULT_WAIT_TIMEOUT if timeout is None else timeout

        def route(effect: Any) -> Op[Any] | None:
            if isinstance(effect, Call) and effect.method == "tools/call":
                return self._routed_call(effect, wait)
            return None

        return (yield from intercept(op, route))

    def _routed_call(self, effect: Call, wait: float) -> Op[Any]:
        owner = effect.server
        tool = effect.tool if isinstance(effect.tool, Tool) else self._tool_named(effect)
        name = (effect.params or {}).get("name")
        if tool is None and isinstance(name, str):
            # The list call_tool resolved the name in was dropped since (a server that
            # adds tools right after the handshake announces list_changed): whether the
            # tool requires a task is in its definition, so read the list again.
            try:
                tool = yield from self._resolve("tools", name, owner)
            except PASS_THROUGH:
                raise
            except MCPError:
                tool = None  # gone from the list: the server answers the call
        declared = self._extension_declared(owner)
        if not declared and (tool is None or not tool.task_required):
            return (yield effect)  # no task can come of it, in either era
        # call_tool connected the server before its tools/call: its era stands.
        if (yield PeekEra(owner)) == "modern":
            if not declared:
                return (yield effect)  # the server decides; undeclared, it cannot task
            return (yield from self._modern_call(effect, [], tool or _bare_tool(effect), wait))
        if tool is None or not tool.task_required:
            return (yield effect)
        info: ServerInfo = yield Connect(owner)
        if not info.has_capability("tasks", "requests", "tools", "call"):
            raise ToolCallError(
                f"tool {tool.name!r} requires task augmentation, but server {owner!r} does"
                " not declare tasks.requests.tools.call"
            )
        params = dict(effect.params or {})
        task = yield from self._create_legacy(owner, params, None, tool, effect.timeout)
        done = yield from self._wait(
            task, timeout=wait, fresh=True, cancel_on_timeout=True, progress=effect.progress
        )
        return (yield from self._final_result(done))

    def _tool_named(self, effect: Call) -> Tool | None:
        name = (effect.params or {}).get("name")
        if not isinstance(name, str):
            return None
        matches = self._cached_matches("tools", name, effect.server) or []
        return matches[0] if matches else None

    # ------------------------------------------------------------------ get / list / cancel

    def get_task(self, task: Task | str, *, server: Any = None) -> Op[Task]:
        """``tasks/get`` on the task's own server (TASK-3). A handle whose id now names
        another task raises ``TaskReplacedError`` (TASK-17)."""
        owner = self.task_server(task, server)
        era, info = yield from self._task_era(owner)
        handle = self._handle(task, owner, era)
        if era == "modern":
            self._require_modern_tasks(owner, info)
        now = yield from self._now()
        watch = TaskWatch(handle, now=now or 0.0, timeout=None, fresh=False)
        return watch.observe((yield from self._fetch(owner, handle)), now or 0.0)

    def get_task_result(
        self, task: Task | str, *, server: Any = None, timeout: float | None = None
    ) -> Op[dict[str, Any]]:
        """The task's result (TASK-4): 2025-11-25 ``tasks/result`` (blocks until the
        task ends); 2026-07-28: the result ``tasks/get`` carries, waited for. A handle
        carrying its tool definition gets the result checked against it (SCH-19); a
        bare id does not. A failed task raises the server's error; a cancelled one
        ``TaskError``."""
        owner = self.task_server(task, server)
        era, info = yield from self._task_era(owner)
        if isinstance(task, Task) and task.is_immediate:
            handle = task  # answered at once: its result is all there is
        else:
            handle = self._handle(task, owner, era)
        if era == "modern" and not handle.is_immediate:
            self._require_modern_tasks(owner, info)
            handle = yield from self._wait(
                handle, timeout=timeout, fresh=False, cancel_on_timeout=False
            )
        result = yield from self._final_result(handle, timeout=timeout)
        if handle.tool is not None and result.get("isError") is not True:
            definition = Tool.from_dict(dict(handle.tool), server=owner)
            yield from self._check_structured(definition, result, info.protocol_version)
        return result

    def _final_result(self, task: Task, *, timeout: float | None = None) -> Op[dict[str, Any]]:
        owner = task.server or self._default_server(None)
        if task.era == "legacy" and task.result is not None:
            return dict(task.result)  # read on the tasks/result stream while waiting
        if task.era == "legacy":
            params = {"taskId": task.task_id}
            if task.status is TaskStatus.FAILED:
                # § Task Execution Errors: tasks/result returns the underlying request's
                # own JSON-RPC error; it is raised as the plain call would raise it.
                try:
                    result = yield Call(owner, "tasks/result", params, timeout)
                except (TransportError, ConnectionError) as exc:
                    if isinstance(exc, PASS_THROUGH):
                        raise
                    raise TaskError(f"tasks/result on {owner!r} failed: {exc}", task=task) from exc
            else:
                result = yield from self._task_call(
                    owner, "tasks/result", params, timeout, task=task
                )
            if not isinstance(result, dict):
                raise RemoteProtocolError(f"server {owner!r} sent a malformed tasks/result result")
            return result
        if task.status is TaskStatus.COMPLETED and task.result is not None:
            return dict(task.result)
        if task.status is TaskStatus.FAILED:
            # SEP-2663: failed carries the JSON-RPC error the request resulted in.
            raise server_error_from(dict(task.error or {}), method="tools/call")
        if task.status is TaskStatus.CANCELLED:
            raise TaskError(f"task {task.task_id!r} on server {owner!r} was cancelled", task=task)
        raise TaskError(f"task {task.task_id!r} has not finished", task=task)

    def list_tasks(self, *, cursor: str | None = None, server: Any = None) -> Op[TaskPage]:
        """One page of ``tasks/list`` (TASK-5): 2025-11-25 servers declaring
        ``tasks.list``; the extension has no listing (``CapabilityError``)."""
        owner = self.task_server(None, server)
        era, info = yield from self._task_era(owner)
        if era == "modern":
            raise CapabilityError(
                f"server {owner!r} speaks 2026-07-28: the tasks extension has no tasks/list"
            )
        if not info.has_capability("tasks", "list"):
            raise CapabilityError(f"server {owner!r} does not support tasks/list")
        if cursor is not None and not isinstance(cursor, str):
            raise TypeError("cursor must be a string")
        params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
        result = yield from self._task_call(owner, "tasks/list", params)
        return parse_list_result(result, server=owner)

    def cancel_task(self, task: Task | str, *, server: Any = None) -> Op[Task]:
        """``tasks/cancel`` (TASK-6). A handle already terminal is a ``TaskError``,
        nothing sent. 2025-11-25: gated on ``tasks.cancel``, the answer is the task;
        2026-07-28: an ack (cancellation is cooperative), so the task is read back."""
        owner = self.task_server(task, server)
        era, info = yield from self._task_era(owner)
        handle = self._handle(task, owner, era)
        if handle.is_terminal:
            raise TaskError(
                f"task {handle.task_id!r} is already {handle.status.value}", task=handle
            )
        if era == "legacy" and not info.has_capability("tasks", "cancel"):
            raise CapabilityError(f"server {owner!r} does not support tasks/cancel")
        if era == "modern":
            self._require_modern_tasks(owner, info)
        result = yield from self._task_call(
            owner, "tasks/cancel", {"taskId": handle.task_id}, task=handle
        )
        watch = TaskWatch(handle, now=0.0, timeout=None, fresh=False)
        if era == "legacy":
            return watch.observe(
                parse_task(result, era=era, server=owner, where="the tasks/cancel result"), 0.0
            )
        result_type(result, method="tasks/cancel")
        try:
            return watch.observe((yield from self._fetch(owner, handle)), 0.0)
        except TaskNotFound:
            # SEP-2663: a server MAY delete a cancelled task at once.
            return attrs.evolve(handle, status=TaskStatus.CANCELLED)

    def update_task(
        self, task: Task | str, input_responses: Mapping[str, Any], *, server: Any = None
    ) -> Op[Task]:
        """``tasks/update`` with answers the host produced itself (TASK-14, 2026-07-28
        only). The handle comes back with those keys marked answered."""
        owner = self.task_server(task, server)
        era, info = yield from self._task_era(owner)
        handle = self._handle(task, owner, era)
        if era != "modern":
            raise TaskError(f"server {owner!r} speaks 2025-11-25: it has no tasks/update")
        self._require_modern_tasks(owner, info)
        if not isinstance(input_responses, Mapping) or not all(
            isinstance(k, str) for k in input_responses
        ):
            raise TypeError("input_responses must map input request keys to answers")
        yield from self._send_update(owner, handle, dict(input_responses))
        return attrs.evolve(handle, answered=handle.answered | set(input_responses))

    def _send_update(self, owner: str, task: Task, responses: dict[str, Any]) -> Op[None]:
        params = {"taskId": task.task_id, "inputResponses": responses}
        result = yield from self._task_call(owner, "tasks/update", params, task=task)
        result_type(result, method="tasks/update")

    # ------------------------------------------------------------------ waiting

    def wait_for_task(
        self,
        task: Task | str,
        *,
        timeout: float | None = None,
        server: Any = None,
        cancel_on_timeout: bool = False,
    ) -> Op[Task]:
        """Poll at the server's pace until the task ends (TASK-13): 2026-07-28
        ``inputRequests`` are answered through the handlers with ``tasks/update``
        (answers kept across failures, MRTR-8); 2025-11-25 ``input_required`` opens
        ``tasks/result``, on which the server asks. Returns the terminal task
        (``task.result`` in 2026-07-28). Past ``timeout`` (default 120 s, TIME-5):
        ``RequestTimeoutError`` (and ``tasks/cancel`` first with
        ``cancel_on_timeout``); past its TTL: ``TaskNotFound``."""
        if isinstance(task, Task) and task.is_immediate:
            return task  # answered at once: already finished
        owner = self.task_server(task, server)
        era, info = yield from self._task_era(owner)
        handle = self._handle(task, owner, era)
        if era == "modern":
            self._require_modern_tasks(owner, info)
        return (
            yield from self._wait(
                handle, timeout=timeout, fresh=False, cancel_on_timeout=cancel_on_timeout
            )
        )

    def _wait(
        self,
        task: Task,
        *,
        timeout: float | None,
        fresh: bool,
        cancel_on_timeout: bool,
        progress: Any = None,
    ) -> Op[Task]:
        """Poll ``task`` to its end (see :meth:`wait_for_task`). ``progress``: the
        creating call's progress callback; a ``call_tool_streaming`` one is shown the
        task at the start and at each change of status or message, and the input
        requests before they are answered (TaskChunk, InputChunk)."""
        owner = task.server or self._default_server(None)
        clock = self.clock or _era._no_clock
        sleep = self.sleep or _era._no_clock
        on_task, on_input = hook(progress, "on_task"), hook(progress, "on_input")
        if on_task is not None:
            yield CallHost(on_task, (task,))
        shown = (task.status, task.status_message)
        now: float = yield CallHost(clock)
        limit = DEFAULT_WAIT_TIMEOUT if timeout is None else timeout
        watch = TaskWatch(task, now=now, timeout=limit, fresh=fresh)
        fetched: Any = None
        while True:
            action = watch.next_action(now)
            if isinstance(action, Done):
                if fetched is not None and action.task.is_completed:
                    return attrs.evolve(action.task, result=fetched)
                return action.task
            if isinstance(action, Wait):
                yield CallHost(sleep, (action.seconds,))
            elif isinstance(action, Poll):
                watch.polled(now)
                observed = yield from self._fetch(owner, watch.task, _remaining(watch, now))
                now = yield CallHost(clock)
                watch.observe(observed, now)
                if on_task is not None and (observed.status, observed.status_message) != shown:
                    shown = (observed.status, observed.status_message)
                    yield CallHost(on_task, (watch.task,))
                continue
            elif isinstance(action, Answer):
                if on_input is not None:
                    yield CallHost(on_input, (action.requests,))
                yield from self._answer(owner, watch, action.requests)
            elif isinstance(action, FetchResult):
                # 2025-11-25 § Input Required Status: the server sends its requests on
                # the tasks/result stream; the shell serves them with the handlers.
                try:
                    fetched = yield from self._task_call(
                        owner, "tasks/result", {"taskId": watch.task.task_id},
                        _remaining(watch, now), task=watch.task,
                    )  # fmt: skip
                except TaskNotFound:
                    raise
                except TaskError:
                    # The underlying request's own JSON-RPC error (§ Task Execution
                    # Errors): the next poll shows the task failed.
                    fetched = None
                if not isinstance(fetched, dict):
                    fetched = None
                watch.result_fetched()
                watch.last_poll = None  # read the terminal status at once
            elif isinstance(action, TimedOut):
                if cancel_on_timeout:
                    yield from self._cancel_quietly(owner, watch.task)
                raise RequestTimeoutError(
                    f"task {watch.task.task_id!r} on server {owner!r} did not finish within"
                    f" {limit:g} s",
                    method="tasks/get",
                )
            elif isinstance(action, Expired):
                raise TaskNotFound(
                    f"task {watch.task.task_id!r} on server {owner!r} outlived its TTL"
                    f" ({action.ttl_ms} ms) without finishing",
                    task=watch.task,
                )
            now = yield CallHost(clock)

    def _cancel_quietly(self, owner: str, task: Task) -> Op[None]:
        """TASK-19: a timed-out task is cancelled with ``tasks/cancel``; whether that
        works does not change the timeout the caller gets."""
        try:
            yield from self._task_call(owner, "tasks/cancel", {"taskId": task.task_id}, task=task)
        except MCPError as exc:
            yield Log("WARNING", f"tasks/cancel of {task.task_id!r} on {owner!r} failed: {exc}")

    def _answer(self, owner: str, watch: TaskWatch, requests: Mapping[str, Any]) -> Op[None]:
        """Answer a 2026-07-28 task's input requests with the host's handlers and send
        them in one ``tasks/update``. At the first that cannot be answered, the answers
        already produced are still sent (MRTR-8, TASK-20) and a ``TaskError`` carrying
        the handle raised; waiting again asks only what is left."""
        answered: dict[str, Any] = {}
        failure: str | None = None
        for key, request in requests.items():
            method = request["method"]
            params = dict(request.get("params") or {})
            if method not in _INPUT_METHODS:
                failure = f"input request {key!r} has the unknown method {method!r}"
                break
            if method == "elicitation/create" and "elicitationId" in params:
                del params["elicitationId"]  # ELIC-8: the revision has none
            reply = yield from serve_request(self.handlers, method, params, server=owner)
            if reply.is_error:
                failure = f"input request {key!r} could not be answered ({reply.message})"
                break
            answered[key] = reply.result
        if answered:
            yield from self._send_update(owner, watch.task, answered)
            watch.answered(set(answered))
        if failure is not None:
            raise TaskError(
                f"task {watch.task.task_id!r} on server {owner!r}: {failure}", task=watch.task
            )


def _remaining(watch: TaskWatch, now: float) -> float | None:
    if watch.deadline is None:
        return None
    return max(0.0, watch.deadline - now)


def _bare_tool(effect: Call) -> Tool:
    name = (effect.params or {}).get("name")
    return Tool(name=name if isinstance(name, str) and name else "?", server=effect.server)
