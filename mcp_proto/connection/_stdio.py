"""The stdio transport strategy: newline-delimited JSON-RPC over a child's pipes.

2025-11-25 Transports § stdio: messages are delimited by newlines and MUST NOT contain
embedded newlines. Bytes from stdout go through a bounded :class:`LineFramer`; a line
longer than the bound loses the framing, so the connection is dropped
(``LineTooLongError``) and the next call starts a new process. The end of stdout is the
end of the connection.
"""

from __future__ import annotations

from .._util import NEED_DATA
from ..errors import ConnectionError, LineTooLongError
from ..stdio import LineFramer
from ._transport import Outgoing, Transport
from .frames import OpenTransport, Write

__all__ = ["StdioTransport"]


class StdioTransport(Transport):
    _framer: LineFramer | None = None

    def open(self, now: float) -> None:
        port = self.port
        self._framer = LineFramer(port.max_line_size, decode=True)
        port.emit(OpenTransport())

    def reset(self) -> None:
        self._framer = None

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
                self.port.deliver(line)
            return
        lines = framer.whole_lines(data)
        if lines is None:
            framer.receive_data(data)
            self._lines(framer, now)
            return
        port = self.port
        for line in lines:
            port.deliver(line)
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
        self._lines(framer, now)

    def receive_eof(self, now: float, detail: str) -> None:
        framer = self._framer
        if framer is None:
            return
        framer.receive_data(b"")
        if not self._lines(framer, now):
            return  # the framing failed first: already handled
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
                port.deliver(line)
                if self._framer is not framer:
                    return False  # delivering ended this connection
        except LineTooLongError as exc:
            self._framer = None
            port.drain(now)  # the lines before it come first
            port.diagnostic("warning", f"server {port.name!r}: {exc}; dropping the connection")
            port.lost(exc, now)
            return False
