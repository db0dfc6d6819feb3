"""``connect`` and ``create_client``: a :class:`~mcp_io_trio.Client` from a target (a
URL or a command line) or from server definitions."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp_io_common.connecting import ConnectArguments, takes_connect_arguments
from mcp_io_common.files import client_configs
from mcp_proto.config import ServerConfig

from ._client import _LOGGER, Client

__all__ = ["connect", "create_client"]


@asynccontextmanager
@takes_connect_arguments
async def connect(args: ConnectArguments) -> AsyncIterator[Client]:
    """``async with connect(target, ...) as client:`` — a connected client whose
    background tasks live in its own nursery (same arguments, transport detection,
    command lookup and errors as ``mcp_io_sync.connect``)."""
    async with Client(args.configs, **args.client_kwargs) as client:
        # The core tries the transports and decides fallback (BaseClient._connect_op).
        await client._run(client._connect_op(args.plans))
        yield client


def create_client(
    mcp_server_configs: Iterable[ServerConfig | Mapping[str, object]] = (),
    *,
    server_definition_file: str | Path | None = None,
    logger: logging.Logger | None = None,
    **client_kwargs: Any,
) -> Client:
    """Build a client (use it with ``async with``) from configs and/or an
    ``{"mcpServers": {...}}`` file. Servers connect lazily, on first use."""
    configs = client_configs(mcp_server_configs, server_definition_file, logger or _LOGGER)
    return Client(configs, logger=logger, **client_kwargs)
