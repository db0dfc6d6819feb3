"""``BrowserOAuth(...).authenticate()`` in both shells (AUTH-2, §E5), against the REAL
authorization server of tests/test_oauth_shells.py (oidc-provider in front of a small
protected MCP resource): the callback listener opens first, the flow discovers and
registers, the browser (a test following the redirects, as a user's would) lands on the
listener, the code is exchanged and the token returned; the resource accepts it.

Also the failures a user meets: the callback port held by another process (its own
type, before anything is sent), no redirect within ``timeout`` (typed, the listener
closed), and the redirect URI aligned to the callback server's port and path.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
from functools import partial
from typing import Any

import httpcore
import pytest
import trio

from mcp_io_common.oauth_callback import aligned_redirect_uri
from mcp_proto.oauth import (
    OAuthCallbackError,
    OAuthCallbackPortInUseError,
    OAuthCallbackTimeoutError,
    OAuthProvider,
    OpenAuthorization,
    Token,
)

from .conftest import Shell
from .test_oauth_shells import Browser, free_port, peer, whoami

__all__ = ["peer"]  # the module-scoped oidc-provider fixture, shared


def authenticate(shell: Shell, browser_oauth: Any, **kwargs: Any) -> Any:
    if shell.is_trio:
        return trio.run(partial(browser_oauth.authenticate, **kwargs))
    return browser_oauth.authenticate(**kwargs)


def facts_for(resource: str, token: Token) -> dict[str, Any]:
    """What the protected resource says about a request carrying ``token``."""
    response = httpcore.request(
        "POST",
        resource,
        headers=[("Authorization", token.authorization_header()), ("Content-Type", "text/plain")],
        content=b"{}",
    )
    assert response.status == 200, response.status
    facts: dict[str, Any] = json.loads(response.content)
    return facts


@pytest.mark.peer
def test_authenticate_returns_a_token_the_resource_accepts(
    shell: Shell, peer: dict[str, str]
) -> None:
    resource, issuer = peer["resource"], peer["issuer"]
    port = free_port()
    # The provider keeps the default redirect URI; the callback server's port and path
    # win (the rule of aligned_redirect_uri), and the authorization server sees them.
    provider = OAuthProvider(resource, random_bytes=os.urandom)
    browser = Browser()
    landed: list[int] = []

    def user(url: str) -> None:
        landing = browser.handle(OpenAuthorization(url, f"http://localhost:{port}/oauth/cb"))
        landed.append(httpcore.request("GET", landing.replace("localhost", "127.0.0.1")).status)

    threads: list[threading.Thread] = []

    def opener(url: str) -> bool:  # returns at once, as webbrowser.open does
        threads.append(threading.Thread(target=user, args=(url,), daemon=True))
        threads[-1].start()
        return True

    auth = shell.mod.BrowserOAuth(
        provider, callback_port=port, callback_path="/oauth/cb", opener=opener
    )
    assert provider.redirect_uri == f"http://localhost:{port}/oauth/cb"
    token = authenticate(shell, auth, timeout=60)
    threads[0].join(30)  # (the browser reads the listener's page after the flow took it)
    assert isinstance(token, Token)
    assert token.issuer == issuer and token.refresh_token
    assert landed == [200] and len(browser.opened) == 1
    assert f"redirect_uri=http%3A%2F%2Flocalhost%3A{port}%2Foauth%2Fcb" in browser.opened[0]
    # RFC 8707: the token was issued for this resource, and it accepts it.
    assert facts_for(resource, token)["aud"] == [resource]
    assert provider.current_token() == token
    # A connection over the same provider presents it: no second browser trip.
    assert shell.run(whoami, resource, oauth_provider=provider, protocol="legacy")["aud"] == [
        resource
    ]
    assert len(browser.opened) == 1
    # The listener is closed: the port is free again.
    with socket.create_server(("127.0.0.1", port)):
        pass


@pytest.mark.peer
def test_authenticate_times_out_cleanly(shell: Shell, peer: dict[str, str]) -> None:
    port = free_port()
    provider = OAuthProvider(
        peer["resource"],
        random_bytes=os.urandom,
        redirect_uri=f"http://127.0.0.1:{port}/callback",
    )
    opened: list[str] = []
    records: list[logging.LogRecord] = []
    logger = logging.getLogger(f"test.oauth.authenticate.{shell.kind}")
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger.addHandler(handler)
    try:
        auth = shell.mod.BrowserOAuth(provider, opener=opened.append, logger=logger)
        with pytest.raises(OAuthCallbackTimeoutError) as info:
            authenticate(shell, auth, timeout=0.5, auto_open_browser=False)
    finally:
        logger.removeHandler(handler)
    error = info.value
    assert isinstance(error, OAuthCallbackError) and isinstance(error, TimeoutError)
    assert error.reason == "timeout" and "\n" not in str(error)
    # auto_open_browser=False: no browser; the URL is for the user to open.
    assert opened == []
    shown = [r.getMessage() for r in records if r.levelno == logging.WARNING]
    assert any("open this URL" in m and "code_challenge=" in m for m in shown), shown
    with socket.create_server(("127.0.0.1", port)):
        pass


@pytest.mark.parametrize("via", ["authenticate", "handler"])
def test_a_callback_port_in_use_is_its_own_error(shell: Shell, via: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as holder:
        port = holder.getsockname()[1]
        # Nothing listens at the server: had anything been sent before the listener
        # opened, the error would be a transport error, not this one.
        provider = OAuthProvider(
            "http://127.0.0.1:9/mcp",
            random_bytes=os.urandom,
            redirect_uri=f"http://127.0.0.1:{port}/callback",
        )
        auth = shell.mod.BrowserOAuth(provider, opener=lambda url: True)
        with pytest.raises(OAuthCallbackPortInUseError) as info:
            if via == "authenticate":
                authenticate(shell, auth, timeout=5)
            else:  # the handler a connection calls on its 401
                step = OpenAuthorization("https://as.example/authorize", provider.redirect_uri)
                if shell.is_trio:
                    trio.run(auth.handle, step)
                else:
                    auth.handle(step)
    message = str(info.value)
    assert info.value.reason == "port_in_use" and "\n" not in message
    assert f"port {port}" in message and "callback_port" in message


@pytest.mark.parametrize(
    ("redirect", "port", "path", "aligned"),
    [
        ("http://localhost:8080/callback", None, None, "http://localhost:8080/callback"),
        ("http://localhost:8080/callback", 9000, None, "http://localhost:9000/callback"),
        ("http://localhost:8080/callback", None, "/cb", "http://localhost:8080/cb"),
        ("http://127.0.0.1:8080/callback", 9001, "/x/y", "http://127.0.0.1:9001/x/y"),
        ("http://[::1]:8080/callback", 9002, None, "http://[::1]:9002/callback"),
        ("http://localhost/callback", 9003, None, "http://localhost:9003/callback"),
    ],
)
def test_the_redirect_uri_is_aligned_to_the_callback_server(
    redirect: str, port: int | None, path: str | None, aligned: str
) -> None:
    assert aligned_redirect_uri(redirect, port, path) == aligned


@pytest.mark.parametrize(
    ("redirect", "port", "path", "match"),
    [
        # What the callback server cannot receive at all is refused, never rewritten.
        ("https://app.example.com/cb", 8080, None, "loopback"),
        ("http://app.example.com:8080/cb", 8080, None, "loopback"),
        ("com.example.app:/cb", 8080, None, "loopback"),
        ("http://localhost/callback", None, None, "port"),
        ("http://localhost:8080/callback", 0, None, "TCP port"),
        ("http://localhost:8080/callback", 70000, None, "TCP port"),
        ("http://localhost:8080/callback", None, "cb", "start with"),
    ],
)
def test_what_the_callback_server_cannot_receive_is_refused(
    redirect: str, port: int | None, path: str | None, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        aligned_redirect_uri(redirect, port, path)


def test_browser_oauth_aligns_the_provider(shell: Shell) -> None:
    provider = OAuthProvider("https://mcp.example.com/mcp", random_bytes=os.urandom)
    auth = shell.mod.BrowserOAuth(provider, callback_port=9999, callback_path="/done")
    assert provider.redirect_uri == "http://localhost:9999/done"
    assert (auth.host, auth.port, auth.path) == ("127.0.0.1", 9999, "/done")
    assert provider.handler is not None


def test_authenticate_is_the_authorization_code_flow(shell: Shell) -> None:
    from mcp_proto.oauth import ClientInfo

    provider = OAuthProvider(
        "https://mcp.example.com/mcp",
        random_bytes=os.urandom,
        grant="client_credentials",
        client_info=ClientInfo("app", "secret", issuer="https://auth.example.com"),
    )
    auth = shell.mod.BrowserOAuth(provider, callback_port=free_port())
    with pytest.raises(ValueError, match="client_credentials"):
        authenticate(shell, auth, timeout=5)
