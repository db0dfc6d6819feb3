"""RES-10 and RES-12 in the connection machine (pure: time is a number; the harness
plays the server). The newer seed's subscription paragraph is the specification.

RES-10: every later acknowledgment of a listen stream is re-checked; a stream
re-opened after an HTTP drop (or re-sent to a restarted stdio process) that comes
back *without* a URI it granted before closes the subscription, and so does a repeated
acknowledgment on the live stream that withdraws one.
RES-12: a stream that fails to become live again (the replacement is refused with a
4xx, or nothing acknowledges it within the ack timeout) is closed: the subscription
ends, its request is given up.
"""

from __future__ import annotations

from typing import Any

from _listen_support import ack, assert_valid_request
from _machine_driver import SSE_HEAD, Harness, body_of, sse_event
from _modern_wire import assert_valid
from test_listen_rows import LISTEN_KINDS, http_connected, listen_post, open_stdio, stdio_connected

from mcp_proto.connection import (
    AbortExchange,
    ExchangeFailure,
    ListenAcknowledged,
    ListenEnded,
    ListenInterrupted,
    StartExchange,
)
from mcp_proto.errors import RequestTimeoutError, ResourceReadError

URI = "demo://r"


def acknowledge(h: Harness, x: StartExchange, uris: list[str]) -> None:
    h.conn.exchange_head(x.xid, 200, SSE_HEAD, h.now)
    h.conn.exchange_data(x.xid, sse_event(ack(body_of(x)["id"], resourceSubscriptions=uris)), h.now)


def resource_listen(h: Harness, uris: list[str], **kwargs: Any) -> tuple[int, StartExchange]:
    sub = h.conn.start_listen({"resource_subscriptions": uris}, now=h.now, **kwargs)
    x = listen_post(h)
    assert body_of(x)["params"]["notifications"] == {"resourceSubscriptions": uris}
    return sub, x


def dropped_and_reopened(
    h: Harness, uris: list[str], granted: list[str] | None = None
) -> tuple[int, StartExchange]:
    """A resource subscription for ``uris`` acknowledged with ``granted`` (all of
    them by default), dropped, re-opened: (sub, the replacement's exchange, not
    acknowledged yet)."""
    sub, first = resource_listen(h, uris)
    acknowledge(h, first, uris if granted is None else granted)
    h.conn.exchange_failed(first.xid, ExchangeFailure("network"), h.now)
    assert [type(e) for e in h.take_events(*LISTEN_KINDS)] == [
        ListenAcknowledged,
        ListenInterrupted,
    ]
    h.advance(h.conn.next_deadline() or h.now)
    new = listen_post(h)
    assert h.conn.listen_state(sub) == "opening"
    return sub, new


def test_res10_a_reopened_stream_acknowledged_without_the_uri_closes_it() -> None:
    h = http_connected(retry_backoff=1.0)
    sub, new = dropped_and_reopened(h, [URI])
    acknowledge(h, new, [])
    (ended,) = h.take_events(*LISTEN_KINDS)
    assert isinstance(ended, ListenEnded) and ended.sub_id == sub
    assert isinstance(ended.error, ResourceReadError) and URI in str(ended.error)
    assert h.conn.listen_state(sub) == "ended"
    # The replacement stream is closed (its cancellation on HTTP, SUB-16), nothing
    # re-opens.
    assert AbortExchange(new.xid) in h.take_frames()
    assert h.conn.next_deadline() is None
    h.advance(h.now + 1000.0)
    assert h.exchanges() == []


def test_res10_a_reopened_stream_still_naming_the_uri_stays() -> None:
    h = http_connected(retry_backoff=1.0)
    sub, new = dropped_and_reopened(h, [URI])
    acknowledge(h, new, [URI])
    assert [type(e) for e in h.take_events(*LISTEN_KINDS)] == [ListenAcknowledged]
    assert h.conn.listen_state(sub) == "active"


def test_res10_only_a_withdrawn_uri_counts() -> None:
    """A URI the first acknowledgment already left out (reported ``unsupported``) is
    not withdrawn by a re-open that leaves it out again; one it granted is."""
    h = http_connected(retry_backoff=1.0)
    sub, new = dropped_and_reopened(h, [URI, "demo://never"], granted=[URI])
    acknowledge(h, new, [URI])
    assert [type(e) for e in h.take_events(*LISTEN_KINDS)] == [ListenAcknowledged]
    assert h.conn.listen_state(sub) == "active"


def test_res10_a_later_acknowledgment_on_the_live_stream_is_rechecked() -> None:
    h = http_connected(retry_backoff=1.0)
    sub, x = resource_listen(h, [URI])
    acknowledge(h, x, [URI])
    h.take_events()
    # The same acknowledgment again: no news, still active.
    h.conn.exchange_data(
        x.xid, sse_event(ack(body_of(x)["id"], resourceSubscriptions=[URI])), h.now
    )
    assert h.take_events(*LISTEN_KINDS) == []
    assert h.conn.listen_state(sub) == "active"
    # One that no longer names the URI ends it.
    h.conn.exchange_data(x.xid, sse_event(ack(body_of(x)["id"], resourceSubscriptions=[])), h.now)
    (ended,) = h.take_events(*LISTEN_KINDS)
    assert isinstance(ended, ListenEnded) and isinstance(ended.error, ResourceReadError)
    assert AbortExchange(x.xid) in h.take_frames()


def test_res10_stdio_a_resent_listen_acknowledged_without_the_uri_is_cancelled() -> None:
    """stdio: the process restarts, the subscription is re-sent; the new process
    acknowledges without the URI: the subscription ends and its listen request is
    cancelled on the live process (SUB-29)."""
    h = stdio_connected()
    sub = h.conn.start_listen({"resource_subscriptions": [URI]}, now=h.now)
    (req,) = h.written()
    assert_valid_request(req)
    h.feed(ack(req["id"], resourceSubscriptions=[URI]))
    h.now = 30.0  # past the restart policy's crash-loop interval (SUB-21)
    h.conn.receive_eof(h.now, "exit status 1")
    (resent,) = open_stdio(h)
    assert resent["method"] == "subscriptions/listen"
    h.take_events()
    h.feed(ack(resent["id"], resourceSubscriptions=[]))
    (ended,) = h.take_events(*LISTEN_KINDS)
    assert isinstance(ended, ListenEnded) and ended.sub_id == sub
    assert isinstance(ended.error, ResourceReadError)
    (cancel,) = h.written()
    assert cancel["method"] == "notifications/cancelled"
    assert cancel["params"]["requestId"] == resent["id"]
    assert_valid("CancelledNotification", cancel)


def test_res12_a_replacement_refused_with_a_4xx_ends_the_subscription() -> None:
    h = http_connected(retry_backoff=1.0)
    sub, new = dropped_and_reopened(h, [URI])
    h.reply_status(new, 403)
    (ended,) = h.take_events(*LISTEN_KINDS)
    assert isinstance(ended, ListenEnded) and ended.error is not None
    assert h.conn.listen_state(sub) == "ended"
    h.advance(h.now + 1000.0)
    assert h.exchanges() == []  # never re-opened


def test_res12_a_replacement_not_acknowledged_in_time_is_closed() -> None:
    h = http_connected(retry_backoff=1.0)
    sub = h.conn.start_listen({"resource_subscriptions": [URI]}, now=h.now, ack_timeout=5.0)
    first = listen_post(h)
    acknowledge(h, first, [URI])
    h.conn.exchange_failed(first.xid, ExchangeFailure("network"), h.now)
    h.take_events()
    h.advance(h.conn.next_deadline() or h.now)
    new = listen_post(h)
    h.conn.exchange_head(new.xid, 200, SSE_HEAD, h.now)
    h.advance(h.now + 5.0)
    (ended,) = h.take_events(*LISTEN_KINDS)
    assert isinstance(ended, ListenEnded) and isinstance(ended.error, RequestTimeoutError)
    assert AbortExchange(new.xid) in h.take_frames()
    assert h.conn.listen_state(sub) == "ended"
