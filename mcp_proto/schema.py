"""JSON Schema validation through jsonschema-rs, always offline.

A hostile server must not make the client fetch URLs or read files through ``$ref``:
every validator is built with ``offline=True``. Validators are built once per
canonical schema and kept in a bounded cache.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

import jsonschema_rs

from .errors import SchemaError

__all__ = ["errors_for", "validator_for"]

_CACHE_SIZE = 256
_cache: OrderedDict[str, Any] = OrderedDict()


def validator_for(schema: Any) -> Any:
    """Build (or reuse) the validator for ``schema``.

    Raises:
        SchemaError: the schema is unusable (not an object/bool, bad keyword value,
            a reference it cannot resolve without going outside the document).
    """
    if not isinstance(schema, (dict, bool)):
        raise SchemaError(f"a JSON Schema must be an object or a boolean, not {type(schema).__name__}")
    key = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    validator = _cache.get(key)
    if validator is not None:
        _cache.move_to_end(key)
        return validator
    try:
        validator = jsonschema_rs.validator_for(schema, offline=True)
    except (ValueError, jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError) as exc:
        raise SchemaError(f"unusable JSON Schema: {exc}") from None
    _cache[key] = validator
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return validator


def errors_for(schema: Any, instance: Any, *, limit: int = 5) -> list[str]:
    """Up to ``limit`` readable violations of ``schema`` by ``instance`` (empty: valid)."""
    validator = validator_for(schema)
    if validator.is_valid(instance):
        return []
    out: list[str] = []
    for error in validator.iter_errors(instance):
        path = "/".join(str(p) for p in error.instance_path) or "(root)"
        out.append(f"at {path}: {error.message}")
        if len(out) >= limit:
            break
    return out
