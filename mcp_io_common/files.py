"""Reading an ``mcpServers`` definition file (CONN-19) for both shells and the command
line; decoding it and the parsing rules are the core's (``mcp_proto.definitions``)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from mcp_proto.config import (
    MAX_DEFINITION_FILE,
    ServerConfig,
    decode_definition_file,
    parse_server_definitions,
)

__all__ = ["client_configs", "file_workspace", "load_definition_file", "read_definition_file"]


def read_definition_file(path: str | Path) -> object:
    """The JSON document of a definition file, read bounded (a wrong path such as
    ``/dev/zero`` is refused after :data:`MAX_DEFINITION_FILE` bytes, not read for
    ever).

    Raises:
        OSError: the file cannot be read. ValueError: :func:`decode_definition_file`'s
            reasons ("is not valid JSON: ..."), to be prefixed with the path.
    """
    with open(path, "rb") as f:
        data = f.read(MAX_DEFINITION_FILE + 1)
    return decode_definition_file(data)


def file_workspace(path: str | Path) -> str | None:
    """What ``${workspaceFolder}`` means in the definition file at ``path``: the folder
    above its ``.vscode/`` (or a project's ``.cursor/``), as VS Code defines it; None
    for a file in no workspace (the rule is the core's)."""
    from mcp_proto.placeholders import workspace_folder

    return workspace_folder(os.path.abspath(path), os.environ.get("HOME"))


def load_definition_file(path: str | Path, logger: logging.Logger) -> list[ServerConfig]:
    """Read an ``{"mcpServers": {...}}`` file (CONN-19); both shells use this. Its
    ``${VAR}`` placeholders are expanded from this process's environment, as the hosts
    that write these files do (``mcp_proto.placeholders``).

    Raises:
        ValueError: the file cannot be read, or is not a definition document; one
            line naming the file.
    """
    path = Path(path)
    try:
        data = read_definition_file(path)
    except OSError as exc:
        raise ValueError(
            f"cannot read server definition file {str(path)!r}: {exc.strerror or exc}"
        ) from exc
    except ValueError as exc:
        raise ValueError(f"server definition file {str(path)!r} {exc}") from None
    parsed, warnings = parse_server_definitions(
        data, environ=os.environ, workspace=file_workspace(path)
    )
    for warning in warnings:
        logger.warning("%s: %s", path, warning)
    return parsed


def client_configs(
    configs: Iterable[ServerConfig | Mapping[str, object]],
    definition_file: str | Path | None,
    logger: logging.Logger,
) -> list[ServerConfig | Mapping[str, object]]:
    """``create_client``'s servers: ``configs``, then those of ``definition_file``
    (its problems logged to ``logger``)."""
    out = list(configs)
    if definition_file is not None:
        out.extend(load_definition_file(definition_file, logger))
    return out
