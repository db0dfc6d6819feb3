"""Issue 9 items 3 and 4, in the core: typed errors from facts, never from text.

* an HTTP 401/403 becomes ``UnauthorizedError`` (or ``InsufficientScopeError``) carrying
  the parsed Bearer challenge;
* an expired session is the core's ``SessionExpiredError``;
* the retry table decides by type, so an error's text changes nothing;
* ``targets.may_fall_back`` decides, from the same facts, whether ``connect`` may try
  the next transport: never after an answer that proves an MCP server is there.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_proto.errors import (
    ConnectionError,
    IncompatibleServerError,
    InsufficientScopeError,
    MCPError,
    RemoteProtocolError,
    RequestTimeoutError,
    ServerError,
    SessionExpiredError,
    TransientServerError,
    TransportError,
    UnauthorizedError,
)
from mcp_proto.http import (
    ResponseKind,
    classify_response,
    error_for_response,
    is_retryable,
    session_expired_error,
    unauthorized_error,
)
from mcp_proto.session import Session
from mcp_proto.targets import may_fall_back
from mcp_proto.types import Implementation

CHALLENGE = (
    'Bearer resource_metadata="https://as.example/.well-known/oauth-protected-resource", '
    'scope="a b", error="invalid_token"'
)


def rpc_error_body(code: int = -32001, message: str = "denied") -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": message}}
    ).encode()


# ------------------------------------------------------------ 401/403 → typed, with fields


@pytest.mark.parametrize(
    ("status", "challenge", "cls", "fields"),
    [
        (
            401,
            CHALLENGE,
            UnauthorizedError,
            (
                "https://as.example/.well-known/oauth-protected-resource",
                "a b",
                "invalid_token",
                None,
            ),
        ),
        (401, None, UnauthorizedError, (None, None, None, None)),
        (401, 'Basic realm="x"', UnauthorizedError, (None, None, None, None)),
        # Another scheme's parameters are not Bearer's; Bearer's are found after it.
        (
            401,
            'Basic realm="x", error="nope", Bearer error="invalid_token", '
            'error_description="expired, renew"',
            UnauthorizedError,
            (None, None, "invalid_token", "expired, renew"),
        ),
        # 401 with insufficient_scope is still a 401 (RFC 6750 § 3.1: that error is a 403).
        (
            401,
            'Bearer error="insufficient_scope", scope="s"',
            UnauthorizedError,
            (None, "s", "insufficient_scope", None),
        ),
        (
            403,
            'Bearer error="insufficient_scope", scope="files:read", '
            'resource_metadata="https://r/.well-known/oauth-protected-resource"',
            InsufficientScopeError,
            (
                "https://r/.well-known/oauth-protected-resource",
                "files:read",
                "insufficient_scope",
                None,
            ),
        ),
        (
            403,
            'Bearer error="invalid_token"',
            UnauthorizedError,
            (None, None, "invalid_token", None),
        ),
        (403, None, UnauthorizedError, (None, None, None, None)),
    ],
)
def test_401_and_403_become_typed_errors_with_the_challenge(
    status: int, challenge: str | None, cls: type[UnauthorizedError], fields: tuple[Any, ...]
) -> None:
    for body in (b"", b"<html>denied</html>", rpc_error_body()):
        error = error_for_response(status, body, method="initialize", www_authenticate=challenge)
        assert type(error) is cls
        assert isinstance(error, ConnectionError)  # §B1: authorization failed
        assert not isinstance(error, ServerError)
        assert error.status == status
        assert (
            error.resource_metadata,
            error.scope,
            error.error,
            error.error_description,
        ) == fields
        assert str(error).startswith(f"Authorization failed: HTTP {status}")
        assert not is_retryable("tools/list", error)
    assert type(unauthorized_error(status, challenge)) is cls


def test_challenge_text_never_reaches_the_message() -> None:
    hostile = 'Bearer error="invalid_token\\r\\nX: y", error_description="click http://evil"'
    error = unauthorized_error(401, hostile)
    assert str(error) == "Authorization failed: HTTP 401"
    assert error.error_description == "click http://evil"


# ------------------------------------------------------------ expired session


def test_404_to_our_session_id_is_a_session_expired_error() -> None:
    assert classify_response(404, "text/plain", sent_session=True) is ResponseKind.SESSION_EXPIRED
    assert classify_response(404, "text/plain", sent_session=False) is ResponseKind.CLIENT_ERROR
    error = session_expired_error("srv", "tools/list")
    assert type(error) is SessionExpiredError
    assert isinstance(error, ConnectionError)
    assert str(error) == "server 'srv': the session expired during tools/list"
    # A notification or the GET stream has no method to name (a mutation-run survivor).
    assert str(session_expired_error("srv", None)) == "server 'srv': the session expired"


@pytest.mark.parametrize("method", ["tools/list", "resources/read", "ping", "prompts/get"])
def test_an_expired_session_is_re_sent_by_type(method: str) -> None:
    assert is_retryable(method, session_expired_error("srv", method))


@pytest.mark.parametrize("method", ["tools/call", "initialize"])
def test_an_expired_session_never_re_sends_a_side_effect(method: str) -> None:
    assert not is_retryable(method, session_expired_error("srv", method))


# ------------------------------------------------------------ retry decisions use types


def test_retry_table_ignores_message_text() -> None:
    # Before issue 9 a ConnectionError whose text began "Authorization failed" was
    # refused a retry by its text; now only the type counts.
    assert is_retryable("tools/list", ConnectionError("Authorization failed: HTTP 401"))
    assert not is_retryable("tools/list", UnauthorizedError("a server-chosen text"))
    assert not is_retryable("tools/list", InsufficientScopeError("x"))
    assert is_retryable("tools/list", TransportError("Authorization failed: HTTP 401"))


def test_an_incompatible_server_is_not_retried() -> None:
    assert not is_retryable("tools/list", IncompatibleServerError("version 1999-01-01"))


def test_an_unknown_version_in_the_initialize_result_is_an_incompatible_server() -> None:
    session = Session(client_info=Implementation(name="t", version="0"), capabilities={})
    session.start_handshake(now=0.0, timeout=10.0)
    with pytest.raises(IncompatibleServerError) as info:
        session.complete_handshake({"protocolVersion": "1999-01-01", "capabilities": {}})
    assert info.value.protocol_version == "1999-01-01"
    assert isinstance(info.value, ConnectionError)


def test_a_non_object_initialize_result_is_an_incompatible_server() -> None:
    session = Session(client_info=Implementation(name="t", version="0"), capabilities={})
    session.start_handshake(now=0.0, timeout=10.0)
    with pytest.raises(IncompatibleServerError) as info:
        session.complete_handshake(["not", "an", "object"])
    assert info.value.protocol_version is None


# ------------------------------------------------------------ connect: may it fall back?


def _http(status: int, body: bytes = b"", challenge: str | None = None) -> MCPError:
    return error_for_response(status, body, method="initialize", www_authenticate=challenge)


# (what the try met, the error the shell got, falls back?)
FALLBACK_MATRIX: list[tuple[str, MCPError, bool]] = [
    # Answers that prove an MCP server is there: never fall back.
    ("401 with a Bearer challenge", _http(401, b"", CHALLENGE), False),
    ("401 without a challenge", _http(401), False),
    ("403", _http(403), False),
    ("403 insufficient_scope", _http(403, b"", 'Bearer error="insufficient_scope"'), False),
    ("JSON-RPC error response to initialize", ServerError("bad params", code=-32602), False),
    ("4xx with a JSON-RPC error body", _http(400, rpc_error_body(-32600)), False),
    ("404 with a JSON-RPC error body", _http(404, rpc_error_body(-32001)), False),
    ("5xx with a JSON-RPC error body", _http(500, rpc_error_body(-32603)), False),
    ("refused protocol version (-32022)", _http(400, rpc_error_body(-32022)), False),
    ("the session expired", session_expired_error("s", "initialize"), False),
    ("initialize result names an unknown version", IncompatibleServerError("x"), False),
    # Answers that do not: the URL does not serve this transport.
    ("connection refused", TransportError("connection refused"), True),
    ("404", _http(404, b"Not Found"), True),
    ("405", _http(405, b"Method Not Allowed"), True),
    ("406", _http(406, b"Not Acceptable"), True),
    ("415", _http(415, b"Unsupported Media Type"), True),
    ("400 with a text body", _http(400, b"Bad Request"), True),
    ("502 with an HTML page", _http(502, b"<html>bad gateway</html>"), True),
    ("200 with an HTML page", RemoteProtocolError("unexpected content type"), True),
    ("SSE GET answered with no event stream", ConnectionError("no endpoint"), True),
    ("no answer in time", RequestTimeoutError("timed out"), True),
]


@pytest.mark.parametrize(
    ("error", "falls_back"),
    [(error, falls_back) for _, error, falls_back in FALLBACK_MATRIX],
    ids=[what for what, _, _ in FALLBACK_MATRIX],
)
def test_may_fall_back_matrix(error: MCPError, falls_back: bool) -> None:
    assert may_fall_back(error) is falls_back
    # Once the server answered initialize, nothing after it may fall back.
    assert may_fall_back(error, server_answered=True) is False


def test_may_fall_back_ignores_message_text() -> None:
    assert may_fall_back(ConnectionError("Authorization failed: HTTP 401"))
    assert not may_fall_back(UnauthorizedError("HTTP 404 from the server"))
    assert may_fall_back(ServerError("HTTP 401 from the server"))
    assert not may_fall_back(TransientServerError("HTTP 503", code=-32603))
