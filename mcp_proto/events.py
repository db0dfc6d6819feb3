"""Events the per-server state machine hands out through ``Session.next_event()``.

Internal, as ``Session`` is: a ``Connection`` turns them into its own events
(:mod:`mcp_proto.connection`, exported by ``mcp_proto``), sharing the classes of
those that pass through unchanged (``LogMessage``, ``NotificationReceived``, ...)."""

from __future__ import annotations

from typing import Any, Union

from ._record import Record, builder
from .errors import MCPError
from .jsonrpc import RequestId

_set = object.__setattr__  # (frozen: Record refuses setattr)

__all__ = [
    "Event",
    "LogMessage",
    "MessageDiscarded",
    "NotificationReceived",
    "ProgressReceived",
    "RequestFailed",
    "ResponseReceived",
    "ServerRequest",
]


class ResponseReceived(Record):
    """The result of one of our requests arrived."""

    __slots__ = ("method", "request_id", "result")
    request_id: RequestId
    method: str
    result: Any

    def __init__(self, request_id: RequestId, method: str, result: Any) -> None:
        _set(self, "request_id", request_id)
        _set(self, "method", method)
        _set(self, "result", result)


_ResponseReceivedBuilder = builder(ResponseReceived)


def _response_received(request_id: RequestId, method: str, result: Any) -> ResponseReceived:
    """``ResponseReceived(request_id, method, result)`` for the hot path (one per
    response): plain stores and one ``__class__`` assignment (mcp_proto/_record.py)."""
    event = object.__new__(_ResponseReceivedBuilder)
    event.request_id = request_id
    event.method = method
    event.result = result
    _set(event, "__class__", ResponseReceived)
    return event


class RequestFailed(Record):
    """One of our requests ended without a result: an error response, a timeout, or the
    connection went away. ``error`` is the exception the caller should see."""

    __slots__ = ("error", "method", "request_id")
    request_id: RequestId
    method: str
    error: MCPError

    def __init__(self, request_id: RequestId, method: str, error: MCPError) -> None:
        _set(self, "request_id", request_id)
        _set(self, "method", method)
        _set(self, "error", error)


class ServerRequest(Record):
    """The server asks something of the client (ping, sampling, elicitation, roots).

    The shell hands it to a worker (never the reader) and answers it with
    ``Session.send_response`` / ``Session.send_error_response``.
    """

    __slots__ = ("method", "params", "request_id")
    request_id: RequestId
    method: str
    params: dict[str, Any]

    def __init__(self, request_id: RequestId, method: str, params: dict[str, Any]) -> None:
        _set(self, "request_id", request_id)
        _set(self, "method", method)
        _set(self, "params", params)


class NotificationReceived(Record):
    """A notification for the host (list_changed, resources/updated, message, ...)."""

    __slots__ = ("method", "params")
    method: str
    params: dict[str, Any]

    def __init__(self, method: str, params: dict[str, Any]) -> None:
        _set(self, "method", method)
        _set(self, "params", params)


class ProgressReceived(Record):
    """``notifications/progress`` for a request of ours that is still in flight."""

    __slots__ = ("message", "progress", "request_id", "total")
    request_id: RequestId
    progress: float
    total: float | None
    message: str | None

    def __init__(
        self, request_id: RequestId, progress: float, total: float | None, message: str | None
    ) -> None:
        _set(self, "request_id", request_id)
        _set(self, "progress", progress)
        _set(self, "total", total)
        _set(self, "message", message)


class LogMessage(Record):
    """A ``notifications/message`` turned into a log line. ``text`` is already sanitised
    (control characters escaped, capped) and ``level`` mapped to a Python level name."""

    __slots__ = ("level", "logger", "text")
    level: str
    logger: str | None
    text: str

    def __init__(self, level: str, logger: str | None, text: str) -> None:
        _set(self, "level", level)
        _set(self, "logger", logger)
        _set(self, "text", text)


class MessageDiscarded(Record):
    """Input that was dropped: garbage, an unsolicited response, a stale progress token.

    The shell logs ``reason`` at DEBUG; it never quotes the payload (HYG-1)."""

    __slots__ = ("reason",)
    reason: str

    def __init__(self, reason: str) -> None:
        _set(self, "reason", reason)


Event = Union[
    ResponseReceived,
    RequestFailed,
    ServerRequest,
    NotificationReceived,
    ProgressReceived,
    LogMessage,
    MessageDiscarded,
]
