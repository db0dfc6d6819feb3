"""Shared pieces of the machine's ``subscriptions/listen`` tests (pure)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from _machine_driver import Harness, notification

from mcp_proto.modern.notify_queue import SUBSCRIPTION_ID_KEY

# The 2026-07-28 wire checker lives with the modern tests.
sys.path.insert(0, str(Path(__file__).with_name("modern")))
from _modern_wire import assert_valid_request

__all__ = ["ack", "assert_valid_request", "modern", "on_stream"]


def modern(h: Harness) -> Harness:
    """Put the machine in the 2026-07-28 era before it connects.

    Stand-in until the machine decides the era itself (``server/discover``, built in
    parallel on branch i10-machine): the handshake still runs, but ``conn.era`` is what
    the listen rules consult, and it is kept across reconnects."""
    h.conn.era = "modern"
    return h


def on_stream(method: str, sid: Any, **params: Any) -> bytes:
    """A notification on the listen stream ``sid`` (SUB-31)."""
    meta = dict(params.pop("_meta", {}))
    meta[SUBSCRIPTION_ID_KEY] = sid
    return notification(method, {"_meta": meta, **params})


def ack(sid: Any, **granted: Any) -> bytes:
    return on_stream("notifications/subscriptions/acknowledged", sid, notifications=granted)
