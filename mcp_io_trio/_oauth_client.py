"""``mcp_io_trio.oauth_client`` (§E5, AUTH-33): the Trio twin of
``mcp_io_sync.oauth_client`` — the same helpers, ``start_oauth_flow`` and
``complete_oauth_flow`` awaited (their exchanges over httpcore's Trio backend)."""

from __future__ import annotations

import logging
import time
from typing import Any

import httpcore

from mcp_io_common.httpcore_glue import HTTPCORE_ERRORS, enc, str_headers
from mcp_io_common.oauth_callback import EXCHANGE_TIMEOUTS, FlowRun, exchange_error
from mcp_io_common.oauth_client import (
    completion_flow,
    create_http_server,
    create_streamable_http_server,
    has_valid_token,
    start_flow,
)
from mcp_proto.oauth import Flow, HttpRequest, HttpResponse, Token

__all__ = [
    "complete_oauth_flow",
    "create_http_server",
    "create_streamable_http_server",
    "has_valid_token",
    "run_flow",
    "start_oauth_flow",
]

_LOGGER = logging.getLogger("mcp_io_trio.oauth")


async def start_oauth_flow(server: Any) -> str:
    """See ``mcp_io_sync.oauth_client.start_oauth_flow``: the authorization URL."""
    url, _state = await run_flow(start_flow(server))
    assert isinstance(url, str)
    return url


async def complete_oauth_flow(
    server: Any, code: str, state: str, *, iss: str | None = None
) -> Token:
    """See ``mcp_io_sync.oauth_client.complete_oauth_flow``: the token."""
    token = await run_flow(completion_flow(server, code, state, iss))
    assert isinstance(token, Token)
    return token


async def run_flow(flow: Flow[Any], logger: Any = None) -> Any:
    """Run one of the provider's flows that needs only exchanges (notices go to
    ``logger``); returns what it returns."""
    async with httpcore.AsyncConnectionPool() as pool:
        return await drive(FlowRun(flow, logger or _LOGGER), pool)


async def drive(run: FlowRun, pool: httpcore.AsyncConnectionPool) -> Any:
    try:
        request = run.next(None)
        while request is not None:
            request = run.next(await _fetch(pool, request))
    finally:
        run.close()
    return run.result


async def _fetch(pool: httpcore.AsyncConnectionPool, request: HttpRequest) -> HttpResponse:
    """One exchange of the flow, its body read up to ``max_response_bytes + 1``."""
    bound = request.max_response_bytes
    parts: list[bytes] = []
    size = 0
    try:
        async with pool.stream(
            request.method,
            request.url,
            headers=enc(list(request.headers)),
            content=request.body,
            extensions={"timeout": EXCHANGE_TIMEOUTS},
        ) as response:
            async for chunk in response.aiter_stream():
                parts.append(chunk)
                size += len(chunk)
                if bound is not None and size > bound:
                    break
            status, headers = response.status, str_headers(response.headers)
    except (*HTTPCORE_ERRORS, OSError) as exc:
        raise exchange_error(request, exc) from exc
    return HttpResponse(status, tuple(headers), b"".join(parts), time.time())
