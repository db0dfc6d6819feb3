"""An incremental Server-Sent Events parser (WHATWG HTML, § 9.2 "Server-sent events").

Used for Streamable HTTP response and GET streams and for the deprecated HTTP+SSE
transport. Bytes go in as they arrive; complete events come out. The parser:

* accepts every line ending (CRLF, LF, CR — a CR at the end of a chunk waits to see
  whether an LF follows), strips one leading UTF-8 BOM, ignores comments (``:`` lines),
  joins multi-line ``data``, and tracks ``event``, ``id`` and ``retry``;
* resumes its line search where it stopped, so an event arriving in many small chunks
  costs O(n) (a quadratic rescan would let a slow drip of bytes burn CPU);
* bounds what it holds: an event (its data plus the current unterminated line) larger
  than ``max_event_size`` raises :class:`~mcp_proto.errors.ResponseTooLargeError`
  (seeds, "Treating the Server as Untrusted": SSE streams row).
"""

from __future__ import annotations

import re
from typing import Final

import attrs

from ._util import NEED_DATA
from .errors import ResponseTooLargeError

__all__ = ["SSEEvent", "SSEParser", "is_retainable_event_id"]

_LINE_END: Final = re.compile(rb"[\r\n]")
_BOM: Final = b"\xef\xbb\xbf"
#: Longest event id the client keeps and echoes in ``Last-Event-ID`` (UT-4).
MAX_EVENT_ID_LENGTH: Final = 1024


@attrs.frozen
class SSEEvent:
    """One dispatched event. ``id`` is the stream's last event id after this event
    (``None`` if none was ever set); ``retry`` is set only on events that carried a
    valid ``retry`` field since the previous event (milliseconds)."""

    event: str
    data: str
    id: str | None
    retry: int | None = None


def is_retainable_event_id(event_id: str) -> bool:
    """An id the client may echo in ``Last-Event-ID`` (UT-4): bounded length, printable
    ASCII only, so a server cannot inject header bytes or grow requests without bound."""
    return 0 < len(event_id) <= MAX_EVENT_ID_LENGTH and all(0x20 <= ord(c) < 0x7F for c in event_id)


class SSEParser:
    """Parse one SSE stream incrementally.

    ``receive_data(chunk)`` feeds bytes (``b""`` marks the end of the stream);
    ``next_event()`` returns an :class:`SSEEvent` or :data:`NEED_DATA`. At the end of
    the stream an unterminated event is discarded, as the standard requires.
    """

    def __init__(self, max_event_size: int = 32 * 1024 * 1024) -> None:
        self._max = max_event_size
        self._buf = bytearray()
        self._pos = 0  # start of the current (incomplete) line in _buf
        self._first = True  # BOM check pending
        self._eof = False
        self._data: list[str] = []
        self._data_size = 0
        self._event = ""
        self._last_id: str | None = None
        self._retry: int | None = None
        self._ready: list[SSEEvent] = []

    @property
    def last_event_id(self) -> str | None:
        return self._last_id

    def receive_data(self, data: bytes) -> None:
        if not data:
            self._eof = True
        else:
            if self._pos and self._pos * 2 >= len(self._buf):
                del self._buf[: self._pos]
                self._pos = 0
            self._buf += data
        self._parse()

    def next_event(self) -> SSEEvent | type[NEED_DATA]:
        if self._ready:
            return self._ready.pop(0)
        return NEED_DATA

    def _parse(self) -> None:
        if self._first:
            if len(self._buf) < len(_BOM) and _BOM.startswith(bytes(self._buf)) and not self._eof:
                return  # could still become a BOM
            if self._buf.startswith(_BOM):
                del self._buf[: len(_BOM)]
            self._first = False
        buf = self._buf
        while True:
            match = _LINE_END.search(buf, self._pos)
            if match is None:
                pending = len(buf) - self._pos
                if self._data_size + pending > self._max:
                    raise ResponseTooLargeError(
                        f"an SSE event exceeded max_event_size ({self._max} bytes)"
                    )
                if self._eof:
                    # End of stream: an unterminated line and event are discarded.
                    self._pos = len(buf)
                return
            end = match.start()
            if buf[end] == 0x0D:  # CR: part of CRLF if an LF follows
                if end + 1 == len(buf) and not self._eof:
                    # Can't tell yet; wait for the next chunk (but keep the bound).
                    if self._data_size + (end - self._pos) > self._max:
                        raise ResponseTooLargeError(
                            f"an SSE event exceeded max_event_size ({self._max} bytes)"
                        )
                    return
                next_pos = end + 2 if end + 1 < len(buf) and buf[end + 1] == 0x0A else end + 1
            else:
                next_pos = end + 1
            line = bytes(buf[self._pos : end])
            self._pos = next_pos
            self._line(line.decode("utf-8", "replace"))

    def _line(self, line: str) -> None:
        if not line:
            self._dispatch()
            return
        if line.startswith(":"):
            return  # comment
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
            self._data_size += len(value) + 1
            if self._data_size > self._max:
                raise ResponseTooLargeError(
                    f"an SSE event exceeded max_event_size ({self._max} bytes)"
                )
        elif field == "event":
            self._event = value
        elif field == "id":
            if "\x00" not in value:
                self._last_id = value
        elif field == "retry":
            if value.isascii() and value.isdigit():
                self._retry = int(value)
        # Unknown fields are ignored (WHATWG).

    def _dispatch(self) -> None:
        if not self._data:
            # No data: reset the event type, dispatch nothing; a bare retry/id still
            # matters, so it is reported on an empty "event" of its own.
            if self._retry is not None:
                self._ready.append(SSEEvent("", "", self._last_id, self._retry))
            self._event = ""
            self._retry = None
            return
        self._ready.append(
            SSEEvent(self._event or "message", "\n".join(self._data), self._last_id, self._retry)
        )
        self._data = []
        self._data_size = 0
        self._event = ""
        self._retry = None
