"""HTTP rules of the handshake-era transports, without doing any HTTP.

Request heads (which headers each request carries), response classification (status x
content type → what it means), the mapping of HTTP failures to typed errors, the retry
table, SSE resumption state and the legacy HTTP+SSE endpoint's origin check. The shells
move the bytes (through httpcore) and ask this module what they mean.

References: 2025-11-25 Basic § Transports (Streamable HTTP, session management,
resumability, backwards compatibility), and the seeds' "Retries" and "Treating the
Server as Untrusted" sections.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final
from urllib.parse import urljoin, urlsplit

from ._util import shown
from .errors import (
    ConnectionError,
    IncompatibleServerError,
    InsufficientScopeError,
    MCPError,
    ProxyAuthenticationError,
    RequestTimeoutError,
    ResponseTooLargeError,
    ServerError,
    SessionExpiredError,
    TransientServerError,
    TransportError,
    UnauthorizedError,
    server_error_from,
)
from .sse import SSEEvent, is_retainable_event_id

__all__ = [
    "ACCEPT_BOTH",
    "ACCEPT_SSE",
    "FOLLOWED_REDIRECTS",
    "MAX_REDIRECTS",
    "HttpSessionState",
    "ResponseKind",
    "SseStream",
    "backoff_delay",
    "classify_response",
    "error_for_response",
    "is_retryable",
    "redirect_target",
    "resolve_sse_endpoint",
    "same_origin",
    "session_expired_error",
    "unauthorized_error",
]

#: Streamable HTTP: "The client MUST include an Accept header, listing both
#: application/json and text/event-stream as supported content types."
ACCEPT_BOTH: Final = "application/json, text/event-stream"
ACCEPT_SSE: Final = "text/event-stream"

#: ``retry:`` is honoured but never below this (UT-3): ``retry: 0`` must not drive a
#: reconnect loop.
MIN_RECONNECT_DELAY: Final = 0.1
#: Default reconnect delay when the server sent no ``retry:``.
DEFAULT_RECONNECT_DELAY: Final = 1.0
MAX_RECONNECT_DELAY: Final = 30.0

#: Requests never re-sent automatically: a retry could run a side effect twice
#: (seeds, "Retries"). ``initialize`` is re-done by a fresh connect, not a retry.
NEVER_RETRIED: Final = frozenset({"tools/call", "initialize"})

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}

# Headers the client owns: configured headers of these names are dropped so a config
# cannot forge protocol state.
_OWNED: Final = frozenset(
    {
        "accept",
        "content-type",
        "mcp-protocol-version",
        "mcp-session-id",
        "last-event-id",
        "content-length",
        "host",
        "transfer-encoding",
        "accept-encoding",
    }
)


class ResponseKind(enum.Enum):
    """What an HTTP response to one of our messages means."""

    ACCEPTED = "accepted"  # 202/204: a notification or response was taken
    JSON = "json"  # 2xx application/json: one JSON-RPC message (or a batch)
    SSE = "sse"  # 2xx text/event-stream: a stream of messages
    SESSION_EXPIRED = "session_expired"  # 404 while we sent a session id
    UNAUTHORIZED = "unauthorized"  # 401 / 403
    CLIENT_ERROR = "client_error"  # other 4xx (the body may carry a JSON-RPC error)
    SERVER_ERROR = "server_error"  # 5xx: transient
    UNEXPECTED = "unexpected"  # anything else (1xx, 3xx, 2xx of another type)


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def classify_response(status: int, content_type: str | None, *, sent_session: bool) -> ResponseKind:
    """Classify a response (status x content type). The body is judged later."""
    if status in (202, 204):
        return ResponseKind.ACCEPTED
    if 200 <= status < 300:
        media = _media_type(content_type)
        if media == "application/json":
            return ResponseKind.JSON
        if media == "text/event-stream":
            return ResponseKind.SSE
        if status == 200 and media == "":
            return ResponseKind.ACCEPTED  # an empty 200 to a notification
        return ResponseKind.UNEXPECTED
    if status == 404 and sent_session:
        # Session management: "The client MUST start a new session ... when it receives
        # HTTP 404 in response to a request containing an Mcp-Session-Id."
        return ResponseKind.SESSION_EXPIRED
    if status in (401, 403):
        return ResponseKind.UNAUTHORIZED
    if 400 <= status < 500:
        return ResponseKind.CLIENT_ERROR
    if 500 <= status < 600:
        return ResponseKind.SERVER_ERROR
    return ResponseKind.UNEXPECTED


def _jsonrpc_error_in(body: bytes) -> Any:
    """The ``error`` member of a JSON-RPC error body, or ``None``."""
    if not body or len(body) > 1024 * 1024:
        return None
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if isinstance(obj, dict) and obj.get("jsonrpc") == "2.0" and isinstance(obj.get("error"), dict):
        return obj["error"]
    return None


# RFC 9110 § 11.6.1: WWW-Authenticate = #challenge; challenge = auth-scheme
# [ 1*SP ( token68 / #auth-param ) ]; auth-param = token BWS "=" BWS ( token /
# quoted-string ). Scheme and parameter names are case-insensitive (§ 11.1, § 11.2).
_TOKEN: Final = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_AUTH_PARAM: Final = re.compile(
    # Lenient on two points, both common server mistakes: an unquoted value may hold
    # non-token characters (scope=files:read), and parameters may be separated by
    # spaces alone.
    rf'[\s,]*({_TOKEN})[ \t]*=[ \t]*([^\s,"]+|"(?:[^"\\]|\\.)*")(?=[\s,]|$)'
)
_AUTH_SCHEME: Final = re.compile(rf"[\s,]*({_TOKEN})(?=[ \t]|,|$)")
_TOKEN68: Final = re.compile(r"[ \t]*[A-Za-z0-9._~+/-]+=*[ \t]*(?=,|$)")


def _bearer_param(www_authenticate: str | None, name: str) -> str | None:
    """Parameter ``name`` of the ``Bearer`` challenge in a WWW-Authenticate value
    (RFC 6750 § 3), or ``None``. Quoted values may hold commas and escapes, and other
    schemes' parameters are not mistaken for Bearer's."""
    if not www_authenticate:
        return None
    text, pos, scheme = www_authenticate, 0, None
    while pos < len(text):
        param = _AUTH_PARAM.match(text, pos)
        if param is not None:
            pos = param.end()
            if scheme == "bearer" and param.group(1).lower() == name:
                value = param.group(2)
                if value.startswith('"'):
                    value = re.sub(r"\\(.)", r"\1", value[1:-1])
                return value
            continue
        start = _AUTH_SCHEME.match(text, pos)
        if start is None or scheme == "bearer":
            return None  # unparseable, or the Bearer challenge ended without ``name``
        scheme, pos = start.group(1).lower(), start.end()
        token68 = _TOKEN68.match(text, pos)
        if token68 is not None:
            pos = token68.end()
    return None


def unauthorized_error(status: int, www_authenticate: str | None) -> UnauthorizedError:
    """The typed error for an HTTP 401 or 403, from the status and the Bearer challenge
    (issue 9 item 4: from facts, never from text).

    401 → :class:`UnauthorizedError`; 403 with ``error="insufficient_scope"`` →
    :class:`InsufficientScopeError` (RFC 6750 § 3.1); any other 403 →
    :class:`UnauthorizedError` with ``status=403``. Each carries the challenge's
    ``resource_metadata`` (RFC 9728 § 5.1), ``scope``, ``error`` and
    ``error_description``.
    """
    fields = {
        name: _bearer_param(www_authenticate, name)
        for name in ("resource_metadata", "scope", "error", "error_description")
    }
    if status == 403 and fields["error"] == "insufficient_scope":
        return InsufficientScopeError(
            "Authorization failed: HTTP 403 (insufficient_scope)", status=403, **fields
        )
    # The challenge's values are peer text: kept in fields, never put in the message.
    return UnauthorizedError(f"Authorization failed: HTTP {status}", status=status, **fields)


def error_for_response(
    status: int,
    body: bytes,
    *,
    method: str | None,
    www_authenticate: str | None = None,
    location: str | None = None,
    redirects: int = 0,
) -> MCPError:
    """The typed error for a non-2xx response (CUST-2, RETRY-2); ``location``: a
    redirect's ``Location``, named in the error of one that is not followed;
    ``redirects``: how many the request followed already (past ``MAX_REDIRECTS`` a
    307/308 is a loop, and said so).

    A JSON-RPC error carried by a 4xx keeps its code, data and typed class (e.g.
    -32020 → ``HeaderMismatchError``); 5xx is ``TransientServerError`` (retryable);
    401/403 is :func:`unauthorized_error`. A 404 to a request that carried a session id
    is not an error here: :func:`classify_response` calls it ``SESSION_EXPIRED`` and the
    shell raises :class:`SessionExpiredError`.
    """
    if status in FOLLOWED_REDIRECTS and location and redirects >= MAX_REDIRECTS:
        result: MCPError = ServerError(
            f"HTTP {status} from the server: too many redirects ({redirects} followed, "
            f"the last to {shown(location.strip())}); the server redirects in a loop",
            method=method,
        )
    else:
        result = _error_for_status(status, body, method, www_authenticate, location)
    result.http_status = status
    return result


def _error_for_status(
    status: int,
    body: bytes,
    method: str | None,
    www_authenticate: str | None,
    location: str | None,
) -> MCPError:
    if status in (401, 403):
        return unauthorized_error(status, www_authenticate)
    if status == 407:
        # RFC 9110 § 15.5.8: the proxy in front of an http:// server (a forwarded
        # request) asks for credentials; an https:// server's CONNECT fails in httpcore.
        return ProxyAuthenticationError(
            "HTTP 407 Proxy Authentication Required: the proxy refused the request "
            "(the proxy URL carries no credentials, or they were refused)"
        )
    error = _jsonrpc_error_in(body)
    if 500 <= status < 600:
        if error is not None:
            typed = server_error_from(error, method=method)
            return TransientServerError(
                typed.message, code=typed.code, data=typed.data, method=method
            )
        return TransientServerError(f"HTTP {status} from the server", method=method)
    if error is not None:
        return server_error_from(error, method=method)
    if 300 <= status < 400 and location:
        return ServerError(
            f"HTTP {status} from the server, a redirect to {shown(location.strip())} that is "
            "not followed (only 307/308 to the same origin are); connect to that URL",
            method=method,
        )
    return ServerError(f"HTTP {status} from the server", method=method)


def session_expired_error(name: str, method: str | None) -> SessionExpiredError:
    """The error for a 404 answered to our ``Mcp-Session-Id`` (2025-11-25 § Session
    Management), raised by the shell's send; ``request`` decides with
    :func:`is_retryable` whether to re-send on a new session."""
    during = f" during {method}" if method else ""
    return SessionExpiredError(f"server {name!r}: the session expired{during}")


def is_retryable(method: str, error: BaseException) -> bool:
    """The retry table (RETRY-1..3, RETRY-6, TIME-3, SIZE-2), by error type only: only
    failures where the request most likely did not complete are retried — transport
    errors, HTTP 5xx and an expired session (re-sent once on a new session) — and never
    ``tools/call``, a timeout, a too-large response, a JSON-RPC/4xx error or a refused
    authorization."""
    if method in NEVER_RETRIED:
        return False
    if isinstance(error, (RequestTimeoutError, ResponseTooLargeError)):
        return False
    if isinstance(error, TransientServerError):
        return True
    if isinstance(error, (ServerError, UnauthorizedError, IncompatibleServerError)):
        return False
    return isinstance(error, (TransportError, ConnectionError))


def backoff_delay(attempt: int, base: float, *, jitter: float = 0.0) -> float:
    """Delay before retry number ``attempt`` (1-based): ``base * 2**(attempt-1)``,
    stretched by ``jitter`` (a caller-supplied fraction in [0, 1); randomness is the
    shell's, never the core's)."""
    if attempt < 1:
        raise ValueError("attempt is 1-based")
    # The cap applies after the jitter (no delay above MAX_RECONNECT_DELAY, SSE-5), and
    # the exponent is bounded first: 2**(attempt-1) as a float overflows past ~1024.
    return min(MAX_RECONNECT_DELAY, base * 2.0 ** min(attempt - 1, 64) * (1.0 + jitter))


def same_origin(a: str, b: str) -> bool:
    """RFC 6454 origin equality: scheme, host and port (with default ports).

    Only http(s) URLs with a host and a valid port have a comparable origin; any other
    URL has an opaque origin (RFC 6454 § 4, step 1), equal to nothing."""
    origin = _origin(a)
    return origin is not None and origin == _origin(b)


def _origin(url: str) -> tuple[str, str, int] | None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        # "http://[" (an unbalanced IPv6 bracket), or a port out of range or not a
        # number: no origin, so two malformed URLs never compare equal.
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    # urlsplit lowercases hostname (RFC 6454 § 4, step 5: the host in lower case).
    return scheme, parts.hostname, _DEFAULT_PORTS[scheme] if port is None else port


#: Redirects followed: the ones that keep the method and the body (RFC 9110 § 15.4.8,
#: § 15.4.9), which a server mounted under a path answers to the path without its
#: trailing slash (Starlette's ``Mount("/mcp", app)``: ``POST /mcp`` → 307 ``/mcp/``).
FOLLOWED_REDIRECTS: Final = frozenset({307, 308})
#: Redirects followed in a row for one request.
MAX_REDIRECTS: Final = 5


def _resolve_reference(base: str, reference: str) -> str | None:
    """``reference`` (a server-given URI reference: an endpoint event, a ``Location``)
    resolved against ``base`` (RFC 3986), or ``None`` when it is empty or malformed."""
    target = reference.strip()
    # A URI reference has no whitespace or control characters (RFC 3986 § 2): refusing
    # them all keeps CR/LF out of the request line, and keeps urlsplit from silently
    # deleting tabs and newlines (it does, since Python 3.9.5) to "repair" the URL.
    if not target or not all(0x21 <= ord(c) < 0x7F for c in target):
        return None
    try:
        return urljoin(base, target)
    except ValueError:  # e.g. "//[": urlsplit's "Invalid IPv6 URL"
        return None


def redirect_target(request_url: str, status: int, location: str | None) -> str | None:
    """Where a 307/308 answered to ``request_url`` sends the same request again, or
    ``None`` when it is not followed: another status (301/302/303 turn a POST into a
    GET), no usable ``Location``, or another origin (configured credential headers
    would go to another host, as for the legacy endpoint event)."""
    if status not in FOLLOWED_REDIRECTS or not location:
        return None
    url = _resolve_reference(request_url, location)
    return url if url is not None and same_origin(request_url, url) else None


def resolve_sse_endpoint(stream_url: str, data: str) -> str:
    """The POST URL announced by a legacy HTTP+SSE ``endpoint`` event (SSE-2, UT-5).

    Resolved against the stream URL (RFC 3986); it must stay on the connection's
    origin, or configured credential headers would go to another host.
    """
    url = _resolve_reference(stream_url, data)
    if url is None:
        raise ConnectionError("the server's endpoint event is empty or malformed")
    if not same_origin(stream_url, url):
        raise ConnectionError("the server's endpoint event points to another origin; refused")
    return url


#: Longest ``Mcp-Session-Id`` kept (SESS-1).
MAX_SESSION_ID_LENGTH: Final = 4096


def _valid_session_id(value: str) -> bool:
    # Session Management: "The session ID MUST only contain visible ASCII characters
    # (ranging from 0x21 to 0x7E)." Anything else would also be unsafe to echo.
    return 0 < len(value) <= MAX_SESSION_ID_LENGTH and all(0x21 <= ord(c) < 0x7F for c in value)


class SseStream:
    """Resumption state of one SSE stream: a POST's response stream, or the standalone
    GET stream (including every GET that resumes it).

    2025-11-25 § Resumability: event ids are "a cursor within that particular stream",
    and a server replays after ``Last-Event-ID`` "on the stream that was disconnected".
    So each stream keeps its own last id: a GET that opens the standalone stream carries
    none (with another stream's id the server would take it for a resume of that stream,
    and never open the standalone one), and a stream is resumed with its own id only.
    """

    # A plain slotted class, not ``attrs``: one per stream, and the class is part of
    # ``import mcp_io_sync`` (an ``attrs`` class costs ~0.4 ms to create at import).
    __slots__ = ("last_event_id",)

    def __init__(self, last_event_id: str | None = None) -> None:
        self.last_event_id = last_event_id

    def __repr__(self) -> str:
        return f"SseStream(last_event_id={self.last_event_id!r})"

    def note_id(self, event_id: str | None) -> None:
        """Remember this stream's last event id if it is safe to echo (UT-4). The shell
        also calls this with ``SSEParser.last_event_id`` after events that carried no
        data (a priming event is only an id)."""
        if event_id is not None and is_retainable_event_id(event_id):
            self.last_event_id = event_id


class HttpSessionState:
    """Per-connection HTTP state of a handshake-era session.

    Holds the negotiated version (sent as ``MCP-Protocol-Version`` after initialize),
    the ``Mcp-Session-Id`` the server assigned and the server's reconnect advice. Each
    SSE stream's resumption cursor is its own :class:`SseStream`, held by whoever reads
    that stream.
    """

    # Plain and slotted for the same reason as SseStream.
    __slots__ = ("configured_headers", "protocol_version", "reconnect_delay", "session_id")

    def __init__(
        self,
        configured_headers: Mapping[str, str] | None = None,
        protocol_version: str | None = None,
        session_id: str | None = None,
        reconnect_delay: float = DEFAULT_RECONNECT_DELAY,
    ) -> None:
        self.configured_headers: Mapping[str, str] = (
            {} if configured_headers is None else configured_headers
        )
        self.protocol_version = protocol_version
        self.session_id = session_id
        self.reconnect_delay = reconnect_delay

    def __repr__(self) -> str:
        # The configured headers may hold credentials (Authorization): not shown.
        return (
            f"HttpSessionState(protocol_version={self.protocol_version!r}, "
            f"session_id={self.session_id!r}, reconnect_delay={self.reconnect_delay!r})"
        )

    def _base(self) -> list[tuple[str, str]]:
        headers = [(k, v) for k, v in self.configured_headers.items() if k.lower() not in _OWNED]
        if self.protocol_version is not None:
            headers.append(("MCP-Protocol-Version", self.protocol_version))
        if self.session_id is not None:
            headers.append(("Mcp-Session-Id", self.session_id))
        return headers

    def post_headers(self, *, streamable: bool = True, gzip: bool = False) -> list[tuple[str, str]]:
        """Headers of a POST carrying one JSON-RPC message."""
        headers = [
            ("Accept", ACCEPT_BOTH if streamable else "application/json"),
            ("Content-Type", "application/json"),
        ]
        if gzip:
            headers.append(("Accept-Encoding", "gzip"))
        return headers + self._base()

    def get_headers(self, stream: SseStream | None = None) -> list[tuple[str, str]]:
        """Headers of a GET opening an SSE stream, or resuming ``stream`` with its own
        last event id (none yet: the GET opens it afresh)."""
        headers = [("Accept", ACCEPT_SSE), ("Cache-Control", "no-cache")]
        if stream is not None and stream.last_event_id is not None:
            headers.append(("Last-Event-ID", stream.last_event_id))
        return headers + self._base()

    def delete_headers(self) -> list[tuple[str, str]]:
        return self._base()

    def capture_session(self, headers: Iterable[tuple[str, str]]) -> None:
        """Take ``Mcp-Session-Id`` from the initialize response (visible ASCII only:
        anything else would be unsafe to echo in a header)."""
        for name, value in headers:
            if name.lower() == "mcp-session-id":
                if _valid_session_id(value):
                    self.session_id = value
                return

    def note_event(self, event: SSEEvent, stream: SseStream) -> None:
        """Track resumption state from an SSE event of ``stream``: its last retainable id
        (UT-4) and the server's ``retry`` advice, floored (UT-3)."""
        stream.note_id(event.id)
        self.note_retry(event.retry)

    def note_retry(self, retry_ms: int | None) -> None:
        """Honour a ``retry:`` value in milliseconds (an event's, or ``SSEParser.retry``
        for one that came in an event the stream cut off), clamped to
        [MIN_RECONNECT_DELAY, MAX_RECONNECT_DELAY] seconds (UT-3)."""
        if retry_ms is not None:
            self.reconnect_delay = min(
                MAX_RECONNECT_DELAY, max(MIN_RECONNECT_DELAY, retry_ms / 1000)
            )

    def reset_session(self) -> None:
        """The session expired (404): forget it. Its streams' cursors die with the
        readers that hold them (a new session opens new streams)."""
        self.session_id = None
        self.protocol_version = None
