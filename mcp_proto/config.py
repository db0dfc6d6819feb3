"""Server configuration as data: builders, raw dicts, ``mcpServers`` files, detection.

The shells read files and the environment; the modules behind this one only parse what
they hand in (CONN-17..20) and decide, from a ``connect`` target alone, which transport
it needs (CONN-2..7, CONN-10, CONN-11). They never open, resolve or execute anything.

This module gathers the public names of

* :mod:`mcp_proto.server_config`: :class:`ServerConfig` and its builders,
* :mod:`mcp_proto.definitions`: raw dicts and ``mcpServers`` documents,
* :mod:`mcp_proto.detection`: transport detection for ``connect`` targets,
* :mod:`mcp_proto.redaction`: :func:`redact_config`.
"""

from __future__ import annotations

from .definitions import (
    MAX_DEFINITION_FILE,
    TYPE_SPELLINGS,
    config_from_dict,
    decode_definition_file,
    parse_server_definitions,
)
from .detection import DetectedTransport, detect_transport, split_targets
from .redaction import REDACTED, redact_config
from .server_config import (
    DEFAULT_MAX_DECOMPRESSED_BODY_BYTES,
    MAX_SECONDS,
    ProtocolMode,
    ServerConfig,
    TransportType,
    http_config,
    sse_config,
    stdio_argv,
    stdio_config,
    streamable_http_config,
    websocket_config,
)

__all__ = [
    "DEFAULT_MAX_DECOMPRESSED_BODY_BYTES",
    "MAX_DEFINITION_FILE",
    "MAX_SECONDS",
    "REDACTED",
    "TYPE_SPELLINGS",
    "DetectedTransport",
    "ProtocolMode",
    "ServerConfig",
    "TransportType",
    "config_from_dict",
    "decode_definition_file",
    "detect_transport",
    "http_config",
    "parse_server_definitions",
    "redact_config",
    "split_targets",
    "sse_config",
    "stdio_argv",
    "stdio_config",
    "streamable_http_config",
    "websocket_config",
]
