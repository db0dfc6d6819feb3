"""The multi-server client's logic: routing, caches, checks, as sans-IO operations.

:class:`ClientCore` is what ``mcp_io_sync.Client`` and ``mcp_io_trio.Client`` share.
Every public client method is an operation here (a generator yielding
:mod:`~mcp_proto.effects`); the shells only drive it. So routing a call to the server
that owns a tool, caching lists until ``list_changed``, checking arguments and
structured output, and wrapping failures in the right error class happen once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Literal

import attrs

from ._schema_plain import is_plain
from .effects import Call, Connect, Log, Notify, Op, ProgressCallback
from .errors import (
    AmbiguousPromptName,
    AmbiguousResourceURI,
    AmbiguousToolName,
    CapabilityError,
    ConnectionError,
    InsufficientScopeError,
    MCPError,
    PromptGetError,
    PromptNotFound,
    RemoteProtocolError,
    RequestTimeoutError,
    ResourceNotFound,
    ResourceReadError,
    ResponseTooLargeError,
    SchemaError,
    ServerError,
    ServerNotFound,
    ToolCallError,
    ToolNotFound,
    TransportError,
    ValidationError,
)
from .handlers import Handlers, client_capabilities
from .limits import Limits
from .pagination import list_all
from .session import ServerInfo
from .types import Implementation, Prompt, Resource, ResourceContent, ResourceTemplate, Root, Tool
from .versions import features_of

__all__ = ["DEFAULT_CLIENT_INFO", "LOG_LEVELS", "ClientCore", "ServerEntry"]

DEFAULT_CLIENT_INFO: Final = Implementation(name="mcp-proto", version="0.1.0")

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

# Which cache a list_changed notification drops (TOOL-16, PROMPT-4, RES-14).
_INVALIDATES: Final[dict[str, str]] = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}

# Failures a call/get/read re-raises as they are instead of wrapping them in
# ToolCallError & co.: their class already says what happened (a timeout, a too-large
# response, a refused capability or authorization).
_PASS_THROUGH: Final = (
    RequestTimeoutError,
    ResponseTooLargeError,
    CapabilityError,
    InsufficientScopeError,
)

# JSON-RPC codes that mean "no such resource": -32002 up to 2025-11-25, -32602 in
# 2026-07-28 (RES-16).
_RESOURCE_NOT_FOUND: Final = frozenset({-32002, -32602})


@attrs.frozen
class ServerEntry:
    """A configured server as the core sees it: its name and transport type."""

    name: str
    type: str


class ClientCore:
    """Shared state and operations of a client aggregating several servers.

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

    # ------------------------------------------------------------------ tools

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

    def list_tools(self, *, cache: bool = True, server: Any = None) -> Op[list[Tool]]:
        """Tools of every server (or one), cached until ``list_changed`` (TOOL-1)."""
        return (yield from self._list_across("tools", cache, server))

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

    def find_tools(self, pattern: str | re.Pattern[str]) -> Op[list[Tool]]:
        """Tools whose name contains ``pattern`` (a string) or matches it (a regex)."""
        tools = yield from self.list_tools()
        if isinstance(pattern, str):
            return [t for t in tools if pattern in t.name]
        return [t for t in tools if pattern.search(t.name)]

    def find_tool(self, pattern: str | re.Pattern[str]) -> Op[Tool | None]:
        tools = yield from self.find_tools(pattern)
        if isinstance(pattern, str):
            exact = [t for t in tools if t.name == pattern]
            if exact:
                return exact[0]
        return tools[0] if tools else None

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        server: Any = None,
        progress: ProgressCallback | None = None,
        timeout: float | None = None,
    ) -> Op[dict[str, Any]]:
        """Call a tool on the server that offers it (TOOL-4) and check the result.

        Raises ``ToolNotFound`` / ``AmbiguousToolName`` (routing), ``ValidationError``
        (missing required arguments, or structured output in strict mode),
        ``RequestTimeoutError`` (timeout), ``ServerError`` (the server's JSON-RPC
        error), ``ToolCallError`` (the connection failed; the outcome is unknown).
        """
        tool: Tool = yield from self._resolve("tools", name, server)
        args = dict(arguments or {})
        # TOOL-14: a request-level _meta given among the arguments goes to params._meta.
        meta = args.pop("_meta", None)
        _check_required(tool, args)
        yield from _check_input_schema(tool)
        params: dict[str, Any] = {"name": name, "arguments": args}
        if isinstance(meta, Mapping):
            params["_meta"] = dict(meta)
        owner = tool.server or self._default_server(None)
        try:
            result = yield Call(owner, "tools/call", params, timeout, progress)
        except _PASS_THROUGH:
            raise
        except (TransportError, ConnectionError) as exc:
            raise ToolCallError(f"calling tool {name!r} on server {owner!r} failed: {exc}") from exc
        if not isinstance(result, dict):
            raise RemoteProtocolError(f"server {owner!r} sent a malformed tools/call result")
        if tool.has_structured_output and result.get("isError") is not True:
            info: ServerInfo = yield Connect(owner)  # the negotiated version decides
            yield from self._check_structured(tool, result, info.protocol_version)
        return result

    def _check_structured(self, tool: Tool, result: dict[str, Any], version: str) -> Op[None]:
        """SCH-1/SCH-2/SCH-18: a tool with an outputSchema must return matching
        ``structuredContent`` on success; ``isError`` results are exempt."""
        if not tool.has_structured_output or result.get("isError") is True:
            return
        structured = result.get("structuredContent")
        present = (
            isinstance(structured, dict)
            if features_of(version).structured_content_object_only
            else "structuredContent" in result
        )
        if not present:
            problems = [
                "the result has no structuredContent although the tool declares an outputSchema"
            ]
        else:
            where = f"tool {tool.name!r} on server {tool.server!r}"
            from .schema import UnsupportedDialectError, compile  # lazy: jsonschema-rs

            try:
                validator = compile(tool.output_schema)
            except UnsupportedDialectError as exc:  # SCH-12: unreadable, in both modes
                raise ValidationError(f"{where}: output schema {exc.detail}") from None
            except SchemaError as exc:  # SCH-13: warned about, content not checked
                yield Log("WARNING", f"structured output of {where} not checked: {exc}")
                return
            if validator.unevaluated:  # SCH-7
                yield Log(
                    "WARNING",
                    f"{where}: output schema validation is partial ("
                    + ", ".join(sorted(validator.unevaluated))
                    + " not evaluated)",
                )
            problems = [str(v) for v in validator.violations(structured)]
        if not problems:
            return
        message = f"tool {tool.name!r} on server {tool.server!r}: " + "; ".join(problems)
        if self.validate_structured_content == "strict":
            raise ValidationError(message)
        yield Log("WARNING", f"structured output check failed: {message}")

    def call_tools(self, calls: Iterable[Mapping[str, Any]]) -> Op[list[dict[str, Any]]]:
        """Call several tools one after the other (TOOL-6); keys ``name``,
        ``arguments`` (or ``parameters``), ``server``."""
        results = []
        for op in self.tool_call_ops(calls):
            results.append((yield from op))
        return results

    def tool_call_ops(self, calls: Iterable[Mapping[str, Any]]) -> list[Op[dict[str, Any]]]:
        """One ``call_tool`` operation per entry of a ``call_tools`` list (each entry is
        checked first, so a bad one fails before anything is sent). A shell runs them in
        turn, or side by side for ``call_tools(..., concurrent=True)``."""
        entries = []
        for i, call in enumerate(calls):
            if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
                raise ValueError(f"call {i} needs a 'name'")
            entries.append((call["name"], call.get("arguments", call.get("parameters")), call))
        return [
            self.call_tool(name, args, server=call.get("server")) for name, args, call in entries
        ]

    # ------------------------------------------------------------------ prompts

    def list_prompts(self, *, cache: bool = True, server: Any = None) -> Op[list[Prompt]]:
        return (yield from self._list_across("prompts", cache, server))

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        server: Any = None,
        timeout: float | None = None,
    ) -> Op[dict[str, Any]]:
        prompt: Prompt = yield from self._resolve("prompts", name, server)
        args = {str(k): v for k, v in (arguments or {}).items()}
        meta = args.pop("_meta", None)
        for arg in prompt.arguments:
            if arg.required and arg.name not in args:
                raise ValidationError(f"prompt {name!r} needs the argument {arg.name!r}")
        # Prompt arguments are strings on the wire (GetPromptRequest.arguments).
        params: dict[str, Any] = {
            "name": name,
            "arguments": {k: _as_str(v) for k, v in args.items()},
        }
        if isinstance(meta, Mapping):
            params["_meta"] = dict(meta)
        owner = prompt.server or self._default_server(None)
        try:
            result = yield Call(owner, "prompts/get", params, timeout)
        except _PASS_THROUGH:
            raise
        except (TransportError, ConnectionError) as exc:
            raise PromptGetError(f"getting prompt {name!r} from {owner!r} failed: {exc}") from exc
        if not isinstance(result, dict) or not isinstance(result.get("messages"), list):
            raise RemoteProtocolError(f"server {owner!r} sent a malformed prompts/get result")
        return result

    # ------------------------------------------------------------------ resources

    def list_resources(
        self, *, cache: bool = True, cursor: str | None = None, server: Any = None
    ) -> Op[dict[str, Any]]:
        """``{'resources': [...], 'nextCursor': ...}`` (RES-1). Without ``cursor`` every
        page of every server; with ``cursor``, that one page of one server."""
        if cursor is None:
            resources = yield from self._list_across("resources", cache, server)
            return {"resources": resources, "nextCursor": None}
        if server is None and len(self.servers) > 1:
            raise ValueError("list_resources(cursor=...) needs server= with several servers")
        name = self._default_server(server)
        yield Connect(name)
        result = yield Call(name, "resources/list", {"cursor": cursor})
        return _page(result, "resources", Resource.from_dict, name)

    def list_resource_templates(
        self, *, cursor: str | None = None, server: Any = None
    ) -> Op[dict[str, Any]]:
        """``{'resourceTemplates': [...], 'nextCursor': ...}`` (RES-4); every page of
        every server (or one) without ``cursor``."""
        if cursor is not None:
            if server is None and len(self.servers) > 1:
                raise ValueError("list_resource_templates(cursor=...) needs server=")
            name = self._default_server(server)
            yield Connect(name)
            result = yield Call(name, "resources/templates/list", {"cursor": cursor})
            return _page(result, "resourceTemplates", ResourceTemplate.from_dict, name)
        templates: list[ResourceTemplate] = []
        for name in self._servers_for(server):
            info: ServerInfo = yield Connect(name)
            if not info.has_capability("resources"):
                continue
            raw = yield from list_all(
                name,
                "resources/templates/list",
                "resourceTemplates",
                max_pages=self.limits.max_pages,
            )
            for entry in raw:
                try:
                    templates.append(ResourceTemplate.from_dict(entry, server=name))
                except (ValidationError, ValueError, TypeError) as exc:
                    yield Log("WARNING", f"server {name!r}: skipping a malformed template: {exc}")
        return {"resourceTemplates": templates, "nextCursor": None}

    def _resource_owner(self, uri: str, server: Any) -> Op[str]:
        if server is not None:
            return self.select_server(server)
        if len(self.servers) == 1:
            return self.servers[0].name
        resources = yield from self._list_across("resources", True, None)
        owners: list[str] = sorted({r.server for r in resources if r.uri == uri and r.server})
        if len(owners) > 1:
            raise AmbiguousResourceURI(f"resource {uri!r} is offered by {owners}: pass server=")
        if owners:
            return owners[0]
        # RES-3: a URI reachable only through a template is not in any list; if exactly
        # one server offers resources at all, it is the one to ask.
        capable = []
        for s in self.servers:
            info: ServerInfo = yield Connect(s.name)
            if info.has_capability("resources"):
                capable.append(s.name)
        if len(capable) == 1:
            return capable[0]
        raise ResourceNotFound(f"no server lists a resource {uri!r}; pass server=")

    def read_resource(
        self, uri: str, *, server: Any = None, timeout: float | None = None
    ) -> Op[list[ResourceContent]]:
        owner = yield from self._resource_owner(uri, server)
        try:
            result = yield Call(owner, "resources/read", {"uri": uri}, timeout)
        except ServerError as exc:
            if exc.code in _RESOURCE_NOT_FOUND:
                raise ResourceNotFound(f"server {owner!r}: {exc}") from exc
            raise
        except _PASS_THROUGH:
            raise
        except (TransportError, ConnectionError) as exc:
            raise ResourceReadError(f"reading {uri!r} from {owner!r} failed: {exc}") from exc
        if not isinstance(result, dict) or not isinstance(result.get("contents"), list):
            raise ResourceReadError(f"server {owner!r} sent a malformed resources/read result")
        contents = []
        for entry in result["contents"]:
            try:
                contents.append(ResourceContent.from_dict(entry))
            except (ValidationError, ValueError, TypeError) as exc:
                raise ResourceReadError(f"server {owner!r} sent malformed contents: {exc}") from exc
        return contents

    def subscribe_resource(self, uri: str, *, server: Any = None) -> Op[bool]:
        """``resources/subscribe``; True once the server confirmed it (RES-6)."""
        return (yield from self._subscription("resources/subscribe", uri, server))

    def unsubscribe_resource(self, uri: str, *, server: Any = None) -> Op[bool]:
        return (yield from self._subscription("resources/unsubscribe", uri, server))

    def _subscription(self, method: str, uri: str, server: Any) -> Op[bool]:
        owner = yield from self._resource_owner(uri, server)
        info: ServerInfo = yield Connect(owner)
        if not info.has_capability("resources", "subscribe"):
            raise CapabilityError(f"server {owner!r} does not support resource subscriptions")
        try:
            yield Call(owner, method, {"uri": uri})
        except ServerError:
            raise
        except (TransportError, ConnectionError) as exc:
            # RES-6: no confirmation (timeout included) is a ResourceReadError.
            raise ResourceReadError(
                f"{method} {uri!r} on {owner!r} was not confirmed: {exc}"
            ) from exc
        return True

    # ------------------------------------------------------------------ the rest

    def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        *,
        context: Mapping[str, Any] | None = None,
        server: Any = None,
    ) -> Op[dict[str, Any]]:
        """``completion/complete`` (COMP-1) → ``{'values', 'total', 'hasMore'}``."""
        if not isinstance(ref, Mapping) or ref.get("type") not in ("ref/prompt", "ref/resource"):
            raise ValueError("ref must be {'type': 'ref/prompt', 'name': ...} or ref/resource")
        if not isinstance(argument, Mapping) or "name" not in argument:
            raise ValueError("argument must be {'name': ..., 'value': ...}")
        if server is None and len(self.servers) > 1 and ref.get("type") == "ref/prompt":
            prompt: Prompt = yield from self._resolve("prompts", str(ref.get("name")), None)
            owner = prompt.server or self._default_server(None)
        else:
            owner = self._default_server(server)
        info: ServerInfo = yield Connect(owner)
        if not info.has_capability("completions"):
            raise CapabilityError(f"server {owner!r} does not support completions")
        params: dict[str, Any] = {
            "ref": dict(ref),
            "argument": {"name": argument["name"], "value": argument.get("value", "")},
        }
        if context is not None:
            params["context"] = dict(context)
        result = yield Call(owner, "completion/complete", params)
        completion = result.get("completion") if isinstance(result, dict) else None
        if not isinstance(completion, dict):
            return {"values": []}
        values = completion.get("values")
        out: dict[str, Any] = {"values": values if isinstance(values, list) else []}
        for key in ("total", "hasMore"):
            if key in completion:
                out[key] = completion[key]
        return out

    def set_log_level(self, level: str, *, server: Any = None) -> Op[list[str]]:
        """``logging/setLevel`` on every server with ``logging`` (skipping the others,
        CAP-3), or on one (``CapabilityError`` if it lacks it). Returns the names set."""
        if level not in LOG_LEVELS:
            raise ValueError(f"log level must be one of {', '.join(LOG_LEVELS)}")
        done = []
        for name in self._servers_for(server):
            info: ServerInfo = yield Connect(name)
            if not info.has_capability("logging"):
                if server is not None:
                    raise CapabilityError(f"server {name!r} does not support logging")
                continue
            yield Call(name, "logging/setLevel", {"level": level})
            done.append(name)
        return done

    def set_initial_roots(self, roots: Iterable[Root | Mapping[str, Any]]) -> None:
        """Roots given at construction (an empty list too: it registers roots, to be
        set later): nobody is connected yet, so nobody is told."""
        self._roots = tuple(Root.coerce(r) for r in roots)
        self._roots_registered = True

    def set_roots(self, roots: Iterable[Root | Mapping[str, Any]]) -> Op[None]:
        """Replace the roots and tell connected servers (ROOT-1, ROOT-3): failures to
        notify are logged, never raised. A server connected before roots were first
        registered did not get the ``roots`` capability and is not told (CAP-5); it
        sees them from its next connection on."""
        self._roots = tuple(Root.coerce(r) for r in roots)
        self._roots_registered = True
        for s in self.servers:
            try:
                yield Notify(
                    s.name, "notifications/roots/list_changed", None, only_if_connected=True
                )
            except MCPError as exc:
                yield Log("WARNING", f"could not tell {s.name!r} that roots changed: {exc}")

    def ping(self, *, server: Any = None, timeout: float | None = None) -> Op[dict[str, Any]]:
        name = self._default_server(server)
        yield Connect(name)
        result = yield Call(name, "ping", None, timeout)
        return result if isinstance(result, dict) else {}

    def send_rpc(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        server: Any = None,
        timeout: float | None = None,
    ) -> Op[Any]:
        """Send any request and return its raw result (TIME-2)."""
        name = self._default_server(server)
        yield Connect(name)
        return (yield Call(name, method, dict(params) if params is not None else None, timeout))

    def send_notification(
        self, method: str, params: Mapping[str, Any] | None = None, *, server: Any = None
    ) -> Op[None]:
        name = self._default_server(server)
        yield Connect(name)
        yield Notify(name, method, dict(params) if params is not None else None)


def _as_str(value: Any) -> str:
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value)


def _check_input_schema(tool: Tool) -> Op[None]:
    """SCH-11/SCH-13: an inputSchema whose dialect is unsupported stops the call before
    anything is sent; any other unusable input schema is warned about and the call is
    still sent (the server owns argument validation). Call it again on a refreshed tool
    definition before a retry (SCH-20).

    The verdict is kept per schema object (a cached tool list hands out the same object
    every call), so the hot path of repeated calls pays a dict lookup, not a compile."""
    schema = tool.input_schema
    known = _INPUT_VERDICTS.get(id(schema))
    if known is not None and known[0] is schema:
        verdict = known[1]
    else:
        verdict = None
        if not is_plain(schema):  # a plain one is certainly usable: no engine needed
            from .schema import UnsupportedDialectError, compile  # lazy: jsonschema-rs

            try:
                compile(schema)
            except UnsupportedDialectError as exc:
                verdict = (
                    "error",
                    f"tool {tool.name!r} on server {tool.server!r}: input schema {exc.detail}",
                )
            except SchemaError as exc:
                verdict = (
                    "warn",
                    f"tool {tool.name!r} on server {tool.server!r}: unusable input schema, the"
                    f" call is sent anyway: {exc}",
                )
        if len(_INPUT_VERDICTS) >= 1024:
            _INPUT_VERDICTS.clear()
        _INPUT_VERDICTS[id(schema)] = (schema, verdict)
    if verdict is None:
        return
    if verdict[0] == "error":
        raise ValidationError(verdict[1])
    yield Log("WARNING", verdict[1])


# id(inputSchema) -> (the schema object itself, its verdict). Holding the object keeps
# its id from being reused by another schema while the entry lives.
_INPUT_VERDICTS: dict[int, tuple[Any, tuple[str, str] | None]] = {}


def _check_required(tool: Tool, args: Mapping[str, Any]) -> None:
    """TOOL-5: required parameters without a schema default must be present."""
    schema = tool.input_schema
    required = schema.get("required") if isinstance(schema, Mapping) else None
    if not isinstance(required, list):
        return
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    missing = [
        r
        for r in required
        if isinstance(r, str)
        and r not in args
        and not (isinstance(props.get(r), Mapping) and "default" in props[r])
    ]
    if missing:
        raise ValidationError(
            f"tool {tool.name!r} is missing required argument(s): {', '.join(missing)}"
        )


def _page(result: Any, key: str, parse: Callable[..., Any], server: str) -> dict[str, Any]:
    if not isinstance(result, dict) or not isinstance(result.get(key), list):
        raise RemoteProtocolError(f"server {server!r} sent a malformed {key} page")
    next_cursor = result.get("nextCursor")
    return {
        key: [parse(entry, server=server) for entry in result[key]],
        "nextCursor": next_cursor if isinstance(next_cursor, str) else None,
    }
