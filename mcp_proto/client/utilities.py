"""The rest of the client's operations: completion (COMP-1), logging (CAP-3), roots
(ROOT-1..ROOT-4), ping and raw requests and notifications (TIME-2)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from ..effects import Call, Connect, Log, Notify, Op, PeekEra, ProgressCallback, SetLogLevel
from ..errors import CapabilityError, InputRequiredError, MCPError
from ..results import CompletionResult
from ..session import ServerInfo
from ..types import Prompt, Root
from . import era
from .router import Router, ServerSelector

if TYPE_CHECKING:
    from ..modern.cache import CacheInfo, CacheKind

__all__ = ["LOG_LEVELS", "UtilityOps"]

#: Levels ``logging/setLevel`` accepts (2025-11-25, Server Features § Logging; RFC 5424).
LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


class UtilityOps(Router):
    """Completion, logging, roots, ping and raw RPC of :class:`~mcp_proto.client.ClientCore`."""

    def complete(
        self,
        ref: Mapping[str, object],
        argument: Mapping[str, object],
        *,
        context: Mapping[str, object] | None = None,
        server: ServerSelector | None = None,
    ) -> Op[CompletionResult]:
        """``completion/complete`` (COMP-1): a
        :class:`~mcp_proto.results.CompletionResult` (as a mapping ``{'values', 'total',
        'hasMore'}``)."""
        if not isinstance(ref, Mapping) or ref.get("type") not in ("ref/prompt", "ref/resource"):
            raise ValueError("ref must be {'type': 'ref/prompt', 'name': ...} or ref/resource")
        if not isinstance(argument, Mapping) or "name" not in argument:
            raise ValueError("argument must be {'name': ..., 'value': ...}")
        if server is None and len(self.servers) > 1 and ref.get("type") == "ref/prompt":
            prompt: Prompt = yield from self._resolve("prompts", str(ref.get("name")), None)
            owner = prompt.server or self._default_server(None)
        else:
            owner = self._default_server(server)
        info: ServerInfo = yield from self._judged(owner)
        if not info.has_capability("completions"):
            raise CapabilityError(f"server {owner!r} does not support completions")
        params: dict[str, Any] = {
            "ref": dict(ref),
            "argument": {"name": argument["name"], "value": argument.get("value", "")},
        }
        if context is not None:
            params["context"] = dict(context)
        result = yield Call(owner, "completion/complete", params)
        return CompletionResult.from_wire(result, server=owner)

    def set_log_level(self, level: str, *, server: ServerSelector | None = None) -> Op[list[str]]:
        """``logging/setLevel`` on every server with ``logging`` (skipping the others,
        CAP-3), or on one (``CapabilityError`` if it lacks it). Returns the names set."""
        if level not in LOG_LEVELS:
            raise ValueError(f"log level must be one of {', '.join(LOG_LEVELS)}")
        self._deprecated("logging")  # DEP-4: Logging is deprecated in 2026-07-28
        done = []
        for name in self._servers_for(server):
            info: ServerInfo = yield from self._judged(name)
            if not info.has_capability("logging"):
                if server is not None:
                    raise CapabilityError(f"server {name!r} does not support logging")
                continue
            if info.protocol_era == "modern":
                # LIFE-15: no logging/setLevel in 2026-07-28; the level rides as _meta
                # on every request the connection sends from now on.
                yield SetLogLevel(name, level)
                self.log_levels[name] = level
                self._drop_modern_lists(name)  # CACHE-7: the _meta changed
            else:
                yield Call(name, "logging/setLevel", {"level": level})
            done.append(name)
        if server is None:
            self.log_level = level  # LOG-1: what client.log_level reads
        return done

    def set_initial_roots(self, roots: Iterable[Root | Mapping[str, Any]]) -> None:
        """Roots given at construction (an empty list too: it registers roots, to be
        set later): nobody is connected yet, so nobody is told."""
        self._roots = tuple(Root.coerce(r) for r in roots)
        self._roots_registered = True
        if self._roots:
            self._deprecated("roots")  # DEP-2: an empty list exposes nothing

    def set_roots(self, roots: Iterable[Root | Mapping[str, object]]) -> Op[None]:
        """Replace the roots and tell connected servers (ROOT-1, ROOT-3): failures to
        notify are logged, never raised. A server connected before roots were first
        registered did not get the ``roots`` capability and is not told (CAP-5); it
        sees them from its next connection on. A 2026-07-28 server is never told."""
        self._roots = tuple(Root.coerce(r) for r in roots)
        self._roots_registered = True
        if self._roots:
            self._deprecated("roots")  # DEP-2
        for s in self.servers:
            # The era of the connection as it stands: only a connected server is told.
            if (yield PeekEra(s.name)) == "modern":
                # CAP-5: 2026-07-28 has no roots/list_changed; a modern server asks for
                # the roots inside a result when it needs them (MRTR, ROOT-5).
                continue
            try:
                yield Notify(
                    s.name, "notifications/roots/list_changed", None, only_if_connected=True
                )
            except MCPError as exc:
                yield Log("WARNING", f"could not tell {s.name!r} that roots changed: {exc}")

    def cache_info(
        self, kind: CacheKind, uri: str | None = None, *, server: ServerSelector | None = None
    ) -> Op[dict[str, CacheInfo | None]]:
        """What the 2026-07-28 result cache holds for ``kind`` (``"discover"``,
        ``"tools"``, ``"prompts"``, ``"resources"``, ``"resource_templates"``, or
        ``"read"`` with ``uri``), per server name: its ``ttl_ms``, ``cache_scope``,
        ``received_at`` and whether it is fresh now; ``None`` where nothing is cached
        (CACHE-10). Handshake-era servers never have entries."""
        now = yield from self._now()
        out: dict[str, CacheInfo | None] = {}
        for name in self._servers_for(server):
            out[name] = self.cache_info_at(name, kind, uri, 0.0 if now is None else now)
        return out

    def resume_input_required(
        self,
        error: InputRequiredError,
        *,
        server: ServerSelector | None = None,
        timeout: float | None = None,
    ) -> Op[Any]:
        """Continue a 2026-07-28 ``input_required`` exchange that failed (MRTR-6): the
        answers already produced are kept (MRTR-8), the rest are asked of the handlers,
        and the request is retried with the server's ``requestState``, with a fresh
        budget of rounds and wait. ``server`` defaults to the one that raised it."""
        return (yield from era.resume_input_required(self, error, server=server, timeout=timeout))

    def ping(
        self, *, server: ServerSelector | None = None, timeout: float | None = None
    ) -> Op[dict[str, Any]]:
        name = self._default_server(server)
        yield Connect(name)
        result = yield Call(name, "ping", None, timeout)
        return result if isinstance(result, dict) else {}

    def send_rpc(
        self,
        method: str,
        params: Mapping[str, object] | None = None,
        *,
        server: ServerSelector | None = None,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
    ) -> Op[Any]:
        """Send any request and return its raw result (TIME-2); ``progress(progress,
        total, message)`` gets the server's progress notifications for it (PROG-4)."""
        name = self._default_server(server)
        yield Connect(name)
        params = dict(params) if params is not None else None
        return (yield Call(name, method, params, timeout, progress))

    def send_notification(
        self,
        method: str,
        params: Mapping[str, object] | None = None,
        *,
        server: ServerSelector | None = None,
    ) -> Op[None]:
        name = self._default_server(server)
        yield Connect(name)
        yield Notify(name, method, dict(params) if params is not None else None)
