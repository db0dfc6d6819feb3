"""``subscriptions/listen`` in the connection machine over stdio (issue 10 item 7).

SUB-3, SUB-5, SUB-13, SUB-15, SUB-19, SUB-21, SUB-23, SUB-25, SUB-29, SUB-31. Pure: time
is a number; the harness plays the server process.
"""

from __future__ import annotations

from typing import Any

import pytest
from _listen_support import ack, assert_valid, assert_valid_request, discover_result, on_stream
from _machine_driver import Harness, init_result, notification, result
from _proto_support import error

from mcp_proto.config import stdio_config
from mcp_proto.connection import (
    Closed,
    CloseTransport,
    Connected,
    ConnectFailed,
    Disconnected,
    ListenAcknowledged,
    ListenEnded,
    ListenInterrupted,
    ListenNotification,
    MessageDiscarded,
    NotificationReceived,
    OpenTransport,
)
from mcp_proto.errors import (
    CapabilityError,
    ConnectionError,
    LocalProtocolError,
    RemoteProtocolError,
    RequestTimeoutError,
    ServerError,
    UnknownResultTypeError,
    ValidationError,
)

LISTEN_KINDS = (ListenAcknowledged, ListenNotification, ListenInterrupted, ListenEnded)


def harness(**kwargs: Any) -> Harness:
    return Harness(stdio_config(["srv"], **kwargs), probe=True)


def open_process(h: Harness) -> list[dict[str, Any]]:
    """The machine asked for a process: open it and answer the discover probe as a
    2026-07-28 server; returns what it wrote once ready."""
    assert OpenTransport() in h.take_frames()
    h.conn.transport_opened(h.now)
    (probe,) = h.written()
    assert probe["method"] == "server/discover"
    h.feed(discover_result(probe["id"]))
    assert h.conn.era == "modern"
    return h.written()


def connected(**kwargs: Any) -> Harness:
    h = harness(**kwargs)
    h.conn.connect(h.now)
    assert open_process(h) == []
    assert [type(e) for e in h.take_events()] == [Connected]
    return h


def listen(h: Harness, **flt: Any) -> tuple[int, dict[str, Any]]:
    """Start a subscription on a connected machine; returns (sub id, the request)."""
    sub = h.conn.start_listen(flt or {"tools_list_changed": True}, now=h.now)
    (req,) = h.written()
    assert req["method"] == "subscriptions/listen"
    assert_valid_request(req)
    return sub, req


restart = open_process


# ------------------------------------------------------------------ opening


def test_listen_request_carries_the_filter_and_the_modern_meta() -> None:
    h = connected()
    sub, req = listen(h, tools_list_changed=True, resource_subscriptions=["file:///a"])
    params = req["params"]
    assert params["notifications"] == {
        "toolsListChanged": True,
        "resourceSubscriptions": ["file:///a"],
    }
    meta = params["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert meta["io.modelcontextprotocol/clientInfo"] == {"name": "machine-test", "version": "1.0"}
    assert h.conn.listen_state(sub) == "opening"


def test_acknowledgment_is_judged_and_frozen() -> None:
    h = connected()
    sub, req = listen(h, tools_list_changed=True, prompts_list_changed=True)
    h.feed(ack(req["id"], toolsListChanged=True, promptsListChanged=False))
    (event,) = h.take_events()
    assert isinstance(event, ListenAcknowledged) and event.sub_id == sub
    assert event.acknowledgment.unsupported == ("promptsListChanged",)
    with pytest.raises(TypeError):
        event.acknowledgment.acknowledged["toolsListChanged"] = False  # type: ignore[index]
    assert h.conn.listen_state(sub) == "active"


def test_notifications_are_demultiplexed_by_subscription_id() -> None:
    """SUB-31: two streams share the pipe; each notification goes to the subscription
    whose listen id it names; one naming no open stream is discarded; one naming none
    is an ordinary notification."""
    h = connected()
    a, ra = listen(h, tools_list_changed=True)
    b, rb = listen(h, resource_subscriptions=["file:///x"])
    h.feed(
        ack(rb["id"], resourceSubscriptions=["file:///x"]),
        ack(ra["id"], toolsListChanged=True),
        on_stream("notifications/resources/updated", rb["id"], uri="file:///x"),
        on_stream("notifications/tools/list_changed", ra["id"]),
        on_stream("notifications/tools/list_changed", 999),
        notification("notifications/message", {"level": "info", "data": "hi"}),
    )
    events = h.take_events()
    got = [(type(e).__name__, getattr(e, "sub_id", None)) for e in events]
    assert got[:4] == [
        ("ListenAcknowledged", b),
        ("ListenAcknowledged", a),
        ("ListenNotification", b),
        ("ListenNotification", a),
    ]
    assert events[2].method == "notifications/resources/updated"
    assert events[2].params["uri"] == "file:///x"
    assert isinstance(events[4], MessageDiscarded)
    assert any(isinstance(e, NotificationReceived) for e in events[5:])


def test_start_before_connect_connects_and_sends_once_ready() -> None:
    h = harness()
    sub = h.conn.start_listen({"toolsListChanged": True}, now=0.0)
    assert h.conn.listen_state(sub) == "waiting"
    (req,) = restart(h)
    assert req["method"] == "subscriptions/listen"
    assert_valid_request(req)


def test_the_filter_is_frozen_at_creation() -> None:
    """SUB-13: mutating the list passed in changes neither the request nor a re-send."""
    h = connected()
    uris = ["file:///a"]
    h.conn.start_listen({"resource_subscriptions": uris}, now=0.0)
    uris.append("file:///evil")
    (req,) = h.written()
    assert req["params"]["notifications"] == {"resourceSubscriptions": ["file:///a"]}
    h.now = 10.0
    h.conn.receive_eof(h.now)
    (again,) = restart(h)
    assert again["params"]["notifications"] == {"resourceSubscriptions": ["file:///a"]}


@pytest.mark.parametrize(
    "flt",
    [
        {},
        {"bogus": True},
        {"tools_list_changed": "yes"},
        {"resource_subscriptions": "file:///a"},
        3,
    ],
)
def test_a_bad_filter_is_a_validation_error_and_starts_nothing(flt: Any) -> None:
    h = connected()
    with pytest.raises(ValidationError):
        h.conn.start_listen(flt, now=0.0)
    assert h.written() == []


@pytest.mark.parametrize("timeout", [-1, float("nan"), "5", True])
def test_a_bad_ack_timeout_is_a_validation_error(timeout: Any) -> None:
    h = connected()
    with pytest.raises(ValidationError):
        h.conn.start_listen({"tools_list_changed": True}, now=0.0, ack_timeout=timeout)


def test_a_handshake_era_server_has_no_listen() -> None:
    h = Harness(stdio_config(["srv"]))  # era stays "legacy"
    h.connect_stdio()
    with pytest.raises(CapabilityError):
        h.conn.start_listen({"tools_list_changed": True}, now=0.0)
    assert h.written() == []


def test_listen_is_refused_while_closing() -> None:
    h = connected()
    h.conn.close(0.0)  # closing until the driver reports the transport closed
    with pytest.raises(LocalProtocolError):
        h.conn.start_listen({"tools_list_changed": True}, now=0.0)


# ------------------------------------------------------------------ ack timeout (SUB-5)


def test_no_acknowledgment_within_the_read_timeout_cancels_and_ends() -> None:
    h = connected()  # read_timeout 15
    sub, req = listen(h)
    assert h.conn.next_deadline() == 15.0
    h.advance(15.0)
    (cancel,) = h.written()
    assert_valid("CancelledNotification", cancel)
    assert cancel["params"]["requestId"] == req["id"]
    (ended,) = h.take_events(ListenEnded)
    assert ended.sub_id == sub and isinstance(ended.error, RequestTimeoutError)
    assert h.conn.listen_state(sub) == "ended"
    assert h.conn.next_deadline() is None


def test_an_explicit_ack_timeout_and_false_waits_for_ever() -> None:
    h = connected()
    h.conn.start_listen({"tools_list_changed": True}, now=0.0, ack_timeout=2.5)
    h.conn.start_listen({"tools_list_changed": True}, now=0.0, ack_timeout=False)
    h.written()
    assert h.conn.next_deadline() == 2.5
    h.advance(2.5)
    assert len(h.take_events(ListenEnded)) == 1
    assert h.conn.next_deadline() is None


def test_the_acknowledged_stream_has_no_deadline() -> None:
    h = connected()
    _sub, req = listen(h)
    h.feed(ack(req["id"], toolsListChanged=True))
    assert h.conn.next_deadline() is None
    h.advance(10_000.0)
    h.feed(on_stream("notifications/tools/list_changed", req["id"]))
    kinds = [type(e) for e in h.take_events(*LISTEN_KINDS)]
    assert kinds == [ListenAcknowledged, ListenNotification]


def test_the_ack_timeout_bounds_the_resend_too() -> None:
    """SUB-5: acknowledged first, the re-send to a restarted process never is."""
    h = connected()
    _sub, req = listen(h)
    h.feed(ack(req["id"], toolsListChanged=True))
    h.now = 100.0
    h.conn.receive_eof(h.now)
    (again,) = restart(h)
    assert again["method"] == "subscriptions/listen"
    h.take_events()
    assert h.conn.next_deadline() == 115.0
    h.advance(115.0)
    (ended,) = h.take_events(ListenEnded)
    assert isinstance(ended.error, RequestTimeoutError)


# ------------------------------------------------------------------ closing (SUB-15, SUB-29)


def test_close_listen_cancels_the_request_and_ends_once() -> None:
    h = connected()
    sub, req = listen(h)
    h.feed(ack(req["id"], toolsListChanged=True))
    h.take_events()
    h.conn.close_listen(sub, now=1.0)
    (cancel,) = h.written()
    assert_valid("CancelledNotification", cancel)
    assert cancel == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": req["id"], "reason": "the client closed the subscription"},
    }
    assert h.take_events() == [ListenEnded(sub, None)]
    h.conn.close_listen(sub, now=1.0)  # ended: ignored
    h.feed(on_stream("notifications/tools/list_changed", req["id"]))
    assert [type(e) for e in h.take_events()] == [MessageDiscarded]
    assert h.written() == []


def test_ids_written_to_a_dead_process_are_not_cancelled_on_its_replacement() -> None:
    h = connected()
    sub, _first = listen(h)
    h.now = 10.0
    h.conn.receive_eof(h.now)
    (second,) = restart(h)
    h.conn.close_listen(sub, now=h.now)
    cancels = [m["params"]["requestId"] for m in h.written()]
    assert cancels == [second["id"]]


@pytest.mark.parametrize(
    ("res", "expected"),
    [
        ({"resultType": "complete"}, None),
        ({}, None),
        ({"resultType": "input_required", "inputRequests": {}}, RemoteProtocolError),
        ({"resultType": "mystery"}, UnknownResultTypeError),
        (3, RemoteProtocolError),
    ],
)
def test_a_response_to_the_listen_request_ends_the_subscription(
    res: Any, expected: type[Exception] | None
) -> None:
    h = connected()
    sub, req = listen(h)
    h.feed(ack(req["id"], toolsListChanged=True))
    h.feed(result(req["id"], res))
    (ended,) = h.take_events(ListenEnded)
    assert ended.sub_id == sub
    if expected is None:
        assert ended.error is None
    else:
        assert type(ended.error) is expected
    assert h.conn.next_deadline() is None


def test_the_server_cancelling_the_listen_request_ends_the_subscription() -> None:
    """2026-07-28 schema, CancelledNotification: on stdio the server sends it "solely
    to terminate a subscriptions/listen stream"."""
    h = connected()
    sub, req = listen(h)
    h.feed(ack(req["id"], toolsListChanged=True))
    h.take_events()
    h.feed(notification("notifications/cancelled", {"requestId": req["id"], "reason": "bye"}))
    assert h.take_events() == [ListenEnded(sub, None)]
    assert h.written() == []  # nothing cancelled back
    assert h.conn.next_deadline() is None
    h.feed(on_stream("notifications/tools/list_changed", req["id"]))
    assert [type(e) for e in h.take_events()] == [MessageDiscarded]


def test_an_error_response_ends_the_subscription_with_it() -> None:
    h = connected()
    _sub, req = listen(h)
    h.feed(error(req["id"], -32602, "bad filter"))
    (ended,) = h.take_events(ListenEnded)
    assert isinstance(ended.error, ServerError) and ended.error.code == -32602


def test_method_not_found_is_a_capability_the_server_lacks() -> None:
    """A server without subscriptions answers -32601: the subscription ends with a
    CapabilityError naming the server (mcp-server-time 2026.10.19 does this), the
    server's own error kept as its cause."""
    h = connected()
    _sub, req = listen(h)
    h.feed(error(req["id"], -32601, "Method not found"))
    (ended,) = h.take_events(ListenEnded)
    assert isinstance(ended.error, CapabilityError)
    assert str(ended.error) == (
        "server 'srv' does not offer subscriptions/listen (it answered -32601, method not found)"
    )
    cause = ended.error.__cause__
    assert isinstance(cause, ServerError) and cause.code == -32601


def test_closing_the_connection_cancels_live_listens_then_ends_them() -> None:
    h = connected()
    _sub, req = listen(h)
    h.conn.close(1.0)
    (cancel,) = h.written()
    assert_valid("CancelledNotification", cancel)
    assert cancel["params"]["requestId"] == req["id"]
    assert CloseTransport() in h.take_frames()
    h.conn.transport_closed(1.0)
    events = h.take_events()
    assert [type(e) for e in events] == [ListenEnded, Closed]
    assert isinstance(events[0].error, ConnectionError)


# ------------------------------------------------------------------ process restarts


def test_an_exited_process_is_restarted_and_the_subscriptions_re_sent() -> None:
    """SUB-19: nobody is making calls; the exit alone restarts the process."""
    h = connected()
    a, ra = listen(h, tools_list_changed=True)
    b, rb = listen(h, prompts_list_changed=True)
    h.feed(ack(ra["id"], toolsListChanged=True), ack(rb["id"], promptsListChanged=True))
    h.take_events()
    h.now = 30.0
    h.conn.receive_eof(h.now, "exit status 1")
    events = h.take_events()
    assert [type(e) for e in events] == [Disconnected, ListenInterrupted, ListenInterrupted]
    assert h.conn.listen_state(a) == "waiting"
    resent = restart(h)
    assert [m["method"] for m in resent] == ["subscriptions/listen"] * 2
    for m in resent:
        assert_valid_request(m)
    # A new process numbers its requests afresh: the ids are the new process's.
    assert h.conn.listen_state(a) == h.conn.listen_state(b) == "opening"
    assert [m["params"]["notifications"] for m in resent] == [
        {"toolsListChanged": True},
        {"promptsListChanged": True},
    ]
    h.feed(ack(resent[0]["id"], toolsListChanged=True))
    h.feed(on_stream("notifications/tools/list_changed", resent[0]["id"]))
    tail = h.take_events(*LISTEN_KINDS)
    assert [(type(e), e.sub_id) for e in tail] == [(ListenAcknowledged, a), (ListenNotification, a)]


def test_a_crash_loop_ends_the_subscriptions_instead_of_respawning() -> None:
    """SUB-21/24: the process died 1 s after receiving them (< 5 s)."""
    h = connected()
    _sub, _req = listen(h)
    h.now = 1.0
    h.conn.receive_eof(h.now)
    crash_resend = restart(h)
    assert crash_resend == []  # not re-sent
    (ended,) = h.take_events(ListenEnded)
    assert isinstance(ended.error, ConnectionError)
    assert "not re-sent" in str(ended.error)
    # SUB-23: the record is spent: a subscription opened on the replacement is sent.
    sub2, _req2 = listen(h)
    assert h.conn.listen_state(sub2) == "opening"


def test_the_interval_runs_from_when_the_process_received_them() -> None:
    """SUB-24: process up at 0, subscriptions received at 100, died at 103: a crash
    loop even though the process lived 103 s."""
    h = connected()
    h.now = 100.0
    listen(h)
    h.now = 103.0
    h.conn.receive_eof(h.now)
    assert restart(h) == []
    assert len(h.take_events(ListenEnded)) == 1


def test_the_restart_interval_is_settable_and_checked() -> None:
    h = connected()
    assert h.conn.subscription_restart_min_interval == 5.0
    h.conn.subscription_restart_min_interval = 0.5
    listen(h)
    h.now = 1.0  # lived 1 s after receiving them: more than 0.5 s, so re-sent
    h.conn.receive_eof(h.now)
    assert [m["method"] for m in restart(h)] == ["subscriptions/listen"]
    with pytest.raises(ValueError):
        h.conn.subscription_restart_min_interval = -1


def test_a_replacement_that_cannot_start_ends_them_with_its_error() -> None:
    h = connected()
    sub, _req = listen(h)
    h.now = 50.0
    h.conn.receive_eof(h.now)
    assert OpenTransport() in h.take_frames()
    refused = ConnectionError("spawn failed: no such file")
    h.conn.transport_failed(refused, h.now)
    events = h.take_events()
    assert ConnectFailed(refused) in events
    assert ListenEnded(sub, refused) in events
    assert h.take_frames() == []  # no further respawn


def test_a_replacement_speaking_the_handshake_era_ends_them_with_capability_error() -> None:
    """SUB-25."""
    h = connected()
    sub, _req = listen(h)
    h.now = 50.0
    h.conn.receive_eof(h.now)
    assert OpenTransport() in h.take_frames()
    h.conn.transport_opened(h.now)
    (probe,) = h.written()
    assert probe["method"] == "server/discover"
    h.feed(error(probe["id"], -32601, "Method not found"))  # a handshake-era server
    (init,) = h.written()
    assert init["method"] == "initialize"
    h.feed(init_result(init["id"]))
    assert [m["method"] for m in h.written()] == ["notifications/initialized"]
    assert h.conn.era == "legacy"
    (ended,) = h.take_events(ListenEnded)
    assert isinstance(ended.error, CapabilityError)
    assert h.conn.listen_state(sub) == "ended"


def test_a_subscription_opened_during_the_restart_is_not_judged_by_the_crash() -> None:
    h = connected()
    old, _ = listen(h)
    h.now = 1.0
    h.conn.receive_eof(h.now)
    new = h.conn.start_listen({"prompts_list_changed": True}, now=h.now)
    sent = restart(h)
    assert [m["params"]["notifications"] for m in sent] == [{"promptsListChanged": True}]
    ended = h.take_events(ListenEnded)
    assert [e.sub_id for e in ended] == [old]
    assert h.conn.listen_state(new) == "opening"


def test_connected_event_still_comes_for_the_restart() -> None:
    h = connected()
    listen(h)
    h.now = 20.0
    h.conn.receive_eof(h.now)
    restart(h)
    assert Connected in [type(e) for e in h.take_events()]


def test_a_listen_the_full_request_table_cannot_carry_ends_with_that_error() -> None:
    """Every request slot of the session is taken by calls in flight
    (``limits.max_pending_requests``): the listen request cannot be sent, so the
    subscription ends with the session's ``LocalProtocolError``, as a call beyond the
    bound fails. Before (found by fuzz/fuzz_connection.py), ``start_listen`` raised that
    error after the subscription was registered: the caller never got its id, and it
    ended later with an id nobody knew."""
    from mcp_proto.limits import Limits

    h = Harness(stdio_config(["srv"]), probe=True, limits=Limits(max_pending_requests=1))
    h.conn.connect(h.now)
    assert open_process(h) == []
    h.take_events()
    h.conn.start_call("tools/list", now=h.now)
    h.written()
    sub = h.conn.start_listen({"tools_list_changed": True}, now=h.now)  # must not raise
    (ended,) = h.take_events(ListenEnded)
    assert ended.sub_id == sub and isinstance(ended.error, LocalProtocolError)
    assert "too many requests" in str(ended.error)
    assert h.conn.listen_state(sub) == "ended"
    assert h.written() == []
