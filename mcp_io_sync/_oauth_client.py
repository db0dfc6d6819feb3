"""``mcp_io_sync.oauth_client`` (§E5, AUTH-33; the Ruby client's ``OAuthClient``):
build a server configuration with an ``OAuthProvider`` attached, start its
authorization (the URL for the user), complete it with the redirect's ``code`` and
``state``, ask whether a usable token is stored. The shared parts are
``mcp_io_common.oauth_client``'s (the flows) and ``mcp_io_common.oauth_exchange``'s
(their steps, each exchange but its I/O), every rule the core's; this module runs the
provider's flows, blocking: their exchanges over httpcore, each body read up to the
bound the flow gives. Its ``drive`` and ``fetch`` also run ``BrowserOAuth``'s flows."""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
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
    return run_flow(start_flow(server))


def complete_oauth_flow(server: Any, code: str, state: str, *, iss: str | None = None) -> Token:
    """Check the authorization response (``state`` names the pending request; RFC
    9207 ``iss`` when the server sent one) and exchange ``code``; returns the token,
    which is also stored.

    Raises:
        ValueError: the server has no OAuth provider.
        OAuthCallbackError: an unknown ``state``, an ``iss`` mismatch... (nothing sent).
        OAuthTokenError: the token endpoint refused.
    """
    return run_flow(completion_flow(server, code, state, iss))


def run_flow(flow: Flow[T], logger: logging.Logger | None = None) -> T:
    """Run one of the provider's flows that needs only exchanges (notices go to
    ``logger``); returns what it returns."""
    with httpcore.ConnectionPool() as pool:
        return drive(exchanges(flow, logger or _LOGGER), partial(fetch, pool))


def drive(flow: Generator[E, R, T], perform: Callable[[E], R]) -> T:
    """Run ``flow``, each effect it yields performed by ``perform`` (blocking) and its
    result sent back; returns what the flow returns. A failure closes the flow."""
    with FlowRun(flow) as run:
        effect = run.send(None)
        while effect is not None:
            effect = run.send(perform(effect))
    return run.result


def fetch(pool: httpcore.ConnectionPool, request: HttpRequest) -> HttpResponse:
    """One exchange of a flow over ``pool``, its body read up to the flow's bound."""
    exchange = FlowExchange(request)
    with exchange.errors(), pool.stream(**exchange.stream_args()) as response:
        for chunk in response.iter_stream():
            if not exchange.keep(chunk):
                break
        return exchange.response(response)
