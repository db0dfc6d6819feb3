"""Reading an ``mcpServers`` definition file (CONN-19) for both shells; the parsing
and its rules are the core's (``mcp_proto.definitions``)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from mcp_proto.config import ServerConfig, parse_server_definitions

__all__ = ["load_definition_file"]


def load_definition_file(path: str | Path, logger: logging.Logger) -> list[ServerConfig]:
    """Read an ``{"mcpServers": {...}}`` file (CONN-19); both shells use this. Its
    ``${VAR}`` placeholders are expanded from this process's environment, as the hosts
    that write these files do (``mcp_proto.placeholders``)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read server definition file {str(path)!r}: {exc}") from exc
    except ValueError as exc:
        raise ValueError(f"server definition file {str(path)!r} is not valid JSON: {exc}") from exc
    parsed, warnings = parse_server_definitions(data, environ=os.environ)
    for warning in warnings:
        logger.warning("%s: %s", path, warning)
    return parsed
