"""The Trio shell's WebSocket transport (issue 25): one TCP (or TLS) stream and a
reader task. What it performs and leaves to the machine, and its proxy tunnel, are
described in ``mcp_io_common/websocket.py``: ``OpenTransport`` opens the stream (TLS
over an ``https://`` proxy's TLS is trio's layered streams), ``Write`` sends on it,
``CloseTransport`` closes it, and the reader task feeds the machine what arrives.
"""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable
from typing import Final

import trio

from mcp_io_common.websocket import READ_CHUNK, TUNNEL_CHUNK, Route, WebSocketTarget
from mcp_proto.errors import ConnectionError
from mcp_proto.proxy_tunnel import ProxyTunnel
from mcp_proto.websocket import CLOSE_WAIT

from ._base import BaseServer

__all__ = ["WebSocketServer"]

_STREAM_ERRORS: Final = (trio.BrokenResourceError, trio.ClosedResourceError, OSError)


class _Link:
    """One open connection: its stream, what waits to be sent, its reader's scope."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.outq: list[bytes] = []
        self.write_lock = trio.Lock()
        self.reader_scope = trio.CancelScope()
        self.ended = trio.Event()  # the reader saw the end
        self.alive = True  # False once detached: nothing more of it reaches the machine


class WebSocketServer(WebSocketTarget, BaseServer):
    """One MCP server reached over WebSocket (Trio shell)."""

    _link: _Link | None

    # ------------------------------------------------------------ open / close

    async def _open_transport(self) -> None:
        route = self._route()
        try:
            stream = await self._open_stream(route)
        except trio.TooSlowError:
            raise ConnectionError(
                f"server {self.name!r}: connecting to {route.where} took more than "
                f"{self.config.read_timeout:g} s"
            ) from None
        except (*_STREAM_ERRORS, ssl.SSLError) as exc:
            # trio wraps a TLS failure in BrokenResourceError, saying nothing itself.
            detail = str(exc) or str(exc.__cause__ or "") or type(exc).__name__
            raise route.cannot_connect(detail) from exc
        link = self._link = _Link(stream)
        self._nursery().start_soon(self._read_loop, link)

    async def _open_stream(self, route: Route) -> trio.abc.Stream:
        stream: trio.abc.Stream | None = None
        timeout = self.config.read_timeout
        start = trio.current_time()
        tunnel = None
        proxy = route.proxy
        try:
            with trio.move_on_at(start + timeout) as bound:
                stream = await trio.open_tcp_stream(*route.hop)
                if proxy is not None:
                    if proxy.tls:
                        context = self._tls_context()
                        stream = trio.SSLStream(stream, context, server_hostname=proxy.host)
                        await stream.do_handshake()
                    tunnel = route.tunnel(start, timeout)
                    await self._tunnel(stream, route, tunnel)
                    tunnel = None
                if route.tls:
                    context = self._tls_context()
                    # (Over an https:// proxy this is TLS inside TLS: trio layers streams.)
                    stream = trio.SSLStream(stream, context, server_hostname=route.host)
                    await stream.do_handshake()
            if bound.cancelled_caught:
                if tunnel is not None:
                    tunnel.handle_timeout(start + timeout)  # raises the ProxyError
                raise trio.TooSlowError
            assert stream is not None
            return stream
        except BaseException:
            if stream is not None:
                await trio.aclose_forcefully(stream)  # (a failed TLS handshake's socket)
            raise

    async def _tunnel(self, stream: trio.abc.Stream, route: Route, tunnel: ProxyTunnel) -> None:
        """``CONNECT`` through the route's proxy; the stream then carries the bytes to
        the server."""
        try:
            await stream.send_all(tunnel.request())
        except _STREAM_ERRORS as exc:
            raise route.proxy_write_failed(exc) from exc
        while True:
            try:
                got = await stream.receive_some(TUNNEL_CHUNK)
                data = got if type(got) is bytes else bytes(got)
            except _STREAM_ERRORS:
                data = b""  # reset: the tunnel says the proxy closed it
            if tunnel.receive_data(data):
                return

    def _detach_transport(self, graceful: bool) -> Callable[[], Awaitable[None]]:
        link, self._link = self._link, None
        if link is None:
            return trio.lowlevel.checkpoint
        link.alive = False

        async def close() -> None:
            if graceful:
                with trio.move_on_after(CLOSE_WAIT):
                    await self._send_queued(link)  # our Close frame, queued just before
                    await link.ended.wait()  # the server answers and closes (§ 7.1.1)
            link.reader_scope.cancel()
            with trio.move_on_after(CLOSE_WAIT) as scope:
                scope.shield = True
                try:
                    await link.stream.aclose()
                except _STREAM_ERRORS:
                    pass

        return close

    # ------------------------------------------------------------ writing

    def _write(self, messages: list[bytes]) -> bool:
        link = self._link
        if link is None:
            return False  # the machine learns of the end from the reader
        link.outq.append(b"".join(messages))
        return True

    async def _flush(self) -> None:
        link = self._link
        if link is not None:
            await self._send_queued(link)

    async def _send_queued(self, link: _Link) -> None:
        """Send what is queued, in order. Not cancellable once sending (a frame cut
        short would corrupt the stream), bounded by ``read_timeout`` instead."""
        async with link.write_lock:
            with trio.CancelScope(shield=True):
                with trio.move_on_after(self.read_timeout) as bound:
                    while link.outq:
                        data = link.outq.pop(0)
                        try:
                            await link.stream.send_all(data)
                        except _STREAM_ERRORS:
                            link.outq.clear()
                            break
                if bound.cancelled_caught:
                    link.outq.clear()
                    link.reader_scope.cancel()  # a peer that reads nothing is gone

    # ------------------------------------------------------------ reading

    async def _read_loop(self, link: _Link) -> None:
        data = b""
        with link.reader_scope:
            while True:
                try:
                    got = await link.stream.receive_some(READ_CHUNK)
                    data = got if type(got) is bytes else bytes(got)
                except (*_STREAM_ERRORS, trio.BusyResourceError):
                    data = b""
                if not data:
                    break
                if not link.alive or link is not self._link:
                    continue  # closing: read the server's answer, deliver nothing
                self._conn.receive_data(data, trio.current_time())
                self._pump_nowait()
        link.ended.set()
        if link.alive and link is self._link:
            self._conn.receive_eof(trio.current_time())
            self._pump_nowait()
