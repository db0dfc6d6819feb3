"""The field checks behind :mod:`mcp_proto.types`' ``from_dict`` parsers: each turns a
malformed field of untrusted peer data into a ``ValidationError`` naming it, and copies
JSON values so a parsed object shares nothing with the message it came from."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from typing import Any, Final

from .errors import ValidationError

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


def _default_input_schema() -> dict[str, Any]:
    return {"type": "object"}
