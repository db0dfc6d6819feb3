"""httpcore glue shared by both shells' HTTP transports (no I/O of its own, no
protocol rule: what a status, a header or an event means is the machine's,
``mcp_proto.connection``).

The Trio shell imports these from here: they are the same in both, and only the
sending and reading differ between the shells.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import unquote, urlsplit

import httpcore

from mcp_proto.connection.frames import ExchangeFailure
from mcp_proto.proxy_tunnel import parse_proxy_url

__all__ = [
    "HTTPCORE_ERRORS",
    "MAX_CONNECTIONS",
    "RequestTarget",
    "enc",
    "exchange_failure",
    "exchange_timeouts",
    "httpcore_proxy",
    "str_headers",
]

#: Most connections one server's pool keeps open (requests beyond wait for one).
MAX_CONNECTIONS: Final = 64

#: What an httpcore request may raise; each becomes an ``ExchangeFailure`` for the
#: machine (the shells map them to its four kinds).
HTTPCORE_ERRORS: Final = (
    httpcore.TimeoutException,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.UnsupportedProtocol,
    httpcore.ProxyError,
)


def str_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers]


def enc(headers: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]


_DEFAULT_PORTS: Final = {b"http": 80, b"https": 443}


class RequestTarget:
    """A parsed request URL with what every request to it needs precomputed."""

    __slots__ = ("host_header", "origin", "url")

    def __init__(self, url: str) -> None:
        parsed = httpcore.URL(url)
        if parsed.scheme not in _DEFAULT_PORTS:
            raise httpcore.UnsupportedProtocol(
                f"Request URL has an unsupported protocol '{parsed.scheme.decode()}://'."
                if parsed.scheme
                else "Request URL is missing an 'http://' or 'https://' protocol."
            )
        self.url = parsed
        self.origin = parsed.origin
        default = _DEFAULT_PORTS[parsed.scheme]
        self.host_header = (
            parsed.host
            if parsed.port is None or parsed.port == default
            else b"%b:%d" % (parsed.host, parsed.port)
        )

    def head(
        self, headers: list[tuple[bytes, bytes]], content: bytes | None
    ) -> list[tuple[bytes, bytes]]:
        """A request's headers with ``Host`` first and ``Content-Length`` for a body,
        as httpcore's pool adds them."""
        head = [(b"Host", self.host_header), *headers]
        if content is not None:
            head.append((b"Content-Length", b"%d" % len(content)))
        return head


def exchange_timeouts(
    read_timeout: float | None, read: float | None
) -> dict[str, dict[str, float | None]]:
    """httpcore's ``extensions`` for one exchange: the server's ``read_timeout`` bounds
    connecting, writing and waiting for a pooled connection; ``read`` (the frame's: a
    stream may have none) bounds each read."""
    rt = read_timeout
    return {"timeout": {"connect": rt, "write": rt, "pool": rt, "read": read}}


def exchange_failure(exc: Exception) -> ExchangeFailure:
    """What kind of failure an httpcore exception is, in the machine's words (the
    machine decides what it means: a read timeout is the request's timeout, the rest
    may be retried). Both shells map their pool's exceptions with this."""
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, httpcore.ReadTimeout):
        return ExchangeFailure("read_timeout", detail)
    if isinstance(exc, httpcore.TimeoutException):
        return ExchangeFailure("timeout", detail)
    if isinstance(exc, (httpcore.ProtocolError, httpcore.UnsupportedProtocol)):
        return ExchangeFailure("protocol", detail)
    return ExchangeFailure("network", detail)


def httpcore_proxy(url: str) -> httpcore.Proxy:
    """The ``httpcore.Proxy`` of a proxy URL, its userinfo kept as credentials.

    httpcore connects to ``Proxy(url)``'s host and ignores the URL's user and password,
    so an authenticating proxy answered 407. For an ``http://``/``https://`` proxy the
    core builds the ``Proxy-Authorization: Basic`` value (RFC 9110 § 11.7.1, RFC 7617;
    ``mcp_proto.proxy_tunnel.parse_proxy_url``, the WebSocket shell's too), sent on the
    ``CONNECT`` of an ``https://`` server and on every request forwarded to an
    ``http://`` one; the URL handed to httpcore no longer carries the credentials, so
    no error or log line built from it can show them. Another scheme (``socks5://``,
    which httpcore supports with its ``socks`` extra) gets them as ``auth``.
    """
    scheme = urlsplit(url).scheme.lower()
    if scheme in ("http", "https"):
        endpoint = parse_proxy_url(url)
        authorization = endpoint.authorization
        headers = [(b"Proxy-Authorization", authorization)] if authorization else None
        return httpcore.Proxy(endpoint.display, headers=headers)
    parts = urlsplit(url)
    if parts.username is None:
        return httpcore.Proxy(url)
    netloc = parts.netloc.rpartition("@")[2]
    return httpcore.Proxy(
        parts._replace(netloc=netloc).geturl(),
        auth=(unquote(parts.username), unquote(parts.password or "")),
    )
