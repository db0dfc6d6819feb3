"""``subscriptions/listen`` in the connection machine over Streamable HTTP.

SUB-4 (its own POST stream, re-opened with backoff), SUB-5 (the ack timeout bounds
every re-open), SUB-14 (not active while waiting), SUB-16 (closing the stream is the
cancellation), SUB-17 (5xx / transport / read timeout re-open; 4xx or an authorization
challenge ends it). Pure: time is a number.
"""

from __future__ import annotations

from typing import Any

import pytest
from _listen_support import (
    ack,
    assert_valid_request,
    connect_modern_http,
    discover_result,
    on_stream,
)
from _machine_driver import (
    JITTER_R,
    SSE_HEAD,
    Harness,
    body_of,
    header,
    notification,
    result,
    sse_event,
)

from mcp_proto.config import streamable_http_config
from mcp_proto.connection import (
    GET_MAX_DELAY,
    GET_READ_TIMEOUT_FLOOR,
    AbortExchange,
    Diagnostic,
    ExchangeFailure,
    ListenAcknowledged,
    ListenEnded,
    ListenInterrupted,
    ListenNotification,
    StartExchange,
)
from mcp_proto.errors import (
    RequestTimeoutError,
    ResponseStreamClosedError,
    ServerError,
    TransientServerError,
    TransportError,
    UnauthorizedError,
)
from mcp_proto.http import backoff_delay

URL = "http://127.0.0.1:9/mcp"
LISTEN_KINDS = (ListenAcknowledged, ListenNotification, ListenInterrupted, ListenEnded)


def connected(**kwargs: Any) -> Harness:
    h = Harness(streamable_http_config(URL, **kwargs), probe=True)
    connect_modern_http(h)
    return h


def listen_post(h: Harness) -> StartExchange:
    (x,) = h.exchanges()
    msg = body_of(x)
    assert msg["method"] == "subscriptions/listen"
    assert_valid_request(msg)
    return x


def open_stream(h: Harness, x: StartExchange, **granted: Any) -> None:
    """Answer the listen POST with an SSE stream whose first event is the ack."""
    h.conn.exchange_head(x.xid, 200, SSE_HEAD, h.now)
    rid = body_of(x)["id"]
    h.conn.exchange_data(
        x.xid, sse_event(ack(rid, **(granted or {"toolsListChanged": True}))), h.now
    )


def delay(drops: int, base: float = 1.0) -> float:
    return backoff_delay(drops, base, jitter=JITTER_R * 0.25)


def test_each_subscription_is_its_own_long_lived_post_stream() -> None:
    h = connected()
    sub = h.conn.start_listen({"tools_list_changed": True}, now=0.0)
    x = listen_post(h)
    assert x.method == "POST" and x.streaming
    assert x.read_timeout == GET_READ_TIMEOUT_FLOOR
    assert header(x, "Accept") == "application/json, text/event-stream"
    assert header(x, "Mcp-Method") == "subscriptions/listen"
    assert header(x, "MCP-Protocol-Version") == "2026-07-28"
    assert header(x, "Mcp-Session-Id") is None
    open_stream(h, x)
    rid = body_of(x)["id"]
    h.conn.exchange_data(
        x.xid, sse_event(on_stream("notifications/tools/list_changed", rid)), h.now
    )
    assert h.conn.wants_exchange(x.xid)
    events = h.take_events(*LISTEN_KINDS)
    assert [(type(e), e.sub_id) for e in events] == [
        (ListenAcknowledged, sub),
        (ListenNotification, sub),
    ]
    assert h.conn.listen_state(sub) == "active"
    assert h.conn.next_deadline() is None  # the acknowledged stream is unbounded


def test_a_notification_on_the_stream_without_the_id_is_still_that_subscriptions() -> None:
    """SUB-31 makes the _meta id the only correlation on stdio; an HTTP listen stream
    is the subscription's own."""
    h = connected()
    a = h.conn.start_listen({"tools_list_changed": True}, now=0.0)
    xa = listen_post(h)
    b = h.conn.start_listen({"prompts_list_changed": True}, now=0.0)
    xb = listen_post(h)
    open_stream(h, xa)
    h.conn.exchange_head(xb.xid, 200, SSE_HEAD, h.now)
    bare = notification("notifications/prompts/list_changed")
    h.conn.exchange_data(
        xb.xid,
        sse_event(
            notification(
                "notifications/subscriptions/acknowledged",
                {"notifications": {"promptsListChanged": True}},
            )
        )
        + sse_event(bare),
        h.now,
    )
    h.conn.exchange_data(xa.xid, sse_event(bare.replace(b"prompts", b"tools")), h.now)
    events = h.take_events(*LISTEN_KINDS)
    assert [(type(e), e.sub_id) for e in events] == [
        (ListenAcknowledged, a),
        (ListenAcknowledged, b),
        (ListenNotification, b),
        (ListenNotification, a),
    ]
    assert events[2].method == "notifications/prompts/list_changed"
    assert events[3].method == "notifications/tools/list_changed"


@pytest.mark.parametrize(
    ("fail", "error_type"),
    [
        ("503", TransientServerError),
        ("network", TransportError),
        ("read_timeout", RequestTimeoutError),
        ("stream_end", ResponseStreamClosedError),
        ("stream_network", ResponseStreamClosedError),
        ("stream_read_timeout", ResponseStreamClosedError),
    ],
)
def test_a_dropped_stream_is_re_opened_after_a_backoff(fail: str, error_type: type) -> None:
    h = connected(retry_backoff=1.0)
    sub = h.conn.start_listen({"tools_list_changed": True}, now=0.0)
    x = listen_post(h)
    if fail == "503":
        h.reply_status(x, 503)
    elif fail == "stream_end":
        open_stream(h, x)
        h.conn.exchange_end(x.xid, h.now)
    elif fail.startswith("stream_"):  # the acknowledged stream breaks
        open_stream(h, x)
        kind = fail.removeprefix("stream_")
        h.conn.exchange_failed(x.xid, ExchangeFailure(kind), h.now)  # type: ignore[arg-type]
    else:  # before the head
        h.conn.exchange_failed(x.xid, ExchangeFailure(fail), h.now)  # type: ignore[arg-type]
    events = h.take_events(*LISTEN_KINDS)
    interrupted = events[-1]
    assert isinstance(interrupted, ListenInterrupted) and interrupted.sub_id == sub
    assert isinstance(interrupted.error, error_type)
    # SUB-14: not active while it waits to re-open.
    assert h.conn.listen_state(sub) == "waiting"
    assert h.conn.next_deadline() == pytest.approx(delay(1))
    assert h.exchanges() == []
    h.advance(delay(1))
    again = listen_post(h)
    assert body_of(again)["params"]["notifications"] == {"toolsListChanged": True}
    open_stream(h, again)
    assert [type(e) for e in h.take_events(*LISTEN_KINDS)] == [ListenAcknowledged]
    assert h.conn.listen_state(sub) == "active"


def test_re_open_backoff_grows_and_is_capped() -> None:
    h = connected(retry_backoff=1.0)
    h.conn.start_listen({"tools_list_changed": True}, now=0.0)
    waits = []
    for _ in range(8):
        x = listen_post(h)
        h.reply_status(x, 502)
        deadline = h.conn.next_deadline()
        assert deadline is not None
        waits.append(deadline - h.now)
        h.advance(deadline)
    assert waits[:3] == pytest.approx([delay(1), delay(2), delay(3)])
    assert max(waits) <= GET_MAX_DELAY
    assert any(isinstance(e, Diagnostic) and "re-opened in" in e.message for e in h.take_events())


@pytest.mark.parametrize(
    ("status", "error_type"),
    [(403, UnauthorizedError), (401, UnauthorizedError), (400, ServerError)],
)
def test_a_refusal_ends_the_subscription(status: int, error_type: type) -> None:
    h = connected()
    sub = h.conn.start_listen({"tools_list_changed": True}, now=0.0)
    h.reply_status(listen_post(h), status)
    (ended,) = h.take_events(ListenEnded)
    assert ended.sub_id == sub and isinstance(ended.error, error_type)
    h.advance(1000.0)
    assert h.exchanges() == []


def test_the_ack_timeout_bounds_every_re_open() -> None:
    """SUB-5: the first stream is acknowledged; the re-opened one never is."""
    h = connected(retry_backoff=1.0)
    sub = h.conn.start_listen({"tools_list_changed": True}, now=0.0, ack_timeout=4.0)
    x = listen_post(h)
    open_stream(h, x)
    h.conn.exchange_failed(x.xid, ExchangeFailure("network"), h.now)
    h.advance(h.conn.next_deadline() or 0.0)
    again = listen_post(h)
    h.conn.exchange_head(again.xid, 200, SSE_HEAD, h.now)
    opened_at = h.now
    assert h.conn.next_deadline() == opened_at + 4.0
    h.advance(opened_at + 4.0)
    assert AbortExchange(again.xid) in h.take_frames()
    (ended,) = h.take_events(ListenEnded)
    assert ended.sub_id == sub and isinstance(ended.error, RequestTimeoutError)
    assert h.exchanges() == []  # no notifications/cancelled POST: closing is the cancel


def test_close_listen_closes_the_stream_without_notifications_cancelled() -> None:
    """SUB-16."""
    h = connected()
    sub = h.conn.start_listen({"tools_list_changed": True}, now=0.0)
    x = listen_post(h)
    open_stream(h, x)
    h.take_events()
    h.conn.close_listen(sub, now=1.0)
    frames = h.take_frames()
    assert AbortExchange(x.xid) in frames
    assert not [f for f in frames if isinstance(f, StartExchange)]
    assert h.take_events() == [ListenEnded(sub, None)]
    assert not h.conn.wants_exchange(x.xid)


def test_close_listen_before_the_head_abandons_the_post() -> None:
    """SUB-16: even while the POST is still being opened."""
    h = connected()
    sub = h.conn.start_listen({"tools_list_changed": True}, now=0.0)
    x = listen_post(h)
    h.conn.close_listen(sub, now=0.0)
    assert AbortExchange(x.xid) in h.take_frames()
    h.conn.exchange_head(x.xid, 200, SSE_HEAD, 0.0)  # late: ignored
    assert h.take_events(*LISTEN_KINDS) == [ListenEnded(sub, None)]


def test_close_listen_while_waiting_to_re_open_sends_nothing_later() -> None:
    h = connected(retry_backoff=1.0)
    sub = h.conn.start_listen({"tools_list_changed": True}, now=0.0)
    h.reply_status(listen_post(h), 503)
    h.conn.close_listen(sub, now=0.1)
    assert h.conn.next_deadline() is None
    h.advance(100.0)
    assert h.exchanges() == []


def test_a_graceful_response_on_the_stream_ends_it() -> None:
    h = connected()
    sub = h.conn.start_listen({"tools_list_changed": True}, now=0.0)
    x = listen_post(h)
    open_stream(h, x)
    rid = body_of(x)["id"]
    h.conn.exchange_data(x.xid, sse_event(result(rid, {"resultType": "complete"})), h.now)
    h.conn.exchange_end(x.xid, h.now)
    events = h.take_events(*LISTEN_KINDS)
    assert events[-1] == ListenEnded(sub, None)
    h.advance(100.0)
    assert h.exchanges() == []


def test_a_failed_connect_waits_and_retries_instead_of_ending_it() -> None:
    """HTTP: the server is unreachable when the subscription starts: it waits (not
    active), the connection is tried again after the backoff, and the listen goes out
    once the server answers."""
    h = Harness(streamable_http_config(URL, retry_backoff=1.0), probe=True)
    sub = h.conn.start_listen({"tools_list_changed": True}, now=0.0)
    h.conn.transport_opened(0.0)
    (probe,) = h.exchanges()
    assert body_of(probe)["method"] == "server/discover"
    h.conn.exchange_failed(probe.xid, ExchangeFailure("network", "refused"), 0.0)
    events = h.take_events(*LISTEN_KINDS)
    assert [type(e) for e in events] == [ListenInterrupted]
    assert h.conn.listen_state(sub) == "waiting"
    assert h.exchanges() == []
    h.advance(delay(1))
    h.conn.transport_opened(h.now)
    (probe,) = h.exchanges()
    h.reply_json(probe, discover_result(body_of(probe)["id"]))
    open_stream(h, listen_post(h))
    assert [type(e) for e in h.take_events(*LISTEN_KINDS)] == [ListenAcknowledged]


def test_a_refused_connect_ends_it() -> None:
    h = Harness(streamable_http_config(URL), probe=True)
    sub = h.conn.start_listen({"tools_list_changed": True}, now=0.0)
    h.conn.transport_opened(0.0)
    (probe,) = h.exchanges()
    h.reply_status(probe, 401, headers=[("WWW-Authenticate", 'Bearer realm="x"')])
    (ended,) = h.take_events(ListenEnded)
    assert ended.sub_id == sub and isinstance(ended.error, UnauthorizedError)
