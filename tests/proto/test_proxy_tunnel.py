"""The HTTP CONNECT tunnel's rules (mcp_proto/proxy_tunnel.py), time as a number."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from mcp_proto.errors import ConnectionError, ProxyAuthenticationError, ProxyError
from mcp_proto.proxy_tunnel import MAX_HEAD, ProxyTunnel, parse_proxy_url

SECRET = "pa:ss w@rd"
URL = "http://al%40ice:pa%3Ass%20w%40rd@proxy.example:3128"


def tunnel(url: str = "http://proxy.example:3128", **kwargs: Any) -> ProxyTunnel:
    return ProxyTunnel(
        parse_proxy_url(url), "mcp.example.com", 443, now=100.0, timeout=5.0, **kwargs
    )


def fail(t: ProxyTunnel, *chunks: bytes) -> ProxyError:
    with pytest.raises(ProxyError) as info:
        for chunk in chunks:
            t.receive_data(chunk)
    return info.value


# ---------------------------------------------------------------------- the proxy URL


def test_proxy_url_userinfo_becomes_basic_credentials_never_shown() -> None:
    proxy = parse_proxy_url(URL)
    assert (proxy.tls, proxy.host, proxy.port) == (False, "proxy.example", 3128)
    assert proxy.display == "http://proxy.example:3128"
    # RFC 7617: user-id ":" password, percent-decoding the URL's userinfo first.
    assert proxy.authorization == b"Basic " + base64.b64encode(f"al@ice:{SECRET}".encode())
    assert SECRET not in repr(proxy) and "ice" not in repr(proxy)
    assert "with credentials" in repr(proxy)


def test_proxy_url_defaults_and_schemes() -> None:
    assert parse_proxy_url("http://p").port == 80
    https = parse_proxy_url("https://p")
    assert (https.tls, https.port, https.authorization) == (True, 443, None)
    assert parse_proxy_url("http://[::1]:8080").display == "http://[::1]:8080"
    assert parse_proxy_url("http://u@p:1").authorization == b"Basic " + base64.b64encode(b"u:")


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("socks5://u:secret@p:1080", "not socks5://"),
        ("p:3128", "http:// or https://"),
        ("http://u:secret@:3128", "no host"),
        ("http://u:secret@p:99999", "malformed"),
    ],
)
def test_bad_proxy_urls_are_refused_without_the_credentials(url: str, says: str) -> None:
    with pytest.raises(ValueError, match=says) as info:
        parse_proxy_url(url)
    assert "secret" not in str(info.value)


# ---------------------------------------------------------------------- the request


def test_the_connect_request_names_the_target_and_carries_the_credentials() -> None:
    assert tunnel().request() == (
        b"CONNECT mcp.example.com:443 HTTP/1.1\r\nHost: mcp.example.com:443\r\n\r\n"
    )
    request = tunnel(URL).request()
    assert request.startswith(b"CONNECT mcp.example.com:443 HTTP/1.1\r\n")
    assert b"\r\nProxy-Authorization: Basic " in request and request.endswith(b"\r\n\r\n")
    v6 = ProxyTunnel(parse_proxy_url("http://p:1"), "::1", 8000, now=0.0, timeout=1.0)
    assert v6.request().startswith(b"CONNECT [::1]:8000 HTTP/1.1\r\nHost: [::1]:8000\r\n")
    idn = ProxyTunnel(parse_proxy_url("http://p:1"), "b\u00fccher.de", 443, now=0.0, timeout=1.0)
    assert idn.request().startswith(b"CONNECT xn--bcher-kva.de:443 HTTP/1.1\r\n")
    assert SECRET not in repr(tunnel(URL))


# ---------------------------------------------------------------------- answers


def test_a_2xx_head_establishes_the_tunnel_whatever_the_chunks() -> None:
    answer = b"HTTP/1.1 200 Connection established\r\nProxy-Agent: p\r\n\r\n"
    t = tunnel()
    for byte in answer[:-1]:
        assert t.receive_data(bytes([byte])) is False
    assert t.receive_data(answer[-1:]) is True and t.established
    assert t.receive_data(b"") is True  # (the caller stops feeding it; harmless)


def test_interim_answers_are_skipped_and_a_bare_lf_is_accepted() -> None:
    t = tunnel()
    assert t.receive_data(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\n\n") is True


def test_407_is_a_proxy_authentication_error_naming_the_proxy_not_the_credentials() -> None:
    answer = (
        b"HTTP/1.1 407 Proxy Authentication Required\r\n"
        b'Proxy-Authenticate: Basic realm="corp"\r\nContent-Length: 5\r\n\r\nnope!'
    )
    error = fail(tunnel(URL), answer)
    assert isinstance(error, ProxyAuthenticationError) and isinstance(error, ConnectionError)
    assert error.http_status == 407 and error.proxy == "http://proxy.example:3128"
    assert "http://proxy.example:3128" in str(error) and "asks for Basic" in str(error)
    assert "were refused" in str(error)
    assert SECRET not in str(error) and "al@ice" not in str(error)
    bare = fail(tunnel(server="gw"), answer)
    assert str(bare).startswith("server 'gw': ") and "carries no credentials" in str(bare)


@pytest.mark.parametrize("status", [403, 404, 500, 502, 503])
def test_another_status_is_a_proxy_error_with_it(status: int) -> None:
    error = fail(tunnel(), f"HTTP/1.1 {status} Nope\r\n\r\n".encode())
    assert type(error) is ProxyError and error.http_status == status
    assert f"refused the CONNECT to mcp.example.com:443: HTTP {status} Nope" in str(error)


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "not HTTP/1.1: 'SSH-2.0-OpenSSH_9.6'"),
        (b"HTTP/2 200\r\n\r\n", "not HTTP/1.1"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header line"),
        (b"HTTP/1.1 200 OK\r\n folded: x\r\n\r\n", "malformed header line"),
        (b"HTTP/1.1 101 Switching Protocols\r\n\r\n", "answered the CONNECT with 101"),
        (b"HTTP/1.1 200 OK\r\n\r\n\x16\x03\x01", "sent data after its answer"),
        (b"\x1b[31mHTTP/1.1 200\r\n\r\n", "\\x1b[31m"),  # escaped, not a terminal code
    ],
)
def test_garbage_is_a_proxy_error(answer: bytes, says: str) -> None:
    error = fail(tunnel(), answer)
    assert type(error) is ProxyError and says in str(error)


def test_the_head_is_bounded() -> None:
    t = tunnel()
    error = fail(t, b"HTTP/1.1 200 OK\r\n", *[b"X-Pad: " + b"a" * 1000 + b"\r\n"] * 20)
    assert f"over {MAX_HEAD} bytes" in str(error)
    assert len(t._buffer) <= MAX_HEAD + 1100
    # Interim heads count towards the same bound.
    many = b"HTTP/1.1 100 Continue\r\n\r\n" * (MAX_HEAD // 25 + 1)
    assert "over" in str(fail(tunnel(), many))


def test_the_end_of_the_connection_before_or_during_the_answer() -> None:
    assert "closed the connection before answering the CONNECT" in str(fail(tunnel(), b""))
    error = fail(tunnel(), b"HTTP/1.1 200 OK\r\n", b"")
    assert "before finishing its answer" in str(error) and error.http_status is None


def test_a_proxy_that_never_answers_fails_at_the_deadline() -> None:
    t = tunnel()
    assert t.deadline == 105.0
    t.handle_timeout(104.9)  # not yet
    assert t.receive_data(b"HTTP/1.1 2") is False
    with pytest.raises(
        ProxyError,
        match=r"did not answer the CONNECT to mcp\.example\.com:443 "
        r"within 5 s",
    ) as info:
        t.handle_timeout(105.0)
    assert info.value.http_status is None
    t.handle_timeout(200.0)  # decided once


def test_an_established_tunnel_has_no_deadline_left() -> None:
    t = tunnel()
    assert t.receive_data(b"HTTP/1.1 200 OK\r\n\r\n")
    t.handle_timeout(1000.0)  # no error: the tunnel is up
