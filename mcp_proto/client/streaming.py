"""``call_tool_streaming`` (TOOL-7, SCH-3): a tool call seen as a stream of chunks.

The call is ``call_tool`` itself (routing, argument checks, tasks, the output-schema
check of the result: SCH-3 holds because the last chunk *is* ``call_tool``'s checked
result); what the stream adds is where the call's interim news goes. :class:`ToolStream`
is the pure buffer between the call and the consumer. Its chunks, typed records with a
``type`` tag, in the order they arrived:

- :class:`ProgressChunk` (``"progress"``): a ``notifications/progress`` of the call;
- :class:`LogChunk` (``"log"``): a ``notifications/message`` of the call. Which ones are
  the call's is the connection's to tell (``mcp_proto.connection.events.CallLog``): over
  Streamable HTTP the ones on the call's own response stream (2026-07-28
  basic/transports/streamable-http.mdx § Receiving Messages: they MUST relate to the
  request; 2025-11-25 basic/transports.mdx: SHOULD); on a single shared channel (stdio,
  WebSocket, the legacy SSE stream) nothing names the request, so a log message counts
  as the call's when the call was the only request in flight to that server, and as
  nobody's otherwise. Every log message still reaches the client's logger and
  ``on_notification`` as always;
- :class:`InputChunk` (``"input_required"``): the partial results of the call. MCP has
  no partial *content*; what a server sends before the final result is an
  ``input_required`` result (2026-07-28 basic/patterns/mrtr) or a task's
  ``inputRequests`` (SEP-2663). The chunk shows the input requests, which the client
  then answers with the registered handlers, as ``call_tool`` does;
- :class:`TaskChunk` (``"task"``): the call runs as a task (a 2025-11-25
  ``taskSupport: "required"`` tool, or a 2026-07-28 ``resultType: "task"`` answer with
  the extension declared): the task when it is created and at each change of its status
  or status message seen while polling;
- the call's outcome ends the stream: its :class:`~mcp_proto.results.ToolResult` is the
  last chunk, or its error is raised to the consumer after the chunks before it.

Bounded (issue 23: a consumer that does not keep up does not grow memory): at most
``max_pending`` chunks wait; past that the oldest waiting one is dropped (news that a
newer chunk supersedes) and counted in ``dropped``. A chunk holds one message at most,
and the connection refuses messages over ``Limits.max_line_size`` (a stdio line, an SSE
event): the buffer holds at most ``max_pending`` such messages, whatever the server
sends.

A shell runs :meth:`ToolStream.op` where it may wait (a thread, a Trio task), hands the
stream its lock and wake-up, and iterates :meth:`ToolStream.take`. Leaving the
iteration early is the shell's to turn into a cancellation of the call (the connection
then sends ``notifications/cancelled``, 2025-11-25 basic/utilities/cancellation.mdx);
once the call has stopped, the shell runs :meth:`ToolStream.leave_op`, which cancels
a task the call had become and that still runs with ``tasks/cancel`` (both task
revisions: ``tasks/cancel``, never ``notifications/cancelled``, for a task).
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, Union

import attrs

from ..effects import Log, Op
from ..errors import MCPError
from ..results import ToolResult

if TYPE_CHECKING:
    from ..tasks import Task

__all__ = [
    "END",
    "MAX_PENDING_CHUNKS",
    "InputChunk",
    "LogChunk",
    "ProgressChunk",
    "StreamSink",
    "TaskChunk",
    "ToolChunk",
    "ToolStream",
    "hook",
]

#: Chunks waiting for a slow consumer before the oldest is dropped.
MAX_PENDING_CHUNKS: Final = 64

_NO_LOCK: Final = contextlib.nullcontext()


@attrs.frozen
class ProgressChunk:
    """A ``notifications/progress`` of the call (2025-11-25 basic/utilities/progress)."""

    type: ClassVar[Literal["progress"]] = "progress"
    progress: float
    total: float | None = None
    message: str | None = None


@attrs.frozen
class LogChunk:
    """A ``notifications/message`` of the call (server/utilities/logging): ``level``
    as the server sent it (``"info"``, ...; ``None`` when it sent none or not a
    string), its ``logger`` and ``data`` (any JSON value), unchanged."""

    type: ClassVar[Literal["log"]] = "log"
    level: str | None
    data: Any = None
    logger: str | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> LogChunk:
        level, logger = params.get("level"), params.get("logger")
        return cls(
            level if isinstance(level, str) else None,
            params.get("data"),
            logger if isinstance(logger, str) else None,
        )


@attrs.frozen
class InputChunk:
    """The server asked for input before the final result (an ``input_required``
    result, or a 2026-07-28 task's ``inputRequests``): key → the request. The client
    answers them with the registered handlers next."""

    type: ClassVar[Literal["input_required"]] = "input_required"
    requests: Mapping[str, Any]


@attrs.frozen
class TaskChunk:
    """The task the call runs as, when it was created or its status changed."""

    type: ClassVar[Literal["task"]] = "task"
    task: Task

    @property
    def status(self) -> str:
        return self.task.status.value


#: What ``call_tool_streaming`` yields: interim chunks, then the result.
ToolChunk = Union[ProgressChunk, LogChunk, InputChunk, TaskChunk, ToolResult]

#: A chunk before the last one.
_Interim = Union[ProgressChunk, LogChunk, InputChunk, TaskChunk]


class _End:
    def __repr__(self) -> str:
        return "END"


#: What :meth:`ToolStream.take` returns once the last chunk was taken.
END: Final = _End()


class StreamSink:
    """The call's progress callback, with the hooks the core and the shells look for
    on it (``on_log``, ``on_input``, ``on_task``): a plain progress callback has none,
    and then nothing of this reaches it."""

    __slots__ = ("_stream",)

    def __init__(self, stream: ToolStream) -> None:
        self._stream = stream

    def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self._stream.put(ProgressChunk(progress, total, message))

    def on_log(self, params: Mapping[str, Any]) -> None:
        self._stream.put(LogChunk.from_params(params))

    def on_input(self, requests: Mapping[str, Any]) -> None:
        self._stream.put(InputChunk(dict(requests)))

    def on_task(self, task: Task) -> None:
        self._stream.task = task
        self._stream.put(TaskChunk(task))


class ToolStream:
    """The chunks of one streaming tool call (see the module docstring).

    ``lock``: a context manager guarding the buffer (a ``threading.Condition`` in the
    blocking shell, whose dispatcher thread delivers progress); ``wake``: called, under
    ``lock``, after each change (a consumer waiting for a chunk looks again)."""

    def __init__(
        self,
        *,
        lock: contextlib.AbstractContextManager[Any] | None = None,
        wake: Callable[[], Any] | None = None,
        max_pending: int = MAX_PENDING_CHUNKS,
    ) -> None:
        if max_pending < 1:
            raise ValueError("max_pending must be at least 1")
        self._lock = lock if lock is not None else _NO_LOCK
        self._wake = wake
        self._max = max_pending
        self._pending: deque[_Interim] = deque()
        self._result: ToolResult | None = None
        self._error: BaseException | None = None
        self._ended = False
        self._delivered_end = False
        #: Chunks dropped because the consumer did not keep up.
        self.dropped = 0
        #: The task the call runs as, as last seen (``None``: not a task).
        self.task: Task | None = None
        #: The call's progress callback (the core and the shells find the hooks on it).
        self.sink = StreamSink(self)

    # ------------------------------------------------------------ the call's side

    def put(self, chunk: _Interim) -> None:
        """One interim chunk, the oldest waiting one dropped when full."""
        with self._lock:
            if self._ended:
                return  # (a late notification after the outcome: nothing to stream)
            if len(self._pending) >= self._max:
                self._pending.popleft()
                self.dropped += 1
            self._pending.append(chunk)
            self._changed()

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """A progress callback: one :class:`ProgressChunk`."""
        self.put(ProgressChunk(progress, total, message))

    def finish(self, result: ToolResult) -> None:
        with self._lock:
            self._result, self._ended = result, True
            self._changed()

    def fail(self, error: BaseException) -> None:
        with self._lock:
            if not self._ended:
                self._error, self._ended = error, True
            self._changed()

    def _changed(self) -> None:
        if self._wake is not None:
            self._wake()

    def op(
        self,
        core: Any,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        server: Any = None,
        timeout: float | None = None,
    ) -> Op[None]:
        """``core.call_tool`` with this stream's :attr:`sink` as its progress callback;
        its outcome ends the stream (an error is kept for the consumer, not raised)."""
        try:
            result = yield from core.call_tool(
                name, arguments, server=server, progress=self.sink, timeout=timeout
            )
        except MCPError as exc:
            self.fail(exc)
            return
        self.finish(result)

    def leave_op(self, core: Any) -> Op[None]:
        """What a consumer that left early owes the server once the call has ended: a
        call that had become a task still running gets ``tasks/cancel`` (TASK-19, never
        ``notifications/cancelled`` for a task); a failure of that is logged, since it
        does not change what the consumer did. Nothing for any other call."""
        task = self.running_task
        if task is None:
            return
        try:
            yield from core.cancel_task(task)
        except MCPError as exc:
            yield Log(
                "warning", f"tasks/cancel of {task.task_id!r} (a stream left early) failed: {exc}"
            )

    # ------------------------------------------------------------ the consumer's side

    @property
    def ended(self) -> bool:
        """The call has an outcome (chunks may still wait)."""
        return self._ended

    @property
    def running_task(self) -> Task | None:
        """The task the call runs as, unless it was last seen finished: what a
        consumer leaving early leaves running on the server (:meth:`leave_op` cancels it)."""
        task = self.task
        return task if task is not None and not task.is_terminal else None

    @property
    def exhausted(self) -> bool:
        """Every chunk, the last included, was taken."""
        return self._delivered_end

    def take(self) -> ToolChunk | _End | None:
        """The next chunk, or ``None`` while none is ready (wait for a wake-up); after
        the last chunk :data:`END`. A failed call raises its error (once) in place of
        the last chunk."""
        with self._lock:
            if self._pending:
                return self._pending.popleft()
            if not self._ended:
                return None
            if self._delivered_end:
                return END
            self._delivered_end = True
            if self._error is not None:
                raise self._error
            assert self._result is not None
            return self._result


def hook(progress: Any, name: Literal["on_log", "on_input", "on_task"]) -> Any:
    """The ``name`` hook of a call's progress callback (a :class:`StreamSink`), or
    ``None`` for a plain callback."""
    return getattr(progress, name, None) if type(progress) is StreamSink else None
