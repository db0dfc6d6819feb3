"""Value objects parsed from what a server sends: tools, prompts, resources, roots.

Everything here is peer data, and the peer is untrusted (seeds: "Treating the Server as
Untrusted"). Each ``from_dict`` checks the shape it needs and turns anything malformed
into :class:`~mcp_proto.errors.ValidationError` with a message naming the field, never a
``KeyError``/``TypeError``/``AttributeError``. Optional fields that are JSON ``null`` are
treated as absent, since some servers serialise unset fields that way.

The objects keep the server's JSON as given (schemas, annotations, ``_meta``) instead of
re-modelling it, so metadata survives untouched (GEN-6) and a newer revision's extra
keys are still reachable through ``raw``. They hold dicts, so they are frozen but
deliberately unhashable (``hash()`` raises ``TypeError``) rather than hashing by
identity while comparing by value.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from typing import Any, Final
from urllib.parse import unquote, urlsplit

import attrs

from .errors import ValidationError

__all__ = [
    "AudioContent",
    "Implementation",
    "Prompt",
    "PromptArgument",
    "Resource",
    "ResourceContent",
    "ResourceLink",
    "ResourceTemplate",
    "Root",
    "Tool",
    "parse_tool_content",
]

# ---------------------------------------------------------------------------- helpers


def _kind(value: object) -> str:
    """A short JSON-ish name of ``value``'s type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


def _object(data: object, what: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise ValidationError(f"{what}: expected a JSON object, got {_kind(data)}")
    return data


def _req_str(data: Mapping[str, Any], key: str, what: str, *, non_empty: bool = False) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        if value is None:
            raise ValidationError(f"{what}: missing required string field {key!r}")
        raise ValidationError(f"{what}: field {key!r} must be a string, got {_kind(value)}")
    if non_empty and not value:
        raise ValidationError(f"{what}: field {key!r} must not be empty")
    return value


def _opt_str(data: Mapping[str, Any], key: str, what: str) -> str | None:
    value = data.get(key)
    if value is None or isinstance(value, str):
        return value
    raise ValidationError(f"{what}: field {key!r} must be a string, got {_kind(value)}")


def _opt_bool(data: Mapping[str, Any], key: str, what: str) -> bool | None:
    value = data.get(key)
    if value is None or isinstance(value, bool):
        return value
    raise ValidationError(f"{what}: field {key!r} must be a boolean, got {_kind(value)}")


def _opt_size(data: Mapping[str, Any], key: str, what: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    # bool is an int subclass; True is not a size.
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValidationError(
            f"{what}: field {key!r} must be a non-negative integer, got {_kind(value)}"
        )
    return value


def _opt_object(data: Mapping[str, Any], key: str, what: str) -> Mapping[str, Any] | None:
    value = data.get(key)
    if value is None or isinstance(value, Mapping):
        return value
    raise ValidationError(f"{what}: field {key!r} must be an object, got {_kind(value)}")


def _icons(data: Mapping[str, Any], what: str) -> tuple[Mapping[str, Any], ...]:
    """``icons``: an array of ``Icon`` objects, each with a string ``src`` (schema: Icon)."""
    value = data.get("icons")
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise ValidationError(f"{what}: field 'icons' must be an array, got {_kind(value)}")
    icons: list[Mapping[str, Any]] = []
    for index, icon in enumerate(value):
        icon = _object(icon, f"{what}: icons[{index}]")
        _req_str(icon, "src", f"{what}: icons[{index}]")
        icons.append(icon)
    return tuple(icons)


def _label(data: object, kind: str) -> str:
    """``kind 'name'`` when the peer gave a usable name, for error messages."""
    if isinstance(data, Mapping):
        name = data.get("name")
        if isinstance(name, str):
            shown = name if len(name) <= 64 else name[:64] + "..."
            return f"{kind} {shown!r}"
    return kind


def _put(out: dict[str, Any], key: str, value: object) -> None:
    """Set ``out[key]`` only when the value is present (wire shapes omit unset fields)."""
    if value is not None and value != ():
        out[key] = list(value) if isinstance(value, tuple) else value


def _json_copy(value: Any) -> Any:
    """A deep copy of JSON data (mappings become dicts, sequences lists)."""
    if isinstance(value, Mapping):
        return {key: _json_copy(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_copy(item) for item in value]
    return value


# Keywords whose value maps *names* (property names, definition names) to subschemas.
# A key spelled "$schema" there is a property called "$schema", not the dialect keyword,
# so it is kept; the subschemas themselves are still cleaned.
_NAMED_SUBSCHEMAS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
# Keywords whose value is instance data, not a schema: copied verbatim.
_INSTANCE_DATA: Final = frozenset({"const", "enum", "default", "examples"})


def _strip_dollar_schema(schema: Any) -> Any:
    """A copy of ``schema`` with every ``$schema`` keyword removed, nothing else changed.

    Anthropic and Vertex AI / Gemini reject ``$schema`` (LLM-2, LLM-3). Every other
    keyword — ``$defs``, ``$ref``, ``$anchor``, ``allOf``, ... — is kept exactly: a
    rewritten or dereferenced schema would no longer be the server's contract.
    """
    if isinstance(schema, Mapping):
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key == "$schema":
                continue
            if key in _NAMED_SUBSCHEMAS and isinstance(value, Mapping):
                out[key] = {name: _strip_dollar_schema(sub) for name, sub in value.items()}
            elif key in _INSTANCE_DATA:
                out[key] = _json_copy(value)
            else:
                out[key] = _strip_dollar_schema(value)
        return out
    if isinstance(schema, (list, tuple)):
        return [_strip_dollar_schema(item) for item in schema]
    return schema


def _decode_base64(text: str, what: str) -> bytes:
    # Strict alphabet, but tolerate line-wrapped (MIME-style) base64 some servers emit.
    compact = "".join(text.split())
    try:
        return base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValidationError(f"{what}: invalid base64 data ({exc})") from None


def _icon_tuple(icons: Iterable[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    return tuple(icons)


def _argument_tuple(arguments: Iterable[PromptArgument]) -> tuple[PromptArgument, ...]:
    return tuple(arguments)


def _default_input_schema() -> dict[str, Any]:
    return {"type": "object"}


# ---------------------------------------------------------------------- implementation


@attrs.frozen(unsafe_hash=False)
class Implementation:
    """Name and version of an MCP implementation (``clientInfo`` / ``serverInfo``)."""

    name: str
    version: str
    title: str | None = None
    description: str | None = None
    website_url: str | None = None
    icons: tuple[Mapping[str, Any], ...] = attrs.field(
        default=(), converter=_icon_tuple, repr=False
    )

    @classmethod
    def from_dict(cls, data: object) -> Implementation:
        """Parse a schema ``Implementation`` object.

        Raises:
            ValidationError: ``data`` is not an object, or ``name``/``version`` are
                missing or not strings, or an optional field has the wrong type.
        """
        what = "implementation info"
        obj = _object(data, what)
        return cls(
            name=_req_str(obj, "name", what),
            version=_req_str(obj, "version", what),
            title=_opt_str(obj, "title", what),
            description=_opt_str(obj, "description", what),
            website_url=_opt_str(obj, "websiteUrl", what),
            icons=_icons(obj, what),
        )

    def to_dict(self) -> dict[str, Any]:
        """The wire shape (``websiteUrl`` camel-cased; unset fields omitted)."""
        out: dict[str, Any] = {"name": self.name, "version": self.version}
        _put(out, "title", self.title)
        _put(out, "description", self.description)
        _put(out, "websiteUrl", self.website_url)
        _put(out, "icons", [_json_copy(icon) for icon in self.icons] or None)
        return out


# ------------------------------------------------------------------------------- tools

_TASK_SUPPORTING: Final = frozenset({"optional", "required"})


@attrs.frozen(unsafe_hash=False)
class Tool:
    """A tool a server offers (schema ``Tool``), with the owning server's name.

    ``annotations`` are hints from an untrusted server (schema ``ToolAnnotations``:
    "Clients should never make tool use decisions based on ToolAnnotations received
    from untrusted servers"); the ``*_hint`` properties apply the spec's defaults.
    """

    name: str
    description: str | None = None
    input_schema: Mapping[str, Any] = attrs.field(factory=_default_input_schema, repr=False)
    title: str | None = None
    output_schema: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    annotations: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    icons: tuple[Mapping[str, Any], ...] = attrs.field(
        default=(), converter=_icon_tuple, repr=False
    )
    meta: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    task_support: str | None = None
    server: str | None = None
    raw: Mapping[str, Any] | None = attrs.field(default=None, repr=False, eq=False)

    @classmethod
    def from_dict(cls, data: object, *, server: str | None = None) -> Tool:
        """Parse one entry of a ``tools/list`` result.

        ``inputSchema`` falls back to a ``schema`` key (some servers, e.g. older
        Playwright MCP builds, use it), and to ``{"type": "object"}`` when both are
        missing (TOOL-12).

        Raises:
            ValidationError: the entry is malformed.
        """
        what = _label(data, "tool")
        obj = _object(data, what)
        name = _req_str(obj, "name", what, non_empty=True)
        input_schema: Mapping[str, Any] | None = None
        for key in ("inputSchema", "schema"):
            input_schema = _opt_object(obj, key, what)
            if input_schema is not None:
                break
        execution = _opt_object(obj, "execution", what)
        task_support = None
        if execution is not None:
            task_support = _opt_str(execution, "taskSupport", f"{what}: execution")
        return cls(
            name=name,
            description=_opt_str(obj, "description", what),
            input_schema=input_schema if input_schema is not None else _default_input_schema(),
            title=_opt_str(obj, "title", what),
            output_schema=_opt_object(obj, "outputSchema", what),
            annotations=_opt_object(obj, "annotations", what),
            icons=_icons(obj, what),
            meta=_opt_object(obj, "_meta", what),
            task_support=task_support,
            server=server,
            raw=obj,
        )

    # ---- aliases and metadata

    @property
    def schema(self) -> Mapping[str, Any]:
        """Alias of :attr:`input_schema` (the Ruby client's name)."""
        return self.input_schema

    @property
    def display_name(self) -> str:
        """``title``, else ``annotations.title``, else ``name`` (schema ``Tool.annotations``)."""
        if self.title:
            return self.title
        title = (self.annotations or {}).get("title")
        return title if isinstance(title, str) and title else self.name

    def _hint(self, key: str, default: bool) -> bool:
        # A hint that is absent, or not a boolean, takes the spec default; an explicit
        # ``false`` is respected (TOOL-9).
        value = (self.annotations or {}).get(key)
        return value if isinstance(value, bool) else default

    @property
    def read_only_hint(self) -> bool:
        """``annotations.readOnlyHint``; default ``False`` (ToolAnnotations)."""
        return self._hint("readOnlyHint", False)

    @property
    def destructive_hint(self) -> bool:
        """``annotations.destructiveHint``; default ``True`` (ToolAnnotations)."""
        return self._hint("destructiveHint", True)

    @property
    def idempotent_hint(self) -> bool:
        """``annotations.idempotentHint``; default ``False`` (ToolAnnotations)."""
        return self._hint("idempotentHint", False)

    @property
    def open_world_hint(self) -> bool:
        """``annotations.openWorldHint``; default ``True`` (ToolAnnotations)."""
        return self._hint("openWorldHint", True)

    # Pre-spec annotation names some servers still send (TOOL-10): true only when the
    # server literally says ``true``.

    @property
    def is_read_only(self) -> bool:
        """Legacy ``annotations.readOnly is True``."""
        return (self.annotations or {}).get("readOnly") is True

    @property
    def is_destructive(self) -> bool:
        """Legacy ``annotations.destructive is True``."""
        return (self.annotations or {}).get("destructive") is True

    @property
    def requires_confirmation(self) -> bool:
        """Legacy ``annotations.requiresConfirmation is True``."""
        return (self.annotations or {}).get("requiresConfirmation") is True

    @property
    def has_structured_output(self) -> bool:
        """The tool declares a non-empty ``outputSchema`` (TOOL-11)."""
        return bool(self.output_schema)

    # ---- task support (schema ToolExecution.taskSupport, default "forbidden")

    @property
    def supports_task(self) -> bool:
        """``execution.taskSupport`` is ``optional`` or ``required``."""
        return self.task_support in _TASK_SUPPORTING

    @property
    def task_required(self) -> bool:
        """``execution.taskSupport == "required"``."""
        return self.task_support == "required"

    @property
    def task_optional(self) -> bool:
        """``execution.taskSupport == "optional"``."""
        return self.task_support == "optional"

    @property
    def task_forbidden(self) -> bool:
        """Task-augmented calls are not supported (the default when unset or unknown)."""
        return not self.supports_task

    # ---- conversions

    def to_dict(self) -> dict[str, Any]:
        """The wire shape of the tool (schema ``Tool``); unset fields are omitted."""
        out: dict[str, Any] = {"name": self.name}
        _put(out, "title", self.title)
        _put(out, "description", self.description)
        out["inputSchema"] = _json_copy(self.input_schema)
        if self.output_schema is not None:
            out["outputSchema"] = _json_copy(self.output_schema)
        if self.annotations is not None:
            out["annotations"] = _json_copy(self.annotations)
        if self.task_support is not None:
            out["execution"] = {"taskSupport": self.task_support}
        _put(out, "icons", [_json_copy(icon) for icon in self.icons] or None)
        if self.meta is not None:
            out["_meta"] = _json_copy(self.meta)
        return out

    def _llm_entry(self, schema_key: str, schema: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        # The providers treat description as optional but reject ``null``.
        if self.description is not None:
            out["description"] = self.description
        out[schema_key] = schema
        return out

    def to_openai_tool(self) -> dict[str, Any]:
        """``{"type": "function", "function": {name, description, parameters}}`` (LLM-1).

        ``parameters`` is a deep copy of ``inputSchema``, unchanged.
        """
        return {
            "type": "function",
            "function": self._llm_entry("parameters", _json_copy(self.input_schema)),
        }

    def to_anthropic_tool(self) -> dict[str, Any]:
        """``{name, description, input_schema}`` with ``$schema`` removed (LLM-2)."""
        return self._llm_entry("input_schema", _strip_dollar_schema(self.input_schema))

    def to_google_tool(self) -> dict[str, Any]:
        """``{name, description, parameters}`` with ``$schema`` removed (LLM-3)."""
        return self._llm_entry("parameters", _strip_dollar_schema(self.input_schema))


# ----------------------------------------------------------------------------- prompts


@attrs.frozen(unsafe_hash=False)
class PromptArgument:
    """One argument of a prompt template (schema ``PromptArgument``)."""

    name: str
    description: str | None = None
    required: bool = False
    title: str | None = None

    @classmethod
    def from_dict(cls, data: object) -> PromptArgument:
        """Parse a ``PromptArgument``. Raises ``ValidationError`` if malformed."""
        what = _label(data, "prompt argument")
        obj = _object(data, what)
        return cls(
            name=_req_str(obj, "name", what),
            description=_opt_str(obj, "description", what),
            required=bool(_opt_bool(obj, "required", what)),
            title=_opt_str(obj, "title", what),
        )

    def to_dict(self) -> dict[str, Any]:
        """The wire shape (``required`` only when true)."""
        out: dict[str, Any] = {"name": self.name}
        _put(out, "title", self.title)
        _put(out, "description", self.description)
        if self.required:
            out["required"] = True
        return out


@attrs.frozen(unsafe_hash=False)
class Prompt:
    """A prompt or prompt template a server offers (schema ``Prompt``, PROMPT-3)."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[PromptArgument, ...] = attrs.field(default=(), converter=_argument_tuple)
    icons: tuple[Mapping[str, Any], ...] = attrs.field(
        default=(), converter=_icon_tuple, repr=False
    )
    meta: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    server: str | None = None
    raw: Mapping[str, Any] | None = attrs.field(default=None, repr=False, eq=False)

    @classmethod
    def from_dict(cls, data: object, *, server: str | None = None) -> Prompt:
        """Parse one entry of a ``prompts/list`` result. Raises ``ValidationError``."""
        what = _label(data, "prompt")
        obj = _object(data, what)
        name = _req_str(obj, "name", what, non_empty=True)
        raw_args = obj.get("arguments")
        if raw_args is None:
            raw_args = []
        if not isinstance(raw_args, (list, tuple)):
            raise ValidationError(
                f"{what}: field 'arguments' must be an array, got {_kind(raw_args)}"
            )
        arguments = []
        for index, arg in enumerate(raw_args):
            try:
                arguments.append(PromptArgument.from_dict(arg))
            except ValidationError as exc:
                raise ValidationError(f"{what}: arguments[{index}]: {exc}") from None
        return cls(
            name=name,
            title=_opt_str(obj, "title", what),
            description=_opt_str(obj, "description", what),
            arguments=tuple(arguments),
            icons=_icons(obj, what),
            meta=_opt_object(obj, "_meta", what),
            server=server,
            raw=obj,
        )

    @property
    def display_name(self) -> str:
        """``title`` if set, else ``name`` (schema ``BaseMetadata.title``)."""
        return self.title or self.name

    @property
    def required_arguments(self) -> tuple[str, ...]:
        """Names of the arguments marked ``required``."""
        return tuple(arg.name for arg in self.arguments if arg.required)

    def to_dict(self) -> dict[str, Any]:
        """The wire shape; unset fields omitted."""
        out: dict[str, Any] = {"name": self.name}
        _put(out, "title", self.title)
        _put(out, "description", self.description)
        if self.arguments:
            out["arguments"] = [arg.to_dict() for arg in self.arguments]
        _put(out, "icons", [_json_copy(icon) for icon in self.icons] or None)
        if self.meta is not None:
            out["_meta"] = _json_copy(self.meta)
        return out


# --------------------------------------------------------------------------- resources


@attrs.frozen(unsafe_hash=False)
class Resource:
    """A resource a server can read (schema ``Resource``, RES-5)."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    icons: tuple[Mapping[str, Any], ...] = attrs.field(
        default=(), converter=_icon_tuple, repr=False
    )
    meta: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    server: str | None = None
    raw: Mapping[str, Any] | None = attrs.field(default=None, repr=False, eq=False)

    @classmethod
    def from_dict(cls, data: object, *, server: str | None = None) -> Resource:
        """Parse one entry of a ``resources/list`` result. Raises ``ValidationError``."""
        what = _label(data, "resource")
        obj = _object(data, what)
        return cls(
            uri=_req_str(obj, "uri", what, non_empty=True),
            name=_req_str(obj, "name", what),
            title=_opt_str(obj, "title", what),
            description=_opt_str(obj, "description", what),
            mime_type=_opt_str(obj, "mimeType", what),
            size=_opt_size(obj, "size", what),
            annotations=_opt_object(obj, "annotations", what),
            icons=_icons(obj, what),
            meta=_opt_object(obj, "_meta", what),
            server=server,
            raw=obj,
        )

    @property
    def display_name(self) -> str:
        """``title`` if set, else ``name``."""
        return self.title or self.name

    @property
    def last_modified(self) -> str | None:
        """``annotations.lastModified`` (an ISO 8601 string) if the server sent one."""
        value = (self.annotations or {}).get("lastModified")
        return value if isinstance(value, str) else None

    def to_dict(self) -> dict[str, Any]:
        """The wire shape; unset fields omitted."""
        out: dict[str, Any] = {"uri": self.uri, "name": self.name}
        _put(out, "title", self.title)
        _put(out, "description", self.description)
        _put(out, "mimeType", self.mime_type)
        _put(out, "size", self.size)
        if self.annotations is not None:
            out["annotations"] = _json_copy(self.annotations)
        _put(out, "icons", [_json_copy(icon) for icon in self.icons] or None)
        if self.meta is not None:
            out["_meta"] = _json_copy(self.meta)
        return out


@attrs.frozen(unsafe_hash=False)
class ResourceTemplate:
    """A URI template for resources (schema ``ResourceTemplate``; RFC 6570 templates)."""

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    icons: tuple[Mapping[str, Any], ...] = attrs.field(
        default=(), converter=_icon_tuple, repr=False
    )
    meta: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    server: str | None = None
    raw: Mapping[str, Any] | None = attrs.field(default=None, repr=False, eq=False)

    @classmethod
    def from_dict(cls, data: object, *, server: str | None = None) -> ResourceTemplate:
        """Parse one entry of a ``resources/templates/list`` result."""
        what = _label(data, "resource template")
        obj = _object(data, what)
        return cls(
            uri_template=_req_str(obj, "uriTemplate", what, non_empty=True),
            name=_req_str(obj, "name", what),
            title=_opt_str(obj, "title", what),
            description=_opt_str(obj, "description", what),
            mime_type=_opt_str(obj, "mimeType", what),
            annotations=_opt_object(obj, "annotations", what),
            icons=_icons(obj, what),
            meta=_opt_object(obj, "_meta", what),
            server=server,
            raw=obj,
        )

    @property
    def display_name(self) -> str:
        """``title`` if set, else ``name``."""
        return self.title or self.name

    def to_dict(self) -> dict[str, Any]:
        """The wire shape; unset fields omitted."""
        out: dict[str, Any] = {"uriTemplate": self.uri_template, "name": self.name}
        _put(out, "title", self.title)
        _put(out, "description", self.description)
        _put(out, "mimeType", self.mime_type)
        if self.annotations is not None:
            out["annotations"] = _json_copy(self.annotations)
        _put(out, "icons", [_json_copy(icon) for icon in self.icons] or None)
        if self.meta is not None:
            out["_meta"] = _json_copy(self.meta)
        return out


@attrs.frozen(unsafe_hash=False)
class ResourceContent:
    """One item of a ``resources/read`` result: text or a base64 blob (RES-2).

    Exactly one of ``text`` / ``blob`` is set (schema ``TextResourceContents`` /
    ``BlobResourceContents``). ``blob`` is the base64 string as the server sent it;
    :attr:`data` decodes it.
    """

    uri: str
    mime_type: str | None = None
    text: str | None = attrs.field(default=None, repr=False)
    blob: str | None = attrs.field(default=None, repr=False)
    annotations: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    meta: Mapping[str, Any] | None = attrs.field(default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise ValidationError(
                f"resource contents {self.uri!r}: exactly one of 'text' and 'blob' must be set"
            )

    @classmethod
    def from_dict(cls, data: object) -> ResourceContent:
        """Parse one entry of ``contents``. Raises ``ValidationError`` if malformed."""
        what = "resource contents"
        obj = _object(data, what)
        uri = _req_str(obj, "uri", what)
        what = f"resource contents {uri[:64]!r}"
        text = _opt_str(obj, "text", what)
        blob = _opt_str(obj, "blob", what)
        if text is not None and blob is not None:
            raise ValidationError(f"{what}: has both 'text' and 'blob'")
        if text is None and blob is None:
            raise ValidationError(f"{what}: has neither 'text' nor 'blob'")
        return cls(
            uri=uri,
            mime_type=_opt_str(obj, "mimeType", what),
            text=text,
            blob=blob,
            annotations=_opt_object(obj, "annotations", what),
            meta=_opt_object(obj, "_meta", what),
        )

    @property
    def is_text(self) -> bool:
        """The item carries ``text``."""
        return self.text is not None

    @property
    def is_binary(self) -> bool:
        """The item carries a base64 ``blob``."""
        return self.blob is not None

    @property
    def data(self) -> bytes:
        """The content as bytes: the decoded blob, or the text encoded as UTF-8.

        Raises:
            ValidationError: the blob is not valid base64.
        """
        if self.blob is not None:
            return _decode_base64(self.blob, f"resource contents {self.uri[:64]!r}")
        return (self.text or "").encode("utf-8")

    def to_dict(self) -> dict[str, Any]:
        """The wire shape; unset fields omitted."""
        out: dict[str, Any] = {"uri": self.uri}
        _put(out, "mimeType", self.mime_type)
        _put(out, "text", self.text)
        _put(out, "blob", self.blob)
        if self.annotations is not None:
            out["annotations"] = _json_copy(self.annotations)
        if self.meta is not None:
            out["_meta"] = _json_copy(self.meta)
        return out


# -------------------------------------------------------------- tool result content


@attrs.frozen(unsafe_hash=False)
class ResourceLink:
    """A ``resource_link`` content item in a tool or prompt result (GEN-7).

    Per the schema, a linked resource need not appear in ``resources/list``.
    """

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    icons: tuple[Mapping[str, Any], ...] = attrs.field(
        default=(), converter=_icon_tuple, repr=False
    )
    meta: Mapping[str, Any] | None = attrs.field(default=None, repr=False)

    @classmethod
    def from_dict(cls, data: object) -> ResourceLink:
        """Parse a ``ResourceLink``. Raises ``ValidationError`` if malformed."""
        what = _label(data, "resource link")
        obj = _object(data, what)
        kind = obj.get("type", "resource_link")
        if kind != "resource_link":
            raise ValidationError(f"{what}: 'type' must be 'resource_link', got {kind!r}")
        return cls(
            uri=_req_str(obj, "uri", what, non_empty=True),
            name=_req_str(obj, "name", what),
            title=_opt_str(obj, "title", what),
            description=_opt_str(obj, "description", what),
            mime_type=_opt_str(obj, "mimeType", what),
            size=_opt_size(obj, "size", what),
            annotations=_opt_object(obj, "annotations", what),
            icons=_icons(obj, what),
            meta=_opt_object(obj, "_meta", what),
        )

    def to_dict(self) -> dict[str, Any]:
        """The wire shape, ``type: "resource_link"`` included."""
        out: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        _put(out, "title", self.title)
        _put(out, "description", self.description)
        _put(out, "mimeType", self.mime_type)
        _put(out, "size", self.size)
        if self.annotations is not None:
            out["annotations"] = _json_copy(self.annotations)
        _put(out, "icons", [_json_copy(icon) for icon in self.icons] or None)
        if self.meta is not None:
            out["_meta"] = _json_copy(self.meta)
        return out


@attrs.frozen(unsafe_hash=False)
class AudioContent:
    """An ``audio`` content item (schema ``AudioContent``, GEN-5).

    ``data`` is the base64 string as sent; :attr:`decoded` gives the bytes.
    """

    data: str = attrs.field(repr=False)
    mime_type: str
    annotations: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    meta: Mapping[str, Any] | None = attrs.field(default=None, repr=False)

    @classmethod
    def from_dict(cls, data: object) -> AudioContent:
        """Parse an ``AudioContent``. Raises ``ValidationError`` if malformed."""
        what = "audio content"
        obj = _object(data, what)
        kind = obj.get("type", "audio")
        if kind != "audio":
            raise ValidationError(f"{what}: 'type' must be 'audio', got {kind!r}")
        return cls(
            data=_req_str(obj, "data", what),
            mime_type=_req_str(obj, "mimeType", what),
            annotations=_opt_object(obj, "annotations", what),
            meta=_opt_object(obj, "_meta", what),
        )

    @property
    def decoded(self) -> bytes:
        """The audio bytes. Raises ``ValidationError`` if ``data`` is not valid base64."""
        return _decode_base64(self.data, "audio content")

    def to_dict(self) -> dict[str, Any]:
        """The wire shape, ``type: "audio"`` included."""
        out: dict[str, Any] = {"type": "audio", "data": self.data, "mimeType": self.mime_type}
        if self.annotations is not None:
            out["annotations"] = _json_copy(self.annotations)
        if self.meta is not None:
            out["_meta"] = _json_copy(self.meta)
        return out


def parse_tool_content(content: object) -> list[ResourceLink | AudioContent | dict[str, Any]]:
    """Type the ``content`` array of a ``CallToolResult`` (GEN-7).

    ``resource_link`` items become :class:`ResourceLink`, ``audio`` items
    :class:`AudioContent`; every other item is returned as the original dict. Not
    applied automatically: a tool result stays the server's JSON unless the host asks.

    Raises:
        ValidationError: ``content`` is not an array, an item is not an object, or a
            ``resource_link``/``audio`` item is malformed.
    """
    if not isinstance(content, (list, tuple)):
        raise ValidationError(f"tool result content must be an array, got {_kind(content)}")
    items: list[ResourceLink | AudioContent | dict[str, Any]] = []
    for index, item in enumerate(content):
        if not isinstance(item, dict):
            raise ValidationError(
                f"tool result content[{index}] must be an object, got {_kind(item)}"
            )
        kind = item.get("type")
        try:
            if kind == "resource_link":
                items.append(ResourceLink.from_dict(item))
            elif kind == "audio":
                items.append(AudioContent.from_dict(item))
            else:
                items.append(item)
        except ValidationError as exc:
            raise ValidationError(f"tool result content[{index}]: {exc}") from None
    return items


# ------------------------------------------------------------------------------- roots


def _check_root_uri(_inst: object, _attr: attrs.Attribute[Any], uri: Any) -> None:
    """Root URIs: ``file://`` only, and no ``..`` segment even when percent-encoded.

    Spec (client/roots, 2025-11-25): the uri "MUST be a ``file://`` URI in the current
    specification", and clients MUST "validate all root URIs to prevent path
    traversal" (ROOT-2).
    """
    if not isinstance(uri, str):
        raise ValidationError(f"Root uri must be a string, got {_kind(uri)}")
    # The schema asks for the literal ``file://`` form; ``file:/x`` and ``file:x``
    # are not accepted.
    if not uri[:7].lower() == "file://":
        raise ValidationError(f"Root uri must be a file:// URI, got {uri[:200]!r}")
    try:
        parts = urlsplit(uri)
    except ValueError as exc:
        raise ValidationError(f"Root uri is not a valid URI: {uri[:200]!r} ({exc})") from None
    # Decode first so "%2e%2e" cannot smuggle a ".." past the check; split on both
    # separators because a Windows server treats "\" as one.
    for part in (parts.netloc, parts.path):
        decoded = unquote(part)
        if "\x00" in decoded:
            raise ValidationError(f"Root uri must not contain NUL characters: {uri[:200]!r}")
        if ".." in decoded.replace("\\", "/").split("/"):
            raise ValidationError(
                f"Root uri must not contain '..' path segments, got {uri[:200]!r}"
            )


def _check_root_name(_inst: object, _attr: attrs.Attribute[Any], name: Any) -> None:
    if name is not None and not isinstance(name, str):
        raise ValidationError(f"Root name must be a string or None, got {_kind(name)}")


def _check_root_meta(_inst: object, _attr: attrs.Attribute[Any], meta: Any) -> None:
    # Root._meta is an object of arbitrary keys (schema ``Root``).
    if meta is not None and not isinstance(meta, Mapping):
        raise ValidationError(f"Root _meta must be a mapping, got {_kind(meta)}")


@attrs.frozen(unsafe_hash=False)
class Root:
    """A directory or file the client exposes to servers (schema ``Root``, ROOT-1/2).

    Validated on construction; a bad value raises
    :class:`~mcp_proto.errors.ValidationError` (a ``ValueError``).
    """

    uri: str = attrs.field(validator=_check_root_uri)
    name: str | None = attrs.field(default=None, validator=_check_root_name)
    meta: Mapping[str, Any] | None = attrs.field(
        default=None, validator=_check_root_meta, repr=False
    )

    @classmethod
    def coerce(cls, obj: object) -> Root:
        """A :class:`Root` from a ``Root`` or a mapping ``{uri, name, _meta}``.

        Raises:
            ValidationError: anything else, or an invalid root.
        """
        if isinstance(obj, Root):
            return obj
        if isinstance(obj, Mapping):
            # Wrong types are the validators' business: they raise ValidationError.
            uri: Any = obj.get("uri")
            name: Any = obj.get("name")
            meta: Any = obj.get("_meta", obj.get("meta"))
            return cls(uri=uri, name=name, meta=meta)
        raise ValidationError(f"a root must be a Root or a mapping, got {_kind(obj)}")

    @classmethod
    def from_dict(cls, data: object) -> Root:
        """Parse a wire ``Root`` (same rules as :meth:`coerce`)."""
        return cls.coerce(_object(data, "root"))

    def to_dict(self) -> dict[str, Any]:
        """The wire shape ``{uri, name?, _meta?}``."""
        out: dict[str, Any] = {"uri": self.uri}
        _put(out, "name", self.name)
        if self.meta is not None:
            out["_meta"] = _json_copy(self.meta)
        return out

    def __str__(self) -> str:
        return f"{self.name} ({self.uri})" if self.name else self.uri
