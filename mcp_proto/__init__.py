"""mcp_proto: a sans-IO Model Context Protocol client core.

Bytes, messages and ``now`` go in; frames, events and deadlines come out. No sockets,
threads, clocks or logging inside: the shells ``mcp_io_sync`` and ``mcp_io_trio`` do the
I/O. See ``docs/architecture.md``.

What is exported here is the API, chosen (``__all__``): the per-server machine
:class:`Connection` with its frames and events; the multi-server client's operations
(:class:`ClientCore`), their effects and typed results; the value types, the errors, the
configuration helpers. The session inside the machine (``mcp_proto.session.Session``)
and its own events (``mcp_proto.events``) are internal. ``errors.ConnectionError`` is
exported as ``MCPConnectionError``, so a star import leaves the builtin alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import errors as errors
from ._util import (
    NEED_DATA,
)
from ._util import export_order as _export_order
from .client import (
    ClientCore,
    ServerEntry,
)
from .config import (
    ServerConfig,
    detect_transport,
    parse_server_definitions,
    redact_config,
)
from .connection import (
    AbortExchange,
    CallCancelledError,
    CallFailed,
    CallProgress,
    CallSucceeded,
    Closed,
    CloseTransport,
    Connected,
    ConnectFailed,
    Connection,
    ConnectionState,
    Diagnostic,
    Disconnected,
    Event,
    ExchangeFailure,
    Frame,
    ListenAcknowledged,
    ListenEnded,
    ListenInterrupted,
    ListenNotification,
    LogMessage,
    MessageDiscarded,
    NotificationReceived,
    OpenTransport,
    ServerRequest,
    StartExchange,
    Write,
)
from .effects import (
    Attempt,
    Call,
    CallHost,
    Connect,
    Effect,
    Log,
    Notify,
    Op,
    ProgressCallback,
    SetLogLevel,
    TryConnect,
)
from .exports import *  # noqa: F403 (errors, value types, results, config helpers)
from .exports import __all__ as __all__  # (for mypy: those names are exported)
from .handlers import (
    Handlers,
)
from .llm import (
    to_anthropic_tools,
    to_google_tools,
    to_openai_tools,
)
from .session import (
    ServerInfo,
)
from .stdio import (
    LineFramer,
)
from .types import (
    PromptArgument,
    parse_content_item,
)
from .versions import (
    LATEST_LEGACY,
    LEGACY_VERSIONS,
)

if TYPE_CHECKING:
    from .modern.headers import HeaderParams as HeaderParams
    from .modern.headers import header_params as header_params

__all__ = [
    *__all__,
    "LATEST_LEGACY",
    "LEGACY_VERSIONS",
    "NEED_DATA",
    "AbortExchange",
    "Attempt",
    "Call",
    "CallCancelledError",
    "CallFailed",
    "CallHost",
    "CallProgress",
    "CallSucceeded",
    "ClientCore",
    "CloseTransport",
    "Closed",
    "Connect",
    "ConnectFailed",
    "Connected",
    "Connection",
    "ConnectionState",
    "Diagnostic",
    "Disconnected",
    "Effect",
    "Event",
    "ExchangeFailure",
    "Frame",
    "Handlers",
    "HeaderParams",
    "LineFramer",
    "ListenAcknowledged",
    "ListenEnded",
    "ListenInterrupted",
    "ListenNotification",
    "Log",
    "LogMessage",
    "MessageDiscarded",
    "NotificationReceived",
    "Notify",
    "Op",
    "OpenTransport",
    "ProgressCallback",
    "PromptArgument",
    "ServerConfig",
    "ServerEntry",
    "ServerInfo",
    "ServerRequest",
    "SetLogLevel",
    "StartExchange",
    "TryConnect",
    "Write",
    "detect_transport",
    "header_params",
    "parse_content_item",
    "parse_server_definitions",
    "redact_config",
    "to_anthropic_tools",
    "to_google_tools",
    "to_openai_tools",
]
__all__.sort(key=_export_order)


if not TYPE_CHECKING:  # (for mypy, the names are the imports above)

    def __getattr__(name: str) -> object:
        # PEP 562: the 2026-07-28 revision's names load at first use, not with the package
        # (``import mcp_io_sync`` stays light).
        if name in ("HeaderParams", "header_params"):
            from .modern import headers

            return getattr(headers, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__version__ = "0.1.0"
