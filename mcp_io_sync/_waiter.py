"""A blocking caller's answer slot and its wake-up (the blocking shell's waiters)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from mcp_proto.errors import MCPError

__all__ = ["_Signal", "_Waiter"]


class _Signal:
    """The wake-up of one waiting caller: ``set`` / ``wait`` / ``clear`` as on a
    ``threading.Event``, on a bare lock that is held while the signal is not set. An
    ``Event`` waits and wakes through a Python-level ``Condition`` (about fifteen
    Python calls per wait and wake); this waits in C. ``wait`` consumes the signal (a
    caller that wakes without its answer waits again, and every waiting loop checks
    ``done`` first); a second ``set`` before it is consumed is a no-op."""

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()

    def set(self) -> None:
        try:
            self._lock.release()
        except RuntimeError:
            pass  # already set

    def wait(self, timeout: float | None = None) -> bool:
        return self._lock.acquire(timeout=-1 if timeout is None else timeout)

    def clear(self) -> None:
        self._lock.acquire(blocking=False)


class _Waiter:
    __slots__ = ("done", "error", "event", "result", "settle")

    def __init__(self) -> None:
        # Made only by a caller that actually blocks (most calls are answered to the
        # thread reading for them: an Event per call would cost ~3 us for nothing).
        # Whoever answers sets ``done`` before looking for the event, and the waiter
        # makes the event before looking at ``done``, so no wake-up is lost.
        self.event: _Signal | None = None
        self.done = False  # answered (the event may also be set to hand over a role)
        self.result: Any = None
        self.error: MCPError | None = None
        # Set (by the client, before ``done``) only for a call whose progress callbacks
        # were queued: waits until they have run (see BaseServer._dispatch).
        self.settle: Callable[[], None] | None = None

    def get_event(self) -> _Signal:
        """This waiter's signal, made on first use (only by the waiting thread)."""
        if self.event is None:
            self.event = _Signal()
        return self.event
