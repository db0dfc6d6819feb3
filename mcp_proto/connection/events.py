"""What the connection machine tells its driver and user (``Connection.next_event()``).

The message-level events of :mod:`mcp_proto.events` (``ServerRequest``,
``NotificationReceived``, ``LogMessage``, ``MessageDiscarded``) pass through unchanged;
the call-level events below replace ``ResponseReceived`` / ``RequestFailed`` /
``ProgressReceived``: they name a *call id*, stable across retries and re-sends.

Every call id gets exactly one :class:`CallSucceeded` or :class:`CallFailed`, and every
:class:`CallProgress` of a call comes before it (issue 9 item 6).
"""

from __future__ import annotations

from typing import Any, Union

import attrs

from ..errors import MCPError
from ..events import LogMessage, MessageDiscarded, NotificationReceived, ServerRequest
from ..session import ServerInfo

__all__ = [
    "CallCancelledError",
    "CallFailed",
    "CallProgress",
    "CallSucceeded",
    "Closed",
    "ConnectFailed",
    "Connected",
    "Diagnostic",
    "Disconnected",
    "Event",
    "LogMessage",
    "MessageDiscarded",
    "NotificationReceived",
    "ServerRequest",
]


class CallCancelledError(MCPError):
    """The caller gave up on a call (``Connection.cancel_call`` without an error)."""


@attrs.frozen
class Connected:
    """The handshake completed and requests flow (Streamable HTTP: also the GET
    stream was answered, or its ready wait passed)."""

    info: ServerInfo


@attrs.frozen
class ConnectFailed:
    """Opening the transport or the handshake failed. Calls waiting for the connection
    were judged by the retry table (each ends with a ``CallFailed`` or is retried)."""

    error: MCPError


@attrs.frozen
class CallSucceeded:
    call_id: int
    method: str
    result: Any


@attrs.frozen
class CallFailed:
    call_id: int
    method: str
    error: MCPError


@attrs.frozen
class CallProgress:
    """``notifications/progress`` for a call started with ``progress=True``."""

    call_id: int
    progress: float
    total: float | None
    message: str | None


@attrs.frozen
class Disconnected:
    """The transport went away on its own (process exit, end of the legacy event
    stream, keep-alive misses, a framing error). The next call reconnects."""

    error: MCPError


@attrs.frozen
class Closed:
    """``close()`` completed: the transport is closed and every call has ended."""


@attrs.frozen
class Diagnostic:
    """Something the driver should log. ``level`` is a Python logging level name."""

    level: str
    message: str


Event = Union[
    Connected,
    ConnectFailed,
    CallSucceeded,
    CallFailed,
    CallProgress,
    Disconnected,
    Closed,
    Diagnostic,
    ServerRequest,
    NotificationReceived,
    LogMessage,
    MessageDiscarded,
]
