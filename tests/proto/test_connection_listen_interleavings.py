"""A stateful test of subscriptions in the machine over stdio: random interleavings of
listen/close, acknowledgments, notifications, graceful and error responses, server
cancellations, process exits and restarts (a modern or a legacy replacement, a failed
spawn), timeouts and connection close.

Invariants (SUB-5, SUB-19..28): every subscription ends exactly once and nothing is
said of it afterwards; a subscription has at most one listen request open on the live
process (no lost or duplicated listen, SUB-28); every listen request written validates
against the 2026-07-28 schema; nothing but typed errors escapes. At the end, ``close``
ends every subscription.
"""

from __future__ import annotations

import json
from typing import Any

from _listen_support import ack, assert_valid_request, discover_result, on_stream
from _machine_driver import Harness, init_result, notification, result
from _proto_support import error
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from mcp_proto.config import stdio_config
from mcp_proto.connection import (
    CloseTransport,
    ConnectionState,
    ListenAcknowledged,
    ListenEnded,
    ListenInterrupted,
    ListenNotification,
    OpenTransport,
    Write,
)
from mcp_proto.errors import MCPError

_FILTERS = [
    {"tools_list_changed": True},
    {"prompts_list_changed": True},
    {"resource_subscriptions": ["file:///a", "file:///b"]},
]


class ListenMachine(RuleBasedStateMachine):
    @initialize()
    def start(self) -> None:
        self.h = Harness(stdio_config(["srv"], read_timeout=10.0), probe=True)
        self.h.conn.connect(0.0)
        self.started: set[int] = set()
        self.ended: set[int] = set()
        # listen request ids written to the live process (live or not any more)
        self.wire: list[Any] = []
        self.process_open = False
        self.awaiting_open = True  # OpenTransport asked for, not opened yet
        self.probe_id: Any = None
        self.init_id: Any = None
        self.legacy_next = False
        self.closing = False
        self.drain()

    # -------------------------------------------------------------- plumbing

    def drain(self) -> None:
        h = self.h
        frames = h.take_frames()
        for frame in frames:
            if isinstance(frame, OpenTransport):
                self.awaiting_open = True
                self.process_open = False
            elif isinstance(frame, CloseTransport):
                self.process_open = False
                self.wire.clear()
        self._read_written(frames)
        for event in h.take_events():
            sub = getattr(event, "sub_id", None)
            if isinstance(event, (ListenAcknowledged, ListenNotification, ListenInterrupted)):
                assert sub in self.started and sub not in self.ended, event
            elif isinstance(event, ListenEnded):
                assert sub in self.started and sub not in self.ended, event
                self.ended.add(sub)

    def _read_written(self, frames: list[Any]) -> None:
        for frame in frames:
            if not isinstance(frame, Write):
                continue
            for data in frame.messages:
                msg = json.loads(data)
                method = msg.get("method")
                if method == "server/discover":
                    self.probe_id = msg["id"]
                elif method == "initialize":
                    self.init_id = msg["id"]
                elif method == "subscriptions/listen":
                    assert_valid_request(msg)
                    self.wire.append(msg["id"])

    # -------------------------------------------------------------- user

    @precondition(lambda self: not self.closing)
    @rule(flt=st.sampled_from(_FILTERS), ack_timeout=st.sampled_from([None, 3.0, False]))
    def listen(self, flt: dict[str, Any], ack_timeout: Any) -> None:
        try:
            sub = self.h.conn.start_listen(flt, now=self.h.now, ack_timeout=ack_timeout)
        except MCPError:
            return  # CapabilityError on a handshake-era server
        self.started.add(sub)
        self.drain()

    @rule(pick=st.integers(0, 20))
    def close_listen(self, pick: int) -> None:
        if not self.started:
            return
        sub = sorted(self.started)[pick % len(self.started)]
        self.h.conn.close_listen(sub, now=self.h.now)
        self.drain()
        assert sub in self.ended

    @rule(dt=st.sampled_from([0.5, 0.5, 2.0, 4.0, 11.0]))
    def advance(self, dt: float) -> None:
        self.h.advance(self.h.now + dt)
        self.drain()

    # -------------------------------------------------------------- the process

    @precondition(lambda self: self.awaiting_open and not self.closing)
    @rule(fail=st.sampled_from([False, False, False, True]))
    def open_process(self, fail: bool) -> None:
        self.awaiting_open = False
        if fail:
            self.h.conn.transport_failed(MCPError("spawn failed"), self.h.now)
        else:
            self.process_open = True
            self.h.conn.transport_opened(self.h.now)
        self.drain()

    @precondition(lambda self: self.awaiting_open and not self.closing)
    @rule()
    def open_modern_process(self) -> None:
        """The common path in one step: spawned, the probe answered as 2026-07-28."""
        self.open_process(False)
        if self.process_open and self.probe_id is not None:
            self.answer_probe(False)

    @precondition(lambda self: self.process_open and self.probe_id is not None)
    @rule(legacy=st.sampled_from([False, False, False, True]))
    def answer_probe(self, legacy: bool) -> None:
        rid, self.probe_id = self.probe_id, None
        if legacy:
            self.h.feed(error(rid, -32601, "Method not found"))
        else:
            self.h.feed(discover_result(rid))
        self.drain()

    @precondition(lambda self: self.process_open and self.init_id is not None)
    @rule()
    def answer_initialize(self) -> None:
        rid, self.init_id = self.init_id, None
        self.h.feed(init_result(rid))
        self.drain()

    @precondition(lambda self: self.process_open)
    @rule()
    def process_exits(self) -> None:
        self.probe_id = self.init_id = None
        self.process_open = False
        self.wire.clear()
        self.h.conn.receive_eof(self.h.now, "exit status 1")
        self.drain()

    # -------------------------------------------------------------- the server on a stream

    @precondition(lambda self: self.process_open and self.wire)
    @rule(pick=st.integers(0, 20), what=st.sampled_from(["ack", "note", "stray", "bad_ack"]))
    def stream_message(self, pick: int, what: str) -> None:
        ids = self.wire
        rid = ids[pick % len(ids)]
        if what == "ack":
            line = ack(rid, toolsListChanged=True)
        elif what == "bad_ack":
            line = on_stream("notifications/subscriptions/acknowledged", rid, notifications=3)
        elif what == "note":
            line = on_stream("notifications/resources/updated", rid, uri="file:///a")
        else:
            line = on_stream("notifications/tools/list_changed", 10_000 + pick)
        self.h.feed(line)
        self.drain()

    @precondition(lambda self: self.process_open and self.wire)
    @rule(
        pick=st.integers(0, 20),
        how=st.sampled_from(["complete", "input_required", "error", "cancel", "scalar"]),
    )
    def server_ends(self, pick: int, how: str) -> None:
        ids = self.wire
        rid = ids[pick % len(ids)]
        if how == "complete":
            line = result(rid, {"resultType": "complete"})
        elif how == "input_required":
            line = result(rid, {"resultType": "input_required"})
        elif how == "scalar":
            line = result(rid, 7)
        elif how == "error":
            line = error(rid, -32602, "bad filter")
        else:
            line = notification("notifications/cancelled", {"requestId": rid})
        self.h.feed(line)
        self.drain()

    # -------------------------------------------------------------- invariants

    @invariant()
    def at_most_one_listen_per_subscription(self) -> None:
        """SUB-28: a subscription is never carried by two open listen requests."""
        subs = self._subs()
        rids = [s.rid for s in subs.values() if s.rid is not None]
        assert len(rids) == len(set(rids))
        for sub in subs.values():
            assert len(sub.written) <= 1
            assert sub.sub_id in self.started and sub.sub_id not in self.ended

    @invariant()
    def open_subscriptions_are_the_started_ones_not_ended(self) -> None:
        assert set(self._subs()) == self.started - self.ended

    def _subs(self) -> dict[int, Any]:
        """The machine's subscriptions (none before the first ``start_listen``: the
        connection has no listen manager until then)."""
        return getattr(self.h.conn._listen, "subs", {})

    def teardown(self) -> None:
        h = getattr(self, "h", None)
        if h is None:
            return
        if h.conn.state is not ConnectionState.CLOSING:
            h.conn.close(h.now)
        self.drain()
        h.conn.transport_closed(h.now)
        self.drain()
        assert self.ended == self.started


ListenMachine.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestListenInterleavings = ListenMachine.TestCase
