"""``BrowserOAuth`` for the blocking shell (issue 21, §E5, AUTH-2): the user's browser
and a loopback listener for the redirect. The checks of the response are the core's
(``OAuthProvider.complete_authorization_flow``); the arguments, the redirect URI's
alignment, the errors and the steps of ``handle``/``authorize``/``authenticate`` (as
flows) are ``mcp_io_common.oauth_callback``'s; this module only listens, performs
the flows' effects (the browser opened, the redirect awaited, an exchange) and carries
the redirect's bytes back, blocking."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any, TypeVar

import httpcore

from mcp_io_common.oauth_callback import (
    AwaitRedirect,
    BrowserEffect,
    BrowserFlow,
    BrowserOAuthBase,
    OpenBrowser,
    RequestHead,
    listen_error,
)
from mcp_proto.oauth import AuthorizationResponse, Token

from . import _oauth_client as oauth_client
from ._oauth_client import drive, fetch

__all__ = ["BrowserOAuth", "oauth_client"]

T = TypeVar("T")


class BrowserOAuth(BrowserOAuthBase):
    """Authorize ``provider``'s server in the user's browser.

    :meth:`authenticate` runs the whole flow now and returns the token. Used as
    ``provider.handler`` (installed unless one is set), a connection that meets a 401
    opens the browser and waits (at most ``timeout`` seconds) for the redirect.

    The listener is on ``provider.redirect_uri``, loopback HTTP with a port
    (``http://localhost:8080/callback`` by default; it binds the loopback interface
    only). ``callback_port``/``callback_path``, when given, are the callback server's:
    the provider's redirect URI is aligned to them. ``auto_open_browser=False`` logs
    the URL for the user to open instead.
    """

    _LOGGER = "mcp_io_sync.oauth"

    def handle(self, effect: Any) -> Any:
        """The provider's handler: ``OpenAuthorization`` only."""
        return self._run(self._handler_flow(effect))

    def authorize(self, url: str, redirect_uri: str) -> AuthorizationResponse:
        """Open ``url`` and wait for the redirect; returns what arrived."""
        return self._run(self._authorize_flow(url, redirect_uri))

    def authenticate(
        self, *, timeout: float | None = None, auto_open_browser: bool | None = None
    ) -> Token:
        """Authorize now (AUTH-2): listen on the callback port (a port in use raises
        ``OAuthCallbackPortInUseError`` before anything is sent), discover and register
        (``provider.start_authorization_flow``), open the browser (or log the URL), wait
        at most ``timeout`` seconds (default: the constructor's, 300) for the redirect
        (``OAuthCallbackTimeoutError``), exchange the code
        (``complete_authorization_flow``) and return the stored token."""
        return self._run(self._authenticate_flow(timeout, auto_open_browser))

    def _run(self, flow: BrowserFlow[T]) -> T:
        """Run one of the flows with the listener open before it starts."""
        with self._listen() as server, httpcore.ConnectionPool() as pool:
            return drive(flow, partial(self._perform, server, pool))

    def _perform(
        self, server: socket.socket, pool: httpcore.ConnectionPool, effect: BrowserEffect
    ) -> Any:
        if isinstance(effect, OpenBrowser):
            return self._open(effect.url)
        if isinstance(effect, AwaitRedirect):
            return self._wait(server, time.monotonic() + effect.timeout)
        return fetch(pool, effect)

    # ------------------------------------------------------------ the listener

    @contextmanager
    def _listen(self) -> Iterator[socket.socket]:
        try:
            server = socket.create_server((self.host, self.port))
        except OSError as exc:
            raise listen_error(self.host, self.port, exc) from None
        with server:
            yield server

    def _wait(self, server: socket.socket, deadline: float) -> str | None:
        """The callback's query, or ``None`` at ``deadline``."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            server.settimeout(left)
            try:
                conn, _peer = server.accept()
            except TimeoutError:
                continue
            with conn:
                query = self._serve(conn, deadline)
            if query is not None:
                return query

    def _serve(self, conn: socket.socket, deadline: float) -> str | None:
        head = RequestHead()
        try:
            while True:
                conn.settimeout(max(0.001, min(10.0, deadline - time.monotonic())))
                if not head.feed(conn.recv(4096)):
                    break
        except OSError:
            return None
        query, answer = head.answer(self.path)
        try:
            conn.sendall(answer)
        except OSError:
            pass
        return query
