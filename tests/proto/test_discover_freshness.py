"""LIFE-20 / CACHE-13 / CAP-6: a 2026-07-28 server's ``server/discover`` result is
re-fetched once its ``ttlMs`` has elapsed, on the next access that needs it (a
capability judgement), and never before a request the server judges itself.

Two layers, time a number: the connection machine (the discover result's freshness
recorded at receipt; a re-fetched result replaces the capabilities it judges with) and
the client core (which accesses need the result). Every request sent validates against
the 2026-07-28 schema (``Modern`` harness, ``_client_modern`` driver).
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from _client_modern import MODERN, OK, ModernDriver, Peer, make
from _machine_driver import ALL_CAPS, result
from _proto_support import drive
from test_connection_modern import Modern, harness, open_probe

from mcp_proto.connection import CallSucceeded, Connected
from mcp_proto.errors import CapabilityError, RemoteProtocolError
from mcp_proto.session import ServerInfo


def discover_body(caps: dict[str, Any], ttl: Any = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "supportedVersions": [MODERN],
        "capabilities": caps,
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "2"}},
        **extra,
    }
    if ttl is not None:
        body["ttlMs"] = ttl
    return body


# ------------------------------------------------------------------ the machine


def connect(h: Modern, body: dict[str, Any]) -> ServerInfo:
    probe = open_probe(h)
    h.feed(result(probe["id"], body))
    (connected,) = h.take_events(Connected)
    info: ServerInfo = connected.info
    return info


@pytest.mark.parametrize("ttl", [None, 0, -5, "60000", 1.5, True])
def test_an_absent_zero_negative_or_malformed_ttl_is_stale_at_once(ttl: Any) -> None:
    h = harness()
    h.now = 7.0
    info = connect(h, discover_body(ALL_CAPS, ttl))
    assert (info.ttl_ms, info.received_at) == (0, 7.0)
    assert info.discover_stale(7.0)


def test_a_positive_ttl_is_counted_from_receipt() -> None:
    h = harness()
    h.now = 10.0
    info = connect(h, discover_body(ALL_CAPS, 2_500))
    assert not info.discover_stale(12.49)
    assert info.discover_stale(12.5)  # caching.mdx: fresh while now < received + ttl


def test_the_handshake_era_has_nothing_to_refetch() -> None:
    assert not ServerInfo("2025-11-25", {}, None, None).discover_stale(1e9)


def test_a_refetched_discover_replaces_what_the_session_judges_with() -> None:
    h = harness()
    connect(h, discover_body({"tools": {}}))
    with pytest.raises(CapabilityError):
        h.conn.start_call("prompts/list", now=h.now)
    h.now = 20.0
    call = h.conn.start_call("server/discover", now=h.now)
    (sent,) = h.written()  # validated against the 2026-07-28 schema
    assert sent["method"] == "server/discover" and "_meta" in sent["params"]
    body = discover_body({"tools": {}, "prompts": {}}, 60_000, instructions="new")
    h.feed(result(sent["id"], body))
    (done,) = h.take_events()
    assert isinstance(done, CallSucceeded) and done.call_id == call
    assert done.result == body  # the caller gets the discover result itself
    server = h.conn.server
    assert server is not None
    assert server.capabilities == {"tools": {}, "prompts": {}}
    assert (server.instructions, server.ttl_ms, server.received_at) == ("new", 60_000, 20.0)
    h.conn.start_call("prompts/list", now=h.now)  # judged on the new capabilities
    (listed,) = h.written()
    assert listed["method"] == "prompts/list"


@pytest.mark.parametrize(
    "answer",
    [
        {"capabilities": {"prompts": {}}},  # not a DiscoverResult
        discover_body({"prompts": {}}) | {"supportedVersions": ["2099-01-01"]},
    ],
)
def test_an_unusable_refetch_changes_nothing(answer: dict[str, Any]) -> None:
    h = harness()
    before = connect(h, discover_body({"tools": {}}))
    h.conn.start_call("server/discover", now=h.now)
    (sent,) = h.written()
    h.feed(result(sent["id"], answer))
    assert [type(e) for e in h.take_events()] == [CallSucceeded]
    assert h.conn.server is before


# ------------------------------------------------------------------ the client core


@attrs.define
class DiscoveringPeer(Peer):
    """A modern peer as the machine shows it: ``Connect`` reports the discover result's
    freshness; a ``server/discover`` call answers ``offer`` and (as the machine does,
    tested above) makes it the capabilities the next ``Connect`` reports."""

    driver: ModernDriver | None = None
    ttl: Any = 0
    offer: dict[str, Any] | None = None  # what the server declares from now on
    received_at: float = 100.0
    ttl_ms: int = 0

    def __attrs_post_init__(self) -> None:
        self.ttl_ms = self.ttl if isinstance(self.ttl, int) and self.ttl > 0 else 0
        self.script.setdefault("server/discover", self._discover)
        self.script.setdefault("tools/call", self._tools_call)

    def info(self) -> ServerInfo:
        return ServerInfo(MODERN, self.caps, None, None, self.ttl_ms, self.received_at)

    def _discover(self, params: Any) -> dict[str, Any]:
        assert self.driver is not None
        if self.offer is not None:
            self.caps = self.offer
        self.received_at = self.driver.now
        return discover_body(self.caps, self.ttl)

    def _tools_call(self, params: Any) -> Any:
        if "tools" not in self.caps:  # the session's own judgement (CAP-1)
            raise CapabilityError("the server did not declare 'tools'")
        return OK


def modern(**peer: Any) -> tuple[Any, ModernDriver, DiscoveringPeer]:
    p = DiscoveringPeer(**peer)
    core, d = make({"a": p})
    p.driver = d
    return core, d, p


def page(*names: str) -> dict[str, Any]:
    return {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names]}


def test_a_stale_discover_is_refetched_before_a_capability_judgement() -> None:
    core, d, _p = modern(ttl=5_000, script={"tools/list": page("t")})
    drive(core.list_tools(cache=False), d.perform)
    assert d.sent("server/discover") == []  # fresh (received at 100.0)
    d.now = 105.0
    drive(core.list_tools(cache=False), d.perform)
    assert [c.method for c in d.calls] == ["tools/list", "server/discover", "tools/list"]
    d.now = 109.9
    drive(core.list_tools(cache=False), d.perform)
    assert len(d.sent("server/discover")) == 1  # fresh again for 5 s from receipt
    d.now = 110.0
    drive(core.list_tools(cache=False), d.perform)
    assert len(d.sent("server/discover")) == 2
    info = drive(core.cache_info("discover"), d.perform)["a"]
    assert (info.ttl_ms, info.received_at, info.fresh) == (5_000, 110.0, True)


def test_a_capability_gained_since_the_last_discover_is_seen_once_stale() -> None:
    complete = {"completion/complete": {"completion": {"values": ["x"]}}}
    core, d, p = modern(ttl=60_000, caps={"tools": {}}, script=complete)
    p.offer = {"tools": {}, "completions": {}}
    ref, arg = {"type": "ref/prompt", "name": "p"}, {"name": "a", "value": ""}
    with pytest.raises(CapabilityError):  # fresh: the known set judges, nothing sent
        drive(core.complete(ref, arg), d.perform)
    assert d.calls == []
    d.now += 60
    assert drive(core.complete(ref, arg), d.perform) == {"values": ["x"]}
    assert [c.method for c in d.calls] == ["server/discover", "completion/complete"]


def test_a_zero_ttl_adds_no_discover_before_calls_the_server_judges() -> None:
    core, d, _p = modern(ttl=0, script={"tools/list": page("t")})
    for _ in range(3):
        assert drive(core.call_tool("t", {}, server="a"), d.perform) == OK
    # Finding the tool lists tools: a judgement ("tools" declared?), so the stale
    # discover is re-fetched first; the calls themselves add nothing.
    assert [c.method for c in d.calls] == [
        "server/discover",
        "tools/list",
        "tools/call",
        "tools/call",
        "tools/call",
    ]


def test_a_refusal_on_a_stale_discover_refetches_then_sends() -> None:
    core, d, p = modern(ttl=1_000, caps={"tools": {}}, script={"tools/list": page("t")})
    drive(core.list_tools(), d.perform)
    p.caps = {}  # the session now believes "tools" missing (say, a reconnection)
    p.offer = {"tools": {}}
    d.now += 2
    assert drive(core.call_tool("t", {}, server="a"), d.perform) == OK
    assert [c.method for c in d.calls] == [
        "tools/list",
        "tools/call",
        "server/discover",
        "tools/call",
    ]


def test_a_refusal_on_a_fresh_discover_stands() -> None:
    core, d, p = modern(ttl=60_000, caps={"tools": {}}, script={"tools/list": page("t")})
    drive(core.list_tools(), d.perform)
    p.caps = {}
    p.offer = {"tools": {}}
    with pytest.raises(CapabilityError):
        drive(core.call_tool("t", {}, server="a"), d.perform)
    assert d.sent("server/discover") == []


def test_a_malformed_refetch_is_a_typed_error() -> None:
    core, d, _p = modern(ttl=0, script={"server/discover": {"capabilities": {}}})
    with pytest.raises(RemoteProtocolError):
        drive(core.list_tools(cache=False), d.perform)


def test_without_a_clock_nothing_is_refetched() -> None:
    core, d, _p = modern(ttl=0, script={"tools/list": page("t")})
    core.clock = None
    drive(core.list_tools(cache=False), d.perform)
    assert d.sent("server/discover") == []
