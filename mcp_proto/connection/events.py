"""What the connection machine tells its driver and user (``Connection.next_event()``).

The message-level events of :mod:`mcp_proto.events` (``ServerRequest``,
``NotificationReceived``, ``LogMessage``, ``MessageDiscarded``) pass through unchanged;
the call-level events below replace ``ResponseReceived`` / ``RequestFailed`` /
``ProgressReceived``: they name a *call id*, stable across retries and re-sends.

Every call id gets exactly one :class:`CallSucceeded` or :class:`CallFailed`, and every
:class:`CallProgress` of a call comes before it (issue 9 item 6).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

from .._record import Record, builder
from ..errors import MCPError
from ..events import LogMessage, MessageDiscarded, NotificationReceived, ServerRequest
from ..session import ServerInfo

if TYPE_CHECKING:
    from ..modern.notify_queue import Acknowledgment

_set = object.__setattr__  # (frozen: Record refuses setattr)

__all__ = [
    "CallCancelledError",
    "CallFailed",
    "CallLog",
    "CallProgress",
    "CallSucceeded",
    "Closed",
    "ConnectFailed",
    "Connected",
    "Diagnostic",
    "Disconnected",
    "Event",
    "ListenAcknowledged",
    "ListenEnded",
    "ListenInterrupted",
    "ListenNotification",
    "LogMessage",
    "MessageDiscarded",
    "NotificationReceived",
    "ServerRequest",
]


class CallCancelledError(MCPError):
    """The caller gave up on a call (``Connection.cancel_call`` without an error)."""


class Connected(Record):
    """The handshake completed and requests flow (Streamable HTTP: also the GET
    stream was answered, or its ready wait passed)."""

    __slots__ = ("info",)
    info: ServerInfo

    def __init__(self, info: ServerInfo) -> None:
        _set(self, "info", info)


class ConnectFailed(Record):
    """Opening the transport or the handshake failed. Calls waiting for the connection
    were judged by the retry table (each ends with a ``CallFailed`` or is retried)."""

    __slots__ = ("error",)
    error: MCPError

    def __init__(self, error: MCPError) -> None:
        _set(self, "error", error)


class CallSucceeded(Record):
    __slots__ = ("call_id", "method", "result")
    call_id: int
    method: str
    result: Any

    def __init__(self, call_id: int, method: str, result: Any) -> None:
        _set(self, "call_id", call_id)
        _set(self, "method", method)
        _set(self, "result", result)


_CallSucceededBuilder = builder(CallSucceeded)


def _call_succeeded(call_id: int, method: str, result: Any) -> CallSucceeded:
    """``CallSucceeded(call_id, method, result)`` for the hot path (one per answered
    call): plain stores and one ``__class__`` assignment (mcp_proto/_record.py)."""
    event = object.__new__(_CallSucceededBuilder)
    event.call_id = call_id
    event.method = method
    event.result = result
    _set(event, "__class__", CallSucceeded)
    return event


class CallFailed(Record):
    __slots__ = ("call_id", "error", "method")
    call_id: int
    method: str
    error: MCPError

    def __init__(self, call_id: int, method: str, error: MCPError) -> None:
        _set(self, "call_id", call_id)
        _set(self, "method", method)
        _set(self, "error", error)


class CallProgress(Record):
    """``notifications/progress`` for a call started with ``progress=True``."""

    __slots__ = ("call_id", "message", "progress", "total")
    call_id: int
    progress: float
    total: float | None
    message: str | None

    def __init__(
        self, call_id: int, progress: float, total: float | None, message: str | None
    ) -> None:
        _set(self, "call_id", call_id)
        _set(self, "progress", progress)
        _set(self, "total", total)
        _set(self, "message", message)


class CallLog(Record):
    """A ``notifications/message`` of a call started with ``progress=True``, reported
    on the call's progress channel (before its outcome, as :class:`CallProgress`). It
    is the call's when it came on the call's own response stream (Streamable HTTP:
    2026-07-28 basic/transports/streamable-http.mdx § Receiving Messages, such
    notifications MUST relate to the request), or, on a single-channel transport
    (stdio, WebSocket, legacy SSE), while the call was the only request in flight. The
    notification itself is still delivered as always (``NotificationReceived``);
    ``params`` are its params, unchanged."""

    __slots__ = ("call_id", "params")
    call_id: int
    params: dict[str, Any]

    def __init__(self, call_id: int, params: dict[str, Any]) -> None:
        _set(self, "call_id", call_id)
        _set(self, "params", params)


class Disconnected(Record):
    """The transport went away on its own (process exit, end of the legacy event
    stream, keep-alive misses, a framing error). The next call reconnects."""

    __slots__ = ("error",)
    error: MCPError

    def __init__(self, error: MCPError) -> None:
        _set(self, "error", error)


class Closed(Record):
    """``close()`` completed: the transport is closed and every call has ended."""

    __slots__ = ()


class Diagnostic(Record):
    """Something the driver should log. ``level`` is a Python logging level name.

    ``deprecation``: the :mod:`mcp_proto.deprecations` key when ``message`` is that
    feature's notice (the HTTP+SSE transport once connected, DEP-5): the driver hands it
    to ``deprecations.announce`` with its host's logger instead of logging it, so the
    notice is spent only once written (DEP-12)."""

    __slots__ = ("deprecation", "level", "message")
    level: str
    message: str
    deprecation: str

    def __init__(self, level: str, message: str, deprecation: str = "") -> None:
        _set(self, "level", level)
        _set(self, "message", message)
        _set(self, "deprecation", deprecation)


# ---------------------------------------------------------------- subscriptions/listen
# (2026-07-28 basic/patterns/subscriptions.mdx; docs/requirements.md SUB rows). A subscription
# is named by its *sub id* (``Connection.start_listen``), stable across the listen
# requests that carry it (an HTTP re-open, a re-send to a restarted stdio process).


class ListenAcknowledged(Record):
    """The server acknowledged a listen request of ``sub_id`` (SUB-3): emitted for the
    first request and again for every re-open / re-send that is acknowledged.
    ``acknowledgment.acknowledged`` is deep-frozen; ``unsupported`` names the requested
    fields the server did not really grant."""

    __slots__ = ("acknowledgment", "sub_id")
    sub_id: int
    acknowledgment: Acknowledgment

    def __init__(self, sub_id: int, acknowledgment: Acknowledgment) -> None:
        _set(self, "sub_id", sub_id)
        _set(self, "acknowledgment", acknowledgment)


class ListenNotification(Record):
    """A notification on ``sub_id``'s stream (demultiplexed by
    ``_meta["io.modelcontextprotocol/subscriptionId"]``, SUB-31). It replaces
    ``NotificationReceived`` for that message: a driver drops its caches for it first,
    then queues it for the subscription's listeners, then calls the host's
    ``on_notification`` (NOTIF-3, NOTIF-4)."""

    __slots__ = ("method", "params", "sub_id")
    sub_id: int
    method: str
    params: dict[str, Any]

    def __init__(self, sub_id: int, method: str, params: dict[str, Any]) -> None:
        _set(self, "sub_id", sub_id)
        _set(self, "method", method)
        _set(self, "params", params)


class ListenInterrupted(Record):
    """``sub_id``'s stream dropped and waits to be re-opened (HTTP: after a backoff;
    stdio: once the process is restarted). Not active until the next
    ``ListenAcknowledged`` (SUB-14)."""

    __slots__ = ("error", "sub_id")
    sub_id: int
    error: MCPError

    def __init__(self, sub_id: int, error: MCPError) -> None:
        _set(self, "sub_id", sub_id)
        _set(self, "error", error)


class ListenEnded(Record):
    """``sub_id`` is over, once: ``error`` is ``None`` when the client closed it or the
    server ended it gracefully (SUB-15), else why it ended."""

    __slots__ = ("error", "sub_id")
    sub_id: int
    error: MCPError | None

    def __init__(self, sub_id: int, error: MCPError | None) -> None:
        _set(self, "sub_id", sub_id)
        _set(self, "error", error)


Event = Union[
    Connected,
    ConnectFailed,
    CallSucceeded,
    CallFailed,
    CallProgress,
    CallLog,
    Disconnected,
    Closed,
    Diagnostic,
    ListenAcknowledged,
    ListenNotification,
    ListenInterrupted,
    ListenEnded,
    ServerRequest,
    NotificationReceived,
    LogMessage,
    MessageDiscarded,
]
