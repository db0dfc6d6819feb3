"""Typed results of the client's operations: :class:`ToolResult` (``call_tool``),
:class:`PromptResult` (``get_prompt``), :class:`ResourcePage` and
:class:`ResourceTemplatePage` (``list_resources``, ``list_resource_templates``) and
:class:`CompletionResult` (``complete``).

Each is also a read-only mapping with the keys these operations returned as plain dicts
before they were typed, so code written against that shape keeps working::

    result.content[0].text            # typed
    result["content"][0]["text"]      # the server's JSON, as before
    result.get("isError"), result.raw

For a tool or prompt result the mapping *is* the server's result object (``.raw``). A
page maps ``resources`` (or ``resourceTemplates``) to the parsed entries and
``nextCursor`` to the cursor; a completion maps ``values`` (and ``total``/``hasMore``
when sent). Comparing with a dict compares the mapping (``result == {"content": []}``);
:meth:`to_dict` gives a JSON-ready copy.

Results are peer data (seeds: "Treating the Server as Untrusted"): ``from_wire`` checks
the shape it types and raises the error the operation documents on garbage
(:class:`~mcp_proto.errors.RemoteProtocolError`), never a ``KeyError``/``TypeError``.
What the operations always tolerated stays tolerated: a missing ``content`` is empty, an
unknown content type is kept as the server's mapping, a completion without values has
none.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from attrs.exceptions import FrozenInstanceError

from ._content_types import ContentItem, TextContent, content_to_dict, parse_content_item
from ._record import Record, builder
from ._resource_types import Resource, ResourceTemplate
from ._type_fields import _json_copy, _kind
from .errors import RemoteProtocolError, ValidationError

__all__ = [
    "CompletionResult",
    "PromptMessage",
    "PromptResult",
    "ResourcePage",
    "ResourceTemplatePage",
    "ToolResult",
]

_EMPTY: Final[Mapping[str, Any]] = {}
_TEXT_ITEM_KEYS: Final = frozenset(("type", "text"))  # the usual content item's keys
_set = object.__setattr__  # (frozen: the results refuse setattr)
_new = object.__new__


class _MappingView(Mapping[str, Any]):
    """The read-only mapping half of a result: ``_view`` (a slot of each result) is
    the mapping it shows. Equality is the mapping's (a result equals the dict it
    shows), so results are unhashable, as dicts are."""

    __slots__ = ()
    _view: Mapping[str, Any]
    _shown: tuple[str, ...] = ()  # the fields repr shows

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError()

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._shown)
        return f"{self.__class__.__qualname__}({fields})"

    def __getitem__(self, key: str) -> Any:
        return self._view[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._view)

    def __len__(self) -> int:
        return len(self._view)

    def __contains__(self, key: object) -> bool:
        return key in self._view

    def get(self, key: str, default: Any = None) -> Any:
        return self._view.get(key, default)


def _malformed(server: str | None, what: str, detail: str) -> RemoteProtocolError:
    where = f"server {server!r}" if server is not None else "the server"
    return RemoteProtocolError(f"{where} sent a malformed {what} result: {detail}")


def _result_object(data: object, server: str | None, what: str) -> Mapping[str, Any]:
    # (``type() is dict`` first: the usual case, without an ABC check)
    if type(data) is not dict and not isinstance(data, Mapping):
        raise _malformed(server, what, f"expected a JSON object, got {_kind(data)}")
    return data


def _meta(obj: Mapping[str, Any], server: str | None, what: str) -> Mapping[str, Any] | None:
    meta = obj.get("_meta")
    if meta is None or type(meta) is dict or isinstance(meta, Mapping):
        return meta
    raise _malformed(server, what, f"'_meta' must be an object, got {_kind(meta)}")


def _content_items(
    value: object, server: str | None, what: str, where: str
) -> tuple[ContentItem, ...]:
    if not isinstance(value, list):
        raise _malformed(server, what, f"{where} must be an array, got {_kind(value)}")
    try:
        return tuple([parse_content_item(item) for item in value])
    except ValidationError:
        pass
    for index, item in enumerate(value):  # (again, to name the item)
        try:
            parse_content_item(item)
        except ValidationError as exc:
            raise _malformed(server, what, f"{where}[{index}]: {exc}") from None
    raise AssertionError("unreachable")  # pragma: no cover


def _check_items(value: object, server: str | None, what: str, where: str) -> None:
    """Check a content array as :func:`_content_items` would type it, without building
    the items: a plain text item (the usual one) is checked in place."""
    if type(value) is not list:
        raise _malformed(server, what, f"{where} must be an array, got {_kind(value)}")
    for index, item in enumerate(value):
        if (
            type(item) is dict
            and len(item) == 2
            and item.get("type") == "text"
            and type(item.get("text")) is str
        ):
            continue
        try:
            parse_content_item(item)
        except ValidationError as exc:
            raise _malformed(server, what, f"{where}[{index}]: {exc}") from None


# ------------------------------------------------------------------------ tools/call


class ToolResult(_MappingView):
    """The result of ``tools/call`` (schema ``CallToolResult``).

    ``is_error`` is the tool's own failure (the call itself succeeded): its content
    describes the error (TOOL-4). ``structured_content`` is ``None`` when absent.
    ``server`` names the server that answered.

    ``from_wire`` checks every content item; the typed items are built when
    ``content`` is first read (a tool result is typed on every ``call_tool``, and a
    caller reading ``result["content"]`` needs none of them).
    """

    # Three slots, two set in from_wire: a tool result is made on every call_tool, and
    # each slot set costs. ``is_error`` is read from ``raw`` (checked there), and the
    # mapping methods read ``raw`` directly.
    __slots__ = ("_content", "raw", "server")
    _shown = ("content", "is_error", "server")
    server: str | None
    raw: Mapping[str, Any]
    _content: tuple[ContentItem, ...]  # (unset until read, from_wire)

    def __init__(
        self,
        content: tuple[ContentItem, ...] = (),
        *,
        is_error: bool = False,
        server: str | None = None,
        raw: Mapping[str, Any] | None = None,
    ) -> None:
        """A result built by hand has the ``raw`` given, else the wire shape of
        ``content`` and ``is_error``."""
        if raw is None:
            raw = {"content": [content_to_dict(item) for item in content]}
            if is_error:
                raw["isError"] = True
        elif (raw.get("isError") is True) is not is_error:
            raise ValueError("is_error must agree with raw['isError']")
        _set(self, "_content", content)
        _set(self, "server", server)
        _set(self, "raw", raw)

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def __len__(self) -> int:
        return len(self.raw)

    def __contains__(self, key: object) -> bool:
        return key in self.raw

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    @property
    def is_error(self) -> bool:
        """The tool reported an error (``isError: true``)."""
        return self.raw.get("isError") is True

    @property
    def content(self) -> tuple[ContentItem, ...]:
        """The content items, typed (an unknown kind stays the server's mapping)."""
        try:
            return self._content
        except AttributeError:  # (from_wire leaves the slot unset: one set less per call)
            pass
        raw_content = self.raw.get("content")
        content = tuple([parse_content_item(item) for item in raw_content or ()])
        _set(self, "_content", content)
        return content

    @property
    def structured_content(self) -> Any:
        """``structuredContent`` as sent (any JSON; ``None`` when absent)."""
        return self.raw.get("structuredContent")

    @property
    def meta(self) -> Mapping[str, Any] | None:
        """The result's ``_meta`` (checked to be an object)."""
        meta: Mapping[str, Any] | None = self.raw.get("_meta")
        return meta

    @classmethod
    def from_wire(cls, data: object, *, server: str | None = None) -> ToolResult:
        """Type a ``CallToolResult``. A missing ``content`` is empty.

        Raises:
            RemoteProtocolError: not an object, ``content`` not an array of objects, a
                known content item malformed, ``isError`` not a boolean, ``_meta`` not
                an object.
        """
        if cls is ToolResult:
            return _tool_result(data, server)
        result = _new(cls)
        _set(result, "server", server)
        _set(result, "raw", _tool_result(data, server).raw)
        return result

    @property
    def text(self) -> str:
        """The text items' texts joined by newlines (``""`` when there are none)."""
        return "\n".join(item.text for item in self.content if isinstance(item, TextContent))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy of the result as the server sent it."""
        copied: dict[str, Any] = _json_copy(self.raw)
        return copied


_ToolResultBuilder = builder(ToolResult)


def _tool_result(data: object, server: str | None) -> ToolResult:
    """:meth:`ToolResult.from_wire` (the class's own): a plain function, as
    ``call_tool`` calls it on every call."""
    obj = data if type(data) is dict else _result_object(data, server, "tools/call")
    raw_content = obj.get("content")
    if type(raw_content) is list:
        for item in raw_content:  # the usual item, {"type": "text", "text": ...}, here
            if (
                type(item) is not dict
                or item.keys() != _TEXT_ITEM_KEYS
                or item["type"] != "text"
                or type(item["text"]) is not str
            ):
                _check_items(raw_content, server, "tools/call", "content")
                break
    elif raw_content is not None:
        _check_items(raw_content, server, "tools/call", "content")
    is_error = obj.get("isError")
    if type(is_error) is not bool and is_error is not None:
        raise _malformed(
            server, "tools/call", f"'isError' must be a boolean, got {_kind(is_error)}"
        )
    if "_meta" in obj:  # (rare: no lookup and test without it)
        meta = obj["_meta"]
        if meta is not None and type(meta) is not dict:
            _meta(obj, server, "tools/call")
    # Two slots set, no copy of the server's dict: a tool result is made on every
    # call_tool. ``_content`` stays unset until ``content`` is read. Stored plainly
    # on a builder, then given its class: one slot-wrapper call, not two
    # (mcp_proto/_record.py); a subclass of ToolResult is built by from_wire.
    result = _new(_ToolResultBuilder)
    result.server = server
    result.raw = obj
    _set(result, "__class__", ToolResult)
    return result


# ----------------------------------------------------------------------- prompts/get


class PromptMessage(Record):
    """One message of a prompt (schema ``PromptMessage``): a role and one content item."""

    __slots__ = ("content", "role")
    role: str
    content: ContentItem

    def __init__(self, role: str, content: ContentItem) -> None:
        _set(self, "role", role)
        _set(self, "content", content)

    def to_dict(self) -> dict[str, Any]:
        """The wire shape."""
        return {"role": self.role, "content": content_to_dict(self.content)}


class PromptResult(_MappingView):
    """The result of ``prompts/get`` (schema ``GetPromptResult``); ``server`` names
    the server that answered."""

    __slots__ = ("_view", "description", "messages", "raw", "server")
    _shown = ("messages", "description", "server")
    messages: tuple[PromptMessage, ...]
    description: str | None
    server: str | None
    raw: Mapping[str, Any]

    def __init__(
        self,
        messages: tuple[PromptMessage, ...] = (),
        *,
        description: str | None = None,
        server: str | None = None,
        raw: Mapping[str, Any] | None = None,
    ) -> None:
        """A result built by hand has the ``raw`` given, else the wire shape of
        ``messages`` and ``description``."""
        if raw is None:
            raw = {"messages": [m.to_dict() for m in messages]}
            if description is not None:
                raw["description"] = description
        _set(self, "messages", messages)
        _set(self, "description", description)
        _set(self, "server", server)
        _set(self, "raw", raw)
        _set(self, "_view", raw)

    @property
    def meta(self) -> Mapping[str, Any] | None:
        """The result's ``_meta`` (checked to be an object)."""
        meta: Mapping[str, Any] | None = self.raw.get("_meta")
        return meta

    @classmethod
    def from_wire(cls, data: object, *, server: str | None = None) -> PromptResult:
        """Type a ``GetPromptResult``.

        Raises:
            RemoteProtocolError: not an object, ``messages`` missing or not an array, a
                message without a string ``role`` or an object ``content``, a known
                content item malformed, ``description`` not a string.
        """
        what = "prompts/get"
        obj = _result_object(data, server, what)
        raw_messages = obj.get("messages")
        if not isinstance(raw_messages, list):
            raise _malformed(
                server, what, f"'messages' must be an array, got {_kind(raw_messages)}"
            )
        messages = []
        for index, message in enumerate(raw_messages):
            where = f"messages[{index}]"
            if not isinstance(message, Mapping):
                raise _malformed(server, what, f"{where} must be an object, got {_kind(message)}")
            role = message.get("role")
            if not isinstance(role, str):
                raise _malformed(server, what, f"{where}: 'role' must be a string")
            try:
                content = parse_content_item(message.get("content"))
            except ValidationError as exc:
                raise _malformed(server, what, f"{where}.content: {exc}") from None
            messages.append(PromptMessage(role=role, content=content))
        description = obj.get("description")
        if description is not None and not isinstance(description, str):
            raise _malformed(server, what, "'description' must be a string")
        _meta(obj, server, what)
        return cls(tuple(messages), description=description, server=server, raw=obj)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy of the result as the server sent it."""
        copied: dict[str, Any] = _json_copy(self.raw)
        return copied


# ------------------------------------------------------------------------------ pages


def _cursor(value: object) -> str | None:
    return value if isinstance(value, str) else None


class ResourcePage(_MappingView):
    """Resources from ``resources/list``: one page (``list_resources(cursor=...)``, with
    the page's ``next_cursor`` and the page as sent in ``raw``), or every page of every
    server merged (``next_cursor`` and ``raw`` are then ``None``). Maps ``resources``
    and ``nextCursor``."""

    __slots__ = ("_view", "next_cursor", "raw", "resources")
    _shown = ("resources", "next_cursor")
    resources: tuple[Resource, ...]
    next_cursor: str | None
    raw: Mapping[str, Any] | None

    def __init__(
        self,
        resources: tuple[Resource, ...] = (),
        next_cursor: str | None = None,
        *,
        raw: Mapping[str, Any] | None = None,
    ) -> None:
        _set(self, "resources", resources)
        _set(self, "next_cursor", next_cursor)
        _set(self, "raw", raw)
        _set(self, "_view", {"resources": list(resources), "nextCursor": next_cursor})

    @classmethod
    def from_wire(cls, data: object, *, server: str) -> ResourcePage:
        """Type one ``ListResourcesResult`` page of ``server``.

        Raises:
            RemoteProtocolError: not an object, or ``resources`` not an array.
            ValidationError: an entry is malformed.
        """
        obj = _page_object(data, "resources", server)
        return cls(
            tuple(Resource.from_dict(e, server=server) for e in obj["resources"]),
            _cursor(obj.get("nextCursor")),
            raw=obj,
        )

    def to_dict(self) -> dict[str, Any]:
        """The wire shape of the page (``nextCursor`` omitted when there is none)."""
        out: dict[str, Any] = {"resources": [r.to_dict() for r in self.resources]}
        if self.next_cursor is not None:
            out["nextCursor"] = self.next_cursor
        return out


class ResourceTemplatePage(_MappingView):
    """Resource templates from ``resources/templates/list``, as :class:`ResourcePage`.
    Maps ``resourceTemplates`` and ``nextCursor``."""

    __slots__ = ("_view", "next_cursor", "raw", "resource_templates")
    _shown = ("resource_templates", "next_cursor")
    resource_templates: tuple[ResourceTemplate, ...]
    next_cursor: str | None
    raw: Mapping[str, Any] | None

    def __init__(
        self,
        resource_templates: tuple[ResourceTemplate, ...] = (),
        next_cursor: str | None = None,
        *,
        raw: Mapping[str, Any] | None = None,
    ) -> None:
        _set(self, "resource_templates", resource_templates)
        _set(self, "next_cursor", next_cursor)
        _set(self, "raw", raw)
        _set(
            self,
            "_view",
            {"resourceTemplates": list(resource_templates), "nextCursor": next_cursor},
        )

    @classmethod
    def from_wire(cls, data: object, *, server: str) -> ResourceTemplatePage:
        """Type one ``ListResourceTemplatesResult`` page of ``server``.

        Raises:
            RemoteProtocolError: not an object, or ``resourceTemplates`` not an array.
            ValidationError: an entry is malformed.
        """
        obj = _page_object(data, "resourceTemplates", server)
        return cls(
            tuple(ResourceTemplate.from_dict(e, server=server) for e in obj["resourceTemplates"]),
            _cursor(obj.get("nextCursor")),
            raw=obj,
        )

    def to_dict(self) -> dict[str, Any]:
        """The wire shape of the page (``nextCursor`` omitted when there is none)."""
        out: dict[str, Any] = {"resourceTemplates": [t.to_dict() for t in self.resource_templates]}
        if self.next_cursor is not None:
            out["nextCursor"] = self.next_cursor
        return out


def _page_object(data: object, key: str, server: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping) or not isinstance(data.get(key), list):
        raise RemoteProtocolError(f"server {server!r} sent a malformed {key} page")
    return data


# --------------------------------------------------------------- completion/complete


class CompletionResult(_MappingView):
    """The completion of ``completion/complete`` (schema ``CompleteResult.completion``):
    the suggested ``completions`` (the wire's ``values``), the ``total`` the server
    knows of, and whether it ``has_more``. Maps ``values`` (a list) and ``total`` /
    ``hasMore`` when the server sent them; ``raw`` is the whole result as sent."""

    __slots__ = ("_view", "completions", "has_more", "raw", "server", "total")
    _shown = ("completions", "total", "has_more", "server")
    completions: tuple[str, ...]
    total: int | None
    has_more: bool | None
    server: str | None
    raw: object

    def __init__(
        self,
        completions: tuple[str, ...] = (),
        *,
        total: int | None = None,
        has_more: bool | None = None,
        server: str | None = None,
        raw: object = None,
    ) -> None:
        view: dict[str, Any] = {"values": list(completions)}
        if total is not None:
            view["total"] = total
        if has_more is not None:
            view["hasMore"] = has_more
        _set(self, "completions", completions)
        _set(self, "total", total)
        _set(self, "has_more", has_more)
        _set(self, "server", server)
        _set(self, "raw", raw)
        _set(self, "_view", view)

    @classmethod
    def from_wire(cls, data: object, *, server: str | None = None) -> CompletionResult:
        """Type a ``CompleteResult``. A result, ``completion`` or ``values`` of the
        wrong kind means no completions (COMP-1: completion is a convenience, and
        servers have sent all of these).

        Raises:
            RemoteProtocolError: a value that is not a string, a ``total`` that is not a
                non-negative integer, a ``hasMore`` that is not a boolean.
        """
        what = "completion/complete"
        completion = data.get("completion") if isinstance(data, Mapping) else None
        if not isinstance(completion, Mapping):
            completion = _EMPTY
        values = completion.get("values")
        if not isinstance(values, list):
            values = []
        for index, value in enumerate(values):
            if not isinstance(value, str):
                raise _malformed(
                    server, what, f"values[{index}] must be a string, got {_kind(value)}"
                )
        total = completion.get("total")
        if total is not None and (
            isinstance(total, bool) or not isinstance(total, int) or total < 0
        ):
            raise _malformed(
                server, what, f"'total' must be a non-negative integer, got {_kind(total)}"
            )
        has_more = completion.get("hasMore")
        if has_more is not None and not isinstance(has_more, bool):
            raise _malformed(server, what, f"'hasMore' must be a boolean, got {_kind(has_more)}")
        return cls(tuple(values), total=total, has_more=has_more, server=server, raw=data)

    def to_dict(self) -> dict[str, Any]:
        """The ``completion`` object's wire shape (``values``, ``total``, ``hasMore``)."""
        return dict(self._view)
