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

import attrs

from ..errors import MCPError
from ..events import LogMessage, MessageDiscarded, NotificationReceived, ServerRequest
from ..session import ServerInfo

if TYPE_CHECKING:
    from ..modern.notify_queue import Acknowledgment

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


# ---------------------------------------------------------------- subscriptions/listen
# (2026-07-28 basic/patterns/subscriptions.mdx; REQUIREMENTS SUB rows). A subscription
# is named by its *sub id* (``Connection.start_listen``), stable across the listen
# requests that carry it (an HTTP re-open, a re-send to a restarted stdio process).


@attrs.frozen
class ListenAcknowledged:
    """The server acknowledged a listen request of ``sub_id`` (SUB-3): emitted for the
    first request and again for every re-open / re-send that is acknowledged.
    ``acknowledgment.acknowledged`` is deep-frozen; ``unsupported`` names the requested
    fields the server did not really grant."""

    sub_id: int
    acknowledgment: Acknowledgment


@attrs.frozen
class ListenNotification:
    """A notification on ``sub_id``'s stream (demultiplexed by
    ``_meta["io.modelcontextprotocol/subscriptionId"]``, SUB-31). It replaces
    ``NotificationReceived`` for that message: a driver drops its caches for it first,
    then queues it for the subscription's listeners, then calls the host's
    ``on_notification`` (NOTIF-3, NOTIF-4)."""

    sub_id: int
    method: str
    params: dict[str, Any]


@attrs.frozen
class ListenInterrupted:
    """``sub_id``'s stream dropped and waits to be re-opened (HTTP: after a backoff;
    stdio: once the process is restarted). Not active until the next
    ``ListenAcknowledged`` (SUB-14)."""

    sub_id: int
    error: MCPError


@attrs.frozen
class ListenEnded:
    """``sub_id`` is over, once: ``error`` is ``None`` when the client closed it or the
    server ended it gracefully (SUB-15), else why it ended."""

    sub_id: int
    error: MCPError | None


Event = Union[
    Connected,
    ConnectFailed,
    CallSucceeded,
    CallFailed,
    CallProgress,
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
