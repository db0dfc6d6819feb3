"""What a shell's server object hands its client besides the machine's own events:
typed records (they replace the tuples the shells passed, ``("progress", cb, ev)``).

A server object dispatches the machine's events (``mcp_proto.connection.events``) in
order. Results wake its own callers; everything the *client* must route comes to
:meth:`~mcp_proto.client.base.BaseClient._on_server_event`: these records, the
notifications, log messages and discarded input, and the subscriptions' events.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from .._record import Record
from .._util import sanitize_peer_text
from ..connection.events import CallLog, CallProgress, ServerRequest

__all__ = [
    "HANDLED_NOTIFICATIONS",
    "ConnectionEnded",
    "ProgressDue",
    "RequestDue",
    "SettleDue",
    "notification_note",
]

#: Server notifications the client handles itself (NOTIF-2): the list_changed ones drop
#: a cache, ``message`` goes to the host's logger, progress and the acknowledgment have
#: their own bookkeeping. Any other is logged at debug (after delivery, NOTIF-5); the
#: task status ones too until the client handles them (docs/roadmap.md).
HANDLED_NOTIFICATIONS: Final = frozenset(
    {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/message",
        "notifications/progress",
        "notifications/subscriptions/acknowledged",
    }
)

#: The longest peer text quoted in a note (HYG: bounded, escaped).
_NOTE_CAP: Final = 200

_set = object.__setattr__  # (frozen: Record refuses setattr)


class ProgressDue(Record):
    """A call's progress: ``callback(progress, total, message)`` is queued for the host
    callbacks (PROG-1), before the call's result wakes its caller."""

    __slots__ = ("callback", "progress")
    callback: Callable[..., Any]
    progress: CallProgress | CallLog  # (a call's log message: its progress channel)

    def __init__(self, callback: Callable[..., Any], progress: CallProgress | CallLog) -> None:
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


def notification_note(server: str, method: str, params: Mapping[str, Any]) -> str | None:
    """The debug line the client logs for a server notification, ``None`` for one it
    handles otherwise (NOTIF-2, PROG-7). Logged after the notification was queued for
    the host's callbacks (NOTIF-5: the client's own handling comes after delivery).

    * ``notifications/resources/updated``: the resource named;
    * ``notifications/cancelled``: the server gave up one of *its* requests (PROG-7:
      acknowledged by logging; a handler still running may answer, which is harmless,
      2025-11-25 basic/utilities/cancellation.mdx);
    * anything not in :data:`HANDLED_NOTIFICATIONS`: named, so it is not silent.

    Peer text is escaped and capped (a server cannot forge log lines)."""

    def quoted(value: Any) -> str:
        return sanitize_peer_text(value if isinstance(value, str) else repr(value), cap=_NOTE_CAP)

    if method == "notifications/resources/updated":
        return f"server {server!r}: resource updated: {quoted(params.get('uri'))}"
    if method == "notifications/cancelled":
        reason = params.get("reason")
        return f"server {server!r} cancelled its request {quoted(params.get('requestId'))}" + (
            f": {quoted(reason)}" if reason is not None else ""
        )
    if method in HANDLED_NOTIFICATIONS:
        return None
    return f"server {server!r}: notification {quoted(method)} (the client does not handle it)"
