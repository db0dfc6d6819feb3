"""``BrowserOAuth`` for the blocking shell (issue 21, §E5, AUTH-2): the user's browser
and a loopback listener for the redirect. The checks of the response are the core's
(``OAuthProvider.complete_authorization_flow``); the arguments, the redirect URI's
alignment and the errors are ``mcp_io_common.oauth_callback``'s; this module only
listens, opens the browser, runs the flow's exchanges and carries the redirect's bytes
back, blocking."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpcore

from mcp_io_common.oauth_callback import (
    MAX_REQUEST_HEAD,
    NOT_FOUND,
    RECEIVED,
    BrowserOAuthBase,
    FlowRun,
    callback_query,
    listen_error,
)
from mcp_proto.oauth import AuthorizationResponse, Token

from . import _oauth_client as oauth_client
from ._oauth_client import drive

__all__ = ["BrowserOAuth", "oauth_client"]


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
        step = self._browser_step(effect)
        return self.authorize(step.url, step.redirect_uri)

    def authorize(self, url: str, redirect_uri: str) -> AuthorizationResponse:
        """Open ``url`` and wait for the redirect; returns what arrived."""
        with self._listen() as server:
            self._present(url, self.auto_open_browser)
            query = self._wait(server, time.monotonic() + self.timeout)
        if query is None:
            raise self._timed_out(redirect_uri)
        return AuthorizationResponse(f"{redirect_uri}?{query}", time.time())

    def authenticate(
        self, *, timeout: float | None = None, auto_open_browser: bool | None = None
    ) -> Token:
        """Authorize now (AUTH-2): listen on the callback port (a port in use raises
        ``OAuthCallbackPortInUseError`` before anything is sent), discover and register
        (``provider.start_authorization_flow``), open the browser (or log the URL), wait
        at most ``timeout`` seconds (default: the constructor's, 300) for the redirect
        (``OAuthCallbackTimeoutError``), exchange the code
        (``complete_authorization_flow``) and return the stored token."""
        self._check_grant()
        wait = self.timeout if timeout is None else timeout
        show = self.auto_open_browser if auto_open_browser is None else auto_open_browser
        provider = self.provider
        with self._listen() as server, httpcore.ConnectionPool() as pool:
            start = provider.start_authorization_flow(None, time.time())
            url, state = drive(FlowRun(start, self._logger), pool)
            assert isinstance(url, str) and isinstance(state, str)
            self._present(url, show)
            query = self._wait(server, time.monotonic() + wait)
            if query is None:
                raise self._timed_out(provider.redirect_uri, wait)
            finish = provider.complete_authorization_flow(
                f"{provider.redirect_uri}?{query}", expected_state=state, now=time.time()
            )
            token = drive(FlowRun(finish, self._logger), pool)
        assert isinstance(token, Token)
        return token

    # ------------------------------------------------------------ the listener

    @contextmanager
    def _listen(self) -> Iterator[socket.socket]:
        try:
            server = socket.create_server((self.host, self.port))
        except OSError as exc:
            raise listen_error(self.host, self.port, exc) from None
        with server:
            yield server

    def _present(self, url: str, auto_open_browser: bool) -> None:
        if auto_open_browser:
            self._open(url)
        else:
            self._show_url(url)

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
        head = b""
        try:
            while b"\r\n\r\n" not in head and len(head) <= MAX_REQUEST_HEAD:
                conn.settimeout(max(0.001, min(10.0, deadline - time.monotonic())))
                chunk = conn.recv(4096)
                if not chunk:
                    break
                head += chunk
        except OSError:
            return None
        query = callback_query(head, self.path) if len(head) <= MAX_REQUEST_HEAD else None
        try:
            conn.sendall(RECEIVED if query is not None else NOT_FOUND)
        except OSError:
            pass
        return query
