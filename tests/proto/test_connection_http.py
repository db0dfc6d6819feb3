"""The connection machine over Streamable HTTP and plain HTTP: headers, the session
id, JSON/SSE/202 answers, the GET stream and its ready wait, resumption, retries,
session expiry, DELETE, typed errors and bounds. Pure: time is a number."""

from __future__ import annotations

import gzip
import json

import pytest
from _machine_driver import (
    JITTER_R,
    SSE_HEAD,
    Harness,
    body_of,
    connect_http,
    header,
    init_result,
    notification,
    result,
    sse_event,
)

from mcp_proto.config import http_config, streamable_http_config
from mcp_proto.connection import (
    AbortExchange,
    CallFailed,
    CallProgress,
    CallSucceeded,
    Closed,
    CloseTransport,
    Connected,
    ConnectFailed,
    Diagnostic,
    ExchangeFailure,
    NotificationReceived,
    StartExchange,
)
from mcp_proto.errors import (
    InsufficientScopeError,
    LocalProtocolError,
    RemoteProtocolError,
    RequestTimeoutError,
    ResponseStreamClosedError,
    ResponseTooLargeError,
    ServerError,
    SessionExpiredError,
    TransientServerError,
    TransportError,
    UnauthorizedError,
)
from mcp_proto.http import backoff_delay
from mcp_proto.limits import Limits

URL = "http://127.0.0.1:9/mcp"


def harness(**kwargs: object) -> Harness:
    limits = kwargs.pop("limits", None)
    caps = kwargs.pop("capabilities", None)
    return Harness(
        streamable_http_config(URL, **kwargs),  # type: ignore[arg-type]
        limits=limits,  # type: ignore[arg-type]
        capabilities=caps,  # type: ignore[arg-type]
    )


def only(xs: list[StartExchange]) -> StartExchange:
    (x,) = xs
    return x


# ------------------------------------------------------------------ handshake


def test_handshake_headers_and_the_session_id_from_the_initialize_exchange() -> None:
    h = harness(headers={"X-Api-Key": "k", "Mcp-Session-Id": "forged"})
    h.conn.connect(0.0)
    h.take_frames()
    h.conn.transport_opened(0.0)
    post = only(h.exchanges())
    assert post.method == "POST" and post.url == URL and not post.streaming
    assert header(post, "Accept") == "application/json, text/event-stream"
    assert header(post, "Content-Type") == "application/json"
    assert header(post, "Accept-Encoding") == "gzip"
    assert header(post, "X-Api-Key") == "k"
    # Configured headers cannot forge protocol state; none before initialize.
    assert header(post, "Mcp-Session-Id") is None
    assert header(post, "MCP-Protocol-Version") is None
    h.reply_json(post, init_result(body_of(post)["id"]), headers=[("Mcp-Session-Id", "s-1")])
    initialized, get = h.exchanges()
    assert header(initialized, "Mcp-Session-Id") == "s-1"
    assert header(initialized, "MCP-Protocol-Version") == "2025-11-25"
    assert get.method == "GET" and get.streaming and get.body is None
    assert header(get, "Accept") == "text/event-stream"
    assert header(get, "Last-Event-ID") is None  # the standalone stream opens afresh
    assert header(get, "Mcp-Session-Id") == "s-1"
    h.reply_status(initialized, 202)
    h.conn.exchange_head(get.xid, 200, SSE_HEAD, 0.0)
    assert [type(e) for e in h.take_events()] == [Connected]


@pytest.mark.parametrize("streamable", [True, False], ids=["streamable", "plain"])
def test_a_refused_initialized_notification_fails_the_connect(streamable: bool) -> None:
    # The server answered initialize, then refused notifications/initialized with a bare
    # 400: the connect fails with that error (as a handshake POST would), and is never
    # reported connected, even when the GET stream was answered first.
    cfg = streamable_http_config if streamable else http_config
    h = Harness(cfg(URL))
    h.conn.connect(0.0)
    h.take_frames()
    h.conn.transport_opened(0.0)
    post = only(h.exchanges())
    h.reply_json(post, init_result(body_of(post)["id"]), headers=[("Mcp-Session-Id", "s-1")])
    sent = h.exchanges()
    initialized = sent[0]
    assert body_of(initialized)["method"] == "notifications/initialized"
    if streamable:
        get = sent[1]
        h.conn.exchange_head(get.xid, 405, [], 0.0)
        h.conn.exchange_end(get.xid, 0.0)
    assert not any(isinstance(e, Connected) for e in h.take_events())
    h.reply_status(initialized, 400)
    events = h.take_events()
    assert not any(isinstance(e, Connected) for e in events)
    (failed,) = [e for e in events if isinstance(e, ConnectFailed)]
    assert type(failed.error) is ServerError
    assert str(failed.error) == "HTTP 400 from the server"


def test_connected_waits_for_the_initialized_notification_to_be_taken() -> None:
    h = Harness(http_config(URL))
    h.conn.connect(0.0)
    h.take_frames()
    h.conn.transport_opened(0.0)
    post = only(h.exchanges())
    h.reply_json(post, init_result(body_of(post)["id"]))
    initialized = only(h.exchanges())
    assert not any(isinstance(e, Connected) for e in h.take_events())
    h.reply_status(initialized, 202)
    assert [type(e) for e in h.take_events()] == [Connected]


def test_only_the_initialize_exchange_assigns_the_session_id() -> None:
    h = harness()
    connect_http(h, session_id="s-1")
    h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.reply_json(
        post, result(body_of(post)["id"], {"tools": []}), headers=[("Mcp-Session-Id", "other")]
    )
    h.conn.start_call("tools/list", now=0.0)
    assert header(only(h.exchanges()), "Mcp-Session-Id") == "s-1"


def test_requests_are_held_until_the_get_stream_is_answered() -> None:
    h = harness()
    h.conn.start_call("tools/list", now=0.0)
    h.take_frames()
    h.conn.transport_opened(0.0)
    init = only(h.exchanges())
    h.reply_json(init, init_result(body_of(init)["id"]), headers=[("Mcp-Session-Id", "s")])
    initialized, get = h.exchanges()
    assert body_of(initialized)["method"] == "notifications/initialized"
    h.reply_status(initialized, 202)
    assert h.take_events() == []  # held: no Connected, no request yet
    h.advance(1.0)
    assert h.exchanges() == []
    h.conn.exchange_head(get.xid, 200, SSE_HEAD, 1.0)
    assert [type(e) for e in h.take_events()] == [Connected]
    assert body_of(only(h.exchanges()))["method"] == "tools/list"


def test_the_get_ready_wait_ends_after_two_seconds_capped_by_read_timeout() -> None:
    for read_timeout, released_at in ((30.0, 2.0), (0.5, 0.5)):
        h = harness(read_timeout=read_timeout)
        h.conn.start_call("tools/list", now=0.0)
        h.take_frames()
        h.conn.transport_opened(0.0)
        init = only(h.exchanges())
        h.reply_json(init, init_result(body_of(init)["id"]))
        h.reply_status(h.exchanges()[0], 202)  # notifications/initialized taken
        assert h.conn.next_deadline() == released_at
        h.advance(released_at)
        assert [type(e) for e in h.take_events()] == [Connected]
        assert body_of(only(h.exchanges()))["method"] == "tools/list"


# ------------------------------------------------------------------ answers


def test_a_json_answer_and_a_gzip_json_answer() -> None:
    h = harness()
    connect_http(h)
    a = h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.reply_json(post, result(body_of(post)["id"], {"tools": []}))
    b = h.conn.start_call("prompts/list", now=0.0)
    post = only(h.exchanges())
    packed = gzip.compress(result(body_of(post)["id"], {"prompts": []}))
    h.conn.exchange_head(
        post.xid, 200, [("Content-Type", "application/json"), ("Content-Encoding", "gzip")], 0
    )
    h.conn.exchange_data(post.xid, packed[:10], 0.0)
    h.conn.exchange_data(post.xid, packed[10:], 0.0)
    h.conn.exchange_end(post.xid, 0.0)
    assert h.take_events() == [
        CallSucceeded(a, "tools/list", {"tools": []}),
        CallSucceeded(b, "prompts/list", {"prompts": []}),
    ]


def test_sse_answer_progress_first_and_notifications_after_the_result_delivered() -> None:
    h = harness()
    connect_http(h)
    cid = h.conn.start_call("tools/call", {"name": "slow"}, now=0.0, progress=True)
    post = only(h.exchanges())
    msg = body_of(post)
    token = msg["params"]["_meta"]["progressToken"]
    h.conn.exchange_head(post.xid, 200, SSE_HEAD, 0.0)
    body = b"".join(
        [
            sse_event(
                notification("notifications/progress", {"progressToken": token, "progress": 1})
            ),
            sse_event(result(msg["id"], {"content": []})),
            sse_event(notification("notifications/tools/list_changed")),
        ]
    )
    h.conn.exchange_data(post.xid, body, 0.0)
    assert h.conn.wants_exchange(post.xid)  # read to its end, past the result
    h.conn.exchange_end(post.xid, 0.0)
    assert h.take_events() == [
        CallProgress(cid, 1.0, None, None),
        CallSucceeded(cid, "tools/call", {"content": []}),
        NotificationReceived("notifications/tools/list_changed", {}),
    ]
    assert AbortExchange(post.xid) not in h.take_frames()


def test_a_post_stream_left_open_after_its_answer_is_closed_after_read_timeout() -> None:
    # A server that keeps a POST's SSE stream open after the result (keep-alive
    # comments) would hold a connection and a reader per call for ever: the tail is
    # read for read_timeout more, notifications in it are delivered, then it is cut.
    h = harness(read_timeout=5.0)
    connect_http(h)
    h.take_frames()
    h.conn.start_call("tools/call", {"name": "x"}, now=1.0)
    post = only(h.exchanges())
    h.conn.exchange_head(post.xid, 200, SSE_HEAD, 1.0)
    h.conn.exchange_data(post.xid, sse_event(result(body_of(post)["id"], {"content": []})), 2.0)
    assert h.conn.next_deadline() == 7.0  # the answer came at 2.0
    h.advance(6.0)
    h.conn.exchange_data(post.xid, b": keep-alive\n\n", 6.0)
    h.conn.exchange_data(post.xid, sse_event(notification("notifications/tools/list_changed")), 6.5)
    assert h.conn.wants_exchange(post.xid)
    assert AbortExchange(post.xid) not in h.take_frames()
    h.advance(7.0)
    assert not h.conn.wants_exchange(post.xid)
    assert AbortExchange(post.xid) in h.take_frames()
    events = h.take_events()
    assert NotificationReceived("notifications/tools/list_changed", {}) in events
    (note,) = [e for e in events if isinstance(e, Diagnostic)]
    assert "kept the response stream of tools/call open" in note.message
    assert h.conn.next_deadline() is None


def test_a_tail_that_ends_by_itself_leaves_no_deadline() -> None:
    h = harness(read_timeout=5.0)
    connect_http(h)
    h.conn.start_call("tools/call", {"name": "x"}, now=1.0)
    post = only(h.exchanges())
    h.conn.exchange_head(post.xid, 200, SSE_HEAD, 1.0)
    h.conn.exchange_data(post.xid, sse_event(result(body_of(post)["id"], {"content": []})), 2.0)
    h.conn.exchange_end(post.xid, 3.0)
    assert h.conn.next_deadline() is None
    assert AbortExchange(post.xid) not in h.take_frames()


def test_a_202_to_a_notification_is_taken() -> None:
    h = harness()
    connect_http(h)
    h.conn.notify("notifications/roots/list_changed", now=0.0)
    h.conn.notify("notifications/custom", now=0.0)
    post = only(h.exchanges())  # roots were not declared: CAP-5 drops the first
    h.reply_status(post, 202)
    assert h.take_events() == [] and h.conn.pending_count == 0


# ------------------------------------------------------------------ resumption


def test_a_post_stream_is_resumed_with_its_own_last_event_id() -> None:
    h = harness()
    get = connect_http(h)
    assert get is not None
    # The standalone stream has its own cursor.
    h.conn.exchange_data(get.xid, sse_event(id="g-7", data=b"") + b"id: g-7\n\n", 0.0)
    cid = h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.conn.exchange_head(post.xid, 200, SSE_HEAD, 0.0)
    h.conn.exchange_data(post.xid, b"id: p-3\nretry: 500\ndata:\n\n", 0.0)
    h.conn.exchange_failed(post.xid, ExchangeFailure("network", "reset"), 0.0)
    assert h.take_events() == []
    assert h.conn.next_deadline() == 0.5  # the server's retry: advice
    h.advance(0.5)
    resume = only(h.exchanges())
    assert resume.method == "GET" and not resume.streaming
    assert header(resume, "Last-Event-ID") == "p-3"
    h.conn.exchange_head(resume.xid, 200, SSE_HEAD, 0.5)
    h.conn.exchange_data(
        resume.xid, sse_event(result(body_of(post)["id"], {"tools": []}), id="p-4"), 0.5
    )
    assert h.take_events() == [CallSucceeded(cid, "tools/list", {"tools": []})]
    assert not h.conn.wants_exchange(resume.xid)  # answered: not read further
    # The standalone stream, when it ends, reconnects with its own id.
    h.conn.exchange_end(get.xid, 1.0)
    h.advance(h.conn.next_deadline() or 0.0)
    reget = only(h.exchanges())
    assert reget.streaming and header(reget, "Last-Event-ID") == "g-7"


def test_the_resume_limit_is_three() -> None:
    h = harness(retries=0)
    connect_http(h)
    cid = h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.conn.exchange_head(post.xid, 200, SSE_HEAD, 0.0)
    h.conn.exchange_data(post.xid, b"id: 1\ndata:\n\n", 0.0)
    h.conn.exchange_end(post.xid, 0.0)
    for n in range(3):
        h.advance(h.now + 1.0)  # DEFAULT_RECONNECT_DELAY
        resume = only(h.exchanges())
        assert header(resume, "Last-Event-ID") == str(n + 1)
        h.conn.exchange_head(resume.xid, 200, SSE_HEAD, h.now)
        h.conn.exchange_data(resume.xid, f"id: {n + 2}\ndata:\n\n".encode(), h.now)
        h.conn.exchange_end(resume.xid, h.now)
    (failed,) = h.take_events()
    assert failed.call_id == cid and isinstance(failed.error, ResponseStreamClosedError)
    assert h.conn.next_deadline() is None


def test_a_stream_without_an_event_id_cannot_be_resumed() -> None:
    h = harness(retries=0)
    connect_http(h)
    cid = h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.conn.exchange_head(post.xid, 200, SSE_HEAD, 0.0)
    h.conn.exchange_end(post.xid, 0.0)
    (failed,) = h.take_events()
    assert failed.call_id == cid and isinstance(failed.error, ResponseStreamClosedError)


# ------------------------------------------------------------------ retries


def test_5xx_is_retried_with_backoff_up_to_config_retries() -> None:
    h = harness(retries=2, retry_backoff=0.5)
    connect_http(h)
    cid = h.conn.start_call("tools/list", now=10.0)
    post = only(h.exchanges())
    h.now = 10.0
    h.reply_status(post, 503)
    (diag,) = h.take_events()
    assert isinstance(diag, Diagnostic) and "retry 1 in" in diag.message
    first = 10.0 + backoff_delay(1, 0.5, jitter=JITTER_R * 0.25)
    assert h.conn.next_deadline() == first
    h.advance(first)
    post = only(h.exchanges())
    h.reply_status(post, 502)
    h.take_events()
    second = first + backoff_delay(2, 0.5, jitter=JITTER_R * 0.25)
    assert h.conn.next_deadline() == second
    h.advance(second)
    post = only(h.exchanges())
    h.reply_status(post, 500)
    (failed,) = h.take_events()
    assert failed.call_id == cid and isinstance(failed.error, TransientServerError)
    assert h.draws == 2  # one jitter draw per retry
    assert h.exchanges() == []


def test_tools_call_is_never_retried() -> None:
    h = harness(retries=5)
    connect_http(h)
    cid = h.conn.start_call("tools/call", {"name": "x"}, now=0.0)
    h.reply_status(only(h.exchanges()), 503)
    (failed,) = h.take_events()
    assert failed.call_id == cid and isinstance(failed.error, TransientServerError)
    assert h.conn.next_deadline() is None and h.draws == 0


def test_a_network_failure_is_retried_and_a_read_timeout_is_not() -> None:
    h = harness(retries=1, retry_backoff=1.0)
    connect_http(h)
    a = h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.conn.exchange_failed(post.xid, ExchangeFailure("network", "connection refused"), 0.0)
    assert [type(e) for e in h.take_events()] == [Diagnostic]
    h.advance(h.conn.next_deadline() or 0.0)
    post = only(h.exchanges())
    h.conn.exchange_failed(post.xid, ExchangeFailure("network", "connection refused"), h.now)
    (failed,) = h.take_events()
    assert failed.call_id == a and isinstance(failed.error, TransportError)
    assert "connection refused" in str(failed.error)
    b = h.conn.start_call("tools/list", now=h.now)
    post = only(h.exchanges())
    h.conn.exchange_failed(post.xid, ExchangeFailure("read_timeout"), h.now)
    (failed,) = h.take_events()
    assert failed.call_id == b and isinstance(failed.error, RequestTimeoutError)


def test_401_and_403_are_typed_from_facts_and_never_retried() -> None:
    h = harness(retries=3)
    connect_http(h)
    a = h.conn.start_call("tools/list", now=0.0)
    h.reply_status(
        only(h.exchanges()),
        401,
        headers=[
            (
                "WWW-Authenticate",
                'Bearer resource_metadata="https://as.example/.well-known/x", scope="files:read"',
            )
        ],
    )
    (failed,) = h.take_events()
    assert failed.call_id == a and type(failed.error) is UnauthorizedError
    assert failed.error.status == 401
    assert failed.error.resource_metadata == "https://as.example/.well-known/x"
    assert failed.error.scope == "files:read"
    b = h.conn.start_call("tools/list", now=0.0)
    h.reply_status(
        only(h.exchanges()),
        403,
        headers=[("WWW-Authenticate", 'Bearer error="insufficient_scope", scope="admin"')],
    )
    (failed,) = h.take_events()
    assert failed.call_id == b and isinstance(failed.error, InsufficientScopeError)
    assert h.draws == 0


def test_a_4xx_with_a_jsonrpc_error_keeps_its_code() -> None:
    h = harness()
    connect_http(h)
    cid = h.conn.start_call("tools/list", now=0.0)
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "bad"}})
    h.reply_status(
        only(h.exchanges()), 400, body.encode(), headers=[("Content-Type", "application/json")]
    )
    (failed,) = h.take_events()
    assert failed.call_id == cid and isinstance(failed.error, ServerError)
    assert failed.error.code == -32600


# ------------------------------------------------------------------ session expiry


def test_session_expiry_resends_what_may_be_resent_once_on_a_new_session() -> None:
    h = harness()
    connect_http(h, session_id="old")
    listing = h.conn.start_call("tools/list", now=0.0)
    calling = h.conn.start_call("tools/call", {"name": "x"}, now=0.0)
    post_list, post_call = h.exchanges()
    h.reply_status(post_list, 404)
    events = h.take_events()
    assert isinstance(events[0], Diagnostic) and events[0].level == "info"
    assert events[0].message == "server 'srv': the session expired; starting a new one"
    (failed,) = [e for e in events if isinstance(e, CallFailed)]
    assert failed.call_id == calling and isinstance(failed.error, SessionExpiredError)
    assert "not re-sent" in str(failed.error)
    frames = h.take_frames()
    # The old session's other exchanges are abandoned; a fresh initialize goes out.
    assert AbortExchange(post_call.xid) in frames
    (init,) = [f for f in frames if isinstance(f, StartExchange)]
    assert body_of(init)["method"] == "initialize"
    assert header(init, "Mcp-Session-Id") is None
    h.reply_json(init, init_result(body_of(init)["id"]), headers=[("Mcp-Session-Id", "new")])
    initialized, get = h.exchanges()
    h.reply_status(initialized, 202)
    h.conn.exchange_head(get.xid, 200, SSE_HEAD, 0.0)
    assert [type(e) for e in h.take_events()] == [Connected]
    resent = only(h.exchanges())
    assert body_of(resent)["method"] == "tools/list"
    assert header(resent, "Mcp-Session-Id") == "new"
    # A second expiry of the same call: it fails.
    h.reply_status(resent, 404)
    (failed,) = h.take_events(CallFailed)
    assert failed.call_id == listing and isinstance(failed.error, SessionExpiredError)


def test_a_404_without_a_session_is_an_ordinary_error() -> None:
    h = harness()
    connect_http(h, session_id=None, get_status=405)
    cid = h.conn.start_call("tools/list", now=0.0)
    h.reply_status(only(h.exchanges()), 404)
    (failed,) = h.take_events()
    assert failed.call_id == cid and type(failed.error) is ServerError


# ------------------------------------------------------------------ the GET stream


def test_get_stream_reconnect_policy_backs_off_doubling_and_gives_up_after_ten() -> None:
    h = harness()
    get = connect_http(h, get_status=None)  # unanswered yet
    assert get is not None
    delays = []
    for n in range(10):
        if n % 2:
            h.reply_status(get, 503)
        else:
            h.conn.exchange_failed(get.xid, ExchangeFailure("network", "reset"), h.now)
        deadline = h.conn.next_deadline()
        if n == 9:
            assert deadline is None  # the tenth failure in a row: not reopened
            break
        assert deadline is not None
        delays.append(round(deadline - h.now, 6))
        h.advance(deadline)
        get = only(h.exchanges())
    assert delays == [2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0, 30.0, 30.0]


def test_get_stream_405_stops_and_a_clean_end_reconnects() -> None:
    h = harness()
    connect_http(h, get_status=405)
    assert h.conn.next_deadline() is None
    h2 = harness()
    get = connect_http(h2)
    assert get is not None
    h2.conn.exchange_end(get.xid, 5.0)
    assert h2.conn.next_deadline() == 6.0  # reconnect_delay, no failure counted


def test_the_get_stream_carries_server_requests_and_notifications() -> None:
    h = harness()
    get = connect_http(h)
    assert get is not None
    h.conn.exchange_data(
        get.xid,
        sse_event(b'{"jsonrpc":"2.0","id":5,"method":"ping"}')
        + sse_event(notification("notifications/resources/updated", {"uri": "x"})),
        0.0,
    )
    events = h.take_events()
    assert [type(e).__name__ for e in events] == ["ServerRequest", "NotificationReceived"]
    h.conn.answer(5, {}, now=0.0)
    answer = only(h.exchanges())
    assert body_of(answer) == {"jsonrpc": "2.0", "id": 5, "result": {}}


# ------------------------------------------------------------------ close


def test_close_sends_delete_with_the_session_id() -> None:
    h = harness()
    get = connect_http(h, session_id="s-9")
    assert get is not None
    cid = h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.conn.close(1.0)
    frames = h.take_frames()
    delete = next(f for f in frames if isinstance(f, StartExchange))
    assert delete.method == "DELETE" and header(delete, "Mcp-Session-Id") == "s-9"
    assert AbortExchange(get.xid) in frames and AbortExchange(post.xid) in frames
    assert frames[-1] == CloseTransport(graceful=True)
    (failed,) = h.take_events()
    assert failed.call_id == cid
    assert not h.conn.wants_exchange(delete.xid)
    h.conn.transport_closed(1.2)
    assert h.take_events() == [Closed()]


def test_close_answers_unanswered_server_requests_before_delete() -> None:
    h = harness()
    get = connect_http(h)
    assert get is not None
    h.conn.exchange_data(
        get.xid,
        sse_event(b'{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{}}'),
        0,
    )
    h.take_events()
    h.conn.close(0.0)
    h.advance(0.5)
    refusal, delete = h.exchanges()
    assert body_of(refusal)["error"]["code"] == -32000
    assert delete.method == "DELETE"
    # The refusal is not aborted: the driver finishes it before closing the pool.
    assert AbortExchange(refusal.xid) not in h.take_frames()


# ------------------------------------------------------------------ bounds


def test_an_oversized_json_body_is_too_large_not_growth() -> None:
    h = harness(limits=Limits(max_line_size=1024))
    connect_http(h)
    cid = h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.conn.exchange_head(post.xid, 200, [("Content-Type", "application/json")], 0.0)
    h.conn.exchange_data(post.xid, b"[" * 1000, 0.0)
    assert h.conn.wants_exchange(post.xid)
    h.conn.exchange_data(post.xid, b"[" * 1000, 0.0)
    assert not h.conn.wants_exchange(post.xid)
    assert AbortExchange(post.xid) in h.take_frames()
    (failed,) = h.take_events()
    assert failed.call_id == cid and isinstance(failed.error, ResponseTooLargeError)


def test_a_gzip_bomb_is_too_large() -> None:
    h = harness(max_decompressed_body_bytes=4096)
    connect_http(h)
    cid = h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.conn.exchange_head(
        post.xid, 200, [("Content-Type", "application/json"), ("Content-Encoding", "gzip")], 0
    )
    h.conn.exchange_data(post.xid, gzip.compress(b" " * 100_000), 0.0)
    (failed,) = h.take_events()
    assert failed.call_id == cid and isinstance(failed.error, ResponseTooLargeError)


def test_an_oversized_sse_event_is_too_large() -> None:
    h = harness(limits=Limits(max_line_size=1024))
    connect_http(h)
    cid = h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.conn.exchange_head(post.xid, 200, SSE_HEAD, 0.0)
    for _ in range(3):
        h.conn.exchange_data(post.xid, b"data: " + b"x" * 500 + b"\n", 0.0)
    assert not h.conn.wants_exchange(post.xid)
    (failed,) = h.take_events()
    assert failed.call_id == cid and isinstance(failed.error, ResponseTooLargeError)


def test_an_error_body_is_read_up_to_64_kib() -> None:
    h = harness(retries=0)
    connect_http(h)
    cid = h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.conn.exchange_head(post.xid, 500, [("Content-Type", "text/plain")], 0.0)
    chunk = b"e" * 16384
    for _ in range(3):
        h.conn.exchange_data(post.xid, chunk, 0.0)
        assert h.conn.wants_exchange(post.xid)
    h.conn.exchange_data(post.xid, chunk, 0.0)
    assert not h.conn.wants_exchange(post.xid)
    (failed,) = h.take_events()
    assert failed.call_id == cid and isinstance(failed.error, TransientServerError)


def test_a_timeout_fails_the_call_and_abandons_its_exchange() -> None:
    h = harness()
    connect_http(h)
    cid = h.conn.start_call("tools/call", {"name": "x"}, now=0.0, timeout=3)
    post = only(h.exchanges())
    assert post.read_timeout == 3
    h.advance(3.0)
    (failed,) = h.take_events()
    assert failed.call_id == cid and isinstance(failed.error, RequestTimeoutError)
    frames = h.take_frames()
    assert AbortExchange(post.xid) in frames
    (cancelled,) = [f for f in frames if isinstance(f, StartExchange)]
    assert body_of(cancelled)["method"] == "notifications/cancelled"


# ------------------------------------------------------------------ plain HTTP


def test_plain_http_posts_json_only_and_opens_no_get_stream() -> None:
    h = Harness(http_config(URL), capabilities={"roots": {}, "sampling": {}, "x": {}})
    h.conn.connect(0.0)
    h.take_frames()
    h.conn.transport_opened(0.0)
    post = only(h.exchanges())
    assert header(post, "Accept") == "application/json"
    assert header(post, "Accept-Encoding") is None
    # HTTP-4: no capability needing a server->client channel.
    assert body_of(post)["params"]["capabilities"] == {"x": {}}
    h.reply_json(post, init_result(body_of(post)["id"]))
    (initialized,) = h.exchanges()
    assert initialized.method == "POST"
    h.reply_status(initialized, 202)
    assert [type(e) for e in h.take_events()] == [Connected]
    assert h.conn.next_deadline() is None


def test_a_404_to_notifications_initialized_fails_the_connect_instead_of_looping() -> None:
    h = harness(retries=0)
    cid = h.conn.start_call("tools/list", now=0.0)
    h.take_frames()
    h.conn.transport_opened(0.0)
    init = only(h.exchanges())
    h.reply_json(init, init_result(body_of(init)["id"]), headers=[("Mcp-Session-Id", "s")])
    initialized, _get = h.exchanges()
    h.reply_status(initialized, 404)
    events = h.take_events()
    assert isinstance(events[0], ConnectFailed)
    assert "refused the handshake" in str(events[0].error)
    assert isinstance(events[0].error.__cause__, SessionExpiredError)
    assert [e.call_id for e in events if isinstance(e, CallFailed)] == [cid]
    # No new initialize: a server refusing every session is not asked forever.
    assert [x for x in h.exchanges() if x.body and b"initialize" in x.body] == []


def test_an_answer_to_a_request_of_an_expired_session_is_dropped() -> None:
    h = harness()
    get = connect_http(h, session_id="old")
    assert get is not None
    h.conn.exchange_data(get.xid, sse_event(b'{"jsonrpc":"2.0","id":1,"method":"roots/list"}'), 0)
    h.take_events()
    h.conn.notify("notifications/custom", now=0.0)
    h.reply_status(only(h.exchanges()), 404)  # the session expired
    init = only(h.exchanges())
    h.reply_json(init, init_result(body_of(init)["id"]), headers=[("Mcp-Session-Id", "new")])
    _initialized, get2 = h.exchanges()
    h.conn.exchange_head(get2.xid, 200, SSE_HEAD, 0.0)
    h.take_events()
    # The handler of the old session's request answers late: the new session's server
    # never asked it (id 1 may mean something else there).
    h.conn.answer(1, {"roots": []}, now=0.0)
    h.conn.answer(1, {"roots": []}, now=0.0)
    assert h.exchanges() == []


def test_a_notifications_sse_answer_does_not_move_the_get_streams_cursor() -> None:
    h = harness()
    get = connect_http(h)
    assert get is not None
    h.conn.exchange_data(get.xid, b"id: g-1\ndata:\n\n", 0.0)
    h.conn.exchange_end(get.xid, 0.0)  # reconnects after the delay
    h.conn.notify("notifications/custom", now=0.0)
    post = only(h.exchanges())
    h.conn.exchange_head(post.xid, 200, SSE_HEAD, 0.0)
    h.conn.exchange_data(post.xid, b"id: other-9\ndata:\n\n", 0.0)
    h.conn.exchange_end(post.xid, 0.0)
    h.advance(h.conn.next_deadline() or 0.0)
    assert header(only(h.exchanges()), "Last-Event-ID") == "g-1"


def test_events_before_an_oversized_one_are_delivered() -> None:
    h = harness(limits=Limits(max_line_size=1024))
    connect_http(h)
    cid = h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.conn.exchange_head(post.xid, 200, SSE_HEAD, 0.0)
    chunk = sse_event(notification("notifications/message", {"level": "info", "data": "hi"}))
    h.conn.exchange_data(post.xid, chunk + b"data: " + b"x" * 2000 + b"\n", 0.0)
    events = h.take_events()
    assert [type(e).__name__ for e in events] == [
        "NotificationReceived",
        "LogMessage",  # after the notification it came in (NOTIF-5)
        "CallFailed",
    ]
    assert events[-1].call_id == cid and isinstance(events[-1].error, ResponseTooLargeError)


def test_bad_encodings_are_typed_errors() -> None:
    h = harness(retries=0)
    connect_http(h)
    a = h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.conn.exchange_head(
        post.xid, 200, [("Content-Type", "application/json"), ("Content-Encoding", "br")], 0
    )
    (failed,) = h.take_events()
    assert failed.call_id == a and isinstance(failed.error, RemoteProtocolError)
    assert "Content-Encoding" in str(failed.error)
    b = h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.conn.exchange_head(
        post.xid, 200, [("Content-Type", "application/json"), ("Content-Encoding", "gzip")], 0
    )
    h.conn.exchange_data(post.xid, b"not gzip at all", 0.0)
    (failed,) = h.take_events()
    assert failed.call_id == b and isinstance(failed.error, RemoteProtocolError)
    c = h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.conn.exchange_head(post.xid, 200, [("Content-Type", "application/json")], 0.0)
    h.conn.exchange_data(post.xid, b"{not json", 0.0)
    h.conn.exchange_end(post.xid, 0.0)
    events = h.take_events()
    assert [type(e).__name__ for e in events] == ["MessageDiscarded"]
    assert h.conn.pending_count == 1 and c in h.conn._calls.calls
    h.advance(30.0)  # the call times out; the garbage is named in the error
    (failed,) = h.take_events()
    assert failed.call_id == c and isinstance(failed.error, RequestTimeoutError)
    assert "{not json" in str(failed.error)


def test_a_refused_resume_counts_against_the_limit() -> None:
    h = harness(retries=0)
    connect_http(h)
    cid = h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.conn.exchange_head(post.xid, 200, SSE_HEAD, 0.0)
    h.conn.exchange_data(post.xid, b"id: 5\ndata:\n\n", 0.0)
    h.conn.exchange_end(post.xid, 0.0)
    for _ in range(3):
        h.advance(h.conn.next_deadline() or 0.0)
        resume = only(h.exchanges())
        assert header(resume, "Last-Event-ID") == "5"
        h.reply_status(resume, 405)
    (failed,) = h.take_events()
    assert failed.call_id == cid and isinstance(failed.error, ResponseStreamClosedError)


def test_a_cut_off_events_retry_sets_the_resume_delay() -> None:
    h = harness(retries=0)
    connect_http(h)
    h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.conn.exchange_head(post.xid, 200, SSE_HEAD, 0.0)
    # The retry field takes effect though its event never completes (WHATWG).
    h.conn.exchange_data(post.xid, b"id: 5\ndata:\n\nretry: 250\n", 0.0)
    h.conn.exchange_failed(post.xid, ExchangeFailure("network", "reset"), 0.0)
    assert h.conn.next_deadline() == 0.25


def test_a_send_failure_after_the_deadline_is_the_timeout() -> None:
    h = harness(retries=3)
    connect_http(h)
    cid = h.conn.start_call("resources/read", {"uri": "x"}, now=0.0, timeout=2.0)
    post = only(h.exchanges())
    h.now = 2.5  # the driver saw the failure late, before its timer fired
    h.conn.exchange_failed(post.xid, ExchangeFailure("read_timeout"), 2.5)
    (failed,) = h.take_events()
    assert failed.call_id == cid and isinstance(failed.error, RequestTimeoutError)
    cancelled = [body_of(x) for x in h.exchanges()]
    assert [m["method"] for m in cancelled] == ["notifications/cancelled"]


def test_an_exchange_ending_before_its_head_is_a_protocol_error() -> None:
    h = harness(retries=0)
    connect_http(h)
    cid = h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.conn.exchange_end(post.xid, 0.0)
    (failed,) = h.take_events()
    assert failed.call_id == cid and isinstance(failed.error, RemoteProtocolError)


def test_a_resume_answered_404_expires_the_session() -> None:
    h = harness()
    connect_http(h, session_id="old")
    cid = h.conn.start_call("tools/list", now=0.0)
    post = only(h.exchanges())
    h.conn.exchange_head(post.xid, 200, SSE_HEAD, 0.0)
    h.conn.exchange_data(post.xid, b"id: 5\ndata:\n\n", 0.0)
    h.conn.exchange_end(post.xid, 0.0)
    h.advance(h.conn.next_deadline() or 0.0)
    h.reply_status(only(h.exchanges()), 404)
    assert "session expired" in h.take_events()[0].message
    init = only(h.exchanges())
    assert body_of(init)["method"] == "initialize"
    h.reply_json(init, init_result(body_of(init)["id"]), headers=[("Mcp-Session-Id", "new")])
    initialized, get = h.exchanges()
    h.reply_status(initialized, 202)
    h.conn.exchange_head(get.xid, 200, SSE_HEAD, h.now)
    resent = only(h.exchanges())
    h.reply_json(resent, result(body_of(resent)["id"], {"tools": []}))
    assert h.take_events()[-1] == CallSucceeded(cid, "tools/list", {"tools": []})


def test_a_session_expiry_during_the_close_grace_just_closes() -> None:
    h = harness()
    get = connect_http(h)
    assert get is not None
    h.conn.exchange_data(get.xid, sse_event(b'{"jsonrpc":"2.0","id":9,"method":"roots/list"}'), 0)
    h.take_events()
    h.conn.notify("notifications/custom", now=0.0)
    note = only(h.exchanges())
    h.conn.close(0.0)
    h.reply_status(note, 404)
    frames = h.take_frames()
    assert frames[-1] == CloseTransport(graceful=True)
    assert not any(
        isinstance(f, StartExchange) and f.body and b"initialize" in f.body for f in frames
    )


def test_a_driver_feeding_stdio_input_to_http_is_told() -> None:
    h = harness()
    with pytest.raises(LocalProtocolError):
        h.conn.receive_data(b"{}\n", 0.0)
    with pytest.raises(LocalProtocolError):
        h.conn.receive_eof(0.0)


def test_a_stream_broken_by_the_requests_own_timeout_is_the_timeout() -> None:
    h = harness(retries=3)
    connect_http(h)
    cid = h.conn.start_call("resources/read", {"uri": "x"}, now=0.0, timeout=2.0)
    post = only(h.exchanges())
    h.conn.exchange_head(post.xid, 200, SSE_HEAD, 0.0)
    h.conn.exchange_data(post.xid, b"id: 5\ndata:\n\n", 0.0)
    h.now = 2.0
    h.conn.exchange_failed(post.xid, ExchangeFailure("read_timeout"), 2.0)
    (failed,) = h.take_events()
    assert failed.call_id == cid and isinstance(failed.error, RequestTimeoutError)
    (cancelled,) = h.exchanges()  # no resume: the cancellation only
    assert body_of(cancelled)["method"] == "notifications/cancelled"
    assert h.conn.next_deadline() is None


def test_a_call_ended_during_its_backoff_is_not_retried() -> None:
    h = harness(retries=2)
    connect_http(h)
    a = h.conn.start_call("tools/list", now=0.0)
    b = h.conn.start_call("prompts/list", now=0.0)
    post_a, post_b = h.exchanges()
    h.reply_status(post_a, 503)
    h.reply_status(post_b, 503)
    h.take_events()
    h.conn.cancel_call(a, "gave up", now=0.1)
    (failed,) = h.take_events()
    assert failed.call_id == a
    # Only b's retry is left; a's stale backoff entry is skipped.
    h.advance(10.0)
    (resent,) = h.exchanges()
    assert body_of(resent)["method"] == "prompts/list"
    h.conn.close(10.0)
    (closed,) = h.take_events(CallFailed)
    assert closed.call_id == b
    assert h.conn.next_deadline() is None
    assert [x.method for x in h.exchanges()] == ["DELETE"]
    h.advance(20.0)
    assert h.exchanges() == []


def test_the_expired_message_names_the_server_and_keeps_the_cause() -> None:
    h = harness()
    connect_http(h, session_id="old")
    cid = h.conn.start_call("tools/call", {"name": "x"}, now=0.0)
    h.reply_status(only(h.exchanges()), 404)
    (failed,) = h.take_events(CallFailed)
    assert failed.call_id == cid
    assert str(failed.error) == (
        "server 'srv': the session expired during tools/call; "
        "a new session was started but the request was not re-sent"
    )
    assert isinstance(failed.error.__cause__, SessionExpiredError)


def test_an_http_error_names_the_method_and_answered_streams_are_forgotten() -> None:
    h = harness(retries=0)
    connect_http(h)
    cid = h.conn.start_call("tools/list", now=0.0)
    h.reply_status(only(h.exchanges()), 500)
    (failed,) = h.take_events()
    assert failed.call_id == cid and failed.error.method == "tools/list"
    # A POST stream answered and ended leaves no state behind (bounded memory).
    for _ in range(3):
        h.conn.start_call("tools/list", now=0.0)
        post = only(h.exchanges())
        h.conn.exchange_head(post.xid, 200, SSE_HEAD, 0.0)
        h.conn.exchange_data(post.xid, sse_event(result(body_of(post)["id"], {}), id="1"), 0)
        h.conn.exchange_end(post.xid, 0.0)
    transport = h.conn._transport
    assert transport._streams == {}
    assert set(transport._ex) == {transport._get_xid}


def test_a_failed_exchange_names_the_url() -> None:
    # Issue 24 E: "network failure" alone did not say where the client tried to go.
    h = Harness(streamable_http_config(URL, retries=0))
    h.conn.connect(0.0)
    h.take_frames()
    h.conn.transport_opened(0.0)
    post = only(h.exchanges())
    h.conn.exchange_failed(post.xid, ExchangeFailure("network", "refused"), 0.0)
    (failed,) = h.take_events(ConnectFailed)
    assert str(failed.error) == f"initialize to 'srv' at {URL}: network failure: refused"
