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
from .client import (
    ClientCore,
    ServerEntry,
)
from .config import (
    ServerConfig,
    detect_transport,
    http_config,
    parse_server_definitions,
    redact_config,
    sse_config,
    stdio_config,
    streamable_http_config,
    websocket_config,
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
from .errors import (
    AllTransportsFailedError,
    AmbiguousPromptName,
    AmbiguousResourceURI,
    AmbiguousToolName,
    CapabilityError,
    CommandNotFoundError,
    HeaderAnnotationError,
    HeaderMismatchError,
    IncompatibleServerError,
    InputRequiredError,
    InsufficientScopeError,
    LineTooLongError,
    LocalProtocolError,
    MCPConnectionError,
    MCPError,
    MissingRequiredClientCapabilityError,
    PromptGetError,
    PromptNotFound,
    RemoteProtocolError,
    RequestTimeoutError,
    ResourceNotFound,
    ResourceReadError,
    ResponseStreamClosedError,
    ResponseTooLargeError,
    SchemaError,
    ServerError,
    ServerNotFound,
    SessionExpiredError,
    SkillError,
    SkillVerificationError,
    TaskError,
    TaskNotFound,
    TaskReplacedError,
    ToolCallError,
    ToolNotFound,
    TransientServerError,
    TransportDetectionError,
    TransportError,
    UnauthorizedError,
    UnknownResultTypeError,
    UnsupportedProtocolVersionError,
    ValidationError,
    WebSocketClosedError,
    WebSocketHandshakeError,
    WebSocketProtocolError,
)
from .handlers import (
    Handlers,
)
from .limits import (
    Limits,
)
from .llm import (
    to_anthropic_tools,
    to_google_tools,
    to_openai_tools,
)
from .results import (
    CompletionResult,
    PromptMessage,
    PromptResult,
    ResourcePage,
    ResourceTemplatePage,
    ToolResult,
)
from .session import (
    ServerInfo,
)
from .stdio import (
    LineFramer,
)
from .types import (
    AudioContent,
    ContentItem,
    EmbeddedResource,
    ImageContent,
    Implementation,
    Prompt,
    PromptArgument,
    Resource,
    ResourceContent,
    ResourceLink,
    ResourceTemplate,
    Root,
    TextContent,
    Tool,
    parse_content_item,
    parse_tool_content,
)
from .versions import (
    LATEST_LEGACY,
    LEGACY_VERSIONS,
)

if TYPE_CHECKING:
    from .modern.headers import HeaderParams as HeaderParams
    from .modern.headers import header_params as header_params

__all__ = [
    "LATEST_LEGACY",
    "LEGACY_VERSIONS",
    "NEED_DATA",
    "AbortExchange",
    "AllTransportsFailedError",
    "AmbiguousPromptName",
    "AmbiguousResourceURI",
    "AmbiguousToolName",
    "Attempt",
    "AudioContent",
    "Call",
    "CallCancelledError",
    "CallFailed",
    "CallHost",
    "CallProgress",
    "CallSucceeded",
    "CapabilityError",
    "ClientCore",
    "CloseTransport",
    "Closed",
    "CommandNotFoundError",
    "CompletionResult",
    "Connect",
    "ConnectFailed",
    "Connected",
    "Connection",
    "ConnectionState",
    "ContentItem",
    "Diagnostic",
    "Disconnected",
    "Effect",
    "EmbeddedResource",
    "Event",
    "ExchangeFailure",
    "Frame",
    "Handlers",
    "HeaderAnnotationError",
    "HeaderMismatchError",
    "HeaderParams",
    "ImageContent",
    "Implementation",
    "IncompatibleServerError",
    "InputRequiredError",
    "InsufficientScopeError",
    "Limits",
    "LineFramer",
    "LineTooLongError",
    "ListenAcknowledged",
    "ListenEnded",
    "ListenInterrupted",
    "ListenNotification",
    "LocalProtocolError",
    "Log",
    "LogMessage",
    "MCPConnectionError",
    "MCPError",
    "MessageDiscarded",
    "MissingRequiredClientCapabilityError",
    "NotificationReceived",
    "Notify",
    "Op",
    "OpenTransport",
    "ProgressCallback",
    "Prompt",
    "PromptArgument",
    "PromptGetError",
    "PromptMessage",
    "PromptNotFound",
    "PromptResult",
    "RemoteProtocolError",
    "RequestTimeoutError",
    "Resource",
    "ResourceContent",
    "ResourceLink",
    "ResourceNotFound",
    "ResourcePage",
    "ResourceReadError",
    "ResourceTemplate",
    "ResourceTemplatePage",
    "ResponseStreamClosedError",
    "ResponseTooLargeError",
    "Root",
    "SchemaError",
    "ServerConfig",
    "ServerEntry",
    "ServerError",
    "ServerInfo",
    "ServerNotFound",
    "ServerRequest",
    "SessionExpiredError",
    "SetLogLevel",
    "SkillError",
    "SkillVerificationError",
    "StartExchange",
    "TaskError",
    "TaskNotFound",
    "TaskReplacedError",
    "TextContent",
    "Tool",
    "ToolCallError",
    "ToolNotFound",
    "ToolResult",
    "TransientServerError",
    "TransportDetectionError",
    "TransportError",
    "TryConnect",
    "UnauthorizedError",
    "UnknownResultTypeError",
    "UnsupportedProtocolVersionError",
    "ValidationError",
    "WebSocketClosedError",
    "WebSocketHandshakeError",
    "WebSocketProtocolError",
    "Write",
    "detect_transport",
    "header_params",
    "http_config",
    "parse_content_item",
    "parse_server_definitions",
    "parse_tool_content",
    "redact_config",
    "sse_config",
    "stdio_config",
    "streamable_http_config",
    "to_anthropic_tools",
    "to_google_tools",
    "to_openai_tools",
    "websocket_config",
]


if not TYPE_CHECKING:  # (for mypy, the names are the imports above)

    def __getattr__(name: str) -> object:
        # PEP 562: the 2026-07-28 revision's names load at first use, not with the package
        # (``import mcp_io_sync`` stays light).
        if name in ("HeaderParams", "header_params"):
            from .modern import headers

            return getattr(headers, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__version__ = "0.1.0"
