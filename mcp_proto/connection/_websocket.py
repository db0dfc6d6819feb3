"""The WebSocket transport strategy (issue 25; SEP-1288, a draft): MCP over one
WebSocket connection, one JSON-RPC message per text message.

``OpenTransport`` asks the driver for a TCP connection (TLS for ``wss://``) to the
config's URL; once it is open the strategy writes the upgrade (``Write`` frames here
carry bytes to write *as they are*: the WebSocket framing is the codec's,
:mod:`mcp_proto.websocket`) and waits for the answer, at most ``read_timeout``. The
handshake done, the connection is usable and the era is decided as on stdio (a
message stream both ways: no headers, ``server/discover`` then ``initialize``).
Bytes the driver reads go to ``receive_data``, the end of the socket to
``receive_eof``. The codec's end (the server's Close, a violation, the socket's end)
is the connection lost with its typed error; the next call reconnects. ``close()``
sends a Close frame (1000) before ``CloseTransport``.

Keep-alive (``config.ping`` seconds, off by default): once open, a Ping goes out after
every ``ping`` seconds; a Pong not back within ``PONG_TIMEOUT_FACTOR`` intervals is the
connection lost (a server or a path that died silently), as the legacy SSE transport's
keep-alive does with ``ping`` requests (SSE-5).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ..errors import ConnectionError, LocalProtocolError, WebSocketHandshakeError
from ._transport import Outgoing, Transport
from .frames import OpenTransport, Write

if TYPE_CHECKING:
    from ..websocket import WebSocketClient
    from ._transport import TransportPort

__all__ = ["PONG_TIMEOUT_FACTOR", "WebSocketTransport"]

#: How many ping intervals a Pong may take before the connection counts as dead.
PONG_TIMEOUT_FACTOR: Final = 2.5


class WebSocketTransport(Transport):
    timed = True

    def __init__(self, port: TransportPort) -> None:
        super().__init__(port)
        self._ws: WebSocketClient | None = None
        self._handshake_at: float | None = None  # the deadline for the server's 101
        self._ping_at: float | None = None  # when the next keep-alive Ping goes out
        self._pong_by: float | None = None  # the deadline for its Pong

    def open(self, now: float) -> None:
        self.reset()
        self.port.emit(OpenTransport())

    def opened(self, now: float) -> None:
        from ..websocket import WebSocketClient

        port = self.port
        config = port.config
        assert config.url is not None
        ws = WebSocketClient(
            config.url,
            tuple(config.headers.items()),
            max_message=port.max_line_size,
            max_decompressed=config.max_decompressed_body_bytes,
        )
        try:
            request = ws.start()
        except LocalProtocolError as exc:
            failed = ConnectionError(f"server {port.name!r}: {exc}")
            port.lost(failed, now)  # the connect fails, naming the header
            return
        self._ws = ws
        self._handshake_at = now + config.read_timeout
        port.emit(Write([request]))

    def reset(self) -> None:
        self._ws = None
        self._handshake_at = None
        self._ping_at = self._pong_by = None

    def closing(self, now: float) -> None:
        ws = self._ws
        if ws is not None:
            # RFC 6455 § 7.1.2: start the closing handshake; the driver then waits
            # (bounded) for the server to close the TCP connection (§ 7.1.1).
            data = ws.close(1000)
            if data:
                self.port.emit(Write([data]))

    def transmit(self, messages: list[Outgoing], now: float) -> None:
        ws = self._ws
        if ws is None or not ws.opened:
            return  # the connection is going: the calls fail with its loss
        self.port.emit(Write([ws.send_many(m.data for m in messages)]))

    # ------------------------------------------------------------ time

    def next_deadline(self) -> float | None:
        times = [t for t in (self._handshake_at, self._ping_at, self._pong_by) if t is not None]
        return min(times) if times else None

    def handle_timeout(self, now: float) -> None:
        if self._pong_by is not None and now >= self._pong_by:
            self._pong_by = None
            port = self.port
            port.lost(
                ConnectionError(
                    f"server {port.name!r} did not answer a WebSocket Ping within "
                    f"{(port.config.ping or 0) * PONG_TIMEOUT_FACTOR:g} s"
                ),
                now,
            )
            return
        ws, ping = self._ws, self.port.config.ping
        if self._ping_at is not None and now >= self._ping_at and ws is not None and ping:
            self._ping_at = None
            data = ws.ping(b"keep-alive")
            if data:
                self._pong_by = now + ping * PONG_TIMEOUT_FACTOR
                self.port.emit(Write([data]))
        at = self._handshake_at
        if at is not None and now >= at:
            self._handshake_at = None
            port = self.port
            port.lost(
                WebSocketHandshakeError(
                    f"server {port.name!r} did not complete the WebSocket handshake within "
                    f"{port.config.read_timeout:g} s"
                ),
                now,
            )

    # ------------------------------------------------------------ inputs

    def receive_data(self, data: bytes, now: float) -> None:
        ws = self._ws
        if ws is None:
            return
        from ..websocket import WsEnded, WsMessage, WsPong

        port = self.port
        for event in ws.receive_data(data):
            if type(event) is WsMessage:
                port.deliver(event.text)
                if self._ws is not ws:
                    return  # delivering ended this connection
            elif type(event) is WsEnded:
                reply = ws.data_to_send()
                if reply:
                    port.emit(Write([reply]))  # the Close answering or failing it
                self._ws = None
                self._handshake_at = None
                port.drain(now)  # the messages before it come first
                port.lost(event.error, now)
                return
            elif type(event) is WsPong:
                if self._pong_by is not None:
                    self._pong_by = None
                    self._schedule_ping(now)
            else:  # WsOpened
                self._handshake_at = None
                self._schedule_ping(now)
                port.usable(now)
        reply = ws.data_to_send()
        if reply:
            port.emit(Write([reply]))

    def _schedule_ping(self, now: float) -> None:
        ping = self.port.config.ping
        self._ping_at = now + ping if ping else None

    def receive_eof(self, now: float, detail: str) -> None:
        self.receive_data(b"", now)
