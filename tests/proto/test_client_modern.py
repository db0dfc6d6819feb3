"""The client core's operations on 2026-07-28 servers: x-mcp-header filtering and the
-32020 retry (HDR-3, HDR-5), ``input_required`` rounds (MRTR-1..9), the log level as
``_meta`` (LIFE-15) and the deprecation notices (DEP-2..4, DEP-16).

Driven by the scripted driver of ``_client_modern`` (every modern request validated
against the 2026-07-28 schema); time is a number.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _client_modern import MODERN, OK, Peer, make, tool
from _proto_support import drive

from mcp_proto import deprecations
from mcp_proto.effects import Call, SetLogLevel
from mcp_proto.errors import (
    HeaderMismatchError,
    InputRequiredError,
    RemoteProtocolError,
    ServerError,
    UnknownResultTypeError,
)
from mcp_proto.handlers import Handlers
from mcp_proto.modern.mrtr import InputRequiredFailure, InputRequiredWait
from mcp_proto.types import Tool

HEADER_TOOL = {
    "name": "deploy",
    "inputSchema": {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    },
}
BAD_TOOL = {
    "name": "broken",
    "inputSchema": {
        "type": "object",
        "properties": {"data": {"type": "object", "x-mcp-header": "Data"}},
    },
}


@pytest.fixture(autouse=True)
def _fresh_notices() -> Iterator[None]:
    deprecations.reset()
    yield
    deprecations.reset()


# ---------------------------------------------------------------- tools (HDR)


def test_tools_with_invalid_header_annotations_are_dropped_over_http() -> None:
    page = {"tools": [HEADER_TOOL, BAD_TOOL, tool("plain")]}
    core, d = make({"s": Peer(script={"tools/list": page})})
    names = [t.name for t in drive(core.list_tools(), d.perform)]
    assert names == ["deploy", "plain"]  # HDR-3
    warnings = [log.message for log in d.logs if log.level == "WARNING"]
    assert any("'broken'" in w and "x-mcp-header" in w for w in warnings)


def test_stdio_and_handshake_era_servers_keep_every_tool() -> None:
    page = {"tools": [HEADER_TOOL, BAD_TOOL]}
    core, d = make(
        {
            "io": Peer(script={"tools/list": page}),
            "old": Peer("2025-11-25", script={"tools/list": page}),
        },
        types={"io": "stdio"},
    )
    assert len(drive(core.list_tools(server="io"), d.perform)) == 2  # HDR-7
    assert len(drive(core.list_tools(server="old"), d.perform)) == 2
    assert not d.logs


def test_call_tool_hands_the_tool_definition_to_the_connection() -> None:
    core, d = make({"s": Peer(script={"tools/list": {"tools": [HEADER_TOOL]}, "tools/call": OK})})
    assert drive(core.call_tool("deploy", {"region": "eu"}), d.perform) == OK
    (call,) = d.sent("tools/call")
    assert isinstance(call.tool, Tool) and call.tool.name == "deploy"
    assert call.tool.input_schema == HEADER_TOOL["inputSchema"]


def _mismatch() -> HeaderMismatchError:
    return HeaderMismatchError("Header mismatch", code=-32020, method="tools/call")


def test_a_header_mismatch_refreshes_tools_list_and_retries_once() -> None:
    renamed = {
        **HEADER_TOOL,
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Zone"}},
        },
    }
    lists = [{"tools": [HEADER_TOOL], "ttlMs": 3_600_000}, {"tools": [renamed]}]
    emitted: list[tuple[str, str, dict[str, Any], int]] = []
    core, d = make(
        {"s": Peer(script={"tools/list": lists, "tools/call": [_mismatch(), OK]})},
        on_synthetic_notification=lambda *n: emitted.append((*n, len(d.calls))),
    )
    assert drive(core.call_tool("deploy", {"region": "eu"}), d.perform) == OK
    assert [c.method for c in d.calls] == ["tools/list", "tools/call", "tools/list", "tools/call"]
    # HDR-5: the refresh is a synthetic list_changed, handed to the shell (listeners,
    # host callbacks) after the first call failed and before the list is fetched again.
    assert emitted == [("s", "notifications/tools/list_changed", {}, 2)]
    first, retry = d.sent("tools/call")
    # HDR-5: the retry's headers come from the refreshed definition.
    assert first.tool.input_schema == HEADER_TOOL["inputSchema"]
    assert retry.tool.input_schema == renamed["inputSchema"]
    assert any("-32020" in log.message for log in d.logs)


def test_a_second_header_mismatch_raises() -> None:
    core, d = make(
        {"s": Peer(script={"tools/list": {"tools": [HEADER_TOOL]}, "tools/call": _mismatch()})}
    )
    emitted: list[str] = []
    core.on_synthetic_notification = lambda server, method, params: emitted.append(method)
    with pytest.raises(HeaderMismatchError):
        drive(core.call_tool("deploy", {"region": "eu"}), d.perform)
    assert len(d.sent("tools/call")) == 2
    assert emitted == ["notifications/tools/list_changed"]  # one refresh, then it raises


def test_a_header_mismatch_from_a_handshake_era_server_is_not_retried() -> None:
    core, d = make(
        {
            "s": Peer(
                "2025-11-25",
                script={"tools/list": {"tools": [HEADER_TOOL]}, "tools/call": _mismatch()},
            )
        }
    )
    with pytest.raises(HeaderMismatchError):
        drive(core.call_tool("deploy", {}), d.perform)
    assert len(d.sent("tools/call")) == 1


# ---------------------------------------------------------------- input_required (MRTR)


def ask(key: str = "q", state: str | None = "s1") -> dict[str, Any]:
    out: dict[str, Any] = {
        "resultType": "input_required",
        "inputRequests": {
            key: {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "Which?",
                    "requestedSchema": {"type": "object", "properties": {}},
                },
            }
        },
    }
    if state is not None:
        out["requestState"] = state
    return out


def accept(*_: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {}}


def test_an_input_required_round_is_answered_and_retried_with_the_state() -> None:
    core, d = make(
        {"s": Peer(script={"tools/list": {"tools": [HEADER_TOOL]}, "tools/call": [ask(), OK]})},
        handlers=Handlers(elicitation=accept),
    )
    progress = lambda *_: None  # noqa: E731
    result = drive(core.call_tool("deploy", {"region": "eu"}, progress=progress), d.perform)
    assert result == OK
    first, retry = d.sent("tools/call")
    assert retry.params == {
        "name": "deploy",
        "arguments": {"region": "eu"},
        "inputResponses": {"q": {"action": "accept", "content": {}}},
        "requestState": "s1",  # MRTR-2: echoed exactly
    }
    # Each round carries the tool (its headers) and the caller's progress callback.
    assert retry.tool is first.tool is not None and retry.progress is progress


def test_prompts_get_and_resources_read_run_rounds_too() -> None:
    prompt = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}
    read = {"contents": [{"uri": "x://a", "text": "a"}]}
    core, d = make(
        {
            "s": Peer(
                script={
                    "prompts/list": {"prompts": [{"name": "p"}]},
                    "prompts/get": [ask(), prompt],
                    "resources/read": [ask(state=None), read],
                }
            )
        },
        handlers=Handlers(elicitation=accept),
    )
    assert drive(core.get_prompt("p"), d.perform) == prompt
    assert [c.text for c in drive(core.read_resource("x://a"), d.perform)] == ["a"]
    retry = d.sent("resources/read")[1]
    assert retry.params is not None and "requestState" not in retry.params


def test_eleven_rounds_fail_resumably_and_resume_completes() -> None:
    rounds = [ask(f"q{i}", f"s{i}") for i in range(11)] + [OK]
    core, d = make(
        {"s": Peer(script={"tools/list": {"tools": [tool("t")]}, "tools/call": rounds})},
        handlers=Handlers(elicitation=accept),
    )
    with pytest.raises(InputRequiredError) as caught:
        drive(core.call_tool("t", {}), d.perform)
    err = caught.value
    assert isinstance(err, InputRequiredFailure) and err.reason == "rounds"  # MRTR-3
    assert err.resumable and err.request_state == "s10"
    assert len(d.sent("tools/call")) == 11
    assert drive(core.resume_input_required(err), d.perform) == OK  # MRTR-6
    last = d.sent("tools/call")[-1]
    assert last.params is not None and last.params["requestState"] == "s10"
    assert set(last.params["inputResponses"]) == {"q10"}
    assert last.tool is not None and last.tool.name == "t"


def test_a_state_only_wait_is_paced_and_bounded_by_the_call_timeout() -> None:
    wait = {"resultType": "input_required", "requestState": "later"}
    core, d = make({"s": Peer(script={"tools/list": {"tools": [tool("t")]}, "tools/call": wait})})
    with pytest.raises(InputRequiredFailure) as caught:
        drive(core.call_tool("t", {}, timeout=3.0), d.perform)
    assert caught.value.reason == "timeout"  # MRTR-7
    assert sum(d.sleeps) == pytest.approx(3.0)
    assert d.sleeps[:2] == [0.5, 1.0]  # MRTR-4: growing pauses
    assert all((c.params or {}).get("requestState") in (None, "later") for c in d.calls)


def test_a_wait_without_a_call_timeout_is_bounded_by_the_read_timeout() -> None:
    wait = {"resultType": "input_required", "requestState": "later"}
    core, d = make(
        {"s": Peer(script={"tools/list": {"tools": [tool("t")]}, "tools/call": wait})},
        read_timeout=10.0,
    )
    with pytest.raises(InputRequiredFailure):
        drive(core.call_tool("t", {}), d.perform)
    assert sum(d.sleeps) == pytest.approx(10.0)


def test_the_wait_callback_cancels_or_retries() -> None:
    wait = {"resultType": "input_required", "requestState": "later"}
    seen: list[InputRequiredWait] = []

    def cancel(w: InputRequiredWait) -> str:
        seen.append(w)
        return "cancel"

    core, d = make(
        {"s": Peer(script={"tools/list": {"tools": [tool("t")]}, "tools/call": [wait, OK]})},
        on_input_required_wait=cancel,
    )
    with pytest.raises(InputRequiredFailure) as caught:
        drive(core.call_tool("t", {}), d.perform)
    assert caught.value.reason == "cancelled" and seen[0].request_state == "later"
    core.on_input_required_wait = lambda w: "retry"
    assert drive(core.resume_input_required(caught.value), d.perform) == OK
    assert not d.sleeps  # "retry" retries at once


def test_malformed_input_requests_fail_typed() -> None:
    bad = {"resultType": "input_required", "inputRequests": {"q": {"params": {}}}}
    core, d = make({"s": Peer(script={"tools/list": {"tools": [tool("t")]}, "tools/call": bad})})
    with pytest.raises(InputRequiredFailure) as caught:
        drive(core.call_tool("t", {}), d.perform)
    assert caught.value.reason == "malformed"


def test_an_unknown_result_type_is_an_error_on_modern_servers_only() -> None:
    odd = {**OK, "resultType": "mystery"}
    core, d = make({"s": Peer(script={"tools/list": {"tools": [tool("t")]}, "tools/call": odd})})
    with pytest.raises(UnknownResultTypeError) as caught:  # LIFE-19, typed
        drive(core.call_tool("t", {}), d.perform)
    assert isinstance(caught.value, RemoteProtocolError)
    assert caught.value.result_type == "mystery" and caught.value.method == "tools/call"
    # ... and in a later round it fails the exchange, resumably.
    core, d = make(
        {"s": Peer(script={"tools/list": {"tools": [tool("t")]}, "tools/call": [ask(), odd]})},
        handlers=Handlers(elicitation=accept),
    )
    with pytest.raises(InputRequiredFailure) as later:
        drive(core.call_tool("t", {}), d.perform)
    assert later.value.reason == "malformed"
    assert isinstance(later.value.__cause__, UnknownResultTypeError)
    core, d = make(
        {"s": Peer("2025-11-25", script={"tools/list": {"tools": [tool("t")]}, "tools/call": odd})}
    )
    assert drive(core.call_tool("t", {}), d.perform) == odd  # the handshake era: unchanged


@pytest.mark.parametrize("version", ["2025-11-25", MODERN])
def test_a_call_with_a_complete_result_is_one_plain_call(version: str) -> None:
    """Once the tool is known, a call whose result is complete is its one ``Call`` and
    nothing else, in either era: no ``Connect`` or ``PeekEra`` to read the era (issue
    22: the connection owns it and builds the request for it; the tool's definition
    rides along for HDR-1, which a handshake-era connection ignores:
    test_connection_modern_http.py)."""
    complete = {**OK, "resultType": "complete"} if version == MODERN else OK
    core, d = make(
        {
            "s": Peer(
                version, script={"tools/list": {"tools": [HEADER_TOOL]}, "tools/call": complete}
            )
        }
    )
    drive(core.list_tools(), d.perform)
    effects: list[Any] = []

    def perform(effect: Any) -> Any:
        effects.append(effect)
        return d.perform(effect)

    assert drive(core.call_tool("deploy", {}), perform) == complete
    (call,) = effects
    assert type(call) is Call and call.tool is not None and call.tool.name == "deploy"
    assert (call.server, call.method, call.params, call.timeout, call.progress) == (
        "s",
        "tools/call",
        {"name": "deploy", "arguments": {}},
        None,
        None,
    )


def test_resume_needs_a_resumable_error() -> None:
    core, d = make({"s": Peer()})
    with pytest.raises(TypeError):
        drive(core.resume_input_required(ServerError("x", code=1)), d.perform)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        drive(core.resume_input_required(InputRequiredError("x")), d.perform)


# ---------------------------------------------------------------- log level (LIFE-15)


def test_set_log_level_on_a_modern_server_is_meta_not_a_request() -> None:
    core, d = make({"new": Peer(), "old": Peer("2025-11-25", script={"logging/setLevel": {}})})
    assert drive(core.set_log_level("debug"), d.perform) == ["new", "old"]
    assert d.levels == [SetLogLevel("new", "debug")]
    assert [c.server for c in d.sent("logging/setLevel")] == ["old"]


# ---------------------------------------------------------------- deprecations (DEP)


class Notices:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, text: str) -> None:
        self.lines.append(text)


def test_roots_notice_only_for_a_non_empty_list() -> None:
    notes = Notices()
    core, d = make({"s": Peer()}, on_deprecated=notes)
    core.set_initial_roots([])
    assert notes.lines == []  # DEP-16: an empty list exposes nothing
    drive(core.set_roots([{"uri": "file:///tmp"}]), d.perform)
    drive(core.set_roots([{"uri": "file:///var"}]), d.perform)
    assert len(notes.lines) == 1 and notes.lines[0].startswith("Roots is deprecated")
    assert deprecations.state("roots") == "announced"


def test_sampling_handler_and_log_level_meta_are_announced_at_construction() -> None:
    notes = Notices()
    make(
        {"s": Peer()},
        handlers=Handlers(sampling=lambda *a: None),
        request_meta={"io.modelcontextprotocol/logLevel": "debug"},
        on_deprecated=notes,
    )
    assert [line.split(" is deprecated")[0] for line in notes.lines] == ["Sampling", "Logging"]


def test_set_log_level_and_server_log_messages_announce_logging_once() -> None:
    notes = Notices()
    core, d = make({"s": Peer()}, on_deprecated=notes)
    core.handle_notification("s", "notifications/message", {"level": "info", "data": "x"})
    drive(core.set_log_level("info"), d.perform)
    assert len(notes.lines) == 1 and notes.lines[0].startswith("Logging")


def test_a_failing_logger_never_breaks_the_feature_and_the_notice_stays_due() -> None:
    def broken(text: str) -> None:
        raise OSError("disk full")

    core, d = make({"s": Peer()}, on_deprecated=broken)
    drive(core.set_roots([{"uri": "file:///tmp"}]), d.perform)  # DEP-12: no raise
    assert deprecations.state("roots") == "due"
    core.on_deprecated = Notices()
    core.set_initial_roots([{"uri": "file:///tmp"}])
    assert deprecations.state("roots") == "announced"


def test_served_requests_announce_what_they_use() -> None:
    from mcp_proto.handlers import serve_request

    notes = Notices()
    handlers = Handlers(
        sampling=lambda *a: {"role": "assistant", "content": {"type": "text", "text": "x"}},
        roots=lambda: [],
        on_deprecated=notes,
    )
    drive(
        serve_request(handlers, "roots/list", {}, server="s"),
        lambda e: e.fn(*e.args) if hasattr(e, "fn") else None,
    )
    assert notes.lines == []  # an empty roots answer is not a use (DEP-16)
    params = {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 5,
        "includeContext": "thisServer",
    }
    drive(
        serve_request(handlers, "sampling/createMessage", params, server="s"),
        lambda e: e.fn(*e.args) if hasattr(e, "fn") else None,
    )
    assert [n.split(" is deprecated")[0] for n in notes.lines] == [
        "Sampling",
        'includeContext "thisServer" / "allServers" in sampling requests',
    ]
    with_root = Handlers(roots=lambda: [{"uri": "file:///a"}], on_deprecated=notes)
    drive(
        serve_request(with_root, "roots/list", {}, server="s"),
        lambda e: e.fn(*e.args) if hasattr(e, "fn") else None,
    )
    assert notes.lines[-1].startswith("Roots")


def test_request_meta_and_extensions_are_validated() -> None:
    with pytest.raises(ValueError):  # as the connection says it (a ValueError)
        make({"s": Peer()}, request_meta=["not", "a", "mapping"])
    with pytest.raises(ValueError):
        make({"s": Peer()}, extensions=["no-prefix"])
    core, _ = make({"s": Peer()}, extensions=["io.example/x"], request_meta={"a": 1})
    assert core.extensions == {"io.example/x": {}} and core.request_meta == {"a": 1}


def test_a_log_level_in_a_calls_own_meta_announces_logging() -> None:
    notes = Notices()
    core, d = make({"s": Peer(script={"tools/list": {"tools": [tool("t")]}, "tools/call": OK})})
    core.on_deprecated = notes
    drive(core.call_tool("t", {"_meta": {"progressToken": 1}}), d.perform)
    assert notes.lines == []
    drive(core.call_tool("t", {"_meta": {"io.modelcontextprotocol/logLevel": "debug"}}), d.perform)
    assert len(notes.lines) == 1 and notes.lines[0].startswith("Logging")
    assert d.sent("tools/call")[-1].params == {
        "name": "t",
        "arguments": {},
        "_meta": {"io.modelcontextprotocol/logLevel": "debug"},
    }


def test_one_notice_per_process_for_two_clients() -> None:
    notes = Notices()
    for _ in range(2):
        core, d = make({"s": Peer()}, on_deprecated=notes)
        drive(core.set_roots([{"uri": "file:///tmp"}]), d.perform)
    assert len(notes.lines) == 1  # DEP-9


def test_set_roots_tells_handshake_era_servers_only() -> None:
    """CAP-5: 2026-07-28 has no notifications/roots/list_changed (roots are asked for in
    results, ROOT-5); a handshake-era server that declared roots is still told."""
    tools = {"tools/list": {"tools": [tool("t")]}}
    core, d = make({"m": Peer(script=tools), "l": Peer(version="2025-11-25", script=tools)})
    core.set_initial_roots([])
    drive(core.list_tools(), d.perform)  # both connected: their eras are known
    drive(core.set_roots([{"uri": "file:///tmp"}]), d.perform)
    assert [(n.server, n.method) for n in d.notifies] == [("l", "notifications/roots/list_changed")]


@pytest.mark.parametrize("value", [None, 0, "", ["complete"]])
def test_a_result_type_that_is_not_a_string_is_an_error_on_modern_servers_only(
    value: Any,
) -> None:
    # call_tool reads the era only for a result not plainly complete: a resultType
    # present but null (or any non-string) is such a result (LIFE-19: "MUST be
    # considered invalid"), not an absent one.
    odd = {**OK, "resultType": value}
    core, d = make({"s": Peer(script={"tools/list": {"tools": [tool("t")]}, "tools/call": odd})})
    with pytest.raises(UnknownResultTypeError):
        drive(core.call_tool("t", {}), d.perform)
    core, d = make(
        {"s": Peer("2025-11-25", script={"tools/list": {"tools": [tool("t")]}, "tools/call": odd})}
    )
    assert drive(core.call_tool("t", {}), d.perform) == odd  # the handshake era ignores it
