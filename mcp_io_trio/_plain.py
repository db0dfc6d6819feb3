"""A plain-HTTP (``http://``) keep-alive connection of the Trio pool, driven with
:class:`mcp_io_common.http11.Http11` over the pool's network stream, in place of
httpcore's ``AsyncHTTPConnection`` (see ``mcp_io_common.http11`` for why; ``https``
keeps httpcore's connection and its TLS). The twin of ``mcp_io_sync._plain``: the same
steps, blocking there; the protocol is in the shared ``Http11``.

Its interface is the part of httpcore's that the pool uses: ``can_handle_request``,
``is_available``, ``has_expired``, ``aclose``; a request returns a response with
``status``, ``headers``, ``aiter_stream()``, ``aread()`` and ``aclose()``.
"""

from __future__ import annotations

import enum
from typing import Any

import httpcore
import trio

from mcp_io_common.http11 import END, READ_SIZE, Http11

__all__ = ["PlainConnection", "PlainResponse"]


class _State(enum.Enum):
    NEW = 0
    ACTIVE = 1
    IDLE = 2
    CLOSED = 3


class PlainConnection:
    """One TCP connection to ``origin``, opened on its first request (as httpcore's
    connections are), one request at a time."""

    __slots__ = ("_backend", "_http", "_origin", "_state", "stream")

    def __init__(self, origin: httpcore.Origin, backend: httpcore.AsyncNetworkBackend) -> None:
        self._origin = origin
        self._backend = backend
        self._http = Http11()
        self._state = _State.NEW
        self.stream: httpcore.AsyncNetworkStream | None = None

    def can_handle_request(self, origin: httpcore.Origin) -> bool:
        return origin == self._origin

    def is_available(self) -> bool:
        return self._state is _State.IDLE

    def has_expired(self) -> bool:
        # An idle keep-alive socket that is readable was closed by the server.
        stream = self.stream
        return self._state is _State.IDLE and (
            stream is None or bool(stream.get_extra_info("is_readable"))
        )

    async def aclose(self) -> None:
        self._state = _State.CLOSED
        stream, self.stream = self.stream, None
        if stream is not None:
            await stream.aclose()

    async def send(
        self,
        method: bytes,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes | None,
        timeouts: dict[str, Any],
    ) -> PlainResponse:
        """Send a request and read its response's head."""
        if self._state not in (_State.NEW, _State.IDLE):
            raise httpcore.ConnectionNotAvailable()
        self._state = _State.ACTIVE
        http = self._http
        try:
            stream = self.stream
            if stream is None:
                origin = self._origin
                stream = self.stream = await self._backend.connect_tcp(
                    origin.host.decode("ascii"), origin.port, timeout=timeouts.get("connect")
                )
            data = http.request(method, target, headers, body)
            try:
                await stream.write(data, timeout=timeouts.get("write"))
            except httpcore.WriteError:
                # httpcore's rule: a server may close the request early and still have
                # sent a well-formed error response; read it.
                pass
            read_timeout = timeouts.get("read")
            while (head := http.head()) is None:
                http.receive(await stream.read(READ_SIZE, timeout=read_timeout))
        except BaseException:
            with trio.CancelScope(shield=True):
                await self.aclose()
            raise
        return PlainResponse(self, head[0], head[1], read_timeout)

    def _finished(self, whole: bool) -> bool:
        """The response was closed (``whole``: read to its end): whether the connection
        stays open for the next request."""
        if whole and self._state is _State.ACTIVE and self._http.reuse():
            self._state = _State.IDLE
            return True
        return False


class PlainResponse:
    """The response of a :class:`PlainConnection`: its body is read on demand, by
    whichever task iterates it (an object, not an async generator: trio tracks those,
    and one left suspended across tasks is reported when collected)."""

    __slots__ = ("_closed", "_conn", "_content", "_done", "_timeout", "headers", "status")

    def __init__(
        self,
        conn: PlainConnection,
        status: int,
        headers: list[tuple[bytes, bytes]],
        timeout: float | None,
    ) -> None:
        self._conn = conn
        self.status = status
        self.headers = headers
        self._timeout = timeout
        self._done = False
        self._closed = False
        self._content: bytes | None = None

    @property
    def content(self) -> bytes:
        """The whole body, once :meth:`aread` read it (as httpcore's ``Response``)."""
        if self._content is None:
            raise RuntimeError("the response body was not read: call aread() first")
        return self._content

    @property
    def extensions(self) -> dict[str, Any]:
        """httpcore's ``Response.extensions`` keys that apply."""
        return {"http_version": b"HTTP/1.1", "network_stream": self._conn.stream}

    def aiter_stream(self) -> PlainResponse:
        return self

    def __aiter__(self) -> PlainResponse:
        return self

    async def __anext__(self) -> bytes:
        conn = self._conn
        http = conn._http
        while True:
            chunk = http.chunk()
            if chunk is None:
                stream = conn.stream
                if stream is None or self._closed:
                    raise httpcore.ReadError("the response was closed")
                http.receive(await stream.read(READ_SIZE, timeout=self._timeout))
                continue
            if chunk is END:
                self._done = True
                raise StopAsyncIteration
            assert isinstance(chunk, bytes)
            return chunk

    async def aread(self) -> bytes:
        if self._content is None:
            self._content = b"".join([chunk async for chunk in self])
        return self._content

    async def aclose(self) -> None:
        """Keep the connection if the body was read to its end, else close it (no
        checkpoint of its own: ``_FastStream.aclose`` has none)."""
        if self._closed:
            return
        self._closed = True
        conn = self._conn
        if not conn._finished(self._done):
            await conn.aclose()
