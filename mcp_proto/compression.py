"""Bounded incremental gzip inflation for HTTP response bodies (SIZE-1, UT-1).

A small, highly compressed body (a "gzip bomb") must not exhaust memory: output is
produced a bounded slice at a time and the whole body is abandoned with
:class:`~mcp_proto.errors.ResponseTooLargeError` once it expands past
``max_decompressed_body_bytes`` (default 64 MiB).
"""

from __future__ import annotations

import zlib
from typing import Final

from .errors import RemoteProtocolError, ResponseTooLargeError

__all__ = ["DEFAULT_MAX_DECOMPRESSED_BODY_BYTES", "Inflater", "decoder_for"]

DEFAULT_MAX_DECOMPRESSED_BODY_BYTES: Final = 64 * 1024 * 1024
# Inflate at most this much per step: bounds the memory of a single decompress call
# (zlib holds up to twice a step while it assembles the step's bytes object).
_STEP: Final = 64 * 1024
# wbits 16+MAX_WBITS: expect a gzip header and trailer (RFC 1952).
_GZIP_WBITS: Final = 16 + zlib.MAX_WBITS


class Inflater:
    """Inflate a gzip stream chunk by chunk, never producing more than ``max_bytes``."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BODY_BYTES) -> None:
        self._max = max_bytes
        self._total = 0
        self._fed = False  # any compressed byte seen (an empty body is not "truncated")
        self._z = zlib.decompressobj(_GZIP_WBITS)

    @property
    def total(self) -> int:
        return self._total

    def feed(self, data: bytes) -> bytes:
        """Inflate ``data``; returns what it expanded to (possibly ``b""``).

        While inflating, at most ``max_bytes`` of output plus one step is held (the
        output is kept as a list of step-sized pieces: no growth slack); a result of
        more than one step is copied once, when it is joined for the return.

        Raises:
            ResponseTooLargeError: the body expanded past ``max_bytes``.
            RemoteProtocolError: the bytes are not gzip.
        """
        out: list[bytes] = []
        pending = data
        if data:
            self._fed = True
        while pending:
            if self._z.eof:
                # RFC 1952 § 2.2: "A gzip file consists of a series of 'members'":
                # bytes after a complete member must be the next member.
                self._z = zlib.decompressobj(_GZIP_WBITS)
            try:
                piece = self._z.decompress(pending, _STEP)
            except zlib.error as exc:
                raise RemoteProtocolError(f"malformed gzip body: {exc}") from None
            self._count(len(piece))
            out.append(piece)
            # At a member's end zlib keeps the rest of the input in unused_data; when the
            # step filled up, the unconsumed input is in unconsumed_tail.
            pending = self._z.unused_data if self._z.eof else self._z.unconsumed_tail
        return out[0] if len(out) == 1 else b"".join(out)

    def finish(self) -> bytes:
        """End of body: flush what is left; a truncated gzip stream is an error."""
        try:
            piece = self._z.flush()
        except zlib.error as exc:
            raise RemoteProtocolError(f"malformed gzip body: {exc}") from None
        self._count(len(piece))
        # zlib's flush() does not notice a stream that stopped early: check for the
        # member's end (its CRC-32 and ISIZE trailer were verified when it was read).
        if self._fed and not self._z.eof:
            raise RemoteProtocolError("truncated gzip body")
        return piece

    def _count(self, n: int) -> None:
        self._total += n
        if self._total > self._max:
            raise ResponseTooLargeError(
                "a compressed response expanded past max_decompressed_body_bytes "
                f"({self._max} bytes)"
            )


class _Identity:
    """An uncompressed body, still bounded (a JSON body must fit in memory at once;
    SSE bodies are bounded per event by the SSE parser instead)."""

    def __init__(self, max_bytes: int | None) -> None:
        self._max = max_bytes
        self.total = 0

    def feed(self, data: bytes) -> bytes:
        self.total += len(data)
        if self._max is not None and self.total > self._max:
            raise ResponseTooLargeError(f"a response body exceeded {self._max} bytes")
        return data

    def finish(self) -> bytes:
        return b""


def decoder_for(
    content_encoding: str | None, max_decompressed: int, *, max_plain: int | None = None
) -> Inflater | _Identity:
    """The body decoder for a ``Content-Encoding`` value (we only ask for gzip).

    ``max_decompressed`` bounds what a gzip body may expand to; ``max_plain`` (if set)
    bounds an uncompressed body. They are separate because the seeds promise that a
    large uncompressed payload is not refused by the gzip ceiling."""
    encoding = (content_encoding or "").strip().lower()
    if encoding in ("", "identity"):
        return _Identity(max_plain)
    if encoding in ("gzip", "x-gzip"):
        return Inflater(max_decompressed)
    raise RemoteProtocolError(f"unsupported Content-Encoding {encoding!r}")
