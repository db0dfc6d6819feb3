"""``BrowserOAuth`` for the Trio shell (issue 21, §E5, AUTH-2): the user's browser and a
loopback listener for the redirect, on the event loop. The checks of the response are
the core's (``OAuthProvider.complete_authorization_flow``); the arguments, the redirect
URI's alignment and the errors are ``mcp_io_common.oauth_callback``'s; this module only
listens, opens the browser, runs the flow's exchanges and carries the redirect's bytes
back, awaiting."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpcore
import trio

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

_Listener = trio.SocketListener


class BrowserOAuth(BrowserOAuthBase):
    """Authorize ``provider``'s server in the user's browser (the Trio twin of
    ``mcp_io_sync.BrowserOAuth``; same arguments, ``authenticate`` awaited).

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
        async with self._listen() as listener:
            await self._present(url, self.auto_open_browser)
            query = await self._wait(listener, self.timeout)
        if query is None:
            raise self._timed_out(redirect_uri)
        return AuthorizationResponse(f"{redirect_uri}?{query}", time.time())

    async def authenticate(
        self, *, timeout: float | None = None, auto_open_browser: bool | None = None
    ) -> Token:
        """Authorize now (AUTH-2); see ``mcp_io_sync.BrowserOAuth.authenticate``."""
        self._check_grant()
        wait = self.timeout if timeout is None else timeout
        show = self.auto_open_browser if auto_open_browser is None else auto_open_browser
        provider = self.provider
        async with self._listen() as listener, httpcore.AsyncConnectionPool() as pool:
            start = provider.start_authorization_flow(None, time.time())
            url, state = await drive(FlowRun(start, self._logger), pool)
            assert isinstance(url, str) and isinstance(state, str)
            await self._present(url, show)
            query = await self._wait(listener, wait)
            if query is None:
                raise self._timed_out(provider.redirect_uri, wait)
            finish = provider.complete_authorization_flow(
                f"{provider.redirect_uri}?{query}", expected_state=state, now=time.time()
            )
            token = await drive(FlowRun(finish, self._logger), pool)
        assert isinstance(token, Token)
        return token

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

    async def _present(self, url: str, auto_open_browser: bool) -> None:
        if auto_open_browser:
            await trio.to_thread.run_sync(self._open, url)
        else:
            self._show_url(url)

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
