"""A plain-HTTP (``http://``) keep-alive connection of the blocking pool, in place of
httpcore's ``HTTPConnection`` (see ``mcp_io_common.http11`` for why; ``https`` keeps
httpcore's connection and its TLS). Only its I/O is here, blocking: the state and the
HTTP/1.1 rules are ``mcp_io_common.http11``'s, shared with ``mcp_io_trio._plain``. One
thread uses a connection at a time.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpcore

from mcp_io_common.http11 import END, READ_SIZE, PlainConnectionBase, PlainResponseBase
from mcp_io_common.pool import PoolRequest

__all__ = ["PlainConnection", "PlainResponse"]


class PlainConnection(PlainConnectionBase):
    """A plain connection whose I/O blocks the calling thread (see the base class)."""

    __slots__ = ()

    def close(self) -> None:
        stream = self._detach()
        if stream is not None:
            stream.close()

    def send(self, req: PoolRequest) -> PlainResponse:
        """Send ``req`` and read its response's head."""
        timeouts = req.timeouts
        address = self._begin()
        http = self.http
        try:
            if address is not None:
                self.stream = self._backend.connect_tcp(*address, timeout=timeouts.get("connect"))
            stream = self.stream
            data = http.request(req.method, req.target.url.target, req.head, req.content)
            try:
                stream.write(data, timeout=timeouts.get("write"))
            except httpcore.WriteError:
                # httpcore's rule: a server may close the request early and still have
                # sent a well-formed error response; read it.
                pass
            read_timeout = timeouts.get("read")
            while (head := http.head()) is None:
                http.receive(stream.read(READ_SIZE, timeout=read_timeout))
        except BaseException:
            self.close()
            raise
        return PlainResponse(self, head, read_timeout)


class PlainResponse(PlainResponseBase):
    """The response of a :class:`PlainConnection`, its body an iterator of chunks."""

    __slots__ = ()
    _conn: PlainConnection

    def iter_stream(self) -> Iterator[bytes]:
        return self

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        while (chunk := self._chunk()) is None:
            stream = self._conn.stream
            self._conn.http.receive(stream.read(READ_SIZE, timeout=self._timeout))
        if chunk is END:
            raise StopIteration
        assert isinstance(chunk, bytes)
        return chunk

    def read(self) -> bytes:
        if self._content is None:
            self._content = b"".join(list(self))
        return self._content

    def close(self) -> None:
        """Keep the connection if the body was read to its end, else close it."""
        if self._close():
            self._conn.close()
