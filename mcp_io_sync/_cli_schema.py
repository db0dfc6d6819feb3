"""What ``mcp-proto`` reads from tool schemas: argument lists, type summaries, hints,
and the string-typed ``KEY=VALUE`` values."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from mcp_proto.types import Prompt, Tool

from . import _cli_render as render


def _schema_types(schema: object) -> set[str]:
    """The JSON types a property schema allows (empty: unknown / anything)."""
    if not isinstance(schema, Mapping):
        return set()
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    types: set[str] = set()
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            for option in options:
                found = _schema_types(option)
                if not found:
                    return set()
                types |= found
    return types


def coerce_to_schema(
    tool: Tool | None, values: dict[str, Any], raw: Mapping[str, str]
) -> dict[str, Any]:
    """Keep a ``key=value`` as the typed string when the tool's schema says the
    property is a string (so ``text=123`` sends ``"123"``, not ``123``)."""
    if tool is None:
        return values
    props = tool.input_schema.get("properties")
    if not isinstance(props, Mapping):
        return values
    out = dict(values)
    for key, text in raw.items():
        if isinstance(out.get(key), str):
            continue  # already a string (plain text, or a quoted JSON string)
        types = _schema_types(props.get(key))
        if types == {"string"} or (types and types <= {"string", "null"} and text != "null"):
            out[key] = text
    return out


def _describe(title: str | None, description: str | None, name: str) -> str:
    first = render.first_line(description)
    if title and title != name:
        return f"{title}: {first}" if first else title
    return first


def _tool_hints(tool: Tool) -> str:
    notes = tool.annotations or {}
    hints = []
    if tool.read_only_hint or tool.is_read_only:
        hints.append("read-only")
    elif notes.get("destructiveHint") is True or tool.is_destructive:
        hints.append("destructive")
    if notes.get("idempotentHint") is True:
        hints.append("idempotent")
    if notes.get("openWorldHint") is False:
        hints.append("closed-world")
    elif notes.get("openWorldHint") is True:
        hints.append("open-world")
    if tool.task_required:
        hints.append("task-only")
    return ", ".join(hints)


def _schema_summary(schema: object) -> str:
    if not isinstance(schema, Mapping):
        return ""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return "|".join(json.dumps(v, ensure_ascii=False) for v in enum[:6]) + (
            "|..." if len(enum) > 6 else ""
        )
    types = sorted(_schema_types(schema))
    if types == ["array"]:
        items = _schema_summary(schema.get("items"))
        return f"array of {items}" if items else "array"
    return "|".join(types)


def _tool_args(tool: Tool) -> list[tuple[str, bool, Mapping[str, Any]]]:
    props = tool.input_schema.get("properties")
    required = tool.input_schema.get("required")
    req = set(required) if isinstance(required, list) else set()
    if not isinstance(props, Mapping):
        return []
    return [
        (str(name), name in req, schema if isinstance(schema, Mapping) else {})
        for name, schema in props.items()
    ]


def _arg_list(args: Sequence[tuple[str, bool]]) -> str:
    return ", ".join(name if required else f"{name}?" for name, required in args)


def _suggest(name: str, items: Sequence[Tool] | Sequence[Prompt]) -> str:
    names = sorted({item.name for item in items})
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if close:
        return "; did you mean " + " or ".join(repr(c) for c in close) + "?"
    if names and len(names) <= 12:
        return f"; available: {', '.join(names)}"
    return ""
