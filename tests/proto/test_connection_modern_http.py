"""The connection machine in the 2026-07-28 era over Streamable HTTP and plain HTTP:
the probe and its HTTP outcomes (a 400 body inspected, 401/403 not an era answer), the
request headers (LIFE-11, HDR-1, HDR-6), no session / GET stream / resumption
(SHTTP-6, SESS-7), one re-issue of a broken response stream (RETRY-7), a result never
replaced (RETRY-8), closing the stream as the cancellation (SHTTP-7) and the era cache
per origin (LIFE-18). Pure: time is a number.

Every request the client POSTs in a modern session is validated against the
2026-07-28 schema (``posted``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from _machine_driver import (
    SSE_HEAD,
    Harness,
    body_of,
    connect_http,
    header,
    init_result,
    notification,
    result,
    sse_event,
)
from _proto_support import error
from test_connection_modern import discover_result

from mcp_proto.config import http_config, streamable_http_config
from mcp_proto.connection import (
    AbortExchange,
    CallFailed,
    CallSucceeded,
    Closed,
    CloseTransport,
    Connected,
    ConnectFailed,
    ExchangeFailure,
    NotificationReceived,
    OpenTransport,
    StartExchange,
)
from mcp_proto.errors import (
    HeaderAnnotationError,
    RequestTimeoutError,
    ResponseStreamClosedError,
    TransientServerError,
    TransportError,
    UnauthorizedError,
    UnsupportedProtocolVersionError,
)
from mcp_proto.modern.discover import EraCache, EraRecord, origin_key
from mcp_proto.modern.meta import PROTOCOL_VERSION
from mcp_proto.types import Tool

sys.path.insert(0, str(Path(__file__).with_name("modern")))
from _modern_wire import assert_valid_request

V = "2026-07-28"
URL = "http://127.0.0.1:9/mcp"
REGION_TOOL = {
    "name": "weather",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "days": {"type": "integer", "x-mcp-header": "Days"},
        },
    },
}


def harness(*, plain: bool = False, options: dict[str, Any] | None = None, **kw: Any) -> Harness:
    build = http_config if plain else streamable_http_config
    return Harness(build(URL, **kw), probe=True, **(options or {}))


def posted(h: Harness) -> list[StartExchange]:
    """The exchanges started since the last call; modern requests schema-checked."""
    xs = h.exchanges()
    for x in xs:
        if x.method == "POST" and h.conn.era != "legacy":
            msg = body_of(x)
            if "id" in msg and msg.get("method") not in (None, "initialize"):
                assert_valid_request(msg)
    return xs


def only(xs: list[StartExchange]) -> StartExchange:
    (x,) = xs
    return x


def open_probe(h: Harness) -> StartExchange:
    h.conn.connect(h.now)
    assert h.take_frames() == [OpenTransport()]
    h.conn.transport_opened(h.now)
    probe = only(posted(h))
    assert body_of(probe)["method"] == "server/discover"
    return probe


def connect_modern(h: Harness, *, headers: Any = ()) -> Connected:
    probe = open_probe(h)
    h.reply_json(probe, discover_result(body_of(probe)["id"]), headers=headers)
    assert posted(h) == []  # no initialize, no GET stream (SHTTP-6)
    (connected,) = h.take_events(Connected)
    return connected


def test_the_probe_is_a_modern_post_and_a_discover_result_needs_no_more() -> None:
    h = harness(headers={"X-Api-Key": "k", "Mcp-Param-Region": "forged"})
    probe = open_probe(h)
    assert (probe.method, probe.url, probe.streaming) == ("POST", URL, False)
    assert header(probe, "MCP-Protocol-Version") == V
    assert header(probe, "Mcp-Method") == "server/discover"
    assert header(probe, "Accept") == "application/json, text/event-stream"
    assert header(probe, "Mcp-Session-Id") is None
    assert header(probe, "X-Api-Key") == "k"
    assert header(probe, "Mcp-Param-Region") is None  # HDR-6: the client owns it
    assert body_of(probe)["params"]["_meta"][PROTOCOL_VERSION] == V
    assert probe.read_timeout == 5.0
    # A session id in the answer is ignored: this revision has none.
    h.reply_json(probe, discover_result(body_of(probe)["id"]), headers=[("Mcp-Session-Id", "s-1")])
    assert posted(h) == []
    (connected,) = h.take_events()
    assert isinstance(connected, Connected) and connected.info.protocol_era == "modern"
    h.conn.start_call("tools/list", now=0.0)
    listing = only(posted(h))
    assert header(listing, "Mcp-Session-Id") is None
    assert header(listing, "Mcp-Method") == "tools/list"


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, b""),
        (400, b"Bad Request: No valid session ID provided"),
        (400, error(None, -32000, "Bad Request: Server not initialized")),
        (404, b""),
        (405, b""),
        (200, error(1, -32601, "Method not found")),
    ],
    ids=["400-empty", "400-text", "400-jsonrpc-other", "404", "405", "200-32601"],
)
def test_a_legacy_http_answer_falls_back_to_initialize(status: int, body: bytes) -> None:
    h = harness()
    probe = open_probe(h)
    if status == 200:
        h.reply_json(probe, body.replace(b'"id":1', f'"id":{body_of(probe)["id"]}'.encode()))
    else:
        h.reply_status(probe, status, body)
    init = only(posted(h))
    assert body_of(init)["method"] == "initialize"
    assert header(init, "Mcp-Method") is None  # legacy headers, unchanged
    h.reply_json(init, init_result(body_of(init)["id"]), headers=[("Mcp-Session-Id", "s-9")])
    note, get = posted(h)
    assert body_of(note)["method"] == "notifications/initialized"
    assert header(note, "Mcp-Session-Id") == "s-9"
    assert get.method == "GET"  # the legacy GET stream, as before
    assert h.conn.era == "legacy"


def test_a_400_with_unsupported_version_stays_modern_and_reprobes() -> None:
    h = harness()
    probe = open_probe(h)
    h.reply_status(
        probe,
        400,
        error(body_of(probe)["id"], -32022, "no", {"supported": [V], "requested": "x"}),
        headers=[("Content-Type", "application/json")],
    )
    again = only(posted(h))
    assert body_of(again)["method"] == "server/discover"
    h.reply_json(again, discover_result(body_of(again)["id"]))
    assert [type(e) for e in h.take_events()] == [Connected]


@pytest.mark.parametrize(
    ("status", "kind"),
    [(401, UnauthorizedError), (403, UnauthorizedError), (503, TransientServerError)],
)
def test_auth_and_server_failures_are_not_an_era_answer(status: int, kind: type) -> None:
    h = harness(protocol="auto")
    probe = open_probe(h)
    h.reply_status(probe, status)
    assert [x for x in posted(h) if x.method == "POST"] == []  # no initialize
    (failed,) = h.take_events(ConnectFailed)
    assert isinstance(failed.error, kind)


def test_a_network_failure_of_the_probe_fails_the_connect() -> None:
    h = harness()
    probe = open_probe(h)
    h.conn.exchange_failed(probe.xid, ExchangeFailure("connect", "refused"), 0.0)
    (failed,) = h.take_events(ConnectFailed)
    assert isinstance(failed.error, TransportError)


def test_a_silent_http_server_is_legacy_after_discover_timeout() -> None:
    h = harness(discover_timeout=1.0)
    probe = open_probe(h)
    assert probe.read_timeout == 1.0
    h.advance(1.0)
    frames = h.take_frames()
    assert AbortExchange(probe.xid) in frames  # the probe's stream is closed
    (init,) = [f for f in frames if isinstance(f, StartExchange)]
    assert body_of(init)["method"] == "initialize"  # and no notifications/cancelled


# ------------------------------------------------------------------ headers


def test_tools_call_headers_name_and_params_from_the_tool_definition() -> None:
    h = harness(headers={"X-Api-Key": "k", "mcp-param-region": "forged"})
    connect_modern(h)
    args = {"region": "Zürich", "days": 3}
    h.conn.start_call(
        "tools/call", {"name": "weather", "arguments": args}, now=0.0, tool=REGION_TOOL
    )
    call = only(posted(h))
    assert header(call, "Mcp-Method") == "tools/call"
    assert header(call, "Mcp-Name") == "weather"
    assert header(call, "Mcp-Param-Region") == "=?base64?WsO8cmljaA==?="
    assert header(call, "Mcp-Param-Days") == "3"
    assert [k for k, _ in call.headers if k.lower() == "mcp-param-region"] == ["Mcp-Param-Region"]
    assert header(call, "X-Api-Key") == "k"
    # A Tool object works as well; without a definition, no Mcp-Param-*.
    h.conn.start_call(
        "tools/call",
        {"name": "weather", "arguments": args},
        now=0.0,
        tool=Tool.from_dict(REGION_TOOL),
    )
    assert header(only(posted(h)), "Mcp-Param-Days") == "3"
    h.conn.start_call("tools/call", {"name": "weather", "arguments": args}, now=0.0)
    assert header(only(posted(h)), "Mcp-Param-Region") is None


def test_mcp_name_for_resources_and_prompts() -> None:
    h = harness()
    connect_modern(h)
    h.conn.start_call("resources/read", {"uri": "file:///a b"}, now=0.0)
    assert header(only(posted(h)), "Mcp-Name") == "file:///a b"
    h.conn.start_call("prompts/get", {"name": "greet"}, now=0.0)
    assert header(only(posted(h)), "Mcp-Name") == "greet"


def test_a_tool_with_broken_annotations_is_refused_before_sending() -> None:
    h = harness()
    connect_modern(h)
    bad = {
        "name": "weather",
        "inputSchema": {
            "type": "object",
            "properties": {"x": {"type": "number", "x-mcp-header": "X"}},
        },
    }
    with pytest.raises(HeaderAnnotationError):
        h.conn.start_call("tools/call", {"name": "weather", "arguments": {}}, now=0.0, tool=bad)
    assert posted(h) == [] and h.conn.pending_count == 0


def test_legacy_sessions_keep_configured_mcp_param_headers() -> None:
    h = harness(protocol="legacy", headers={"Mcp-Param-Region": "eu"})
    h.conn.connect(0.0)
    h.take_frames()
    h.conn.transport_opened(0.0)
    init = only(posted(h))
    assert header(init, "Mcp-Param-Region") == "eu"  # HDR-6: legacy unchanged
    assert header(init, "Mcp-Method") is None


def test_plain_http_modern_accepts_json_only() -> None:
    h = harness(plain=True)
    probe = open_probe(h)
    assert header(probe, "Accept") == "application/json"
    assert header(probe, "Mcp-Method") == "server/discover"
    h.reply_json(probe, discover_result(body_of(probe)["id"]))
    assert [type(e) for e in h.take_events()] == [Connected]


# ------------------------------------------------------------------ streams


def open_stream(h: Harness, x: StartExchange, *events: bytes) -> None:
    h.conn.exchange_head(x.xid, 200, SSE_HEAD, h.now)
    for event in events:
        h.conn.exchange_data(x.xid, event, h.now)


def test_a_broken_stream_is_reissued_once_with_a_new_id_then_fails() -> None:
    h = harness()
    connect_modern(h)
    call = h.conn.start_call("tools/call", {"name": "t"}, now=0.0)
    first = only(posted(h))
    rid = body_of(first)["id"]
    open_stream(
        h,
        first,
        sse_event(notification("notifications/message", {"level": "info", "data": "x"}), id="e1"),
    )
    h.conn.exchange_failed(first.xid, ExchangeFailure("network", "reset"), 0.0)
    # No resumption (no GET with Last-Event-ID): the request itself again, new id.
    second = only(posted(h))
    assert second.method == "POST" and header(second, "Last-Event-ID") is None
    assert body_of(second)["method"] == "tools/call" and body_of(second)["id"] != rid
    assert [type(e) for e in h.take_events(CallFailed, CallSucceeded)] == []
    open_stream(h, second)
    h.conn.exchange_end(second.xid, 0.0)  # ends cleanly, still without the result
    assert posted(h) == []
    (failed,) = h.take_events(CallFailed)
    assert failed.call_id == call
    assert isinstance(failed.error, ResponseStreamClosedError)
    assert "twice" in str(failed.error)


def test_a_result_that_arrived_is_never_replaced() -> None:
    h = harness()
    connect_modern(h)
    call = h.conn.start_call("tools/call", {"name": "t"}, now=0.0)
    x = only(posted(h))
    open_stream(h, x, sse_event(result(body_of(x)["id"], {"content": []})))
    h.conn.exchange_failed(x.xid, ExchangeFailure("network", "reset after the result"), 0.0)
    assert posted(h) == []  # no second tools/call
    assert h.take_events(CallSucceeded, CallFailed) == [
        CallSucceeded(call, "tools/call", {"content": []})
    ]


def test_cancel_closes_the_stream_and_posts_no_notification() -> None:
    h = harness()
    connect_modern(h)
    call = h.conn.start_call("tools/call", {"name": "t"}, now=0.0)
    x = only(posted(h))
    open_stream(h, x)
    h.conn.cancel_call(call, "user", now=0.0)
    frames = h.take_frames()
    assert frames == [AbortExchange(x.xid)]  # SHTTP-7: closing is the cancellation
    (failed,) = h.take_events(CallFailed)
    assert failed.call_id == call


def test_a_timeout_closes_the_stream_and_posts_no_notification() -> None:
    h = harness(read_timeout=4.0)
    connect_modern(h)
    call = h.conn.start_call("tools/list", now=0.0)
    x = only(posted(h))
    open_stream(h, x)
    h.advance(4.0)
    assert h.take_frames() == [AbortExchange(x.xid)]
    (failed,) = h.take_events(CallFailed)
    assert failed.call_id == call and isinstance(failed.error, RequestTimeoutError)


def test_a_modern_error_in_a_400_is_typed() -> None:
    h = harness()
    connect_modern(h)
    call = h.conn.start_call("tools/list", now=0.0)
    x = only(posted(h))
    h.reply_status(
        x,
        400,
        error(body_of(x)["id"], -32022, "no", {"supported": [V], "requested": V}),
        headers=[("Content-Type", "application/json")],
    )
    (failed,) = h.take_events(CallFailed)
    assert failed.call_id == call
    assert isinstance(failed.error, UnsupportedProtocolVersionError)


def test_close_sends_no_delete() -> None:
    h = harness()
    connect_modern(h, headers=[("Mcp-Session-Id", "s-1")])
    h.conn.close(0.0)
    assert h.take_frames() == [CloseTransport(graceful=True)]
    h.conn.transport_closed(0.0)
    assert h.take_events() == [Closed()]


def test_a_server_request_on_a_stream_is_dropped() -> None:
    h = harness()
    connect_modern(h)
    h.conn.start_call("tools/list", now=0.0)
    x = only(posted(h))
    ask = b'{"jsonrpc":"2.0","id":99,"method":"sampling/createMessage","params":{}}'
    open_stream(h, x, sse_event(ask), sse_event(result(body_of(x)["id"], {"tools": []})))
    assert posted(h) == []  # nothing answered (LIFE-17)
    assert [type(e).__name__ for e in h.take_events()] == ["MessageDiscarded", "CallSucceeded"]
    assert not any(isinstance(e, NotificationReceived) for e in h.events)


# ------------------------------------------------------------------ era cache


def test_the_era_is_cached_per_origin() -> None:
    cache = EraCache()
    h = harness(options={"era_cache": cache})
    connect_modern(h)
    assert cache.get(origin_key(URL)) == EraRecord("modern", V)
    # Another endpoint on the same origin: the era is known; discover (for the
    # capabilities) with the request's own timeout.
    h2 = Harness(streamable_http_config("http://127.0.0.1:9/other"), probe=True, era_cache=cache)
    probe = open_probe(h2)
    assert probe.read_timeout == 30.0


def cached_legacy() -> tuple[Harness, EraCache, StartExchange]:
    """A connection to an origin cached as handshake-era: (harness, cache, first POST)."""
    cache = EraCache()
    cache.remember(origin_key(URL), "legacy")
    h = harness(options={"era_cache": cache})
    h.conn.connect(0.0)
    h.take_frames()
    h.conn.transport_opened(0.0)
    return h, cache, only(posted(h))


def test_a_cached_legacy_origin_starts_with_initialize() -> None:
    _h, _cache, first = cached_legacy()
    assert body_of(first)["method"] == "initialize"


@pytest.mark.parametrize("status", [400, 200])
def test_a_cached_legacy_origin_refusing_initialize_as_a_modern_server_is_probed(
    status: int,
) -> None:
    # LIFE-18: the origin now serves 2026-07-28 only; its -32022 (in a 400, or a 200
    # JSON-RPC error) lists the version to probe with, and the cache is corrected.
    h, cache, init = cached_legacy()
    refusal = error(body_of(init)["id"], -32022, "no", {"supported": [V], "requested": "x"})
    h.reply_status(init, status, refusal, headers=[("Content-Type", "application/json")])
    again = only(posted(h))
    assert body_of(again)["method"] == "server/discover"
    assert header(again, "MCP-Protocol-Version") == V
    h.reply_json(again, discover_result(body_of(again)["id"]))
    assert [type(e) for e in h.take_events(Connected, ConnectFailed)] == [Connected]
    assert h.conn.era == "modern"
    assert cache.get(origin_key(URL)) == EraRecord("modern", V)


def test_a_notification_in_a_modern_session_carries_the_version_and_no_session() -> None:
    h = harness(headers={"X-Api-Key": "k", "Mcp-Param-Region": "forged"})
    connect_modern(h, headers=[("Mcp-Session-Id", "s-1")])
    h.conn.notify("notifications/example", {"k": 1}, now=0.0)
    note = only(posted(h))
    assert body_of(note)["method"] == "notifications/example"
    assert header(note, "MCP-Protocol-Version") == V
    assert header(note, "X-Api-Key") == "k"
    assert header(note, "Mcp-Session-Id") is None
    assert header(note, "Mcp-Param-Region") is None


def test_configured_headers_cannot_forge_what_the_client_owns() -> None:
    # As in the handshake era (docs/http.md): Accept, Content-Type, Mcp-Session-Id, ...
    # are the client's; a modern POST carries none of the configured copies.
    forged = {
        "Accept": "text/html",
        "Content-Type": "text/plain",
        "Mcp-Session-Id": "forged",
        "Last-Event-ID": "e9",
        "MCP-Protocol-Version": "1999-01-01",
        "X-Api-Key": "k",
    }
    h = harness(headers=forged)
    probe = open_probe(h)
    h.reply_json(probe, discover_result(body_of(probe)["id"]))
    h.conn.start_call("tools/list", now=0.0)
    h.conn.notify("notifications/example", now=0.0)
    for x in [probe, *posted(h)]:
        names = [k.lower() for k, _ in x.headers]
        assert len(names) == len(set(names)), x.headers  # one copy of each
        assert header(x, "Accept") == "application/json, text/event-stream"
        assert header(x, "Content-Type") == "application/json"
        assert header(x, "Mcp-Session-Id") is None
        assert header(x, "Last-Event-ID") is None
        assert header(x, "MCP-Protocol-Version") == V
        assert header(x, "X-Api-Key") == "k"


def test_a_handshake_era_call_is_the_same_with_or_without_the_tools_definition() -> None:
    """``call_tool`` hands the tool's definition to every ``tools/call`` without first
    asking the connection its era (issue 22: the connection owns it); a handshake-era
    session sends exactly what it sends without it (HDR-1 headers are 2026-07-28
    only)."""
    sent: list[tuple[Any, Any]] = []
    for tool in (None, REGION_TOOL, Tool.from_dict(REGION_TOOL)):
        h = harness(protocol="legacy")
        connect_http(h)
        params = {"name": "weather", "arguments": {"region": "eu", "days": 3}}
        h.conn.start_call("tools/call", params, now=0.0, tool=tool)
        post = only(posted(h))
        assert header(post, "Mcp-Param-Region") is None and header(post, "Mcp-Method") is None
        sent.append((post.headers, post.body))
    assert sent[1] == sent[0] and sent[2] == sent[0]
