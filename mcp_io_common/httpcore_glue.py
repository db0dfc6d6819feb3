"""httpcore glue shared by both shells' HTTP transports (no I/O of its own).

The Trio shell imports these from here: they are the same in both, and only the
sending and reading differ between the shells.
"""

from __future__ import annotations

from typing import Any, Final

import httpcore

from mcp_proto import deprecations
from mcp_proto.errors import MCPError, RequestTimeoutError, TransportError
from mcp_proto.http import HttpSessionState

__all__ = [
    "ERROR_BODY_CAP",
    "HTTPCORE_ERRORS",
    "MAX_CONNECTIONS",
    "MAX_RESUMES",
    "PostHeads",
    "RequestTarget",
    "deprecation_notice",
    "enc",
    "header",
    "str_headers",
    "transport_error",
    "without_channel",
]

#: Most connections one server's pool keeps open (requests beyond wait for one).
MAX_CONNECTIONS: Final = 64
#: How many times a broken POST response stream is resumed with GET + Last-Event-ID.
MAX_RESUMES: Final = 3
#: How much of an error response's body is read (to find a JSON-RPC error in it).
ERROR_BODY_CAP: Final = 64 * 1024

HTTPCORE_ERRORS: Final = (
    httpcore.TimeoutException,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.UnsupportedProtocol,
    httpcore.ProxyError,
)


def header(headers: list[tuple[bytes, bytes]], name: bytes) -> str | None:
    """The first value of a (lower-case) header name, or None."""
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def str_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers]


def enc(headers: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]


def transport_error(exc: Exception, what: str) -> MCPError:
    """The typed error for an httpcore failure: a read timeout is a request timeout
    (never retried), anything else a transport error (retryable per the core's table)."""
    if isinstance(exc, httpcore.ReadTimeout):
        return RequestTimeoutError(f"{what}: no data within the read timeout")
    if isinstance(exc, httpcore.TimeoutException):
        return TransportError(f"{what}: {type(exc).__name__}")
    return TransportError(f"{what}: {type(exc).__name__}: {exc}")


def without_channel(caps: dict[str, Any]) -> dict[str, Any]:
    """Plain HTTP has no channel for server requests: declare nothing needing one (HTTP-4)."""
    return {k: v for k, v in caps.items() if k not in ("roots", "sampling", "elicitation")}


def deprecation_notice(logger: Any) -> None:
    """One notice per process, whichever shell connects first (DEP-5, DEP-9)."""
    notice = deprecations.claim("http_sse")
    if notice is not None:
        logger.warning("%s", notice.notice)


class PostHeads:
    """The encoded headers of a POST, rebuilt only when what they depend on changes:
    the negotiated version and the session id (configured headers are fixed per
    connection). One (key, headers) pair is swapped at once, so threads never see a
    mismatched pair; callers must not mutate the list (both pools copy it)."""

    __slots__ = ("_cached", "_gzip", "_state", "_streamable")

    def __init__(self, state: HttpSessionState, *, streamable: bool, gzip: bool) -> None:
        self._state = state
        self._streamable = streamable
        self._gzip = gzip
        self._cached: tuple[tuple[str | None, str | None], list[tuple[bytes, bytes]]] | None = None

    def get(self) -> list[tuple[bytes, bytes]]:
        state = self._state
        key = (state.protocol_version, state.session_id)
        cached = self._cached
        if cached is None or cached[0] != key:
            heads = enc(state.post_headers(streamable=self._streamable, gzip=self._gzip))
            self._cached = cached = (key, heads)
        return cached[1]


# How long connecting waits for the server to answer the Streamable HTTP GET stream
# (capped by read_timeout) before the first request; see _after_handshake.
GET_READY_WAIT = 2.0


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
