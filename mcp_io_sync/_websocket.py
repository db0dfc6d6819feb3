"""The blocking shell's WebSocket transport (issue 25): one TCP (or TLS) socket and a
reader thread.

Every rule (the upgrade, framing, masking, Ping/Pong, Close codes, limits, what an end
means) is the machine's (``mcp_proto.connection``, on ``mcp_proto.websocket``). This
module performs its frames: ``OpenTransport`` connects the socket, ``Write`` writes
bytes as they are (already framed by the machine), ``CloseTransport`` closes it; a
reader thread feeds what arrives to ``receive_data`` and the socket's end to
``receive_eof``.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from typing import Any, Final

from mcp_proto.config import ServerConfig
from mcp_proto.connection import CloseTransport, Frame, OpenTransport, Write
from mcp_proto.errors import ConnectionError
from mcp_proto.websocket import parse_ws_url

from ._base import BaseServer

__all__ = ["WebSocketServer"]

_READ_CHUNK: Final = 65536
#: After our Close frame, how long the server gets to close the TCP connection first
#: (RFC 6455 § 7.1.1: the server closes it; the client waits, then closes anyway).
CLOSE_WAIT: Final = 2.0


class _Socket:
    """One open connection: the socket, its reader thread, a write lock."""

    def __init__(self, sock: socket.socket) -> None:
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


class WebSocketServer(BaseServer):
    """One MCP server reached over WebSocket (blocking shell)."""

    type = "websocket"

    def __init__(
        self,
        config: ServerConfig,
        *,
        ssl_context: ssl.SSLContext | None = None,
        proxy: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(config, **kwargs)
        assert config.url is not None
        self.url: str = config.url
        self._ssl_context = ssl_context
        self._proxy = proxy
        self._sock: _Socket | None = None
        self._closing: list[_Socket] = []

    # ------------------------------------------------------------ frames

    def _perform(self, frame: Frame) -> None:
        kind = type(frame)
        if kind is Write:
            assert isinstance(frame, Write)
            sock = self._sock
            if sock is not None:
                sock.send(b"".join(frame.messages))
        elif kind is OpenTransport:
            self._open()
        elif kind is CloseTransport:
            assert isinstance(frame, CloseTransport)
            self._close(frame.graceful)

    def _connect(self) -> socket.socket:
        if self._proxy:
            raise ConnectionError(
                f"server {self.name!r}: WebSocket through a proxy is not supported yet "
                "(the client was given proxy=...)"
            )
        tls, host, port, _, _ = parse_ws_url(self.url)
        timeout = self.config.read_timeout
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as exc:
            raise ConnectionError(
                f"server {self.name!r}: cannot connect to {self.url}: {exc}"
            ) from exc
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if tls:
                context = self._ssl_context or ssl.create_default_context()
                sock = context.wrap_socket(sock, server_hostname=host)
            sock.settimeout(None)
        except (OSError, ssl.SSLError) as exc:
            sock.close()
            raise ConnectionError(
                f"server {self.name!r}: TLS with {self.url} failed: {exc}"
            ) from exc
        return sock

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
            self._sock = sock
            self._generation += 1
        reader.start()
        with self._lock:
            self._conn.transport_opened(time.monotonic())

    def _close(self, graceful: bool) -> None:
        with self._lock:
            sock, self._sock = self._sock, None
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
            sock = self._sock
        if sock is not None:  # pragma: no cover - close() closed it
            sock.close()

    # ------------------------------------------------------------ reading

    def _read_loop(self, sock: _Socket) -> None:
        raw = sock.sock
        while True:
            try:
                data = raw.recv(_READ_CHUNK)
            except OSError:
                data = b""
            if not data:
                sock.ended.set()
            self._pump(False, self._feed, sock, data)
            if not data:
                return

    def _feed(self, sock: _Socket, data: bytes) -> None:
        # (under _lock) only the current connection's bytes reach the machine.
        if sock is not self._sock:
            return
        if data:
            self._conn.receive_data(data, time.monotonic())
        else:
            self._conn.receive_eof(time.monotonic())
