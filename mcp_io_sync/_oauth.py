"""``BrowserOAuth`` for the blocking shell (issue 21, §E5): the user's browser and a
loopback listener for the redirect. The checks of the response are the core's
(``OAuthProvider.complete_authorization_flow``); the arguments and errors are
``mcp_io_common.oauth_callback.BrowserOAuthBase``'s; this module only opens the browser
and carries the redirect's bytes back, blocking."""

from __future__ import annotations

import socket
import time
from typing import Any

from mcp_io_common.oauth_callback import (
    MAX_REQUEST_HEAD,
    NOT_FOUND,
    RECEIVED,
    BrowserOAuthBase,
    callback_query,
)
from mcp_proto.oauth import AuthorizationResponse

__all__ = ["BrowserOAuth"]


class BrowserOAuth(BrowserOAuthBase):
    """Authorize ``provider``'s server in the user's browser.

    Installs itself as ``provider.handler`` (unless one is set), so a connection that
    meets a 401 opens the browser and waits (at most ``timeout`` seconds) for the
    redirect on ``provider.redirect_uri``, which must be loopback HTTP with a port
    (``http://localhost:8080/callback`` by default; the listener binds the loopback
    interface only). ``callback_port``/``callback_path``, when given, must agree with
    it. ``auto_open_browser=False`` logs the URL for the user to open instead.
    """

    _LOGGER = "mcp_io_sync.oauth"

    def handle(self, effect: Any) -> Any:
        """The provider's handler: ``OpenAuthorization`` only."""
        step = self._browser_step(effect)
        return self.authorize(step.url, step.redirect_uri)

    def authorize(self, url: str, redirect_uri: str) -> AuthorizationResponse:
        """Open ``url`` and wait for the redirect; returns what arrived."""
        deadline = time.monotonic() + self.timeout
        with socket.create_server((self.host, self.port)) as server:
            if self.auto_open_browser:
                self._open(url)
            else:
                self._show_url(url)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise self._timed_out(redirect_uri)
                server.settimeout(left)
                try:
                    conn, _peer = server.accept()
                except TimeoutError:
                    continue
                with conn:
                    query = self._serve(conn, deadline)
                if query is not None:
                    return AuthorizationResponse(f"{redirect_uri}?{query}", time.time())

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
