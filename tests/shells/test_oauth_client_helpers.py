"""§E5's ``oauth_client`` helpers in both shells (AUTH-33; the Ruby client's
``OAuthClient``): a configuration with an ``OAuthProvider`` attached, the authorization
URL, the code exchanged, whether a usable token is stored. The flow runs against the
REAL authorization server of tests/shells/test_oauth_shells.py (oidc-provider), the
user's browser a test following its redirects; the host's callback is elsewhere (the
helpers take ``code`` and ``state``, as a web application receiving the redirect
would)."""

from __future__ import annotations

import inspect
import socket
from functools import partial
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import trio

from mcp_proto.config import ServerConfig
from mcp_proto.oauth import (
    ClientInfo,
    MemoryStorage,
    OAuthCallbackError,
    OAuthProvider,
    OpenAuthorization,
    Token,
    UnsafeURLError,
)

from .conftest import Shell
from .test_oauth_authenticate import facts_for
from .test_oauth_shells import Browser, free_port, peer, whoami

__all__ = ["peer"]  # the module-scoped oidc-provider fixture, shared


def call(shell: Shell, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """A helper that is blocking in one shell and awaited in the other."""
    if shell.is_trio:
        return trio.run(partial(fn, *args, **kwargs))
    return fn(*args, **kwargs)


def test_each_shell_offers_the_same_helpers(shell: Shell) -> None:
    from mcp_io_common import oauth_client as common

    helpers = shell.mod.oauth_client
    assert helpers.__all__ == sorted(common.SHELL_EXPORTS)
    # The configuration helpers are the shared ones; the flows run blocking or awaited.
    for name in ("create_http_server", "create_streamable_http_server", "has_valid_token"):
        assert getattr(helpers, name) is getattr(common, name)
    for name in ("complete_oauth_flow", "run_flow", "start_oauth_flow"):
        assert inspect.iscoroutinefunction(getattr(helpers, name)) is shell.is_trio


def test_create_servers_attach_a_provider(shell: Shell) -> None:
    helpers = shell.mod.oauth_client
    storage = MemoryStorage()
    creds = ClientInfo("app", "secret", issuer="https://auth.example.com")
    server = helpers.create_streamable_http_server(
        "https://mcp.example.com/mcp",
        scope="files:read",
        storage=storage,
        client_info=creds,
        read_timeout=12,
        name="files",
    )
    assert isinstance(server, ServerConfig)
    assert (server.type, server.endpoint_url, server.name) == (
        "streamable_http",
        "https://mcp.example.com/mcp",
        "files",
    )
    assert server.read_timeout == 12
    provider = server.oauth_provider
    assert isinstance(provider, OAuthProvider)
    assert provider.server_url == "https://mcp.example.com/mcp"
    assert provider.redirect_uri == "http://localhost:8080/callback"
    assert provider.scope == "files:read" and provider.storage is storage
    # Pre-registered credentials are seeded under their issuer (AUTH-17).
    key = provider.client_registration_key("https://auth.example.com")
    stored = storage.get_client_info(key)
    assert stored is not None and stored.client_id == "app"

    # A plain HTTP server: the provider is for the endpoint URL requests go to.
    plain = helpers.create_http_server(
        "https://api.example.com", endpoint="/rpc", redirect_uri="http://127.0.0.1:9000/cb"
    )
    assert plain.type == "http"
    assert plain.oauth_provider.server_url == "https://api.example.com/rpc"
    assert plain.oauth_provider.redirect_uri == "http://127.0.0.1:9000/cb"
    assert not helpers.has_valid_token(plain)

    with pytest.raises(ValueError, match="own oauth_provider"):
        helpers.create_http_server("https://api.example.com", oauth_provider=provider)
    with pytest.raises(UnsafeURLError):  # AUTH-28: the redirect URI rules hold here too
        helpers.create_http_server(
            "https://api.example.com", redirect_uri="http://app.example.com/cb"
        )


def test_a_server_without_a_provider(shell: Shell) -> None:
    from mcp_proto.config import streamable_http_config

    helpers = shell.mod.oauth_client
    bare = streamable_http_config("https://mcp.example.com/mcp")
    assert helpers.has_valid_token(bare) is False
    with pytest.raises(ValueError, match="no OAuth provider"):
        call(shell, helpers.start_oauth_flow, bare)
    with pytest.raises(ValueError, match="no OAuth provider"):
        call(shell, helpers.complete_oauth_flow, bare, "code", "state")


@pytest.mark.peer
def test_the_helpers_run_a_flow_against_a_real_authorization_server(
    shell: Shell, peer: dict[str, str]
) -> None:
    helpers = shell.mod.oauth_client
    resource, issuer = peer["resource"], peer["issuer"]
    redirect = f"http://127.0.0.1:{free_port()}/callback"
    server = helpers.create_streamable_http_server(
        resource, redirect_uri=redirect, protocol="legacy"
    )
    assert helpers.has_valid_token(server) is False

    url = call(shell, helpers.start_oauth_flow, server)
    assert isinstance(url, str) and url.startswith(issuer)
    query = parse_qs(urlsplit(url).query)
    assert query["redirect_uri"] == [redirect] and query["code_challenge_method"] == ["S256"]
    assert query["resource"] == [resource]  # RFC 8707
    assert helpers.has_valid_token(server) is False  # nothing until the code is exchanged

    # The user's browser; the redirect reaches the host's own route, not a listener.
    landing = Browser().handle(OpenAuthorization(url, redirect))
    params = {k: v[0] for k, v in parse_qs(urlsplit(landing).query).items()}
    assert params["iss"] == issuer  # RFC 9207: oidc-provider sends it

    # A state that names no pending request is refused before the code leaves.
    with pytest.raises(OAuthCallbackError) as info:
        call(shell, helpers.complete_oauth_flow, server, params["code"], "forged")
    assert info.value.reason == "state"
    # So is an iss that is not the recorded issuer.
    with pytest.raises(OAuthCallbackError) as info:
        call(
            shell,
            helpers.complete_oauth_flow,
            server,
            params["code"],
            params["state"],
            iss="https://evil.example",
        )
    assert info.value.reason == "iss_mismatch"

    # That refusal spent the record (one use per authorization request): start again.
    url = call(shell, helpers.start_oauth_flow, server)
    landing = Browser().handle(OpenAuthorization(url, redirect))
    params = {k: v[0] for k, v in parse_qs(urlsplit(landing).query).items()}
    token = call(
        shell,
        helpers.complete_oauth_flow,
        server,
        params["code"],
        params["state"],
        iss=params["iss"],
    )
    assert isinstance(token, Token) and token.issuer == issuer
    assert helpers.has_valid_token(server) is True
    assert token.expires_at is not None
    assert helpers.has_valid_token(server, now=token.expires_at + 1) is False
    assert facts_for(resource, token)["aud"] == [resource]

    # The configuration connects on the stored token: no 401 needs a handler.
    assert shell.run_client(whoami, [server])["aud"] == [resource]
    # Nothing listens on the redirect URI: these helpers never open a listener.
    port = int(redirect.rsplit(":", 1)[1].split("/")[0])
    with socket.create_server(("127.0.0.1", port)):
        pass
