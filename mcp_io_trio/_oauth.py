"""``BrowserOAuth`` for the Trio shell (issue 21, §E5): the user's browser and a
loopback listener for the redirect, on the event loop. The checks of the response are
the core's (``OAuthProvider.complete_authorization_flow``); this module only opens the
browser and carries the redirect's bytes back."""

from __future__ import annotations

import logging
import time
import webbrowser
from collections.abc import Callable
from typing import Any

import trio

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
    """Authorize ``provider``'s server in the user's browser (the Trio twin of
    ``mcp_io_sync.BrowserOAuth``; same arguments).

    Installs its ``handle`` (a coroutine function, run on the event loop) as
    ``provider.handler`` unless one is set.
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
        self.host, self.port, self.path = host, port, path
        self.timeout = timeout
        self.auto_open_browser = auto_open_browser
        self._open = opener or _open_browser
        self._logger = logger or logging.getLogger("mcp_io_trio.oauth")
        if provider.handler is None:
            provider.handler = self.handle

    async def handle(self, effect: Any) -> Any:
        """The provider's handler: ``OpenAuthorization`` only."""
        if not isinstance(effect, OpenAuthorization):
            raise OAuthCallbackError(
                "BrowserOAuth answers only the browser step (no assertion source)",
                reason="no_handler",
            )
        return await self.authorize(effect.url, effect.redirect_uri)

    async def authorize(self, url: str, redirect_uri: str) -> AuthorizationResponse:
        """Open ``url`` and wait for the redirect; returns what arrived."""
        listeners = await trio.open_tcp_listeners(self.port, host=self.host)
        try:
            if self.auto_open_browser:
                await trio.to_thread.run_sync(self._open, url)
            else:
                self._logger.warning("open this URL to authorize: %s", url)
            with trio.move_on_after(self.timeout):
                while True:
                    stream = await listeners[0].accept()
                    async with stream:
                        query = await self._serve(stream)
                    if query is not None:
                        return AuthorizationResponse(f"{redirect_uri}?{query}", time.time())
        finally:
            for listener in listeners:
                await listener.aclose()
        raise OAuthCallbackError(
            f"no authorization response reached {redirect_uri} within {self.timeout:g} s",
            reason="timeout",
        )

    async def _serve(self, stream: trio.SocketStream) -> str | None:
        head = b""
        try:
            with trio.move_on_after(10.0):
                while b"\r\n\r\n" not in head and len(head) <= MAX_REQUEST_HEAD:
                    chunk = await stream.receive_some(4096)
                    if not chunk:
                        break
                    head += chunk
            query = callback_query(head, self.path) if len(head) <= MAX_REQUEST_HEAD else None
            await stream.send_all(RECEIVED if query is not None else NOT_FOUND)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            return None
        return query
