"""``call_tool_streaming`` (TOOL-7, SCH-3): a tool call seen as a stream of chunks.

The call is ``call_tool`` itself (routing, argument checks, tasks, the output-schema
check of the result: SCH-3 holds because the last chunk *is* ``call_tool``'s checked
result); what the stream adds is where its progress goes. :class:`ToolStream` is the
pure buffer between the call and the consumer:

- each ``notifications/progress`` of the call becomes a chunk ``{"type": "progress",
  "progress": p, "total": t, "message": m}`` as it arrives;
- the call's outcome ends the stream: its :class:`~mcp_proto.results.ToolResult` is the
  last chunk, or its error is raised to the consumer after the chunks before it;
- bounded (issue 23: a consumer that does not keep up does not grow memory): at most
  ``max_pending`` progress chunks wait; past that the oldest waiting one is dropped
  (each newer one supersedes it) and counted in ``dropped``.

A shell runs :meth:`ToolStream.op` where it may wait (a thread, a Trio task), hands the
stream its lock and wake-up, and iterates :meth:`ToolStream.take`. Leaving the
iteration early is the shell's to turn into a cancellation of the call (the connection
then sends ``notifications/cancelled``, 2025-11-25 basic/utilities/cancellation.mdx).
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Final

from ..effects import Op
from ..errors import MCPError
from ..results import ToolResult

__all__ = ["END", "MAX_PENDING_CHUNKS", "ToolStream"]

#: Progress chunks waiting for a slow consumer before the oldest is dropped.
MAX_PENDING_CHUNKS: Final = 64

_NO_LOCK: Final = contextlib.nullcontext()


class _End:
    def __repr__(self) -> str:
        return "END"


#: What :meth:`ToolStream.take` returns once the last chunk was taken.
END: Final = _End()


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
        self._pending: deque[Mapping[str, Any]] = deque()
        self._result: ToolResult | None = None
        self._error: BaseException | None = None
        self._ended = False
        self._delivered_end = False
        #: Progress chunks dropped because the consumer did not keep up.
        self.dropped = 0

    # ------------------------------------------------------------ the call's side

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """The call's progress callback: one chunk, the oldest dropped when full."""
        chunk = {"type": "progress", "progress": progress, "total": total, "message": message}
        with self._lock:
            if self._ended:
                return  # (a late notification after the outcome: nothing to stream)
            if len(self._pending) >= self._max:
                self._pending.popleft()
                self.dropped += 1
            self._pending.append(chunk)
            self._changed()

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
        """``core.call_tool`` with this stream as its progress callback; its outcome
        ends the stream (an error is kept for the consumer, not raised here)."""
        try:
            result = yield from core.call_tool(
                name, arguments, server=server, progress=self.progress, timeout=timeout
            )
        except MCPError as exc:
            self.fail(exc)
            return
        self.finish(result)

    # ------------------------------------------------------------ the consumer's side

    @property
    def ended(self) -> bool:
        """The call has an outcome (chunks may still wait)."""
        return self._ended

    @property
    def exhausted(self) -> bool:
        """Every chunk, the last included, was taken."""
        return self._delivered_end

    def take(self) -> Mapping[str, Any] | _End | None:
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
