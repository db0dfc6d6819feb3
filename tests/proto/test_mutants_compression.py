"""Error texts of the bounded body decoders (survivors of the mutation run, issue 11)."""

from __future__ import annotations

import gzip

import pytest

from mcp_proto.compression import Inflater, decoder_for
from mcp_proto.errors import RemoteProtocolError, ResponseTooLargeError


def test_not_gzip() -> None:
    with pytest.raises(RemoteProtocolError) as info:
        Inflater(100).feed(b"\x1f\x8bnot gzip at all")
    assert str(info.value).startswith("malformed gzip body: ")


def test_truncated() -> None:
    inflater = Inflater(100)
    inflater.feed(gzip.compress(b"hello")[:-4])
    with pytest.raises(RemoteProtocolError) as info:
        inflater.finish()
    assert str(info.value) == "truncated gzip body"


def test_expanded_past_the_bound() -> None:
    with pytest.raises(ResponseTooLargeError) as info:
        Inflater(10).feed(gzip.compress(b"x" * 100))
    assert str(info.value) == (
        "a compressed response expanded past max_decompressed_body_bytes (10 bytes)"
    )


def test_plain_body_past_the_bound() -> None:
    with pytest.raises(ResponseTooLargeError) as info:
        decoder_for(None, 10, max_plain=4).feed(b"12345")
    assert str(info.value) == "a response body exceeded 4 bytes"


def test_unsupported_encoding() -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decoder_for("br", 10)
    assert str(info.value) == "unsupported Content-Encoding 'br'"
