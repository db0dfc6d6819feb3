"""A child's stderr cut into bounded lines and logged, without I/O (both shells'
stderr readers)."""

from __future__ import annotations

import logging
from typing import Any, Final

from .notices import child_logger

__all__ = ["PIPE_READ", "BoundedLines", "StderrLog"]

#: The most bytes one read of a server process's pipe takes.
PIPE_READ: Final = 65536


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


class StderrLog:
    """A server process's stderr, in chunks as read, to the ``stderr`` child of the
    server's logger at INFO, one record per line, bounded (STDIO-5: :class:`BoundedLines`)."""

    __slots__ = ("_lines", "_log", "_name")

    def __init__(self, logger: Any, name: str, max_line: int) -> None:
        self._log = child_logger(logger, "stderr")  # (a LoggerAdapter has no getChild)
        self._lines = BoundedLines(max_line)
        self._name = name

    def feed(self, chunk: bytes | bytearray) -> bool:
        """Log the lines ``chunk`` completes (``b""``: the end, with an unterminated last
        line); False at the end."""
        log = self._log
        for line in self._lines.feed(chunk) if chunk else self._lines.end():
            if log.isEnabledFor(logging.INFO):
                log.info("[%s] %s", self._name, line.decode("utf-8", "replace"))
        return bool(chunk)
