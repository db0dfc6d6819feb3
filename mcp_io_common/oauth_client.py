"""§E5's ``oauth_client`` helpers (AUTH-33; the Ruby client's ``OAuthClient``), the
parts both shells share: a server configuration with an ``OAuthProvider`` attached, the
provider found again from it, and whether a usable token is stored. Each shell's
``oauth_client`` adds ``start_oauth_flow``/``complete_oauth_flow``, which run the
flows built here (:func:`start_flow`, :func:`completion_flow`; blocking, or awaited)
with ``run_flow``, and exports :data:`SHELL_EXPORTS`.

Every rule is the core's (``mcp_proto.oauth.OAuthProvider``): discovery, registration,
PKCE, the callback checks. Here the host's randomness (``os.urandom``) and clock
(``time.time``) meet it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlencode

import attrs

from mcp_proto.config import ServerConfig, http_config, streamable_http_config
from mcp_proto.oauth import (
    DEFAULT_REDIRECT_URI,
    ClientInfo,
    Flow,
    OAuthProvider,
    OAuthStorage,
    Token,
)

__all__ = [
    "SHELL_EXPORTS",
    "callback_query_of",
    "completion_flow",
    "create_http_server",
    "create_streamable_http_server",
    "has_valid_token",
    "provider_of",
    "start_flow",
]

#: What each shell's ``oauth_client`` offers (§E5, AUTH-33), the same names in both:
#: the helpers of this module it re-exports, and the three it defines, blocking or
#: awaited (``start_oauth_flow``, ``complete_oauth_flow``, ``run_flow``).
SHELL_EXPORTS: Final = (
    "complete_oauth_flow",
    "create_http_server",
    "create_streamable_http_server",
    "has_valid_token",
    "run_flow",
    "start_oauth_flow",
)


def _provider(
    config: ServerConfig,
    *,
    redirect_uri: str,
    scope: str | None,
    storage: OAuthStorage | None,
    client_metadata: Mapping[str, Any] | None,
    client_id_metadata_url: str | None,
    client_info: ClientInfo | None,
) -> ServerConfig:
    url = config.endpoint_url
    assert url is not None  # an http/streamable_http configuration has one
    provider = OAuthProvider(
        url,
        random_bytes=os.urandom,
        redirect_uri=redirect_uri,
        scope=scope,
        storage=storage,
        client_metadata=dict(client_metadata) if client_metadata is not None else None,
        client_id_metadata_url=client_id_metadata_url,
        client_info=client_info,
        clock=time.time,
    )
    return attrs.evolve(config, oauth_provider=provider)


def create_http_server(
    server_url: str,
    *,
    redirect_uri: str = DEFAULT_REDIRECT_URI,
    scope: str | None = None,
    storage: OAuthStorage | None = None,
    client_metadata: Mapping[str, Any] | None = None,
    client_id_metadata_url: str | None = None,
    client_info: ClientInfo | None = None,
    **options: Any,
) -> ServerConfig:
    """A plain HTTP server's configuration (``http_config(server_url, **options)``)
    with an ``OAuthProvider`` for its endpoint URL attached (AUTH-33). The provider's
    arguments are ``OAuthProvider``'s; tokens stay in ``storage`` (default: memory).

    Raises:
        ValueError: what ``http_config`` or ``OAuthProvider`` refuse (a bad URL or
            option, an ``oauth_provider`` given as well).
        UnsafeURLError: a redirect URI that is not loopback HTTP, HTTPS or a
            private-use scheme (AUTH-28), or a bad Client ID Metadata Document URL.
    """
    if "oauth_provider" in options:
        raise ValueError("create_http_server attaches its own oauth_provider")
    return _provider(
        http_config(server_url, **options),
        redirect_uri=redirect_uri,
        scope=scope,
        storage=storage,
        client_metadata=client_metadata,
        client_id_metadata_url=client_id_metadata_url,
        client_info=client_info,
    )


def create_streamable_http_server(
    server_url: str,
    *,
    redirect_uri: str = DEFAULT_REDIRECT_URI,
    scope: str | None = None,
    storage: OAuthStorage | None = None,
    client_metadata: Mapping[str, Any] | None = None,
    client_id_metadata_url: str | None = None,
    client_info: ClientInfo | None = None,
    **options: Any,
) -> ServerConfig:
    """:func:`create_http_server` for a Streamable HTTP server
    (``streamable_http_config``)."""
    if "oauth_provider" in options:
        raise ValueError("create_streamable_http_server attaches its own oauth_provider")
    return _provider(
        streamable_http_config(server_url, **options),
        redirect_uri=redirect_uri,
        scope=scope,
        storage=storage,
        client_metadata=client_metadata,
        client_id_metadata_url=client_id_metadata_url,
        client_info=client_info,
    )


def provider_of(server: Any) -> OAuthProvider:
    """The ``OAuthProvider`` of a server configuration (or of anything with a
    ``config`` holding one: a connected server object).

    Raises:
        ValueError: the server has no OAuth provider (Ruby: ``ArgumentError``).
    """
    config = server if isinstance(server, ServerConfig) else getattr(server, "config", None)
    provider = getattr(config, "oauth_provider", None)
    if not isinstance(provider, OAuthProvider):
        raise ValueError("the server has no OAuth provider configured")
    return provider


def has_valid_token(server: Any, *, now: float | None = None) -> bool:
    """Whether the server's provider holds a token it would present now: issued by
    the current authorization server, of a type the client understands, not expired
    (at ``now``, default ``time.time()``). No request is made; a server without an
    OAuth provider has none (Ruby's ``valid_token?``)."""
    try:
        provider = provider_of(server)
    except ValueError:
        return False
    token: Token | None = provider.current_token()
    return token is not None and not token.is_expired(time.time() if now is None else now)


def start_flow(server: Any) -> Flow[str]:
    """``start_oauth_flow``'s flow for ``server`` (discovery from the well-known URIs:
    no 401 is in hand); it returns the authorization URL (the pending request is
    stored under its ``state``).

    Raises:
        ValueError: the server has no OAuth provider.
    """
    return _url_of(provider_of(server).start_authorization_flow(None, time.time()))


def _url_of(flow: Flow[tuple[str | None, str | Token]]) -> Flow[str]:
    url, _state = yield from flow
    assert isinstance(url, str)  # no token was presented: nothing to refresh
    return url


def completion_flow(server: Any, code: str, state: str, iss: str | None) -> Flow[Token]:
    """``complete_oauth_flow``'s flow for ``server``: the authorization response
    checked (``state``, RFC 9207 ``iss``), then the code exchanged; it returns the
    token.

    Raises:
        ValueError: the server has no OAuth provider.
    """
    provider = provider_of(server)
    return provider.complete_authorization_flow(
        callback_query_of(code, state, iss), now=time.time()
    )


def callback_query_of(code: str, state: str, iss: str | None) -> str:
    """The authorization response as the redirect's query, for
    ``complete_authorization_flow`` (which checks ``state`` and RFC 9207 ``iss``)."""
    params = [("code", code), ("state", state)]
    if iss is not None:
        params.append(("iss", iss))
    return urlencode(params)
