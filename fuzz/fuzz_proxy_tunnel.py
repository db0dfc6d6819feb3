"""Fuzz target: the HTTP CONNECT answer parser (``mcp_proto.proxy_tunnel.ProxyTunnel``).

Feeds: what a proxy answers to ``CONNECT`` (the WebSocket transport's tunnel). The
first byte picks the head bound and whether the proxy URL carries credentials, the
second how the rest is chunked; the rest is the proxy's bytes, then the end of the
connection.

Contract: ``receive_data`` returns a bool or raises ``ProxyError`` (its 407 subclass
included), nothing else; after an error nothing more is taken; it is established only
by a 2xx status (``http_status`` is ``None`` or the status line's number); the outcome
does not depend on chunking; no error message or repr shows the proxy credentials;
the bytes buffered never exceed the head bound plus one chunk.
"""

from __future__ import annotations

import sys
from pathlib import Path

from _fuzzlib import Reader, Target

from mcp_proto.errors import ProxyAuthenticationError, ProxyError
from mcp_proto.proxy_tunnel import ProxyTunnel, parse_proxy_url

SECRET = "s3kr1t-pw"
BOUNDS = (64, 512, 16 * 1024)


def _run(chunks: list[bytes], max_head: int, auth: bool) -> tuple[str, int | None]:
    url = f"http://alice:{SECRET}@127.0.0.1:3128" if auth else "http://127.0.0.1:3128"
    tunnel = ProxyTunnel(
        parse_proxy_url(url), "example.com", 443, now=0.0, timeout=5.0, max_head=max_head
    )
    assert SECRET not in repr(tunnel) and SECRET not in repr(tunnel.proxy)
    outcome: tuple[str, int | None] | None = None
    for chunk in [*chunks, b""]:
        try:
            up = tunnel.receive_data(chunk)
        except ProxyError as exc:
            assert SECRET not in str(exc), "an error shows the credentials"
            assert exc.proxy == "http://127.0.0.1:3128"
            if isinstance(exc, ProxyAuthenticationError):
                assert exc.http_status == 407
            status = exc.http_status
            assert status is None or 100 <= status <= 999
            outcome = (type(exc).__name__, status)
            break
        assert len(tunnel._buffer) <= max_head + max(len(c) for c in [*chunks, b""])
        if up:
            outcome = ("established", None)
            # Nothing more may come: the client speaks first over the tunnel.
    assert outcome is not None, "the end of the connection decided nothing"
    return outcome


def check(data: bytes) -> None:
    reader = Reader(data)
    head = reader.byte()
    max_head, auth = BOUNDS[head % len(BOUNDS)], bool(head & 0x80)
    step = 1 + reader.below(32)
    stream = reader.rest()
    whole = _run([stream] if stream else [], max_head, auth)
    pieces = [stream[i : i + step] for i in range(0, len(stream), step)]
    assert _run(pieces, max_head, auth) == whole, "chunking changed the outcome"


TARGET = Target(
    name="proxy_tunnel",
    description="a proxy's answer to CONNECT -> ProxyTunnel -> established / ProxyError",
    check=check,
    seeds=(
        b"\x02\x03HTTP/1.1 200 Connection established\r\n\r\n",
        b"\x82\x01HTTP/1.1 407 Proxy Authentication Required\r\n"
        b'Proxy-Authenticate: Basic realm="p"\r\n\r\n',
        b"\x02\x05HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\n\n",
        b"\x02\x02HTTP/1.1 502 Bad Gateway\r\nContent-Length: 3\r\n\r\nbad",
        b"\x00\x04SSH-2.0-OpenSSH_9.6\r\n",
        b"\x02\x07HTTP/1.1 200 OK\r\nX\r\n\r\n",
        b"\x02\x00HTTP/1.1 200 OK\r\n\r\n\x16\x03\x01",
        b"\x00\x01HTTP/1.1 200 OK\r\nA: " + b"a" * 80,
    ),
    max_len=2048,
)

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import main

    main(["proxy_tunnel"])
