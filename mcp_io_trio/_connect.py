"""``connect`` and ``create_client``: a :class:`~mcp_io_trio.Client` from a target (a
URL or a command line) or from server definitions."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from mcp_io_common.commands import check_commands
from mcp_io_common.files import load_definition_file
from mcp_proto.config import ProtocolMode, ServerConfig
from mcp_proto.targets import TargetOptions, connect_all, plan_targets

from ._client import _LOGGER, Client

__all__ = ["connect", "create_client"]


@asynccontextmanager
async def connect(
    target: str | Sequence[str],
    *,
    transport: Literal["stdio", "sse", "http", "plain_http", "streamable_http", "websocket"]
    | None = None,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    headers: Mapping[str, str] | None = None,
    read_timeout: float | None = None,
    retries: int | None = None,
    retry_backoff: float | None = None,
    endpoint: str | None = None,
    ping: float | None = None,
    protocol: ProtocolMode = "auto",
    discover_timeout: float | None = None,
    oauth_provider: object | None = None,
    **client_kwargs: Any,
) -> AsyncIterator[Client]:
    """``async with connect(target, ...) as client:`` — a connected client whose
    background tasks live in its own nursery. Same arguments, transport detection,
    command lookup and errors as ``mcp_io_sync.connect``."""
    plans = plan_targets(
        target,
        transport=transport,
        name=name,
        options=TargetOptions(
            env=env,
            cwd=cwd,
            headers=headers,
            read_timeout=read_timeout,
            retries=retries,
            retry_backoff=retry_backoff,
            endpoint=endpoint,
            ping=ping,
            protocol=protocol,
            discover_timeout=discover_timeout,
            oauth_provider=oauth_provider,
        ),
    )
    check_commands(plans)
    async with Client([plan.configs[0] for plan in plans], **client_kwargs) as client:
        # The core tries the transports and decides fallback (targets.connect_op).
        await client._run(connect_all([s.name for s in client.servers], plans))
        yield client


def create_client(
    mcp_server_configs: Iterable[ServerConfig | Mapping[str, Any]] = (),
    *,
    server_definition_file: str | Path | None = None,
    logger: logging.Logger | None = None,
    **client_kwargs: Any,
) -> Client:
    """Build a client (use it with ``async with``) from configs and/or an
    ``{"mcpServers": {...}}`` file. Servers connect lazily, on first use."""
    configs = list(mcp_server_configs)
    if server_definition_file is not None:
        configs.extend(load_definition_file(server_definition_file, logger or _LOGGER))
    return Client(configs, logger=logger, **client_kwargs)
