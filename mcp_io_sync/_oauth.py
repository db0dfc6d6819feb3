"""``BrowserOAuth`` for the blocking shell (issue 21, §E5): the user's browser and a
loopback listener for the redirect. The checks of the response are the core's
(``OAuthProvider.complete_authorization_flow``); this module only opens the browser and
carries the redirect's bytes back."""

from __future__ import annotations

import logging
import socket
import time
import webbrowser
from collections.abc import Callable
from typing import Any

from mcp_io_common.oauth_callback import (
    CALLBACK_TIMEOUT,
    MAX_REQUEST_HEAD,
    NOT_FOUND,
    RECEIVED,
    callback_query,
    listen_address,
)
from mcp_proto.oauth import (
    AuthorizationResponse,
    OAuthCallbackError,
    OAuthProvider,
    OpenAuthorization,
)

__all__ = ["BrowserOAuth"]


def _open_browser(url: str) -> bool:
    # Looked up at each call (not bound at import): a test or a host may replace it.
    return webbrowser.open(url)


class BrowserOAuth:
    """Authorize ``provider``'s server in the user's browser.

    Installs itself as ``provider.handler`` (unless one is set), so a connection that
    meets a 401 opens the browser and waits (at most ``timeout`` seconds) for the
    redirect on ``provider.redirect_uri``, which must be loopback HTTP with a port
    (``http://localhost:8080/callback`` by default; the listener binds the loopback
    interface only). ``callback_port``/``callback_path``, when given, must agree with
    it. ``auto_open_browser=False`` logs the URL for the user to open instead.
    """

    def __init__(
        self,
        provider: OAuthProvider,
        *,
        callback_port: int | None = None,
        callback_path: str | None = None,
        logger: logging.Logger | None = None,
        timeout: float = CALLBACK_TIMEOUT,
        auto_open_browser: bool = True,
        opener: Callable[[str], Any] | None = None,
    ) -> None:
        host, port, path = listen_address(provider.redirect_uri)
        if callback_port is not None and callback_port != port:
            raise ValueError(f"callback_port {callback_port} is not the redirect URI's {port}")
        if callback_path is not None and callback_path != path:
            raise ValueError(f"callback_path {callback_path!r} is not the redirect URI's")
        self.provider = provider
        self.address = (host, port)
        self.path = path
        self.timeout = timeout
        self.auto_open_browser = auto_open_browser
        self._open = opener or _open_browser
        self._logger = logger or logging.getLogger("mcp_io_sync.oauth")
        if provider.handler is None:
            provider.handler = self.handle

    def handle(self, effect: Any) -> Any:
        """The provider's handler: ``OpenAuthorization`` only."""
        if not isinstance(effect, OpenAuthorization):
            raise OAuthCallbackError(
                "BrowserOAuth answers only the browser step (no assertion source)",
                reason="no_handler",
            )
        return self.authorize(effect.url, effect.redirect_uri)

    def authorize(self, url: str, redirect_uri: str) -> AuthorizationResponse:
        """Open ``url`` and wait for the redirect; returns what arrived."""
        deadline = time.monotonic() + self.timeout
        with socket.create_server(self.address) as server:
            if self.auto_open_browser:
                self._open(url)
            else:
                self._logger.warning("open this URL to authorize: %s", url)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise OAuthCallbackError(
                        f"no authorization response reached {redirect_uri} within "
                        f"{self.timeout:g} s",
                        reason="timeout",
                    )
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
