"""The stdio transport's framing: newline-delimited JSON-RPC messages.

MCP stdio (2025-11-25, Transports § stdio): messages are delimited by newlines and MUST
NOT contain embedded newlines. The framer works on bytes (decoding happens per message),
keeps a bounded buffer and resumes its newline search where the last one stopped, so a
long line arriving in many chunks costs O(n), not O(n²) (compare h11's ReceiveBuffer).
"""

from __future__ import annotations

from typing import Final

from ._util import NEED_DATA
from .errors import LineTooLongError

__all__ = ["EOF", "LineFramer", "frame"]


class EOF:
    """Sentinel returned by :meth:`LineFramer.next_line` once input has ended."""


_EOF: Final = EOF()


def frame(message: bytes) -> bytes:
    """Frame one encoded message for stdio."""
    return message + b"\n"


class LineFramer:
    """Split a byte stream into lines, with a bound on the length of any one line.

    ``receive_data(b"")`` marks end of input. ``next_line()`` returns one line (without
    its terminator; a trailing ``\\r`` is dropped too), :data:`NEED_DATA`, or an
    :class:`EOF` instance. A final unterminated line is returned before EOF. Blank lines
    are skipped.

    Raises :class:`~mcp_proto.errors.LineTooLongError` from ``next_line`` once the
    current line grows past ``max_line_size`` bytes; the framer is then unusable (the
    stream has lost its framing: the shell drops the connection).
    """

    def __init__(self, max_line_size: int) -> None:
        self._max = max_line_size
        self._buf = bytearray()
        self._start = 0  # where the current (unreturned) line begins in _buf
        self._scanned = 0  # bytes from _start already known to hold no newline
        self._eof = False
        self._failed = False

    def receive_data(self, data: bytes) -> None:
        if self._eof and data:
            raise RuntimeError("data received after EOF")
        if not data:
            self._eof = True
            return
        # Compact lazily: dropping consumed bytes only once they are the bulk of the
        # buffer keeps each byte moved O(1) times on average.
        if self._start and self._start * 2 >= len(self._buf):
            del self._buf[: self._start]
            self._start = 0
        self._buf += data

    @property
    def buffered(self) -> int:
        """Bytes held that have not been returned as lines yet."""
        return len(self._buf) - self._start

    def next_line(self) -> bytes | type[NEED_DATA] | EOF:
        if self._failed:
            raise LineTooLongError("stdio framing was lost after an oversized line")
        while True:
            begin = self._start + self._scanned
            idx = self._buf.find(b"\n", begin)
            if idx < 0:
                self._scanned = len(self._buf) - self._start
                if self._scanned > self._max:
                    self._failed = True
                    self._buf = bytearray()
                    self._start = self._scanned = 0
                    raise LineTooLongError(
                        f"a stdio message exceeded max_line_size ({self._max} bytes)"
                    )
                if self._eof:
                    if self._scanned == 0:
                        return _EOF
                    line = bytes(self._buf[self._start :])
                    self._buf = bytearray()
                    self._start = self._scanned = 0
                    if line.endswith(b"\r"):  # as for a terminated line: one CR only
                        line = line[:-1]
                    if line and not line.isspace():
                        return line
                    return _EOF
                return NEED_DATA
            if idx - self._start > self._max:
                self._failed = True
                raise LineTooLongError(
                    f"a stdio message exceeded max_line_size ({self._max} bytes)"
                )
            line = bytes(self._buf[self._start : idx])
            self._start = idx + 1
            self._scanned = 0
            if line.endswith(b"\r"):
                line = line[:-1]
            # isspace() stops at the first non-space byte: cheap even on huge lines.
            if line and not line.isspace():
                return line
