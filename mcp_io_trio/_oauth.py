"""``BrowserOAuth`` for the Trio shell (issue 21, §E5, AUTH-2): the user's browser and a
loopback listener for the redirect, on the event loop. The checks of the response are
the core's (``OAuthProvider.complete_authorization_flow``); the arguments, the redirect
URI's alignment, the errors and the steps of ``handle``/``authorize``/``authenticate``
(as flows) are ``mcp_io_common.oauth_callback``'s; this module only listens, performs
the flows' effects and carries the redirect's bytes back, awaiting."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, TypeVar

import httpcore
import trio

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
_Listener = trio.SocketListener


class BrowserOAuth(BrowserOAuthBase):
    """Authorize ``provider``'s server in the user's browser (the Trio twin of
    ``mcp_io_sync.BrowserOAuth``; same arguments, ``authenticate`` awaited).

    Installs its ``handle`` (a coroutine function, run on the event loop) as
    ``provider.handler`` unless one is set.
    """

    _LOGGER = "mcp_io_trio.oauth"

    async def handle(self, effect: Any) -> Any:
        """The provider's handler, awaited on the event loop: ``OpenAuthorization``
        only."""
        return await self._run(self._handler_flow(effect))

    async def authorize(self, url: str, redirect_uri: str) -> AuthorizationResponse:
        """See ``mcp_io_sync.BrowserOAuth.authorize``; the wait awaited."""
        return await self._run(self._authorize_flow(url, redirect_uri))

    async def authenticate(
        self, *, timeout: float | None = None, auto_open_browser: bool | None = None
    ) -> Token:
        """Authorize now (AUTH-2); see ``mcp_io_sync.BrowserOAuth.authenticate``."""
        return await self._run(self._authenticate_flow(timeout, auto_open_browser))

    async def _run(self, flow: BrowserFlow[T]) -> T:
        """Run one of the flows with the listener open before it starts."""
        async with self._listen() as listener, httpcore.AsyncConnectionPool() as pool:
            return await drive(flow, partial(self._perform, listener, pool))

    async def _perform(
        self, listener: _Listener, pool: httpcore.AsyncConnectionPool, effect: BrowserEffect
    ) -> Any:
        if isinstance(effect, OpenBrowser):  # webbrowser.open may block: not on the loop
            return await trio.to_thread.run_sync(self._open, effect.url)
        if isinstance(effect, AwaitRedirect):
            return await self._wait(listener, effect.timeout)
        return await fetch(pool, effect)

    # ------------------------------------------------------------ the listener

    @asynccontextmanager
    async def _listen(self) -> AsyncIterator[_Listener]:
        try:
            listeners = await trio.open_tcp_listeners(self.port, host=self.host)
        except OSError as exc:
            raise listen_error(self.host, self.port, exc) from None
        try:
            yield listeners[0]
        finally:
            for listener in listeners:
                await listener.aclose()

    async def _wait(self, listener: _Listener, timeout: float) -> str | None:
        """The callback's query, or ``None`` after ``timeout`` seconds."""
        with trio.move_on_after(timeout):
            while True:
                stream = await listener.accept()
                async with stream:
                    query = await self._serve(stream)
                if query is not None:
                    return query
        return None

    async def _serve(self, stream: trio.SocketStream) -> str | None:
        head = RequestHead()
        try:
            with trio.move_on_after(10.0):
                while head.feed(await stream.receive_some(4096)):
                    pass
            query, answer = head.answer(self.path)
            await stream.send_all(answer)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            return None
        return query
