"""MCP over WebSocket, the client side, as a sans-IO codec on :mod:`wsproto`.

The transport (SEP-1288, a draft; the official Python SDK 1.x and the TypeScript SDK
ship it): an HTTP/1.1 upgrade offering the subprotocol ``mcp``, then one JSON-RPC
message per text message (RFC 6455 § 5.6). :class:`WebSocketClient` turns bytes from
the socket into :class:`WsOpened`, :class:`WsMessage` and at most one
:class:`WsEnded`, and gives the bytes to write back (the handshake, messages, Pong and
Close frames). It owns every rule of the wire:

* the handshake must end in ``101`` with the subprotocol ``mcp`` selected; any other
  answer (an HTTP 200 from a Streamable HTTP endpoint, a 404, a 401 with its Bearer
  challenge) or a connection closed before the answer ends it with a typed error;
* a message is reassembled from its fragments under ``max_message`` characters, and
  ``permessage-deflate`` (RFC 7692, negotiated by the SDK's uvicorn server) inflates
  under ``max_decompressed`` bytes per message, a step at a time, so a small
  compressed frame cannot exhaust memory (as the HTTP gzip bound, SIZE-1);
* a binary frame (MCP carries JSON text), text that is not UTF-8 and malformed frames
  end the connection: the client sends a Close frame with the matching code (1003,
  1007, 1002, 1009 for too large a message) and reports a typed error;
* a Ping gets a Pong; of several Pings read at once only the last is answered (RFC
  6455 § 5.5.3 allows it), so a Ping flood makes no more output than its input;
* the server's Close frame is answered (§ 5.5.1) and ends the connection with
  :class:`~mcp_proto.errors.WebSocketClosedError` naming its code and reason.

wsproto draws the handshake nonce and the frame masking keys from ``os.urandom``
inside its own code (RFC 6455 § 5.3 wants them unpredictable): the one ambient input,
as ARCHITECTURE.md notes for wsproto. Nothing else here reads a clock or the OS.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final, Union
from urllib.parse import urlsplit

from wsproto import ConnectionType, WSConnection
from wsproto.connection import ConnectionState
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Ping,
    Pong,
    RejectConnection,
    Request,
    TextMessage,
)
from wsproto.extensions import PerMessageDeflate
from wsproto.frame_protocol import CloseReason
from wsproto.utilities import LocalProtocolError as WsLocalError
from wsproto.utilities import RemoteProtocolError as WsRemoteError

from ._record import Record
from ._util import sanitize_peer_text
from .errors import (
    LocalProtocolError,
    MCPError,
    ResponseTooLargeError,
    WebSocketClosedError,
    WebSocketHandshakeError,
    WebSocketProtocolError,
)
from .http import unauthorized_error

if TYPE_CHECKING:
    from wsproto.events import Event as WsEvent

__all__ = [
    "CLOSE_WAIT",
    "MCP_SUBPROTOCOL",
    "WebSocketClient",
    "WsEnded",
    "WsMessage",
    "WsOpened",
    "WsPong",
    "parse_ws_url",
]

#: After the client's Close frame, how long the server gets to close the TCP
#: connection first (RFC 6455 § 7.1.1: the server closes it; the client waits, then
#: closes anyway).
CLOSE_WAIT: Final = 2.0

#: The subprotocol MCP is spoken under (SEP-1288; the SDKs' servers require it).
MCP_SUBPROTOCOL: Final = "mcp"
_DEFAULT_PORTS: Final = {"ws": 80, "wss": 443}
# Headers the handshake itself sets (RFC 6455 § 4.1): a configured one would break it.
_HANDSHAKE_HEADERS: Final = frozenset(
    {"host", "upgrade", "connection", "content-length", "transfer-encoding"}
)
# What a close code means, for the errors (RFC 6455 § 7.4.1).
_CODE_NAMES: Final = {
    1000: "normal closure",
    1001: "going away",
    1002: "protocol error",
    1003: "unsupported data",
    1006: "abnormal closure",
    1007: "invalid frame payload data",
    1008: "policy violation",
    1009: "message too big",
    1010: "mandatory extension",
    1011: "internal error",
    1012: "service restart",
    1013: "try again later",
}
# Reasons longer than this are cut in errors (a close reason is at most 123 bytes on
# the wire anyway, but a parse failure's text is wsproto's).
_MAX_REASON: Final = 200


class WsOpened(Record):
    """The handshake completed: ``subprotocol`` is ``"mcp"``; ``extensions`` are the
    negotiated ones (``("permessage-deflate",)`` or ``()``)."""

    __slots__ = ("extensions", "subprotocol")
    subprotocol: str
    extensions: tuple[str, ...]

    def __init__(self, subprotocol: str, extensions: tuple[str, ...]) -> None:
        object.__setattr__(self, "subprotocol", subprotocol)
        object.__setattr__(self, "extensions", extensions)


class WsMessage(Record):
    """One complete text message: one JSON-RPC message (or batch) as text."""

    __slots__ = ("text",)
    text: str

    def __init__(self, text: str) -> None:
        object.__setattr__(self, "text", text)


class WsPong(Record):
    """The server answered a Ping (:meth:`WebSocketClient.ping`): it is alive."""

    __slots__ = ("payload",)
    payload: bytes

    def __init__(self, payload: bytes) -> None:
        object.__setattr__(self, "payload", payload)


class WsEnded(Record):
    """The connection is over (the last event): ``error`` says why. Bytes may still be
    waiting in :meth:`WebSocketClient.data_to_send` (a Close frame)."""

    __slots__ = ("error",)
    error: MCPError

    def __init__(self, error: MCPError) -> None:
        object.__setattr__(self, "error", error)


WsOutput = Union[WsOpened, WsMessage, WsPong, WsEnded]


def parse_ws_url(url: str) -> tuple[bool, str, int, str, str]:
    """``(tls, host, port, host_header, target)`` of a ``ws://`` or ``wss://`` URL.

    Raises:
        ValueError: another scheme, no host, a malformed port.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise ValueError(f"a WebSocket URL must use ws or wss, got {url!r}")
    host = parts.hostname
    if not host:
        raise ValueError(f"WebSocket URL has no host: {url!r}")
    port = parts.port or _DEFAULT_PORTS[scheme]
    shown_host = f"[{host}]" if ":" in host else host
    host_header = shown_host if parts.port is None else f"{shown_host}:{parts.port}"
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return scheme == "wss", host, port, host_header, target


def _code_text(code: int | None, reason: str) -> str:
    name = _CODE_NAMES.get(code or 0, "")
    text = f"{code}" if code is not None else "no code"
    if name:
        text += f" {name}"
    reason = sanitize_peer_text(reason, cap=_MAX_REASON) if reason else ""
    return f"{text}: {reason}" if reason else text


class _Inflate:
    """A zlib decompressor that never yields more than its owner's budget for the
    current message (RFC 7692 § 7.2.2 inflation, bounded): wsproto's deflate extension
    calls ``decompress`` on each frame's payload and ``flush`` at the message end."""

    __slots__ = ("_owner", "_z")

    def __init__(self, z: Any, owner: _BoundedDeflate) -> None:
        self._z = z
        self._owner = owner

    def decompress(self, data: bytes, max_length: int = 0) -> bytes:
        owner = self._owner
        left = owner.budget - owner.inflated
        # At most ``left + 1`` bytes come out: one more than allowed proves the
        # message too large without inflating the rest.
        out: bytes = self._z.decompress(data, left + 1)
        owner.inflated += len(out)
        if len(out) > left:
            owner.too_big = True
            raise zlib.error("decompressed message too large")
        return out

    def flush(self) -> bytes:
        # Within budget every input byte was consumed (zlib stopped short of the
        # limit), so nothing is left to flush but zlib's own state.
        out: bytes = self._z.flush()
        return out


class _BoundedDeflate(PerMessageDeflate):
    """wsproto's ``permessage-deflate`` with inflation bounded per message (SIZE-1)."""

    def __init__(self, budget: int) -> None:
        super().__init__()
        self.budget = budget
        self.inflated = 0
        self.too_big = False

    def frame_inbound_header(self, proto: Any, opcode: Any, rsv: Any, payload_length: int) -> Any:
        if getattr(self, "_inbound_compressed", None) is None:
            self.inflated = 0  # the first frame of a message: a new budget
        result = super().frame_inbound_header(proto, opcode, rsv, payload_length)
        z = getattr(self, "_decompressor", None)
        if z is not None and not isinstance(z, _Inflate):
            self._decompressor = _Inflate(z, self)  # type: ignore[assignment]
        return result


class WebSocketClient:
    """The client end of one WebSocket connection carrying MCP (see the module doc).

    Use: :meth:`start` gives the handshake request to write; feed what the socket
    reads to :meth:`receive_data` (``b""`` at its end), which returns the events;
    :meth:`send_text` frames a message; :meth:`close` starts the closing handshake;
    :meth:`data_to_send` drains the bytes the codec produced on its own (Pongs, the
    answer to a Close, the Close of a failure). After :class:`WsEnded` nothing more
    is delivered.

    ``max_message``: the longest text message accepted, in characters (a JSON text is
    mostly ASCII: one byte each), as a stdio line is bounded. ``max_decompressed``: the
    most one compressed message may inflate to, in bytes.
    """

    def __init__(
        self,
        url: str,
        headers: Iterable[tuple[str, str]] = (),
        *,
        max_message: int,
        max_decompressed: int,
        deflate: bool = True,
    ) -> None:
        _tls, _host, _port, self._host_header, self._target = parse_ws_url(url)
        # UTF-8: a value outside Latin-1 is sent as its bytes, not an encoding crash.
        self._headers = [
            (k.encode("utf-8"), v.encode("utf-8"))
            for k, v in headers
            if k.lower() not in _HANDSHAKE_HEADERS and not k.lower().startswith("sec-websocket-")
        ]
        self._max_message = max_message
        self._deflate = _BoundedDeflate(max_decompressed) if deflate else None
        self._ws = WSConnection(ConnectionType.CLIENT)
        self._out: list[bytes] = []
        self._parts: list[str] = []
        self._size = 0
        self._opened = False
        self._ended = False
        self._closing = False  # close() was called

    @property
    def opened(self) -> bool:
        """The handshake completed (and the connection did not end since)."""
        return self._opened and not self._ended

    @property
    def ended(self) -> bool:
        return self._ended

    @property
    def in_message(self) -> bool:
        """Fragments of a message arrived and its end did not yet."""
        return bool(self._parts)

    # ------------------------------------------------------------ sending

    def start(self) -> bytes:
        """The opening handshake (RFC 6455 § 4.1): ``GET target`` with the upgrade,
        ``Sec-WebSocket-Protocol: mcp``, the deflate offer and the configured headers
        (the ``Authorization`` among them).

        Raises:
            LocalProtocolError: a configured header HTTP cannot carry (a name that is
                not a token).
        """
        extensions = [self._deflate] if self._deflate is not None else []
        try:
            return self._ws.send(
                Request(
                    host=self._host_header,
                    target=self._target,
                    subprotocols=[MCP_SUBPROTOCOL],
                    extensions=extensions,
                    extra_headers=self._headers,
                )
            )
        except Exception as exc:  # h11's LocalProtocolError: a bad header of the config
            raise LocalProtocolError(f"cannot build the WebSocket upgrade request: {exc}") from None

    def send_text(self, data: bytes | str) -> bytes:
        """One message as one text frame (compressed when deflate was negotiated).

        Raises:
            LocalProtocolError (wsproto's): not open (a bug of the caller's).
        """
        text = data if isinstance(data, str) else data.decode("utf-8")
        return self._ws.send(TextMessage(data=text))

    def send_many(self, messages: Iterable[bytes | str]) -> bytes:
        """Several messages, one text frame each, as one write."""
        return b"".join(self.send_text(m) for m in messages)

    def ping(self, payload: bytes = b"") -> bytes:
        """A Ping frame (a keep-alive probe, § 5.5.2); ``b""`` if not open."""
        if not self.opened:
            return b""
        return self._ws.send(Ping(payload=payload))

    def close(self, code: int = 1000, reason: str = "") -> bytes:
        """Start the closing handshake (§ 7.1.2); ``b""`` if it cannot be sent (not
        open, or already closing)."""
        self._closing = True
        if self._ended or not self._opened:
            return b""
        try:
            return self._ws.send(CloseConnection(code=code, reason=reason or None))
        except WsLocalError:
            return b""

    def data_to_send(self) -> bytes:
        """Bytes the codec produced by itself since the last call (Pongs, Close)."""
        out, self._out = self._out, []
        return b"".join(out)

    # ------------------------------------------------------------ receiving

    def receive_data(self, data: bytes) -> list[WsOutput]:
        """Feed bytes read from the socket (``b""``: its end); returns the events, in
        order. Never raises for anything the peer sends."""
        if self._ended:
            return []
        events: list[WsOutput] = []
        if not data and not self._opened:
            # h11 would call a cut head malformed; what happened is simpler.
            self._end(self._eof_error(), events)
            return events
        ws = self._ws
        try:
            ws.receive_data(data if data else None)
            pong: bytes | None = None
            for event in ws.events():
                if isinstance(event, Ping):
                    pong = bytes(event.payload)  # only the last one is answered
                    continue
                if not self._handle(event, events):
                    break
            if pong is not None and not self._ended and ws.state is ConnectionState.OPEN:
                self._out.append(ws.send(Ping(payload=pong).response()))
        except WsRemoteError as exc:
            # The handshake's answer is not a valid upgrade (a bad accept key, a
            # subprotocol not offered, a malformed HTTP head).
            self._end(WebSocketHandshakeError(f"invalid WebSocket handshake answer: {exc}"), events)
        except WsLocalError as exc:  # pragma: no cover - fed after wsproto closed
            self._end(WebSocketClosedError(f"the WebSocket connection is closed: {exc}"), events)
        if not data and not self._ended:
            self._end(self._eof_error(), events)
        return events

    def _handle(self, event: WsEvent, events: list[WsOutput]) -> bool:
        """One wsproto event; False once the connection ended."""
        if isinstance(event, TextMessage):
            if not self._opened:  # pragma: no cover - wsproto opens first
                return True
            self._size += len(event.data)
            if self._size > self._max_message:
                self._fail(
                    ResponseTooLargeError(
                        f"a WebSocket message exceeded {self._max_message} characters"
                    ),
                    CloseReason.MESSAGE_TOO_BIG,
                    events,
                )
                return False
            if event.message_finished:
                parts = self._parts
                if parts:
                    parts.append(event.data)
                    text = "".join(parts)
                    parts.clear()
                else:
                    text = event.data
                self._size = 0
                events.append(WsMessage(text))
            else:
                self._parts.append(event.data)
            return True
        if isinstance(event, AcceptConnection):
            return self._accepted(event, events)
        if isinstance(event, BytesMessage):
            self._fail(
                WebSocketProtocolError(
                    "the server sent a binary WebSocket frame; MCP messages are JSON text "
                    "frames (closed with 1003 unsupported data)",
                    code=CloseReason.UNSUPPORTED_DATA,
                ),
                CloseReason.UNSUPPORTED_DATA,
                events,
            )
            return False
        if isinstance(event, CloseConnection):
            self._closed(event, events)
            return False
        if isinstance(event, RejectConnection):
            self._rejected(event, events)
            return False
        if isinstance(event, Pong):
            events.append(WsPong(bytes(event.payload)))
        return True  # RejectData (ended already): nothing to do

    def _accepted(self, event: AcceptConnection, events: list[WsOutput]) -> bool:
        if event.subprotocol != MCP_SUBPROTOCOL:
            # The client offered only "mcp"; a server that selects nothing may speak
            # anything on this connection (SEP-1288: the subprotocol is required).
            what = "no subprotocol" if event.subprotocol is None else repr(event.subprotocol)
            self._end(
                WebSocketHandshakeError(
                    f"the server accepted the WebSocket upgrade with {what}, not the "
                    f"{MCP_SUBPROTOCOL!r} subprotocol"
                ),
                events,
            )
            # Say goodbye: the connection is open as far as WebSocket goes.
            self._send_close(CloseReason.PROTOCOL_ERROR, "mcp subprotocol required")
            return False
        self._opened = True
        names = tuple(
            ext.name for ext in event.extensions if getattr(ext, "enabled", lambda: True)()
        )
        events.append(WsOpened(event.subprotocol, names))
        return True

    def _rejected(self, event: RejectConnection, events: list[WsOutput]) -> None:
        status = event.status_code
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in event.headers}
        error: MCPError
        if status in (401, 403):
            error = unauthorized_error(status, headers.get("www-authenticate"))
        else:
            hint = ""
            if 200 <= status < 300:
                hint = (
                    " (an HTTP endpoint, not a WebSocket one: for Streamable HTTP use an "
                    "http:// or https:// URL)"
                )
            error = WebSocketHandshakeError(
                f"the server answered the WebSocket upgrade with HTTP {status}{hint}"
            )
            error.http_status = status
        self._end(error, events)

    def _closed(self, event: CloseConnection, events: list[WsOutput]) -> None:
        code, reason = event.code, event.reason or ""
        ws = self._ws
        if ws.state is ConnectionState.REMOTE_CLOSING:
            # The server's Close frame: answered with the same code (§ 5.5.1).
            try:
                self._out.append(ws.send(event.response()))
            except WsLocalError:  # pragma: no cover - state checked above
                pass
            where = " in the middle of a message" if self._parts else ""
            self._end(
                WebSocketClosedError(
                    f"the server closed the WebSocket connection{where} "
                    f"({_code_text(code, reason)})",
                    code=code,
                    reason=reason,
                ),
                events,
            )
            return
        if ws.state is ConnectionState.CLOSED and code == CloseReason.ABNORMAL_CLOSURE:
            self._end(self._eof_error(), events)
            return
        if ws.state is ConnectionState.CLOSED:
            # The answer to our own Close: the closing handshake completed.
            self._end(
                WebSocketClosedError(
                    "the WebSocket connection was closed", code=code, reason=reason
                ),
                events,
            )
            return
        # wsproto found the frames malformed (ParseFailed): we close, with its code.
        deflate = self._deflate
        if deflate is not None and deflate.too_big:
            self._fail(
                ResponseTooLargeError(
                    "a compressed WebSocket message expanded past max_decompressed_body_bytes "
                    f"({deflate.budget} bytes)"
                ),
                CloseReason.MESSAGE_TOO_BIG,
                events,
            )
            return
        if code == CloseReason.INVALID_FRAME_PAYLOAD_DATA:
            what = "a WebSocket text frame that is not valid UTF-8 (or undecodable data)"
        else:
            what = "a malformed WebSocket frame"
        self._fail(
            WebSocketProtocolError(
                f"the server sent {what}: {sanitize_peer_text(reason, cap=_MAX_REASON)} "
                f"(closed with {_code_text(code, '')})",
                code=code,
            ),
            code,
            events,
        )

    def _eof_error(self) -> MCPError:
        if not self._opened:
            return WebSocketHandshakeError(
                "the server closed the connection during the WebSocket handshake"
            )
        where = " in the middle of a message" if self._parts else ""
        return WebSocketClosedError(
            f"the server closed the connection{where} without a WebSocket Close frame "
            "(1006 abnormal closure)",
            code=CloseReason.ABNORMAL_CLOSURE,
        )

    def _fail(self, error: MCPError, code: int, events: list[WsOutput]) -> None:
        """A violation: close with ``code`` (§ 7.1.7, "Fail the WebSocket Connection")."""
        self._send_close(code, "")
        self._end(error, events)

    def _send_close(self, code: int, reason: str) -> None:
        try:
            self._out.append(self._ws.send(CloseConnection(code=code, reason=reason or None)))
        except WsLocalError:
            pass  # already closing: nothing more may be sent

    def _end(self, error: MCPError, events: list[WsOutput]) -> None:
        self._ended = True
        self._parts.clear()
        events.append(WsEnded(error))
