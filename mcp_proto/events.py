"""Events the per-server state machine hands out through ``Session.next_event()``."""

from __future__ import annotations

from typing import Any, Union

import attrs

from .errors import MCPError
from .jsonrpc import RequestId

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


@attrs.frozen
class ResponseReceived:
    """The result of one of our requests arrived."""

    request_id: RequestId
    method: str
    result: Any


@attrs.frozen
class RequestFailed:
    """One of our requests ended without a result: an error response, a timeout, or the
    connection went away. ``error`` is the exception the caller should see."""

    request_id: RequestId
    method: str
    error: MCPError


@attrs.frozen
class ServerRequest:
    """The server asks something of the client (ping, sampling, elicitation, roots).

    The shell hands it to a worker (never the reader) and answers it with
    ``Session.send_response`` / ``Session.send_error_response``.
    """

    request_id: RequestId
    method: str
    params: dict[str, Any]


@attrs.frozen
class NotificationReceived:
    """A notification for the host (list_changed, resources/updated, message, ...)."""

    method: str
    params: dict[str, Any]


@attrs.frozen
class ProgressReceived:
    """``notifications/progress`` for a request of ours that is still in flight."""

    request_id: RequestId
    progress: float
    total: float | None
    message: str | None


@attrs.frozen
class LogMessage:
    """A ``notifications/message`` turned into a log line. ``text`` is already sanitised
    (control characters escaped, capped) and ``level`` mapped to a Python level name."""

    level: str
    logger: str | None
    text: str


@attrs.frozen
class MessageDiscarded:
    """Input that was dropped: garbage, an unsolicited response, a stale progress token.

    The shell logs ``reason`` at DEBUG; it never quotes the payload (HYG-1)."""

    reason: str


Event = Union[
    ResponseReceived,
    RequestFailed,
    ServerRequest,
    NotificationReceived,
    ProgressReceived,
    LogMessage,
    MessageDiscarded,
]
