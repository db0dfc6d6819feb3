"""``BrowserOAuth`` for the Trio shell (issue 21, §E5): the user's browser and a
loopback listener for the redirect, on the event loop. The checks of the response are
the core's (``OAuthProvider.complete_authorization_flow``); the arguments and errors are
``mcp_io_common.oauth_callback.BrowserOAuthBase``'s; this module only opens the browser
and carries the redirect's bytes back, awaiting."""

from __future__ import annotations

import time
from typing import Any

import trio

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
    """Authorize ``provider``'s server in the user's browser (the Trio twin of
    ``mcp_io_sync.BrowserOAuth``; same arguments).

    Installs its ``handle`` (a coroutine function, run on the event loop) as
    ``provider.handler`` unless one is set.
    """

    _LOGGER = "mcp_io_trio.oauth"

    async def handle(self, effect: Any) -> Any:
        """The provider's handler: ``OpenAuthorization`` only."""
        step = self._browser_step(effect)
        return await self.authorize(step.url, step.redirect_uri)

    async def authorize(self, url: str, redirect_uri: str) -> AuthorizationResponse:
        """Open ``url`` and wait for the redirect; returns what arrived."""
        listeners = await trio.open_tcp_listeners(self.port, host=self.host)
        try:
            if self.auto_open_browser:
                await trio.to_thread.run_sync(self._open, url)
            else:
                self._show_url(url)
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
        raise self._timed_out(redirect_uri)

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
