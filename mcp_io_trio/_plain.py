"""A plain-HTTP (``http://``) keep-alive connection of the Trio pool, in place of
httpcore's ``AsyncHTTPConnection`` (see ``mcp_io_common.http11`` for why; ``https``
keeps httpcore's connection and its TLS). Only its I/O is here, awaited: the state and
the HTTP/1.1 rules are ``mcp_io_common.http11``'s, shared with ``mcp_io_sync._plain``.
"""

from __future__ import annotations

import httpcore
import trio

from mcp_io_common.http11 import END, READ_SIZE, PlainConnectionBase, PlainResponseBase
from mcp_io_common.pool import PoolRequest

__all__ = ["PlainConnection", "PlainResponse"]


class PlainConnection(PlainConnectionBase):
    """A plain connection whose I/O is awaited (see the base class); closing it after a
    failure is shielded from cancellation, as in httpcore's connections."""

    __slots__ = ()

    async def aclose(self) -> None:
        stream = self._detach()
        if stream is not None:
            await stream.aclose()

    async def send(self, req: PoolRequest) -> PlainResponse:
        """Send ``req`` and read its response's head."""
        timeouts = req.timeouts
        address = self._begin()
        http = self.http
        try:
            if address is not None:
                self.stream = await self._backend.connect_tcp(
                    *address, timeout=timeouts.get("connect")
                )
            stream = self.stream
            data = http.request(req.method, req.target.url.target, req.head, req.content)
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
        return PlainResponse(self, head, read_timeout)


class PlainResponse(PlainResponseBase):
    """The response of a :class:`PlainConnection`, its body read by whichever task
    iterates it (an object, not an async generator: trio tracks those, and one left
    suspended across tasks is reported when collected)."""

    __slots__ = ()
    _conn: PlainConnection

    def aiter_stream(self) -> PlainResponse:
        return self

    def __aiter__(self) -> PlainResponse:
        return self

    async def __anext__(self) -> bytes:
        while (chunk := self._chunk()) is None:
            stream = self._conn.stream
            self._conn.http.receive(await stream.read(READ_SIZE, timeout=self._timeout))
        if chunk is END:
            raise StopAsyncIteration
        assert isinstance(chunk, bytes)
        return chunk

    async def aread(self) -> bytes:
        if self._content is None:
            self._content = b"".join([chunk async for chunk in self])
        return self._content

    async def aclose(self) -> None:
        """Keep the connection if the body was read to its end, else close it (no
        checkpoint of its own on ``_FastStream``, whose ``aclose`` has none)."""
        if self._close():
            await self._conn.aclose()
