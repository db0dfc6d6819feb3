"""A child's stderr cut into bounded lines, without I/O (both shells' stderr readers)."""

from __future__ import annotations

__all__ = ["BoundedLines"]


class BoundedLines:
    """A child's stderr cut into lines of at most ``cap`` bytes, without I/O: chunks in,
    whole lines out. A longer line gives its first ``cap`` bytes and the rest is skipped
    to its end, so what is held stays under ``cap`` plus one chunk whatever the child
    writes (STDIO-5). At the end of the stream, an unterminated last line still counts."""

    __slots__ = ("_buf", "_cap", "_skipping")

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self._buf = bytearray()
        self._skipping = False  # inside a line already cut

    def feed(self, chunk: bytes | bytearray) -> list[bytes]:
        """The lines ``chunk`` completes (without their newline)."""
        buf, cap = self._buf, self._cap
        buf += chunk
        out: list[bytes] = []
        start = 0
        while (idx := buf.find(b"\n", start)) >= 0:
            if not self._skipping:
                out.append(bytes(buf[start : min(idx, start + cap)]))
            self._skipping = False
            start = idx + 1
        del buf[:start]
        if len(buf) > cap:
            if not self._skipping:
                out.append(bytes(buf[:cap]))
            self._skipping = True
            buf.clear()
        return out

    def end(self) -> list[bytes]:
        """The stream ended: its unterminated last line, if any."""
        buf = self._buf
        last = [bytes(buf[: self._cap])] if buf and not self._skipping else []
        buf.clear()
        self._skipping = False
        return last
