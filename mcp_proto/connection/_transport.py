"""The two sides of a transport strategy: :class:`Transport`, what every strategy
implements for the connection, and :class:`TransportPort`, all a strategy may read of
its connection and ask of it.

A strategy turns the connection's outgoing messages (:class:`Outgoing`) into frames and
the driver's inputs into messages for the session; it owns the transport-level state
(the framer, HTTP exchanges, the session id, streams, keep-alive) and nothing else. It
holds a :class:`TransportPort`, never the :class:`~._machine.Connection`: it reads facts
through it, hands it frames and messages, and tells it what it learnt (the transport is
usable, ready, lost; a session expired; an attempt failed), and the connection takes
the step. Writing a new strategy (say a WebSocket one): subclass :class:`Transport`,
implement ``open``, ``transmit`` and the inputs of its kind (stdio-like ones:
``receive_data``/``receive_eof``; exchange-like ones: ``exchange_*``), and add it to
``_make_transport`` in ``_machine.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .. import jsonrpc
from ..errors import LocalProtocolError, MCPError
from ..session import ServerInfo

if TYPE_CHECKING:
    from ..config import ServerConfig
    from ..versions import Era
    from .frames import ExchangeFailure, Frame

__all__ = ["Outgoing", "Transport", "TransportPort"]


class TransportPort(Protocol):
    """What a transport strategy may read of its connection and ask of it."""

    # ------------------------------------------------------------ facts (read only)

    @property
    def config(self) -> ServerConfig:
        """The server's configuration (replaced by ``Connection.set_header``)."""

    @property
    def name(self) -> str: ...

    @property
    def max_line_size(self) -> int:
        """The bound on one message (a stdio line, an SSE event, a plain JSON body)."""

    @property
    def era(self) -> Era | None:
        """The era spoken (``None`` while undecided)."""

    @property
    def server(self) -> ServerInfo | None:
        """What the handshake (or discover) established."""

    @property
    def is_connected(self) -> bool: ...

    def deadline_of(self, rid: jsonrpc.RequestId) -> float | None:
        """The request's own deadline on the current session (``None``: none, or not
        pending)."""

    def is_pending(self, rid: jsonrpc.RequestId) -> bool:
        """Whether the request ``rid`` of the current session waits for its answer."""

    def is_handshake(self, rid: jsonrpc.RequestId | None) -> bool:
        """Whether ``rid`` is the ``initialize`` of the handshake in progress."""

    def listens_on(self, rid: jsonrpc.RequestId) -> bool:
        """Whether ``rid`` is a ``subscriptions/listen`` request (its stream's messages
        go to :meth:`deliver_listen`)."""

    # ------------------------------------------------------------ outputs

    def emit(self, frame: Frame) -> None:
        """A frame for the driver (in order with the connection's own)."""

    def deliver(self, message: bytes | str, origin: jsonrpc.RequestId | None = None) -> None:
        """A JSON text read from the server, for the session. ``origin``: the request
        whose own response stream carried it (Streamable HTTP), if any."""

    def deliver_listen(self, rid: jsonrpc.RequestId, data: bytes, now: float) -> None:
        """A message read on the stream of listen request ``rid``."""

    def diagnostic(self, level: str, message: str, deprecation: str = "") -> None: ...

    def drain(self, now: float) -> None:
        """Route what was delivered so far, so it is reported before what follows."""

    def send_internal(
        self,
        method: str,
        *,
        now: float,
        timeout: float | None,
        done: Callable[[bool, float], None],
    ) -> None:
        """A request of the transport's own (keep-alive ping); ``done(ok, now)`` gets
        its outcome. Only while ready."""

    # ------------------------------------------------------------ what the strategy learnt

    def usable(self, now: float) -> None:
        """The transport can carry messages: the era decision and handshake start."""

    def ready(self, now: float) -> None:
        """The handshake's transport-level wait is over (``handshake_done`` said no)."""

    def lost(self, error: MCPError, now: float) -> None:
        """The transport went away on its own."""

    def session_expired(self, error: MCPError, now: float) -> None:
        """HTTP 404 to the session id: a new session starts on the same transport."""

    def connect_failed(self, error: MCPError, now: float) -> None:
        """The handshake cannot complete."""

    def attempt_failed(self, rid: jsonrpc.RequestId, error: MCPError, now: float) -> None:
        """The attempt ``rid`` failed (an HTTP status, a broken exchange or stream)."""

    def expire(self, now: float) -> None:
        """A request outlived its deadline: expire what is due now."""


class Outgoing:
    """One encoded message to carry, tagged by the connection when it is a request
    (so no transport ever has to parse outgoing bytes to know what they are). Made per
    message and internal to the machine: plain attributes, set once.

    ``headers``: a 2026-07-28 request over HTTP: its own headers
    (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``, the
    configured ones), computed by the connection from the params it built (LIFE-11,
    HDR-1, HDR-6)."""

    __slots__ = ("data", "headers", "method", "rid")
    data: bytes
    rid: jsonrpc.RequestId | None
    method: str | None
    headers: tuple[tuple[str, str], ...] | None

    def __init__(
        self,
        data: bytes,
        rid: jsonrpc.RequestId | None = None,
        method: str | None = None,
        headers: tuple[tuple[str, str], ...] | None = None,
    ) -> None:
        self.data = data
        self.rid = rid
        self.method = method
        self.headers = headers

    def __repr__(self) -> str:
        return f"Outgoing(rid={self.rid!r}, method={self.method!r}, {len(self.data)} bytes)"


class Transport:
    """Default behaviour: what a transport without that feature does."""

    #: Every server message comes on one channel (stdio, WebSocket, the legacy SSE
    #: stream): a notification cannot name the request it relates to, so a call's
    #: log messages are told by there being one request in flight (``CallLog``).
    single_channel: bool = True

    def __init__(self, port: TransportPort) -> None:
        self.port = port

    # ------------------------------------------------------------ lifecycle

    def capabilities(self, caps: dict[str, Any]) -> dict[str, Any]:
        """The client capabilities this transport can honour."""
        return caps

    def open(self, now: float) -> None:
        """Ask the driver to open the transport."""
        raise NotImplementedError

    def opened(self, now: float) -> None:
        """The driver opened it. Call ``port.usable(now)`` once messages can flow."""
        self.port.usable(now)

    def negotiated(self, info: ServerInfo) -> None:
        """``initialize`` was answered with ``info`` (before anything else is sent)."""

    def handshake_done(self, info: ServerInfo, now: float) -> bool:
        """``initialize`` was answered; True if requests may flow at once (else the
        transport calls ``port.ready(now)`` later)."""
        return True

    def reset(self) -> None:
        """The connection is torn down: forget all transport state (abort exchanges)."""

    def headers_changed(self, headers: Mapping[str, str]) -> None:
        """The configured HTTP headers changed (``Connection.set_header``)."""

    def closing(self, now: float) -> None:
        """``close()``: the last messages were handed over; say goodbye (DELETE)."""

    def transmit(self, messages: list[Outgoing], now: float) -> None:
        raise NotImplementedError

    def attempt_ended(self, rid: jsonrpc.RequestId, ok: bool, now: float | None = None) -> None:
        """The attempt ``rid`` ended (answered, failed or timed out); ``now``: when it
        was answered (the answer's arrival)."""

    # ------------------------------------------------------------ time

    #: Whether :meth:`next_deadline` can return a time, and :meth:`attempt_ended` does
    #: anything: the machine's hot path (one call and its answer) skips both otherwise.
    timed = False

    def next_deadline(self) -> float | None:
        return None

    def handle_timeout(self, now: float) -> None:
        pass

    # ------------------------------------------------------------ inputs (defaults refuse)

    def _wrong(self, what: str) -> LocalProtocolError:
        return LocalProtocolError(f"{what} does not apply to a {self.port.config.type} transport")

    def receive_data(self, data: bytes, now: float) -> None:
        raise self._wrong("receive_data")

    def receive_eof(self, now: float, detail: str) -> None:
        raise self._wrong("receive_eof")

    def get_buffer(self, size: int) -> memoryview:
        raise self._wrong("get_buffer")

    def buffer_updated(self, nbytes: int, now: float) -> None:
        raise self._wrong("buffer_updated")

    def exchange_head(
        self, xid: int, status: int, headers: list[tuple[str, str]], now: float
    ) -> None:
        raise self._wrong("exchange_head")

    def exchange_data(self, xid: int, data: bytes, now: float) -> None:
        raise self._wrong("exchange_data")

    def exchange_end(self, xid: int, now: float) -> None:
        raise self._wrong("exchange_end")

    def exchange_failed(self, xid: int, failure: ExchangeFailure, now: float) -> None:
        raise self._wrong("exchange_failed")

    def wants_exchange(self, xid: int) -> bool:
        return False
