"""Bounded incremental gzip inflation (SIZE-1, SIZE-4, UT-1).

Fed whole, byte by byte and in random chunks; truncated, corrupted and trailed by
garbage; and attacked with gzip bombs while tracemalloc watches the peak.
"""

from __future__ import annotations

import gzip
import itertools
import tracemalloc
import zlib
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto.compression import DEFAULT_MAX_DECOMPRESSED_BODY_BYTES, Inflater, decoder_for
from mcp_proto.errors import RemoteProtocolError, ResponseTooLargeError

MiB = 1024 * 1024
STEP = 64 * 1024  # compression._STEP: the most one decompress step produces

PAYLOAD = b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}' * 50


def gz(data: bytes, level: int = 6) -> bytes:
    return gzip.compress(data, compresslevel=level, mtime=0)


def inflate(chunks: Iterable[bytes], max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BODY_BYTES) -> bytes:
    inflater = Inflater(max_bytes)
    out = b"".join(inflater.feed(chunk) for chunk in chunks) + inflater.finish()
    assert inflater.total == len(out)
    return out


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def zeros_bomb(size: int) -> bytes:
    """``size`` zero bytes, gzipped at level 9 without holding them all at once."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(MiB)
    parts = [comp.compress(block) for _ in range(size // MiB)]
    parts.append(comp.compress(bytes(size % MiB)))
    parts.append(comp.flush())
    return b"".join(parts)


# ---------------------------------------------------------------- round trips


@pytest.mark.parametrize("payload", [b"", b"x", PAYLOAD, bytes(range(256)) * 2000], ids=len)
def test_whole_bytewise_and_with_trailing_member(payload: bytes) -> None:
    body = gz(payload)
    assert inflate([body]) == payload
    assert inflate(bytewise(body)) == payload
    # "Trailing bytes" for gzip: RFC 1952 § 2.2 lets a body be several members.
    assert inflate([body + gz(b"tail")]) == payload + b"tail"
    assert inflate(bytewise(body + gz(b"tail"))) == payload + b"tail"


def test_streams_while_reading() -> None:
    payload = PAYLOAD * 200
    body = gz(payload, level=1)
    inflater = Inflater()
    first_half = inflater.feed(body[: len(body) // 2])
    assert 0 < len(first_half) < len(payload)
    assert payload.startswith(first_half)
    assert first_half + inflater.feed(body[len(body) // 2 :]) + inflater.finish() == payload


def test_a_large_body_comes_out_whole_in_one_feed() -> None:
    payload = bytes(range(256)) * (4 * MiB // 256)  # 4 MiB: sixteen 256 KiB steps
    assert inflate([gz(payload, level=1)]) == payload


def test_many_members_split_anywhere() -> None:
    body = b"".join(gz(b"%d," % i) for i in range(200))
    assert inflate(bytewise(body)) == b"".join(b"%d," % i for i in range(200))


def test_an_empty_body_is_not_truncated_gzip() -> None:
    # A 202/204 can carry Content-Encoding: gzip and no bytes at all.
    inflater = Inflater()
    assert inflater.feed(b"") == b""
    assert inflater.finish() == b""


@settings(max_examples=200, deadline=None)
@given(
    payload=st.binary(max_size=3000),
    members=st.integers(min_value=1, max_value=3),
    cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=10),
)
def test_any_chunking_gives_the_same_bytes(payload: bytes, members: int, cuts: list[int]) -> None:
    body = gz(payload) * members
    bounds = [0, *sorted(c for c in cuts if c <= len(body)), len(body)]
    chunks = [body[a:b] for a, b in itertools.pairwise(bounds)]
    assert inflate(chunks) == payload * members
    assert inflate([body]) == payload * members


# ---------------------------------------------------------------- malformed bodies


def test_truncated_at_every_point_is_an_error() -> None:
    body = gz(PAYLOAD)
    for cut in range(1, len(body)):
        inflater = Inflater()
        with pytest.raises(RemoteProtocolError):
            inflater.feed(body[:cut])
            inflater.finish()


def test_truncated_second_member_is_an_error() -> None:
    body = gz(b"one") + gz(b"two")[:-3]
    inflater = Inflater()
    assert inflater.feed(body) == b"onetwo"
    with pytest.raises(RemoteProtocolError, match="truncated"):
        inflater.finish()


@pytest.mark.parametrize(
    "body",
    [
        b"not gzip at all",
        b"\x1f\x8b\x09" + bytes(20),  # gzip magic, unknown method
        zlib.compress(PAYLOAD),  # zlib-wrapped deflate, not gzip
        zlib.compress(PAYLOAD)[2:-4],  # raw deflate
        gz(PAYLOAD)[:-8] + b"\x00\x00\x00\x00" + gz(PAYLOAD)[-4:],  # bad CRC-32
        gz(PAYLOAD)[:-4] + b"\x01\x00\x00\x00",  # bad ISIZE
        gz(PAYLOAD) + b"trailing garbage",
        gz(PAYLOAD) + b"\x00" * 8,  # zero padding is not another member either
    ],
    ids=["text", "method", "zlib", "raw", "crc", "isize", "garbage", "padding"],
)
def test_malformed_is_remote_protocol_error(body: bytes) -> None:
    for chunks in ([body], bytewise(body)):
        inflater = Inflater()
        with pytest.raises(RemoteProtocolError):
            for chunk in chunks:
                inflater.feed(chunk)
            inflater.finish()


def test_a_corrupted_body_is_an_error_before_its_end() -> None:
    body = bytearray(gz(PAYLOAD * 40))
    body[10:20] = b"\xff" * 10  # inside the first deflate block
    with pytest.raises(RemoteProtocolError):
        Inflater().feed(bytes(body))


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300), step=st.integers(min_value=1, max_value=50))
def test_fuzz_any_bytes_inflate_or_raise_a_protocol_error(data: bytes, step: int) -> None:
    # h11's fuzz invariant: parse, or raise the documented error, nothing else.
    for chunks in ([data], [data[i : i + step] for i in range(0, len(data), step)]):
        inflater = Inflater(max_bytes=10_000)
        try:
            for chunk in chunks:
                inflater.feed(chunk)
            inflater.finish()
        except (RemoteProtocolError, ResponseTooLargeError):
            pass


@settings(max_examples=300, deadline=None)
@given(
    payload=st.binary(max_size=500),
    flips=st.lists(st.tuples(st.integers(0), st.integers(1, 255)), min_size=1, max_size=4),
)
def test_fuzz_mutated_gzip(payload: bytes, flips: list[tuple[int, int]]) -> None:
    body = bytearray(gz(payload))
    for where, xor in flips:
        body[where % len(body)] ^= xor
    inflater = Inflater(max_bytes=100_000)
    try:
        out = inflater.feed(bytes(body)) + inflater.finish()
    except (RemoteProtocolError, ResponseTooLargeError):
        return
    # A mutation that still inflates passed the CRC-32 and length checks (e.g. it hit
    # the header's mtime or OS byte), so the payload is intact.
    assert out == payload


# ---------------------------------------------------------------- the ceiling (SIZE-1, UT-1)


def test_exactly_the_limit_is_allowed_one_more_byte_is_not() -> None:
    payload = b"a" * 1000
    assert inflate([gz(payload)], max_bytes=1000) == payload
    with pytest.raises(ResponseTooLargeError):
        inflate([gz(payload + b"a")], max_bytes=1000)
    with pytest.raises(ResponseTooLargeError):
        inflate(bytewise(gz(payload + b"a")), max_bytes=1000)


def test_the_limit_counts_across_members_and_feeds() -> None:
    with pytest.raises(ResponseTooLargeError):
        inflate([gz(b"a" * 600), gz(b"b" * 600)], max_bytes=1000)


@pytest.mark.parametrize("chunk_size", [None, 1024, 1], ids=["whole", "1KiB", "bytewise"])
def test_gzip_bomb_10_mb_with_a_1_mb_limit(chunk_size: int | None) -> None:
    """The 10 KB bomb that expands to 10 MB is abandoned near the 1 MiB limit."""
    limit = 1 * MiB
    bomb = zeros_bomb(10 * 1000 * 1000)
    assert len(bomb) < 20_000  # ~10 KB on the wire
    chunks = (
        [bomb]
        if chunk_size is None
        else [bomb[i : i + chunk_size] for i in range(0, len(bomb), chunk_size)]
    )
    inflater = Inflater(limit)
    got = 0
    tracemalloc.start()
    try:
        with pytest.raises(ResponseTooLargeError):
            for chunk in chunks:
                got += len(inflater.feed(chunk))
            inflater.finish()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got <= limit
    assert inflater.total <= limit + STEP  # abandoned within one step of the limit
    if chunk_size is None:
        # Fed at once: never more than the limit + 256 KiB held (pieces of one 64 KiB
        # step, zlib's window and its copy of the step in progress).
        assert peak < limit + 256 * 1024, peak
    else:
        # Fed in chunks, a feed that returns (here ~1 MB from 1 KiB) is joined into its
        # result once, so that result briefly exists twice; nothing accumulates.
        assert peak < 2 * limit + 256 * 1024, peak


def test_gzip_bomb_against_the_default_64_mib_limit() -> None:
    # SIZE-1's hostile server: a small body that expands far past 64 MiB.
    assert 64 * MiB == DEFAULT_MAX_DECOMPRESSED_BODY_BYTES
    bomb = zeros_bomb(200 * MiB)
    assert len(bomb) < 250_000
    inflater = Inflater()
    got = 0
    with pytest.raises(ResponseTooLargeError, match="max_decompressed_body_bytes"):
        for i in range(0, len(bomb), 16 * 1024):
            got += len(inflater.feed(bomb[i : i + 16 * 1024]))
    assert got <= 64 * MiB < inflater.total <= 64 * MiB + STEP


# ---------------------------------------------------------------- decoder_for


@pytest.mark.parametrize("encoding", [None, "", "identity", " Identity "])
def test_identity_passes_bytes_through_bounded_by_max_plain(encoding: str | None) -> None:
    decoder = decoder_for(encoding, 10, max_plain=100)
    assert decoder.feed(b"x" * 60) == b"x" * 60
    assert decoder.feed(b"y" * 40) == b"y" * 40
    with pytest.raises(ResponseTooLargeError):
        decoder.feed(b"z")
    assert decoder_for(encoding, 10, max_plain=100).finish() == b""


def test_identity_without_max_plain_is_unbounded_by_the_gzip_ceiling() -> None:
    # A large uncompressed payload is not refused by max_decompressed_body_bytes.
    decoder = decoder_for(None, 10)
    assert decoder.feed(b"x" * 1000) == b"x" * 1000
    assert decoder.finish() == b""


@pytest.mark.parametrize("encoding", ["gzip", "GZIP", " gzip ", "x-gzip"])
def test_gzip_uses_the_decompression_ceiling_not_max_plain(encoding: str) -> None:
    decoder = decoder_for(encoding, 2000, max_plain=10)
    assert isinstance(decoder, Inflater)
    assert decoder.feed(gz(b"a" * 2000)) + decoder.finish() == b"a" * 2000
    with pytest.raises(ResponseTooLargeError):
        decoder_for(encoding, 2000, max_plain=10).feed(gz(b"a" * 2001))


@pytest.mark.parametrize("encoding", ["br", "deflate", "compress", "zstd", "gzip, br", "gzip;q=1"])
def test_unsupported_encoding_is_a_protocol_error(encoding: str) -> None:
    # We only ever ask for gzip; anything else cannot be decoded.
    with pytest.raises(RemoteProtocolError):
        decoder_for(encoding, 1000)
