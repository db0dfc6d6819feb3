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

Tools, prompts and the server's ``Implementation`` are defined here; resources, their
contents, resource links, audio and roots in ``_resource_types``; text, image and
embedded-resource content items in ``_content_types``; the field checks they share in
``_type_fields``. Import them all from here. The typed results of the operations
(``ToolResult``, ``PromptResult``, ...) are in :mod:`mcp_proto.results`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs

from ._content_types import (
    ContentItem,
    EmbeddedResource,
    ImageContent,
    TextContent,
    parse_content_item,
)
from ._resource_types import (
    AudioContent,
    Resource,
    ResourceContent,
    ResourceLink,
    ResourceTemplate,
    Root,
    parse_tool_content,
)
from ._type_fields import (
    _default_input_schema,
    _icon_tuple,
    _icons,
    _json_copy,
    _kind,
    _label,
    _object,
    _opt_bool,
    _opt_object,
    _opt_str,
    _put,
    _req_str,
    _strip_dollar_schema,
)
from .errors import ValidationError

__all__ = [
    "AudioContent",
    "ContentItem",
    "EmbeddedResource",
    "ImageContent",
    "Implementation",
    "Prompt",
    "PromptArgument",
    "Resource",
    "ResourceContent",
    "ResourceLink",
    "ResourceTemplate",
    "Root",
    "TextContent",
    "Tool",
    "parse_content_item",
    "parse_tool_content",
]


def _argument_tuple(arguments: Iterable[PromptArgument]) -> tuple[PromptArgument, ...]:
    return tuple(arguments)


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
