"""``mcp_io_trio.oauth_client`` (§E5, AUTH-33): the Trio twin of
``mcp_io_sync.oauth_client`` — the same helpers, ``start_oauth_flow`` and
``complete_oauth_flow`` awaited (their exchanges over httpcore's Trio backend)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Generator
from functools import partial
from typing import Any, TypeVar

import httpcore

from mcp_io_common.oauth_client import (
    SHELL_EXPORTS,
    completion_flow,
    start_flow,
)
from mcp_io_common.oauth_client import create_http_server as create_http_server
from mcp_io_common.oauth_client import (
    create_streamable_http_server as create_streamable_http_server,
)
from mcp_io_common.oauth_client import has_valid_token as has_valid_token
from mcp_io_common.oauth_exchange import FlowExchange, FlowRun, exchanges
from mcp_proto.oauth import Flow, HttpRequest, HttpResponse, Token

__all__ = list(SHELL_EXPORTS)

E = TypeVar("E")
R = TypeVar("R")
T = TypeVar("T")

_LOGGER = logging.getLogger("mcp_io_trio.oauth")


async def start_oauth_flow(server: Any) -> str:
    """See ``mcp_io_sync.oauth_client.start_oauth_flow``: the authorization URL."""
    return await run_flow(start_flow(server))


async def complete_oauth_flow(
    server: Any, code: str, state: str, *, iss: str | None = None
) -> Token:
    """See ``mcp_io_sync.oauth_client.complete_oauth_flow``: the token."""
    return await run_flow(completion_flow(server, code, state, iss))


async def run_flow(flow: Flow[T], logger: logging.Logger | None = None) -> T:
    """See ``mcp_io_sync.oauth_client.run_flow``; the exchanges over httpcore's Trio
    backend."""
    async with httpcore.AsyncConnectionPool() as pool:
        return await drive(exchanges(flow, logger or _LOGGER), partial(fetch, pool))


async def drive(flow: Generator[E, R, T], perform: Callable[[E], Awaitable[R]]) -> T:
    """Run ``flow``, each effect it yields awaited through ``perform`` and its result
    sent back; returns what the flow returns. A failure (or a cancellation) closes the
    flow."""
    with FlowRun(flow) as run:
        effect = run.send(None)
        while effect is not None:
            effect = run.send(await perform(effect))
    return run.result


async def fetch(pool: httpcore.AsyncConnectionPool, request: HttpRequest) -> HttpResponse:
    """One exchange of a flow over ``pool``, awaited; its body read up to the flow's
    bound."""
    exchange = FlowExchange(request)
    with exchange.errors():
        async with pool.stream(**exchange.stream_args()) as response:
            async for chunk in response.aiter_stream():
                if not exchange.keep(chunk):
                    break
            return exchange.response(response)
