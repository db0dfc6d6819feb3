"""The interface every transport strategy implements for :class:`Connection`.

A strategy turns the connection's outgoing messages into frames and the driver's
inputs into messages for the session; it owns the transport-level state (the framer,
HTTP exchanges, the session id, streams, keep-alive). It calls back into the
connection through the small set of ``_on_*`` / ``_deliver`` methods named here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import jsonrpc
from ..errors import LocalProtocolError
from ..session import ServerInfo

if TYPE_CHECKING:
    from ._machine import Connection
    from .frames import ExchangeFailure

__all__ = ["Outgoing", "Transport"]


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

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # ------------------------------------------------------------ lifecycle

    def capabilities(self, caps: dict[str, Any]) -> dict[str, Any]:
        """The client capabilities this transport can honour."""
        return caps

    def open(self, now: float) -> None:
        """Ask the driver to open the transport."""
        raise NotImplementedError

    def opened(self, now: float) -> None:
        """The driver opened it. Call ``conn._on_usable(now)`` once messages can flow."""
        self.conn._on_usable(now)

    def negotiated(self, info: ServerInfo) -> None:
        """``initialize`` was answered with ``info`` (before anything else is sent)."""

    def handshake_done(self, info: ServerInfo, now: float) -> bool:
        """``initialize`` was answered; True if requests may flow at once (else the
        transport calls ``conn._on_ready(now)`` later)."""
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
        return LocalProtocolError(f"{what} does not apply to a {self.conn.config.type} transport")

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
