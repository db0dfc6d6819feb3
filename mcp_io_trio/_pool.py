"""A small pool of httpcore HTTP/1.1 connections for the Trio shell (no proxy).

The twin of ``mcp_io_sync._pool`` (see there for why and the rules), over
``httpcore.AsyncHTTPConnection`` on httpcore's Trio backend: a LIFO list of idle
keep-alive connections, at most ``max_connections`` open, an idle connection reused only
while available and not closed by the server, anything not read to its end closed.
Closing a connection is shielded from cancellation, as in httpcore's pool.
"""

from __future__ import annotations

import math
import ssl
import types
from typing import Any

import httpcore
import trio

from mcp_io_sync._pool import _Target

__all__ = ["AsyncConnectionPool"]


class AsyncConnectionPool:
    """Keep-alive HTTP/1.1 connections to one or a few origins, for one Trio run.

    ``stream()`` and ``request()`` take the same arguments as httpcore's pool
    (``headers`` as a list of byte pairs, without ``Host``/``Content-Length``: they are
    added here, as httpcore does)."""

    def __init__(
        self,
        *,
        ssl_context: ssl.SSLContext | None = None,
        max_connections: int = 32,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self._ssl_context = ssl_context
        self._backend = network_backend or httpcore.TrioBackend()
        self._slots = trio.Semaphore(max_connections)
        self._idle: list[httpcore.AsyncHTTPConnection] = []  # LIFO: the warmest last
        self._all: set[httpcore.AsyncHTTPConnection] = set()  # every open connection
        self._closed = False
        self._targets: dict[str, _Target] = {}

    # ------------------------------------------------------------ introspection

    @property
    def connections(self) -> int:
        """How many connections are open (idle or in use)."""
        return len(self._all)

    @property
    def idle(self) -> int:
        return len(self._idle)

    # ------------------------------------------------------------ requests

    def stream(
        self,
        method: bytes,
        url: str,
        *,
        headers: list[tuple[bytes, bytes]],
        content: bytes | None = None,
        extensions: dict[str, Any] | None = None,
    ) -> _Stream:
        """An async context manager yielding the response; leaving it closes the
        response and gives the connection back (kept only if the body was read to its
        end)."""
        return _Stream(self, method, url, headers, content, extensions or {})

    async def request(
        self,
        method: bytes,
        url: str,
        *,
        headers: list[tuple[bytes, bytes]],
        content: bytes | None = None,
        extensions: dict[str, Any] | None = None,
    ) -> httpcore.Response:
        """Send a request and read its whole body."""
        async with self.stream(
            method, url, headers=headers, content=content, extensions=extensions
        ) as response:
            await response.aread()
        return response

    def _target(self, url: str) -> _Target:
        target = self._targets.get(url)
        if target is None:
            target = _Target(url)
            if len(self._targets) < 16:  # a handful of URLs per server; never grows
                self._targets[url] = target
        return target

    async def _acquire(
        self, origin: httpcore.Origin, timeout: float | None
    ) -> httpcore.AsyncHTTPConnection:
        try:
            # No scheduler pass when a slot is free: the request's own I/O checkpoints.
            self._slots.acquire_nowait()
        except trio.WouldBlock:
            with trio.move_on_after(math.inf if timeout is None else timeout) as scope:
                await self._slots.acquire()
            if scope.cancelled_caught:
                raise httpcore.PoolTimeout(
                    "no connection became free within the pool timeout"
                ) from None
        return await self._connection(origin)

    async def _connection(self, origin: httpcore.Origin) -> httpcore.AsyncHTTPConnection:
        """An idle connection to ``origin`` or a new one (a slot is held)."""
        try:
            while self._idle:
                conn = self._idle.pop()
                # A server may close an idle keep-alive connection at any time: a
                # readable idle socket means it did (has_expired polls it).
                if (
                    conn.can_handle_request(origin)
                    and conn.is_available()
                    and not conn.has_expired()
                ):
                    return conn
                await self._discard(conn)
            conn = httpcore.AsyncHTTPConnection(
                origin=origin, ssl_context=self._ssl_context, network_backend=self._backend
            )
            self._all.add(conn)
            return conn
        except BaseException:
            self._slots.release()
            raise

    async def _release(self, conn: httpcore.AsyncHTTPConnection) -> None:
        """The response is closed: keep the connection if it is reusable."""
        self._slots.release()
        if conn.is_available() and not self._closed:
            self._idle.append(conn)
        else:
            await self._discard(conn)

    async def _discard(self, conn: httpcore.AsyncHTTPConnection) -> None:
        self._all.discard(conn)
        with trio.CancelScope(shield=True):
            try:
                await conn.aclose()
            except Exception:  # a socket already broken may fail to close
                pass

    # ------------------------------------------------------------ lifetime

    async def aclose(self) -> None:
        """Close every connection. Requests still running fail on their closed
        connection; their connections are closed when they end."""
        self._closed = True
        conns = list(self._all)
        self._all.clear()
        self._idle.clear()
        for conn in conns:
            await self._discard(conn)

    async def __aenter__(self) -> AsyncConnectionPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _Stream:
    """``async with pool.stream(...) as response``: a class, not a generator, since it
    runs once per request."""

    __slots__ = ("_conn", "_origin", "_pool", "_request", "_response")

    def __init__(
        self,
        pool: AsyncConnectionPool,
        method: bytes,
        url: str,
        headers: list[tuple[bytes, bytes]],
        content: bytes | None,
        extensions: dict[str, Any],
    ) -> None:
        target = pool._target(url)
        head = [(b"Host", target.host_header), *headers]
        if content is not None:
            head.append((b"Content-Length", b"%d" % len(content)))
        self._pool = pool
        self._origin = target.origin
        self._request = httpcore.Request(
            method, target.url, headers=head, content=content, extensions=extensions
        )
        self._conn: httpcore.AsyncHTTPConnection | None = None
        self._response: httpcore.Response | None = None

    async def __aenter__(self) -> httpcore.Response:
        pool, request = self._pool, self._request
        timeout = request.extensions.get("timeout", {}).get("pool")
        conn = await pool._acquire(self._origin, timeout)
        try:
            response = await conn.handle_async_request(request)
        except BaseException:
            await pool._release(conn)  # httpcore closed the connection already
            raise
        self._conn, self._response = conn, response
        return response

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        conn, response = self._conn, self._response
        self._conn = self._response = None
        if conn is None or response is None:
            return
        try:
            with trio.CancelScope(shield=True):
                await response.aclose()
        finally:
            await self._pool._release(conn)
