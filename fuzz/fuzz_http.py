"""Fuzz target: HTTP response rules (``mcp_proto.http``).

Feeds, chosen from the bytes: a status code, a ``Content-Type``, a response body, a
``WWW-Authenticate`` value (the Bearer challenge parser), an ``Mcp-Session-Id``, a legacy
``endpoint`` event and a ``retry:`` value, as a server would send them.

Contract: ``classify_response`` returns a ``ResponseKind``; ``error_for_response`` returns
(never raises) an ``MCPError`` that names the request's method when it is a
``ServerError``, and a 403 challenge gives ``InsufficientScopeError`` only for Bearer
``error="insufficient_scope"``; ``resolve_sse_endpoint`` returns a same-origin URL of
visible ASCII or raises ``ConnectionError``; a captured session id is visible ASCII and
bounded; the reconnect delay stays clamped.
"""

from __future__ import annotations

import json

from _fuzzlib import Reader, Target

from mcp_proto.errors import ConnectionError, InsufficientScopeError, MCPError, ServerError
from mcp_proto.http import (
    MAX_RECONNECT_DELAY,
    MAX_SESSION_ID_LENGTH,
    MIN_RECONNECT_DELAY,
    HttpSessionState,
    ResponseKind,
    classify_response,
    error_for_response,
    resolve_sse_endpoint,
    same_origin,
)

STATUSES = (200, 202, 204, 301, 400, 401, 403, 404, 405, 406, 409, 422, 500, 502, 503, 599)
CONTENT_TYPES = (
    None,
    "",
    "application/json",
    "Application/JSON; charset=utf-8",
    "text/event-stream",
    "text/event-stream;charset=utf-8",
    "text/html",
    ";",
)
CHALLENGE_PARTS = (
    "Bearer",
    "bearer",
    "Basic",
    "Digest",
    " ",
    ",",
    ", ",
    "=",
    '"',
    "\\",
    "error",
    "error=",
    'error="insufficient_scope"',
    "error=insufficient_scope",
    "scope=",
    'scope="files:read files:write"',
    "scope=files:read",
    'error_description="a, \\"quoted\\" text"',
    'realm="mcp"',
    "token68==",
    "\t",
)
METHODS = (None, "tools/call", "tools/list", "initialize", "ping")
STREAM_URLS = ("http://127.0.0.1:8000/sse", "https://example.com/a/b?x=1", "http://[::1]:1/")
ENDPOINT_PARTS = (
    "/",
    "//",
    "messages",
    "?",
    "session=",
    "!",
    "~",
    "..",
    "http:",
    "https://x",
    "127.0.0.1:8000",
    "#",
    "%2F",
    "@",
    ":",
    "\\",
    " ",
    "\r\n",
    "\x7f",
    "é",
    "[",
)


def _body(reader: Reader) -> bytes:
    kind = reader.below(4)
    if kind == 0:
        return reader.take(reader.below(64))
    error: dict[str, object] = {}
    if reader.flag():
        error["code"] = reader.choice((-32020, -32021, -32022, -32603, -1, 2**70, "x", True))
    if reader.flag():
        error["message"] = reader.choice(("boom", "", None, 5, "a" * 300))
    if reader.flag():
        error["data"] = reader.choice(({"s": [1]}, None, [1, 2]))
    message = {"jsonrpc": reader.choice(("2.0", "1.0")), "id": 1, "error": error}
    if kind == 2:
        return json.dumps(message).encode()[: reader.below(200) + 1]
    return json.dumps(message).encode()


def check(data: bytes) -> None:
    reader = Reader(data)
    status = reader.choice(STATUSES) if reader.flag() else reader.below(1000)
    content_type = reader.choice(CONTENT_TYPES)
    sent_session = reader.flag()
    kind = classify_response(status, content_type, sent_session=sent_session)
    assert isinstance(kind, ResponseKind)

    method = reader.choice(METHODS)
    challenge = "".join(reader.choice(CHALLENGE_PARTS) for _ in range(reader.below(12)))
    if reader.below(8) == 0:
        challenge = reader.text(64)
    body = _body(reader)
    if not 200 <= status < 300:
        error = error_for_response(status, body, method=method, www_authenticate=challenge)
        assert isinstance(error, MCPError)
        if isinstance(error, ServerError):
            assert error.method == method
        if isinstance(error, InsufficientScopeError):
            assert status == 403 and "insufficient_scope" in challenge
            for value in (error.scope, error.error_description):
                assert value is None or isinstance(value, str)
        elif status in (401, 403):
            assert isinstance(error, ConnectionError)
            assert str(error) == f"Authorization failed: HTTP {status}"
        str(error)

    state = HttpSessionState()
    session_id = reader.text(16) if reader.flag() else reader.choice(("a", "!", "", " ", "~"))
    state.capture_session([("MCP-SESSION-ID" if reader.flag() else "mcp-session-id", session_id)])
    if state.session_id is not None:
        assert 0 < len(state.session_id) <= MAX_SESSION_ID_LENGTH
        assert all(0x21 <= ord(c) <= 0x7E for c in state.session_id)
    state.note_retry(reader.choice((0, 1, 99, 100, 30_000, 10**15)) * (1 + reader.below(4)))
    assert MIN_RECONNECT_DELAY <= state.reconnect_delay <= MAX_RECONNECT_DELAY

    stream_url = reader.choice(STREAM_URLS)
    endpoint = "".join(reader.choice(ENDPOINT_PARTS) for _ in range(reader.below(8)))
    if reader.below(4) == 0:
        endpoint = reader.text(48)
    try:
        url = resolve_sse_endpoint(stream_url, endpoint)
    except ConnectionError as exc:
        assert str(exc).startswith("the server's endpoint event")
    else:
        assert same_origin(stream_url, url)
        assert all(0x21 <= ord(c) < 0x7F for c in url)
    assert isinstance(same_origin(reader.text(24), reader.text(24)), bool)


TARGET = Target(
    name="http",
    description="status, content type, body, WWW-Authenticate, session id, endpoint, retry",
    check=check,
    seeds=(
        b"\x01\x06\x03\x00\x01\x02" + bytes(range(1, 40)),
        b"\x01\x0c\x00\x00\x02\x03\x04\x01\x02\x0c\x0e\x01",
        b"\x00\x01\xf7\x02\x01\x03" + b"\x07" * 30,
    ),
    max_len=512,
)

if __name__ == "__main__":
    from run import main

    main(["http"])
