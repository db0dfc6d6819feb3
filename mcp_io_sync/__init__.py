"""mcp_io_sync: the blocking shell of mcp-proto (pipes, processes, threads).

from mcp_io_sync import connect

with connect("python server.py") as client:
    print([t.name for t in client.list_tools()])
    print(client.call_tool("echo", {"text": "hi"}))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_io_common.lazy import MODERN_EXPORTS, OAUTH_EXPORTS, lazy_attributes
from mcp_proto import deprecations as deprecations
from mcp_proto.config import http_config as http_config
from mcp_proto.config import sse_config as sse_config
from mcp_proto.config import stdio_config as stdio_config
from mcp_proto.config import streamable_http_config as streamable_http_config
from mcp_proto.config import websocket_config as websocket_config
from mcp_proto.errors import (  # the error classes, re-exported by both shells
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
from mcp_proto.limits import Limits as Limits
from mcp_proto.results import CompletionResult as CompletionResult
from mcp_proto.results import PromptMessage as PromptMessage
from mcp_proto.results import PromptResult as PromptResult
from mcp_proto.results import ResourcePage as ResourcePage
from mcp_proto.results import ResourceTemplatePage as ResourceTemplatePage
from mcp_proto.results import ToolResult as ToolResult
from mcp_proto.types import AudioContent as AudioContent
from mcp_proto.types import ContentItem as ContentItem
from mcp_proto.types import EmbeddedResource as EmbeddedResource
from mcp_proto.types import ImageContent as ImageContent
from mcp_proto.types import Implementation as Implementation
from mcp_proto.types import Prompt as Prompt
from mcp_proto.types import Resource as Resource
from mcp_proto.types import ResourceContent as ResourceContent
from mcp_proto.types import ResourceLink as ResourceLink
from mcp_proto.types import ResourceTemplate as ResourceTemplate
from mcp_proto.types import Root as Root
from mcp_proto.types import TextContent as TextContent
from mcp_proto.types import Tool as Tool
from mcp_proto.types import parse_tool_content as parse_tool_content

from ._client import Client as Client
from ._connect import connect as connect
from ._connect import create_client as create_client
from ._stdio import StdioServer as StdioServer

__all__ = [
    "AllTransportsFailedError",
    "AmbiguousPromptName",
    "AmbiguousResourceURI",
    "AmbiguousToolName",
    "AudioContent",
    "BrowserOAuth",
    "CacheInfo",
    "CapabilityError",
    "Client",
    "CommandNotFoundError",
    "CompletionResult",
    "ContentItem",
    "EmbeddedResource",
    "HeaderAnnotationError",
    "HeaderMismatchError",
    "ImageContent",
    "Implementation",
    "IncompatibleServerError",
    "InputRequiredError",
    "InputRequiredWait",
    "InsufficientScopeError",
    "Limits",
    "LineTooLongError",
    "LocalProtocolError",
    "MCPConnectionError",
    "MCPError",
    "MissingRequiredClientCapabilityError",
    "Prompt",
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
    "ServerError",
    "ServerNotFound",
    "SessionExpiredError",
    "SkillError",
    "SkillVerificationError",
    "StdioServer",
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
    "UnauthorizedError",
    "UnknownResultTypeError",
    "UnsupportedProtocolVersionError",
    "ValidationError",
    "WebSocketClosedError",
    "WebSocketHandshakeError",
    "WebSocketProtocolError",
    "connect",
    "create_client",
    "header_params",
    "http_config",
    "parse_tool_content",
    "sse_config",
    "stdio_config",
    "streamable_http_config",
    "websocket_config",
]

if TYPE_CHECKING:
    from mcp_proto.modern.cache import CacheInfo as CacheInfo
    from mcp_proto.modern.headers import header_params as header_params
    from mcp_proto.modern.mrtr import InputRequiredWait as InputRequiredWait

    from ._oauth import BrowserOAuth as BrowserOAuth
else:  # the 2026-07-28 revision's names load at first use, not with the package
    __getattr__ = lazy_attributes(__name__, {**MODERN_EXPORTS, **OAUTH_EXPORTS[__name__]})

__version__ = "0.1.0"
