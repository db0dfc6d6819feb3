"""What ``mcp-proto`` reads from tool schemas: argument lists, type summaries, hints,
and the string-typed ``KEY=VALUE`` values."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from mcp_proto.types import Prompt, Tool

from . import _render as render


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
    if title and _words(title) != _words(name):  # not "Create Entities" for create_entities
        return f"{title}: {first}" if first else title
    return first


def _words(text: str) -> str:
    return " ".join(text.replace("_", " ").replace("-", " ").lower().split())


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


# How deep ``tools TOOL`` unfolds nested arguments (a recursive schema stops here).
_MAX_DEPTH = 4


def _deref(schema: object, root: Mapping[str, Any], seen: frozenset[str]) -> tuple[Any, str]:
    """``schema`` with a local ``$ref`` (``#/$defs/X``, ``#/definitions/X``) followed,
    and the ref followed (``""`` for none). Remote refs are left alone (never fetched)."""
    ref = schema.get("$ref") if isinstance(schema, Mapping) else None
    if not isinstance(ref, str) or not ref.startswith("#/") or ref in seen:
        return schema, ""
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            return schema, ""
        node = node[part]
    return node, ref


def _object_part(schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The object schema with ``properties`` in ``schema``, or in the one non-null
    option of its ``anyOf``/``oneOf`` (``Optional[Model]`` in pydantic's output)."""
    if isinstance(schema.get("properties"), Mapping):
        return schema
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            objects = [o for o in options if isinstance(o, Mapping) and o.get("type") != "null"]
            if len(objects) == 1 and isinstance(objects[0].get("properties"), Mapping):
                return objects[0]
    return None


def arg_rows(tool: Tool) -> list[list[str]]:
    """``tools TOOL``'s argument table: NAME, TYPE, REQUIRED, DESCRIPTION, with nested
    object properties unfolded as ``trip.name`` and array items as ``trip.stops[].city``
    (issue 8 item 9: nested arguments were only ``array of object``)."""
    root = tool.input_schema
    rows: list[list[str]] = []

    def walk(schema: object, prefix: str, depth: int, seen: frozenset[str]) -> None:
        schema, ref = _deref(schema, root, seen)
        if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
            return
        seen = seen | {ref} if ref else seen
        obj = _object_part(schema)
        if obj is not None:
            props = obj["properties"]
            required = obj.get("required")
            req = set(required) if isinstance(required, list) else set()
            for name, sub in props.items():
                sub, sub_ref = _deref(sub, root, seen)
                sub = sub if isinstance(sub, Mapping) else {}
                path = f"{prefix}.{name}" if prefix else str(name)
                desc = render.first_line(sub.get("description"))
                if "default" in sub:
                    default = json.dumps(sub.get("default"), ensure_ascii=False)
                    desc = f"{desc} (default {default})" if desc else f"default {default}"
                kind = _schema_summary(sub) or ("object" if _object_part(sub) else "")
                rows.append([path, kind, "yes" if name in req else "", desc])
                walk(sub, path, depth + 1, seen | {sub_ref} if sub_ref else seen)
            return
        items, items_ref = _deref(schema.get("items"), root, seen)
        if prefix and "array" in _schema_types(schema) and isinstance(items, Mapping):
            walk(items, f"{prefix}[]", depth + 1, seen | {items_ref} if items_ref else seen)

    walk(root, "", 0, frozenset())
    return rows
