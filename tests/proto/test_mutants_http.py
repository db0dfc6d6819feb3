"""HTTP rules and pagination behaviour a mutation run showed untested (issue 11).

Each test failed on a surviving mutant of ``mcp_proto/http.py`` or
``mcp_proto/pagination.py`` and passes on the code; the boundaries the run found never
probed (one-character session id, ``!`` in an endpoint URL, the ``retry:`` clamp) are
pinned here, and so are the error messages a user reads first.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_proto.effects import Call, Log, Op
from mcp_proto.errors import (
    ConnectionError,
    InsufficientScopeError,
    RemoteProtocolError,
    ServerError,
    TransientServerError,
)
from mcp_proto.http import (
    MAX_SESSION_ID_LENGTH,
    HttpSessionState,
    ResponseKind,
    backoff_delay,
    classify_response,
    error_for_response,
    resolve_sse_endpoint,
)
from mcp_proto.pagination import list_all


def _rpc_error(code: int, message: str = "nope") -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": message}}
    ).encode()


# ---------------------------------------------------------------- typed errors keep .method


@pytest.mark.parametrize(
    ("status", "body", "cls"),
    [
        (500, b"", TransientServerError),
        (503, _rpc_error(-32603), TransientServerError),
        (400, b"", ServerError),
        (400, _rpc_error(-32602), ServerError),
        (422, _rpc_error(-32020), ServerError),  # a typed subclass (HeaderMismatchError)
    ],
)
def test_every_http_error_names_its_method(status: int, body: bytes, cls: type) -> None:
    error = error_for_response(status, body, method="tools/list")
    assert isinstance(error, cls)
    assert isinstance(error, ServerError) and error.method == "tools/list"


def test_http_error_messages() -> None:
    assert str(error_for_response(502, b"", method="ping")) == "HTTP 502 from the server"
    assert str(error_for_response(418, b"", method="ping")) == "HTTP 418 from the server"
    assert str(error_for_response(401, b"", method="ping")) == "Authorization failed: HTTP 401"
    assert str(error_for_response(503, _rpc_error(-32000, "busy"), method="ping")) == (
        "busy (code -32000)"
    )


# ---------------------------------------------------------------- request heads


def test_the_stream_request_asks_for_no_cache() -> None:
    """Streamable HTTP GET: the SSE stream must not be served from a cache."""
    headers = HttpSessionState().get_headers()
    assert ("Cache-Control", "no-cache") in headers
    assert ("Accept", "text/event-stream") in headers


# ---------------------------------------------------------------- session ids (SESS-1)


@pytest.mark.parametrize("value", ["a", "!", "~", "!" * MAX_SESSION_ID_LENGTH])
def test_boundary_session_ids_are_kept(value: str) -> None:
    state = HttpSessionState()
    state.capture_session([("Mcp-Session-Id", value)])
    assert state.session_id == value
    assert ("Mcp-Session-Id", value) in state.post_headers()


@pytest.mark.parametrize("value", ["", " ", "\x7f", "a" * (MAX_SESSION_ID_LENGTH + 1)])
def test_boundary_session_ids_are_refused(value: str) -> None:
    state = HttpSessionState()
    state.capture_session([("Mcp-Session-Id", value)])
    assert state.session_id is None


# ---------------------------------------------------------------- legacy endpoint (SSE-2)


@pytest.mark.parametrize("data", ["/messages!", "/m?session=!~", "!"])
def test_endpoint_with_the_visible_ascii_boundaries(data: str) -> None:
    url = resolve_sse_endpoint("http://127.0.0.1:8000/sse", data)
    assert url.startswith("http://127.0.0.1:8000/") and url.endswith(data.lstrip("/"))


@pytest.mark.parametrize("data", ["/a b", "/a\x7f", "/a\tb", "/a\x80"])
def test_endpoint_with_bytes_outside_visible_ascii_is_refused(data: str) -> None:
    with pytest.raises(ConnectionError) as info:
        resolve_sse_endpoint("http://127.0.0.1:8000/sse", data)
    assert str(info.value) == "the server's endpoint event is empty or malformed"


def test_endpoint_on_another_origin_message() -> None:
    with pytest.raises(ConnectionError) as info:
        resolve_sse_endpoint("http://127.0.0.1:8000/sse", "http://127.0.0.2:8000/m")
    assert str(info.value) == "the server's endpoint event points to another origin; refused"


# ---------------------------------------------------------------- retry: clamp (UT-3)


@pytest.mark.parametrize(
    ("retry_ms", "delay"),
    [
        (0, 0.1),
        (99, 0.1),
        (100, 0.1),
        (101, 0.101),
        (29_999, 29.999),
        (30_000, 30.0),
        (30_001, 30.0),
        (10**15, 30.0),
    ],
)
def test_retry_clamp_boundaries(retry_ms: int, delay: float) -> None:
    state = HttpSessionState()
    state.note_retry(retry_ms)
    assert state.reconnect_delay == pytest.approx(delay)


def test_no_retry_keeps_the_delay() -> None:
    state = HttpSessionState()
    state.note_retry(5000)
    state.note_retry(None)
    assert state.reconnect_delay == 5.0


# ---------------------------------------------------------------- pagination (TOOL-2/3)


def drive(op: Op[list[Any]], pages: list[Any]) -> tuple[list[Any], list[Any], list[str]]:
    """Run ``list_all`` against scripted pages; return (items, params sent, warnings)."""
    sent: list[Any] = []
    logs: list[str] = []
    value: Any = None
    while True:
        try:
            effect = op.send(value)
        except StopIteration as stop:
            return stop.value, sent, logs
        if isinstance(effect, Call):
            sent.append(effect.params)
            value = pages[len(sent) - 1]
        else:
            assert isinstance(effect, Log)
            logs.append(f"{effect.level} {effect.message}")
            value = None


def test_pagination_follows_cursors_in_order() -> None:
    pages = [{"tools": [1], "nextCursor": "a"}, {"tools": [2], "nextCursor": "b"}, {"tools": [3]}]
    items, sent, logs = drive(list_all("s", "tools/list", "tools", max_pages=5), pages)
    assert items == [1, 2, 3]
    assert sent == [None, {"cursor": "a"}, {"cursor": "b"}]
    assert logs == []


def test_pagination_stops_at_max_pages_exactly() -> None:
    pages = [{"tools": [i], "nextCursor": f"c{i}"} for i in range(3)]
    items, sent, logs = drive(list_all("s", "tools/list", "tools", max_pages=3), pages)
    assert items == [0, 1, 2] and len(sent) == 3
    assert logs == ["WARNING tools/list on 's': stopped after 3 pages"]


def test_pagination_stops_on_a_repeated_cursor() -> None:
    pages = [{"tools": [1], "nextCursor": "a"}, {"tools": [2], "nextCursor": "a"}]
    items, sent, logs = drive(list_all("s", "tools/list", "tools", max_pages=10), pages)
    assert items == [1, 2] and len(sent) == 2
    assert logs == ["WARNING tools/list on 's': cursor repeated; stopping"]


def test_pagination_an_empty_string_cursor_is_a_cursor() -> None:
    pages = [{"tools": [1], "nextCursor": ""}, {"tools": [2]}]
    items, sent, _ = drive(list_all("s", "tools/list", "tools", max_pages=10), pages)
    assert items == [1, 2] and sent == [None, {"cursor": ""}]


def test_pagination_a_bare_list_is_the_last_page() -> None:
    items, sent, logs = drive(list_all("s", "tools/list", "tools", max_pages=10), [[7, 8]])
    assert items == [7, 8] and len(sent) == 1 and logs == []


@pytest.mark.parametrize(
    ("page", "message"),
    [
        ({"nope": []}, "server 's' sent a malformed tools/list result"),
        ({"tools": {}}, "server 's' sent a malformed tools/list result"),
        ("x", "server 's' sent a malformed tools/list result"),
        ({"tools": [], "nextCursor": 5}, "server 's' sent a non-string nextCursor"),
    ],
)
def test_pagination_malformed_pages(page: Any, message: str) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        drive(list_all("s", "tools/list", "tools", max_pages=10), [page])
    assert str(info.value) == message


# ---------------------------------------------------------------- second mutation pass


def test_media_type_ignores_every_parameter() -> None:
    kind = classify_response(200, "application/json; charset=utf-8; x=y", sent_session=False)
    assert kind is ResponseKind.JSON


def test_a_jsonrpc_error_body_of_exactly_1_mib_is_read() -> None:
    body = _rpc_error(-32602, "bad")
    body += b" " * (1024 * 1024 - len(body))
    error = error_for_response(400, body, method="x")
    assert isinstance(error, ServerError) and error.code == -32602


@pytest.mark.parametrize(
    ("challenge", "scope"),
    [
        # A token68 after "Bearer" (lenient: real servers write it) is skipped.
        ('Bearer mF_9.B5f-4.1JqM, error="insufficient_scope", scope="a b"', "a b"),
        # Only the first Bearer challenge counts: a second one is not read.
        ('Bearer realm="x", Bearer error="insufficient_scope", scope="c"', None),
    ],
)
def test_bearer_challenge_edges(challenge: str, scope: str | None) -> None:
    error = error_for_response(403, b"", method="x", www_authenticate=challenge)
    if scope is None:
        assert not isinstance(error, InsufficientScopeError)
    else:
        assert isinstance(error, InsufficientScopeError) and error.scope == scope


def test_backoff_attempt_message_and_exponent_cap() -> None:
    with pytest.raises(ValueError) as info:
        backoff_delay(0, 1.0)
    assert str(info.value) == "attempt is 1-based"
    # The exponent stops at 64 (2.0 ** attempt would overflow a float past ~1024).
    assert backoff_delay(10_000, 1e-300) == 1e-300 * 2.0**64


def test_an_endpoint_urljoin_refuses_has_the_same_message() -> None:
    with pytest.raises(ConnectionError) as info:
        resolve_sse_endpoint("http://127.0.0.1:8000/sse", "//[")
    assert str(info.value) == "the server's endpoint event is empty or malformed"
