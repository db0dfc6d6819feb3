"""The names every package of mcp-proto exports alike: the error classes, the value
types, the typed results, ``Limits`` and the configuration helpers.

``mcp_proto``, ``mcp_io_sync`` and ``mcp_io_trio`` star-import this module and add
their own names (the machine and the core's operations; each shell's ``Client`` and
``connect``), so a name shared by all three is listed once, here (the error classes once
more in :mod:`mcp_proto.errors`, where they are defined).
"""

from __future__ import annotations

from ._util import export_order
from .client.facade import NotificationHandle as NotificationHandle
from .client.streaming import InputChunk as InputChunk
from .client.streaming import LogChunk as LogChunk
from .client.streaming import ProgressChunk as ProgressChunk
from .client.streaming import TaskChunk as TaskChunk
from .client.streaming import ToolChunk as ToolChunk
from .config import http_config as http_config
from .config import sse_config as sse_config
from .config import stdio_config as stdio_config
from .config import streamable_http_config as streamable_http_config
from .config import websocket_config as websocket_config
from .errors import *  # noqa: F403 (the error classes)
from .errors import __all__ as __all__  # (for mypy: the error classes are exported too)
from .limits import Limits as Limits
from .results import CompletionResult as CompletionResult
from .results import PromptMessage as PromptMessage
from .results import PromptResult as PromptResult
from .results import ResourcePage as ResourcePage
from .results import ResourceTemplatePage as ResourceTemplatePage
from .results import ToolResult as ToolResult
from .tasks import Task as Task
from .tasks import TaskPage as TaskPage
from .tasks import TaskStatus as TaskStatus
from .types import AudioContent as AudioContent
from .types import ContentItem as ContentItem
from .types import EmbeddedResource as EmbeddedResource
from .types import ImageContent as ImageContent
from .types import Implementation as Implementation
from .types import Prompt as Prompt
from .types import Resource as Resource
from .types import ResourceContent as ResourceContent
from .types import ResourceLink as ResourceLink
from .types import ResourceTemplate as ResourceTemplate
from .types import Root as Root
from .types import TextContent as TextContent
from .types import Tool as Tool
from .types import parse_tool_content as parse_tool_content

__all__ = [
    *__all__,
    "AudioContent",
    "CompletionResult",
    "ContentItem",
    "EmbeddedResource",
    "ImageContent",
    "Implementation",
    "InputChunk",
    "Limits",
    "LogChunk",
    "NotificationHandle",
    "Prompt",
    "PromptMessage",
    "ProgressChunk",
    "PromptResult",
    "Resource",
    "ResourceContent",
    "ResourceLink",
    "ResourcePage",
    "ResourceTemplate",
    "ResourceTemplatePage",
    "Root",
    "Task",
    "TaskChunk",
    "TaskPage",
    "TaskStatus",
    "TextContent",
    "Tool",
    "ToolChunk",
    "ToolResult",
    "http_config",
    "parse_tool_content",
    "sse_config",
    "stdio_config",
    "streamable_http_config",
    "websocket_config",
]
__all__.remove("server_error_from")  # the core's helper for a JSON-RPC error, not API
__all__.sort(key=export_order)
