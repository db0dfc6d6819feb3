"""mcp_proto: a sans-IO Model Context Protocol client core.

Bytes, messages and ``now`` go in; frames, events and deadlines come out. No sockets,
threads, clocks or logging inside: the shells ``mcp_io_sync`` and ``mcp_io_trio`` do the
I/O. See ``docs/architecture.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import errors as errors
from ._util import NEED_DATA as NEED_DATA
from .client import ClientCore as ClientCore
from .client import ServerEntry as ServerEntry
from .config import ServerConfig as ServerConfig
from .config import detect_transport as detect_transport
from .config import http_config as http_config
from .config import parse_server_definitions as parse_server_definitions
from .config import redact_config as redact_config
from .config import sse_config as sse_config
from .config import stdio_config as stdio_config
from .config import streamable_http_config as streamable_http_config
from .effects import Call as Call
from .effects import CallHost as CallHost
from .effects import Connect as Connect
from .effects import Log as Log
from .effects import Notify as Notify
from .errors import *  # noqa: F403 - the hierarchy is part of the public API
from .events import LogMessage as LogMessage
from .events import MessageDiscarded as MessageDiscarded
from .events import NotificationReceived as NotificationReceived
from .events import ProgressReceived as ProgressReceived
from .events import RequestFailed as RequestFailed
from .events import ResponseReceived as ResponseReceived
from .events import ServerRequest as ServerRequest
from .handlers import Handlers as Handlers
from .limits import Limits as Limits
from .llm import to_anthropic_tools as to_anthropic_tools
from .llm import to_google_tools as to_google_tools
from .llm import to_openai_tools as to_openai_tools
from .results import CompletionResult as CompletionResult
from .results import PromptMessage as PromptMessage
from .results import PromptResult as PromptResult
from .results import ResourcePage as ResourcePage
from .results import ResourceTemplatePage as ResourceTemplatePage
from .results import ToolResult as ToolResult
from .session import ServerInfo as ServerInfo
from .session import Session as Session
from .session import State as State
from .stdio import LineFramer as LineFramer
from .types import AudioContent as AudioContent
from .types import ContentItem as ContentItem
from .types import EmbeddedResource as EmbeddedResource
from .types import ImageContent as ImageContent
from .types import Implementation as Implementation
from .types import Prompt as Prompt
from .types import PromptArgument as PromptArgument
from .types import Resource as Resource
from .types import ResourceContent as ResourceContent
from .types import ResourceLink as ResourceLink
from .types import ResourceTemplate as ResourceTemplate
from .types import Root as Root
from .types import TextContent as TextContent
from .types import Tool as Tool
from .types import parse_content_item as parse_content_item
from .types import parse_tool_content as parse_tool_content
from .versions import LATEST_LEGACY as LATEST_LEGACY
from .versions import LEGACY_VERSIONS as LEGACY_VERSIONS

if TYPE_CHECKING:
    from .modern.headers import HeaderParams as HeaderParams
    from .modern.headers import header_params as header_params


if not TYPE_CHECKING:  # (for mypy, the names are the imports above)

    def __getattr__(name: str) -> Any:
        # PEP 562: the 2026-07-28 revision's names load at first use, not with the package
        # (``import mcp_io_sync`` stays light).
        if name in ("HeaderParams", "header_params"):
            from .modern import headers

            return getattr(headers, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__version__ = "0.1.0"
