"""``connect`` and ``create_client``: a :class:`~mcp_io_sync.Client` from a target (a
URL or a command line) or from server definitions."""

from __future__ import annotations

from mcp_io_common.connecting import (
    ClientArguments,
    ConnectArguments,
    takes_client_arguments,
    takes_connect_arguments,
)

from ._client import Client

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


@takes_client_arguments
def create_client(args: ClientArguments) -> Client:
    """Build a client from server definitions; servers connect lazily, on first use."""
    return args.client(Client)
