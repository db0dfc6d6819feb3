"""SUB-22 in the machine: a client-requested teardown (``close(keep_subscriptions=
True)``, what a host's ``server.cleanup()`` does) keeps the subscriptions: each is
cancelled on the wire, waits without forcing a reconnect, and goes out again on the
host's next connect, never judged by the restart bound (SUB-21) however soon after
receiving them the process was torn down. A plain ``close()`` still ends them. Every
request written validates against the 2026-07-28 schema. Time is a number.
"""

from __future__ import annotations

from _listen_support import ack, assert_valid, assert_valid_request
from _machine_driver import Harness
from test_connection_listen import connected, listen, open_process

from mcp_proto.connection import (
    Closed,
    CloseTransport,
    ListenAcknowledged,
    ListenEnded,
    ListenInterrupted,
)
from mcp_proto.errors import ConnectionError


def cleanup(h: Harness, now: float) -> None:
    h.conn.close(now, keep_subscriptions=True)
    assert CloseTransport() in h.take_frames()
    h.conn.transport_closed(now)


def test_a_cleanup_then_reconnect_loop_keeps_the_subscription() -> None:
    h = connected()
    sub, req = listen(h)
    h.feed(ack(req["id"], toolsListChanged=True))
    h.take_events()
    for round_trip in range(4):  # each teardown well inside the 5 s restart bound
        h.now += 0.1
        cleanup(h, h.now)
        events = h.take_events()
        assert [type(e) for e in events] == [ListenInterrupted, Closed]
        assert isinstance(events[0].error, ConnectionError)
        assert h.conn.listen_state(sub) == "waiting"
        assert h.take_frames() == []  # kept ones wait for the host: no reconnect
        h.conn.connect(h.now)  # the host's reconnect
        (resent,) = open_process(h)  # a new process gets the listen again
        assert resent["method"] == "subscriptions/listen", round_trip
        assert_valid_request(resent)
        h.feed(ack(resent["id"], toolsListChanged=True))
        (acked,) = h.take_events(ListenAcknowledged)
        assert acked.sub_id == sub and h.conn.listen_state(sub) == "active"


def test_the_teardown_cancels_the_listen_on_the_wire() -> None:
    h = connected()
    _sub, req = listen(h)
    h.conn.close(h.now, keep_subscriptions=True)
    (cancel,) = h.written()
    assert_valid("CancelledNotification", cancel)
    assert cancel["params"]["requestId"] == req["id"]


def test_a_new_listen_after_the_cleanup_reconnects_and_sends_both() -> None:
    h = connected()
    kept, _req = listen(h)
    cleanup(h, h.now)
    h.take_events()
    fresh = h.conn.start_listen({"prompts_list_changed": True}, now=h.now)
    sent = open_process(h)
    assert [m["params"]["notifications"] for m in sent] == [
        {"toolsListChanged": True},
        {"promptsListChanged": True},
    ]
    assert h.conn.listen_state(kept) == h.conn.listen_state(fresh) == "opening"


def test_a_plain_close_after_a_kept_one_ends_them() -> None:
    h = connected()
    sub, _req = listen(h)
    cleanup(h, h.now)
    h.take_events()
    h.conn.close(h.now)  # the client is done (client.close())
    events = h.take_events()
    assert [type(e) for e in events] == [ListenEnded, Closed]
    assert h.conn.listen_state(sub) == "ended"


def test_a_plain_close_still_ends_them() -> None:
    h = connected()
    sub, _req = listen(h)
    h.conn.close(h.now)
    h.conn.transport_closed(h.now)
    assert [type(e) for e in h.take_events()] == [ListenEnded, Closed]
    assert h.conn.listen_state(sub) == "ended"
