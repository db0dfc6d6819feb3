"""JSON Schema validation: a thin, always-offline adapter over jsonschema-rs.

``compile(schema)`` gives a :class:`Validator` (``is_valid``, ``validate``,
``violations``). What this module adds to the engine:

* **Dialect, never guessed.** ``$schema`` picks 2020-12, 2019-09 or draft-07 (draft-04 and
  draft-06 are read as draft-07); no ``$schema`` means 2020-12, MCP's default. Any other
  value — in the root or in an embedded resource — raises :class:`UnsupportedDialectError`.
* **Offline.** No network fetch and no file read, ever: references resolve inside the
  document (embedded ``$id``s included); a reference to anything else raises
  :class:`ExternalReferenceError`.
* **Unusable is not invalid.** A schema the engine cannot honour (bad keyword value,
  colliding ``$id``s or anchors, external ``$ref``, a ``pattern`` that is not ECMA-262)
  raises :class:`~mcp_proto.errors.SchemaError`; data that breaks a usable schema raises
  :class:`SchemaViolation`. Both are :class:`~mcp_proto.errors.ValidationError`\\ s, so
  catch ``SchemaError`` first.
* **ECMA-262 patterns.** Every ``pattern`` and ``patternProperties`` key is parsed as
  ECMA-262 and handed to the engine translated (:mod:`mcp_proto._ecma_regex`); what the
  engine cannot reproduce makes the schema unusable. See ``docs/json-schema.md``.
* **Bounded time.** Patterns without lookaround or back-references run on a linear-time
  engine. The others run on a backtracking engine whose step limit is set, per
  validation, from the instance's size so the whole validation stays within a fixed
  work budget; running out fails the validation, it never passes it.
* **Built once.** Validators are cached per canonical schema, with a bound, for the
  whole process (:func:`reset_cache` empties the cache).

Pure code: no I/O, no clock, no threads. Preparing a schema for the engine (dialects,
references, patterns) is :mod:`mcp_proto._schema_prepare`'s, URI and JSON Pointer
handling :mod:`mcp_proto._schema_refs`'; every public name is imported from here.
"""

from __future__ import annotations

import copy
import json
import re
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final

import attrs
import jsonschema_rs

from ._schema_prepare import (
    DEFAULT_DIALECT,
    DIALECT_2019_09,
    DIALECT_2020_12,
    DIALECT_DRAFT_07,
    SUPPORTED_DIALECTS,
    ExternalReferenceError,
    UnsupportedDialectError,
    UnusablePatternError,
    _at,
    _default_dialect,
    _json_type,
    _Prepared,
    _Preparer,
    _short,
    dialect_of,
)
from ._schema_refs import _pointer
from .errors import SchemaError, ValidationError

__all__ = [
    "DEFAULT_DIALECT",
    "DIALECT_2019_09",
    "DIALECT_2020_12",
    "DIALECT_DRAFT_07",
    "SUPPORTED_DIALECTS",
    "ExternalReferenceError",
    "SchemaError",
    "SchemaViolation",
    "UnsupportedDialectError",
    "UnusablePatternError",
    "ValidationError",
    "Validator",
    "Violation",
    "compile",
    "dialect_of",
    "errors_for",
    "reset_cache",
]

_ENGINE_CLASSES: Final[dict[str, Any]] = {
    DIALECT_2020_12: jsonschema_rs.Draft202012Validator,
    DIALECT_2019_09: jsonschema_rs.Draft201909Validator,
    DIALECT_DRAFT_07: jsonschema_rs.Draft7Validator,
}
_ENGINE_DRAFTS: Final[dict[str, int]] = {
    DIALECT_2020_12: jsonschema_rs.Draft202012,
    DIALECT_2019_09: jsonschema_rs.Draft201909,
    DIALECT_DRAFT_07: jsonschema_rs.Draft7,
}

# --- the backtracking budget --------------------------------------------------------------
# A lookaround or back-reference pattern runs on fancy-regex's backtracking VM. Its step
# limit bounds one match; one step can cost up to the length of the string. The limit is
# chosen per validation so that (steps) x (characters) over every match stays within
# _WORK_BUDGET (about a third of a second on a 2024 laptop), between the two bounds below.
_WORK_BUDGET: Final = 200_000_000
_STEP_OVERHEAD: Final = 16  # a step on a short string costs about 16 characters' worth
_MAX_STEPS: Final = 1_000_000  # fancy-regex's own default
_MIN_STEPS: Final = 100
_STEP_TIERS: Final = (1_000_000, 300_000, 100_000, 30_000, 10_000, 3_000, 1_000, 300, 100)

# --- the cache ----------------------------------------------------------------------------
_CACHE_MAX_ENTRIES: Final = 256
_CACHE_MAX_CHARS: Final = 16 * 1024 * 1024  # of canonical schema text, all entries together

_MASK: Final = "value"  # the engine writes this instead of the (peer-sent) instance


@attrs.frozen
class Violation:
    """One way an instance breaks a schema."""

    path: str
    """JSON Pointer to the offending value in the instance (``""``: the instance)."""
    keyword: str
    """The schema keyword that failed (``type``, ``required``, ``pattern``…)."""
    reason: str
    """Readable explanation; never repeats the (peer-sent) value itself."""
    schema_path: str = ""
    """JSON Pointer to the failing keyword in the schema."""

    def __str__(self) -> str:
        return f"at {self.path or '(root)'}: {self.reason}"


class SchemaViolation(ValidationError):
    """An instance does not match a (usable) schema."""

    def __init__(self, violations: tuple[Violation, ...] | list[Violation]) -> None:
        self.violations = tuple(violations)
        first = self.violations[0] if self.violations else Violation("", "", "invalid")
        self.path = first.path
        self.reason = first.reason
        text = "; ".join(str(v) for v in self.violations) or "the value does not match"
        super().__init__(text)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.violations,))


# ------------------------------------------------------------------------------ validator


class Validator:
    """A compiled schema. Thread-compatible; reuse it for many instances."""

    def __init__(
        self,
        prepared: _Prepared,
        build: Any,
    ) -> None:
        self.dialect: str = prepared.dialect
        """The dialect the schema is read under (one of :data:`SUPPORTED_DIALECTS`)."""
        self.unevaluated: frozenset[str] = prepared.unevaluated
        """Keywords present in the schema that are not evaluated (``format``,
        ``contentSchema``): validation is partial when this is not empty."""
        self.backtracking_patterns: int = prepared.backtracking
        self._sources = prepared.sources
        self._document = prepared.document
        self._build = build
        self._engines: dict[int | None, Any] = {}
        default = None if prepared.backtracking == 0 else _MAX_STEPS
        self._engines[default] = build(default)

    def __repr__(self) -> str:
        return f"<mcp_proto.schema.Validator {self.dialect}>"

    def _engine(self, instance: Any) -> Any:
        if self.backtracking_patterns == 0:
            return self._engines[None]
        work = _string_work(instance) * self.backtracking_patterns
        allowed = max(_MIN_STEPS, min(_MAX_STEPS, _WORK_BUDGET // max(work, 1)))
        steps = next(t for t in _STEP_TIERS if t <= allowed)
        engine = self._engines.get(steps)
        if engine is None:
            engine = self._engines[steps] = self._build(steps)
        return engine

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` matches. Data that is not JSON does not match."""
        try:
            return bool(self._engine(instance).is_valid(instance))
        except (ValueError, TypeError, OverflowError, UnicodeError, RecursionError):
            return False

    def violations(self, instance: Any, limit: int = 5) -> list[Violation]:
        """Up to ``limit`` ways ``instance`` breaks the schema (empty: it matches)."""
        engine = self._engine(instance)
        try:
            if engine.is_valid(instance):
                return []
            out: list[Violation] = []
            for error in engine.iter_errors(instance):
                out.append(self._violation(error))
                if len(out) >= limit:
                    break
        except (ValueError, TypeError, OverflowError, UnicodeError, RecursionError) as exc:
            return [Violation("", "", f"the value is not JSON data ({_short(str(exc))})")]
        return out or [Violation("", "", "the value does not match the schema")]

    def validate(self, instance: Any) -> None:
        """Raise :class:`SchemaViolation` (a ``ValidationError``) if ``instance`` does not
        match; its message names the path and the reason of each violation found."""
        if self.is_valid(instance):
            return
        raise SchemaViolation(self.violations(instance))

    def _violation(self, error: Any) -> Violation:
        kind = error.kind
        kind_name = type(kind).__name__
        schema_path = list(error.schema_path)
        keyword = str(schema_path[-1]) if schema_path else ""
        path = _pointer(error.instance_path)
        if kind_name == "Pattern":
            reason = f"does not match the pattern {self._source(kind.pattern)!r}"
        elif kind_name == "BacktrackLimitExceeded":
            pattern = self._pattern_at(schema_path)
            reason = (
                f"matching the pattern {pattern!r} ran out of its work budget; the value is"
                " treated as not matching"
                if pattern is not None
                else "pattern matching ran out of its work budget; the value is treated as"
                " not matching"
            )
        elif kind_name == "Type":
            reason = f"expected {' or '.join(kind.types)}, got {_json_type(error.instance)}"
        elif kind_name == "Required":
            reason = f"missing required property {kind.property!r}"
        elif kind_name in ("AdditionalProperties", "UnevaluatedProperties"):
            names = ", ".join(repr(n) for n in kind.unexpected)
            reason = f"unexpected propert{'y' if len(kind.unexpected) == 1 else 'ies'} {names}"
        else:
            reason = str(error.message)
        return Violation(path, keyword, _short(reason), _pointer(schema_path))

    def _source(self, target: str) -> str:
        return self._sources.get(target, target)

    def _pattern_at(self, schema_path: list[str | int]) -> str | None:
        node = self._document
        for part in schema_path:
            if isinstance(node, dict) and part in node:  # noqa: SIM114
                node = node[part]
            elif isinstance(node, list) and isinstance(part, int) and part < len(node):
                node = node[part]
            else:
                return None
        if isinstance(node, str):
            return self._source(node)
        return None


def _string_work(instance: Any) -> int:
    """Characters in every string and key of ``instance``, plus an overhead per string."""
    total = 0
    stack = [instance]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            total += len(value) + _STEP_OVERHEAD
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str):
                    total += len(key) + _STEP_OVERHEAD
                stack.append(item)
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return total


# ------------------------------------------------------------------------------ compile

_EXTERNAL = re.compile(r"Resource '([^']*)' is not present in a registry")


def _engine_error(exc: BaseException, prepared: _Prepared) -> SchemaError:
    """Turn an engine complaint about a schema into the right ``SchemaError``."""
    message = str(exc).split("\n\n", 1)[0].strip()
    external = _EXTERNAL.search(message)
    if external is not None:
        reference = external.group(1)
        return ExternalReferenceError(
            f"unusable JSON Schema: the reference {reference!r} points outside the schema;"
            " references resolve inside the document only and are never fetched",
            reference,
        )
    if message.startswith("Unknown meta-schema"):
        return UnsupportedDialectError(f"unusable JSON Schema: {message}")
    where = ""
    if isinstance(exc, jsonschema_rs.ValidationError):
        instance = exc.instance
        if isinstance(instance, str) and instance in prepared.sources:
            source = prepared.sources[instance]
            return UnusablePatternError(
                f"unusable JSON Schema: the regex engine cannot compile the pattern {source!r}",
                source,
            )
        where = _pointer(exc.instance_path)
    return SchemaError(f"unusable JSON Schema: {_short(message)}{_at(where)}")


def _compile(
    schema: Any,
    default_dialect: str,
    registry: Any = None,
    metaschemas: Mapping[str, Any] | None = None,
) -> Validator:
    if not isinstance(schema, (dict, bool)):
        raise SchemaError(
            f"unusable JSON Schema: a schema is an object or a boolean, not {_json_type(schema)}"
        )
    try:
        prepared = _Preparer(schema, _default_dialect(default_dialect), metaschemas).run()
    except RecursionError:
        raise SchemaError("unusable JSON Schema: it is nested too deeply") from None
    engine_class = (
        jsonschema_rs.validator_for
        if prepared.custom_metaschema
        else _ENGINE_CLASSES[prepared.dialect]
    )
    document = prepared.document

    def build(steps: int | None) -> Any:
        options: Any = (
            jsonschema_rs.RegexOptions()
            if steps is None
            else jsonschema_rs.FancyRegexOptions(backtrack_limit=steps)
        )
        extra: dict[str, Any] = {} if registry is None else {"registry": registry}
        return engine_class(
            document,
            validate_formats=False,
            offline=True,
            mask=_MASK,
            pattern_options=options,
            **extra,
        )

    try:
        return Validator(prepared, build)
    except SchemaError:
        raise
    except (ValueError, TypeError, OverflowError, UnicodeError, RecursionError) as exc:
        raise _engine_error(exc, prepared) from None
    except jsonschema_rs.ReferencingError as exc:
        raise _engine_error(exc, prepared) from None


class _Cache:
    """LRU of compiled validators (and of unusable-schema errors), bounded in entries and
    in the size of the schemas it keys on."""

    def __init__(self, max_entries: int, max_chars: int) -> None:
        self.max_entries = max_entries
        self.max_chars = max_chars
        self.entries: OrderedDict[str, Validator | SchemaError] = OrderedDict()
        self.chars = 0

    def get(self, key: str) -> Validator | SchemaError | None:
        try:
            value = self.entries[key]
            self.entries.move_to_end(key)
        except KeyError:
            return None
        return value

    def put(self, key: str, value: Validator | SchemaError) -> None:
        if len(key) > self.max_chars or key in self.entries:
            return
        self.entries[key] = value
        self.chars += len(key)
        while len(self.entries) > self.max_entries or self.chars > self.max_chars:
            try:
                old, _ = self.entries.popitem(last=False)
            except KeyError:
                break
            self.chars -= len(old)

    def clear(self) -> None:
        self.entries.clear()
        self.chars = 0

    def __len__(self) -> int:
        return len(self.entries)


#: The process's validators, shared by every client: a compiled validator is immutable
#: and depends on the schema's text alone, so sharing it is safe and saves each client
#: its own compile. Bounded; emptied by :func:`reset_cache`.
_CACHE: Final = _Cache(_CACHE_MAX_ENTRIES, _CACHE_MAX_CHARS)


def reset_cache() -> None:
    """Forget every compiled validator (and remembered unusable schema): the next
    :func:`compile` of each schema builds it again. Nothing depends on the cache but
    speed; tests that count compiles or fill the cache reset it first, so their result
    does not depend on the tests before them."""
    _CACHE.clear()


class _Plain:
    """``json.dumps`` hook: other mappings are written as objects (and remembered, so the
    engine is then handed plain dicts)."""

    def __init__(self) -> None:
        self.used = False

    def __call__(self, value: Any) -> Any:
        if isinstance(value, Mapping):
            self.used = True
            return dict(value)
        raise TypeError(f"{type(value).__name__} is not JSON data")


def _canonical(schema: Any) -> tuple[str, bool]:
    """The canonical JSON text of ``schema``, and whether it held non-dict mappings."""
    plain = _Plain()
    try:
        text = json.dumps(
            schema,
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
            default=plain,
        )
    except (TypeError, ValueError, RecursionError) as exc:
        raise SchemaError(
            f"unusable JSON Schema: it is not JSON data ({_short(str(exc))})"
        ) from None
    return text, plain.used


def compile(
    schema: Any,
    *,
    default_dialect: str = DEFAULT_DIALECT,
    resources: Mapping[str, Any] | None = None,
) -> Validator:
    """Build (or reuse) the validator of ``schema``.

    ``default_dialect`` is the dialect of a schema without ``$schema`` (MCP says 2020-12).
    ``resources`` maps URIs to documents the caller already holds; references may then
    resolve into them (they are never fetched either). The client never passes any: the
    test-suite runner uses it to serve the JSON-Schema-Test-Suite's ``remotes/``.
    Validators built with ``resources`` are not cached.

    Raises:
        UnsupportedDialectError: ``$schema`` names a dialect this client does not implement.
        ExternalReferenceError: a reference needs a document outside the schema.
        UnusablePatternError: a ``pattern`` that is not ECMA-262 or cannot be honoured.
        SchemaError: any other reason the schema cannot be used.
    """
    text, converted = _canonical(schema)
    if converted:  # a Mapping that is not a dict somewhere: hand the engine plain JSON
        schema = json.loads(text)
    if resources is not None:
        registry = _registry(resources, _default_dialect(default_dialect))
        return _compile(schema, default_dialect, registry, resources)
    key = default_dialect + "\n" + text
    cached = _CACHE.get(key)
    if isinstance(cached, Validator):
        return cached
    if cached is not None:
        raise copy.copy(cached)
    try:
        validator = _compile(schema, default_dialect, None)
    except SchemaError as exc:
        _CACHE.put(key, exc)
        raise
    _CACHE.put(key, validator)
    return validator


def _registry(resources: Mapping[str, Any], default_dialect: str) -> Any:
    try:
        return jsonschema_rs.Registry(
            list(resources.items()), draft=_ENGINE_DRAFTS[default_dialect]
        )
    except (ValueError, jsonschema_rs.ReferencingError) as exc:
        raise SchemaError(f"unusable JSON Schema resources: {_short(str(exc))}") from None


def errors_for(schema: Any, instance: Any, *, limit: int = 5) -> list[str]:
    """Up to ``limit`` readable violations of ``schema`` by ``instance`` (empty: valid).

    Raises:
        SchemaError: the schema is unusable (see :func:`compile`).
    """
    return [str(v) for v in compile(schema).violations(instance, limit)]
