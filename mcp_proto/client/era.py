"""The 2026-07-28 side of the client's requests, shared by the feature modules.

- :func:`cached_call` / :func:`modern_list_all`: cacheable requests (every ``*/list``
  page, ``resources/read``) through the server's
  :class:`~mcp_proto.modern.cache.ResultCache` (CACHE-1..14);
- :func:`request`: ``tools/call``, ``resources/read`` and ``prompts/get`` with their
  ``input_required`` rounds (MRTR-1..9), and :func:`resume_input_required`.

Each takes the :class:`~mcp_proto.client.router.Router` it works for; a server of the
handshake era gets exactly the requests it got before (one plain ``Call``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from ..effects import Call, Connect, Log, Op, ProgressCallback
from ..errors import CapabilityError, InputRequiredError, LocalProtocolError, MCPError
from ..modern.meta import (
    CLIENT_CAPABILITIES,
    LOG_LEVEL,
    merge_extensions,
    modern_capabilities,
    result_type,
)
from ..pagination import list_all
from ._intercept import intercept

if TYPE_CHECKING:
    from ..session import ServerInfo
    from .router import Router, ServerSelector

__all__ = [
    "cached_call",
    "key_params",
    "modern_list_all",
    "refused",
    "request",
    "resume_input_required",
    "rounds",
    "run_rounds",
]

#: The router's list kinds a cacheable method fills (their list_changed generation).
_KINDS_OF_METHOD: dict[str, tuple[str, ...]] = {
    "tools/list": ("tools",),
    "prompts/list": ("prompts",),
    "resources/list": ("resources",),
    "resources/templates/list": ("resources",),
}


def _one(effect: Call) -> Op[Any]:
    return (yield effect)


def _no_clock(*_: Any) -> Any:
    raise LocalProtocolError(
        "this client core was built without clock= and sleep=: it cannot pace an"
        " input_required wait"
    )


def cached_call(
    core: Router,
    server: str,
    method: str,
    params: dict[str, Any] | None,
    timeout: float | None = None,
    *,
    use_cached: bool = True,
    progress: ProgressCallback | None = None,
) -> Op[Any]:
    """A cacheable request to a 2026-07-28 server through its result cache.

    A fresh entry answers without a request (CACHE-2); the key is the method and
    every param, ``_meta`` included (CACHE-7); private entries are bound to the
    SHA-256 of the ``Authorization`` configured for the server (CACHE-6). A failed
    refetch is answered from a stale entry only when :func:`may_serve_stale` says
    the failure is a transient HTTP one (CACHE-3). Without a clock (a core built
    without one) nothing is cached; nor with a ``request_meta`` callable: the client
    cannot know the ``_meta`` a request will carry before it is built, nor with headers
    computed per request by a ``configure_http`` hook (CACHE-9, CUST-3)."""
    from ..modern.cache import KIND_OF_METHOD, may_serve_stale

    now = yield from core._now()
    entry = core._entry(server)
    if (
        now is None
        or callable(core.request_meta)
        or callable(entry.request_meta)
        or entry.request_headers  # CUST-3: headers computed per request (configure_http)
    ):
        return (yield Call(server, method, params, timeout, progress))
    cache = core.result_cache(server)
    auth = entry.authorization
    key = key_params(core, server, params)
    if use_cached:
        hit = cache.lookup(method, key, now=now, authorization=auth)
        if hit is not None:
            return hit
    kinds = _KINDS_OF_METHOD.get(method, ())
    generations = [core._generation.get((server, k), 0) for k in kinds]
    try:
        result = yield Call(server, method, params, timeout, progress)
    except MCPError as exc:
        stale = (
            cache.stale(method, key, authorization=auth)
            if may_serve_stale(exc, entry.type)
            else None
        )
        if stale is None:
            raise
        yield Log(
            "WARNING",
            f"{method} on {server!r} failed ({type(exc).__name__}); serving the"
            " cached result past its freshness",
        )
        return stale
    received = yield from core._now()
    cache.store(method, key, result, now=now if received is None else received, authorization=auth)
    if generations != [core._generation.get((server, k), 0) for k in kinds]:
        # A list_changed arrived while this page was in flight: the page may
        # already be out of date, so it is kept (for cache_info) but not fresh.
        cache.invalidate(KIND_OF_METHOD[method])
    return result


def key_params(core: Router, server: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """The params a cache entry is keyed on: the request's own plus the ``_meta`` the
    connection adds to it — the host's ``request_meta`` (a mapping), the log level
    and the client capabilities with ``extensions`` (CACHE-7: public entries are
    shared between callers, never between params). The protocol version and client
    info are the same for every request of a client and server, so left out."""
    meta: dict[str, Any] = {}
    level = core.log_levels.get(server)
    if level is not None:
        meta[LOG_LEVEL] = level
    if isinstance(core.request_meta, Mapping):
        meta.update(core.request_meta)
    entry = core._entry(server)
    if isinstance(entry.request_meta, Mapping):
        meta.update(entry.request_meta)  # the server's own, laid over the client's
    out = dict(params or {})
    own = out.get("_meta")
    if isinstance(own, Mapping):
        meta.update(own)
    extensions = core.extensions
    if entry.extensions:
        extensions = merge_extensions(extensions, entry.extensions)
    meta[CLIENT_CAPABILITIES] = modern_capabilities(core.capabilities, extensions)
    out["_meta"] = meta
    return out


def request(
    core: Router,
    server: str,
    method: str,
    params: dict[str, Any],
    timeout: float | None = None,
    progress: ProgressCallback | None = None,
    *,
    tool: Any = None,
    info: ServerInfo | None = None,
) -> Op[Any]:
    """Send a request that a 2026-07-28 server may answer with ``input_required``
    (``tools/call``, ``resources/read``, ``prompts/get``) and see its rounds through
    (MRTR-1..9): answered with the handlers the host registered, at most 10 rounds,
    out-of-band waits steered by ``on_input_required_wait`` and bounded by the
    call's timeout (else the server's read timeout, MRTR-7). ``resources/read`` goes
    through the result cache (retries carrying state never do, CACHE-7).

    A failure is an :class:`~mcp_proto.modern.mrtr.InputRequiredFailure` whose
    ``server`` names the server, for ``resume_input_required``. In the handshake
    era this is one plain ``Call``. ``info``: the server's info from a ``Connect``
    the caller already made (else one is made here: its era decides)."""
    if info is None:
        info = yield Connect(server)  # the connection's era decides how the request goes
    assert info is not None
    if info.protocol_era != "modern":
        return (yield Call(server, method, params, timeout, progress))
    kinds = _CACHED_METHODS or _cached_methods()

    # The first request goes out directly: a complete result (the usual answer) costs
    # no more than in the handshake era. Its resultType is checked here, the one rule
    # (LIFE-19: absent is complete, an unknown one is UnknownResultTypeError).
    first: Any
    try:
        # Inline (not through _first): no extra generator on every modern call.
        if method in kinds:
            first = yield from cached_call(core, server, method, params, timeout, progress=progress)
        else:
            first = yield Call(server, method, params, timeout, progress, tool)
    except CapabilityError as exc:
        first = yield from refused(core, exc, server, method, params, timeout, progress, tool)
    if result_type(first, method=method) == "complete":
        return first
    return (yield from rounds(core, server, method, params, first, timeout, progress, tool))


def refused(
    core: Router,
    error: CapabilityError,
    server: str,
    method: str,
    params: dict[str, Any],
    timeout: float | None,
    progress: ProgressCallback | None,
    tool: Any,
) -> Op[Any]:
    """LIFE-20: a 2026-07-28 session refused ``method`` for a capability the server's
    discover result did not declare (``error``). Once that result is stale it is
    re-fetched and the request sent again (a capability the server gained since); a
    fresh one judges: ``error`` is raised."""
    info = yield Connect(server)
    now = yield from core._now()
    if now is None or not info.discover_stale(now):
        raise error
    yield from core.rediscover(server)
    return (yield from _first(core, server, method, params, timeout, progress, tool))


def rounds(
    core: Router,
    server: str,
    method: str,
    params: dict[str, Any],
    first: Any,
    timeout: float | None,
    progress: ProgressCallback | None,
    tool: Any,
) -> Op[Any]:
    """A 2026-07-28 request whose ``first`` result is not ``complete``: its
    ``input_required`` rounds (MRTR-1..9), as :func:`request` describes. ``first``
    is checked here too (LIFE-19: an unknown resultType is
    ``UnknownResultTypeError``)."""
    if result_type(first, method=method) == "complete":
        return first
    from ..modern.mrtr import input_required_op
    from .streaming import hook

    entry = core._entry(server)
    op = input_required_op(
        server,
        method,
        params,
        first_result=first,
        handlers=core.handlers,
        clock=core.clock or _no_clock,
        sleep=core.sleep or _no_clock,
        timeout=timeout,
        wait_limit=timeout if timeout is not None else entry.read_timeout,
        capabilities=core.capabilities,
        on_wait=core.on_input_required_wait,
        on_input=hook(progress, "on_input"),
    )
    return (yield from run_rounds(core, server, op, progress, tool))


#: The methods whose results go through the result cache (``modern.cache``, loaded
#: with the revision's first request, then kept here: no import statement per call).
_CACHED_METHODS: Collection[str] = ()


def _cached_methods() -> Collection[str]:
    global _CACHED_METHODS
    from ..modern.cache import KIND_OF_METHOD

    _CACHED_METHODS = KIND_OF_METHOD
    return KIND_OF_METHOD


def _first(
    core: Router,
    server: str,
    method: str,
    params: dict[str, Any],
    timeout: float | None,
    progress: ProgressCallback | None,
    tool: Any,
) -> Op[Any]:
    if method in (_CACHED_METHODS or _cached_methods()):
        return (yield from cached_call(core, server, method, params, timeout, progress=progress))
    return (yield Call(server, method, params, timeout, progress, tool))


def run_rounds(
    core: Router, server: str, op: Op[Any], progress: ProgressCallback | None, tool: Any
) -> Op[Any]:
    from ..modern.cache import KIND_OF_METHOD

    def route(effect: Any) -> Op[Any] | None:
        if not isinstance(effect, Call):
            return None
        if effect.method in KIND_OF_METHOD:
            return cached_call(
                core,
                effect.server,
                effect.method,
                effect.params,
                effect.timeout,
                progress=progress,
            )
        return _one(
            Call(effect.server, effect.method, effect.params, effect.timeout, progress, tool)
        )

    try:
        return (yield from intercept(op, route))
    except InputRequiredError as exc:
        exc.server = server  # type: ignore[attr-defined]  # for resume_input_required
        raise


def resume_input_required(
    core: Router,
    error: InputRequiredError,
    *,
    server: ServerSelector | None = None,
    timeout: float | None = None,
) -> Op[Any]:
    """Continue an interrupted ``input_required`` exchange (MRTR-6) with a fresh
    round budget: the input requests not answered yet are answered, the ones
    already answered are kept (MRTR-8), and the request is retried with the
    server's ``requestState``. ``server`` defaults to the one that failed."""
    from ..modern.mrtr import resume_op

    if not isinstance(error, InputRequiredError):
        raise TypeError("resume_input_required needs the InputRequiredError raised")
    if not error.resumable:
        raise ValueError("this InputRequiredError is not resumable")
    if server is None:
        server = getattr(error, "server", None)
    name = core.select_server(server if server is not None else 0)
    yield from core._connect(name)
    entry = core._entry(name)
    op = resume_op(
        name,
        error,
        handlers=core.handlers,
        clock=core.clock or _no_clock,
        sleep=core.sleep or _no_clock,
        timeout=timeout,
        wait_limit=timeout if timeout is not None else entry.read_timeout,
        capabilities=core.capabilities,
        on_wait=core.on_input_required_wait,
    )
    method = error.request_method
    params = error.request_params if isinstance(error.request_params, Mapping) else {}
    tool: Any = None
    if method == "tools/call" and isinstance(params.get("name"), str):
        tools = core._store("tools").get(name) or ()
        tool = next((t for t in tools if t.name == params["name"]), None)
    return (yield from run_rounds(core, name, op, None, tool))


def modern_list_all(
    core: Router, server: str, method: str, key: str, *, use_cached: bool = True
) -> Op[list[Any]]:
    """Every page of a 2026-07-28 list, each page through the result cache. A
    rejected cursor (-32602 on a page that carried one) drops the list's pages and
    restarts the listing from the first page, once (CACHE-12)."""
    cache = core.result_cache(server)
    sent: list[dict[str, Any] | None] = [None]
    for attempt in (1, 2):
        fresh = use_cached and attempt == 1

        def route(effect: Any, fresh: bool = fresh) -> Op[Any] | None:
            if not isinstance(effect, Call):
                return None
            sent[0] = effect.params
            return cached_call(
                core, effect.server, effect.method, effect.params, effect.timeout, use_cached=fresh
            )

        pages = list_all(server, method, key, max_pages=core.limits.max_pages)
        try:
            return (yield from intercept(pages, route))
        except MCPError as exc:
            if attempt == 2 or not cache.cursor_rejected(method, sent[0], exc):
                raise
            yield Log("WARNING", f"{method} on {server!r}: cursor rejected; listing again")
    raise AssertionError("unreachable")  # pragma: no cover
