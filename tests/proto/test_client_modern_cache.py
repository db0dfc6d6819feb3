"""The client core's result cache on 2026-07-28 servers (CACHE-1..14, NOTIF-3).

Time is the driver's number; every request a test sends validates against the
2026-07-28 schema (see ``_client_modern``).
"""

from __future__ import annotations

from typing import Any

import pytest
from _client_modern import MODERN, OK, Peer, make, tool
from _proto_support import drive

from mcp_proto.errors import ServerError, TransientServerError, ValidationError
from mcp_proto.modern.cache import CacheInfo


def tools_page(*names: str, ttl: Any = 60_000, scope: str = "public", **extra: Any) -> Any:
    page: dict[str, Any] = {"tools": [tool(n) for n in names], "cacheScope": scope, **extra}
    if ttl is not None:
        page["ttlMs"] = ttl
    return page


def test_a_fresh_list_is_served_without_a_request_until_its_ttl_ends() -> None:
    core, d = make({"a": Peer(script={"tools/list": tools_page("t", ttl=5_000)})})
    assert [t.name for t in drive(core.list_tools(), d.perform)] == ["t"]
    d.now += 4.9
    drive(core.list_tools(), d.perform)
    assert len(d.sent("tools/list")) == 1  # CACHE-2: fresh, no request
    d.now += 0.2
    drive(core.list_tools(), d.perform)
    assert len(d.sent("tools/list")) == 2  # past ttlMs: refetched


@pytest.mark.parametrize("ttl", [None, -5, "60000", 1.5, 0])
def test_a_missing_negative_or_malformed_ttl_is_immediately_stale(ttl: Any) -> None:
    core, d = make({"a": Peer(script={"tools/list": tools_page("t", ttl=ttl)})})
    drive(core.list_tools(), d.perform)
    drive(core.list_tools(), d.perform)
    assert len(d.sent("tools/list")) == 2  # CACHE-5: treated as ttlMs 0
    info = drive(core.cache_info("tools"), d.perform)["a"]
    assert isinstance(info, CacheInfo) and info.ttl_ms == 0 and not info.fresh


def test_list_changed_invalidates_whatever_the_ttl_says() -> None:
    core, d = make({"a": Peer(script={"tools/list": tools_page("t", ttl=3_600_000)})})
    drive(core.list_tools(), d.perform)
    core.handle_notification("a", "notifications/tools/list_changed", {})
    drive(core.list_tools(), d.perform)
    assert len(d.sent("tools/list")) == 2  # CACHE-14
    drive(core.list_tools(), d.perform)
    assert len(d.sent("tools/list")) == 2  # the refetched list is fresh again


def test_a_list_changed_during_the_fetch_leaves_the_page_stale() -> None:
    core, d = make({"a": Peer(script={"tools/list": tools_page("t", ttl=3_600_000)})})
    d.on_call = lambda call: core.handle_notification("a", "notifications/tools/list_changed", {})
    drive(core.list_tools(), d.perform)
    d.on_call = None
    drive(core.list_tools(), d.perform)
    assert len(d.sent("tools/list")) == 2


def test_a_private_entry_answers_only_the_authorization_it_was_fetched_with() -> None:
    page = tools_page("t", scope="private")
    core, d = make({"a": Peer(script={"tools/list": page})}, auth={"a": "Bearer one"})
    drive(core.list_tools(), d.perform)
    drive(core.list_tools(), d.perform)
    assert len(d.sent("tools/list")) == 1
    core.set_authorization("a", "Bearer two")  # a rotated token (CACHE-6)
    drive(core.list_tools(), d.perform)
    assert len(d.sent("tools/list")) == 2
    assert "Bearer" not in repr(core.servers)  # the credential is never shown


def test_a_public_entry_survives_a_rotated_token() -> None:
    core, d = make({"a": Peer(script={"tools/list": tools_page("t")})}, auth={"a": "Bearer one"})
    drive(core.list_tools(), d.perform)
    core.set_authorization("a", "Bearer two")
    drive(core.list_tools(), d.perform)
    assert len(d.sent("tools/list")) == 1


def test_stale_is_served_only_after_a_transient_http_failure() -> None:
    failure = TransientServerError("503", code=503, method="tools/list")
    core, d = make({"a": Peer(script={"tools/list": [tools_page("t", ttl=1_000), failure]})})
    drive(core.list_tools(), d.perform)
    d.now += 5
    tools = drive(core.list_tools(cache=True), d.perform)
    assert [t.name for t in tools] == ["t"]  # CACHE-3: the stale list stands in
    assert any("past its freshness" in log.message for log in d.logs)


def test_stale_is_not_served_over_stdio_nor_after_a_server_answer() -> None:
    failure = TransientServerError("503", code=503, method="tools/list")
    core, d = make(
        {"a": Peer(script={"tools/list": [tools_page("t", ttl=1_000), failure]})},
        types={"a": "stdio"},
    )
    drive(core.list_tools(), d.perform)
    d.now += 5
    with pytest.raises(TransientServerError):
        drive(core.list_tools(server="a"), d.perform)
    refused = ServerError("no", code=-32603, method="tools/list")
    core, d = make({"b": Peer(script={"tools/list": [tools_page("t", ttl=1_000), refused]})})
    drive(core.list_tools(), d.perform)
    d.now += 5
    with pytest.raises(ServerError):
        drive(core.list_tools(server="b"), d.perform)


def test_a_rejected_cursor_restarts_the_listing_once() -> None:
    bad_cursor = ServerError("Invalid params", code=-32602, method="tools/list")
    pages = {None: [tools_page("a", nextCursor="c1")], "c1": [bad_cursor, tools_page("b")]}

    def answer(params: Any) -> Any:
        queue = pages[(params or {}).get("cursor")]
        value = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(value, BaseException):
            raise value
        return value

    core, d = make({"s": Peer(script={"tools/list": answer})})
    tools = drive(core.list_tools(), d.perform)
    assert [t.name for t in tools] == ["a", "b"]
    cursors = [(c.params or {}).get("cursor") for c in d.sent("tools/list")]
    # CACHE-12: the first page is fetched again (its cached copy was dropped).
    assert cursors == [None, "c1", None, "c1"]
    assert any("cursor rejected" in log.message for log in d.logs)


def test_a_rejected_cursor_twice_raises() -> None:
    bad_cursor = ServerError("Invalid params", code=-32602, method="tools/list")

    def answer(params: Any) -> Any:
        if (params or {}).get("cursor"):
            raise bad_cursor
        return tools_page("a", nextCursor="c1")

    core, d = make({"s": Peer(script={"tools/list": answer})})
    with pytest.raises(ServerError):
        drive(core.list_tools(server="s"), d.perform)
    assert len(d.sent("tools/list")) == 4


def test_an_explicit_cursor_page_that_is_rejected_raises() -> None:
    bad_cursor = ServerError("Invalid params", code=-32602, method="resources/list")
    core, d = make({"s": Peer(script={"resources/list": bad_cursor})})
    with pytest.raises(ServerError):
        drive(core.list_resources(cursor="old", server="s"), d.perform)
    assert len(d.sent("resources/list")) == 1


def test_reads_are_cached_per_uri_only_with_a_positive_ttl() -> None:
    def read(params: Any) -> Any:
        uri = params["uri"]
        out: dict[str, Any] = {"contents": [{"uri": uri, "text": uri}]}
        if uri.endswith("cached"):
            out.update(ttlMs=60_000, cacheScope="public")
        return out

    core, d = make({"s": Peer(script={"resources/read": read})})
    for _ in range(2):
        drive(core.read_resource("mem://cached"), d.perform)
        drive(core.read_resource("mem://other-cached"), d.perform)
        drive(core.read_resource("mem://plain"), d.perform)
    uris = [c.params["uri"] for c in d.sent("resources/read") if c.params]
    assert uris == ["mem://cached", "mem://other-cached", "mem://plain", "mem://plain"]
    info = drive(core.cache_info("read", "mem://cached"), d.perform)["s"]
    assert info == CacheInfo(60_000, "public", 100.0, True)
    core.handle_notification("s", "notifications/resources/updated", {"uri": "mem://cached"})
    drive(core.read_resource("mem://cached"), d.perform)
    assert len(d.sent("resources/read")) == 5


def test_templates_are_cached_only_with_a_ttl() -> None:
    page = {"resourceTemplates": [{"uriTemplate": "x://{a}", "name": "x"}]}
    core, d = make({"s": Peer(script={"resources/templates/list": page})})
    drive(core.list_resource_templates(), d.perform)
    drive(core.list_resource_templates(), d.perform)
    assert len(d.sent("resources/templates/list")) == 2  # CACHE-11
    core, d = make({"s": Peer(script={"resources/templates/list": {**page, "ttlMs": 10_000}})})
    drive(core.list_resource_templates(), d.perform)
    drive(core.list_resource_templates(), d.perform)
    assert len(d.sent("resources/templates/list")) == 1


def test_cache_info_per_server_and_for_handshake_era_servers() -> None:
    core, d = make(
        {
            "new": Peer(script={"prompts/list": {"prompts": [], "ttlMs": 2_000}}),
            "old": Peer(version="2025-11-25", script={"prompts/list": {"prompts": []}}),
        }
    )
    drive(core.list_prompts(), d.perform)
    drive(core.list_prompts(), d.perform)
    assert [c.server for c in d.sent("prompts/list")] == ["new", "old"]  # legacy: TOOL-16
    infos = drive(core.cache_info("prompts"), d.perform)
    assert infos == {"new": CacheInfo(2_000, "private", 100.0, True), "old": None}
    d.now += 2
    assert drive(core.cache_info("prompts", server="new"), d.perform)["new"].fresh is False
    with pytest.raises(ValueError):
        drive(core.cache_info("bogus"), d.perform)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        drive(core.cache_info("read"), d.perform)


def test_tools_call_is_never_cached() -> None:
    core, d = make(
        {"s": Peer(script={"tools/list": tools_page("t"), "tools/call": {**OK, "ttlMs": 9}})}
    )
    drive(core.call_tool("t", {}), d.perform)
    drive(core.call_tool("t", {}), d.perform)
    assert len(d.sent("tools/call")) == 2
    assert d.peers["s"].version == MODERN


def test_changing_request_meta_or_the_log_level_refetches() -> None:
    core, d = make({"s": Peer(script={"tools/list": tools_page("t")})}, request_meta={"a": 1})
    drive(core.list_tools(), d.perform)
    drive(core.list_tools(), d.perform)
    assert len(d.sent("tools/list")) == 1
    core.request_meta = {"a": 2}  # CACHE-7: another _meta, another entry
    drive(core.list_tools(), d.perform)
    assert len(d.sent("tools/list")) == 2
    core.request_meta = {"a": 1}  # the first entry is still fresh
    drive(core.list_tools(), d.perform)
    assert len(d.sent("tools/list")) == 2
    drive(core.set_log_level("debug"), d.perform)
    drive(core.list_tools(), d.perform)
    assert len(d.sent("tools/list")) == 3


def test_a_call_after_request_meta_changed_routes_by_a_new_list() -> None:
    """CACHE-7: the parsed lists were read under the old ``_meta`` and are dropped, so
    routing a call without ``server=`` lists again rather than use them."""
    core, d = make(
        {"s": Peer(script={"tools/list": tools_page("t"), "tools/call": OK})},
        request_meta={"a": 1},
    )
    drive(core.call_tool("t", {}), d.perform)
    drive(core.call_tool("t", {}), d.perform)
    assert len(d.sent("tools/list")) == 1
    core.request_meta = {"a": 2}
    drive(core.call_tool("t", {}), d.perform)
    assert len(d.sent("tools/list")) == 2
    assert len(d.sent("tools/call")) == 3


def test_a_request_meta_callable_disables_reuse() -> None:
    core, d = make(
        {"s": Peer(script={"tools/list": tools_page("t")})}, request_meta=lambda: {"n": 1}
    )
    for _ in range(3):
        drive(core.list_tools(), d.perform)
    assert len(d.sent("tools/list")) == 3  # CACHE-9: the _meta is unknown in advance


def test_a_server_objects_cache_info_reads_its_clients_core() -> None:
    from mcp_proto.server_view import ServerView

    core, d = make({"s": Peer(script={"tools/list": tools_page("t", ttl=1_000)})})
    drive(core.list_tools(), d.perform)
    view = ServerView()
    assert view.cache_info("tools") is None  # not owned by a client: nothing cached
    with pytest.raises(ValueError):
        view.cache_info("read")
    view._cache_info = lambda kind, uri: core.cache_info_at("s", kind, uri, d.now)
    assert view.cache_info("tools") == CacheInfo(1_000, "public", 100.0, True)
    assert view.cache_info("prompts") is None


def test_routing_a_call_uses_the_known_list_whatever_its_ttl() -> None:
    core, d = make({"s": Peer(script={"tools/list": tools_page("t", ttl=0), "tools/call": OK})})
    for _ in range(3):
        drive(core.call_tool("t", {}), d.perform)
    assert len(d.sent("tools/list")) == 1  # no list per call
    drive(core.list_tools(), d.perform)
    assert len(d.sent("tools/list")) == 2  # list_tools() itself honours ttlMs 0
    core.handle_notification("s", "notifications/tools/list_changed", {})
    drive(core.call_tool("t", {}), d.perform)
    assert len(d.sent("tools/list")) == 3


def test_a_list_refetched_past_its_ttl_is_the_one_calls_route_by() -> None:
    """A stale list refetched by list_tools() replaces the one routing reads (no
    list_changed in between): a tool the new list requires an argument of is called
    with the new definition (TOOL-5 refuses the call without it)."""
    core, d = make({"s": Peer(script={"tools/list": tools_page("t", ttl=1_000), "tools/call": OK})})
    drive(core.call_tool("t", {}), d.perform)
    drive(core.call_tool("t", {}), d.perform)  # (routed by the known list)
    d.now += 2
    required = {"type": "object", "properties": {"n": {}}, "required": ["n"]}
    d.peers["s"].script["tools/list"] = {
        "tools": [tool("t", inputSchema=required)],
        "ttlMs": 1_000,
        "cacheScope": "public",
    }
    drive(core.list_tools(), d.perform)
    assert len(d.sent("tools/list")) == 2
    with pytest.raises(ValidationError, match="n"):
        drive(core.call_tool("t", {}), d.perform)
    drive(core.call_tool("t", {"n": 1}), d.perform)
