"""The blocking shell's dispatch of the machine's events (a part of ``BaseServer``).

Events are taken from the machine under the server's lock, in its order, and
dispatched here under its dispatch lock: results wake their callers (after the call's
queued progress callbacks, issue 9 item 6), progress and notifications go to the
client, server requests to its worker pool, connect and close outcomes to their
waiters.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from mcp_io_common.notices import write_notice
from mcp_proto import deprecations
from mcp_proto.client.routing import CONNECTION_ENDED, ProgressDue, RequestDue, SettleDue
from mcp_proto.connection import (
    CallFailed,
    CallLog,
    CallProgress,
    CallSucceeded,
    Closed,
    Connected,
    ConnectFailed,
    Diagnostic,
    Disconnected,
    ServerRequest,
)
from mcp_proto.errors import ConnectionError, MCPError

from ._waiter import _Waiter

__all__ = ["EventDispatch"]


class EventDispatch:
    """The event tables and their dispatch; mixed into ``BaseServer``, which provides
    the attributes declared here without a value."""

    name: str
    _lock: threading.RLock
    _logger: logging.Logger
    _generation: int
    _on_event: Callable[[Any, Any], None]

    def _init_dispatch(self) -> None:
        self._waiters: dict[int, _Waiter] = {}
        self._progress: dict[int, Callable[..., Any]] = {}
        # Calls for which a progress callback was queued to the client's dispatcher:
        # their callers wait for those callbacks before returning (see _dispatch_one).
        self._progressed: set[int] = set()
        # Events taken from the machine (under _lock, in its order) and not dispatched
        # yet, and whether a dispatch is running on the thread holding _dispatch_lock.
        self._events: deque[Any] = deque()
        self._in_dispatch = False
        self._connect_waiters: list[_Waiter] = []
        self._close_waiters: list[_Waiter] = []

    def _write_notice(self, text: str) -> bool:
        """A deprecation notice the connection handed over (DEP-5), through the host's
        logger: ``False`` keeps it due (DEP-12..14)."""
        return write_notice(self._logger, text)

    def _drain_events(self) -> None:
        """Dispatch the queued events, in order (caller holds ``_dispatch_lock``).

        The call tables need no other lock here: a call id is added (under ``_lock``,
        with ``start_call``) before any event about it can exist, and each dict
        operation is atomic. A dispatch that pumps again (a server request refused at
        once as "Client busy") only queues: this loop gets to it."""
        if self._in_dispatch:
            return
        queue = self._events
        self._in_dispatch = True
        try:
            while queue:
                self._dispatch_one(queue.popleft())
        finally:
            self._in_dispatch = False

    def _dispatch_one(self, event: Any) -> None:
        kind = type(event)
        if kind is CallSucceeded or kind is CallFailed:
            cid = event.call_id
            waiter = self._waiters.pop(cid, None)
            # (No call has a progress callback, as a rule: then no lookup at all.)
            if (
                self._progress
                and self._progress.pop(cid, None) is not None
                and cid in self._progressed
            ):
                self._progressed.discard(cid)
                if waiter is not None:
                    # Its progress callbacks are queued ahead of this point: the client
                    # queues a marker behind them and sets ``waiter.settle`` (before
                    # ``done``, so the woken caller sees it) to wait for that marker.
                    self._on_event(self, SettleDue(waiter))
            if waiter is None:
                return
            if kind is CallSucceeded:
                waiter.result = event.result
            else:
                waiter.error = event.error
            # As _wake, written out: once per call.
            waiter.done = True
            wake = waiter.event
            if wake is not None:
                wake.set()
        elif kind is CallProgress or kind is CallLog:  # (a call's log: its progress channel)
            callback = self._progress.get(event.call_id)
            if callback is not None:
                self._progressed.add(event.call_id)
                self._on_event(self, ProgressDue(callback, event))
        elif kind is ServerRequest:
            self._on_event(self, RequestDue(self._generation, event))
        elif kind is Diagnostic:
            if event.deprecation:  # spent only once written (DEP-12)
                deprecations.announce(event.deprecation, self._write_notice)
            else:
                level = getattr(logging, event.level.upper(), logging.INFO)
                self._logger.log(level, "%s", event.message)
        elif kind is Connected:
            info = event.info
            self._logger.debug("connected to %s (protocol %s)", self.name, info.protocol_version)
            self._finish(self._connect_waiters, info, None)
        elif kind is ConnectFailed:
            self._logger.debug("server %s: connecting failed: %s", self.name, event.error)
            self._finish(self._connect_waiters, None, event.error)
            self._on_event(self, CONNECTION_ENDED)
        elif kind is Disconnected:
            self._logger.debug("server %s: disconnected: %s", self.name, event.error)
            self._on_event(self, CONNECTION_ENDED)
        elif kind is Closed:
            error = ConnectionError(f"server {self.name!r}: the client closed the connection")
            self._finish(self._connect_waiters, None, error)
            self._finish(self._close_waiters, None, None)
            self._on_event(self, CONNECTION_ENDED)
        else:  # NotificationReceived, LogMessage, MessageDiscarded
            self._on_event(self, event)

    def _finish(self, waiters: list[_Waiter], result: Any, error: MCPError | None) -> None:
        with self._lock:
            done, waiters[:] = list(waiters), []
        for waiter in done:
            waiter.result = result
            waiter.error = error
            self._wake(waiter)

    @staticmethod
    def _wake(waiter: _Waiter) -> None:
        waiter.done = True
        wake = waiter.event
        if wake is not None:
            wake.set()
