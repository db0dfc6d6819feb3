"""The connection machine in the 2026-07-28 era under random interleavings.

The stateful machines of ``test_connection_stateful.py`` (the same rules: answers,
errors, garbage, progress, server requests, lost transports, broken exchanges, time,
cancellations, close) run against a server that answers ``server/discover`` with a
``DiscoverResult`` at once, with ``protocol="modern"``. On top of the invariants there
(every call ends exactly once, no exception escapes, bounded memory), here:

* every request the client sends validates against the 2026-07-28 schema and carries
  the protocol version in ``_meta``; ``initialize`` is never sent;
* server requests are never handed out nor answered (LIFE-17);
* over Streamable / plain HTTP every exchange is a POST (no GET stream, no resumption,
  no DELETE) and none carries ``Mcp-Session-Id`` or ``Last-Event-ID`` (SHTTP-6), even
  though the scripted server hands out session ids.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import attrs
from _stateful_base import message
from test_connection_stateful import (
    SETTINGS,
    Ex,
    HttpMachine,
    PlainHttpMachine,
    StdioMachine,
    header,
)

from mcp_proto.connection import ServerRequest, frames
from mcp_proto.modern.meta import PROTOCOL_VERSION

sys.path.insert(0, str(Path(__file__).with_name("modern")))
from _modern_wire import REQUEST_DEFS, assert_valid_request

V = "2026-07-28"
CAPS = {"tools": {}, "resources": {}, "prompts": {}, "logging": {}}


def discover_answer(request_id: Any) -> bytes:
    return message(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "result": {"supportedVersions": [V], "capabilities": CAPS},
        }
    )


def check_request(msg: dict[str, Any]) -> None:
    assert msg["method"] != "initialize"
    if msg["method"] in REQUEST_DEFS:
        assert_valid_request(msg)
    assert msg["params"]["_meta"][PROTOCOL_VERSION] == V


class ModernStdio(StdioMachine):
    config = attrs.evolve(StdioMachine.config, protocol="modern")

    def perform_transport(self, frame: Any) -> None:
        super().perform_transport(frame)
        for data in frame.messages:
            msg = json.loads(data)
            if "method" in msg and "id" in msg:
                check_request(msg)
                if msg["method"] == "server/discover":
                    # Answered at once (the probe, and ping): not left to the rules.
                    self.wire.pop(msg["id"], None)
                    self.todo.append(lambda rid=msg["id"]: self.feed(discover_answer(rid) + b"\n"))
            assert msg.get("method") != "notifications/initialized"

    def check_event(self, event: Any) -> None:
        assert not isinstance(event, ServerRequest), event  # LIFE-17
        super().check_event(event)


class _ModernHttp:
    """The checks and the discover answer shared by both HTTP machines."""

    def perform_transport(self, frame: Any) -> None:
        if isinstance(frame, frames.StartExchange):
            assert frame.method == "POST", frame  # no GET stream, no resume, no DELETE
            assert header(frame.headers, "mcp-session-id") is None
            assert header(frame.headers, "last-event-id") is None
        super().perform_transport(frame)  # type: ignore[misc]
        if not isinstance(frame, frames.StartExchange) or frame.body is None:
            return
        msg = json.loads(frame.body)
        if "method" in msg and "id" in msg:
            check_request(msg)
            assert header(frame.headers, "mcp-method") == msg["method"]
            if msg["method"] == "server/discover":
                self.wire.pop(msg["id"], None)  # type: ignore[attr-defined]
                self.todo.append(  # type: ignore[attr-defined]
                    lambda xid=frame.xid, rid=msg["id"]: self._discovered(xid, rid)
                )

    def _discovered(self, xid: int, request_id: Any) -> None:
        ex: Ex | None = self.ex.get(xid)  # type: ignore[attr-defined]
        if ex is None or ex.head is not None:
            return
        self.head(xid, 200, "application/json")  # type: ignore[attr-defined]
        self.data(xid, discover_answer(request_id))  # type: ignore[attr-defined]
        self.end(xid)  # type: ignore[attr-defined]

    def check_event(self, event: Any) -> None:
        assert not isinstance(event, ServerRequest), event
        super().check_event(event)  # type: ignore[misc]


class ModernHttp(_ModernHttp, HttpMachine):
    config = attrs.evolve(HttpMachine.config, protocol="modern")


class ModernPlainHttp(_ModernHttp, PlainHttpMachine):
    config = attrs.evolve(PlainHttpMachine.config, protocol="modern")


TestModernStdioConnection = ModernStdio.TestCase
TestModernStdioConnection.settings = SETTINGS

TestModernHttpConnection = ModernHttp.TestCase
TestModernHttpConnection.settings = SETTINGS

TestModernPlainHttpConnection = ModernPlainHttp.TestCase
TestModernPlainHttpConnection.settings = SETTINGS
