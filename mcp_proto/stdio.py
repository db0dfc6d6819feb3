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


# Buffer capacity a framer keeps once its lines are consumed. Reusing the same memory
# for the next message saves the page faults of allocating it again (about as costly
# as the copy itself for a 1 MiB message); a buffer grown past this by a larger
# message is released instead, so an idle framer holds at most this much.
_KEEP = 4 << 20
# The largest read :meth:`LineFramer.whole_lines` splits at once (a pipe read's usual
# size); larger ones go through the buffer, which copies each line once.
_SPLIT_MAX = 65536


class LineFramer:
    """Split a byte stream into lines, with a bound on the length of any one line.

    Bytes go in with ``receive_data(data)``, or without a copy by reading straight
    into ``get_buffer(size)`` and reporting the count with ``buffer_updated(n)`` (the
    shape of asyncio's ``BufferedProtocol``). An empty ``receive_data`` or
    ``buffer_updated(0)`` marks end of input. ``next_line()`` returns one line (without
    its terminator; a trailing ``\\r`` is dropped too), :data:`NEED_DATA`, or an
    :class:`EOF` instance. A final unterminated line is returned before EOF. Blank lines
    are skipped. With ``decode=True`` a line that is valid UTF-8 comes back as ``str``
    (decoded straight from the buffer, a leading BOM dropped), saving a copy of every
    message; a line that is not comes back as ``bytes`` for the JSON-RPC decoder to
    report.

    Raises :class:`~mcp_proto.errors.LineTooLongError` from ``next_line`` once the
    current line grows past ``max_line_size`` bytes; the framer is then unusable (the
    stream has lost its framing: the shell drops the connection).
    """

    def __init__(self, max_line_size: int, *, decode: bool = False) -> None:
        self._max = max_line_size
        self._decode = decode
        # _buf[_start:_end] is unread input; _buf[_end:] is spare capacity.
        self._buf = bytearray()
        self._start = 0  # where the current (unreturned) line begins in _buf
        self._end = 0
        self._scanned = 0  # bytes from _start already known to hold no newline
        self._eof = False
        self._failed = False

    def _make_room(self, size: int) -> int:
        """Ensure ``size`` bytes of capacity after the unread input; return its end."""
        buf = self._buf
        if self._start == self._end:
            # Everything was consumed (the common case): start over at the front.
            self._start = self._end = 0
            if len(buf) > _KEEP:
                self._buf = buf = bytearray()
        elif len(buf) - self._end < size and self._start:
            # Move the unread tail to the front. It is moved at most once per line
            # before that line is returned (afterwards _start stays 0), so O(n) overall.
            unread = self._end - self._start
            with memoryview(buf) as view:
                view[:unread] = view[self._start : self._end]
            self._start, self._end = 0, unread
        short = size - (len(buf) - self._end)
        if short > 0:
            buf += bytes(short)
        return self._end

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        if self._eof and data:
            raise RuntimeError("data received after EOF")
        if not data:
            self._eof = True
            return
        size = len(data)
        end = self._make_room(size)
        self._buf[end : end + size] = data
        self._end = end + size

    def whole_line(self, data: bytes) -> bytes | str | None:
        """``data`` as the line it holds when it is exactly one newline-terminated line
        within ``max_line_size`` and nothing is buffered (one read of one message: the
        usual case on stdio), without copying it through the buffer; ``None`` otherwise
        (feed it to :meth:`receive_data`). The line is as :meth:`next_line` would
        return it; a blank one comes back empty (``""``/``b""``: nothing to deliver)."""
        n = len(data)
        if (
            type(data) is not bytes
            or not n
            or n - 1 > self._max
            or self._start != self._end
            or self._eof
            or self._failed
            or data.find(b"\n") != n - 1
        ):
            return None
        end = n - 1
        if end and data[end - 1] == 13:  # CRLF: drop the CR too
            end -= 1
        line = _line(memoryview(data)[:end], self._decode)
        return line if line and not line.isspace() else line[:0]

    def whole_lines(self, data: bytes) -> list[bytes | str] | None:
        """The lines of ``data`` when it is several newline-terminated lines, each within
        ``max_line_size``, read while nothing is buffered (a read that caught several
        answers: concurrent calls), split at once instead of scanned one by one;
        ``None`` otherwise (feed it to :meth:`receive_data`). The lines are as
        :meth:`next_line` would return them, blank ones left out. Small reads only: a
        large line would be copied twice (split, then decoded), not once."""
        if (
            type(data) is not bytes
            or len(data) > _SPLIT_MAX
            or self._start != self._end
            or self._eof
            or self._failed
            or not data.endswith(b"\n")
        ):
            return None
        if len(data) > self._max and max(map(len, data.split(b"\n"))) > self._max:
            return None  # next_line raises at that line, after the ones before it
        if self._decode:
            try:
                # All of it at once (the usual case: UTF-8 throughout).
                text = str(data, "utf-8")
            except UnicodeDecodeError:
                pass  # line by line: the lines that are not UTF-8 stay bytes
            else:
                lines = text.split("\n")
                lines.pop()  # "": after the last newline
                if "\r" in text:  # CRLF: drop the CR too
                    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
                if "\ufeff" in text:  # a BOM leading a line, as _text drops it
                    lines = [line[1:] if line.startswith("\ufeff") else line for line in lines]
                return [line for line in lines if line and not line.isspace()]
        parts = data.split(b"\n")
        parts.pop()
        out = (_line(part[:-1] if part.endswith(b"\r") else part, self._decode) for part in parts)
        return [line for line in out if line and not line.isspace()]

    def get_buffer(self, size: int) -> memoryview:
        """A writable view of at least ``size`` bytes to read the next input into. Release
        it (``with`` or ``.release()``) before calling ``buffer_updated``."""
        if self._eof:
            raise RuntimeError("data received after EOF")
        end = self._make_room(size)
        with memoryview(self._buf) as view:
            return view[end:]

    def buffer_updated(self, nbytes: int) -> None:
        """``nbytes`` were written into the last ``get_buffer`` view (0: end of input)."""
        if nbytes == 0:
            self._eof = True
            return
        if nbytes < 0 or self._end + nbytes > len(self._buf):
            raise ValueError(f"buffer_updated({nbytes}) exceeds the buffer handed out")
        self._end += nbytes

    def only_line(self) -> bytes | str | None:
        """The unread input as the line it holds when it is exactly one newline-terminated
        line within ``max_line_size``, scanned from its start (one read into
        :meth:`get_buffer` of one message: the usual case on stdio), consumed and
        returned without the scanning :meth:`next_line` does; ``None`` otherwise (call
        :meth:`next_line`, which then sees the input untouched). The line is as
        :meth:`next_line` would return it; a blank one comes back empty (``""``/``b""``:
        nothing to deliver)."""
        start, end = self._start, self._end
        buf = self._buf
        if self._scanned or end <= start or buf[end - 1] != 10 or self._failed:
            return None
        idx = end - 1
        if idx - start > self._max or buf.find(b"\n", start, idx) >= 0:
            return None  # too long (next_line raises), or more than one line
        self._start = end
        if idx > start and buf[idx - 1] == 13:  # CRLF: drop the CR too
            idx -= 1
        line = self._extract(start, idx)
        return line if line and not line.isspace() else line[:0]

    @property
    def buffered(self) -> int:
        """Bytes held that have not been returned as lines yet."""
        return self._end - self._start

    def _reset(self) -> None:
        self._buf = bytearray()
        self._start = self._end = self._scanned = 0

    def next_line(self) -> bytes | str | type[NEED_DATA] | EOF:
        if self._failed:
            raise LineTooLongError("stdio framing was lost after an oversized line")
        buf = self._buf
        while True:
            begin = self._start + self._scanned
            idx = buf.find(b"\n", begin, self._end)
            if idx < 0:
                self._scanned = self._end - self._start
                if self._scanned > self._max:
                    self._failed = True
                    self._reset()
                    raise LineTooLongError(
                        f"a stdio message exceeded max_line_size ({self._max} bytes)"
                    )
                if self._eof:
                    if self._scanned == 0:
                        return _EOF
                    start, end = self._start, self._end
                    if buf[end - 1] == 13:  # as for a terminated line: one CR only
                        end -= 1
                    last = self._extract(start, end)
                    self._reset()
                    if last and not last.isspace():
                        return last
                    return _EOF
                return NEED_DATA
            if idx - self._start > self._max:
                self._failed = True
                self._reset()
                raise LineTooLongError(
                    f"a stdio message exceeded max_line_size ({self._max} bytes)"
                )
            start, end = self._start, idx
            self._start = idx + 1
            self._scanned = 0
            if end > start and buf[end - 1] == 13:  # CRLF: drop the CR too
                end -= 1
            if end == start:
                continue
            line = self._extract(start, end)
            # isspace() stops at the first non-space character: cheap on huge lines.
            if line and not line.isspace():
                return line

    def _extract(self, start: int, end: int) -> bytes | str:
        # One copy out of the buffer (slicing the bytearray and then converting would
        # make two: each costs page faults on a large line).
        with memoryview(self._buf) as view:
            part = view[start:end]
            try:
                return _line(part, self._decode)
            finally:
                part.release()


def _line(part: memoryview | bytes, decode: bool) -> bytes | str:
    """A line's bytes as the framer hands them out: text when decoding, unless they are
    not UTF-8 (then bytes, for ``jsonrpc.decode`` to report)."""
    if decode:
        try:
            return _text(part)
        except UnicodeDecodeError:
            pass
    return bytes(part)


def _text(data: memoryview | bytes) -> str:
    # MCP messages are UTF-8 (2025-11-25, Transports); a leading BOM is tolerated, as
    # the "utf-8-sig" decoding of jsonrpc.decode does for bytes.
    text = str(data, "utf-8")
    return text[1:] if text.startswith("\ufeff") else text
