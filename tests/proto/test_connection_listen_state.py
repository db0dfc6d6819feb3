"""The driver-facing state of a subscription (``SubscriptionState``) and the NOTIF-3
routing order, fed by real machine events. Pure."""

from __future__ import annotations

from typing import Any

import pytest
from _listen_support import ack, discover_result, on_stream
from _machine_driver import Harness

from mcp_proto.config import stdio_config
from mcp_proto.connection import ListenNotification, OpenTransport
from mcp_proto.connection.events import ListenAcknowledged, ListenEnded, ListenInterrupted
from mcp_proto.connection.subscription import SubscriptionState, route_listen_notification
from mcp_proto.errors import TransportError
from mcp_proto.modern.notify_queue import ListenFilter


def connected() -> Harness:
    h = Harness(stdio_config(["srv"]), probe=True)
    h.conn.connect(0.0)
    assert h.take_frames() == [OpenTransport()]
    h.conn.transport_opened(0.0)
    (probe,) = h.written()
    h.feed(discover_result(probe["id"]))
    h.take_events()
    return h


def feed_state(h: Harness, state: SubscriptionState) -> None:
    for event in h.take_events(
        ListenAcknowledged, ListenNotification, ListenInterrupted, ListenEnded
    ):
        state.apply(event)


def test_state_follows_the_machine_events() -> None:
    h = connected()
    flt = ListenFilter(tools_list_changed=True, resource_subscriptions=("file:///a",))
    sub = h.conn.start_listen(flt, now=0.0)
    (req,) = h.written()
    state = SubscriptionState(sub, flt)
    assert not state.active and state.acknowledged is None
    h.feed(ack(req["id"], toolsListChanged=True, resourceSubscriptions=[]))
    feed_state(h, state)
    assert state.active
    assert state.unsupported == ("resourceSubscriptions",)
    assert dict(state.acknowledged or {}) == {"toolsListChanged": True, "resourceSubscriptions": ()}
    h.feed(
        on_stream("notifications/tools/list_changed", req["id"]),
        on_stream("notifications/tools/list_changed", req["id"]),
    )
    feed_state(h, state)
    assert state.pending_notifications == 2
    assert state.pending_notification_bytes > 0
    entry = state.pop()
    assert entry is not None and entry.method == "notifications/tools/list_changed"
    h.now = 20.0
    h.conn.receive_eof(h.now)  # the process exits: waiting for the restart (SUB-14)
    feed_state(h, state)
    assert not state.active and state.interruption is not None and not state.ended
    h.conn.close_listen(sub, now=h.now)
    feed_state(h, state)
    assert state.ended and state.error is None and not state.active


def test_a_listener_that_falls_behind_loses_repeats_and_the_metrics_say_so() -> None:
    """SUB-7/9/12 through the machine: a flood beyond the bound stays bounded."""
    h = connected()
    flt = ListenFilter(resource_subscriptions=("file:///busy", "file:///quiet"))
    sub = h.conn.start_listen(flt, now=0.0)
    (req,) = h.written()
    state = SubscriptionState(sub, flt, max_count=8)
    h.feed(ack(req["id"], resourceSubscriptions=["file:///busy", "file:///quiet"]))
    h.feed(on_stream("notifications/resources/updated", req["id"], uri="file:///quiet"))
    for _ in range(100):
        h.feed(on_stream("notifications/resources/updated", req["id"], uri="file:///busy"))
    feed_state(h, state)
    assert state.pending_notifications == 8
    assert state.dropped_notifications == 93
    uris = [e.params["uri"] for e in state.queue.entries() if e.params]
    assert uris.count("file:///quiet") == 1  # the quiet resource keeps its signal


def test_events_of_another_subscription_or_after_the_end_are_ignored() -> None:
    state = SubscriptionState(1, ListenFilter(tools_list_changed=True))
    state.apply(ListenNotification(2, "notifications/tools/list_changed", {}))
    assert state.pending_notifications == 0
    state.apply(ListenEnded(1, TransportError("gone")))
    state.apply(ListenNotification(1, "notifications/tools/list_changed", {}))
    assert state.ended and isinstance(state.error, TransportError)
    assert state.pending_notifications == 0


def test_routing_order_is_invalidate_then_queue_then_host() -> None:
    """NOTIF-3/NOTIF-4: a recording sink sees the caches dropped before the listeners'
    queue has it, and the host callback last."""
    state = SubscriptionState(1, ListenFilter(tools_list_changed=True))
    seen: list[tuple[str, int]] = []
    event = ListenNotification(1, "notifications/tools/list_changed", {"x": 1})

    def invalidate(method: str, params: dict[str, Any]) -> None:
        seen.append(("invalidate", state.pending_notifications))

    def host(method: str, params: dict[str, Any]) -> None:
        seen.append(("host", state.pending_notifications))

    route_listen_notification(event, state, invalidate=invalidate, host=host)
    assert seen == [("invalidate", 0), ("host", 1)]


def test_a_raising_invalidation_stops_neither_delivery_nor_the_host() -> None:
    """NOTIF-7."""
    state = SubscriptionState(1, ListenFilter(tools_list_changed=True))
    called: list[str] = []

    def invalidate(method: str, params: dict[str, Any]) -> None:
        raise RuntimeError("cache bug")

    event = ListenNotification(1, "notifications/tools/list_changed", {})
    with pytest.raises(RuntimeError):
        route_listen_notification(
            event, state, invalidate=invalidate, host=lambda m, p: called.append(m)
        )
    assert state.pending_notifications == 1 and called == ["notifications/tools/list_changed"]
