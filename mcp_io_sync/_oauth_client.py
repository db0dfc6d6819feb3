"""``mcp_io_sync.oauth_client`` (§E5, AUTH-33; the Ruby client's ``OAuthClient``):
build a server configuration with an ``OAuthProvider`` attached, start its
authorization (the URL for the user), complete it with the redirect's ``code`` and
``state``, ask whether a usable token is stored. The shared parts are
``mcp_io_common.oauth_client``'s, every rule the core's; this module runs the
provider's flows, blocking: their exchanges over httpcore, each body read up to the
bound the flow gives."""

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

_LOGGER = logging.getLogger("mcp_io_sync.oauth")


def start_oauth_flow(server: Any) -> str:
    """Discover and register for ``server`` (a configuration from
    :func:`create_http_server`/:func:`create_streamable_http_server`, or any with an
    ``oauth_provider``), store the pending request, and return the authorization URL
    for the user to open. Discovery starts at the well-known URIs (no 401 is in hand).

    Raises:
        ValueError: the server has no OAuth provider.
        OAuthError: discovery or registration failed (docs/oauth.md, "Errors").
    """
    url, _state = run_flow(start_flow(server))
    assert isinstance(url, str)
    return url


def complete_oauth_flow(server: Any, code: str, state: str, *, iss: str | None = None) -> Token:
    """Check the authorization response (``state`` names the pending request; RFC
    9207 ``iss`` when the server sent one) and exchange ``code``; returns the token,
    which is also stored.

    Raises:
        ValueError: the server has no OAuth provider.
        OAuthCallbackError: an unknown ``state``, an ``iss`` mismatch... (nothing sent).
        OAuthTokenError: the token endpoint refused.
    """
    token = run_flow(completion_flow(server, code, state, iss))
    assert isinstance(token, Token)
    return token


def run_flow(flow: Flow[Any], logger: Any = None) -> Any:
    """Run one of the provider's flows that needs only exchanges (notices go to
    ``logger``); returns what it returns."""
    with httpcore.ConnectionPool() as pool:
        return drive(FlowRun(flow, logger or _LOGGER), pool)


def drive(run: FlowRun, pool: httpcore.ConnectionPool) -> Any:
    try:
        request = run.next(None)
        while request is not None:
            request = run.next(_fetch(pool, request))
    finally:
        run.close()
    return run.result


def _fetch(pool: httpcore.ConnectionPool, request: HttpRequest) -> HttpResponse:
    """One exchange of the flow, its body read up to ``max_response_bytes + 1`` (the
    flow refuses a larger one: an endless document costs a bounded read)."""
    bound = request.max_response_bytes
    parts: list[bytes] = []
    size = 0
    try:
        with pool.stream(
            request.method,
            request.url,
            headers=enc(list(request.headers)),
            content=request.body,
            extensions={"timeout": EXCHANGE_TIMEOUTS},
        ) as response:
            for chunk in response.iter_stream():
                parts.append(chunk)
                size += len(chunk)
                if bound is not None and size > bound:
                    break
            status, headers = response.status, str_headers(response.headers)
    except (*HTTPCORE_ERRORS, OSError) as exc:
        raise exchange_error(request, exc) from exc
    return HttpResponse(status, tuple(headers), b"".join(parts), time.time())
