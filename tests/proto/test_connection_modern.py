"""The connection machine in the 2026-07-28 era, over stdio: the era decision
(``server/discover`` probe, LIFE-5..8), the era cache (LIFE-18), per-request ``_meta``
(LIFE-10..15), ``ping`` as discover (LIFE-14), no server requests (LIFE-17) and the
typed modern errors (LIFE-16). Pure: time is a number.

Every message the client writes in a modern session is validated against the
2026-07-28 schema (``Modern.written``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from _machine_driver import ALL_CAPS, Harness, init_result, notification, request, result
from _proto_support import error

from mcp_proto.config import stdio_config
from mcp_proto.connection import (
    CallFailed,
    CallProgress,
    CallSucceeded,
    Closed,
    CloseTransport,
    Connected,
    ConnectFailed,
    ConnectionState,
    Diagnostic,
    Disconnected,
    MessageDiscarded,
    OpenTransport,
)
from mcp_proto.errors import (
    CapabilityError,
    HeaderMismatchError,
    IncompatibleServerError,
    LocalProtocolError,
    MissingRequiredClientCapabilityError,
    RequestTimeoutError,
    UnsupportedProtocolVersionError,
    ValidationError,
)
from mcp_proto.modern.discover import EraCache, EraRecord, process_key
from mcp_proto.modern.meta import CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION

sys.path.insert(0, str(Path(__file__).with_name("modern")))
from _modern_wire import REQUEST_DEFS, assert_valid_request

V = "2026-07-28"
ARGV = ["srv"]


def discover_result(
    rid: Any,
    *,
    versions: tuple[str, ...] = (V,),
    caps: dict[str, Any] | None = None,
    instructions: str | None = "be nice",
) -> bytes:
    body: dict[str, Any] = {
        "supportedVersions": list(versions),
        "capabilities": ALL_CAPS if caps is None else caps,
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "2"}},
    }
    if instructions is not None:
        body["instructions"] = instructions
    return result(rid, body)


class Modern(Harness):
    """A harness whose written requests are checked against the 2026-07-28 schema
    while the connection speaks that era."""

    modern_messages = 0

    def written(self) -> list[dict[str, Any]]:
        out = super().written()
        for msg in out:
            modern = self.conn.era != "legacy" and msg.get("method") != "initialize"
            # A custom method has no schema definition: only the core ones are checked.
            if modern and "id" in msg and msg.get("method") in REQUEST_DEFS:
                assert_valid_request(msg)
                self.modern_messages += 1
        return out


def harness(*, options: dict[str, Any] | None = None, **config: Any) -> Modern:
    return Modern(
        stdio_config(ARGV, **config),
        capabilities={"roots": {"listChanged": True}, "sampling": {}},
        probe=True,
        **(options or {}),
    )


def open_probe(h: Modern, *, pid: int | None = None) -> dict[str, Any]:
    """Connect; return the probe (the first message written)."""
    h.conn.connect(h.now)
    assert h.take_frames() == [OpenTransport()]
    h.conn.transport_opened(h.now, pid=pid)
    (probe,) = h.written()
    assert probe["method"] == "server/discover"
    return probe


def connect_modern(h: Modern, *, caps: dict[str, Any] | None = None) -> Connected:
    probe = open_probe(h)
    h.feed(discover_result(probe["id"], caps=caps))
    assert h.written() == []
    (connected,) = h.take_events(Connected)
    return connected


# ------------------------------------------------------------------ era decision


def test_auto_probes_with_discover_first_and_a_discover_result_is_modern() -> None:
    h = harness()
    assert h.conn.era is None  # undecided until the probe is answered
    probe = open_probe(h)
    meta = probe["params"]["_meta"]
    assert meta[PROTOCOL_VERSION] == V
    assert meta[CLIENT_INFO] == {"name": "machine-test", "version": "1.0"}
    # The legacy roots.listChanged has no place in 2026-07-28 capabilities.
    assert meta[CLIENT_CAPABILITIES] == {"roots": {}, "sampling": {}}
    assert h.conn.state is ConnectionState.HANDSHAKING
    assert h.conn.next_deadline() == 5.0  # DISCOVER_TIMEOUT (read_timeout is 15)
    h.feed(discover_result(probe["id"]))
    # No initialize, no notifications/initialized (LIFE-17).
    assert h.written() == []
    (connected,) = h.take_events()
    assert isinstance(connected, Connected)
    info = connected.info
    assert (info.protocol_version, info.protocol_era) == (V, "modern")
    assert info.capabilities == ALL_CAPS and info.instructions == "be nice"
    assert info.server_info is not None and info.server_info.name == "modern"
    assert h.conn.era == "modern" and h.conn.server == info and h.conn.is_connected
    assert h.conn.next_deadline() is None


@pytest.mark.parametrize(
    "answer",
    [
        lambda rid: error(rid, -32601, "Method not found"),
        lambda rid: error(rid, -32602, "Invalid params"),
        lambda rid: error(rid, -32600, "not initialized"),
        lambda rid: error(rid, -32022, "unsupported", {"no": "list"}),  # not well-formed
        lambda rid: error(rid, -32000, "Server not initialized"),
        lambda rid: result(rid, {}),  # a legacy server answering unknown methods with {}
        lambda rid: discover_result(rid, versions=("2025-11-25",)),  # only a legacy one
    ],
    ids=["-32601", "-32602", "-32600", "-32022-malformed", "-32000", "empty", "legacy-list"],
)
def test_any_other_answer_falls_back_to_initialize_on_the_same_process(answer: Any) -> None:
    h = harness()
    probe = open_probe(h)
    h.feed(answer(probe["id"]))
    (init,) = h.written()
    assert init["method"] == "initialize"
    # Ids go on after the probe's: a late probe answer is never initialize's.
    assert init["id"] != probe["id"]
    assert h.conn.era == "legacy"
    assert [type(e) for e in h.take_events()] == [Diagnostic]
    h.feed(init_result(init["id"]))
    assert [m["method"] for m in h.written()] == ["notifications/initialized"]
    (connected,) = h.take_events()
    assert isinstance(connected, Connected)
    assert connected.info.protocol_era == "legacy"


def test_silence_within_discover_timeout_is_legacy_and_cancels_nothing() -> None:
    h = harness()
    probe = open_probe(h)
    h.advance(5.0)
    (init,) = h.written()  # no notifications/cancelled for the probe
    assert init["method"] == "initialize"
    assert h.conn.next_deadline() == 20.0  # initialize's own; the probe has none now
    # A late answer like a legacy server's is what the fallback assumed: it changes
    # nothing, and is never taken for initialize's.
    h.feed(error(probe["id"], -32601, "late"))
    assert [type(e) for e in h.take_events()] == [Diagnostic]
    assert h.written() == []
    h.feed(init_result(init["id"]))
    assert [type(e) for e in h.take_events()] == [Connected]
    assert h.conn.era == "legacy"


def slow_start(h: Modern, *, pid: int | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The probe goes unanswered past discover_timeout: (probe, initialize)."""
    probe = open_probe(h, pid=pid)
    h.advance(5.0)
    (init,) = h.written()
    assert init["method"] == "initialize"
    (note,) = h.take_events()
    assert isinstance(note, Diagnostic) and "using initialize" in note.message
    return probe, init


# The answer a dual-era server (FastMCP 4, the SDK's) gives to initialize once the
# probe it read first made the connection a 2026-07-28 one.
def serving_modern(rid: Any) -> bytes:
    return error(
        rid,
        -32022,
        "connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted",
        {"supported": [V], "requested": "2025-11-25"},
    )


def test_a_discover_result_after_discover_timeout_still_decides_modern() -> None:
    # A stdio server slower to start than discover_timeout (a cold import, an npx or
    # uvx download) reads the probe first: it answers it, then refuses initialize.
    cache = EraCache()
    h = harness(options={"era_cache": cache})
    probe, init = slow_start(h, pid=3)
    assert cache.get(process_key(3, ARGV)) == EraRecord("legacy", None)
    h.feed(discover_result(probe["id"]))
    assert h.written() == []  # initialize is abandoned: no notifications/initialized
    note, connected = h.take_events()
    assert isinstance(note, Diagnostic) and "after discover_timeout" in note.message
    assert isinstance(connected, Connected) and connected.info.protocol_era == "modern"
    assert h.conn.era == "modern" and h.conn.next_deadline() is None
    assert cache.get(process_key(3, ARGV)) == EraRecord("modern", V)
    # initialize's own answer then belongs to no request.
    h.feed(serving_modern(init["id"]))
    assert [type(e) for e in h.take_events()] == [MessageDiscarded]
    call = h.conn.start_call("tools/list", now=h.now)
    (sent,) = h.written()
    assert sent["params"]["_meta"][PROTOCOL_VERSION] == V
    h.feed(result(sent["id"], {"tools": []}))
    assert h.take_events() == [CallSucceeded(call, "tools/list", {"tools": []})]
    assert h.modern_messages == 2  # the probe and tools/list, both schema-checked


def test_a_late_unsupported_version_reprobes_with_a_listed_version() -> None:
    h = harness()
    probe, _init = slow_start(h)
    h.feed(error(probe["id"], -32022, "no", {"supported": [V], "requested": "2099-01-01"}))
    (again,) = h.written()
    assert again["method"] == "server/discover"
    assert again["id"] not in (probe["id"], _init["id"])
    assert h.conn.next_deadline() == 5.0 + 5.0  # a probe again, with its own bound
    h.feed(discover_result(again["id"]))
    assert [type(e) for e in h.take_events()] == [Diagnostic, Connected]
    assert h.conn.era == "modern"


def test_a_late_probe_answer_after_the_handshake_is_discarded() -> None:
    h = harness()
    probe, init = slow_start(h)
    h.feed(init_result(init["id"]))
    assert [type(e) for e in h.take_events()] == [Connected]
    assert [m["method"] for m in h.written()] == ["notifications/initialized"]
    assert h.conn.pending_count == 0  # the probe's wait ended with the handshake
    h.feed(discover_result(probe["id"]))
    assert [type(e) for e in h.take_events()] == [MessageDiscarded]
    assert h.conn.era == "legacy"


@pytest.mark.parametrize("cached", [False, True], ids=["fell-back", "cached-legacy"])
def test_initialize_refused_as_a_modern_server_does_probes_again(cached: bool) -> None:
    # The refusal arrives without the probe's answer: a server that answered the probe
    # like a legacy one, or a legacy era cached for a process that now serves
    # 2026-07-28 (LIFE-18: re-probe when the cached assumption fails).
    cache = EraCache()
    h = harness(options={"era_cache": cache})
    if cached:
        cache.remember(process_key(4, ARGV), "legacy", None)
        h.conn.connect(0.0)
        h.take_frames()
        h.conn.transport_opened(0.0, pid=4)
        (init,) = h.written()
    else:
        probe = open_probe(h, pid=4)
        h.feed(error(probe["id"], -32601, "Method not found"))
        (init,) = h.written()
        h.take_events()
    assert init["method"] == "initialize"
    h.feed(serving_modern(init["id"]))
    (again,) = h.written()
    assert again["method"] == "server/discover"
    assert again["params"]["_meta"][PROTOCOL_VERSION] == V
    (note,) = h.take_events()
    assert isinstance(note, Diagnostic) and "probing again" in note.message
    h.feed(discover_result(again["id"]))
    (connected,) = h.take_events()
    assert isinstance(connected, Connected) and h.conn.era == "modern"
    assert cache.get(process_key(4, ARGV)) == EraRecord("modern", V)


def test_initialize_refused_twice_as_a_modern_server_fails_the_connect() -> None:
    # Once per connect: a server that refuses initialize as a modern one but answers
    # the probe like a legacy one fails with the refusal, never loops.
    h = harness()
    probe = open_probe(h)
    h.feed(error(probe["id"], -32601, "Method not found"))
    (init,) = h.written()
    h.feed(serving_modern(init["id"]))
    (again,) = h.written()
    h.feed(error(again["id"], -32601, "Method not found"))
    (init2,) = h.written()
    assert init2["method"] == "initialize"
    h.feed(serving_modern(init2["id"]))
    assert h.written() == []
    (failed,) = h.take_events(ConnectFailed)
    assert isinstance(failed.error, UnsupportedProtocolVersionError)


def test_protocol_legacy_reports_a_modern_refusal_of_initialize() -> None:
    h = harness(protocol="legacy")
    h.conn.connect(0.0)
    h.take_frames()
    h.conn.transport_opened(0.0)
    (init,) = h.written()
    h.feed(serving_modern(init["id"]))
    assert h.written() == []  # forced: no probe
    (failed,) = h.take_events(ConnectFailed)
    assert isinstance(failed.error, UnsupportedProtocolVersionError)


@pytest.mark.parametrize(
    ("config", "deadline"),
    [({"discover_timeout": 0.5}, 0.5), ({"read_timeout": 2.0}, 2.0), ({}, 5.0)],
)
def test_discover_timeout_bounds_the_probe_capped_by_read_timeout(
    config: dict[str, Any], deadline: float
) -> None:
    h = harness(**config)
    open_probe(h)
    assert h.conn.next_deadline() == deadline


def test_unsupported_version_reprobes_once_with_a_listed_version_then_fails() -> None:
    h = harness()
    probe = open_probe(h)
    h.feed(error(probe["id"], -32022, "no", {"supported": ["2099-01-01", V], "requested": V}))
    (again,) = h.written()  # stays modern: never initialize (LIFE-6)
    assert again["method"] == "server/discover" and again["id"] != probe["id"]
    assert again["params"]["_meta"][PROTOCOL_VERSION] == V
    h.feed(error(again["id"], -32022, "no", {"supported": [V], "requested": V}))
    assert h.written() == []
    (failed,) = h.take_events()
    assert isinstance(failed, ConnectFailed)
    assert isinstance(failed.error, IncompatibleServerError)
    assert "refused protocol version 2026-07-28" in str(failed.error)


def test_unsupported_version_listing_nothing_we_speak_is_incompatible() -> None:
    h = harness()
    probe = open_probe(h)
    h.feed(error(probe["id"], -32022, "no", {"supported": ["2099-01-01"]}))
    assert h.written() == []
    (failed,) = h.take_events(ConnectFailed)
    assert isinstance(failed.error, IncompatibleServerError)
    assert "2099-01-01" in str(failed.error)


@pytest.mark.parametrize(
    ("code", "data", "kind"),
    [
        (-32021, {"requiredCapabilities": {"sampling": {}}}, MissingRequiredClientCapabilityError),
        (-32020, None, HeaderMismatchError),
    ],
)
def test_a_modern_refusal_of_the_probe_fails_the_connect_typed(
    code: int, data: Any, kind: type
) -> None:
    h = harness()
    probe = open_probe(h)
    h.feed(error(probe["id"], code, "refused", data))
    assert h.written() == []
    (failed,) = h.take_events(ConnectFailed)
    assert type(failed.error) is kind and failed.error.code == code


@pytest.mark.parametrize("answer", ["-32601", "silence"])
def test_protocol_modern_never_falls_back(answer: str) -> None:
    h = harness(protocol="modern")
    assert h.conn.era == "modern"
    probe = open_probe(h)
    if answer == "silence":
        # No fallback to decide: the probe waits read_timeout (15 s), as initialize
        # would, not the 5 s that declare a silent server legacy with protocol="auto".
        h.advance(14.9)
        assert h.take_events(ConnectFailed) == []
        h.advance(15.0)
    else:
        h.feed(error(probe["id"], -32601, "Method not found"))
    assert h.written() == []  # never initialize
    (failed,) = h.take_events(ConnectFailed)
    assert isinstance(failed.error, IncompatibleServerError)
    assert "protocol='modern'" in str(failed.error)
    assert h.conn.state is ConnectionState.IDLE
    assert CloseTransport(graceful=False) in h.take_frames()


def test_protocol_modern_waits_for_a_server_slower_to_start_than_the_auto_bound() -> None:
    # A forced modern server still starting after 5 s (a cold import, an npx or uvx
    # download: what CI met with the SDK server) is connected, not refused.
    h = harness(protocol="modern")
    probe = open_probe(h)
    h.advance(12.0)
    h.feed(discover_result(probe["id"]))
    assert h.written() == []
    (connected,) = h.take_events(Connected)
    assert h.conn.era == "modern" and connected.info.protocol_version == V


def test_protocol_modern_keeps_an_explicit_discover_timeout() -> None:
    h = harness(protocol="modern", discover_timeout=2)
    open_probe(h)
    h.advance(2.0)
    (failed,) = h.take_events(ConnectFailed)
    assert isinstance(failed.error, IncompatibleServerError)
    assert "within discover_timeout" in str(failed.error)


def test_protocol_legacy_never_sends_discover() -> None:
    h = harness(protocol="legacy")
    assert h.conn.era == "legacy"
    h.connect_stdio()  # initialize first (asserted inside)
    assert h.conn.era == "legacy"


@pytest.mark.parametrize("when", ["during-the-probe", "after-a-silent-probe"])
def test_a_process_that_dies_during_the_probe_fails_the_connect_once(when: str) -> None:
    h = harness()
    if when == "during-the-probe":
        open_probe(h)
    else:
        slow_start(h)  # initialize in flight, the probe still awaited without a deadline
    h.conn.receive_eof(h.now, "exit status 1")
    (failed,) = h.take_events()
    assert isinstance(failed, ConnectFailed)
    assert "exit status 1" in str(failed.error)


def test_calls_queued_during_the_probe_go_out_as_modern_requests() -> None:
    h = harness()
    call = h.conn.start_call("tools/list", now=0.0)
    assert h.take_frames() == [OpenTransport()]
    h.conn.transport_opened(0.0)
    (probe,) = h.written()
    h.feed(discover_result(probe["id"]))
    (listing,) = h.written()
    assert listing["method"] == "tools/list"
    assert listing["params"]["_meta"][PROTOCOL_VERSION] == V
    h.feed(result(listing["id"], {"tools": []}))
    assert h.take_events(CallSucceeded) == [CallSucceeded(call, "tools/list", {"tools": []})]


# ------------------------------------------------------------------ modern requests


def test_every_request_carries_the_meta_and_host_metadata_copied_per_request() -> None:
    calls = []
    host: dict[str, Any] = {"com.example/trace": {"id": "t1"}}

    def host_meta() -> dict[str, Any]:
        calls.append(1)
        return host

    h = harness(options={"request_meta": host_meta, "extensions": ["io.example/ext"]})
    connect_modern(h)
    probe_calls = len(calls)
    assert probe_calls == 1  # the probe carried it too
    h.conn.start_call("tools/call", {"name": "echo", "arguments": {"x": 1}}, now=0.0)
    (sent,) = h.written()
    host["com.example/trace"]["id"] = "changed after the request was built"
    meta = sent["params"]["_meta"]
    assert meta["com.example/trace"] == {"id": "t1"}
    assert meta[CLIENT_CAPABILITIES]["extensions"] == {"io.example/ext": {}}
    assert len(calls) == probe_calls + 1  # once per request
    h.conn.start_call("prompts/list", now=0.0)
    (second,) = h.written()
    assert second["params"]["_meta"]["com.example/trace"]["id"].startswith("changed")
    assert h.modern_messages == 3


def test_a_mapping_request_meta_and_the_callers_meta_never_replace_owned_keys() -> None:
    h = harness(options={"request_meta": {PROTOCOL_VERSION: "1999", "k/v": 1}})
    connect_modern(h)
    h.conn.start_call("tools/list", {"_meta": {"k/own": 2, CLIENT_INFO: "forged"}}, now=0.0)
    (sent,) = h.written()
    meta = sent["params"]["_meta"]
    assert (meta[PROTOCOL_VERSION], meta["k/v"], meta["k/own"]) == (V, 1, 2)
    assert meta[CLIENT_INFO] == {"name": "machine-test", "version": "1.0"}


def test_log_level_rides_in_meta_and_nothing_else_is_sent() -> None:
    h = harness()
    connect_modern(h)
    assert h.conn.log_level is None
    h.conn.log_level = "warning"
    assert h.written() == []  # no logging/setLevel in 2026-07-28 (LIFE-15)
    h.conn.start_call("tools/list", now=0.0)
    (sent,) = h.written()
    assert sent["params"]["_meta"][LOG_LEVEL] == "warning"
    with pytest.raises(ValueError, match="log level"):
        h.conn.log_level = "loud"


def test_progress_token_joins_the_modern_meta() -> None:
    h = harness()
    connect_modern(h)
    call = h.conn.start_call("tools/call", {"name": "slow"}, now=0.0, progress=True)
    (sent,) = h.written()
    token = sent["params"]["_meta"]["progressToken"]
    assert sent["params"]["_meta"][PROTOCOL_VERSION] == V
    h.feed(
        notification("notifications/progress", {"progressToken": token, "progress": 1}),
        result(sent["id"], {"content": []}),
    )
    assert h.take_events() == [
        CallProgress(call, 1.0, None, None),
        CallSucceeded(call, "tools/call", {"content": []}),
    ]


def test_ping_on_a_modern_server_is_discover() -> None:
    h = harness()
    connect_modern(h)
    call = h.conn.start_call("ping", now=0.0)
    (sent,) = h.written()
    assert sent["method"] == "server/discover"
    h.feed(discover_result(sent["id"]))
    # The caller asked for a ping: its result is empty, as in the handshake era.
    assert h.take_events() == [CallSucceeded(call, "ping", {})]


def test_capabilities_come_from_the_discover_result() -> None:
    h = harness()
    connect_modern(h, caps={"tools": {}})
    with pytest.raises(CapabilityError):
        h.conn.start_call("prompts/list", now=0.0)
    assert h.written() == []


def test_a_server_request_is_never_handed_out_nor_answered() -> None:
    h = harness()
    connect_modern(h)
    h.feed(request(7, "roots/list"))
    (dropped,) = h.take_events()
    assert isinstance(dropped, MessageDiscarded) and "roots/list" in dropped.reason
    assert h.conn.unanswered_server_requests == 0
    h.conn.close(0.0)
    assert h.written() == []  # nothing refused: nothing was ever asked
    assert h.take_frames() == [CloseTransport(graceful=True)]
    h.conn.transport_closed(0.0)
    assert h.take_events() == [Closed()]


@pytest.mark.parametrize(
    ("code", "data", "kind"),
    [
        (-32020, None, HeaderMismatchError),
        (
            -32021,
            {"requiredCapabilities": {"elicitation": {}}},
            MissingRequiredClientCapabilityError,
        ),
        (-32022, {"supported": [V], "requested": V}, UnsupportedProtocolVersionError),
    ],
)
def test_typed_modern_errors_surface_as_call_failed(code: int, data: Any, kind: type) -> None:
    h = harness()
    connect_modern(h)
    call = h.conn.start_call("tools/call", {"name": "t"}, now=0.0)
    (sent,) = h.written()
    h.feed(error(sent["id"], code, "nope", data))
    (failed,) = h.take_events()
    assert isinstance(failed, CallFailed) and failed.call_id == call
    assert type(failed.error) is kind and failed.error.code == code


def test_cancel_on_stdio_sends_notifications_cancelled() -> None:
    # 2026-07-28 basic/transports/stdio.mdx § Cancellation: the client MUST send it.
    h = harness()
    connect_modern(h)
    call = h.conn.start_call("tools/call", {"name": "t"}, now=0.0)
    (sent,) = h.written()
    h.conn.cancel_call(call, "user", now=0.0)
    (note,) = h.written()
    assert note["method"] == "notifications/cancelled"
    assert note["params"]["requestId"] == sent["id"]


def test_a_bad_request_meta_fails_the_call_typed_and_the_machine_goes_on() -> None:
    box: list[Any] = [{"k/v": 1}]
    h = harness(options={"request_meta": lambda: box[0]})
    connect_modern(h)
    box[0] = ["not", "an", "object"]
    with pytest.raises(ValidationError, match="request_meta"):
        h.conn.start_call("tools/list", now=0.0)

    def boom() -> dict[str, Any]:
        raise RuntimeError("host broke")

    # The probe cannot be built: the connect fails (the driver's input never raises).
    h2 = harness(options={"request_meta": boom})
    call = h2.conn.start_call("tools/list", now=0.0)
    h2.take_frames()
    h2.conn.transport_opened(0.0)
    connect_failed, failed = h2.take_events()
    assert isinstance(connect_failed, ConnectFailed)
    assert isinstance(connect_failed.error, LocalProtocolError)
    assert isinstance(connect_failed.error.__cause__, RuntimeError)
    assert isinstance(failed, CallFailed) and failed.call_id == call

    # A queued call whose metadata raises fails alone, typed.
    count = [0]

    def second_fails() -> dict[str, Any]:
        count[0] += 1
        if count[0] > 1:
            raise RuntimeError("host broke")
        return {}

    h3 = harness(options={"request_meta": second_fails})
    call = h3.conn.start_call("tools/list", now=0.0)
    h3.take_frames()
    h3.conn.transport_opened(0.0)
    (probe,) = h3.written()
    h3.feed(discover_result(probe["id"]))
    connected, failed = h3.take_events()
    assert isinstance(connected, Connected)
    assert isinstance(failed, CallFailed) and failed.call_id == call
    assert isinstance(failed.error, LocalProtocolError) and "host broke" in str(failed.error)
    assert h3.written() == [] and h3.conn.is_connected


def test_bad_constructor_options_are_refused() -> None:
    with pytest.raises(ValueError, match="extension identifier"):
        harness(options={"extensions": ["no-prefix"]})
    with pytest.raises(ValueError, match="request_meta"):
        harness(options={"request_meta": 5})


def test_a_request_timing_out_on_stdio_modern_is_cancelled() -> None:
    h = harness(read_timeout=3.0)
    connect_modern(h)
    call = h.conn.start_call("tools/list", now=0.0)
    h.written()
    h.advance(3.0)
    assert [m["method"] for m in h.written()] == ["notifications/cancelled"]
    (failed,) = h.take_events()
    assert isinstance(failed, CallFailed) and failed.call_id == call
    assert isinstance(failed.error, RequestTimeoutError)


# ------------------------------------------------------------------ era cache


def test_a_cached_legacy_process_skips_the_probe() -> None:
    cache = EraCache()
    h = harness(options={"era_cache": cache})
    probe = open_probe(h, pid=41)
    h.feed(error(probe["id"], -32601, "Method not found"))
    assert h.written()[0]["method"] == "initialize"
    assert cache.get(process_key(41, ARGV)) == EraRecord("legacy", None)
    # Another connection to the same process: initialize first, no probe.
    h2 = harness(options={"era_cache": cache})
    h2.conn.connect(0.0)
    h2.take_frames()
    h2.conn.transport_opened(0.0, pid=41)
    assert [m["method"] for m in h2.written()] == ["initialize"]
    # A new process (a restart: a new pid) is probed again.
    h3 = harness(options={"era_cache": cache})
    open_probe(h3, pid=42)


def test_a_cached_modern_server_answering_like_a_legacy_one_is_forgotten_and_reprobed() -> None:
    cache = EraCache()
    cache.remember(process_key(7, ARGV), "modern", V)
    h = harness(read_timeout=20.0, options={"era_cache": cache})
    probe = open_probe(h, pid=7)
    assert h.conn.next_deadline() == 20.0  # known era: the request's own timeout
    h.feed(error(probe["id"], -32601, "Method not found"))
    (again,) = h.written()  # LIFE-18: forgotten, probed afresh
    assert again["method"] == "server/discover" and again["id"] != probe["id"]
    assert process_key(7, ARGV) not in cache
    assert h.conn.next_deadline() == 5.0
    (note,) = h.take_events()
    assert isinstance(note, Diagnostic) and "probing again" in note.message
    h.feed(error(again["id"], -32601, "Method not found"))
    assert h.written()[0]["method"] == "initialize"
    assert cache.get(process_key(7, ARGV)) == EraRecord("legacy", None)


def test_a_modern_answer_is_cached_with_its_version() -> None:
    cache = EraCache()
    h = harness(options={"era_cache": cache})
    probe = open_probe(h, pid=9)
    h.feed(discover_result(probe["id"]))
    assert cache.get(process_key(9, ARGV)) == EraRecord("modern", V)


@pytest.mark.parametrize("method", ["tools/list", "ping"])
def test_a_modern_server_answering_like_a_legacy_one_is_forgotten_and_reprobed(
    method: str,
) -> None:
    cache = EraCache()
    h = harness(options={"era_cache": cache})
    probe = open_probe(h, pid=5)
    h.feed(discover_result(probe["id"]))
    h.take_events()
    assert process_key(5, ARGV) in cache
    call = h.conn.start_call(method, now=0.0)
    (sent,) = h.written()
    h.feed(error(sent["id"], -32601, "Method not found"))
    failed, note, lost = h.take_events()
    assert isinstance(failed, CallFailed) and failed.call_id == call
    assert isinstance(note, Diagnostic) and "new probe" in note.message
    assert isinstance(lost, Disconnected)
    assert h.take_frames() == [CloseTransport(graceful=False)]
    assert process_key(5, ARGV) not in cache  # LIFE-18
    # The next call starts a new transport and probes again.
    h.conn.start_call("tools/list", now=0.0)
    assert h.take_frames() == [OpenTransport()]
    h.conn.transport_opened(0.0, pid=6)
    assert [m["method"] for m in h.written()] == ["server/discover"]


@pytest.mark.parametrize(
    ("method", "code"),
    [("tools/call", -32602), ("custom/method", -32601), ("tools/list", -32603)],
)
def test_ordinary_errors_keep_the_modern_session(method: str, code: int) -> None:
    h = harness()
    connect_modern(h)
    h.conn.start_call(method, {"name": "t"}, now=0.0)
    (sent,) = h.written()
    h.feed(error(sent["id"], code, "no"))
    assert [type(e) for e in h.take_events()] == [CallFailed]
    assert h.conn.is_connected and h.take_frames() == []


def test_set_level_in_a_modern_session_sends_nothing_and_rides_in_meta() -> None:
    h = harness()
    queued = h.conn.start_call("logging/setLevel", {"level": "error"}, now=0.0)
    h.take_frames()
    h.conn.transport_opened(0.0)
    (probe,) = h.written()
    h.feed(discover_result(probe["id"]))
    assert h.written() == []  # LIFE-15: no logging/setLevel in 2026-07-28
    assert h.take_events(CallSucceeded) == [CallSucceeded(queued, "logging/setLevel", {})]
    assert h.conn.log_level == "error"
    call = h.conn.start_call("logging/setLevel", {"level": "debug"}, now=0.0)
    assert h.take_events() == [CallSucceeded(call, "logging/setLevel", {})]
    h.conn.start_call("tools/list", now=0.0)
    (sent,) = h.written()
    assert sent["params"]["_meta"][LOG_LEVEL] == "debug"
    with pytest.raises(ValueError, match="log level"):
        h.conn.start_call("logging/setLevel", {"level": "chatty"}, now=0.0)
    assert h.conn.pending_count == 1  # only the tools/list
    assert h.written() == []


def test_set_level_in_a_legacy_session_is_the_request_as_before() -> None:
    h = harness(protocol="legacy")
    h.connect_stdio()
    h.conn.start_call("logging/setLevel", {"level": "error"}, now=0.0)
    (sent,) = h.written()
    assert sent["method"] == "logging/setLevel" and sent["params"] == {"level": "error"}
    assert h.conn.log_level is None
