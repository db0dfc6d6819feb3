"""The 2026-07-28 result cache (CACHE-1..8, 10..14, LIFE-20) with an injected clock."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto import errors
from mcp_proto.modern.cache import (
    CACHEABLE_METHODS,
    CacheInfo,
    Hints,
    ResultCache,
    authorization_digest,
    cache_key,
    is_cursor_rejection,
    kinds_invalidated_by,
    may_serve_stale,
    parse_hints,
)

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
TOKEN = b"Bearer one"


def tools(ttl: Any = 60_000, scope: Any = "public", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"resultType": "complete", "tools": [{"name": "echo"}], **extra}
    if ttl is not None:
        out["ttlMs"] = ttl
    if scope is not None:
        out["cacheScope"] = scope
    return out


def store(cache: ResultCache, method: str, params: Any, res: Any, now: float = 0.0) -> bool:
    return cache.store(method, params, res, now=now, authorization=TOKEN)


def look(cache: ResultCache, method: str, params: Any, now: float, auth: Any = TOKEN) -> Any:
    return cache.lookup(method, params, now=now, authorization=auth)


def test_every_cacheable_method_of_the_spec_is_covered() -> None:
    # Spec: Caching § Cacheable Results lists exactly these six (CACHE-1).
    assert {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    } == CACHEABLE_METHODS


@pytest.mark.parametrize(
    ("result", "hints"),
    [
        ({"ttlMs": 5000, "cacheScope": "public"}, Hints(5000, "public")),
        ({"ttlMs": 0, "cacheScope": "private"}, Hints(0, "private")),
        ({}, Hints(0, "private")),  # absent ttlMs ⇒ 0, absent scope ⇒ private (CACHE-5)
        ({"ttlMs": -5, "cacheScope": "public"}, Hints(0, "public")),  # negative ⇒ 0
        ({"ttlMs": "5000"}, Hints(0, "private")),  # a string is malformed ⇒ 0
        ({"ttlMs": 5.5}, Hints(0, "private")),  # not an integer
        ({"ttlMs": True}, Hints(0, "private")),  # bool is not a number here
        ({"ttlMs": 10, "cacheScope": "shared"}, Hints(10, "private")),  # unknown scope
        ({"ttlMs": 10, "cacheScope": ["public"]}, Hints(10, "private")),
        ("not an object", Hints(0, "private")),
    ],
)
def test_hints_defaults(result: Any, hints: Hints) -> None:
    assert parse_hints(result) == hints


def test_fresh_until_ttl_counted_from_receipt_then_refetch() -> None:
    # CACHE-2: ttlMs counts from receipt; fresh while now < received + ttl.
    cache = ResultCache()
    params = {"_meta": META}
    assert store(cache, "tools/list", params, tools(ttl=1500), now=100.0)
    assert look(cache, "tools/list", params, 100.0) == tools(ttl=1500)
    assert look(cache, "tools/list", params, 101.499) is not None
    assert look(cache, "tools/list", params, 101.5) is None  # stale: refetch on access
    info = cache.cache_info("tools", now=101.0)
    assert info == CacheInfo(ttl_ms=1500, cache_scope="public", received_at=100.0, fresh=True)
    assert cache.cache_info("tools", now=102.0) == CacheInfo(1500, "public", 100.0, False)


def test_zero_or_absent_ttl_is_immediately_stale_but_recorded() -> None:
    cache = ResultCache()
    assert store(cache, "tools/list", None, tools(ttl=None, scope=None), now=5.0)
    assert look(cache, "tools/list", None, 5.0) is None
    assert cache.cache_info("tools", now=5.0) == CacheInfo(0, "private", 5.0, False)


def test_discover_freshness_decides_a_refetch_before_judging_capabilities() -> None:
    # LIFE-20 / CACHE-13: the same rule as every other cached result.
    cache = ResultCache()
    assert not cache.fresh("discover", 0.0)  # nothing yet: must discover
    store(cache, "server/discover", None, {"capabilities": {}, "ttlMs": 2000}, now=0.0)
    assert cache.fresh("discover", 1.9)
    assert not cache.fresh("discover", 2.0)
    store(cache, "server/discover", None, {"capabilities": {}, "ttlMs": -1}, now=3.0)
    assert not cache.fresh("discover", 3.0)  # negative ⇒ immediately stale


def test_params_including_meta_are_part_of_the_key() -> None:
    # CACHE-7: a public entry is shared between callers, never between params.
    cache = ResultCache()
    store(cache, "tools/list", {"_meta": {**META, "baggage": "a"}}, tools())
    assert look(cache, "tools/list", {"_meta": {**META, "baggage": "a"}}, 1.0) is not None
    assert look(cache, "tools/list", {"_meta": {**META, "baggage": "b"}}, 1.0) is None
    assert look(cache, "tools/list", {"_meta": META, "cursor": "p2"}, 1.0) is None
    assert look(cache, "prompts/list", {"_meta": {**META, "baggage": "a"}}, 1.0) is None


def test_key_is_a_snapshot_of_the_params_as_sent() -> None:
    # CACHE-8: mutating the host's metadata object afterwards changes nothing cached.
    cache = ResultCache()
    meta: dict[str, Any] = {"tenant": "a"}
    params = {"_meta": meta}
    store(cache, "tools/list", params, tools())
    meta["tenant"] = "b"
    assert look(cache, "tools/list", {"_meta": {"tenant": "b"}}, 1.0) is None
    assert look(cache, "tools/list", {"_meta": {"tenant": "a"}}, 1.0) is not None


def test_key_ignores_key_order() -> None:
    assert cache_key("tools/list", {"a": 1, "b": {"c": 2, "d": 3}}) == cache_key(
        "tools/list", {"b": {"d": 3, "c": 2}, "a": 1}
    )


def test_private_entry_bound_to_the_authorization_actually_sent() -> None:
    # CACHE-6: a rotated, revoked or absent token never reads a private entry.
    cache = ResultCache()
    cache.store("tools/list", None, tools(scope="private"), now=0.0, authorization=TOKEN)
    assert look(cache, "tools/list", None, 1.0, auth=TOKEN) is not None
    assert look(cache, "tools/list", None, 1.0, auth="Bearer one") is not None  # same bytes
    assert look(cache, "tools/list", None, 1.0, auth=b"Bearer two") is None  # rotated
    assert look(cache, "tools/list", None, 1.0, auth=None) is None  # anonymous
    assert cache.stale("tools/list", None, authorization=b"Bearer two") is None
    # A public entry is shared across authorization contexts.
    cache.store("prompts/list", None, {"prompts": [], "ttlMs": 9000, "cacheScope": "public"},
                now=0.0, authorization=TOKEN)  # fmt: skip
    assert look(cache, "prompts/list", None, 1.0, auth=None) is not None


def test_anonymous_private_entry_is_not_served_to_a_token() -> None:
    cache = ResultCache()
    cache.store("tools/list", None, tools(scope="private"), now=0.0, authorization=None)
    assert look(cache, "tools/list", None, 1.0, auth=None) is not None
    assert look(cache, "tools/list", None, 1.0, auth=TOKEN) is None


def test_only_the_digest_of_the_credential_is_kept() -> None:
    assert authorization_digest(b"Bearer s3cret") == hashlib.sha256(b"Bearer s3cret").hexdigest()
    assert authorization_digest(None) is None
    cache = ResultCache()
    cache.store("tools/list", None, tools(scope="private"), now=0.0, authorization=b"Bearer s3cret")
    assert "s3cret" not in repr(cache._entries)


def test_resources_read_kept_only_with_a_positive_ttl() -> None:
    # CACHE-4.
    cache = ResultCache()
    uri = {"uri": "file:///a"}
    read = {"contents": [{"uri": "file:///a", "text": "x"}], "cacheScope": "public"}
    assert not store(cache, "resources/read", uri, {**read, "ttlMs": 0})
    assert not store(cache, "resources/read", uri, read)
    assert cache.cache_info("read", "file:///a", now=0.0) is None
    assert store(cache, "resources/read", uri, {**read, "ttlMs": 1000})
    assert look(cache, "resources/read", uri, 0.5) is not None
    assert cache.cache_info("read", "file:///a", now=0.5) == CacheInfo(1000, "public", 0.0, True)
    # A later answer without a positive ttl removes the old entry.
    assert not store(cache, "resources/read", uri, {**read, "ttlMs": 0}, now=0.6)
    assert look(cache, "resources/read", uri, 0.7) is None


def test_template_list_without_hint_never_cached() -> None:
    # CACHE-11: re-fetched on every call unless a positive ttlMs was given.
    cache = ResultCache()
    page: dict[str, Any] = {"resourceTemplates": []}
    assert not store(cache, "resources/templates/list", None, page)
    assert look(cache, "resources/templates/list", None, 0.0) is None
    assert store(cache, "resources/templates/list", None, {**page, "ttlMs": 100})
    assert look(cache, "resources/templates/list", None, 0.05) is not None


def test_interim_and_retry_results_are_not_cached() -> None:
    # Spec: Caching § Cache Key — MRTR retries MUST NOT be cached; interim results carry
    # no hints.
    cache = ResultCache()
    uri = {"uri": "file:///a"}
    assert not store(cache, "resources/read", uri, {"resultType": "input_required"})
    assert not store(cache, "resources/read", {**uri, "requestState": "s"}, {"ttlMs": 1000})
    assert not store(cache, "resources/read", {**uri, "inputResponses": {}}, {"ttlMs": 1000})
    assert not store(cache, "tools/call", {"name": "x"}, {"ttlMs": 1000})
    assert not store(cache, "tools/list", None, ["not", "an", "object"])
    assert len(cache) == 0
    assert look(cache, "tools/call", {"name": "x"}, 0.0) is None


def test_list_changed_invalidates_regardless_of_ttl() -> None:
    # CACHE-14: the notification makes the entry immediately stale.
    cache = ResultCache()
    store(cache, "tools/list", None, tools(ttl=300_000))
    store(cache, "tools/list", {"cursor": "p2"}, tools(ttl=300_000))
    store(cache, "prompts/list", None, {"prompts": [], "ttlMs": 300_000})
    assert cache.invalidate_for("notifications/tools/list_changed", None) == ("tools",)
    assert look(cache, "tools/list", None, 1.0) is None
    assert look(cache, "tools/list", {"cursor": "p2"}, 1.0) is None
    assert look(cache, "prompts/list", None, 1.0) is not None
    assert cache.cache_info("tools", now=1.0) == CacheInfo(300_000, "public", 0.0, False)
    # A fresh answer after the invalidation is fresh again.
    store(cache, "tools/list", None, tools(ttl=300_000), now=2.0)
    assert look(cache, "tools/list", None, 3.0) is not None


def test_resource_list_changed_covers_templates_and_updated_drops_the_read() -> None:
    assert kinds_invalidated_by("notifications/resources/list_changed") == (
        "resources",
        "resource_templates",
    )
    assert kinds_invalidated_by("notifications/message") == ()
    cache = ResultCache()
    store(cache, "resources/read", {"uri": "file:///a"}, {"contents": [], "ttlMs": 9000})
    store(cache, "resources/read", {"uri": "file:///b"}, {"contents": [], "ttlMs": 9000})
    touched = cache.invalidate_for("notifications/resources/updated", {"uri": "file:///a"})
    assert touched == ("read",)
    assert look(cache, "resources/read", {"uri": "file:///a"}, 1.0) is None
    assert look(cache, "resources/read", {"uri": "file:///b"}, 1.0) is not None


def test_rejected_cursor_drops_that_lists_pages() -> None:
    # CACHE-12: -32602 on a request with a cursor ends the page sequence.
    cache = ResultCache()
    store(cache, "resources/list", None, {"resources": [], "nextCursor": "c", "ttlMs": 9000})
    store(cache, "resources/list", {"cursor": "c"}, {"resources": [], "ttlMs": 9000})
    store(cache, "tools/list", None, tools())
    rejected = errors.ServerError("bad cursor", code=-32602)
    assert is_cursor_rejection({"cursor": "c"}, rejected)
    assert not is_cursor_rejection(None, rejected)  # no cursor: an ordinary error
    assert not is_cursor_rejection({"cursor": "c"}, errors.ServerError("x", code=-32603))
    assert not is_cursor_rejection({"cursor": "c"}, errors.TransportError("x"))
    assert cache.drop_list("resources/list") == 2
    assert look(cache, "resources/list", None, 1.0) is None  # the next call refetches
    assert look(cache, "tools/list", None, 1.0) is not None


def test_results_are_copied_in_and_out() -> None:
    cache = ResultCache()
    res = tools()
    store(cache, "tools/list", None, res)
    res["tools"].append({"name": "injected"})
    got = look(cache, "tools/list", None, 1.0)
    assert got["tools"] == [{"name": "echo"}]
    got["tools"].clear()
    assert look(cache, "tools/list", None, 1.0)["tools"] == [{"name": "echo"}]


def test_bounded_in_entries_least_recently_used_first() -> None:
    cache = ResultCache(max_entries=3)
    for i in range(3):
        store(cache, "resources/read", {"uri": f"u{i}"}, {"contents": [], "ttlMs": 9000})
    assert look(cache, "resources/read", {"uri": "u0"}, 1.0) is not None  # u0 now recent
    store(cache, "resources/read", {"uri": "u3"}, {"contents": [], "ttlMs": 9000})
    assert len(cache) == 3
    assert look(cache, "resources/read", {"uri": "u1"}, 1.0) is None  # evicted
    assert look(cache, "resources/read", {"uri": "u0"}, 1.0) is not None
    with pytest.raises(ValueError):
        ResultCache(max_entries=0)


@given(st.lists(st.text(max_size=5), max_size=300))
def test_never_holds_more_than_its_bound(uris: list[str]) -> None:
    cache = ResultCache(max_entries=7)
    for n, uri in enumerate(uris):
        store(cache, "resources/read", {"uri": uri}, {"contents": [], "ttlMs": 1}, now=n)
        assert len(cache) <= 7


def test_cache_info_arguments() -> None:
    cache = ResultCache()
    assert cache.cache_info("prompts", now=0.0) is None
    with pytest.raises(ValueError, match="unknown cache kind"):
        cache.cache_info("bogus", now=0.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs the resource URI"):
        cache.cache_info("read", now=0.0)
    # cache_info reports the first page (no cursor), not a later page.
    store(cache, "tools/list", None, tools(ttl=100), now=1.0)
    store(cache, "tools/list", {"cursor": "p2"}, tools(ttl=999), now=2.0)
    info = cache.cache_info("tools", now=1.0)
    assert info is not None and info.ttl_ms == 100


def test_stale_entry_available_for_fallback_but_not_as_fresh() -> None:
    cache = ResultCache()
    store(cache, "tools/list", None, tools(ttl=10), now=0.0)
    assert look(cache, "tools/list", None, 5.0) is None
    assert cache.stale("tools/list", None, authorization=TOKEN) == tools(ttl=10)
    assert cache.stale("tools/call", None, authorization=TOKEN) is None


@pytest.mark.parametrize(
    ("error", "transport", "allowed"),
    [
        (errors.TransientServerError("503", code=None), "streamable_http", True),
        (errors.TransientServerError("503", code=None), "http", True),
        (errors.TransportError("connection reset"), "streamable_http", True),
        (errors.RequestTimeoutError("no answer"), "streamable_http", True),
        (errors.ConnectionError("connection refused"), "http", True),
        # stdio and SSE raise instead (CACHE-3).
        (errors.TransientServerError("503"), "stdio", False),
        (errors.TransportError("crash"), "stdio", False),
        (errors.TransientServerError("503"), "sse", False),
        # An authorization failure must reach the auth flow, never stale.
        (errors.UnauthorizedError("401", status=401), "streamable_http", False),
        (errors.UnauthorizedError("403", status=403), "streamable_http", False),
        (errors.InsufficientScopeError("403"), "streamable_http", False),
        # The server answered: not transient.
        (errors.ServerError("bad", code=-32603), "streamable_http", False),
        (errors.ResponseTooLargeError("too big"), "streamable_http", False),
        (errors.RemoteProtocolError("garbage"), "streamable_http", False),
        (errors.IncompatibleServerError("old"), "streamable_http", False),
        (ValueError("a bug"), "streamable_http", False),
    ],
)
def test_stale_policy(error: BaseException, transport: str, allowed: bool) -> None:
    assert may_serve_stale(error, transport) is allowed


def test_cursor_rejected_is_the_restart_signal() -> None:
    # CACHE-12: one call classifies the failure and drops the pages.
    cache = ResultCache()
    store(cache, "tools/list", None, tools())
    store(cache, "tools/list", {"cursor": "c"}, tools())
    rejected = errors.ServerError("bad cursor", code=-32602)
    assert not cache.cursor_rejected("tools/list", None, rejected)  # no cursor sent
    assert not cache.cursor_rejected("tools/list", {"cursor": "c"}, errors.TransportError("x"))
    assert len(cache) == 2
    assert cache.cursor_rejected("tools/list", {"cursor": "c"}, rejected)
    assert len(cache) == 0
    assert not cache.cursor_rejected("tools/call", {"cursor": "c"}, rejected)
