"""Shared pieces of the machine's ``subscriptions/listen`` tests (pure).

The machine decides the era itself (``server/discover`` first); these helpers play a
2026-07-28 server's side of that, and check every listen request against the
revision's schema."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from _machine_driver import ALL_CAPS, Harness, body_of, notification, result

from mcp_proto.connection import Connected, OpenTransport
from mcp_proto.modern.notify_queue import SUBSCRIPTION_ID_KEY

# The 2026-07-28 wire checker lives with the modern tests.
sys.path.insert(0, str(Path(__file__).with_name("modern")))
from _modern_wire import assert_valid, assert_valid_request

__all__ = [
    "V",
    "ack",
    "assert_valid",
    "assert_valid_request",
    "connect_modern_http",
    "discover_result",
    "on_stream",
]

V = "2026-07-28"


def discover_result(rid: Any, *, caps: dict[str, Any] | None = None) -> bytes:
    return result(
        rid,
        {
            "supportedVersions": [V],
            "capabilities": ALL_CAPS if caps is None else caps,
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "2"}},
        },
    )


def connect_modern_http(h: Harness) -> None:
    """Open and answer the discover probe (a modern server: no session, no GET
    stream). Leaves frames and events empty."""
    h.conn.connect(h.now)
    assert h.take_frames() == [OpenTransport()]
    h.conn.transport_opened(h.now)
    (probe,) = h.exchanges()
    assert body_of(probe)["method"] == "server/discover"
    h.reply_json(probe, discover_result(body_of(probe)["id"]))
    assert [type(e) for e in h.take_events()] == [Connected]
    assert h.conn.era == "modern"
    assert h.exchanges() == []
    h.take_frames()


def on_stream(method: str, sid: Any, **params: Any) -> bytes:
    """A notification on the listen stream ``sid`` (SUB-31)."""
    meta = dict(params.pop("_meta", {}))
    meta[SUBSCRIPTION_ID_KEY] = sid
    return notification(method, {"_meta": meta, **params})


def ack(sid: Any, **granted: Any) -> bytes:
    return on_stream("notifications/subscriptions/acknowledged", sid, notifications=granted)
