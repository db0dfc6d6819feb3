"""ClientCore operations driven by a fake driver that scripts every effect.

The driver answers ``Connect`` with a ServerInfo and ``Call`` from a per-server script
(method -> value, exception or function of params), gating methods on capabilities as
a real Session would (CAP-1), and records every effect. Covers TOOL-1..6, TOOL-14,
CAP-1..4, CONN-23, COMP-1, LOG (set_log_level), RES (read_resource routing).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import attrs
import pytest
from _proto_support import drive
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto.client import LOG_LEVELS, ClientCore, ServerEntry
from mcp_proto.effects import Call, CallHost, Connect, Effect, Log, Notify, Op, PeekEra
from mcp_proto.errors import (
    AmbiguousResourceURI,
    AmbiguousToolName,
    CapabilityError,
    ConnectionError,
    InsufficientScopeError,
    LineTooLongError,
    MCPError,
    PromptGetError,
    PromptNotFound,
    RemoteProtocolError,
    RequestTimeoutError,
    ResourceNotFound,
    ResourceReadError,
    ResponseTooLargeError,
    ServerError,
    ServerNotFound,
    ToolCallError,
    ToolNotFound,
    TransportError,
    ValidationError,
)
from mcp_proto.handlers import Handlers
from mcp_proto.limits import Limits
from mcp_proto.pagination import list_all
from mcp_proto.session import REQUIRED_CAPABILITY, ServerInfo
from mcp_proto.types import ResourceContent, Root

CAPS = {
    "tools": {},
    "prompts": {},
    "resources": {"subscribe": True},
    "logging": {},
    "completions": {},
}


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object"}, **extra}


OK = {"content": [{"type": "text", "text": "ok"}], "isError": False}


@attrs.define
class FakeServer:
    caps: dict[str, Any] = attrs.Factory(lambda: dict(CAPS))
    version: str = "2025-11-25"
    #: method -> a value, an exception to raise, or a function of params
    script: dict[str, Any] = attrs.Factory(dict)

    def info(self) -> ServerInfo:
        return ServerInfo(self.version, self.caps, None, None)


@attrs.define
class FakeDriver:
    servers: dict[str, FakeServer]
    calls: list[Call] = attrs.Factory(list)
    connects: list[str] = attrs.Factory(list)
    notifies: list[Notify] = attrs.Factory(list)
    logs: list[Log] = attrs.Factory(list)
    #: called with each Call before it is answered (to interleave notifications)
    on_call: Callable[[Call], None] | None = None
    notify_error: MCPError | None = None

    def perform(self, effect: Effect) -> Any:
        if isinstance(effect, Connect):
            self.connects.append(effect.server)
            return self.servers[effect.server].info()
        if isinstance(effect, Call):
            server = self.servers[effect.server]
            path = REQUIRED_CAPABILITY.get(effect.method)
            if path is not None and not server.info().has_capability(*path):
                raise CapabilityError(f"{effect.method} needs {path}")  # as Session does
            self.calls.append(effect)
            if self.on_call is not None:
                self.on_call(effect)
            answer = server.script.get(effect.method)
            if answer is None:
                raise ServerError("Method not found", code=-32601, method=effect.method)
            if isinstance(answer, BaseException):
                raise answer
            if callable(answer):
                return answer(effect.params)
            return answer
        if isinstance(effect, Notify):
            if self.notify_error is not None:
                raise self.notify_error
            self.notifies.append(effect)
            return None
        if isinstance(effect, CallHost):
            return effect.fn(*effect.args)
        if isinstance(effect, Log):
            self.logs.append(effect)
            return None
        if isinstance(effect, PeekEra):  # the era of a connected server, if any
            return self.servers[effect.server].info().protocol_era
        raise AssertionError(effect)

    def run(self, op: Op[Any]) -> Any:
        return drive(op, self.perform)

    def methods(self, server: str | None = None) -> list[str]:
        return [c.method for c in self.calls if server is None or c.server == server]


def setup(
    servers: dict[str, FakeServer],
    *,
    types: dict[str, str] | None = None,
    handlers: Handlers | None = None,
    **kwargs: Any,
) -> tuple[ClientCore, FakeDriver]:
    entries = [ServerEntry(name, (types or {}).get(name, "stdio")) for name in servers]
    core = ClientCore(entries, handlers=handlers or Handlers(), **kwargs)
    return core, FakeDriver(servers)


def two_servers() -> tuple[ClientCore, FakeDriver]:
    return setup(
        {
            "alpha": FakeServer(
                script={
                    "tools/list": {"tools": [tool("a_only"), tool("shared")]},
                    "tools/call": OK,
                }
            ),
            "beta": FakeServer(
                script={
                    "tools/list": {"tools": [tool("b_only"), tool("shared")]},
                    "tools/call": OK,
                }
            ),
        }
    )


# ---------------------------------------------------------------- routing (TOOL-1, TOOL-4)


def test_list_tools_across_servers() -> None:
    core, driver = two_servers()
    tools = driver.run(core.list_tools())
    assert [(t.server, t.name) for t in tools] == [
        ("alpha", "a_only"),
        ("alpha", "shared"),
        ("beta", "b_only"),
        ("beta", "shared"),
    ]
    assert core.tool_cache == tools
    assert driver.methods() == ["tools/list", "tools/list"]


def test_call_tool_routes_to_the_owner() -> None:
    core, driver = two_servers()
    assert driver.run(core.call_tool("b_only", {"x": 1})) == OK
    call = driver.calls[-1]
    assert (call.server, call.method) == ("beta", "tools/call")
    assert call.params == {"name": "b_only", "arguments": {"x": 1}}
    driver.run(core.call_tool("a_only"))
    assert driver.calls[-1].server == "alpha"
    assert driver.calls[-1].params == {"name": "a_only", "arguments": {}}


def test_ambiguous_tool_name() -> None:
    core, driver = two_servers()
    with pytest.raises(AmbiguousToolName) as info:
        driver.run(core.call_tool("shared"))
    assert "alpha" in str(info.value) and "beta" in str(info.value)
    assert "tools/call" not in driver.methods()
    driver.run(core.call_tool("shared", server="BETA"))
    assert driver.calls[-1].server == "beta"


def test_tool_not_found_refetches_once() -> None:
    core, driver = two_servers()
    driver.run(core.list_tools())
    with pytest.raises(ToolNotFound) as info:
        driver.run(core.call_tool("nope"))
    assert isinstance(info.value, LookupError)
    # One refetch of every server (the cache may predate the tool), then give up.
    assert driver.methods() == ["tools/list"] * 4
    with pytest.raises(ToolNotFound, match="beta"):
        driver.run(core.call_tool("a_only", server="beta"))


def test_resolving_a_name_among_many_cached_tools_sends_nothing_and_follows_changes() -> None:
    """With every list cached, a name is found through an index (no effects at all);
    list_changed drops the index with the list, so the next call sees the new tools."""
    many = {"tools": [tool(f"t{i}") for i in range(500)]}
    core, driver = setup({"s": FakeServer(script={"tools/list": many, "tools/call": OK})})
    driver.run(core.list_tools())
    before = len(driver.calls)
    op = core._resolve("tools", "t321", None)
    with pytest.raises(StopIteration) as done:
        next(op)  # no effect yielded: answered from the cache
    assert done.value.value.name == "t321"
    assert len(driver.calls) == before and driver.connects.count("s") == 1
    driver.servers["s"].script["tools/list"] = {"tools": [tool("t321"), tool("fresh")]}
    core.handle_notification("s", "notifications/tools/list_changed", {})
    assert driver.run(core.call_tool("fresh")) == OK
    with pytest.raises(ToolNotFound):
        driver.run(core.call_tool("t7"))


def test_routing_without_server_follows_every_list_change() -> None:
    """Routing a name without ``server=`` reads one index of every server's list
    (issue 22's per-call cost); it never answers from a list that changed: a
    list_changed makes the call list that server again, and a refreshed list's new
    definition is the one called."""
    core, driver = two_servers()
    driver.run(core.list_tools())
    driver.run(core.call_tool("a_only"))
    assert driver.methods() == ["tools/list", "tools/list", "tools/call"]
    core.handle_notification("alpha", "notifications/tools/list_changed", {})
    driver.calls.clear()
    driver.run(core.call_tool("a_only"))
    assert [(c.server, c.method) for c in driver.calls] == [
        ("alpha", "tools/list"),
        ("alpha", "tools/call"),
    ]
    # A refreshed list (cache=False) replaces the definitions routing uses: alpha's
    # a_only now requires an argument (TOOL-5), so a call without it is refused.
    driver.servers["alpha"].script["tools/list"] = {
        "tools": [
            tool(
                "a_only",
                inputSchema={"type": "object", "properties": {"n": {}}, "required": ["n"]},
            ),
            tool("shared"),
        ]
    }
    driver.run(core.list_tools(cache=False))
    with pytest.raises(ValidationError, match="n"):
        driver.run(core.call_tool("a_only"))
    assert driver.run(core.call_tool("a_only", {"n": 1})) == OK
    with pytest.raises(AmbiguousToolName):
        driver.run(core.call_tool("shared"))  # on both: still ambiguous


def test_tool_added_after_caching_is_found_by_the_refetch() -> None:
    core, driver = setup({"s": FakeServer(script={"tools/list": {"tools": [tool("old")]}})})
    driver.run(core.list_tools())
    driver.servers["s"].script["tools/list"] = {"tools": [tool("old"), tool("new")]}
    driver.servers["s"].script["tools/call"] = OK
    assert driver.run(core.call_tool("new")) == OK


def test_list_tools_skips_failing_server_with_a_log() -> None:
    core, driver = two_servers()
    driver.servers["alpha"].script["tools/list"] = TransportError("alpha is down")
    tools = driver.run(core.list_tools())
    assert [t.server for t in tools] == ["beta", "beta"]
    assert any(log.level == "WARNING" and "alpha" in log.message for log in driver.logs)
    # The failure is not cached: the next listing asks alpha again.
    driver.servers["alpha"].script["tools/list"] = {"tools": []}
    driver.run(core.list_tools())
    assert driver.methods("alpha") == ["tools/list", "tools/list"]


def test_list_tools_all_failing_raises_the_first_error() -> None:
    core, driver = two_servers()
    first = ConnectionError("alpha refused")
    driver.servers["alpha"].script["tools/list"] = first
    driver.servers["beta"].script["tools/list"] = TransportError("beta down")
    with pytest.raises(ConnectionError) as info:
        driver.run(core.list_tools())
    assert info.value is first


def test_list_tools_of_one_server_raises_its_error() -> None:
    core, driver = two_servers()
    driver.servers["beta"].script["tools/list"] = TransportError("beta down")
    with pytest.raises(TransportError):
        driver.run(core.list_tools(server="beta"))


def test_server_without_tools_capability_is_not_asked() -> None:
    core, driver = setup(
        {
            "plain": FakeServer(caps={"logging": {}}),
            "tooly": FakeServer(script={"tools/list": {"tools": [tool("t")]}}),
        }
    )
    assert [t.name for t in driver.run(core.list_tools())] == ["t"]
    assert driver.methods() == ["tools/list"]
    assert driver.calls[0].server == "tooly"


def test_malformed_tool_entries_are_skipped() -> None:
    core, driver = setup(
        {"s": FakeServer(script={"tools/list": {"tools": [tool("good"), {"name": 5}, "x", {}]}})}
    )
    assert [t.name for t in driver.run(core.list_tools())] == ["good"]
    assert [log.level for log in driver.logs] == ["WARNING"] * 3


@settings(deadline=None)
@given(
    offers=st.lists(
        st.lists(st.sampled_from(["t1", "t2", "t3"]), unique=True, max_size=3),
        min_size=1,
        max_size=4,
    ),
    wanted=st.sampled_from(["t1", "t2", "t3"]),
)
def test_routing_property(offers: list[list[str]], wanted: str) -> None:
    """ToolNotFound iff nobody offers it, AmbiguousToolName iff several do, else the
    one owner gets exactly one tools/call."""
    servers = {
        f"s{i}": FakeServer(
            script={"tools/list": {"tools": [tool(n) for n in names]}, "tools/call": OK}
        )
        for i, names in enumerate(offers)
    }
    core, driver = setup(servers)
    owners = [f"s{i}" for i, names in enumerate(offers) if wanted in names]
    if not owners:
        with pytest.raises(ToolNotFound):
            driver.run(core.call_tool(wanted))
    elif len(owners) > 1:
        with pytest.raises(AmbiguousToolName):
            driver.run(core.call_tool(wanted))
        for owner in owners:
            driver.run(core.call_tool(wanted, server=owner))
            assert driver.calls[-1].server == owner
    else:
        driver.run(core.call_tool(wanted))
        assert [c.server for c in driver.calls if c.method == "tools/call"] == owners


# ---------------------------------------------------------------- cache and list_changed


def test_cache_and_invalidation() -> None:
    core, driver = two_servers()
    driver.run(core.list_tools())
    driver.run(core.list_tools())
    driver.run(core.call_tool("a_only"))
    assert driver.methods() == ["tools/list", "tools/list", "tools/call"]
    driver.run(core.list_tools(cache=False))
    assert driver.methods().count("tools/list") == 4
    # list_changed from alpha drops alpha's tools only.
    core.handle_notification("alpha", "notifications/tools/list_changed", {})
    assert {t.server for t in core.tool_cache} == {"beta"}
    driver.calls.clear()
    driver.run(core.list_tools())
    assert [(c.server, c.method) for c in driver.calls] == [("alpha", "tools/list")]
    # Other notifications leave the tool cache alone.
    for method in (
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/message",
        "notifications/resources/updated",
    ):
        core.handle_notification("alpha", method, {})
    assert len(core.tool_cache) == 4


def test_prompt_and_resource_caches_invalidated_separately() -> None:
    core, driver = setup(
        {
            "s": FakeServer(
                script={
                    "tools/list": {"tools": [tool("t")]},
                    "prompts/list": {"prompts": [{"name": "p"}]},
                    "resources/list": {"resources": [{"uri": "file:///r", "name": "r"}]},
                }
            )
        }
    )
    driver.run(core.list_tools())
    driver.run(core.list_prompts())
    driver.run(core.list_resources())
    assert [p.name for p in core.prompt_cache] == ["p"]
    assert [r.uri for r in core.resource_cache] == ["file:///r"]
    core.handle_notification("s", "notifications/prompts/list_changed", {})
    assert core.prompt_cache == [] and len(core.tool_cache) == 1 and len(core.resource_cache) == 1
    core.handle_notification("s", "notifications/resources/list_changed", {})
    assert core.resource_cache == [] and len(core.tool_cache) == 1
    core.server_disconnected("s")
    assert core.tool_cache == []
    driver.run(core.list_tools())
    core.clear_cache()
    assert core.tool_cache == []


def test_list_changed_during_a_fetch_is_not_overwritten() -> None:
    """Generation guard: a list_changed arriving between the Call and its result means
    the result may already be stale, so it is returned but not cached."""
    core, driver = setup({"s": FakeServer(script={"tools/list": {"tools": [tool("v1")]}})})
    fired = []

    def announce(call: Call) -> None:
        if not fired:
            fired.append(call)
            core.handle_notification("s", "notifications/tools/list_changed", {})

    driver.on_call = announce
    assert [t.name for t in driver.run(core.list_tools())] == ["v1"]
    assert core.tool_cache == []  # not stored over the invalidation
    driver.servers["s"].script["tools/list"] = {"tools": [tool("v2")]}
    assert [t.name for t in driver.run(core.list_tools())] == ["v2"]
    assert [t.name for t in core.tool_cache] == ["v2"]  # a quiet fetch is cached
    assert driver.methods() == ["tools/list", "tools/list"]


def test_list_changed_for_another_server_does_not_block_caching() -> None:
    core, driver = two_servers()
    driver.on_call = lambda call: core.handle_notification(
        "beta" if call.server == "alpha" else "nobody", "notifications/tools/list_changed", {}
    )
    driver.run(core.list_tools())
    assert {t.server for t in core.tool_cache} == {"alpha", "beta"}


# ---------------------------------------------------------------- pagination (TOOL-2, TOOL-3)


def pages(book: dict[Any, Any]) -> Callable[[Any], Any]:
    """A tools/list script answering by cursor."""
    return lambda params: book[(params or {}).get("cursor")]


def test_three_pages() -> None:
    book = {
        None: {"tools": [tool("a")], "nextCursor": "c1"},
        "c1": {"tools": [tool("b")], "nextCursor": "c2"},
        "c2": {"tools": [tool("c")]},
    }
    core, driver = setup({"s": FakeServer(script={"tools/list": pages(book)})})
    assert [t.name for t in driver.run(core.list_tools())] == ["a", "b", "c"]
    assert [c.params for c in driver.calls] == [None, {"cursor": "c1"}, {"cursor": "c2"}]
    assert driver.logs == []


def test_null_next_cursor_ends_the_list() -> None:
    book = {None: {"tools": [tool("a")], "nextCursor": None}}
    core, driver = setup({"s": FakeServer(script={"tools/list": pages(book)})})
    assert len(driver.run(core.list_tools())) == 1


def test_repeated_cursor_stops_with_a_log() -> None:
    book = {
        None: {"tools": [tool("a")], "nextCursor": "c1"},
        "c1": {"tools": [tool("b")], "nextCursor": "c1"},
    }
    core, driver = setup({"s": FakeServer(script={"tools/list": pages(book)})})
    assert [t.name for t in driver.run(core.list_tools())] == ["a", "b"]
    assert len(driver.calls) == 2
    (log,) = driver.logs
    assert log.level == "WARNING" and "repeated" in log.message


def test_cursor_cycle_stops() -> None:
    book = {
        None: {"tools": [], "nextCursor": "x"},
        "x": {"tools": [], "nextCursor": "y"},
        "y": {"tools": [], "nextCursor": "x"},
    }
    core, driver = setup({"s": FakeServer(script={"tools/list": pages(book)})})
    driver.run(core.list_tools())
    assert len(driver.calls) == 3


def test_max_pages_bound() -> None:
    counter = iter(range(10**6))

    def endless(params: Any) -> Any:
        return {"tools": [tool(f"t{next(counter)}")], "nextCursor": f"c{next(counter)}"}

    core, driver = setup(
        {"s": FakeServer(script={"tools/list": endless})}, limits=Limits(max_pages=5)
    )
    tools = driver.run(core.list_tools())
    assert len(driver.calls) == 5 and len(tools) == 5
    (log,) = driver.logs
    assert log.level == "WARNING" and "5 pages" in log.message


@pytest.mark.parametrize(
    "page",
    [
        None,
        "tools",
        42,
        {},
        {"tools": None},
        {"tools": {"a": 1}},
        {"tools": "x"},
        {"items": []},
        {"tools": [], "nextCursor": 5},
        {"tools": [], "nextCursor": ["c"]},
    ],
)
def test_malformed_page_raises(page: Any) -> None:
    core, driver = setup({"s": FakeServer(script={"tools/list": pages({None: page})})})
    with pytest.raises(RemoteProtocolError):
        driver.run(core.list_tools())
    # Directly, without the across-servers wrapper.
    with pytest.raises(RemoteProtocolError):
        drive(list_all("s", "tools/list", "tools", max_pages=10), driver.perform)


def test_malformed_page_from_one_server_does_not_hide_the_other() -> None:
    core, driver = two_servers()
    driver.servers["alpha"].script["tools/list"] = {"tools": None}
    tools = driver.run(core.list_tools())
    assert {t.server for t in tools} == {"beta"}


def test_bare_array_accepted_as_one_page() -> None:
    core, driver = setup({"s": FakeServer(script={"tools/list": [tool("a"), tool("b")]})})
    assert [t.name for t in driver.run(core.list_tools())] == ["a", "b"]
    assert len(driver.calls) == 1


def test_list_all_passes_the_timeout() -> None:
    driver = FakeDriver({"s": FakeServer(script={"x/list": {"items": [1, 2]}})})
    assert drive(list_all("s", "x/list", "items", max_pages=3, timeout=2.5), driver.perform) == [
        1,
        2,
    ]
    assert driver.calls[0].timeout == 2.5


# ---------------------------------------------------------------- arguments (TOOL-5, TOOL-14)


def test_meta_hoisted_out_of_arguments() -> None:
    core, driver = two_servers()
    driver.run(core.call_tool("a_only", {"x": 1, "_meta": {"progressToken": "tok", "k": "v"}}))
    params = driver.calls[-1].params
    assert params == {
        "name": "a_only",
        "arguments": {"x": 1},
        "_meta": {"progressToken": "tok", "k": "v"},
    }


def test_non_mapping_meta_never_sent_as_an_argument() -> None:
    core, driver = two_servers()
    driver.run(core.call_tool("a_only", {"x": 1, "_meta": "junk"}))
    assert driver.calls[-1].params == {"name": "a_only", "arguments": {"x": 1}}


def test_caller_arguments_not_mutated() -> None:
    core, driver = two_servers()
    args = {"x": 1, "_meta": {"k": "v"}}
    driver.run(core.call_tool("a_only", args))
    assert args == {"x": 1, "_meta": {"k": "v"}}


def test_progress_callback_and_timeout_reach_the_call() -> None:
    core, driver = two_servers()

    def cb(progress: float, total: float | None, message: str | None) -> None:
        pass

    driver.run(core.call_tool("a_only", progress=cb, timeout=3.0))
    assert driver.calls[-1].progress is cb and driver.calls[-1].timeout == 3.0


REQ_TOOL = tool(
    "needs",
    inputSchema={
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer", "default": 1}},
        "required": ["a", "b"],
    },
)


def test_required_arguments_checked_before_sending() -> None:
    core, driver = setup(
        {"s": FakeServer(script={"tools/list": {"tools": [REQ_TOOL]}, "tools/call": OK})}
    )
    with pytest.raises(ValidationError, match="a") as info:
        driver.run(core.call_tool("needs", {"b": 2}))
    assert isinstance(info.value, ValueError)
    assert "tools/call" not in driver.methods()
    # b has a default: it may be left out. _meta is not an argument.
    with pytest.raises(ValidationError):
        driver.run(core.call_tool("needs", {"_meta": {"a": 1}}))
    driver.run(core.call_tool("needs", {"a": "x"}))
    assert driver.methods()[-1] == "tools/call"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "required": "a"},
        {"type": "object", "required": [5, None]},
        {"type": "object", "required": ["a"], "properties": {"a": {"default": None}}},
        {"type": "object", "required": ["a"], "properties": "junk"},
    ],
)
def test_odd_required_declarations(schema: dict[str, Any]) -> None:
    tools = {"tools": [tool("t", inputSchema=schema)]}
    core, driver = setup({"s": FakeServer(script={"tools/list": tools, "tools/call": OK})})
    if schema.get("properties") == "junk":
        with pytest.raises(ValidationError):
            driver.run(core.call_tool("t"))
    else:
        assert driver.run(core.call_tool("t")) == OK


# ---------------------------------------------------------------- structured output


OUT_TOOL = tool(
    "weather",
    outputSchema={
        "type": "object",
        "properties": {"temp": {"type": "number"}},
        "required": ["temp"],
    },
)


def structured(
    result: Any, *, mode: str = "warn", version: str = "2025-11-25"
) -> tuple[Any, FakeDriver]:
    core, driver = setup(
        {
            "s": FakeServer(
                version=version,
                script={"tools/list": {"tools": [OUT_TOOL]}, "tools/call": result},
            )
        },
        validate_structured_content=mode,
    )
    return driver.run(core.call_tool("weather")), driver


GOOD = {"content": [], "structuredContent": {"temp": 21.5}}
BAD_RESULTS = [
    {"content": [], "structuredContent": {"temp": "warm"}},
    {"content": [], "structuredContent": {}},
    {"content": []},
    {"content": [], "structuredContent": None},
    {"content": [], "structuredContent": [21.5]},
    {"content": [], "isError": False, "structuredContent": {"temp": None}},
]


def test_structured_content_valid() -> None:
    for mode in ("warn", "strict"):
        result, driver = structured(GOOD, mode=mode)
        assert result == GOOD and driver.logs == []


@pytest.mark.parametrize("bad", BAD_RESULTS)
def test_structured_content_warn_mode(bad: dict[str, Any]) -> None:
    result, driver = structured(bad)
    assert result == bad  # still returned
    (log,) = driver.logs
    assert log.level == "WARNING" and "weather" in log.message


@pytest.mark.parametrize("bad", BAD_RESULTS)
def test_structured_content_strict_mode(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="weather"):
        structured(bad, mode="strict")


@pytest.mark.parametrize("bad", BAD_RESULTS)
def test_is_error_results_exempt(bad: dict[str, Any]) -> None:
    result, driver = structured({**bad, "isError": True}, mode="strict")
    assert result["isError"] is True and driver.logs == []


def test_object_only_rule_depends_on_the_revision() -> None:
    array_tool = tool("arr", outputSchema={"type": "array", "items": {"type": "integer"}})
    answer = {"content": [], "structuredContent": [1, 2]}
    for version, ok in (("2025-11-25", False), ("2025-06-18", False), ("2026-07-28", True)):
        core, driver = setup(
            {
                "s": FakeServer(
                    version=version,
                    script={"tools/list": {"tools": [array_tool]}, "tools/call": answer},
                )
            },
            validate_structured_content="strict",
        )
        if ok:
            assert driver.run(core.call_tool("arr")) == answer
        else:
            with pytest.raises(ValidationError):
                driver.run(core.call_tool("arr"))


def test_unusable_output_schema_is_reported() -> None:
    bad_schema = tool("t", outputSchema={"type": 5})
    core, driver = setup(
        {
            "s": FakeServer(
                script={
                    "tools/list": {"tools": [bad_schema]},
                    "tools/call": {"content": [], "structuredContent": {}},
                }
            )
        }
    )
    driver.run(core.call_tool("t"))
    (log,) = driver.logs
    assert "JSON Schema" in log.message


def test_tool_without_output_schema_is_not_checked() -> None:
    core, driver = two_servers()
    driver.servers["alpha"].script["tools/call"] = {"content": [], "structuredContent": 5}
    core.validate_structured_content = "strict"
    driver.run(core.call_tool("a_only"))
    assert driver.logs == []


def test_bad_validation_mode() -> None:
    with pytest.raises(ValueError):
        ClientCore([], handlers=Handlers(), validate_structured_content="loud")  # type: ignore[arg-type]


# ---------------------------------------------------------------- error wrapping


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (TransportError("pipe broke"), ToolCallError),
        # Too-large responses keep their own class: it already says what happened.
        (LineTooLongError("too long"), LineTooLongError),
        (ResponseTooLargeError("gzip bomb"), ResponseTooLargeError),
        (InsufficientScopeError("scope", scope="a b"), InsufficientScopeError),
        (RemoteProtocolError("garbage"), ToolCallError),
        (ConnectionError("spawn failed"), ToolCallError),
        (RequestTimeoutError("slow", method="tools/call"), RequestTimeoutError),
        (CapabilityError("no tools"), CapabilityError),
        (ServerError("bad args", code=-32602), ServerError),
    ],
)
def test_tool_call_error_wrapping(raised: MCPError, expected: type[MCPError]) -> None:
    core, driver = two_servers()
    driver.servers["beta"].script["tools/call"] = raised
    with pytest.raises(expected) as info:
        driver.run(core.call_tool("b_only"))
    if expected is ToolCallError:
        assert "beta" in str(info.value) and "b_only" in str(info.value)
        assert info.value.__cause__ is raised
    else:
        assert info.value is raised


@pytest.mark.parametrize("answer", [[], "ok", 5])
def test_malformed_tool_result(answer: Any) -> None:
    core, driver = two_servers()
    driver.servers["alpha"].script["tools/call"] = lambda params: answer
    with pytest.raises(RemoteProtocolError):
        driver.run(core.call_tool("a_only"))


def test_call_tools_in_order() -> None:
    core, driver = two_servers()
    results = driver.run(
        core.call_tools(
            [
                {"name": "b_only", "arguments": {"n": 1}},
                {"name": "a_only", "parameters": {"n": 2}},
                {"name": "shared", "server": "alpha"},
            ]
        )
    )
    assert results == [OK, OK, OK]
    calls = [(c.server, c.params) for c in driver.calls if c.method == "tools/call"]
    assert calls == [
        ("beta", {"name": "b_only", "arguments": {"n": 1}}),
        ("alpha", {"name": "a_only", "arguments": {"n": 2}}),
        ("alpha", {"name": "shared", "arguments": {}}),
    ]
    with pytest.raises(ValueError):
        driver.run(core.call_tools([{"arguments": {}}]))
    with pytest.raises(ValueError):
        driver.run(core.call_tools(["b_only"]))  # type: ignore[list-item]


def test_find_tools() -> None:
    core, driver = two_servers()
    assert {t.name for t in driver.run(core.find_tools("only"))} == {"a_only", "b_only"}
    assert {t.name for t in driver.run(core.find_tools(re.compile(r"^b_")))} == {"b_only"}
    found = driver.run(core.find_tool("shared"))
    assert found is not None and found.name == "shared"
    assert driver.run(core.find_tool("zzz")) is None


# ---------------------------------------------------------------- select_server (CONN-23)


def selector_core() -> ClientCore:
    core, _ = setup(
        {"Local": FakeServer(), "remote": FakeServer(), "other": FakeServer()},
        types={"Local": "stdio", "remote": "streamable_http", "other": "stdio"},
    )
    return core


@pytest.mark.parametrize(
    ("selector", "name"),
    [
        ("Local", "Local"),
        ("local", "Local"),
        ("REMOTE", "remote"),
        (0, "Local"),
        (2, "other"),
        (-1, "other"),
        (-3, "Local"),
        ("stdio", "Local"),  # a transport type: the first such server
        ("streamable_http", "remote"),
        (ServerEntry("other", "stdio"), "other"),
    ],
)
def test_select_server(selector: Any, name: str) -> None:
    assert selector_core().select_server(selector) == name


@pytest.mark.parametrize("selector", ["nope", 3, -4, "sse"])
def test_select_server_not_found(selector: Any) -> None:
    with pytest.raises(ServerNotFound):
        selector_core().select_server(selector)


@pytest.mark.parametrize("selector", [True, None, 1.5, object(), ["Local"]])
def test_select_server_bad_type(selector: Any) -> None:
    with pytest.raises(TypeError):
        selector_core().select_server(selector)


def test_server_names_unique_case_insensitively() -> None:
    with pytest.raises(ValueError):
        ClientCore([ServerEntry("a", "stdio"), ServerEntry("A", "stdio")], handlers=Handlers())


def test_no_servers() -> None:
    core = ClientCore([], handlers=Handlers())
    driver = FakeDriver({})
    with pytest.raises(ServerNotFound):
        driver.run(core.ping())
    assert driver.run(core.list_tools()) == []


# ---------------------------------------------------------------- set_log_level (CAP-3)


def test_set_log_level_skips_servers_without_logging() -> None:
    core, driver = setup(
        {
            "quiet": FakeServer(caps={"tools": {}}),
            "loud": FakeServer(script={"logging/setLevel": {}}),
        }
    )
    assert driver.run(core.set_log_level("warning")) == ["loud"]
    assert [(c.server, c.method, c.params) for c in driver.calls] == [
        ("loud", "logging/setLevel", {"level": "warning"})
    ]
    with pytest.raises(CapabilityError):
        driver.run(core.set_log_level("debug", server="quiet"))
    assert len(driver.calls) == 1
    assert driver.run(core.set_log_level("debug", server="loud")) == ["loud"]


@pytest.mark.parametrize("level", ["WARNING", "warn", "fatal", "", None])
def test_set_log_level_rejects_unknown_levels(level: Any) -> None:
    core, driver = setup({"s": FakeServer()})
    with pytest.raises(ValueError):
        driver.run(core.set_log_level(level))
    assert driver.connects == [] and driver.calls == []


def test_log_levels() -> None:
    assert LOG_LEVELS == (
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    )


# ---------------------------------------------------------------- complete (COMP-1)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            {"completion": {"values": ["py", "pyx"], "total": 10, "hasMore": True}},
            {"values": ["py", "pyx"], "total": 10, "hasMore": True},
        ),
        ({"completion": {"values": ["a"]}}, {"values": ["a"]}),
        ({"completion": {"values": "a"}}, {"values": []}),
        ({"completion": {}}, {"values": []}),
        ({"completion": None}, {"values": []}),
        ({}, {"values": []}),
        (None, {"values": []}),
        ([], {"values": []}),
    ],
)
def test_complete_result_shaping(answer: Any, expected: dict[str, Any]) -> None:
    core, driver = setup({"s": FakeServer(script={"completion/complete": lambda p: answer})})
    out = driver.run(
        core.complete({"type": "ref/prompt", "name": "code"}, {"name": "lang", "value": "py"})
    )
    assert out == expected
    assert driver.calls[-1].params == {
        "ref": {"type": "ref/prompt", "name": "code"},
        "argument": {"name": "lang", "value": "py"},
    }


def test_complete_with_context_and_default_value() -> None:
    core, driver = setup(
        {"s": FakeServer(script={"completion/complete": {"completion": {"values": []}}})}
    )
    driver.run(
        core.complete(
            {"type": "ref/resource", "uri": "file:///{path}"},
            {"name": "path"},
            context={"arguments": {"a": "1"}},
        )
    )
    assert driver.calls[-1].params == {
        "ref": {"type": "ref/resource", "uri": "file:///{path}"},
        "argument": {"name": "path", "value": ""},
        "context": {"arguments": {"a": "1"}},
    }


@pytest.mark.parametrize(
    ("ref", "argument"),
    [
        ({"type": "ref/tool", "name": "x"}, {"name": "a"}),
        ({"name": "x"}, {"name": "a"}),
        ("ref/prompt", {"name": "a"}),
        ({"type": "ref/prompt", "name": "x"}, {"value": "a"}),
        ({"type": "ref/prompt", "name": "x"}, "a"),
    ],
)
def test_complete_bad_arguments(ref: Any, argument: Any) -> None:
    core, driver = setup({"s": FakeServer()})
    with pytest.raises(ValueError):
        driver.run(core.complete(ref, argument))
    assert driver.calls == []


def test_complete_needs_the_capability() -> None:
    core, driver = setup({"s": FakeServer(caps={"prompts": {}})})
    with pytest.raises(CapabilityError):
        driver.run(core.complete({"type": "ref/prompt", "name": "x"}, {"name": "a"}))
    assert driver.calls == []


def test_complete_routes_prompt_refs_to_the_prompt_owner() -> None:
    done = {"completion": {"values": ["v"]}}
    core, driver = setup(
        {
            "a": FakeServer(
                script={"prompts/list": {"prompts": [{"name": "pa"}]}, "completion/complete": done}
            ),
            "b": FakeServer(
                script={"prompts/list": {"prompts": [{"name": "pb"}]}, "completion/complete": done}
            ),
        }
    )
    driver.run(core.complete({"type": "ref/prompt", "name": "pb"}, {"name": "x"}))
    assert driver.calls[-1].server == "b"
    with pytest.raises(PromptNotFound):
        driver.run(core.complete({"type": "ref/prompt", "name": "zz"}, {"name": "x"}))


# ---------------------------------------------------------------- prompts


def test_get_prompt_hoists_meta_and_stringifies() -> None:
    prompts = {"prompts": [{"name": "p", "arguments": [{"name": "n", "required": True}]}]}
    answer = {"messages": []}
    core, driver = setup({"s": FakeServer(script={"prompts/list": prompts, "prompts/get": answer})})
    with pytest.raises(ValidationError):
        driver.run(core.get_prompt("p", {"other": 1}))
    assert driver.run(core.get_prompt("p", {"n": 5, "o": {"k": 1}, "_meta": {"t": 1}})) == answer
    assert driver.calls[-1].params == {
        "name": "p",
        "arguments": {"n": "5", "o": '{"k": 1}'},
        "_meta": {"t": 1},
    }
    driver.servers["s"].script["prompts/get"] = TransportError("down")
    with pytest.raises(PromptGetError):
        driver.run(core.get_prompt("p", {"n": "x"}))
    driver.servers["s"].script["prompts/get"] = {"messages": None}
    with pytest.raises(RemoteProtocolError):
        driver.run(core.get_prompt("p", {"n": "x"}))


# ---------------------------------------------------------------- read_resource


CONTENTS = {"contents": [{"uri": "file:///a.txt", "text": "hello", "mimeType": "text/plain"}]}


def resources(*uris: str) -> dict[str, Any]:
    return {"resources": [{"uri": u, "name": u} for u in uris]}


def test_read_resource_single_server() -> None:
    core, driver = setup({"s": FakeServer(script={"resources/read": CONTENTS})})
    (content,) = driver.run(core.read_resource("file:///a.txt"))
    assert content == ResourceContent(uri="file:///a.txt", mime_type="text/plain", text="hello")
    assert driver.methods() == ["resources/read"]  # one server: no listing needed
    assert driver.calls[0].params == {"uri": "file:///a.txt"}


def test_read_resource_routed_by_listing() -> None:
    core, driver = setup(
        {
            "a": FakeServer(script={"resources/list": resources("file:///x")}),
            "b": FakeServer(
                script={"resources/list": resources("file:///a.txt"), "resources/read": CONTENTS}
            ),
        }
    )
    driver.run(core.read_resource("file:///a.txt"))
    assert driver.calls[-1].server == "b"
    driver.run(core.read_resource("file:///x", server="b"))
    assert driver.calls[-1].server == "b"


def test_read_resource_ambiguous() -> None:
    core, driver = setup(
        {
            "a": FakeServer(script={"resources/list": resources("file:///same")}),
            "b": FakeServer(script={"resources/list": resources("file:///same")}),
        }
    )
    with pytest.raises(AmbiguousResourceURI):
        driver.run(core.read_resource("file:///same"))
    assert "resources/read" not in driver.methods()


def test_read_resource_template_uri_goes_to_the_only_capable_server() -> None:
    core, driver = setup(
        {
            "a": FakeServer(caps={"tools": {}}),
            "b": FakeServer(script={"resources/list": resources(), "resources/read": CONTENTS}),
        }
    )
    driver.run(core.read_resource("file:///templated/1"))
    assert driver.calls[-1].server == "b" and driver.calls[-1].method == "resources/read"


def test_read_resource_unknown_uri_with_several_capable_servers() -> None:
    core, driver = setup(
        {
            "a": FakeServer(script={"resources/list": resources()}),
            "b": FakeServer(script={"resources/list": resources()}),
        }
    )
    with pytest.raises(ResourceNotFound):
        driver.run(core.read_resource("file:///nowhere"))


@pytest.mark.parametrize("code", [-32002, -32602])
def test_read_resource_not_found_code(code: int) -> None:
    err = ServerError("Resource not found", code=code, data={"uri": "file:///a.txt"})
    core, driver = setup({"s": FakeServer(script={"resources/read": err})})
    with pytest.raises(ResourceNotFound) as info:
        driver.run(core.read_resource("file:///a.txt"))
    assert isinstance(info.value, LookupError) and isinstance(info.value, ResourceReadError)
    assert info.value.__cause__ is err


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (ServerError("internal", code=-32603), ServerError),
        (TransportError("down"), ResourceReadError),
        (ConnectionError("refused"), ResourceReadError),
        (RequestTimeoutError("slow"), RequestTimeoutError),
        (CapabilityError("no resources"), CapabilityError),
    ],
)
def test_read_resource_errors(raised: MCPError, expected: type[MCPError]) -> None:
    core, driver = setup({"s": FakeServer(script={"resources/read": raised})})
    with pytest.raises(expected):
        driver.run(core.read_resource("file:///a.txt"))


@pytest.mark.parametrize(
    "answer",
    [
        None,
        {},
        {"contents": None},
        {"contents": [{"uri": "file:///a"}]},  # neither text nor blob
        {"contents": [{"uri": "file:///a", "text": "x", "blob": "eA=="}]},
        {"contents": ["x"]},
    ],
)
def test_read_resource_malformed(answer: Any) -> None:
    core, driver = setup({"s": FakeServer(script={"resources/read": lambda p: answer})})
    with pytest.raises(ResourceReadError):
        driver.run(core.read_resource("file:///a"))


def test_read_resource_gated_by_capability() -> None:
    core, driver = setup({"s": FakeServer(caps={"tools": {}})})
    with pytest.raises(CapabilityError):
        driver.run(core.read_resource("file:///a"))
    assert driver.calls == []


def test_subscribe_needs_capability() -> None:
    core, driver = setup(
        {"s": FakeServer(caps={"resources": {}}, script={"resources/subscribe": {}})}
    )
    with pytest.raises(CapabilityError):
        driver.run(core.subscribe_resource("file:///a"))
    assert driver.calls == []
    core, driver = setup({"s": FakeServer(script={"resources/subscribe": {}})})
    assert driver.run(core.subscribe_resource("file:///a")) is True
    driver.servers["s"].script["resources/unsubscribe"] = RequestTimeoutError("slow")
    with pytest.raises(ResourceReadError):
        driver.run(core.unsubscribe_resource("file:///a"))


# ---------------------------------------------------------------- the rest


def test_capabilities_follow_handlers() -> None:
    core, _ = setup({"s": FakeServer()}, handlers=Handlers(elicitation=lambda: None))
    # CAP-4: roots only once the host registered them (issue 8, item 5).
    assert core.capabilities == {"elicitation": {"form": {}, "url": {}}}
    core.set_initial_roots([])
    assert core.capabilities == {
        "roots": {"listChanged": True},
        "elicitation": {"form": {}, "url": {}},
    }


def test_set_roots_notifies_connected_servers_only() -> None:
    core, driver = two_servers()
    driver.run(core.set_roots([{"uri": "file:///work"}, Root("file:///tmp", name="tmp")]))
    assert core.roots == (Root("file:///work"), Root("file:///tmp", name="tmp"))
    assert core.roots_snapshot() == core.roots
    assert [(n.server, n.method, n.only_if_connected) for n in driver.notifies] == [
        ("alpha", "notifications/roots/list_changed", True),
        ("beta", "notifications/roots/list_changed", True),
    ]
    driver.notify_error = TransportError("gone")
    driver.run(core.set_roots([]))  # failures to notify are logged, never raised
    assert [log.level for log in driver.logs] == ["WARNING", "WARNING"]
    with pytest.raises(ValidationError):
        driver.run(core.set_roots([{"uri": "http://not-a-file"}]))


def test_ping_send_rpc_send_notification() -> None:
    core, driver = setup({"s": FakeServer(script={"ping": {}, "x/echo": lambda p: p})})
    assert driver.run(core.ping()) == {}
    driver.servers["s"].script["ping"] = "pong"
    assert driver.run(core.ping()) == {}
    assert driver.run(core.send_rpc("x/echo", {"a": 1}, timeout=1.0)) == {"a": 1}
    assert driver.calls[-1].timeout == 1.0
    driver.run(core.send_notification("notifications/x", {"b": 2}))
    assert driver.notifies[-1] == Notify("s", "notifications/x", {"b": 2})


def test_sch17_a_list_changed_mid_call_leaves_the_definition_it_was_sent_under() -> None:
    """SCH-17: while ``tools/call`` is in flight the server announces list_changed and
    the host re-lists (a new outputSchema is cached before the result arrives); the
    result is checked against the definition the request was sent under."""
    wants_n = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    wants_m = {"type": "object", "properties": {"m": {"type": "string"}}, "required": ["m"]}
    answer = {"content": [], "structuredContent": {"n": 1}}
    core, driver = setup(
        {
            "s": FakeServer(
                script={
                    "tools/list": {"tools": [tool("t", outputSchema=wants_n)]},
                    "tools/call": answer,
                }
            )
        },
        validate_structured_content="strict",
    )
    driver.run(core.list_tools())

    def mid_call(call: Call) -> None:
        if call.method == "tools/call":
            driver.on_call = None
            core.handle_notification("s", "notifications/tools/list_changed", {})
            driver.servers["s"].script["tools/list"] = {"tools": [tool("t", outputSchema=wants_m)]}
            (fresh,) = driver.run(core.list_tools())  # the host's re-list, mid-call
            assert fresh.output_schema == wants_m

    driver.on_call = mid_call
    result = driver.run(core.call_tool("t"))
    assert result.structured_content == {"n": 1}
    assert [t.output_schema for t in core.tool_cache] == [wants_m]
    # Sent under the new definition, the same answer is refused: the check is real.
    with pytest.raises(ValidationError):
        driver.run(core.call_tool("t"))
