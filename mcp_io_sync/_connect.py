"""``connect`` and ``create_client``: a :class:`~mcp_io_sync.Client` from a target (a
URL or a command line) or from server definitions."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from mcp_io_common.connecting import ConnectArguments, takes_connect_arguments
from mcp_io_common.files import client_configs
from mcp_proto.config import ServerConfig

from ._client import _LOGGER, Client

__all__ = ["connect", "create_client"]


@takes_connect_arguments
def connect(args: ConnectArguments) -> Client:
    """Connect to one server (or several: a list of targets) and return the client."""
    client = Client(args.configs, **args.client_kwargs)
    try:
        # The core tries the transports and decides fallback (BaseClient._connect_op).
        client._run(client._connect_op(args.plans))
    except BaseException:
        client.close()
        raise
    return client


def create_client(
    mcp_server_configs: Iterable[ServerConfig | Mapping[str, object]] = (),
    *,
    server_definition_file: str | Path | None = None,
    logger: logging.Logger | None = None,
    **client_kwargs: Any,
) -> Client:
    """Build a client from config objects and/or an ``{"mcpServers": {...}}`` file.

    Servers connect lazily, on first use.
    """
    configs = client_configs(mcp_server_configs, server_definition_file, logger or _LOGGER)
    return Client(configs, logger=logger, **client_kwargs)
