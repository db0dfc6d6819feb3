"""The HTTP rules of mcp_proto.http, each a table or a property (no HTTP is done).

Spec: 2025-11-25 Basic § Transports (Streamable HTTP: sending messages, session
management, resumability, protocol version header, backwards compatibility) and the
requirement rows HTTP/SHTTP/SSE/SESS/RETRY/SIZE/CUST/UT.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto._util import NEED_DATA
from mcp_proto.errors import (
    ConnectionError,
    HeaderMismatchError,
    InsufficientScopeError,
    LineTooLongError,
    MCPError,
    MissingRequiredClientCapabilityError,
    RemoteProtocolError,
    RequestTimeoutError,
    ResponseTooLargeError,
    ServerError,
    TransientServerError,
    TransportError,
    UnauthorizedError,
    UnsupportedProtocolVersionError,
)
from mcp_proto.http import (
    ACCEPT_BOTH,
    DEFAULT_RECONNECT_DELAY,
    MAX_RECONNECT_DELAY,
    MIN_RECONNECT_DELAY,
    HttpSessionState,
    ResponseKind,
    SseStream,
    backoff_delay,
    classify_response,
    error_for_response,
    is_retryable,
    resolve_sse_endpoint,
    same_origin,
)
from mcp_proto.sse import SSEEvent, SSEParser

JSON = "application/json"
SSE = "text/event-stream"


def rpc_error(
    code: Any, message: Any = "nope", data: Any = None, *, with_id: bool = False
) -> bytes:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    body: dict[str, Any] = {"jsonrpc": "2.0", "error": err}
    if with_id:
        body["id"] = 1
    return json.dumps(body).encode()


def names(headers: list[tuple[str, str]]) -> list[str]:
    return [k.lower() for k, _ in headers]


def header(headers: list[tuple[str, str]], name: str) -> str | None:
    values = [v for k, v in headers if k.lower() == name.lower()]
    assert len(values) <= 1, f"{name} sent {len(values)} times"
    return values[0] if values else None


# ---------------------------------------------------------------- classify_response


@pytest.mark.parametrize(
    ("status", "content_type", "sent_session", "kind"),
    [
        # "the server MUST return HTTP status code 202 Accepted with no body"
        (202, None, False, ResponseKind.ACCEPTED),
        (202, JSON, True, ResponseKind.ACCEPTED),
        (204, None, True, ResponseKind.ACCEPTED),
        (200, None, False, ResponseKind.ACCEPTED),  # an empty 200 to a notification
        # "either return Content-Type: text/event-stream ... or application/json"
        (200, JSON, False, ResponseKind.JSON),
        (200, "application/json; charset=utf-8", True, ResponseKind.JSON),
        (200, "Application/JSON", False, ResponseKind.JSON),
        (200, "  application/json  ;charset=UTF-8", False, ResponseKind.JSON),
        (201, JSON, False, ResponseKind.JSON),
        (200, SSE, False, ResponseKind.SSE),
        (200, "text/event-stream; charset=utf-8", True, ResponseKind.SSE),
        (200, "TEXT/EVENT-STREAM", False, ResponseKind.SSE),
        (200, "text/html", False, ResponseKind.UNEXPECTED),
        (200, "application/jsonx", False, ResponseKind.UNEXPECTED),
        (200, "text/plain", False, ResponseKind.UNEXPECTED),
        (201, None, False, ResponseKind.UNEXPECTED),
        # "When a client receives HTTP 404 in response to a request containing an
        # MCP-Session-Id, it MUST start a new session"
        (404, None, True, ResponseKind.SESSION_EXPIRED),
        (404, JSON, True, ResponseKind.SESSION_EXPIRED),
        (404, None, False, ResponseKind.CLIENT_ERROR),  # no session: a plain 4xx
        (404, JSON, False, ResponseKind.CLIENT_ERROR),
        (401, None, False, ResponseKind.UNAUTHORIZED),
        (401, JSON, True, ResponseKind.UNAUTHORIZED),
        (403, JSON, False, ResponseKind.UNAUTHORIZED),
        (400, JSON, True, ResponseKind.CLIENT_ERROR),
        (405, None, False, ResponseKind.CLIENT_ERROR),  # GET stream not offered
        (409, None, False, ResponseKind.CLIENT_ERROR),
        (429, None, False, ResponseKind.CLIENT_ERROR),
        (500, None, False, ResponseKind.SERVER_ERROR),
        (502, "text/html", True, ResponseKind.SERVER_ERROR),
        (503, JSON, False, ResponseKind.SERVER_ERROR),
        (599, None, False, ResponseKind.SERVER_ERROR),
        (100, None, False, ResponseKind.UNEXPECTED),
        (301, None, False, ResponseKind.UNEXPECTED),
        (307, JSON, True, ResponseKind.UNEXPECTED),
        (600, None, False, ResponseKind.UNEXPECTED),
    ],
)
def test_classify_response(
    status: int, content_type: str | None, sent_session: bool, kind: ResponseKind
) -> None:
    assert classify_response(status, content_type, sent_session=sent_session) is kind


_CONTENT_TYPES = [None, "", JSON, SSE, "text/html", "application/json; charset=utf-8"]


def _expected_kind(status: int, content_type: str | None, sent_session: bool) -> ResponseKind:
    """The rules restated independently, for the sweep below."""
    media = (content_type or "").split(";")[0].strip().lower()
    if status in (202, 204):
        return ResponseKind.ACCEPTED
    if 200 <= status <= 299:
        return {
            JSON: ResponseKind.JSON,
            SSE: ResponseKind.SSE,
            "": ResponseKind.ACCEPTED if status == 200 else ResponseKind.UNEXPECTED,
        }.get(media, ResponseKind.UNEXPECTED)
    if status == 404:
        return ResponseKind.SESSION_EXPIRED if sent_session else ResponseKind.CLIENT_ERROR
    if status in (401, 403):
        return ResponseKind.UNAUTHORIZED
    if 400 <= status <= 499:
        return ResponseKind.CLIENT_ERROR
    if 500 <= status <= 599:
        return ResponseKind.SERVER_ERROR
    return ResponseKind.UNEXPECTED


def test_classify_every_status_content_type_and_session() -> None:
    for status in range(100, 1000):
        for content_type in _CONTENT_TYPES:
            for sent_session in (False, True):
                got = classify_response(status, content_type, sent_session=sent_session)
                assert got is _expected_kind(status, content_type, sent_session), (
                    status,
                    content_type,
                )


# ---------------------------------------------------------------- error_for_response


@pytest.mark.parametrize(
    ("code", "cls"),
    [
        (-32020, HeaderMismatchError),
        (-32021, MissingRequiredClientCapabilityError),
        (-32022, UnsupportedProtocolVersionError),
        (-32600, ServerError),
        (-32602, ServerError),
        (-32000, ServerError),
        (42, ServerError),
    ],
)
@pytest.mark.parametrize("status", [400, 404, 405, 409, 422])
def test_4xx_with_a_jsonrpc_error_keeps_code_data_and_class(
    status: int, code: int, cls: type[ServerError]
) -> None:
    # CUST-2: "a protocol rejection keeps its code, data and typed error class".
    for with_id in (False, True):  # "a JSON-RPC error response that has no id" (or one)
        error = error_for_response(
            status,
            rpc_error(code, "mismatch", {"header": "Mcp-Method"}, with_id=with_id),
            method="tools/call",
        )
        assert type(error) is cls
        assert error.code == code
        assert error.message == "mismatch"
        assert error.data == {"header": "Mcp-Method"}
        assert error.method == "tools/call"
        assert not isinstance(error, TransientServerError)
        assert not is_retryable("tools/list", error)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"Bad Request",
        b"<html>400</html>",
        b"\xff\xfe\x00garbage",
        b"{",
        b"[]",
        b"null",
        b'{"error": {"code": -32020, "message": "no jsonrpc member"}}',
        b'{"jsonrpc": "1.0", "error": {"code": -32020, "message": "x"}}',
        b'{"jsonrpc": "2.0", "error": "a string"}',
        b'{"jsonrpc": "2.0", "error": [1, 2]}',
        b'{"jsonrpc": "2.0", "result": {}}',
        b"[" * 100_000 + b"]" * 100_000,  # no RecursionError escapes
        json.dumps(
            {"jsonrpc": "2.0", "error": {"code": -32020, "message": "x" * (1024 * 1024)}}
        ).encode(),
    ],
    ids=lambda b: repr(b[:30]),
)
def test_4xx_without_a_usable_jsonrpc_error_is_a_plain_server_error(body: bytes) -> None:
    error = error_for_response(400, body, method="tools/list")
    assert type(error) is ServerError
    assert error.code is None
    assert "HTTP 400" in str(error)
    assert not is_retryable("tools/list", error)


@pytest.mark.parametrize(
    ("error_member", "code", "message"),
    [
        ({"code": True, "message": "bool is not a code"}, None, "bool is not a code"),
        ({"code": "-32020", "message": "string code"}, None, "string code"),
        ({"code": -32020, "message": 7}, -32020, "server error"),
        ({}, None, "server error"),
    ],
)
def test_4xx_with_a_malformed_error_object_is_still_typed_safely(
    error_member: Any, code: int | None, message: str
) -> None:
    body = json.dumps({"jsonrpc": "2.0", "error": error_member}).encode()
    error = error_for_response(400, body, method=None)
    assert isinstance(error, ServerError)
    assert error.code == code
    assert error.message == message


@pytest.mark.parametrize("status", [500, 501, 502, 503, 504, 599])
def test_5xx_is_a_transient_server_error(status: int) -> None:
    error = error_for_response(status, b"<html>oops</html>", method="tools/list")
    assert type(error) is TransientServerError
    assert isinstance(error, ServerError)  # RETRY-3: existing ServerError handlers catch it
    assert error.code is None
    assert f"HTTP {status}" in str(error)
    assert is_retryable("tools/list", error)
    assert not is_retryable("tools/call", error)  # RETRY-4


def test_5xx_with_a_jsonrpc_body_keeps_code_and_data_but_stays_transient() -> None:
    error = error_for_response(
        503, rpc_error(-32020, "busy", {"retry": True}), method="resources/read"
    )
    assert type(error) is TransientServerError
    assert (error.code, error.message, error.data, error.method) == (
        -32020,
        "busy",
        {"retry": True},
        "resources/read",
    )
    assert is_retryable("resources/read", error)


@pytest.mark.parametrize("status", [401, 403])
def test_401_and_403_are_authorization_failures(status: int) -> None:
    for body in (b"", rpc_error(-32001, "denied")):
        error = error_for_response(status, body, method="tools/list")
        # Issue 9 item 4: a typed UnauthorizedError (still a ConnectionError, §B1).
        assert type(error) is UnauthorizedError
        assert isinstance(error, ConnectionError)
        assert error.status == status
        assert str(error) == f"Authorization failed: HTTP {status}"
        assert not isinstance(error, ServerError)
        assert not is_retryable("tools/list", error)


@pytest.mark.parametrize(
    ("challenge", "scope", "description"),
    [
        (
            'Bearer error="insufficient_scope", scope="files:read files:write"',
            "files:read files:write",
            None,
        ),
        ('Bearer error="insufficient_scope"', None, None),
        ("Bearer error=insufficient_scope, scope=files:read", "files:read", None),
        ('bearer error="insufficient_scope", scope="a"', "a", None),  # scheme is case-insensitive
        ('BEARER Error="insufficient_scope", SCOPE="a"', "a", None),  # so are parameter names
        (
            'Bearer realm="mcp", error="insufficient_scope", scope="a b", '
            'error_description="Needs a, b and \\"c\\"", resource_metadata="https://x/.well-known/oauth"',
            "a b",
            'Needs a, b and "c"',
        ),
        ('Basic realm="x", Bearer error="insufficient_scope", scope="s"', "s", None),
        ('Negotiate YWJjZA==, Bearer error="insufficient_scope", scope="s"', "s", None),
        ('Bearer error="insufficient_scope" scope="s"', "s", None),  # spaces, no comma
        ('Bearer  error = "insufficient_scope" ,  scope = "s" ', "s", None),
    ],
)
def test_403_insufficient_scope(challenge: str, scope: str | None, description: str | None) -> None:
    error = error_for_response(403, b"", method="tools/call", www_authenticate=challenge)
    assert type(error) is InsufficientScopeError
    assert isinstance(error, ConnectionError)
    assert str(error).startswith("Authorization failed: HTTP 403")
    assert error.scope == scope
    assert error.error_description == description
    assert not is_retryable("tools/list", error)


@pytest.mark.parametrize(
    "challenge",
    [
        None,
        "",
        'Bearer error="invalid_token"',
        'Bearer realm="x"',
        'Basic error="insufficient_scope"',  # another scheme's parameter
        'Basic realm="x", error="insufficient_scope"',
        'Bearer realm="x", Basic error="insufficient_scope"',
        'Bearer error_description="error=\\"insufficient_scope\\""',  # inside a quoted value
        'Bearer error="insufficient_scope_and_more"',
        'Bearer error="insufficient_scope',  # unterminated quote
        "Bearer",
        ",,,",
        '"',
    ],
)
def test_403_without_a_bearer_insufficient_scope_is_a_plain_auth_failure(
    challenge: str | None,
) -> None:
    error = error_for_response(403, b"", method="tools/call", www_authenticate=challenge)
    assert type(error) is UnauthorizedError
    assert str(error) == "Authorization failed: HTTP 403"


def test_insufficient_scope_only_on_403() -> None:
    challenge = 'Bearer error="insufficient_scope", scope="s"'
    assert (
        type(error_for_response(401, b"", method=None, www_authenticate=challenge))
        is UnauthorizedError
    )


@settings(max_examples=300, deadline=None)
@given(challenge=st.text(max_size=80), status=st.sampled_from([401, 403]))
def test_any_www_authenticate_gives_a_connection_error(challenge: str, status: int) -> None:
    error = error_for_response(status, b"", method=None, www_authenticate=challenge)
    assert isinstance(error, ConnectionError)


@settings(max_examples=300, deadline=None)
@given(status=st.integers(min_value=300, max_value=999), body=st.binary(max_size=200))
def test_error_for_response_never_raises(status: int, body: bytes) -> None:
    error = error_for_response(status, body, method="ping")
    assert isinstance(error, MCPError)
    if 500 <= status <= 599:
        assert isinstance(error, TransientServerError)
    elif status in (401, 403, 407):  # 407: the proxy's (ProxyAuthenticationError)
        assert isinstance(error, ConnectionError)
    else:
        assert isinstance(error, ServerError) and not isinstance(error, TransientServerError)


# ---------------------------------------------------------------- is_retryable (RETRY-1..5)


IDEMPOTENT = [
    "tools/list",
    "resources/read",
    "resources/list",
    "prompts/get",
    "ping",
    "completion/complete",
]

RETRIED: list[BaseException] = [
    TransportError("connection reset"),
    RemoteProtocolError("malformed gzip body"),
    ConnectionError("could not connect"),
    TransientServerError("HTTP 503 from the server"),
    error_for_response(502, b"", method=None),
]
NEVER: list[BaseException] = [
    RequestTimeoutError("timed out"),  # RETRY-5
    ResponseTooLargeError("too large"),
    LineTooLongError("line too long"),
    ServerError("a JSON-RPC error", code=-32602),  # RETRY-2
    HeaderMismatchError("mismatch", code=-32020),
    error_for_response(400, b"", method=None),
    error_for_response(404, b"", method=None),
    error_for_response(429, b"", method=None),
    error_for_response(422, rpc_error(-32602), method=None),
    error_for_response(401, b"", method=None),
    error_for_response(403, b"", method=None),
    InsufficientScopeError("Authorization failed: HTTP 403 (insufficient_scope)"),
    ValueError("not an MCP error"),
    OSError("a raw socket error the shell forgot to wrap"),
]


@pytest.mark.parametrize("method", IDEMPOTENT)
@pytest.mark.parametrize("error", RETRIED, ids=repr)
def test_transport_errors_and_5xx_are_retried(method: str, error: BaseException) -> None:
    assert is_retryable(method, error)


@pytest.mark.parametrize("method", [*IDEMPOTENT, "tools/call"])
@pytest.mark.parametrize("error", NEVER, ids=repr)
def test_never_retried(method: str, error: BaseException) -> None:
    assert not is_retryable(method, error)


@pytest.mark.parametrize("error", RETRIED + NEVER, ids=repr)
def test_tools_call_and_initialize_are_never_retried(error: BaseException) -> None:
    # RETRY-4: "tools/call is never retried automatically" (outcome unknown).
    assert not is_retryable("tools/call", error)
    assert not is_retryable("initialize", error)


# ---------------------------------------------------------------- backoff_delay (RETRY-1)


def test_backoff_doubles_from_the_base() -> None:
    assert [backoff_delay(n, 0.5) for n in range(1, 6)] == [0.5, 1.0, 2.0, 4.0, 8.0]


def test_backoff_is_capped_after_jitter() -> None:
    assert backoff_delay(10, 1.0) == MAX_RECONNECT_DELAY
    assert backoff_delay(10, 1.0, jitter=0.99) == MAX_RECONNECT_DELAY
    assert backoff_delay(2, 1.0, jitter=0.25) == 2.5


@pytest.mark.parametrize("attempt", [1025, 5000, 10**9])
def test_backoff_for_a_huge_attempt_number_does_not_overflow(attempt: int) -> None:
    assert backoff_delay(attempt, 0.1) == MAX_RECONNECT_DELAY


def test_backoff_attempt_is_1_based() -> None:
    with pytest.raises(ValueError):
        backoff_delay(0, 1.0)


@given(
    base=st.floats(min_value=0.0, max_value=MAX_RECONNECT_DELAY),
    attempt=st.integers(min_value=1, max_value=3000),
    jitter=st.floats(min_value=0.0, max_value=0.999),
)
def test_backoff_is_bounded_and_monotonic(base: float, attempt: int, jitter: float) -> None:
    delay = backoff_delay(attempt, base, jitter=jitter)
    assert base <= delay <= MAX_RECONNECT_DELAY or delay == MAX_RECONNECT_DELAY
    assert backoff_delay(attempt + 1, base, jitter=jitter) >= delay


# ---------------------------------------------------------------- same_origin (RFC 6454)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://example.com/sse", "http://example.com/messages?x=1"),
        ("HTTP://Example.COM/sse", "http://example.com/"),
        ("http://example.com/", "http://example.com:80/"),
        ("https://example.com/", "https://example.com:443/x"),
        ("http://127.0.0.1:8000/sse", "http://127.0.0.1:8000/messages/"),
        ("http://[::1]:8000/sse", "http://[::1]:8000/m"),
        ("http://user:pw@example.com/", "http://example.com/"),  # userinfo is not origin
        ("http://example.com/a#frag", "http://example.com/b"),
    ],
)
def test_same_origin(a: str, b: str) -> None:
    assert same_origin(a, b)
    assert same_origin(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://example.com/", "https://example.com/"),  # scheme
        ("http://example.com:443/", "https://example.com/"),
        ("https://example.com:80/", "http://example.com/"),
        ("http://example.com/", "http://example.com:8080/"),  # port
        ("http://example.com/", "http://evil.example/"),  # host
        ("http://example.com/", "http://example.com.evil.example/"),
        ("http://example.com/", "http://example.com@evil.example/"),
        ("http://127.0.0.1:8000/", "http://localhost:8000/"),
        ("http://a:99999/", "http://a:99999/"),  # invalid ports have no origin
        ("http://a:99999/", "http://a:88888/"),
        ("http://a:xyz/", "http://a:xyz/"),
        ("file:///etc/passwd", "file:///etc/passwd"),  # opaque origins equal nothing
        ("javascript:alert(1)", "javascript:alert(1)"),
        ("http:///nohost", "http:///nohost"),
        ("http://[/", "http://[/"),  # urlsplit raises ValueError for these
        ("http://[::1/", "http://[::1/"),
        ("", ""),
    ],
)
def test_not_same_origin(a: str, b: str) -> None:
    assert not same_origin(a, b)
    assert not same_origin(b, a)


# ------------------------------------------------------- resolve_sse_endpoint (SSE-2, UT-5)

BASE = "http://a/b/c/d;p?q"


@pytest.mark.parametrize(
    ("reference", "target"),
    [
        # RFC 3986 § 5.4.1 "Normal Examples" (those that stay on the origin)
        ("g", "http://a/b/c/g"),
        ("./g", "http://a/b/c/g"),
        ("g/", "http://a/b/c/g/"),
        ("/g", "http://a/g"),
        ("?y", "http://a/b/c/d;p?y"),
        ("g?y", "http://a/b/c/g?y"),
        ("#s", "http://a/b/c/d;p?q#s"),
        ("g#s", "http://a/b/c/g#s"),
        ("g?y#s", "http://a/b/c/g?y#s"),
        (";x", "http://a/b/c/;x"),
        ("g;x", "http://a/b/c/g;x"),
        ("g;x?y#s", "http://a/b/c/g;x?y#s"),
        (".", "http://a/b/c/"),
        ("./", "http://a/b/c/"),
        ("..", "http://a/b/"),
        ("../", "http://a/b/"),
        ("../g", "http://a/b/g"),
        ("../..", "http://a/"),
        ("../../", "http://a/"),
        ("../../g", "http://a/g"),
        # § 5.4.2 "Abnormal Examples"
        ("../../../g", "http://a/g"),
        ("../../../../g", "http://a/g"),
        ("/./g", "http://a/g"),
        ("/../g", "http://a/g"),
        ("g.", "http://a/b/c/g."),
        (".g", "http://a/b/c/.g"),
        ("g..", "http://a/b/c/g.."),
        ("..g", "http://a/b/c/..g"),
        ("./../g", "http://a/b/g"),
        ("./g/.", "http://a/b/c/g/"),
        ("g/./h", "http://a/b/c/g/h"),
        ("g/../h", "http://a/b/c/h"),
        ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
        ("g;x=1/../y", "http://a/b/c/y"),
        ("g?y/./x", "http://a/b/c/g?y/./x"),
        ("g#s/../x", "http://a/b/c/g#s/../x"),
        ("http://a/g", "http://a/g"),  # absolute, same origin
        ("http://a:80/g", "http://a:80/g"),
    ],
)
def test_endpoint_resolution_follows_rfc_3986(reference: str, target: str) -> None:
    assert resolve_sse_endpoint(BASE, reference) == target


def test_the_sdk_servers_endpoint() -> None:
    url = resolve_sse_endpoint("http://127.0.0.1:8000/sse", "/messages/?session_id=4f6a0c")
    assert url == "http://127.0.0.1:8000/messages/?session_id=4f6a0c"
    assert resolve_sse_endpoint("http://127.0.0.1:8000/sse", "  /messages/?session_id=1\n") == (
        "http://127.0.0.1:8000/messages/?session_id=1"
    )


@pytest.mark.parametrize(
    "reference",
    [
        "//g",  # RFC 3986 § 5.4.1: a network-path reference, another host
        "g:h",  # another scheme
        "https://evil.example/x",
        "//evil.example/x",
        "http://evil.example/messages",
        "http://127.0.0.1:8001/messages",
        "https://127.0.0.1:8000/messages",
        "http://127.0.0.1:8000@evil.example/x",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "data:text/plain,hi",
    ],
)
def test_endpoint_on_another_origin_is_refused(reference: str) -> None:
    with pytest.raises(ConnectionError, match="another origin"):
        resolve_sse_endpoint("http://127.0.0.1:8000/sse", reference)
    with pytest.raises(ConnectionError, match="another origin"):
        resolve_sse_endpoint(BASE, reference)


@pytest.mark.parametrize(
    "data",
    [
        "",
        "   ",
        "/messages\r\nX-Injected: 1",
        "/messages\nHost: evil.example",
        "/mess\rages",
        "/mess\tages",  # urlsplit would silently delete the tab
        "/messages\x00",
        "/messages?x=a b",
        "/messages\x7f",
        "/messages/\u00e9",
        "//evil.example\t/x",
        "//[",  # urlsplit raises ValueError("Invalid IPv6 URL")
        "http://[::1/x",
    ],
    ids=repr,
)
def test_malformed_endpoint_is_refused(data: str) -> None:
    with pytest.raises(ConnectionError, match="empty or malformed"):
        resolve_sse_endpoint("http://127.0.0.1:8000/sse", data)


@settings(max_examples=500, deadline=None)
@given(
    data=st.one_of(
        st.text(max_size=40),
        st.from_regex(r"\A(https?:)?(//[a-z0-9.:@\[\]]{0,20})?[/a-z0-9.?#;=%-]{0,20}\Z"),
    )
)
def test_an_accepted_endpoint_is_always_same_origin_and_clean(data: str) -> None:
    stream = "http://127.0.0.1:8000/sse"
    try:
        url = resolve_sse_endpoint(stream, data)
    except ConnectionError:
        return
    assert same_origin(stream, url)
    assert all(0x21 <= ord(c) < 0x7F for c in url)


# ---------------------------------------------------------------- HttpSessionState: request heads


def test_post_headers_before_negotiation() -> None:
    state = HttpSessionState()
    headers = state.post_headers()
    # "The client MUST include an Accept header, listing both application/json and
    # text/event-stream"; no MCP-Protocol-Version before it is negotiated; no session.
    assert headers == [("Accept", ACCEPT_BOTH), ("Content-Type", "application/json")]
    assert ACCEPT_BOTH == "application/json, text/event-stream"


def test_post_headers_after_negotiation_and_session() -> None:
    state = HttpSessionState(protocol_version="2025-11-25", session_id="1868a90c")
    headers = state.post_headers()
    assert header(headers, "Accept") == ACCEPT_BOTH
    assert header(headers, "Content-Type") == "application/json"
    assert header(headers, "MCP-Protocol-Version") == "2025-11-25"
    assert header(headers, "Mcp-Session-Id") == "1868a90c"
    assert header(headers, "Accept-Encoding") is None
    assert header(headers, "Last-Event-ID") is None


def test_post_headers_plain_http_and_gzip() -> None:
    state = HttpSessionState()
    assert header(state.post_headers(streamable=False), "Accept") == "application/json"
    assert header(state.post_headers(gzip=True), "Accept-Encoding") == "gzip"  # SHTTP-4


def test_get_headers() -> None:
    state = HttpSessionState(protocol_version="2025-11-25", session_id="s1")
    headers = state.get_headers()
    # "The client MUST include an Accept header, listing text/event-stream"
    assert header(headers, "Accept") == "text/event-stream"
    assert header(headers, "Last-Event-ID") is None
    assert header(headers, "MCP-Protocol-Version") == "2025-11-25"
    assert header(headers, "Mcp-Session-Id") == "s1"
    stream = SseStream(last_event_id="stream-1/42")
    assert header(state.get_headers(stream), "Last-Event-ID") == "stream-1/42"
    assert header(state.get_headers(), "Last-Event-ID") is None
    assert header(state.get_headers(SseStream()), "Last-Event-ID") is None


def test_delete_headers() -> None:
    state = HttpSessionState(
        configured_headers={"Authorization": "Bearer t"},
        protocol_version="2025-11-25",
        session_id="s1",
    )
    headers = state.delete_headers()
    assert sorted(names(headers)) == ["authorization", "mcp-protocol-version", "mcp-session-id"]
    assert header(headers, "Mcp-Session-Id") == "s1"


OWNED = [
    "Accept",
    "content-type",
    "MCP-Protocol-Version",
    "mcp-session-id",
    "MCP-SESSION-ID",
    "Last-Event-ID",
    "Content-Length",
    "Host",
    "Transfer-Encoding",
    "Accept-Encoding",
]


def test_configured_headers_go_on_every_request_except_client_owned_ones() -> None:
    configured = {"Authorization": "Bearer tok", "X-Api-Key": "k"} | {
        name: "forged" for name in OWNED
    }
    state = HttpSessionState(
        configured_headers=configured, protocol_version="2025-11-25", session_id="real"
    )
    stream = SseStream(last_event_id="7")
    for headers in (
        state.post_headers(gzip=True),
        state.get_headers(stream),
        state.delete_headers(),
    ):
        assert header(headers, "Authorization") == "Bearer tok"  # SHTTP-10
        assert header(headers, "X-Api-Key") == "k"
        assert "forged" not in [v for _, v in headers]
        assert len(names(headers)) == len(set(names(headers))), headers
    assert header(state.post_headers(), "Mcp-Session-Id") == "real"


def test_reset_session_forgets_the_session() -> None:
    state = HttpSessionState(
        configured_headers={"Authorization": "Bearer t"},
        protocol_version="2025-11-25",
        session_id="s",
    )
    state.reset_session()
    assert (state.session_id, state.protocol_version) == (None, None)
    # The re-initialize goes out with no session id and no protocol version (SESS-5).
    assert state.post_headers() == [
        ("Accept", ACCEPT_BOTH),
        ("Content-Type", "application/json"),
        ("Authorization", "Bearer t"),
    ]


# ---------------------------------------------------------------- capture_session (SESS-1)


@pytest.mark.parametrize("name", ["Mcp-Session-Id", "mcp-session-id", "MCP-SESSION-ID"])
def test_capture_session(name: str) -> None:
    state = HttpSessionState()
    state.capture_session([("Content-Type", JSON), (name, "1868a90c-JWT.x~!#$")])
    assert state.session_id == "1868a90c-JWT.x~!#$"


@pytest.mark.parametrize(
    "value",
    [
        "",
        "has space",
        "tab\there",
        "crlf\r\nX-Injected: 1",
        "nul\x00",
        "del\x7f",
        "caf\u00e9",
        "x" * 4097,
    ],
    ids=lambda v: repr(v[:20]),
)
def test_invalid_session_ids_are_ignored(value: str) -> None:
    # "The session ID MUST only contain visible ASCII characters (ranging from 0x21 to
    # 0x7E)"; SESS-1 bounds it at 4096 characters.
    state = HttpSessionState()
    state.capture_session([("Mcp-Session-Id", value)])
    assert state.session_id is None
    assert header(state.post_headers(), "Mcp-Session-Id") is None


def test_every_visible_ascii_character_and_the_longest_id_are_accepted() -> None:
    visible = "".join(chr(c) for c in range(0x21, 0x7F))
    state = HttpSessionState()
    state.capture_session([("Mcp-Session-Id", visible)])
    assert state.session_id == visible
    state.capture_session([("Mcp-Session-Id", "x" * 4096)])
    assert state.session_id == "x" * 4096


def test_no_session_header_leaves_no_session() -> None:
    state = HttpSessionState()
    state.capture_session([("Content-Type", JSON)])
    assert state.session_id is None


# ------------------------------------------------------- resumption state (SESS-4, UT-3, UT-4)


@pytest.mark.parametrize(
    ("retry_ms", "delay"),
    [
        (0, MIN_RECONNECT_DELAY),  # UT-3: retry: 0 cannot drive a reconnect loop
        (1, MIN_RECONNECT_DELAY),
        (99, MIN_RECONNECT_DELAY),
        (100, 0.1),
        (1500, 1.5),
        (30_000, 30.0),
        (30_001, MAX_RECONNECT_DELAY),
        (10**15, MAX_RECONNECT_DELAY),
    ],
)
def test_retry_is_honoured_within_the_floor_and_ceiling(retry_ms: int, delay: float) -> None:
    state = HttpSessionState()
    assert state.reconnect_delay == DEFAULT_RECONNECT_DELAY
    state.note_event(SSEEvent("", "", None, retry_ms), SseStream())
    assert state.reconnect_delay == delay
    other = HttpSessionState()
    other.note_retry(retry_ms)
    assert other.reconnect_delay == delay
    assert MIN_RECONNECT_DELAY == 0.1


def test_events_without_retry_keep_the_delay() -> None:
    state = HttpSessionState()
    stream = SseStream()
    state.note_event(SSEEvent("message", "{}", None, 2000), stream)
    state.note_event(SSEEvent("message", "{}", "5"), stream)
    state.note_retry(None)
    assert state.reconnect_delay == 2.0
    assert stream.last_event_id == "5"


@pytest.mark.parametrize(
    "event_id",
    ["x" * 1025, "x" * 2048, "a\r\nX-Injected: 1", "a\nb", "a\x00b", "caf\u00e9", ""],
    ids=lambda v: repr(v[:16]),
)
def test_unretainable_event_ids_are_ignored(event_id: str) -> None:
    # UT-4: CRLF and 2 KB ids are ignored; the last good id stays.
    state = HttpSessionState()
    stream = SseStream()
    state.note_event(SSEEvent("message", "{}", "good-1"), stream)
    state.note_event(SSEEvent("message", "{}", event_id), stream)
    stream.note_id(event_id)
    stream.note_id(None)
    assert stream.last_event_id == "good-1"
    assert header(state.get_headers(stream), "Last-Event-ID") == "good-1"


def test_parser_to_state_retry_zero_and_priming_event() -> None:
    # A stream as the hostile server sends it: a priming event (an id and empty data),
    # retry: 0, then the connection drops mid-event.
    parser = SSEParser()
    state = HttpSessionState(session_id="s")
    parser.receive_data(b'id: ev-1\ndata:\n\nretry: 0\n\nid: ev-2\ndata: {"jsonrpc":')
    parser.receive_data(b"")
    stream = SseStream()
    while isinstance(event := parser.next_event(), SSEEvent):
        state.note_event(event, stream)
    stream.note_id(parser.last_event_id)
    assert state.reconnect_delay == MIN_RECONNECT_DELAY
    assert header(state.get_headers(stream), "Last-Event-ID") == "ev-1"  # not the cut-off ev-2


def test_a_retry_in_a_cut_off_event_still_counts() -> None:
    parser = SSEParser()
    state = HttpSessionState()
    parser.receive_data(b"retry: 5000\ndata: partial")
    parser.receive_data(b"")
    assert parser.next_event() is NEED_DATA
    state.note_retry(parser.retry)
    assert state.reconnect_delay == 5.0
