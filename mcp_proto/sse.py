"""An incremental Server-Sent Events parser (WHATWG HTML, § 9.2 "Server-sent events").

Used for Streamable HTTP response and GET streams and for the deprecated HTTP+SSE
transport. Bytes go in as they arrive; complete events come out. The parser:

* accepts every line ending (CRLF, LF, CR — a line ending in CR is complete at once; an
  LF arriving next, even in the next chunk, is the rest of that CRLF), strips one
  leading UTF-8 BOM, ignores comments (``:`` lines), joins multi-line ``data``, and
  tracks ``event``, ``id`` and ``retry``;
* resumes its line search where it stopped, so an event arriving in many small chunks
  costs O(n) (a quadratic rescan would let a slow drip of bytes burn CPU);
* bounds what it holds: an event (its field lines plus the current unterminated line)
  larger than ``max_event_size`` raises :class:`~mcp_proto.errors.ResponseTooLargeError`
  (seeds, "Treating the Server as Untrusted": SSE streams row). Consumed bytes are
  dropped on the next ``receive_data``, so the buffer holds at most the current
  event's unterminated line plus the newest chunk.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Final

from ._record import Record
from ._util import NEED_DATA
from .errors import ResponseTooLargeError

__all__ = ["SSEEvent", "SSEParser", "is_retainable_event_id"]

_LINE_END: Final = re.compile(rb"[\r\n]")
_BOM: Final = b"\xef\xbb\xbf"
#: Longest event id the client keeps and echoes in ``Last-Event-ID`` (UT-4).
MAX_EVENT_ID_LENGTH: Final = 1024
# ``retry`` values longer than this many digits (after leading zeros) are clamped: int()
# of a >4300-digit string raises ValueError, and no delay needs more than 15 digits of ms.
_MAX_RETRY_DIGITS: Final = 15


class SSEEvent(Record):
    """One dispatched event. ``id`` is the stream's last event id after this event
    (``None`` if none was ever set); ``retry`` is set only on events that carried a
    valid ``retry`` field since the previous event (milliseconds)."""

    __slots__ = ("data", "event", "id", "retry")
    event: str
    data: str
    id: str | None
    retry: int | None

    def __init__(self, event: str, data: str, id: str | None, retry: int | None = None) -> None:
        _set = object.__setattr__  # (frozen: Record refuses setattr)
        _set(self, "event", event)
        _set(self, "data", data)
        _set(self, "id", id)
        _set(self, "retry", retry)


def is_retainable_event_id(event_id: str) -> bool:
    """An id the client may echo in ``Last-Event-ID`` (UT-4): bounded length, printable
    ASCII only, so a server cannot inject header bytes or grow requests without bound."""
    return 0 < len(event_id) <= MAX_EVENT_ID_LENGTH and all(0x20 <= ord(c) < 0x7F for c in event_id)


def _too_large(limit: int) -> ResponseTooLargeError:
    return ResponseTooLargeError(f"an SSE event exceeded max_event_size ({limit} bytes)")


class SSEParser:
    """Parse one SSE stream incrementally.

    ``receive_data(chunk)`` feeds bytes; ``next_event()`` returns an :class:`SSEEvent`
    or :data:`NEED_DATA`. ``b""`` (the end of the stream, by h11's convention) needs no
    handling: an unterminated event is discarded at the end of the stream, as the
    standard requires, simply by never being dispatched. So an empty chunk in mid-stream
    (a gzip decoder that had nothing to output yet) is harmless.

    Raises:
        ResponseTooLargeError: from ``receive_data`` when an event outgrows
            ``max_event_size``; the stream must then be abandoned.
    """

    def __init__(self, max_event_size: int = 32 * 1024 * 1024) -> None:
        # A bound below a BOM's length would make the bound depend on how the stream's
        # first bytes are chunked (a BOM prefix is not content until it is not a BOM).
        if max_event_size < len(_BOM):
            raise ValueError(f"max_event_size must be at least {len(_BOM)} bytes")
        self._max = max_event_size
        self._buf = bytearray()
        self._pos = 0  # start of the current (incomplete) line in _buf
        # Where the next line-end search starts: buf[_pos:_scan] holds no CR or LF.
        self._scan = 0
        self._first = True  # BOM check pending
        self._skip_lf = False  # the last line ended in CR: a following LF belongs to it
        # WHATWG "data buffer": each data line appends its value and an LF. One bytearray,
        # not a list of lines: a list costs ~40 bytes per "data:x" line, 5x the cap.
        self._data = bytearray()
        self._size = 0  # bytes of the current event's field lines (never above _max)
        self._event = ""
        # WHATWG keeps a "last event ID buffer" (set by ``id`` fields) and copies it to
        # the "last event ID string" only when an event is dispatched, so the id of an
        # event cut off by the end of the stream is never reported (§ 9.2.6).
        self._id_buffer: str | None = None
        self._last_id: str | None = None
        self._retry: int | None = None  # retry field seen since the last dispatch
        self._reconnection_time: int | None = None
        self._ready: deque[SSEEvent] = deque()

    @property
    def last_event_id(self) -> str | None:
        """The id of the last dispatched event (WHATWG "last event ID string"), counting
        events that carried no data; ``None`` if no ``id`` was ever dispatched."""
        return self._last_id

    @property
    def retry(self) -> int | None:
        """The stream's reconnection time in ms: the last valid ``retry`` field, which
        takes effect as soon as its line is parsed (WHATWG § 9.2.6), even if the event
        around it is never completed. ``None`` if the server never sent one."""
        return self._reconnection_time

    def receive_data(self, data: bytes) -> None:
        if not data:
            return  # the end of the stream (or an empty chunk): nothing to do
        if self._pos:
            # Drop consumed lines. What is left is the unterminated tail, which lies in
            # the newest chunk (older bytes were already scanned), so this stays O(n).
            del self._buf[: self._pos]
            self._scan -= self._pos
            self._pos = 0
        self._buf += data
        self._parse()

    def next_event(self) -> SSEEvent | type[NEED_DATA]:
        if self._ready:
            return self._ready.popleft()
        return NEED_DATA

    def _parse(self) -> None:
        buf = self._buf
        if self._first:
            if len(buf) < len(_BOM) and _BOM.startswith(buf):
                return  # could still become a BOM (if the stream ends here: discarded)
            if buf.startswith(_BOM):
                self._pos = self._scan = len(_BOM)
            self._first = False
        while True:
            if self._skip_lf and self._pos < len(buf):
                self._skip_lf = False
                if buf[self._pos] == 0x0A:
                    self._pos += 1
                    self._scan = max(self._scan, self._pos)
            match = _LINE_END.search(buf, self._scan)
            if match is None:
                self._scan = len(buf)
                if self._size + (len(buf) - self._pos) > self._max:
                    raise _too_large(self._max)
                return
            end = match.start()
            line = buf[self._pos : end]  # one copy; bytearray has every method needed
            # A CR ends its line now (no waiting for the next chunk: an event ending in
            # CR CR must be dispatched at once); an LF right after it is skipped above.
            self._skip_lf = buf[end] == 0x0D
            self._pos = self._scan = end + 1
            self._line(line)

    def _line(self, line: bytearray) -> None:
        if not line:
            self._dispatch()
            return
        # The same test as for an unterminated line in _parse, so whether (and before
        # which event) the bound trips does not depend on how the stream was chunked.
        if self._size + len(line) > self._max:
            raise _too_large(self._max)
        if line.startswith(b":"):
            return  # comment
        self._size += len(line)
        field, sep, value = line.partition(b":")
        if sep and value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            self._data += value
            self._data += b"\n"
        elif field == b"event":
            self._event = value.decode("utf-8", "replace")
        elif field == b"id":
            if b"\x00" not in value:
                self._id_buffer = value.decode("utf-8", "replace")
        elif field == b"retry" and value.isdigit():
            # "If the field value consists of only ASCII digits" (bytes.isdigit: 0-9 only).
            digits = value.lstrip(b"0") or b"0"
            ms = int(digits) if len(digits) <= _MAX_RETRY_DIGITS else 10**_MAX_RETRY_DIGITS
            self._retry = self._reconnection_time = ms
        # Unknown fields are ignored (WHATWG).

    def _dispatch(self) -> None:
        # WHATWG "dispatch the event", step 1: the last event ID string takes the
        # buffer's value even if no event is dispatched (an id-only priming event).
        self._last_id = self._id_buffer
        retry, self._retry = self._retry, None
        data, self._data = self._data, bytearray()
        event, self._event = self._event, ""
        self._size = 0
        if not data:
            # Step 2, an empty data buffer: dispatch nothing. A bare retry still matters,
            # so it is reported on an empty "event" of its own.
            if retry is not None:
                self._ready.append(SSEEvent("", "", self._last_id, retry))
            return
        # Step 3: drop the final LF. Decoding the buffer at once equals decoding line by
        # line: LF is ASCII, so it ends any invalid sequence before it in both cases.
        text = data[:-1].decode("utf-8", "replace")
        self._ready.append(SSEEvent(event or "message", text, self._last_id, retry))
