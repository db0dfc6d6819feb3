"""Cacheable results of the 2026-07-28 revision (``ttlMs`` / ``cacheScope``).

Spec: ``server/utilities/caching.mdx``. docs/requirements.md CACHE-1..8, 10..14, LIFE-20.

A :class:`ResultCache` holds the results of one server's cacheable requests
(``server/discover``, the four ``*/list`` methods and ``resources/read``). It is pure
bookkeeping: time is a number ``now`` (seconds, from whatever monotonic clock the shell
uses) and the shell passes the ``Authorization`` bytes it actually sent. The pipeline
asks :meth:`ResultCache.lookup` before sending, :meth:`ResultCache.store` after a
result arrives, :func:`may_serve_stale` when a refetch fails, and routes list_changed
notifications to :meth:`ResultCache.invalidate_for`.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final, Literal

import attrs

from ..errors import (
    CommandNotFoundError,
    ConnectionError,
    IncompatibleServerError,
    RemoteProtocolError,
    ResponseTooLargeError,
    ServerError,
    TransientServerError,
    TransportError,
    UnauthorizedError,
)
from ..jsonrpc import INVALID_PARAMS

__all__ = [
    "CACHEABLE_METHODS",
    "KIND_OF_METHOD",
    "CacheEntry",
    "CacheInfo",
    "CacheKind",
    "CacheScope",
    "Hints",
    "ResultCache",
    "authorization_digest",
    "cache_key",
    "is_cursor_rejection",
    "kinds_invalidated_by",
    "may_serve_stale",
    "parse_hints",
]

CacheScope = Literal["public", "private"]
CacheKind = Literal["discover", "tools", "prompts", "resources", "resource_templates", "read"]

#: The methods whose results carry caching hints (spec: Caching § Cacheable Results).
KIND_OF_METHOD: Final[Mapping[str, CacheKind]] = {
    "server/discover": "discover",
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resource_templates",
    "resources/read": "read",
}
CACHEABLE_METHODS: Final = frozenset(KIND_OF_METHOD)
_METHOD_OF_KIND: Final[Mapping[str, str]] = {k: m for m, k in KIND_OF_METHOD.items()}

#: Kinds kept only when the server gave a positive ``ttlMs``: a read result (CACHE-4) and
#: a template list, which without a hint is fetched on every call as before caching
#: existed (CACHE-11). The other kinds are kept even when immediately stale, for
#: ``cache_info`` and for serving stale after a transient failure (CACHE-3).
_ONLY_WITH_TTL: Final = frozenset({"read", "resource_templates"})

#: Notifications that make a kind immediately stale whatever its TTL (CACHE-14, NOTIF-4).
_INVALIDATED_BY: Final[Mapping[str, tuple[CacheKind, ...]]] = {
    "notifications/tools/list_changed": ("tools",),
    "notifications/prompts/list_changed": ("prompts",),
    "notifications/resources/list_changed": ("resources", "resource_templates"),
}

#: Default bound on entries per server (every page and every read URI is one entry).
DEFAULT_MAX_ENTRIES: Final = 512


@attrs.frozen
class Hints:
    """The caching hints of one result, after the spec's defaults were applied."""

    ttl_ms: int
    cache_scope: CacheScope


def parse_hints(result: Any) -> Hints:
    """The hints of a 2026-07-28 result (CACHE-5).

    ``ttlMs`` absent, negative or not an integer ⇒ 0 (immediately stale: the spec says a
    negative one is ignored and treated as 0; a string or a float is malformed peer data,
    read the same safe way); ``cacheScope`` missing or unrecognised ⇒ ``"private"`` (the
    scope that can never leak an entry to another caller).
    """
    ttl: Any = result.get("ttlMs") if isinstance(result, dict) else None
    if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0:
        ttl = 0
    scope: Any = result.get("cacheScope") if isinstance(result, dict) else None
    return Hints(ttl, "public" if scope == "public" else "private")


def cache_key(method: str, params: Mapping[str, Any] | None) -> str:
    """The identity of a request for the cache: its method and every parameter,
    ``_meta`` included (CACHE-7: "public" allows sharing between callers, not between
    params a server may vary its answer by). Canonical JSON, so key order is irrelevant.

    The key is computed from the params as sent, so mutating an object the host passed
    as request metadata afterwards cannot retarget an entry (CACHE-8)."""
    text = json.dumps(params or {}, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return f"{method}\n{text}"


def authorization_digest(authorization: bytes | str | None) -> str | None:
    """SHA-256 of the ``Authorization`` header value actually sent (CACHE-6), or None
    for a request sent without one. Only the digest is kept, never the credential."""
    if authorization is None:
        return None
    raw = authorization.encode("latin-1") if isinstance(authorization, str) else authorization
    return hashlib.sha256(raw).hexdigest()


@attrs.frozen
class CacheInfo:
    """What ``server.cache_info(kind)`` reports (CACHE-10)."""

    ttl_ms: int
    cache_scope: CacheScope
    #: The ``now`` at which the result was received (the shell's clock, in seconds).
    received_at: float
    fresh: bool


@attrs.define
class CacheEntry:
    method: str
    params: dict[str, Any]
    result: Any
    hints: Hints
    received_at: float
    #: ``authorization_digest`` of the request that produced it (private entries only).
    auth: str | None
    #: Set by a list_changed notification: stale whatever the TTL says (CACHE-14).
    invalidated: bool = False

    def fresh(self, now: float) -> bool:
        """``now < t_received + ttlMs`` (spec: Caching § Freshness Calculation)."""
        if self.invalidated:
            return False
        return now < self.received_at + self.hints.ttl_ms / 1000.0

    def serves(self, auth: str | None) -> bool:
        """Whether this entry may answer a request sent with ``auth`` (CACHE-6)."""
        return self.hints.cache_scope == "public" or self.auth == auth

    def info(self, now: float) -> CacheInfo:
        return CacheInfo(
            self.hints.ttl_ms, self.hints.cache_scope, self.received_at, self.fresh(now)
        )


def _is_mrtr_retry(params: Mapping[str, Any] | None) -> bool:
    # Spec: Caching § Cache Key: results of requests carrying inputResponses or
    # requestState MUST NOT be cached (they depend on inputs outside the key).
    return params is not None and ("inputResponses" in params or "requestState" in params)


class ResultCache:
    """One server's cached results, bounded to ``max_entries`` (least recently used
    entries go first). Results are copied in and out, so a caller mutating what it got
    cannot change what the next caller gets."""

    def __init__(self, *, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self._entries: OrderedDict[str, CacheEntry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        *,
        now: float,
        authorization: bytes | str | None,
    ) -> Any | None:
        """A copy of the fresh cached result for this exact request, else ``None``.

        ``authorization`` is the ``Authorization`` value the request would go out with:
        a private entry answers only the same one (CACHE-6)."""
        if method not in CACHEABLE_METHODS or _is_mrtr_retry(params):
            return None
        key = cache_key(method, params)
        entry = self._entries.get(key)
        if entry is None or not entry.fresh(now):
            return None
        if not entry.serves(authorization_digest(authorization)):
            return None
        self._entries.move_to_end(key)
        return copy.deepcopy(entry.result)

    def stale(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        *,
        authorization: bytes | str | None,
    ) -> Any | None:
        """A copy of the cached result for this request whatever its freshness, for
        serving stale after a transient refetch failure (CACHE-3; only when
        :func:`may_serve_stale` says so). The authorization binding still holds."""
        if method not in CACHEABLE_METHODS or _is_mrtr_retry(params):
            return None
        entry = self._entries.get(cache_key(method, params))
        if entry is None or not entry.serves(authorization_digest(authorization)):
            return None
        return copy.deepcopy(entry.result)

    def store(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        result: Any,
        *,
        now: float,
        authorization: bytes | str | None,
    ) -> bool:
        """Record a result received at ``now``. Returns whether it was kept.

        Not kept: a method that is not cacheable, a non-object or ``input_required``
        result (interim results carry no hints), an MRTR retry, and a read or template
        list without a positive ``ttlMs`` (CACHE-4, CACHE-11)."""
        kind = KIND_OF_METHOD.get(method)
        if kind is None or _is_mrtr_retry(params) or not isinstance(result, dict):
            return False
        if result.get("resultType", "complete") != "complete":
            return False
        hints = parse_hints(result)
        key = cache_key(method, params)
        if kind in _ONLY_WITH_TTL and hints.ttl_ms <= 0:
            self._entries.pop(key, None)  # an older entry must not outlive this answer
            return False
        auth = authorization_digest(authorization) if hints.cache_scope == "private" else None
        self._entries[key] = CacheEntry(
            method, copy.deepcopy(dict(params or {})), copy.deepcopy(result), hints, now, auth
        )
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        return True

    def fresh(self, kind: CacheKind, now: float, uri: str | None = None) -> bool:
        """Whether the latest entry of ``kind`` (the read of ``uri``) is fresh: e.g. the
        ``server/discover`` result before judging a capability (LIFE-20, CACHE-13)."""
        entry = self._latest(kind, uri)
        return entry is not None and entry.fresh(now)

    def cache_info(
        self, kind: CacheKind, uri: str | None = None, *, now: float
    ) -> CacheInfo | None:
        """The hints recorded for ``kind``'s first page (its latest entry without a
        cursor), or for the read of ``uri``; ``None`` when nothing is cached (CACHE-10)."""
        if kind not in _METHOD_OF_KIND:
            raise ValueError(f"unknown cache kind {kind!r} (one of {sorted(_METHOD_OF_KIND)})")
        if kind == "read" and uri is None:
            raise ValueError('cache_info("read", uri) needs the resource URI')
        entry = self._latest(kind, uri)
        return None if entry is None else entry.info(now)

    def _latest(self, kind: str, uri: str | None) -> CacheEntry | None:
        method = _METHOD_OF_KIND.get(kind)
        for entry in reversed(self._entries.values()):
            if entry.method != method:
                continue
            if kind == "read":
                if entry.params.get("uri") == uri:
                    return entry
            elif entry.params.get("cursor") is None:
                return entry
        return None

    def invalidate(self, kind: CacheKind) -> int:
        """Make every entry of ``kind`` stale regardless of its TTL (CACHE-14). The
        entries stay (for ``cache_info`` and stale serving); returns how many."""
        method = _METHOD_OF_KIND.get(kind)
        count = 0
        for entry in self._entries.values():
            if entry.method == method and not entry.invalidated:
                entry.invalidated = True
                count += 1
        return count

    def invalidate_for(self, method: str, params: Mapping[str, Any] | None) -> tuple[str, ...]:
        """Apply a notification: list_changed invalidates its list(s);
        ``notifications/resources/updated`` drops the cached read of that URI (the
        resource changed, so the entry can only mislead). Returns the kinds touched."""
        kinds = kinds_invalidated_by(method)
        for kind in kinds:
            self.invalidate(kind)
        if method == "notifications/resources/updated" and isinstance(params, dict):
            uri = params.get("uri")
            doomed = [
                k
                for k, e in self._entries.items()
                if e.method == "resources/read" and e.params.get("uri") == uri
            ]
            for key in doomed:
                del self._entries[key]
            if doomed:
                return (*kinds, "read")
        return kinds

    def drop_list(self, method: str) -> int:
        """Drop every cached page of ``method`` (a rejected cursor ended its page
        sequence: spec Caching § Interaction with Pagination, CACHE-12). Returns how
        many pages were dropped."""
        doomed = [k for k, e in self._entries.items() if e.method == method]
        for key in doomed:
            del self._entries[key]
        return len(doomed)

    def cursor_rejected(
        self, method: str, params: Mapping[str, Any] | None, error: BaseException
    ) -> bool:
        """Handle a list request's failure: when it is the server rejecting the cursor
        (:func:`is_cursor_rejection`), drop that list's cached pages and return True —
        the restart signal: an auto-paginated listing restarts once from the first
        page, an explicit ``cursor=`` call raises (CACHE-12). Otherwise False."""
        if method not in CACHEABLE_METHODS or not is_cursor_rejection(params, error):
            return False
        self.drop_list(method)
        return True

    def clear(self) -> None:
        self._entries.clear()


def kinds_invalidated_by(method: str) -> tuple[CacheKind, ...]:
    """The cache kinds a notification makes immediately stale (CACHE-14)."""
    return _INVALIDATED_BY.get(method, ())


def is_cursor_rejection(params: Mapping[str, Any] | None, error: BaseException) -> bool:
    """Whether ``error`` answering a list request with ``params`` is the server
    rejecting its cursor (-32602 on a request that carried one; B3, CACHE-12). The
    caller then drops that list's pages (:meth:`ResultCache.drop_list`) and restarts an
    auto-paginated listing once from the first page, or raises for an explicit cursor."""
    return (
        isinstance(error, ServerError)
        and error.code == INVALID_PARAMS
        and params is not None
        and params.get("cursor") is not None
    )


#: Transports over which a stale entry may stand in for a failed refetch (CACHE-3).
_STALE_TRANSPORTS: Final = frozenset({"http", "streamable_http"})


def may_serve_stale(error: BaseException, transport: str) -> bool:
    """Whether a stale entry may be served (with a warning) because its refetch failed
    with ``error`` over ``transport`` (CACHE-3; spec: "Clients MAY serve stale responses
    if errors occur during re-fetching (e.g. network issues, server downtime)").

    Only over HTTP (``"http"``, ``"streamable_http"``; stdio and SSE raise instead) and
    only for a transient failure: a 5xx, a network failure, a timeout, a refused
    connection. Never for an authorization failure (401/403 must reach the auth flow), a
    JSON-RPC error (the server answered), an oversized or protocol-breaking answer, or
    an incompatible server.
    """
    if transport not in _STALE_TRANSPORTS:
        return False
    if isinstance(error, TransientServerError):
        return True
    if isinstance(error, (ResponseTooLargeError, RemoteProtocolError)):
        return False
    if isinstance(error, TransportError):
        return True
    if isinstance(error, (UnauthorizedError, IncompatibleServerError, CommandNotFoundError)):
        return False
    return isinstance(error, ConnectionError)
