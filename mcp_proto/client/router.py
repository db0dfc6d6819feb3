"""The router of :class:`~mcp_proto.client.ClientCore`: the configured servers, the
``server=`` selector, which server owns a name, and the list caches with their
invalidation (TOOL-16, PROMPT-4, RES-14).

The feature modules (:mod:`.tools`, :mod:`.prompts`, :mod:`.resources`,
:mod:`.utilities`) build their operations on what this class holds; it sends nothing
but the ``*/list`` requests that fill the caches.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, Union

import attrs

from .. import deprecations
from ..effects import Call, CallHost, Connect, Log, Op, SetHeader
from ..errors import (
    AmbiguousPromptName,
    AmbiguousToolName,
    CapabilityError,
    InsufficientScopeError,
    MCPError,
    PromptNotFound,
    RequestTimeoutError,
    ResponseTooLargeError,
    ServerNotFound,
    ToolNotFound,
    UnauthorizedError,
    UnknownResultTypeError,
    ValidationError,
)
from ..handlers import Handlers, client_capabilities
from ..limits import Limits
from ..modern.discover import DISCOVER, parse_discover_result
from ..modern.meta import Extensions, HostMeta, check_extensions
from ..pagination import list_all
from ..server_config import ServerConfig
from ..session import ServerInfo
from ..types import Implementation, Prompt, Resource, Root, Tool
from . import era

if TYPE_CHECKING:
    # The 2026-07-28 modules load when a server speaks that revision (or a host asks
    # for its cache state), not with the client: ``import mcp_io_sync`` stays light.
    from ..modern.cache import CacheInfo, CacheKind, ResultCache
    from ..modern.mrtr import InputRequiredWait


__all__ = [
    "AUTHORIZATION",
    "DEFAULT_CLIENT_INFO",
    "PASS_THROUGH",
    "NamedServer",
    "Router",
    "ServerEntry",
    "ServerSelector",
]

#: The header that carries a server's credential: the one this client sends, and the
#: one a private 2026-07-28 cached result is bound to (CACHE-6). HTTP header names are
#: matched without case (RFC 9110 § 5.1).
AUTHORIZATION: Final = "Authorization"


class NamedServer(Protocol):
    """A server object (``client.servers[i]``, ``find_server(...)``): its ``name``."""

    @property
    def name(self) -> str: ...


#: A ``server=`` argument (CONN-23): a name (case-insensitive), an index, a transport
#: type (``"stdio"``: the first such server) or a server object.
ServerSelector = Union[str, int, NamedServer]

DEFAULT_CLIENT_INFO: Final = Implementation(name="mcp-proto", version="0.1.0")

# Which cache a list_changed notification drops (TOOL-16, PROMPT-4, RES-14).
_INVALIDATES: Final[dict[str, str]] = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}

# The result cache's kind of each router list.
_CACHE_KIND: Final[dict[str, CacheKind]] = {
    "tools": "tools",
    "prompts": "prompts",
    "resources": "resources",
}


# Failures a call/get/read re-raises as they are instead of wrapping them in
# ToolCallError & co.: their class already says what happened (a timeout, a too-large
# response, a refused capability or authorization).
def _authorization_failure(exc: BaseException) -> bool:
    """A refusal of our credentials, or an OAuth error raised while answering one."""
    return isinstance(exc, UnauthorizedError) or isinstance(exc.__cause__, UnauthorizedError)


PASS_THROUGH: Final = (
    RequestTimeoutError,
    ResponseTooLargeError,
    CapabilityError,
    InsufficientScopeError,
    UnknownResultTypeError,  # the server answered, with a resultType we cannot read
)


@attrs.frozen
class ServerEntry:
    """A configured server as the core sees it: its name and transport type.

    ``authorization`` is the ``Authorization`` header configured for it (the only
    credential the client sends today): a private cached result of a 2026-07-28 server
    is bound to its SHA-256 (CACHE-6). ``read_timeout`` bounds an ``input_required``
    wait when the call gives no timeout (MRTR-7). ``request_meta`` and ``extensions``
    are the server's own (§E3, laid over the client's by the connection): its cached
    results are keyed on them too (CACHE-7)."""

    name: str
    type: str
    authorization: str | None = attrs.field(default=None, repr=False)
    read_timeout: float | None = None
    request_meta: HostMeta = attrs.field(default=None, repr=False)
    extensions: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    #: Headers computed per request by a ``configure_http`` hook (CUST-1): what a
    #: request carries is unknown before it is sent, so nothing is reused (CACHE-9).
    request_headers: bool = False

    @classmethod
    def from_config(cls, name: str, config: ServerConfig) -> ServerEntry:
        """The entry of a configured server named ``name``."""
        authorization = None
        for key, value in config.headers.items():
            if key.lower() == AUTHORIZATION.lower():
                authorization = value
        return cls(
            name,
            config.type,
            authorization=authorization,
            read_timeout=config.read_timeout,
            request_meta=config.request_meta,
            extensions=config.extensions,
        )


class Router:
    """The servers of a client, how a ``server=`` selector resolves, and the caches.

    Not thread-safe by itself: the sync shell serialises cache updates under a lock
    where it needs to; the operations only touch the caches between effects.
    """

    def __init__(
        self,
        servers: Sequence[ServerEntry],
        *,
        handlers: Handlers,
        client_info: Implementation | None = None,
        validate_structured_content: Literal["warn", "strict"] = "warn",
        limits: Limits | None = None,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], Any] | None = None,
        on_input_required_wait: Callable[[InputRequiredWait], Any] | None = None,
        on_deprecated: Callable[[str], Any] | None = None,
        on_synthetic_notification: Callable[[str, str, dict[str, Any]], Any] | None = None,
        request_meta: HostMeta = None,
        extensions: Extensions = (),
    ) -> None:
        if validate_structured_content not in ("warn", "strict"):
            raise ValueError(
                "validate_structured_content must be 'warn' or 'strict', "
                f"not {validate_structured_content!r}"
            )
        names = [s.name for s in servers]
        if len({n.lower() for n in names}) != len(names):
            raise ValueError(f"server names must be unique (case-insensitively): {names}")
        self.servers: tuple[ServerEntry, ...] = tuple(servers)
        # DEP-2..4, DEP-16: notices go to the shell's logger through on_deprecated;
        # the handlers announce what a served request uses (sampling, roots answers).
        self.on_deprecated = on_deprecated
        if on_deprecated is not None and handlers.on_deprecated is None:
            handlers = attrs.evolve(handlers, on_deprecated=on_deprecated)
        self.handlers = handlers
        # The shell's monotonic clock and sleep (the core has neither): the result
        # cache's "now" (CACHE-2) and the input_required waits (MRTR-4) use them.
        self.clock = clock
        self.sleep = sleep
        self.on_input_required_wait = on_input_required_wait
        # HDR-5: where a notification the client emits itself goes after bookkeeping and
        # cache invalidation: the shell hands it to listeners and host callbacks.
        self.on_synthetic_notification = on_synthetic_notification
        # LIFE-12/LIFE-13: validated here, carried by each connection onto every
        # 2026-07-28 request (the driver hands them to the machine).
        self._request_meta: HostMeta = None
        # server -> the level set_log_level gave a 2026-07-28 server (carried as _meta
        # by its connection, LIFE-15; part of the cache key, CACHE-7).
        self.log_levels: dict[str, str] = {}
        #: The level the last ``set_log_level`` for every server set (LOG-1:
        #: ``client.log_level``); ``None`` until one did.
        self.log_level: str | None = None
        self.extensions = check_extensions(extensions)
        if handlers.sampling is not None:
            self._deprecated("sampling")  # DEP-3: registering the handler uses it
        # The servers whose cached lists were fetched on a 2026-07-28 connection (their
        # freshness is the result cache's ttlMs, CACHE-2). A fact about the lists, kept
        # and dropped with them: the era itself is the connection's, and reaches an
        # operation through the outcome of its Connect (ServerInfo.protocol_era).
        self._modern_lists: set[str] = set()
        # CACHE-1..14: one result cache per server, used for 2026-07-28 servers only
        # (the handshake era keeps the list caches below, TOOL-16).
        self._result_caches: dict[str, ResultCache] = {}
        self.client_info = client_info or DEFAULT_CLIENT_INFO
        self.validate_structured_content = validate_structured_content
        self.limits = limits or Limits()
        self._roots: tuple[Root, ...] = ()
        # Whether the host registered roots (``roots=`` or ``set_roots``): only then is
        # the ``roots`` capability declared (CAP-4). Declared without, it makes servers
        # ask ``roots/list`` after every handshake, for an empty list (issue 8, item 5).
        self._roots_registered = False
        self._tools: dict[str, list[Tool]] = {}
        self._prompts: dict[str, list[Prompt]] = {}
        self._resources: dict[str, list[Resource]] = {}
        self._stores: dict[str, dict[str, list[Any]]] = {
            "tools": self._tools,
            "prompts": self._prompts,
            "resources": self._resources,
        }
        # Bumped by list_changed so that a list fetched while a change was announced is
        # not stored over the invalidation (it may already be stale).
        self._generation: dict[tuple[str, str], int] = {}
        # (server, kind) -> (the cached list it indexes, name -> items): see _by_name.
        self._name_index: dict[tuple[str, str], tuple[list[Any], dict[str, list[Any]]]] = {}
        # kind -> name -> the items so named in every server's cached list, in server
        # order (routing without server=, on every call): built once all are cached,
        # dropped with _name_index whenever one of them changes.
        self._flat_index: dict[str, dict[str, list[Any]]] = {}
        # subscribe_resource on 2026-07-28 servers: (server, uri) -> its listen
        # subscription (the shell's handle), RES-9..12.
        self._resource_subs: dict[tuple[str, str], Any] = {}
        self.request_meta = request_meta  # validated and copied by the setter

    # ------------------------------------------------------------------ config

    @property
    def request_meta(self) -> HostMeta:
        """The host's ``request_meta`` (LIFE-12): a mapping (copied when set) or a
        callable evaluated per request by the connection."""
        return self._request_meta

    @request_meta.setter
    def request_meta(self, value: HostMeta) -> None:
        if value is not None and not callable(value):
            if not isinstance(value, Mapping):
                raise ValueError("request_meta must be a mapping or a callable returning one")
            value = dict(value)
        self._request_meta = value
        if not callable(value) and deprecations.features_in_meta(value):
            self._deprecated("logging")  # DEP-4: a logLevel in request_meta
        # CACHE-7: the parsed lists were read under the old _meta: list again.
        self._drop_modern_lists()

    def _drop_modern_lists(self, only: str | None = None) -> None:
        for name in list(self._modern_lists):
            if only in (None, name):
                for kind in ("tools", "prompts", "resources"):
                    self._store(kind).pop(name, None)
                    self._name_index.pop((name, kind), None)
                    self._flat_index.pop(kind, None)

    @property
    def capabilities(self) -> dict[str, Any]:
        """What the next handshake declares (each connection asks anew)."""
        return client_capabilities(self.handlers, roots=self._roots_registered)

    @property
    def roots(self) -> tuple[Root, ...]:
        return self._roots

    def roots_snapshot(self) -> tuple[Root, ...]:
        """For the ``roots/list`` handler (ROOT-4)."""
        return self._roots

    @property
    def tool_cache(self) -> list[Tool]:
        return [t for s in self.servers for t in self._tools.get(s.name, ())]

    @property
    def prompt_cache(self) -> list[Prompt]:
        return [p for s in self.servers for p in self._prompts.get(s.name, ())]

    @property
    def resource_cache(self) -> list[Resource]:
        return [r for s in self.servers for r in self._resources.get(s.name, ())]

    def select_server(self, selector: Any) -> str:
        """Resolve a ``server=`` selector (CONN-23): a name (case-insensitive), an
        index, a transport type (``'stdio'``: the first such server), or an object with
        a ``name``. Unknown → ``ServerNotFound``; a bad type → ``TypeError``."""
        if isinstance(selector, bool):
            raise TypeError("server= must be a name, an index or a server object")
        if isinstance(selector, int):
            if -len(self.servers) <= selector < len(self.servers):
                return self.servers[selector].name
            raise ServerNotFound(f"no server at index {selector}")
        if not isinstance(selector, str):
            name = getattr(selector, "name", None)
            if not isinstance(name, str):
                raise TypeError("server= must be a name, an index or a server object")
            selector = name
        lowered = selector.lower()
        for s in self.servers:
            if s.name.lower() == lowered:
                return s.name
        for s in self.servers:
            if s.type == lowered:
                return s.name
        raise ServerNotFound(f"no server named {selector!r}")

    def replace_type(self, name: str, transport_type: str) -> None:
        """A server's transport changed (``connect``'s fallback chain)."""
        self.servers = tuple(
            attrs.evolve(s, type=transport_type) if s.name == name else s for s in self.servers
        )
        self.server_disconnected(name)

    def rotate_authorization(
        self, authorization: str | None, *, server: ServerSelector | None = None
    ) -> Op[None]:
        """``client.set_authorization``: the connection's ``Authorization`` header is
        replaced (``SetHeader``; the connection refuses a stdio server or CR/LF), then
        the cache follows the new credential (CACHE-6)."""
        if server is None and len(self.servers) > 1:
            raise ValueError("set_authorization() needs server= when the client has several")
        name = self._default_server(server)
        yield SetHeader(name, AUTHORIZATION, authorization)
        self.set_authorization(name, authorization)

    def http_configured(
        self, name: str, headers: Mapping[str, str], request_headers: object
    ) -> None:
        """What ``name``'s ``configure_http`` hook left (CUST-1): the ``Authorization``
        it sends (CACHE-6) and whether headers are computed per request (CACHE-9)."""
        authorization = None
        for key, value in headers.items():
            if key.lower() == AUTHORIZATION.lower():
                authorization = value
        self.servers = tuple(
            attrs.evolve(
                s, authorization=authorization, request_headers=request_headers is not None
            )
            if s.name == name
            else s
            for s in self.servers
        )

    def set_authorization(self, name: str, authorization: str | None) -> None:
        """The ``Authorization`` value now sent to ``name`` (a rotated token): private
        cached results of the old one stop answering (CACHE-6)."""
        self.servers = tuple(
            attrs.evolve(s, authorization=authorization) if s.name == name else s
            for s in self.servers
        )
        # The parsed lists were read from entries bound to the old value: drop them,
        # so the next listing asks the cache again with the new one.
        self._drop_modern_lists(name)

    def _servers_for(self, server: ServerSelector | None) -> list[str]:
        if server is None:
            return [s.name for s in self.servers]
        return [self.select_server(server)]

    def _default_server(self, server: ServerSelector | None) -> str:
        if server is not None:
            return self.select_server(server)
        if not self.servers:
            raise ServerNotFound("the client has no servers")
        return self.servers[0].name

    # ------------------------------------------------------------------ notifications

    def clear_cache(self) -> None:
        for kind in ("tools", "prompts", "resources"):
            for s in self.servers:
                self._invalidate(s.name, kind)

    def _invalidate(self, server: str, kind: str) -> None:
        key = (server, kind)
        self._generation[key] = self._generation.get(key, 0) + 1
        self._store(kind).pop(server, None)
        self._name_index.pop(key, None)
        self._flat_index.pop(kind, None)

    def _store(self, kind: str) -> dict[str, list[Any]]:
        return self._stores[kind]

    def handle_notification(self, server: str, method: str, params: Mapping[str, Any]) -> None:
        """Bookkeeping for a server notification; the shell calls it *before* any host
        callback, so a callback reacting to ``list_changed`` always refetches (NOTIF-4)."""
        kind = _INVALIDATES.get(method)
        if kind is not None:
            self._invalidate(server, kind)
        # NOTIF-3: bookkeeping (above), then cache invalidation, regardless of the
        # remaining TTL (CACHE-14), before the shell runs listeners and callbacks.
        cache = self._result_caches.get(server)
        if cache is not None:
            cache.invalidate_for(method, params)
        if method == "notifications/message":
            self._deprecated("logging")  # DEP-4: a server log message received

    def synthetic_notification(
        self, server: str, method: str, params: dict[str, Any] | None = None
    ) -> None:
        """A notification the client emits itself as if ``server`` had sent it (HDR-5:
        the ``tools/list`` refresh after a -32020 is a synthetic
        ``notifications/tools/list_changed``), routed like a received one (NOTIF-3):
        bookkeeping and cache invalidation here, then ``on_synthetic_notification``,
        through which the shell queues it for the listeners and host callbacks."""
        body: dict[str, Any] = dict(params or {})
        self.handle_notification(server, method, body)
        hook = self.on_synthetic_notification
        if hook is not None:
            hook(server, method, body)

    def server_disconnected(self, server: str) -> None:
        """A server's connection ended: what it listed may change on reconnect. The
        2026-07-28 result cache stays: its entries carry their own freshness, and a
        stale one may still stand in after a transient failure (CACHE-3)."""
        for kind in ("tools", "prompts", "resources"):
            self._invalidate(server, kind)
        self._modern_lists.discard(server)  # a reconnection may meet the other era (LIFE-18)

    # ------------------------------------------------------------------ 2026-07-28

    def _deprecated(self, key: str) -> None:
        """Announce a deprecated feature once per process (DEP-2..4); never raises,
        never blocks (DEP-12, DEP-15). Without a logger the notice stays due."""
        emit = self.on_deprecated
        if emit is not None:
            deprecations.announce(key, emit)

    def _connect(self, server: str) -> Op[ServerInfo]:
        """``Connect``: the server's info, whose ``protocol_era`` (the connection's,
        LIFE-4) the operations branch on (caching, input_required, header filtering)."""
        info: ServerInfo = yield Connect(server)
        return info

    def _judged(self, server: str) -> Op[ServerInfo]:
        """``Connect``, for a capability judgement: what the server offers, with its
        ``server/discover`` result re-fetched first when its ``ttlMs`` has run out
        (LIFE-20, CACHE-13, CAP-6; absent, zero, negative or malformed ``ttlMs`` is
        stale at once).

        Reading of the rule (spec server/utilities/caching.mdx § Time-to-Live: "the
        client checks freshness when it needs the data, and re-fetches only if
        stale"): the data is needed where the client itself decides something from the
        capabilities — whether to list (an undeclared list is empty, CAP-3), whether to
        refuse ``complete``, ``set_log_level``, ``subscribe_resource`` — and where the
        session refuses a request for a capability it believes missing (see
        :func:`~mcp_proto.client.era.request`). A request sent anyway (``tools/call`` on
        a server declaring ``tools``) is judged by the server itself, so it does not
        need the data: re-discovering before each one would double the cost of every
        call against a server answering ``ttlMs: 0``. Without a clock (a core built
        without ``clock=``) freshness cannot be judged and nothing is re-fetched."""
        info = yield from self._connect(server)
        if info.received_at is None:
            return info  # the handshake era: the capabilities hold for the session
        now = yield from self._now()
        if now is None or not info.discover_stale(now):
            return info
        return (yield from self.rediscover(server))

    def rediscover(self, server: str) -> Op[ServerInfo]:
        """Re-fetch a 2026-07-28 server's ``server/discover`` result (LIFE-20): the
        connection takes its capabilities, identity and ``ttlMs`` (the client's and
        the session's judgements follow them) and the result cache records it for
        ``cache_info("discover")`` (CACHE-10). A malformed answer is a typed error."""
        result = yield Call(server, DISCOVER, None)
        parse_discover_result(result)  # RemoteProtocolError when it is not one
        received = yield from self._now()
        if received is not None:
            entry = self._entry(server)
            self.result_cache(server).store(
                DISCOVER, None, result, now=received, authorization=entry.authorization
            )
        return (yield from self._connect(server))

    def _entry(self, server: str) -> ServerEntry:
        for s in self.servers:
            if s.name == server:
                return s
        raise ServerNotFound(f"no server named {server!r}")

    def result_cache(self, server: str) -> ResultCache:
        """``server``'s 2026-07-28 result cache (created on first use)."""
        cache = self._result_caches.get(server)
        if cache is None:
            from ..modern.cache import ResultCache

            cache = self._result_caches[server] = ResultCache()
        return cache

    def cache_info_at(
        self, server: str, kind: CacheKind, uri: str | None, now: float
    ) -> CacheInfo | None:
        """``server.cache_info(kind, uri)`` at ``now`` (the shell's clock), CACHE-10."""
        cache = self._result_caches.get(server)
        if cache is None:
            from ..modern.cache import ResultCache

            ResultCache().cache_info(kind, uri, now=now)  # the same argument checks
            return None
        return cache.cache_info(kind, uri, now=now)

    def _now(self) -> Op[float | None]:
        if self.clock is None:
            return None
        now: float = yield CallHost(self.clock)
        return now

    # ------------------------------------------------------------------ lists and routing

    def _cached_list(self, server: str, kind: str) -> Op[list[Any] | None]:
        """The parsed list kept for ``server`` when it may be used as is: always in the
        handshake era (until list_changed, TOOL-16); for a 2026-07-28 server only while
        its first page's result is fresh (CACHE-2), since ``ttlMs`` governs there."""
        items = self._store(kind).get(server)
        if items is None or server not in self._modern_lists:
            return items
        now = yield from self._now()
        if now is None or not self.result_cache(server).fresh(_CACHE_KIND[kind], now):
            return None
        return items

    def _list_one(self, server: str, kind: str, cache: bool) -> Op[list[Any]]:
        store = self._store(kind)
        if cache:
            known = yield from self._cached_list(server, kind)
            if known is not None:
                return known
        generation = self._generation.get((server, kind), 0)
        info: ServerInfo = yield from self._judged(server)
        modern = info.protocol_era == "modern"
        capability = "resources" if kind == "resources" else kind
        if not info.has_capability(capability):
            items: list[Any] = []
        else:
            method = f"{kind}/list"
            raw: list[Any]
            if modern:
                raw = yield from era.modern_list_all(self, server, method, kind, use_cached=cache)
                if kind == "tools":
                    # HDR-3: over Streamable HTTP a tool whose x-mcp-header annotations
                    # break the rules is left out, with a warning naming it.
                    from ..modern.headers import filter_tools

                    raw, problems = filter_tools(raw, http=self._entry(server).type != "stdio")
                    for problem in problems:
                        yield Log("WARNING", f"server {server!r}: {problem}")
            else:
                raw = yield from list_all(server, method, kind, max_pages=self.limits.max_pages)
            parse: Callable[..., Any] = {
                "tools": Tool.from_dict,
                "prompts": Prompt.from_dict,
                "resources": Resource.from_dict,
            }[kind]
            items = []
            for entry in raw:
                try:
                    items.append(parse(entry, server=server))
                except (ValidationError, ValueError, TypeError) as exc:
                    yield Log(
                        "WARNING", f"server {server!r}: skipping a malformed {kind} entry: {exc}"
                    )
        if self._generation.get((server, kind), 0) == generation:
            store[server] = items
            self._flat_index.pop(kind, None)
            if modern:
                self._modern_lists.add(server)
        return items

    def _list_across(self, kind: str, cache: bool, server: ServerSelector | None) -> Op[list[Any]]:
        out: list[Any] = []
        errors: list[MCPError] = []
        for name in self._servers_for(server):
            try:
                out.extend((yield from self._list_one(name, kind, cache)))
            except MCPError as exc:
                # TOOL-1, AUTH-31: an authorization failure (a 401/403, or the OAuth
                # flow that answered one, chained to it) fails fast: a shorter list
                # would read as "no such tools" when the truth is "not authorized".
                if server is not None or _authorization_failure(exc):
                    raise
                errors.append(exc)
                yield Log("WARNING", f"listing {kind} of server {name!r} failed: {exc}")
        if not out and errors:
            # TOOL-1: nothing from any server → the first failure is the answer.
            raise errors[0]
        return out

    def _by_name(self, server: str, kind: str, items: list[Any]) -> dict[str, list[Any]]:
        """``items`` (a server's cached list) indexed by name, kept until the cached list
        is replaced: resolving a name on a server with hundreds of tools is then one dict
        lookup per call instead of a scan."""
        known = self._name_index.get((server, kind))
        if known is not None and known[0] is items:
            return known[1]
        index: dict[str, list[Any]] = {}
        for item in items:
            index.setdefault(item.name, []).append(item)
        self._name_index[(server, kind)] = (items, index)
        return index

    def _cached_matches(
        self, kind: str, name: str, server: ServerSelector | None
    ) -> Sequence[Any] | None:
        """The items named ``name`` in the cached lists of ``server`` (``None``: every
        server), or ``None`` if a list is not cached yet (not to be changed: shared
        with the indexes). A plain function, not an op: a call whose name is found here
        (the usual case) costs no generator for :meth:`_resolve`, and without
        ``server=`` one dict lookup (:attr:`_flat_index`).

        Routing a name uses the last list whatever its ttlMs (a modern server's list
        may be "stale at once"): a list_changed drops it, a miss refetches it in
        :meth:`_resolve`, and a stale definition is what -32020 recovers from (HDR-5).
        list_tools() honours the TTL."""
        if server is None:
            flat = self._flat_index.get(kind)
            if flat is None:
                flat = self._flat_now(kind)
                if flat is None:
                    return None
            return flat.get(name, ())
        n = self.select_server(server)
        listed = self._stores[kind].get(n)
        if listed is None:
            return None
        return self._by_name(n, kind, listed).get(name, ())

    def _flat_now(self, kind: str) -> dict[str, list[Any]] | None:
        """Every server's name index of ``kind`` in one (kept in :attr:`_flat_index`
        until a list changes), or ``None`` while a list is not cached."""
        store = self._stores[kind]
        flat: dict[str, list[Any]] = {}
        for entry in self.servers:
            listed = store.get(entry.name)
            if listed is None:
                return None
            for item_name, items in self._by_name(entry.name, kind, listed).items():
                flat.setdefault(item_name, []).extend(items)
        self._flat_index[kind] = flat
        return flat

    def _resolve(self, kind: str, name: str, server: ServerSelector | None) -> Op[Any]:
        matches = self._cached_matches(kind, name, server)
        if matches is None:  # a list is not cached yet: fetch
            items = yield from self._list_across(kind, True, server)
            matches = [i for i in items if i.name == name]
        if not matches:
            # The cache may predate the item: refetch once before giving up.
            items = yield from self._list_across(kind, False, server)
            matches = [i for i in items if i.name == name]
        if not matches:
            raise {"tools": ToolNotFound, "prompts": PromptNotFound}[kind](
                f"no {kind[:-1]} named {name!r}"
                + (f" on server {self.select_server(server)!r}" if server is not None else "")
            )
        if len(matches) > 1 and len({m.server for m in matches}) > 1:
            owners = ", ".join(repr(m.server) for m in matches)
            raise {"tools": AmbiguousToolName, "prompts": AmbiguousPromptName}[kind](
                f"{kind[:-1]} {name!r} is offered by servers {owners}: pass server="
            )
        return matches[0]
