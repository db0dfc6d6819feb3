"""The blocking shell's WebSocket transport (issue 25): one TCP (or TLS) socket and a
reader thread. What it performs and leaves to the machine, and its proxy tunnel, are
described in ``mcp_io_common/websocket.py``: ``OpenTransport`` connects the socket (and
tunnels it through the proxy), ``Write`` writes to it, ``CloseTransport`` closes it,
and the reader thread feeds the machine what arrives.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time

from mcp_io_common.websocket import READ_CHUNK, TUNNEL_CHUNK, Route, WebSocketTarget
from mcp_proto.connection import CloseTransport, Frame, OpenTransport, Write
from mcp_proto.errors import ConnectionError
from mcp_proto.websocket import CLOSE_WAIT

from ._base import BaseServer

__all__ = ["WebSocketServer"]


class _TlsInTls:
    """TLS to the server inside the TLS to an ``https://`` proxy: ``ssl`` cannot wrap an
    ``SSLSocket`` in another, so an ``SSLObject`` runs over memory buffers and the outer
    socket carries its records. The reader thread calls :meth:`recv`, writers
    :meth:`sendall`; records leave in the order the ``SSLObject`` made them (one
    flusher at a time drains the outgoing buffer), and no lock is held while the outer
    socket blocks, so reading never waits for a blocked write."""

    def __init__(self, outer: ssl.SSLSocket, context: ssl.SSLContext, hostname: str) -> None:
        self._outer = outer
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._incoming, self._outgoing, server_hostname=hostname)
        self._lock = threading.Lock()  # the SSLObject and its buffers
        self._send_lock = threading.Lock()  # one flusher: records leave in order
        while True:  # the handshake (the outer socket's timeout bounds each read)
            try:
                self._tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self._flush(wait=True)
                self._feed()
        self._flush(wait=True)

    def _feed(self) -> bool:
        data = self._outer.recv(READ_CHUNK)
        with self._lock:
            if data:
                self._incoming.write(data)
            else:
                self._incoming.write_eof()
        return bool(data)

    def _flush(self, *, wait: bool) -> None:
        while True:
            if not self._send_lock.acquire(blocking=wait):
                return  # the holder flushes what is pending before it lets go
            try:
                with self._lock:
                    data = self._outgoing.read()
                if data:
                    self._outer.sendall(data)
            finally:
                self._send_lock.release()
            with self._lock:
                if not self._outgoing.pending:
                    return

    def recv(self, size: int) -> bytes:
        while True:
            with self._lock:
                try:
                    data: bytes | None = self._tls.read(size)
                except ssl.SSLWantReadError:
                    data = None
                except ssl.SSLZeroReturnError:
                    data = b""
                pending = self._outgoing.pending
            if pending:
                self._flush(wait=False)  # (a TLS 1.3 KeyUpdate's answer, say)
            if data is not None:
                return data
            if not self._feed():
                with self._lock:
                    try:
                        return self._tls.read(size)
                    except (ssl.SSLWantReadError, ssl.SSLZeroReturnError):
                        return b""

    def sendall(self, data: bytes) -> None:
        with self._lock:
            self._tls.write(data)
        self._flush(wait=True)

    def settimeout(self, timeout: float | None) -> None:
        self._outer.settimeout(timeout)

    def shutdown(self, how: int) -> None:
        self._outer.shutdown(how)

    def close(self) -> None:
        self._outer.close()


class _Socket:
    """One open connection: the socket, its reader thread, a write lock."""

    def __init__(self, sock: socket.socket | _TlsInTls) -> None:
        self.sock = sock
        self.write_lock = threading.Lock()
        self.reader: threading.Thread | None = None
        self.ended = threading.Event()  # the reader saw the end

    def send(self, data: bytes) -> None:
        with self.write_lock:
            try:
                self.sock.sendall(data)
            except OSError:
                # The reader learns it too (reset, EOF) and tells the machine; a
                # shutdown makes sure it does not wait for a peer that is gone.
                self.shutdown()

    def shutdown(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def close(self) -> None:
        self.shutdown()
        try:
            self.sock.close()
        except OSError:
            pass


class WebSocketServer(WebSocketTarget, BaseServer):
    """One MCP server reached over WebSocket (blocking shell)."""

    _link: _Socket | None

    # ------------------------------------------------------------ frames

    def _perform(self, frame: Frame) -> None:
        kind = type(frame)
        if kind is Write:
            assert isinstance(frame, Write)
            sock = self._link
            if sock is not None:
                sock.send(b"".join(frame.messages))
        elif kind is OpenTransport:
            self._open()
        elif kind is CloseTransport:
            assert isinstance(frame, CloseTransport)
            self._close(frame.graceful)

    def _connect(self) -> socket.socket | _TlsInTls:
        route = self._route()
        timeout = self.config.read_timeout
        deadline = time.monotonic() + timeout
        try:
            sock = socket.create_connection(route.hop, timeout=timeout)
        except OSError as exc:
            raise route.cannot_connect(exc) from exc
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if route.proxy is not None:
                sock = self._tunnel(sock, route, deadline)
            if route.tls:
                context = self._tls_context()
                sock.settimeout(max(deadline - time.monotonic(), 0.001))
                if isinstance(sock, ssl.SSLSocket):  # an https:// proxy's TLS is under it
                    inner = _TlsInTls(sock, context, route.host)
                    sock.settimeout(None)
                    return inner
                sock = context.wrap_socket(sock, server_hostname=route.host)
            sock.settimeout(None)
        except ConnectionError:
            sock.close()
            raise
        except (OSError, ssl.SSLError) as exc:
            sock.close()
            raise ConnectionError(
                f"server {self.name!r}: TLS with {self.url} failed: {exc}"
            ) from exc
        return sock

    def _tunnel(self, sock: socket.socket, route: Route, deadline: float) -> socket.socket:
        """``CONNECT`` through the route's proxy; the socket then carries the bytes to
        the server."""
        proxy = route.proxy
        assert proxy is not None
        if proxy.tls:
            try:
                context = self._tls_context()
                sock.settimeout(max(deadline - time.monotonic(), 0.001))
                sock = context.wrap_socket(sock, server_hostname=proxy.host)
            except (OSError, ssl.SSLError) as exc:
                raise ConnectionError(
                    f"server {self.name!r}: TLS with the proxy {proxy.display} failed: {exc}"
                ) from exc
        timeout = self.config.read_timeout
        tunnel = route.tunnel(deadline - timeout, timeout)
        try:
            sock.sendall(tunnel.request())
            while True:
                remaining = tunnel.deadline - time.monotonic()
                if remaining <= 0:
                    tunnel.handle_timeout(time.monotonic())
                sock.settimeout(max(remaining, 0.001))
                try:
                    data = sock.recv(TUNNEL_CHUNK)
                except TimeoutError:
                    tunnel.handle_timeout(time.monotonic())
                    continue
                except OSError:
                    data = b""  # reset: the tunnel says the proxy closed it
                if tunnel.receive_data(data):
                    return sock
        except OSError as exc:
            raise route.proxy_write_failed(exc) from exc

    def _open(self) -> None:
        try:
            raw = self._connect()
        except ConnectionError as exc:
            with self._lock:
                self._conn.transport_failed(exc, time.monotonic())
            return
        sock = _Socket(raw)
        reader = threading.Thread(
            target=self._read_loop, args=(sock,), name=f"mcp-ws-{self.name}", daemon=True
        )
        sock.reader = reader
        with self._lock:
            self._link = sock
            self._generation += 1
        reader.start()
        with self._lock:
            self._conn.transport_opened(time.monotonic())

    def _close(self, graceful: bool) -> None:
        with self._lock:
            sock, self._link = self._link, None
        if sock is not None:
            if graceful and sock.reader is not threading.current_thread():
                # Our Close went out just before: the server answers and closes.
                sock.ended.wait(CLOSE_WAIT)
            sock.close()
            reader = sock.reader
            if reader is not None and reader is not threading.current_thread():
                reader.join(CLOSE_WAIT)
        with self._lock:
            self._conn.transport_closed(time.monotonic())

    def _stop_transport(self) -> None:
        with self._lock:
            sock = self._link
        if sock is not None:  # pragma: no cover - close() closed it
            sock.close()

    # ------------------------------------------------------------ reading

    def _read_loop(self, sock: _Socket) -> None:
        raw = sock.sock
        while True:
            try:
                data = raw.recv(READ_CHUNK)
            except OSError:
                data = b""
            if not data:
                sock.ended.set()
            self._pump(False, self._feed, sock, data)
            if not data:
                return

    def _feed(self, sock: _Socket, data: bytes) -> None:
        # (under _lock) only the current connection's bytes reach the machine.
        if sock is not self._link:
            return
        if data:
            self._conn.receive_data(data, time.monotonic())
        else:
            self._conn.receive_eof(time.monotonic())
