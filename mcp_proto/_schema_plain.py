"""Recognise "plain" JSON Schemas without loading the validation engine.

Most tool input schemas are a flat object of typed properties. Whether such a schema is
usable needs no engine (it has no references, patterns or dialect-specific keywords),
so the client can decide it in microseconds instead of importing jsonschema-rs on the
first call. Anything this module does not recognise goes to the real compile.
"""

from __future__ import annotations

import math
from typing import Any, Final

__all__ = ["KNOWN_DIALECT_URIS", "is_plain"]

#: ``$schema`` values every supported reading accepts (see schema.py).
KNOWN_DIALECT_URIS: Final = frozenset(
    variant
    for uri in (
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-06/schema#",
        "http://json-schema.org/draft-04/schema#",
    )
    for variant in (uri.rstrip("#"), uri.rstrip("#") + "#")
)

_NUMBERS: Final = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_COUNTS: Final = frozenset(
    {"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"}
)
_TYPES: Final = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
_MAX_DEPTH: Final = 16


def _number(value: Any) -> bool:
    # Infinity and NaN are not JSON numbers (RFC 8259 § 6): the engine refuses a schema
    # holding one (json's 1e999 parses to inf), so such a schema is not plain.
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int) and not isinstance(value, bool)


def _json_data(value: Any, depth: int = 0) -> bool:
    """Whether an instance value (``default``, ``const``, ``enum``, ``examples``) is JSON
    data the engine will take: no infinite or NaN floats, at any depth."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, dict)):
        if depth > _MAX_DEPTH:
            return False
        items = value.values() if isinstance(value, dict) else value
        return all(_json_data(v, depth + 1) for v in items)
    return True


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def is_plain(schema: Any, *, _depth: int = 0) -> bool:
    """True when ``schema`` uses only simple keywords with well-formed values (so it is
    certainly usable under every supported dialect); False means "ask the engine"."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict) or _depth > _MAX_DEPTH:
        return False
    # Every rule below mirrors the dialects' meta-schemas: a value of the wrong shape
    # makes the engine refuse the schema, so it is not plain.
    for key, value in schema.items():
        if key in ("title", "description"):
            if not isinstance(value, str):
                return False
        elif key == "default":
            if not _json_data(value):
                return False
        elif key == "examples":
            if not isinstance(value, list) or not _json_data(value):
                return False
        elif key == "deprecated":
            if not isinstance(value, bool):
                return False
        elif key == "$schema":
            if _depth or not isinstance(value, str) or value not in KNOWN_DIALECT_URIS:
                return False
        elif key == "type":
            types = value if isinstance(value, list) else [value]
            if (
                not types
                or not all(isinstance(t, str) and t in _TYPES for t in types)
                or len(set(types)) != len(types)
            ):
                return False
        elif key == "properties":
            if not isinstance(value, dict) or not all(
                is_plain(v, _depth=_depth + 1) for v in value.values()
            ):
                return False
        elif key in ("items", "additionalProperties"):
            if not is_plain(value, _depth=_depth + 1):
                return False
        elif key == "required":
            if (
                not isinstance(value, list)
                or not all(isinstance(v, str) for v in value)
                or len(set(value)) != len(value)
            ):
                return False
        elif key == "enum":
            if not isinstance(value, list) or not _json_data(value):
                return False
        elif key == "const":
            if not _json_data(value):
                return False
        elif key == "uniqueItems" and isinstance(value, bool):
            continue
        elif key in _NUMBERS:
            if not _number(value):
                return False
        elif key == "multipleOf":
            if not _number(value) or value <= 0:
                return False
        elif key in _COUNTS:
            if not _count(value):
                return False
        else:
            return False
    return True
