"""``connect`` and ``create_client``: a :class:`~mcp_io_sync.Client` from a target (a
URL or a command line) or from server definitions."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from mcp_io_common.commands import check_commands
from mcp_io_common.files import load_definition_file
from mcp_proto.config import ProtocolMode, ServerConfig
from mcp_proto.targets import TargetOptions, connect_all, plan_targets

from ._client import _LOGGER, Client

__all__ = ["connect", "create_client"]


def connect(
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
) -> Client:
    """Connect to one server (or several: a list of targets) and return the client.

    ``target`` is a URL or a command line. A URL is used as given: ``…/sse`` is the
    deprecated HTTP+SSE transport, ``…/mcp`` Streamable HTTP, any other http(s) URL
    (``http://h:8000/`` included) is tried as Streamable HTTP, then HTTP+SSE, then plain
    HTTP (CONN-6). Any other string is a command line (``"mcp-server-time"``,
    ``"python server.py"``, ``"bash server.sh"``, ``"env K=V cmd"``, ``"stdio://cmd"``),
    as is an argv list; its first word must resolve on the child's PATH or as a file
    relative to ``cwd``. ``protocol`` picks the era (LIFE-7): ``"auto"`` (default)
    probes with ``server/discover`` (the 2026-07-28 revision) and falls back to the
    ``initialize`` handshake, ``"modern"`` speaks 2026-07-28 only
    (``IncompatibleServerError`` from a handshake-era server), ``"legacy"`` the
    handshake only; ``discover_timeout`` bounds the probe (docs/usage.md, "The protocol
    era"). ``oauth_provider`` is not supported yet: it raises ``ValueError`` before
    anything starts. Every other keyword goes to :class:`Client`. The servers are connected
    before this returns; on failure nothing is left running. The fallback chain stops
    at the first answer that proves an MCP server is there (a 401/403, a JSON-RPC
    answer): that error is raised as it is.

    Raises:
        CommandNotFoundError: a command's first word does not resolve (nothing started).
        AllTransportsFailedError: every transport of the fallback chain failed; the
            message names each URL tried.
        TransportDetectionError: the target is neither a URL nor a command line.
        UnauthorizedError: HTTP 401/403; carries the Bearer challenge's fields.
        ConnectionError: the server could not be reached or refused the handshake.
        IncompatibleServerError: ``protocol="modern"`` and the server speaks only the
            handshake era (a ``ConnectionError``).
        ValueError: an invalid option, or one not supported yet (``oauth_provider``).
    """
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
    client = Client([plan.configs[0] for plan in plans], **client_kwargs)
    try:
        # The core tries the transports and decides fallback (targets.connect_op).
        client._run(connect_all([s.name for s in client.servers], plans))
    except BaseException:
        client.close()
        raise
    return client


def create_client(
    mcp_server_configs: Iterable[ServerConfig | Mapping[str, Any]] = (),
    *,
    server_definition_file: str | Path | None = None,
    logger: logging.Logger | None = None,
    **client_kwargs: Any,
) -> Client:
    """Build a client from config objects and/or an ``{"mcpServers": {...}}`` file.

    Servers connect lazily, on first use.
    """
    configs = list(mcp_server_configs)
    if server_definition_file is not None:
        configs.extend(load_definition_file(server_definition_file, logger or _LOGGER))
    return Client(configs, logger=logger, **client_kwargs)
