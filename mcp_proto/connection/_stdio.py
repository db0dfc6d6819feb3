"""The stdio transport strategy: newline-delimited JSON-RPC over a child's pipes.

2025-11-25 Transports § stdio: messages are delimited by newlines and MUST NOT contain
embedded newlines. Bytes from stdout go through a bounded :class:`LineFramer`; a line
longer than the bound loses the framing, so the connection is dropped
(``LineTooLongError``) and the next call starts a new process. The end of stdout is the
end of the connection.

Lines read before the driver reports the process started (``transport_opened``: the
shells start the reader first, so that nothing is missed, and a wrapper script's
``echo banner; exec server`` writes within the fork) are the server's first output, in
order: they are held and delivered right after the client's first request is queued,
as if they had waited in the pipe (their quote is the only clue when a connect fails:
issue 24 C, tests/proto/test_connection_stdio.py).
"""

from __future__ import annotations

from collections.abc import Callable

from .._util import NEED_DATA
from ..errors import ConnectionError, LineTooLongError
from ..stdio import LineFramer
from ._transport import Outgoing, Transport, TransportPort
from .frames import OpenTransport, Write

__all__ = ["StdioTransport"]

# What is held before the process is reported started, at most: a Linux pipe's buffer
# (what would have waited had the reader started after the report). The first line is
# always held, whatever its size (the framer bounds it).
EARLY_BUDGET = 64 * 1024


class StdioTransport(Transport):
    _framer: LineFramer | None = None
    #: Lines read before ``opened`` (None once opened), their length, and the end of
    #: the output if it came before ``opened`` too (its detail).
    _early: list[bytes | str] | None = None
    _early_size: int = 0
    _early_eof: str | None = None
    _early_dropped = False
    _generation = 0  # bumped by reset(): what opened() delivers may end the connection

    def __init__(self, port: TransportPort) -> None:
        super().__init__(port)
        # Where a complete line goes: held before ``opened``, then the session's.
        self._sink: Callable[[bytes | str], None] = port.deliver

    def open(self, now: float) -> None:
        port = self.port
        self._framer = LineFramer(port.max_line_size, decode=True)
        self._early, self._early_size, self._early_eof = [], 0, None
        self._early_dropped = False
        self._sink = self._hold
        port.emit(OpenTransport())

    def opened(self, now: float) -> None:
        early, eof = self._early, self._early_eof
        port = self.port
        self._early, self._early_eof, self._sink = None, None, port.deliver
        port.usable(now)  # the session exists and its first request is queued
        generation = self._generation
        for line in early or ():
            port.deliver(line)
            if self._generation != generation:
                return  # delivering ended this connection
        if eof is not None:
            self._lost(now, eof)

    def reset(self) -> None:
        self._framer = None
        self._early = self._early_eof = None
        self._sink = self.port.deliver
        self._generation += 1

    def _hold(self, line: bytes | str) -> None:
        early = self._early
        assert early is not None  # _sink is _hold only between open() and opened()
        if early and self._early_size + len(line) > EARLY_BUDGET:
            if not self._early_dropped:
                self._early_dropped = True  # said once
                self.port.diagnostic(
                    "warning",
                    f"server {self.port.name!r} wrote more than {EARLY_BUDGET} bytes before "
                    "it was reported started; the rest of that is dropped",
                )
            return
        early.append(line)
        self._early_size += len(line)

    def transmit(self, messages: list[Outgoing], now: float) -> None:
        # One frame per flush: the driver writes it with one writev.
        self.port.emit(Write([m.data for m in messages]))

    def receive_data(self, data: bytes, now: float) -> None:
        framer = self._framer
        if framer is None or not data:
            if framer is not None:
                self.receive_eof(now, "")
            return
        line = framer.whole_line(data)
        if line is not None:
            if line:
                self._sink(line)
            return
        lines = framer.whole_lines(data)
        if lines is None:
            framer.receive_data(data)
            self._lines(framer, now)
            return
        deliver = self._sink
        for line in lines:
            deliver(line)
            if self._framer is not framer:
                return  # delivering ended this connection

    def get_buffer(self, size: int) -> memoryview:
        framer = self._framer
        if framer is None:
            # Nothing is open: hand out scratch space; buffer_updated ignores it.
            return memoryview(bytearray(size))
        return framer.get_buffer(size)

    def buffer_updated(self, nbytes: int, now: float) -> None:
        framer = self._framer
        if framer is None:
            return
        if nbytes == 0:
            self.receive_eof(now, "")
            return
        framer.buffer_updated(nbytes)
        line = framer.only_line()  # one read, one message: no line scanning
        if line is None:
            self._lines(framer, now)
        elif line:
            self._sink(line)

    def receive_eof(self, now: float, detail: str) -> None:
        framer = self._framer
        if framer is None:
            return
        framer.receive_data(b"")
        if not self._lines(framer, now):
            return  # the framing failed first: already handled
        if self._early is not None:
            # Reported after what came before it (opened); nothing is read after it.
            self._early_eof, self._framer = detail, None
            return
        self._lost(now, detail)

    def _lost(self, now: float, detail: str) -> None:
        port = self.port
        suffix = f" ({detail})" if detail else ""
        port.lost(ConnectionError(f"server {port.name!r} closed its output{suffix}"), now)

    def _lines(self, framer: LineFramer, now: float) -> bool:
        """Deliver every complete line; False if the framing was lost (and handled)."""
        port = self.port
        try:
            while True:
                line = framer.next_line()
                if line is NEED_DATA or not isinstance(line, (bytes, str)):
                    return True
                self._sink(line)
                if self._framer is not framer:
                    return False  # delivering ended this connection
        except LineTooLongError as exc:
            self._framer = None
            port.drain(now)  # the lines before it come first
            port.diagnostic("warning", f"server {port.name!r}: {exc}; dropping the connection")
            port.lost(exc, now)
            return False
