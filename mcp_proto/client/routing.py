"""What a shell's server object hands its client besides the machine's own events:
typed records (they replace the tuples the shells passed, ``("progress", cb, ev)``).

A server object dispatches the machine's events (``mcp_proto.connection.events``) in
order. Results wake its own callers; everything the *client* must route comes to
:meth:`~mcp_proto.client.base.BaseClient._on_server_event`: these records, the
notifications, log messages and discarded input, and the subscriptions' events.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._record import Record
from ..connection.events import CallProgress, ServerRequest

__all__ = ["ConnectionEnded", "ProgressDue", "RequestDue", "SettleDue"]

_set = object.__setattr__  # (frozen: Record refuses setattr)


class ProgressDue(Record):
    """A call's progress: ``callback(progress, total, message)`` is queued for the host
    callbacks (PROG-1), before the call's result wakes its caller."""

    __slots__ = ("callback", "progress")
    callback: Callable[..., Any]
    progress: CallProgress

    def __init__(self, callback: Callable[..., Any], progress: CallProgress) -> None:
        _set(self, "callback", callback)
        _set(self, "progress", progress)


class SettleDue(Record):
    """A call whose progress callbacks were queued was answered: the client queues a
    marker behind them and sets ``waiter.settle``, which the caller awaits before
    returning (a call returns only once its progress callbacks have run)."""

    __slots__ = ("waiter",)
    waiter: Any

    def __init__(self, waiter: Any) -> None:
        _set(self, "waiter", waiter)


class RequestDue(Record):
    """A server request to serve. ``generation`` names the transport that asked it: the
    answer goes back to that one only (``server.reply(generation, ...)``)."""

    __slots__ = ("generation", "request")
    generation: Any
    request: ServerRequest

    def __init__(self, generation: Any, request: ServerRequest) -> None:
        _set(self, "generation", generation)
        _set(self, "request", request)


class ConnectionEnded(Record):
    """The server's connection ended (failed to connect, dropped or closed): what it
    listed may change on the next one."""

    __slots__ = ()

    def __init__(self) -> None:
        pass


#: The one instance (it carries nothing).
CONNECTION_ENDED = ConnectionEnded()
