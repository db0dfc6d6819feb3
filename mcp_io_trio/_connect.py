"""``connect`` and ``create_client``: a :class:`~mcp_io_trio.Client` from a target (a
URL or a command line) or from server definitions."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp_io_common.connecting import (
    ClientArguments,
    ConnectArguments,
    takes_client_arguments,
    takes_connect_arguments,
)

from ._client import Client

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


@takes_client_arguments
def create_client(args: ClientArguments) -> Client:
    """Build a client (use it with ``async with``) from server definitions; servers
    connect lazily, on first use."""
    return args.client(Client)
