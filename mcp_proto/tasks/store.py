"""The client's side of 2025-11-25 tasks: running a server's request as a task.

A 2025-11-25 server may augment its ``sampling/createMessage`` or ``elicitation/create``
request with ``params.task = {ttl}`` when the client declared
``tasks.requests.sampling.createMessage`` / ``tasks.requests.elicitation.create``
(``basic/utilities/tasks.mdx`` § Client Capabilities). The client, now the receiver,
answers at once with a ``CreateTaskResult``, runs the host's handler, and answers the
server's ``tasks/get``, ``tasks/result``, ``tasks/list`` and ``tasks/cancel`` about the
task from a :class:`ClientTaskStore`. (The 2026-07-28 extension has no client-hosted
tasks: SEP-2663 § Motivation.)

The store is pure and bounded: at most ``max_tasks`` tasks and ``max_bytes`` of stored
results (JSON size); every task expires ``ttl`` after its creation (the server's
request, clamped to ``max_ttl_ms``; 2025-11-25 § Resource Management: receivers
SHOULD enforce maximum TTLs and limits on concurrent tasks). Time comes in as ``now``
(the shell's monotonic clock); task ids and ISO 8601 timestamps come from callables
the shell injects (ids MUST be cryptographically secure when tasks are not bound to an
authorization context: § Security Considerations).

:func:`serve_as_task` is the operation for one task-augmented request: it returns the
``CreateTaskResult`` reply and an operation that runs the handler (through
:func:`~mcp_proto.handlers.serve_request`) and records the outcome.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from .. import jsonrpc
from ..effects import CallHost, Op
from ..handlers import Handlers, Reply, echo_related_task, serve_request
from ._model import RELATED_TASK, TERMINAL, TaskStatus

__all__ = [
    "CLIENT_TASK_METHODS",
    "PENDING",
    "ClientTaskStore",
    "client_tasks_capability",
    "echo_related_task",
    "serve_as_task",
]

#: The server requests a client may run as tasks, and the capability key of each.
CLIENT_TASK_METHODS: Final[Mapping[str, tuple[str, str]]] = {
    "sampling/createMessage": ("sampling", "createMessage"),
    "elicitation/create": ("elicitation", "create"),
}
_PAGE: Final = 50


class _Pending:
    """``tasks/result`` of a task that has not ended: the receiver answers when it
    ends (2025-11-25 § Retrieving Task Results: it blocks). The shell keeps the request
    and serves it again after :meth:`ClientTaskStore.finish`."""

    def __repr__(self) -> str:
        return "PENDING"


PENDING: Final = _Pending()


def client_tasks_capability(handlers: Handlers) -> dict[str, Any]:
    """The client's ``tasks`` capability for what the host registered (CAP-4 in
    spirit: declared only with a handler to run)."""
    requests: dict[str, Any] = {}
    if handlers.sampling is not None:
        requests["sampling"] = {"createMessage": {}}
    if handlers.elicitation is not None:
        requests["elicitation"] = {"create": {}}
    if not requests:
        return {}
    return {"list": {}, "cancel": {}, "requests": requests}


@attrs.define
class _Entry:
    task_id: str
    method: str
    status: TaskStatus
    created: float
    created_at: str
    updated_at: str
    ttl_ms: int
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: Reply | None = None
    size: int = 0

    def wire(self, poll_interval_ms: int) -> dict[str, Any]:
        out: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status.value,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.updated_at,
            "ttl": self.ttl_ms,
            "pollInterval": poll_interval_ms,
        }
        if self.status_message is not None:
            out["statusMessage"] = self.status_message
        return out


class ClientTaskStore:
    """Tasks the client runs for its servers, bounded in count, bytes and time."""

    def __init__(
        self,
        *,
        new_id: Callable[[], str],
        timestamp: Callable[[], str],
        max_tasks: int = 64,
        max_bytes: int = 8 * 2**20,
        default_ttl_ms: int = 60_000,
        max_ttl_ms: int = 3_600_000,
        poll_interval_ms: int = 1_000,
    ) -> None:
        if max_tasks < 1 or max_bytes < 1 or default_ttl_ms < 0 or max_ttl_ms < default_ttl_ms:
            raise ValueError("bad task store limits")
        self._new_id = new_id
        self._timestamp = timestamp
        self.max_tasks = max_tasks
        self.max_bytes = max_bytes
        self.default_ttl_ms = default_ttl_ms
        self.max_ttl_ms = max_ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self._tasks: dict[str, _Entry] = {}  # in creation order
        self.stored_bytes = 0

    def __len__(self) -> int:
        return len(self._tasks)

    # ------------------------------------------------------------------ lifecycle

    def expire(self, now: float) -> None:
        """Drop tasks past their TTL (§ Resource Management: clean up promptly)."""
        for task_id in [t for t, e in self._tasks.items() if now >= e.created + e.ttl_ms / 1000]:
            self._drop(task_id)

    def _drop(self, task_id: str) -> None:
        entry = self._tasks.pop(task_id)
        self.stored_bytes -= entry.size

    def create(self, method: str, ttl: Any, *, now: float) -> Reply:
        """A new working task for ``method``; the reply is the ``CreateTaskResult``, or
        an error when the store is full of tasks still running (-32603)."""
        self.expire(now)
        if len(self._tasks) >= self.max_tasks:
            finished = [t for t, e in self._tasks.items() if e.status in TERMINAL]
            if not finished:
                return Reply(code=jsonrpc.INTERNAL_ERROR, message="Too many tasks")
            self._drop(finished[0])  # the oldest finished one
        if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0:
            ttl = self.default_ttl_ms
        task_id = self._new_id()
        if not isinstance(task_id, str) or not task_id or task_id in self._tasks:
            raise ValueError("new_id must give a fresh non-empty string")
        stamp = self._timestamp()
        entry = _Entry(
            task_id, method, TaskStatus.WORKING, now, stamp, stamp, min(ttl, self.max_ttl_ms)
        )
        self._tasks[task_id] = entry
        return Reply(result={"task": entry.wire(self.poll_interval_ms)})

    def finish(self, task_id: str, reply: Reply, *, now: float) -> bool:
        """The handler's outcome for ``task_id``: ``completed`` with its result, or
        ``failed`` with its error. Ignored (``False``) when the task was cancelled or
        is gone: once cancelled a task stays cancelled (§ Task Cancellation). A result
        that cannot fit in ``max_bytes`` (after dropping finished tasks, oldest first)
        fails the task instead."""
        entry = self._tasks.get(task_id)
        if entry is None or entry.status in TERMINAL:
            return False
        entry.updated_at = self._timestamp()
        if reply.is_error:
            entry.status = TaskStatus.FAILED
            entry.error = reply
            entry.status_message = reply.message
            return True
        size = len(json.dumps(reply.result, separators=(",", ":"), default=str))
        for other in [t for t, e in self._tasks.items() if e.status in TERMINAL and e.result]:
            if self.stored_bytes + size <= self.max_bytes:
                break
            self._drop(other)
        if self.stored_bytes + size > self.max_bytes:
            entry.status = TaskStatus.FAILED
            entry.error = Reply(code=jsonrpc.INTERNAL_ERROR, message="Result too large")
            entry.status_message = "Result too large"
            return True
        entry.status = TaskStatus.COMPLETED
        entry.result = dict(reply.result) if isinstance(reply.result, Mapping) else {}
        entry.size = size
        self.stored_bytes += size
        return True

    def is_cancelled(self, task_id: str) -> bool:
        entry = self._tasks.get(task_id)
        return entry is not None and entry.status is TaskStatus.CANCELLED

    # ------------------------------------------------------------------ the server's requests

    def serve(self, method: str, params: Any, *, now: float) -> Reply | _Pending:
        """Answer the server's ``tasks/get``, ``tasks/result``, ``tasks/list`` or
        ``tasks/cancel`` (an unknown or expired id, a bad cursor, cancelling a finished
        task: -32602, § Protocol Errors). ``tasks/result`` of a running task is
        :data:`PENDING`."""
        self.expire(now)
        params = params if isinstance(params, Mapping) else {}
        if method == "tasks/list":
            return self._list(params.get("cursor"))
        task_id = params.get("taskId")
        entry = self._tasks.get(task_id) if isinstance(task_id, str) else None
        if entry is None:
            return Reply(
                code=jsonrpc.INVALID_PARAMS, message="Failed to retrieve task: Task not found"
            )
        wire = entry.wire(self.poll_interval_ms)
        if method == "tasks/get":
            return Reply(result=wire)
        if method == "tasks/cancel":
            if entry.status in TERMINAL:
                return Reply(
                    code=jsonrpc.INVALID_PARAMS,
                    message="Cannot cancel task: already in terminal status"
                    f" '{entry.status.value}'",
                )
            entry.status = TaskStatus.CANCELLED
            entry.status_message = "The task was cancelled by request."
            entry.updated_at = self._timestamp()
            return Reply(result=entry.wire(self.poll_interval_ms))
        if method == "tasks/result":
            if entry.status not in TERMINAL:
                return PENDING
            related = {RELATED_TASK: {"taskId": entry.task_id}}  # § Related Task: MUST
            if entry.status is TaskStatus.COMPLETED and entry.result is not None:
                out = dict(entry.result)
                own = out.get("_meta")
                out["_meta"] = {**(own if isinstance(own, Mapping) else {}), **related}
                return Reply(result=out)
            if entry.error is not None:
                return entry.error  # § Task Execution Errors: the same JSON-RPC error
            return Reply(code=jsonrpc.INVALID_PARAMS, message="The task was cancelled")
        return Reply(code=jsonrpc.METHOD_NOT_FOUND, message="Method not found")

    def _list(self, cursor: Any) -> Reply:
        ids = list(self._tasks)
        start = 0
        if cursor is not None:
            if not isinstance(cursor, str) or cursor not in self._tasks:
                return Reply(code=jsonrpc.INVALID_PARAMS, message="Invalid cursor")
            start = ids.index(cursor) + 1
        page = ids[start : start + _PAGE]
        out: dict[str, Any] = {"tasks": [self._tasks[t].wire(self.poll_interval_ms) for t in page]}
        if start + _PAGE < len(ids):
            out["nextCursor"] = page[-1]
        return Reply(result=out)


def serve_as_task(
    store: ClientTaskStore,
    handlers: Handlers,
    method: str,
    params: Mapping[str, Any],
    *,
    server: str,
    now: float,
    clock: Callable[[], float],
) -> tuple[Reply, Op[None] | None]:
    """A server's task-augmented request: the reply to send now (the
    ``CreateTaskResult``, or an error) and the operation that runs the handler and
    records its outcome (``None`` when nothing is to run). The request must carry
    ``params.task`` and be one of :data:`CLIENT_TASK_METHODS`, which the client
    declared; anything else is answered with an error."""
    if method not in CLIENT_TASK_METHODS:
        return Reply(code=jsonrpc.METHOD_NOT_FOUND, message="Method not found"), None
    task = params.get("task")
    if not isinstance(task, Mapping):
        return Reply(code=jsonrpc.INVALID_PARAMS, message="Not a task-augmented request"), None
    if (
        not client_tasks_capability(handlers)
        .get("requests", {})
        .get(CLIENT_TASK_METHODS[method][0])
    ):
        return Reply(code=jsonrpc.METHOD_NOT_FOUND, message="Method not found"), None
    created = store.create(method, task.get("ttl"), now=now)
    if created.is_error:
        return created, None
    task_id: str = created.result["task"]["taskId"]
    inner = {k: v for k, v in params.items() if k != "task"}

    def run() -> Op[None]:
        reply = yield from serve_request(handlers, method, inner, server=server)
        finished: float = yield CallHost(clock)
        store.finish(task_id, reply, now=finished)

    return created, run()
