"""Fuzz target: bounded gzip decoding (``mcp_proto.compression``).

Feeds: a response body and its ``Content-Encoding``. The first byte picks the bound, the
encoding and whether the rest is gzip-compressed first (then damaged by the second byte:
truncated, a byte flipped, or a second member appended), so both real gzip streams and
garbage reach the decoder. Chunk size from the third byte.

Contract: only ``RemoteProtocolError`` (not gzip, truncated, unsupported encoding) and
``ResponseTooLargeError`` escape; never more than the bound is produced; when nothing
was raised the output is exactly what zlib's reference decompression gives.
"""

from __future__ import annotations

import gzip
import zlib

from _fuzzlib import Reader, Target

from mcp_proto.compression import Inflater, decoder_for
from mcp_proto.errors import RemoteProtocolError, ResponseTooLargeError

BOUNDS = (0, 1, 64, 4096, 1 << 20)
ENCODINGS = ("gzip", "GZIP", " gzip ", "identity", "", None, "br", "x-gzip", "deflate")


def _reference(body: bytes) -> bytes | None:
    """Every gzip member decompressed, or None if zlib refuses the stream."""
    out = []
    try:
        while body:
            z = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out.append(z.decompress(body))
            out.append(z.flush())
            if not z.eof:
                return None
            body = z.unused_data
    except zlib.error:
        return None
    return b"".join(out)


def check(data: bytes) -> None:
    reader = Reader(data)
    head = reader.byte()
    bound = BOUNDS[head % len(BOUNDS)]
    encoding = ENCODINGS[(head >> 3) % len(ENCODINGS)]
    damage = reader.byte()
    step = 1 + reader.below(64)
    body = reader.rest()
    if head & 0x80:
        body = gzip.compress(body, mtime=0)
        kind = damage % 4
        if kind == 1 and body:
            body = body[: damage % len(body)]
        elif kind == 2 and body:
            pos = damage % len(body)
            body = body[:pos] + bytes([body[pos] ^ 0x41]) + body[pos + 1 :]
        elif kind == 3:
            body += gzip.compress(b"second member", mtime=0)
    plain_bound = bound if head & 0x40 else None
    try:
        decoder = decoder_for(encoding, bound, max_plain=plain_bound)
    except RemoteProtocolError as exc:
        assert str(exc).startswith("unsupported Content-Encoding")
        return
    limit = bound if isinstance(decoder, Inflater) else plain_bound
    produced = []
    try:
        for i in range(0, len(body), step):
            produced.append(decoder.feed(body[i : i + step]))
        produced.append(decoder.finish())
    except (RemoteProtocolError, ResponseTooLargeError):
        assert limit is None or len(b"".join(produced)) <= limit
        return
    out = b"".join(produced)
    assert limit is None or len(out) <= limit
    if isinstance(decoder, Inflater):
        assert decoder.total == len(out)
        if body:
            assert out == _reference(body), "inflated output differs from zlib's"
        else:
            assert out == b""
    else:
        assert out == body


TARGET = Target(
    name="gzip",
    description="body + Content-Encoding -> bounded Inflater/identity decoder",
    check=check,
    seeds=(
        b"\x83\x00\x10" + b'{"jsonrpc":"2.0","id":1,"result":{}}',
        b"\x83\x01\x01" + b"a" * 300,
        b"\x82\x03\x07" + b"x" * 100,
        b"\x81\x02\x02" + b"hello",
        b"\x03\x00\x05" + b"\x1f\x8b\x08\x00garbage",
        b"\x0b\x00\x05" + b"plain body",
    ),
)

if __name__ == "__main__":
    from run import main

    main(["gzip"])
