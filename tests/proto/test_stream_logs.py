"""Which log messages are a call's (``CallLog``, ``call_tool_streaming``'s ``LogChunk``):
over Streamable HTTP the ones on the call's own response stream; on stdio (one shared
channel) the ones that arrive while the call is the only request in flight. Pure: the
connection machine driven with time as a number."""

from __future__ import annotations

from typing import Any

from _machine_driver import SSE_HEAD, Harness, body_of, connect_http, notification, result
from _machine_driver import sse_event as sse

from mcp_proto.config import stdio_config, streamable_http_config
from mcp_proto.connection import (
    CallLog,
    CallProgress,
    CallSucceeded,
    LogMessage,
    NotificationReceived,
    StartExchange,
)

URL = "http://127.0.0.1:9/mcp"


def log(text: str, level: str = "info") -> bytes:
    return notification("notifications/message", {"level": level, "logger": "t", "data": text})


def log_params(text: str, level: str = "info") -> dict[str, Any]:
    return {"level": level, "logger": "t", "data": text}


def kinds(events: list[Any]) -> list[Any]:
    """The events, LogMessage (the session's log line) left out."""
    return [e for e in events if not isinstance(e, LogMessage)]


# ------------------------------------------------------------------ Streamable HTTP


def test_http_a_log_on_a_calls_own_stream_is_that_calls() -> None:
    h = Harness(streamable_http_config(URL))
    get = connect_http(h)
    assert get is not None
    a = h.conn.start_call("tools/call", {"name": "a"}, now=0.0, progress=True)
    b = h.conn.start_call("tools/call", {"name": "b"}, now=0.0, progress=True)
    c = h.conn.start_call("tools/call", {"name": "c"}, now=0.0)  # no progress: no CallLog
    posts: list[StartExchange] = h.exchanges()
    pa, pb, pc = posts
    for post in posts:
        h.conn.exchange_head(post.xid, 200, SSE_HEAD, 0.0)
    # b's stream first, then a's, a log on c's, and one on the GET stream (no request's).
    h.conn.exchange_data(pb.xid, sse(log("from b")), 0.0)
    h.conn.exchange_data(pa.xid, sse(log("from a", "warning")), 0.0)
    h.conn.exchange_data(pc.xid, sse(log("from c")), 0.0)
    h.conn.exchange_data(get.xid, sse(log("from nobody")), 0.0)
    h.conn.exchange_data(pa.xid, sse(result(body_of(pa)["id"], {"content": []})), 0.0)
    assert kinds(h.take_events()) == [
        CallLog(b, log_params("from b")),
        NotificationReceived("notifications/message", log_params("from b")),
        CallLog(a, log_params("from a", "warning")),
        NotificationReceived("notifications/message", log_params("from a", "warning")),
        NotificationReceived("notifications/message", log_params("from c")),
        NotificationReceived("notifications/message", log_params("from nobody")),
        CallSucceeded(a, "tools/call", {"content": []}),
    ]
    assert c not in (a, b)


def test_http_a_log_on_the_get_stream_is_nobodys_even_with_one_call_in_flight() -> None:
    # Streamable HTTP has a stream per request: the standalone GET stream's messages
    # SHOULD be unrelated to any request (2025-11-25 basic/transports.mdx § Listening
    # for Messages from the Server), so "the only request in flight" does not apply.
    h = Harness(streamable_http_config(URL))
    get = connect_http(h)
    assert get is not None
    cid = h.conn.start_call("tools/call", {"name": "a"}, now=0.0, progress=True)
    (post,) = h.exchanges()
    h.conn.exchange_head(post.xid, 200, SSE_HEAD, 0.0)
    h.conn.exchange_data(get.xid, sse(log("server-wide")), 0.0)
    h.conn.exchange_data(post.xid, sse(result(body_of(post)["id"], {})), 0.0)
    assert kinds(h.take_events()) == [
        NotificationReceived("notifications/message", log_params("server-wide")),
        CallSucceeded(cid, "tools/call", {}),
    ]


def test_http_progress_and_logs_of_a_call_keep_their_order() -> None:
    h = Harness(streamable_http_config(URL))
    connect_http(h)
    cid = h.conn.start_call("tools/call", {"name": "slow"}, now=0.0, progress=True)
    (post,) = h.exchanges()
    msg = body_of(post)
    token = msg["params"]["_meta"]["progressToken"]
    h.conn.exchange_head(post.xid, 200, SSE_HEAD, 0.0)
    progress = notification("notifications/progress", {"progressToken": token, "progress": 1})
    body = sse(log("one")) + sse(progress) + sse(log("two")) + sse(result(msg["id"], {}))
    h.conn.exchange_data(post.xid, body, 0.0)
    events = [e for e in h.take_events() if isinstance(e, (CallLog, CallProgress, CallSucceeded))]
    assert events == [
        CallLog(cid, log_params("one")),
        CallProgress(cid, 1.0, None, None),
        CallLog(cid, log_params("two")),
        CallSucceeded(cid, "tools/call", {}),
    ]


# ------------------------------------------------------------------ stdio


def stdio() -> Harness:
    h = Harness(stdio_config(["srv"]))
    h.connect_stdio()
    return h


def test_stdio_a_log_while_the_call_is_the_only_request_is_its() -> None:
    h = stdio()
    cid = h.conn.start_call("tools/call", {"name": "slow"}, now=0.0, progress=True)
    (call,) = h.written()
    h.feed(log("working"), result(call["id"], {"content": []}), log("after"))
    assert kinds(h.take_events()) == [
        CallLog(cid, log_params("working")),
        NotificationReceived("notifications/message", log_params("working")),
        CallSucceeded(cid, "tools/call", {"content": []}),
        NotificationReceived("notifications/message", log_params("after")),  # nobody's
    ]


def test_stdio_a_log_with_two_requests_in_flight_is_nobodys() -> None:
    # One shared channel and nothing naming the request (2026-07-28
    # basic/transports/stdio.mdx § Receiving Messages): with two in flight, a log
    # message cannot be told to be either's, so it is neither's.
    h = stdio()
    a = h.conn.start_call("tools/call", {"name": "a"}, now=0.0, progress=True)
    b = h.conn.start_call("tools/call", {"name": "b"}, now=0.0, progress=True)
    first, second = h.written()
    h.feed(log("whose?"), result(first["id"], {}), log("b's"), result(second["id"], {}))
    assert kinds(h.take_events()) == [
        NotificationReceived("notifications/message", log_params("whose?")),
        CallSucceeded(a, "tools/call", {}),
        CallLog(b, log_params("b's")),
        NotificationReceived("notifications/message", log_params("b's")),
        CallSucceeded(b, "tools/call", {}),
    ]


def test_stdio_a_log_for_a_call_without_progress_is_only_a_notification() -> None:
    h = stdio()
    cid = h.conn.start_call("tools/call", {"name": "a"}, now=0.0)
    (call,) = h.written()
    h.feed(log("x"), result(call["id"], {}))
    assert kinds(h.take_events()) == [
        NotificationReceived("notifications/message", log_params("x")),
        CallSucceeded(cid, "tools/call", {}),
    ]


def test_stdio_text_that_only_mentions_the_method_is_not_a_log() -> None:
    h = stdio()
    cid = h.conn.start_call("tools/call", {"name": "a"}, now=0.0, progress=True)
    (call,) = h.written()
    mention = {"content": [{"type": "text", "text": '"notifications/message"'}]}
    h.feed(result(call["id"], mention))
    assert kinds(h.take_events()) == [CallSucceeded(cid, "tools/call", mention)]
