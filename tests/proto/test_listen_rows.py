"""Proofs of the 2026-07-28 listen rows the audit had as untested (pure: time is a
number; the harness plays the server).

SUB-27: a failure on a stream that a newer stream already replaced raises (here: ends
or interrupts the subscription) only if the newer stream has itself failed.
RES-13: the subscriber waiting on its own listen request always gets its answer: a
connection dropping at the instant the acknowledgment arrives does not leave it
waiting for its ack timeout, and a replacement request actually sent is not answered
(acknowledged) until the server answers it.
SUB-30 (the machine's half): a listen request is framed for the transport it was
recorded against: what was written before a process loss is never written again to
the replacement, which gets the re-sent request only.
"""

from __future__ import annotations

from typing import Any

from _listen_support import ack, assert_valid_request, connect_modern_http, discover_result
from _machine_driver import SSE_HEAD, Harness, body_of, sse_event

from mcp_proto.config import stdio_config, streamable_http_config
from mcp_proto.connection import (
    Disconnected,
    ExchangeFailure,
    ListenAcknowledged,
    ListenEnded,
    ListenInterrupted,
    ListenNotification,
    MessageDiscarded,
    OpenTransport,
    StartExchange,
    Write,
)
from mcp_proto.errors import ResponseStreamClosedError, TransportError

URL = "http://127.0.0.1:9/mcp"
LISTEN_KINDS = (ListenAcknowledged, ListenNotification, ListenInterrupted, ListenEnded)


# ------------------------------------------------------------------ helpers


def http_connected(**kwargs: Any) -> Harness:
    h = Harness(streamable_http_config(URL, **kwargs), probe=True)
    connect_modern_http(h)
    return h


def listen_post(h: Harness) -> StartExchange:
    (x,) = h.exchanges()
    msg = body_of(x)
    assert msg["method"] == "subscriptions/listen"
    assert_valid_request(msg)
    return x


def acknowledge(h: Harness, x: StartExchange) -> None:
    h.conn.exchange_head(x.xid, 200, SSE_HEAD, h.now)
    h.conn.exchange_data(x.xid, sse_event(ack(body_of(x)["id"], toolsListChanged=True)), h.now)


def stdio_connected() -> Harness:
    h = Harness(stdio_config(["srv"]), probe=True)
    h.conn.connect(h.now)
    open_stdio(h)
    h.take_events()
    return h


def open_stdio(h: Harness) -> list[dict[str, Any]]:
    """Open a process, answer its discover probe; what it was written once ready."""
    assert OpenTransport() in h.take_frames()
    h.conn.transport_opened(h.now)
    (probe,) = h.written()
    assert probe["method"] == "server/discover"
    h.feed(discover_result(probe["id"]))
    return h.written()


def stdio_listen(h: Harness) -> tuple[int, dict[str, Any]]:
    sub = h.conn.start_listen({"tools_list_changed": True}, now=h.now)
    (req,) = h.written()
    assert req["method"] == "subscriptions/listen"
    assert_valid_request(req)
    return sub, req


# ------------------------------------------------------------------ SUB-27


def replaced_stream(h: Harness) -> tuple[int, StartExchange, StartExchange]:
    """A subscription whose first stream dropped and was replaced by an acknowledged
    second one: (sub id, the old exchange, the new one)."""
    sub = h.conn.start_listen({"tools_list_changed": True}, now=h.now)
    old = listen_post(h)
    acknowledge(h, old)
    h.conn.exchange_failed(old.xid, ExchangeFailure("network"), h.now)
    h.advance(h.conn.next_deadline() or h.now)
    new = listen_post(h)
    assert body_of(new)["id"] != body_of(old)["id"]
    acknowledge(h, new)
    assert [type(e) for e in h.take_events(*LISTEN_KINDS)] == [
        ListenAcknowledged,
        ListenInterrupted,
        ListenAcknowledged,
    ]
    assert h.conn.listen_state(sub) == "active"
    return sub, old, new


def test_sub27_a_late_failure_of_the_replaced_stream_is_ignored() -> None:
    """The old stream's failures (reported again, or its end) after a newer stream
    replaced it: the subscription stays active on the new stream, nothing re-opens."""
    h = http_connected(retry_backoff=1.0)
    sub, old, new = replaced_stream(h)
    h.conn.exchange_failed(old.xid, ExchangeFailure("network"), h.now)
    h.conn.exchange_failed(old.xid, ExchangeFailure("read_timeout"), h.now)
    h.conn.exchange_end(old.xid, h.now)
    assert h.take_events(*LISTEN_KINDS) == []
    assert h.conn.listen_state(sub) == "active"
    assert h.conn.next_deadline() is None  # no re-open scheduled
    h.advance(h.now + 1000.0)
    assert h.exchanges() == []
    # The new stream still delivers.
    h.conn.exchange_data(
        new.xid,
        sse_event(b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}'),
        h.now,
    )
    assert [(type(e), e.sub_id) for e in h.take_events(*LISTEN_KINDS)] == [
        (ListenNotification, sub)
    ]


def test_sub27_the_newer_streams_own_failure_interrupts() -> None:
    """Only the newer stream failing interrupts (and re-opens) the subscription."""
    h = http_connected(retry_backoff=1.0)
    sub, old, new = replaced_stream(h)
    h.conn.exchange_failed(old.xid, ExchangeFailure("network"), h.now)
    assert h.take_events(*LISTEN_KINDS) == []
    h.conn.exchange_failed(new.xid, ExchangeFailure("network"), h.now)
    (interrupted,) = h.take_events(*LISTEN_KINDS)
    assert isinstance(interrupted, ListenInterrupted) and interrupted.sub_id == sub
    assert isinstance(interrupted.error, (TransportError, ResponseStreamClosedError))
    assert h.conn.listen_state(sub) == "waiting"
    h.advance(h.conn.next_deadline() or h.now)
    third = listen_post(h)
    assert body_of(third)["id"] not in (body_of(old)["id"], body_of(new)["id"])


# ------------------------------------------------------------------ RES-13


def test_res13_http_ack_then_drop_in_the_same_instant_answers_at_once() -> None:
    """ "Ack then immediate RST": the waiter gets the acknowledgment, then the
    interruption, both at once; no ack deadline is left to expire."""
    h = http_connected(retry_backoff=1.0)
    sub = h.conn.start_listen({"tools_list_changed": True}, now=0.0, ack_timeout=30.0)
    x = listen_post(h)
    acknowledge(h, x)
    h.conn.exchange_failed(x.xid, ExchangeFailure("network"), h.now)
    events = h.take_events(*LISTEN_KINDS)
    assert [(type(e), e.sub_id) for e in events] == [
        (ListenAcknowledged, sub),
        (ListenInterrupted, sub),
    ]
    # What is left is the re-open backoff, well before the 30 s ack timeout.
    deadline = h.conn.next_deadline()
    assert deadline is not None and deadline < 30.0
    h.advance(deadline)
    listen_post(h)
    assert h.take_events(*LISTEN_KINDS) == []


def test_res13_http_drop_before_the_ack_interrupts_at_once() -> None:
    """The stream drops (RST) with the head only: the waiter hears of it at once."""
    h = http_connected(retry_backoff=1.0)
    sub = h.conn.start_listen({"tools_list_changed": True}, now=0.0, ack_timeout=30.0)
    x = listen_post(h)
    h.conn.exchange_head(x.xid, 200, SSE_HEAD, h.now)
    h.conn.exchange_failed(x.xid, ExchangeFailure("network"), h.now)
    (interrupted,) = h.take_events(*LISTEN_KINDS)
    assert isinstance(interrupted, ListenInterrupted) and interrupted.sub_id == sub
    assert h.conn.listen_state(sub) == "waiting"


def test_res13_http_the_replacement_is_not_acknowledged_by_the_old_streams_ack() -> None:
    """A replacement actually sent is acknowledged only by the server's answer to it:
    a (late, duplicated) acknowledgment naming the old request is discarded."""
    h = http_connected(retry_backoff=1.0)
    sub = h.conn.start_listen({"tools_list_changed": True}, now=0.0, ack_timeout=30.0)
    old = listen_post(h)
    acknowledge(h, old)
    h.conn.exchange_failed(old.xid, ExchangeFailure("network"), h.now)
    h.take_events()
    h.advance(h.conn.next_deadline() or h.now)
    new = listen_post(h)
    assert h.conn.listen_state(sub) == "opening"
    h.conn.exchange_head(new.xid, 200, SSE_HEAD, h.now)
    stale = ack(body_of(old)["id"], toolsListChanged=True)
    h.conn.exchange_data(new.xid, sse_event(stale), h.now)
    events = h.take_events()
    assert not [e for e in events if isinstance(e, ListenAcknowledged)]
    assert any(isinstance(e, MessageDiscarded) for e in events)
    assert h.conn.listen_state(sub) == "opening"
    h.conn.exchange_data(new.xid, sse_event(ack(body_of(new)["id"], toolsListChanged=True)), h.now)
    assert [(type(e), e.sub_id) for e in h.take_events(*LISTEN_KINDS)] == [
        (ListenAcknowledged, sub)
    ]
    assert h.conn.listen_state(sub) == "active"


def test_res13_stdio_ack_then_exit_in_the_same_read() -> None:
    """stdio: the acknowledgment and the end of the process's output in one read: the
    waiter gets the acknowledgment then the interruption; the re-sent request is not
    acknowledged until the new process acknowledges it."""
    h = stdio_connected()
    sub, req = stdio_listen(h)
    h.now = 30.0  # past the restart policy's crash-loop interval (SUB-21)
    h.conn.receive_data(ack(req["id"], toolsListChanged=True) + b"\n", h.now)
    h.conn.receive_eof(h.now, "exit status 1")
    events = h.take_events()
    assert [type(e) for e in events if isinstance(e, (*LISTEN_KINDS, Disconnected))] == [
        ListenAcknowledged,
        Disconnected,
        ListenInterrupted,
    ]
    resent = open_stdio(h)
    assert [m["method"] for m in resent] == ["subscriptions/listen"]
    assert h.conn.listen_state(sub) == "opening"
    assert h.take_events(*LISTEN_KINDS) == []
    h.feed(ack(resent[0]["id"], toolsListChanged=True))
    assert [(type(e), e.sub_id) for e in h.take_events(*LISTEN_KINDS)] == [
        (ListenAcknowledged, sub)
    ]


# ------------------------------------------------------------------ SUB-30 (machine)


def test_sub30_a_write_taken_before_the_loss_is_not_written_again() -> None:
    """The listen request's Write frame is handed out once, before the loss; the
    replacement process gets a Write of its own (re-sent request, after its probe):
    nothing framed for the dead process is framed again for the new one."""
    h = stdio_connected()
    h.conn.start_listen({"tools_list_changed": True}, now=h.now)
    # The shell has taken the frame but the process dies before it is written.
    first = [f for f in h.take_frames() if isinstance(f, Write)]
    assert len(first) == 1
    h.now = 30.0  # past the restart policy's crash-loop interval (SUB-21)
    h.conn.receive_eof(h.now, "exit status 1")
    frames = h.take_frames()
    assert not [f for f in frames if isinstance(f, Write)]  # nothing for the dead one
    assert OpenTransport() in frames
    h.conn.transport_opened(h.now)
    (probe,) = h.written()
    assert probe["method"] == "server/discover"
    h.feed(discover_result(probe["id"]))
    resent = h.written()
    assert [m["method"] for m in resent] == ["subscriptions/listen"]
    assert h.written() == []


def test_sub27_the_aborted_stream_of_a_kept_subscription_fails_late() -> None:
    """SUB-22 keeps a subscription over a host's cleanup-then-reconnect: its old stream
    is aborted (``AbortExchange``) and a new one opened on the next connection. The
    driver's report that the aborted exchange failed may come after the new stream is
    acknowledged: it is the replaced stream's, and changes nothing."""
    h = http_connected(retry_backoff=1.0)
    sub = h.conn.start_listen({"tools_list_changed": True}, now=h.now)
    old = listen_post(h)
    acknowledge(h, old)
    h.take_events()
    h.conn.close(h.now, keep_subscriptions=True)
    frames = h.take_frames()
    assert any(getattr(f, "xid", None) == old.xid for f in frames)  # aborted
    h.conn.transport_closed(h.now)
    assert [type(e) for e in h.take_events(*LISTEN_KINDS)] == [ListenInterrupted]
    # The host's reconnect: the kept subscription goes out once the server is known.
    h.conn.connect(h.now)
    assert OpenTransport() in h.take_frames()
    h.conn.transport_opened(h.now)
    (probe,) = h.exchanges()
    h.reply_json(probe, discover_result(body_of(probe)["id"]))
    new = listen_post(h)
    acknowledge(h, new)
    assert [type(e) for e in h.take_events(*LISTEN_KINDS)] == [ListenAcknowledged]
    # The aborted exchange's failure, reported late by the driver.
    h.conn.exchange_failed(old.xid, ExchangeFailure("network"), h.now)
    h.conn.exchange_end(old.xid, h.now)
    assert h.take_events(*LISTEN_KINDS) == []
    assert h.conn.listen_state(sub) == "active"
    assert h.conn.next_deadline() is None
    # Its own failure does interrupt it.
    h.conn.exchange_failed(new.xid, ExchangeFailure("network"), h.now)
    assert [type(e) for e in h.take_events(*LISTEN_KINDS)] == [ListenInterrupted]
