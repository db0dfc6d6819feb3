"""The router of :class:`~mcp_proto.client.ClientCore`: the configured servers, the
``server=`` selector, which server owns a name, and the list caches with their
invalidation (TOOL-16, PROMPT-4, RES-14).

The feature modules (:mod:`.tools`, :mod:`.prompts`, :mod:`.resources`,
:mod:`.utilities`) build their operations on what this class holds; it sends nothing
but the ``*/list`` requests that fill the caches.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal

import attrs

from ..effects import Connect, Log, Op
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
    ValidationError,
)
from ..handlers import Handlers, client_capabilities
from ..limits import Limits
from ..pagination import list_all
from ..session import ServerInfo
from ..types import Implementation, Prompt, Resource, Root, Tool

__all__ = ["DEFAULT_CLIENT_INFO", "PASS_THROUGH", "Router", "ServerEntry"]

DEFAULT_CLIENT_INFO: Final = Implementation(name="mcp-proto", version="0.1.0")

# Which cache a list_changed notification drops (TOOL-16, PROMPT-4, RES-14).
_INVALIDATES: Final[dict[str, str]] = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}

# Failures a call/get/read re-raises as they are instead of wrapping them in
# ToolCallError & co.: their class already says what happened (a timeout, a too-large
# response, a refused capability or authorization).
PASS_THROUGH: Final = (
    RequestTimeoutError,
    ResponseTooLargeError,
    CapabilityError,
    InsufficientScopeError,
)


@attrs.frozen
class ServerEntry:
    """A configured server as the core sees it: its name and transport type."""

    name: str
    type: str


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
        self.handlers = handlers
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
        # Bumped by list_changed so that a list fetched while a change was announced is
        # not stored over the invalidation (it may already be stale).
        self._generation: dict[tuple[str, str], int] = {}
        # (server, kind) -> (the cached list it indexes, name -> items): see _by_name.
        self._name_index: dict[tuple[str, str], tuple[list[Any], dict[str, list[Any]]]] = {}

    # ------------------------------------------------------------------ config

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
            ServerEntry(s.name, transport_type) if s.name == name else s for s in self.servers
        )
        self.server_disconnected(name)

    def _servers_for(self, server: Any) -> list[str]:
        if server is None:
            return [s.name for s in self.servers]
        return [self.select_server(server)]

    def _default_server(self, server: Any) -> str:
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

    def _store(self, kind: str) -> dict[str, list[Any]]:
        stores: dict[str, dict[str, list[Any]]] = {
            "tools": self._tools,
            "prompts": self._prompts,
            "resources": self._resources,
        }
        return stores[kind]

    def handle_notification(self, server: str, method: str, params: Mapping[str, Any]) -> None:
        """Bookkeeping for a server notification; the shell calls it *before* any host
        callback, so a callback reacting to ``list_changed`` always refetches (NOTIF-4)."""
        kind = _INVALIDATES.get(method)
        if kind is not None:
            self._invalidate(server, kind)

    def server_disconnected(self, server: str) -> None:
        """A server's connection ended: what it listed may change on reconnect."""
        for kind in ("tools", "prompts", "resources"):
            self._invalidate(server, kind)

    # ------------------------------------------------------------------ lists and routing

    def _list_one(self, server: str, kind: str, cache: bool) -> Op[list[Any]]:
        store = self._store(kind)
        if cache and server in store:
            return store[server]
        generation = self._generation.get((server, kind), 0)
        info: ServerInfo = yield Connect(server)
        capability = "resources" if kind == "resources" else kind
        if not info.has_capability(capability):
            items: list[Any] = []
        else:
            method = f"{kind}/list"
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
        return items

    def _list_across(self, kind: str, cache: bool, server: Any) -> Op[list[Any]]:
        out: list[Any] = []
        errors: list[MCPError] = []
        for name in self._servers_for(server):
            try:
                out.extend((yield from self._list_one(name, kind, cache)))
            except MCPError as exc:
                if server is not None:
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

    def _resolve(self, kind: str, name: str, server: Any) -> Op[Any]:
        store = self._store(kind)
        names = self._servers_for(server)
        matches: list[Any]
        if all(n in store for n in names):  # every list cached: no effects needed
            matches = []
            for n in names:
                matches += self._by_name(n, kind, store[n]).get(name, ())
        else:
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
        if len({m.server for m in matches}) > 1:
            owners = ", ".join(repr(m.server) for m in matches)
            raise {"tools": AmbiguousToolName, "prompts": AmbiguousPromptName}[kind](
                f"{kind[:-1]} {name!r} is offered by servers {owners}: pass server="
            )
        return matches[0]
